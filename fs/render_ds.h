/* render_ds.h - gc/NNN/ds/: roles, heads, table.  The roles and heads
 * are engine results (analyses/ds.h). */
#ifndef HEAPFS_FS_RENDER_DS_H
#define HEAPFS_FS_RENDER_DS_H

#include <stdint.h>

#include "analyses/ds.h"
#include "model/buf.h"

struct hfs;
struct node;

/* ds/roles, ds/heads, ds/table (n->type says which). */
int render_ds(struct hfs *fs, const struct node *n, struct buf *out);

#endif

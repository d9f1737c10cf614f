/* render_ds.h - gc/NNN/ds/: roles, heads, table (analyses/roles.h), and
 * the cached per-GC results the by-role and by-ds classifiers read.
 *
 * Two internal results per GC live in the rendered cache (fs/rcache.h), so
 * each is computed once per heap state whatever the number of files and
 * readers that need it:
 *   "\x01ds/<gci>"      roles (u16) and owners (u32) of every object and the
 *                       heads' dense indexes: 6 bytes per object + 4 per head
 *   "\x01dsheads/<gci>" struct ds_head per head (needs the first and the
 *                       dominator tree, for retained sizes)
 * Dense indexes are stable across rebuilds of a state (id order), so the
 * blobs stay valid after the state itself is evicted.
 *
 * Ownership: views borrow the pinned cache entry; release it with
 * rcache_put(fs->en.rc, e).
 */
#ifndef HEAPFS_FS_RENDER_DS_H
#define HEAPFS_FS_RENDER_DS_H

#include <stdint.h>

#include "analyses/roles.h"
#include "model/buf.h"

struct hfs;
struct node;
struct rc_entry;

struct ds_view {
	uint32_t n, nheads;
	const uint16_t *roles;     /* [n] */
	const uint32_t *owner;     /* [n] head slot or DS_NONE */
	const uint32_t *head_obj;  /* [nheads] dense index of each head */
};

/* Roles and owners of GC gci (computed once, cached).  -EINVAL at a GC
 * without a graph. */
int hfs_ds_get(struct hfs *fs, uint32_t gci, struct rc_entry **e, struct ds_view *v);

/* Per-head measures of GC gci (cached): heads[nheads], slot order. */
int hfs_ds_heads_get(struct hfs *fs, uint32_t gci, struct rc_entry **e,
		     const struct ds_head **heads, uint32_t *nheads);

/* ds/roles, ds/heads, ds/table (n->type says which). */
int render_ds(struct hfs *fs, const struct node *n, struct buf *out);

#endif

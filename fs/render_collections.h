/* render_collections.h - gc/NNN/ds/collections[.csv|.json] and
 * ds/collections-by-site[...]: how full the heap's collections are
 * (analyses/collections.h), MAT's collection fill-ratio view as a table.
 *
 *   collections          per collection type: count, empty, empty_bytes,
 *                        with_slots, slots, used, fill_pct (used / slots,
 *                        rounded down), sparse (under 25% used),
 *                        wasted_bytes (unused slots), most wasted first
 *   collections-by-site  the same per type and allocating frame
 *                        (Class.method:line; <unknown site> in a dump)
 */
#ifndef HEAPFS_FS_RENDER_COLLECTIONS_H
#define HEAPFS_FS_RENDER_COLLECTIONS_H

#include "model/buf.h"

struct hfs;
struct node;

enum coll_file { COLLF_TYPES, COLLF_SITES };
#define COLLF_ARG(file, fmt) ((int)(file) * 4 + (int)(fmt)) /* fmt: 0 TSV, 1 CSV, 2 JSON */

int render_collections(struct hfs *fs, const struct node *n, int arg, struct buf *out);

#endif

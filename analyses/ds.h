/* ds.h - the data-structure roles of a GC (analyses/roles.h) as cached
 * engine results, which ds/ files and the by-role and by-ds classifiers
 * read:
 *   roles   roles (u16) and owners (u32) of every object and the heads'
 *           dense indexes: 6 bytes per object + 4 per head
 *   heads   struct ds_head per head (needs the roles and the dominator
 *           tree, for retained sizes; made from the measures below)
 *   measures the same without retained sizes (the roles alone)
 * Each is computed once per GC whatever the number of readers.  Dense
 * indexes are stable across rebuilds of a state (id order), so the results
 * stay valid after the state itself is evicted.
 *
 * Ownership: views borrow the pinned entry *e; release it with eng_put.
 */
#ifndef HEAPFS_ANALYSES_DS_H
#define HEAPFS_ANALYSES_DS_H

#include <stdint.h>

#include "analyses/engine.h"
#include "analyses/roles.h"

struct ds_view {
	uint32_t n, nheads;
	const uint16_t *roles;     /* [n] */
	const uint32_t *owner;     /* [n] head slot or DS_NONE */
	const uint32_t *head_obj;  /* [nheads] dense index of each head */
};

/* Roles and owners of GC gci.  -EINVAL at a GC without a graph. */
int eng_ds_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct ds_view *v);

/* Per-head measures of GC gci: heads[nheads], slot order. */
int eng_ds_heads_get(struct engine *en, uint32_t gci, struct rc_entry **e,
		     const struct ds_head **heads, uint32_t *nheads);

/* The same without the retained sizes (each DS_NO_RETAINED), for readers
 * that do not show them (the suspects report): no dominator tree is
 * computed for them. */
int eng_ds_measures_get(struct engine *en, uint32_t gci, struct rc_entry **e,
			const struct ds_head **heads, uint32_t *nheads);

#endif

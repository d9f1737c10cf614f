/* retained.h - closures and dominators as cached engine results
 * (gc-roots paper §3-§4): a GC's dominator tree, a group's transitive
 * (deep) and GC (retained) closure metrics, and the closure metrics of
 * every child of a classification.
 *
 * Stored per GC, computed once whatever the number of readers:
 *   dominators          retained[n] (u64), idom[n], retained_count[n] (u32):
 *                       16 B per object
 *   a group's metrics   deep only, or deep and retained (struct clo_metrics)
 *   a classification    per child, sorted by key: one GC closure per child;
 *                       when the children cover the parent, the parent's
 *                       deep metrics are their union's and are kept too
 * Dense indexes are stable across rebuilds of a state (id order), so the
 * results stay valid after the state is evicted.
 *
 * Everything needs the GC's graph: -EINVAL (dominators) or -ENOENT (group
 * metrics) at a GC without one, and -ENOENT for a diff group.
 *
 * Ownership: views borrow the pinned entry *e; release with eng_put.
 */
#ifndef HEAPFS_ANALYSES_RETAINED_H
#define HEAPFS_ANALYSES_RETAINED_H

#include <stdint.h>

#include "analyses/dominators.h"
#include "analyses/engine.h"

struct dom_view {
	uint32_t n, nreachable;
	const uint64_t *retained;       /* [n] bytes of the dominator subtree */
	const uint32_t *idom;           /* [n] DOM_ROOT / DOM_UNREACHABLE */
	const uint32_t *retained_count; /* [n] */
};

/* The dominator tree of GC gci. */
int eng_dominators_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct dom_view *v);

/* A struct dominators over a view (borrowed arrays, for analyses that take
 * one; never pass it to dominators_free). */
void dom_view_as_dominators(const struct dom_view *v, struct dominators *d);

struct clo_metrics {
	uint64_t deep_count, deep_bytes, retained_count, retained_bytes;
};

/* A group's metrics (retained ones 0 when deep_only).  A classifier
 * step's group is one row of its parent's closure table, computed once
 * for all siblings; other groups are computed alone. */
int eng_group_closures(struct engine *en, uint32_t gci, const struct chain *ch, int deep_only,
		       struct clo_metrics *m);

/* Per child of classifying the chain's group by cls, sorted by key. */
struct clo_row {
	uint32_t key, reserved;
	struct clo_metrics m;
};
int eng_class_closures_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct clo_row **rows, uint32_t *nrows);

/* The row of key in rows[n] (sorted by key, as eng_class_closures_get
 * gives them), or NULL. */
const struct clo_row *clo_row_find(const struct clo_row *rows, uint32_t n, uint32_t key);

/* The dense indexes of the (at most) max reachable objects that retain
 * the most, largest first (ties: smaller index first), into top[max],
 * and how many into *ntop.  0 or -ENOMEM. */
int dom_top(const struct dom_view *v, uint32_t max, uint32_t *top, uint32_t *ntop);

#endif

/* rootlabels.h - which GC roots reach each object (gc-roots paper §4.3.2,
 * the indirectly-GC-rooted classifier), and the nearest root ("stop at the
 * first root found").
 *
 * Roots carry labels (the caller's choice: one per distinct root path such
 * as static/<class>/<field>; RL_NONE leaves a root out, as the
 * variables-only variant does).  An object's label set is the set of
 * labels of the roots whose objects reach it.
 *
 * rootlabels_indirect avoids one traversal per label (O(labels x heap))
 * with the dominator tree:
 *   1. Every object x dominated by d != virtual root is reached by exactly
 *      the labels that reach d (every path from a root object to x passes
 *      through d, and d reaches x), so only the objects whose immediate
 *      dominator is the virtual root - the set U - need a set; every other
 *      object takes the set of top(x), its ancestor in U.
 *   2. For u, w in U, w reaches u in the heap iff w reaches u in the small
 *      graph H with an edge top(x) -> y for every heap edge x -> y, y in U
 *      (between two consecutive U objects of a heap path, the objects in
 *      between all have the first one as top).  Root objects are in U.
 *   3. Label sets propagate over H's strongly connected components in
 *      topological order: one iterative Tarjan pass over H reversed (its
 *      edges are the heap in-edges of U objects, so H is never built),
 *      each component's set computed when Tarjan emits it, from its seeds
 *      and its predecessors' finished sets.  A component with no seeds
 *      whose predecessors all share one set shares that set (no copy).
 * Time O(n + E + sum over components of (distinct predecessor sets x cap)
 * log), memory 4 bytes per object (the result) plus 16 bytes per U object
 * of scratch, plus the sets.  With the dominators already computed the
 * heap is read once, in-edges of U objects only.
 *
 * Sets are capped: an object reached by more than `cap` labels keeps the
 * cap smallest label ids followed by RL_MANY (exact: the smallest labels
 * of a union are among the smallest of each part).
 *
 * rootlabels_first: one multi-source breadth-first search from every
 * labelled root object; each reached object gets the smallest label among
 * its nearest labelled roots.  O(n + E).
 *
 * Both are iterative (no recursion over the graph).  Ownership: struct
 * rootlabels owns its arrays (rootlabels_free); inputs are borrowed.
 */
#ifndef HEAPFS_ANALYSES_ROOTLABELS_H
#define HEAPFS_ANALYSES_ROOTLABELS_H

#include <stdint.h>

#include "model/heap_state.h"

#define RL_NONE UINT32_MAX          /* no label / object not reached */
#define RL_MANY (UINT32_MAX - 1)    /* ends a capped set */
#define RL_CAP_DEFAULT 16

struct rootlabels {
	uint32_t n;
	uint32_t *set;       /* [n] set of each object, RL_NONE: no root reaches it */
	uint32_t nsets;
	uint32_t *set_off;   /* [nsets + 1] */
	uint32_t *set_lab;   /* labels of set k: set_lab[set_off[k] .. set_off[k+1]),
	                        ascending, then RL_MANY if capped; may be empty
	                        (reachable only from roots without a label) */
};

/* root_label[s->nroots]: each root's label (RL_NONE: not a source).
 * idom[s->n]: immediate dominators (analyses/dominators.h: DOM_ROOT,
 * DOM_UNREACHABLE).  cap >= 1.  -EINVAL without a graph, -ENOMEM. */
int rootlabels_indirect(const struct heap_state *s, const uint32_t *root_label,
			const uint32_t *idom, uint32_t cap, struct rootlabels *out);
void rootlabels_free(struct rootlabels *rl);

/* label[s->n]: smallest label among each object's nearest labelled roots,
 * RL_NONE when no labelled root reaches it.  -EINVAL without a graph,
 * -ENOMEM. */
int rootlabels_first(const struct heap_state *s, const uint32_t *root_label, uint32_t *label);

#endif

/* dominators.h - the dominator tree of a heap state and single-object
 * retained sizes.
 *
 * The graph is the state's object graph with a virtual root whose
 * successors are the objects GC roots point at.  Semi-NCA (Georgiadis,
 * Tarjan, Werneck: "Finding dominators in practice", 2006): semidominators
 * by Lengauer-Tarjan's eval/link with path compression, then each immediate
 * dominator as the nearest common ancestor of its DFS parent and its
 * semidominator.  Every traversal is iterative with explicit stacks (a
 * linked list of 10^7 nodes is a 10^7-deep DFS).  O(m log n).  Objects
 * with no reference, one referrer and no root are left out of the walk
 * (their referrer is their immediate dominator): on real heaps a third to
 * a half of them.
 *
 * An object's retained size is the size of its dominator subtree: what
 * the GC could free if that one object went away (what MAT's dominator
 * view shows).  Objects unreachable from any root are not in the tree:
 * idom = DOM_UNREACHABLE and retained = 0 there (their retained size,
 * if wanted, comes from closure.h).
 *
 * Ownership: struct dominators owns its arrays; dominators_free releases.
 */
#ifndef HEAPFS_DOMINATORS_H
#define HEAPFS_DOMINATORS_H

#include <stdint.h>
#include <stdio.h>

#include "model/heap_state.h"

#define DOM_ROOT UINT32_MAX          /* dominated only by the GC roots */
#define DOM_UNREACHABLE (UINT32_MAX - 1)

struct dominators {
	uint32_t n;
	uint32_t *idom;          /* [n] dense index, DOM_ROOT or DOM_UNREACHABLE */
	uint64_t *retained;      /* [n] bytes of the dominator subtree */
	uint32_t *retained_count;/* [n] objects in the dominator subtree */
	uint32_t nreachable;
};

int dominators_compute(const struct heap_state *s, struct dominators **out);
void dominators_free(struct dominators *d);

/* The same into d's arrays, which the caller owns (each at least s->n
 * entries; d->n and d->nreachable are set): for a caller that keeps the
 * result in a block of its own, without a second copy at the peak.  The
 * passes over all objects run on up to `threads` threads (0 or 1: the
 * caller's alone); the result is the same for any number. */
int dominators_compute_into(const struct heap_state *s, uint32_t threads, struct dominators *d);

/* Memory the result holds (for the cache budget). */
size_t dominators_memory(const struct dominators *d);

#endif

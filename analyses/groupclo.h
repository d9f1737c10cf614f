/* groupclo.h - the transitive (deep) and GC (retained) closure metrics of
 * every group of a family at once (issue 29 item 1; gc-roots paper §3.2,
 * docs/closures.md "Every group at once").
 *
 * A family is a list of (key, dense index) pairs sorted by key, as
 * classify_member_pairs gives them: each run of equal keys is one group.
 * The groups may overlap (one-to-many classifiers) or not; the results are
 * exactly closure_transitive's and closure_retained's for each group alone
 * (closure.h stays the oracle of the tests), whatever the family.
 *
 * How: groups whose transitive closure is small (at most a budget of
 * objects) are computed alone, sparsely (cost |T| and the edges at T, no
 * O(n) bitset sweeps); the others, 64 at a time, by one pass over the
 * strongly connected components of the whole graph in topological order
 * carrying, per object, a 64-bit word "which of these groups reach me"
 * and one "which of these groups I stay alive without".  Retained =
 * reached and not alive without the group.  Iterative throughout (Tarjan
 * with an explicit stack), no recursion over the graph.
 *
 * Batches are independent: with opts->threads > 1 they run in parallel
 * (analyses/parallel.h), each thread with its own scratch (16 bytes per
 * object with an out-edge: its reach and alive words; 2 bits per object:
 * its queue and component bits); the results do not depend on the number
 * of threads.  Shared by the batches: the topological order (4 bytes per
 * object) and the object -> group map (4).
 *
 * Needs a state with a graph: -EINVAL otherwise; -ENOMEM.
 */
#ifndef HEAPFS_GROUPCLO_H
#define HEAPFS_GROUPCLO_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/classify.h"
#include "analyses/closure.h"
#include "model/buf.h"
#include "model/heap_state.h"

struct gclo_stats;

/* Knobs for the tests (NULL: the defaults). */
struct gclo_opts {
	/* objects of T(G) above which a group goes to the batched passes;
	 * 0: the default (n / 64 + 64); UINT32_MAX: every group alone */
	uint32_t budget;
	int all_batched; /* every group in the batched passes */
	uint32_t threads; /* batches run on up to this many threads (0 or 1: one) */
	/* nullable: the buffer pairs lie in, handed over: gclo_compute frees
	 * it (buf_free) once it reads the pairs no more, before the batched
	 * passes, so that 8 bytes per member are not held beside their
	 * scratch; the caller reads pairs no more after the call (whatever
	 * it returns) and frees the buffer as usual (a freed buf is empty) */
	struct buf *pairs_owner;
	struct gclo_stats *stats; /* nullable: what the computation did */
};

struct gclo_stats {
	uint32_t groups, alone, batched, passes, components;
};

/* Per group (run of equal keys in pairs[0..np), in order; *ngroups of
 * them), deep[g] = |T(G)| metrics, ret[g] = |R(G)| metrics; both arrays
 * are allocated here (caller frees).  uni (n bits, nullable) gets every
 * object of some group's T OR-ed in: the union of the transitive
 * closures, T of the union (§4.2). */
int gclo_compute(const struct heap_state *s, const struct cls_pair *pairs, size_t np,
		 const struct gclo_opts *o, uint32_t *ngroups, struct closure_metrics **deep,
		 struct closure_metrics **ret, uint64_t *uni);

#endif

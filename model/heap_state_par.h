/* heap_state_par.h - a heap state's reachability and in-edges on several
 * threads (model/mpar.h).  heap_state.c's derive() calls these when more
 * than one thread is allowed and the state is large; with one thread it
 * keeps its own single-threaded loops.  The results are the same as
 * those loops' for any number of threads: reachability is a set (a
 * bitset and its count), and each target's in-edges are put in ascending
 * source order after an unordered fill, which is the order the
 * single-threaded fill produces (tests/unit/test_heap_par.c).
 *
 * Ownership: both borrow s and fill arrays s already owns; they allocate
 * only their own scratch (a few KB a thread) and free it before
 * returning.
 */
#ifndef HEAPFS_MODEL_HEAP_STATE_PAR_H
#define HEAPFS_MODEL_HEAP_STATE_PAR_H

#include <stdint.h>

#include "heap_state.h"

struct hs_par_opts {
	uint32_t nthreads;     /* at most this many threads (1: the caller's alone) */
	uint32_t level_min;    /* a BFS level smaller than this runs on the caller's thread */
	uint32_t chunk;        /* queue entries per marking task (in-edges: one task a thread) */
};

/* The defaults derive() uses, for nthreads threads. */
struct hs_par_opts hs_par_defaults(uint32_t nthreads);

/* Marks what the roots reach.  s->reachable: a zeroed bitset of n bits;
 * s->in_src: room for n entries (the queue).  Sets s->nreachable.  Leaves
 * the queue's contents unspecified.  0 or -ENOMEM. */
int hs_mark_par(struct heap_state *s, const struct hs_par_opts *o);

/* Fills s->in_off [n+1] (zeroed on entry) and s->in_src [nedges] from the
 * out-edges.  0 or -ENOMEM. */
int hs_in_edges_par(struct heap_state *s, const struct hs_par_opts *o);

#endif

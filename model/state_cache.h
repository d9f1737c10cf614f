/* state_cache.h - heap states by GC, built once, LRU-evicted within a budget.
 *
 * Concurrent readers asking for the same GC wait for the one build in
 * progress instead of starting another ("single flight").  A state handed
 * out is pinned until released, so eviction never frees a state in use;
 * the budget may be exceeded while pinned states hold memory, and by the
 * most recently used state, which is never evicted (one state larger than
 * the budget is kept rather than rebuilt for every read).
 *
 * Ownership: the cache owns the states it builds; a state the trace
 * brought along (trace->prebuilt, a heap dump opened directly) stays the
 * trace's and is served as it is, never evicted.  Callers hold references
 * from state_cache_get until state_cache_put.
 *
 * Locking: one mutex (cache->lock) guards the entry table, the LRU clock
 * and pin counts; it is never held while a state is built.
 */
#ifndef HEAPFS_STATE_CACHE_H
#define HEAPFS_STATE_CACHE_H

#include <stdint.h>

#include "heap_state.h"

struct state_cache;

/* threads: each build's (heap_build_opts.threads). */
int state_cache_new(struct state_cache **out, const struct trace *t, uint64_t budget_bytes, uint32_t threads);
void state_cache_free(struct state_cache *c);

/* The state after GC gc_index, built if needed.  On success *out is
 * pinned: release it with state_cache_put.  On failure err is filled (the
 * failure is remembered, so the next reader gets it without rebuilding). */
int state_cache_get(struct state_cache *c, uint32_t gc_index, const struct heap_state **out,
		    struct htr_err *err);
void state_cache_put(struct state_cache *c, const struct heap_state *s);

struct state_cache_stats {
	uint64_t budget, used;
	uint32_t cached, building;
	uint64_t hits, builds, evictions;
	uint64_t peak_used;   /* the most bytes held at once, pinned states included */
	uint64_t largest;     /* the largest state built */
	uint64_t build_done, build_total; /* progress of the build under way */
};
void state_cache_stats(struct state_cache *c, struct state_cache_stats *st);

#endif

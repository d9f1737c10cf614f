/* rcache.h - computed results (rendered file bytes, and internal binary
 * results such as a GC's census) keyed by string, computed once, LRU-evicted
 * within a byte budget.
 *
 * Single flight: the first reader of a key computes it with no lock held;
 * readers arriving meanwhile wait on that entry's condition variable and get
 * the same bytes (or the same error).  A failed computation is not kept: the
 * next reader after the failure tries again (the state cache remembers
 * damage, so a retry is cheap).
 *
 * An entry handed out by rcache_get is pinned until rcache_put; eviction only
 * removes unpinned entries, so the budget may be exceeded while results are
 * in use.
 *
 * Locking: one mutex (c->lock) guards the table, the LRU list, pin counts
 * and entry states; each in-flight entry has its own condition variable used
 * with that mutex.  The lock is a leaf: it is never held while computing or
 * while calling anything outside this module, so a compute function may call
 * rcache_get for other keys (dependencies must not be cyclic).
 *
 * Ownership: the cache owns keys and bytes; callers borrow them while pinned.
 */
#ifndef HEAPFS_ANALYSES_RCACHE_H
#define HEAPFS_ANALYSES_RCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

struct rcache;
struct rc_entry;

/* Appends the result to out; returns 0 or negative errno. */
typedef int (*rc_compute_fn)(void *ctx, struct buf *out);

int rcache_new(struct rcache **out, uint64_t budget_bytes);
void rcache_free(struct rcache *c);

/* The result for key, computed by fn(ctx) if nobody has it.  On success
 * *out is pinned: release with rcache_put. */
int rcache_get(struct rcache *c, const char *key, rc_compute_fn fn, void *ctx,
	       struct rc_entry **out);
void rcache_put(struct rcache *c, struct rc_entry *e);

const void *rc_data(const struct rc_entry *e);
size_t rc_len(const struct rc_entry *e);

/* 1 and *size if key's result is ready in the cache or was computed
 * before (its size outlives eviction: results never change), else 0.
 * Never computes. */
int rcache_peek_size(struct rcache *c, const char *key, uint64_t *size);

struct rcache_stats {
	uint64_t budget, used;
	uint32_t entries, computing;
	uint64_t hits, misses, waits, evictions;
	uint64_t sizes_known, sizes_bytes; /* sizes kept after eviction, their memory */
	uint64_t recomputed;   /* results computed again after their eviction */
	uint64_t size_changed; /* of those, with another size than before (0 unless a bug) */
};
void rcache_stats(struct rcache *c, struct rcache_stats *st);

#endif

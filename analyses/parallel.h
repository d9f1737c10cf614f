/* parallel.h - the analyses' use of the machine's cores: a fork-join loop
 * over independent tasks, and how many threads it may use.
 *
 * The number of threads: -o threads=N of a mount (mountopts.h), else the
 * environment's HEAPFS_THREADS, else every online core; par_threads()
 * resolves it.  Threads share the heap state and every input (read-only);
 * each task writes only what is its own, so results are the same for any
 * number of threads (tests compare 1 and N, and run under TSan).
 *
 * The loop is model/mpar.h's (model/ code uses it too: a heap state's
 * reachability and in-edges, the sort of a dump's objects); these are its
 * names here.
 *
 * Ownership: par_for borrows ctx; it starts and joins its threads before
 * returning (no pool outlives a call).
 */
#ifndef HEAPFS_ANALYSES_PARALLEL_H
#define HEAPFS_ANALYSES_PARALLEL_H

#include <stdint.h>

#define PAR_MAX_THREADS 256

/* requested: a count from an option (0: not given).  Returns it, else
 * HEAPFS_THREADS when set to 1..PAR_MAX_THREADS, else the online cores
 * (at least 1, at most PAR_MAX_THREADS). */
uint32_t par_threads(uint32_t requested);

/* Runs fn(ctx, task, worker) for every task in 0..ntasks-1 on up to
 * nthreads threads (the caller's among them); worker is 0..nthreads-1
 * and names the thread, for per-worker scratch.  Tasks are handed out in
 * order, one at a time.  Once a task returns non-zero no new task starts;
 * returns the first such value (in task order), or 0.  A thread that
 * cannot be started is not an error: the tasks run on those that could
 * (at least the caller's).  -ENOMEM only when nothing ran. */
int par_for(uint32_t nthreads, uint32_t ntasks, int (*fn)(void *ctx, uint32_t task, uint32_t worker),
	    void *ctx);

/* Objects a task takes when n objects are cut for `threads` threads,
 * about per_thread tasks each (so that a late thread waits for one task at
 * most): a multiple of 64 (no two tasks share a word of a bitset over the
 * objects), at least min (a multiple of 64). */
uint64_t par_chunk(uint64_t n, uint32_t threads, uint32_t per_thread, uint64_t min);

/* A pass over the items 0..n-1 (objects, preorder numbers...) cut in
 * ranges of par_chunk(n, threads, per_thread, min) items: fn(ctx, from,
 * to, range) for every range, range being 0..par_range_count()-1 (for
 * per-range results).  Ranges are multiples of 64, so each owns its words
 * of a bitset over the items.  On up to `threads` threads; in order on the
 * caller's when threads is 1 or there is one range.  Returns par_for's
 * value (0, or -ENOMEM when nothing ran). */
typedef void par_range_fn(void *ctx, uint32_t from, uint32_t to, uint32_t range);
uint32_t par_range_count(uint32_t n, uint32_t threads, uint32_t per_thread, uint32_t min);
int par_ranges(uint32_t threads, uint32_t n, uint32_t per_thread, uint32_t min, par_range_fn *fn,
	       void *ctx);

#endif

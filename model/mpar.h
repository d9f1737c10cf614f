/* mpar.h - model/'s use of the machine's cores: the fork-join loop that
 * analyses/parallel.h wraps, here so that model/ code (a heap state's
 * reachability and in-edges) can use it without depending upward.
 *
 * The number of threads: what the caller's options say (a mount's
 * -o threads=N, passed down in heap_build_opts, hprof_import_opts and
 * trace_open_opts), else HEAPFS_THREADS, else every online core
 * (mpar_resolve).  1 means the callers' single-threaded paths, unchanged.
 *
 * Ownership: mpar_for borrows ctx; it starts and joins its threads before
 * returning (no pool outlives a call).
 */
#ifndef HEAPFS_MODEL_MPAR_H
#define HEAPFS_MODEL_MPAR_H

#include <stdint.h>

#define MPAR_MAX_THREADS 256

/* requested: a count from an option (0: not given).  Returns it, else
 * HEAPFS_THREADS when set to 1..MPAR_MAX_THREADS, else the online cores
 * (at least 1, at most MPAR_MAX_THREADS). */
uint32_t mpar_resolve(uint32_t requested);

/* Runs fn(ctx, task, worker) for every task in 0..ntasks-1 on up to
 * nthreads threads (the caller's among them); worker is 0..nthreads-1
 * and names the thread, for per-worker scratch.  Tasks are handed out in
 * order, one at a time.  Once a task returns non-zero no new task starts;
 * returns the first such value (in task order), or 0.  A thread that
 * cannot be started is not an error: the tasks run on those that could
 * (at least the caller's); without memory to start any, they all run on
 * the caller's.  So every task runs unless one fails. */
int mpar_for(uint32_t nthreads, uint32_t ntasks, int (*fn)(void *ctx, uint32_t task, uint32_t worker),
	     void *ctx);

#endif

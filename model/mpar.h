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

#include <stddef.h>
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

/* Sets the n bytes at p to c, as memset does, on up to nthreads threads
 * when the block is MPAR_FILL_MIN bytes or more (pieces of
 * MPAR_FILL_PIECE bytes, cut at multiples of it in the address space so
 * that no two threads fault the same huge page).
 *
 * Why: the first write to a page of a fresh block is a fault in which
 * the kernel zeroes the page, and on these machines (virtual machines
 * whose host takes back memory a few seconds after the guest frees it)
 * that costs about 2 s a GB in huge pages and 3.5 s a GB in 4 KB pages,
 * against 0.05 s a GB for memset over pages already there
 * (docs/bench.md, "Session 28").  Faults on two threads take half the
 * time.  A block that a serial step (a depth-first walk, a fill in id
 * order) would write first is given its pages here, on the threads, with
 * the same content as a serial memset or calloc would give it: the
 * serial step then finds them there.  Call it only on memory whose pages
 * the step will write anyway, or memory goes up for nothing. */
#define MPAR_FILL_MIN ((size_t)4 << 20)
#define MPAR_FILL_PIECE ((size_t)2 << 20)
void mpar_memset(uint32_t nthreads, void *p, int c, size_t n);

#endif

/* jobs.h - work that a waiter may stop waiting for.
 *
 * A FUSE request cannot be answered while the thread that serves it is
 * busy: a reader killed by Ctrl-C stays in the kernel until the daemon
 * replies, and a daemon thread that computes for a minute makes it wait a
 * minute.  So long work runs on a job thread, and the thread that serves
 * the request waits for it in short slices, asking between slices whether
 * the request was interrupted (fuse_interrupted).  If it was, the request
 * is answered EINTR at once and the job goes on to the end: its results
 * land in the caches (the render cache keeps a file whose reader left),
 * so the next reader of the same file gets them without computing again.
 *
 * Job threads are pooled, at most max_threads of them: an idle thread
 * takes the next job; when none is idle another is started, up to the
 * maximum, after which jobs queue.  The maximum bounds how many
 * computations hold their working sets at once (the memory bound that
 * status states).  A queued job whose every waiter left before it started
 * never runs.  Threads idle for JOBS_IDLE_EXIT_S leave.
 *
 * Ownership: a job holds its argument (arg) until it has run and every
 * holder (the pool and each job_wait caller's reference) has let go; then
 * drop(arg) frees it.  The caller reads results out of arg between a
 * job_wait that returned 0 and its job_release.
 *
 * Locking: one mutex per pool guards the queue, the thread counts and
 * every job's state; it is a leaf (never held while a job runs or while
 * calling drop).
 */
#ifndef HEAPFS_FS_JOBS_H
#define HEAPFS_FS_JOBS_H

#include <stdint.h>

#define JOBS_IDLE_EXIT_S 10
#define JOBS_WAIT_SLICE_MS 50

struct jobs;
struct job;

typedef void (*job_run_fn)(void *arg);
typedef void (*job_drop_fn)(void *arg);
/* Returns nonzero when the waiter should stop waiting. */
typedef int (*job_stop_fn)(void *ctx);

int jobs_new(struct jobs **out, uint32_t max_threads);

/* Stops taking jobs and waits up to timeout_ms for running ones.
 * Returns 0 when every job has ended (the pool is freed), -EBUSY when some
 * still run: the caller must then not free what those jobs use, and the
 * pool's last thread frees the pool when its job ends. */
int jobs_shutdown(struct jobs *p, unsigned timeout_ms);

/* Queues run(arg); on success *out is the caller's reference (release it
 * with job_release).  On failure drop(arg) has been called. */
int jobs_start(struct jobs *p, job_run_fn run, job_drop_fn drop, void *arg, struct job **out);

/* Waits until the job has run (0) or stop(ctx) says to give up (-EINTR).
 * stop may be NULL (wait to the end). */
int job_wait(struct job *j, job_stop_fn stop, void *ctx);

/* The job's argument: read it only after job_wait returned 0. */
void *job_arg(const struct job *j);

/* Lets go of the caller's reference. */
void job_release(struct job *j);

struct jobs_stats {
	uint32_t threads, idle, running, queued, max_threads;
	uint64_t started, abandoned, skipped; /* jobs queued; waits given up (EINTR);
	                                         jobs dropped unstarted, nobody waiting */
};
void jobs_stats(struct jobs *p, struct jobs_stats *st);

#endif

/* progress.h - what long work is doing, for whoever shows it.
 *
 * Work that can take more than a second (indexing a trace, importing a
 * dump, rebuilding a heap state, a dominator tree, group closures, the
 * suspects report, an export...) says so through one small interface:
 *
 *     struct progress *p = progress_here();
 *     progress_phase(p, total, "rebuilding GC %u", gc);
 *     for (...) progress_add(p, 1);
 *
 * and any thread may read it at any time (progress_read): a terminal
 * reporter (fs/progress_term.h) for `heapfs cat`, `ls`, `check`,
 * `import`, `synth` and `export`, and the mount's `status` file, which
 * lists every piece of work running.
 *
 * Whose progress: a thread finds the record it reports to through a
 * thread-local pointer that whoever starts the work binds
 * (progress_bind): a command binds one for the main thread, a mount binds
 * one per job thread for the job's length; analyses/parallel.h's workers
 * report to the record of the thread that started them.  Unbound: NULL,
 * and every call below is a no-op on NULL, so code reports whether or not
 * anyone listens, and costs one predictable branch then.
 *
 * Records live on a board (a fixed array: no allocation while work runs);
 * progress_claim takes a free one, progress_release gives it back.
 *
 * Concurrency: a phase change (rare) is under the record's mutex; the
 * count is an atomic add (frequent: callers add in batches of thousands,
 * not per object, where a loop is hot); progress_read takes the mutex, so
 * a reader never sees a phase name torn or paired with another phase's
 * total.
 */
#ifndef HEAPFS_MODEL_PROGRESS_H
#define HEAPFS_MODEL_PROGRESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define PROGRESS_PHASE_MAX 96
#define PROGRESS_BOARD_SLOTS 64

struct progress {
	pthread_mutex_t lock;
	int in_use;                     /* under the board's lock */
	char phase[PROGRESS_PHASE_MAX]; /* under lock; "" before the first phase */
	uint64_t total;                 /* under lock; 0: not known */
	uint64_t seq;                   /* under lock; phases started so far */
	uint64_t phase_start_ns;        /* under lock; CLOCK_MONOTONIC */
	uint64_t start_ns;              /* under lock; when the record was claimed */
	uint64_t done;                  /* atomic */
};

/* What a reader sees. */
struct progress_view {
	char phase[PROGRESS_PHASE_MAX];
	uint64_t done, total, seq;
	double phase_s;    /* seconds in this phase */
	double total_s;    /* seconds since the record was claimed */
	double eta_s;      /* seconds left in this phase at its rate so far; < 0: not known */
	const struct progress *rec; /* the record read */
	uint64_t claimed_ns;        /* when it was claimed: with rec, one use of it */
};

/* ---- the worker's side (every function accepts NULL) ---- */

/* The record this thread reports to, or NULL. */
struct progress *progress_here(void);

/* Binds p to this thread (NULL unbinds); returns the previous binding, for
 * the caller to restore. */
struct progress *progress_bind(struct progress *p);

/* Starts a phase: its name (printf format, cut to PROGRESS_PHASE_MAX - 1
 * bytes) and how many units it will count (0: not known); done restarts
 * at 0. */
void progress_phase(struct progress *p, uint64_t total, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void progress_add(struct progress *p, uint64_t n)
{
	if (p)
		__atomic_add_fetch(&p->done, n, __ATOMIC_RELAXED);
}

static inline void progress_set(struct progress *p, uint64_t done)
{
	if (p)
		__atomic_store_n(&p->done, done, __ATOMIC_RELAXED);
}

/* ---- the reader's side ---- */

void progress_read(struct progress *p, struct progress_view *v);

/* ---- the board ---- */

/* A free record, reset (phase "", counts 0), or NULL when all
 * PROGRESS_BOARD_SLOTS are taken (the work then runs unreported). */
struct progress *progress_claim(void);
void progress_release(struct progress *p);

/* Calls fn(ctx, view) for every claimed record that has started a phase,
 * in slot order; stops at fn's first non-zero return and returns it. */
int progress_each(int (*fn)(void *ctx, const struct progress_view *v), void *ctx);

uint64_t progress_now_ns(void);

/* ---- lines printed while work runs ---- */

/* Prints a line (printf format; the caller ends it with a newline) on f
 * the way the reporter showing progress on f wants it: a terminal
 * reporter erases its redrawn line first and draws it again after.
 * Without a reporter, plain fprintf.  For warnings and summaries that
 * long work prints as it goes. */
void progress_note(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The reporter's side: fn(ctx, f, text) prints text for progress_note
 * (NULL: plain).  One hook per process: the command's reporter. */
void progress_set_note_hook(void (*fn)(void *ctx, FILE *f, const char *text), void *ctx);

/* fn(ctx, p) after every progress_phase of any record (NULL: none), on the
 * thread that began the phase: a reporter that shows every phase as it
 * begins (fs/progress_term.h with HEAPFS_PROGRESS_AFTER_MS=0). */
void progress_set_phase_hook(void (*fn)(void *ctx, struct progress *p), void *ctx);

#endif

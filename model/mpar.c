/* mpar.c - see mpar.h.  (Moved from analyses/parallel.c, which now
 * wraps it.) */
#include "mpar.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"

uint32_t mpar_resolve(uint32_t requested)
{
	if (requested)
		return requested > MPAR_MAX_THREADS ? MPAR_MAX_THREADS : requested;
	const char *env = getenv("HEAPFS_THREADS");
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);
		if (!*end && v >= 1 && v <= MPAR_MAX_THREADS)
			return (uint32_t)v;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		return 1;
	return cores > MPAR_MAX_THREADS ? MPAR_MAX_THREADS : (uint32_t)cores;
}

struct par {
	int (*fn)(void *ctx, uint32_t task, uint32_t worker);
	void *ctx;
	uint32_t ntasks;
	uint32_t next;          /* atomic: the next task to hand out */
	int stop;               /* atomic: a task failed */
	pthread_mutex_t lock;   /* guards err, err_task */
	int err;
	uint32_t err_task;
	/* the caller's progress record (model/progress.h): workers report to
	 * it as the caller would (counts add up; a task's phase shows while it
	 * is the latest begun) */
	struct progress *progress;
};

struct worker {
	struct par *p;
	uint32_t id;
};

static void run(struct par *p, uint32_t worker)
{
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		uint32_t t = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (t >= p->ntasks)
			return;
		int rc = p->fn(p->ctx, t, worker);
		if (rc) {
			pthread_mutex_lock(&p->lock);
			if (!p->err || t < p->err_task) {
				p->err = rc;
				p->err_task = t;
			}
			pthread_mutex_unlock(&p->lock);
			__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
		}
	}
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	progress_bind(w->p->progress);
	run(w->p, w->id);
	return NULL;
}

int mpar_for(uint32_t nthreads, uint32_t ntasks, int (*fn)(void *ctx, uint32_t task, uint32_t worker),
	     void *ctx)
{
	struct par p = { .fn = fn, .ctx = ctx, .ntasks = ntasks, .progress = progress_here() };
	if (nthreads > ntasks)
		nthreads = ntasks;
	pthread_t *tid = NULL;
	struct worker *ws = NULL;
	if (nthreads > 1) {
		tid = malloc((nthreads - 1) * sizeof *tid);
		ws = malloc((nthreads - 1) * sizeof *ws);
	}
	if (!tid || !ws) {
		/* no thread to start, or no memory to start them: the plain loop */
		free(tid);
		free(ws);
		for (uint32_t t = 0; t < ntasks; t++) {
			int rc = fn(ctx, t, 0);
			if (rc)
				return rc;
		}
		return 0;
	}
	pthread_mutex_init(&p.lock, NULL);
	uint32_t started = 0;
	int start_err = 0;
	for (uint32_t i = 0; i + 1 < nthreads; i++) {
		ws[i] = (struct worker){ &p, i + 1 };
		int rc = pthread_create(&tid[i], NULL, thread_main, &ws[i]);
		if (rc) {
			start_err = -rc;
			break;
		}
		started++;
	}
	run(&p, 0);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&p.lock);
	free(tid);
	free(ws);
	/* a thread that did not start took no task: every task ran anyway */
	(void)start_err;
	return p.err;
}

struct fill {
	unsigned char *p;
	size_t n;
	uintptr_t first_end;   /* the first piece ends here (a multiple of the
				  piece size, or p + n) */
	int c;
};

/* Piece t: [first_end + (t - 1) * PIECE, ...) clipped to the block, the
 * first piece from p to first_end. */
static int fill_task(void *ctx, uint32_t t, uint32_t worker)
{
	(void)worker;
	const struct fill *f = ctx;
	uintptr_t lo = (uintptr_t)f->p, hi = lo + f->n;
	uintptr_t from = t ? f->first_end + (uintptr_t)(t - 1) * MPAR_FILL_PIECE : lo;
	uintptr_t to = t ? from + MPAR_FILL_PIECE : f->first_end;
	if (to > hi)
		to = hi;
	if (from < to)
		memset((void *)from, f->c, to - from);
	return 0;
}

void mpar_memset(uint32_t nthreads, void *p, int c, size_t n)
{
	if (nthreads <= 1 || n < MPAR_FILL_MIN) {
		memset(p, c, n);
		return;
	}
	uintptr_t lo = (uintptr_t)p, hi = lo + n;
	uintptr_t first_end = (lo / MPAR_FILL_PIECE + 1) * MPAR_FILL_PIECE;
	if (first_end > hi)
		first_end = hi;
	size_t pieces = 1 + (hi - first_end + MPAR_FILL_PIECE - 1) / MPAR_FILL_PIECE;
	struct fill f = { p, n, first_end, c };
	/* fill_task cannot fail, and when no thread starts mpar_for runs
	 * every piece on the caller's */
	(void)mpar_for(nthreads, (uint32_t)pieces, fill_task, &f);
}

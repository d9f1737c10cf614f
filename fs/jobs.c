/* jobs.c - see jobs.h */
#include "fs/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct job {
	struct jobs *pool;
	job_run_fn run;
	job_drop_fn drop;
	void *arg;
	int refs;              /* pool->lock: the queue/runner's and each waiter's */
	int done;              /* pool->lock */
	struct job *next;      /* pool->lock: queue link */
};

struct jobs {
	pthread_mutex_t lock;
	pthread_cond_t work;     /* a job was queued, or shutdown began */
	pthread_cond_t finished; /* a job ended, or a thread left */
	struct job *head, *tail; /* lock: queued jobs, oldest first */
	uint32_t threads, idle, running, queued; /* lock */
	uint32_t max_threads;                    /* immutable */
	uint64_t started, abandoned, skipped;    /* lock */
	int stopping;                            /* lock */
	int orphaned;   /* lock: shutdown gave up waiting; the last thread frees the pool */
};

int jobs_new(struct jobs **out, uint32_t max_threads)
{
	struct jobs *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->max_threads = max_threads ? max_threads : 1;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	/* waits are slices of a monotonic clock: a clock step must not turn
	 * a 50 ms slice into an hour */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_mutex_init(&p->lock, NULL);
	if (!rc && (rc = pthread_cond_init(&p->work, &ca)) != 0)
		pthread_mutex_destroy(&p->lock);
	if (!rc && (rc = pthread_cond_init(&p->finished, &ca)) != 0) {
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->lock);
	}
	pthread_condattr_destroy(&ca);
	if (rc) {
		free(p);
		return -rc;
	}
	*out = p;
	return 0;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void job_destroy(struct job *j)
{
	if (j->drop)
		j->drop(j->arg);
	free(j);
}

static void pool_free(struct jobs *p)
{
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static void *worker(void *vp)
{
	struct jobs *p = vp;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping) {
			struct timespec ts;
			deadline_in(&ts, JOBS_IDLE_EXIT_S * 1000u);
			p->idle++;
			int rc = pthread_cond_timedwait(&p->work, &p->lock, &ts);
			p->idle--;
			if (rc == ETIMEDOUT && !p->head)
				goto leave;
		}
		if (!p->head)
			goto leave; /* stopping, nothing left to run */
		struct job *j = p->head;
		p->head = j->next;
		if (!p->head)
			p->tail = NULL;
		p->queued--;
		if (j->refs == 1) {
			/* every waiter left before it started: it never runs */
			j->done = 1;
			p->skipped++;
			pthread_mutex_unlock(&p->lock);
			job_destroy(j);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		p->running++;
		pthread_mutex_unlock(&p->lock);

		j->run(j->arg);

		pthread_mutex_lock(&p->lock);
		p->running--;
		j->done = 1;
		pthread_cond_broadcast(&p->finished);
		pthread_mutex_unlock(&p->lock);
		job_release(j); /* the pool's reference */
		pthread_mutex_lock(&p->lock);
	}
leave:
	p->threads--;
	pthread_cond_broadcast(&p->finished);
	int last = p->orphaned && p->threads == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		pool_free(p);
	return NULL;
}

/* Starts one more worker; pool->lock held. */
static int spawn_locked(struct jobs *p)
{
	pthread_attr_t at;
	pthread_t t;
	int rc = pthread_attr_init(&at);
	if (rc)
		return -rc;
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, worker, p);
	pthread_attr_destroy(&at);
	if (rc)
		return -rc;
	p->threads++;
	return 0;
}

int jobs_start(struct jobs *p, job_run_fn run, job_drop_fn drop, void *arg, struct job **out)
{
	struct job *j = calloc(1, sizeof *j);
	if (!j) {
		if (drop)
			drop(arg);
		return -ENOMEM;
	}
	*j = (struct job){ .pool = p, .run = run, .drop = drop, .arg = arg, .refs = 2 };
	pthread_mutex_lock(&p->lock);
	if (p->stopping) {
		pthread_mutex_unlock(&p->lock);
		job_destroy(j);
		return -ESHUTDOWN;
	}
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->queued++;
	p->started++;
	int rc = 0;
	if (p->idle >= p->queued)
		pthread_cond_signal(&p->work);
	else if (p->threads < p->max_threads && (rc = spawn_locked(p)) != 0 && p->threads > 0)
		rc = 0; /* a running worker will take it when it is done */
	if (rc) {
		/* no thread at all: take the job back out (it is the tail) */
		struct job **pp = &p->head;
		while (*pp != j)
			pp = &(*pp)->next;
		*pp = NULL;
		p->tail = NULL;
		for (struct job *q = p->head; q; q = q->next)
			p->tail = q;
		p->queued--;
		p->started--;
		pthread_mutex_unlock(&p->lock);
		job_destroy(j);
		return rc;
	}
	pthread_mutex_unlock(&p->lock);
	*out = j;
	return 0;
}

int job_wait(struct job *j, job_stop_fn stop, void *ctx)
{
	struct jobs *p = j->pool;
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	while (!j->done) {
		if (stop) {
			/* stop() may take other locks: ask it with ours released */
			pthread_mutex_unlock(&p->lock);
			int give_up = stop(ctx);
			pthread_mutex_lock(&p->lock);
			if (give_up && !j->done) {
				p->abandoned++;
				rc = -EINTR;
				break;
			}
			if (j->done)
				break;
			struct timespec ts;
			deadline_in(&ts, JOBS_WAIT_SLICE_MS);
			pthread_cond_timedwait(&p->finished, &p->lock, &ts);
		} else {
			pthread_cond_wait(&p->finished, &p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void *job_arg(const struct job *j)
{
	return j->arg;
}

void job_release(struct job *j)
{
	struct jobs *p = j->pool;
	pthread_mutex_lock(&p->lock);
	int last = --j->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		job_destroy(j);
}

int jobs_shutdown(struct jobs *p, unsigned timeout_ms)
{
	if (!p)
		return 0;
	struct timespec ts;
	deadline_in(&ts, timeout_ms);
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->work);
	while (p->threads > 0) {
		if (pthread_cond_timedwait(&p->finished, &p->lock, &ts) == ETIMEDOUT)
			break;
	}
	int busy = p->threads > 0;
	if (busy)
		p->orphaned = 1;
	pthread_mutex_unlock(&p->lock);
	if (busy)
		return -EBUSY;
	pool_free(p);
	return 0;
}

void jobs_stats(struct jobs *p, struct jobs_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = (struct jobs_stats){ p->threads, p->idle, p->running, p->queued, p->max_threads,
				   p->started, p->abandoned, p->skipped };
	pthread_mutex_unlock(&p->lock);
}

/* test_jobs.c - work a waiter may stop waiting for (fs/jobs.h): a wait
 * given up returns -EINTR at once while the job runs on to its end; the
 * argument is freed once, by the last holder; at most max_threads jobs run
 * at once, the rest queue; a queued job nobody waits for never runs;
 * shutdown waits for running jobs or says they still run. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fs/jobs.h"

struct work {
	pthread_mutex_t lock;
	pthread_cond_t go_cond;
	int go;               /* lock: the job may finish */
	int ran, dropped;     /* atomic */
	int *running, *peak;  /* shared counters (atomic) */
};

static void work_init(struct work *w, int *running, int *peak)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->go_cond, NULL);
	w->go = 0;
	w->ran = w->dropped = 0;
	w->running = running;
	w->peak = peak;
}

static void release_work(struct work *w)
{
	pthread_mutex_lock(&w->lock);
	w->go = 1;
	pthread_cond_broadcast(&w->go_cond);
	pthread_mutex_unlock(&w->lock);
}

static void work_run(void *arg)
{
	struct work *w = arg;
	if (w->running) {
		int now = __atomic_add_fetch(w->running, 1, __ATOMIC_SEQ_CST);
		int p = __atomic_load_n(w->peak, __ATOMIC_SEQ_CST);
		while (now > p && !__atomic_compare_exchange_n(w->peak, &p, now, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST))
			;
	}
	pthread_mutex_lock(&w->lock);
	while (!w->go)
		pthread_cond_wait(&w->go_cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	if (w->running)
		__atomic_sub_fetch(w->running, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&w->ran, 1, __ATOMIC_SEQ_CST);
}

static void work_drop(void *arg)
{
	struct work *w = arg;
	__atomic_add_fetch(&w->dropped, 1, __ATOMIC_SEQ_CST);
}

static int stop_after(void *ctx)
{
	int *slices = ctx;
	return --*slices < 0;
}

static int never(void *ctx)
{
	(void)ctx;
	return 0;
}

static void wait_until(int *v, int want)
{
	for (int i = 0; i < 2000 && __atomic_load_n(v, __ATOMIC_SEQ_CST) != want; i++)
		usleep(5000);
	assert_int_equal(__atomic_load_n(v, __ATOMIC_SEQ_CST), want);
}

static void test_wait_and_result(void **st)
{
	(void)st;
	struct jobs *p;
	struct job *j;
	struct work w;
	work_init(&w, NULL, NULL);
	release_work(&w);
	assert_int_equal(jobs_new(&p, 2), 0);
	assert_int_equal(jobs_start(p, work_run, work_drop, &w, &j), 0);
	assert_int_equal(job_wait(j, never, NULL), 0);
	assert_int_equal(w.ran, 1);
	assert_ptr_equal(job_arg(j), &w);
	assert_int_equal(w.dropped, 0); /* the caller still holds it */
	job_release(j);
	/* the worker lets go of its reference after waking the waiter: the
	 * last of the two releases drops the argument, once */
	wait_until(&w.dropped, 1);
	assert_int_equal(jobs_shutdown(p, 1000), 0);
}

static void test_give_up_job_finishes(void **st)
{
	(void)st;
	struct jobs *p;
	struct job *j;
	struct work w;
	work_init(&w, NULL, NULL);
	assert_int_equal(jobs_new(&p, 2), 0);
	assert_int_equal(jobs_start(p, work_run, work_drop, &w, &j), 0);
	int slices = 2;
	assert_int_equal(job_wait(j, stop_after, &slices), -EINTR);
	/* the wait ended while the job ran: it cannot finish before release_work */
	assert_int_equal(__atomic_load_n(&w.ran, __ATOMIC_SEQ_CST), 0);
	job_release(j);
	assert_int_equal(w.dropped, 0); /* still running: the pool holds it */
	release_work(&w);
	wait_until(&w.dropped, 1);
	assert_int_equal(w.ran, 1);
	struct jobs_stats s;
	jobs_stats(p, &s);
	assert_int_equal(s.abandoned, 1);
	assert_int_equal(jobs_shutdown(p, 1000), 0);
}

static void test_max_threads_and_skip(void **st)
{
	(void)st;
	struct jobs *p;
	struct job *j[4];
	struct work w[4];
	int running = 0, peak = 0;
	assert_int_equal(jobs_new(&p, 2), 0);
	for (int i = 0; i < 4; i++) {
		work_init(&w[i], &running, &peak);
		assert_int_equal(jobs_start(p, work_run, work_drop, &w[i], &j[i]), 0);
	}
	wait_until(&running, 2);
	struct jobs_stats s;
	jobs_stats(p, &s);
	assert_int_equal(s.threads, 2);
	assert_int_equal(s.queued, 2);
	/* nobody waits for job 2 any more: it must never run */
	job_release(j[2]);
	release_work(&w[0]);
	release_work(&w[1]);
	release_work(&w[3]);
	assert_int_equal(job_wait(j[3], NULL, NULL), 0);
	assert_int_equal(job_wait(j[0], NULL, NULL), 0);
	assert_int_equal(job_wait(j[1], NULL, NULL), 0);
	assert_int_equal(peak, 2);
	/* job 2 is dropped by the worker that dequeues it, which may come
	 * after the waits above return: wait for it, read atomically (a plain
	 * read raced with that worker: TSan in the CI run of f1db250) */
	wait_until(&w[2].dropped, 1);
	assert_int_equal(__atomic_load_n(&w[2].ran, __ATOMIC_SEQ_CST), 0);
	jobs_stats(p, &s);
	assert_int_equal(s.skipped, 1);
	for (int i = 0; i < 4; i++) {
		if (i != 2)
			job_release(j[i]);
	}
	assert_int_equal(jobs_shutdown(p, 1000), 0);
}

static void test_shutdown_busy(void **st)
{
	(void)st;
	struct jobs *p;
	struct job *j;
	static struct work w; /* outlives the pool's last thread */
	static int running, peak;
	work_init(&w, &running, &peak);
	assert_int_equal(jobs_new(&p, 1), 0);
	assert_int_equal(jobs_start(p, work_run, work_drop, &w, &j), 0);
	wait_until(&running, 1);
	job_release(j);
	assert_int_equal(jobs_shutdown(p, 50), -EBUSY);
	/* the job still ends and drops its arg; its thread frees the pool
	 * (LeakSanitizer in make asan sees whether it does) */
	release_work(&w);
	wait_until(&w.dropped, 1);
	usleep(100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_and_result),
		cmocka_unit_test(test_give_up_job_finishes),
		cmocka_unit_test(test_max_threads_and_skip),
		cmocka_unit_test(test_shutdown_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

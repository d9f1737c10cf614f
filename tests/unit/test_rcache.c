/* test_rcache.c - the rendered-results cache: single flight, failures not
 * kept, LRU eviction within the budget, pinned entries kept. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/rcache.h"

struct counter {
	int calls;          /* atomic */
	int fail;
	size_t bytes;
	/* when set: compute returns only once this many readers wait for it
	 * (rcache_stats' waits above waits0), so that a loaded machine cannot
	 * let a reader come after the result and compute it again */
	struct rcache *cache;
	uint64_t waits0, waiters;
};

static void wait_for_waiters(const struct counter *c)
{
	for (int spin = 0; spin < 30000; spin++) { /* at most about 30 s */
		struct rcache_stats st;
		rcache_stats(c->cache, &st);
		if (st.waits - c->waits0 >= c->waiters)
			return;
		usleep(1000);
	}
}

static int compute(void *ctx, struct buf *out)
{
	struct counter *c = ctx;
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_SEQ_CST);
	if (c->cache)
		wait_for_waiters(c);
	else
		usleep(20000);
	if (c->fail)
		return -EIO;
	for (size_t i = 0; i < c->bytes; i++)
		buf_putc(out, 'a' + (uint8_t)(i % 26));
	return 0;
}

struct thread_arg {
	struct rcache *c;
	struct counter *ctr;
	int rc;
	size_t len;
};

static void *getter(void *p)
{
	struct thread_arg *a = p;
	struct rc_entry *e;
	a->rc = rcache_get(a->c, "/same", compute, a->ctr, &e);
	if (!a->rc) {
		a->len = rc_len(e);
		rcache_put(a->c, e);
	}
	return NULL;
}

static void run_threads(struct rcache *c, struct counter *ctr, struct thread_arg *args, int n)
{
	pthread_t th[16];
	for (int i = 0; i < n; i++) {
		args[i] = (struct thread_arg){ c, ctr, 1, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, getter, &args[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void test_single_flight(void **st)
{
	(void)st;
	struct rcache *c;
	struct thread_arg args[16];
	assert_int_equal(rcache_new(&c, 1 << 20), 0);
	struct counter ctr = { 0, 0, 1000, c, 0, 15 };
	run_threads(c, &ctr, args, 16);
	assert_int_equal(ctr.calls, 1);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(args[i].rc, 0);
		assert_int_equal(args[i].len, 1000);
	}
	uint64_t size = 0;
	assert_int_equal(rcache_peek_size(c, "/same", &size), 1);
	assert_int_equal(size, 1000);
	rcache_free(c);
}

static void test_failure_shared_not_kept(void **st)
{
	(void)st;
	struct rcache *c;
	struct thread_arg args[8];
	assert_int_equal(rcache_new(&c, 1 << 20), 0);
	struct counter ctr = { 0, 1, 10, c, 0, 7 };
	run_threads(c, &ctr, args, 8);
	assert_int_equal(ctr.calls, 1);
	for (int i = 0; i < 8; i++)
		assert_int_equal(args[i].rc, -EIO);
	uint64_t size;
	assert_int_equal(rcache_peek_size(c, "/same", &size), 0);
	/* the next reader tries again */
	ctr.fail = 0;
	ctr.cache = NULL;
	run_threads(c, &ctr, args, 1);
	assert_int_equal(ctr.calls, 2);
	assert_int_equal(args[0].rc, 0);
	rcache_free(c);
}

static int fill_n(void *ctx, struct buf *out)
{
	size_t n = *(size_t *)ctx;
	if (n == 0)
		return 0;
	int rc = buf_reserve(out, n);
	if (!rc) {
		memset(out->data, 'x', n);
		out->len = n;
	}
	return rc;
}

static void test_eviction_and_pins(void **st)
{
	(void)st;
	struct rcache *c;
	struct rc_entry *pinned, *e;
	size_t n = 40000;
	uint64_t size;
	assert_int_equal(rcache_new(&c, 100000), 0);
	assert_int_equal(rcache_get(c, "/a", fill_n, &n, &pinned), 0);
	assert_int_equal(rcache_get(c, "/b", fill_n, &n, &e), 0);
	rcache_put(c, e);
	assert_int_equal(rcache_get(c, "/c", fill_n, &n, &e), 0);
	rcache_put(c, e);
	/* over budget: /b (unpinned, least recent) goes; /a is pinned */
	struct rcache_stats s;
	rcache_stats(c, &s);
	assert_int_equal(s.entries, 2);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(rcache_peek_size(c, "/a", &size), 1);
	assert_int_equal(rcache_peek_size(c, "/c", &size), 1);
	/* /b's bytes are gone, its size is not: a file's size never changes,
	 * and a size that went back to unknown (0) would read as empty */
	size = 0;
	assert_int_equal(rcache_peek_size(c, "/b", &size), 1);
	assert_int_equal(size, n);
	assert_int_equal(rcache_peek_size(c, "/never", &size), 0);
	assert_int_equal(rc_len(pinned), n);
	rcache_put(c, pinned);
	rcache_stats(c, &s);
	assert_true(s.used <= s.budget);
	assert_int_equal(s.sizes_known, 3);
	assert_int_equal(s.recomputed, 0);
	/* Computed again: counted, and a different size (a bug) counted too.
	 * The budget holds two entries: /b evicts /a (least recent), /a
	 * evicts /c, /c comes back with one byte less. */
	assert_int_equal(rcache_get(c, "/b", fill_n, &n, &e), 0);
	rcache_put(c, e);
	size_t m = n - 1;
	assert_int_equal(rcache_get(c, "/a", fill_n, &n, &e), 0);
	rcache_put(c, e);
	assert_int_equal(rcache_get(c, "/c", fill_n, &m, &e), 0);
	rcache_put(c, e);
	rcache_stats(c, &s);
	assert_int_equal(s.recomputed, 3);
	assert_int_equal(s.size_changed, 1);
	assert_int_equal(s.sizes_known, 3);
	rcache_free(c);
}

/* Many keys: the size table grows past its first capacity and keeps them all. */
static void test_sizes_many_keys(void **st)
{
	(void)st;
	struct rcache *c;
	struct rc_entry *e;
	char key[32];
	assert_int_equal(rcache_new(&c, 1000), 0);
	for (size_t i = 0; i < 5000; i++) {
		size_t n = i % 97;
		snprintf(key, sizeof key, "/k/%zu", i);
		assert_int_equal(rcache_get(c, key, fill_n, &n, &e), 0);
		rcache_put(c, e);
	}
	for (size_t i = 0; i < 5000; i++) {
		uint64_t size = UINT64_MAX;
		snprintf(key, sizeof key, "/k/%zu", i);
		assert_int_equal(rcache_peek_size(c, key, &size), 1);
		assert_int_equal(size, i % 97);
	}
	struct rcache_stats s;
	rcache_stats(c, &s);
	assert_int_equal(s.sizes_known, 5000);
	assert_int_equal(s.recomputed, 0);
	rcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_flight),
		cmocka_unit_test(test_failure_shared_not_kept),
		cmocka_unit_test(test_eviction_and_pins),
		cmocka_unit_test(test_sizes_many_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

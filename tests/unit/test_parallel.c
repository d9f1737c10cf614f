/* test_parallel.c - analyses/parallel.c: every task runs exactly once on
 * any number of threads, workers are told apart, the first failing task's
 * value is returned, par_ranges() covers its items once in ranges of 64
 * multiples, and par_threads() follows the option, then HEAPFS_THREADS,
 * then the cores; mpar_memset() sets exactly the bytes it is given, on
 * any number of threads, for blocks that start and end anywhere.  Runs
 * under TSan in make tsan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/parallel.h"
#include "model/mpar.h"

enum { NT = 1000 };

struct count {
	uint32_t ran[NT];         /* each written by the task's own thread */
	uint32_t worker_of[NT];
	uint32_t nthreads;
	uint32_t fail_from;       /* tasks >= this return -(task) */
};

static int task(void *vctx, uint32_t t, uint32_t worker)
{
	struct count *c = vctx;
	c->ran[t]++;
	c->worker_of[t] = worker;
	return t >= c->fail_from ? -(int)(t + 1) : 0;
}

static void test_every_task_once(void **st)
{
	(void)st;
	for (uint32_t threads = 1; threads <= 8; threads++) {
		struct count *c = calloc(1, sizeof *c);
		assert_non_null(c);
		c->fail_from = UINT32_MAX;
		assert_int_equal(par_for(threads, NT, task, c), 0);
		for (uint32_t t = 0; t < NT; t++) {
			assert_int_equal(c->ran[t], 1);
			assert_true(c->worker_of[t] < threads);
		}
		free(c);
	}
	/* no task: nothing runs, no error */
	assert_int_equal(par_for(4, 0, task, NULL), 0);
}

static void test_first_error(void **st)
{
	(void)st;
	for (uint32_t threads = 1; threads <= 4; threads++) {
		struct count *c = calloc(1, sizeof *c);
		assert_non_null(c);
		c->fail_from = 10;
		/* task 10 fails: it is handed out before any later one, so it
		 * runs; later failing tasks may run too, but 10's value wins */
		assert_int_equal(par_for(threads, NT, task, c), -11);
		assert_int_equal(c->ran[10], 1);
		for (uint32_t t = 0; t < 10; t++)
			assert_int_equal(c->ran[t], 1);
		free(c);
	}
}

enum { NITEMS = 100003, NRANGES_MAX = 64 };

struct cover {
	uint8_t seen[NITEMS];        /* each item's range writes it alone */
	uint32_t from[NRANGES_MAX];  /* each range's bounds, by range */
	uint32_t to[NRANGES_MAX];
};

static void cover_range(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct cover *c = ctx;
	for (uint32_t i = from; i < to; i++)
		c->seen[i]++;
	if (range < NRANGES_MAX) {
		c->from[range] = from;
		c->to[range] = to;
	}
}

/* Every item once, ranges back to back in range order, each but the last
 * a multiple of 64 items and at least min, par_range_count() of them. */
static void test_ranges_cover(void **st)
{
	(void)st;
	static const uint32_t ns[] = { 0, 1, 63, 64, 65, 1000, NITEMS };
	for (uint32_t threads = 1; threads <= 4; threads++)
		for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
			uint32_t n = ns[k], min = 128;
			struct cover *c = calloc(1, sizeof *c);
			assert_non_null(c);
			uint32_t count = par_range_count(n, threads, 4, min);
			assert_true(count <= NRANGES_MAX);
			assert_int_equal(par_ranges(threads, n, 4, min, cover_range, c), 0);
			for (uint32_t i = 0; i < n; i++)
				assert_int_equal(c->seen[i], 1);
			for (uint32_t i = n; i < NITEMS; i++)
				assert_int_equal(c->seen[i], 0);
			for (uint32_t r = 0; r < count; r++) {
				assert_int_equal(c->from[r], r ? c->to[r - 1] : 0);
				if (r + 1 < count) {
					assert_int_equal((c->to[r] - c->from[r]) % 64, 0);
					assert_true(c->to[r] - c->from[r] >= min);
				}
			}
			assert_int_equal(count ? c->to[count - 1] : 0, n);
			/* n / (threads * 4) items a range, rounded up to 64,
			 * at least min: the ranges the threads are given */
			uint64_t chunk = ((n / (threads * 4u)) + 63) / 64 * 64;
			chunk = chunk < min ? min : chunk;
			assert_int_equal(count, (n + chunk - 1) / chunk);
			free(c);
		}
}

static void test_thread_count(void **st)
{
	(void)st;
	assert_int_equal(par_threads(3), 3);
	assert_int_equal(par_threads(100000), PAR_MAX_THREADS);
	setenv("HEAPFS_THREADS", "5", 1);
	assert_int_equal(par_threads(0), 5);
	assert_int_equal(par_threads(2), 2); /* the option wins */
	setenv("HEAPFS_THREADS", "junk", 1);
	uint32_t cores = par_threads(0);     /* ignored: the cores */
	assert_true(cores >= 1 && cores <= PAR_MAX_THREADS);
	unsetenv("HEAPFS_THREADS");
	assert_int_equal(par_threads(0), cores);
}

/* Blocks below the threads' size, at it, and above it over several
 * pieces, starting at and between the pieces' boundaries in the address
 * space and ending in the middle of one: each byte of the block set,
 * every byte around it as it was. */
static void test_memset_exact(void **st)
{
	(void)st;
	const size_t piece = MPAR_FILL_PIECE, cap = 4 * piece + MPAR_FILL_MIN;
	unsigned char *raw = malloc(cap + piece), *was = malloc(cap), *set = malloc(cap);
	assert_non_null(raw);
	assert_non_null(was);
	assert_non_null(set);
	memset(was, 0x5a, cap);
	memset(set, 0xc3, cap);
	/* a base on a piece boundary, so that offsets name where a block
	 * starts relative to the pieces */
	unsigned char *base = raw + (piece - (uintptr_t)raw % piece) % piece;
	const size_t offs[] = { 0, 1, 4095, piece - 7, piece };
	const size_t lens[] = { 0, 100, MPAR_FILL_MIN - 1, MPAR_FILL_MIN, MPAR_FILL_MIN + 1,
				2 * piece + 12345, 4 * piece - 1 };
	for (uint32_t threads = 1; threads <= 4; threads++)
		for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
			for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
				size_t off = offs[i], len = lens[j];
				if (off + len > cap)
					continue;
				memset(base, 0x5a, cap);
				mpar_memset(threads, base + off, 0xc3, len);
				/* memcmp: one call a range, quick under TSan */
				if (memcmp(base, was, off) || memcmp(base + off, set, len) ||
				    memcmp(base + off + len, was, cap - off - len))
					fail_msg("threads %u, offset %zu, length %zu: wrong bytes",
						 threads, off, len);
			}
	free(raw);
	free(was);
	free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_task_once),
		cmocka_unit_test(test_first_error),
		cmocka_unit_test(test_ranges_cover),
		cmocka_unit_test(test_thread_count),
		cmocka_unit_test(test_memset_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

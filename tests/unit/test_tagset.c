/* test_tagset.c - the agent's tag set (agent/tagset.c) against a plain
 * array of members and values over a small range of tags, through random adds and
 * removes that wrap around the table's end and shift runs of colliding
 * tags; and the edge cases (tag 0, re-adding, removing what is absent). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/tagset.h"
#include "tests/xorshift.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The value the test gives tag t in its k-th add. */
static uint64_t value_of(uint64_t t, uint32_t k)
{
	return t * 1000003u + k;
}

struct pair {
	uint64_t tag, val;
};

static int cmp_pair(const void *a, const void *b)
{
	return cmp_u64(&((const struct pair *)a)->tag, &((const struct pair *)b)->tag);
}

/* s holds exactly the tags t in [1, range] with in[t] set, with the
 * values val[t]. */
static void check_same(const struct tagset *s, const uint8_t *in, const uint64_t *val, uint32_t range)
{
	uint32_t n = 0;
	for (uint32_t t = 1; t <= range; t++) {
		assert_int_equal(tagset_has(s, t), in[t]);
		n += in[t];
	}
	assert_int_equal(s->n, n);
	assert_true(s->cap == 0 || 2 * s->n <= s->cap);
	uint64_t *tags = malloc((n + 1) * sizeof(*tags)), *vals = malloc((n + 1) * sizeof(*vals));
	struct pair *p = malloc((n + 1) * sizeof(*p));
	assert_true(tags && vals && p);
	assert_int_equal(tagset_copy(s, tags, vals), n);
	for (uint32_t i = 0; i < n; i++)
		p[i] = (struct pair){ tags[i], vals[i] };
	qsort(p, n, sizeof(*p), cmp_pair);
	for (uint32_t i = 0, t = 1; i < n; i++, t++) {
		while (!in[t])
			t++;
		assert_int_equal(p[i].tag, t);
		assert_int_equal(p[i].val, val[t]);
	}
	free(tags);
	free(vals);
	free(p);
}

/* Random adds and removes over ranges small enough that runs collide and
 * the table stays small (64-256 slots: wrap-around is frequent), and one
 * large enough to grow it many times. */
static void test_random_against_array(void **state)
{
	(void)state;
	static const uint32_t ranges[] = { 40, 100, 300, 20000 };
	uint64_t rng = 0x7a65c0ffee1234ull;
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		uint32_t range = ranges[r];
		uint8_t *in = calloc(range + 1, 1);
		uint64_t *val = calloc(range + 1, sizeof(*val));
		assert_true(in && val);
		struct tagset s = { 0 };
		uint32_t ops = range < 1000 ? 20000 : 200000;
		for (uint32_t k = 0; k < ops; k++) {
			uint64_t t = 1 + xorshift_below(&rng, range);
			/* adds win while the set is small, removes after: it fills
			 * and empties again, so both growth and shifting run */
			int add = xorshift_below(&rng, 100) < (k % 4000 < 2000 ? 70u : 30u);
			if (add) {
				assert_int_equal(tagset_add(&s, t, value_of(t, k)), in[t] ? 1 : 0);
				if (!in[t])
					val[t] = value_of(t, k);
				in[t] = 1;
			} else {
				uint64_t v = 0;
				assert_int_equal(tagset_remove(&s, t, &v), in[t]);
				if (in[t])
					assert_int_equal(v, val[t]);
				in[t] = 0;
			}
			if (range < 1000 || k % 10000 == 0)
				check_same(&s, in, val, range);
		}
		check_same(&s, in, val, range);
		tagset_free(&s);
		assert_int_equal(s.n, 0);
		assert_false(tagset_has(&s, 1));
		free(in);
		free(val);
	}
}

static void test_edges(void **state)
{
	(void)state;
	struct tagset s = { 0 };
	uint64_t v = 7;
	assert_false(tagset_has(&s, 5));
	assert_int_equal(tagset_remove(&s, 5, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(tagset_add(&s, 0, 1), -EINVAL);
	assert_int_equal(tagset_add(&s, 5, 50), 0);
	assert_int_equal(tagset_add(&s, 5, 51), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.cap, TAGSET_MIN);
	assert_false(tagset_has(&s, 0));
	assert_int_equal(tagset_add(&s, UINT64_MAX, 9), 0);
	assert_true(tagset_has(&s, UINT64_MAX));
	assert_int_equal(tagset_remove(&s, 5, &v), 1);
	assert_int_equal(v, 50);
	assert_int_equal(tagset_remove(&s, 5, NULL), 0);
	assert_int_equal(s.n, 1);
	tagset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_against_array),
		cmocka_unit_test(test_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_adhoc.c - the ad-hoc group store (analyses/adhoc.h): names,
 * versions that never change once made, the members' text, and the bits
 * of a version's objects in a state. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyses/adhoc.h"
#include "analyses/bitset.h"
#include "fixture_state.h"
#include "model/iddir.h"

static uint64_t *ids_of(const uint64_t *v, uint32_t n)
{
	uint64_t *p = malloc(n * sizeof *p);
	assert_non_null(p);
	memcpy(p, v, n * sizeof *p);
	return p;
}

static void test_names_and_versions(void **st)
{
	(void)st;
	struct adhoc *a;
	assert_int_equal(adhoc_new(&a), 0);
	assert_int_equal(adhoc_add(a, "caches"), 0);
	assert_int_equal(adhoc_add(a, "caches"), -EEXIST);
	assert_int_equal(adhoc_add(a, "a/b"), -EINVAL);
	assert_int_equal(adhoc_add(a, ".."), -EINVAL);
	uint32_t v1 = adhoc_version(a, "caches");
	assert_int_not_equal(v1, 0);
	assert_int_equal(adhoc_version(a, "none"), 0);

	static const uint64_t first[] = { 2, 5 };
	assert_int_equal(adhoc_set(a, "caches", ids_of(first, 2), 2, "2\n5\n", 4, UINT32_MAX), 0);
	uint32_t v2 = adhoc_version(a, "caches");
	assert_true(v2 > v1);
	struct buf b;
	buf_init(&b);
	assert_int_equal(adhoc_text(a, v2, &b), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.data, "2\n5\n", 4);
	buf_free(&b);
	/* the old version still names its (empty) set; its text is gone */
	buf_init(&b);
	assert_int_equal(adhoc_text(a, v1, &b), -ENOENT);
	buf_free(&b);
	assert_int_equal(adhoc_set(a, "none", ids_of(first, 2), 2, "x", 1, UINT32_MAX), -ENOENT);

	char name[256];
	uint32_t v;
	assert_int_equal(adhoc_nth(a, 0, name, sizeof name, &v), 1);
	assert_string_equal(name, "caches");
	assert_int_equal(v, v2);
	assert_int_equal(adhoc_nth(a, 1, name, sizeof name, &v), 0);
	assert_int_equal(adhoc_remove(a, "caches"), 0);
	assert_int_equal(adhoc_remove(a, "caches"), -ENOENT);
	assert_int_equal(adhoc_nth(a, 0, name, sizeof name, &v), 1);
	assert_int_equal(v, 0);
	/* the name is free again */
	assert_int_equal(adhoc_add(a, "caches"), 0);
	adhoc_free(a);
}

static void test_bits(void **st)
{
	(void)st;
	/* 6 objects with ids 1..6 (fixture: id = index + 1) */
	static const uint32_t info[6] = { 0 };
	struct heap_state *s = fx_state(6, info, 1, NULL, 0, NULL, 0);
	assert_non_null(s);
	/* the fixture leaves out the id directory that lookups by id use */
	assert_int_equal(iddir_build(&s->dir, s->id, s->n), 0);
	struct adhoc *a;
	assert_int_equal(adhoc_new(&a), 0);
	assert_int_equal(adhoc_add(a, "g"), 0);
	static const uint64_t members[] = { 2, 5, 99 }; /* 99 is not in the state */
	assert_int_equal(adhoc_set(a, "g", ids_of(members, 3), 3, "", 0, UINT32_MAX), 0);
	uint64_t *bits = bitset_alloc(s->n);
	assert_non_null(bits);
	assert_int_equal(adhoc_bits(a, adhoc_version(a, "g"), s, bits), 0);
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(bitset_get(bits, i) != 0, i == 1 || i == 4);
	assert_int_equal(adhoc_bits(a, 12345, s, bits), -ENOENT);
	free(bits);
	adhoc_free(a);
	heap_state_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_versions),
		cmocka_unit_test(test_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

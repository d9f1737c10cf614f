/* test_hugepages.c - big blocks from malloc, calloc and realloc are advised
 * for transparent huge pages once hugepages_setup has turned the advice on,
 * and only then; small ones never; HEAPFS_HUGEPAGES=0 turns it off.
 *
 * The truth comes from the kernel, not from our code: the mapping that
 * holds a block shows "hg" among its VmFlags in /proc/self/smaps exactly
 * when madvise(MADV_HUGEPAGE) was asked for it (VM_HUGEPAGE).  The tests
 * run in the order written: the advice is process state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/hugepages.h"

/* 1 if the mapping holding address p is flagged VM_HUGEPAGE ("hg"), 0 if
 * not, -1 if no mapping of /proc/self/smaps holds p. */
static int advised(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, found = -1;
	uintptr_t a = (uintptr_t)p;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			found = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

#define BIG ((size_t)16 << 20)

static int kernel_has_thp(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* Before hugepages_setup, nothing is advised (the unit tests and test
 * tools link the wrappers but never turn them on). */
static void test_off_until_setup(void **st)
{
	(void)st;
	assert_int_equal(hugepages_on(), 0);
	char *p = malloc(BIG);
	assert_non_null(p);
	p[0] = 1;
	assert_int_equal(advised(p + BIG / 2), 0);
	free(p);
}

static void test_env_zero_keeps_it_off(void **st)
{
	(void)st;
	setenv("HEAPFS_HUGEPAGES", "0", 1);
	hugepages_setup();
	assert_int_equal(hugepages_on(), 0);
	char *p = calloc(1, BIG);
	assert_non_null(p);
	assert_int_equal(advised(p + BIG / 2), 0);
	free(p);
	unsetenv("HEAPFS_HUGEPAGES");
}

/* The wrappers were not called for a small block: it was not advised, even
 * with the advice on (a fresh mapping of its own, from mmap, so that a big
 * block's advice in the same heap cannot flag it). */
static void test_small_block_not_advised(void **st)
{
	(void)st;
	hugepages_setup();
	assert_int_equal(hugepages_on(), 1);
	char *p = malloc(HUGEPAGES_MIN - 4096);
	assert_non_null(p);
	p[0] = 1;
	/* below glibc's mmap threshold it may share the heap with blocks the
	 * earlier tests freed, none of which were advised */
	assert_int_equal(advised(p + 8), 0);
	free(p);
}

static void test_big_blocks_advised(void **st)
{
	(void)st;
	if (!kernel_has_thp())
		skip();
	hugepages_setup();
	char *m = malloc(BIG);
	char *c = calloc(BIG / 8, 8);
	char *r = realloc(NULL, BIG);
	assert_non_null(m);
	assert_non_null(c);
	assert_non_null(r);
	assert_int_equal(advised(m + BIG / 2), 1);
	assert_int_equal(advised(c + BIG / 2), 1);
	assert_int_equal(advised(r + BIG / 2), 1);
	/* a block that grows into a new place keeps the advice */
	char *g = malloc(4096);
	assert_non_null(g);
	g = realloc(g, 2 * BIG);
	assert_non_null(g);
	assert_int_equal(advised(g + BIG), 1);
	/* calloc's zeroes whatever the advice */
	for (size_t i = 0; i < BIG; i += 4096)
		assert_int_equal(c[i], 0);
	free(m);
	free(c);
	free(r);
	free(g);
}

/* The name and length of the mapping of /proc/self/maps holding p:
 * 0, or -1 when none holds it. */
static int mapping_of(const void *p, char *name, size_t cap, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	int rc = -1;
	uintptr_t a = (uintptr_t)p;
	while (rc && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || a < lo || a >= hi)
			continue;
		snprintf(name, cap, "%s", line + at);
		name[strcspn(name, "\n")] = 0;
		*len = hi - lo;
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* Freeing a 16 MB mapped block raises glibc's own mmap threshold past
 * 16 MB, and a 4 MB block would then come from its heap ("[heap]"),
 * beside whatever lies freed there.  After hugepages_setup, with or
 * without the advice, it is an anonymous mapping (neighbours may have
 * merged with it, so only its least length is known). */
static void test_big_block_is_a_mapping_of_its_own(void **st)
{
	(void)st;
	setenv("HEAPFS_HUGEPAGES", "0", 1);
	hugepages_setup();
	unsetenv("HEAPFS_HUGEPAGES");
	free(malloc(BIG));
	size_t n = HUGEPAGES_MIN * 2, len = 0;
	char *p = malloc(n);
	assert_non_null(p);
	p[0] = 1;
	char name[256];
	assert_int_equal(mapping_of(p, name, sizeof name, &len), 0);
	assert_string_equal(name, "");
	assert_true(len >= n);
	free(p);
	hugepages_setup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_until_setup),
		cmocka_unit_test(test_env_zero_keeps_it_off),
		cmocka_unit_test(test_small_block_not_advised),
		cmocka_unit_test(test_big_blocks_advised),
		cmocka_unit_test(test_big_block_is_a_mapping_of_its_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

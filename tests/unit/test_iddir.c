/* test_iddir.c - id -> dense index lookups: the id directory (iddir.h)
 * that heap states use, and the heap dump importer's index (hprof_maps.h)
 * in its bitmap and its directory mode.  Every lookup is checked against
 * a plain binary search over the same ids (the oracle below), for every
 * id present and for the ids next to each of them, which are absent
 * unless they are the neighbour's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/hprof_maps.h"
#include "model/iddir.h"
#include "model/popcount.h"
#include "tests/xorshift.h"

/* The oracle: the index of id in ids[0..n), or UINT32_MAX. */
static uint32_t oracle_find(const uint64_t *ids, uint32_t n, uint64_t id)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == id ? lo : UINT32_MAX;
}

/* The ids a lookup is tried with (*nprobes of them; the caller frees
 * them): each id, its neighbours, and ids beyond both ends. */
static uint64_t *probe_ids(const uint64_t *ids, uint32_t n, uint32_t *nprobes)
{
	uint64_t *probes = malloc((3 * (size_t)n + 3) * sizeof *probes);
	assert_non_null(probes);
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		probes[k++] = ids[i];
		probes[k++] = ids[i] - 1;
		probes[k++] = ids[i] + 1;
	}
	probes[k++] = 0;
	probes[k++] = UINT64_MAX;
	probes[k++] = n ? ids[n - 1] + 1000000 : 7;
	*nprobes = k;
	return probes;
}

enum spread { SEQUENTIAL, GAPS, ALIGNED_REGIONS, RANDOM_SPARSE, NEAR_TOP };

/* n ascending, distinct ids of the given spread. */
static uint64_t *make_ids(enum spread how, uint32_t n, uint64_t seed)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
	assert_non_null(ids);
	uint64_t st = seed, v = 0;
	for (uint32_t i = 0; i < n; i++) {
		switch (how) {
		case SEQUENTIAL: /* a trace's ids with nothing dead */
			v = i ? v + 1 : 1;
			break;
		case GAPS: /* a trace's ids after deaths */
			v = i ? v + 1 + xorshift_below(&st, 20) : 100;
			break;
		case ALIGNED_REGIONS: /* dump addresses: 8-byte aligned, in regions far apart */
			v = i ? v + 8 * (1 + xorshift_below(&st, 6)) : 0x7f0000000000ull;
			if (xorshift_below(&st, 10000) == 0)
				v += 1ull << 24;
			break;
		case RANDOM_SPARSE: /* ids that are not addresses */
			v = i ? v + 1 + (xorshift64(&st) >> 20) : xorshift64(&st) >> 30;
			break;
		case NEAR_TOP: /* a span that reaches the top of the range */
			v = i ? v + 1 + xorshift64(&st) % (UINT64_MAX / 4 / n) : UINT64_MAX / 2;
			break;
		}
		ids[i] = v;
	}
	if (how == NEAR_TOP && n > 1)
		ids[n - 1] = UINT64_MAX - 1; /* UINT64_MAX itself is left as the "beyond" probe */
	return ids;
}

static void check_iddir(enum spread how, uint32_t n, uint64_t seed)
{
	uint64_t *ids = make_ids(how, n, seed);
	uint32_t np;
	uint64_t *probes = probe_ids(ids, n, &np);
	struct iddir d;
	assert_int_equal(iddir_build(&d, ids, n), 0);
	/* about one bucket per four ids: at most n/4 + 1 buckets (+1 end slot) */
	if (n)
		assert_true(d.nslot <= (uint64_t)n / 4 + 3);
	for (uint32_t k = 0; k < np; k++)
		assert_int_equal(iddir_find(&d, ids, probes[k]), oracle_find(ids, n, probes[k]));
	iddir_free(&d);
	assert_null(d.slot);
	assert_int_equal(iddir_find(&d, ids, n ? ids[0] : 1), IDDIR_NONE); /* freed: empty */
	free(probes);
	free(ids);
}

static void test_iddir_spreads(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 5, 17, 1000, 65537 };
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (enum spread how = SEQUENTIAL; how <= NEAR_TOP; how++)
			check_iddir(how, sizes[s], 0x9e3779b97f4a7c15ull + s);
	/* the widest spans (the fuzzer's id_span seeds): the shift stops at
	 * 63 and the directory keeps its 3 slots */
	static const uint64_t extremes[][3] = { { 0, UINT64_MAX, 0 }, { 0, 1, UINT64_MAX },
						{ 5, UINT64_MAX - 1, 0 } };
	static const uint32_t nextreme[] = { 2, 3, 2 };
	for (size_t e = 0; e < 3; e++) {
		struct iddir d;
		assert_int_equal(iddir_build(&d, extremes[e], nextreme[e]), 0);
		assert_true(d.shift <= 63 && d.nslot >= 2);
		for (uint32_t i = 0; i < nextreme[e]; i++)
			assert_int_equal(iddir_find(&d, extremes[e], extremes[e][i]), i);
		assert_int_equal(iddir_find(&d, extremes[e], 2), IDDIR_NONE);
		iddir_free(&d);
	}
}

/* Builds the importer's index and checks it; *bitmap says which mode the
 * index chose. */
static void check_idindex(enum spread how, uint32_t n, uint64_t seed, int *bitmap)
{
	uint64_t *ids = make_ids(how, n, seed);
	uint32_t np;
	uint64_t *probes = probe_ids(ids, n, &np);
	struct idindex x, y;
	assert_int_equal(idindex_build(&x, ids, n, 1), 0);
	*bitmap = x.nchunks != 0;
	for (uint32_t k = 0; k < np; k++)
		assert_int_equal(idindex_find(&x, probes[k]), oracle_find(ids, n, probes[k]));
	/* on 4 threads: the same index, word for word */
	assert_int_equal(idindex_build(&y, ids, n, 4), 0);
	assert_int_equal(y.nchunks, x.nchunks);
	assert_int_equal(y.base, x.base);
	assert_int_equal(y.shift, x.shift);
	if (x.nchunks) {
		uint64_t words = 0;
		for (uint64_t c = 0; c < x.nchunks; c++)
			words += x.chunk[c] != IDINDEX_NONE ? (1u << IDINDEX_CHUNK_BITS) / 64 : 0;
		assert_memory_equal(y.chunk, x.chunk, x.nchunks * sizeof *x.chunk);
		assert_memory_equal(y.bits, x.bits, words * sizeof *x.bits);
		assert_memory_equal(y.rank, x.rank, words * sizeof *x.rank);
	}
	for (uint32_t k = 0; k < np; k++)
		assert_int_equal(idindex_find(&y, probes[k]), oracle_find(ids, n, probes[k]));
	idindex_free(&y);
	idindex_free(&x);
	free(probes);
	free(ids);
}

static void test_idindex_modes(void **state)
{
	(void)state;
	int bitmap;
	/* dump addresses, 8-aligned and dense within their regions: the bitmap */
	check_idindex(ALIGNED_REGIONS, 50000, 1, &bitmap);
	assert_true(bitmap);
	/* over IDINDEX_PAR_MIN: 4 threads build it in ranges */
	check_idindex(ALIGNED_REGIONS, 400000, 11, &bitmap);
	assert_true(bitmap);
	check_idindex(SEQUENTIAL, 300000, 12, &bitmap);
	assert_true(bitmap);
	check_idindex(SEQUENTIAL, 1000, 2, &bitmap);
	assert_true(bitmap);
	/* ids spread thinly over a large range: the directory */
	check_idindex(RANDOM_SPARSE, 50000, 3, &bitmap);
	assert_false(bitmap);
	check_idindex(NEAR_TOP, 1000, 4, &bitmap);
	assert_false(bitmap);
	for (uint32_t n = 0; n < 6; n++)
		for (enum spread how = SEQUENTIAL; how <= NEAR_TOP; how++)
			check_idindex(how, n, 5 + n, &bitmap);
}

/* model/popcount.h against a bit-by-bit count: the edges (0, all ones,
 * each single bit) and random words. */
static void test_popcount64(void **st)
{
	(void)st;
	uint64_t r = 7;
	for (int k = 0; k < 10000 + 66; k++) {
		uint64_t a = xorshift64(&r), b = xorshift64(&r); /* sparse and dense words */
		uint64_t x = k == 0 ? 0 : k == 1 ? ~0ull : k < 66 ? 1ull << (k - 2) : k % 2 ? a & b : a | b;
		uint32_t want = 0;
		for (int b = 0; b < 64; b++)
			want += (uint32_t)((x >> b) & 1);
		assert_int_equal(popcount64(x), want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iddir_spreads),
		cmocka_unit_test(test_idindex_modes),
		cmocka_unit_test(test_popcount64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_heap_par.c - model/'s parallel parts.  keyidx_sort
 * and keyidx_sort_after (model/hprof_maps.c) on 1 and 4 threads against
 * qsort by (key, position), i.e. stable.  model/heap_state_par.c: reachability and in-edges on
 * 1 and 4 threads equal what this test computes on its own (the fixture's
 * breadth-first search for reachability; each target's sources sorted
 * ascending, from a sort of the edge list here, for the in-edges: the
 * order heap_state.c's single-threaded fill gives).  Random graphs with
 * cycles, self-loops, repeated edges and repeated roots, a long chain (one
 * object a level) and a graph without edges; task sizes down to one entry
 * so that threads interleave even on small graphs.  Runs under TSan in
 * make tsan and under ASan in make asan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_state.h"
#include "model/heap_state_par.h"
#include "model/hprof_maps.h"
#include "model/mpar.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t below)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % below);
}

static int cmp_edge(const void *x, const void *y)
{
	const struct fx_edge *a = x, *b = y;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	return (a->from > b->from) - (a->from < b->from);
}

/* Runs both derivations with o on s (whose fixture columns are the
 * expected reachability) and compares with the sorted edge list. */
static void check_one(struct heap_state *s, const struct fx_edge *sorted, uint32_t ne,
		      const struct hs_par_opts *o)
{
	size_t words = ((size_t)s->n + 63) / 64;
	struct heap_state t = *s;
	t.reachable = calloc(words ? words : 1, sizeof *t.reachable);
	t.in_src = malloc(((size_t)s->n + ne + 1) * sizeof *t.in_src);
	t.in_off = calloc((size_t)s->n + 1, sizeof *t.in_off);
	assert_non_null(t.reachable);
	assert_non_null(t.in_src);
	assert_non_null(t.in_off);
	t.nreachable = UINT32_MAX;
	assert_int_equal(hs_mark_par(&t, o), 0);
	assert_int_equal(t.nreachable, s->nreachable);
	assert_memory_equal(t.reachable, s->reachable, words * sizeof *t.reachable);
	assert_int_equal(hs_in_edges_par(&t, o), 0);
	uint32_t k = 0;
	for (uint32_t v = 0; v < s->n; v++) {
		assert_int_equal(t.in_off[v], k);
		for (; k < ne && sorted[k].to == v; k++)
			assert_int_equal(t.in_src[k], sorted[k].from);
	}
	assert_int_equal(t.in_off[s->n], ne);
	free(t.reachable);
	free(t.in_src);
	free(t.in_off);
}

static void check_graph(uint32_t n, struct fx_edge *edges, uint32_t ne, const uint32_t *roots, uint32_t nroots)
{
	struct heap_state *s = fx_state(n, NULL, 0, edges, ne, roots, nroots);
	qsort(edges, ne, sizeof *edges, cmp_edge);
	const struct hs_par_opts opts[] = {
		hs_par_defaults(1), hs_par_defaults(4),
		{ .nthreads = 1, .level_min = 1, .chunk = 1 },
		{ .nthreads = 4, .level_min = 1, .chunk = 1 },
		{ .nthreads = 4, .level_min = 1, .chunk = 7 },
		{ .nthreads = 3, .level_min = 50, .chunk = 64 },
	};
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
		check_one(s, edges, ne, &opts[i]);
	heap_state_free(s);
}

static void random_graph(uint32_t n, uint32_t ne, uint32_t nroots)
{
	struct fx_edge *edges = malloc((ne + 1) * sizeof *edges);
	uint32_t *roots = malloc((nroots + 1) * sizeof *roots);
	assert_non_null(edges);
	assert_non_null(roots);
	for (uint32_t e = 0; e < ne; e++) {
		uint32_t from = rnd(n);
		uint32_t r = rnd(10);
		/* a tenth self-loops, a tenth repeat the previous edge, a
		 * tenth point to a few hot objects (large in-degrees) */
		uint32_t to = r == 0 ? from : r == 1 && e ? edges[e - 1].to : r == 2 ? rnd(n < 5 ? n : 5) : rnd(n);
		if (r == 1 && e)
			from = edges[e - 1].from;
		edges[e] = (struct fx_edge){ from, to };
	}
	for (uint32_t r = 0; r < nroots; r++)
		roots[r] = rnd(n);
	check_graph(n, edges, ne, roots, nroots);
	free(edges);
	free(roots);
}

static void test_random_graphs(void **st)
{
	(void)st;
	random_graph(1, 3, 1);
	random_graph(100, 150, 3);
	random_graph(5000, 4000, 20);     /* sparse: part unreachable */
	random_graph(5000, 25000, 2);
	random_graph(200000, 600000, 50); /* levels over the default level_min */
}

static void test_chain_and_no_edges(void **st)
{
	(void)st;
	enum { N = 20000 };
	struct fx_edge *edges = malloc(N * sizeof *edges);
	assert_non_null(edges);
	for (uint32_t i = 0; i + 1 < N; i++)
		edges[i] = (struct fx_edge){ i, i + 1 };
	edges[N - 1] = (struct fx_edge){ N - 1, 0 };   /* closes the cycle */
	uint32_t root = N / 2;
	check_graph(N, edges, N, &root, 1);
	uint32_t roots[] = { 0, 3, 3 };
	check_graph(10, edges, 0, roots, 3);
	check_graph(10, edges, 0, roots, 0);
	free(edges);
}

static int cmp_keyidx(const void *x, const void *y)
{
	const struct keyidx *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void test_keyidx_sort(void **st)
{
	(void)st;
	enum { N = 300000 };   /* over the one-thread bound */
	struct keyidx *in = malloc(N * sizeof *in), *want = malloc(N * sizeof *in);
	struct keyidx *got = malloc(N * sizeof *in), *tmp = malloc(N * sizeof *in);
	assert_true(in && want && got && tmp);
	for (uint32_t i = 0; i < N; i++) /* few distinct keys: stability shows */
		in[i] = (struct keyidx){ 0x7f0000000000ull + ((uint64_t)rnd(5000) << 3) * (rnd(2) ? 1 : 0x10001), i };
	memcpy(want, in, N * sizeof *in);
	qsort(want, N, sizeof *want, cmp_keyidx);
	const uint32_t threads[] = { 1, 4, 3 };
	for (size_t k = 0; k < 3; k++) {
		memcpy(got, in, N * sizeof *in);
		keyidx_sort(got, tmp, N, threads[k]);
		assert_memory_equal(got, want, N * sizeof *got);
	}
	free(in);
	free(want);
	free(got);
	free(tmp);
}

/* keyidx_sort_after: a head in ascending order (with repeated keys) and a
 * tail in any order, merged; a head out of order, sorted whole; both
 * against qsort by (key, position), as keyidx_sort. */
static void check_sort_after(const struct keyidx *in, size_t nhead, size_t n)
{
	struct keyidx *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
	assert_true(want && got);
	memcpy(want, in, n * sizeof *in);
	qsort(want, n, sizeof *want, cmp_keyidx);
	const uint32_t threads[] = { 1, 4 };
	for (size_t k = 0; k < 2; k++) {
		memcpy(got, in, n * sizeof *in);
		assert_int_equal(keyidx_sort_after(got, nhead, n, threads[k]), 0);
		assert_memory_equal(got, want, n * sizeof *got);
	}
	free(want);
	free(got);
}

static void test_keyidx_sort_after(void **st)
{
	(void)st;
	enum { N = 300000, TAIL = 1000 };
	struct keyidx *in = malloc(N * sizeof *in);
	assert_non_null(in);
	uint64_t key = 0x7f0000000000ull;
	for (uint32_t i = 0; i < N - TAIL; i++) {
		key += rnd(3) * 8;   /* ascending, a third of them repeating their predecessor */
		in[i] = (struct keyidx){ key, i };
	}
	for (uint32_t i = N - TAIL; i < N; i++) /* below, among, equal to and above the head's */
		in[i] = (struct keyidx){ rnd(4) == 0 ? in[rnd(N - TAIL)].key
						     : 0x7f0000000000ull - 64 + (uint64_t)rnd(N) * 8, i };
	check_sort_after(in, N - TAIL, N);
	check_sort_after(in, N, N);           /* the tail empty */
	check_sort_after(in + N - TAIL, 0, TAIL);   /* the head empty */
	check_sort_after(in, 1, 1);
	check_sort_after(in, 0, 0);
	in[10].key = in[20].key + 8;          /* the head out of order: a whole sort */
	check_sort_after(in, N - TAIL, N);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_graphs),
		cmocka_unit_test(test_chain_and_no_edges),
		cmocka_unit_test(test_keyidx_sort),
		cmocka_unit_test(test_keyidx_sort_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

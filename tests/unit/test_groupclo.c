/* test_groupclo.c - every group's closures at once (analyses/groupclo.c)
 * against the per-group oracle (closure_transitive + closure_retained,
 * analyses/closure.c), issue 29 item 1.
 *
 * Random graphs over many seeds: cycles, self-loops, shared subgraphs,
 * several roots, unreachable objects (and unreachable cycles), groups
 * partitioning all or part of the heap, and overlapping families
 * (one-to-many); every group's deep and retained count and bytes must
 * equal the oracle's, in each mode: the default mix, every group alone,
 * every group batched, and tiny budgets (most groups overflowing into the
 * batched passes, with more than 64 of them: several passes).  Plus the
 * shared-ownership case by hand (an object kept alive only by two members
 * of one group, dominated by neither) and a 10^6-long list (no recursion).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/groupclo.h"
#include "model/heap_state.h"
#include "fixture_state.h"

static struct heap_state *mkstate(uint32_t n, const uint64_t *sizes, const struct fx_edge *edges,
				  uint32_t ne, const uint32_t *roots, uint32_t nroots)
{
	struct heap_state *s = fx_state(n, NULL, n, edges, ne, roots, nroots);
	for (uint32_t i = 0; i < n; i++)
		s->infos[i].size = sizes[i];
	return s;
}

static uint64_t rng;
static uint32_t rnd(uint32_t bound)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % bound);
}

static int by_key_obj(const void *a, const void *b)
{
	const struct cls_pair *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* Every group of pairs (sorted), in every mode, against the oracle. */
static void check_family(const struct heap_state *s, const struct cls_pair *pr, size_t np)
{
	struct closure_ctx *c;
	uint64_t *g = bitset_new(s->n), *clo = bitset_new(s->n), *uni_want = bitset_new(s->n);
	uint64_t *uni = bitset_new(s->n);
	assert_non_null(g);
	assert_non_null(clo);
	assert_non_null(uni_want);
	assert_non_null(uni);
	assert_int_equal(closure_ctx_new(&c, s), 0);
	uint32_t ngroups = 0;
	for (size_t i = 0; i < np; i++)
		ngroups += i == 0 || pr[i].key != pr[i - 1].key;
	struct closure_metrics *want_d = calloc(ngroups + 1, sizeof *want_d);
	struct closure_metrics *want_r = calloc(ngroups + 1, sizeof *want_r);
	assert_non_null(want_d);
	assert_non_null(want_r);
	for (size_t i = 0, k = 0; i < np; k++) {
		size_t j = i;
		memset(g, 0, bitset_words(s->n) * 8);
		while (j < np && pr[j].key == pr[i].key)
			bitset_set(g, pr[j++].obj);
		assert_int_equal(closure_transitive(c, g, clo, &want_d[k]), 0);
		bitset_or(uni_want, clo, s->n);
		assert_int_equal(closure_retained(c, g, clo, &want_r[k]), 0);
		i = j;
	}
	const uint32_t budgets[] = { 0, UINT32_MAX, 1, 2, 3, 7 };
	/* modes 7-9: the batches and the groups alone on 3 and 4 threads
	 * (the same numbers as the oracle's: no result depends on the
	 * threads); modes 10-11: the pairs handed over (pairs_owner, as the
	 * closure tables do), freed before the passes: a copy in a buf */
	for (int mode = 0; mode < 12; mode++) {
		struct gclo_stats st;
		struct gclo_opts o = { .stats = &st };
		struct buf own;
		const struct cls_pair *use = pr;
		buf_init(&own);
		if (mode >= 10) {
			assert_int_equal(buf_put(&own, pr, np * sizeof *pr), 0);
			use = (const struct cls_pair *)own.data;
			o.pairs_owner = &own;
			o.all_batched = mode == 10;
			o.threads = 2;
		} else if (mode < 6)
			o.budget = budgets[mode];
		else if (mode == 8)
			o.budget = 1, o.threads = 4;
		else if (mode == 9)
			o.threads = 3;
		else
			o.all_batched = 1, o.threads = mode == 7 ? 3 : 0;
		struct closure_metrics *d = NULL, *r = NULL;
		uint32_t ng = 0;
		memset(uni, 0, bitset_words(s->n) * 8);
		assert_int_equal(gclo_compute(s, use, np, &o, &ng, &d, &r, uni), 0);
		if (mode >= 10 && st.passes) /* released before the passes */
			assert_null(own.data);
		buf_free(&own);
		assert_int_equal(ng, ngroups);
		assert_int_equal(st.groups, ngroups);
		assert_int_equal(st.alone + st.batched, ngroups);
		if (mode == 1)
			assert_int_equal(st.batched, 0);
		if (mode == 6 || mode == 7)
			assert_int_equal(st.alone, 0);
		for (uint32_t k = 0; k < ngroups; k++) {
			assert_int_equal(d[k].count, want_d[k].count);
			assert_int_equal(d[k].bytes, want_d[k].bytes);
			assert_int_equal(r[k].count, want_r[k].count);
			assert_int_equal(r[k].bytes, want_r[k].bytes);
		}
		assert_memory_equal(uni, uni_want, bitset_words(s->n) * 8);
		free(d);
		free(r);
	}
	free(want_d);
	free(want_r);
	bitset_free(g);
	bitset_free(clo);
	bitset_free(uni);
	bitset_free(uni_want);
	closure_ctx_free(c);
}

/* A random heap: a shared core, cycles (rings), self-loops, random extra
 * edges, 1-4 roots, and some objects no root reaches (some of them
 * pointing into the reachable part). */
static struct heap_state *random_heap(uint32_t n)
{
	uint64_t *sizes = malloc(n * sizeof *sizes);
	uint32_t cap = 6 * n + 16, ne = 0, roots[4], nr = 1 + rnd(4);
	struct fx_edge *edges = malloc(cap * sizeof *edges);
	assert_non_null(sizes);
	assert_non_null(edges);
	for (uint32_t i = 0; i < n; i++)
		sizes[i] = 1 + rnd(1000);
	/* a spanning structure so most objects are reachable: each object
	 * points from an earlier one (a tree), sometimes from two (sharing) */
	for (uint32_t i = 1; i < n && ne < cap; i++) {
		edges[ne++] = (struct fx_edge){ rnd(i), i };
		if (rnd(4) == 0 && ne < cap)
			edges[ne++] = (struct fx_edge){ rnd(i), i };
	}
	for (uint32_t k = rnd(n / 2 + 1); k > 0 && ne < cap; k--) /* back edges: cycles */
		edges[ne++] = (struct fx_edge){ rnd(n), rnd(n) };
	for (uint32_t k = rnd(4); k > 0 && ne < cap; k--) { /* self-loops */
		uint32_t x = rnd(n);
		edges[ne++] = (struct fx_edge){ x, x };
	}
	for (uint32_t r = 0; r < nr; r++)
		roots[r] = rnd(n);
	if (rnd(3) == 0) {
		/* unreachable tail: objects >= cut get no edge from below cut
		 * and no root (a separate garbage subgraph, maybe cyclic and
		 * pointing into the live part) */
		uint32_t cut = n / 2 + rnd(n / 2 + 1);
		uint32_t k = 0;
		for (uint32_t e = 0; e < ne; e++)
			if (!(edges[e].from < cut && edges[e].to >= cut))
				edges[k++] = edges[e];
		ne = k;
		for (uint32_t r = 0; r < nr; r++)
			roots[r] = rnd(cut);
	}
	struct heap_state *s = mkstate(n, sizes, edges, ne, roots, nr);
	free(sizes);
	free(edges);
	return s;
}

static void test_random_partitions(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 1500; seed++) {
		rng = seed * 0x9e3779b97f4a7c15ull + 1;
		uint32_t n = 2 + rnd(seed % 10 == 0 ? 400 : 60);
		struct heap_state *s = random_heap(n);
		uint32_t ngrp = 1 + rnd(seed % 7 == 0 ? 150 : 12);
		struct cls_pair *pr = malloc(n * sizeof *pr);
		assert_non_null(pr);
		size_t np = 0;
		int partial = rnd(3) == 0; /* a parent group that is not the heap */
		for (uint32_t x = 0; x < n; x++)
			if (!partial || rnd(4))
				pr[np++] = (struct cls_pair){ 1000 + 3 * rnd(ngrp), x };
		qsort(pr, np, sizeof *pr, by_key_obj);
		check_family(s, pr, np);
		free(pr);
		heap_state_free(s);
	}
}

/* One-to-many: objects in 0-3 groups at once. */
static void test_random_overlapping(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 600; seed++) {
		rng = seed * 0xd1342543de82ef95ull + 7;
		uint32_t n = 2 + rnd(80);
		struct heap_state *s = random_heap(n);
		uint32_t ngrp = 1 + rnd(seed % 5 == 0 ? 100 : 10);
		struct cls_pair *pr = malloc(3 * n * sizeof *pr);
		assert_non_null(pr);
		size_t np = 0;
		for (uint32_t x = 0; x < n; x++) {
			uint32_t k = rnd(4), last = UINT32_MAX;
			for (uint32_t j = 0; j < k; j++) {
				uint32_t key = rnd(ngrp);
				if (key != last)
					pr[np++] = (struct cls_pair){ key, x };
				last = key;
			}
		}
		qsort(pr, np, sizeof *pr, by_key_obj);
		/* an object twice in one group: keep it once */
		size_t m = 0;
		for (size_t i = 0; i < np; i++)
			if (m == 0 || pr[i].key != pr[m - 1].key || pr[i].obj != pr[m - 1].obj)
				pr[m++] = pr[i];
		check_family(s, pr, m);
		free(pr);
		heap_state_free(s);
	}
}

/* Shared ownership by hand: root R -> a1, a2 (group A); a1 -> x, a2 -> x;
 * x -> y; R -> b (group B), b -> z, a1 -> z.  Neither a1 nor a2 dominates
 * x, yet A retains a1, a2, x, y; z is held by b. */
static void test_shared_ownership(void **state)
{
	(void)state;
	enum { R, A1, A2, X, Y, B, Z, N };
	const struct fx_edge e[] = { { R, A1 }, { R, A2 }, { A1, X }, { A2, X }, { X, Y },
				     { R, B },  { B, Z },  { A1, Z } };
	uint64_t sizes[N];
	for (int i = 0; i < N; i++)
		sizes[i] = 1ull << i;
	const uint32_t roots[] = { R };
	struct heap_state *s = mkstate(N, sizes, e, sizeof e / sizeof e[0], roots, 1);
	struct cls_pair pr[] = { { 1, R }, { 2, A1 }, { 2, A2 }, { 3, X }, { 3, Y }, { 4, B }, { 5, Z } };
	struct closure_metrics *d, *r;
	uint32_t ng;
	for (int batch = 0; batch < 2; batch++) {
		struct gclo_opts o = { .all_batched = batch };
		assert_int_equal(gclo_compute(s, pr, sizeof pr / sizeof pr[0], &o, &ng, &d, &r, NULL), 0);
		assert_int_equal(ng, 5);
		assert_int_equal(r[1].count, 4); /* A: a1 a2 x y */
		assert_int_equal(r[1].bytes, (1ull << A1) + (1ull << A2) + (1ull << X) + (1ull << Y));
		assert_int_equal(d[1].count, 5); /* + z */
		assert_int_equal(r[0].count, N); /* the root retains everything */
		assert_int_equal(r[3].count, 1); /* B: b only, z is held by a1 too */
		assert_int_equal(r[4].count, 1);
		free(d);
		free(r);
	}
	check_family(s, pr, sizeof pr / sizeof pr[0]);
	heap_state_free(s);
}

/* A 10^6-long list (one 10^6-deep DFS, a 10^6-object path), alternating
 * two groups, and a ring closing it in half of the runs: results equal
 * the oracle with no recursion over the graph. */
static void test_long_list(void **state)
{
	(void)state;
	const uint32_t n = 1000000;
	for (int ring = 0; ring < 2; ring++) {
		uint64_t *sizes = malloc(n * sizeof *sizes);
		struct fx_edge *e = malloc((n + 1) * sizeof *e);
		struct cls_pair *pr = malloc(n * sizeof *pr);
		assert_non_null(sizes);
		assert_non_null(e);
		assert_non_null(pr);
		uint32_t ne = 0;
		for (uint32_t i = 0; i < n; i++) {
			sizes[i] = 16 + i % 3;
			if (i + 1 < n)
				e[ne++] = (struct fx_edge){ i, i + 1 };
		}
		if (ring)
			e[ne++] = (struct fx_edge){ n - 1, n / 2 };
		const uint32_t roots[] = { 0 };
		struct heap_state *s = mkstate(n, sizes, e, ne, roots, 1);
		/* keys: 0 for even, 1 for odd; and the tail's last object alone */
		size_t np = 0;
		for (uint32_t k = 0; k < 3; k++)
			for (uint32_t i = 0; i < n; i++)
				if ((i == n - 1 ? 2 : i % 2) == k)
					pr[np++] = (struct cls_pair){ k, i };
		for (int batch = 0; batch < 2; batch++) {
			struct gclo_opts o = { .all_batched = batch };
			struct closure_metrics *d, *r;
			uint32_t ng;
			assert_int_equal(gclo_compute(s, pr, np, &o, &ng, &d, &r, NULL), 0);
			assert_int_equal(ng, 3);
			assert_int_equal(d[0].count, n);      /* object 0 reaches all */
			assert_int_equal(r[0].count, n);      /* and holds the rest */
			assert_int_equal(d[1].count, n - 1);
			assert_int_equal(r[1].count, n - 1); /* object 1 holds the rest too */
			assert_int_equal(r[2].count, 1);
			free(d);
			free(r);
		}
		check_family(s, pr, np);
		heap_state_free(s);
		free(sizes);
		free(e);
		free(pr);
	}
}

static void test_needs_graph(void **state)
{
	(void)state;
	struct heap_state s;
	memset(&s, 0, sizeof s);
	struct closure_metrics *d, *r;
	uint32_t ng;
	assert_int_equal(gclo_compute(&s, NULL, 0, NULL, &ng, &d, &r, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_ownership),
		cmocka_unit_test(test_random_partitions),
		cmocka_unit_test(test_random_overlapping),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_needs_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

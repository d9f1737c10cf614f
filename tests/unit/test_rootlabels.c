/* test_rootlabels.c - which root labels reach each object
 * (analyses/rootlabels.h), against a brute force written here: one
 * breadth-first search per labelled root.
 *
 * Heaps are built by hand as heap_state structs (as in test_closure.c).
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
#include "analyses/dominators.h"
#include "analyses/rootlabels.h"
#include "model/heap_state.h"
#include "fixture_state.h"
#include "tests/xorshift.h"


static struct heap_state *mkstate(uint32_t n, const struct fx_edge *edges, uint32_t ne,
				  const uint32_t *roots, uint32_t nroots)
{
	struct heap_state *s = fx_state(n, NULL, n, edges, ne, roots, nroots);
	for (uint32_t i = 0; i < n; i++)
		s->infos[i].size = 16;
	return s;
}

/* ---- the brute force ---- */

/* reach[l * n + x] = 1 iff a root labelled l reaches x; dist[l * n + x]:
 * BFS distance from the nearest root labelled l (UINT32_MAX: none). */
static void brute(const struct heap_state *s, const uint32_t *label, uint32_t nlabels,
		  uint32_t *dist, uint8_t *any)
{
	uint32_t n = s->n, *q = malloc((n + 1) * sizeof *q);
	for (size_t k = 0; k < (size_t)nlabels * n; k++)
		dist[k] = UINT32_MAX;
	memset(any, 0, n);
	for (uint32_t l = 0; l < nlabels; l++) {
		uint32_t *d = dist + (size_t)l * n, h = 0, t = 0;
		for (uint32_t r = 0; r < s->nroots; r++) {
			if (label[r] == l && d[s->roots[r].object] == UINT32_MAX) {
				d[s->roots[r].object] = 0;
				q[t++] = s->roots[r].object;
			}
		}
		while (h < t) {
			uint32_t x = q[h++];
			for (uint32_t e = s->out_off[x]; e < s->out_off[x + 1]; e++) {
				uint32_t y = s->out_tgt[e];
				if (d[y] == UINT32_MAX) {
					d[y] = d[x] + 1;
					q[t++] = y;
				}
			}
		}
	}
	/* reachable from any root, labelled or not */
	uint32_t h = 0, t = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		if (!any[s->roots[r].object]) {
			any[s->roots[r].object] = 1;
			q[t++] = s->roots[r].object;
		}
	}
	while (h < t) {
		uint32_t x = q[h++];
		for (uint32_t e = s->out_off[x]; e < s->out_off[x + 1]; e++) {
			if (!any[s->out_tgt[e]]) {
				any[s->out_tgt[e]] = 1;
				q[t++] = s->out_tgt[e];
			}
		}
	}
	free(q);
}

static void check_against_brute(const struct heap_state *s, const uint32_t *label,
				 uint32_t nlabels, uint32_t cap)
{
	uint32_t n = s->n;
	uint32_t *dist = malloc(((size_t)nlabels * n + 1) * sizeof *dist);
	uint8_t *any = malloc(n + 1);
	struct dominators *dom;
	struct rootlabels rl;
	brute(s, label, nlabels, dist, any);
	assert_int_equal(dominators_compute(s, &dom), 0);
	assert_int_equal(rootlabels_indirect(s, label, dom->idom, cap, &rl), 0);
	assert_int_equal(rl.n, n);
	uint32_t *first = malloc((n + 1) * sizeof *first);
	assert_int_equal(rootlabels_first(s, label, first), 0);
	for (uint32_t x = 0; x < n; x++) {
		if (!any[x]) {
			assert_int_equal(rl.set[x], RL_NONE);
		} else {
			assert_true(rl.set[x] < rl.nsets);
			const uint32_t *got = rl.set_lab + rl.set_off[rl.set[x]];
			uint32_t ngot = rl.set_off[rl.set[x] + 1] - rl.set_off[rl.set[x]], k = 0, total = 0;
			for (uint32_t l = 0; l < nlabels; l++) {
				if (dist[(size_t)l * n + x] == UINT32_MAX)
					continue;
				total++;
				if (k < cap) {
					assert_true(k < ngot);
					assert_int_equal(got[k], l);
					k++;
				}
			}
			if (total > cap) {
				assert_int_equal(ngot, cap + 1);
				assert_int_equal(got[cap], RL_MANY);
			} else {
				assert_int_equal(ngot, total);
			}
		}
		/* first: smallest label among the nearest */
		uint32_t best = UINT32_MAX, bl = RL_NONE;
		for (uint32_t l = 0; l < nlabels; l++) {
			uint32_t d = dist[(size_t)l * n + x];
			if (d < best) {
				best = d;
				bl = l;
			}
		}
		assert_int_equal(first[x], bl);
	}
	free(first);
	rootlabels_free(&rl);
	dominators_free(dom);
	free(dist);
	free(any);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t m)
{
	return xorshift_below(&rng_state, m);
}

/* Random heaps: some sparse (long dominator chains), some dense (cycles,
 * shared objects), self references and duplicate edges included; some
 * roots unlabelled (the variables-only variant), some objects rooted
 * twice; caps from 1 to above the label count. */
static void test_random_against_brute(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 600; seed++) {
		rng_state = seed * 0x9E3779B97F4A7C15ull;
		uint32_t n = 1 + rnd(60), ne = rnd(n * (1 + seed % 4)), nr = 1 + rnd(8);
		uint32_t nlabels = 1 + rnd(6);
		struct fx_edge *e = malloc((ne + 1) * sizeof *e);
		uint32_t roots[8], label[8];
		for (uint32_t k = 0; k < ne; k++)
			e[k] = (struct fx_edge){ rnd(n), rnd(n) };
		for (uint32_t r = 0; r < nr; r++) {
			roots[r] = rnd(n);
			label[r] = rnd(5) == 0 ? RL_NONE : rnd(nlabels);
		}
		struct heap_state *s = mkstate(n, e, ne, roots, nr);
		check_against_brute(s, label, nlabels, 1 + (uint32_t)(seed % 7));
		heap_state_free(s);
		free(e);
	}
}

/* The multicache shape: two maps (roots 0 and 1) share every product;
 * each product holds a string the second map also keys on.  Products and
 * strings are dominated by the virtual root only, their int[] by the
 * product: the int[] inherits the product's {0, 1}. */
static void test_shared_products(void **state)
{
	(void)state;
	enum { M1, M2, N1, N2, P, S, A, G, NOBJ };
	struct fx_edge e[] = {
		{ M1, N1 }, { M2, N2 }, { N1, P }, { N2, P }, { N2, S }, { P, S }, { P, A },
		{ G, P }, /* garbage referencing a product */
	};
	uint32_t roots[] = { M1, M2 }, label[] = { 0, 1 };
	struct heap_state *s = mkstate(NOBJ, e, sizeof e / sizeof *e, roots, 2);
	struct dominators *dom;
	struct rootlabels rl;
	assert_int_equal(dominators_compute(s, &dom), 0);
	assert_int_equal(rootlabels_indirect(s, label, dom->idom, 4, &rl), 0);
	assert_int_equal(rl.set[G], RL_NONE);
	const uint32_t want_both[] = { 0, 1 };
	uint32_t objs[] = { P, S, A };
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t k = rl.set[objs[i]];
		assert_int_equal(rl.set_off[k + 1] - rl.set_off[k], 2);
		assert_memory_equal(rl.set_lab + rl.set_off[k], want_both, sizeof want_both);
	}
	uint32_t k = rl.set[N1];
	assert_int_equal(rl.set_off[k + 1] - rl.set_off[k], 1);
	assert_int_equal(rl.set_lab[rl.set_off[k]], 0);
	check_against_brute(s, label, 2, 4);
	rootlabels_free(&rl);
	dominators_free(dom);
	heap_state_free(s);
}

/* A list of 10^6 nodes whose tail points back into a cycle with a second
 * root: no recursion, and the chain shares one set. */
static void test_long_list(void **state)
{
	(void)state;
	uint32_t n = 1000000;
	struct fx_edge *e = malloc((n + 1) * sizeof *e);
	for (uint32_t i = 0; i + 1 < n; i++)
		e[i] = (struct fx_edge){ i, i + 1 };
	e[n - 1] = (struct fx_edge){ n - 1, n / 2 }; /* a cycle over the second half */
	uint32_t roots[] = { 0, n / 2 + 1 }, label[] = { 7, 3 };
	struct heap_state *s = mkstate(n, e, n, roots, 2);
	struct dominators *dom;
	struct rootlabels rl;
	assert_int_equal(dominators_compute(s, &dom), 0);
	assert_int_equal(rootlabels_indirect(s, label, dom->idom, 16, &rl), 0);
	/* the first half: label 7 only; the cycle: both */
	uint32_t a = rl.set[10], b = rl.set[n - 10];
	assert_int_equal(rl.set_off[a + 1] - rl.set_off[a], 1);
	assert_int_equal(rl.set_lab[rl.set_off[a]], 7);
	assert_int_equal(rl.set_off[b + 1] - rl.set_off[b], 2);
	assert_int_equal(rl.set_lab[rl.set_off[b]], 3);
	assert_int_equal(rl.set_lab[rl.set_off[b] + 1], 7);
	assert_true(rl.nsets <= 4);
	uint32_t *first = malloc(n * sizeof *first);
	assert_int_equal(rootlabels_first(s, label, first), 0);
	assert_int_equal(first[10], 7);
	assert_int_equal(first[n / 2 + 2], 3);
	free(first);
	rootlabels_free(&rl);
	dominators_free(dom);
	heap_state_free(s);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_products),
		cmocka_unit_test(test_random_against_brute),
		cmocka_unit_test(test_long_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

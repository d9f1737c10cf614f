/* test_dgraph.c - model/hprof_graph.c's dgraph_drop_edges: random graphs
 * whose slots carry high bits in runs (array elements past 65535), random
 * sets of edges dropped (at run boundaries, whole runs, the last edges),
 * checked against the graph rebuilt from scratch over the kept edges the
 * way the pass over the objects builds it (runs_push whenever the high
 * bits change): the same targets, full slots, offsets and runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"
#include "model/hprof_internal.h"

static uint64_t rng = 88172645463325252ull;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Appends an edge of full slot `slot` to g, as add_ref does. */
static void put_edge(struct dgraph *g, uint32_t tgt, uint32_t slot)
{
	if (g->ne == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->tgt = realloc(g->tgt, g->cap * sizeof *g->tgt);
		g->slot = realloc(g->slot, g->cap * sizeof *g->slot);
		assert_non_null(g->tgt);
		assert_non_null(g->slot);
	}
	if (slot >> 16 != (g->nhi ? g->hi[g->nhi - 1] : 0))
		assert_int_equal(runs_push(&g->hi_edge, &g->hi, &g->nhi, &g->caphi, g->ne, slot >> 16), 0);
	g->tgt[g->ne] = tgt;
	g->slot[g->ne] = (uint16_t)slot;
	g->ne++;
}

/* A slot for edge k of an object: mostly low, with stretches of high
 * bits (1 or 2, sometimes back to 0) so that runs start and end often. */
static uint32_t some_slot(uint32_t mode)
{
	uint32_t lo = next_rand() % 65536;
	return mode == 0 ? lo : (mode << 16) | lo;
}

static void check_drop(uint32_t n, uint32_t drop_every, int drop_tail)
{
	struct dgraph g, want;
	assert_int_equal(dgraph_init(&g, n), 0);
	assert_int_equal(dgraph_init(&want, n), 0);
	uint64_t *drop = malloc(sizeof *drop * (16 * (uint64_t)n + 1));
	assert_non_null(drop);
	uint64_t ndrop = 0;
	uint32_t mode = 0;
	for (uint32_t i = 0; i < n; i++) {
		g.off[i] = (uint32_t)g.ne;
		want.off[i] = (uint32_t)want.ne;
		uint32_t ne = next_rand() % 6;
		for (uint32_t k = 0; k < ne; k++) {
			if (next_rand() % 7 == 0)
				mode = next_rand() % 3;
			uint32_t tgt = next_rand() % n, slot = some_slot(mode);
			/* dropped: every drop_every-th at random, or a whole
			 * stretch of one mode, or the graph's last edges */
			int dropped = (drop_every && next_rand() % drop_every == 0) ||
				      (mode == 2 && drop_every && next_rand() % 2) ||
				      (drop_tail && i + 3 >= n);
			if (dropped)
				drop[ndrop++] = g.ne;
			else
				put_edge(&want, tgt, slot);
			put_edge(&g, tgt, slot);
		}
	}
	dgraph_end(&g);
	dgraph_end(&want);
	dgraph_drop_edges(&g, drop, ndrop);
	assert_int_equal(g.ne, want.ne);
	for (uint32_t i = 0; i <= n; i++)
		assert_int_equal(g.off[i], want.off[i]);
	uint32_t run = 0, wrun = 0;
	for (uint64_t e = 0; e < want.ne; e++) {
		assert_int_equal(g.tgt[e], want.tgt[e]);
		assert_int_equal(dgraph_slot(&g, e, &run), dgraph_slot(&want, e, &wrun));
	}
	/* the runs themselves, as the pass would have made them: none empty,
	 * none with the bits of the one before */
	assert_int_equal(g.nhi, want.nhi);
	for (uint32_t k = 0; k < want.nhi; k++) {
		assert_int_equal(g.hi_edge[k], want.hi_edge[k]);
		assert_int_equal(g.hi[k], want.hi[k]);
	}
	free(drop);
	dgraph_free(&g);
	dgraph_free(&want);
}

static void test_drop_random(void **st)
{
	(void)st;
	for (uint32_t round = 0; round < 50; round++) {
		check_drop(1 + next_rand() % 2000, 2 + round % 9, round % 3 == 0);
		check_drop(1 + next_rand() % 50, 3, 1);
	}
}

static void test_drop_none_and_all(void **st)
{
	(void)st;
	check_drop(500, 0, 0);   /* nothing dropped */
	check_drop(3, 0, 1);     /* every edge: the last 3 objects are all */
	check_drop(1000, 1, 0);  /* drop_every 1: every edge */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_random),
		cmocka_unit_test(test_drop_none_and_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

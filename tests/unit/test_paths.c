/* test_paths.c - agent/cfg.c and agent/paths.c: the path structures of the
 * paper's Figure 2, the counter semantics of Figures 3 and 4 for every
 * counter placement (expected values worked out by hand from the paper's
 * rules), and random CFGs checked by simulation: over every walk from the
 * entry (or a handler) to an exit, the counters passed add up to the
 * walk's allocations, site by site. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/instrument.h"
#include "agent/paths.h"
#include "tests/xorshift.h"

/* Blocks are named by letters in the comments; each block b has one
 * allocation site numbered b unless stated otherwise. */
static void one_site_per_block(struct cfg *g)
{
	for (uint32_t b = 0; b < g->nblocks; b++)
		assert_int_equal(cfg_add_site(g, b, b), 0);
}

static uint32_t edge(const struct paths *ps, uint32_t from, uint32_t to)
{
	uint32_t e = paths_find_edge(ps, from, to);
	assert_int_not_equal(e, PATHS_NONE);
	return e;
}

/* Figure 2 right: A->B->E hot; A->C, C->D, D->C, C->E.  Frequencies make
 * A->B the likely successor of A and C->D that of C, so the dashed path
 * A->C->D->C finds C on itself (header), splits off the loop [D] and
 * continues C->E, joining the hot path at E. */
enum { A, B, C, D, E };
static void test_figure2_loop_split(void **state)
{
	(void)state;
	struct cfg g;
	assert_int_equal(cfg_init(&g, 5), 0);
	cfg_add_edge(&g, A, B, CFG_NORMAL, 1);
	cfg_add_edge(&g, A, C, CFG_NORMAL, 0);
	cfg_add_edge(&g, B, E, CFG_NORMAL, 0);
	cfg_add_edge(&g, C, D, CFG_NORMAL, 1);
	cfg_add_edge(&g, C, E, CFG_NORMAL, 0);
	cfg_add_edge(&g, D, C, CFG_NORMAL, 0);
	g.b[E].exit = 1;
	one_site_per_block(&g);
	assert_int_equal(cfg_finish(&g), 0);
	/* cfg edges sorted by (from, to): AB AC BE CD CE DC */
	double freq[] = { 10, 1, 10, 9, 1, 9 };
	struct paths ps;
	assert_int_equal(paths_build(&g, freq, &ps), 0);
	assert_int_equal(ps.npaths, 3);
	uint32_t hot = ps.block_path[A];
	assert_int_equal(ps.block_path[B], hot);
	assert_int_equal(ps.block_path[E], hot);
	uint32_t dashed = ps.block_path[C], loop = ps.block_path[D];
	assert_true(dashed != hot && loop != hot && loop != dashed);
	assert_int_equal(ps.p[loop].split_from, dashed);
	/* the loop branches off C and joins C; the dashed path joins at E */
	assert_int_equal(ps.e[edge(&ps, C, D)].path, loop);
	assert_int_equal(ps.e[edge(&ps, D, C)].path, loop);
	assert_int_equal(ps.e[edge(&ps, A, C)].path, dashed);
	assert_int_equal(ps.e[edge(&ps, C, E)].path, dashed);
	assert_int_equal(ps.e[edge(&ps, E, PATHS_X)].path, hot);
	/* share counts of the hot path X->A, A->B, B->E, E->X: one path
	 * branches off at A (the dashed), one joins at E (the dashed) */
	assert_int_equal(ps.e[edge(&ps, PATHS_X, A)].share, 2); /* 1 + branch at A */
	assert_int_equal(ps.e[edge(&ps, A, B)].share, 1);
	assert_int_equal(ps.e[edge(&ps, B, E)].share, 1);
	assert_int_equal(ps.e[edge(&ps, E, PATHS_X)].share, 2); /* 1 + join at E */
	assert_int_equal(paths_place(&ps, &g, NULL), 0);
	assert_int_equal(paths_semantics(&ps, &g), 0);
	/* one counter per path; the hot one on a least-shared edge */
	assert_int_equal(ps.ncounters, 3);
	uint32_t hc = ps.p[hot].counter_edge;
	assert_true(hc == edge(&ps, A, B) || hc == edge(&ps, B, E));
	/* the loop counts one iteration: D and the header C */
	uint32_t lc = ps.p[loop].counter_edge;
	for (uint32_t k = 0; k < ps.ncounters; k++) {
		if (ps.counter_edge[k] != lc)
			continue;
		int32_t *S = ps.sem + k * ps.nsites;
		int32_t expect[5] = { 0, 0, 1, 1, 0 };
		assert_memory_equal(S, expect, sizeof(expect));
	}
	paths_free(&ps);
	cfg_free(&g);
}

/* Figure 2 with the static heuristics: a javac while loop.
 *   0 entry: goto 2        1 body -> 2        2 test: if -> 1 (backward), else 3
 *   3 return
 * The backward edge 2->1 is preferred, so the hot path X,0,2,1 meets 2
 * again: 2 is the header and [1] the loop. */
static void test_figure2_static_heuristics(void **state)
{
	(void)state;
	struct cfg g;
	assert_int_equal(cfg_init(&g, 4), 0);
	cfg_add_edge(&g, 0, 2, CFG_NORMAL, 0);
	cfg_add_edge(&g, 1, 2, CFG_NORMAL, 1);
	cfg_add_edge(&g, 2, 1, CFG_NORMAL, 0);
	cfg_add_edge(&g, 2, 3, CFG_NORMAL, 1);
	g.b[3].exit = 1;
	one_site_per_block(&g);
	assert_int_equal(cfg_finish(&g), 0);
	struct paths ps;
	assert_int_equal(paths_plan(&g, NULL, &ps), 0);
	assert_int_equal(ps.npaths, 2);
	uint32_t hot = ps.block_path[0];
	assert_int_equal(ps.block_path[2], hot);
	assert_int_equal(ps.block_path[3], hot);
	assert_int_not_equal(ps.block_path[1], hot);
	assert_int_equal(ps.p[ps.block_path[1]].split_from, hot);
	paths_free(&ps);
	cfg_free(&g);
}

/* Figures 3 and 4: build, force the counters, return the semantics of the
 * counter on edge (from, to). */
static void sem_of(struct paths *ps, uint32_t from, uint32_t to, int32_t *out)
{
	uint32_t e = edge(ps, from, to);
	for (uint32_t k = 0; k < ps->ncounters; k++)
		if (ps->counter_edge[k] == e) {
			memcpy(out, ps->sem + k * ps->nsites, ps->nsites * sizeof(int32_t));
			return;
		}
	fail_msg("no counter on %u->%u", from, to);
}

/* Figure 3.  Continuous path X,A,B,C,X (entry); dashed path X,E,F,G,X (E
 * is a handler, so the dashed path depends on no other path, as in the
 * paper's simplification); dash-dotted B->D->F branches off the
 * continuous path at B and joins the dashed one at F.  Sites: one per
 * block, site number = block number. */
enum { FA, FB, FC, FD, FE, FF, FG, F_N };
static void test_figure3_corrections(void **state)
{
	(void)state;
	for (int cont_after = 0; cont_after < 2; cont_after++) {
		for (int dashed_after = 0; dashed_after < 2; dashed_after++) {
			struct cfg g;
			assert_int_equal(cfg_init(&g, F_N), 0);
			cfg_add_edge(&g, FA, FB, CFG_NORMAL, 1);
			cfg_add_edge(&g, FB, FC, CFG_NORMAL, 1);
			cfg_add_edge(&g, FB, FD, CFG_NORMAL, 0);
			cfg_add_edge(&g, FD, FF, CFG_NORMAL, 0);
			cfg_add_edge(&g, FE, FF, CFG_NORMAL, 1);
			cfg_add_edge(&g, FF, FG, CFG_NORMAL, 1);
			g.b[FC].exit = g.b[FG].exit = 1;
			g.b[FE].handler = 1;
			one_site_per_block(&g);
			assert_int_equal(cfg_finish(&g), 0);
			/* sorted: AB BC BD DF EF FG */
			double freq[] = { 5, 5, 1, 1, 5, 5 };
			struct paths ps;
			assert_int_equal(paths_build(&g, freq, &ps), 0);
			assert_int_equal(ps.npaths, 3);
			uint32_t cont = ps.block_path[FA], dashed = ps.block_path[FE], dd = ps.block_path[FD];
			uint32_t forced[3];
			forced[cont] = cont_after ? edge(&ps, FC, PATHS_X) : edge(&ps, PATHS_X, FA);
			forced[dashed] = dashed_after ? edge(&ps, FG, PATHS_X) : edge(&ps, PATHS_X, FE);
			forced[dd] = edge(&ps, FB, FD);
			assert_int_equal(paths_place(&ps, &g, forced), 0);
			assert_int_equal(paths_semantics(&ps, &g), 0);
			int32_t S[F_N], expect[F_N] = { 0 };
			sem_of(&ps, FB, FD, S);
			expect[FD] = 1; /* its own allocation */
			if (cont_after) { /* not counted yet: add A and B */
				expect[FA] += 1;
				expect[FB] += 1;
			} else { /* counted already: remove C, never reached */
				expect[FC] -= 1;
			}
			if (dashed_after) { /* will count E..G: remove E, not passed */
				expect[FE] -= 1;
			} else { /* skipped: add F and G */
				expect[FF] += 1;
				expect[FG] += 1;
			}
			assert_memory_equal(S, expect, sizeof(expect));
			paths_free(&ps);
			cfg_free(&g);
		}
	}
}

/* Figure 4.  Continuous X,A,H,C,X; loop H->L->H.  Wherever the two
 * counters sit, the loop's counter means one iteration: L and H. */
enum { LA, LH, LC, LL, L_N };
static void test_figure4_loop(void **state)
{
	(void)state;
	for (int cont_pos = 0; cont_pos < 4; cont_pos++) {
		for (int loop_pos = 0; loop_pos < 2; loop_pos++) {
			struct cfg g;
			assert_int_equal(cfg_init(&g, L_N), 0);
			cfg_add_edge(&g, LA, LH, CFG_NORMAL, 1);
			cfg_add_edge(&g, LH, LC, CFG_NORMAL, 1);
			cfg_add_edge(&g, LH, LL, CFG_NORMAL, 0);
			cfg_add_edge(&g, LL, LH, CFG_NORMAL, 0);
			g.b[LC].exit = 1;
			one_site_per_block(&g);
			assert_int_equal(cfg_finish(&g), 0);
			double freq[] = { 5, 5, 1, 1 }; /* AH HC HL LH */
			struct paths ps;
			assert_int_equal(paths_build(&g, freq, &ps), 0);
			assert_int_equal(ps.npaths, 2);
			uint32_t cont = ps.block_path[LA], loop = ps.block_path[LL];
			uint32_t cont_edges[4] = { edge(&ps, PATHS_X, LA), edge(&ps, LA, LH), edge(&ps, LH, LC),
						   edge(&ps, LC, PATHS_X) };
			uint32_t forced[2];
			forced[cont] = cont_edges[cont_pos];
			forced[loop] = loop_pos ? edge(&ps, LL, LH) : edge(&ps, LH, LL);
			assert_int_equal(paths_place(&ps, &g, forced), 0);
			assert_int_equal(paths_semantics(&ps, &g), 0);
			int32_t S[L_N], expect[L_N] = { 0, 1, 0, 1 };
			sem_of(&ps, loop_pos ? LL : LH, loop_pos ? LH : LL, S);
			assert_memory_equal(S, expect, sizeof(expect));
			paths_free(&ps);
			cfg_free(&g);
		}
	}
}

/* An if without else (0 -> 1 -> 2, 0 -> 2) where only the "then" block 1
 * allocates: the hot path avoids the allocating block (X -> 0 -> 2 -> X)
 * and counts nothing, so its counter is dropped; the side path 0 -> 1 -> 2
 * counts block 1's allocation on 0 -> 1. */
static void test_empty_semantics_dropped(void **state)
{
	(void)state;
	struct cfg g;
	assert_int_equal(cfg_init(&g, 3), 0);
	cfg_add_edge(&g, 0, 1, CFG_NORMAL, 1);
	cfg_add_edge(&g, 0, 2, CFG_NORMAL, 0);
	cfg_add_edge(&g, 1, 2, CFG_NORMAL, 1);
	g.b[2].exit = 1;
	assert_int_equal(cfg_add_site(&g, 1, 0), 0);
	assert_int_equal(cfg_finish(&g), 0);
	struct paths ps;
	assert_int_equal(paths_plan(&g, NULL, &ps), 0);
	assert_int_equal(ps.npaths, 2);
	assert_int_equal(ps.ncounters, 1);
	assert_int_equal(ps.counter_edge[0], edge(&ps, 0, 1));
	assert_int_equal(ps.sem[0], 1);
	paths_free(&ps);
	/* nothing allocates: no counter at all */
	g.nsites = 0;
	assert_int_equal(paths_plan(&g, NULL, &ps), 0);
	assert_int_equal(ps.ncounters, 0);
	paths_free(&ps);
	cfg_free(&g);
}

/* The allocation heuristic: of two successors, one that allocates is less
 * likely (javac's "then" part after the test is often a lazy
 * initialization, a verbose message or an error path), unless both
 * allocate. */
static void test_static_allocation_heuristic(void **state)
{
	(void)state;
	struct cfg g;
	/* diamond: 0 -> 1 (falls through) | 0 -> 2 (jumps), both -> 3 */
	assert_int_equal(cfg_init(&g, 4), 0);
	cfg_add_edge(&g, 0, 1, CFG_NORMAL, 1);
	cfg_add_edge(&g, 0, 2, CFG_NORMAL, 0);
	cfg_add_edge(&g, 1, 3, CFG_NORMAL, 0);
	cfg_add_edge(&g, 2, 3, CFG_NORMAL, 1);
	g.b[3].exit = 1;
	assert_int_equal(cfg_add_site(&g, 1, 0), 0);
	assert_int_equal(cfg_finish(&g), 0);
	struct paths ps;
	assert_int_equal(paths_build(&g, NULL, &ps), 0);
	assert_int_equal(ps.block_path[2], ps.block_path[0]); /* hot: around the allocation */
	assert_true(ps.block_path[1] != ps.block_path[0]);
	paths_free(&ps);
	/* both arms allocate: falling through wins again */
	assert_int_equal(cfg_add_site(&g, 2, 1), 0);
	assert_int_equal(cfg_finish(&g), 0);
	assert_int_equal(paths_build(&g, NULL, &ps), 0);
	assert_int_equal(ps.block_path[1], ps.block_path[0]);
	paths_free(&ps);
	cfg_free(&g);
}

/* ---- random CFGs, checked by simulation ---------------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
	return xorshift_below(&rng, n);
}

struct stats {
	uint64_t graphs, walks, cuts, incr, site_incr, extra_counters;
};

static void random_graph(struct cfg *g)
{
	uint32_t nb = 1 + rnd(14);
	assert_int_equal(cfg_init(g, nb), 0);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t nsucc = rnd(4);
		if (b + 1 == nb && nsucc && rnd(2))
			nsucc = 0;
		if (!nsucc) {
			g->b[b].exit = 1;
			g->b[b].throws = rnd(5) == 0;
		}
		for (uint32_t k = 0; k < nsucc; k++) {
			uint32_t t = rnd(nb);
			cfg_add_edge(g, b, t, CFG_NORMAL, t == b + 1);
		}
		if (b > 0 && rnd(10) == 0)
			g->b[b].handler = 1;
		for (uint32_t s = rnd(3); s > 0; s--)
			cfg_add_site(g, b, g->nsites);
	}
	assert_int_equal(cfg_finish(g), 0);
}

/* One random walk from X over start edge x; returns 0 if it did not reach
 * an exit within the step limit. */
static int walk_check(const struct paths *ps, const struct cfg *g, uint32_t x, int32_t *got, int32_t *want,
		      struct stats *st)
{
	memset(got, 0, ps->nsites * sizeof(int32_t));
	memset(want, 0, ps->nsites * sizeof(int32_t));
	uint64_t incr = 0, site_incr = 0;
	uint32_t e = x;
	for (int steps = 0; steps < 300; steps++) {
		const struct pedge *pe = &ps->e[e];
		if (pe->counter) {
			uint32_t k = 0;
			while (ps->counter_edge[k] != e)
				k++;
			for (uint32_t s = 0; s < ps->nsites; s++)
				got[s] += ps->sem[k * ps->nsites + s];
			incr++;
		}
		if (pe->to == PATHS_X) {
			for (uint32_t s = 0; s < ps->nsites; s++)
				assert_int_equal(got[s], want[s]);
			st->walks++;
			st->incr += incr;
			st->site_incr += site_incr;
			return 1;
		}
		/* an exception cutting the walk in pe->to after j of its
		 * allocations: the counters so far plus the correction
		 * phi(b) - (allocations of b not made) equal what happened */
		uint32_t nb_allocs = 0, j;
		for (uint32_t s = 0; s < g->nsites; s++)
			nb_allocs += g->site_block[s] == pe->to;
		j = rnd(nb_allocs + 1);
		for (uint32_t s = 0, seen = 0; s < g->nsites; s++) {
			int in_b = g->site_block[s] == pe->to;
			int made = in_b && seen++ < j;
			int32_t corr = ps->phi[(size_t)pe->to * ps->nsites + s] - (in_b && !made);
			assert_int_equal(got[s] + corr, want[s] + made);
		}
		st->cuts++;
		for (uint32_t s = 0; s < g->nsites; s++)
			if (g->site_block[s] == pe->to) {
				want[s]++;
				site_incr++;
			}
		/* next: a random out-edge of pe->to */
		uint32_t n = 0, pick = PATHS_NONE;
		for (uint32_t i = 0; i < ps->nedges; i++)
			if (ps->e[i].from == pe->to && rnd(++n) == 0)
				pick = i;
		if (pick == PATHS_NONE)
			return 0; /* a block whose only successors were unreachable: cannot happen */
		e = pick;
	}
	return 0;
}

static void test_random_cfgs(void **state)
{
	(void)state;
	struct stats st = { 0 };
	for (int iter = 0; iter < 3000; iter++) {
		struct cfg g;
		random_graph(&g);
		double *freq = NULL;
		if (iter % 2) {
			/* paths_edge_freq's layout; X edges left at 0 */
			freq = calloc(g.nnormal + 2 * (size_t)g.nblocks + 1, sizeof(double));
			for (uint32_t i = 0; i < g.nnormal; i++)
				freq[i] = rnd(100);
		}
		struct paths ps;
		assert_int_equal(paths_plan(&g, freq, &ps), 0);
		st.graphs++;
		/* every edge on exactly one path (checked by paths_build), at
		 * most one counter per path unless a cycle forced another */
		uint32_t counters = 0;
		for (uint32_t i = 0; i < ps.nedges; i++)
			counters += ps.e[i].counter;
		uint32_t designated = 0;
		for (uint32_t p = 0; p < ps.npaths; p++)
			designated += ps.p[p].counter_edge != PATHS_NONE;
		st.extra_counters += counters - designated;
		int32_t *got = malloc((ps.nsites + 1) * sizeof(int32_t)), *want = malloc((ps.nsites + 1) * sizeof(int32_t));
		for (uint32_t x = 0; x < ps.nedges; x++) {
			if (ps.e[x].from != PATHS_X)
				continue;
			for (int w = 0; w < 40; w++)
				walk_check(&ps, &g, x, got, want, &st);
		}
		free(got);
		free(want);
		free(freq);
		paths_free(&ps);
		cfg_free(&g);
	}
	fprintf(stderr, "random CFGs: %lu graphs, %lu walks checked (%lu exception cuts corrected); %lu path-counter increments vs %lu per-site "
			"(%.1f%% fewer); %lu counters beyond one per path\n",
		(unsigned long)st.graphs, (unsigned long)st.walks, (unsigned long)st.cuts, (unsigned long)st.incr, (unsigned long)st.site_incr,
		st.site_incr ? 100.0 * (1.0 - (double)st.incr / (double)st.site_incr) : 0.0,
		(unsigned long)st.extra_counters);
	assert_true(st.walks > 50000);
	assert_true(st.cuts > st.walks);
}

/* Edge frequency in sink->freq's layout (instrument.h), computed here. */
static double layout_freq(const struct cfg *g, const struct pedge *e, const double *freq)
{
	if (e->from == PATHS_X)
		return freq[g->nnormal + e->to];
	if (e->to == PATHS_X)
		return freq[g->nnormal + g->nblocks + e->from];
	return freq[e->cfg_edge];
}

static int key_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* The counters' edges of a plan as sorted (from, to, cfg edge) triples
 * into k[3 * ncounters]. */
static void counter_keys(const struct paths *ps, uint32_t *k)
{
	for (uint32_t j = 0; j < ps->ncounters; j++) {
		const struct pedge *e = &ps->e[ps->counter_edge[j]];
		k[3 * j] = e->from;
		k[3 * j + 1] = e->to;
		k[3 * j + 2] = e->cfg_edge;
	}
	qsort(k, ps->ncounters, 3 * sizeof(uint32_t), key_cmp);
}

/* The increments ps's counters execute at frequencies f, and those of one
 * counter per site (each site's block entered: its in-edges, its X edge). */
static double paths_cost_at(const struct cfg *g, const struct paths *ps, const double *f)
{
	double cost = 0;
	for (uint32_t j = 0; j < ps->ncounters; j++)
		cost += layout_freq(g, &ps->e[ps->counter_edge[j]], f);
	return cost;
}

static double sites_cost_at(const struct cfg *g, const double *f)
{
	double cost = 0;
	for (uint32_t s = 0; s < g->nsites; s++) {
		uint32_t b = g->site_block[s];
		cost += f[g->nnormal + b];
		for (uint32_t i = 0; i < g->nnormal; i++)
			cost += g->e[i].to == b ? f[i] : 0;
	}
	return cost;
}

/* instr_plan_unchanged (hot=N keeps a version whose plan measured
 * frequencies would not change): for random graphs planned from
 * frequencies A (or the static heuristics), and measured frequencies B
 * (A scaled, A perturbed, or new), it answers "unchanged" exactly when the
 * plan from B puts its counters on the same edges as the plan from A and
 * one counter per site would not execute fewer increments at B (both
 * computed here from paths_plan's output and the frequency layout). */
static void test_plan_unchanged(void **state)
{
	(void)state;
	uint32_t same = 0, changed = 0, per_site = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct cfg g;
		random_graph(&g);
		size_t nf = g.nnormal + 2 * (size_t)g.nblocks + 1;
		double *fa = iter % 4 ? calloc(nf, sizeof(double)) : NULL, *fb = calloc(nf, sizeof(double));
		assert_non_null(fb);
		for (size_t i = 0; fa && i < g.nnormal; i++)
			fa[i] = rnd(100);
		for (size_t i = 0; i < nf; i++) {
			uint32_t how = (uint32_t)iter % 3;
			double a = fa ? fa[i] : 0;
			fb[i] = how == 0 && fa ? 3 * a : how == 1 && fa ? a + (rnd(4) == 0 ? rnd(50) : 0) : rnd(100);
		}
		fb[g.nnormal] = 1 + rnd(10); /* the entry */
		struct paths pa, pb;
		assert_int_equal(paths_plan(&g, fa, &pa), 0);
		assert_int_equal(paths_plan(&g, fb, &pb), 0);
		uint32_t *cnt = malloc((pa.nedges + 1) * sizeof(uint32_t));
		uint32_t *ka = malloc((3 * pa.ncounters + 1) * sizeof(uint32_t));
		uint32_t *kb = malloc((3 * pb.ncounters + 1) * sizeof(uint32_t));
		assert_true(cnt && ka && kb);
		for (uint32_t i = 0; i < pa.nedges; i++)
			cnt[i] = pa.e[i].counter ? i : UINT32_MAX;
		counter_keys(&pa, ka);
		counter_keys(&pb, kb);
		int edges_same = pa.ncounters == pb.ncounters && !memcmp(ka, kb, 3 * pa.ncounters * sizeof(uint32_t));
		double pcost = paths_cost_at(&g, &pb, fb), scost = sites_cost_at(&g, fb);
		int want = edges_same && !(pcost > scost);
		assert_int_equal(instr_plan_unchanged(&g, UINT32_MAX, fb, pa.nedges, pa.e, cnt, NULL, 0), want);
		same += want;
		changed += !edges_same;
		per_site += edges_same && pcost > scost;
		free(cnt);
		free(ka);
		free(kb);
		free(fa);
		free(fb);
		paths_free(&pa);
		paths_free(&pb);
		cfg_free(&g);
	}
	fprintf(stderr, "plans: %u unchanged, %u with other counters, %u cheaper per site\n", same, changed, per_site);
	assert_true(same > 300 && changed > 100 && per_site > 0);
}

/* The same with a counted loop's back edge forced (loops=on, graph()'s
 * latch pairs): a version planned with the counter of a loop path forced
 * onto the edge that closes it is unchanged at its own frequencies scaled
 * (unless one counter per site would be cheaper, computed as above) when
 * told that edge, and changed when not told, wherever the least-shared
 * rule (paths_plan) puts its counters elsewhere. */
static void test_plan_unchanged_forced(void **state)
{
	(void)state;
	uint32_t tried = 0, differ = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct cfg g;
		random_graph(&g);
		size_t nf = g.nnormal + 2 * (size_t)g.nblocks + 1;
		double *fa = calloc(nf, sizeof(double)), *fb = calloc(nf, sizeof(double));
		assert_true(fa && fb);
		for (size_t i = 0; i < g.nnormal; i++)
			fa[i] = rnd(100);
		fa[g.nnormal] = 1 + rnd(10);
		for (size_t i = 0; i < nf; i++)
			fb[i] = 3 * fa[i];
		struct paths pf;
		assert_int_equal(paths_build(&g, fa, &pf), 0);
		uint32_t closing = PATHS_NONE;
		for (uint32_t p = 0; p < pf.npaths && closing == PATHS_NONE; p++)
			if (pf.p[p].split_from != PATHS_NONE && pf.p[p].n >= 2)
				closing = pf.edge_list[pf.p[p].first + pf.p[p].n - 1];
		if (closing == PATHS_NONE || pf.e[closing].from == PATHS_X || pf.e[closing].to == PATHS_X) {
			paths_free(&pf);
			cfg_free(&g);
			free(fa);
			free(fb);
			continue;
		}
		uint32_t *forced = malloc((pf.npaths + 1) * sizeof(uint32_t)), *cnt = malloc((pf.nedges + 1) * sizeof(uint32_t));
		assert_true(forced && cnt);
		for (uint32_t p = 0; p < pf.npaths; p++)
			forced[p] = PATHS_NONE;
		forced[pf.e[closing].path] = closing;
		assert_int_equal(paths_place(&pf, &g, forced), 0);
		assert_int_equal(paths_semantics(&pf, &g), 0);
		for (uint32_t i = 0; i < pf.nedges; i++)
			cnt[i] = pf.e[i].counter ? i : UINT32_MAX;
		double pcost = paths_cost_at(&g, &pf, fb), scost = sites_cost_at(&g, fb);
		uint32_t latch[2] = { pf.e[closing].from, pf.e[closing].to };
		assert_int_equal(instr_plan_unchanged(&g, UINT32_MAX, fb, pf.nedges, pf.e, cnt, latch, 1), !(pcost > scost));
		struct paths pn;
		assert_int_equal(paths_plan(&g, fb, &pn), 0);
		uint32_t *ka = malloc((3 * pf.ncounters + 1) * sizeof(uint32_t)), *kb = malloc((3 * pn.ncounters + 1) * sizeof(uint32_t));
		assert_true(ka && kb);
		counter_keys(&pf, ka);
		counter_keys(&pn, kb);
		if (pf.ncounters != pn.ncounters || memcmp(ka, kb, 3 * pf.ncounters * sizeof(uint32_t))) {
			assert_int_equal(instr_plan_unchanged(&g, UINT32_MAX, fb, pf.nedges, pf.e, cnt, NULL, 0), 0);
			differ++;
		}
		tried++;
		free(ka);
		free(kb);
		free(forced);
		free(cnt);
		free(fa);
		free(fb);
		paths_free(&pf);
		paths_free(&pn);
		cfg_free(&g);
	}
	fprintf(stderr, "forced back edges: %u plans, %u of them other than the least-shared rule's\n", tried, differ);
	assert_true(tried > 100 && differ > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure2_loop_split),
		cmocka_unit_test(test_figure2_static_heuristics),
		cmocka_unit_test(test_figure3_corrections),
		cmocka_unit_test(test_figure4_loop),
		cmocka_unit_test(test_empty_semantics_dropped),
		cmocka_unit_test(test_static_allocation_heuristic),
		cmocka_unit_test(test_random_cfgs),
		cmocka_unit_test(test_plan_unchanged),
		cmocka_unit_test(test_plan_unchanged_forced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

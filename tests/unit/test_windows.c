/* test_windows.c - the suspicious-time-window detectors (analyses/windows.h)
 * on hand-made series.  Each expected window follows from the construction
 * and the paper's definitions (worked out in the comments), or from an
 * independent brute-force computation in this file (narrowing over all
 * pairs, regression by the two-pass formula over all windows). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyses/windows.h"

#define MAXP 2048
#define SEC 1000000000ull

/* A point series with t = i seconds (or step_ns apart), one GC per point. */
struct series {
	uint64_t t[MAXP], v[MAXP];
	uint32_t gci[MAXP];
	struct win_points p;
};

static void series_init(struct series *s, const uint64_t *v, uint32_t n, uint64_t step_ns)
{
	assert_true(n <= MAXP);
	for (uint32_t i = 0; i < n; i++) {
		s->t[i] = (i + 1) * step_ns;
		s->v[i] = v[i];
		s->gci[i] = i;
	}
	s->p = (struct win_points){ .n = n, .t_ns = s->t, .v = s->v, .gci = s->gci, .ngcs = n };
}

static struct win_params defaults(void)
{
	struct win_params w;
	win_params_default(&w);
	return w;
}

static void leak_of(const struct series *s, struct win_result *r)
{
	struct win_params w = defaults();
	assert_int_equal(win_leak(&s->p, &w, r), 0);
}

static void regression_of(const struct series *s, struct win_result *r)
{
	struct win_params w = defaults();
	assert_int_equal(win_leak_regression(&s->p, &w, r), 0);
}

/* ---- the paper's defaults --------------------------------------------- */

static void test_defaults_are_the_papers(void **state)
{
	(void)state;
	struct win_params w = defaults();
	assert_int_equal(w.leak_min_gcs_pct, 10);
	assert_int_equal(w.leak_keep_pct, 75);
	assert_int_equal(w.narrow_min_pct, 10);
	assert_int_equal(w.narrow_max_pct, 50);
	assert_int_equal(w.regression_start_pct, 10);
	assert_int_equal(w.gc_window_min, 5);
	assert_int_equal(w.gc_window_max, 50);
	assert_int_equal(w.gc_overhead_min_pct, 10);
	assert_int_equal(w.churn_min_bytes_per_s, 32ull << 20);
	assert_int_equal(w.reachable_every, 1);
}

/* ---- the growth condition, point by point ------------------------------ */

/* 100 200 300 225: 225 < 300 but > 100 (first) and 225 = 75% of 300 (max):
 * kept.  A 5th point 224 would be < 75% of 300. */
static void test_growth_condition_75_percent_exactly(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[] = { 100, 200, 300, 225 };
	series_init(&s, v, 4, SEC);
	leak_of(&s, &r);
	assert_true(r.found);
	assert_int_equal(r.first, 0);
	assert_int_equal(r.last, 3);
	assert_int_equal(r.growth_bytes, 125);

	uint64_t v2[] = { 100, 200, 300, 224, 250 };
	series_init(&s, v2, 5, SEC);
	leak_of(&s, &r);
	/* 224 restarts the window; 250 > 224: window [3, 4], 2 of 5 GCs >= 10% */
	assert_true(r.found);
	assert_int_equal(r.first, 3);
	assert_int_equal(r.last, 4);
}

/* A point equal to the window's first point fails "greater than the first
 * point" even when it is above 75% of the maximum: 100 110 100 -> restart
 * at the third point, which is the last: no growth at the end. */
static void test_growth_condition_not_above_first(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[] = { 100, 110, 100 };
	series_init(&s, v, 3, SEC);
	leak_of(&s, &r);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "no growth at the end"));
}

/* ---- Figure 2: a 50% drop restarts the window, a small drop does not --- */

/* 40 points 0.5 s apart: +300 per point, a 50% drop at point 9, 10% drops
 * at points 19 and 29 (the shape of `heapfs synth leakdrops`).  At point 9
 * the value is above the first point but below 75% of the maximum: the
 * window restarts there.  The 10% drops stay above 75% of the maximum and
 * above the window's first point: tolerated.  Window: 9..39. */
static void test_figure2_drop_restarts(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[40], x = 1000;
	for (int i = 0; i < 40; i++) {
		if (i == 9)
			x /= 2;
		else if (i == 19 || i == 29)
			x -= x / 10;
		else
			x += 300;
		v[i] = x;
	}
	series_init(&s, v, 40, SEC / 2);
	leak_of(&s, &r);
	assert_true(r.found);
	assert_int_equal(r.first, 9);
	assert_int_equal(r.last, 39);
	assert_int_equal(r.start_gci, 9);
	assert_int_equal(r.end_gci, 39);
	assert_int_equal(r.points, 31);
	assert_int_equal(r.growth_bytes, (int64_t)(v[39] - v[9]));
	assert_true(fabs(r.per_s - (double)(v[39] - v[9]) / 15.0) < 1e-6);

	/* leak-narrow lies inside and, with all growing steps equal (+300 per
	 * 0.5 s), the first subwindow of the minimum size 4 (ceil(10% of 31))
	 * that avoids the drops: points 9..12. */
	struct win_result n;
	struct win_params w = defaults();
	assert_int_equal(win_leak_narrow(&s.p, &r, &w, &n), 0);
	assert_true(n.found);
	assert_int_equal(n.first, 9);
	assert_int_equal(n.last, 12);
	assert_true(fabs(n.per_s - 600.0) < 1e-6);
}

/* ---- Figure 1: the regression picks 1200..1500 ms ---------------------- */

/* 16 points, 100 ms apart at 0..1500 ms.  The regression starts with the
 * last 2 points (ceil(10% of 16)); slopes over [s..15] in bytes/ms,
 * computed by hand with the two-pass formula: s=14: 0.40, 13: 0.40,
 * 12: 0.64, 11: 0.42, 10: 0.33, then lower.  Greatest: s=12 (line E),
 * 1200..1500 ms. */
static void test_figure1_regression(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[] = { 300, 320, 310, 330, 320, 340, 330, 350, 340, 360, 350, 370, 300, 420, 460, 500 };
	series_init(&s, v, 16, SEC / 10);
	for (int i = 0; i < 16; i++)
		s.t[i] = (uint64_t)i * (SEC / 10) + 1; /* 0..1500 ms (+1 ns: t > 0 not needed) */
	regression_of(&s, &r);
	assert_true(r.found);
	assert_int_equal(r.first, 12);
	assert_int_equal(r.last, 15);
	assert_int_equal(r.end_ns - r.start_ns, 300 * 1000000ull);
	assert_true(fabs(r.per_s - 640.0) < 1e-6); /* 0.64 bytes/ms */
}

/* ---- Figure 3: six memory evolutions, heuristic vs regression ---------- */

/* Independent: the regression slope over points [s..e] by the two-pass
 * formula, and the paper's search with the documented tie rule. */
static double ref_slope(const struct series *s, uint32_t a, uint32_t b)
{
	double mt = 0, mv = 0, n = b - a + 1, stt = 0, stv = 0;
	for (uint32_t i = a; i <= b; i++) {
		mt += (double)s->t[i] / 1e9;
		mv += (double)s->v[i];
	}
	mt /= n;
	mv /= n;
	for (uint32_t i = a; i <= b; i++) {
		double dt = (double)s->t[i] / 1e9 - mt;
		stt += dt * dt;
		stv += dt * ((double)s->v[i] - mv);
	}
	return stv / stt;
}

static uint32_t ref_regression_first(const struct series *s)
{
	uint32_t n = s->p.n, k0 = (n + 9) / 10 < 2 ? 2 : (n + 9) / 10, best_first = n - k0;
	double best = ref_slope(s, n - k0, n - 1);
	for (uint32_t a = n - k0; a-- > 0;) {
		double sl = ref_slope(s, a, n - 1);
		if (sl >= best - 1e-7 * fmax(fabs(sl), fabs(best))) {
			best = fmax(best, sl);
			best_first = a;
		}
	}
	return best_first;
}

enum { N3 = 100 };

/* (a) growth from the start, concave (300 sqrt(i)): no point fails the
 * growth condition -> heuristic 0..99; the regression slope over [s..99]
 * rises as s moves left (a concave curve is steeper early) -> 0..99. */
static void shape_a(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = 1000 + (uint64_t)(300 * sqrt(i));
}

/* (b) flat 5000 until 49, then +40 per point: every flat point equals its
 * predecessor and the window's first point -> restart; window 49..99.
 * Regression: all windows inside the linear part are equally steep, the
 * longest (49..99) wins; flat points before 49 lie above the line's
 * extension and flatten it -> 49..99. */
static void shape_b(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = i < 50 ? 5000 : 5000 + 40 * (uint64_t)(i - 49);
}

/* (c) flat 4000 with a downward spike (500) at 68, a dip to 2500 at 70,
 * then +40 per point.  Heuristic: 69 (4000) > 500, 70 (2500) is below 75%
 * of 4000 -> restart at 70; window 70..99.  Regression: the spike at 68
 * is a low point on the left, including it steepens the line -> 68..99
 * (the "presumably irrelevant spike"). */
static void shape_c(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = i < 70 ? (i == 68 ? 500 : 4000) : 2500 + 40 * (uint64_t)(i - 70);
}

/* (d) steep growth (+100) to 6900 at 59, a drop to 4000 at 60 (42%), then
 * slow growth (+20).  Heuristic: 60 restarts, window 60..99.  Regression:
 * the whole run's trend is steeper than the final slow growth -> 0..99. */
static void shape_d(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = i < 60 ? 1000 + 100 * (uint64_t)i : 4000 + 20 * (uint64_t)(i - 60);
}

/* (e) a rising sawtooth (drops of 2700 every 10 points, more than 25% of
 * the peak), then from 70 on slow steady growth: the last sawtooth drop is
 * at 70 -> heuristic 70..99; regression: the overall rise is steeper than
 * the final growth -> 0..99. */
static void shape_e(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = i < 70 ? 2000 + 40 * (uint64_t)i + (uint64_t)(i % 10) * 300
			      : 2000 + 40 * 70 + 20 * (uint64_t)(i - 70);
}

/* (f) a step from 1000 to 5000 at 30, a plateau, a drop to 3500 at 69
 * (below 75% of 5000), then +10 per point.  Heuristic 69..99; regression
 * 0..99 (the early step dominates the trend). */
static void shape_f(uint64_t *v)
{
	for (int i = 0; i < N3; i++)
		v[i] = i < 30 ? 1000 : i < 69 ? 5000 : 3500 + 10 * (uint64_t)(i - 69);
}

static void check_shape(void (*make)(uint64_t *), uint32_t heur_first, uint32_t reg_first)
{
	struct series s;
	struct win_result h, r;
	uint64_t v[N3];
	make(v);
	series_init(&s, v, N3, SEC);
	leak_of(&s, &h);
	regression_of(&s, &r);
	assert_true(h.found);
	assert_int_equal(h.first, heur_first);
	assert_int_equal(h.last, N3 - 1);
	assert_true(r.found);
	assert_int_equal(r.first, reg_first);
	assert_int_equal(r.last, N3 - 1);
	assert_int_equal(ref_regression_first(&s), reg_first);
}

static void test_figure3_top_same_window(void **state)
{
	(void)state;
	check_shape(shape_a, 0, 0);
	check_shape(shape_b, 49, 49);
}

static void test_figure3_top_spike(void **state)
{
	(void)state;
	check_shape(shape_c, 70, 68);
}

static void test_figure3_bottom_whole_run(void **state)
{
	(void)state;
	check_shape(shape_d, 60, 0);
	check_shape(shape_e, 70, 0);
	check_shape(shape_f, 69, 0);
}

/* ---- not found, and why ------------------------------------------------ */

static void test_no_growth_constant(void **state)
{
	(void)state;
	struct series s;
	struct win_result r, n, g;
	struct win_params w = defaults();
	uint64_t v[50];
	for (int i = 0; i < 50; i++)
		v[i] = 7777;
	series_init(&s, v, 50, SEC);
	leak_of(&s, &r);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "no growth at the end"));
	assert_int_equal(win_leak_narrow(&s.p, &r, &w, &n), 0);
	assert_false(n.found);
	regression_of(&s, &g);
	assert_false(g.found);
	assert_non_null(strstr(g.reason, "not positive"));
}

/* Falling for 95 points, rising over the last 5: 5 of 100 GCs < 10%. */
static void test_growth_too_short(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[100];
	for (int i = 0; i < 100; i++)
		v[i] = i < 95 ? 100000 - 100 * (uint64_t)i : 100000 + 100 * (uint64_t)i;
	series_init(&s, v, 100, SEC);
	leak_of(&s, &r);
	assert_false(r.found);
	assert_int_equal(r.first, 94);  /* 95 rises above 94: window 94..99 */
	assert_non_null(strstr(r.reason, "fewer than 10% of all 100 GCs"));
	/* six points of 100 GCs < 10 */
	assert_non_null(strstr(r.reason, "covers 6 GCs"));
}

static void test_no_points(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[1] = { 5 };
	series_init(&s, v, 0, SEC);
	leak_of(&s, &r);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "no data points"));
	series_init(&s, v, 1, SEC);
	leak_of(&s, &r);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "one data point"));
}

/* Sampled points: 10 points at every 10th GC of 100; growth over the last
 * 2 points = GCs 80..90, 11 GCs >= 10% of 100. */
static void test_sampled_points_cover_gcs(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[10] = { 900, 800, 700, 600, 500, 400, 300, 200, 250, 260 };
	series_init(&s, v, 10, SEC);
	for (int i = 0; i < 10; i++) {
		s.gci[i] = (uint32_t)i * 10;
		s.t[i] = (uint64_t)(i * 10 + 1) * SEC;
	}
	s.p.ngcs = 100;
	leak_of(&s, &r);
	assert_true(r.found);
	assert_int_equal(r.first, 7);
	assert_int_equal(r.start_gci, 70);
	assert_int_equal(r.end_gci, 90);
}

/* Sampled regression: 10 points at GCs 0, 10, ..., 90 of 100 GCs.  The
 * first window covers the last 10% of the GCs (90..99): one point, so the
 * two last points (80, 90).  The values fall, then rise steeply over the
 * last two points only: the window of the last two points is the
 * steepest (slope 300/10 s = 30 B/s; one more point, 200 at 70 s, gives
 * the line through (70,200),(80,300),(90,600): slope 20 B/s). */
static void test_regression_sampled_start_by_gcs(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[10] = { 900, 800, 700, 600, 500, 400, 300, 200, 300, 600 };
	series_init(&s, v, 10, SEC);
	for (int i = 0; i < 10; i++) {
		s.gci[i] = (uint32_t)i * 10;
		s.t[i] = (uint64_t)(i * 10) * SEC + 1;
	}
	s.p.ngcs = 100;
	regression_of(&s, &r);
	assert_true(r.found);
	assert_int_equal(r.first, 8);
	assert_int_equal(r.last, 9);
	assert_true(fabs(r.per_s - 30.0) < 1e-9);
	assert_non_null(strstr(r.reason, "last 2 points"));
	/* regression_start_pct=30: GCs 70..99 hold 3 points, the first window
	 * is 7..9 (slope 20 B/s), and longer windows are flatter */
	struct win_params w = defaults();
	w.regression_start_pct = 30;
	assert_int_equal(win_leak_regression(&s.p, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.first, 7);
	assert_true(fabs(r.per_s - 20.0) < 1e-9);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct series s;
	struct win_result r;
	uint64_t v[3] = { 1, 2, 3 };
	series_init(&s, v, 3, SEC);
	s.t[2] = s.t[1]; /* not strictly increasing */
	struct win_params w = defaults();
	assert_int_equal(win_leak(&s.p, &w, &r), -EINVAL);
	assert_int_equal(win_leak_regression(&s.p, &w, &r), -EINVAL);
}

/* ---- leak-narrow ------------------------------------------------------- */

/* 20 points growing by 10 per second except 5->6 and 6->7 (+100 each).
 * Subwindows of 2..10 points (10%..50% of 20, at least 2).  Quickest
 * growth: 100/s, reached by 5..6, 5..7 and 6..7; the earliest start, then
 * the shortest: 5..6. */
static void test_narrow_steep_part(void **state)
{
	(void)state;
	struct series s;
	struct win_result l, n;
	struct win_params w = defaults();
	uint64_t v[20], x = 1000;
	for (int i = 0; i < 20; i++) {
		v[i] = x;
		x += (i == 5 || i == 6) ? 100 : 10;
	}
	series_init(&s, v, 20, SEC);
	leak_of(&s, &l);
	assert_true(l.found);
	assert_int_equal(l.first, 0);
	assert_int_equal(win_leak_narrow(&s.p, &l, &w, &n), 0);
	assert_true(n.found);
	assert_int_equal(n.first, 5);
	assert_int_equal(n.last, 6);
	assert_true(fabs(n.per_s - 100.0) < 1e-9);
}

/* Brute force over all pairs, exact comparison, same tie rule (greater
 * slope; equal: earlier start, then earlier end). */
static void ref_narrow(const struct series *s, uint32_t a, uint32_t b, uint32_t lo, uint32_t hi,
		       uint32_t *bs, uint32_t *be)
{
	*bs = UINT32_MAX;
	for (uint32_t i = a; i <= b; i++) {
		for (uint32_t e = i + lo - 1; e <= b && e - i + 1 <= hi; e++) {
			if (*bs == UINT32_MAX) {
				*bs = i;
				*be = e;
				continue;
			}
			__int128 g1 = (__int128)s->v[e] - (__int128)s->v[i];
			__int128 d1 = (__int128)s->t[e] - (__int128)s->t[i];
			__int128 g2 = (__int128)s->v[*be] - (__int128)s->v[*bs];
			__int128 d2 = (__int128)s->t[*be] - (__int128)s->t[*bs];
			if (g1 * d2 > g2 * d1) {
				*bs = i;
				*be = e;
			}
		}
	}
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Random growing-ish series with irregular times and plateaus (many ties):
 * the hull algorithm must agree with the brute force on every one. */
static void test_narrow_matches_brute_force(void **state)
{
	(void)state;
	static struct series s;
	uint64_t seed = 42;
	for (int round = 0; round < 400; round++) {
		uint32_t n = 2 + (uint32_t)(lcg(&seed) % 300);
		uint64_t v[MAXP], t = 0, x = 1000;
		int mode = round % 4;
		for (uint32_t i = 0; i < n; i++) {
			x += mode == 0 ? lcg(&seed) % 100 : mode == 1 ? (lcg(&seed) % 3) * 50
			     : lcg(&seed) % 200;
			if (mode == 2 && x > 60)
				x -= lcg(&seed) % 60; /* may fall */
			v[i] = x;
		}
		series_init(&s, v, n, SEC);
		for (uint32_t i = 0; i < n; i++) {
			t += mode == 3 ? SEC : 1 + lcg(&seed) % (3 * SEC);
			s.t[i] = t;
		}
		struct win_params w = defaults();
		w.narrow_min_pct = 1 + (uint32_t)(lcg(&seed) % 30);
		w.narrow_max_pct = w.narrow_min_pct + (uint32_t)(lcg(&seed) % 70);
		struct win_result l = { .found = 1, .first = 0, .last = n - 1 }, r;
		if (n >= 8 && round % 3 == 0) { /* a window inside the series */
			l.first = (uint32_t)(lcg(&seed) % (n / 2));
			l.last = n - 1 - (uint32_t)(lcg(&seed) % (n / 4));
		}
		if (l.last <= l.first)
			continue;
		assert_int_equal(win_leak_narrow(&s.p, &l, &w, &r), 0);
		uint32_t m = l.last - l.first + 1;
		uint32_t lo = (m * w.narrow_min_pct + 99) / 100, hi = m * w.narrow_max_pct / 100;
		if (lo < 2)
			lo = 2;
		if (hi > m)
			hi = m;
		if (hi < lo)
			hi = lo;
		uint32_t bs, be;
		ref_narrow(&s, l.first, l.last, lo, hi, &bs, &be);
		assert_int_equal(r.first, bs);
		assert_int_equal(r.last, be);
	}
}

/* Linear time: 200000 points, a leak window of all of them (hull blocks of
 * 80000) finish quickly; the result is the steepest step region. */
static void test_narrow_large(void **state)
{
	(void)state;
	enum { N = 200000 };
	uint64_t *t = malloc(N * sizeof *t), *v = malloc(N * sizeof *v);
	uint32_t *gci = malloc(N * sizeof *gci);
	assert_non_null(t);
	assert_non_null(v);
	assert_non_null(gci);
	for (uint32_t i = 0; i < N; i++) {
		t[i] = (uint64_t)(i + 1) * SEC;
		/* +1 per second, +3 per second over 100000..130000 */
		v[i] = 1000000 + i + (i > 100000 ? 2 * ((i < 130000 ? i : 130000) - 100000) : 0);
		gci[i] = i;
	}
	struct win_points p = { .n = N, .t_ns = t, .v = v, .gci = gci, .ngcs = N };
	struct win_params w = defaults();
	struct win_result l, n;
	assert_int_equal(win_leak(&p, &w, &l), 0);
	assert_true(l.found);
	assert_int_equal(l.first, 0);
	assert_int_equal(win_leak_narrow(&p, &l, &w, &n), 0);
	/* minimum 20000 points: the earliest 20000-point window inside the
	 * steep region 100000..130000 starts at 100000 */
	assert_true(n.found);
	assert_int_equal(n.first, 100000);
	assert_int_equal(n.last, 119999);
	assert_true(fabs(n.per_s - 3.0) < 1e-9);
	free(t);
	free(v);
	free(gci);
}

/* ---- gc-overhead -------------------------------------------------------- */

struct gcs {
	uint64_t start[256], end[256], freed[256];
	struct win_gcs g;
};

/* n GCs: GC k starts interval_ms after the previous end (after origin 0
 * for the first) and lasts pause_ms; hot GCs [h0, h1] use the hot values. */
static void gcs_init(struct gcs *g, uint32_t n, uint32_t h0, uint32_t h1, uint64_t calm_iv,
		     uint64_t calm_pause, uint64_t hot_iv, uint64_t hot_pause)
{
	uint64_t ms = 1000000, prev = 0;
	for (uint32_t k = 0; k < n; k++) {
		int hot = k >= h0 && k <= h1;
		g->start[k] = prev + (hot ? hot_iv : calm_iv) * ms;
		g->end[k] = g->start[k] + (hot ? hot_pause : calm_pause) * ms;
		g->freed[k] = hot ? 3000000 : 1000000;
		prev = g->end[k];
	}
	g->g = (struct win_gcs){ .n = n, .start_ns = g->start, .end_ns = g->end, .freed = g->freed,
				 .origin_ns = 0 };
}

/* 20 GCs 1 s apart with 10 ms pauses; GCs 7..12 start 100 ms after the
 * previous end and last 60 ms: 60/160 = 37.5% in GC over each of them.
 * Windows of 5..50 GCs: the best is exactly 7..12, from the end of GC 6
 * to the end of GC 12 (adding a calm GC adds 1 s with 10 ms of GC). */
static void test_gc_overhead_hotspot(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 20, 7, 12, 1000, 10, 100, 60);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.start_gci, 7);
	assert_int_equal(r.end_gci, 12);
	assert_int_equal(r.start_ns, g.end[6]);
	assert_int_equal(r.end_ns, g.end[12]);
	assert_int_equal(r.gc_ns, 6 * 60 * 1000000ull);
	assert_true(fabs(r.per_s - 0.375) < 1e-12);
}

/* A uniform hotspot of 10 GCs: every window inside it has the same share;
 * the tie goes to the most GCs: exactly the 10 GCs 5..14. */
static void test_gc_overhead_tie_longest(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 30, 5, 14, 1000, 10, 20, 80);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.start_gci, 5);
	assert_int_equal(r.end_gci, 14);
	assert_true(fabs(r.per_s - 0.8) < 1e-12);
}

/* The hotspot at the very start: the window starts at the origin. */
static void test_gc_overhead_from_origin(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 20, 0, 5, 1000, 10, 100, 60);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.start_gci, 0);
	assert_int_equal(r.end_gci, 5);
	assert_int_equal(r.start_ns, 0);
}

/* 1% everywhere: the best window misses 10%; reason names the share. */
static void test_gc_overhead_below_threshold(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 20, 99, 99, 990, 10, 0, 0);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_false(r.found);
	assert_true(r.have_candidate);
	assert_non_null(strstr(r.reason, "1.0% in GC, below the 10% threshold"));
	/* the same with the threshold lowered to 1% is found */
	w.gc_overhead_min_pct = 1;
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_true(r.found);
}

static void test_gc_overhead_too_few_gcs(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 4, 0, 3, 10, 10, 10, 10);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "fewer than the 5"));
}

/* The window bound: a hotspot of 80 GCs, max 50: a 50-GC window. */
static void test_gc_overhead_max_window(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 120, 20, 99, 1000, 10, 20, 80);
	assert_int_equal(win_gc_overhead(&g.g, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.end_gci - r.start_gci + 1, 50);
	assert_true(r.start_gci >= 20 && r.end_gci <= 99);
	assert_int_equal(r.start_gci, 20); /* equal shares: the earliest */
}

/* ---- churn ---------------------------------------------------------------- */

/* 30 GCs; calm: 1 MB freed per 1.005 s; churn GCs 10..19: 3 MB per 52 ms
 * (57.7 MB/s).  The best window is the churn phase exactly; the calm phase
 * (~1 MB/s) misses the 32 MiB/s threshold. */
static void test_churn_phase(void **state)
{
	(void)state;
	struct gcs g;
	struct win_result r;
	struct win_params w = defaults();
	gcs_init(&g, 30, 10, 19, 1000, 5, 50, 2);
	assert_int_equal(win_churn(&g.g, &w, &r), 0);
	assert_true(r.found);
	assert_int_equal(r.start_gci, 10);
	assert_int_equal(r.end_gci, 19);
	assert_int_equal(r.freed_bytes, 30000000);
	assert_true(fabs(r.per_s - 30000000.0 / 0.520) < 1e-3);

	gcs_init(&g, 30, 99, 99, 1000, 5, 50, 2);
	assert_int_equal(win_churn(&g.g, &w, &r), 0);
	assert_false(r.found);
	assert_non_null(strstr(r.reason, "below the 33554432 bytes/s threshold"));
}

/* Random GC series against an independent brute force over every window
 * (every start: the origin or a GC end; every end: a GC end; min..max
 * GCs): the detector's window must have the best ratio, compared exactly
 * (which of several equally good windows it keeps is the tie rule, tested
 * above). */
static void brute_best(const struct win_gcs *g, int freed, uint32_t min, uint32_t max,
		       unsigned __int128 *num, unsigned __int128 *den)
{
	*num = 0;
	*den = 1;
	for (uint32_t a = 0; a < g->n; a++) {          /* first GC in the window */
		uint64_t from = a ? g->end_ns[a - 1] : g->origin_ns;
		for (uint32_t b = a + min - 1; b < g->n && b - a + 1 <= max; b++) {
			uint64_t sum = 0;
			for (uint32_t k = a; k <= b; k++)
				sum += freed ? g->freed[k] : g->end_ns[k] - g->start_ns[k];
			uint64_t dur = g->end_ns[b] - from;
			if ((unsigned __int128)sum * *den > *num * dur) {
				*num = sum;
				*den = dur;
			}
		}
	}
}

static void test_gc_windows_match_brute_force(void **state)
{
	(void)state;
	static struct gcs g;
	uint64_t seed = 7;
	for (int round = 0; round < 300; round++) {
		uint32_t n = 1 + (uint32_t)(lcg(&seed) % 120), prev = 0;
		for (uint32_t k = 0; k < n; k++) {
			g.start[k] = prev + 1 + lcg(&seed) % 1000;
			g.end[k] = g.start[k] + lcg(&seed) % 300;
			g.freed[k] = lcg(&seed) % 5000000;
			prev = (uint32_t)g.end[k];
		}
		g.g = (struct win_gcs){ .n = n, .start_ns = g.start, .end_ns = g.end, .freed = g.freed,
					.origin_ns = 0 };
		struct win_params w = defaults();
		w.gc_window_min = w.churn_window_min = 1 + (uint32_t)(lcg(&seed) % 8);
		w.gc_window_max = w.churn_window_max = w.gc_window_min + (uint32_t)(lcg(&seed) % 30);
		w.gc_overhead_min_pct = 0;
		w.churn_min_bytes_per_s = 0;
		for (int freed = 0; freed < 2; freed++) {
			struct win_result r;
			int rc = freed ? win_churn(&g.g, &w, &r) : win_gc_overhead(&g.g, &w, &r);
			assert_int_equal(rc, 0);
			unsigned __int128 num, den;
			brute_best(&g.g, freed, w.gc_window_min, w.gc_window_max, &num, &den);
			if (n < w.gc_window_min) {
				assert_false(r.found);
				continue;
			}
			assert_true(r.found);
			uint64_t got = freed ? r.freed_bytes : r.gc_ns, dur = r.end_ns - r.start_ns;
			uint32_t ngc = r.end_gci - r.start_gci + 1;
			assert_true(ngc >= w.gc_window_min && ngc <= w.gc_window_max);
			assert_true((unsigned __int128)got * den == num * dur);
		}
	}
}

/* The program's own time: what the recorder took before each GC comes
 * off that GC's times and every later one; a figure larger than its gap
 * keeps 1/20 of the gap; non-increasing times are refused. */
static void test_program_time(void **st)
{
	(void)st;
	/* origin 100; GCs [200,210] [400,420] [1000,1010] */
	const uint64_t start[] = { 200, 400, 1000 }, end[] = { 210, 420, 1010 };
	const uint64_t taken[] = { 50, 1000, 80 }; /* the second: more than its gap of 190 */
	uint64_t s2[3], e2[3], removed;
	assert_int_equal(win_program_time(3, start, end, 100, taken, s2, e2, &removed), 0);
	/* GC 0: 50 off; gap 1 = 190, at most 190 - 9 = 181 off; GC 2: 80 off */
	assert_int_equal(s2[0], 150);
	assert_int_equal(e2[0], 160);
	assert_int_equal(s2[1], 400 - 231);
	assert_int_equal(e2[1], 420 - 231);
	assert_int_equal(s2[2], 1000 - 311);
	assert_int_equal(e2[2], 1010 - 311);
	assert_int_equal(removed, 311);
	/* pauses keep their length; gaps stay positive */
	assert_true(s2[1] > e2[0] && s2[2] > e2[1]);
	/* churn on the new axis: 3 GCs freeing 100 bytes each over 1010 - 100
	 * ns of wall time, 1010 - 311 - 100 of the program's */
	const uint64_t freed[] = { 100, 100, 100 };
	struct win_gcs g = { .n = 3, .start_ns = s2, .end_ns = e2, .freed = freed, .origin_ns = 100 };
	struct win_params p;
	win_params_default(&p);
	p.churn_window_min = 3;
	p.churn_min_bytes_per_s = 1;
	struct win_result r;
	assert_int_equal(win_churn(&g, &p, &r), 0);
	assert_true(r.found);
	assert_true(fabs(r.per_s - 300.0 * 1e9 / (double)(1010 - 311 - 100)) < 1e-3);
	const uint64_t bad_start[] = { 200, 205 };
	const uint64_t bad_end[] = { 210, 215 };
	assert_int_equal(win_program_time(2, bad_start, bad_end, 100, taken, s2, e2, &removed), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_the_papers),
		cmocka_unit_test(test_growth_condition_75_percent_exactly),
		cmocka_unit_test(test_growth_condition_not_above_first),
		cmocka_unit_test(test_figure2_drop_restarts),
		cmocka_unit_test(test_figure1_regression),
		cmocka_unit_test(test_figure3_top_same_window),
		cmocka_unit_test(test_figure3_top_spike),
		cmocka_unit_test(test_figure3_bottom_whole_run),
		cmocka_unit_test(test_no_growth_constant),
		cmocka_unit_test(test_growth_too_short),
		cmocka_unit_test(test_no_points),
		cmocka_unit_test(test_sampled_points_cover_gcs),
		cmocka_unit_test(test_regression_sampled_start_by_gcs),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_narrow_steep_part),
		cmocka_unit_test(test_narrow_matches_brute_force),
		cmocka_unit_test(test_narrow_large),
		cmocka_unit_test(test_gc_overhead_hotspot),
		cmocka_unit_test(test_gc_overhead_tie_longest),
		cmocka_unit_test(test_gc_overhead_from_origin),
		cmocka_unit_test(test_gc_overhead_below_threshold),
		cmocka_unit_test(test_gc_overhead_too_few_gcs),
		cmocka_unit_test(test_gc_overhead_max_window),
		cmocka_unit_test(test_churn_phase),
		cmocka_unit_test(test_gc_windows_match_brute_force),
		cmocka_unit_test(test_program_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

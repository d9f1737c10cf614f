/* windows.c - the suspicious-time-window detectors; see windows.h. */
#include "windows.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __int128 i128;
typedef unsigned __int128 u128;

void win_params_default(struct win_params *p)
{
	p->leak_min_gcs_pct = WIN_DEF_LEAK_MIN_GCS_PCT;
	p->leak_keep_pct = WIN_DEF_LEAK_KEEP_PCT;
	p->narrow_min_pct = WIN_DEF_NARROW_MIN_PCT;
	p->narrow_max_pct = WIN_DEF_NARROW_MAX_PCT;
	p->regression_start_pct = WIN_DEF_REGRESSION_START_PCT;
	p->gc_window_min = WIN_DEF_GC_WINDOW_MIN;
	p->gc_window_max = WIN_DEF_GC_WINDOW_MAX;
	p->gc_overhead_min_pct = WIN_DEF_GC_OVERHEAD_MIN_PCT;
	p->churn_window_min = WIN_DEF_CHURN_WINDOW_MIN;
	p->churn_window_max = WIN_DEF_CHURN_WINDOW_MAX;
	p->churn_min_bytes_per_s = WIN_DEF_CHURN_MIN_BYTES_PER_S;
	p->reachable_every = WIN_DEF_REACHABLE_EVERY;
}

static void reason(struct win_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct win_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

/* ceil(n * pct / 100) without overflow. */
static uint64_t pct_ceil(uint64_t n, uint32_t pct)
{
	return (uint64_t)(((u128)n * pct + 99) / 100);
}

static uint64_t pct_floor(uint64_t n, uint32_t pct)
{
	return (uint64_t)(((u128)n * pct) / 100);
}

/* ---- point series (leak kinds) ----------------------------------------- */

static int check_points(const struct win_points *p)
{
	if (p->n && (!p->t_ns || !p->v || !p->gci))
		return -EINVAL;
	for (uint32_t i = 0; i < p->n; i++) {
		if (p->gci[i] >= p->ngcs || (i && (p->t_ns[i] <= p->t_ns[i - 1] ||
						   p->gci[i] <= p->gci[i - 1])))
			return -EINVAL;
		if (p->v[i] > INT64_MAX)
			return -EINVAL;
	}
	return 0;
}

static uint32_t point_gc(const struct win_points *p, uint32_t i)
{
	return p->gc_no ? p->gc_no[p->gci[i]] : p->gci[i];
}

/* Fills the window fields of r for points first..last. */
static void set_point_window(const struct win_points *p, uint32_t first, uint32_t last,
			     struct win_result *r)
{
	r->first = first;
	r->last = last;
	r->start_gci = p->gci[first];
	r->end_gci = p->gci[last];
	r->start_ns = p->t_ns[first];
	r->end_ns = p->t_ns[last];
	r->points = last - first + 1;
	r->growth_bytes = (int64_t)p->v[last] - (int64_t)p->v[first];
	uint64_t dt = p->t_ns[last] - p->t_ns[first];
	r->per_s = dt ? (double)r->growth_bytes * 1e9 / (double)dt : 0;
}

/* The paper's growth condition for point i in the window that starts at
 * point first and whose maximum over the points before i is max. */
static int meets_growth(const struct win_points *p, const struct win_params *w, uint32_t first,
			uint64_t max, uint32_t i)
{
	if (p->v[i] > p->v[i - 1])
		return 1;
	return p->v[i] > p->v[first] && (u128)p->v[i] * 100 >= (u128)max * w->leak_keep_pct;
}

int win_leak(const struct win_points *p, const struct win_params *w, struct win_result *r)
{
	memset(r, 0, sizeof *r);
	if (check_points(p))
		return -EINVAL;
	if (p->n < 2) {
		reason(r, p->n ? "one data point only (GC %" PRIu32 "): no growth to measure"
		       : "no data points (no GC with a known heap size)", p->n ? point_gc(p, 0) : 0);
		return 0;
	}
	uint32_t first = 0;
	uint64_t max = p->v[0];
	for (uint32_t i = 1; i < p->n; i++) {
		if (meets_growth(p, w, first, max, i)) {
			if (p->v[i] > max)
				max = p->v[i];
		} else {
			first = i;
			max = p->v[i];
		}
	}
	uint32_t last = p->n - 1;
	set_point_window(p, first, last, r);
	if (first == last) {
		reason(r, "no growth at the end: the last point (GC %" PRIu32 ", %" PRIu64 " bytes) is "
		       "not above the previous one (GC %" PRIu32 ", %" PRIu64 " bytes), nor above the "
		       "window's first point and at least %" PRIu32 "%% of its maximum",
		       point_gc(p, last), p->v[last], point_gc(p, last - 1), p->v[last - 1],
		       w->leak_keep_pct);
		return 0;
	}
	uint64_t covered = (uint64_t)r->end_gci - r->start_gci + 1;
	uint64_t need = pct_ceil(p->ngcs, w->leak_min_gcs_pct);
	if (covered < need) {
		reason(r, "the growth at the end (GC %" PRIu32 "..%" PRIu32 ") covers %" PRIu64
		       " GCs, fewer than %" PRIu32 "%% of all %" PRIu32 " GCs (%" PRIu64 ")",
		       point_gc(p, first), point_gc(p, last), covered, w->leak_min_gcs_pct, p->ngcs,
		       need);
		return 0;
	}
	r->found = 1;
	r->have_candidate = 1;
	reason(r, "longest window up to the end in which every point grows (or stays above the "
	       "window's start and at least %" PRIu32 "%% of its maximum); covers %" PRIu64
	       " of %" PRIu32 " GCs (need %" PRIu64 ")", w->leak_keep_pct, covered, p->ngcs, need);
	return 0;
}

/* ---- leak-narrow: maximum slope between two points, gap in [L, U] -----

 * The slope between points s < e is (v_e - v_s) / (t_e - t_s).  For a fixed
 * end e the best start lies on the lower convex hull of the candidate
 * starts, at the tangent seen from e.  The candidate starts of e form the
 * index range [e-U, e-L], which moves right by one per e.  Cut the starts
 * into blocks of B = U-L+1 indexes: the range is a suffix of one block plus
 * a prefix of the next.  Prefix hulls grow by one point per e (monotone
 * chain, left to right); suffix hulls lose their leftmost point per e: the
 * block's hull is built right to left once, logging what each push popped,
 * and undone one push at a time.  Each e costs one binary search per part:
 * O(n log B) overall. */

struct pt {
	i128 t, v;
};

struct narrow {
	const struct win_points *p;
	uint32_t *pre, npre;        /* prefix hull, left to right */
	uint32_t *suf, nsuf;        /* suffix hull as a stack: suf[0] rightmost */
	uint32_t *log, nlog;        /* points popped by suffix pushes */
	uint32_t *popped;           /* [B] pops of each suffix push */
	uint32_t suf_start;         /* block start of the suffix hull */
	uint32_t suf_lo;            /* leftmost point of the suffix hull now */
};

static struct pt ptof(const struct win_points *p, uint32_t i)
{
	struct pt x = { (i128)p->t_ns[i], (i128)p->v[i] };
	return x;
}

/* > 0: a, b, c turn counterclockwise (b strictly below segment a-c). */
static i128 cross(struct pt a, struct pt b, struct pt c)
{
	return (b.t - a.t) * (c.v - a.v) - (b.v - a.v) * (c.t - a.t);
}

/* slope(a, e) < slope(b, e), both starts left of e. */
static int slope_less(struct pt a, struct pt b, struct pt e)
{
	return (e.v - a.v) * (e.t - b.t) < (e.v - b.v) * (e.t - a.t);
}

static void pre_push(struct narrow *nw, uint32_t i)
{
	struct pt c = ptof(nw->p, i);
	while (nw->npre >= 2 &&
	       cross(ptof(nw->p, nw->pre[nw->npre - 2]), ptof(nw->p, nw->pre[nw->npre - 1]), c) <= 0)
		nw->npre--;
	nw->pre[nw->npre++] = i;
}

/* Builds the hull of block [start, end] right to left, logging pops. */
static void suf_build(struct narrow *nw, uint32_t start, uint32_t end)
{
	nw->nsuf = 0;
	nw->nlog = 0;
	for (uint32_t i = end + 1; i-- > start;) {
		struct pt c = ptof(nw->p, i);
		uint32_t pops = 0;
		while (nw->nsuf >= 2 && cross(c, ptof(nw->p, nw->suf[nw->nsuf - 1]),
					      ptof(nw->p, nw->suf[nw->nsuf - 2])) <= 0) {
			nw->log[nw->nlog++] = nw->suf[--nw->nsuf];
			pops++;
		}
		nw->suf[nw->nsuf++] = i;
		nw->popped[i - start] = pops;
	}
	nw->suf_start = start;
	nw->suf_lo = start;
}

/* Drops the suffix hull's leftmost point (undoes its push). */
static void suf_pop_front(struct narrow *nw)
{
	nw->nsuf--;
	for (uint32_t k = nw->popped[nw->suf_lo - nw->suf_start]; k > 0; k--)
		nw->suf[nw->nsuf++] = nw->log[--nw->nlog];
	nw->suf_lo++;
}

/* The leftmost hull vertex with the greatest slope to e.  Vertex k (left
 * to right) is h[k], or h[n-1-k] when reversed. */
static uint32_t tangent(const struct win_points *p, const uint32_t *h, uint32_t n, int reversed,
			uint32_t e)
{
	struct pt pe = ptof(p, e);
	uint32_t lo = 0, hi = n - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t a = reversed ? h[n - 1 - mid] : h[mid];
		uint32_t b = reversed ? h[n - 2 - mid] : h[mid + 1];
		if (slope_less(ptof(p, a), ptof(p, b), pe))
			lo = mid + 1;
		else
			hi = mid;
	}
	return reversed ? h[n - 1 - lo] : h[lo];
}

/* Pair (s, e) better than (bs, be): greater slope, or equal slope and an
 * earlier start (the same start with a later end never replaces). */
static int pair_better(const struct win_points *p, uint32_t s, uint32_t e, uint32_t bs, uint32_t be)
{
	struct pt a = ptof(p, s), b = ptof(p, e), c = ptof(p, bs), d = ptof(p, be);
	i128 lhs = (b.v - a.v) * (d.t - c.t), rhs = (d.v - c.v) * (b.t - a.t);
	return lhs > rhs || (lhs == rhs && s < bs);
}

static int narrow_alloc(struct narrow *nw, uint32_t B)
{
	nw->pre = malloc(sizeof *nw->pre * B);
	nw->suf = malloc(sizeof *nw->suf * B);
	nw->log = malloc(sizeof *nw->log * B);
	nw->popped = malloc(sizeof *nw->popped * B);
	return nw->pre && nw->suf && nw->log && nw->popped ? 0 : -ENOMEM;
}

static void narrow_free(struct narrow *nw)
{
	free(nw->pre);
	free(nw->suf);
	free(nw->log);
	free(nw->popped);
}

/* Best (s, e) with a <= s, e <= b and L <= e - s <= U (1 <= L <= U). */
static int best_pair(const struct win_points *p, uint32_t a, uint32_t b, uint32_t L, uint32_t U,
		     uint32_t *bs, uint32_t *be)
{
	uint32_t B = U - L + 1;
	struct narrow nw = { .p = p };
	int rc = narrow_alloc(&nw, B);
	if (rc)
		goto out;
	uint32_t cur_block = UINT32_MAX;
	*bs = *be = UINT32_MAX;
	for (uint32_t e = a + L; e <= b; e++) {
		uint32_t s_hi = e - L, s_lo = e - a >= U ? e - U : a;
		uint32_t kh = (s_hi - a) / B, start_kh = a + kh * B;
		if (kh != cur_block) {
			cur_block = kh;
			nw.npre = 0;
			if (kh > 0)
				suf_build(&nw, start_kh - B, start_kh - 1);
		}
		pre_push(&nw, s_hi);
		uint32_t s = tangent(p, nw.pre, nw.npre, 0, e);
		if (kh > 0 && s_lo < start_kh) {
			while (nw.suf_lo < s_lo)
				suf_pop_front(&nw);
			uint32_t s2 = tangent(p, nw.suf, nw.nsuf, 1, e);
			if (!pair_better(p, s, e, s2, e))
				s = s2;
		}
		if (*bs == UINT32_MAX || pair_better(p, s, e, *bs, *be)) {
			*bs = s;
			*be = e;
		}
	}
out:
	narrow_free(&nw);
	return rc;
}

int win_leak_narrow(const struct win_points *p, const struct win_result *leak,
		    const struct win_params *w, struct win_result *r)
{
	memset(r, 0, sizeof *r);
	if (check_points(p))
		return -EINVAL;
	if (!leak->found) {
		reason(r, "no leak window to narrow");
		return 0;
	}
	if (leak->last >= p->n || leak->first >= leak->last)
		return -EINVAL;
	uint32_t a = leak->first, b = leak->last, m = b - a + 1;
	uint64_t lo = pct_ceil(m, w->narrow_min_pct), hi = pct_floor(m, w->narrow_max_pct);
	if (lo < 2)
		lo = 2;
	if (hi > m)
		hi = m;
	if (hi < lo)
		hi = lo;
	if (lo > m) {
		reason(r, "the leak window has %" PRIu32 " points, fewer than the %" PRIu64
		       " a subwindow needs", m, lo);
		return 0;
	}
	uint32_t s, e;
	int rc = best_pair(p, a, b, (uint32_t)lo - 1, (uint32_t)hi - 1, &s, &e);
	if (rc)
		return rc;
	set_point_window(p, s, e, r);
	r->have_candidate = 1;
	if (r->growth_bytes <= 0) {
		reason(r, "no subwindow of %" PRIu64 "..%" PRIu64 " points grows", lo, hi);
		return 0;
	}
	r->found = 1;
	reason(r, "quickest growth per second among the subwindows of %" PRIu64 "..%" PRIu64
	       " points (%" PRIu32 "%%..%" PRIu32 "%% of the leak window's %" PRIu32 ")", lo, hi,
	       w->narrow_min_pct, w->narrow_max_pct, m);
	return 0;
}

/* ---- leak-regression ---------------------------------------------------- */

/* Welford's running means and co-moments: stable for long series. */
struct lsq {
	double n, mt, mv, stt, stv;
};

static void lsq_add(struct lsq *q, double t, double v)
{
	q->n += 1;
	double dt = t - q->mt;
	q->mt += dt / q->n;
	q->mv += (v - q->mv) / q->n;
	q->stt += dt * (t - q->mt);
	q->stv += dt * (v - q->mv);
}

int win_leak_regression(const struct win_points *p, const struct win_params *w,
			struct win_result *r)
{
	memset(r, 0, sizeof *r);
	if (check_points(p))
		return -EINVAL;
	if (p->n < 2) {
		reason(r, "fewer than two data points");
		return 0;
	}
	/* The first window covers the last regression_start_pct% of all GCs
	 * (the paper's "last 10% of all garbage collection points"): with a
	 * point at every GC that is that share of the points; with sampled
	 * points, the points inside those GCs.  At least two points. */
	uint64_t tail = pct_ceil(p->ngcs, w->regression_start_pct);
	uint32_t from_gci = tail >= p->ngcs ? 0 : p->ngcs - (uint32_t)tail, k0 = 0;
	while (k0 < p->n && p->gci[p->n - 1 - k0] >= from_gci)
		k0++;
	if (k0 < 2)
		k0 = 2;
	struct lsq q = { 0 };
	double best = 0;
	uint32_t best_first = UINT32_MAX, last = p->n - 1;
	for (uint32_t i = p->n; i-- > 0;) {
		/* seconds before the last point: small numbers, no cancellation */
		lsq_add(&q, -(double)(p->t_ns[last] - p->t_ns[i]) * 1e-9, (double)p->v[i]);
		if (last - i + 1 < k0 || q.stt <= 0)
			continue;
		/* A longer window as steep as the best so far wins: it covers
		 * more of the growth.  Slopes within a relative 1e-9 are equal
		 * (rounding); the comparison is always against the maximum. */
		double slope = q.stv / q.stt;
		double eps = 1e-9 * fmax(fabs(slope), fabs(best));
		if (best_first == UINT32_MAX || slope >= best - eps) {
			if (best_first == UINT32_MAX || slope > best)
				best = slope;
			best_first = i;
		}
	}
	set_point_window(p, best_first, last, r);
	r->per_s = best;
	r->have_candidate = 1;
	if (!(best > 0)) {
		reason(r, "the steepest regression line (from GC %" PRIu32 " to the end) has slope %.0f "
		       "bytes/s, not positive", point_gc(p, best_first), best);
		return 0;
	}
	r->found = 1;
	reason(r, "steepest regression line among the windows from the last %" PRIu32
	       " points (the last %" PRIu32 "%% of all GCs) expanded one point at a time to the "
	       "start", k0, w->regression_start_pct);
	return 0;
}

/* ---- the program's own time ------------------------------------------- */

int win_program_time(uint32_t n, const uint64_t *start_ns, const uint64_t *end_ns, uint64_t origin_ns,
		     const uint64_t *taken_ns, uint64_t *start_out, uint64_t *end_out, uint64_t *removed)
{
	uint64_t shift = 0, prev_end = origin_ns;
	for (uint32_t i = 0; i < n; i++) {
		if (start_ns[i] < prev_end || end_ns[i] < start_ns[i])
			return -EINVAL;
		uint64_t gap = start_ns[i] - prev_end, take = taken_ns[i];
		if (take > gap - gap / 20)
			take = gap - gap / 20;
		shift += take;
		start_out[i] = start_ns[i] - shift;
		end_out[i] = end_ns[i] - shift;
		prev_end = end_ns[i];
	}
	*removed = shift;
	return 0;
}

/* ---- gc-overhead and churn -------------------------------------------- */

enum gc_metric { M_GC_TIME, M_FREED };

static int check_gcs(const struct win_gcs *g, enum gc_metric m)
{
	if (g->n && (!g->start_ns || !g->end_ns || (m == M_FREED && !g->freed)))
		return -EINVAL;
	return 0;
}

static uint64_t gc_value(const struct win_gcs *g, enum gc_metric m, uint32_t j)
{
	if (m == M_FREED)
		return g->freed[j];
	return g->end_ns[j] > g->start_ns[j] ? g->end_ns[j] - g->start_ns[j] : 0;
}

static uint32_t gc_number(const struct win_gcs *g, uint32_t j)
{
	return g->gc_no ? g->gc_no[j] : j;
}

struct gc_window {
	int64_t i;          /* starts at the end of GC i; -1: at origin */
	uint32_t j;         /* ends at the end of GC j */
	uint64_t sum, dur;
};

/* a better than b: higher sum/dur; equal: more GCs (earlier is kept by
 * the scan order). */
static int gcw_better(const struct gc_window *a, const struct gc_window *b)
{
	u128 l = (u128)a->sum * b->dur, r = (u128)b->sum * a->dur;
	if (l != r)
		return l > r;
	return (int64_t)a->j - a->i > (int64_t)b->j - b->i;
}

/* Every window of min..max GCs that starts at the origin or at a GC end and
 * ends at a GC end: O(n * max). */
static int gc_search(const struct win_gcs *g, enum gc_metric m, uint32_t min, uint32_t max,
		     struct gc_window *best)
{
	int have = 0;
	for (int64_t i = -1; i + (int64_t)min < (int64_t)g->n; i++) {
		uint64_t from = i < 0 ? g->origin_ns : g->end_ns[i];
		uint64_t sum = 0;
		for (uint32_t j = (uint32_t)(i + 1); j < g->n && (int64_t)j - i <= (int64_t)max; j++) {
			sum += gc_value(g, m, j);
			if ((int64_t)j - i < (int64_t)min || g->end_ns[j] <= from)
				continue;
			struct gc_window c = { i, j, sum, g->end_ns[j] - from };
			if (!have || gcw_better(&c, best)) {
				*best = c;
				have = 1;
			}
		}
	}
	return have;
}

static void set_gc_window(const struct win_gcs *g, enum gc_metric m, const struct gc_window *b,
			  struct win_result *r)
{
	r->have_candidate = 1;
	r->first = r->start_gci = (uint32_t)(b->i + 1);
	r->last = r->end_gci = b->j;
	r->start_ns = b->i < 0 ? g->origin_ns : g->end_ns[b->i];
	r->end_ns = g->end_ns[b->j];
	if (m == M_GC_TIME) {
		r->gc_ns = b->sum;
		r->per_s = (double)b->sum / (double)b->dur;
	} else {
		r->freed_bytes = b->sum;
		r->per_s = (double)b->sum * 1e9 / (double)b->dur;
	}
}

static int gc_window_detect(const struct win_gcs *g, enum gc_metric m, uint32_t min, uint32_t max,
			    struct win_result *r)
{
	memset(r, 0, sizeof *r);
	if (check_gcs(g, m))
		return -EINVAL;
	if (min < 1 || max < min)
		return -EINVAL;
	struct gc_window best;
	if (g->n < min) {
		reason(r, "the trace has %" PRIu32 " GCs, fewer than the %" PRIu32 " a window needs",
		       g->n, min);
		return 0;
	}
	if (!gc_search(g, m, min, max, &best)) {
		reason(r, "no window of %" PRIu32 "..%" PRIu32 " GCs has a positive duration", min, max);
		return 0;
	}
	set_gc_window(g, m, &best, r);
	return 1;
}

int win_gc_overhead(const struct win_gcs *g, const struct win_params *w, struct win_result *r)
{
	int rc = gc_window_detect(g, M_GC_TIME, w->gc_window_min, w->gc_window_max, r);
	if (rc <= 0)
		return rc;
	uint64_t dur = r->end_ns - r->start_ns;
	if ((u128)r->gc_ns * 100 < (u128)dur * w->gc_overhead_min_pct) {
		reason(r, "the window with the highest share of time in GC (GC %" PRIu32 "..%" PRIu32
		       ") spends %.1f%% in GC, below the %" PRIu32 "%% threshold",
		       gc_number(g, r->start_gci), gc_number(g, r->end_gci), r->per_s * 100,
		       w->gc_overhead_min_pct);
		return 0;
	}
	r->found = 1;
	reason(r, "highest share of time in GC among the windows of %" PRIu32 "..%" PRIu32
	       " GCs ending at a GC end; at least %" PRIu32 "%%", w->gc_window_min, w->gc_window_max,
	       w->gc_overhead_min_pct);
	return 0;
}

int win_churn(const struct win_gcs *g, const struct win_params *w, struct win_result *r)
{
	int rc = gc_window_detect(g, M_FREED, w->churn_window_min, w->churn_window_max, r);
	if (rc <= 0)
		return rc;
	uint64_t dur = r->end_ns - r->start_ns;
	if ((u128)r->freed_bytes * 1000000000u < (u128)dur * w->churn_min_bytes_per_s) {
		reason(r, "the window with the highest churn (GC %" PRIu32 "..%" PRIu32 ") frees %.0f "
		       "bytes/s, below the %" PRIu64 " bytes/s threshold", gc_number(g, r->start_gci),
		       gc_number(g, r->end_gci), r->per_s, w->churn_min_bytes_per_s);
		return 0;
	}
	r->found = 1;
	reason(r, "most bytes freed per second among the windows of %" PRIu32 "..%" PRIu32
	       " GCs ending at a GC end; at least %" PRIu64 " bytes/s", w->churn_window_min,
	       w->churn_window_max, w->churn_min_bytes_per_s);
	return 0;
}

/* windows.h - suspicious time windows over the per-GC series
 * (Weninger, Gander, Mössenböck: "Detection of Suspicious Time Windows in
 * Memory Monitoring", MPLR'19; ../shared/papers/suspicious-time-windows.txt).
 *
 * Pure functions over arrays: no trace, no heap state, no FUSE.  The fs
 * layer (fs/render_windows.c) assembles the arrays from the trace and
 * renders the results.
 *
 * Two kinds of input:
 *   struct win_points  a memory series, one point per sampled GC (reachable
 *                      memory in the paper, §3.2.1): the leak detectors;
 *   struct win_gcs     every GC's start and end time and bytes freed:
 *                      the GC-overhead and churn detectors.
 *
 * Detectors and their cost (n points or GCs, W the window-size bound):
 *   win_leak            §3.2.2 heuristic, one pass, O(n)
 *   win_leak_narrow     strongest-growth subwindow of the leak window,
 *                       O(n log n) (lower convex hulls over blocks; the
 *                       paper's "all windows of 10%..50%" is O(n^2))
 *   win_leak_regression §3.2.2 linear regression, incremental sums, O(n)
 *   win_gc_overhead     §3.3.1, O(n W), W = gc_window_max
 *   win_churn           §3.4.1, O(n W), W = churn_window_max
 *
 * Ties (the paper does not say): leak-narrow keeps the earliest start, then
 * the shortest window (the paper's scan order with a strict "better");
 * leak-regression keeps the longest window (with exactly linear growth all
 * windows are equally steep, and the whole growth phase is the answer;
 * slopes within a relative 1e-9 count as equal); gc-overhead and
 * churn keep the window with more GCs (it covers more of the hotspot), then
 * the earliest.  Ratios of integers are compared exactly.
 *
 * Ownership: inputs are borrowed; results are plain values.
 */
#ifndef HEAPFS_ANALYSES_WINDOWS_H
#define HEAPFS_ANALYSES_WINDOWS_H

#include <stdint.h>

/* The paper's defaults (each one a mount option, see mountopts.c). */
#define WIN_DEF_LEAK_MIN_GCS_PCT 10     /* §3.2.2: window covers >= 10% of all GCs */
#define WIN_DEF_LEAK_KEEP_PCT 75        /* §3.2.2: a drop keeps >= 75% of the max so far */
#define WIN_DEF_NARROW_MIN_PCT 10       /* §3.2.2 narrowing: 10%..50% of the points */
#define WIN_DEF_NARROW_MAX_PCT 50
#define WIN_DEF_REGRESSION_START_PCT 10 /* §3.2.2: start with the last 10% of all GCs */
#define WIN_DEF_GC_WINDOW_MIN 5         /* §3.3.1: 5..50 GCs */
#define WIN_DEF_GC_WINDOW_MAX 50
#define WIN_DEF_GC_OVERHEAD_MIN_PCT 10  /* §3.3.1: reported if >= 10% */
#define WIN_DEF_CHURN_WINDOW_MIN 5      /* §3.4.1: "the same" search */
#define WIN_DEF_CHURN_WINDOW_MAX 50
/* The paper gives no churn threshold.  32 MiB of garbage per second: with
 * a young generation of 32 MiB, a collection every second or more often,
 * caused by garbage alone.  The churn phase of `heapfs synth churn` frees
 * ~50 MB/s, its calm phases ~1 MB/s; the stress phase of `synth gcstress`
 * (a GC-overhead case, not churn) ~10 MB/s plus one drained queue.
 * Servers with large heaps may want a higher churn_min_bytes_per_s. */
#define WIN_DEF_CHURN_MIN_BYTES_PER_S (32ull << 20)
#define WIN_DEF_REACHABLE_EVERY 1       /* §3.2.1: every graph GC (the paper's
					   sampling option uses every 2nd) */

struct win_params {
	uint32_t leak_min_gcs_pct;
	uint32_t leak_keep_pct;
	uint32_t narrow_min_pct, narrow_max_pct;
	uint32_t regression_start_pct;
	uint32_t gc_window_min, gc_window_max;
	uint32_t gc_overhead_min_pct;
	uint32_t churn_window_min, churn_window_max;
	uint64_t churn_min_bytes_per_s;
	/* Not a detector parameter: the fs layer computes reachable memory at
	 * every K-th GC with a graph (1 = all). */
	uint32_t reachable_every;
};

void win_params_default(struct win_params *p);

/* A memory series in time order.  t_ns must be strictly increasing (the
 * detectors return -EINVAL otherwise); gci[i] is the GC index (position in
 * the trace's GC list) of point i, increasing; ngcs is the number of GCs of
 * the whole trace (the leak window must cover a share of them). */
struct win_points {
	uint32_t n;
	const uint64_t *t_ns;
	const uint64_t *v;
	const uint32_t *gci;
	uint32_t ngcs;
	const uint32_t *gc_no; /* [ngcs] GC number of each GC index, for the
				  reasons; NULL: numbers are the indexes */
};

/* Every GC in trace order: start and end time, bytes freed (0 where the
 * trace does not say).  origin_ns is the trace's first timestamp: the first
 * window may start there (§3.3.1); later windows start at a GC end. */
struct win_gcs {
	uint32_t n;
	const uint64_t *start_ns, *end_ns;
	const uint64_t *freed;
	uint64_t origin_ns;
	const uint32_t *gc_no; /* [n] GC numbers for the reasons; NULL: indexes */
};

#define WIN_REASON_MAX 320

struct win_result {
	int found;
	/* Where found (and, for gc-overhead/churn, also for the best candidate
	 * when it misses the threshold: have_candidate = 1): */
	int have_candidate;
	uint32_t first, last;       /* leak kinds: point indexes; else GC indexes */
	uint32_t start_gci, end_gci;/* first and last GC in the window */
	uint64_t start_ns, end_ns;  /* the window's time span */
	uint32_t points;            /* leak kinds: points in the window */
	int64_t growth_bytes;       /* leak kinds: v[last] - v[first] */
	double per_s;               /* leak, narrow: growth per second;
				       regression: slope, bytes per second;
				       churn: bytes freed per second;
				       gc-overhead: fraction of time in GC (0..1) */
	uint64_t gc_ns;             /* gc-overhead: time in GC inside the window */
	uint64_t freed_bytes;       /* churn: bytes freed inside the window */
	char reason[WIN_REASON_MAX];/* found: how; not found: which condition failed */
};

/* The program's own time axis of a recording that slowed it down: GC i
 * started at start_ns[i] and ended at end_ns[i] (increasing, after
 * origin_ns), and the recorder took taken_ns[i] of the program's time
 * between the end of GC i-1 (origin for i = 0) and the start of GC i.
 * Writes the times with everything taken before them removed, each gap
 * keeping at least 1/20 of its length (a recorder's figure larger than
 * the gap it fell in is not believed beyond that), into start_out and
 * end_out; *removed is the total removed.  The GC-overhead and churn
 * windows on this axis are those of the program as it would run without
 * the recorder (the pauses themselves are the JVM's).  -EINVAL for times
 * that are not increasing. */
int win_program_time(uint32_t n, const uint64_t *start_ns, const uint64_t *end_ns, uint64_t origin_ns,
		     const uint64_t *taken_ns, uint64_t *start_out, uint64_t *end_out, uint64_t *removed);

/* Each returns 0 (r filled, found or not) or negative errno (-EINVAL for
 * input that breaks the contract above, -ENOMEM). */
int win_leak(const struct win_points *p, const struct win_params *w, struct win_result *r);
/* leak: the result of win_leak on the same p. */
int win_leak_narrow(const struct win_points *p, const struct win_result *leak,
		    const struct win_params *w, struct win_result *r);
int win_leak_regression(const struct win_points *p, const struct win_params *w,
			struct win_result *r);
int win_gc_overhead(const struct win_gcs *g, const struct win_params *w, struct win_result *r);
int win_churn(const struct win_gcs *g, const struct win_params *w, struct win_result *r);

#endif

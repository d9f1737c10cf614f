/* bench_windows.c - the window detectors, timeline/gcs.csv and
 * timeline/memory.svg at 10^6 GCs (the windows' performance goals: each
 * detector <= 1 s, gcs.csv <= 1 s, the SVG under 2 MB).
 *
 * Two parts:
 *   1. the pure detectors (analyses/windows.h) on in-memory series of N
 *      points/GCs: a growing, noisy reachable series whose leak window is
 *      nearly all of it (the worst case for leak-narrow: subwindows of up
 *      to N/2 points), and GCs with a stress phase and a churn phase;
 *   2. the tree (fs/tree.h) over a trace of N GCs written here (one small
 *      allocation per GC, used before/after with the same shapes, no
 *      graphs: reachable memory at 10^6 GCs would mean 10^6 heap
 *      rebuilds, which is not what the goal measures): hfs_read of
 *      timeline/gcs.csv, windows/summary (all five detectors) and
 *      timeline/memory.svg, with the SVG's size.
 *
 * Output: "key<TAB>value" lines; exit 1 when a goal is missed.
 * Usage: bench_windows [N (default 1000000)] [SCRATCH_DIR (default /tmp)] [SVG_OUT]
 * (SVG_OUT: keep the rendered memory.svg there, to look at it)
 * Build: cc -std=gnu11 -O2 -D_GNU_SOURCE -I. tests/bench/bench_windows.c \
 *        build/libheapfs.a $(pkg-config --libs fuse3 libzstd) -lpthread -lm
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyses/windows.h"
#include "fs/tree.h"
#include "model/htr_writer.h"

#define MS 1000000ull
#define GOAL_S 1.0
#define GOAL_SVG_BYTES (2u << 20)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static int failures;

static void report(const char *key, double s, double goal)
{
	int ok = s <= goal;
	printf("%s_s\t%.3f\t%s\n", key, s, ok ? "ok" : "MISSED");
	failures += !ok;
}

/* GC k: calm (1 s apart, 10 ms pause), a stress phase (20 ms apart, 80 ms
 * pause) in the second fifth, a churn phase (50 ms apart, 2 ms pause,
 * 3 MB freed) in the fourth fifth. */
static void gc_shape(uint32_t k, uint32_t n, uint64_t *gap_ms, uint64_t *pause_ms,
		     uint64_t *garbage)
{
	*gap_ms = 1000;
	*pause_ms = 10;
	*garbage = 1000000;
	if (k >= n / 5 && k < n / 5 + 40) {
		*gap_ms = 20;
		*pause_ms = 80;
	} else if (k >= 3 * (n / 5) && k < 3 * (n / 5) + 40) {
		*gap_ms = 50;
		*pause_ms = 2;
		*garbage = 3000000;
	}
}

/* Live memory after GC k: slow growth with noise and a few small drops
 * (all tolerated), so that the leak window covers nearly everything. */
static uint64_t live_after(uint32_t k, uint64_t *seed)
{
	return 100000000ull + 64ull * k + lcg(seed) % 4000;
}

/* ---- part 1: the pure detectors ---- */

static int bench_detectors(uint32_t n)
{
	uint64_t *t = malloc(n * sizeof *t), *v = malloc(n * sizeof *v);
	uint64_t *st = malloc(n * sizeof *st), *en = malloc(n * sizeof *en);
	uint64_t *fr = malloc(n * sizeof *fr);
	uint32_t *gci = malloc(n * sizeof *gci);
	if (!t || !v || !st || !en || !fr || !gci)
		return -ENOMEM;
	uint64_t seed = 7, clock = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t gap, pause, garbage;
		gc_shape(k, n, &gap, &pause, &garbage);
		st[k] = clock + gap * MS;
		en[k] = st[k] + pause * MS;
		clock = en[k];
		fr[k] = garbage;
		t[k] = en[k];
		v[k] = live_after(k, &seed);
		gci[k] = k;
	}
	struct win_params w;
	win_params_default(&w);
	struct win_points p = { .n = n, .t_ns = t, .v = v, .gci = gci, .ngcs = n };
	struct win_gcs g = { .n = n, .start_ns = st, .end_ns = en, .freed = fr, .origin_ns = 0 };
	struct win_result leak, r;
	double t0 = now_s();
	int rc = win_leak(&p, &w, &leak);
	report("detector_leak", now_s() - t0, GOAL_S);
	printf("leak_window_points\t%" PRIu32 "\t(found %d)\n", leak.points, leak.found);
	t0 = now_s();
	if (!rc) rc = win_leak_narrow(&p, &leak, &w, &r);
	report("detector_leak_narrow", now_s() - t0, GOAL_S);
	t0 = now_s();
	if (!rc) rc = win_leak_regression(&p, &w, &r);
	report("detector_leak_regression", now_s() - t0, GOAL_S);
	t0 = now_s();
	if (!rc) rc = win_gc_overhead(&g, &w, &r);
	report("detector_gc_overhead", now_s() - t0, GOAL_S);
	printf("gc_overhead_window\t%" PRIu32 "..%" PRIu32 "\t(found %d)\n", r.start_gci, r.end_gci,
	       r.found);
	t0 = now_s();
	if (!rc) rc = win_churn(&g, &w, &r);
	report("detector_churn", now_s() - t0, GOAL_S);
	printf("churn_window\t%" PRIu32 "..%" PRIu32 "\t(found %d)\n", r.start_gci, r.end_gci,
	       r.found);
	free(t);
	free(v);
	free(st);
	free(en);
	free(fr);
	free(gci);
	return rc;
}

/* ---- part 2: through the tree ---- */

static int write_trace(const char *path, uint32_t n)
{
	struct htr_writer *w;
	int rc = htr_writer_open(&w, path, NULL);
	if (rc)
		return rc;
	struct htr_type_def ty = { 0, "java.lang.Object", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE,
				   0, NULL };
	rc = htr_write_type(w, &ty);
	if (!rc) rc = htr_write_thread(w, 1, "main");
	uint64_t seed = 7, clock = 0, prev_after = 0;
	for (uint32_t k = 0; k < n && !rc; k++) {
		uint64_t gap, pause, garbage;
		gc_shape(k, n, &gap, &pause, &garbage);
		uint64_t after = live_after(k, &seed);
		struct htr_alloc a = { .id = k + 1, .type = 0, .site = HTR_NO_SITE, .thread = 1,
				       .size = 16, .array_length = -1, .time_ns = clock + MS };
		rc = htr_write_alloc(w, &a);
		struct htr_gc_event e = { .gc = k + 1, .time_ns = clock + gap * MS,
					  .used = (k ? prev_after : after) + garbage,
					  .capacity = UINT64_MAX, .flags = 0, .cause = "Allocation Failure" };
		if (!rc) rc = htr_write_gc_start(w, &e);
		e.time_ns += pause * MS;
		e.used = after;
		e.cause = NULL;
		if (!rc) rc = htr_write_gc_end(w, &e);
		clock = e.time_ns;
		prev_after = after;
	}
	int rc2 = htr_writer_close(w);
	return rc ? rc : rc2;
}

static const char *g_svg_out; /* argv[3]: where to keep memory.svg */

static int timed_read(struct hfs *fs, const char *path, const char *key, size_t *len)
{
	struct buf b;
	buf_init(&b);
	double t0 = now_s();
	int rc = hfs_read(fs, path, &b);
	report(key, now_s() - t0, GOAL_S);
	*len = b.len;
	FILE *f = !rc && g_svg_out && strstr(path, ".svg") ? fopen(g_svg_out, "w") : NULL;
	if (f) {
		fwrite(b.data, 1, b.len, f);
		fclose(f);
	}
	buf_free(&b);
	if (rc)
		fprintf(stderr, "bench_windows: %s: %s\n", path, strerror(-rc));
	return rc;
}

static int bench_tree(uint32_t n, const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/bench_windows.%d.htr", dir, (int)getpid());
	double t0 = now_s();
	int rc = write_trace(path, n);
	printf("write_trace_s\t%.3f\n", now_s() - t0);
	if (rc) {
		fprintf(stderr, "bench_windows: cannot write %s: %s\n", path, strerror(-rc));
		return rc;
	}
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	t0 = now_s();
	rc = hfs_open(&fs, path, &o, &err);
	printf("open_s\t%.3f\n", now_s() - t0);
	if (rc) {
		fprintf(stderr, "bench_windows: %s: %s\n", path, err.msg);
		unlink(path);
		return rc;
	}
	size_t len;
	rc = timed_read(fs, "/timeline/gcs.csv", "gcs_csv", &len);
	printf("gcs_csv_bytes\t%zu\n", len);
	if (!rc) rc = timed_read(fs, "/windows/summary", "windows_summary_all_detectors", &len);
	if (!rc) rc = timed_read(fs, "/timeline/memory.svg", "memory_svg", &len);
	printf("memory_svg_bytes\t%zu\t%s\n", len, len < GOAL_SVG_BYTES ? "ok" : "MISSED");
	failures += len >= GOAL_SVG_BYTES;
	hfs_close(fs);
	unlink(path);
	return rc;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	g_svg_out = argc > 3 ? argv[3] : NULL;
	if (n < 1000) {
		fprintf(stderr, "usage: bench_windows [N >= 1000] [SCRATCH_DIR] [SVG_OUT]\n");
		return 2;
	}
	printf("gcs\t%" PRIu32 "\n", n);
	if (bench_detectors(n) || bench_tree(n, dir))
		return 1;
	return failures ? 1 : 0;
}

/* render_windows.c - the per-GC series, windows/ and timeline/memory.svg;
 * see render_windows.h. */
#include "render_windows.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "tree_internal.h"

#define NONE UINT64_MAX

static const char *const kind_names[WK_COUNT] = {
	[WK_LEAK] = "leak", [WK_NARROW] = "leak-narrow", [WK_REGRESSION] = "leak-regression",
	[WK_GC_OVERHEAD] = "gc-overhead", [WK_CHURN] = "churn",
};

const char *win_kind_name(enum win_kind k)
{
	return k < WK_COUNT ? kind_names[k] : NULL;
}

enum win_kind win_kind_of(const char *name)
{
	for (int k = 0; k < WK_COUNT; k++)
		if (strcmp(kind_names[k], name) == 0)
			return (enum win_kind)k;
	return WK_COUNT;
}

int hfs_window_link(struct hfs *fs, enum win_kind k, int end, char *buf, size_t len)
{
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (rc)
		return rc;
	if (k >= WK_COUNT || !res[k].found)
		return -ENOENT;
	char name[16];
	hfs_gc_name(fs, end ? res[k].end_gci : res[k].start_gci, name);
	snprintf(buf, len, "../../../gc/%s", name);
	return 0;
}

int hfs_window_spans(struct hfs *fs, enum win_kind k)
{
	const struct win_result *res;
	if (k >= WK_COUNT || eng_windows_results(&fs->en, &res))
		return 0;
	return res[k].found && res[k].start_gci != res[k].end_gci;
}

int hfs_window_diff_link(struct hfs *fs, enum win_kind k, char *buf, size_t len)
{
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (rc)
		return rc;
	if (!hfs_window_spans(fs, k))
		return -ENOENT;
	char first[16], last[16];
	hfs_gc_name(fs, res[k].start_gci, first);
	hfs_gc_name(fs, res[k].end_gci, last);
	snprintf(buf, len, "../../../gc/%s/diff/%s", last, first);
	return 0;
}

/* ---- windows/diff/<kind>/growing ------------------------------------------ */

struct grow_row {
	const char *name;          /* borrowed from the classifier's keyspace */
	int64_t net_b, net_c;
	const struct cls_row *r;   /* borrowed from the classification */
};

static int grow_cmp(const void *a, const void *b)
{
	const struct grow_row *x = a, *y = b;
	if (x->net_b != y->net_b)
		return x->net_b > y->net_b ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct tcol growing_cols[] = {
	{ "classifier", TCOL_STR }, { "name", TCOL_STR }, { "net_bytes", TCOL_I64 },
	{ "net_count", TCOL_I64 }, { "born_count", TCOL_U64 }, { "born_bytes", TCOL_U64 },
	{ "died_count", TCOL_U64 }, { "died_bytes", TCOL_U64 }, { "start_count", TCOL_U64 },
	{ "start_bytes", TCOL_U64 }, { "end_count", TCOL_U64 }, { "end_bytes", TCOL_U64 },
};

/* A sampled trace (mode=sample): the same, estimated, and the samples at
 * the window's end behind the estimates. */
static const struct tcol growing_cols_sampled[] = {
	{ "classifier", TCOL_STR }, { "name", TCOL_STR }, { "est_net_bytes", TCOL_I64 },
	{ "est_net_count", TCOL_I64 }, { "est_born_count", TCOL_U64 }, { "est_born_bytes", TCOL_U64 },
	{ "est_died_count", TCOL_U64 }, { "est_died_bytes", TCOL_U64 }, { "est_start_count", TCOL_U64 },
	{ "est_start_bytes", TCOL_U64 }, { "est_end_count", TCOL_U64 }, { "est_end_bytes", TCOL_U64 },
	{ "end_samples", TCOL_U64 },
};

/* Heap dumps (identity across GCs unknown, model/trace.h): no born or
 * died columns, only what the two GCs' counts say. */
static const struct tcol growing_cols_net[] = {
	{ "classifier", TCOL_STR }, { "name", TCOL_STR }, { "net_bytes", TCOL_I64 },
	{ "net_count", TCOL_I64 }, { "start_count", TCOL_U64 }, { "start_bytes", TCOL_U64 },
	{ "end_count", TCOL_U64 }, { "end_bytes", TCOL_U64 },
};

/* The rows of one classifier (top level) over the diff of end against
 * start, ranked, appended to tb.  In a diff, COL_LIVE holds the born. */
static int growing_rows(struct hfs *fs, uint32_t start, uint32_t end, const char *cls_name,
			struct table *tb)
{
	uint32_t cls = cls_find(&fs->en.reg, cls_name);
	const struct cls_def *d = cls == CLS_NONE ? NULL : cls_get(&fs->en.reg, cls);
	if (!d)
		return -EIO;
	struct chain ch;
	chain_init(&ch);
	ch.diff_gci = start;
	struct rc_entry *e;
	const struct cls_row *rows;
	uint32_t nrows;
	int rc = eng_classification_get(&fs->en, end, &ch, cls, &e, &rows, &nrows);
	if (rc)
		return rc;
	struct grow_row *g = malloc(sizeof *g * (nrows ? nrows : 1));
	if (!g) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nrows; i++) {
		const struct cls_row *r = &rows[i];
		g[i].name = ks_name(&d->ks, r->key);
		g[i].net_b = (int64_t)r->b[COL_LIVE] - (int64_t)r->b[COL_DIED];
		g[i].net_c = (int64_t)r->c[COL_LIVE] - (int64_t)r->c[COL_DIED];
		g[i].r = r;
	}
	qsort(g, nrows, sizeof *g, grow_cmp);
	for (uint32_t i = 0; i < nrows && !rc; i++) {
		const struct cls_row *r = g[i].r;
		if ((rc = table_add_row(tb)))
			break;
		table_set_str(tb, 0, cls_name, strlen(cls_name));
		table_set_str(tb, 1, g[i].name, strlen(g[i].name));
		table_set_i64(tb, 2, g[i].net_b);
		table_set_i64(tb, 3, g[i].net_c);
		uint32_t c = 4;
		if (!fs->en.trace->identity_unknown) {
			table_set_u64(tb, c++, r->c[COL_LIVE]);
			table_set_u64(tb, c++, r->b[COL_LIVE]);
			table_set_u64(tb, c++, r->c[COL_DIED]);
			table_set_u64(tb, c++, r->b[COL_DIED]);
		}
		table_set_u64(tb, c++, r->c[COL_PERM] + r->c[COL_DIED]);
		table_set_u64(tb, c++, r->b[COL_PERM] + r->b[COL_DIED]);
		table_set_u64(tb, c++, r->c[COL_PERM] + r->c[COL_LIVE]);
		table_set_u64(tb, c++, r->b[COL_PERM] + r->b[COL_LIVE]);
		if (fs->en.trace->sample_interval)
			table_set_u64(tb, c, r->s[COL_PERM] + r->s[COL_LIVE]);
	}
	free(g);
out:
	rcache_put(fs->en.rc, e);
	return rc;
}

int render_window_growing(struct hfs *fs, enum win_kind k, struct buf *out)
{
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (rc)
		return rc;
	if (!hfs_window_spans(fs, k))
		return -ENOENT;
	struct table tb;
	if (fs->en.trace->identity_unknown)
		table_init(&tb, growing_cols_net, sizeof growing_cols_net / sizeof *growing_cols_net);
	else if (fs->en.trace->sample_interval)
		table_init(&tb, growing_cols_sampled, sizeof growing_cols_sampled / sizeof *growing_cols_sampled);
	else
		table_init(&tb, growing_cols, sizeof growing_cols / sizeof *growing_cols);
	rc = growing_rows(fs, res[k].start_gci, res[k].end_gci, "type", &tb);
	if (!rc && fs->en.trace->nsites) /* heap dumps have no sites */
		rc = growing_rows(fs, res[k].start_gci, res[k].end_gci, "site", &tb);
	if (!rc)
		rc = table_render_tsv(&tb, out);
	table_free(&tb);
	return rc;
}

/* ---- windows/<kind> and windows/summary -------------------------------- */

static uint64_t ms(uint64_t ns)
{
	return ns / 1000000;
}

static int kv(struct buf *out, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int kv(struct buf *out, const char *k, const char *fmt, ...)
{
	char v[WIN_REASON_MAX + 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	int rc = buf_printf(out, "%s\t", k);
	if (!rc)
		rc = put_tsv_field(out, v, strlen(v));
	return rc ? rc : buf_putc(out, '\n');
}

static int64_t round_i64(double x)
{
	return (int64_t)llround(x);
}

/* The kind's main metric: name and value (integer, as every number in
 * the tree), and its threshold as text. */
static void metric_of(const struct win_params *p, enum win_kind k, const struct win_result *r,
		      const char **name, int64_t *value, char *thr, size_t len)
{
	switch (k) {
	case WK_LEAK:
		*name = "growth_bytes_per_s";
		snprintf(thr, len, "min_gcs_pct=%" PRIu32 ",keep_pct=%" PRIu32, p->leak_min_gcs_pct,
			 p->leak_keep_pct);
		break;
	case WK_NARROW:
		*name = "growth_bytes_per_s";
		snprintf(thr, len, "min_pct=%" PRIu32 ",max_pct=%" PRIu32, p->narrow_min_pct,
			 p->narrow_max_pct);
		break;
	case WK_REGRESSION:
		*name = "slope_bytes_per_s";
		snprintf(thr, len, "start_pct=%" PRIu32 ",slope>0", p->regression_start_pct);
		break;
	case WK_GC_OVERHEAD:
		*name = "gc_overhead_pct";
		snprintf(thr, len, "%" PRIu32, p->gc_overhead_min_pct);
		*value = (int64_t)floor(r->per_s * 100 + 1e-9);
		return;
	default:
		*name = "churn_bytes_per_s";
		snprintf(thr, len, "%" PRIu64, p->churn_min_bytes_per_s);
		break;
	}
	*value = round_i64(r->per_s);
}

static int leak_source(struct hfs *fs, char *buf, size_t len)
{
	struct win_state_info w;
	win_state_info(fs->en.win, &w);
	if (w.leak_on_reachable)
		return snprintf(buf, len, "reachable (%" PRIu32 " of %" PRIu32 " GCs%s)", w.nsampled,
				fs->en.trace->ngcs, w.params->reachable_every > 1 ? ", sampled" : "");
	if (fs->en.trace->objects_unrecorded)
		return snprintf(buf, len, "used_after (a JFR recording's jdk.GCHeapSummary: includes "
				"old garbage)");
	return snprintf(buf, len, "used_after (fewer than 2 GCs with a graph%s)",
			w.params->reachable_every > 1 ? " sampled" : "");
}

static int window_keys(struct hfs *fs, const struct win_result *r, struct buf *out)
{
	const struct trace *t = fs->en.trace;
	int rc = kv(out, "start_gc", "%" PRIu32, t->gcs[r->start_gci].gc);
	if (!rc) rc = kv(out, "end_gc", "%" PRIu32, t->gcs[r->end_gci].gc);
	if (!rc) rc = kv(out, "start_ms", "%" PRIu64, ms(r->start_ns));
	if (!rc) rc = kv(out, "end_ms", "%" PRIu64, ms(r->end_ns));
	if (!rc) rc = kv(out, "duration_ms", "%" PRIu64, ms(r->end_ns - r->start_ns));
	if (!rc) rc = kv(out, "gcs", "%" PRIu32, r->end_gci - r->start_gci + 1);
	return rc;
}

static int kind_keys(struct hfs *fs, enum win_kind k, const struct win_result *r, struct buf *out)
{
	struct win_state_info w;
	win_state_info(fs->en.win, &w);
	const struct win_params *p = w.params;
	int rc = 0;
	switch (k) {
	case WK_LEAK:
	case WK_NARROW:
	case WK_REGRESSION:
		if (r->found) {
			rc = kv(out, "points", "%" PRIu32, r->points);
			if (!rc) rc = kv(out, "growth_bytes", "%" PRId64, r->growth_bytes);
			if (!rc && k != WK_REGRESSION)
				rc = kv(out, "growth_bytes_per_s", "%" PRId64, round_i64(r->per_s));
			if (!rc && k == WK_REGRESSION)
				rc = kv(out, "slope_bytes_per_s", "%" PRId64, round_i64(r->per_s));
		}
		if (!rc && k == WK_LEAK) rc = kv(out, "min_gcs_pct", "%" PRIu32, p->leak_min_gcs_pct);
		if (!rc && k == WK_LEAK) rc = kv(out, "keep_pct", "%" PRIu32, p->leak_keep_pct);
		if (!rc && k == WK_NARROW) rc = kv(out, "min_pct", "%" PRIu32, p->narrow_min_pct);
		if (!rc && k == WK_NARROW) rc = kv(out, "max_pct", "%" PRIu32, p->narrow_max_pct);
		if (!rc && k == WK_REGRESSION)
			rc = kv(out, "start_pct", "%" PRIu32, p->regression_start_pct);
		break;
	case WK_GC_OVERHEAD:
		if (r->found) {
			rc = kv(out, "gc_time_ms", "%" PRIu64, ms(r->gc_ns));
			if (!rc) rc = kv(out, "gc_overhead_pct", "%" PRId64,
					 (int64_t)floor(r->per_s * 100 + 1e-9));
		}
		if (!rc) rc = kv(out, "min_gcs", "%" PRIu32, p->gc_window_min);
		if (!rc) rc = kv(out, "max_gcs", "%" PRIu32, p->gc_window_max);
		if (!rc) rc = kv(out, "threshold_pct", "%" PRIu32, p->gc_overhead_min_pct);
		break;
	default:
		if (r->found) {
			rc = kv(out, "freed_bytes", "%" PRIu64, r->freed_bytes);
			if (!rc) rc = kv(out, "churn_bytes_per_s", "%" PRId64, round_i64(r->per_s));
		}
		if (!rc) rc = kv(out, "min_gcs", "%" PRIu32, p->churn_window_min);
		if (!rc) rc = kv(out, "max_gcs", "%" PRIu32, p->churn_window_max);
		if (!rc) rc = kv(out, "threshold_bytes_per_s", "%" PRIu64, p->churn_min_bytes_per_s);
		break;
	}
	return rc;
}

int render_window_file(struct hfs *fs, enum win_kind k, struct buf *out)
{
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (rc)
		return rc;
	const struct win_result *r = &res[k];
	rc = kv(out, "kind", "%s", kind_names[k]);
	if (!rc) rc = kv(out, "found", "%s", r->found ? "yes" : "no");
	if (!rc && r->found) rc = window_keys(fs, r, out);
	if (!rc && k <= WK_REGRESSION) {
		char src[128];
		leak_source(fs, src, sizeof src);
		rc = kv(out, "series", "%s", src);
	}
	if (!rc && k >= WK_GC_OVERHEAD) {
		struct win_state_info wi;
		win_state_info(fs->en.win, &wi);
		if (wi.program_time)
			rc = kv(out, "clock", "program: the recording's time less the %" PRIu64 " ms its "
				"recorder took (allocation callbacks and heap walks, trace info agent.overhead); "
				"rates and shares are the program's own, start_ms and end_ms the recording's",
				ms(wi.removed_ns));
		else
			rc = kv(out, "clock", "%s", "wall: the recording's time");
	}
	if (!rc) rc = kind_keys(fs, k, r, out);
	if (!rc) rc = kv(out, "reason", "%s", r->reason);
	return rc;
}

static const struct tcol summary_cols[] = {
	{ "kind", TCOL_STR }, { "found", TCOL_STR }, { "start_gc", TCOL_U64 },
	{ "end_gc", TCOL_U64 }, { "start_ms", TCOL_U64 }, { "end_ms", TCOL_U64 },
	{ "gcs", TCOL_U64 }, { "metric", TCOL_STR }, { "value", TCOL_I64 },
	{ "threshold", TCOL_STR }, { "reason", TCOL_STR },
};

int render_windows_summary(struct hfs *fs, struct buf *out)
{
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (rc)
		return rc;
	struct win_state_info wi;
	win_state_info(fs->en.win, &wi);
	const struct win_params *params = wi.params;
	struct table tb;
	table_init(&tb, summary_cols, sizeof summary_cols / sizeof *summary_cols);
	for (int k = 0; k < WK_COUNT && !rc; k++) {
		const struct win_result *r = &res[k];
		const char *mname;
		int64_t value = 0;
		char thr[96];
		metric_of(params, (enum win_kind)k, r, &mname, &value, thr, sizeof thr);
		if ((rc = table_add_row(&tb)))
			break;
		table_set_str(&tb, 0, kind_names[k], strlen(kind_names[k]));
		table_set_str(&tb, 1, r->found ? "yes" : "no", r->found ? 3 : 2);
		if (r->found) {
			table_set_u64(&tb, 2, fs->en.trace->gcs[r->start_gci].gc);
			table_set_u64(&tb, 3, fs->en.trace->gcs[r->end_gci].gc);
			table_set_u64(&tb, 4, ms(r->start_ns));
			table_set_u64(&tb, 5, ms(r->end_ns));
			table_set_u64(&tb, 6, r->end_gci - r->start_gci + 1);
			table_set_i64(&tb, 8, value);
		}
		table_set_str(&tb, 7, mname, strlen(mname));
		table_set_str(&tb, 9, thr, strlen(thr));
		table_set_str(&tb, 10, r->reason, strlen(r->reason));
	}
	if (!rc)
		rc = table_render_tsv(&tb, out);
	table_free(&tb);
	return rc;
}

int render_windows_status(struct hfs *fs, struct buf *out)
{
	struct win_state_info w;
	win_state_info(fs->en.win, &w);
	const char *s = w.reach_ready ? "done" : w.reach_busy ? "running" : w.reach_err ? "failed"
		: "not computed yet (on first read of timeline/ or windows/)";
	int rc = buf_printf(out, "reachable_series\t%s\n", s);
	if (!rc && (w.reach_ready || w.reach_busy))
		rc = buf_printf(out, "reachable_done\t%" PRIu64 "\nreachable_total\t%" PRIu64 "\n",
				w.done, w.total);
	if (!rc)
		rc = buf_printf(out, "reachable_every\t%" PRIu32 "\n", w.params->reachable_every);
	return rc;
}

/* ---- timeline/memory.svg -------------------------------------------------- */

#define SVG_W 1200
#define SVG_H 600
#define PX0 90.0               /* plot area */
#define PX1 1180.0
#define PY0 70.0
#define PY1 430.0
#define GY0 460.0              /* pause strip */
#define GY1 520.0

static const char *const kind_colors[WK_COUNT] = {
	[WK_LEAK] = "#ff9800", [WK_NARROW] = "#e91e63", [WK_REGRESSION] = "#9c27b0",
	[WK_GC_OVERHEAD] = "#f44336", [WK_CHURN] = "#00acc1",
};
#define USED_COLOR "#1f77b4"
#define REACH_COLOR "#2ca02c"
#define PAUSE_COLOR "#555555"

struct plot {
	double tmax_ms, vmax;      /* axis ranges */
	double vscale;             /* bytes per axis unit (MiB, KiB, B) */
	const char *vunit;
};

static double px(const struct plot *p, double t_ms)
{
	return PX0 + (p->tmax_ms > 0 ? t_ms / p->tmax_ms : 0) * (PX1 - PX0);
}

static double py(const struct plot *p, double v)
{
	return PY1 - (p->vmax > 0 ? v / p->vmax : 0) * (PY1 - PY0);
}

/* 1, 2 or 5 times a power of ten, so that range/step is about n. */
static double nice_step(double range, int n)
{
	if (range <= 0)
		return 1;
	double raw = range / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static int svg_text_escaped(struct buf *out, const char *s)
{
	int rc = 0;
	for (; *s && !rc; s++) {
		switch (*s) {
		case '&': rc = buf_printf(out, "&amp;"); break;
		case '<': rc = buf_printf(out, "&lt;"); break;
		case '>': rc = buf_printf(out, "&gt;"); break;
		case '"': rc = buf_printf(out, "&quot;"); break;
		default:
			rc = (unsigned char)*s < 0x20 ? buf_putc(out, ' ') : buf_putc(out, (uint8_t)*s);
		}
	}
	return rc;
}

/* Downsampling that keeps extremes: per pixel column, the first, lowest,
 * highest and last point in time order. */
struct ds {
	struct buf *out;
	int col;                   /* current column, -1 none */
	double x[4], y[4];         /* first, min, max, last */
	uint64_t seq[4];
	uint64_t n;                /* points fed */
	int rc;
};

static void ds_flush(struct ds *d)
{
	if (d->col < 0)
		return;
	int order[4] = { 0, 1, 2, 3 };
	for (int i = 1; i < 4; i++) /* by sequence number */
		for (int j = i; j > 0 && d->seq[order[j]] < d->seq[order[j - 1]]; j--) {
			int tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	uint64_t last = UINT64_MAX;
	for (int i = 0; i < 4 && !d->rc; i++) {
		int k = order[i];
		if (d->seq[k] == last)
			continue;
		last = d->seq[k];
		d->rc = buf_printf(d->out, "%.1f,%.1f ", d->x[k], d->y[k]);
	}
	d->col = -1;
}

static void ds_add(struct ds *d, double x, double y)
{
	int col = (int)floor(x);
	uint64_t s = d->n++;
	if (col != d->col) {
		ds_flush(d);
		d->col = col;
		for (int i = 0; i < 4; i++) {
			d->x[i] = x;
			d->y[i] = y;
			d->seq[i] = s;
		}
		return;
	}
	/* screen y grows downwards: the highest value has the lowest y */
	if (y > d->y[1]) { d->x[1] = x; d->y[1] = y; d->seq[1] = s; }
	if (y < d->y[2]) { d->x[2] = x; d->y[2] = y; d->seq[2] = s; }
	d->x[3] = x;
	d->y[3] = y;
	d->seq[3] = s;
}

static void plot_ranges(const struct trace *t, const uint64_t *reach, struct plot *p)
{
	double tmax = 0, vmax = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		const struct htr_gc_summary *x = &t->gcs[g];
		double e = (double)win_rel_ns(t, x->end_ns) / 1e6;
		tmax = e > tmax ? e : tmax;
		if (x->used_before != NONE && (double)x->used_before > vmax)
			vmax = (double)x->used_before;
		if (x->used_after != NONE && (double)x->used_after > vmax)
			vmax = (double)x->used_after;
		if (reach[g] != NONE && (double)reach[g] > vmax)
			vmax = (double)reach[g];
	}
	double last = (double)win_rel_ns(t, t->last_ns) / 1e6;
	p->tmax_ms = last > tmax ? last : tmax;
	if (p->tmax_ms <= 0)
		p->tmax_ms = 1;
	p->vscale = vmax >= (1 << 20) ? (1 << 20) : vmax >= 1024 ? 1024 : 1;
	p->vunit = vmax >= (1 << 20) ? "MiB" : vmax >= 1024 ? "KiB" : "bytes";
	double step = nice_step(vmax / p->vscale, 5);
	p->vmax = ceil((vmax / p->vscale) / step) * step * p->vscale;
	if (p->vmax <= 0)
		p->vmax = p->vscale;
}

/* A tick label: integers in full (no 1e+06), else up to 6 significant
 * digits. */
static const char *tick(char buf[32], double v)
{
	if (fabs(v) < 1e15 && v == floor(v))
		snprintf(buf, 32, "%.0f", v);
	else
		snprintf(buf, 32, "%.6g", v);
	return buf;
}

static int svg_axes(struct buf *out, const struct plot *p)
{
	char lb[32];
	int rc = buf_printf(out, "<g stroke=\"#ccc\" stroke-width=\"1\">\n");
	double vstep = nice_step(p->vmax / p->vscale, 5) * p->vscale;
	for (double v = 0; !rc && v <= p->vmax * 1.0001; v += vstep)
		rc = buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0,
				py(p, v), PX1, py(p, v));
	if (!rc) rc = buf_printf(out, "</g>\n<g fill=\"#333\" text-anchor=\"end\">\n");
	for (double v = 0; !rc && v <= p->vmax * 1.0001; v += vstep)
		rc = buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", PX0 - 6,
				py(p, v) + 4, tick(lb, v / p->vscale));
	/* time axis: seconds when the run is long, else milliseconds */
	int secs = p->tmax_ms >= 2000;
	double unit = secs ? 1000 : 1, tstep = nice_step(p->tmax_ms / unit, 10) * unit;
	if (!rc) rc = buf_printf(out, "</g>\n<g fill=\"#333\" text-anchor=\"middle\">\n");
	for (double t = 0; !rc && t <= p->tmax_ms * 1.0001; t += tstep)
		rc = buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
				px(p, t), GY1, px(p, t), GY1 + 5, px(p, t), GY1 + 19, tick(lb, t / unit));
	if (!rc)
		rc = buf_printf(out, "</g>\n"
				"<g stroke=\"#333\" stroke-width=\"1\" fill=\"none\">"
				"<path d=\"M%.1f %.1f V%.1f H%.1f\"/>"
				"<path d=\"M%.1f %.1f V%.1f H%.1f\"/></g>\n"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">time since "
				"trace start (%s)</text>\n"
				"<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\" "
				"fill=\"#333\">heap (%s)</text>\n"
				"<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\" "
				"fill=\"#333\" font-size=\"10\">GC pause</text>\n",
				PX0, PY0, PY1, PX1, PX0, GY0, GY1, PX1, (PX0 + PX1) / 2, GY1 + 40,
				secs ? "s" : "ms", (PY0 + PY1) / 2, p->vunit, (GY0 + GY1) / 2);
	return rc;
}

static int svg_windows(struct buf *out, const struct plot *p, const struct win_result *res,
		       const struct trace *t)
{
	int rc = 0, row = 0;
	for (int k = 0; k < WK_COUNT && !rc; k++) {
		const struct win_result *r = &res[k];
		if (!r->found)
			continue;
		double x0 = px(p, (double)r->start_ns / 1e6), x1 = px(p, (double)r->end_ns / 1e6);
		if (x1 - x0 < 2)
			x1 = x0 + 2;
		rc = buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\" fill-opacity=\"0.12\" stroke=\"%s\" stroke-opacity=\"0.7\">"
				"<title>%s: GC %" PRIu32 "..%" PRIu32 "</title></rect>\n",
				x0, PY0, x1 - x0, GY1 - PY0, kind_colors[k], kind_colors[k], kind_names[k],
				t->gcs[r->start_gci].gc, t->gcs[r->end_gci].gc);
		double lx = x0 + 3 > PX1 - 150 ? PX1 - 150 : x0 + 3;
		/* a solid bar over the window's span on the label's row: readable
		 * where shaded windows overlap */
		if (!rc)
			rc = buf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"3\" "
					"fill=\"%s\"/>\n", x0, PY0 + 16 + 17 * row, x1 - x0,
					kind_colors[k]);
		if (!rc)
			rc = buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"11\" "
					"font-weight=\"bold\">%s (GC %" PRIu32 "-%" PRIu32 ")</text>\n",
					lx, PY0 + 13 + 17 * row, kind_colors[k], kind_names[k],
					t->gcs[r->start_gci].gc, t->gcs[r->end_gci].gc);
		row++;
	}
	return rc;
}

/* Heap used: rises to used_before at each GC start, falls to used_after
 * at its end. */
static int svg_used(struct buf *out, const struct plot *p, const struct trace *t)
{
	struct ds d = { .out = out, .col = -1 };
	d.rc = buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" "
			  "stroke-linejoin=\"round\" points=\"", USED_COLOR);
	for (uint32_t g = 0; g < t->ngcs && !d.rc; g++) {
		const struct htr_gc_summary *x = &t->gcs[g];
		if (x->used_before != NONE)
			ds_add(&d, px(p, (double)win_rel_ns(t, x->start_ns) / 1e6),
			       py(p, (double)x->used_before));
		if (x->used_after != NONE)
			ds_add(&d, px(p, (double)win_rel_ns(t, x->end_ns) / 1e6),
			       py(p, (double)x->used_after));
	}
	ds_flush(&d);
	return d.rc ? d.rc : buf_printf(out, "\"/>\n");
}

static int svg_reachable(struct buf *out, const struct plot *p, const struct trace *t,
			 const uint64_t *reach, uint32_t nsampled)
{
	if (nsampled == 0)
		return 0;
	struct ds d = { .out = out, .col = -1 };
	d.rc = buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
			  "stroke-linejoin=\"round\" points=\"", REACH_COLOR);
	for (uint32_t g = 0; g < t->ngcs && !d.rc; g++)
		if (reach[g] != NONE)
			ds_add(&d, px(p, (double)win_rel_ns(t, t->gcs[g].end_ns) / 1e6),
			       py(p, (double)reach[g]));
	ds_flush(&d);
	int rc = d.rc ? d.rc : buf_printf(out, "\"/>\n");
	if (nsampled > 300 || rc)
		return rc;
	rc = buf_printf(out, "<g fill=\"%s\">", REACH_COLOR);
	for (uint32_t g = 0; g < t->ngcs && !rc; g++)
		if (reach[g] != NONE)
			rc = buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>",
					px(p, (double)win_rel_ns(t, t->gcs[g].end_ns) / 1e6),
					py(p, (double)reach[g]));
	return rc ? rc : buf_printf(out, "</g>\n");
}

/* One bar per pixel column: the longest pause in it. */
static int svg_pauses(struct buf *out, const struct plot *p, const struct trace *t)
{
	double maxp = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		const struct htr_gc_summary *x = &t->gcs[g];
		double d = x->end_ns > x->start_ns ? (double)(x->end_ns - x->start_ns) / 1e6 : 0;
		maxp = d > maxp ? d : maxp;
	}
	int rc = buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333\" "
			    "font-size=\"10\">%g ms</text>\n<path stroke=\"%s\" stroke-width=\"1\" d=\"",
			    PX0 - 6, GY0 + 8, maxp, PAUSE_COLOR);
	int col = -1;
	double colmax = 0;
	for (uint32_t g = 0; g <= t->ngcs && !rc; g++) {
		int c = -2;
		double d = 0;
		if (g < t->ngcs) {
			const struct htr_gc_summary *x = &t->gcs[g];
			d = x->end_ns > x->start_ns ? (double)(x->end_ns - x->start_ns) / 1e6 : 0;
			c = (int)floor(px(p, (double)win_rel_ns(t, x->start_ns) / 1e6));
		}
		if (c != col && col >= 0 && maxp > 0)
			rc = buf_printf(out, "M%d.5 %.1fV%.1f", col, GY1,
					GY1 - fmax(1, colmax / maxp * (GY1 - GY0)));
		if (c != col) {
			col = c;
			colmax = 0;
		}
		colmax = d > colmax ? d : colmax;
	}
	return rc ? rc : buf_printf(out, "\"/>\n");
}

static int svg_legend(struct buf *out, const struct win_result *res, uint32_t nsampled)
{
	double x = PX0;
	int rc = buf_printf(out, "<g font-size=\"12\" fill=\"#333\">\n"
			    "<line x1=\"%.1f\" y1=\"44\" x2=\"%.1f\" y2=\"44\" stroke=\"%s\" "
			    "stroke-width=\"2\"/><text x=\"%.1f\" y=\"48\">heap used</text>\n",
			    x, x + 24, USED_COLOR, x + 30);
	x += 110;
	if (!rc && nsampled) {
		rc = buf_printf(out, "<line x1=\"%.1f\" y1=\"44\" x2=\"%.1f\" y2=\"44\" stroke=\"%s\" "
				"stroke-width=\"3\"/><text x=\"%.1f\" y=\"48\">reachable</text>\n",
				x, x + 24, REACH_COLOR, x + 30);
		x += 110;
	}
	int any = 0;
	for (int k = 0; k < WK_COUNT && !rc; k++) {
		if (!res[k].found)
			continue;
		any = 1;
		rc = buf_printf(out, "<rect x=\"%.1f\" y=\"37\" width=\"14\" height=\"14\" fill=\"%s\" "
				"fill-opacity=\"0.35\" stroke=\"%s\"/><text x=\"%.1f\" y=\"48\">%s "
				"window</text>\n", x, kind_colors[k], kind_colors[k], x + 20,
				kind_names[k]);
		x += 40 + 8.0 * (double)strlen(kind_names[k]) + 50;
	}
	if (!rc && !any)
		rc = buf_printf(out, "<text x=\"%.1f\" y=\"48\">no suspicious window found "
				"(see windows/summary)</text>\n", x);
	return rc ? rc : buf_printf(out, "</g>\n");
}

int render_memory_svg(struct hfs *fs, struct buf *out)
{
	const struct trace *t = fs->en.trace;
	const uint64_t *reach;
	const struct win_result *res;
	int rc = eng_windows_results(&fs->en, &res);
	if (!rc)
		rc = eng_reachable_series(&fs->en, &reach);
	if (rc)
		return rc;
	struct plot p;
	plot_ranges(t, reach, &p);
	const char *base = strrchr(t->path, '/');
	rc = buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
			"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
			"<text x=\"%.1f\" y=\"24\" font-size=\"16\" fill=\"#222\">Heap memory over time: ",
			SVG_W, SVG_H, SVG_W, SVG_H, PX0);
	if (!rc) rc = svg_text_escaped(out, base ? base + 1 : t->path);
	if (!rc) rc = buf_printf(out, " (%" PRIu32 " GCs)</text>\n", t->ngcs);
	if (!rc && t->ngcs == 0)
		rc = buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">no GCs in this trace</text>\n",
				PX0, (PY0 + PY1) / 2);
	if (!rc) rc = svg_axes(out, &p);
	if (!rc) rc = svg_windows(out, &p, res, t);
	if (!rc) rc = svg_used(out, &p, t);
	struct win_state_info wi;
	win_state_info(fs->en.win, &wi);
	if (!rc) rc = svg_reachable(out, &p, t, reach, wi.nsampled);
	if (!rc) rc = svg_pauses(out, &p, t);
	if (!rc) rc = svg_legend(out, res, wi.nsampled);
	return rc ? rc : buf_printf(out, "</svg>\n");
}

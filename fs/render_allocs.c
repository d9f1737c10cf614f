/* render_allocs.c - see render_allocs.h. */
#include "render_allocs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "model/htr_reader.h"
#include "analyses/classify.h"
#include "analyses/samples.h"
#include "table.h"
#include "tree_internal.h"

/* One (site, type) with its count; rows own their strings. */
struct arow {
	char *site;      /* Class.method:line */
	char *method;    /* Class.method */
	char *type;
	char *desc;      /* NULL: unknown (full recordings) */
	int64_t bci;     /* -1: unknown */
	int64_t count;
	char *top_caller; /* NULL: no caller recorded (an application site, or not a counts trace) */
	int64_t top_caller_count;
	int64_t callers;  /* distinct application callers recorded */
};

struct arows {
	struct arow *r;
	uint32_t n, cap;
};

/* Aggregation by string key (site<TAB>type, or method<TAB>desc). */
struct agg {
	UT_hash_handle hh;
	uint32_t row;
	char key[];
};

static void rows_free(struct arows *a)
{
	for (uint32_t i = 0; i < a->n; i++) {
		free(a->r[i].site);
		free(a->r[i].method);
		free(a->r[i].type);
		free(a->r[i].desc);
		free(a->r[i].top_caller);
	}
	free(a->r);
	memset(a, 0, sizeof(*a));
}

static void agg_free(struct agg **h)
{
	struct agg *e, *tmp;
	HASH_ITER(hh, *h, e, tmp) {
		HASH_DEL(*h, e);
		free(e);
	}
}

/* Adds count to the row of (site, type), creating it.  Strings are copied.
 * *row (nullable) gets the row's index. */
static int rows_add(struct arows *a, struct agg **h, const char *site, const char *method, const char *type,
		    const char *desc, int64_t bci, int64_t count, uint32_t *row)
{
	size_t kl = strlen(site) + strlen(type) + 24;
	char *key = malloc(kl);
	if (!key)
		return -ENOMEM;
	snprintf(key, kl, "%s\t%s\t%" PRId64, site, type, bci);
	struct agg *e;
	HASH_FIND_STR(*h, key, e);
	if (e) {
		a->r[e->row].count += count;
		if (row)
			*row = e->row;
		free(key);
		return 0;
	}
	if (a->n == a->cap) {
		uint32_t cap = a->cap ? a->cap * 2 : 64;
		struct arow *r = realloc(a->r, cap * sizeof(*r));
		if (!r) {
			free(key);
			return -ENOMEM;
		}
		a->r = r;
		a->cap = cap;
	}
	e = malloc(sizeof(*e) + strlen(key) + 1);
	struct arow *r = &a->r[a->n];
	memset(r, 0, sizeof(*r));
	r->site = strdup(site);
	r->method = strdup(method);
	r->type = strdup(type);
	r->desc = desc ? strdup(desc) : NULL;
	r->bci = bci;
	r->count = count;
	if (!e || !r->site || !r->method || !r->type || (desc && !r->desc)) {
		free(e);
		free(key);
		free(r->site); free(r->method); free(r->type); free(r->desc);
		return -ENOMEM;
	}
	strcpy(e->key, key);
	free(key);
	if (row)
		*row = a->n;
	e->row = a->n++;
	HASH_ADD_STR(*h, key, e);
	return 0;
}

/* A site's allocating frame f and its method, NUL-terminated, as by-site/
 * names them (sym_frame, sym_method): no line when the class has none,
 * <unknown method N> for a method without a METHOD event; <unknown site>
 * and <unknown method> when the site has no frame (f NULL: a recording
 * with depth=0), as gc/NNN/by-site/ names such objects. */
static int method_names(const struct trace *t, const struct htr_site_frame *f, struct buf *site, struct buf *meth)
{
	buf_reset(site);
	buf_reset(meth);
	int rc = f ? sym_frame(t, f, site) : buf_printf(site, "<unknown site>");
	if (!rc)
		rc = f ? sym_method(t, f->method, meth) : buf_printf(meth, "<unknown method>");
	if (!rc)
		rc = buf_putc(site, '\0');
	return rc ? rc : buf_putc(meth, '\0');
}

static int callers_merged(const struct trace *t, struct htr_count_caller **out, uint32_t *n);

/* Row r's caller columns from site id's run in c[] (callers_merged's
 * order: a site's callers by count, most first), if it has one.  Two
 * count sites that name one row (same frame, type and bci) add up their
 * callers and keep the bigger top caller. */
static int attach_callers(const struct trace *t, struct arow *r, const struct htr_count_caller *c, uint32_t n,
			  uint32_t *next, uint32_t site, struct buf *name)
{
	uint32_t i = *next;
	while (i < n && c[i].site < site)
		i++;
	uint32_t first = i;
	for (; i < n && c[i].site == site; i++)
		if (c[i].count)
			r->callers++;
	*next = i;
	if (first == i || !c[first].count || (r->top_caller && r->top_caller_count >= (int64_t)c[first].count))
		return 0;
	const struct htr_site_frame g = { c[first].method, c[first].line };
	buf_reset(name);
	int rc = sym_frame(t, &g, name);
	if (!rc)
		rc = buf_putc(name, '\0');
	if (rc)
		return rc;
	free(r->top_caller);
	if (!(r->top_caller = strdup((const char *)name->data)))
		return -ENOMEM;
	r->top_caller_count = (int64_t)c[first].count;
	return 0;
}

/* From the counters' totals (format 1.1), each JDK site with the
 * application callers the agent recorded above it (format 1.4). */
static int rows_from_counts(const struct trace *t, struct arows *a)
{
	struct agg *h = NULL;
	struct htr_count_caller *c = NULL;
	uint32_t nc = 0, next = 0;
	struct buf site, meth;
	buf_init(&site);
	buf_init(&meth);
	int rc = callers_merged(t, &c, &nc);
	for (uint32_t id = 0; id < t->ncount_sites && !rc; id++) {
		const struct trace_count_site *cs = &t->count_sites[id];
		int64_t n = id < t->nsite_counts ? t->site_counts[id] : 0;
		if (!cs->type || n == 0)
			continue;
		const struct htr_site_frame f = { cs->method, cs->line };
		if ((rc = method_names(t, &f, &site, &meth)))
			break;
		const char *desc = cs->method < t->nmethods && t->methods[cs->method].sig ? t->methods[cs->method].sig
											  : "";
		uint32_t row;
		rc = rows_add(a, &h, (const char *)site.data, (const char *)meth.data, cs->type, desc, cs->bci, n, &row);
		if (!rc)
			rc = attach_callers(t, &a->r[row], c, nc, &next, id, &site);
	}
	agg_free(&h);
	free(c);
	buf_free(&site);
	buf_free(&meth);
	return rc;
}

/* Counts per (site id, type id) from the allocation events. */
struct st_count {
	UT_hash_handle hh;
	uint64_t key;   /* site << 32 | type */
	int64_t n;
};

static int count_alloc(void *ctx, const struct htr_event *ev)
{
	struct st_count **h = ctx;
	if (ev->type != HTR_EV_ALLOC || (ev->u.alloc.flags & HTR_ALLOC_PREEXISTING))
		return 0;
	uint64_t key = (uint64_t)ev->u.alloc.site << 32 | ev->u.alloc.type;
	struct st_count *e;
	HASH_FIND(hh, *h, &key, sizeof(key), e);
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		e->key = key;
		HASH_ADD(hh, *h, key, sizeof(e->key), e);
	}
	e->n++;
	return 0;
}

static int scan_allocs(struct hfs *fs, struct st_count **h)
{
	struct htr_err err;
	memset(&err, 0, sizeof(err));
	int rc = trace_each_event(fs->en.trace, count_alloc, h, &err);
	if (rc && rc != -ENOMEM) {
		eng_set_error(&fs->en, &err);
		return -EIO;
	}
	return rc;
}

static int rows_from_events(struct hfs *fs, struct arows *a)
{
	const struct trace *t = fs->en.trace;
	struct st_count *h = NULL, *e, *tmp;
	struct agg *g = NULL;
	int rc = scan_allocs(fs, &h);
	char scratch[64];
	struct buf site, meth;
	buf_init(&site);
	buf_init(&meth);
	HASH_ITER(hh, h, e, tmp) {
		uint32_t s = (uint32_t)(e->key >> 32), type = (uint32_t)e->key;
		if (!rc) {
			const struct trace_site *ts = s < t->nsites && t->sites[s].nframes ? &t->sites[s] : NULL;
			const char *desc = ts && ts->frames[0].method < t->nmethods ? t->methods[ts->frames[0].method].sig
										  : NULL;
			rc = method_names(t, ts ? &ts->frames[0] : NULL, &site, &meth);
			if (!rc)
				rc = rows_add(a, &g, (const char *)site.data, (const char *)meth.data,
					      trace_type_name(t, type, scratch, sizeof(scratch)), desc, -1, e->n, NULL);
		}
		HASH_DEL(h, e);
		free(e);
	}
	agg_free(&g);
	buf_free(&site);
	buf_free(&meth);
	return rc;
}

static int by_count(const void *x, const void *y)
{
	const struct arow *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int c = strcmp(a->site, b->site);
	return c ? c : strcmp(a->type, b->type);
}

static const struct tcol site_cols[] = {
	{ "site", TCOL_STR }, { "type", TCOL_STR }, { "count", TCOL_I64 }, { "bci", TCOL_I64 }, { "descriptor", TCOL_STR },
	{ "top_caller", TCOL_STR }, { "top_caller_count", TCOL_I64 }, { "callers", TCOL_I64 },
};
static const struct tcol method_cols[] = {
	{ "method", TCOL_STR }, { "descriptor", TCOL_STR }, { "count", TCOL_I64 },
};
static const struct tcol stats_cols[] = {
	{ "name", TCOL_STR }, { "value", TCOL_STR },
};

static void set_s(struct table *t, uint32_t col, const char *s)
{
	table_set_str(t, col, s, strlen(s));
}

static int table_by_site(const struct arows *a, struct table *t)
{
	table_init(t, site_cols, 8);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct arow *r = &a->r[i];
		if (table_add_row(t))
			return -ENOMEM;
		set_s(t, 0, r->site);
		set_s(t, 1, r->type);
		table_set_i64(t, 2, r->count);
		if (r->bci >= 0)
			table_set_i64(t, 3, r->bci);
		if (r->desc)
			set_s(t, 4, r->desc);
		if (r->top_caller) {
			set_s(t, 5, r->top_caller);
			table_set_i64(t, 6, r->top_caller_count);
			table_set_i64(t, 7, r->callers);
		}
	}
	return 0;
}

static int table_by_method(const struct arows *a, struct table *t)
{
	struct arows m = { 0 };
	struct agg *h = NULL;
	int rc = 0;
	/* rows keyed by method and descriptor (the site column holds the method) */
	for (uint32_t i = 0; i < a->n && !rc; i++)
		rc = rows_add(&m, &h, a->r[i].method, a->r[i].method, a->r[i].desc ? a->r[i].desc : "", a->r[i].desc,
			      -1, a->r[i].count, NULL);
	agg_free(&h);
	if (!rc) {
		qsort(m.r, m.n, sizeof(*m.r), by_count);
		table_init(t, method_cols, 3);
		for (uint32_t i = 0; i < m.n && !rc; i++) {
			if (table_add_row(t)) {
				rc = -ENOMEM;
				break;
			}
			set_s(t, 0, m.r[i].method);
			if (m.r[i].desc)
				set_s(t, 1, m.r[i].desc);
			table_set_i64(t, 2, m.r[i].count);
		}
	}
	rows_free(&m);
	return rc;
}

static int stat_row(struct table *t, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int stat_row(struct table *t, const char *name, const char *fmt, ...)
{
	if (table_add_row(t))
		return -ENOMEM;
	set_s(t, 0, name);
	if (fmt) {
		char v[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(v, sizeof(v), fmt, ap);
		va_end(ap);
		set_s(t, 1, v);
	}
	return 0;
}

/* The rows only counters have (empty for allocation events). */
static const char *const count_only_keys[] = { "final", "increments_kind", "threads_max", "exact",
						 "uncounted_methods", "failed_classes", NULL };

/* Whether the counts are exact, from what the agent wrote at exit
 * (count.* info keys): plain increments lose counts when threads race,
 * path counters need exception corrections, and methods or classes left
 * uninstrumented count nothing.  The rows increments_kind, threads_max,
 * exact, uncounted_methods and failed_classes. */
static int stat_exactness(const struct trace *tr, struct table *t)
{
	const char *inc = trace_info(tr, "count.increments"), *exc = trace_info(tr, "count.exceptions");
	const char *threads = trace_info(tr, "count.threads_max");
	int rc = stat_row(t, "increments_kind", inc ? "%s" : NULL, inc);
	if (!rc)
		rc = stat_row(t, "threads_max", threads ? "%s" : NULL, threads);
	if (rc)
		return rc;
	if (!inc || !threads || !exc) {
		rc = stat_row(t, "exact", "unknown (the agent wrote no count.* keys at exit: the run did not end "
					"cleanly, or an older agent)");
		if (!rc)
			rc = stat_row(t, "uncounted_methods", NULL);
		return rc ? rc : stat_row(t, "failed_classes", NULL);
	}
	char why[512] = "";
	if (!strcmp(inc, "plain") && strtoull(threads, NULL, 10) >= 2)
		snprintf(why, sizeof(why), "%s threads that ran instrumented code were alive at once and increments "
			 "are plain, which racing threads can lose (atomic=on is exact)", threads);
	if ((tr->count_flags & HTR_COUNTS_PATHS) && !strcmp(exc, "off"))
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sexceptions=off: a frame an exception "
			 "leaves mid-path is not corrected", why[0] ? "; " : "");
	/* (agents before these keys: nothing said, as before) */
	const char *un = trace_info(tr, "count.uncounted_methods"), *fc = trace_info(tr, "count.failed_classes");
	if (un && strtoull(un, NULL, 10))
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s methods with allocation sites were "
			 "left uninstrumented (their allocations are not counted)", why[0] ? "; " : "", un);
	if (fc && strtoull(fc, NULL, 10))
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s classes could not be instrumented",
			 why[0] ? "; " : "", fc);
	rc = why[0] ? stat_row(t, "exact", "not guaranteed: %s", why) : stat_row(t, "exact", "yes");
	if (!rc)
		rc = stat_row(t, "uncounted_methods", un ? "%s" : NULL, un);
	return rc ? rc : stat_row(t, "failed_classes", fc ? "%s" : NULL, fc);
}

static int table_stats(const struct trace *tr, const struct arows *a, struct table *t)
{
	table_init(t, stats_cols, 2);
	int64_t total = 0;
	uint64_t methods = 0;
	struct agg *h = NULL;
	struct arows m = { 0 };
	int rc = 0;
	for (uint32_t i = 0; i < a->n && !rc; i++) {
		total += a->r[i].count;
		rc = rows_add(&m, &h, a->r[i].method, a->r[i].method, "", NULL, -1, 0, NULL);
	}
	methods = m.n;
	agg_free(&h);
	rows_free(&m);
	if (rc)
		return rc;
	int counts = tr->has_counts;
	rc = stat_row(t, "source", "%s", counts ? "counters" : "allocation events");
	if (!rc)
		rc = stat_row(t, "counting", "%s", !counts ? "-" : (tr->count_flags & HTR_COUNTS_PATHS) ? "paths" : "sites");
	if (!rc)
		rc = stat_row(t, "allocations", "%" PRId64, total);
	if (!rc)
		rc = stat_row(t, "sites", "%u", a->n);
	if (!rc)
		rc = stat_row(t, "methods", "%" PRIu64, methods);
	if (!counts) {
		if (!rc)
			rc = stat_row(t, "increments", NULL);
		if (!rc)
			rc = stat_row(t, "per_site_increments", NULL);
		if (!rc)
			rc = stat_row(t, "saved_percent", NULL);
		for (const char *const *k = count_only_keys; *k && !rc; k++)
			rc = stat_row(t, *k, NULL);
		return rc;
	}
	if (!rc)
		rc = stat_row(t, "increments", "%" PRIu64, tr->count_increments);
	if (!rc)
		rc = stat_row(t, "per_site_increments", "%" PRIu64, tr->count_per_site);
	if (!rc)
		rc = stat_row(t, "saved_percent", "%.1f",
			      tr->count_per_site ? 100.0 * (1.0 - (double)tr->count_increments / (double)tr->count_per_site)
						 : 0.0);
	if (!rc)
		rc = stat_row(t, "final", "%s", (tr->count_flags & HTR_COUNTS_FINAL) ? "yes" : "no (the run did not end cleanly)");
	return rc ? rc : stat_exactness(tr, t);
}

/* ---- allocations per application caller (format 1.4: COUNT_CALLERS) ---- */

static const struct tcol caller_cols[] = {
	{ "site", TCOL_STR }, { "type", TCOL_STR }, { "caller", TCOL_STR }, { "count", TCOL_I64 },
	{ "bci", TCOL_I64 }, { "caller_bci", TCOL_I64 },
};

static int by_caller_key(const void *x, const void *y)
{
	const struct htr_count_caller *a = x, *b = y;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->method != b->method)
		return a->method < b->method ? -1 : 1;
	return a->bci < b->bci ? -1 : a->bci > b->bci;
}

/* Sites ascending, a site's callers by count, most first. */
static int by_site_count(const void *x, const void *y)
{
	const struct htr_count_caller *a = x, *b = y;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return by_caller_key(a, b);
}

/* The trace's entries, those with the same (site, method, bci) added up,
 * in key order: *out (caller frees), *n. */
static int callers_merged(const struct trace *t, struct htr_count_caller **out, uint32_t *n)
{
	*n = 0;
	*out = malloc(((size_t)t->ncount_callers + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	struct htr_count_caller *c = *out;
	if (t->ncount_callers)
		memcpy(c, t->count_callers, t->ncount_callers * sizeof(*c));
	qsort(c, t->ncount_callers, sizeof(*c), by_caller_key);
	uint32_t k = 0;
	for (uint32_t i = 0; i < t->ncount_callers; i++) {
		if (k && !by_caller_key(&c[k - 1], &c[i])) {
			if (__builtin_add_overflow(c[k - 1].count, c[i].count, &c[k - 1].count) ||
			    c[k - 1].count > INT64_MAX)
				return -EIO; /* no run counts that many: damage */
			continue;
		}
		c[k++] = c[i];
	}
	*n = k;
	qsort(c, k, sizeof(*c), by_site_count);
	return 0;
}

/* One row of allocs/by-caller; caller NULL: the site's allocations under
 * no recorded caller. */
static int caller_row(const struct trace *tr, struct table *t, uint32_t site, const struct htr_count_caller *c,
		      int64_t count, struct buf *name)
{
	const struct trace_count_site *cs = &tr->count_sites[site];
	const struct htr_site_frame f = { cs->method, cs->line };
	buf_reset(name);
	int rc = sym_frame(tr, &f, name);
	if (!rc)
		rc = buf_putc(name, '\0');
	if (rc || (rc = table_add_row(t)))
		return rc;
	set_s(t, 0, (const char *)name->data);
	set_s(t, 1, cs->type);
	if (c) {
		const struct htr_site_frame g = { c->method, c->line };
		buf_reset(name);
		if ((rc = sym_frame(tr, &g, name)) || (rc = buf_putc(name, '\0')))
			return rc;
		set_s(t, 2, (const char *)name->data);
		table_set_i64(t, 5, c->bci);
	} else {
		set_s(t, 2, "<no caller>");
	}
	table_set_i64(t, 3, count);
	table_set_i64(t, 4, cs->bci);
	return 0;
}

/* A site's run of merged entries and its rows' total. */
struct cgroup {
	uint32_t first, n;
	int64_t total, attributed, rest; /* rest: allocations under no caller */
};

static int by_group_total(const void *x, const void *y)
{
	const struct cgroup *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The sites of c[n] (site-ordered) as groups, biggest count first:
 * *out (caller frees), *ng. */
static int caller_groups(const struct trace *tr, const struct htr_count_caller *c, uint32_t n,
			 struct cgroup **out, uint32_t *ng)
{
	*ng = 0;
	if (!(*out = malloc(((size_t)n + 1) * sizeof(**out))))
		return -ENOMEM;
	for (uint32_t i = 0; i < n;) {
		struct cgroup *g = &(*out)[(*ng)++];
		*g = (struct cgroup){ i, 0, 0, 0, 0 };
		for (; i < n && c[i].site == c[g->first].site; i++, g->n++)
			if (__builtin_add_overflow(g->attributed, (int64_t)c[i].count, &g->attributed))
				return -EIO; /* more than any run counts: damage */
		uint32_t site = c[g->first].site;
		g->total = site < tr->nsite_counts ? tr->site_counts[site] : 0;
		if (__builtin_sub_overflow(g->total, g->attributed, &g->rest))
			return -EIO;
	}
	qsort(*out, *ng, sizeof(**out), by_group_total);
	return 0;
}

/* allocs/by-caller: per counted site that has callers, a row per caller
 * and one "<no caller>" row for the rest of its count (other threads,
 * calls not marked), so that a site's rows add up to its by-site count.
 * Sites by count, most first; a site's callers likewise. */
static int table_by_caller(const struct trace *tr, struct table *t)
{
	table_init(t, caller_cols, 6);
	struct htr_count_caller *c = NULL;
	struct cgroup *g = NULL;
	uint32_t n = 0, ng = 0;
	struct buf name;
	buf_init(&name);
	int rc = callers_merged(tr, &c, &n);
	if (!rc)
		rc = caller_groups(tr, c, n, &g, &ng);
	for (uint32_t k = 0; k < ng && !rc; k++) {
		uint32_t site = c[g[k].first].site;
		if (site >= tr->ncount_sites || !tr->count_sites[site].type)
			continue; /* no COUNT_SITE: nothing to name it by */
		for (uint32_t i = g[k].first; i < g[k].first + g[k].n && !rc; i++)
			if (c[i].count)
				rc = caller_row(tr, t, site, &c[i], (int64_t)c[i].count, &name);
		if (!rc && g[k].rest)
			rc = caller_row(tr, t, site, NULL, g[k].rest, &name);
	}
	buf_free(&name);
	free(g);
	free(c);
	return rc;
}

/* ---- sampled allocations (a JFR recording: analyses/samples.h) ---- */

/* A (site, type) or method row of estimates. */
struct srow {
	char *name, *type, *desc; /* owned; type NULL in method rows */
	uint64_t samples, weight;
	double est;
	int counted;              /* every sample behind the row has a count estimate */
};

static const struct tcol sampled_site_cols[] = {
	{ "site", TCOL_STR }, { "type", TCOL_STR }, { "samples", TCOL_U64 }, { "est_bytes", TCOL_U64 },
	{ "est_count", TCOL_U64 }, { "descriptor", TCOL_STR },
};
static const struct tcol sampled_method_cols[] = {
	{ "method", TCOL_STR }, { "descriptor", TCOL_STR }, { "samples", TCOL_U64 }, { "est_bytes", TCOL_U64 },
	{ "est_count", TCOL_U64 },
};

static void srows_free(struct srow *r, uint32_t n)
{
	for (uint32_t i = 0; r && i < n; i++) {
		free(r[i].name);
		free(r[i].type);
		free(r[i].desc);
	}
	free(r);
}

static uint64_t est_round(double v)
{
	return v < 0 ? 0 : (uint64_t)(v + 0.5);
}

static void sampled_cells(struct table *t, uint32_t col, const struct srow *r)
{
	table_set_u64(t, col, r->samples);
	table_set_u64(t, col + 1, r->weight);
	if (r->counted)
		table_set_u64(t, col + 2, est_round(r->est));
}

static int by_weight_desc(const void *x, const void *y)
{
	const struct srow *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Rows per site (type set) from the sample set; by_method folds them per
 * allocating method. */
static int sampled_rows(const struct trace *t, const struct sample_set *ss, int by_method, struct srow **out,
			uint32_t *nout)
{
	struct srow *r = calloc(ss->n ? ss->n : 1, sizeof *r);
	struct agg *h = NULL;
	struct buf site, meth;
	buf_init(&site);
	buf_init(&meth);
	uint32_t n = 0;
	int rc = r ? 0 : -ENOMEM;
	char scratch[64];
	for (uint32_t i = 0; i < ss->n && !rc; i++) {
		const struct sample_row *x = &ss->rows[i];
		const struct trace_site *ts = x->site < t->nsites && t->sites[x->site].nframes ? &t->sites[x->site] : NULL;
		const char *desc = ts && ts->frames[0].method < t->nmethods ? t->methods[ts->frames[0].method].sig : "";
		if ((rc = method_names(t, ts ? &ts->frames[0] : NULL, &site, &meth)))
			break;
		const char *name = by_method ? (const char *)meth.data : (const char *)site.data;
		const char *type = x->type == HTR_NO_TYPE ? "<unknown type>" : trace_type_name(t, x->type, scratch, sizeof scratch);
		char key[1024];
		snprintf(key, sizeof key, "%s\t%s\t%s", name, by_method ? "" : type, desc ? desc : "");
		struct agg *e;
		HASH_FIND_STR(h, key, e);
		struct srow *row;
		if (e) {
			row = &r[e->row];
			row->counted = row->counted && x->sized == x->samples;
		} else {
			if (!(e = malloc(sizeof *e + strlen(key) + 1))) {
				rc = -ENOMEM;
				break;
			}
			strcpy(e->key, key);
			e->row = n;
			HASH_ADD_STR(h, key, e);
			row = &r[n++];
			row->name = strdup(name);
			row->type = by_method ? NULL : strdup(type);
			row->desc = strdup(desc ? desc : "");
			row->counted = x->sized == x->samples;
			if (!row->name || (!by_method && !row->type) || !row->desc)
				rc = -ENOMEM;
		}
		row->samples += x->samples;
		row->weight += x->weight;
		row->est += x->est_count;
	}
	agg_free(&h);
	buf_free(&site);
	buf_free(&meth);
	if (rc) {
		srows_free(r, n);
		return rc;
	}
	qsort(r, n, sizeof *r, by_weight_desc);
	*out = r;
	*nout = n;
	return 0;
}

static const char *sampler_name(uint32_t kind)
{
	return kind == HTR_SAMPLE_JFR ? "jdk.ObjectAllocationSample"
	     : kind ? "jdk.ObjectAllocationInNewTLAB and jdk.ObjectAllocationOutsideTLAB" : "none";
}

static int sampled_stats(const struct trace *tr, const struct sample_set *ss, uint32_t nsites, uint32_t nmethods,
			 struct table *t)
{
	table_init(t, stats_cols, 2);
	int agent = ss->kind == SAMPLES_AGENT || tr->sample_interval;
	int rc = stat_row(t, "source", "%s", agent ? "sampled allocations (the agent's mode=sample)" :
			  "allocation samples (a JDK Flight Recorder recording)");
	if (!rc) rc = stat_row(t, "counting", "%s", agent ?
			       "sampled: est_bytes and est_count are estimates (agent/README.md, mode=sample)" :
			       "sampled: est_bytes and est_count are estimates (docs/jfr.md)");
	if (!rc && agent)
		rc = stat_row(t, "sampler", "JVMTI SampledObjectAlloc, a mean interval of %" PRIu64 " bytes: an "
			      "object of s bytes stands for 1/(1-exp(-s/%" PRIu64 ")) allocations",
			      tr->sample_interval, tr->sample_interval);
	else if (!rc)
		rc = stat_row(t, "sampler", "%s", sampler_name(ss->kind));
	if (!rc) rc = stat_row(t, "samples", "%" PRIu64, ss->samples);
	if (!rc) rc = stat_row(t, "est_bytes", "%" PRIu64, ss->weight);
	if (!rc) rc = stat_row(t, "sites", "%u", nsites);
	if (!rc) rc = stat_row(t, "methods", "%u", nmethods);
	static const char *const kind_keys[] = { NULL, "samples_allocation_sample", "samples_new_tlab",
						 "samples_outside_tlab" };
	if (agent) /* the JFR samplers' rows say nothing of the agent's */
		return rc;
	for (uint32_t k = 1; k <= HTR_SAMPLE_KIND_MAX && !rc; k++)
		rc = stat_row(t, kind_keys[k], "%" PRIu64, ss->by_kind[k]);
	const char *throttle = trace_info(tr, "jfr.setting.jdk.ObjectAllocationSample#throttle");
	if (!rc) rc = stat_row(t, "throttle", throttle ? "%s" : NULL, throttle);
	return rc;
}

static int render_allocs_sampled(struct hfs *fs, enum allocs_table which, struct table *t)
{
	const struct trace *tr = fs->en.trace;
	struct sample_set ss;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	int rc = samples_collect(tr, 0, UINT64_MAX, &ss, &err);
	if (rc) {
		if (rc != -ENOMEM)
			eng_set_error(&fs->en, &err);
		return rc == -ENOMEM ? rc : -EIO;
	}
	struct srow *sites = NULL, *methods = NULL;
	uint32_t nsites = 0, nmethods = 0;
	if (!(rc = sampled_rows(tr, &ss, 0, &sites, &nsites)))
		rc = sampled_rows(tr, &ss, 1, &methods, &nmethods);
	if (!rc && which == ALLOCS_BY_SITE) {
		table_init(t, sampled_site_cols, 6);
		for (uint32_t i = 0; i < nsites && !rc; i++) {
			if ((rc = table_add_row(t)))
				break;
			set_s(t, 0, sites[i].name);
			set_s(t, 1, sites[i].type);
			sampled_cells(t, 2, &sites[i]);
			set_s(t, 5, sites[i].desc);
		}
	} else if (!rc && which == ALLOCS_BY_METHOD) {
		table_init(t, sampled_method_cols, 5);
		for (uint32_t i = 0; i < nmethods && !rc; i++) {
			if ((rc = table_add_row(t)))
				break;
			set_s(t, 0, methods[i].name);
			set_s(t, 1, methods[i].desc);
			sampled_cells(t, 2, &methods[i]);
		}
	} else if (!rc) {
		rc = sampled_stats(tr, &ss, nsites, nmethods, t);
	}
	srows_free(sites, nsites);
	srows_free(methods, nmethods);
	samples_free(&ss);
	return rc;
}

/* Allocation samples stand in for allocations where the trace has
 * neither counters nor allocation events (a JFR recording). */
static int uses_samples(const struct trace *t)
{
	return t->sample_interval || (t->alloc_samples && !t->has_counts && !t->total_allocs);
}

int allocs_table(struct hfs *fs, enum allocs_table which, struct table *t)
{
	struct arows a = { 0 };
	int rc;
	memset(t, 0, sizeof(*t));
	if (which == ALLOCS_BY_CALLER) /* counters only: empty for other traces */
		return table_by_caller(fs->en.trace, t);
	if (uses_samples(fs->en.trace))
		return render_allocs_sampled(fs, which, t);
	rc = fs->en.trace->has_counts ? rows_from_counts(fs->en.trace, &a) : rows_from_events(fs, &a);
	if (rc)
		goto out;
	if (a.n) /* a.r is NULL without rows (a heap dump): qsort's pointer must not be */
		qsort(a.r, a.n, sizeof(*a.r), by_count);
	if (which == ALLOCS_BY_SITE)
		rc = table_by_site(&a, t);
	else if (which == ALLOCS_BY_METHOD)
		rc = table_by_method(&a, t);
	else
		rc = table_stats(fs->en.trace, &a, t);
out:
	rows_free(&a);
	return rc;
}

int render_allocs(struct hfs *fs, enum allocs_table which, enum allocs_format fmt, struct buf *out)
{
	struct table t;
	int rc = allocs_table(fs, which, &t);
	if (rc)
		goto out;
	if (fmt == ALLOCS_CSV)
		rc = table_render_csv(&t, out);
	else if (fmt == ALLOCS_JSON)
		rc = table_render_json(&t, out);
	else
		rc = table_render_tsv(&t, out);
out:
	table_free(&t);
	return rc;
}

/* render_gc.c - gc/NNN/info, group files and classification tables, and
 * render_node, the dispatcher of every file. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_allocs.h"
#include "render_closure.h"
#include "render_ds.h"
#include "render_suspects.h"
#include "render_windows.h"
#include "table.h"
#include "tree_internal.h"

static int kv_opt(struct buf *out, const char *k, int known, uint64_t v)
{
	return known ? kv_u64(out, k, v) : buf_printf(out, "%s\t\n", k);
}

static int kv_str(struct buf *out, const char *k, const char *v)
{
	int rc = buf_printf(out, "%s\t", k);
	if (!rc)
		rc = put_tsv_field(out, v, strlen(v));
	return rc ? rc : buf_putc(out, '\n');
}

static uint64_t ms_since_start(const struct trace *t, uint64_t ns)
{
	return ns > t->first_ns ? (ns - t->first_ns) / 1000000 : 0;
}

int render_gc_info(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)arg;
	const struct trace *t = fs->en.trace;
	const struct htr_gc_summary *g = &t->gcs[n->gci];
	struct rc_entry *e = NULL;
	struct census c;
	int rc = 0;
	if (t->objects_unrecorded) /* a JFR recording: what it says of the GC, no heap */
		memset(&c, 0, sizeof c);
	else if ((rc = eng_census_get(&fs->en, n->gci, &e, &c)))
		return rc;
	int known = !t->objects_unrecorded;
	char cause[sizeof g->cause + 1];
	memcpy(cause, g->cause, sizeof g->cause);
	cause[sizeof g->cause] = '\0';
	int graph = known && c.h->has_graph != 0;
	rc = kv_u64(out, "gc", g->gc);
	if (!rc) rc = kv_u64(out, "time_ms", ms_since_start(t, g->start_ns));
	if (!rc) rc = kv_u64(out, "end_ms", ms_since_start(t, g->end_ns));
	if (!rc) rc = kv_opt(out, "pause_ms", g->end_ns >= g->start_ns,
			     (g->end_ns - g->start_ns) / 1000000);
	if (!rc) rc = kv_str(out, "cause", cause);
	if (!rc) rc = kv_str(out, "full", (g->flags & HTR_GC_FULL) ? "yes" : "no");
	if (!rc) rc = kv_str(out, "collector", g->collector);
	if (!rc) rc = kv_opt(out, "used_before", g->used_before != UINT64_MAX, g->used_before);
	if (!rc) rc = kv_opt(out, "used_after", g->used_after != UINT64_MAX, g->used_after);
	if (!rc) rc = kv_opt(out, "capacity", g->capacity != UINT64_MAX, g->capacity);
	if (!rc && t->sample_interval) {
		/* mode=sample: what was recorded are samples; the estimates of
		 * the live objects are the root group's */
		struct cls_row r;
		struct chain root;
		chain_init(&root);
		rc = eng_group_totals(&fs->en, n->gci, &root, &r);
		if (!rc) rc = kv_u64(out, "sampled_allocations", g->allocs);
		if (!rc) rc = kv_u64(out, "sampled_bytes", g->alloc_bytes);
		if (!rc) rc = kv_u64(out, "sampled_deaths", g->deaths);
		/* (at a GC with a graph the state holds the objects the walk met
		 * without a sample too: not samples, counted exactly) */
		if (!rc) rc = kv_u64(out, "samples", r.s[COL_LIVE]);
		if (!rc) rc = kv_u64(out, "est_objects", r.c[COL_LIVE]);
		if (!rc) rc = kv_u64(out, "est_bytes", r.b[COL_LIVE]);
		if (!rc) rc = render_sample_note(t, r.s[COL_LIVE], out);
		if (!rc && graph) rc = kv_u64(out, "objects", r.xc[COL_LIVE]);
		if (!rc && graph) rc = kv_u64(out, "bytes", r.xb[COL_LIVE]);
	} else {
		if (!rc) rc = kv_opt(out, "allocations", known, g->allocs);
		if (!rc) rc = kv_opt(out, "allocated", known, g->alloc_bytes);
		if (!rc) rc = kv_opt(out, "deaths", known, g->deaths);
		if (!rc) rc = kv_opt(out, "objects", known, known ? c.h->n : 0);
		if (!rc) rc = kv_opt(out, "bytes", known, known ? c.h->total_bytes : 0);
	}
	if (!rc) rc = kv_opt(out, "reachable_objects", graph, graph ? c.h->nreachable : 0);
	if (!rc) rc = kv_opt(out, "reachable_bytes", graph, graph ? c.h->reachable_bytes : 0);
	if (!rc) rc = kv_str(out, "graph", graph ? "yes" : "no");
	/* why not: the recorder wanted one but the next GC came first */
	if (!rc) rc = kv_str(out, "graph_dropped", !graph && (g->flags & HTR_GC_GRAPH_DROPPED) ? "yes" : "no");
	/* the recorder got this GC's deaths in one batch with some of the
	 * previous GC's: that GC's state may hold objects that died in it */
	if (!rc) rc = kv_str(out, "deaths_merged", g->flags & HTR_GC_DEATHS_MERGED ? "yes" : "no");
	if (!rc) rc = kv_opt(out, "roots", graph, graph ? c.h->nroots : 0);
	if (!rc) rc = kv_opt(out, "edges", graph, graph ? c.h->nedges : 0);
	if (!rc) rc = kv_opt(out, "unknown_objects", known, known ? c.h->unknown_objects : 0);
	if (!rc && !known)
		rc = kv_str(out, "source", "a JDK Flight Recorder recording: the GC's own event and heap "
				     "summaries; which objects lived is not recorded");
	if (e)
		rcache_put(fs->en.rc, e);
	return rc;
}

/* "by-type/Foo/by-thread/main" for a chain; "all objects" for the root;
 * "diff/MMM/..." for diff groups. */
static int chain_label(struct hfs *fs, const struct chain *ch, struct buf *out)
{
	int rc = 0;
	const char *sep = "";
	if (ch->diff_gci != UINT32_MAX) {
		char name[16];
		hfs_gc_name(fs, ch->diff_gci, name);
		rc = buf_printf(out, "diff/%s", name);
		sep = "/";
	} else if (ch->depth == 0) {
		return buf_printf(out, "all objects");
	}
	for (uint32_t d = 0; d < ch->depth && !rc; d++, sep = "/") {
		const struct chain_step *st = &ch->steps[d];
		const struct cls_def *def = st->cls < cls_count(&fs->en.reg) ? fs->en.reg.defs[st->cls] : NULL;
		switch (st->op) {
		case ST_POINTS_TO: rc = buf_printf(out, "%spoints-to", sep); break;
		case ST_POINTED_FROM: rc = buf_printf(out, "%spointed-from", sep); break;
		case ST_CLOSURE_TRANSITIVE: rc = buf_printf(out, "%sclosure/transitive", sep); break;
		case ST_CLOSURE_RETAINED: rc = buf_printf(out, "%sclosure/retained", sep); break;
		case ST_ADHOC: rc = buf_printf(out, "%sad-hoc group", sep); break;
		case ST_FILTER: rc = buf_printf(out, "%sonly-%s", sep, def ? def->name : "?"); break;
		default:
			rc = buf_printf(out, "%sby-%s", sep, def ? def->name : "?");
			for (uint32_t k = 0; k < st->nkeys && !rc && def; k++)
				rc = buf_printf(out, "/%s", ks_name(&def->ks, ch->keys[st->key0 + k]));
			break;
		}
	}
	return rc;
}


/* "PREkey<TAB>v": est_ names in sampled traces. */
static int kv_pre_u64(struct buf *out, const char *pre, const char *k, uint64_t v)
{
	return buf_printf(out, "%s%s\t%" PRIu64 "\n", pre, k, v);
}

/* The agent's sample.start_deaths: how far the deaths of the objects that
 * existed before recording were followed (absent: to the end), or none:
 * only their class mirrors were recorded. */
static const char *start_deaths_note(const struct trace *t)
{
	const char *sd = trace_info(t, "sample.start_deaths");
	if (!sd)
		return "";
	if (!strcmp(sd, "first-gc"))
		return " (their deaths recorded to the end of the first GC only)";
	if (!strcmp(sd, "none"))
		return " (of those only the class mirrors are recorded: start=none)";
	return " (their deaths followed as the trace's sample.start_deaths says)";
}

int render_sample_note(const struct trace *t, uint64_t samples, struct buf *out)
{
	return buf_printf(out, "estimate\tfrom %" PRIu64 " sampled objects: the recording sampled "
			  "allocations at a mean interval of %" PRIu64 " bytes (mode=sample); an object of "
			  "s bytes stands for 1/(1-exp(-s/%" PRIu64 ")) objects, those that existed before "
			  "recording for one%s\n", samples, t->sample_interval, t->sample_interval,
			  start_deaths_note(t));
}

int render_group_metric(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	enum group_file which = (enum group_file)arg;
	struct cls_row r;
	int rc = eng_group_totals(&fs->en, n->gci, &n->chain, &r);
	if (rc)
		return rc;
	/* count and shallow_size: the objects at this GC (born + perm in a diff) */
	uint64_t count = r.c[COL_LIVE] + r.c[COL_PERM], bytes = r.b[COL_LIVE] + r.b[COL_PERM];
	const struct trace *t = fs->en.trace;
	switch (which) {
	case GF_SAMPLES: return buf_printf(out, "%" PRIu64 "\n", r.s[COL_LIVE] + r.s[COL_PERM]);
	case GF_COUNT: return buf_printf(out, "%" PRIu64 "\n", count);
	case GF_SHALLOW: return buf_printf(out, "%" PRIu64 "\n", bytes);
	case GF_BORN_C: return buf_printf(out, "%" PRIu64 "\n", r.c[COL_LIVE]);
	case GF_BORN_B: return buf_printf(out, "%" PRIu64 "\n", r.b[COL_LIVE]);
	case GF_DIED_C: return buf_printf(out, "%" PRIu64 "\n", r.c[COL_DIED]);
	case GF_DIED_B: return buf_printf(out, "%" PRIu64 "\n", r.b[COL_DIED]);
	case GF_PERM_C: return buf_printf(out, "%" PRIu64 "\n", r.c[COL_PERM]);
	case GF_PERM_B: return buf_printf(out, "%" PRIu64 "\n", r.b[COL_PERM]);
	case GF_NET_C: return buf_printf(out, "%" PRId64 "\n", (int64_t)(r.c[COL_LIVE] - r.c[COL_DIED]));
	case GF_NET_B: return buf_printf(out, "%" PRId64 "\n", (int64_t)(r.b[COL_LIVE] - r.b[COL_DIED]));
	case GF_XCOUNT: return buf_printf(out, "%" PRIu64 "\n", r.xc[COL_LIVE] + r.xc[COL_PERM]);
	case GF_XSHALLOW: return buf_printf(out, "%" PRIu64 "\n", r.xb[COL_LIVE] + r.xb[COL_PERM]);
	case GF_SUMMARY: break;
	}
	char gcname[16];
	hfs_gc_name(fs, n->gci, gcname);
	rc = kv_str(out, "gc", gcname);
	if (!rc) rc = buf_put(out, "group\t", 6);
	if (!rc) rc = chain_label(fs, &n->chain, out);
	if (!rc) rc = buf_putc(out, '\n');
	if (!rc && t->sample_interval) {
		rc = kv_u64(out, "samples", r.s[COL_LIVE] + r.s[COL_PERM]);
		if (!rc) rc = kv_u64(out, "est_count", count);
		if (!rc) rc = kv_u64(out, "est_shallow_size", bytes);
		if (!rc) rc = render_sample_note(t, r.s[COL_LIVE] + r.s[COL_PERM], out);
		if (!rc && n->chain.diff_gci == UINT32_MAX && eng_gc_has_graph(&fs->en, n->gci)) {
			rc = kv_u64(out, "count", r.xc[COL_LIVE]);
			if (!rc) rc = kv_u64(out, "shallow_size", r.xb[COL_LIVE]);
		}
	} else if (!rc) {
		rc = kv_u64(out, "count", count);
		if (!rc) rc = kv_u64(out, "shallow_size", bytes);
	}
	if (!rc) /* deep_* and retained_* where there is a graph */
		rc = render_group_closure_summary(fs, n, out);
	if (!rc && n->chain.diff_gci != UINT32_MAX && fs->en.trace->identity_unknown) {
		/* heap dumps: objects are known by address only, and addresses
		 * move: say what is known, the counts at both GCs */
		char other[16];
		hfs_gc_name(fs, n->chain.diff_gci, other);
		rc = kv_u64(out, "before_count", r.c[COL_PERM] + r.c[COL_DIED]);
		if (!rc) rc = kv_u64(out, "before_bytes", r.b[COL_PERM] + r.b[COL_DIED]);
		if (!rc) rc = kv_i64(out, "net_count", (int64_t)(r.c[COL_LIVE] - r.c[COL_DIED]));
		if (!rc) rc = kv_i64(out, "net_bytes", (int64_t)(r.b[COL_LIVE] - r.b[COL_DIED]));
		if (!rc) rc = buf_printf(out, "identity\tunknown: the GCs are heap dumps, whose objects "
					 "are known by address, and a moving collection changes addresses; "
					 "which objects were born, died or survived since gc/%s is not "
					 "known, only the net change\n", other);
	} else if (!rc && n->chain.diff_gci != UINT32_MAX) {
		const char *pre = t->sample_interval ? "est_" : "";
		rc = kv_pre_u64(out, pre, "born_count", r.c[COL_LIVE]);
		if (!rc) rc = kv_pre_u64(out, pre, "born_bytes", r.b[COL_LIVE]);
		if (!rc) rc = kv_pre_u64(out, pre, "died_count", r.c[COL_DIED]);
		if (!rc) rc = kv_pre_u64(out, pre, "died_bytes", r.b[COL_DIED]);
		if (!rc) rc = kv_pre_u64(out, pre, "perm_count", r.c[COL_PERM]);
		if (!rc) rc = kv_pre_u64(out, pre, "perm_bytes", r.b[COL_PERM]);
		if (!rc && t->sample_interval) {
			rc = kv_u64(out, "born_samples", r.s[COL_LIVE]);
			if (!rc) rc = kv_u64(out, "died_samples", r.s[COL_DIED]);
			if (!rc) rc = kv_u64(out, "perm_samples", r.s[COL_PERM]);
		}
	}
	return rc;
}

int render_group_objects(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)arg;
	/* objects/all is the root group: n->chain is empty there. */
	struct buf ids;
	buf_init(&ids);
	int rc = eng_group_member_ids(&fs->en, n->gci, &n->chain, &ids);
	const uint64_t *id = (const uint64_t *)ids.data;
	size_t nids = rc ? 0 : ids.len / sizeof *id;
	for (size_t i = 0; i < nids && !rc; i++)
		if (!(rc = put_u64(out, id[i])))
			rc = buf_putc(out, '\n');
	buf_free(&ids);
	return rc;
}

/* The columns of a classification table.  Closures add deep_size,
 * retained_size, ... here; the renderers take the list as it is.  Diff
 * nodes add the born/died/perm columns. */
static const struct tcol class_cols[] = {
	{ "name", TCOL_STR }, { "count", TCOL_U64 }, { "shallow_size", TCOL_U64 },
	{ "born_count", TCOL_U64 }, { "born_bytes", TCOL_U64 }, { "died_count", TCOL_U64 },
	{ "died_bytes", TCOL_U64 }, { "perm_count", TCOL_U64 }, { "perm_bytes", TCOL_U64 },
};

/* A diff of heap dumps (identity across GCs unknown): the other GC's
 * counts and the net change, never born, died or survived. */
static const struct tcol class_cols_net[] = {
	{ "name", TCOL_STR }, { "count", TCOL_U64 }, { "shallow_size", TCOL_U64 },
	{ "before_count", TCOL_U64 }, { "before_bytes", TCOL_U64 }, { "net_count", TCOL_I64 },
	{ "net_bytes", TCOL_I64 },
};
#define PLAIN_COLS 3

/* A sampled trace (mode=sample): estimates, and the samples behind them. */
static const struct tcol class_cols_sampled[] = {
	{ "name", TCOL_STR }, { "samples", TCOL_U64 }, { "est_count", TCOL_U64 },
	{ "est_shallow_size", TCOL_U64 }, { "est_born_count", TCOL_U64 }, { "est_born_bytes", TCOL_U64 },
	{ "est_died_count", TCOL_U64 }, { "est_died_bytes", TCOL_U64 }, { "est_perm_count", TCOL_U64 },
	{ "est_perm_bytes", TCOL_U64 },
};
#define SAMPLED_PLAIN_COLS 4

/* ... at a GC with a graph (mode=sample with graph=): the estimates as
 * without the walk, then the walk's objects, exact, with their closures. */
static const struct tcol class_cols_sampled_graph[] = {
	{ "name", TCOL_STR }, { "samples", TCOL_U64 }, { "est_count", TCOL_U64 },
	{ "est_shallow_size", TCOL_U64 }, { "count", TCOL_U64 }, { "shallow_size", TCOL_U64 },
	{ "deep_count", TCOL_U64 }, { "deep_size", TCOL_U64 }, { "retained_count", TCOL_U64 },
	{ "retained_size", TCOL_U64 },
};

/* plain tables at a GC with a graph: deep and retained columns,
 * rows sorted by retained size. */
static const struct tcol closure_cols[] = {
	{ "name", TCOL_STR }, { "count", TCOL_U64 }, { "shallow_size", TCOL_U64 },
	{ "deep_count", TCOL_U64 }, { "deep_size", TCOL_U64 }, { "retained_count", TCOL_U64 },
	{ "retained_size", TCOL_U64 },
};

struct sort_row {
	const struct cls_row *row;
	const char *name;
	uint64_t bytes;
	const struct clo_row *clo; /* NULL without closures */
};

/* Shallow size descending, then name: the biggest first, stable order. */
static int by_size_then_name(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* retained size descending, then shallow size, then name */
static int by_retained_then_name(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;
	uint64_t rx = x->clo ? x->clo->m.retained_bytes : 0, ry = y->clo ? y->clo->m.retained_bytes : 0;
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return by_size_then_name(a, b);
}


static int render_class_table(struct hfs *fs, const struct node *n, enum table_fmt f,
			      struct buf *out)
{
	const struct cls_def *d = cls_get(&fs->en.reg, n->cls);
	const struct cls_row *rows;
	struct rc_entry *e;
	struct sort_row *sorted = NULL;
	struct table tb;
	uint32_t nrows;
	int diff = n->chain.diff_gci != UINT32_MAX, rc;
	struct rc_entry *ce = NULL;
	const struct clo_row *clo = NULL;
	uint32_t nclo = 0;
	if (!d)
		return -ENOENT;
	if ((rc = eng_classification_get(&fs->en, n->gci, &n->chain, n->cls, &e, &rows, &nrows)))
		return rc;
	if (!diff && eng_gc_has_graph(&fs->en, n->gci) &&
	    (rc = eng_class_closures_get(&fs->en, n->gci, &n->chain, n->cls, &ce, &clo, &nclo))) {
		rcache_put(fs->en.rc, e);
		return rc;
	}
	int net = diff && fs->en.trace->identity_unknown;
	int smp = fs->en.trace->sample_interval != 0 && !ce;
	int smpg = fs->en.trace->sample_interval != 0 && ce;
	if (smpg)
		table_init(&tb, class_cols_sampled_graph,
			   sizeof class_cols_sampled_graph / sizeof *class_cols_sampled_graph);
	else if (smp)
		table_init(&tb, class_cols_sampled,
			   diff ? sizeof class_cols_sampled / sizeof *class_cols_sampled : SAMPLED_PLAIN_COLS);
	else if (ce)
		table_init(&tb, closure_cols, sizeof closure_cols / sizeof *closure_cols);
	else if (net)
		table_init(&tb, class_cols_net, sizeof class_cols_net / sizeof *class_cols_net);
	else
		table_init(&tb, class_cols, diff ? sizeof class_cols / sizeof *class_cols : PLAIN_COLS);
	sorted = malloc((nrows ? nrows : 1) * sizeof *sorted);
	if (!sorted) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t r = 0; r < nrows; r++) {
		sorted[r].row = &rows[r];
		sorted[r].name = ks_name(&d->ks, rows[r].key);
		sorted[r].bytes = rows[r].b[COL_LIVE] + rows[r].b[COL_PERM];
		sorted[r].clo = ce ? clo_row_find(clo, nclo, rows[r].key) : NULL;
	}
	/* (sampled: the estimates' order, also beside a graph) */
	qsort(sorted, nrows, sizeof *sorted, ce && !smpg ? by_retained_then_name : by_size_then_name);
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		const struct cls_row *x = sorted[r].row;
		if ((rc = table_add_row(&tb)))
			break;
		table_set_str(&tb, 0, sorted[r].name, strlen(sorted[r].name));
		if (smpg) {
			table_set_u64(&tb, 1, x->s[COL_LIVE]);
			table_set_u64(&tb, 2, x->c[COL_LIVE]);
			table_set_u64(&tb, 3, sorted[r].bytes);
			table_set_u64(&tb, 4, x->xc[COL_LIVE]);
			table_set_u64(&tb, 5, x->xb[COL_LIVE]);
			if (sorted[r].clo) {
				table_set_u64(&tb, 6, sorted[r].clo->m.deep_count);
				table_set_u64(&tb, 7, sorted[r].clo->m.deep_bytes);
				table_set_u64(&tb, 8, sorted[r].clo->m.retained_count);
				table_set_u64(&tb, 9, sorted[r].clo->m.retained_bytes);
			}
			continue;
		}
		if (smp) {
			table_set_u64(&tb, 1, x->s[COL_LIVE] + x->s[COL_PERM]);
			table_set_u64(&tb, 2, x->c[COL_LIVE] + x->c[COL_PERM]);
			table_set_u64(&tb, 3, sorted[r].bytes);
			if (diff)
				for (int k = 0; k < 3; k++) {
					int col = k == 0 ? COL_LIVE : k == 1 ? COL_DIED : COL_PERM;
					table_set_u64(&tb, 4 + 2 * k, x->c[col]);
					table_set_u64(&tb, 5 + 2 * k, x->b[col]);
				}
			continue;
		}
		table_set_u64(&tb, 1, x->c[COL_LIVE] + x->c[COL_PERM]);
		table_set_u64(&tb, 2, sorted[r].bytes);
		if (sorted[r].clo) {
			table_set_u64(&tb, 3, sorted[r].clo->m.deep_count);
			table_set_u64(&tb, 4, sorted[r].clo->m.deep_bytes);
			table_set_u64(&tb, 5, sorted[r].clo->m.retained_count);
			table_set_u64(&tb, 6, sorted[r].clo->m.retained_bytes);
		}
		if (net) {
			table_set_u64(&tb, 3, x->c[COL_PERM] + x->c[COL_DIED]);
			table_set_u64(&tb, 4, x->b[COL_PERM] + x->b[COL_DIED]);
			table_set_i64(&tb, 5, (int64_t)(x->c[COL_LIVE] - x->c[COL_DIED]));
			table_set_i64(&tb, 6, (int64_t)(x->b[COL_LIVE] - x->b[COL_DIED]));
		} else if (diff) {
			table_set_u64(&tb, 3, x->c[COL_LIVE]);
			table_set_u64(&tb, 4, x->b[COL_LIVE]);
			table_set_u64(&tb, 5, x->c[COL_DIED]);
			table_set_u64(&tb, 6, x->b[COL_DIED]);
			table_set_u64(&tb, 7, x->c[COL_PERM]);
			table_set_u64(&tb, 8, x->b[COL_PERM]);
		}
	}
	if (!rc) {
		if (f == TF_TSV)
			rc = table_render_tsv(&tb, out);
		else if (f == TF_CSV)
			rc = table_render_csv(&tb, out);
		else
			rc = table_render_json(&tb, out);
	}
out:
	free(sorted);
	table_free(&tb);
	if (ce)
		rcache_put(fs->en.rc, ce);
	rcache_put(fs->en.rc, e);
	return rc;
}

/* The table of a hierarchy level lists the level below: the node's cls
 * is the hierarchy classifier there. */
int render_table(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	enum table_fmt f = (enum table_fmt)arg;
	struct node m = *n;
	const struct chain *ch = &n->chain;
	if (ch->depth && ch->steps[ch->depth - 1].op == ST_CLS) {
		const struct cls_def *d = cls_get(&fs->en.reg, ch->steps[ch->depth - 1].cls);
		if (d && d->card == CARD_HIER && n->cls == ch->steps[ch->depth - 1].cls)
			m.cls = ch->steps[ch->depth - 1].cls;
	}
	return render_class_table(fs, &m, f, out);
}

int render_classifier_def(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)arg;
	const struct cls_def *d = cls_get(&fs->en.reg, n->cls);
	if (!d || !d->source)
		return -ENOENT;
	size_t len = strlen(d->source);
	int rc = buf_put(out, d->source, len);
	if (!rc && len && d->source[len - 1] != '\n')
		rc = buf_putc(out, '\n');
	return rc;
}

static const char *card_word(enum cls_card c)
{
	switch (c) {
	case CARD_ONE: return "one-to-one";
	case CARD_MANY: return "one-to-many";
	case CARD_HIER: return "one-to-hierarchy";
	case CARD_FILTER: return "filter";
	case CARD_PARTS: return "parts";
	}
	return "?";
}

/* classifiers/list: name, directory, cardinality, origin, what it does. */
int render_classifiers_list(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)n;
	(void)arg;
	int rc = buf_printf(out, "name\tdirectory\tcardinality\torigin\tabout\n");
	for (uint32_t k = 0; k < cls_count(&fs->en.reg) && !rc; k++) {
		const struct cls_def *d = cls_get(&fs->en.reg, k);
		if (!d)
			continue;
		rc = buf_printf(out, "%s\t%s%s\t%s\t%s\t%s\n", d->name,
				d->card == CARD_FILTER ? "only-" : "by-", d->name, card_word(d->card),
				d->builtin != CB_EXPR ? "predefined" :
				d->user ? "user" : "predefined expression", d->about);
	}
	return rc;
}


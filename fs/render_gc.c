/* render_gc.c - gc/NNN/info, group files and classification tables, and
 * render_node, the dispatcher of every file. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "table.h"
#include "tree_internal.h"

static int kv_u64(struct buf *out, const char *k, uint64_t v)
{
	return buf_printf(out, "%s\t%" PRIu64 "\n", k, v);
}

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

static int render_gc_info(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct trace *t = fs->trace;
	const struct htr_gc_summary *g = &t->gcs[n->gci];
	struct rc_entry *e;
	struct census c;
	int rc = hfs_census_get(fs, n->gci, &e, &c);
	if (rc)
		return rc;
	char cause[sizeof g->cause + 1];
	memcpy(cause, g->cause, sizeof g->cause);
	cause[sizeof g->cause] = '\0';
	int graph = c.h->has_graph != 0;
	rc = kv_u64(out, "gc", g->gc);
	if (!rc) rc = kv_u64(out, "time_ms", ms_since_start(t, g->start_ns));
	if (!rc) rc = kv_u64(out, "end_ms", ms_since_start(t, g->end_ns));
	if (!rc) rc = kv_opt(out, "pause_ms", g->end_ns >= g->start_ns,
			     (g->end_ns - g->start_ns) / 1000000);
	if (!rc) rc = kv_str(out, "cause", cause);
	if (!rc) rc = kv_str(out, "full", (g->flags & HTR_GC_FULL) ? "yes" : "no");
	if (!rc) rc = kv_opt(out, "used_before", g->used_before != UINT64_MAX, g->used_before);
	if (!rc) rc = kv_opt(out, "used_after", g->used_after != UINT64_MAX, g->used_after);
	if (!rc) rc = kv_opt(out, "capacity", g->capacity != UINT64_MAX, g->capacity);
	if (!rc) rc = kv_u64(out, "allocations", g->allocs);
	if (!rc) rc = kv_u64(out, "allocated", g->alloc_bytes);
	if (!rc) rc = kv_u64(out, "deaths", g->deaths);
	if (!rc) rc = kv_u64(out, "objects", c.h->n);
	if (!rc) rc = kv_u64(out, "bytes", c.h->total_bytes);
	if (!rc) rc = kv_opt(out, "reachable_objects", graph, c.h->nreachable);
	if (!rc) rc = kv_opt(out, "reachable_bytes", graph, c.h->reachable_bytes);
	if (!rc) rc = kv_str(out, "graph", graph ? "yes" : "no");
	if (!rc) rc = kv_opt(out, "roots", graph, c.h->nroots);
	if (!rc) rc = kv_opt(out, "edges", graph, c.h->nedges);
	if (!rc) rc = kv_u64(out, "unknown_objects", c.h->unknown_objects);
	rcache_put(fs->rc, e);
	return rc;
}

/* "by-type/Foo/by-thread/main" for a chain; "all objects" for the root. */
static int chain_label(struct hfs *fs, const struct chain *ch, struct buf *out)
{
	int rc = 0;
	if (ch->depth == 0)
		return buf_printf(out, "all objects");
	for (uint32_t d = 0; d < ch->depth && !rc; d++) {
		const struct cls_space *sp;
		rc = cls_space_get(&fs->reg, ch->steps[d].cls, &sp);
		if (!rc)
			rc = buf_printf(out, "%sby-%s/%s", d ? "/" : "",
					classifiers[ch->steps[d].cls].name, sp->names[ch->steps[d].key]);
	}
	return rc;
}

enum group_file { GF_COUNT, GF_SHALLOW, GF_SUMMARY };

static int render_group_metric(struct hfs *fs, const struct node *n, enum group_file which,
			       struct buf *out)
{
	struct rc_entry *e;
	struct census c;
	uint64_t count, bytes;
	int rc = hfs_census_get(fs, n->gci, &e, &c);
	if (rc)
		return rc;
	rc = group_totals(&fs->reg, &c, &n->chain, &count, &bytes);
	rcache_put(fs->rc, e);
	if (rc)
		return rc;
	switch (which) {
	case GF_COUNT:
		return buf_printf(out, "%" PRIu64 "\n", count);
	case GF_SHALLOW:
		return buf_printf(out, "%" PRIu64 "\n", bytes);
	case GF_SUMMARY:
		break;
	}
	char gcname[16];
	hfs_gc_name(fs, n->gci, gcname);
	rc = kv_str(out, "gc", gcname);
	if (!rc) rc = buf_put(out, "group\t", 6);
	if (!rc) rc = chain_label(fs, &n->chain, out);
	if (!rc) rc = buf_putc(out, '\n');
	if (!rc) rc = kv_u64(out, "count", count);
	if (!rc) rc = kv_u64(out, "shallow_size", bytes);
	return rc;
}

static int render_group_objects(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	int rc = hfs_state_get(fs, n->gci, &s);
	if (rc)
		return rc;
	/* objects/all is the root group: n->chain is empty there. */
	rc = group_member_ids(&fs->reg, s, &n->chain, out);
	hfs_state_put(fs, s);
	return rc;
}

/* The columns of a classification table.  Closures add deep_size,
 * retained_size, ... here; the renderers take the list as it is. */
static const struct tcol class_cols[] = {
	{ "name", TCOL_STR }, { "count", TCOL_U64 }, { "shallow_size", TCOL_U64 },
};

struct sort_row {
	const struct cls_row *row;
	const char *name;
};

static int by_size_then_name(const void *a, const void *b)
{
	const struct sort_row *x = a, *y = b;
	if (x->row->bytes != y->row->bytes)
		return x->row->bytes > y->row->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

enum table_fmt { TF_TSV, TF_CSV, TF_JSON };

static int render_class_table(struct hfs *fs, const struct node *n, enum table_fmt f,
			      struct buf *out)
{
	const struct cls_space *sp;
	const struct cls_row *rows;
	struct rc_entry *e;
	struct sort_row *sorted = NULL;
	struct table tb;
	uint32_t nrows;
	int rc = cls_space_get(&fs->reg, n->cls, &sp);
	if (rc)
		return rc;
	if ((rc = hfs_classification_get(fs, n->gci, &n->chain, n->cls, &e, &rows, &nrows)))
		return rc;
	table_init(&tb, class_cols, sizeof class_cols / sizeof *class_cols);
	sorted = malloc((nrows ? nrows : 1) * sizeof *sorted);
	if (!sorted) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t r = 0; r < nrows; r++) {
		sorted[r].row = &rows[r];
		sorted[r].name = sp->names[rows[r].key];
	}
	qsort(sorted, nrows, sizeof *sorted, by_size_then_name);
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		rc = table_add_row(&tb);
		if (rc)
			break;
		table_set_str(&tb, 0, sorted[r].name, strlen(sorted[r].name));
		table_set_u64(&tb, 1, sorted[r].row->count);
		table_set_u64(&tb, 2, sorted[r].row->bytes);
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
	rcache_put(fs->rc, e);
	return rc;
}

int render_node(struct hfs *fs, const struct node *n, struct buf *out)
{
	switch (n->type) {
	case NT_README: return render_readme(fs, out);
	case NT_STATUS: return render_status(fs, out);
	case NT_TRACE_INFO: return render_trace_info(fs, out);
	case NT_GCS_CSV: return render_gcs_csv(fs, out);
	case NT_GC_INFO: return render_gc_info(fs, n, out);
	case NT_GROUP_COUNT: return render_group_metric(fs, n, GF_COUNT, out);
	case NT_GROUP_SHALLOW: return render_group_metric(fs, n, GF_SHALLOW, out);
	case NT_GROUP_SUMMARY: return render_group_metric(fs, n, GF_SUMMARY, out);
	case NT_GROUP_OBJECTS:
	case NT_OBJECTS_ALL: return render_group_objects(fs, n, out);
	case NT_TABLE_TSV: return render_class_table(fs, n, TF_TSV, out);
	case NT_TABLE_CSV: return render_class_table(fs, n, TF_CSV, out);
	case NT_TABLE_JSON: return render_class_table(fs, n, TF_JSON, out);
	case NT_OBJECT_INFO: return render_object_info(fs, n, out);
	case NT_OBJECT_REFS: return render_object_refs(fs, n, out);
	case NT_OBJECT_REFERRERS: return render_object_referrers(fs, n, out);
	case NT_ROOTS_TABLE: return render_roots_table(fs, n, out);
	default: return -EISDIR;
	}
}

/* render_leaks.c - see render_leaks.h. */
#include "render_leaks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyses/samples.h"
#include "model/symbols.h"
#include "table.h"
#include "tree_internal.h"

static uint64_t rel_ms(const struct trace *t, uint64_t ns)
{
	return ns > t->first_ns ? (ns - t->first_ns) / 1000000 : 0;
}

static const char *type_name(const struct trace *t, uint32_t type, char *scratch, size_t len)
{
	return type == HTR_NO_TYPE ? "<unknown type>" : trace_type_name(t, type, scratch, len);
}

/* "Class.method:line" of a site's allocating frame. */
static int site_name(const struct trace *t, uint32_t site, struct buf *out)
{
	buf_reset(out);
	int rc = site < t->nsites && t->sites[site].nframes ? sym_frame(t, &t->sites[site].frames[0], out)
							    : buf_printf(out, "<unknown site>");
	return rc ? rc : buf_putc(out, '\0');
}

/* "kind description" of a sample's root, "" when none was recorded. */
static int root_text(const struct old_set *s, const struct old_row *r, struct buf *out)
{
	buf_reset(out);
	const char *kind = s->strs + r->root_kind, *desc = s->strs + r->root_desc, *sys = s->strs + r->root_system;
	int rc = buf_printf(out, "%s", kind);
	if (!rc && *sys)
		rc = buf_printf(out, "%s%s", out->len ? " " : "", sys);
	if (!rc && *desc)
		rc = buf_printf(out, "%s%s", out->len ? ": " : "", desc);
	return rc ? rc : buf_putc(out, '\0');
}

/* The path from the object to its root: "T <- Holder.field <- Arr[3] ..."
 * (each referrer's type and how it holds the one before; "(N skipped)"
 * where the recorder left objects out). */
static int path_text(const struct trace *t, const struct old_set *s, const struct old_row *r, struct buf *out)
{
	buf_reset(out);
	char scratch[64];
	int rc = 0;
	for (uint64_t i = 0; i < r->npath && !rc; i++) {
		const struct old_path_entry *e = &s->path[r->path_off + i];
		const char *how = s->strs + e->how;
		if (i)
			rc = buf_printf(out, " <- ");
		if (!rc && e->skip)
			rc = buf_printf(out, "(%u skipped) <- ", e->skip);
		const char *ty = old_entry_type(t, s, e, scratch, sizeof scratch);
		if (!rc)
			rc = buf_printf(out, "%s%s%s", ty, *how && how[0] != '[' ? "." : "", how);
	}
	return rc ? rc : buf_putc(out, '\0');
}

static void set_s(struct table *t, uint32_t col, const char *s)
{
	table_set_str(t, col, s, strlen(s));
}

static const struct tcol table_cols[] = {
	{ "type", TCOL_STR }, { "site", TCOL_STR }, { "samples", TCOL_U64 }, { "with_path", TCOL_U64 },
	{ "first_alloc_ms", TCOL_U64 }, { "last_alloc_ms", TCOL_U64 }, { "max_age_ms", TCOL_U64 },
	{ "root", TCOL_STR }, { "path", TCOL_STR },
};

static const struct tcol sample_cols[] = {
	{ "alloc_ms", TCOL_U64 }, { "age_ms", TCOL_U64 }, { "sampled_ms", TCOL_U64 }, { "type", TCOL_STR },
	{ "array_length", TCOL_I64 }, { "site", TCOL_STR }, { "thread", TCOL_STR }, { "heap_used", TCOL_U64 },
	{ "root", TCOL_STR }, { "path", TCOL_STR },
};

/* The texts of one row: its site, its root and its path. */
struct texts {
	struct buf site, root, path;
};

static void texts_init(struct texts *x)
{
	buf_init(&x->site);
	buf_init(&x->root);
	buf_init(&x->path);
}

static void texts_free(struct texts *x)
{
	buf_free(&x->site);
	buf_free(&x->root);
	buf_free(&x->path);
}

static int texts_fill(const struct trace *tr, const struct old_set *s, uint32_t site, const struct old_row *r,
		      struct texts *x)
{
	int rc = site_name(tr, site, &x->site);
	if (!rc)
		rc = root_text(s, r, &x->root);
	return rc ? rc : path_text(tr, s, r, &x->path);
}

static int fill_table(const struct trace *tr, const struct old_set *s, struct table *t)
{
	struct texts x;
	texts_init(&x);
	char scratch[64];
	int rc = 0;
	table_init(t, table_cols, 9);
	for (uint32_t i = 0; i < s->ngroups && !rc; i++) {
		const struct old_group *g = &s->groups[i];
		const struct old_row *ex = &s->rows[g->example];
		if ((rc = texts_fill(tr, s, g->site, ex, &x)) || (rc = table_add_row(t)))
			break;
		set_s(t, 0, type_name(tr, g->type, scratch, sizeof scratch));
		set_s(t, 1, (const char *)x.site.data);
		table_set_u64(t, 2, g->samples);
		table_set_u64(t, 3, g->with_path);
		table_set_u64(t, 4, rel_ms(tr, g->first_alloc_ns));
		table_set_u64(t, 5, rel_ms(tr, g->last_alloc_ns));
		table_set_u64(t, 6, g->max_age_ns / 1000000);
		set_s(t, 7, (const char *)x.root.data);
		if (ex->npath > 1)
			set_s(t, 8, (const char *)x.path.data);
	}
	texts_free(&x);
	return rc;
}

static int fill_samples(const struct trace *tr, const struct old_set *s, struct table *t)
{
	struct texts x;
	texts_init(&x);
	char scratch[64];
	int rc = 0;
	table_init(t, sample_cols, 10);
	for (uint64_t i = 0; i < s->n && !rc; i++) {
		const struct old_row *r = &s->rows[i];
		if ((rc = texts_fill(tr, s, r->site, r, &x)) || (rc = table_add_row(t)))
			break;
		table_set_u64(t, 0, rel_ms(tr, r->alloc_ns));
		table_set_u64(t, 1, r->age_ns / 1000000);
		table_set_u64(t, 2, rel_ms(tr, r->time_ns));
		set_s(t, 3, type_name(tr, r->type, scratch, sizeof scratch));
		if (r->array_length >= 0)
			table_set_i64(t, 4, r->array_length);
		set_s(t, 5, (const char *)x.site.data);
		uint32_t th = trace_thread_index(tr, r->thread);
		set_s(t, 6, th == UINT32_MAX ? "" : sym_thread(tr, th));
		if (r->heap_used != UINT64_MAX)
			table_set_u64(t, 7, r->heap_used);
		set_s(t, 8, (const char *)x.root.data);
		if (r->npath > 1)
			set_s(t, 9, (const char *)x.path.data);
	}
	texts_free(&x);
	return rc;
}

static int render_info(const struct trace *tr, const struct old_set *s, struct buf *out)
{
	uint64_t with_path = 0;
	for (uint32_t i = 0; i < s->ngroups; i++)
		with_path += s->groups[i].with_path;
	const char *size = trace_info(tr, "jfr.setting.jdk.OldObjectSample#old-objects-queue-size");
	int rc = buf_printf(out, "source\tjdk.OldObjectSample events of a JDK Flight Recorder recording\n"
				 "samples\t%" PRIu64 "\ngroups\t%u\nwith_path\t%" PRIu64 "\n",
			    s->n, s->ngroups, with_path);
	if (!rc && size)
		rc = buf_printf(out, "queue_size\t%s\n", size);
	if (!rc)
		rc = buf_printf(out, "sampled\tyes: the JVM keeps a bounded set of sampled objects that were still "
				     "alive when the recording was written; a row's samples are a share of that set, "
				     "not a count of instances\n"
				     "paths\t%s\n",
				with_path ? "recorded (path-to-gc-roots=true)"
					  : "not recorded: record with jdk.OldObjectSample#path-to-gc-roots=true");
	return rc;
}

int render_leaks(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)n;
	const struct trace *tr = fs->en.trace;
	struct old_set s;
	struct htr_err err;
	struct table t;
	memset(&err, 0, sizeof err);
	memset(&t, 0, sizeof t);
	int rc = old_samples_collect(tr, &s, &err);
	if (rc) {
		if (rc != -ENOMEM)
			eng_set_error(&fs->en, &err);
		return rc == -ENOMEM ? rc : -EIO;
	}
	enum leaks_file file = (enum leaks_file)(arg / 4);
	enum leaks_format fmt = (enum leaks_format)(arg % 4);
	if (file == LEAKS_INFO) {
		rc = render_info(tr, &s, out);
		goto out;
	}
	rc = file == LEAKS_TABLE ? fill_table(tr, &s, &t) : fill_samples(tr, &s, &t);
	if (!rc)
		rc = fmt == LEAKS_CSV ? table_render_csv(&t, out)
		   : fmt == LEAKS_JSON ? table_render_json(&t, out) : table_render_tsv(&t, out);
out:
	table_free(&t);
	old_samples_free(&s);
	return rc;
}

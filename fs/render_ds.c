/* render_ds.c - gc/NNN/ds/{roles,heads,table} (render_ds.h).  The
 * analysis is analyses/roles.c, its results analyses/ds.h; this file
 * prints. */
#include "render_ds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/ds.h"
#include "render_closure.h"
#include "table.h"
#include "tree_internal.h"

/* ---- printing ---- */

/* Type names as TSV fields, one per type id, rendered once per file. */
struct names {
	struct buf b;
	size_t *off;           /* [nt + 1] */
	uint32_t nt;
};

static int names_init(struct names *nm, const struct trace *t)
{
	char scratch[64];
	buf_init(&nm->b);
	nm->nt = t->ntypes;
	nm->off = malloc(((size_t)t->ntypes + 1) * sizeof *nm->off);
	if (!nm->off)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t k = 0; k < t->ntypes && !rc; k++) {
		nm->off[k] = nm->b.len;
		const char *s = trace_type_name(t, k, scratch, sizeof scratch);
		rc = put_tsv_field(&nm->b, s, strlen(s));
	}
	nm->off[t->ntypes] = nm->b.len;
	return rc;
}

static void names_free(struct names *nm)
{
	buf_free(&nm->b);
	free(nm->off);
}

static int put_type(struct buf *out, const struct names *nm, const struct trace *t, uint32_t ty)
{
	if (ty < nm->nt)
		return buf_put(out, nm->b.data + nm->off[ty], nm->off[ty + 1] - nm->off[ty]);
	char scratch[64];
	const char *s = trace_type_name(t, ty, scratch, sizeof scratch);
	return put_tsv_field(out, s, strlen(s));
}

/* "recursive,transition" for a mask; "-" for none (never happens). */
static int put_roles(struct buf *out, uint16_t mask)
{
	int rc = 0, first = 1;
	if (!mask)
		return buf_putc(out, '-');
	for (uint32_t k = 0; k < DS_NROLES && !rc; k++) {
		if (!(mask & (1u << k)))
			continue;
		if (!first)
			rc = buf_putc(out, ',');
		const char *nm = ds_role_name(k);
		if (!rc)
			rc = buf_put(out, nm, strlen(nm));
		first = 0;
	}
	return rc;
}

static int render_roles(struct hfs *fs, const struct node *n, struct buf *out)
{
	struct rc_entry *e;
	struct ds_view v;
	struct names nm;
	const struct heap_state *s;
	int rc = eng_ds_get(&fs->en, n->gci, &e, &v);
	if (rc)
		return rc;
	if ((rc = eng_state_get(&fs->en, n->gci, &s))) {
		rcache_put(fs->en.rc, e);
		return rc;
	}
	rc = names_init(&nm, fs->en.trace);
	if (!rc)
		rc = buf_printf(out, "id\ttype\troles\n");
	for (uint32_t i = 0; i < v.n && !rc; i++) {
		rc = put_u64(out, s->id[i]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type(out, &nm, fs->en.trace, hs_info(s, i)->type);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_roles(out, v.roles[i]);
		if (!rc) rc = buf_putc(out, '\n');
	}
	names_free(&nm);
	eng_state_put(&fs->en, s);
	rcache_put(fs->en.rc, e);
	return rc;
}

static int put_opt_id(struct buf *out, const struct heap_state *s, uint32_t dense)
{
	return dense == DS_NONE ? 0 : put_u64(out, s->id[dense]);
}

static int render_heads(struct hfs *fs, const struct node *n, struct buf *out)
{
	struct rc_entry *e, *eh;
	struct ds_view v;
	struct names nm;
	const struct heap_state *s;
	const struct ds_head *heads;
	uint32_t nheads;
	int rc = eng_ds_get(&fs->en, n->gci, &e, &v);
	if (rc)
		return rc;
	if ((rc = eng_ds_heads_get(&fs->en, n->gci, &eh, &heads, &nheads))) {
		rcache_put(fs->en.rc, e);
		return rc;
	}
	if ((rc = eng_state_get(&fs->en, n->gci, &s)))
		goto out_entries;
	rc = names_init(&nm, fs->en.trace);
	if (!rc)
		rc = buf_printf(out, "id\ttype\tmembers\tmember_bytes\telements\telement_bytes\t"
				     "heads_held\thead_types\tretained_size\ticontainer\t"
				     "icontainer_type\touter\tflags\n");
	for (uint32_t k = 0; k < nheads && !rc; k++) {
		const struct ds_head *h = &heads[k];
		uint64_t cols[] = { h->members, h->member_bytes, h->elements, h->element_bytes,
				    h->heads_held, h->head_types };
		rc = put_u64(out, s->id[h->obj]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type(out, &nm, fs->en.trace, hs_info(s, h->obj)->type);
		for (size_t c = 0; c < sizeof cols / sizeof cols[0] && !rc; c++) {
			rc = buf_putc(out, '\t');
			if (!rc) rc = put_u64(out, cols[c]);
		}
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc && h->retained != DS_NO_RETAINED) rc = put_u64(out, h->retained);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_opt_id(out, s, h->icontainer);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc && h->icontainer != DS_NONE)
			rc = put_type(out, &nm, fs->en.trace, hs_info(s, h->icontainer)->type);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_opt_id(out, s, h->outer == DS_NONE ? DS_NONE : heads[h->outer].obj);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc && (h->flags & DS_FLAG_LOADER_LIKE)) rc = buf_printf(out, "loader-like");
		if (!rc) rc = buf_putc(out, '\n');
	}
	names_free(&nm);
	eng_state_put(&fs->en, s);
out_entries:
	rcache_put(fs->en.rc, eh);
	rcache_put(fs->en.rc, e);
	return rc;
}

/* ---- ds/table: the heads aggregated by head type ---- */

struct type_row {
	uint32_t type;
	uint64_t heads, members, member_bytes, elements, element_bytes, retained, loader_like;
	const char *name;
};

static int by_bytes_then_name(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;
	if (x->member_bytes != y->member_bytes)
		return x->member_bytes > y->member_bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct tcol ds_table_cols[] = {
	{ "type", TCOL_STR }, { "heads", TCOL_U64 }, { "members", TCOL_U64 },
	{ "member_bytes", TCOL_U64 }, { "elements", TCOL_U64 }, { "element_bytes", TCOL_U64 },
	{ "retained_size", TCOL_U64 }, { "loader_like", TCOL_U64 },
};

/* One row per type id that heads have (type ids are below ntypes_ext). */
static int aggregate(const struct heap_state *s, const struct ds_head *heads, uint32_t nheads,
		     struct type_row **rows_out, uint32_t *nrows_out)
{
	uint32_t ntypes_ext = 1;
	for (uint32_t k = 0; k < nheads; k++)
		if (hs_info(s, heads[k].obj)->type + 1 > ntypes_ext)
			ntypes_ext = hs_info(s, heads[k].obj)->type + 1;
	struct type_row *all = calloc(ntypes_ext, sizeof *all);
	if (!all)
		return -ENOMEM;
	for (uint32_t k = 0; k < nheads; k++) {
		const struct ds_head *h = &heads[k];
		uint32_t ty = hs_info(s, h->obj)->type;
		struct type_row *r = &all[ty];
		r->type = ty;
		r->heads++;
		r->members += h->members;
		r->member_bytes += h->member_bytes;
		r->elements += h->elements;
		r->element_bytes += h->element_bytes;
		r->loader_like += (h->flags & DS_FLAG_LOADER_LIKE) != 0;
		/* a head held by a head of its own type is inside that one's
		 * retained size already */
		int nested_same = h->outer != DS_NONE && hs_info(s, heads[h->outer].obj)->type == ty;
		if (h->retained != DS_NO_RETAINED && !nested_same)
			r->retained += h->retained;
	}
	uint32_t n = 0;
	for (uint32_t t = 0; t < ntypes_ext; t++)
		if (all[t].heads)
			all[n++] = all[t];
	*rows_out = all;
	*nrows_out = n;
	return 0;
}

static int render_table_file(struct hfs *fs, const struct node *n, struct buf *out)
{
	struct rc_entry *eh;
	const struct heap_state *s;
	const struct ds_head *heads;
	struct type_row *rows = NULL;
	struct table tb;
	uint32_t nheads, nrows = 0;
	char scratch[64];
	int rc = eng_ds_heads_get(&fs->en, n->gci, &eh, &heads, &nheads);
	if (rc)
		return rc;
	if ((rc = eng_state_get(&fs->en, n->gci, &s))) {
		rcache_put(fs->en.rc, eh);
		return rc;
	}
	table_init(&tb, ds_table_cols, sizeof ds_table_cols / sizeof ds_table_cols[0]);
	if ((rc = aggregate(s, heads, nheads, &rows, &nrows)))
		goto out;
	/* names point into the trace (or scratch, copied into the table below) */
	for (uint32_t r = 0; r < nrows; r++) {
		uint32_t ty = rows[r].type;
		rows[r].name = ty < fs->en.trace->ntypes && fs->en.trace->types[ty].name ?
				       fs->en.trace->types[ty].name : "";
	}
	qsort(rows, nrows, sizeof *rows, by_bytes_then_name);
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		const struct type_row *x = &rows[r];
		const char *name = x->name[0] ? x->name :
				   trace_type_name(fs->en.trace, x->type, scratch, sizeof scratch);
		if ((rc = table_add_row(&tb)))
			break;
		table_set_str(&tb, 0, name, strlen(name));
		uint64_t v[] = { x->heads, x->members, x->member_bytes, x->elements,
				 x->element_bytes, x->retained, x->loader_like };
		for (uint32_t c = 0; c < sizeof v / sizeof v[0]; c++)
			table_set_u64(&tb, c + 1, v[c]);
	}
	if (!rc)
		rc = table_render_tsv(&tb, out);
out:
	free(rows);
	table_free(&tb);
	eng_state_put(&fs->en, s);
	rcache_put(fs->en.rc, eh);
	return rc;
}

int render_ds(struct hfs *fs, const struct node *n, struct buf *out)
{
	switch (n->type) {
	case NT_DS_ROLES: return render_roles(fs, n, out);
	case NT_DS_HEADS: return render_heads(fs, n, out);
	case NT_DS_TABLE: return render_table_file(fs, n, out);
	default: return -EISDIR;
	}
}

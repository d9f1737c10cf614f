/* render_object.c - gc/NNN/objects/<id>/{info,refs,referrers} and
 * gc/NNN/roots/table. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/symbols.h"
#include "render.h"
#include "render_closure.h"
#include "table.h"
#include "tree_internal.h"

static int kv_str(struct buf *out, const char *k, const char *v, size_t len)
{
	int rc = buf_printf(out, "%s\t", k);
	if (!rc)
		rc = put_tsv_field(out, v, len);
	return rc ? rc : buf_putc(out, '\n');
}

static const char *type_name(const struct trace *t, uint32_t type, char *scratch, size_t len)
{
	return trace_type_name(t, type, scratch, len);
}

/* The name of reference slot `slot` of an object of type `type`: the field
 * name for instances, [i] for arrays, #slot when the trace does not say. */
static int put_slot_name(const struct trace *t, uint32_t type, uint32_t slot, struct buf *out)
{
	const struct trace_type *ty = type < t->ntypes ? &t->types[type] : NULL;
	if (ty && ty->name && ty->kind != HTR_TYPE_INSTANCE)
		return buf_printf(out, "[%" PRIu32 "]", slot);
	if (ty && ty->name && slot < ty->nfields && ty->fields[slot].name)
		return put_tsv_field(out, ty->fields[slot].name, strlen(ty->fields[slot].name));
	return buf_printf(out, "#%" PRIu32, slot);
}

static int put_site(const struct trace *t, uint32_t site, int all_frames, struct buf *out)
{
	if (site >= t->nsites || t->sites[site].nframes == 0)
		return 0;
	const struct trace_site *s = &t->sites[site];
	uint32_t n = all_frames ? s->nframes : 1;
	int rc = 0;
	for (uint32_t f = 0; f < n && !rc; f++) {
		if (f)
			rc = buf_put(out, " <- ", 4);
		if (!rc)
			rc = sym_frame(t, &s->frames[f], out);
	}
	return rc;
}

/* Finds the object; -ENOENT if it is not live (lookup checked, but the
 * state may have been rebuilt since: it is the same trace, so this is a
 * guard, not an expected path). */
static int find_object(struct hfs *fs, const struct node *n, const struct heap_state **s,
		       uint32_t *i)
{
	int rc = eng_state_get(&fs->en, n->gci, s);
	if (rc)
		return rc;
	*i = heap_state_find(*s, n->obj);
	if (*i == UINT32_MAX) {
		eng_state_put(&fs->en, *s);
		return -ENOENT;
	}
	return 0;
}

static int put_info_body(struct hfs *fs, const struct heap_state *s, uint32_t i, struct buf *out)
{
	const struct trace *t = fs->en.trace;
	const struct objinfo *oi = hs_info(s, i);
	char scratch[64];
	const char *tn = type_name(t, oi->type, scratch, sizeof scratch);
	const char *th = sym_thread(t, oi->thread);
	int rc = kv_u64(out, "id", s->id[i]);
	if (!rc) rc = kv_str(out, "type", tn, strlen(tn));
	if (!rc) rc = kv_u64(out, "size", oi->size);
	if (!rc) rc = oi->array_length >= 0 ?
		buf_printf(out, "array_length\t%" PRId64 "\n", oi->array_length) :
		buf_put(out, "array_length\t\n", 14);
	if (!rc) rc = buf_put(out, "site\t", 5);
	if (!rc) rc = put_site(t, oi->site, 0, out);
	if (!rc) rc = buf_put(out, "\nsite_frames\t", 13);
	if (!rc) rc = put_site(t, oi->site, 1, out);
	if (!rc) rc = buf_putc(out, '\n');
	if (!rc) rc = kv_str(out, "thread", th, strlen(th));
	if (!rc) {
		uint32_t b = s->birth[i];
		rc = b < t->ngcs ? kv_u64(out, "birth_gc", t->gcs[b].gc) :
				   buf_put(out, "birth_gc\t\n", 10);
	}
	if (!rc) rc = kv_str(out, "preexisting", (oi->flags & HTR_ALLOC_PREEXISTING) ? "yes" : "no",
			     (oi->flags & HTR_ALLOC_PREEXISTING) ? 3 : 2);
	if (rc)
		return rc;
	if (!s->has_graph)
		return buf_printf(out, "reachable\t\nout_degree\t\nin_degree\t\n");
	rc = kv_str(out, "reachable", hs_is_reachable(s, i) ? "yes" : "no",
		    hs_is_reachable(s, i) ? 3 : 2);
	if (!rc) rc = kv_u64(out, "out_degree", s->out_off[i + 1] - s->out_off[i]);
	if (!rc) rc = kv_u64(out, "in_degree", s->in_off[i + 1] - s->in_off[i]);
	return rc;
}

int render_object_info(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	uint32_t i;
	int rc = find_object(fs, n, &s, &i);
	if (rc)
		return rc;
	rc = put_info_body(fs, s, i, out);
	eng_state_put(&fs->en, s);
	return rc;
}

int render_object_refs(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	uint32_t i;
	char scratch[64];
	int rc = find_object(fs, n, &s, &i);
	if (rc)
		return rc;
	if (!s->has_graph) {
		rc = -ENOENT;
		goto out;
	}
	uint32_t type = hs_info(s, i)->type;
	rc = buf_printf(out, "field\ttarget_id\ttarget_type\n");
	for (uint64_t e = s->out_off[i]; e < s->out_off[i + 1] && !rc; e++) {
		uint32_t tgt = s->out_tgt[e];
		const char *tn = type_name(fs->en.trace, hs_info(s, tgt)->type, scratch, sizeof scratch);
		rc = put_slot_name(fs->en.trace, type, hs_ref_slot(s, i, e), out);
		if (!rc) rc = buf_printf(out, "\t%" PRIu64 "\t", s->id[tgt]);
		if (!rc) rc = put_tsv_field(out, tn, strlen(tn));
		if (!rc) rc = buf_putc(out, '\n');
	}
out:
	eng_state_put(&fs->en, s);
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* One line per reference into i, sorted by source; a source that refers to
 * i from two fields gives two lines. */
static int put_referrers(struct hfs *fs, const struct heap_state *s, uint32_t i, struct buf *out)
{
	char scratch[64];
	uint32_t nin = s->in_off[i + 1] - s->in_off[i];
	uint32_t *src = malloc((nin ? nin : 1) * sizeof *src);
	if (!src)
		return -ENOMEM;
	memcpy(src, s->in_src + s->in_off[i], (size_t)nin * sizeof *src);
	qsort(src, nin, sizeof *src, cmp_u32);
	int rc = buf_printf(out, "source_id\tsource_type\tfield\n");
	for (uint32_t k = 0; k < nin && !rc; k++) {
		if (k && src[k] == src[k - 1])
			continue;
		uint32_t from = src[k], type = hs_info(s, from)->type;
		const char *tn = type_name(fs->en.trace, type, scratch, sizeof scratch);
		for (uint64_t e = s->out_off[from]; e < s->out_off[from + 1] && !rc; e++) {
			if (s->out_tgt[e] != i)
				continue;
			rc = buf_printf(out, "%" PRIu64 "\t", s->id[from]);
			if (!rc) rc = put_tsv_field(out, tn, strlen(tn));
			if (!rc) rc = buf_putc(out, '\t');
			if (!rc) rc = put_slot_name(fs->en.trace, type, hs_ref_slot(s, from, e), out);
			if (!rc) rc = buf_putc(out, '\n');
		}
	}
	free(src);
	return rc;
}

int render_object_referrers(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	uint32_t i;
	int rc = find_object(fs, n, &s, &i);
	if (rc)
		return rc;
	rc = s->has_graph ? put_referrers(fs, s, i, out) : -ENOENT;
	eng_state_put(&fs->en, s);
	return rc;
}

/* What identifies a root beyond its object: the static field, the thread,
 * the frame. */
static const struct tcol root_cols[] = {
	{ "kind", TCOL_STR }, { "object", TCOL_U64 }, { "type", TCOL_STR }, { "detail", TCOL_STR },
	{ "retained_size", TCOL_U64 },
};

/* roots in descending retained size of their object (dominator
 * tree), then in trace order. */
struct root_order {
	const uint64_t *retained;
	const struct hs_root *roots;
};

static int by_root_retained(const void *a, const void *b, void *vctx)
{
	const struct root_order *c = vctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t rx = c->retained[c->roots[x].object], ry = c->retained[c->roots[y].object];
	if (rx != ry)
		return rx > ry ? -1 : 1;
	return x < y ? -1 : x > y;
}

int render_roots_table(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct table tb;
	struct buf detail;
	char scratch[64];
	struct rc_entry *de = NULL;
	struct dom_view dv;
	uint32_t *order = NULL;
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	table_init(&tb, root_cols, sizeof root_cols / sizeof *root_cols);
	buf_init(&detail);
	order = malloc(((size_t)s->nroots + 1) * sizeof *order);
	if (!order)
		rc = -ENOMEM;
	else if (!(rc = eng_dominators_get(&fs->en, n->gci, &de, &dv))) {
		struct root_order ro = { dv.retained, s->roots };
		for (uint32_t r = 0; r < s->nroots; r++)
			order[r] = r;
		qsort_r(order, s->nroots, sizeof *order, by_root_retained, &ro);
	}
	for (uint32_t k = 0; k < s->nroots && !rc; k++) {
		uint32_t r = order[k];
		const struct hs_root *root = &s->roots[r];
		const char *kind = htr_root_kind_name(root->kind);
		char kbuf[24];
		if (!kind) {
			snprintf(kbuf, sizeof kbuf, "kind-%" PRIu32, root->kind);
			kind = kbuf;
		}
		if ((rc = table_add_row(&tb)))
			break;
		table_set_str(&tb, 0, kind, strlen(kind));
		if (root->object < s->n) {
			const char *tn = trace_type_name(fs->en.trace, hs_info(s, root->object)->type,
							 scratch, sizeof scratch);
			table_set_u64(&tb, 1, s->id[root->object]);
			table_set_str(&tb, 2, tn, strlen(tn));
			table_set_u64(&tb, 4, dv.retained[root->object]);
		}
		buf_reset(&detail);
		rc = sym_root_detail(fs->en.trace, root, &detail);
		if (!rc)
			table_set_str(&tb, 3, detail.len ? (const char *)detail.data : "", detail.len);
	}
	if (!rc)
		rc = table_render_tsv(&tb, out);
	buf_free(&detail);
	table_free(&tb);
	free(order);
	if (de)
		rcache_put(fs->en.rc, de);
	eng_state_put(&fs->en, s);
	return rc;
}

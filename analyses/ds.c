/* ds.c - see ds.h */
#include "ds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/retained.h"
#include "model/mpar.h"
#include "model/timing.h"

#define DS_BLOB_MAGIC 0x31534448u /* "HDS1" */

/* Blob layout: hdr | u16 roles[n] | pad to 4 | u32 owner[n] | u32 head_obj[nheads] */
struct ds_blob_hdr {
	uint32_t magic, n, nheads, reserved;
};

static size_t owner_offset(uint32_t n)
{
	size_t off = sizeof(struct ds_blob_hdr) + (size_t)n * sizeof(uint16_t);
	return (off + 3) & ~(size_t)3;
}

static size_t blob_size(uint32_t n, uint32_t nheads)
{
	return owner_offset(n) + ((size_t)n + nheads) * sizeof(uint32_t);
}

static int ds_view_of(const void *data, size_t len, struct ds_view *v)
{
	const struct ds_blob_hdr *h = data;
	if (len < sizeof *h || h->magic != DS_BLOB_MAGIC || len != blob_size(h->n, h->nheads))
		return -EINVAL;
	const uint8_t *base = data;
	v->n = h->n;
	v->nheads = h->nheads;
	v->roles = (const uint16_t *)(base + sizeof *h);
	v->owner = (const uint32_t *)(base + owner_offset(h->n));
	v->head_obj = v->owner + h->n;
	return 0;
}

struct ds_ctx {
	struct engine *en;
	uint32_t gci;
};

/* Roles first (into the blob), then heads counted, the blob grown to
 * hold them, and owners. */
static int ds_compute(const struct heap_state *s, const struct trace *t, uint32_t threads,
		      struct buf *out)
{
	size_t base = out->len;
	int rc = buf_reserve(out, blob_size(s->n, 0));
	if (rc)
		return rc;
	struct ds_blob_hdr h = { DS_BLOB_MAGIC, s->n, 0, 0 };
	struct lap_t tq;
	lap_now(&tq);
	/* the roles and the owners are written object by object, the owners
	 * by a serial walk: their pages first, on the threads (model/mpar.h) */
	mpar_memset(threads, out->data + base, 0, blob_size(s->n, 0));
	uint16_t *roles = (uint16_t *)(out->data + base + sizeof h);
	if ((rc = ds_roles_compute(s, t->types, t->ntypes, threads, roles)))
		return rc;
	timing_lap("ds", "roles", &tq);
	h.nheads = ds_heads_index(s, roles, NULL);
	if ((rc = buf_reserve(out, blob_size(s->n, h.nheads))))
		return rc;
	/* the reserve may have moved the data */
	roles = (uint16_t *)(out->data + base + sizeof h);
	uint32_t *owner = (uint32_t *)(out->data + base + owner_offset(s->n));
	uint32_t *head_obj = owner + s->n;
	ds_heads_index(s, roles, head_obj);
	if ((rc = ds_owners_compute(s, roles, head_obj, h.nheads, owner)))
		return rc;
	timing_lap("ds", "heads and owners", &tq);
	memcpy(out->data + base, &h, sizeof h);
	out->len = base + blob_size(s->n, h.nheads);
	return 0;
}

static int ds_cb(void *vctx, struct buf *out)
{
	struct ds_ctx *c = vctx;
	const struct heap_state *s;
	if (!eng_gc_has_graph(c->en, c->gci))
		return -EINVAL;
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	rc = ds_compute(s, c->en->trace, c->en->threads, out);
	eng_state_put(c->en, s);
	return rc;
}

int eng_ds_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct ds_view *v)
{
	struct ds_ctx ctx = { en, gci };
	struct result_key k = { .what = RES_DS_ROLES, .gci = gci };
	int rc = eng_result_get(en, &k, ds_cb, &ctx, e);
	if (rc)
		return rc;
	if ((rc = ds_view_of(rc_data(*e), rc_len(*e), v)))
		eng_put(en, *e);
	return rc;
}

/* The heads' measures alone (retained DS_NO_RETAINED): the walk needs
 * the roles, not the dominator tree. */
static int measures_cb(void *vctx, struct buf *out)
{
	struct ds_ctx *c = vctx;
	struct rc_entry *e;
	struct ds_view v;
	const struct heap_state *s;
	int rc = eng_ds_get(c->en, c->gci, &e, &v);
	if (rc)
		return rc;
	if ((rc = eng_state_get(c->en, c->gci, &s))) {
		eng_put(c->en, e);
		return rc;
	}
	size_t bytes = (size_t)v.nheads * sizeof(struct ds_head);
	struct lap_t tq;
	lap_now(&tq);
	if (!(rc = buf_reserve(out, bytes ? bytes : 1))) {
		rc = ds_heads_measure(s, v.roles, v.owner, v.head_obj, v.nheads, NULL, c->en->threads,
				      (struct ds_head *)(out->data + out->len));
		if (!rc)
			out->len += bytes;
	}
	timing_lap("ds", "heads' measures", &tq);
	eng_state_put(c->en, s);
	eng_put(c->en, e);
	return rc;
}

int eng_ds_measures_get(struct engine *en, uint32_t gci, struct rc_entry **e,
			const struct ds_head **heads, uint32_t *nheads)
{
	struct ds_ctx ctx = { en, gci };
	struct result_key k = { .what = RES_DS_HEADS, .gci = gci, .variant = 1 };
	int rc = eng_result_get(en, &k, measures_cb, &ctx, e);
	if (rc)
		return rc;
	*heads = rc_data(*e);
	*nheads = (uint32_t)(rc_len(*e) / sizeof **heads);
	return 0;
}

/* The measures, and each head's retained size from the shared per-GC
 * dominator tree (analyses/retained.h, computed once).  The roles are not
 * held while the tree is computed (the measures are made and cached
 * first), so that their 6 bytes an object do not sit beside its peak. */
static int heads_cb(void *vctx, struct buf *out)
{
	struct ds_ctx *c = vctx;
	struct rc_entry *me, *de;
	const struct ds_head *m;
	struct dom_view dv;
	uint32_t nm;
	int rc = eng_ds_measures_get(c->en, c->gci, &me, &m, &nm);
	if (rc)
		return rc;
	if ((rc = eng_dominators_get(c->en, c->gci, &de, &dv))) {
		eng_put(c->en, me);
		return rc;
	}
	size_t bytes = (size_t)nm * sizeof *m;
	if (!(rc = buf_reserve(out, bytes ? bytes : 1))) {
		struct ds_head *h = (struct ds_head *)(out->data + out->len);
		memcpy(h, m, bytes);
		for (uint32_t k = 0; k < nm; k++) {
			uint32_t o = h[k].obj;
			h[k].retained = o < dv.n && dv.idom[o] != DOM_UNREACHABLE ? dv.retained[o] :
										    DS_NO_RETAINED;
		}
		out->len += bytes;
	}
	eng_put(c->en, de);
	eng_put(c->en, me);
	return rc;
}

int eng_ds_heads_get(struct engine *en, uint32_t gci, struct rc_entry **e,
		     const struct ds_head **heads, uint32_t *nheads)
{
	struct ds_ctx ctx = { en, gci };
	struct result_key k = { .what = RES_DS_HEADS, .gci = gci };
	int rc = eng_result_get(en, &k, heads_cb, &ctx, e);
	if (rc)
		return rc;
	*heads = rc_data(*e);
	*nheads = (uint32_t)(rc_len(*e) / sizeof **heads);
	return 0;
}

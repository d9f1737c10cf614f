/* retained.c - see retained.h */
#include "retained.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/groupclo.h"

#define DOM_BLOB_MAGIC 0x314d4f44u   /* "DOM1" */

/* ---- dominators ---- */

struct dom_blob_hdr {
	uint32_t magic, n, nreachable, reserved;
};

static size_t dom_blob_size(uint32_t n)
{
	return sizeof(struct dom_blob_hdr) + (size_t)n * (sizeof(uint64_t) + 2 * sizeof(uint32_t));
}

struct gc_ctx {
	struct engine *en;
	uint32_t gci;
};

static int dom_cb(void *vctx, struct buf *out)
{
	struct gc_ctx *c = vctx;
	const struct heap_state *s;
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	if (!s->has_graph) {
		rc = -EINVAL;
		goto out;
	}
	/* computed straight into the blob: a second copy of 16 bytes an object
	 * was the peak of a mount computing every retained size */
	buf_reset(out);
	if ((rc = buf_reserve(out, dom_blob_size(s->n))))
		goto out;
	struct dom_blob_hdr *h = (struct dom_blob_hdr *)out->data;
	struct dominators d = {
		.retained = (uint64_t *)(h + 1),
	};
	d.idom = (uint32_t *)(d.retained + s->n);
	d.retained_count = d.idom + s->n;
	if ((rc = dominators_compute_into(s, c->en->threads, &d)))
		goto out;
	*h = (struct dom_blob_hdr){ DOM_BLOB_MAGIC, d.n, d.nreachable, 0 };
	out->len = dom_blob_size(d.n);
out:
	eng_state_put(c->en, s);
	return rc;
}

int eng_dominators_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct dom_view *v)
{
	struct gc_ctx ctx = { en, gci };
	struct result_key k = { .what = RES_DOMINATORS, .gci = gci };
	int rc = eng_result_get(en, &k, dom_cb, &ctx, e);
	if (rc)
		return rc;
	const struct dom_blob_hdr *h = rc_data(*e);
	if (rc_len(*e) < sizeof *h || h->magic != DOM_BLOB_MAGIC ||
	    rc_len(*e) != dom_blob_size(h->n)) {
		eng_put(en, *e);
		return -EIO;
	}
	v->n = h->n;
	v->nreachable = h->nreachable;
	v->retained = (const uint64_t *)(h + 1);
	v->idom = (const uint32_t *)(v->retained + h->n);
	v->retained_count = v->idom + h->n;
	return 0;
}

void dom_view_as_dominators(const struct dom_view *v, struct dominators *d)
{
	d->n = v->n;
	d->nreachable = v->nreachable;
	d->idom = (uint32_t *)v->idom;
	d->retained = (uint64_t *)v->retained;
	d->retained_count = (uint32_t *)v->retained_count;
}

/* ---- group metrics ---- */


struct grp_ctx {
	struct engine *en;
	uint32_t gci, cls;
	const struct chain *ch;
	int deep_only;
};

/* The key of a group's closure metrics: deep only, or both. */
static struct result_key group_key(uint32_t gci, const struct chain *ch, int deep_only)
{
	return (struct result_key){ .what = deep_only ? RES_GROUP_DEEP : RES_GROUP_RETAINED,
				    .gci = gci, .chain = ch };
}

/* One group: transitive closure, then (unless deep_only) the GC closure
 * from it (the paper's improved algorithm, closure.h). */
static int group_cb(void *vctx, struct buf *out)
{
	struct grp_ctx *c = vctx;
	const struct heap_state *s;
	struct closure_ctx *cc = NULL;
	uint64_t *bits = NULL, *clo = NULL;
	struct closure_metrics deep = { 0, 0 }, ret = { 0, 0 };
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	if (!s->has_graph) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = group_members_bits(&c->en->reg, s, c->ch, &bits)))
		goto out;
	if (!(clo = bitset_alloc(s->n))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = closure_ctx_new(&cc, s)) || (rc = closure_transitive(cc, bits, clo, &deep)))
		goto out;
	if (!c->deep_only && (rc = closure_retained(cc, bits, clo, &ret)))
		goto out;
	struct clo_metrics m = { deep.count, deep.bytes, ret.count, ret.bytes };
	rc = buf_put(out, &m, sizeof m);
out:
	closure_ctx_free(cc);
	free(clo);
	free(bits);
	eng_state_put(c->en, s);
	return rc;
}

static int group_metrics_cached(struct engine *en, uint32_t gci, const struct chain *ch, int deep_only,
				struct clo_metrics *m)
{
	struct rc_entry *e;
	struct grp_ctx ctx = { en, gci, CLS_NONE, ch, deep_only };
	struct result_key k = group_key(gci, ch, deep_only);
	int rc = eng_result_get(en, &k, group_cb, &ctx, &e);
	if (rc)
		return rc;
	if (rc_len(e) == sizeof *m)
		memcpy(m, rc_data(e), sizeof *m);
	else
		rc = -EIO;
	eng_put(en, e);
	return rc;
}

/* The parent chain of a classifier step and the child's key. */
static void parent_chain(const struct chain *ch, struct chain *parent, uint32_t *key)
{
	const struct chain_step *last = &ch->steps[ch->depth - 1];
	*parent = *ch;
	*key = ch->keys[last->key0 + last->nkeys - 1];
	parent->nkeys--;
	if (--parent->steps[parent->depth - 1].nkeys == 0)
		parent->depth--;
}

/* A classifier step's group is one row of its parent's closure table
 * (computed once for all siblings); other groups are computed alone. */
int eng_group_closures(struct engine *en, uint32_t gci, const struct chain *ch, int deep_only,
			 struct clo_metrics *m)
{
	const struct chain_step *last = ch->depth ? &ch->steps[ch->depth - 1] : NULL;
	if (ch->diff_gci != UINT32_MAX || !eng_gc_has_graph(en, gci))
		return -ENOENT;
	if (last && last->op == ST_CLS) {
		struct chain parent;
		uint32_t key;
		const struct clo_row *rows;
		struct rc_entry *e;
		uint32_t nrows;
		parent_chain(ch, &parent, &key);
		int rc = eng_class_closures_get(en, gci, &parent, last->cls, &e, &rows, &nrows);
		if (rc)
			return rc;
		memset(m, 0, sizeof *m);
		for (uint32_t r = 0; r < nrows; r++) {
			if (rows[r].key == key)
				*m = rows[r].m;
		}
		eng_put(en, e);
		return 0;
	}
	return group_metrics_cached(en, gci, ch, deep_only, m);
}

/* ---- a classification's children: every child's closures at once ---- */

struct deep_seed {
	struct clo_metrics m;
};

static int deep_seed_cb(void *vctx, struct buf *out)
{
	return buf_put(out, vctx, sizeof(struct clo_metrics));
}

/* §4.2: the parent's transitive closure is the union of its children's
 * when the children cover it; the table computes every child's anyway, so
 * the parent's deep metrics come for free and are cached for deep_* files. */
static void seed_parent_deep(struct engine *en, uint32_t gci, const struct chain *ch,
			     const struct closure_metrics *u)
{
	struct rc_entry *e;
	struct clo_metrics m = { u->count, u->bytes, 0, 0 };
	struct result_key k = group_key(gci, ch, 1);
	if (!eng_result_get(en, &k, deep_seed_cb, &m, &e))
		eng_put(en, e);
}

/* Every child's T and R at once (groupclo.h: the small ones each alone,
 * sparsely, the big ones 64 per pass over the graph), no longer one
 * closure per child; the rows are the same numbers (docs/closures.md). */
static int tab_cb(void *vctx, struct buf *out)
{
	struct grp_ctx *c = vctx;
	const struct heap_state *s;
	struct closure_metrics *deep = NULL, *ret = NULL;
	uint64_t *uni = NULL, *parent = NULL, *covered = NULL;
	uint32_t ng = 0, *keys = NULL, nkeys = 0;
	struct buf pairs;
	buf_init(&pairs);
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	if (!s->has_graph) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = classify_member_pairs(&c->en->reg, s, c->ch, c->cls, &pairs)) ||
	    (rc = group_members_bits(&c->en->reg, s, c->ch, &parent)))
		goto out;
	const struct cls_pair *pr = (const struct cls_pair *)pairs.data;
	size_t np = pairs.len / sizeof *pr;
	/* what the rows need of the pairs, taken before gclo_compute frees
	 * them (pairs_owner): each group's key, and whether the children
	 * cover the parent (every member got a key: the covered objects are
	 * members, so equal counts mean equal sets) */
	for (size_t i = 0; i < np; i++)
		nkeys += i == 0 || pr[i].key != pr[i - 1].key;
	covered = bitset_alloc(s->n);
	keys = malloc(((size_t)nkeys + 1) * sizeof *keys);
	nkeys = 0;
	if (!covered || !keys) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		if (i == 0 || pr[i].key != pr[i - 1].key)
			keys[nkeys++] = pr[i].key;
		bitset_set(covered, pr[i].obj);
	}
	int cover = bitset_count(covered, s->n) == bitset_count(parent, s->n);
	free(covered);
	free(parent);
	covered = parent = NULL;
	if (!(uni = bitset_alloc(s->n))) {
		rc = -ENOMEM;
		goto out;
	}
	struct gclo_opts go = { .threads = c->en->threads, .pairs_owner = &pairs };
	if ((rc = gclo_compute(s, pr, np, &go, &ng, &deep, &ret, uni)))
		goto out;
	if (ng != nkeys) {
		rc = -EIO; /* a group per run of equal keys: never */
		goto out;
	}
	for (uint32_t g = 0; g < ng && !rc; g++) {
		struct clo_row row = { keys[g], 0,
				       { deep[g].count, deep[g].bytes, ret[g].count, ret[g].bytes } };
		rc = buf_put(out, &row, sizeof row);
	}
	if (!rc && cover) {
		struct closure_metrics u;
		closure_measure(s, uni, &u);
		seed_parent_deep(c->en, c->gci, c->ch, &u);
	}
out:
	free(deep);
	free(ret);
	free(uni);
	free(parent);
	free(covered);
	free(keys);
	buf_free(&pairs);
	eng_state_put(c->en, s);
	return rc;
}

int eng_class_closures_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct clo_row **rows, uint32_t *nrows)
{
	struct grp_ctx ctx = { en, gci, cls, ch, 0 };
	struct result_key k = { .what = RES_CLOSURE_TABLE, .gci = gci, .cls = cls, .chain = ch };
	int rc = eng_result_get(en, &k, tab_cb, &ctx, e);
	if (rc)
		return rc;
	*rows = rc_data(*e);
	*nrows = (uint32_t)(rc_len(*e) / sizeof **rows);
	return 0;
}


/* ---- the largest retainers ---- */

struct ret_sort {
	uint32_t o;
	uint64_t bytes;
};

/* Larger retained first, then smaller index. */
static int by_retained_desc(const struct ret_sort *x, const struct ret_sort *y)
{
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->o < y->o ? -1 : x->o > y->o;
}

static int by_retained_desc_q(const void *a, const void *b)
{
	return by_retained_desc(a, b);
}

static void heap_sift_down(struct ret_sort *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && by_retained_desc(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && by_retained_desc(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct ret_sort t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_sift_up(struct ret_sort *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (by_retained_desc(&h[i], &h[p]) <= 0)
			return;
		struct ret_sort t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

int dom_top(const struct dom_view *v, uint32_t max, uint32_t *top, uint32_t *ntop)
{
	struct ret_sort *h = malloc((size_t)(max ? max : 1) * sizeof *h);
	size_t nh = 0;
	*ntop = 0;
	if (!h)
		return -ENOMEM;
	/* a heap of the max kept so far, its root the smallest of them (by_
	 * retained_desc orders largest first, so "greater" under it means
	 * smaller) */
	for (uint32_t i = 0; i < v->n && max; i++) {
		if (v->idom[i] == DOM_UNREACHABLE)
			continue;
		struct ret_sort x = { i, v->retained[i] };
		if (nh < max) {
			h[nh] = x;
			heap_sift_up(h, nh++);
		} else if (by_retained_desc(&x, &h[0]) < 0) {
			h[0] = x;
			heap_sift_down(h, nh, 0);
		}
	}
	qsort(h, nh, sizeof *h, by_retained_desc_q);
	for (size_t k = 0; k < nh; k++)
		top[k] = h[k].o;
	free(h);
	*ntop = (uint32_t)nh;
	return 0;
}

const struct clo_row *clo_row_find(const struct clo_row *rows, uint32_t n, uint32_t key)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rows[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && rows[lo].key == key ? &rows[lo] : NULL;
}

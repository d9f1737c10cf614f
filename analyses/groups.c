/* groups.c - see groups.h */
#include "groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/diff.h"

struct census_ctx {
	struct engine *en;
	uint32_t gci;
};

static int census_cb(void *vctx, struct buf *out)
{
	struct census_ctx *c = vctx;
	const struct heap_state *s;
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	rc = census_compute(s, out);
	eng_state_put(c->en, s);
	return rc;
}

int eng_census_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct census *c)
{
	struct census_ctx ctx = { en, gci };
	struct result_key k = { .what = RES_CENSUS, .gci = gci };
	int rc = eng_result_get(en, &k, census_cb, &ctx, e);
	if (rc)
		return rc;
	rc = census_view(rc_data(*e), rc_len(*e), c);
	if (rc)
		rcache_put(en->rc, *e);
	return rc;
}

/* ---- groups: tallies, classifications, totals, members ---- */

struct dcensus_ctx {
	struct engine *en;
	uint32_t gci, other;
};

static int dcensus_cb(void *vctx, struct buf *out)
{
	struct dcensus_ctx *c = vctx;
	const struct heap_state *sn, *sm;
	int rc = eng_state_get(c->en, c->gci, &sn);
	if (rc)
		return rc;
	if (!(rc = eng_state_get(c->en, c->other, &sm))) {
		rc = diff_census_compute(sn, sm, out);
		eng_state_put(c->en, sm);
	}
	eng_state_put(c->en, sn);
	return rc;
}

int eng_tallies_get(struct engine *en, uint32_t gci, uint32_t diff_gci, struct rc_entry **e,
		    struct tally t[2], uint32_t *nt)
{
	memset(t, 0, 2 * sizeof *t);
	if (diff_gci == UINT32_MAX) {
		struct census c;
		int rc = eng_census_get(en, gci, e, &c);
		if (rc)
			return rc;
		t[0].infos = c.infos;
		t[0].ninfos = c.h->ninfos;
		t[0].col[COL_LIVE] = c.counts;
		*nt = 1;
		return 0;
	}
	struct dcensus_ctx ctx = { en, gci, diff_gci };
	struct result_key k = { .what = RES_DIFF_CENSUS, .gci = gci, .gci2 = diff_gci };
	int rc = eng_result_get(en, &k, dcensus_cb, &ctx, e);
	if (rc)
		return rc;
	if ((rc = diff_census_view(rc_data(*e), rc_len(*e), t))) {
		rcache_put(en->rc, *e);
		return rc;
	}
	*nt = 2;
	return 0;
}

/* The heap states of a group (one, or two for a diff) with, for a diff,
 * which objects are alive in the other state. */
struct objsrcs {
	struct objsrc src[2];
	uint32_t n;
	uint64_t *in_other[2];
};

static void objsrcs_put(struct engine *en, struct objsrcs *o)
{
	for (uint32_t k = 0; k < o->n; k++) {
		eng_state_put(en, o->src[k].s);
		free(o->in_other[k]);
	}
	o->n = 0;
}

static int objsrcs_get(struct engine *en, uint32_t gci, uint32_t diff_gci, struct objsrcs *o)
{
	memset(o, 0, sizeof *o);
	int rc = eng_state_get(en, gci, &o->src[0].s);
	if (rc)
		return rc;
	o->n = 1;
	if (diff_gci == UINT32_MAX)
		return 0;
	if ((rc = eng_state_get(en, diff_gci, &o->src[1].s)))
		goto fail;
	o->n = 2;
	o->src[1].side = 1;
	o->in_other[0] = bitset_alloc(o->src[0].s->n);
	o->in_other[1] = bitset_alloc(o->src[1].s->n);
	rc = -ENOMEM;
	if (!o->in_other[0] || !o->in_other[1])
		goto fail;
	diff_mark_common(o->src[0].s->id, o->src[0].s->n, o->src[1].s->id, o->src[1].s->n,
			 o->in_other[0], o->in_other[1]);
	o->src[0].in_other = o->in_other[0];
	o->src[1].in_other = o->in_other[1];
	return 0;
fail:
	objsrcs_put(en, o);
	return rc;
}

struct classify_ctx {
	struct engine *en;
	uint32_t gci, cls;
	const struct chain *ch;
	uint32_t threads;          /* classify_cb */
};

static int classify_cb(void *vctx, struct buf *out)
{
	struct classify_ctx *c = vctx;
	int rc;
	if (chain_info_level(&c->en->reg, c->ch, c->cls)) {
		struct rc_entry *e;
		struct tally t[2];
		uint32_t nt;
		if ((rc = eng_tallies_get(c->en, c->gci, c->ch->diff_gci, &e, t, &nt)))
			return rc;
		rc = classify_tallies(&c->en->reg, c->gci, t, nt, c->ch, c->cls, out);
		rcache_put(c->en->rc, e);
		return rc;
	}
	struct objsrcs o;
	if ((rc = objsrcs_get(c->en, c->gci, c->ch->diff_gci, &o)))
		return rc;
	rc = classify_objects(&c->en->reg, o.src, o.n, c->ch, c->cls, c->threads, out);
	objsrcs_put(c->en, &o);
	return rc;
}


int eng_classification_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct cls_row **rows, uint32_t *nrows)
{
	struct classify_ctx ctx = { .en = en, .gci = gci, .cls = cls, .ch = ch, .threads = en->threads };
	struct result_key k = { .what = RES_CLASSIFICATION, .gci = gci, .cls = cls, .chain = ch };
	int rc = eng_result_get(en, &k, classify_cb, &ctx, e);
	if (rc)
		return rc;
	*rows = rc_data(*e);
	*nrows = (uint32_t)(rc_len(*e) / sizeof **rows);
	return 0;
}

static int trie_cb(void *vctx, struct buf *out)
{
	struct classify_ctx *c = vctx;
	struct objsrcs o;
	int rc = objsrcs_get(c->en, c->gci, c->ch->diff_gci, &o);
	if (rc)
		return rc;
	rc = classify_trie(&c->en->reg, o.src, o.n, c->ch, c->cls, out);
	objsrcs_put(c->en, &o);
	return rc;
}

int eng_hier_trie_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
		      struct rc_entry **e, const struct cls_trie_node **nodes, uint32_t *n)
{
	struct classify_ctx ctx = { .en = en, .gci = gci, .cls = cls, .ch = ch };
	struct result_key k = { .what = RES_HIER_TRIE, .gci = gci, .cls = cls, .chain = ch };
	int rc = eng_result_get(en, &k, trie_cb, &ctx, e);
	if (rc)
		return rc;
	*nodes = rc_data(*e);
	*n = (uint32_t)(rc_len(*e) / sizeof **nodes);
	if (!*n) { /* node 0 is always there */
		eng_put(en, *e);
		return -EIO;
	}
	return 0;
}

uint32_t trie_find(const struct cls_trie_node *nodes, uint32_t n, const uint32_t *path, uint32_t len)
{
	uint32_t at = 0;
	for (uint32_t d = 0; d < len; d++) {
		uint32_t lo = nodes[at].first_child, hi = lo + nodes[at].nchildren;
		if (hi > n)
			return UINT32_MAX;
		while (lo < hi) { /* children are sorted by key */
			uint32_t mid = lo + (hi - lo) / 2;
			if (nodes[mid].key < path[d])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nodes[at].first_child + nodes[at].nchildren || nodes[lo].key != path[d])
			return UINT32_MAX;
		at = lo;
	}
	return at;
}

static int totals_cb(void *vctx, struct buf *out)
{
	struct classify_ctx *c = vctx;
	struct cls_row row;
	int rc;
	if (chain_info_level(&c->en->reg, c->ch, CLS_NONE)) {
		struct rc_entry *e;
		struct tally t[2];
		uint32_t nt;
		if ((rc = eng_tallies_get(c->en, c->gci, c->ch->diff_gci, &e, t, &nt)))
			return rc;
		rc = group_totals_tallies(&c->en->reg, c->gci, t, nt, c->ch, &row);
		rcache_put(c->en->rc, e);
	} else {
		struct objsrcs o;
		if ((rc = objsrcs_get(c->en, c->gci, c->ch->diff_gci, &o)))
			return rc;
		rc = group_totals_objects(&c->en->reg, o.src, o.n, c->ch, &row);
		objsrcs_put(c->en, &o);
	}
	return rc ? rc : buf_put(out, &row, sizeof row);
}

/* A classifier step's group is one row of its parent's classification
 * (computed once for all siblings); other groups are counted directly. */
int eng_group_totals(struct engine *en, uint32_t gci, const struct chain *ch, struct cls_row *row)
{
	const struct chain_step *last = ch->depth ? &ch->steps[ch->depth - 1] : NULL;
	struct rc_entry *e;
	int rc;
	if (last && last->op == ST_CLS) {
		struct chain parent = *ch;
		uint32_t key = ch->keys[last->key0 + last->nkeys - 1];
		parent.nkeys--;
		if (--parent.steps[parent.depth - 1].nkeys == 0)
			parent.depth--;
		const struct cls_row *rows;
		uint32_t nrows;
		if ((rc = eng_classification_get(en, gci, &parent, last->cls, &e, &rows, &nrows)))
			return rc;
		memset(row, 0, sizeof *row);
		for (uint32_t r = 0; r < nrows; r++) {
			if (rows[r].key == key)
				*row = rows[r];
		}
		rcache_put(en->rc, e);
		return 0;
	}
	struct classify_ctx ctx = { .en = en, .gci = gci, .cls = CLS_NONE, .ch = ch };
	struct result_key k = { .what = RES_GROUP_TOTALS, .gci = gci, .chain = ch };
	rc = eng_result_get(en, &k, totals_cb, &ctx, &e);
	if (rc)
		return rc;
	if (rc_len(e) == sizeof *row)
		memcpy(row, rc_data(e), sizeof *row);
	else
		rc = -EIO;
	rcache_put(en->rc, e);
	return rc;
}

int eng_group_member_ids(struct engine *en, uint32_t gci, const struct chain *ch, struct buf *out)
{
	struct objsrcs o;
	int rc = objsrcs_get(en, gci, ch->diff_gci, &o);
	if (rc)
		return rc;
	for (uint32_t k = 0; k < o.n && !rc; k++)
		rc = group_member_ids(&en->reg, &o.src[k], ch, out);
	objsrcs_put(en, &o);
	return rc;
}


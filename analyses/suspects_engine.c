/* suspects_engine.c - see suspects_engine.h: the struct sus_source of an
 * engine. */
#include "suspects_engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/classify_ext.h"
#include "analyses/ds.h"
#include "analyses/groups.h"
#include "analyses/paths.h"
#include "analyses/retained.h"
#include "analyses/winstate.h"
#include "model/symbols.h"

static int src_windows(void *ctx, struct sus_windows *w)
{
	const struct win_result *res;
	const uint64_t *reach;
	int rc = eng_windows_results(ctx, &res);
	if (rc)
		return rc;
	w->leak = &res[WK_LEAK];
	w->gc_overhead = &res[WK_GC_OVERHEAD];
	w->churn = &res[WK_CHURN];
	w->leak_spans = res[WK_LEAK].found && res[WK_LEAK].start_gci != res[WK_LEAK].end_gci;
	/* no series: the leak's reachable bytes fall back to used_after */
	w->reachable = eng_reachable_series(ctx, &reach) ? NULL : reach;
	return 0;
}

static int src_state_get(void *ctx, uint32_t gci, const struct heap_state **s)
{
	return eng_state_get(ctx, gci, s);
}

static void src_state_put(void *ctx, const struct heap_state *s)
{
	eng_state_put(ctx, s);
}

static void src_release(void *ctx, void *pin)
{
	eng_put(ctx, pin);
}

static int src_classification(void *ctx, uint32_t gci, const struct chain *ch, uint32_t cls,
			      void **pin, const struct cls_row **rows, uint32_t *nrows)
{
	struct rc_entry *e;
	int rc = eng_classification_get(ctx, gci, ch, cls, &e, rows, nrows);
	if (!rc)
		*pin = e;
	return rc;
}

static int src_group_totals(void *ctx, uint32_t gci, const struct chain *ch, struct cls_row *row)
{
	return eng_group_totals(ctx, gci, ch, row);
}

static int src_dominators(void *ctx, uint32_t gci, void **pin, struct dominators *d)
{
	struct rc_entry *e;
	struct dom_view v;
	int rc = eng_dominators_get(ctx, gci, &e, &v);
	if (!rc) {
		dom_view_as_dominators(&v, d);
		*pin = e;
	}
	return rc;
}

static int src_ds_roles(void *ctx, uint32_t gci, void **pin, struct sus_ds_roles *v)
{
	struct rc_entry *e;
	struct ds_view dv;
	int rc = eng_ds_get(ctx, gci, &e, &dv);
	if (!rc) {
		*v = (struct sus_ds_roles){ dv.nheads, dv.roles, dv.owner, dv.head_obj };
		*pin = e;
	}
	return rc;
}

static int src_ir_trie(void *ctx, uint32_t gci, const struct heap_state *s, const uint64_t *members,
		       struct buf *out)
{
	struct buf tb;
	buf_init(&tb);
	int rc = eng_indirect_root_trie(ctx, gci, s, members, &tb);
	const struct ir_node *t = (const struct ir_node *)tb.data;
	for (size_t k = 0; !rc && k < tb.len / sizeof *t; k++) {
		struct sus_ir_node n = { t[k].parent, t[k].key, t[k].count };
		rc = buf_put(out, &n, sizeof n);
	}
	buf_free(&tb);
	return rc;
}

/* The group by-type/T or by-site/S, then by-indirect-root down to the
 * root's keys: 1 when the chain has no room (no such group, no path). */
static int group_chain(struct engine *en, int site, uint32_t key, const uint32_t *root,
		       uint32_t nroot, struct chain *ch)
{
	uint32_t cls = cls_find(&en->reg, site ? "site" : "type");
	uint32_t ir = cls_find(&en->reg, "indirect-root");
	if (cls == CLS_NONE || ir == CLS_NONE)
		return -EIO;
	chain_init(ch);
	if (chain_push(ch, ST_CLS, cls, key))
		return 1;
	for (uint32_t k = 0; k < nroot; k++) {
		if (k ? chain_extend(ch, root[k]) : chain_push(ch, ST_CLS, ir, root[k]))
			return 1;
	}
	return 0;
}

/* One hop of a path: the object's type and how it was reached (its roots
 * for the first, the reference from the one before for the others). */
static int put_hop(struct engine *en, const struct heap_state *s, const struct path_finder *pf,
		   uint32_t prev, uint32_t o, int named, struct buf *via, sus_hop_fn hop,
		   void *hop_ctx)
{
	char scratch[64];
	int rc = 0;
	buf_reset(via);
	if (prev != UINT32_MAX) {
		rc = sym_ref(en->trace, s, prev, o, via);
	} else {
		rc = sym_roots_of(en->trace, s, o, named ? path_finder_named_roots(pf) : NULL, via);
	}
	if (rc)
		return rc;
	const char *tn = trace_type_name(en->trace, hs_info(s, o)->type, scratch, sizeof scratch);
	return hop(hop_ctx, (const char *)via->data, via->len, tn, strlen(tn));
}

/* The path to the group's first member (in id order) from its nearest
 * root: the first block of the group's paths file. */
static int src_group_path(void *ctx, uint32_t gci, int site, uint32_t key, const uint32_t *root,
			  uint32_t nroot, sus_hop_fn hop, void *hop_ctx)
{
	struct engine *en = ctx;
	struct chain ch;
	const struct heap_state *s;
	struct path_finder *pf = NULL;
	uint64_t *bits = NULL;
	struct buf via;
	int rc = group_chain(en, site, key, root, nroot, &ch);
	if (rc)
		return rc < 0 ? rc : 0;
	if ((rc = eng_state_get(en, gci, &s)))
		return rc;
	buf_init(&via);
	if (!s->has_graph) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = group_members_bits(&en->reg, s, &ch, &bits)))
		goto out;
	uint64_t t = bitset_next(bits, s->n, 0);
	if (t >= s->n)
		goto out;
	if ((rc = path_finder_new(&pf, en, s, &ch)))
		goto out;
	int named;
	uint32_t prev = UINT32_MAX;
	for (uint32_t o = path_finder_root(pf, (uint32_t)t, &named); o != UINT32_MAX && !rc;
	     prev = o, o = path_finder_next(pf, o))
		rc = put_hop(en, s, pf, prev, o, named, &via, hop, hop_ctx);
out:
	buf_free(&via);
	path_finder_free(pf);
	free(bits);
	eng_state_put(en, s);
	return rc;
}

/* The root objects the group is reachable from, with their retained
 * sizes: the rows of its roots file. */
static int src_group_owners(void *ctx, uint32_t gci, int site, uint32_t key, sus_owner_fn owner,
			    void *owner_ctx)
{
	struct engine *en = ctx;
	struct chain ch;
	const struct heap_state *s;
	struct buf ob;
	int rc = group_chain(en, site, key, NULL, 0, &ch);
	if (rc)
		return rc < 0 ? rc : 0;
	if ((rc = eng_state_get(en, gci, &s)))
		return rc;
	buf_init(&ob);
	rc = eng_group_owners(en, s, &ch, &ob);
	const struct group_owner *w = (const struct group_owner *)ob.data;
	for (size_t k = 0; !rc && k < ob.len / sizeof *w; k++)
		rc = owner(owner_ctx, s->id[w[k].obj], w[k].retained);
	buf_free(&ob);
	eng_state_put(en, s);
	return rc;
}

static void src_trace_error(void *ctx, const struct htr_err *err)
{
	eng_set_error(ctx, err);
}

static int suspects_cb(void *ctx, struct buf *out)
{
	struct engine *en = ctx;
	const struct sus_source src = {
		.ctx = en,
		.trace = en->trace,
		.reg = &en->reg,
		.p = &en->sus,
		.threads = en->threads,
		.windows = src_windows,
		.state_get = src_state_get,
		.state_put = src_state_put,
		.release = src_release,
		.classification = src_classification,
		.group_totals = src_group_totals,
		.dominators = src_dominators,
		.ds_roles = src_ds_roles,
		.ir_trie = src_ir_trie,
		.group_path = src_group_path,
		.group_owners = src_group_owners,
		.trace_error = src_trace_error,
	};
	return sus_find(&src, out);
}

int eng_suspects_get(struct engine *en, struct rc_entry **e, struct sus_report *r)
{
	const struct result_key k = { .what = RES_SUSPECTS };
	int rc = eng_result_get(en, &k, suspects_cb, en, e);
	if (rc)
		return rc;
	if ((rc = sus_report_view(rc_data(*e), rc_len(*e), r)))
		eng_put(en, *e);
	return rc;
}

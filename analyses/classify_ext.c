/* classify_ext.c - see classify_ext.h.  The analyses are
 * analyses/roles.c and analyses/rootlabels.c; this file caches their
 * results per GC and turns them into classifier keys. */
#include "classify_ext.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/rootlabels.h"
#include "analyses/ds.h"
#include "analyses/retained.h"

/* ---- by-role ---- */

/* The names ds_role_name gives, as a fixed key table (checked at
 * registration). */
static const char *const role_names[DS_NROLES] = {
	"recursive", "reference-array", "transition", "primitive-array", "mcontainer",
	"container", "icontainer", "hcontainer", "estructure", "container-impl-detail",
	"true-data",
};

enum { DS_KEY_NONE = 0 };
static const char *const ds_fixed[] = { "none" };

struct ds_h {
	struct engine *en;
	struct keyspace *ks;
	struct rc_entry *e;
	struct ds_view v;
	uint32_t ntypes;
	uint32_t *member_key, *element_key; /* per type + 1 (unknown), lazily interned */
};

static int ds_acquire(void *ctx, struct keyspace *ks, uint32_t gci, void **out)
{
	struct engine *en = ctx;
	struct ds_h *h = calloc(1, sizeof *h);
	if (!h)
		return -ENOMEM;
	h->en = en;
	h->ks = ks;
	h->ntypes = en->trace->ntypes;
	int rc = eng_ds_get(en, gci, &h->e, &h->v);
	if (rc) {
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

static void ds_release(void *ctx, void *vh)
{
	struct engine *en = ctx;
	struct ds_h *h = vh;
	eng_put(en, h->e);
	free(h->member_key);
	free(h->element_key);
	free(h);
}

static int role_keys(void *vh, const struct heap_state *s, uint32_t o, struct cls_keys *kb)
{
	struct ds_h *h = vh;
	(void)s;
	int rc = 0;
	if (o >= h->v.n)
		return -EIO; /* the blob is of another state: a bug */
	for (uint32_t k = 0; k < DS_NROLES && !rc; k++) {
		if (h->v.roles[o] & (1u << k))
			rc = cls_keys_add(kb, k);
	}
	return rc;
}

/* Key of "member-of-T" / "element-of-T" for the type of a head. */
static int head_type_key(struct ds_h *h, const struct heap_state *s, uint32_t slot, int element,
			 uint32_t *key)
{
	uint32_t **tab = element ? &h->element_key : &h->member_key;
	if (!*tab) {
		*tab = malloc(((size_t)h->ntypes + 1) * sizeof **tab);
		if (!*tab)
			return -ENOMEM;
		memset(*tab, 0xff, ((size_t)h->ntypes + 1) * sizeof **tab);
	}
	uint32_t type = hs_info(s, h->v.head_obj[slot])->type;
	uint32_t t = type < h->ntypes ? type : h->ntypes;
	if ((*tab)[t] == KS_NO_KEY) {
		char scratch[64], name[600];
		const char *tn = trace_type_name(h->en->trace, type, scratch, sizeof scratch);
		int len = snprintf(name, sizeof name, "%s-of-%s", element ? "element" : "member", tn);
		if (len < 0 || (size_t)len >= sizeof name)
			len = (int)sizeof name - 1;
		(*tab)[t] = ks_intern(h->ks, name, (size_t)len);
		if ((*tab)[t] == KS_NO_KEY)
			return -ENOMEM;
	}
	*key = (*tab)[t];
	return 0;
}

struct holder_ctx {
	struct ds_h *h;
	const struct heap_state *s;
	struct cls_keys *kb;
	uint32_t keys[64], n;   /* element keys so far (distinct) */
	int rc;
};

static int add_holder(void *vctx, uint32_t slot)
{
	struct holder_ctx *c = vctx;
	uint32_t key;
	if ((c->rc = head_type_key(c->h, c->s, slot, 1, &key)))
		return 1;
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->keys[i] == key)
			return 0;
	}
	if (c->n < sizeof c->keys / sizeof *c->keys)
		c->keys[c->n++] = key;
	return 0;
}

static int ds_keys(void *vh, const struct heap_state *s, uint32_t o, struct cls_keys *kb)
{
	struct ds_h *h = vh;
	struct holder_ctx c = { .h = h, .s = s, .kb = kb };
	uint32_t key;
	int rc = 0;
	if (o >= h->v.n || s->n != h->v.n)
		return -EIO;
	if (h->v.owner[o] != DS_NONE) {
		if ((rc = head_type_key(h, s, h->v.owner[o], 0, &key)) || (rc = cls_keys_add(kb, key)))
			return rc;
	}
	ds_for_each_holder(s, h->v.roles, h->v.owner, o, add_holder, &c);
	if (c.rc)
		return c.rc;
	for (uint32_t i = 0; i < c.n && !rc; i++)
		rc = cls_keys_add(kb, c.keys[i]);
	if (!rc && h->v.owner[o] == DS_NONE && !c.n)
		rc = cls_keys_add(kb, DS_KEY_NONE);
	return rc;
}

static const struct cls_ext_ops role_ops = { ds_acquire, role_keys, ds_release };
static const struct cls_ext_ops ds_ops = { ds_acquire, ds_keys, ds_release };

/* ---- root labels ---- */

enum rl_variant { V_DIRECT, V_DIRECT_VAR, V_INDIRECT, V_INDIRECT_VAR, V_FIRST, V_COUNT_ };

/* Fixed keys of each variant (key 0 first). */
enum { K_OTHER = 0, K_MANY = 1, K_NOVAR = 2 };
static const char *const fixed_direct[] = { "<not directly rooted>" };
static const char *const fixed_direct_var[] = { "<not directly rooted by a variable>" };
static const char *const fixed_indirect[] = { "<unreachable>", "<many roots>", "<no variable>" };

#define RL_MAGIC 0x314C5248u /* "HRL1" */
#define PATH_MAX_KEYS 4

/* Blob: hdr | label_off[nlabels+1] | label_keys[nlabkeys] | then
 *   direct:   pairs (object, label)[npairs], by object then label
 *   indirect: set[n] | set_off[nsets+1] | set_lab[nsetlab]
 *   first:    label[n]                                 (all u32) */
struct rl_hdr {
	uint32_t magic, variant, n, nlabels, nlabkeys, nsets, nsetlab, npairs;
};

struct rl_view {
	const struct rl_hdr *h;
	const uint32_t *label_off, *label_keys;
	const uint32_t *pairs;
	const uint32_t *set, *set_off, *set_lab;
	const uint32_t *first;
};

static size_t rl_words(const struct rl_hdr *h)
{
	size_t w = (size_t)h->nlabels + 1 + h->nlabkeys;
	switch (h->variant) {
	case V_DIRECT: case V_DIRECT_VAR: return w + 2 * (size_t)h->npairs;
	case V_INDIRECT: case V_INDIRECT_VAR: return w + h->n + (size_t)h->nsets + 1 + h->nsetlab;
	default: return w + h->n;
	}
}

static int rl_view_of(const void *data, size_t len, struct rl_view *v)
{
	const struct rl_hdr *h = data;
	memset(v, 0, sizeof *v);
	if (len < sizeof *h || h->magic != RL_MAGIC || h->variant >= V_COUNT_ ||
	    len != sizeof *h + rl_words(h) * sizeof(uint32_t))
		return -EINVAL;
	const uint32_t *p = (const uint32_t *)(h + 1);
	v->h = h;
	v->label_off = p;
	p += h->nlabels + 1;
	v->label_keys = p;
	p += h->nlabkeys;
	if (h->variant == V_DIRECT || h->variant == V_DIRECT_VAR) {
		v->pairs = p;
	} else if (h->variant == V_FIRST) {
		v->first = p;
	} else {
		v->set = p;
		v->set_off = p + h->n;
		v->set_lab = v->set_off + h->nsets + 1;
	}
	return 0;
}

static int is_variable_root(uint32_t kind)
{
	return kind == HTR_ROOT_STATIC || kind == HTR_ROOT_LOCAL || kind == HTR_ROOT_JNI_LOCAL;
}

static uint32_t intern_str(struct keyspace *ks, const char *s)
{
	return ks_intern(ks, s, strlen(s));
}

/* The key path of a root: kind / class / field (static), kind / thread /
 * depth-method / slot (local), kind / thread, kind / method, or kind.
 * Returns the number of keys, 0 on allocation failure. */
static uint32_t root_path(const struct trace *t, const struct hs_root *r, struct keyspace *ks,
			  struct buf *b, uint32_t keys[PATH_MAX_KEYS])
{
	char kbuf[24], scratch[64];
	const char *kind = htr_root_kind_name(r->kind);
	uint32_t n = 0;
	if (!kind) {
		snprintf(kbuf, sizeof kbuf, "kind-%" PRIu32, r->kind);
		kind = kbuf;
	}
	keys[n++] = intern_str(ks, kind);
	switch (r->kind) {
	case HTR_ROOT_STATIC: {
		const struct trace_type *ty = r->type < t->ntypes ? &t->types[r->type] : NULL;
		keys[n++] = intern_str(ks, trace_type_name(t, r->type, scratch, sizeof scratch));
		buf_reset(b);
		if (ty && r->field < ty->nfields && ty->fields[r->field].name)
			buf_printf(b, "%s", ty->fields[r->field].name);
		else
			buf_printf(b, "#%" PRIu32, r->field);
		keys[n++] = ks_intern(ks, (const char *)b->data, b->len);
		break;
	}
	case HTR_ROOT_LOCAL:
		keys[n++] = intern_str(ks, sym_thread(t, r->thread));
		buf_reset(b);
		buf_printf(b, "%" PRIu32 "-", r->depth);
		sym_method(t, r->method, b);
		keys[n++] = ks_intern(ks, (const char *)b->data, b->len);
		buf_reset(b);
		buf_printf(b, "%" PRIu32, r->slot);
		keys[n++] = ks_intern(ks, (const char *)b->data, b->len);
		break;
	case HTR_ROOT_THREAD: case HTR_ROOT_JNI_LOCAL: case HTR_ROOT_NATIVE_STACK:
	case HTR_ROOT_THREAD_BLOCK:
		keys[n++] = intern_str(ks, sym_thread(t, r->thread));
		break;
	case HTR_ROOT_CODE_BLOB:
		buf_reset(b);
		sym_method(t, r->method, b);
		keys[n++] = ks_intern(ks, (const char *)b->data, b->len);
		break;
	default:
		break;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (keys[i] == KS_NO_KEY)
			return 0;
	}
	return n;
}

/* Per root: its path (npath[r] keys at path + r * PATH_MAX_KEYS, 0 =
 * left out). */
struct root_paths {
	const struct keyspace *ks;
	uint32_t *path, *npath;
};

static int cmp_paths(const struct root_paths *rp, uint32_t a, uint32_t b)
{
	const uint32_t *pa = rp->path + (size_t)a * PATH_MAX_KEYS, *pb = rp->path + (size_t)b * PATH_MAX_KEYS;
	for (uint32_t i = 0; i < rp->npath[a] && i < rp->npath[b]; i++) {
		if (pa[i] == pb[i])
			continue;
		int c = strcmp(ks_raw(rp->ks, pa[i]), ks_raw(rp->ks, pb[i]));
		if (c)
			return c;
	}
	return rp->npath[a] < rp->npath[b] ? -1 : rp->npath[a] > rp->npath[b];
}

/* Insertion-merge sort of root indexes by path name: qsort has no context
 * argument in C11, and roots are few (thousands); a bottom-up merge sort
 * keeps it O(r log r) anyway. */
static int sort_roots(const struct root_paths *rp, uint32_t *idx, uint32_t n)
{
	uint32_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
	if (!tmp)
		return -ENOMEM;
	for (uint32_t w = 1; w < n; w *= 2) {
		for (uint32_t lo = 0; lo < n; lo += 2 * w) {
			uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			uint32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = cmp_paths(rp, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
			while (i < mid)
				tmp[k++] = idx[i++];
			while (j < hi)
				tmp[k++] = idx[j++];
		}
		memcpy(idx, tmp, (size_t)n * sizeof *idx);
	}
	free(tmp);
	return 0;
}

/* Labels: one per distinct root path, numbered in name order; label[r]
 * per root (RL_NONE: left out).  Appends label_off and label_keys to out
 * (after the header, which the caller fills). */
static int make_labels(const struct trace *t, const struct heap_state *s, struct keyspace *ks,
		       int vars_only, uint32_t *label, struct rl_hdr *h, struct buf *out)
{
	struct root_paths rp = { ks, NULL, NULL };
	uint32_t *idx = NULL, nidx = 0;
	struct buf b, keys;
	int rc = -ENOMEM;
	buf_init(&b);
	buf_init(&keys);
	rp.path = malloc(((size_t)s->nroots + 1) * PATH_MAX_KEYS * sizeof *rp.path);
	rp.npath = calloc((size_t)s->nroots + 1, sizeof *rp.npath);
	idx = malloc(((size_t)s->nroots + 1) * sizeof *idx);
	if (!rp.path || !rp.npath || !idx)
		goto out;
	for (uint32_t r = 0; r < s->nroots; r++) {
		label[r] = RL_NONE;
		if (s->roots[r].object >= s->n || (vars_only && !is_variable_root(s->roots[r].kind)))
			continue;
		rp.npath[r] = root_path(t, &s->roots[r], ks, &b, rp.path + (size_t)r * PATH_MAX_KEYS);
		if (!rp.npath[r])
			goto out;
		idx[nidx++] = r;
	}
	if ((rc = sort_roots(&rp, idx, nidx)))
		goto out;
	uint32_t off = 0;
	h->nlabels = 0;
	for (uint32_t i = 0; i < nidx && !rc; i++) {
		uint32_t r = idx[i];
		if (i && !cmp_paths(&rp, idx[i - 1], r)) {
			label[r] = h->nlabels - 1;
			continue;
		}
		label[r] = h->nlabels++;
		rc = buf_put(out, &off, sizeof off);
		if (!rc)
			rc = buf_put(&keys, rp.path + (size_t)r * PATH_MAX_KEYS, rp.npath[r] * sizeof(uint32_t));
		off += rp.npath[r];
	}
	if (!rc)
		rc = buf_put(out, &off, sizeof off);
	if (!rc)
		rc = keys.len ? buf_put(out, keys.data, keys.len) : 0;
	h->nlabkeys = off;
out:
	free(rp.path);
	free(rp.npath);
	free(idx);
	buf_free(&b);
	buf_free(&keys);
	return rc;
}

static int cmp_pair(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int put_direct(const struct heap_state *s, const uint32_t *label, struct rl_hdr *h,
		      struct buf *out)
{
	size_t base = out->len;
	int rc = 0;
	for (uint32_t r = 0; r < s->nroots && !rc; r++) {
		if (label[r] == RL_NONE)
			continue;
		uint32_t pr[2] = { s->roots[r].object, label[r] };
		rc = buf_put(out, pr, sizeof pr);
	}
	if (rc)
		return rc;
	uint32_t *p = (uint32_t *)(out->data + base), n = (uint32_t)((out->len - base) / 8), m = 0;
	qsort(p, n, 2 * sizeof *p, cmp_pair);
	for (uint32_t i = 0; i < n; i++) {
		if (m && p[2 * (m - 1)] == p[2 * i] && p[2 * (m - 1) + 1] == p[2 * i + 1])
			continue;
		p[2 * m] = p[2 * i];
		p[2 * m + 1] = p[2 * i + 1];
		m++;
	}
	out->len = base + (size_t)m * 8;
	h->npairs = m;
	return 0;
}

/* Labels ranked for the cap: an object reached from more than
 * RL_CAP_DEFAULT roots keeps the cap smallest labels, and by name those
 * were jni-global/... before static/... whatever they hold, so the static
 * field that keeps a leak alive could be cut off.  Ranked instead by the
 * bytes their roots' objects retain (largest first, then by name):
 * rank[label] and, back, by_rank[rank]. */
struct label_rank {
	uint64_t retained;
	uint32_t label;
};

static int by_retained_then_label(const void *a, const void *b)
{
	const struct label_rank *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

static int rank_labels(const struct heap_state *s, const uint32_t *label, uint32_t nlabels,
		       const uint64_t *retained, uint32_t *rank, uint32_t *by_rank)
{
	struct label_rank *lr = calloc(nlabels ? nlabels : 1, sizeof *lr);
	if (!lr)
		return -ENOMEM;
	for (uint32_t l = 0; l < nlabels; l++)
		lr[l].label = l;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t l = label[r];
		if (l < nlabels && retained[s->roots[r].object] > lr[l].retained)
			lr[l].retained = retained[s->roots[r].object];
	}
	qsort(lr, nlabels, sizeof *lr, by_retained_then_label);
	for (uint32_t k = 0; k < nlabels; k++) {
		rank[lr[k].label] = k;
		by_rank[k] = lr[k].label;
	}
	free(lr);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int put_indirect(struct engine *en, const struct heap_state *s, const uint32_t *label,
			struct rl_hdr *h, struct buf *out)
{
	struct rc_entry *de;
	struct dom_view dv;
	struct rootlabels rl;
	uint32_t nl = h->nlabels;
	uint32_t *rank = malloc(((size_t)nl + 1) * sizeof *rank);
	uint32_t *by_rank = malloc(((size_t)nl + 1) * sizeof *by_rank);
	uint32_t *ranked = malloc(((size_t)s->nroots + 1) * sizeof *ranked);
	int rc = !rank || !by_rank || !ranked ? -ENOMEM : eng_dominators_get(en, s->gc_index, &de, &dv);
	if (!rc) {
		if (dv.n != s->n)
			rc = -EIO;
		if (!rc)
			rc = rank_labels(s, label, nl, dv.retained, rank, by_rank);
		for (uint32_t r = 0; !rc && r < s->nroots; r++)
			ranked[r] = label[r] < nl ? rank[label[r]] : label[r];
		if (!rc)
			rc = rootlabels_indirect(s, ranked, dv.idom, RL_CAP_DEFAULT, &rl);
		eng_put(en, de);
	}
	free(rank);
	free(ranked);
	if (rc) {
		free(by_rank);
		return rc;
	}
	/* back to labels, each set ascending (RL_MANY, if there, stays last) */
	for (uint32_t k = 0; k < rl.nsets; k++) {
		uint32_t a = rl.set_off[k], b = rl.set_off[k + 1];
		uint32_t end = b > a && rl.set_lab[b - 1] == RL_MANY ? b - 1 : b;
		for (uint32_t i = a; i < end; i++)
			rl.set_lab[i] = by_rank[rl.set_lab[i]];
		qsort(rl.set_lab + a, end - a, sizeof *rl.set_lab, cmp_u32);
	}
	free(by_rank);
	h->nsets = rl.nsets;
	h->nsetlab = rl.set_off[rl.nsets];
	rc = buf_put(out, rl.set, (size_t)s->n * sizeof *rl.set);
	if (!rc)
		rc = buf_put(out, rl.set_off, ((size_t)rl.nsets + 1) * sizeof *rl.set_off);
	if (!rc && h->nsetlab)
		rc = buf_put(out, rl.set_lab, (size_t)h->nsetlab * sizeof *rl.set_lab);
	rootlabels_free(&rl);
	return rc;
}

static int put_first(const struct heap_state *s, const uint32_t *label, struct buf *out)
{
	int rc = buf_reserve(out, (size_t)s->n * sizeof(uint32_t) + 1);
	if (rc)
		return rc;
	if ((rc = rootlabels_first(s, label, (uint32_t *)(out->data + out->len))))
		return rc;
	out->len += (size_t)s->n * sizeof(uint32_t);
	return 0;
}

struct rl_ctx {
	struct engine *en;
	struct keyspace *ks;
	uint32_t gci;
	enum rl_variant v;
};

static int rl_compute(void *vctx, struct buf *out)
{
	struct rl_ctx *c = vctx;
	const struct heap_state *s;
	struct rl_hdr h = { .magic = RL_MAGIC, .variant = c->v };
	uint32_t *label = NULL;
	if (!eng_gc_has_graph(c->en, c->gci))
		return -EINVAL;
	int rc = eng_state_get(c->en, c->gci, &s);
	if (rc)
		return rc;
	h.n = s->n;
	size_t base = out->len;
	int vars = c->v == V_DIRECT_VAR || c->v == V_INDIRECT_VAR;
	if (!(label = malloc(((size_t)s->nroots + 1) * sizeof *label)))
		rc = -ENOMEM;
	if (!rc)
		rc = buf_put(out, &h, sizeof h);
	if (!rc)
		rc = make_labels(c->en->trace, s, c->ks, vars, label, &h, out);
	if (!rc) {
		switch (c->v) {
		case V_DIRECT: case V_DIRECT_VAR: rc = put_direct(s, label, &h, out); break;
		case V_INDIRECT: case V_INDIRECT_VAR: rc = put_indirect(c->en, s, label, &h, out); break;
		default: rc = put_first(s, label, out); break;
		}
	}
	if (!rc)
		memcpy(out->data + base, &h, sizeof h);
	free(label);
	eng_state_put(c->en, s);
	return rc;
}

struct rl_h {
	struct rc_entry *e;
	struct rl_view v;
};

static int rl_acquire(struct engine *en, struct keyspace *ks, uint32_t gci, enum rl_variant v,
		      void **out)
{
	struct rl_ctx c = { en, ks, gci, v };
	struct result_key k = { .what = RES_ROOT_LABELS, .gci = gci, .variant = (int)v };
	struct rl_h *h = calloc(1, sizeof *h);
	if (!h)
		return -ENOMEM;
	int rc = eng_result_get(en, &k, rl_compute, &c, &h->e);
	if (!rc && (rc = rl_view_of(rc_data(h->e), rc_len(h->e), &h->v)))
		eng_put(en, h->e);
	if (rc) {
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

static void rl_release(void *ctx, void *vh)
{
	struct engine *en = ctx;
	struct rl_h *h = vh;
	eng_put(en, h->e);
	free(h);
}

/* The path of label l, then (multi-path) CLS_PATH_END. */
static int put_label(const struct rl_view *v, uint32_t l, int end, struct cls_keys *kb)
{
	int rc = 0;
	for (uint32_t k = v->label_off[l]; k < v->label_off[l + 1] && !rc; k++)
		rc = cls_keys_add(kb, v->label_keys[k]);
	return !rc && end ? cls_keys_add(kb, CLS_PATH_END) : rc;
}

static int put_fixed(uint32_t key, struct cls_keys *kb)
{
	int rc = cls_keys_add(kb, key);
	return rc ? rc : cls_keys_add(kb, CLS_PATH_END);
}

static int rl_keys(void *vh, const struct heap_state *s, uint32_t o, struct cls_keys *kb)
{
	const struct rl_view *v = &((struct rl_h *)vh)->v;
	int rc = 0;
	if (o >= v->h->n || s->n != v->h->n)
		return -EIO;
	switch (v->h->variant) {
	case V_DIRECT: case V_DIRECT_VAR: {
		/* first pair of o by binary search */
		uint32_t lo = 0, hi = v->h->npairs;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (v->pairs[2 * mid] < o)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == v->h->npairs || v->pairs[2 * lo] != o)
			return put_fixed(K_OTHER, kb);
		for (; lo < v->h->npairs && v->pairs[2 * lo] == o && !rc; lo++)
			rc = put_label(v, v->pairs[2 * lo + 1], 1, kb);
		return rc;
	}
	case V_INDIRECT: case V_INDIRECT_VAR: {
		uint32_t set = v->set[o];
		if (set == RL_NONE)
			return put_fixed(K_OTHER, kb);
		if (v->set_off[set] == v->set_off[set + 1])
			return put_fixed(K_NOVAR, kb);
		for (uint32_t k = v->set_off[set]; k < v->set_off[set + 1] && !rc; k++) {
			uint32_t l = v->set_lab[k];
			rc = l == RL_MANY ? put_fixed(K_MANY, kb) : put_label(v, l, 1, kb);
		}
		return rc;
	}
	default:
		return v->first[o] == RL_NONE ? cls_keys_add(kb, K_OTHER) :
		       put_label(v, v->first[o], 0, kb);
	}
}

/* ---- by-indirect-root of one group, every level at once ---- */

struct trie {
	struct ir_node *nodes; uint32_t n, cap;
	uint32_t *slots; uint32_t nslots;   /* node index + 1; 0 empty */
	uint32_t *stamp;                    /* [cap]: last set counted + 1 */
};

static uint32_t trie_hash(uint32_t parent, uint32_t key, uint32_t mask)
{
	uint64_t h = ((uint64_t)parent << 32 | key) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32) & mask;
}

static int trie_grow(struct trie *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64, nslots = cap * 2;
	struct ir_node *nn = realloc(t->nodes, sizeof *nn * cap);
	if (!nn)
		return -ENOMEM;
	t->nodes = nn;
	uint32_t *ns = realloc(t->stamp, sizeof *ns * cap);
	if (!ns)
		return -ENOMEM;
	t->stamp = ns;
	uint32_t *sl = calloc(nslots, sizeof *sl);
	if (!sl)
		return -ENOMEM;
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t h = trie_hash(nn[i].parent, nn[i].key, nslots - 1);
		while (sl[h])
			h = (h + 1) & (nslots - 1);
		sl[h] = i + 1;
	}
	free(t->slots);
	t->slots = sl;
	t->nslots = nslots;
	t->cap = cap;
	return 0;
}

/* The child of parent under key, made (count 0) when new; UINT32_MAX on
 * allocation failure. */
static uint32_t trie_child(struct trie *t, uint32_t parent, uint32_t key)
{
	if (t->n == t->cap && trie_grow(t))
		return UINT32_MAX;
	uint32_t mask = t->nslots - 1, h = trie_hash(parent, key, mask);
	for (; t->slots[h]; h = (h + 1) & mask) {
		const struct ir_node *x = &t->nodes[t->slots[h] - 1];
		if (x->parent == parent && x->key == key)
			return t->slots[h] - 1;
	}
	t->nodes[t->n] = (struct ir_node){ parent, key, 0 };
	t->stamp[t->n] = 0;
	t->slots[h] = t->n + 1;
	return t->n++;
}

/* Adds cnt objects of set number `stamp` along one key path; a node
 * already counted for this set is not counted again (an object counts once
 * per node whatever the number of its paths through it). */
static int trie_add_path(struct trie *t, const uint32_t *keys, uint32_t nkeys, uint32_t stamp,
			 uint64_t cnt)
{
	uint32_t at = 0;
	for (uint32_t k = 0; k < nkeys; k++) {
		if ((at = trie_child(t, at, keys[k])) == UINT32_MAX)
			return -ENOMEM;
		if (t->stamp[at] != stamp) {
			t->stamp[at] = stamp;
			t->nodes[at].count += cnt;
		}
	}
	return 0;
}

int eng_indirect_root_trie(struct engine *en, uint32_t gci, const struct heap_state *s,
			   const uint64_t *members, struct buf *out)
{
	uint32_t cls = cls_find(&en->reg, "indirect-root");
	struct cls_def *d = cls == CLS_NONE ? NULL : (struct cls_def *)cls_get(&en->reg, cls);
	struct trie t = { 0 };
	uint64_t *per_set = NULL, none = 0, novar = 0, total = 0;
	void *vh = NULL;
	if (!s->has_graph)
		return -EINVAL;
	if (!d)
		return -EIO;
	/* the fixed keys (<unreachable>, ...) first, as a classification
	 * pass would have them */
	int rc = cls_prepare(&en->reg, cls);
	if (!rc)
		rc = rl_acquire(en, &d->ks, gci, V_INDIRECT, &vh);
	if (rc)
		return rc;
	const struct rl_view *v = &((struct rl_h *)vh)->v;
	if (s->n != v->h->n) {
		rc = -EIO;
		goto out;
	}
	/* one pass over the members: objects per label set */
	if (!(per_set = calloc((size_t)v->h->nsets + 1, sizeof *per_set))) {
		rc = -ENOMEM;
		goto out;
	}
	BITSET_FOREACH(members, s->n, o) {
		uint32_t set = v->set[o];
		total++;
		if (set == RL_NONE)
			none++;
		else if (v->set_off[set] == v->set_off[set + 1])
			novar++;
		else
			per_set[set]++;
	}
	if ((rc = trie_grow(&t)))
		goto out;
	t.nodes[0] = (struct ir_node){ UINT32_MAX, UINT32_MAX, total };
	t.stamp[0] = 0;
	t.n = 1;
	/* then the sets' key paths, as rl_keys gives them */
	const uint32_t k_other = K_OTHER, k_novar = K_NOVAR, k_many = K_MANY;
	if (none && (rc = trie_add_path(&t, &k_other, 1, 1, none)))
		goto out;
	if (novar && (rc = trie_add_path(&t, &k_novar, 1, 2, novar)))
		goto out;
	for (uint32_t set = 0; set < v->h->nsets && !rc; set++) {
		if (!per_set[set])
			continue;
		for (uint32_t k = v->set_off[set]; k < v->set_off[set + 1] && !rc; k++) {
			uint32_t l = v->set_lab[k];
			if (l == RL_MANY)
				rc = trie_add_path(&t, &k_many, 1, set + 3, per_set[set]);
			else
				rc = trie_add_path(&t, v->label_keys + v->label_off[l],
						   v->label_off[l + 1] - v->label_off[l], set + 3,
						   per_set[set]);
		}
	}
	if (!rc)
		rc = buf_put(out, t.nodes, sizeof *t.nodes * t.n);
out:
	free(per_set);
	free(t.nodes);
	free(t.slots);
	free(t.stamp);
	rl_release(en, vh);
	return rc;
}

#define RL_ACQUIRE(fn, variant) \
	static int fn(void *ctx, struct keyspace *ks, uint32_t gci, void **h) \
	{ \
		return rl_acquire(ctx, ks, gci, variant, h); \
	}
RL_ACQUIRE(acq_direct, V_DIRECT)
RL_ACQUIRE(acq_direct_var, V_DIRECT_VAR)
RL_ACQUIRE(acq_indirect, V_INDIRECT)
RL_ACQUIRE(acq_indirect_var, V_INDIRECT_VAR)
RL_ACQUIRE(acq_first, V_FIRST)

static const struct cls_ext_ops rl_ops[V_COUNT_] = {
	[V_DIRECT] = { acq_direct, rl_keys, rl_release },
	[V_DIRECT_VAR] = { acq_direct_var, rl_keys, rl_release },
	[V_INDIRECT] = { acq_indirect, rl_keys, rl_release },
	[V_INDIRECT_VAR] = { acq_indirect_var, rl_keys, rl_release },
	[V_FIRST] = { acq_first, rl_keys, rl_release },
};

static int is_root_classifier(const struct cls_def *d)
{
	for (int v = 0; v < V_COUNT_; v++)
		if (d->ext_ops == &rl_ops[v])
			return 1;
	return 0;
}

/* The last step of ch's last segment that names a root by a root
 * classifier (one of rl_ops'); its classifier's definition in *d.  NULL
 * if none, or if the step's key is a fixed one (<many roots>, ...). */
static const struct chain_step *root_step(struct engine *en, const struct chain *ch, const struct cls_def **d)
{
	for (uint32_t i = ch->depth; i-- > 0;) {
		const struct chain_step *st = &ch->steps[i];
		if (st->op != ST_CLS && st->op != ST_FILTER)
			return NULL; /* a transformer: the objects before it are others */
		const struct cls_def *def = st->op == ST_CLS && st->nkeys ? cls_get(&en->reg, st->cls) : NULL;
		if (!def || !is_root_classifier(def))
			continue;
		if (ch->keys[st->key0] < def->ext_nfixed)
			return NULL;
		*d = def;
		return st;
	}
	return NULL;
}

int eng_chain_roots(struct engine *en, const struct heap_state *s, const struct chain *ch, uint64_t **roots)
{
	const struct cls_def *d = NULL;
	const struct chain_step *st = root_step(en, ch, &d);
	*roots = NULL;
	if (!st)
		return 0;
	uint64_t *bits = bitset_alloc(s->nroots);
	if (!bits)
		return -ENOMEM;
	struct buf b;
	buf_init(&b);
	uint32_t path[PATH_MAX_KEYS];
	int rc = 0;
	/* the names the classifier gave the roots, interned in its space
	 * already: the keys compare as the names do */
	for (uint32_t r = 0; r < s->nroots && !rc; r++) {
		uint32_t n = root_path(en->trace, &s->roots[r], (struct keyspace *)&d->ks, &b, path);
		if (!n)
			rc = -ENOMEM;
		else if (n >= st->nkeys && !memcmp(path, ch->keys + st->key0, st->nkeys * sizeof *path))
			bitset_set(bits, r);
	}
	buf_free(&b);
	if (rc)
		free(bits);
	else
		*roots = bits;
	return rc;
}

int eng_register_analysis_classifiers(struct engine *en)
{
	for (uint32_t k = 0; k < DS_NROLES; k++) {
		if (!ds_role_name(k) || strcmp(ds_role_name(k), role_names[k]))
			return -EINVAL; /* roles.h renamed a role: update role_names */
	}
	const struct cls_ext defs[] = {
		{ "role", "data-structure roles (ds/roles); an object with two roles sits under both",
		  CARD_MANY, 0, 1, role_names, DS_NROLES, &role_ops, en },
		{ "ds", "member-of-<type> / element-of-<type> of the data structures the object "
			"belongs to (ds/heads), none",
		  CARD_MANY, 0, 1, ds_fixed, 1, &ds_ops, en },
		{ "root", "directly GC-rooted: kind/class/field, kind/thread/frame/slot, ... of the "
			  "roots pointing at the object",
		  CARD_HIER, 1, 1, fixed_direct, 1, &rl_ops[V_DIRECT], en },
		{ "root-var", "directly GC-rooted by a variable (static field, local, JNI local)",
		  CARD_HIER, 1, 1, fixed_direct_var, 1, &rl_ops[V_DIRECT_VAR], en },
		{ "indirect-root", "every GC root reaching the object, as by-root",
		  CARD_HIER, 1, 1, fixed_indirect, 3, &rl_ops[V_INDIRECT], en },
		{ "indirect-root-var", "every variable root reaching the object, as by-root-var",
		  CARD_HIER, 1, 1, fixed_indirect, 3, &rl_ops[V_INDIRECT_VAR], en },
		{ "first-root", "the nearest GC root (the first found by a search from all roots)",
		  CARD_HIER, 0, 1, fixed_indirect, 1, &rl_ops[V_FIRST], en },
	};
	for (size_t i = 0; i < sizeof defs / sizeof *defs; i++) {
		int rc = cls_register_ext(&en->reg, &defs[i], NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* render_closure.c - see render_closure.h.  The analyses are
 * analyses/closure.c and analyses/dominators.c; this file caches, walks
 * the graph for roots and paths, and prints. */
#include "render_closure.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/adhoc.h"
#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/paths.h"
#include "analyses/classify_ext.h"
#include "model/buf.h"
#include "model/names.h"
#include "model/symbols.h"
#include "render.h"
#include "table.h"
#include "tree_internal.h"

#define ROOTS_BLOB_MAGIC 0x31545052u /* "RPT1" */
#define TOP_MAX 100                  /* dominators/top rows */
#define PATH_SAMPLES 10              /* paths: group members sampled */

/* ---- small printing helpers ---- */

static int put_type_of(struct hfs *fs, const struct heap_state *s, uint32_t o, struct buf *out)
{
	char scratch[64];
	const char *tn = trace_type_name(fs->en.trace, hs_info(s, o)->type, scratch, sizeof scratch);
	return put_tsv_field(out, tn, strlen(tn));
}

struct gc_ctx {
	struct hfs *fs;
	uint32_t gci;
};

/* ---- group metrics ---- */

int closure_files_present(const struct hfs *fs, const struct node *n)
{
	return n->chain.diff_gci == UINT32_MAX && eng_gc_has_graph(&fs->en, n->gci);
}

int render_group_closure_file(struct hfs *fs, const struct node *n, int which, struct buf *out)
{
	struct clo_metrics m;
	int deep_only = which == CLF_DEEP_COUNT || which == CLF_DEEP_SIZE;
	int rc = eng_group_closures(&fs->en, n->gci, &n->chain, deep_only, &m);
	if (rc)
		return rc;
	uint64_t v[4] = { [CLF_DEEP_COUNT] = m.deep_count, [CLF_DEEP_SIZE] = m.deep_bytes,
			  [CLF_RET_COUNT] = m.retained_count, [CLF_RET_SIZE] = m.retained_bytes };
	return buf_printf(out, "%" PRIu64 "\n", v[which & 3]);
}

int render_group_closure_summary(struct hfs *fs, const struct node *n, struct buf *out)
{
	struct clo_metrics m;
	if (!closure_files_present(fs, n))
		return 0;
	int rc = eng_group_closures(&fs->en, n->gci, &n->chain, 0, &m);
	if (rc)
		return rc;
	return buf_printf(out,
			  "deep_count\t%" PRIu64 "\ndeep_size\t%" PRIu64 "\nretained_count\t%" PRIu64
			  "\nretained_size\t%" PRIu64 "\n",
			  m.deep_count, m.deep_bytes, m.retained_count, m.retained_bytes);
}

/* ---- roots and paths of a group (analyses/paths.h) ---- */

/* "kind detail" of every root pointing at o (model/symbols.h), as a field. */
static int put_roots_of(struct hfs *fs, const struct heap_state *s, uint32_t o, const uint64_t *only,
			struct buf *out)
{
	struct buf d;
	buf_init(&d);
	int rc = sym_roots_of(fs->en.trace, s, o, only, &d);
	if (!rc)
		rc = put_tsv_field(out, (const char *)d.data, d.len);
	buf_free(&d);
	return rc;
}

/* roots: the root objects from which the group is reachable (§3.4.1). */
int render_group_roots(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct buf ob;
	buf_init(&ob);
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	if ((rc = eng_group_owners(&fs->en, s, &n->chain, &ob)))
		goto out;
	const struct group_owner *w = (const struct group_owner *)ob.data;
	size_t nw = ob.len / sizeof *w;
	rc = buf_printf(out, "id\ttype\tretained_size\troots\n");
	for (size_t k = 0; k < nw && !rc; k++) {
		uint32_t o = w[k].obj;
		rc = put_u64(out, s->id[o]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type_of(fs, s, o, out);
		if (!rc) rc = buf_printf(out, "\t%" PRIu64 "\t", w[k].retained);
		if (!rc) rc = put_roots_of(fs, s, o, NULL, out);
		if (!rc) rc = buf_putc(out, '\n');
	}
out:
	buf_free(&ob);
	eng_state_put(&fs->en, s);
	return rc;
}

/* Lines "id type via" from the root to the target: via is the root for
 * the first line (the group's named roots only, if it started there), the
 * referring field of the line before for the others. */
static int put_path(struct hfs *fs, const struct heap_state *s, const struct path_finder *pf,
		    uint32_t root, int named, struct buf *out)
{
	struct buf via;
	buf_init(&via);
	int rc = 0;
	uint32_t prev = UINT32_MAX;
	for (uint32_t o = root; o != UINT32_MAX && !rc; prev = o, o = path_finder_next(pf, o)) {
		rc = put_u64(out, s->id[o]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type_of(fs, s, o, out);
		if (!rc) rc = buf_putc(out, '\t');
		if (rc)
			break;
		if (prev == UINT32_MAX) {
			rc = put_roots_of(fs, s, o, named ? path_finder_named_roots(pf) : NULL, out);
		} else {
			buf_reset(&via);
			if (!(rc = sym_ref(fs->en.trace, s, prev, o, &via)))
				rc = put_tsv_field(out, (const char *)via.data, via.len);
		}
		if (!rc) rc = buf_putc(out, '\n');
	}
	buf_free(&via);
	return rc;
}

int render_group_paths(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct path_finder *pf = NULL;
	uint64_t *bits = NULL;
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	if (!s->has_graph) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = group_members_bits(&fs->en.reg, s, &n->chain, &bits)) ||
	    (rc = path_finder_new(&pf, &fs->en, s, &n->chain)))
		goto out;
	/* a sample: the first PATH_SAMPLES members in id order */
	uint32_t k = 0;
	for (uint64_t i = bitset_next(bits, s->n, 0); i < s->n && k < PATH_SAMPLES && !rc;
	     i = bitset_next(bits, s->n, i + 1), k++) {
		int named;
		uint32_t root = path_finder_root(pf, (uint32_t)i, &named);
		rc = buf_printf(out, "%s# object %" PRIu64 "\n", k ? "\n" : "", s->id[i]);
		if (!rc)
			rc = root == UINT32_MAX ? buf_printf(out, "unreachable\n") :
						  put_path(fs, s, pf, root, named, out);
	}
out:
	path_finder_free(pf);
	free(bits);
	eng_state_put(&fs->en, s);
	return rc;
}

/* ---- per object ---- */

static int object_index(struct hfs *fs, const struct node *n, const struct heap_state **s,
			uint32_t *i)
{
	int rc = eng_state_get(&fs->en, n->gci, s);
	if (rc)
		return rc;
	*i = heap_state_find(*s, n->obj);
	if (*i == UINT32_MAX || !(*s)->has_graph) {
		eng_state_put(&fs->en, *s);
		return -ENOENT;
	}
	return 0;
}

static int object_dom(struct hfs *fs, const struct node *n, int dominator, struct buf *out)
{
	const struct heap_state *s;
	struct rc_entry *e;
	struct dom_view v;
	uint32_t i;
	int rc = object_index(fs, n, &s, &i);
	if (rc)
		return rc;
	if (!(rc = eng_dominators_get(&fs->en, n->gci, &e, &v))) {
		if (!dominator)
			rc = buf_printf(out, "%" PRIu64 "\n", v.retained[i]);
		else if (v.idom[i] == DOM_ROOT)
			rc = buf_printf(out, "roots\n");
		else if (v.idom[i] == DOM_UNREACHABLE)
			rc = buf_printf(out, "unreachable\n");
		else
			rc = buf_printf(out, "%" PRIu64 "\n", s->id[v.idom[i]]);
		rcache_put(fs->en.rc, e);
	}
	eng_state_put(&fs->en, s);
	return rc;
}

int render_object_retained(struct hfs *fs, const struct node *n, struct buf *out)
{
	return object_dom(fs, n, 0, out);
}

int render_object_dominator(struct hfs *fs, const struct node *n, struct buf *out)
{
	return object_dom(fs, n, 1, out);
}

int render_object_path(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct path_finder *pf = NULL;
	struct chain none; /* no group: paths from any root */
	uint32_t i;
	chain_init(&none);
	int rc = object_index(fs, n, &s, &i);
	if (rc)
		return rc;
	if (!(rc = path_finder_new(&pf, &fs->en, s, &none))) {
		int named;
		uint32_t root = path_finder_root(pf, i, &named);
		rc = buf_printf(out, "id\ttype\tvia\n");
		if (!rc)
			rc = root == UINT32_MAX ? 0 : put_path(fs, s, pf, root, named, out);
	}
	path_finder_free(pf);
	eng_state_put(&fs->en, s);
	return rc;
}

/* ---- dominators/top ---- */

/* Min-heap of the TOP_MAX largest retained sizes. */
int render_dominators_top(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct rc_entry *e;
	struct dom_view v;
	uint32_t top[TOP_MAX];
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	if ((rc = eng_dominators_get(&fs->en, n->gci, &e, &v))) {
		eng_state_put(&fs->en, s);
		return rc;
	}
	uint32_t nh;
	rc = dom_top(&v, TOP_MAX, top, &nh);
	if (!rc)
		rc = buf_printf(out, "id\ttype\tretained_size\tretained_count\tshallow_size\tdominator\troot\n");
	for (uint32_t k = 0; k < nh && !rc; k++) {
		uint32_t o = top[k];
		rc = put_u64(out, s->id[o]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type_of(fs, s, o, out);
		if (!rc) rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64 "\t", v.retained[o],
					 v.retained_count[o], hs_info(s, o)->size);
		if (!rc) rc = v.idom[o] == DOM_ROOT ? buf_printf(out, "roots\t") :
			buf_printf(out, "%" PRIu64 "\t", s->id[v.idom[o]]);
		/* the GC roots pointing at it: which static field (class) holds it */
		if (!rc) rc = put_roots_of(fs, s, o, NULL, out);
		if (!rc) rc = buf_putc(out, '\n');
	}
	rcache_put(fs->en.rc, e);
	eng_state_put(&fs->en, s);
	return rc;
}

/* ---- roots/ as a trie of paths ---- */

/* Appends one escaped path component (with a leading '/' unless first). */
static int put_comp(struct buf *out, const char *raw, size_t len)
{
	char esc[NAME_BUF];
	size_t n = name_escape(raw, len, esc);
	int rc = out->len ? buf_putc(out, '/') : 0;
	return rc ? rc : buf_put(out, esc, n);
}

static int put_comp_str(struct buf *out, const char *raw)
{
	return put_comp(out, raw, strlen(raw));
}

static int put_comp_u64(struct buf *out, uint64_t v)
{
	char tmp[24];
	snprintf(tmp, sizeof tmp, "%" PRIu64, v);
	return put_comp_str(out, tmp);
}

/* DESIGN.md's layout: static/<class>/<field>, thread/<thread>,
 * local/<thread>/<depth>-<method>/<slot>, jni-global/<id>,
 * jni-local/<thread>/<depth>, monitor/<id>, class/<id>,
 * class-loader/<id>, other/<kind>/<id>. */
static int root_path(const struct trace *t, const struct heap_state *s, const struct hs_root *r,
		     struct buf *out)
{
	char scratch[64];
	struct buf tmp;
	int rc;
	uint64_t id = r->object < s->n ? s->id[r->object] : 0;
	buf_init(&tmp);
	switch (r->kind) {
	case HTR_ROOT_STATIC: {
		const struct trace_type *ty = r->type < t->ntypes ? &t->types[r->type] : NULL;
		rc = put_comp_str(out, "static");
		if (!rc) rc = put_comp_str(out, trace_type_name(t, r->type, scratch, sizeof scratch));
		if (!rc && ty && r->field < ty->nfields && ty->fields[r->field].name)
			rc = put_comp_str(out, ty->fields[r->field].name);
		else if (!rc) {
			snprintf(scratch, sizeof scratch, "#%" PRIu32, r->field);
			rc = put_comp_str(out, scratch);
		}
		break;
	}
	case HTR_ROOT_THREAD:
		rc = put_comp_str(out, "thread");
		if (!rc) rc = put_comp_str(out, sym_thread(t, r->thread));
		break;
	case HTR_ROOT_LOCAL:
		rc = put_comp_str(out, "local");
		if (!rc) rc = put_comp_str(out, sym_thread(t, r->thread));
		if (!rc) rc = buf_printf(&tmp, "%" PRIu32 "-", r->depth);
		if (!rc) rc = sym_method(t, r->method, &tmp);
		if (!rc) rc = put_comp(out, (const char *)tmp.data, tmp.len);
		if (!rc) rc = put_comp_u64(out, r->slot);
		break;
	case HTR_ROOT_JNI_LOCAL:
		rc = put_comp_str(out, "jni-local");
		if (!rc) rc = put_comp_str(out, sym_thread(t, r->thread));
		if (!rc) rc = put_comp_u64(out, r->depth);
		break;
	case HTR_ROOT_JNI_GLOBAL:
	case HTR_ROOT_MONITOR:
	case HTR_ROOT_SYSTEM_CLASS:
	case HTR_ROOT_CLASS_LOADER:
		rc = put_comp_str(out, r->kind == HTR_ROOT_JNI_GLOBAL ? "jni-global" :
				       r->kind == HTR_ROOT_MONITOR ? "monitor" :
				       r->kind == HTR_ROOT_SYSTEM_CLASS ? "class" : "class-loader");
		if (!rc) rc = put_comp_u64(out, id);
		break;
	default: {
		const char *k = htr_root_kind_name(r->kind);
		rc = put_comp_str(out, "other");
		if (!rc) rc = put_comp_str(out, k ? k : "unknown");
		if (!rc) rc = put_comp_u64(out, id);
		break;
	}
	}
	buf_free(&tmp);
	return rc;
}

/* Blob: hdr | u32 root[n] (root index, path order) | u32 off[n+1] | text */
struct rp_hdr {
	uint32_t magic, n;
};

struct rp_view {
	uint32_t n;
	const uint32_t *root, *off;
	const char *text;
};

static const char *rp_path(const struct rp_view *v, uint32_t k, size_t *len)
{
	*len = v->off[k + 1] - v->off[k];
	return v->text + v->off[k];
}

struct rp_sort {
	const char *text;   /* base of the scratch text */
	uint32_t root, off, len;
};

static int rp_cmp(const void *a, const void *b)
{
	const struct rp_sort *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text + x->off, y->text + y->off, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->root < y->root ? -1 : x->root > y->root;
}

static int rp_cb(void *vctx, struct buf *out)
{
	struct gc_ctx *c = vctx;
	const struct heap_state *s;
	struct buf text, one;
	struct rp_sort *v = NULL;
	int rc = eng_state_get(&c->fs->en, c->gci, &s);
	if (rc)
		return rc;
	buf_init(&text);
	buf_init(&one);
	v = malloc(((size_t)s->nroots + 1) * sizeof *v);
	if (!v) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t r = 0; r < s->nroots && !rc; r++) {
		buf_reset(&one);
		if (!(rc = root_path(c->fs->en.trace, s, &s->roots[r], &one))) {
			v[r] = (struct rp_sort){ NULL, r, (uint32_t)text.len, (uint32_t)one.len };
			rc = buf_put(&text, one.data, one.len);
		}
	}
	if (rc)
		goto out;
	for (uint32_t r = 0; r < s->nroots; r++)
		v[r].text = (const char *)text.data;
	qsort(v, s->nroots, sizeof *v, rp_cmp);
	struct rp_hdr h = { ROOTS_BLOB_MAGIC, s->nroots };
	rc = buf_put(out, &h, sizeof h);
	for (uint32_t r = 0; r < s->nroots && !rc; r++)
		rc = buf_put(out, &v[r].root, sizeof(uint32_t));
	uint32_t off = 0;
	for (uint32_t r = 0; r <= s->nroots && !rc; r++) {
		rc = buf_put(out, &off, sizeof off);
		if (r < s->nroots)
			off += v[r].len;
	}
	for (uint32_t r = 0; r < s->nroots && !rc; r++)
		rc = buf_put(out, text.data + v[r].off, v[r].len);
out:
	free(v);
	buf_free(&text);
	buf_free(&one);
	eng_state_put(&c->fs->en, s);
	return rc;
}

static int rp_get(struct hfs *fs, uint32_t gci, struct rc_entry **e, struct rp_view *v)
{
	struct gc_ctx ctx = { fs, gci };
	struct result_key k = { .what = RES_ROOT_PATHS, .gci = gci };
	int rc = eng_result_get(&fs->en, &k, rp_cb, &ctx, e);
	if (rc)
		return rc;
	const struct rp_hdr *h = rc_data(*e);
	size_t len = rc_len(*e);
	if (len < sizeof *h || h->magic != ROOTS_BLOB_MAGIC ||
	    len < sizeof *h + (2 * (size_t)h->n + 1) * sizeof(uint32_t)) {
		rcache_put(fs->en.rc, *e);
		return -EIO;
	}
	v->n = h->n;
	v->root = (const uint32_t *)(h + 1);
	v->off = v->root + h->n;
	v->text = (const char *)(v->off + h->n + 1);
	return 0;
}

/* Bytes of the first d components of a path (d >= number of components:
 * all of it); *ncomp = its number of components. */
static size_t prefix_bytes(const char *p, size_t len, uint32_t d, uint32_t *ncomp)
{
	uint32_t c = 1;
	size_t cut = len;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '/') {
			if (c == d && cut == len)
				cut = i;
			c++;
		}
	}
	*ncomp = len ? c : 0;
	return d == 0 ? 0 : cut;
}

/* Walks the children of trie node (depth d, first root f); calls back
 * with each distinct next component and the first path index having it. */
typedef int (*rp_child_fn)(void *ctx, const char *comp, size_t len, uint32_t k, int leaf);

static int rp_children(const struct rp_view *v, uint32_t d, uint32_t f, rp_child_fn fn, void *ctx)
{
	size_t plen0, pl;
	uint32_t nc;
	const char *p0 = rp_path(v, f, &plen0);
	size_t pre = prefix_bytes(p0, plen0, d, &nc);
	const char *last = NULL;
	size_t lastlen = 0;
	for (uint32_t k = f; k < v->n; k++) {
		const char *p = rp_path(v, k, &pl);
		if (pl < pre || memcmp(p, p0, pre) != 0 || (pre && pl > pre && p[pre] != '/'))
			break;
		if (pl == pre)
			continue; /* this path ends here (a leaf at depth d) */
		const char *cs = p + (pre ? pre + 1 : 0);
		const char *ce = memchr(cs, '/', (size_t)(p + pl - cs));
		size_t clen = ce ? (size_t)(ce - cs) : (size_t)(p + pl - cs);
		if (last && clen == lastlen && memcmp(cs, last, clen) == 0)
			continue;
		last = cs;
		lastlen = clen;
		int rc = fn(ctx, cs, clen, k, ce == NULL);
		if (rc)
			return rc;
	}
	return 0;
}

struct rp_emit_ctx {
	const struct node *p;
	rclo_emit_fn emit;
	void *ctx;
	const char *want;   /* lookup: the name; NULL: list */
	struct node *out;
	int found;
};

static int rp_emit_one(void *vctx, const char *comp, size_t len, uint32_t k, int leaf)
{
	struct rp_emit_ctx *c = vctx;
	char name[NAME_BUF];
	if (len >= sizeof name)
		return 0;
	memcpy(name, comp, len);
	name[len] = '\0';
	struct node ch = *c->p;
	ch.type = leaf ? NT_ROOTS_FILE : NT_ROOTS_SUBDIR;
	ch.aux[0] = c->p->type == NT_ROOTS_DIR ? 1 : c->p->aux[0] + 1;
	ch.aux[1] = k;
	if (c->want) {
		if (strcmp(name, c->want) != 0)
			return 0;
		*c->out = ch;
		c->found = 1;
		return 1;
	}
	return c->emit(c->ctx, name, &ch) ? 1 : 0;
}

static int rp_walk(struct hfs *fs, const struct node *p, struct rp_emit_ctx *ec)
{
	struct rc_entry *e;
	struct rp_view v;
	int rc = rp_get(fs, p->gci, &e, &v);
	if (rc)
		return rc;
	uint32_t d = p->type == NT_ROOTS_DIR ? 0 : p->aux[0];
	uint32_t f = p->type == NT_ROOTS_DIR ? 0 : p->aux[1];
	if (v.n && f < v.n)
		rc = rp_children(&v, d, f, rp_emit_one, ec);
	rcache_put(fs->en.rc, e);
	return rc;
}

int roots_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx)
{
	struct rp_emit_ctx ec = { p, emit, ctx, NULL, NULL, 0 };
	return rp_walk(fs, p, &ec);
}

int roots_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	struct rp_emit_ctx ec = { p, NULL, NULL, name, c, 0 };
	int rc = rp_walk(fs, p, &ec);
	if (rc < 0)
		return rc;
	return ec.found ? 0 : -ENOENT;
}

/* A leaf: every root whose path is this one, with its object's retained
 * size. */
int render_roots_file(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	struct rc_entry *e, *de;
	struct rp_view v;
	struct dom_view dv;
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	if ((rc = rp_get(fs, n->gci, &e, &v))) {
		eng_state_put(&fs->en, s);
		return rc;
	}
	if ((rc = eng_dominators_get(&fs->en, n->gci, &de, &dv)))
		goto out;
	size_t l0, l;
	const char *p0 = n->aux[1] < v.n ? rp_path(&v, n->aux[1], &l0) : NULL;
	rc = buf_printf(out, "id\ttype\tretained_size\n");
	for (uint32_t k = n->aux[1]; p0 && k < v.n && !rc; k++) {
		const char *p = rp_path(&v, k, &l);
		if (l != l0 || memcmp(p, p0, l) != 0)
			break;
		uint32_t o = s->roots[v.root[k]].object;
		rc = put_u64(out, s->id[o]);
		if (!rc) rc = buf_putc(out, '\t');
		if (!rc) rc = put_type_of(fs, s, o, out);
		if (!rc) rc = buf_printf(out, "\t%" PRIu64 "\n", dv.retained[o]);
	}
	rcache_put(fs->en.rc, de);
out:
	rcache_put(fs->en.rc, e);
	eng_state_put(&fs->en, s);
	return rc;
}

/* ---- threads/<thread>/stack ---- */

int threads_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx)
{
	for (uint32_t k = 0; k < fs->en.trace->nthreads; k++) {
		char name[NAME_BUF];
		const char *raw = sym_thread(fs->en.trace, k);
		name_escape(raw, strlen(raw), name);
		struct node c = *p;
		c.type = NT_THREAD_DIR;
		c.aux[0] = k;
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

int threads_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	for (uint32_t k = 0; k < fs->en.trace->nthreads; k++) {
		char esc[NAME_BUF];
		const char *raw = sym_thread(fs->en.trace, k);
		name_escape(raw, strlen(raw), esc);
		if (strcmp(esc, name) == 0) {
			*c = *p;
			c->type = NT_THREAD_DIR;
			c->aux[0] = k;
			return 0;
		}
	}
	return -ENOENT;
}

static int by_depth_slot(const void *a, const void *b)
{
	const struct hs_root *x = *(const struct hs_root *const *)a, *y = *(const struct hs_root *const *)b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Frames from the top (depth 0) down, rebuilt from the local-variable
 * roots (§3.1): frames without a reference local do not show. */
int render_thread_stack(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct heap_state *s;
	const struct hs_root **v = NULL;
	uint32_t nv = 0;
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	v = malloc(((size_t)s->nroots + 1) * sizeof *v);
	if (!v) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t r = 0; r < s->nroots; r++) {
		if (s->roots[r].kind == HTR_ROOT_LOCAL && s->roots[r].thread == n->aux[0])
			v[nv++] = &s->roots[r];
	}
	qsort(v, nv, sizeof *v, by_depth_slot);
	rc = buf_printf(out, "depth\tmethod\tslot\tobject\ttype\n");
	for (uint32_t k = 0; k < nv && !rc; k++) {
		struct buf m;
		buf_init(&m);
		rc = sym_method(fs->en.trace, v[k]->method, &m);
		if (!rc) rc = buf_printf(out, "%" PRIu32 "\t", v[k]->depth);
		if (!rc) rc = put_tsv_field(out, (const char *)m.data, m.len);
		if (!rc) rc = buf_printf(out, "\t%" PRIu32 "\t%" PRIu64 "\t", v[k]->slot,
					 s->id[v[k]->object]);
		if (!rc) rc = put_type_of(fs, s, v[k]->object, out);
		if (!rc) rc = buf_putc(out, '\n');
		buf_free(&m);
	}
out:
	free(v);
	eng_state_put(&fs->en, s);
	return rc;
}

/* ---- closure/ ---- */

static const struct { const char *name; enum step_op op; } closure_kinds[] = {
	{ "transitive", ST_CLOSURE_TRANSITIVE }, { "retained", ST_CLOSURE_RETAINED },
};

int closure_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx)
{
	(void)fs;
	for (size_t k = 0; k < 2; k++) {
		struct node c = *p;
		c.type = NT_GROUP;
		c.aux[0] = 0;
		if (!chain_push(&c.chain, closure_kinds[k].op, CLS_NONE, 0) &&
		    emit(ctx, closure_kinds[k].name, &c))
			return 1;
	}
	return 0;
}

int closure_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	(void)fs;
	for (size_t k = 0; k < 2; k++) {
		if (strcmp(name, closure_kinds[k].name) != 0)
			continue;
		*c = *p;
		c->type = NT_GROUP;
		c->aux[0] = 0;
		return chain_push(&c->chain, closure_kinds[k].op, CLS_NONE, 0) ? -ENOENT : 0;
	}
	return -ENOENT;
}

/* ---- ad-hoc groups ---- */

/* The store lives in analyses/adhoc.c; the tree names its groups and
 * parses their selectors. */


static const char *after_prefix(const char *path, const char *prefix)
{
	while (*path == '/')
		path++;
	size_t n = strlen(prefix);
	return strncmp(path, prefix, n) == 0 ? path + n : NULL;
}

const char *adhoc_dir_name(const char *path, char name[256])
{
	const char *p = after_prefix(path, "groups/");
	if (!p || !*p)
		return NULL;
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX_BYTES || (p[n] && p[n + 1 + strspn(p + n + 1, "/")] != '\0'))
		return NULL;
	memcpy(name, p, n);
	name[n] = '\0';
	return name;
}

const char *adhoc_members_name(const char *path, char name[256])
{
	const char *p = after_prefix(path, "groups/");
	if (!p || !*p)
		return NULL;
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX_BYTES || strcmp(p + n, "/members") != 0)
		return NULL;
	memcpy(name, p, n);
	name[n] = '\0';
	return name;
}

int hfs_adhoc_mkdir(struct hfs *fs, const char *name)
{
	return adhoc_add(fs->en.adhoc, name);
}

int hfs_adhoc_rmdir(struct hfs *fs, const char *name)
{
	return adhoc_remove(fs->en.adhoc, name);
}

/* Current version of a group, or 0. */
static uint32_t adhoc_version_of(struct hfs *fs, const char *name)
{
	return adhoc_version(fs->en.adhoc, name);
}

struct idvec {
	uint64_t *v;
	size_t n;
	uint64_t cap;
};

static int idvec_add(struct idvec *iv, uint64_t id)
{
	int rc = array_reserve((void **)&iv->v, &iv->cap, (uint64_t)iv->n + 1, sizeof *iv->v);
	if (!rc)
		iv->v[iv->n++] = id;
	return rc;
}

static int parse_ids(const struct buf *b, struct idvec *iv)
{
	uint64_t v = 0;
	int have = 0, rc = 0;
	for (size_t i = 0; i < b->len && !rc; i++) {
		char ch = (char)b->data[i];
		if (ch >= '0' && ch <= '9') {
			v = v * 10 + (uint64_t)(ch - '0');
			have = 1;
		} else if (have) {
			rc = idvec_add(iv, v);
			v = 0;
			have = 0;
		}
	}
	return !rc && have ? idvec_add(iv, v) : rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One selector: a decimal object id (live at the latest GC) or the path
 * of a group node (its objects). */
/* The GCs selectors took members from must be one where objects are not
 * known across GCs (heap dumps): records it in *home, or refuses a
 * second one. */
static int note_home(struct hfs *fs, uint32_t gci, uint32_t *home, const char *sel, char *msg,
		     size_t msglen)
{
	if (*home == UINT32_MAX || *home == gci) {
		*home = gci;
		return 0;
	}
	if (!fs->en.trace->identity_unknown)
		return 0;
	char a[16], b[16];
	hfs_gc_name(fs, *home, a);
	hfs_gc_name(fs, gci, b);
	snprintf(msg, msglen, "%.200s: members from gc/%s after members from gc/%s: the GCs are heap "
		 "dumps, whose objects are not known from one dump to the next", sel, b, a);
	return -EINVAL;
}

static int add_selector(struct hfs *fs, const char *sel, struct idvec *iv, uint32_t *home,
			char *msg, size_t msglen)
{
	char path[HFS_PATH_MAX];
	struct hfs_attr a;
	struct buf b;
	int rc;
	if (sel[strspn(sel, "0123456789")] == '\0' && strlen(sel) <= 20) {
		const struct heap_state *s;
		uint64_t id = strtoull(sel, NULL, 10);
		if (!fs->en.trace->ngcs)
			return -EINVAL;
		if ((rc = eng_state_get(&fs->en, fs->en.trace->ngcs - 1, &s)))
			return rc;
		int live = heap_state_find(s, id) != UINT32_MAX;
		eng_state_put(&fs->en, s);
		if (!live) {
			snprintf(msg, msglen, "%.200s: no object with this id at gc/latest", sel);
			return -EINVAL;
		}
		if ((rc = note_home(fs, fs->en.trace->ngcs - 1, home, sel, msg, msglen)))
			return rc;
		return idvec_add(iv, id);
	}
	while (sel[0] == '.' && sel[1] == '/')
		sel += 2;
	if (snprintf(path, sizeof path, "/%s/count", sel + (*sel == '/')) >= (int)sizeof path ||
	    hfs_getattr(fs, path, &a) || a.kind != HFS_FILE) {
		snprintf(msg, msglen, "%.200s: neither an object id nor the path of a group node", sel);
		return -EINVAL;
	}
	uint32_t gci;
	snprintf(path, sizeof path, "/%s", sel + (*sel == '/'));
	if (!hfs_group_gc(fs, path, &gci) && (rc = note_home(fs, gci, home, sel, msg, msglen)))
		return rc;
	buf_init(&b);
	snprintf(path, sizeof path, "/%s/objects", sel + (*sel == '/'));
	rc = hfs_read(fs, path, &b);
	if (rc == -EISDIR) {
		snprintf(path, sizeof path, "/%s/objects/all", sel + (*sel == '/'));
		rc = hfs_read(fs, path, &b);
	}
	if (!rc)
		rc = parse_ids(&b, iv);
	else
		snprintf(msg, msglen, "%.200s: cannot read the group's objects", sel);
	buf_free(&b);
	return rc;
}

/* The ids that the selector lines of data name, sorted and unique, into
 * iv (owned by the caller); -EINVAL and msg at the first bad line. */
static int parse_members(struct hfs *fs, const char *name, const char *data, size_t len,
			 struct idvec *iv, uint32_t *home, char *msg, size_t msglen)
{
	char line[HFS_PATH_MAX];
	int rc = 0;
	uint32_t lineno = 0;
	for (size_t i = 0; i < len && !rc;) {
		size_t e = i;
		while (e < len && data[e] != '\n')
			e++;
		lineno++;
		size_t b = i, end = e;
		while (b < end && (data[b] == ' ' || data[b] == '\t' || data[b] == '\r'))
			b++;
		while (end > b && (data[end - 1] == ' ' || data[end - 1] == '\t' || data[end - 1] == '\r'))
			end--;
		i = e + 1;
		if (b == end || data[b] == '#')
			continue;
		if (end - b >= sizeof line) {
			snprintf(msg, msglen, "groups/%.64s/members: line %" PRIu32 ": selector too long",
				 name, lineno);
			rc = -EINVAL;
			break;
		}
		memcpy(line, data + b, end - b);
		line[end - b] = '\0';
		char sub[400];
		if ((rc = add_selector(fs, line, iv, home, sub, sizeof sub)) == -EINVAL)
			snprintf(msg, msglen, "groups/%.64s/members: line %" PRIu32 ": %.300s", name, lineno, sub);
	}
	if (!rc && iv->n) {
		qsort(iv->v, iv->n, sizeof *iv->v, cmp_u64);
		size_t w = 1;
		for (size_t k = 1; k < iv->n; k++) {
			if (iv->v[k] != iv->v[w - 1])
				iv->v[w++] = iv->v[k];
		}
		iv->n = w;
	}
	return rc;
}

/* The ids that group name's selector text names, into iv (the caller's):
 * 0, -ENOENT (no such group), -EINVAL and msg (a bad line). */
static int members_of(struct hfs *fs, const char *name, const char *data, size_t len,
		      struct idvec *iv, uint32_t *home, char *msg, size_t msglen)
{
	msg[0] = '\0';
	*home = UINT32_MAX;
	if (!adhoc_version_of(fs, name))
		return -ENOENT;
	return parse_members(fs, name, data, len, iv, home, msg, msglen);
}

int hfs_adhoc_check_members(struct hfs *fs, const char *name, const char *data, size_t len,
			    char *msg, size_t msglen)
{
	struct idvec iv = { 0 };
	uint32_t home;
	int rc = members_of(fs, name, data, len, &iv, &home, msg, msglen);
	free(iv.v);
	return rc;
}

int hfs_adhoc_set_members(struct hfs *fs, const char *name, const char *data, size_t len,
			  char *msg, size_t msglen)
{
	struct idvec iv = { 0 };
	uint32_t home;
	int rc = members_of(fs, name, data, len, &iv, &home, msg, msglen);
	if (rc) {
		free(iv.v);
		return rc;
	}
	return adhoc_set(fs->en.adhoc, name, iv.v, (uint32_t)iv.n, data, len, home);
}

int render_adhoc_members(struct hfs *fs, const struct node *n, struct buf *out)
{
	uint32_t version = n->chain.depth ? n->chain.steps[0].cls : 0;
	return adhoc_text(fs->en.adhoc, version, out);
}

static void adhoc_node(struct hfs *fs, const struct node *p, uint32_t version, struct node *c)
{
	*c = *p;
	c->type = NT_GROUP;
	c->gci = fs->en.trace->ngcs ? fs->en.trace->ngcs - 1 : 0;
	c->aux[0] = 1;
	chain_init(&c->chain);
	chain_push(&c->chain, ST_ADHOC, version, 0);
}

int groups_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx)
{
	char name[NAME_BUF];
	uint32_t version;
	/* names copied out: emit may take other locks */
	for (uint32_t k = 0; adhoc_nth(fs->en.adhoc, k, name, sizeof name, &version); k++) {
		if (!version || !fs->en.trace->ngcs)
			continue;
		struct node c;
		adhoc_node(fs, p, version, &c);
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

int groups_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	uint32_t version = adhoc_version_of(fs, name);
	if (!version || !fs->en.trace->ngcs)
		return -ENOENT;
	adhoc_node(fs, p, version, c);
	return 0;
}

/* An ad-hoc group's members are ids.  Where objects are not known across
 * GCs (heap dumps), the same id at another dump is a guess: the group is
 * only shown at the GC its selectors named (its home). */
static int adhoc_gc_shown(struct hfs *fs, const struct node *p, uint32_t gci)
{
	if (!fs->en.trace->identity_unknown)
		return 1;
	uint32_t home = adhoc_home(fs->en.adhoc, p->chain.depth ? p->chain.steps[0].cls : 0);
	return home == UINT32_MAX || home == gci;
}

int adhoc_gc_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx)
{
	for (uint32_t i = 0; i < fs->en.trace->ngcs; i++) {
		if (!adhoc_gc_shown(fs, p, i))
			continue;
		char name[16];
		struct node c = *p;
		c.type = NT_GROUP;
		c.gci = i;
		c.aux[0] = 0;
		hfs_gc_name(fs, i, name);
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

int adhoc_gc_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	for (uint32_t i = 0; i < fs->en.trace->ngcs; i++) {
		char gname[16];
		hfs_gc_name(fs, i, gname);
		if (strcmp(gname, name) == 0) {
			if (!adhoc_gc_shown(fs, p, i))
				return -ENOENT;
			*c = *p;
			c->type = NT_GROUP;
			c->gci = i;
			c->aux[0] = 0;
			return 0;
		}
	}
	return -ENOENT;
}

/* hprof_refs.c - referents of weak, soft, final and phantom references, the
 * way VisualVM's heap library treats them (docs/hprof.md, "Retained sizes").
 *
 * VisualVM (NearestGCRoot) finds what is alive by a walk from the GC roots
 * that does not follow the `referent` field of instances of
 * java.lang.ref.WeakReference, SoftReference, FinalReference,
 * PhantomReference and their subclasses; objects only such a field reaches
 * are not alive for it (retained size 0, part of no one's retained size).
 * Its dominator tree, though, counts every reference among an object's
 * referrers, referents included.  So a referent edge stays in the graph
 * when its target is reachable without referents (it then only shares
 * ownership, as in VisualVM), and is dropped when it is not (the target
 * becomes unreachable, as in VisualVM).
 *
 * Cost: one walk over the graph the pass over the objects collected
 * (struct dgraph: dense indexes, nothing decoded again), a mark bit per
 * object and an explicit stack of 4-byte indexes, then the dropped edges
 * cut out of the arrays in place; done only when the dump has a
 * reference class.  (heap_state_par.h's mark on two threads, tried in its
 * place, took as long on the 1 GB bench dump, 0.29-0.30 s, and 0.5 s on
 * one: its queue of an entry an object is 96 MB of fresh pages there.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hprof_internal.h"

static const char *const REF_CLASSES[] = {
	"java.lang.ref.WeakReference", "java.lang.ref.SoftReference",
	"java.lang.ref.FinalReference", "java.lang.ref.PhantomReference",
};

static int bit_get(const uint64_t *b, size_t i) { return (int)(b[i >> 6] >> (i & 63) & 1); }
static void bit_set(uint64_t *b, size_t i) { b[i >> 6] |= 1ull << (i & 63); }

/* 1 if class c is one of REF_CLASSES or a subclass of one. */
static int is_ref_class(const struct dump *d, const uint32_t *refc, uint32_t nrefc, uint32_t c)
{
	for (uint32_t x = c, steps = 0; x != HPROF_NONE && steps <= d->nclasses;
	     x = d->classes[x].super, steps++)
		for (uint32_t k = 0; k < nrefc; k++)
			if (x == refc[k])
				return 1;
	return 0;
}

int referents_init(struct referents *r, const struct dump *d, int keep)
{
	memset(r, 0, sizeof *r);
	r->slot = HPROF_NONE;
	uint32_t reference = dump_class_by_name(d, "java.lang.ref.Reference");
	if (keep || reference == HPROF_NONE || d->nobjs >= UINT32_MAX)
		return 0;
	r->slot = dump_field_index(d, reference, "referent");
	uint32_t refc[4], nrefc = 0;
	for (uint32_t k = 0; k < 4; k++)
		if ((refc[nrefc] = dump_class_by_name(d, REF_CLASSES[k])) != HPROF_NONE)
			nrefc++;
	if (r->slot == HPROF_NONE || !nrefc)
		return 0;
	r->is_ref = calloc(d->nclasses ? d->nclasses : 1, 1);
	r->refobj = calloc((d->nobjs + 63) / 64 + 1, sizeof *r->refobj);
	if (!r->is_ref || !r->refobj) {
		referents_free(r);
		return -ENOMEM;
	}
	for (uint32_t c = 0; c < d->nclasses; c++)
		r->is_ref[c] = (uint8_t)is_ref_class(d, refc, nrefc, c);
	return 0;
}

struct walk {
	uint64_t *mark;
	uint32_t *stack; size_t n, cap;
};

/* Marks object j (IDINDEX_NONE: not an object) and pushes it. */
static int visit(struct walk *w, uint32_t j)
{
	if (j == IDINDEX_NONE || bit_get(w->mark, j))
		return 0;
	bit_set(w->mark, j);
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 4096;
		uint32_t *p = realloc(w->stack, nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		w->stack = p;
		w->cap = nc;
	}
	w->stack[w->n++] = j;
	return 0;
}

struct static_visit {
	struct walk *w;
	const struct dump *d;
};

static int visit_static(void *ctx, uint32_t c, uint32_t j, uint64_t id)
{
	(void)c;
	(void)j;
	struct static_visit *x = ctx;
	return visit(x->w, idindex_find(&x->d->index, id));
}

/* The roots: root records, class objects (every one is a root, as the
 * importer writes them) and static reference fields. */
static int visit_roots(struct walk *w, const struct dump *d)
{
	int rc = 0;
	for (uint32_t i = 0; i < d->nroots && !rc; i++)
		rc = visit(w, idindex_find(&d->index, d->roots[i].id));
	for (uint32_t c = 0; c < d->nclasses && !rc; c++) {
		size_t j = dump_class_object(d, c);
		if (j != SIZE_MAX)
			rc = visit(w, (uint32_t)j);
	}
	struct static_visit x = { w, d };
	return rc ? rc : dump_static_refs(d, visit_static, &x);
}

/* Everything reachable without following referents.  Instances' slots are
 * field indexes below 65536, so the low 16 bits are the whole slot. */
static int walk_strong(const struct referents *r, const struct dump *d, const struct dgraph *g,
		       struct walk *w)
{
	int rc = visit_roots(w, d);
	while (!rc && w->n) {
		uint32_t o = w->stack[--w->n];
		int ref = bit_get(r->refobj, o);
		for (uint64_t e = g->off[o]; e < g->off[o + 1] && !rc; e++)
			if (!(ref && g->slot[e] == r->slot))
				rc = visit(w, g->tgt[e]);
	}
	return rc;
}

int referents_apply(struct referents *r, const struct dump *d, struct dgraph *g)
{
	if (!r->is_ref)
		return 0;
	struct walk w = { .mark = calloc((d->nobjs + 63) / 64 + 1, sizeof(uint64_t)) };
	uint64_t *drop = NULL, ndrop = 0, cap = 0;
	int rc = w.mark ? walk_strong(r, d, g, &w) : -ENOMEM;
	/* the referent edges to what only referents reach, in edge order:
	 * a handful on real dumps (24 of 28 M edges on the 1 GB bench dump) */
	for (size_t i = 0; i < g->n && !rc; i++) {
		if (!bit_get(r->refobj, i))
			continue;
		for (uint64_t e = g->off[i]; e < g->off[i + 1] && !rc; e++) {
			if (g->slot[e] != r->slot || bit_get(w.mark, g->tgt[e]))
				continue;
			if (!(rc = array_reserve((void **)&drop, &cap, ndrop + 1, sizeof *drop)))
				drop[ndrop++] = e;
		}
	}
	if (!rc && ndrop) {
		dgraph_drop_edges(g, drop, ndrop);
		r->dropped += ndrop;
	}
	free(drop);
	free(w.mark);
	free(w.stack);
	return rc;
}

void referents_free(struct referents *r)
{
	free(r->is_ref);
	free(r->refobj);
	r->is_ref = NULL;
	r->refobj = NULL;
}

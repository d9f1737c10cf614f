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
 * Cost: one walk over the dump's objects (mark bitset, n bits, and an
 * explicit stack of 4-byte object indices), done only when the dump has
 * a reference class.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hprof_internal.h"

static const char *const REF_CLASSES[] = {
	"java.lang.ref.WeakReference", "java.lang.ref.SoftReference",
	"java.lang.ref.FinalReference", "java.lang.ref.PhantomReference",
};

static int mark_get(const uint64_t *b, size_t i) { return (int)(b[i >> 6] >> (i & 63) & 1); }
static void mark_set(uint64_t *b, size_t i) { b[i >> 6] |= 1ull << (i & 63); }

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

struct walk {
	const struct dump *d;
	const struct referents *r;
	uint64_t *mark;
	uint32_t *stack; size_t n, cap;
};

/* Marks the object with dump id v (if it is an object) and pushes it. */
static int visit(struct walk *w, uint64_t v)
{
	if (!v)
		return 0;
	size_t i = dump_find_object(w->d, v);
	if (i == SIZE_MAX || mark_get(w->mark, i))
		return 0;
	mark_set(w->mark, i);
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 4096;
		uint32_t *p = realloc(w->stack, nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		w->stack = p;
		w->cap = nc;
	}
	w->stack[w->n++] = (uint32_t)i;
	return 0;
}

/* Pushes what object i refers to, referents of reference classes left out. */
static int visit_refs(struct walk *w, size_t i)
{
	const struct dump *d = w->d;
	struct hprof_sub s;
	int rc = 0;
	dump_decode_object(d, d->objs[i].idx, &s);
	if (s.tag == HPROF_OBJ_ARRAY_DUMP) {
		for (uint32_t k = 0; k < s.length && !rc; k++)
			rc = visit(w, hprof_id(d->f, s.data + (uint64_t)k * d->f->id_size));
		return rc;
	}
	uint32_t c = s.tag == HPROF_INSTANCE_DUMP ? dump_object_class(d, &s) : HPROF_NONE;
	if (c == HPROF_NONE || s.length < d->classes[c].value_bytes)
		return 0;
	const struct dclass *k = &d->classes[c];
	int ref = w->r->is_ref[c];
	uint64_t off = s.data;
	for (uint32_t p = 0; p < k->ninst && !rc; p++) {
		uint32_t t = PLAN_TYPE(k->plan[p]);
		if (t == HPROF_T_OBJECT && !(ref && PLAN_INDEX(k->plan[p]) == w->r->slot))
			rc = visit(w, hprof_id(d->f, off));
		off += hprof_type_size(d->f, t);
	}
	return rc;
}

/* The roots: root records and static reference fields. */
static int visit_roots(struct walk *w)
{
	const struct dump *d = w->d;
	uint32_t ids = d->f->id_size;
	int rc = 0;
	for (uint32_t i = 0; i < d->nroots && !rc; i++)
		rc = visit(w, d->roots[i].id);
	for (uint32_t c = 0; c < d->nclasses && !rc; c++) {
		const struct dclass *k = &d->classes[c];
		uint64_t at = k->cd.statics;
		for (uint32_t j = 0; j < k->cd.nstatics && !rc; j++) {
			uint32_t t = hprof_u1(d->f, at + ids);
			if (t == HPROF_T_OBJECT)
				rc = visit(w, hprof_value(d->f, at + ids + 1, t));
			at += ids + 1 + hprof_type_size(d->f, t);
		}
	}
	return rc;
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
	struct walk w = { .d = d, .r = r, .mark = calloc((d->nobjs + 63) / 64 + 1, 8) };
	int rc = -ENOMEM;
	if (!r->is_ref || !w.mark)
		goto out;
	for (uint32_t c = 0; c < d->nclasses; c++)
		r->is_ref[c] = (uint8_t)is_ref_class(d, refc, nrefc, c);
	rc = visit_roots(&w);
	while (!rc && w.n)
		rc = visit_refs(&w, w.stack[--w.n]);
	if (!rc) {
		r->strong = w.mark;
		w.mark = NULL;
	}
out:
	free(w.stack);
	free(w.mark);
	if (rc)
		referents_free(r);
	return rc;
}

int referents_drop(struct referents *r, const struct dump *d, uint32_t c, uint32_t field,
		   uint64_t target)
{
	if (!r->strong || field != r->slot || !r->is_ref[c])
		return 0;
	size_t i = dump_find_object(d, target);
	if (i == SIZE_MAX || mark_get(r->strong, i))
		return 0;
	r->dropped++;
	return 1;
}

void referents_free(struct referents *r)
{
	free(r->is_ref);
	free(r->strong);
	r->is_ref = NULL;
	r->strong = NULL;
}

/* hprof_graph.c - the references of a dump as a graph over dense object
 * indexes (see struct dgraph in hprof_internal.h).
 *
 * Built in the one pass over the objects, in index (= id) order: an
 * instance's references come from its class's list of reference fields
 * (offset, flattened index), an object array's from its elements; each
 * target id is turned into an index by the id index (O(1), no search).
 * The arrays have the layout of struct heap_state's out-edges (u32 offsets
 * and targets, u16 slots plus runs of high bits), so a direct mount adopts
 * them without a copy.
 */
#include "hprof_internal.h"

#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dgraph_init(struct dgraph *g, size_t n)
{
	memset(g, 0, sizeof *g);
	if (n >= UINT32_MAX)
		return -E2BIG;
	g->n = n;
	g->off = malloc((n + 1) * sizeof *g->off);
	return g->off ? 0 : -ENOMEM;
}

void dgraph_free(struct dgraph *g)
{
	free(g->off);
	free(g->tgt);
	free(g->slot);
	free(g->hi_edge);
	free(g->hi);
	free(g->dang);
	memset(g, 0, sizeof *g);
}

static int grow_edges(struct dgraph *g)
{
	uint64_t nc = g->cap ? g->cap * 2 : 1 << 16;
	if (nc > UINT32_MAX)
		nc = UINT32_MAX;
	if (g->ne >= nc)
		return -E2BIG;   /* offsets are 32-bit, as in heap states */
	/* New blocks and a copy, not realloc: realloc moves a big block with
	 * mremap, which splits its huge pages into 4 KB ones where the old
	 * and new addresses do not line up (after the 1 GB bench dump's pass,
	 * 37 % of these two arrays were in huge pages, every other big array
	 * 98 %), and every analysis reads the edges at random (hugepages.h).
	 * The copy is a few ms a doubling; the old block's pages are the
	 * next's. */
	uint32_t *t = malloc(nc * sizeof *t);
	uint16_t *s = malloc(nc * sizeof *s);
	if (!t || !s) {
		free(t);
		free(s);
		return -ENOMEM;
	}
	if (g->ne) {
		memcpy(t, g->tgt, g->ne * sizeof *t);
		memcpy(s, g->slot, g->ne * sizeof *s);
	}
	free(g->tgt);
	free(g->slot);
	g->tgt = t;
	g->slot = s;
	g->cap = nc;
	return 0;
}

static int add_dangling(struct dgraph *g, uint64_t id, size_t src, uint32_t slot)
{
	int rc = array_reserve((void **)&g->dang, &g->capdang, (uint64_t)g->ndang + 1, sizeof *g->dang);
	if (rc)
		return rc;
	g->dang[g->ndang++] = (struct dref){ id, (uint32_t)src, slot };
	return 0;
}

/* One reference of object i in slot to dump id v. */
static inline int add_ref(struct dgraph *g, const struct dump *d, size_t i, uint32_t slot,
			  uint64_t v)
{
	if (!v)
		return 0;
	uint32_t j = idindex_find(&d->index, v);
	/* Class objects are objects of the index when java.lang.Class is in
	 * the dump (every class id then resolves).  Without it, classes are
	 * not objects of the trace (a class id that is an object id too, in a
	 * damaged dump, is taken for the class).  Anything else is kept for
	 * the trace, whose reconstructor counts it as dangling. */
	if (d->class_class == HPROF_NONE && (j == IDINDEX_NONE || d->class_ids_are_objects) &&
	    d->class_idx.n &&
	    u64map_get(&d->class_idx, v) != U64MAP_NONE) {
		g->refs_to_classes++;
		return 0;
	}
	if (j == IDINDEX_NONE)
		return add_dangling(g, v, i, slot);
	int rc;
	if (g->ne == g->cap && (rc = grow_edges(g)))
		return rc;
	if (slot >> 16 != (g->nhi ? g->hi[g->nhi - 1] : 0) &&
	    (rc = runs_push(&g->hi_edge, &g->hi, &g->nhi, &g->caphi, g->ne, slot >> 16)))
		return rc;
	g->tgt[g->ne] = j;
	g->slot[g->ne] = (uint16_t)slot;
	g->ne++;
	return 0;
}

int dgraph_add_object(struct dgraph *g, const struct dump *d, size_t i, const struct dobj *o,
		      uint32_t c)
{
	const struct hprof_file *f = d->f;
	int rc = 0;
	g->off[i] = (uint32_t)g->ne;
	if (o->tag == HPROF_OBJ_ARRAY_DUMP) {
		for (uint32_t k = 0; k < o->length && !rc; k++)
			rc = add_ref(g, d, i, k, hprof_id(f, o->data + (uint64_t)k * f->id_size));
		return rc;
	}
	if (o->tag != HPROF_INSTANCE_DUMP || c == HPROF_NONE)
		return 0;
	const struct dclass *k = &d->classes[c];
	if (o->length < k->value_bytes) {
		g->bad_instances++;   /* fewer values than the class has fields: no edges */
		return 0;
	}
	for (uint32_t r = 0; r < k->nrefs && !rc; r++)
		rc = add_ref(g, d, i, k->refs[2 * r + 1], hprof_id(f, o->data + k->refs[2 * r]));
	return rc;
}

void dgraph_end(struct dgraph *g)
{
	g->off[g->n] = (uint32_t)g->ne;
}

void dgraph_drop_edges(struct dgraph *g, const uint64_t *drop, uint64_t ndrop)
{
	if (!ndrop)
		return;
	/* the kept edges after drop[k] move down by k + 1, a stretch at a
	 * time, lowest first: each lands below where it was and above the
	 * stretches moved before it */
	for (uint64_t k = 0; k < ndrop; k++) {
		uint64_t from = drop[k] + 1, to = k + 1 < ndrop ? drop[k + 1] : g->ne;
		memmove(g->tgt + from - (k + 1), g->tgt + from, (to - from) * sizeof *g->tgt);
		memmove(g->slot + from - (k + 1), g->slot + from, (to - from) * sizeof *g->slot);
	}
	uint64_t ne = g->ne - ndrop, k = 0;
	for (size_t i = 0; i <= g->n; i++) {
		while (k < ndrop && drop[k] < g->off[i])
			k++;
		g->off[i] -= (uint32_t)k;
	}
	/* each run starts where its first kept edge now is; one left with no
	 * edge starts where the next does (taken off) or past the end
	 * (left out), and one with the bits of the run before it joins that
	 * one: the runs add_ref would have made over the kept edges */
	uint32_t m = 0;
	k = 0;
	for (uint32_t j = 0; j < g->nhi; j++) {
		while (k < ndrop && drop[k] < g->hi_edge[j])
			k++;
		uint64_t at = g->hi_edge[j] - k;
		if (at >= ne)
			continue;
		while (m && g->hi_edge[m - 1] == at)
			m--;
		if ((m ? g->hi[m - 1] : 0) == g->hi[j])
			continue;
		g->hi_edge[m] = at;
		g->hi[m] = g->hi[j];
		m++;
	}
	g->nhi = m;
	g->ne = ne;
}

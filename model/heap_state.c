/* heap_state.c - rebuilding the heap at one GC; see heap_state.h.
 *
 * With a graph (the usual case): the target GC's graph frames are read
 * first; they are the exact live set, so the dense index and the id
 * directory exist before a single allocation is read.  Then one pass over
 * the event frames up to the GC looks each allocation up and stores its
 * interned info and birth straight into the state's columns; allocations
 * of objects that are dead by then are decoded and dropped, never stored.
 *
 * Without a graph: allocation records (id, interned info, birth) and deaths
 * are collected; records stay sorted by id (ids normally arrive ascending,
 * so the sort is a check; out-of-order ids take an LSD radix sort), and
 * deaths are applied in batches by a merge, so memory stays proportional
 * to the live set plus one batch of garbage, not to every allocation.
 */
#include "heap_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "heap_state_make.h"
#include "heap_state_par.h"
#include "iddir.h"
#include "mpar.h"
#include "objinfo_table.h"
#include "htr_reader.h"
#include "progress.h"
#include "timing.h"

struct arec {
	uint64_t id;
	uint32_t info;
	uint32_t birth;
};

/* The objinfo table (objinfo_table.h) with a front cache. */
#define INTERN_FRONT 256
struct intern {
	struct objinfo_table t;
	/* direct-mapped by (type, site): allocations alternate between a few
	 * kinds of object, and one compare here saves the hash probe (a memo
	 * of the last hit, checked first, cost more in mispredictions than it
	 * saved: consecutive allocations are seldom of one kind) */
	uint32_t front[INTERN_FRONT];     /* info index + 1; 0 empty */
};

/* The last thread id looked up and its index in the trace's threads:
 * allocations come in runs from one thread. */
struct thread_memo {
	uint64_t id;
	uint32_t idx;
};

#define THREAD_MEMO_EMPTY ((struct thread_memo){ UINT64_MAX, UINT32_MAX })

struct builder {
	const struct trace *t;
	uint32_t gi, G;
	int has_graph;
	struct heap_state *s;
	struct intern in;

	struct arec *allocs; size_t nalloc, alloc_cap; int allocs_sorted;
	uint64_t *dead; size_t ndead, dead_cap;
	/* a sampled trace's graph GC: the samples alive off the graph
	 * (add_sampled_off_graph), ascending */
	uint64_t *off_ids; uint64_t noff, off_cap;

	/* the graph as read: ids, edge offsets (off has obj_cap + 1 entries:
	 * assembly closes the last object's range), edges */
	struct htr_graph_cols g;

	struct htr_root *roots; uint32_t nroots, roots_cap;

	uint32_t gc_ends;                 /* GCs ended so far in the scan */
	uint32_t cursor;                  /* graph mode: slot after the last hit */
	const struct heap_state *base;    /* earlier state to start from, or NULL */
	struct thread_memo threads;       /* thread_index's last answer */
	const struct heap_build_opts *o;
	uint64_t work_done, work_total;
};

/* ---- interning ---------------------------------------------------------- */

static int intern_get(struct intern *in, const struct objinfo *x, uint32_t *out)
{
	uint32_t fslot = (x->type * 31u + x->site) & (INTERN_FRONT - 1);
	uint32_t f = in->front[fslot];
	if (f && objinfo_eq(&in->t.infos[f - 1], x)) {
		*out = f - 1;
		return 0;
	}
	int rc = objinfo_table_put(&in->t, x, out);
	if (!rc)
		in->front[fslot] = *out + 1;
	return rc;
}

/* ---- sorting ------------------------------------------------------------ */

/* LSD radix sort of records by their leading u64 key, 8 bits a pass,
 * skipping passes in which every key has the same byte.  tmp has room for
 * n records.  Returns the buffer that holds the result (a or tmp). */
static void *radix_sort(void *a, void *tmp, uint64_t n, size_t rec)
{
	uint8_t *src = a, *dst = tmp;
	uint64_t count[256];
	for (int shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (uint64_t i = 0; i < n; i++)
			count[(*(uint64_t *)(src + i * rec) >> shift) & 0xff]++;
		if (n == 0 || count[(*(uint64_t *)src >> shift) & 0xff] == n)
			continue;
		uint64_t pos = 0;
		for (int b = 0; b < 256; b++) {
			uint64_t c = count[b];
			count[b] = pos;
			pos += c;
		}
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *r = src + i * rec;
			memcpy(dst + count[(*(const uint64_t *)r >> shift) & 0xff]++ * rec, r, rec);
		}
		uint8_t *x = src;
		src = dst;
		dst = x;
	}
	return src;
}

/* Sorts a[0..n); the array may move to a new block of exactly n entries,
 * so *cap is updated with it. */
static int sort_u64(uint64_t **a, uint64_t n, uint64_t *cap)
{
	uint64_t *tmp = big_malloc((n ? n : 1) * sizeof(uint64_t));
	if (!tmp)
		return -ENOMEM;
	uint64_t *r = radix_sort(*a, tmp, n, sizeof(uint64_t));
	if (r == tmp) {
		free(*a);
		*a = tmp;
		*cap = n ? n : 1;
	} else {
		free(tmp);
	}
	return 0;
}

static int sort_allocs(struct builder *b)
{
	if (b->allocs_sorted)
		return 0;
	struct arec *tmp = big_malloc((b->nalloc ? b->nalloc : 1) * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	struct arec *r = radix_sort(b->allocs, tmp, b->nalloc, sizeof(*tmp));
	if (r == tmp) {
		free(b->allocs);
		b->allocs = tmp;
		b->alloc_cap = b->nalloc ? b->nalloc : 1;
	} else {
		free(tmp);
	}
	b->allocs_sorted = 1;
	return 0;
}

/* Removes dead records: both arrays sorted, one merge. */
static int apply_deaths(struct builder *b)
{
	int rc = sort_allocs(b);
	if (!rc)
		rc = sort_u64(&b->dead, b->ndead, &b->dead_cap);
	if (rc)
		return rc;
	size_t w = 0, d = 0;
	for (size_t i = 0; i < b->nalloc; i++) {
		uint64_t id = b->allocs[i].id;
		while (d < b->ndead && b->dead[d] < id)
			d++;
		if (d < b->ndead && b->dead[d] == id)
			continue;
		b->allocs[w++] = b->allocs[i];
	}
	b->nalloc = w;
	b->ndead = 0;
	return 0;
}

/* ---- reading frames ----------------------------------------------------- */

static uint32_t thread_index(const struct trace *t, struct thread_memo *m, uint64_t id)
{
	if (id != m->id) {
		m->id = id;
		m->idx = trace_thread_index(t, id);
	}
	return m->idx;
}

/* The properties an allocation gives its object. */
static struct objinfo objinfo_of(const struct trace *t, struct thread_memo *m, const struct htr_alloc *a)
{
	return (struct objinfo){
		.type = a->type, .site = a->site, .thread = thread_index(t, m, a->thread),
		.flags = a->flags, .size = a->size, .array_length = a->array_length,
	};
}

static int on_alloc(struct builder *b, const struct htr_alloc *a)
{
	if (a->flags & HTR_ALLOC_WALKED)
		return 0; /* in its own GC's graph only (htr.h) */
	struct objinfo x = objinfo_of(b->t, &b->threads, a);
	uint32_t info;
	int rc = intern_get(&b->in, &x, &info);
	if (!rc)
		rc = array_reserve((void **)&b->allocs, &b->alloc_cap, b->nalloc + 1, sizeof(*b->allocs));
	if (rc)
		return rc;
	if (b->nalloc && a->id <= b->allocs[b->nalloc - 1].id)
		b->allocs_sorted = 0;
	struct arec *r = &b->allocs[b->nalloc++];
	r->id = a->id;
	r->info = info;
	r->birth = (b->gc_ends && !(a->flags & HTR_ALLOC_PREEXISTING)) ? b->gc_ends - 1
										 : HS_NO_BIRTH;
	return 0;
}

/* The index of live object id in s, or UINT32_MAX when it is dead by the
 * state's GC.  Ids mostly arrive ascending: walk *cursor (the slot after
 * the last hit) a few slots forward; when it stops between two live ids,
 * the object is dead.  Only an id out of that order takes the directory. */
static uint32_t live_index(const struct heap_state *s, uint64_t id, uint32_t *cursor)
{
	uint32_t i = *cursor;
	for (int step = 0; step < 8 && i < s->n && s->id[i] < id; step++)
		i++;
	if (i < s->n && s->id[i] == id) {
		/* live: found by the cursor */
	} else if ((i == s->n || s->id[i] > id) && (i == 0 || s->id[i - 1] < id)) {
		*cursor = i;
		return UINT32_MAX; /* between two live ids */
	} else if ((i = heap_state_find(s, id)) == UINT32_MAX) {
		return UINT32_MAX;
	}
	*cursor = i + 1;
	return i;
}

/* The GC an allocation was born in, gc_ends GCs having ended before it. */
static uint32_t birth_of(uint32_t gc_ends, const struct htr_alloc *a)
{
	return gc_ends && !(a->flags & HTR_ALLOC_PREEXISTING) ? gc_ends - 1 : HS_NO_BIRTH;
}

/* Graph mode: the live set is known; store the allocation of a live
 * object into its slot, drop the others. */
static int on_alloc_live(struct builder *b, const struct htr_alloc *a)
{
	struct heap_state *s = b->s;
	uint32_t i = live_index(s, a->id, &b->cursor);
	if (i == UINT32_MAX || s->info[i] != UINT32_MAX)
		return 0; /* dead, or known already (from the base, or an earlier event) */
	struct objinfo x = objinfo_of(b->t, &b->threads, a);
	int rc = intern_get(&b->in, &x, &s->info[i]);
	if (!rc)
		s->birth[i] = birth_of(b->gc_ends, a);
	return rc;
}

/* READ_SAMPLES: the id of an object that is no walk's (htr.h
 * HTR_ALLOC_WALKED), as on_alloc keeps it, without its info. */
static int on_alloc_id(struct builder *b, const struct htr_alloc *a)
{
	if (a->flags & HTR_ALLOC_WALKED)
		return 0;
	int rc = array_reserve((void **)&b->allocs, &b->alloc_cap, b->nalloc + 1, sizeof(*b->allocs));
	if (rc)
		return rc;
	if (b->nalloc && a->id <= b->allocs[b->nalloc - 1].id)
		b->allocs_sorted = 0;
	b->allocs[b->nalloc++] = (struct arec){ .id = a->id, .info = 0, .birth = 0 };
	return 0;
}

static int on_deaths(struct builder *b, const struct htr_event *ev)
{
	if (ev->u.deaths.gc > b->G)
		return 0;
	uint32_t n = ev->u.deaths.count;
	if (n == 0)
		return 0;
	int rc = array_reserve((void **)&b->dead, &b->dead_cap, b->ndead + n, sizeof(*b->dead));
	if (rc)
		return rc;
	memcpy(b->dead + b->ndead, ev->u.deaths.ids, n * sizeof(uint64_t));
	b->ndead += n;
	/* Apply in batches so garbage never accumulates past a quarter of the
	 * records (and at least a million ids). */
	if (b->ndead >= (1u << 20) && b->ndead * 4 >= b->nalloc)
		return apply_deaths(b);
	return 0;
}

static int on_graph(struct builder *b, const struct htr_event *ev)
{
	uint64_t id = ev->u.graph.id;
	int rc;
	if (htr_graph_cols_fresh(&b->g, id)) {
		uint64_t old_cap = b->g.obj_cap;
		/* (presize_graph made room: the calls are for traces whose
		 * index undercounts) */
		if (b->g.nobj + 1 > b->g.obj_cap &&
		    (rc = array_reserve((void **)&b->g.id, &b->g.obj_cap, b->g.nobj + 1, sizeof(uint64_t))))
			return rc;
		if (b->g.obj_cap != old_cap) { /* off has obj_cap + 1 entries */
			uint32_t *p = realloc(b->g.off, (b->g.obj_cap + 1) * sizeof(uint32_t));
			if (!p)
				return -ENOMEM;
			b->g.off = p;
		}
		if (b->g.nedges > UINT32_MAX - 1)
			return -E2BIG;
		htr_graph_cols_start(&b->g, id);
	}
	uint32_t n = ev->u.graph.count;
	if (b->g.nedges + n > b->g.edge_cap) {
		uint64_t cap = b->g.edge_cap;
		rc = array_reserve((void **)&b->g.tgt, &cap, b->g.nedges + n, sizeof(uint64_t));
		if (!rc) {
			uint64_t cap2 = b->g.edge_cap;
			rc = array_reserve((void **)&b->g.slot, &cap2, b->g.nedges + n, sizeof(uint32_t));
			b->g.edge_cap = cap;
		}
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < n; i++) {
		b->g.tgt[b->g.nedges + i] = ev->u.graph.refs[i].target;
		b->g.slot[b->g.nedges + i] = ev->u.graph.refs[i].slot;
	}
	b->g.nedges += n;
	return 0;
}

static int on_roots(struct builder *b, const struct htr_event *ev)
{
	uint32_t n = ev->u.roots.count;
	if (n == 0)
		return 0;
	uint64_t cap = b->roots_cap;
	int rc = array_reserve((void **)&b->roots, &cap, (uint64_t)b->nroots + n, sizeof(*b->roots));
	if (rc)
		return rc;
	b->roots_cap = (uint32_t)cap;
	memcpy(b->roots + b->nroots, ev->u.roots.roots, n * sizeof(*b->roots));
	b->nroots += n;
	return 0;
}

static void progress(struct builder *b, int last)
{
	if (!last) /* the last call comes after the reading phase has ended */
		progress_set(progress_here(), b->work_done);
	const struct heap_build_opts *o = b->o;
	if (!o)
		return;
	if (o->progress_done)
		__atomic_store_n(o->progress_done, b->work_done, __ATOMIC_RELAXED);
	if (o->progress_total)
		__atomic_store_n(o->progress_total, b->work_total, __ATOMIC_RELAXED);
}

/* READ_SAMPLES: a sampled trace's graph GC, the objects its samples say
 * are alive (the ids only, as READ_ALL would keep them) */
enum read_mode { READ_ALL, READ_LIVE, READ_DEATHS, READ_GRAPH, READ_SAMPLES };

#define ALLOC_BATCH 128

/* A run of allocation events, decoded in bulk: how many, or <0 (damage,
 * err set by the reader; -ENOMEM or a bad event, err set here). */
/* The error of event handling while rebuilding; returns rc. */
static int rebuild_err(const struct builder *b, struct htr_err *err, uint64_t frame_offset, int rc)
{
	return htr_errf(err, rc, frame_offset, "%s while rebuilding GC %u", rc == -ENOMEM ? "out of memory" : "bad event",
			b->G);
}

static int read_allocs(struct builder *b, struct htr_iter *it, enum read_mode mode,
		       uint64_t frame_offset, struct htr_err *err)
{
	struct htr_alloc batch[ALLOC_BATCH];
	int n = htr_iter_allocs(it, batch, ALLOC_BATCH, err);
	for (int i = 0; i < n; i++) {
		int rc = mode == READ_ALL ? on_alloc(b, &batch[i])
			 : mode == READ_LIVE ? on_alloc_live(b, &batch[i])
			 : mode == READ_SAMPLES ? on_alloc_id(b, &batch[i]) : 0;
		if (rc)
			return rebuild_err(b, err, frame_offset, rc);
	}
	return n;
}

/* An iterator over frame f's events, once its header agrees with the
 * index (which may come from the footer). */
static int frame_open(const struct trace *t, uint32_t f, struct htr_iter **it, struct htr_err *err)
{
	const struct trace_frame *fr = &t->frames[f];
	struct htr_frame_hdr h;
	int rc = htr_frame_header(t->file, fr->offset, &h, err);
	if (rc)
		return rc == -ENODATA ? -EBADMSG : rc;
	if (h.kind != fr->kind || h.comp_len != fr->comp_len || h.raw_len != fr->raw_len ||
	    h.nevents != fr->nevents)
		return htr_errf(err, -EBADMSG, fr->offset, "frame header disagrees with the index");
	return htr_iter_open(it, t->file, &h, err);
}

static int read_frame(struct builder *b, uint32_t f, enum read_mode mode, int *stop,
		      struct htr_err *err)
{
	const struct trace_frame *fr = &b->t->frames[f];
	struct htr_iter *it = NULL;
	int rc = frame_open(b->t, f, &it, err);
	if (rc)
		return rc;
	struct htr_event ev;
	for (;;) {
		/* runs of allocations or graph objects in bulk; the rest, and
		 * what does not fit, one event at a time */
		int n = mode == READ_GRAPH ? htr_iter_graph(it, &b->g, err) : read_allocs(b, it, mode, fr->offset, err);
		if (n < 0) {
			rc = n;
			break;
		}
		if (n > 0)
			continue;
		if ((rc = htr_iter_next(it, &ev, err)) != 1)
			break;
		rc = 0;
		switch (ev.type) {
		/* (allocations: read_allocs takes every run of them; the
		 * graph pass has no use for them) */
		case HTR_EV_DEATHS:
			if (mode == READ_ALL || mode == READ_DEATHS || mode == READ_SAMPLES)
				rc = on_deaths(b, &ev);
			break;
		case HTR_EV_GC_END:
			if (mode == READ_ALL || mode == READ_LIVE || mode == READ_SAMPLES) {
				b->gc_ends++;
				if (ev.u.gc.gc == b->G)
					*stop = 1;
			}
			break;
		case HTR_EV_GRAPH_OBJ:
			if (mode == READ_GRAPH)
				rc = on_graph(b, &ev);
			break;
		case HTR_EV_ROOTS:
			if (mode == READ_GRAPH)
				rc = on_roots(b, &ev);
			break;
		default:
			break;
		}
		if (rc) {
			rebuild_err(b, err, fr->offset, rc);
			break;
		}
		if (*stop)
			break;
	}
	htr_iter_close(it);
	return rc < 0 ? rc : 0;
}

static int read_one(struct builder *b, uint32_t f, enum read_mode mode, struct htr_err *err)
{
	int stop = 0;
	int rc = read_frame(b, f, mode, &stop, err);
	if (rc)
		return rc;
	b->work_done += b->t->frames[f].comp_len;
	progress(b, 0);
	return 0;
}

static int adopt_graph(struct builder *b, struct htr_err *err);
static int assemble_out_edges(struct builder *b);

static int has_unknown(const struct heap_state *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->info[i] == UINT32_MAX)
			return 1;
	return 0;
}

/* Objects alive at both the base and the target take the base's info and
 * birth: one merge of the two ascending id columns.  The base's interned
 * infos are re-interned here through a translation table, once each. */
static int take_from_base(struct builder *b, struct htr_err *err)
{
	const struct heap_state *base = b->base;
	struct heap_state *s = b->s;
	uint32_t *xlat = malloc((base->ninfos ? base->ninfos : 1) * sizeof(uint32_t));
	if (!xlat)
		return htr_errf(err, -ENOMEM, 0, "out of memory rebuilding GC %u", b->G);
	memset(xlat, 0xff, (size_t)base->ninfos * sizeof(uint32_t));
	int rc = 0;
	uint32_t j = 0;
	for (uint32_t i = 0; i < s->n && j < base->n && !rc; i++) {
		while (j < base->n && base->id[j] < s->id[i])
			j++;
		if (j == base->n || base->id[j] != s->id[i])
			continue;
		uint32_t bi = base->info[j];
		if (xlat[bi] == UINT32_MAX)
			rc = intern_get(&b->in, &base->infos[bi], &xlat[bi]);
		s->info[i] = xlat[bi];
		s->birth[i] = base->birth[j];
	}
	free(xlat);
	return rc ? htr_errf(err, rc, 0, "out of memory rebuilding GC %u", b->G) : 0;
}

/* Sizes the graph arrays once from the index, so that reading a graph of
 * millions of objects never copies them on growth: a graph object is an
 * event, and an edge takes at least two bytes of payload (slot and target
 * deltas; an object event at least three).  The bound may exceed the graph
 * many times; pages never written are never touched, and assembly shrinks
 * the arrays to their final size.
 * If that much memory cannot be had, the arrays grow as they are filled. */
#define PRESIZE_RATIO 32

static void presize_graph(struct builder *b)
{
	const struct trace *t = b->t;
	uint64_t objs = 0, edges = 0;
	for (uint32_t f = 0; f < t->nframes; f++)
		if (t->frames[f].kind == HTR_FRAME_GRAPH && t->frames[f].graph_gc == b->G) {
			/* a damaged index must not ask for GiBs: no bound exceeds
			 * what PRESIZE_RATIO times the compressed bytes (which
			 * are in the file) can decode to; graphs compress about
			 * 7:1, and an undercount only means growing */
			uint64_t cap = t->frames[f].comp_len * PRESIZE_RATIO;
			uint64_t raw = t->frames[f].raw_len < cap ? t->frames[f].raw_len : cap;
			objs += t->frames[f].nevents < raw / 3 ? t->frames[f].nevents : raw / 3;
			edges += raw / 2;
		}
	if (objs > UINT32_MAX)
		objs = UINT32_MAX;
	if (edges > UINT32_MAX)
		edges = UINT32_MAX;
	uint64_t *g_id = big_malloc((objs + 1) * sizeof(uint64_t));
	uint32_t *g_off = big_malloc((objs + 2) * sizeof(uint32_t));
	uint64_t *e_tgt = big_malloc((edges + 1) * sizeof(uint64_t));
	uint32_t *e_slot = big_malloc((edges + 1) * sizeof(uint32_t));
	if (!g_id || !g_off || !e_tgt || !e_slot) {
		free(g_id); free(g_off); free(e_tgt); free(e_slot);
		return;
	}
	b->g.id = g_id; b->g.off = g_off; b->g.obj_cap = objs + 1;
	b->g.tgt = e_tgt; b->g.slot = e_slot; b->g.edge_cap = edges + 1;
}

static int cmp_id(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
	return a < c ? -1 : a > c;
}

/* A sampled trace's GC with a graph (the agent's mode=sample with graph=):
 * the state holds the graph's objects and, besides, the sampled objects
 * alive by the rule of a GC without a graph (allocated before its GC_END,
 * no death at or before it) that the walk did not meet (garbage a young
 * GC left; HS_FLAG_OFF_GRAPH, no references).  So the estimates, which
 * weigh the samples, are those the GC would have without its walk
 * (docs/sampling.md), and the graph's objects stay exact.  Adds them to
 * the graph as read, objects without references, before adopt_graph. */
static int add_sampled_off_graph(struct builder *b, struct htr_err *err)
{
	const struct trace *t = b->t;
	uint32_t last = t->gcs[b->gi].frame;
	int rc = 0;
	for (uint32_t f = 0; f < t->nframes && !rc; f++) {
		const struct trace_frame *fr = &t->frames[f];
		if (fr->kind == HTR_FRAME_GRAPH)
			continue;
		if (f <= last)
			rc = read_one(b, f, READ_SAMPLES, err);
		else if (fr->min_death_gc <= b->G)
			rc = read_one(b, f, READ_DEATHS, err);
	}
	b->gc_ends = 0;
	if (!rc)
		rc = apply_deaths(b);
	uint64_t *g = NULL;
	if (!rc && !(g = big_malloc((b->g.nobj ? b->g.nobj : 1) * sizeof(uint64_t))))
		rc = -ENOMEM;
	if (!rc) {
		memcpy(g, b->g.id, b->g.nobj * sizeof(uint64_t));
		qsort(g, b->g.nobj, sizeof(uint64_t), cmp_id);
	}
	size_t k = 0;
	for (size_t i = 0; i < b->nalloc && !rc; i++) {
		uint64_t id = b->allocs[i].id;
		while (k < b->g.nobj && g[k] < id)
			k++;
		if (k < b->g.nobj && g[k] == id)
			continue;
		if ((rc = array_reserve((void **)&b->off_ids, &b->off_cap, b->noff + 1, sizeof(uint64_t))))
			break;
		b->off_ids[b->noff++] = id;
		if (b->g.nobj + 1 > b->g.obj_cap) {
			uint64_t old_cap = b->g.obj_cap;
			if ((rc = array_reserve((void **)&b->g.id, &b->g.obj_cap, b->g.nobj + 1, sizeof(uint64_t))))
				break;
			if (b->g.obj_cap != old_cap) {
				uint32_t *p = realloc(b->g.off, (b->g.obj_cap + 1) * sizeof(uint32_t));
				if (!p) {
					rc = -ENOMEM;
					break;
				}
				b->g.off = p;
			}
		}
		htr_graph_cols_start(&b->g, id);
	}
	free(g);
	free(b->allocs);
	b->allocs = NULL;
	b->nalloc = b->alloc_cap = 0;
	b->allocs_sorted = 1;
	return rc ? htr_errf(err, rc, 0, "%s rebuilding GC %u", rc == -ENOMEM ? "out of memory" : "bad event",
			      b->G) : 0;
}

/* The objects add_sampled_off_graph added take HS_FLAG_OFF_GRAPH. */
static int mark_off_graph(struct builder *b, struct htr_err *err)
{
	struct heap_state *s = b->s;
	for (size_t k = 0; k < b->noff; k++) {
		uint32_t i = heap_state_find(s, b->off_ids[k]);
		if (i == UINT32_MAX || s->info[i] == UINT32_MAX)
			continue;
		struct objinfo x = b->in.t.infos[s->info[i]];
		x.flags |= HS_FLAG_OFF_GRAPH;
		int rc = intern_get(&b->in, &x, &s->info[i]);
		if (rc)
			return htr_errf(err, rc, 0, "out of memory rebuilding GC %u", b->G);
	}
	return 0;
}

/* ---- the live set's allocations on the threads ------------------------- */

/* READ_LIVE over many frames runs in windows of frames, each in two
 * steps.  On the threads, one frame a task: decoding its allocations,
 * finding the live ones among the graph's ids, and interning their
 * properties into a table of the frame's own (live_frame_read).  Then on
 * the caller's thread, frame after frame and record after record, what
 * on_alloc_live does event by event: an object without properties yet
 * takes the record's, interned into the state's table when first used
 * (live_frame_apply).  The first allocation of an object wins and infos
 * are numbered in the order of first use, as on one thread, so the state
 * is the same for any number of threads.
 *
 * Frames are cut at GCs, so a frame holds a GC interval's allocations:
 * a window has at most one big frame a thread (and the small frames
 * between them, such as a GC's end after its graph), and the big
 * frames' records (12 bytes a live allocation, in blocks sized to the
 * frame's events and kept from window to window, their pages being
 * there already) are what the pass adds to the build's memory.  On a
 * 10^7-object GC of a 10-GC trace at 2 threads: the step 0.40-0.44 ->
 * 0.28 s (CPU 0.40 -> 0.46 s), `cat gc/009/info` 0.83-0.86 -> 0.68-0.70 s,
 * peak unchanged (docs/bench.md, session 33). */
#define LIVE_WINDOW_PER_THREAD 8
#define LIVE_BIG_FRAME 4096     /* events */

struct live_rec {
	uint32_t i;      /* the object's index in the state */
	uint32_t info;   /* in the frame's own table */
	uint32_t birth;
};

struct live_frame {
	uint32_t f;
	uint32_t gc_ends;        /* GCs that ended before the frame */
	int block;               /* a big frame: its records' block in the
				    pass's blocks; -1: one of its own */
	struct intern in;        /* the frame's infos */
	struct live_rec *rec;
	uint64_t nrec, cap;
	int rc;
	struct htr_err err;
};

/* A big frame's records, kept for the next window's. */
struct live_block {
	struct live_rec *rec;
	uint64_t cap;
};

struct live_pass {
	struct builder *b;
	struct live_frame *fr;
};

static int live_frame_read(struct builder *b, struct live_frame *lf)
{
	const struct heap_state *s = b->s;
	uint64_t offset = b->t->frames[lf->f].offset;
	uint32_t cursor = 0, gc_ends = lf->gc_ends;
	struct thread_memo threads = THREAD_MEMO_EMPTY;
	struct htr_alloc batch[ALLOC_BATCH];
	struct htr_iter *it = NULL;
	/* room for every event of the frame at once: a block grown by moving
	 * has its pages faulted in again */
	uint64_t most = b->t->frames[lf->f].nevents;
	if (most > lf->cap) {
		free(lf->rec); /* an earlier frame's records, applied already */
		lf->cap = 0;
		if (!(lf->rec = malloc(most * sizeof *lf->rec)))
			return rebuild_err(b, &lf->err, offset, -ENOMEM);
		lf->cap = most;
	}
	int rc = frame_open(b->t, lf->f, &it, &lf->err);
	while (!rc) {
		int n = htr_iter_allocs(it, batch, ALLOC_BATCH, &lf->err);
		if (n < 0) {
			rc = n;
			break;
		}
		for (int k = 0; k < n && !rc; k++) {
			const struct htr_alloc *a = &batch[k];
			uint32_t i = live_index(s, a->id, &cursor), li;
			if (i == UINT32_MAX || s->info[i] != UINT32_MAX)
				continue; /* dead, or known from the base or an earlier window */
			struct objinfo x = objinfo_of(b->t, &threads, a);
			if (!(rc = intern_get(&lf->in, &x, &li)) &&
			    !(rc = array_reserve((void **)&lf->rec, &lf->cap, lf->nrec + 1, sizeof *lf->rec)))
				lf->rec[lf->nrec++] = (struct live_rec){ i, li, birth_of(gc_ends, a) };
			else
				rebuild_err(b, &lf->err, offset, rc);
		}
		if (rc || n > 0)
			continue;
		struct htr_event ev;
		if ((rc = htr_iter_next(it, &ev, &lf->err)) != 1)
			break;
		rc = 0;
		/* the target GC's end: what follows is after it */
		if (ev.type == HTR_EV_GC_END && (gc_ends++, ev.u.gc.gc == b->G))
			break;
	}
	htr_iter_close(it);
	return rc < 0 ? rc : 0;
}

static int live_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct live_pass *lp = ctx;
	struct live_frame *lf = &lp->fr[task];
	lf->rc = live_frame_read(lp->b, lf);
	return 0; /* the window's frames all run; the first failure in frame
		     order is the build's, as on one thread */
}

static int live_frame_apply(struct builder *b, struct live_frame *lf, struct htr_err *err)
{
	struct heap_state *s = b->s;
	uint64_t offset = b->t->frames[lf->f].offset;
	uint32_t *map = malloc(((size_t)lf->in.t.n + 1) * sizeof *map);
	if (!map)
		return rebuild_err(b, err, offset, -ENOMEM);
	memset(map, 0xff, ((size_t)lf->in.t.n + 1) * sizeof *map);
	int rc = 0;
	for (uint64_t k = 0; k < lf->nrec && !rc; k++) {
		const struct live_rec *r = &lf->rec[k];
		if (s->info[r->i] != UINT32_MAX)
			continue; /* an earlier frame's allocation of it won */
		if (map[r->info] == UINT32_MAX && (rc = intern_get(&b->in, &lf->in.t.infos[r->info], &map[r->info])))
			rebuild_err(b, err, offset, rc);
		else {
			s->info[r->i] = map[r->info];
			s->birth[r->i] = r->birth;
		}
	}
	free(map);
	return rc;
}

/* Done with the frame: a big frame's records' block goes back to the
 * pass's blocks, a small one's is freed. */
static void live_frame_done(struct live_frame *lf, struct live_block *blocks)
{
	objinfo_table_free(&lf->in.t);
	if (lf->block >= 0)
		blocks[lf->block] = (struct live_block){ lf->rec, lf->cap };
	else
		free(lf->rec);
	memset(lf, 0, sizeof *lf);
}

/* Frames from..to (and below the trace's end) in READ_LIVE mode, b->gc_ends
 * GCs having ended before `from`; on the threads when there are several
 * frames and threads (above), else read_one after read_one. */
static int read_live(struct builder *b, uint32_t from, uint32_t to, struct htr_err *err)
{
	const struct trace *t = b->t;
	uint32_t threads = mpar_resolve(b->o ? b->o->threads : 0), end = to < t->nframes ? to + 1 : t->nframes;
	uint32_t nlive = 0;
	for (uint32_t f = from; f < end; f++)
		nlive += t->frames[f].kind != HTR_FRAME_GRAPH;
	int rc = 0;
	if (threads < 2 || nlive < 2) {
		for (uint32_t f = from; f < end && !rc; f++)
			if (t->frames[f].kind != HTR_FRAME_GRAPH)
				rc = read_one(b, f, READ_LIVE, err);
		return rc;
	}
	uint32_t window = threads * LIVE_WINDOW_PER_THREAD;
	struct live_frame *fr = calloc(window, sizeof *fr);
	struct live_block *blocks = calloc(threads, sizeof *blocks);
	if (!fr || !blocks) {
		free(fr);
		free(blocks);
		return htr_errf(err, -ENOMEM, 0, "out of memory");
	}
	struct live_pass lp = { b, fr };
	uint32_t f = from, gc = 0, gc_ends = b->gc_ends;
	while (!rc && f < end) {
		/* up to `threads` frames with many events, and the small ones
		 * between them (a GC's end often has a frame of its own) */
		uint32_t nw = 0, nbig = 0;
		for (; f < end && nw < window && nbig < threads; f++) {
			if (t->frames[f].kind == HTR_FRAME_GRAPH)
				continue;
			/* the GCs that ended before f: gc_ends at `from`, plus those
			 * whose end lies in from..f-1 */
			while (gc < t->ngcs && t->gcs[gc].frame < f) {
				if (t->gcs[gc].frame >= from)
					gc_ends++;
				gc++;
			}
			struct live_frame *lf = &fr[nw++];
			lf->f = f;
			lf->gc_ends = gc_ends;
			lf->block = -1;
			if (t->frames[f].nevents >= LIVE_BIG_FRAME) {
				lf->block = (int)nbig;
				lf->rec = blocks[nbig].rec;
				lf->cap = blocks[nbig++].cap;
			}
		}
		rc = mpar_for(threads, nw, live_task, &lp);
		for (uint32_t k = 0; k < nw && !rc; k++) {
			if ((rc = fr[k].rc))
				*err = fr[k].err;
			else if (!(rc = live_frame_apply(b, &fr[k], err))) {
				b->work_done += t->frames[fr[k].f].comp_len;
				progress(b, 0);
			}
		}
		for (uint32_t k = 0; k < nw; k++)
			live_frame_done(&fr[k], blocks);
	}
	for (uint32_t k = 0; k < threads; k++)
		free(blocks[k].rec);
	free(blocks);
	free(fr);
	return rc;
}

static int read_frames(struct builder *b, struct htr_err *err)
{
	const struct trace *t = b->t;
	uint32_t last = t->gcs[b->gi].frame;
	int rc = 0;
	if (b->has_graph) {
		/* the live set first, then only its allocations */
		struct lap_t t0;
		lap_now(&t0);
		presize_graph(b);
		for (uint32_t f = 0; f < t->nframes && !rc; f++)
			if (t->frames[f].kind == HTR_FRAME_GRAPH && t->frames[f].graph_gc == b->G)
				rc = read_one(b, f, READ_GRAPH, err);
		timing_lap("state", "graph frames", &t0);
		if (!rc && t->sample_interval)
			rc = add_sampled_off_graph(b, err);
		if (!rc)
			rc = adopt_graph(b, err);
		uint32_t first = 0;
		if (!rc && b->base) {
			rc = take_from_base(b, err);
			/* From the base GC's own frame on, not the one after: a
			 * recorder may log allocations in it after its walk (the
			 * agent does), objects the base's graph does not hold. */
			first = t->gcs[b->base->gc_index].frame;
			b->gc_ends = t->frames[first].first_gc_index;
		}
		timing_lap("state", "graph adopted", &t0);
		if (!rc)
			rc = read_live(b, first, last, err);
		timing_lap("state", "live set's allocations", &t0);
		/* An object the base did not hold can still be alive now and
		 * older than the base (a finalizer resurrected it; a recorder's
		 * walk missed it): such gaps take the frames before the base,
		 * so the result always equals a build from the start. */
		if (!rc && b->base && has_unknown(b->s)) {
			b->gc_ends = 0;
			b->cursor = 0;
			if (first > 0)
				rc = read_live(b, 0, first - 1, err);
		}
		if (!rc && b->noff)
			rc = mark_off_graph(b, err);
		return rc;
	}
	for (uint32_t f = 0; f < t->nframes && !rc; f++) {
		const struct trace_frame *fr = &t->frames[f];
		if (fr->kind == HTR_FRAME_GRAPH)
			continue;
		if (f <= last)
			rc = read_one(b, f, READ_ALL, err);
		else if (fr->min_death_gc <= b->G) /* deaths of our GC that came late */
			rc = read_one(b, f, READ_DEATHS, err);
	}
	return rc;
}

/* ---- assembling the state ----------------------------------------------- */

static int build_directory(struct heap_state *s)
{
	return iddir_build(&s->dir, s->id, s->n);
}

static inline uint32_t find_id(const struct heap_state *s, uint64_t id)
{
	return iddir_find(&s->dir, s->id, id);
}

uint32_t heap_state_find(const struct heap_state *s, uint64_t id)
{
	return find_id(s, id);
}

/* Sorts the graph objects by id when the trace listed them out of order. */
static int sort_graph(struct builder *b, struct htr_err *err)
{
	if (!b->g.unsorted)
		return 0;
	struct pair { uint64_t id; uint64_t idx; } *p = big_malloc((b->g.nobj ? b->g.nobj : 1) * sizeof(*p));
	struct pair *tmp = big_malloc((b->g.nobj ? b->g.nobj : 1) * sizeof(*p));
	uint32_t *noff = big_malloc((b->g.nobj + 1) * sizeof(uint32_t));
	uint64_t *ntgt = big_malloc((b->g.nedges ? b->g.nedges : 1) * sizeof(uint64_t));
	uint32_t *nslot = big_malloc((b->g.nedges ? b->g.nedges : 1) * sizeof(uint32_t));
	int rc = -ENOMEM;
	if (!p || !tmp || !noff || !ntgt || !nslot)
		goto out;
	for (uint64_t i = 0; i < b->g.nobj; i++)
		p[i] = (struct pair){ b->g.id[i], i };
	struct pair *r = radix_sort(p, tmp, b->g.nobj, sizeof(*p));
	uint64_t e = 0;
	for (uint64_t i = 0; i < b->g.nobj; i++) {
		uint64_t o = r[i].idx;
		if (i && r[i].id == r[i - 1].id) {
			rc = htr_errf(err, -EBADMSG, 0, "graph of GC %u lists object %llu twice", b->G,
				      (unsigned long long)r[i].id);
			goto out;
		}
		uint64_t from = b->g.off[o], to = o + 1 < b->g.nobj ? b->g.off[o + 1] : b->g.nedges;
		b->g.id[i] = r[i].id;
		noff[i] = (uint32_t)e;
		for (uint64_t k = from; k < to; k++, e++) {
			ntgt[e] = b->g.tgt[k];
			nslot[e] = b->g.slot[k];
		}
	}
	free(b->g.off); free(b->g.tgt); free(b->g.slot);
	b->g.off = noff; b->g.tgt = ntgt; b->g.slot = nslot;
	noff = NULL; ntgt = NULL; nslot = NULL;
	b->g.unsorted = 0;
	rc = 0;
out:
	free(p); free(tmp); free(noff); free(ntgt); free(nslot);
	if (rc == -ENOMEM)
		htr_errf(err, rc, 0, "out of memory sorting the graph of GC %u", b->G);
	return rc;
}

static int unknown_info(struct builder *b, uint32_t *out)
{
	struct objinfo x = { .type = HTR_NO_TYPE, .site = HTR_NO_SITE, .thread = UINT32_MAX,
			     .flags = HTR_ALLOC_PREEXISTING, .size = 0, .array_length = -1 };
	return intern_get(&b->in, &x, out);
}

/* Graph mode, after the graph frames: the graph's objects become the
 * state's dense index, with the id directory, before any allocation is
 * read.  info starts as UINT32_MAX: "no allocation seen". */
static int adopt_graph(struct builder *b, struct htr_err *err)
{
	struct heap_state *s = b->s;
	int rc = sort_graph(b, err);
	if (rc)
		return rc;
	if (b->g.nobj > UINT32_MAX - 1)
		return htr_errf(err, -E2BIG, 0, "GC %u has more than 2^32 objects", b->G);
	s->n = (uint32_t)b->g.nobj;
	s->id = b->g.id;
	b->g.id = NULL;
	if (build_directory(s))
		return htr_errf(err, -ENOMEM, 0, "out of memory rebuilding GC %u", b->G);
	/* The edges take their final form before the object columns exist:
	 * the graph as read (64-bit targets) is the largest thing a rebuild
	 * holds, and it is gone before info and birth are allocated. */
	rc = assemble_out_edges(b);
	if (rc)
		return htr_errf(err, rc, 0, rc == -E2BIG ? "GC %u has more than 2^32 edges"
						: "out of memory rebuilding GC %u", b->G);
	s->info = big_malloc((s->n ? s->n : 1) * sizeof(uint32_t));
	s->birth = big_malloc((s->n ? s->n : 1) * sizeof(uint32_t));
	if (!s->info || !s->birth)
		return htr_errf(err, -ENOMEM, 0, "out of memory rebuilding GC %u", b->G);
	memset(s->info, 0xff, (size_t)s->n * sizeof(uint32_t));
	return 0;
}

/* Graph objects that no allocation event described. */
static int fill_unknown_objects(struct builder *b)
{
	struct heap_state *s = b->s;
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->info[i] != UINT32_MAX)
			continue;
		int rc = unknown_info(b, &s->info[i]);
		if (rc)
			return rc;
		s->birth[i] = HS_NO_BIRTH;
		s->unknown_objects++;
	}
	return 0;
}

static int assemble_objects_from_allocs(struct builder *b, struct htr_err *err)
{
	struct heap_state *s = b->s;
	int rc = apply_deaths(b);
	if (rc)
		return rc;
	for (size_t i = 1; i < b->nalloc; i++)
		if (b->allocs[i].id == b->allocs[i - 1].id)
			return htr_errf(err, -EBADMSG, 0, "object id %llu allocated twice",
					(unsigned long long)b->allocs[i].id);
	if (b->nalloc > UINT32_MAX - 1)
		return -E2BIG;
	s->n = (uint32_t)b->nalloc;
	size_t n1 = s->n ? s->n : 1;
	s->id = big_malloc(n1 * sizeof(uint64_t));
	s->info = big_malloc(n1 * sizeof(uint32_t));
	s->birth = big_malloc(n1 * sizeof(uint32_t));
	if (!s->id || !s->info || !s->birth)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++) {
		s->id[i] = b->allocs[i].id;
		s->info[i] = b->allocs[i].info;
		s->birth[i] = b->allocs[i].birth;
	}
	return 0;
}

/* Dense ids, as recorders hand them out (sequential tags, a few dead
 * between the live), map to indexes through one table: one random access
 * per edge where the directory's search takes two dependent ones.  Used
 * while the ids span at most DENSE_SPAN times the objects (the table's
 * 4 bytes per id are then at most 8 per object, and freed at once);
 * sparse ids (heap dump addresses) take the directory. */
#define DENSE_SPAN 2

struct id_map {
	uint32_t *index;       /* [span]: id - base -> index, UINT32_MAX: none */
	uint64_t base, span;
};

static int id_map_build(const struct heap_state *s, struct id_map *m)
{
	m->index = NULL;
	if (s->n == 0 || s->id[s->n - 1] - s->id[0] >= (uint64_t)s->n * DENSE_SPAN)
		return 0;
	m->base = s->id[0];
	m->span = s->id[s->n - 1] - s->id[0] + 1;
	m->index = big_malloc(m->span * sizeof(uint32_t));
	if (!m->index)
		return -ENOMEM;
	memset(m->index, 0xff, m->span * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->n; i++)
		m->index[s->id[i] - m->base] = i;
	return 0;
}

static inline uint32_t id_map_find(const struct heap_state *s, const struct id_map *m, uint64_t id)
{
	if (!m->index)
		return find_id(s, id);
	return id - m->base < m->span ? m->index[id - m->base] : UINT32_MAX;
}

/* How far ahead the graph passes prefetch: enough to cover a memory
 * access, not so far that the line is gone again. */
#define PREFETCH_AHEAD 32

/* Edge k's target is about to be looked up: a lookup reads a directory
 * entry, then the ids it points at, two dependent cache misses on a large
 * heap.  Fetch the entry for the target PREFETCH_AHEAD edges on, and the
 * ids for the one half as far on (its entry has arrived by then). */
static inline void prefetch_find(const struct heap_state *s, const struct id_map *m,
				 const uint64_t *tgt, uint64_t ne, uint64_t k)
{
	if (m->index) { /* one access: the table entry */
		if (k + PREFETCH_AHEAD < ne && tgt[k + PREFETCH_AHEAD] - m->base < m->span)
			__builtin_prefetch(&m->index[tgt[k + PREFETCH_AHEAD] - m->base]);
		return;
	}
	if (k + PREFETCH_AHEAD < ne) {
		uint64_t bucket = iddir_bucket(&s->dir, tgt[k + PREFETCH_AHEAD]);
		if (bucket != UINT64_MAX)
			__builtin_prefetch(&s->dir.slot[bucket]);
	}
	if (k + PREFETCH_AHEAD / 2 < ne) {
		uint64_t bucket = iddir_bucket(&s->dir, tgt[k + PREFETCH_AHEAD / 2]);
		if (bucket != UINT64_MAX && s->dir.slot[bucket] < s->n)
			__builtin_prefetch(&s->id[s->dir.slot[bucket]]);
	}
}

/* Out-edges: target ids -> dense indexes (id_map), dropping references
 * to objects that are not in the graph; slots split into low 16 bits and
 * runs of high bits.  Converts in place: edge e is written as a u32
 * target and a u16 slot where the u64 target and u32 slot of edge k >= e
 * were read, so the edges are never copied (the id map's table, 4 bytes
 * per id, is the only extra memory, and only for dense ids). */
static int assemble_out_edges(struct builder *b)
{
	struct heap_state *s = b->s;
	if (b->g.nedges > UINT32_MAX - 1)
		return -E2BIG;
	if (!b->g.off && !(b->g.off = malloc(sizeof(uint32_t)))) /* empty graph */
		return -ENOMEM;
	struct id_map map;
	int rc = id_map_build(s, &map);
	if (rc)
		return rc;
	uint32_t *tgt32 = (uint32_t *)b->g.tgt;
	uint16_t *slot16 = (uint16_t *)b->g.slot;
	uint32_t *off32 = b->g.off;
	uint64_t e = 0, hi_cap = 0;
	uint32_t cur_hi = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		uint64_t from = b->g.off[i], to = i + 1 < s->n ? b->g.off[i + 1] : b->g.nedges;
		off32[i] = (uint32_t)e; /* e <= from: in place is safe */
		for (uint64_t k = from; k < to; k++) {
			prefetch_find(s, &map, b->g.tgt, b->g.nedges, k);
			uint64_t id = b->g.tgt[k];
			uint32_t slot = b->g.slot[k];
			uint32_t tgt = id_map_find(s, &map, id);
			if (tgt == UINT32_MAX) {
				s->dangling_refs++;
				continue;
			}
			if (slot >> 16 != cur_hi) {
				cur_hi = slot >> 16;
				if ((rc = runs_push(&s->slot_hi_edge, &s->slot_hi, &s->nslot_hi, &hi_cap, e, cur_hi)))
					goto out;
			}
			tgt32[e] = tgt;
			slot16[e] = (uint16_t)slot;
			e++;
		}
	}
	off32[s->n] = (uint32_t)e;
	s->nedges = e;
	/* shrink to the final sizes (realloc may keep the block: then the
	 * original pointer stays valid) */
	size_t ne1 = e ? e : 1;
	s->out_tgt = realloc(b->g.tgt, ne1 * sizeof(uint32_t));
	s->out_tgt = s->out_tgt ? s->out_tgt : tgt32;
	s->out_slot = realloc(b->g.slot, ne1 * sizeof(uint16_t));
	s->out_slot = s->out_slot ? s->out_slot : slot16;
	s->out_off = realloc(b->g.off, ((size_t)s->n + 1) * sizeof(uint32_t));
	s->out_off = s->out_off ? s->out_off : off32;
	b->g.tgt = NULL;
	b->g.slot = NULL;
	b->g.off = NULL;
out:
	free(map.index);
	return rc;
}

/* s->in_src is allocated already (it served as the reachability queue). */
static int assemble_in_edges(struct heap_state *s, const struct hs_par_opts *par)
{
	s->in_off = big_calloc((size_t)s->n + 1, sizeof(uint32_t));
	if (!s->in_off)
		return -ENOMEM;
	if (par) {
		int rc = hs_in_edges_par(s, par);
		if (rc)
			return rc;
		goto shrink;
	}
	for (uint64_t e = 0; e < s->nedges; e++) {
		if (e + PREFETCH_AHEAD < s->nedges)
			__builtin_prefetch(&s->in_off[s->out_tgt[e + PREFETCH_AHEAD] + 1], 1);
		s->in_off[s->out_tgt[e] + 1]++;
	}
	for (uint32_t i = 0; i < s->n; i++)
		s->in_off[i + 1] += s->in_off[i];
	/* fill using in_off[t] as a cursor, then shift back; the cursors of
	 * targets a few edges on, then the slots they point at, are fetched
	 * early (random accesses) */
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t e = s->out_off[i]; e < s->out_off[i + 1]; e++) {
			if (e + PREFETCH_AHEAD < s->nedges)
				__builtin_prefetch(&s->in_off[s->out_tgt[e + PREFETCH_AHEAD]], 1);
			if (e + PREFETCH_AHEAD / 2 < s->nedges)
				__builtin_prefetch(&s->in_src[s->in_off[s->out_tgt[e + PREFETCH_AHEAD / 2]]], 1);
			s->in_src[s->in_off[s->out_tgt[e]]++] = i;
		}
	for (uint32_t i = s->n; i > 0; i--)
		s->in_off[i] = s->in_off[i - 1];
	s->in_off[0] = 0;
shrink:;
	/* the block may have more room than edges (it was the queue) */
	uint32_t *shrunk = realloc(s->in_src, (s->nedges ? s->nedges : 1) * sizeof(uint32_t));
	if (shrunk)
		s->in_src = shrunk;
	return 0;
}

static int assemble_roots(struct builder *b)
{
	struct heap_state *s = b->s;
	s->roots = malloc((b->nroots ? b->nroots : 1) * sizeof(*s->roots));
	if (!s->roots)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint32_t i = 0; i < b->nroots; i++) {
		const struct htr_root *r = &b->roots[i];
		uint32_t obj = heap_state_find(s, r->object);
		if (obj == UINT32_MAX) {
			s->dropped_roots++;
			continue;
		}
		s->roots[k++] = (struct hs_root){
			.kind = r->kind, .object = obj,
			.thread = r->thread || r->kind == HTR_ROOT_THREAD || r->kind == HTR_ROOT_LOCAL ||
					  r->kind == HTR_ROOT_JNI_LOCAL
				  ? thread_index(b->t, &b->threads, r->thread) : UINT32_MAX,
			.type = r->type, .field = r->field, .method = r->method,
			.depth = r->depth, .slot = r->slot,
		};
	}
	s->nroots = k;
	return 0;
}

/* Marks everything reachable from the roots: breadth-first with an explicit
 * queue (no recursion: heaps hold million-long lists).  The queue is the
 * block that will hold the in-edges, sized for both: memory the kernel
 * hands out fresh must be zeroed first, and on a large heap that zeroing
 * cost as much as the walk. */
static int mark_reachable(struct heap_state *s, const struct hs_par_opts *par)
{
	size_t words = ((size_t)s->n + 63) / 64;
	size_t qlen = (size_t)s->n + 1 > s->nedges ? (size_t)s->n + 1 : s->nedges;
	s->reachable = big_calloc(words ? words : 1, sizeof(uint64_t));
	s->in_src = big_malloc(qlen * sizeof(uint32_t));
	if (!s->reachable || !s->in_src)
		return -ENOMEM;
	if (par)
		return hs_mark_par(s, par);
	uint32_t *queue = s->in_src;
	size_t head = 0, tail = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (!hs_is_reachable(s, o)) {
			s->reachable[o >> 6] |= 1ull << (o & 63);
			queue[tail++] = o;
		}
	}
	while (head < tail) {
		/* the queue is known ahead: fetch the offsets of an object a few
		 * places on while this one is scanned (each is a cache miss) */
		if (head + PREFETCH_AHEAD < tail)
			__builtin_prefetch(&s->out_off[queue[head + PREFETCH_AHEAD]]);
		if (head + PREFETCH_AHEAD / 2 < tail)
			__builtin_prefetch(&s->out_tgt[s->out_off[queue[head + PREFETCH_AHEAD / 2]]]);
		uint32_t o = queue[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!hs_is_reachable(s, t)) {
				s->reachable[t >> 6] |= 1ull << (t & 63);
				queue[tail++] = t;
			}
		}
	}
	s->nreachable = (uint32_t)tail;
	return 0;
}

/* Total and reachable bytes in one pass (reachable is NULL without a
 * graph), and the state's own memory. */
static void sum_sizes(struct heap_state *s)
{
	s->total_bytes = s->reachable_bytes = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		uint64_t size = hs_info(s, i)->size;
		s->total_bytes += size;
		if (hs_is_reachable(s, i))
			s->reachable_bytes += size;
	}
	s->mem_bytes = heap_state_memory(s);
}

/* States this small derive on one thread: starting threads would cost
 * more than they save. */
#define PAR_MIN_OBJECTS (1u << 17)

/* What a state derives from its columns, roots and out-edges, for a
 * rebuild and for a state filled elsewhere alike: reachability before
 * in-edges (its queue becomes the in-edges), then the size sums. */
static int derive(struct heap_state *s, uint32_t threads)
{
	int rc = 0;
	if (s->has_graph) {
		/* more than one thread: heap_state_par.h (the same result);
		 * one: the loops here */
		uint32_t nt = s->n >= PAR_MIN_OBJECTS ? mpar_resolve(threads) : 1;
		struct hs_par_opts po = hs_par_defaults(nt);
		const struct hs_par_opts *par = nt > 1 ? &po : NULL;
		rc = mark_reachable(s, par);
		if (!rc)
			rc = assemble_in_edges(s, par);
	}
	if (!rc)
		sum_sizes(s);
	return rc;
}

/* A state whose columns were filled elsewhere (heap_state_make.h). */
int heap_state_complete(struct heap_state *s, uint32_t threads)
{
	int rc = build_directory(s);
	return rc ? rc : derive(s, threads);
}

static int assemble(struct builder *b, struct htr_err *err)
{
	struct heap_state *s = b->s;
	int rc;
	if (b->has_graph) {
		rc = fill_unknown_objects(b);
	} else {
		rc = assemble_objects_from_allocs(b, err);
		if (rc == -EBADMSG)
			return rc;
		if (!rc)
			rc = build_directory(s);
	}
	free(b->allocs); b->allocs = NULL;
	free(b->dead); b->dead = NULL;
	/* the infos move to the state first: the sums below read sizes */
	s->infos = b->in.t.infos;
	s->ninfos = b->in.t.n;
	b->in.t.infos = NULL;
	b->in.t.n = 0;
	if (!rc && b->has_graph) {
		s->has_graph = 1;
		/* (the out-edges were assembled with the graph's ids) */
		rc = assemble_roots(b);
	}
	if (!rc)
		rc = derive(s, b->o ? b->o->threads : 0);
	if (!rc)
		return 0;
	return htr_errf(err, rc, 0, rc == -E2BIG ? "GC %u has more than 2^32 objects or edges"
				    : "out of memory rebuilding GC %u", b->G);
}

static void builder_free(struct builder *b)
{
	objinfo_table_free(&b->in.t);
	free(b->allocs);
	free(b->dead);
	free(b->off_ids);
	free(b->g.id);
	free(b->g.off);
	free(b->g.slot);
	free(b->g.tgt);
	free(b->roots);
}

int heap_state_build(const struct trace *t, uint32_t gc_index, const struct heap_build_opts *o,
		     struct heap_state **out, struct htr_err *err)
{
	if (gc_index >= t->ngcs)
		return htr_errf(err, -ENOENT, 0, "no GC with index %u", gc_index);
	/* A dump opened directly brought its state along, and its temporary
	 * trace holds no graph records to rebuild it from (model/hprof.c) */
	if (t->prebuilt && t->prebuilt->gc_index == gc_index) {
		int rc = heap_state_copy(t->prebuilt, out);
		return rc ? htr_errf(err, rc, 0, "out of memory copying the dump's heap state") : 0;
	}
	struct builder b;
	memset(&b, 0, sizeof(b));
	b.t = t;
	b.gi = gc_index;
	b.G = t->gcs[gc_index].gc;
	b.has_graph = (t->gcs[gc_index].flags & HTR_GC_HAS_GRAPH) != 0;
	b.allocs_sorted = 1;
	b.threads = THREAD_MEMO_EMPTY;
	b.o = o;
	/* a base helps only a graph GC, and must be an earlier GC of this
	 * trace; not in a sampled trace, whose graph states hold objects
	 * flagged off their graph (add_sampled_off_graph) */
	if (o && o->base && b.has_graph && !t->sample_interval && o->base->gc_index < gc_index &&
	    o->base->gc == t->gcs[o->base->gc_index].gc)
		b.base = o->base;
	uint32_t first = b.base ? t->gcs[b.base->gc_index].frame : 0;
	for (uint32_t f = first; f <= t->gcs[gc_index].frame && f < t->nframes; f++)
		b.work_total += t->frames[f].comp_len;
	progress_phase(progress_here(), b.work_total, "reading the heap at GC %u (trace bytes)", b.G);
	int rc = -ENOMEM;
	b.s = calloc(1, sizeof(*b.s));
	if (!b.s) {
		htr_errf(err, rc, 0, "out of memory");
		goto out;
	}
	b.s->gc_index = gc_index;
	b.s->gc = b.G;
	rc = read_frames(&b, err);
	if (!rc) {
		progress_phase(progress_here(), 0, "assembling the heap at GC %u (graph, reachability)", b.G);
		struct lap_t t0;
		lap_now(&t0);
		rc = assemble(&b, err);
		timing_lap("state", "assembled", &t0);
	}
	if (!rc) {
		b.work_done = b.work_total;
		progress(&b, 1);
		*out = b.s;
		b.s = NULL;
	}
out:
	heap_state_free(b.s);
	builder_free(&b);
	return rc;
}

void heap_state_free(struct heap_state *s)
{
	if (!s)
		return;
	free(s->id); free(s->info); free(s->birth); free(s->infos);
	free(s->out_off); free(s->out_tgt); free(s->out_slot);
	free(s->in_off); free(s->in_src);
	free(s->slot_hi_edge); free(s->slot_hi);
	free(s->roots); free(s->reachable); iddir_free(&s->dir);
	free(s);
}

uint32_t hs_ref_slot(const struct heap_state *s, uint32_t i, uint64_t e)
{
	(void)i;
	uint32_t lo = s->out_slot[e];
	if (s->nslot_hi == 0 || e < s->slot_hi_edge[0])
		return lo;
	uint32_t a = 0, z = s->nslot_hi; /* last run starting at or before e */
	while (z - a > 1) {
		uint32_t mid = a + (z - a) / 2;
		if (s->slot_hi_edge[mid] <= e)
			a = mid;
		else
			z = mid;
	}
	return s->slot_hi[a] << 16 | lo;
}

size_t heap_state_memory(const struct heap_state *s)
{
	size_t n = s->n, e = s->nedges;
	size_t m = sizeof(*s) + n * (8 + 4 + 4) + s->ninfos * sizeof(struct objinfo) +
		   s->dir.nslot * 4 + s->nroots * sizeof(struct hs_root);
	if (s->has_graph)
		m += (n + 1) * 4 * 2 + e * (4 + 2 + 4) + (n + 63) / 64 * 8 +
		     s->nslot_hi * (8 + 4);
	return m;
}

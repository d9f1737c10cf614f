/* hprof_state.c - the heap state of a dump mounted directly, built from
 * the dump itself.
 *
 * Through a trace, a dump's state is the importer writing an event per
 * object and per object's references, then the reconstructor decoding them
 * again and looking every id up.  Here the pass over the objects that
 * writes those events also fills the state's columns: the ids are the
 * dump's sorted ids, each object's properties are interned as it is met
 * (in id order, so the interned table comes out as the reconstructor's),
 * and the graph the pass collected (struct dgraph) becomes the out-edges
 * as it is.  heap_state_complete() adds what the reconstructor derives.
 *
 * One thing is only known once the trace is open: dense thread indexes
 * (the trace numbers threads as it reads them).  Until then objects and
 * roots hold HPROF thread serials, and hprof_direct_finish() maps them.
 * Thread serials that no thread record names (all map to "no thread") are
 * interned as one, so the interned table equals the reconstructor's.
 *
 * Ownership: struct hstate_infos owns its arrays until hstate_make takes
 * infos and info into the state; struct hprof_direct owns its state until
 * hprof_direct_finish hands it out.
 */
#include "hprof_internal.h"
#include "timing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "heap_state.h"
#include "heap_state_make.h"
#include "mpar.h"
#include "objinfo_table.h"
#include "htr_writer.h"
#include "trace.h"

struct hstate_infos {
	const struct dump *d;
	struct objinfo_table t;            /* the interned infos (objinfo_table.h) */
	uint32_t last;                     /* memo: the latest hit */
	uint32_t *memo;                    /* [nclasses + 1] info index + 1 last used per type id
	                                      (type ids past nclasses share the last entry) */
	uint32_t *info;                    /* [nobjs] each object's info index */
	uint32_t unknown_serial;           /* the serial all unnamed threads intern as */
	int have_unknown;
	uint32_t memo_in, memo_out;        /* the latest serial and what it interns as */
	int have_memo;
};

/* A heap state waiting for its trace's thread indexes. */
struct hprof_direct {
	struct heap_state *s;
	uint8_t *root_thread;   /* [nroots] 1: roots[r].thread is a serial to map */
	uint32_t threads;       /* the import's (hprof_import_opts.threads) */
};

int hstate_infos_new(struct hstate_infos **out, const struct dump *d)
{
	struct hstate_infos *x = calloc(1, sizeof *x);
	if (!x)
		return -ENOMEM;
	x->d = d;
	x->memo = calloc((size_t)d->nclasses + 1, sizeof *x->memo);
	x->info = malloc((d->nobjs ? d->nobjs : 1) * sizeof *x->info);
	if (!x->memo || !x->info) {
		hstate_infos_free(x);
		return -ENOMEM;
	}
	*out = x;
	return 0;
}

void hstate_infos_free(struct hstate_infos *x)
{
	if (!x)
		return;
	objinfo_table_free(&x->t);
	free(x->memo);
	free(x->info);
	free(x);
}

int hstate_infos_put(struct hstate_infos *x, size_t i, uint32_t type, uint32_t site,
		     uint32_t thread_serial, uint32_t flags, uint64_t size, int64_t array_length)
{
	if (!x->have_memo || thread_serial != x->memo_in) {
		x->have_memo = 1;
		x->memo_in = thread_serial;
		if (u64map_get(&x->d->thread_idx, thread_serial) == U64MAP_NONE) {
			if (!x->have_unknown) {
				x->unknown_serial = thread_serial;
				x->have_unknown = 1;
			}
			thread_serial = x->unknown_serial;
		}
		x->memo_out = thread_serial;
	}
	struct objinfo o = { .type = type, .site = site, .thread = x->memo_out, .flags = flags,
			     .size = size, .array_length = array_length };
	/* objects of one type mostly share one info (instances) or follow
	 * each other (arrays of one length): two compares before a probe */
	if (x->t.n && objinfo_eq(&x->t.infos[x->last], &o)) {
		x->info[i] = x->last;
		return 0;
	}
	uint32_t m = type < x->d->nclasses ? type : x->d->nclasses;
	if (x->memo[m] && objinfo_eq(&x->t.infos[x->memo[m] - 1], &o)) {
		x->info[i] = x->last = x->memo[m] - 1;
		return 0;
	}
	int rc = objinfo_table_put(&x->t, &o, &x->info[i]);
	if (!rc) {
		x->last = x->info[i];
		x->memo[m] = x->last + 1;
	}
	return rc;
}

void hprof_direct_free(struct hprof_direct *x)
{
	if (!x)
		return;
	heap_state_free(x->s);
	free(x->root_thread);
	free(x);
}

/* Roots as the reconstructor makes them from ROOTS events (assemble_roots
 * in heap_state.c): dense objects; the thread of thread, local and JNI
 * local roots and of any root naming one, mapped later. */
static int make_roots(struct hprof_direct *x, const struct dump *d, const struct htr_root *roots,
		      uint32_t nroots)
{
	struct heap_state *s = x->s;
	s->roots = malloc((nroots ? nroots : 1) * sizeof *s->roots);
	x->root_thread = calloc(nroots ? nroots : 1, 1);
	if (!s->roots || !x->root_thread)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint32_t i = 0; i < nroots; i++) {
		const struct htr_root *r = &roots[i];
		uint32_t obj = idindex_find(&d->index, r->object);
		if (obj == IDINDEX_NONE) {
			s->dropped_roots++;
			continue;
		}
		int has_thread = r->thread || r->kind == HTR_ROOT_THREAD || r->kind == HTR_ROOT_LOCAL ||
				 r->kind == HTR_ROOT_JNI_LOCAL;
		x->root_thread[k] = (uint8_t)has_thread;
		s->roots[k++] = (struct hs_root){
			.kind = r->kind, .object = obj,
			.thread = has_thread ? (uint32_t)r->thread : UINT32_MAX,
			.type = r->type, .field = r->field, .method = r->method,
			.depth = r->depth, .slot = r->slot,
		};
	}
	s->nroots = k;
	return 0;
}

/* The graph's arrays become the state's out-edges. */
static void adopt_graph(struct heap_state *s, struct dgraph *g)
{
	s->has_graph = 1;
	s->nedges = g->ne;
	s->out_off = g->off;
	uint32_t *t = realloc(g->tgt, (g->ne ? g->ne : 1) * sizeof *t);
	s->out_tgt = t ? t : g->tgt;
	uint16_t *sl = realloc(g->slot, (g->ne ? g->ne : 1) * sizeof *sl);
	s->out_slot = sl ? sl : g->slot;
	s->slot_hi_edge = g->hi_edge;
	s->slot_hi = g->hi;
	s->nslot_hi = g->nhi;
	s->dangling_refs = g->ndang;
	g->off = NULL;
	g->tgt = NULL;
	g->slot = NULL;
	g->hi_edge = NULL;
	g->hi = NULL;
	g->nhi = 0;
	g->ne = 0;
}

int hstate_make(struct hprof_direct **out, struct dump *d, struct hstate_infos *x, struct dgraph *g,
		const struct htr_root *roots, uint32_t nroots, uint32_t gc)
{
	*out = NULL;
	if (d->nobjs >= UINT32_MAX)
		return -E2BIG;
	struct hprof_direct *h = calloc(1, sizeof *h);
	if (!h || !(h->s = calloc(1, sizeof *h->s))) {
		free(h);
		return -ENOMEM;
	}
	struct heap_state *s = h->s;
	h->threads = d->o ? d->o->threads : 0;
	s->gc_index = gc;
	s->gc = gc;
	s->n = (uint32_t)d->nobjs;
	int rc = make_roots(h, d, roots, nroots);
	s->birth = malloc((s->n ? s->n : 1) * sizeof *s->birth);
	if (rc || !s->birth) {
		hprof_direct_free(h);
		return -ENOMEM;
	}
	/* every object of a single dump existed before the trace's first GC */
	mpar_memset(mpar_resolve(h->threads), s->birth, 0xff, (size_t)s->n * sizeof *s->birth);
	s->id = d->ids;
	d->ids = NULL;            /* the id index keeps reading it: the state owns it now */
	s->info = x->info;
	x->info = NULL;
	s->infos = x->t.infos;
	s->ninfos = x->t.n;
	x->t.infos = NULL;
	x->t.n = 0;
	adopt_graph(s, g);
	*out = h;
	return 0;
}

int hprof_direct_finish(struct hprof_direct *x, const struct trace *t, struct heap_state **out,
			struct htr_err *err)
{
	struct heap_state *s = x->s;
	uint32_t memo_serial = UINT32_MAX, memo_index = trace_thread_index(t, UINT32_MAX);
	for (uint32_t i = 0; i < s->ninfos; i++) {
		uint32_t serial = s->infos[i].thread;
		if (serial != memo_serial) {
			memo_serial = serial;
			memo_index = trace_thread_index(t, serial);
		}
		s->infos[i].thread = memo_index;
	}
	for (uint32_t r = 0; r < s->nroots; r++)
		if (x->root_thread[r])
			s->roots[r].thread = trace_thread_index(t, s->roots[r].thread);
	struct lap_t lap;
	lap_now(&lap);
	int rc = heap_state_complete(s, x->threads);
	timing_lap("import", "heap state", &lap);
	if (rc) {
		hprof_direct_free(x);
		return htr_errf(err, rc, 0, "out of memory building the heap state of the dump");
	}
	*out = s;
	x->s = NULL;
	hprof_direct_free(x);
	return 0;
}

/* winstate.c - see winstate.h */
#include "winstate.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/progress.h"

#define NONE UINT64_MAX

enum { ST_NONE, ST_BUSY, ST_READY };

struct win_state {
	struct win_params p;        /* immutable after new */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* lock: */
	int reach_state, res_state;
	int reach_err;              /* a damaged trace: remembered, not retried */
	/* written by the one computing thread, read once *_state is READY: */
	uint64_t *reachable;        /* [ngcs], NONE where not computed */
	uint32_t nsampled;          /* GCs with a reachable value */
	struct win_result res[WK_COUNT];
	int leak_on_reachable;      /* 1: leak series = reachable; 0: used_after */
	uint32_t leak_points;
	int program_time;           /* 1: gc-overhead and churn on the program's own time */
	uint64_t removed_ns;        /* the recorder's time taken out of it */
	/* atomics, for status: */
	uint64_t done, total;
	int running;
};

int win_state_new(struct win_state **out, const struct win_params *p)
{
	struct win_state *w = calloc(1, sizeof *w);
	if (!w)
		return -ENOMEM;
	if (p)
		w->p = *p;
	else
		win_params_default(&w->p);
	if (w->p.reachable_every == 0)
		w->p.reachable_every = 1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	*out = w;
	return 0;
}

void win_state_free(struct win_state *w)
{
	if (!w)
		return;
	free(w->reachable);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* ---- single flight -------------------------------------------------------- */

/* 1: the caller computes (state now BUSY); 0: ready; < 0: remembered error. */
static int flight_begin(struct win_state *w, int *state, const int *err)
{
	pthread_mutex_lock(&w->lock);
	while (*state == ST_BUSY)
		pthread_cond_wait(&w->cond, &w->lock);
	int rc = 1;
	if (*state == ST_READY)
		rc = 0;
	else if (err && *err)
		rc = *err;
	else
		*state = ST_BUSY;
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* Damage (-EIO) is remembered; other failures (-ENOMEM) are retried. */
static void flight_end(struct win_state *w, int *state, int *err, int rc)
{
	pthread_mutex_lock(&w->lock);
	*state = rc ? ST_NONE : ST_READY;
	if (rc == -EIO && err)
		*err = rc;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* ---- reachable memory per GC --------------------------------------------- */

static int sampled(const struct trace *t, uint32_t g, uint32_t every, uint32_t *graph_seen)
{
	if (!(t->gcs[g].flags & HTR_GC_HAS_GRAPH))
		return 0;
	return (*graph_seen)++ % every == 0;
}

/* A GC whose recorder wrote its reachable bytes (format 1.2,
 * HTR_GC_HAS_REACHABLE) needs no rebuild: `heapfs check` verifies that the
 * recorded value is what the rebuild gives. */
static int recorded(const struct trace *t, uint32_t g)
{
	return (t->gcs[g].flags & HTR_GC_HAS_REACHABLE) != 0;
}

static int build_reachable(const struct win_inputs *in, struct win_state *w, uint64_t *out)
{
	const struct trace *t = in->t;
	uint32_t seen = 0, total = 0, nbuild = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		int s = sampled(t, g, w->p.reachable_every, &seen);
		total += (uint32_t)s;
		nbuild += (uint32_t)(s && !recorded(t, g));
	}
	__atomic_store_n(&w->total, total, __ATOMIC_RELAXED);
	__atomic_store_n(&w->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->running, 1, __ATOMIC_RELAXED);
	seen = 0;
	uint32_t n = 0;
	int rc = 0;
	/* Each state is built from the previous one (heap_build_opts.base), so
	 * the series costs one pass over the graphs, not a rebuild from the
	 * trace's start per GC. */
	struct heap_state *prev = NULL;
	for (uint32_t g = 0; g < t->ngcs && !rc; g++) {
		out[g] = NONE;
		if (!sampled(t, g, w->p.reachable_every, &seen))
			continue;
		if (recorded(t, g)) {
			out[g] = t->gcs[g].reachable_bytes;
			n++;
			__atomic_add_fetch(&w->done, 1, __ATOMIC_RELAXED);
			continue;
		}
		/* the rebuild's own phases follow; this one says which GC of the
		 * series it is */
		progress_phase(progress_here(), 0, "reachable memory: GC %" PRIu32 " (%" PRIu32 "/%" PRIu32 ")",
			       t->gcs[g].gc, n + 1, total);
		if (nbuild == 1) {
			/* one point (a heap dump): the state the tree's other files
			 * use, perhaps already there (a dump opened directly brings
			 * its state along), instead of a second build of it */
			const struct heap_state *cs;
			if ((rc = in->state_get(in->ctx, g, &cs)))
				break;
			out[g] = cs->has_graph ? cs->reachable_bytes : NONE;
			n += cs->has_graph != 0;
			in->state_put(in->ctx, cs);
			__atomic_add_fetch(&w->done, 1, __ATOMIC_RELAXED);
			continue;
		}
		struct heap_state *s;
		struct htr_err err;
		struct heap_build_opts o = { .base = prev, .threads = in->threads };
		memset(&err, 0, sizeof err);
		rc = heap_state_build(t, g, &o, &s, &err);
		if (rc) {
			if (rc != -ENOMEM) {
				in->damage(in->ctx, &err);
				rc = -EIO;
			}
			break;
		}
		out[g] = s->has_graph ? s->reachable_bytes : NONE;
		n += s->has_graph != 0;
		heap_state_free(prev);
		prev = s;
		__atomic_add_fetch(&w->done, 1, __ATOMIC_RELAXED);
	}
	heap_state_free(prev);
	__atomic_store_n(&w->running, 0, __ATOMIC_RELAXED);
	w->nsampled = n;
	return rc;
}

int win_state_reachable(struct win_state *w, const struct win_inputs *in,
			const uint64_t **reachable)
{
	int rc = flight_begin(w, &w->reach_state, &w->reach_err);
	if (rc == 1) {
		uint64_t *r = w->reachable;
		if (!r)
			r = malloc(sizeof *r * (in->t->ngcs ? in->t->ngcs : 1));
		rc = r ? build_reachable(in, w, r) : -ENOMEM;
		w->reachable = r;
		flight_end(w, &w->reach_state, &w->reach_err, rc);
	}
	if (rc == 0)
		*reachable = w->reachable;
	return rc;
}

/* ---- the detectors over the trace's series ------------------------------- */

struct series {
	uint64_t *t, *v, *start, *end, *freed;
	uint32_t *gci, *gc_no;
};

static void series_free(struct series *s)
{
	free(s->t);
	free(s->v);
	free(s->start);
	free(s->end);
	free(s->freed);
	free(s->gci);
	free(s->gc_no);
}

static int series_alloc(struct series *s, uint32_t n)
{
	size_t m = n ? n : 1;
	memset(s, 0, sizeof *s);
	s->t = malloc(m * 8);
	s->v = malloc(m * 8);
	s->start = malloc(m * 8);
	s->end = malloc(m * 8);
	s->freed = malloc(m * 8);
	s->gci = malloc(m * 4);
	s->gc_no = malloc(m * 4);
	return s->t && s->v && s->start && s->end && s->freed && s->gci && s->gc_no ? 0 : -ENOMEM;
}

uint64_t win_rel_ns(const struct trace *t, uint64_t ns)
{
	return ns > t->first_ns ? ns - t->first_ns : 0;
}

/* The leak series: reachable where at least two GCs have it, else
 * used_after; points whose time does not advance are skipped. */
static uint32_t leak_points(const struct trace *t, const uint64_t *reach, int use_reach,
			    struct series *s)
{
	uint32_t n = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		uint64_t v = use_reach ? reach[g] : t->gcs[g].used_after;
		uint64_t tn = win_rel_ns(t, t->gcs[g].end_ns);
		if (v == NONE || v > INT64_MAX || (n && tn <= s->t[n - 1]))
			continue;
		s->t[n] = tn;
		s->v[n] = v;
		s->gci[n] = g;
		n++;
	}
	return n;
}

static void gc_columns(const struct trace *t, struct series *s)
{
	for (uint32_t g = 0; g < t->ngcs; g++) {
		const struct htr_gc_summary *x = &t->gcs[g];
		s->gc_no[g] = x->gc;
		s->start[g] = x->start_ns;
		s->end[g] = x->end_ns;
		s->freed[g] = x->used_before != NONE && x->used_after != NONE &&
			x->used_before > x->used_after ? x->used_before - x->used_after : 0;
	}
}

/* A recording whose recorder says what time it took from the program
 * (model/trace.h overhead, every GC): the GC windows run on the program's
 * own time (win_program_time).  Allocation callbacks ran on several
 * threads at once: their sum over the threads that ran them since the
 * previous GC, divided by those threads, is what the slowest of them
 * lost if they ran side by side (a lower bound when they did not);
 * walks stop every thread.  1 when the axis was changed. */
static int program_time(const struct trace *t, struct series *s, uint64_t *removed)
{
	if (!t->overhead)
		return 0;
	for (uint32_t g = 0; g < t->ngcs; g++)
		if (!t->overhead[g].known)
			return 0;
	uint64_t *taken = malloc(sizeof *taken * (t->ngcs ? t->ngcs : 1));
	if (!taken)
		return 0; /* the wall clock, as for any trace */
	struct trace_overhead prev = { 0, 0, 0, 0 };
	for (uint32_t g = 0; g < t->ngcs; g++) {
		const struct trace_overhead *o = &t->overhead[g];
		uint64_t cb = o->cb_ns > prev.cb_ns ? o->cb_ns - prev.cb_ns : 0;
		uint64_t walk = o->walk_ns > prev.walk_ns ? o->walk_ns - prev.walk_ns : 0;
		taken[g] = cb / (o->threads ? o->threads : 1) + walk;
		prev = *o;
	}
	int ok = win_program_time(t->ngcs, s->start, s->end, t->first_ns, taken, s->start, s->end,
				  removed) == 0;
	free(taken);
	if (!ok) /* not increasing: left to the detectors to refuse */
		gc_columns(t, s);
	return ok;
}

static int run_detectors(const struct trace *t, struct win_state *w, const uint64_t *reach)
{
	struct series s;
	int rc = series_alloc(&s, t->ngcs);
	if (rc)
		goto out;
	gc_columns(t, &s);
	w->leak_on_reachable = w->nsampled >= 2;
	w->leak_points = leak_points(t, reach, w->leak_on_reachable, &s);
	struct win_points pts = { .n = w->leak_points, .t_ns = s.t, .v = s.v, .gci = s.gci,
				  .ngcs = t->ngcs, .gc_no = s.gc_no };
	struct win_gcs gcs = { .n = t->ngcs, .start_ns = s.start, .end_ns = s.end,
			       .freed = s.freed, .origin_ns = t->first_ns, .gc_no = s.gc_no };
	w->program_time = program_time(t, &s, &w->removed_ns);
	if ((rc = win_leak(&pts, &w->p, &w->res[WK_LEAK])) ||
	    (rc = win_leak_narrow(&pts, &w->res[WK_LEAK], &w->p, &w->res[WK_NARROW])) ||
	    (rc = win_leak_regression(&pts, &w->p, &w->res[WK_REGRESSION])) ||
	    (rc = win_gc_overhead(&gcs, &w->p, &w->res[WK_GC_OVERHEAD])) ||
	    (rc = win_churn(&gcs, &w->p, &w->res[WK_CHURN])))
		goto out;
	/* the gc-based windows are in absolute time (on the program's own
	 * axis: the recording's times of their GCs again); make them relative */
	for (int k = WK_GC_OVERHEAD; k <= WK_CHURN; k++) {
		struct win_result *r = &w->res[k];
		if (w->program_time && r->have_candidate) {
			r->start_ns = r->start_gci == 0 ? t->first_ns : t->gcs[r->start_gci - 1].end_ns;
			r->end_ns = t->gcs[r->end_gci].end_ns;
		}
		r->start_ns = win_rel_ns(t, r->start_ns);
		r->end_ns = win_rel_ns(t, r->end_ns);
	}
out:
	series_free(&s);
	return rc == -EINVAL ? -EIO : rc;
}

int win_state_results(struct win_state *w, const struct win_inputs *in,
		      const struct win_result **res)
{
	const uint64_t *reach;
	int rc = win_state_reachable(w, in, &reach);
	if (rc)
		return rc;
	rc = flight_begin(w, &w->res_state, NULL);
	if (rc == 1) {
		rc = run_detectors(in->t, w, reach);
		flight_end(w, &w->res_state, NULL, rc);
	}
	if (rc == 0)
		*res = w->res;
	return rc;
}

void win_state_info(struct win_state *w, struct win_state_info *out)
{
	pthread_mutex_lock(&w->lock);
	out->reach_ready = w->reach_state == ST_READY;
	out->reach_busy = w->reach_state == ST_BUSY;
	out->reach_err = w->reach_err;
	pthread_mutex_unlock(&w->lock);
	out->params = &w->p;
	/* written by the computing thread before the state went READY */
	out->leak_on_reachable = w->leak_on_reachable;
	out->nsampled = w->nsampled;
	out->leak_points = w->leak_points;
	out->program_time = w->program_time;
	out->removed_ns = w->removed_ns;
	out->done = __atomic_load_n(&w->done, __ATOMIC_RELAXED);
	out->total = __atomic_load_n(&w->total, __ATOMIC_RELAXED);
}

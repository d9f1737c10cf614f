/* trace.c - opening and indexing a trace; see trace.h.
 *
 * Two ways to the index: the footer (symbols, frame table and GC summaries
 * written by the writer at close), or a scan of every frame when the footer
 * is missing or unusable.  Both end in the same struct trace, and both go
 * through symbols_add() for the symbol events, so a footer can never
 * produce a different index than a scan of the same file.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "heap_state.h"
#include "hprof.h"
#include "jfr.h"
#include "jfr_import.h"
#include "progress.h"

#define MAX_SYMBOL_ID (1u << 24) /* type, method and site ids */

static char *dupn(const char *s, uint32_t n)
{
	char *p = malloc((size_t)n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* Ids of one kind are dense (docs/trace-format.md): an id may run ahead of
 * the symbols read so far by this much and no more.  Without the bound a
 * damaged 29-byte trace naming type 2^24 - 1 had the tables take 670 MB. */
#define SYMBOL_ID_SLACK 65536u

/* Grows a by-id table so that index id exists (zero-filled). */
static int grow_table(const struct trace *t, void **tab, uint32_t *n, uint32_t id, size_t elem)
{
	if (id < *n)
		return 0;
	if (id >= MAX_SYMBOL_ID || (uint64_t)id >= 2 * (uint64_t)t->nsymbols + SYMBOL_ID_SLACK)
		return -EBADMSG;
	uint32_t cap = *n ? *n : 64;
	while (cap <= id)
		cap *= 2;
	void *p = realloc(*tab, (size_t)cap * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)*n * elem, 0, (size_t)(cap - *n) * elem);
	*tab = p;
	*n = cap;
	return 0;
}

static void free_type(struct trace_type *t)
{
	free(t->name);
	for (uint32_t i = 0; i < t->nfields; i++) {
		free(t->fields[i].name);
		free(t->fields[i].sig);
	}
	free(t->fields);
	memset(t, 0, sizeof(*t));
}

static int add_type(struct trace *t, const struct htr_event *ev)
{
	uint32_t id = ev->u.type.id;
	int rc = grow_table(t, (void **)&t->types, &t->ntypes, id, sizeof(*t->types));
	if (rc)
		return rc;
	t->nsymbols++;
	struct trace_type *ty = &t->types[id];
	free_type(ty); /* a redefinition replaces (footer after scan) */
	ty->name = dupn(ev->u.type.name, ev->u.type.name_len);
	ty->kind = ev->u.type.kind;
	ty->instance_size = ev->u.type.instance_size;
	ty->elem_size = ev->u.type.elem_size;
	ty->super_id = ev->u.type.super_id;
	ty->fields = calloc(ev->u.type.nfields ? ev->u.type.nfields : 1, sizeof(*ty->fields));
	if (!ty->name || !ty->fields)
		return -ENOMEM;
	for (uint32_t i = 0; i < ev->u.type.nfields; i++) {
		const struct htr_field *f = &ev->u.type.fields[i];
		ty->fields[i].name = dupn(f->name, f->name_len);
		ty->fields[i].sig = dupn(f->sig, f->sig_len);
		ty->fields[i].flags = f->flags;
		ty->nfields = i + 1;
		if (!ty->fields[i].name || !ty->fields[i].sig)
			return -ENOMEM;
	}
	return 0;
}

static int add_method(struct trace *t, const struct htr_event *ev)
{
	uint32_t id = ev->u.method.id;
	int rc = grow_table(t, (void **)&t->methods, &t->nmethods, id, sizeof(*t->methods));
	if (rc)
		return rc;
	t->nsymbols++;
	struct trace_method *m = &t->methods[id];
	free(m->cls); free(m->name); free(m->sig); free(m->file);
	m->cls = dupn(ev->u.method.cls, ev->u.method.cls_len);
	m->name = dupn(ev->u.method.name, ev->u.method.name_len);
	m->sig = dupn(ev->u.method.sig, ev->u.method.sig_len);
	m->file = dupn(ev->u.method.file, ev->u.method.file_len);
	return m->cls && m->name && m->sig && m->file ? 0 : -ENOMEM;
}

static int add_count_site(struct trace *t, const struct htr_event *ev)
{
	uint32_t id = ev->u.count_site.id;
	int rc = grow_table(t, (void **)&t->count_sites, &t->ncount_sites, id, sizeof(*t->count_sites));
	if (rc)
		return rc;
	t->nsymbols++;
	struct trace_count_site *s = &t->count_sites[id];
	free(s->type);
	s->method = ev->u.count_site.method;
	s->bci = ev->u.count_site.bci;
	s->line = ev->u.count_site.line;
	s->type = dupn(ev->u.count_site.type, ev->u.count_site.type_len);
	return s->type ? 0 : -ENOMEM;
}

/* Adds one ALLOC_COUNTS event (deltas; the footer's are totals from zero). */
static int add_counts(struct trace *t, const struct htr_event *ev)
{
	const uint32_t *ids = ev->u.alloc_counts.sites;
	for (uint32_t i = 0; i < ev->u.alloc_counts.count; i++) {
		int rc = grow_table(t, (void **)&t->site_counts, &t->nsite_counts, ids[i], sizeof(*t->site_counts));
		if (rc)
			return rc;
		/* a count no run can reach is damage, not a wrapped number */
		if (__builtin_add_overflow(t->site_counts[ids[i]], ev->u.alloc_counts.counts[i],
					   &t->site_counts[ids[i]]))
			return -EBADMSG;
	}
	t->has_counts = 1;
	t->count_increments = ev->u.alloc_counts.increments;
	t->count_per_site = ev->u.alloc_counts.per_site;
	t->count_flags = ev->u.alloc_counts.flags;
	return 0;
}

/* Keeps one COUNT_CALLERS event's entries (1.4), as read: readers that
 * add them up check for overflow (the decoder bounds each by INT64_MAX). */
static int add_callers(struct trace *t, const struct htr_event *ev)
{
	uint32_t n = ev->u.count_callers.count;
	if (!n) /* an empty event: nothing to keep, and no array to copy from */
		return 0;
	if (n > UINT32_MAX - t->ncount_callers)
		return -EBADMSG;
	if (array_reserve((void **)&t->count_callers, &t->cap_count_callers, (uint64_t)t->ncount_callers + n,
			  sizeof(*t->count_callers)))
		return -ENOMEM;
	memcpy(t->count_callers + t->ncount_callers, ev->u.count_callers.callers, n * sizeof(*t->count_callers));
	t->ncount_callers += n;
	return 0;
}

static int add_site(struct trace *t, const struct htr_event *ev)
{
	uint32_t id = ev->u.site.id;
	int rc = grow_table(t, (void **)&t->sites, &t->nsites, id, sizeof(*t->sites));
	if (rc)
		return rc;
	t->nsymbols++;
	struct trace_site *s = &t->sites[id];
	free(s->frames);
	s->frames = malloc(ev->u.site.nframes * sizeof(*s->frames));
	if (!s->frames) {
		s->nframes = 0;
		return -ENOMEM;
	}
	memcpy(s->frames, ev->u.site.frames, ev->u.site.nframes * sizeof(*s->frames));
	s->nframes = ev->u.site.nframes;
	return 0;
}

uint32_t trace_thread_index(const struct trace *t, uint64_t thread_id)
{
	/* Threads are few (hundreds); a linear scan keeps this simple.  The
	 * reconstructor memoizes the last answer. */
	for (uint32_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].id == thread_id)
			return i;
	return UINT32_MAX;
}

static int add_thread(struct trace *t, const struct htr_event *ev, uint64_t *cap)
{
	uint32_t i = trace_thread_index(t, ev->u.thread.id);
	char *name = dupn(ev->u.thread.name, ev->u.thread.name_len);
	if (!name)
		return -ENOMEM;
	if (i != UINT32_MAX) {
		free(t->threads[i].name);
		t->threads[i].name = name;
		return 0;
	}
	if (array_reserve((void **)&t->threads, cap, (uint64_t)t->nthreads + 1, sizeof(*t->threads))) {
		free(name);
		return -ENOMEM;
	}
	t->threads[t->nthreads].id = ev->u.thread.id;
	t->threads[t->nthreads].name = name;
	t->nthreads++;
	return 0;
}

static int add_info(struct trace *t, const struct htr_event *ev, uint64_t *cap)
{
	if (array_reserve((void **)&t->info, cap, (uint64_t)t->ninfo + 1, sizeof(*t->info)))
		return -ENOMEM;
	struct trace_kv *kv = &t->info[t->ninfo];
	kv->key = dupn(ev->u.info.key, ev->u.info.key_len);
	kv->value = dupn(ev->u.info.val, ev->u.info.val_len);
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return -ENOMEM;
	}
	t->ninfo++;
	return 0;
}

/* Growth state for the open-time arrays. */
struct caps {
	uint64_t threads, info, gcs, frames;
};

static int symbols_add(struct trace *t, struct caps *caps, const struct htr_event *ev)
{
	switch (ev->type) {
	case HTR_EV_TYPE: return add_type(t, ev);
	case HTR_EV_METHOD: return add_method(t, ev);
	case HTR_EV_SITE: return add_site(t, ev);
	case HTR_EV_COUNT_SITE: return add_count_site(t, ev);
	case HTR_EV_ALLOC_COUNTS: return add_counts(t, ev);
	case HTR_EV_COUNT_CALLERS: return add_callers(t, ev);
	case HTR_EV_THREAD: return add_thread(t, ev, &caps->threads);
	case HTR_EV_INFO: return add_info(t, ev, &caps->info);
	default: return 0;
	}
}

static int push_gc(struct trace *t, struct caps *caps, const struct htr_gc_summary *g)
{
	if (array_reserve((void **)&t->gcs, &caps->gcs, (uint64_t)t->ngcs + 1, sizeof(*t->gcs)))
		return -ENOMEM;
	t->gcs[t->ngcs++] = *g;
	return 0;
}

static int push_frame(struct trace *t, struct caps *caps, const struct trace_frame *f)
{
	if (array_reserve((void **)&t->frames, &caps->frames, (uint64_t)t->nframes + 1,
			  sizeof(*t->frames)))
		return -ENOMEM;
	t->frames[t->nframes++] = *f;
	return 0;
}

uint32_t trace_count_gcs(const struct trace *t, uint32_t flags)
{
	uint32_t n = 0;
	for (uint32_t g = 0; g < t->ngcs; g++)
		n += (t->gcs[g].flags & flags) == flags;
	return n;
}

uint32_t trace_gc_index(const struct trace *t, uint32_t gc)
{
	uint32_t lo = 0, hi = t->ngcs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->gcs[mid].gc < gc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ngcs && t->gcs[lo].gc == gc ? lo : UINT32_MAX;
}

static void note_time(struct trace *t, uint64_t ns)
{
	if (ns < t->first_ns)
		t->first_ns = ns;
	if (ns > t->last_ns)
		t->last_ns = ns;
}

static int warn(struct trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int warn(struct trace *t, const char *fmt, ...)
{
	struct buf b;
	buf_init(&b);
	int rc = buf_printf(&b, "%s", t->warnings ? t->warnings : "");
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!rc)
		rc = buf_printf(&b, "%s\n", line);
	if (!rc)
		rc = buf_putc(&b, 0);
	if (rc) {
		buf_free(&b);
		return rc;
	}
	free(t->warnings);
	t->warnings = (char *)b.data;
	return 0;
}

/* State of a scan across frames. */
struct scan {
	struct htr_gc_summary pending;
	int in_gc;
	uint64_t allocs_since, bytes_since;
};

static void add_deaths(struct trace *t, uint32_t gc, uint32_t n, struct trace_frame *fr)
{
	t->total_deaths += n;
	if (gc < fr->min_death_gc)
		fr->min_death_gc = gc;
	uint32_t gi = trace_gc_index(t, gc);
	if (gi != UINT32_MAX)
		t->gcs[gi].deaths += n;
}

static int scan_event(struct trace *t, struct caps *caps, struct scan *s, const struct htr_event *ev,
		      struct trace_frame *fr, struct htr_err *err, uint64_t off)
{
	switch (ev->type) {
	case HTR_EV_ALLOC:
		if (ev->u.alloc.flags & HTR_ALLOC_WALKED) { /* no allocation: in one GC's graph only */
			note_time(t, ev->u.alloc.time_ns);
			return 0;
		}
		t->total_allocs++;
		t->total_alloc_bytes += ev->u.alloc.size;
		s->allocs_since++;
		s->bytes_since += ev->u.alloc.size;
		note_time(t, ev->u.alloc.time_ns);
		return 0;
	case HTR_EV_DEATHS:
		/* deaths of the GC in progress are counted when it ends */
		if (s->in_gc && ev->u.deaths.gc == s->pending.gc) {
			s->pending.deaths += ev->u.deaths.count;
			t->total_deaths += ev->u.deaths.count;
			if (ev->u.deaths.gc < fr->min_death_gc)
				fr->min_death_gc = ev->u.deaths.gc;
		} else {
			add_deaths(t, ev->u.deaths.gc, ev->u.deaths.count, fr);
		}
		return 0;
	case HTR_EV_GC_START:
		if (s->in_gc)
			return htr_errf(err, -EBADMSG, off, "GC %u starts before GC %u ended",
					ev->u.gc.gc, s->pending.gc);
		if (t->ngcs && ev->u.gc.gc <= t->gcs[t->ngcs - 1].gc)
			return htr_errf(err, -EBADMSG, off, "GC number %u follows GC %u", ev->u.gc.gc,
					t->gcs[t->ngcs - 1].gc);
		memset(&s->pending, 0, sizeof(s->pending));
		s->pending.gc = ev->u.gc.gc;
		s->pending.start_ns = ev->u.gc.time_ns;
		s->pending.used_before = ev->u.gc.used;
		s->pending.capacity = ev->u.gc.capacity;
		s->pending.flags = ev->u.gc.flags;
		{
			uint32_t n = ev->u.gc.cause_len;
			if (n >= sizeof(s->pending.cause))
				n = sizeof(s->pending.cause) - 1;
			memcpy(s->pending.cause, ev->u.gc.cause, n);
			s->pending.cause[n] = 0;
			n = ev->u.gc.collector_len;
			if (n >= sizeof(s->pending.collector))
				n = sizeof(s->pending.collector) - 1;
			memcpy(s->pending.collector, ev->u.gc.collector, n);
			s->pending.collector[n] = 0;
		}
		s->in_gc = 1;
		note_time(t, ev->u.gc.time_ns);
		return 0;
	case HTR_EV_GC_END: {
		if (!s->in_gc || ev->u.gc.gc != s->pending.gc)
			return htr_errf(err, -EBADMSG, off, "end of GC %u that never started", ev->u.gc.gc);
		struct htr_gc_summary g = s->pending;
		g.end_ns = ev->u.gc.time_ns;
		g.used_after = ev->u.gc.used;
		if (ev->u.gc.capacity != UINT64_MAX)
			g.capacity = ev->u.gc.capacity;
		g.flags |= ev->u.gc.flags;
		g.reachable_objects = ev->u.gc.reachable_objects; /* 0 unless recorded (1.2) */
		g.reachable_bytes = ev->u.gc.reachable_bytes;
		g.frame = t->nframes; /* the frame being scanned */
		g.allocs = s->allocs_since;
		g.alloc_bytes = s->bytes_since;
		s->allocs_since = s->bytes_since = 0;
		s->in_gc = 0;
		note_time(t, ev->u.gc.time_ns);
		if (fr->first_gc_index == UINT32_MAX)
			fr->first_gc_index = t->ngcs;
		fr->last_gc_index = t->ngcs;
		return push_gc(t, caps, &g);
	}
	case HTR_EV_ALLOC_SAMPLE:
		t->alloc_samples++;
		note_time(t, ev->u.alloc_sample.time_ns);
		return 0;
	case HTR_EV_OLD_SAMPLE:
		t->old_samples++;
		note_time(t, ev->u.old_sample.time_ns);
		return 0;
	case HTR_EV_FRAME_ENTRY:
	case HTR_EV_GC_SUMMARY:
	case HTR_EV_TOTALS:
	case HTR_EV_SAMPLE_TOTALS:
		return htr_errf(err, -EBADMSG, off, "footer event inside an event frame");
	default: {
		int rc = symbols_add(t, caps, ev);
		if (rc)
			return htr_errf(err, rc, off, rc == -ENOMEM ? "out of memory" :
					"symbol id out of range");
		return 0;
	}
	}
}

static int scan_frame(struct trace *t, struct caps *caps, struct scan *s,
		      const struct htr_frame_hdr *h, struct htr_err *err)
{
	struct htr_iter *it = NULL;
	struct trace_frame fr = { .offset = h->offset, .kind = h->kind, .graph_gc = HTR_NO_GC,
				  .comp_len = h->comp_len, .raw_len = h->raw_len,
				  .nevents = h->nevents, .first_gc_index = UINT32_MAX,
				  .last_gc_index = UINT32_MAX, .min_death_gc = UINT32_MAX };
	if (h->kind == HTR_FRAME_GRAPH) {
		/* Graphs are read only when their GC is rebuilt (or checked):
		 * the index needs nothing from inside them. */
		if (!s->in_gc)
			return htr_errf(err, -EBADMSG, h->offset, "graph frame outside a GC");
		fr.graph_gc = s->pending.gc;
		return push_frame(t, caps, &fr);
	}
	int rc = htr_iter_open(&it, t->file, h, err);
	if (rc)
		return rc;
	struct htr_event ev;
	while ((rc = htr_iter_next(it, &ev, err)) == 1) {
		rc = scan_event(t, caps, s, &ev, &fr, err, h->offset);
		if (rc)
			break;
	}
	htr_iter_close(it);
	if (rc)
		return rc;
	return push_frame(t, caps, &fr);
}

/* Scans frames from the first; stops at the footer or at a truncated tail. */
static int scan_all(struct trace *t, struct caps *caps, struct htr_err *err)
{
	struct scan s;
	memset(&s, 0, sizeof(s));
	uint64_t off = HTR_HEADER_SIZE;
	t->progress_total = t->file->size;
	struct progress *pr = progress_here();
	const char *base = strrchr(t->path, '/');
	progress_phase(pr, t->file->size, "indexing %s (bytes)", base ? base + 1 : t->path);
	while (off < t->file->size) {
		struct htr_frame_hdr h;
		struct htr_err ferr;
		int rc = htr_frame_header(t->file, off, &h, &ferr);
		if (rc == -ENODATA) {
			t->truncated = 1;
			t->truncated_at = off;
			warn(t, "truncated: the trace ends inside the frame at offset %llu (%s); "
			     "showing the %u complete frames before it",
			     (unsigned long long)off, ferr.msg, t->nframes);
			break;
		}
		if (rc) {
			*err = ferr;
			return rc;
		}
		if (h.kind == HTR_FRAME_FOOTER)
			break;
		rc = scan_frame(t, caps, &s, &h, err);
		if (rc)
			return rc;
		off += HTR_FRAME_HEADER_SIZE + h.comp_len;
		t->progress_done = off;
		progress_set(pr, off);
	}
	t->progress_done = t->progress_total;
	if (s.in_gc)
		warn(t, "GC %u started but its end is not in the trace", s.pending.gc);
	return 0;
}

/* Reads the footer; any damage in it makes the caller fall back to a scan. */
static int read_footer(struct trace *t, struct caps *caps, uint64_t off, struct htr_err *err)
{
	struct htr_frame_hdr h;
	int rc = htr_frame_header(t->file, off, &h, err);
	if (rc)
		return rc;
	if (h.kind != HTR_FRAME_FOOTER)
		return htr_errf(err, -EBADMSG, off, "trailer does not point at a footer frame");
	struct htr_iter *it = NULL;
	rc = htr_iter_open(&it, t->file, &h, err);
	if (rc)
		return rc;
	struct htr_event ev;
	int have_totals = 0;
	while ((rc = htr_iter_next(it, &ev, err)) == 1) {
		if (ev.type == HTR_EV_TOTALS) {
			t->total_allocs = ev.u.totals.allocs;
			t->total_alloc_bytes = ev.u.totals.alloc_bytes;
			t->total_deaths = ev.u.totals.deaths;
			if (ev.u.totals.first_ns <= ev.u.totals.last_ns) {
				note_time(t, ev.u.totals.first_ns);
				note_time(t, ev.u.totals.last_ns);
			}
			have_totals = 1;
			rc = 0;
		} else if (ev.type == HTR_EV_SAMPLE_TOTALS) {
			t->alloc_samples = ev.u.sample_totals.alloc_samples;
			t->old_samples = ev.u.sample_totals.old_samples;
			rc = 0;
		} else if (ev.type == HTR_EV_FRAME_ENTRY) {
			struct trace_frame fr = {
				.offset = ev.u.frame_entry.offset, .kind = ev.u.frame_entry.kind,
				.graph_gc = ev.u.frame_entry.graph_gc,
				.comp_len = ev.u.frame_entry.comp_len, .raw_len = ev.u.frame_entry.raw_len,
				.nevents = ev.u.frame_entry.nevents, .first_gc_index = UINT32_MAX,
				.last_gc_index = UINT32_MAX, .min_death_gc = ev.u.frame_entry.min_death_gc };
			if (fr.offset < HTR_HEADER_SIZE || fr.offset > off ||
			    fr.comp_len > off - fr.offset - HTR_FRAME_HEADER_SIZE) {
				rc = htr_errf(err, -EBADMSG, off, "footer lists a frame outside the file");
				break;
			}
			rc = push_frame(t, caps, &fr);
		} else if (ev.type == HTR_EV_GC_SUMMARY) {
			const struct htr_gc_summary *g = &ev.u.gc_summary;
			if (g->frame >= t->nframes || (t->ngcs && g->gc <= t->gcs[t->ngcs - 1].gc)) {
				rc = htr_errf(err, -EBADMSG, off, "footer GC summary %u out of order", g->gc);
				break;
			}
			struct trace_frame *fr = &t->frames[g->frame];
			if (fr->first_gc_index == UINT32_MAX)
				fr->first_gc_index = t->ngcs;
			fr->last_gc_index = t->ngcs;
			rc = push_gc(t, caps, g);
		} else {
			rc = symbols_add(t, caps, &ev);
			if (rc)
				htr_errf(err, rc, off, "footer symbol damaged");
		}
		if (rc)
			break;
	}
	htr_iter_close(it);
	if (rc)
		return rc;
	if (!have_totals)
		return htr_errf(err, -EBADMSG, off, "footer has no totals");
	for (uint32_t i = 0; i < t->ngcs; i++) {
		note_time(t, t->gcs[i].start_ns);
		note_time(t, t->gcs[i].end_ns);
	}
	return 0;
}

static void reset_index(struct trace *t, struct caps *caps)
{
	for (uint32_t i = 0; i < t->ntypes; i++)
		free_type(&t->types[i]);
	for (uint32_t i = 0; i < t->nmethods; i++) {
		free(t->methods[i].cls); free(t->methods[i].name);
		free(t->methods[i].sig); free(t->methods[i].file);
	}
	for (uint32_t i = 0; i < t->nsites; i++)
		free(t->sites[i].frames);
	for (uint32_t i = 0; i < t->nthreads; i++)
		free(t->threads[i].name);
	for (uint32_t i = 0; i < t->ninfo; i++) {
		free(t->info[i].key);
		free(t->info[i].value);
	}
	for (uint32_t i = 0; i < t->ncount_sites; i++)
		free(t->count_sites[i].type);
	free(t->count_sites); free(t->site_counts);
	free(t->count_callers);
	t->count_callers = NULL;
	t->ncount_callers = t->cap_count_callers = 0;
	t->count_sites = NULL; t->site_counts = NULL;
	t->ncount_sites = t->nsite_counts = 0;
	t->has_counts = 0;
	t->count_increments = t->count_per_site = 0;
	t->count_flags = 0;
	free(t->types); free(t->methods); free(t->sites); free(t->threads); free(t->info);
	free(t->gcs); free(t->frames);
	t->types = NULL; t->methods = NULL; t->sites = NULL; t->threads = NULL; t->info = NULL;
	t->gcs = NULL; t->frames = NULL;
	t->ntypes = t->nmethods = t->nsites = t->nthreads = t->ninfo = t->ngcs = t->nframes = 0;
	t->total_allocs = t->total_alloc_bytes = t->total_deaths = 0;
	t->first_ns = UINT64_MAX;
	t->last_ns = 0;
	memset(caps, 0, sizeof(*caps));
}

/* A trace imported from heap dumps is a whole file even when a dump was
 * cut (the importer keeps what is complete, model/hprof.h): its info says
 * so per dump (hprof.N.truncated, hprof.N.truncated_at, written by
 * model/hprof.c), and such a trace is as incomplete as one whose own tail
 * was cut.  The first cut dump gives truncated_at. */
static void note_cut_dumps(struct trace *t)
{
	char key[64];
	for (uint32_t i = 0; i < t->ninfo; i++) {
		const char *k = t->info[i].key;
		unsigned n;
		int end = 0;
		if (sscanf(k, "hprof.%u.truncated%n", &n, &end) != 1 || k[end] != '\0')
			continue;
		snprintf(key, sizeof key, "hprof.%u.file", n);
		const char *file = trace_info(t, key);
		snprintf(key, sizeof key, "hprof.%u.truncated_at", n);
		const char *at = trace_info(t, key);
		if (!t->truncated) {
			t->truncated = 1;
			t->truncated_dump = 1;
			t->truncated_at = at ? strtoull(at, NULL, 10) : 0;
		}
		if (file)
			warn(t, "truncated: the heap dump %s (GC %u) was cut: %s", file, n,
			     t->info[i].value);
		else
			warn(t, "truncated: the heap dump of GC %u was cut: %s", n, t->info[i].value);
	}
}

/* A JFR recording's trace (model/jfr_import.h): no objects, and a
 * recording read only in part says so as a cut dump does. */
static void note_cut_recording(struct trace *t)
{
	const char *fmt = trace_info(t, "source.format");
	if (!fmt || strcmp(fmt, "jfr") != 0)
		return;
	t->objects_unrecorded = 1;
	const char *w = trace_info(t, "jfr.warning"), *at = trace_info(t, "jfr.truncated_at");
	if (!w)
		return;
	if (!t->truncated) {
		t->truncated = 1;
		t->truncated_dump = 1;
		t->truncated_at = at ? strtoull(at, NULL, 10) : 0;
	}
	warn(t, "truncated: the recording was read in part: %s", w);
}

/* The agent's mode=sample: objects are samples (trace.h sample_interval).
 * A sampled trace without a usable interval cannot be weighted: say so
 * and refuse, rather than show samples as counts. */
static int note_sampled(struct trace *t, struct htr_err *err)
{
	const char *mode = trace_info(t, "agent.mode");
	if (!mode || strcmp(mode, "sample") != 0)
		return 0;
	const char *iv = trace_info(t, "sample.interval");
	char *end = NULL;
	unsigned long long v = iv ? strtoull(iv, &end, 10) : 0;
	if (!iv || end == iv || *end || v == 0 || v > (1ull << 40))
		return htr_errf(err, -EBADMSG, 0,
				"a sampled recording (agent.mode sample) without a valid sample.interval (%s)",
				iv ? iv : "missing");
	t->sample_interval = v;
	return 0;
}

/* The agent's agent.overhead keys ("GC CB_NS THREADS WALK_NS", one per
 * GC): into t->overhead.  Keys that do not parse or name no GC of the
 * trace are left out (a figure is only used where it is known). */
static int note_overhead(struct trace *t)
{
	for (uint32_t i = 0; i < t->ninfo; i++) {
		if (strcmp(t->info[i].key, "agent.overhead") != 0)
			continue;
		unsigned gc, threads;
		unsigned long long cb, walk;
		char extra;
		if (sscanf(t->info[i].value, "%u %llu %u %llu %c", &gc, &cb, &threads, &walk, &extra) != 4)
			continue;
		uint32_t g = trace_gc_index(t, gc);
		if (g == UINT32_MAX)
			continue;
		if (!t->overhead && !(t->overhead = calloc(t->ngcs, sizeof *t->overhead)))
			return -ENOMEM;
		t->overhead[g] = (struct trace_overhead){ cb, walk, threads, 1 };
	}
	return 0;
}

double trace_sample_weight(const struct trace *t, uint32_t flags, uint64_t size)
{
	if (!t->sample_interval || (flags & HTR_ALLOC_PREEXISTING) || size == 0)
		return 1.0;
	double p = -expm1(-(double)size / (double)t->sample_interval);
	return p > 0 ? 1.0 / p : 1.0;
}

/* gc/ is empty without a complete GC: say why where the user looks
 * (status, trace/info's warnings, heapfs check, the mount's stderr). */
static void note_no_gc(struct trace *t)
{
	if (t->ngcs)
		return;
	if (t->truncated)
		warn(t, "no complete GC: the trace was cut at offset %" PRIu64 " before its first GC "
		     "ended, so there is no heap state to show", t->truncated_at);
	else
		warn(t, "no complete GC: the trace records no garbage collection, so there is no heap state to show");
}

static int trace_open_htr(struct trace **out, const char *path, struct htr_err *err)
{
	int rc;
	struct caps caps;
	memset(&caps, 0, sizeof(caps));
	struct trace *t = calloc(1, sizeof(*t));
	if (!t)
		return htr_errf(err, -ENOMEM, 0, "out of memory");
	t->first_ns = UINT64_MAX;
	t->path = strdup(path);
	if (!t->path) {
		rc = htr_errf(err, -ENOMEM, 0, "out of memory");
		goto fail;
	}
	rc = htr_file_open(&t->file, path, err);
	if (rc)
		goto fail;
	uint64_t footer;
	if (htr_trailer(t->file, &footer) == 0) {
		struct htr_err ferr;
		if (read_footer(t, &caps, footer, &ferr) == 0) {
			t->had_footer = 1;
			t->progress_done = t->progress_total = t->file->size;
		} else {
			reset_index(t, &caps);
			warn(t, "footer unusable (offset %llu: %s); index rebuilt by scanning",
			     (unsigned long long)ferr.offset, ferr.msg);
		}
	}
	if (!t->had_footer) {
		rc = scan_all(t, &caps, err);
		if (rc)
			goto fail;
		if (!t->truncated)
			warn(t, "no footer: index rebuilt by scanning all frames");
	}
	note_cut_dumps(t);
	note_cut_recording(t);
	note_no_gc(t);
	if ((rc = note_sampled(t, err)))
		goto fail;
	if ((rc = note_overhead(t))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	const char *dumps = trace_info(t, "hprof.dumps");
	t->identity_unknown = dumps && strtoull(dumps, NULL, 10) >= 2;
	if (!t->warnings && (t->warnings = strdup("")) == NULL) {
		rc = htr_errf(err, -ENOMEM, 0, "out of memory");
		goto fail;
	}
	if (t->first_ns == UINT64_MAX)
		t->first_ns = t->last_ns = 0;
	*out = t;
	return 0;
fail:
	trace_close(t);
	return rc;
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	struct caps caps;
	reset_index(t, &caps);
	htr_file_close(t->file);
	heap_state_free(t->prebuilt);
	free(t->overhead);
	free(t->path);
	free(t->warnings);
	free(t);
}

int trace_check_reachable(const struct trace *t, uint32_t gc_index, uint64_t objects, uint64_t bytes,
			  char *msg, size_t len)
{
	if (gc_index >= t->ngcs || !(t->gcs[gc_index].flags & HTR_GC_HAS_REACHABLE))
		return 0;
	const struct htr_gc_summary *g = &t->gcs[gc_index];
	if (g->reachable_objects == objects && g->reachable_bytes == bytes)
		return 0;
	snprintf(msg, len, "GC %" PRIu32 ": recorded reachable %" PRIu64 " objects, %" PRIu64
		 " bytes; the rebuilt heap has %" PRIu64 " objects, %" PRIu64 " bytes reachable",
		 g->gc, g->reachable_objects, g->reachable_bytes, objects, bytes);
	return -EBADMSG;
}

const char *trace_info(const struct trace *t, const char *key)
{
	for (uint32_t i = t->ninfo; i-- > 0;)
		if (strcmp(t->info[i].key, key) == 0)
			return t->info[i].value;
	return NULL;
}

const char *trace_type_name(const struct trace *t, uint32_t type, char *scratch, size_t len)
{
	if (type < t->ntypes && t->types[type].name)
		return t->types[type].name;
	snprintf(scratch, len, "<unknown type %u>", type);
	return scratch;
}

/* A heap dump (told apart by its magic bytes) is imported into a temporary
 * trace first, which is unlinked as soon as it is open; the same pass over
 * the dump builds the heap state of its GC (t->prebuilt), which the state
 * cache holds for the trace's life (never evicted), so the tree does not
 * decode the temporary trace for it (heap_state_build() still can: heapfs
 * check, the reachable series of several GCs). */
/* A JFR recording (told apart by its magic bytes) is imported into a
 * temporary trace the same way (model/jfr_import.h). */
static int trace_open_jfr(struct trace **out, const char *path, struct htr_err *err)
{
	char tmp[4096];
	int rc = jfr_import_temp(path, tmp, sizeof tmp, err);
	if (rc)
		return rc;
	rc = trace_open_htr(out, tmp, err);
	unlink(tmp);
	if (rc)
		return rc;
	char *p = strdup(path); /* show the recording, not the temporary file */
	if (p) {
		free((*out)->path);
		(*out)->path = p;
	}
	return 0;
}

static int trace_open_any(struct trace **out, const char *path, const struct trace_open_opts *opts,
			  struct htr_err *err)
{
	if (jfr_file_is_recording(path))
		return trace_open_jfr(out, path, err);
	if (!hprof_is_dump(path))
		return trace_open_htr(out, path, err);
	char tmp[4096];
	struct hprof_import_opts ho;
	struct hprof_direct *direct = NULL;
	hprof_import_opts_init(&ho);
	ho.progress = opts ? opts->progress : NULL;
	ho.threads = opts ? opts->threads : 0;
	ho.layout = opts && opts->hprof_layout == HPROF_LAYOUT_HOTSPOT ? HPROF_LAYOUT_HOTSPOT
								      : HPROF_LAYOUT_VISUALVM;
	int rc = hprof_import_temp_direct(path, &ho, tmp, sizeof tmp, &direct, err);
	if (rc)
		return rc;
	rc = trace_open_htr(out, tmp, err);
	unlink(tmp);
	if (rc) {
		hprof_direct_free(direct);
		return rc;
	}
	char *p = strdup(path);   /* show the dump, not the temporary file */
	if (p) {
		free((*out)->path);
		(*out)->path = p;
	}
	if ((*out)->ngcs != 1) {
		hprof_direct_free(direct);
	} else if (direct && (rc = hprof_direct_finish(direct, *out, &(*out)->prebuilt, err))) {
		trace_close(*out); /* (finish consumed direct either way) */
		*out = NULL;
		return rc;
	}
	return 0;
}

int trace_open(struct trace **out, const char *path, const struct trace_open_opts *opts,
	       struct htr_err *err)
{
	int rc = trace_open_any(out, path, opts, err);
	if (rc)
		return rc;
	struct stat st;
	(*out)->source_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : (*out)->file->size;
	return 0;
}

int trace_each_event(const struct trace *t, int (*fn)(void *ctx, const struct htr_event *ev), void *ctx,
		     struct htr_err *err)
{
	for (uint32_t fi = 0; fi < t->nframes; fi++) {
		const struct trace_frame *fr = &t->frames[fi];
		if (fr->kind != HTR_FRAME_EVENTS)
			continue;
		struct htr_frame_hdr h;
		struct htr_iter *it = NULL;
		int rc = htr_frame_header(t->file, fr->offset, &h, err);
		if (!rc)
			rc = htr_iter_open(&it, t->file, &h, err);
		struct htr_event ev;
		while (!rc && (rc = htr_iter_next(it, &ev, err)) == 1)
			if ((rc = fn(ctx, &ev)))
				break;
		htr_iter_close(it);
		if (rc < 0)
			return rc;
		if (rc > 0) /* fn asked to stop */
			return 0;
	}
	return 0;
}

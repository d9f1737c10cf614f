/* recorder.c - the agent thread: the only writer of the trace.
 *
 * Loop: wait (raw monitor) for a GC to finish, or 100 ms; then
 *   - for each finished GC n, in order: ask the management beans what kind
 *     of GC it was; either walk the heap (graph GCs: every application
 *     thread's buffer mutex held, so that every tagged object's record is
 *     drained before the walk) or make the JVM post pending deaths; then
 *     write  allocations before n | GC_START n | allocations after n's end
 *     up to the walk (graph GCs only) | deaths so far | roots + graph |
 *     GC_END n  — one complete frame;
 *   - otherwise drain the buffers and write what belongs to the open epoch,
 *     so compression overlaps the application's run.
 * Each record carries the number of GCs started when it was made (its
 * epoch): a record of epoch e belongs after GC e's end and before GC e+1's
 * start.
 */
#include "agent/recorder_internal.h"

#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note_error(struct recorder *rec, int rc)
{
	if (rc && !rec->failed_rc) {
		rec->failed_rc = rc;
		fprintf(stderr, "heapfs-agent: writing %s failed: %s; recording stops\n", rec->opts->out,
			strerror(-rc));
	}
}

static int mark(uint8_t **bits, uint32_t *cap, uint32_t id)
{
	if (id >= *cap) {
		uint32_t c = *cap ? *cap : 1024;
		while (c <= id)
			c *= 2;
		uint8_t *p = realloc(*bits, c);
		if (!p)
			return -ENOMEM;
		memset(p + *cap, 0, c - *cap);
		*bits = p;
		*cap = c;
	}
	if ((*bits)[id])
		return 1;
	(*bits)[id] = 1;
	return 0;
}

int recorder_write_rec(struct recorder *rec, const struct arec *r)
{
	if (rec->failed_rc)
		return rec->failed_rc;
	uint32_t type = sym_record_type(rec->sym, r->type);
	if (type == HTR_NO_TYPE)
		return 0;
	int rc = mark(&rec->type_done, &rec->type_done_cap, type);
	if (rc == 0)
		rc = sym_emit_type(rec->sym, rec->w, type, r->size);
	if (rc >= 0 && r->site != HTR_NO_SITE) {
		rc = mark(&rec->site_done, &rec->site_done_cap, r->site);
		if (rc == 0)
			rc = sym_emit_site(rec->sym, rec->w, r->site);
	}
	if (rc < 0)
		return rc;
	if (!(r->flags & HTR_ALLOC_PREEXISTING) && r->time_ns >= rec->used_base_ns)
		rec->epoch_bytes[r->epoch % GC_RING] += r->size;
	if (r->flags & HTR_ALLOC_WALKED) {
		/* (met by a walk: counted by the walks' statistics) */
	} else if (r->flags & HTR_ALLOC_PREEXISTING) {
		rec->n_written_pre++;
	} else {
		rec->n_written_allocs++;
		rec->n_written_alloc_bytes += r->size;
	}
	struct htr_alloc a = { .id = r->id, .type = type, .site = r->site, .thread = r->thread,
			       .size = r->size, .array_length = r->length, .time_ns = r->time_ns,
			       .flags = r->flags };
	return htr_write_alloc(rec->w, &a);
}

/* ---- draining -------------------------------------------------------------- */

static void steal(struct recorder *rec, struct tstate *ts)
{
	if (!ts->announced && ts->thread_id) {
		note_error(rec, htr_write_thread(rec->w, ts->thread_id, ts->name));
		ts->announced = 1;
	}
	if (!ts->recs.head)
		return;
	if (rec->stolen.tail)
		rec->stolen.tail->next = ts->recs.head;
	else
		rec->stolen.head = ts->recs.head;
	rec->stolen.tail = ts->recs.tail;
	ts->recs.head = ts->recs.tail = NULL;
}

/* Moves every thread's records to `stolen`; frees the states of ended
 * threads.  locked: the caller holds every mutex of the list from head. */
static void drain_all(struct recorder *rec, struct tstate *head, int locked)
{
	for (struct tstate *ts = head; ts; ts = ts->next) {
		if (!locked)
			pthread_mutex_lock(&ts->mu);
		steal(rec, ts);
		if (!locked)
			pthread_mutex_unlock(&ts->mu);
	}
	if (locked)
		return;
	pthread_mutex_lock(&rec->threads_mu);
	for (struct tstate **pp = &rec->threads; *pp;) {
		struct tstate *ts = *pp;
		int gone = 0;
		if (ts != &rec->init_ts && !ts->is_agent) {
			pthread_mutex_lock(&ts->mu);
			gone = ts->ended && !ts->recs.head;
			pthread_mutex_unlock(&ts->mu);
		}
		if (gone) {
			*pp = ts->next;
			pthread_mutex_destroy(&ts->mu);
			free(ts->frames);
			free(ts->sc_key);
			free(ts);
		} else {
			pp = &ts->next;
		}
	}
	pthread_mutex_unlock(&rec->threads_mu);
}

static struct tstate *threads_head(struct recorder *rec)
{
	pthread_mutex_lock(&rec->threads_mu);
	struct tstate *h = rec->threads;
	pthread_mutex_unlock(&rec->threads_mu);
	return h;
}

static void hold(struct recorder *rec, const struct arec *r)
{
	if (rec->held.n == rec->held.cap) {
		size_t c = rec->held.cap ? rec->held.cap * 2 : 4096;
		struct arec *p = realloc(rec->held.r, c * sizeof(*p));
		if (!p) {
			note_error(rec, -ENOMEM);
			return;
		}
		rec->held.r = p;
		rec->held.cap = c;
	}
	rec->held.r[rec->held.n++] = *r;
}

/* Writes held and stolen records of epoch <= limit, holds the others. */
static void write_records(struct recorder *rec, uint32_t limit)
{
	size_t keep = 0;
	for (size_t i = 0; i < rec->held.n; i++) {
		if (rec->held.r[i].epoch <= limit)
			note_error(rec, recorder_write_rec(rec, &rec->held.r[i]));
		else
			rec->held.r[keep++] = rec->held.r[i];
	}
	rec->held.n = keep;
	for (struct chunk *c = rec->stolen.head; c; c = c->next)
		for (uint32_t i = 0; i < c->n; i++) {
			if (c->r[i].epoch <= limit)
				note_error(rec, recorder_write_rec(rec, &c->r[i]));
			else
				hold(rec, &c->r[i]);
		}
	chunk_put_list(rec, rec->stolen.head);
	rec->stolen.head = rec->stolen.tail = NULL;
}

/* Writes deaths attributed to GCs <= limit (runs of one GC per event). */
static void write_deaths(struct recorder *rec, uint32_t limit)
{
	pthread_mutex_lock(&rec->deaths_mu);
	struct death *d = rec->deaths;
	size_t n = rec->ndeaths;
	rec->deaths = NULL;
	rec->ndeaths = rec->deaths_cap = 0;
	pthread_mutex_unlock(&rec->deaths_mu);
	if (n) {
		if (rec->ndheld + n > rec->dheld_cap) {
			size_t c = (rec->ndheld + n) * 2;
			struct death *p = realloc(rec->dheld, c * sizeof(*p));
			if (!p) {
				note_error(rec, -ENOMEM);
				free(d);
				return;
			}
			rec->dheld = p;
			rec->dheld_cap = c;
		}
		memcpy(rec->dheld + rec->ndheld, d, n * sizeof(*d));
		rec->ndheld += n;
		free(d);
	}
	uint64_t ids[HTR_MAX_CHUNK];
	size_t keep = 0, i = 0;
	while (i < rec->ndheld) {
		uint32_t gc = rec->dheld[i].gc;
		if (gc > limit) {
			rec->dheld[keep++] = rec->dheld[i++];
			continue;
		}
		uint32_t k = 0;
		while (i < rec->ndheld && rec->dheld[i].gc == gc && k < HTR_MAX_CHUNK)
			ids[k++] = rec->dheld[i++].id;
		note_error(rec, htr_write_deaths(rec->w, gc, k, ids));
		rec->n_deaths += k;
	}
	rec->ndheld = keep;
}

/* ---- one GC ------------------------------------------------------------------ */

static struct tstate *lock_all(struct recorder *rec)
{
	pthread_mutex_lock(&rec->threads_mu);
	struct tstate *h = rec->threads;
	for (struct tstate *ts = h; ts; ts = ts->next)
		pthread_mutex_lock(&ts->mu);
	pthread_mutex_unlock(&rec->threads_mu);
	return h;
}

static void unlock_all(struct tstate *h)
{
	for (struct tstate *ts = h; ts; ts = ts->next)
		pthread_mutex_unlock(&ts->mu);
}

static uint32_t started(struct recorder *rec)
{
	return __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE);
}

/* The heap walk of GC n; when GC n+1 got in the way (the graph would not be
 * GC n's: *dropped = 1), NULL if it did before the walk, else the walk with
 * its graph dropped (walk_drop_graph: only the objects it tagged are
 * written); NULL when the walk failed (*dropped = 0). */
/* Trace info agent.overhead "GC CB_NS THREADS WALK_NS": the agent's time
 * up to GC n's start (struct gc_times), from which readers tell the
 * program's own time from the recording's (docs/trace-format.md). */
static void write_overhead(struct recorder *rec, uint32_t n)
{
	const struct gc_times *g = &rec->gcs[n % GC_RING];
	char v[96];
	snprintf(v, sizeof v, "%" PRIu32 " %" PRIu64 " %" PRIu32 " %" PRIu64, n, g->alloc_cb_ns,
		 g->alloc_threads, g->walk_ns);
	note_error(rec, htr_write_info(rec->w, "agent.overhead", v));
}

static struct walk *graph_of(struct recorder *rec, JNIEnv *jni, uint32_t n, int *dropped)
{
	struct walk *wk = NULL;
	*dropped = started(rec) != n;
	if (*dropped)
		return NULL; /* GC n+1 began already: no locks taken, nothing drained */
	struct tstate *h = lock_all(rec);
	*dropped = started(rec) != n;
	if (!*dropped) {
		__atomic_fetch_add(&rec->walk_seq, 1, __ATOMIC_ACQ_REL);
		uint64_t t = agent_now_ns();
		if (walk_collect(rec, rec->jvmti, jni, &wk))
			wk = NULL;
		uint64_t d = agent_now_ns() - t;
		rec->walk_ns += d;
		__atomic_fetch_add(&rec->walk_total_ns, d, __ATOMIC_RELAXED);
		if (wk && started(rec) != n) {
			/* no graph, but the objects the walk tagged are written
			 * (walk_write): untold, every later graph would hold them
			 * without a type */
			walk_drop_graph(wk);
			*dropped = 1;
		}
	}
	drain_all(rec, h, 1);
	unlock_all(h);
	return wk;
}

/* Kind, cause and heap use of GC n: from the counters sampled in the GC
 * callbacks, or asked from the management beans now (query: the first GC
 * of a batch; the beans only know the latest GC). */
static void gc_info_of(struct recorder *rec, JNIEnv *jni, uint32_t n, int query, struct gc_info *gi)
{
	if (rec->have_perfdata) {
		const struct gc_times *g = &rec->gcs[n % GC_RING];
		rec_gc_kind(rec, n, &gi->full, gi->cause, sizeof(gi->cause));
		gi->used_before = g->before.used;
		gi->used_after = g->after.used;
		gi->capacity = g->after.capacity;
	} else if (query) {
		mgmt_query(&rec->beans, jni, gi);
	}
}

/* The JVM's use before a GC can lag: G1 counts its eden's use per region
 * handed out (1 MiB or more), and Parallel's and Serial's lag too, so a GC
 * that follows little allocation reports the previous GC's use after
 * (agent/README, "GCs").  Where the collector frees nothing between
 * pauses, the use after GC n-1 plus the bytes recorded as allocated since
 * is also a lower bound of the true use: take the larger.  Called once
 * every record of epoch n-1 was written; mode=full only. */
static void raise_used_before(struct recorder *rec, uint32_t n, struct gc_info *gi)
{
	/* mode=count records no allocations, mode=sample a sample of them
	 * (their bytes are no floor): both keep the counters' figure */
	if (rec->opts->mode != AGENT_MODE_FULL || !rec->have_perfdata || !rec->perfdata.frees_in_pauses_only ||
	    rec->prev_used == UINT64_MAX || gi->used_before == UINT64_MAX)
		return;
	uint64_t floor = rec->prev_used + rec->epoch_bytes[(n - 1) % GC_RING];
	if (floor > gi->used_before) {
		gi->used_before = floor;
		rec->n_used_raised++;
	}
}

/* After GC n: its use after is the next GC's base (process_gc takes the
 * GCs in order); the ring slot of epoch n+1 starts from zero (no record of
 * that epoch is written before GC n+1 is processed). */
static void note_used_after(struct recorder *rec, uint32_t n, const struct gc_info *gi)
{
	rec->prev_used = gi->used_after;
	rec->epoch_bytes[(n + 1) % GC_RING] = 0;
}

static void process_gc(struct recorder *rec, JNIEnv *jni, uint32_t n, int query)
{
	struct gc_info gi;
	memset(&gi, 0, sizeof(gi));
	gi.used_before = gi.used_after = gi.capacity = UINT64_MAX;
	snprintf(gi.cause, sizeof(gi.cause), "GC pause");
	/* graph=full needs the GC's kind before the walk; otherwise the walk
	 * comes first, as close to the GC as the agent can get */
	int full_only = rec->opts->graph == AGENT_GRAPH_FULL;
	if (full_only)
		gc_info_of(rec, jni, n, query, &gi);
	if (rec->sampled && !rec->start_checked) {
		/* mode=sample's first GC: the fillers among the objects found at
		 * start die; with start=first-gc the rest leave the tag map */
		rec->start_checked = 1;
		if (walk_check_start(rec, rec->jvmti, jni, n))
			fprintf(stderr, "heapfs-agent: GC %u: checking the objects found at start failed: their "
					"tags stay, fillers among them too\n", n);
	}
	struct walk *wk = NULL;
	int dropped = 0; /* (a walk that failed is not dropped: the trace says only no graph) */
	if (agent_opts_wants_graph(rec->opts, n, gi.full))
		wk = graph_of(rec, jni, n, &dropped);
	if (rec->alloc_gate)
		gcwait_walked(rec, rec->jvmti, n);
	if (!full_only)
		gc_info_of(rec, jni, n, query, &gi);
	uint32_t flags = (gi.full ? HTR_GC_FULL : 0) | (rec->merged_gc == n ? HTR_GC_DEATHS_MERGED : 0);
	int flushed = 1;
	if (!wk) {
		uint64_t t = agent_now_ns();
		if (rec->opts->deaths)
			flushed = walk_flush_deaths(rec, rec->jvmti, jni, n) == 0;
		rec->flush_ns += agent_now_ns() - t;
		drain_all(rec, threads_head(rec), 0);
	}
	/* deaths of n were all posted before GC n+1 started, or they may be
	 * mixed into n+1's (also when the walk that posts them failed: they
	 * come whenever the JVM posts them) */
	if (started(rec) != n || !flushed)
		rec->merged_gc = n + 1;
	uint64_t t = agent_now_ns();
	write_records(rec, n - 1);
	raise_used_before(rec, n, &gi);
	note_used_after(rec, n, &gi);
	struct htr_gc_event ev = { .gc = n, .time_ns = rec->gcs[n % GC_RING].start_ns,
				   .used = gi.used_before, .capacity = gi.capacity, .flags = flags,
				   .cause = gi.cause };
	if (!rec->cnt)
		write_overhead(rec, n);
	note_error(rec, htr_write_gc_start(rec->w, &ev));
	/* mode=full: the allocations since the GC's end that the walk met
	 * belong to its graph.  mode=sample: the samples stay after GC_END,
	 * as without a walk, so that the estimates do not change; the walk
	 * shows the ones it met under an alias (walk_alias) */
	if (wk && !rec->sampled)
		write_records(rec, n);
	else if (wk)
		for (size_t i = 0; i < rec->held.n; i++)
			note_error(rec, walk_alias(wk, &rec->held.r[i]));
	write_deaths(rec, n);
	if (wk) {
		uint64_t nobj = 0;
		note_error(rec, walk_write(wk, rec->jvmti, jni, n, &nobj));
		if (rec->sampled && walk_untag(wk, rec->jvmti))
			fprintf(stderr, "heapfs-agent: GC %u: clearing the walk's tags failed: their objects "
					"stay tagged\n", n);
		walk_free(wk);
		if (!dropped) {
			rec->n_walks++;
			rec->n_walk_objects += nobj;
			flags |= HTR_GC_HAS_GRAPH;
		}
	}
	ev.time_ns = rec->gcs[n % GC_RING].end_ns;
	ev.used = gi.used_after;
	ev.flags = flags | (dropped ? HTR_GC_GRAPH_DROPPED : 0);
	ev.cause = NULL;
	note_error(rec, htr_write_gc_end(rec->w, &ev));
	write_records(rec, n);
	if (rec->cnt)
		count_write(rec->cnt, jni, rec->w, n, 0);
	rec->write_ns += agent_now_ns() - t;
}

static void tick(struct recorder *rec)
{
	uint64_t t = agent_now_ns();
	drain_all(rec, threads_head(rec), 0);
	write_records(rec, rec->processed);
	write_deaths(rec, rec->processed);
	rec->write_ns += agent_now_ns() - t;
}

/* ---- the thread ---------------------------------------------------------------- */

static void write_property(struct recorder *rec, jvmtiEnv *jvmti, const char *key, const char *prop)
{
	char *v = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, prop, &v) == JVMTI_ERROR_NONE && v) {
		note_error(rec, htr_write_info(rec->w, key, v));
		(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	}
}

static void write_info(struct recorder *rec, jvmtiEnv *jvmti)
{
	char buf[64];
	note_error(rec, htr_write_info(rec->w, "recorder", "heapfs-agent (JVMTI)"));
	write_property(rec, jvmti, "vm.name", "java.vm.name");
	write_property(rec, jvmti, "vm.version", "java.vm.version");
	write_property(rec, jvmti, "java.version", "java.version");
	write_property(rec, jvmti, "command", "sun.java.command");
	note_error(rec, htr_write_info(rec->w, "agent.options", rec->opts_string));
	snprintf(buf, sizeof(buf), "%u", rec->opts->depth);
	note_error(rec, htr_write_info(rec->w, "agent.depth", buf));
	/* mode=sample: the reader weights each allocation (flags 0) of s bytes
	 * by 1 / (1 - exp(-s / sample.interval)) (docs/trace-format.md) */
	static const char *const modes[] = { [AGENT_MODE_FULL] = "full", [AGENT_MODE_COUNT] = "count",
					     [AGENT_MODE_SAMPLE] = "sample" };
	note_error(rec, htr_write_info(rec->w, "agent.mode", modes[rec->opts->mode]));
	if (rec->opts->mode == AGENT_MODE_SAMPLE) {
		snprintf(buf, sizeof(buf), "%u", rec->opts->interval);
		note_error(rec, htr_write_info(rec->w, "sample.interval", buf));
		/* start=first-gc: the objects found at start are followed to the
		 * first GC only (walk_check_start); start=none: only the class
		 * mirrors among them are recorded */
		if (rec->opts->start != AGENT_START_ALL)
			note_error(rec, htr_write_info(rec->w, "sample.start_deaths",
						       agent_start_name(rec->opts->start)));
	}
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	note_error(rec, htr_write_info(rec->w, "pid", buf));
}

/* mode=sample's statistics: samples (as recorded by the callbacks and as
 * written: the two agree unless writing failed), objects found at VMInit,
 * deaths. */
static void print_sample_stats(struct recorder *rec)
{
	uint32_t nt = 0, nm = 0, ns = 0;
	sym_stats(rec->sym, &nt, &nm, &ns);
	pthread_mutex_lock(&rec->deaths_mu);
	uint64_t dropped = rec->n_deaths_dropped;
	pthread_mutex_unlock(&rec->deaths_mu);
	if (rec->n_walks || rec->opts->graph != AGENT_GRAPH_NONE)
		fprintf(stderr,
			"heapfs-agent: %s: mode=sample: %llu heap walks (%llu objects, %.1f ms; tags cleared "
			"%llu, %.1f ms; %llu samples after a GC's end shown by alias; %llu deaths of walked "
			"objects dropped)\n",
			rec->opts->out, (unsigned long long)rec->n_walks, (unsigned long long)rec->n_walk_objects,
			rec->walk_ns / 1e6, (unsigned long long)rec->n_untagged, rec->untag_ns / 1e6,
			(unsigned long long)rec->n_walk_aliases, (unsigned long long)rec->n_walk_deaths_dropped);
	fprintf(stderr,
		"heapfs-agent: %s: mode=sample interval %u: %llu samples (%llu written, %llu bytes), "
		"%llu objects found at start (at the first GC: %llu fillers, tags cleared %llu, %.1f ms), "
		"%llu deaths "
		"(%llu of unwritten class mirrors dropped), %u GCs, "
		"death flushes %.1f ms (%llu without a walk, finding %llu deaths; %llu walks), writing %.1f ms, "
		"%llu bytes, %u types, %u methods, %u sites\n",
		rec->opts->out, rec->opts->interval,
		(unsigned long long)__atomic_load_n(&rec->n_sample_callbacks, __ATOMIC_RELAXED),
		(unsigned long long)rec->n_written_allocs, (unsigned long long)rec->n_written_alloc_bytes,
		(unsigned long long)rec->n_written_pre, (unsigned long long)rec->n_start_fillers,
		(unsigned long long)rec->n_start_untagged,
		rec->start_check_ns / 1e6, (unsigned long long)rec->n_deaths,
		(unsigned long long)dropped, rec->processed, rec->flush_ns / 1e6,
		(unsigned long long)rec->n_flush_refs, (unsigned long long)rec->n_deaths_found,
		(unsigned long long)(rec->processed - rec->n_flush_refs),
		rec->write_ns / 1e6, (unsigned long long)htr_writer_bytes(rec->w), nt, nm, ns);
}

static void print_stats(struct recorder *rec)
{
	if (rec->opts->mode == AGENT_MODE_SAMPLE) {
		print_sample_stats(rec);
		return;
	}
	uint32_t nt = 0, nm = 0, ns = 0;
	sym_stats(rec->sym, &nt, &nm, &ns);
	uint64_t allocs = __atomic_load_n(&rec->next_tag, __ATOMIC_RELAXED) - CLASS_TAG_MAX - 1;
	uint64_t bytes = htr_writer_bytes(rec->w);
	fprintf(stderr,
		"heapfs-agent: %s: %llu object ids (%llu via VMObjectAlloc, %llu duplicates skipped), "
		"%llu deaths, %u GCs, %llu heap walks (%llu objects, %.1f ms), death flushes %.1f ms, "
		"writing %.1f ms, %llu bytes (%.1f per object), %u types, %u methods, %u sites, "
		"%llu site-cache misses\n",
		rec->opts->out, (unsigned long long)allocs, (unsigned long long)rec->n_vm_allocs,
		(unsigned long long)rec->n_dup, (unsigned long long)rec->n_deaths, rec->processed,
		(unsigned long long)rec->n_walks, (unsigned long long)rec->n_walk_objects, rec->walk_ns / 1e6,
		rec->flush_ns / 1e6, rec->write_ns / 1e6, (unsigned long long)bytes,
		allocs ? (double)bytes / (double)allocs : 0.0, nt, nm, ns,
		(unsigned long long)rec->n_site_miss);
	if (rec->n_mirror_walks_failed)
		fprintf(stderr, "heapfs-agent: %llu walks of the class mirrors' fields failed (those graphs lack "
				"what only a mirror holds)\n", (unsigned long long)rec->n_mirror_walks_failed);
	if (agent_opts_gc_wait(rec->opts)) {
		uint64_t waits = 0, alloc_waits = 0, timeouts = 0;
		double ms = 0, alloc_ms = 0;
		gcwait_stats(rec, &waits, &ms, &alloc_waits, &alloc_ms, &timeouts);
		fprintf(stderr, "heapfs-agent: GC calls waited for the agent %llu times, %.1f ms in all; "
				"allocations waited for walks %llu times, %.1f ms in all; %llu timed out\n",
			(unsigned long long)waits, ms, (unsigned long long)alloc_waits, alloc_ms,
			(unsigned long long)timeouts);
	}
}

static void finish(struct recorder *rec, jvmtiEnv *jvmti)
{
	drain_all(rec, threads_head(rec), 0);
	write_records(rec, UINT32_MAX);
	write_deaths(rec, UINT32_MAX);
	if (rec->opts->mode == AGENT_MODE_FULL && rec->have_perfdata) {
		/* how many GCs' use before is the floor, not the JVM's figure */
		char buf[32];
		snprintf(buf, sizeof(buf), "%u", rec->n_used_raised);
		note_error(rec, htr_write_info(rec->w, "gc.used_before_raised", buf));
	}
	if (rec->opts->verbose)
		print_stats(rec);
	int rc = htr_writer_close(rec->w);
	if (rc && !rec->failed_rc)
		fprintf(stderr, "heapfs-agent: closing %s failed: %s\n", rec->opts->out, strerror(-rc));
	rec->w = NULL;
	(*jvmti)->RawMonitorEnter(jvmti, rec->mon);
	rec->done = 1;
	(*jvmti)->RawMonitorNotifyAll(jvmti, rec->mon);
	(*jvmti)->RawMonitorExit(jvmti, rec->mon);
}

void JNICALL recorder_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	struct recorder *rec = arg;
	gcwait_agent_thread();
	ts_current(rec, jvmti, jni, NULL);
	write_info(rec, jvmti);
	jlong wait_ms = POLL_MAX_MS;
	for (;;) {
		/* one wait: until a GC ends, stop, or the timeout (a notify
		 * without news, or a spurious wake-up, makes an early tick) */
		(*jvmti)->RawMonitorEnter(jvmti, rec->mon);
		if (!rec->stop && rec->processed == __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE))
			(*jvmti)->RawMonitorWait(jvmti, rec->mon, wait_ms);
		int stop = rec->stop;
		(*jvmti)->RawMonitorExit(jvmti, rec->mon);
		if ((*jni)->PushLocalFrame(jni, 256) == 0) {
			uint32_t fin = __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE);
			if (rec->processed < fin) {
				for (int first = 1; rec->processed < fin; first = 0) {
					process_gc(rec, jni, rec->processed + 1, first);
					rec->processed++;
					gcwait_processed(rec, jvmti, rec->processed);
				}
			} else {
				tick(rec);
			}
			if (rec->cnt)
				wait_ms = count_poll(rec->cnt, jvmti, jni);
			(*jni)->PopLocalFrame(jni, NULL);
		}
		if (stop)
			break;
	}
	if (rec->cnt && (*jni)->PushLocalFrame(jni, 16) == 0) {
		count_write(rec->cnt, jni, rec->w, rec->processed, 1);
		(*jni)->PopLocalFrame(jni, NULL);
	}
	finish(rec, jvmti);
}

/* ---- start and stop (recorder.h) ----------------------------------------------- */

int recorder_new(struct recorder **out, const struct agent_opts *opts, const char *opts_string,
		 struct symbols *sym, struct counting *cnt, enum ablate ablate)
{
	struct recorder *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	rec->opts = opts;
	rec->opts_string = opts_string;
	rec->sym = sym;
	rec->cnt = cnt;
	rec->ablate = ablate;
	rec->sampled = opts->mode == AGENT_MODE_SAMPLE;
	if (opts->stacks_asgct)
		rec->asgct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	rec->next_tag = CLASS_TAG_MAX + 1;
	pthread_mutex_init(&rec->threads_mu, NULL);
	pthread_mutex_init(&rec->deaths_mu, NULL);
	pthread_mutex_init(&rec->free_mu, NULL);
	pthread_mutex_init(&rec->late_mu, NULL);
	pthread_mutex_init(&rec->init_ts.mu, NULL);
	snprintf(rec->init_ts.name, sizeof(rec->init_ts.name), "(before recording)");
	rec->init_ts.next = NULL;
	rec->threads = &rec->init_ts;
	*out = rec;
	return 0;
}

int recorder_open(struct recorder *rec)
{
	struct htr_writer_opts wo = { .zstd_level = rec->opts->zstd_level, .no_sync = 1 };
	return htr_writer_open(&rec->w, rec->opts->out, &wo);
}

void recorder_capabilities(const struct recorder *rec, jvmtiCapabilities *c)
{
	c->can_tag_objects = 1;
	c->can_generate_sampled_object_alloc_events = 1;
	c->can_generate_vm_object_alloc_events = rec->opts->mode != AGENT_MODE_SAMPLE; /* not used there */
	c->can_generate_object_free_events = 1;
	c->can_generate_garbage_collection_events = 1;
	c->can_get_line_numbers = 1;
	c->can_get_source_file_name = 1;
	if (agent_opts_gc_wait(rec->opts))
		gcwait_capabilities(c);
}

int recorder_onload(struct recorder *rec, jvmtiEnv *jvmti)
{
	rec->jvmti = jvmti;
	return (*jvmti)->CreateRawMonitor(jvmti, "heapfs-agent", &rec->mon) == JVMTI_ERROR_NONE ? 0 : -1;
}

int recorder_gcwait_onload(struct recorder *rec, jvmtiEnv *jvmti)
{
	return gcwait_onload(rec, jvmti);
}

/* mode=sample: whether walk_flush_deaths may find a GC's deaths without a
 * heap walk (recorder_internal.h, cheap_flush): when the only objects
 * tagged are the samples, the class mirrors and the Thread objects of the
 * threads that ran before VMInit, which live as long as the JVM
 * (start=none: no objects found at start; no graph=: no walk tags), only
 * a pause frees them, and the class-unloading counters tell a mirror's
 * death.  HEAPFS_AGENT_FLUSH=walk keeps the walk (for comparisons).  Set
 * before recording starts, so before the callbacks read it. */
static void setup_cheap_flush(struct recorder *rec)
{
	const char *v = getenv("HEAPFS_AGENT_FLUSH");
	int on = rec->sampled && rec->opts->start == AGENT_START_NONE && rec->opts->graph == AGENT_GRAPH_NONE &&
		 rec->have_perfdata && rec->perfdata.frees_in_pauses_only &&
		 (rec->unloaded_seen = perfdata_unloaded(&rec->perfdata)) >= 0 && !(v && !strcmp(v, "walk"));
	__atomic_store_n(&rec->cheap_flush, on, __ATOMIC_RELEASE);
}

static jthread new_agent_thread(JNIEnv *jni)
{
	jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
	if (!k)
		return NULL;
	jmethodID init = (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V");
	jstring name = (*jni)->NewStringUTF(jni, "heapfs-agent");
	if (!init || !name)
		return NULL;
	jthread t = (*jni)->NewObject(jni, k, init, name);
	if (!t)
		return NULL;
	jmethodID daemon = (*jni)->GetMethodID(jni, k, "setDaemon", "(Z)V");
	if (daemon)
		(*jni)->CallVoidMethod(jni, t, daemon, JNI_TRUE);
	return t;
}

int recorder_vm_init(struct recorder *rec, JNIEnv *jni)
{
	jthread t = new_agent_thread(jni);
	if (!t || !(rec->agent_thread = (*jni)->NewGlobalRef(jni, t))) {
		fprintf(stderr, "heapfs-agent: cannot create the agent thread; not recording\n");
		return -1;
	}
	/* GC kind and heap use: the JVM's performance counters if it keeps
	 * them in a file, else the management beans */
	rec->have_perfdata = perfdata_open_self(&rec->perfdata) == 0;
	if (!rec->have_perfdata) /* (says so on stderr if the beans are unavailable) */
		mgmt_init(&rec->beans, jni, rec->opts->mode == AGENT_MODE_COUNT);
	setup_cheap_flush(rec);
	return 0;
}

void recorder_start_recording(struct recorder *rec)
{
	__atomic_store_n(&rec->recording, 1, __ATOMIC_RELEASE);
}

void recorder_forced_gc_done(struct recorder *rec)
{
	/* allocations recorded before its end are in its use after */
	rec->used_base_ns = agent_now_ns();
	rec->prev_used = UINT64_MAX;
	if (rec->have_perfdata) {
		struct perfdata_sample s;
		perfdata_sample(&rec->perfdata, &s);
		rec->prev_used = s.used;
	}
}

void recorder_tag_preexisting(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* the walk counter makes allocation callbacks racing with the
	 * iteration check whether it tagged their object */
	__atomic_fetch_add(&rec->walk_seq, 1, __ATOMIC_ACQ_REL);
	int rc = 0;
	/* start=none (mode=sample only; other modes have all): no iteration
	 * (~23,400 objects in a started JDK 17, ~20 ms, and their tags in
	 * HotSpot's tag map, rehashed and swept after every GC); the class
	 * mirrors are recorded as their classes get type ids (record_mirror) */
	if (rec->opts->start != AGENT_START_NONE) {
		pthread_mutex_lock(&rec->init_ts.mu);
		rc = walk_tag_preexisting(rec, jvmti, jni, &rec->init_ts);
		pthread_mutex_unlock(&rec->init_ts.mu);
	}
	if (rc) /* the trace lacks (some of) the objects older than recording */
		fprintf(stderr, "heapfs-agent: tagging the objects that exist at start failed: %s\n",
			strerror(-rc));
	/* mode=sample: every object older than this is tagged and written; an
	 * untagged one from here on was made where the sampler could pick it
	 * (events.c, record_mirror and thread_tag) */
	__atomic_store_n(&rec->preexisting_done, 1, __ATOMIC_RELEASE);
}

int recorder_start_thread(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	ts_current(rec, jvmti, jni, thread);
	jlong at = 0;
	(*jvmti)->GetTag(jvmti, rec->agent_thread, &at);
	rec->agent_thread_tag = (uint64_t)at;
	jvmtiError e = (*jvmti)->RunAgentThread(jvmti, rec->agent_thread, recorder_main, rec,
						JVMTI_THREAD_MAX_PRIORITY);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: cannot start the agent thread (error %d)\n", (int)e);
		return -1;
	}
	rec->agent_started = 1;
	if (agent_opts_gc_wait(rec->opts)) {
		/* allocations wait for walks only where the agent thread runs no
		 * Java code before a walk (gcwait.c) */
		rec->alloc_gate = rec->have_perfdata;
		gcwait_start(rec);
	}
	return 0;
}

void recorder_stop_recording(struct recorder *rec)
{
	__atomic_store_n(&rec->recording, 0, __ATOMIC_RELEASE);
}

void recorder_finish(struct recorder *rec, jvmtiEnv *jvmti)
{
	if (!rec->agent_started) {
		/* setup failed before the agent thread ran: a valid, empty trace */
		if (rec->w)
			htr_writer_close(rec->w);
		rec->w = NULL;
		return;
	}
	if ((*jvmti)->RawMonitorEnter(jvmti, rec->mon) != JVMTI_ERROR_NONE)
		return;
	rec->stop = 1;
	(*jvmti)->RawMonitorNotifyAll(jvmti, rec->mon);
	while (!rec->done)
		(*jvmti)->RawMonitorWait(jvmti, rec->mon, 1000);
	(*jvmti)->RawMonitorExit(jvmti, rec->mon);
	gcwait_stop(rec, jvmti);
}

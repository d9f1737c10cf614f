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
#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct held {                    /* records of a later epoch, oldest first */
	struct arec *r;
	size_t n, cap;
};

static struct rlist stolen;      /* drained, not yet written */
static struct held held;
static struct death *dheld;      /* deaths of GCs not yet written */
static size_t ndheld, dheld_cap;
static uint8_t *type_done, *site_done; /* symbols already written */
static uint32_t type_done_cap, site_done_cap;
static uint32_t processed;       /* last GC written */
static uint32_t merged_gc;       /* GC whose deaths may include earlier GCs' */
static int failed_rc;

static void note_error(int rc)
{
	if (rc && !failed_rc) {
		failed_rc = rc;
		fprintf(stderr, "heapfs-agent: writing %s failed: %s; recording stops\n", A.opts.out,
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

int recorder_write_rec(const struct arec *r)
{
	if (failed_rc)
		return failed_rc;
	uint32_t type = sym_record_type(A.sym, r->type);
	if (type == HTR_NO_TYPE)
		return 0;
	int rc = mark(&type_done, &type_done_cap, type);
	if (rc == 0)
		rc = sym_emit_type(A.sym, A.w, type, r->size);
	if (rc >= 0 && r->site != HTR_NO_SITE) {
		rc = mark(&site_done, &site_done_cap, r->site);
		if (rc == 0)
			rc = sym_emit_site(A.sym, A.w, r->site);
	}
	if (rc < 0)
		return rc;
	if (!(r->flags & HTR_ALLOC_PREEXISTING) && r->time_ns >= A.used_base_ns)
		A.epoch_bytes[r->epoch % GC_RING] += r->size;
	struct htr_alloc a = { .id = r->id, .type = type, .site = r->site, .thread = r->thread,
			       .size = r->size, .array_length = r->length, .time_ns = r->time_ns,
			       .flags = r->flags };
	return htr_write_alloc(A.w, &a);
}

/* ---- draining -------------------------------------------------------------- */

static void steal(struct tstate *ts)
{
	if (!ts->announced && ts->thread_id) {
		note_error(htr_write_thread(A.w, ts->thread_id, ts->name));
		ts->announced = 1;
	}
	if (!ts->recs.head)
		return;
	if (stolen.tail)
		stolen.tail->next = ts->recs.head;
	else
		stolen.head = ts->recs.head;
	stolen.tail = ts->recs.tail;
	ts->recs.head = ts->recs.tail = NULL;
}

/* Moves every thread's records to `stolen`; frees the states of ended
 * threads.  locked: the caller holds every mutex of the list from head. */
static void drain_all(struct tstate *head, int locked)
{
	for (struct tstate *ts = head; ts; ts = ts->next) {
		if (!locked)
			pthread_mutex_lock(&ts->mu);
		steal(ts);
		if (!locked)
			pthread_mutex_unlock(&ts->mu);
	}
	if (locked)
		return;
	pthread_mutex_lock(&A.threads_mu);
	for (struct tstate **pp = &A.threads; *pp;) {
		struct tstate *ts = *pp;
		int gone = 0;
		if (ts != &A.init_ts && !ts->is_agent) {
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
	pthread_mutex_unlock(&A.threads_mu);
}

static struct tstate *threads_head(void)
{
	pthread_mutex_lock(&A.threads_mu);
	struct tstate *h = A.threads;
	pthread_mutex_unlock(&A.threads_mu);
	return h;
}

static void hold(const struct arec *r)
{
	if (held.n == held.cap) {
		size_t c = held.cap ? held.cap * 2 : 4096;
		struct arec *p = realloc(held.r, c * sizeof(*p));
		if (!p) {
			note_error(-ENOMEM);
			return;
		}
		held.r = p;
		held.cap = c;
	}
	held.r[held.n++] = *r;
}

/* Writes held and stolen records of epoch <= limit, holds the others. */
static void write_records(uint32_t limit)
{
	size_t keep = 0;
	for (size_t i = 0; i < held.n; i++) {
		if (held.r[i].epoch <= limit)
			note_error(recorder_write_rec(&held.r[i]));
		else
			held.r[keep++] = held.r[i];
	}
	held.n = keep;
	for (struct chunk *c = stolen.head; c; c = c->next)
		for (uint32_t i = 0; i < c->n; i++) {
			if (c->r[i].epoch <= limit)
				note_error(recorder_write_rec(&c->r[i]));
			else
				hold(&c->r[i]);
		}
	chunk_put_list(stolen.head);
	stolen.head = stolen.tail = NULL;
}

/* Writes deaths attributed to GCs <= limit (runs of one GC per event). */
static void write_deaths(uint32_t limit)
{
	pthread_mutex_lock(&A.deaths_mu);
	struct death *d = A.deaths;
	size_t n = A.ndeaths;
	A.deaths = NULL;
	A.ndeaths = A.deaths_cap = 0;
	pthread_mutex_unlock(&A.deaths_mu);
	if (n) {
		if (ndheld + n > dheld_cap) {
			size_t c = (ndheld + n) * 2;
			struct death *p = realloc(dheld, c * sizeof(*p));
			if (!p) {
				note_error(-ENOMEM);
				free(d);
				return;
			}
			dheld = p;
			dheld_cap = c;
		}
		memcpy(dheld + ndheld, d, n * sizeof(*d));
		ndheld += n;
		free(d);
	}
	uint64_t ids[HTR_MAX_CHUNK];
	size_t keep = 0, i = 0;
	while (i < ndheld) {
		uint32_t gc = dheld[i].gc;
		if (gc > limit) {
			dheld[keep++] = dheld[i++];
			continue;
		}
		uint32_t k = 0;
		while (i < ndheld && dheld[i].gc == gc && k < HTR_MAX_CHUNK)
			ids[k++] = dheld[i++].id;
		note_error(htr_write_deaths(A.w, gc, k, ids));
		A.n_deaths += k;
	}
	ndheld = keep;
}

/* ---- one GC ------------------------------------------------------------------ */

static struct tstate *lock_all(void)
{
	pthread_mutex_lock(&A.threads_mu);
	struct tstate *h = A.threads;
	for (struct tstate *ts = h; ts; ts = ts->next)
		pthread_mutex_lock(&ts->mu);
	pthread_mutex_unlock(&A.threads_mu);
	return h;
}

static void unlock_all(struct tstate *h)
{
	for (struct tstate *ts = h; ts; ts = ts->next)
		pthread_mutex_unlock(&ts->mu);
}

static uint32_t started(void)
{
	return __atomic_load_n(&A.gc_started, __ATOMIC_ACQUIRE);
}

/* The heap walk of GC n, or NULL when GC n+1 got in the way (the graph
 * would not be GC n's: *dropped = 1) or the walk failed (*dropped = 0). */
static struct walk *graph_of(uint32_t n, int *dropped)
{
	struct walk *wk = NULL;
	*dropped = started() != n;
	if (*dropped)
		return NULL; /* GC n+1 began already: no locks taken, nothing drained */
	struct tstate *h = lock_all();
	*dropped = started() != n;
	if (!*dropped) {
		__atomic_fetch_add(&A.walk_seq, 1, __ATOMIC_ACQ_REL);
		uint64_t t = agent_now_ns();
		if (walk_collect(A.jvmti, &wk))
			wk = NULL;
		A.walk_ns += agent_now_ns() - t;
		if (wk && started() != n) {
			walk_free(wk);
			wk = NULL;
			*dropped = 1;
		}
	}
	drain_all(h, 1);
	unlock_all(h);
	return wk;
}

/* Kind, cause and heap use of GC n: from the counters sampled in the GC
 * callbacks, or asked from the management beans now (query: the first GC
 * of a batch; the beans only know the latest GC). */
static void gc_info_of(JNIEnv *jni, uint32_t n, int query, struct gc_info *gi)
{
	if (A.have_perfdata) {
		const struct gc_times *g = &A.gcs[n % GC_RING];
		agent_gc_kind(n, &gi->full, gi->cause, sizeof(gi->cause));
		gi->used_before = g->before.used;
		gi->used_after = g->after.used;
		gi->capacity = g->after.capacity;
	} else if (query) {
		mgmt_query(jni, gi);
	}
}

/* The JVM's use before a GC can lag: G1 counts its eden's use per region
 * handed out (1 MiB or more), and Parallel's and Serial's lag too, so a GC
 * that follows little allocation reports the previous GC's use after
 * (agent/README, "GCs").  Where the collector frees nothing between
 * pauses, the use after GC n-1 plus the bytes recorded as allocated since
 * is also a lower bound of the true use: take the larger.  Called once
 * every record of epoch n-1 was written; not in mode=count (no records). */
static void raise_used_before(uint32_t n, struct gc_info *gi)
{
	if (A.opts.mode == AGENT_MODE_COUNT || !A.have_perfdata || !A.perfdata.frees_in_pauses_only ||
	    A.prev_used == UINT64_MAX || gi->used_before == UINT64_MAX)
		return;
	uint64_t floor = A.prev_used + A.epoch_bytes[(n - 1) % GC_RING];
	if (floor > gi->used_before) {
		gi->used_before = floor;
		A.n_used_raised++;
	}
}

/* After GC n: its use after is the next GC's base (process_gc takes the
 * GCs in order); the ring slot of epoch n+1 starts from zero (no record of
 * that epoch is written before GC n+1 is processed). */
static void note_used_after(uint32_t n, const struct gc_info *gi)
{
	A.prev_used = gi->used_after;
	A.epoch_bytes[(n + 1) % GC_RING] = 0;
}

static void process_gc(JNIEnv *jni, uint32_t n, int query)
{
	struct gc_info gi;
	memset(&gi, 0, sizeof(gi));
	gi.used_before = gi.used_after = gi.capacity = UINT64_MAX;
	snprintf(gi.cause, sizeof(gi.cause), "GC pause");
	/* graph=full needs the GC's kind before the walk; otherwise the walk
	 * comes first, as close to the GC as the agent can get */
	int full_only = A.opts.graph == AGENT_GRAPH_FULL;
	if (full_only)
		gc_info_of(jni, n, query, &gi);
	struct walk *wk = NULL;
	int dropped = 0; /* (a walk that failed is not dropped: the trace says only no graph) */
	if (agent_opts_wants_graph(&A.opts, n, gi.full))
		wk = graph_of(n, &dropped);
	if (A.alloc_gate)
		gcwait_walked(A.jvmti, n);
	if (!full_only)
		gc_info_of(jni, n, query, &gi);
	uint32_t flags = (gi.full ? HTR_GC_FULL : 0) | (merged_gc == n ? HTR_GC_DEATHS_MERGED : 0);
	if (!wk) {
		uint64_t t = agent_now_ns();
		if (A.opts.deaths)
			walk_flush_deaths(A.jvmti);
		A.flush_ns += agent_now_ns() - t;
		drain_all(threads_head(), 0);
	}
	/* deaths of n were all posted before GC n+1 started, or they may be
	 * mixed into n+1's */
	if (started() != n)
		merged_gc = n + 1;
	uint64_t t = agent_now_ns();
	write_records(n - 1);
	raise_used_before(n, &gi);
	note_used_after(n, &gi);
	struct htr_gc_event ev = { .gc = n, .time_ns = A.gcs[n % GC_RING].start_ns,
				   .used = gi.used_before, .capacity = gi.capacity, .flags = flags,
				   .cause = gi.cause };
	note_error(htr_write_gc_start(A.w, &ev));
	if (wk)
		write_records(n);
	write_deaths(n);
	if (wk) {
		uint64_t nobj = 0;
		note_error(walk_write(A.jvmti, jni, wk, A.w, n, &nobj));
		A.n_walks++;
		A.n_walk_objects += nobj;
		walk_free(wk);
		flags |= HTR_GC_HAS_GRAPH;
	}
	ev.time_ns = A.gcs[n % GC_RING].end_ns;
	ev.used = gi.used_after;
	ev.flags = flags | (dropped ? HTR_GC_GRAPH_DROPPED : 0);
	ev.cause = NULL;
	note_error(htr_write_gc_end(A.w, &ev));
	write_records(n);
	if (A.cnt)
		count_write(A.cnt, jni, A.w, n, 0);
	A.write_ns += agent_now_ns() - t;
}

static void tick(void)
{
	uint64_t t = agent_now_ns();
	drain_all(threads_head(), 0);
	write_records(processed);
	write_deaths(processed);
	A.write_ns += agent_now_ns() - t;
}

/* ---- the thread ---------------------------------------------------------------- */

static void write_property(jvmtiEnv *jvmti, const char *key, const char *prop)
{
	char *v = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, prop, &v) == JVMTI_ERROR_NONE && v) {
		note_error(htr_write_info(A.w, key, v));
		(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	}
}

static void write_info(jvmtiEnv *jvmti)
{
	char buf[64];
	note_error(htr_write_info(A.w, "recorder", "heapfs-agent (JVMTI)"));
	write_property(jvmti, "vm.name", "java.vm.name");
	write_property(jvmti, "vm.version", "java.vm.version");
	write_property(jvmti, "java.version", "java.version");
	write_property(jvmti, "command", "sun.java.command");
	note_error(htr_write_info(A.w, "agent.options", A.opts_string));
	snprintf(buf, sizeof(buf), "%u", A.opts.depth);
	note_error(htr_write_info(A.w, "agent.depth", buf));
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	note_error(htr_write_info(A.w, "pid", buf));
}

static void print_stats(void)
{
	uint32_t nt = 0, nm = 0, ns = 0;
	sym_stats(A.sym, &nt, &nm, &ns);
	uint64_t allocs = __atomic_load_n(&A.next_tag, __ATOMIC_RELAXED) - CLASS_TAG_MAX - 1;
	uint64_t bytes = htr_writer_bytes(A.w);
	fprintf(stderr,
		"heapfs-agent: %s: %llu object ids (%llu via VMObjectAlloc, %llu duplicates skipped), "
		"%llu deaths, %u GCs, %llu heap walks (%llu objects, %.1f ms), death flushes %.1f ms, "
		"writing %.1f ms, %llu bytes (%.1f per object), %u types, %u methods, %u sites, "
		"%llu site-cache misses\n",
		A.opts.out, (unsigned long long)allocs, (unsigned long long)A.n_vm_allocs,
		(unsigned long long)A.n_dup, (unsigned long long)A.n_deaths, processed,
		(unsigned long long)A.n_walks, (unsigned long long)A.n_walk_objects, A.walk_ns / 1e6,
		A.flush_ns / 1e6, A.write_ns / 1e6, (unsigned long long)bytes,
		allocs ? (double)bytes / (double)allocs : 0.0, nt, nm, ns,
		(unsigned long long)A.n_site_miss);
	if (agent_opts_gc_wait(&A.opts)) {
		uint64_t waits = 0, alloc_waits = 0, timeouts = 0;
		double ms = 0, alloc_ms = 0;
		gcwait_stats(&waits, &ms, &alloc_waits, &alloc_ms, &timeouts);
		fprintf(stderr, "heapfs-agent: GC calls waited for the agent %llu times, %.1f ms in all; "
				"allocations waited for walks %llu times, %.1f ms in all; %llu timed out\n",
			(unsigned long long)waits, ms, (unsigned long long)alloc_waits, alloc_ms,
			(unsigned long long)timeouts);
	}
}

static void finish(jvmtiEnv *jvmti)
{
	drain_all(threads_head(), 0);
	write_records(UINT32_MAX);
	write_deaths(UINT32_MAX);
	if (A.opts.mode != AGENT_MODE_COUNT && A.have_perfdata) {
		/* how many GCs' use before is the floor, not the JVM's figure */
		char buf[32];
		snprintf(buf, sizeof(buf), "%u", A.n_used_raised);
		note_error(htr_write_info(A.w, "gc.used_before_raised", buf));
	}
	if (A.opts.verbose)
		print_stats();
	int rc = htr_writer_close(A.w);
	if (rc && !failed_rc)
		fprintf(stderr, "heapfs-agent: closing %s failed: %s\n", A.opts.out, strerror(-rc));
	A.w = NULL;
	(*jvmti)->RawMonitorEnter(jvmti, A.mon);
	A.done = 1;
	(*jvmti)->RawMonitorNotifyAll(jvmti, A.mon);
	(*jvmti)->RawMonitorExit(jvmti, A.mon);
}

void JNICALL recorder_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)arg;
	gcwait_agent_thread();
	ts_current(jvmti, jni, NULL);
	write_info(jvmti);
	jlong wait_ms = POLL_MAX_MS;
	for (;;) {
		/* one wait: until a GC ends, stop, or the timeout (a notify
		 * without news, or a spurious wake-up, makes an early tick) */
		(*jvmti)->RawMonitorEnter(jvmti, A.mon);
		if (!A.stop && processed == __atomic_load_n(&A.gc_finished, __ATOMIC_ACQUIRE))
			(*jvmti)->RawMonitorWait(jvmti, A.mon, wait_ms);
		int stop = A.stop;
		(*jvmti)->RawMonitorExit(jvmti, A.mon);
		if ((*jni)->PushLocalFrame(jni, 256) == 0) {
			uint32_t fin = __atomic_load_n(&A.gc_finished, __ATOMIC_ACQUIRE);
			if (processed < fin) {
				for (int first = 1; processed < fin; first = 0) {
					process_gc(jni, processed + 1, first);
					processed++;
					gcwait_processed(jvmti, processed);
				}
			} else {
				tick();
			}
			if (A.cnt)
				wait_ms = count_poll(A.cnt, jvmti, jni);
			(*jni)->PopLocalFrame(jni, NULL);
		}
		if (stop)
			break;
	}
	if (A.cnt && (*jni)->PushLocalFrame(jni, 16) == 0) {
		count_write(A.cnt, jni, A.w, processed, 1);
		(*jni)->PopLocalFrame(jni, NULL);
	}
	finish(jvmti);
}

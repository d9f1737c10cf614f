/* events.c - the recorder's side of the JVMTI events: every allocation
 * into the allocating thread's own record buffer, deaths into the death
 * queue, GC start and end times, classes and threads as they appear.
 * agent.c's callbacks call in here with the struct recorder; the agent
 * thread (recorder.c) drains what these functions leave.  Threads and
 * locks: recorder_internal.h.
 */
#include "agent/recorder_internal.h"

#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calling thread's buffer: plain TLS is cheaper than
 * GetThreadLocalStorage on every allocation.  There is one recorder, so
 * one buffer per thread. */
static __thread struct tstate *tls_ts __attribute__((tls_model("initial-exec")));

/* ---- record buffers ------------------------------------------------------ */

struct chunk *chunk_get(struct recorder *rec)
{
	pthread_mutex_lock(&rec->free_mu);
	struct chunk *c = rec->free_chunks;
	if (c)
		rec->free_chunks = c->next;
	pthread_mutex_unlock(&rec->free_mu);
	if (!c)
		c = malloc(sizeof(*c));
	if (c) {
		c->next = NULL;
		c->n = 0;
	}
	return c;
}

void chunk_put_list(struct recorder *rec, struct chunk *head)
{
	while (head) {
		struct chunk *next = head->next;
		pthread_mutex_lock(&rec->free_mu);
		head->next = rec->free_chunks;
		rec->free_chunks = head;
		pthread_mutex_unlock(&rec->free_mu);
		head = next;
	}
}

int ts_append(struct recorder *rec, struct tstate *ts, const struct arec *r)
{
	struct chunk *c = ts->recs.tail;
	if (!c || c->n == CHUNK_RECS) {
		struct chunk *n = chunk_get(rec);
		if (!n)
			return -ENOMEM;
		if (c)
			c->next = n;
		else
			ts->recs.head = n;
		ts->recs.tail = c = n;
	}
	c->r[c->n++] = *r;
	return 0;
}

/* mode=sample: the mirror tagged `tag` (a class tag: type id + 1) is not
 * written; recorder_object_free drops its death.  Under deaths_mu (a
 * leaf: the callers hold a tstate mutex and the symbols' mutex). */
static void mirror_unwritten(struct recorder *rec, uint64_t tag)
{
	if (!tag || tag > CLASS_TAG_MAX)
		return;
	uint32_t i = (uint32_t)(tag - 1);
	pthread_mutex_lock(&rec->deaths_mu);
	if (i >= rec->mirror_unwritten_cap) {
		uint32_t c = rec->mirror_unwritten_cap ? rec->mirror_unwritten_cap : 4096;
		while (c <= i)
			c *= 2;
		uint8_t *p = realloc(rec->mirror_unwritten, c);
		if (!p) {
			/* its death, if the class is ever unloaded, names an
			 * object the trace never had: the reader counts it and
			 * finds nothing to remove */
			pthread_mutex_unlock(&rec->deaths_mu);
			return;
		}
		memset(p + rec->mirror_unwritten_cap, 0, c - rec->mirror_unwritten_cap);
		rec->mirror_unwritten = p;
		rec->mirror_unwritten_cap = c;
	}
	rec->mirror_unwritten[i] = 1;
	pthread_mutex_unlock(&rec->deaths_mu);
}

struct mirror_to {
	struct recorder *rec;
	struct tstate *ts;
};

/* A class mirror tagged by the symbol tables: recorded as an object that
 * appeared without an allocation, in the buffer of ctx (a struct
 * mirror_to). */
static void record_mirror(void *ctx, uint64_t id, uint64_t size, uint32_t type)
{
	const struct mirror_to *to = ctx;
	if (to->rec->sampled && __atomic_load_n(&to->rec->preexisting_done, __ATOMIC_ACQUIRE)) {
		/* mode=sample: a mirror made after VMInit was allocated where
		 * the sampler could pick it (it did not: the mirror would carry
		 * that sample's id, symbols.c register_one); written here it
		 * would count once more than its samples say.  Its tag stays
		 * (the class's type id), so its death is dropped. */
		mirror_unwritten(to->rec, id);
		return;
	}
	struct arec r = { .id = id, .size = size, .time_ns = agent_now_ns(), .type = type,
			  .site = HTR_NO_SITE, .length = -1,
			  .epoch = __atomic_load_n(&to->rec->gc_started, __ATOMIC_ACQUIRE),
			  .flags = HTR_ALLOC_PREEXISTING };
	ts_append(to->rec, to->ts, &r);
}

uint32_t ts_type_of_class(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts)
{
	struct mirror_to to = { rec, ts };
	return sym_type_of_class(rec->sym, jvmti, jni, klass, ts ? record_mirror : NULL, &to);
}

static struct tstate *ts_new(struct recorder *rec)
{
	struct tstate *ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	pthread_mutex_init(&ts->mu, NULL);
	uint32_t d = rec->opts->depth ? rec->opts->depth : 1;
	ts->frames = calloc(d, sizeof(jvmtiFrameInfo));
	ts->sc_key = calloc((size_t)SITE_CACHE * d, sizeof(jvmtiFrameInfo));
	if (!ts->frames || !ts->sc_key) {
		free(ts->frames);
		free(ts->sc_key);
		free(ts);
		return NULL;
	}
	ts->last_walk_seq = __atomic_load_n(&rec->walk_seq, __ATOMIC_ACQUIRE);
	return ts;
}

static void ts_register(struct recorder *rec, struct tstate *ts)
{
	pthread_mutex_lock(&rec->threads_mu);
	ts->next = rec->threads;
	rec->threads = ts;
	pthread_mutex_unlock(&rec->threads_mu);
}

/* Trace id of a thread: the tag of its Thread object, tagging (and
 * recording as appeared-without-allocation) a Thread object not seen yet. */
static uint64_t thread_tag(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, struct tstate *ts)
{
	jlong tag = 0;
	if ((*jvmti)->GetTag(jvmti, thread, &tag) != JVMTI_ERROR_NONE)
		return 0;
	if (tag)
		return (uint64_t)tag;
	if (rec->sampled && __atomic_load_n(&rec->preexisting_done, __ATOMIC_ACQUIRE))
		/* mode=sample: a Thread object made after VMInit that the sampler
		 * did not pick (see record_mirror): an id for the thread, neither
		 * tagged (no death to drop) nor written */
		return rec_new_tag(rec);
	jclass k = (*jni)->GetObjectClass(jni, thread);
	jlong size = 0;
	(*jvmti)->GetObjectSize(jvmti, thread, &size);
	uint64_t id = rec_new_tag(rec);
	if ((*jvmti)->SetTag(jvmti, thread, (jlong)id) != JVMTI_ERROR_NONE)
		return 0;
	struct arec r = { .id = id, .size = (uint64_t)size, .time_ns = agent_now_ns(),
			  .type = k ? ts_type_of_class(rec, jvmti, jni, k, ts) : HTR_NO_TYPE,
			  .site = HTR_NO_SITE, .length = -1,
			  .epoch = __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE),
			  .flags = HTR_ALLOC_PREEXISTING };
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (r.type != HTR_NO_TYPE)
		ts_append(rec, ts, &r);
	return id;
}

struct tstate *ts_current(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (tls_ts)
		return tls_ts;
	struct tstate *ts = ts_new(rec);
	if (!ts)
		return NULL;
	jthread self = thread;
	if (!self && (*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE)
		self = NULL;
	if (self) {
		jvmtiThreadInfo info;
		memset(&info, 0, sizeof(info));
		if ((*jvmti)->GetThreadInfo(jvmti, self, &info) == JVMTI_ERROR_NONE && info.name) {
			snprintf(ts->name, sizeof(ts->name), "%s", info.name);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
		}
		if (info.thread_group)
			(*jni)->DeleteLocalRef(jni, info.thread_group);
		if (info.context_class_loader)
			(*jni)->DeleteLocalRef(jni, info.context_class_loader);
		pthread_mutex_lock(&ts->mu);
		ts->thread_id = thread_tag(rec, jvmti, jni, self, ts);
		pthread_mutex_unlock(&ts->mu);
		if (rec->agent_thread && (*jni)->IsSameObject(jni, self, rec->agent_thread))
			ts->is_agent = 1;
		if (self != thread)
			(*jni)->DeleteLocalRef(jni, self);
	}
	ts_register(rec, ts);
	tls_ts = ts;
	return ts;
}

/* ---- allocation callbacks ------------------------------------------------ */

/* AsyncGetCallTrace (exported by HotSpot, used by profilers) walks the
 * calling thread's stack from its last Java frame without the VM
 * transition, handles and resource marks of GetStackTrace: in the
 * allocation callback the thread is in native state with a walkable last
 * Java frame, which is all it needs.  It reports only methods whose
 * jmethodID exists, so every class's jmethodIDs are created when it is
 * prepared; a trace it cannot produce falls back to GetStackTrace.
 * Measured on JDK 17: it fails (-4, frame not walkable) for allocations
 * from C2-compiled code, i.e. on every hot path, so it is off by default
 * (stacks=fast turns it on). */
static int stack_asgct(asgct_fn asgct, JNIEnv *jni, struct tstate *ts, jint depth)
{
	asgct_frame f[AGENT_MAX_DEPTH];
	asgct_trace tr = { jni, 0, f };
	asgct(&tr, depth, NULL);
	if (tr.num_frames <= 0)
		return -1;
	for (jint i = 0; i < tr.num_frames; i++) {
		if (!f[i].method_id)
			return -1;
		ts->frames[i].method = f[i].method_id;
		ts->frames[i].location = f[i].lineno >= 0 ? f[i].lineno : -1;
	}
	return tr.num_frames;
}

/* Creates the jmethodIDs of a class's methods (for AsyncGetCallTrace). */
static void make_method_ids(const struct recorder *rec, jvmtiEnv *jvmti, jclass k)
{
	jint n = 0;
	jmethodID *m = NULL;
	if (rec->asgct && (*jvmti)->GetClassMethods(jvmti, k, &n, &m) == JVMTI_ERROR_NONE)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)m);
}

static uint64_t hash_frames(const jvmtiFrameInfo *f, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
	for (int i = 0; i < n; i++) {
		h ^= (uint64_t)(uintptr_t)f[i].method;
		h *= 0xff51afd7ed558ccdull;
		h ^= (uint64_t)f[i].location + ((uint64_t)i << 56);
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h | 1; /* 0 marks an empty cache entry */
}

/* Site of the current allocation: the thread's cache first, the shared
 * table (symbols.h) on a miss.  *slot: the cache entry, -1 if none. */
static uint32_t current_site(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, struct tstate *ts, int *slot_out)
{
	uint32_t depth = rec->opts->depth;
	*slot_out = -1;
	jint n = rec->asgct ? stack_asgct(rec->asgct, jni, ts, (jint)depth) : -1;
	if (n <= 0 &&
	    ((*jvmti)->GetStackTrace(jvmti, NULL, 0, (jint)depth, ts->frames, &n) != JVMTI_ERROR_NONE || n <= 0))
		return HTR_NO_SITE;
	uint64_t h = hash_frames(ts->frames, n);
	uint32_t slot = (uint32_t)(h >> 20) & (SITE_CACHE - 1);
	jvmtiFrameInfo *key = &ts->sc_key[(size_t)slot * depth];
	if (ts->sc_hash[slot] == h && ts->sc_n[slot] == n) {
		int same = 1;
		for (jint i = 0; i < n && same; i++)
			same = key[i].method == ts->frames[i].method &&
			       key[i].location == ts->frames[i].location;
		if (same) {
			*slot_out = (int)slot;
			return ts->sc_site[slot];
		}
	}
	__atomic_fetch_add(&rec->n_site_miss, 1, __ATOMIC_RELAXED);
	uint32_t site = sym_site(rec->sym, jvmti, ts->frames, n);
	if (site != HTR_NO_SITE) {
		memcpy(key, ts->frames, (size_t)n * sizeof(*key));
		ts->sc_hash[slot] = h;
		ts->sc_n[slot] = (uint8_t)n;
		ts->sc_site[slot] = site;
		if (ts->sc_class[slot])
			(*jni)->DeleteWeakGlobalRef(jni, ts->sc_class[slot]);
		ts->sc_class[slot] = NULL;
		*slot_out = (int)slot;
	}
	return site;
}

static uint32_t class_type(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts)
{
	jlong ct = 0;
	if ((*jvmti)->GetTag(jvmti, klass, &ct) == JVMTI_ERROR_NONE && ct > 0 &&
	    (uint64_t)ct <= CLASS_TAG_MAX)
		return (uint32_t)(ct - 1);
	return ts_type_of_class(rec, jvmti, jni, klass, ts);
}

/* The type of an allocation at the site of cache entry slot (-1: none).
 * A bytecode allocates one class, so the entry remembers the first class
 * seen there; IsSameObject confirms it (reflection, clone and the like
 * allocate several classes at one site: those go to the tag table). */
static uint32_t site_class_type(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass,
				struct tstate *ts, int slot)
{
	if (slot >= 0 && ts->sc_class[slot] && (*jni)->IsSameObject(jni, klass, ts->sc_class[slot]))
		return ts->sc_type[slot];
	uint32_t type = class_type(rec, jvmti, jni, klass, ts);
	if (slot >= 0 && !ts->sc_class[slot] && type != HTR_NO_TYPE) {
		ts->sc_class[slot] = (*jni)->NewWeakGlobalRef(jni, klass);
		ts->sc_type[slot] = type;
	}
	return type;
}

/* mode=sample: a tag a heap walk gave (walk_tag_is_walked). */
static int walked_tag(struct recorder *rec, jlong t)
{
	if (!rec->sampled)
		return 0;
	pthread_mutex_lock(&rec->deaths_mu);
	int w = walk_tag_is_walked(rec, (uint64_t)t);
	pthread_mutex_unlock(&rec->deaths_mu);
	return w;
}

/* mode=sample with cheap_flush: the sample tagged id, with a weak
 * reference to it, into rec->live (walk_flush_deaths).  Without memory
 * for either, the cheap flush is off: it could miss this sample's death. */
static void note_live_sample(struct recorder *rec, JNIEnv *jni, jobject object, uint64_t id)
{
	jweak w = (*jni)->NewWeakGlobalRef(jni, object);
	pthread_mutex_lock(&rec->deaths_mu);
	int ok = w && tagset_add(&rec->live, id, (uint64_t)(uintptr_t)w) == 0;
	if (!ok)
		__atomic_store_n(&rec->cheap_flush, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rec->deaths_mu);
	if (!ok && w)
		(*jni)->DeleteWeakGlobalRef(jni, w);
}

/* mode=sample: the ObjectFree of tag, under deaths_mu.  1 when its death
 * was written already (walk_flush_deaths found it): dropped.  A live
 * sample's weak reference goes to the agent thread to delete. */
static int sample_freed_locked(struct recorder *rec, uint64_t tag)
{
	uint64_t w = 0;
	if (!tagset_remove(&rec->live, tag, &w))
		return tagset_remove(&rec->written_dead, tag, NULL);
	if (rec->nweak_free == rec->weak_free_cap) {
		uint32_t c = rec->weak_free_cap ? rec->weak_free_cap * 2 : 256;
		jweak *p = realloc(rec->weak_free, c * sizeof(*p));
		if (!p)
			return 0; /* (the reference stays: 8 bytes of the JVM's) */
		rec->weak_free = p;
		rec->weak_free_cap = c;
	}
	rec->weak_free[rec->nweak_free++] = (jweak)(uintptr_t)w;
	return 0;
}

void recorder_alloc(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
		    jclass klass, jlong size, int from_vm)
{
	if (!__atomic_load_n(&rec->recording, __ATOMIC_ACQUIRE) || rec->ablate == ABLATE_EVENTS)
		return;
	struct tstate *ts = ts_current(rec, jvmti, jni, thread);
	if (!ts || ts->is_agent)
		return;
	if (rec->alloc_gate)
		gcwait_allocation(rec, jvmti); /* after a GC with a graph: until its walk */
	pthread_mutex_lock(&ts->mu);
	/* the callback's work, from here (waits for a walk, above, are the
	 * walk's time) to the unlock: agent.overhead */
	uint64_t cb_t0 = agent_now_ns();
	uint32_t epoch = __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE);
	uint32_t wseq = __atomic_load_n(&rec->walk_seq, __ATOMIC_ACQUIRE);
	/* VMObjectAlloc repeats some sampled allocations (sampling posts first);
	 * and a heap walk since this thread's last allocation may have tagged
	 * this object already.  Only then is GetTag worth its cost. */
	if (from_vm || wseq != ts->last_walk_seq) {
		ts->last_walk_seq = wseq;
		jlong t = 0;
		if ((*jvmti)->GetTag(jvmti, object, &t) != JVMTI_ERROR_NONE || (t && !walked_tag(rec, t))) {
			rec->n_dup++;
			goto out;
		}
		/* (mode=sample: a walk met this object while its sample waited
		 * for this mutex; the sample takes an id of its own below) */
	}
	struct arec r;
	int slot = -1;
	r.site = rec->opts->depth ? current_site(rec, jvmti, jni, ts, &slot) : HTR_NO_SITE;
	r.type = site_class_type(rec, jvmti, jni, klass, ts, slot);
	if (r.type == HTR_NO_TYPE)
		goto out;
	r.id = rec_new_tag(rec);
	if (rec->ablate != ABLATE_NOTAG && (*jvmti)->SetTag(jvmti, object, (jlong)r.id) != JVMTI_ERROR_NONE)
		goto out;
	if (rec->sampled && rec->ablate != ABLATE_NOTAG && __atomic_load_n(&rec->cheap_flush, __ATOMIC_RELAXED))
		note_live_sample(rec, jni, object, r.id);
	r.size = (uint64_t)size;
	r.time_ns = agent_now_ns();
	r.length = sym_type_kind(rec->sym, r.type) == HTR_TYPE_INSTANCE ? -1
									: (*jni)->GetArrayLength(jni, object);
	r.epoch = epoch;
	r.thread = ts->thread_id;
	r.flags = 0;
	r.pad = 0;
	if (ts_append(rec, ts, &r) == 0) {
		if (from_vm)
			rec->n_vm_allocs++;
		else
			__atomic_fetch_add(&rec->n_sample_callbacks, 1, __ATOMIC_RELAXED);
	}
out:
	__atomic_fetch_add(&rec->alloc_cb_ns, agent_now_ns() - cb_t0, __ATOMIC_RELAXED);
	if (ts->cb_epoch != epoch + 1) {
		ts->cb_epoch = epoch + 1;
		__atomic_fetch_add(&rec->alloc_threads, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ts->mu);
}

/* ---- deaths, GCs, classes, threads --------------------------------------- */

int rec_push_death_locked(struct recorder *rec, struct death d)
{
	if (rec->ndeaths == rec->deaths_cap) {
		size_t cap = rec->deaths_cap ? rec->deaths_cap * 2 : 65536;
		struct death *p = realloc(rec->deaths, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		rec->deaths = p;
		rec->deaths_cap = cap;
	}
	rec->deaths[rec->ndeaths++] = d;
	return 0;
}

void recorder_object_free(struct recorder *rec, jlong tag)
{
	/* Deaths are posted after the GC that freed them ended: attribute them
	 * to the last GC finished now (see README, "deaths"). */
	struct death d = { (uint64_t)tag, __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE) };
	pthread_mutex_lock(&rec->deaths_mu);
	if (rec->sampled && sample_freed_locked(rec, (uint64_t)tag)) {
		pthread_mutex_unlock(&rec->deaths_mu);
		return;
	}
	if ((uint64_t)tag <= CLASS_TAG_MAX && (uint64_t)tag - 1 < rec->mirror_unwritten_cap &&
	    rec->mirror_unwritten[tag - 1]) {
		rec->n_deaths_dropped++; /* a mirror never written (mode=sample) */
		pthread_mutex_unlock(&rec->deaths_mu);
		return;
	}
	if (rec->nwalk_ranges && walk_tag_is_walked(rec, (uint64_t)tag)) {
		/* met by a walk, died before walk_untag: in no heap state but
		 * that walk's graph */
		rec->n_walk_deaths_dropped++;
		pthread_mutex_unlock(&rec->deaths_mu);
		return;
	}
	rec_push_death_locked(rec, d);
	pthread_mutex_unlock(&rec->deaths_mu);
}

int rec_add_death(struct recorder *rec, uint64_t id, uint32_t gc)
{
	pthread_mutex_lock(&rec->deaths_mu);
	int rc = rec_push_death_locked(rec, (struct death){ id, gc });
	pthread_mutex_unlock(&rec->deaths_mu);
	return rc;
}

void recorder_gc_start(struct recorder *rec)
{
	uint32_t n = __atomic_load_n(&rec->gc_started, __ATOMIC_RELAXED) + 1;
	rec->gcs[n % GC_RING].start_ns = agent_now_ns();
	rec->gcs[n % GC_RING].end_ns = 0;
	/* atomics only: allowed here */
	rec->gcs[n % GC_RING].alloc_cb_ns = __atomic_load_n(&rec->alloc_cb_ns, __ATOMIC_RELAXED);
	rec->gcs[n % GC_RING].alloc_threads = __atomic_exchange_n(&rec->alloc_threads, 0, __ATOMIC_RELAXED);
	rec->gcs[n % GC_RING].walk_ns = __atomic_load_n(&rec->walk_total_ns, __ATOMIC_RELAXED);
	if (rec->have_perfdata) /* memory loads only: allowed here */
		perfdata_sample(&rec->perfdata, &rec->gcs[n % GC_RING].before);
	__atomic_store_n(&rec->gc_started, n, __ATOMIC_RELEASE);
}

void rec_gc_kind(const struct recorder *rec, uint32_t n, int *full, char *cause, size_t cause_len)
{
	const struct gc_times *g = &rec->gcs[n % GC_RING];
	/* which collector ran: its count grew since the previous GC ended,
	 * not only between the callbacks (G1 counts its remark and cleanup
	 * pauses before it posts their GC start) */
	struct perfdata_sample base = g->before;
	if (n > 1) {
		const struct perfdata_sample *prev = &rec->gcs[(n - 1) % GC_RING].after;
		for (uint32_t i = 0; i < PERFDATA_MAX_COLLECTORS; i++)
			if (prev->invocations[i] < base.invocations[i])
				base.invocations[i] = prev->invocations[i];
	}
	perfdata_gc(&rec->perfdata, &base, &g->after, full, cause, cause_len);
}

/* Whether the agent will walk GC n (as process_gc asks), from the
 * counters just sampled: plain memory, allowed in the GC callbacks. */
static int gc_gets_graph(const struct recorder *rec, uint32_t n)
{
	int full = 0;
	char cause[PERFDATA_CAUSE_MAX];
	rec_gc_kind(rec, n, &full, cause, sizeof(cause));
	return agent_opts_wants_graph(rec->opts, n, full);
}

void recorder_gc_finish(struct recorder *rec, jvmtiEnv *jvmti)
{
	uint32_t n = __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE);
	rec->gcs[n % GC_RING].end_ns = agent_now_ns();
	if (rec->have_perfdata)
		perfdata_sample(&rec->perfdata, &rec->gcs[n % GC_RING].after);
	if (rec->alloc_gate && gc_gets_graph(rec, n))
		gcwait_close_gate(rec, n);
	__atomic_store_n(&rec->gc_finished, n, __ATOMIC_RELEASE);
	/* only raw monitors are allowed here */
	if ((*jvmti)->RawMonitorEnter(jvmti, rec->mon) == JVMTI_ERROR_NONE) {
		(*jvmti)->RawMonitorNotifyAll(jvmti, rec->mon);
		(*jvmti)->RawMonitorExit(jvmti, rec->mon);
	}
}

/* gcwait: a class noted by recorder_class_file_hook that is prepared
 * (registered: its mirror has its class tag) before the walk of its GC
 * gets the tag in its entry, for the walk (walk.c, take_late).  Under the
 * thread's mutex (then late_mu): a walk holds them all. */
static void late_tag(struct recorder *rec, jvmtiEnv *jvmti, jclass klass)
{
	uint32_t n = __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE);
	char *sig = NULL;
	jlong tag = 0;
	if (!n || n <= __atomic_load_n(&rec->late_walked, __ATOMIC_ACQUIRE) ||
	    (*jvmti)->GetTag(jvmti, klass, &tag) != JVMTI_ERROR_NONE || !tag ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return;
	size_t l = strlen(sig);
	pthread_mutex_lock(&rec->late_mu);
	for (size_t i = 0; l > 2 && sig[0] == 'L' && i < rec->nlate; i++)
		if (!rec->late[i].tag && strlen(rec->late[i].name) == l - 2 && !memcmp(rec->late[i].name, sig + 1, l - 2)) {
			rec->late[i].tag = (uint64_t)tag;
			break;
		}
	pthread_mutex_unlock(&rec->late_mu);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
}

void recorder_class_prepare(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	struct tstate *ts = ts_current(rec, jvmti, jni, thread);
	if (!ts)
		return;
	/* under the thread's mutex so that a heap walk sees the mirror's record;
	 * through the symbols even when the mirror is tagged already: a class
	 * registered before its preparation (at VMInit) gets its fields now */
	pthread_mutex_lock(&ts->mu);
	ts_type_of_class(rec, jvmti, jni, klass, ts);
	late_tag(rec, jvmti, klass); /* before a walk can come between */
	pthread_mutex_unlock(&ts->mu);
	make_method_ids(rec, jvmti, klass);
}

void recorder_register_loaded_classes(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni)
{
	jint nclasses = 0;
	jclass *classes = NULL;
	pthread_mutex_lock(&rec->init_ts.mu);
	if ((*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < nclasses; i++) {
			ts_type_of_class(rec, jvmti, jni, classes[i], &rec->init_ts);
			make_method_ids(rec, jvmti, classes[i]);
			(*jni)->DeleteLocalRef(jni, classes[i]);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	}
	pthread_mutex_unlock(&rec->init_ts.mu);
}

/* AsyncGetCallTrace works only while ClassLoad events are enabled. */
int recorder_wants_class_load(const struct recorder *rec)
{
	return rec->asgct != NULL;
}

int recorder_wants_class_hook(const struct recorder *rec)
{
	return agent_opts_gc_wait(rec->opts) && !rec->cnt;
}

/* Drops the late classes (under late_mu). */
static void late_clear(struct recorder *rec)
{
	for (size_t i = 0; i < rec->nlate; i++)
		free(rec->late[i].name);
	rec->nlate = 0;
}

/* gcwait: a class whose file the VM starts to parse after the last GC's
 * end, while that GC's walk may still come, is noted for it by name
 * (recorder_internal.h, late): its mirror, made after the hook, was not in
 * the heap the GC left. */
void recorder_class_file_hook(struct recorder *rec, const char *name)
{
	uint32_t n = __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE);
	if (!name || !n || n <= __atomic_load_n(&rec->late_walked, __ATOMIC_ACQUIRE))
		return;
	char *c = strdup(name);
	if (!c)
		return; /* its mirror stays in that GC's graph */
	pthread_mutex_lock(&rec->late_mu);
	if (rec->nlate && rec->late[0].gc != n)
		late_clear(rec); /* an older GC's: its walk is over or dropped */
	if (n > rec->late_walked && rec->nlate == rec->late_cap) {
		size_t cap = rec->late_cap ? 2 * rec->late_cap : 16;
		struct late_class *p = realloc(rec->late, cap * sizeof(*p));
		if (p) {
			rec->late = p;
			rec->late_cap = cap;
		}
	}
	if (n > rec->late_walked && rec->nlate < rec->late_cap) {
		rec->late[rec->nlate++] = (struct late_class){ c, 0, n };
		c = NULL;
	}
	pthread_mutex_unlock(&rec->late_mu);
	free(c);
}

void recorder_late_take(struct recorder *rec, uint32_t n, struct late_class **out, size_t *nout)
{
	pthread_mutex_lock(&rec->late_mu);
	__atomic_store_n(&rec->late_walked, n, __ATOMIC_RELEASE);
	if (rec->nlate && rec->late[0].gc != n)
		late_clear(rec);
	*out = rec->late;
	*nout = rec->nlate;
	rec->late = NULL;
	rec->nlate = rec->late_cap = 0;
	pthread_mutex_unlock(&rec->late_mu);
}

void recorder_thread_start(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	ts_current(rec, jvmti, jni, thread);
}

void recorder_thread_end(struct recorder *rec, JNIEnv *jni)
{
	(void)rec;
	struct tstate *ts = tls_ts;
	if (!ts)
		return;
	pthread_mutex_lock(&ts->mu);
	for (uint32_t i = 0; i < SITE_CACHE; i++)
		if (ts->sc_class[i])
			(*jni)->DeleteWeakGlobalRef(jni, ts->sc_class[i]);
	memset(ts->sc_class, 0, sizeof(ts->sc_class));
	ts->ended = 1;
	pthread_mutex_unlock(&ts->mu);
	tls_ts = NULL;
}


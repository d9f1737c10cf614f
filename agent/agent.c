/* agent.c - Agent_OnLoad, the JVMTI event callbacks and the per-thread
 * record buffers.  See agent.h for the threads and the lock order, and
 * agent/README.md for what is recorded and how. */
#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct agent A;

/* The calling thread's buffer: plain TLS is cheaper than
 * GetThreadLocalStorage on every allocation. */
static __thread struct tstate *tls_ts __attribute__((tls_model("initial-exec")));

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - A.t0_ns;
}

static void complain(const char *fmt, const char *arg)
{
	fprintf(stderr, "heapfs-agent: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

/* ---- record buffers ------------------------------------------------------ */

struct chunk *chunk_get(void)
{
	pthread_mutex_lock(&A.free_mu);
	struct chunk *c = A.free_chunks;
	if (c)
		A.free_chunks = c->next;
	pthread_mutex_unlock(&A.free_mu);
	if (!c)
		c = malloc(sizeof(*c));
	if (c) {
		c->next = NULL;
		c->n = 0;
	}
	return c;
}

void chunk_put_list(struct chunk *head)
{
	while (head) {
		struct chunk *next = head->next;
		pthread_mutex_lock(&A.free_mu);
		head->next = A.free_chunks;
		A.free_chunks = head;
		pthread_mutex_unlock(&A.free_mu);
		head = next;
	}
}

int ts_append(struct tstate *ts, const struct arec *r)
{
	struct chunk *c = ts->recs.tail;
	if (!c || c->n == CHUNK_RECS) {
		struct chunk *n = chunk_get();
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

/* A class mirror tagged by the symbol tables: recorded as an object that
 * appeared without an allocation, in the buffer ctx (a struct tstate). */
static void record_mirror(void *ctx, uint64_t id, uint64_t size, uint32_t type)
{
	struct arec r = { .id = id, .size = size, .time_ns = agent_now_ns(), .type = type,
			  .site = HTR_NO_SITE, .length = -1,
			  .epoch = __atomic_load_n(&A.gc_started, __ATOMIC_ACQUIRE),
			  .flags = HTR_ALLOC_PREEXISTING };
	ts_append(ctx, &r);
}

uint32_t ts_type_of_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts)
{
	return sym_type_of_class(A.sym, jvmti, jni, klass, ts ? record_mirror : NULL, ts);
}

static struct tstate *ts_new(void)
{
	struct tstate *ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	pthread_mutex_init(&ts->mu, NULL);
	uint32_t d = A.opts.depth ? A.opts.depth : 1;
	ts->frames = calloc(d, sizeof(jvmtiFrameInfo));
	ts->sc_key = calloc((size_t)SITE_CACHE * d, sizeof(jvmtiFrameInfo));
	if (!ts->frames || !ts->sc_key) {
		free(ts->frames);
		free(ts->sc_key);
		free(ts);
		return NULL;
	}
	ts->last_walk_seq = __atomic_load_n(&A.walk_seq, __ATOMIC_ACQUIRE);
	return ts;
}

static void ts_register(struct tstate *ts)
{
	pthread_mutex_lock(&A.threads_mu);
	ts->next = A.threads;
	A.threads = ts;
	pthread_mutex_unlock(&A.threads_mu);
}

/* Trace id of a thread: the tag of its Thread object, tagging (and
 * recording as appeared-without-allocation) a Thread object not seen yet. */
static uint64_t thread_tag(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, struct tstate *ts)
{
	jlong tag = 0;
	if ((*jvmti)->GetTag(jvmti, thread, &tag) != JVMTI_ERROR_NONE)
		return 0;
	if (tag)
		return (uint64_t)tag;
	jclass k = (*jni)->GetObjectClass(jni, thread);
	jlong size = 0;
	(*jvmti)->GetObjectSize(jvmti, thread, &size);
	uint64_t id = agent_new_tag();
	if ((*jvmti)->SetTag(jvmti, thread, (jlong)id) != JVMTI_ERROR_NONE)
		return 0;
	struct arec r = { .id = id, .size = (uint64_t)size, .time_ns = agent_now_ns(),
			  .type = k ? ts_type_of_class(jvmti, jni, k, ts) : HTR_NO_TYPE,
			  .site = HTR_NO_SITE, .length = -1,
			  .epoch = __atomic_load_n(&A.gc_started, __ATOMIC_ACQUIRE),
			  .flags = HTR_ALLOC_PREEXISTING };
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (r.type != HTR_NO_TYPE)
		ts_append(ts, &r);
	return id;
}

struct tstate *ts_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (tls_ts)
		return tls_ts;
	struct tstate *ts = ts_new();
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
		ts->thread_id = thread_tag(jvmti, jni, self, ts);
		pthread_mutex_unlock(&ts->mu);
		if (A.agent_thread && (*jni)->IsSameObject(jni, self, A.agent_thread))
			ts->is_agent = 1;
		if (self != thread)
			(*jni)->DeleteLocalRef(jni, self);
	}
	ts_register(ts);
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
typedef struct { jint lineno; jmethodID method_id; } asgct_frame;
typedef struct { JNIEnv *env; jint num_frames; asgct_frame *frames; } asgct_trace;
typedef void (*asgct_fn)(asgct_trace *, jint, void *);
static asgct_fn asgct;

static int stack_asgct(JNIEnv *jni, struct tstate *ts, jint depth)
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
static void make_method_ids(jvmtiEnv *jvmti, jclass k)
{
	jint n = 0;
	jmethodID *m = NULL;
	if (asgct && (*jvmti)->GetClassMethods(jvmti, k, &n, &m) == JVMTI_ERROR_NONE)
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
static uint32_t current_site(jvmtiEnv *jvmti, JNIEnv *jni, struct tstate *ts, int *slot_out)
{
	uint32_t depth = A.opts.depth;
	*slot_out = -1;
	jint n = asgct ? stack_asgct(jni, ts, (jint)depth) : -1;
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
	__atomic_fetch_add(&A.n_site_miss, 1, __ATOMIC_RELAXED);
	uint32_t site = sym_site(A.sym, jvmti, ts->frames, n);
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

static uint32_t class_type(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts)
{
	jlong ct = 0;
	if ((*jvmti)->GetTag(jvmti, klass, &ct) == JVMTI_ERROR_NONE && ct > 0 &&
	    (uint64_t)ct <= CLASS_TAG_MAX)
		return (uint32_t)(ct - 1);
	return ts_type_of_class(jvmti, jni, klass, ts);
}

/* The type of an allocation at the site of cache entry slot (-1: none).
 * A bytecode allocates one class, so the entry remembers the first class
 * seen there; IsSameObject confirms it (reflection, clone and the like
 * allocate several classes at one site: those go to the tag table). */
static uint32_t site_class_type(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts, int slot)
{
	if (slot >= 0 && ts->sc_class[slot] && (*jni)->IsSameObject(jni, klass, ts->sc_class[slot]))
		return ts->sc_type[slot];
	uint32_t type = class_type(jvmti, jni, klass, ts);
	if (slot >= 0 && !ts->sc_class[slot] && type != HTR_NO_TYPE) {
		ts->sc_class[slot] = (*jni)->NewWeakGlobalRef(jni, klass);
		ts->sc_type[slot] = type;
	}
	return type;
}

/* Measurement only (agent/bench.sh, "where the cost goes"): the
 * environment variable HEAPFS_AGENT_ABLATE leaves out one step so that its
 * cost shows; the trace is then incomplete.
 *   noalloc  allocation events are never enabled (the agent's fixed costs)
 *   events   the allocation callbacks return at once (the JVM's cost of
 *            posting an event for every allocation)
 *   notag    everything but SetTag (use with deaths=off,graph=none) */
enum ablate { ABLATE_NONE, ABLATE_NOALLOC, ABLATE_EVENTS, ABLATE_NOTAG };
static enum ablate ablate;

static int read_ablate(void)
{
	const char *v = getenv("HEAPFS_AGENT_ABLATE");
	static const char *const names[] = { "noalloc", "events", "notag" };
	if (!v || !*v)
		return 0;
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(v, names[i])) {
			ablate = (enum ablate)(i + 1);
			fprintf(stderr, "heapfs-agent: HEAPFS_AGENT_ABLATE=%s: measuring, the trace is incomplete\n", v);
			return 0;
		}
	return -1;
}

static void record_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
			 jclass klass, jlong size, int from_vm)
{
	if (!__atomic_load_n(&A.recording, __ATOMIC_ACQUIRE) || ablate == ABLATE_EVENTS)
		return;
	struct tstate *ts = ts_current(jvmti, jni, thread);
	if (!ts || ts->is_agent)
		return;
	if (A.alloc_gate)
		gcwait_allocation(jvmti); /* after a GC with a graph: until its walk */
	pthread_mutex_lock(&ts->mu);
	uint32_t epoch = __atomic_load_n(&A.gc_started, __ATOMIC_ACQUIRE);
	uint32_t wseq = __atomic_load_n(&A.walk_seq, __ATOMIC_ACQUIRE);
	/* VMObjectAlloc repeats some sampled allocations (sampling posts first);
	 * and a heap walk since this thread's last allocation may have tagged
	 * this object already.  Only then is GetTag worth its cost. */
	if (from_vm || wseq != ts->last_walk_seq) {
		ts->last_walk_seq = wseq;
		jlong t = 0;
		if ((*jvmti)->GetTag(jvmti, object, &t) != JVMTI_ERROR_NONE || t) {
			A.n_dup++;
			goto out;
		}
	}
	struct arec r;
	int slot = -1;
	r.site = A.opts.depth ? current_site(jvmti, jni, ts, &slot) : HTR_NO_SITE;
	r.type = site_class_type(jvmti, jni, klass, ts, slot);
	if (r.type == HTR_NO_TYPE)
		goto out;
	r.id = agent_new_tag();
	if (ablate != ABLATE_NOTAG && (*jvmti)->SetTag(jvmti, object, (jlong)r.id) != JVMTI_ERROR_NONE)
		goto out;
	r.size = (uint64_t)size;
	r.time_ns = agent_now_ns();
	r.length = sym_type_kind(A.sym, r.type) == HTR_TYPE_INSTANCE ? -1 : (*jni)->GetArrayLength(jni, object);
	r.epoch = epoch;
	r.thread = ts->thread_id;
	r.flags = 0;
	r.pad = 0;
	ts_append(ts, &r);
	if (from_vm)
		A.n_vm_allocs++;
out:
	pthread_mutex_unlock(&ts->mu);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				     jclass klass, jlong size)
{
	record_alloc(jvmti, jni, thread, object, klass, size, 0);
}

static void JNICALL on_vm_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				jclass klass, jlong size)
{
	record_alloc(jvmti, jni, thread, object, klass, size, 1);
}

/* ---- deaths, GCs, classes, threads --------------------------------------- */

static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	(void)jvmti;
	/* Deaths are posted after the GC that freed them ended: attribute them
	 * to the last GC finished now (see README, "deaths"). */
	struct death d = { (uint64_t)tag, __atomic_load_n(&A.gc_finished, __ATOMIC_ACQUIRE) };
	pthread_mutex_lock(&A.deaths_mu);
	if (A.ndeaths == A.deaths_cap) {
		size_t cap = A.deaths_cap ? A.deaths_cap * 2 : 65536;
		struct death *p = realloc(A.deaths, cap * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&A.deaths_mu);
			return;
		}
		A.deaths = p;
		A.deaths_cap = cap;
	}
	A.deaths[A.ndeaths++] = d;
	pthread_mutex_unlock(&A.deaths_mu);
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
	(void)jvmti;
	uint32_t n = __atomic_load_n(&A.gc_started, __ATOMIC_RELAXED) + 1;
	A.gcs[n % GC_RING].start_ns = agent_now_ns();
	A.gcs[n % GC_RING].end_ns = 0;
	if (A.have_perfdata) /* memory loads only: allowed here */
		perfdata_sample(&A.perfdata, &A.gcs[n % GC_RING].before);
	__atomic_store_n(&A.gc_started, n, __ATOMIC_RELEASE);
}

void agent_gc_kind(uint32_t n, int *full, char *cause, size_t cause_len)
{
	const struct gc_times *g = &A.gcs[n % GC_RING];
	/* which collector ran: its count grew since the previous GC ended,
	 * not only between the callbacks (G1 counts its remark and cleanup
	 * pauses before it posts their GC start) */
	struct perfdata_sample base = g->before;
	if (n > 1) {
		const struct perfdata_sample *prev = &A.gcs[(n - 1) % GC_RING].after;
		for (uint32_t i = 0; i < PERFDATA_MAX_COLLECTORS; i++)
			if (prev->invocations[i] < base.invocations[i])
				base.invocations[i] = prev->invocations[i];
	}
	perfdata_gc(&A.perfdata, &base, &g->after, full, cause, cause_len);
}

/* Whether the agent will walk GC n (as process_gc asks), from the
 * counters just sampled: plain memory, allowed in the GC callbacks. */
static int gc_gets_graph(uint32_t n)
{
	int full = 0;
	char cause[PERFDATA_CAUSE_MAX];
	agent_gc_kind(n, &full, cause, sizeof(cause));
	return agent_opts_wants_graph(&A.opts, n, full);
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	uint32_t n = __atomic_load_n(&A.gc_started, __ATOMIC_ACQUIRE);
	A.gcs[n % GC_RING].end_ns = agent_now_ns();
	if (A.have_perfdata)
		perfdata_sample(&A.perfdata, &A.gcs[n % GC_RING].after);
	if (A.alloc_gate && gc_gets_graph(n))
		__atomic_store_n(&A.gate_gc, n, __ATOMIC_RELEASE);
	__atomic_store_n(&A.gc_finished, n, __ATOMIC_RELEASE);
	/* only raw monitors are allowed here */
	if ((*jvmti)->RawMonitorEnter(jvmti, A.mon) == JVMTI_ERROR_NONE) {
		(*jvmti)->RawMonitorNotifyAll(jvmti, A.mon);
		(*jvmti)->RawMonitorExit(jvmti, A.mon);
	}
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	struct tstate *ts = ts_current(jvmti, jni, thread);
	if (!ts)
		return;
	/* under the thread's mutex so that a heap walk sees the mirror's record */
	pthread_mutex_lock(&ts->mu);
	class_type(jvmti, jni, klass, ts);
	pthread_mutex_unlock(&ts->mu);
	make_method_ids(jvmti, klass);
}

/* AsyncGetCallTrace works only while ClassLoad events are enabled. */
static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jvmti; (void)jni; (void)thread; (void)klass;
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	ts_current(jvmti, jni, thread);
	if (A.cnt)
		count_thread_start(A.cnt, jvmti, jni, thread,
				   A.agent_thread && (*jni)->IsSameObject(jni, thread, A.agent_thread));
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti; (void)thread;
	if (A.cnt)
		count_thread_end(A.cnt);
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

/* ---- mode=count's events (counting.h) -------------------------------------- */

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	count_class_file_load(A.cnt, jvmti, jni, redefined, loader, name, pd, len, data, new_len, new_data);
}

static void JNICALL on_count_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	count_class_prepare(A.cnt, jvmti, jni, thread, klass);
}

static void JNICALL on_exception(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, jlocation location,
				 jobject exception, jmethodID catch_method, jlocation catch_location)
{
	count_exception(A.cnt, jvmti, jni, thread, method, location, exception, catch_method, catch_location);
}

/* ---- start and stop ------------------------------------------------------ */

static int enable(jvmtiEnv *jvmti, jvmtiEvent ev)
{
	jvmtiError e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, ev, NULL);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: cannot enable JVMTI event %d (error %d)\n", (int)ev, (int)e);
		return -1;
	}
	return 0;
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

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	jthread t = new_agent_thread(jni);
	if (!t || !(A.agent_thread = (*jni)->NewGlobalRef(jni, t))) {
		fprintf(stderr, "heapfs-agent: cannot create the agent thread; not recording\n");
		return;
	}
	/* GC kind and heap use: the JVM's performance counters if it keeps
	 * them in a file, else the management beans */
	A.have_perfdata = perfdata_open_self(&A.perfdata) == 0;
	if (!A.have_perfdata)
		mgmt_init(jni); /* (says so on stderr if the beans are unavailable) */
	/* mode=count records no objects: no types, mirrors or method ids */
	int objects = A.opts.mode != AGENT_MODE_COUNT;
	if ((objects && enable(jvmti, JVMTI_EVENT_CLASS_PREPARE)) || (asgct && enable(jvmti, JVMTI_EVENT_CLASS_LOAD)) ||
	    enable(jvmti, JVMTI_EVENT_THREAD_START) ||
	    enable(jvmti, JVMTI_EVENT_THREAD_END))
		return;
	/* every class loaded so far gets its type id (and its mirror an id) */
	jint nclasses = 0;
	jclass *classes = NULL;
	pthread_mutex_lock(&A.init_ts.mu);
	if (objects && (*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < nclasses; i++) {
			ts_type_of_class(jvmti, jni, classes[i], &A.init_ts);
			make_method_ids(jvmti, classes[i]);
			(*jni)->DeleteLocalRef(jni, classes[i]);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	}
	pthread_mutex_unlock(&A.init_ts.mu);
	/* allocations from here on are events; everything older is tagged by
	 * one heap iteration (the walk counter makes racing callbacks check) */
	__atomic_store_n(&A.recording, 1, __ATOMIC_RELEASE);
	if (A.opts.mode == AGENT_MODE_COUNT) {
		/* counters instead of allocation events; GCs are still recorded */
		count_vm_init(A.cnt, jvmti, jni);
		if (enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_START) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
			return;
	} else {
		if (ablate != ABLATE_NOALLOC &&
		    (enable(jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC) || enable(jvmti, JVMTI_EVENT_VM_OBJECT_ALLOC)))
			return;
		/* A thread allocates inside its current TLAB without sampling until the
		 * TLAB is used up; a GC retires every TLAB, so from here on every
		 * allocation is sampled.  Not a GC of the trace: its events are off. */
		(*jvmti)->ForceGarbageCollection(jvmti);
		/* the use after it is GC 1's base (recorder.c, raise_used_before);
		 * allocations recorded before its end are in that use */
		A.used_base_ns = agent_now_ns();
		A.prev_used = UINT64_MAX;
		if (A.have_perfdata) {
			struct perfdata_sample s;
			perfdata_sample(&A.perfdata, &s);
			A.prev_used = s.used;
		}
		if ((A.opts.deaths && enable(jvmti, JVMTI_EVENT_OBJECT_FREE)) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_START) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
			return;
		__atomic_fetch_add(&A.walk_seq, 1, __ATOMIC_ACQ_REL);
		pthread_mutex_lock(&A.init_ts.mu);
		walk_tag_preexisting(jvmti, &A.init_ts);
		pthread_mutex_unlock(&A.init_ts.mu);
	}
	ts_current(jvmti, jni, thread);
	jlong at = 0;
	(*jvmti)->GetTag(jvmti, A.agent_thread, &at);
	A.agent_thread_tag = (uint64_t)at;
	jvmtiError e = (*jvmti)->RunAgentThread(jvmti, t, recorder_main, NULL, JVMTI_THREAD_MAX_PRIORITY);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: cannot start the agent thread (error %d)\n", (int)e);
		return;
	}
	A.agent_started = 1;
	if (agent_opts_gc_wait(&A.opts)) {
		/* allocations wait for walks only where the agent thread runs no
		 * Java code before a walk (gcwait.c) */
		A.alloc_gate = A.have_perfdata;
		gcwait_start();
	}
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* stop recording, let the agent thread write the rest and the footer */
	__atomic_store_n(&A.recording, 0, __ATOMIC_RELEASE);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VM_OBJECT_ALLOC, NULL);
	if (A.cnt)
		count_finish(A.cnt, jni);
	if (!A.agent_started) {
		/* setup failed before the agent thread ran: a valid, empty trace */
		if (A.w)
			htr_writer_close(A.w);
		A.w = NULL;
		return;
	}
	if ((*jvmti)->RawMonitorEnter(jvmti, A.mon) != JVMTI_ERROR_NONE)
		return;
	A.stop = 1;
	(*jvmti)->RawMonitorNotifyAll(jvmti, A.mon);
	while (!A.done)
		(*jvmti)->RawMonitorWait(jvmti, A.mon, 1000);
	(*jvmti)->RawMonitorExit(jvmti, A.mon);
	gcwait_stop(jvmti);
}

static int add_capabilities(jvmtiEnv *jvmti)
{
	jvmtiCapabilities c;
	memset(&c, 0, sizeof(c));
	c.can_tag_objects = 1;
	c.can_generate_sampled_object_alloc_events = 1;
	c.can_generate_vm_object_alloc_events = 1;
	c.can_generate_object_free_events = 1;
	c.can_generate_garbage_collection_events = 1;
	c.can_get_line_numbers = 1;
	c.can_get_source_file_name = 1;
	/* hot=N re-instruments classes */
	c.can_retransform_classes = A.opts.mode == AGENT_MODE_COUNT && A.opts.hot;
	if (agent_opts_gc_wait(&A.opts))
		gcwait_capabilities(&c);
	jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &c);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: the JVM lacks a needed JVMTI capability (error %d)\n", (int)e);
		return -1;
	}
	return 0;
}

static int set_callbacks(jvmtiEnv *jvmti)
{
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.VMObjectAlloc = on_vm_alloc;
	cb.ObjectFree = on_object_free;
	cb.GarbageCollectionStart = on_gc_start;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.ClassPrepare = on_class_prepare;
	cb.ClassLoad = on_class_load;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.NativeMethodBind = gcwait_on_native_bind;
	if (A.cnt) {
		cb.ClassFileLoadHook = on_class_file_load;
		cb.ClassPrepare = on_count_class_prepare;
		cb.Exception = on_exception;
	}
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return -1;
	if ((*jvmti)->SetHeapSamplingInterval(jvmti, 0) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: SetHeapSamplingInterval(0) failed\n");
		return -1;
	}
	return enable(jvmti, JVMTI_EVENT_VM_INIT) || enable(jvmti, JVMTI_EVENT_VM_DEATH) ? -1 : 0;
}

static int init_state(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	A.t0_ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	A.next_tag = CLASS_TAG_MAX + 1;
	pthread_mutex_init(&A.threads_mu, NULL);
	pthread_mutex_init(&A.deaths_mu, NULL);
	pthread_mutex_init(&A.free_mu, NULL);
	pthread_mutex_init(&A.init_ts.mu, NULL);
	snprintf(A.init_ts.name, sizeof(A.init_ts.name), "(before recording)");
	A.init_ts.next = NULL;
	A.threads = &A.init_ts;
	int rc = sym_new(&A.sym);
	if (!rc && A.opts.mode == AGENT_MODE_COUNT)
		rc = count_new(&A.cnt, &A.opts, A.sym, A.jvmti);
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	char err[512];
	if (agent_opts_parse(&A.opts, options, err, sizeof(err))) {
		complain("%s", err);
		return JNI_ERR;
	}
	if (A.opts.help) {
		fputs(agent_opts_help(), stdout);
		fflush(stdout);
		return JNI_ERR;
	}
	snprintf(A.opts_string, sizeof(A.opts_string), "%s", options ? options : "");
	if (read_ablate()) {
		complain("%s", "HEAPFS_AGENT_ABLATE must be noalloc, events or notag");
		return JNI_ERR;
	}
	if (A.opts.stacks_asgct)
		asgct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	A.vm = vm;
	if ((*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_11) != JNI_OK) {
		complain("%s", "JVMTI 11 is not available (a JDK 11 or later is needed)");
		return JNI_ERR;
	}
	if (init_state()) {
		complain("%s", "out of memory");
		return JNI_ERR;
	}
	struct htr_writer_opts wo = { .zstd_level = A.opts.zstd_level };
	int rc = htr_writer_open(&A.w, A.opts.out, &wo);
	if (rc) {
		fprintf(stderr, "heapfs-agent: cannot create %s: %s\n", A.opts.out, strerror(-rc));
		return JNI_ERR;
	}
	if (add_capabilities(A.jvmti) ||
	    (*A.jvmti)->CreateRawMonitor(A.jvmti, "heapfs-agent", &A.mon) != JVMTI_ERROR_NONE ||
	    set_callbacks(A.jvmti)) {
		complain("%s", "JVMTI setup failed");
		return JNI_ERR;
	}
	if (agent_opts_gc_wait(&A.opts) && gcwait_onload(A.jvmti))
		fprintf(stderr, "heapfs-agent: gcwait: no NativeMethodBind events; back-to-back "
				"System.gc() calls may leave GCs without a graph\n");
	if (A.opts.mode == AGENT_MODE_COUNT && (rc = count_onload(A.cnt, A.jvmti))) {
		fprintf(stderr, "heapfs-agent: mode=count setup failed: %s\n", strerror(-rc));
		return JNI_ERR;
	}
	return JNI_OK;
}

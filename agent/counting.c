/* counting.c - mode=count: allocation counts per site from DuckTracks path
 * counters (agent/instrument.h does the rewriting).
 *
 * The counters are a long[] in the helper class heapfs.Counters, which
 * the agent writes at load time into a private directory appended to the
 * bootstrap class path: every class loader finds it, and a class
 * retransformed later still reaches it.  The array starts small and is
 * replaced by a longer one at the ClassPrepare of a class that needs more
 * (before its code runs); older arrays are kept and added up, since code
 * that read the field before may still increment them.  ClassFileLoadHook
 * instruments classes loaded after VMInit by application class loaders
 * (not the boot or platform loader: code in named JDK modules cannot read
 * the boot loader's unnamed module, where the helper lives).  Hooks are
 * serialized by one mutex (the instrumenter uses qsort contexts in
 * globals, and the tables below grow).
 *
 * Per site, count = sum over counters of value(counter) * coefficient,
 * plus the exception corrections.  A counted loop's counter (loops=on,
 * sink_trip) packs the adds made at the loop's exits above its turns:
 * every read takes it apart (loops.h, trip_count_read) into its value,
 * the turns, and its increments, the adds (counter_incr); count_poll reads
 * these counters at least every POLL_MAX_MS so that the turns never carry
 * into the adds.  Plain increments by default: threads
 * racing on a counter may lose increments; atomic=on makes them atomic
 * (VarHandle getAndAdd in heapfs.Counters.inc).
 *
 * Exceptions (path counters): a path's counters may count its
 * allocations before they happen or after, so an exception that leaves
 * a frame mid-path leaves that frame's account off by a correction that
 * depends on the frame's bytecode offset.  exceptions=bytecode (the
 * default): instrument.c puts handlers into the code that increment
 * counters meaning the corrections (nothing to do here).
 * exceptions=events: instrument.c reports the corrections; the JVMTI
 * Exception event (at the throw, before any frame is unwound) walks the
 * thread's frames from the top down to the frame that will catch it
 * (JVMTI names its method and handler) and adds each instrumented frame's
 * correction; the catching frame's path starts afresh at its handler
 * (paths.h: a handler starts its own path from X).  The walk stops at a
 * native frame below a Java one (the exception goes into native code,
 * which may handle it or throw another one, reported afresh: reflection's
 * InvocationTargetException) and after a <clinit> frame (the VM turns it
 * into an ExceptionInInitializerError thrown, and reported, afresh);
 * native frames on top (the exception comes out of native code) are
 * passed over.
 *
 * Method ids: mode=count's METHOD events share mode=full's id space
 * (symbols.c, sym_method): at ClassPrepare of an instrumented class its
 * methods' jmethodIDs are registered there, and a site is written once
 * its method has an id (a site can only count once its class ran, i.e.
 * after ClassPrepare).
 */
#include "agent/agent.h"
#include "agent/instrument.h"
#include "agent/loops.h"
#include "agent/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#define NO_ID UINT32_MAX

struct cmethod {
	char *cls, *name, *desc;    /* owned; cls with '/' */
	uint32_t site_first, nsites;
	/* hot paths (hot=N): the path graph and the counter of each edge */
	uint32_t nblocks, nnormal, nedges;
	struct pedge *e;            /* owned, [nedges] */
	uint32_t *cnt;              /* owned, [nedges], UINT32_MAX none */
	struct cfg *g;              /* owned, NULL none: its CFG (instr_plan_unchanged) */
	uint32_t init;              /* a constructor's super() call (graph()), UINT32_MAX */
	uint32_t *latch, nlatch;    /* owned, graph()'s counted loops (latch, head pairs) */
	double *freq;               /* owned, [nnormal]: measured, for the next version */
	int state;                  /* HOT_* */
	int final;                  /* planned from measured frequencies, or per site */
	int per_site;               /* this version has one counter per site */
	int sites_chosen;           /* ... by instrument.c (sink_sites_chosen) */
	int demote;                 /* its next version gets one counter per site */
	uint64_t measured_sum;      /* its counters' total when last measured (hot=N) */
	uint32_t next_version;      /* the next C.m of the same method, NO_ID none */
	/* exception corrections: C.r[r_first .. r_first + nr), C.x[x_first ..) */
	uint32_t r_first, nr, x_first, nx;
	/* counter inlining: its sites nsites + j are calls of the clones
	 * C.clone[C.pseudo[pseudo_first + j]] */
	uint32_t pseudo_first, npseudo;
	uint32_t sym_id;            /* METHOD id (symbols.c), NO_ID before ClassPrepare */
	jmethodID mid;              /* set at ClassPrepare */
	uint64_t code_hash;         /* instr_code_hash (profile=FILE) */
	int profiled;               /* planned from the profile's frequencies (or per site) */
};
enum { HOT_NO = 0, HOT_PENDING, HOT_DONE };
struct csite {
	uint32_t method, pc, line;
	char *type;                 /* owned */
	int written;                /* COUNT_SITE written (agent thread) */
};
/* A bytecode range of a method and the correction an exception leaving a
 * frame there needs: C.sem[sem_first .. sem_first + nsem). */
struct crange {
	uint32_t start, end, sem_first, nsem;
};
struct cexc {
	uint16_t start, end, handler;
};
/* An instrumented class (one per hook call that changed it), by name:
 * ClassPrepare finds its methods C.m[m_first .. m_first + nm). */
struct cclass {
	const char *name;           /* C.m[m_first].cls */
	uint32_t m_first, nm;
	int prepared;
	struct cclass *next;        /* other classes of the same name (loaders) */
	UT_hash_handle hh;
};
/* The versions of one method (class name, name, descriptor; every
 * loader's): C.m indexes from first to last through next_version, in the
 * order they were instrumented.  The hooks look a method up at every
 * instrumentation (sink_method, sink_freq): a scan of all C.m there made
 * hot=N's retransformations cost 2.9 ms a class on ANTLR 3
 * (111 classes, 324 ms), 1.7 ms with this index (109, 189 ms). */
struct cversions {
	char *key;                  /* owned: cls \0 name \0 desc */
	size_t keylen;
	uint32_t first, last;
	UT_hash_handle hh;
};
/* jmethodID -> instrumented method (exception walks). */
struct cmid {
	jmethodID mid;
	uint32_t m;                 /* C.m index, NO_ID: not instrumented */
	int clinit;
	UT_hash_handle hh;
};
struct csem {
	uint32_t site;              /* global site index */
	int32_t coef;
};
/* Callers that could not call a method's clone because it was not
 * registered when they were instrumented (its class was loaded after
 * them): with hot=N, once the method was called N times, they are
 * retransformed so that they call the clone (count_poll, relink). */
struct cwait {
	char *key;                  /* owned: as struct cclone's */
	size_t keylen;
	struct cwaiter { jweak loader; char *cls; } *w; /* owned, [n] */
	uint32_t n, cap;
	UT_hash_handle hh;
};
/* A method's clone that callers defined by the same loader may call
 * instead of the method (counter inlining, instrument.h): one completed
 * call of it counts E, C.sem[sem_first .. sem_first + nsem). */
struct cclone {
	char *key;                  /* owned: cls \0 name \0 desc (the original's) */
	size_t keylen;
	jweak loader;               /* the class's defining loader */
	uint32_t sem_first, nsem;
	uint32_t id;                /* its index in C.clone: the handle callers get */
	uint32_t method;            /* the original's C.m index (first version) */
	uint32_t next;              /* the same key, another loader: C.clone index, NO_ID */
	/* profile=FILE: callers of a linked method (profile.h) call its clone
	 * before its class was seen: pending until the class registers it
	 * (sink_clone, sink_clone_none), its E empty until then; orphan: its
	 * key's clone was registered under another loader, which the callers'
	 * loader may resolve the class to (resolve_orphans) */
	int pending, orphan;
	int empty;                  /* a trampoline (sink_clone_none): counts nothing for callers */
	UT_hash_handle hh;          /* the first of a key is in C.clones */
};
/* A counter or correction range whose semantics name a pending clone:
 * pushed again once the clone's E is known (repush_refs). */
struct cref {
	uint32_t index;             /* C.c index, or C.r index (range) */
	int range;
	uint32_t method, n;
	uint32_t *k;                /* owned, [n] */
	int32_t *coef;              /* owned, [n] */
};
struct ccounter {
	uint32_t sem_first, nsem;
	uint32_t method;            /* C.m index */
	uint32_t trip;              /* a counted loop's (sink_trip): 1 + its C.trips
				     * index; 0 for any other counter */
};
/* A counted loop's counter, unpacked at every read (under arr_mu). */
struct ctrip {
	uint32_t counter;
	struct trip_count n;
};

static struct {
	pthread_mutex_t mu;
	int active;                 /* after VMInit */
	jobject platform_loader;    /* global ref */
	char dir[64];               /* the helper class's directory */
	struct cmethod *m; uint32_t nm, cap_m;
	struct csite *s; uint32_t ns, cap_s;
	struct csem *sem; uint32_t nsem, cap_sem;
	struct ccounter *c;         /* [opts.counters] */
	uint32_t next_counter;
	uint64_t classes, failed;
	uint64_t hook_ns[2];                  /* in instr_class: at load, at retransformation */
	/* trace output (agent thread only): what was written already */
	uint32_t sites_written;
	int64_t *last; uint32_t cap_last;  /* per site: counts written so far */
	struct instr_stats st;
	/* exception corrections */
	struct crange *r; uint32_t nr, cap_r;
	struct cexc *x; uint32_t nx, cap_x;
	int64_t *corr; uint32_t cap_corr;     /* per site, added to the counts */
	struct cclass *classes_by_name;
	struct cversions *versions;
	struct cmid *mids;
	int retransforming;                   /* the current hook is a retransformation */
	/* the current hook's (NULL outside a hook) */
	JNIEnv *hook_jni;
	jobject hook_loader;
	const char *hook_name;
	/* counter inlining */
	struct cclone **clone; uint32_t nclone, cap_clone;
	struct cclone *clones;                /* by key */
	uint32_t *pseudo; uint32_t npseudo, cap_pseudo;
	struct cwait *waits;                  /* by key */
	uint64_t relinked;                    /* callers retransformed to call clones */
	struct cref *refs; uint32_t nrefs, cap_refs;
	uint64_t linked_ahead, orphans;       /* pending clones made, of them orphans */
	uint64_t exceptions, frames_corrected;
	/* the counter arrays: Counters.c now (the last) and the ones it
	 * replaced, which code that read the field before may still
	 * increment; counts add them all up (under arr_mu) */
	pthread_mutex_t arr_mu;
	jclass helper;                        /* global ref */
	jfieldID field;
	jlongArray *arrays; uint32_t *alen; uint32_t narrays;
	uint32_t jcap;                        /* length of the last array */
	struct ctrip *trips; uint32_t ntrips, cap_trips; /* counted loops' counters */
	int helper_failed;
	uint64_t exhausted;                   /* methods left uncounted: counters=N too small */
	uint64_t threads_live, threads_max;   /* of the program, alive now and at most (atomic) */
	/* profile=FILE (profile.h): the plans read at start */
	struct profile prof;
	int prof_on;
	uint64_t prof_planned, prof_sites;    /* method versions planned from it: paths, per site */
} C = { .mu = PTHREAD_MUTEX_INITIALIZER, .arr_mu = PTHREAD_MUTEX_INITIALIZER };

/* Counters.c's first length: small, so that a short run does not pay for
 * allocating and zeroing a large array (8 MiB for 2^20 counters: ~8 ms);
 * it doubles as classes need more, up to counters=N. */
#define INITIAL_COUNTERS 4096u

/* Notes an array (under arr_mu). */
static int keep_array(JNIEnv *jni, jobject a)
{
	jlongArray *na = realloc(C.arrays, (C.narrays + 1) * sizeof(*na));
	uint32_t *nl = na ? realloc(C.alen, (C.narrays + 1) * sizeof(*nl)) : NULL;
	if (na)
		C.arrays = na;
	if (!nl)
		return -ENOMEM;
	C.alen = nl;
	jobject g = (*jni)->NewGlobalRef(jni, a);
	if (!g)
		return -ENOMEM;
	C.arrays[C.narrays] = (jlongArray)g;
	C.alen[C.narrays++] = (uint32_t)(*jni)->GetArrayLength(jni, (jarray)g);
	C.jcap = C.alen[C.narrays - 1];
	return 0;
}

/* Makes Counters.c long enough for every counter reserved so far: called
 * before the code of a newly instrumented class can run (its ClassPrepare;
 * for a retransformation, its hook).  The first call initializes the
 * helper class and adopts the array it made. */
static void ensure_counters(JNIEnv *jni)
{
	pthread_mutex_lock(&C.mu);
	uint32_t need = C.next_counter;
	pthread_mutex_unlock(&C.mu);
	pthread_mutex_lock(&C.arr_mu);
	if (!C.helper && !C.helper_failed) {
		jclass k = (*jni)->FindClass(jni, INSTR_COUNTERS_CLASS);
		jfieldID f = k ? (*jni)->GetStaticFieldID(jni, k, INSTR_COUNTERS_FIELD, "[J") : NULL;
		jobject a = f ? (*jni)->GetStaticObjectField(jni, k, f) : NULL;
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		if (a && !keep_array(jni, a)) {
			C.helper = (jclass)(*jni)->NewGlobalRef(jni, k);
			C.field = f;
		}
		if (!C.helper) {
			C.helper_failed = 1;
			fprintf(stderr, "heapfs-agent: the counter class cannot be loaded: nothing is counted\n");
		}
	}
	if (C.helper && need > C.jcap) {
		uint32_t cap = C.jcap ? C.jcap : INITIAL_COUNTERS;
		while (cap < need)
			cap = cap > A.opts.counters / 2 ? A.opts.counters : cap * 2;
		jlongArray a = (*jni)->NewLongArray(jni, (jsize)cap);
		if (a && !keep_array(jni, a))
			(*jni)->SetStaticObjectField(jni, C.helper, C.field, a);
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		if (C.jcap < need)
			fprintf(stderr, "heapfs-agent: cannot grow the counters to %u: counts will be wrong\n", cap);
	}
	pthread_mutex_unlock(&C.arr_mu);
}

/* The first n counters' values, added up over every array: *out [n + 1]
 * (caller frees), a counted loop's counter unpacked into its turns, and
 * (adds not NULL) *adds [C.ntrips + 1] (caller frees) the adds of every
 * counted loop (ccounter.trip - 1 its index).  Every counter below n
 * belongs to a hook that has ended (a hook holds C.mu while it reserves
 * counters), so each counted loop among them is in *adds.  -ENOENT if no
 * array exists yet (no counter ran). */
static int read_counters(JNIEnv *jni, uint32_t n, jlong **out, uint64_t **adds)
{
	jlong *v = calloc((size_t)n + 1, sizeof(*v)), *part = malloc(((size_t)n + 1) * sizeof(*part));
	uint64_t *a = NULL;
	int rc = v && part ? 0 : -ENOMEM;
	pthread_mutex_lock(&C.arr_mu);
	if (!rc && !C.narrays)
		rc = -ENOENT;
	if (!rc && adds && !(a = calloc((size_t)C.ntrips + 1, sizeof(*a))))
		rc = -ENOMEM;
	for (uint32_t k = 0; k < C.narrays && !rc; k++) {
		uint32_t m = C.alen[k] < n ? C.alen[k] : n;
		(*jni)->GetLongArrayRegion(jni, C.arrays[k], 0, (jsize)m, part);
		for (uint32_t i = 0; i < m; i++)
			v[i] += part[i];
	}
	for (uint32_t t = 0; t < C.ntrips && !rc; t++) {
		struct ctrip *tr = &C.trips[t];
		if (tr->counter >= n)
			continue; /* read with the next larger n */
		trip_count_read(&tr->n, (uint64_t)v[tr->counter]);
		v[tr->counter] = (jlong)tr->n.turns;
		if (a)
			a[t] = tr->n.adds;
	}
	pthread_mutex_unlock(&C.arr_mu);
	free(part);
	if (rc) {
		free(v);
		free(a);
	} else {
		*out = v;
		if (adds)
			*adds = a;
	}
	return rc;
}

/* Reads the counted loops' counters alone, so that no loop's turns carry
 * into its adds between two reads (loops.h): count_poll's work without
 * hot=N. */
static void read_trips(JNIEnv *jni)
{
	pthread_mutex_lock(&C.arr_mu);
	for (uint32_t t = 0; t < C.ntrips; t++) {
		struct ctrip *tr = &C.trips[t];
		jlong sum = 0, part = 0;
		for (uint32_t k = 0; k < C.narrays; k++) {
			if (tr->counter >= C.alen[k])
				continue;
			(*jni)->GetLongArrayRegion(jni, C.arrays[k], (jsize)tr->counter, 1, &part);
			sum = (jlong)((uint64_t)sum + (uint64_t)part);
		}
		if (C.narrays)
			trip_count_read(&tr->n, (uint64_t)sum);
	}
	pthread_mutex_unlock(&C.arr_mu);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t n = *cap ? *cap * 2 : 1024;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, (size_t)n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Whether classes named so (name[0..len)) are never instrumented: the
 * JDK's, and the agent's helpers. */
static int skipped_prefix(const char *name, size_t len)
{
	static const char *const prefixes[] = { "java/", "javax/", "jdk/", "sun/", "com/sun/", "heapfs/" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);
		if (len >= pl && !strncmp(name, prefixes[i], pl))
			return 1;
	}
	return 0;
}

/* ---- the instrumenter's sink (under C.mu) ------------------------------- */

static uint32_t sink_reserve(void *ctx, uint32_t n)
{
	(void)ctx;
	if (C.next_counter + (uint64_t)n > A.opts.counters) {
		C.exhausted++;
		return UINT32_MAX;
	}
	uint32_t b = C.next_counter;
	C.next_counter += n;
	return b;
}

/* The versions of the method, NULL if none yet.  *key (malloc'd, the
 * caller frees) and *keylen are set for versions_add; *key NULL: out of
 * memory. */
static struct cversions *versions_find(const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
				       size_t dl, char **key, size_t *keylen)
{
	struct cversions *v = NULL;
	if ((*key = profile_key(cls, cl, name, nl, desc, dl, keylen)))
		HASH_FIND(hh, C.versions, *key, *keylen, v);
	return v;
}

/* Appends C.m[i] to the versions of its method (v, or a new entry taking
 * over key).  0 or -ENOMEM (key freed either way). */
static int versions_add(struct cversions *v, char *key, size_t keylen, uint32_t i)
{
	C.m[i].next_version = NO_ID;
	if (v) {
		free(key);
		C.m[v->last].next_version = i;
		v->last = i;
		return 0;
	}
	if (!(v = calloc(1, sizeof(*v)))) {
		free(key);
		return -ENOMEM;
	}
	v->key = key;
	v->keylen = keylen;
	v->first = v->last = i;
	HASH_ADD_KEYPTR(hh, C.versions, v->key, v->keylen, v);
	return 0;
}

/* The profile's plan for a method of which no version was measured in
 * this run (v: its versions, NULL none; key: versions_find's): its
 * frequencies, or NULL with *sites = 1; NULL with *sites untouched when
 * there is none (no profile=FILE, or not for this code).  sink_freq plans
 * the method with it; sink_method tells from it that the version is
 * final. */
static const double *profile_plan_of(const struct cversions *v, const char *key, size_t keylen, uint64_t hash,
				     uint32_t nblocks, uint32_t nnormal, int *sites)
{
	if (!C.prof_on || !key)
		return NULL;
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = C.m[i].next_version)
		if (C.m[i].freq || C.m[i].per_site || C.m[i].demote)
			return NULL; /* measured: sink_freq's own plan */
	return profile_plan(&C.prof, key, keylen, hash, nblocks, nnormal, sites);
}

static uint32_t sink_method(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			    size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal)
{
	(void)ctx;
	if (grow((void **)&C.m, &C.cap_m, C.nm + 1, sizeof(*C.m)) ||
	    grow((void **)&C.s, &C.cap_s, C.ns + nsites, sizeof(*C.s)))
		return UINT32_MAX;
	struct cmethod *m = &C.m[C.nm];
	memset(m, 0, sizeof(*m));
	m->cls = strndup(cls, cl);
	m->name = strndup(name, nl);
	m->desc = strndup(desc, dl);
	if (!m->cls || !m->name || !m->desc) {
		free(m->cls);
		free(m->name);
		free(m->desc);
		return UINT32_MAX;
	}
	char *key;
	size_t keylen;
	struct cversions *v = versions_find(cls, cl, name, nl, desc, dl, &key, &keylen);
	/* planned from the profile (as sink_freq just did) */
	int profiled_sites = 0;
	int profiled = profile_plan_of(v, key, keylen, code_hash, nblocks, nnormal, &profiled_sites) || profiled_sites;
	if (!key || versions_add(v, key, keylen, C.nm)) {
		free(m->cls);
		free(m->name);
		free(m->desc);
		return UINT32_MAX;
	}
	m->nsites = nsites;
	m->sym_id = NO_ID;
	m->code_hash = code_hash; /* for the profile (sink_graph sets the sizes too) */
	m->nblocks = nblocks;
	m->nnormal = nnormal;
	m->profiled = profiled;
	C.prof_planned += profiled && !profiled_sites;
	C.prof_sites += profiled_sites;
	/* a new version of a method (retransformed) keeps its sites: the
	 * counts of every version add up on them; exception walks use the
	 * new version's corrections for frames running the new code (frames
	 * running the old code: obsolete_version).  A version
	 * planned from measured frequencies is final (HOT_DONE); one planned
	 * without is measured (HOT_NO), afresh in its own counters.  So is
	 * one planned from the profile: final, never measured. */
	uint32_t first = NO_ID;
	int measured = profiled, sites = profiled_sites;
	for (uint32_t i = v ? v->first : NO_ID; i != C.nm && i != NO_ID; i = C.m[i].next_version) {
		const struct cmethod *o = &C.m[i];
		if (o->nsites == nsites) {
			first = first == NO_ID ? i : first;
			measured |= o->freq != NULL || o->profiled;
			sites |= o->per_site || o->demote;
		}
	}
	if (first != NO_ID) {
		const struct cmethod *o = &C.m[first];
		m->site_first = o->site_first;
		m->state = measured || sites ? HOT_DONE : HOT_NO;
		m->final = measured || sites;
		m->per_site = sites;
		if (!C.retransforming)
			return C.nm++; /* the same class from another loader */
		m->sym_id = o->sym_id;
		m->mid = o->mid;
		struct cmid *e = NULL;
		if (o->mid)
			HASH_FIND_PTR(C.mids, &o->mid, e);
		if (e)
			e->m = C.nm;
		return C.nm++;
	}
	m->state = profiled ? HOT_DONE : HOT_NO;
	m->final = profiled;
	m->per_site = profiled_sites;
	m->site_first = C.ns;
	memset(C.s + C.ns, 0, nsites * sizeof(*C.s)); /* sink_site tells new from described */
	C.ns += nsites;
	return C.nm++;
}

static int sink_site(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type)
{
	(void)ctx;
	char *t = strdup(type);
	if (!t)
		return -ENOMEM;
	struct csite *s = &C.s[C.m[method].site_first + k];
	if (s->type && s->method != method) /* a new version: the site stays as first described */
		free(t);
	else
		*s = (struct csite){ method, pc, line, t, 0 };
	return 0;
}

static void free_graph(struct cmethod *m)
{
	free(m->e);
	free(m->cnt);
	free(m->latch);
	m->e = NULL;
	m->cnt = NULL;
	m->latch = NULL;
	m->nlatch = 0;
	if (m->g) {
		cfg_free(m->g);
		free(m->g);
		m->g = NULL;
	}
}

static int sink_graph(void *ctx, uint32_t method, const struct cfg *g, uint32_t init, uint32_t nedges,
		      const struct pedge *e, const uint32_t *counter, const uint32_t *latch, uint32_t nlatch)
{
	(void)ctx;
	struct cmethod *m = &C.m[method];
	if ((!A.opts.hot && !C.prof_on) || m->state == HOT_DONE)
		return 0; /* not to be measured */
	m->e = malloc((nedges + 1) * sizeof(*m->e));
	m->cnt = malloc((nedges + 1) * sizeof(*m->cnt));
	/* the CFG, to tell whether measured frequencies change the plan
	 * (count_poll) */
	if ((m->g = malloc(sizeof(*m->g))) && cfg_copy(g, m->g)) {
		free(m->g);
		m->g = NULL;
	}
	m->init = init;
	if ((m->latch = malloc((2 * (size_t)nlatch + 1) * sizeof(*m->latch))) && nlatch)
		memcpy(m->latch, latch, 2 * (size_t)nlatch * sizeof(*latch));
	m->nlatch = nlatch;
	if (!m->e || !m->cnt || !m->latch) {
		free_graph(m);
		return 0; /* no hot path for this one */
	}
	memcpy(m->e, e, nedges * sizeof(*e));
	memcpy(m->cnt, counter, nedges * sizeof(*counter));
	m->nblocks = g->nblocks;
	m->nnormal = g->nnormal;
	m->nedges = nedges;
	return 0;
}

/* The measured frequencies of a method being retransformed, if a version
 * of it became hot (this time or at an earlier retransformation of its
 * class); else the profile's for its code (profile=FILE). */
static const double *sink_freq(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			       size_t dl, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal, int *sites)
{
	(void)ctx;
	const double *freq = NULL;
	char *key;
	size_t keylen;
	const struct cversions *v = versions_find(cls, cl, name, nl, desc, dl, &key, &keylen);
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = C.m[i].next_version) {
		const struct cmethod *m = &C.m[i];
		if (m->freq || m->per_site || m->demote) {
			*sites |= m->per_site || m->demote;
			if (m->freq && m->nnormal == nnormal && m->nblocks == nblocks)
				freq = m->freq;
		}
	}
	if (!freq && !*sites)
		freq = profile_plan_of(v, key, keylen, code_hash, nblocks, nnormal, sites);
	free(key);
	return freq;
}

/* Appends coef times site k of method to C.sem: an allocation site, or a
 * call of a clone (its E, coef times). */
static int push_sem(uint32_t method, uint32_t k, int32_t coef)
{
	const struct cmethod *m = &C.m[method];
	if (k < m->nsites) {
		if (grow((void **)&C.sem, &C.cap_sem, C.nsem + 1, sizeof(*C.sem)))
			return -ENOMEM;
		C.sem[C.nsem++] = (struct csem){ m->site_first + k, coef };
		return 0;
	}
	const struct cclone *cl = C.clone[C.pseudo[m->pseudo_first + k - m->nsites]];
	if (grow((void **)&C.sem, &C.cap_sem, C.nsem + cl->nsem, sizeof(*C.sem)))
		return -ENOMEM;
	for (uint32_t i = 0; i < cl->nsem; i++) {
		const struct csem *e = &C.sem[cl->sem_first + i];
		C.sem[C.nsem++] = (struct csem){ e->site, coef * e->coef };
	}
	return 0;
}

/* push_sem for coef[i] times site k[i], i < n: the semantics of a
 * counter, correction or clone, from C.sem[*first] on (none appended on
 * failure).  0 or -ENOMEM. */
static int push_sems(uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n, uint32_t *first)
{
	*first = C.nsem;
	for (uint32_t i = 0; i < n; i++)
		if (push_sem(method, k[i], coef[i])) {
			C.nsem = *first;
			return -ENOMEM;
		}
	return 0;
}

/* The clone a site of a method calls (counter inlining), or NULL. */
static struct cclone *site_clone(uint32_t method, uint32_t k)
{
	const struct cmethod *m = &C.m[method];
	return k < m->nsites ? NULL : C.clone[C.pseudo[m->pseudo_first + k - m->nsites]];
}

/* Whether semantics (k, n) name a pending clone (clone NO_ID), or that
 * clone. */
static int names_clone(uint32_t method, const uint32_t *k, uint32_t n, uint32_t clone)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct cclone *cl = site_clone(method, k[i]);
		if (cl && (clone == NO_ID ? cl->pending : cl->id == clone))
			return 1;
	}
	return 0;
}

/* Keeps semantics that name a pending clone, to push them again. */
static int add_ref(uint32_t index, int range, uint32_t method, const uint32_t *k, const int32_t *coef,
		   uint32_t n)
{
	if (!names_clone(method, k, n, NO_ID))
		return 0;
	if (grow((void **)&C.refs, &C.cap_refs, C.nrefs + 1, sizeof(*C.refs)))
		return -ENOMEM;
	struct cref *r = &C.refs[C.nrefs];
	*r = (struct cref){ index, range, method, n, malloc((n + 1) * sizeof(uint32_t)),
			    malloc((n + 1) * sizeof(int32_t)) };
	if (!r->k || !r->coef) {
		free(r->k);
		free(r->coef);
		return -ENOMEM;
	}
	memcpy(r->k, k, n * sizeof(uint32_t));
	memcpy(r->coef, coef, n * sizeof(int32_t));
	C.nrefs++;
	return 0;
}

/* Clone `clone` got its E: the semantics naming it are pushed again
 * (appended to C.sem; the old copies stay, unused).  0 or -ENOMEM. */
static int repush_refs(uint32_t clone)
{
	for (uint32_t i = 0; i < C.nrefs;) {
		struct cref *r = &C.refs[i];
		uint32_t first;
		if (!names_clone(r->method, r->k, r->n, clone)) {
			i++;
			continue;
		}
		if (push_sems(r->method, r->k, r->coef, r->n, &first))
			return -ENOMEM;
		if (r->range) {
			C.r[r->index].sem_first = first;
			C.r[r->index].nsem = C.nsem - first;
		} else {
			C.c[r->index].sem_first = first;
			C.c[r->index].nsem = C.nsem - first;
		}
		if (names_clone(r->method, r->k, r->n, NO_ID)) {
			i++;
			continue;
		}
		free(r->k);
		free(r->coef);
		C.refs[i] = C.refs[--C.nrefs];
	}
	return 0;
}

static int sink_counter(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
			uint32_t n)
{
	(void)ctx;
	uint32_t first;
	if (push_sems(method, k, coef, n, &first))
		return -ENOMEM;
	C.c[counter] = (struct ccounter){ first, C.nsem - first, method, 0 };
	return add_ref(counter, 0, method, k, coef, n);
}

static int sink_trip(void *ctx, uint32_t method, uint32_t counter)
{
	(void)ctx;
	if (counter >= A.opts.counters || C.c[counter].method != method)
		return -EINVAL;
	if (C.c[counter].trip)
		return 0;
	pthread_mutex_lock(&C.arr_mu); /* read_counters walks C.trips */
	int rc = grow((void **)&C.trips, &C.cap_trips, C.ntrips + 1, sizeof(*C.trips));
	if (!rc) {
		C.trips[C.ntrips++] = (struct ctrip){ .counter = counter };
		C.c[counter].trip = C.ntrips;
	}
	pthread_mutex_unlock(&C.arr_mu);
	return rc;
}

/* The increments counter i executed, from its value read (read_counters):
 * the value, but for a counted loop's counter, whose value is its turns:
 * its adds.  Under C.mu. */
static uint64_t counter_incr(uint32_t i, jlong value, const uint64_t *adds)
{
	if (!C.c[i].trip)
		return (uint64_t)value;
	return adds ? adds[C.c[i].trip - 1] : 0;
}

/* The next clone of the same key (another loader), NULL none. */
static struct cclone *clone_next(const struct cclone *k)
{
	return k->next == NO_ID ? NULL : C.clone[k->next];
}

/* The clone of loader among head's chain (a key's clones), NULL none:
 * there is at most one per loader. */
static struct cclone *clone_of_loader(JNIEnv *jni, struct cclone *head, jobject loader)
{
	for (struct cclone *k = head; k; k = clone_next(k))
		if ((*jni)->IsSameObject(jni, k->loader, loader))
			return k;
	return NULL;
}

/* Clones (counter inlining): the clone of cls.name desc that the current
 * hook's loader defined, or NULL; *key (malloc'd, the caller frees; NULL:
 * out of memory) and *head for sink_clone. */
static struct cclone *clone_find(const char *cls, size_t cl, const char *name, size_t nl, const char *desc, size_t dl,
				 char **key, size_t *keylen, struct cclone **head)
{
	*head = NULL;
	if (!(*key = profile_key(cls, cl, name, nl, desc, dl, keylen)))
		return NULL;
	HASH_FIND(hh, C.clones, *key, *keylen, *head);
	return clone_of_loader(C.hook_jni, *head, C.hook_loader);
}

/* Notes the current hook's class as waiting for the clone of key (owned
 * by the callee from here on). */
static void add_waiter(char *key, size_t keylen)
{
	struct cwait *w = NULL;
	HASH_FIND(hh, C.waits, key, keylen, w);
	if (!w) {
		if (!(w = calloc(1, sizeof(*w)))) {
			free(key);
			return;
		}
		w->key = key;
		w->keylen = keylen;
		HASH_ADD_KEYPTR(hh, C.waits, w->key, w->keylen, w);
	} else {
		free(key);
	}
	for (uint32_t i = 0; i < w->n; i++) /* a class calls a constructor from many places */
		if (!strcmp(w->w[i].cls, C.hook_name) &&
		    (*C.hook_jni)->IsSameObject(C.hook_jni, w->w[i].loader, C.hook_loader))
			return;
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 4;
		struct cwaiter *a = realloc(w->w, cap * sizeof(*a));
		if (!a)
			return;
		w->w = a;
		w->cap = cap;
	}
	char *cls = strdup(C.hook_name);
	jweak loader = (*C.hook_jni)->NewWeakGlobalRef(C.hook_jni, C.hook_loader);
	if (!cls || !loader) {
		free(cls);
		if (loader)
			(*C.hook_jni)->DeleteWeakGlobalRef(C.hook_jni, loader);
		return;
	}
	w->w[w->n++] = (struct cwaiter){ loader, cls };
}

/* A new clone of key (taken over) for the current hook's loader, after
 * head (the key's first, NULL none).  NULL: out of memory (key freed). */
static struct cclone *new_clone(char *key, size_t keylen, struct cclone *head)
{
	struct cclone *cl = calloc(1, sizeof(*cl));
	jweak loader = (*C.hook_jni)->NewWeakGlobalRef(C.hook_jni, C.hook_loader);
	if (!cl || !loader || grow((void **)&C.clone, &C.cap_clone, C.nclone + 1, sizeof(*C.clone))) {
		free(cl);
		free(key);
		if (loader)
			(*C.hook_jni)->DeleteWeakGlobalRef(C.hook_jni, loader);
		return NULL;
	}
	cl->key = key;
	cl->keylen = keylen;
	cl->loader = loader;
	cl->id = C.nclone;
	cl->method = NO_ID;
	cl->next = NO_ID;
	C.clone[C.nclone] = cl;
	if (!head) {
		HASH_ADD_KEYPTR(hh, C.clones, cl->key, cl->keylen, cl);
	} else {
		while (clone_next(head))
			head = clone_next(head);
		head->next = C.nclone;
	}
	C.nclone++;
	return cl;
}

static uint32_t sink_callee(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			    size_t dl)
{
	(void)ctx;
	char *key;
	size_t keylen;
	struct cclone *head, *k = clone_find(cls, cl, name, nl, desc, dl, &key, &keylen, &head);
	if (k || !key) {
		free(key);
		return k && !k->empty ? k->id : UINT32_MAX;
	}
	/* linked by the profile: the class will have the clone (instrument.h,
	 * linked), whose E is pushed into these semantics once known */
	if (C.prof_on && profile_linked(&C.prof, key, keylen) && C.hook_name && !skipped_prefix(cls, cl)) {
		if (!(k = new_clone(key, keylen, head)))
			return UINT32_MAX;
		k->pending = 1;
		C.linked_ahead++;
		return k->id;
	}
	if ((!A.opts.hot && !C.prof_on) || !C.hook_name || skipped_prefix(cls, cl)) {
		free(key);
		return UINT32_MAX;
	}
	add_waiter(key, keylen); /* hot=N relinks it, the profile links the next run's */
	return UINT32_MAX;
}

/* The key's pending clones of other loaders (head on) may stand for the
 * one registered now: resolve_orphans tells. */
static void mark_orphans(struct cclone *head)
{
	for (struct cclone *k = head; k; k = clone_next(k))
		if (k->pending && !k->orphan &&
		    !(*C.hook_jni)->IsSameObject(C.hook_jni, k->loader, C.hook_loader)) {
			k->orphan = 1;
			C.orphans++;
		}
}

/* clone_find for a clone the current hook's class registers (sink_clone,
 * sink_clone_none): the key's pending clones of other loaders become
 * orphans.  *key NULL: out of memory. */
static struct cclone *clone_find_registering(const char *cls, size_t cl, const char *name, size_t nl,
					     const char *desc, size_t dl, char **key, size_t *keylen,
					     struct cclone **head)
{
	struct cclone *found = clone_find(cls, cl, name, nl, desc, dl, key, keylen, head);
	if (*key)
		mark_orphans(*head);
	return found;
}

/* A pending clone's E is known: e (C.sem[first .. first + n)), method. */
static int bind_clone(struct cclone *cl, uint32_t method, uint32_t first, uint32_t n, int empty)
{
	cl->sem_first = first;
	cl->nsem = n;
	cl->method = method;
	cl->empty = empty;
	cl->pending = 0;
	if (cl->orphan) {
		cl->orphan = 0;
		C.orphans--;
	}
	return repush_refs(cl->id);
}

/* A clone is registered once per loader; a retransformation of its class
 * makes the same clone again (instrument.h), which keeps the first E. */
static int sink_clone(void *ctx, uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n)
{
	(void)ctx;
	const struct cmethod *m = &C.m[method];
	char *key;
	size_t keylen;
	uint32_t first;
	struct cclone *head, *found = clone_find_registering(m->cls, strlen(m->cls), m->name, strlen(m->name), m->desc,
							     strlen(m->desc), &key, &keylen, &head);
	if (!key)
		return -ENOMEM;
	if (found) {
		free(key);
		if (!found->pending)
			return 0;
		return push_sems(method, k, coef, n, &first) ? -ENOMEM
							     : bind_clone(found, method, first, C.nsem - first, 0);
	}
	if (push_sems(method, k, coef, n, &first)) {
		free(key);
		return -ENOMEM;
	}
	struct cclone *cl = new_clone(key, keylen, head);
	if (!cl) {
		C.nsem = first;
		return -ENOMEM;
	}
	cl->method = method;
	cl->sem_first = first;
	cl->nsem = C.nsem - first;
	return 0;
}

/* A linked method's clone is a trampoline (instrument.h): callers count
 * nothing for it; callers still to come call the original. */
static int sink_clone_none(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			   size_t dl)
{
	(void)ctx;
	char *key;
	size_t keylen;
	struct cclone *head, *found = clone_find_registering(cls, cl, name, nl, desc, dl, &key, &keylen, &head);
	if (!key)
		return -ENOMEM;
	if (found) {
		free(key);
		return found->pending ? bind_clone(found, NO_ID, C.nsem, 0, 1) : 0;
	}
	struct cclone *k = new_clone(key, keylen, head);
	if (!k)
		return -ENOMEM;
	k->empty = 1;
	return 0;
}

static int sink_linked(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
		       size_t dl)
{
	(void)ctx;
	size_t keylen;
	char *key = C.prof_on ? profile_key(cls, cl, name, nl, desc, dl, &keylen) : NULL;
	int linked = key && profile_linked(&C.prof, key, keylen);
	free(key);
	return linked;
}

static int sink_inlined(void *ctx, uint32_t method, uint32_t k, uint32_t handle)
{
	(void)ctx;
	struct cmethod *m = &C.m[method];
	if (grow((void **)&C.pseudo, &C.cap_pseudo, C.npseudo + 1, sizeof(*C.pseudo)))
		return -ENOMEM;
	if (!m->npseudo)
		m->pseudo_first = C.npseudo;
	if (k != m->nsites + m->npseudo) /* announced in order */
		return -EINVAL;
	C.pseudo[C.npseudo++] = handle;
	m->npseudo++;
	return 0;
}

static int sink_correction(void *ctx, uint32_t method, uint32_t start, uint32_t end, const uint32_t *k,
			   const int32_t *coef, uint32_t n)
{
	(void)ctx;
	struct cmethod *m = &C.m[method];
	if (grow((void **)&C.r, &C.cap_r, C.nr + 1, sizeof(*C.r)))
		return -ENOMEM;
	if (!m->nr)
		m->r_first = C.nr;
	uint32_t first;
	if (push_sems(method, k, coef, n, &first))
		return -ENOMEM;
	C.r[C.nr] = (struct crange){ start, end, first, C.nsem - first };
	if (add_ref(C.nr, 1, method, k, coef, n))
		return -ENOMEM;
	C.nr++;
	m->nr++;
	return 0;
}

static int sink_handlers(void *ctx, uint32_t method, const uint16_t *seh, uint32_t n)
{
	(void)ctx;
	if (grow((void **)&C.x, &C.cap_x, C.nx + n, sizeof(*C.x)))
		return -ENOMEM;
	C.m[method].x_first = C.nx;
	C.m[method].nx = n;
	for (uint32_t i = 0; i < n; i++)
		C.x[C.nx++] = (struct cexc){ seh[3 * i], seh[3 * i + 1], seh[3 * i + 2] };
	return 0;
}

/* instrument.c gave this version one counter per site (the label in
 * HEAPFS_AGENT_METHODS; what the next version plans stays sink_freq's). */
static void sink_sites_chosen(void *ctx, uint32_t method)
{
	(void)ctx;
	if (method < C.nm)
		C.m[method].sites_chosen = 1;
}

static struct instr_sink sink = { .reserve = sink_reserve, .method = sink_method, .site = sink_site,
				  .counter = sink_counter, .freq = sink_freq, .graph = sink_graph,
				  .correction = sink_correction, .handlers = sink_handlers,
				  .sites_chosen = sink_sites_chosen };

/* ---- hooks ----------------------------------------------------------------- */

/* Notes an instrumented class for ClassPrepare (under C.mu). */
static void add_class(uint32_t m_first, uint32_t nm)
{
	struct cclass *k = calloc(1, sizeof(*k)), *head = NULL;
	if (!k)
		return; /* its methods get no METHOD ids: their sites are not written */
	k->name = C.m[m_first].cls;
	k->m_first = m_first;
	k->nm = nm;
	HASH_FIND_STR(C.classes_by_name, k->name, head);
	if (!head) {
		HASH_ADD_KEYPTR(hh, C.classes_by_name, k->name, strlen(k->name), k);
		return;
	}
	while (head->next)
		head = head->next;
	head->next = k;
}

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	(void)pd;
	if (!__atomic_load_n(&C.active, __ATOMIC_ACQUIRE) || !loader || !name || skipped_prefix(name, strlen(name)))
		return;
	/* class_being_redefined: a retransformation (hot=N); the bytes are the
	 * original ones again, instrumented afresh with measured frequencies */
	if (C.platform_loader && (*jni)->IsSameObject(jni, loader, C.platform_loader))
		return;
	struct buf out;
	buf_init(&out);
	pthread_mutex_lock(&C.mu);
	C.retransforming = redefined != NULL;
	C.hook_jni = jni;
	C.hook_loader = loader;
	C.hook_name = name;
	uint32_t m_first = C.nm;
	uint64_t t0 = agent_now_ns();
	int rc = instr_class(data, (size_t)len, &sink, A.opts.count_sites ? INSTR_SITES : INSTR_PATHS, &out, &C.st);
	C.hook_ns[redefined != NULL] += agent_now_ns() - t0;
	C.hook_jni = NULL;
	C.hook_loader = NULL;
	C.hook_name = NULL;
	if (rc < 0)
		C.failed++;
	else if (rc == 1)
		C.classes++;
	if (rc == 1 && !redefined && C.nm > m_first)
		add_class(m_first, C.nm - m_first);
	pthread_mutex_unlock(&C.mu);
	if (rc == 1 && redefined)
		ensure_counters(jni); /* no ClassPrepare follows a retransformation */
	unsigned char *p = NULL;
	if (rc == 1 && (*jvmti)->Allocate(jvmti, (jlong)out.len, &p) == JVMTI_ERROR_NONE) {
		memcpy(p, out.data, out.len);
		*new_len = (jint)out.len;
		*new_data = p;
	}
	buf_free(&out);
}

/* ClassPrepare: the jmethodIDs of an instrumented class's methods get
 * METHOD ids (symbols.c) and are noted for exception walks.  A class
 * defined by several loaders was instrumented once per loader: the
 * first not yet prepared is this one (classes are prepared in the order
 * they were loaded, for one name). */
static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)thread;
	char *sig = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return;
	size_t l = strlen(sig);
	uint32_t first = 0, n = 0;
	if (sig[0] == 'L' && l > 2) {
		sig[l - 1] = 0;
		pthread_mutex_lock(&C.mu);
		struct cclass *k = NULL;
		HASH_FIND_STR(C.classes_by_name, sig + 1, k);
		while (k && k->prepared)
			k = k->next;
		if (k) {
			k->prepared = 1;
			first = k->m_first;
			n = k->nm;
		}
		pthread_mutex_unlock(&C.mu);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	jint nm = 0;
	jmethodID *mids = NULL;
	if (!n)
		return;
	ensure_counters(jni); /* before any of its code runs */
	if ((*jvmti)->GetClassMethods(jvmti, klass, &nm, &mids) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < nm; i++) {
		char *name = NULL, *desc = NULL;
		if ((*jvmti)->GetMethodName(jvmti, mids[i], &name, &desc, NULL) != JVMTI_ERROR_NONE)
			continue;
		uint32_t found = NO_ID;
		pthread_mutex_lock(&C.mu);
		for (uint32_t j = first; j < first + n && found == NO_ID; j++)
			if (!strcmp(C.m[j].name, name) && !strcmp(C.m[j].desc, desc))
				found = j;
		pthread_mutex_unlock(&C.mu);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)desc);
		if (found == NO_ID)
			continue;
		uint32_t id = sym_method(jvmti, mids[i]);
		struct cmid *e = calloc(1, sizeof(*e));
		pthread_mutex_lock(&C.mu);
		C.m[found].sym_id = id;
		C.m[found].mid = mids[i];
		if (e) {
			struct cmid *old = NULL;
			HASH_FIND_PTR(C.mids, &mids[i], old);
			if (old) {
				old->m = found;
				free(e);
			} else {
				*e = (struct cmid){ .mid = mids[i], .m = found };
				HASH_ADD_PTR(C.mids, mid, e);
			}
		}
		pthread_mutex_unlock(&C.mu);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)mids);
}

/* A frame still running the code a retransformation replaced (hot=N)
 * has an obsolete jmethodID of its own: its version is the one before the
 * method's newest (C.m index, NO_ID if none).  Should a class have been
 * retransformed twice while such a frame lived, the frame's code may be
 * older still; taking the previous version is exact in the usual case. */
static uint32_t obsolete_version(jvmtiEnv *jvmti, jmethodID mid)
{
	char *name = NULL, *desc = NULL, *sig = NULL;
	jclass k = NULL;
	uint32_t newest = NO_ID, prev = NO_ID;
	if ((*jvmti)->GetMethodName(jvmti, mid, &name, &desc, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetMethodDeclaringClass(jvmti, mid, &k) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	size_t l = strlen(sig), keylen;
	if (l < 3 || sig[0] != 'L')
		goto out;
	char *key;
	const struct cversions *v = versions_find(sig + 1, l - 2, name, strlen(name), desc, strlen(desc), &key, &keylen);
	free(key);
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = C.m[i].next_version) {
		prev = newest;
		newest = i;
	}
out:
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)desc);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return prev;
}

/* The instrumented method of a frame (C.m index, NO_ID none), and whether
 * it is a <clinit>.  Unknown methods are looked up once (under C.mu). */
static uint32_t frame_method(jvmtiEnv *jvmti, jmethodID mid, int *clinit)
{
	struct cmid *e = NULL;
	HASH_FIND_PTR(C.mids, &mid, e);
	if (!e) {
		char *name = NULL;
		e = calloc(1, sizeof(*e));
		if (!e)
			return *clinit = 0, NO_ID;
		e->mid = mid;
		e->m = NO_ID;
		jboolean obsolete = JNI_FALSE;
		if ((*jvmti)->IsMethodObsolete(jvmti, mid, &obsolete) == JVMTI_ERROR_NONE && obsolete)
			e->m = obsolete_version(jvmti, mid);
		if ((*jvmti)->GetMethodName(jvmti, mid, &name, NULL, NULL) == JVMTI_ERROR_NONE && name) {
			e->clinit = !strcmp(name, "<clinit>");
			(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		}
		HASH_ADD_PTR(C.mids, mid, e);
	}
	if (e->m != NO_ID)
		e->clinit = !strcmp(C.m[e->m].name, "<clinit>");
	*clinit = e->clinit;
	return e->m;
}

/* Adds the correction of a frame of method m left at bytecode offset at. */
static void correct_frame(uint32_t m, uint32_t at)
{
	const struct cmethod *cm = &C.m[m];
	uint32_t lo = cm->r_first, hi = cm->r_first + cm->nr;
	while (lo < hi) { /* the first range ending after at */
		uint32_t mid = lo + (hi - lo) / 2;
		if (C.r[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == cm->r_first + cm->nr || C.r[lo].start > at)
		return; /* nothing to correct there */
	const struct crange *r = &C.r[lo];
	for (uint32_t i = 0; i < r->nsem; i++) {
		const struct csem *x = &C.sem[r->sem_first + i];
		uint32_t cap = C.cap_corr;
		if (grow((void **)&C.corr, &C.cap_corr, x->site + 1, sizeof(*C.corr)))
			return;
		memset(C.corr + cap, 0, (C.cap_corr - cap) * sizeof(*C.corr));
		C.corr[x->site] += x->coef;
	}
	C.frames_corrected++;
}

/* Whether method m's frame at offset at is inside a range handled at
 * handler: then it is the frame that catches. */
static int frame_catches(uint32_t m, uint32_t at, uint32_t handler)
{
	const struct cmethod *cm = &C.m[m];
	for (uint32_t i = cm->x_first; i < cm->x_first + cm->nx; i++)
		if (C.x[i].handler == handler && C.x[i].start <= at && at < C.x[i].end)
			return 1;
	return 0;
}

/* The Exception event: before anything is unwound.  Every frame from the
 * top down to the catching one is left mid-path (the catching one too: it
 * continues at its handler, where a new path starts). */
static void JNICALL on_exception(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, jlocation location,
				 jobject exception, jmethodID catch_method, jlocation catch_location)
{
	(void)jni;
	(void)thread;
	(void)method;
	(void)location;
	(void)exception;
	if (!__atomic_load_n(&C.active, __ATOMIC_ACQUIRE))
		return;
	enum { CHUNK = 64 };
	jvmtiFrameInfo fr[CHUNK];
	int done = 0, java = 0;
	pthread_mutex_lock(&C.mu);
	C.exceptions++;
	for (jint depth = 0; !done; depth += CHUNK) {
		jint n = 0;
		if ((*jvmti)->GetStackTrace(jvmti, NULL, depth, CHUNK, fr, &n) != JVMTI_ERROR_NONE || n <= 0)
			break;
		for (jint i = 0; i < n && !done; i++) {
			if (fr[i].location < 0) {
				/* native on top: thrown by native or VM code (reflection
				 * throwing InvocationTargetException), on its way out to
				 * the Java caller; below a Java frame: the exception goes
				 * into native code, which may handle it */
				done = java;
				continue;
			}
			java = 1;
			int clinit = 0;
			uint32_t m = frame_method(jvmti, fr[i].method, &clinit);
			uint32_t at = (uint32_t)fr[i].location;
			int catches = catch_method && fr[i].method == catch_method &&
				      (m == NO_ID || frame_catches(m, at, (uint32_t)catch_location));
			if (m != NO_ID)
				correct_frame(m, at);
			done = catches || clinit;
		}
		if (n < CHUNK)
			break;
	}
	pthread_mutex_unlock(&C.mu);
}

void count_set_callbacks(jvmtiEventCallbacks *cb)
{
	cb->ClassFileLoadHook = on_class_file_load;
	cb->ClassPrepare = on_class_prepare;
	cb->Exception = on_exception;
}

/* Threads.  Plain increments are exact while one thread at a time runs
 * counted code; with two or more alive at once, racing increments can be
 * lost, and allocs/stats says so.  So the agent keeps the most threads of
 * the program alive at once (main included; not the JVM's own threads,
 * which run in the system thread group or its InnocuousThreadGroup:
 * Attach Listener, Common-Cleaner, process reaper, ...; not the agent's). */
static int program_thread(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (!thread || (A.agent_thread && (*jni)->IsSameObject(jni, thread, A.agent_thread)))
		return 0;
	jvmtiThreadInfo ti;
	memset(&ti, 0, sizeof(ti));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &ti) != JVMTI_ERROR_NONE)
		return 0;
	int program = 1;
	jvmtiThreadGroupInfo gi;
	memset(&gi, 0, sizeof(gi));
	if (ti.thread_group && (*jvmti)->GetThreadGroupInfo(jvmti, ti.thread_group, &gi) == JVMTI_ERROR_NONE) {
		program = !gi.name || (strcmp(gi.name, "system") && strcmp(gi.name, "InnocuousThreadGroup"));
		(*jvmti)->Deallocate(jvmti, (unsigned char *)gi.name);
		if (gi.parent)
			(*jni)->DeleteLocalRef(jni, gi.parent);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)ti.name);
	if (ti.thread_group)
		(*jni)->DeleteLocalRef(jni, ti.thread_group);
	if (ti.context_class_loader)
		(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
	return program;
}

/* ThreadStart and ThreadEnd are posted on the thread itself: whether it
 * counted is remembered here, so that its end needs no second look. */
static __thread int tls_program_thread;

void count_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (!(tls_program_thread = program_thread(jvmti, jni, thread)))
		return;
	uint64_t live = __atomic_add_fetch(&C.threads_live, 1, __ATOMIC_ACQ_REL);
	uint64_t max = __atomic_load_n(&C.threads_max, __ATOMIC_RELAXED);
	while (live > max && !__atomic_compare_exchange_n(&C.threads_max, &max, live, 0, __ATOMIC_ACQ_REL,
							  __ATOMIC_RELAXED))
		;
}

void count_thread_end(void)
{
	if (tls_program_thread)
		__atomic_sub_fetch(&C.threads_live, 1, __ATOMIC_ACQ_REL);
	tls_program_thread = 0;
}

/* At exit, what the counts' exactness depends on (trace info, read by
 * allocs/stats): the increments, the exception corrections and the most
 * threads of the program alive at once. */
static int write_count_info(struct htr_writer *w)
{
	static const char *const exc[] = { [COUNT_EXC_OFF] = "off", [COUNT_EXC_EVENTS] = "events",
					   [COUNT_EXC_BYTECODE] = "bytecode" };
	char n[24];
	snprintf(n, sizeof(n), "%llu", (unsigned long long)__atomic_load_n(&C.threads_max, __ATOMIC_ACQUIRE));
	int rc = htr_write_info(w, "count.increments", A.opts.count_atomic ? "atomic" : "plain");
	if (!rc)
		rc = htr_write_info(w, "count.exceptions", A.opts.count_sites ? "sites" : exc[A.opts.count_exceptions]);
	return rc ? rc : htr_write_info(w, "count.threads_max", n);
}

/* Whether exceptions are corrected: path counters only (per-site counters
 * count right after each allocation: nothing to correct). */
static int corrects_exceptions(void)
{
	return !A.opts.count_sites && A.opts.count_exceptions == COUNT_EXC_EVENTS;
}

/* Writes a helper class file into C.dir/heapfs/.  0 or a negative errno. */
static int write_helper(const char *name, const struct buf *b)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs/%s.class", C.dir, name);
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(b->data, 1, b->len, f) == b->len ? 0 : -EIO;
	if (f && fclose(f))
		rc = -EIO;
	return rc;
}

int count_onload(jvmtiEnv *jvmti)
{
	C.c = calloc(A.opts.counters, sizeof(*C.c));
	if (!C.c)
		return -ENOMEM;
	sink.atomic = A.opts.count_atomic;
	sink.bytecode = !A.opts.count_sites && A.opts.count_exceptions == COUNT_EXC_BYTECODE;
	/* counter inlining: not with exceptions=events, whose frame walk
	 * knows the instrumented methods, not their clones */
	if (A.opts.count_inline && !A.opts.count_sites && A.opts.count_exceptions != COUNT_EXC_EVENTS) {
		sink.clone = sink_clone;
		sink.callee = sink_callee;
		sink.inlined = sink_inlined;
		sink.linked = sink_linked;
		sink.clone_none = sink_clone_none;
	} else if (A.opts.count_inline) {
		fprintf(stderr, "heapfs-agent: inline=on is ignored with %s\n",
			A.opts.count_sites ? "counting=sites" : "exceptions=events");
	}
	if (A.opts.profile[0]) {
		char err[256];
		int rc = profile_load(&C.prof, A.opts.profile, err, sizeof(err));
		if (rc && rc != -ENOENT) { /* none yet: this run writes it */
			fprintf(stderr, "heapfs-agent: profile %s: %s (remove it to measure afresh)\n", A.opts.profile,
				err);
			return rc;
		}
		C.prof_on = 1;
	}
	if (corrects_exceptions()) {
		jvmtiCapabilities cap;
		memset(&cap, 0, sizeof(cap));
		cap.can_generate_exception_events = 1;
		if ((*jvmti)->AddCapabilities(jvmti, &cap) != JVMTI_ERROR_NONE) {
			fprintf(stderr, "heapfs-agent: no exception events: counts are not corrected for exceptions\n");
			A.opts.count_exceptions = COUNT_EXC_OFF;
		}
	}
	/* counted loops: an exception that leaves one must add its count so
	 * far, which needs the loop variable: the handlers of
	 * exceptions=bytecode read it, the Exception events' corrections
	 * (constants per bytecode range) cannot.  Their add is a plain one. */
	if (A.opts.count_loops && !A.opts.count_sites && !A.opts.count_atomic &&
	    A.opts.count_exceptions != COUNT_EXC_EVENTS) {
		sink.loops = 1;
		sink.trip = sink_trip;
	} else if (A.opts.count_loops) {
		fprintf(stderr, "heapfs-agent: loops=on is ignored with %s\n",
			A.opts.count_sites    ? "counting=sites"
			: A.opts.count_atomic ? "atomic=on"
					      : "exceptions=events");
	}
	snprintf(C.dir, sizeof(C.dir), "/tmp/heapfs-agent-XXXXXX");
	if (!mkdtemp(C.dir))
		return -errno;
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs", C.dir);
	if (mkdir(path, 0700))
		return -errno;
	struct buf b;
	buf_init(&b);
	int rc = instr_counters_class(A.opts.counters < INITIAL_COUNTERS ? A.opts.counters : INITIAL_COUNTERS,
				      A.opts.count_atomic, &b);
	if (!rc)
		rc = write_helper("Counters", &b);
	buf_free(&b);
	buf_init(&b);
	if (!rc && sink.clone && !(rc = instr_marker_class(&b)))
		rc = write_helper("Inl", &b);
	buf_free(&b);
	if (rc)
		return rc;
	if ((*jvmti)->AddToBootstrapClassLoaderSearch(jvmti, C.dir) != JVMTI_ERROR_NONE)
		return -EINVAL;
	return 0;
}

void count_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* enabled only now: classes loaded before VMInit are not instrumented,
	 * and a hook enabled at OnLoad makes the JVM hand over the bytes of
	 * every class it loads from the shared archive (slower start) */
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL) !=
	    JVMTI_ERROR_NONE)
		fprintf(stderr, "heapfs-agent: no ClassPrepare events: no sites are written to the trace\n");
	if (corrects_exceptions() &&
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_EXCEPTION, NULL) != JVMTI_ERROR_NONE)
		fprintf(stderr, "heapfs-agent: no exception events: counts are not corrected for exceptions\n");
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL) !=
	    JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: cannot enable ClassFileLoadHook: nothing is counted\n");
		return;
	}
	jclass k = (*jni)->FindClass(jni, "java/lang/ClassLoader");
	jmethodID m = k ? (*jni)->GetStaticMethodID(jni, k, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
	jobject l = m ? (*jni)->CallStaticObjectMethod(jni, k, m) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (l)
		C.platform_loader = (*jni)->NewGlobalRef(jni, l);
	__atomic_store_n(&C.active, 1, __ATOMIC_RELEASE);
}

/* ---- hot paths --------------------------------------------------------------- */

static uint64_t n_retransformed;
static uint64_t n_kept;             /* hot methods whose plan did not change */
static uint64_t retransform_ns;     /* in RetransformClasses, the hook included */

/* Retransforms the loaded classes named (internal names), then marks their
 * pending methods done (the hook ran during RetransformClasses). */
static void retransform(jvmtiEnv *jvmti, JNIEnv *jni, char **names, uint32_t n)
{
	jint nclasses = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) != JVMTI_ERROR_NONE)
		return;
	jclass *sel = malloc(((size_t)nclasses + 1) * sizeof(*sel));
	jint nsel = 0;
	for (jint i = 0; i < nclasses && sel; i++) {
		char *sig = NULL;
		if ((*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) == JVMTI_ERROR_NONE && sig) {
			size_t l = strlen(sig);
			for (uint32_t j = 0; j < n && l > 2 && sig[0] == 'L'; j++)
				if (strlen(names[j]) == l - 2 && !memcmp(sig + 1, names[j], l - 2)) {
					sel[nsel++] = classes[i];
					break;
				}
			(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		}
	}
	pthread_mutex_lock(&C.mu);
	uint32_t nm_before = C.nm;
	pthread_mutex_unlock(&C.mu);
	uint64_t t0 = agent_now_ns();
	jvmtiError e = nsel ? (*jvmti)->RetransformClasses(jvmti, nsel, sel) : JVMTI_ERROR_NONE;
	retransform_ns += agent_now_ns() - t0;
	if (e != JVMTI_ERROR_NONE && A.opts.verbose)
		fprintf(stderr, "heapfs-agent: RetransformClasses failed (error %d)\n", (int)e);
	else
		n_retransformed += (uint64_t)nsel;
	/* every method of those classes has a new version now (sink_method
	 * decided whether it is measured further), or the retransformation
	 * failed: the old versions are measured no more */
	pthread_mutex_lock(&C.mu);
	for (uint32_t i = 0; i < nm_before; i++) {
		struct cmethod *m = &C.m[i];
		for (uint32_t j = 0; j < n && m->state != HOT_DONE; j++)
			if (m->state == HOT_PENDING || !strcmp(m->cls, names[j])) {
				m->state = HOT_DONE;
				free_graph(m);
			}
	}
	pthread_mutex_unlock(&C.mu);
	for (jint i = 0; i < nclasses; i++)
		(*jni)->DeleteLocalRef(jni, classes[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	free(sel);
}

/* Whether a clone of key (any loader) counts for its callers. */
static int key_has_clone(const char *key, size_t keylen)
{
	struct cclone *k = NULL;
	HASH_FIND(hh, C.clones, key, keylen, k);
	for (; k; k = clone_next(k))
		if (!k->pending && !k->empty)
			return 1;
	return 0;
}

/* The profile's clone links: a method whose clone callers waited for
 * (loaded before its class, or its class's own methods, instrumented
 * before its clone was registered) is linked, so that the next run's
 * callers call its clone at once; a link whose clone became a trampoline
 * is dropped.  Links of classes this run did not load stay.  Under C.mu.
 * 0 or -ENOMEM. */
static int save_links(void)
{
	struct cwait *w, *tmp;
	HASH_ITER(hh, C.waits, w, tmp)
		if (key_has_clone(w->key, w->keylen) && profile_link(&C.prof, w->key, w->keylen, 0) == -ENOMEM)
			return -ENOMEM;
	for (uint32_t i = 0; i < C.nclone; i++)
		if (C.clone[i]->empty && !key_has_clone(C.clone[i]->key, C.clone[i]->keylen) &&
		    profile_link(&C.prof, C.clone[i]->key, C.clone[i]->keylen, 1) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

/* ---- results ---------------------------------------------------------------- */

/* Whether class k's signature is "L" cls ";" (cls: the key's first part). */
static int class_is(jclass k, const char *cls)
{
	char *sig = NULL;
	if ((*A.jvmti)->GetClassSignature(A.jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return 0;
	size_t n = strlen(cls);
	int is = sig[0] == 'L' && !strncmp(sig + 1, cls, n) && sig[n + 1] == ';' && !sig[n + 2];
	(*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)sig);
	return is;
}

/* Pending clones whose key's clone a loader other than their callers'
 * registered (mark_orphans): the callers' loader may resolve the class to
 * that one (delegation), so the class it initiated (JVMTI
 * GetClassLoaderClasses) names the clone whose E the callers count.
 * Until then, or if the class never resolves, they count nothing for it
 * (nor do they call it).  Before the counts are read (site_counts). */
static void resolve_orphans(JNIEnv *jni)
{
	pthread_mutex_lock(&C.mu);
	for (uint32_t i = 0; i < C.nclone && C.orphans; i++) {
		struct cclone *p = C.clone[i];
		jobject loader = p->pending && p->orphan ? (*jni)->NewLocalRef(jni, p->loader) : NULL;
		jint n = 0;
		jclass *cls = NULL;
		if (!loader || (*A.jvmti)->GetClassLoaderClasses(A.jvmti, loader, &n, &cls) != JVMTI_ERROR_NONE)
			n = 0;
		for (jint j = 0; j < n && p->pending; j++) {
			jobject def = NULL;
			if (class_is(cls[j], p->key) &&
			    (*A.jvmti)->GetClassLoader(A.jvmti, cls[j], &def) == JVMTI_ERROR_NONE) {
				struct cclone *k = NULL;
				HASH_FIND(hh, C.clones, p->key, p->keylen, k);
				k = def ? clone_of_loader(jni, k, def) : NULL;
				if (k && !k->pending && bind_clone(p, k->method, k->sem_first, k->nsem, k->empty))
					fprintf(stderr, "heapfs-agent: out of memory: counts of calls of %s's clone are "
							"missing\n", p->key);
			}
			if (def)
				(*jni)->DeleteLocalRef(jni, def);
		}
		for (jint j = 0; j < n; j++)
			(*jni)->DeleteLocalRef(jni, cls[j]);
		if (cls)
			(*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)cls);
		if (loader)
			(*jni)->DeleteLocalRef(jni, loader);
	}
	pthread_mutex_unlock(&C.mu);
}

/* Per-site counts from the current counter values: *out [C.ns] (caller
 * frees), *incr the increments the path counters executed. */
static int site_counts(JNIEnv *jni, int64_t **out, uint64_t *incr)
{
	*incr = 0;
	if (__atomic_load_n(&C.orphans, __ATOMIC_RELAXED))
		resolve_orphans(jni);
	pthread_mutex_lock(&C.mu);
	uint32_t n = C.next_counter;
	pthread_mutex_unlock(&C.mu);
	jlong *v = NULL;
	uint64_t *adds = NULL;
	int rc = read_counters(jni, n, &v, &adds);
	if (rc)
		return rc;
	pthread_mutex_lock(&C.mu);
	int64_t *cnt = calloc((size_t)C.ns + 1, sizeof(*cnt));
	rc = -ENOMEM;
	if (v && cnt) {
		for (uint32_t i = 0; i < n; i++) {
			*incr += counter_incr(i, v[i], adds);
			for (uint32_t j = 0; j < C.c[i].nsem; j++) {
				const struct csem *s = &C.sem[C.c[i].sem_first + j];
				cnt[s->site] += v[i] * s->coef;
			}
		}
		for (uint32_t i = 0; i < C.ns && i < C.cap_corr; i++)
			cnt[i] += C.corr[i];
		*out = cnt;
		cnt = NULL;
		rc = 0;
	}
	pthread_mutex_unlock(&C.mu);
	free(v);
	free(adds);
	free(cnt);
	return rc;
}

/* Writes METHOD and COUNT_SITE symbols not written yet, then the counts
 * since the previous call as one ALLOC_COUNTS.  Method ids are symbols.c's
 * (ClassPrepare); a site whose method has none yet is written later (it
 * cannot have counted: its class never ran). */
void count_write(JNIEnv *jni, struct htr_writer *w, uint32_t gc, int final)
{
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(jni, &cnt, &incr) && !final)
		return; /* no counter ran yet */
	pthread_mutex_lock(&C.mu);
	uint32_t ns = C.ns;
	int rc = grow((void **)&C.last, &C.cap_last, ns + 1, sizeof(*C.last));
	uint32_t *ids = malloc(((size_t)ns + 1) * sizeof(*ids));
	int64_t *delta = malloc(((size_t)ns + 1) * sizeof(*delta));
	for (uint32_t i = C.sites_written; i < ns && !rc; i++)
		C.last[i] = 0; /* new sites */
	if (!rc)
		C.sites_written = ns;
	for (uint32_t i = 0; i < ns && !rc; i++) {
		struct csite *s = &C.s[i];
		uint32_t id = C.m[s->method].sym_id;
		if (s->written || id == NO_ID)
			continue;
		rc = sym_emit_method(w, id);
		if (!rc)
			rc = htr_write_count_site(w, i, id, s->pc, s->line ? (int32_t)s->line : -1, s->type);
		s->written = !rc;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < ns && !rc && ids && delta && cnt; i++) {
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
		if (cnt[i] == C.last[i] || !C.s[i].written)
			continue;
		ids[n] = i;
		delta[n++] = cnt[i] - C.last[i];
		C.last[i] = cnt[i];
	}
	if (!rc && ids && delta && (n || final))
		rc = htr_write_alloc_counts(w, gc,
					    (final ? HTR_COUNTS_FINAL : 0) | (A.opts.count_sites ? 0 : HTR_COUNTS_PATHS),
					    incr, per_site, n, ids, delta);
	pthread_mutex_unlock(&C.mu);
	if (!rc && final)
		rc = write_count_info(w);
	if (rc)
		fprintf(stderr, "heapfs-agent: writing allocation counts failed: %s\n", strerror(-rc));
	free(ids);
	free(delta);
	free(cnt);
}

/* hot=N: methods whose entry flow (solved from their counters) reached N
 * get their edge frequencies stored; unless those plan the counters the
 * method has (instr_plan_unchanged: it is kept), their classes are
 * retransformed, and the hook plans their paths from the frequencies.  A
 * method measured executes more increments than its final version
 * (instrument.h, measure), so polls come often while it matters:
 * POLL_MIN_MS after new methods were instrumented or hot ones found, then
 * twice as long each time up to POLL_MAX_MS. */

/* Whether class cls is on the list to retransform. */
static int is_pending(char **pending, uint32_t n, const char *cls)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(pending[i], cls))
			return 1;
	return 0;
}

/* Adds a class name to the list to retransform (once). */
static void add_pending(char ***pending, uint32_t *n, char *cls)
{
	if (is_pending(*pending, *n, cls))
		return;
	char **np = realloc(*pending, (*n + 1) * sizeof(*np));
	if (np) {
		*pending = np;
		np[(*n)++] = cls; /* owned by the method, which stays */
	}
}

/* A measured version: its edge frequencies solved from its counters (v);
 * stored in m->freq once its entry count reached min_entry.  1: it did.
 * Counters only grow: while their total stays what it was at the last
 * call, the answer for hot=N stays no, and the flows are not solved
 * again (a lower min_entry, count_poll's early planning, is asked
 * afresh). */
static int measure(struct cmethod *m, const jlong *v, uint32_t nc, double min_entry)
{
	uint64_t sum = 0;
	for (uint32_t j = 0; j < m->nedges; j++)
		if (m->cnt[j] != UINT32_MAX && m->cnt[j] < nc)
			sum += (uint64_t)v[m->cnt[j]];
	if (sum == m->measured_sum && min_entry >= (double)A.opts.hot)
		return 0;
	m->measured_sum = sum;
	uint8_t *counted = calloc(m->nedges + 1, 1);
	double *val = calloc(m->nedges + 1, sizeof(double)), *flow = calloc(m->nedges + 1, sizeof(double));
	int hot = 0;
	if (counted && val && flow) {
		for (uint32_t j = 0; j < m->nedges; j++)
			if (m->cnt[j] != UINT32_MAX && m->cnt[j] < nc) {
				counted[j] = 1;
				val[j] = (double)v[m->cnt[j]];
			}
		double entry = instr_solve_flow(m->nblocks, m->nedges, m->e, counted, val, flow);
		hot = entry >= min_entry && entry > 0 &&
		      (m->freq = calloc(m->nnormal + 2 * (size_t)m->nblocks + 1, sizeof(double)));
	}
	for (uint32_t j = 0; j < m->nedges && hot; j++) { /* instrument.h's layout */
		const struct pedge *e = &m->e[j];
		if (e->from == PATHS_X)
			m->freq[m->nnormal + e->to] = flow[j];
		else if (e->to == PATHS_X)
			m->freq[m->nnormal + m->nblocks + e->from] = flow[j];
		else if (e->cfg_edge < m->nnormal)
			m->freq[e->cfg_edge] = flow[j];
	}
	free(counted);
	free(val);
	free(flow);
	return hot;
}

/* Per method version (C.m index), from the counter values v[0..nc) and
 * adds (read_counters): the increments its counters executed, the
 * allocations they counted, and (ncount, may be NULL) how many counters it
 * has.  Under C.mu. */
static void method_sums(const jlong *v, const uint64_t *adds, uint32_t nc, uint64_t *inc, int64_t *counted,
			uint32_t *ncount)
{
	for (uint32_t i = 0; i < nc; i++) {
		const struct ccounter *c = &C.c[i];
		if (ncount)
			ncount[c->method]++;
		if (!v[i])
			continue; /* most counters, polled every few ms */
		inc[c->method] += counter_incr(i, v[i], adds);
		for (uint32_t j = 0; j < c->nsem; j++)
			counted[c->method] += v[i] * C.sem[c->sem_first + j].coef;
	}
}

/* Current versions with path counters (static or planned from
 * measurements) that executed at least hot=N increments, more than the
 * allocations they counted (the static heuristics guessed wrong, or
 * frequencies measured early misled): marked to get one counter per site
 * (m->demote) at their class's next retransformation (inc, counted:
 * method_sums).  Adds the classes. */
static void demote(const uint64_t *inc, const int64_t *counted, char ***pending, uint32_t *npending)
{
	for (uint32_t i = 0; i < C.nm; i++) {
		struct cmethod *m = &C.m[i];
		if ((m->final || m->state == HOT_NO) && !m->per_site && !m->demote && inc[i] >= A.opts.hot &&
		    (int64_t)inc[i] > counted[i]) {
			m->demote = 1;
			add_pending(pending, npending, m->cls);
		}
	}
}

/* inline=on with hot=N: the callers waiting for a method's clone
 * (instrumented before it was registered) once the method counted hot=N
 * increments of its own, i.e. was called about N times by callers that
 * do not call the clone.  Their class names (owned) are appended to
 * *names; they wait no more.  Under C.mu. */
static void relink(JNIEnv *jni, const uint64_t *inc, char ***names, uint32_t *nnames)
{
	for (uint32_t i = 0; C.waits && i < C.nclone; i++) {
		const struct cclone *c = C.clone[i];
		struct cwait *w = NULL;
		HASH_FIND(hh, C.waits, c->key, c->keylen, w);
		if (!w || !w->n)
			continue;
		uint64_t calls = 0;
		for (uint32_t m = c->method; m != NO_ID; m = C.m[m].next_version)
			calls += inc[m];
		if (calls < A.opts.hot)
			continue;
		for (uint32_t j = 0; j < w->n;) {
			if (!(*jni)->IsSameObject(jni, w->w[j].loader, c->loader)) {
				j++;
				continue;
			}
			char **a = realloc(*names, (*nnames + 1) * sizeof(*a));
			if (!a)
				break;
			*names = a;
			a[(*nnames)++] = w->w[j].cls;
			(*jni)->DeleteWeakGlobalRef(jni, w->w[j].loader);
			w->w[j] = w->w[--w->n];
		}
	}
}

int count_poll(jvmtiEnv *jvmti, JNIEnv *jni)
{
	static uint32_t interval = POLL_MAX_MS, nm_seen;
	if (!__atomic_load_n(&C.active, __ATOMIC_ACQUIRE))
		return POLL_MAX_MS;
	if (!A.opts.hot) {
		read_trips(jni);
		return POLL_MAX_MS;
	}
	pthread_mutex_lock(&C.mu);
	uint32_t nc = C.next_counter;
	interval = C.nm != nm_seen ? POLL_MIN_MS : interval * 2 > POLL_MAX_MS ? POLL_MAX_MS : interval * 2;
	nm_seen = C.nm;
	pthread_mutex_unlock(&C.mu);
	jlong *v = NULL;
	uint64_t *adds = NULL;
	if (read_counters(jni, nc, &v, &adds))
		return POLL_MAX_MS;
	char **pending = NULL;
	uint32_t npending = 0;
	pthread_mutex_lock(&C.mu);
	for (uint32_t i = 0; i < C.nm; i++) {
		struct cmethod *m = &C.m[i];
		if (m->state != HOT_NO || !m->e || !measure(m, v, nc, (double)A.opts.hot))
			continue;
		if (m->g && instr_plan_unchanged(m->g, m->init, m->freq, m->nedges, m->e, m->cnt, m->latch, m->nlatch) == 1) {
			/* the measured frequencies plan the counters this version
			 * has: it is final as it is, no retransformation */
			m->state = HOT_DONE;
			m->final = 1;
			free_graph(m);
			n_kept++;
			continue;
		}
		m->state = HOT_PENDING;
		add_pending(&pending, &npending, m->cls);
	}
	/* per method version: increments executed, allocations counted */
	uint64_t *inc = calloc(C.nm + 1, sizeof(*inc));
	int64_t *counted = calloc(C.nm + 1, sizeof(*counted));
	char **linked = NULL; /* owned names */
	uint32_t nlinked = 0;
	if (inc && counted) {
		method_sums(v, adds, nc, inc, counted, NULL);
		demote(inc, counted, &pending, &npending);
		relink(jni, inc, &linked, &nlinked);
	}
	free(inc);
	free(counted);
	uint32_t before = npending; /* (hot or demoted) */
	for (uint32_t i = 0; i < nlinked; i++)
		add_pending(&pending, &npending, linked[i]);
	C.relinked += npending - before;
	/* the other methods of a class to be retransformed that ran get their
	 * plan from what they measured so far: a retransformation of a large
	 * class costs tens of ms (its new version parsed and verified), and
	 * each of them would otherwise start measuring afresh and bring the
	 * class back later */
	for (uint32_t i = 0; i < C.nm && npending; i++) {
		struct cmethod *m = &C.m[i];
		if (m->state != HOT_NO || !m->e || !is_pending(pending, npending, m->cls) || !measure(m, v, nc, 1))
			continue;
		m->state = HOT_PENDING;
	}
	pthread_mutex_unlock(&C.mu);
	free(v);
	free(adds);
	if (npending) {
		retransform(jvmti, jni, pending, npending);
		interval = POLL_MIN_MS;
	}
	for (uint32_t i = 0; i < nlinked; i++)
		free(linked[i]);
	free(linked);
	free(pending);
	return (int)interval;
}

static void print_dotted(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '/' ? '.' : *s, f);
}

/* Writes FILE: "Class.method:line <TAB> type <TAB> count <TAB> descriptor
 * <TAB> bci" for every site with a count, then "#" statistics lines. */
static int write_counts(const char *path, const int64_t *cnt, uint64_t incr, uint64_t per_site)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < C.ns; i++) {
		if (!cnt[i])
			continue;
		const struct cmethod *m = &C.m[C.s[i].method];
		print_dotted(f, m->cls);
		/* line -1: the class has no line numbers (as in traces' SITE frames) */
		fprintf(f, ".%s:%lld\t%s\t%lld\t%s\t%u\n", m->name, C.s[i].line ? (long long)C.s[i].line : -1LL,
			C.s[i].type, (long long)cnt[i], m->desc, C.s[i].pc);
	}
	fprintf(f, "#increments\t%llu\n#per_site_increments\t%llu\n", (unsigned long long)incr,
		(unsigned long long)per_site);
	return fclose(f) ? -EIO : 0;
}

/* profile=FILE at exit: every method measured in this run (by hot=N, or
 * now from its counters) gets its frequencies in the profile (the next
 * run's plan compares paths and one counter per site at them); a version
 * that cannot be measured (planned from frequencies already, or whose
 * counters do not determine its entry count) and whose
 * path counters executed more increments than they counted, or one that
 * hot=N demoted, gets one counter per site; the others keep what the
 * profile had.  A later version of a method (retransformed) has the last
 * word.  v[0..nc), adds: the counter values (read_counters; v NULL: none
 * ran, nothing measured). */
static void save_profile(const jlong *v, const uint64_t *adds, uint32_t nc)
{
	uint64_t *inc = NULL;
	int64_t *counted = NULL;
	uint64_t put = 0, failed = 0;
	pthread_mutex_lock(&C.mu);
	inc = calloc(C.nm + 1, sizeof(*inc));
	counted = calloc(C.nm + 1, sizeof(*counted));
	if (!inc || !counted) {
		failed = 1;
		goto out;
	}
	if (v)
		method_sums(v, adds, nc, inc, counted, NULL);
	for (uint32_t i = 0; i < C.nm && v; i++) {
		struct cmethod *m = &C.m[i];
		if (!m->demote && !m->freq && m->state == HOT_NO && m->e)
			measure(m, v, nc, 1);
		const double *freq = m->demote ? NULL : m->freq;
		if (!freq && !m->demote && (m->per_site || !inc[i] || (int64_t)inc[i] <= counted[i]))
			continue; /* not measured, and did not lose against one counter per site */
		size_t keylen;
		char *key = profile_key(m->cls, strlen(m->cls), m->name, strlen(m->name), m->desc, strlen(m->desc),
				       &keylen);
		int rc = key ? profile_put(&C.prof, key, keylen, m->code_hash, m->nblocks, m->nnormal, freq) : -ENOMEM;
		free(key);
		put += !rc;
		failed += rc == -ENOMEM;
	}
	failed += save_links() == -ENOMEM;
	if (!failed && C.prof.changed) {
		int rc = profile_save(&C.prof, A.opts.profile);
		if (rc) {
			fprintf(stderr, "heapfs-agent: cannot write the profile %s: %s\n", A.opts.profile, strerror(-rc));
			goto out;
		}
	}
	if (A.opts.verbose)
		fprintf(stderr, "heapfs-agent: profile %s: %llu method versions planned from it (%llu per site), "
			"%llu plans written (%u methods in it)\n", A.opts.profile,
			(unsigned long long)(C.prof_planned + C.prof_sites), (unsigned long long)C.prof_sites,
			(unsigned long long)put, C.prof.n);
out:
	if (failed)
		fprintf(stderr, "heapfs-agent: profile %s not written: out of memory\n", A.opts.profile);
	pthread_mutex_unlock(&C.mu);
	free(inc);
	free(counted);
}

/* HEAPFS_AGENT_METHODS=FILE (diagnostics, agent/README.md): one line per
 * instrumented method version: name+descriptor, sites, counters,
 * increments executed, allocations counted, and what the version is
 * (static, measured, hot-planned, per-site, superseded).  v[0..nv), adds: the
 * counter values (NULL: none ran, nothing written). */
static void write_method_stats(const char *path, const jlong *v, const uint64_t *adds, uint32_t nv)
{
	uint64_t *inc = calloc(C.nm + 1, sizeof(*inc));
	int64_t *counted = calloc(C.nm + 1, sizeof(*counted));
	uint32_t *nc = calloc(C.nm + 1, sizeof(*nc));
	FILE *f = NULL;
	if (!inc || !counted || !nc || !v || !(f = fopen(path, "w"))) {
		fprintf(stderr, "heapfs-agent: cannot write %s\n", path);
		goto out;
	}
	method_sums(v, adds, nv, inc, counted, nc);
	fprintf(f, "#method\tsites\tcounters\tincrements\tallocations\tversion\n");
	for (uint32_t i = 0; i < C.nm; i++) {
		const struct cmethod *m = &C.m[i];
		const char *what = m->per_site || m->sites_chosen ? "per-site"
			       : m->demote ? "demoted"
			       : m->profiled ? "profile"
			       : m->final ? "hot-paths"
			       : m->freq ? "measured"
			       : m->state == HOT_NO && A.opts.hot ? "measuring"
			       : m->state == HOT_DONE && A.opts.hot ? "superseded" : "static";
		print_dotted(f, m->cls);
		fprintf(f, ".%s%s\t%u\t%u\t%llu\t%lld\t%s\n", m->name, m->desc, m->nsites, nc[i],
			(unsigned long long)inc[i], (long long)counted[i], what);
	}
	if (fclose(f))
		fprintf(stderr, "heapfs-agent: cannot write %s\n", path);
out:
	free(inc);
	free(counted);
	free(nc);
}

void count_finish(JNIEnv *jni)
{
	__atomic_store_n(&C.active, 0, __ATOMIC_RELEASE);
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(jni, &cnt, &incr)) {
		if (A.opts.verbose)
			fprintf(stderr, "heapfs-agent: mode=count: no counters (nothing instrumented ran)\n");
		cnt = calloc((size_t)C.ns + 1, sizeof(*cnt));
		if (!cnt)
			return;
	}
	for (uint32_t i = 0; i < C.ns; i++)
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
	/* the counters once more, for the diagnostics and the profile */
	const char *stats = getenv("HEAPFS_AGENT_METHODS");
	if ((stats && *stats) || C.prof_on) {
		pthread_mutex_lock(&C.mu);
		uint32_t nc = C.next_counter;
		pthread_mutex_unlock(&C.mu);
		jlong *v = NULL;
		uint64_t *adds = NULL;
		if (read_counters(jni, nc, &v, &adds))
			v = NULL; /* nothing ran */
		if (stats && *stats)
			write_method_stats(stats, v, adds, nc);
		if (C.prof_on)
			save_profile(v, adds, nc);
		free(v);
		free(adds);
	}
	if (C.exhausted)
		fprintf(stderr, "heapfs-agent: mode=count: %llu methods not counted: all %u counters in use (counters=N)\n",
			(unsigned long long)C.exhausted, A.opts.counters);
	uint64_t threads = __atomic_load_n(&C.threads_max, __ATOMIC_ACQUIRE);
	if (!A.opts.count_atomic && threads >= 2) /* allocs/stats says it too (exact) */
		fprintf(stderr, "heapfs-agent: mode=count: %llu threads of the program were alive at once and "
			"increments are plain: racing threads can lose counts (atomic=on counts exactly)\n",
			(unsigned long long)threads);
	if (A.opts.counts[0] && write_counts(A.opts.counts, cnt, incr, per_site))
		fprintf(stderr, "heapfs-agent: cannot write %s\n", A.opts.counts);
	if (A.opts.verbose)
		fprintf(stderr,
			"heapfs-agent: mode=count: %llu classes instrumented (%llu failed), %llu methods (%llu without "
			"allocations, %llu left alone), %u counters, %llu stubs, %llu classes retransformed (hot=%u; %llu hot methods kept: their plan did not change), "
			"%llu method versions with one counter per site (measured or demoted), %llu constructors per "
			"site and %llu correction handlers (exceptions=bytecode), %llu clones and %llu "
			"calls of them (inline=on; %llu clones counting their loops' calls; %llu classes relinked; %llu clones linked ahead from the profile, %llu trampolines), %llu counted loops (loops=on); increments %llu vs %llu per-site (%.1f%% fewer); %llu exceptions, %llu frames corrected%s; "
			"%.1f ms instrumenting at load, %.1f ms at retransformation, %.1f ms in RetransformClasses\n",
			(unsigned long long)C.classes, (unsigned long long)C.failed,
			(unsigned long long)C.st.instrumented, (unsigned long long)C.st.no_allocs,
			(unsigned long long)C.st.skipped, C.next_counter, (unsigned long long)C.st.stubs,
			(unsigned long long)n_retransformed, A.opts.hot, (unsigned long long)n_kept,
			(unsigned long long)C.st.per_site,
			(unsigned long long)C.st.ctor_sites, (unsigned long long)C.st.corr_handlers,
			(unsigned long long)C.st.clones, (unsigned long long)C.st.inlined, (unsigned long long)C.st.counting_clones,
			(unsigned long long)C.relinked, (unsigned long long)C.linked_ahead,
			(unsigned long long)C.st.trampolines, (unsigned long long)C.st.trip_loops, (unsigned long long)incr, (unsigned long long)per_site,
			per_site ? 100.0 * (1.0 - (double)incr / (double)per_site) : 0.0, (unsigned long long)C.exceptions,
			(unsigned long long)C.frames_corrected, A.opts.count_atomic ? "; atomic increments" : "",
			C.hook_ns[0] / 1e6, C.hook_ns[1] / 1e6, retransform_ns / 1e6);
	free(cnt);
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs/Counters.class", C.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/heapfs", C.dir);
	rmdir(path);
	rmdir(C.dir);
}

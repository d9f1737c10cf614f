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
 * JDK sites (jdk=on, the default): at VMInit every module is made to
 * read the boot loader's unnamed module (AddModuleReads), where the
 * helpers live, and the boot loader's java.* classes loaded so far are
 * retransformed one at a time (jdk_start); later ones go through the hook
 * (loader NULL).  Left out: jdk_counted's list.  Their counters go
 * through heapfs.Threads.j (instrument.h, sink->jdk): plain on the thread
 * Threads.e() let through last, an atomic add into cn->side (read with
 * the arrays) on any other, so the JDK's own threads never race the
 * plain increments and never count in threads_max.  The application's
 * calls into the JDK set heapfs.Threads.c to their caller id
 * (sink_caller) around the call; j() counts (caller, counter) pairs in a
 * cache whose evictions come to jdk_pair.  At exit (write_callers) the
 * cache and the evicted pairs are added up and turned into allocations
 * per (JDK site, caller) by the counters' coefficients, written as
 * COUNT_CALLERS (format 1.4) after the final ALLOC_COUNTS: the sites'
 * totals stay as they are, each caller's part is a share of them.  Not
 * attributed (the rest, allocs/by-caller's "<no caller>"): increments on
 * other threads (the side array), JDK code run with no marked call
 * around it.  An exception out of a marked call skips its restore: c
 * stays set, and JDK code then run outside any marked call counts under
 * that caller until an enclosing marked call returns.
 *
 * Method ids: mode=count's METHOD events share mode=full's id space
 * (symbols.c, sym_method): at ClassPrepare of an instrumented class its
 * methods' jmethodIDs are registered there, and a site is written once
 * its method has an id (a site can only count once its class ran, i.e.
 * after ClassPrepare).
 */
#include "agent/counting.h"

#include "agent/agent.h"
#include "agent/classfile.h"
#include "agent/instrument.h"
#include "agent/jimage.h"
#include "agent/loops.h"
#include "agent/profile.h"

#include <errno.h>
#include <pthread.h>
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
	uint32_t next_version;      /* the next cn->m of the same method, NO_ID none */
	/* exception corrections: cn->r[r_first .. r_first + nr), cn->x[x_first ..) */
	uint32_t r_first, nr, x_first, nx;
	/* counter inlining: its sites nsites + j are calls of the clones
	 * cn->clone[cn->pseudo[pseudo_first + j]] */
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
/* An application call into the JDK (sink_caller; id = index + 1): the
 * method (cn->m index, NO_ID until sink_method attaches it) and where. */
struct ccaller {
	char *name, *desc;          /* owned, until attached */
	uint32_t method, pc, line;
};
/* Allocations the JDK counted under an application caller: key caller
 * << 32 | counter, n the increments (heapfs.Threads.q's evictions); at
 * exit also key site << 32 | caller, n the allocations (write_callers). */
struct cpair {
	uint64_t key;
	int64_t n;
	UT_hash_handle hh;
};
/* A bytecode range of a method and the correction an exception leaving a
 * frame there needs: cn->sem[sem_first .. sem_first + nsem). */
struct crange {
	uint32_t start, end, sem_first, nsem;
};
struct cexc {
	uint16_t start, end, handler;
};
/* An instrumented class (one per hook call that changed it), by name:
 * ClassPrepare finds its methods cn->m[m_first .. m_first + nm). */
struct cclass {
	const char *name;           /* cn->m[m_first].cls */
	uint32_t m_first, nm;
	int prepared;
	struct cclass *next;        /* other classes of the same name (loaders) */
	UT_hash_handle hh;
};
/* The versions of one method (class name, name, descriptor; every
 * loader's): cn->m indexes from first to last through next_version, in the
 * order they were instrumented.  The hooks look a method up at every
 * instrumentation (sink_method, sink_freq): a scan of all cn->m there made
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
	uint32_t m;                 /* cn->m index, NO_ID: not instrumented */
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
 * call of it counts E, cn->sem[sem_first .. sem_first + nsem). */
struct cclone {
	char *key;                  /* owned: cls \0 name \0 desc (the original's) */
	size_t keylen;
	jweak loader;               /* the class's defining loader */
	uint32_t sem_first, nsem;
	uint32_t id;                /* its index in cn->clone: the handle callers get */
	uint32_t method;            /* the original's cn->m index (first version) */
	uint32_t next;              /* the same key, another loader: cn->clone index, NO_ID */
	/* profile=FILE: callers of a linked method (profile.h) call its clone
	 * before its class was seen: pending until the class registers it
	 * (sink_clone, sink_clone_none), its E empty until then; orphan: its
	 * key's clone was registered under another loader, which the callers'
	 * loader may resolve the class to (resolve_orphans) */
	int pending, orphan;
	int empty;                  /* a trampoline (sink_clone_none): counts nothing for callers */
	UT_hash_handle hh;          /* the first of a key is in cn->clones */
};
/* A counter or correction range whose semantics name a pending clone:
 * pushed again once the clone's E is known (repush_refs). */
struct cref {
	uint32_t index;             /* cn->c index, or cn->r index (range) */
	int range;
	uint32_t method, n;
	uint32_t *k;                /* owned, [n] */
	int32_t *coef;              /* owned, [n] */
};
struct ccounter {
	uint32_t sem_first, nsem;
	uint32_t method;            /* cn->m index */
	uint32_t trip;              /* a counted loop's (sink_trip): 1 + its cn->trips
				     * index; 0 for any other counter */
};
/* A counted loop's counter, unpacked at every read (under arr_mu). */
struct ctrip {
	uint32_t counter;
	struct trip_count n;
};

/* mode=count's state (counting.h). */
struct counting {
	/* set by count_new and count_onload (Agent_OnLoad), read-only after */
	struct agent_opts opts;     /* a copy: count_onload may turn exceptions off */
	struct symbols *sym;        /* the agent's: METHOD ids of instrumented methods */
	jvmtiEnv *jvmti;
	struct instr_sink sink;     /* ctx: this struct; set by count_onload */
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
	uint64_t threads_live, threads_max;   /* that ran counted code: alive now, at most (atomic) */
	/* the JDK's sites (jdk=on; "JDK sites" below) */
	int64_t *side;                        /* [opts.counters] owned: heapfs.Threads.k's atomic adds */
	struct ccaller *callers; uint32_t ncallers, cap_callers; /* under mu */
	uint32_t callers_pending;             /* callers from here on wait for sink_method */
	pthread_mutex_t pair_mu;              /* pairs */
	struct cpair *pairs;                  /* owned, by key */
	uint64_t pairs_lost;                  /* out of memory: caller counts not kept */
	jclass threads_cls;                   /* global ref: heapfs.Threads (its caller cache) */
	int jdk_initial;                      /* the hooks run for the JDK's classes loaded
					       * before VMInit (first instrumented) */
	uint64_t jdk_classes;                 /* JDK classes instrumented */
	struct jimage *jimage;                /* owned, during jdk_start: the runtime image */
	uint64_t jdk_from_image;              /* JDK classes instrumented from the image's
					       * class file (rebuilt without stack maps) */
	uint64_t jdk_image_ns;                /* in jdk_image_class: reading the image */
	uint32_t jdk_refused;                 /* JDK classes RetransformClasses refused */
	uint64_t jdk_start_ns;                /* VMInit: module reads, retransformation */
	/* profile=FILE (profile.h): the plans read at start */
	struct profile prof;
	int prof_on;
	uint64_t prof_planned, prof_sites;    /* method versions planned from it: paths, per site */
	/* hot=N (agent thread) */
	uint64_t n_retransformed;
	uint64_t n_kept;                      /* hot methods whose plan did not change */
	uint64_t retransform_ns;              /* in RetransformClasses, the hook included */
	uint32_t poll_interval, poll_nm_seen; /* count_poll's: ms until the next poll, nm then */
};

/* Counters.c's first length: small, so that a short run does not pay for
 * allocating and zeroing a large array (8 MiB for 2^20 counters: ~8 ms);
 * it doubles as classes need more, up to counters=N. */
#define INITIAL_COUNTERS 4096u

/* Notes an array (under arr_mu). */
static int keep_array(struct counting *cn, JNIEnv *jni, jobject a)
{
	jlongArray *na = realloc(cn->arrays, (cn->narrays + 1) * sizeof(*na));
	uint32_t *nl = na ? realloc(cn->alen, (cn->narrays + 1) * sizeof(*nl)) : NULL;
	if (na)
		cn->arrays = na;
	if (!nl)
		return -ENOMEM;
	cn->alen = nl;
	jobject g = (*jni)->NewGlobalRef(jni, a);
	if (!g)
		return -ENOMEM;
	cn->arrays[cn->narrays] = (jlongArray)g;
	cn->alen[cn->narrays++] = (uint32_t)(*jni)->GetArrayLength(jni, (jarray)g);
	cn->jcap = cn->alen[cn->narrays - 1];
	return 0;
}

static int bind_threads(JNIEnv *jni);

/* Makes Counters.c long enough for every counter reserved so far: called
 * before the code of a newly instrumented class can run (its ClassPrepare;
 * for a retransformation, its hook).  The first call initializes the
 * helper class and adopts the array it made. */
static void ensure_counters(struct counting *cn, JNIEnv *jni)
{
	pthread_mutex_lock(&cn->mu);
	uint32_t need = cn->next_counter;
	pthread_mutex_unlock(&cn->mu);
	pthread_mutex_lock(&cn->arr_mu);
	if (!cn->helper && !cn->helper_failed) {
		jclass k = (*jni)->FindClass(jni, INSTR_COUNTERS_CLASS);
		jfieldID f = k ? (*jni)->GetStaticFieldID(jni, k, INSTR_COUNTERS_FIELD, "[J") : NULL;
		jobject a = f ? (*jni)->GetStaticObjectField(jni, k, f) : NULL;
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		if (a && !keep_array(cn, jni, a)) {
			cn->helper = (jclass)(*jni)->NewGlobalRef(jni, k);
			cn->field = f;
		}
		/* counted code calls heapfs.Threads.e(), which needs its native */
		if (cn->helper && bind_threads(jni))
			fprintf(stderr, "heapfs-agent: the thread class cannot be loaded: counted code will fail\n");
		if (!cn->helper) {
			cn->helper_failed = 1;
			fprintf(stderr, "heapfs-agent: the counter class cannot be loaded: nothing is counted\n");
		}
	}
	if (cn->helper && need > cn->jcap) {
		uint32_t cap = cn->jcap ? cn->jcap : INITIAL_COUNTERS;
		while (cap < need)
			cap = cap > cn->opts.counters / 2 ? cn->opts.counters : cap * 2;
		jlongArray a = (*jni)->NewLongArray(jni, (jsize)cap);
		if (a && !keep_array(cn, jni, a))
			(*jni)->SetStaticObjectField(jni, cn->helper, cn->field, a);
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		if (cn->jcap < need)
			fprintf(stderr, "heapfs-agent: cannot grow the counters to %u: counts will be wrong\n", cap);
	}
	pthread_mutex_unlock(&cn->arr_mu);
}

/* The first n counters' values, added up over every array: *out [n + 1]
 * (caller frees), a counted loop's counter unpacked into its turns, and
 * (adds not NULL) *adds [cn->ntrips + 1] (caller frees) the adds of every
 * counted loop (ccounter.trip - 1 its index).  Every counter below n
 * belongs to a hook that has ended (a hook holds cn->mu while it reserves
 * counters), so each counted loop among them is in *adds.  -ENOENT if no
 * array exists yet (no counter ran). */
static int read_counters(struct counting *cn, JNIEnv *jni, uint32_t n, jlong **out, uint64_t **adds)
{
	jlong *v = calloc((size_t)n + 1, sizeof(*v)), *part = malloc(((size_t)n + 1) * sizeof(*part));
	uint64_t *a = NULL;
	int rc = v && part ? 0 : -ENOMEM;
	pthread_mutex_lock(&cn->arr_mu);
	if (!rc && !cn->narrays)
		rc = -ENOENT;
	if (!rc && adds && !(a = calloc((size_t)cn->ntrips + 1, sizeof(*a))))
		rc = -ENOMEM;
	for (uint32_t k = 0; k < cn->narrays && !rc; k++) {
		uint32_t m = cn->alen[k] < n ? cn->alen[k] : n;
		(*jni)->GetLongArrayRegion(jni, cn->arrays[k], 0, (jsize)m, part);
		for (uint32_t i = 0; i < m; i++)
			v[i] += part[i];
	}
	for (uint32_t i = 0; i < n && !rc && cn->side; i++) /* the JDK's other threads */
		v[i] += __atomic_load_n(&cn->side[i], __ATOMIC_RELAXED);
	for (uint32_t t = 0; t < cn->ntrips && !rc; t++) {
		struct ctrip *tr = &cn->trips[t];
		if (tr->counter >= n)
			continue; /* read with the next larger n */
		trip_count_read(&tr->n, (uint64_t)v[tr->counter]);
		v[tr->counter] = (jlong)tr->n.turns;
		if (a)
			a[t] = tr->n.adds;
	}
	pthread_mutex_unlock(&cn->arr_mu);
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
static void read_trips(struct counting *cn, JNIEnv *jni)
{
	pthread_mutex_lock(&cn->arr_mu);
	for (uint32_t t = 0; t < cn->ntrips; t++) {
		struct ctrip *tr = &cn->trips[t];
		jlong sum = 0, part = 0;
		for (uint32_t k = 0; k < cn->narrays; k++) {
			if (tr->counter >= cn->alen[k])
				continue;
			(*jni)->GetLongArrayRegion(jni, cn->arrays[k], (jsize)tr->counter, 1, &part);
			sum = (jlong)((uint64_t)sum + (uint64_t)part);
		}
		if (cn->narrays)
			trip_count_read(&tr->n, (uint64_t)sum);
	}
	pthread_mutex_unlock(&cn->arr_mu);
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

/* Whether a class of the boot loader named so is counted (jdk=on): the
 * java.* classes, less those the counting itself or the JVM's start
 * depend on, where a counter would run before the helper can or recurse
 * into it: Object (every constructor), Thread (Threads.j asks for the
 * current thread), java/lang/invoke/ (method handles and VarHandles:
 * atomic=on's Counters.inc, and the code that links lambdas and string
 * concatenation), java/lang/ref/ (the Reference Handler runs it in the
 * middle of GC work).  Other loaders' java.* classes (the platform
 * loader's) are not counted: their modules are defined later. */
static int jdk_counted(const char *name)
{
	static const char *const skip[] = { "java/lang/invoke/", "java/lang/ref/", "java/lang/Thread",
					     "java/lang/Object" };
	if (strncmp(name, "java/", 5))
		return 0;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++) {
		size_t l = strlen(skip[i]);
		if (!strncmp(name, skip[i], l) && (skip[i][l - 1] == '/' || !name[l] || name[l] == '$'))
			return 0;
	}
	return 1;
}

/* ---- the instrumenter's sink (under cn->mu) ------------------------------- */

static uint32_t sink_reserve(void *ctx, uint32_t n)
{
	struct counting *cn = ctx;
	if (cn->next_counter + (uint64_t)n > cn->opts.counters) {
		cn->exhausted++;
		return UINT32_MAX;
	}
	uint32_t b = cn->next_counter;
	cn->next_counter += n;
	return b;
}

/* The versions of the method, NULL if none yet.  *key (malloc'd, the
 * caller frees) and *keylen are set for versions_add; *key NULL: out of
 * memory. */
static struct cversions *versions_find(struct counting *cn, const char *cls, size_t cl, const char *name, size_t nl,
				       const char *desc, size_t dl, char **key, size_t *keylen)
{
	struct cversions *v = NULL;
	if ((*key = profile_key(cls, cl, name, nl, desc, dl, keylen)))
		HASH_FIND(hh, cn->versions, *key, *keylen, v);
	return v;
}

/* Appends cn->m[i] to the versions of its method (v, or a new entry taking
 * over key).  0 or -ENOMEM (key freed either way). */
static int versions_add(struct counting *cn, struct cversions *v, char *key, size_t keylen, uint32_t i)
{
	cn->m[i].next_version = NO_ID;
	if (v) {
		free(key);
		cn->m[v->last].next_version = i;
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
	HASH_ADD_KEYPTR(hh, cn->versions, v->key, v->keylen, v);
	return 0;
}

/* The profile's plan for a method of which no version was measured in
 * this run (v: its versions, NULL none; key: versions_find's): its
 * frequencies, or NULL with *sites = 1; NULL with *sites untouched when
 * there is none (no profile=FILE, or not for this code).  sink_freq plans
 * the method with it; sink_method tells from it that the version is
 * final. */
static const double *profile_plan_of(struct counting *cn, const struct cversions *v, const char *key, size_t keylen,
				     uint64_t hash, uint32_t nblocks, uint32_t nnormal, int *sites)
{
	if (!cn->prof_on || !key)
		return NULL;
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = cn->m[i].next_version)
		if (cn->m[i].freq || cn->m[i].per_site || cn->m[i].demote)
			return NULL; /* measured: sink_freq's own plan */
	return profile_plan(&cn->prof, key, keylen, hash, nblocks, nnormal, sites);
}

static uint32_t sink_method_new(void *ctx, const char *cls, size_t cl, const char *name, size_t nl,
				const char *desc, size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks,
				uint32_t nnormal)
{
	struct counting *cn = ctx;
	if (grow((void **)&cn->m, &cn->cap_m, cn->nm + 1, sizeof(*cn->m)) ||
	    grow((void **)&cn->s, &cn->cap_s, cn->ns + nsites, sizeof(*cn->s)))
		return UINT32_MAX;
	struct cmethod *m = &cn->m[cn->nm];
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
	struct cversions *v = versions_find(cn, cls, cl, name, nl, desc, dl, &key, &keylen);
	/* planned from the profile (as sink_freq just did) */
	int profiled_sites = 0;
	int profiled =
		profile_plan_of(cn, v, key, keylen, code_hash, nblocks, nnormal, &profiled_sites) || profiled_sites;
	if (!key || versions_add(cn, v, key, keylen, cn->nm)) {
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
	cn->prof_planned += profiled && !profiled_sites;
	cn->prof_sites += profiled_sites;
	/* a new version of a method (retransformed) keeps its sites: the
	 * counts of every version add up on them; exception walks use the
	 * new version's corrections for frames running the new code (frames
	 * running the old code: obsolete_version).  A version
	 * planned from measured frequencies is final (HOT_DONE); one planned
	 * without is measured (HOT_NO), afresh in its own counters.  So is
	 * one planned from the profile: final, never measured. */
	uint32_t first = NO_ID;
	int measured = profiled, sites = profiled_sites;
	for (uint32_t i = v ? v->first : NO_ID; i != cn->nm && i != NO_ID; i = cn->m[i].next_version) {
		const struct cmethod *o = &cn->m[i];
		if (o->nsites == nsites) {
			first = first == NO_ID ? i : first;
			measured |= o->freq != NULL || o->profiled;
			sites |= o->per_site || o->demote;
		}
	}
	if (first != NO_ID) {
		const struct cmethod *o = &cn->m[first];
		m->site_first = o->site_first;
		m->state = measured || sites ? HOT_DONE : HOT_NO;
		m->final = measured || sites;
		m->per_site = sites;
		if (!cn->retransforming)
			return cn->nm++; /* the same class from another loader */
		m->sym_id = o->sym_id;
		m->mid = o->mid;
		struct cmid *e = NULL;
		if (o->mid)
			HASH_FIND_PTR(cn->mids, &o->mid, e);
		if (e)
			e->m = cn->nm;
		return cn->nm++;
	}
	m->state = profiled ? HOT_DONE : HOT_NO;
	m->final = profiled;
	m->per_site = profiled_sites;
	m->site_first = cn->ns;
	memset(cn->s + cn->ns, 0, nsites * sizeof(*cn->s)); /* sink_site tells new from described */
	cn->ns += nsites;
	return cn->nm++;
}

/* A method is registered: the calls into the JDK reported for it since
 * the last registration are its (instrument.h, sink->caller: matched by
 * name and descriptor; the others belong to a method left alone). */
static uint32_t sink_method(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			    size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal)
{
	struct counting *cn = ctx;
	uint32_t id = sink_method_new(ctx, cls, cl, name, nl, desc, dl, nsites, code_hash, nblocks, nnormal);
	for (uint32_t j = cn->callers_pending; j < cn->ncallers; j++) {
		struct ccaller *k = &cn->callers[j];
		if (id != UINT32_MAX && strlen(k->name) == nl && !memcmp(k->name, name, nl) && strlen(k->desc) == dl &&
		    !memcmp(k->desc, desc, dl))
			k->method = id;
		free(k->name);
		free(k->desc);
		k->name = k->desc = NULL;
	}
	cn->callers_pending = cn->ncallers;
	return id;
}

/* An application call into the JDK (instrument.h, sink->caller): its
 * caller id, 0 when out of memory (the call is left alone). */
static uint32_t sink_caller(void *ctx, const char *name, size_t nl, const char *desc, size_t dl, uint32_t pc,
			    uint32_t line)
{
	struct counting *cn = ctx;
	if (cn->ncallers >= INT32_MAX - 1 ||
	    grow((void **)&cn->callers, &cn->cap_callers, cn->ncallers + 1, sizeof(*cn->callers)))
		return 0;
	struct ccaller *k = &cn->callers[cn->ncallers];
	*k = (struct ccaller){ strndup(name, nl), strndup(desc, dl), NO_ID, pc, line };
	if (!k->name || !k->desc) {
		free(k->name);
		free(k->desc);
		return 0;
	}
	return ++cn->ncallers;
}

static int sink_site(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type)
{
	struct counting *cn = ctx;
	char *t = strdup(type);
	if (!t)
		return -ENOMEM;
	struct csite *s = &cn->s[cn->m[method].site_first + k];
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
	struct counting *cn = ctx;
	struct cmethod *m = &cn->m[method];
	if ((!cn->opts.hot && !cn->prof_on) || m->state == HOT_DONE)
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
	struct counting *cn = ctx;
	const double *freq = NULL;
	char *key;
	size_t keylen;
	const struct cversions *v = versions_find(cn, cls, cl, name, nl, desc, dl, &key, &keylen);
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = cn->m[i].next_version) {
		const struct cmethod *m = &cn->m[i];
		if (m->freq || m->per_site || m->demote) {
			*sites |= m->per_site || m->demote;
			if (m->freq && m->nnormal == nnormal && m->nblocks == nblocks)
				freq = m->freq;
		}
	}
	if (!freq && !*sites)
		freq = profile_plan_of(cn, v, key, keylen, code_hash, nblocks, nnormal, sites);
	free(key);
	return freq;
}

/* Appends coef times site k of method to cn->sem: an allocation site, or a
 * call of a clone (its E, coef times). */
static int push_sem(struct counting *cn, uint32_t method, uint32_t k, int32_t coef)
{
	const struct cmethod *m = &cn->m[method];
	if (k < m->nsites) {
		if (grow((void **)&cn->sem, &cn->cap_sem, cn->nsem + 1, sizeof(*cn->sem)))
			return -ENOMEM;
		cn->sem[cn->nsem++] = (struct csem){ m->site_first + k, coef };
		return 0;
	}
	const struct cclone *cl = cn->clone[cn->pseudo[m->pseudo_first + k - m->nsites]];
	if (grow((void **)&cn->sem, &cn->cap_sem, cn->nsem + cl->nsem, sizeof(*cn->sem)))
		return -ENOMEM;
	for (uint32_t i = 0; i < cl->nsem; i++) {
		const struct csem *e = &cn->sem[cl->sem_first + i];
		cn->sem[cn->nsem++] = (struct csem){ e->site, coef * e->coef };
	}
	return 0;
}

/* push_sem for coef[i] times site k[i], i < n: the semantics of a
 * counter, correction or clone, from cn->sem[*first] on (none appended on
 * failure).  0 or -ENOMEM. */
static int push_sems(struct counting *cn, uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n,
		     uint32_t *first)
{
	*first = cn->nsem;
	for (uint32_t i = 0; i < n; i++)
		if (push_sem(cn, method, k[i], coef[i])) {
			cn->nsem = *first;
			return -ENOMEM;
		}
	return 0;
}

/* The clone a site of a method calls (counter inlining), or NULL. */
static struct cclone *site_clone(struct counting *cn, uint32_t method, uint32_t k)
{
	const struct cmethod *m = &cn->m[method];
	return k < m->nsites ? NULL : cn->clone[cn->pseudo[m->pseudo_first + k - m->nsites]];
}

/* Whether semantics (k, n) name a pending clone (clone NO_ID), or that
 * clone. */
static int names_clone(struct counting *cn, uint32_t method, const uint32_t *k, uint32_t n, uint32_t clone)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct cclone *cl = site_clone(cn, method, k[i]);
		if (cl && (clone == NO_ID ? cl->pending : cl->id == clone))
			return 1;
	}
	return 0;
}

/* Keeps semantics that name a pending clone, to push them again. */
static int add_ref(struct counting *cn, uint32_t index, int range, uint32_t method, const uint32_t *k,
		   const int32_t *coef, uint32_t n)
{
	if (!names_clone(cn, method, k, n, NO_ID))
		return 0;
	if (grow((void **)&cn->refs, &cn->cap_refs, cn->nrefs + 1, sizeof(*cn->refs)))
		return -ENOMEM;
	struct cref *r = &cn->refs[cn->nrefs];
	*r = (struct cref){ index, range, method, n, malloc((n + 1) * sizeof(uint32_t)),
			    malloc((n + 1) * sizeof(int32_t)) };
	if (!r->k || !r->coef) {
		free(r->k);
		free(r->coef);
		return -ENOMEM;
	}
	memcpy(r->k, k, n * sizeof(uint32_t));
	memcpy(r->coef, coef, n * sizeof(int32_t));
	cn->nrefs++;
	return 0;
}

/* Clone `clone` got its E: the semantics naming it are pushed again
 * (appended to cn->sem; the old copies stay, unused).  0 or -ENOMEM. */
static int repush_refs(struct counting *cn, uint32_t clone)
{
	for (uint32_t i = 0; i < cn->nrefs;) {
		struct cref *r = &cn->refs[i];
		uint32_t first;
		if (!names_clone(cn, r->method, r->k, r->n, clone)) {
			i++;
			continue;
		}
		if (push_sems(cn, r->method, r->k, r->coef, r->n, &first))
			return -ENOMEM;
		if (r->range) {
			cn->r[r->index].sem_first = first;
			cn->r[r->index].nsem = cn->nsem - first;
		} else {
			cn->c[r->index].sem_first = first;
			cn->c[r->index].nsem = cn->nsem - first;
		}
		if (names_clone(cn, r->method, r->k, r->n, NO_ID)) {
			i++;
			continue;
		}
		free(r->k);
		free(r->coef);
		cn->refs[i] = cn->refs[--cn->nrefs];
	}
	return 0;
}

static int sink_counter(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
			uint32_t n)
{
	struct counting *cn = ctx;
	uint32_t first;
	if (push_sems(cn, method, k, coef, n, &first))
		return -ENOMEM;
	cn->c[counter] = (struct ccounter){ first, cn->nsem - first, method, 0 };
	return add_ref(cn, counter, 0, method, k, coef, n);
}

static int sink_trip(void *ctx, uint32_t method, uint32_t counter)
{
	struct counting *cn = ctx;
	if (counter >= cn->opts.counters || cn->c[counter].method != method)
		return -EINVAL;
	if (cn->c[counter].trip)
		return 0;
	pthread_mutex_lock(&cn->arr_mu); /* read_counters walks cn->trips */
	int rc = grow((void **)&cn->trips, &cn->cap_trips, cn->ntrips + 1, sizeof(*cn->trips));
	if (!rc) {
		cn->trips[cn->ntrips++] = (struct ctrip){ .counter = counter };
		cn->c[counter].trip = cn->ntrips;
	}
	pthread_mutex_unlock(&cn->arr_mu);
	return rc;
}

/* The increments counter i executed, from its value read (read_counters):
 * the value, but for a counted loop's counter, whose value is its turns:
 * its adds.  Under cn->mu. */
static uint64_t counter_incr(struct counting *cn, uint32_t i, jlong value, const uint64_t *adds)
{
	if (!cn->c[i].trip)
		return (uint64_t)value;
	return adds ? adds[cn->c[i].trip - 1] : 0;
}

/* The next clone of the same key (another loader), NULL none. */
static struct cclone *clone_next(struct counting *cn, const struct cclone *k)
{
	return k->next == NO_ID ? NULL : cn->clone[k->next];
}

/* The clone of loader among head's chain (a key's clones), NULL none:
 * there is at most one per loader. */
static struct cclone *clone_of_loader(struct counting *cn, JNIEnv *jni, struct cclone *head, jobject loader)
{
	for (struct cclone *k = head; k; k = clone_next(cn, k))
		if ((*jni)->IsSameObject(jni, k->loader, loader))
			return k;
	return NULL;
}

/* Clones (counter inlining): the clone of cls.name desc that the current
 * hook's loader defined, or NULL; *key (malloc'd, the caller frees; NULL:
 * out of memory) and *head for sink_clone. */
static struct cclone *clone_find(struct counting *cn, const char *cls, size_t cl, const char *name, size_t nl,
				 const char *desc, size_t dl, char **key, size_t *keylen, struct cclone **head)
{
	*head = NULL;
	if (!(*key = profile_key(cls, cl, name, nl, desc, dl, keylen)))
		return NULL;
	HASH_FIND(hh, cn->clones, *key, *keylen, *head);
	return clone_of_loader(cn, cn->hook_jni, *head, cn->hook_loader);
}

/* Notes the current hook's class as waiting for the clone of key (owned
 * by the callee from here on). */
static void add_waiter(struct counting *cn, char *key, size_t keylen)
{
	struct cwait *w = NULL;
	HASH_FIND(hh, cn->waits, key, keylen, w);
	if (!w) {
		if (!(w = calloc(1, sizeof(*w)))) {
			free(key);
			return;
		}
		w->key = key;
		w->keylen = keylen;
		HASH_ADD_KEYPTR(hh, cn->waits, w->key, w->keylen, w);
	} else {
		free(key);
	}
	for (uint32_t i = 0; i < w->n; i++) /* a class calls a constructor from many places */
		if (!strcmp(w->w[i].cls, cn->hook_name) &&
		    (*cn->hook_jni)->IsSameObject(cn->hook_jni, w->w[i].loader, cn->hook_loader))
			return;
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 4;
		struct cwaiter *a = realloc(w->w, cap * sizeof(*a));
		if (!a)
			return;
		w->w = a;
		w->cap = cap;
	}
	char *cls = strdup(cn->hook_name);
	jweak loader = (*cn->hook_jni)->NewWeakGlobalRef(cn->hook_jni, cn->hook_loader);
	if (!cls || !loader) {
		free(cls);
		if (loader)
			(*cn->hook_jni)->DeleteWeakGlobalRef(cn->hook_jni, loader);
		return;
	}
	w->w[w->n++] = (struct cwaiter){ loader, cls };
}

/* A new clone of key (taken over) for the current hook's loader, after
 * head (the key's first, NULL none).  NULL: out of memory (key freed). */
static struct cclone *new_clone(struct counting *cn, char *key, size_t keylen, struct cclone *head)
{
	struct cclone *cl = calloc(1, sizeof(*cl));
	jweak loader = (*cn->hook_jni)->NewWeakGlobalRef(cn->hook_jni, cn->hook_loader);
	if (!cl || !loader || grow((void **)&cn->clone, &cn->cap_clone, cn->nclone + 1, sizeof(*cn->clone))) {
		free(cl);
		free(key);
		if (loader)
			(*cn->hook_jni)->DeleteWeakGlobalRef(cn->hook_jni, loader);
		return NULL;
	}
	cl->key = key;
	cl->keylen = keylen;
	cl->loader = loader;
	cl->id = cn->nclone;
	cl->method = NO_ID;
	cl->next = NO_ID;
	cn->clone[cn->nclone] = cl;
	if (!head) {
		HASH_ADD_KEYPTR(hh, cn->clones, cl->key, cl->keylen, cl);
	} else {
		while (clone_next(cn, head))
			head = clone_next(cn, head);
		head->next = cn->nclone;
	}
	cn->nclone++;
	return cl;
}

static uint32_t sink_callee(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			    size_t dl)
{
	struct counting *cn = ctx;
	char *key;
	size_t keylen;
	struct cclone *head, *k = clone_find(cn, cls, cl, name, nl, desc, dl, &key, &keylen, &head);
	if (k || !key) {
		free(key);
		return k && !k->empty ? k->id : UINT32_MAX;
	}
	/* linked by the profile: the class will have the clone (instrument.h,
	 * linked), whose E is pushed into these semantics once known */
	if (cn->prof_on && profile_linked(&cn->prof, key, keylen) && cn->hook_name && !skipped_prefix(cls, cl)) {
		if (!(k = new_clone(cn, key, keylen, head)))
			return UINT32_MAX;
		k->pending = 1;
		cn->linked_ahead++;
		return k->id;
	}
	if ((!cn->opts.hot && !cn->prof_on) || !cn->hook_name || skipped_prefix(cls, cl)) {
		free(key);
		return UINT32_MAX;
	}
	add_waiter(cn, key, keylen); /* hot=N relinks it, the profile links the next run's */
	return UINT32_MAX;
}

/* The key's pending clones of other loaders (head on) may stand for the
 * one registered now: resolve_orphans tells. */
static void mark_orphans(struct counting *cn, struct cclone *head)
{
	for (struct cclone *k = head; k; k = clone_next(cn, k))
		if (k->pending && !k->orphan &&
		    !(*cn->hook_jni)->IsSameObject(cn->hook_jni, k->loader, cn->hook_loader)) {
			k->orphan = 1;
			cn->orphans++;
		}
}

/* clone_find for a clone the current hook's class registers (sink_clone,
 * sink_clone_none): the key's pending clones of other loaders become
 * orphans.  *key NULL: out of memory. */
static struct cclone *clone_find_registering(struct counting *cn, const char *cls, size_t cl, const char *name,
					     size_t nl, const char *desc, size_t dl, char **key, size_t *keylen,
					     struct cclone **head)
{
	struct cclone *found = clone_find(cn, cls, cl, name, nl, desc, dl, key, keylen, head);
	if (*key)
		mark_orphans(cn, *head);
	return found;
}

/* A pending clone's E is known: e (cn->sem[first .. first + n)), method. */
static int bind_clone(struct counting *cn, struct cclone *cl, uint32_t method, uint32_t first, uint32_t n, int empty)
{
	cl->sem_first = first;
	cl->nsem = n;
	cl->method = method;
	cl->empty = empty;
	cl->pending = 0;
	if (cl->orphan) {
		cl->orphan = 0;
		cn->orphans--;
	}
	return repush_refs(cn, cl->id);
}

/* A clone is registered once per loader; a retransformation of its class
 * makes the same clone again (instrument.h), which keeps the first E. */
static int sink_clone(void *ctx, uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n)
{
	struct counting *cn = ctx;
	const struct cmethod *m = &cn->m[method];
	char *key;
	size_t keylen;
	uint32_t first;
	struct cclone *head, *found = clone_find_registering(cn, m->cls, strlen(m->cls), m->name, strlen(m->name),
							     m->desc, strlen(m->desc), &key, &keylen, &head);
	if (!key)
		return -ENOMEM;
	if (found) {
		free(key);
		if (!found->pending)
			return 0;
		return push_sems(cn, method, k, coef, n, &first)
			       ? -ENOMEM
			       : bind_clone(cn, found, method, first, cn->nsem - first, 0);
	}
	if (push_sems(cn, method, k, coef, n, &first)) {
		free(key);
		return -ENOMEM;
	}
	struct cclone *cl = new_clone(cn, key, keylen, head);
	if (!cl) {
		cn->nsem = first;
		return -ENOMEM;
	}
	cl->method = method;
	cl->sem_first = first;
	cl->nsem = cn->nsem - first;
	return 0;
}

/* A linked method's clone is a trampoline (instrument.h): callers count
 * nothing for it; callers still to come call the original. */
static int sink_clone_none(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			   size_t dl)
{
	struct counting *cn = ctx;
	char *key;
	size_t keylen;
	struct cclone *head, *found = clone_find_registering(cn, cls, cl, name, nl, desc, dl, &key, &keylen, &head);
	if (!key)
		return -ENOMEM;
	if (found) {
		free(key);
		return found->pending ? bind_clone(cn, found, NO_ID, cn->nsem, 0, 1) : 0;
	}
	struct cclone *k = new_clone(cn, key, keylen, head);
	if (!k)
		return -ENOMEM;
	k->empty = 1;
	return 0;
}

static int sink_linked(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
		       size_t dl)
{
	struct counting *cn = ctx;
	size_t keylen;
	char *key = cn->prof_on ? profile_key(cls, cl, name, nl, desc, dl, &keylen) : NULL;
	int linked = key && profile_linked(&cn->prof, key, keylen);
	free(key);
	return linked;
}

static int sink_inlined(void *ctx, uint32_t method, uint32_t k, uint32_t handle)
{
	struct counting *cn = ctx;
	struct cmethod *m = &cn->m[method];
	if (grow((void **)&cn->pseudo, &cn->cap_pseudo, cn->npseudo + 1, sizeof(*cn->pseudo)))
		return -ENOMEM;
	if (!m->npseudo)
		m->pseudo_first = cn->npseudo;
	if (k != m->nsites + m->npseudo) /* announced in order */
		return -EINVAL;
	cn->pseudo[cn->npseudo++] = handle;
	m->npseudo++;
	return 0;
}

static int sink_correction(void *ctx, uint32_t method, uint32_t start, uint32_t end, const uint32_t *k,
			   const int32_t *coef, uint32_t n)
{
	struct counting *cn = ctx;
	struct cmethod *m = &cn->m[method];
	if (grow((void **)&cn->r, &cn->cap_r, cn->nr + 1, sizeof(*cn->r)))
		return -ENOMEM;
	if (!m->nr)
		m->r_first = cn->nr;
	uint32_t first;
	if (push_sems(cn, method, k, coef, n, &first))
		return -ENOMEM;
	cn->r[cn->nr] = (struct crange){ start, end, first, cn->nsem - first };
	if (add_ref(cn, cn->nr, 1, method, k, coef, n))
		return -ENOMEM;
	cn->nr++;
	m->nr++;
	return 0;
}

static int sink_handlers(void *ctx, uint32_t method, const uint16_t *seh, uint32_t n)
{
	struct counting *cn = ctx;
	if (grow((void **)&cn->x, &cn->cap_x, cn->nx + n, sizeof(*cn->x)))
		return -ENOMEM;
	cn->m[method].x_first = cn->nx;
	cn->m[method].nx = n;
	for (uint32_t i = 0; i < n; i++)
		cn->x[cn->nx++] = (struct cexc){ seh[3 * i], seh[3 * i + 1], seh[3 * i + 2] };
	return 0;
}

/* instrument.c gave this version one counter per site (the label in
 * HEAPFS_AGENT_METHODS; what the next version plans stays sink_freq's). */
static void sink_sites_chosen(void *ctx, uint32_t method)
{
	struct counting *cn = ctx;
	if (method < cn->nm)
		cn->m[method].sites_chosen = 1;
}


int count_new(struct counting **out, const struct agent_opts *opts, struct symbols *sym, jvmtiEnv *jvmti)
{
	struct counting *cn = calloc(1, sizeof(*cn));
	if (!cn)
		return -ENOMEM;
	cn->opts = *opts;
	cn->sym = sym;
	cn->jvmti = jvmti;
	cn->sink = (struct instr_sink){ .ctx = cn, .reserve = sink_reserve, .method = sink_method,
					.site = sink_site, .counter = sink_counter, .freq = sink_freq,
					.graph = sink_graph, .correction = sink_correction,
					.handlers = sink_handlers, .sites_chosen = sink_sites_chosen };
	pthread_mutex_init(&cn->mu, NULL);
	pthread_mutex_init(&cn->arr_mu, NULL);
	pthread_mutex_init(&cn->pair_mu, NULL);
	cn->poll_interval = POLL_MAX_MS;
	*out = cn;
	return 0;
}

/* ---- hooks ----------------------------------------------------------------- */

/* Notes an instrumented class for ClassPrepare (under cn->mu). */
static void add_class(struct counting *cn, uint32_t m_first, uint32_t nm)
{
	struct cclass *k = calloc(1, sizeof(*k)), *head = NULL;
	if (!k)
		return; /* its methods get no METHOD ids: their sites are not written */
	k->name = cn->m[m_first].cls;
	k->m_first = m_first;
	k->nm = nm;
	HASH_FIND_STR(cn->classes_by_name, k->name, head);
	if (!head) {
		HASH_ADD_KEYPTR(hh, cn->classes_by_name, k->name, strlen(k->name), k);
		return;
	}
	while (head->next)
		head = head->next;
	head->next = k;
}

/* The runtime image's class file of a JDK class that jdk_initial's
 * retransformation could not instrument as the JVM rebuilt it: without
 * the stack-map frames its methods need (instr_class's INSTR_NO_FRAMES,
 * jimage.h).  0 and *orig (caller frees), counted in cn->jdk_from_image;
 * else the rebuilt bytes stay.  Only during jdk_start, on the thread that
 * retransforms (cn->jimage is set there alone). */
static int jdk_image_class(struct counting *cn, const char *name, uint8_t **orig, size_t *orig_len)
{
	uint64_t t0 = agent_now_ns();
	int rc = jimage_read_class(cn->jimage, name, orig, orig_len);
	cn->jdk_from_image += !rc;
	cn->jdk_image_ns += agent_now_ns() - t0;
	return rc;
}

/* The hook's instrumentation of one class, under cn->mu: instr_class with
 * the hook's context, and its result counted.  frames_first: the caller
 * has a class file with stack maps to retry with (instr_sink): then
 * INSTR_NO_FRAMES comes back with nothing counted. */
static int hook_instr(struct counting *cn, JNIEnv *jni, jclass redefined, jobject loader, const char *name, int jdk,
		      const unsigned char *data, jint len, int frames_first, struct buf *out)
{
	pthread_mutex_lock(&cn->mu);
	cn->retransforming = redefined != NULL;
	cn->hook_jni = jni;
	cn->hook_loader = loader;
	cn->hook_name = name;
	cn->sink.jdk = jdk;
	cn->sink.caller = cn->opts.count_jdk && !jdk ? sink_caller : NULL;
	cn->sink.frames_first = frames_first && cn->jdk_initial;
	cn->callers_pending = cn->ncallers;
	uint32_t m_first = cn->nm;
	uint64_t t0 = agent_now_ns();
	int rc = instr_class(data, (size_t)len, &cn->sink, cn->opts.count_sites ? INSTR_SITES : INSTR_PATHS, out,
			     &cn->st);
	cn->hook_ns[redefined && !cn->jdk_initial] += agent_now_ns() - t0; /* the JDK at VMInit: as at load */
	cn->hook_jni = NULL;
	cn->hook_loader = NULL;
	cn->hook_name = NULL;
	cn->sink.frames_first = 0;
	if (rc < 0)
		cn->failed++;
	else if (rc == 1)
		cn->classes++;
	cn->jdk_classes += rc == 1 && jdk && (!redefined || cn->jdk_initial);
	if (rc == 1 && (!redefined || cn->jdk_initial) && cn->nm > m_first)
		add_class(cn, m_first, cn->nm - m_first);
	pthread_mutex_unlock(&cn->mu);
	return rc;
}

void count_class_file_load(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	(void)pd;
	if (!__atomic_load_n(&cn->active, __ATOMIC_ACQUIRE) || !name)
		return;
	int jdk = !loader && cn->opts.count_jdk && jdk_counted(name);
	if (!jdk && (!loader || skipped_prefix(name, strlen(name))))
		return;
	/* class_being_redefined: a retransformation (hot=N); the bytes are the
	 * original ones again, instrumented afresh with measured frequencies */
	if (cn->platform_loader && (*jni)->IsSameObject(jni, loader, cn->platform_loader))
		return;
	struct buf out;
	buf_init(&out);
	/* a JDK class loaded before VMInit that the JVM rebuilt without its
	 * stack maps: the image's class file instead (jimage.h), read only
	 * when the instrumenter finds frames missing */
	uint8_t *orig = NULL;
	size_t orig_len = 0;
	int image = redefined && jdk && cn->jimage;
	int rc = hook_instr(cn, jni, redefined, loader, name, jdk, data, len, image, &out);
	if (rc == INSTR_NO_FRAMES) {
		if (!jdk_image_class(cn, name, &orig, &orig_len)) {
			data = orig;
			len = (jint)orig_len;
		}
		rc = hook_instr(cn, jni, redefined, loader, name, jdk, data, len, 0, &out);
	}
	if (rc == 1 && redefined)
		ensure_counters(cn, jni); /* no ClassPrepare follows a retransformation */
	unsigned char *p = NULL;
	if (rc == 1 && (*jvmti)->Allocate(jvmti, (jlong)out.len, &p) == JVMTI_ERROR_NONE) {
		memcpy(p, out.data, out.len);
		*new_len = (jint)out.len;
		*new_data = p;
	}
	buf_free(&out);
	free(orig);
}

/* ClassPrepare: the jmethodIDs of an instrumented class's methods get
 * METHOD ids (symbols.c) and are noted for exception walks.  A class
 * defined by several loaders was instrumented once per loader: the
 * first not yet prepared is this one (classes are prepared in the order
 * they were loaded, for one name). */
void count_class_prepare(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)thread;
	char *sig = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return;
	size_t l = strlen(sig);
	uint32_t first = 0, n = 0;
	if (sig[0] == 'L' && l > 2) {
		sig[l - 1] = 0;
		pthread_mutex_lock(&cn->mu);
		struct cclass *k = NULL;
		HASH_FIND_STR(cn->classes_by_name, sig + 1, k);
		while (k && k->prepared)
			k = k->next;
		if (k) {
			k->prepared = 1;
			first = k->m_first;
			n = k->nm;
		}
		pthread_mutex_unlock(&cn->mu);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	jint nm = 0;
	jmethodID *mids = NULL;
	if (!n)
		return;
	ensure_counters(cn, jni); /* before any of its code runs */
	if ((*jvmti)->GetClassMethods(jvmti, klass, &nm, &mids) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < nm; i++) {
		char *name = NULL, *desc = NULL;
		if ((*jvmti)->GetMethodName(jvmti, mids[i], &name, &desc, NULL) != JVMTI_ERROR_NONE)
			continue;
		uint32_t found = NO_ID;
		pthread_mutex_lock(&cn->mu);
		for (uint32_t j = first; j < first + n && found == NO_ID; j++)
			if (!strcmp(cn->m[j].name, name) && !strcmp(cn->m[j].desc, desc))
				found = j;
		pthread_mutex_unlock(&cn->mu);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)desc);
		if (found == NO_ID)
			continue;
		uint32_t id = sym_method(cn->sym, jvmti, mids[i]);
		struct cmid *e = calloc(1, sizeof(*e));
		pthread_mutex_lock(&cn->mu);
		cn->m[found].sym_id = id;
		cn->m[found].mid = mids[i];
		if (e) {
			struct cmid *old = NULL;
			HASH_FIND_PTR(cn->mids, &mids[i], old);
			if (old) {
				old->m = found;
				free(e);
			} else {
				*e = (struct cmid){ .mid = mids[i], .m = found };
				HASH_ADD_PTR(cn->mids, mid, e);
			}
		}
		pthread_mutex_unlock(&cn->mu);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)mids);
}

/* A frame still running the code a retransformation replaced (hot=N)
 * has an obsolete jmethodID of its own: its version is the one before the
 * method's newest (cn->m index, NO_ID if none).  Should a class have been
 * retransformed twice while such a frame lived, the frame's code may be
 * older still; taking the previous version is exact in the usual case. */
static uint32_t obsolete_version(struct counting *cn, jvmtiEnv *jvmti, jmethodID mid)
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
	const struct cversions *v =
		versions_find(cn, sig + 1, l - 2, name, strlen(name), desc, strlen(desc), &key, &keylen);
	free(key);
	for (uint32_t i = v ? v->first : NO_ID; i != NO_ID; i = cn->m[i].next_version) {
		prev = newest;
		newest = i;
	}
out:
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)desc);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return prev;
}

/* The instrumented method of a frame (cn->m index, NO_ID none), and whether
 * it is a <clinit>.  Unknown methods are looked up once (under cn->mu). */
static uint32_t frame_method(struct counting *cn, jvmtiEnv *jvmti, jmethodID mid, int *clinit)
{
	struct cmid *e = NULL;
	HASH_FIND_PTR(cn->mids, &mid, e);
	if (!e) {
		char *name = NULL;
		e = calloc(1, sizeof(*e));
		if (!e)
			return *clinit = 0, NO_ID;
		e->mid = mid;
		e->m = NO_ID;
		jboolean obsolete = JNI_FALSE;
		if ((*jvmti)->IsMethodObsolete(jvmti, mid, &obsolete) == JVMTI_ERROR_NONE && obsolete)
			e->m = obsolete_version(cn, jvmti, mid);
		if ((*jvmti)->GetMethodName(jvmti, mid, &name, NULL, NULL) == JVMTI_ERROR_NONE && name) {
			e->clinit = !strcmp(name, "<clinit>");
			(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		}
		HASH_ADD_PTR(cn->mids, mid, e);
	}
	if (e->m != NO_ID)
		e->clinit = !strcmp(cn->m[e->m].name, "<clinit>");
	*clinit = e->clinit;
	return e->m;
}

/* Adds the correction of a frame of method m left at bytecode offset at. */
static void correct_frame(struct counting *cn, uint32_t m, uint32_t at)
{
	const struct cmethod *cm = &cn->m[m];
	uint32_t lo = cm->r_first, hi = cm->r_first + cm->nr;
	while (lo < hi) { /* the first range ending after at */
		uint32_t mid = lo + (hi - lo) / 2;
		if (cn->r[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == cm->r_first + cm->nr || cn->r[lo].start > at)
		return; /* nothing to correct there */
	const struct crange *r = &cn->r[lo];
	for (uint32_t i = 0; i < r->nsem; i++) {
		const struct csem *x = &cn->sem[r->sem_first + i];
		uint32_t cap = cn->cap_corr;
		if (grow((void **)&cn->corr, &cn->cap_corr, x->site + 1, sizeof(*cn->corr)))
			return;
		memset(cn->corr + cap, 0, (cn->cap_corr - cap) * sizeof(*cn->corr));
		cn->corr[x->site] += x->coef;
	}
	cn->frames_corrected++;
}

/* Whether method m's frame at offset at is inside a range handled at
 * handler: then it is the frame that catches. */
static int frame_catches(struct counting *cn, uint32_t m, uint32_t at, uint32_t handler)
{
	const struct cmethod *cm = &cn->m[m];
	for (uint32_t i = cm->x_first; i < cm->x_first + cm->nx; i++)
		if (cn->x[i].handler == handler && cn->x[i].start <= at && at < cn->x[i].end)
			return 1;
	return 0;
}

/* The Exception event: before anything is unwound.  Every frame from the
 * top down to the catching one is left mid-path (the catching one too: it
 * continues at its handler, where a new path starts). */
void count_exception(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
		     jlocation location, jobject exception, jmethodID catch_method, jlocation catch_location)
{
	(void)jni;
	(void)thread;
	(void)method;
	(void)location;
	(void)exception;
	if (!__atomic_load_n(&cn->active, __ATOMIC_ACQUIRE))
		return;
	enum { CHUNK = 64 };
	jvmtiFrameInfo fr[CHUNK];
	int done = 0, java = 0;
	pthread_mutex_lock(&cn->mu);
	cn->exceptions++;
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
			uint32_t m = frame_method(cn, jvmti, fr[i].method, &clinit);
			uint32_t at = (uint32_t)fr[i].location;
			int catches = catch_method && fr[i].method == catch_method &&
				      (m == NO_ID || frame_catches(cn, m, at, (uint32_t)catch_location));
			if (m != NO_ID)
				correct_frame(cn, m, at);
			done = catches || clinit;
		}
		if (n < CHUNK)
			break;
	}
	pthread_mutex_unlock(&cn->mu);
}

/* Threads.  Plain increments are exact while one thread at a time runs
 * counted code; with two or more running it while alive at once, racing
 * increments can be lost, and allocs/stats says so.  So the agent keeps
 * the most threads alive at once that ran counted code: every method
 * with counters calls heapfs.Threads.e() first (instrument.h,
 * sink->threads), which calls the native threads_enter below the first
 * time a thread gets there (a compare with the last thread let through,
 * then a cache by thread id: again only when another thread took its
 * slot); the thread counts from then on to its ThreadEnd.
 * A thread that never runs counted code (the JVM's and JDK's own:
 * Reference Handler, Common-Cleaner, Signal Dispatcher, DestroyJavaVM, a
 * Timer or pool thread that runs only JDK code, the agent's) never
 * counts, whatever its thread group. */
static struct counting *threads_cn; /* the one instance: natives get no user pointer */

/* Whether this thread counts: ThreadEnd is posted on the thread itself. */
static __thread int tls_counted;

static void JNICALL threads_enter(JNIEnv *jni, jclass k)
{
	struct counting *cn = threads_cn;
	if (tls_counted || !cn)
		return;
	tls_counted = 1;
	uint64_t live = __atomic_add_fetch(&cn->threads_live, 1, __ATOMIC_ACQ_REL);
	uint64_t max = __atomic_load_n(&cn->threads_max, __ATOMIC_RELAXED);
	while (live > max && !__atomic_compare_exchange_n(&cn->threads_max, &max, live, 0, __ATOMIC_ACQ_REL,
							  __ATOMIC_RELAXED))
		;
	if (live >= 2) { /* heapfs.Threads.m: its last-thread check would only flip (instrument.h) */
		jfieldID m = (*jni)->GetStaticFieldID(jni, k, "m", "Z");
		if (m)
			(*jni)->SetStaticBooleanField(jni, k, m, JNI_TRUE);
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
	}
}

/* heapfs.Threads.k(i): a JDK counter incremented by a thread other than
 * the one whose plain increments count (instrument.h, sink->jdk): an
 * atomic add on the side, never racing with the plain ones. */
static void JNICALL jdk_side(JNIEnv *jni, jclass k, jint i)
{
	(void)jni;
	(void)k;
	struct counting *cn = threads_cn;
	if (cn && cn->side && i >= 0 && (uint32_t)i < cn->opts.counters)
		__atomic_add_fetch(&cn->side[i], 1, __ATOMIC_RELAXED);
}

/* heapfs.Threads.q(key, n, next): the caller cache evicts pair key,
 * counted n times there (next takes its slot). */
static void JNICALL jdk_pair(JNIEnv *jni, jclass k, jlong key, jlong n, jlong next)
{
	(void)jni;
	(void)k;
	(void)next;
	struct counting *cn = threads_cn;
	if (!cn || !key || !n)
		return;
	pthread_mutex_lock(&cn->pair_mu);
	struct cpair *e = NULL;
	uint64_t kk = (uint64_t)key;
	HASH_FIND(hh, cn->pairs, &kk, sizeof(kk), e);
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->key = kk;
		HASH_ADD(hh, cn->pairs, key, sizeof(e->key), e);
	}
	if (e)
		e->n += n;
	else
		cn->pairs_lost += (uint64_t)n;
	pthread_mutex_unlock(&cn->pair_mu);
}

/* Binds heapfs.Threads's natives (before any counted code can run: with
 * the counters' first array).  Under arr_mu.  0 or -1. */
static int bind_threads(JNIEnv *jni)
{
	static const JNINativeMethod nm[] = { { "n", "()V", (void *)threads_enter },
					      { "k", "(I)V", (void *)jdk_side },
					      { "q", "(JJJ)V", (void *)jdk_pair } };
	jclass k = (*jni)->FindClass(jni, INSTR_THREADS_CLASS);
	int rc = k && (*jni)->RegisterNatives(jni, k, nm, 3) == JNI_OK ? 0 : -1;
	if (!rc && threads_cn && !threads_cn->threads_cls)
		threads_cn->threads_cls = (jclass)(*jni)->NewGlobalRef(jni, k);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	return rc;
}

void count_thread_end(struct counting *cn)
{
	if (tls_counted)
		__atomic_sub_fetch(&cn->threads_live, 1, __ATOMIC_ACQ_REL);
	tls_counted = 0;
}

/* At exit, what the counts' exactness depends on (trace info, read by
 * allocs/stats): the increments, the exception corrections, the most
 * threads that ran counted code alive at once, and what was meant to be
 * counted but is not: methods with allocation sites left uninstrumented
 * (instr_stats.uncounted: code that does not decode or fit, counters=N
 * used up) and classes whose instrumentation failed or that the JVM
 * refused to retransform (jdk=on). */
static int write_count_info(struct counting *cn, struct htr_writer *w)
{
	static const char *const exc[] = { [COUNT_EXC_OFF] = "off", [COUNT_EXC_EVENTS] = "events",
					   [COUNT_EXC_BYTECODE] = "bytecode" };
	char n[24], un[24], fc[24];
	snprintf(n, sizeof(n), "%llu", (unsigned long long)__atomic_load_n(&cn->threads_max, __ATOMIC_ACQUIRE));
	pthread_mutex_lock(&cn->mu);
	snprintf(un, sizeof(un), "%llu", (unsigned long long)cn->st.uncounted);
	snprintf(fc, sizeof(fc), "%llu", (unsigned long long)cn->failed + cn->jdk_refused);
	pthread_mutex_unlock(&cn->mu);
	int rc = htr_write_info(w, "count.increments", cn->opts.count_atomic ? "atomic" : "plain");
	if (!rc)
		rc = htr_write_info(w, "count.exceptions",
				    cn->opts.count_sites ? "sites" : exc[cn->opts.count_exceptions]);
	if (!rc)
		rc = htr_write_info(w, "count.uncounted_methods", un);
	if (!rc)
		rc = htr_write_info(w, "count.failed_classes", fc);
	return rc ? rc : htr_write_info(w, "count.threads_max", n);
}

/* Whether exceptions are corrected: path counters only (per-site counters
 * count right after each allocation: nothing to correct). */
static int corrects_exceptions(struct counting *cn)
{
	return !cn->opts.count_sites && cn->opts.count_exceptions == COUNT_EXC_EVENTS;
}

/* Writes a helper class file into cn->dir/heapfs/.  0 or a negative errno. */
static int write_helper(struct counting *cn, const char *name, const struct buf *b)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs/%s.class", cn->dir, name);
	FILE *f = fopen(path, "wb");
	int rc = f && fwrite(b->data, 1, b->len, f) == b->len ? 0 : -EIO;
	if (f && fclose(f))
		rc = -EIO;
	return rc;
}

int count_onload(struct counting *cn, jvmtiEnv *jvmti)
{
	cn->c = calloc(cn->opts.counters, sizeof(*cn->c));
	if (!cn->c)
		return -ENOMEM;
	cn->sink.atomic = cn->opts.count_atomic;
	cn->sink.threads = 1;
	threads_cn = cn;
	if (cn->opts.count_jdk && !(cn->side = calloc(cn->opts.counters, sizeof(*cn->side))))
		return -ENOMEM;
	cn->sink.bytecode = !cn->opts.count_sites && cn->opts.count_exceptions == COUNT_EXC_BYTECODE;
	/* counter inlining: not with exceptions=events, whose frame walk
	 * knows the instrumented methods, not their clones */
	if (cn->opts.count_inline && !cn->opts.count_sites && cn->opts.count_exceptions != COUNT_EXC_EVENTS) {
		cn->sink.clone = sink_clone;
		cn->sink.callee = sink_callee;
		cn->sink.inlined = sink_inlined;
		cn->sink.linked = sink_linked;
		cn->sink.clone_none = sink_clone_none;
	} else if (cn->opts.count_inline) {
		fprintf(stderr, "heapfs-agent: inline=on is ignored with %s\n",
			cn->opts.count_sites ? "counting=sites" : "exceptions=events");
	}
	if (cn->opts.profile[0]) {
		char err[256];
		int rc = profile_load(&cn->prof, cn->opts.profile, err, sizeof(err));
		if (rc && rc != -ENOENT) { /* none yet: this run writes it */
			fprintf(stderr, "heapfs-agent: profile %s: %s (remove it to measure afresh)\n",
				cn->opts.profile, err);
			return rc;
		}
		cn->prof_on = 1;
	}
	if (corrects_exceptions(cn)) {
		jvmtiCapabilities cap;
		memset(&cap, 0, sizeof(cap));
		cap.can_generate_exception_events = 1;
		if ((*jvmti)->AddCapabilities(jvmti, &cap) != JVMTI_ERROR_NONE) {
			fprintf(stderr, "heapfs-agent: no exception events: counts are not corrected for exceptions\n");
			cn->opts.count_exceptions = COUNT_EXC_OFF;
		}
	}
	/* counted loops: an exception that leaves one must add its count so
	 * far, which needs the loop variable: the handlers of
	 * exceptions=bytecode read it, the Exception events' corrections
	 * (constants per bytecode range) cannot.  Their add is a plain one. */
	if (cn->opts.count_loops && !cn->opts.count_sites && !cn->opts.count_atomic &&
	    cn->opts.count_exceptions != COUNT_EXC_EVENTS) {
		cn->sink.loops = 1;
		cn->sink.trip = sink_trip;
	} else if (cn->opts.count_loops) {
		fprintf(stderr, "heapfs-agent: loops=on is ignored with %s\n",
			cn->opts.count_sites    ? "counting=sites"
			: cn->opts.count_atomic ? "atomic=on"
					      : "exceptions=events");
	}
	snprintf(cn->dir, sizeof(cn->dir), "/tmp/heapfs-agent-XXXXXX");
	if (!mkdtemp(cn->dir))
		return -errno;
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs", cn->dir);
	if (mkdir(path, 0700))
		return -errno;
	struct buf b;
	buf_init(&b);
	int rc = instr_counters_class(cn->opts.counters < INITIAL_COUNTERS ? cn->opts.counters : INITIAL_COUNTERS,
				      cn->opts.count_atomic, &b);
	if (!rc)
		rc = write_helper(cn, "Counters", &b);
	buf_free(&b);
	buf_init(&b);
	if (!rc && !(rc = instr_threads_class(&b)))
		rc = write_helper(cn, "Threads", &b);
	buf_free(&b);
	buf_init(&b);
	if (!rc && cn->sink.clone && !(rc = instr_marker_class(&b)))
		rc = write_helper(cn, "Inl", &b);
	buf_free(&b);
	if (rc)
		return rc;
	if ((*jvmti)->AddToBootstrapClassLoaderSearch(jvmti, cn->dir) != JVMTI_ERROR_NONE)
		return -EINVAL;
	return 0;
}

/* Makes every module read the boot loader's unnamed module, where
 * heapfs.Threads lives (the JDK's counted code calls it).  Returns the
 * modules that refused. */
static uint32_t jdk_module_reads(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni)
{
	jclass cc = (*jni)->FindClass(jni, "java/lang/Class");
	jmethodID gm = cc ? (*jni)->GetMethodID(jni, cc, "getModule", "()Ljava/lang/Module;") : NULL;
	jobject unnamed = gm ? (*jni)->CallObjectMethod(jni, cn->threads_cls, gm) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	jint n = 0;
	jobject *mods = NULL;
	if (!unnamed || (*jvmti)->GetAllModules(jvmti, &n, &mods) != JVMTI_ERROR_NONE)
		return UINT32_MAX;
	uint32_t failed = 0;
	for (jint i = 0; i < n; i++) {
		failed += (*jvmti)->AddModuleReads(jvmti, mods[i], unnamed) != JVMTI_ERROR_NONE;
		(*jni)->DeleteLocalRef(jni, mods[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)mods);
	return failed;
}

/* The boot loader's counted classes loaded so far (jdk_counted): *out
 * (caller frees, local references), *n. */
static int jdk_loaded(jvmtiEnv *jvmti, JNIEnv *jni, jclass **out, jint *n)
{
	jint nclasses = 0;
	jclass *classes = NULL;
	*n = 0;
	if ((*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) != JVMTI_ERROR_NONE)
		return -EIO;
	jclass *sel = malloc(((size_t)nclasses + 1) * sizeof(*sel));
	for (jint i = 0; i < nclasses; i++) {
		char *sig = NULL;
		jobject loader = NULL;
		jboolean mod = JNI_FALSE;
		int keep = sel && (*jvmti)->GetClassLoader(jvmti, classes[i], &loader) == JVMTI_ERROR_NONE && !loader &&
			   (*jvmti)->IsModifiableClass(jvmti, classes[i], &mod) == JVMTI_ERROR_NONE && mod &&
			   (*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) == JVMTI_ERROR_NONE && sig &&
			   sig[0] == 'L';
		if (keep) {
			sig[strlen(sig) - 1] = 0;
			keep = jdk_counted(sig + 1);
		}
		if (sig)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		if (keep)
			sel[(*n)++] = classes[i];
		else
			(*jni)->DeleteLocalRef(jni, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	*out = sel;
	return sel ? 0 : -ENOMEM;
}

/* RetransformClasses on sel[0..n), the hook told that these are the
 * JDK's classes loaded before VMInit (instrumented as at load). */
static jvmtiError jdk_retransform_call(struct counting *cn, jvmtiEnv *jvmti, const jclass *sel, jint n)
{
	pthread_mutex_lock(&cn->mu);
	cn->jdk_initial = 1;
	pthread_mutex_unlock(&cn->mu);
	jvmtiError e = (*jvmti)->RetransformClasses(jvmti, n, sel);
	pthread_mutex_lock(&cn->mu);
	cn->jdk_initial = 0;
	pthread_mutex_unlock(&cn->mu);
	return e;
}

/* Retransforms the classes, then gives their methods METHOD ids as at
 * ClassPrepare.  All in one call first: a call per class costs the JVM an
 * operation at a safepoint each (measured on BoxingChurn: 229 classes one
 * at a time took 166 ms, 30 of them in our hook).  A class the JVM refuses
 * (say one whose rewritten code fails verification) fails the whole call,
 * which then installs none; then one at a time, so that only the refused
 * ones stay as they were (the failed call's hook work stays unused: those
 * method versions never get METHOD ids, so they write nothing).  Returns
 * the classes refused. */
static uint32_t jdk_retransform(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jclass *sel, jint n)
{
	uint32_t refused = 0;
	int all = n > 0 && jdk_retransform_call(cn, jvmti, sel, n) == JVMTI_ERROR_NONE;
	for (jint i = 0; i < n; i++) {
		jvmtiError e = all ? JVMTI_ERROR_NONE : jdk_retransform_call(cn, jvmti, &sel[i], 1);
		if (e != JVMTI_ERROR_NONE) {
			refused++;
			if (cn->opts.verbose) {
				char *sig = NULL;
				(*jvmti)->GetClassSignature(jvmti, sel[i], &sig, NULL);
				fprintf(stderr, "heapfs-agent: jdk=on: %s not counted (RetransformClasses error %d)\n",
					sig ? sig : "?", (int)e);
				(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
			}
			continue;
		}
		count_class_prepare(cn, jvmti, jni, NULL, sel[i]);
	}
	return refused;
}

/* jdk=on at VMInit: the helper's module made readable, then the counted
 * JDK classes loaded so far instrumented (ClassFileLoadHook takes the
 * later ones).  The cost, at start-up: cn->jdk_start_ns. */
/* The runtime image of the JVM's java.home, for jdk_image_class (a JDK
 * without one, or without libjimage: the rebuilt bytes alone, as before). */
static void jdk_open_image(struct counting *cn, jvmtiEnv *jvmti)
{
	char *home = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, "java.home", &home) != JVMTI_ERROR_NONE || !home)
		return;
	if (jimage_open(home, &cn->jimage) && cn->opts.verbose)
		fprintf(stderr, "heapfs-agent: jdk=on: no runtime image under %s: the JDK classes loaded before VMInit "
			"are instrumented as the JVM rebuilds them\n", home);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)home);
}

static void jdk_start(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni)
{
	uint64_t t0 = agent_now_ns();
	ensure_counters(cn, jni); /* the helpers loaded, their natives bound */
	if (!cn->helper || !cn->threads_cls) {
		fprintf(stderr, "heapfs-agent: jdk=on: the helper classes cannot be loaded: JDK sites not counted\n");
		cn->opts.count_jdk = 0;
		return;
	}
	uint32_t failed = jdk_module_reads(cn, jvmti, jni);
	if (failed == UINT32_MAX) {
		fprintf(stderr, "heapfs-agent: jdk=on: no module can read the helper's: JDK sites not counted\n");
		cn->opts.count_jdk = 0;
		return;
	}
	jclass *sel = NULL;
	jint n = 0;
	if (jdk_loaded(jvmti, jni, &sel, &n)) {
		fprintf(stderr, "heapfs-agent: jdk=on: cannot list the loaded classes: those loaded before VMInit not counted\n");
	} else {
		jdk_open_image(cn, jvmti);
		uint32_t refused = jdk_retransform(cn, jvmti, jni, sel, n);
		jimage_close(cn->jimage);
		cn->jimage = NULL;
		cn->jdk_refused = refused;
		if (refused)
			fprintf(stderr, "heapfs-agent: jdk=on: %u of %d loaded JDK classes refused instrumentation\n",
				refused, (int)n);
	}
	for (jint i = 0; i < n; i++)
		(*jni)->DeleteLocalRef(jni, sel[i]);
	free(sel);
	cn->jdk_start_ns = agent_now_ns() - t0;
}

void count_vm_init(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* enabled only now: classes loaded before VMInit are not instrumented,
	 * and a hook enabled at OnLoad makes the JVM hand over the bytes of
	 * every class it loads from the shared archive (slower start) */
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL) !=
	    JVMTI_ERROR_NONE)
		fprintf(stderr, "heapfs-agent: no ClassPrepare events: no sites are written to the trace\n");
	if (corrects_exceptions(cn) &&
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
		cn->platform_loader = (*jni)->NewGlobalRef(jni, l);
	__atomic_store_n(&cn->active, 1, __ATOMIC_RELEASE);
	if (cn->opts.count_jdk)
		jdk_start(cn, jvmti, jni);
}

/* ---- hot paths --------------------------------------------------------------- */


/* Retransforms the loaded classes named (internal names), then marks their
 * pending methods done (the hook ran during RetransformClasses). */
static void retransform(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, char **names, uint32_t n)
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
	pthread_mutex_lock(&cn->mu);
	uint32_t nm_before = cn->nm;
	pthread_mutex_unlock(&cn->mu);
	uint64_t t0 = agent_now_ns();
	jvmtiError e = nsel ? (*jvmti)->RetransformClasses(jvmti, nsel, sel) : JVMTI_ERROR_NONE;
	cn->retransform_ns += agent_now_ns() - t0;
	if (e != JVMTI_ERROR_NONE && cn->opts.verbose)
		fprintf(stderr, "heapfs-agent: RetransformClasses failed (error %d)\n", (int)e);
	else
		cn->n_retransformed += (uint64_t)nsel;
	/* every method of those classes has a new version now (sink_method
	 * decided whether it is measured further), or the retransformation
	 * failed: the old versions are measured no more */
	pthread_mutex_lock(&cn->mu);
	for (uint32_t i = 0; i < nm_before; i++) {
		struct cmethod *m = &cn->m[i];
		for (uint32_t j = 0; j < n && m->state != HOT_DONE; j++)
			if (m->state == HOT_PENDING || !strcmp(m->cls, names[j])) {
				m->state = HOT_DONE;
				free_graph(m);
			}
	}
	pthread_mutex_unlock(&cn->mu);
	for (jint i = 0; i < nclasses; i++)
		(*jni)->DeleteLocalRef(jni, classes[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	free(sel);
}

/* Whether a clone of key (any loader) counts for its callers. */
static int key_has_clone(struct counting *cn, const char *key, size_t keylen)
{
	struct cclone *k = NULL;
	HASH_FIND(hh, cn->clones, key, keylen, k);
	for (; k; k = clone_next(cn, k))
		if (!k->pending && !k->empty)
			return 1;
	return 0;
}

/* The profile's clone links: a method whose clone callers waited for
 * (loaded before its class, or its class's own methods, instrumented
 * before its clone was registered) is linked, so that the next run's
 * callers call its clone at once; a link whose clone became a trampoline
 * is dropped.  Links of classes this run did not load stay.  Under cn->mu.
 * 0 or -ENOMEM. */
static int save_links(struct counting *cn)
{
	struct cwait *w, *tmp;
	HASH_ITER(hh, cn->waits, w, tmp)
		if (key_has_clone(cn, w->key, w->keylen) && profile_link(&cn->prof, w->key, w->keylen, 0) == -ENOMEM)
			return -ENOMEM;
	for (uint32_t i = 0; i < cn->nclone; i++)
		if (cn->clone[i]->empty && !key_has_clone(cn, cn->clone[i]->key, cn->clone[i]->keylen) &&
		    profile_link(&cn->prof, cn->clone[i]->key, cn->clone[i]->keylen, 1) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

/* ---- results ---------------------------------------------------------------- */

/* Whether class k's signature is "L" cls ";" (cls: the key's first part). */
static int class_is(struct counting *cn, jclass k, const char *cls)
{
	char *sig = NULL;
	if ((*cn->jvmti)->GetClassSignature(cn->jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return 0;
	size_t n = strlen(cls);
	int is = sig[0] == 'L' && !strncmp(sig + 1, cls, n) && sig[n + 1] == ';' && !sig[n + 2];
	(*cn->jvmti)->Deallocate(cn->jvmti, (unsigned char *)sig);
	return is;
}

/* Pending clones whose key's clone a loader other than their callers'
 * registered (mark_orphans): the callers' loader may resolve the class to
 * that one (delegation), so the class it initiated (JVMTI
 * GetClassLoaderClasses) names the clone whose E the callers count.
 * Until then, or if the class never resolves, they count nothing for it
 * (nor do they call it).  Before the counts are read (site_counts). */
static void resolve_orphans(struct counting *cn, JNIEnv *jni)
{
	pthread_mutex_lock(&cn->mu);
	for (uint32_t i = 0; i < cn->nclone && cn->orphans; i++) {
		struct cclone *p = cn->clone[i];
		jobject loader = p->pending && p->orphan ? (*jni)->NewLocalRef(jni, p->loader) : NULL;
		jint n = 0;
		jclass *cls = NULL;
		if (!loader || (*cn->jvmti)->GetClassLoaderClasses(cn->jvmti, loader, &n, &cls) != JVMTI_ERROR_NONE)
			n = 0;
		for (jint j = 0; j < n && p->pending; j++) {
			jobject def = NULL;
			if (class_is(cn, cls[j], p->key) &&
			    (*cn->jvmti)->GetClassLoader(cn->jvmti, cls[j], &def) == JVMTI_ERROR_NONE) {
				struct cclone *k = NULL;
				HASH_FIND(hh, cn->clones, p->key, p->keylen, k);
				k = def ? clone_of_loader(cn, jni, k, def) : NULL;
				if (k && !k->pending && bind_clone(cn, p, k->method, k->sem_first, k->nsem, k->empty))
					fprintf(stderr, "heapfs-agent: out of memory: counts of calls of %s's clone are "
							"missing\n", p->key);
			}
			if (def)
				(*jni)->DeleteLocalRef(jni, def);
		}
		for (jint j = 0; j < n; j++)
			(*jni)->DeleteLocalRef(jni, cls[j]);
		if (cls)
			(*cn->jvmti)->Deallocate(cn->jvmti, (unsigned char *)cls);
		if (loader)
			(*jni)->DeleteLocalRef(jni, loader);
	}
	pthread_mutex_unlock(&cn->mu);
}

/* Per-site counts from the current counter values: *out [cn->ns] (caller
 * frees), *incr the increments the path counters executed. */
static int site_counts(struct counting *cn, JNIEnv *jni, int64_t **out, uint64_t *incr)
{
	*incr = 0;
	if (__atomic_load_n(&cn->orphans, __ATOMIC_RELAXED))
		resolve_orphans(cn, jni);
	pthread_mutex_lock(&cn->mu);
	uint32_t n = cn->next_counter;
	pthread_mutex_unlock(&cn->mu);
	jlong *v = NULL;
	uint64_t *adds = NULL;
	int rc = read_counters(cn, jni, n, &v, &adds);
	if (rc)
		return rc;
	pthread_mutex_lock(&cn->mu);
	int64_t *cnt = calloc((size_t)cn->ns + 1, sizeof(*cnt));
	rc = -ENOMEM;
	if (v && cnt) {
		for (uint32_t i = 0; i < n; i++) {
			*incr += counter_incr(cn, i, v[i], adds);
			for (uint32_t j = 0; j < cn->c[i].nsem; j++) {
				const struct csem *s = &cn->sem[cn->c[i].sem_first + j];
				cnt[s->site] += v[i] * s->coef;
			}
		}
		for (uint32_t i = 0; i < cn->ns && i < cn->cap_corr; i++)
			cnt[i] += cn->corr[i];
		*out = cnt;
		cnt = NULL;
		rc = 0;
	}
	pthread_mutex_unlock(&cn->mu);
	free(v);
	free(adds);
	free(cnt);
	return rc;
}

/* ---- the JDK sites' callers (COUNT_CALLERS) -------------------------------- */

static void pairs_free(struct cpair **h)
{
	struct cpair *e, *tmp;
	HASH_ITER(hh, *h, e, tmp) {
		HASH_DEL(*h, e);
		free(e);
	}
}

/* Adds n to the entry key of hash *h, creating it. */
static int pair_add(struct cpair **h, uint64_t key, int64_t n)
{
	struct cpair *e = NULL;
	HASH_FIND(hh, *h, &key, sizeof(key), e);
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		e->key = key;
		HASH_ADD(hh, *h, key, sizeof(e->key), e);
	}
	if (__builtin_add_overflow(e->n, n, &e->n))
		return -EOVERFLOW;
	return 0;
}

/* Adds the pairs still in heapfs.Threads's cache (pk: keys, pc: counts;
 * instrument.h, instr_threads_class) to *h. */
static int cache_read(struct counting *cn, JNIEnv *jni, struct cpair **h)
{
	jfieldID fk = (*jni)->GetStaticFieldID(jni, cn->threads_cls, "pk", "[J");
	jfieldID fc = fk ? (*jni)->GetStaticFieldID(jni, cn->threads_cls, "pc", "[J") : NULL;
	jobject ak = fk && fc ? (*jni)->GetStaticObjectField(jni, cn->threads_cls, fk) : NULL;
	jobject ac = ak ? (*jni)->GetStaticObjectField(jni, cn->threads_cls, fc) : NULL;
	jlong k[INSTR_CALLER_SLOTS], c[INSTR_CALLER_SLOTS];
	int rc = -EIO;
	if (ac && (*jni)->GetArrayLength(jni, ak) == INSTR_CALLER_SLOTS &&
	    (*jni)->GetArrayLength(jni, ac) == INSTR_CALLER_SLOTS) {
		(*jni)->GetLongArrayRegion(jni, ak, 0, INSTR_CALLER_SLOTS, k);
		(*jni)->GetLongArrayRegion(jni, ac, 0, INSTR_CALLER_SLOTS, c);
		rc = (*jni)->ExceptionCheck(jni) ? -EIO : 0;
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	for (uint32_t i = 0; i < INSTR_CALLER_SLOTS && !rc; i++)
		if (k[i] && c[i])
			rc = pair_add(h, (uint64_t)k[i], c[i]);
	if (ak)
		(*jni)->DeleteLocalRef(jni, ak);
	if (ac)
		(*jni)->DeleteLocalRef(jni, ac);
	return rc;
}

/* The (caller, counter) pairs counted so far: those in the cache and
 * those it evicted to the agent (jdk_pair), into *out (the caller frees
 * it: pairs_free).  Read at exit: while the program runs, a pair evicted
 * between the two reads would count twice. */
static int pairs_read(struct counting *cn, JNIEnv *jni, struct cpair **out)
{
	struct cpair *h = NULL, *e, *tmp;
	int rc = cache_read(cn, jni, &h);
	pthread_mutex_lock(&cn->pair_mu);
	HASH_ITER(hh, cn->pairs, e, tmp) {
		if (rc)
			break;
		rc = pair_add(&h, e->key, e->n);
	}
	pthread_mutex_unlock(&cn->pair_mu);
	if (rc)
		pairs_free(&h);
	*out = h;
	return rc;
}

/* Per (site << 32 | caller): each pair's increments times its counter's
 * coefficients, the rule site_counts applies to the totals, applied per
 * caller (a JDK frame's increments all happen while its caller is set).
 * Under cn->mu. */
static int pairs_by_site(struct counting *cn, const struct cpair *pairs, struct cpair **out)
{
	int rc = 0;
	*out = NULL;
	for (const struct cpair *p = pairs; p && !rc; p = p->hh.next) {
		uint32_t caller = (uint32_t)(p->key >> 32), i = (uint32_t)p->key;
		if (i >= cn->next_counter)
			continue; /* not a counter of ours: the cache's garbage */
		for (uint32_t j = 0; j < cn->c[i].nsem && !rc; j++) {
			const struct csem *s = &cn->sem[cn->c[i].sem_first + j];
			int64_t n;
			if (__builtin_mul_overflow(p->n, (int64_t)s->coef, &n))
				rc = -EOVERFLOW;
			else if (n)
				rc = pair_add(out, (uint64_t)s->site << 32 | caller, n);
		}
	}
	if (rc)
		pairs_free(out);
	return rc;
}

/* The COUNT_CALLERS entries of the (site, caller) counts: sites written,
 * callers whose method has a METHOD id (emitted here if not yet); *out
 * (caller frees), *n.  Under cn->mu. */
static int caller_entries(struct counting *cn, struct htr_writer *w, const struct cpair *by,
			  struct htr_count_caller **out, uint32_t *n)
{
	*n = 0;
	*out = malloc(((size_t)HASH_COUNT(by) + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	int rc = 0;
	for (const struct cpair *p = by; p && !rc; p = p->hh.next) {
		uint32_t site = (uint32_t)(p->key >> 32), caller = (uint32_t)p->key;
		if (p->n <= 0 || site >= cn->ns || !cn->s[site].written || !caller || caller > cn->ncallers)
			continue;
		const struct ccaller *k = &cn->callers[caller - 1];
		uint32_t id = k->method < cn->nm ? cn->m[k->method].sym_id : NO_ID;
		if (id == NO_ID)
			continue; /* its method never ran: cannot have counted */
		rc = sym_emit_method(cn->sym, w, id);
		(*out)[(*n)++] = (struct htr_count_caller){ site, id, k->pc, k->line ? (int32_t)k->line : -1,
							    (uint64_t)p->n };
	}
	return rc;
}

/* At exit (jdk=on): the JDK sites' allocations per application call above
 * them, as COUNT_CALLERS after the final ALLOC_COUNTS. */
static int write_callers(struct counting *cn, JNIEnv *jni, struct htr_writer *w)
{
	if (!cn->opts.count_jdk || !cn->threads_cls)
		return 0;
	struct cpair *pairs = NULL, *by = NULL;
	struct htr_count_caller *e = NULL;
	uint32_t n = 0;
	int rc = pairs_read(cn, jni, &pairs);
	pthread_mutex_lock(&cn->mu);
	if (!rc)
		rc = pairs_by_site(cn, pairs, &by);
	if (!rc)
		rc = caller_entries(cn, w, by, &e, &n);
	if (!rc && n)
		rc = htr_write_count_callers(w, n, e);
	pthread_mutex_unlock(&cn->mu);
	if (cn->opts.verbose && !rc)
		fprintf(stderr, "heapfs-agent: mode=count: jdk=on: %u (JDK site, application caller) counts written "
			"(COUNT_CALLERS)\n", n);
	pairs_free(&pairs);
	pairs_free(&by);
	free(e);
	return rc;
}

/* Writes METHOD and COUNT_SITE symbols not written yet, then the counts
 * since the previous call as one ALLOC_COUNTS.  Method ids are symbols.c's
 * (ClassPrepare); a site whose method has none yet is written later (it
 * cannot have counted: its class never ran). */
void count_write(struct counting *cn, JNIEnv *jni, struct htr_writer *w, uint32_t gc, int final)
{
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(cn, jni, &cnt, &incr) && !final)
		return; /* no counter ran yet */
	pthread_mutex_lock(&cn->mu);
	uint32_t ns = cn->ns;
	int rc = grow((void **)&cn->last, &cn->cap_last, ns + 1, sizeof(*cn->last));
	uint32_t *ids = malloc(((size_t)ns + 1) * sizeof(*ids));
	int64_t *delta = malloc(((size_t)ns + 1) * sizeof(*delta));
	for (uint32_t i = cn->sites_written; i < ns && !rc; i++)
		cn->last[i] = 0; /* new sites */
	if (!rc)
		cn->sites_written = ns;
	for (uint32_t i = 0; i < ns && !rc; i++) {
		struct csite *s = &cn->s[i];
		uint32_t id = cn->m[s->method].sym_id;
		if (s->written || id == NO_ID)
			continue;
		rc = sym_emit_method(cn->sym, w, id);
		if (!rc)
			rc = htr_write_count_site(w, i, id, s->pc, s->line ? (int32_t)s->line : -1, s->type);
		s->written = !rc;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < ns && !rc && ids && delta && cnt; i++) {
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
		if (cnt[i] == cn->last[i] || !cn->s[i].written)
			continue;
		ids[n] = i;
		delta[n++] = cnt[i] - cn->last[i];
		cn->last[i] = cnt[i];
	}
	if (!rc && ids && delta && (n || final))
		rc = htr_write_alloc_counts(w, gc,
					    (final ? HTR_COUNTS_FINAL : 0) |
						    (cn->opts.count_sites ? 0 : HTR_COUNTS_PATHS),
					    incr, per_site, n, ids, delta);
	pthread_mutex_unlock(&cn->mu);
	if (!rc && final)
		rc = write_count_info(cn, w);
	if (!rc && final)
		rc = write_callers(cn, jni, w);
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
static int measure(struct counting *cn, struct cmethod *m, const jlong *v, uint32_t nc, double min_entry)
{
	uint64_t sum = 0;
	for (uint32_t j = 0; j < m->nedges; j++)
		if (m->cnt[j] != UINT32_MAX && m->cnt[j] < nc)
			sum += (uint64_t)v[m->cnt[j]];
	if (sum == m->measured_sum && min_entry >= (double)cn->opts.hot)
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

/* Per method version (cn->m index), from the counter values v[0..nc) and
 * adds (read_counters): the increments its counters executed, the
 * allocations they counted, and (ncount, may be NULL) how many counters it
 * has.  Under cn->mu. */
static void method_sums(struct counting *cn, const jlong *v, const uint64_t *adds, uint32_t nc, uint64_t *inc,
			int64_t *counted, uint32_t *ncount)
{
	for (uint32_t i = 0; i < nc; i++) {
		const struct ccounter *c = &cn->c[i];
		if (ncount)
			ncount[c->method]++;
		if (!v[i])
			continue; /* most counters, polled every few ms */
		inc[c->method] += counter_incr(cn, i, v[i], adds);
		for (uint32_t j = 0; j < c->nsem; j++)
			counted[c->method] += v[i] * cn->sem[c->sem_first + j].coef;
	}
}

/* Current versions with path counters (static or planned from
 * measurements) that executed at least hot=N increments, more than the
 * allocations they counted (the static heuristics guessed wrong, or
 * frequencies measured early misled): marked to get one counter per site
 * (m->demote) at their class's next retransformation (inc, counted:
 * method_sums).  Adds the classes. */
static void demote(struct counting *cn, const uint64_t *inc, const int64_t *counted, char ***pending,
		   uint32_t *npending)
{
	for (uint32_t i = 0; i < cn->nm; i++) {
		struct cmethod *m = &cn->m[i];
		if ((m->final || m->state == HOT_NO) && !m->per_site && !m->demote && inc[i] >= cn->opts.hot &&
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
 * *names; they wait no more.  Under cn->mu. */
static void relink(struct counting *cn, JNIEnv *jni, const uint64_t *inc, char ***names, uint32_t *nnames)
{
	for (uint32_t i = 0; cn->waits && i < cn->nclone; i++) {
		const struct cclone *c = cn->clone[i];
		struct cwait *w = NULL;
		HASH_FIND(hh, cn->waits, c->key, c->keylen, w);
		if (!w || !w->n)
			continue;
		uint64_t calls = 0;
		for (uint32_t m = c->method; m != NO_ID; m = cn->m[m].next_version)
			calls += inc[m];
		if (calls < cn->opts.hot)
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

int count_poll(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!__atomic_load_n(&cn->active, __ATOMIC_ACQUIRE))
		return POLL_MAX_MS;
	if (!cn->opts.hot) {
		read_trips(cn, jni);
		return POLL_MAX_MS;
	}
	pthread_mutex_lock(&cn->mu);
	uint32_t nc = cn->next_counter;
	cn->poll_interval = cn->nm != cn->poll_nm_seen ? POLL_MIN_MS
			  : cn->poll_interval * 2 > POLL_MAX_MS ? POLL_MAX_MS : cn->poll_interval * 2;
	cn->poll_nm_seen = cn->nm;
	pthread_mutex_unlock(&cn->mu);
	jlong *v = NULL;
	uint64_t *adds = NULL;
	if (read_counters(cn, jni, nc, &v, &adds))
		return POLL_MAX_MS;
	char **pending = NULL;
	uint32_t npending = 0;
	pthread_mutex_lock(&cn->mu);
	for (uint32_t i = 0; i < cn->nm; i++) {
		struct cmethod *m = &cn->m[i];
		if (m->state != HOT_NO || !m->e || !measure(cn, m, v, nc, (double)cn->opts.hot))
			continue;
		if (m->g && instr_plan_unchanged(m->g, m->init, m->freq, m->nedges, m->e, m->cnt, m->latch, m->nlatch) == 1) {
			/* the measured frequencies plan the counters this version
			 * has: it is final as it is, no retransformation */
			m->state = HOT_DONE;
			m->final = 1;
			free_graph(m);
			cn->n_kept++;
			continue;
		}
		m->state = HOT_PENDING;
		add_pending(&pending, &npending, m->cls);
	}
	/* per method version: increments executed, allocations counted */
	uint64_t *inc = calloc(cn->nm + 1, sizeof(*inc));
	int64_t *counted = calloc(cn->nm + 1, sizeof(*counted));
	char **linked = NULL; /* owned names */
	uint32_t nlinked = 0;
	if (inc && counted) {
		method_sums(cn, v, adds, nc, inc, counted, NULL);
		demote(cn, inc, counted, &pending, &npending);
		relink(cn, jni, inc, &linked, &nlinked);
	}
	free(inc);
	free(counted);
	uint32_t before = npending; /* (hot or demoted) */
	for (uint32_t i = 0; i < nlinked; i++)
		add_pending(&pending, &npending, linked[i]);
	cn->relinked += npending - before;
	/* the other methods of a class to be retransformed that ran get their
	 * plan from what they measured so far: a retransformation of a large
	 * class costs tens of ms (its new version parsed and verified), and
	 * each of them would otherwise start measuring afresh and bring the
	 * class back later */
	for (uint32_t i = 0; i < cn->nm && npending; i++) {
		struct cmethod *m = &cn->m[i];
		if (m->state != HOT_NO || !m->e || !is_pending(pending, npending, m->cls) || !measure(cn, m, v, nc, 1))
			continue;
		m->state = HOT_PENDING;
	}
	pthread_mutex_unlock(&cn->mu);
	free(v);
	free(adds);
	if (npending) {
		retransform(cn, jvmti, jni, pending, npending);
		cn->poll_interval = POLL_MIN_MS;
	}
	for (uint32_t i = 0; i < nlinked; i++)
		free(linked[i]);
	free(linked);
	free(pending);
	return (int)cn->poll_interval;
}

static void print_dotted(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '/' ? '.' : *s, f);
}

/* Writes FILE: "Class.method:line <TAB> type <TAB> count <TAB> descriptor
 * <TAB> bci" for every site with a count, then "#" statistics lines. */
static int write_counts(struct counting *cn, const char *path, const int64_t *cnt, uint64_t incr, uint64_t per_site)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < cn->ns; i++) {
		if (!cnt[i])
			continue;
		const struct cmethod *m = &cn->m[cn->s[i].method];
		print_dotted(f, m->cls);
		/* line -1: the class has no line numbers (as in traces' SITE frames) */
		fprintf(f, ".%s:%lld\t%s\t%lld\t%s\t%u\n", m->name, cn->s[i].line ? (long long)cn->s[i].line : -1LL,
			cn->s[i].type, (long long)cnt[i], m->desc, cn->s[i].pc);
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
static void save_profile(struct counting *cn, const jlong *v, const uint64_t *adds, uint32_t nc)
{
	uint64_t *inc = NULL;
	int64_t *counted = NULL;
	uint64_t put = 0, failed = 0;
	pthread_mutex_lock(&cn->mu);
	inc = calloc(cn->nm + 1, sizeof(*inc));
	counted = calloc(cn->nm + 1, sizeof(*counted));
	if (!inc || !counted) {
		failed = 1;
		goto out;
	}
	if (v)
		method_sums(cn, v, adds, nc, inc, counted, NULL);
	for (uint32_t i = 0; i < cn->nm && v; i++) {
		struct cmethod *m = &cn->m[i];
		if (!m->demote && !m->freq && m->state == HOT_NO && m->e)
			measure(cn, m, v, nc, 1);
		const double *freq = m->demote ? NULL : m->freq;
		if (!freq && !m->demote && (m->per_site || !inc[i] || (int64_t)inc[i] <= counted[i]))
			continue; /* not measured, and did not lose against one counter per site */
		size_t keylen;
		char *key = profile_key(m->cls, strlen(m->cls), m->name, strlen(m->name), m->desc, strlen(m->desc),
				       &keylen);
		int rc = key ? profile_put(&cn->prof, key, keylen, m->code_hash, m->nblocks, m->nnormal, freq)
			     : -ENOMEM;
		free(key);
		put += !rc;
		failed += rc == -ENOMEM;
	}
	failed += save_links(cn) == -ENOMEM;
	if (!failed && cn->prof.changed) {
		int rc = profile_save(&cn->prof, cn->opts.profile);
		if (rc) {
			fprintf(stderr, "heapfs-agent: cannot write the profile %s: %s\n", cn->opts.profile,
				strerror(-rc));
			goto out;
		}
	}
	if (cn->opts.verbose)
		fprintf(stderr, "heapfs-agent: profile %s: %llu method versions planned from it (%llu per site), "
			"%llu plans written (%u methods in it)\n", cn->opts.profile,
			(unsigned long long)(cn->prof_planned + cn->prof_sites), (unsigned long long)cn->prof_sites,
			(unsigned long long)put, cn->prof.n);
out:
	if (failed)
		fprintf(stderr, "heapfs-agent: profile %s not written: out of memory\n", cn->opts.profile);
	pthread_mutex_unlock(&cn->mu);
	free(inc);
	free(counted);
}

/* HEAPFS_AGENT_METHODS=FILE (diagnostics, agent/README.md): one line per
 * instrumented method version: name+descriptor, sites, counters,
 * increments executed, allocations counted, and what the version is
 * (static, measured, hot-planned, per-site, superseded).  v[0..nv), adds: the
 * counter values (NULL: none ran, nothing written). */
static void write_method_stats(struct counting *cn, const char *path, const jlong *v, const uint64_t *adds, uint32_t nv)
{
	uint64_t *inc = calloc(cn->nm + 1, sizeof(*inc));
	int64_t *counted = calloc(cn->nm + 1, sizeof(*counted));
	uint32_t *nc = calloc(cn->nm + 1, sizeof(*nc));
	FILE *f = NULL;
	if (!inc || !counted || !nc || !v || !(f = fopen(path, "w"))) {
		fprintf(stderr, "heapfs-agent: cannot write %s\n", path);
		goto out;
	}
	method_sums(cn, v, adds, nv, inc, counted, nc);
	fprintf(f, "#method\tsites\tcounters\tincrements\tallocations\tversion\n");
	for (uint32_t i = 0; i < cn->nm; i++) {
		const struct cmethod *m = &cn->m[i];
		const char *what = m->per_site || m->sites_chosen ? "per-site"
			       : m->demote ? "demoted"
			       : m->profiled ? "profile"
			       : m->final ? "hot-paths"
			       : m->freq ? "measured"
			       : m->state == HOT_NO && cn->opts.hot ? "measuring"
			       : m->state == HOT_DONE && cn->opts.hot ? "superseded" : "static";
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

/* verbose, jdk=on: what counting the JDK's sites took. */
static void jdk_stats(struct counting *cn)
{
	pthread_mutex_lock(&cn->pair_mu);
	unsigned long long pairs = HASH_COUNT(cn->pairs), lost = (unsigned long long)cn->pairs_lost;
	pthread_mutex_unlock(&cn->pair_mu);
	fprintf(stderr,
		"heapfs-agent: mode=count: jdk=on: %llu JDK classes instrumented (%llu from the runtime image's class "
		"file: the JVM rebuilt them without stack maps; %.1f ms reading it), %.1f ms at VMInit (module reads, "
		"the JDK classes loaded before it retransformed), %u application calls into the JDK marked "
		"(%llu methods for those alone), %llu (caller, counter) pairs evicted to the agent so far "
		"(%llu increments lost: out of memory)\n",
		(unsigned long long)cn->jdk_classes, (unsigned long long)cn->jdk_from_image, cn->jdk_image_ns / 1e6, cn->jdk_start_ns / 1e6,
		cn->ncallers,
		(unsigned long long)cn->st.calls_only, pairs, lost);
}

void count_finish(struct counting *cn, JNIEnv *jni)
{
	__atomic_store_n(&cn->active, 0, __ATOMIC_RELEASE);
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(cn, jni, &cnt, &incr)) {
		if (cn->opts.verbose)
			fprintf(stderr, "heapfs-agent: mode=count: no counters (nothing instrumented ran)\n");
		cnt = calloc((size_t)cn->ns + 1, sizeof(*cnt));
		if (!cnt)
			return;
	}
	for (uint32_t i = 0; i < cn->ns; i++)
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
	/* the counters once more, for the diagnostics and the profile */
	const char *stats = getenv("HEAPFS_AGENT_METHODS");
	if ((stats && *stats) || cn->prof_on) {
		pthread_mutex_lock(&cn->mu);
		uint32_t nc = cn->next_counter;
		pthread_mutex_unlock(&cn->mu);
		jlong *v = NULL;
		uint64_t *adds = NULL;
		if (read_counters(cn, jni, nc, &v, &adds))
			v = NULL; /* nothing ran */
		if (stats && *stats)
			write_method_stats(cn, stats, v, adds, nc);
		if (cn->prof_on)
			save_profile(cn, v, adds, nc);
		free(v);
		free(adds);
	}
	if (cn->exhausted)
		fprintf(stderr, "heapfs-agent: mode=count: %llu methods not counted: all %u counters in use (counters=N)\n",
			(unsigned long long)cn->exhausted, cn->opts.counters);
	uint64_t threads = __atomic_load_n(&cn->threads_max, __ATOMIC_ACQUIRE);
	if (!cn->opts.count_atomic && threads >= 2) /* allocs/stats says it too (exact) */
		fprintf(stderr, "heapfs-agent: mode=count: %llu threads that ran instrumented code were alive at once "
			"and increments are plain: racing threads can lose counts (atomic=on counts exactly)\n",
			(unsigned long long)threads);
	if (cn->opts.counts[0] && write_counts(cn, cn->opts.counts, cnt, incr, per_site))
		fprintf(stderr, "heapfs-agent: cannot write %s\n", cn->opts.counts);
	if (cn->opts.verbose)
		fprintf(stderr,
			"heapfs-agent: mode=count: %llu classes instrumented (%llu failed), %llu methods (%llu without "
			"allocations, %llu left alone), %u counters, %llu stubs, %llu classes retransformed (hot=%u; %llu hot methods kept: their plan did not change), "
			"%llu method versions with one counter per site (measured or demoted), %llu constructors per "
			"site and %llu correction handlers (exceptions=bytecode), %llu clones and %llu "
			"calls of them (inline=on; %llu clones counting their loops' calls; %llu classes relinked; %llu clones linked ahead from the profile, %llu trampolines), %llu counted loops (loops=on); increments %llu vs %llu per-site (%.1f%% fewer); %llu exceptions, %llu frames corrected%s; "
			"%.1f ms instrumenting at load, %.1f ms at retransformation, %.1f ms in RetransformClasses\n",
			(unsigned long long)cn->classes, (unsigned long long)cn->failed,
			(unsigned long long)cn->st.instrumented, (unsigned long long)cn->st.no_allocs,
			(unsigned long long)cn->st.skipped, cn->next_counter, (unsigned long long)cn->st.stubs,
			(unsigned long long)cn->n_retransformed, cn->opts.hot, (unsigned long long)cn->n_kept,
			(unsigned long long)cn->st.per_site,
			(unsigned long long)cn->st.ctor_sites, (unsigned long long)cn->st.corr_handlers,
			(unsigned long long)cn->st.clones, (unsigned long long)cn->st.inlined, (unsigned long long)cn->st.counting_clones,
			(unsigned long long)cn->relinked, (unsigned long long)cn->linked_ahead,
			(unsigned long long)cn->st.trampolines, (unsigned long long)cn->st.trip_loops, (unsigned long long)incr, (unsigned long long)per_site,
			per_site ? 100.0 * (1.0 - (double)incr / (double)per_site) : 0.0, (unsigned long long)cn->exceptions,
			(unsigned long long)cn->frames_corrected, cn->opts.count_atomic ? "; atomic increments" : "",
			cn->hook_ns[0] / 1e6, cn->hook_ns[1] / 1e6, cn->retransform_ns / 1e6);
	if (cn->opts.verbose && cn->opts.count_jdk)
		jdk_stats(cn);
	free(cnt);
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs/Counters.class", cn->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/heapfs/Threads.class", cn->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/heapfs/Inl.class", cn->dir); /* inline=on */
	unlink(path);
	snprintf(path, sizeof(path), "%s/heapfs", cn->dir);
	rmdir(path);
	rmdir(cn->dir);
}

/* recorder_internal.h - the recorder's state, shared by the recorder's own
 * files only (events.c, recorder.c, walk.c, gcwait.c, mgmt.c); agent.c and
 * the other modules use recorder.h.
 *
 * Threads and what they do here (agent.h has the whole agent's):
 *   application threads  allocation callbacks (events.c): tag the object
 *                        with the next 64-bit id, look up its class and
 *                        site, append one record to their own buffer
 *                        (struct tstate) under its mutex; no lock shared by
 *                        all threads per allocation.
 *   VM / GC threads      GC start/finish callbacks: a timestamp, a counter,
 *                        the JVM's performance counters read (memory loads,
 *                        perfdata.h), a raw-monitor notify.  Nothing else.
 *   Service thread       ObjectFree: appends (id, GC) to the death queue.
 *   a thread in Runtime.gc()  with gcwait (gcwait.c): waits on gcwait's raw
 *                        monitor, holding no lock, until the agent thread
 *                        has processed the GCs finished so far.
 *   an allocating thread  with gcwait, after a GC that gets a graph: waits
 *                        the same way, before taking its tstate.mu, until
 *                        the agent thread has walked that GC's heap.
 *   agent thread         one JVMTI agent thread (recorder.c): drains the
 *                        buffers, walks the heap (walk.c), asks the
 *                        management beans (mgmt.c), resolves names, and is
 *                        the only user of the trace writer.
 *
 * Locking: tstate.mu -> the symbols' mutex (symbols.h) -> nothing;
 * threads_mu -> tstate.mu (lock_all, drain_all); deaths_mu, free_mu,
 * `mon` and gcwait's raw monitor are leaves.  The heap-walk callbacks (run
 * by the VM thread inside a safepoint) take no lock at all: an application
 * thread can hold any of the mutexes while it waits for that safepoint to
 * end.  Fields are marked with what guards them: "atomic" (__atomic
 * builtins), a mutex, "agent thread" (only that thread touches them after
 * VMInit), or "set up" (written before the threads that read them start).
 */
#ifndef HEAPFS_AGENT_RECORDER_INTERNAL_H
#define HEAPFS_AGENT_RECORDER_INTERNAL_H

#include <jvmti.h>
#include <pthread.h>
#include <stdint.h>

#include "agent/agent_opts.h"
#include "agent/counting.h"
#include "agent/perfdata.h"
#include "agent/recorder.h"
#include "agent/symbols.h"
#include "agent/tagset.h"
#include "model/htr.h"
#include "model/htr_writer.h"

#define CHUNK_RECS 4096u
#define GC_RING 4096u
#define SITE_CACHE 1024u                      /* per-thread, power of two */
/* walk_flush_deaths' cheap path: at most this many live samples.  Each
 * costs an IsSameObject after every GC, ~18 ns (SampleMix at 4 KiB: 15,469
 * in 0.29 ms); a heap walk stops every thread for 1.2-3 ms. */
#define FLUSH_REFS_MAX 65536u

/* One recorded allocation (or an object that appeared without one). */
struct arec {
	uint64_t id;
	uint64_t size;
	uint64_t time_ns;
	uint32_t type;
	uint32_t site;         /* HTR_NO_SITE: none */
	int32_t length;        /* -1: not an array */
	uint32_t epoch;        /* GCs started when it was recorded */
	uint64_t thread;       /* trace thread id (tag of the Thread object), 0 none */
	uint32_t flags;        /* enum htr_alloc_flags */
	uint32_t pad;
};

struct chunk {
	struct chunk *next;
	uint32_t n;
	struct arec r[CHUNK_RECS];
};

/* A chain of chunks, oldest first; owns them (back to the recorder's free
 * list with chunk_put_list). */
struct rlist {
	struct chunk *head, *tail;
};

/* Per application thread.  Owned by the registry (recorder.threads); freed
 * by the agent thread (drain_all) after ThreadEnd once drained. */
struct tstate {
	pthread_mutex_t mu;
	struct tstate *next;      /* registry list, under threads_mu */
	uint64_t thread_id;       /* tag of the java.lang.Thread object */
	char name[128];
	int is_agent;             /* the agent's own thread: allocations not recorded */
	int ended;                /* ThreadEnd seen */
	int announced;            /* THREAD event written (agent thread only) */
	uint32_t last_walk_seq;
	uint32_t cb_epoch;        /* GC epoch + 1 of its last counted allocation callback */
	struct rlist recs;        /* under mu */
	/* site cache: hash of the raw frames -> site id */
	uint64_t sc_hash[SITE_CACHE];
	uint32_t sc_site[SITE_CACHE];
	jvmtiFrameInfo *frames;   /* owned, [depth] scratch for GetStackTrace */
	jvmtiFrameInfo *sc_key;   /* owned, [SITE_CACHE * depth] raw frames of each entry */
	uint8_t sc_n[SITE_CACHE];
	/* the first class allocated at each entry's site (weak global refs,
	 * deleted at ThreadEnd or when the entry is replaced) and its type:
	 * one IsSameObject instead of a GetTag in the tag table */
	jweak sc_class[SITE_CACHE];
	uint32_t sc_type[SITE_CACHE];
};

struct death {
	uint64_t id;
	uint32_t gc;             /* the GC it is attributed to */
};

struct gc_times {
	uint64_t start_ns, end_ns;
	/* the agent's own time up to this GC's start (agent.overhead): */
	uint64_t alloc_cb_ns;   /* in allocation callbacks, summed over threads */
	uint32_t alloc_threads; /* threads that ran one since the previous GC */
	uint64_t walk_ns;       /* in heap walks (the program stopped) */
	/* the JVM's counters at the GC's start and end (have_perfdata) */
	struct perfdata_sample before, after;
};

/* Kind, cause and heap use of one GC. */
struct gc_info {
	int full;
	char cause[64];
	uint64_t used_before, used_after, capacity; /* UINT64_MAX unknown */
};

/* The management beans (mgmt.c), agent thread only.  The jobjects are
 * global references, kept until exit. */
#define MGMT_MAX_BEANS 8
struct mgmt {
	int lazy;                                /* mode=count: looked up at the first query */
	int tried;                               /* looked up (successfully or not) */
	jobject mem_bean;
	jobject gc_bean[MGMT_MAX_BEANS];
	char gc_name[MGMT_MAX_BEANS][64];
	jlong gc_count[MGMT_MAX_BEANS];
	int gc_full[MGMT_MAX_BEANS];
	int nbeans;
	jobject heap_pool[MGMT_MAX_BEANS];       /* names (String) of the heap's pools */
	int npools;
	jmethodID m_get;
	jmethodID m_heap_usage, m_used, m_committed, m_count, m_last_info, m_before, m_after, m_values,
		m_to_array;
};

/* Runtime.gc() and allocations waiting for the agent thread (gcwait.c). */
typedef void(JNICALL *runtime_gc_fn)(JNIEnv *jni, jobject runtime);
struct gcwait {
	jrawMonitorID mon;       /* set up: processed, stop, gate -> waiting threads */
	runtime_gc_fn jvm_gc;    /* atomic: the JVM's Runtime.gc(), once bound */
	int ready;               /* atomic: the agent thread runs (VMInit) */
	uint32_t processed;      /* atomic: GCs the agent thread has written */
	int stop;                /* atomic: VMDeath, nobody waits any more */
	int gate;                /* under mon: a thread is inside Runtime.gc() */
	uint32_t gate_gc;        /* atomic: the last GC after which allocations wait for its walk */
	uint32_t walked;         /* atomic: the last GC whose walk is over (or will not come) */
	uint64_t waits, wait_ns, timeouts;       /* atomics */
	uint64_t alloc_waits, alloc_wait_ns;     /* atomics: waits of allocations */
};

/* AsyncGetCallTrace's frames (events.c, stacks=fast). */
typedef struct { jint lineno; jmethodID method_id; } asgct_frame;
typedef struct { JNIEnv *env; jint num_frames; asgct_frame *frames; } asgct_trace;
typedef void (*asgct_fn)(asgct_trace *, jint, void *);

/* Records of a later epoch than the one being written, oldest first. */
struct held {
	struct arec *r;          /* owned, [cap] */
	size_t n, cap;
};

struct recorder {
	/* set up (recorder_new, Agent_OnLoad) */
	const struct agent_opts *opts;   /* the agent's */
	const char *opts_string;         /* the agent's */
	struct symbols *sym;             /* the agent's */
	struct counting *cnt;            /* the agent's, NULL in mode=full */
	enum ablate ablate;
	asgct_fn asgct;                  /* stacks=fast: AsyncGetCallTrace, NULL otherwise */
	jvmtiEnv *jvmti;
	struct htr_writer *w;            /* owned; agent thread only after VMInit */

	/* shared with the callbacks */
	uint32_t gc_started, gc_finished;  /* atomic */
	int alloc_gate;                  /* set up: gcwait on, with the perf counters: gw.gate_gc is set */
	uint32_t walk_seq;               /* atomic: heap walks started */
	uint64_t next_tag;               /* atomic: the next object id */
	int recording;                   /* atomic: 1 between VMInit and VMDeath */
	/* mode=sample (set up).  Then only two kinds of objects may be written
	 * as allocations: those found at VMInit (HTR_ALLOC_PREEXISTING, all of
	 * them: the tree counts each once) and those the sampler picked (flags
	 * 0: each stands for 1/p objects).  An object that could have been
	 * sampled but was written because it was not (a class mirror or Thread
	 * object made later) would be counted 1 + (1-p)/p too often. */
	int sampled;
	int preexisting_done;            /* atomic: recorder_tag_preexisting is over */
	uint64_t n_sample_callbacks;     /* atomic: SampledObjectAlloc callbacks recorded */
	struct gc_times gcs[GC_RING];    /* slot n % GC_RING: GC n's callbacks, then the agent thread */
	struct perfdata perfdata;        /* set up: GC kind, cause, heap use (perfdata.h) */
	int have_perfdata;               /* set up: else the management beans (mgmt) */

	jrawMonitorID mon;               /* GC finish / stop -> agent thread */
	int stop;                        /* under mon: VMDeath asked to finish */
	int done;                        /* under mon: agent thread finished */
	int agent_started;               /* set up: RunAgentThread succeeded */
	jobject agent_thread;            /* set up: global ref */
	uint64_t agent_thread_tag;       /* set up */

	pthread_mutex_t threads_mu;
	struct tstate *threads;          /* under threads_mu; owns the entries but init_ts */
	struct tstate init_ts;           /* objects found at VMInit (thread 0) */

	pthread_mutex_t deaths_mu;
	struct death *deaths;            /* under deaths_mu; owned, [deaths_cap] */
	size_t ndeaths, deaths_cap;
	/* mode=sample: class mirrors made after VMInit and not sampled, so
	 * never written (record_mirror), by type id: their deaths are
	 * dropped (under deaths_mu; owned, [mirror_unwritten_cap]) */
	uint8_t *mirror_unwritten;
	uint32_t mirror_unwritten_cap;
	uint64_t n_deaths_dropped;       /* under deaths_mu */
	/* mode=sample with graph=: the ids each heap walk gave the objects it
	 * met without a sample, [lo, hi) per walk, ascending.  Their tags are
	 * cleared after the walk (walk_untag); a death of one that came
	 * before is dropped (under deaths_mu; owned, [walk_ranges_cap]) */
	struct { uint64_t lo, hi; } *walk_ranges;
	size_t nwalk_ranges, walk_ranges_cap;
	uint64_t n_walk_deaths_dropped;  /* under deaths_mu */
	/* mode=sample with start=none and no walks, on a collector that frees
	 * only in its pauses, with the class-unloading counters (set up at
	 * VMInit: cheap_flush): what walk_flush_deaths needs to find a GC's
	 * deaths without a heap walk.  Under deaths_mu: the samples whose
	 * death has not come, each with a JNI weak global reference to it
	 * (live: tag -> jweak), those whose death the agent thread wrote
	 * itself (written_dead: their ObjectFree, when it comes, is dropped),
	 * and the weak references of the samples whose ObjectFree came, for
	 * the agent thread to delete (ObjectFree may not call JNI). */
	int cheap_flush;                 /* atomic (cleared when a set is out of memory) */
	struct tagset live, written_dead;
	jweak *weak_free;                /* owned, [weak_free_cap] */
	uint32_t nweak_free, weak_free_cap;
	int64_t unloaded_seen;           /* agent thread: classes unloaded at the last flush */
	uint64_t *flush_tags, *flush_refs; /* agent thread: owned, [flush_cap] */
	uint32_t flush_cap;
	uint64_t n_flush_refs, n_deaths_found; /* agent thread: flushes without a walk, deaths they found */
	/* mode=sample: the objects found at VMInit, by id ascending (a
	 * sample's callback may take an id in between: it is no start
	 * object), with the class tag and size they had then.  Set at VMInit
	 * before the agent thread starts; the agent thread checks them after
	 * the first GC (walk_check_start) and frees the table.  Owned. */
	struct start_obj { uint64_t id, class_tag, size; } *start;
	size_t nstart;
	int start_checked;               /* agent thread */
	uint64_t n_start_untagged, n_start_fillers, start_check_ns; /* agent thread */

	/* mode=full with gcwait: the classes whose class file the VM began to
	 * parse (ClassFileLoadHook) after GC late[].gc ended, by name, and
	 * their mirrors' class tags once prepared (ClassPrepare; 0 before).
	 * That GC's walk after a full GC leaves their mirrors out (walk.c,
	 * take_late): a class the VM defines between the GC and the walk (a
	 * boot class resolved by a thread released since: no Java code, no
	 * allocation for the gate to hold) was not in the heap the GC left.
	 * Entries of one GC only (an older one's walk is over or dropped);
	 * none for GCs up to late_walked (atomic: its walk took them).  Under
	 * late_mu, taken after a tstate's mutex, a leaf. */
	pthread_mutex_t late_mu;
	struct late_class { char *name; uint64_t tag; uint32_t gc; } *late;
	size_t nlate, late_cap;
	uint32_t late_walked;

	pthread_mutex_t free_mu;         /* recycled chunks */
	struct chunk *free_chunks;       /* under free_mu; owned */

	struct gcwait gw;                /* gcwait.c */
	struct mgmt beans;               /* mgmt.c, agent thread */

	/* agent thread (recorder.c).  Use before a GC, raised to a floor
	 * (raise_used_before): bytes of the allocation records of each epoch,
	 * the use after the last GC processed (first the GC forced at VMInit;
	 * UINT64_MAX unknown), and the end of that forced GC (older records
	 * were in its use after). */
	uint64_t epoch_bytes[GC_RING];
	uint64_t prev_used, used_base_ns;
	uint32_t n_used_raised;
	struct rlist stolen;             /* drained, not yet written */
	struct held held;
	struct death *dheld;             /* owned: deaths of GCs not yet written */
	size_t ndheld, dheld_cap;
	uint8_t *type_done, *site_done;  /* owned: symbols already written */
	uint32_t type_done_cap, site_done_cap;
	uint32_t processed;              /* last GC written */
	uint32_t merged_gc;              /* GC whose deaths may include earlier GCs' */
	int failed_rc;                   /* the first write error: recording stops */

	/* statistics (the allocation counters racy: verbose output only) */
	uint64_t n_vm_allocs, n_dup, n_deaths, n_walks, n_walk_objects;
	uint64_t n_mirror_walks_failed;  /* walk_mirrors failed: graph without it */
	uint64_t walk_ns, write_ns, flush_ns, n_site_miss;
	uint64_t untag_ns, n_untagged, n_walk_aliases; /* mode=sample walks (walk_untag, walk_alias) */
	/* The time the agent takes from the program (atomic: read in the GC
	 * start callback): allocation callbacks' work, summed over threads,
	 * the threads that ran one since the last GC start, and heap walks
	 * (trace info agent.overhead; the reader's time axis, docs). */
	uint64_t alloc_cb_ns, walk_total_ns;
	uint32_t alloc_threads;
	/* agent thread: allocation records written, sampled (flags 0) and
	 * found without an allocation event (HTR_ALLOC_PREEXISTING) */
	uint64_t n_written_allocs, n_written_alloc_bytes, n_written_pre;
};

/* Next object id (never a class id). */
static inline uint64_t rec_new_tag(struct recorder *rec)
{
	return __atomic_fetch_add(&rec->next_tag, 1, __ATOMIC_RELAXED);
}

/* ---- record buffers (events.c) ---- */
struct chunk *chunk_get(struct recorder *rec);
void chunk_put_list(struct recorder *rec, struct chunk *head);
/* A death of object id at GC gc, as an ObjectFree would note it (agent
 * thread; takes deaths_mu).  0 or -ENOMEM. */
int rec_add_death(struct recorder *rec, uint64_t id, uint32_t gc);
/* rec_add_death with deaths_mu held (0 or -ENOMEM: the death is lost). */
int rec_push_death_locked(struct recorder *rec, struct death d);
/* Appends to ts->recs; caller holds ts->mu.  Returns 0 or -ENOMEM. */
int ts_append(struct recorder *rec, struct tstate *ts, const struct arec *r);
/* The calling thread's state, created on first use; NULL on failure. */
struct tstate *ts_current(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Type id of a class (symbols.h); its mirror's record, if it is tagged
 * now, appended to ts (NULL: not recorded).  Caller holds ts->mu. */
uint32_t ts_type_of_class(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts);
/* Agent thread, walking GC n: the classes noted for it (late; *out and
 * the names owned by the caller), and none noted for it from here on. */
void recorder_late_take(struct recorder *rec, uint32_t n, struct late_class **out, size_t *nout);
/* GC n's kind and cause from the perf counters sampled in its callbacks
 * (have_perfdata): memory only, callable in them too. */
void rec_gc_kind(const struct recorder *rec, uint32_t n, int *full, char *cause, size_t cause_len);

/* ---- the agent thread (recorder.c) ---- */
/* RunAgentThread's function; arg: the struct recorder. */
void JNICALL recorder_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg);
/* Writes one record (and the symbols it needs).  Agent thread. */
int recorder_write_rec(struct recorder *rec, const struct arec *r);

/* ---- management beans (mgmt.c), agent thread only ---- */
/* Without the perf counters: mgmt_init looks the beans up at once (lazy
 * 0: mode=full, before allocations are recorded) or leaves it to the
 * first mgmt_query (lazy 1: mode=count, so a short run never pays).
 * Either says so on stderr when the beans are unavailable. */
int mgmt_init(struct mgmt *m, JNIEnv *jni, int lazy);
void mgmt_query(struct mgmt *m, JNIEnv *jni, struct gc_info *out);

/* ---- heap walks (walk.c), agent thread only ---- */
struct walk;
/* Tags every untagged object in the heap (VMInit) as an object that existed
 * before recording; records go to ts, whose mutex the caller holds.
 * mode=sample: notes them in rec->start. */
int walk_tag_preexisting(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, struct tstate *ts);
/* Heap walk for GC gc: collects roots and references.  Caller holds every
 * tstate mu.  *out is owned by the caller (walk_free). */
int walk_collect(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, struct walk **out);
/* The walk's graph is not the GC's (a later GC started during it): walk_write
 * writes only the objects the walk tagged first, which exist all the same. */
void walk_drop_graph(struct walk *wk);
/* Resolves, then writes the objects first seen in the walk (PREEXISTING),
 * the roots and every object's references (only
 * those objects after walk_drop_graph). Agent thread, no tstate lock. */
int walk_write(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc, uint64_t *nobjects);
void walk_free(struct walk *wk);
/* mode=sample: whether tag was given by a heap walk to an object it met
 * without a sample (rec->walk_ranges).  Caller holds deaths_mu. */
int walk_tag_is_walked(const struct recorder *rec, uint64_t tag);
/* mode=sample, after walk_collect: record r (a sample written after the
 * GC's end, as without a walk) is in the graph under an alias id, an
 * object the walk met without a sample (its ALLOC precedes GC_END: the
 * graph's objects all do).  Agent thread. */
int walk_alias(struct walk *wk, const struct arec *r);
/* mode=sample, after walk_write: clears the tags the walk gave (one
 * IterateThroughHeap over the tagged objects), so that no ObjectFree comes
 * for them and the tag map keeps only the samples. */
int walk_untag(struct walk *wk, jvmtiEnv *jvmti);
/* mode=sample, at the first GC (before its walk, if any): one
 * IterateThroughHeap over the tagged objects, at a safepoint, that
 * (1) finds the objects found at start (rec->start) whose tag now sits on
 * an object of another class or size: the heap iteration at VMInit made
 * the heap parsable by writing an int[] filler over the unused end of
 * each current TLAB, tagged it, and the thread then allocated over it, so
 * that the tag names whatever object came to lie at that address.  Such a
 * filler is no object of the program: its tag is cleared and its death
 * written at GC gc (its record says int[] of the filler's size);
 * (2) with start=first-gc, clears the tags of the others but class
 * mirrors (a class's type id) and the Thread objects of live threads (a
 * thread's id): the JVM's tag map is scanned after every GC (JDK 17
 * rehashes it on the next tag lookup and its service thread sweeps it for
 * dead entries), which with the ~23,000 objects a started JVM holds took
 * ~0.8 ms of the program's time a GC (agent/README.md); their later
 * deaths go unrecorded.  Frees rec->start.  Agent thread. */
int walk_check_start(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc);
/* After GC gc: every death of a sample that GC freed into rec->deaths,
 * by a heap walk from the roots that the first tagged root ends (the JVM
 * posts pending ObjectFree events first), or, with rec->cheap_flush,
 * mostly by asking each live sample's weak reference whether the GC
 * cleared it (walk.c).  0 or -EIO.  Agent thread. */
int walk_flush_deaths(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc);

/* ---- gcwait.c ---- */
/* Agent_OnLoad: the NativeMethodBind capability, then its event on. */
void gcwait_capabilities(jvmtiCapabilities *c);
int gcwait_onload(struct recorder *rec, jvmtiEnv *jvmti);
/* VMInit, once the agent thread runs: calls wait from here on. */
void gcwait_start(struct recorder *rec);
/* The agent thread, first thing: its own calls never wait. */
void gcwait_agent_thread(void);
/* GC finish callback: allocations after GC n wait for its walk. */
void gcwait_close_gate(struct recorder *rec, uint32_t n);
/* Agent thread: GCs 1..n are written (their walks done or dropped). */
void gcwait_processed(struct recorder *rec, jvmtiEnv *jvmti, uint32_t n);
/* Agent thread: GC n's heap is walked, or will not be (dropped, failed,
 * not wanted): allocations held since GC n go on. */
void gcwait_walked(struct recorder *rec, jvmtiEnv *jvmti, uint32_t n);
/* Allocation callbacks, first thing: after a GC that gets a graph
 * (gw.gate_gc), wait until its walk is over.  Two atomic loads when there
 * is nothing to wait for. */
void gcwait_allocation(struct recorder *rec, jvmtiEnv *jvmti);
/* VMDeath: no thread waits any more. */
void gcwait_stop(struct recorder *rec, jvmtiEnv *jvmti);
/* Waits of GC calls and of allocations, their time, and waits that ran
 * out (GCWAIT_MAX_MS). */
void gcwait_stats(struct recorder *rec, uint64_t *waits, double *wait_ms, uint64_t *alloc_waits,
		  double *alloc_wait_ms, uint64_t *timeouts);

#endif

/* agent.h - shared state of the heapfs JVMTI agent (libheapfs-agent.so).
 *
 * Threads and who does what (docs in agent/README.md):
 *   application threads  allocation callbacks: tag the object with the next
 *                        64-bit id, look up its class and site, append one
 *                        record to their own buffer (struct tstate) under
 *                        their own mutex; no global lock per allocation.
 *   VM / GC threads      GC start/finish callbacks: a timestamp, a counter,
 *                        the JVM's performance counters read (memory loads,
 *                        perfdata.h), a raw-monitor notify.  Nothing else.
 *   Service thread       ObjectFree: appends (id, GC) to the death queue.
 *   a thread in Runtime.gc()  with gcwait (gcwait.c): waits on its raw
 *                        monitor, holding no agent lock, until the agent
 *                        thread has processed the GCs finished so far.
 *   an allocating thread  with gcwait, after a GC that gets a graph: waits
 *                        the same way, before taking its tstate.mu, until
 *                        the agent thread has walked that GC's heap.
 *   agent thread         one JVMTI agent thread (recorder.c): drains the
 *                        buffers, walks the heap, resolves names, and is
 *                        the only user of the trace writer.
 *
 * Lock order: tstate.mu -> sym_mu -> (nothing).  deaths_mu, free_mu and
 * gcwait's raw monitor are leaves.  The heap-walk callbacks (run by the VM thread inside a safepoint)
 * take no lock at all: an application thread can hold any of the mutexes
 * while it waits for that safepoint to end.
 *
 * Object ids are the JVMTI tags.  Class mirrors get the ids 1..CLASS_TAG_MAX
 * (type id + 1), so the class of an allocation is one GetTag away; all other
 * objects get sequential ids from CLASS_TAG_MAX + 1 on.
 */
#ifndef HEAPFS_AGENT_H
#define HEAPFS_AGENT_H

#include <jvmti.h>
#include <pthread.h>
#include <stdint.h>

#include "agent/agent_opts.h"
#include "agent/counting.h"
#include "agent/perfdata.h"
#include "agent/symbols.h"
#include "model/htr.h"
#include "model/htr_writer.h"

#define CHUNK_RECS 4096u
#define GC_RING 4096u
#define SITE_CACHE 1024u                      /* per-thread, power of two */

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

/* A chain of chunks, oldest first. */
struct rlist {
	struct chunk *head, *tail;
};

/* Per application thread.  Owned by the registry (A.threads); freed by the
 * agent thread after ThreadEnd once drained. */
struct tstate {
	pthread_mutex_t mu;
	struct tstate *next;      /* registry list, under threads_mu */
	uint64_t thread_id;       /* tag of the java.lang.Thread object */
	char name[128];
	int is_agent;             /* the agent's own thread: allocations not recorded */
	int ended;                /* ThreadEnd seen */
	int announced;            /* THREAD event written (agent thread only) */
	uint32_t last_walk_seq;
	struct rlist recs;        /* under mu */
	/* site cache: hash of the raw frames -> site id */
	uint64_t sc_hash[SITE_CACHE];
	uint32_t sc_site[SITE_CACHE];
	jvmtiFrameInfo *frames;   /* [depth] scratch for GetStackTrace */
	jvmtiFrameInfo *sc_key;   /* [SITE_CACHE * depth] raw frames of each entry */
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
	/* the JVM's counters at the GC's start and end (A.have_perfdata) */
	struct perfdata_sample before, after;
};

struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_opts opts;
	char opts_string[1024];
	struct htr_writer *w;          /* agent thread only (after VMInit) */
	uint64_t t0_ns;                /* CLOCK_MONOTONIC at load */

	/* counters shared with callbacks (atomics) */
	uint32_t gc_started, gc_finished;
	uint32_t gate_gc;              /* the last GC after which allocations wait for its walk (gcwait.c) */
	int alloc_gate;                /* gcwait on, with the perf counters: gate_gc is set */
	uint32_t walk_seq;
	uint64_t next_tag;
	int recording;                 /* 1 between VMInit and VMDeath */
	struct gc_times gcs[GC_RING];
	struct perfdata perfdata;      /* GC kind, cause, heap use (perfdata.h) */
	int have_perfdata;             /* else the management beans (mgmt.c) */
	/* Use before a GC, raised to a floor (recorder.c's raise_used_before):
	 * bytes of the allocation records of each epoch (agent thread), the
	 * use after the last GC processed (first the GC forced at VMInit;
	 * UINT64_MAX unknown), and the end of that forced GC (older records
	 * were in its use after). */
	uint64_t epoch_bytes[GC_RING];
	uint64_t prev_used, used_base_ns;
	uint32_t n_used_raised;

	jrawMonitorID mon;             /* GC finish / stop -> agent thread */
	int stop;                      /* under mon: VMDeath asked to finish */
	int done;                      /* under mon: agent thread finished */
	int agent_started;             /* RunAgentThread succeeded */

	pthread_mutex_t threads_mu;
	struct tstate *threads;
	struct tstate init_ts;         /* objects found at VMInit (thread 0) */

	pthread_mutex_t deaths_mu;
	struct death *deaths; size_t ndeaths, deaths_cap;

	pthread_mutex_t free_mu;       /* recycled chunks */
	struct chunk *free_chunks;

	struct symbols *sym;           /* the symbol tables (symbols.h) */
	struct counting *cnt;          /* mode=count's state (counting.h), NULL in mode=full */
	uint64_t agent_thread_tag;
	jobject agent_thread;          /* global ref */

	/* statistics */
	uint64_t n_allocs, n_vm_allocs, n_dup, n_deaths, n_walks, n_walk_objects;
	uint64_t walk_ns, write_ns, flush_ns, n_site_miss;
};

extern struct agent A;

uint64_t agent_now_ns(void);
/* GC n's kind and cause from the perf counters sampled in its callbacks
 * (A.have_perfdata): memory only, callable in them too. */
void agent_gc_kind(uint32_t n, int *full, char *cause, size_t cause_len);
/* Next object id (never a class id). */
static inline uint64_t agent_new_tag(void)
{
	return __atomic_fetch_add(&A.next_tag, 1, __ATOMIC_RELAXED);
}

/* ---- record buffers (agent.c) ---- */
struct chunk *chunk_get(void);
void chunk_put_list(struct chunk *head);
/* Appends to ts->recs; caller holds ts->mu.  Returns 0 or -ENOMEM. */
int ts_append(struct tstate *ts, const struct arec *r);
/* The calling thread's state, created on first use; NULL on failure. */
struct tstate *ts_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* Type id of a class (symbols.h), its mirror's record, if it is tagged
 * now, appended to ts (NULL: not recorded).  Caller holds ts->mu. */
uint32_t ts_type_of_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, struct tstate *ts);

/* ---- management beans (mgmt.c), agent thread only ---- */
struct gc_info {
	int full;
	char cause[64];
	uint64_t used_before, used_after, capacity; /* UINT64_MAX unknown */
};
/* Without the perf counters: mgmt_init looks the beans up in mode=full
 * (before allocations are recorded); in mode=count it does nothing and
 * the first mgmt_query looks them up, so a short run never pays.  Either
 * says so on stderr when the beans are unavailable. */
int mgmt_init(JNIEnv *jni);
void mgmt_query(JNIEnv *jni, struct gc_info *out);

/* ---- heap walks (walk.c), agent thread only ---- */
struct walk;
/* Tags every untagged object in the heap (VMInit) as an object that existed
 * before recording; records go to ts. */
int walk_tag_preexisting(jvmtiEnv *jvmti, struct tstate *ts);
/* Heap walk for GC gc: collects roots and references.  Caller holds every
 * tstate mu.  *out is owned by the caller (walk_free). */
int walk_collect(jvmtiEnv *jvmti, struct walk **out);
/* Resolves, then writes the objects first seen in the walk (PREEXISTING),
 * the roots and every object's references. Agent thread, no tstate lock. */
int walk_write(jvmtiEnv *jvmti, JNIEnv *jni, struct walk *wk, struct htr_writer *w, uint32_t gc,
	       uint64_t *nobjects);
void walk_free(struct walk *wk);
/* Makes the JVM post pending ObjectFree events now, on this thread. */
int walk_flush_deaths(jvmtiEnv *jvmti);

/* ---- Runtime.gc() waits for the agent thread (gcwait.c) ---- */
/* Agent_OnLoad: the NativeMethodBind capability, then its event on. */
void gcwait_capabilities(jvmtiCapabilities *c);
int gcwait_onload(jvmtiEnv *jvmti);
void JNICALL gcwait_on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address);
/* VMInit, once the agent thread runs: calls wait from here on. */
void gcwait_start(void);
/* The agent thread, first thing: its own calls never wait. */
void gcwait_agent_thread(void);
/* Agent thread: GCs 1..n are written (their walks done or dropped). */
void gcwait_processed(jvmtiEnv *jvmti, uint32_t n);
/* Agent thread: GC n's heap is walked, or will not be (dropped, failed,
 * not wanted): allocations held since GC n go on. */
void gcwait_walked(jvmtiEnv *jvmti, uint32_t n);
/* Allocation callbacks, first thing: after a GC that gets a graph
 * (A.gate_gc), wait until its walk is over.  Two atomic loads when there
 * is nothing to wait for. */
void gcwait_allocation(jvmtiEnv *jvmti);
/* VMDeath: no thread waits any more. */
void gcwait_stop(jvmtiEnv *jvmti);
/* Waits of GC calls and of allocations, their time, and waits that ran
 * out (GCWAIT_MAX_MS). */
void gcwait_stats(uint64_t *waits, double *wait_ms, uint64_t *alloc_waits, double *alloc_wait_ms,
		  uint64_t *timeouts);

/* ---- the agent thread (recorder.c) ---- */
void JNICALL recorder_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg);
/* Writes one record (and the symbols it needs). */
int recorder_write_rec(const struct arec *r);

#endif

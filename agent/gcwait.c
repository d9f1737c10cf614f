/* gcwait.c - Runtime.gc() waits for the agent thread (gcwait=on).
 *
 * The agent walks the heap for GC n on its own thread after the GC has
 * ended, and drops the walk when GC n+1 starts first (its graph would be
 * n+1's heap).  A program that calls System.gc() in a loop, as leak hunts
 * and benchmarks do, starts the next GC within microseconds, so without
 * help only the last GC got a graph, walked after main had returned.
 *
 * JVMTI cannot block a GC from the GC callbacks (the walk needs the
 * safepoint the GC holds), but it can stop the thread that asks for one.
 * System.gc(), Runtime.gc() and MemoryMXBean.gc() all end in the native
 * method Runtime.gc(); when the JVM binds it (NativeMethodBind, at its
 * first call) the agent puts its own function in its place (agent.c's
 * runtime_gc, which calls gcwait_runtime_gc).  The wrapper waits
 * until the agent thread has processed every GC finished so far (any GC
 * the allocations made before), calls the JVM's function, then waits again
 * (for the GC it asked for: its graph is the heap right after the call).
 * Threads that call it at once pass one at a time (the gate, held across
 * the call): another thread's GC would otherwise follow this one's before
 * its walk.
 *
 * A GC that the program's allocations trigger cannot be held that way,
 * and one that follows the last within milliseconds (G1's preventive
 * collections, a burst of allocation) came before the walk.  So after a GC
 * that gets a graph (gate_gc, set in the GC finish callback) every
 * thread's next allocation callback waits, before it takes its buffer's
 * mutex, until the agent thread has walked that GC (gcwait_walked): no
 * allocation, so no allocation-triggered GC, before the walk.  The walk
 * stops the program at a safepoint anyway; what the gate adds is the agent
 * thread's wake-up and the drain before it.  Only with the perf counters
 * (the management beans' Java code, which the agent thread would run
 * otherwise, could need a lock an allocating thread holds).
 *
 * Every wait is bounded (GCWAIT_MAX_MS): a thread that holds something the
 * agent thread needs (the management beans' Java code, without perf
 * counters), or a gate holder stuck in the JVM's function, would
 * otherwise hang the program; a timed-out wait only loses a graph, as
 * without gcwait.
 */
#include "agent/recorder_internal.h"

#include "agent/agent.h"

#include <string.h>

#define GCWAIT_MAX_MS 30000

/* Whether the calling thread is the agent thread: its own calls never
 * wait (it is what they wait for). */
static __thread int tls_is_agent_thread;

void gcwait_capabilities(jvmtiCapabilities *c)
{
	c->can_generate_native_method_bind_events = 1;
}

int gcwait_onload(struct recorder *rec, jvmtiEnv *jvmti)
{
	if ((*jvmti)->CreateRawMonitor(jvmti, "heapfs-agent gcwait", &rec->gw.mon) != JVMTI_ERROR_NONE)
		return -1;
	return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL) ==
	       JVMTI_ERROR_NONE ? 0 : -1;
}

void gcwait_start(struct recorder *rec)
{
	__atomic_store_n(&rec->gw.ready, 1, __ATOMIC_RELEASE);
}

void gcwait_agent_thread(void)
{
	tls_is_agent_thread = 1;
}

static int caught_up(struct gcwait *gw, uint32_t target)
{
	return __atomic_load_n(&gw->processed, __ATOMIC_ACQUIRE) >= target ||
	       __atomic_load_n(&gw->stop, __ATOMIC_ACQUIRE);
}

/* With gw->mon entered: waits until ready(ctx), GCWAIT_MAX_MS at most;
 * a wait (if there was one) goes to *waits, *wait_ns and gw->timeouts. */
static void bounded_wait(struct gcwait *gw, jvmtiEnv *jvmti, int (*ready)(const void *ctx), const void *ctx,
			 uint64_t *waits, uint64_t *wait_ns)
{
	uint64_t t0 = agent_now_ns(), waited = 0;
	int waited_once = 0;
	while (!ready(ctx) && waited < GCWAIT_MAX_MS * 1000000ull) {
		waited_once = 1;
		(*jvmti)->RawMonitorWait(jvmti, gw->mon, 100);
		waited = agent_now_ns() - t0;
	}
	if (waited_once) {
		__atomic_fetch_add(waits, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(wait_ns, agent_now_ns() - t0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&gw->timeouts, (uint64_t)(waited >= GCWAIT_MAX_MS * 1000000ull), __ATOMIC_RELAXED);
	}
}

struct agent_wait {
	struct gcwait *gw;
	uint32_t target; /* GCs finished when the wait began */
	int take_gate;
};

/* (under gw->mon: gw->gate) */
static int agent_ready(const void *ctx)
{
	const struct agent_wait *w = ctx;
	return caught_up(w->gw, w->target) &&
	       !(w->take_gate && w->gw->gate && !__atomic_load_n(&w->gw->stop, __ATOMIC_ACQUIRE));
}

/* Waits until the agent thread has processed the GCs finished by now and,
 * before the call (take_gate), until no other thread is inside one; then
 * takes or gives back the gate. */
static void wait_for_agent(struct recorder *rec, jvmtiEnv *jvmti, int take_gate)
{
	struct gcwait *gw = &rec->gw;
	struct agent_wait w = { gw, __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE), take_gate };
	if ((*jvmti)->RawMonitorEnter(jvmti, gw->mon) != JVMTI_ERROR_NONE)
		return;
	bounded_wait(gw, jvmti, agent_ready, &w, &gw->waits, &gw->wait_ns);
	gw->gate = take_gate;
	if (!take_gate)
		(*jvmti)->RawMonitorNotifyAll(jvmti, gw->mon);
	(*jvmti)->RawMonitorExit(jvmti, gw->mon);
}

void gcwait_runtime_gc(struct recorder *rec, JNIEnv *jni, jobject runtime)
{
	runtime_gc_fn jvm_gc = __atomic_load_n(&rec->gw.jvm_gc, __ATOMIC_ACQUIRE);
	int wait = __atomic_load_n(&rec->gw.ready, __ATOMIC_ACQUIRE) && !tls_is_agent_thread;
	if (wait)
		wait_for_agent(rec, rec->jvmti, 1);
	jvm_gc(jni, runtime);
	if (wait)
		wait_for_agent(rec, rec->jvmti, 0);
}

static int is_runtime_gc(jvmtiEnv *jvmti, jmethodID method)
{
	char *name = NULL, *sig = NULL, *csig = NULL;
	jclass cls = NULL;
	int yes = 0;
	if ((*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return 0;
	if (!strcmp(name, "gc") && !strcmp(sig, "()V") &&
	    (*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE)
		yes = !strcmp(csig, "Ljava/lang/Runtime;");
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (csig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	return yes;
}

int gcwait_bind(struct recorder *rec, jvmtiEnv *jvmti, jmethodID method, void *address)
{
	if (!is_runtime_gc(jvmti, method))
		return 0;
	__atomic_store_n(&rec->gw.jvm_gc, (runtime_gc_fn)address, __ATOMIC_RELEASE);
	return 1;
}

static void wake(struct gcwait *gw, jvmtiEnv *jvmti)
{
	if (gw->mon && (*jvmti)->RawMonitorEnter(jvmti, gw->mon) == JVMTI_ERROR_NONE) {
		(*jvmti)->RawMonitorNotifyAll(jvmti, gw->mon);
		(*jvmti)->RawMonitorExit(jvmti, gw->mon);
	}
}

void gcwait_close_gate(struct recorder *rec, uint32_t n)
{
	__atomic_store_n(&rec->gw.gate_gc, n, __ATOMIC_RELEASE);
}

void gcwait_processed(struct recorder *rec, jvmtiEnv *jvmti, uint32_t n)
{
	__atomic_store_n(&rec->gw.processed, n, __ATOMIC_RELEASE);
	wake(&rec->gw, jvmti);
}

void gcwait_walked(struct recorder *rec, jvmtiEnv *jvmti, uint32_t n)
{
	uint32_t gate = __atomic_load_n(&rec->gw.gate_gc, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rec->gw.walked, n, __ATOMIC_RELEASE);
	if (gate && gate <= n)
		wake(&rec->gw, jvmti);
}

struct walk_wait {
	struct gcwait *gw;
	uint32_t gate; /* the GC whose walk the allocation waits for */
};

static int walk_done(const void *ctx)
{
	const struct walk_wait *w = ctx;
	return __atomic_load_n(&w->gw->walked, __ATOMIC_ACQUIRE) >= w->gate ||
	       __atomic_load_n(&w->gw->stop, __ATOMIC_ACQUIRE);
}

void gcwait_allocation(struct recorder *rec, jvmtiEnv *jvmti)
{
	struct gcwait *gw = &rec->gw;
	struct walk_wait w = { gw, __atomic_load_n(&gw->gate_gc, __ATOMIC_ACQUIRE) };
	if (!w.gate || walk_done(&w) || tls_is_agent_thread || !__atomic_load_n(&gw->ready, __ATOMIC_ACQUIRE))
		return;
	if ((*jvmti)->RawMonitorEnter(jvmti, gw->mon) != JVMTI_ERROR_NONE)
		return;
	bounded_wait(gw, jvmti, walk_done, &w, &gw->alloc_waits, &gw->alloc_wait_ns);
	(*jvmti)->RawMonitorExit(jvmti, gw->mon);
}

void gcwait_stop(struct recorder *rec, jvmtiEnv *jvmti)
{
	__atomic_store_n(&rec->gw.stop, 1, __ATOMIC_RELEASE);
	wake(&rec->gw, jvmti);
}

void gcwait_stats(struct recorder *rec, uint64_t *waits, double *wait_ms, uint64_t *alloc_waits,
		  double *alloc_wait_ms, uint64_t *timeouts)
{
	const struct gcwait *gw = &rec->gw;
	*waits = __atomic_load_n(&gw->waits, __ATOMIC_RELAXED);
	*wait_ms = (double)__atomic_load_n(&gw->wait_ns, __ATOMIC_RELAXED) / 1e6;
	*alloc_waits = __atomic_load_n(&gw->alloc_waits, __ATOMIC_RELAXED);
	*alloc_wait_ms = (double)__atomic_load_n(&gw->alloc_wait_ns, __ATOMIC_RELAXED) / 1e6;
	*timeouts = __atomic_load_n(&gw->timeouts, __ATOMIC_RELAXED);
}

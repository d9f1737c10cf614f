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
 * first call) the agent puts gc_wrapper in its place.  The wrapper waits
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
 * that gets a graph (A.gate_gc, set in the GC finish callback) every
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
#include "agent/agent.h"

#include <string.h>

#define GCWAIT_MAX_MS 30000

typedef void(JNICALL *runtime_gc_fn)(JNIEnv *jni, jobject runtime);

static jrawMonitorID gw_mon;    /* gw_processed, gw_stop, gw_gate -> waiting threads */
static runtime_gc_fn gw_jvm_gc; /* atomic: the JVM's Runtime.gc(), once bound */
static int gw_ready;            /* atomic: the agent thread runs (VMInit) */
static uint32_t gw_processed;   /* atomic: GCs the agent thread has written */
static int gw_stop;             /* atomic: VMDeath, nobody waits any more */
static int gw_gate;             /* under gw_mon: a thread is inside Runtime.gc() */
static uint32_t gw_walked;      /* atomic: the last GC whose walk is over (or will not come) */
static __thread int tls_is_agent_thread;
static uint64_t gw_waits, gw_wait_ns, gw_timeouts; /* atomics */
static uint64_t gw_alloc_waits, gw_alloc_wait_ns;  /* atomics: waits of allocations */

void gcwait_capabilities(jvmtiCapabilities *c)
{
	c->can_generate_native_method_bind_events = 1;
}

int gcwait_onload(jvmtiEnv *jvmti)
{
	if ((*jvmti)->CreateRawMonitor(jvmti, "heapfs-agent gcwait", &gw_mon) != JVMTI_ERROR_NONE)
		return -1;
	return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL) ==
	       JVMTI_ERROR_NONE ? 0 : -1;
}

void gcwait_start(void)
{
	__atomic_store_n(&gw_ready, 1, __ATOMIC_RELEASE);
}

void gcwait_agent_thread(void)
{
	tls_is_agent_thread = 1;
}

static int caught_up(uint32_t target)
{
	return __atomic_load_n(&gw_processed, __ATOMIC_ACQUIRE) >= target ||
	       __atomic_load_n(&gw_stop, __ATOMIC_ACQUIRE);
}

/* With gw_mon entered: waits until ready(ctx), GCWAIT_MAX_MS at most;
 * a wait (if there was one) goes to *waits, *wait_ns and gw_timeouts. */
static void bounded_wait(jvmtiEnv *jvmti, int (*ready)(const void *ctx), const void *ctx, uint64_t *waits,
			 uint64_t *wait_ns)
{
	uint64_t t0 = agent_now_ns(), waited = 0;
	int waited_once = 0;
	while (!ready(ctx) && waited < GCWAIT_MAX_MS * 1000000ull) {
		waited_once = 1;
		(*jvmti)->RawMonitorWait(jvmti, gw_mon, 100);
		waited = agent_now_ns() - t0;
	}
	if (waited_once) {
		__atomic_fetch_add(waits, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(wait_ns, agent_now_ns() - t0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&gw_timeouts, (uint64_t)(waited >= GCWAIT_MAX_MS * 1000000ull), __ATOMIC_RELAXED);
	}
}

struct agent_wait {
	uint32_t target; /* GCs finished when the wait began */
	int take_gate;
};

/* (under gw_mon: gw_gate) */
static int agent_ready(const void *ctx)
{
	const struct agent_wait *w = ctx;
	return caught_up(w->target) && !(w->take_gate && gw_gate && !__atomic_load_n(&gw_stop, __ATOMIC_ACQUIRE));
}

/* Waits until the agent thread has processed the GCs finished by now and,
 * before the call (take_gate), until no other thread is inside one; then
 * takes or gives back the gate. */
static void wait_for_agent(jvmtiEnv *jvmti, int take_gate)
{
	struct agent_wait w = { __atomic_load_n(&A.gc_finished, __ATOMIC_ACQUIRE), take_gate };
	if ((*jvmti)->RawMonitorEnter(jvmti, gw_mon) != JVMTI_ERROR_NONE)
		return;
	bounded_wait(jvmti, agent_ready, &w, &gw_waits, &gw_wait_ns);
	gw_gate = take_gate;
	if (!take_gate)
		(*jvmti)->RawMonitorNotifyAll(jvmti, gw_mon);
	(*jvmti)->RawMonitorExit(jvmti, gw_mon);
}

/* Runtime.gc()'s implementation while gcwait is on. */
static void JNICALL gc_wrapper(JNIEnv *jni, jobject runtime)
{
	runtime_gc_fn jvm_gc = __atomic_load_n(&gw_jvm_gc, __ATOMIC_ACQUIRE);
	int wait = __atomic_load_n(&gw_ready, __ATOMIC_ACQUIRE) && !tls_is_agent_thread;
	if (wait)
		wait_for_agent(A.jvmti, 1);
	jvm_gc(jni, runtime);
	if (wait)
		wait_for_agent(A.jvmti, 0);
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

void JNICALL gcwait_on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address)
{
	(void)jni;
	(void)thread;
	if (!is_runtime_gc(jvmti, method))
		return;
	__atomic_store_n(&gw_jvm_gc, (runtime_gc_fn)address, __ATOMIC_RELEASE);
	*new_address = (void *)gc_wrapper;
}

static void wake(jvmtiEnv *jvmti)
{
	if (gw_mon && (*jvmti)->RawMonitorEnter(jvmti, gw_mon) == JVMTI_ERROR_NONE) {
		(*jvmti)->RawMonitorNotifyAll(jvmti, gw_mon);
		(*jvmti)->RawMonitorExit(jvmti, gw_mon);
	}
}

void gcwait_processed(jvmtiEnv *jvmti, uint32_t n)
{
	__atomic_store_n(&gw_processed, n, __ATOMIC_RELEASE);
	wake(jvmti);
}

void gcwait_walked(jvmtiEnv *jvmti, uint32_t n)
{
	uint32_t gate = __atomic_load_n(&A.gate_gc, __ATOMIC_ACQUIRE);
	__atomic_store_n(&gw_walked, n, __ATOMIC_RELEASE);
	if (gate && gate <= n)
		wake(jvmti);
}

/* ctx: the GC whose walk the allocation waits for */
static int walk_done(const void *ctx)
{
	return __atomic_load_n(&gw_walked, __ATOMIC_ACQUIRE) >= *(const uint32_t *)ctx ||
	       __atomic_load_n(&gw_stop, __ATOMIC_ACQUIRE);
}

void gcwait_allocation(jvmtiEnv *jvmti)
{
	uint32_t gate = __atomic_load_n(&A.gate_gc, __ATOMIC_ACQUIRE);
	if (!gate || walk_done(&gate) || tls_is_agent_thread || !__atomic_load_n(&gw_ready, __ATOMIC_ACQUIRE))
		return;
	if ((*jvmti)->RawMonitorEnter(jvmti, gw_mon) != JVMTI_ERROR_NONE)
		return;
	bounded_wait(jvmti, walk_done, &gate, &gw_alloc_waits, &gw_alloc_wait_ns);
	(*jvmti)->RawMonitorExit(jvmti, gw_mon);
}

void gcwait_stop(jvmtiEnv *jvmti)
{
	__atomic_store_n(&gw_stop, 1, __ATOMIC_RELEASE);
	wake(jvmti);
}

void gcwait_stats(uint64_t *waits, double *wait_ms, uint64_t *alloc_waits, double *alloc_wait_ms,
		  uint64_t *timeouts)
{
	*waits = __atomic_load_n(&gw_waits, __ATOMIC_RELAXED);
	*wait_ms = (double)__atomic_load_n(&gw_wait_ns, __ATOMIC_RELAXED) / 1e6;
	*alloc_waits = __atomic_load_n(&gw_alloc_waits, __ATOMIC_RELAXED);
	*alloc_wait_ms = (double)__atomic_load_n(&gw_alloc_wait_ns, __ATOMIC_RELAXED) / 1e6;
	*timeouts = __atomic_load_n(&gw_timeouts, __ATOMIC_RELAXED);
}

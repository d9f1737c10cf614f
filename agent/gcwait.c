/* gcwait.c - System.gc() waits for the agent thread (gcwait=on).
 *
 * The agent walks the heap for GC n on its own thread after the GC has
 * ended, and drops the walk when GC n+1 starts first (its graph would be
 * n+1's heap).  A program that calls System.gc() in a loop, as leak hunts
 * and benchmarks do, starts the next GC within microseconds, so without
 * help only the last GC got a graph, walked after main had returned.
 *
 * JVMTI cannot block a GC from the GC callbacks (the walk needs the
 * safepoint the GC holds), but it can stop the thread that asks for one:
 * breakpoints at System.gc()'s first bytecode and at each of its returns
 * call back on the calling thread, which waits there until the agent thread
 * has processed every GC finished so far.  At the return, that is the GC it
 * asked for: its graph is the heap right after System.gc() returned.  At the
 * entry, it is any GC the allocations made before.  Threads that call
 * System.gc() at once pass one at a time (the gate, held from the entry to
 * the return): another thread's GC would otherwise follow this one's before
 * its walk.  Runtime.gc() is native (no bytecode for a breakpoint), so only
 * System.gc() waits.
 *
 * Every wait is bounded (GCWAIT_MAX_MS): a thread that holds something the
 * agent thread needs (the management beans' Java code, without perf
 * counters), or a gate holder that never reaches the return, would
 * otherwise hang the program; a timed-out wait only loses a graph, as
 * without gcwait.
 */
#include "agent/agent.h"
#include "agent/classfile.h"

#define GCWAIT_MAX_MS 30000
#define OP_RETURN 0xb1

static jrawMonitorID gw_mon;    /* gw_processed, gw_stop, gw_gate -> waiting threads */
static jmethodID gw_method;     /* java.lang.System.gc()V */
static uint32_t gw_processed;   /* atomic: GCs the agent thread has written */
static int gw_stop;             /* atomic: VMDeath, nobody waits any more */
static int gw_gate;             /* under gw_mon: a thread is inside System.gc() */
static __thread int tls_holds_gate;
static uint64_t gw_waits, gw_wait_ns, gw_timeouts; /* atomics */

void gcwait_capabilities(jvmtiCapabilities *c)
{
	c->can_generate_breakpoint_events = 1;
	c->can_get_bytecodes = 1;
}

/* Breakpoints at the entry and at every return of System.gc(). */
static int set_breakpoints(jvmtiEnv *jvmti, jmethodID m)
{
	jint len = 0;
	unsigned char *code = NULL;
	if ((*jvmti)->GetBytecodes(jvmti, m, &len, &code) != JVMTI_ERROR_NONE)
		return -1;
	int rc = (*jvmti)->SetBreakpoint(jvmti, m, 0) == JVMTI_ERROR_NONE ? 0 : -1;
	uint32_t nret = 0;
	for (uint32_t pc = 0; !rc && pc < (uint32_t)len;) {
		int n = cf_insn_len(code, (uint32_t)len, pc);
		if (n <= 0) {
			rc = -1;
			break;
		}
		if (code[pc] == OP_RETURN && pc > 0) {
			rc = (*jvmti)->SetBreakpoint(jvmti, m, (jlocation)pc) == JVMTI_ERROR_NONE ? 0 : -1;
			nret++;
		}
		pc += (uint32_t)n;
	}
	(*jvmti)->Deallocate(jvmti, code);
	return rc || !nret ? -1 : 0;
}

int gcwait_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
	int rc = -1;
	if ((*jvmti)->CreateRawMonitor(jvmti, "heapfs-agent gcwait", &gw_mon) != JVMTI_ERROR_NONE)
		return -1;
	jclass sys = (*jni)->FindClass(jni, "java/lang/System");
	if (!sys)
		goto out;
	gw_method = (*jni)->GetStaticMethodID(jni, sys, "gc", "()V");
	if (!gw_method || set_breakpoints(jvmti, gw_method))
		goto out;
	rc = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_BREAKPOINT, NULL) ==
	     JVMTI_ERROR_NONE ? 0 : -1;
out:
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (sys)
		(*jni)->DeleteLocalRef(jni, sys);
	return rc;
}

static int caught_up(uint32_t target)
{
	return __atomic_load_n(&gw_processed, __ATOMIC_ACQUIRE) >= target ||
	       __atomic_load_n(&gw_stop, __ATOMIC_ACQUIRE);
}

/* Entry (location 0): waits for the gate and for the GCs finished so far,
 * then takes the gate.  A return: waits for the GCs finished so far (its
 * own GC among them), then gives the gate back. */
void JNICALL gcwait_on_breakpoint(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				  jlocation location)
{
	if (method != gw_method || (A.agent_thread && (*jni)->IsSameObject(jni, thread, A.agent_thread)))
		return;
	int entry = location == 0;
	uint32_t target = __atomic_load_n(&A.gc_finished, __ATOMIC_ACQUIRE);
	uint64_t t0 = agent_now_ns(), waited = 0;
	int waits = 0;
	if ((*jvmti)->RawMonitorEnter(jvmti, gw_mon) != JVMTI_ERROR_NONE)
		return;
	while ((!caught_up(target) || (entry && gw_gate && !__atomic_load_n(&gw_stop, __ATOMIC_ACQUIRE))) &&
	       waited < GCWAIT_MAX_MS * 1000000ull) {
		waits = 1;
		(*jvmti)->RawMonitorWait(jvmti, gw_mon, 100);
		waited = agent_now_ns() - t0;
	}
	int timed_out = waits && waited >= GCWAIT_MAX_MS * 1000000ull;
	if (entry) {
		gw_gate = tls_holds_gate = 1;
	} else if (tls_holds_gate) {
		gw_gate = tls_holds_gate = 0;
		(*jvmti)->RawMonitorNotifyAll(jvmti, gw_mon);
	}
	(*jvmti)->RawMonitorExit(jvmti, gw_mon);
	if (waits) {
		__atomic_fetch_add(&gw_waits, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&gw_wait_ns, agent_now_ns() - t0, __ATOMIC_RELAXED);
		__atomic_fetch_add(&gw_timeouts, (uint64_t)timed_out, __ATOMIC_RELAXED);
	}
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

void gcwait_stop(jvmtiEnv *jvmti)
{
	__atomic_store_n(&gw_stop, 1, __ATOMIC_RELEASE);
	wake(jvmti);
}

void gcwait_stats(uint64_t *waits, double *wait_ms, uint64_t *timeouts)
{
	*waits = __atomic_load_n(&gw_waits, __ATOMIC_RELAXED);
	*wait_ms = (double)__atomic_load_n(&gw_wait_ns, __ATOMIC_RELAXED) / 1e6;
	*timeouts = __atomic_load_n(&gw_timeouts, __ATOMIC_RELAXED);
}

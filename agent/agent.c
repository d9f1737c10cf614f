/* agent.c - Agent_OnLoad, the JVMTI event callbacks, and the one instance
 * of struct agent.  The callbacks do no work of their own: each finds the
 * module that handles its event (recorder.h, counting.h) and passes it
 * its state.  See agent.h for the modules and agent/README.md for what is
 * recorded and how.
 */
#include "agent/agent.h"

#include "agent/agent_opts.h"
#include "agent/counting.h"
#include "agent/recorder.h"
#include "agent/symbols.h"

#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What is process-wide, and the modules' states.  Lives until the process
 * exits (the JVM may call back until then); its parts are made in
 * Agent_OnLoad and never freed. */
struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_opts opts;        /* parsed in Agent_OnLoad, read-only after */
	char opts_string[1024];        /* as given, for the trace's info */
	enum ablate ablate;            /* HEAPFS_AGENT_ABLATE (recorder.h), measurement only */
	uint64_t t0_ns;                /* CLOCK_MONOTONIC at load */
	struct symbols *sym;           /* owned */
	struct recorder *rec;          /* owned */
	struct counting *cnt;          /* owned; mode=count only, else NULL */
};

/* The one instance.  The JVM calls the callbacks below with no user
 * pointer: this accessor is how they, and agent_now_ns, find it. */
static struct agent *agent(void)
{
	static struct agent A;
	return &A;
}

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - agent()->t0_ns;
}

static void complain(const char *fmt, const char *arg)
{
	fprintf(stderr, "heapfs-agent: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

/* ---- the recorder's events (recorder.h) ------------------------------------ */

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				     jclass klass, jlong size)
{
	recorder_alloc(agent()->rec, jvmti, jni, thread, object, klass, size, 0);
}

static void JNICALL on_vm_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				jclass klass, jlong size)
{
	recorder_alloc(agent()->rec, jvmti, jni, thread, object, klass, size, 1);
}

static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	(void)jvmti;
	recorder_object_free(agent()->rec, tag);
}

static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
	(void)jvmti;
	recorder_gc_start(agent()->rec);
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
	recorder_gc_finish(agent()->rec, jvmti);
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	recorder_class_prepare(agent()->rec, jvmti, jni, thread, klass);
}

/* AsyncGetCallTrace works only while ClassLoad events are enabled: there
 * is nothing to do in them. */
static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jvmti; (void)jni; (void)thread; (void)klass;
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	struct agent *a = agent();
	recorder_thread_start(a->rec, jvmti, jni, thread);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti; (void)thread;
	struct agent *a = agent();
	if (a->cnt)
		count_thread_end(a->cnt);
	recorder_thread_end(a->rec, jni);
}

/* Runtime.gc() while gcwait is on (bound by on_native_bind): a native
 * method gets no user pointer either. */
static void JNICALL runtime_gc(JNIEnv *jni, jobject runtime)
{
	gcwait_runtime_gc(agent()->rec, jni, runtime);
}

static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address)
{
	(void)jni; (void)thread;
	if (gcwait_bind(agent()->rec, jvmti, method, address))
		*new_address = (void *)runtime_gc;
}

/* mode=full with gcwait: the classes defined between a GC and its walk */
static void JNICALL on_class_file_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	(void)jvmti; (void)jni; (void)loader; (void)pd; (void)len; (void)data; (void)new_len; (void)new_data;
	if (!redefined)
		recorder_class_file_hook(agent()->rec, name);
}

/* ---- mode=count's events (counting.h) -------------------------------------- */

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	count_class_file_load(agent()->cnt, jvmti, jni, redefined, loader, name, pd, len, data, new_len,
			      new_data);
}

static void JNICALL on_count_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	count_class_prepare(agent()->cnt, jvmti, jni, thread, klass);
}

static void JNICALL on_exception(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				 jlocation location, jobject exception, jmethodID catch_method,
				 jlocation catch_location)
{
	count_exception(agent()->cnt, jvmti, jni, thread, method, location, exception, catch_method,
			catch_location);
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

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	struct agent *a = agent();
	if (recorder_vm_init(a->rec, jni))
		return;
	/* mode=count records no objects: no types, mirrors or method ids */
	int objects = a->opts.mode != AGENT_MODE_COUNT;
	if ((objects && enable(jvmti, JVMTI_EVENT_CLASS_PREPARE)) ||
	    (recorder_wants_class_load(a->rec) && enable(jvmti, JVMTI_EVENT_CLASS_LOAD)) ||
	    (recorder_wants_class_hook(a->rec) && enable(jvmti, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK)) ||
	    enable(jvmti, JVMTI_EVENT_THREAD_START) ||
	    enable(jvmti, JVMTI_EVENT_THREAD_END))
		return;
	if (objects)
		recorder_register_loaded_classes(a->rec, jvmti, jni);
	/* allocations from here on are events; everything older is tagged by
	 * one heap iteration (recorder_tag_preexisting) */
	recorder_start_recording(a->rec);
	if (a->cnt) {
		/* counters instead of allocation events; GCs are still recorded */
		count_vm_init(a->cnt, jvmti, jni);
		if (enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_START) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
			return;
	} else {
		/* mode=sample: no VMObjectAlloc.  It reports objects the sampler
		 * never sees (reflection, JNI, VM-made); recorded, they would count
		 * as samples and stand for 1/p objects each. */
		int sampled = a->opts.mode == AGENT_MODE_SAMPLE;
		if (a->ablate != ABLATE_NOALLOC &&
		    (enable(jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC) ||
		     (!sampled && enable(jvmti, JVMTI_EVENT_VM_OBJECT_ALLOC))))
			return;
		/* A thread allocates inside its current TLAB without sampling until the
		 * TLAB is used up; a GC retires every TLAB, so from here on every
		 * allocation is sampled.  Not a GC of the trace: its events are off.
		 * Not in mode=sample: there the cost is out of proportion.  That
		 * full GC shrinks the committed heap to what is live (~10 MB), and
		 * G1 then pays for growing it again: SampleMix, -Xmx256m, 16 GCs
		 * instead of 11, 373 ms against 316 without it and 292 without
		 * the agent (medians of 7).  What it buys there is small and
		 * biases nothing: the objects the TLABs current at VMInit receive
		 * after the heap iteration below are neither found nor sampled
		 * (at most one TLAB per thread alive then; HotSpot's sampler
		 * counts no byte of a TLAB it never set a sample point in). */
		if (a->opts.mode != AGENT_MODE_SAMPLE)
			(*jvmti)->ForceGarbageCollection(jvmti);
		recorder_forced_gc_done(a->rec);
		if ((a->opts.deaths && enable(jvmti, JVMTI_EVENT_OBJECT_FREE)) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_START) ||
		    enable(jvmti, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
			return;
		recorder_tag_preexisting(a->rec, jvmti, jni);
	}
	recorder_start_thread(a->rec, jvmti, jni, thread);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct agent *a = agent();
	/* stop recording, let the agent thread write the rest and the footer */
	recorder_stop_recording(a->rec);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VM_OBJECT_ALLOC, NULL);
	if (a->cnt)
		count_finish(a->cnt, jni);
	recorder_finish(a->rec, jvmti);
}

static int add_capabilities(struct agent *a)
{
	jvmtiCapabilities c;
	memset(&c, 0, sizeof(c));
	recorder_capabilities(a->rec, &c);
	/* hot=N re-instruments classes */
	/* jdk=on: the JDK's classes loaded before VMInit are instrumented by retransformation */
	c.can_retransform_classes = a->opts.mode == AGENT_MODE_COUNT && (a->opts.hot || a->opts.count_jdk);
	jvmtiError e = (*a->jvmti)->AddCapabilities(a->jvmti, &c);
	if (e != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: the JVM lacks a needed JVMTI capability (error %d)\n", (int)e);
		return -1;
	}
	return 0;
}

static int set_callbacks(struct agent *a)
{
	jvmtiEnv *jvmti = a->jvmti;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.VMObjectAlloc = a->opts.mode == AGENT_MODE_SAMPLE ? NULL : on_vm_alloc;
	cb.ObjectFree = on_object_free;
	cb.GarbageCollectionStart = on_gc_start;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.ClassPrepare = on_class_prepare;
	cb.ClassLoad = on_class_load;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.NativeMethodBind = on_native_bind;
	cb.ClassFileLoadHook = on_class_file_hook;
	if (a->cnt) {
		cb.ClassFileLoadHook = on_class_file_load;
		cb.ClassPrepare = on_count_class_prepare;
		cb.Exception = on_exception;
	}
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return -1;
	/* 0: every allocation (mode=full); mode=sample: HotSpot's sampler picks
	 * one object per `interval` bytes on average (a Poisson process over
	 * the bytes each thread allocates, ThreadHeapSampler) */
	jint interval = a->opts.mode == AGENT_MODE_SAMPLE ? (jint)a->opts.interval : 0;
	if ((*jvmti)->SetHeapSamplingInterval(jvmti, interval) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: SetHeapSamplingInterval(%d) failed\n", (int)interval);
		return -1;
	}
	return enable(jvmti, JVMTI_EVENT_VM_INIT) || enable(jvmti, JVMTI_EVENT_VM_DEATH) ? -1 : 0;
}

/* HEAPFS_AGENT_ABLATE (recorder.h, enum ablate) into a->ablate. */
static int read_ablate(struct agent *a)
{
	const char *v = getenv("HEAPFS_AGENT_ABLATE");
	static const char *const names[] = { "noalloc", "events", "notag" };
	if (!v || !*v)
		return 0;
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(v, names[i])) {
			a->ablate = (enum ablate)(i + 1);
			fprintf(stderr, "heapfs-agent: HEAPFS_AGENT_ABLATE=%s: measuring, the trace is incomplete\n", v);
			return 0;
		}
	return -1;
}

/* The modules' states.  0 or -ENOMEM. */
static int init_state(struct agent *a)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	a->t0_ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	int rc = sym_new(&a->sym);
	/* mode=sample without walks: no graph, so no field a trace would name */
	if (!rc && a->opts.mode == AGENT_MODE_SAMPLE && a->opts.graph == AGENT_GRAPH_NONE)
		sym_without_fields(a->sym);
	if (!rc && a->opts.mode == AGENT_MODE_COUNT)
		rc = count_new(&a->cnt, &a->opts, a->sym, a->jvmti);
	if (!rc)
		rc = recorder_new(&a->rec, &a->opts, a->opts_string, a->sym, a->cnt, a->ablate);
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	struct agent *a = agent();
	char err[512];
	if (agent_opts_parse(&a->opts, options, err, sizeof(err))) {
		complain("%s", err);
		return JNI_ERR;
	}
	if (a->opts.help) {
		fputs(agent_opts_help(), stdout);
		fflush(stdout);
		return JNI_ERR;
	}
	snprintf(a->opts_string, sizeof(a->opts_string), "%s", options ? options : "");
	if (read_ablate(a)) {
		complain("%s", "HEAPFS_AGENT_ABLATE must be noalloc, events or notag");
		return JNI_ERR;
	}
	a->vm = vm;
	if ((*vm)->GetEnv(vm, (void **)&a->jvmti, JVMTI_VERSION_11) != JNI_OK) {
		complain("%s", "JVMTI 11 is not available (a JDK 11 or later is needed)");
		return JNI_ERR;
	}
	if (init_state(a)) {
		complain("%s", "out of memory");
		return JNI_ERR;
	}
	int rc = recorder_open(a->rec);
	if (rc) {
		fprintf(stderr, "heapfs-agent: cannot create %s: %s\n", a->opts.out, strerror(-rc));
		return JNI_ERR;
	}
	if (add_capabilities(a) || recorder_onload(a->rec, a->jvmti) || set_callbacks(a)) {
		complain("%s", "JVMTI setup failed");
		return JNI_ERR;
	}
	if (agent_opts_gc_wait(&a->opts) && recorder_gcwait_onload(a->rec, a->jvmti))
		fprintf(stderr, "heapfs-agent: gcwait: no NativeMethodBind events; back-to-back "
				"System.gc() calls may leave GCs without a graph\n");
	if (a->cnt && (rc = count_onload(a->cnt, a->jvmti))) {
		fprintf(stderr, "heapfs-agent: mode=count setup failed: %s\n", strerror(-rc));
		return JNI_ERR;
	}
	return JNI_OK;
}

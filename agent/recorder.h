/* recorder.h - the recorder: allocations, deaths, GCs and heap walks of the
 * recorded JVM into the trace (mode=full), and the agent thread that
 * writes the trace in both modes.  What agent.c calls; the state and the
 * functions the recorder's own files share are in recorder_internal.h.
 *
 * Files: events.c (the JVMTI events' side: per-thread record buffers,
 * deaths, GC times), recorder.c (the agent thread: draining, GC frames,
 * writing), walk.c (heap walks), gcwait.c (Runtime.gc() and allocations
 * wait for the walks), mgmt.c (GC figures from the management beans).
 *
 * Ownership: struct recorder is made by recorder_new and owned by struct
 * agent (agent.c).  It lives until the process exits: the JVM may post
 * events until then, and threads may still be inside a callback after
 * VMDeath.  It owns the trace writer (closed by the agent thread at the
 * end, or by recorder_finish if that thread never ran), the per-thread
 * buffers, the death queue and everything the agent thread keeps.  The
 * options, the symbol tables and mode=count's state are borrowed from the
 * agent.
 *
 * Locking: see recorder_internal.h.  None of these functions returns with
 * a lock held.  JVMTI callbacks get no user pointer: agent.c's callbacks
 * pass the instance to the functions below.
 */
#ifndef HEAPFS_AGENT_RECORDER_H
#define HEAPFS_AGENT_RECORDER_H

#include <jvmti.h>
#include <stdint.h>

#include "agent/agent_opts.h"
#include "agent/counting.h"
#include "agent/symbols.h"

struct recorder;

/* Measurement only (agent/bench.sh, "where the cost goes"): the
 * environment variable HEAPFS_AGENT_ABLATE leaves out one step so that its
 * cost shows; the trace is then incomplete.
 *   noalloc  allocation events are never enabled (the agent's fixed costs)
 *   events   the allocation callbacks return at once (the JVM's cost of
 *            posting an event for every allocation)
 *   notag    everything but SetTag (use with deaths=off,graph=none) */
enum ablate { ABLATE_NONE, ABLATE_NOALLOC, ABLATE_EVENTS, ABLATE_NOTAG };

/* ---- Agent_OnLoad ---- */
/* *out: a recorder, nothing recorded yet.  opts, opts_string (the option
 * string, for the trace's info), sym and cnt (NULL in mode=full) are
 * borrowed.  0 or -ENOMEM. */
int recorder_new(struct recorder **out, const struct agent_opts *opts, const char *opts_string,
		 struct symbols *sym, struct counting *cnt, enum ablate ablate);
/* Creates the trace file (opts->out), so that a bad path stops the JVM.
 * 0 or a negative errno. */
int recorder_open(struct recorder *rec);
/* The JVMTI capabilities recording needs (gcwait's too). */
void recorder_capabilities(const struct recorder *rec, jvmtiCapabilities *c);
/* The raw monitor that wakes the agent thread.  0 or -1. */
int recorder_onload(struct recorder *rec, jvmtiEnv *jvmti);
/* gcwait=on: the NativeMethodBind event on.  0 or -1 (then GC calls do not
 * wait). */
int recorder_gcwait_onload(struct recorder *rec, jvmtiEnv *jvmti);

/* ---- VMInit, in this order ---- */
/* The agent's thread (not yet running) and the source of GC kinds and heap
 * use (the JVM's performance counters, else the management beans).  -1:
 * no thread, nothing is recorded (said on stderr). */
int recorder_vm_init(struct recorder *rec, JNIEnv *jni);
/* Whether ClassLoad events are wanted (AsyncGetCallTrace needs them). */
int recorder_wants_class_load(const struct recorder *rec);
/* Whether ClassFileLoadHook events are wanted for the recorder (mode=full
 * with gcwait: the classes defined between a GC and its walk). */
int recorder_wants_class_hook(const struct recorder *rec);
/* mode=full: every class loaded so far gets its type id, its mirror an id. */
void recorder_register_loaded_classes(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni);
/* Allocation callbacks record from here on. */
void recorder_start_recording(struct recorder *rec);
/* mode=full, right after the GC forced at VMInit (no GC of the trace): its
 * use after is GC 1's base (raise_used_before in recorder.c). */
void recorder_forced_gc_done(struct recorder *rec);
/* mode=full: tags every object older than recording (one heap iteration). */
void recorder_tag_preexisting(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni);
/* Starts the agent thread; thread: VMInit's.  -1: it did not start (said
 * on stderr). */
int recorder_start_thread(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* ---- VMDeath ---- */
/* Allocation callbacks record no more. */
void recorder_stop_recording(struct recorder *rec);
/* The agent thread writes the rest and the footer, and ends; returns once
 * it has (or closes the trace if it never started). */
void recorder_finish(struct recorder *rec, jvmtiEnv *jvmti);

/* ---- the JVMTI events, with the callbacks' arguments ---- */
/* SampledObjectAlloc (from_vm 0) and VMObjectAlloc (from_vm 1). */
void recorder_alloc(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
		    jclass klass, jlong size, int from_vm);
void recorder_object_free(struct recorder *rec, jlong tag);
void recorder_gc_start(struct recorder *rec);
void recorder_gc_finish(struct recorder *rec, jvmtiEnv *jvmti);
void recorder_class_prepare(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
void recorder_class_file_hook(struct recorder *rec, const char *name);
void recorder_thread_start(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void recorder_thread_end(struct recorder *rec, JNIEnv *jni);

/* ---- gcwait: Runtime.gc() waits for the agent thread (gcwait.c) ---- */
/* NativeMethodBind: 1 if method is Runtime.gc() (address: the JVM's
 * function, kept); the caller then binds its replacement, which calls
 * gcwait_runtime_gc. */
int gcwait_bind(struct recorder *rec, jvmtiEnv *jvmti, jmethodID method, void *address);
/* Runtime.gc() while gcwait is on: waits, calls the JVM's, waits again. */
void gcwait_runtime_gc(struct recorder *rec, JNIEnv *jni, jobject runtime);

#endif

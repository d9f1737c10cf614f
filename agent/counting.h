/* counting.h - mode=count: allocation counts per site from bytecode path
 * counters (counting.c; agent/README.md, "mode=count").
 *
 * Why a module of its own: mode=count shares nothing with the object
 * recording of mode=full but the trace, the GC events and the METHOD ids.
 * It instruments classes in ClassFileLoadHook, keeps the counters'
 * meaning, and turns their values into per-site counts that the agent
 * thread writes (count_write) and that count_finish writes at exit.
 *
 * Ownership: struct counting is made by count_new and owned by struct
 * agent (agent.c), in mode=count only; it and everything it holds (the
 * tables of instrumented methods, sites, counters and clones, the profile,
 * the global references to the counter arrays and the helper class) live
 * until the process exits: the JVM may post events until then, and the
 * instrumented code increments the counter arrays to its very end.  The
 * symbol tables (symbols.h) and the options are borrowed from the agent.
 *
 * Locking: its own two mutexes, taken by these functions and never held
 * when they return.  `mu` guards the tables (the hooks, ClassPrepare, the
 * Exception event, the agent thread's reads); `arr_mu` the counter
 * arrays and the counted loops' counters; when both are taken, mu first.
 * The symbols' mutex is taken under mu (sym_method, sym_emit_method).
 * JVMTI callbacks get no user pointer: agent.c's callbacks pass the
 * instance to the count_* event functions below.
 */
#ifndef HEAPFS_AGENT_COUNTING_H
#define HEAPFS_AGENT_COUNTING_H

#include <jvmti.h>
#include <stdint.h>

#include "agent/agent_opts.h"
#include "agent/symbols.h"
#include "model/htr_writer.h"

struct counting;

/* *out: mode=count's state, nothing instrumented yet; opts copied, sym
 * borrowed.  0 or -ENOMEM. */
int count_new(struct counting **out, const struct agent_opts *opts, struct symbols *sym, jvmtiEnv *jvmti);
/* Agent_OnLoad: the counter table, the profile, the helper class on the
 * boot class path.  0 or a negative errno. */
int count_onload(struct counting *cn, jvmtiEnv *jvmti);
/* VMInit: the hook on: classes loaded from here on are instrumented. */
void count_vm_init(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni);

/* The JVMTI events of mode=count, with the callbacks' arguments. */
void count_class_file_load(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
			   const char *name, jobject pd, jint len, const unsigned char *data, jint *new_len,
			   unsigned char **new_data);
void count_class_prepare(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
void count_exception(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
		     jlocation location, jobject exception, jmethodID catch_method, jlocation catch_location);
/* ThreadEnd: a thread that ran counted code ends (the most such threads
 * alive at once, count.threads_max: allocs/stats says plain increments are
 * exact with one; counting.c, "Threads"). */
void count_thread_end(struct counting *cn);

/* VMDeath: reads the counters, writes counts=FILE, statistics. */
void count_finish(struct counting *cn, JNIEnv *jni);
/* Agent thread: the counts since the last call into the trace, after GC
 * gc (final: at exit). */
void count_write(struct counting *cn, JNIEnv *jni, struct htr_writer *w, uint32_t gc, int final);
/* Agent thread, every tick: hot=N retransformation of hot methods' classes.
 * Returns the milliseconds until the next call wanted, POLL_MIN_MS to
 * POLL_MAX_MS. */
#define POLL_MIN_MS 2u
#define POLL_MAX_MS 100u
int count_poll(struct counting *cn, jvmtiEnv *jvmti, JNIEnv *jni);

#endif

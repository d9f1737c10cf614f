/* agent.h - the heapfs JVMTI agent (libheapfs-agent.so): what is
 * process-wide.
 *
 * Modules, each with its own state behind its own struct, passed
 * explicitly to the functions that use it (agent/README.md, "Files"):
 *   agent.c       Agent_OnLoad and every JVMTI callback.  struct agent
 *                 (agent.c) holds what is truly process-wide: the JVMTI
 *                 environment, the JavaVM, the parsed options; and it owns
 *                 the three below.  The JVM passes callbacks no user
 *                 pointer, so they reach the one instance through one
 *                 accessor in agent.c and pass its parts down.
 *   recorder.h    mode=full's recording (events.c, recorder.c, walk.c,
 *                 gcwait.c, mgmt.c) and the agent thread, the only writer
 *                 of the trace in both modes: struct recorder.
 *   counting.h    mode=count (counting.c, with the instrumenter
 *                 instrument.h): struct counting.
 *   symbols.h     types, methods and sites (symbols.c): struct symbols.
 * No file reads another module's fields; each module's functions are
 * what the others use.
 *
 * Threads: application threads (allocation and class events), the VM and
 * GC threads (GC events), the Service thread (ObjectFree), and the
 * agent's own thread; recorder_internal.h says what each does in the
 * recorder, counting.h in mode=count.
 *
 * Lock order across modules: a recorder thread buffer's mutex -> the
 * symbols' mutex; counting's mutex -> the symbols' mutex.  These are the
 * only calls into another module made with a lock held; each module's
 * header says the rest.
 */
#ifndef HEAPFS_AGENT_H
#define HEAPFS_AGENT_H

#include <stdint.h>

/* Nanoseconds since the agent was loaded (CLOCK_MONOTONIC): the trace's
 * times.  Any thread, any callback. */
uint64_t agent_now_ns(void);

#endif

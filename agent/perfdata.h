/* perfdata.h - GC kind, cause and heap use from HotSpot's performance
 * counters: the "hsperfdata" file that jstat reads, which the JVM keeps
 * mapped at /tmp/hsperfdata_<user>/<pid> and updates inside each GC.
 *
 * Why: JVMTI tells neither whether a GC was full nor how much heap it
 * used.  The management beans (mgmt.c) do, but their first use loads ~350
 * classes and spins lambdas (~40-70 ms of a short run), and they can only
 * be asked after the GC.  The counters are plain memory: sampling them is
 * a few loads, allowed even in the GarbageCollectionStart/Finish callbacks
 * (where JVMTI and JNI are not), so the figures are those at the GC's
 * start and end.  Without the file (-XX:-UsePerfData,
 * -XX:+PerfDisableSharedMem, another JVM) the agent falls back to mgmt.c.
 *
 * Counters used (names as `jcmd PID PerfCounter.print` shows them):
 *   sun.gc.collector.N.name / .invocations   a "full" collector grew = full GC
 *   sun.gc.generation.G.space.S.used / .capacity   summed = heap use
 *   sun.gc.cause                              the running GC's cause
 *
 * Pure C (no jvmti.h): perfdata_parse works on any buffer, so the unit
 * test (tests/unit/test_perfdata.c) builds one by hand.
 * Ownership: a struct perfdata points into the buffer it was parsed from
 * and owns nothing; perfdata_open_self's mapping lives until exit.
 */
#ifndef HEAPFS_AGENT_PERFDATA_H
#define HEAPFS_AGENT_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#define PERFDATA_MAX_COLLECTORS 4
#define PERFDATA_MAX_SPACES 8
#define PERFDATA_CAUSE_MAX 64

struct perfdata {
	const volatile int64_t *invocations[PERFDATA_MAX_COLLECTORS];
	char collector_name[PERFDATA_MAX_COLLECTORS][PERFDATA_CAUSE_MAX];
	int full[PERFDATA_MAX_COLLECTORS];      /* the collector's name says "full" */
	uint32_t ncollectors;
	const volatile int64_t *used[PERFDATA_MAX_SPACES], *capacity[PERFDATA_MAX_SPACES];
	uint32_t nspaces;
	const volatile char *cause;             /* NULL: no such counter */
	uint32_t cause_len;
	/* every collector frees memory only inside its pauses (Serial,
	 * Parallel, G1: collectors named "... young collection pauses",
	 * "... full collection pauses" and "G1 concurrent cycle pauses"), so
	 * between two GCs the heap's use only grows; not ZGC or Shenandoah,
	 * which free while the program runs */
	int frees_in_pauses_only;
	/* java.cls.unloadedClasses and java.cls.sharedUnloadedClasses (NULL:
	 * no such counter) */
	const volatile int64_t *unloaded[2];
};

/* One reading of the counters. */
struct perfdata_sample {
	uint64_t used, capacity;                /* bytes, summed over the heap's spaces */
	int64_t invocations[PERFDATA_MAX_COLLECTORS];
	char cause[PERFDATA_CAUSE_MAX];         /* "" when no GC runs ("No GC") */
};

/* Finds the counters in a hsperfdata buffer of len bytes.  Returns 0, or
 * -EINVAL (not a native-endian hsperfdata 2.x buffer, or an entry outside
 * it) or -ENOENT (no collector or no heap space counters). */
int perfdata_parse(const void *buf, size_t len, struct perfdata *pd);

/* Reads the counters: memory loads only (safe in any callback). */
void perfdata_sample(const struct perfdata *pd, struct perfdata_sample *s);

/* What happened between two samples of one GC: *full = a full collector's
 * count grew; cause = the GC's cause, else the name of the collector whose
 * count grew, else "GC pause". */
void perfdata_gc(const struct perfdata *pd, const struct perfdata_sample *before,
		 const struct perfdata_sample *after, int *full, char *cause, size_t cause_len);

/* Classes unloaded so far (the two counters' sum), or -1 without them:
 * memory loads only. */
int64_t perfdata_unloaded(const struct perfdata *pd);

/* Maps this process's hsperfdata file read-only and parses it into *pd.
 * Returns 0 or a negative errno (no file: the JVM keeps none). */
int perfdata_open_self(struct perfdata *pd);

#endif

/* agent_opts.h - the option string of libheapfs-agent.so.
 *
 *   java -agentpath:build/libheapfs-agent.so=out=APP.htr,graph=every,depth=4 ...
 *
 * Pure C (no jvmti.h) so that it is unit-tested on its own.
 * Ownership: agent_opts_parse fills a caller-owned struct; `out` points into
 * the struct's own storage.
 */
#ifndef HEAPFS_AGENT_OPTS_H
#define HEAPFS_AGENT_OPTS_H

#include <stddef.h>
#include <stdint.h>

enum agent_graph_mode {
	AGENT_GRAPH_EVERY = 0, /* a heap walk after every GC */
	AGENT_GRAPH_NTH,       /* after every N-th GC (N = graph_every) */
	AGENT_GRAPH_FULL,      /* after full collections only */
	AGENT_GRAPH_NONE,      /* never: allocations, deaths and GCs only */
};

/* mode=sample: what becomes of the objects the JVM holds when the agent
 * starts (VMInit).  NONE: only the class mirrors get records (their tags
 * are the classes' type ids; the default: no heap iteration at start, no
 * tags for the rest); FIRST_GC: every one is tagged and recorded, its death followed to
 * the first GC, then untagged; ALL: followed to the end (forced by a heap
 * walk, which meets them by their tags).  Other modes: ALL. */
enum agent_start { AGENT_START_NONE, AGENT_START_FIRST_GC, AGENT_START_ALL };

/* The option value naming s ("none", "first-gc", "all"): also the trace
 * info sample.start_deaths's value. */
const char *agent_start_name(enum agent_start s);

enum agent_mode {
	AGENT_MODE_FULL = 0,   /* every allocation, deaths, heap walks */
	AGENT_MODE_COUNT,      /* allocation counts per site by path counters (DuckTracks) */
	AGENT_MODE_SAMPLE,     /* heap sampling: the objects JVMTI samples, their deaths, GCs */
};

#define AGENT_DEFAULT_COUNTERS (1u << 20)
#define AGENT_DEFAULT_HOT 0u /* off: see agent/README.md, hot paths */
#define AGENT_MAX_COUNTERS (1u << 27)
#define AGENT_DEFAULT_DEPTH 2 /* cost/benefit: agent/README.md, "Sites" */
#define AGENT_MAX_DEPTH 64
#define AGENT_OUT_MAX 4096
/* mode=sample: mean bytes between samples.  512 KiB is what JFR's
 * ObjectAllocationSample and async-profiler's live-heap mode use (and
 * HotSpot's own default); at most 2^30 (JVMTI takes a jint). */
#define AGENT_DEFAULT_INTERVAL (512u * 1024u)
#define AGENT_MAX_INTERVAL (1u << 30)

/* count_exceptions */
enum {
	COUNT_EXC_OFF = 0,         /* not corrected */
	COUNT_EXC_EVENTS = 1,      /* JVMTI Exception events walk the frames */
	COUNT_EXC_BYTECODE = 2,    /* handlers in the instrumented code (instrument.h) */
};

struct agent_opts {
	char out[AGENT_OUT_MAX];   /* trace file (default heapfs.htr) */
	enum agent_graph_mode graph;
	uint32_t graph_every;      /* AGENT_GRAPH_NTH: N >= 1 */
	uint32_t depth;            /* stack frames per allocation site; 0 = no sites */
	int zstd_level;            /* 1..19 */
	int deaths;                /* 1: record object deaths (ObjectFree) */
	int gc_wait;               /* 1: Runtime.gc() waits until the agent has recorded the GCs
	                            * finished so far (mode=full with a graph; agent/gcwait.c) */
	int verbose;               /* 1: statistics on stderr at exit */
	int stacks_asgct;          /* 1: AsyncGetCallTrace for sites, 0: GetStackTrace only */
	int help;                  /* 1: print agent_opts_help() and refuse to start */
	enum agent_mode mode;      /* count: no objects recorded (graph none, deaths off) */
	uint32_t interval;         /* mode=sample: SetHeapSamplingInterval's bytes, 1..2^30 */
	enum agent_start start;    /* mode=sample: the objects found at start (agent_opts.c) */
	uint32_t counters;         /* mode=count: capacity of the counter array */
	int count_sites;           /* mode=count: 1 one counter per site (exact under exceptions), 0 paths */
	int count_atomic;          /* mode=count: 1 atomic increments (exact with racing threads) */
	int count_exceptions;      /* mode=count, paths: how counts are corrected when an exception
	                            * leaves a frame mid-path: COUNT_EXC_* */
	int count_inline;          /* mode=count, paths: counters of constructors and static,
	                            * private, final methods inlined into their callers
	                            * (instrument.h, sink->clone) */
	int count_loops;           /* mode=count, paths: counted loops counted at their exits
	                            * (agent/loops.h, instrument.h sink->trip) */
	int count_jdk;             /* mode=count: also count the allocations of the JDK's own
	                            * java.* classes (boot loader), per site and per first
	                            * application caller (agent/counting.c, "JDK sites") */
	uint32_t hot;              /* mode=count, paths: re-instrument a method with measured edge
	                            * frequencies after this many calls; 0 never */
	char counts[AGENT_OUT_MAX]; /* mode=count: also write per-site counts as TSV here ("" none) */
	char profile[AGENT_OUT_MAX]; /* mode=count, paths: plans read from and measured frequencies
	                            * written to this file (agent/profile.h; "" none) */
	/* which of these the option string gave (the parser checks them
	 * against mode= once every item is read) */
	int graph_set, deaths_set, interval_set, start_set;
};

/* Parses "key=val,key=val".  NULL or "" gives the defaults.  Returns 0, or
 * -EINVAL with a one-line message naming the bad option in err. */
int agent_opts_parse(struct agent_opts *o, const char *s, char *err, size_t errlen);

/* The text printed for `help`. */
const char *agent_opts_help(void);

/* Whether GC number gc (1, 2, ...) gets a heap walk; full = it was a full
 * collection (as far as the agent knows). */
int agent_opts_wants_graph(const struct agent_opts *o, uint32_t gc, int full);

/* Whether Runtime.gc() waits for the agent (agent/gcwait.c): gcwait=on in
 * mode=full with a graph= other than none (nothing to wait for otherwise). */
int agent_opts_gc_wait(const struct agent_opts *o);

#endif

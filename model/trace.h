/* trace.h - an opened trace: the index built once at open.
 *
 * trace_open() reads the footer when the trace has one, and otherwise scans
 * every frame (a trace from a JVM that died has no footer); either way it
 * ends with the symbols (types, methods, sites, threads), the per-GC
 * timeline, the frame table and the trace's info key/values in memory.
 * A truncated tail is not an error: the trace opens up to its last complete
 * frame and `truncated` / `warnings` say so.
 *
 * Ownership: struct trace owns everything it points to; trace_close frees
 * it.  After open it is read-only except the progress counters, so any
 * number of threads may use it.
 */
#ifndef HEAPFS_TRACE_H
#define HEAPFS_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "htr.h"
#include "htr_reader.h"

struct trace_field {
	char *name;            /* owned */
	char *sig;             /* owned */
	uint32_t flags;        /* enum htr_field_flags */
};

struct trace_type {
	char *name;            /* owned; NULL = id never defined */
	uint32_t kind;         /* enum htr_type_kind */
	uint32_t instance_size, elem_size, super_id;
	uint32_t nfields;
	struct trace_field *fields; /* owned */
};

struct trace_method {
	char *cls, *name, *sig, *file; /* owned; name NULL = undefined */
};

struct trace_site {
	uint32_t nframes;      /* 0 = undefined */
	struct htr_site_frame *frames; /* owned; [0] allocating method */
};

/* A counted allocation site (format 1.1: COUNT_SITE; the agent's mode=count). */
struct trace_count_site {
	uint32_t method, bci;
	int32_t line;          /* -1 unknown */
	char *type;            /* owned; NULL = id never defined */
};

struct trace_thread {
	uint64_t id;           /* the trace's thread id */
	char *name;            /* owned */
};

struct trace_frame {
	uint64_t offset;       /* of the frame header */
	uint32_t kind;         /* HTR_FRAME_EVENTS or HTR_FRAME_GRAPH */
	uint32_t graph_gc;     /* GRAPH: the GC number whose graph it holds */
	uint64_t comp_len, raw_len;
	uint32_t nevents;
	uint32_t first_gc_index, last_gc_index; /* GCs ending in it; UINT32_MAX none */
	uint32_t min_death_gc; /* smallest GC number of deaths in it; UINT32_MAX none */
};

struct heap_state;

struct trace_kv {
	char *key, *value;     /* owned */
};

struct trace_open_opts {
	FILE *progress;        /* a heap dump's import warnings and summary (its progress
	                          goes to the thread's record, model/progress.h); NULL: quiet */
	int hprof_layout;      /* heap dumps: enum hprof_layout (model/hprof.h); 0 VisualVM's */
	uint32_t threads;      /* a heap dump's import (hprof_import_opts.threads) */
};

/* What a recorder took from the program until a GC started: time in its
 * allocation callbacks summed over threads (cb_ns), the threads that ran
 * one since the previous GC (threads), and time in heap walks, which stop
 * the program (walk_ns).  Cumulative from the recording's start, except
 * threads.  known 0: the GC has no figure. */
struct trace_overhead {
	uint64_t cb_ns, walk_ns;
	uint32_t threads;
	uint32_t known;
};

struct trace {
	char *path;            /* owned */
	struct htr_file *file; /* owned */

	struct trace_type *types;   uint32_t ntypes;    /* indexed by type id */
	struct trace_method *methods; uint32_t nmethods;/* indexed by method id */
	struct trace_site *sites;   uint32_t nsites;    /* indexed by site id */
	uint32_t nsymbols;          /* type, method and site records read (ids are
	                               dense: none runs far beyond this count) */
	struct trace_thread *threads; uint32_t nthreads;/* dense thread index */

	struct htr_gc_summary *gcs; uint32_t ngcs;      /* in trace order; gc index */
	struct trace_frame *frames; uint32_t nframes;
	struct trace_kv *info;      uint32_t ninfo;

	uint64_t total_allocs, total_alloc_bytes, total_deaths;
	/* allocation counts (1.1): totals per count-site id, from the footer or
	 * summed over the ALLOC_COUNTS events of the frames */
	struct trace_count_site *count_sites; uint32_t ncount_sites;
	int64_t *site_counts; uint32_t nsite_counts;   /* indexed by count-site id */
	int has_counts;                /* an ALLOC_COUNTS event was seen */
	uint64_t count_increments, count_per_site; /* of the latest ALLOC_COUNTS */
	uint32_t count_flags;          /* enum htr_count_flags of the latest */
	/* allocation counts per application caller (1.4, COUNT_CALLERS): as
	 * read, in file order; entries with the same (site, method, bci) add
	 * up (fs/render_allocs.c merges them) */
	struct htr_count_caller *count_callers; uint32_t ncount_callers; uint64_t cap_count_callers;
	uint64_t first_ns, last_ns;  /* earliest and latest timestamps seen */
	/* sampled allocations and sampled live objects (1.3: a JFR recording's
	 * allocation and old-object samples); the events stay in the frames */
	uint64_t alloc_samples, old_samples;
	/* 1: the trace records no objects (a JFR recording: GCs, samples and
	 * leak candidates only): object counts, heap contents and allocation
	 * totals are unknown, not zero */
	int objects_unrecorded;
	/* > 0: the objects are a sample (the agent's mode=sample, info keys
	 * agent.mode "sample" and sample.interval): each object allocated
	 * while recording was picked by HotSpot's heap sampler, a Poisson
	 * process over allocated bytes with this mean interval, and stands
	 * for trace_sample_weight() objects; objects that existed before
	 * recording (HTR_ALLOC_PREEXISTING) are all there and count once.
	 * 0: every object is recorded. */
	uint64_t sample_interval;
	/* The recorder's own time up to each GC's start (the agent's info
	 * agent.overhead), indexed by gc index; NULL when the trace has none.
	 * Owned. */
	struct trace_overhead *overhead;

	int had_footer;        /* 1: index read from the footer */
	/* 1: the trace's tail was cut off (data up to truncated_at, an offset
	 * in the trace), or a heap dump or JFR recording it was imported from
	 * was cut (truncated_dump: truncated_at is an offset in that file, the
	 * info key hprof.N.truncated or jfr.warning says which and where; a
	 * dump or recording opened directly is such a trace) */
	int truncated;
	int truncated_dump;
	uint64_t truncated_at;
	/* 1: the GCs are heap dumps (info hprof.dumps >= 2), whose objects are
	 * matched by address: a moving collection changes addresses between
	 * dumps, so which objects were born, died or survived between two GCs
	 * is not known (docs/hprof.md).  Counts per GC are exact. */
	int identity_unknown;
	char *warnings;        /* owned, lines of text, may be empty "" */

	/* Progress of the opening scan, for `status` (atomics). */
	uint64_t progress_done, progress_total;

	/* A heap dump opened directly: the heap state of its one GC, built
	 * from the dump while it was imported (model/hprof.h,
	 * hprof_import_temp_direct); equal to heap_state_build() of that GC.
	 * Owned; the state cache serves it without rebuilding.  NULL
	 * otherwise. */
	struct heap_state *prebuilt;
	/* The size of the file opened (the trace, or the heap dump or JFR
	 * recording whose temporary trace `file` is). */
	uint64_t source_bytes;
};

/* Opens and indexes.  On failure returns negative errno and fills err
 * (message names the offset; callers prefix the path). */
int trace_open(struct trace **out, const char *path, const struct trace_open_opts *opts,
	       struct htr_err *err);
void trace_close(struct trace *t);

/* Dense thread index for a trace thread id, or UINT32_MAX. */
uint32_t trace_thread_index(const struct trace *t, uint64_t thread_id);
/* gc index (position in t->gcs) for a GC number, or UINT32_MAX. */
uint32_t trace_gc_index(const struct trace *t, uint32_t gc);
/* Number of GCs whose flags have every bit of flags (enum htr_gc_flags). */
uint32_t trace_count_gcs(const struct trace *t, uint32_t flags);
/* Checks GC gc_index's recorded reachable summary (format 1.2,
 * HTR_GC_HAS_REACHABLE) against the reachable objects and bytes of its
 * rebuilt heap state.  0: equal, or nothing recorded; -EBADMSG: they
 * differ, and msg (len bytes) names the GC and both pairs of values. */
int trace_check_reachable(const struct trace *t, uint32_t gc_index, uint64_t objects, uint64_t bytes,
			  char *msg, size_t len);
/* Calls fn on every event of the event frames, in trace order (graph
 * frames are skipped).  fn returns 0 to go on, > 0 to stop (not an
 * error), < 0 an error, which is returned.  Damage: -EBADMSG etc. with
 * err filled (offset in the trace). */
int trace_each_event(const struct trace *t, int (*fn)(void *ctx, const struct htr_event *ev), void *ctx,
		     struct htr_err *err);
/* How many objects one recorded object of these flags (enum
 * htr_alloc_flags) and size stands for: 1 unless the trace is sampled
 * (sample_interval), where an object of s bytes was picked with
 * probability p = 1 - exp(-s / interval) and stands for 1 / p objects
 * (the Horvitz-Thompson weight, unbiased for counts and bytes; pprof and
 * async-profiler scale heap samples so).  Never below 1. */
double trace_sample_weight(const struct trace *t, uint32_t flags, uint64_t size);
/* Value of an info key, or NULL. */
const char *trace_info(const struct trace *t, const char *key);
/* Type name, or "<unknown type N>" written into scratch. */
const char *trace_type_name(const struct trace *t, uint32_t type, char *scratch, size_t len);

#endif

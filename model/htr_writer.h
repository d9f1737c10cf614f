/* htr_writer.h - writes .htr traces (see htr.h and docs/trace-format.md).
 *
 * Usage: open; define types/methods/sites/threads before use; write
 * allocations; for each GC: gc_start, [roots], [graph objects], [deaths],
 * gc_end (which completes and flushes one frame); close (which writes the
 * footer and trailer).  A process that dies between two GC_ENDs leaves a
 * trace that readers open up to the last completed frame.
 *
 * Ownership: the writer owns its file descriptor and buffers; the caller
 * owns everything it passes in (copied or encoded before return).
 * Every function returns 0 or a negative errno; after an error the writer
 * should be closed (close reports the first error again).
 *
 * Not thread-safe: one writer, one thread.
 */
#ifndef HEAPFS_HTR_WRITER_H
#define HEAPFS_HTR_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "htr.h"

struct htr_writer;

struct htr_writer_opts {
	int zstd_level;         /* 0 = default (3) */
	int no_footer;          /* testing: omit footer and trailer */
	int minor;              /* testing: 0 = current (HTR_VERSION_MINOR); 1 writes
	                         * the 1.1 layout (GC ends without reachable summaries) */
	int no_sync;            /* no fsync at close: the agent (its JVM exits right
	                         * after, and the page cache outlives the process;
	                         * ~1 ms of every recorded run's exit) and the
	                         * temporary traces of a dump or recording opened
	                         * directly (deleted after; ~2 ms of each opening) */
};

int htr_writer_open(struct htr_writer **out, const char *path, const struct htr_writer_opts *opts);
/* Writes the footer and trailer, closes, frees.  Returns the first error
 * seen over the writer's life, or 0. */
int htr_writer_close(struct htr_writer *w);
/* Frees without writing a footer: what a crash leaves (for tests). */
void htr_writer_abandon(struct htr_writer *w);

int htr_write_info(struct htr_writer *w, const char *key, const char *value);

struct htr_type_def {
	uint32_t id;
	const char *name;          /* Java name: java.util.HashMap$Node[] */
	uint32_t kind;             /* enum htr_type_kind */
	uint32_t instance_size;    /* instances: shallow size; arrays: header */
	uint32_t elem_size;        /* arrays: bytes per element */
	uint32_t super_id;         /* HTR_NO_TYPE for none */
	uint32_t nfields;          /* instance fields (inherited first), then statics */
	const struct htr_field *fields; /* name_len/sig_len ignored: NUL-terminated */
};
int htr_write_type(struct htr_writer *w, const struct htr_type_def *t);
int htr_write_method(struct htr_writer *w, uint32_t id, const char *cls, const char *name,
		     const char *sig, const char *file);
/* frames[0] is the allocating method, frames[1] its caller, ... */
int htr_write_site(struct htr_writer *w, uint32_t id, uint32_t nframes,
		   const struct htr_site_frame *frames);
int htr_write_thread(struct htr_writer *w, uint64_t id, const char *name);

int htr_write_alloc(struct htr_writer *w, const struct htr_alloc *a);

/* Objects freed by GC number gc.  ids need not be sorted. */
int htr_write_deaths(struct htr_writer *w, uint32_t gc, uint32_t count, const uint64_t *ids);

struct htr_gc_event {
	uint32_t gc;               /* GC numbers increase through the trace */
	uint64_t time_ns;
	uint64_t used;             /* heap bytes in use; UINT64_MAX if unknown */
	uint64_t capacity;         /* UINT64_MAX if unknown */
	uint32_t flags;            /* enum htr_gc_flags */
	const char *cause;         /* GC start only; may be NULL */
	const char *collector;     /* GC start only (1.3): the collector's name
	                            * (at most 23 bytes kept); may be NULL */
	/* GC end only (format 1.2): the objects reachable from the roots of
	 * the graph written for this GC and their shallow bytes, valid iff
	 * flags has HTR_GC_HAS_REACHABLE (which needs HTR_GC_HAS_GRAPH).
	 * Unknown = the flag left off: a zero-initialised event records
	 * nothing.  Values must be < UINT64_MAX. */
	uint64_t reachable_objects, reachable_bytes;
};
int htr_write_gc_start(struct htr_writer *w, const struct htr_gc_event *g);
int htr_write_roots(struct htr_writer *w, uint32_t gc, uint32_t count, const struct htr_root *roots);
/* One live object of the current GC's graph with all its references.  Every
 * live object must be written, also those with no references.  Splits long
 * reference lists into several events itself. */
int htr_write_graph_object(struct htr_writer *w, uint64_t id, uint32_t nrefs,
			   const struct htr_ref *refs);
/* Ends the GC and the frame.  Set HTR_GC_HAS_GRAPH in flags iff roots and
 * graph objects were written for this GC, and HTR_GC_HAS_REACHABLE (with
 * reachable_objects/bytes) only when the caller knows them exactly: readers
 * trust them instead of rebuilding, and `heapfs check` verifies them.
 * HTR_GC_HAS_REACHABLE in a GC start's flags is ignored. */
int htr_write_gc_end(struct htr_writer *w, const struct htr_gc_event *g);

/* Allocation counting (format 1.1).  A counted site: the allocating
 * instruction at bytecode offset bci of method (a METHOD id), its line
 * (-1 unknown) and the type it allocates (Java name).  A symbol: written
 * before the first ALLOC_COUNTS that names it. */
int htr_write_count_site(struct htr_writer *w, uint32_t id, uint32_t method, uint32_t bci, int32_t line,
			 const char *type);
/* Format 1.4: per counted site, the allocations made under each
 * application call above it (struct htr_count_caller; n of them, any
 * order, split into events of at most HTR_MAX_CHUNK).  A symbol, so the
 * footer repeats it: written after the COUNT_SITE and METHOD events it
 * names.  Entries with the same (site, method, bci) add up.  -EINVAL with
 * a writer of an older minor. */
int htr_write_count_callers(struct htr_writer *w, uint32_t n, const struct htr_count_caller *c);
/* Allocations per counted site since the previous call (sites ascending,
 * zero or negative counts allowed: a snapshot read while the program
 * runs can be ahead on some sites), after GC number gc (0: before any), and the
 * cumulative increments of the counters and of per-site counting.  The
 * footer repeats the totals. */
int htr_write_alloc_counts(struct htr_writer *w, uint32_t gc, uint32_t flags, uint64_t increments,
			   uint64_t per_site, uint32_t count, const uint32_t *sites, const int64_t *counts);

/* Sampled allocations and sampled live objects (format 1.3; -EINVAL when
 * the writer writes an older minor).  Types, sites and threads they name
 * are written first, as for allocations.  An old sample's strings are cut
 * to 200 bytes; at most HTR_MAX_CHUNK path entries.  The footer counts
 * both (SAMPLE_TOTALS). */
int htr_write_alloc_sample(struct htr_writer *w, const struct htr_alloc_sample *a);
int htr_write_old_sample(struct htr_writer *w, const struct htr_old_sample *o);

/* Bytes written to the file so far (compressed). */
uint64_t htr_writer_bytes(const struct htr_writer *w);

#endif

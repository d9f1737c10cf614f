/* samples.h - what a trace's samples stand for: sampled allocations per
 * site and type with estimates of the allocations behind them, and the
 * sampled live objects (leak candidates) grouped by type and site.
 *
 * The samples are a trace's ALLOC_SAMPLE and OLD_SAMPLE events (format
 * 1.3; a JDK Flight Recorder recording's jdk.ObjectAllocationSample,
 * ObjectAllocationInNewTLAB/OutsideTLAB and jdk.OldObjectSample).
 *
 * Estimates (docs/jfr.md).  A sample stands for `weight` bytes of
 * allocation: a jdk.ObjectAllocationSample the bytes its thread allocated
 * since its previous sample, a new-TLAB event the TLAB's size, an
 * outside-TLAB event itself (every such allocation has one).  The bytes
 * a site allocated are estimated by the sum of its samples' weights (what
 * JDK Mission Control shows).  Its allocations are estimated by the sum
 * of weight / object size over its samples, where the size is known: a
 * TLAB event gives it; an ObjectAllocationSample does not, and takes the
 * size seen in a TLAB event of the same class when the class is not an
 * array (instances of a class have one size).  A row none of whose
 * samples has a size has no count estimate (est_count_known 0).
 *
 * Which samples: jdk.ObjectAllocationSample where the trace has any
 * (JDK 16 and later, on by default), else the TLAB events; the two sample
 * the same allocations and are never added together.
 *
 * Ownership: the sets own their arrays; free with samples_free /
 * old_samples_free.  Nothing is cached here: callers cache what they
 * render (one pass over the trace's event frames per call).
 */
#ifndef HEAPFS_ANALYSES_SAMPLES_H
#define HEAPFS_ANALYSES_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "model/trace.h"

/* The samples of one type allocated at one place (its sites' allocating
 * frame, method and line: callers may differ). */
struct sample_row {
	uint32_t site, type;       /* site: the first seen; HTR_NO_SITE / HTR_NO_TYPE if unknown */
	uint64_t samples;
	uint64_t weight;           /* estimated bytes allocated */
	double est_count;          /* estimated allocations, over the samples with a size */
	uint64_t sized;            /* samples with a known size (est_count_known iff > 0) */
};

/* A site's allocating frame as one number (method, line); UINT64_MAX
 * for an unknown site: sites of different callers that allocate at the
 * same place have the same key. */
uint64_t samples_site_key(const struct trace *t, uint32_t site);

struct sample_set {
	struct sample_row *rows;   /* owned; most estimated bytes first */
	uint32_t n;
	uint32_t kind;             /* HTR_SAMPLE_JFR, or HTR_SAMPLE_JFR_NEW_TLAB for the TLAB
	                            * events (with OUTSIDE_TLAB), or SAMPLES_AGENT; 0 when
	                            * there are none */
	uint64_t samples, weight;  /* over the rows */
	uint64_t by_kind[HTR_SAMPLE_KIND_MAX + 1]; /* samples of each kind in the range */
};

/* sample_set.kind of a sampled trace (model/trace.h sample_interval): the
 * agent's mode=sample, whose ALLOC events are the samples, each of known
 * size and standing for trace_sample_weight() allocations (est_count)
 * and as many times its size in bytes (weight). */
#define SAMPLES_AGENT 100

/* The samples with time in [from_ns, to_ns), aggregated per (site, type).
 * 0 or negative errno (err filled on damage). */
int samples_collect(const struct trace *t, uint64_t from_ns, uint64_t to_ns, struct sample_set *out,
		    struct htr_err *err);
void samples_free(struct sample_set *s);

/* One sampled live object. */
struct old_row {
	uint64_t time_ns, alloc_ns, age_ns;
	uint64_t heap_used;        /* UINT64_MAX unknown */
	uint32_t type, site;
	uint64_t thread;
	int64_t array_length;      /* -1 not an array */
	uint32_t root_kind, root_desc, root_system; /* offsets into strs ("" = none) */
	uint64_t path_off, npath;  /* its entries in path[] */
};

struct old_path_entry {
	uint32_t type;
	uint32_t how, desc;        /* offsets into strs */
	uint32_t skip;
};

/* Leak candidates of one type allocated at one place (the sites'
 * allocating frame: method and line; callers may differ). */
struct old_group {
	uint32_t type, site;       /* site: the example's */
	uint64_t samples;
	uint64_t with_path;        /* samples whose path to a root was recorded */
	uint64_t first_alloc_ns, last_alloc_ns;
	uint64_t max_age_ns;
	uint32_t example;          /* the oldest sample of the group (index into rows) */
};

struct old_set {
	struct old_row *rows;      /* owned; in trace order */
	uint64_t n;
	struct old_path_entry *path; /* owned */
	uint64_t npath;
	char *strs;                /* owned; NUL-terminated strings; offset 0 is "" */
	uint64_t strs_len;
	struct old_group *groups;  /* owned; most samples first, then oldest */
	uint32_t ngroups;
};

int old_samples_collect(const struct trace *t, struct old_set *out, struct htr_err *err);
/* The type name of a path entry; a static field's holder, the class's
 * mirror (java.lang.Class, described "Class Name: X"), is named X.
 * scratch: for an unknown type id. */
const char *old_entry_type(const struct trace *t, const struct old_set *s, const struct old_path_entry *e,
			   char *scratch, size_t len);
/* The static field nearest the object on row r's path ("Class.field":
 * the first holder that is a class's mirror), into out; 1 if there is
 * one, 0 if the path has none (or was not recorded). */
int old_static_holder(const struct trace *t, const struct old_set *s, const struct old_row *r, char *out,
		      size_t len);
void old_samples_free(struct old_set *s);

#endif

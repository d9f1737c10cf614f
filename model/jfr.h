/* jfr.h - reading JDK Flight Recorder recordings (.jfr), as JDK 17 and
 * later write them (chunk format 2.x), into typed tables for heapfs.
 *
 * A recording is one or more chunks laid end to end.  Each chunk is
 * self-contained: a 68-byte header, events, a metadata event that
 * describes every type (its fields, which of them are constant-pool
 * references, which are arrays) and checkpoint events that hold the
 * constant pools (classes, methods, stack traces, threads, strings...).
 * The reader parses every event per its metadata description (so a type
 * it does not know is still checked and stepped over), resolves the
 * constant pools, and keeps what heapfs needs as struct-of-arrays tables
 * with dense ids: GCs and heap summaries, allocation samples, old-object
 * samples with their reference chains, stack traces, threads, classes,
 * methods, the JVM's description, the recording's settings and a count of
 * events per type.  docs/jfr.md gives the format rules and the JDK source
 * files they come from.
 *
 * Times are nanoseconds since the epoch (timestamps) or nanoseconds
 * (durations), converted from ticks with the chunk's ticks per second and
 * start ticks/nanos exactly as the JDK's TimeConverter does.
 *
 * Damage: a recording whose first chunk is damaged is refused (negative
 * errno, err says the offset and what is wrong; the caller prints
 * "FILE: offset N: MSG" as for traces).  Damage or a cut in a later chunk
 * keeps the chunks before it: the recording opens with truncated set and
 * `warning` saying, with the file's name, the offset and what was wrong.
 *
 * Ownership: struct jfr_recording owns everything it points to (the
 * file's mapping, its path, every table, the string bytes) and
 * jfr_close() frees it all.  A buffer given to jfr_open_buffer is borrowed
 * and must outlive the recording.  Nothing is allocated per event: tables
 * grow by doubling.  A recording is read-only once open, so threads may
 * share it.
 */
#ifndef HEAPFS_JFR_H
#define HEAPFS_JFR_H

#include <stddef.h>
#include <stdint.h>

#include "htr_reader.h"

#define JFR_MAGIC "FLR\0"
#define JFR_HEADER_SIZE 68u
/* "no value" for an id or a string id: a null string, an absent stack
 * trace, a constant-pool reference the pools do not hold. */
#define JFR_NONE UINT32_MAX

/* One chunk as its header describes it. */
struct jfr_chunk {
	uint64_t offset;           /* in the file */
	uint64_t size;
	uint64_t cpool_offset, meta_offset; /* from the chunk's start */
	uint16_t major, minor;
	uint8_t flags;             /* bit 0 compressed integers, bit 1 final chunk */
	int64_t start_nanos;       /* epoch ns */
	int64_t duration_nanos;
	int64_t start_ticks;
	int64_t ticks_per_second;
	uint64_t events;           /* events in the chunk (not metadata, checkpoints) */
};

/* Interned UTF-8 strings, each NUL-terminated: id -> bytes + off[id]. */
struct jfr_strings {
	char *bytes;
	uint64_t len, cap;
	uint64_t *off;
	uint32_t n, cap_n;
	uint32_t *slots;           /* hash set of ids */
	uint32_t nslots;
};

/* Java classes: name as the recording writes it ("java/lang/String"),
 * its loader's name ("bootstrap", "app") or JFR_NONE. */
struct jfr_classes {
	uint32_t *name, *loader;
	uint32_t n; uint64_t cap;
};

struct jfr_methods {
	uint32_t *cls;             /* class id or JFR_NONE */
	uint32_t *name, *descriptor;
	uint32_t n; uint64_t cap;
};

/* Stack traces: stack s has frames frame_off[s] .. frame_off[s+1] - 1,
 * top frame first. */
struct jfr_stacks {
	uint64_t *frame_off;       /* n + 1 entries */
	uint8_t *truncated;
	uint32_t n; uint64_t cap;
	uint32_t *method;          /* per frame: method id or JFR_NONE */
	int32_t *line, *bci;
	uint32_t *type;            /* "Interpreted", "JIT compiled", "Inlined"... */
	uint64_t nframes, frame_cap;
};

struct jfr_threads {
	uint32_t *java_name, *os_name;
	int64_t *java_id, *os_id;
	uint32_t n; uint64_t cap;
};

/* jdk.GarbageCollection */
struct jfr_gcs {
	int64_t *gc_id;
	uint32_t *name, *cause;
	int64_t *start_ns, *duration_ns, *sum_pauses_ns, *longest_pause_ns;
	/* 1: a jdk.YoungGarbageCollection names this gcId, 2: an
	 * OldGarbageCollection, 0: neither */
	uint8_t *generation;
	uint32_t n; uint64_t cap;
};

/* jdk.GCHeapSummary */
struct jfr_heap_summaries {
	int64_t *gc_id;
	uint32_t *when;            /* "Before GC" / "After GC" */
	int64_t *start_ns, *heap_used, *committed, *reserved;
	uint32_t n; uint64_t cap;
};

/* jdk.GCPhasePause */
struct jfr_gc_pauses {
	int64_t *gc_id;
	uint32_t *name;
	int64_t *start_ns, *duration_ns;
	uint32_t n; uint64_t cap;
};

enum jfr_alloc_kind {
	JFR_ALLOC_SAMPLE = 0,      /* jdk.ObjectAllocationSample: weight */
	JFR_ALLOC_NEW_TLAB = 1,    /* jdk.ObjectAllocationInNewTLAB */
	JFR_ALLOC_OUTSIDE_TLAB = 2,/* jdk.ObjectAllocationOutsideTLAB */
};

/* Allocation events.  weight: the sample's weight (bytes it stands for)
 * for a sample, the allocationSize for a TLAB event; tlab_size for
 * NEW_TLAB only (else 0). */
struct jfr_allocs {
	uint8_t *kind;
	int64_t *start_ns;
	uint32_t *cls, *stack, *thread;
	int64_t *weight, *tlab_size;
	uint32_t n; uint64_t cap;
};

/* The objects of old-object samples' reference chains: sample k's chain
 * is path_off[k] .. path_off[k+1] - 1, the sampled object first, then the
 * object that refers to it, and so on towards the root.  Entry i > first
 * tells how it holds entry i - 1: by field ref_field (with its modifiers)
 * or as element ref_index of an array of ref_array_size elements;
 * ref_skip objects left out between them. */
struct jfr_old_path {
	int64_t *address;
	uint32_t *cls, *description;
	uint32_t *ref_field;
	int32_t *ref_modifiers, *ref_array_size, *ref_index, *ref_skip;
	uint64_t n, cap;
};

/* jdk.OldObjectSample */
struct jfr_old_samples {
	int64_t *start_ns, *alloc_ns, *age_ns, *heap_usage;
	int32_t *array_elements;   /* INT32_MIN when not an array */
	uint32_t *stack, *thread;
	uint32_t *root_description, *root_system, *root_type; /* JFR_NONE: no root */
	uint64_t *path_off;        /* n + 1 entries into struct jfr_old_path */
	uint32_t n; uint64_t cap;
};

/* jdk.ActiveSetting: event type (its id, and its name when the metadata
 * has it), setting, value. */
struct jfr_settings {
	int64_t *type_id;
	uint32_t *type_name, *name, *value;
	uint32_t n; uint64_t cap;
};

/* jdk.ActiveRecording */
struct jfr_active_recordings {
	int64_t *id;
	uint32_t *name, *destination;
	int64_t *max_age_ns, *max_size, *start_ns, *duration_ns;
	uint32_t n; uint64_t cap;
};

/* Events per type name, over the whole recording. */
struct jfr_event_counts {
	uint32_t *name;
	uint64_t *count;
	uint32_t n; uint64_t cap;
};

/* jdk.JVMInformation (the last one read); JFR_NONE where absent. */
struct jfr_jvm {
	uint32_t name, version, arguments, flags, java_arguments;
	int64_t start_ns, pid;     /* start: epoch ns; both -1 when absent */
};

struct jfr_recording {
	char *path;                /* owned */
	const uint8_t *data;       /* the file (mapped) or the borrowed buffer */
	uint64_t size;
	int mapped;

	struct jfr_chunk *chunks;
	uint32_t nchunks;
	uint64_t read_bytes;       /* bytes of complete chunks read */
	int64_t start_ns, end_ns;  /* first chunk's start, last chunk's end */

	int truncated;             /* a later chunk was cut or damaged */
	struct htr_err damage;     /* its offset and what was wrong */
	char warning[600];         /* "FILE: offset N: MSG (read the first K chunks)" */

	struct jfr_strings strings;
	struct jfr_classes classes;
	struct jfr_methods methods;
	struct jfr_stacks stacks;
	struct jfr_threads threads;
	struct jfr_gcs gcs;
	struct jfr_heap_summaries heap;
	struct jfr_gc_pauses pauses;
	struct jfr_allocs allocs;
	struct jfr_old_samples old;
	struct jfr_old_path old_path;
	struct jfr_settings settings;
	struct jfr_active_recordings recordings;
	struct jfr_event_counts event_counts;
	struct jfr_jvm jvm;
};

/* Maps path and reads every chunk.  0, or: -EPROTO not a JFR recording (or
 * a version other than 2.x); -EBADMSG the first chunk is damaged or cut;
 * -ENOMEM; other negative errno from the system (err says the file). */
int jfr_open(struct jfr_recording **out, const char *path, struct htr_err *err);

/* The same over size bytes at data, borrowed (tests, fuzzing); name is
 * used in the warning. */
int jfr_open_buffer(struct jfr_recording **out, const uint8_t *data, uint64_t size,
		    const char *name, struct htr_err *err);

void jfr_close(struct jfr_recording *r);

/* 1 if the file at path starts with "FLR\0", 0 if not or unreadable. */
int jfr_file_is_recording(const char *path);

/* The string of id sid, or NULL for JFR_NONE (a null string). */
static inline const char *jfr_str(const struct jfr_recording *r, uint32_t sid)
{
	return sid == JFR_NONE || sid >= r->strings.n ? NULL : r->strings.bytes + r->strings.off[sid];
}

#endif

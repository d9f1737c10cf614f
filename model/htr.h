/* htr.h - the heapfs trace format (.htr): constants and the decoded event.
 *
 * docs/trace-format.md is the specification; this header is its C mirror.
 * File layout:
 *
 *   header  32 bytes  "HEAPFSTR" | u16 major | u16 minor | u32 header_size
 *                     | u64 flags | u32 reserved | u32 crc32(bytes 0..27)
 *   frame*            32-byte frame header + zstd payload (one zstd frame,
 *                     content checksum on); an event frame holds the events of
 *                     one GC epoch and ends right after that epoch's GC_END;
 *                     a graph frame holds only the roots and graph objects of
 *                     the GC in progress, so that rebuilding one GC never
 *                     decompresses the graphs of the others
 *   footer frame      kind FOOTER: symbols, frame table, GC summaries
 *   trailer 24 bytes  u64 footer_offset | u64 footer_frame_size | "HTREND01"
 *
 * Frame header: "HFRM" | u32 kind | u64 comp_len | u64 raw_len
 *               | u32 nevents | u32 crc32(bytes 0..27)
 * All integers little-endian.  Inside a payload every event is one type
 * byte followed by LEB128 varints (zigzag where signed) and strings (varint
 * length + UTF-8 bytes).
 */
#ifndef HEAPFS_HTR_H
#define HEAPFS_HTR_H

#include <stdint.h>

#define HTR_MAGIC "HEAPFSTR"
#define HTR_TRAILER_MAGIC "HTREND01"
#define HTR_FRAME_MAGIC "HFRM"
#define HTR_VERSION_MAJOR 1
#define HTR_VERSION_MINOR 5   /* 1.1: COUNT_SITE, ALLOC_COUNTS; 1.2: reachable summaries;
                                 * 1.3: ALLOC_SAMPLE, OLD_SAMPLE, SAMPLE_TOTALS;
                                 * 1.4: COUNT_CALLERS; 1.5: ALLOC flag WALKED */
#define HTR_HEADER_SIZE 32
#define HTR_FRAME_HEADER_SIZE 32
#define HTR_TRAILER_SIZE 24

/* Bounds every writer keeps so that readers can refuse nonsense early. */
#define HTR_MAX_STR 65535u         /* bytes in one string */
#define HTR_MAX_CHUNK 4096u        /* refs, roots or deaths in one event */
#define HTR_MAX_FRAMES_PER_SITE 1024u
#define HTR_MAX_FIELDS 65535u
#define HTR_NO_GC UINT32_MAX

enum htr_frame_kind {
	HTR_FRAME_EVENTS = 1,
	HTR_FRAME_FOOTER = 2,
	HTR_FRAME_GRAPH = 3,   /* roots and graph objects of one GC, nothing else */
};

enum htr_ev {
	HTR_EV_INFO = 1,      /* key, value */
	HTR_EV_TYPE = 2,      /* a type definition */
	HTR_EV_METHOD = 3,    /* method id, class, name, signature, file */
	HTR_EV_SITE = 4,      /* allocation site: frame list, innermost first */
	HTR_EV_THREAD = 5,    /* thread id, name */
	HTR_EV_ALLOC = 6,     /* one allocation */
	HTR_EV_DEATHS = 7,    /* ids of objects freed by a GC */
	HTR_EV_GC_START = 8,
	HTR_EV_GC_END = 9,
	HTR_EV_ROOTS = 10,    /* a chunk of the root set of the current GC */
	HTR_EV_GRAPH_OBJ = 11,/* a live object and (a chunk of) its references */
	HTR_EV_COUNT_SITE = 12,   /* 1.1 symbol: a counted allocation site (method, bci, line, type) */
	HTR_EV_ALLOC_COUNTS = 13, /* 1.1: allocations per counted site since the previous ALLOC_COUNTS */
	HTR_EV_ALLOC_SAMPLE = 14, /* 1.3: one sampled allocation and the bytes it stands for */
	HTR_EV_OLD_SAMPLE = 15,   /* 1.3: a sampled live object (a leak candidate), its path to a root */
	HTR_EV_COUNT_CALLERS = 16,/* 1.4 symbol: counted sites' allocations per application call above them */
	/* footer-only events */
	HTR_EV_FRAME_ENTRY = 32,
	HTR_EV_GC_SUMMARY = 33,
	HTR_EV_TOTALS = 34,   /* allocations, bytes, deaths, first and last time */
	HTR_EV_SAMPLE_TOTALS = 35, /* 1.3: ALLOC_SAMPLE and OLD_SAMPLE events in the trace */
};

enum htr_type_kind {
	HTR_TYPE_INSTANCE = 0,
	HTR_TYPE_OBJ_ARRAY = 1,
	HTR_TYPE_PRIM_ARRAY = 2,
};

enum htr_field_flags {
	HTR_FIELD_STATIC = 1,
	HTR_FIELD_REF = 2,
};

/* The gc-roots paper's Table 1, plus the kinds heap dumps and JVMTI add.
 * Values are part of the format: never renumber. */
enum htr_root_kind {
	HTR_ROOT_CLASS_LOADER = 1,
	HTR_ROOT_STATIC = 2,       /* info: type id, field index */
	HTR_ROOT_THREAD = 3,       /* info: thread id */
	HTR_ROOT_LOCAL = 4,        /* info: thread id, method id, depth, slot */
	HTR_ROOT_CODE_BLOB = 5,    /* info: method id */
	HTR_ROOT_JNI_GLOBAL = 6,
	HTR_ROOT_JNI_LOCAL = 7,    /* info: thread id, depth */
	HTR_ROOT_JVMTI = 8,
	HTR_ROOT_MONITOR = 9,
	HTR_ROOT_MANAGEMENT = 10,
	HTR_ROOT_OTHER = 11,
	HTR_ROOT_SYSTEM_CLASS = 12,/* sticky class (HPROF), JVMTI SYSTEM_CLASS */
	HTR_ROOT_NATIVE_STACK = 13,/* info: thread id */
	HTR_ROOT_THREAD_BLOCK = 14,/* info: thread id */
	HTR_ROOT_KIND_MAX = 14,
};

enum htr_alloc_flags {
	HTR_ALLOC_PREEXISTING = 1, /* existed before recording; birth unknown */
	/* 1.5, always with PREEXISTING: an object a heap walk of a sampled
	 * recording (the agent's mode=sample with graph=) met without a sample:
	 * it belongs to the graph of the GC whose frame holds the ALLOC and to
	 * no other heap state, no death ever names it, it is neither an
	 * allocation nor a sample (no site, thread or birth) */
	HTR_ALLOC_WALKED = 2,
};

enum htr_count_flags {
	HTR_COUNTS_FINAL = 1,      /* written at exit */
	HTR_COUNTS_PATHS = 2,      /* from path counters (else one counter per site) */
};

enum htr_gc_flags {
	HTR_GC_FULL = 1,           /* a full (old-generation) collection */
	HTR_GC_HAS_GRAPH = 2,      /* GC_END: this GC carries roots and graph */
	HTR_GC_DEATHS_MERGED = 4,  /* deaths of several GCs arrived as one batch */
	/* 1.2, GC_END of a GC with a graph: the recorder knows the reachable
	 * object count and bytes of the graph it wrote (reachable_objects,
	 * reachable_bytes below), so readers need not rebuild the heap to
	 * learn them.  Readers set it iff the values were recorded. */
	HTR_GC_HAS_REACHABLE = 8,
	/* GC_END of a GC without a graph: the recorder wanted one, but the next
	 * GC started before its heap walk (a walk then would show that GC's
	 * heap).  Informational; older readers ignore it. */
	HTR_GC_GRAPH_DROPPED = 16,
};

/* Where an ALLOC_SAMPLE comes from, which says what its weight means.
 * Values are part of the format. */
enum htr_sample_kind {
	HTR_SAMPLE_JFR = 1,            /* jdk.ObjectAllocationSample: weight = bytes the
	                                * thread allocated since its previous sample */
	HTR_SAMPLE_JFR_NEW_TLAB = 2,   /* jdk.ObjectAllocationInNewTLAB: weight = the new
	                                * TLAB's size, size = the object's */
	HTR_SAMPLE_JFR_OUTSIDE_TLAB = 3, /* jdk.ObjectAllocationOutsideTLAB: every such
	                                * allocation; weight = size = the object's */
	HTR_SAMPLE_KIND_MAX = 3,
};

/* Name of a root kind as used in the tree (roots/<name>/), or NULL. */
const char *htr_root_kind_name(uint32_t kind);

struct htr_field {
	const char *name;
	uint32_t name_len;
	const char *sig;       /* JVM descriptor: "J", "Ljava/lang/String;", "[I" */
	uint32_t sig_len;
	uint32_t flags;        /* enum htr_field_flags */
};

struct htr_root {
	uint32_t kind;
	uint64_t object;       /* object id */
	uint64_t thread;       /* THREAD, LOCAL, JNI_LOCAL, NATIVE_STACK, THREAD_BLOCK */
	uint32_t type;         /* STATIC: type id */
	uint32_t field;        /* STATIC: field index into the type's fields */
	uint32_t method;       /* LOCAL, CODE_BLOB: method id */
	uint32_t depth;        /* LOCAL, JNI_LOCAL: frame depth, 0 = top */
	uint32_t slot;         /* LOCAL: local variable slot */
};

struct htr_ref {
	uint32_t slot;         /* instance: field index; object array: element */
	uint64_t target;       /* object id */
};

struct htr_site_frame {
	uint32_t method;
	int32_t line;          /* -1 unknown */
};

/* ALLOC_SAMPLE (1.3): an allocation picked by a sampler, standing for
 * `weight` bytes of allocation (enum htr_sample_kind says how the sampler
 * chose it).  Not an object of the heap states: nothing says when it died. */
struct htr_alloc_sample {
	uint64_t time_ns;
	uint32_t kind;             /* enum htr_sample_kind */
	uint32_t type;             /* HTR_NO_TYPE if unknown */
	uint32_t site;             /* HTR_NO_SITE if unknown */
	uint64_t thread;           /* a THREAD id; 0 if unknown */
	uint64_t weight;           /* bytes of allocation the sample stands for */
	uint64_t size;             /* the sampled object's bytes; 0 if unknown */
};

/* One object on an OLD_SAMPLE's path to its root: path[0] is the sampled
 * object, path[i] refers to path[i-1] by `how` (a field name, or
 * "[index]" of an array), with `skip` objects left out between them. */
struct htr_old_ref {
	uint32_t type;             /* HTR_NO_TYPE if unknown */
	const char *how; uint32_t how_len;   /* "" for path[0] */
	const char *desc; uint32_t desc_len; /* the recorder's description, may be "" */
	uint32_t skip;
};

/* OLD_SAMPLE (1.3): a sampled object still alive when the sample was
 * written (JFR's jdk.OldObjectSample), with its allocation and, where
 * recorded, its chain of referrers to a GC root. */
struct htr_old_sample {
	uint64_t time_ns;          /* when the sample was written */
	uint64_t alloc_ns;         /* when the object was allocated */
	uint64_t age_ns;           /* its age when written */
	uint32_t type, site;       /* HTR_NO_TYPE, HTR_NO_SITE if unknown */
	uint64_t thread;           /* allocating thread; 0 if unknown */
	int64_t array_length;      /* -1 if not an array */
	uint64_t heap_used;        /* heap in use when written; UINT64_MAX if unknown */
	const char *root_kind; uint32_t root_kind_len;   /* "" if no root was recorded */
	const char *root_desc; uint32_t root_desc_len;
	const char *root_system; uint32_t root_system_len;
	uint32_t npath;            /* 0: no path recorded; at most HTR_MAX_CHUNK */
	const struct htr_old_ref *path;
};

/* COUNT_CALLERS (1.4): allocations of counted site `site` (a COUNT_SITE
 * id) made while the application's call at bytecode offset bci of method
 * `method` (a METHOD id) was running: the first application frame above a
 * JDK site.  A part of the site's count, never more: the rest of the
 * site's allocations were made under no recorded caller. */
struct htr_count_caller {
	uint32_t site, method, bci;
	int32_t line;              /* of the call; -1 unknown */
	uint64_t count;
};

/* Per-GC summary, in the footer and in the index. */
struct htr_gc_summary {
	uint32_t gc;
	uint32_t frame;        /* index of the frame that holds this GC_END */
	uint64_t start_ns, end_ns;
	uint64_t used_before, used_after, capacity;
	uint32_t flags;        /* enum htr_gc_flags */
	uint64_t allocs, alloc_bytes; /* allocations since the previous GC end */
	uint64_t deaths;       /* deaths attributed to this GC (so far known) */
	char cause[64];
	/* 1.3: the collector that ran it, as the JVM names it ("G1New",
	 * "SerialOld"; a JFR recording's jdk.GarbageCollection name), "" if
	 * not recorded */
	char collector[24];
	/* 1.2: objects reachable from the roots after this GC and their
	 * shallow bytes, as recorded; valid iff flags has HTR_GC_HAS_REACHABLE
	 * (else 0). */
	uint64_t reachable_objects, reachable_bytes;
};

/* An allocation event's fields: written by htr_write_alloc, read by
 * htr_iter_next and in bulk by htr_iter_allocs. */
struct htr_alloc {
	uint64_t id;               /* unique over the trace, never reused */
	uint32_t type;
	uint32_t site;             /* HTR_NO_SITE if unknown */
	uint64_t thread;
	uint64_t size;             /* shallow size in bytes */
	int64_t array_length;      /* -1 if not an array */
	uint64_t time_ns;
	uint32_t flags;            /* enum htr_alloc_flags */
};

/* One decoded event.  Strings and arrays point into the reader's buffers
 * and stay valid until the next call on the same iterator. */
struct htr_event {
	enum htr_ev type;
	union {
		struct { const char *key; uint32_t key_len; const char *val; uint32_t val_len; } info;
		struct {
			uint32_t id;
			const char *name; uint32_t name_len;
			uint32_t kind;          /* enum htr_type_kind */
			uint32_t instance_size; /* instances; array header size for arrays */
			uint32_t elem_size;     /* arrays */
			uint32_t super_id;      /* HTR_NO_TYPE if none */
			uint32_t nfields;
			const struct htr_field *fields;
		} type;
		struct {
			uint32_t id;
			const char *cls; uint32_t cls_len;
			const char *name; uint32_t name_len;
			const char *sig; uint32_t sig_len;
			const char *file; uint32_t file_len;
		} method;
		struct { uint32_t id; uint32_t nframes; const struct htr_site_frame *frames; } site;
		struct { uint64_t id; const char *name; uint32_t name_len; } thread;
		struct htr_alloc alloc;
		struct { uint32_t gc; uint32_t count; const uint64_t *ids; } deaths;
		struct {
			uint32_t gc;
			uint64_t time_ns, used, capacity;
			uint32_t flags;
			const char *cause; uint32_t cause_len; /* GC_START only */
			const char *collector; uint32_t collector_len; /* GC_START only (1.3) */
			/* GC_END only (1.2): valid iff flags has HTR_GC_HAS_REACHABLE */
			uint64_t reachable_objects, reachable_bytes;
		} gc;
		struct { uint32_t gc; uint32_t count; const struct htr_root *roots; } roots;
		struct { uint64_t id; uint32_t count; const struct htr_ref *refs; } graph;
		struct { uint64_t offset, comp_len, raw_len; uint32_t nevents, min_death_gc, kind, graph_gc; } frame_entry;
		struct htr_gc_summary gc_summary;
		struct htr_alloc_sample alloc_sample;
		struct htr_old_sample old_sample;
		struct { uint64_t alloc_samples, old_samples; } sample_totals;
		struct { uint64_t allocs, alloc_bytes, deaths, first_ns, last_ns; } totals;
		struct {
			uint32_t id, method, bci;
			int32_t line;           /* -1 unknown */
			const char *type; uint32_t type_len; /* Java name: java.lang.String, int[] */
		} count_site;
		struct {
			uint32_t gc;            /* GCs finished when counted (0: none yet) */
			uint32_t flags;         /* enum htr_count_flags */
			uint64_t increments;    /* counter increments executed so far (cumulative) */
			uint64_t per_site;      /* increments one counter per site would have made (cumulative) */
			uint32_t count;
			const uint32_t *sites;  /* [count] count-site ids, ascending */
			const int64_t *counts;  /* [count] allocations since the previous ALLOC_COUNTS (a
			                         * snapshot taken while threads run may be corrected later) */
		} alloc_counts;
		struct { uint32_t count; const struct htr_count_caller *callers; } count_callers;
	} u;
};

#define HTR_NO_TYPE UINT32_MAX
#define HTR_NO_SITE UINT32_MAX

#endif

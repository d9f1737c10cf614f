/* hprof_internal.h - what the HPROF importer's modules share (not an API).
 *
 *   hprof_dump.c    one dump: the first pass over its records (strings,
 *                   classes, frames, traces, threads, roots, object index),
 *                   class resolution, id-sorted object index, and reading
 *                   single objects back (fields, strings)
 *   hprof_layout.c  shallow sizes: VisualVM's rules or HotSpot's layout
 *   hprof_refs.c    referents of weak/soft/final/phantom references as
 *                   VisualVM treats them
 *   hprof.c         the importer: types, symbols, allocations, roots,
 *                   graph and deaths, through model/htr_writer.h
 *   hprof_cli.c     `heapfs import`
 *
 * Ownership: a struct dump owns every array in it and its hprof_file;
 * dump_free releases them.
 */
#ifndef HEAPFS_HPROF_INTERNAL_H
#define HEAPFS_HPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hprof.h"
#include "hprof_maps.h"
#include "hprof_reader.h"

#define HPROF_NONE UINT32_MAX

/* One entry of a class's decode plan: the instance field values of an
 * INSTANCE_DUMP come in the order "own fields, then the superclass's, ...";
 * plan[k] says the k-th value's basic type and its index in our flattened
 * field list (inherited fields first). */
#define PLAN_TYPE(p) ((p) >> 28)
#define PLAN_INDEX(p) ((p) & 0x0fffffffu)

struct dclass {
	uint64_t id;
	uint64_t offset;       /* of its CLASS_DUMP sub-record */
	struct hprof_class_dump cd;
	uint32_t super;        /* class index, HPROF_NONE: none or not in the dump */
	char *name;            /* owned; Java name: java.util.HashMap$Node[] */
	char *vm_name;         /* owned; as LOAD_CLASS wrote it: [Ljava/util/HashMap$Node; */
	uint32_t kind;         /* enum htr_type_kind */
	uint32_t elem_type;    /* primitive arrays: hprof basic type */
	uint32_t ninherited;   /* instance fields of all superclasses */
	uint32_t ninst;        /* instance fields, inherited included */
	uint64_t value_bytes;  /* bytes of an INSTANCE_DUMP's values */
	uint32_t *plan;        /* owned, [ninst] */
	uint64_t inst_size;    /* shallow size of an instance */
	uint32_t type_id;      /* trace type */
};

struct dframe {
	uint64_t name, sig, src;  /* UTF8 ids */
	uint32_t class_serial;
	int32_t line;
	uint32_t method;       /* trace method id, HPROF_NONE until defined */
};

struct dtrace {
	uint32_t serial, thread_serial, nframes;
	uint64_t frames;       /* offset of the frame ids */
	uint32_t site;         /* trace site id, HPROF_NONE until defined */
};

struct dthread {
	uint32_t serial;
	uint32_t trace_serial; /* its stack (ROOT_THREAD_OBJECT), 0 none */
	uint64_t object;       /* java.lang.Thread id, 0 none */
	uint64_t name;         /* UTF8 id from START_THREAD, 0 none */
};

struct droot {
	uint8_t tag;           /* enum hprof_sub_tag */
	uint64_t id;
	uint32_t thread_serial, frame;
};

struct dsegment {
	struct hprof_record rec;
	uint64_t end;          /* where its complete sub-records end */
};

/* Size rules in force for one dump (hprof_layout.c). */
struct dlayout {
	enum hprof_layout kind;
	uint32_t oop;          /* bytes per reference */
	uint32_t header;       /* object header (VisualVM: minimum instance size) */
	uint32_t array_header; /* bytes before the first element */
	int new_size;          /* VisualVM: the dump carries real instance sizes */
	const char *oop_source;/* how the reference size was decided */
};

struct dump {
	struct hprof_file *f;
	const struct hprof_import_opts *o;

	struct u64map strings;    /* UTF8 id -> index into str_off/str_len */
	uint64_t *str_off; uint32_t *str_len; uint32_t nstr, capstr;

	struct u64map lc_by_id;   /* LOAD_CLASS class id -> name UTF8 id index (lc_name) */
	struct u64map lc_by_serial; /* class serial -> index into lc_name */
	uint64_t *lc_name; uint64_t *lc_class; uint32_t nlc, caplc;

	struct u64map frame_idx;  /* FRAME id -> index into frames */
	struct dframe *frames; uint32_t nframes, capframes;
	struct u64map trace_idx;  /* TRACE serial -> index into traces */
	struct dtrace *traces; uint32_t ntraces, captraces;
	struct u64map thread_idx; /* thread serial -> index into threads */
	struct dthread *threads; uint32_t nthreads, capthreads;

	struct dsegment *segs; uint32_t nsegs, capsegs;
	struct u64map class_idx;  /* class object id -> index into classes */
	struct dclass *classes; uint32_t nclasses, capclasses;
	struct droot *roots; uint32_t nroots, caproots;

	/* Objects: key = object id, idx = offset of its sub-record; sorted by
	 * id after dump_index(). */
	struct keyidx *objs; size_t nobjs, capobjs;

	struct dlayout layout;
	uint32_t prim_class[12];  /* basic type -> class index of its array class */

	int truncated;            /* the file ends early; imported what is complete */
	char truncated_msg[400];
	int no_heap_dump_end;     /* segmented dump without HEAP_DUMP_END */
	uint32_t duplicate_classes, skipped_records;
};

/* hprof_dump.c */
int dump_open(struct dump *d, const char *path, const struct hprof_import_opts *o,
	      struct htr_err *err);
void dump_free(struct dump *d);
/* The first pass: records and sub-records into the tables above. */
int dump_scan(struct dump *d, FILE *progress, const char *label, struct htr_err *err);
/* Names, superclass chains and decode plans of all classes. */
int dump_resolve_classes(struct dump *d, struct htr_err *err);
/* Sorts the object index by id; duplicate ids are damage. */
int dump_sort_objects(struct dump *d, struct htr_err *err);
/* Position of an object id in the sorted index, or SIZE_MAX. */
size_t dump_find_object(const struct dump *d, uint64_t id);
/* Decodes the object sub-record at a file offset found by the first pass. */
void dump_decode_object(const struct dump *d, uint64_t offset, struct hprof_sub *s);
/* Class index of the object's class (primitive arrays: their array class),
 * or HPROF_NONE. */
uint32_t dump_object_class(const struct dump *d, const struct hprof_sub *s);
/* UTF8 string by id: pointer into the map and length; NULL if unknown. */
const char *dump_utf8(const struct dump *d, uint64_t id, uint32_t *len);
/* Copies a UTF8 string into out (NUL-terminated, at most max bytes,
 * NUL bytes replaced); "" if unknown.  Returns out. */
char *dump_utf8_copy(const struct dump *d, uint64_t id, char *out, size_t max);
/* First class whose Java name is name, or HPROF_NONE. */
uint32_t dump_class_by_name(const struct dump *d, const char *name);
/* Value of a static field of class c by name: 1 found (type, value), 0 not. */
int dump_static_field(const struct dump *d, uint32_t c, const char *name, uint32_t *type,
		      uint64_t *value);
/* Value of an instance field by name (the superclass-most field of that
 * name, as VisualVM picks it): 1 found, 0 not (no such object or field). */
int dump_instance_field(const struct dump *d, uint64_t obj, const char *name, uint32_t *type,
			uint64_t *value);
/* Flattened index of class c's instance field called name (the
 * superclass-most one), or HPROF_NONE. */
uint32_t dump_field_index(const struct dump *d, uint32_t c, const char *name);
/* Text of a java.lang.String object as UTF-8 into out (at most max-1
 * bytes, NUL-terminated).  Returns 1, or 0 if obj is not a readable
 * String. */
int dump_string_text(const struct dump *d, uint64_t obj, char *out, size_t max);
/* Java name from a VM class name ("[Ljava/lang/String;" ->
 * "java.lang.String[]", "java/util/Map$Entry" -> "java.util.Map$Entry"),
 * malloc'd; NULL on out of memory. */
char *hprof_java_name(const char *vm, size_t len);

/* hprof_layout.c */
/* Decides the reference and header sizes (for VisualVM: guessed from the
 * dump as VisualVM guesses them) and every class's instance size. */
int layout_init(struct dump *d, struct htr_err *err);
/* Shallow size of the object decoded in s, whose class index is c
 * (HPROF_NONE: unknown class). */
uint64_t layout_object_size(const struct dump *d, const struct hprof_sub *s, uint32_t c);
/* Array types: header and element size as written in TYPE events. */
uint32_t layout_elem_size(const struct dump *d, uint32_t kind, uint32_t elem_type);

/* hprof_refs.c: which referent edges to drop (VisualVM's rule: a referent
 * keeps nothing alive).  Owns is_ref and strong; referents_free releases
 * them. */
struct referents {
	uint8_t *is_ref;       /* [nclasses] 1: a Weak/Soft/Final/PhantomReference class */
	uint32_t slot;         /* flattened index of Reference.referent, HPROF_NONE none */
	uint64_t *strong;      /* bitset over objs: reachable without referents; NULL: drop nothing */
	uint64_t dropped;      /* referent edges dropped */
};
/* Walks the dump from its roots without following referents (nothing when
 * keep is set or the dump has no reference class).  0 or -ENOMEM. */
int referents_init(struct referents *r, const struct dump *d, int keep);
/* 1 if the reference in flattened field `field` of an instance of class c
 * to dump id target is a referent whose target only referents reach (the
 * edge is then left out, and counted). */
int referents_drop(struct referents *r, const struct dump *d, uint32_t c, uint32_t field,
		   uint64_t target);
void referents_free(struct referents *r);

#endif

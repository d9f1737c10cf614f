/* hprof_internal.h - what the HPROF importer's modules share (not an API).
 *
 *   hprof_dump.c    one dump: the first pass over its records (strings,
 *                   classes, frames, traces, threads, roots, object index),
 *                   class resolution, id-sorted object index, and reading
 *                   single objects back (fields, strings)
 *   hprof_scan.c    the first pass's object sub-records, on several threads
 *   hprof_layout.c  shallow sizes: VisualVM's rules or HotSpot's layout
 *   hprof_graph.c   the object graph as CSR over dense object indexes,
 *                   collected in the one pass over the objects
 *   hprof_refs.c    referents of weak/soft/final/phantom references as
 *                   VisualVM treats them (a walk over that graph)
 *   hprof_state.c   a heap state straight from a dump (direct mounts)
 *   hprof.c         the importer: types, symbols, allocations, roots,
 *                   graph and deaths, through model/htr_writer.h
 *   hprof_cli.c     `heapfs import`
 *
 * Ownership: a struct dump owns every array in it and its hprof_file;
 * dump_free releases them (hstate_make takes ids over: the id index goes on
 * reading them, so the state must outlive the dump's last lookup).
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
	uint32_t nrefs;        /* reference fields among the ninst */
	uint32_t *refs;        /* owned, [2 * nrefs]: (byte offset in the values,
	                          flattened index) of each, in dump order */
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

	/* Objects.  The first pass collects (id, sub-record offset) pairs in
	 * objs; dump_sort_objects() turns them into ids (ascending) and offs,
	 * frees objs and builds index.  An object's dense index is its position
	 * in ids. */
	struct keyidx *objs; size_t capobjs;
	uint64_t *ids;            /* [nobjs] */
	uint64_t *offs;           /* [nobjs] */
	size_t nobjs;
	struct idindex index;     /* id -> position in ids */
	int class_ids_are_objects;/* damage: some class id is an object id too */
	/* Class objects: every CLASS_DUMP is also an object of the index (its
	 * java.lang.Class mirror, as the JVM's class histogram counts it), of
	 * class class_class (java.lang.Class; HPROF_NONE: not in the dump,
	 * then class objects are left out).  class_objects counts them. */
	uint32_t class_class;
	size_t class_objects;

	struct dlayout layout;
	uint32_t prim_class[12];  /* basic type -> class index of its array class */

	uint64_t released;        /* the mapping below this offset was released (hprof_release) */
	/* The file ends early (cut inside a record, before any heap dump
	 * record, or after a segment without the HEAP_DUMP_END that closes a
	 * segmented dump); what is complete is imported, up to truncated_at
	 * (the offset of the first byte left out). */
	int truncated;
	uint64_t truncated_at;
	char truncated_msg[400];
	uint32_t duplicate_classes, skipped_records;
};

/* hprof_dump.c */
int dump_open(struct dump *d, const char *path, const struct hprof_import_opts *o,
	      struct htr_err *err);
void dump_free(struct dump *d);
/* The first pass: records and sub-records into the tables above. */
int dump_scan(struct dump *d, FILE *progress, const char *label, struct htr_err *err);
/* The object sub-records (nearly all of a dump) as the first pass needs
 * them: id and where the next sub-record starts.  Returns 0 unless the
 * sub-record at pos is an object that ends by end; hprof_next_sub() then
 * decodes it, or says what is wrong with it. */
static inline int dump_object_extent(const struct hprof_file *f, uint64_t pos, uint64_t end, uint64_t *id,
			 uint64_t *next)
{
	uint32_t ids = f->id_size, tag = f->map[pos];
	uint64_t fixed = 1 + 2ull * ids + 8, body;   /* the same for all three */
	if (end - pos < fixed + 1)
		return 0;
	uint64_t p = pos + 1 + ids + 4;   /* past tag, id, stack trace serial */
	if (tag == HPROF_INSTANCE_DUMP) {
		body = hprof_u4(f, p + ids);
	} else if (tag == HPROF_OBJ_ARRAY_DUMP) {
		body = (uint64_t)hprof_u4(f, p) * ids;
	} else if (tag == HPROF_PRIM_ARRAY_DUMP) {
		uint32_t t = f->map[p + 4], esz = hprof_type_size(f, t);
		if (!esz || t == HPROF_T_OBJECT)
			return 0;
		body = (uint64_t)hprof_u4(f, p) * esz;
		fixed = 1 + ids + 9;
	} else {
		return 0;
	}
	if (end - pos - fixed < body)
		return 0;
	*id = hprof_id(f, pos + 1);
	*next = pos + fixed + body;
	return 1;
}

/* The most object sub-records `bytes` of a heap record can hold: the
 * shortest is an empty primitive array (tag, id, serial, length, type: 10
 * bytes and an id).  The scans reserve that many (id, offset) pairs at
 * once, in memory the kernel supplies only as it is written, instead of
 * growing an array by moving it: on these machines every page of a moved
 * block is paid for again at its next touch (the H2 dump's 77 MB of pairs
 * took 0.2 s more to merge with the class objects at one thread). */
static inline uint64_t hprof_max_objects(const struct hprof_file *f, uint64_t bytes)
{
	return bytes / (f->id_size + 10u) + 1;
}

/* hprof_scan.c: the object sub-records of the heap segments collected on
 * several threads before dump_scan's walk; see there.  Owns its arrays
 * (scan_pre_free), until dump_scan takes objs over. */
struct scan_pre {
	struct keyidx *objs; size_t nobjs, capobjs;  /* (id, offset) in file order */
	uint64_t *others; size_t nothers;  /* offsets of the other sub-records, in file order */
	size_t next_other;                 /* dump_scan's cursor in others */
};
/* 1: collected into pre; 0: nothing collected (one thread, one heap
 * record, a small heap, or something the serial walk must decide);
 * -ENOMEM. */
int dump_collect_objects(const struct dump *d, uint32_t threads, struct scan_pre *pre);
void scan_pre_free(struct scan_pre *pre);

/* Names, superclass chains and decode plans of all classes. */
int dump_resolve_classes(struct dump *d, struct htr_err *err);
/* Sorts the object index by id (duplicate ids are damage) and builds the
 * id index. */
int dump_sort_objects(struct dump *d, struct htr_err *err);
/* Position of an object id in the sorted index, or SIZE_MAX. */
static inline size_t dump_find_object(const struct dump *d, uint64_t id)
{
	uint32_t i = idindex_find(&d->index, id);
	return i == IDINDEX_NONE ? SIZE_MAX : i;
}

/* Position of class c's class object in the sorted index, or SIZE_MAX (no
 * class objects, or its id is an instance's in a damaged dump). */
static inline size_t dump_class_object(const struct dump *d, uint32_t c)
{
	if (d->class_class == HPROF_NONE)
		return SIZE_MAX;
	size_t j = dump_find_object(d, d->classes[c].id);
	return j != SIZE_MAX && d->offs[j] == d->classes[c].offset ? j : SIZE_MAX;
}

/* The static reference fields of the dump's classes that are not null,
 * class by class in field order: fn(ctx, class index, static field
 * number, the id it holds).  A nonzero return of fn stops the walk and is
 * returned. */
int dump_static_refs(const struct dump *d, int (*fn)(void *ctx, uint32_t c, uint32_t j, uint64_t id), void *ctx);

/* An object sub-record (INSTANCE_DUMP, OBJ_ARRAY_DUMP, PRIM_ARRAY_DUMP) as
 * the passes need it. */
struct dobj {
	uint8_t tag;
	uint8_t elem_type;     /* PRIM_ARRAY_DUMP */
	uint32_t length;       /* arrays: elements; INSTANCE_DUMP: value bytes */
	uint32_t trace_serial;
	uint64_t class_id;     /* INSTANCE_DUMP, OBJ_ARRAY_DUMP; CLASS_DUMP: the class itself */
	uint64_t data;         /* offset of the values / elements */
};

/* Decodes the object sub-record at a file offset the first pass found (and
 * checked: the whole sub-record lies in its record, so nothing is checked
 * again here). */
static inline void dump_object_at(const struct dump *d, uint64_t off, struct dobj *o)
{
	const struct hprof_file *f = d->f;
	uint32_t ids = f->id_size;
	uint64_t p = off + 1 + ids;   /* past the tag and the object id */
	o->tag = f->map[off];
	o->trace_serial = hprof_u4(f, p);
	o->elem_type = 0;
	o->class_id = 0;
	if (o->tag == HPROF_CLASS_DUMP) {
		/* a class object: its trace serial comes where an instance's
		 * does; class_id is the class itself (its dclass has the statics) */
		o->class_id = hprof_id(f, off + 1);
		o->length = 0;
		o->data = 0;
	} else if (o->tag == HPROF_INSTANCE_DUMP) {
		o->class_id = hprof_id(f, p + 4);
		o->length = hprof_u4(f, p + 4 + ids);
		o->data = p + 8 + ids;
	} else if (o->tag == HPROF_OBJ_ARRAY_DUMP) {
		o->length = hprof_u4(f, p + 4);
		o->class_id = hprof_id(f, p + 8);
		o->data = p + 8 + ids;
	} else {
		o->length = hprof_u4(f, p + 4);
		o->elem_type = f->map[p + 8];
		o->data = p + 9;
	}
}

/* Class index of the object's class (primitive arrays: their array class),
 * or HPROF_NONE. */
static inline uint32_t dump_object_class(const struct dump *d, const struct dobj *o)
{
	if (o->tag == HPROF_PRIM_ARRAY_DUMP)
		return o->elem_type < 12 ? d->prim_class[o->elem_type] : HPROF_NONE;
	if (o->tag == HPROF_CLASS_DUMP)
		return d->class_class;
	uint32_t c = u64map_get(&d->class_idx, o->class_id);
	return c == U64MAP_NONE ? HPROF_NONE : c;
}
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
/* Shallow size of the object o, whose class index is c (HPROF_NONE:
 * unknown class). */
uint64_t layout_object_size(const struct dump *d, const struct dobj *o, uint32_t c);
/* Array types: header and element size as written in TYPE events. */
uint32_t layout_elem_size(const struct dump *d, uint32_t kind, uint32_t elem_type);

/* hprof_graph.c: the dump's references as a graph over dense object
 * indexes (CSR), the layout struct heap_state uses for its out-edges, so a
 * direct mount hands the arrays over as they are.  References to class
 * objects are edges when class objects are objects (dump.class_class),
 * else not (docs/hprof.md); a class object has no edges of its own (its
 * static fields are roots); references to ids that are
 * neither objects nor classes (objects the dumper left out, a truncated
 * dump: 681 of them in a HotSpot dump of 1.5 M objects) are kept aside in dang,
 * for the trace: its reconstructor drops and counts them.
 * Ownership: the graph owns every array; dgraph_free releases them. */
struct dref {
	uint64_t id;           /* the referenced id */
	uint32_t src, slot;    /* referrer index, slot */
};

struct dgraph {
	size_t n;              /* objects */
	uint32_t *off;         /* [n+1]: edges of i are [off[i], off[i+1]) */
	uint32_t *tgt;         /* [ne] target index */
	uint16_t *slot;        /* [ne] low 16 bits of the slot */
	/* high bits of slots (elements past 65535), as runs: from edge
	 * hi_edge[k] on, the high bits are hi[k] (before the first run: 0) */
	uint64_t *hi_edge; uint32_t *hi; uint32_t nhi; uint64_t caphi;
	uint64_t ne, cap;
	struct dref *dang; size_t ndang; uint64_t capdang;
	uint64_t refs_to_classes, bad_instances;
};

int dgraph_init(struct dgraph *g, size_t n);
void dgraph_free(struct dgraph *g);
/* Appends the references of object i (decoded in o, class index c); objects
 * come in index order.  0, -ENOMEM or -E2BIG (2^32 edges). */
int dgraph_add_object(struct dgraph *g, const struct dump *d, size_t i, const struct dobj *o,
		      uint32_t c);
/* After the last object. */
void dgraph_end(struct dgraph *g);
/* Full slot of edge e; *run is a cursor (start at 0) for edges visited in
 * ascending order. */
static inline uint32_t dgraph_slot(const struct dgraph *g, uint64_t e, uint32_t *run)
{
	while (*run < g->nhi && g->hi_edge[*run] <= e)
		(*run)++;
	return (*run ? g->hi[*run - 1] << 16 : 0) | g->slot[e];
}
/* Removes the ndrop edges drop[] (ascending edge positions), slots and
 * their runs included: the arrays keep their blocks (no allocation), the
 * kept edges move down in place. */
void dgraph_drop_edges(struct dgraph *g, const uint64_t *drop, uint64_t ndrop);

/* hprof_refs.c: referents of weak/soft/final/phantom references, VisualVM's
 * rule (a referent keeps nothing alive).  Owns is_ref and refobj;
 * referents_free releases them. */
struct referents {
	uint8_t *is_ref;       /* [nclasses] 1: a Weak/Soft/Final/PhantomReference class; NULL: no walk */
	uint32_t slot;         /* flattened index of Reference.referent */
	uint64_t *refobj;      /* bitset [nobjs]: instances of those classes */
	uint64_t dropped;      /* referent edges dropped */
};
/* Decides whether there is anything to do (not when keep is set or the
 * dump has no reference class).  0 or -ENOMEM. */
int referents_init(struct referents *r, const struct dump *d, int keep);
/* Notes that object i is of class c (during the pass over the objects). */
static inline void referents_note(struct referents *r, size_t i, uint32_t c)
{
	if (r->is_ref && c != HPROF_NONE && r->is_ref[c])
		r->refobj[i >> 6] |= 1ull << (i & 63);
}
/* Walks g from the dump's roots without following referents and drops the
 * referent edges whose target that walk did not reach.  0 or -ENOMEM. */
int referents_apply(struct referents *r, const struct dump *d, struct dgraph *g);
void referents_free(struct referents *r);

/* hprof_state.c: a heap state built from the dump (direct mounts). */
struct heap_state;
struct hstate_infos;
/* Interned per-object properties while the pass runs; see hprof_state.c. */
int hstate_infos_new(struct hstate_infos **out, const struct dump *d);
void hstate_infos_free(struct hstate_infos *x);
/* Info index of object i's properties (thread: an HPROF thread serial). */
int hstate_infos_put(struct hstate_infos *x, size_t i, uint32_t type, uint32_t site,
		     uint32_t thread_serial, uint32_t flags, uint64_t size, int64_t array_length);
struct htr_root;
/* The state of GC gc, waiting for hprof_direct_finish(): takes d->ids,
 * the infos and the graph's arrays (left empty); roots as written to the
 * trace (a single dump: trace ids are dump ids). */
int hstate_make(struct hprof_direct **out, struct dump *d, struct hstate_infos *x,
		struct dgraph *g, const struct htr_root *roots, uint32_t nroots, uint32_t gc);

#endif

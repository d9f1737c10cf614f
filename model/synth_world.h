/* synth_world.h - the simulated JVM heap behind `heapfs synth` (internal to
 * model/synth*.c).
 *
 * A world owns an htr_writer and a heap of objects in struct-of-arrays form.
 * Object ids are dense: 1, 2, 3 ... in allocation order (0 means null), so an
 * object id is also its index.  Per object the world keeps its type (u16) and
 * one u32 `aux`:
 *   primitive array      aux = length
 *   object array         aux = offset in `pool` of [length, elem0, elem1, ...]
 *   instance with words  aux = offset in `pool` of its reference slots, then
 *                        its hidden words (simulation state such as
 *                        HashMap$Node.hash, never written to the trace)
 * Reference slots hold target ids (0 = null).  The pool only grows: dead
 * objects keep their words, which is cheap next to the graph itself.
 *
 * A GC marks from the active roots (explicit stack, no recursion), writes
 * gc_start, roots, every marked object with its references in id order,
 * the deaths (objects that were live or born since the previous GC and are
 * not marked) and gc_end.
 *
 * Errors are sticky: the first failing call stores a negative errno and a
 * message in the world; later calls do nothing and return 0 / -err.
 * Scenarios check sw_failed() in their loops and return sw_status() at the
 * end, so no error is lost.
 *
 * Not thread-safe; one world per synth run.
 */
#ifndef HEAPFS_SYNTH_WORLD_H
#define HEAPFS_SYNTH_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "htr.h"
#include "htr_writer.h"
#include "synth.h"

/* ---- deterministic PRNG (splitmix64) ---- */
struct sw_rng {
	uint64_t s;
};
void sw_rng_seed(struct sw_rng *r, uint64_t seed);
uint64_t sw_rng_next(struct sw_rng *r);
/* Uniform in [0, n), n > 0. */
uint32_t sw_rng_below(struct sw_rng *r, uint32_t n);

/* ---- types ---- */
struct sw_field_decl {
	const char *name;
	const char *sig;       /* JVM descriptor */
	uint32_t flags;        /* HTR_FIELD_STATIC / HTR_FIELD_REF */
};

/* A class or array type.  A type's own fields are listed instance fields
 * first, then statics; the full field list written to the trace is the
 * super chain's instance fields, then these. */
struct sw_type_decl {
	const char *name;
	const char *super;     /* name of a type in the same table, or NULL */
	uint32_t kind;         /* enum htr_type_kind */
	uint32_t elem_size;    /* arrays: bytes per element */
	uint32_t nfields;
	const struct sw_field_decl *fields;
	uint32_t hidden;       /* instances: simulation-only u32 words */
};

#define SW_MAX_TYPES 256

/* ---- frames and sites ---- */
struct sw_frame {
	const char *cls, *name, *sig, *file;
	int32_t line;
};

/* ---- GC parameters ---- */
struct sw_gc_spec {
	const char *cause;
	uint32_t flags;        /* HTR_GC_FULL or 0; HAS_GRAPH is always added */
	uint64_t start_ns;     /* 0: shortly after the last allocation */
	uint64_t pause_ns;     /* 0: 1 ms + 1 ns per live byte */
};

struct sw_gc_result {
	uint64_t live_objects, live_bytes, dead_objects, dead_bytes;
	uint64_t start_ns, end_ns;
};

struct sw_root_slot {
	struct htr_root r;     /* r.object == 0: inactive */
};

struct sw_type {
	struct htr_type_def def;
	struct htr_field *fields;  /* owned: full list */
	uint32_t ninstance;        /* instance fields at the front of fields */
	uint32_t nref;             /* reference slots of an instance */
	uint32_t words;            /* pool words of an instance: nref + hidden */
	uint16_t *ref_field;       /* owned: [nref] field index of each slot */
};

struct sw {
	struct htr_writer *hw;     /* owned */
	struct sw_rng rng;
	int err;
	char msg[256];

	uint64_t clock_ns;         /* time of the next allocation */
	uint64_t alloc_step_ns;    /* clock advance per allocation */

	struct sw_type types[SW_MAX_TYPES];
	uint32_t ntypes;
	const struct sw_type_decl *tables[8]; /* decl tables to look names up in */
	uint32_t table_n[8];
	uint32_t ntables;

	/* methods: dedup by pointer-equal or string-equal (cls,name,sig) */
	struct sw_frame *methods;  /* owned array (line unused) */
	uint32_t nmethods, methods_cap;
	uint32_t nsites;
	uint32_t nthreads;

	/* objects: index = id, [0] unused */
	uint32_t nobj;             /* next id */
	uint32_t objcap;
	uint16_t *otype;           /* owned [objcap] */
	uint32_t *aux;             /* owned [objcap] */
	uint32_t *pool;            /* owned */
	uint64_t npool, poolcap;
	uint64_t *live;            /* owned bitset [objcap]: live after the last GC */
	uint64_t *mark;            /* owned bitset [objcap]: scratch of a GC */
	uint32_t first_new;        /* first id allocated since the last GC */
	uint64_t live_bytes;       /* after the last GC */
	uint64_t new_bytes;        /* allocated since the last GC */
	uint32_t min_live;         /* smallest id that may be live (scan start) */

	struct sw_root_slot *roots; /* owned */
	uint32_t nroots, roots_cap;

	uint32_t gc_no;            /* number of the last GC written, 0 none */
	uint64_t capacity;

	/* GC scratch, owned */
	uint32_t *stack; size_t stack_cap;
	struct htr_ref *refbuf; size_t refbuf_cap;
	uint64_t *deathbuf;
	struct htr_root *rootbuf; size_t rootbuf_cap;
};

/* Opens the writer on path and seeds the PRNG. */
int sw_open(struct sw *w, const char *path, uint64_t seed);
/* Closes the writer (footer) when ok; abandons it after an error.  Frees
 * everything.  Returns the world's first error or the close error. */
int sw_close(struct sw *w);

int sw_fail(struct sw *w, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int sw_failed(const struct sw *w) { return w->err != 0; }
static inline int sw_status(const struct sw *w) { return w->err; }

void sw_info(struct sw *w, const char *key, const char *value);
void sw_info_u64(struct sw *w, const char *key, uint64_t value);

/* Registers a table of type declarations that sw_type() may define from. */
void sw_add_decls(struct sw *w, const struct sw_type_decl *decls, uint32_t n);
/* Type id of a declared name; defines it (and its supers) on first use and
 * writes the type event.  HTR_NO_TYPE after an error. */
uint32_t sw_type(struct sw *w, const char *name);
/* Index of a field in the type's full field list; fails the world if none. */
uint32_t sw_field(struct sw *w, uint32_t type, const char *field);
/* Pool slot of a reference field (instances). */
uint32_t sw_slot(struct sw *w, uint32_t type, const char *field);
/* Pool slot of the k-th hidden word. */
uint32_t sw_hidden(struct sw *w, uint32_t type, uint32_t k);
/* Shallow size of an instance or of an array of len elements. */
uint64_t sw_size_of(const struct sw *w, uint32_t type, uint32_t len);

uint32_t sw_method(struct sw *w, const struct sw_frame *f);
/* A site from frames inner[0..ni) then outer[0..no) (innermost first). */
uint32_t sw_site(struct sw *w, const struct sw_frame *inner, uint32_t ni,
		 const struct sw_frame *outer, uint32_t no);
/* Defines the next thread; ids are 1, 2, ... */
uint64_t sw_thread(struct sw *w, const char *name);

/* Allocations: return the new id, 0 after an error. */
uint32_t sw_new(struct sw *w, uint32_t type, uint32_t site, uint64_t thread);
uint32_t sw_new_array(struct sw *w, uint32_t type, uint32_t len, uint32_t site, uint64_t thread);
/* An object that existed before recording (no site, flag PREEXISTING). */
uint32_t sw_new_preexisting(struct sw *w, uint32_t type, int64_t len, uint64_t thread);

static inline void sw_put(struct sw *w, uint32_t obj, uint32_t slot, uint32_t target)
{
	if (obj)
		w->pool[w->aux[obj] + slot] = target;
}
static inline uint32_t sw_get(const struct sw *w, uint32_t obj, uint32_t slot)
{
	return obj ? w->pool[w->aux[obj] + slot] : 0;
}
static inline void sw_aput(struct sw *w, uint32_t arr, uint32_t i, uint32_t target)
{
	if (arr)
		w->pool[w->aux[arr] + 1 + i] = target;
}
static inline uint32_t sw_aget(const struct sw *w, uint32_t arr, uint32_t i)
{
	return arr ? w->pool[w->aux[arr] + 1 + i] : 0;
}
static inline uint32_t sw_alen(const struct sw *w, uint32_t arr)
{
	if (!arr)
		return 0;
	const struct sw_type *t = &w->types[w->otype[arr]];
	return t->def.kind == HTR_TYPE_OBJ_ARRAY ? w->pool[w->aux[arr]] : w->aux[arr];
}

/* Advances the clock (time passing without allocation). */
void sw_advance(struct sw *w, uint64_t ns);

/* Roots: a handle to a slot that stays until removed; object 0 = inactive. */
uint32_t sw_root_add(struct sw *w, const struct htr_root *r);
static inline void sw_root_set(struct sw *w, uint32_t handle, uint32_t obj)
{
	if (handle < w->nroots)
		w->roots[handle].r.object = obj;
}

/* One GC, numbered w->gc_no + 1.  res may be NULL. */
int sw_gc(struct sw *w, const struct sw_gc_spec *spec, struct sw_gc_result *res);

/* ---- JDK model (synth_jdk.c) ---- */

/* The JDK type declarations; every world registers them. */
extern const struct sw_type_decl sw_jdk_decls[];
extern const uint32_t sw_jdk_ndecls;

/* Frames of JDK methods (JDK 17 line numbers), usable in static tables. */
#define SWF_THREAD_RUN { "java.lang.Thread", "run", "()V", "Thread.java", 833 }
#define SWF_LONG_VALUEOF { "java.lang.Long", "valueOf", "(J)Ljava/lang/Long;", "Long.java", 1211 }
#define SWF_INTEGER_VALUEOF \
	{ "java.lang.Integer", "valueOf", "(I)Ljava/lang/Integer;", "Integer.java", 1081 }
#define SWF_SB_INIT_CAP { "java.lang.StringBuilder", "<init>", "(I)V", "StringBuilder.java", 124 }
#define SWF_ASB_INIT \
	{ "java.lang.AbstractStringBuilder", "<init>", "(I)V", "AbstractStringBuilder.java", 91 }

int32_t sw_java_string_hash(const char *latin1);
int32_t sw_java_long_hash(int64_t v);
/* HashMap.hash(): h ^ (h >>> 16). */
uint32_t sw_hashmap_spread(int32_t h);

/* java.lang.String + its Latin-1 byte[] (byte[] first, then the String, as
 * Java evaluates `new String(Arrays.copyOfRange(..))`). */
struct sw_strings {
	uint32_t t_string, t_bytes, s_value;
	uint32_t site_bytes, site_string;
};
enum sw_string_origin {
	SW_STRING_CONCAT = 0,  /* "a" + b: StringConcatHelper.newArray/newString */
	SW_STRING_BUILDER = 1, /* StringBuilder.toString() */
};
void sw_strings_init(struct sw *w, struct sw_strings *s, enum sw_string_origin origin,
		     const struct sw_frame *callers, uint32_t n);
/* Returns the String's id; *hash (if not NULL) gets String.hashCode(). */
uint32_t sw_string(struct sw *w, const struct sw_strings *s, const char *latin1, uint64_t thread,
		   int32_t *hash);

/* java.util.HashMap: Java 8+ putVal/resize (table a power of two from 16,
 * resize when ++size > 0.75 * capacity, new nodes appended to the bucket's
 * chain, resize splits chains into lo/hi keeping their order).  Chains are
 * never treeified.  A kind holds the types, slots and allocation sites of
 * maps that are filled from the same call path. */
struct sw_hashmap_kind {
	uint32_t t_map, t_node, t_table;
	uint32_t s_table, s_key, s_value, s_next, s_hash;
	uint32_t site_node_empty, site_node_chain, site_table_first, site_table_grow;
};
/* put_callers: the frames that call HashMap.put, innermost first. */
void sw_hashmap_kind_init(struct sw *w, struct sw_hashmap_kind *k,
			  const struct sw_frame *put_callers, uint32_t n);
struct sw_hashmap {
	const struct sw_hashmap_kind *k;
	uint32_t obj;
	uint32_t size, cap, threshold;
};
uint32_t sw_hashmap_new(struct sw *w, struct sw_hashmap *m, const struct sw_hashmap_kind *k,
			uint32_t site, uint64_t thread);
/* put of a key not yet in the map; hash = key.hashCode().  Returns the node. */
uint32_t sw_hashmap_put(struct sw *w, struct sw_hashmap *m, uint32_t key, int32_t hash,
			uint32_t value, uint64_t thread);
/* Table length after n puts of distinct keys into a new HashMap (0: none). */
uint32_t sw_hashmap_capacity_for(uint64_t n);

/* java.util.HashSet: a HashMap whose values are the static HashSet.PRESENT. */
struct sw_hashset_kind {
	struct sw_hashmap_kind map;
	uint32_t t_set, s_map;
	uint32_t site_set, site_map;
	uint32_t present;      /* the PRESENT object */
};
/* ctor_callers call `new HashSet<>()`; add_callers call HashSet.add. */
void sw_hashset_kind_init(struct sw *w, struct sw_hashset_kind *k, uint32_t present,
			  const struct sw_frame *ctor_callers, uint32_t nc,
			  const struct sw_frame *add_callers, uint32_t na);
struct sw_hashset {
	const struct sw_hashset_kind *k;
	uint32_t obj;
	struct sw_hashmap map;
};
uint32_t sw_hashset_new(struct sw *w, struct sw_hashset *s, const struct sw_hashset_kind *k,
			uint64_t thread);
void sw_hashset_add(struct sw *w, struct sw_hashset *s, uint32_t e, int32_t hash, uint64_t thread);

/* java.util.ArrayList from `new ArrayList<>()`: Object[10] at the first add,
 * then newCapacity = old + old/2. */
struct sw_arraylist_kind {
	uint32_t t_list, t_array, s_data;
	uint32_t site_first, site_grow;
};
void sw_arraylist_kind_init(struct sw *w, struct sw_arraylist_kind *k,
			    const struct sw_frame *add_callers, uint32_t n);
struct sw_arraylist {
	const struct sw_arraylist_kind *k;
	uint32_t obj, size, cap;
};
uint32_t sw_arraylist_new(struct sw *w, struct sw_arraylist *l, const struct sw_arraylist_kind *k,
			  uint32_t site, uint64_t thread);
void sw_arraylist_add(struct sw *w, struct sw_arraylist *l, uint32_t e, uint64_t thread);
/* elementData length after n adds (0: none allocated). */
uint32_t sw_arraylist_capacity_for(uint64_t n);

/* java.util.LinkedList. */
struct sw_linkedlist_kind {
	uint32_t t_list, t_node;
	uint32_t s_first, s_last, s_item, s_next, s_prev;
	uint32_t site_node;
};
void sw_linkedlist_kind_init(struct sw *w, struct sw_linkedlist_kind *k,
			     const struct sw_frame *add_callers, uint32_t n);
struct sw_linkedlist {
	const struct sw_linkedlist_kind *k;
	uint32_t obj, size;
};
uint32_t sw_linkedlist_new(struct sw *w, struct sw_linkedlist *l,
			   const struct sw_linkedlist_kind *k, uint32_t site, uint64_t thread);
void sw_linkedlist_add(struct sw *w, struct sw_linkedlist *l, uint32_t e, uint64_t thread);
/* removeFirst() (unlinkFirst nulls the node's links); returns the item. */
uint32_t sw_linkedlist_remove_first(struct sw *w, struct sw_linkedlist *l);
/* clear(): nulls every node's links, as the JDK does. */
void sw_linkedlist_clear(struct sw *w, struct sw_linkedlist *l);

/* The objects every synthetic JVM has, all PREEXISTING and always live:
 * per thread a java.lang.Thread (THREAD root) with its name String and
 * byte[]; main's String[0] args (LOCAL root: main thread, main_method,
 * depth main_depth, slot 0); three java.lang.Class (SYSTEM_CLASS roots);
 * one java.lang.Object (JNI_GLOBAL root).  Defines the threads (ids 1..n,
 * names[0] should be "main"). */
struct sw_baseline {
	uint32_t thread_obj[16];
	uint64_t thread_id[16];
	uint32_t nthreads;
	uint32_t args;
};
#define SW_BASELINE_CLASSES 3
void sw_baseline(struct sw *w, struct sw_baseline *b, const char *const *names, uint32_t n,
		 const struct sw_frame *main_method, uint32_t main_depth);

/* ---- scenarios (synth_<name>.c) ---- */
struct sw_scenario_params {
	uint64_t n;            /* objects parameter, default applied */
	uint32_t g;            /* GCs, default applied */
	uint64_t seed;
};
int synth_multicache(struct sw *w, const struct sw_scenario_params *p);
int synth_buggystack(struct sw *w, const struct sw_scenario_params *p);
int synth_company(struct sw *w, const struct sw_scenario_params *p);
int synth_churn(struct sw *w, const struct sw_scenario_params *p);
int synth_gcstress(struct sw *w, const struct sw_scenario_params *p);
int synth_leakdrops(struct sw *w, const struct sw_scenario_params *p);

#endif

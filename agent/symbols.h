/* symbols.h - the symbol tables of the recorded JVM: types (with their
 * field lists), methods and allocation sites (symbols.c).
 *
 * Why a module of its own: application threads register symbols the first
 * time an allocation meets them, the heap walk's writer looks fields up,
 * mode=count gives its instrumented methods METHOD ids, and the agent
 * thread writes each symbol to the trace once.  All of them go through the
 * functions below; none sees the tables.
 *
 * Ownership: struct symbols is made by sym_new and owned by struct agent
 * (agent.c); it and everything it holds live until the process exits (the
 * JVM may post events until then; an id is never reused, and the JVM
 * unloads few classes).  Strings and arrays inside are the tables' own
 * (malloc), line number tables JVMTI's (Allocate).
 *
 * Locking: one mutex (the tables' own) guards every table.  Callers may
 * hold a recorder thread buffer's mutex or counting's mutex (lock order:
 * those -> the symbols' mutex -> the recorder's free_mu, through the
 * sym_mirror_fn), never the reverse.  sym_type_kind and the class-id half
 * of sym_type_of_tag take no lock: the allocation callbacks ask for every
 * allocation.  The writing functions are the agent thread's.
 *
 * Class ids: a class mirror is tagged (JVMTI SetTag) with its type id + 1,
 * 1..CLASS_TAG_MAX, so that an allocation's type is one GetTag away;
 * object ids (the recorder's) start above CLASS_TAG_MAX.
 */
#ifndef HEAPFS_AGENT_SYMBOLS_H
#define HEAPFS_AGENT_SYMBOLS_H

#include <jvmti.h>
#include <stdint.h>

#include "model/htr.h"
#include "model/htr_writer.h"

#define CLASS_TAG_MAX ((uint64_t)1 << 20)   /* type ids < 2^20 */
#define MAX_TYPES ((uint32_t)CLASS_TAG_MAX)

struct symbols;

/* *out: empty tables.  0 or -ENOMEM. */
int sym_new(struct symbols **out);

/* From here on types are registered without field lists (no fields in
 * their TYPE records): for a recording without heap walks, which no field
 * reference names.  The lists cost ~3 ms of a JVM's start-up (GetClassFields
 * and GetFieldName for the ~450 classes loaded by VMInit).  Before the
 * first registration. */
void sym_without_fields(struct symbols *sym);

/* A class mirror tagged with its class id (the first time its class is
 * registered): id, size, and the type to record it with (java.lang.Class's,
 * or a placeholder that sym_record_type resolves once Class is known).
 * Called with the symbols' mutex held: it must not call back into them. */
typedef void sym_mirror_fn(void *ctx, uint64_t id, uint64_t size, uint32_t type);

/* Type id of a class, registering it (and its superclasses) on first
 * sight; each mirror tagged on the way goes to mirror(ctx, ...) (mirror
 * NULL: not recorded).  HTR_NO_TYPE on error. */
uint32_t sym_type_of_class(struct symbols *sym, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, sym_mirror_fn *mirror,
			   void *ctx);
/* Type id for a class tag seen in a heap walk, or HTR_NO_TYPE.  Lock-free
 * for class ids; takes the mutex for the rare classes tagged otherwise. */
uint32_t sym_type_of_tag(struct symbols *sym, uint64_t class_tag);
/* Kind (enum htr_type_kind) of a registered type; lock-free. */
uint32_t sym_type_kind(const struct symbols *sym, uint32_t type);
/* Site id for raw frames; HTR_NO_SITE on error. */
uint32_t sym_site(struct symbols *sym, jvmtiEnv *jvmti, const jvmtiFrameInfo *frames, int n);
/* Method id for a jmethodID (registering it); UINT32_MAX on error. */
uint32_t sym_method(struct symbols *sym, jvmtiEnv *jvmti, jmethodID m);
/* JVMTI field index -> slot in our field list, for a FIELD reference of an
 * object of this type, or a STATIC_FIELD reference from the mirror of this
 * type (is_static).  -1 if none. */
int32_t sym_field_slot(struct symbols *sym, uint32_t type, uint32_t jvmti_index, int is_static);
/* The slot of java.lang.ref.Reference.referent in type, a subclass of
 * Reference, or -1 (not a Reference, or its fields are not known). */
int32_t sym_referent_slot(struct symbols *sym, uint32_t type);
/* Number of fields in our list of the type (for synthetic class slots). */
uint32_t sym_nfields(struct symbols *sym, uint32_t type);
/* Type id of java.lang.Class, HTR_NO_TYPE until it is registered. */
uint32_t sym_class_type(const struct symbols *sym);
/* The type to write for a record's type: a mirror recorded before
 * java.lang.Class was registered gets Class's type now. */
uint32_t sym_record_type(const struct symbols *sym, uint32_t type);
/* Writes TYPE/METHOD/SITE events not yet written that these ids need.
 * Agent thread only. */
int sym_emit_type(struct symbols *sym, struct htr_writer *w, uint32_t type, uint64_t size_hint);
int sym_emit_site(struct symbols *sym, struct htr_writer *w, uint32_t site);
int sym_emit_method(struct symbols *sym, struct htr_writer *w, uint32_t method);
void sym_stats(struct symbols *sym, uint32_t *ntypes, uint32_t *nmethods, uint32_t *nsites);

#endif

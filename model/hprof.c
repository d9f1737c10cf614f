/* hprof.c - the HPROF importer: dumps in, one .htr trace out.
 *
 * Per dump (one GC point each, GC number = position in the argument list):
 *   1. first pass (hprof_dump.c): tables of strings, classes, frames,
 *      traces, threads, roots and the object index (id, file offset);
 *   2. classes resolved, index sorted by id, sizes decided (hprof_layout.c);
 *   3. symbols written: types (reused across dumps when a class has the
 *      same name, fields and size), threads, methods and sites on first use;
 *   4. one pass over the objects in id order, each decoded once: matched
 *      with the previous dump's object of the same id (same type and
 *      length = the same object), new objects get ALLOC events, unmatched
 *      old ones die; their references are collected as a graph over dense
 *      object indexes (hprof_graph.c);
 *   5. referents that only referents reach are dropped (hprof_refs.c, a
 *      walk over that graph); GC_START, roots, one GRAPH_OBJ per object
 *      from the graph, deaths, GC_END with HTR_GC_HAS_GRAPH.
 * A dump mounted directly (hprof_import_temp_direct) also gets its heap
 * state from the same pass (hprof_state.c): the trace's events are then
 * never decoded to build it, and its temporary trace has no GRAPH_OBJ
 * records (the state is the graph's only copy; heap_state_build() of
 * that GC copies the state).
 * Trace ids are the dump's ids, except where an id was already given to
 * another object earlier in the trace (an address reused after a death):
 * such objects get fresh ids above every id seen (FRESH_ID_BASE at least).
 */
#include "hprof.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "hprof_internal.h"
#include "htr_writer.h"
#include "mpar.h"
#include "progress.h"
#include "timing.h"

#define FRESH_ID_BASE (1ull << 48)  /* above any address a dump holds today */
#define MAX_NAME 1024u              /* bytes kept of a field, method or thread name */
#define NO_LEN UINT32_MAX           /* "not an array" in an object signature */

struct importer {
	const struct hprof_import_opts *o;
	struct htr_writer *w;
	int keep_history;         /* more dumps follow: remember ids */

	struct strmap types;      /* type key -> type id */
	uint32_t ntypes;
	struct strmap methods;    /* class\0name\0sig\0file -> method id */
	uint32_t nmethods;
	struct strmap sites;      /* (method, line) pairs -> site id */
	uint32_t nsites;
	struct strmap threads;    /* serial\0name already written */
	uint32_t unknown_method;  /* HPROF_NONE until needed */

	/* the previous dump's objects, by dump id ascending */
	uint64_t *prev_id, *prev_tid, *prev_sig;
	size_t nprev;
	/* every trace id given out so far, ascending */
	uint64_t *used;
	size_t nused;
	uint64_t next_fresh;
	uint64_t last_ns;

	struct buf key, names;    /* scratch */
	struct htr_ref *refs;
	size_t caprefs;
	struct htr_field *fields;
	uint32_t capfields;

	int want_state;           /* build the heap state of the (single) dump too */
	struct hprof_direct *direct; /* that state, once built */
};

/* Per-dump results of the passes. */
struct dump_run {
	uint32_t gc;
	uint64_t time_ns;
	uint64_t used_bytes;
	uint64_t *tids;           /* [nobjs] trace ids; NULL: every trace id is the dump id */
	uint64_t *deaths; size_t ndeaths, capdeaths;
	uint64_t *new_tids; size_t nnew, capnew;   /* ascending ids kept as they are */
	uint64_t *fresh_tids; size_t nfresh, capfresh; /* ascending fresh ids */
	uint64_t *next_id, *next_tid, *next_sig;   /* becomes prev */
	struct htr_root *roots; uint32_t nroots, caproots;
	uint64_t roots_skipped, roots_on_classes, refs_to_classes;
	uint64_t unknown_class_objects;
	struct referents referents;  /* referent edges to leave out (hprof_refs.c) */
	struct dgraph graph;      /* the references, over dense object indexes */
	struct hstate_infos *infos;  /* want_state: per-object properties */
};

void hprof_import_opts_init(struct hprof_import_opts *o)
{
	memset(o, 0, sizeof *o);
	o->layout = HPROF_LAYOUT_VISUALVM;
	o->compressed_oops = 1;
	o->compressed_class_pointers = 1;
}

int hprof_is_dump(const char *path)
{
	return hprof_file_is_dump(path);
}

static int writer_error(struct htr_err *err, int rc, const char *what)
{
	return htr_errf(err, rc, 0, "writing the trace (%s): %s", what, strerror(-rc));
}

/* ---- symbols ---------------------------------------------------------------- */

static const char *descriptor(uint32_t type)
{
	switch (type) {
	case HPROF_T_OBJECT: return "Ljava/lang/Object;";  /* HPROF does not say which class */
	case HPROF_T_BOOLEAN: return "Z";
	case HPROF_T_CHAR: return "C";
	case HPROF_T_FLOAT: return "F";
	case HPROF_T_DOUBLE: return "D";
	case HPROF_T_BYTE: return "B";
	case HPROF_T_SHORT: return "S";
	case HPROF_T_INT: return "I";
	case HPROF_T_LONG: return "J";
	default: return "V";
	}
}

/* Appends a UTF8 string (bounded, NULs replaced) and a NUL to b. */
static int put_utf8_z(struct buf *b, const struct dump *d, uint64_t id)
{
	char tmp[MAX_NAME + 1];
	dump_utf8_copy(d, id, tmp, sizeof tmp);
	return buf_put(b, tmp, strlen(tmp) + 1);
}

/* Field names, descriptors and flags of class c in our order (instance
 * fields of the root class first ... own instance fields, then own
 * statics), as NUL-terminated strings in im->names and entries in
 * im->fields. */
static int class_fields(struct importer *im, const struct dump *d, uint32_t c, uint32_t *nout)
{
	const struct dclass *k = &d->classes[c];
	uint32_t n = k->ninst + k->cd.nstatics, ids = d->f->id_size;
	if (n > im->capfields) {
		struct htr_field *p = realloc(im->fields, (size_t)n * sizeof *p);
		if (!p)
			return -ENOMEM;
		im->fields = p;
		im->capfields = n;
	}
	buf_reset(&im->names);
	uint64_t *name_at = malloc(((size_t)n + 1) * sizeof *name_at);
	if (!name_at)
		return -ENOMEM;
	int rc = 0;
	uint32_t f = 0;
	/* instance fields: walk the chain once per level from the root down */
	uint32_t depth = 0;
	for (uint32_t x = c; x != HPROF_NONE && depth <= d->nclasses; x = d->classes[x].super)
		depth++;
	for (uint32_t level = depth; level-- > 0 && !rc;) {
		uint32_t x = c;
		for (uint32_t i = 0; i < level; i++)
			x = d->classes[x].super;
		const struct dclass *cx = &d->classes[x];
		for (uint32_t j = 0; j < cx->cd.nfields && !rc; j++, f++) {
			uint64_t at = cx->cd.fields + (uint64_t)j * (ids + 1);
			uint32_t t = hprof_u1(d->f, at + ids);
			name_at[f] = im->names.len;
			rc = put_utf8_z(&im->names, d, hprof_id(d->f, at));
			im->fields[f].sig = descriptor(t);
			im->fields[f].flags = t == HPROF_T_OBJECT ? HTR_FIELD_REF : 0;
		}
	}
	uint64_t at = k->cd.statics;
	for (uint32_t j = 0; j < k->cd.nstatics && !rc; j++, f++) {
		uint32_t t = hprof_u1(d->f, at + ids);
		name_at[f] = im->names.len;
		rc = put_utf8_z(&im->names, d, hprof_id(d->f, at));
		im->fields[f].sig = descriptor(t);
		im->fields[f].flags = HTR_FIELD_STATIC | (t == HPROF_T_OBJECT ? HTR_FIELD_REF : 0);
		at += ids + 1 + hprof_type_size(d->f, t);
	}
	for (uint32_t i = 0; i < f && !rc; i++) {
		im->fields[i].name = (const char *)im->names.data + name_at[i];
		im->fields[i].name_len = 0;
		im->fields[i].sig_len = 0;
	}
	free(name_at);
	*nout = f;
	return rc;
}

/* The type id for a definition, written on first sight.  Types are shared
 * across dumps (and across same-named classes of one dump) when name,
 * kind, sizes and fields all agree. */
static int intern_type(struct importer *im, const struct htr_type_def *t, uint32_t *id)
{
	struct buf *k = &im->key;
	buf_reset(k);
	int rc = buf_printf(k, "%s%c%u %u %u %u", t->name, 0, t->kind, t->instance_size, t->elem_size,
			    t->super_id);
	for (uint32_t i = 0; i < t->nfields && !rc; i++)
		rc = buf_printf(k, "%c%s%c%s%c%u", 0, t->fields[i].name, 0, t->fields[i].sig, 0,
				t->fields[i].flags);
	if (rc)
		return rc;
	*id = strmap_get(&im->types, k->data, k->len);
	if (*id != U64MAP_NONE)
		return 0;
	if (im->ntypes >= (1u << 24))
		return -E2BIG;
	struct htr_type_def def = *t;
	def.id = im->ntypes;
	if ((rc = htr_write_type(im->w, &def)))
		return rc;
	if ((rc = strmap_put(&im->types, k->data, k->len, def.id)))
		return rc;
	*id = im->ntypes++;
	return 0;
}

static int define_class_type(struct importer *im, struct dump *d, uint32_t c)
{
	struct dclass *k = &d->classes[c];
	uint32_t nf = 0;
	int rc = 0;
	if (k->kind == HTR_TYPE_INSTANCE && (rc = class_fields(im, d, c, &nf)))
		return rc;
	struct htr_type_def t = {
		.name = k->name, .kind = k->kind,
		.instance_size = k->kind == HTR_TYPE_INSTANCE ? (uint32_t)k->inst_size : d->layout.array_header,
		.elem_size = layout_elem_size(d, k->kind, k->elem_type),
		.super_id = k->super == HPROF_NONE ? HTR_NO_TYPE : d->classes[k->super].type_id,
		.nfields = nf, .fields = im->fields,
	};
	return intern_type(im, &t, &k->type_id);
}

/* Types of all classes, superclasses before subclasses. */
static int define_types(struct importer *im, struct dump *d)
{
	uint32_t *stack = malloc(((size_t)d->nclasses + 1) * sizeof *stack);
	if (!stack)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t i = 0; i < d->nclasses && !rc; i++) {
		uint32_t n = 0;
		for (uint32_t x = i; x != HPROF_NONE && d->classes[x].type_id == HPROF_NONE && n <= d->nclasses;
		     x = d->classes[x].super)
			stack[n++] = x;
		while (n && !rc)
			rc = define_class_type(im, d, stack[--n]);
	}
	free(stack);
	return rc;
}

/* Types for objects whose class the dump lacks. */
static int pseudo_type(struct importer *im, const struct dump *d, const struct dobj *s,
		       uint32_t *id)
{
	char name[64];
	struct htr_type_def t = { .name = name, .super_id = HTR_NO_TYPE };
	if (s->tag == HPROF_PRIM_ARRAY_DUMP) {
		snprintf(name, sizeof name, "%s[]", hprof_type_name(s->elem_type));
		t.kind = HTR_TYPE_PRIM_ARRAY;
		t.instance_size = d->layout.array_header;
		t.elem_size = hprof_type_size(d->f, s->elem_type);
	} else if (s->tag == HPROF_OBJ_ARRAY_DUMP) {
		snprintf(name, sizeof name, "<unknown class>[]");
		t.kind = HTR_TYPE_OBJ_ARRAY;
		t.instance_size = d->layout.array_header;
		t.elem_size = d->layout.oop;
	} else {
		snprintf(name, sizeof name, "<unknown class>");
		t.kind = HTR_TYPE_INSTANCE;
		t.instance_size = d->layout.header;
	}
	return intern_type(im, &t, id);
}

static int intern_method(struct importer *im, const char *cls, const char *name, const char *sig,
			 const char *file, uint32_t *id)
{
	struct buf *k = &im->key;
	buf_reset(k);
	int rc = buf_printf(k, "%s%c%s%c%s%c%s", cls, 0, name, 0, sig, 0, file);
	if (rc)
		return rc;
	*id = strmap_get(&im->methods, k->data, k->len);
	if (*id != U64MAP_NONE)
		return 0;
	if ((rc = htr_write_method(im->w, im->nmethods, cls, name, sig, file)) ||
	    (rc = strmap_put(&im->methods, k->data, k->len, im->nmethods)))
		return rc;
	*id = im->nmethods++;
	return 0;
}

static int unknown_method(struct importer *im, uint32_t *id)
{
	if (im->unknown_method == HPROF_NONE) {
		int rc = intern_method(im, "", "<unknown frame>", "", "", &im->unknown_method);
		if (rc)
			return rc;
	}
	*id = im->unknown_method;
	return 0;
}

/* Method id of a FRAME (by its id), defined on first use. */
static int frame_method(struct importer *im, struct dump *d, uint64_t frame_id, uint32_t *id)
{
	uint32_t fi = u64map_get(&d->frame_idx, frame_id);
	if (fi == U64MAP_NONE)
		return unknown_method(im, id);
	struct dframe *fr = &d->frames[fi];
	if (fr->method != HPROF_NONE) {
		*id = fr->method;
		return 0;
	}
	char name[MAX_NAME + 1], sig[MAX_NAME + 1], file[MAX_NAME + 1], vm[MAX_NAME + 1];
	uint32_t lc = u64map_get(&d->lc_by_serial, fr->class_serial);
	vm[0] = '\0';
	if (lc != U64MAP_NONE)
		dump_utf8_copy(d, d->lc_name[lc], vm, sizeof vm);
	char *cls = hprof_java_name(vm, strlen(vm));
	if (!cls)
		return -ENOMEM;
	int rc = intern_method(im, cls, dump_utf8_copy(d, fr->name, name, sizeof name),
			       dump_utf8_copy(d, fr->sig, sig, sizeof sig),
			       dump_utf8_copy(d, fr->src, file, sizeof file), &fr->method);
	free(cls);
	*id = fr->method;
	return rc;
}

/* Site id of a stack trace serial: HTR_NO_SITE when the trace is unknown
 * or empty (HotSpot gives every object an empty trace). */
static int trace_site(struct importer *im, struct dump *d, uint32_t serial, uint32_t *site)
{
	*site = HTR_NO_SITE;
	uint32_t ti = u64map_get(&d->trace_idx, serial);
	if (ti == U64MAP_NONE || d->traces[ti].nframes == 0)
		return 0;
	struct dtrace *tr = &d->traces[ti];
	if (tr->site != HPROF_NONE) {
		*site = tr->site;
		return 0;
	}
	uint32_t n = tr->nframes < HTR_MAX_FRAMES_PER_SITE ? tr->nframes : HTR_MAX_FRAMES_PER_SITE;
	struct htr_site_frame *fr = malloc((size_t)n * sizeof *fr);
	if (!fr)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint64_t fid = hprof_id(d->f, tr->frames + (uint64_t)i * d->f->id_size);
		rc = frame_method(im, d, fid, &fr[i].method);
		uint32_t fi = u64map_get(&d->frame_idx, fid);
		int32_t line = fi == U64MAP_NONE ? -1 : d->frames[fi].line;
		fr[i].line = line > 0 ? line : -1;  /* 0 none, -1 unknown, -2 compiled, -3 native */
	}
	if (!rc) {
		uint32_t id = strmap_get(&im->sites, fr, (size_t)n * sizeof *fr);
		if (id == U64MAP_NONE) {
			id = im->nsites;
			if (!(rc = htr_write_site(im->w, id, n, fr)) &&
			    !(rc = strmap_put(&im->sites, fr, (size_t)n * sizeof *fr, id)))
				im->nsites++;
		}
		tr->site = id;
		*site = id;
	}
	free(fr);
	return rc;
}

/* THREAD events: names from the thread objects' name field, else from
 * START_THREAD, else "thread-SERIAL". */
static int define_threads(struct importer *im, const struct dump *d)
{
	char name[MAX_NAME + 1];
	int rc = 0;
	for (uint32_t i = 0; i < d->nthreads && !rc; i++) {
		const struct dthread *t = &d->threads[i];
		uint32_t ty;
		uint64_t s = 0;
		name[0] = '\0';
		if (t->object && dump_instance_field(d, t->object, "name", &ty, &s) && ty == HPROF_T_OBJECT && s)
			dump_string_text(d, s, name, sizeof name);
		if (!name[0] && t->name)
			dump_utf8_copy(d, t->name, name, sizeof name);
		if (!name[0])
			snprintf(name, sizeof name, "thread-%u", t->serial);
		struct buf *k = &im->key;
		buf_reset(k);
		if ((rc = buf_printf(k, "%u%c%s", t->serial, 0, name)))
			break;
		if (strmap_get(&im->threads, k->data, k->len) != U64MAP_NONE)
			continue;
		if (!(rc = strmap_put(&im->threads, k->data, k->len, t->serial)))
			rc = htr_write_thread(im->w, t->serial, name);
	}
	return rc;
}

/* ---- allocations and identity across dumps ------------------------------------ */

static int push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		uint64_t *p = realloc(*a, nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		*a = p;
		*cap = nc;
	}
	(*a)[(*n)++] = v;
	return 0;
}

static int sorted_contains(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo] == v;
}

static int object_type(struct importer *im, const struct dump *d, const struct dobj *s,
		       uint32_t c, uint32_t *type)
{
	if (c != HPROF_NONE) {
		*type = d->classes[c].type_id;
		return 0;
	}
	return pseudo_type(im, d, s, type);
}

/* Trace id for an object new in this dump. */
static uint64_t new_trace_id(struct importer *im, uint64_t id, int *fresh)
{
	*fresh = im->nused && sorted_contains(im->used, im->nused, id);
	return *fresh ? im->next_fresh++ : id;
}

/* Object i's trace id differs from its dump id. */
static int remember_remap(struct dump_run *run, const struct dump *d, size_t i, uint64_t tid)
{
	if (!run->tids) {
		if (!(run->tids = malloc((d->nobjs ? d->nobjs : 1) * sizeof *run->tids)))
			return -ENOMEM;
		memcpy(run->tids, d->ids, d->nobjs * sizeof *run->tids);
	}
	run->tids[i] = tid;
	return 0;
}

/* Trace id of object index i. */
static uint64_t trace_id_at(const struct dump_run *run, const struct dump *d, size_t i)
{
	return run->tids ? run->tids[i] : d->ids[i];
}

/* The class of an object, with a one-entry memo: objects of one class
 * often come in runs, and the class map is probed otherwise. */
struct class_memo {
	uint64_t id;
	uint32_t c;
	int valid;
};

static uint32_t object_class(const struct dump *d, const struct dobj *o, struct class_memo *m)
{
	if (o->tag == HPROF_PRIM_ARRAY_DUMP || o->tag == HPROF_CLASS_DUMP)
		return dump_object_class(d, o);
	if (!m->valid || m->id != o->class_id) {
		m->id = o->class_id;
		m->c = dump_object_class(d, o);
		m->valid = 1;
	}
	return m->c;
}

/* Object i's identity across dumps: its trace id, whether it is new (then
 * its ALLOC event is written), and the deaths of the previous dump's
 * objects it passes by. */
static int match_object(struct importer *im, struct dump *d, struct dump_run *run, size_t i,
			uint64_t sig, size_t *pi, uint64_t *tid_out, int *is_new)
{
	uint64_t id = d->ids[i], tid = id;
	int rc = 0;
	*is_new = 1;
	while (*pi < im->nprev && im->prev_id[*pi] < id && !rc)
		rc = push_u64(&run->deaths, &run->ndeaths, &run->capdeaths, im->prev_tid[(*pi)++]);
	if (!rc && *pi < im->nprev && im->prev_id[*pi] == id) {
		if (im->prev_sig[*pi] == sig) {
			tid = im->prev_tid[*pi];
			*is_new = 0;
		} else {
			rc = push_u64(&run->deaths, &run->ndeaths, &run->capdeaths, im->prev_tid[*pi]);
		}
		(*pi)++;
	}
	if (!rc && *is_new) {
		int fresh = 0;
		tid = new_trace_id(im, id, &fresh);
		if (fresh)
			rc = push_u64(&run->fresh_tids, &run->nfresh, &run->capfresh, tid);
		else if (im->keep_history)
			rc = push_u64(&run->new_tids, &run->nnew, &run->capnew, tid);
	}
	*tid_out = tid;
	return rc;
}

/* What the pass over the objects carries from one object to the next. */
struct pass {
	struct class_memo cls;
	size_t pi;                /* position among the previous dump's objects */
	uint32_t flags;           /* of every ALLOC of this dump */
	uint64_t released;        /* the mapping below this offset was released */
	/* memo of the latest stack trace serial (HotSpot: one empty trace for
	 * every object) and of its thread and site */
	uint32_t trace_serial, thread, site;
	int have_trace, have_site;
};

/* Thread serial and site of the stack trace serial, memoized. */
static int object_trace(struct importer *im, struct dump *d, struct pass *p, uint32_t serial,
			int want_site)
{
	if (!p->have_trace || serial != p->trace_serial) {
		uint32_t ti = u64map_get(&d->trace_idx, serial);
		p->trace_serial = serial;
		p->thread = ti == U64MAP_NONE ? 0 : d->traces[ti].thread_serial;
		p->have_trace = 1;
		p->have_site = 0;
	}
	if (!want_site || p->have_site)
		return 0;
	p->have_site = 1;
	return trace_site(im, d, serial, &p->site);
}

/* Object i: its allocation (and the previous dump's deaths before it), its
 * properties for a direct mount's state, and unless another thread does
 * (graph_object), its references into the graph. */
static int pass_object(struct importer *im, struct dump *d, struct dump_run *run, struct pass *p,
		       size_t i, int with_graph)
{
	struct dobj o;
	dump_object_at(d, d->offs[i], &o);
	uint32_t c = object_class(d, &o, &p->cls), type;
	if (c == HPROF_NONE)
		run->unknown_class_objects++;
	int rc = object_type(im, d, &o, c, &type), is_new;
	if (rc)
		return rc;
	uint64_t size = layout_object_size(d, &o, c), tid;
	int is_array = o.tag != HPROF_INSTANCE_DUMP && o.tag != HPROF_CLASS_DUMP;
	int64_t length = is_array ? (int64_t)o.length : -1;
	uint64_t sig = (uint64_t)type << 32 | (is_array ? o.length : NO_LEN);
	run->used_bytes += size;
	if ((rc = match_object(im, d, run, i, sig, &p->pi, &tid, &is_new)) ||
	    (rc = object_trace(im, d, p, o.trace_serial, is_new)))
		return rc;
	uint32_t site = is_new ? p->site : HTR_NO_SITE;
	if (is_new) {
		struct htr_alloc a = {
			.id = tid, .type = type, .site = site, .thread = p->thread, .size = size,
			.array_length = length, .time_ns = run->time_ns, .flags = p->flags,
		};
		if ((rc = htr_write_alloc(im->w, &a)))
			return rc;
	}
	if (tid != d->ids[i] && (rc = remember_remap(run, d, i, tid)))
		return rc;
	if (im->keep_history) {
		run->next_id[i] = d->ids[i];
		run->next_tid[i] = tid;
		run->next_sig[i] = sig;
	}
	/* a direct mount has a single dump: every object is new */
	if (run->infos &&
	    (rc = hstate_infos_put(run->infos, i, type, site, p->thread, p->flags, size, length)))
		return rc;
	if (!with_graph)
		return 0;
	referents_note(&run->referents, i, c);
	return dgraph_add_object(&run->graph, d, i, &o, c);
}

/* Object i's references into the graph, for the pass's graph thread. */
static int graph_object(const struct dump *d, struct dump_run *run, struct class_memo *m, size_t i)
{
	struct dobj o;
	dump_object_at(d, d->offs[i], &o);
	uint32_t c = object_class(d, &o, m);
	referents_note(&run->referents, i, c);
	return dgraph_add_object(&run->graph, d, i, &o, c);
}

/* The pass over the objects on two threads: one for the allocations and
 * the properties, one for the graph (decoding every reference and finding
 * its target's index, about half the pass), each in id order, so each
 * structure is built as on one thread.  The dump's pages are released
 * behind the slower of the two, and the faster waits when it is
 * SPLIT_AHEAD objects ahead, so that what the pass keeps resident stays
 * about what it keeps on one thread. */
#define SPLIT_STEP (1u << 16)   /* objects between two meetings */
#define SPLIT_AHEAD (4u << 16)

struct split_pass {
	struct importer *im;
	struct dump *d;
	struct dump_run *run;
	struct pass *p;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t done[2];           /* objects each task has passed; under mu */
	int started[2];           /* under mu */
	int failed;               /* a task failed: the other stops; under mu */
};

/* Task `task` has passed `done` objects: releases what both have passed,
 * waits while it is too far ahead.  Returns 1 when the other task failed. */
static int split_meet(struct split_pass *sp, int task, size_t done)
{
	size_t n = sp->d->nobjs;
	pthread_mutex_lock(&sp->mu);
	sp->done[task] = done;
	size_t both = sp->done[0] < sp->done[1] ? sp->done[0] : sp->done[1];
	if (both < n)
		hprof_release_behind(sp->d->f, &sp->p->released, sp->d->offs[both]);
	pthread_cond_broadcast(&sp->cv);
	/* not for a task that has not started: when mpar_for could start no
	 * second thread, the tasks run one after the other on this one */
	while (!sp->failed && done < n && sp->started[!task] && sp->done[!task] < n &&
	       done > sp->done[!task] + SPLIT_AHEAD)
		pthread_cond_wait(&sp->cv, &sp->mu);
	int failed = sp->failed;
	pthread_mutex_unlock(&sp->mu);
	return failed;
}

static int split_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct split_pass *sp = ctx;
	struct dump *d = sp->d;
	size_t n = d->nobjs;
	struct class_memo memo = { 0 };
	struct progress *pr = task == 0 ? progress_here() : NULL;
	int rc = 0;
	pthread_mutex_lock(&sp->mu);
	sp->started[task] = 1;
	pthread_mutex_unlock(&sp->mu);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = task == 0 ? pass_object(sp->im, d, sp->run, sp->p, i, 0)
			       : graph_object(d, sp->run, &memo, i);
		if (!rc && (i % SPLIT_STEP) == SPLIT_STEP - 1) {
			if (split_meet(sp, (int)task, i + 1))
				return 0;   /* the other's error is the pass's */
			progress_set(pr, i + 1);
		}
	}
	pthread_mutex_lock(&sp->mu);
	sp->done[task] = n;
	sp->failed |= rc != 0;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	return rc;
}

static int objects_split(struct importer *im, struct dump *d, struct dump_run *run, struct pass *p)
{
	struct split_pass sp = { .im = im, .d = d, .run = run, .p = p };
	pthread_mutex_init(&sp.mu, NULL);
	pthread_cond_init(&sp.cv, NULL);
	int rc = mpar_for(2, 2, split_task, &sp);
	pthread_cond_destroy(&sp.cv);
	pthread_mutex_destroy(&sp.mu);
	return rc;
}

/* Below this many objects the pass stays on one thread. */
#define SPLIT_PASS_MIN (1u << 17)

/* The one pass over the objects, in id order: allocations (and deaths of
 * the previous dump's objects), the graph, and for a direct mount each
 * object's properties for the heap state; the graph on a thread of its
 * own when there are two.  It is the last pass that reads the objects, so
 * the dump's pages are released behind it. */
static int objects_pass(struct importer *im, struct dump *d, struct dump_run *run)
{
	size_t n = d->nobjs;
	struct pass p = { .flags = run->gc == 0 ? HTR_ALLOC_PREEXISTING : 0, .site = HTR_NO_SITE };
	int rc = dgraph_init(&run->graph, n);
	if (!rc && im->want_state)
		rc = hstate_infos_new(&run->infos, d);
	if (!rc && im->keep_history) {
		run->next_id = malloc((n ? n : 1) * sizeof(uint64_t));
		run->next_tid = malloc((n ? n : 1) * sizeof(uint64_t));
		run->next_sig = malloc((n ? n : 1) * sizeof(uint64_t));
		if (!run->next_id || !run->next_tid || !run->next_sig)
			rc = -ENOMEM;
	}
	uint64_t maxid = n ? d->ids[n - 1] : 0;
	if (im->next_fresh <= maxid)
		im->next_fresh = maxid + 1;
	struct progress *pr = progress_here();
	progress_phase(pr, n, "reading the dump's objects");
	if (!rc && (n >= SPLIT_PASS_MIN || (im->o->par_any_size && n)) && mpar_resolve(im->o->threads) > 1) {
		rc = objects_split(im, d, run, &p);
	} else {
		for (size_t i = 0; i < n && !rc; i++) {
			rc = pass_object(im, d, run, &p, i, 1);
			hprof_release_behind(d->f, &p.released, d->offs[i]);
			if ((i & 0xffff) == 0xffff)
				progress_set(pr, i + 1);
		}
	}
	hprof_release(d->f, 0, d->f->size);
	while (!rc && p.pi < im->nprev)
		rc = push_u64(&run->deaths, &run->ndeaths, &run->capdeaths, im->prev_tid[p.pi++]);
	if (!rc)
		dgraph_end(&run->graph);
	return rc;
}

/* ---- roots ------------------------------------------------------------------------- */

static int push_root(struct dump_run *run, const struct htr_root *r)
{
	if (run->nroots == run->caproots) {
		uint32_t nc = run->caproots ? run->caproots * 2 : 256;
		struct htr_root *p = realloc(run->roots, (size_t)nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		run->roots = p;
		run->caproots = nc;
	}
	run->roots[run->nroots++] = *r;
	return 0;
}

/* Method at depth `frame` of a thread's stack (its ROOT_THREAD_OBJECT
 * trace), or the unknown method. */
static int local_method(struct importer *im, struct dump *d, uint32_t thread_serial, uint32_t frame,
			uint32_t *method)
{
	uint32_t th = u64map_get(&d->thread_idx, thread_serial);
	uint32_t ti = th == U64MAP_NONE ? U64MAP_NONE : u64map_get(&d->trace_idx, d->threads[th].trace_serial);
	if (ti == U64MAP_NONE || frame >= d->traces[ti].nframes)
		return unknown_method(im, method);
	uint64_t fid = hprof_id(d->f, d->traces[ti].frames + (uint64_t)frame * d->f->id_size);
	return frame_method(im, d, fid, method);
}

static uint32_t root_kind(uint32_t tag)
{
	switch (tag) {
	case HPROF_ROOT_JNI_GLOBAL: return HTR_ROOT_JNI_GLOBAL;
	case HPROF_ROOT_JNI_LOCAL: return HTR_ROOT_JNI_LOCAL;
	case HPROF_ROOT_JAVA_FRAME: return HTR_ROOT_LOCAL;
	case HPROF_ROOT_NATIVE_STACK: return HTR_ROOT_NATIVE_STACK;
	case HPROF_ROOT_STICKY_CLASS: return HTR_ROOT_SYSTEM_CLASS;
	case HPROF_ROOT_THREAD_BLOCK: return HTR_ROOT_THREAD_BLOCK;
	case HPROF_ROOT_MONITOR_USED: return HTR_ROOT_MONITOR;
	case HPROF_ROOT_THREAD_OBJECT: return HTR_ROOT_THREAD;
	default: return HTR_ROOT_OTHER;   /* ROOT_UNKNOWN */
	}
}

struct static_roots {
	const struct dump *d;
	struct dump_run *run;
};

/* A static reference field's root, naming the class and the field; a
 * reference to a class (not an object of the dump) is counted. */
static int static_root(void *ctx, uint32_t c, uint32_t j, uint64_t id)
{
	struct static_roots *x = ctx;
	const struct dclass *k = &x->d->classes[c];
	size_t tj = dump_find_object(x->d, id);
	if (tj == SIZE_MAX) {
		x->run->refs_to_classes += u64map_get(&x->d->class_idx, id) != U64MAP_NONE;
		return 0;
	}
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = trace_id_at(x->run, x->d, tj),
			      .type = k->type_id, .field = k->ninst + j };
	return push_root(x->run, &r);
}

/* Every class object is a root: a loaded class lives as long as its loader
 * does, which HotSpot holds through its class loader data, not through a
 * reference the dump shows (array classes and hidden classes are in no
 * loader's `classes` list).  A system class keeps the root its
 * ROOT_STICKY_CLASS record gives it (kind class); any other class object
 * gets one of kind class-loader: held for its loader. */
static int class_object_roots(struct dump *d, struct dump_run *run)
{
	if (d->class_class == HPROF_NONE)
		return 0;
	uint8_t *sticky = calloc(d->nclasses ? d->nclasses : 1, 1);
	if (!sticky)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nroots; i++) {
		uint32_t c = u64map_get(&d->class_idx, d->roots[i].id);
		if (d->roots[i].tag == HPROF_ROOT_STICKY_CLASS && c != U64MAP_NONE)
			sticky[c] = 1;
	}
	int rc = 0;
	for (uint32_t c = 0; c < d->nclasses && !rc; c++) {
		size_t j = dump_class_object(d, c);
		if (j == SIZE_MAX || sticky[c])
			continue;
		struct htr_root r = { .kind = HTR_ROOT_CLASS_LOADER, .object = trace_id_at(run, d, j) };
		rc = push_root(run, &r);
	}
	free(sticky);
	return rc;
}

static int dump_roots(struct importer *im, struct dump *d, struct dump_run *run)
{
	struct u64map slots = { 0 };   /* (thread, depth) -> locals seen so far */
	int rc = class_object_roots(d, run);
	for (uint32_t i = 0; i < d->nroots && !rc; i++) {
		const struct droot *dr = &d->roots[i];
		size_t j = dump_find_object(d, dr->id);
		if (j == SIZE_MAX) {
			run->roots_skipped++;
			run->roots_on_classes += u64map_get(&d->class_idx, dr->id) != U64MAP_NONE;
			continue;
		}
		struct htr_root r = { .kind = root_kind(dr->tag), .object = trace_id_at(run, d, j) };
		uint32_t depth = dr->frame == UINT32_MAX ? 0 : dr->frame;
		switch (r.kind) {
		case HTR_ROOT_LOCAL:
			/* HPROF has no slot numbers: the n-th local root of a frame
			 * gets slot n, so that each has a name of its own */
			r.slot = u64map_get(&slots, (uint64_t)dr->thread_serial << 32 | depth);
			if (r.slot == U64MAP_NONE)
				r.slot = 0;
			rc = u64map_put(&slots, (uint64_t)dr->thread_serial << 32 | depth, r.slot + 1);
			if (!rc)
				rc = local_method(im, d, dr->thread_serial, depth, &r.method);
			__attribute__((fallthrough)); /* thread and depth as for JNI locals */
		case HTR_ROOT_JNI_LOCAL:
			r.depth = depth;
			__attribute__((fallthrough));
		case HTR_ROOT_THREAD:
		case HTR_ROOT_NATIVE_STACK:
		case HTR_ROOT_THREAD_BLOCK:
			r.thread = dr->thread_serial;
			break;
		default:
			break;
		}
		if (!rc)
			rc = push_root(run, &r);
	}
	u64map_free(&slots);
	/* static reference fields: roots naming the class and the field */
	struct static_roots sr = { d, run };
	return rc ? rc : dump_static_refs(d, static_root, &sr);
}

/* ---- the graph ------------------------------------------------------------------------ */

static int push_ref(struct importer *im, size_t *n, uint32_t slot, uint64_t target)
{
	if (*n == im->caprefs) {
		size_t nc = im->caprefs ? im->caprefs * 2 : 1024;
		struct htr_ref *p = realloc(im->refs, nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		im->refs = p;
		im->caprefs = nc;
	}
	im->refs[(*n)++] = (struct htr_ref){ slot, target };
	return 0;
}

/* One GRAPH_OBJ per object, from the graph the pass collected: its edges
 * in the dump's order, then its references to ids the dump does not hold
 * (the reconstructor drops and counts those). */
static int write_graph(struct importer *im, const struct dump *d, const struct dump_run *run)
{
	const struct dgraph *g = &run->graph;
	uint32_t hi_run = 0;
	size_t dk = 0;
	int rc = 0;
	struct progress *pr = progress_here();
	progress_phase(pr, d->nobjs, "writing the dump's graph");
	for (size_t i = 0; i < d->nobjs && !rc; i++) {
		if ((i & 0xffff) == 0xffff)
			progress_set(pr, i);
		size_t n = 0;
		for (uint64_t e = g->off[i]; e < g->off[i + 1] && !rc; e++)
			rc = push_ref(im, &n, dgraph_slot(g, e, &hi_run), trace_id_at(run, d, g->tgt[e]));
		for (; dk < g->ndang && g->dang[dk].src == i && !rc; dk++)
			rc = push_ref(im, &n, g->dang[dk].slot, g->dang[dk].id);
		/* never NULL, also without references: the writer advances it */
		struct htr_ref none;
		if (!rc)
			rc = htr_write_graph_object(im->w, trace_id_at(run, d, i), (uint32_t)n,
						    im->refs ? im->refs : &none);
	}
	return rc;
}

/* ---- one dump ------------------------------------------------------------------------ */

static int merge_into_used(struct importer *im, const uint64_t *a, size_t na)
{
	if (!na)
		return 0;
	uint64_t *out = malloc((im->nused + na) * sizeof *out);
	if (!out)
		return -ENOMEM;
	size_t i = 0, j = 0, k = 0;
	while (i < im->nused || j < na) {
		if (j == na || (i < im->nused && im->used[i] < a[j]))
			out[k++] = im->used[i++];
		else
			out[k++] = a[j++];
	}
	free(im->used);
	im->used = out;
	im->nused = k;
	return 0;
}

static void run_free(struct dump_run *run)
{
	free(run->deaths);
	free(run->new_tids);
	free(run->fresh_tids);
	free(run->next_id);
	free(run->next_tid);
	free(run->next_sig);
	free(run->roots);
	free(run->tids);
	referents_free(&run->referents);
	dgraph_free(&run->graph);
	hstate_infos_free(run->infos);
}

static int info_kv(struct importer *im, uint32_t gc, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int info_kv(struct importer *im, uint32_t gc, const char *key, const char *fmt, ...)
{
	char k[64], v[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	snprintf(k, sizeof k, "hprof.%u.%s", gc, key);
	return htr_write_info(im->w, k, v);
}

static int dump_info(struct importer *im, const struct dump *d, const struct dump_run *run)
{
	uint32_t g = run->gc;
	int rc = info_kv(im, g, "file", "%s", d->f->path);
	if (!rc) rc = info_kv(im, g, "format", "JAVA PROFILE 1.0.%u", d->f->minor);
	if (!rc) rc = info_kv(im, g, "id_size", "%u", d->f->id_size);
	if (!rc) rc = info_kv(im, g, "timestamp_ms", "%" PRIu64, d->f->time_ms);
	if (!rc) rc = info_kv(im, g, "objects", "%zu", d->nobjs);
	if (!rc) rc = info_kv(im, g, "classes", "%u", d->nclasses);
	if (!rc) rc = info_kv(im, g, "layout", "%s", d->layout.kind == HPROF_LAYOUT_HOTSPOT ? "hotspot" : "visualvm");
	if (!rc) rc = info_kv(im, g, "oop_size", "%u (%s)", d->layout.oop, d->layout.oop_source);
	if (!rc) rc = info_kv(im, g, "header_size", "%u", d->layout.header);
	if (!rc) rc = info_kv(im, g, "array_header_size", "%u", d->layout.array_header);
	if (!rc) rc = info_kv(im, g, "roots_skipped", "%" PRIu64 " (%" PRIu64 " name class objects)",
			      run->roots_skipped, run->roots_on_classes);
	if (!rc) rc = info_kv(im, g, "refs_to_classes", "%" PRIu64,
			      run->refs_to_classes + run->graph.refs_to_classes);
	if (!rc) rc = info_kv(im, g, "referents_dropped", "%" PRIu64, run->referents.dropped);
	if (!rc && run->unknown_class_objects)
		rc = info_kv(im, g, "unknown_class_objects", "%" PRIu64, run->unknown_class_objects);
	if (!rc && run->graph.bad_instances)
		rc = info_kv(im, g, "short_instances", "%" PRIu64, run->graph.bad_instances);
	if (!rc && d->truncated)
		rc = info_kv(im, g, "truncated", "%s", d->truncated_msg);
	if (!rc && d->truncated)
		rc = info_kv(im, g, "truncated_at", "%" PRIu64, d->truncated_at);
	return rc;
}

static void warn(const struct importer *im, const char *path, const char *msg)
{
	if (im->o->progress)
		progress_note(im->o->progress, "heapfs import: %s: warning: %s\n", path, msg);
}

/* Roots, graph and deaths of the GC, between GC_START and GC_END. */
static int write_gc(struct importer *im, struct dump *d, struct dump_run *run,
		    struct htr_err *err)
{
	struct htr_gc_event g = { .gc = run->gc, .time_ns = run->time_ns, .used = run->used_bytes,
				  .capacity = UINT64_MAX, .flags = 0, .cause = "heap dump" };
	int rc = dump_roots(im, d, run);   /* may define methods: before GC_START */
	if (rc)
		return writer_error(err, rc, "roots");
	if ((rc = htr_write_gc_start(im->w, &g)))
		return writer_error(err, rc, "GC start");
	if (run->nroots && (rc = htr_write_roots(im->w, run->gc, run->nroots, run->roots)))
		return writer_error(err, rc, "roots");
	if ((rc = referents_apply(&run->referents, d, &run->graph)))
		return writer_error(err, rc, "referents");
	/* A dump mounted directly takes its graph into the state this pass
	 * builds (hstate_make), which its trace holds for its whole life
	 * (trace->prebuilt, never evicted; heap_state_build() copies it): the
	 * temporary trace needs no graph records, the pass's longest write
	 * (about a fifth of opening a dump). */
	if (!im->want_state && (rc = write_graph(im, d, run)))
		return writer_error(err, rc, "graph");
	if (run->ndeaths > UINT32_MAX)
		return writer_error(err, -E2BIG, "deaths");
	if (run->ndeaths && (rc = htr_write_deaths(im->w, run->gc, (uint32_t)run->ndeaths, run->deaths)))
		return writer_error(err, rc, "deaths");
	g.flags = HTR_GC_HAS_GRAPH;
	if ((rc = htr_write_gc_end(im->w, &g)))
		return writer_error(err, rc, "GC end");
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int import_one(struct importer *im, const char *path, uint32_t gc, struct htr_err *err)
{
	double t0 = now_s(), t_scan = 0, t_alloc = 0;
	struct dump d;
	struct dump_run run;
	memset(&run, 0, sizeof run);
	run.gc = gc;
	const char *label = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct lap_t lap;
	lap_now(&lap);
	int rc = dump_open(&d, path, im->o, err);
	if (rc)
		goto out;
	if ((rc = dump_scan(&d, im->o->progress, label, err)))
		goto out;
	timing_lap("import", "scan", &lap);
	progress_phase(progress_here(), 0, "sorting the objects of %s", label);
	if ((rc = dump_resolve_classes(&d, err)) ||
	    (rc = dump_sort_objects(&d, err)) ||
	    (rc = layout_init(&d, err)))
		goto out;
	timing_lap("import", "classes and id index", &lap);
	t_scan = now_s();
	if (d.truncated)
		warn(im, path, d.truncated_msg);
	run.time_ns = d.f->time_ms * 1000000ull;
	if (run.time_ns < im->last_ns) {
		warn(im, path, "the dump's timestamp is older than the previous dump's; using the previous one");
		run.time_ns = im->last_ns;
	}
	im->last_ns = run.time_ns;
	if ((rc = define_types(im, &d)) || (rc = define_threads(im, &d))) {
		writer_error(err, rc, "symbols");
		goto out;
	}
	if ((rc = referents_init(&run.referents, &d, im->o->keep_referents)) ||
	    (rc = objects_pass(im, &d, &run))) {
		writer_error(err, rc, "allocations");
		goto out;
	}
	t_alloc = now_s();
	timing_lap("import", "objects", &lap);
	if ((rc = write_gc(im, &d, &run, err)))
		goto out;
	timing_lap("import", "roots and graph", &lap);
	if (im->o->progress)
		progress_note(im->o->progress, "heapfs import: %s: %zu objects, %.0f MB in %.2f s "
			"(index %.2f s, allocations %.2f s, roots and graph %.2f s)\n",
			label, d.nobjs, d.f->size / 1e6, now_s() - t0, t_scan - t0, t_alloc - t_scan,
			now_s() - t_alloc);
	if ((rc = dump_info(im, &d, &run))) {
		writer_error(err, rc, "info");
		goto out;
	}
	if (im->want_state &&
	    (rc = hstate_make(&im->direct, &d, run.infos, &run.graph, run.roots, run.nroots, gc))) {
		htr_errf(err, rc, 0, "%s building the heap state", rc == -ENOMEM ? "out of memory" : strerror(-rc));
		goto out;
	}
	if (im->keep_history) {
		if ((rc = merge_into_used(im, run.new_tids, run.nnew)) ||
		    (rc = merge_into_used(im, run.fresh_tids, run.nfresh))) {
			htr_errf(err, rc, 0, "out of memory");
			goto out;
		}
		free(im->prev_id);
		free(im->prev_tid);
		free(im->prev_sig);
		im->prev_id = run.next_id;
		im->prev_tid = run.next_tid;
		im->prev_sig = run.next_sig;
		im->nprev = d.nobjs;
		run.next_id = run.next_tid = run.next_sig = NULL;
	}
out:
	if (rc && !err->msg[0])
		htr_errf(err, rc, 0, "%s", strerror(-rc));
	run_free(&run);
	dump_free(&d);
	return rc;
}

/* ---- entry points ---------------------------------------------------------------------- */

static void importer_free(struct importer *im)
{
	strmap_free(&im->types);
	strmap_free(&im->methods);
	strmap_free(&im->sites);
	strmap_free(&im->threads);
	free(im->prev_id);
	free(im->prev_tid);
	free(im->prev_sig);
	free(im->used);
	buf_free(&im->key);
	buf_free(&im->names);
	free(im->refs);
	free(im->fields);
	hprof_direct_free(im->direct);
}

static int trace_info_header(struct importer *im, int ndumps)
{
	char v[32];
	int rc = htr_write_info(im->w, "recorder", "heapfs import (HPROF heap dumps)");
	if (!rc) rc = htr_write_info(im->w, "source.format", "hprof");
	if (!rc) rc = htr_write_info(im->w, "hprof.layout",
				     im->o->layout == HPROF_LAYOUT_HOTSPOT ? "hotspot" : "visualvm");
	snprintf(v, sizeof v, "%d", ndumps);
	if (!rc) rc = htr_write_info(im->w, "hprof.dumps", v);
	return rc;
}

/* The import into out_htr, a file the caller made and removes on
 * failure; on failure e holds offset and message and *where the file they
 * are about.  temp: out_htr is a temporary trace, read by this process
 * and deleted after: not fsynced (~2 ms of every dump's opening). */
static int import_all(const char *const *dumps, int ndumps, const char *out_htr,
		      const struct hprof_import_opts *o, struct htr_err *err, const char **where_out,
		      struct hprof_direct **direct, int temp)
{
	struct importer im;
	struct htr_err e;
	memset(&im, 0, sizeof im);
	memset(&e, 0, sizeof e);
	im.o = o;
	im.want_state = direct != NULL && ndumps == 1;
	im.unknown_method = HPROF_NONE;
	im.next_fresh = FRESH_ID_BASE;
	const char *where = out_htr;
	struct htr_writer_opts wo = { .zstd_level = o->zstd_level, .no_sync = temp };
	int rc = htr_writer_open(&im.w, out_htr, &wo);
	if (rc) {
		htr_errf(&e, rc, 0, "cannot create the trace: %s", strerror(-rc));
		goto out;
	}
	if ((rc = trace_info_header(&im, ndumps))) {
		writer_error(&e, rc, "info");
		goto out;
	}
	for (int i = 0; i < ndumps && !rc; i++) {
		im.keep_history = i + 1 < ndumps;
		where = dumps[i];
		if (o->progress)
			progress_note(o->progress, "heapfs import: [%d/%d] %s\n", i + 1, ndumps, dumps[i]);
		rc = import_one(&im, dumps[i], (uint32_t)i, &e);
	}
	if (!rc) {
		where = out_htr;
		rc = htr_writer_close(im.w);
		im.w = NULL;
		if (rc)
			writer_error(&e, rc, "close");
	}
out:
	if (im.w)
		htr_writer_abandon(im.w);   /* the caller removes out_htr */
	if (rc && !e.msg[0])
		htr_errf(&e, rc, 0, "%s", strerror(-rc));
	*err = e;
	*where_out = where;
	if (!rc && direct) {
		*direct = im.direct;
		im.direct = NULL;
	}
	importer_free(&im);
	return rc;
}

/* The trace is written beside out_htr and renamed over it at the end
 * (model/files.h): a failed import leaves an existing out_htr as it was. */
int hprof_import_with(const char *const *dumps, int ndumps, const char *out_htr,
		      const struct hprof_import_opts *o, char *err, size_t errlen)
{
	struct htr_err e;
	struct outfile of;
	const char *where = out_htr;
	memset(&e, 0, sizeof e);
	int rc = outfile_begin(&of, out_htr, e.msg, sizeof e.msg);
	if (!rc) {
		rc = import_all(dumps, ndumps, of.tmp, o, &e, &where, NULL, 0);
		if (where == of.tmp)
			where = out_htr;
		if (rc)
			outfile_abort(&of);
		else
			rc = outfile_commit(&of, e.msg, sizeof e.msg);
	}
	if (rc && err && errlen) {
		if (e.offset)
			snprintf(err, errlen, "%s: offset %" PRIu64 ": %s", where, e.offset, e.msg);
		else
			snprintf(err, errlen, "%s: %s", where, e.msg);
	}
	return rc;
}

/* The temporary trace of hprof_import_temp and hprof_import_temp_direct. */
static int import_temp(const char *dump, const struct hprof_import_opts *o, char *tmp_path,
		       size_t tmp_len, struct hprof_direct **direct, struct htr_err *err)
{
	struct hprof_import_opts defaults;
	if (!o) {
		hprof_import_opts_init(&defaults);
		o = &defaults;
	}
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(tmp_path, tmp_len, "%s/heapfs-hprof-XXXXXX.htr", dir) >= tmp_len)
		return htr_errf(err, -ENAMETOOLONG, 0, "temporary file name too long");
	int fd = mkstemps(tmp_path, 4);
	if (fd < 0)
		return htr_errf(err, -errno, 0, "cannot create a temporary trace in %s: %s", dir,
				strerror(errno));
	close(fd);   /* the writer opens it again by name */
	const char *dumps[] = { dump }, *where = dump;
	int rc = import_all(dumps, 1, tmp_path, o, err, &where, direct, 1);
	if (rc)
		unlink(tmp_path);
	return rc;
}

int hprof_import_temp(const char *dump, const struct hprof_import_opts *o, char *tmp_path,
		      size_t tmp_len, struct htr_err *err)
{
	return import_temp(dump, o, tmp_path, tmp_len, NULL, err);
}

int hprof_import_temp_direct(const char *dump, const struct hprof_import_opts *o, char *tmp_path,
			     size_t tmp_len, struct hprof_direct **direct, struct htr_err *err)
{
	*direct = NULL;
	return import_temp(dump, o, tmp_path, tmp_len, direct, err);
}

int hprof_import(const char *const *dumps, int ndumps, const char *out_htr, FILE *progress,
		 char *err, size_t errlen)
{
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	o.progress = progress;
	return hprof_import_with(dumps, ndumps, out_htr, &o, err, errlen);
}

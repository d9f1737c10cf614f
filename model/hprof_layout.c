/* hprof_layout.c - shallow sizes of dumped objects.
 *
 * An HPROF dump does not say how big objects are in the heap: an
 * INSTANCE_DUMP carries field values at their value sizes (references at
 * the identifier size) and HotSpot writes the same number as the class's
 * "instance size".  Sizes are therefore a model, and two are offered
 * (docs/hprof.md, "Object sizes"):
 *
 * VISUALVM, the default, repeats the rules of VisualVM's heap library
 * (org.graalvm.visualvm.lib.jfluid.heap: ClassDump.getInstanceSize,
 * ClassDumpSegment.getArraySize, ObjectSizeSettings), so that by-type
 * tables equal its class histogram:
 *   - if java.lang.Object's CLASS_DUMP has a non-zero instance size, the
 *     dumper wrote real sizes ("newSize"): an instance's size is its
 *     class's instance size, unaligned, and the minimum instance size
 *     (header) is java.lang.Object's;
 *   - otherwise instance = align8(header + sum of the field sizes of the
 *     class and its superclasses), references counted at the oop size and
 *     primitives at their value size, with header = id size + oop size;
 *   - array = align8(header + 4 + length * element size);
 *   - the oop size is the id size for 4-byte ids; for 8-byte ids it is
 *     guessed: with newSize from java.lang.Object's size; otherwise from
 *     the offsets of two fields in java.lang.Class$Atomic or FutureTask
 *     (JDK 8), else 4 if the system properties hold
 *     java.vm.compressedOopsMode, else 8.
 * HOTSPOT places fields as HotSpot's JDK 15+ field layout does: mark word
 * plus (compressed) class pointer, each class's fields largest first into
 * the first gap that fits (gaps the superclasses left included), 8-byte
 * alignment; arrays have a 16-byte (24 without compressed class pointers)
 * header.
 */
#include "hprof_internal.h"

#include <string.h>

#include "htr.h"

#define ALIGN 8u
#define MAX_PROPERTY_STEPS 1000000u  /* bounds the walk of a damaged map */
#define MAX_PROPERTY_DEPTH 8u        /* Properties.defaults nesting */

static uint64_t align8(uint64_t v)
{
	return (v + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
}

static uint32_t elem_size(const struct dump *d, uint32_t type)
{
	return type == HPROF_T_OBJECT ? d->layout.oop : hprof_type_size(d->f, type);
}

/* An object reference field of obj, 0 if null or absent. */
static uint64_t ref_field(const struct dump *d, uint64_t obj, const char *name)
{
	uint32_t t;
	uint64_t v;
	if (!obj || !dump_instance_field(d, obj, name, &t, &v) || t != HPROF_T_OBJECT)
		return 0;
	return v;
}

/* Walks hash table entries (key, next chains) of the object array table
 * and says whether a key's text equals want. */
static int table_has_key(const struct dump *d, uint64_t table, const char *key_field,
			 const char *want, uint32_t *steps)
{
	size_t i = dump_find_object(d, table);
	if (i == SIZE_MAX)
		return 0;
	struct dobj a;
	dump_object_at(d, d->offs[i], &a);
	if (a.tag != HPROF_OBJ_ARRAY_DUMP)
		return 0;
	char text[128];
	for (uint32_t k = 0; k < a.length; k++) {
		uint64_t e = hprof_id(d->f, a.data + (uint64_t)k * d->f->id_size);
		for (; e && (*steps)++ < MAX_PROPERTY_STEPS; e = ref_field(d, e, "next")) {
			uint64_t key = ref_field(d, e, key_field);
			if (key && dump_string_text(d, key, text, sizeof text) && strcmp(text, want) == 0)
				return 1;
		}
	}
	return 0;
}

/* HprofProxy.getProperties: the table of a Hashtable-based Properties
 * (JDK 8), the ConcurrentHashMap "map" (JDK 9+), or an old "elementData";
 * then the defaults. */
static int properties_have(const struct dump *d, uint64_t props, const char *want)
{
	uint32_t steps = 0;
	for (uint32_t depth = 0; props && depth < MAX_PROPERTY_DEPTH; depth++) {
		uint64_t table = ref_field(d, props, "table");
		uint64_t map = ref_field(d, props, "map");
		if (table && table_has_key(d, table, "key", want, &steps))
			return 1;
		if (!table && map && table_has_key(d, ref_field(d, map, "table"), "key", want, &steps))
			return 1;
		if (!table && !map && table_has_key(d, ref_field(d, props, "elementData"), "key", want, &steps))
			return 1;
		props = ref_field(d, props, "defaults");
	}
	return 0;
}

/* ObjectSizeSettings.getFieldsDiff: the difference of two static long
 * fields that hold field offsets, if it is 4 or 8. */
static uint32_t fields_diff(const struct dump *d, const char *cls, const char *f1, const char *f2)
{
	uint32_t c = dump_class_by_name(d, cls), t1, t2;
	uint64_t v1, v2;
	if (c == HPROF_NONE || !dump_static_field(d, c, f1, &t1, &v1) ||
	    !dump_static_field(d, c, f2, &t2, &v2) || t1 != HPROF_T_LONG || t2 != HPROF_T_LONG)
		return 0;
	int32_t diff = (int32_t)(uint32_t)(v2 - v1);
	return diff == 4 || diff == 8 ? (uint32_t)diff : 0;
}

static void visualvm_oop_size(struct dump *d)
{
	struct dlayout *l = &d->layout;
	uint32_t ids = d->f->id_size;
	if (ids != 8) {
		l->oop = ids;
		l->oop_source = "id size";
		return;
	}
	if (l->new_size) {
		int64_t s = (int64_t)l->header - (int64_t)ids; /* a damaged header must not overflow */
		l->oop = s == 4 || s == 8 ? (uint32_t)s : s < 8 ? 4 : 8;
		l->oop_source = "java.lang.Object instance size";
		return;
	}
	uint32_t diff = fields_diff(d, "java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset");
	if (diff) {
		l->oop = diff;
		l->oop_source = "java.lang.Class$Atomic field offsets";
		return;
	}
	if ((diff = fields_diff(d, "java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset"))) {
		l->oop = diff;
		l->oop_source = "java.util.concurrent.FutureTask field offsets";
		return;
	}
	uint32_t sys = dump_class_by_name(d, "java.lang.System"), t;
	uint64_t props = 0;
	if (sys != HPROF_NONE) {
		if (!dump_static_field(d, sys, "props", &t, &props) || t != HPROF_T_OBJECT ||
		    dump_find_object(d, props) == SIZE_MAX)
			props = 0;
		if (!props && (!dump_static_field(d, sys, "systemProperties", &t, &props) ||
			       t != HPROF_T_OBJECT))
			props = 0;
	}
	if (props && properties_have(d, props, "java.vm.compressedOopsMode")) {
		l->oop = 4;
		l->oop_source = "system property java.vm.compressedOopsMode";
		return;
	}
	l->oop = ids;
	l->oop_source = "id size (no sign of compressed oops)";
}

/* VisualVM's java.lang.Object: found by its VM name, the last one wins. */
static uint32_t java_lang_object(const struct dump *d)
{
	uint32_t found = HPROF_NONE;
	for (uint32_t i = 0; i < d->nclasses; i++)
		if (strcmp(d->classes[i].vm_name, "java/lang/Object") == 0 ||
		    strcmp(d->classes[i].vm_name, "java.lang.Object") == 0)
			found = i;
	return found;
}

/* ---- HotSpot's field layout ------------------------------------------------ */

struct hole {
	uint32_t off, size;
};

#define MAX_HOLES 64u

struct fieldsim {
	struct hole holes[MAX_HOLES];
	uint32_t nholes;
	uint64_t end;
};

static void add_hole(struct fieldsim *s, uint32_t off, uint32_t size)
{
	if (size && s->nholes < MAX_HOLES)
		s->holes[s->nholes++] = (struct hole){ off, size };
}

/* First fit: the lowest gap where an aligned field of this size fits,
 * else the end (aligned to the size, the padding becoming a gap). */
static void place(struct fieldsim *s, uint32_t size)
{
	uint32_t best = MAX_HOLES;
	for (uint32_t h = 0; h < s->nholes; h++) {
		uint32_t at = (s->holes[h].off + size - 1) & ~(size - 1);
		if (at + size <= s->holes[h].off + s->holes[h].size &&
		    (best == MAX_HOLES || s->holes[h].off < s->holes[best].off))
			best = h;
	}
	if (best < MAX_HOLES) {
		struct hole hl = s->holes[best];
		uint32_t at = (hl.off + size - 1) & ~(size - 1);
		s->holes[best] = s->holes[--s->nholes];
		add_hole(s, hl.off, at - hl.off);
		add_hole(s, at + size, hl.off + hl.size - (at + size));
		return;
	}
	uint64_t at = (s->end + size - 1) & ~(uint64_t)(size - 1);
	add_hole(s, (uint32_t)s->end, (uint32_t)(at - s->end));
	s->end = at + size;
}

static uint64_t hotspot_instance_size(const struct dump *d, uint32_t c)
{
	uint32_t chain[64], n = 0;
	for (uint32_t x = c; x != HPROF_NONE && n < 64; x = d->classes[x].super)
		chain[n++] = x;
	struct fieldsim s = { .nholes = 0, .end = d->layout.header };
	uint32_t ids = d->f->id_size;
	for (uint32_t i = n; i-- > 0;) {   /* superclasses first */
		const struct dclass *k = &d->classes[chain[i]];
		/* primitives largest first, then references */
		static const uint32_t order[] = { 8, 4, 2, 1, 0 };
		for (uint32_t o = 0; o < 5; o++) {
			for (uint32_t j = 0; j < k->cd.nfields; j++) {
				uint32_t t = hprof_u1(d->f, k->cd.fields + (uint64_t)j * (ids + 1) + ids);
				uint32_t sz = hprof_type_size(d->f, t);
				if ((order[o] == 0 && t == HPROF_T_OBJECT) ||
				    (order[o] && t != HPROF_T_OBJECT && sz == order[o]))
					place(&s, t == HPROF_T_OBJECT ? d->layout.oop : sz);
			}
		}
	}
	return align8(s.end);
}

/* ---- sizes ---------------------------------------------------------------------- */

static uint64_t visualvm_instance_size(const struct dump *d, uint32_t c)
{
	const struct dclass *k = &d->classes[c];
	if (d->layout.new_size)
		return k->cd.instance_size;
	uint64_t size = d->layout.header;
	for (uint32_t p = 0; p < k->ninst; p++)
		size += elem_size(d, PLAN_TYPE(k->plan[p]));
	return align8(size);
}

int layout_init(struct dump *d, struct htr_err *err)
{
	(void)err;
	struct dlayout *l = &d->layout;
	memset(l, 0, sizeof *l);
	if (d->o->layout == HPROF_LAYOUT_HOTSPOT) {
		l->kind = HPROF_LAYOUT_HOTSPOT;
		l->oop = d->o->compressed_oops ? 4 : 8;
		l->header = d->o->compressed_class_pointers ? 12 : 16;
		l->array_header = d->o->compressed_class_pointers ? 16 : 24;
		l->oop_source = "option";
	} else {
		l->kind = HPROF_LAYOUT_VISUALVM;
		uint32_t obj = java_lang_object(d);
		if (obj != HPROF_NONE && d->classes[obj].cd.instance_size > 0) {
			l->new_size = 1;
			l->header = d->classes[obj].cd.instance_size;
		}
		visualvm_oop_size(d);
		if (!l->new_size)
			l->header = d->f->id_size + l->oop;
		l->array_header = l->header + 4;
	}
	for (uint32_t i = 0; i < d->nclasses; i++)
		d->classes[i].inst_size = l->kind == HPROF_LAYOUT_HOTSPOT ? hotspot_instance_size(d, i)
									  : visualvm_instance_size(d, i);
	return 0;
}

uint32_t layout_elem_size(const struct dump *d, uint32_t kind, uint32_t elem_type)
{
	if (kind == HTR_TYPE_OBJ_ARRAY)
		return d->layout.oop;
	if (kind == HTR_TYPE_PRIM_ARRAY)
		return hprof_type_size(d->f, elem_type);
	return 0;
}

/* A class object (a java.lang.Class mirror) in HotSpot is a Class instance
 * with the class's static fields stored after it
 * (InstanceMirrorKlass::instance_size: the instance, then the statics,
 * aligned to 8), primitive statics largest first, then the references.
 * The instance is what a Class instance measures in this layout (as the
 * primitive types' mirrors, dumped as instances, do); HotSpot's mirror also
 * has fields it injects and the dump does not list (klass, array_klass,
 * oop_size, static_oop_field_count, protection_domain, signers,
 * init_lock...), so it is larger than this by those (docs/hprof.md).  The
 * dumper's own pseudo statics (<resolved_references>, <init_lock>: names
 * in angle brackets, no Java field can have one) live elsewhere and are
 * not counted. */
static uint64_t class_object_size(const struct dump *d, const struct dobj *s)
{
	uint64_t size = d->class_class == HPROF_NONE ? 0 : d->classes[d->class_class].inst_size;
	uint32_t c = u64map_get(&d->class_idx, s->class_id);
	if (c == U64MAP_NONE)
		return align8(size);
	const struct dclass *k = &d->classes[c];
	uint32_t ids = d->f->id_size, len;
	uint64_t at = k->cd.statics, prim = 0, refs = 0;
	for (uint32_t j = 0; j < k->cd.nstatics; j++) {
		uint32_t t = hprof_u1(d->f, at + ids);
		const char *name = dump_utf8(d, hprof_id(d->f, at), &len);
		if (!(name && len && name[0] == '<')) {
			if (t == HPROF_T_OBJECT)
				refs++;
			else
				prim += hprof_type_size(d->f, t);
		}
		at += ids + 1 + hprof_type_size(d->f, t);
	}
	size += prim;
	if (refs)
		size = (size + 3) / 4 * 4 + refs * d->layout.oop;
	return align8(size);
}

uint64_t layout_object_size(const struct dump *d, const struct dobj *s, uint32_t c)
{
	switch (s->tag) {
	case HPROF_INSTANCE_DUMP:
		if (c != HPROF_NONE)
			return d->classes[c].inst_size;
		/* unknown class: what its values need */
		return align8(d->layout.header + s->length);
	case HPROF_OBJ_ARRAY_DUMP:
		return align8(d->layout.array_header + (uint64_t)s->length * d->layout.oop);
	case HPROF_PRIM_ARRAY_DUMP:
		return align8(d->layout.array_header + (uint64_t)s->length * hprof_type_size(d->f, s->elem_type));
	case HPROF_CLASS_DUMP:
		return class_object_size(d, s);
	default:
		return 0;
	}
}

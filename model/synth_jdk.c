/* synth_jdk.c - the JDK 17 part of the simulated heap: class declarations
 * with their real instance and static fields, and faithful models of the
 * allocation behaviour of String, HashMap, HashSet, ArrayList and LinkedList.
 */
#include "synth_world.h"

#include <errno.h>
#include <string.h>

#define REF HTR_FIELD_REF
#define STA HTR_FIELD_STATIC
#define NF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------- declarations */

static const struct sw_field_decl f_long[] = {
	{ "value", "J", 0 },
	{ "MIN_VALUE", "J", STA }, { "MAX_VALUE", "J", STA },
	{ "TYPE", "Ljava/lang/Class;", STA | REF }, { "serialVersionUID", "J", STA },
};
static const struct sw_field_decl f_integer[] = {
	{ "value", "I", 0 },
	{ "MIN_VALUE", "I", STA }, { "MAX_VALUE", "I", STA },
	{ "TYPE", "Ljava/lang/Class;", STA | REF }, { "serialVersionUID", "J", STA },
};
static const struct sw_field_decl f_string[] = {
	{ "value", "[B", REF }, { "coder", "B", 0 }, { "hash", "I", 0 }, { "hashIsZero", "Z", 0 },
	{ "serialVersionUID", "J", STA }, { "COMPACT_STRINGS", "Z", STA },
	{ "CASE_INSENSITIVE_ORDER", "Ljava/util/Comparator;", STA | REF },
	{ "LATIN1", "B", STA }, { "UTF16", "B", STA },
};
static const struct sw_field_decl f_asb[] = {
	{ "value", "[B", REF }, { "coder", "B", 0 }, { "count", "I", 0 },
	{ "EMPTYVALUE", "[B", STA | REF },
};
static const struct sw_field_decl f_sb[] = {
	{ "serialVersionUID", "J", STA },
};
static const struct sw_field_decl f_thread[] = {
	{ "name", "Ljava/lang/String;", REF }, { "priority", "I", 0 }, { "daemon", "Z", 0 },
	{ "interrupted", "Z", 0 }, { "stillborn", "Z", 0 }, { "eetop", "J", 0 },
	{ "target", "Ljava/lang/Runnable;", REF }, { "group", "Ljava/lang/ThreadGroup;", REF },
	{ "contextClassLoader", "Ljava/lang/ClassLoader;", REF },
	{ "inheritedAccessControlContext", "Ljava/security/AccessControlContext;", REF },
	{ "threadLocals", "Ljava/lang/ThreadLocal$ThreadLocalMap;", REF },
	{ "inheritableThreadLocals", "Ljava/lang/ThreadLocal$ThreadLocalMap;", REF },
	{ "stackSize", "J", 0 }, { "tid", "J", 0 }, { "threadStatus", "I", 0 },
	{ "parkBlocker", "Ljava/lang/Object;", REF }, { "blocker", "Lsun/nio/ch/Interruptible;", REF },
	{ "blockerLock", "Ljava/lang/Object;", REF },
	{ "uncaughtExceptionHandler", "Ljava/lang/Thread$UncaughtExceptionHandler;", REF },
	{ "threadLocalRandomSeed", "J", 0 }, { "threadLocalRandomProbe", "I", 0 },
	{ "threadLocalRandomSecondarySeed", "I", 0 },
	{ "threadInitNumber", "I", STA }, { "threadSeqNumber", "J", STA },
	{ "MIN_PRIORITY", "I", STA }, { "NORM_PRIORITY", "I", STA }, { "MAX_PRIORITY", "I", STA },
};
static const struct sw_field_decl f_class[] = {
	{ "cachedConstructor", "Ljava/lang/reflect/Constructor;", REF },
	{ "name", "Ljava/lang/String;", REF }, { "module", "Ljava/lang/Module;", REF },
	{ "classLoader", "Ljava/lang/ClassLoader;", REF }, { "classData", "Ljava/lang/Object;", REF },
	{ "packageName", "Ljava/lang/String;", REF }, { "componentType", "Ljava/lang/Class;", REF },
	{ "reflectionData", "Ljava/lang/ref/SoftReference;", REF },
	{ "classRedefinedCount", "I", 0 },
	{ "genericInfo", "Lsun/reflect/generics/repository/ClassRepository;", REF },
	{ "enumConstants", "[Ljava/lang/Object;", REF }, { "enumConstantDirectory", "Ljava/util/Map;", REF },
	{ "annotationData", "Ljava/lang/Class$AnnotationData;", REF },
	{ "annotationType", "Lsun/reflect/annotation/AnnotationType;", REF },
	{ "classValueMap", "Ljava/lang/ClassValue$ClassValueMap;", REF },
};
static const struct sw_field_decl f_abstractmap[] = {
	{ "keySet", "Ljava/util/Set;", REF }, { "values", "Ljava/util/Collection;", REF },
};
static const struct sw_field_decl f_hashmap[] = {
	{ "table", "[Ljava/util/HashMap$Node;", REF }, { "entrySet", "Ljava/util/Set;", REF },
	{ "size", "I", 0 }, { "modCount", "I", 0 }, { "threshold", "I", 0 }, { "loadFactor", "F", 0 },
	{ "serialVersionUID", "J", STA }, { "DEFAULT_INITIAL_CAPACITY", "I", STA },
	{ "MAXIMUM_CAPACITY", "I", STA }, { "DEFAULT_LOAD_FACTOR", "F", STA },
	{ "TREEIFY_THRESHOLD", "I", STA }, { "UNTREEIFY_THRESHOLD", "I", STA },
	{ "MIN_TREEIFY_CAPACITY", "I", STA },
};
static const struct sw_field_decl f_node[] = {
	{ "hash", "I", 0 }, { "key", "Ljava/lang/Object;", REF },
	{ "value", "Ljava/lang/Object;", REF }, { "next", "Ljava/util/HashMap$Node;", REF },
};
static const struct sw_field_decl f_hashset[] = {
	{ "map", "Ljava/util/HashMap;", REF },
	{ "serialVersionUID", "J", STA }, { "PRESENT", "Ljava/lang/Object;", STA | REF },
};
static const struct sw_field_decl f_abstractlist[] = {
	{ "modCount", "I", 0 },
};
static const struct sw_field_decl f_arraylist[] = {
	{ "elementData", "[Ljava/lang/Object;", REF }, { "size", "I", 0 },
	{ "serialVersionUID", "J", STA }, { "DEFAULT_CAPACITY", "I", STA },
	{ "EMPTY_ELEMENTDATA", "[Ljava/lang/Object;", STA | REF },
	{ "DEFAULTCAPACITY_EMPTY_ELEMENTDATA", "[Ljava/lang/Object;", STA | REF },
};
static const struct sw_field_decl f_linkedlist[] = {
	{ "size", "I", 0 }, { "first", "Ljava/util/LinkedList$Node;", REF },
	{ "last", "Ljava/util/LinkedList$Node;", REF }, { "serialVersionUID", "J", STA },
};
static const struct sw_field_decl f_llnode[] = {
	{ "item", "Ljava/lang/Object;", REF }, { "next", "Ljava/util/LinkedList$Node;", REF },
	{ "prev", "Ljava/util/LinkedList$Node;", REF },
};

#define INST(n, s, f, h) { n, s, HTR_TYPE_INSTANCE, 0, NF(f), f, h }
#define BARE(n, s) { n, s, HTR_TYPE_INSTANCE, 0, 0, NULL, 0 }
#define OARR(n) { n, "java.lang.Object", HTR_TYPE_OBJ_ARRAY, 4, 0, NULL, 0 }
#define PARR(n, e) { n, "java.lang.Object", HTR_TYPE_PRIM_ARRAY, e, 0, NULL, 0 }

const struct sw_type_decl sw_jdk_decls[] = {
	BARE("java.lang.Object", NULL),
	BARE("java.lang.Number", "java.lang.Object"),
	INST("java.lang.Long", "java.lang.Number", f_long, 0),
	INST("java.lang.Integer", "java.lang.Number", f_integer, 0),
	INST("java.lang.String", "java.lang.Object", f_string, 0),
	INST("java.lang.AbstractStringBuilder", "java.lang.Object", f_asb, 0),
	INST("java.lang.StringBuilder", "java.lang.AbstractStringBuilder", f_sb, 0),
	INST("java.lang.Thread", "java.lang.Object", f_thread, 0),
	INST("java.lang.Class", "java.lang.Object", f_class, 0),
	INST("java.util.AbstractMap", "java.lang.Object", f_abstractmap, 0),
	INST("java.util.HashMap", "java.util.AbstractMap", f_hashmap, 0),
	/* hidden word: the spread hash, which resize needs */
	INST("java.util.HashMap$Node", "java.lang.Object", f_node, 1),
	BARE("java.util.AbstractCollection", "java.lang.Object"),
	BARE("java.util.AbstractSet", "java.util.AbstractCollection"),
	INST("java.util.HashSet", "java.util.AbstractSet", f_hashset, 0),
	INST("java.util.AbstractList", "java.util.AbstractCollection", f_abstractlist, 0),
	INST("java.util.ArrayList", "java.util.AbstractList", f_arraylist, 0),
	BARE("java.util.AbstractSequentialList", "java.util.AbstractList"),
	INST("java.util.LinkedList", "java.util.AbstractSequentialList", f_linkedlist, 0),
	INST("java.util.LinkedList$Node", "java.lang.Object", f_llnode, 0),
	OARR("java.lang.Object[]"),
	OARR("java.lang.String[]"),
	OARR("java.util.HashMap$Node[]"),
	PARR("byte[]", 1),
	PARR("char[]", 2),
	PARR("int[]", 4),
	PARR("long[]", 8),
};
const uint32_t sw_jdk_ndecls = NF(sw_jdk_decls);

/* ---------------------------------------------------------------- frames */

#define FR(c, m, s, f, l) { c, m, s, f, l }

static const struct sw_frame f_concat_bytes[] = {
	FR("java.lang.StringConcatHelper", "newArray", "(J)[B", "StringConcatHelper.java", 494),
};
static const struct sw_frame f_concat_string[] = {
	FR("java.lang.StringConcatHelper", "newString", "([BJ)Ljava/lang/String;",
	   "StringConcatHelper.java", 458),
};
static const struct sw_frame f_sb_bytes[] = {
	FR("java.util.Arrays", "copyOfRange", "([BII)[B", "Arrays.java", 3822),
	FR("java.lang.StringLatin1", "newString", "([BII)Ljava/lang/String;", "StringLatin1.java", 769),
	FR("java.lang.StringBuilder", "toString", "()Ljava/lang/String;", "StringBuilder.java", 453),
};
static const struct sw_frame f_sb_string[] = {
	FR("java.lang.StringLatin1", "newString", "([BII)Ljava/lang/String;", "StringLatin1.java", 769),
	FR("java.lang.StringBuilder", "toString", "()Ljava/lang/String;", "StringBuilder.java", 453),
};

#define HM_PUT FR("java.util.HashMap", "put", \
	"(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;", "HashMap.java", 610)
#define HM_PUTVAL(l) FR("java.util.HashMap", "putVal", \
	"(ILjava/lang/Object;Ljava/lang/Object;ZZ)Ljava/lang/Object;", "HashMap.java", l)
#define HM_NEWNODE FR("java.util.HashMap", "newNode", \
	"(ILjava/lang/Object;Ljava/lang/Object;Ljava/util/HashMap$Node;)Ljava/util/HashMap$Node;", \
	"HashMap.java", 1812)
#define HM_RESIZE FR("java.util.HashMap", "resize", "()[Ljava/util/HashMap$Node;", "HashMap.java", 705)

static const struct sw_frame f_hm_node_empty[] = { HM_NEWNODE, HM_PUTVAL(629), HM_PUT };
static const struct sw_frame f_hm_node_chain[] = { HM_NEWNODE, HM_PUTVAL(642), HM_PUT };
static const struct sw_frame f_hm_table_first[] = { HM_RESIZE, HM_PUTVAL(627), HM_PUT };
static const struct sw_frame f_hm_table_grow[] = { HM_RESIZE, HM_PUTVAL(662), HM_PUT };

static const struct sw_frame f_hashset_init[] = {
	FR("java.util.HashSet", "<init>", "()V", "HashSet.java", 110),
};
static const struct sw_frame f_hashset_add[] = {
	FR("java.util.HashSet", "add", "(Ljava/lang/Object;)Z", "HashSet.java", 221),
};

#define AL_GROW_I(l) FR("java.util.ArrayList", "grow", "(I)[Ljava/lang/Object;", "ArrayList.java", l)
#define AL_GROW FR("java.util.ArrayList", "grow", "()[Ljava/lang/Object;", "ArrayList.java", 244)
#define AL_ADD3 FR("java.util.ArrayList", "add", "(Ljava/lang/Object;[Ljava/lang/Object;I)V", \
	"ArrayList.java", 454)
#define AL_ADD FR("java.util.ArrayList", "add", "(Ljava/lang/Object;)Z", "ArrayList.java", 467)
static const struct sw_frame f_al_first[] = { AL_GROW_I(239), AL_GROW, AL_ADD3, AL_ADD };
static const struct sw_frame f_al_grow[] = {
	FR("java.util.Arrays", "copyOf", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;",
	   "Arrays.java", 3513),
	FR("java.util.Arrays", "copyOf", "([Ljava/lang/Object;I)[Ljava/lang/Object;", "Arrays.java", 3482),
	AL_GROW_I(237), AL_GROW, AL_ADD3, AL_ADD,
};

static const struct sw_frame f_ll_node[] = {
	FR("java.util.LinkedList", "linkLast", "(Ljava/lang/Object;)V", "LinkedList.java", 144),
	FR("java.util.LinkedList", "add", "(Ljava/lang/Object;)Z", "LinkedList.java", 342),
};

/* ---------------------------------------------------------------- hashes */

int32_t sw_java_string_hash(const char *latin1)
{
	uint32_t h = 0;
	for (const unsigned char *p = (const unsigned char *)latin1; *p; p++)
		h = 31 * h + *p;
	return (int32_t)h;
}

int32_t sw_java_long_hash(int64_t v)
{
	uint64_t u = (uint64_t)v;
	return (int32_t)(uint32_t)(u ^ (u >> 32));
}

uint32_t sw_hashmap_spread(int32_t h)
{
	uint32_t u = (uint32_t)h;
	return u ^ (u >> 16);
}

/* --------------------------------------------------------------- strings */

void sw_strings_init(struct sw *w, struct sw_strings *s, enum sw_string_origin origin,
		     const struct sw_frame *callers, uint32_t n)
{
	s->t_string = sw_type(w, "java.lang.String");
	s->t_bytes = sw_type(w, "byte[]");
	s->s_value = sw_slot(w, s->t_string, "value");
	if (origin == SW_STRING_BUILDER) {
		s->site_bytes = sw_site(w, f_sb_bytes, NF(f_sb_bytes), callers, n);
		s->site_string = sw_site(w, f_sb_string, NF(f_sb_string), callers, n);
	} else {
		s->site_bytes = sw_site(w, f_concat_bytes, NF(f_concat_bytes), callers, n);
		s->site_string = sw_site(w, f_concat_string, NF(f_concat_string), callers, n);
	}
}

uint32_t sw_string(struct sw *w, const struct sw_strings *s, const char *latin1, uint64_t thread,
		   int32_t *hash)
{
	uint32_t bytes = sw_new_array(w, s->t_bytes, (uint32_t)strlen(latin1), s->site_bytes, thread);
	uint32_t str = sw_new(w, s->t_string, s->site_string, thread);
	sw_put(w, str, s->s_value, bytes);
	if (hash)
		*hash = sw_java_string_hash(latin1);
	return str;
}

/* --------------------------------------------------------------- HashMap */

void sw_hashmap_kind_init(struct sw *w, struct sw_hashmap_kind *k,
			  const struct sw_frame *put_callers, uint32_t n)
{
	k->t_map = sw_type(w, "java.util.HashMap");
	k->t_node = sw_type(w, "java.util.HashMap$Node");
	k->t_table = sw_type(w, "java.util.HashMap$Node[]");
	k->s_table = sw_slot(w, k->t_map, "table");
	k->s_key = sw_slot(w, k->t_node, "key");
	k->s_value = sw_slot(w, k->t_node, "value");
	k->s_next = sw_slot(w, k->t_node, "next");
	k->s_hash = sw_hidden(w, k->t_node, 0);
	k->site_node_empty = sw_site(w, f_hm_node_empty, NF(f_hm_node_empty), put_callers, n);
	k->site_node_chain = sw_site(w, f_hm_node_chain, NF(f_hm_node_chain), put_callers, n);
	k->site_table_first = sw_site(w, f_hm_table_first, NF(f_hm_table_first), put_callers, n);
	k->site_table_grow = sw_site(w, f_hm_table_grow, NF(f_hm_table_grow), put_callers, n);
}

uint32_t sw_hashmap_new(struct sw *w, struct sw_hashmap *m, const struct sw_hashmap_kind *k,
			uint32_t site, uint64_t thread)
{
	memset(m, 0, sizeof(*m));
	m->k = k;
	m->obj = sw_new(w, k->t_map, site, thread);
	return m->obj;
}

/* Splits bucket chain e of the old table into the new one, keeping order. */
static void split_chain(struct sw *w, const struct sw_hashmap_kind *k, uint32_t e,
			uint32_t newtab, uint32_t j, uint32_t oldcap)
{
	uint32_t lo_head = 0, lo_tail = 0, hi_head = 0, hi_tail = 0;
	while (e) {
		uint32_t next = sw_get(w, e, k->s_next);
		if ((sw_get(w, e, k->s_hash) & oldcap) == 0) {
			if (lo_tail)
				sw_put(w, lo_tail, k->s_next, e);
			else
				lo_head = e;
			lo_tail = e;
		} else {
			if (hi_tail)
				sw_put(w, hi_tail, k->s_next, e);
			else
				hi_head = e;
			hi_tail = e;
		}
		e = next;
	}
	if (lo_tail) {
		sw_put(w, lo_tail, k->s_next, 0);
		sw_aput(w, newtab, j, lo_head);
	}
	if (hi_tail) {
		sw_put(w, hi_tail, k->s_next, 0);
		sw_aput(w, newtab, j + oldcap, hi_head);
	}
}

static void hashmap_resize(struct sw *w, struct sw_hashmap *m, uint32_t site, uint64_t thread)
{
	const struct sw_hashmap_kind *k = m->k;
	uint32_t oldcap = m->cap, newcap = oldcap ? oldcap * 2 : 16;
	if (newcap > (1u << 30)) {
		sw_fail(w, -E2BIG, "HashMap over 2^30 buckets");
		return;
	}
	uint32_t old = sw_get(w, m->obj, k->s_table);
	uint32_t nt = sw_new_array(w, k->t_table, newcap, site, thread);
	if (!nt)
		return;
	for (uint32_t j = 0; j < oldcap; j++) {
		uint32_t e = sw_aget(w, old, j);
		if (!e)
			continue;
		sw_aput(w, old, j, 0); /* oldTab[j] = null, as the JDK does */
		if (!sw_get(w, e, k->s_next))
			sw_aput(w, nt, sw_get(w, e, k->s_hash) & (newcap - 1), e);
		else
			split_chain(w, k, e, nt, j, oldcap);
	}
	sw_put(w, m->obj, k->s_table, nt);
	m->cap = newcap;
	m->threshold = newcap / 4 * 3;
}

uint32_t sw_hashmap_put(struct sw *w, struct sw_hashmap *m, uint32_t key, int32_t hash,
			uint32_t value, uint64_t thread)
{
	const struct sw_hashmap_kind *k = m->k;
	uint32_t h = sw_hashmap_spread(hash);
	if (!m->cap)
		hashmap_resize(w, m, k->site_table_first, thread);
	if (w->err)
		return 0;
	uint32_t tab = sw_get(w, m->obj, k->s_table);
	uint32_t i = h & (m->cap - 1);
	uint32_t p = sw_aget(w, tab, i), node;
	if (!p) {
		node = sw_new(w, k->t_node, k->site_node_empty, thread);
		sw_aput(w, tab, i, node);
	} else {
		for (uint32_t q; (q = sw_get(w, p, k->s_next));)
			p = q;
		node = sw_new(w, k->t_node, k->site_node_chain, thread);
		sw_put(w, p, k->s_next, node);
	}
	if (!node)
		return 0;
	sw_put(w, node, k->s_key, key);
	sw_put(w, node, k->s_value, value);
	sw_put(w, node, k->s_hash, h);
	if (++m->size > m->threshold)
		hashmap_resize(w, m, k->site_table_grow, thread);
	return node;
}

uint32_t sw_hashmap_capacity_for(uint64_t n)
{
	if (!n)
		return 0;
	uint64_t cap = 16;
	while (n > cap / 4 * 3)
		cap *= 2;
	return (uint32_t)cap;
}

/* --------------------------------------------------------------- HashSet */

void sw_hashset_kind_init(struct sw *w, struct sw_hashset_kind *k, uint32_t present,
			  const struct sw_frame *ctor_callers, uint32_t nc,
			  const struct sw_frame *add_callers, uint32_t na)
{
	struct sw_frame put_callers[32];
	if (na + 1 > 32) {
		sw_fail(w, -EINVAL, "internal: HashSet.add callers too deep");
		return;
	}
	put_callers[0] = f_hashset_add[0];
	memcpy(put_callers + 1, add_callers, na * sizeof(*add_callers));
	sw_hashmap_kind_init(w, &k->map, put_callers, na + 1);
	k->t_set = sw_type(w, "java.util.HashSet");
	k->s_map = sw_slot(w, k->t_set, "map");
	k->site_set = sw_site(w, ctor_callers, nc, NULL, 0);
	k->site_map = sw_site(w, f_hashset_init, NF(f_hashset_init), ctor_callers, nc);
	k->present = present;
}

uint32_t sw_hashset_new(struct sw *w, struct sw_hashset *s, const struct sw_hashset_kind *k,
			uint64_t thread)
{
	memset(s, 0, sizeof(*s));
	s->k = k;
	s->obj = sw_new(w, k->t_set, k->site_set, thread);
	sw_hashmap_new(w, &s->map, &k->map, k->site_map, thread);
	sw_put(w, s->obj, k->s_map, s->map.obj);
	return s->obj;
}

void sw_hashset_add(struct sw *w, struct sw_hashset *s, uint32_t e, int32_t hash, uint64_t thread)
{
	sw_hashmap_put(w, &s->map, e, hash, s->k->present, thread);
}

/* ------------------------------------------------------------- ArrayList */

void sw_arraylist_kind_init(struct sw *w, struct sw_arraylist_kind *k,
			    const struct sw_frame *add_callers, uint32_t n)
{
	k->t_list = sw_type(w, "java.util.ArrayList");
	k->t_array = sw_type(w, "java.lang.Object[]");
	k->s_data = sw_slot(w, k->t_list, "elementData");
	k->site_first = sw_site(w, f_al_first, NF(f_al_first), add_callers, n);
	k->site_grow = sw_site(w, f_al_grow, NF(f_al_grow), add_callers, n);
}

uint32_t sw_arraylist_new(struct sw *w, struct sw_arraylist *l, const struct sw_arraylist_kind *k,
			  uint32_t site, uint64_t thread)
{
	memset(l, 0, sizeof(*l));
	l->k = k;
	l->obj = sw_new(w, k->t_list, site, thread);
	return l->obj;
}

static uint32_t arraylist_next_cap(uint32_t cap)
{
	return cap ? cap + (cap >> 1) : 10;
}

void sw_arraylist_add(struct sw *w, struct sw_arraylist *l, uint32_t e, uint64_t thread)
{
	const struct sw_arraylist_kind *k = l->k;
	if (l->size == l->cap) {
		uint32_t ncap = arraylist_next_cap(l->cap);
		uint32_t old = sw_get(w, l->obj, k->s_data);
		uint32_t arr = sw_new_array(w, k->t_array, ncap, l->cap ? k->site_grow : k->site_first,
					    thread);
		if (!arr)
			return;
		for (uint32_t i = 0; i < l->size; i++)
			sw_aput(w, arr, i, sw_aget(w, old, i));
		sw_put(w, l->obj, k->s_data, arr);
		l->cap = ncap;
	}
	sw_aput(w, sw_get(w, l->obj, k->s_data), l->size++, e);
}

uint32_t sw_arraylist_capacity_for(uint64_t n)
{
	uint64_t cap = 0;
	while (cap < n)
		cap = arraylist_next_cap((uint32_t)cap);
	return (uint32_t)cap;
}

/* ------------------------------------------------------------ LinkedList */

void sw_linkedlist_kind_init(struct sw *w, struct sw_linkedlist_kind *k,
			     const struct sw_frame *add_callers, uint32_t n)
{
	k->t_list = sw_type(w, "java.util.LinkedList");
	k->t_node = sw_type(w, "java.util.LinkedList$Node");
	k->s_first = sw_slot(w, k->t_list, "first");
	k->s_last = sw_slot(w, k->t_list, "last");
	k->s_item = sw_slot(w, k->t_node, "item");
	k->s_next = sw_slot(w, k->t_node, "next");
	k->s_prev = sw_slot(w, k->t_node, "prev");
	k->site_node = sw_site(w, f_ll_node, NF(f_ll_node), add_callers, n);
}

uint32_t sw_linkedlist_new(struct sw *w, struct sw_linkedlist *l,
			   const struct sw_linkedlist_kind *k, uint32_t site, uint64_t thread)
{
	memset(l, 0, sizeof(*l));
	l->k = k;
	l->obj = sw_new(w, k->t_list, site, thread);
	return l->obj;
}

void sw_linkedlist_add(struct sw *w, struct sw_linkedlist *l, uint32_t e, uint64_t thread)
{
	const struct sw_linkedlist_kind *k = l->k;
	uint32_t last = sw_get(w, l->obj, k->s_last);
	uint32_t node = sw_new(w, k->t_node, k->site_node, thread);
	if (!node)
		return;
	sw_put(w, node, k->s_item, e);
	sw_put(w, node, k->s_prev, last);
	sw_put(w, l->obj, k->s_last, node);
	if (last)
		sw_put(w, last, k->s_next, node);
	else
		sw_put(w, l->obj, k->s_first, node);
	l->size++;
}

uint32_t sw_linkedlist_remove_first(struct sw *w, struct sw_linkedlist *l)
{
	const struct sw_linkedlist_kind *k = l->k;
	uint32_t f = sw_get(w, l->obj, k->s_first);
	if (!f)
		return 0;
	uint32_t item = sw_get(w, f, k->s_item), next = sw_get(w, f, k->s_next);
	sw_put(w, f, k->s_item, 0);
	sw_put(w, f, k->s_next, 0);
	sw_put(w, l->obj, k->s_first, next);
	if (next)
		sw_put(w, next, k->s_prev, 0);
	else
		sw_put(w, l->obj, k->s_last, 0);
	l->size--;
	return item;
}

void sw_linkedlist_clear(struct sw *w, struct sw_linkedlist *l)
{
	const struct sw_linkedlist_kind *k = l->k;
	for (uint32_t x = sw_get(w, l->obj, k->s_first); x;) {
		uint32_t next = sw_get(w, x, k->s_next);
		sw_put(w, x, k->s_item, 0);
		sw_put(w, x, k->s_next, 0);
		sw_put(w, x, k->s_prev, 0);
		x = next;
	}
	sw_put(w, l->obj, k->s_first, 0);
	sw_put(w, l->obj, k->s_last, 0);
	l->size = 0;
}

/* -------------------------------------------------------------- baseline */

void sw_baseline(struct sw *w, struct sw_baseline *b, const char *const *names, uint32_t n,
		 const struct sw_frame *main_method, uint32_t main_depth)
{
	memset(b, 0, sizeof(*b));
	if (n == 0 || n > sizeof(b->thread_obj) / sizeof(b->thread_obj[0])) {
		sw_fail(w, -EINVAL, "internal: %u threads", n);
		return;
	}
	uint32_t t_thread = sw_type(w, "java.lang.Thread");
	uint32_t t_string = sw_type(w, "java.lang.String");
	uint32_t t_bytes = sw_type(w, "byte[]");
	uint32_t t_class = sw_type(w, "java.lang.Class");
	uint32_t t_object = sw_type(w, "java.lang.Object");
	uint32_t t_args = sw_type(w, "java.lang.String[]");
	uint32_t s_name = sw_slot(w, t_thread, "name");
	uint32_t s_value = sw_slot(w, t_string, "value");
	for (uint32_t i = 0; i < n; i++)
		b->thread_id[i] = sw_thread(w, names[i]);
	b->nthreads = n;
	uint64_t main = b->thread_id[0];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bytes = sw_new_preexisting(w, t_bytes, (int64_t)strlen(names[i]), main);
		uint32_t str = sw_new_preexisting(w, t_string, -1, main);
		uint32_t th = sw_new_preexisting(w, t_thread, -1, main);
		sw_put(w, str, s_value, bytes);
		sw_put(w, th, s_name, str);
		b->thread_obj[i] = th;
		struct htr_root r = { .kind = HTR_ROOT_THREAD, .object = th, .thread = b->thread_id[i] };
		sw_root_add(w, &r);
	}
	for (uint32_t i = 0; i < SW_BASELINE_CLASSES; i++) {
		struct htr_root r = { .kind = HTR_ROOT_SYSTEM_CLASS,
				      .object = sw_new_preexisting(w, t_class, -1, main) };
		sw_root_add(w, &r);
	}
	struct htr_root jni = { .kind = HTR_ROOT_JNI_GLOBAL,
				.object = sw_new_preexisting(w, t_object, -1, main) };
	sw_root_add(w, &jni);
	b->args = sw_new_preexisting(w, t_args, 0, main);
	struct htr_root a = { .kind = HTR_ROOT_LOCAL, .object = b->args, .thread = main,
			      .method = sw_method(w, main_method), .depth = main_depth, .slot = 0 };
	sw_root_add(w, &a);
}

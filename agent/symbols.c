/* symbols.c - types, methods and allocation sites of the recorded JVM.
 *
 * Application threads register symbols (under the tables' mutex) the first
 * time they meet them; the agent thread writes each one to the trace once,
 * before the first event that needs it.  Symbols live until the process exits (never
 * freed: the JVM unloads few classes, and an id is never reused).
 *
 * Field lists: ours are "instance fields, inherited first (from
 * java.lang.Object down), then the class's own statics" (trace format).
 * JVMTI numbers fields in heap-walk references differently (the JVMTI
 * spec, jvmtiHeapReferenceInfoField; HotSpot's ClassFieldMap in
 * jvmtiTagMap.cpp): for a class, every class's own fields (static and
 * instance, in GetClassFields order) from java.lang.Object down, numbered
 * from n, the count of the fields of all interfaces the class implements
 * (those of its superclasses too, and their superinterfaces); for an
 * interface, its own fields numbered from the count of its
 * superinterfaces' fields.  Each type keeps the map from the JVMTI index
 * to our slot.  A type registered before its class is prepared (JVMTI
 * gives no fields until then) gets its lists at the preparation.
 */
#include "agent/symbols.h"

#include "agent/agent_opts.h"

#include <pthread.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#define TYPE_MIRROR_PENDING (HTR_NO_TYPE - 1) /* mirror record before Class was known */

struct atype {
	char *name;
	uint32_t kind, elem_size, inst_size, super_id;
	uint32_t nfields, ninst;        /* fields[0..ninst) instance, then statics */
	struct htr_field *fields;       /* names/sigs owned (strdup) */
	uint32_t iface_fields;          /* JVMTI: fields of all interfaces */
	uint32_t nchain;                /* JVMTI: own fields of Object..this */
	int32_t *chain_slot;            /* [nchain] our slot, -1 for statics */
	uint32_t own_base;              /* index into chain of this class's own fields */
	int32_t *own_static_slot;       /* [nchain - own_base] slot of own fields (statics too) */
	int fields_pending;             /* class not prepared yet: no field lists */
	int written;
};

struct tagmap {                  /* classes tagged with an object id */
	uint64_t tag;
	uint32_t type;
	UT_hash_handle hh;
};

struct amethod {
	jmethodID key;
	uint32_t id;
	char *cls, *name, *sig, *file;
	jint nlines;
	jvmtiLineNumberEntry *lines;  /* JVMTI-allocated */
	int written;
	UT_hash_handle hh;
};

struct asite {
	uint32_t nframes;
	struct htr_site_frame *frames;
	int written;
};

struct sitekey {                 /* raw frames or canonical frames -> site */
	void *key;
	size_t keylen;
	uint32_t site;
	UT_hash_handle hh;
};

/* The tables (symbols.h).  Every field under mu but type_kind, which is
 * written under mu before the type id is handed out and read lock-free, and
 * class_type, written under mu and read with relaxed atomics. */
struct symbols {
	pthread_mutex_t mu;
	struct atype *types;                 /* [ntypes], owned */
	uint32_t ntypes, types_cap;
	uint8_t type_kind[MAX_TYPES];        /* lock-free reads */
	struct tagmap *tagmap;               /* owned entries */
	struct amethod *methods_by_key;      /* the entries of methods */
	struct amethod **methods;            /* [nmethods], owned entries */
	uint32_t nmethods, methods_cap;
	struct asite *sites;                 /* [nsites], owned */
	uint32_t nsites, sites_cap;
	struct sitekey *raw_sites, *canon_sites; /* owned entries and keys */
	uint32_t class_type;                 /* type id of java.lang.Class */
	int no_fields;                       /* set up: types without field lists */
};

int sym_new(struct symbols **out)
{
	struct symbols *sym = calloc(1, sizeof(*sym));
	if (!sym)
		return -ENOMEM;
	pthread_mutex_init(&sym->mu, NULL);
	sym->class_type = HTR_NO_TYPE;
	*out = sym;
	return 0;
}

void sym_without_fields(struct symbols *sym)
{
	sym->no_fields = 1;
}

void sym_stats(struct symbols *sym, uint32_t *nt, uint32_t *nm, uint32_t *ns)
{
	pthread_mutex_lock(&sym->mu);
	*nt = sym->ntypes;
	*nm = sym->nmethods;
	*ns = sym->nsites;
	pthread_mutex_unlock(&sym->mu);
}

uint32_t sym_type_kind(const struct symbols *sym, uint32_t type)
{
	return type < MAX_TYPES ? sym->type_kind[type] : HTR_TYPE_INSTANCE;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]". */
static char *java_name(const char *sig)
{
	size_t dims = 0;
	while (sig[dims] == '[')
		dims++;
	const char *b = sig + dims;
	static const struct { char c; const char *n; } prim[] = {
		{ 'Z', "boolean" }, { 'B', "byte" }, { 'C', "char" }, { 'S', "short" },
		{ 'I', "int" }, { 'J', "long" }, { 'F', "float" }, { 'D', "double" }, { 'V', "void" },
	};
	const char *base = NULL;
	size_t blen = 0;
	if (*b == 'L') {
		base = b + 1;
		blen = strlen(base);
		if (blen && base[blen - 1] == ';')
			blen--;
	} else {
		for (size_t i = 0; i < sizeof(prim) / sizeof(prim[0]); i++)
			if (prim[i].c == *b)
				base = prim[i].n;
		if (!base)
			base = b;
		blen = strlen(base);
	}
	char *s = malloc(blen + 2 * dims + 1);
	if (!s)
		return NULL;
	/* a hidden class's signature has '.' before its suffix
	 * (LFoo$$Lambda$12.0x...;), where no other signature has one: written
	 * with '+', as HotSpot's heap dumper spells it (Foo$$Lambda$12+0x...) */
	for (size_t i = 0; i < blen; i++)
		s[i] = base[i] == '/' ? '.' : base[i] == '.' ? '+' : base[i];
	for (size_t i = 0; i < dims; i++)
		memcpy(s + blen + 2 * i, "[]", 2);
	s[blen + 2 * dims] = 0;
	return s;
}

static uint32_t prim_size(char c)
{
	switch (c) {
	case 'Z': case 'B': return 1;
	case 'C': case 'S': return 2;
	case 'I': case 'F': return 4;
	case 'J': case 'D': return 8;
	default: return 4; /* references: compressed oops */
	}
}

/* Type of a class already registered, or HTR_NO_TYPE.  the mutex held. */
static uint32_t lookup_locked(struct symbols *sym, jvmtiEnv *jvmti, jclass k, uint64_t *tag_out)
{
	jlong t = 0;
	if ((*jvmti)->GetTag(jvmti, k, &t) != JVMTI_ERROR_NONE)
		t = 0;
	*tag_out = (uint64_t)t;
	if (t > 0 && (uint64_t)t <= CLASS_TAG_MAX)
		return (uint32_t)(t - 1);
	if (t) {
		struct tagmap *m = NULL;
		uint64_t key = (uint64_t)t;
		HASH_FIND(hh, sym->tagmap, &key, sizeof(key), m);
		if (m)
			return m->type;
	}
	return HTR_NO_TYPE;
}

uint32_t sym_type_of_tag(struct symbols *sym, uint64_t class_tag)
{
	if (class_tag > 0 && class_tag <= CLASS_TAG_MAX)
		return (uint32_t)(class_tag - 1);
	if (!class_tag)
		return HTR_NO_TYPE;
	struct tagmap *m = NULL;
	pthread_mutex_lock(&sym->mu);
	HASH_FIND(hh, sym->tagmap, &class_tag, sizeof(class_tag), m);
	uint32_t t = m ? m->type : HTR_NO_TYPE;
	pthread_mutex_unlock(&sym->mu);
	return t;
}

/* A growable array of local references. */
struct classes {
	jclass *k;
	size_t n, cap;
};

static int classes_push(struct classes *c, jclass k)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		jclass *p = realloc(c->k, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->k = p;
		c->cap = cap;
	}
	c->k[c->n++] = k;
	return 0;
}

/* Pushes the interfaces c declares (GetImplementedInterfaces: its direct
 * superinterfaces, for an interface). */
static int push_interfaces(jvmtiEnv *jvmti, jclass c, struct classes *to)
{
	jint n = 0;
	jclass *ifs = NULL;
	if ((*jvmti)->GetImplementedInterfaces(jvmti, c, &n, &ifs) != JVMTI_ERROR_NONE)
		return -EIO;
	int rc = 0;
	for (jint i = 0; i < n && !rc; i++)
		rc = classes_push(to, ifs[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)ifs);
	return rc;
}

/* *total: number of fields (static or not) declared by all interfaces k
 * implements, each interface counted once: those of k and of its
 * superclasses and, transitively, their superinterfaces (for an interface
 * k: its superinterfaces, transitively).  The JVMTI rule (spec,
 * jvmtiHeapReferenceInfoField) numbers k's fields from there.  0 or a
 * negative errno: a JVMTI call failed, so the count is not known. */
static int interface_fields(jvmtiEnv *jvmti, JNIEnv *jni, jclass k, uint32_t *total)
{
	struct classes todo = { 0 }, seen = { 0 };
	int rc = 0;
	*total = 0;
	/* the superclass chain is finite: a class cannot be its own superclass */
	for (jclass c = k; c && !rc; c = (*jni)->GetSuperclass(jni, c))
		rc = push_interfaces(jvmti, c, &todo);
	/* interfaces form a DAG: the seen list makes each one count once */
	while (todo.n && !rc) {
		jclass i = todo.k[--todo.n];
		int dup = 0;
		for (size_t s = 0; s < seen.n && !dup; s++)
			dup = (*jni)->IsSameObject(jni, seen.k[s], i);
		if (dup)
			continue;
		rc = classes_push(&seen, i);
		jint nf = 0;
		jfieldID *f = NULL;
		if (!rc && (*jvmti)->GetClassFields(jvmti, i, &nf, &f) != JVMTI_ERROR_NONE)
			rc = -EIO;
		if (!rc) {
			*total += (uint32_t)nf;
			(*jvmti)->Deallocate(jvmti, (unsigned char *)f);
			rc = push_interfaces(jvmti, i, &todo);
		}
	}
	free(todo.k);
	free(seen.k);
	return rc;
}

/* Fills t's field list and JVMTI maps from the class's own fields and the
 * (registered) superclass.  the mutex held. */
static int build_fields(struct symbols *sym, jvmtiEnv *jvmti, JNIEnv *jni, jclass k, struct atype *t)
{
	const struct atype *sup = t->super_id != HTR_NO_TYPE ? &sym->types[t->super_id] : NULL;
	jint nf = 0;
	jfieldID *f = NULL;
	/* a class's fields are known once it is prepared (register_one); no
	 * list rather than an empty one, whose JVMTI indexes would be wrong */
	if ((*jvmti)->GetClassFields(jvmti, k, &nf, &f) != JVMTI_ERROR_NONE)
		return -EIO;
	uint32_t sup_inst = sup ? sup->ninst : 0, sup_chain = sup ? sup->nchain : 0;
	uint32_t own_inst = 0, own_static = 0;
	uint8_t *is_static = calloc((size_t)nf + 1, 1);
	char **names = calloc((size_t)nf + 1, sizeof(char *)), **sigs = calloc((size_t)nf + 1, sizeof(char *));
	t->fields = calloc((size_t)sup_inst + (size_t)nf + 1, sizeof(struct htr_field));
	t->chain_slot = calloc((size_t)sup_chain + (size_t)nf + 1, sizeof(int32_t));
	t->own_static_slot = calloc((size_t)nf + 1, sizeof(int32_t));
	int rc = -ENOMEM;
	if (!is_static || !names || !sigs || !t->fields || !t->chain_slot || !t->own_static_slot)
		goto out;
	for (jint i = 0; i < nf; i++) {
		jint mod = 0;
		char *n = NULL, *s = NULL;
		(*jvmti)->GetFieldModifiers(jvmti, k, f[i], &mod);
		is_static[i] = (mod & 0x0008) != 0;
		if ((*jvmti)->GetFieldName(jvmti, k, f[i], &n, &s, NULL) == JVMTI_ERROR_NONE) {
			names[i] = strdup(n);
			sigs[i] = strdup(s);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)n);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)s);
		}
		if (!names[i] || !sigs[i])
			goto out;
		if (is_static[i])
			own_static++;
		else
			own_inst++;
	}
	/* our list: inherited instance fields, own instance fields, own statics */
	uint32_t nfields = 0;
	for (uint32_t i = 0; i < sup_inst; i++)
		t->fields[nfields++] = sup->fields[i];
	t->ninst = sup_inst + own_inst;
	uint32_t next_inst = sup_inst, next_static = t->ninst;
	if (sup_chain)
		memcpy(t->chain_slot, sup->chain_slot, sup_chain * sizeof(int32_t));
	for (jint i = 0; i < nf; i++) {
		uint32_t slot = is_static[i] ? next_static++ : next_inst++;
		struct htr_field *fl = &t->fields[slot];
		fl->name = names[i];
		fl->sig = sigs[i];
		fl->flags = (is_static[i] ? HTR_FIELD_STATIC : 0) |
			    (sigs[i][0] == 'L' || sigs[i][0] == '[' ? HTR_FIELD_REF : 0);
		names[i] = sigs[i] = NULL;
		t->chain_slot[sup_chain + (uint32_t)i] = is_static[i] ? -1 : (int32_t)slot;
		t->own_static_slot[i] = (int32_t)slot;
	}
	t->nfields = t->ninst + own_static;
	t->nchain = sup_chain + (uint32_t)nf;
	t->own_base = sup_chain;
	rc = interface_fields(jvmti, jni, k, &t->iface_fields);
out:
	if (rc) {
		/* the type is not registered: its slot is reused */
		for (uint32_t i = sup_inst; t->fields && i < sup_inst + (uint32_t)nf; i++) {
			free((char *)t->fields[i].name);
			free((char *)t->fields[i].sig);
		}
		free(t->fields);
		free(t->chain_slot);
		free(t->own_static_slot);
		t->fields = NULL;
		t->chain_slot = t->own_static_slot = NULL;
	}
	for (jint i = 0; names && sigs && i < nf; i++) {
		free(names[i]);
		free(sigs[i]);
	}
	free(names);
	free(sigs);
	free(is_static);
	if (f)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)f);
	return rc;
}

/* Whether JVMTI gives k's fields and interfaces (GetClassFields and
 * GetImplementedInterfaces need a prepared class). */
static int class_prepared(jvmtiEnv *jvmti, jclass k)
{
	jint status = 0;
	return (*jvmti)->GetClassStatus(jvmti, k, &status) == JVMTI_ERROR_NONE &&
	       (status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE));
}

/* Builds the field lists of k's type (registered before k was prepared)
 * and of the superclasses still without theirs, top down: a list starts
 * with the superclass's.  The mutex held, in a local frame.  0; -EAGAIN: k
 * is not prepared yet (lists still pending); or another negative errno. */
static int complete_fields(struct symbols *sym, jvmtiEnv *jvmti, JNIEnv *jni, jclass k, uint32_t type)
{
	/* the pending part of the chain: a pending class's superclass is
	 * registered (register_one goes top down), pending or not */
	jclass chain[256];
	uint32_t types[256], n = 0;
	for (;;) {
		if (n == 256)
			return -E2BIG;
		chain[n] = k;
		types[n++] = type;
		jclass s = (*jni)->GetSuperclass(jni, k);
		uint64_t tag = 0;
		type = s ? lookup_locked(sym, jvmti, s, &tag) : HTR_NO_TYPE;
		if (type == HTR_NO_TYPE || !sym->types[type].fields_pending)
			break;
		k = s;
	}
	/* a class is prepared after its superclasses: top down, the first
	 * one not prepared leaves it and the rest pending */
	while (n-- > 0) {
		if (!class_prepared(jvmti, chain[n]))
			return -EAGAIN;
		int rc = build_fields(sym, jvmti, jni, chain[n], &sym->types[types[n]]);
		if (rc)
			return rc;
		sym->types[types[n]].fields_pending = 0;
	}
	return 0;
}

/* Registers one class whose superclass (if any) is registered.  The mutex
 * held; the mirror tagged goes to mirror(ctx, ...). */
static uint32_t register_one(struct symbols *sym, jvmtiEnv *jvmti, JNIEnv *jni, jclass k, uint32_t super_id,
			     uint64_t tag, sym_mirror_fn *mirror, void *ctx)
{
	char *sig = NULL;
	if (sym->ntypes >= MAX_TYPES || grow((void **)&sym->types, &sym->types_cap, sym->ntypes + 1, sizeof(*sym->types)) ||
	    (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return HTR_NO_TYPE;
	uint32_t id = sym->ntypes;
	struct atype *t = &sym->types[id];
	memset(t, 0, sizeof(*t));
	t->name = java_name(sig);
	t->super_id = super_id;
	if (sig[0] == '[') {
		t->kind = sig[1] == 'L' || sig[1] == '[' ? HTR_TYPE_OBJ_ARRAY : HTR_TYPE_PRIM_ARRAY;
		t->elem_size = prim_size(sig[1]);
		t->inst_size = 16;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	/* A class loaded but not yet prepared (at VMInit, CDS leaves ~1,000
	 * such, java.util.concurrent.locks.ReentrantLock among them) has no
	 * fields or interfaces JVMTI will give: its lists wait for its
	 * preparation (complete_fields).  Lists made of nothing would number
	 * the fields of every subclass wrongly for good: Guava's
	 * LocalCache$Segment, a ReentrantLock, had its names two slots off. */
	if (!t->name)
		return HTR_NO_TYPE;
	if (t->kind == HTR_TYPE_INSTANCE && !sym->no_fields) {
		if (!class_prepared(jvmti, k) || (super_id != HTR_NO_TYPE && sym->types[super_id].fields_pending)) {
			t->fields_pending = 1;
		} else if (build_fields(sym, jvmti, jni, k, t)) {
			free(t->name);
			return HTR_NO_TYPE;
		}
	}
	sym->ntypes++;
	sym->type_kind[id] = (uint8_t)t->kind;
	if (!strcmp(t->name, "java.lang.Class"))
		__atomic_store_n(&sym->class_type, id, __ATOMIC_RELAXED);
	if (tag) {
		/* tagged as a plain object before (a heap walk met the mirror
		 * first): keep that id, remember its type */
		struct tagmap *m = malloc(sizeof(*m));
		if (m) {
			m->tag = tag;
			m->type = id;
			HASH_ADD(hh, sym->tagmap, tag, sizeof(m->tag), m);
		}
		return id;
	}
	if ((*jvmti)->SetTag(jvmti, k, (jlong)id + 1) != JVMTI_ERROR_NONE)
		return id;
	jlong size = 0;
	(*jvmti)->GetObjectSize(jvmti, k, &size);
	if (mirror)
		mirror(ctx, (uint64_t)id + 1, (uint64_t)size,
		       sym->class_type == HTR_NO_TYPE ? TYPE_MIRROR_PENDING : sym->class_type);
	return id;
}

uint32_t sym_type_of_class(struct symbols *sym, jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, sym_mirror_fn *mirror,
			   void *ctx)
{
	uint64_t tag = 0;
	pthread_mutex_lock(&sym->mu);
	uint32_t type = lookup_locked(sym, jvmti, klass, &tag);
	if (type != HTR_NO_TYPE && !sym->types[type].fields_pending)
		goto out;
	if ((*jni)->PushLocalFrame(jni, 300) != 0) {
		type = HTR_NO_TYPE;
		goto out;
	}
	if (type != HTR_NO_TYPE) {
		/* registered before its preparation: its fields now, if it is
		 * prepared (its ClassPrepare, recorder_class_prepare).  The
		 * type stands either way (its mirror carries its id); lists
		 * still pending name no reference rather than a wrong one. */
		complete_fields(sym, jvmti, jni, klass, type);
		(*jni)->PopLocalFrame(jni, NULL);
		goto out;
	}
	/* the unregistered part of the superclass chain, registered top down */
	jclass chain[256];
	uint64_t tags[256];
	uint32_t n = 0, super_id = HTR_NO_TYPE;
	chain[n] = klass;
	tags[n++] = tag;
	for (;;) {
		jclass s = (*jni)->GetSuperclass(jni, chain[n - 1]);
		if (!s)
			break;
		uint64_t st = 0;
		super_id = lookup_locked(sym, jvmti, s, &st);
		if (super_id != HTR_NO_TYPE && sym->types[super_id].fields_pending) {
			/* a superclass registered before its preparation: its
			 * fields first, which klass's start with.  Still not
			 * prepared: neither is klass, which waits too. */
			int rc = complete_fields(sym, jvmti, jni, s, super_id);
			if (rc && rc != -EAGAIN) {
				n = 0;
				super_id = HTR_NO_TYPE;
				break;
			}
		}
		if (super_id != HTR_NO_TYPE || n == 256)
			break;
		chain[n] = s;
		tags[n++] = st;
	}
	while (n-- > 0) {
		super_id = register_one(sym, jvmti, jni, chain[n], super_id, tags[n], mirror, ctx);
		if (super_id == HTR_NO_TYPE)
			break;
	}
	type = super_id;
	(*jni)->PopLocalFrame(jni, NULL);
out:
	pthread_mutex_unlock(&sym->mu);
	return type;
}

int32_t sym_field_slot(struct symbols *sym, uint32_t type, uint32_t j, int is_static)
{
	int32_t slot = -1;
	pthread_mutex_lock(&sym->mu);
	if (type < sym->ntypes) {
		const struct atype *t = &sym->types[type];
		if (j >= t->iface_fields) {
			uint32_t c = j - t->iface_fields;
			if (!is_static && c < t->nchain)
				slot = t->chain_slot[c];
			else if (is_static && c >= t->own_base && c < t->nchain)
				slot = t->own_static_slot[c - t->own_base];
		}
	}
	pthread_mutex_unlock(&sym->mu);
	return slot;
}

int32_t sym_referent_slot(struct symbols *sym, uint32_t type)
{
	int32_t slot = -1;
	pthread_mutex_lock(&sym->mu);
	for (uint32_t x = type, steps = 0; x < sym->ntypes && steps <= sym->ntypes;
	     x = sym->types[x].super_id, steps++) {
		const struct atype *t = &sym->types[x];
		if (!t->name || strcmp(t->name, "java.lang.ref.Reference") != 0)
			continue;
		for (uint32_t i = 0; i < t->ninst && t->fields; i++)
			if (t->fields[i].name && strcmp(t->fields[i].name, "referent") == 0)
				slot = (int32_t)i; /* inherited instance fields keep their slots */
		break;
	}
	pthread_mutex_unlock(&sym->mu);
	return slot;
}

uint32_t sym_nfields(struct symbols *sym, uint32_t type)
{
	pthread_mutex_lock(&sym->mu);
	uint32_t n = type < sym->ntypes ? sym->types[type].nfields : 0;
	pthread_mutex_unlock(&sym->mu);
	return n;
}

/* ---- methods and sites ---------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static uint32_t method_locked(struct symbols *sym, jvmtiEnv *jvmti, jmethodID m)
{
	struct amethod *am = NULL;
	HASH_FIND_PTR(sym->methods_by_key, &m, am);
	if (am)
		return am->id;
	if (grow((void **)&sym->methods, &sym->methods_cap, sym->nmethods + 1, sizeof(*sym->methods)))
		return UINT32_MAX;
	am = calloc(1, sizeof(*am));
	if (!am)
		return UINT32_MAX;
	am->key = m;
	am->id = sym->nmethods;
	char *name = NULL, *sig = NULL, *csig = NULL, *file = NULL;
	jclass k = NULL;
	(*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL);
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) == JVMTI_ERROR_NONE && k) {
		if ((*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE)
			am->cls = java_name(csig);
		(*jvmti)->GetSourceFileName(jvmti, k, &file);
	}
	am->name = dup_or_empty(name);
	am->sig = dup_or_empty(sig);
	am->file = dup_or_empty(file);
	if (!am->cls)
		am->cls = dup_or_empty(NULL);
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &am->nlines, &am->lines) != JVMTI_ERROR_NONE) {
		am->nlines = 0;
		am->lines = NULL;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)file);
	/* k is a local reference of a callback or of the agent thread's local
	 * frame: released with it */
	sym->methods[sym->nmethods++] = am;
	HASH_ADD_PTR(sym->methods_by_key, key, am);
	return am->id;
}

uint32_t sym_method(struct symbols *sym, jvmtiEnv *jvmti, jmethodID m)
{
	pthread_mutex_lock(&sym->mu);
	uint32_t id = method_locked(sym, jvmti, m);
	pthread_mutex_unlock(&sym->mu);
	return id;
}

static int32_t line_of(const struct amethod *am, jlocation loc)
{
	int32_t line = -1;
	jlocation best = -1;
	for (jint i = 0; i < am->nlines; i++)
		if (am->lines[i].start_location <= loc && am->lines[i].start_location > best) {
			best = am->lines[i].start_location;
			line = am->lines[i].line_number;
		}
	return line;
}

static struct sitekey *key_find(struct sitekey *head, const void *key, size_t len)
{
	struct sitekey *k = NULL;
	HASH_FIND(hh, head, key, len, k);
	return k;
}

static int key_add(struct sitekey **head, const void *key, size_t len, uint32_t site)
{
	struct sitekey *k = malloc(sizeof(*k));
	void *copy = malloc(len);
	if (!k || !copy) {
		free(k);
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, key, len);
	k->key = copy;
	k->keylen = len;
	k->site = site;
	HASH_ADD_KEYPTR(hh, *head, k->key, k->keylen, k);
	return 0;
}

uint32_t sym_site(struct symbols *sym, jvmtiEnv *jvmti, const jvmtiFrameInfo *frames, int n)
{
	uint32_t site = HTR_NO_SITE;
	size_t rawlen = (size_t)n * sizeof(*frames);
	struct htr_site_frame canon[AGENT_MAX_DEPTH];
	pthread_mutex_lock(&sym->mu);
	struct sitekey *k = key_find(sym->raw_sites, frames, rawlen);
	if (k) {
		site = k->site;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		uint32_t m = method_locked(sym, jvmti, frames[i].method);
		if (m == UINT32_MAX)
			goto out;
		canon[i].method = m;
		canon[i].line = line_of(sym->methods[m], frames[i].location);
	}
	/* two bytecode indexes on one line are one site */
	k = key_find(sym->canon_sites, canon, (size_t)n * sizeof(canon[0]));
	if (k) {
		site = k->site;
	} else {
		if (grow((void **)&sym->sites, &sym->sites_cap, sym->nsites + 1, sizeof(*sym->sites)))
			goto out;
		struct asite *s = &sym->sites[sym->nsites];
		s->frames = malloc((size_t)n * sizeof(canon[0]));
		if (!s->frames)
			goto out;
		memcpy(s->frames, canon, (size_t)n * sizeof(canon[0]));
		s->nframes = (uint32_t)n;
		s->written = 0;
		if (key_add(&sym->canon_sites, canon, (size_t)n * sizeof(canon[0]), sym->nsites))
			goto out;
		site = sym->nsites++;
	}
	if (key_add(&sym->raw_sites, frames, rawlen, site))
		site = HTR_NO_SITE;
out:
	pthread_mutex_unlock(&sym->mu);
	return site;
}

/* ---- writing ---------------------------------------------------------------- */

static int emit_method_locked(struct symbols *sym, struct htr_writer *w, uint32_t id)
{
	if (id >= sym->nmethods || sym->methods[id]->written)
		return 0;
	struct amethod *m = sym->methods[id];
	int rc = htr_write_method(w, id, m->cls, m->name, m->sig, m->file);
	if (!rc)
		m->written = 1;
	return rc;
}

int sym_emit_method(struct symbols *sym, struct htr_writer *w, uint32_t id)
{
	pthread_mutex_lock(&sym->mu);
	int rc = emit_method_locked(sym, w, id);
	pthread_mutex_unlock(&sym->mu);
	return rc;
}

int sym_emit_site(struct symbols *sym, struct htr_writer *w, uint32_t id)
{
	int rc = 0;
	pthread_mutex_lock(&sym->mu);
	if (id < sym->nsites && !sym->sites[id].written) {
		for (uint32_t i = 0; i < sym->sites[id].nframes && !rc; i++)
			rc = emit_method_locked(sym, w, sym->sites[id].frames[i].method);
		if (!rc)
			rc = htr_write_site(w, id, sym->sites[id].nframes, sym->sites[id].frames);
		if (!rc)
			sym->sites[id].written = 1;
	}
	pthread_mutex_unlock(&sym->mu);
	return rc;
}

int sym_emit_type(struct symbols *sym, struct htr_writer *w, uint32_t id, uint64_t size_hint)
{
	int rc = 0;
	pthread_mutex_lock(&sym->mu);
	if (id < sym->ntypes && !sym->types[id].written && sym->types[id].kind == HTR_TYPE_INSTANCE && !sym->types[id].inst_size)
		sym->types[id].inst_size = (uint32_t)size_hint;
	/* superclasses first, top down, without recursion */
	while (!rc && id < sym->ntypes && !sym->types[id].written) {
		uint32_t t = id;
		while (sym->types[t].super_id != HTR_NO_TYPE && !sym->types[sym->types[t].super_id].written)
			t = sym->types[t].super_id;
		struct atype *a = &sym->types[t];
		struct htr_type_def d = { .id = t, .name = a->name, .kind = a->kind,
					  .instance_size = a->inst_size, .elem_size = a->elem_size,
					  .super_id = a->super_id, .nfields = a->nfields, .fields = a->fields };
		rc = htr_write_type(w, &d);
		if (!rc)
			a->written = 1;
	}
	pthread_mutex_unlock(&sym->mu);
	return rc;
}

uint32_t sym_class_type(const struct symbols *sym)
{
	return __atomic_load_n(&sym->class_type, __ATOMIC_RELAXED);
}

uint32_t sym_record_type(const struct symbols *sym, uint32_t type)
{
	return type == TYPE_MIRROR_PENDING ? sym_class_type(sym) : type;
}

/* walk.c - heap walks: tagging the objects that existed before recording,
 * and the object graph with its roots at a GC.
 *
 * FollowReferences runs its callbacks in the VM thread at a safepoint: they
 * only append to the walk's own arrays (malloc, no lock; an application
 * thread may hold any agent mutex while it waits for the safepoint).
 * Everything that needs names or locks happens afterwards in walk_write.
 *
 * The graph is the heap at walk time: the walk starts after the GC ended,
 * so objects allocated between the GC's end and the walk are in it (their
 * allocation events precede the GC_END), and objects that became
 * unreachable after the GC are not (FollowReferences visits reachable
 * objects only).
 *
 * What FollowReferences does not report (HotSpot, jvmtiTagMap.cpp): a
 * java.lang.Class mirror is visited as a class only (its loader, signers,
 * protection domain, interfaces, superclass, constant pool, statics),
 * never as an object, so the values of Class's own instance fields
 * (reflectionData, a SoftReference to Class$ReflectionData; enumConstants,
 * the clone of an enum's values that EnumSet/EnumMap share; name, the
 * interned String; classData of hidden classes ...) are reached from
 * nowhere when nothing else holds them.  They are live (a heap dump lists
 * them), so walk_mirrors walks from them too, in a second FollowReferences
 * under the same locks.  Like the dump (whose CLASS_DUMP has no instance
 * fields), the graph has no edge from the mirror to them.  (HotSpot does
 * report Reference.referent as a field: objects only references reach are
 * in the first walk.)
 *
 * Nor does it report the threads hidden from JVMTI (compiler threads) or
 * the class-loader data of loaders that are not always strong (hidden
 * classes'), so what only those hold is reached from nowhere.  After a
 * full GC, where every object in the heap was live at the GC's end, the
 * walk takes them from the heap itself (find_unreached, walk_unreached)
 * with roots of kind OTHER; after other GCs the heap holds garbage too and
 * the graph stays what the roots reach.
 *
 * Referents (write_graph): as heapfs's HPROF import does (docs/hprof.md,
 * model/hprof_refs.c, VisualVM's rule), a referent edge of a
 * java.lang.ref.Reference whose target is not reachable from the roots
 * without referents is left out: the target is in the graph but keeps
 * nothing alive, so retained sizes equal the dump's.
 */
#include "agent/recorder_internal.h"

#include "agent/agent.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum edge_kind { EK_FIELD, EK_ELEM, EK_CLASSREF };

struct wroot {
	uint64_t obj, thread, aux;   /* STATIC: aux = tag of the class mirror */
	jmethodID method;
	uint32_t kind, depth, slot;  /* STATIC: slot = JVMTI field index */
};

struct wedge {
	uint64_t src, dst, src_class;
	uint32_t index, kind;
};

struct wnew {
	uint64_t id, class_tag, size;
	int32_t length;
};

struct walk {
	struct recorder *rec;                     /* the walk's, not owned */
	uint64_t agent_thread_tag;                /* its references are no roots */
	uint64_t *seen;  uint64_t seen_words;     /* bitset over object ids */
	struct wroot *roots; size_t nroots, roots_cap;
	struct wedge *edges; size_t nedges, edges_cap;
	struct wnew *news;  size_t nnews, news_cap;
	int oom;
	uint64_t time_ns;
	uint64_t holder_tag;                      /* the holder array of walk_mirrors or walk_unreached */
	uint64_t nmirror_values;                  /* Class field values it walked from */
	int news_only;                            /* dropped: write the objects it tagged only */
	/* after a full GC (walk_unreached): the objects in the heap that the
	 * walk from the roots did not reach, and the class tags of HotSpot's
	 * filler objects (int[], java.lang.Object; 0 unknown) */
	uint64_t *unreached; size_t nunreached, unreached_cap;
	uint64_t filler_tag[2];
	size_t nunreached_roots;                  /* OTHER roots it gave them */
	uint64_t unreached_ns;                    /* its time */
	/* mode=sample: the ids handed out from the walk's start to its end
	 * (walk_collect): the objects it tagged have theirs in [tag_lo,
	 * tag_hi); and the samples it met whose records follow the GC's end,
	 * under an alias id each (walk_alias; sorted by from when written) */
	uint64_t tag_lo, tag_hi;
	struct walias { uint64_t from, to, size; uint32_t type; int32_t length; } *aliases;
	size_t naliases, aliases_cap;
	/* mode=sample: the class mirrors it met (tags <= CLASS_TAG_MAX); those
	 * never written (events.c, mirror_unwritten) are written as met */
	struct wnew *mirrors; size_t nmirrors, mirrors_cap;
	/* after a full GC: the tags of the mirrors of the classes defined since
	 * the GC ended (take_late, drop_undefined), sorted; the walk leaves
	 * them out */
	uint64_t *late; size_t nlate;
	size_t nundefined;                        /* of them, drop_undefined's */
	char **late_names; size_t nlate_names;    /* those not prepared yet (take_late) */
};

static int push(void **p, size_t *n, size_t *cap, size_t elem)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		void *q = realloc(*p, c * elem);
		if (!q)
			return -ENOMEM;
		*p = q;
		*cap = c;
	}
	(*n)++;
	return 0;
}

#define PUSH(wk, arr, n, cap) \
	(push((void **)&(wk)->arr, &(wk)->n, &(wk)->cap, sizeof(*(wk)->arr)) ? ((wk)->oom = 1, NULL) \
									       : &(wk)->arr[(wk)->n - 1])

static int is_seen(const struct walk *wk, uint64_t id)
{
	uint64_t word = id >> 6;
	return word < wk->seen_words && (wk->seen[word] >> (id & 63) & 1);
}

static void mark_seen(struct walk *wk, uint64_t id)
{
	uint64_t word = id >> 6;
	if (word >= wk->seen_words) {
		uint64_t nw = (word + 1) * 2;
		uint64_t *p = realloc(wk->seen, nw * sizeof(uint64_t));
		if (!p) {
			wk->oom = 1;
			return;
		}
		memset(p + wk->seen_words, 0, (nw - wk->seen_words) * sizeof(uint64_t));
		wk->seen = p;
		wk->seen_words = nw;
	}
	wk->seen[word] |= 1ull << (id & 63);
}

static int bit(const uint64_t *b, uint64_t i) { return (int)(b[i >> 6] >> (i & 63) & 1); }

static ptrdiff_t find_id(const uint64_t *x, size_t n, uint64_t id);

/* Whether tag is a late mirror's (struct walk, late). */
static int is_late(const struct walk *wk, jlong tag)
{
	return wk->nlate && tag && find_id(wk->late, wk->nlate, (uint64_t)tag) >= 0;
}

/* References of one referrer, edges[start, start + count) (make_runs). */
struct run {
	uint64_t src;
	size_t start, count;
};

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* What the walk writes of an object it met. */
static struct wnew wnew_of(uint64_t id, jlong class_tag, jlong size, jint length)
{
	return (struct wnew){ .id = id, .class_tag = (uint64_t)class_tag, .size = (uint64_t)size, .length = length };
}

/* An object the walk writes as met (HTR_ALLOC_PREEXISTING in its GC's
 * frame): one entry on the news stack, which write_news reads. */
static void push_new(struct walk *wk, uint64_t id, jlong class_tag, jlong size, jint length)
{
	struct wnew *n = PUSH(wk, news, nnews, news_cap);
	if (n)
		*n = wnew_of(id, class_tag, size, length);
}

/* An object without a tag: give it an id, remember what it is. */
static uint64_t tag_new(struct walk *wk, jlong class_tag, jlong size, jint length, jlong *tag_ptr)
{
	uint64_t id = rec_new_tag(wk->rec);
	*tag_ptr = (jlong)id;
	push_new(wk, id, class_tag, size, length);
	return id;
}

static void add_root(struct walk *wk, jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
		     uint64_t obj)
{
	struct wroot r = { .obj = obj };
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
		r.kind = HTR_ROOT_LOCAL;
		r.thread = (uint64_t)info->stack_local.thread_tag;
		r.depth = (uint32_t)info->stack_local.depth;
		r.slot = (uint32_t)info->stack_local.slot;
		r.method = info->stack_local.method;
		break;
	case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
		r.kind = HTR_ROOT_JNI_LOCAL;
		r.thread = (uint64_t)info->jni_local.thread_tag;
		r.depth = (uint32_t)info->jni_local.depth;
		break;
	case JVMTI_HEAP_REFERENCE_JNI_GLOBAL: r.kind = HTR_ROOT_JNI_GLOBAL; break;
	case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: r.kind = HTR_ROOT_SYSTEM_CLASS; break;
	case JVMTI_HEAP_REFERENCE_MONITOR: r.kind = HTR_ROOT_MONITOR; break;
	case JVMTI_HEAP_REFERENCE_THREAD: r.kind = HTR_ROOT_THREAD; r.thread = obj; break;
	default: r.kind = HTR_ROOT_OTHER; break;
	}
	/* the agent's own references are no application root */
	if (r.thread && r.thread == wk->agent_thread_tag && kind != JVMTI_HEAP_REFERENCE_THREAD)
		return;
	struct wroot *p = PUSH(wk, roots, nroots, roots_cap);
	if (p)
		*p = r;
}

static jint JNICALL on_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			   jlong *referrer_tag_ptr, jint length, void *user)
{
	struct walk *wk = user;
	/* a class defined after the GC: not in its heap, nor the edge to it */
	if (is_late(wk, *tag_ptr))
		return 0;
	uint64_t id = *tag_ptr ? (uint64_t)*tag_ptr : tag_new(wk, class_tag, size, length, tag_ptr);
	/* mode=sample: an object an earlier walk tagged and walk_untag left
	 * tagged (a class mirror: on_untag) is written again as met by this
	 * walk, under the same id, in this GC's frame: a walk's objects are in
	 * its own GC's state alone.  (walk_tag_is_walked without deaths_mu: the
	 * ranges change on this walk's thread only, which waits in
	 * FollowReferences.) */
	if (wk->rec->sampled && id < wk->tag_lo && id > CLASS_TAG_MAX && !is_seen(wk, id) &&
	    walk_tag_is_walked(wk->rec, id))
		push_new(wk, id, class_tag, size, length);
	if (wk->rec->sampled && id <= CLASS_TAG_MAX && !is_seen(wk, id)) {
		struct wnew *m = PUSH(wk, mirrors, nmirrors, mirrors_cap);
		if (m)
			*m = wnew_of(id, class_tag, size, length);
	}
	mark_seen(wk, id);
	if (!referrer_tag_ptr) {
		add_root(wk, kind, info, id);
		return JVMTI_VISIT_OBJECTS;
	}
	uint64_t src = (uint64_t)*referrer_tag_ptr;
	struct wedge e = { .src = src, .dst = id, .src_class = (uint64_t)referrer_class_tag };
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_FIELD:
		e.kind = EK_FIELD;
		e.index = (uint32_t)info->field.index;
		break;
	case JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT:
		e.kind = EK_ELEM;
		e.index = (uint32_t)info->array.index;
		break;
	case JVMTI_HEAP_REFERENCE_STATIC_FIELD: {
		/* static fields are roots (gc-roots paper, Table 1) */
		struct wroot *r = PUSH(wk, roots, nroots, roots_cap);
		if (r) {
			memset(r, 0, sizeof(*r));
			r->kind = HTR_ROOT_STATIC;
			r->obj = id;
			r->aux = src;
			r->slot = (uint32_t)info->field.index;
		}
		return JVMTI_VISIT_OBJECTS;
	}
	case JVMTI_HEAP_REFERENCE_CLASS:
		return JVMTI_VISIT_OBJECTS; /* an object's class is no field */
	default:
		/* loader, signers, protection domain, interfaces, superclass,
		 * constant pool: what a class mirror keeps alive */
		e.kind = EK_CLASSREF;
		break;
	}
	struct wedge *p = PUSH(wk, edges, nedges, edges_cap);
	if (p)
		*p = e;
	return JVMTI_VISIT_OBJECTS;
}

static int walk_new(struct recorder *rec, struct walk **out)
{
	struct walk *wk = calloc(1, sizeof(*wk));
	if (!wk)
		return -ENOMEM;
	wk->rec = rec;
	wk->agent_thread_tag = rec->agent_thread_tag;
	wk->seen_words = (__atomic_load_n(&rec->next_tag, __ATOMIC_RELAXED) >> 6) + 1024;
	wk->seen = calloc(wk->seen_words, sizeof(uint64_t));
	if (!wk->seen) {
		free(wk);
		return -ENOMEM;
	}
	*out = wk;
	return 0;
}

void walk_free(struct walk *wk)
{
	if (!wk)
		return;
	free(wk->seen);
	free(wk->roots);
	free(wk->edges);
	free(wk->news);
	free(wk->unreached);
	free(wk->aliases);
	free(wk->mirrors);
	free(wk->late);
	for (size_t i = 0; i < wk->nlate_names; i++)
		free(wk->late_names[i]);
	free(wk->late_names);
	free(wk);
}

/* The walks from a holder array (walk_mirrors, walk_unreached): from its
 * elements.  An object the walk has seen already is not entered again (its
 * references are recorded once); the holder's own references are no
 * edges. */
static jint JNICALL on_ref_more(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
				jlong *referrer_tag_ptr, jint length, void *user)
{
	struct walk *wk = user;
	if (is_late(wk, *tag_ptr))
		return 0;
	int seen = *tag_ptr && is_seen(wk, (uint64_t)*tag_ptr);
	if (referrer_tag_ptr && (uint64_t)*referrer_tag_ptr == wk->holder_tag) {
		if (seen)
			return 0;
		uint64_t id = *tag_ptr ? (uint64_t)*tag_ptr : tag_new(wk, class_tag, size, length, tag_ptr);
		mark_seen(wk, id);
		return JVMTI_VISIT_OBJECTS;
	}
	if (!referrer_tag_ptr)
		return 0; /* no roots in a walk from one object */
	jint r = on_ref(kind, info, class_tag, referrer_class_tag, size, tag_ptr, referrer_tag_ptr, length, user);
	return seen ? 0 : r;
}

/* One FollowReferences from arr, an Object[] of the agent's holding the
 * objects to walk from: tagged holder_tag for the walk (an id no object
 * keeps, so on_ref_more tells its own edges apart) and untagged after it,
 * so that no ObjectFree comes for it. */
static int follow_from_holder(struct walk *wk, jvmtiEnv *jvmti, jobject arr)
{
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_reference_callback = on_ref_more;
	wk->holder_tag = rec_new_tag(wk->rec);
	int rc = 0;
	if ((*jvmti)->SetTag(jvmti, arr, (jlong)wk->holder_tag) != JVMTI_ERROR_NONE ||
	    (*jvmti)->FollowReferences(jvmti, 0, NULL, arr, &cb, wk) != JVMTI_ERROR_NONE)
		rc = -EIO;
	(*jvmti)->SetTag(jvmti, arr, 0);
	return rc;
}

/* Walks from the values of java.lang.Class's instance fields of every
 * loaded class that the first walk did not reach (see the top).  They go
 * into one Object[] (the agent's: never recorded), tagged holder_tag, and
 * one FollowReferences starts from it.  Called right after walk_collect,
 * under the same locks: no allocation is recorded in between, and a GC in
 * between drops the graph (graph_of). */
static int walk_mirrors(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!jni)
		return 0;
	if ((*jni)->PushLocalFrame(jni, 64) != 0)
		return -ENOMEM;
	int rc = 0;
	jint nf = 0, nk = 0;
	jfieldID *f = NULL, *rf = NULL;
	jclass *ks = NULL;
	jobjectArray arr = NULL;
	jint nrf = 0, narr = 0, cap = 0;
	if ((*jvmti)->GetLoadedClasses(jvmti, &nk, &ks) != JVMTI_ERROR_NONE || nk < 1) {
		rc = -EIO;
		goto out;
	}
	/* java.lang.Class and Object from a mirror, not FindClass: from this
	 * thread FindClass asks the system class loader, whose loadClass
	 * leaves a lock entry in its parallelLockMap (a ConcurrentHashMap$Node,
	 * an Object and the name's String and byte[], 104 bytes), objects the
	 * next walk would find with no allocation recorded */
	jclass cc = (*jni)->GetObjectClass(jni, ks[0]);
	jclass oc = cc ? (*jni)->GetSuperclass(jni, cc) : NULL;
	if (!cc || !oc || (*jvmti)->GetClassFields(jvmti, cc, &nf, &f) != JVMTI_ERROR_NONE) {
		rc = -EIO;
		goto out;
	}
	rf = malloc(((size_t)nf + 1) * sizeof(*rf));
	if (!rf) {
		rc = -ENOMEM;
		goto out;
	}
	for (jint i = 0; i < nf; i++) {
		jint mod = 0;
		char *name = NULL, *sig = NULL;
		if ((*jvmti)->GetFieldModifiers(jvmti, cc, f[i], &mod) != JVMTI_ERROR_NONE || (mod & 0x0008))
			continue;
		if ((*jvmti)->GetFieldName(jvmti, cc, f[i], &name, &sig, NULL) != JVMTI_ERROR_NONE)
			continue;
		if (sig[0] == 'L' || sig[0] == '[')
			rf[nrf++] = f[i];
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	for (jint k = 0; k < nk && !rc; k++) {
		jlong kt = 0;
		if (wk->nlate)
			(*jvmti)->GetTag(jvmti, ks[k], &kt);
		for (jint i = 0; i < nrf && !rc && !is_late(wk, kt); i++) {
			jobject v = (*jni)->GetObjectField(jni, ks[k], rf[i]);
			if (!v)
				continue;
			jlong t = 0;
			(*jvmti)->GetTag(jvmti, v, &t);
			if (t && is_seen(wk, (uint64_t)t)) {
				(*jni)->DeleteLocalRef(jni, v);
				continue;
			}
			if (narr == cap) { /* grow the holder */
				jint nc = cap ? cap * 2 : 1024;
				jobjectArray a = (*jni)->NewObjectArray(jni, nc, oc, NULL);
				if (!a) {
					(*jni)->ExceptionClear(jni);
					rc = -ENOMEM;
				}
				for (jint j = 0; j < narr && !rc; j++) {
					jobject x = (*jni)->GetObjectArrayElement(jni, arr, j);
					(*jni)->SetObjectArrayElement(jni, a, j, x);
					(*jni)->DeleteLocalRef(jni, x);
				}
				if (arr)
					(*jni)->DeleteLocalRef(jni, arr);
				arr = a;
				cap = nc;
			}
			if (!rc)
				(*jni)->SetObjectArrayElement(jni, arr, narr++, v);
			(*jni)->DeleteLocalRef(jni, v);
		}
		(*jni)->DeleteLocalRef(jni, ks[k]);
	}
	wk->nmirror_values = (uint64_t)narr;
	if (!rc && narr)
		rc = follow_from_holder(wk, jvmti, arr);
out:
	if (ks)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)ks);
	if (f)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)f);
	free(rf);
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}

/* ---- after a full GC: what the walk from the roots does not reach ---------- */

/* Whether the heap now holds the objects of GC n's end and nothing that died
 * before it: n is a full collection (every object in the heap was live when
 * it ended) by the perf counters sampled in its callbacks, no GC began
 * since, and the allocation gate was closed at its end (gcwait.c), so no
 * application thread has tagged an object allocated after it (each waits,
 * at its first allocation after the GC, holding that object in its
 * callback's local reference, where the walk from the roots finds it).
 * The caller (graph_of) has just seen that GC n is the last one begun,
 * under every tstate mutex. */
static int after_full_gc(const struct recorder *rec)
{
	uint32_t n = __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE);
	if (!n || rec->opts->mode != AGENT_MODE_FULL || !rec->have_perfdata || !rec->alloc_gate ||
	    __atomic_load_n(&rec->gc_finished, __ATOMIC_ACQUIRE) != n ||
	    __atomic_load_n(&rec->gw.gate_gc, __ATOMIC_ACQUIRE) != n)
		return 0;
	int full = 0;
	char cause[PERFDATA_CAUSE_MAX];
	rec_gc_kind(rec, n, &full, cause, sizeof(cause));
	return full;
}

/* IterateThroughHeap: every object the walk did not reach.  A tagged one
 * existed at the GC's end (after_full_gc).  An untagged one was never
 * reported to the agent (allocated by a thread hidden from JVMTI, or by
 * the VM without an event) and is kept (tagged now, written as found in a
 * walk), except HotSpot's fillers: JDK 17 makes the heap parsable for the
 * iteration by filling the unused part of every TLAB, the ones threads
 * took since the GC, with an int[] (a java.lang.Object where no array
 * header fits), objects no allocation event or walk ever saw; so is an
 * untagged object of a class the agent never registered (class tag 0, an
 * int[] before any was allocated).  A filler-like object that something
 * among the kept ones references is still reached by walk_unreached. */
static jint JNICALL on_heap_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user)
{
	struct walk *wk = user;
	uint64_t id = (uint64_t)*tag_ptr;
	if (id) {
		if (is_seen(wk, id) || is_late(wk, *tag_ptr))
			return 0;
	} else {
		if (!class_tag || (uint64_t)class_tag == wk->filler_tag[0] ||
		    (uint64_t)class_tag == wk->filler_tag[1])
			return 0;
		id = tag_new(wk, class_tag, size, length, tag_ptr);
	}
	uint64_t *p = PUSH(wk, unreached, nunreached, unreached_cap);
	if (p)
		*p = id;
	return wk->oom ? JVMTI_VISIT_ABORT : 0;
}

static uint64_t class_tag_of(jvmtiEnv *jvmti, jclass k)
{
	jlong t = 0;
	if (!k || (*jvmti)->GetTag(jvmti, k, &t) != JVMTI_ERROR_NONE || t <= 0 || (uint64_t)t > CLASS_TAG_MAX)
		return 0;
	return (uint64_t)t;
}

/* java.lang.Object's class tag through a mirror's superclasses, not
 * FindClass (see walk_mirrors); int[]'s by FindClass("[I"): HotSpot
 * resolves an array of a primitive type without the class loader's Java
 * code. */
static int find_filler_tags(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni)
{
	if ((*jni)->PushLocalFrame(jni, 16) != 0)
		return -ENOMEM;
	jclass k = (*jni)->GetObjectClass(jni, wk->rec->agent_thread);
	for (jclass s; k && (s = (*jni)->GetSuperclass(jni, k)); k = s)
		(*jni)->DeleteLocalRef(jni, k);
	wk->filler_tag[1] = class_tag_of(jvmti, k);
	jclass ia = (*jni)->FindClass(jni, "[I");
	if (!ia)
		(*jni)->ExceptionClear(jni);
	wk->filler_tag[0] = class_tag_of(jvmti, ia);
	(*jni)->PopLocalFrame(jni, NULL);
	return k ? 0 : -EIO;
}

/* Before walk_mirrors, which allocates its holder arrays: those must not
 * be taken for objects of the GC's heap. */
static int find_unreached(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni)
{
	int rc = find_filler_tags(wk, jvmti, jni);
	if (rc)
		return rc;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_iteration_callback = on_heap_object;
	if ((*jvmti)->IterateThroughHeap(jvmti, 0, NULL, &cb, wk) != JVMTI_ERROR_NONE)
		return -EIO;
	return wk->oom ? -ENOMEM : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of id in the sorted x[n], or -1. */
static ptrdiff_t find_id(const uint64_t *x, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && x[lo] == id ? (ptrdiff_t)lo : -1;
}

static int push_other_root(struct walk *wk, uint64_t id)
{
	struct wroot *r = PUSH(wk, roots, nroots, roots_cap);
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->kind = HTR_ROOT_OTHER;
	r->obj = id;
	wk->nunreached_roots++;
	return 0;
}

/* Roots for the objects walk_unreached started from (x[n], sorted): what
 * holds them is a root JVMTI does not report, and only the outermost of
 * each structure stands for it: each one that no other of them references
 * (edges from e0 on, the walk from the holder) and no static field of a
 * class among them holds (roots from r0 on), then, for a cycle with no
 * such entry, the lowest id of what is still not reached.  Depth-first
 * with its own stack over the edges from e0 on, sorted by referrer. */
static int root_unreached(struct walk *wk, const uint64_t *x, size_t n, size_t e0, size_t r0)
{
	size_t ne = wk->nedges - e0, nruns = 0, sp = 0, cap = 0;
	uint8_t *held = calloc(n, 1);
	uint64_t *mark = calloc(wk->seen_words + 1, sizeof(uint64_t));
	struct run *runs = malloc((ne + 1) * sizeof(*runs));
	uint64_t *stack = NULL;
	int rc = held && mark && runs ? 0 : -ENOMEM;
	for (size_t e = e0; e < wk->nedges && !rc; e++) {
		const struct wedge *ed = &wk->edges[e];
		ptrdiff_t k = ed->src != ed->dst ? find_id(x, n, ed->dst) : -1;
		if (k >= 0)
			held[k] = 1;
		if (e == e0 || ed->src != wk->edges[e - 1].src)
			runs[nruns++] = (struct run){ ed->src, e, 0 };
		runs[nruns - 1].count++;
	}
	for (size_t r = r0; r < wk->nroots && !rc; r++) {
		ptrdiff_t k = find_id(x, n, wk->roots[r].obj);
		if (k >= 0)
			held[k] = 1;
	}
	if (!rc)
		qsort(runs, nruns, sizeof(*runs), cmp_run);
	/* pass 0: the unheld ones; pass 1: what cycles left */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (size_t i = 0; i < n && !rc; i++) {
			/* (one GetObjectsWithTags did not return is in no graph) */
			if (!is_seen(wk, x[i]) || (pass == 0 && held[i]) || bit(mark, x[i]))
				continue;
			rc = push_other_root(wk, x[i]);
			mark[x[i] >> 6] |= 1ull << (x[i] & 63);
			if (!rc && sp == cap) {
				size_t c = cap ? cap * 2 : 256;
				uint64_t *p = realloc(stack, c * sizeof(*p));
				if (!p) {
					rc = -ENOMEM;
				} else {
					stack = p;
					cap = c;
				}
			}
			if (!rc)
				stack[sp++] = x[i];
			while (sp && !rc) {
				uint64_t id = stack[--sp];
				size_t lo = 0, hi = nruns;
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (runs[mid].src < id)
						lo = mid + 1;
					else
						hi = mid;
				}
				for (; lo < nruns && runs[lo].src == id && !rc; lo++) {
					for (size_t e = runs[lo].start; e < runs[lo].start + runs[lo].count && !rc; e++) {
						uint64_t d = wk->edges[e].dst;
						if ((d >> 6) >= wk->seen_words || bit(mark, d))
							continue;
						mark[d >> 6] |= 1ull << (d & 63);
						if (sp == cap) {
							size_t c = cap ? cap * 2 : 256;
							uint64_t *p = realloc(stack, c * sizeof(*p));
							if (!p) {
								rc = -ENOMEM;
								break;
							}
							stack = p;
							cap = c;
						}
						stack[sp++] = d;
					}
				}
			}
		}
	}
	free(held);
	free(mark);
	free(runs);
	free(stack);
	return rc;
}

/* After a full GC, once walk_mirrors is done: the objects find_unreached
 * found and walk_mirrors did not reach are live (the GC just kept them)
 * and held by roots JVMTI does not report: threads hidden from JVMTI
 * (compiler threads: their Thread objects, names, AccessControlContexts;
 * FollowReferences skips hidden threads), what only the class-loader data
 * of non-strong loaders holds (hidden classes' mirrors, their constant
 * pools' resolved references, the method handles bound there;
 * FollowReferences walks the always-strong loaders only), or, rarely,
 * roots that let go of them between the GC's end and the walk.  HotSpot's
 * heap dumper lists them all (it writes every object of the heap after its
 * full GC).  One more FollowReferences from an Object[] holding them
 * (GetObjectsWithTags: one pass over the tag table per tag asked) gives
 * their references; each structure gets a root of kind OTHER
 * (root_unreached). */
static int walk_unreached(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni)
{
	size_t n = 0;
	for (size_t i = 0; i < wk->nunreached; i++)
		if (!is_seen(wk, wk->unreached[i]))
			wk->unreached[n++] = wk->unreached[i];
	wk->nunreached = n;
	if (!n)
		return 0;
	if (n > INT32_MAX / 2)
		return -ENOMEM;
	qsort(wk->unreached, n, sizeof(uint64_t), cmp_u64);
	jlong *tags = malloc(n * sizeof(*tags));
	if (!tags)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tags[i] = (jlong)wk->unreached[i];
	if ((*jni)->PushLocalFrame(jni, 64) != 0) {
		free(tags);
		return -ENOMEM;
	}
	int rc = 0;
	jint got = 0;
	jobject *objs = NULL;
	jobjectArray arr = NULL;
	jclass oc = NULL;
	if ((*jvmti)->GetObjectsWithTags(jvmti, (jint)n, tags, &got, &objs, NULL) != JVMTI_ERROR_NONE) {
		objs = NULL;
		rc = -EIO;
	}
	if (!rc && got > 0) { /* java.lang.Object: the top of any object's class */
		oc = (*jni)->GetObjectClass(jni, objs[0]);
		for (jclass s; oc && (s = (*jni)->GetSuperclass(jni, oc)); oc = s)
			(*jni)->DeleteLocalRef(jni, oc);
		arr = oc ? (*jni)->NewObjectArray(jni, got, oc, NULL) : NULL;
		if (!arr) {
			(*jni)->ExceptionClear(jni);
			rc = -ENOMEM;
		}
	}
	for (jint j = 0; objs && j < got; j++) {
		if (!rc)
			(*jni)->SetObjectArrayElement(jni, arr, j, objs[j]);
		(*jni)->DeleteLocalRef(jni, objs[j]);
	}
	if (objs)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)objs);
	free(tags);
	if (!rc && got > 0) {
		size_t e0 = wk->nedges, r0 = wk->nroots;
		rc = follow_from_holder(wk, jvmti, arr);
		if (!rc && wk->oom)
			rc = -ENOMEM;
		/* (one that died since the GC, which GetObjectsWithTags would
		 * not return, needs a GC in between: then the graph is dropped) */
		if (!rc)
			rc = root_unreached(wk, wk->unreached, n, e0, r0);
	}
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}

/* The classes noted for GC n (recorder_late_take), taken by its walk.
 * After a full GC (keep) the tags of those prepared go into wk->late, the
 * names of the others into wk->late_names (drop_undefined), and the walk
 * leaves their mirrors out.  After a young GC the graph is the heap at
 * walk time (agent/README): they stay in. */
static void take_late(struct walk *wk, uint32_t n, int keep)
{
	struct late_class *l = NULL;
	size_t nl = 0;
	recorder_late_take(wk->rec, n, &l, &nl);
	wk->late = keep && nl ? malloc(nl * sizeof(uint64_t)) : NULL;
	wk->late_names = keep && nl ? malloc(nl * sizeof(char *)) : NULL;
	for (size_t i = 0; i < nl; i++) {
		if (l[i].tag && wk->late) {
			wk->late[wk->nlate++] = l[i].tag;
		} else if (!l[i].tag && wk->late_names) {
			wk->late_names[wk->nlate_names++] = l[i].name;
			l[i].name = NULL;
		}
		free(l[i].name);
	}
	free(l);
	qsort(wk->late, wk->nlate, sizeof(uint64_t), cmp_u64);
}

/* Whether the class signature sig (Lname;) is among wk->late_names. */
static int late_named(const struct walk *wk, const char *sig)
{
	size_t l = strlen(sig);
	for (size_t i = 0; l > 2 && sig[0] == 'L' && i < wk->nlate_names; i++)
		if (strlen(wk->late_names[i]) == l - 2 && !memcmp(wk->late_names[i], sig + 1, l - 2))
			return 1;
	return 0;
}

/* Takes the objects of ids x[0..n) (sorted) out of the graph: no node, no
 * edge to or from them, no root, not among the unreached. */
static void drop_from_graph(struct walk *wk, const uint64_t *x, size_t n)
{
	size_t k = 0;
	for (size_t e = 0; e < wk->nedges; e++)
		if (find_id(x, n, wk->edges[e].src) < 0 && find_id(x, n, wk->edges[e].dst) < 0)
			wk->edges[k++] = wk->edges[e];
	wk->nedges = k;
	k = 0;
	for (size_t r = 0; r < wk->nroots; r++)
		if (find_id(x, n, wk->roots[r].obj) < 0)
			wk->roots[k++] = wk->roots[r];
	wk->nroots = k;
	k = 0;
	for (size_t u = 0; u < wk->nunreached; u++)
		if (find_id(x, n, wk->unreached[u]) < 0)
			wk->unreached[k++] = wk->unreached[u];
	wk->nunreached = k;
	for (size_t i = 0; i < n; i++)
		if ((x[i] >> 6) < wk->seen_words)
			wk->seen[x[i] >> 6] &= ~(1ull << (x[i] & 63));
}

/* The ids of the class mirrors this walk met untagged (tag_new) that are
 * those of classes being defined since the GC, into *drop (malloc'd,
 * room for wk->nlate more), sorted: a class noted by name (late_named),
 * or a mirror the VM has made and not yet bound to its class, which
 * JVMTI takes for a primitive type's ("V"; the true primitive mirrors are
 * tagged since VMInit).  Such a mirror may also be that of a class whose
 * definition the GC interrupted, which the dump lists: one is taken for a
 * noted class only while some noted class has no mirror in the walk.
 * Both seen on boot classes resolved during the walk (tests/realapps'
 * recorded-counts: one java.lang.Class more than the dump). */
static int undefined_mirrors(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t class_type, uint64_t **drop,
			     size_t *nd)
{
	size_t nc = 0, nhalf = 0;
	jint got = 0;
	jobject *objs = NULL;
	jlong *got_tags = NULL;
	jlong *tags = malloc((wk->nnews + 1) * sizeof(*tags));
	int rc = tags ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < wk->nnews; i++)
		if (wk->news[i].class_tag == (uint64_t)class_type + 1)
			tags[nc++] = (jlong)wk->news[i].id;
	if (!rc && nc && (*jvmti)->GetObjectsWithTags(jvmti, (jint)nc, tags, &got, &objs, &got_tags) != JVMTI_ERROR_NONE)
		rc = -EIO;
	if (!rc && !(*drop = malloc((wk->nlate + 2 * (size_t)got + 1) * sizeof(**drop))))
		rc = -ENOMEM;
	uint64_t *half = rc ? NULL : *drop + got; /* the unbound ones, before the choice */
	for (jint j = 0; j < got; j++) {
		char *sig = NULL;
		if (!rc && (*jvmti)->GetClassSignature(jvmti, (jclass)objs[j], &sig, NULL) == JVMTI_ERROR_NONE && sig) {
			if (late_named(wk, sig))
				(*drop)[(*nd)++] = (uint64_t)got_tags[j];
			else if (strlen(sig) == 1)
				half[nhalf++] = (uint64_t)got_tags[j];
		}
		if (sig)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		(*jni)->DeleteLocalRef(jni, objs[j]);
	}
	for (size_t h = 0; !rc && h < nhalf && *nd < wk->nlate_names; h++)
		(*drop)[(*nd)++] = half[h];
	if (objs)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)objs);
	if (got_tags)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)got_tags);
	free(tags);
	if (!rc)
		qsort(*drop, *nd, sizeof(uint64_t), cmp_u64);
	return rc;
}

/* After a full GC, once the walk from the roots and find_unreached are
 * done: of the class mirrors this walk met untagged (arrays never
 * allocated, classes not prepared, classes being defined), those of
 * classes defined since the GC (undefined_mirrors) leave the graph and
 * join wk->late, so that the walks that follow skip them too.  They stay
 * written as met (they are tagged), outside the graph. */
static int drop_undefined(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni)
{
	uint32_t class_type = sym_class_type(wk->rec->sym);
	uint64_t *drop = NULL;
	size_t nd = 0;
	if (class_type == HTR_NO_TYPE)
		return 0;
	int rc = undefined_mirrors(wk, jvmti, jni, class_type, &drop, &nd);
	if (!rc && nd) {
		drop_from_graph(wk, drop, nd);
		if (wk->nlate)
			memcpy(drop + nd, wk->late, wk->nlate * sizeof(uint64_t));
		free(wk->late);
		wk->late = drop;
		wk->nlate += nd;
		wk->nundefined = nd;
		drop = NULL;
		qsort(wk->late, wk->nlate, sizeof(uint64_t), cmp_u64);
	}
	free(drop);
	return rc;
}

static int open_range(struct walk *wk);
static void close_range(struct walk *wk);
static uint64_t remap(const struct walk *wk, uint64_t id);
static int cmp_alias(const void *a, const void *b);

int walk_collect(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, struct walk **out)
{
	struct walk *wk = NULL;
	int rc = walk_new(rec, &wk);
	if (rc)
		return rc;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_reference_callback = on_ref;
	wk->time_ns = agent_now_ns();
	if (rec->sampled && (rc = open_range(wk))) {
		walk_free(wk);
		return rc;
	}
	int full_gc = jni && after_full_gc(rec);
	if (agent_opts_gc_wait(rec->opts))
		take_late(wk, __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE), full_gc);
	jvmtiError e = (*jvmti)->FollowReferences(jvmti, 0, NULL, NULL, &cb, wk);
	/* after a full GC, the objects of the heap the walk did not reach
	 * (walk_unreached), found before walk_mirrors allocates */
	int full = e == JVMTI_ERROR_NONE && !wk->oom && full_gc;
	uint64_t t = agent_now_ns();
	int urc = full ? find_unreached(wk, jvmti, jni) : 0;
	if (full && !urc && drop_undefined(wk, jvmti, jni))
		fprintf(stderr, "heapfs-agent: GC %u: telling the classes being defined failed: their mirrors stay in "
				"this graph\n", __atomic_load_n(&rec->gc_started, __ATOMIC_RELAXED));
	wk->unreached_ns = agent_now_ns() - t;
	/* the mirrors' walk failing leaves the graph of the first walk (the
	 * graph without walk_mirrors), never its objects untold: an object
	 * tagged and not written would be in every later graph with no type */
	if (e == JVMTI_ERROR_NONE && !wk->oom && walk_mirrors(wk, jvmti, jni))
		wk->rec->n_mirror_walks_failed++;
	/* likewise: failing, the graph lacks what only hidden roots hold; the
	 * objects find_unreached tagged are written all the same */
	t = agent_now_ns();
	if (full && !urc && e == JVMTI_ERROR_NONE && !wk->oom)
		urc = walk_unreached(wk, jvmti, jni);
	wk->unreached_ns += agent_now_ns() - t;
	if (urc)
		fprintf(stderr, "heapfs-agent: GC %u: walking the objects the roots JVMTI reports do not reach "
				"failed (%s): this graph lacks them\n",
			__atomic_load_n(&rec->gc_started, __ATOMIC_RELAXED), strerror(-urc));
	else if (full && rec->opts->verbose)
		fprintf(stderr, "heapfs-agent: GC %u (full): %zu objects in the heap that the walk from the roots "
				"did not reach, held by %zu roots of kind other, %.1f ms; %zu mirrors of classes loaded "
				"since the GC left out (%zu being defined)\n",
			__atomic_load_n(&rec->gc_started, __ATOMIC_RELAXED), wk->nunreached,
			wk->nunreached_roots, wk->unreached_ns / 1e6, wk->nlate, wk->nundefined);
	if (rec->sampled)
		close_range(wk);
	if (e != JVMTI_ERROR_NONE || wk->oom) {
		/* (mode=sample: the tags it gave stay; their deaths are dropped) */
		walk_free(wk);
		return e != JVMTI_ERROR_NONE ? -EIO : -ENOMEM;
	}
	*out = wk;
	return 0;
}

/* ---- mode=sample: the walk's own tags ------------------------------------------ */

/* The walk's range opens before its first tag, [tag_lo, +inf), so that a
 * death of an object it tagged is dropped however early it comes; the
 * range closes at the walk's end. */
static int open_range(struct walk *wk)
{
	struct recorder *rec = wk->rec;
	wk->tag_lo = __atomic_load_n(&rec->next_tag, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&rec->deaths_mu);
	int rc = 0;
	if (rec->nwalk_ranges == rec->walk_ranges_cap) {
		size_t c = rec->walk_ranges_cap ? rec->walk_ranges_cap * 2 : 64;
		void *p = realloc(rec->walk_ranges, c * sizeof(*rec->walk_ranges));
		if (p) {
			rec->walk_ranges = p;
			rec->walk_ranges_cap = c;
		} else {
			rc = -ENOMEM;
		}
	}
	if (!rc) {
		rec->walk_ranges[rec->nwalk_ranges].lo = wk->tag_lo;
		rec->walk_ranges[rec->nwalk_ranges].hi = UINT64_MAX;
		rec->nwalk_ranges++;
	}
	pthread_mutex_unlock(&rec->deaths_mu);
	return rc;
}

static void close_range(struct walk *wk)
{
	struct recorder *rec = wk->rec;
	wk->tag_hi = __atomic_load_n(&rec->next_tag, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&rec->deaths_mu);
	rec->walk_ranges[rec->nwalk_ranges - 1].hi = wk->tag_hi;
	pthread_mutex_unlock(&rec->deaths_mu);
}

int walk_tag_is_walked(const struct recorder *rec, uint64_t tag)
{
	size_t lo = 0, hi = rec->nwalk_ranges; /* ranges ascend: ids only grow */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rec->walk_ranges[mid].hi <= tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rec->nwalk_ranges && rec->walk_ranges[lo].lo <= tag;
}

int walk_alias(struct walk *wk, const struct arec *r)
{
	if (!is_seen(wk, r->id))
		return 0;
	struct walias *a = PUSH(wk, aliases, naliases, aliases_cap);
	if (!a)
		return -ENOMEM;
	*a = (struct walias){ .from = r->id, .to = rec_new_tag(wk->rec), .size = r->size, .type = r->type,
			      .length = r->length };
	wk->rec->n_walk_aliases++;
	return 0;
}

static int cmp_alias(const void *a, const void *b)
{
	const struct walias *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* The id an object of the walk has in the trace: its alias, if any. */
static uint64_t remap(const struct walk *wk, uint64_t id)
{
	size_t lo = 0, hi = wk->naliases;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (wk->aliases[mid].from < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < wk->naliases && wk->aliases[lo].from == id ? wk->aliases[lo].to : id;
}

/* A class mirror keeps the walk's tag: a class the walk met as an object
 * before the agent registered it (an enum's values() array class, say)
 * is registered under that tag (symbols.c, register_one's tagmap), and
 * clearing it would have the class registered again, a second type of
 * the same name ("X[]%#2" in the tree, measured on two Guava/Jackson
 * programs); on_ref writes it again in later walks.  Other tags go. */
static jint JNICALL on_untag(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user)
{
	(void)size; (void)length;
	struct walk *wk = user;
	uint64_t t = (uint64_t)*tag_ptr;
	uint32_t class_type = sym_class_type(wk->rec->sym);
	if (class_type != HTR_NO_TYPE && (uint64_t)class_tag == (uint64_t)class_type + 1)
		return 0;
	if (t >= wk->tag_lo && t < wk->tag_hi) {
		*tag_ptr = 0;
		wk->rec->n_untagged++;
	}
	return 0;
}

int walk_untag(struct walk *wk, jvmtiEnv *jvmti)
{
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_iteration_callback = on_untag;
	uint64_t t = agent_now_ns();
	/* HEAP_FILTER_UNTAGGED: the callback sees the tagged objects only */
	jvmtiError e = (*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, wk);
	wk->rec->untag_ns += agent_now_ns() - t;
	return e == JVMTI_ERROR_NONE ? 0 : -EIO;
}

void walk_drop_graph(struct walk *wk)
{
	wk->news_only = 1;
}

/* walk_check_start's callback data */
struct check_start {
	struct recorder *rec;
	int clear;               /* start=first-gc: clear the start objects' tags */
	jlong class_tag;         /* java.lang.Class's: a mirror keeps its tag */
	uint64_t *threads;       /* the live threads' tags, sorted */
	size_t nthreads;
	uint64_t *fillers;       /* ids of the fillers found (owned) */
	size_t nfillers, fillers_cap;
	int oom;
};

static const struct start_obj *find_start(const struct recorder *rec, uint64_t id)
{
	size_t lo = 0, hi = rec->nstart;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rec->start[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rec->nstart && rec->start[lo].id == id ? &rec->start[lo] : NULL;
}

static jint JNICALL on_check_start(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user)
{
	(void)length;
	struct check_start *u = user;
	uint64_t tag = (uint64_t)*tag_ptr;
	const struct start_obj *so = find_start(u->rec, tag);
	if (!so)
		return 0;
	/* (a class whose mirror had no tag at VMInit: the size alone) */
	if ((so->class_tag && (uint64_t)class_tag != so->class_tag) || (uint64_t)size != so->size) {
		uint64_t *f = PUSH(u, fillers, nfillers, fillers_cap);
		if (!f) {
			u->oom = 1;
			return 0;
		}
		*f = so->id;
		*tag_ptr = 0;
		return 0;
	}
	if (!u->clear || class_tag == u->class_tag ||
	    bsearch(&tag, u->threads, u->nthreads, sizeof(uint64_t), cmp_u64))
		return 0;
	*tag_ptr = 0;
	u->rec->n_start_untagged++;
	return 0;
}

/* The live threads' tags, sorted, into u->threads. */
static int live_thread_tags(jvmtiEnv *jvmti, JNIEnv *jni, struct check_start *u)
{
	jthread *threads = NULL;
	jint n = 0;
	if ((*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE)
		return -EIO;
	int rc = 0;
	u->threads = malloc(((size_t)n + 1) * sizeof(uint64_t));
	if (!u->threads)
		rc = -ENOMEM;
	for (jint i = 0; i < n; i++) {
		jlong tag = 0;
		if (!rc && (*jvmti)->GetTag(jvmti, threads[i], &tag) == JVMTI_ERROR_NONE)
			u->threads[u->nthreads++] = (uint64_t)tag; /* ids: never negative */
		(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
	if (!rc)
		qsort(u->threads, u->nthreads, sizeof(uint64_t), cmp_u64);
	return rc;
}

int walk_check_start(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc)
{
	uint32_t class_type = sym_class_type(rec->sym);
	struct check_start u = { .rec = rec, .clear = rec->opts->start == AGENT_START_FIRST_GC,
				 .class_tag = class_type == HTR_NO_TYPE ? -1 : (jlong)class_type + 1 };
	int rc = 0;
	if (!rec->nstart)
		goto out;
	rc = live_thread_tags(jvmti, jni, &u);
	if (rc)
		goto out;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_iteration_callback = on_check_start;
	uint64_t t = agent_now_ns();
	/* HEAP_FILTER_UNTAGGED: the callback sees the tagged objects only */
	if ((*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, &u) != JVMTI_ERROR_NONE)
		rc = -EIO;
	rec->start_check_ns += agent_now_ns() - t;
	for (size_t i = 0; i < u.nfillers && !rc; i++)
		rc = rec_add_death(rec, u.fillers[i], gc);
	rec->n_start_fillers += u.nfillers;
	if (!rc && u.oom)
		rc = -ENOMEM;
out:
	free(u.threads);
	free(u.fillers);
	free(rec->start);
	rec->start = NULL;
	rec->nstart = 0;
	return rc;
}

static jint JNICALL stop_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			     jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			     jlong *referrer_tag_ptr, jint length, void *user)
{
	(void)kind; (void)info; (void)class_tag; (void)referrer_class_tag; (void)size;
	(void)tag_ptr; (void)referrer_tag_ptr; (void)length; (void)user;
	return 0;
}

static jint JNICALL abort_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			      jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			      jlong *referrer_tag_ptr, jint length, void *user)
{
	(void)kind; (void)info; (void)class_tag; (void)referrer_class_tag; (void)size;
	(void)tag_ptr; (void)referrer_tag_ptr; (void)length; (void)user;
	return JVMTI_VISIT_ABORT;
}

/* Deletes the weak references of the samples whose ObjectFree came. */
static void delete_freed_refs(struct recorder *rec, JNIEnv *jni)
{
	pthread_mutex_lock(&rec->deaths_mu);
	jweak *w = rec->weak_free;
	uint32_t n = rec->nweak_free;
	rec->weak_free = NULL;
	rec->nweak_free = rec->weak_free_cap = 0;
	pthread_mutex_unlock(&rec->deaths_mu);
	for (uint32_t i = 0; i < n; i++)
		(*jni)->DeleteWeakGlobalRef(jni, w[i]);
	free(w);
}

/* rec->flush_tags and flush_refs with room for n.  0 or -ENOMEM. */
static int flush_room(struct recorder *rec, uint32_t n)
{
	if (n <= rec->flush_cap)
		return 0;
	uint32_t c = n < 256 ? 256 : n;
	uint64_t *t = realloc(rec->flush_tags, c * sizeof(*t));
	if (t)
		rec->flush_tags = t;
	uint64_t *r = t ? realloc(rec->flush_refs, c * sizeof(*r)) : NULL;
	if (r)
		rec->flush_refs = r;
	if (!t || !r)
		return -ENOMEM;
	rec->flush_cap = c;
	return 0;
}

/* mode=sample's cheap path (rec->cheap_flush) after GC gc: 1 when every
 * sample that GC freed has its death in rec->deaths, 0 when a heap walk
 * must post them.
 *
 * JDK 17 posts a GC's ObjectFree events from its Service thread 1-20 ms
 * after the GC on these machines (median 4.5: several GCs later in a
 * program that collects every 5 ms), or at once in a heap walk, which stops every
 * thread for 1.2-3 ms.  GetObjectsWithTags neither posts them (17.0.15)
 * nor leaves the heap alone: it makes a local reference to each object it
 * finds, and a GC that starts before they are let go keeps those objects.
 * So each live sample has a JNI weak global reference, cleared by the GC
 * that frees it, and IsSameObject(ref, NULL) asks without keeping
 * anything.  A sample whose reference is cleared and whose death has not
 * come died at this GC, when no GC started since the previous flush (it
 * would have been found then) nor during the look (gc_started is gc
 * before and after): its death is written here and its ObjectFree
 * dropped when it comes.  A class mirror dies only with its class: the
 * class-unloading counters growing since the last flush take the walk. */
static int flush_deaths_by_refs(struct recorder *rec, JNIEnv *jni, uint32_t gc)
{
	delete_freed_refs(rec, jni);
	int64_t unloaded = perfdata_unloaded(&rec->perfdata);
	if (unloaded != rec->unloaded_seen) {
		rec->unloaded_seen = unloaded;
		return 0;
	}
	uint32_t n = 0;
	pthread_mutex_lock(&rec->deaths_mu);
	int ok = __atomic_load_n(&rec->cheap_flush, __ATOMIC_RELAXED) && rec->live.n <= FLUSH_REFS_MAX &&
		 flush_room(rec, rec->live.n) == 0;
	if (ok)
		n = tagset_copy(&rec->live, rec->flush_tags, rec->flush_refs);
	pthread_mutex_unlock(&rec->deaths_mu);
	if (!ok || __atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE) != gc)
		return 0;
	/* the cleared ones to the front */
	uint32_t ndead = 0;
	for (uint32_t i = 0; i < n; i++)
		if ((*jni)->IsSameObject(jni, (jweak)(uintptr_t)rec->flush_refs[i], NULL)) {
			uint64_t t = rec->flush_tags[ndead], r = rec->flush_refs[ndead];
			rec->flush_tags[ndead] = rec->flush_tags[i];
			rec->flush_refs[ndead] = rec->flush_refs[i];
			rec->flush_tags[i] = t;
			rec->flush_refs[i] = r;
			ndead++;
		}
	if (__atomic_load_n(&rec->gc_started, __ATOMIC_ACQUIRE) != gc)
		return 0;
	int rc = 0;
	uint32_t mine = 0;
	pthread_mutex_lock(&rec->deaths_mu);
	for (uint32_t i = 0; i < ndead && !rc; i++) {
		/* not live any more: its ObjectFree came since the copy (and its
		 * reference went to weak_free) */
		if (!tagset_remove(&rec->live, rec->flush_tags[i], NULL))
			continue;
		rec->flush_refs[mine++] = rec->flush_refs[i];
		rc = tagset_add(&rec->written_dead, rec->flush_tags[i], 0);
		if (rc >= 0)
			rc = rec_push_death_locked(rec, (struct death){ rec->flush_tags[i], gc });
		if (rc >= 0)
			rec->n_deaths_found++;
	}
	if (rc < 0) /* out of memory: ObjectFree posts the rest, late */
		__atomic_store_n(&rec->cheap_flush, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rec->deaths_mu);
	for (uint32_t i = 0; i < mine; i++)
		(*jni)->DeleteWeakGlobalRef(jni, (jweak)(uintptr_t)rec->flush_refs[i]);
	return rc >= 0;
}

int walk_flush_deaths(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc)
{
	if (__atomic_load_n(&rec->cheap_flush, __ATOMIC_RELAXED) && jni && flush_deaths_by_refs(rec, jni, gc)) {
		rec->n_flush_refs++;
		return 0;
	}
	/* mode=sample: a walk from the roots that the first tagged root
	 * ends.  HotSpot (JDK 17, VM_HeapWalkOperation) then leaves the heap
	 * alone: no object was marked, so ObjectMarker skips its pass over
	 * the whole heap that resets the marks, which the walk from one
	 * object below always makes (~10 ms per GC on SampleMix's 90 MB heap:
	 * 163 ms for 16 GCs).  HEAP_FILTER_UNTAGGED: only tagged roots (the
	 * agent thread's global reference, class mirrors) reach the callback,
	 * and no escape-analysis barrier deoptimizes every thread's frames.
	 * (Enabling ObjectFree again also posts pending deaths, but JDK 17
	 * does it holding JvmtiThreadState_lock and blocks for a safepoint
	 * there: it deadlocked.) */
	if (rec->sampled) {
		jvmtiHeapCallbacks cb;
		memset(&cb, 0, sizeof(cb));
		cb.heap_reference_callback = abort_ref;
		if ((*jvmti)->FollowReferences(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, NULL, &cb, NULL) ==
		    JVMTI_ERROR_NONE)
			return 0;
	}
	/* A heap walk first posts every pending ObjectFree on the calling
	 * thread; this one starts at one object and follows nothing. */
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_reference_callback = stop_ref;
	return (*jvmti)->FollowReferences(jvmti, 0, NULL, rec->agent_thread, &cb, NULL) == JVMTI_ERROR_NONE
		       ? 0 : -EIO;
}

/* ---- before recording -------------------------------------------------------- */

static jint JNICALL on_iter(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user)
{
	if (!*tag_ptr)
		tag_new(user, class_tag, size, length, tag_ptr);
	return 0;
}

/* Types of the objects first seen in a walk; a class that was never
 * registered is found through the object itself. */
static void resolve_news(jvmtiEnv *jvmti, JNIEnv *jni, struct walk *wk, uint32_t *types,
			 struct tstate *ts)
{
	for (size_t i = 0; i < wk->nnews; i++) {
		types[i] = sym_type_of_tag(wk->rec->sym, wk->news[i].class_tag);
		if (types[i] != HTR_NO_TYPE || !jni)
			continue;
		jlong tag = (jlong)wk->news[i].id;
		jint n = 0;
		jobject *objs = NULL;
		if ((*jvmti)->GetObjectsWithTags(jvmti, 1, &tag, &n, &objs, NULL) != JVMTI_ERROR_NONE)
			continue;
		if (n == 1) {
			jclass k = (*jni)->GetObjectClass(jni, objs[0]);
			if (k) {
				if (ts)
					pthread_mutex_lock(&ts->mu);
				types[i] = ts_type_of_class(wk->rec, jvmti, jni, k, ts);
				if (ts)
					pthread_mutex_unlock(&ts->mu);
				(*jni)->DeleteLocalRef(jni, k);
			}
		}
		for (jint j = 0; j < n; j++)
			(*jni)->DeleteLocalRef(jni, objs[j]);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)objs);
	}
}

/* The objects the iteration tagged and the trace records (a type),
 * ascending by id, with their class tags and sizes (rec->start), for
 * walk_check_start. */
static int note_start(struct recorder *rec, const struct walk *wk, const uint32_t *types)
{
	struct start_obj *so = malloc((wk->nnews + 1) * sizeof(*so));
	if (!so)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < wk->nnews; i++)
		if (types[i] != HTR_NO_TYPE)
			so[n++] = (struct start_obj){ wk->news[i].id, wk->news[i].class_tag, wk->news[i].size };
	rec->start = so;
	rec->nstart = n;
	return 0;
}

int walk_tag_preexisting(struct recorder *rec, jvmtiEnv *jvmti, JNIEnv *jni, struct tstate *ts)
{
	struct walk *wk = NULL;
	int rc = walk_new(rec, &wk);
	if (rc)
		return rc;
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.heap_iteration_callback = on_iter;
	if ((*jvmti)->IterateThroughHeap(jvmti, 0, NULL, &cb, wk) != JVMTI_ERROR_NONE || wk->oom) {
		walk_free(wk);
		return -EIO;
	}
	uint32_t *types = malloc((wk->nnews + 1) * sizeof(uint32_t));
	if (!types) {
		walk_free(wk);
		return -ENOMEM;
	}
	/* ts->mu is held by the caller: resolve without re-locking it */
	resolve_news(jvmti, jni, wk, types, NULL);
	for (size_t i = 0; i < wk->nnews; i++) {
		if (types[i] == HTR_NO_TYPE)
			continue;
		const struct wnew *n = &wk->news[i];
		struct arec r = { .id = n->id, .size = n->size, .time_ns = 0, .type = types[i],
				  .site = HTR_NO_SITE,
				  .length = sym_type_kind(rec->sym, types[i]) == HTR_TYPE_INSTANCE ? -1 : n->length,
				  .flags = HTR_ALLOC_PREEXISTING };
		ts_append(rec, ts, &r);
	}
	rc = rec->sampled ? note_start(rec, wk, types) : 0;
	free(types);
	walk_free(wk);
	return rc;
}

/* ---- writing a graph ------------------------------------------------------------ */

/* References of one referrer arrive together; runs of equal src, sorted. */
static struct run *make_runs(const struct walk *wk, size_t *nruns)
{
	size_t n = 0;
	for (size_t i = 0; i < wk->nedges; i++)
		if (!i || wk->edges[i].src != wk->edges[i - 1].src)
			n++;
	struct run *r = malloc((n + 1) * sizeof(*r));
	if (!r)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < wk->nedges; i++) {
		if (!i || wk->edges[i].src != wk->edges[i - 1].src)
			r[k++] = (struct run){ wk->edges[i].src, i, 0 };
		r[k - 1].count++;
	}
	qsort(r, n, sizeof(*r), cmp_run);
	*nruns = n;
	return r;
}

static int write_news(struct walk *wk, const uint32_t *types)
{
	int rc = 0;
	/* mode=sample: met by this walk only, never a sample (htr.h) */
	uint32_t flags = HTR_ALLOC_PREEXISTING | (wk->rec->sampled ? HTR_ALLOC_WALKED : 0);
	for (size_t i = 0; i < wk->nnews && !rc; i++) {
		const struct wnew *n = &wk->news[i];
		struct arec r = { .id = n->id, .size = n->size, .time_ns = wk->time_ns,
				  .type = types[i], .site = HTR_NO_SITE,
				  .length = sym_type_kind(wk->rec->sym, types[i]) == HTR_TYPE_INSTANCE ? -1 : n->length,
				  .flags = flags };
		if (r.type == HTR_NO_TYPE)
			r.type = sym_class_type(wk->rec->sym); /* unknown: should not happen */
		rc = recorder_write_rec(wk->rec, &r);
	}
	struct recorder *rec = wk->rec;
	for (size_t i = 0; i < wk->nmirrors && !rc; i++) {
		const struct wnew *m = &wk->mirrors[i];
		pthread_mutex_lock(&rec->deaths_mu);
		int unwritten = m->id - 1 < rec->mirror_unwritten_cap && rec->mirror_unwritten[m->id - 1];
		pthread_mutex_unlock(&rec->deaths_mu);
		if (!unwritten)
			continue;
		/* (its id is its class's tag, kept: a later walk writes it again,
		 * in its own GC's frame) */
		struct arec r = { .id = m->id, .size = m->size, .time_ns = wk->time_ns,
				  .type = sym_class_type(rec->sym), .site = HTR_NO_SITE, .length = -1,
				  .flags = flags };
		rc = recorder_write_rec(rec, &r);
	}
	if (wk->naliases)
		qsort(wk->aliases, wk->naliases, sizeof(*wk->aliases), cmp_alias);
	for (size_t i = 0; i < wk->naliases && !rc; i++) {
		const struct walias *a = &wk->aliases[i];
		struct arec r = { .id = a->to, .size = a->size, .time_ns = wk->time_ns, .type = a->type,
				  .site = HTR_NO_SITE, .length = a->length, .flags = flags };
		rc = recorder_write_rec(wk->rec, &r);
	}
	return rc;
}

static int write_roots(jvmtiEnv *jvmti, struct walk *wk, uint32_t gc)
{
	struct symbols *sym = wk->rec->sym;
	struct htr_writer *w = wk->rec->w;
	struct htr_root *out = malloc((wk->nroots + 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	int rc = 0;
	size_t n = 0;
	for (size_t i = 0; i < wk->nroots && !rc; i++) {
		const struct wroot *r = &wk->roots[i];
		struct htr_root h = { .kind = r->kind, .object = remap(wk, r->obj), .thread = r->thread,
				      .depth = r->depth, .slot = r->slot };
		if (r->kind == HTR_ROOT_LOCAL) {
			h.method = sym_method(sym, jvmti, r->method);
			if (h.method == UINT32_MAX)
				h.kind = HTR_ROOT_OTHER;
			else
				rc = sym_emit_method(sym, w, h.method);
		} else if (r->kind == HTR_ROOT_STATIC) {
			h.type = sym_type_of_tag(sym, r->aux);
			int32_t f = h.type == HTR_NO_TYPE ? -1 : sym_field_slot(sym, h.type, r->slot, 1);
			if (f < 0) {
				h.kind = HTR_ROOT_OTHER;
			} else {
				h.field = (uint32_t)f;
				h.slot = 0;
				rc = sym_emit_type(sym, w, h.type, 0);
			}
		}
		out[n++] = h;
	}
	if (!rc)
		rc = htr_write_roots(w, gc, (uint32_t)n, out);
	free(out);
	return rc;
}

/* Edges that are the referent field of a java.lang.ref.Reference (bit e
 * of *out set), or *out NULL when there is none. */
static int referent_edges(const struct walk *wk, uint64_t **out)
{
	struct symbols *sym = wk->rec->sym;
	uint64_t *b = NULL, cached_class = 0;
	uint32_t type = HTR_NO_TYPE;
	int32_t rslot = -1;
	int have = 0;
	for (size_t e = 0; e < wk->nedges; e++) {
		const struct wedge *ed = &wk->edges[e];
		if (ed->kind != EK_FIELD)
			continue;
		if (!have || ed->src_class != cached_class) {
			cached_class = ed->src_class;
			type = sym_type_of_tag(sym, ed->src_class);
			rslot = type != HTR_NO_TYPE ? sym_referent_slot(sym, type) : -1;
			have = 1;
		}
		if (rslot < 0 || sym_field_slot(sym, type, ed->index, 0) != rslot)
			continue;
		if (!b && !(b = calloc(wk->nedges / 64 + 1, sizeof(uint64_t))))
			return -ENOMEM;
		b[e >> 6] |= 1ull << (e & 63);
	}
	*out = b;
	return 0;
}

/* The objects reachable from the roots without following referents (the
 * walk of model/hprof_refs.c over the walk's own roots, which are the
 * trace's). */
static int strong_set(const struct walk *wk, const struct run *runs, size_t nruns, const uint64_t *refe,
		      uint64_t **out)
{
	uint64_t *mark = calloc(wk->seen_words + 1, sizeof(uint64_t));
	uint64_t *stack = NULL;
	size_t n = 0, cap = 0;
	int rc = mark ? 0 : -ENOMEM;
#define VISIT(x) do { \
		uint64_t x_ = (x); \
		if (!rc && (x_ >> 6) < wk->seen_words && !bit(mark, x_)) { \
			mark[x_ >> 6] |= 1ull << (x_ & 63); \
			if (n == cap) { \
				size_t c_ = cap ? cap * 2 : 4096; \
				uint64_t *p_ = realloc(stack, c_ * sizeof(*p_)); \
				if (!p_) rc = -ENOMEM; else { stack = p_; cap = c_; } \
			} \
			if (!rc) stack[n++] = x_; \
		} \
	} while (0)
	for (size_t i = 0; i < wk->nroots && !rc; i++)
		VISIT(wk->roots[i].obj);
	while (!rc && n) {
		uint64_t id = stack[--n];
		size_t lo = 0, hi = nruns; /* the first run of id */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (runs[mid].src < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nruns && runs[lo].src == id && !rc; lo++)
			for (size_t e = runs[lo].start; e < runs[lo].start + runs[lo].count && !rc; e++)
				if (!bit(refe, e))
					VISIT(wk->edges[e].dst);
	}
#undef VISIT
	free(stack);
	if (rc) {
		free(mark);
		return rc;
	}
	*out = mark;
	return 0;
}

/* The references of object id, from its runs, as trace slots; a referent
 * edge (refe) whose target is not in strong is left out. */
static int object_refs(const struct walk *wk, const struct run *runs, size_t nruns, size_t *ri,
		       uint64_t id, struct htr_ref **refs, size_t *cap, uint32_t *nrefs,
		       uint32_t class_nfields, const uint64_t *refe, const uint64_t *strong)
{
	uint32_t n = 0, classref = 0;
	uint32_t cached_type = HTR_NO_TYPE;
	uint64_t cached_class = 0;
	for (; *ri < nruns && runs[*ri].src == id; (*ri)++) {
		const struct run *r = &runs[*ri];
		if (n + r->count > *cap) {
			size_t c = (n + r->count) * 2;
			struct htr_ref *p = realloc(*refs, c * sizeof(*p));
			if (!p)
				return -ENOMEM;
			*refs = p;
			*cap = c;
		}
		for (size_t e = r->start; e < r->start + r->count; e++) {
			const struct wedge *ed = &wk->edges[e];
			int32_t slot = -1;
			if (refe && bit(refe, e) && ((ed->dst >> 6) >= wk->seen_words || !bit(strong, ed->dst)))
				continue;
			if (ed->kind == EK_ELEM) {
				slot = (int32_t)ed->index;
			} else if (ed->kind == EK_CLASSREF) {
				slot = (int32_t)(class_nfields + classref++);
			} else {
				if (ed->src_class != cached_class || cached_type == HTR_NO_TYPE) {
					cached_class = ed->src_class;
					cached_type = sym_type_of_tag(wk->rec->sym, ed->src_class);
				}
				if (cached_type != HTR_NO_TYPE)
					slot = sym_field_slot(wk->rec->sym, cached_type, ed->index, 0);
			}
			if (slot < 0)
				continue;
			(*refs)[n].slot = (uint32_t)slot;
			(*refs)[n].target = remap(wk, ed->dst);
			n++;
		}
	}
	*nrefs = n;
	return 0;
}

static int write_graph(struct walk *wk, uint64_t *nobjects)
{
	size_t nruns = 0, ri = 0, cap = 0;
	struct run *runs = make_runs(wk, &nruns);
	struct htr_ref *refs = NULL;
	uint64_t *refe = NULL, *strong = NULL;
	if (!runs)
		return -ENOMEM;
	int rc = referent_edges(wk, &refe);
	if (!rc && refe)
		rc = strong_set(wk, runs, nruns, refe, &strong);
	if (rc) {
		free(runs);
		free(refe);
		return rc;
	}
	struct htr_writer *w = wk->rec->w;
	uint32_t class_type = sym_class_type(wk->rec->sym);
	uint32_t class_nfields = class_type != HTR_NO_TYPE ? sym_nfields(wk->rec->sym, class_type) : 0;
	uint64_t count = 0;
	for (uint64_t word = 0; word < wk->seen_words && !rc; word++) {
		for (uint64_t bits = wk->seen[word]; bits && !rc; bits &= bits - 1) {
			uint64_t id = word * 64 + (uint64_t)__builtin_ctzll(bits);
			while (ri < nruns && runs[ri].src < id)
				ri++; /* a referrer not seen as an object: cannot happen */
			uint32_t n = 0;
			rc = object_refs(wk, runs, nruns, &ri, id, &refs, &cap, &n, class_nfields, refe, strong);
			if (!rc)
				rc = htr_write_graph_object(w, remap(wk, id), n, refs);
			count++;
		}
	}
	free(runs);
	free(refs);
	free(refe);
	free(strong);
	*nobjects = count;
	return rc;
}

int walk_write(struct walk *wk, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t gc, uint64_t *nobjects)
{
	uint32_t *types = malloc((wk->nnews + 1) * sizeof(uint32_t));
	if (!types)
		return -ENOMEM;
	resolve_news(jvmti, jni, wk, types, ts_current(wk->rec, jvmti, jni, NULL));
	int rc = write_news(wk, types);
	free(types);
	if (wk->news_only) {
		*nobjects = 0;
		return rc;
	}
	if (!rc)
		rc = write_roots(jvmti, wk, gc);
	if (!rc)
		rc = write_graph(wk, nobjects);
	return rc;
}

/* jfr_events.c - the typed records heapfs keeps from a checked chunk:
 * GCs, heap summaries, pauses, allocation events, old-object samples
 * with their reference chains, the JVM, settings, event counts; and the
 * classes, methods, stack traces and threads they name, interned over the
 * whole recording (one dense id for one class name and loader, one stack
 * trace, one thread, whatever chunk names them).
 *
 * Field names are those of the JDK's metadata (jfr metadata, or
 * src/hotspot/share/jfr/metadata/metadata.xml).  A field an event lacks
 * reads as absent (JFR_NONE, 0), as a constant-pool key the pools lack
 * reads as null in the JDK.  The chunk was checked first
 * (jfr_chunk_check), so decoding cannot fail here except for memory.
 */
#include <string.h>

#include "buf.h"
#include "jfr_internal.h"
#include "names.h"

enum { K_CLASS = 1, K_METHOD, K_STACK, K_THREAD };

#define GROW(t, ...) do { \
		void **cols_[] = { __VA_ARGS__ }; \
		size_t sz_[sizeof cols_ / sizeof cols_[0]]; \
		for (size_t i_ = 0; i_ < sizeof cols_ / sizeof cols_[0]; i_++) \
			sz_[i_] = 8; \
		int rc_ = jfr_grow(cols_, sz_, sizeof cols_ / sizeof cols_[0], &(t)->cap, (uint64_t)(t)->n + 2); \
		if (rc_) \
			return rc_; \
	} while (0)
/* (every column is given 8 bytes an element, the widest any has: simpler
 * than a size per column, and tables are small against the file) */

static uint32_t field(struct jfr_chunk_ctx *c, uint32_t obj, const char *name)
{
	return jfr_vfield(c, obj, name);
}

static int64_t fint(struct jfr_chunk_ctx *c, uint32_t obj, const char *name, int64_t def)
{
	return jfr_vint(c, field(c, obj, name), def);
}

static int64_t ftime(struct jfr_chunk_ctx *c, uint32_t obj, const char *name)
{
	return jfr_vtime(c, field(c, obj, name));
}

static int fstr(struct jfr_chunk_ctx *c, uint32_t obj, const char *name, uint32_t *sid)
{
	return jfr_vstr(c, field(c, obj, name), sid);
}

/* A cached dense id for a pool reference (kind, class, key). */
static int cached(struct jfr_chunk_ctx *c, int kind, uint32_t ref, uint32_t *id)
{
	uint64_t v;
	if (ref == JFR_NONE || c->vals.v[ref].kind != JV_REF)
		return 0;
	if (!jfr_map_get(&c->cache, (uint64_t)kind << 32 | c->vals.v[ref].cls, (uint64_t)c->vals.v[ref].i, &v))
		return 0;
	*id = (uint32_t)v;
	return 1;
}

static int remember(struct jfr_chunk_ctx *c, int kind, uint32_t ref, uint32_t id)
{
	if (ref == JFR_NONE || c->vals.v[ref].kind != JV_REF)
		return 0;
	return jfr_map_put(&c->cache, (uint64_t)kind << 32 | c->vals.v[ref].cls, (uint64_t)c->vals.v[ref].i, id);
}

static int class_id(struct jfr_chunk_ctx *c, uint32_t ref, uint32_t *id)
{
	struct jfr_classes *t = &c->rec->classes;
	uint32_t name, loader = JFR_NONE, mark = c->vals.n;
	uint64_t v;
	int rc;
	*id = JFR_NONE;
	if (cached(c, K_CLASS, ref, id))
		return 0;
	uint32_t obj = jfr_vobj(c, ref);
	if (obj == JFR_NONE)
		return c->rc;
	if ((rc = fstr(c, obj, "name", &name)))
		return rc;
	uint32_t lo = jfr_vobj(c, field(c, obj, "classLoader"));
	if (lo != JFR_NONE && (rc = fstr(c, lo, "name", &loader)))
		return rc;
	if (jfr_map_get(&c->intern->classes, name, loader, &v)) {
		*id = (uint32_t)v;
	} else {
		GROW(t, (void **)&t->name, (void **)&t->loader);
		t->name[t->n] = name;
		t->loader[t->n] = loader;
		*id = t->n++;
		if ((rc = jfr_map_put(&c->intern->classes, name, loader, *id)))
			return rc;
	}
	c->vals.n = mark;
	return remember(c, K_CLASS, ref, *id);
}

static int method_id(struct jfr_chunk_ctx *c, uint32_t ref, uint32_t *id)
{
	struct jfr_methods *t = &c->rec->methods;
	uint32_t cls, name, desc, mark = c->vals.n;
	uint64_t v;
	int rc;
	*id = JFR_NONE;
	if (cached(c, K_METHOD, ref, id))
		return 0;
	uint32_t obj = jfr_vobj(c, ref);
	if (obj == JFR_NONE)
		return c->rc;
	if ((rc = class_id(c, field(c, obj, "type"), &cls)) || (rc = fstr(c, obj, "name", &name)) ||
	    (rc = fstr(c, obj, "descriptor", &desc)))
		return rc;
	if (jfr_map_get(&c->intern->methods, cls, (uint64_t)name << 32 | desc, &v)) {
		*id = (uint32_t)v;
	} else {
		GROW(t, (void **)&t->cls, (void **)&t->name, (void **)&t->descriptor);
		t->cls[t->n] = cls;
		t->name[t->n] = name;
		t->descriptor[t->n] = desc;
		*id = t->n++;
		if ((rc = jfr_map_put(&c->intern->methods, cls, (uint64_t)name << 32 | desc, *id)))
			return rc;
	}
	c->vals.n = mark;
	return remember(c, K_METHOD, ref, *id);
}

static int frames_room(struct jfr_stacks *t, uint64_t need)
{
	void **cols[] = { (void **)&t->method, (void **)&t->line, (void **)&t->bci, (void **)&t->type };
	const size_t sz[] = { 4, 4, 4, 4 };
	return jfr_grow(cols, sz, 4, &t->frame_cap, need);
}

/* Appends the frames of array node arr after t->nframes (not yet
 * counted); *n how many. */
static int read_frames(struct jfr_chunk_ctx *c, uint32_t arr, uint64_t *n)
{
	struct jfr_stacks *t = &c->rec->stacks;
	int rc;
	*n = 0;
	if (arr == JFR_NONE || c->vals.v[arr].kind != JV_ARR)
		return 0;
	for (uint32_t k = arr + 1; k < c->vals.v[arr].end; k = c->vals.v[k].end) {
		uint32_t fr = jfr_vobj(c, k), m, type;
		uint64_t at = t->nframes + *n;
		if (fr == JFR_NONE)
			continue;
		if ((rc = frames_room(t, at + 1)) || (rc = method_id(c, field(c, fr, "method"), &m)) ||
		    (rc = fstr(c, fr, "type", &type)))
			return rc;
		t->method[at] = m;
		t->line[at] = (int32_t)fint(c, fr, "lineNumber", -1);
		t->bci[at] = (int32_t)fint(c, fr, "bytecodeIndex", -1);
		t->type[at] = type;
		(*n)++;
	}
	return c->rc;
}

static void stack_hash(const struct jfr_stacks *t, uint64_t from, uint64_t n, int truncated, uint64_t h[2])
{
	h[0] = name_hash64(&truncated, sizeof truncated) ^ n;
	h[1] = ~n;
	for (uint64_t i = from; i < from + n; i++) {
		uint32_t w[4] = { t->method[i], (uint32_t)t->line[i], (uint32_t)t->bci[i], t->type[i] };
		uint64_t x = name_hash64(w, sizeof w);
		h[0] = (h[0] ^ x) * 0x100000001b3ull;
		h[1] = (h[1] + x) * 0x9e3779b97f4a7c15ull + (h[1] >> 31);
	}
}

static int stack_id(struct jfr_chunk_ctx *c, uint32_t ref, uint32_t *id)
{
	struct jfr_stacks *t = &c->rec->stacks;
	uint32_t mark = c->vals.n;
	uint64_t n, h[2], v;
	int rc;
	*id = JFR_NONE;
	if (cached(c, K_STACK, ref, id))
		return 0;
	uint32_t obj = jfr_vobj(c, ref);
	if (obj == JFR_NONE)
		return c->rc;
	int truncated = fint(c, obj, "truncated", 0) != 0;
	if ((rc = read_frames(c, field(c, obj, "frames"), &n)))
		return rc;
	/* one id for one sequence of frames: a 128-bit hash of it */
	stack_hash(t, t->nframes, n, truncated, h);
	if (jfr_map_get(&c->intern->stacks, h[0], h[1], &v)) {
		*id = (uint32_t)v;
	} else {
		void **cols[] = { (void **)&t->frame_off, (void **)&t->truncated };
		const size_t sz[] = { 8, 1 };
		if ((rc = jfr_grow(cols, sz, 2, &t->cap, (uint64_t)t->n + 2)))
			return rc;
		t->frame_off[t->n] = t->nframes;
		t->truncated[t->n] = (uint8_t)truncated;
		t->nframes += n;
		t->frame_off[t->n + 1] = t->nframes;
		*id = t->n++;
		if ((rc = jfr_map_put(&c->intern->stacks, h[0], h[1], *id)))
			return rc;
	}
	c->vals.n = mark;
	return remember(c, K_STACK, ref, *id);
}

static int thread_id(struct jfr_chunk_ctx *c, uint32_t ref, uint32_t *id)
{
	struct jfr_threads *t = &c->rec->threads;
	uint32_t jn, on, mark = c->vals.n;
	uint64_t v, h[2];
	int rc;
	*id = JFR_NONE;
	if (cached(c, K_THREAD, ref, id))
		return 0;
	uint32_t obj = jfr_vobj(c, ref);
	if (obj == JFR_NONE)
		return c->rc;
	if ((rc = fstr(c, obj, "javaName", &jn)) || (rc = fstr(c, obj, "osName", &on)))
		return rc;
	int64_t w[4] = { fint(c, obj, "javaThreadId", -1), fint(c, obj, "osThreadId", -1), jn, on };
	h[0] = name_hash64(w, sizeof w);
	h[1] = (uint64_t)w[0] ^ (uint64_t)w[1] << 32 ^ (uint64_t)jn << 16;
	if (jfr_map_get(&c->intern->threads, h[0], h[1], &v)) {
		*id = (uint32_t)v;
	} else {
		GROW(t, (void **)&t->java_name, (void **)&t->os_name, (void **)&t->java_id, (void **)&t->os_id);
		t->java_name[t->n] = jn;
		t->os_name[t->n] = on;
		t->java_id[t->n] = w[0];
		t->os_id[t->n] = w[1];
		*id = t->n++;
		if ((rc = jfr_map_put(&c->intern->threads, h[0], h[1], *id)))
			return rc;
	}
	c->vals.n = mark;
	return remember(c, K_THREAD, ref, *id);
}

/* --- events ------------------------------------------------------------- */

static int ex_gc(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_gcs *t = &c->rec->gcs;
	GROW(t, (void **)&t->gc_id, (void **)&t->name, (void **)&t->cause, (void **)&t->start_ns,
	     (void **)&t->duration_ns, (void **)&t->sum_pauses_ns, (void **)&t->longest_pause_ns,
	     (void **)&t->generation);
	uint32_t k = t->n;
	int rc = fstr(c, e, "name", &t->name[k]);
	if (rc || (rc = fstr(c, e, "cause", &t->cause[k])))
		return rc;
	t->gc_id[k] = fint(c, e, "gcId", -1);
	t->start_ns[k] = ftime(c, e, "startTime");
	t->duration_ns[k] = ftime(c, e, "duration");
	t->sum_pauses_ns[k] = ftime(c, e, "sumOfPauses");
	t->longest_pause_ns[k] = ftime(c, e, "longestPause");
	t->generation[k] = 0;
	t->n++;
	return 0;
}

static int ex_generation(struct jfr_chunk_ctx *c, uint32_t e, int gen)
{
	return jfr_map_put(&c->intern->gen_by_gc, (uint64_t)fint(c, e, "gcId", -1), 0, (uint64_t)gen);
}

static int ex_young(struct jfr_chunk_ctx *c, uint32_t e)
{
	return ex_generation(c, e, 1);
}

static int ex_oldgc(struct jfr_chunk_ctx *c, uint32_t e)
{
	return ex_generation(c, e, 2);
}

static int ex_heap(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_heap_summaries *t = &c->rec->heap;
	GROW(t, (void **)&t->gc_id, (void **)&t->when, (void **)&t->start_ns, (void **)&t->heap_used,
	     (void **)&t->committed, (void **)&t->reserved);
	uint32_t k = t->n;
	int rc = fstr(c, e, "when", &t->when[k]);
	if (rc)
		return rc;
	uint32_t space = jfr_vobj(c, field(c, e, "heapSpace"));
	t->gc_id[k] = fint(c, e, "gcId", -1);
	t->start_ns[k] = ftime(c, e, "startTime");
	t->heap_used[k] = fint(c, e, "heapUsed", -1);
	t->committed[k] = space == JFR_NONE ? -1 : fint(c, space, "committedSize", -1);
	t->reserved[k] = space == JFR_NONE ? -1 : fint(c, space, "reservedSize", -1);
	t->n++;
	return c->rc;
}

static int ex_pause(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_gc_pauses *t = &c->rec->pauses;
	GROW(t, (void **)&t->gc_id, (void **)&t->name, (void **)&t->start_ns, (void **)&t->duration_ns);
	uint32_t k = t->n;
	int rc = fstr(c, e, "name", &t->name[k]);
	if (rc)
		return rc;
	t->gc_id[k] = fint(c, e, "gcId", -1);
	t->start_ns[k] = ftime(c, e, "startTime");
	t->duration_ns[k] = ftime(c, e, "duration");
	t->n++;
	return 0;
}

static int ex_alloc(struct jfr_chunk_ctx *c, uint32_t e, uint8_t kind)
{
	struct jfr_allocs *t = &c->rec->allocs;
	GROW(t, (void **)&t->kind, (void **)&t->start_ns, (void **)&t->cls, (void **)&t->stack,
	     (void **)&t->thread, (void **)&t->weight, (void **)&t->tlab_size);
	uint32_t k = t->n;
	int rc = class_id(c, field(c, e, "objectClass"), &t->cls[k]);
	if (rc || (rc = stack_id(c, field(c, e, "stackTrace"), &t->stack[k])) ||
	    (rc = thread_id(c, field(c, e, "eventThread"), &t->thread[k])))
		return rc;
	t->kind[k] = kind;
	t->start_ns[k] = ftime(c, e, "startTime");
	t->weight[k] = fint(c, e, kind == JFR_ALLOC_SAMPLE ? "weight" : "allocationSize", 0);
	t->tlab_size[k] = kind == JFR_ALLOC_NEW_TLAB ? fint(c, e, "tlabSize", 0) : 0;
	t->n++;
	return 0;
}

static int ex_sample(struct jfr_chunk_ctx *c, uint32_t e)
{
	return ex_alloc(c, e, JFR_ALLOC_SAMPLE);
}

static int ex_tlab(struct jfr_chunk_ctx *c, uint32_t e)
{
	return ex_alloc(c, e, JFR_ALLOC_NEW_TLAB);
}

static int ex_outside(struct jfr_chunk_ctx *c, uint32_t e)
{
	return ex_alloc(c, e, JFR_ALLOC_OUTSIDE_TLAB);
}

/* How an object holds the one before it in the chain (a Reference). */
struct hold {
	uint32_t field;
	int32_t modifiers, array_size, index, skip;
};

static int path_add(struct jfr_chunk_ctx *c, uint32_t obj, const struct hold *h)
{
	struct jfr_old_path *t = &c->rec->old_path;
	void **cols[] = { (void **)&t->address, (void **)&t->cls, (void **)&t->description, (void **)&t->ref_field,
			  (void **)&t->ref_modifiers, (void **)&t->ref_array_size, (void **)&t->ref_index,
			  (void **)&t->ref_skip };
	const size_t sz[] = { 8, 4, 4, 4, 4, 4, 4, 4 };
	int rc = jfr_grow(cols, sz, 8, &t->cap, t->n + 1);
	uint64_t k = t->n;
	if (rc || (rc = class_id(c, field(c, obj, "type"), &t->cls[k])) ||
	    (rc = fstr(c, obj, "description", &t->description[k])))
		return rc;
	t->address[k] = fint(c, obj, "address", 0);
	t->ref_field[k] = h->field;
	t->ref_modifiers[k] = h->modifiers;
	t->ref_array_size[k] = h->array_size;
	t->ref_index[k] = h->index;
	t->ref_skip[k] = h->skip;
	t->n++;
	return 0;
}

/* Reads a Reference: how its object holds the previous one; *next the
 * reference node to its object. */
static int read_hold(struct jfr_chunk_ctx *c, uint32_t ref, struct hold *h, uint32_t *next)
{
	uint32_t arr = jfr_vobj(c, field(c, ref, "array")), fld = jfr_vobj(c, field(c, ref, "field"));
	memset(h, 0, sizeof *h);
	h->field = JFR_NONE;
	h->array_size = h->index = -1;
	if (arr != JFR_NONE) {
		h->array_size = (int32_t)fint(c, arr, "size", -1);
		h->index = (int32_t)fint(c, arr, "index", -1);
	}
	if (fld != JFR_NONE) {
		int rc = fstr(c, fld, "name", &h->field);
		if (rc)
			return rc;
		h->modifiers = (int32_t)fint(c, fld, "modifiers", 0);
	}
	h->skip = (int32_t)fint(c, ref, "skip", 0);
	*next = field(c, ref, "object");
	return c->rc;
}

/* The chain from the sampled object towards the root, one hop at a time:
 * the nodes each hop decodes are dropped before the next, so that a long
 * chain costs no more memory than one hop. */
static int old_chain(struct jfr_chunk_ctx *c, uint32_t ref)
{
	struct hold h = { .field = JFR_NONE, .array_size = -1, .index = -1 };
	uint32_t mark = c->vals.n;
	int rc = 0;
	for (uint32_t hop = 0; hop < JFR_MAX_CHAIN && ref != JFR_NONE && !rc; hop++) {
		uint32_t obj = jfr_vobj(c, ref), next = JFR_NONE;
		if (obj == JFR_NONE || c->rec->old_path.n >= c->path_budget)
			break;
		if ((rc = path_add(c, obj, &h)))
			break;
		uint32_t r = jfr_vobj(c, field(c, obj, "referrer"));
		if (r == JFR_NONE || (rc = read_hold(c, r, &h, &next)))
			break;
		if (next == JFR_NONE || c->vals.v[next].kind != JV_REF)
			break;
		/* keep the next reference, drop the rest of this hop */
		struct jfr_val keep = c->vals.v[next];
		c->vals.n = mark;
		c->vals.v[mark] = keep;
		c->vals.v[mark].end = mark + 1;
		c->vals.n = mark + 1;
		ref = mark;
	}
	c->vals.n = mark;
	return rc ? rc : c->rc;
}

static int ex_old(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_old_samples *t = &c->rec->old;
	GROW(t, (void **)&t->start_ns, (void **)&t->alloc_ns, (void **)&t->age_ns, (void **)&t->heap_usage,
	     (void **)&t->array_elements, (void **)&t->stack, (void **)&t->thread, (void **)&t->root_description,
	     (void **)&t->root_system, (void **)&t->root_type, (void **)&t->path_off);
	uint32_t k = t->n;
	int rc = stack_id(c, field(c, e, "stackTrace"), &t->stack[k]);
	if (rc || (rc = thread_id(c, field(c, e, "eventThread"), &t->thread[k])))
		return rc;
	t->start_ns[k] = ftime(c, e, "startTime");
	t->alloc_ns[k] = ftime(c, e, "allocationTime");
	t->age_ns[k] = ftime(c, e, "objectAge");
	t->heap_usage[k] = fint(c, e, "lastKnownHeapUsage", -1);
	t->array_elements[k] = (int32_t)fint(c, e, "arrayElements", INT32_MIN);
	t->root_description[k] = t->root_system[k] = t->root_type[k] = JFR_NONE;
	uint32_t root = jfr_vobj(c, field(c, e, "root"));
	if (root != JFR_NONE &&
	    ((rc = fstr(c, root, "description", &t->root_description[k])) ||
	     (rc = fstr(c, root, "system", &t->root_system[k])) || (rc = fstr(c, root, "type", &t->root_type[k]))))
		return rc;
	t->path_off[k] = c->rec->old_path.n;
	if ((rc = old_chain(c, field(c, e, "object"))))
		return rc;
	t->path_off[k + 1] = c->rec->old_path.n;
	t->n++;
	return 0;
}

static int ex_jvm(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_jvm *j = &c->rec->jvm;
	int rc;
	if ((rc = fstr(c, e, "jvmName", &j->name)) || (rc = fstr(c, e, "jvmVersion", &j->version)) ||
	    (rc = fstr(c, e, "jvmArguments", &j->arguments)) || (rc = fstr(c, e, "jvmFlags", &j->flags)) ||
	    (rc = fstr(c, e, "javaArguments", &j->java_arguments)))
		return rc;
	j->start_ns = ftime(c, e, "jvmStartTime");
	j->pid = fint(c, e, "pid", -1);
	return 0;
}

static int ex_recording(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_active_recordings *t = &c->rec->recordings;
	GROW(t, (void **)&t->id, (void **)&t->name, (void **)&t->destination, (void **)&t->max_age_ns,
	     (void **)&t->max_size, (void **)&t->start_ns, (void **)&t->duration_ns);
	uint32_t k = t->n;
	int rc = fstr(c, e, "name", &t->name[k]);
	if (rc || (rc = fstr(c, e, "destination", &t->destination[k])))
		return rc;
	t->id[k] = fint(c, e, "id", -1);
	t->max_age_ns[k] = ftime(c, e, "maxAge");
	t->max_size[k] = fint(c, e, "maxSize", 0);
	t->start_ns[k] = ftime(c, e, "recordingStart");
	t->duration_ns[k] = ftime(c, e, "recordingDuration");
	t->n++;
	return 0;
}

static int ex_setting(struct jfr_chunk_ctx *c, uint32_t e)
{
	struct jfr_settings *t = &c->rec->settings;
	GROW(t, (void **)&t->type_id, (void **)&t->type_name, (void **)&t->name, (void **)&t->value);
	uint32_t k = t->n;
	uint64_t ci;
	int rc = fstr(c, e, "name", &t->name[k]);
	if (rc || (rc = fstr(c, e, "value", &t->value[k])))
		return rc;
	int64_t id = fint(c, e, "id", -1);
	t->type_id[k] = id;
	t->type_name[k] = jfr_map_get(&c->meta.by_id, (uint64_t)id, 0, &ci) ? c->meta.cls[ci].name_sid : JFR_NONE;
	t->n++;
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct jfr_chunk_ctx *c, uint32_t e);
} handlers[] = {
	{ NULL, NULL },
	{ "jdk.GarbageCollection", ex_gc },
	{ "jdk.YoungGarbageCollection", ex_young },
	{ "jdk.OldGarbageCollection", ex_oldgc },
	{ "jdk.GCHeapSummary", ex_heap },
	{ "jdk.GCPhasePause", ex_pause },
	{ "jdk.ObjectAllocationSample", ex_sample },
	{ "jdk.ObjectAllocationInNewTLAB", ex_tlab },
	{ "jdk.ObjectAllocationOutsideTLAB", ex_outside },
	{ "jdk.OldObjectSample", ex_old },
	{ "jdk.JVMInformation", ex_jvm },
	{ "jdk.ActiveRecording", ex_recording },
	{ "jdk.ActiveSetting", ex_setting },
};

static int count_event(struct jfr_chunk_ctx *c, uint32_t ci)
{
	struct jfr_event_counts *t = &c->rec->event_counts;
	if (!c->evcount[ci]) {
		uint64_t v;
		uint32_t sid = c->meta.cls[ci].name_sid;
		if (!jfr_map_get(&c->intern->events, sid, 0, &v)) {
			GROW(t, (void **)&t->name, (void **)&t->count);
			t->name[t->n] = sid;
			t->count[t->n] = 0;
			v = t->n++;
			int rc = jfr_map_put(&c->intern->events, sid, 0, v);
			if (rc)
				return rc;
		}
		c->evcount[ci] = (uint32_t)v + 1;
	}
	t->count[c->evcount[ci] - 1]++;
	return 0;
}

static void find_handlers(struct jfr_chunk_ctx *c)
{
	for (uint32_t ci = 0; ci < c->meta.ncls; ci++) {
		c->handler[ci] = 0;
		for (uint8_t h = 1; h < sizeof handlers / sizeof handlers[0] && c->meta.cls[ci].event; h++)
			if (strcmp(c->meta.cls[ci].name, handlers[h].name) == 0)
				c->handler[ci] = h;
	}
}

int jfr_chunk_extract(struct jfr_chunk_ctx *c)
{
	struct jfr_in in = { .base = c->rec->data, .pos = c->start + JFR_HEADER_SIZE, .compressed = c->compressed,
			     .err = c->err };
	int rc = 0;
	find_handlers(c);
	while (in.pos < c->end && !rc) {
		uint64_t at = in.pos, ci;
		int32_t size;
		int64_t type;
		uint32_t root;
		in.end = c->end;
		if ((rc = jin_int(&in, &size)) || (rc = jin_long(&in, &type)))
			break;
		if (size <= 0 || (uint64_t)size > c->end - at) { /* checked already: never */
			rc = htr_errf(c->err, -EBADMSG, at, "event size %d", size);
			break;
		}
		in.end = at + (uint64_t)size;
		if (type > 1 && jfr_map_get(&c->meta.by_id, (uint64_t)type, 0, &ci) && c->meta.cls[ci].event) {
			c->hdr->events++;
			if ((rc = count_event(c, (uint32_t)ci)))
				break;
			if (c->handler[ci]) {
				c->vals.n = 0;
				c->rc = 0;
				if (!(rc = jfr_decode(c, &in, (uint32_t)ci, JFR_NONE, &root)))
					rc = handlers[c->handler[ci]].fn(c, root);
				if (!rc)
					rc = c->rc;
			}
		}
		in.pos = at + (uint64_t)size;
	}
	return rc;
}

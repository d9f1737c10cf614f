/* synth_world.c - the simulated heap of `heapfs synth`; see synth_world.h. */
#include "synth_world.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

#define MIB (1024ull * 1024ull)
#define MAX_SITE_FRAMES 64
#define DEATH_CHUNK HTR_MAX_CHUNK

/* ---------------------------------------------------------------- PRNG */

void sw_rng_seed(struct sw_rng *r, uint64_t seed)
{
	r->s = seed ^ 0x6a09e667f3bcc909ull;
}

uint64_t sw_rng_next(struct sw_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t sw_rng_below(struct sw_rng *r, uint32_t n)
{
	/* Multiply-shift: unbiased enough for simulation, and portable. */
	return (uint32_t)(((sw_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ------------------------------------------------------------- errors */

int sw_fail(struct sw *w, int code, const char *fmt, ...)
{
	if (w->err)
		return w->err;
	w->err = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* Records a writer error (the writer returns negative errno). */
static void check_writer(struct sw *w, int rc, const char *what)
{
	if (rc && !w->err)
		sw_fail(w, rc, "writing %s: %s", what, strerror(-rc));
}

/* ------------------------------------------------------ open and close */

int sw_open(struct sw *w, const char *path, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	sw_rng_seed(&w->rng, seed);
	w->alloc_step_ns = 100;
	w->nobj = 1; /* id 0 is null */
	w->first_new = 1;
	w->min_live = 1;
	int rc = htr_writer_open(&w->hw, path, NULL);
	if (rc)
		return sw_fail(w, rc, "cannot create %s: %s", path, strerror(-rc));
	w->deathbuf = malloc(DEATH_CHUNK * sizeof(*w->deathbuf));
	if (!w->deathbuf)
		return sw_fail(w, -ENOMEM, "out of memory");
	sw_add_decls(w, sw_jdk_decls, sw_jdk_ndecls);
	return 0;
}

int sw_close(struct sw *w)
{
	if (w->hw) {
		if (w->err) {
			htr_writer_abandon(w->hw);
		} else {
			int rc = htr_writer_close(w->hw);
			check_writer(w, rc, "the footer");
		}
		w->hw = NULL;
	}
	for (uint32_t i = 0; i < w->ntypes; i++) {
		free(w->types[i].fields);
		free(w->types[i].ref_field);
	}
	free(w->methods);
	free(w->otype);
	free(w->aux);
	free(w->pool);
	free(w->live);
	free(w->mark);
	free(w->roots);
	free(w->stack);
	free(w->refbuf);
	free(w->deathbuf);
	free(w->rootbuf);
	return w->err;
}

void sw_info(struct sw *w, const char *key, const char *value)
{
	if (!w->err)
		check_writer(w, htr_write_info(w->hw, key, value), "info");
}

void sw_info_u64(struct sw *w, const char *key, uint64_t value)
{
	char s[32];
	snprintf(s, sizeof(s), "%llu", (unsigned long long)value);
	sw_info(w, key, s);
}

/* --------------------------------------------------------------- types */

void sw_add_decls(struct sw *w, const struct sw_type_decl *decls, uint32_t n)
{
	if (w->ntables >= sizeof(w->tables) / sizeof(w->tables[0])) {
		sw_fail(w, -E2BIG, "too many type tables");
		return;
	}
	w->tables[w->ntables] = decls;
	w->table_n[w->ntables] = n;
	w->ntables++;
}

static const struct sw_type_decl *find_decl(const struct sw *w, const char *name)
{
	for (uint32_t t = 0; t < w->ntables; t++)
		for (uint32_t i = 0; i < w->table_n[t]; i++)
			if (!strcmp(w->tables[t][i].name, name))
				return &w->tables[t][i];
	return NULL;
}

static uint32_t find_type(const struct sw *w, const char *name)
{
	for (uint32_t i = 0; i < w->ntypes; i++)
		if (!strcmp(w->types[i].def.name, name))
			return i;
	return HTR_NO_TYPE;
}

/* Bytes a field of this JVM descriptor takes (compressed oops). */
static uint32_t field_bytes(const char *sig)
{
	switch (sig[0]) {
	case 'J': case 'D': return 8;
	case 'I': case 'F': return 4;
	case 'S': case 'C': return 2;
	case 'B': case 'Z': return 1;
	default: return 4; /* L..; and [.. : compressed references */
	}
}

/* HotSpot-like instance size: 12-byte header, 8-byte fields aligned to 8
 * with the 4-byte gap after the header filled by smaller fields, total
 * aligned to 8. */
static uint32_t instance_size(const struct htr_field *f, uint32_t n)
{
	uint32_t wide = 0, small = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = field_bytes(f[i].sig);
		if (b == 8)
			wide += 8;
		else
			small += b;
	}
	uint32_t end = 12 + small + wide;
	if (wide && small < 4)
		end = 16 + wide;
	return (end + 7) & ~7u;
}

/* Defines one type whose super (if any) is already defined. */
static uint32_t define_type(struct sw *w, const struct sw_type_decl *d)
{
	if (w->ntypes >= SW_MAX_TYPES) {
		sw_fail(w, -E2BIG, "too many types");
		return HTR_NO_TYPE;
	}
	uint32_t super = d->super ? find_type(w, d->super) : HTR_NO_TYPE;
	const struct sw_type *st = super != HTR_NO_TYPE ? &w->types[super] : NULL;
	uint32_t ninh = st ? st->ninstance : 0;
	uint32_t nall = ninh + d->nfields;
	struct sw_type *t = &w->types[w->ntypes];
	memset(t, 0, sizeof(*t));
	t->fields = calloc(nall ? nall : 1, sizeof(*t->fields));
	t->ref_field = calloc(nall ? nall : 1, sizeof(*t->ref_field));
	if (!t->fields || !t->ref_field) {
		free(t->fields);
		free(t->ref_field);
		sw_fail(w, -ENOMEM, "out of memory");
		return HTR_NO_TYPE;
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < ninh; i++)
		t->fields[k++] = st->fields[i];
	/* own instance fields, then own statics */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < d->nfields; i++) {
			int is_static = (d->fields[i].flags & HTR_FIELD_STATIC) != 0;
			if (is_static != pass)
				continue;
			struct htr_field *f = &t->fields[k++];
			f->name = d->fields[i].name;
			f->sig = d->fields[i].sig;
			f->flags = d->fields[i].flags;
			if (!pass)
				t->ninstance = k;
		}
	if (!t->ninstance)
		t->ninstance = ninh;
	for (uint32_t i = 0; i < t->ninstance; i++)
		if (t->fields[i].flags & HTR_FIELD_REF)
			t->ref_field[t->nref++] = (uint16_t)i;
	t->words = t->nref + d->hidden;

	struct htr_type_def *def = &t->def;
	def->id = w->ntypes;
	def->name = d->name;
	def->kind = d->kind;
	def->elem_size = d->elem_size;
	def->super_id = super;
	def->nfields = nall;
	def->fields = t->fields;
	def->instance_size = d->kind == HTR_TYPE_INSTANCE ? instance_size(t->fields, t->ninstance) : 16;
	w->ntypes++;
	check_writer(w, htr_write_type(w->hw, def), "a type");
	return def->id;
}

uint32_t sw_type(struct sw *w, const char *name)
{
	if (w->err)
		return HTR_NO_TYPE;
	uint32_t id = find_type(w, name);
	if (id != HTR_NO_TYPE)
		return id;
	/* Walk up to the first defined super, then define downwards: no
	 * recursion, chains are short. */
	const struct sw_type_decl *chain[16];
	uint32_t n = 0;
	const char *cur = name;
	while (cur && find_type(w, cur) == HTR_NO_TYPE) {
		const struct sw_type_decl *d = find_decl(w, cur);
		if (!d) {
			sw_fail(w, -ENOENT, "internal: no declaration of type %s", cur);
			return HTR_NO_TYPE;
		}
		if (n == 16) {
			sw_fail(w, -ELOOP, "internal: super chain of %s too long", name);
			return HTR_NO_TYPE;
		}
		chain[n++] = d;
		cur = d->super;
	}
	while (n--) {
		id = define_type(w, chain[n]);
		if (id == HTR_NO_TYPE)
			return id;
	}
	return id;
}

uint32_t sw_field(struct sw *w, uint32_t type, const char *field)
{
	if (w->err || type >= w->ntypes)
		return 0;
	const struct sw_type *t = &w->types[type];
	for (uint32_t i = t->def.nfields; i-- > 0;) /* own fields shadow inherited */
		if (!strcmp(t->fields[i].name, field))
			return i;
	sw_fail(w, -ENOENT, "internal: type %s has no field %s", t->def.name, field);
	return 0;
}

uint32_t sw_slot(struct sw *w, uint32_t type, const char *field)
{
	uint32_t f = sw_field(w, type, field);
	if (w->err)
		return 0;
	const struct sw_type *t = &w->types[type];
	for (uint32_t s = 0; s < t->nref; s++)
		if (t->ref_field[s] == f)
			return s;
	sw_fail(w, -EINVAL, "internal: %s.%s is not an instance reference", t->def.name, field);
	return 0;
}

uint32_t sw_hidden(struct sw *w, uint32_t type, uint32_t k)
{
	if (w->err || type >= w->ntypes)
		return 0;
	const struct sw_type *t = &w->types[type];
	if (t->nref + k >= t->words) {
		sw_fail(w, -EINVAL, "internal: %s has no hidden word %u", t->def.name, k);
		return 0;
	}
	return t->nref + k;
}

uint64_t sw_size_of(const struct sw *w, uint32_t type, uint32_t len)
{
	const struct sw_type *t = &w->types[type];
	if (t->def.kind == HTR_TYPE_INSTANCE)
		return t->def.instance_size;
	return (16 + (uint64_t)t->def.elem_size * len + 7) & ~7ull;
}

/* ------------------------------------------- methods, sites, threads */

uint32_t sw_method(struct sw *w, const struct sw_frame *f)
{
	if (w->err)
		return 0;
	for (uint32_t i = 0; i < w->nmethods; i++) {
		const struct sw_frame *m = &w->methods[i];
		if (!strcmp(m->cls, f->cls) && !strcmp(m->name, f->name) && !strcmp(m->sig, f->sig))
			return i;
	}
	if (w->nmethods == w->methods_cap) {
		uint32_t cap = w->methods_cap ? w->methods_cap * 2 : 64;
		struct sw_frame *p = realloc(w->methods, cap * sizeof(*p));
		if (!p) {
			sw_fail(w, -ENOMEM, "out of memory");
			return 0;
		}
		w->methods = p;
		w->methods_cap = cap;
	}
	w->methods[w->nmethods] = *f;
	check_writer(w, htr_write_method(w->hw, w->nmethods, f->cls, f->name, f->sig, f->file),
		     "a method");
	return w->nmethods++;
}

uint32_t sw_site(struct sw *w, const struct sw_frame *inner, uint32_t ni,
		 const struct sw_frame *outer, uint32_t no)
{
	struct htr_site_frame fr[MAX_SITE_FRAMES];
	if (w->err)
		return HTR_NO_SITE;
	if (ni + no == 0 || ni + no > MAX_SITE_FRAMES) {
		sw_fail(w, -EINVAL, "internal: site with %u frames", ni + no);
		return HTR_NO_SITE;
	}
	for (uint32_t i = 0; i < ni + no; i++) {
		const struct sw_frame *f = i < ni ? &inner[i] : &outer[i - ni];
		fr[i].method = sw_method(w, f);
		fr[i].line = f->line;
	}
	if (w->err)
		return HTR_NO_SITE;
	check_writer(w, htr_write_site(w->hw, w->nsites, ni + no, fr), "a site");
	return w->nsites++;
}

uint64_t sw_thread(struct sw *w, const char *name)
{
	if (w->err)
		return 0;
	uint64_t id = ++w->nthreads;
	check_writer(w, htr_write_thread(w->hw, id, name), "a thread");
	return id;
}

/* ------------------------------------------------------------- objects */

static int grow_objects(struct sw *w)
{
	if (w->nobj < w->objcap)
		return 0;
	if (w->objcap >= UINT32_MAX / 2)
		return sw_fail(w, -EOVERFLOW, "more than 2^31 objects");
	uint32_t cap = w->objcap ? w->objcap * 2 : 1u << 16;
	uint16_t *ot = realloc(w->otype, (size_t)cap * sizeof(*ot));
	if (ot)
		w->otype = ot;
	uint32_t *ax = realloc(w->aux, (size_t)cap * sizeof(*ax));
	if (ax)
		w->aux = ax;
	size_t oldw = w->objcap / 64, neww = cap / 64;
	uint64_t *lv = realloc(w->live, neww * sizeof(*lv));
	if (lv)
		w->live = lv;
	uint64_t *mk = realloc(w->mark, neww * sizeof(*mk));
	if (mk)
		w->mark = mk;
	if (!ot || !ax || !lv || !mk)
		return sw_fail(w, -ENOMEM, "out of memory at %u objects", w->nobj);
	memset(w->live + oldw, 0, (neww - oldw) * sizeof(*lv));
	memset(w->mark + oldw, 0, (neww - oldw) * sizeof(*mk));
	w->objcap = cap;
	return 0;
}

/* Reserves words (zeroed) in the pool; returns the offset. */
static uint32_t pool_take(struct sw *w, uint64_t words)
{
	if (w->npool + words > UINT32_MAX) {
		sw_fail(w, -EOVERFLOW, "simulated heap too large (reference pool over 2^32 words)");
		return 0;
	}
	if (w->npool + words > w->poolcap) {
		uint64_t cap = w->poolcap ? w->poolcap : 1u << 16;
		while (cap < w->npool + words)
			cap *= 2;
		uint32_t *p = realloc(w->pool, cap * sizeof(*p));
		if (!p) {
			sw_fail(w, -ENOMEM, "out of memory (reference pool of %llu words)",
				(unsigned long long)cap);
			return 0;
		}
		w->pool = p;
		w->poolcap = cap;
	}
	uint32_t off = (uint32_t)w->npool;
	memset(w->pool + off, 0, words * sizeof(uint32_t));
	w->npool += words;
	return off;
}

static uint32_t alloc_obj(struct sw *w, uint32_t type, int64_t len, uint32_t site, uint64_t thread,
			  uint32_t flags)
{
	if (w->err || grow_objects(w))
		return 0;
	if (type >= w->ntypes) {
		sw_fail(w, -EINVAL, "internal: allocation of undefined type %u", type);
		return 0;
	}
	const struct sw_type *t = &w->types[type];
	uint32_t id = w->nobj;
	uint32_t aux = 0;
	if (t->def.kind == HTR_TYPE_INSTANCE) {
		if (t->words)
			aux = pool_take(w, t->words);
	} else if (t->def.kind == HTR_TYPE_OBJ_ARRAY) {
		aux = pool_take(w, (uint64_t)len + 1);
		if (!w->err)
			w->pool[aux] = (uint32_t)len;
	} else {
		aux = (uint32_t)len;
	}
	if (w->err)
		return 0;
	w->otype[id] = (uint16_t)type;
	w->aux[id] = aux;
	uint64_t size = sw_size_of(w, type, (uint32_t)len);
	struct htr_alloc a = {
		.id = id, .type = type, .site = site, .thread = thread, .size = size,
		.array_length = t->def.kind == HTR_TYPE_INSTANCE ? -1 : len,
		.time_ns = w->clock_ns, .flags = flags,
	};
	int rc = htr_write_alloc(w->hw, &a);
	if (rc) {
		check_writer(w, rc, "an allocation");
		return 0;
	}
	w->clock_ns += w->alloc_step_ns;
	w->new_bytes += size;
	w->nobj++;
	return id;
}

uint32_t sw_new(struct sw *w, uint32_t type, uint32_t site, uint64_t thread)
{
	return alloc_obj(w, type, -1, site, thread, 0);
}

uint32_t sw_new_array(struct sw *w, uint32_t type, uint32_t len, uint32_t site, uint64_t thread)
{
	return alloc_obj(w, type, len, site, thread, 0);
}

uint32_t sw_new_preexisting(struct sw *w, uint32_t type, int64_t len, uint64_t thread)
{
	return alloc_obj(w, type, len, HTR_NO_SITE, thread, HTR_ALLOC_PREEXISTING);
}

void sw_advance(struct sw *w, uint64_t ns)
{
	w->clock_ns += ns;
}

uint32_t sw_root_add(struct sw *w, const struct htr_root *r)
{
	if (w->err)
		return UINT32_MAX;
	if (w->nroots == w->roots_cap) {
		uint32_t cap = w->roots_cap ? w->roots_cap * 2 : 32;
		struct sw_root_slot *p = realloc(w->roots, cap * sizeof(*p));
		if (!p) {
			sw_fail(w, -ENOMEM, "out of memory");
			return UINT32_MAX;
		}
		w->roots = p;
		w->roots_cap = cap;
	}
	w->roots[w->nroots].r = *r;
	return w->nroots++;
}

/* ------------------------------------------------------------------ GC */

static inline int bit_get(const uint64_t *b, uint32_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void bit_set(uint64_t *b, uint32_t i)
{
	b[i >> 6] |= 1ull << (i & 63);
}

static int ensure_cap(struct sw *w, void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return sw_fail(w, -ENOMEM, "out of memory");
	*p = q;
	*cap = c;
	return 0;
}

/* Candidate = may be live now: live after the last GC, or born since. */
static inline int is_candidate(const struct sw *w, uint32_t id)
{
	return id >= w->first_new ? id < w->nobj : bit_get(w->live, id);
}

/* Marks target if new; pushes it.  Fails on a reference to an object that
 * died at an earlier GC (a scenario bug). */
static int mark_push(struct sw *w, uint32_t tgt, size_t *sp, struct sw_gc_result *r)
{
	if (bit_get(w->mark, tgt))
		return 0;
	if (tgt >= w->nobj || !is_candidate(w, tgt))
		return sw_fail(w, -EFAULT, "internal: reference to dead object %u", tgt);
	bit_set(w->mark, tgt);
	r->live_objects++;
	r->live_bytes += sw_size_of(w, w->otype[tgt], sw_alen(w, tgt));
	if (ensure_cap(w, (void **)&w->stack, &w->stack_cap, *sp + 1, sizeof(*w->stack)))
		return w->err;
	w->stack[(*sp)++] = tgt;
	return 0;
}

/* Words and count of the reference slots of an object: for arrays the
 * elements after the length word. */
static inline const uint32_t *ref_words(const struct sw *w, uint32_t id, uint32_t *n)
{
	const struct sw_type *t = &w->types[w->otype[id]];
	if (t->def.kind == HTR_TYPE_INSTANCE) {
		*n = t->nref;
		return w->pool + w->aux[id];
	}
	if (t->def.kind == HTR_TYPE_OBJ_ARRAY) {
		*n = w->pool[w->aux[id]];
		return w->pool + w->aux[id] + 1;
	}
	*n = 0;
	return NULL;
}

static int mark_all(struct sw *w, struct sw_gc_result *r)
{
	memset(w->mark, 0, (w->objcap / 64) * sizeof(*w->mark));
	size_t sp = 0;
	for (uint32_t i = 0; i < w->nroots && !w->err; i++)
		if (w->roots[i].r.object)
			mark_push(w, (uint32_t)w->roots[i].r.object, &sp, r);
	while (sp && !w->err) {
		uint32_t id = w->stack[--sp], n;
		const uint32_t *ref = ref_words(w, id, &n);
		for (uint32_t k = 0; k < n; k++) {
			if (ref[k] && mark_push(w, ref[k], &sp, r))
				return w->err;
		}
	}
	return w->err;
}

static int write_roots(struct sw *w)
{
	if (ensure_cap(w, (void **)&w->rootbuf, &w->rootbuf_cap, w->nroots + 1, sizeof(*w->rootbuf)))
		return w->err;
	uint32_t n = 0;
	for (uint32_t i = 0; i < w->nroots; i++)
		if (w->roots[i].r.object)
			w->rootbuf[n++] = w->roots[i].r;
	check_writer(w, htr_write_roots(w->hw, w->gc_no, n, w->rootbuf), "roots");
	return w->err;
}

static int write_object(struct sw *w, uint32_t id)
{
	const struct sw_type *t = &w->types[w->otype[id]];
	uint32_t n;
	const uint32_t *ref = ref_words(w, id, &n);
	if (ensure_cap(w, (void **)&w->refbuf, &w->refbuf_cap, n + 1, sizeof(*w->refbuf)))
		return w->err;
	uint32_t k = 0;
	int inst = t->def.kind == HTR_TYPE_INSTANCE;
	for (uint32_t s = 0; s < n; s++) {
		if (!ref[s])
			continue;
		w->refbuf[k].slot = inst ? t->ref_field[s] : s;
		w->refbuf[k].target = ref[s];
		k++;
	}
	int rc = htr_write_graph_object(w->hw, id, k, w->refbuf);
	check_writer(w, rc, "the graph");
	return w->err;
}

static int write_graph(struct sw *w)
{
	uint32_t words = (w->nobj + 63) / 64;
	for (uint32_t wi = w->min_live / 64; wi < words && !w->err; wi++) {
		uint64_t m = w->mark[wi];
		while (m) {
			uint32_t id = wi * 64 + (uint32_t)__builtin_ctzll(m);
			m &= m - 1;
			if (write_object(w, id))
				return w->err;
		}
	}
	return w->err;
}

/* Candidates of word wi as a bit mask. */
static uint64_t candidate_word(const struct sw *w, uint32_t wi)
{
	uint64_t lo = (uint64_t)wi * 64, c = 0;
	for (uint32_t b = 0; b < 64; b++) {
		uint64_t id = lo + b;
		if (id >= w->first_new && id < w->nobj)
			c |= 1ull << b;
	}
	if (lo < w->first_new)
		c |= w->live[wi] & (lo + 64 <= w->first_new ? ~0ull
					: ((1ull << (w->first_new - lo)) - 1));
	return c;
}

static int write_deaths(struct sw *w, struct sw_gc_result *r)
{
	uint32_t words = (w->nobj + 63) / 64, n = 0;
	for (uint32_t wi = w->min_live / 64; wi < words && !w->err; wi++) {
		uint64_t lo = (uint64_t)wi * 64;
		uint64_t cand = (lo + 64 <= w->first_new) ? w->live[wi]
				 : (lo >= w->first_new && lo + 64 <= w->nobj) ? ~0ull
				 : candidate_word(w, wi);
		uint64_t dead = cand & ~w->mark[wi];
		while (dead) {
			uint32_t id = (uint32_t)(lo + (uint64_t)__builtin_ctzll(dead));
			dead &= dead - 1;
			r->dead_objects++;
			r->dead_bytes += sw_size_of(w, w->otype[id], sw_alen(w, id));
			w->deathbuf[n++] = id;
			if (n == DEATH_CHUNK) {
				check_writer(w, htr_write_deaths(w->hw, w->gc_no, n, w->deathbuf), "deaths");
				n = 0;
			}
		}
	}
	if (n && !w->err)
		check_writer(w, htr_write_deaths(w->hw, w->gc_no, n, w->deathbuf), "deaths");
	return w->err;
}

static uint64_t capacity_for(uint64_t prev, uint64_t used)
{
	uint64_t c = (2 * used + 64 * MIB - 1) / (64 * MIB) * (64 * MIB);
	if (c < 256 * MIB)
		c = 256 * MIB;
	return c > prev ? c : prev;
}

int sw_gc(struct sw *w, const struct sw_gc_spec *spec, struct sw_gc_result *res)
{
	struct sw_gc_result r;
	memset(&r, 0, sizeof(r));
	if (w->err)
		return w->err;
	if (mark_all(w, &r))
		return w->err;
	w->gc_no++;
	progress_set(progress_here(), w->gc_no);
	uint64_t used_before = w->live_bytes + w->new_bytes;
	w->capacity = capacity_for(w->capacity, used_before);
	uint64_t earliest = w->clock_ns + 100000; /* 0.1 ms after the last allocation */
	r.start_ns = spec->start_ns > earliest ? spec->start_ns : earliest;
	uint64_t pause = spec->pause_ns ? spec->pause_ns : 1000000 + r.live_bytes;
	r.end_ns = r.start_ns + pause;

	struct htr_gc_event ev = {
		.gc = w->gc_no, .time_ns = r.start_ns, .used = used_before,
		.capacity = w->capacity, .flags = spec->flags, .cause = spec->cause,
	};
	check_writer(w, htr_write_gc_start(w->hw, &ev), "a GC start");
	if (w->err || write_roots(w) || write_graph(w) || write_deaths(w, &r))
		return w->err;
	ev.time_ns = r.end_ns;
	ev.used = r.live_bytes;
	/* The graph just written is exactly the marked set: its count and
	 * size sum are the reachable objects and bytes, known without a
	 * rebuild (format 1.2). */
	ev.flags = spec->flags | HTR_GC_HAS_GRAPH | HTR_GC_HAS_REACHABLE;
	ev.reachable_objects = r.live_objects;
	ev.reachable_bytes = r.live_bytes;
	ev.cause = NULL;
	check_writer(w, htr_write_gc_end(w->hw, &ev), "a GC end");
	if (w->err)
		return w->err;

	/* The marked set is the new live set. */
	uint64_t *t = w->live;
	w->live = w->mark;
	w->mark = t;
	w->first_new = w->nobj;
	w->live_bytes = r.live_bytes;
	w->new_bytes = 0;
	uint32_t words = (w->nobj + 63) / 64, wi = w->min_live / 64;
	while (wi < words && !w->live[wi])
		wi++;
	w->min_live = wi * 64 > w->nobj ? w->nobj : wi * 64;
	if (w->min_live == 0)
		w->min_live = 1;
	w->clock_ns = r.end_ns + w->alloc_step_ns;
	if (res)
		*res = r;
	return 0;
}

/* classfile.c - see classfile.h. */
#include "agent/classfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: everything a class owns, released at once ------------------- */

struct cf_arena {
	struct cf_arena *next;
	size_t used, cap;
	_Alignas(16) uint8_t mem[];
};

void *cf_alloc(struct cf_class *c, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct cf_arena *a = c->arena;
	if (!a || a->cap - a->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		struct cf_arena *b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a;
		b->used = 0;
		b->cap = cap;
		c->arena = a = b;
	}
	void *p = a->mem + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void cf_free(struct cf_class *c)
{
	if (!c)
		return;
	struct cf_arena *a = c->arena;
	while (a) {
		struct cf_arena *n = a->next;
		free(a);
		a = n;
	}
	free(c->cp_tag);
	free(c->cp_ptr);
	free(c->cp_hash);
	free(c);
}

/* ---- big-endian reading with bounds ------------------------------------ */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint8_t r_u1(struct rd *r)
{
	if (r->end - r->p < 1) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static uint16_t r_u2(struct rd *r)
{
	if (r->end - r->p < 2) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	uint16_t v = (uint16_t)(r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return v;
}

static uint32_t r_u4(struct rd *r)
{
	if (r->end - r->p < 4) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return v;
}

static const uint8_t *r_skip(struct rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	return p;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int32_t be32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* ---- constant pool ------------------------------------------------------ */

/* Bytes an entry takes after its tag; -1 for an unknown tag. */
static long cp_entry_len(uint8_t tag, const uint8_t *p, const uint8_t *end)
{
	switch (tag) {
	case CP_UTF8:
		return end - p < 2 ? -1 : 2 + be16(p);
	case CP_INTEGER: case CP_FLOAT: case CP_FIELDREF: case CP_METHODREF: case CP_IMETHODREF:
	case CP_NAMETYPE: case CP_DYNAMIC: case CP_INVOKEDYNAMIC:
		return 4;
	case CP_LONG: case CP_DOUBLE:
		return 8;
	case CP_CLASS: case CP_STRING: case CP_METHODTYPE: case CP_MODULE: case CP_PACKAGE:
		return 2;
	case CP_METHODHANDLE:
		return 3;
	default:
		return -1;
	}
}

static int cp_grow(struct cf_class *c, uint32_t need)
{
	if (need <= c->cp_cap)
		return 0;
	uint32_t cap = c->cp_cap ? c->cp_cap * 2 : 64;
	while (cap < need)
		cap *= 2;
	uint8_t *t = realloc(c->cp_tag, cap);
	if (!t)
		return -ENOMEM;
	c->cp_tag = t;
	const uint8_t **p = realloc(c->cp_ptr, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->cp_ptr = p;
	memset(c->cp_tag + c->cp_cap, 0, cap - c->cp_cap);
	c->cp_cap = cap;
	return 0;
}

static int parse_pool(struct cf_class *c, struct rd *r)
{
	c->cp_count = r_u2(r);
	if (r->bad || c->cp_count == 0)
		return -EINVAL;
	int rc = cp_grow(c, c->cp_count);
	if (rc)
		return rc;
	for (uint32_t i = 1; i < c->cp_count; i++) {
		uint8_t tag = r_u1(r);
		long len = r->bad ? -1 : cp_entry_len(tag, r->p, r->end);
		if (len < 0 || r->end - r->p < len)
			return -EINVAL;
		c->cp_tag[i] = tag;
		c->cp_ptr[i] = r->p;
		r->p += len;
		/* the next slot is unusable, and must exist (JVMS 4.4.5): a
		 * long or double in the last slot would make the entries a
		 * writer appends start one index later than cp_count says */
		if ((tag == CP_LONG || tag == CP_DOUBLE) && ++i >= c->cp_count)
			return -EINVAL;
	}
	return r->bad ? -EINVAL : 0;
}

const char *cf_utf8(const struct cf_class *c, uint16_t idx, uint16_t *len)
{
	if (idx == 0 || idx >= c->cp_count || c->cp_tag[idx] != CP_UTF8)
		return NULL;
	*len = be16(c->cp_ptr[idx]);
	return (const char *)c->cp_ptr[idx] + 2;
}

int cf_utf8_eq(const struct cf_class *c, uint16_t idx, const char *s)
{
	uint16_t len;
	const char *u = cf_utf8(c, idx, &len);
	return u && strlen(s) == len && !memcmp(u, s, len);
}

uint16_t cf_class_name(const struct cf_class *c, uint16_t idx)
{
	if (idx == 0 || idx >= c->cp_count || c->cp_tag[idx] != CP_CLASS)
		return 0;
	return be16(c->cp_ptr[idx]);
}

int cf_ref_parts(const struct cf_class *c, uint16_t idx, uint16_t *cls, uint16_t *name, uint16_t *desc)
{
	if (idx == 0 || idx >= c->cp_count ||
	    (c->cp_tag[idx] != CP_FIELDREF && c->cp_tag[idx] != CP_METHODREF && c->cp_tag[idx] != CP_IMETHODREF))
		return -EINVAL;
	uint16_t nat = be16(c->cp_ptr[idx] + 2);
	if (nat == 0 || nat >= c->cp_count || c->cp_tag[nat] != CP_NAMETYPE)
		return -EINVAL;
	*cls = cf_class_name(c, be16(c->cp_ptr[idx]));
	*name = be16(c->cp_ptr[nat]);
	*desc = be16(c->cp_ptr[nat] + 2);
	return 0;
}

uint16_t cf_ref_name(const struct cf_class *c, uint16_t idx)
{
	uint16_t cls, name, desc;
	return cf_ref_parts(c, idx, &cls, &name, &desc) ? 0 : name;
}

/* ---- finding pool entries ----------------------------------------------
 * The table holds, for every (tag, body) in the pool, the first index with
 * it: what a scan from index 1 would find.  Entries were checked by
 * parse_pool, so their lengths are known from the tag. */

static size_t cp_body_len(uint8_t tag, const uint8_t *p)
{
	long n = cp_entry_len(tag, p, p + 2);
	return n < 0 ? 0 : (size_t)n;
}

/* FNV-1a over the tag and the body. */
static uint32_t cp_hash_of(uint8_t tag, const uint8_t *body, size_t n)
{
	uint32_t h = 2166136261u ^ tag;
	h *= 16777619u;
	for (size_t i = 0; i < n; i++) {
		h ^= body[i];
		h *= 16777619u;
	}
	return h;
}

/* The slot of (tag, body): holding its index, or empty (0). */
static uint32_t cp_hash_slot(const struct cf_class *c, uint8_t tag, const uint8_t *body, size_t n)
{
	uint32_t mask = c->cp_hash_cap - 1, s = cp_hash_of(tag, body, n) & mask;
	for (;; s = (s + 1) & mask) {
		uint16_t i = c->cp_hash[s];
		/* a Utf8's length first: memcmp may read all n bytes */
		if (!i || (c->cp_tag[i] == tag && cp_body_len(tag, c->cp_ptr[i]) == n && !memcmp(c->cp_ptr[i], body, n)))
			return s;
	}
}

/* Notes index i, unless an earlier index has the same entry. */
static void cp_hash_put(struct cf_class *c, uint16_t i)
{
	size_t n = cp_body_len(c->cp_tag[i], c->cp_ptr[i]);
	uint32_t s = cp_hash_slot(c, c->cp_tag[i], c->cp_ptr[i], n);
	if (!c->cp_hash[s]) {
		c->cp_hash[s] = i;
		c->cp_hash_n++;
	}
}

/* (Re)builds the table at least twice as large as the pool may become. */
static int cp_hash_build(struct cf_class *c, uint32_t entries)
{
	uint32_t cap = 64;
	while (cap < 2 * entries)
		cap *= 2;
	uint16_t *t = calloc(cap, sizeof *t);
	if (!t)
		return -ENOMEM;
	free(c->cp_hash);
	c->cp_hash = t;
	c->cp_hash_cap = cap;
	c->cp_hash_n = 0;
	for (uint32_t i = 1; i < c->cp_count; i++)
		if (c->cp_tag[i])
			cp_hash_put(c, (uint16_t)i);
	return 0;
}

/* Appends one entry (tag + body bytes copied into the arena). */
static uint16_t cp_append(struct cf_class *c, uint8_t tag, const uint8_t *body, size_t n)
{
	if (c->cp_count >= 65535 || cp_grow(c, (uint32_t)c->cp_count + 1))
		return 0;
	if (c->cp_hash && 2 * (c->cp_hash_n + 1) > c->cp_hash_cap &&
	    cp_hash_build(c, 2 * (uint32_t)c->cp_count))
		return 0;
	uint8_t *p = cf_alloc(c, n ? n : 1);
	if (!p)
		return 0;
	memcpy(p, body, n);
	uint16_t idx = c->cp_count++;
	c->cp_tag[idx] = tag;
	c->cp_ptr[idx] = p;
	if (c->cp_hash)
		cp_hash_put(c, idx);
	return idx;
}

/* The first index holding (tag, body[0..n)), or 0: also when the table
 * cannot be built (out of memory), which makes the caller's append fail
 * too. */
static uint16_t cp_find(struct cf_class *c, uint8_t tag, const uint8_t *body, size_t n)
{
	if (!c->cp_hash && cp_hash_build(c, c->cp_count))
		return 0;
	return c->cp_hash[cp_hash_slot(c, tag, body, n)];
}

uint16_t cf_cp_utf8(struct cf_class *c, const char *s, size_t len)
{
	/* the entry's body (length, bytes) to look up: on the stack for the
	 * names the instrumenter asks for every method ("Code", ...) */
	if (len > 65535)
		return 0;
	uint8_t small[256], *b = len + 2 <= sizeof small ? small : malloc(len + 2);
	if (!b)
		return 0;
	b[0] = (uint8_t)(len >> 8);
	b[1] = (uint8_t)len;
	memcpy(b + 2, s, len);
	uint16_t idx = cp_find(c, CP_UTF8, b, len + 2);
	if (!idx)
		idx = cp_append(c, CP_UTF8, b, len + 2);
	if (b != small)
		free(b);
	return idx;
}

static uint16_t cp_ref2(struct cf_class *c, uint8_t tag, uint16_t a)
{
	uint8_t b[2] = { (uint8_t)(a >> 8), (uint8_t)a };
	uint16_t i = cp_find(c, tag, b, 2);
	return i ? i : cp_append(c, tag, b, 2);
}

static uint16_t cp_ref4(struct cf_class *c, uint8_t tag, uint16_t a, uint16_t x)
{
	uint8_t b[4] = { (uint8_t)(a >> 8), (uint8_t)a, (uint8_t)(x >> 8), (uint8_t)x };
	uint16_t i = cp_find(c, tag, b, 4);
	return i ? i : cp_append(c, tag, b, 4);
}

uint16_t cf_cp_class(struct cf_class *c, const char *name, size_t len)
{
	uint16_t u = cf_cp_utf8(c, name, len);
	return u ? cp_ref2(c, CP_CLASS, u) : 0;
}

uint16_t cf_cp_long(struct cf_class *c, int64_t v)
{
	uint64_t x = (uint64_t)v;
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(x >> (56 - 8 * i));
	uint16_t i = cp_find(c, CP_LONG, b, 8);
	if (i)
		return i;
	/* a long takes two slots, the second unusable */
	if (c->cp_count >= 65534 || cp_grow(c, (uint32_t)c->cp_count + 2) || !(i = cp_append(c, CP_LONG, b, 8)))
		return 0;
	c->cp_tag[c->cp_count] = 0;
	c->cp_ptr[c->cp_count] = NULL;
	c->cp_count++;
	return i;
}

uint16_t cf_cp_integer(struct cf_class *c, int32_t v)
{
	uint32_t x = (uint32_t)v;
	uint8_t b[4] = { (uint8_t)(x >> 24), (uint8_t)(x >> 16), (uint8_t)(x >> 8), (uint8_t)x };
	uint16_t i = cp_find(c, CP_INTEGER, b, 4);
	return i ? i : cp_append(c, CP_INTEGER, b, 4);
}

/* A Fieldref or Methodref (tag) to owner.name:desc, found or appended. */
static uint16_t cp_memberref(struct cf_class *c, uint8_t tag, const char *owner, const char *name,
			     const char *desc)
{
	uint16_t k = cf_cp_class(c, owner, strlen(owner));
	uint16_t n = cf_cp_utf8(c, name, strlen(name));
	uint16_t d = cf_cp_utf8(c, desc, strlen(desc));
	if (!k || !n || !d)
		return 0;
	uint16_t nt = cp_ref4(c, CP_NAMETYPE, n, d);
	return nt ? cp_ref4(c, tag, k, nt) : 0;
}

uint16_t cf_cp_fieldref(struct cf_class *c, const char *owner, const char *name, const char *desc)
{
	return cp_memberref(c, CP_FIELDREF, owner, name, desc);
}

uint16_t cf_cp_methodref(struct cf_class *c, const char *owner, const char *name, const char *desc)
{
	return cp_memberref(c, CP_METHODREF, owner, name, desc);
}

/* ---- attributes --------------------------------------------------------- */

static int parse_attrs(struct cf_class *c, struct rd *r, struct cf_attr **out, uint32_t *n)
{
	*n = r_u2(r);
	*out = cf_alloc(c, (*n ? *n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint32_t i = 0; i < *n; i++) {
		(*out)[i].name = r_u2(r);
		(*out)[i].len = r_u4(r);
		(*out)[i].data = r_skip(r, (*out)[i].len);
	}
	return r->bad ? -EINVAL : 0;
}

static int parse_vtypes(struct cf_class *c, struct rd *r, uint16_t n, struct cf_vtype **out)
{
	*out = cf_alloc(c, (n ? n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint16_t i = 0; i < n; i++) {
		uint8_t t = r_u1(r);
		if (t > VT_UNINIT)
			return -EINVAL;
		(*out)[i].tag = t;
		if (t == VT_OBJECT || t == VT_UNINIT)
			(*out)[i].val = r_u2(r);
	}
	return r->bad ? -EINVAL : 0;
}

static int parse_smt(struct cf_class *c, struct rd *r, struct cf_code_attr *a)
{
	uint16_t n = r_u2(r);
	struct cf_frame *f = cf_alloc(c, (n ? n : 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	int64_t prev = -1;
	for (uint16_t i = 0; i < n && !r->bad; i++) {
		uint8_t t = r_u1(r);
		uint32_t delta;
		int rc = 0;
		f[i].type = t;
		if (t < 64) {
			delta = t;
		} else if (t < 128) {
			delta = t - 64u;
			f[i].nstack = 1;
			rc = parse_vtypes(c, r, 1, &f[i].stack);
		} else if (t < 247) {
			return -EINVAL; /* reserved */
		} else if (t == 247) {
			delta = r_u2(r);
			f[i].nstack = 1;
			rc = parse_vtypes(c, r, 1, &f[i].stack);
		} else if (t <= 251) {
			delta = r_u2(r);
		} else if (t <= 254) {
			delta = r_u2(r);
			f[i].nlocals = (uint16_t)(t - 251);
			rc = parse_vtypes(c, r, f[i].nlocals, &f[i].locals);
		} else {
			delta = r_u2(r);
			f[i].nlocals = r_u2(r);
			rc = parse_vtypes(c, r, f[i].nlocals, &f[i].locals);
			if (!rc) {
				f[i].nstack = r_u2(r);
				rc = parse_vtypes(c, r, f[i].nstack, &f[i].stack);
			}
		}
		if (rc)
			return rc;
		prev = i == 0 ? (int64_t)delta : prev + 1 + delta;
		f[i].bci = (uint32_t)prev;
	}
	a->u.smt.f = f;
	a->u.smt.n = n;
	return r->bad ? -EINVAL : 0;
}

static int parse_code_attr(struct cf_class *c, struct rd *r, struct cf_code_attr *a)
{
	a->raw.name = r_u2(r);
	a->raw.len = r_u4(r);
	const uint8_t *data = r_skip(r, a->raw.len);
	if (r->bad)
		return -EINVAL;
	a->raw.data = data;
	struct rd sub = { data, data + a->raw.len, 0 };
	int rc = 0;
	if (cf_utf8_eq(c, a->raw.name, "StackMapTable")) {
		a->kind = CA_SMT;
		rc = parse_smt(c, &sub, a);
	} else if (cf_utf8_eq(c, a->raw.name, "LineNumberTable")) {
		a->kind = CA_LNT;
		uint16_t n = r_u2(&sub);
		a->u.lnt.n = n;
		a->u.lnt.e = cf_alloc(c, (n ? n : 1) * sizeof(struct cf_line));
		if (!a->u.lnt.e)
			return -ENOMEM;
		for (uint16_t i = 0; i < n; i++) {
			a->u.lnt.e[i].start = r_u2(&sub);
			a->u.lnt.e[i].line = r_u2(&sub);
		}
	} else if (cf_utf8_eq(c, a->raw.name, "LocalVariableTable") ||
		   cf_utf8_eq(c, a->raw.name, "LocalVariableTypeTable")) {
		a->kind = cf_utf8_eq(c, a->raw.name, "LocalVariableTable") ? CA_LVT : CA_LVTT;
		uint16_t n = r_u2(&sub);
		a->u.lvt.n = n;
		a->u.lvt.e = cf_alloc(c, (n ? n : 1) * sizeof(struct cf_local));
		if (!a->u.lvt.e)
			return -ENOMEM;
		for (uint16_t i = 0; i < n; i++) {
			struct cf_local *l = &a->u.lvt.e[i];
			l->start = r_u2(&sub);
			l->len = r_u2(&sub);
			l->name = r_u2(&sub);
			l->desc = r_u2(&sub);
			l->index = r_u2(&sub);
		}
	} else {
		a->kind = CA_RAW;
		return 0;
	}
	/* a parsed attribute must be exactly its declared length, or the
	 * writer would not reproduce it */
	if (rc == 0 && (sub.bad || sub.p != sub.end))
		rc = -EINVAL;
	return rc;
}

static int parse_code(struct cf_class *c, const struct cf_attr *at, struct cf_code **out)
{
	struct rd r = { at->data, at->data + at->len, 0 };
	struct cf_code *k = cf_alloc(c, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->max_stack = r_u2(&r);
	k->max_locals = r_u2(&r);
	k->len = r_u4(&r);
	k->code = r_skip(&r, k->len);
	k->nexc = r_u2(&r);
	if (r.bad)
		return -EINVAL;
	k->exc = cf_alloc(c, (k->nexc ? k->nexc : 1) * sizeof(*k->exc));
	if (!k->exc)
		return -ENOMEM;
	for (uint32_t i = 0; i < k->nexc; i++) {
		k->exc[i].start = r_u2(&r);
		k->exc[i].end = r_u2(&r);
		k->exc[i].handler = r_u2(&r);
		k->exc[i].catch_type = r_u2(&r);
	}
	k->nattrs = r_u2(&r);
	k->attrs = cf_alloc(c, (k->nattrs ? k->nattrs : 1) * sizeof(*k->attrs));
	if (!k->attrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < k->nattrs; i++) {
		int rc = parse_code_attr(c, &r, &k->attrs[i]);
		if (rc)
			return rc;
	}
	if (r.bad || r.p != r.end)
		return -EINVAL;
	*out = k;
	return 0;
}

struct cf_code *cf_code_copy(struct cf_class *c, const struct cf_code *k)
{
	struct cf_code *d = cf_alloc(c, sizeof(*d));
	if (!d)
		return NULL;
	*d = *k;
	d->exc = cf_alloc(c, (k->nexc ? k->nexc : 1) * sizeof(*d->exc));
	d->attrs = cf_alloc(c, (k->nattrs ? k->nattrs : 1) * sizeof(*d->attrs));
	if (!d->exc || !d->attrs)
		return NULL;
	memcpy(d->exc, k->exc, k->nexc * sizeof(*d->exc));
	memcpy(d->attrs, k->attrs, k->nattrs * sizeof(*d->attrs));
	for (uint32_t i = 0; i < k->nattrs; i++) {
		struct cf_code_attr *a = &d->attrs[i];
		void **arr = NULL;
		size_t bytes = 0;
		if (a->kind == CA_SMT) {
			arr = (void **)&a->u.smt.f;
			bytes = a->u.smt.n * sizeof(*a->u.smt.f);
		} else if (a->kind == CA_LNT) {
			arr = (void **)&a->u.lnt.e;
			bytes = a->u.lnt.n * sizeof(*a->u.lnt.e);
		} else if (a->kind == CA_LVT || a->kind == CA_LVTT) {
			arr = (void **)&a->u.lvt.e;
			bytes = a->u.lvt.n * sizeof(*a->u.lvt.e);
		}
		if (!arr)
			continue;
		void *copy = cf_alloc(c, bytes ? bytes : 1);
		if (!copy)
			return NULL;
		memcpy(copy, *arr, bytes);
		*arr = copy;
	}
	return d;
}

static int parse_members(struct cf_class *c, struct rd *r, uint16_t *n, struct cf_member **out, int methods)
{
	*n = r_u2(r);
	*out = cf_alloc(c, (*n ? *n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (uint32_t i = 0; i < *n; i++) {
		struct cf_member *m = &(*out)[i];
		m->access = r_u2(r);
		m->name = r_u2(r);
		m->desc = r_u2(r);
		int rc = parse_attrs(c, r, &m->attrs, &m->nattrs);
		if (rc)
			return rc;
		m->code_attr = -1;
		for (uint32_t j = 0; methods && j < m->nattrs; j++) {
			if (!cf_utf8_eq(c, m->attrs[j].name, "Code"))
				continue;
			m->code_attr = (int)j;
			if ((rc = parse_code(c, &m->attrs[j], &m->code)))
				return rc;
		}
	}
	return r->bad ? -EINVAL : 0;
}

int cf_parse(const uint8_t *data, size_t n, struct cf_class **out)
{
	struct cf_class *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	struct rd r = { data, data + n, 0 };
	int rc = -EINVAL;
	if (r_u4(&r) != 0xCAFEBABEu)
		goto fail;
	c->minor = r_u2(&r);
	c->major = r_u2(&r);
	if ((rc = parse_pool(c, &r)))
		goto fail;
	c->access = r_u2(&r);
	c->this_class = r_u2(&r);
	c->super_class = r_u2(&r);
	c->ninterfaces = r_u2(&r);
	rc = -ENOMEM;
	c->interfaces = cf_alloc(c, (c->ninterfaces ? c->ninterfaces : 1) * 2u);
	if (!c->interfaces)
		goto fail;
	for (uint32_t i = 0; i < c->ninterfaces; i++)
		c->interfaces[i] = r_u2(&r);
	if ((rc = parse_members(c, &r, &c->nfields, &c->fields, 0)) ||
	    (rc = parse_members(c, &r, &c->nmethods, &c->methods, 1)) ||
	    (rc = parse_attrs(c, &r, &c->attrs, &c->nattrs)))
		goto fail;
	rc = -EINVAL;
	if (r.bad || r.p != r.end)
		goto fail;
	*out = c;
	return 0;
fail:
	cf_free(c);
	return rc;
}

/* ---- writing ------------------------------------------------------------ */

static int w_u1(struct buf *b, uint32_t v)
{
	return buf_putc(b, (uint8_t)v);
}

static int w_u2(struct buf *b, uint32_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	return buf_put(b, x, 2);
}

static int w_u4(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return buf_put(b, x, 4);
}

static void patch_u4(struct buf *b, size_t at, uint32_t v)
{
	b->data[at] = (uint8_t)(v >> 24);
	b->data[at + 1] = (uint8_t)(v >> 16);
	b->data[at + 2] = (uint8_t)(v >> 8);
	b->data[at + 3] = (uint8_t)v;
}

static int w_attrs(struct buf *b, const struct cf_attr *a, uint32_t n)
{
	int rc = w_u2(b, n);
	for (uint32_t i = 0; i < n && !rc; i++)
		if (!(rc = w_u2(b, a[i].name)) && !(rc = w_u4(b, a[i].len)))
			rc = buf_put(b, a[i].data, a[i].len);
	return rc;
}

static int w_vtypes(struct buf *b, const struct cf_vtype *v, uint32_t n)
{
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = w_u1(b, v[i].tag);
		if (!rc && (v[i].tag == VT_OBJECT || v[i].tag == VT_UNINIT))
			rc = w_u2(b, v[i].val);
	}
	return rc;
}

static int w_frame(struct buf *b, const struct cf_frame *f, uint32_t delta)
{
	uint8_t t = f->type;
	if (t < 64 && delta < 64)
		return w_u1(b, delta);
	if (t >= 64 && t < 128 && delta < 64)
		return w_u1(b, 64 + delta) || w_vtypes(b, f->stack, 1) ? -ENOMEM : 0;
	if (delta > 65535)
		return -E2BIG;
	/* a compact frame whose delta no longer fits its short form takes the
	 * extended form of the same kind */
	if (t < 64)
		t = 251;
	else if (t < 128)
		t = 247;
	if (w_u1(b, t) || w_u2(b, delta))
		return -ENOMEM;
	if (t == 247)
		return w_vtypes(b, f->stack, 1);
	if (t >= 252 && t <= 254)
		return w_vtypes(b, f->locals, t - 251u);
	if (t == 255)
		return w_u2(b, f->nlocals) || w_vtypes(b, f->locals, f->nlocals) || w_u2(b, f->nstack) ||
				       w_vtypes(b, f->stack, f->nstack) ? -ENOMEM : 0;
	return 0;
}

static int w_code_attr(struct buf *b, const struct cf_code_attr *a)
{
	if (a->kind == CA_RAW)
		return w_u2(b, a->raw.name) || w_u4(b, a->raw.len) || buf_put(b, a->raw.data, a->raw.len) ? -ENOMEM
													    : 0;
	int rc = w_u2(b, a->raw.name);
	size_t lenat = b->len;
	if (rc || (rc = w_u4(b, 0)))
		return rc;
	switch (a->kind) {
	case CA_SMT:
		rc = w_u2(b, a->u.smt.n);
		for (uint32_t i = 0; i < a->u.smt.n && !rc; i++) {
			uint32_t prev = i ? a->u.smt.f[i - 1].bci : 0;
			uint32_t delta = i ? a->u.smt.f[i].bci - prev - 1 : a->u.smt.f[i].bci;
			rc = w_frame(b, &a->u.smt.f[i], delta);
		}
		break;
	case CA_LNT:
		rc = w_u2(b, a->u.lnt.n);
		for (uint32_t i = 0; i < a->u.lnt.n && !rc; i++)
			rc = w_u2(b, a->u.lnt.e[i].start) || w_u2(b, a->u.lnt.e[i].line) ? -ENOMEM : 0;
		break;
	default:
		rc = w_u2(b, a->u.lvt.n);
		for (uint32_t i = 0; i < a->u.lvt.n && !rc; i++) {
			const struct cf_local *l = &a->u.lvt.e[i];
			rc = w_u2(b, l->start) || w_u2(b, l->len) || w_u2(b, l->name) || w_u2(b, l->desc) ||
					     w_u2(b, l->index) ? -ENOMEM : 0;
		}
		break;
	}
	if (!rc)
		patch_u4(b, lenat, (uint32_t)(b->len - lenat - 4));
	return rc;
}

static int w_code(struct buf *b, uint16_t name, const struct cf_code *k)
{
	int rc = w_u2(b, name);
	size_t lenat = b->len;
	if (rc || (rc = w_u4(b, 0)) || (rc = w_u2(b, k->max_stack)) || (rc = w_u2(b, k->max_locals)) ||
	    (rc = w_u4(b, k->len)) || (rc = buf_put(b, k->code, k->len)) || (rc = w_u2(b, k->nexc)))
		return rc;
	for (uint32_t i = 0; i < k->nexc && !rc; i++)
		rc = w_u2(b, k->exc[i].start) || w_u2(b, k->exc[i].end) || w_u2(b, k->exc[i].handler) ||
				     w_u2(b, k->exc[i].catch_type) ? -ENOMEM : 0;
	if (!rc)
		rc = w_u2(b, k->nattrs);
	for (uint32_t i = 0; i < k->nattrs && !rc; i++) {
		rc = w_code_attr(b, &k->attrs[i]);
	}
	if (!rc)
		patch_u4(b, lenat, (uint32_t)(b->len - lenat - 4));
	return rc;
}

static int w_members(struct buf *b, const struct cf_member *m, uint32_t n)
{
	int rc = w_u2(b, n);
	for (uint32_t i = 0; i < n && !rc; i++) {
		if ((rc = w_u2(b, m[i].access)) || (rc = w_u2(b, m[i].name)) || (rc = w_u2(b, m[i].desc)) ||
		    (rc = w_u2(b, m[i].nattrs)))
			break;
		for (uint32_t j = 0; j < m[i].nattrs && !rc; j++) {
			const struct cf_attr *a = &m[i].attrs[j];
			if ((int)j == m[i].code_attr && m[i].code)
				rc = w_code(b, a->name, m[i].code);
			else
				rc = w_u2(b, a->name) || w_u4(b, a->len) || buf_put(b, a->data, a->len) ? -ENOMEM : 0;
		}
	}
	return rc;
}

int cf_write(const struct cf_class *c, struct buf *b)
{
	int rc = w_u4(b, 0xCAFEBABEu);
	if (rc || (rc = w_u2(b, c->minor)) || (rc = w_u2(b, c->major)) || (rc = w_u2(b, c->cp_count)))
		return rc;
	for (uint32_t i = 1; i < c->cp_count && !rc; i++) {
		if (!c->cp_tag[i])
			continue;
		long len = cp_entry_len(c->cp_tag[i], c->cp_ptr[i], c->cp_ptr[i] + 2);
		rc = w_u1(b, c->cp_tag[i]) || buf_put(b, c->cp_ptr[i], (size_t)len) ? -ENOMEM : 0;
	}
	if (rc || (rc = w_u2(b, c->access)) || (rc = w_u2(b, c->this_class)) || (rc = w_u2(b, c->super_class)) ||
	    (rc = w_u2(b, c->ninterfaces)))
		return rc;
	for (uint32_t i = 0; i < c->ninterfaces && !rc; i++)
		rc = w_u2(b, c->interfaces[i]);
	if (rc || (rc = w_members(b, c->fields, c->nfields)) || (rc = w_members(b, c->methods, c->nmethods)))
		return rc;
	return w_attrs(b, c->attrs, c->nattrs);
}

/* ---- instructions ------------------------------------------------------- */

/* Fixed length of opcodes 0..201 (JVMS 6.5); 0 = variable (switches,
 * wide) or invalid. */
static int op_fixed_len(uint8_t op)
{
	if (op == 16 || op == 18 || (op >= 21 && op <= 25) || (op >= 54 && op <= 58) || op == 169 || op == 188)
		return 2; /* bipush ldc loads stores ret newarray */
	if (op == 17 || op == 19 || op == 20 || op == 132 || (op >= 153 && op <= 168) ||
	    (op >= 178 && op <= 184) || op == 187 || op == 189 || op == 192 || op == 193 || op == 198 || op == 199)
		return 3; /* sipush ldc_w ldc2_w iinc branches field/invoke new anewarray checkcast instanceof */
	if (op == 197)
		return 4; /* multianewarray */
	if (op == 185 || op == 186 || op == 200 || op == 201)
		return 5; /* invokeinterface invokedynamic goto_w jsr_w */
	if (op == 170 || op == 171 || op == 196 || op > 201)
		return 0;
	return 1;
}

int cf_insn_len(const uint8_t *code, uint32_t n, uint32_t pc)
{
	if (pc >= n)
		return -1;
	uint8_t op = code[pc];
	if (op > 201)
		return -1;
	long len = op_fixed_len(op);
	if (op == 196) {
		if (pc + 1 >= n)
			return -1;
		uint8_t o = code[pc + 1];
		if (o == 132)
			len = 6;
		else if ((o >= 21 && o <= 25) || (o >= 54 && o <= 58) || o == 169)
			len = 4;
		else
			return -1;
	} else if (op == 170 || op == 171) {
		uint32_t base = (pc + 4) & ~3u; /* operands start at the next multiple of 4 */
		if ((uint64_t)base + (op == 170 ? 12 : 8) > n)
			return -1;
		if (op == 170) {
			int32_t lo = be32(code + base + 4), hi = be32(code + base + 8);
			if (hi < lo)
				return -1;
			len = (long)(base - pc) + 12 + 4 * ((long)hi - lo + 1);
		} else {
			int32_t np = be32(code + base + 4);
			if (np < 0)
				return -1;
			len = (long)(base - pc) + 8 + 8 * (long)np;
		}
	}
	if (len <= 0 || (uint64_t)pc + (uint64_t)len > n || len > 0x7fffffff)
		return -1;
	return (int)len;
}

int cf_op_allocates(uint8_t op)
{
	return op == 187 || op == 188 || op == 189 || op == 197;
}

int cf_method_allocates(const char *owner, size_t ol, const char *name, size_t nl, const char *desc, size_t dl)
{
	static const char *const m[][3] = {
		{ "java/util/Arrays", "copyOf", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;" },
		{ "java/util/Arrays", "copyOfRange", "([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;" },
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (ol == strlen(m[i][0]) && !memcmp(owner, m[i][0], ol) && nl == strlen(m[i][1]) &&
		    !memcmp(name, m[i][1], nl) && dl == strlen(m[i][2]) && !memcmp(desc, m[i][2], dl))
			return 1;
	return 0;
}

int cf_call_allocates(const struct cf_class *c, uint16_t idx)
{
	uint16_t cls, name, desc, ol = 0, nl = 0, dl = 0;
	if (cf_ref_parts(c, idx, &cls, &name, &desc))
		return 0;
	const char *o = cf_utf8(c, cls, &ol), *n = cf_utf8(c, name, &nl), *d = cf_utf8(c, desc, &dl);
	return o && n && d && cf_method_allocates(o, ol, n, nl, d, dl);
}

int cf_insn_allocates(const struct cf_class *c, const uint8_t *code, uint32_t pc, int len)
{
	return cf_op_allocates(code[pc]) || (code[pc] == 184 && len == 3 && cf_call_allocates(c, be16(code + pc + 1)));
}

uint8_t cf_op_kind(uint8_t op)
{
	if ((op >= 153 && op <= 166) || op == 198 || op == 199)
		return IK_COND;
	if (op == 167 || op == 200)
		return IK_GOTO;
	if (op == 170 || op == 171)
		return IK_SWITCH;
	if (op >= 172 && op <= 177)
		return IK_RETURN;
	if (op == 191)
		return IK_THROW;
	if (op == 168 || op == 169 || op == 201)
		return IK_JSR;
	return IK_PLAIN;
}

/* Fills a switch's targets (default first). */
static int switch_targets(struct cf_class *c, const uint8_t *code, struct cf_insn *in)
{
	uint32_t base = (in->pc + 4) & ~3u;
	uint32_t n;
	if (in->op == 170)
		n = (uint32_t)(be32(code + base + 8) - be32(code + base + 4)) + 1;
	else
		n = (uint32_t)be32(code + base + 4);
	in->ntargets = n + 1;
	in->targets = cf_alloc(c, in->ntargets * sizeof(uint32_t));
	if (!in->targets)
		return -ENOMEM;
	in->targets[0] = (uint32_t)((int64_t)in->pc + be32(code + base));
	for (uint32_t i = 0; i < n; i++) {
		int32_t off = in->op == 170 ? be32(code + base + 12 + 4 * i) : be32(code + base + 12 + 8 * i);
		in->targets[i + 1] = (uint32_t)((int64_t)in->pc + off);
	}
	in->target0 = in->targets[0];
	return 0;
}

int cf_code_decode(struct cf_class *c, const struct cf_code *k, struct cf_insn **out, uint32_t *nout)
{
	uint32_t n = 0;
	for (uint32_t pc = 0; pc < k->len; n++) {
		int l = cf_insn_len(k->code, k->len, pc);
		if (l < 0)
			return -EINVAL;
		pc += (uint32_t)l;
	}
	struct cf_insn *v = cf_alloc(c, (n ? n : 1) * sizeof(*v));
	uint8_t *start = calloc(k->len + 1, 1);
	if (!v || !start) {
		free(start);
		return -ENOMEM;
	}
	uint32_t i = 0;
	int rc = 0;
	for (uint32_t pc = 0; pc < k->len && !rc; i++) {
		struct cf_insn *in = &v[i];
		in->pc = pc;
		in->len = (uint16_t)cf_insn_len(k->code, k->len, pc);
		in->op = k->code[pc];
		in->kind = cf_op_kind(in->op);
		in->site = cf_insn_allocates(c, k->code, pc, in->len);
		start[pc] = 1;
		if (in->kind == IK_SWITCH) {
			rc = switch_targets(c, k->code, in);
		} else if (in->kind == IK_COND || in->kind == IK_GOTO || in->op == 168 || in->op == 201) {
			int32_t off = in->len == 5 ? be32(k->code + pc + 1) : (int16_t)be16(k->code + pc + 1);
			in->target0 = (uint32_t)((int64_t)pc + off);
			in->ntargets = 1;
		}
		pc += in->len;
	}
	for (uint32_t j = 0; j < n && !rc; j++) {
		for (uint32_t t = 0; t < v[j].ntargets; t++) {
			uint32_t tg = v[j].targets ? v[j].targets[t] : v[j].target0;
			if (tg >= k->len || !start[tg])
				rc = -EINVAL;
		}
	}
	free(start);
	if (rc)
		return rc;
	*out = v;
	*nout = n;
	return 0;
}

/* ---- frames ------------------------------------------------------------- */

int cf_initial_frame(struct cf_class *c, const struct cf_member *m, struct cf_vtype *loc, int cap)
{
	uint16_t dlen;
	const char *d = cf_utf8(c, m->desc, &dlen);
	if (!d || dlen < 2 || d[0] != '(')
		return -EINVAL;
	int n = 0;
	if (!(m->access & 0x0008)) { /* not static: this */
		if (cf_utf8_eq(c, m->name, "<init>") &&
		    !cf_utf8_eq(c, cf_class_name(c, c->this_class), "java/lang/Object"))
			loc[n++] = (struct cf_vtype){ VT_UNINIT_THIS, 0 };
		else
			loc[n++] = (struct cf_vtype){ VT_OBJECT, c->this_class };
	}
	/* copy: the pool may grow (and move nothing, but stay safe) */
	char desc[1024];
	if (dlen >= sizeof(desc))
		return -EINVAL;
	memcpy(desc, d, dlen);
	desc[dlen] = 0;
	const char *p = desc + 1;
	while (*p && *p != ')') {
		if (n >= cap)
			return -EINVAL;
		const char *s = p;
		while (*p == '[')
			p++;
		if (*p == 'L') {
			const char *e = strchr(p, ';');
			if (!e)
				return -EINVAL;
			p = e;
		}
		if (!*p)
			return -EINVAL;
		if (s != p || *s == 'L') { /* array or class */
			size_t len = *s == 'L' ? (size_t)(p - s - 1) : (size_t)(p - s + 1);
			uint16_t k = cf_cp_class(c, *s == 'L' ? s + 1 : s, len);
			if (!k)
				return -ENOMEM;
			loc[n++] = (struct cf_vtype){ VT_OBJECT, k };
		} else if (strchr("ZBCSI", *s)) {
			loc[n++] = (struct cf_vtype){ VT_INTEGER, 0 };
		} else if (*s == 'F') {
			loc[n++] = (struct cf_vtype){ VT_FLOAT, 0 };
		} else if (*s == 'J') {
			loc[n++] = (struct cf_vtype){ VT_LONG, 0 };
		} else if (*s == 'D') {
			loc[n++] = (struct cf_vtype){ VT_DOUBLE, 0 };
		} else {
			return -EINVAL;
		}
		p++;
	}
	return n;
}

const struct cf_frame *cf_frame_at(const struct cf_frame *f, uint32_t n, uint32_t bci)
{
	for (uint32_t i = 0; i < n; i++)
		if (f[i].bci == bci)
			return &f[i];
	return NULL;
}

int cf_frames_expand(struct cf_class *c, const struct cf_member *m, const struct cf_frame *in, uint32_t n,
		     struct cf_frame **out)
{
	/* The locals never outgrow the initial frame (at most 1024 entries:
	 * cf_initial_frame's descriptor limit) plus every frame's own locals:
	 * a full frame replaces them, an append adds its own.  Sizing the
	 * scratch array by that, not by the 65536 a class file allows, keeps
	 * it small (it was 256 KB a method: an mmap and a munmap each under
	 * ASan, and in glibc until its threshold adapts). */
	size_t room = 1024;
	for (uint32_t i = 0; i < n && room < 65536; i++)
		room += in[i].nlocals;
	const int CAP = room < 65536 ? (int)room : 65536;
	struct cf_vtype *cur = malloc(CAP * sizeof(*cur));
	struct cf_frame *f = cf_alloc(c, (n ? n : 1) * sizeof(*f));
	int rc = -ENOMEM;
	if (!cur || !f)
		goto out;
	int nl = cf_initial_frame(c, m, cur, CAP);
	if (nl < 0) {
		rc = nl;
		goto out;
	}
	rc = -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t t = in[i].type;
		const struct cf_vtype *stack = NULL;
		uint16_t ns = 0;
		if (t >= 64 && t <= 247) {
			stack = in[i].stack;
			ns = 1;
		} else if (t >= 248 && t <= 250) {
			if (nl < 251 - t)
				goto out;
			nl -= 251 - t;
		} else if (t >= 252 && t <= 254) {
			if (nl + in[i].nlocals > CAP)
				goto out;
			memcpy(cur + nl, in[i].locals, in[i].nlocals * sizeof(*cur));
			nl += in[i].nlocals;
		} else if (t == 255) {
			memcpy(cur, in[i].locals, in[i].nlocals * sizeof(*cur));
			nl = in[i].nlocals;
			stack = in[i].stack;
			ns = in[i].nstack;
		}
		f[i].type = 255;
		f[i].bci = in[i].bci;
		f[i].nlocals = (uint16_t)nl;
		f[i].nstack = ns;
		f[i].locals = cf_alloc(c, (nl ? (size_t)nl : 1) * sizeof(*cur));
		f[i].stack = cf_alloc(c, (ns ? ns : 1) * sizeof(*cur));
		if (!f[i].locals || !f[i].stack) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(f[i].locals, cur, (size_t)nl * sizeof(*cur));
		if (ns)
			memcpy(f[i].stack, stack, ns * sizeof(*cur));
	}
	*out = f;
	rc = 0;
out:
	free(cur);
	return rc;
}

uint32_t cf_line_of(const struct cf_code *k, uint32_t pc)
{
	uint32_t best = 0, line = 0;
	for (uint32_t i = 0; i < k->nattrs; i++) {
		if (k->attrs[i].kind != CA_LNT)
			continue;
		for (uint32_t j = 0; j < k->attrs[i].u.lnt.n; j++) {
			const struct cf_line *e = &k->attrs[i].u.lnt.e[j];
			if (e->start <= pc && e->start >= best) {
				best = e->start;
				line = e->line;
			}
		}
	}
	return line;
}

/* jfr_value.c - decoding one value per its metadata description into a
 * flat tree of nodes (struct jfr_val, document order, each node knowing
 * where its subtree ends), and reading values out of such trees.
 *
 * Encoding (jdk.jfr.internal.consumer.ParserFactory): a field that is an
 * array (dimension 1) is a count and that many elements; a field marked
 * constantPool is a long key into the pool of its type; otherwise a value
 * of a primitive type is that primitive (boolean and byte one byte, short,
 * char, int, long as integers, float and double big-endian bits,
 * java.lang.String in the string encodings), and a value of any other
 * type is its fields in order, inline.  A type with no fields that is not
 * a primitive cannot be a value.
 *
 * Recursion follows inline nesting only, bounded by JFR_MAX_DEPTH (a type
 * that contains itself inline would otherwise recurse forever); pool
 * references are never followed while decoding, so the tree stays as
 * small as the bytes, and at most JFR_MAX_VALS nodes.
 */
#include <math.h>
#include <string.h>

#include "buf.h"
#include "jfr_internal.h"

static int new_node(struct jfr_chunk_ctx *c, struct jfr_in *in, uint8_t kind, uint32_t cls, uint32_t fld,
		    uint32_t *idx)
{
	if (c->vals.n >= JFR_MAX_VALS)
		return htr_errf(in->err, -EBADMSG, in->pos, "value of more than %u parts", JFR_MAX_VALS);
	if (c->vals.n == c->vals.cap) {
		void **cols[] = { (void **)&c->vals.v };
		const size_t sz[] = { sizeof(struct jfr_val) };
		int rc = jfr_grow(cols, sz, 1, &c->vals.cap, (uint64_t)c->vals.n + 1);
		if (rc)
			return rc;
	}
	*idx = c->vals.n++;
	struct jfr_val *v = &c->vals.v[*idx];
	memset(v, 0, sizeof *v);
	v->kind = kind;
	v->cls = cls;
	v->field = fld;
	return 0;
}

static int decode_prim(struct jfr_chunk_ctx *c, struct jfr_in *in, uint32_t cls, uint32_t fld, uint8_t prim)
{
	uint32_t k;
	int rc = new_node(c, in, JV_INT, cls, fld, &k);
	if (rc)
		return rc;
	struct jfr_val *v = &c->vals.v[k];
	uint8_t b;
	int32_t i;
	uint32_t u32;
	uint64_t u64;
	float f;
	switch (prim) {
	case JP_BOOLEAN: rc = jin_u1(in, &b); v->i = b != 0; break;
	case JP_BYTE: rc = jin_u1(in, &b); v->i = (int8_t)b; break;
	case JP_SHORT: rc = jin_short(in, &i); v->i = (int16_t)(uint16_t)i; break;
	case JP_CHAR: rc = jin_short(in, &i); v->i = (uint16_t)i; break;
	case JP_INT: rc = jin_int(in, &i); v->i = i; break;
	case JP_LONG: rc = jin_long(in, &v->i); break;
	case JP_FLOAT:
		rc = jin_raw32(in, &u32);
		memcpy(&f, &u32, 4);
		v->kind = JV_FLOAT;
		v->d = f;
		break;
	case JP_DOUBLE:
		rc = jin_raw64(in, &u64);
		memcpy(&v->d, &u64, 8);
		v->kind = JV_FLOAT;
		break;
	case JP_STRING:
		rc = jin_string(in, &v->enc, &v->off, &v->n, &v->i);
		v->kind = v->enc == JFR_ENC_NULL ? JV_NULL : v->enc == JFR_ENC_POOL ? JV_REF : JV_STR;
		break;
	}
	v->end = c->vals.n;
	return rc;
}

static int decode_value(struct jfr_chunk_ctx *c, struct jfr_in *in, uint32_t cls, uint32_t fld, int element,
			int depth)
{
	const struct jfr_meta *m = &c->meta;
	const struct jfr_mfield *f = fld == JFR_NONE ? NULL : &m->fld[fld];
	uint32_t k, n;
	int rc;
	if (depth > JFR_MAX_DEPTH)
		return htr_errf(in->err, -EBADMSG, in->pos, "values of %s nested deeper than %d", m->cls[cls].name,
				JFR_MAX_DEPTH);
	if (f && f->array && !element) {
		if ((rc = jin_count(in, &n, "array element")) || (rc = new_node(c, in, JV_ARR, cls, fld, &k)))
			return rc;
		c->vals.v[k].n = n;
		for (uint32_t i = 0; i < n; i++)
			if ((rc = decode_value(c, in, cls, fld, 1, depth + 1)))
				return rc;
		c->vals.v[k].end = c->vals.n;
		return 0;
	}
	if (f && f->cpool) {
		if ((rc = new_node(c, in, JV_REF, cls, element ? JFR_NONE : fld, &k)))
			return rc;
		c->vals.v[k].end = c->vals.n;
		return jin_long(in, &c->vals.v[k].i);
	}
	if (m->cls[cls].prim)
		return decode_prim(c, in, cls, element ? JFR_NONE : fld, m->cls[cls].prim);
	if (!m->cls[cls].nfields)
		return htr_errf(in->err, -EBADMSG, in->pos, "type %s has no fields and is not a primitive",
				m->cls[cls].name);
	if ((rc = new_node(c, in, JV_OBJ, cls, element ? JFR_NONE : fld, &k)))
		return rc;
	for (uint32_t i = 0; i < m->cls[cls].nfields; i++) {
		uint32_t fi = m->cls[cls].field0 + i;
		if ((rc = decode_value(c, in, m->fld[fi].cls, fi, 0, depth + 1)))
			return rc;
	}
	c->vals.v[k].end = c->vals.n;
	return 0;
}

int jfr_decode(struct jfr_chunk_ctx *c, struct jfr_in *in, uint32_t cls, uint32_t fld, uint32_t *root)
{
	*root = c->vals.n;
	return decode_value(c, in, cls, fld, 0, 0);
}

uint32_t jfr_vfield(const struct jfr_chunk_ctx *c, uint32_t obj, const char *name)
{
	if (obj == JFR_NONE || obj >= c->vals.n || c->vals.v[obj].kind != JV_OBJ)
		return JFR_NONE;
	for (uint32_t k = obj + 1; k < c->vals.v[obj].end; k = c->vals.v[k].end) {
		uint32_t f = c->vals.v[k].field;
		if (f != JFR_NONE && strcmp(c->meta.fld[f].name, name) == 0)
			return k;
	}
	return JFR_NONE;
}

uint32_t jfr_vderef(struct jfr_chunk_ctx *c, uint32_t ref)
{
	uint64_t off;
	uint32_t root;
	if (ref == JFR_NONE || c->vals.v[ref].kind != JV_REF)
		return ref;
	if (!jfr_map_get(&c->pool, c->vals.v[ref].cls, (uint64_t)c->vals.v[ref].i, &off))
		return JFR_NONE;
	struct jfr_in in = { .base = c->rec->data, .pos = off, .end = c->end, .compressed = c->compressed,
			     .err = c->err };
	int rc = jfr_decode(c, &in, c->vals.v[ref].cls, JFR_NONE, &root);
	if (rc) {
		/* the check pass decoded every pool value: only a lack of
		 * memory gets here, and the caller sees it in c->rc */
		c->rc = rc;
		return JFR_NONE;
	}
	return root;
}

/* References are followed a few times at most: a pool entry that refers
 * to itself must not loop. */
#define MAX_HOPS 8

uint32_t jfr_vobj(struct jfr_chunk_ctx *c, uint32_t v)
{
	for (int h = 0; h < MAX_HOPS && v != JFR_NONE && c->vals.v[v].kind == JV_REF; h++)
		v = jfr_vderef(c, v);
	return v != JFR_NONE && c->vals.v[v].kind == JV_OBJ ? v : JFR_NONE;
}

uint32_t jfr_vresolve(struct jfr_chunk_ctx *c, uint32_t v)
{
	for (int h = 0; h < MAX_HOPS && v != JFR_NONE; h++) {
		const struct jfr_val *x = &c->vals.v[v];
		if (x->kind == JV_REF)
			v = jfr_vderef(c, v);
		else if (x->kind == JV_OBJ && c->meta.cls[x->cls].nfields == 1)
			v = v + 1; /* a simple type: the value of its one field */
		else
			return v;
	}
	return JFR_NONE;
}

int64_t jfr_vint(struct jfr_chunk_ctx *c, uint32_t v, int64_t def)
{
	v = jfr_vresolve(c, v);
	return v != JFR_NONE && c->vals.v[v].kind == JV_INT ? c->vals.v[v].i : def;
}

int jfr_vstr(struct jfr_chunk_ctx *c, uint32_t v, uint32_t *sid)
{
	*sid = JFR_NONE;
	v = jfr_vresolve(c, v);
	if (v == JFR_NONE || c->vals.v[v].kind != JV_STR)
		return c->rc == -ENOMEM ? -ENOMEM : 0;
	const struct jfr_val *x = &c->vals.v[v];
	buf_reset(c->scratch);
	int rc = jfr_string_utf8(c->rec->data, c->end, c->compressed, x->enc, x->off, x->n, c->scratch);
	if (rc)
		return rc;
	return jfr_strings_intern(&c->rec->strings, (const char *)c->scratch->data, (uint32_t)c->scratch->len,
				  sid);
}

/* Java's (long) of a double: NaN is 0, out of range saturates (a C cast
 * would be undefined there). */
static int64_t d2l(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775807.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

/* TimeConverter: startNanos + (long)((ticks - startTicks) / divisor), the
 * long arithmetic wrapping as Java's does. */
int64_t jfr_ticks_to_ns(const struct jfr_chunk_ctx *c, int64_t ticks)
{
	int64_t rel = (int64_t)((uint64_t)ticks - (uint64_t)c->conv_ticks);
	return (int64_t)((uint64_t)c->conv_nanos + (uint64_t)d2l((double)rel / c->divisor));
}

int64_t jfr_span_to_ns(const struct jfr_chunk_ctx *c, int64_t ticks)
{
	return d2l((double)ticks / c->divisor);
}

static int64_t mul_sat(int64_t v, int64_t k)
{
	int64_t r;
	if (__builtin_mul_overflow(v, k, &r))
		return v < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

int64_t jfr_vtime(struct jfr_chunk_ctx *c, uint32_t v)
{
	if (v == JFR_NONE)
		return 0;
	uint32_t f = c->vals.v[v].field;
	int64_t x = jfr_vint(c, v, 0);
	switch (f == JFR_NONE ? JU_NONE : c->meta.fld[f].unit) {
	case JU_TS_TICKS: return jfr_ticks_to_ns(c, x);
	case JU_TS_MILLIS: return mul_sat(x, 1000000);
	case JU_SPAN_TICKS: return jfr_span_to_ns(c, x);
	case JU_SPAN_MICROS: return mul_sat(x, 1000);
	case JU_SPAN_MILLIS: return mul_sat(x, 1000000);
	case JU_SPAN_SECONDS: return mul_sat(x, 1000000000);
	default: return x;
	}
}

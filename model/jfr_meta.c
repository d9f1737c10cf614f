/* jfr_meta.c - the metadata event of a JFR chunk: the description of
 * every type, from which events and constant pools are decoded.
 *
 * Layout (jdk.jfr.internal.MetadataReader, ChunkHeader.readMetadata):
 * size, type id 0, start time, duration, metadata id, then a string table
 * (a count and that many strings, each in the usual string encodings but
 * never a pool reference) and a tree of elements, each written as
 * name (string index), attribute count, attributes (key index, value
 * index), child count, children.  The root's "metadata" child holds one
 * "class" element per type (attributes id, name, superType, simpleType)
 * with "field" children (name, class = the field's type id, constantPool
 * = "true" when the value is a pool key, dimension = "1" for an array)
 * and "annotation" children (class = the annotation type's id, value).
 * Events are the classes whose superType is jdk.jfr.Event.
 *
 * The tree is read without recursion (an explicit stack of child counts,
 * at most JFR_MAX_META_DEPTH deep).
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jfr_internal.h"

/* The element tree, flat, in document order. */
struct tree {
	uint32_t *name, *parent, *attr0, *nattr;
	uint32_t n; uint64_t cap;
	uint32_t *ak, *av;
	uint32_t na; uint64_t acap;
	/* the string table, as UTF-8 in one buffer */
	struct buf text;
	uint64_t *soff;
	uint32_t ns;
};

static void tree_free(struct tree *t)
{
	free(t->name); free(t->parent); free(t->attr0); free(t->nattr);
	free(t->ak); free(t->av);
	buf_free(&t->text);
	free(t->soff);
}

static const char *tstr(const struct tree *t, uint32_t i)
{
	return (const char *)t->text.data + t->soff[i];
}

static int read_strings(struct tree *t, struct jfr_in *in)
{
	uint32_t n;
	int rc = jin_count(in, &n, "metadata string");
	if (rc)
		return rc;
	t->soff = malloc(((size_t)n + 1) * sizeof *t->soff);
	if (!t->soff)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t enc;
		uint64_t off;
		uint32_t len;
		int64_t key;
		uint64_t at = in->pos;
		if ((rc = jin_string(in, &enc, &off, &len, &key)))
			return rc;
		if (enc == JFR_ENC_POOL)
			return htr_errf(in->err, -EBADMSG, at, "metadata string %u is a constant-pool reference", i);
		t->soff[i] = t->text.len;
		if ((rc = jfr_string_utf8(in->base, in->end, in->compressed, enc, off, len, &t->text)) ||
		    (rc = buf_putc(&t->text, 0)))
			return rc;
	}
	t->ns = n;
	return 0;
}

static int read_index(struct tree *t, struct jfr_in *in, uint32_t *idx)
{
	uint64_t at = in->pos;
	int32_t v;
	int rc = jin_int(in, &v);
	if (rc)
		return rc;
	if (v < 0 || (uint32_t)v >= t->ns)
		return htr_errf(in->err, -EBADMSG, at, "metadata string index %d out of range (%u strings)", v, t->ns);
	*idx = (uint32_t)v;
	return 0;
}

/* One element's name and attributes; *nkids its child count. */
static int read_element(struct tree *t, struct jfr_in *in, uint32_t parent, uint32_t *nkids)
{
	uint32_t nattr;
	int rc;
	void **cols[] = { (void **)&t->name, (void **)&t->parent, (void **)&t->attr0, (void **)&t->nattr };
	const size_t sz[] = { 4, 4, 4, 4 };
	if ((rc = jfr_grow(cols, sz, 4, &t->cap, (uint64_t)t->n + 1)))
		return rc;
	uint32_t e = t->n;
	if ((rc = read_index(t, in, &t->name[e])) || (rc = jin_count(in, &nattr, "metadata attribute")))
		return rc;
	t->parent[e] = parent;
	t->attr0[e] = t->na;
	t->nattr[e] = nattr;
	void **acols[] = { (void **)&t->ak, (void **)&t->av };
	if ((rc = jfr_grow(acols, sz, 2, &t->acap, (uint64_t)t->na + nattr)))
		return rc;
	for (uint32_t i = 0; i < nattr; i++) {
		if ((rc = read_index(t, in, &t->ak[t->na])) || (rc = read_index(t, in, &t->av[t->na])))
			return rc;
		t->na++;
	}
	t->n++;
	return jin_count(in, nkids, "metadata child");
}

static int read_tree(struct tree *t, struct jfr_in *in)
{
	uint32_t left[JFR_MAX_META_DEPTH], elem[JFR_MAX_META_DEPTH];
	uint32_t depth = 0, kids;
	int rc = read_element(t, in, JFR_NONE, &kids);
	if (rc)
		return rc;
	left[0] = kids;
	elem[0] = 0;
	depth = 1;
	while (depth) {
		if (!left[depth - 1]) {
			depth--;
			continue;
		}
		left[depth - 1]--;
		if (depth == JFR_MAX_META_DEPTH)
			return htr_errf(in->err, -EBADMSG, in->pos, "metadata elements nested deeper than %d",
					JFR_MAX_META_DEPTH);
		uint32_t e = t->n;
		if ((rc = read_element(t, in, elem[depth - 1], &kids)))
			return rc;
		elem[depth] = e;
		left[depth] = kids;
		depth++;
	}
	return 0;
}

static const char *attr(const struct tree *t, uint32_t e, const char *key)
{
	for (uint32_t i = t->attr0[e]; i < t->attr0[e] + t->nattr[e]; i++)
		if (strcmp(tstr(t, t->ak[i]), key) == 0)
			return tstr(t, t->av[i]);
	return NULL;
}

static int is(const struct tree *t, uint32_t e, const char *name)
{
	return strcmp(tstr(t, t->name[e]), name) == 0;
}

static int parse_long(const char *s, int64_t *v)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static uint8_t prim_of(const char *name)
{
	static const char *const names[] = { NULL, "boolean", "byte", "short", "char", "int", "long",
					     "float", "double", "java.lang.String" };
	for (uint8_t i = 1; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return JP_NONE;
}

/* The unit of a field from its annotations: @Timestamp / @Timespan and
 * their value (jdk.jfr.Timestamp, jdk.jfr.Timespan). */
static uint8_t unit_of(const struct tree *t, const struct jfr_meta *m, uint32_t fe)
{
	/* in document order a subtree is contiguous: it ends at the first
	 * element whose parent comes before its root */
	for (uint32_t e = fe + 1; e < t->n && t->parent[e] >= fe; e++) {
		int64_t id;
		uint64_t ci;
		if (t->parent[e] != fe || !is(t, e, "annotation") || parse_long(attr(t, e, "class"), &id) ||
		    !jfr_map_get(&m->by_id, (uint64_t)id, 0, &ci))
			continue;
		const char *an = m->cls[ci].name, *v = attr(t, e, "value");
		if (!v)
			continue;
		if (strcmp(an, "jdk.jfr.Timestamp") == 0)
			return strcmp(v, "TICKS") == 0 ? JU_TS_TICKS :
			       strcmp(v, "MILLISECONDS_SINCE_EPOCH") == 0 ? JU_TS_MILLIS : JU_NONE;
		if (strcmp(an, "jdk.jfr.Timespan") == 0)
			return strcmp(v, "TICKS") == 0 ? JU_SPAN_TICKS :
			       strcmp(v, "NANOSECONDS") == 0 ? JU_SPAN_NANOS :
			       strcmp(v, "MICROSECONDS") == 0 ? JU_SPAN_MICROS :
			       strcmp(v, "MILLISECONDS") == 0 ? JU_SPAN_MILLIS :
			       strcmp(v, "SECONDS") == 0 ? JU_SPAN_SECONDS : JU_NONE;
	}
	return JU_NONE;
}

/* Offsets into the tree's text become pointers into m->arena, a copy that
 * outlives the tree. */
static const char *in_arena(const struct jfr_meta *m, const struct tree *t, const char *s)
{
	return s ? m->arena + (s - (const char *)t->text.data) : NULL;
}

static int declare_classes(struct jfr_meta *m, const struct tree *t, uint32_t md, struct jfr_in *in,
			   struct jfr_strings *names)
{
	uint32_t n = 0;
	for (uint32_t e = 0; e < t->n; e++)
		n += t->parent[e] == md && is(t, e, "class");
	m->cls = calloc(n ? n : 1, sizeof *m->cls);
	if (!m->cls)
		return -ENOMEM;
	for (uint32_t e = 0; e < t->n; e++) {
		if (t->parent[e] != md || !is(t, e, "class"))
			continue;
		struct jfr_mclass *c = &m->cls[m->ncls];
		const char *name = attr(t, e, "name"), *super = attr(t, e, "superType");
		if (!name || parse_long(attr(t, e, "id"), &c->id))
			return htr_errf(in->err, -EBADMSG, in->pos, "metadata class element %u has no name or id", e);
		uint64_t dup;
		if (jfr_map_get(&m->by_id, (uint64_t)c->id, 0, &dup))
			return htr_errf(in->err, -EBADMSG, in->pos, "metadata defines type id %lld twice (%s, %s)",
					(long long)c->id, m->cls[dup].name, name);
		int rc = jfr_map_put(&m->by_id, (uint64_t)c->id, 0, m->ncls);
		if (rc || (rc = jfr_strings_intern(names, name, (uint32_t)strlen(name), &c->name_sid)))
			return rc;
		c->name = in_arena(m, t, name);
		c->super = in_arena(m, t, super);
		c->simple = attr(t, e, "simpleType") && strcmp(attr(t, e, "simpleType"), "true") == 0;
		c->event = super && strcmp(super, "jdk.jfr.Event") == 0;
		c->prim = prim_of(name);
		if (c->prim == JP_STRING)
			m->string_cls = m->ncls;
		m->ncls++;
	}
	return 0;
}

static int define_fields(struct jfr_meta *m, const struct tree *t, uint32_t md, struct jfr_in *in)
{
	uint32_t n = 0, ci = 0;
	for (uint32_t e = 0; e < t->n; e++)
		n += t->parent[e] < t->n && t->parent[t->parent[e]] == md && is(t, e, "field");
	m->fld = calloc(n ? n : 1, sizeof *m->fld);
	if (!m->fld)
		return -ENOMEM;
	for (uint32_t e = 0; e < t->n; e++) {
		if (t->parent[e] != md || !is(t, e, "class"))
			continue;
		struct jfr_mclass *c = &m->cls[ci++];
		c->field0 = m->nfld;
		for (uint32_t f = e + 1; f < t->n && t->parent[f] >= e; f++) {
			if (t->parent[f] != e || !is(t, f, "field"))
				continue;
			struct jfr_mfield *fd = &m->fld[m->nfld];
			int64_t tid, dim = 0;
			uint64_t fc;
			const char *name = attr(t, f, "name"), *cp = attr(t, f, "constantPool");
			if (!name || parse_long(attr(t, f, "class"), &tid) ||
			    (attr(t, f, "dimension") && parse_long(attr(t, f, "dimension"), &dim)))
				return htr_errf(in->err, -EBADMSG, in->pos, "a field of %s has no name or type", c->name);
			if (!jfr_map_get(&m->by_id, (uint64_t)tid, 0, &fc))
				return htr_errf(in->err, -EBADMSG, in->pos,
						"field %s of %s has type id %lld, which the metadata does not define",
						name, c->name, (long long)tid);
			if (dim < 0 || dim > 1)
				return htr_errf(in->err, -EBADMSG, in->pos, "field %s of %s has dimension %lld",
						name, c->name, (long long)dim);
			fd->name = in_arena(m, t, name);
			fd->cls = (uint32_t)fc;
			fd->array = (uint8_t)dim;
			fd->cpool = cp && strcmp(cp, "true") == 0;
			fd->unit = unit_of(t, m, f);
			m->nfld++;
		}
		c->nfields = m->nfld - c->field0;
	}
	return 0;
}

int jfr_meta_read(struct jfr_meta *m, struct jfr_in *in, struct jfr_strings *names)
{
	struct tree t = { 0 };
	int64_t type, skip;
	int32_t size;
	uint64_t at = in->pos;
	int rc;
	memset(m, 0, sizeof *m);
	m->string_cls = JFR_NONE;
	if ((rc = jin_int(in, &size)) || (rc = jin_long(in, &type)))
		goto out;
	if (type != 0) {
		rc = htr_errf(in->err, -EBADMSG, at, "expected the metadata event (type 0), found type %lld",
			      (long long)type);
		goto out;
	}
	if (size <= 0 || (uint64_t)size > in->end - at) {
		rc = htr_errf(in->err, -EBADMSG, at, "metadata event of %d bytes runs past the chunk's end", size);
		goto out;
	}
	in->end = at + (uint64_t)size;
	if ((rc = jin_long(in, &skip)) || (rc = jin_long(in, &skip)) || /* start time, duration */
	    (rc = jin_long(in, &m->id)))
		goto out;
	if ((rc = read_strings(&t, in)) || (rc = read_tree(&t, in)))
		goto out;
	m->arena = malloc(t.text.len ? t.text.len : 1);
	if (!m->arena) {
		rc = -ENOMEM;
		goto out;
	}
	if (t.text.len)
		memcpy(m->arena, t.text.data, t.text.len);
	uint32_t md = JFR_NONE;
	for (uint32_t e = 1; e < t.n && md == JFR_NONE; e++)
		if (t.parent[e] == 0 && is(&t, e, "metadata"))
			md = e;
	if (md == JFR_NONE) {
		rc = htr_errf(in->err, -EBADMSG, at, "metadata event has no metadata element");
		goto out;
	}
	if ((rc = declare_classes(m, &t, md, in, names)) || (rc = define_fields(m, &t, md, in)))
		goto out;
out:
	tree_free(&t);
	if (rc)
		jfr_meta_free(m);
	return rc;
}

void jfr_meta_free(struct jfr_meta *m)
{
	free(m->arena);
	free(m->cls);
	free(m->fld);
	jfr_map_free(&m->by_id);
	memset(m, 0, sizeof *m);
	m->string_cls = JFR_NONE;
}

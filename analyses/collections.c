/* collections.c - see collections.h */
#include "collections.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SUPER_MAX 64   /* class hierarchy depth looked at (a loop guard) */
#define BACKING_MAX 4  /* a wrapper of a wrapper of ... a map */

static const char *const coll_roots[] = {
	"java.util.AbstractCollection", "java.util.AbstractMap", "java.util.Dictionary",
	"java.util.concurrent.CopyOnWriteArrayList",
};

/* Fields that never hold a collection's elements. */
static const char *const not_elements[] = {
	"keySet", "values", "entrySet", "navigableKeySet", "descendingMap", "comparator",
	"lock", "queue", "counterCells",
};

/* Fields through which a set or a wrapper holds the collection it is. */
static const char *const backing[] = { "map", "m", "c" };

/* Fields that hold a collection's slots, when they are an object array. */
static const char *const slot_fields[] = { "elementData", "elements", "table", "queue", "array" };

static int in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

/* Per type: 1 if a collection type.  Caller frees. */
static uint8_t *collection_types(const struct trace *t)
{
	uint8_t *is = calloc(t->ntypes ? t->ntypes : 1, 1);
	if (!is)
		return NULL;
	for (uint32_t ty = 0; ty < t->ntypes; ty++) {
		uint32_t x = ty;
		for (int d = 0; d < SUPER_MAX && x < t->ntypes; d++, x = t->types[x].super_id) {
			if (t->types[x].name &&
			    in_list(t->types[x].name, coll_roots, sizeof coll_roots / sizeof *coll_roots)) {
				is[ty] = t->types[ty].kind == HTR_TYPE_INSTANCE;
				break;
			}
		}
	}
	return is;
}

static const char *field_name(const struct trace *t, uint32_t type, uint32_t slot)
{
	const struct trace_type *ty = type < t->ntypes ? &t->types[type] : NULL;
	return ty && slot < ty->nfields ? ty->fields[slot].name : NULL;
}

/* An array that holds nothing: an object array with no references out of
 * it, or any array of length 0. */
static int empty_array(const struct trace *t, const struct heap_state *s, uint32_t o)
{
	const struct objinfo *oi = hs_info(s, o);
	if (oi->array_length < 0)
		return 0;
	if (oi->array_length == 0)
		return 1;
	return oi->type < t->ntypes && t->types[oi->type].kind == HTR_TYPE_OBJ_ARRAY &&
	       s->out_off[o] == s->out_off[o + 1];
}

/* 1 if o is empty (collections.h); adds the bytes it wastes to *bytes. */
static int is_empty(const struct trace *t, const struct heap_state *s, const uint8_t *is_coll,
		    uint32_t o, uint64_t *bytes)
{
	uint64_t b = 0;
	for (int hop = 0; hop < BACKING_MAX; hop++) {
		uint32_t type = hs_info(s, o)->type, next = UINT32_MAX;
		b += hs_info(s, o)->size;
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t to = s->out_tgt[e];
			const char *f = field_name(t, type, hs_ref_slot(s, o, e));
			if (in_list(f, not_elements, sizeof not_elements / sizeof *not_elements))
				continue;
			if (empty_array(t, s, to)) {
				if (s->in_off[to + 1] - s->in_off[to] == 1)
					b += hs_info(s, to)->size; /* only this collection's */
				continue;
			}
			uint32_t tt = hs_info(s, to)->type;
			if (next == UINT32_MAX && tt < t->ntypes && is_coll[tt] &&
			    in_list(f, backing, sizeof backing / sizeof *backing)) {
				next = to;
				continue;
			}
			return 0;
		}
		if (next == UINT32_MAX) {
			*bytes += b;
			return 1;
		}
		o = next; /* a set or wrapper: empty when what backs it is */
	}
	return 0;
}

/* The slot array of o (or of what backs it: collections.h), or
 * UINT32_MAX. */
static uint32_t slot_array(const struct trace *t, const struct heap_state *s, const uint8_t *is_coll, uint32_t o)
{
	for (int hop = 0; hop < BACKING_MAX; hop++) {
		uint32_t type = hs_info(s, o)->type, next = UINT32_MAX;
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t to = s->out_tgt[e], tt = hs_info(s, to)->type;
			const char *f = field_name(t, type, hs_ref_slot(s, o, e));
			if (tt < t->ntypes && t->types[tt].kind == HTR_TYPE_OBJ_ARRAY &&
			    in_list(f, slot_fields, sizeof slot_fields / sizeof *slot_fields))
				return to;
			if (next == UINT32_MAX && tt < t->ntypes && is_coll[tt] &&
			    in_list(f, backing, sizeof backing / sizeof *backing))
				next = to;
		}
		if (next == UINT32_MAX)
			return UINT32_MAX;
		o = next;
	}
	return UINT32_MAX;
}

/* Adds collection o to st. */
static void tally(const struct trace *t, const struct heap_state *s, const uint8_t *is_coll, uint32_t o,
		  struct coll_stat *st)
{
	st->count++;
	int empty = is_empty(t, s, is_coll, o, &st->empty_bytes);
	st->empty += (uint64_t)empty;
	uint32_t a = slot_array(t, s, is_coll, o);
	if (a == UINT32_MAX)
		return;
	const struct objinfo *ai = hs_info(s, a);
	uint64_t len = ai->array_length > 0 ? (uint64_t)ai->array_length : 0;
	uint64_t used = s->out_off[a + 1] - s->out_off[a];
	if (used > len)
		used = len; /* (a damaged array: never more used than there are) */
	uint64_t ref = ai->type < t->ntypes && t->types[ai->type].elem_size ? t->types[ai->type].elem_size : 4;
	st->with_slots++;
	st->slots += len;
	st->used += used;
	st->wasted += (len - used) * ref;
	st->sparse += !empty && used && used * 100 < len * COLL_SPARSE_PCT;
}

int coll_census(const struct trace *t, const struct heap_state *s, struct buf *out)
{
	if (!s->has_graph)
		return -EINVAL;
	uint8_t *is_coll = collection_types(t);
	struct coll_stat *st = calloc(t->ntypes ? t->ntypes : 1, sizeof *st);
	int rc = -ENOMEM;
	if (!is_coll || !st)
		goto out;
	for (uint32_t o = 0; o < s->n; o++) {
		uint32_t ty = hs_info(s, o)->type;
		if (ty >= t->ntypes || !is_coll[ty] || !hs_is_reachable(s, o))
			continue;
		tally(t, s, is_coll, o, &st[ty]);
	}
	rc = 0;
	for (uint32_t ty = 0; ty < t->ntypes && !rc; ty++) {
		if (!st[ty].count)
			continue;
		st[ty].type = ty;
		st[ty].site = HTR_NO_SITE;
		rc = buf_put(out, &st[ty], sizeof st[ty]);
	}
out:
	free(is_coll);
	free(st);
	return rc;
}

/* (type, site) rows while counting: open addressing on the pair. */
struct site_map {
	struct coll_stat *rows;
	uint32_t *slot;            /* row index + 1, 0 free */
	uint32_t n, cap;           /* rows; slots (a power of 2) */
};

static int map_grow(struct site_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof *slot);
	struct coll_stat *rows = realloc(m->rows, (size_t)cap / 2 * sizeof *rows);
	if (!slot || !rows) {
		free(slot);
		if (rows)
			m->rows = rows;
		return -ENOMEM;
	}
	m->rows = rows;
	for (uint32_t r = 0; r < m->n; r++) {
		uint64_t h = ((uint64_t)rows[r].type * 0x9E3779B97F4A7C15ull) ^ rows[r].site;
		uint32_t k = (uint32_t)(h * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
		while (slot[k])
			k = (k + 1) & (cap - 1);
		slot[k] = r + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->cap = cap;
	return 0;
}

static struct coll_stat *map_get(struct site_map *m, uint32_t type, uint32_t site)
{
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	uint64_t h = ((uint64_t)type * 0x9E3779B97F4A7C15ull) ^ site;
	uint32_t k = (uint32_t)(h * 0x9E3779B97F4A7C15ull >> 32) & (m->cap - 1);
	for (; m->slot[k]; k = (k + 1) & (m->cap - 1)) {
		struct coll_stat *r = &m->rows[m->slot[k] - 1];
		if (r->type == type && r->site == site)
			return r;
	}
	struct coll_stat *r = &m->rows[m->n];
	memset(r, 0, sizeof *r);
	r->type = type;
	r->site = site;
	m->slot[k] = ++m->n;
	return r;
}

static uint64_t waste_of(const struct coll_stat *x)
{
	return x->wasted + x->empty_bytes;
}

static int by_waste(const void *a, const void *b)
{
	const struct coll_stat *x = a, *y = b;
	if (waste_of(x) != waste_of(y))
		return waste_of(x) > waste_of(y) ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

void coll_sort_by_waste(struct coll_stat *v, size_t n)
{
	qsort(v, n, sizeof *v, by_waste);
}

int coll_census_by_site(const struct trace *t, const struct heap_state *s, struct buf *out)
{
	if (!s->has_graph)
		return -EINVAL;
	uint8_t *is_coll = collection_types(t);
	struct site_map m = { 0 };
	int rc = is_coll ? 0 : -ENOMEM;
	for (uint32_t o = 0; o < s->n && !rc; o++) {
		const struct objinfo *oi = hs_info(s, o);
		if (oi->type >= t->ntypes || !is_coll[oi->type] || !hs_is_reachable(s, o))
			continue;
		struct coll_stat *r = map_get(&m, oi->type, oi->site);
		if (!r)
			rc = -ENOMEM;
		else
			tally(t, s, is_coll, o, r);
	}
	if (!rc && m.n) {
		coll_sort_by_waste(m.rows, m.n);
		rc = buf_put(out, m.rows, (size_t)m.n * sizeof *m.rows);
	}
	free(is_coll);
	free(m.rows);
	free(m.slot);
	return rc;
}

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
		st[ty].count++;
		st[ty].empty += (uint64_t)is_empty(t, s, is_coll, o, &st[ty].empty_bytes);
	}
	rc = 0;
	for (uint32_t ty = 0; ty < t->ntypes && !rc; ty++) {
		if (!st[ty].count)
			continue;
		st[ty].type = ty;
		rc = buf_put(out, &st[ty], sizeof st[ty]);
	}
out:
	free(is_coll);
	free(st);
	return rc;
}

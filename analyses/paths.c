/* paths.c - see paths.h */
#include "paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/classify_ext.h"
#include "analyses/retained.h"

static uint64_t *rooted_bits(const struct heap_state *s)
{
	uint64_t *b = bitset_alloc(s->n);
	if (b) {
		for (uint32_t r = 0; r < s->nroots; r++)
			bitset_set(b, s->roots[r].object);
	}
	return b;
}

static int by_retained_desc(const void *a, const void *b)
{
	const struct group_owner *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* §3.4.1: a backwards BFS from the group's members over in-edges. */
int eng_group_owners(struct engine *en, const struct heap_state *s, const struct chain *ch,
		     struct buf *out)
{
	uint64_t *bits = NULL, *seen = NULL, *rooted = NULL;
	uint32_t *queue = NULL;
	struct rc_entry *de = NULL;
	struct dom_view dv;
	size_t head = 0, tail = 0, first = out->len / sizeof(struct group_owner);
	int rc;
	if (!s->has_graph)
		return -ENOENT;
	if ((rc = eng_dominators_get(en, s->gc_index, &de, &dv)))
		return rc;
	if ((rc = group_members_bits(&en->reg, s, ch, &bits)))
		goto out;
	seen = bitset_alloc(s->n);
	rooted = rooted_bits(s);
	queue = malloc(((size_t)s->n + 1) * sizeof *queue);
	if (!seen || !rooted || !queue) {
		rc = -ENOMEM;
		goto out;
	}
	BITSET_FOREACH(bits, s->n, g) {
		if (hs_is_reachable(s, g)) {
			bitset_set(seen, g);
			queue[tail++] = g;
		}
	}
	while (head < tail && !rc) {
		uint32_t o = queue[head++];
		if (bitset_get(rooted, o)) {
			struct group_owner w = { o, 0, dv.retained[o] };
			rc = buf_put(out, &w, sizeof w);
		}
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t src = s->in_src[e];
			if (!bitset_get(seen, src)) {
				bitset_set(seen, src);
				queue[tail++] = src;
			}
		}
	}
	if (!rc) {
		struct group_owner *w = (struct group_owner *)out->data;
		size_t n = out->len / sizeof *w;
		qsort(w + first, n - first, sizeof *w, by_retained_desc);
	}
out:
	eng_put(en, de);
	free(bits);
	free(seen);
	free(rooted);
	free(queue);
	return rc;
}

/* ---- shortest paths from a root (§3.4.2) ---- */

struct path_finder {
	const struct heap_state *s;
	uint64_t *seen, *rooted;
	uint32_t *queue, *next;   /* next[x]: the object x refers to on the way to the target */
	/* a group named after roots: those roots (bitset over s->roots) and
	 * the objects they hold, where paths start; NULL otherwise */
	uint64_t *named_roots, *named;
};

void path_finder_free(struct path_finder *pf)
{
	if (!pf)
		return;
	free(pf->named_roots);
	free(pf->named);
	free(pf->seen);
	free(pf->rooted);
	free(pf->queue);
	free(pf->next);
	free(pf);
}

int path_finder_new(struct path_finder **out, struct engine *en, const struct heap_state *s,
		    const struct chain *ch)
{
	struct path_finder *pf = calloc(1, sizeof *pf);
	int rc = -ENOMEM;
	*out = NULL;
	if (!pf)
		return rc;
	pf->s = s;
	pf->seen = bitset_alloc(s->n);
	pf->rooted = rooted_bits(s);
	pf->queue = malloc(((size_t)s->n + 1) * sizeof *pf->queue);
	pf->next = malloc(((size_t)s->n + 1) * sizeof *pf->next);
	if (!pf->seen || !pf->rooted || !pf->queue || !pf->next)
		goto fail;
	/* paths of a group named after roots start at those roots' objects */
	if ((rc = eng_chain_roots(en, s, ch, &pf->named_roots)))
		goto fail;
	if (pf->named_roots) {
		rc = -ENOMEM;
		if (!(pf->named = bitset_alloc(s->n)))
			goto fail;
		BITSET_FOREACH(pf->named_roots, s->nroots, r)
			bitset_set(pf->named, s->roots[r].object);
	}
	*out = pf;
	return 0;
fail:
	path_finder_free(pf);
	return rc;
}

/* Backwards BFS from t over in-edges to the nearest object in starts:
 * returns it, or UINT32_MAX when no path leads there. */
static uint32_t nearest_in(struct path_finder *pf, uint32_t t, const uint64_t *starts)
{
	const struct heap_state *s = pf->s;
	size_t head = 0, tail = 0;
	memset(pf->seen, 0, bitset_words(s->n) * sizeof *pf->seen);
	if (!hs_is_reachable(s, t))
		return UINT32_MAX;
	bitset_set(pf->seen, t);
	pf->next[t] = UINT32_MAX;
	pf->queue[tail++] = t;
	while (head < tail) {
		uint32_t o = pf->queue[head++];
		if (bitset_get(starts, o))
			return o;
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t src = s->in_src[e];
			if (!bitset_get(pf->seen, src)) {
				bitset_set(pf->seen, src);
				pf->next[src] = o;
				pf->queue[tail++] = src;
			}
		}
	}
	return UINT32_MAX;
}

uint32_t path_finder_root(struct path_finder *pf, uint32_t t, int *named)
{
	*named = 0;
	if (pf->named) {
		uint32_t o = nearest_in(pf, t, pf->named);
		if (o != UINT32_MAX) {
			*named = 1;
			return o;
		}
	}
	return nearest_in(pf, t, pf->rooted);
}

uint32_t path_finder_next(const struct path_finder *pf, uint32_t o)
{
	return pf->next[o];
}

const uint64_t *path_finder_named_roots(const struct path_finder *pf)
{
	return pf->named_roots;
}

/* closure.c - see closure.h. */
#include "closure.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bitset.h"

struct closure_ctx {
	const struct heap_state *s;
	uint64_t *rooted;   /* objects a GC root points at */
	uint64_t *kept;     /* scratch: objects of T that stay alive */
	uint64_t *scratch;  /* scratch closure for closure_metrics_of */
	uint32_t *queue;    /* [n] explicit work list: no recursion */
};

int closure_ctx_new(struct closure_ctx **out, const struct heap_state *s)
{
	if (!s->has_graph)
		return -EINVAL;
	struct closure_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->s = s;
	c->rooted = bitset_new(s->n);
	c->kept = bitset_new(s->n);
	c->scratch = bitset_new(s->n);
	c->queue = malloc(((size_t)s->n + 1) * sizeof(uint32_t));
	if (!c->rooted || !c->kept || !c->scratch || !c->queue) {
		closure_ctx_free(c);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < s->nroots; r++)
		bitset_set(c->rooted, s->roots[r].object);
	*out = c;
	return 0;
}

void closure_ctx_free(struct closure_ctx *c)
{
	if (!c)
		return;
	bitset_free(c->rooted);
	bitset_free(c->kept);
	bitset_free(c->scratch);
	free(c->queue);
	free(c);
}

void closure_measure(const struct heap_state *s, const uint64_t *set, struct closure_metrics *m)
{
	m->count = 0;
	m->bytes = 0;
	BITSET_FOREACH(set, s->n, i) {
		m->count++;
		m->bytes += hs_info(s, i)->size;
	}
}

int closure_transitive(struct closure_ctx *c, const uint64_t *group, uint64_t *out,
		       struct closure_metrics *m)
{
	const struct heap_state *s = c->s;
	size_t head = 0, tail = 0;
	memcpy(out, group, bitset_words(s->n) * sizeof(uint64_t));
	BITSET_FOREACH(group, s->n, g)
		c->queue[tail++] = g;
	while (head < tail) {
		uint32_t o = c->queue[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!bitset_get(out, t)) {
				bitset_set(out, t);
				c->queue[tail++] = t; /* each object enters once: tail <= n */
			}
		}
	}
	if (m)
		closure_measure(s, out, m);
	return 0;
}

/* Does something outside the closure keep x alive? */
static int held_from_outside(const struct closure_ctx *c, const uint64_t *closure, uint32_t x)
{
	const struct heap_state *s = c->s;
	if (bitset_get(c->rooted, x))
		return 1;
	for (uint32_t e = s->in_off[x]; e < s->in_off[x + 1]; e++) {
		uint32_t y = s->in_src[e];
		if (hs_is_reachable(s, y) && !bitset_get(closure, y))
			return 1;
	}
	return 0;
}

int closure_retained(struct closure_ctx *c, const uint64_t *group, uint64_t *closure,
		     struct closure_metrics *m)
{
	const struct heap_state *s = c->s;
	size_t words = bitset_words(s->n), head = 0, tail = 0;
	memset(c->kept, 0, words * sizeof(uint64_t));
	/* seeds: members of T \ G held from outside T */
	BITSET_FOREACH(closure, s->n, x) {
		if (bitset_get(group, x) || !held_from_outside(c, closure, x))
			continue;
		bitset_set(c->kept, x);
		c->queue[tail++] = x;
	}
	/* whatever a kept object reaches inside T is kept too, except G's
	 * members: references to them are taken as gone */
	while (head < tail) {
		uint32_t o = c->queue[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (bitset_get(closure, t) && !bitset_get(group, t) && !bitset_get(c->kept, t)) {
				bitset_set(c->kept, t);
				c->queue[tail++] = t;
			}
		}
	}
	for (size_t w = 0; w < words; w++)
		closure[w] &= ~c->kept[w];
	if (m)
		closure_measure(s, closure, m);
	return 0;
}

int closure_metrics_of(struct closure_ctx *c, const uint64_t *group, struct closure_metrics *deep,
		       struct closure_metrics *retained)
{
	int rc = closure_transitive(c, group, c->scratch, deep);
	if (!rc)
		rc = closure_retained(c, group, c->scratch, retained);
	return rc;
}

int closure_step_bits(const struct heap_state *s, int retained, uint64_t **bits)
{
	uint64_t *out = bitset_alloc(s->n);
	struct closure_ctx *c = NULL;
	int rc = 0;
	if (!out)
		return -ENOMEM;
	if (s->has_graph) {
		if (!(rc = closure_ctx_new(&c, s)) && !(rc = closure_transitive(c, *bits, out, NULL)) &&
		    retained)
			rc = closure_retained(c, *bits, out, NULL);
		closure_ctx_free(c);
	}
	if (rc) {
		free(out);
		return rc;
	}
	free(*bits);
	*bits = out;
	return 0;
}

/* heap_state_make.c - see heap_state_make.h.
 *
 * The three derivations repeat those of heap_state.c's assemble() (which
 * keeps them private): the directory with about one bucket per four
 * objects, a breadth-first reachability walk with an explicit queue, and
 * the in-edges by counting sort.  Any valid directory serves
 * heap_state_find(); the rest is fixed by the columns.
 */
#include "heap_state_make.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int make_directory(struct heap_state *s)
{
	if (s->n == 0)
		return 0;
	uint64_t lo = s->id[0], span = s->id[s->n - 1] - lo;
	uint64_t want = (uint64_t)s->n / 4 + 1;
	uint32_t shift = 0;
	while (shift < 63 && (span >> shift) >= want)
		shift++;
	s->dir_base = lo;
	s->dir_shift = shift;
	s->ndir = (span >> shift) + 2;
	s->dir = malloc(s->ndir * sizeof(uint32_t));
	if (!s->dir)
		return -ENOMEM;
	uint64_t k = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		uint64_t bucket = (s->id[i] - lo) >> shift;
		while (k <= bucket)
			s->dir[k++] = i;
	}
	while (k < s->ndir)
		s->dir[k++] = s->n;
	return 0;
}

static void mark(struct heap_state *s, uint32_t o)
{
	s->reachable[o >> 6] |= 1ull << (o & 63);
}

/* Breadth-first from the roots: no recursion, heaps hold long lists. */
static int make_reachable(struct heap_state *s)
{
	size_t words = ((size_t)s->n + 63) / 64;
	s->reachable = calloc(words ? words : 1, sizeof(uint64_t));
	uint32_t *queue = malloc(((size_t)s->n + 1) * sizeof(uint32_t));
	if (!s->reachable || !queue) {
		free(queue);
		return -ENOMEM;
	}
	size_t head = 0, tail = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (!hs_is_reachable(s, o)) {
			mark(s, o);
			queue[tail++] = o;
		}
	}
	while (head < tail) {
		uint32_t o = queue[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!hs_is_reachable(s, t)) {
				mark(s, t);
				queue[tail++] = t;
			}
		}
	}
	free(queue);
	s->nreachable = (uint32_t)tail;
	for (uint32_t i = 0; i < s->n; i++)
		if (hs_is_reachable(s, i))
			s->reachable_bytes += hs_info(s, i)->size;
	return 0;
}

static int make_in_edges(struct heap_state *s)
{
	s->in_off = calloc((size_t)s->n + 1, sizeof(uint32_t));
	s->in_src = malloc((s->nedges ? s->nedges : 1) * sizeof(uint32_t));
	if (!s->in_off || !s->in_src)
		return -ENOMEM;
	for (uint64_t e = 0; e < s->nedges; e++)
		s->in_off[s->out_tgt[e] + 1]++;
	for (uint32_t i = 0; i < s->n; i++)
		s->in_off[i + 1] += s->in_off[i];
	/* in_off[t] is the cursor of t while filling, then shifted back */
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t e = s->out_off[i]; e < s->out_off[i + 1]; e++)
			s->in_src[s->in_off[s->out_tgt[e]]++] = i;
	for (uint32_t i = s->n; i > 0; i--)
		s->in_off[i] = s->in_off[i - 1];
	s->in_off[0] = 0;
	return 0;
}

int heap_state_complete(struct heap_state *s)
{
	int rc = make_directory(s);
	if (!rc && s->has_graph) {
		/* reachability first: its queue is gone before the in-edges
		 * are allocated, which keeps the peak lower */
		rc = make_reachable(s);
		if (!rc)
			rc = make_in_edges(s);
	}
	if (rc)
		return rc;
	s->total_bytes = 0;
	for (uint32_t i = 0; i < s->n; i++)
		s->total_bytes += hs_info(s, i)->size;
	s->mem_bytes = heap_state_memory(s);
	return 0;
}

int heap_state_copy(const struct heap_state *s, struct heap_state **out)
{
	struct heap_state *c = malloc(sizeof *c);
	if (!c)
		return -ENOMEM;
	*c = *s;
	uint64_t n = s->n, e = s->nedges;
	struct { void **dst; const void *src; uint64_t count; size_t el; } arr[] = {
		{ (void **)&c->id, s->id, n, sizeof *s->id },
		{ (void **)&c->info, s->info, n, sizeof *s->info },
		{ (void **)&c->birth, s->birth, n, sizeof *s->birth },
		{ (void **)&c->infos, s->infos, s->ninfos, sizeof *s->infos },
		{ (void **)&c->out_off, s->out_off, n + 1, sizeof *s->out_off },
		{ (void **)&c->out_tgt, s->out_tgt, e, sizeof *s->out_tgt },
		{ (void **)&c->out_slot, s->out_slot, e, sizeof *s->out_slot },
		{ (void **)&c->in_off, s->in_off, n + 1, sizeof *s->in_off },
		{ (void **)&c->in_src, s->in_src, e, sizeof *s->in_src },
		{ (void **)&c->slot_hi_edge, s->slot_hi_edge, s->nslot_hi, sizeof *s->slot_hi_edge },
		{ (void **)&c->slot_hi, s->slot_hi, s->nslot_hi, sizeof *s->slot_hi },
		{ (void **)&c->roots, s->roots, s->nroots, sizeof *s->roots },
		{ (void **)&c->reachable, s->reachable, (n + 63) / 64, sizeof *s->reachable },
		{ (void **)&c->dir, s->dir, s->ndir, sizeof *s->dir },
	};
	const size_t narr = sizeof arr / sizeof arr[0];
	for (size_t k = 0; k < narr; k++)
		*arr[k].dst = NULL;   /* until copied: heap_state_free(c) frees only copies */
	for (size_t k = 0; k < narr; k++) {
		if (!arr[k].src)
			continue;
		void *p = malloc(arr[k].count ? arr[k].count * arr[k].el : 1);
		if (!p) {
			heap_state_free(c);
			return -ENOMEM;
		}
		memcpy(p, arr[k].src, arr[k].count * arr[k].el);
		*arr[k].dst = p;
	}
	*out = c;
	return 0;
}

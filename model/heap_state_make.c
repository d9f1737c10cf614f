/* heap_state_make.c - see heap_state_make.h.  heap_state_complete()
 * lives in heap_state.c, next to the derivations it shares with a
 * rebuild (directory, reachability, in-edges, sums). */
#include "heap_state_make.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
		{ (void **)&c->dir.slot, s->dir.slot, s->dir.nslot, sizeof *s->dir.slot },
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

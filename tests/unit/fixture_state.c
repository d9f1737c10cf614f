/* fixture_state.c - see fixture_state.h. */
#include "fixture_state.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analyses/bitset.h"
#include "fs/tree.h"
#include "model/synth.h"

/* Compressed rows of the edges, from one end (from = 1: by source) to the
 * other, in the order given. */
static void fill_rows(uint32_t n, const struct fx_edge *edges, uint32_t ne, int by_source, uint32_t *off,
		      uint32_t *other)
{
	for (uint32_t e = 0; e < ne; e++)
		off[(by_source ? edges[e].from : edges[e].to) + 1]++;
	for (uint32_t i = 0; i < n; i++)
		off[i + 1] += off[i];
	uint32_t *fill = calloc(n + 1, sizeof *fill);
	assert_non_null(fill);
	for (uint32_t e = 0; e < ne; e++) {
		uint32_t at = by_source ? edges[e].from : edges[e].to;
		other[off[at] + fill[at]++] = by_source ? edges[e].to : edges[e].from;
	}
	free(fill);
}

/* Breadth-first from the roots over the out-edges. */
static void mark_reachable(struct heap_state *s)
{
	s->reachable = bitset_new(s->n);
	uint32_t *q = malloc((s->n + 1) * sizeof *q), head = 0, tail = 0;
	assert_non_null(s->reachable);
	assert_non_null(q);
	for (uint32_t r = 0; r < s->nroots; r++)
		if (!bitset_get(s->reachable, s->roots[r].object)) {
			bitset_set(s->reachable, s->roots[r].object);
			q[tail++] = s->roots[r].object;
		}
	while (head < tail) {
		uint32_t o = q[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++)
			if (!bitset_get(s->reachable, s->out_tgt[e])) {
				bitset_set(s->reachable, s->out_tgt[e]);
				q[tail++] = s->out_tgt[e];
			}
	}
	s->nreachable = tail;
	free(q);
}

struct heap_state *fx_state(uint32_t n, const uint32_t *info_of, uint32_t ninfos, const struct fx_edge *edges,
			    uint32_t ne, const uint32_t *roots, uint32_t nroots)
{
	struct heap_state *s = calloc(1, sizeof *s);
	assert_non_null(s);
	s->n = n;
	s->has_graph = 1;
	s->id = malloc((n + 1) * sizeof *s->id);
	s->info = malloc((n + 1) * sizeof *s->info);
	s->birth = malloc((n + 1) * sizeof *s->birth);
	s->infos = calloc(ninfos + 1, sizeof *s->infos);
	s->ninfos = ninfos;
	s->nedges = ne;
	s->out_off = calloc(n + 1, sizeof *s->out_off);
	s->in_off = calloc(n + 1, sizeof *s->in_off);
	s->out_tgt = malloc((ne + 1) * sizeof *s->out_tgt);
	s->in_src = malloc((ne + 1) * sizeof *s->in_src);
	s->out_slot = calloc(ne + 1, sizeof *s->out_slot);
	s->roots = calloc(nroots + 1, sizeof *s->roots);
	s->nroots = nroots;
	assert_true(s->id && s->info && s->birth && s->infos && s->out_off && s->in_off && s->out_tgt &&
		    s->in_src && s->out_slot && s->roots);
	for (uint32_t i = 0; i < n; i++) {
		s->id[i] = i + 1;
		s->info[i] = info_of ? info_of[i] : i;
		s->birth[i] = HS_NO_BIRTH;
	}
	for (uint32_t t = 0; t < ninfos; t++) {
		s->infos[t].array_length = -1;
		s->infos[t].thread = UINT32_MAX;
		s->infos[t].site = UINT32_MAX;
	}
	fill_rows(n, edges, ne, 1, s->out_off, s->out_tgt);
	fill_rows(n, edges, ne, 0, s->in_off, s->in_src);
	for (uint32_t r = 0; r < nroots; r++) {
		s->roots[r].kind = HTR_ROOT_OTHER;
		s->roots[r].object = roots[r];
	}
	mark_reachable(s);
	return s;
}

void fx_synth_trace(const char *scenario, uint64_t n, uint32_t g, const char *path)
{
	struct synth_opts o;
	char err[256];
	synth_opts_init(&o);
	o.objects = n;
	o.gcs = g;
	assert_int_equal(synth_write(scenario, &o, path, err, sizeof err), 0);
}

struct hfs *fx_open_tree(const char *path)
{
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, path, &o, &err), 0);
	return fs;
}

/* bench_par.c - the stages model/ runs on several threads, timed alone:
 * bench_par N E THREADS REPS builds a random graph of N objects and E
 * edges (a tenth of them to 1,000 hot objects, as a heap's classes and
 * interned strings; 64 roots), then REPS times marks it, builds its
 * in-edges (model/heap_state_par.h) and sorts N random (id, index) pairs
 * (keyidx_sort), printing wall and CPU milliseconds of each.  THREADS=1
 * is the one-thread path of the parallel code.  Then REPS times the
 * whole derivation as a dump's state gets it (heap_state_complete: the id
 * directory, marking, in-edges, sums), which at THREADS=1 runs
 * heap_state.c's own one-thread loops.  Not a test: docs/bench.md's
 * figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/heap_state_make.h"
#include "model/heap_state_par.h"
#include "model/hprof_maps.h"
#include "model/mpar.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bench_par N E THREADS REPS\n");
		return 2;
	}
	uint32_t n = (uint32_t)atol(argv[1]), ne = (uint32_t)atol(argv[2]);
	uint32_t nt = (uint32_t)atol(argv[3]), reps = (uint32_t)atol(argv[4]);
	struct heap_state s;
	memset(&s, 0, sizeof s);
	s.n = n;
	s.nedges = ne;
	s.out_off = calloc((size_t)n + 1, sizeof *s.out_off);
	s.out_tgt = malloc((size_t)ne * sizeof *s.out_tgt);
	s.in_off = malloc(((size_t)n + 1) * sizeof *s.in_off);
	s.in_src = malloc(((size_t)n + ne + 1) * sizeof *s.in_src);
	s.reachable = malloc(((size_t)n + 63) / 64 * 8);
	struct hs_root roots[64];
	struct keyidx *keys = malloc((size_t)n * sizeof *keys), *ks = malloc((size_t)n * sizeof *ks);
	struct keyidx *tmp = malloc((size_t)n * sizeof *tmp);
	if (!s.out_off || !s.out_tgt || !s.in_off || !s.in_src || !s.reachable || !keys || !ks || !tmp)
		return 1;
	/* edges spread evenly over sources, targets random */
	for (uint32_t i = 0; i < n; i++)
		s.out_off[i + 1] = (uint32_t)((uint64_t)ne * (i + 1) / n);
	for (uint32_t e = 0; e < ne; e++) {
		uint64_t r = rnd64();
		s.out_tgt[e] = r % 10 == 0 ? (uint32_t)((r >> 8) % 1000) : (uint32_t)((r >> 8) % n);
	}
	for (uint32_t r = 0; r < 64; r++)
		roots[r] = (struct hs_root){ .object = (uint32_t)(rnd64() % n) };
	s.roots = roots;
	s.nroots = 64;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct keyidx){ 0x700000000ull + (rnd64() % (16ull * n)) * 8, i };
	struct hs_par_opts o = hs_par_defaults(nt);
	for (uint32_t k = 0; k < reps; k++) {
		memset(s.reachable, 0, ((size_t)n + 63) / 64 * 8);
		memset(s.in_off, 0, ((size_t)n + 1) * sizeof *s.in_off);
		memcpy(ks, keys, (size_t)n * sizeof *ks);
		double w0 = ms(CLOCK_MONOTONIC), c0 = ms(CLOCK_PROCESS_CPUTIME_ID);
		if (hs_mark_par(&s, &o))
			return 1;
		double w1 = ms(CLOCK_MONOTONIC), c1 = ms(CLOCK_PROCESS_CPUTIME_ID);
		if (hs_in_edges_par(&s, &o))
			return 1;
		double w2 = ms(CLOCK_MONOTONIC), c2 = ms(CLOCK_PROCESS_CPUTIME_ID);
		keyidx_sort(ks, tmp, n, nt);
		double w3 = ms(CLOCK_MONOTONIC), c3 = ms(CLOCK_PROCESS_CPUTIME_ID);
		printf("threads %u mark %.0f ms (cpu %.0f) in-edges %.0f ms (cpu %.0f) sort %.0f ms (cpu %.0f) reached %u\n",
		       nt, w1 - w0, c1 - c0, w2 - w1, c2 - c1, w3 - w2, c3 - c2, s.nreachable);
	}
	for (uint32_t k = 0; k < reps; k++) {
		struct heap_state *d = calloc(1, sizeof *d);
		if (!d)
			return 1;
		d->n = n;
		d->nedges = ne;
		d->has_graph = 1;
		d->id = malloc((size_t)n * sizeof *d->id);
		d->info = calloc(n, sizeof *d->info);
		d->infos = calloc(1, sizeof *d->infos);
		d->ninfos = 1;
		d->out_off = malloc(((size_t)n + 1) * sizeof *d->out_off);
		d->out_tgt = malloc((size_t)ne * sizeof *d->out_tgt);
		d->roots = malloc(sizeof roots);
		if (!d->id || !d->info || !d->infos || !d->out_off || !d->out_tgt || !d->roots)
			return 1;
		for (uint32_t i = 0; i < n; i++)
			d->id[i] = 0x700000000ull + 16ull * i;
		memcpy(d->out_off, s.out_off, ((size_t)n + 1) * sizeof *d->out_off);
		memcpy(d->out_tgt, s.out_tgt, (size_t)ne * sizeof *d->out_tgt);
		memcpy(d->roots, roots, sizeof roots);
		d->nroots = 64;
		double w0 = ms(CLOCK_MONOTONIC), c0 = ms(CLOCK_PROCESS_CPUTIME_ID);
		if (heap_state_complete(d, nt))
			return 1;
		double w1 = ms(CLOCK_MONOTONIC), c1 = ms(CLOCK_PROCESS_CPUTIME_ID);
		printf("threads %u heap_state_complete %.0f ms (cpu %.0f) reached %u\n", nt, w1 - w0, c1 - c0,
		       d->nreachable);
		heap_state_free(d);
	}
	return 0;
}

/* parallel.c - see parallel.h.  The loop itself is model/mpar.c's (model/
 * code uses it too); these are its names for the analyses. */
#include "parallel.h"

#include "model/mpar.h"

_Static_assert(PAR_MAX_THREADS == MPAR_MAX_THREADS, "one bound for both");

uint32_t par_threads(uint32_t requested)
{
	return mpar_resolve(requested);
}

uint64_t par_chunk(uint64_t n, uint32_t threads, uint32_t per_thread, uint64_t min)
{
	uint64_t chunk = n / ((uint64_t)(threads ? threads : 1) * (per_thread ? per_thread : 1));
	chunk = (chunk + 63) & ~(uint64_t)63;
	return chunk < min ? min : chunk;
}

int par_for(uint32_t nthreads, uint32_t ntasks, int (*fn)(void *ctx, uint32_t task, uint32_t worker),
	    void *ctx)
{
	return mpar_for(nthreads, ntasks, fn, ctx);
}

uint32_t par_range_count(uint32_t n, uint32_t threads, uint32_t per_thread, uint32_t min)
{
	uint64_t chunk = par_chunk(n, threads, per_thread, min);
	return (uint32_t)((n + chunk - 1) / chunk);
}

struct ranges {
	par_range_fn *fn;
	void *ctx;
	uint64_t n, chunk;
};

static int range_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	const struct ranges *r = ctx;
	uint64_t from = (uint64_t)task * r->chunk, to = from + r->chunk;
	r->fn(r->ctx, (uint32_t)from, (uint32_t)(to < r->n ? to : r->n), task);
	return 0;
}

int par_ranges(uint32_t threads, uint32_t n, uint32_t per_thread, uint32_t min, par_range_fn *fn,
	       void *ctx)
{
	uint32_t t = threads ? threads : 1;
	struct ranges r = { .fn = fn, .ctx = ctx, .n = n, .chunk = par_chunk(n, t, per_thread, min) };
	/* on one thread, or for one range, par_for runs them in order on
	 * the caller's */
	return par_for(t, par_range_count(n, t, per_thread, min), range_task, &r);
}

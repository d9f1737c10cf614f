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

/* parallel.c - see parallel.h.  The loop itself is model/mpar.c's (model/
 * code uses it too); these are its names for the analyses. */
#include "parallel.h"

#include "model/mpar.h"

_Static_assert(PAR_MAX_THREADS == MPAR_MAX_THREADS, "one bound for both");

uint32_t par_threads(uint32_t requested)
{
	return mpar_resolve(requested);
}

int par_for(uint32_t nthreads, uint32_t ntasks, int (*fn)(void *ctx, uint32_t task, uint32_t worker),
	    void *ctx)
{
	return mpar_for(nthreads, ntasks, fn, ctx);
}

void par_gate_init(struct par_gate *g, uint32_t idle)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->idle = idle;
}

void par_gate_destroy(struct par_gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

int par_gate_take(struct par_gate *g, const int *stop)
{
	int got = 0;
	pthread_mutex_lock(&g->lock);
	/* the stop flag is set before par_gate_wake takes the lock: checked
	 * under it, no wake-up is lost */
	while (!g->idle && !__atomic_load_n(stop, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&g->cond, &g->lock);
	if (g->idle && !__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		g->idle--;
		got = 1;
	}
	pthread_mutex_unlock(&g->lock);
	return got;
}

void par_gate_give(struct par_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->idle++;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void par_gate_wake(struct par_gate *g)
{
	pthread_mutex_lock(&g->lock);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

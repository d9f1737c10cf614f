/* timing.c - HEAPFS_TIMING's laps; see timing.h. */
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int timing_on(void)
{
	const char *v = getenv("HEAPFS_TIMING");
	return v && *v && strcmp(v, "0");
}

void lap_now_on(struct lap_t *t, clockid_t cpu)
{
	struct timespec w, c;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(cpu, &c);
	t->wall = (double)w.tv_sec + (double)w.tv_nsec * 1e-9;
	t->cpu = (double)c.tv_sec + (double)c.tv_nsec * 1e-9;
}

void lap_now(struct lap_t *t)
{
	lap_now_on(t, CLOCK_PROCESS_CPUTIME_ID);
}

void timing_lap(const char *who, const char *what, struct lap_t *t0)
{
	if (!timing_on())
		return;
	struct lap_t t1;
	lap_now(&t1);
	fprintf(stderr, "heapfs: %s: %-22s %8.3f s wall %8.3f s cpu\n", who, what, t1.wall - t0->wall,
		t1.cpu - t0->cpu);
	*t0 = t1;
}

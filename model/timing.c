/* timing.c - HEAPFS_TIMING's laps; see timing.h. */
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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
	t->sys = 0;
	t->minflt = 0;
	t->maxrss = 0;
}

void lap_now(struct lap_t *t)
{
	struct rusage u;
	lap_now_on(t, CLOCK_PROCESS_CPUTIME_ID);
	if (!getrusage(RUSAGE_SELF, &u)) {
		t->sys = (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
		t->minflt = u.ru_minflt;
		t->maxrss = u.ru_maxrss;
	}
}

void timing_lap(const char *who, const char *what, struct lap_t *t0)
{
	if (!timing_on())
		return;
	struct lap_t t1;
	lap_now(&t1);
	fprintf(stderr, "heapfs: %s: %-22s %8.3f s wall %8.3f s cpu (%.3f s sys, %ld faults, peak %ld MB)\n",
		who, what, t1.wall - t0->wall, t1.cpu - t0->cpu, t1.sys - t0->sys, t1.minflt - t0->minflt,
		t1.maxrss / 1024);
	*t0 = t1;
}

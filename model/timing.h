/* timing.h - HEAPFS_TIMING=1 in the environment: how long each step of a
 * long piece of work took, wall clock and CPU time (the machine may be
 * shared), one line a step on stderr.  For measuring (docs/bench.md,
 * tests/bench/), not a file format: the lines may change.
 */
#ifndef HEAPFS_MODEL_TIMING_H
#define HEAPFS_MODEL_TIMING_H

#include <time.h>

struct lap_t {
	double wall, cpu;
	double sys;   /* the process's system CPU (lap_now only; 0 otherwise) */
	long minflt;  /* the process's minor faults so far (lap_now only) */
	long maxrss;  /* the process's peak resident KiB so far (lap_now only) */
};

/* 1 when HEAPFS_TIMING is set, non-empty and not "0".  Read each time (a
 * handful of laps per piece of work): FUSE threads share no lazily set
 * flag. */
int timing_on(void);

/* The wall clock and the CPU clock cpu (the process's, or a thread's own
 * for a step run beside others: CLOCK_THREAD_CPUTIME_ID). */
void lap_now_on(struct lap_t *t, clockid_t cpu);
/* The wall clock and the process's CPU clock. */
void lap_now(struct lap_t *t);

/* When timing_on(): prints "heapfs: WHO: WHAT  wall s wall  cpu s cpu
 * (sys s sys, N faults, peak M MB)" since *t0 (process CPU; of it, the
 * kernel's, which is mostly first touches of fresh memory; and those
 * minor faults, counted in 4 KiB pages though a huge page fault brings
 * 2 MiB: a floor; and the peak resident size so far), and moves *t0 to
 * now. */
void timing_lap(const char *who, const char *what, struct lap_t *t0);

#endif

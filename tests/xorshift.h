/* xorshift.h - the tests' pseudo-random numbers: Marsaglia's xorshift64
 * (shifts 13, 7, 17).  A seed gives the same sequence on every machine, so
 * the random cases a test checks, and the counts it reports, are the same
 * on every run.  Header-only; the state is the caller's (a nonzero seed). */
#ifndef HEAPFS_TESTS_XORSHIFT_H
#define HEAPFS_TESTS_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* A number in [0, n), n > 0 (modulo bias is irrelevant for tests). */
static inline uint32_t xorshift_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)(xorshift64(state) % n);
}

#endif

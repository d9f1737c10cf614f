/* bitset.h - object sets as bitsets over a heap state's dense index. */
#ifndef HEAPFS_ANALYSES_BITSET_H
#define HEAPFS_ANALYSES_BITSET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline size_t bitset_words(uint64_t n)
{
	return (size_t)((n + 63) / 64);
}

/* Zeroed; free() it.  Never NULL for n = 0 unless out of memory. */
static inline uint64_t *bitset_alloc(uint64_t n)
{
	return calloc(bitset_words(n) ? bitset_words(n) : 1, sizeof(uint64_t));
}

static inline int bitset_get(const uint64_t *b, uint64_t i)
{
	return (int)((b[i >> 6] >> (i & 63)) & 1);
}

static inline void bitset_set(uint64_t *b, uint64_t i)
{
	b[i >> 6] |= 1ull << (i & 63);
}

static inline void bitset_clear(uint64_t *b, uint64_t i)
{
	b[i >> 6] &= ~(1ull << (i & 63));
}

/* All of [0, n) set, the bits past n clear. */
static inline void bitset_fill(uint64_t *b, uint64_t n)
{
	size_t w = bitset_words(n);
	if (w)
		memset(b, 0xff, w * sizeof *b);
	if (n & 63)
		b[w - 1] = (1ull << (n & 63)) - 1;
}

static inline uint64_t bitset_count(const uint64_t *b, uint64_t n)
{
	uint64_t c = 0;
	for (size_t w = 0; w < bitset_words(n); w++)
		c += (uint64_t)__builtin_popcountll(b[w]);
	return c;
}

/* Calls the body for every set bit: for (BITSET_EACH(b, n, i)) {...} is
 * not C; use bitset_next. Returns the first set bit >= i, or n. */
static inline uint64_t bitset_next(const uint64_t *b, uint64_t n, uint64_t i)
{
	if (i >= n)
		return n;
	size_t w = (size_t)(i >> 6);
	uint64_t word = b[w] & (~0ull << (i & 63));
	while (!word) {
		if (++w >= bitset_words(n))
			return n;
		word = b[w];
	}
	uint64_t r = ((uint64_t)w << 6) + (uint64_t)__builtin_ctzll(word);
	return r < n ? r : n;
}

#endif

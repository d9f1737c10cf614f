/* bitset.h - object sets as bitsets over a heap state's dense index.
 *
 * n bits, one word per 64 objects: 1.25 MB for 10^7 objects; unions and
 * intersections are word operations (gc-roots paper §4.2).  Whoever
 * allocates a set (bitset_alloc / bitset_new) frees it (free / bitset_free).
 */
#ifndef HEAPFS_ANALYSES_BITSET_H
#define HEAPFS_ANALYSES_BITSET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/popcount.h"

static inline size_t bitset_words(uint64_t n)
{
	return (size_t)((n + 63) / 64);
}

/* Zeroed; free() it.  Never NULL for n = 0 unless out of memory. */
static inline uint64_t *bitset_alloc(uint64_t n)
{
	return calloc(bitset_words(n) ? bitset_words(n) : 1, sizeof(uint64_t));
}

/* The same as bitset_alloc, named to pair with bitset_free. */
static inline uint64_t *bitset_new(uint64_t n)
{
	return bitset_alloc(n);
}

static inline void bitset_free(uint64_t *b)
{
	free(b);
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
		c += popcount64(b[w]);
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

/* dst |= src */
static inline void bitset_or(uint64_t *dst, const uint64_t *src, uint64_t n)
{
	for (size_t w = 0; w < bitset_words(n); w++)
		dst[w] |= src[w];
}

/* Set bits of a word (model/popcount.h: inline, no libgcc call);
 * bitset_rank runs once per reference in the hot loops of groupclo and
 * dominators. */
static inline uint32_t bitset_popcount64(uint64_t x)
{
	return popcount64(x);
}

/* A rank directory over the n bits of b: dir[k] = set bits in words
 * [0, k), one entry per word and the total last (4 bytes per 64 bits).
 * With it, bitset_rank numbers the set bits densely, so that a column
 * kept only for the members of a set costs 4 bytes per member rather
 * than per index.  NULL when out of memory; the caller frees it. */
static inline uint32_t *bitset_rank_dir(const uint64_t *b, uint64_t n)
{
	size_t nw = bitset_words(n);
	uint32_t *dir = malloc((nw + 1) * sizeof *dir), r = 0;
	if (!dir)
		return NULL;
	for (size_t k = 0; k < nw; k++) {
		dir[k] = r;
		r += bitset_popcount64(b[k]);
	}
	dir[nw] = r;
	return dir;
}

/* Set bits of b below i (dir from bitset_rank_dir over b; i < n). */
static inline uint32_t bitset_rank(const uint64_t *b, const uint32_t *dir, uint64_t i)
{
	uint64_t below = b[i >> 6] & ((1ull << (i & 63)) - 1);
	return dir[i >> 6] + bitset_popcount64(below);
}

/* Runs the statement after it for each set bit i below n, ascending:
 *   BITSET_FOREACH(b, n, i) { ... }
 * (word at a time: cheap over sparse sets). */
#define BITSET_FOREACH(b, n, i)                                                       \
	for (size_t bs_w_ = 0; bs_w_ < bitset_words(n); bs_w_++)                     \
		for (uint64_t bs_x_ = (b)[bs_w_]; bs_x_; bs_x_ &= bs_x_ - 1)           \
			for (uint32_t i = (uint32_t)(bs_w_ * 64 + (size_t)__builtin_ctzll(bs_x_)), \
				      bs_once_ = 1; bs_once_; bs_once_ = 0)

#endif

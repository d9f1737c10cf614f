/* popcount.h - the set bits of a 64-bit word, inline.
 *
 * The build targets baseline x86-64 (no POPCNT instruction), where
 * __builtin_popcountll is a call into libgcc's __popcountdi2: in the hot
 * loops that rank a bit per reference (a dump's id index, model/
 * hprof_maps.h; groupclo and dominators, analyses/bitset.h) the call
 * showed in profiles.  This is the usual SWAR count, a dozen instructions
 * with no call and no table.
 */
#ifndef HEAPFS_MODEL_POPCOUNT_H
#define HEAPFS_MODEL_POPCOUNT_H

#include <stdint.h>

static inline uint32_t popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

#endif

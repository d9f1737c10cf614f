/* diff.c - see diff.h */
#include "diff.h"

uint64_t diff_mark_common(const uint64_t *ida, uint32_t na, const uint64_t *idb, uint32_t nb,
			  uint64_t *a_in_b, uint64_t *b_in_a)
{
	uint32_t i = 0, j = 0;
	uint64_t common = 0;
	while (i < na && j < nb) {
		if (ida[i] < idb[j]) {
			i++;
		} else if (ida[i] > idb[j]) {
			j++;
		} else {
			bitset_set(a_in_b, i++);
			bitset_set(b_in_a, j++);
			common++;
		}
	}
	return common;
}

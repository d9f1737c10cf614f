/* diff.h - heap diff (classification paper §5.3.1): which objects of one
 * heap state are still / already alive in another.
 *
 * Both id arrays are ascending (heap_state's dense index order), so one
 * merge pass marks, for every object of A, whether B holds the same id and
 * vice versa: O(nA + nB), no hashing.  Object ids are never reused within
 * a trace, so "same id" is "same object".
 *
 * Born (in the later state, not in the earlier), died (in the earlier, not
 * in the later) and perm (in both) follow from the two bitsets.
 */
#ifndef HEAPFS_ANALYSES_DIFF_H
#define HEAPFS_ANALYSES_DIFF_H

#include <stdint.h>

#include "analyses/bitset.h"

/* a_in_b: bitset [na], bit i set iff ida[i] is in idb; b_in_a likewise.
 * Both must be zeroed by the caller (bitset_alloc does).  Returns the
 * number of common ids. */
uint64_t diff_mark_common(const uint64_t *ida, uint32_t na, const uint64_t *idb, uint32_t nb,
			  uint64_t *a_in_b, uint64_t *b_in_a);

#endif

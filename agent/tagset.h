/* tagset.h - a set of JVMTI object tags (nonzero 64-bit ids), each with a
 * 64-bit value, for the agent's bookkeeping of the objects it tagged
 * (recorder_internal.h: mode=sample's live samples and their weak
 * references).
 *
 * Open addressing with linear probing; a removal shifts the entries after
 * it back, so no tombstones accumulate.  16 bytes a slot (tag and
 * value); the table is kept at most half full and has at least TAGSET_MIN
 * slots, so once it has grown a member costs 32 to 64 bytes (64 just after
 * a doubling).  It never shrinks.  Not thread-safe: the caller holds its
 * lock.  The struct owns its arrays (tagset_free). */
#ifndef HEAPFS_AGENT_TAGSET_H
#define HEAPFS_AGENT_TAGSET_H

#include <stdint.h>

#define TAGSET_MIN 64u

struct tagset {
	uint64_t *tag;  /* owned, [cap]; 0 = empty slot */
	uint64_t *val;  /* owned, [cap]: the value of tag[i] */
	uint32_t cap, n;
};

/* Adds tag (nonzero) with value val.  0 when added, 1 when already there
 * (its value unchanged), -EINVAL for tag 0, -ENOMEM (the set unchanged). */
int tagset_add(struct tagset *s, uint64_t tag, uint64_t val);
/* 1 when tag was there (now removed; *val its value if val), else 0. */
int tagset_remove(struct tagset *s, uint64_t tag, uint64_t *val);
int tagset_has(const struct tagset *s, uint64_t tag);
/* Writes the members and their values to tags[0..s->n) and vals[0..s->n)
 * (vals may be NULL), in no order; returns s->n. */
uint32_t tagset_copy(const struct tagset *s, uint64_t *tags, uint64_t *vals);
/* Frees the arrays; the set is empty after. */
void tagset_free(struct tagset *s);

#endif

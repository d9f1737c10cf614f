/* iddir.h - object id -> dense index, through a directory over the
 * ascending id array.
 *
 * Ids are 64-bit and sparse (a trace's sequential ids with gaps where
 * objects died, a heap dump's addresses); the objects they name sit at
 * dense indexes 0..n-1 in ascending id order.  The directory cuts the id
 * range into buckets of 2^shift ids, about one bucket per four objects,
 * and keeps for each bucket the index of its first object: a lookup reads
 * one directory entry and binary-searches the few ids of its bucket.
 * 4 bytes per bucket, so about 1 byte per object.
 *
 * Used by heap_state (every state's id -> index) and by the heap dump
 * importer's index when dump addresses are too sparse for its bitmap.
 *
 * Ownership: the directory owns slot (free with iddir_free); the id array
 * is the caller's, passed to each lookup, and must be the one it was
 * built over.
 */
#ifndef HEAPFS_IDDIR_H
#define HEAPFS_IDDIR_H

#include <stdint.h>

#define IDDIR_NONE UINT32_MAX

struct iddir {
	uint32_t *slot;   /* [nslot]: ids[slot[b] .. slot[b+1]) fall in bucket b */
	uint64_t nslot;   /* buckets + 1; 0 for an empty id array */
	uint64_t base;    /* ids[0] */
	uint32_t shift;   /* the bucket of id is (id - base) >> shift */
};

/* Builds d over ids[0..n) (ascending, distinct).  An empty array gives an
 * empty directory, in which nothing is found.  0 or -ENOMEM (d is then
 * empty). */
int iddir_build(struct iddir *d, const uint64_t *ids, uint32_t n);
void iddir_free(struct iddir *d);

/* The bucket of id, or UINT64_MAX when id is outside the directory. */
static inline uint64_t iddir_bucket(const struct iddir *d, uint64_t id)
{
	if (id < d->base)
		return UINT64_MAX;
	uint64_t b = (id - d->base) >> d->shift;
	return b + 1 < d->nslot ? b : UINT64_MAX;
}

/* Index of id in ids (the array d was built over), or IDDIR_NONE.  Within
 * the bucket a branch-free search: the ids a graph's edges name are close
 * to random, and a mispredicted branch per step cost more than the steps
 * themselves. */
static inline uint32_t iddir_find(const struct iddir *d, const uint64_t *ids, uint64_t id)
{
	uint64_t b = iddir_bucket(d, id);
	if (b == UINT64_MAX)
		return IDDIR_NONE;
	uint32_t lo = d->slot[b], len = d->slot[b + 1] - lo;
	if (len == 0)
		return IDDIR_NONE;
	const uint64_t *p = ids + lo; /* the last id <= id lies in p[0..len) */
	while (len > 1) {
		uint32_t half = len / 2;
		p = p[half] <= id ? p + half : p;
		len -= half;
	}
	return *p == id ? (uint32_t)(p - ids) : IDDIR_NONE;
}

#endif

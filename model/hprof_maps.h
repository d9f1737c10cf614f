/* hprof_maps.h - the small containers of the HPROF importer: an
 * open-addressing u64 -> u32 map (ids of strings, classes, frames, ...),
 * a byte-string -> u32 map (interning of type, method and site keys) and
 * the object index (dump id -> position among the id-sorted objects).
 *
 * Neither allocates per entry: keys and values sit in flat arrays that
 * double when 3/4 full.  Ownership: each map owns its arrays; *_free
 * releases them (a zeroed map is empty and valid).
 */
#ifndef HEAPFS_HPROF_MAPS_H
#define HEAPFS_HPROF_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "iddir.h"
#include "popcount.h"

#define U64MAP_NONE UINT32_MAX

struct u64map {
	uint64_t *keys;        /* key + 1; 0 = empty slot */
	uint32_t *vals;
	uint64_t cap, n;       /* cap: power of two or 0 */
};

void u64map_free(struct u64map *m);
/* Inserts or replaces.  -ERANGE for the key UINT64_MAX (not storable),
 * -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);
/* Value, or U64MAP_NONE. */
uint32_t u64map_get(const struct u64map *m, uint64_t key);

struct strmap_entry {
	uint64_t off;          /* of the key in the arena */
	uint32_t len, hash, val;
};

struct strmap {
	struct buf arena;      /* keys, back to back */
	struct strmap_entry *ent; uint32_t nent, capent;
	uint32_t *slots;       /* entry index + 1; 0 = empty */
	uint32_t cap;          /* power of two or 0 */
};

void strmap_free(struct strmap *m);
/* Value for the key, or U64MAP_NONE. */
uint32_t strmap_get(const struct strmap *m, const void *key, size_t len);
/* Inserts a key that is not there yet (check with strmap_get first). */
int strmap_put(struct strmap *m, const void *key, size_t len, uint32_t val);

/* Sorts n (key, index) pairs by key, ascending, stable (LSD radix on the
 * bytes that differ).  tmp must hold n pairs.  From 128 K pairs on, each
 * pass runs on up to `threads` threads (model/mpar.h; 0: mpar_resolve(0)), with the same
 * result. */
struct keyidx {
	uint64_t key;
	uint64_t idx;
};
void keyidx_sort(struct keyidx *a, struct keyidx *tmp, size_t n, uint32_t threads);
/* Sorts a[0, n) by key, stably, as keyidx_sort does.  When a[0, nhead) is
 * already in ascending order it sorts only a[nhead, n) and merges it in,
 * with memory for that tail alone; otherwise it sorts the whole with a
 * temporary array of n.  0 or -ENOMEM (a is then unchanged). */
int keyidx_sort_after(struct keyidx *a, size_t nhead, size_t n, uint32_t threads);

/* Dump id -> dense object index (position in the ascending id array),
 * looked up once per reference, so it must be O(1).  Dump ids are
 * addresses: ids = base + (k << shift) for a common alignment shift, so a
 * bitmap over k with a running count per 64-bit word (rank) answers in a
 * few memory reads.  A heap's addresses come in regions with large gaps
 * between them (G1 spreads them over the whole -Xmx range), so the bitmap
 * is cut into chunks of 2^16 positions and only chunks holding an object
 * exist: 12 KB per chunk, found through a small table over the span.  When
 * the ids are too sparse even for that (more than 12 bytes per object:
 * ids that are not addresses), the id directory of iddir.h serves instead.
 * Ownership: the index owns its arrays; ids is borrowed and must outlive
 * it. */
#define IDINDEX_NONE UINT32_MAX
#define IDINDEX_CHUNK_BITS 16u

struct idindex {
	uint64_t base;         /* smallest id */
	uint32_t shift;        /* every id is base + (k << shift) */
	uint64_t nchunks;      /* bitmap mode: k >> IDINDEX_CHUNK_BITS < nchunks; 0 in directory mode */
	uint32_t *chunk;       /* [nchunks] first word of the chunk in bits/rank, IDINDEX_NONE: empty */
	uint64_t *bits;        /* bit k (within its chunk's words) set = an object at k */
	uint32_t *rank;        /* objects before each word */
	const uint64_t *ids;   /* borrowed, ascending, distinct */
	size_t n;
	struct iddir dir;      /* directory mode (nchunks == 0) */
};

/* Builds the index over ids[0..n) (ascending, distinct, n < 2^32 - 1),
 * on up to `threads` threads (model/mpar.h; the same index for any
 * number).  0 or -ENOMEM / -E2BIG. */
int idindex_build(struct idindex *x, const uint64_t *ids, size_t n, uint32_t threads);
void idindex_free(struct idindex *x);

/* Index of id, or IDINDEX_NONE if no object has it. */
static inline uint32_t idindex_find(const struct idindex *x, uint64_t id)
{
	if (!x->nchunks)
		return iddir_find(&x->dir, x->ids, id);
	uint64_t k = id - x->base;
	if (id < x->base || (k & ((1ull << x->shift) - 1)))
		return IDINDEX_NONE;
	k >>= x->shift;
	uint64_t c = k >> IDINDEX_CHUNK_BITS;
	if (c >= x->nchunks || x->chunk[c] == IDINDEX_NONE)
		return IDINDEX_NONE;
	uint64_t wi = x->chunk[c] + ((k & ((1u << IDINDEX_CHUNK_BITS) - 1)) >> 6);
	uint64_t w = x->bits[wi], m = 1ull << (k & 63);
	if (!(w & m))
		return IDINDEX_NONE;
	return x->rank[wi] + popcount64(w & (m - 1));
}

#endif

/* hprof_maps.h - the small containers of the HPROF importer: an
 * open-addressing u64 -> u32 map (ids of strings, classes, frames, ...) and
 * a byte-string -> u32 map (interning of type, method and site keys).
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
 * bytes that differ).  tmp must hold n pairs. */
struct keyidx {
	uint64_t key;
	uint64_t idx;
};
void keyidx_sort(struct keyidx *a, struct keyidx *tmp, size_t n);

#endif

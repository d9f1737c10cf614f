/* keyspace.h - the children a classifier can have: an append-only table of
 * interned names, each with its file name (fs/names.h rules).
 *
 * Keys are dense u32 indexes, stable for the life of the space (nothing is
 * ever removed), so a path resolved once names the same child forever.
 * Predefined classifiers fill their space from the trace at build time;
 * classifiers whose values are only known while classifying (array
 * lengths, user-defined expressions) intern new values as they meet them.
 *
 * Thread safety: ks_intern and the ks_find_* lookups take the space's
 * mutex (a leaf lock).  ks_raw / ks_name / ks_count need no lock: entries
 * live in fixed chunks that never move and are published with a release
 * store of the count.
 *
 * Ownership: the space owns every string; callers borrow them for the life
 * of the space.
 */
#ifndef HEAPFS_ANALYSES_KEYSPACE_H
#define HEAPFS_ANALYSES_KEYSPACE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define KS_NO_KEY UINT32_MAX
#define KS_CHUNK_BITS 12
#define KS_CHUNK (1u << KS_CHUNK_BITS)
#define KS_MAX_CHUNKS 4096u /* 16 M keys */

struct ks_ent;

struct ks_entry {
	char *raw;   /* the value as classified (owned) */
	char *name;  /* its unique file name (owned) */
};

struct keyspace {
	pthread_mutex_t lock;
	uint32_t nkeys;                 /* published with release/acquire */
	struct ks_entry *chunks[KS_MAX_CHUNKS];
	struct ks_ent *by_raw, *by_name; /* lock */
};

int ks_init(struct keyspace *ks);
void ks_destroy(struct keyspace *ks);

/* Key of raw[0..len), added if new.  KS_NO_KEY on allocation failure or a
 * full space. */
uint32_t ks_intern(struct keyspace *ks, const char *raw, size_t len);
/* Always a new key, even when raw is already present (two classes of one
 * name from two class loaders are two children: the later gets "%#N"). */
uint32_t ks_add(struct keyspace *ks, const char *raw, size_t len);
/* Key of a file name / of a raw value (the first with it), or KS_NO_KEY. */
uint32_t ks_find_name(struct keyspace *ks, const char *name);
uint32_t ks_find_raw(struct keyspace *ks, const char *raw, size_t len);

uint32_t ks_count(const struct keyspace *ks);
const char *ks_raw(const struct keyspace *ks, uint32_t key);
const char *ks_name(const struct keyspace *ks, uint32_t key);

#endif

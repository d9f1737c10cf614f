/* keyspace.c - see keyspace.h */
#include "keyspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "model/names.h"

struct ks_ent {
	UT_hash_handle hh_raw, hh_name;
	uint32_t key;
};

int ks_init(struct keyspace *ks)
{
	memset(ks, 0, sizeof *ks);
	return -pthread_mutex_init(&ks->lock, NULL);
}

void ks_destroy(struct keyspace *ks)
{
	struct ks_ent *e, *tmp;
	/* Every entry is in by_name; only the first of equal raws in by_raw. */
	HASH_ITER(hh_raw, ks->by_raw, e, tmp) {
		HASH_DELETE(hh_raw, ks->by_raw, e);
	}
	HASH_ITER(hh_name, ks->by_name, e, tmp) {
		HASH_DELETE(hh_name, ks->by_name, e);
		free(e);
	}
	for (uint32_t c = 0; c < KS_MAX_CHUNKS && ks->chunks[c]; c++) {
		for (uint32_t i = 0; i < KS_CHUNK; i++) {
			free(ks->chunks[c][i].raw);
			free(ks->chunks[c][i].name);
		}
		free(ks->chunks[c]);
	}
	pthread_mutex_destroy(&ks->lock);
}

static struct ks_entry *entry(const struct keyspace *ks, uint32_t key)
{
	return &ks->chunks[key >> KS_CHUNK_BITS][key & (KS_CHUNK - 1)];
}

uint32_t ks_count(const struct keyspace *ks)
{
	return __atomic_load_n(&ks->nkeys, __ATOMIC_ACQUIRE);
}

const char *ks_raw(const struct keyspace *ks, uint32_t key)
{
	return key < ks_count(ks) ? entry(ks, key)->raw : "";
}

const char *ks_name(const struct keyspace *ks, uint32_t key)
{
	return key < ks_count(ks) ? entry(ks, key)->name : "";
}

/* The escaped name, with the first free "%#N" suffix when another value
 * already has it (two classes of one name from two class loaders). */
static int unique_name(struct keyspace *ks, const char *raw, size_t len, char out[NAME_BUF])
{
	char base[NAME_BUF];
	struct ks_ent *e;
	name_escape(raw, len, base);
	strcpy(out, base);
	for (uint32_t n = 2;; n++) {
		HASH_FIND(hh_name, ks->by_name, out, strlen(out), e);
		if (!e)
			return 0;
		if (n == UINT32_MAX)
			return -ENOSPC;
		strcpy(out, base);
		name_add_suffix(out, n);
	}
}

static uint32_t add_locked(struct keyspace *ks, const char *raw, size_t len)
{
	uint32_t key = ks->nkeys;
	char name[NAME_BUF];
	if (key >= KS_MAX_CHUNKS * KS_CHUNK || unique_name(ks, raw, len, name))
		return KS_NO_KEY;
	uint32_t c = key >> KS_CHUNK_BITS;
	if (!ks->chunks[c]) {
		ks->chunks[c] = calloc(KS_CHUNK, sizeof(struct ks_entry));
		if (!ks->chunks[c])
			return KS_NO_KEY;
	}
	struct ks_entry *en = entry(ks, key);
	struct ks_ent *e = calloc(1, sizeof *e);
	en->raw = malloc(len + 1);
	en->name = strdup(name);
	if (!e || !en->raw || !en->name) {
		free(e);
		free(en->raw);
		free(en->name);
		en->raw = en->name = NULL;
		return KS_NO_KEY;
	}
	memcpy(en->raw, raw, len);
	en->raw[len] = '\0';
	e->key = key;
	struct ks_ent *old;
	HASH_FIND(hh_raw, ks->by_raw, raw, len, old);
	if (!old)
		HASH_ADD_KEYPTR(hh_raw, ks->by_raw, en->raw, len, e);
	HASH_ADD_KEYPTR(hh_name, ks->by_name, en->name, strlen(en->name), e);
	__atomic_store_n(&ks->nkeys, key + 1, __ATOMIC_RELEASE);
	return key;
}

uint32_t ks_intern(struct keyspace *ks, const char *raw, size_t len)
{
	struct ks_ent *e;
	pthread_mutex_lock(&ks->lock);
	HASH_FIND(hh_raw, ks->by_raw, raw, len, e);
	uint32_t key = e ? e->key : add_locked(ks, raw, len);
	pthread_mutex_unlock(&ks->lock);
	return key;
}

uint32_t ks_add(struct keyspace *ks, const char *raw, size_t len)
{
	pthread_mutex_lock(&ks->lock);
	uint32_t key = add_locked(ks, raw, len);
	pthread_mutex_unlock(&ks->lock);
	return key;
}

uint32_t ks_find_name(struct keyspace *ks, const char *name)
{
	struct ks_ent *e;
	pthread_mutex_lock(&ks->lock);
	HASH_FIND(hh_name, ks->by_name, name, strlen(name), e);
	uint32_t key = e ? e->key : KS_NO_KEY;
	pthread_mutex_unlock(&ks->lock);
	return key;
}

uint32_t ks_find_raw(struct keyspace *ks, const char *raw, size_t len)
{
	struct ks_ent *e;
	pthread_mutex_lock(&ks->lock);
	HASH_FIND(hh_raw, ks->by_raw, raw, len, e);
	uint32_t key = e ? e->key : KS_NO_KEY;
	pthread_mutex_unlock(&ks->lock);
	return key;
}

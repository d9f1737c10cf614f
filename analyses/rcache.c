/* rcache.c - see rcache.h */
#include "rcache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

enum rc_state { RC_COMPUTING, RC_READY, RC_FAILED };

struct rc_entry {
	UT_hash_handle hh;     /* in c->table while linked (c->lock) */
	char *key;             /* owned */
	struct buf data;       /* written only by the computing thread while
	                          RC_COMPUTING; immutable once RC_READY */
	enum rc_state state;   /* c->lock */
	int err;               /* RC_FAILED: the error (c->lock) */
	uint32_t pins;         /* c->lock */
	int linked;            /* in the table (c->lock) */
	struct rc_entry *prev, *next; /* LRU list of ready linked entries (c->lock) */
	pthread_cond_t done;   /* signalled when state leaves RC_COMPUTING */
};

/* The size of every file ever rendered, kept after its bytes are evicted.
 * The trace never changes, so a file's size never does either; getattr
 * reports it, and the kernel never sees a file that it read whole shrink
 * to 0 (a size of 0 read through the page cache is an empty file).  Keyed
 * by two independent 64-bit hashes of the key (no key strings kept):
 * 24 bytes a file. */
struct size_slot {
	uint64_t h1, h2;       /* h1 == 0 && h2 == 0: empty */
	uint64_t size;
};

struct rcache {
	pthread_mutex_t lock;
	struct size_slot *sizes;       /* lock; open addressing, power of two */
	uint64_t nsizes, capsizes;     /* lock */
	uint64_t recomputed, size_changed; /* lock: computed again after eviction;
	                                  of those, with another size (a bug) */
	struct rc_entry *table;        /* lock */
	struct rc_entry *lru_head, *lru_tail; /* lock; head = most recent */
	uint64_t budget, used;         /* lock */
	uint32_t entries, computing;   /* lock */
	uint64_t hits, misses, waits, evictions; /* lock */
};

int rcache_new(struct rcache **out, uint64_t budget_bytes)
{
	struct rcache *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	int rc = pthread_mutex_init(&c->lock, NULL);
	if (rc) {
		free(c);
		return -rc;
	}
	c->budget = budget_bytes;
	*out = c;
	return 0;
}

static void key_hashes(const char *key, uint64_t *h1, uint64_t *h2)
{
	/* FNV-1a and a multiply-rotate hash: independent enough that a
	 * collision of both needs about 2^64 files */
	uint64_t a = 0xcbf29ce484222325ull, b = 0x9e3779b97f4a7c15ull;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		a = (a ^ *p) * 0x100000001b3ull;
		b = (b + *p) * 0xff51afd7ed558ccdull;
		b ^= b >> 29;
	}
	if (a == 0 && b == 0)
		a = 1;
	*h1 = a;
	*h2 = b;
}

/* The slot of (h1, h2), or the empty slot where it would go; lock held. */
static struct size_slot *size_find(struct rcache *c, uint64_t h1, uint64_t h2)
{
	if (!c->capsizes)
		return NULL;
	uint64_t mask = c->capsizes - 1;
	for (uint64_t i = h1 & mask;; i = (i + 1) & mask) {
		struct size_slot *s = &c->sizes[i];
		if ((s->h1 == h1 && s->h2 == h2) || (s->h1 == 0 && s->h2 == 0))
			return s;
	}
}

/* Keeps key's size; lock held.  Without memory the size is not kept
 * (getattr then reports it unknown: direct I/O, still right). */
static void size_remember(struct rcache *c, const char *key, uint64_t size)
{
	uint64_t h1, h2;
	key_hashes(key, &h1, &h2);
	if ((c->nsizes + 1) * 10 > c->capsizes * 7) {
		uint64_t cap = c->capsizes ? c->capsizes * 2 : 1024;
		struct size_slot *n = calloc(cap, sizeof *n), *old = c->sizes;
		if (!n)
			return;
		uint64_t oldcap = c->capsizes;
		c->sizes = n;
		c->capsizes = cap;
		for (uint64_t i = 0; i < oldcap; i++) {
			if (old[i].h1 || old[i].h2)
				*size_find(c, old[i].h1, old[i].h2) = old[i];
		}
		free(old);
	}
	struct size_slot *s = size_find(c, h1, h2);
	if (s->h1 || s->h2) {
		c->recomputed++;
		if (s->size != size)
			c->size_changed++;
	} else {
		c->nsizes++;
	}
	*s = (struct size_slot){ h1, h2, size };
}

static int size_recall(struct rcache *c, const char *key, uint64_t *size)
{
	uint64_t h1, h2;
	key_hashes(key, &h1, &h2);
	struct size_slot *s = size_find(c, h1, h2);
	if (!s || (!s->h1 && !s->h2))
		return 0;
	*size = s->size;
	return 1;
}

static uint64_t entry_cost(const struct rc_entry *e)
{
	return sizeof *e + strlen(e->key) + 1 + e->data.len;
}

static void entry_free(struct rc_entry *e)
{
	pthread_cond_destroy(&e->done);
	buf_free(&e->data);
	free(e->key);
	free(e);
}

static void lru_unlink(struct rcache *c, struct rc_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(struct rcache *c, struct rc_entry *e)
{
	e->prev = NULL;
	e->next = c->lru_head;
	if (c->lru_head)
		c->lru_head->prev = e;
	c->lru_head = e;
	if (!c->lru_tail)
		c->lru_tail = e;
}

/* Drops ready, linked entries from the table; frees them if unpinned. */
static void unlink_entry(struct rcache *c, struct rc_entry *e)
{
	HASH_DEL(c->table, e);
	e->linked = 0;
	c->entries--;
	if (e->state == RC_READY) {
		lru_unlink(c, e);
		c->used -= entry_cost(e);
	}
}

/* Caller holds c->lock. */
static void evict(struct rcache *c)
{
	struct rc_entry *e = c->lru_tail;
	while (e && c->used > c->budget) {
		struct rc_entry *prev = e->prev;
		if (e->pins == 0) {
			unlink_entry(c, e);
			c->evictions++;
			entry_free(e);
		}
		e = prev;
	}
}

void rcache_free(struct rcache *c)
{
	if (!c)
		return;
	struct rc_entry *e, *tmp;
	HASH_ITER(hh, c->table, e, tmp) {
		HASH_DEL(c->table, e);
		entry_free(e);
	}
	free(c->sizes);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Caller holds c->lock; e is pinned by the caller and ready. */
static void touch(struct rcache *c, struct rc_entry *e)
{
	if (e->linked && c->lru_head != e) {
		lru_unlink(c, e);
		lru_push_front(c, e);
	}
}

/* Caller holds c->lock. */
static void unpin(struct rcache *c, struct rc_entry *e)
{
	e->pins--;
	if (e->pins == 0 && !e->linked)
		entry_free(e);
	else
		evict(c);
}

static int wait_for(struct rcache *c, struct rc_entry *e, struct rc_entry **out)
{
	e->pins++;
	if (e->state == RC_COMPUTING) {
		c->waits++;
		while (e->state == RC_COMPUTING)
			pthread_cond_wait(&e->done, &c->lock);
	} else {
		c->hits++;
	}
	if (e->state == RC_FAILED) {
		int err = e->err;
		unpin(c, e);
		return err;
	}
	touch(c, e);
	*out = e;
	return 0;
}

static int new_entry(const char *key, struct rc_entry **out)
{
	struct rc_entry *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->key = strdup(key);
	if (!e->key || pthread_cond_init(&e->done, NULL) != 0) {
		free(e->key);
		free(e);
		return -ENOMEM;
	}
	buf_init(&e->data);
	e->state = RC_COMPUTING;
	e->pins = 1;
	*out = e;
	return 0;
}

/* Gives back the slack of a grown buffer: cached results live long. */
static void shrink(struct buf *b)
{
	if (b->cap > b->len + 4096 && b->len > 0) {
		uint8_t *p = realloc(b->data, b->len);
		if (p) {
			b->data = p;
			b->cap = b->len;
		}
	}
}

int rcache_get(struct rcache *c, const char *key, rc_compute_fn fn, void *ctx,
	       struct rc_entry **out)
{
	struct rc_entry *e;
	pthread_mutex_lock(&c->lock);
	HASH_FIND_STR(c->table, key, e);
	if (e) {
		int rc = wait_for(c, e, out);
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	int rc = new_entry(key, &e);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	HASH_ADD_KEYPTR(hh, c->table, e->key, strlen(e->key), e);
	e->linked = 1;
	c->entries++;
	c->computing++;
	c->misses++;
	pthread_mutex_unlock(&c->lock);

	rc = fn(ctx, &e->data);
	if (rc == 0)
		shrink(&e->data);

	pthread_mutex_lock(&c->lock);
	c->computing--;
	if (rc == 0) {
		e->state = RC_READY;
		size_remember(c, e->key, e->data.len);
		c->used += entry_cost(e);
		lru_push_front(c, e);
		*out = e;
	} else {
		e->state = RC_FAILED;
		e->err = rc;
		unlink_entry(c, e);
	}
	pthread_cond_broadcast(&e->done);
	if (rc)
		unpin(c, e);
	else
		evict(c);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void rcache_put(struct rcache *c, struct rc_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&c->lock);
	unpin(c, e);
	pthread_mutex_unlock(&c->lock);
}

const void *rc_data(const struct rc_entry *e)
{
	return e->data.data;
}

size_t rc_len(const struct rc_entry *e)
{
	return e->data.len;
}

int rcache_peek_size(struct rcache *c, const char *key, uint64_t *size)
{
	struct rc_entry *e;
	int found = 0;
	pthread_mutex_lock(&c->lock);
	HASH_FIND_STR(c->table, key, e);
	if (e && e->state == RC_READY) {
		*size = e->data.len;
		found = 1;
	} else {
		found = size_recall(c, key, size);
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

void rcache_stats(struct rcache *c, struct rcache_stats *st)
{
	pthread_mutex_lock(&c->lock);
	st->budget = c->budget;
	st->used = c->used;
	st->entries = c->entries;
	st->computing = c->computing;
	st->hits = c->hits;
	st->misses = c->misses;
	st->waits = c->waits;
	st->evictions = c->evictions;
	st->sizes_known = c->nsizes;
	st->sizes_bytes = c->capsizes * sizeof *c->sizes;
	st->recomputed = c->recomputed;
	st->size_changed = c->size_changed;
	pthread_mutex_unlock(&c->lock);
}

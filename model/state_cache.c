/* state_cache.c - see state_cache.h.
 *
 * One entry per GC of the trace (GCs are few next to objects).  One lock,
 * cache->lock; it is released while a state is built, and held while an
 * evicted state is freed (freeing is quick next to building).
 *
 * A state the trace brought along (trace->prebuilt: a heap dump opened
 * directly) is an entry from the start, borrowed: never evicted, never
 * freed here (the trace owns it).
 */
#include "state_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct heap_state *state; /* NULL unless built */
	uint32_t pins;
	int building;
	int failed;               /* damage is remembered; other errors retried */
	struct htr_err err;
	uint64_t last_used;
};

struct state_cache {
	const struct trace *t;
	uint32_t threads;         /* each build's; immutable */
	pthread_mutex_t lock;
	pthread_cond_t built;     /* signalled when a build finishes */
	struct entry *e;          /* [t->ngcs], guarded by lock */
	uint64_t budget, used, tick, hits, builds, evictions; /* lock */
	uint64_t peak_used, largest; /* lock: the most used at once; the largest state */
	uint32_t building;        /* lock */
	uint64_t build_done, build_total; /* atomics, progress of a build */
};

int state_cache_new(struct state_cache **out, const struct trace *t, uint64_t budget_bytes, uint32_t threads)
{
	struct state_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->e = calloc(t->ngcs ? t->ngcs : 1, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return -ENOMEM;
	}
	c->t = t;
	c->budget = budget_bytes;
	c->threads = threads;
	if (t->prebuilt && t->prebuilt->gc_index < t->ngcs) {
		struct entry *e = &c->e[t->prebuilt->gc_index];
		e->state = t->prebuilt;
		c->used += t->prebuilt->mem_bytes;
		c->peak_used = c->largest = t->prebuilt->mem_bytes;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->built, NULL);
	*out = c;
	return 0;
}

void state_cache_free(struct state_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->t->ngcs; i++)
		if (c->e[i].state != c->t->prebuilt) /* the trace's: not ours to free */
			heap_state_free(c->e[i].state);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->built);
	free(c->e);
	free(c);
}

/* Frees least-recently-used unpinned states until within budget, but
 * never the most recently used one: a state larger than the budget would
 * otherwise be freed as soon as its reader lets it go, and rebuilt for
 * every file read after (seen: a 24 M-object trace's 836 MiB state under
 * the default 768 MiB, 486 builds for 100 reads).  Caller holds the lock. */
static void evict(struct state_cache *c)
{
	struct entry *newest = NULL;
	for (uint32_t i = 0; i < c->t->ngcs && c->used > c->budget; i++)
		if (c->e[i].state && (!newest || c->e[i].last_used > newest->last_used))
			newest = &c->e[i];
	while (c->used > c->budget) {
		struct entry *victim = NULL;
		for (uint32_t i = 0; i < c->t->ngcs; i++) {
			struct entry *e = &c->e[i];
			if (e->state && !e->pins && e->state != c->t->prebuilt && e != newest &&
			    (!victim || e->last_used < victim->last_used))
				victim = e;
		}
		if (!victim)
			return; /* everything left is in use */
		c->used -= victim->state->mem_bytes;
		heap_state_free(victim->state);
		victim->state = NULL;
		c->evictions++;
	}
}

int state_cache_get(struct state_cache *c, uint32_t gc_index, const struct heap_state **out,
		    struct htr_err *err)
{
	if (gc_index >= c->t->ngcs)
		return htr_errf(err, -ENOENT, 0, "no GC with index %u", gc_index);
	struct entry *e = &c->e[gc_index];
	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (e->state) {
			e->pins++;
			e->last_used = ++c->tick;
			c->hits++;
			*out = e->state;
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		if (e->failed) {
			if (err)
				*err = e->err;
			pthread_mutex_unlock(&c->lock);
			return -EIO;
		}
		if (!e->building)
			break;
		pthread_cond_wait(&c->built, &c->lock);
	}
	e->building = 1;
	c->building++;
	c->builds++;
	/* The nearest earlier state in the cache saves reading the trace from
	 * its start (GC after GC, as the timeline does, costs the live set
	 * each, not the whole prefix).  Pinned while it serves as the base. */
	struct entry *be = NULL;
	for (uint32_t i = gc_index; i-- > 0;) {
		if (c->e[i].state) {
			be = &c->e[i];
			be->pins++;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);

	struct heap_state *s = NULL;
	struct htr_err berr;
	struct heap_build_opts o = { .progress_done = &c->build_done, .progress_total = &c->build_total,
				     .base = be ? be->state : NULL, .threads = c->threads };
	int rc = heap_state_build(c->t, gc_index, &o, &s, &berr);

	pthread_mutex_lock(&c->lock);
	if (be)
		be->pins--;
	e->building = 0;
	c->building--;
	if (rc == 0) {
		e->state = s;
		e->pins = 1;
		e->last_used = ++c->tick;
		c->used += s->mem_bytes;
		if (c->used > c->peak_used)
			c->peak_used = c->used;
		if (s->mem_bytes > c->largest)
			c->largest = s->mem_bytes;
		evict(c);
		*out = s;
	} else {
		if (rc == -EBADMSG || rc == -EPROTO) {
			e->failed = 1;
			e->err = berr;
		}
		if (err)
			*err = berr;
	}
	pthread_cond_broadcast(&c->built);
	pthread_mutex_unlock(&c->lock);
	return rc == 0 ? 0 : (rc == -ENOMEM ? rc : -EIO);
}

void state_cache_put(struct state_cache *c, const struct heap_state *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&c->lock);
	struct entry *e = &c->e[s->gc_index];
	if (e->state == s && e->pins) {
		e->pins--;
		evict(c);
	}
	pthread_mutex_unlock(&c->lock);
}

void state_cache_stats(struct state_cache *c, struct state_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&c->lock);
	st->budget = c->budget;
	st->used = c->used;
	for (uint32_t i = 0; i < c->t->ngcs; i++)
		st->cached += c->e[i].state != NULL;
	st->building = c->building;
	st->hits = c->hits;
	st->builds = c->builds;
	st->evictions = c->evictions;
	st->peak_used = c->peak_used;
	st->largest = c->largest;
	pthread_mutex_unlock(&c->lock);
	st->build_done = __atomic_load_n(&c->build_done, __ATOMIC_RELAXED);
	st->build_total = __atomic_load_n(&c->build_total, __ATOMIC_RELAXED);
}

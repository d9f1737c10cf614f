/* hprof_maps.c - see hprof_maps.h. */
#include "hprof_maps.h"
#include "mpar.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fibonacci hashing: one multiply; the caller masks the high-quality
 * high bits down by shifting (see slot_of). */
static uint64_t mix64(uint64_t k)
{
	return k * 0x9e3779b97f4a7c15ull;
}

static uint64_t slot_of(uint64_t k1, uint64_t cap)
{
	return mix64(k1) >> (64 - __builtin_ctzll(cap));
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

static void u64map_insert(uint64_t *keys, uint32_t *vals, uint64_t cap, uint64_t k1, uint32_t v,
			  uint64_t *n)
{
	uint64_t i = slot_of(k1, cap);
	while (keys[i] && keys[i] != k1)
		i = (i + 1) & (cap - 1);
	if (!keys[i])
		(*n)++;
	keys[i] = k1;
	vals[i] = v;
}

static int u64map_grow(struct u64map *m)
{
	uint64_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *vals = malloc(cap * sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	uint64_t n = 0;
	for (uint64_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64map_insert(keys, vals, cap, m->keys[i], m->vals[i], &n);
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	m->n = n;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if (key == UINT64_MAX)
		return -ERANGE;
	if ((m->n + 1) * 4 > m->cap * 3) {
		int rc = u64map_grow(m);
		if (rc)
			return rc;
	}
	u64map_insert(m->keys, m->vals, m->cap, key + 1, val, &m->n);
	return 0;
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap || key == UINT64_MAX)
		return U64MAP_NONE;
	uint64_t k1 = key + 1, i = slot_of(k1, m->cap);
	while (m->keys[i]) {
		if (m->keys[i] == k1)
			return m->vals[i];
		i = (i + 1) & (m->cap - 1);
	}
	return U64MAP_NONE;
}

/* ---- byte-string map ---------------------------------------------------- */

static uint32_t fnv1a(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

void strmap_free(struct strmap *m)
{
	buf_free(&m->arena);
	free(m->ent);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

uint32_t strmap_get(const struct strmap *m, const void *key, size_t len)
{
	if (!m->cap)
		return U64MAP_NONE;
	uint32_t h = fnv1a(key, len), i = h & (m->cap - 1);
	while (m->slots[i]) {
		const struct strmap_entry *e = &m->ent[m->slots[i] - 1];
		if (e->hash == h && e->len == len && memcmp(m->arena.data + e->off, key, len) == 0)
			return e->val;
		i = (i + 1) & (m->cap - 1);
	}
	return U64MAP_NONE;
}

static int strmap_rehash(struct strmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (uint32_t k = 0; k < m->nent; k++) {
		uint32_t i = m->ent[k].hash & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = k + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int strmap_put(struct strmap *m, const void *key, size_t len, uint32_t val)
{
	int rc;
	if (len > UINT32_MAX || m->nent == UINT32_MAX - 1)
		return -E2BIG;
	if ((uint64_t)(m->nent + 1) * 4 > (uint64_t)m->cap * 3 && (rc = strmap_rehash(m)))
		return rc;
	if (m->nent == m->capent) {
		uint32_t nc = m->capent ? m->capent * 2 : 64;
		struct strmap_entry *p = realloc(m->ent, nc * sizeof *p);
		if (!p)
			return -ENOMEM;
		m->ent = p;
		m->capent = nc;
	}
	struct strmap_entry *e = &m->ent[m->nent];
	e->off = m->arena.len;
	e->len = (uint32_t)len;
	e->hash = fnv1a(key, len);
	e->val = val;
	if ((rc = buf_put(&m->arena, key, len)))
		return rc;
	uint32_t i = e->hash & (m->cap - 1);
	while (m->slots[i])
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = ++m->nent;
	return 0;
}

/* ---- radix sort ----------------------------------------------------------- */

/* A pass on several threads: each task (a fixed contiguous range) counts
 * its own bytes, the offsets go bucket by bucket and within a bucket task
 * by task, and each task scatters its range in order, so the result is
 * the one-thread pass's exactly (stable), whoever runs which task. */
struct rpass {
	const struct keyidx *src;
	struct keyidx *dst;
	size_t n;
	int shift;
	uint32_t ntasks;
	size_t (*count)[256];  /* [ntasks] */
};

static void rpass_range(const struct rpass *p, uint32_t task, size_t *lo, size_t *hi)
{
	*lo = p->n * task / p->ntasks;
	*hi = p->n * (task + 1) / p->ntasks;
}

static int rpass_count(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	const struct rpass *p = ctx;
	size_t lo, hi, *count = p->count[task];
	rpass_range(p, task, &lo, &hi);
	memset(count, 0, 256 * sizeof *count);
	for (size_t i = lo; i < hi; i++)
		count[(p->src[i].key >> p->shift) & 0xff]++;
	return 0;
}

static int rpass_scatter(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	const struct rpass *p = ctx;
	size_t lo, hi, *count = p->count[task];
	rpass_range(p, task, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		p->dst[count[(p->src[i].key >> p->shift) & 0xff]++] = p->src[i];
	return 0;
}

/* Sorts below this many pairs stay on one thread. */
#define KEYIDX_PAR_MIN (1u << 17)

void keyidx_sort(struct keyidx *a, struct keyidx *tmp, size_t n, uint32_t threads)
{
	if (n < 2)
		return;
	uint64_t or_all = 0, and_all = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		or_all |= a[i].key;
		and_all &= a[i].key;
	}
	uint64_t differ = or_all ^ and_all;   /* bits that are not the same everywhere */
	struct rpass p = { .n = n, .ntasks = n >= KEYIDX_PAR_MIN ? mpar_resolve(threads) : 1 };
	/* the count table is a few KB; without it, the one-thread passes */
	if (p.ntasks > 1 && !(p.count = malloc(p.ntasks * sizeof *p.count)))
		p.ntasks = 1;
	struct keyidx *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 8) {
		if (!((differ >> shift) & 0xff))
			continue;
		if (p.ntasks > 1) {
			p.src = src;
			p.dst = dst;
			p.shift = shift;
			(void)mpar_for(p.ntasks, p.ntasks, rpass_count, &p);   /* its tasks never fail */
			size_t sum = 0;
			for (int b = 0; b < 256; b++)
				for (uint32_t t = 0; t < p.ntasks; t++) {
					size_t c = p.count[t][b];
					p.count[t][b] = sum;
					sum += c;
				}
			(void)mpar_for(p.ntasks, p.ntasks, rpass_scatter, &p);   /* its tasks never fail */
		} else {
			size_t count[256] = { 0 };
			for (size_t i = 0; i < n; i++)
				count[(src[i].key >> shift) & 0xff]++;
			size_t sum = 0;
			for (int b = 0; b < 256; b++) {
				size_t c = count[b];
				count[b] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
				dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
		}
		struct keyidx *t = src;
		src = dst;
		dst = t;
	}
	free(p.count);
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

/* ---- the object index --------------------------------------------------------- */

void idindex_free(struct idindex *x)
{
	free(x->chunk);
	free(x->bits);
	free(x->rank);
	iddir_free(&x->dir);
	memset(x, 0, sizeof *x);
}

/* Building the index on threads: tasks over ranges of ids that begin
 * where a chunk begins, so no two tasks touch one chunk's words, and
 * chunks are numbered in id order whoever runs which range. */
#define IDINDEX_PAR_MIN (1u << 17)   /* ids: below, one task */
#define IDINDEX_TASKS_MAX 64u

struct ixbuild {
	struct idindex *x;
	const uint64_t *ids;
	size_t lo[IDINDEX_TASKS_MAX + 1];   /* range k: ids [lo[k], lo[k+1]) */
	uint64_t part[IDINDEX_TASKS_MAX];   /* a task's OR of differences, then its chunks */
	uint64_t words_per_chunk;
	uint32_t ntasks;
};

static uint64_t ix_chunk(const struct idindex *x, uint64_t id)
{
	return ((id - x->base) >> x->shift) >> IDINDEX_CHUNK_BITS;
}

static int ix_diffs(void *ctx, uint32_t k, uint32_t worker)
{
	(void)worker;
	struct ixbuild *b = ctx;
	uint64_t diffs = 0, base = b->x->base;
	for (size_t i = b->lo[k]; i < b->lo[k + 1]; i++)
		diffs |= b->ids[i] - base;
	b->part[k] = diffs;
	return 0;
}

/* Distinct chunks of range k (ids ascend: a chunk's ids are consecutive). */
static int ix_used(void *ctx, uint32_t k, uint32_t worker)
{
	(void)worker;
	struct ixbuild *b = ctx;
	uint64_t used = 0, last = UINT64_MAX;
	for (size_t i = b->lo[k]; i < b->lo[k + 1]; i++) {
		uint64_t c = ix_chunk(b->x, b->ids[i]);
		used += c != last;
		last = c;
	}
	b->part[k] = used;
	return 0;
}

/* Range k's chunks numbered from part[k] (the chunks before it) and its
 * bits set. */
static int ix_bits(void *ctx, uint32_t k, uint32_t worker)
{
	(void)worker;
	struct ixbuild *b = ctx;
	struct idindex *x = b->x;
	uint32_t next = (uint32_t)(b->part[k] * b->words_per_chunk);
	for (size_t i = b->lo[k]; i < b->lo[k + 1]; i++) {
		uint64_t kk = (b->ids[i] - x->base) >> x->shift, c = kk >> IDINDEX_CHUNK_BITS;
		if (x->chunk[c] == IDINDEX_NONE) {
			x->chunk[c] = next;
			next += (uint32_t)b->words_per_chunk;
		}
		uint64_t wi = x->chunk[c] + ((kk & ((1u << IDINDEX_CHUNK_BITS) - 1)) >> 6);
		x->bits[wi] |= 1ull << (kk & 63);
	}
	return 0;
}

int idindex_build(struct idindex *x, const uint64_t *ids, size_t n, uint32_t threads)
{
	memset(x, 0, sizeof *x);
	x->ids = ids;
	x->n = n;
	if (n >= IDINDEX_NONE)
		return -E2BIG;
	if (!n)
		return 0;
	x->base = ids[0];
	struct ixbuild b = { .x = x, .ids = ids, .ntasks = 1 };
	uint32_t nthreads = n >= IDINDEX_PAR_MIN ? mpar_resolve(threads) : 1;
	if (nthreads > 1)
		b.ntasks = nthreads * 2 < IDINDEX_TASKS_MAX ? nthreads * 2 : IDINDEX_TASKS_MAX;
	for (uint32_t k = 0; k <= b.ntasks; k++)
		b.lo[k] = n * k / b.ntasks;
	/* (the ix_ tasks never fail) */
	(void)mpar_for(nthreads, b.ntasks, ix_diffs, &b);
	uint64_t diffs = 0;   /* the common alignment of all ids, relative to base */
	for (uint32_t k = 0; k < b.ntasks; k++)
		diffs |= b.part[k];
	x->shift = diffs ? (uint32_t)__builtin_ctzll(diffs) : 0;
	/* ranges start where a chunk starts (a chunk holds at most 2^16 ids) */
	for (uint32_t k = 1; k < b.ntasks; k++) {
		size_t i = b.lo[k] > b.lo[k - 1] ? b.lo[k] : b.lo[k - 1];
		while (i > 0 && i < n && ix_chunk(x, ids[i]) == ix_chunk(x, ids[i - 1]))
			i++;
		b.lo[k] = i;
	}
	b.words_per_chunk = (1ull << IDINDEX_CHUNK_BITS) / 64;
	uint64_t nchunks = ix_chunk(x, ids[n - 1]) + 1;
	(void)mpar_for(nthreads, b.ntasks, ix_used, &b);
	uint64_t used = 0;    /* chunks holding an object */
	for (uint32_t k = 0; k < b.ntasks; k++) {
		uint64_t u = b.part[k];
		b.part[k] = used;   /* chunks before range k */
		used += u;
	}
	/* 12 bytes per chunk word (bits and rank), 4 per chunk table entry */
	if (used * b.words_per_chunk * 12 + nchunks * 4 > (uint64_t)n * 12 + 4096 ||
	    used * b.words_per_chunk >= IDINDEX_NONE)
		return iddir_build(&x->dir, ids, (uint32_t)n);
	x->chunk = malloc(nchunks * sizeof *x->chunk);
	x->bits = calloc(used * b.words_per_chunk, sizeof *x->bits);
	x->rank = malloc(used * b.words_per_chunk * sizeof *x->rank);
	if (!x->chunk || !x->bits || !x->rank) {
		idindex_free(x);
		return -ENOMEM;
	}
	memset(x->chunk, 0xff, nchunks * sizeof *x->chunk);
	(void)mpar_for(nthreads, b.ntasks, ix_bits, &b);
	/* chunks were numbered in ascending id order: ranks run straight */
	uint32_t before = 0;
	for (uint64_t w = 0; w < used * b.words_per_chunk; w++) {
		x->rank[w] = before;
		before += popcount64(x->bits[w]);
	}
	x->nchunks = nchunks;
	return 0;
}

static int keyidx_ascending(const struct keyidx *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (a[i - 1].key > a[i].key)
			return 0;
	return 1;
}

int keyidx_sort_after(struct keyidx *a, size_t nhead, size_t n, uint32_t threads)
{
	if (!keyidx_ascending(a, nhead))
		nhead = 0;
	size_t k = n - nhead;
	/* the whole: a temporary of n; a tail: its copy and the sort's temporary */
	struct keyidx *tail = malloc((nhead ? 2 * k : n) * sizeof *tail + 1);
	if (!tail)
		return -ENOMEM;
	if (!nhead) {
		keyidx_sort(a, tail, n, threads);
		free(tail);
		return 0;
	}
	memcpy(tail, a + nhead, k * sizeof *tail);
	keyidx_sort(tail, tail + k, k, threads);
	/* merged from the back: of equal keys the head's goes first, so the
	 * tail's is placed first */
	size_t i = nhead, j = k, w = n;
	while (j > 0) {
		if (i > 0 && a[i - 1].key > tail[j - 1].key)
			a[--w] = a[--i];
		else
			a[--w] = tail[--j];
	}
	free(tail);
	return 0;
}

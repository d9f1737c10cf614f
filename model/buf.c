/* buf.c - see buf.h */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
}

int buf_grow(struct buf *b, size_t extra)
{
	if (b->cap - b->len >= extra)
		return 0;
	size_t want = b->len + extra;
	if (want < b->len)
		return -ENOMEM;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < want) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_put(struct buf *b, const void *p, size_t n)
{
	int rc = buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int buf_put_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	int rc = buf_put_uv(b, n);
	if (rc)
		return rc;
	return buf_put(b, s, n);
}

int buf_put_le32(struct buf *b, uint32_t v)
{
	uint8_t t[4];
	put_le32(t, v);
	return buf_put(b, t, 4);
}

int buf_put_le64(struct buf *b, uint64_t v)
{
	uint8_t t[8];
	put_le64(t, v);
	return buf_put(b, t, 8);
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	int rc = buf_reserve(b, (size_t)n + 1);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int cur_uv_slow(struct cur *c, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end)
			return -EBADMSG;
		uint8_t byte = *c->p++;
		r |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EBADMSG; /* more than 10 bytes: not a varint we wrote */
}

int cur_str(struct cur *c, const char **s, uint32_t *len)
{
	uint64_t n;
	int rc = cur_uv(c, &n);
	if (rc)
		return rc;
	if (n > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	*s = (const char *)c->p;
	*len = (uint32_t)n;
	c->p += n;
	return 0;
}

int array_reserve(void **p, uint64_t *cap, uint64_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint64_t nc = *cap ? *cap : 64;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		nc *= 2;
	}
	void *q = realloc(*p, nc * elem);
	if (!q)
		return -ENOMEM;
	mem_advise_huge(q, nc * elem);
	*p = q;
	*cap = nc;
	return 0;
}

int runs_push(uint64_t **at, uint32_t **val, uint32_t *n, uint64_t *cap, uint64_t a, uint32_t v)
{
	uint64_t c1 = *cap, c2 = *cap;
	int rc = array_reserve((void **)at, &c1, (uint64_t)*n + 1, sizeof(**at));
	if (!rc)
		rc = array_reserve((void **)val, &c2, (uint64_t)*n + 1, sizeof(**val));
	if (rc)
		return rc;
	*cap = c1;
	(*at)[*n] = a;
	(*val)[(*n)++] = v;
	return 0;
}

#define HUGE_PAGE ((size_t)2 << 20)

void mem_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < 2 * HUGE_PAGE)
		return;
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only: may fail */
#else
	(void)p;
	(void)bytes;
#endif
}

void *big_malloc(size_t bytes)
{
	void *p = malloc(bytes);
	if (p)
		mem_advise_huge(p, bytes);
	return p;
}

void *big_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	/* calloc's fresh mmap'd pages are zero already; advising after
	 * the fact still applies to the pages not yet touched */
	void *p = calloc(n, size);
	if (p)
		mem_advise_huge(p, n * size);
	return p;
}

/* Table-driven CRC-32 (IEEE 802.3, reflected), the one zlib and PNG use. */
static uint32_t crc_table[256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t crc32_ieee(const void *data, size_t n)
{
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init(); /* idempotent: racing initialisers write equal tables */
	const uint8_t *p = data;
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

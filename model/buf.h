/* buf.h - growable byte buffer, LEB128 varints and CRC-32.
 *
 * A struct buf owns its bytes (data is malloc'd; buf_free releases it).
 * Appends never fail silently: they return -ENOMEM and leave the buffer as
 * it was.  Readers decode from a (pointer, end) cursor and return -EBADMSG
 * on a value that runs past the end, so a damaged trace can never make a
 * decoder read out of bounds.
 */
#ifndef HEAPFS_BUF_H
#define HEAPFS_BUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data; /* owned */
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);           /* len = 0, keeps capacity */
/* The growing part of buf_reserve, out of line. */
int buf_grow(struct buf *b, size_t extra);
/* The appends below are inline: a trace's writer puts nine varints for
 * every object of a heap dump (24 M objects: about 0.3 s of calls). */
static inline int buf_reserve(struct buf *b, size_t extra)
{
	return b->cap - b->len >= extra ? 0 : buf_grow(b, extra);
}
int buf_put(struct buf *b, const void *p, size_t n);
static inline int buf_putc(struct buf *b, uint8_t c)
{
	int rc = buf_reserve(b, 1);
	if (!rc)
		b->data[b->len++] = c;
	return rc;
}
/* unsigned LEB128 */
static inline int buf_put_uv(struct buf *b, uint64_t v)
{
	int rc = buf_reserve(b, 10);
	if (rc)
		return rc;
	uint8_t *p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
	return 0;
}
/* zigzag + LEB128 */
static inline int buf_put_sv(struct buf *b, int64_t v)
{
	return buf_put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
int buf_put_str(struct buf *b, const char *s); /* length varint + bytes */
int buf_put_le32(struct buf *b, uint32_t v);
int buf_put_le64(struct buf *b, uint64_t v);
/* printf-style append; returns -ENOMEM or 0 */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Decoding cursor over bytes that belong to someone else. */
struct cur {
	const uint8_t *p;
	const uint8_t *end;
};

int cur_uv_slow(struct cur *c, uint64_t *v);

/* The decoders below are inline: they run once per field of every event,
 * tens of millions of times when a large heap is rebuilt. */
static inline int cur_uv(struct cur *c, uint64_t *v)
{
	if (c->p < c->end && !(*c->p & 0x80)) { /* one byte: most values */
		*v = *c->p++;
		return 0;
	}
	if (c->p + 1 < c->end && !(c->p[1] & 0x80)) { /* two: most of the rest */
		*v = (uint64_t)(c->p[0] & 0x7f) | (uint64_t)c->p[1] << 7;
		c->p += 2;
		return 0;
	}
	return cur_uv_slow(c, v);
}

static inline int cur_u32(struct cur *c, uint32_t *v) /* must fit 32 bits */
{
	uint64_t w;
	int rc = cur_uv(c, &w);
	if (rc)
		return rc;
	if (w > UINT32_MAX)
		return -EBADMSG;
	*v = (uint32_t)w;
	return 0;
}

static inline int cur_sv(struct cur *c, int64_t *v)
{
	uint64_t w;
	int rc = cur_uv(c, &w);
	if (rc)
		return rc;
	*v = (int64_t)(w >> 1) ^ -(int64_t)(w & 1);
	return 0;
}

static inline int cur_byte(struct cur *c, uint8_t *v)
{
	if (c->p >= c->end)
		return -EBADMSG;
	*v = *c->p++;
	return 0;
}
/* A string: points into the cursor's bytes, not NUL-terminated. */
int cur_str(struct cur *c, const char **s, uint32_t *len);

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

uint32_t crc32_ieee(const void *data, size_t n);

/* Makes the array *p (elements of elem bytes, *cap of them allocated) hold
 * at least need elements, doubling from 64; *p and *cap change together.
 * Returns 0 or -ENOMEM (the array is then unchanged).  The caller owns *p. */
int array_reserve(void **p, uint64_t *cap, uint64_t need, size_t elem);

/* Appends (at, val) to two parallel arrays that grow together (*cap
 * elements allocated in each): the runs of high slot bits of a graph's
 * edges (from edge at on, the high bits are val).  0 or -ENOMEM (then
 * nothing changed).  The caller owns both arrays. */
int runs_push(uint64_t **at, uint32_t **val, uint32_t *n, uint64_t *cap, uint64_t a, uint32_t v);

/* Large arrays of a heap state are read at random by graph walks: backed
 * by 2 MiB pages they take far fewer TLB misses and page faults.  Advises
 * the kernel (MADV_HUGEPAGE) for the whole huge pages inside
 * [p, p + bytes); a no-op below a few MiB and where unsupported. */
void mem_advise_huge(void *p, size_t bytes);

/* malloc / calloc that advise huge pages for large blocks; free() them. */
void *big_malloc(size_t bytes);
void *big_calloc(size_t n, size_t size);

#endif

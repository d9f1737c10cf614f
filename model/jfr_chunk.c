/* jfr_chunk.c - one chunk of a JFR recording: its header, the constant
 * pools (checkpoint events chained backwards from the header's offset)
 * and the check of every event against the metadata.
 *
 * Header (jdk.jfr.internal.consumer.ChunkHeader, 68 bytes, big-endian):
 *   0  magic "FLR\0"          4  major u2, minor u2
 *   8  chunk size             16 constant pool offset (of the last checkpoint)
 *   24 metadata offset        32 start, ns since the epoch
 *   40 duration, ns           48 start ticks
 *   56 ticks per second       64 file state u1 (0 finished, 255 being updated)
 *   65-66 padding             67 flags u1: 1 compressed integers, 2 final chunk
 * Offsets are from the chunk's start.
 *
 * Events follow the header: size (an int), type id (a long), then the
 * fields per the metadata.  A type id the metadata does not name as an
 * event is skipped by its size, as ChunkParser.readEvent does; the fields
 * of an event must end within its size.
 *
 * Checkpoints (ChunkParser.fillConstantPools): size, type id 1, start
 * time, duration, delta to the previous checkpoint (0 for the first), a
 * type byte (1 flush, 2 chunk header, 4 statics, 8 thread), a pool count,
 * and per pool: type id, entry count (> 0), entries of key and value.
 * Flush checkpoints (written at every flush of a streaming recording)
 * carry pools as the others do; a type may have pools in several
 * checkpoints.  The JDK walks the chain from the header's offset back to
 * the first, and a key seen again replaces the value (so the earliest
 * checkpoint's wins): done the same here.  The JDK writes every delta
 * negative; a delta that is not is damage (so the walk always ends).
 */
#include <string.h>

#include "buf.h"
#include "jfr_internal.h"

static int64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

int jfr_chunk_header(const uint8_t *base, uint64_t size, uint64_t off, struct jfr_chunk *h,
		     struct htr_err *err)
{
	const uint8_t *p = base + off;
	memset(h, 0, sizeof *h);
	h->offset = off;
	if (size - off < 4 || memcmp(p, JFR_MAGIC, 4) != 0)
		return htr_errf(err, size - off < 4 ? -ENODATA : -EPROTO, off,
				"not a JFR chunk (no \"FLR\\0\" magic)");
	if (size - off < JFR_HEADER_SIZE)
		return htr_errf(err, -ENODATA, off, "chunk header cut after %llu of its %u bytes",
				(unsigned long long)(size - off), JFR_HEADER_SIZE);
	h->major = (uint16_t)(p[4] << 8 | p[5]);
	h->minor = (uint16_t)(p[6] << 8 | p[7]);
	if (h->major != 2)
		return htr_errf(err, -EPROTO, off + 4,
				"chunk format version %u.%u: this reader reads 2.x (JDK 11 and later)",
				h->major, h->minor);
	int64_t csize = be64(p + 8), cp = be64(p + 16), md = be64(p + 24);
	h->start_nanos = be64(p + 32);
	h->duration_nanos = be64(p + 40);
	h->start_ticks = be64(p + 48);
	h->ticks_per_second = be64(p + 56);
	h->flags = p[67];
	if (md == 0 || cp == 0 || csize == JFR_HEADER_SIZE)
		return htr_errf(err, -ENODATA, off, "chunk was not finished (no metadata or constant pools yet)");
	if (csize < JFR_HEADER_SIZE)
		return htr_errf(err, -EBADMSG, off + 8, "chunk size %lld is smaller than its header",
				(long long)csize);
	if ((uint64_t)csize > size - off)
		return htr_errf(err, -ENODATA, off, "chunk of %lld bytes cut after %llu bytes",
				(long long)csize, (unsigned long long)(size - off));
	h->size = (uint64_t)csize;
	h->cpool_offset = (uint64_t)cp;
	h->meta_offset = (uint64_t)md;
	if (md < JFR_HEADER_SIZE || md >= csize || cp < JFR_HEADER_SIZE || cp >= csize)
		return htr_errf(err, -EBADMSG, off + 16,
				"constant pool offset %lld or metadata offset %lld outside the chunk of %lld bytes",
				(long long)cp, (long long)md, (long long)csize);
	if (h->ticks_per_second <= 0)
		return htr_errf(err, -EBADMSG, off + 56, "ticks per second is %lld", (long long)h->ticks_per_second);
	return 0;
}

/* Reads an event's size and type id at in->pos; *end: where it ends. */
static int event_head(struct jfr_chunk_ctx *c, struct jfr_in *in, uint64_t *end, int64_t *type)
{
	uint64_t at = in->pos;
	int32_t size;
	int rc = jin_int(in, &size);
	if (rc)
		return rc;
	if (size <= 0 || (uint64_t)size > c->end - at)
		return htr_errf(c->err, -EBADMSG, at, "event size %d %s", size,
				size <= 0 ? "is not positive" : "runs past the chunk's end");
	*end = at + (uint64_t)size;
	in->end = *end;
	return jin_long(in, type);
}

static int read_pool(struct jfr_chunk_ctx *c, struct jfr_in *in)
{
	uint64_t at = in->pos, ci;
	int64_t type;
	uint32_t count;
	int rc = jin_long(in, &type);
	if (rc)
		return rc;
	if (!jfr_map_get(&c->meta.by_id, (uint64_t)type, 0, &ci))
		return htr_errf(c->err, -EBADMSG, at, "constant pool of type id %lld, which the metadata does not define",
				(long long)type);
	if ((rc = jin_count(in, &count, "constant pool entry")))
		return rc;
	if (!count)
		return htr_errf(c->err, -EBADMSG, at, "constant pool of %s with no entries", c->meta.cls[ci].name);
	for (uint32_t i = 0; i < count; i++) {
		int64_t key;
		uint32_t root;
		if ((rc = jin_long(in, &key)) || (rc = jfr_map_put(&c->pool, ci, (uint64_t)key, in->pos)))
			return rc;
		c->vals.n = 0;
		if ((rc = jfr_decode(c, in, (uint32_t)ci, JFR_NONE, &root)))
			return rc;
	}
	return 0;
}

static int read_checkpoint(struct jfr_chunk_ctx *c, uint64_t pos, int64_t *delta)
{
	struct jfr_in in = { .base = c->rec->data, .pos = pos, .end = c->end, .compressed = c->compressed,
			     .err = c->err };
	uint64_t end;
	int64_t type, skip;
	uint8_t flags;
	uint32_t npools;
	int rc = event_head(c, &in, &end, &type);
	if (rc)
		return rc;
	if (type != 1)
		return htr_errf(c->err, -EBADMSG, pos, "expected a checkpoint event (type 1), found type %lld",
				(long long)type);
	if ((rc = jin_long(&in, &skip)) || (rc = jin_long(&in, &skip)) || (rc = jin_long(&in, delta)) ||
	    (rc = jin_u1(&in, &flags)) || (rc = jin_count(&in, &npools, "constant pool")))
		return rc;
	for (uint32_t i = 0; i < npools; i++)
		if ((rc = read_pool(c, &in)))
			return rc;
	if (in.pos != end)
		return htr_errf(c->err, -EBADMSG, pos, "checkpoint's pools end at %llu, its size says %llu",
				(unsigned long long)in.pos, (unsigned long long)end);
	return 0;
}

static int index_pools(struct jfr_chunk_ctx *c)
{
	/* the header's offset: the last checkpoint; each names the one before */
	uint64_t pos = c->start + c->hdr->cpool_offset;
	int64_t delta;
	for (;;) {
		int rc = read_checkpoint(c, pos, &delta);
		if (rc)
			return rc;
		if (delta == 0)
			return 0;
		if (delta > 0 || (uint64_t)-(delta + 1) >= pos - c->start - JFR_HEADER_SIZE)
			return htr_errf(c->err, -EBADMSG, pos, "checkpoint's delta %lld does not lead back into the chunk",
					(long long)delta);
		pos -= (uint64_t)-(delta + 1) + 1;
	}
}

int jfr_chunk_check(struct jfr_chunk_ctx *c)
{
	int rc = index_pools(c);
	if (rc)
		return rc;
	struct jfr_in in = { .base = c->rec->data, .pos = c->start + JFR_HEADER_SIZE, .compressed = c->compressed,
			     .err = c->err };
	while (in.pos < c->end) {
		uint64_t end, ci;
		int64_t type;
		uint32_t root;
		in.end = c->end;
		if ((rc = event_head(c, &in, &end, &type)))
			return rc;
		if (type > 1 && jfr_map_get(&c->meta.by_id, (uint64_t)type, 0, &ci) && c->meta.cls[ci].event) {
			c->vals.n = 0;
			if ((rc = jfr_decode(c, &in, (uint32_t)ci, JFR_NONE, &root)))
				return rc;
		}
		in.pos = end;
	}
	return 0;
}

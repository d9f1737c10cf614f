/* fuzz_trace_input.h - the input format of fuzz_trace_frames and
 * fuzz_trace_state (included by each; everything here is static).
 *
 * An input is one of two things:
 *   - a trace file as it is (anything not starting with FUZZ_MAGIC): this
 *     exercises the header, frame header and trailer checks, but mutations
 *     of a payload almost never survive the CRCs and zstd's checksum;
 *   - a "structured" input (FUZZ_MAGIC, see build_structured below) that
 *     carries uncompressed frame payloads: the harness writes a valid file
 *     header, compresses every payload and fills in lengths and CRCs, so
 *     mutations reach the event decoder, the indexer and the reconstructor.
 * tests/fuzz/make_seeds.c writes both forms of each seed.  The bytes go to
 * one memfd (fuzz_common.h), because the readers take a path.
 */
#ifndef HEAPFS_FUZZ_TRACE_INPUT_H
#define HEAPFS_FUZZ_TRACE_INPUT_H

#include <zstd.h>

#include "model/buf.h"
#include "model/htr_reader.h"

#include "fuzz_common.h"

#define FUZZ_MAGIC "HTRFUZZ1"
#define FUZZ_ZSTD_LEVEL 3  /* the writer's default, so seeds rebuild byte-identical */

/* Consumes n bytes of the structured input, little-endian; missing bytes
 * read as 0 so that every input means something. */
static uint64_t take_le(const uint8_t **p, const uint8_t *end, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n && *p < end; i++)
		v |= (uint64_t)*(*p)++ << (8 * i);
	return v;
}

/* Structured input:
 *   FUZZ_MAGIC
 *   u8  flags     bit 0: append a trailer naming the last footer frame
 *   u16 cut       bytes cut off the end of the finished file (truncation)
 *   frame*        u8 kind (1 + k % 3) | u32 nevents | u16 raw_len | raw_len bytes
 * into out, which becomes a valid header plus frames with correct lengths,
 * zstd payloads (content checksum on) and CRCs.  Returns 0 or -ENOMEM. */
static int build_structured(const uint8_t *data, size_t size, struct buf *out)
{
	static ZSTD_CCtx *cctx;
	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, FUZZ_ZSTD_LEVEL)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)))
			return -ENOMEM;
	}
	const uint8_t *p = data + strlen(FUZZ_MAGIC), *end = data + size;
	uint32_t flags = (uint32_t)take_le(&p, end, 1);
	uint32_t cut = (uint32_t)take_le(&p, end, 2);

	uint8_t h[HTR_HEADER_SIZE] = { 0 };
	memcpy(h, HTR_MAGIC, 8);
	h[8] = HTR_VERSION_MAJOR;
	h[10] = HTR_VERSION_MINOR;
	put_le32(h + 12, HTR_HEADER_SIZE);
	put_le32(h + 28, crc32_ieee(h, 28));
	buf_reset(out);
	int rc = buf_put(out, h, sizeof(h));
	uint64_t footer_at = 0, footer_len = 0;
	while (!rc && p < end) {
		uint32_t kind = 1 + (uint32_t)take_le(&p, end, 1) % 3;
		uint32_t nevents = (uint32_t)take_le(&p, end, 4);
		size_t raw_len = (size_t)take_le(&p, end, 2);
		if (raw_len > (size_t)(end - p))
			raw_len = (size_t)(end - p);
		size_t bound = ZSTD_compressBound(raw_len);
		uint64_t at = out->len;
		rc = buf_reserve(out, HTR_FRAME_HEADER_SIZE + bound);
		if (rc)
			break;
		size_t comp = ZSTD_compress2(cctx, out->data + at + HTR_FRAME_HEADER_SIZE, bound, p, raw_len);
		if (ZSTD_isError(comp))
			return -ENOMEM;
		p += raw_len;
		uint8_t *fh = out->data + at;
		memcpy(fh, HTR_FRAME_MAGIC, 4);
		put_le32(fh + 4, kind);
		put_le64(fh + 8, comp);
		put_le64(fh + 16, raw_len);
		put_le32(fh + 24, nevents);
		put_le32(fh + 28, crc32_ieee(fh, 28));
		out->len = at + HTR_FRAME_HEADER_SIZE + comp;
		if (kind == HTR_FRAME_FOOTER) {
			footer_at = at;
			footer_len = HTR_FRAME_HEADER_SIZE + comp;
		}
	}
	if (!rc && (flags & 1) && footer_len) {
		uint8_t t[HTR_TRAILER_SIZE];
		put_le64(t, footer_at);
		put_le64(t + 8, footer_len);
		memcpy(t + 16, HTR_TRAILER_MAGIC, 8);
		rc = buf_put(out, t, sizeof(t));
	}
	if (!rc)
		out->len -= cut < out->len ? cut : out->len;
	return rc;
}

/* Writes the input, built first when it is structured, to the scratch
 * file.  Returns its path, or NULL for an input not worth reading (a
 * structured one that does not build). */
static const char *trace_input(const uint8_t *data, size_t size)
{
	static struct fuzz_file file;
	static struct buf built;
	fuzz_file_open(&file, "heapfs-fuzz-trace");
	if (size >= strlen(FUZZ_MAGIC) && memcmp(data, FUZZ_MAGIC, strlen(FUZZ_MAGIC)) == 0) {
		if (build_structured(data, size, &built) != 0)
			return NULL;
		data = built.data;
		size = built.len;
	}
	fuzz_file_write(&file, data, size);
	return file.path;
}

#endif

/* fuzz_trace.c - libFuzzer target for the trace reader.
 *
 * An input is one of two things:
 *   - a trace file as it is (anything not starting with FUZZ_MAGIC): this
 *     exercises the header, frame header and trailer checks, but mutations
 *     of a payload almost never survive the CRCs and zstd's checksum;
 *   - a "structured" input (FUZZ_MAGIC, see build_structured below) that
 *     carries uncompressed frame payloads: the harness writes a valid file
 *     header, compresses every payload and fills in lengths and CRCs, so
 *     mutations reach the event decoder, the indexer and the reconstructor.
 * The resulting bytes are written to one memfd (created once, rewritten per
 * input), because trace_open() takes a path: /proc/self/fd/N.  The file then
 * goes through everything that reads untrusted bytes:
 *   1. the low-level reader on its own: header, then frame headers walked
 *      from the first frame on, and every event of every frame (this reaches
 *      frames that trace_open would refuse before looking at them);
 *   2. trace_open(), and when it opens: every frame of its frame table
 *      iterated again, and heap_state_build() for every GC (capped), with
 *      the lookup functions of the built state exercised a little.
 * Nothing may crash, hang or leak, whatever the bytes.  Error codes are
 * expected and ignored: refusing damage is the correct outcome.
 *
 * Built by `make fuzz-short` / `make fuzz` (clang -fsanitize=fuzzer,...).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "model/buf.h"
#include "model/heap_state.h"
#include "model/htr_reader.h"
#include "model/trace.h"

#define MAX_GCS 16u        /* heap states built per input */
#define MAX_FRAMES 64u     /* frames iterated per input, per pass */
#define MAX_EVENTS 100000u /* events read per frame */

#define FUZZ_MAGIC "HTRFUZZ1"
#define FUZZ_ZSTD_LEVEL 3  /* the writer's default, so seeds rebuild byte-identical */

static char input_path[64];
static int input_fd = -1;

/* Creates the input file once per process: a memfd (or an unlinked /tmp
 * file), kept open, rewritten per input and opened by the readers through
 * /proc/self/fd, so nothing is left behind when the process dies on a
 * crash. */
static int input_file_init(void)
{
	if (input_fd >= 0)
		return 0;
	input_fd = memfd_create("heapfs-fuzz-trace", MFD_CLOEXEC);
	if (input_fd < 0) {
		char tmp[] = "/tmp/heapfs-fuzz-trace-XXXXXX";
		input_fd = mkostemp(tmp, O_CLOEXEC);
		if (input_fd < 0)
			return -errno;
		unlink(tmp);
	}
	snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
	return 0;
}

static int input_file_write(const uint8_t *data, size_t size)
{
	if (ftruncate(input_fd, 0) != 0)
		return -errno;
	size_t done = 0;
	while (done < size) {
		ssize_t k = pwrite(input_fd, data + done, size - done, (off_t)done);
		if (k < 0)
			return -errno;
		done += (size_t)k;
	}
	return 0;
}

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

/* Reads every event of the frame whose header is h; the result is ignored,
 * only the absence of crashes and leaks matters. */
static void iterate_frame(const struct htr_file *f, const struct htr_frame_hdr *h)
{
	struct htr_iter *it = NULL;
	struct htr_err err;
	if (htr_iter_open(&it, f, h, &err) != 0)
		return;
	struct htr_event ev;
	for (uint32_t k = 0; k < MAX_EVENTS; k++) {
		if (htr_iter_next(it, &ev, &err) != 1)
			break;
		(void)htr_iter_raw_pos(it);
	}
	htr_iter_close(it);
}

/* Pass 1: the raw reader, frame after frame from the header on. */
static void walk_raw(void)
{
	struct htr_file *f = NULL;
	struct htr_err err;
	if (htr_file_open(&f, input_path, &err) != 0)
		return;
	uint64_t off = HTR_HEADER_SIZE;
	for (uint32_t k = 0; k < MAX_FRAMES && off < f->size; k++) {
		struct htr_frame_hdr h;
		if (htr_frame_header(f, off, &h, &err) != 0)
			break;
		iterate_frame(f, &h);
		uint64_t next = off + HTR_FRAME_HEADER_SIZE + h.comp_len;
		if (next <= off) /* a length that wraps would loop forever */
			break;
		off = next;
	}
	uint64_t footer;
	if (htr_trailer(f, &footer) == 0) {
		struct htr_frame_hdr h;
		if (htr_frame_header(f, footer, &h, &err) == 0)
			iterate_frame(f, &h);
	}
	htr_file_close(f);
}

/* Touches the built state's arrays so that ASan sees any bad extent. */
static void probe_state(const struct heap_state *s)
{
	(void)heap_state_memory(s);
	if (s->n == 0)
		return;
	uint32_t last = s->n - 1;
	(void)hs_info(s, 0);
	(void)hs_info(s, last);
	/* The id directory must agree with the id column.  (Not "== last":
	 * a trace that allocates one id twice yields two equal ids today;
	 * reported to the model's owner, not a memory error.) */
	uint32_t found = heap_state_find(s, s->id[last]);
	if (found >= s->n || s->id[found] != s->id[last])
		abort();
	(void)heap_state_find(s, s->id[0] + 1);
	(void)heap_state_find(s, UINT64_MAX);
	(void)hs_is_reachable(s, last);
	if (s->has_graph) {
		if (s->out_off[0] < s->out_off[1])
			(void)hs_ref_slot(s, 0, s->out_off[0]);
		if (s->out_off[last] < s->out_off[s->n])
			(void)hs_ref_slot(s, last, s->out_off[s->n] - 1);
	}
}

/* Pass 2: the indexed trace and the reconstructor. */
static void walk_trace(void)
{
	struct trace *t = NULL;
	struct htr_err err;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, input_path, &oo, &err) != 0)
		return;
	for (uint32_t k = 0; k < t->nframes && k < MAX_FRAMES; k++) {
		struct htr_frame_hdr h;
		if (htr_frame_header(t->file, t->frames[k].offset, &h, &err) == 0)
			iterate_frame(t->file, &h);
	}
	uint32_t ngcs = t->ngcs < MAX_GCS ? t->ngcs : MAX_GCS;
	for (uint32_t g = 0; g < ngcs; g++) {
		struct heap_state *s = NULL;
		struct heap_build_opts bo = { .progress = NULL };
		if (heap_state_build(t, g, &bo, &s, &err) == 0) {
			probe_state(s);
			heap_state_free(s);
		}
	}
	char scratch[64];
	(void)trace_type_name(t, 0, scratch, sizeof(scratch));
	(void)trace_type_name(t, UINT32_MAX, scratch, sizeof(scratch));
	(void)trace_info(t, "vm.name");
	(void)trace_gc_index(t, 1);
	(void)trace_thread_index(t, 1);
	trace_close(t);
}

/* UBSan stops at the first report: without this, undefined behaviour is
 * printed and the run goes on, and the input that caused it is lost. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/* Defaults the Makefile's command line does not give: a per-input timeout
 * (libFuzzer's own is 20 minutes, so a hang would stall `make test`) and
 * the dictionary.  Inserted right after argv[0], so that flags given on
 * the command line come later and win. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char *args[256];
	static char timeout[] = "-timeout=10";
	static char dict[] = "-dict=tests/fuzz/fuzz_trace.dict";
	int n = 0;
	if (*argc < 1 || *argc > 250)
		return 0;
	args[n++] = (*argv)[0];
	args[n++] = timeout;
	if (access(dict + strlen("-dict="), R_OK) == 0)
		args[n++] = dict;
	for (int i = 1; i < *argc; i++)
		args[n++] = (*argv)[i];
	args[n] = NULL;
	*argc = n;
	*argv = args;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (input_file_init() != 0) {
		perror("fuzz_trace: temp file");
		abort();
	}
	static struct buf built;
	if (size >= strlen(FUZZ_MAGIC) && memcmp(data, FUZZ_MAGIC, strlen(FUZZ_MAGIC)) == 0) {
		if (build_structured(data, size, &built) != 0)
			return 0;
		data = built.data;
		size = built.len;
	}
	if (input_file_write(data, size) != 0) {
		perror("fuzz_trace: write temp file");
		abort();
	}
	walk_raw();
	walk_trace();
	return 0;
}

/* fuzz_trace_frames.c - libFuzzer target for the low-level trace reader
 * (model/htr_reader.h): the file header, frame headers walked from the
 * first frame on, the trailer and the frame it names, and every event of
 * every frame.  This reaches frames that trace_open would refuse before
 * looking at them.  Indexing and state building are fuzz_trace_state's.
 *
 * Input: a trace file or a structured input (fuzz_trace_input.h), which
 * the harness compresses and checksums into a valid file.  Nothing may
 * crash, hang or leak, whatever the bytes.  Error codes are expected and
 * ignored: refusing damage is the correct outcome.
 *
 * Built by `make build-fuzz/fuzz_trace_frames` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/htr_reader.h"

#include "fuzz_trace_input.h"

/* Frame headers are walked up to MAX_FRAMES; the events of the first
 * MAX_DECODED frames and of the trailer's are read.  Each frame read costs
 * an iterator (a zstd context and buffers of megabytes, hundreds of
 * microseconds under ASan) and a later frame decodes no differently from
 * an earlier one: more would add time, not coverage. */
#define MAX_FRAMES 64u
#define MAX_DECODED 4u
#define MAX_EVENTS 100000u /* events read per frame */

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

static void walk_raw(const char *path)
{
	struct htr_file *f = NULL;
	struct htr_err err;
	if (htr_file_open(&f, path, &err) != 0)
		return;
	uint64_t off = HTR_HEADER_SIZE, decoded[MAX_DECODED];
	uint32_t ndecoded = 0;
	for (uint32_t k = 0; k < MAX_FRAMES && off < f->size; k++) {
		struct htr_frame_hdr h;
		if (htr_frame_header(f, off, &h, &err) != 0)
			break;
		if (ndecoded < MAX_DECODED) {
			iterate_frame(f, &h);
			decoded[ndecoded++] = off;
		}
		uint64_t next = off + HTR_FRAME_HEADER_SIZE + h.comp_len;
		if (next <= off) /* a length that wraps would loop forever */
			break;
		off = next;
	}
	/* the trailer's frame, unless the walk read it already (a footer is
	 * normally the last frame of a small trace) */
	uint64_t named;
	if (htr_trailer(f, &named) == 0) {
		uint32_t k = 0;
		while (k < ndecoded && decoded[k] != named)
			k++;
		struct htr_frame_hdr h;
		if (k == ndecoded && htr_frame_header(f, named, &h, &err) == 0)
			iterate_frame(f, &h);
	}
	htr_file_close(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=4096", "-dict=tests/fuzz/fuzz_trace.dict",
							    NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = trace_input(data, size);
	if (path)
		walk_raw(path);
	return 0;
}

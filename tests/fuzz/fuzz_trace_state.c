/* fuzz_trace_state.c - libFuzzer target for the indexer and the heap-state
 * reconstructor (model/trace.h, model/heap_state.h): trace_open() (the
 * footer, or a scan of every frame when there is none; an input that
 * starts as a heap dump goes the dump's way), then the frame table's
 * headers checked again, and heap_state_build() for a few GCs, with the
 * lookups of each built state exercised a little.  Decoding every frame
 * on its own is fuzz_trace_frames's.
 *
 * Input: a trace file or a structured input (fuzz_trace_input.h).
 * Nothing may crash, hang or leak, whatever the bytes; a state that is
 * built must answer lookups consistently.
 *
 * Built by `make build-fuzz/fuzz_trace_state` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/heap_state.h"
#include "model/htr_reader.h"
#include "model/trace.h"

#include "fuzz_trace_input.h"

/* Every GC built reads the frames up to its own again: the first three
 * and the last are built; the ones between would take the same paths at
 * the cost of a reread each. */
#define MAX_GCS 4u
#define MAX_FRAMES 64u     /* frame table entries checked */

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
	 * a trace that allocates one id twice yields two equal ids,
	 * tests/fuzz/crashes/README: dup-alloc-id.fz.) */
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

static void build(const struct trace *t, uint32_t g)
{
	struct heap_state *s = NULL;
	struct heap_build_opts bo = { 0 };
	struct htr_err err;
	if (heap_state_build(t, g, &bo, &s, &err) == 0) {
		probe_state(s);
		heap_state_free(s);
	}
}

static void walk_trace(const char *path)
{
	struct trace *t = NULL;
	struct htr_err err;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, path, &oo, &err) != 0)
		return;
	/* a footer's frame table may name any offset: each must be checked */
	for (uint32_t k = 0; k < t->nframes && k < MAX_FRAMES && t->file; k++) {
		struct htr_frame_hdr h;
		(void)htr_frame_header(t->file, t->frames[k].offset, &h, &err);
	}
	for (uint32_t g = 0; g < t->ngcs && g < MAX_GCS - 1; g++)
		build(t, g);
	if (t->ngcs >= MAX_GCS)
		build(t, t->ngcs - 1);
	char scratch[64];
	(void)trace_type_name(t, 0, scratch, sizeof(scratch));
	(void)trace_type_name(t, UINT32_MAX, scratch, sizeof(scratch));
	(void)trace_info(t, "vm.name");
	(void)trace_gc_index(t, 1);
	(void)trace_thread_index(t, 1);
	trace_close(t);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)fuzz_scratch_dir(); /* a dump opened directly writes a trace there */
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=4096", "-dict=tests/fuzz/fuzz_trace.dict",
							    NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = trace_input(data, size);
	if (path)
		walk_trace(path);
	return 0;
}

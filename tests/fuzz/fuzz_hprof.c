/* fuzz_hprof.c - libFuzzer target for the HPROF reader and importer.
 *
 * An input is an HPROF file as it is.  The harness writes it to one
 * temporary file (created once, rewritten per input, because the reader
 * maps a path) and sends it through everything that reads untrusted bytes:
 *   1. the low-level reader on its own: every record, and every sub-record
 *      of every heap dump record (this also reaches records the importer
 *      refuses before looking at them);
 *   2. hprof_import() into a temporary trace, and when that succeeds:
 *      trace_open() and heap_state_build() for every GC (capped);
 *   3. the dump opened directly (trace_open() of the dump: the heap state
 *      is built from the dump itself), whose state must equal the one
 *      rebuilt from the trace's events, column by column.
 * Nothing may crash, hang or leak whatever the bytes; refusing damage with
 * an error is the correct outcome and is ignored.
 *
 * Seeds: tests/fuzz/seeds/fuzz_hprof/, small dumps written by the unit
 * test's HPROF writer (HEAPFS_HPROF_SEEDS=DIR build/tests/test_hprof):
 * both id sizes, HEAP_DUMP and segments, every root kind, several dumps,
 * a truncated and a damaged one.
 * Built by `make fuzz-short` / `make fuzz` (clang -fsanitize=fuzzer,...).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/heap_state.h"
#include "model/hprof.h"
#include "model/hprof_reader.h"
#include "model/trace.h"

#define MAX_GCS 4u           /* heap states built per input */
#define MAX_RECORDS 100000u  /* records walked per input */

static char input_path[64], trace_path[64];
static int input_fd = -1;

static void files_remove(void)
{
	if (input_path[0])
		unlink(input_path);
	if (trace_path[0])
		unlink(trace_path);
}

static int input_file_init(void)
{
	if (input_fd >= 0)
		return 0;
	snprintf(input_path, sizeof input_path, "/tmp/heapfs-fuzz-hprof-%ld.hprof", (long)getpid());
	snprintf(trace_path, sizeof trace_path, "/tmp/heapfs-fuzz-hprof-%ld.htr", (long)getpid());
	input_fd = open(input_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (input_fd < 0)
		return -errno;
	atexit(files_remove);
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

/* Pass 1: records and sub-records with the raw reader. */
static void walk_raw(void)
{
	struct hprof_file *f = NULL;
	struct htr_err err;
	if (hprof_open(&f, input_path, &err) != 0)
		return;
	uint64_t pos = f->first_record;
	struct hprof_record r;
	for (uint32_t k = 0; k < MAX_RECORDS && hprof_next_record(f, &pos, &r) == 1; k++) {
		if (r.tag != HPROF_HEAP_DUMP && r.tag != HPROF_HEAP_DUMP_SEGMENT)
			continue;
		uint64_t sp = r.body, end = r.body + r.len;
		struct hprof_sub s;
		while (hprof_next_sub(f, &sp, end, &r, &s, &err) == 1) {
			/* touch the extents the decoder vouched for */
			if (s.tag == HPROF_INSTANCE_DUMP && s.length)
				(void)hprof_u1(f, s.data + s.length - 1);
			if (s.tag == HPROF_OBJ_ARRAY_DUMP && s.length)
				(void)hprof_id(f, s.data + (uint64_t)(s.length - 1) * f->id_size);
			if (s.tag == HPROF_PRIM_ARRAY_DUMP && s.length)
				(void)hprof_value(f, s.data + (uint64_t)(s.length - 1) *
						  hprof_type_size(f, s.elem_type), s.elem_type);
		}
	}
	hprof_close(f);
}

/* Pass 2: the importer, then the trace it wrote. */
static void walk_import(void)
{
	char err[512];
	const char *dumps[] = { input_path };
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	if (hprof_import_with(dumps, 1, trace_path, &o, err, sizeof err) != 0)
		return;
	struct trace *t = NULL;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, trace_path, &oo, &e) != 0)
		abort();   /* the importer wrote a trace the reader refuses */
	for (uint32_t g = 0; g < t->ngcs && g < MAX_GCS; g++) {
		struct heap_state *s = NULL;
		struct heap_build_opts bo = { .progress = NULL };
		if (heap_state_build(t, g, &bo, &s, &e) != 0)
			abort();
		heap_state_free(s);
	}
	trace_close(t);
	/* the same dump with the other layout and as a sequence of two */
	o.layout = HPROF_LAYOUT_HOTSPOT;
	const char *two[] = { input_path, input_path };
	(void)hprof_import_with(two, 2, trace_path, &o, err, sizeof err);
}

/* 1 if two states have the same columns (what the analyses read). */
static int same_state(const struct heap_state *a, const struct heap_state *b)
{
	if (a->n != b->n || a->nedges != b->nedges || a->ninfos != b->ninfos || a->nroots != b->nroots ||
	    a->nslot_hi != b->nslot_hi || a->has_graph != b->has_graph || a->total_bytes != b->total_bytes ||
	    a->nreachable != b->nreachable || a->reachable_bytes != b->reachable_bytes ||
	    a->dangling_refs != b->dangling_refs || a->dropped_roots != b->dropped_roots ||
	    a->unknown_objects != b->unknown_objects)
		return 0;
	size_t n = a->n, e = a->nedges;
	if (memcmp(a->id, b->id, n * 8) || memcmp(a->info, b->info, n * 4) || memcmp(a->birth, b->birth, n * 4) ||
	    memcmp(a->infos, b->infos, a->ninfos * sizeof *a->infos) ||
	    memcmp(a->roots, b->roots, a->nroots * sizeof *a->roots))
		return 0;
	if (a->has_graph &&
	    (memcmp(a->out_off, b->out_off, (n + 1) * 4) || memcmp(a->out_tgt, b->out_tgt, e * 4) ||
	     memcmp(a->out_slot, b->out_slot, e * 2) || memcmp(a->in_off, b->in_off, (n + 1) * 4) ||
	     memcmp(a->in_src, b->in_src, e * 4) || memcmp(a->reachable, b->reachable, (n + 63) / 64 * 8) ||
	     memcmp(a->slot_hi, b->slot_hi, a->nslot_hi * 4) ||
	     memcmp(a->slot_hi_edge, b->slot_hi_edge, a->nslot_hi * 8)))
		return 0;
	return 1;
}

/* Pass 3: the dump opened directly. */
static void walk_direct(void)
{
	struct trace *t = NULL;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, input_path, &oo, &e) != 0)
		return;
	if (t->prebuilt) {
		struct heap_state *s = NULL;
		struct heap_build_opts bo = { .progress = NULL };
		if (heap_state_build(t, 0, &bo, &s, &e) != 0)
			abort();
		if (!same_state(t->prebuilt, s))
			abort();   /* the direct state differs from the trace's */
		heap_state_free(s);
	}
	trace_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (input_file_init() != 0 || input_file_write(data, size) != 0) {
		perror("fuzz_hprof: temp file");
		abort();
	}
	walk_raw();
	walk_import();
	walk_direct();
	return 0;
}

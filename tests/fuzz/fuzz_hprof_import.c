/* fuzz_hprof_import.c - libFuzzer target for the HPROF importer
 * (model/hprof.h): a dump turned into a trace, or opened directly.
 *
 * Input: an HPROF file as it is.  The last byte of the header's timestamp
 * (which heapfs only reports) picks what is done with it, one import per
 * input, so that every way is fuzzed at the speed of one:
 *   t % 3 == 0  hprof_import_with() with VisualVM's layout; t & 4: on one
 *               thread, then on two with the parallel passes at any size
 *               (the first pass's collection, the graph beside the
 *               allocations): the same outcome and the same trace bytes;
 *   t % 3 == 1  the dump imported twice in a row, as a sequence of two
 *               dumps (deaths between them), with HotSpot's layout; t & 4:
 *               uncompressed oops, t & 8: uncompressed class pointers,
 *               t & 16: referents kept as edges;
 *   t % 3 == 2  trace_open() of the dump itself (a dump mounted directly:
 *               its state built from the dump in the import's pass), t & 4:
 *               HotSpot's layout; the state must equal, column by column,
 *               the one heap_state_build() rebuilds from the events of the
 *               same dump imported as a trace (hprof_import_with, same
 *               layout; the direct trace itself has no graph records).
 * A trace the importer wrote must open, and each of its GCs must build
 * (checked for the first MAX_GCS).  Nothing may crash, hang or leak
 * whatever the bytes; refusing damage with an error is the correct
 * outcome and is ignored.  The records themselves are
 * fuzz_hprof_records's.
 *
 * Seeds: the dumps of tests/fuzz/seeds/fuzz_hprof_records/ with each
 * mode's timestamp; tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/heap_state.h"
#include "model/hprof.h"
#include "model/trace.h"

#include "fuzz_common.h"

#define MAX_GCS 2u  /* heap states built per imported trace (a sequence has 2) */

static char trace_path[128];

static void files_remove(void)
{
	if (trace_path[0])
		unlink(trace_path);
}

/* The trace must open and every GC build: the importer never writes a
 * trace the reader refuses. */
static void check_trace(const char *path)
{
	struct trace *t = NULL;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, path, &oo, &e) != 0)
		abort();
	for (uint32_t g = 0; g < t->ngcs && g < MAX_GCS; g++) {
		struct heap_state *s = NULL;
		struct heap_build_opts bo = { 0 };
		if (heap_state_build(t, g, &bo, &s, &e) != 0)
			abort();
		heap_state_free(s);
	}
	trace_close(t);
}

/* The whole file, malloc'd; NULL when unreadable. */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t cap = 0;
	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len == cap) {
			uint8_t *nb = realloc(b, cap = cap ? 2 * cap : 65536);
			if (!nb)
				abort();
			b = nb;
		}
		size_t k = fread(b + *len, 1, cap - *len, f);
		if (!k)
			break;
		*len += k;
	}
	fclose(f);
	return b;
}

/* The import on two threads, with the parallel passes at any size (the
 * first pass's object collection, the graph beside the allocations):
 * the same outcome as on one, and the same trace byte for byte. */
static void compare_two_threads(const char *const *dumps, const struct hprof_import_opts *one,
				int rc_one)
{
	char err[512];
	size_t la = 0, lb = 0;
	uint8_t *a = rc_one ? NULL : read_all(trace_path, &la);
	struct hprof_import_opts o = *one;
	o.threads = 2;
	o.par_any_size = 1;
	int rc = hprof_import_with(dumps, 1, trace_path, &o, err, sizeof err);
	if (rc != rc_one)
		abort();   /* one thread and two disagree on the dump */
	if (!rc) {
		uint8_t *b = read_all(trace_path, &lb);
		if (!a || !b || la != lb || memcmp(a, b, la))
			abort();   /* two threads wrote another trace */
		free(b);
	}
	free(a);
}

static void import(const char *dump, uint32_t mode)
{
	char err[512];
	const char *dumps[] = { dump, dump };
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	int n = 1;
	if (mode % 3 == 1) {
		o.layout = HPROF_LAYOUT_HOTSPOT;
		o.compressed_oops = !(mode & 4);
		o.compressed_class_pointers = !(mode & 8);
		o.keep_referents = (mode & 16) != 0;
		n = 2;
	}
	if (mode % 3 == 0 && (mode & 4))
		o.threads = 1;
	int rc = hprof_import_with(dumps, n, trace_path, &o, err, sizeof err);
	if (rc == 0)
		check_trace(trace_path);
	if (mode % 3 == 0 && (mode & 4))
		compare_two_threads(dumps, &o, rc);
}

/* memcmp that takes the empty columns of an empty state (NULL pointers,
 * which memcmp may not be given even for 0 bytes). */
static int differ(const void *a, const void *b, size_t n)
{
	return n && memcmp(a, b, n);
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
	if (differ(a->id, b->id, n * 8) || differ(a->info, b->info, n * 4) || differ(a->birth, b->birth, n * 4) ||
	    differ(a->infos, b->infos, a->ninfos * sizeof *a->infos) ||
	    differ(a->roots, b->roots, a->nroots * sizeof *a->roots))
		return 0;
	if (a->has_graph &&
	    (differ(a->out_off, b->out_off, (n + 1) * 4) || differ(a->out_tgt, b->out_tgt, e * 4) ||
	     differ(a->out_slot, b->out_slot, e * 2) || differ(a->in_off, b->in_off, (n + 1) * 4) ||
	     differ(a->in_src, b->in_src, e * 4) || differ(a->reachable, b->reachable, (n + 63) / 64 * 8) ||
	     differ(a->slot_hi, b->slot_hi, a->nslot_hi * 4) ||
	     differ(a->slot_hi_edge, b->slot_hi_edge, a->nslot_hi * 8)))
		return 0;
	return 1;
}

static void open_direct(const char *dump, uint32_t mode)
{
	struct trace *t = NULL;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	oo.hprof_layout = mode & 4 ? HPROF_LAYOUT_HOTSPOT : HPROF_LAYOUT_VISUALVM;
	if (trace_open(&t, dump, &oo, &e) != 0)
		return;
	if (t->prebuilt) {
		char err[512];
		const char *dumps[] = { dump };
		struct hprof_import_opts o;
		hprof_import_opts_init(&o);
		o.layout = oo.hprof_layout;
		struct trace *it = NULL;
		struct heap_state *s = NULL;
		struct heap_build_opts bo = { 0 };
		/* the direct open took the dump: so must the import, and its
		 * trace open and build */
		if (hprof_import_with(dumps, 1, trace_path, &o, err, sizeof err) != 0 ||
		    trace_open(&it, trace_path, &(struct trace_open_opts){ NULL }, &e) != 0 || it->ngcs != 1 ||
		    heap_state_build(it, 0, &bo, &s, &e) != 0)
			abort();
		if (!same_state(t->prebuilt, s))
			abort();   /* the direct state differs from the trace's */
		heap_state_free(s);
		trace_close(it);
	}
	trace_close(t);
}

/* The last byte of the header's u8 timestamp: "JAVA PROFILE 1.0.N\0",
 * u4 id size, u4 high, u4 low. */
static uint32_t mode_of(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size < 32 ? size : 32);
	size_t at = nul ? (size_t)(nul - data) + 12 : SIZE_MAX;
	return at < size ? data[at] : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(trace_path, sizeof trace_path, "%s/heapfs-fuzz-hprof-%ld.htr", fuzz_scratch_dir(),
		 (long)getpid());
	atexit(files_remove);
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=4096", NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_file file;
	fuzz_file_open(&file, "heapfs-fuzz-hprof");
	fuzz_file_write(&file, data, size);
	uint32_t mode = mode_of(data, size);
	if (mode % 3 == 2)
		open_direct(file.path, mode);
	else
		import(file.path, mode);
	return 0;
}

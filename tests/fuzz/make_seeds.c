/* make_seeds.c - writes the hand-made seeds of fuzz_trace_frames and
 * fuzz_trace_state (tests/fuzz/seeds/fuzz_trace_{frames,state}/: the same
 * files in both).
 *
 * Run once; the resulting files are committed.  Each seed is a tiny valid
 * trace made with the real writer, so the fuzzer starts from inputs that
 * pass the CRCs and zstd checksums and reach the indexer and the
 * reconstructor:
 *   footer.trace    two GCs with graph, deaths, a late death batch, a big-slot
 *                   array reference, a static and a local root
 *   nofooter.trace  the same without footer and trailer (the scan path)
 *   nograph.trace   three GCs without graph, deaths only
 *   truncated.trace footer.trace cut in the middle of its last frame
 *   minimal.trace   header, one empty GC, footer
 *   counted.trace   mode=count's events: COUNT_SITE, ALLOC_COUNTS and
 *                   COUNT_CALLERS (1.4) around one GC, footer
 * and each of them again as a structured input (NAME.fz: uncompressed
 * payloads, see build_structured in fuzz_trace_input.h), which the harness
 * compresses and checksums back into the same file; footer-cut.fz is
 * footer.trace with its last 400 bytes cut off by the harness.
 * (Traces are named .trace, not .htr, because .gitignore ignores *.htr.)
 *
 * Build: cc -std=gnu11 -I. -D_GNU_SOURCE tests/fuzz/make_seeds.c build/libheapfs.a \
 *          $(pkg-config --libs fuse3 libzstd) -lpthread -lm -o build/make_seeds
 * Usage: build/make_seeds SEEDDIR [CRASHDIR]
 * CRASHDIR gets the reproducers of bugs the fuzzer found (tests/fuzz/crashes/),
 * hand-made with the writer so that they stay readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "model/htr_reader.h"
#include "model/htr_writer.h"

#define CHECK(x)                                                                  \
	do {                                                                      \
		int rc_ = (x);                                                    \
		if (rc_ != 0) {                                                   \
			fprintf(stderr, "make_seeds: %s: %s\n", #x, strerror(-rc_)); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

enum { T_NODE, T_ARR, T_BYTES, T_HOLDER };

static void symbols(struct htr_writer *w)
{
	static const struct htr_field node_f[] = {
		{ "next", 0, "Lx/Node;", 0, HTR_FIELD_REF },
		{ "v", 0, "I", 0, 0 },
	};
	static const struct htr_field holder_f[] = {
		{ "ROOT", 0, "Lx/Node;", 0, HTR_FIELD_STATIC | HTR_FIELD_REF },
	};
	struct htr_type_def node = { T_NODE, "x.Node", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 2, node_f };
	struct htr_type_def arr = { T_ARR, "java.lang.Object[]", HTR_TYPE_OBJ_ARRAY, 16, 4, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def bytes = { T_BYTES, "byte[]", HTR_TYPE_PRIM_ARRAY, 16, 1, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def holder = { T_HOLDER, "x.Holder", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 1, holder_f };
	CHECK(htr_write_info(w, "vm.name", "seed"));
	CHECK(htr_write_type(w, &node));
	CHECK(htr_write_type(w, &arr));
	CHECK(htr_write_type(w, &bytes));
	CHECK(htr_write_type(w, &holder));
	CHECK(htr_write_method(w, 0, "x.Main", "main", "()V", "Main.java"));
	CHECK(htr_write_method(w, 1, "x.Main", "add", "(I)V", "Main.java"));
	struct htr_site_frame f0[] = { { 1, 12 }, { 0, 3 } }, f1[] = { { 0, -1 } };
	CHECK(htr_write_site(w, 0, 2, f0));
	CHECK(htr_write_site(w, 1, 1, f1));
	CHECK(htr_write_thread(w, 1, "main"));
	CHECK(htr_write_thread(w, 2, "worker"));
}

static void alloc(struct htr_writer *w, uint64_t id, uint32_t type, uint64_t size, int64_t len,
		  uint64_t thread, uint64_t t)
{
	struct htr_alloc a = { id, type, type == T_NODE ? 0 : 1, thread, size, len, t, 0 };
	CHECK(htr_write_alloc(w, &a));
}

static void gc(struct htr_writer *w, uint32_t n, uint64_t t, int start, int graph, int full)
{
	struct htr_gc_event g = { n, t, 1000 * n, 1 << 20,
				  (graph ? HTR_GC_HAS_GRAPH : 0) | (full ? HTR_GC_FULL : 0),
				  start ? "Allocation Failure" : NULL, NULL, 0, 0 };
	CHECK(start ? htr_write_gc_start(w, &g) : htr_write_gc_end(w, &g));
}

static struct htr_writer *open_w(const char *dir, const char *name, int footer)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct htr_writer *w;
	struct htr_writer_opts o = { .no_footer = !footer };
	CHECK(htr_writer_open(&w, path, &o));
	return w;
}

static void write_graph_trace(const char *dir, const char *name, int footer)
{
	struct htr_writer *w = open_w(dir, name, footer);
	symbols(w);
	alloc(w, 1, T_NODE, 24, -1, 1, 100);
	alloc(w, 2, T_NODE, 24, -1, 1, 200);
	alloc(w, 3, T_BYTES, 32, 10, 2, 300);
	alloc(w, 4, T_NODE, 24, -1, 2, 400);
	gc(w, 1, 1000, 1, 1, 0);
	struct htr_root r1[] = {
		{ .kind = HTR_ROOT_STATIC, .object = 1, .type = T_HOLDER, .field = 0 },
		{ .kind = HTR_ROOT_LOCAL, .object = 2, .thread = 1, .method = 0, .depth = 0, .slot = 1 },
	};
	CHECK(htr_write_roots(w, 1, 2, r1));
	struct htr_ref e1[] = { { 0, 2 } }, e2[] = { { 0, 1 } };
	CHECK(htr_write_graph_object(w, 1, 1, e1));
	CHECK(htr_write_graph_object(w, 2, 1, e2));
	CHECK(htr_write_graph_object(w, 3, 0, NULL));
	uint64_t d1[] = { 4 };
	CHECK(htr_write_deaths(w, 1, 1, d1));
	gc(w, 1, 1100, 0, 1, 0);

	alloc(w, 5, T_ARR, 16 + 4 * 70000, 70000, 1, 2000);
	alloc(w, 6, T_NODE, 24, -1, 2, 2100);
	uint64_t late[] = { 3 };
	CHECK(htr_write_deaths(w, 1, 1, late));
	gc(w, 2, 3000, 1, 1, 1);
	struct htr_root r2[] = {
		{ .kind = HTR_ROOT_JNI_GLOBAL, .object = 5 },
		{ .kind = HTR_ROOT_THREAD, .object = 6, .thread = 2 },
	};
	CHECK(htr_write_roots(w, 2, 2, r2));
	struct htr_ref e5[] = { { 3, 1 }, { 69999, 6 } }, e6[] = { { 0, 6 } };
	CHECK(htr_write_graph_object(w, 5, 2, e5));
	CHECK(htr_write_graph_object(w, 1, 0, NULL));
	CHECK(htr_write_graph_object(w, 6, 1, e6));
	uint64_t d2[] = { 2 };
	CHECK(htr_write_deaths(w, 2, 1, d2));
	gc(w, 2, 3200, 0, 1, 1);
	alloc(w, 7, T_NODE, 24, -1, 1, 4000);
	if (footer)
		CHECK(htr_writer_close(w));
	else
		htr_writer_abandon(w);
}

static void write_nograph(const char *dir)
{
	struct htr_writer *w = open_w(dir, "nograph.trace", 1);
	symbols(w);
	uint64_t id = 1;
	for (uint32_t n = 1; n <= 3; n++) {
		for (int k = 0; k < 3; k++, id++)
			alloc(w, id, k == 2 ? T_BYTES : T_NODE, k == 2 ? 24 : 24, k == 2 ? 5 : -1,
			      1 + (id & 1), n * 1000 + id);
		gc(w, n, n * 1000 + 500, 1, 0, n == 3);
		uint64_t d[] = { id - 3, id - 1 };
		CHECK(htr_write_deaths(w, n, 2, d));
		gc(w, n, n * 1000 + 600, 0, 0, n == 3);
	}
	CHECK(htr_writer_close(w));
}

static void write_minimal(const char *dir)
{
	struct htr_writer *w = open_w(dir, "minimal.trace", 1);
	gc(w, 1, 10, 1, 1, 0);
	gc(w, 1, 20, 0, 1, 0);
	CHECK(htr_writer_close(w));
}

/* mode=count's events: two counted sites, their counts, the first one's
 * allocations split over two callers (format 1.4). */
static void write_counted(const char *dir)
{
	struct htr_writer *w = open_w(dir, "counted.trace", 1);
	symbols(w);
	CHECK(htr_write_count_site(w, 0, 0, 31, 1211, "java.lang.Long"));
	CHECK(htr_write_count_site(w, 1, 1, 4, -1, "int[]"));
	uint32_t ids[2] = { 0, 1 };
	int64_t cnt[2] = { 12, 3 };
	CHECK(htr_write_alloc_counts(w, 0, HTR_COUNTS_PATHS, 14, 15, 2, ids, cnt));
	gc(w, 1, 10, 1, 0, 0);
	gc(w, 1, 20, 0, 0, 0);
	CHECK(htr_write_alloc_counts(w, 1, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL, 14, 15, 1, ids, cnt));
	struct htr_count_caller c[2] = { { 0, 0, 16, 13, 20 }, { 0, 1, 13, -1, 3 } };
	CHECK(htr_write_count_callers(w, 2, c));
	CHECK(htr_writer_close(w));
}

/* Copies the first half of the last frame-carrying part: a JVM that died. */
static void write_truncated(const char *dir)
{
	char src[4096], dst[4096];
	snprintf(src, sizeof(src), "%s/footer.trace", dir);
	snprintf(dst, sizeof(dst), "%s/truncated.trace", dir);
	FILE *in = fopen(src, "rb");
	if (!in) {
		perror(src);
		exit(1);
	}
	static unsigned char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	/* Without footer (24-byte trailer plus footer frame) and half the rest:
	 * cut at 60 % of the file, inside the second GC's frames. */
	size_t cut = n * 6 / 10;
	FILE *out = fopen(dst, "wb");
	if (!out || fwrite(buf, 1, cut, out) != cut || fclose(out) != 0) {
		perror(dst);
		exit(1);
	}
}

static void put_le(FILE *out, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		fputc((int)(v >> (8 * i)) & 0xff, out);
}

/* NAME.trace -> NAME.fz: "HTRFUZZ1", flags (trailer?), cut 0, then every
 * complete frame as kind, nevents, raw_len, raw payload. */
static void write_structured(const char *dir, const char *name, const char *out_name, uint16_t cut)
{
	char src[4096], dst[4096];
	snprintf(src, sizeof(src), "%s/%s.trace", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s.fz", dir, out_name);
	struct htr_file *f;
	struct htr_err err;
	CHECK(htr_file_open(&f, src, &err));
	FILE *out = fopen(dst, "wb");
	if (!out) {
		perror(dst);
		exit(1);
	}
	uint64_t footer;
	fputs("HTRFUZZ1", out);
	put_le(out, htr_trailer(f, &footer) == 0, 1);
	put_le(out, cut, 2);
	static unsigned char comp[1 << 16], raw[1 << 16];
	struct htr_frame_hdr h;
	for (uint64_t off = HTR_HEADER_SIZE; htr_frame_header(f, off, &h, &err) == 0;
	     off += HTR_FRAME_HEADER_SIZE + h.comp_len) {
		if (h.comp_len > sizeof(comp) || h.raw_len > 0xffff ||
		    pread(f->fd, comp, h.comp_len, (off_t)(off + HTR_FRAME_HEADER_SIZE)) != (ssize_t)h.comp_len) {
			fprintf(stderr, "make_seeds: %s: frame at %llu too big or unreadable\n", src,
				(unsigned long long)off);
			exit(1);
		}
		size_t n = ZSTD_decompress(raw, sizeof(raw), comp, h.comp_len);
		if (ZSTD_isError(n) || n != h.raw_len) {
			fprintf(stderr, "make_seeds: %s: frame at %llu does not decompress\n", src,
				(unsigned long long)off);
			exit(1);
		}
		put_le(out, h.kind - 1, 1); /* the harness maps k to 1 + k % 3 */
		put_le(out, h.nevents, 4);
		put_le(out, n, 2);
		fwrite(raw, 1, n, out);
	}
	htr_file_close(f);
	if (fclose(out) != 0) {
		perror(dst);
		exit(1);
	}
}

/* Two live objects whose ids are far apart: the reproducers of the id
 * directory's overflow (iddir.c, then in heap_state.c).  span >= 2^63
 * with fewer than 4 objects drove the shift to 64; span >= 2^64 - 2
 * wrapped the directory's size to 0 or 1. */
static void write_id_span(const char *dir, const char *name, uint64_t a, uint64_t b)
{
	struct htr_writer *w = open_w(dir, name, 1);
	symbols(w);
	alloc(w, a, T_NODE, 24, -1, 1, 100);
	alloc(w, b, T_NODE, 24, -1, 1, 200);
	gc(w, 1, 1000, 1, 0, 0);
	gc(w, 1, 1100, 0, 0, 0);
	CHECK(htr_writer_close(w));
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: make_seeds SEEDDIR [CRASHDIR]\n");
		return 2;
	}
	if (argc == 3) { /* reproducers of bugs found by fuzzing, kept as seeds too */
		mkdir(argv[2], 0755);
		write_id_span(argv[2], "id-span-shift64.trace", 1, (1ull << 63) + 1);
		write_id_span(argv[2], "id-span-wrap.trace", 0, UINT64_MAX);
		write_structured(argv[2], "id-span-shift64", "id-span-shift64", 0);
		write_structured(argv[2], "id-span-wrap", "id-span-wrap", 0);
	}
	mkdir(argv[1], 0755);
	write_graph_trace(argv[1], "footer.trace", 1);
	write_graph_trace(argv[1], "nofooter.trace", 0);
	write_nograph(argv[1]);
	write_minimal(argv[1]);
	write_truncated(argv[1]);
	write_counted(argv[1]);
	static const char *const names[] = { "footer", "nofooter", "nograph", "minimal", "truncated", "counted" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		write_structured(argv[1], names[i], names[i], 0);
	write_structured(argv[1], "footer", "footer-cut", 400); /* cut inside the frames */
	return 0;
}

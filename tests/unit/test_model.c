/* test_model.c - the trace format, the indexer and the reconstructor.
 *
 * Every expected value comes from the hand-built heap below, never from
 * the code under test. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/buf.h"
#include "model/heap_state.h"
#include "model/htr_writer.h"
#include "model/state_cache.h"
#include "model/synth.h"
#include "model/trace.h"

/* Types of the hand-built heap. */
enum { T_NODE = 0, T_ARR = 1, T_BYTES = 2, T_HOLDER = 3 };
enum { M_MAIN = 0, M_ADD = 1 };
enum { S_NODE = 0, S_ARR = 1 };
#define BIG_LEN 200000u /* > 65536: slots need the high-bits runs */

static char dir[] = "/tmp/heapfs-test-model-XXXXXX";

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void define_symbols(struct htr_writer *w)
{
	static const struct htr_field node_fields[] = {
		{ "next", 0, "Lexample/Node;", 0, HTR_FIELD_REF },
		{ "value", 0, "I", 0, 0 },
		{ "data", 0, "[B", 0, HTR_FIELD_REF },
	};
	static const struct htr_field holder_fields[] = {
		{ "INSTANCE", 0, "Lexample/Holder;", 0, HTR_FIELD_STATIC | HTR_FIELD_REF },
	};
	struct htr_type_def node = { T_NODE, "example.Node", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 3, node_fields };
	struct htr_type_def arr = { T_ARR, "java.lang.Object[]", HTR_TYPE_OBJ_ARRAY, 16, 4, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def bytes = { T_BYTES, "byte[]", HTR_TYPE_PRIM_ARRAY, 16, 1, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def holder = { T_HOLDER, "example.Holder", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 1, holder_fields };
	assert_int_equal(htr_write_info(w, "vm.name", "test VM"), 0);
	assert_int_equal(htr_write_type(w, &node), 0);
	assert_int_equal(htr_write_type(w, &arr), 0);
	assert_int_equal(htr_write_type(w, &bytes), 0);
	assert_int_equal(htr_write_type(w, &holder), 0);
	assert_int_equal(htr_write_method(w, M_MAIN, "example.Main", "main", "([Ljava/lang/String;)V", "Main.java"), 0);
	assert_int_equal(htr_write_method(w, M_ADD, "example.Main", "add", "()V", "Main.java"), 0);
	struct htr_site_frame f1[] = { { M_ADD, 10 }, { M_MAIN, 3 } };
	struct htr_site_frame f2[] = { { M_MAIN, 5 } };
	assert_int_equal(htr_write_site(w, S_NODE, 2, f1), 0);
	assert_int_equal(htr_write_site(w, S_ARR, 1, f2), 0);
	assert_int_equal(htr_write_thread(w, 1, "main"), 0);
	assert_int_equal(htr_write_thread(w, 7, "worker"), 0);
}

static void alloc(struct htr_writer *w, uint64_t id, uint32_t type, uint64_t size, int64_t len,
		  uint64_t thread, uint64_t t)
{
	struct htr_alloc a = { id, type, type == T_NODE ? S_NODE : S_ARR, thread, size, len, t, 0 };
	assert_int_equal(htr_write_alloc(w, &a), 0);
}

static void gc_start(struct htr_writer *w, uint32_t gc, uint64_t t, uint64_t used)
{
	struct htr_gc_event g = { gc, t, used, 1 << 20, 0, "test cause", NULL, 0, 0 };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
}

static void gc_end(struct htr_writer *w, uint32_t gc, uint64_t t, uint64_t used, int graph)
{
	struct htr_gc_event g = { gc, t, used, 1 << 20, graph ? HTR_GC_HAS_GRAPH : 0, NULL, NULL, 0, 0 };
	assert_int_equal(htr_write_gc_end(w, &g), 0);
}

static void graph_obj(struct htr_writer *w, uint64_t id, uint32_t n, const struct htr_ref *refs)
{
	assert_int_equal(htr_write_graph_object(w, id, n, refs), 0);
}

/*
 * The heap, by GC:
 *  before GC 1: nodes 1,2,3 (thread main), bytes 4 (len 10, 32 B), nodes 5 (worker)
 *  GC 1 (graph): live 1,2,3,4; 5 died.  1.next=2, 2.next=3, 1.data=4.
 *                roots: static Holder.INSTANCE -> 1, local main/depth 0 -> 3.
 *  before GC 2: node 6 (worker), array 7 (len BIG_LEN)
 *  GC 2 (no graph): 2 died -> live 1,3,4,6,7; deaths of 3 come late, in
 *                frame 3 (after GC 3 started? no: written after GC 2 ended,
 *                attributed to GC 2) -> live at GC 2: 1,4,6,7
 *  GC 3 (graph, objects listed out of order): live 1,4,6,7,8(byte[] len 0)
 *                7[5]=1, 7[70000]=6, 7[199999]=8 (slots above 65535 and a
 *                gap of more than 65536), 1.data=4, 6.next=6 (self).
 *                roots: jni-global -> 7, thread worker -> 6.
 *                object 9 appears in the graph with no allocation (unknown).
 */
#define NODE_SIZE 24
static void write_trace(const char *path, int footer)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .no_footer = !footer };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	define_symbols(w);
	alloc(w, 1, T_NODE, NODE_SIZE, -1, 1, 1000);
	alloc(w, 2, T_NODE, NODE_SIZE, -1, 1, 2000);
	alloc(w, 3, T_NODE, NODE_SIZE, -1, 1, 3000);
	alloc(w, 4, T_BYTES, 32, 10, 1, 4000);
	alloc(w, 5, T_NODE, NODE_SIZE, -1, 7, 5000);
	gc_start(w, 1, 10000, 5 * 24);
	struct htr_root r1[] = {
		{ .kind = HTR_ROOT_STATIC, .object = 1, .type = T_HOLDER, .field = 0 },
		{ .kind = HTR_ROOT_LOCAL, .object = 3, .thread = 1, .method = M_MAIN, .depth = 0, .slot = 2 },
	};
	assert_int_equal(htr_write_roots(w, 1, 2, r1), 0);
	struct htr_ref n1[] = { { 0, 2 }, { 2, 4 } }, n2[] = { { 0, 3 } };
	graph_obj(w, 1, 2, n1);
	graph_obj(w, 2, 1, n2);
	graph_obj(w, 3, 0, NULL);
	graph_obj(w, 4, 0, NULL);
	uint64_t d1[] = { 5 };
	assert_int_equal(htr_write_deaths(w, 1, 1, d1), 0);
	gc_end(w, 1, 12000, 4 * 24, 1);

	alloc(w, 6, T_NODE, NODE_SIZE, -1, 7, 20000);
	alloc(w, 7, T_ARR, 16 + 4 * (uint64_t)BIG_LEN, BIG_LEN, 1, 21000);
	gc_start(w, 2, 30000, 1000);
	uint64_t d2[] = { 2 };
	assert_int_equal(htr_write_deaths(w, 2, 1, d2), 0);
	gc_end(w, 2, 31000, 900, 0);
	uint64_t d2late[] = { 3 }; /* a late batch, as JVMTI delivers them */
	assert_int_equal(htr_write_deaths(w, 2, 1, d2late), 0);

	alloc(w, 8, T_BYTES, 16, 0, 7, 40000);
	gc_start(w, 3, 50000, 2000);
	struct htr_root r3[] = {
		{ .kind = HTR_ROOT_JNI_GLOBAL, .object = 7 },
		{ .kind = HTR_ROOT_THREAD, .object = 6, .thread = 7 },
		{ .kind = HTR_ROOT_OTHER, .object = 12345 }, /* not live: dropped */
	};
	assert_int_equal(htr_write_roots(w, 3, 3, r3), 0);
	struct htr_ref a7[] = { { 5, 1 }, { 70000, 6 }, { 199999, 8 } };
	struct htr_ref a1[] = { { 2, 4 } }, a6[] = { { 0, 6 } };
	graph_obj(w, 7, 3, a7);
	graph_obj(w, 1, 1, a1);
	graph_obj(w, 6, 1, a6);
	graph_obj(w, 4, 0, NULL);
	graph_obj(w, 8, 0, NULL);
	graph_obj(w, 9, 0, NULL);
	gc_end(w, 3, 52000, 1500, 1);
	alloc(w, 10, T_NODE, NODE_SIZE, -1, 1, 60000); /* after the last GC */
	assert_int_equal(htr_writer_close(w), 0);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void check_index(const struct trace *t)
{
	assert_int_equal(t->ngcs, 3);
	assert_int_equal(t->gcs[0].gc, 1);
	assert_int_equal(t->gcs[2].gc, 3);
	assert_int_equal(t->gcs[0].start_ns, 10000);
	assert_int_equal(t->gcs[0].end_ns, 12000);
	assert_int_equal(t->gcs[0].used_before, 5 * 24);
	assert_int_equal(t->gcs[0].used_after, 4 * 24);
	assert_string_equal(t->gcs[0].cause, "test cause");
	assert_true(t->gcs[0].flags & HTR_GC_HAS_GRAPH);
	assert_false(t->gcs[1].flags & HTR_GC_HAS_GRAPH);
	assert_int_equal(t->gcs[0].allocs, 5);
	assert_int_equal(t->gcs[0].alloc_bytes, 4 * 24 + 32);
	assert_int_equal(t->gcs[1].allocs, 2);
	assert_int_equal(t->gcs[1].deaths, 2); /* one in time, one late */
	assert_int_equal(t->total_allocs, 9); /* ids 1..8 and 10 */
	assert_int_equal(t->first_ns, 1000);
	assert_int_equal(t->last_ns, 60000);
	assert_string_equal(t->types[T_NODE].name, "example.Node");
	assert_int_equal(t->types[T_NODE].nfields, 3);
	assert_string_equal(t->types[T_NODE].fields[2].name, "data");
	assert_int_equal(t->types[T_NODE].fields[2].flags, HTR_FIELD_REF);
	assert_int_equal(t->types[T_ARR].kind, HTR_TYPE_OBJ_ARRAY);
	assert_string_equal(t->methods[M_ADD].name, "add");
	assert_int_equal(t->sites[S_NODE].nframes, 2);
	assert_int_equal(t->sites[S_NODE].frames[1].method, M_MAIN);
	assert_int_equal(t->sites[S_NODE].frames[0].line, 10);
	assert_int_equal(t->nthreads, 2);
	assert_string_equal(t->threads[trace_thread_index(t, 7)].name, "worker");
	assert_string_equal(trace_info(t, "vm.name"), "test VM");
	assert_int_equal(trace_gc_index(t, 2), 1);
	assert_int_equal(trace_gc_index(t, 4), UINT32_MAX);
}

static void open_ok(const char *path, struct trace **t)
{
	struct htr_err err;
	int rc = trace_open(t, path, NULL, &err);
	if (rc)
		fail_msg("trace_open: offset %llu: %s", (unsigned long long)err.offset, err.msg);
}

static struct heap_state *build(const struct trace *t, uint32_t gi)
{
	struct heap_state *s = NULL;
	struct htr_err err;
	int rc = heap_state_build(t, gi, NULL, &s, &err);
	if (rc)
		fail_msg("heap_state_build(%u): %s", gi, err.msg);
	return s;
}

static void test_footer_index(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "a.htr");
	write_trace(p, 1);
	struct trace *t;
	open_ok(p, &t);
	assert_true(t->had_footer);
	assert_false(t->truncated);
	check_index(t);
	trace_close(t);
}

static void test_scan_index_equals_footer(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "nofooter.htr");
	write_trace(p, 0);
	struct trace *t;
	open_ok(p, &t);
	assert_false(t->had_footer);
	assert_false(t->truncated);
	check_index(t);
	trace_close(t);
}

static uint32_t find(const struct heap_state *s, uint64_t id)
{
	uint32_t i = heap_state_find(s, id);
	assert_int_not_equal(i, UINT32_MAX);
	return i;
}

/* The target of the k-th out edge of object id. */
static uint64_t ref_target(const struct heap_state *s, uint64_t id, uint32_t k, uint32_t *slot)
{
	uint32_t i = find(s, id);
	uint64_t e = s->out_off[i] + k;
	assert_true(e < s->out_off[i + 1]);
	*slot = hs_ref_slot(s, i, e);
	return s->id[s->out_tgt[e]];
}

static void test_reconstruct_gc1(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "a.htr");
	struct trace *t;
	open_ok(p, &t);
	struct heap_state *s = build(t, 0);
	assert_int_equal(s->n, 4);
	assert_int_equal(s->id[0], 1);
	assert_int_equal(s->id[3], 4);
	assert_int_equal(s->total_bytes, 3 * 24 + 32);
	assert_true(s->has_graph);
	assert_int_equal(s->nedges, 3);
	uint32_t slot;
	assert_int_equal(ref_target(s, 1, 0, &slot), 2);
	assert_int_equal(slot, 0);
	assert_int_equal(ref_target(s, 1, 1, &slot), 4);
	assert_int_equal(slot, 2);
	/* in-edges: 2 <- 1, 4 <- 1 */
	uint32_t i4 = find(s, 4);
	assert_int_equal(s->in_off[i4 + 1] - s->in_off[i4], 1);
	assert_int_equal(s->id[s->in_src[s->in_off[i4]]], 1);
	const struct objinfo *b4 = hs_info(s, i4);
	assert_int_equal(b4->type, T_BYTES);
	assert_int_equal(b4->array_length, 10);
	assert_int_equal(b4->size, 32);
	assert_int_equal(b4->site, S_ARR);
	assert_int_equal(hs_info(s, find(s, 1))->thread, trace_thread_index(t, 1));
	assert_int_equal(s->birth[find(s, 1)], HS_NO_BIRTH); /* before the first GC */
	assert_int_equal(s->nroots, 2);
	assert_int_equal(s->roots[0].kind, HTR_ROOT_STATIC);
	assert_int_equal(s->id[s->roots[0].object], 1);
	assert_int_equal(s->roots[1].kind, HTR_ROOT_LOCAL);
	assert_int_equal(s->roots[1].slot, 2);
	assert_int_equal(s->roots[1].thread, trace_thread_index(t, 1));
	assert_int_equal(s->nreachable, 4);
	assert_int_equal(heap_state_find(s, 5), UINT32_MAX); /* died */
	heap_state_free(s);
	trace_close(t);
}

static void test_reconstruct_gc2_without_graph(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "a.htr");
	struct trace *t;
	open_ok(p, &t);
	struct heap_state *s = build(t, 1);
	assert_false(s->has_graph);
	/* alive: 1, 4, 6, 7 (2 died in GC 2, 3 in GC 2 late, 5 in GC 1) */
	assert_int_equal(s->n, 4);
	uint64_t want[] = { 1, 4, 6, 7 };
	for (int k = 0; k < 4; k++)
		assert_int_equal(s->id[k], want[k]);
	assert_int_equal(s->birth[find(s, 6)], 0); /* born after GC index 0 */
	assert_int_equal(s->total_bytes, 24 + 32 + 24 + 16 + 4 * (uint64_t)BIG_LEN);
	heap_state_free(s);
	trace_close(t);
}

static void test_reconstruct_gc3_big_array_slots(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "a.htr");
	struct trace *t;
	open_ok(p, &t);
	struct heap_state *s = build(t, 2);
	assert_int_equal(s->n, 6); /* 1 4 6 7 8 9 */
	assert_int_equal(s->unknown_objects, 1);
	assert_int_equal(hs_info(s, find(s, 9))->type, HTR_NO_TYPE);
	uint32_t slot;
	assert_int_equal(ref_target(s, 7, 0, &slot), 1);
	assert_int_equal(slot, 5);
	assert_int_equal(ref_target(s, 7, 1, &slot), 6);
	assert_int_equal(slot, 70000);
	assert_int_equal(ref_target(s, 7, 2, &slot), 8);
	assert_int_equal(slot, 199999);
	assert_int_equal(ref_target(s, 6, 0, &slot), 6); /* self reference */
	assert_int_equal(slot, 0);
	assert_int_equal(ref_target(s, 1, 0, &slot), 4); /* after the big array */
	assert_int_equal(slot, 2);
	assert_int_equal(s->nroots, 2);
	assert_int_equal(s->dropped_roots, 1);
	/* reachable: 7 -> 1 -> 4, 7 -> 6, 7 -> 8; not 9 */
	assert_int_equal(s->nreachable, 5);
	assert_false(hs_is_reachable(s, find(s, 9)));
	assert_int_equal(s->birth[find(s, 8)], 1);
	heap_state_free(s);
	trace_close(t);
}

static void read_file(const char *p, struct buf *b)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	char tmp[65536];
	size_t n;
	buf_reset(b);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		assert_int_equal(buf_put(b, tmp, n), 0);
	fclose(f);
}

static void write_file(const char *p, const void *d, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
}

/* Cut the trace at every byte: each cut either opens (what is complete,
 * saying truncated when a frame was cut) and rebuilds every GC it lists, or
 * is refused with a message; nothing crashes (ASan run checks memory). */
static void test_cut_at_every_byte(void **state)
{
	(void)state;
	char p[256], q[256];
	path_in_dir(p, sizeof(p), "small.htr");
	path_in_dir(q, sizeof(q), "cut.htr");
	/* a small trace: the big array makes a large but compressible frame */
	write_trace(p, 1);
	struct buf whole;
	buf_init(&whole);
	read_file(p, &whole);
	int opened = 0, refused = 0, truncated = 0;
	uint32_t max_gcs_truncated = 0;
	for (size_t cut = 0; cut < whole.len; cut++) {
		write_file(q, whole.data, cut);
		struct trace *t = NULL;
		struct htr_err err;
		int rc = trace_open(&t, q, NULL, &err);
		if (rc) {
			assert_true(err.msg[0] != 0);
			refused++;
			continue;
		}
		opened++;
		if (t->truncated) {
			truncated++;
			if (t->ngcs > max_gcs_truncated)
				max_gcs_truncated = t->ngcs;
		}
		for (uint32_t g = 0; g < t->ngcs; g++) {
			struct heap_state *s = NULL;
			assert_int_equal(heap_state_build(t, g, NULL, &s, &err), 0);
			heap_state_free(s);
		}
		trace_close(t);
	}
	/* below the 32-byte header: refused; from there on: opens */
	assert_int_equal(refused, HTR_HEADER_SIZE);
	assert_int_equal(opened, (int)whole.len - HTR_HEADER_SIZE);
	assert_true(truncated > 0);
	assert_int_equal(max_gcs_truncated, 3); /* cut inside the last frame */
	buf_free(&whole);
}

static void expect_refused(const char *p, const char *needle, uint64_t offset)
{
	struct trace *t = NULL;
	struct htr_err err;
	int rc = trace_open(&t, p, NULL, &err);
	assert_true(rc < 0);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	if (offset != UINT64_MAX)
		assert_int_equal(err.offset, offset);
	else /* somewhere inside the damaged frame */
		assert_true(err.offset >= HTR_HEADER_SIZE);
}

static void test_refuses_damage(void **state)
{
	(void)state;
	char p[256], q[256];
	path_in_dir(p, sizeof(p), "a.htr");
	path_in_dir(q, sizeof(q), "bad.htr");
	struct buf b;
	buf_init(&b);
	read_file(p, &b);

	/* bad magic */
	b.data[0] ^= 0xff;
	write_file(q, b.data, b.len);
	expect_refused(q, "bad magic", 0);
	b.data[0] ^= 0xff;

	/* a version from the future, with a valid header checksum */
	b.data[8] = 9;
	put_le32(b.data + 28, crc32_ieee(b.data, 28));
	write_file(q, b.data, b.len);
	expect_refused(q, "is not supported (this heapfs reads 1.x)", 8);
	b.data[8] = HTR_VERSION_MAJOR;
	put_le32(b.data + 28, crc32_ieee(b.data, 28));

	/* garbage where the first frame header is; no trailer either */
	struct buf g;
	buf_init(&g);
	assert_int_equal(buf_put(&g, b.data, HTR_HEADER_SIZE), 0);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(buf_putc(&g, (uint8_t)(i * 131 + 7)), 0);
	write_file(q, g.data, g.len);
	expect_refused(q, "bad frame magic", HTR_HEADER_SIZE);

	/* a flipped byte inside the first frame's payload, footer removed so
	 * the scan must read it */
	struct buf c;
	buf_init(&c);
	char nf[256];
	path_in_dir(nf, sizeof(nf), "nofooter.htr");
	read_file(nf, &c);
	c.data[HTR_HEADER_SIZE + HTR_FRAME_HEADER_SIZE + 20] ^= 0x55;
	write_file(q, c.data, c.len);
	expect_refused(q, "damaged", UINT64_MAX);

	/* not a file at all */
	expect_refused(dir, "not a regular file", 0);
	buf_free(&b);
	buf_free(&g);
	buf_free(&c);
}

static void test_state_cache_budget(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "a.htr");
	struct trace *t;
	open_ok(p, &t);
	struct state_cache *c;
	assert_int_equal(state_cache_new(&c, t, 1, 0), 0); /* 1 byte: only the newest state fits */
	const struct heap_state *s1, *s1b;
	struct htr_err err;
	assert_int_equal(state_cache_get(c, 0, &s1, &err), 0);
	assert_int_equal(state_cache_get(c, 0, &s1b, &err), 0);
	assert_ptr_equal(s1, s1b); /* pinned: not rebuilt, not evicted */
	state_cache_put(c, s1);
	state_cache_put(c, s1b);
	struct state_cache_stats st;
	state_cache_stats(c, &st);
	assert_int_equal(st.builds, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.cached, 1); /* over budget, but the newest: kept */
	assert_int_equal(st.evictions, 0);
	assert_int_equal(state_cache_get(c, 0, &s1, &err), 0); /* served, not rebuilt */
	state_cache_put(c, s1);
	const struct heap_state *s2;
	assert_int_equal(state_cache_get(c, 2, &s2, &err), 0); /* GC 0 is no longer the newest */
	state_cache_put(c, s2);
	state_cache_stats(c, &st);
	assert_int_equal(st.builds, 2);
	assert_int_equal(st.cached, 1);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(state_cache_get(c, 0, &s1, &err), 0); /* evicted: built again */
	state_cache_put(c, s1);
	state_cache_stats(c, &st);
	assert_int_equal(st.builds, 3);
	assert_int_equal(st.evictions, 2);
	assert_int_equal(state_cache_get(c, 5, &s1, &err), -ENOENT);
	state_cache_free(c);
	trace_close(t);
}

/* Deaths applied in batches (over a million ids each, so the batch path
 * runs several times) must leave exactly the survivors.  Regression: the
 * sorted death buffer moved without its capacity following it. */
/* Symbol ids are dense: an id far beyond the symbols read so far is
 * damage, not a reason to allocate a table for 2^24 entries (a 29-byte
 * input made trace_open take 80 MB; tests/fuzz/crashes/type-id-table.fz).
 * An id just within the slack (65,536 past twice the symbols read) opens. */
static void test_sparse_symbol_id_refused(void **state)
{
	(void)state;
	static const uint32_t ids[] = { (1u << 24) - 1, 4 + 2 * 4 + 65536 };
	for (int k = 0; k < 2; k++) {
		char p[256];
		path_in_dir(p, sizeof(p), "sparse.htr");
		struct htr_writer *w;
		assert_int_equal(htr_writer_open(&w, p, NULL), 0);
		define_symbols(w); /* 4 types, 2 methods, 2 sites: 8 symbols */
		struct htr_type_def far = { ids[k], "example.Far", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE,
					    0, NULL };
		assert_int_equal(htr_write_type(w, &far), 0);
		gc_start(w, 1, 10, 0);
		gc_end(w, 1, 11, 0, 0);
		assert_int_equal(htr_writer_close(w), 0);
		if (k == 0) {
			expect_refused(p, "symbol id out of range", UINT64_MAX);
		} else {
			/* after 8 symbols, ids below 2 x 8 + 65536 = 65552 open:
			 * 65548 does */
			struct trace *t = NULL;
			struct htr_err err;
			assert_int_equal(trace_open(&t, p, NULL, &err), 0);
			assert_true(t->ntypes > ids[k]);
			trace_close(t);
		}
	}
}

static void test_many_deaths_without_graph(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "deaths.htr");
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	define_symbols(w);
	const uint64_t N = 3000000;
	uint64_t *ids = malloc(N * sizeof(uint64_t));
	assert_non_null(ids);
	uint64_t t = 1;
	for (uint32_t gc = 1; gc <= 3; gc++) {
		/* each epoch allocates N objects and frees all but every 10th of
		 * the epoch's own objects, in descending order (unsorted input) */
		uint64_t first = (gc - 1) * N + 1;
		for (uint64_t i = 0; i < N; i++)
			alloc(w, first + i, T_BYTES, 16, 0, 1, t++);
		gc_start(w, gc, t++, 0);
		uint64_t nd = 0;
		for (uint64_t i = N; i-- > 0;)
			if ((first + i) % 10 != 0)
				ids[nd++] = first + i;
		assert_int_equal(htr_write_deaths(w, gc, (uint32_t)nd, ids), 0);
		gc_end(w, gc, t++, 0, 0);
	}
	assert_int_equal(htr_writer_close(w), 0);
	free(ids);
	struct trace *tr;
	open_ok(p, &tr);
	for (uint32_t gi = 0; gi < 3; gi++) {
		struct heap_state *s = build(tr, gi);
		assert_int_equal(s->n, (gi + 1) * N / 10);
		for (uint32_t i = 0; i < s->n; i++)
			assert_true(s->id[i] == 10 * (uint64_t)(i + 1));
		heap_state_free(s);
	}
	trace_close(tr);
}

/* Two states are the same heap: ids, per-object properties (compared by
 * value: interning order may differ), births, edges with slots, roots. */
static void assert_same_state(const struct heap_state *a, const struct heap_state *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->nedges, b->nedges);
	assert_int_equal(a->nroots, b->nroots);
	assert_int_equal(a->total_bytes, b->total_bytes);
	assert_int_equal(a->reachable_bytes, b->reachable_bytes);
	assert_int_equal(a->unknown_objects, b->unknown_objects);
	for (uint32_t i = 0; i < a->n; i++) {
		assert_true(a->id[i] == b->id[i]);
		assert_memory_equal(hs_info(a, i), hs_info(b, i), sizeof(struct objinfo));
		assert_int_equal(a->birth[i], b->birth[i]);
		assert_int_equal(a->out_off[i], b->out_off[i]);
	}
	for (uint64_t e = 0; e < a->nedges; e++) {
		assert_int_equal(a->out_tgt[e], b->out_tgt[e]);
		assert_int_equal(a->out_slot[e], b->out_slot[e]);
	}
}

/* Building GC k from the state of GC k-1 (or of an older GC) gives exactly
 * the state a full build gives, on every scenario. */
static void test_incremental_equals_full(void **state)
{
	(void)state;
	for (size_t sc = 0; sc < synth_scenario_count(); sc++) {
		char p[256], msg[256];
		path_in_dir(p, sizeof(p), "inc.htr");
		struct synth_opts so;
		synth_opts_init(&so);
		so.objects = 300;
		so.gcs = 9;
		const char *name = synth_scenario_name(sc);
		assert_int_equal(synth_write(name, &so, p, msg, sizeof(msg)), 0);
		struct trace *t;
		open_ok(p, &t);
		struct heap_state *prev = NULL, *first = build(t, 0);
		for (uint32_t g = 0; g < t->ngcs; g++) {
			struct heap_state *full = build(t, g), *inc = NULL, *from_first = NULL;
			struct heap_build_opts o = { .base = prev };
			struct htr_err err;
			assert_int_equal(heap_state_build(t, g, &o, &inc, &err), 0);
			assert_same_state(full, inc);
			o.base = first;
			assert_int_equal(heap_state_build(t, g, &o, &from_first, &err), 0);
			assert_same_state(full, from_first);
			heap_state_free(from_first);
			heap_state_free(inc);
			heap_state_free(prev);
			prev = full;
		}
		heap_state_free(prev);
		heap_state_free(first);
		trace_close(t);
	}
}

/* The same state, numbering included: ids, info indexes and the infos
 * table, births, edges, roots, reachability. */
static void assert_identical_state(const struct heap_state *a, const struct heap_state *b)
{
	assert_same_state(a, b);
	assert_int_equal(a->ninfos, b->ninfos);
	assert_memory_equal(a->infos, b->infos, (size_t)a->ninfos * sizeof *a->infos);
	assert_memory_equal(a->info, b->info, (size_t)a->n * sizeof *a->info);
	assert_int_equal(a->nreachable, b->nreachable);
}

/* Every GC of t built on 1 and on 4 threads, from scratch and from the
 * previous GC's state: the live set's allocations are read on the
 * threads frame by frame and applied in frame order, so the states are
 * identical, the infos' numbering included. */
static void check_threads_same(const struct trace *t)
{
	struct heap_state *prev = NULL;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		struct heap_state *one = NULL, *four = NULL, *one_b = NULL, *four_b = NULL;
		struct heap_build_opts o1 = { .threads = 1 }, o4 = { .threads = 4 };
		struct htr_err err;
		assert_int_equal(heap_state_build(t, g, &o1, &one, &err), 0);
		assert_int_equal(heap_state_build(t, g, &o4, &four, &err), 0);
		assert_identical_state(one, four);
		o1.base = o4.base = prev;
		assert_int_equal(heap_state_build(t, g, &o1, &one_b, &err), 0);
		assert_int_equal(heap_state_build(t, g, &o4, &four_b, &err), 0);
		assert_identical_state(one_b, four_b);
		assert_same_state(one, four_b);
		heap_state_free(four);
		heap_state_free(one_b);
		heap_state_free(four_b);
		heap_state_free(prev);
		prev = one;
	}
	heap_state_free(prev);
}

/* A recording whose allocations need care on several threads: object 3,
 * allocated before GC 1, is missing from the walks of GCs 1 and 2 and
 * found again at GC 3 (built from GC 2's state, it takes the frames
 * before the base); object 5 is logged twice with different types (the
 * first one counts); objects on two threads, one of them preexisting. */
static void write_live_trace(const char *path)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { 0 };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	define_symbols(w);
	struct htr_alloc pre = { 2, T_NODE, S_NODE, 7, NODE_SIZE, -1, 1500, HTR_ALLOC_PREEXISTING };
	struct htr_alloc dup = { 5, T_BYTES, S_ARR, 1, 40, 24, 25000, 0 };
	struct htr_root root = { .kind = HTR_ROOT_STATIC, .object = 1, .type = T_HOLDER, .field = 0 };
	struct htr_ref r1[] = { { 0, 2 }, { 1, 3 }, { 2, 5 } }, r1b[] = { { 0, 2 }, { 2, 5 } };
	alloc(w, 1, T_NODE, NODE_SIZE, -1, 1, 1000);
	assert_int_equal(htr_write_alloc(w, &pre), 0);
	alloc(w, 3, T_NODE, NODE_SIZE, -1, 7, 2000);
	gc_start(w, 1, 10000, 3 * 24);
	assert_int_equal(htr_write_roots(w, 1, 1, &root), 0);
	graph_obj(w, 1, 1, r1b);
	graph_obj(w, 2, 0, NULL);
	gc_end(w, 1, 11000, 2 * 24, 1);
	alloc(w, 4, T_BYTES, 32, 10, 7, 20000);
	alloc(w, 5, T_NODE, NODE_SIZE, -1, 1, 21000);
	gc_start(w, 2, 30000, 4 * 24);
	assert_int_equal(htr_write_roots(w, 2, 1, &root), 0);
	graph_obj(w, 1, 2, r1b);
	graph_obj(w, 2, 0, NULL);
	graph_obj(w, 5, 0, NULL);
	gc_end(w, 2, 31000, 3 * 24, 1);
	assert_int_equal(htr_write_alloc(w, &dup), 0);
	alloc(w, 6, T_ARR, 16 + 4 * 3, 3, 7, 40000);
	gc_start(w, 3, 50000, 5 * 24);
	assert_int_equal(htr_write_roots(w, 3, 1, &root), 0);
	graph_obj(w, 1, 3, r1);
	graph_obj(w, 2, 0, NULL);
	graph_obj(w, 3, 0, NULL);
	graph_obj(w, 5, 0, NULL);
	graph_obj(w, 6, 0, NULL);
	gc_end(w, 3, 51000, 5 * 24, 1);
	assert_int_equal(htr_writer_close(w), 0);
}

static void test_threads_same_state(void **state)
{
	(void)state;
	char p[256], msg[256];
	struct trace *t;
	for (size_t sc = 0; sc < synth_scenario_count(); sc++) {
		path_in_dir(p, sizeof(p), "thr.htr");
		struct synth_opts so;
		synth_opts_init(&so);
		so.objects = 400;
		so.gcs = 9;
		assert_int_equal(synth_write(synth_scenario_name(sc), &so, p, msg, sizeof(msg)), 0);
		open_ok(p, &t);
		check_threads_same(t);
		trace_close(t);
	}
	open_ok("examples/multicache.htr", &t); /* a real recording; committed */
	check_threads_same(t);
	trace_close(t);

	path_in_dir(p, sizeof(p), "live.htr");
	write_live_trace(p);
	open_ok(p, &t);
	assert_int_equal(t->ngcs, 3);
	check_threads_same(t);
	/* GC 3 from GC 2's state, on 4 threads, against the construction */
	struct heap_state *s2 = NULL, *s3 = NULL;
	struct heap_build_opts o = { .threads = 4 };
	struct htr_err err;
	assert_int_equal(heap_state_build(t, 1, &o, &s2, &err), 0);
	o.base = s2;
	assert_int_equal(heap_state_build(t, 2, &o, &s3, &err), 0);
	static const struct { uint64_t id; uint32_t type; uint32_t birth; uint64_t thread; } want[] = {
		{ 1, T_NODE, HS_NO_BIRTH, 1 }, { 2, T_NODE, HS_NO_BIRTH, 7 }, { 3, T_NODE, HS_NO_BIRTH, 7 },
		{ 5, T_NODE, 0, 1 },           { 6, T_ARR, 1, 7 },
	};
	assert_int_equal(s3->n, 5);
	assert_int_equal(s3->unknown_objects, 0);
	for (uint32_t i = 0; i < 5; i++) {
		assert_true(s3->id[i] == want[i].id);
		assert_int_equal(hs_info(s3, i)->type, want[i].type);
		assert_int_equal(s3->birth[i], want[i].birth);
		assert_int_equal(hs_info(s3, i)->thread, trace_thread_index(t, want[i].thread));
	}
	assert_true(hs_info(s3, 1)->flags & HTR_ALLOC_PREEXISTING);
	heap_state_free(s2);
	heap_state_free(s3);
	trace_close(t);
}

/* The same on a real recording (the agent logs allocations made after its
 * heap walk into the walked GC's own frame). */
static void test_incremental_equals_full_recorded(void **state)
{
	(void)state;
	struct trace *t;
	open_ok("examples/multicache.htr", &t); /* committed; tests run from the top */
	struct heap_state *prev = NULL;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		struct heap_state *full = build(t, g), *inc = NULL;
		struct heap_build_opts o = { .base = prev };
		struct htr_err err;
		assert_int_equal(heap_state_build(t, g, &o, &inc, &err), 0);
		assert_same_state(full, inc);
		heap_state_free(inc);
		heap_state_free(prev);
		prev = full;
	}
	heap_state_free(prev);
	trace_close(t);
}

static void test_varints(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b);
	uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		assert_int_equal(buf_put_uv(&b, vals[i]), 0);
	int64_t svals[] = { 0, -1, 1, INT64_MIN, INT64_MAX };
	for (size_t i = 0; i < sizeof(svals) / sizeof(svals[0]); i++)
		assert_int_equal(buf_put_sv(&b, svals[i]), 0);
	struct cur c = { b.data, b.data + b.len };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v;
		assert_int_equal(cur_uv(&c, &v), 0);
		assert_true(v == vals[i]);
	}
	for (size_t i = 0; i < sizeof(svals) / sizeof(svals[0]); i++) {
		int64_t v;
		assert_int_equal(cur_sv(&c, &v), 0);
		assert_true(v == svals[i]);
	}
	uint64_t v;
	assert_int_equal(cur_uv(&c, &v), -EBADMSG); /* past the end */
	uint8_t eleven[11];
	memset(eleven, 0x80, sizeof(eleven));
	struct cur c2 = { eleven, eleven + sizeof(eleven) };
	assert_int_equal(cur_uv(&c2, &v), -EBADMSG); /* overlong */
	uint8_t two[] = { 0xac, 0x02 }; /* 300, and the same cut after one byte */
	struct cur c3 = { two, two + 2 }, c4 = { two, two + 1 };
	assert_int_equal(cur_uv(&c3, &v), 0);
	assert_true(v == 300 && c3.p == two + 2);
	assert_int_equal(cur_uv(&c4, &v), -EBADMSG);
	/* CRC-32 of "123456789" is the standard check value */
	assert_int_equal(crc32_ieee("123456789", 9), 0xCBF43926u);
	buf_free(&b);
}

/* ---- bulk decoding (htr_iter_allocs, htr_iter_graph) ------------------- */

/* Everything a frame says about allocations and graphs, flattened: what
 * one-by-one and bulk reading must agree on. */
struct flat {
	struct buf allocs;  /* struct htr_alloc */
	struct buf objs;    /* uint64_t id, uint64_t first edge */
	struct buf edges;   /* uint64_t target, uint64_t slot */
	struct buf others;  /* uint8_t type of every other event */
};

/* Field by field: the struct's padding holds whatever the stack held. */
static void flat_alloc(struct flat *f, const struct htr_alloc *a)
{
	uint64_t rec[8] = { a->id, a->type, a->site, a->thread, a->size, (uint64_t)a->array_length,
			    a->time_ns, a->flags };
	assert_int_equal(buf_put(&f->allocs, rec, sizeof(rec)), 0);
}

static void flat_obj(struct flat *f, uint64_t id)
{
	size_t n = f->objs.len / 16;
	if (n && ((const uint64_t *)f->objs.data)[2 * (n - 1)] == id)
		return; /* a continuation chunk */
	uint64_t rec[2] = { id, f->edges.len / 16 };
	assert_int_equal(buf_put(&f->objs, rec, sizeof(rec)), 0);
}

static void flat_event(struct flat *f, const struct htr_event *ev)
{
	if (ev->type == HTR_EV_ALLOC) {
		flat_alloc(f, &ev->u.alloc);
	} else if (ev->type == HTR_EV_GRAPH_OBJ) {
		flat_obj(f, ev->u.graph.id);
		for (uint32_t i = 0; i < ev->u.graph.count; i++) {
			uint64_t e[2] = { ev->u.graph.refs[i].target, ev->u.graph.refs[i].slot };
			assert_int_equal(buf_put(&f->edges, e, sizeof(e)), 0);
		}
	} else {
		uint8_t t = (uint8_t)ev->type;
		assert_int_equal(buf_put(&f->others, &t, 1), 0);
	}
}

/* Bulk reading with deliberately small, varying room, so that runs are cut
 * and events that do not fit fall back to htr_iter_next. */
static void read_bulk(struct htr_iter *it, struct flat *f, uint32_t *rng)
{
	struct htr_err err;
	struct htr_alloc batch[7];
	struct htr_graph_cols g = { 0 };
	uint64_t ids[5], tgt[5000];
	uint32_t off[6], slot[5000];
	for (;;) {
		*rng = *rng * 1103515245u + 12345u;
		uint32_t r = *rng >> 16;
		int n = htr_iter_allocs(it, batch, 1 + r % 7, &err);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			flat_alloc(f, &batch[i]);
		g = (struct htr_graph_cols){ ids, off, 0, 1 + r % 5, tgt, slot, 0, r % 5000, 0 };
		int m = htr_iter_graph(it, &g, &err);
		assert_true(m >= 0);
		for (uint64_t k = 0; k < g.nobj; k++) {
			flat_obj(f, ids[k]);
			uint64_t end = k + 1 < g.nobj ? off[k + 1] : g.nedges;
			for (uint64_t e = off[k]; e < end; e++) {
				uint64_t rec[2] = { tgt[e], slot[e] };
				assert_int_equal(buf_put(&f->edges, rec, sizeof(rec)), 0);
			}
		}
		if (n || m)
			continue;
		struct htr_event ev;
		int rc = htr_iter_next(it, &ev, &err);
		assert_true(rc >= 0);
		if (rc == 0)
			break;
		flat_event(f, &ev);
	}
}

static void flat_free(struct flat *f)
{
	buf_free(&f->allocs);
	buf_free(&f->objs);
	buf_free(&f->edges);
	buf_free(&f->others);
}

static void assert_same_buf(const struct buf *a, const struct buf *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->data, b->data, a->len);
}

/* A trace of pseudo-random allocations (ids with gaps and steps back,
 * fields from one byte to full 64-bit varints) and graphs (objects with up
 * to three chunks of references, ids out of order, repeated objects). */
static void write_random_trace(const char *path, uint32_t seed)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .minor = 0 };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	define_symbols(w);
	uint32_t rng = seed;
	uint64_t id = 1;
	static struct htr_ref refs[3 * HTR_MAX_CHUNK + 7];
	for (uint32_t gc = 1; gc <= 3; gc++) {
		for (int i = 0; i < 3000; i++) {
			rng = rng * 1103515245u + 12345u;
			uint32_t r = rng >> 8;
			id = r % 50 == 0 && id > 100 ? id - 1 - r % 90 : id + 1 + (r % 7 == 0 ? r : 0);
			uint64_t big = (uint64_t)r << (r % 40);
			struct htr_alloc a = { id, r % 3 ? T_NODE : T_ARR, r % 4 ? S_NODE : HTR_NO_SITE,
					       r % 2 ? 1 : 7, 16 + big % 100000, r % 3 ? -1 : (int64_t)(big % 70000),
					       1000ull * gc * i + big % 1000, 0 };
			assert_int_equal(htr_write_alloc(w, &a), 0);
		}
		gc_start(w, gc, 10000000ull * gc, 1000);
		for (int k = 0; k < 400; k++) {
			rng = rng * 1103515245u + 12345u;
			uint32_t r = rng >> 8;
			uint32_t n = k % 97 == 5 ? HTR_MAX_CHUNK * (1 + r % 3) + r % 7 : r % 9;
			for (uint32_t j = 0; j < n; j++)
				refs[j] = (struct htr_ref){ j * (1 + r % 3) + (j > 5000 ? 70000 : 0),
							     (uint64_t)(r + j) * (r % 5 == 0 ? 1000003 : 3) % (id + 1) };
			graph_obj(w, k % 50 == 7 ? 400000ull - (uint64_t)k : 1 + 11ull * (uint64_t)k, n, refs);
		}
		gc_end(w, gc, 10000000ull * gc + 5000, 900, 1);
	}
	assert_int_equal(htr_writer_close(w), 0);
}

static void test_bulk_equals_one_by_one(void **state)
{
	(void)state;
	char path[512];
	path_in_dir(path, sizeof(path), "bulk.htr");
	uint32_t frames_with_graph = 0, frames_with_allocs = 0;
	for (uint32_t seed = 1; seed <= 3; seed++) {
		write_random_trace(path, seed);
		struct trace *t;
		open_ok(path, &t);
		uint32_t rng = seed;
		for (uint32_t fi = 0; fi < t->nframes; fi++) {
			struct htr_frame_hdr h;
			struct htr_err err;
			assert_int_equal(htr_frame_header(t->file, t->frames[fi].offset, &h, &err), 0);
			struct flat one = { 0 }, bulk = { 0 };
			struct htr_iter *it;
			struct htr_event ev;
			int rc;
			assert_int_equal(htr_iter_open(&it, t->file, &h, &err), 0);
			while ((rc = htr_iter_next(it, &ev, &err)) == 1)
				flat_event(&one, &ev);
			assert_int_equal(rc, 0);
			htr_iter_close(it);
			assert_int_equal(htr_iter_open(&it, t->file, &h, &err), 0);
			read_bulk(it, &bulk, &rng);
			htr_iter_close(it);
			assert_same_buf(&one.allocs, &bulk.allocs);
			assert_same_buf(&one.objs, &bulk.objs);
			assert_same_buf(&one.edges, &bulk.edges);
			assert_same_buf(&one.others, &bulk.others);
			frames_with_graph += one.edges.len > 16 * HTR_MAX_CHUNK;
			frames_with_allocs += one.allocs.len > 0;
			flat_free(&one);
			flat_free(&bulk);
		}
		trace_close(t);
	}
	/* the scenario really held chunked graphs and allocation runs */
	assert_true(frames_with_graph >= 3);
	assert_true(frames_with_allocs >= 3);
	unlink(path);
}

/* One random heap, its ids 1, 2, 3, ... times mul: with mul 1 they are
 * dense (the rebuild maps them through a table), with a large mul sparse
 * (the directory's search).  Some references point at ids that are not
 * live (dangling), below, between and above the live ones. */
static void write_scaled_trace(const char *path, uint64_t mul)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .minor = 0 };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	define_symbols(w);
	enum { N = 3000 };
	for (uint64_t i = 1; i <= N; i++)
		alloc(w, i * mul, T_NODE, NODE_SIZE, -1, 1, i);
	gc_start(w, 1, 100000, N * NODE_SIZE);
	struct htr_root r = { .kind = HTR_ROOT_STATIC, .object = mul, .type = T_HOLDER, .field = 0 };
	assert_int_equal(htr_write_roots(w, 1, 1, &r), 0);
	uint32_t rng = 7;
	for (uint64_t i = 1; i <= N; i++) {
		struct htr_ref refs[5];
		uint32_t n = 0;
		for (; n < i % 5 && n < 4; n++) {
			rng = rng * 1103515245u + 12345u;
			uint64_t k = 1 + (rng >> 8) % (N + 40); /* k > N: dangling */
			refs[n] = (struct htr_ref){ n, k * mul };
		}
		if (i % 97 == 0)
			refs[n++] = (struct htr_ref){ n, mul / 2 }; /* dangling, below the first id */
		graph_obj(w, i * mul, n, refs);
	}
	gc_end(w, 1, 100500, N * NODE_SIZE, 1);
	assert_int_equal(htr_writer_close(w), 0);
}

static void test_dense_and_sparse_ids_agree(void **state)
{
	(void)state;
	char path[512];
	path_in_dir(path, sizeof(path), "scaled.htr");
	struct heap_state *st[2];
	uint64_t muls[2] = { 1, 4099 };
	for (int v = 0; v < 2; v++) {
		write_scaled_trace(path, muls[v]);
		struct trace *t;
		open_ok(path, &t);
		st[v] = build(t, 0);
		trace_close(t);
	}
	const struct heap_state *a = st[0], *b = st[1];
	assert_int_equal(a->n, 3000);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->nedges, b->nedges);
	assert_int_equal(a->dangling_refs, b->dangling_refs);
	assert_true(a->dangling_refs > 0);
	assert_int_equal(a->nreachable, b->nreachable);
	assert_true(a->nreachable > 1);
	for (uint32_t i = 0; i < a->n; i++) {
		assert_true(b->id[i] == a->id[i] * 4099);
		assert_int_equal(a->out_off[i], b->out_off[i]);
		assert_int_equal(a->in_off[i], b->in_off[i]);
		assert_int_equal(hs_is_reachable(a, i), hs_is_reachable(b, i));
	}
	for (uint64_t e = 0; e < a->nedges; e++) {
		assert_int_equal(a->out_tgt[e], b->out_tgt[e]);
		assert_int_equal(a->out_slot[e], b->out_slot[e]);
		assert_int_equal(a->in_src[e], b->in_src[e]);
		/* and every edge goes where the trace said: target = id of slot */
		assert_true(a->out_tgt[e] < a->n);
	}
	heap_state_free(st[0]);
	heap_state_free(st[1]);
	unlink(path);
}

/* ---- format 1.2: recorded reachable summaries ------------------------- */

/* GC 1 of the hand-built heap: roots 1 (static) and 3 (local) reach 1, 2,
 * 3 and 4 (1.next=2, 2.next=3, 1.data=4): three nodes and the 32-byte
 * array.  GC 3 below: root -> 1 reaches 1..4 again; 6 is unreachable. */
#define GC1_REACH_OBJECTS 4u
#define GC1_REACH_BYTES (3u * NODE_SIZE + 32u)

/* A three-GC trace: GC 1 (graph) records objects/bytes as its reachable
 * summary, GC 2 has no graph, GC 3 has a graph and records none (its start
 * asks for one, which a GC start cannot carry).  minor: the layout
 * (htr_writer_opts.minor). */
static void write_reach_trace(const char *path, int footer, int minor, uint64_t objects,
			      uint64_t bytes)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .no_footer = !footer, .minor = minor };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	define_symbols(w);
	alloc(w, 1, T_NODE, NODE_SIZE, -1, 1, 1000);
	alloc(w, 2, T_NODE, NODE_SIZE, -1, 1, 2000);
	alloc(w, 3, T_NODE, NODE_SIZE, -1, 1, 3000);
	alloc(w, 4, T_BYTES, 32, 10, 1, 4000);
	alloc(w, 5, T_NODE, NODE_SIZE, -1, 7, 5000);
	gc_start(w, 1, 10000, 5 * NODE_SIZE);
	struct htr_root r1[] = {
		{ .kind = HTR_ROOT_STATIC, .object = 1, .type = T_HOLDER, .field = 0 },
		{ .kind = HTR_ROOT_LOCAL, .object = 3, .thread = 1, .method = M_MAIN, .depth = 0, .slot = 2 },
	};
	assert_int_equal(htr_write_roots(w, 1, 2, r1), 0);
	struct htr_ref n1[] = { { 0, 2 }, { 2, 4 } }, n2[] = { { 0, 3 } };
	graph_obj(w, 1, 2, n1);
	graph_obj(w, 2, 1, n2);
	graph_obj(w, 3, 0, NULL);
	graph_obj(w, 4, 0, NULL);
	uint64_t d1[] = { 5 };
	assert_int_equal(htr_write_deaths(w, 1, 1, d1), 0);
	struct htr_gc_event e1 = { .gc = 1, .time_ns = 12000, .used = 4 * NODE_SIZE, .capacity = 1 << 20,
				   .flags = HTR_GC_HAS_GRAPH | HTR_GC_HAS_REACHABLE,
				   .reachable_objects = objects, .reachable_bytes = bytes };
	assert_int_equal(htr_write_gc_end(w, &e1), 0);

	alloc(w, 6, T_NODE, NODE_SIZE, -1, 7, 20000);
	gc_start(w, 2, 30000, 1000);
	gc_end(w, 2, 31000, 900, 0);

	struct htr_gc_event s3 = { .gc = 3, .time_ns = 50000, .used = 2000, .capacity = 1 << 20,
				   .flags = HTR_GC_HAS_REACHABLE, .reachable_objects = 1,
				   .reachable_bytes = 1, .cause = "test cause" };
	assert_int_equal(htr_write_gc_start(w, &s3), 0);
	struct htr_root r3[] = { { .kind = HTR_ROOT_JNI_GLOBAL, .object = 1 } };
	assert_int_equal(htr_write_roots(w, 3, 1, r3), 0);
	graph_obj(w, 1, 2, n1);
	graph_obj(w, 2, 1, n2);
	graph_obj(w, 3, 0, NULL);
	graph_obj(w, 4, 0, NULL);
	graph_obj(w, 6, 0, NULL);
	gc_end(w, 3, 52000, 1500, 1);
	assert_int_equal(htr_writer_close(w), 0);
}

/* Written, then read from the footer and by scanning the frames. */
static void test_reachable_round_trip(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "reach.htr");
	for (int footer = 1; footer >= 0; footer--) {
		write_reach_trace(p, footer, 0, GC1_REACH_OBJECTS, GC1_REACH_BYTES);
		struct trace *t;
		open_ok(p, &t);
		assert_int_equal(t->had_footer, footer);
		assert_int_equal(t->file->minor, HTR_VERSION_MINOR);
		assert_int_equal(t->ngcs, 3);
		assert_true(t->gcs[0].flags & HTR_GC_HAS_GRAPH);
		assert_true(t->gcs[0].flags & HTR_GC_HAS_REACHABLE);
		assert_int_equal(t->gcs[0].reachable_objects, GC1_REACH_OBJECTS);
		assert_int_equal(t->gcs[0].reachable_bytes, GC1_REACH_BYTES);
		assert_int_equal(t->gcs[0].used_after, 4 * NODE_SIZE); /* fields before still right */
		assert_false(t->gcs[1].flags & HTR_GC_HAS_REACHABLE);
		assert_int_equal(t->gcs[1].reachable_objects, 0);
		assert_true(t->gcs[2].flags & HTR_GC_HAS_GRAPH);
		assert_false(t->gcs[2].flags & HTR_GC_HAS_REACHABLE); /* a start's flag: ignored */
		assert_int_equal(t->gcs[2].reachable_bytes, 0);
		assert_string_equal(t->gcs[2].cause, "test cause");
		/* the hand count agrees with the rebuilt heap */
		struct heap_state *s = build(t, 0);
		char msg[256];
		assert_int_equal(s->nreachable, GC1_REACH_OBJECTS);
		assert_int_equal(s->reachable_bytes, GC1_REACH_BYTES);
		assert_int_equal(trace_check_reachable(t, 0, s->nreachable, s->reachable_bytes, msg,
						       sizeof msg), 0);
		heap_state_free(s);
		trace_close(t);
	}
	/* a summary needs a graph, and UINT64_MAX cannot be stored */
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	gc_start(w, 1, 10, 100);
	struct htr_gc_event e = { .gc = 1, .time_ns = 20, .used = 10, .capacity = 1 << 20,
				  .flags = HTR_GC_HAS_REACHABLE, .reachable_objects = 1, .reachable_bytes = 8 };
	assert_int_equal(htr_write_gc_end(w, &e), -EINVAL);
	htr_writer_abandon(w);
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	gc_start(w, 1, 10, 100);
	e.flags |= HTR_GC_HAS_GRAPH;
	e.reachable_bytes = UINT64_MAX;
	assert_int_equal(htr_write_gc_end(w, &e), -EINVAL);
	htr_writer_abandon(w);
	/* a dropped graph is a GC without one */
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	gc_start(w, 1, 10, 100);
	struct htr_gc_event d = { .gc = 1, .time_ns = 20, .used = 10, .capacity = 1 << 20,
				  .flags = HTR_GC_HAS_GRAPH | HTR_GC_GRAPH_DROPPED };
	assert_int_equal(htr_write_gc_end(w, &d), -EINVAL);
	htr_writer_abandon(w);
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	gc_start(w, 1, 10, 100);
	d.flags = HTR_GC_GRAPH_DROPPED;
	assert_int_equal(htr_write_gc_end(w, &d), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct trace *t = NULL;
	struct htr_err err;
	assert_int_equal(trace_open(&t, p, NULL, &err), 0);
	assert_int_equal(t->ngcs, 1);
	assert_int_equal(t->gcs[0].flags & (HTR_GC_GRAPH_DROPPED | HTR_GC_HAS_GRAPH), HTR_GC_GRAPH_DROPPED);
	trace_close(t);
	unlink(p);
}

/* Files of the 1.1 layout (GC ends and summaries without the two fields)
 * and the committed 1.0 recording still open, with nothing recorded. */
static void test_reads_older_layouts(void **state)
{
	(void)state;
	char p[256];
	path_in_dir(p, sizeof(p), "reach11.htr");
	for (int footer = 1; footer >= 0; footer--) {
		write_reach_trace(p, footer, 1, GC1_REACH_OBJECTS, GC1_REACH_BYTES);
		struct trace *t;
		open_ok(p, &t);
		assert_int_equal(t->had_footer, footer);
		assert_int_equal(t->file->minor, 1);
		assert_int_equal(t->ngcs, 3);
		for (uint32_t g = 0; g < 3; g++) {
			assert_false(t->gcs[g].flags & HTR_GC_HAS_REACHABLE);
			assert_int_equal(t->gcs[g].reachable_objects, 0);
		}
		assert_true(t->gcs[0].flags & HTR_GC_HAS_GRAPH);
		assert_int_equal(t->gcs[0].used_after, 4 * NODE_SIZE);
		assert_int_equal(t->gcs[2].end_ns, 52000);
		struct heap_state *s = build(t, 0);
		assert_int_equal(s->nreachable, GC1_REACH_OBJECTS);
		heap_state_free(s);
		s = build(t, 2);
		assert_int_equal(s->n, 5);
		assert_int_equal(s->nreachable, 4); /* 6 is unreachable */
		heap_state_free(s);
		trace_close(t);
	}
	unlink(p);
	struct trace *t;
	/* examples/multicache.htr as the agent recorded it before format 1.2 */
	open_ok("tests/data/multicache-format-1.0.htr", &t);
	assert_true(t->file->minor < 2);
	assert_true(t->ngcs > 0);
	for (uint32_t g = 0; g < t->ngcs; g++)
		assert_false(t->gcs[g].flags & HTR_GC_HAS_REACHABLE);
	trace_close(t);
}

/* A deliberately wrong summary is caught, naming the GC and both values;
 * also by `heapfs check` when the binary is built. */
static void test_check_detects_wrong_summary(void **state)
{
	(void)state;
	char p[256], msg[256];
	path_in_dir(p, sizeof(p), "wrong.htr");
	const uint64_t wrong[][2] = {
		{ GC1_REACH_OBJECTS + 1, GC1_REACH_BYTES },
		{ GC1_REACH_OBJECTS, GC1_REACH_BYTES - 1 },
	};
	for (int k = 0; k < 2; k++) {
		write_reach_trace(p, 1, 0, wrong[k][0], wrong[k][1]);
		struct trace *t;
		open_ok(p, &t);
		struct heap_state *s = build(t, 0);
		assert_int_equal(trace_check_reachable(t, 0, s->nreachable, s->reachable_bytes, msg,
						       sizeof msg), -EBADMSG);
		char want[160];
		snprintf(want, sizeof want, "GC 1: recorded reachable %llu objects, %llu bytes",
			 (unsigned long long)wrong[k][0], (unsigned long long)wrong[k][1]);
		assert_non_null(strstr(msg, want));
		snprintf(want, sizeof want, "%u objects, %u bytes reachable", GC1_REACH_OBJECTS,
			 GC1_REACH_BYTES);
		assert_non_null(strstr(msg, want));
		/* GCs without a summary pass whatever the rebuild says */
		assert_int_equal(trace_check_reachable(t, 1, 7, 7, msg, sizeof msg), 0);
		heap_state_free(s);
		trace_close(t);
	}
	if (access("build/heapfs", X_OK) == 0) {
		char cmd[600], err[256];
		path_in_dir(err, sizeof(err), "wrong.err");
		snprintf(cmd, sizeof cmd, "build/heapfs check %s >/dev/null 2>%s", p, err);
		int st = system(cmd);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 1);
		struct buf b;
		buf_init(&b);
		read_file(err, &b);
		assert_non_null(memmem(b.data, b.len, "GC 1: recorded reachable 4 objects, 103 bytes",
				       strlen("GC 1: recorded reachable 4 objects, 103 bytes")));
		buf_free(&b);
		unlink(err);
	}
	unlink(p);
}

/* Every synthetic scenario records a summary at every GC, equal to the
 * rebuilt heap's reachable objects and bytes. */
static void test_synth_summaries_equal_rebuilt(void **state)
{
	(void)state;
	for (size_t sc = 0; sc < synth_scenario_count(); sc++) {
		char p[256], msg[256];
		path_in_dir(p, sizeof(p), "sreach.htr");
		struct synth_opts so;
		synth_opts_init(&so);
		so.objects = 300;
		so.gcs = 9;
		const char *name = synth_scenario_name(sc);
		assert_int_equal(synth_write(name, &so, p, msg, sizeof(msg)), 0);
		struct trace *t;
		open_ok(p, &t);
		assert_int_equal(t->ngcs, 9);
		struct heap_state *prev = NULL;
		for (uint32_t g = 0; g < t->ngcs; g++) {
			struct heap_state *s = NULL;
			struct heap_build_opts o = { .base = prev };
			struct htr_err err;
			assert_int_equal(heap_state_build(t, g, &o, &s, &err), 0);
			if (!(t->gcs[g].flags & HTR_GC_HAS_REACHABLE))
				fail_msg("%s: GC %u has no reachable summary", name, t->gcs[g].gc);
			assert_true(s->has_graph);
			assert_true(s->nreachable > 0);
			assert_int_equal(t->gcs[g].reachable_objects, s->nreachable);
			assert_int_equal(t->gcs[g].reachable_bytes, s->reachable_bytes);
			heap_state_free(prev);
			prev = s;
		}
		heap_state_free(prev);
		trace_close(t);
		unlink(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_threads_same_state),
		cmocka_unit_test(test_footer_index),
		cmocka_unit_test(test_scan_index_equals_footer),
		cmocka_unit_test(test_reconstruct_gc1),
		cmocka_unit_test(test_reconstruct_gc2_without_graph),
		cmocka_unit_test(test_reconstruct_gc3_big_array_slots),
		cmocka_unit_test(test_refuses_damage),
		cmocka_unit_test(test_state_cache_budget),
		cmocka_unit_test(test_sparse_symbol_id_refused),
		cmocka_unit_test(test_many_deaths_without_graph),
		cmocka_unit_test(test_incremental_equals_full),
		cmocka_unit_test(test_incremental_equals_full_recorded),
		cmocka_unit_test(test_cut_at_every_byte),
		cmocka_unit_test(test_bulk_equals_one_by_one),
		cmocka_unit_test(test_dense_and_sparse_ids_agree),
		cmocka_unit_test(test_reachable_round_trip),
		cmocka_unit_test(test_reads_older_layouts),
		cmocka_unit_test(test_check_detects_wrong_summary),
		cmocka_unit_test(test_synth_summaries_equal_rebuilt),
	};
	/* make tsan runs the tests whose code runs threads alone (the whole
	 * file takes a minute under ThreadSanitizer) */
	const char *only = getenv("HEAPFS_TEST_ONLY");
	if (only && *only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, setup, teardown);
}

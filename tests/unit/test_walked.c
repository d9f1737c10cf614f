/* test_walked.c - format 1.5's ALLOC flag WALKED: the objects a heap walk
 * of a sampled recording (the agent's mode=sample with graph=) met without
 * a sample.  Two traces of the same samples, one without the walk and one
 * with it at GC 1, are rebuilt: every expected value comes from what the
 * scenario writes (ids, types, deaths), never from the reconstructor.
 * Also what a sampled recording's estimate line says of the objects found
 * at start (info sample.start_deaths). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_state.h"
#include "analyses/classify.h"
#include "fs/tree.h"
#include "model/buf.h"
#include "model/heap_state.h"
#include "model/htr_writer.h"
#include "model/trace.h"

enum { T_A, T_B };
#define INTERVAL 512

static void alloc(struct htr_writer *w, uint64_t id, uint32_t type, uint64_t size, uint32_t flags, uint64_t t)
{
	struct htr_alloc a = { .id = id, .type = type, .site = HTR_NO_SITE, .thread = 0, .size = size,
			       .array_length = -1, .time_ns = t, .flags = flags };
	assert_int_equal(htr_write_alloc(w, &a), 0);
}

static void make_temp(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

#define WALKED (HTR_ALLOC_PREEXISTING | HTR_ALLOC_WALKED)

/* Before GC 1: object 100 (A) existed before recording; samples 200 (A),
 * 201 (B), 202 (A, dies at GC 1), 203 (A, garbage the walk does not meet:
 * no death).  walk: GC 1 carries a graph of 100, 200, 201 and the objects
 * the walk met without a sample, 300, 301 (A) and 302 (B).  After GC 1:
 * sample 204 (A); GC 2 without a graph. */
static void write_trace(const char *path, int walk)
{
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	assert_int_equal(htr_write_info(w, "agent.mode", "sample"), 0);
	assert_int_equal(htr_write_info(w, "sample.interval", "512"), 0);
	struct htr_type_def a = { .id = T_A, .name = "p.A", .kind = HTR_TYPE_INSTANCE, .super_id = HTR_NO_TYPE };
	struct htr_type_def b = { .id = T_B, .name = "p.B", .kind = HTR_TYPE_INSTANCE, .super_id = HTR_NO_TYPE };
	assert_int_equal(htr_write_type(w, &a), 0);
	assert_int_equal(htr_write_type(w, &b), 0);
	alloc(w, 100, T_A, 32, HTR_ALLOC_PREEXISTING, 0);
	alloc(w, 200, T_A, 32, 0, 10);
	alloc(w, 201, T_B, 64, 0, 20);
	alloc(w, 202, T_A, 32, 0, 30);
	alloc(w, 203, T_A, 32, 0, 40);
	struct htr_gc_event g = { .gc = 1, .time_ns = 1000, .used = 100, .capacity = 1 << 20, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	uint64_t dead[] = { 202 };
	assert_int_equal(htr_write_deaths(w, 1, 1, dead), 0);
	if (walk) {
		alloc(w, 300, T_A, 32, WALKED, 1005);
		alloc(w, 301, T_A, 32, WALKED, 1005);
		alloc(w, 302, T_B, 64, WALKED, 1005);
		struct htr_root r = { .kind = HTR_ROOT_OTHER, .object = 100 };
		assert_int_equal(htr_write_roots(w, 1, 1, &r), 0);
		struct htr_ref from100[] = { { 0, 200 }, { 1, 300 } }, from300[] = { { 0, 301 }, { 1, 302 } },
			       from301[] = { { 0, 201 } };
		assert_int_equal(htr_write_graph_object(w, 100, 2, from100), 0);
		assert_int_equal(htr_write_graph_object(w, 200, 0, NULL), 0);
		assert_int_equal(htr_write_graph_object(w, 201, 0, NULL), 0);
		assert_int_equal(htr_write_graph_object(w, 300, 2, from300), 0);
		assert_int_equal(htr_write_graph_object(w, 301, 1, from301), 0);
		assert_int_equal(htr_write_graph_object(w, 302, 0, NULL), 0);
		g.flags = HTR_GC_HAS_GRAPH;
	}
	g.time_ns = 1010;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
	alloc(w, 204, T_A, 32, 0, 1500);
	g = (struct htr_gc_event){ .gc = 2, .time_ns = 2000, .used = 100, .capacity = 1 << 20, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	g.time_ns = 2010;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
	assert_int_equal(htr_writer_close(w), 0);
}

static struct heap_state *build(const struct trace *t, uint32_t gci)
{
	struct heap_state *s = NULL;
	struct htr_err err;
	assert_int_equal(heap_state_build(t, gci, NULL, &s, &err), 0);
	return s;
}

/* The ids of s whose flags have none of `without`, ascending, in out[]. */
static uint32_t ids_without(const struct heap_state *s, uint32_t without, uint64_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (!(hs_info(s, i)->flags & without))
			out[n++] = s->id[i];
	return n;
}

/* Per type: the samples and estimates of cls_row_add over the state, as a
 * classification adds them. */
static void rows_of(const struct trace *t, const struct heap_state *s, struct cls_row rows[2])
{
	memset(rows, 0, 2 * sizeof *rows);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct objinfo *in = hs_info(s, i);
		assert_true(in->type < 2);
		cls_row_add(&rows[in->type], t, COL_LIVE, 1, in->size, in->flags, in->size);
	}
}

static void test_walk_keeps_estimates(void **state)
{
	(void)state;
	char pa[] = "/tmp/test_walked_aXXXXXX", pb[] = "/tmp/test_walked_bXXXXXX";
	make_temp(pa);
	make_temp(pb);
	write_trace(pa, 0);
	write_trace(pb, 1);
	struct trace *ta = NULL, *tb = NULL;
	struct htr_err err;
	assert_int_equal(trace_open(&ta, pa, NULL, &err), 0);
	assert_int_equal(trace_open(&tb, pb, NULL, &err), 0);
	assert_int_equal(tb->sample_interval, INTERVAL);
	/* the walk's objects are no allocations: 6 ALLOCs in both */
	assert_int_equal(ta->total_allocs, 6);
	assert_int_equal(tb->total_allocs, 6);
	assert_int_equal(tb->gcs[0].allocs, 5);

	/* GC 1: the samples' rule gives 100, 200, 201, 203 in both */
	struct heap_state *a1 = build(ta, 0), *b1 = build(tb, 0);
	const uint64_t live[] = { 100, 200, 201, 203 };
	uint64_t got[16];
	assert_int_equal(a1->n, 4);
	assert_int_equal(ids_without(a1, 0, got), 4);
	assert_memory_equal(got, live, sizeof live);
	assert_true(b1->has_graph);
	assert_int_equal(b1->n, 7);
	assert_int_equal(ids_without(b1, HTR_ALLOC_WALKED, got), 4);
	assert_memory_equal(got, live, sizeof live);
	/* the graph's objects: 203 is off it */
	const uint64_t graph[] = { 100, 200, 201, 300, 301, 302 };
	assert_int_equal(ids_without(b1, HS_FLAG_OFF_GRAPH, got), 6);
	assert_memory_equal(got, graph, sizeof graph);
	assert_int_equal(b1->unknown_objects, 0);
	assert_int_equal(b1->nreachable, 6);

	/* estimates equal, exact counts those of the graph: A 100 200 300 301,
	 * B 201 302 */
	struct cls_row ra[2], rb[2];
	rows_of(ta, a1, ra);
	rows_of(tb, b1, rb);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(ra[k].s[COL_LIVE], rb[k].s[COL_LIVE]);
		assert_true(ra[k].ec[COL_LIVE] == rb[k].ec[COL_LIVE]);
		assert_true(ra[k].eb[COL_LIVE] == rb[k].eb[COL_LIVE]);
	}
	assert_int_equal(rb[T_A].s[COL_LIVE], 3);  /* 100 (itself), 200, 203 */
	assert_int_equal(rb[T_A].xc[COL_LIVE], 4);
	assert_int_equal(rb[T_A].xb[COL_LIVE], 128);
	assert_int_equal(rb[T_B].s[COL_LIVE], 1);
	assert_int_equal(rb[T_B].xc[COL_LIVE], 2);
	assert_int_equal(rb[T_B].xb[COL_LIVE], 128);

	/* GC 2, no graph: the walk's objects are in no other state */
	struct heap_state *a2 = build(ta, 1), *b2 = build(tb, 1);
	const uint64_t live2[] = { 100, 200, 201, 203, 204 };
	assert_int_equal(b2->n, 5);
	assert_int_equal(ids_without(b2, 0, got), 5);
	assert_memory_equal(got, live2, sizeof live2);
	assert_int_equal(a2->n, 5);
	heap_state_free(a1);
	heap_state_free(b1);
	heap_state_free(a2);
	heap_state_free(b2);
	trace_close(ta);
	trace_close(tb);
	unlink(pa);
	/* (TEST_WALKED_KEEP=FILE keeps the walked trace: the fuzz seed
	 * tests/fuzz/seeds/fuzz_trace_state/walked-1.5 was made so) */
	const char *keep = getenv("TEST_WALKED_KEEP");
	if (!keep || rename(pb, keep))
		unlink(pb);
}

/* Node's content into b (emptied first), NUL-terminated. */
static void read_node(struct hfs *fs, const char *node, struct buf *b)
{
	buf_reset(b);
	assert_int_equal(hfs_read(fs, node, b), 0);
	assert_int_equal(buf_putc(b, 0), 0);
}

/* A type the walk met but no sample did (p.C here: one object, held by
 * the sampled 100) is a group of the walked GC all the same: the by-type
 * table has its row with no samples and no estimate, and its exact count
 * (it was left out when groups were made from samples alone: on a real
 * Guava program, 311 of 473 classes and 3,037 of 45,332 objects). */
static void test_walked_only_type(void **state)
{
	(void)state;
	char p[] = "/tmp/test_walked_dXXXXXX";
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	assert_int_equal(htr_write_info(w, "agent.mode", "sample"), 0);
	assert_int_equal(htr_write_info(w, "sample.interval", "512"), 0);
	struct htr_type_def a = { .id = 0, .name = "p.A", .kind = HTR_TYPE_INSTANCE, .super_id = HTR_NO_TYPE };
	struct htr_type_def c = { .id = 1, .name = "p.C", .kind = HTR_TYPE_INSTANCE, .super_id = HTR_NO_TYPE };
	assert_int_equal(htr_write_type(w, &a), 0);
	assert_int_equal(htr_write_type(w, &c), 0);
	alloc(w, 100, 0, 32, 0, 10);
	struct htr_gc_event g = { .gc = 1, .time_ns = 1000, .used = 100, .capacity = 1 << 20, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	alloc(w, 300, 1, 48, WALKED, 1005);
	struct htr_root r = { .kind = HTR_ROOT_OTHER, .object = 100 };
	assert_int_equal(htr_write_roots(w, 1, 1, &r), 0);
	struct htr_ref from100[] = { { 0, 300 } };
	assert_int_equal(htr_write_graph_object(w, 100, 1, from100), 0);
	assert_int_equal(htr_write_graph_object(w, 300, 0, NULL), 0);
	g.flags = HTR_GC_HAS_GRAPH;
	g.time_ns = 1010;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(p);
	struct buf b;
	buf_init(&b);
	read_node(fs, "/gc/001/by-type/p.C/count", &b);
	assert_string_equal((char *)b.data, "1\n");
	read_node(fs, "/gc/001/by-type/p.C/samples", &b);
	assert_string_equal((char *)b.data, "0\n");
	read_node(fs, "/gc/001/by-type/table", &b);
	/* name samples est_count est_shallow_size count shallow_size ... */
	assert_non_null(strstr((char *)b.data, "\np.C\t0\t0\t0\t1\t48\t"));
	assert_non_null(strstr((char *)b.data, "\np.A\t1\t"));
	buf_free(&b);
	hfs_close(fs);
	unlink(p);
}

/* A writer of an older minor, or a WALKED object that is not also
 * PREEXISTING, is refused: readers would count it as a sample. */
static void test_walked_refused(void **state)
{
	(void)state;
	char p[] = "/tmp/test_walked_cXXXXXX";
	make_temp(p);
	struct htr_writer *w;
	struct htr_writer_opts o = { .minor = 4 };
	assert_int_equal(htr_writer_open(&w, p, &o), 0);
	struct htr_alloc a = { .id = 1, .type = 0, .site = HTR_NO_SITE, .size = 16, .array_length = -1,
			       .flags = WALKED };
	assert_int_equal(htr_write_alloc(w, &a), -EINVAL);
	htr_writer_close(w);
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	a.flags = HTR_ALLOC_WALKED;
	assert_int_equal(htr_write_alloc(w, &a), -EINVAL);
	htr_writer_close(w);
	unlink(p);
}

/* The estimate line of gc/001/info in a sampled trace with info
 * sample.start_deaths `value` (NULL: none), into line. */
static void estimate_line(const char *value, char *line, size_t len)
{
	char p[] = "/tmp/test_walked_sXXXXXX";
	make_temp(p);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, p, NULL), 0);
	assert_int_equal(htr_write_info(w, "agent.mode", "sample"), 0);
	assert_int_equal(htr_write_info(w, "sample.interval", "512"), 0);
	if (value)
		assert_int_equal(htr_write_info(w, "sample.start_deaths", value), 0);
	struct htr_type_def a = { .id = T_A, .name = "p.A", .kind = HTR_TYPE_INSTANCE, .super_id = HTR_NO_TYPE };
	assert_int_equal(htr_write_type(w, &a), 0);
	alloc(w, 100, T_A, 32, HTR_ALLOC_PREEXISTING, 0);
	alloc(w, 200, T_A, 32, 0, 10);
	struct htr_gc_event g = { .gc = 1, .time_ns = 1000, .used = 100, .capacity = 1 << 20, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	g.time_ns = 1010;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(p);
	struct buf b;
	buf_init(&b);
	read_node(fs, "/gc/001/info", &b);
	const char *e = strstr((char *)b.data, "\nestimate\t");
	assert_non_null(e);
	const char *end = strchr(e + 1, '\n');
	assert_non_null(end);
	assert_true((size_t)(end - e) < len);
	snprintf(line, len, "%.*s", (int)(end - e - 1), e + 1);
	buf_free(&b);
	hfs_close(fs);
	unlink(p);
}

/* The agent's sample.start_deaths first-gc: the objects found at start
 * were followed to the first GC only, and the estimate line says so;
 * none: only their class mirrors were recorded; without the
 * key it says nothing of it; a value this reader does not know is not
 * taken for any. */
static void test_start_deaths_note(void **state)
{
	(void)state;
	char line[1024];
	const char *tail = "those that existed before recording for one";
	estimate_line(NULL, line, sizeof line);
	assert_non_null(strstr(line, "from 2 sampled objects"));
	assert_int_equal(strlen(line) - strlen(tail), (size_t)(strstr(line, tail) - line));
	estimate_line("first-gc", line, sizeof line);
	assert_non_null(strstr(line, "for one (their deaths recorded to the end of the first GC only)"));
	estimate_line("none", line, sizeof line);
	assert_non_null(strstr(line, "for one (of those only the class mirrors are recorded: start=none)"));
	estimate_line("every-other-gc", line, sizeof line);
	assert_non_null(strstr(line, "for one (their deaths followed as the trace's sample.start_deaths says)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_keeps_estimates),
		cmocka_unit_test(test_walked_refused),
		cmocka_unit_test(test_walked_only_type),
		cmocka_unit_test(test_start_deaths_note),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

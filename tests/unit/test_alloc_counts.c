/* test_alloc_counts.c - format 1.1's COUNT_SITE and ALLOC_COUNTS events
 * (the agent's mode=count): written, read back through the footer and,
 * without a footer, by scanning the frames; chunks of more than
 * HTR_MAX_CHUNK sites; old (1.0) traces still open.  Expected totals are
 * the sums of the deltas written, computed here. */
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
#include "model/htr_writer.h"
#include "model/trace.h"
#include "fs/tree.h"

static void gc(struct htr_writer *w, uint32_t n)
{
	struct htr_gc_event g = { n, 1000u * n, 100, 1 << 20, 0, "test", NULL, 0, 0 };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	g.time_ns += 10;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
}

enum { NS = 5000 }; /* more sites than one event holds */

/* Writes: sites 0..NS-1, counts after GC 1 (every site: i % 7), after GC 2
 * (even sites: 1), and at exit (site 3: 5).  abandon: no footer, and the
 * last batch (after the last GC end) lost with its frame. */
static void write_trace(const char *path, int abandon, int64_t *expect)
{
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	assert_int_equal(htr_write_method(w, 0, "p.C", "m", "()V", "C.java"), 0);
	for (uint32_t i = 0; i < NS; i++)
		assert_int_equal(htr_write_count_site(w, i, 0, i * 3, (int32_t)i, i % 2 ? "int[]" : "p.C"), 0);
	uint32_t *ids = malloc(NS * sizeof(*ids));
	int64_t *cnt = malloc(NS * sizeof(*cnt));
	memset(expect, 0, NS * sizeof(*expect));
	gc(w, 1);
	for (uint32_t i = 0; i < NS; i++) {
		ids[i] = i;
		cnt[i] = i % 7;
		expect[i] += cnt[i];
	}
	assert_int_equal(htr_write_alloc_counts(w, 1, HTR_COUNTS_PATHS, 100, 200, NS, ids, cnt), 0);
	uint32_t n = 0;
	for (uint32_t i = 0; i < NS; i += 2) {
		ids[n] = i;
		cnt[n++] = 1;
		expect[i] += 1;
	}
	assert_int_equal(htr_write_alloc_counts(w, 1, HTR_COUNTS_PATHS, 150, 300, n, ids, cnt), 0);
	gc(w, 2);
	/* a correction: site 2 was ahead by one */
	ids[0] = 2;
	cnt[0] = -1;
	expect[2] -= 1;
	assert_int_equal(htr_write_alloc_counts(w, 2, HTR_COUNTS_PATHS, 155, 305, 1, ids, cnt), 0);
	gc(w, 3);
	ids[0] = 3;
	cnt[0] = 5;
	assert_int_equal(htr_write_alloc_counts(w, 3, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL, 160, 310, 1, ids, cnt), 0);
	/* ids must ascend */
	if (abandon) {
		htr_writer_abandon(w);
	} else {
		expect[3] += 5;
		uint32_t bad[2] = { 4, 4 };
		int64_t one[2] = { 1, 1 };
		assert_int_equal(htr_write_alloc_counts(w, 2, 0, 0, 0, 2, bad, one), -EINVAL);
		/* the writer stays failed: close reports it, so write a fresh one */
		htr_writer_abandon(w);
		assert_int_equal(htr_writer_open(&w, path, NULL), 0);
		assert_int_equal(htr_write_method(w, 0, "p.C", "m", "()V", "C.java"), 0);
		for (uint32_t i = 0; i < NS; i++)
			assert_int_equal(htr_write_count_site(w, i, 0, i * 3, (int32_t)i, i % 2 ? "int[]" : "p.C"), 0);
		gc(w, 1);
		for (uint32_t i = 0; i < NS; i++) {
			ids[i] = i;
			cnt[i] = expect[i];
		}
		assert_int_equal(htr_write_alloc_counts(w, 1, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL, 160, 310, NS, ids, cnt),
				 0);
		assert_int_equal(htr_writer_close(w), 0);
	}
	free(ids);
	free(cnt);
}

static void check(const char *path, const int64_t *expect, int footer, uint64_t incr, uint32_t flags)
{
	struct trace *t;
	struct htr_err err;
	assert_int_equal(trace_open(&t, path, NULL, &err), 0);
	assert_int_equal(t->had_footer, footer);
	assert_true(t->has_counts);
	assert_true(t->ncount_sites >= NS && t->nsite_counts >= NS);
	for (uint32_t i = 0; i < NS; i++) {
		assert_int_equal(t->site_counts[i], expect[i]);
		assert_non_null(t->count_sites[i].type);
		assert_string_equal(t->count_sites[i].type, i % 2 ? "int[]" : "p.C");
		assert_int_equal(t->count_sites[i].bci, i * 3);
		assert_int_equal(t->count_sites[i].line, (int32_t)i);
	}
	assert_int_equal(t->count_increments, incr);
	assert_int_equal(t->count_flags, flags);
	trace_close(t);
}

static void test_counts_footer_and_scan(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-counts-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	int64_t *expect = malloc(NS * sizeof(*expect));
	write_trace(path, 0, expect);
	check(path, expect, 1, 160, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL);
	/* no footer: the frames are scanned; the batch after GC 2 is lost
	 * with the unfinished frame */
	write_trace(path, 1, expect);
	check(path, expect, 0, 155, HTR_COUNTS_PATHS);
	free(expect);
	unlink(path);
}

/* A 1.0 trace (the committed demo) opens and has no counts. */
static void test_old_trace_has_no_counts(void **state)
{
	(void)state;
	struct trace *t;
	struct htr_err err;
	if (access("examples/multicache.htr", R_OK)) {
		skip();
		return;
	}
	assert_int_equal(trace_open(&t, "examples/multicache.htr", NULL, &err), 0);
	assert_false(t->has_counts);
	assert_int_equal(t->ncount_sites, 0);
	assert_true(t->ngcs > 0);
	trace_close(t);
}

/* ---- allocs/ in the tree ---------------------------------------------- */

static char *read_file(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(fs, path, &b), 0);
	assert_int_equal(buf_putc(&b, 0), 0);
	return (char *)b.data;
}

/* A writer on a new temporary file; path (a mkstemp template) gets its name. */
static struct htr_writer *temp_writer(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	return w;
}

/* A counted trace: sites (method, bci, line, type, count) written by hand,
 * the expected files worked out by hand. */
static void test_allocs_from_counts(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-allocs-XXXXXX";
	struct htr_writer *w = temp_writer(path);
	assert_int_equal(htr_write_method(w, 0, "p.A", "run", "()V", ""), 0);
	assert_int_equal(htr_write_method(w, 1, "p.B", "<init>", "(I)V", ""), 0);
	assert_int_equal(htr_write_count_site(w, 0, 0, 3, 10, "p.X"), 0);
	assert_int_equal(htr_write_count_site(w, 1, 0, 9, 11, "int[]"), 0);
	assert_int_equal(htr_write_count_site(w, 2, 1, 0, 5, "p.X"), 0);
	uint32_t ids[3] = { 0, 1, 2 };
	int64_t c1[3] = { 4, 2, 7 }, c2[1] = { 3 };
	assert_int_equal(htr_write_alloc_counts(w, 0, HTR_COUNTS_PATHS, 10, 13, 3, ids, c1), 0);
	gc(w, 1);
	assert_int_equal(htr_write_alloc_counts(w, 1, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL, 12, 16, 1, ids, c2), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(path);
	char *s = read_file(fs, "/allocs/by-site");
	/* no COUNT_CALLERS: the caller columns are empty */
	assert_string_equal(s, "site\ttype\tcount\tbci\tdescriptor\ttop_caller\ttop_caller_count\tcallers\n"
			       "p.A.run:10\tp.X\t7\t3\t()V\t\t\t\n"
			       "p.B.<init>:5\tp.X\t7\t0\t(I)V\t\t\t\n"
			       "p.A.run:11\tint[]\t2\t9\t()V\t\t\t\n");
	free(s);
	s = read_file(fs, "/allocs/by-method");
	assert_string_equal(s, "method\tdescriptor\tcount\np.A.run\t()V\t9\np.B.<init>\t(I)V\t7\n");
	free(s);
	s = read_file(fs, "/allocs/stats");
	assert_non_null(strstr(s, "source\tcounters\n"));
	assert_non_null(strstr(s, "allocations\t16\n"));
	assert_non_null(strstr(s, "increments\t12\nper_site_increments\t16\nsaved_percent\t25.0\n"));
	/* no count.* info keys (the agent writes them at exit) */
	assert_non_null(strstr(s, "increments_kind\t\nthreads_max\t\nexact\tunknown ("));
	free(s);
	s = read_file(fs, "/allocs/by-site.csv");
	assert_non_null(strstr(s, "site,type,count,bci,descriptor,top_caller,top_caller_count,callers\n"));
	free(s);
	s = read_file(fs, "/allocs/by-method.json");
	assert_non_null(strstr(s, "\"method\": \"p.A.run\""));
	free(s);
	hfs_close(fs);
	unlink(path);
}

/* Sites are named as by-site/ names frames (sym_frame): a class without
 * line numbers (line -1) gives no line, a method without a METHOD event
 * <unknown method N>. */
static void test_allocs_site_names(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-allocs-XXXXXX";
	struct htr_writer *w = temp_writer(path);
	assert_int_equal(htr_write_method(w, 0, "p.A", "run", "()V", ""), 0);
	assert_int_equal(htr_write_count_site(w, 0, 0, 3, -1, "p.X"), 0);
	assert_int_equal(htr_write_count_site(w, 1, 5, 7, 4, "int[]"), 0);
	uint32_t ids[2] = { 0, 1 };
	int64_t c[2] = { 6, 1 };
	assert_int_equal(htr_write_alloc_counts(w, 0, HTR_COUNTS_PATHS | HTR_COUNTS_FINAL, 7, 7, 2, ids, c), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(path);
	char *s = read_file(fs, "/allocs/by-site");
	assert_string_equal(s, "site\ttype\tcount\tbci\tdescriptor\ttop_caller\ttop_caller_count\tcallers\n"
			       "p.A.run\tp.X\t6\t3\t()V\t\t\t\n"
			       "<unknown method 5>:4\tint[]\t1\t7\t\t\t\t\n");
	free(s);
	hfs_close(fs);
	unlink(path);
}

/* allocs/stats' exactness rows for a counted trace whose agent wrote the
 * given count.* keys at exit (NULL: not written). */
static char *stats_with(uint32_t flags, const char *inc, const char *exc, const char *threads, const char *uncounted,
			const char *failed)
{
	char path[] = "/tmp/heapfs-test-allocs-XXXXXX";
	struct htr_writer *w = temp_writer(path);
	assert_int_equal(htr_write_method(w, 0, "p.A", "run", "()V", ""), 0);
	assert_int_equal(htr_write_count_site(w, 0, 0, 3, 10, "p.X"), 0);
	uint32_t ids[1] = { 0 };
	int64_t c[1] = { 5 };
	gc(w, 1);
	assert_int_equal(htr_write_alloc_counts(w, 1, flags | HTR_COUNTS_FINAL, 5, 5, 1, ids, c), 0);
	if (inc)
		assert_int_equal(htr_write_info(w, "count.increments", inc), 0);
	if (exc)
		assert_int_equal(htr_write_info(w, "count.exceptions", exc), 0);
	if (threads)
		assert_int_equal(htr_write_info(w, "count.threads_max", threads), 0);
	if (uncounted)
		assert_int_equal(htr_write_info(w, "count.uncounted_methods", uncounted), 0);
	if (failed)
		assert_int_equal(htr_write_info(w, "count.failed_classes", failed), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(path);
	char *s = read_file(fs, "/allocs/stats");
	hfs_close(fs);
	unlink(path);
	char *rows = strstr(s, "increments_kind\t");
	assert_non_null(rows);
	char *out = strdup(rows);
	free(s);
	return out;
}

/* Plain increments are exact with one thread of the program alive at a
 * time, atomic ones always; path counters need exception corrections. */
static void test_stats_exactness(void **state)
{
	(void)state;
	static const struct {
		uint32_t flags;
		const char *inc, *exc, *threads, *want, *uncounted, *failed;
	} cases[] = {
		{ HTR_COUNTS_PATHS, "plain", "bytecode", "1", "increments_kind\tplain\nthreads_max\t1\nexact\tyes\n", NULL, NULL },
		{ HTR_COUNTS_PATHS, "atomic", "bytecode", "5", "increments_kind\tatomic\nthreads_max\t5\nexact\tyes\n", NULL, NULL },
		{ HTR_COUNTS_PATHS, "plain", "bytecode", "5",
		  "increments_kind\tplain\nthreads_max\t5\nexact\tnot guaranteed: 5 threads that ran instrumented code were "
		  "alive at once and increments are plain, which racing threads can lose (atomic=on is exact)\n", NULL, NULL },
		{ HTR_COUNTS_PATHS, "plain", "off", "2",
		  "increments_kind\tplain\nthreads_max\t2\nexact\tnot guaranteed: 2 threads that ran instrumented code were "
		  "alive at once and increments are plain, which racing threads can lose (atomic=on is exact); "
		  "exceptions=off: a frame an exception leaves mid-path is not corrected\n", NULL, NULL },
		{ HTR_COUNTS_PATHS, "atomic", "off", "1",
		  "increments_kind\tatomic\nthreads_max\t1\nexact\tnot guaranteed: exceptions=off: a frame an "
		  "exception leaves mid-path is not corrected\n", NULL, NULL },
		/* one counter per site: nothing to correct */
		{ 0, "plain", "sites", "1", "increments_kind\tplain\nthreads_max\t1\nexact\tyes\n", NULL, NULL },
		{ HTR_COUNTS_PATHS, "plain", NULL, "1", "increments_kind\tplain\nthreads_max\t1\nexact\tunknown (", NULL, NULL },
		/* methods or classes left uninstrumented count nothing (agents
		 * since these keys; older ones wrote none: rows empty) */
		{ HTR_COUNTS_PATHS, "plain", "bytecode", "1",
		  "increments_kind\tplain\nthreads_max\t1\nexact\tyes\nuncounted_methods\t0\nfailed_classes\t0\n", "0", "0" },
		{ HTR_COUNTS_PATHS, "plain", "bytecode", "1",
		  "increments_kind\tplain\nthreads_max\t1\nexact\tnot guaranteed: 3 methods with allocation sites were "
		  "left uninstrumented (their allocations are not counted)\nuncounted_methods\t3\nfailed_classes\t0\n",
		  "3", "0" },
		{ HTR_COUNTS_PATHS, "atomic", "bytecode", "1",
		  "increments_kind\tatomic\nthreads_max\t1\nexact\tnot guaranteed: 2 classes could not be "
		  "instrumented\nuncounted_methods\t0\nfailed_classes\t2\n", "0", "2" },
		{ HTR_COUNTS_PATHS, "plain", "bytecode", "1",
		  "increments_kind\tplain\nthreads_max\t1\nexact\tyes\nuncounted_methods\t\nfailed_classes\t\n", NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = stats_with(cases[i].flags, cases[i].inc, cases[i].exc, cases[i].threads, cases[i].uncounted,
				     cases[i].failed);
		assert_memory_equal(s, cases[i].want, strlen(cases[i].want));
		free(s);
	}
}

/* A full recording: counts come from the allocation events, by allocating
 * frame (two sites with the same frame 0 merge); PREEXISTING objects are
 * not allocations of the run. */
static void test_allocs_from_events(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-allocs-XXXXXX";
	struct htr_writer *w = temp_writer(path);
	struct htr_type_def tx = { 0, "p.X", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def ti = { 1, "int[]", HTR_TYPE_PRIM_ARRAY, 16, 4, HTR_NO_TYPE, 0, NULL };
	assert_int_equal(htr_write_type(w, &tx), 0);
	assert_int_equal(htr_write_type(w, &ti), 0);
	assert_int_equal(htr_write_method(w, 0, "p.A", "run", "()V", "A.java"), 0);
	assert_int_equal(htr_write_method(w, 1, "p.B", "go", "()V", "B.java"), 0);
	struct htr_site_frame f0[2] = { { 0, 10 }, { 1, 5 } }, f1[1] = { { 0, 10 } }, f2[1] = { { 0, 11 } };
	assert_int_equal(htr_write_site(w, 0, 2, f0), 0);
	assert_int_equal(htr_write_site(w, 1, 1, f1), 0);
	assert_int_equal(htr_write_site(w, 2, 1, f2), 0);
	uint64_t id = 100;
	struct { uint32_t site, type, n, flags; } batch[] = {
		{ 0, 0, 3, 0 }, { 1, 0, 2, 0 }, { 2, 1, 4, 0 }, { 2, 1, 1, HTR_ALLOC_PREEXISTING },
		{ HTR_NO_SITE, 0, 2, 0 }, /* recorded with depth=0: no frame */
	};
	for (size_t b = 0; b < sizeof(batch) / sizeof(batch[0]); b++)
		for (uint32_t k = 0; k < batch[b].n; k++) {
			struct htr_alloc a = { id++, batch[b].type, batch[b].site, 0, 16, batch[b].type ? 3 : -1, 10,
					       batch[b].flags };
			assert_int_equal(htr_write_alloc(w, &a), 0);
		}
	gc(w, 1);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs = fx_open_tree(path);
	char *s = read_file(fs, "/allocs/by-site");
	/* named as gc/001/by-site/ names objects without a frame */
	assert_string_equal(s, "site\ttype\tcount\tbci\tdescriptor\ttop_caller\ttop_caller_count\tcallers\n"
			       "p.A.run:10\tp.X\t5\t\t()V\t\t\t\n"
			       "p.A.run:11\tint[]\t4\t\t()V\t\t\t\n"
			       "<unknown site>\tp.X\t2\t\t\t\t\t\n");
	free(s);
	struct hfs_attr at;
	assert_int_equal(hfs_getattr(fs, "/gc/001/by-site/<unknown site>", &at), 0);
	s = read_file(fs, "/allocs/stats");
	assert_non_null(strstr(s, "source\tallocation events\n"));
	assert_non_null(strstr(s, "allocations\t11\n"));
	free(s);
	s = read_file(fs, "/allocs/by-method");
	assert_non_null(strstr(s, "\n<unknown method>\t\t2\n"));
	free(s);
	hfs_close(fs);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_footer_and_scan),
		cmocka_unit_test(test_old_trace_has_no_counts),
		cmocka_unit_test(test_allocs_from_counts),
		cmocka_unit_test(test_allocs_site_names),
		cmocka_unit_test(test_stats_exactness),
		cmocka_unit_test(test_allocs_from_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

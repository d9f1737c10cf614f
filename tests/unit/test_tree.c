/* test_tree.c - the tree library (fs/tree.h) over a small hand-built trace.
 *
 * The heap (expected values below come from this construction):
 *
 *   types  0 com.example.Node   instance 24 B, fields next (ref), value, COUNT (static)
 *          1 java.lang.Object[] object array, 16 B header, 4 B elements
 *          2 "a/b%c"            instance 16 B   (escapes to a%2Fb%25c)
 *          3 "X" x 300          instance 40 B   (name shortened)
 *          4 "count"            instance 8 B    (reserved: %63ount)
 *   threads 1 main, 2 worker/1 (escapes to worker%2F1)
 *   sites  0 [Node.<init>:10, Main.main:5], 1 [Main.main:7]
 *
 *   before GC 1: ids 1-5 Node (main, site 0), 6 Object[3] 32 B (main, site 1),
 *                7 a/b%c, 8 XXX..., 9 count (worker/1, no site)
 *   GC 1 (graph): 1.next->2, 2.next->3, 3.next->4, 6[0]->1, 6[2]->5;
 *                 roots: static Node.COUNT->1, thread main->6, local main->7
 *                 reachable {1..7}, unreachable 8, 9
 *   before GC 2: ids 10, 11 Node (worker/1, site 0)
 *   GC 2 (no graph, used unknown, cause with comma and quotes): deaths 3, 9
 *   before GC 3: id 12 Node (main, site 0)
 *   GC 3 (graph): 1.next->2, 2.next->4, 6[0]->1, 6[2]->5, 10.next->11
 *                 roots: thread main->6, local main->10
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/names.h"
#include "fs/tree.h"
#include "model/htr_writer.h"
#include "model/htr.h"

#define MS 1000000ull
#define T0 (1000 * MS)

static char g_dir[256];
static char g_path[300];
static char g_long_type[301];

struct fixture {
	struct hfs *fs;
};

/* ---- building the trace ---- */

static void alloc(struct htr_writer *w, uint64_t id, uint32_t type, uint32_t site,
		  uint64_t thread, uint64_t size, int64_t len, uint64_t t)
{
	struct htr_alloc a = { .id = id, .type = type, .site = site, .thread = thread,
			       .size = size, .array_length = len, .time_ns = t };
	assert_int_equal(htr_write_alloc(w, &a), 0);
}

static void graph_obj(struct htr_writer *w, uint64_t id, uint32_t n, const struct htr_ref *refs)
{
	assert_int_equal(htr_write_graph_object(w, id, n, refs), 0);
}

static void gc(struct htr_writer *w, uint32_t num, uint64_t start, uint64_t end,
	       uint64_t before, uint64_t after, uint32_t flags, const char *cause, int start_only)
{
	struct htr_gc_event g = { .gc = num, .time_ns = start, .used = before,
				  .capacity = UINT64_MAX, .flags = flags, .cause = cause };
	if (start_only) {
		assert_int_equal(htr_write_gc_start(w, &g), 0);
		return;
	}
	g.time_ns = end;
	g.used = after;
	g.cause = NULL;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
}

static void write_symbols(struct htr_writer *w)
{
	struct htr_field node_fields[] = {
		{ .name = "next", .sig = "Lcom/example/Node;", .flags = HTR_FIELD_REF },
		{ .name = "value", .sig = "I", .flags = 0 },
		{ .name = "COUNT", .sig = "Lcom/example/Node;", .flags = HTR_FIELD_STATIC | HTR_FIELD_REF },
	};
	struct htr_type_def types[] = {
		{ 0, "com.example.Node", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 3, node_fields },
		{ 1, "java.lang.Object[]", HTR_TYPE_OBJ_ARRAY, 16, 4, HTR_NO_TYPE, 0, NULL },
		{ 2, "a/b%c", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 0, NULL },
		{ 3, g_long_type, HTR_TYPE_INSTANCE, 40, 0, HTR_NO_TYPE, 0, NULL },
		{ 4, "count", HTR_TYPE_INSTANCE, 8, 0, HTR_NO_TYPE, 0, NULL },
	};
	assert_int_equal(htr_write_info(w, "vm.name", "TestVM"), 0);
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		assert_int_equal(htr_write_type(w, &types[i]), 0);
	assert_int_equal(htr_write_method(w, 0, "com.example.Main", "main", "([Ljava/lang/String;)V",
					  "Main.java"), 0);
	assert_int_equal(htr_write_method(w, 1, "com.example.Node", "<init>", "()V", "Node.java"), 0);
	struct htr_site_frame s0[] = { { 1, 10 }, { 0, 5 } }, s1[] = { { 0, 7 } };
	assert_int_equal(htr_write_site(w, 0, 2, s0), 0);
	assert_int_equal(htr_write_site(w, 1, 1, s1), 0);
	assert_int_equal(htr_write_thread(w, 1, "main"), 0);
	assert_int_equal(htr_write_thread(w, 2, "worker/1"), 0);
}

static void write_gc1(struct htr_writer *w)
{
	for (uint64_t id = 1; id <= 5; id++)
		alloc(w, id, 0, 0, 1, 24, -1, T0 + (id - 1) * MS);
	alloc(w, 6, 1, 1, 1, 32, 3, T0 + 5 * MS);
	alloc(w, 7, 2, HTR_NO_SITE, 2, 16, -1, T0 + 6 * MS);
	alloc(w, 8, 3, HTR_NO_SITE, 2, 40, -1, T0 + 7 * MS);
	alloc(w, 9, 4, HTR_NO_SITE, 2, 8, -1, T0 + 8 * MS);
	gc(w, 1, T0 + 500 * MS, 0, 1000, 0, HTR_GC_HAS_GRAPH, "Allocation Failure", 1);
	struct htr_root roots[] = {
		{ .kind = HTR_ROOT_STATIC, .object = 1, .type = 0, .field = 2 },
		{ .kind = HTR_ROOT_THREAD, .object = 6, .thread = 1 },
		{ .kind = HTR_ROOT_LOCAL, .object = 7, .thread = 1, .method = 0, .depth = 0, .slot = 2 },
	};
	assert_int_equal(htr_write_roots(w, 1, 3, roots), 0);
	struct htr_ref r1[] = { { 0, 2 } }, r2[] = { { 0, 3 } }, r3[] = { { 0, 4 } };
	struct htr_ref r6[] = { { 0, 1 }, { 2, 5 } };
	graph_obj(w, 1, 1, r1);
	graph_obj(w, 2, 1, r2);
	graph_obj(w, 3, 1, r3);
	graph_obj(w, 4, 0, NULL);
	graph_obj(w, 5, 0, NULL);
	graph_obj(w, 6, 2, r6);
	graph_obj(w, 7, 0, NULL);
	graph_obj(w, 8, 0, NULL);
	graph_obj(w, 9, 0, NULL);
	gc(w, 1, 0, T0 + 520 * MS, 0, 900, HTR_GC_HAS_GRAPH, NULL, 0);
}

static void write_gc2(struct htr_writer *w)
{
	alloc(w, 10, 0, 0, 2, 24, -1, T0 + 600 * MS);
	alloc(w, 11, 0, 0, 2, 24, -1, T0 + 601 * MS);
	gc(w, 2, T0 + 1000 * MS, 0, UINT64_MAX, 0, 0, "System.gc(), \"forced\"", 1);
	uint64_t dead[] = { 9, 3 };
	assert_int_equal(htr_write_deaths(w, 2, 2, dead), 0);
	/* the recorder wanted a graph here, the next GC came first; and it
	 * got this GC's deaths in one batch with GC 1's */
	gc(w, 2, 0, T0 + 1005 * MS, 0, UINT64_MAX, HTR_GC_GRAPH_DROPPED | HTR_GC_DEATHS_MERGED, NULL, 0);
}

static void write_gc3(struct htr_writer *w)
{
	alloc(w, 12, 0, 0, 1, 24, -1, T0 + 1500 * MS);
	gc(w, 3, T0 + 2000 * MS, 0, 2000, 0, HTR_GC_HAS_GRAPH, "G1 Evacuation Pause", 1);
	struct htr_root roots[] = {
		{ .kind = HTR_ROOT_THREAD, .object = 6, .thread = 1 },
		{ .kind = HTR_ROOT_LOCAL, .object = 10, .thread = 1, .method = 0, .depth = 1, .slot = 0 },
	};
	assert_int_equal(htr_write_roots(w, 3, 2, roots), 0);
	struct htr_ref r1[] = { { 0, 2 } }, r2[] = { { 0, 4 } }, r10[] = { { 0, 11 } };
	struct htr_ref r6[] = { { 0, 1 }, { 2, 5 } };
	graph_obj(w, 1, 1, r1);
	graph_obj(w, 2, 1, r2);
	graph_obj(w, 4, 0, NULL);
	graph_obj(w, 5, 0, NULL);
	graph_obj(w, 6, 2, r6);
	graph_obj(w, 7, 0, NULL);
	graph_obj(w, 8, 0, NULL);
	graph_obj(w, 10, 1, r10);
	graph_obj(w, 11, 0, NULL);
	graph_obj(w, 12, 0, NULL);
	gc(w, 3, 0, T0 + 2030 * MS, 0, 1500, HTR_GC_HAS_GRAPH, NULL, 0);
}

static void write_trace(const char *path, int ngcs, int crash)
{
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	write_symbols(w);
	write_gc1(w);
	if (ngcs >= 2)
		write_gc2(w);
	if (ngcs >= 3)
		write_gc3(w);
	if (crash) {
		/* a JVM that died in the next epoch */
		alloc(w, 100, 0, 0, 1, 24, -1, T0 + 3000 * MS);
		htr_writer_abandon(w);
		return;
	}
	assert_int_equal(htr_writer_close(w), 0);
}

static int setup(void **state)
{
	memset(g_long_type, 'X', 300);
	g_long_type[300] = '\0';
	snprintf(g_dir, sizeof g_dir, "/tmp/test_tree.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_path, sizeof g_path, "%s/t.htr", g_dir);
	write_trace(g_path, 3, 0);
	struct fixture *f = calloc(1, sizeof *f);
	struct htr_err err;
	struct hfs_opts o = { 0 };
	if (hfs_open(&f->fs, g_path, &o, &err) != 0) {
		fprintf(stderr, "hfs_open: %s\n", err.msg);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	hfs_close(f->fs);
	free(f);
	unlink(g_path);
	rmdir(g_dir);
	return 0;
}

/* ---- helpers ---- */

static char *read_file(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	int rc = hfs_read(fs, path, &b);
	if (rc) {
		fprintf(stderr, "hfs_read(%s) = %d\n", path, rc);
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, 0);
	return (char *)b.data;
}

static void expect_file(struct hfs *fs, const char *path, const char *want)
{
	char *got = read_file(fs, path);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static int list_fill(void *ctx, const char *name, const struct hfs_attr *a)
{
	struct buf *b = ctx;
	(void)a;
	buf_printf(b, "%s\n", name);
	return 0;
}

static char *list_dir(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	int rc = hfs_readdir(fs, path, list_fill, &b);
	if (rc) {
		fprintf(stderr, "hfs_readdir(%s) = %d\n", path, rc);
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, 0);
	return (char *)b.data;
}

static void expect_list(struct hfs *fs, const char *path, const char *want)
{
	char *got = list_dir(fs, path);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void expect_kind(struct hfs *fs, const char *path, enum hfs_kind kind)
{
	struct hfs_attr a;
	int rc = hfs_getattr(fs, path, &a);
	if (rc)
		fprintf(stderr, "hfs_getattr(%s) = %d\n", path, rc);
	assert_int_equal(rc, 0);
	assert_int_equal(a.kind, kind);
}

static void expect_enoent(struct hfs *fs, const char *path)
{
	struct hfs_attr a;
	assert_int_equal(hfs_getattr(fs, path, &a), -ENOENT);
}

/* The shortened directory name of the 300-byte type, found by listing. */
static void long_type_dir(struct hfs *fs, const char *gcdir, char out[NAME_BUF])
{
	char path[128];
	snprintf(path, sizeof path, "%s/by-type", gcdir);
	char *list = list_dir(fs, path);
	assert_non_null(list);
	char *p = strstr(list, "XXXXXXXX");
	assert_non_null(p);
	char *nl = strchr(p, '\n');
	assert_true(nl - p <= NAME_MAX_BYTES);
	memcpy(out, p, (size_t)(nl - p));
	out[nl - p] = '\0';
	free(list);
}

/* ---- tests ---- */

static void test_root_listing(void **state)
{
	struct fixture *f = *state;
	expect_list(f->fs, "/", "README\nstatus\ntrace\ntimeline\ngc\nroots\nds\nclassifiers\nwindows\n"
				 "groups\nsuspects\nsuspects.json\nallocs\n");
	expect_list(f->fs, "/gc", "latest\n001\n002\n003\n");
	expect_kind(f->fs, "/gc/latest", HFS_LINK);
	expect_kind(f->fs, "/roots", HFS_LINK);
	char target[64];
	assert_int_equal(hfs_readlink(f->fs, "/gc/latest", target, sizeof target), 0);
	assert_string_equal(target, "003");
	assert_int_equal(hfs_readlink(f->fs, "/roots", target, sizeof target), 0);
	assert_string_equal(target, "gc/latest/roots");
	expect_list(f->fs, "/trace", "info\n");
	expect_list(f->fs, "/timeline", "gcs.csv\nmemory.svg\n");
}

static void test_gc_names_canonical_only(void **state)
{
	struct fixture *f = *state;
	expect_kind(f->fs, "/gc/001", HFS_DIR);
	expect_enoent(f->fs, "/gc/1");
	expect_enoent(f->fs, "/gc/01");
	expect_enoent(f->fs, "/gc/0001");
	expect_enoent(f->fs, "/gc/004");
	expect_enoent(f->fs, "/gc/000");
	struct hfs_attr a;
	assert_int_equal(hfs_getattr(f->fs, "/gc/001/info/x", &a), -ENOTDIR);
}

/* The steps a group offers (analyses/classify.c's registry order); the graph
 * ones only at GCs with a graph. */
#define STEPS_AFTER_TYPE "by-package\nby-site\nby-thread\nby-age\nby-kind\nby-array-length\n" \
	"by-size\nby-birth\nonly-arrays\nonly-instances\n"
#define STEPS_GRAPH "only-reachable\nonly-unreachable\nby-collection-health\n" \
	"by-instance-health\nby-role\nby-ds\nby-root\nby-root-var\nby-indirect-root\n" \
	"by-indirect-root-var\nby-first-root\npoints-to\npointed-from\nclosure\n"
/* closure metrics and bottom-up files of a group with a graph */
#define CLOSURE_FILES "deep_count\ndeep_size\nretained_count\nretained_size\n"

static void test_gc_dir_listing(void **state)
{
	struct fixture *f = *state;
	expect_list(f->fs, "/gc/001", "info\ncount\nshallow_size\nsummary\nobjects\nroots\nds\ndiff\n"
				      CLOSURE_FILES "paths\ndominators\nthreads\n"
				      "by-type\n" STEPS_AFTER_TYPE STEPS_GRAPH);
	/* GC 2 has no graph: no roots/, no graph classifiers or transformers */
	expect_list(f->fs, "/gc/002", "info\ncount\nshallow_size\nsummary\nobjects\ndiff\n"
				      "by-type\n" STEPS_AFTER_TYPE);
	expect_kind(f->fs, "/gc/001/objects", HFS_DIR);
	expect_list(f->fs, "/gc/001/objects", "all\n");
}

static void test_paths_relative_and_links(void **state)
{
	struct fixture *f = *state;
	struct hfs_attr a, b, c;
	assert_int_equal(hfs_getattr(f->fs, "gc/003/info", &a), 0);
	assert_int_equal(hfs_getattr(f->fs, "/gc/003/info", &b), 0);
	assert_int_equal(hfs_getattr(f->fs, "/gc/latest/info", &c), 0);
	assert_int_equal(a.ino, b.ino);
	assert_int_equal(a.ino, c.ino);
	assert_int_equal(hfs_getattr(f->fs, "//gc/./003/../003/info/", &c), 0);
	assert_int_equal(a.ino, c.ino);
	/* /roots -> gc/latest/roots -> gc/003/roots */
	expect_list(f->fs, "/roots", "table\nlocal\nthread\n");
}

static void test_inodes(void **state)
{
	struct fixture *f = *state;
	const char *paths[] = { "/", "/README", "/gc", "/gc/001", "/gc/002", "/gc/001/info",
				"/gc/002/info", "/gc/001/by-type", "/gc/001/count", "/gc/latest" };
	uint64_t ino[10];
	for (int i = 0; i < 10; i++) {
		struct hfs_attr a, b;
		assert_int_equal(hfs_getattr(f->fs, paths[i], &a), 0);
		assert_int_equal(hfs_getattr(f->fs, paths[i], &b), 0);
		assert_int_equal(a.ino, b.ino);
		assert_true(a.ino > 1);
		ino[i] = a.ino;
		for (int j = 0; j < i; j++)
			assert_true(ino[j] != ino[i]);
	}
}

static void test_getattr_does_not_build(void **state)
{
	/* A fresh tree: no state has been built yet. */
	(void)state;
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, g_path, &o, &err), 0);
	struct hfs_attr a;
	const char *files[] = { "/gc/001/info", "/gc/001/count", "/gc/001/summary",
				"/gc/001/shallow_size", "/gc/002/objects/all" };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(hfs_getattr(fs, files[i], &a), 0);
		assert_int_equal(a.kind, HFS_FILE);
		assert_int_equal(a.size_exact, 0);
		assert_int_equal(a.size, 0);
	}
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_readdir(fs, "/gc/001", list_fill, &b), 0);
	buf_putc(&b, 0);
	char *st = read_file(fs, "/status");
	assert_non_null(st);
	assert_non_null(strstr(st, "state_builds\t0\n"));
	free(st);
	/* After a read the size is exact. */
	char *cnt = read_file(fs, "/gc/001/count");
	assert_string_equal(cnt, "9\n");
	free(cnt);
	assert_int_equal(hfs_getattr(fs, "/gc/001/count", &a), 0);
	assert_int_equal(a.size_exact, 1);
	assert_int_equal(a.size, 2);
	/* Cheap files always have exact sizes. */
	assert_int_equal(hfs_getattr(fs, "/README", &a), 0);
	assert_int_equal(a.size_exact, 1);
	assert_true(a.size > 100);
	buf_free(&b);
	hfs_close(fs);
}

static void test_gcs_csv(void **state)
{
	struct fixture *f = *state;
	expect_file(f->fs, "/timeline/gcs.csv",
		    "gc,start_ms,end_ms,pause_ms,cause,used_before,used_after,reachable,freed,allocated\n"
		    /* reachable at graph GCs: GC 1 {1..7} = 5*24+32+16, GC 3
		     * {6,1,5,2,4,10,11} = 6*24+32 */
		    "1,500,520,20,Allocation Failure,1000,900,168,100,216\n"
		    "2,1000,1005,5,\"System.gc(), \"\"forced\"\"\",,,,,48\n"
		    "3,2000,2030,30,G1 Evacuation Pause,2000,1500,176,500,24\n");
}

static void test_trace_info(void **state)
{
	struct fixture *f = *state;
	char *s = read_file(f->fs, "/trace/info");
	assert_non_null(s);
	char ver[64]; /* the fixture was written by this build's writer */
	snprintf(ver, sizeof ver, "format_version\t%d.%d\n", HTR_VERSION_MAJOR, HTR_VERSION_MINOR);
	assert_non_null(strstr(s, ver));
	assert_non_null(strstr(s, "footer\tyes\n"));
	assert_non_null(strstr(s, "truncated\tno\n"));
	assert_non_null(strstr(s, "\ngcs\t3\n"));
	/* GCs 1 and 3 carry a graph; 2's was dropped (write_gc1 and after) */
	assert_non_null(strstr(s, "\ngraph_gcs\t2\n"));
	assert_non_null(strstr(s, "\ngraph_dropped_gcs\t1\n"));
	assert_non_null(strstr(s, "\ndeaths_merged_gcs\t1\n"));
	assert_non_null(strstr(s, "allocations\t12\n"));
	assert_non_null(strstr(s, "alloc_bytes\t288\n"));
	assert_non_null(strstr(s, "deaths\t2\n"));
	assert_non_null(strstr(s, "types\t5\n"));
	assert_non_null(strstr(s, "threads\t2\n"));
	assert_non_null(strstr(s, "vm.name\tTestVM\n"));
	/* first event at T0 (the first allocation), last at T0 + 2030 ms */
	assert_non_null(strstr(s, "duration_ms\t2030\n"));
	free(s);
}

static void test_gc_info(void **state)
{
	struct fixture *f = *state;
	char *s = read_file(f->fs, "/gc/001/info");
	assert_non_null(s);
	assert_non_null(strstr(s, "gc\t1\n"));
	assert_non_null(strstr(s, "time_ms\t500\n"));
	assert_non_null(strstr(s, "pause_ms\t20\n"));
	assert_non_null(strstr(s, "cause\tAllocation Failure\n"));
	assert_non_null(strstr(s, "objects\t9\n"));
	assert_non_null(strstr(s, "bytes\t216\n"));
	assert_non_null(strstr(s, "reachable_objects\t7\n"));
	assert_non_null(strstr(s, "reachable_bytes\t168\n"));
	assert_non_null(strstr(s, "graph\tyes\n"));
	assert_non_null(strstr(s, "graph_dropped\tno\n"));
	assert_non_null(strstr(s, "deaths_merged\tno\n"));
	free(s);
	s = read_file(f->fs, "/gc/002/info");
	assert_non_null(s);
	assert_non_null(strstr(s, "objects\t9\n"));
	assert_non_null(strstr(s, "bytes\t232\n"));
	assert_non_null(strstr(s, "graph\tno\n"));
	assert_non_null(strstr(s, "graph_dropped\tyes\n"));
	assert_non_null(strstr(s, "deaths_merged\tyes\n"));
	assert_non_null(strstr(s, "reachable_objects\t\n"));
	assert_non_null(strstr(s, "used_after\t\n"));
	free(s);
}

static void test_by_type_table(void **state)
{
	struct fixture *f = *state;
	char lname[NAME_BUF], want[1024];
	long_type_dir(f->fs, "/gc/001", lname);
	snprintf(want, sizeof want,
		 "name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count\tretained_size\n"
		 "com.example.Node\t5\t120\t5\t120\t5\t120\n"
		 "java.lang.Object[]\t1\t32\t6\t152\t2\t56\n" /* 6 -> 1..4 (1 is rooted), 5 */
		 "%s\t1\t40\t1\t40\t1\t40\n"
		 "a%%2Fb%%25c\t1\t16\t1\t16\t1\t16\n"
		 "%%63ount\t1\t8\t1\t8\t1\t8\n", lname);
	expect_file(f->fs, "/gc/001/by-type/table", want);
	snprintf(want, sizeof want,
		 "name,count,shallow_size,deep_count,deep_size,retained_count,retained_size\n"
		 "com.example.Node,5,120,5,120,5,120\n"
		 "java.lang.Object[],1,32,6,152,2,56\n"
		 "%s,1,40,1,40,1,40\n"
		 "a%%2Fb%%25c,1,16,1,16,1,16\n"
		 "%%63ount,1,8,1,8,1,8\n", lname);
	expect_file(f->fs, "/gc/001/by-type/table.csv", want);
	char *json = read_file(f->fs, "/gc/001/by-type/table.json");
	assert_non_null(json);
	assert_non_null(strstr(json, "{\"name\": \"com.example.Node\", \"count\": 5, \"shallow_size\": 120, "
				     "\"deep_count\": 5, \"deep_size\": 120, \"retained_count\": 5, "
				     "\"retained_size\": 120}"));
	assert_int_equal(json[0], '[');
	free(json);
	/* GC 2: two more Nodes, 3 and 9 died */
	long_type_dir(f->fs, "/gc/002", lname);
	snprintf(want, sizeof want,
		 "name\tcount\tshallow_size\n"
		 "com.example.Node\t6\t144\n"
		 "%s\t1\t40\n"
		 "java.lang.Object[]\t1\t32\n"
		 "a%%2Fb%%25c\t1\t16\n", lname);
	expect_file(f->fs, "/gc/002/by-type/table", want);
}

static void test_by_type_groups(void **state)
{
	struct fixture *f = *state;
	char lname[NAME_BUF], path[512];
	long_type_dir(f->fs, "/gc/001", lname);
	char *list = list_dir(f->fs, "/gc/001/by-type");
	assert_non_null(list);
	assert_non_null(strstr(list, "table\ntable.csv\ntable.json\n"));
	assert_non_null(strstr(list, "\ncom.example.Node\n"));
	assert_non_null(strstr(list, "\na%2Fb%25c\n"));
	assert_non_null(strstr(list, "\n%63ount\n"));
	free(list);
	expect_file(f->fs, "/gc/001/by-type/com.example.Node/count", "5\n");
	expect_file(f->fs, "/gc/001/by-type/com.example.Node/shallow_size", "120\n");
	expect_file(f->fs, "/gc/001/by-type/com.example.Node/objects", "1\n2\n3\n4\n5\n");
	expect_file(f->fs, "/gc/001/by-type/a%2Fb%25c/objects", "7\n");
	expect_file(f->fs, "/gc/001/by-type/%63ount/count", "1\n");
	snprintf(path, sizeof path, "/gc/001/by-type/%s/shallow_size", lname);
	expect_file(f->fs, path, "40\n");
	expect_list(f->fs, "/gc/001/by-type/com.example.Node",
		    "count\nshallow_size\nsummary\nobjects\n" CLOSURE_FILES "roots\npaths\n"
		    STEPS_AFTER_TYPE STEPS_GRAPH);
	expect_file(f->fs, "/gc/001/by-type/com.example.Node/summary",
		    "gc\t001\ngroup\tby-type/com.example.Node\ncount\t5\nshallow_size\t120\n"
		    "deep_count\t5\ndeep_size\t120\nretained_count\t5\nretained_size\t120\n");
	/* a chain never repeats a classifier */
	expect_enoent(f->fs, "/gc/001/by-type/com.example.Node/by-type");
	/* only the canonical escaped spelling resolves */
	expect_enoent(f->fs, "/gc/001/by-type/count");
	expect_enoent(f->fs, "/gc/001/by-type/a%2fb%25c");
	/* a type with no objects at this GC has no directory */
	expect_enoent(f->fs, "/gc/002/by-type/%63ount");
	expect_file(f->fs, "/gc/001/objects/all", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
	expect_file(f->fs, "/gc/002/objects/all", "1\n2\n4\n5\n6\n7\n8\n10\n11\n");
	expect_file(f->fs, "/gc/003/count", "10\n");
	expect_file(f->fs, "/gc/003/shallow_size", "256\n");
}

static void test_multilevel(void **state)
{
	struct fixture *f = *state;
	expect_file(f->fs, "/gc/001/by-thread/table",
		    "name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count\tretained_size\n"
		    "main\t6\t152\t6\t152\t6\t152\nworker%2F1\t3\t64\t3\t64\t3\t64\n");
	expect_file(f->fs, "/gc/002/by-type/com.example.Node/by-thread/table",
		    "name\tcount\tshallow_size\nmain\t4\t96\nworker%2F1\t2\t48\n");
	expect_file(f->fs, "/gc/002/by-type/com.example.Node/by-thread/worker%2F1/objects",
		    "10\n11\n");
	/* listings offer no further steps at depth 2 (they still resolve) */
	expect_list(f->fs, "/gc/002/by-type/com.example.Node/by-thread/worker%2F1",
		    "count\nshallow_size\nsummary\nobjects\n");
	expect_file(f->fs, "/gc/002/by-type/com.example.Node/by-thread/worker%2F1/by-site/table",
		    "name\tcount\tshallow_size\ncom.example.Node.<init>:10\t2\t48\n");
	expect_file(f->fs, "/gc/001/by-site/table",
		    "name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count\tretained_size\n"
		    "com.example.Node.<init>:10\t5\t120\t5\t120\t5\t120\n"
		    "<unknown site>\t3\t64\t3\t64\t3\t64\n"
		    "com.example.Main.main:7\t1\t32\t6\t152\t2\t56\n");
	expect_file(f->fs, "/gc/003/by-site/com.example.Node.<init>:10/by-thread/main/objects",
		    "1\n2\n4\n5\n12\n");
}

static void test_objects(void **state)
{
	struct fixture *f = *state;
	expect_list(f->fs, "/gc/001/objects/1",
		    "info\nrefs\nreferrers\nretained_size\ndominator\npath-to-root\n");
	/* 1 is rooted (static) and alone holds 2, 3, 4 */
	expect_file(f->fs, "/gc/001/objects/1/retained_size", "96\n");
	expect_file(f->fs, "/gc/001/objects/1/dominator", "roots\n");
	expect_file(f->fs, "/gc/001/objects/3/dominator", "2\n");
	expect_file(f->fs, "/gc/001/objects/8/dominator", "unreachable\n");
	expect_file(f->fs, "/gc/001/objects/4/path-to-root",
		    "id\ttype\tvia\n1\tcom.example.Node\tstatic com.example.Node.COUNT\n"
		    "2\tcom.example.Node\tnext\n3\tcom.example.Node\tnext\n4\tcom.example.Node\tnext\n");
	expect_file(f->fs, "/gc/001/objects/1/refs",
		    "field\ttarget_id\ttarget_type\nnext\t2\tcom.example.Node\n");
	expect_file(f->fs, "/gc/001/objects/6/refs",
		    "field\ttarget_id\ttarget_type\n[0]\t1\tcom.example.Node\n[2]\t5\tcom.example.Node\n");
	expect_file(f->fs, "/gc/001/objects/1/referrers",
		    "source_id\tsource_type\tfield\n6\tjava.lang.Object[]\t[0]\n");
	expect_file(f->fs, "/gc/001/objects/4/referrers",
		    "source_id\tsource_type\tfield\n3\tcom.example.Node\tnext\n");
	expect_file(f->fs, "/gc/003/objects/4/referrers",
		    "source_id\tsource_type\tfield\n2\tcom.example.Node\tnext\n");
	char *s = read_file(f->fs, "/gc/001/objects/6/info");
	assert_non_null(s);
	assert_non_null(strstr(s, "id\t6\n"));
	assert_non_null(strstr(s, "type\tjava.lang.Object[]\n"));
	assert_non_null(strstr(s, "size\t32\n"));
	assert_non_null(strstr(s, "array_length\t3\n"));
	assert_non_null(strstr(s, "site\tcom.example.Main.main:7\n"));
	assert_non_null(strstr(s, "thread\tmain\n"));
	assert_non_null(strstr(s, "reachable\tyes\n"));
	assert_non_null(strstr(s, "out_degree\t2\n"));
	assert_non_null(strstr(s, "in_degree\t0\n"));
	free(s);
	s = read_file(f->fs, "/gc/001/objects/9/info");
	assert_non_null(s);
	assert_non_null(strstr(s, "reachable\tno\n"));
	assert_non_null(strstr(s, "thread\tworker/1\n"));
	free(s);
	s = read_file(f->fs, "/gc/001/objects/1/info");
	assert_non_null(s);
	assert_non_null(strstr(s, "site_frames\tcom.example.Node.<init>:10 <- com.example.Main.main:5\n"));
	free(s);
	/* GC 2 has no graph: info only */
	expect_list(f->fs, "/gc/002/objects/10", "info\n");
	expect_enoent(f->fs, "/gc/002/objects/10/refs");
	/* dead, unknown and non-canonical ids */
	expect_enoent(f->fs, "/gc/002/objects/3");
	expect_enoent(f->fs, "/gc/001/objects/999");
	expect_enoent(f->fs, "/gc/001/objects/01");
	expect_enoent(f->fs, "/gc/001/objects/abc");
}

static void test_roots_table(void **state)
{
	struct fixture *f = *state;
	expect_file(f->fs, "/gc/001/roots/table",
		    "kind\tobject\ttype\tdetail\tretained_size\n"
		    "static\t1\tcom.example.Node\tcom.example.Node.COUNT\t96\n"
		    "thread\t6\tjava.lang.Object[]\tmain\t56\n"
		    "local\t7\ta/b%c\tmain #0 com.example.Main.main slot 2\t16\n");
	expect_enoent(f->fs, "/gc/002/roots");
}

static void test_errors(void **state)
{
	struct fixture *f = *state;
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(f->fs, "/gc", &b), -EISDIR);
	assert_int_equal(hfs_read(f->fs, "/nope", &b), -ENOENT);
	assert_int_equal(hfs_readdir(f->fs, "/README", list_fill, &b), -ENOTDIR);
	char t[8];
	assert_int_equal(hfs_readlink(f->fs, "/README", t, sizeof t), -EINVAL);
	/* reading through a link works like a shell */
	assert_int_equal(hfs_read(f->fs, "/gc/latest/count", &b), 0);
	buf_free(&b);
}

static void test_readme_documents_escaping(void **state)
{
	struct fixture *f = *state;
	char *s = read_file(f->fs, "/README");
	assert_non_null(s);
	assert_non_null(strstr(s, "%2F"));
	assert_non_null(strstr(s, "%63ount"));
	assert_non_null(strstr(s, "%~"));
	assert_non_null(strstr(s, "by-type"));
	free(s);
}

/* Every directory reachable by walking is listed and resolves; the walk
 * ends (no infinite chains).  Breadth-first with a queue of paths. */
struct walk {
	char (*queue)[1024];
	int n, cap;
	const char *dir;
};

static int walk_fill(void *ctx, const char *name, const struct hfs_attr *a)
{
	struct walk *w = ctx;
	if (a->kind == HFS_DIR && w->n < w->cap)
		snprintf(w->queue[w->n++], 1024, "%s/%s", w->dir, name);
	return 0;
}

static void test_walk_terminates(void **state)
{
	struct fixture *f = *state;
	struct walk w = { calloc(20000, 1024), 0, 20000, NULL };
	strcpy(w.queue[w.n++], "/gc/001");
	int head = 0;
	while (head < w.n) {
		w.dir = w.queue[head++];
		assert_int_equal(hfs_readdir(f->fs, w.dir, walk_fill, &w), 0);
	}
	assert_true(w.n < w.cap);
	/* by-type (5 types) x by-site x by-thread levels: well over 20 dirs */
	assert_true(w.n > 20);
	free(w.queue);
}

struct reader_arg {
	struct hfs *fs;
	const char *path;
	char *out;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;
	a->out = read_file(a->fs, a->path);
	return NULL;
}

static void test_concurrent_readers(void **state)
{
	(void)state;
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, g_path, &o, &err), 0);
	pthread_t th[8];
	struct reader_arg args[8];
	for (int i = 0; i < 8; i++) {
		args[i] = (struct reader_arg){ fs, i % 2 ? "/gc/003/by-type/table" : "/gc/003/info", NULL };
		assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 8; i++) {
		assert_non_null(args[i].out);
		assert_string_equal(args[i].out, args[i % 2].out);
	}
	for (int i = 0; i < 8; i++)
		free(args[i].out);
	char *st = read_file(fs, "/status");
	assert_non_null(strstr(st, "state_builds\t1\n"));
	free(st);
	hfs_close(fs);
}

static void test_truncated_trace(void **state)
{
	(void)state;
	char path[320];
	snprintf(path, sizeof path, "%s/crash.htr", g_dir);
	write_trace(path, 2, 1);
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, path, &o, &err), 0);
	expect_list(fs, "/gc", "latest\n001\n002\n");
	char *s = read_file(fs, "/status");
	assert_non_null(s);
	assert_non_null(strstr(s, "truncated\tyes\n"));
	free(s);
	s = read_file(fs, "/trace/info");
	assert_non_null(strstr(s, "footer\tno\n"));
	free(s);
	expect_file(fs, "/gc/002/count", "9\n");
	/* the latest GC has no graph: no roots link */
	expect_list(fs, "/", "README\nstatus\ntrace\ntimeline\ngc\nclassifiers\nwindows\ngroups\nsuspects\nsuspects.json\nallocs\n");
	hfs_close(fs);
	unlink(path);
}

/* Two classes of one name (two class loaders) and two threads of one
 * name: the later ones get %#2, every directory resolves to its own group. */
static void test_duplicate_names(void **state)
{
	(void)state;
	char path[320];
	snprintf(path, sizeof path, "%s/dup.htr", g_dir);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	struct htr_type_def a = { 0, "Dup", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 0, NULL };
	struct htr_type_def b = { 1, "Dup", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 0, NULL };
	assert_int_equal(htr_write_type(w, &a), 0);
	assert_int_equal(htr_write_type(w, &b), 0);
	assert_int_equal(htr_write_thread(w, 1, "t"), 0);
	assert_int_equal(htr_write_thread(w, 2, "t"), 0);
	alloc(w, 1, 0, HTR_NO_SITE, 1, 16, -1, T0);
	alloc(w, 2, 1, HTR_NO_SITE, 2, 24, -1, T0);
	alloc(w, 3, 1, HTR_NO_SITE, 2, 24, -1, T0);
	gc(w, 7, T0 + MS, 0, UINT64_MAX, 0, HTR_GC_HAS_GRAPH, NULL, 1);
	/* 1 (the first Dup) -> 2 (the second), 2 -> 3: each references a Dup */
	struct htr_ref r1[] = { { 0, 2 } }, r2[] = { { 0, 3 } };
	graph_obj(w, 1, 1, r1);
	graph_obj(w, 2, 1, r2);
	graph_obj(w, 3, 0, NULL);
	gc(w, 7, 0, T0 + 2 * MS, 0, UINT64_MAX, HTR_GC_HAS_GRAPH, NULL, 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, path, &o, &err), 0);
	/* with the graph, deep sizes: 1 reaches all three (16 + 24 + 24), 2 and 3 themselves */
	expect_file(fs, "/gc/007/by-type/table",
		    "name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count\tretained_size\n"
		    "Dup\t1\t16\t3\t64\t3\t64\nDup%#2\t2\t48\t2\t48\t2\t48\n");
	expect_file(fs, "/gc/007/by-type/Dup/objects", "1\n");
	expect_file(fs, "/gc/007/by-type/Dup%#2/objects", "2\n3\n");
	expect_file(fs, "/gc/007/by-thread/t%#2/count", "2\n");
	/* type names compare as names: object 1's referee is a Dup too, though
	 * of the other class, so 1 and 2 are entries, 3 (no referee) contained */
	char msg[200];
	const char *self = "type in referee_types";
	assert_int_equal(hfs_write_file(fs, "/classifiers/self", self, strlen(self), msg, sizeof msg), 0);
	expect_file(fs, "/gc/007/only-self/objects", "1\n2\n");
	expect_file(fs, "/gc/007/by-collection-health/entry/objects", "1\n2\n");
	expect_file(fs, "/gc/007/by-collection-health/contained/objects", "3\n");
	expect_file(fs, "/timeline/gcs.csv",
		    "gc,start_ms,end_ms,pause_ms,cause,used_before,used_after,reachable,freed,allocated\n"
		    "7,1,2,1,,,,0,,64\n"); /* a graph without roots: nothing reachable */
	hfs_close(fs);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_listing),
		cmocka_unit_test(test_gc_names_canonical_only),
		cmocka_unit_test(test_gc_dir_listing),
		cmocka_unit_test(test_paths_relative_and_links),
		cmocka_unit_test(test_inodes),
		cmocka_unit_test(test_getattr_does_not_build),
		cmocka_unit_test(test_gcs_csv),
		cmocka_unit_test(test_trace_info),
		cmocka_unit_test(test_gc_info),
		cmocka_unit_test(test_by_type_table),
		cmocka_unit_test(test_by_type_groups),
		cmocka_unit_test(test_multilevel),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_roots_table),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_readme_documents_escaping),
		cmocka_unit_test(test_walk_terminates),
		cmocka_unit_test(test_concurrent_readers),
		cmocka_unit_test(test_truncated_trace),
		cmocka_unit_test(test_duplicate_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

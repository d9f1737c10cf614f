/* test_classify.c - classifiers, chains, filters, transformers, features,
 * user-defined classifiers and the heap diff, through the tree library on
 * synthetic scenarios (model/synth_*.c).  Expected values come from the
 * scenarios' construction:
 *
 * buggystack -n 1000 -g 10: N = 1000 first-round pushes (site
 *   BuggyMain.main:43), M = 100 second-round pushes (main:137) that
 *   overwrite slots 0..99; 2N + 2M = 2200 operations, GC k after operation
 *   220 k.  At GC 10: 900 + 100 TestObjects live, all referenced from the
 *   one live Object[] (capacity 16 -> 33 -> ... -> 1087), referenced from
 *   the one BuggyStack.  At GC 5 (after op 1100): all 1000 first-round
 *   objects and the same Object[] of 1087 slots.
 * multicache -n 100 -g 4: GC k holds the first 25 k Products, all
 *   allocated at Loader.load:30 <- Loader.run:22 <- Thread.run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/expr.h"
#include "analyses/features.h"
#include "fs/tree.h"
#include "model/synth.h"
#include "fixture_state.h"
#include "tests/xorshift.h"

static char g_dir[64], g_bs[128], g_mc[128], g_feat[128];

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof g_dir, "/tmp/test_classify.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_bs, sizeof g_bs, "%s/bs.htr", g_dir);
	snprintf(g_mc, sizeof g_mc, "%s/mc.htr", g_dir);
	snprintf(g_feat, sizeof g_feat, "%s/features", g_dir);
	fx_synth_trace("buggystack", 1000, 10, g_bs);
	fx_synth_trace("multicache", 100, 4, g_mc);
	FILE *f = fopen(g_feat, "w");
	if (!f)
		return -1;
	/* Loader.load is in both features; the caches' puts only in caching */
	fputs("# features\nloading example.multicache.Loader.load\n"
	      "caching example.multicache.*Cache.put example.multicache.Loader.load # both\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_bs);
	unlink(g_mc);
	unlink(g_feat);
	rmdir(g_dir);
	return 0;
}

static struct hfs *open_tree(const char *path, const char *features)
{
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { .features = features };
	memset(&err, 0, sizeof err);
	int rc = hfs_open(&fs, path, &o, &err);
	if (rc)
		fprintf(stderr, "hfs_open: %s\n", err.msg);
	assert_int_equal(rc, 0);
	return fs;
}

static char *read_path(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	int rc = hfs_read(fs, path, &b);
	if (rc)
		fprintf(stderr, "read %s: %d\n", path, rc);
	assert_int_equal(rc, 0);
	assert_int_equal(buf_putc(&b, 0), 0);
	return (char *)b.data;
}

/* Drops the closure columns (deep_*, retained_*: the gc-roots paper's) from a table,
 * so that these expectations stay about classification. */
static int closure_column(const char *name, size_t len)
{
	return (len >= 5 && !strncmp(name, "deep_", 5)) || (len >= 9 && !strncmp(name, "retained_", 9));
}

static void drop_closure_columns(char *s)
{
	uint64_t drop = 0; /* bit k: drop column k (from the header) */
	char *w = s;
	int header = 1;
	for (char *line = s; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *f = line;
		int col = 0, first = 1;
		while (f <= line + len) {
			char *tab = memchr(f, '\t', (size_t)(line + len - f));
			size_t flen = tab ? (size_t)(tab - f) : (size_t)(line + len - f);
			if (header && col < 64 && closure_column(f, flen))
				drop |= 1ull << col;
			if (col >= 64 || !(drop >> col & 1)) {
				if (!first)
					*w++ = '\t';
				memmove(w, f, flen);
				w += flen;
				first = 0;
			}
			col++;
			if (!tab)
				break;
			f = tab + 1;
		}
		header = 0;
		if (!nl)
			break;
		*w++ = '\n';
		line = nl + 1;
	}
	*w = '\0';
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static void expect_file(struct hfs *fs, const char *path, const char *want)
{
	char *got = read_path(fs, path);
	if (ends_with(path, "/table"))
		drop_closure_columns(got);
	assert_string_equal(got, want);
	free(got);
}

static int has_entry_fill(void *ctx, const char *name, const struct hfs_attr *a)
{
	(void)a;
	const char **want = ctx;
	if (*want && !strcmp(name, *want))
		*want = NULL;
	return 0;
}

static int has_entry(struct hfs *fs, const char *dir, const char *name)
{
	const char *want = name;
	assert_int_equal(hfs_readdir(fs, dir, has_entry_fill, &want), 0);
	return want == NULL;
}

#define FIG15 "/gc/010/by-type/example.buggystack.TestObject/pointed-from/by-type/" \
	"java.lang.Object[]/pointed-from/by-type"

static void test_figure15_path(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_bs, NULL);
	expect_file(fs, "/gc/010/by-type/example.buggystack.TestObject/count", "1000\n");
	expect_file(fs, "/gc/010/by-type/example.buggystack.TestObject/pointed-from/by-type/table",
		    "name\tcount\tshallow_size\njava.lang.Object[]\t1\t4368\n");
	expect_file(fs, FIG15 "/table", "name\tcount\tshallow_size\nexample.buggystack.BuggyStack\t1\t24\n");
	expect_file(fs, FIG15 "/example.buggystack.BuggyStack/count", "1\n");
	/* and back: what the stack's array points to is the 1000 TestObjects */
	expect_file(fs, "/gc/010/by-type/example.buggystack.BuggyStack/points-to/points-to/by-type/table",
		    "name\tcount\tshallow_size\nexample.buggystack.TestObject\t1000\t16000\n");
	hfs_close(fs);
}

static void test_sites_nest_callers(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_bs, NULL);
	expect_file(fs, "/gc/010/by-type/example.buggystack.TestObject/by-site/table",
		    "name\tcount\tshallow_size\n"
		    "example.buggystack.BuggyMain.main:43\t900\t14400\n"
		    "example.buggystack.BuggyMain.main:137\t100\t1600\n");
	/* the grown array: copyOf:3513 <- copyOf:3482 <- ensureCapacity:27 <- push:16 <- main:43 */
	const char *lvl = "/gc/010/by-site/java.util.Arrays.copyOf:3513/java.util.Arrays.copyOf:3482/"
			  "example.buggystack.BuggyStack.ensureCapacity:27";
	char path[512];
	snprintf(path, sizeof path, "%s/table", lvl);
	expect_file(fs, path, "name\tcount\tshallow_size\nexample.buggystack.BuggyStack.push:16\t1\t4368\n");
	/* the next classifier starts at any level */
	snprintf(path, sizeof path, "%s/by-type/table", lvl);
	expect_file(fs, path, "name\tcount\tshallow_size\njava.lang.Object[]\t1\t4368\n");
	hfs_close(fs);
}

static void test_multicache_sites(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc, NULL);
	const char *p = "/gc/004/by-type/example.multicache.Product/by-site";
	char path[512];
	snprintf(path, sizeof path, "%s/table", p);
	expect_file(fs, path, "name\tcount\tshallow_size\nexample.multicache.Loader.load:30\t100\t3200\n");
	snprintf(path, sizeof path, "%s/example.multicache.Loader.load:30/example.multicache.Loader.run:22/count", p);
	expect_file(fs, path, "100\n");
	/* GC 1 sees the first 25 */
	expect_file(fs, "/gc/001/by-type/example.multicache.Product/count", "25\n");
	hfs_close(fs);
}

static void test_features_count_once(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc, g_feat);
	const char *p = "/gc/004/by-type/example.multicache.Product";
	char path[512];
	snprintf(path, sizeof path, "%s/by-feature/loading/count", p);
	expect_file(fs, path, "100\n");
	snprintf(path, sizeof path, "%s/by-feature/caching/count", p);
	expect_file(fs, path, "100\n");
	/* the parent counts each Product once, not 200 */
	snprintf(path, sizeof path, "%s/count", p);
	expect_file(fs, path, "100\n");
	/* and below a one-to-many level the chain goes on */
	snprintf(path, sizeof path, "%s/by-feature/loading/by-thread/count", p);
	struct hfs_attr a;
	assert_int_equal(hfs_getattr(fs, path, &a), -ENOENT);
	hfs_close(fs);
	/* no feature map: no by-feature */
	fs = open_tree(g_mc, NULL);
	assert_false(has_entry(fs, "/gc/004", "by-feature"));
	hfs_close(fs);
}

static void test_bad_feature_map_refused(void **state)
{
	(void)state;
	char bad[160];
	snprintf(bad, sizeof bad, "%s/badfeat", g_dir);
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("ok a.b.*\nlonely\n", f);
	fclose(f);
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { .features = bad };
	assert_int_equal(hfs_open(&fs, g_mc, &o, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 2, column 7"));
	unlink(bad);
}

static void test_user_defined(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_bs, NULL);
	char msg[400];
	const char *bad = "if size > 10 than \"a\" else \"b\"";
	assert_int_equal(hfs_write_file(fs, "/classifiers/bigness", bad, strlen(bad), msg, sizeof msg),
			 -EINVAL);
	assert_string_equal(msg, "bigness: line 1, column 14: expected 'then', found 'than'");
	char *errs = read_path(fs, "/classifiers/errors");
	assert_non_null(strstr(errs, "line 1, column 14"));
	free(errs);
	assert_false(has_entry(fs, "/gc/010", "by-bigness"));
	/* a good one appears at once, everywhere */
	const char *good = "if size >= 1000 then \"big\"\nelse \"small\"";
	assert_int_equal(hfs_write_file(fs, "/classifiers/bigness", good, strlen(good), msg, sizeof msg), 0);
	assert_true(has_entry(fs, "/gc/010", "by-bigness"));
	assert_true(has_entry(fs, "/classifiers", "bigness"));
	/* the Object[] of 1087 slots is the only big one */
	expect_file(fs, "/gc/010/by-bigness/big/by-type/table",
		    "name\tcount\tshallow_size\njava.lang.Object[]\t1\t4368\n");
	/* one value built two ways (a literal, a concatenation in the arena) is one group */
	const char *two = "if size >= 1000 then \"x\" + \"y\" else \"xy\"";
	assert_int_equal(hfs_write_file(fs, "/classifiers/two", two, strlen(two), msg, sizeof msg), 0);
	char *all = read_path(fs, "/gc/010/count");
	expect_file(fs, "/gc/010/by-two/xy/count", all);
	free(all);
	char *rows = read_path(fs, "/gc/010/by-two/table");
	const char *row = strstr(rows, "\nxy\t");
	assert_non_null(row);
	assert_int_equal(strchr(row + 1, '\n')[1], '\0'); /* the only row */
	free(rows);
	/* a filter */
	const char *filt = "type ~ \"*.TestObject\" and array_length < 0";
	assert_int_equal(hfs_write_file(fs, "/classifiers/tests", filt, strlen(filt), msg, sizeof msg), 0);
	expect_file(fs, "/gc/010/only-tests/count", "1000\n");
	/* per object: age; at GC 10 the second-round objects are younger */
	const char *old = "age >= 5";
	assert_int_equal(hfs_write_file(fs, "/classifiers/old", old, strlen(old), msg, sizeof msg), 0);
	expect_file(fs, "/gc/010/by-type/example.buggystack.TestObject/only-old/by-site/table",
		    "name\tcount\tshallow_size\nexample.buggystack.BuggyMain.main:43\t900\t14400\n");
	assert_int_equal(hfs_unlink(fs, "/classifiers/old"), 0);
	assert_false(has_entry(fs, "/gc/010", "only-old"));
	assert_int_equal(hfs_unlink(fs, "/classifiers/README"), -EROFS);
	assert_int_equal(hfs_write_file(fs, "/gc/010/count", "1", 1, msg, sizeof msg), -EROFS);
	hfs_close(fs);
}

/* An object with more referees than the arena's first 64 KiB hold names
 * for (buggystack -n 10000: the Object[] references every TestObject of
 * the first round) is evaluated again in a larger arena, not <error>. */
static void test_arena_grows(void **state)
{
	(void)state;
	char path[160], msg[200];
	snprintf(path, sizeof path, "%s/bs10k.htr", g_dir);
	fx_synth_trace("buggystack", 10000, 4, path);
	struct hfs *fs = open_tree(path, NULL);
	const char *many = "if len(referee_types) >= 10000 then \"many\" else \"few\"";
	assert_int_equal(hfs_write_file(fs, "/classifiers/many", many, strlen(many), msg, sizeof msg), 0);
	expect_file(fs, "/gc/latest/by-many/many/by-type/java.lang.Object[]/count", "1\n");
	assert_false(has_entry(fs, "/gc/latest/by-many", "<error>"));
	assert_true(has_entry(fs, "/gc/latest/by-many", "few"));
	hfs_close(fs);
	unlink(path);
}

static void test_predefined_kinds(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_bs, NULL);
	/* Object[1087] is the only array of 255 elements or more */
	expect_file(fs, "/gc/010/by-kind/big-array/by-type/table",
		    "name\tcount\tshallow_size\njava.lang.Object[]\t1\t4368\n");
	expect_file(fs, "/gc/010/by-array-length/1087/count", "1\n");
	/* TestObjects are 16 bytes: the 16-31 bucket */
	expect_file(fs, "/gc/010/by-type/example.buggystack.TestObject/by-size/table",
		    "name\tcount\tshallow_size\n16-31\t1000\t16000\n");
	/* collection health: the array backbone */
	expect_file(fs, "/gc/010/by-type/java.lang.Object[]/by-collection-health/table",
		    "name\tcount\tshallow_size\narray\t1\t4368\n");
	hfs_close(fs);
}

static void test_diff(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_bs, NULL);
	const char *p = "/gc/010/diff/005/by-type/example.buggystack.TestObject/summary";
	expect_file(fs, p, "gc\t010\ngroup\tdiff/005/by-type/example.buggystack.TestObject\n"
			   "count\t1000\nshallow_size\t16000\nborn_count\t100\nborn_bytes\t1600\n"
			   "died_count\t100\ndied_bytes\t1600\nperm_count\t900\nperm_bytes\t14400\n");
	expect_file(fs, "/gc/010/diff/005/by-type/example.buggystack.TestObject/by-site/table",
		    "name\tcount\tshallow_size\tborn_count\tborn_bytes\tdied_count\tdied_bytes\t"
		    "perm_count\tperm_bytes\n"
		    "example.buggystack.BuggyMain.main:43\t900\t14400\t0\t0\t100\t1600\t900\t14400\n"
		    "example.buggystack.BuggyMain.main:137\t100\t1600\t100\t1600\t0\t0\t0\t0\n");
	/* a per-object classifier (age) in a diff: its children add up to the
	 * scenario's 100 born (second round) and 100 died (overwritten) */
	char *age = read_path(fs, "/gc/010/diff/005/by-age/table");
	uint64_t died = 0, born = 0;
	for (char *l = strchr(age, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		unsigned long long c, b, bb, d;
		if (sscanf(l + 1, "%*[^\t]\t%llu\t%*u\t%llu\t%llu\t%llu", &c, &b, &bb, &d) == 4) {
			born += b;
			died += d;
		}
	}
	free(age);
	assert_int_equal(born, 100);
	assert_int_equal(died, 100);
	/* the diff's totals (from the census) equal the per-object sums */
	char *sum = read_path(fs, "/gc/010/diff/005/summary");
	char want[64];
	snprintf(want, sizeof want, "born_count\t%llu\n", (unsigned long long)born);
	assert_non_null(strstr(sum, want));
	snprintf(want, sizeof want, "died_count\t%llu\n", (unsigned long long)died);
	assert_non_null(strstr(sum, want));
	free(sum);
	hfs_close(fs);
	fs = open_tree(g_mc, NULL);
	expect_file(fs, "/gc/004/diff/001/by-type/example.multicache.Product/born_count", "75\n");
	expect_file(fs, "/gc/004/diff/001/by-type/example.multicache.Product/perm_count", "25\n");
	/* diffed against a later GC, "died" are the objects only the other
	 * GC has: the 75 Products loaded after GC 1 */
	expect_file(fs, "/gc/001/diff/004/by-type/example.multicache.Product/died_count", "75\n");
	expect_file(fs, "/gc/001/diff/004/by-type/example.multicache.Product/born_count", "0\n");
	hfs_close(fs);
}

/* ---- the expression language on its own ---- */

static void expect_compile_error(const char *src, uint32_t line, uint32_t col, const char *msg)
{
	struct expr *e = NULL;
	struct expr_error err;
	assert_int_equal(expr_compile(src, strlen(src), &e, &err), -EINVAL);
	assert_null(e);
	assert_int_equal(err.line, line);
	assert_int_equal(err.col, col);
	assert_string_equal(err.msg, msg);
}

static void test_expr_errors(void **state)
{
	(void)state;
	expect_compile_error("", 1, 1, "empty definition");
	expect_compile_error("size +", 1, 7, "expected a value, found the end of the text");
	expect_compile_error("type == 3", 1, 6, "'==' cannot combine string and int");
	expect_compile_error("if size then 1 else 2", 1, 4, "the condition of 'if' must be bool, not int");
	expect_compile_error("if true then 1\nelse \"x\"", 2, 6, "the else branch is string, the others are int");
	expect_compile_error("# comment\n  sizee", 2, 3, "unknown property sizee");
	expect_compile_error("\"abc", 1, 1, "string not closed on its line");
	expect_compile_error("frob(1)", 1, 1, "unknown function frob()");
	expect_compile_error("size @ 2", 1, 6, "unexpected character '@'");
	expect_compile_error("type type", 1, 6, "unexpected 'type' after the expression");
}

static void test_expr_types(void **state)
{
	(void)state;
	static const struct { const char *src; enum xtype t; int per_object; } cases[] = {
		{ "type", XT_STR, 0 }, { "size * 2", XT_INT, 0 }, { "list(type, frames)", XT_LIST, 0 },
		{ "path(split(package, \".\"))", XT_PATH, 0 }, { "age > 2", XT_BOOL, 1 },
		{ "parts(\"a\", size)", XT_PARTS, 0 }, { "any_referee(is_array)", XT_BOOL, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct expr *e;
		struct expr_error err;
		assert_int_equal(expr_compile(cases[i].src, strlen(cases[i].src), &e, &err), 0);
		assert_int_equal(expr_type(e), cases[i].t);
		assert_int_equal(expr_per_object(e), cases[i].per_object);
		expr_free(e);
	}
}

static int host_prop(void *ctx, uint32_t o, enum xprop p, struct xval *out, struct xarena *a)
{
	(void)ctx;
	(void)a;
	if (p == XP_SIZE) {
		out->i = o;
		return 0;
	}
	if (p == XP_TYPE) {
		out->s = (struct xstr){ "java.util.HashMap", 17 };
		return 0;
	}
	return -1;
}

static void test_expr_eval(void **state)
{
	(void)state;
	static const struct { const char *src; uint32_t o; int64_t i; const char *s; } cases[] = {
		{ "size * 2 + 1", 20, 41, NULL },
		{ "if size >= 10 then \"big\" elif size > 3 then \"mid\" else \"small\"", 5, 0, "mid" },
		{ "type ~ \"java.util.*\"", 0, 1, NULL },
		{ "\"x\" + size", 7, 0, "x7" },
		{ "len(split(type, \".\"))", 0, 3, NULL },
		{ "log2(size)", 1024, 10, NULL },
		{ "\"util\" in split(type, \".\")", 0, 1, NULL },
	};
	char arena_buf[4096];
	struct expr_host h = { NULL, host_prop, NULL, NULL, NULL };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct expr *e;
		struct expr_error err;
		struct xarena a = { arena_buf, 0, sizeof arena_buf, 0 };
		struct xval v;
		assert_int_equal(expr_compile(cases[i].src, strlen(cases[i].src), &e, &err), 0);
		assert_int_equal(expr_eval(e, &h, cases[i].o, &a, &v), 0);
		if (cases[i].s) {
			assert_int_equal(v.s.len, strlen(cases[i].s));
			assert_memory_equal(v.s.s, cases[i].s, v.s.len);
		} else {
			assert_int_equal(v.i, cases[i].i);
		}
		expr_free(e);
	}
}

/* A random graph for `type in referee_types`: 12 types, the last four
 * named like the first four (one class from two loaders), so names and
 * type ids disagree. */
#define RG_OBJS 400
#define RG_TYPES 12
static const char *const rg_names[RG_TYPES] = { "A", "B", "C[]", "D", "E", "F", "G[]", "H",
						"A", "B", "C[]", "D" };
struct rgraph {
	uint32_t type[RG_OBJS];
	uint32_t out_off[RG_OBJS + 1], out_tgt[RG_OBJS * 8];
	uint32_t in_off[RG_OBJS + 1], in_src[RG_OBJS * 8];
	uint64_t type_key_calls;
};

static void rgraph_build(struct rgraph *g, uint64_t seed)
{
	uint64_t rs = seed;
	uint32_t n = 0, indeg[RG_OBJS] = { 0 };
	memset(g, 0, sizeof *g);
	for (uint32_t o = 0; o < RG_OBJS; o++) {
		g->type[o] = xorshift_below(&rs, RG_TYPES);
		g->out_off[o] = n;
		/* mostly 0-3 references, now and then 8 */
		uint32_t deg = xorshift_below(&rs, 10) == 0 ? 8 : xorshift_below(&rs, 4);
		for (uint32_t k = 0; k < deg; k++) {
			g->out_tgt[n] = xorshift_below(&rs, RG_OBJS);
			indeg[g->out_tgt[n++]]++;
		}
	}
	g->out_off[RG_OBJS] = n;
	for (uint32_t o = 0; o < RG_OBJS; o++)
		g->in_off[o + 1] = g->in_off[o] + indeg[o];
	uint32_t fill[RG_OBJS] = { 0 };
	for (uint32_t o = 0; o < RG_OBJS; o++)
		for (uint32_t k = g->out_off[o]; k < g->out_off[o + 1]; k++) {
			uint32_t t = g->out_tgt[k];
			g->in_src[g->in_off[t] + fill[t]++] = o;
		}
}

static int rg_prop(void *ctx, uint32_t o, enum xprop p, struct xval *out, struct xarena *a)
{
	struct rgraph *g = ctx;
	const char *n = rg_names[g->type[o]];
	switch (p) {
	case XP_TYPE: out->s = (struct xstr){ n, (uint32_t)strlen(n) }; return 0;
	case XP_TYPE_KIND: {
		const char *k = n[strlen(n) - 1] == ']' ? "object-array" : "instance";
		out->s = (struct xstr){ k, (uint32_t)strlen(k) };
		return 0;
	}
	case XP_SIZE: out->i = o % 7; return 0;
	case XP_REFEREE_TYPES: case XP_REFERRER_TYPES: {
		const uint32_t *off = p == XP_REFEREE_TYPES ? g->out_off : g->in_off;
		const uint32_t *nb = p == XP_REFEREE_TYPES ? g->out_tgt : g->in_src;
		uint32_t deg = off[o + 1] - off[o];
		if (!(out->items = xarena_alloc(a, (deg + 1) * sizeof *out->items)))
			return -1;
		for (uint32_t k = 0; k < deg; k++) {
			const char *m = rg_names[g->type[nb[off[o] + k]]];
			out->items[k] = (struct xstr){ m, (uint32_t)strlen(m) };
		}
		out->n = deg;
		return 0;
	}
	default: return -1;
	}
}

static uint32_t rg_degree(void *ctx, uint32_t o, int dir)
{
	const struct rgraph *g = ctx;
	return dir ? g->in_off[o + 1] - g->in_off[o] : g->out_off[o + 1] - g->out_off[o];
}

static uint32_t rg_neighbour(void *ctx, uint32_t o, int dir, uint32_t k)
{
	const struct rgraph *g = ctx;
	return dir ? g->in_src[g->in_off[o] + k] : g->out_tgt[g->out_off[o] + k];
}

/* The first type of the object's type name. */
static uint32_t rg_type_key(void *ctx, uint32_t o)
{
	struct rgraph *g = ctx;
	g->type_key_calls++;
	uint32_t t = 0;
	while (strcmp(rg_names[t], rg_names[g->type[o]]))
		t++;
	return t;
}

/* The oracle: does a neighbour's type have o's type's name? */
static int rg_type_among(const struct rgraph *g, uint32_t o, int dir)
{
	for (uint32_t k = 0; k < rg_degree((void *)g, o, dir); k++) {
		if (!strcmp(rg_names[g->type[rg_neighbour((void *)g, o, dir, k)]], rg_names[g->type[o]]))
			return 1;
	}
	return 0;
}

/* `type in referee_types` and `type in referrer_types` compare type keys
 * when the host has them (analyses/classify.c does), and names otherwise: both
 * must agree with comparing names, alone and inside larger expressions,
 * collection health's among them. */
static void test_expr_type_in_neighbours(void **state)
{
	(void)state;
	static const char *const srcs[] = {
		"type in referee_types", "type in referrer_types", "not (type in referee_types) and size > 2",
		"if type_kind == \"object-array\" then \"array\"\n"
		"elif type in referee_types then \"entry\"\n"
		"elif any_referee(type_kind != \"instance\" or type in referee_types) then \"head\"\n"
		"else \"contained\"",
		"count_referrers(type in referrer_types)",
	};
	static char arena_buf[RG_OBJS * 8 * 16 + 4096];
	static struct rgraph g;
	uint64_t among[2] = { 0, 0 };
	for (uint64_t seed = 1; seed <= 20; seed++) {
		rgraph_build(&g, seed * 0x9e3779b97f4a7c15ull);
		struct expr_host keyed = { &g, rg_prop, rg_degree, rg_neighbour, rg_type_key };
		struct expr_host named = { &g, rg_prop, rg_degree, rg_neighbour, NULL };
		for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
			struct expr *e;
			struct expr_error err;
			assert_int_equal(expr_compile(srcs[i], strlen(srcs[i]), &e, &err), 0);
			for (uint32_t o = 0; o < RG_OBJS; o++) {
				struct xarena a1 = { arena_buf, 0, sizeof arena_buf / 2, 0 };
				struct xarena a2 = { arena_buf + sizeof arena_buf / 2, 0, sizeof arena_buf / 2, 0 };
				struct xval v1, v2;
				assert_int_equal(expr_eval(e, &keyed, o, &a1, &v1), 0);
				assert_int_equal(expr_eval(e, &named, o, &a2, &v2), 0);
				assert_int_equal(v1.t, v2.t);
				if (v1.t == XT_STR) {
					assert_int_equal(v1.s.len, v2.s.len);
					assert_memory_equal(v1.s.s, v2.s.s, v1.s.len);
				} else {
					assert_int_equal(v1.i, v2.i);
				}
				if (i < 2) {
					assert_int_equal(v1.i, rg_type_among(&g, o, (int)i));
					among[i] += (uint64_t)v1.i;
				}
			}
			expr_free(e);
		}
	}
	/* the keyed host was asked, and both answers occurred */
	assert_true(g.type_key_calls > 0);
	assert_true(among[0] > 0 && among[0] < 20 * RG_OBJS);
	assert_true(among[1] > 0 && among[1] < 20 * RG_OBJS);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(glob_match("a*c", "abbbc", 5));
	assert_true(glob_match("*", "", 0));
	assert_true(glob_match("a?c", "abc", 3));
	assert_false(glob_match("a*d", "abc", 3));
	assert_true(glob_match("*.Loader.*", "x.Loader.load", 13));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure15_path),
		cmocka_unit_test(test_sites_nest_callers),
		cmocka_unit_test(test_multicache_sites),
		cmocka_unit_test(test_features_count_once),
		cmocka_unit_test(test_bad_feature_map_refused),
		cmocka_unit_test(test_user_defined),
		cmocka_unit_test(test_predefined_kinds),
		cmocka_unit_test(test_arena_grows),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_expr_errors),
		cmocka_unit_test(test_expr_types),
		cmocka_unit_test(test_expr_eval),
		cmocka_unit_test(test_expr_type_in_neighbours),
		cmocka_unit_test(test_glob),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_suspects.c - analyses/suspects.c on hand-built inputs, the report
 * of analyses/suspects_find.c and its flat form, and the `suspects` file
 * of synthetic traces: every path it names resolves (hfs_getattr), what it
 * says follows from docs/scenarios.md, and suspects.json says the same. */
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

#include "analyses/classify.h"
#include "analyses/dominators.h"
#include "analyses/suspects.h"
#include "analyses/suspects_find.h"
#include "fs/tree.h"
#include "model/synth.h"

/* ---- pure logic ---- */

/* The dominator tree (R = virtual root):
 *   R -> 0 -> 1 -> 2 -> {3, 4};  R -> 5;  6 unreachable
 * retained: 0:100 1:90 2:85 3:60 4:20 (+5 shallow of 2), 5:30. */
static const uint32_t t_idom[7] = { DOM_ROOT, 0, 1, 2, 2, DOM_ROOT, DOM_UNREACHABLE };
static const uint64_t t_ret[7] = { 100, 90, 85, 60, 20, 30, 0 };

static void test_domtree_children(void **state)
{
	(void)state;
	struct sus_domtree t;
	assert_int_equal(sus_domtree_build(7, t_idom, 1, &t), 0);
	/* virtual root (7): 0 and 5; node 2: 3 and 4; 6 nowhere */
	assert_int_equal(sus_kid_end(&t, 7) - sus_kid_begin(&t, 7), 2);
	assert_int_equal(t.kid[sus_kid_begin(&t, 7)], 0);
	assert_int_equal(t.kid[sus_kid_begin(&t, 7) + 1], 5);
	assert_int_equal(sus_kid_end(&t, 2) - sus_kid_begin(&t, 2), 2);
	assert_int_equal(sus_kid_end(&t, 6) - sus_kid_begin(&t, 6), 0);
	uint32_t parents = 0;
	for (uint32_t k = 0; k <= 7; k++)
		parents += sus_kid_end(&t, k) - sus_kid_begin(&t, k);
	assert_int_equal(parents, 6); /* 6 reachable objects have a parent */
	sus_domtree_free(&t);
}

/* A random forest of 300,007 objects (some unreachable, many only the
 * roots dominate, the rest below an earlier object) built on 1, 2 and 4
 * threads: each node's children are exactly the objects whose parent it
 * is, in increasing order.  Every listed child has that parent, the lists
 * strictly increase, and their lengths add up to the objects with a
 * parent: so each such object is listed once. */
static void test_domtree_threads(void **state)
{
	(void)state;
	uint32_t n = 300007;
	uint32_t *idom = malloc(n * sizeof *idom);
	assert_non_null(idom);
	uint64_t x = 88172645463325252ull, with_parent = 0;
	for (uint32_t o = 0; o < n; o++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t r = (uint32_t)(x % 100);
		idom[o] = r < 5 ? DOM_UNREACHABLE : r < 20 || o == 0 ? DOM_ROOT : (uint32_t)((x >> 32) % o);
		with_parent += idom[o] != DOM_UNREACHABLE;
	}
	for (uint32_t threads = 1; threads <= 4; threads *= 2) {
		struct sus_domtree t;
		assert_int_equal(sus_domtree_build(n, idom, threads, &t), 0);
		uint64_t listed = 0;
		for (uint32_t k = 0; k <= n; k++) {
			uint32_t b = sus_kid_begin(&t, k), e = sus_kid_end(&t, k);
			for (uint32_t i = b; i < e; i++) {
				uint32_t c = t.kid[i];
				assert_true(c < n);
				assert_int_equal(idom[c], k == n ? DOM_ROOT : k);
				if (i > b)
					assert_true(t.kid[i - 1] < c);
			}
			listed += e - b;
		}
		assert_int_equal(listed, with_parent);
		sus_domtree_free(&t);
	}
	/* every object below the virtual root alone: the cuts meet at the
	 * root's word, and the root lists them all in order */
	for (uint32_t o = 0; o < n; o++)
		idom[o] = DOM_ROOT;
	for (uint32_t threads = 1; threads <= 4; threads *= 2) {
		struct sus_domtree t;
		assert_int_equal(sus_domtree_build(n, idom, threads, &t), 0);
		assert_int_equal(sus_kid_end(&t, n) - sus_kid_begin(&t, n), n);
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(t.kid[sus_kid_begin(&t, n) + i], i);
		sus_domtree_free(&t);
	}
	free(idom);
}

static void test_accumulation_point(void **state)
{
	(void)state;
	struct sus_domtree t;
	uint32_t depth;
	assert_int_equal(sus_domtree_build(7, t_idom, 1, &t), 0);
	/* 0 -> 1 (90%) -> 2 (94%) -> 3 is 70% of 85: stops at 2 with 80% */
	assert_int_equal(sus_accumulation_point(&t, t_ret, 0, 80, &depth), 2);
	assert_int_equal(depth, 2);
	/* with 70% it goes on to 3 (60 * 100 >= 85 * 70) */
	assert_int_equal(sus_accumulation_point(&t, t_ret, 0, 70, &depth), 3);
	assert_int_equal(depth, 3);
	/* a leaf stays */
	assert_int_equal(sus_accumulation_point(&t, t_ret, 5, 80, &depth), 5);
	assert_int_equal(depth, 0);
	sus_domtree_free(&t);
}

static void test_big_objects(void **state)
{
	(void)state;
	uint32_t out[4];
	/* only root-dominated objects: 0 (100) and 5 (30) */
	assert_int_equal(sus_big_objects(7, t_idom, t_ret, 30, out, 4), 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 5);
	assert_int_equal(sus_big_objects(7, t_idom, t_ret, 31, out, 4), 1);
	assert_int_equal(sus_big_objects(7, t_idom, t_ret, 101, out, 4), 0);
}

static void test_key_retained(void **state)
{
	(void)state;
	struct sus_domtree t;
	/* one info per object; keys: 0:A 1:B 2:A 3:A 4:B 5:B 6:A
	 * A topmost: 0 (3 and 2 are below 0) -> 100
	 * B topmost: 1 (90; 4 is below it) and 5 (30) -> 120 */
	const uint32_t info[7] = { 0, 1, 2, 3, 4, 5, 6 };
	const uint32_t info_key[7] = { 0, 1, 0, 0, 1, 1, 0 };
	uint64_t out[2];
	assert_int_equal(sus_domtree_build(7, t_idom, 1, &t), 0);
	assert_int_equal(sus_key_retained(&t, t_ret, info, info_key, 2, out), 0);
	assert_int_equal(out[0], 100);
	assert_int_equal(out[1], 120);
	sus_domtree_free(&t);
}

static void test_key_retained_long_chain(void **state)
{
	(void)state;
	/* a 10^6-deep dominator chain of alternating keys: no recursion */
	uint32_t n = 1000000;
	uint32_t *idom = malloc(n * sizeof *idom), *info = malloc(n * sizeof *info);
	uint64_t *ret = malloc(n * sizeof *ret);
	const uint32_t info_key[2] = { 0, 1 };
	assert_non_null(idom);
	assert_non_null(info);
	assert_non_null(ret);
	for (uint32_t i = 0; i < n; i++) {
		idom[i] = i ? i - 1 : DOM_ROOT;
		ret[i] = (uint64_t)(n - i) * 8;
		info[i] = i & 1;
	}
	struct sus_domtree t;
	uint64_t out[2];
	assert_int_equal(sus_domtree_build(n, idom, 1, &t), 0);
	assert_int_equal(sus_key_retained(&t, ret, info, info_key, 2, out), 0);
	assert_int_equal(out[0], (uint64_t)n * 8);       /* object 0 */
	assert_int_equal(out[1], (uint64_t)(n - 1) * 8); /* object 1 */
	/* the descent goes on while (n - i - 1) * 100 >= (n - i) * 80, i.e.
	 * while n - i >= 5: it stops at i = n - 4 */
	uint32_t depth;
	assert_int_equal(sus_accumulation_point(&t, ret, 0, 80, &depth), n - 4);
	assert_int_equal(depth, n - 4);
	sus_domtree_free(&t);
	free(idom);
	free(info);
	free(ret);
}

/* A cache: object 0 (the accumulation point, key 0) holds 4 segments
 * (key 1), each 20 entries (key 2, retaining 10 bytes each with their
 * value), each entry one value (key 3, 8 bytes); entry 0 of segment 0
 * also dominates a second entry (key 2, below another key-2 object: its
 * bytes are inside the first's).  Keys with fewer than SUS_ACCUM_MIN (64)
 * objects do not count: the segments are structure. */
static void test_accumulated(void **state)
{
	(void)state;
	enum { SEG = 4, ENT = 20 };
	uint32_t n = 1 + SEG + SEG * ENT * 2 + 2;
	uint32_t *idom = calloc(n, sizeof *idom), *info = calloc(n, sizeof *info);
	uint64_t *ret = calloc(n, sizeof *ret);
	const uint32_t info_key[4] = { 0, 1, 2, 3 };
	assert_non_null(idom);
	assert_non_null(info);
	assert_non_null(ret);
	uint32_t k = 0;
	idom[k] = DOM_ROOT, info[k] = 0, k++;
	uint32_t first_entry = UINT32_MAX;
	for (uint32_t s = 0; s < SEG; s++) {
		uint32_t seg = k++;
		idom[seg] = 0, info[seg] = 1;
		for (uint32_t e = 0; e < ENT; e++) {
			uint32_t ent = k++, val = k++;
			idom[ent] = seg, info[ent] = 2, ret[ent] = 10;
			idom[val] = ent, info[val] = 3, ret[val] = 8;
			if (first_entry == UINT32_MAX)
				first_entry = ent;
		}
	}
	uint32_t inner = k++, inner_val = k++; /* an entry below an entry, and its value */
	idom[inner] = first_entry, info[inner] = 2, ret[inner] = 10;
	idom[inner_val] = inner, info[inner_val] = 3, ret[inner_val] = 8;
	ret[first_entry] += 10;
	assert_int_equal(k, n);
	struct sus_domtree t;
	assert_int_equal(sus_domtree_build(n, idom, 1, &t), 0);
	uint32_t key;
	uint64_t count, bytes;
	/* no application type: the entries, 81 of them; the inner one's bytes
	 * are inside its holder's (80 * 10 + 10) */
	assert_int_equal(sus_accumulated(&t, ret, info, info_key, 4, NULL, 0, &key, &count, &bytes), 0);
	assert_int_equal(key, 2);
	assert_int_equal(count, SEG * ENT + 1);
	assert_int_equal(bytes, SEG * ENT * 10 + 10);
	/* the values are the application's and hold 648 of 810 bytes (at least
	 * half): they are named instead; the inner value is below another value
	 * only through an entry, so it counts on its own */
	const uint8_t app[4] = { 0, 0, 0, 1 };
	assert_int_equal(sus_accumulated(&t, ret, info, info_key, 4, app, 0, &key, &count, &bytes), 0);
	assert_int_equal(key, 3);
	assert_int_equal(count, SEG * ENT + 1);
	assert_int_equal(bytes, (SEG * ENT + 1) * 8);
	/* below one segment alone (fan-out 20, fewer than 64 of anything) */
	assert_int_equal(sus_accumulated(&t, ret, info, info_key, 4, NULL, 1, &key, &count, &bytes), 0);
	assert_int_equal(key, UINT32_MAX);
	sus_domtree_free(&t);

	/* a linked map: its 200 entries (key 2, each also linked from its
	 * neighbours) are its own dominator children, beside its table (key
	 * 1) and header: 202 children, the entries more than half of them */
	enum { LE = 200 };
	uint32_t m = 1 + 2 + 2 * LE;
	uint32_t *idom2 = calloc(m, sizeof *idom2), *info2 = calloc(m, sizeof *info2);
	uint64_t *ret2 = calloc(m, sizeof *ret2);
	assert_non_null(idom2);
	assert_non_null(info2);
	assert_non_null(ret2);
	idom2[0] = DOM_ROOT;
	idom2[1] = 0, info2[1] = 1, ret2[1] = 816;
	idom2[2] = 0, info2[2] = 2, ret2[2] = 40; /* the header entry */
	for (uint32_t e = 0; e < LE; e++) {
		uint32_t ent = 3 + 2 * e, val = ent + 1;
		idom2[ent] = 0, info2[ent] = 2, ret2[ent] = 40 + 8232;
		idom2[val] = ent, info2[val] = 3, ret2[val] = 8232;
	}
	assert_int_equal(sus_domtree_build(m, idom2, 1, &t), 0);
	assert_int_equal(sus_accumulated(&t, ret2, info2, info_key, 4, app, 0, &key, &count, &bytes), 0);
	assert_int_equal(key, 3); /* the application's values, 200 of them */
	assert_int_equal(count, LE);
	assert_int_equal(bytes, (uint64_t)LE * 8232);
	sus_domtree_free(&t);
	free(idom2);
	free(info2);
	free(ret2);
	free(idom);
	free(info);
	free(ret);
}

static void test_survivors(void **state)
{
	(void)state;
	/* window GCs 3..5; births: before GC 0, after GC 2, after GC 3, after
	 * GC 5 (born after the window's last GC: none survived) */
	const uint32_t birth[4] = { UINT32_MAX, 2, 3, 5 };
	const uint32_t info[4] = { 0, 0, 1, 1 };
	const uint32_t info_key[2] = { 0, 1 };
	const uint64_t info_size[2] = { 10, 100 };
	uint64_t bg[2] = { 0, 0 }, cnt[2] = { 0, 0 };
	sus_survivors(4, birth, info, info_key, info_size, NULL, 2, 3, 5, bg, cnt);
	/* key 0: 3 GCs (3,4,5) + 3 GCs -> 60 bytes x GCs; key 1: 2 GCs (4,5) */
	assert_int_equal(bg[0], 60);
	assert_int_equal(cnt[0], 2);
	assert_int_equal(bg[1], 200);
	assert_int_equal(cnt[1], 1);
}

static void test_small_decisions(void **state)
{
	(void)state;
	const uint64_t v[6] = { 5, 0, 9, 5, 7, 1 };
	uint32_t out[3];
	assert_int_equal(sus_top_k(v, 6, 3, out), 3);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 4);
	assert_int_equal(out[2], 0); /* tie 5/5: the lower index */
	const uint64_t z[2] = { 0, 0 };
	assert_int_equal(sus_top_k(z, 2, 3, out), 0);
	/* the gc-roots paper's two maps: together they retain more */
	assert_true(sus_shared(2, 2251672, 1011200));
	assert_false(sus_shared(1, 2251672, 1011200));
	assert_false(sus_shared(2, 1011200, 1011200));
	assert_true(sus_overhead_dominates(50, 50, 50));
	assert_false(sus_overhead_dominates(49, 51, 50));
	assert_false(sus_overhead_dominates(0, 0, 50));
	assert_int_equal(sus_pct(1, 3), 33);
	assert_int_equal(sus_pct(5, 0), 0);
}

/* ---- the report, without the tree ---- */

static int stub_acquire(void *ctx, struct keyspace *ks, uint32_t gci, void **h)
{
	(void)ctx, (void)ks, (void)gci, (void)h;
	return -EINVAL;
}

static int stub_keys(void *h, const struct heap_state *s, uint32_t o, struct cls_keys *kb)
{
	(void)h, (void)s, (void)o, (void)kb;
	return -EINVAL;
}

static void stub_release(void *ctx, void *h)
{
	(void)ctx, (void)h;
}

static const struct cls_ext_ops stub_ops = { stub_acquire, stub_keys, stub_release };

/* Never called for a trace without GCs: nothing to read. */
static int no_windows(void *ctx, struct sus_windows *w)
{
	(void)ctx, (void)w;
	fail();
	return -EIO;
}

/* A trace with no GC: one check says so, no finding; the flat form views
 * back, and a cut or foreign block does not. */
static void test_report_no_gc(void **state)
{
	(void)state;
	struct trace t;
	struct cls_registry reg;
	struct sus_params p;
	memset(&t, 0, sizeof t);
	sus_params_default(&p);
	assert_int_equal(cls_registry_init(&reg, &t, NULL), 0);
	/* the two classifiers fs registers from its own analyses */
	const struct cls_ext ds = { "ds", "", CARD_MANY, 0, 1, NULL, 0, &stub_ops, NULL };
	const struct cls_ext ir = { "indirect-root", "", CARD_HIER, 1, 1, NULL, 0, &stub_ops, NULL };
	assert_int_equal(cls_register_ext(&reg, &ds, NULL), 0);
	assert_int_equal(cls_register_ext(&reg, &ir, NULL), 0);
	const struct sus_source src = { .trace = &t, .reg = &reg, .p = &p, .windows = no_windows };
	struct buf b;
	buf_init(&b);
	assert_int_equal(sus_find(&src, &b), 0);
	struct sus_report r;
	assert_int_equal(sus_report_view(b.data, b.len, &r), 0);
	assert_int_equal(r.nchecks, 1);
	assert_int_equal(r.checks[0].what, SUS_CHECK_NO_GC);
	assert_int_equal(r.nfindings, 0);
	assert_int_equal(r.nclaims, 0);
	assert_string_equal(sus_str(&r, 0), "");
	assert_string_equal(sus_str(&r, UINT32_MAX), "");
	/* cut anywhere, or not a report */
	for (size_t len = 0; len < b.len; len++)
		assert_int_equal(sus_report_view(b.data, len, &r), -EBADMSG);
	b.data[0] ^= 0xff;
	assert_int_equal(sus_report_view(b.data, b.len, &r), -EBADMSG);
	buf_free(&b);
	cls_registry_destroy(&reg);
}

/* ---- the file in the tree ---- */

static char g_dir[] = "/tmp/heapfs_test_suspects_XXXXXX";

static struct hfs *open_scenario(const char *scenario, uint64_t n, uint32_t gcs)
{
	char path[256], err[256];
	struct synth_opts so;
	synth_opts_init(&so);
	so.objects = n;
	so.gcs = gcs;
	snprintf(path, sizeof path, "%s/%s.htr", g_dir, scenario);
	if (access(path, F_OK) != 0)
		assert_int_equal(synth_write(scenario, &so, path, err, sizeof err), 0);
	struct hfs_opts o;
	memset(&o, 0, sizeof o);
	struct htr_err herr;
	struct hfs *fs = NULL;
	assert_int_equal(hfs_open(&fs, path, &o, &herr), 0);
	return fs;
}

static char *read_file(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(fs, path, &b), 0);
	assert_int_equal(buf_putc(&b, '\0'), 0);
	return (char *)b.data; /* the caller frees */
}

/* Every "-> PATH" line names a path of the tree; returns how many. */
static int check_paths(struct hfs *fs, const char *text)
{
	int n = 0;
	for (const char *p = strstr(text, "-> "); p; p = strstr(p + 3, "-> ")) {
		const char *start = p + 3, *nl = strchr(start, '\n');
		if (p > text && p[-1] != ' ')
			continue;
		/* only path lines: "-> " first on its line */
		const char *ls = p;
		while (ls > text && ls[-1] == ' ')
			ls--;
		if (ls > text && ls[-1] != '\n')
			continue;
		char path[4096];
		size_t len = nl ? (size_t)(nl - start) : strlen(start);
		assert_true(len + 2 < sizeof path);
		path[0] = '/';
		memcpy(path + 1, start, len);
		path[len + 1] = '\0';
		struct hfs_attr a;
		int rc = hfs_getattr(fs, path, &a);
		if (rc)
			fprintf(stderr, "suspects names %s: %d\n", path, rc);
		assert_int_equal(rc, 0);
		n++;
	}
	return n;
}

/* Lines other than path lines fit 80 columns. */
static void check_layout(const char *text)
{
	int lines = 0;
	const char *s = text;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		const char *t = s;
		while (t < s + len && *t == ' ')
			t++;
		if (strncmp(t, "-> ", 3) != 0 && len > 80) {
			fprintf(stderr, "too wide: %.*s\n", (int)len, s);
			fail();
		}
		lines++;
		s = nl ? nl + 1 : s + len;
	}
	assert_true(lines < 200);
}

/* The report is the same on one thread and on several: with several, the
 * graph sections' steps run at once in two rounds (graph_sections in
 * analyses/suspects_find.c) and the sections read the results from there. */
static void test_same_with_threads(void **state)
{
	(void)state;
	static const char *const scenarios[] = { "multicache", "buggystack", "company", "leakdrops" };
	static const char *const files[] = { "/suspects", "/suspects.json" };
	for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
		char path[256], err[256];
		struct synth_opts so;
		synth_opts_init(&so);
		snprintf(path, sizeof path, "%s/%s.htr", g_dir, scenarios[k]);
		if (access(path, F_OK) != 0)
			assert_int_equal(synth_write(scenarios[k], &so, path, err, sizeof err), 0);
		char *text[2][2];
		for (uint32_t t = 0; t < 2; t++) {
			struct hfs_opts o;
			memset(&o, 0, sizeof o);
			o.analysis_threads = t ? 4 : 1;
			struct htr_err herr;
			struct hfs *fs = NULL;
			assert_int_equal(hfs_open(&fs, path, &o, &herr), 0);
			for (int f = 0; f < 2; f++)
				text[t][f] = read_file(fs, files[f]);
			hfs_close(fs);
		}
		for (int f = 0; f < 2; f++) {
			assert_string_equal(text[0][f], text[1][f]);
			free(text[0][f]);
			free(text[1][f]);
		}
	}
}

static void test_multicache(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("multicache", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	assert_true(check_paths(fs, text) > 10);
	/* docs/scenarios.md: Products held by both static maps, the leak
	 * window covers the run (P grows at every GC) */
	assert_non_null(strstr(text, "1. Leak"));
	/* the window starts at GC 001: the start-up caution (the text wraps,
	 * so its first words) */
	assert_non_null(strstr(text, "caution: the window starts at the first GC"));
	assert_non_null(strstr(text, "type example.multicache.Product:"));
	assert_non_null(strstr(text, "static/example.multicache.IdCache/byId"));
	assert_non_null(strstr(text, "static/example.multicache.NameCache/byName"));
	assert_non_null(strstr(text, "site example.multicache.Loader.load:30"));
	assert_non_null(strstr(text, "shared ownership"));
	/* the head of the holding structure: the two maps' allocation sites */
	assert_non_null(strstr(text, "example.multicache.IdCache.<clinit>:12"));
	assert_non_null(strstr(text, "example.multicache.NameCache.<clinit>:12"));
	/* the JSON holds the same paths */
	char *json = read_file(fs, "/suspects.json");
	assert_non_null(strstr(json, "\"kind\": \"leak\""));
	assert_non_null(strstr(json, "by-indirect-root/static/example.multicache.IdCache/byId/"));
	free(json);
	free(text);
	hfs_close(fs);
}

static void test_buggystack(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("buggystack", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	assert_true(check_paths(fs, text) > 5);
	/* the stack's array holds every TestObject ever pushed in round one */
	char *leak = strstr(text, "Leak (");
	assert_non_null(leak);
	assert_non_null(strstr(leak, "type java.lang.Object[]:"));
	assert_non_null(strstr(leak, "example.buggystack.BuggyStack"));
	free(text);
	hfs_close(fs);
}

static void test_churn(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("churn", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	check_paths(fs, text);
	/* defaults: churn GCs 11..20, 100000 Integers per churn interval,
	 * all dead at the next GC: 10 intervals x 100000 */
	assert_non_null(strstr(text, "Churn ("));
	assert_non_null(strstr(text, "GC 011..020"));
	assert_non_null(strstr(text, "type java.lang.Integer: 1000000 objects, 16000000 bytes"));
	assert_non_null(strstr(text, "site java.lang.Integer.valueOf:1081: 1000000 objects"));
	assert_null(strstr(text, "Leak ("));
	free(text);
	hfs_close(fs);
}

static void test_gcstress(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("gcstress", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	check_paths(fs, text);
	/* stress GCs 11..20 at 80% of the time in GC */
	assert_non_null(strstr(text, "GC overhead ("));
	assert_non_null(strstr(text, "80% of the time in GC over GC 011..020"));
	assert_non_null(strstr(text, "example.gcstress.Task"));
	free(text);
	hfs_close(fs);
}

static void test_company(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("company", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	assert_true(check_paths(fs, text) > 3);
	/* nothing constructed to grow: no leak, said so with what was checked */
	assert_null(strstr(text, "Leak ("));
	assert_non_null(strstr(text, "no leak window"));
	assert_non_null(strstr(text, "Bloat ("));
	assert_non_null(strstr(text, "instance health"));
	free(text);
	hfs_close(fs);
}

static void test_leakdrops(void **state)
{
	(void)state;
	struct hfs *fs = open_scenario("leakdrops", 0, 0);
	char *text = read_file(fs, "/suspects");
	check_layout(text);
	check_paths(fs, text);
	/* docs/scenarios.md, defaults (-g 40): reachable memory halves at GC
	 * big = 10 and grows from there, above that point, to the end; the
	 * window starts after the first GC, so no start-up caution */
	assert_non_null(strstr(text, "Leak ("));
	assert_non_null(strstr(text, "over GC 010..040"));
	assert_null(strstr(text, "caution: the window starts"));
	assert_non_null(strstr(text, "example.leakdrops.Session"));
	free(text);
	hfs_close(fs);
}

/* s with every run of spaces and newlines made one space (the text file
 * wraps lines), in place. */
static char *squeeze(char *s)
{
	char *w = s;
	for (const char *r = s; *r; r++) {
		int sp = *r == ' ' || *r == '\n';
		if (sp && (w == s || w[-1] == ' '))
			continue;
		*w++ = sp ? ' ' : *r;
	}
	*w = '\0';
	return s;
}

/* The JSON strings after `"key": ` in json, one by one (no escapes in
 * these traces' names: checked). */
static const char *json_next(const char *json, const char *key, char *out, size_t size)
{
	const char *p = strstr(json, key);
	if (!p)
		return NULL;
	p += strlen(key);
	const char *e = strchr(p, '"');
	assert_non_null(e);
	assert_true((size_t)(e - p) < size);
	assert_true(memchr(p, '\\', (size_t)(e - p)) == NULL);
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return e + 1;
}

/* suspects.json says what suspects says: every title and claim text, and
 * every path, in the same order. */
static void check_json_agrees(struct hfs *fs)
{
	char *text = read_file(fs, "/suspects"), *json = read_file(fs, "/suspects.json");
	char *flat = squeeze(strdup(text));
	char item[4096];
	const char *at = flat;
	int n = 0;
	/* titles and texts, in order */
	for (const char *p = json; (p = strstr(p, "\"t")); n++) {
		const char *next;
		if (!strncmp(p, "\"title\": \"", 10))
			next = json_next(p, "\"title\": \"", item, sizeof item);
		else if (!strncmp(p, "\"text\": \"", 9))
			next = json_next(p, "\"text\": \"", item, sizeof item);
		else {
			p += 2;
			continue;
		}
		const char *found = strstr(at, squeeze(item));
		if (!found)
			fprintf(stderr, "suspects.json says, suspects does not: %s\n", item);
		assert_non_null(found);
		at = found + strlen(item);
		p = next;
	}
	assert_true(n > 3);
	/* paths: the JSON's, in order, are the text's "-> " lines */
	const char *tp = text;
	for (const char *p = strstr(json, "\"paths\": ["); p; p = strstr(p, "\"paths\": [")) {
		p += 10;
		while (*p == '"') {
			const char *e = strchr(p + 1, '"');
			assert_non_null(e);
			snprintf(item, sizeof item, "-> %.*s\n", (int)(e - p - 1), p + 1);
			const char *found = strstr(tp, item);
			assert_non_null(found);
			tp = found + strlen(item);
			p = e + 1;
			if (!strncmp(p, ", ", 2))
				p += 2;
		}
	}
	free(flat);
	free(text);
	free(json);
}

static void test_json_agrees(void **state)
{
	(void)state;
	const char *const scen[] = { "multicache", "churn", "company", "leakdrops" };
	for (size_t k = 0; k < sizeof scen / sizeof scen[0]; k++) {
		struct hfs *fs = open_scenario(scen[k], 0, 0);
		check_json_agrees(fs);
		hfs_close(fs);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_domtree_children),
		cmocka_unit_test(test_domtree_threads),
		cmocka_unit_test(test_accumulation_point),
		cmocka_unit_test(test_big_objects),
		cmocka_unit_test(test_key_retained),
		cmocka_unit_test(test_key_retained_long_chain),
		cmocka_unit_test(test_accumulated),
		cmocka_unit_test(test_survivors),
		cmocka_unit_test(test_small_decisions),
		cmocka_unit_test(test_report_no_gc),
		cmocka_unit_test(test_same_with_threads),
		cmocka_unit_test(test_multicache),
		cmocka_unit_test(test_buggystack),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_gcstress),
		cmocka_unit_test(test_company),
		cmocka_unit_test(test_leakdrops),
		cmocka_unit_test(test_json_agrees),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

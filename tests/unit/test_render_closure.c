/* test_render_closure.c - closures, dominators and roots in the tree (fs/render_closure.c): closure
 * metrics, closure groups, dominators, roots, paths, thread stacks and
 * ad-hoc groups, on synth multicache.  Expected values come from the
 * scenario's construction (docs/scenarios.md, multicache): N Products, each
 * with a name String (24) over a byte[15] (32), an int[1..8], a Long (24)
 * and one HashMap$Node (32) in each of the two static maps (HashMap: 48);
 * with N = 1000 each map's table is a HashMap$Node[2048] (16 + 4 * 2048).
 * The int[] lengths are random: their bytes come from the census
 * (by-type/int[]/shallow_size), not from closure code.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fs/tree.h"
#include "model/synth.h"

#define N 1000
#define TABLE_BYTES (16 + 4 * 2048)
#define MAP_BYTES 48
#define NODE_BYTES 32
#define PRODUCT_BYTES 32
#define LONG_BYTES 24
#define STRING_BYTES 24
#define NAME_BYTES 32 /* byte[15]: "product-1000000" .. "product-1000999" */

static char tmpdir[] = "/tmp/heapfs-test-closure-XXXXXX";
static struct hfs *fs;

static int setup(void **st)
{
	(void)st;
	char path[256], err[256] = "";
	struct synth_opts o;
	struct htr_err herr;
	if (!mkdtemp(tmpdir))
		return -1;
	synth_opts_init(&o);
	o.objects = N;
	o.gcs = 2;
	snprintf(path, sizeof path, "%s/mc.htr", tmpdir);
	if (synth_write("multicache", &o, path, err, sizeof err))
		return -1;
	struct hfs_opts ho = { 0 };
	return hfs_open(&fs, path, &ho, &herr);
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	hfs_close(fs);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The file's text, NUL-terminated (caller frees); fails the test if the
 * read fails. */
static char *cat(const char *path)
{
	struct buf b;
	buf_init(&b);
	int rc = hfs_read(fs, path, &b);
	if (rc)
		fail_msg("%s: %s", path, strerror(-rc));
	buf_putc(&b, '\0');
	return (char *)b.data;
}

static uint64_t cat_u64(const char *path)
{
	char *s = cat(path);
	uint64_t v = strtoull(s, NULL, 10);
	free(s);
	return v;
}

/* Field k (0-based) of line l (0-based) of a TSV text, into out. */
static int field(const char *text, int l, int k, char *out, size_t cap)
{
	const char *p = text;
	for (int i = 0; i < l; i++) {
		p = strchr(p, '\n');
		if (!p)
			return -1;
		p++;
	}
	for (int i = 0; i < k; i++) {
		const char *tab = strchr(p, '\t');
		const char *nl = strchr(p, '\n');
		if (!tab || (nl && nl < tab))
			return -1;
		p = tab + 1;
	}
	size_t n = strcspn(p, "\t\n");
	if (n >= cap)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static int lines(const char *text)
{
	int n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

static uint64_t map_id(const char *static_path)
{
	char *s = cat(static_path), f[64];
	assert_int_equal(field(s, 1, 0, f, sizeof f), 0);
	free(s);
	return strtoull(f, NULL, 10);
}

#define BYID "/gc/latest/roots/static/example.multicache.IdCache/byId"
#define BYNAME "/gc/latest/roots/static/example.multicache.NameCache/byName"

static const uint64_t byid_bytes = MAP_BYTES + TABLE_BYTES + (uint64_t)N * (NODE_BYTES + LONG_BYTES);
static const uint64_t byname_bytes = MAP_BYTES + TABLE_BYTES + (uint64_t)N * NODE_BYTES;

/* roots/static/<class>/<field>: the map, its type and its retained size;
 * objects/<id>/retained_size agrees (the dominator subtree). */
static void test_static_roots(void **st)
{
	(void)st;
	char *s = cat(BYID), f[64];
	assert_int_equal(lines(s), 2);
	assert_int_equal(field(s, 1, 1, f, sizeof f), 0);
	assert_string_equal(f, "java.util.HashMap");
	assert_int_equal(field(s, 1, 2, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), byid_bytes);
	free(s);
	char path[128];
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/retained_size", map_id(BYID));
	assert_int_equal(cat_u64(path), byid_bytes);
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/retained_size", map_id(BYNAME));
	assert_int_equal(cat_u64(path), byname_bytes);
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/dominator", map_id(BYID));
	s = cat(path);
	assert_string_equal(s, "roots\n");
	free(s);
}

/* dominators/top: the two maps and their tables first, the IdCache one
 * (holding the most) on top, named by its static field. */
static void test_dominators_top(void **st)
{
	(void)st;
	char *s = cat("/gc/latest/dominators/top"), f[128];
	static const char *types[] = { "java.util.HashMap", "java.util.HashMap$Node[]",
				       "java.util.HashMap", "java.util.HashMap$Node[]" };
	const uint64_t bytes[] = { byid_bytes, byid_bytes - MAP_BYTES, byname_bytes,
				   byname_bytes - MAP_BYTES };
	for (int r = 0; r < 4; r++) {
		assert_int_equal(field(s, r + 1, 1, f, sizeof f), 0);
		assert_string_equal(f, types[r]);
		assert_int_equal(field(s, r + 1, 2, f, sizeof f), 0);
		assert_int_equal(strtoull(f, NULL, 10), bytes[r]);
	}
	assert_int_equal(field(s, 1, 6, f, sizeof f), 0);
	assert_non_null(strstr(f, "example.multicache.IdCache.byId"));
	/* retained counts: map + table + N nodes + N Longs */
	assert_int_equal(field(s, 1, 3, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), 2 + 2 * N);
	free(s);
}

/* An ad-hoc group of the given selectors; its retained metrics. */
static void make_group(const char *name, const char *members)
{
	char path[128], msg[512] = "";
	snprintf(path, sizeof path, "/groups/%s", name);
	assert_int_equal(hfs_mkdir(fs, path), 0);
	snprintf(path, sizeof path, "/groups/%s/members", name);
	int rc = hfs_write_file(fs, path, members, strlen(members), msg, sizeof msg);
	if (rc)
		fail_msg("%s: %s", path, msg);
}

static uint64_t group_u64(const char *name, const char *file)
{
	char path[256];
	snprintf(path, sizeof path, "/groups/%s/%s", name, file);
	return cat_u64(path);
}

/* The acceptance: each map alone retains its table and nodes (and byId
 * its Long keys) but no Product; both together retain every Product with
 * its name String, byte[] and int[]. */
static void test_adhoc_groups(void **st)
{
	(void)st;
	char sel[128];
	uint64_t a = map_id(BYID), b = map_id(BYNAME);
	uint64_t int_bytes = cat_u64("/gc/latest/by-type/int[]/shallow_size");
	snprintf(sel, sizeof sel, "%" PRIu64 "\n", a);
	make_group("byid", sel);
	snprintf(sel, sizeof sel, "%" PRIu64 "\n", b);
	make_group("byname", sel);
	snprintf(sel, sizeof sel, "%" PRIu64 "\n%" PRIu64 "\n", a, b);
	make_group("both", sel);

	assert_int_equal(group_u64("byid", "retained_count"), 2 + 2 * N);
	assert_int_equal(group_u64("byid", "retained_size"), byid_bytes);
	assert_int_equal(group_u64("byname", "retained_count"), 2 + N);
	assert_int_equal(group_u64("byname", "retained_size"), byname_bytes);
	struct hfs_attr at;
	assert_int_equal(hfs_getattr(fs, "/groups/byid/closure/retained/by-type/example.multicache.Product",
				     &at), -ENOENT);
	assert_int_equal(hfs_getattr(fs, "/groups/byname/closure/retained/by-type/java.lang.String",
				     &at), -ENOENT);

	uint64_t both = 2 * (MAP_BYTES + TABLE_BYTES) +
			(uint64_t)N * (2 * NODE_BYTES + PRODUCT_BYTES + LONG_BYTES + STRING_BYTES +
				       NAME_BYTES) + int_bytes;
	assert_int_equal(group_u64("both", "count"), 2);
	assert_int_equal(group_u64("both", "retained_count"), 4 + 7 * N);
	assert_int_equal(group_u64("both", "retained_size"), both);
	assert_int_equal(group_u64("both", "deep_size"), both);
	static const char *types[] = { "example.multicache.Product", "java.lang.String", "byte[]",
				       "int[]" };
	for (size_t k = 0; k < 4; k++) {
		char f[160];
		snprintf(f, sizeof f, "closure/retained/by-type/%s/count", types[k]);
		assert_int_equal(group_u64("both", f), N);
	}
	/* a group node's path as a selector: both maps at once */
	make_group("maps", "gc/latest/by-type/java.util.HashMap\n");
	assert_int_equal(group_u64("maps", "retained_size"), both);
	/* the same node in the tree */
	assert_int_equal(cat_u64("/gc/latest/by-type/java.util.HashMap/retained_size"), both);

	/* appending (what `echo id >> members` hands over): a new version */
	char msg[512];
	snprintf(sel, sizeof sel, "%" PRIu64 "\n%" PRIu64 "\n", a, b);
	assert_int_equal(hfs_write_file(fs, "/groups/byid/members", sel, strlen(sel), msg, sizeof msg), 0);
	assert_int_equal(group_u64("byid", "retained_size"), both);

	/* bad selectors are refused with a message, and change nothing */
	msg[0] = '\0';
	assert_int_equal(hfs_write_file(fs, "/groups/byname/members", "bogus\n", 6, msg, sizeof msg),
			 -EINVAL);
	assert_non_null(strstr(msg, "bogus"));
	assert_int_equal(hfs_write_file(fs, "/groups/byname/members", "99999999\n", 9, msg, sizeof msg),
			 -EINVAL);
	assert_int_equal(group_u64("byname", "retained_size"), byname_bytes);
	assert_int_equal(hfs_mkdir(fs, "/groups/both"), -EEXIST);
	assert_int_equal(hfs_mkdir(fs, "/gc/x"), -EROFS);
	assert_int_equal(hfs_rmdir(fs, "/groups/maps"), 0);
	assert_int_equal(hfs_getattr(fs, "/groups/maps", &at), -ENOENT);
	/* other GCs: groups/NAME/gc/NNN */
	assert_int_equal(hfs_getattr(fs, "/groups/both/gc/001/retained_size", &at), 0);
}

/* A Product: held by both maps, so dominated by the roots only; it alone
 * retains itself and its int[] (the name String is also a byName key). */
static void test_product_object(void **st)
{
	(void)st;
	char *ids = cat("/gc/latest/by-type/example.multicache.Product/objects"), path[160], f[64];
	uint64_t p = strtoull(ids, NULL, 10);
	free(ids);
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/dominator", p);
	char *s = cat(path);
	assert_string_equal(s, "roots\n");
	free(s);
	/* its int[]: the "data" field */
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/refs", p);
	s = cat(path);
	uint64_t data = 0;
	for (int l = 1; l < lines(s) + 0; l++) {
		if (!field(s, l, 0, f, sizeof f) && !strcmp(f, "data") && !field(s, l, 1, f, sizeof f))
			data = strtoull(f, NULL, 10);
	}
	free(s);
	assert_true(data != 0);
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/info", data);
	s = cat(path);
	char *sz = strstr(s, "\nsize\t");
	assert_non_null(sz);
	uint64_t int_size = strtoull(sz + 6, NULL, 10);
	free(s);
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/retained_size", p);
	assert_int_equal(cat_u64(path), PRODUCT_BYTES + int_size);

	/* path-to-root: map (static root), table, node, the Product */
	snprintf(path, sizeof path, "/gc/latest/objects/%" PRIu64 "/path-to-root", p);
	s = cat(path);
	assert_int_equal(lines(s), 5);
	assert_int_equal(field(s, 1, 1, f, sizeof f), 0);
	assert_string_equal(f, "java.util.HashMap");
	assert_int_equal(field(s, 2, 2, f, sizeof f), 0);
	assert_string_equal(f, "table");
	assert_int_equal(field(s, 3, 1, f, sizeof f), 0);
	assert_string_equal(f, "java.util.HashMap$Node");
	assert_int_equal(field(s, 4, 2, f, sizeof f), 0);
	assert_string_equal(f, "value");
	assert_int_equal(field(s, 4, 0, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), p);
	free(s);
}

/* roots of the Products: exactly the two static maps (§3.4.1). */
static void test_group_roots(void **st)
{
	(void)st;
	char *s = cat("/gc/latest/by-type/example.multicache.Product/roots"), f[128];
	assert_int_equal(lines(s), 3);
	assert_int_equal(field(s, 1, 0, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), map_id(BYID));
	assert_int_equal(field(s, 2, 0, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), map_id(BYNAME));
	assert_int_equal(field(s, 2, 3, f, sizeof f), 0);
	assert_non_null(strstr(f, "NameCache.byName"));
	free(s);
	s = cat("/gc/latest/by-type/example.multicache.Product/paths");
	assert_non_null(strstr(s, "# object "));
	assert_non_null(strstr(s, "\tvalue\n"));
	free(s);
}

/* paths under by-indirect-root/<root>/ start at that root: every Product
 * is held by both maps at the same distance, so a search from any root
 * would start each path at the same one of them.  The name may stop at the
 * class (static/C) or go down to the field; the path's first line names
 * only the roots of the group's name. */
static void test_paths_from_named_root(void **st)
{
	(void)st;
	static const struct {
		const char *dir, *via;
	} cases[] = {
		{ "static/example.multicache.IdCache/byId", "static example.multicache.IdCache.byId" },
		{ "static/example.multicache.NameCache/byName", "static example.multicache.NameCache.byName" },
		{ "static/example.multicache.NameCache", "static example.multicache.NameCache.byName" },
		{ "static/example.multicache.IdCache", "static example.multicache.IdCache.byId" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char path[256], f[128];
		snprintf(path, sizeof path, "/gc/latest/by-type/example.multicache.Product/by-indirect-root/%s/paths",
			 cases[k].dir);
		char *s = cat(path);
		int blocks = 0;
		for (int l = 0; l < lines(s); l++) {
			assert_int_equal(field(s, l, 0, f, sizeof f), 0);
			if (strncmp(f, "# object ", 9))
				continue;
			blocks++;
			assert_int_equal(field(s, l + 1, 1, f, sizeof f), 0);
			assert_string_equal(f, "java.util.HashMap");
			assert_int_equal(field(s, l + 1, 2, f, sizeof f), 0);
			if (strcmp(f, cases[k].via))
				fail_msg("%s: path %d starts at %s", cases[k].dir, blocks, f);
		}
		assert_int_equal(blocks, 10); /* PATH_SAMPLES of the N Products */
		free(s);
	}
}

/* by-type/table: deep and retained columns, retained size descending;
 * closure/transitive is the group of the deep closure's objects. */
static void test_type_table(void **st)
{
	(void)st;
	char *s = cat("/gc/latest/by-type/table"), f[64];
	const char *hdr = "name\tcount\tshallow_size\tdeep_count\tdeep_size\tretained_count"
			  "\tretained_size\n";
	assert_int_equal(strncmp(s, hdr, strlen(hdr)), 0);
	uint64_t prev = UINT64_MAX;
	for (int l = 1; l < lines(s); l++) {
		assert_int_equal(field(s, l, 6, f, sizeof f), 0);
		uint64_t v = strtoull(f, NULL, 10);
		assert_true(v <= prev);
		prev = v;
	}
	free(s);
	/* Product: itself and its int[] retained, its name String and byte[]
	 * reachable too (deep), nothing else */
	uint64_t int_bytes = cat_u64("/gc/latest/by-type/int[]/shallow_size");
	const char *P = "/gc/latest/by-type/example.multicache.Product";
	char path[160];
	snprintf(path, sizeof path, "%s/retained_size", P);
	assert_int_equal(cat_u64(path), (uint64_t)N * PRODUCT_BYTES + int_bytes);
	snprintf(path, sizeof path, "%s/deep_count", P);
	assert_int_equal(cat_u64(path), 4 * N);
	snprintf(path, sizeof path, "%s/closure/transitive/count", P);
	assert_int_equal(cat_u64(path), 4 * N);
	snprintf(path, sizeof path, "%s/closure/retained/count", P);
	assert_int_equal(cat_u64(path), 2 * N);
	snprintf(path, sizeof path, "%s/closure/transitive/by-type/java.lang.String/count", P);
	assert_int_equal(cat_u64(path), N);
}

/* threads/<thread>/stack from the LOCAL roots: each loader's run() frame
 * holds its Loader in slot 0. */
static void test_thread_stack(void **st)
{
	(void)st;
	char *s = cat("/gc/latest/threads/loader-1/stack"), f[128];
	assert_int_equal(lines(s), 2);
	assert_int_equal(field(s, 1, 0, f, sizeof f), 0);
	assert_string_equal(f, "0");
	assert_int_equal(field(s, 1, 1, f, sizeof f), 0);
	assert_string_equal(f, "example.multicache.Loader.run");
	assert_int_equal(field(s, 1, 4, f, sizeof f), 0);
	assert_string_equal(f, "example.multicache.Loader");
	free(s);
	s = cat("/gc/latest/roots/local/loader-1/0-example.multicache.Loader.run/0");
	assert_int_equal(lines(s), 2);
	free(s);
	/* roots/table: sorted by retained size, the byId map first */
	s = cat("/gc/latest/roots/table");
	assert_int_equal(field(s, 1, 1, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), map_id(BYID));
	assert_int_equal(field(s, 1, 4, f, sizeof f), 0);
	assert_int_equal(strtoull(f, NULL, 10), byid_bytes);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_roots),
		cmocka_unit_test(test_dominators_top),
		cmocka_unit_test(test_adhoc_groups),
		cmocka_unit_test(test_product_object),
		cmocka_unit_test(test_group_roots),
		cmocka_unit_test(test_paths_from_named_root),
		cmocka_unit_test(test_type_table),
		cmocka_unit_test(test_thread_stack),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

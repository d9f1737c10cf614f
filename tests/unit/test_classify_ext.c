/* test_classify_ext.c - the classifiers over per-GC analyses
 * (fs/classify_ext.h): by-role, by-ds, by-root, by-root-var,
 * by-indirect-root, by-indirect-root-var, by-first-root, through the tree
 * library.  Counts are read from `count` files (tables gain columns).
 *
 * Expected values come from the scenarios' construction
 * (docs/scenarios.md):
 *
 * multicache -n 100 -g 4, GC 4: P = 100 Products, 7P + 4 + 2 + 14 = 720
 *   objects.  Root objects (12, all distinct): 3 Thread (THREAD), 3 Class
 *   (SYSTEM_CLASS, "class"), 1 Object (JNI_GLOBAL), main's String[]
 *   (LOCAL main, Main.main, depth 0, slot 0), 2 Loaders (LOCAL loader-i,
 *   Loader.run, depth 0, slot 0), the two HashMaps (STATIC IdCache.byId,
 *   NameCache.byName).  Every Product is reached from both static maps.
 *   Ids 1000000.. are consecutive, so Long keys never share a bucket of
 *   byId's 256-slot table: every Product is at depth 3 from byId (map,
 *   table, node) and at least 3 from byName, and the nearest-root tie goes
 *   to the smaller name, IdCache.  The 13 objects no variable reaches:
 *   3 Threads, their 3 names (String + byte[]), 3 Classes, the JNI Object.
 *   GC 1 holds the first 25 Products: at gc/004/diff/001, 75 born, 25 perm.
 * company -n 12 -g 3: N = 12 Employees, D = 3 Departments, 121 objects;
 *   Figure 9's roles: Company mcontainer + container, LinkedList$Node
 *   recursive + transition, HashSet and Employee hcontainer + container,
 *   the HashSets' HashMaps icontainer, 2N + 1 Strings true-data.  Each
 *   Employee is a structure of its own and an element of the LinkedList
 *   and of one HashSet; its name and email are its elements; each inner
 *   HashMap is a member of its HashSet's structure.
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

#include "analyses/bitset.h"
#include "analyses/classify_ext.h"
#include "fs/tree.h"
#include "fs/tree_internal.h"
#include "model/synth.h"
#include "fixture_state.h"

static char g_dir[64], g_mc[128], g_co[128];

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof g_dir, "/tmp/test_classify_ext.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_mc, sizeof g_mc, "%s/mc.htr", g_dir);
	snprintf(g_co, sizeof g_co, "%s/co.htr", g_dir);
	fx_synth_trace("multicache", 100, 4, g_mc);
	fx_synth_trace("company", 12, 3, g_co);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_mc);
	unlink(g_co);
	rmdir(g_dir);
	return 0;
}

static struct hfs *open_tree(const char *path)
{
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	memset(&err, 0, sizeof err);
	int rc = hfs_open(&fs, path, &o, &err);
	if (rc)
		fprintf(stderr, "hfs_open: %s\n", err.msg);
	assert_int_equal(rc, 0);
	return fs;
}

static void expect_count(struct hfs *fs, const char *dir, const char *file, uint64_t want)
{
	char path[1024];
	struct buf b;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	buf_init(&b);
	int rc = hfs_read(fs, path, &b);
	if (rc)
		fprintf(stderr, "read %s: %d\n", path, rc);
	assert_int_equal(rc, 0);
	assert_int_equal(buf_putc(&b, 0), 0);
	char want_s[32];
	snprintf(want_s, sizeof want_s, "%llu\n", (unsigned long long)want);
	if (strcmp((char *)b.data, want_s))
		fprintf(stderr, "%s: got %s", path, (char *)b.data);
	assert_string_equal((char *)b.data, want_s);
	buf_free(&b);
}

static void expect_n(struct hfs *fs, const char *dir, uint64_t want)
{
	expect_count(fs, dir, "count", want);
}

static void expect_absent(struct hfs *fs, const char *path)
{
	struct hfs_attr a;
	assert_int_equal(hfs_getattr(fs, path, &a), -ENOENT);
}

#define MC "/gc/004"
#define PRODUCT MC "/by-type/example.multicache.Product"

static void test_by_root(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc);
	expect_n(fs, MC, 720);
	expect_n(fs, MC "/by-root/static", 2);
	expect_n(fs, MC "/by-root/static/example.multicache.IdCache/byId", 1);
	expect_n(fs, MC "/by-root/static/example.multicache.NameCache/byName", 1);
	expect_n(fs, MC "/by-root/thread", 3);
	expect_n(fs, MC "/by-root/thread/loader-1", 1);
	expect_n(fs, MC "/by-root/class", 3);
	expect_n(fs, MC "/by-root/jni-global", 1);
	expect_n(fs, MC "/by-root/local", 3);
	expect_n(fs, MC "/by-root/local/loader-2/0-example.multicache.Loader.run/0", 1);
	expect_n(fs, MC "/by-root/local/main/0-example.multicache.Main.main/0", 1);
	expect_n(fs, MC "/by-root/<not directly rooted>", 708);
	/* variables only */
	expect_n(fs, MC "/by-root-var/static", 2);
	expect_n(fs, MC "/by-root-var/local", 3);
	expect_n(fs, MC "/by-root-var/<not directly rooted by a variable>", 715);
	expect_absent(fs, MC "/by-root-var/thread");
	/* a hierarchy level classifies further */
	expect_n(fs, MC "/by-root/static/by-type/java.util.HashMap", 2);
	hfs_close(fs);
}

static void test_by_indirect_root(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc);
	/* the gc-roots paper's example: both static fields, each with all Products,
	 * the parents counting each Product once */
	expect_n(fs, PRODUCT, 100);
	expect_n(fs, PRODUCT "/by-indirect-root/static", 100);
	expect_n(fs, PRODUCT "/by-indirect-root/static/example.multicache.IdCache", 100);
	expect_n(fs, PRODUCT "/by-indirect-root/static/example.multicache.IdCache/byId", 100);
	expect_n(fs, PRODUCT "/by-indirect-root/static/example.multicache.NameCache/byName", 100);
	expect_absent(fs, PRODUCT "/by-indirect-root/local");
	/* names: shared by Product.name and the byName key */
	expect_n(fs, MC "/by-type/java.lang.String/by-indirect-root/static/"
		 "example.multicache.IdCache/byId", 100);
	expect_n(fs, MC "/by-type/java.lang.String/by-indirect-root/thread", 3);
	/* variables only: what threads, classes and JNI keep alive alone */
	expect_n(fs, MC "/by-indirect-root-var/<no variable>", 13);
	expect_n(fs, PRODUCT "/by-indirect-root-var/static", 100);
	/* nearest root */
	expect_n(fs, PRODUCT "/by-first-root/static/example.multicache.IdCache/byId", 100);
	expect_absent(fs, PRODUCT "/by-first-root/static/example.multicache.NameCache");
	/* in a diff, each side's GC has its own analysis */
	expect_count(fs, MC "/diff/001/by-type/example.multicache.Product/by-indirect-root/static",
		     "born_count", 75);
	expect_count(fs, MC "/diff/001/by-type/example.multicache.Product/by-indirect-root/static",
		     "perm_count", 25);
	/* a chain goes on below a multi-path level, still counting once */
	expect_n(fs, PRODUCT "/by-indirect-root/static/example.multicache.NameCache/byName/"
		 "by-kind/instance", 100);
	hfs_close(fs);
}

/* eng_indirect_root_trie (every level of by-indirect-root in one pass)
 * against the tree's classification level by level: a trie node's
 * children, with their counts, are exactly the rows of its directory's
 * table.  For the Products the trie is the construction's: both static
 * maps, 100 each. */
static void check_trie(struct hfs *fs, const char *group_dir, const char *type)
{
	const struct heap_state *s;
	uint64_t *bits = NULL;
	struct chain ch;
	struct buf tb;
	buf_init(&tb);
	uint32_t gci = 3, cls_type = cls_find(&fs->en.reg, "type");
	const struct cls_def *dir = cls_get(&fs->en.reg, cls_find(&fs->en.reg, "indirect-root"));
	assert_int_equal(eng_state_get(&fs->en, gci, &s), 0);
	chain_init(&ch);
	if (type) {
		uint32_t key = UINT32_MAX;
		for (uint32_t t = 0; t < fs->en.trace->ntypes; t++) {
			char sc[128];
			if (strcmp(trace_type_name(fs->en.trace, t, sc, sizeof sc), type) == 0)
				key = t;
		}
		assert_int_not_equal(key, UINT32_MAX);
		assert_int_equal(chain_push(&ch, ST_CLS, cls_type, key), 0);
	}
	assert_int_equal(group_members_bits(&fs->en.reg, s, &ch, &bits), 0);
	assert_int_equal(eng_indirect_root_trie(&fs->en, gci, s, bits, &tb), 0);
	const struct ir_node *t = (const struct ir_node *)tb.data;
	uint32_t nt = (uint32_t)(tb.len / sizeof *t);
	assert_true(nt >= 2);
	assert_int_equal(t[0].count, bitset_count(bits, s->n));
	free(bits);
	eng_state_put(&fs->en, s);
	for (uint32_t i = 0; i < nt; i++) {
		/* the directory of node i */
		char path[1024], rel[512] = "";
		uint32_t keys[8], n = 0;
		for (uint32_t x = i; x != 0; x = t[x].parent) {
			assert_true(t[x].parent < x);
			keys[n++] = t[x].key;
		}
		for (uint32_t k = n; k > 0; k--)
			snprintf(rel + strlen(rel), sizeof rel - strlen(rel), "/%s",
				 ks_name(&dir->ks, keys[k - 1]));
		snprintf(path, sizeof path, "%s/by-indirect-root%s", group_dir, rel);
		if (i)
			expect_n(fs, path, t[i].count);
		/* children: the trie's and the table's rows (name, count) */
		char tpath[1100];
		struct buf tab;
		buf_init(&tab);
		snprintf(tpath, sizeof tpath, "%s/table", path);
		int trc = hfs_read(fs, tpath, &tab);
		if (trc)
			fprintf(stderr, "%s: %d\n", tpath, trc);
		assert_int_equal(trc, 0);
		assert_int_equal(buf_putc(&tab, 0), 0);
		int rows = -1, kids = 0; /* the header is not a row */
		for (const char *p = (const char *)tab.data; *p; p = strchr(p, '\n') + 1) {
			rows++;
			if (!strchr(p, '\n'))
				break;
		}
		for (uint32_t j = i + 1; j < nt; j++) {
			if (t[j].parent != i)
				continue;
			char row[300];
			kids++;
			snprintf(row, sizeof row, "\n%s\t%llu\t", ks_name(&dir->ks, t[j].key),
				 (unsigned long long)t[j].count);
			if (!strstr((const char *)tab.data, row))
				fprintf(stderr, "%s: no row %s", tpath, row + 1);
			assert_non_null(strstr((const char *)tab.data, row));
		}
		assert_int_equal(rows, kids);
		buf_free(&tab);
	}
	if (type && strcmp(type, "example.multicache.Product") == 0) {
		/* node 0, static, the two classes, the two fields */
		assert_int_equal(nt, 6);
		for (uint32_t i = 1; i < nt; i++)
			assert_int_equal(t[i].count, 100);
	}
	buf_free(&tb);
}

static void test_indirect_root_trie(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc);
	check_trie(fs, PRODUCT, "example.multicache.Product");
	check_trie(fs, MC "/by-type/java.util.HashMap$Node", "java.util.HashMap$Node");
	check_trie(fs, MC "/by-type/java.lang.String", "java.lang.String");
	check_trie(fs, MC, NULL);
	hfs_close(fs);
}

static void test_by_role(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_co);
	const char *g = "/gc/003/by-type";
	char p[512];
#define AT(type, rest) (snprintf(p, sizeof p, "%s/%s%s", g, type, rest), p)
	expect_n(fs, AT("example.company.Company", "/by-role/mcontainer"), 1);
	expect_n(fs, AT("example.company.Company", "/by-role/container"), 1);
	expect_n(fs, AT("java.util.LinkedList", "/by-role/container"), 1);
	expect_n(fs, AT("java.util.LinkedList$Node", "/by-role/recursive"), 12);
	expect_n(fs, AT("java.util.LinkedList$Node", "/by-role/transition"), 12);
	expect_n(fs, AT("java.util.HashSet", "/by-role/hcontainer"), 3);
	expect_n(fs, AT("java.util.HashSet", "/by-role/container"), 3);
	expect_n(fs, AT("java.util.HashMap", "/by-role/icontainer"), 3);
	expect_n(fs, AT("example.company.Employee", "/by-role/hcontainer"), 12);
	expect_n(fs, AT("example.company.Employee", "/by-role/container"), 12);
	expect_n(fs, AT("example.company.Employee", ""), 12); /* two roles, counted once */
	expect_n(fs, AT("java.lang.String", "/by-role/true-data"), 25);
	expect_n(fs, AT("char[]", "/by-role/primitive-array"), 12);
	expect_n(fs, AT("java.util.HashMap$Node[]", "/by-role/reference-array"), 3);
	/* the other way round: roles first, then types */
	expect_n(fs, "/gc/003/by-role/icontainer/by-type/java.util.HashMap", 3);
	hfs_close(fs);
#undef AT
}

static void test_by_ds(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_co);
	const char *e = "/gc/003/by-type/example.company.Employee/by-ds";
	char p[512];
	snprintf(p, sizeof p, "%s/member-of-example.company.Employee", e);
	expect_n(fs, p, 12);
	snprintf(p, sizeof p, "%s/element-of-java.util.LinkedList", e);
	expect_n(fs, p, 12);
	snprintf(p, sizeof p, "%s/element-of-java.util.HashSet", e);
	expect_n(fs, p, 12);
	expect_absent(fs, "/gc/003/by-type/example.company.Employee/by-ds/none");
	expect_n(fs, "/gc/003/by-type/java.util.HashMap/by-ds/member-of-java.util.HashSet", 3);
	expect_n(fs, "/gc/003/by-type/java.lang.String/by-ds/element-of-example.company.Employee", 24);
	hfs_close(fs);
}

/* The analysis classifiers' names are reserved. */
static void test_names_reserved(void **state)
{
	(void)state;
	struct hfs *fs = open_tree(g_mc);
	char msg[256] = "";
	assert_int_equal(hfs_write_file(fs, "/classifiers/root", "type", 4, msg, sizeof msg), -EINVAL);
	hfs_close(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_root),
		cmocka_unit_test(test_by_indirect_root),
		cmocka_unit_test(test_indirect_root_trie),
		cmocka_unit_test(test_by_role),
		cmocka_unit_test(test_by_ds),
		cmocka_unit_test(test_names_reserved),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

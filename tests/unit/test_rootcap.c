/* test_rootcap.c - by-indirect-root's cap keeps the roots that retain the
 * most (analyses/classify_ext.c).  An object X reached from 21 static
 * roots: A.f00 .. A.f19 each hold a small Holder pointing at X, and Z.big
 * holds an array of 100 Leafs and X.  By name, A's 16 first fields came
 * first and Z.big, the root that retains most, was cut off under
 * <many roots>; ranked by retained bytes it must be among X's 16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/engine.h"
#include "analyses/groups.h"
#include "model/htr.h"
#include "model/htr_writer.h"

enum { T_A, T_Z, T_HOLDER, T_ARR, T_LEAF, T_SHARED };
#define NA 20
#define NLEAF 100
#define ID_X 100
#define ID_BIG 200

static void write_trace(const char *path)
{
	struct htr_writer *w;
	char names[NA][16];
	struct htr_field af[NA], zf[1] = { { .name = "big", .sig = "[Ljava/lang/Object;",
					    .flags = HTR_FIELD_STATIC | HTR_FIELD_REF } };
	struct htr_field hf[1] = { { .name = "x", .sig = "LShared;", .flags = HTR_FIELD_REF } };
	for (int i = 0; i < NA; i++) {
		snprintf(names[i], sizeof names[i], "f%02d", i);
		af[i] = (struct htr_field){ .name = names[i], .sig = "LHolder;",
					    .flags = HTR_FIELD_STATIC | HTR_FIELD_REF };
	}
	struct htr_type_def types[] = {
		{ T_A, "A", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, NA, af },
		{ T_Z, "Z", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 1, zf },
		{ T_HOLDER, "Holder", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 1, hf },
		{ T_ARR, "java.lang.Object[]", HTR_TYPE_OBJ_ARRAY, 16, 4, HTR_NO_TYPE, 0, NULL },
		{ T_LEAF, "Leaf", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 0, NULL },
		{ T_SHARED, "Shared", HTR_TYPE_INSTANCE, 16, 0, HTR_NO_TYPE, 0, NULL },
	};
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		assert_int_equal(htr_write_type(w, &types[i]), 0);
	uint64_t t = 1000000;
	struct htr_alloc a = { .type = T_HOLDER, .site = HTR_NO_SITE, .size = 16, .array_length = -1 };
	for (uint64_t id = 1; id <= NA; id++) {
		a.id = id;
		a.time_ns = t++;
		assert_int_equal(htr_write_alloc(w, &a), 0);
	}
	a = (struct htr_alloc){ .id = ID_X, .type = T_SHARED, .site = HTR_NO_SITE, .size = 16,
				.array_length = -1, .time_ns = t++ };
	assert_int_equal(htr_write_alloc(w, &a), 0);
	a = (struct htr_alloc){ .id = ID_BIG, .type = T_ARR, .site = HTR_NO_SITE,
				.size = 16 + 4 * (NLEAF + 1), .array_length = NLEAF + 1, .time_ns = t++ };
	assert_int_equal(htr_write_alloc(w, &a), 0);
	for (uint64_t k = 1; k <= NLEAF; k++) {
		a = (struct htr_alloc){ .id = ID_BIG + k, .type = T_LEAF, .site = HTR_NO_SITE,
					.size = 24, .array_length = -1, .time_ns = t++ };
		assert_int_equal(htr_write_alloc(w, &a), 0);
	}
	struct htr_gc_event g = { .gc = 1, .time_ns = t++, .used = 0, .capacity = UINT64_MAX,
				  .flags = HTR_GC_HAS_GRAPH, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	struct htr_root roots[NA + 1];
	memset(roots, 0, sizeof roots);
	for (uint32_t i = 0; i < NA; i++)
		roots[i] = (struct htr_root){ .kind = HTR_ROOT_STATIC, .object = i + 1, .type = T_A, .field = i };
	roots[NA] = (struct htr_root){ .kind = HTR_ROOT_STATIC, .object = ID_BIG, .type = T_Z, .field = 0 };
	assert_int_equal(htr_write_roots(w, 1, NA + 1, roots), 0);
	struct htr_ref to_x = { 0, ID_X };
	for (uint64_t id = 1; id <= NA; id++)
		assert_int_equal(htr_write_graph_object(w, id, 1, &to_x), 0);
	assert_int_equal(htr_write_graph_object(w, ID_X, 0, NULL), 0);
	struct htr_ref big[NLEAF + 1];
	for (uint32_t k = 0; k < NLEAF; k++)
		big[k] = (struct htr_ref){ k, ID_BIG + 1 + k };
	big[NLEAF] = (struct htr_ref){ NLEAF, ID_X };
	assert_int_equal(htr_write_graph_object(w, ID_BIG, NLEAF + 1, big), 0);
	for (uint64_t k = 1; k <= NLEAF; k++)
		assert_int_equal(htr_write_graph_object(w, ID_BIG + k, 0, NULL), 0);
	g.time_ns = t++;
	g.cause = NULL;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
	assert_int_equal(htr_writer_close(w), 0);
}

/* The child of node at under key name, or UINT32_MAX. */
static uint32_t child_named(const struct cls_def *d, const struct cls_trie_node *t, uint32_t at,
			    const char *name)
{
	for (uint32_t k = 0; k < t[at].nchildren; k++)
		if (!strcmp(ks_name(&d->ks, t[t[at].first_child + k].key), name))
			return t[at].first_child + k;
	return UINT32_MAX;
}

static void test_cap_keeps_the_retaining_root(void **st)
{
	(void)st;
	char dir[] = "/tmp/test_rootcap.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t.htr", dir);
	write_trace(path);
	struct engine en;
	struct htr_err err;
	struct eng_opts o = { .state_budget = 64u << 20, .result_budget = 16u << 20 };
	memset(&err, 0, sizeof err);
	assert_int_equal(eng_open(&en, path, &o, &err), 0);
	uint32_t ir = cls_find(&en.reg, "indirect-root"), ty = cls_find(&en.reg, "type");
	const struct cls_def *d = cls_get(&en.reg, ir);
	struct chain ch;
	chain_init(&ch);
	assert_int_equal(chain_push(&ch, ST_CLS, ty, T_SHARED), 0); /* X alone */
	struct rc_entry *e;
	const struct cls_trie_node *t;
	uint32_t n;
	assert_int_equal(eng_hier_trie_get(&en, 0, &ch, ir, &e, &t, &n), 0);
	/* 21 roots reach X: 16 kept, and <many roots> */
	assert_true(child_named(d, t, 0, "<many roots>") != UINT32_MAX);
	uint32_t st_node = child_named(d, t, 0, "static");
	assert_true(st_node != UINT32_MAX);
	uint32_t z = child_named(d, t, st_node, "Z");
	assert_true(z != UINT32_MAX);                    /* by name, Z came 21st */
	assert_true(child_named(d, t, z, "big") != UINT32_MAX);
	uint32_t a = child_named(d, t, st_node, "A");
	assert_true(a != UINT32_MAX);
	assert_int_equal(t[a].nchildren, 15);            /* 16 kept: Z.big and 15 of A's */
	eng_put(&en, e);
	eng_destroy(&en);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_keeps_the_retaining_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

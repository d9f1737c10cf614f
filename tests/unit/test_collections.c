/* test_collections.c - empty collections from structure
 * (analyses/collections.h), on a hand-built heap whose truth is written
 * down below: which objects are collections and which of them are empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analyses/collections.h"
#include "fixture_state.h"
#include "model/htr.h"

enum { T_AMAP, T_ACOLL, T_ASET, T_HMAP, T_HSET, T_ARR, T_ENTRY, T_WRAP, T_MYMAP, T_N };

static struct trace_field f_table = { .name = "table" }, f_map = { .name = "map" },
			  f_value = { .name = "value" }, f_keyset = { .name = "keySet" };

static void make_trace(struct trace *t, struct trace_type *ty)
{
	memset(t, 0, sizeof *t);
	memset(ty, 0, sizeof *ty * T_N);
	ty[T_AMAP] = (struct trace_type){ .name = "java.util.AbstractMap", .super_id = HTR_NO_TYPE };
	ty[T_ACOLL] = (struct trace_type){ .name = "java.util.AbstractCollection", .super_id = HTR_NO_TYPE };
	ty[T_ASET] = (struct trace_type){ .name = "java.util.AbstractSet", .super_id = T_ACOLL };
	ty[T_HMAP] = (struct trace_type){ .name = "java.util.HashMap", .super_id = T_AMAP,
					  .nfields = 1, .fields = &f_table };
	ty[T_HSET] = (struct trace_type){ .name = "java.util.HashSet", .super_id = T_ASET,
					  .nfields = 1, .fields = &f_map };
	ty[T_ARR] = (struct trace_type){ .name = "java.util.HashMap$Node[]", .kind = HTR_TYPE_OBJ_ARRAY,
					 .super_id = HTR_NO_TYPE };
	ty[T_ENTRY] = (struct trace_type){ .name = "java.util.HashMap$Node", .super_id = HTR_NO_TYPE };
	/* a value wrapper: one reference, no collection in its ancestry */
	ty[T_WRAP] = (struct trace_type){ .name = "com.fasterxml.jackson.databind.node.TextNode",
					  .super_id = HTR_NO_TYPE, .nfields = 1, .fields = &f_value };
	/* a library's map built on AbstractMap; its only field is a view */
	ty[T_MYMAP] = (struct trace_type){ .name = "org.lib.MyMap", .super_id = T_AMAP,
					   .nfields = 1, .fields = &f_keyset };
	t->types = ty;
	t->ntypes = T_N;
}

static void test_empty_collections(void **st)
{
	(void)st;
	struct trace t;
	struct trace_type ty[T_N];
	make_trace(&t, ty);
	/* objects (dense index: what it is)
	 *  0 holder (a wrapper type, root)       8 HashMap, table -> 9 (one entry 10)
	 *  1 HashMap, table null: EMPTY          9 Node[] holding 10
	 *  2 HashMap, table -> 3: EMPTY          10 Node
	 *  3 Node[] of nulls, only 2 holds it    11 HashSet, map -> 12: EMPTY
	 *  4 HashMap, table -> 5: EMPTY          12 HashMap, nothing: EMPTY
	 *  5 Node[0] shared with 6               13 TextNode -> 14 (not a collection)
	 *  6 HashMap, table -> 5: EMPTY          14 a string-like object
	 *  7 MyMap, keySet -> 15: EMPTY          15 an object (the view)
	 *  16 HashSet, map -> 8: not empty       */
	enum { NOBJ = 17 };
	uint32_t info_of[NOBJ];
	for (uint32_t i = 0; i < NOBJ; i++)
		info_of[i] = i;
	struct fx_edge e[] = {
		{ 0, 1 }, { 0, 2 }, { 0, 4 }, { 0, 6 }, { 0, 7 }, { 0, 8 }, { 0, 11 }, { 0, 13 },
		{ 0, 16 }, { 2, 3 }, { 4, 5 }, { 6, 5 }, { 7, 15 }, { 8, 9 }, { 9, 10 }, { 11, 12 },
		{ 13, 14 }, { 16, 8 },
	};
	uint32_t root = 0;
	struct heap_state *s = fx_state(NOBJ, info_of, NOBJ, e, sizeof e / sizeof *e, &root, 1);
	struct objinfo *oi = (struct objinfo *)s->infos;
	const uint32_t type_of[NOBJ] = { T_WRAP, T_HMAP, T_HMAP, T_ARR, T_HMAP, T_ARR, T_HMAP, T_MYMAP,
					 T_HMAP, T_ARR, T_ENTRY, T_HSET, T_HMAP, T_WRAP, T_ENTRY,
					 T_ENTRY, T_HSET };
	for (uint32_t i = 0; i < NOBJ; i++) {
		oi[i].type = type_of[i];
		oi[i].size = 48;
		oi[i].array_length = type_of[i] == T_ARR ? 16 : -1;
	}
	oi[5].array_length = 0; /* the shared empty table */
	oi[5].size = 16;

	struct buf out;
	buf_init(&out);
	assert_int_equal(coll_census(&t, s, &out), 0);
	const struct coll_stat *c = (const struct coll_stat *)out.data;
	size_t n = out.len / sizeof *c;
	uint64_t count[T_N] = { 0 }, empty[T_N] = { 0 }, bytes[T_N] = { 0 };
	for (size_t k = 0; k < n; k++) {
		assert_true(c[k].type < T_N);
		count[c[k].type] = c[k].count;
		empty[c[k].type] = c[k].empty;
		bytes[c[k].type] = c[k].empty_bytes;
	}
	assert_int_equal(count[T_HMAP], 6);  /* 1 2 4 6 8 12 */
	assert_int_equal(empty[T_HMAP], 5);  /* all but 8 */
	/* 48 each; 2 also owns its null-only table (48); 5 is shared */
	assert_int_equal(bytes[T_HMAP], 5 * 48 + 48);
	assert_int_equal(count[T_HSET], 2);
	assert_int_equal(empty[T_HSET], 1);  /* 11 (its map 12 is empty), not 16 */
	assert_int_equal(bytes[T_HSET], 48 + 48);
	assert_int_equal(count[T_MYMAP], 1);
	assert_int_equal(empty[T_MYMAP], 1); /* a view is not an element */
	assert_int_equal(count[T_WRAP], 0);  /* value wrappers are not collections */
	assert_int_equal(count[T_ENTRY] + count[T_ARR], 0);
	buf_free(&out);
	heap_state_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_collections),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

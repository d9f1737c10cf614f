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
					 .elem_size = 8, .super_id = HTR_NO_TYPE };
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
		oi[i].site = i == 8 ? 7 : 3;
	}
	oi[5].array_length = 0; /* the shared empty table */
	oi[5].size = 16;

	struct buf out;
	buf_init(&out);
	assert_int_equal(coll_census(&t, s, &out), 0);
	const struct coll_stat *c = (const struct coll_stat *)out.data;
	size_t n = out.len / sizeof *c;
	uint64_t count[T_N] = { 0 }, empty[T_N] = { 0 }, bytes[T_N] = { 0 };
	const struct coll_stat *by[T_N] = { 0 };
	for (size_t k = 0; k < n; k++) {
		assert_true(c[k].type < T_N);
		count[c[k].type] = c[k].count;
		empty[c[k].type] = c[k].empty;
		bytes[c[k].type] = c[k].empty_bytes;
		by[c[k].type] = &c[k];
	}
	/* fill ratio: HashMaps 2 (16 slots, none used), 4 and 6 (the shared
	 * table of length 0), 8 (16 slots, 1 used: sparse, not empty); 1 and
	 * 12 have no table.  Unused slots cost 8 bytes (the array's
	 * reference size). */
	assert_non_null(by[T_HMAP]);
	assert_int_equal(by[T_HMAP]->with_slots, 4);
	assert_int_equal(by[T_HMAP]->slots, 32);
	assert_int_equal(by[T_HMAP]->used, 1);
	assert_int_equal(by[T_HMAP]->sparse, 1);
	assert_int_equal(by[T_HMAP]->wasted, (16 + 15) * 8);
	/* HashSet 16 through its map 8; 11's map 12 has no table */
	assert_int_equal(by[T_HSET]->with_slots, 1);
	assert_int_equal(by[T_HSET]->slots, 16);
	assert_int_equal(by[T_HSET]->used, 1);
	assert_int_equal(by[T_HSET]->sparse, 1);
	assert_int_equal(by[T_HSET]->wasted, 15 * 8);
	assert_int_equal(by[T_MYMAP]->with_slots, 0);
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

	/* per (type, site): HashMap 8 alone at site 7; rows by waste, largest first */
	buf_reset(&out);
	assert_int_equal(coll_census_by_site(&t, s, &out), 0);
	c = (const struct coll_stat *)out.data;
	n = out.len / sizeof *c;
	int seen7 = 0;
	for (size_t k = 0; k < n; k++) {
		if (k)
			assert_true(c[k - 1].wasted + c[k - 1].empty_bytes >= c[k].wasted + c[k].empty_bytes);
		if (c[k].type == T_HMAP && c[k].site == 7) {
			seen7 = 1;
			assert_int_equal(c[k].count, 1);
			assert_int_equal(c[k].slots, 16);
			assert_int_equal(c[k].used, 1);
		} else if (c[k].type == T_HMAP) {
			assert_int_equal(c[k].site, 3);
			assert_int_equal(c[k].count, 5);
			assert_int_equal(c[k].empty, 5);
		}
	}
	assert_true(seen7);
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

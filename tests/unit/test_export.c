/* test_export.c - the Parquet writer's pieces (fs/parquet.h) against
 * bytes worked out by hand from the specifications: the RLE/bit-packed
 * hybrid encoding (parquet-format's Encodings.md, whose worked example is
 * 0..7 at width 3), PLAIN booleans, Thrift's compact protocol (field
 * deltas, long ids, zigzag, lists, nested structs, bools in the field
 * header), and a whole file's framing.  That DuckDB reads the files is
 * tests/export/check.mjs's job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fs/parquet.h"

static void assert_bytes(const struct buf *b, const uint8_t *want, size_t n)
{
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

static void test_hybrid_spec_example(void **st)
{
	(void)st;
	/* Encodings.md: 0..7 at bit width 3 pack to 10001000 11000110 11111010 */
	const uint32_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	const uint8_t want[] = { 0x03 /* 1 group, bit-packed */, 0x88, 0xc6, 0xfa };
	struct buf b;
	buf_init(&b);
	assert_int_equal(pq_hybrid_bitpacked(&b, v, 8, 3), 0);
	assert_bytes(&b, want, sizeof want);
	buf_free(&b);
}

static void test_hybrid_padding_and_runs(void **st)
{
	(void)st;
	/* 3 values: one group, the last 5 slots zero */
	const uint32_t v[3] = { 1, 2, 3 };
	const uint8_t want3[] = { 0x03, 0x01, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00 };
	struct buf b;
	buf_init(&b);
	assert_int_equal(pq_hybrid_bitpacked(&b, v, 3, 8), 0);
	assert_bytes(&b, want3, sizeof want3);
	/* 520 ones at width 1: 65 groups, a run of 63 (header 63<<1|1) and
	 * one of 2 (header 2<<1|1) */
	uint32_t *ones = malloc(520 * sizeof *ones);
	assert_non_null(ones);
	for (int i = 0; i < 520; i++)
		ones[i] = 1;
	buf_reset(&b);
	assert_int_equal(pq_hybrid_bitpacked(&b, ones, 520, 1), 0);
	assert_int_equal(b.len, 1 + 63 + 1 + 2);
	assert_int_equal(b.data[0], 0x7f);
	assert_int_equal(b.data[1], 0xff);
	assert_int_equal(b.data[64], 0x05);
	assert_int_equal(b.data[65], 0xff);
	assert_int_equal(b.data[66], 0xff);
	assert_int_equal(pq_hybrid_bitpacked(&b, ones, 8, 0), -EINVAL);
	free(ones);
	buf_free(&b);
}

static void test_pack_bits(void **st)
{
	(void)st;
	/* least significant bit first: 1,0,1,1,0,0,0,1 = 0b10001101 */
	const uint8_t v[9] = { 1, 0, 1, 1, 0, 0, 0, 1, 1 };
	const uint8_t want[] = { 0x8d, 0x01 };
	struct buf b;
	buf_init(&b);
	assert_int_equal(pq_pack_bits(&b, v, 9), 0);
	assert_bytes(&b, want, sizeof want);
	buf_free(&b);
}

static void test_thrift_compact(void **st)
{
	(void)st;
	struct buf b;
	struct tc t;
	buf_init(&b);
	tc_init(&t, &b);
	tc_struct_begin(&t, 0);
	tc_i32(&t, 1, 3);          /* delta 1, i32: 0x15; zigzag 3 = 6 */
	tc_i64(&t, 3, -1);         /* delta 2, i64: 0x26; zigzag -1 = 1 */
	tc_bin(&t, 20, "ab", 2);   /* delta 17: type byte 0x08, id zigzag 40, len 2 */
	tc_struct_begin(&t, 21);   /* delta 1, struct: 0x1c */
	tc_bool(&t, 1, 1);         /* inside, from 0: delta 1, true: 0x11 */
	tc_struct_end(&t);         /* stop */
	tc_list_begin(&t, 22, TC_I32, 2); /* delta 1 (from 21, the outer struct's), list 0x19; 2 x i32: 0x25 */
	tc_elem_i32(&t, 1);
	tc_elem_i32(&t, 2);
	tc_list_begin(&t, 23, TC_BINARY, 15); /* 15 elements: 0xf8 then varint 15 */
	for (int i = 0; i < 15; i++)
		tc_elem_bin(&t, "", 0);
	tc_i32(&t, 5, 300);        /* a smaller id: type byte and zigzag id 10; zigzag 300 = 600 */
	tc_struct_end(&t);
	const uint8_t want[] = { 0x15, 0x06, 0x26, 0x01, 0x08, 0x28, 0x02, 'a', 'b', 0x1c, 0x11, 0x00,
				 0x19, 0x25, 0x02, 0x04, 0x19, 0xf8, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 0, 0, 0x05, 0x0a, 0xd8, 0x04, 0x00 };
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.depth, 0);
	assert_bytes(&b, want, sizeof want);
	buf_free(&b);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static uint8_t data[1 << 16];
	*len = fread(data, 1, sizeof data, f);
	fclose(f);
	return data;
}

/* A file of three rows: framing ("PAR1", footer length), the footer's
 * names, and the writer's refusals. */
static void test_file(void **st)
{
	(void)st;
	char path[] = "/tmp/test_export.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	static const struct pq_column cols[] = {
		{ "id", PQ_INT64, 0 }, { "type", PQ_DICT, 1 }, { "flag", PQ_BOOL, 0 }, { "note", PQ_STRING, 1 },
	};
	const char *names[] = { "a,b \"c\"\n", "int[]" };
	const uint32_t lens[] = { 8, 5 };
	struct pq_strings dicts[4] = { { 0 } };
	dicts[1] = (struct pq_strings){ names, lens, 2 };
	struct pq_writer *w;
	assert_int_equal(pq_open(&w, path, cols, 4, dicts, NULL), -EEXIST); /* never over a file */
	unlink(path);
	assert_int_equal(pq_open(&w, path, cols, 4, dicts, NULL), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pq_i64(w, 0, i), 0);
		assert_int_equal(i == 1 ? pq_null(w, 1) : pq_dict(w, 1, (uint32_t)i / 2), 0);
		assert_int_equal(pq_bool(w, 2, i & 1), 0);
		assert_int_equal(pq_str(w, 3, "x", 1), 0);
		assert_int_equal(pq_row_end(w), 0);
	}
	assert_int_equal(pq_rows(w), 3);
	uint64_t bytes = 0;
	assert_int_equal(pq_close(w, &bytes), 0);
	size_t len;
	uint8_t *d = slurp(path, &len);
	assert_int_equal(len, bytes);
	assert_memory_equal(d, "PAR1", 4);
	assert_memory_equal(d + len - 4, "PAR1", 4);
	uint32_t flen = get_le32(d + len - 8);
	assert_true(flen < len - 12);
	const uint8_t *foot = d + len - 8 - flen;
	for (int c = 0; c < 4; c++)
		assert_non_null(memmem(foot, flen, cols[c].name, strlen(cols[c].name)));
	assert_non_null(memmem(foot, flen, "heapfs export", 13));
	unlink(path);

	/* a null in a required column, an id beyond the table: refused, and
	 * the writer stays failed */
	assert_int_equal(pq_open(&w, path, cols, 4, dicts, NULL), 0);
	assert_int_equal(pq_null(w, 0), -EINVAL);
	assert_int_equal(pq_i64(w, 0, 1), -EINVAL);
	pq_abort(w);
	unlink(path);
	assert_int_equal(pq_open(&w, path, cols, 4, dicts, NULL), 0);
	assert_int_equal(pq_dict(w, 1, 2), -EINVAL);
	assert_int_equal(pq_close(w, NULL), -EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hybrid_spec_example),
		cmocka_unit_test(test_hybrid_padding_and_runs),
		cmocka_unit_test(test_pack_bits),
		cmocka_unit_test(test_thrift_compact),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_table.c - TSV, CSV and JSON rendering of one table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fs/table.h"

static const struct tcol cols[] = {
	{ "name", TCOL_STR }, { "count", TCOL_U64 }, { "delta", TCOL_I64 },
};

static void fill(struct table *t)
{
	table_init(t, cols, 3);
	assert_int_equal(table_add_row(t), 0);
	table_set_str(t, 0, "plain", 5);
	table_set_u64(t, 1, 7);
	table_set_i64(t, 2, -3);
	assert_int_equal(table_add_row(t), 0);
	table_set_str(t, 0, "a,\"b\"\tc", 7);
	/* count and delta left empty: unknown */
}

static char *render(struct table *t, int (*fn)(const struct table *, struct buf *))
{
	struct buf b;
	buf_init(&b);
	assert_int_equal(fn(t, &b), 0);
	buf_putc(&b, 0);
	return (char *)b.data;
}

static void test_tsv(void **st)
{
	(void)st;
	struct table t;
	fill(&t);
	char *s = render(&t, table_render_tsv);
	assert_string_equal(s, "name\tcount\tdelta\nplain\t7\t-3\na,\"b\" c\t\t\n");
	free(s);
	table_free(&t);
}

static void test_csv(void **st)
{
	(void)st;
	struct table t;
	fill(&t);
	char *s = render(&t, table_render_csv);
	assert_string_equal(s, "name,count,delta\nplain,7,-3\n\"a,\"\"b\"\"\tc\",,\n");
	free(s);
	table_free(&t);
}

static void test_json(void **st)
{
	(void)st;
	struct table t;
	fill(&t);
	char *s = render(&t, table_render_json);
	assert_string_equal(s, "[\n {\"name\": \"plain\", \"count\": 7, \"delta\": -3},\n"
			       " {\"name\": \"a,\\\"b\\\"\\tc\", \"count\": null, \"delta\": null}\n]\n");
	free(s);
	table_free(&t);
	table_init(&t, cols, 3);
	s = render(&t, table_render_json);
	assert_string_equal(s, "[\n]\n");
	free(s);
	table_free(&t);
}

static void test_many_rows(void **st)
{
	(void)st;
	struct table t;
	table_init(&t, cols, 3);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(table_add_row(&t), 0);
		table_set_u64(&t, 1, (uint64_t)i);
	}
	char *s = render(&t, table_render_tsv);
	assert_non_null(strstr(s, "\n\t999\t\n"));
	free(s);
	table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsv),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_many_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

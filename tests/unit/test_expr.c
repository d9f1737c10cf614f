/* test_expr.c - checked integer arithmetic in the classifier language
 * (analyses/expr.c) and what the classifiers make of a value that does not
 * exist (analyses/classify.c): <error>, filters, parts() and classifiers/errors.
 *
 * Expected values are written down from 64-bit two's complement
 * arithmetic: INT64_MAX = 2^63 - 1 = 9223372036854775807, 2^62 =
 * 4611686018427387904, 2^59 = 576460752303423488, 2^58 =
 * 288230376151711744; C division truncates toward zero.  Columns are
 * counted by hand in the definitions below (1-based, the operator's or
 * the call's first character).
 *
 * The tree cases use buggystack -n 1000 -g 10 (as test_classify.c): at
 * GC 10 the 1000 TestObjects (900 first round, 100 second round) are live,
 * 16 bytes each (16000 bytes); 16 * 2^59 = 2^63 overflows.
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
#include "fs/tree.h"
#include "model/synth.h"

/* ---- the language on its own: size is the object's number ---- */

static int host_prop(void *ctx, uint32_t o, enum xprop p, struct xval *out, struct xarena *a)
{
	(void)ctx;
	(void)a;
	if (p == XP_SIZE) {
		out->i = o;
		return 0;
	}
	return -1;
}

static const struct expr_host host = { NULL, host_prop, NULL, NULL, NULL };

struct value_case {
	const char *src;
	uint32_t o;         /* the object, and its size */
	int64_t want;
};

struct fault_case {
	const char *src;
	uint32_t o;
	const char *what;
	uint32_t line, col;
};

static struct expr *compile(const char *src)
{
	struct expr *e = NULL;
	struct expr_error err;
	int rc = expr_compile(src, strlen(src), &e, &err);
	if (rc)
		fprintf(stderr, "%s: line %u, column %u: %s\n", src, err.line, err.col, err.msg);
	assert_int_equal(rc, 0);
	return e;
}

static int eval(const struct expr *e, uint32_t o, struct xval *v, struct expr_fault *f)
{
	static char buf[4096];
	struct xarena a = { buf, 0, sizeof buf, 0 };
	return expr_eval_fault(e, &host, o, &a, v, f);
}

/* Values that fit: the checks must not refuse them. */
static void expect_values(const struct value_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct expr *e = compile(cases[i].src);
		struct xval v;
		struct expr_fault f;
		int rc = eval(e, cases[i].o, &v, &f);
		if (rc)
			fprintf(stderr, "%s: %s\n", cases[i].src, f.what);
		assert_int_equal(rc, 0);
		assert_true(v.i == cases[i].want);
		assert_null(f.what);
		expr_free(e);
	}
}

/* Values that do not exist: -EDOM, the reason, and the operator's place. */
static void expect_faults(const struct fault_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct expr *e = compile(cases[i].src);
		struct xval v;
		struct expr_fault f;
		int rc = eval(e, cases[i].o, &v, &f);
		if (rc != -EDOM)
			fprintf(stderr, "%s (size %u): rc %d, value %lld\n", cases[i].src, cases[i].o, rc,
				(long long)v.i);
		assert_int_equal(rc, -EDOM);
		assert_non_null(f.what);
		assert_string_equal(f.what, cases[i].what);
		assert_int_equal(f.line, cases[i].line);
		assert_int_equal(f.col, cases[i].col);
		/* expr_eval, without a fault to fill, fails the same way */
		char buf[4096];
		struct xarena a = { buf, 0, sizeof buf, 0 };
		assert_int_equal(expr_eval(e, &host, cases[i].o, &a, &v), -EDOM);
		expr_free(e);
	}
}

static void test_arith(void **state)
{
	(void)state;
	static const struct value_case values[] = {
		{ "size + 9223372036854775807", 0, INT64_MAX },
		{ "0 - 9223372036854775807 - 1", 0, INT64_MIN },
		{ "-(0 - 9223372036854775807)", 0, INT64_MAX },
		{ "size * 4611686018427387904", 1, 4611686018427387904 },
		{ "(0 - 9223372036854775807 - 1) / 1", 0, INT64_MIN },
		{ "(0 - 9223372036854775807) / (0 - 1)", 0, INT64_MAX },
		{ "(0 - 7) / 2", 0, -3 },     /* toward zero, not -4 */
		{ "(0 - 7) % 2", 0, -1 },     /* sign of the left operand */
		{ "7 % (0 - 2)", 0, 1 },
		{ "size / (size - 3)", 5, 2 },
		/* branches not taken are not evaluated: no fault from them */
		{ "if size == 0 then 0 else 100 / size", 0, 0 },
		{ "if size == 0 or 10 / size > 1 then 1 else 2", 0, 1 },
	};
	static const struct fault_case faults[] = {
		{ "size + 9223372036854775807", 1, "integer overflow in +", 1, 6 },
		{ "0 - 9223372036854775807 - 2", 0, "integer overflow in -", 1, 25 },
		{ "size * 4611686018427387904", 2, "integer overflow in *", 1, 6 },
		{ "size * 4611686018427387904", 3, "integer overflow in *", 1, 6 },
		{ "-(0 - 9223372036854775807 - 1)", 0, "integer overflow in unary -", 1, 1 },
		{ "(0 - 9223372036854775807 - 1) / (0 - 1)", 0, "integer overflow in /", 1, 31 },
		{ "(0 - 9223372036854775807 - 1) % (0 - 1)", 0, "integer overflow in %", 1, 31 },
		{ "size / 0", 9, "division by zero in /", 1, 6 },
		{ "size % 0", 9, "division by zero in %", 1, 6 },
		{ "size / (size - 3)", 3, "division by zero in /", 1, 6 },
		/* the comparison: it has no value, it is not true */
		{ "size > 9223372036854775807 + 1", 5, "integer overflow in +", 1, 28 },
		/* the inner overflow, not the outer operator */
		{ "size +\n  9223372036854775807 *\n 2", 0, "integer overflow in *", 2, 23 },
		{ "str(size * 9223372036854775807)", 2, "integer overflow in *", 1, 10 },
	};
	expect_values(values, sizeof values / sizeof *values);
	expect_faults(faults, sizeof faults / sizeof *faults);
}

/* parts(): byte counts of 0 or more whose sum is an int64 (INT64_MAX
 * exactly is fine); a negative one, or a sum beyond, has no value. */
static void test_parts(void **state)
{
	(void)state;
	static const struct fault_case faults[] = {
		{ "parts(\"a\", 0 - 100, \"b\", 9223372036854775807)", 0,
		  "negative byte count in parts()", 1, 1 },
		{ "parts(\"a\", 9223372036854775807, \"b\", 1)", 0, "integer overflow in parts()", 1, 1 },
		{ "if true then parts(\"a\", size - 1) else parts(\"b\", 0)", 0,
		  "negative byte count in parts()", 1, 14 },
	};
	expect_faults(faults, sizeof faults / sizeof *faults);
	struct expr *e = compile("parts(\"a\", 9223372036854775806, \"b\", size, \"c\", 0)");
	struct xval v;
	struct expr_fault f;
	assert_int_equal(eval(e, 1, &v, &f), 0);
	assert_int_equal(v.n, 3);
	assert_true(v.w[0] == 9223372036854775806);
	assert_true(v.w[1] == 1);
	assert_true(v.w[2] == 0);
	expr_free(e);
}

/* The plan of a parts() a host may read without evaluating: literal
 * names, each byte count one property, names distinct, at most
 * XPARTS_PLAN_MAX parts; anything else has none. */
static void test_parts_plan(void **state)
{
	(void)state;
	struct xparts_plan p;
	struct expr *e = compile("parts(\"header\", header_bytes, \"pointer\", pointer_bytes, "
				 "\"\", size)");
	assert_int_equal(expr_parts_plan(e, &p), 1);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.name[0].len, 6);
	assert_memory_equal(p.name[0].s, "header", 6);
	assert_int_equal(p.prop[0], XP_HEADER_BYTES);
	assert_memory_equal(p.name[1].s, "pointer", 7);
	assert_int_equal(p.prop[1], XP_POINTER_BYTES);
	assert_int_equal(p.name[2].len, 0);
	assert_int_equal(p.prop[2], XP_SIZE);
	expr_free(e);
	static const char *none[] = {
		"parts(\"a\", size + 0)",                 /* a byte count that is not one property */
		"parts(\"a\", size, \"a\", header_bytes)", /* a name twice: the parts add up */
		"parts(type, size)",                       /* a name that is not a literal */
		"parts(\"a\", 8)",                       /* a literal byte count */
		"if true then parts(\"a\", size) else parts(\"b\", size)",
		"parts(\"a\", size, \"b\", size, \"c\", size, \"d\", size, \"e\", size, "
		"\"f\", size, \"g\", size, \"h\", size, \"i\", size)", /* 9 parts */
		"size",
	};
	for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
		e = compile(none[i]);
		assert_int_equal(expr_parts_plan(e, &p), 0);
		expr_free(e);
	}
}

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

static int drop_def(void *ctx, const char *name, struct expr *e)
{
	(void)ctx;
	(void)name;
	expr_free(e);
	return 0;
}

/* 9223372036854775807 is the largest literal; one more does not compile. */
static void test_literal_range(void **state)
{
	(void)state;
	struct expr *e = compile("9223372036854775807");
	struct xval v;
	assert_int_equal(eval(e, 0, &v, NULL), 0);
	assert_true(v.i == INT64_MAX);
	expr_free(e);
	const char *msg = "integer literal larger than 9223372036854775807 (the largest int)";
	expect_compile_error("size > 9223372036854775808", 1, 8, msg);
	expect_compile_error("size +\n 99999999999999999999", 2, 2, msg);
	expect_compile_error("-9223372036854775808", 1, 2, msg);
	/* in a definitions file too */
	struct expr_error err;
	const char *defs = "a = size\nb = size * 18446744073709551616\n";
	assert_int_equal(expr_compile_defs(defs, strlen(defs), drop_def, NULL, &err), -EINVAL);
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 12);
	assert_string_equal(err.msg, msg);
}

/* ---- through the tree: <error>, filters, parts and classifiers/errors ---- */

static char g_dir[64], g_bs[128];

static int setup(void **state)
{
	(void)state;
	struct synth_opts o;
	char err[256];
	snprintf(g_dir, sizeof g_dir, "/tmp/test_expr.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_bs, sizeof g_bs, "%s/bs.htr", g_dir);
	synth_opts_init(&o);
	o.objects = 1000;
	o.gcs = 10;
	return synth_write("buggystack", &o, g_bs, err, sizeof err) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_bs);
	rmdir(g_dir);
	return 0;
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

static void expect_file(struct hfs *fs, const char *path, const char *want)
{
	char *got = read_path(fs, path);
	assert_string_equal(got, want);
	free(got);
}

static void define(struct hfs *fs, const char *name, const char *src)
{
	char path[96], msg[300];
	snprintf(path, sizeof path, "/classifiers/%s", name);
	int rc = hfs_write_file(fs, path, src, strlen(src), msg, sizeof msg);
	if (rc)
		fprintf(stderr, "%s: %s\n", name, msg);
	assert_int_equal(rc, 0);
}

/* The first line of classifiers/errors that starts with prefix. */
static void expect_error_line(struct hfs *fs, const char *prefix, const char *want)
{
	char *errs = read_path(fs, "/classifiers/errors");
	const char *l = errs;
	while (l && strncmp(l, prefix, strlen(prefix))) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!l)
		fprintf(stderr, "no line %s in classifiers/errors:\n%s", prefix, errs);
	assert_non_null(l);
	size_t len = strcspn(l, "\n");
	char *line = strndup(l, len);
	assert_string_equal(line, want);
	free(line);
	free(errs);
}

static void test_tree_errors(void **state)
{
	(void)state;
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	memset(&err, 0, sizeof err);
	assert_int_equal(hfs_open(&fs, g_bs, &o, &err), 0);

	/* per info: every TestObject (16 * 2^59) overflows */
	define(fs, "ovf", "if type ~ \"*.TestObject\" then size * 576460752303423488 else 0");
	expect_file(fs, "/gc/010/by-ovf/<error>/count", "1000\n");
	expect_file(fs, "/gc/010/by-ovf/<error>/shallow_size", "16000\n");
	/* TestObject is the only type under it: the table's one row */
	char *types = read_path(fs, "/gc/010/by-ovf/<error>/by-type/table");
	const char *row = strstr(types, "\nexample.buggystack.TestObject\t1000\t16000\t");
	assert_non_null(row);
	assert_int_equal(strchr(row + 1, '\n')[1], '\0');
	assert_ptr_equal(strchr(types, '\n'), row);
	free(types);
	expect_error_line(fs, "ovf: ", "ovf: gc/010: 1000 objects: line 1, column 36: integer overflow in *");

	/* per object (age): division by zero */
	define(fs, "dz", "if type ~ \"*.TestObject\" then str(size / (age - age)) else \"other\"");
	expect_file(fs, "/gc/010/by-dz/<error>/count", "1000\n");
	expect_error_line(fs, "dz: ", "dz: gc/010: 1000 objects: line 1, column 40: division by zero in /");

	/* a filter cannot say an object without a value passes: none does */
	define(fs, "flt", "type ~ \"*.TestObject\" and size * 576460752303423488 > 0");
	expect_file(fs, "/gc/010/only-flt/count", "0\n");
	expect_error_line(fs, "flt: ", "flt: gc/010: 1000 objects: line 1, column 32: integer overflow in *");

	/* parts(): a negative count puts the object's 16 bytes under <error> */
	define(fs, "neg", "if type ~ \"*.TestObject\" then parts(\"a\", size - 17, \"b\", 1)\n"
			  "else parts(\"c\", size)");
	expect_file(fs, "/gc/010/by-neg/<error>/count", "1000\n");
	expect_file(fs, "/gc/010/by-neg/<error>/shallow_size", "16000\n");
	expect_error_line(fs, "neg: ", "neg: gc/010: 1000 objects: line 1, column 31: negative byte count in parts()");

	/* parts(): 1000 * INT64_MAX bytes cannot be a shallow_size: the
	 * classification fails instead of wrapping */
	define(fs, "huge", "if type ~ \"*.TestObject\" then parts(\"b\", 9223372036854775807) else parts(\"c\", 0)");
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(fs, "/gc/010/by-huge/table", &b), -EOVERFLOW);
	buf_free(&b);
	expect_error_line(fs, "huge: ", "huge: gc/010: the bytes of a part add up beyond "
			  "18446744073709551615: the classification fails (EOVERFLOW)");

	/* a new definition of the name starts without failures */
	define(fs, "ovf", "size");
	char *errs = read_path(fs, "/classifiers/errors");
	assert_null(strstr(errs, "ovf: "));
	free(errs);
	hfs_close(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arith),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_parts_plan),
		cmocka_unit_test(test_literal_range),
		cmocka_unit_test(test_tree_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

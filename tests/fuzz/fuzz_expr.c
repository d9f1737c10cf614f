/* fuzz_expr.c - libFuzzer target for the user-defined classifier language
 * (analyses/expr.h): the text of a classifiers/NAME file or of a
 * -o classifiers=FILE definitions file is untrusted input.
 *
 * Every input is
 *   1. compiled as one expression; when it compiles, its type and flags are
 *      read and it is evaluated for a few objects of a small fake heap (a
 *      ring of objects with properties of every kind), with a small arena so
 *      that arena exhaustion is exercised too;
 *   2. compiled as a definitions file (NAME = EXPR ...), each definition
 *      evaluated the same way.
 * Compile errors must carry a line and column inside the text (or none),
 * and a NUL-terminated message.  Nothing may crash, hang or leak.
 *
 * Built by `make build-fuzz/fuzz_expr` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/expr.h"

#include "fuzz_common.h"

#define NOBJ 5u
#define ARENA_BYTES 2048

static const char *const type_names[NOBJ] = {
	"java.util.HashMap", "java.util.HashMap$Node[]", "int[]", "example.Foo", "java.lang.String",
};

static struct xstr xs(const char *s)
{
	return (struct xstr){ s, (uint32_t)strlen(s) };
}

/* Properties of object o of the fake heap; o may be an info index too. */
static int fake_prop(void *ctx, uint32_t o, enum xprop p, struct xval *out, struct xarena *a)
{
	(void)ctx;
	o %= NOBJ;
	switch (expr_props[p].type) {
	case XT_STR:
		out->s = xs(p == XP_TYPE ? type_names[o] : p == XP_PACKAGE ? "java.util" :
			    p == XP_THREAD ? "main" : "example.Foo.bar:12");
		return 0;
	case XT_LIST: case XT_PATH: {
		uint32_t n = o % 3;
		out->items = xarena_alloc(a, (n + 1) * sizeof *out->items);
		if (!out->items)
			return -ERANGE;
		for (uint32_t k = 0; k < n; k++)
			out->items[k] = xs(type_names[(o + k) % NOBJ]);
		out->n = n;
		return 0;
	}
	default:
		/* ints and bools: small values, negative ones for array_length */
		out->i = p == XP_ARRAY_LENGTH ? (int64_t)o - 2 : p == XP_IS_ARRAY ? o & 1 :
			 (int64_t)o * 24;
		return 0;
	}
}

static uint32_t fake_degree(void *ctx, uint32_t o, int dir)
{
	(void)ctx;
	return (o + (uint32_t)dir) % 3;
}

static uint32_t fake_neighbour(void *ctx, uint32_t o, int dir, uint32_t k)
{
	(void)ctx;
	return (o + k + 1 + (uint32_t)dir) % NOBJ;
}

/* Names are all distinct: the type key is the object's slot. */
static uint32_t fake_type_key(void *ctx, uint32_t o)
{
	(void)ctx;
	return o % NOBJ;
}

/* Each object is evaluated twice: by a host with type keys and by one
 * without (`type in referee_types` takes a path of its own with keys). */
static void evaluate(const struct expr *e)
{
	static char arena_buf[ARENA_BYTES];
	struct expr_host hosts[2] = { { NULL, fake_prop, fake_degree, fake_neighbour, fake_type_key },
				      { NULL, fake_prop, fake_degree, fake_neighbour, NULL } };
	(void)expr_type(e);
	(void)expr_per_object(e);
	(void)expr_uses_graph(e);
	for (uint32_t i = 0; i < 2 * NOBJ; i++) {
		const struct expr_host h = hosts[i / NOBJ];
		uint32_t o = i % NOBJ;
		struct xarena a = { arena_buf, 0, sizeof arena_buf, 0 };
		struct xval v;
		if (expr_eval(e, &h, o, &a, &v))
			continue;
		/* read what a host would: every string and item */
		volatile char sink = 0;
		if (v.t == XT_STR && v.s.len)
			sink ^= v.s.s[v.s.len - 1];
		if (v.t == XT_LIST || v.t == XT_PATH || v.t == XT_PARTS) {
			for (uint32_t k = 0; k < v.n; k++) {
				if (v.items[k].len)
					sink ^= v.items[k].s[v.items[k].len - 1];
				if (v.t == XT_PARTS)
					sink ^= (char)v.w[k];
			}
		}
		(void)sink;
	}
}

static void check_error(const struct expr_error *err, const uint8_t *data, size_t size)
{
	if (!memchr(err->msg, '\0', sizeof err->msg))
		abort();
	if (!err->line)
		return;
	/* the position is inside the text or just past its end */
	uint32_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (err->line > lines || err->col == 0 || err->col > size + 1)
		abort();
}

static int each_def(void *ctx, const char *name, struct expr *e)
{
	(void)ctx;
	if (!expr_valid_name(name, strlen(name)))
		abort(); /* the parser only hands out valid names */
	evaluate(e);
	expr_free(e);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct expr *e = NULL;
	struct expr_error err;
	memset(&err, 0, sizeof err);
	if (expr_compile((const char *)data, size, &e, &err) == 0) {
		evaluate(e);
		expr_free(e);
	} else {
		check_error(&err, data, size);
	}
	memset(&err, 0, sizeof err);
	if (expr_compile_defs((const char *)data, size, each_def, NULL, &err))
		check_error(&err, data, size);
	return 0;
}

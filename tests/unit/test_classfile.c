/* test_classfile.c - agent/classfile.c: hand-built instructions with lengths
 * worked out from the JVMS, pool additions, and a byte-exact round trip of
 * every class of the installed JDK (jimage extract, JDK_CLASSES_DIR) and of
 * the example programs (EXAMPLE_CLASSES_DIR).  Both directories are made by
 * the rule in agent/agent.mk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/classfile.h"
#include "tests/slurp.h"

#ifndef JDK_CLASSES_DIR
#define JDK_CLASSES_DIR "build/jdk-classes"
#endif
#ifndef EXAMPLE_CLASSES_DIR
#define EXAMPLE_CLASSES_DIR "build/examples/classes"
#endif

/* ---- instruction lengths ------------------------------------------------ */

static void test_insn_len_fixed_and_wide(void **state)
{
	(void)state;
	uint8_t iload[] = { 21, 5 };
	assert_int_equal(cf_insn_len(iload, 2, 0), 2);
	uint8_t wide_iload[] = { 196, 21, 1, 0 };
	assert_int_equal(cf_insn_len(wide_iload, 4, 0), 4);
	uint8_t wide_iinc[] = { 196, 132, 1, 0, 0, 5 };
	assert_int_equal(cf_insn_len(wide_iinc, 6, 0), 6);
	uint8_t wide_bad[] = { 196, 96, 0, 0 }; /* iadd cannot be wide */
	assert_int_equal(cf_insn_len(wide_bad, 4, 0), -1);
	uint8_t invint[] = { 185, 0, 1, 1, 0 };
	assert_int_equal(cf_insn_len(invint, 5, 0), 5);
	assert_int_equal(cf_insn_len(invint, 4, 0), -1); /* runs past the end */
	uint8_t multi[] = { 197, 0, 2, 2 };
	assert_int_equal(cf_insn_len(multi, 4, 0), 4);
	uint8_t bad[] = { 202 };
	assert_int_equal(cf_insn_len(bad, 1, 0), -1);
}

/* tableswitch at pc: padding to the next multiple of 4 after the opcode,
 * then default, low, high and high-low+1 offsets. */
static void test_insn_len_switch_padding(void **state)
{
	(void)state;
	for (uint32_t pc = 0; pc < 4; pc++) {
		uint8_t code[64] = { 0 };
		code[pc] = 170;
		uint32_t base = pc + 1; /* operands start at the next multiple of 4 */
		while (base % 4)
			base++;
		/* low 1, high 3: three offsets */
		code[base + 7] = 1;
		code[base + 11] = 3;
		uint32_t expect = (base - pc) + 12 + 3 * 4;
		assert_int_equal(cf_insn_len(code, sizeof(code), pc), (int)expect);

		uint8_t ls[64] = { 0 };
		ls[pc] = 171;
		ls[base + 7] = 2; /* two pairs */
		assert_int_equal(cf_insn_len(ls, sizeof(ls), pc), (int)((base - pc) + 8 + 16));
	}
	uint8_t inverted[16] = { 170, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1 };
	assert_int_equal(cf_insn_len(inverted, sizeof(inverted), 0), -1); /* high < low */
}

/* ---- a class built by hand ---------------------------------------------- */

/* public class T { static void m() { return; } } with a minimal pool. */
static const uint8_t tiny[] = {
	0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61, 0, 7,
	/* 1 Utf8 "T" */ 1, 0, 1, 'T',
	/* 2 Class #1 */ 7, 0, 1,
	/* 3 Utf8 "java/lang/Object" */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e',
	'c', 't',
	/* 4 Class #3 */ 7, 0, 3,
	/* 5 Utf8 "m" */ 1, 0, 1, 'm',
	/* 6 Utf8 "()V" */ 1, 0, 3, '(', ')', 'V',
	/* access, this, super, interfaces */ 0, 0x21, 0, 2, 0, 4, 0, 0,
	/* fields */ 0, 0,
	/* methods */ 0, 1, 0, 0x09, 0, 5, 0, 6, 0, 1,
	/* Code: name is #7 (added below: absent here, so the Code attribute is
	 * raw to a pool without "Code"; use an unknown attribute name #5) */
	0, 5, 0, 0, 0, 2, 0xAB, 0xCD,
	/* class attributes */ 0, 0,
};

static void test_tiny_round_trip_and_pool_additions(void **state)
{
	(void)state;
	struct cf_class *c;
	assert_int_equal(cf_parse(tiny, sizeof(tiny), &c), 0);
	assert_int_equal(c->cp_count, 7);
	assert_true(cf_utf8_eq(c, cf_class_name(c, c->this_class), "T"));
	assert_int_equal(c->nmethods, 1);
	assert_null(c->methods[0].code); /* no attribute named Code */
	struct buf b;
	buf_init(&b);
	assert_int_equal(cf_write(c, &b), 0);
	assert_int_equal(b.len, sizeof(tiny));
	assert_memory_equal(b.data, tiny, sizeof(tiny));

	/* additions: found again, not duplicated, and survive a re-parse */
	uint16_t f = cf_cp_fieldref(c, "heapfs/Counters", "c", "[J");
	assert_int_not_equal(f, 0);
	assert_int_equal(cf_cp_fieldref(c, "heapfs/Counters", "c", "[J"), f);
	assert_int_equal(cf_cp_class(c, "java/lang/Object", 16), 4); /* existing entry */
	uint16_t i = cf_cp_integer(c, 100000);
	assert_int_not_equal(i, 0);
	buf_reset(&b);
	assert_int_equal(cf_write(c, &b), 0);
	struct cf_class *d;
	assert_int_equal(cf_parse(b.data, b.len, &d), 0);
	assert_int_equal(d->cp_count, c->cp_count);
	assert_int_equal(d->cp_tag[f], CP_FIELDREF);
	assert_int_equal(d->cp_tag[i], CP_INTEGER);
	assert_true(cf_utf8_eq(d, cf_class_name(d, (uint16_t)(d->cp_ptr[f][0] << 8 | d->cp_ptr[f][1])),
			       "heapfs/Counters"));
	cf_free(d);
	cf_free(c);
	buf_free(&b);

	/* truncations never parse */
	for (size_t n = 0; n < sizeof(tiny); n++) {
		struct cf_class *t = NULL;
		assert_int_not_equal(cf_parse(tiny, n, &t), 0);
	}
}

/* tiny with its last pool entry (#6, "()V") replaced by a Double, and the
 * pool's count set to count; *n is the length. */
static uint8_t *tiny_with_double(uint16_t count, size_t *n)
{
	static const uint8_t dbl[] = { 6, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18 }; /* pi */
	const size_t e6 = 10 + 4 + 3 + 19 + 3 + 4, e6len = 6; /* where #6 starts, its bytes */
	uint8_t *b = malloc(sizeof(tiny) - e6len + sizeof(dbl));
	assert_non_null(b);
	assert_int_equal(tiny[e6], 1); /* the Utf8 "()V" */
	memcpy(b, tiny, e6);
	memcpy(b + e6, dbl, sizeof(dbl));
	memcpy(b + e6 + sizeof(dbl), tiny + e6 + e6len, sizeof(tiny) - e6 - e6len);
	b[8] = (uint8_t)(count >> 8);
	b[9] = (uint8_t)count;
	*n = sizeof(tiny) - e6len + sizeof(dbl);
	return b;
}

/* A long or double takes two slots, and the second must exist (JVMS
 * 4.4.5).  One in the last slot was accepted, and entries added later
 * were written one index off (fuzz_classfile: tests/fuzz/crashes/
 * pool-double-last.class): the instrumented class did not parse. */
static void test_pool_double_in_last_slot(void **state)
{
	(void)state;
	size_t n;
	struct cf_class *c = NULL;
	uint8_t *bad = tiny_with_double(7, &n); /* #6 is the double, #7 would be its second slot */
	assert_int_equal(cf_parse(bad, n, &c), -EINVAL);
	free(bad);
	uint8_t *good = tiny_with_double(8, &n); /* #7 exists (unusable): valid */
	assert_int_equal(cf_parse(good, n, &c), 0);
	assert_int_equal(c->cp_count, 8);
	assert_int_equal(c->cp_tag[6], CP_DOUBLE);
	uint16_t i = cf_cp_integer(c, 100000);
	assert_int_equal(i, 8); /* after the unusable slot */
	struct buf b;
	buf_init(&b);
	assert_int_equal(cf_write(c, &b), 0);
	struct cf_class *d;
	assert_int_equal(cf_parse(b.data, b.len, &d), 0);
	assert_int_equal(d->cp_tag[8], CP_INTEGER);
	cf_free(d);
	cf_free(c);
	buf_free(&b);
	free(good);
}

/* The first index of an entry, by scanning (the oracle of the lookups). */
static uint16_t scan_first(const struct cf_class *c, uint8_t tag, const uint8_t *body, size_t n)
{
	for (uint32_t i = 1; i < c->cp_count; i++) {
		if (c->cp_tag[i] != tag)
			continue;
		size_t len = tag == CP_UTF8 ? 2u + (size_t)(c->cp_ptr[i][0] << 8 | c->cp_ptr[i][1]) : n;
		if (len == n && !memcmp(c->cp_ptr[i], body, n))
			return (uint16_t)i;
	}
	return 0;
}

/* Pool lookups go through a hash table: they find the first of duplicate
 * entries (a pool may hold them; javac's do not), tell Utf8s of different
 * lengths apart, and find every entry again after the table has grown. */
static void test_pool_lookups(void **state)
{
	(void)state;
	/* tiny with a second Utf8 "T" as #7 */
	const size_t pool_end = 10 + 4 + 3 + 19 + 3 + 4 + 6;
	uint8_t b[sizeof(tiny) + 4];
	memcpy(b, tiny, pool_end);
	memcpy(b + pool_end, (const uint8_t[]){ 1, 0, 1, 'T' }, 4);
	memcpy(b + pool_end + 4, tiny + pool_end, sizeof(tiny) - pool_end);
	b[9] = 8;
	struct cf_class *c;
	assert_int_equal(cf_parse(b, sizeof(b), &c), 0);
	assert_int_equal(c->cp_count, 8);
	assert_int_equal(cf_cp_utf8(c, "T", 1), 1);
	assert_int_equal(cf_cp_utf8(c, "()V", 3), 6);
	uint16_t shorter = cf_cp_utf8(c, "()", 2); /* a prefix of #6: a new entry */
	assert_int_equal(shorter, 8);
	assert_int_equal(cf_cp_class(c, "T", 1), 2);
	/* 5,000 Integers and Longs: the table is rebuilt several times */
	uint16_t ints[5000], longs[50];
	for (int32_t v = 0; v < 5000; v++)
		assert_int_not_equal(ints[v] = cf_cp_integer(c, v * 7919), 0);
	for (int64_t v = 0; v < 50; v++)
		assert_int_not_equal(longs[v] = cf_cp_long(c, v << 40), 0);
	for (int32_t v = 0; v < 5000; v++) {
		uint32_t x = (uint32_t)(v * 7919);
		uint8_t body[4] = { (uint8_t)(x >> 24), (uint8_t)(x >> 16), (uint8_t)(x >> 8), (uint8_t)x };
		assert_int_equal(cf_cp_integer(c, v * 7919), ints[v]);
		assert_int_equal(scan_first(c, CP_INTEGER, body, 4), ints[v]);
	}
	for (int64_t v = 0; v < 50; v++)
		assert_int_equal(cf_cp_long(c, v << 40), longs[v]);
	assert_int_equal(c->cp_count, 8 + 1 + 5000 + 2 * 50);
	/* the earlier entries are still found where they were */
	assert_int_equal(cf_cp_utf8(c, "T", 1), 1);
	assert_int_equal(cf_cp_utf8(c, "()", 2), shorter);
	cf_free(c);
}

/* ---- every class of the JDK and of the examples ------------------------- */

static struct {
	uint64_t classes, methods, insns, frames, allocs, wide, switches, smt_kinds[256];
	uint64_t intrinsic_calls; /* invokestatic of an allocating intrinsic */
	uint64_t failed;
	char first_failure[512];
} S;

static void fail_note(const char *path, const char *what)
{
	if (!S.failed++)
		snprintf(S.first_failure, sizeof(S.first_failure), "%s: %s", path, what);
}

/* Checks one method's code: instructions decode to exactly the code's end,
 * every frame and exception range sits on instruction starts, and frames
 * expand. */
static void check_method(struct cf_class *c, struct cf_member *m, const char *path)
{
	struct cf_code *k = m->code;
	struct cf_insn *v;
	uint32_t n;
	if (cf_code_decode(c, k, &v, &n)) {
		fail_note(path, "decode");
		return;
	}
	S.methods++;
	S.insns += n;
	uint8_t *start = calloc(k->len + 1, 1);
	for (uint32_t i = 0; i < n; i++) {
		start[v[i].pc] = 1;
		if (v[i].op == 196)
			S.wide++;
		if (v[i].kind == IK_SWITCH)
			S.switches++;
		if (cf_op_allocates(v[i].op))
			S.allocs++;
		/* the decoder's site flag: an allocating opcode, or an
		 * invokestatic of Arrays.copyOf/copyOfRange(Object[], ...,
		 * Class), recognized here by the names themselves */
		int call = 0;
		uint16_t cls, name, desc, l1, l2, l3;
		if (v[i].op == 184 && !cf_ref_parts(c, (uint16_t)(k->code[v[i].pc + 1] << 8 | k->code[v[i].pc + 2]),
						    &cls, &name, &desc)) {
			const char *o = cf_utf8(c, cls, &l1), *nm = cf_utf8(c, name, &l2), *d = cf_utf8(c, desc, &l3);
			call = o && nm && d && l1 == 16 && !memcmp(o, "java/util/Arrays", 16) &&
			       ((l2 == 6 && !memcmp(nm, "copyOf", 6) &&
				 l3 == 58 && !memcmp(d, "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;", 58)) ||
				(l2 == 11 && !memcmp(nm, "copyOfRange", 11) &&
				 l3 == 59 && !memcmp(d, "([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;", 59)));
		}
		S.intrinsic_calls += call;
		if (v[i].site != (cf_op_allocates(v[i].op) || call))
			fail_note(path, "site flag");
	}
	start[k->len] = 1; /* end_pc may be the code length */
	for (uint32_t i = 0; i < k->nexc; i++)
		if (!start[k->exc[i].start] || k->exc[i].end > k->len || !start[k->exc[i].end] ||
		    !start[k->exc[i].handler])
			fail_note(path, "exception range off instruction starts");
	for (uint32_t a = 0; a < k->nattrs; a++) {
		if (k->attrs[a].kind != CA_SMT)
			continue;
		struct cf_frame *f;
		uint32_t nf = k->attrs[a].u.smt.n;
		for (uint32_t i = 0; i < nf; i++) {
			S.smt_kinds[k->attrs[a].u.smt.f[i].type]++;
			if (k->attrs[a].u.smt.f[i].bci >= k->len || !start[k->attrs[a].u.smt.f[i].bci])
				fail_note(path, "frame off an instruction start");
		}
		S.frames += nf;
		/* expansion adds Class entries to the pool: on a scratch parse
		 * only, the round trip runs on the untouched one */
		if (cf_frames_expand(c, m, k->attrs[a].u.smt.f, nf, &f))
			fail_note(path, "frame expansion");
	}
	free(start);
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t l = strlen(path);
	if (flag != FTW_F || l < 6 || strcmp(path + l - 6, ".class"))
		return 0;
	size_t n;
	uint8_t *data = slurp(path, &n);
	if (!data) {
		fail_note(path, "unreadable");
		return 0;
	}
	struct cf_class *c;
	if (cf_parse(data, n, &c)) {
		fail_note(path, "parse");
		free(data);
		return 0;
	}
	struct buf b;
	buf_init(&b);
	if (cf_write(c, &b) || b.len != n || memcmp(b.data, data, n))
		fail_note(path, "round trip differs");
	S.classes++;
	cf_free(c);
	/* the checks that may add pool entries use a second parse */
	if (!cf_parse(data, n, &c)) {
		for (uint32_t i = 0; i < c->nmethods; i++)
			if (c->methods[i].code)
				check_method(c, &c->methods[i], path);
		cf_free(c);
	}
	buf_free(&b);
	free(data);
	return 0;
}

static void run_dir(const char *dir, uint64_t min_classes)
{
	memset(&S, 0, sizeof(S));
	struct stat st;
	if (stat(dir, &st)) {
		fprintf(stderr, "missing %s (made by agent/agent.mk)\n", dir);
		fail();
	}
	assert_int_equal(nftw(dir, visit, 64, FTW_PHYS), 0);
	fprintf(stderr, "%s: %lu classes, %lu methods, %lu instructions (%lu wide, %lu switches, %lu allocating), "
			"%lu frames (same %lu, chop %lu, append %lu, full %lu), %lu calls of allocating intrinsics\n",
		dir, (unsigned long)S.classes, (unsigned long)S.methods, (unsigned long)S.insns,
		(unsigned long)S.wide, (unsigned long)S.switches, (unsigned long)S.allocs, (unsigned long)S.frames,
		(unsigned long)S.smt_kinds[0], (unsigned long)(S.smt_kinds[248] + S.smt_kinds[249] + S.smt_kinds[250]),
		(unsigned long)(S.smt_kinds[252] + S.smt_kinds[253] + S.smt_kinds[254]), (unsigned long)S.smt_kinds[255],
		(unsigned long)S.intrinsic_calls);
	if (S.failed)
		fprintf(stderr, "%lu failures, first: %s\n", (unsigned long)S.failed, S.first_failure);
	assert_int_equal(S.failed, 0);
	assert_true(S.classes >= min_classes);
}

/* The allocating intrinsics by name: the Object-array copies with a Class
 * argument, not their other overloads nor another class's. */
static void test_allocating_intrinsics(void **state)
{
	(void)state;
	static const struct {
		const char *owner, *name, *desc;
		int want;
	} t[] = {
		{ "java/util/Arrays", "copyOf", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;", 1 },
		{ "java/util/Arrays", "copyOfRange", "([Ljava/lang/Object;IILjava/lang/Class;)[Ljava/lang/Object;", 1 },
		{ "java/util/Arrays", "copyOf", "([Ljava/lang/Object;I)[Ljava/lang/Object;", 0 },
		{ "java/util/Arrays", "copyOf", "([BI)[B", 0 },
		{ "java/util/Arrays", "copyOfRange", "([Ljava/lang/Object;II)[Ljava/lang/Object;", 0 },
		{ "java/util/Array", "copyOf", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;", 0 },
		{ "java/util/Arrays", "copyO", "([Ljava/lang/Object;ILjava/lang/Class;)[Ljava/lang/Object;", 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(cf_method_allocates(t[i].owner, strlen(t[i].owner), t[i].name, strlen(t[i].name),
						     t[i].desc, strlen(t[i].desc)),
				 t[i].want);
}

static void test_jdk_round_trip(void **state)
{
	(void)state;
	run_dir(JDK_CLASSES_DIR, 20000);
	/* the JDK exercises every frame kind and the variable-length opcodes,
	 * and calls the allocating intrinsics (Arrays.copyOf(T[], int),
	 * ArrayList.toArray(T[]) ...) */
	assert_true(S.wide > 0 && S.switches > 0 && S.intrinsic_calls > 0);
	assert_true(S.smt_kinds[255] > 0 && S.smt_kinds[247] + S.smt_kinds[251] > 0);
}

static void test_examples_round_trip(void **state)
{
	(void)state;
	run_dir(EXAMPLE_CLASSES_DIR, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insn_len_fixed_and_wide),
		cmocka_unit_test(test_insn_len_switch_padding),
		cmocka_unit_test(test_tiny_round_trip_and_pool_additions),
		cmocka_unit_test(test_pool_double_in_last_slot),
		cmocka_unit_test(test_pool_lookups),
		cmocka_unit_test(test_allocating_intrinsics),
		cmocka_unit_test(test_jdk_round_trip),
		cmocka_unit_test(test_examples_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

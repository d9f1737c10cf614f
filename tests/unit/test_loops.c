/* test_loops.c - agent/loops.c: which loops are counted at their exits.
 * Each method is hand-assembled bytecode in javac's shape for
 * `for (int i = 0; i < n; i++) { new int[1]; }` (static, n in local 0),
 * then changed in one respect that must disqualify the loop (loops.h's
 * conditions); the expected loops follow from the code as written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/cfg.h"
#include "agent/classfile.h"
#include "agent/instrument.h"
#include "agent/loops.h"
#include "model/buf.h"

/* The basic loop: blocks [0,1] entry, [2,4] head, [7,14] latch, [17] exit.
 *   0 iconst_0; 1 istore_1; 2 iload_1; 3 iload_0; 4 if_icmpge 17;
 *   7 iconst_1; 8 newarray int; 10 pop; 11 iinc 1 1; 14 goto 2; 17 return */
static const uint8_t basic[] = { 0x03, 0x3c, 0x1b, 0x1a, 0xa2, 0x00, 0x0d, 0x04, 0xbc, 0x0a,
				 0x57, 0x84, 0x01, 0x01, 0xa7, 0xff, 0xf4, 0xb1 };

struct method {
	struct cf_class *c;        /* an arena for the decoder */
	struct cf_code k;
	struct cf_insn *v;
	uint32_t n;
	struct cfg g;
	struct trip_loops tl;
};

/* Decodes code (with exception table exc[0..nexc)) and finds its loops. */
static void find(struct method *m, const uint8_t *code, uint32_t len, struct cf_exc *exc, uint32_t nexc,
		 const struct cf_frame *frames, uint32_t nframes, int need_frames)
{
	struct buf b = { 0 };
	assert_int_equal(instr_marker_class(&b), 0);
	assert_int_equal(cf_parse(b.data, b.len, &m->c), 0);
	buf_free(&b);
	m->k = (struct cf_code){ .max_stack = 2, .max_locals = 3, .len = len, .code = code, .exc = exc, .nexc = nexc };
	assert_int_equal(cf_code_decode(m->c, &m->k, &m->v, &m->n), 0);
	assert_int_equal(cfg_build(m->v, m->n, &m->k, &m->g), 0);
	assert_int_equal(trip_loops_find(&m->g, m->v, &m->k, frames, nframes, need_frames, &m->tl), 0);
}

static void done(struct method *m)
{
	trip_loops_free(&m->tl);
	cfg_free(&m->g);
	cf_free(m->c);
}

static uint32_t block_at(const struct cfg *g, uint32_t pc)
{
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (g->b[b].start_pc == pc)
			return b;
	fail_msg("no block at %u", pc);
	return 0;
}

/* How many loops a variant of basic (byte at `at` set to `val`) has. */
static uint32_t loops_of_variant(uint32_t at, uint8_t val)
{
	uint8_t code[sizeof(basic)];
	memcpy(code, basic, sizeof(basic));
	code[at] = val;
	struct method m;
	find(&m, code, sizeof(code), NULL, 0, NULL, 0, 0);
	uint32_t n = m.tl.n;
	done(&m);
	return n;
}

static void test_basic_loop(void **state)
{
	(void)state;
	struct method m;
	find(&m, basic, sizeof(basic), NULL, 0, NULL, 0, 0);
	assert_int_equal(m.tl.n, 1);
	const struct trip_loop *l = &m.tl.l[0];
	assert_int_equal(l->var, 1);
	assert_int_equal(l->head, block_at(&m.g, 2));
	assert_int_equal(l->latch, block_at(&m.g, 7));
	assert_int_equal(l->nexits, 1);
	assert_int_equal(m.tl.exit[l->exit_first], block_at(&m.g, 17));
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 0)], TRIP_NONE);
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 2)], 0);
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 7)], 0);
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 17)], TRIP_NONE);
	done(&m);
}

static void test_disqualified(void **state)
{
	(void)state;
	assert_int_equal(loops_of_variant(10, 0x3c), 0);  /* pop -> istore_1: a second write of i */
	assert_int_equal(loops_of_variant(10, 0x3f), 0);  /* pop -> lstore_0: writes slots 0 and 1 */
	assert_int_equal(loops_of_variant(10, 0x3d), 1);  /* pop -> istore_2: another local, still counted */
	assert_int_equal(loops_of_variant(0, 0x04), 0);   /* iconst_1: i does not start at 0 */
	assert_int_equal(loops_of_variant(13, 0x02), 0);  /* iinc 1 2: not one per turn */
	assert_int_equal(loops_of_variant(12, 0x02), 0);  /* iinc 2 1: the latch counts another local */
}

/* A handler of the method covering an instruction of the loop (the
 * exception would not leave the method) or not. */
static void test_handler_covers(void **state)
{
	(void)state;
	/* basic with its return replaced by: 17 return; 18 astore_2; 19 return
	 * (the handler), the range [7, 11) in the body */
	uint8_t code[sizeof(basic) + 2];
	memcpy(code, basic, sizeof(basic));
	code[sizeof(basic)] = 0x4d;
	code[sizeof(basic) + 1] = 0xb1;
	struct cf_exc in_loop = { 7, 11, 18, 0 };
	struct method m;
	find(&m, code, sizeof(code), &in_loop, 1, NULL, 0, 0);
	assert_int_equal(m.tl.n, 0);
	done(&m);
	struct cf_exc outside = { 17, 18, 18, 0 }; /* the return after the loop */
	find(&m, code, sizeof(code), &outside, 1, NULL, 0, 0);
	assert_int_equal(m.tl.n, 1);
	done(&m);
}

/* The exit target reached from before the loop too (`if (n <= 0) return`
 * jumping to the loop's exit): no add can go at its start.
 *   0 iload_0; 1 ifle 21; 4 iconst_0; 5 istore_1; 6 iload_1 (head);
 *   7 iload_0; 8 if_icmpge 21; 11 iconst_1; 12 newarray int; 14 pop;
 *   15 iinc 1 1; 18 goto 6; 21 return */
static void test_shared_exit(void **state)
{
	(void)state;
	static const uint8_t code[] = { 0x1a, 0x9e, 0x00, 0x14, 0x03, 0x3c, 0x1b, 0x1a, 0xa2, 0x00, 0x0d,
					0x04, 0xbc, 0x0a, 0x57, 0x84, 0x01, 0x01, 0xa7, 0xff, 0xf4, 0xb1 };
	struct method m;
	find(&m, code, sizeof(code), NULL, 0, NULL, 0, 0);
	assert_int_equal(m.tl.n, 0);
	done(&m);
}

/* javac's `if (c) { ... } else { for ... }`: the loop's exit target is
 * also entered by the other branch's goto.  With frames, where the target's
 * frame has no i, that block sets i to 0 as it leaves (the add at the
 * target then adds nothing) and the loop counts; where the target's frame
 * has i, or without frames, or entered by a conditional branch, it does
 * not.
 *   0 iload_0; 1 ifle 21; 4 iconst_0; 5 istore_1; 6 iload_1 (head);
 *   7 iload_0; 8 if_icmpge 28; 11 iconst_1; 12 newarray int; 14 pop;
 *   15 iinc 1 1; 18 goto 6; 21 iconst_2; 22 newarray int; 24 pop;
 *   25 goto 28 (or nop nop nop: falls through); 28 return */
static void test_shared_exit_zeroed(void **state)
{
	(void)state;
	uint8_t code[] = { 0x1a, 0x9e, 0x00, 0x14, 0x03, 0x3c, 0x1b, 0x1a, 0xa2, 0x00, 0x14, 0x04, 0xbc, 0x0a, 0x57,
			   0x84, 0x01, 0x01, 0xa7, 0xff, 0xf4, 0x05, 0xbc, 0x0a, 0x57, 0xa7, 0x00, 0x03, 0xb1 };
	struct cf_vtype two_ints[] = { { VT_INTEGER, 0 }, { VT_INTEGER, 0 } };
	struct cf_vtype int_top[] = { { VT_INTEGER, 0 }, { VT_TOP, 0 } };
	struct cf_frame frames[] = { { 255, 6, 2, 0, two_ints, NULL },
				     { 255, 21, 1, 0, two_ints, NULL },
				     { 255, 28, 1, 0, two_ints, NULL } };
	struct method m;
	find(&m, code, sizeof(code), NULL, 0, frames, 3, 1);
	assert_int_equal(m.tl.n, 1);
	assert_int_equal(m.tl.l[0].nexits, 1);
	assert_int_equal(m.tl.exit[m.tl.l[0].exit_first], block_at(&m.g, 28));
	assert_int_equal(m.tl.l[0].nzero, 1);
	assert_int_equal(m.tl.zero[m.tl.l[0].zero_first], block_at(&m.g, 21));
	done(&m);
	frames[2].nlocals = 2;
	frames[2].locals = int_top; /* i listed, without a value: the same */
	find(&m, code, sizeof(code), NULL, 0, frames, 3, 1);
	assert_int_equal(m.tl.n, 1);
	done(&m);
	frames[2].locals = two_ints; /* i live at the target */
	find(&m, code, sizeof(code), NULL, 0, frames, 3, 1);
	assert_int_equal(m.tl.n, 0);
	done(&m);
	frames[2].nlocals = 1;
	find(&m, code, sizeof(code), NULL, 0, NULL, 0, 0); /* no frames: liveness unknown */
	assert_int_equal(m.tl.n, 0);
	done(&m);
	code[25] = code[26] = code[27] = 0x00; /* the else block falls through */
	find(&m, code, sizeof(code), NULL, 0, frames, 3, 1);
	assert_int_equal(m.tl.n, 1);
	assert_int_equal(m.tl.zero[m.tl.l[0].zero_first], block_at(&m.g, 21));
	done(&m);
	code[25] = 0x99; /* ifeq 28: entered by a conditional branch */
	code[27] = 0x03;
	find(&m, code, sizeof(code), NULL, 0, frames, 3, 1);
	assert_int_equal(m.tl.n, 0);
	done(&m);
}

/* A break: its block (a goto to the code after the loop) is entered from
 * the loop only and joins the loop, so that the exit target is entered
 * from the loop only.
 *   0 iconst_0; 1 istore_1; 2 iload_1 (head); 3 iload_0; 4 if_icmpge 25;
 *   7 iconst_1; 8 newarray int; 10 pop; 11 iload_1; 12 iconst_5;
 *   13 if_icmpne 19; 16 goto 25 (break); 19 iinc 1 1; 22 goto 2; 25 return */
static void test_break(void **state)
{
	(void)state;
	static const uint8_t code[] = { 0x03, 0x3c, 0x1b, 0x1a, 0xa2, 0x00, 0x15, 0x04, 0xbc, 0x0a, 0x57, 0x1b, 0x08,
					0xa0, 0x00, 0x06, 0xa7, 0x00, 0x09, 0x84, 0x01, 0x01, 0xa7, 0xff, 0xec, 0xb1 };
	struct method m;
	find(&m, code, sizeof(code), NULL, 0, NULL, 0, 0);
	assert_int_equal(m.tl.n, 1);
	assert_int_equal(m.tl.l[0].latch, block_at(&m.g, 19));
	assert_int_equal(m.tl.l[0].nexits, 1);
	assert_int_equal(m.tl.exit[m.tl.l[0].exit_first], block_at(&m.g, 25));
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 16)], 0);
	done(&m);
}

/* Nested loops, both counted ones: only the inner one is kept.
 *   0 iconst_0; 1 istore_1; 2 iload_1 (outer head); 3 iload_0;
 *   4 if_icmpge 30; 7 iconst_0; 8 istore_2; 9 iload_2 (inner head);
 *   10 iload_0; 11 if_icmpge 24; 14 iconst_1; 15 newarray int; 17 pop;
 *   18 iinc 2 1; 21 goto 9; 24 iinc 1 1 (outer latch); 27 goto 2; 30 return */
static void test_nested(void **state)
{
	(void)state;
	static const uint8_t code[] = { 0x03, 0x3c, 0x1b, 0x1a, 0xa2, 0x00, 0x1a, 0x03, 0x3d, 0x1c, 0x1a,
					0xa2, 0x00, 0x0d, 0x04, 0xbc, 0x0a, 0x57, 0x84, 0x02, 0x01, 0xa7,
					0xff, 0xf4, 0x84, 0x01, 0x01, 0xa7, 0xff, 0xe7, 0xb1 };
	struct method m;
	find(&m, code, sizeof(code), NULL, 0, NULL, 0, 0);
	assert_int_equal(m.tl.n, 1);
	assert_int_equal(m.tl.l[0].var, 2);
	assert_int_equal(m.tl.l[0].head, block_at(&m.g, 9));
	assert_int_equal(m.tl.exit[m.tl.l[0].exit_first], block_at(&m.g, 24));
	assert_int_equal(m.tl.loop_of[block_at(&m.g, 2)], TRIP_NONE);
	done(&m);
}

/* With stack-map frames (class version 50 on): the exit target needs one,
 * and every frame inside the loop must have i as an int. */
static void test_frames(void **state)
{
	(void)state;
	struct cf_vtype two_ints[] = { { VT_INTEGER, 0 }, { VT_INTEGER, 0 } };
	struct cf_vtype int_top[] = { { VT_INTEGER, 0 }, { VT_TOP, 0 } };
	struct cf_frame good[] = { { 255, 2, 2, 0, two_ints, NULL }, { 255, 17, 1, 0, two_ints, NULL } };
	struct cf_frame top_i[] = { { 255, 2, 2, 0, int_top, NULL }, { 255, 17, 1, 0, two_ints, NULL } };
	struct method m;
	find(&m, basic, sizeof(basic), NULL, 0, good, 2, 1);
	assert_int_equal(m.tl.n, 1);
	done(&m);
	find(&m, basic, sizeof(basic), NULL, 0, good, 1, 1); /* none at the exit target */
	assert_int_equal(m.tl.n, 0);
	done(&m);
	find(&m, basic, sizeof(basic), NULL, 0, top_i, 2, 1);
	assert_int_equal(m.tl.n, 0);
	done(&m);
}

static void test_frame_entry(void **state)
{
	(void)state;
	struct cf_vtype l[] = { { VT_INTEGER, 0 }, { VT_LONG, 0 }, { VT_INTEGER, 0 } };
	struct cf_frame f = { 255, 0, 3, 0, l, NULL };
	assert_int_equal(trip_frame_entry(&f, 0), 0);
	assert_int_equal(trip_frame_entry(&f, 1), 1);
	assert_int_equal(trip_frame_entry(&f, 2), -2);
	assert_int_equal(trip_frame_entry(&f, 3), 2);
	assert_int_equal(trip_frame_entry(&f, 4), -1);
}

/* A counted loop's counter read over a run (trip_count_read).  The JVM's
 * counter is a long that each exit adds (1L << 32) + i to, i in
 * [0, 2^31): simulated here as a uint64_t (Java's long wraps alike).  The
 * expected turns and adds are kept apart as they are made.  The run starts
 * close to 2^64 (as if after a long history: only growth is read), makes
 * adds of up to 2^31 - 1 turns, and is read after one or two adds (fewer
 * than 2^32 turns between reads), until it holds past 2^36 turns: far
 * more than the 32 bits the packed value has for them. */
static void test_trip_count(void **state)
{
	(void)state;
	uint64_t packed = UINT64_MAX - (3ull << 32) - 12345, turns = 0, adds = 0;
	struct trip_count t = { 0 };
	trip_count_read(&t, packed);
	uint64_t base_turns = t.turns, base_adds = t.adds;
	srand(9);
	for (int k = 0; turns < (1ull << 36); k++) {
		int per_read = 1 + k % 2;
		for (int j = 0; j < per_read; j++) {
			uint64_t i = k % 7 == 0 ? 0x7fffffffu : (uint64_t)rand() % 0x80000000u;
			packed += (1ull << 32) + i;
			turns += i;
			adds++;
		}
		trip_count_read(&t, packed);
		assert_true(t.turns - base_turns == turns);
		assert_true(t.adds - base_adds == adds);
	}
	assert_true(packed < UINT64_MAX / 2); /* it wrapped past 2^64 */
	/* the limit stated in loops.h: 2^32 turns or more between two reads
	 * carry into the adds (three adds of 2^31 - 1) */
	for (int j = 0; j < 3; j++) {
		packed += (1ull << 32) + 0x7fffffffu;
		turns += 0x7fffffffu;
		adds++;
	}
	trip_count_read(&t, packed);
	assert_true(t.turns - base_turns != turns);
	assert_true(t.adds - base_adds == adds + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_loop),   cmocka_unit_test(test_disqualified),
		cmocka_unit_test(test_handler_covers), cmocka_unit_test(test_shared_exit),
		cmocka_unit_test(test_shared_exit_zeroed),
		cmocka_unit_test(test_break),
		cmocka_unit_test(test_nested),       cmocka_unit_test(test_frames),
		cmocka_unit_test(test_frame_entry),  cmocka_unit_test(test_trip_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

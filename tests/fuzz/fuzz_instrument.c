/* fuzz_instrument.c - libFuzzer target for the agent's instrumenter
 * (agent/instrument.h).  In mode=count the agent rewrites every class an
 * application loads, inside the application's JVM: whatever bytes a class
 * loader defines (generated classes, other agents' output, damaged jars)
 * must neither crash nor hang it, and what it writes back must be a class
 * it can read again.  The reader on its own is fuzz_classfile's.
 *
 * Input: one byte that picks the mode, then a class file.  The byte b:
 *   b % 3 == 0  path counters (INSTR_PATHS), with b & 4: the bytecode
 *               exception corrections (else the sink takes them),
 *               b & 8: atomic increments, b & 16: counter inlining (clones,
 *               every call in an allocating block redirected), b & 32:
 *               counted loops counted at their exits;
 *   b % 3 == 1  one counter per allocation site (INSTR_SITES);
 *   b % 3 == 2  the relayout that inserts nothing (INSTR_RELAYOUT): it must
 *               give the class's bytes back.
 * One instrumentation per input: six per input made each run six times
 * as long.  A class the instrumenter rewrites must parse again.  Counter
 * indexes come from a small budget, so that running out of them is
 * exercised too.  seeds/fuzz_instrument/ holds the class files of
 * tests/fuzz/crashes/ in every mode (tests/fuzz/README.md).
 *
 * Built by `make build-fuzz/fuzz_instrument` (clang -fsanitize=fuzzer,...).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/classfile.h"
#include "agent/instrument.h"
#include "model/buf.h"

#include "fuzz_common.h"

#define COUNTER_BUDGET 4096u

static uint32_t next_counter;

static uint32_t f_reserve(void *ctx, uint32_t n)
{
	(void)ctx;
	if (n > COUNTER_BUDGET - next_counter)
		return UINT32_MAX;
	uint32_t b = next_counter;
	next_counter += n;
	return b;
}

static uint32_t f_method(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			 size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal)
{
	(void)ctx; (void)cls; (void)cl; (void)name; (void)nl; (void)desc; (void)dl; (void)nsites; (void)code_hash;
	(void)nblocks; (void)nnormal;
	return 0;
}

static int f_site(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type)
{
	(void)ctx; (void)method; (void)k; (void)pc; (void)line;
	return strlen(type) < 256 ? 0 : -EINVAL; /* NUL-terminated, bounded */
}

static int f_counter(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
		     uint32_t n)
{
	(void)ctx; (void)method; (void)k; (void)coef; (void)n;
	if (counter >= next_counter)
		abort(); /* a counter that was never reserved */
	return 0;
}

static int f_correction(void *ctx, uint32_t method, uint32_t start, uint32_t end, const uint32_t *k,
			const int32_t *coef, uint32_t n)
{
	(void)ctx; (void)method; (void)k; (void)coef; (void)n;
	if (start >= end)
		abort(); /* ranges are never empty */
	return 0;
}

static uint32_t clones;

static int f_trip(void *ctx, uint32_t method, uint32_t counter)
{
	(void)ctx; (void)method;
	if (counter >= next_counter)
		abort(); /* a counted loop's counter that was never reserved */
	return 0;
}

static int f_clone(void *ctx, uint32_t method, const uint32_t *k, const int32_t *coef, uint32_t n)
{
	(void)ctx; (void)method; (void)k; (void)coef;
	if (n == 0)
		abort(); /* a clone stands for some allocation */
	clones++;
	return 0;
}

/* Every call is taken for one of a clone (handle 0). */
static uint32_t f_callee(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			 size_t dl)
{
	(void)ctx; (void)cls; (void)cl; (void)name; (void)nl; (void)desc; (void)dl;
	return 0;
}

static int f_inlined(void *ctx, uint32_t method, uint32_t k, uint32_t handle)
{
	(void)ctx; (void)method; (void)k;
	if (handle != 0)
		abort();
	return 0;
}

static void check_parses(const uint8_t *data, size_t n)
{
	struct cf_class *c;
	if (cf_parse(data, n, &c))
		abort(); /* the instrumenter wrote a class it cannot read */
	cf_free(c);
}

static void instrument(const uint8_t *data, size_t size, enum instr_mode mode, int bytecode, int atomic, int inl,
		       int loops)
{
	struct instr_sink sink = { .reserve = f_reserve, .method = f_method, .site = f_site,
				   .counter = f_counter, .correction = bytecode ? NULL : f_correction,
				   .trip = loops ? f_trip : NULL, .loops = loops, .atomic = atomic, .bytecode = bytecode };
	if (inl) {
		sink.clone = f_clone;
		sink.callee = f_callee;
		sink.inlined = f_inlined;
	}
	struct instr_stats st;
	struct buf out;
	memset(&st, 0, sizeof st);
	buf_init(&out);
	next_counter = 0;
	int rc = instr_class(data, size, &sink, mode, &out, &st);
	if (rc == 1) {
		check_parses(out.data, out.len);
		if (mode == INSTR_RELAYOUT && (out.len != size || memcmp(out.data, data, size)))
			abort(); /* relayout inserts nothing: the same bytes */
	} else if (rc == 0 && out.len) {
		abort(); /* "nothing changed" must leave out untouched */
	}
	buf_free(&out);
}

/* -entropic=0: libFuzzer 14's entropic schedule updates a frequency for
 * every feature of every run, with a linear search of its rare features;
 * with the tens of thousands of features a run of the instrumenter hits,
 * perf put 78 % of the time there, and the plain schedule ran 2.3 times as
 * many inputs in 60 s, to more coverage.  (On the other targets entropic
 * pays for itself: it prefers the inputs that run fast.) */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, (const char *const[]){ "-entropic=0", "-max_len=16384", NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t b = data[0];
	switch (b % 3) {
	case 0:
		instrument(data + 1, size - 1, INSTR_PATHS, (b & 4) != 0, (b & 8) != 0, (b & 16) != 0,
			   (b & 32) != 0);
		break;
	case 1:
		instrument(data + 1, size - 1, INSTR_SITES, 0, 0, 0, 0);
		break;
	default:
		instrument(data + 1, size - 1, INSTR_RELAYOUT, 0, 0, 0, 0);
		break;
	}
	return 0;
}

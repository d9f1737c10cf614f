/* fuzz_classfile.c - libFuzzer target for the agent's class-file reader and
 * instrumenter (agent/classfile.h, agent/instrument.h).  In mode=count the
 * agent parses and rewrites every class an application loads, inside the
 * application's JVM: whatever bytes a class loader defines (generated
 * classes, other agents' output, damaged jars) must neither crash nor hang
 * it, and what it writes back must be a class it can read again.
 *
 * Every input is
 *   1. parsed; when it parses, written back, which must give the same bytes
 *      (the reader keeps what it does not interpret), and every method's
 *      code decoded;
 *   2. instrumented in each mode (path counters with and without the
 *      bytecode exception corrections, atomic increments, counter inlining
 *      (clones, every call in an allocating block redirected), one counter
 *      per site, the relayout that inserts nothing); a class the instrumenter
 *      rewrites must parse again, and the relayout must give the input's
 *      bytes back.
 * Counter indexes come from a small budget, so that running out of them
 * is exercised too.
 *
 * Built by `make fuzz-short` / `make fuzz` (clang -fsanitize=fuzzer,...).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/classfile.h"
#include "agent/instrument.h"
#include "model/buf.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_class *c;
	if (cf_parse(data, size, &c) == 0) {
		struct buf out;
		buf_init(&out);
		if (cf_write(c, &out) == 0 && (out.len != size || memcmp(out.data, data, size)))
			abort(); /* a round trip without changes gives the same bytes */
		buf_free(&out);
		for (uint32_t i = 0; i < c->nmethods; i++) {
			struct cf_insn *v;
			uint32_t n;
			if (c->methods[i].code)
				(void)cf_code_decode(c, c->methods[i].code, &v, &n);
		}
		cf_free(c);
	}
	instrument(data, size, INSTR_PATHS, 1, 0, 0, 0);
	instrument(data, size, INSTR_PATHS, 0, 1, 0, 0);
	instrument(data, size, INSTR_PATHS, 1, 0, 1, 1);
	instrument(data, size, INSTR_PATHS, 0, 0, 0, 1);
	instrument(data, size, INSTR_SITES, 0, 0, 0, 0);
	instrument(data, size, INSTR_RELAYOUT, 0, 0, 0, 0);
	return 0;
}

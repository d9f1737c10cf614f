/* fuzz_classfile.c - libFuzzer target for the agent's class-file reader
 * (agent/classfile.h), which in mode=count reads every class an
 * application loads, inside the application's JVM: whatever bytes a class
 * loader defines must neither crash nor hang it.
 *
 * Every input is parsed; when it parses, written back, which must give
 * the same bytes (the reader keeps what it does not interpret), and every
 * method's code decoded.  Instrumenting is fuzz_instrument's.
 *
 * Built by `make build-fuzz/fuzz_classfile` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/classfile.h"
#include "model/buf.h"

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=16384", NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_class *c;
	if (cf_parse(data, size, &c) != 0)
		return 0;
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
	return 0;
}

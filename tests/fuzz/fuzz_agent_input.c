/* fuzz_agent_input.c - libFuzzer target for the agent's other readers: the
 * option string after -agentpath:...= (agent/agent_opts.h), which users
 * type, and the JVM's hsperfdata file (agent/perfdata.h), which the agent
 * maps and reads in GC callbacks.  Neither may crash or read outside its
 * input.
 *
 * The first byte chooses: even, the rest is an option string (cut at the
 * first NUL); odd, the rest is an hsperfdata buffer, parsed, then sampled
 * twice and compared as the GC callbacks do.  A refused option string
 * must come with a NUL-terminated message naming it.
 *
 * Built by `make build-fuzz/fuzz_agent_input` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_opts.h"
#include "agent/perfdata.h"

#include "fuzz_common.h"

static void options(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return;
	memcpy(s, data, size);
	s[size] = 0;
	struct agent_opts o;
	char err[256];
	memset(err, 0x55, sizeof err);
	if (agent_opts_parse(&o, s, err, sizeof err) != 0 && !memchr(err, 0, sizeof err))
		abort(); /* a refusal without a terminated message */
	free(s);
}

static void hsperfdata(const uint8_t *data, size_t size)
{
	/* an aligned copy, as the mapped file is */
	void *buf = aligned_alloc(8, (size + 7) / 8 * 8 + 8);
	if (!buf)
		return;
	memcpy(buf, data, size);
	struct perfdata pd;
	if (perfdata_parse(buf, size, &pd) == 0) {
		struct perfdata_sample a, b;
		perfdata_sample(&pd, &a);
		perfdata_sample(&pd, &b);
		int full;
		char cause[PERFDATA_CAUSE_MAX];
		perfdata_gc(&pd, &a, &b, &full, cause, sizeof cause);
		if (!memchr(cause, 0, sizeof cause) || !memchr(a.cause, 0, sizeof a.cause))
			abort();
	}
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		hsperfdata(data + 1, size - 1);
	else
		options(data + 1, size - 1);
	return 0;
}

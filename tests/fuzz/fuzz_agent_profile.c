/* fuzz_agent_profile.c - libFuzzer target for mode=count's profile files
 * (agent/profile.h), which the agent reads at start from a path the user
 * gives: a file left by another version, cut short or edited by hand.
 * Parsing may refuse it (with a NUL-terminated message naming the line)
 * but never crash or read outside it; every plan it accepts has its
 * frequencies, and the lookups find each entry again.
 *
 * Built by `make build-fuzz/fuzz_agent_profile` (clang -fsanitize=fuzzer,...);
 * tests/fuzz/README.md.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/profile.h"

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p = { 0 };
	char err[256];
	memset(err, 0x55, sizeof err);
	int rc = profile_parse(&p, (const char *)data, size, err, sizeof err);
	if (rc && !memchr(err, 0, sizeof err))
		abort(); /* a refusal without a terminated message */
	if (rc && rc != -EINVAL && rc != -ENOMEM)
		abort();
	struct profile_entry *e, *tmp;
	HASH_ITER(hh, p.by_key, e, tmp) {
		int sites = 0;
		const double *f = profile_plan(&p, e->key, e->keylen, e->hash, e->nblocks, e->nnormal, &sites);
		if (f != e->freq || sites != e->sites || (!f && !sites))
			abort();
		double sum = 0;
		for (size_t i = 0; f && i < e->nnormal + 2 * (size_t)e->nblocks; i++)
			sum += f[i]; /* every value is there (ASan) */
		if (sum < 0)
			abort();
	}
	/* every clone link is found, and is a key the format can hold */
	struct profile_link *l, *ltmp;
	uint32_t links = 0;
	HASH_ITER(hh, p.links, l, ltmp) {
		links++;
		if (!profile_linked(&p, l->key, l->keylen) || profile_link(&p, l->key, l->keylen, 0) != 0)
			abort();
	}
	if (links != p.nlinks)
		abort();
	profile_free(&p);
	return 0;
}

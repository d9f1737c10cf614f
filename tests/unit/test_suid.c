/* test_suid.c - agent/suid.c's SHA-1 against the FIPS 180 example
 * vectors and sha1sum.  The default serialVersionUID itself is checked
 * against the JDK's (ObjectStreamClass) by
 * tests/integration/test_agent_count.sh (SerialIds: the same values with
 * counter inlining's clones and without). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/suid.h"

static void hex(const uint8_t md[20], char out[41])
{
	for (int i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_sha1_vectors(void **state)
{
	(void)state;
	static const struct { const char *in; const char *md; } v[] = {
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	};
	uint8_t md[20];
	char h[41];
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		suid_sha1((const uint8_t *)v[i].in, strlen(v[i].in), md);
		hex(md, h);
		assert_string_equal(h, v[i].md);
	}
	/* a million 'a': many blocks */
	size_t n = 1000000;
	uint8_t *a = malloc(n);
	assert_non_null(a);
	memset(a, 'a', n);
	suid_sha1(a, n, md);
	free(a);
	hex(md, h);
	assert_string_equal(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	/* 55, 56 and 64 bytes: the padding's edge cases (message, 0x80 and
	 * the 8-byte length just fitting one block, or not); digests from
	 * coreutils' sha1sum */
	static const struct { const char *in; const char *md; } edge[] = {
		{ "1234567890123456789012345678901234567890123456789012345", "827a683fdfdbef225a2421078b7789b134c7eafa" },
		{ "12345678901234567890123456789012345678901234567890123456", "0a84666b66e843a4146088fb46aabaa998b4c2b1" },
		{ "1234567890123456789012345678901234567890123456789012345678901234",
		  "c71490fc24aa3d19e11282da77032dd9cdb33103" },
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		suid_sha1((const uint8_t *)edge[i].in, strlen(edge[i].in), md);
		hex(md, h);
		assert_string_equal(h, edge[i].md);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

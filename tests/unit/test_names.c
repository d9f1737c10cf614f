/* test_names.c - the file-name escaping rule (fs/names.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "model/names.h"

static void expect_escape(const char *raw, const char *want)
{
	char out[NAME_BUF];
	size_t n = name_escape(raw, strlen(raw), out);
	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
}

static void expect_roundtrip(const char *raw, size_t len)
{
	char esc[NAME_BUF], back[1024];
	name_escape(raw, len, esc);
	int n = name_unescape(esc, back, sizeof back);
	assert_int_equal(n, (int)len);
	assert_memory_equal(back, raw, len);
}

static void test_plain_names_unchanged(void **st)
{
	(void)st;
	expect_escape("java.util.HashMap$Node[]", "java.util.HashMap$Node[]");
	expect_escape("com.example.Main.run:42", "com.example.Main.run:42");
	expect_escape("countdown", "countdown"); /* only whole reserved names */
	expect_escape("ümlaut.Klasse", "ümlaut.Klasse");
}

static void test_slash_percent_control(void **st)
{
	(void)st;
	expect_escape("a/b%c", "a%2Fb%25c");
	expect_escape("java/lang/String", "java%2Flang%2FString");
	expect_escape("tab\there", "tab%09here");
	expect_escape("nl\n", "nl%0A");
	expect_escape("del\x7f", "del%7F");
}

static void test_nul_escaped(void **st)
{
	(void)st;
	char out[NAME_BUF];
	const char raw[] = { 'a', '\0', 'b' };
	name_escape(raw, 3, out);
	assert_string_equal(out, "a%00b");
	expect_roundtrip(raw, 3);
}

static void test_reserved(void **st)
{
	(void)st;
	expect_escape("count", "%63ount");
	expect_escape("objects", "%6Fbjects");
	expect_escape("table.csv", "%74able.csv");
	expect_escape("by-type", "%62y-type");
	expect_escape("only-reachable", "%6Fnly-reachable");
	expect_escape(".", "%2E");
	expect_escape("..", "%2E.");
	expect_escape("", "%");
	assert_true(name_is_reserved("summary", 7));
	assert_true(name_is_reserved("by-anything", 11));
	assert_false(name_is_reserved("Summary", 7));
	assert_false(name_is_reserved("by", 2));
}

static void test_roundtrips(void **st)
{
	(void)st;
	const char *names[] = { "a/b%c", "count", ".", "..", "", "%41", "%", "x%~y", "by-site",
				"java.lang.Object[]", "with space", "ü/ö" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		expect_roundtrip(names[i], strlen(names[i]));
}

static void test_escaped_never_has_slash(void **st)
{
	(void)st;
	char raw[256], out[NAME_BUF];
	for (int c = 0; c < 256; c++)
		raw[c] = (char)c;
	name_escape(raw, 256, out);
	assert_null(memchr(out, '/', strlen(out)));
	assert_true(strlen(out) <= NAME_MAX_BYTES);
}

static void test_long_names_shortened(void **st)
{
	(void)st;
	char raw[301], out[NAME_BUF], out2[NAME_BUF], back[400];
	memset(raw, 'X', 300);
	raw[300] = '\0';
	size_t n = name_escape(raw, 300, out);
	assert_true(n <= NAME_MAX_BYTES);
	assert_int_equal(n, strlen(out));
	char *mark = strstr(out, "%~");
	assert_non_null(mark);
	assert_int_equal(strlen(mark), 18); /* "%~" + 16 hex digits */
	for (char *p = out; p < mark; p++)
		assert_int_equal(*p, 'X');
	assert_int_equal(name_unescape(out, back, sizeof back), -ENAMETOOLONG);
	/* A different long name with the same prefix gets a different name. */
	raw[299] = 'Y';
	name_escape(raw, 300, out2);
	assert_string_not_equal(out, out2);
	/* Exactly 255 bytes is not shortened. */
	memset(raw, 'Z', 255);
	assert_int_equal(name_escape(raw, 255, out), 255);
	assert_null(strstr(out, "%~"));
}

static void test_shortening_respects_tokens(void **st)
{
	(void)st;
	/* 200 slashes escape to 600 bytes: the cut must fall between %2F's. */
	char raw[200], out[NAME_BUF];
	memset(raw, '/', sizeof raw);
	name_escape(raw, sizeof raw, out);
	char *mark = strstr(out, "%~");
	assert_non_null(mark);
	assert_int_equal((mark - out) % 3, 0);
	for (char *p = out; p < mark; p += 3)
		assert_memory_equal(p, "%2F", 3);
	/* UTF-8: 'é' is 2 bytes; 150 of them = 300 bytes: cut on a char. */
	char u[300];
	for (int i = 0; i < 150; i++) {
		u[2 * i] = (char)0xc3;
		u[2 * i + 1] = (char)0xa9;
	}
	name_escape(u, sizeof u, out);
	mark = strstr(out, "%~");
	assert_non_null(mark);
	assert_int_equal((mark - out) % 2, 0);
}

static void test_suffix(void **st)
{
	(void)st;
	char name[NAME_BUF] = "Foo", back[64];
	name_add_suffix(name, 2);
	assert_string_equal(name, "Foo%#2");
	assert_int_equal(name_unescape(name, back, sizeof back), 3);
	assert_string_equal(back, "Foo");
	/* A full-length name is cut to keep the suffix within 255 bytes. */
	memset(name, 'A', 255);
	name[255] = '\0';
	size_t n = name_add_suffix(name, 12);
	assert_true(n <= NAME_MAX_BYTES);
	assert_int_equal(strlen(name), n);
	assert_string_equal(name + n - 4, "%#12");
}

static void test_unescape_rejects_bad(void **st)
{
	(void)st;
	char back[64];
	assert_int_equal(name_unescape("a%2", back, sizeof back), -EINVAL);
	assert_int_equal(name_unescape("a%zz", back, sizeof back), -EINVAL);
	assert_int_equal(name_unescape("a/b", back, sizeof back), -EINVAL);
	assert_int_equal(name_unescape("abcdef", back, 3), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_names_unchanged),
		cmocka_unit_test(test_slash_percent_control),
		cmocka_unit_test(test_nul_escaped),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_roundtrips),
		cmocka_unit_test(test_escaped_never_has_slash),
		cmocka_unit_test(test_long_names_shortened),
		cmocka_unit_test(test_shortening_respects_tokens),
		cmocka_unit_test(test_suffix),
		cmocka_unit_test(test_unescape_rejects_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

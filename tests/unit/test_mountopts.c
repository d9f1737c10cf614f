/* test_mountopts.c - the mount command line: every heapfs option with its
 * default and range edges, malformed values, unknown options, FUSE options
 * passed through (and accepted by the installed libfuse), missing
 * arguments, help.
 *
 * Expected values come from the product contract (DESIGN.md and the option
 * spec: cache_mb default 1024, 16..1048576; threads default 0 (every core), 0..256; fuse_threads default 10, 1..256) and
 * from libfuse itself (fuse_new accepts what we pass through), never from
 * mountopts' own tables. */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fuse.h>
#include <fuse_lowlevel.h>

#include "mountopts/mountopts.h"

/* The Makefile links this test with -Wl,--wrap=strdup: mountopts' copies
 * of the trace and mount point names go through here, and fail while
 * strdup_fails is set. */
char *__real_strdup(const char *s);
char *__wrap_strdup(const char *s);
static int strdup_fails;
char *__wrap_strdup(const char *s)
{
	if (strdup_fails) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}

#define ARGC(av) ((int)(sizeof(av) / sizeof((av)[0])) - 1)
/* Parses "heapfs ARGS... " into mo; returns mountopts_parse's result. */
#define PARSE(mo, ...)                                                         \
	({                                                                     \
		char *av_[] = { "heapfs", __VA_ARGS__, NULL };                 \
		mountopts_parse((mo), ARGC(av_), av_);                         \
	})

/* Splits every -o value of args at unescaped commas and looks for opt
 * (exact, unescaped text).  An independent reading of fuse_args. */
static int args_have_opt(const struct fuse_args *a, const char *opt)
{
	for (int i = 1; i < a->argc; i++) {
		const char *v = NULL;
		if (strcmp(a->argv[i], "-o") == 0 && i + 1 < a->argc)
			v = a->argv[++i];
		else if (strncmp(a->argv[i], "-o", 2) == 0)
			v = a->argv[i] + 2;
		if (v == NULL)
			continue;
		char one[1024];
		size_t n = 0;
		for (const char *p = v;; p++) {
			if (*p == '\\' && p[1]) {
				if (n < sizeof one - 1)
					one[n++] = *++p;
				continue;
			}
			if (*p == ',' || *p == '\0') {
				one[n] = '\0';
				if (strcmp(one, opt) == 0)
					return 1;
				n = 0;
				if (*p == '\0')
					break;
				continue;
			}
			if (n < sizeof one - 1)
				one[n++] = *p;
		}
	}
	return 0;
}

static int args_have_word(const struct fuse_args *a, const char *w)
{
	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], w) == 0)
			return 1;
	return 0;
}

/* What the mount code does with fuse_args: conn options out, then fuse_new.
 * Returns 1 if libfuse accepted every option. */
static int libfuse_accepts(const struct fuse_args *in)
{
	static const struct fuse_operations ops;
	struct fuse_args a = FUSE_ARGS_INIT(0, NULL);
	for (int i = 0; i < in->argc; i++)
		assert_int_equal(fuse_opt_add_arg(&a, in->argv[i]), 0);
	struct fuse_conn_info_opts *conn = fuse_parse_conn_info_opts(&a);
	struct fuse *f = conn ? fuse_new(&a, &ops, sizeof ops, NULL) : NULL;
	int ok = f != NULL;
	if (f)
		fuse_destroy(f);
	free(conn);
	fuse_opt_free_args(&a);
	return ok;
}

static void expect_error(struct mountopts *mo, int rc, const char *msg)
{
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(mo->error, msg);
	mountopts_free(mo);
}

static void test_defaults(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "t.htr", "/mnt/x"), 0);
	assert_string_equal(mo.trace, "t.htr");
	assert_string_equal(mo.mountpoint, "/mnt/x");
	assert_int_equal(mo.cache_mb, 1024);
	assert_int_equal(mo.threads, 0);
	assert_int_equal(mo.fuse_threads, 10);
	assert_int_equal(mo.foreground, 0);
	assert_int_equal(mo.debug, 0);
	assert_int_equal(mo.single_thread, 0);
	assert_int_equal(mo.help, 0);
	assert_string_equal(mo.fuse_args.argv[0], "heapfs");
	/* t.htr does not exist here, so fsname is the name as given */
	assert_true(args_have_opt(&mo.fuse_args, "fsname=t.htr"));
	assert_true(args_have_opt(&mo.fuse_args, "subtype=heapfs"));
	assert_false(args_have_word(&mo.fuse_args, "-d"));
	assert_true(libfuse_accepts(&mo.fuse_args));
	mountopts_free(&mo);
}

static void test_flags(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "-f", "t.htr", "m"), 0);
	assert_int_equal(mo.foreground, 1);
	assert_int_equal(mo.debug, 0);
	mountopts_free(&mo);

	assert_int_equal(PARSE(&mo, "t.htr", "-s", "m"), 0);
	assert_int_equal(mo.single_thread, 1);
	assert_int_equal(mo.foreground, 0);
	mountopts_free(&mo);

	assert_int_equal(PARSE(&mo, "t.htr", "m", "-d"), 0);
	assert_int_equal(mo.debug, 1);
	assert_int_equal(mo.foreground, 1); /* -d implies -f */
	assert_true(args_have_word(&mo.fuse_args, "-d"));
	mountopts_free(&mo);

	assert_int_equal(PARSE(&mo, "-o", "debug", "t.htr", "m"), 0);
	assert_int_equal(mo.debug, 1);
	assert_int_equal(mo.foreground, 1);
	mountopts_free(&mo);
}

static void test_cache_mb_edges(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "-o", "cache_mb=16", "t", "m"), 0);
	assert_int_equal(mo.cache_mb, 16);
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-o", "cache_mb=1048576", "t", "m"), 0);
	assert_int_equal(mo.cache_mb, 1048576);
	/* heapfs options are not passed to libfuse */
	assert_false(args_have_opt(&mo.fuse_args, "cache_mb=1048576"));
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-ocache_mb=2048", "t", "m"), 0);
	assert_int_equal(mo.cache_mb, 2048);
	mountopts_free(&mo);

	expect_error(&mo, PARSE(&mo, "-o", "cache_mb=15", "t", "m"),
		     "invalid value for cache_mb: '15' (expected an integer 16..1048576)");
	expect_error(&mo, PARSE(&mo, "-o", "cache_mb=1048577", "t", "m"),
		     "invalid value for cache_mb: '1048577' (expected an integer 16..1048576)");
	expect_error(&mo, PARSE(&mo, "-o", "cache_mb=0", "t", "m"),
		     "invalid value for cache_mb: '0' (expected an integer 16..1048576)");
}

static void test_malformed_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"abc", "", "-16", "+16", " 16", "16 ", "16k", "0x20", "1e3", "16.0",
		"99999999999999999999999999", "18446744073709551616",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct mountopts mo;
		char opt[128], msg[256];
		snprintf(opt, sizeof opt, "cache_mb=%s", bad[i]);
		snprintf(msg, sizeof msg,
			 "invalid value for cache_mb: '%s' (expected an integer 16..1048576)", bad[i]);
		expect_error(&mo, PARSE(&mo, "-o", opt, "t", "m"), msg);
	}
	struct mountopts mo;
	/* no '=' at all */
	expect_error(&mo, PARSE(&mo, "-o", "cache_mb", "t", "m"),
		     "invalid value for cache_mb: '' (expected an integer 16..1048576)");
}

/* -o layout: heap dumps' size model; 0 VisualVM's (default), 1 HotSpot's
 * (enum hprof_layout in model/hprof.h, docs/hprof.md). */
static void test_layout(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "t.hprof", "m"), 0);
	assert_int_equal(mo.layout, 0);
	assert_false(args_have_opt(&mo.fuse_args, "layout=visualvm"));
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-o", "layout=hotspot", "t.hprof", "m"), 0);
	assert_int_equal(mo.layout, 1);
	/* a heapfs option: not passed to libfuse */
	assert_false(args_have_opt(&mo.fuse_args, "layout=hotspot"));
	assert_true(libfuse_accepts(&mo.fuse_args));
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-o", "layout=hotspot,layout=visualvm", "t.hprof", "m"), 0);
	assert_int_equal(mo.layout, 0);
	mountopts_free(&mo);
	expect_error(&mo, PARSE(&mo, "-o", "layout=HotSpot", "t", "m"),
		     "invalid value for layout: 'HotSpot' (expected one of visualvm, hotspot)");
	expect_error(&mo, PARSE(&mo, "-o", "layout", "t", "m"),
		     "invalid value for layout: '' (expected one of visualvm, hotspot)");
}

static void test_threads(void **state)
{
	(void)state;
	struct mountopts mo;
	/* threads: one analysis's threads, 0 (the default) for every core */
	assert_int_equal(PARSE(&mo, "t", "m"), 0);
	assert_int_equal(mo.threads, 0);
	assert_int_equal(mo.fuse_threads, 10);
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-o", "threads=1", "t", "m"), 0);
	assert_int_equal(mo.threads, 1);
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-o", "threads=256", "t", "m"), 0);
	assert_int_equal(mo.threads, 256);
	mountopts_free(&mo);
	expect_error(&mo, PARSE(&mo, "-o", "threads=257", "t", "m"),
		     "invalid value for threads: '257' (expected an integer 0..256)");
	expect_error(&mo, PARSE(&mo, "-o", "threads=", "t", "m"),
		     "invalid value for threads: '' (expected an integer 0..256)");
	/* fuse_threads: FUSE's workers */
	assert_int_equal(PARSE(&mo, "-o", "fuse_threads=256", "t", "m"), 0);
	assert_int_equal(mo.fuse_threads, 256);
	mountopts_free(&mo);
	expect_error(&mo, PARSE(&mo, "-o", "fuse_threads=0", "t", "m"),
		     "invalid value for fuse_threads: '0' (expected an integer 1..256)");
	/* -s runs one FUSE thread: a larger fuse_threads= contradicts it; the
	 * analyses' threads do not */
	expect_error(&mo, PARSE(&mo, "-s", "-o", "fuse_threads=4", "t", "m"),
		     "-s (single-threaded) conflicts with fuse_threads=4");
	assert_int_equal(PARSE(&mo, "-s", "-o", "fuse_threads=1,threads=4", "t", "m"), 0);
	mountopts_free(&mo);
}

static void test_several_and_repeated(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "-o", "cache_mb=32,threads=4,allow_other", "t", "m",
			       "-o", "cache_mb=64"), 0);
	assert_int_equal(mo.cache_mb, 64); /* the last one wins, as with mount(8) */
	assert_int_equal(mo.threads, 4);
	assert_true(args_have_opt(&mo.fuse_args, "allow_other"));
	mountopts_free(&mo);
}

static void test_unknown_options(void **state)
{
	(void)state;
	struct mountopts mo;
	expect_error(&mo, PARSE(&mo, "-o", "foo=bar", "t", "m"), "unknown option 'foo=bar'");
	expect_error(&mo, PARSE(&mo, "-o", "allow_other,foo", "t", "m"), "unknown option 'foo'");
	expect_error(&mo, PARSE(&mo, "-x", "t", "m"), "unknown option '-x'");
	expect_error(&mo, PARSE(&mo, "--bogus", "t", "m"), "unknown option '--bogus'");
	/* removed from libfuse 3 (fuse_new refuses them) */
	expect_error(&mo, PARSE(&mo, "-o", "nonempty", "t", "m"), "unknown option 'nonempty'");
	expect_error(&mo, PARSE(&mo, "-o", "use_ino", "t", "m"), "unknown option 'use_ino'");
	expect_error(&mo, PARSE(&mo, "-o", "relatime", "t", "m"), "unknown option 'relatime'");
	/* heapfs owns the caching policy */
	expect_error(&mo, PARSE(&mo, "-o", "attr_timeout=5", "t", "m"),
		     "unknown option 'attr_timeout=5'");
	expect_error(&mo, PARSE(&mo, "-o", "kernel_cache", "t", "m"), "unknown option 'kernel_cache'");
	/* a name is not a prefix match */
	expect_error(&mo, PARSE(&mo, "-o", "cache=5", "t", "m"), "unknown option 'cache=5'");
	expect_error(&mo, PARSE(&mo, "-o", "cache_mbx=5", "t", "m"), "unknown option 'cache_mbx=5'");
}

/* Each of these must reach libfuse unchanged and be accepted by it. */
static void test_fuse_passthrough(void **state)
{
	(void)state;
	static const char *const pass[] = {
		"allow_other", "allow_root", "auto_unmount", "default_permissions", "fsname=mytrace",
		"subtype=xyz", "max_read=65536", "ro", "rw", "nosuid", "nodev", "noexec", "suid",
		"dev", "exec", "async", "sync", "dirsync", "atime", "noatime", "umask=022",
		"uid=0", "gid=0", "noforget", "remember=10", "no_rofd_flush",
		"max_readahead=131072", "max_background=12", "congestion_threshold=9",
		"async_read", "sync_read",
	};
	for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
		struct mountopts mo;
		int rc = PARSE(&mo, "-o", (char *)pass[i], "t", "m");
		if (rc != 0)
			fail_msg("%s refused: %s", pass[i], mo.error);
		if (!args_have_opt(&mo.fuse_args, pass[i]))
			fail_msg("%s not passed through", pass[i]);
		if (!libfuse_accepts(&mo.fuse_args))
			fail_msg("libfuse refuses %s", pass[i]);
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(pass[i], "="), pass[i]);
		assert_true(mountopts_is_fuse_option(name));
		mountopts_free(&mo);
	}
	assert_false(mountopts_is_fuse_option("foo"));
	assert_false(mountopts_is_fuse_option("cache_mb"));

	/* intr: accepted, always on in heapfs, not given to libfuse 3 (which
	 * would refuse it) */
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "-o", "intr", "t", "m"), 0);
	assert_false(args_have_opt(&mo.fuse_args, "intr"));
	assert_true(libfuse_accepts(&mo.fuse_args));
	mountopts_free(&mo);

	/* a user fsname/subtype replaces the defaults */
	assert_int_equal(PARSE(&mo, "-o", "fsname=x,subtype=y", "t", "m"), 0);
	assert_false(args_have_opt(&mo.fuse_args, "fsname=t"));
	assert_false(args_have_opt(&mo.fuse_args, "subtype=heapfs"));
	mountopts_free(&mo);

	/* a comma in the trace name does not split the default fsname */
	assert_int_equal(PARSE(&mo, "a,b.htr", "m"), 0);
	assert_true(args_have_opt(&mo.fuse_args, "fsname=a,b.htr"));
	assert_true(libfuse_accepts(&mo.fuse_args));
	mountopts_free(&mo);
}

static void test_fuse_bad_values(void **state)
{
	(void)state;
	struct mountopts mo;
	expect_error(&mo, PARSE(&mo, "-o", "allow_other=1", "t", "m"),
		     "invalid value for allow_other: '1' (expected no value)");
	expect_error(&mo, PARSE(&mo, "-o", "max_read=abc", "t", "m"),
		     "invalid value for max_read: 'abc' (expected an integer 0..4294967295)");
	expect_error(&mo, PARSE(&mo, "-o", "max_read=4294967296", "t", "m"),
		     "invalid value for max_read: '4294967296' (expected an integer 0..4294967295)");
	expect_error(&mo, PARSE(&mo, "-o", "uid=-1", "t", "m"),
		     "invalid value for uid: '-1' (expected an integer 0..4294967295)");
	expect_error(&mo, PARSE(&mo, "-o", "umask=999", "t", "m"),
		     "invalid value for umask: '999' (expected octal 0..777)");
	expect_error(&mo, PARSE(&mo, "-o", "umask=1777", "t", "m"),
		     "invalid value for umask: '1777' (expected octal 0..777)");
	expect_error(&mo, PARSE(&mo, "-o", "fsname=", "t", "m"),
		     "invalid value for fsname: '' (expected a string)");
	expect_error(&mo, PARSE(&mo, "-o", "fsname", "t", "m"),
		     "invalid value for fsname: '' (expected a string)");
}

static void test_positionals(void **state)
{
	(void)state;
	struct mountopts mo;
	char *only_prog[] = { "heapfs", NULL };
	expect_error(&mo, mountopts_parse(&mo, 1, only_prog), "missing TRACE and MOUNTPOINT");
	expect_error(&mo, PARSE(&mo, "-f"), "missing TRACE and MOUNTPOINT");
	expect_error(&mo, PARSE(&mo, "t.htr"), "missing MOUNTPOINT");
	expect_error(&mo, PARSE(&mo, "-o", "cache_mb=32", "t.htr"), "missing MOUNTPOINT");
	expect_error(&mo, PARSE(&mo, "t.htr", "m", "extra"), "unexpected argument 'extra'");
	expect_error(&mo, PARSE(&mo, "mount", "t.htr", "m"),
		     "unexpected argument 'm' (there is no 'mount' command: "
		     "mount with heapfs [-o OPT[,OPT...]] TRACE MOUNTPOINT)");
	expect_error(&mo, PARSE(&mo, "", "m"), "empty TRACE argument");
	expect_error(&mo, PARSE(&mo, "t.htr", "m", "-o"), "missing argument after -o");
	/* options may come after the positionals, as with mount(8) */
	assert_int_equal(PARSE(&mo, "t.htr", "m", "-o", "threads=3", "-f"), 0);
	assert_int_equal(mo.threads, 3);
	assert_int_equal(mo.foreground, 1);
	mountopts_free(&mo);
	/* "--" ends options: a trace named -f */
	assert_int_equal(PARSE(&mo, "--", "-f", "m"), 0);
	assert_string_equal(mo.trace, "-f");
	assert_int_equal(mo.foreground, 0);
	mountopts_free(&mo);
}

static void test_help(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(PARSE(&mo, "--help"), 0);
	assert_int_equal(mo.help, 1);
	mountopts_free(&mo);
	assert_int_equal(PARSE(&mo, "-h", "t"), 0);
	assert_int_equal(mo.help, 1);
	mountopts_free(&mo);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	mountopts_print_help(f);
	fclose(f);
	static const char *const must[] = {
		"-o cache_mb=N", "default 1024, 16..1048576", "-o threads=N", "default 0, 0..256",
		"-o fuse_threads=N", "default 10, 1..256",
		"-f ", "-d ", "-s ", "allow_other", "fusermount3 -u", "TRACE MOUNTPOINT",
	};
	for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
		if (strstr(text, must[i]) == NULL)
			fail_msg("help lacks '%s'", must[i]);
	free(text);
}

/* heapfs ls/cat -o: heapfs options only; values as for a mount (the
 * defaults and ranges of the option spec), mount options refused. */
static void test_tree_opts(void **state)
{
	(void)state;
	struct mountopts mo;
	assert_int_equal(mountopts_parse_opts(&mo, 0, NULL), 0);
	assert_int_equal(mo.cache_mb, 1024);
	assert_int_equal(mo.suspect_big_pct, 10);
	assert_int_equal(mo.suspect_top, 3);
	assert_null(mo.trace);
	mountopts_free(&mo);

	const char *two[] = { "suspect_big_pct=25,cache_mb=64", "features=a\\,b.txt,suspect_top=1" };
	assert_int_equal(mountopts_parse_opts(&mo, 2, two), 0);
	assert_int_equal(mo.suspect_big_pct, 25);
	assert_int_equal(mo.cache_mb, 64);
	assert_int_equal(mo.suspect_top, 1);
	assert_string_equal(mo.features, "a,b.txt");
	mountopts_free(&mo);

	const char *bad[][1] = { { "suspect_top=6" }, { "nosuch=1" }, { "allow_other" },
				 { "debug" }, { "" }, { "gc_window_min=9,gc_window_max=8" } };
	const char *msg[] = {
		"invalid value for suspect_top: '6' (expected an integer 1..5)",
		"unknown option 'nosuch=1'",
		"option 'allow_other' is a mount option: it means nothing without a mount",
		"option 'debug' is a mount option: it means nothing without a mount",
		"empty -o argument",
		"gc_window_min=9 is above gc_window_max=8",
	};
	for (size_t i = 0; i < sizeof msg / sizeof msg[0]; i++)
		expect_error(&mo, mountopts_parse_opts(&mo, 1, bad[i]), msg[i]);
}

/* Running out of memory is not a usage error: -ENOMEM (the adapter says
 * so and exits 1), never -EINVAL (a usage hint and exit 2). */
static void test_out_of_memory(void **state)
{
	(void)state;
	struct mountopts mo;
	strdup_fails = 1;
	int rc = PARSE(&mo, "t.htr", "/mnt");
	strdup_fails = 0;
	assert_int_equal(rc, -ENOMEM);
	mountopts_free(&mo);
	strdup_fails = 1;
	rc = PARSE(&mo, "-o", "classifiers=c.txt", "t.htr", "/mnt");
	strdup_fails = 0;
	assert_int_equal(rc, -ENOMEM);
	mountopts_free(&mo);
	/* the same lines parse when memory is there */
	assert_int_equal(PARSE(&mo, "-o", "classifiers=c.txt", "t.htr", "/mnt"), 0);
	mountopts_free(&mo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_cache_mb_edges),
		cmocka_unit_test(test_malformed_values),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_several_and_repeated),
		cmocka_unit_test(test_unknown_options),
		cmocka_unit_test(test_fuse_passthrough),
		cmocka_unit_test(test_fuse_bad_values),
		cmocka_unit_test(test_positionals),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_tree_opts),
		cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

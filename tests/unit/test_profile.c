/* test_profile.c - mode=count's profile files (agent/profile.h): parsing,
 * the plans they give, refusals naming the line, and a round trip through
 * the file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/profile.h"
#include "tests/slurp.h"

#define KEY(c, m, d) c "\0" m "\0" d, sizeof(c "\0" m "\0" d) - 1

/* Two methods: A.f with 2 blocks and 1 edge (1 + 2 x 2 = 5 counts), B.g
 * per site. */
static const char good[] = PROFILE_HEADER "\n"
			   "# a comment\n"
			   "\n"
			   "pkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\n"
			   "pkg/B\tg\t()Ljava/lang/Object;\tfedcba9876543210\t3\t2\tsites\t-\r\n";

static void test_parse_and_plan(void **state)
{
	(void)state;
	struct profile p = { 0 };
	char err[128];
	assert_int_equal(profile_parse(&p, good, strlen(good), err, sizeof(err)), 0);
	assert_int_equal(p.n, 2);
	int sites = 0;
	const double *f = profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xff, 2, 1, &sites);
	assert_non_null(f);
	assert_int_equal(sites, 0);
	double want[] = { 7, 7, 0, 0, 7 };
	assert_memory_equal(f, want, sizeof(want));
	/* another code (hash), another CFG, another method: no plan */
	assert_null(profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xfe, 2, 1, &sites));
	assert_null(profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xff, 3, 1, &sites));
	assert_null(profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xff, 2, 2, &sites));
	assert_null(profile_plan(&p, KEY("pkg/A", "f", "(J)V"), 0xff, 2, 1, &sites));
	assert_int_equal(sites, 0);
	/* one counter per site */
	assert_null(profile_plan(&p, KEY("pkg/B", "g", "()Ljava/lang/Object;"), 0xfedcba9876543210ull, 3, 2, &sites));
	assert_int_equal(sites, 1);
	profile_free(&p);
	/* a version 1 file reads (it has no clone links) */
	static const char v1[] = PROFILE_HEADER_V1 "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\n";
	assert_int_equal(profile_parse(&p, v1, strlen(v1), err, sizeof(err)), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.nlinks, 0);
	assert_non_null(profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xff, 2, 1, &sites));
	profile_free(&p);
	/* clone links beside plans; a method may have both */
	static const char links[] = PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\n"
				    "pkg/A\tf\t(I)V\tclone\npkg/C\t<init>\t()V\tclone\n";
	assert_int_equal(profile_parse(&p, links, strlen(links), err, sizeof(err)), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.nlinks, 2);
	assert_true(profile_linked(&p, KEY("pkg/A", "f", "(I)V")));
	assert_true(profile_linked(&p, KEY("pkg/C", "<init>", "()V")));
	assert_false(profile_linked(&p, KEY("pkg/C", "<init>", "(I)V")));
	assert_false(profile_linked(&p, KEY("pkg/B", "g", "()Ljava/lang/Object;")));
	profile_free(&p);
	/* a header alone is an empty profile */
	assert_int_equal(profile_parse(&p, PROFILE_HEADER "\n", strlen(PROFILE_HEADER) + 1, err, sizeof(err)), 0);
	assert_int_equal(p.n, 0);
	profile_free(&p);
}

/* Each bad text is refused with the number of its bad line. */
static void test_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *want;
	} bad[] = {
		{ "", "line 1: empty file" },
		{ "# heapfs-agent profile 3\n", "line 1: not a heapfs-agent profile" },
		/* clone links: version 2 only, 'clone' last, named, once */
		{ PROFILE_HEADER_V1 "\npkg/A\tf\t(I)V\tclone\n", "line 2: 4 fields" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\tclones\n", "line 2: 4 fields, but the last is not 'clone'" },
		{ PROFILE_HEADER "\npkg/A\t\t(I)V\tclone\n", "line 2: an empty class" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\tclone\npkg/A\tf\t(I)V\tclone\n",
		  "line 3: the clone link is listed twice" },
		{ "pkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\n", "line 1: not a heapfs-agent profile" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\n", "line 2: 7 fields" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\tx\n", "line 2: 9 fields" },
		{ PROFILE_HEADER "\n\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7\n", "line 2: an empty class" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000FF\t2\t1\tpaths\t7,7,0,0,7\n", "line 2: the code hash" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t0ff\t2\t1\tpaths\t7,7,0,0,7\n", "line 2: the code hash" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t0\t1\tpaths\t7\n", "line 2: blocks" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t65537\t1\tpaths\t7\n", "line 2: blocks" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t-1\tpaths\t7\n", "line 2: edges" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tedges\t7,7,0,0,7\n", "line 2: the plan" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0\n", "line 2: frequencies" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,0,0,7,1\n", "line 2: frequencies" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,7,,0,7\n", "line 2: frequencies" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t7,-7,0,0,7\n", "line 2: frequencies" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t9007199254740993,0,0,0,0\n",
		  "line 2: frequencies" },
		{ PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tsites\t7,7,0,0,7\n", "line 2: a 'sites' plan" },
		{ PROFILE_HEADER "\n#\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tsites\t-\n"
				 "pkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tsites\t-\n", "line 4: the method is listed twice" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile p = { 0 };
		char err[160];
		int rc = profile_parse(&p, bad[i].text, strlen(bad[i].text), err, sizeof(err));
		if (rc != -EINVAL || strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("text %zu: rc %d, '%s', want '%s'", i, rc, err, bad[i].want);
		profile_free(&p);
	}
	/* a NUL byte inside a line */
	static const char nul[] = PROFILE_HEADER "\npkg/A\tf\0\t(I)V\n";
	struct profile p = { 0 };
	char err[160];
	assert_int_equal(profile_parse(&p, nul, sizeof(nul) - 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 2: a NUL byte");
	profile_free(&p);
	/* the largest count is accepted */
	static const char big[] = PROFILE_HEADER "\npkg/A\tf\t(I)V\t00000000000000ff\t2\t1\tpaths\t9007199254740992,0,0,0,1\n";
	assert_int_equal(profile_parse(&p, big, strlen(big), err, sizeof(err)), 0);
	int sites = 0;
	const double *f = profile_plan(&p, KEY("pkg/A", "f", "(I)V"), 0xff, 2, 1, &sites);
	assert_non_null(f);
	assert_true(f[0] == 9007199254740992.0 && f[4] == 1.0);
	profile_free(&p);
}

/* put, save, load: the same plans; lines sorted by method; replaced plans
 * replaced; names the format cannot hold refused. */
static void test_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_profile_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/p.prof", dir);
	struct profile p = { 0 }, q = { 0 };
	char err[128];
	assert_int_equal(profile_load(&p, path, err, sizeof(err)), -ENOENT);
	double f3[] = { 1, 2, 3, 4, 5, 6, 7, 8 }; /* 3 blocks, 2 edges */
	double f1[] = { 0, 12345678901.0, 1 };      /* 1 block, 1 edge */
	double f1b[] = { 0, 42, 1.6 };
	assert_int_equal(profile_put(&p, KEY("z/Z", "<init>", "()V"), 0x1234, 3, 2, f3), 0);
	assert_int_equal(profile_put(&p, KEY("a/A", "m", "(I)I"), 0xabcdef0123456789ull, 1, 1, f1), 0);
	assert_int_equal(profile_put(&p, KEY("a/A", "m", "(I)I"), 0xabcdef0123456789ull, 1, 1, f1b), 0); /* replaces */
	assert_int_equal(profile_put(&p, KEY("a/A", "n", "()V"), 7, 4, 0, NULL), 0);
	assert_int_equal(profile_put(&p, KEY("a/A", "bad\tname", "()V"), 7, 4, 0, NULL), -EINVAL);
	assert_int_equal(profile_put(&p, "a/A\0m", 5, 7, 4, 0, NULL), -EINVAL); /* two parts */
	assert_int_equal(profile_put(&p, KEY("a/A", "m", "()V"), 7, 0, 0, NULL), -EINVAL); /* no blocks */
	assert_int_equal(profile_link(&p, KEY("z/Z", "<init>", "()V"), 0), 1);
	assert_int_equal(profile_link(&p, KEY("b/B", "s", "()V"), 0), 1);
	assert_int_equal(profile_link(&p, KEY("b/B", "s", "()V"), 0), 0); /* there already */
	assert_int_equal(profile_link(&p, KEY("b/B", "t", "()V"), 0), 1);
	assert_int_equal(profile_link(&p, KEY("b/B", "t", "()V"), 1), 1); /* dropped */
	assert_int_equal(profile_link(&p, KEY("b/B", "u", "()V"), 1), 0); /* none to drop */
	assert_int_equal(profile_link(&p, KEY("b/B", "bad\nname", "()V"), 0), -EINVAL);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.nlinks, 2);
	assert_int_equal(p.changed, 8); /* 4 puts, the replacing one included; 3 links added, 1 dropped */
	assert_int_equal(profile_save(&p, path), 0);
	char tmp[80];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	const char *want = PROFILE_HEADER "\n"
			   "# class\tmethod\tdescriptor\tcode hash\tblocks\tedges\tplan\tfrequencies (agent/profile.h)\n"
			   "a/A\tm\t(I)I\tabcdef0123456789\t1\t1\tpaths\t0,42,2\n"
			   "a/A\tn\t()V\t0000000000000007\t4\t0\tsites\t-\n"
			   "z/Z\t<init>\t()V\t0000000000001234\t3\t2\tpaths\t1,2,3,4,5,6,7,8\n"
			   "# class\tmethod\tdescriptor\tclone: callers linked to its clone at once\n"
			   "b/B\ts\t()V\tclone\n"
			   "z/Z\t<init>\t()V\tclone\n";
	size_t n = 0;
	uint8_t *text = slurp(path, &n);
	assert_non_null(text);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(text, want, n);
	free(text);
	assert_int_equal(profile_load(&q, path, err, sizeof(err)), 0);
	assert_int_equal(q.n, 3);
	assert_int_equal(q.nlinks, 2);
	assert_int_equal(q.changed, 0);
	assert_true(profile_linked(&q, KEY("b/B", "s", "()V")));
	assert_false(profile_linked(&q, KEY("b/B", "t", "()V")));
	int sites = 0;
	const double *f = profile_plan(&q, KEY("z/Z", "<init>", "()V"), 0x1234, 3, 2, &sites);
	assert_non_null(f);
	assert_memory_equal(f, f3, sizeof(f3));
	f = profile_plan(&q, KEY("a/A", "m", "(I)I"), 0xabcdef0123456789ull, 1, 1, &sites);
	assert_non_null(f);
	assert_true(f[1] == 42 && f[2] == 2);
	assert_null(profile_plan(&q, KEY("a/A", "n", "()V"), 7, 4, 0, &sites));
	assert_int_equal(sites, 1);
	profile_free(&p);
	profile_free(&q);
	/* a file that is not a profile */
	FILE *w = fopen(path, "w");
	assert_non_null(w);
	fputs("hello\n", w);
	fclose(w);
	assert_int_equal(profile_load(&q, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1"));
	profile_free(&q);
	/* a directory where the file should be */
	assert_int_equal(profile_load(&q, dir, err, sizeof(err)), -EISDIR);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_plan),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

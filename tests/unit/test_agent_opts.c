/* test_agent_opts.c - the agent's option string (agent/agent_opts.c).
 * Built by agent/agent.mk (it needs no libheapfs.a and no jvmti.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/agent_opts.h"

static void test_defaults(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, NULL, err, sizeof(err)), 0);
	assert_string_equal(o.out, "heapfs.htr");
	assert_int_equal(o.graph, AGENT_GRAPH_EVERY);
	assert_int_equal(o.depth, AGENT_DEFAULT_DEPTH);
	assert_int_equal(o.deaths, 1);
	assert_int_equal(o.help, 0);
	assert_true(agent_opts_gc_wait(&o));
	assert_int_equal(agent_opts_parse(&o, "", err, sizeof(err)), 0);
}

static void test_all_options(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, "out=/tmp/a.htr,graph=none,depth=0,deaths=off,zstd=7,verbose",
					  err, sizeof(err)), 0);
	assert_string_equal(o.out, "/tmp/a.htr");
	assert_int_equal(o.graph, AGENT_GRAPH_NONE);
	assert_int_equal(o.depth, 0);
	assert_int_equal(o.deaths, 0);
	assert_int_equal(o.zstd_level, 7);
	assert_int_equal(o.verbose, 1);
}

static void test_graph_modes(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, "graph=3", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_NTH);
	/* every third GC: 3, 6, ... */
	assert_false(agent_opts_wants_graph(&o, 1, 0));
	assert_false(agent_opts_wants_graph(&o, 2, 1));
	assert_true(agent_opts_wants_graph(&o, 3, 0));
	assert_true(agent_opts_wants_graph(&o, 6, 0));
	assert_int_equal(agent_opts_parse(&o, "graph=full", err, sizeof(err)), 0);
	assert_false(agent_opts_wants_graph(&o, 1, 0));
	assert_true(agent_opts_wants_graph(&o, 2, 1));
	assert_int_equal(agent_opts_parse(&o, "graph=every", err, sizeof(err)), 0);
	assert_true(agent_opts_wants_graph(&o, 7, 0));
	assert_int_equal(agent_opts_parse(&o, "graph=1", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_EVERY);
	assert_int_equal(agent_opts_parse(&o, "graph=none", err, sizeof(err)), 0);
	assert_false(agent_opts_wants_graph(&o, 1, 1));
}

/* GC calls wait only where a walk could be lost: mode=full with a graph. */
static void test_gc_wait(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	static const struct {
		const char *opts;
		int wait;
	} cases[] = {
		{ "graph=every", 1 }, { "graph=5", 1 }, { "graph=full", 1 },
		{ "graph=none", 0 }, { "gcwait=off", 0 }, { "gcwait=on,graph=none", 0 },
		{ "mode=count", 0 }, { "mode=count,gcwait=on", 0 }, { "gcwait=no,graph=every", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(agent_opts_parse(&o, cases[i].opts, err, sizeof(err)), 0);
		assert_int_equal(agent_opts_gc_wait(&o), cases[i].wait);
	}
	assert_int_equal(agent_opts_parse(&o, "gcwait=sometimes", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gcwait"));
}

static void test_bad_options_name_the_option(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	static const char *const bad[] = {
		"bogus", "bogus=1", "graph=sometimes", "graph=0", "graph=-1", "depth=65", "depth=x",
		"depth=", "zstd=0", "zstd=20", "deaths=maybe", "out=", "help=1", "out",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(agent_opts_parse(&o, bad[i], err, sizeof(err)), -EINVAL);
		char key[32];
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(bad[i], "="), bad[i]);
		assert_non_null(strstr(err, key));
	}
}

static void test_help(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, "out=x.htr,help", err, sizeof(err)), 0);
	assert_int_equal(o.help, 1);
	assert_non_null(strstr(agent_opts_help(), "graph="));
	assert_non_null(strstr(agent_opts_help(), "depth="));
}

static void test_count_mode(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, NULL, err, sizeof(err)), 0);
	assert_int_equal(o.mode, AGENT_MODE_FULL);
	assert_int_equal(o.counters, AGENT_DEFAULT_COUNTERS);
	assert_string_equal(o.counts, "");
	assert_int_equal(agent_opts_parse(&o, "mode=count,counters=5000,counts=/tmp/c.tsv", err, sizeof(err)), 0);
	assert_int_equal(o.mode, AGENT_MODE_COUNT);
	assert_int_equal(o.counters, 5000);
	assert_string_equal(o.counts, "/tmp/c.tsv");
	/* counting records no objects */
	assert_int_equal(o.graph, AGENT_GRAPH_NONE);
	assert_int_equal(o.deaths, 0);
	assert_int_equal(agent_opts_parse(&o, "mode=full", err, sizeof(err)), 0);
	assert_int_equal(o.mode, AGENT_MODE_FULL);
	assert_int_equal(agent_opts_parse(&o, "mode=sometimes", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mode"));
	assert_int_equal(agent_opts_parse(&o, "counters=0", err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_opts_parse(&o, "counters=999999999", err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_opts_parse(&o, "counts=", err, sizeof(err)), -EINVAL);
	assert_int_equal(o.count_sites, 0);
	assert_int_equal(agent_opts_parse(&o, "mode=count,counting=sites", err, sizeof(err)), 0);
	assert_int_equal(o.count_sites, 1);
	assert_int_equal(o.hot, 0); /* sites: nothing to re-plan */
	assert_int_equal(agent_opts_parse(&o, "counting=edges", err, sizeof(err)), -EINVAL);
	/* a profile: off unless asked for, a path, not with per-site counters */
	assert_int_equal(agent_opts_parse(&o, "mode=count", err, sizeof(err)), 0);
	assert_string_equal(o.profile, "");
	assert_int_equal(agent_opts_parse(&o, "mode=count,profile=/tmp/p.prof", err, sizeof(err)), 0);
	assert_string_equal(o.profile, "/tmp/p.prof");
	assert_int_equal(agent_opts_parse(&o, "mode=count,counting=sites,profile=/tmp/p.prof", err, sizeof(err)), 0);
	assert_string_equal(o.profile, "");
	assert_int_equal(agent_opts_parse(&o, "mode=count,profile=", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "profile"));
	char longp[AGENT_OUT_MAX + 16] = "profile=";
	memset(longp + 8, 'p', AGENT_OUT_MAX - 5); /* the longest path with room for ".tmp" */
	assert_int_equal(agent_opts_parse(&o, longp, err, sizeof(err)), 0);
	longp[8 + AGENT_OUT_MAX - 5] = 'p'; /* one more: none */
	assert_int_equal(agent_opts_parse(&o, longp, err, sizeof(err)), -EINVAL);
	/* atomic increments off, exception corrections in the bytecode unless asked */
	assert_int_equal(agent_opts_parse(&o, "mode=count", err, sizeof(err)), 0);
	assert_int_equal(o.count_atomic, 0);
	assert_int_equal(o.count_exceptions, COUNT_EXC_BYTECODE);
	assert_int_equal(agent_opts_parse(&o, "mode=count,atomic=on,exceptions=off", err, sizeof(err)), 0);
	assert_int_equal(o.count_atomic, 1);
	assert_int_equal(o.count_exceptions, COUNT_EXC_OFF);
	assert_int_equal(agent_opts_parse(&o, "mode=count,exceptions=correct", err, sizeof(err)), 0);
	assert_int_equal(o.count_exceptions, COUNT_EXC_EVENTS);
	assert_int_equal(agent_opts_parse(&o, "mode=count,exceptions=events", err, sizeof(err)), 0);
	assert_int_equal(o.count_exceptions, COUNT_EXC_EVENTS);
	assert_int_equal(agent_opts_parse(&o, "mode=count,exceptions=bytecode", err, sizeof(err)), 0);
	assert_int_equal(o.count_exceptions, COUNT_EXC_BYTECODE);
	assert_int_equal(o.count_inline, 0); /* counter inlining only when asked for */
	assert_int_equal(o.count_jdk, 1);    /* the JDK's sites are counted unless jdk=off */
	assert_int_equal(agent_opts_parse(&o, "mode=count,jdk=off", err, sizeof(err)), 0);
	assert_int_equal(o.count_jdk, 0);
	assert_int_equal(agent_opts_parse(&o, "mode=count,jdk=maybe", err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_opts_parse(&o, "mode=count", err, sizeof(err)), 0);
	assert_int_equal(agent_opts_parse(&o, "mode=count,inline=on", err, sizeof(err)), 0);
	assert_int_equal(o.count_inline, 1);
	assert_int_equal(agent_opts_parse(&o, "mode=count,inline=off", err, sizeof(err)), 0);
	assert_int_equal(o.count_inline, 0);
	assert_int_equal(agent_opts_parse(&o, "inline=maybe", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "inline"));
	assert_int_equal(o.count_loops, 0); /* counted loops only when asked for */
	assert_int_equal(agent_opts_parse(&o, "mode=count,loops=on", err, sizeof(err)), 0);
	assert_int_equal(o.count_loops, 1);
	assert_int_equal(agent_opts_parse(&o, "mode=count,loops=off", err, sizeof(err)), 0);
	assert_int_equal(o.count_loops, 0);
	assert_int_equal(agent_opts_parse(&o, "loops=2", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "loops"));
	assert_int_equal(agent_opts_parse(&o, "atomic=maybe", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "atomic"));
	assert_int_equal(agent_opts_parse(&o, "exceptions=on", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "exceptions"));
	assert_int_equal(agent_opts_parse(&o, "mode=count", err, sizeof(err)), 0);
	assert_int_equal(o.hot, 0); /* off unless asked for */
	assert_int_equal(agent_opts_parse(&o, "mode=count,hot=10000", err, sizeof(err)), 0);
	assert_int_equal(o.hot, 10000);
	assert_int_equal(agent_opts_parse(&o, "mode=count,hot=0", err, sizeof(err)), 0);
	assert_int_equal(o.hot, 0);
	assert_int_equal(agent_opts_parse(&o, "mode=count,hot=50", err, sizeof(err)), 0);
	assert_int_equal(o.hot, 50);
	assert_int_equal(agent_opts_parse(&o, "hot=-1", err, sizeof(err)), -EINVAL);
}

/* mode=sample: interval with k/m, graph none by default, deaths on; what it refuses. */
static void test_sample_mode(void **state)
{
	(void)state;
	struct agent_opts o;
	char err[256];
	assert_int_equal(agent_opts_parse(&o, "mode=sample", err, sizeof(err)), 0);
	assert_int_equal(o.mode, AGENT_MODE_SAMPLE);
	assert_int_equal(o.interval, 524288);
	assert_int_equal(o.graph, AGENT_GRAPH_NONE);
	assert_int_equal(o.deaths, 1);
	assert_int_equal(o.depth, AGENT_DEFAULT_DEPTH);
	assert_false(agent_opts_gc_wait(&o));
	static const struct { const char *s; uint32_t v; } ok[] = {
		{ "interval=1", 1 }, { "interval=16384", 16384 }, { "interval=512k", 524288 },
		{ "interval=16K", 16384 }, { "interval=1m", 1048576 }, { "interval=1024m", 1u << 30 },
		{ "interval=1g", 1u << 30 }, { "interval=1073741824", 1u << 30 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char opt[64];
		snprintf(opt, sizeof(opt), "mode=sample,%s", ok[i].s);
		assert_int_equal(agent_opts_parse(&o, opt, err, sizeof(err)), 0);
		assert_int_equal(o.interval, ok[i].v);
	}
	/* the order of the items does not matter */
	assert_int_equal(agent_opts_parse(&o, "interval=64k,depth=4,mode=sample", err, sizeof(err)), 0);
	assert_int_equal(o.interval, 65536);
	assert_int_equal(o.depth, 4);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=none,deaths=on", err, sizeof(err)), 0);
	static const char *const bad[] = {
		"interval=0", "interval=", "interval=1073741825", "interval=2g", "interval=1025m",
		"interval=-5", "interval=5x", "interval=5kb", "interval=k", "interval=99999999999",
		"interval=1.5m",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char opt[64];
		snprintf(opt, sizeof(opt), "mode=sample,%s", bad[i]);
		assert_int_equal(agent_opts_parse(&o, opt, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "interval"));
	}
	/* heap walks on request (issue 31), in any order of the items; gcwait
	 * stays off (no allocation gate in this mode) */
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=every", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_EVERY);
	assert_false(agent_opts_gc_wait(&o));
	assert_int_equal(agent_opts_parse(&o, "graph=full,mode=sample", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_FULL);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=4", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_NTH);
	assert_false(agent_opts_wants_graph(&o, 3, 1));
	assert_true(agent_opts_wants_graph(&o, 8, 0));
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "graph"));
	assert_int_equal(agent_opts_parse(&o, "mode=sample,deaths=off", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "deaths=off"));
	/* start=: the objects found at start not recorded but the mirrors and
	 * threads (default), followed to the first GC, or to the end; with
	 * heap walks always to the end, which a walk needs (their tags are how
	 * it meets them) */
	assert_int_equal(agent_opts_parse(&o, "mode=sample", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_NONE);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,start=all", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_ALL);
	assert_int_equal(agent_opts_parse(&o, "start=first-gc,mode=sample", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_FIRST_GC);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,start=none", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_NONE);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=4", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_ALL);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=4,start=all", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_ALL);
	assert_int_equal(agent_opts_parse(&o, "mode=sample,graph=full,start=first-gc", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "start=first-gc needs graph=none"));
	assert_int_equal(agent_opts_parse(&o, "mode=sample,start=none,graph=every", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "start=none needs graph=none"));
	assert_int_equal(agent_opts_parse(&o, "mode=sample,start=gc2", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'start'"));
	assert_int_equal(agent_opts_parse(&o, "mode=sample,start", err, sizeof(err)), -EINVAL);
	assert_int_equal(agent_opts_parse(&o, "start=all", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "start= needs mode=sample"));
	assert_int_equal(agent_opts_parse(&o, "mode=full", err, sizeof(err)), 0);
	assert_int_equal(o.start, AGENT_START_ALL);
	/* an interval without sampling would record everything (or nothing) */
	assert_int_equal(agent_opts_parse(&o, "interval=16k", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mode=sample"));
	assert_int_equal(agent_opts_parse(&o, "mode=count,interval=16k", err, sizeof(err)), -EINVAL);
	/* the other modes keep their defaults */
	assert_int_equal(agent_opts_parse(&o, "mode=full", err, sizeof(err)), 0);
	assert_int_equal(o.graph, AGENT_GRAPH_EVERY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_options),
		cmocka_unit_test(test_graph_modes),
		cmocka_unit_test(test_gc_wait),
		cmocka_unit_test(test_bad_options_name_the_option),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_count_mode),
		cmocka_unit_test(test_sample_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_perfdata.c - the hsperfdata reader (agent/perfdata.c) on buffers
 * built here by hand in HotSpot's layout: the counters found, the sums,
 * what a GC between two samples was, and refusal of damaged buffers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/perfdata.h"

/* ---- a hsperfdata buffer, written the way the JVM lays it out ---------- */

struct pbuf {
	_Alignas(8) unsigned char b[8192];
	size_t len;
	int32_t nentries;
};

static void put_i32(unsigned char *p, int32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void pb_init(struct pbuf *pb)
{
	memset(pb, 0, sizeof(*pb));
	static const unsigned char magic[4] = { 0xca, 0xfe, 0xc0, 0xc0 };
	memcpy(pb->b, magic, 4);
	pb->b[4] = 1; /* little endian (the test runs on x86-64) */
	pb->b[5] = 2; /* major version */
	pb->b[7] = 1; /* accessible */
	put_i32(pb->b + 24, 32);
	pb->len = 32;
}

/* Appends one entry; returns the offset of its data (to change it later). */
static size_t pb_add(struct pbuf *pb, const char *name, char type, const void *data, int32_t vlen)
{
	size_t start = pb->len, nlen = strlen(name) + 1;
	size_t name_off = 20, data_off = (20 + nlen + 7) & ~(size_t)7;
	size_t dlen = type == 'J' ? 8 : (size_t)vlen;
	size_t elen = (data_off + dlen + 7) & ~(size_t)7;
	unsigned char *p = pb->b + start;
	put_i32(p, (int32_t)elen);
	put_i32(p + 4, (int32_t)name_off);
	put_i32(p + 8, type == 'J' ? 0 : vlen);
	p[12] = (unsigned char)type;
	put_i32(p + 16, (int32_t)data_off);
	memcpy(p + name_off, name, nlen);
	memcpy(p + data_off, data, type == 'J' ? 8 : strlen(data) + 1);
	pb->len += elen;
	put_i32(pb->b + 28, ++pb->nentries);
	return start + data_off;
}

static size_t pb_long(struct pbuf *pb, const char *name, int64_t v)
{
	return pb_add(pb, name, 'J', &v, 0);
}

static size_t pb_string(struct pbuf *pb, const char *name, const char *v)
{
	return pb_add(pb, name, 'B', v, 64);
}

static void pb_set_long(struct pbuf *pb, size_t off, int64_t v)
{
	memcpy(pb->b + off, &v, 8);
}

static void pb_set_string(struct pbuf *pb, size_t off, const char *v)
{
	memcpy(pb->b + off, v, strlen(v) + 1);
}

/* G1 as JDK 17 names it, with counters the reader must not sum. */
struct g1 {
	struct pbuf pb;
	size_t young, full, conc, eden_used, old_used, cause;
};

static void g1_build(struct g1 *g)
{
	struct pbuf *pb = &g->pb;
	pb_init(pb);
	pb_long(pb, "sun.rt.safepoints", 7);
	g->cause = pb_string(pb, "sun.gc.cause", "No GC");
	pb_string(pb, "sun.gc.lastCause", "G1 Evacuation Pause");
	pb_string(pb, "sun.gc.collector.0.name", "G1 young collection pauses");
	g->young = pb_long(pb, "sun.gc.collector.0.invocations", 10);
	pb_long(pb, "sun.gc.collector.0.time", 123456);
	pb_string(pb, "sun.gc.collector.1.name", "G1 full collection pauses");
	g->full = pb_long(pb, "sun.gc.collector.1.invocations", 2);
	pb_string(pb, "sun.gc.collector.2.name", "G1 concurrent cycle pauses");
	g->conc = pb_long(pb, "sun.gc.collector.2.invocations", 0);
	pb_long(pb, "sun.gc.generation.0.capacity", 999999999);   /* not a space */
	g->eden_used = pb_long(pb, "sun.gc.generation.0.space.0.used", 4000000);
	pb_long(pb, "sun.gc.generation.0.space.0.capacity", 8000000);
	pb_long(pb, "sun.gc.generation.0.space.1.used", 0);
	pb_long(pb, "sun.gc.generation.0.space.1.capacity", 8);
	pb_long(pb, "sun.gc.generation.0.space.2.used", 16000);
	pb_long(pb, "sun.gc.generation.0.space.2.capacity", 1048576);
	pb_long(pb, "sun.gc.generation.0.space.2.maxCapacity", 77777777); /* not summed */
	g->old_used = pb_long(pb, "sun.gc.generation.1.space.0.used", 2000000);
	pb_long(pb, "sun.gc.generation.1.space.0.capacity", 6000000);
	pb_long(pb, "sun.gc.metaspace.used", 555555);                   /* not heap */
}

/* ---- tests ----------------------------------------------------------------- */

static void finds_counters_and_sums_spaces(void **state)
{
	(void)state;
	struct g1 g;
	g1_build(&g);
	struct perfdata pd;
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), 0);
	assert_int_equal(pd.ncollectors, 3);
	assert_int_equal(pd.nspaces, 4);
	assert_false(pd.full[0]);
	assert_true(pd.full[1]);
	assert_false(pd.full[2]);
	assert_string_equal(pd.collector_name[2], "G1 concurrent cycle pauses");
	struct perfdata_sample s;
	perfdata_sample(&pd, &s);
	assert_int_equal(s.used, 4000000 + 0 + 16000 + 2000000);
	assert_int_equal(s.capacity, 8000000 + 8 + 1048576 + 6000000);
	assert_int_equal(s.invocations[0], 10);
	assert_int_equal(s.invocations[1], 2);
	assert_string_equal(s.cause, ""); /* "No GC" */
}

static void tells_what_the_gc_was(void **state)
{
	(void)state;
	struct g1 g;
	g1_build(&g);
	struct perfdata pd;
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), 0);
	struct perfdata_sample before, after;
	char cause[PERFDATA_CAUSE_MAX];
	int full = -1;

	/* a young pause: the JVM sets the cause for the GC's duration */
	pb_set_string(&g.pb, g.cause, "G1 Evacuation Pause");
	perfdata_sample(&pd, &before);
	pb_set_long(&g.pb, g.young, 11);
	pb_set_long(&g.pb, g.eden_used, 0);
	perfdata_sample(&pd, &after);
	perfdata_gc(&pd, &before, &after, &full, cause, sizeof(cause));
	assert_int_equal(full, 0);
	assert_string_equal(cause, "G1 Evacuation Pause");
	assert_int_equal(before.used, 4000000 + 16000 + 2000000);
	assert_int_equal(after.used, 16000 + 2000000);

	/* a full GC */
	pb_set_string(&g.pb, g.cause, "System.gc()");
	perfdata_sample(&pd, &before);
	pb_set_long(&g.pb, g.full, 3);
	perfdata_sample(&pd, &after);
	perfdata_gc(&pd, &before, &after, &full, cause, sizeof(cause));
	assert_int_equal(full, 1);
	assert_string_equal(cause, "System.gc()");

	/* a pause without a cause: named after the collector that counted it */
	pb_set_string(&g.pb, g.cause, "No GC");
	perfdata_sample(&pd, &before);
	pb_set_long(&g.pb, g.conc, 1);
	perfdata_sample(&pd, &after);
	perfdata_gc(&pd, &before, &after, &full, cause, sizeof(cause));
	assert_int_equal(full, 0);
	assert_string_equal(cause, "G1 concurrent cycle pauses");

	/* nothing counted it at all */
	perfdata_sample(&pd, &before);
	perfdata_sample(&pd, &after);
	perfdata_gc(&pd, &before, &after, &full, cause, sizeof(cause));
	assert_int_equal(full, 0);
	assert_string_equal(cause, "GC pause");
}

/* The class-unloading counters (mode=sample's cheap death flush): their
 * sum, -1 when the JVM keeps neither. */
static void sums_unloaded_classes(void **state)
{
	(void)state;
	struct g1 g;
	struct perfdata pd;
	g1_build(&g);
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), 0);
	assert_int_equal(perfdata_unloaded(&pd), -1);
	g1_build(&g);
	size_t un = pb_long(&g.pb, "java.cls.unloadedClasses", 3);
	pb_long(&g.pb, "java.cls.loadedClasses", 400); /* not unloading */
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), 0);
	assert_int_equal(perfdata_unloaded(&pd), 3);
	size_t shared = pb_long(&g.pb, "java.cls.sharedUnloadedClasses", 2);
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), 0);
	assert_int_equal(perfdata_unloaded(&pd), 5);
	pb_set_long(&g.pb, un, 10); /* read where the JVM writes it */
	pb_set_long(&g.pb, shared, 0);
	assert_int_equal(perfdata_unloaded(&pd), 10);
}

static void refuses_damaged_buffers(void **state)
{
	(void)state;
	struct g1 g;
	struct perfdata pd;

	g1_build(&g);
	g.pb.b[0] = 0;
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL); /* magic */
	g1_build(&g);
	g.pb.b[4] = 0;
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL); /* byte order */
	g1_build(&g);
	g.pb.b[5] = 1;
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL); /* version */
	g1_build(&g);
	assert_int_equal(perfdata_parse(g.pb.b, 31, &pd), -EINVAL);       /* no prologue */
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len - 8, &pd), -EINVAL); /* cut entry */
	g1_build(&g);
	put_i32(g.pb.b + 32, 1 << 20);                                     /* entry too long */
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL);
	g1_build(&g);
	put_i32(g.pb.b + 24, (int32_t)g.pb.len + 8);                       /* first entry outside */
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL);
	g1_build(&g);
	size_t elen = 0;
	memcpy(&elen, g.pb.b + 32, 4);
	memset(g.pb.b + 32 + 20, 'x', elen - 20);                          /* name not ended */
	assert_int_equal(perfdata_parse(g.pb.b, g.pb.len, &pd), -EINVAL);
}

static void needs_collectors_and_spaces(void **state)
{
	(void)state;
	struct pbuf pb;
	struct perfdata pd;
	pb_init(&pb);
	assert_int_equal(perfdata_parse(pb.b, pb.len, &pd), -ENOENT); /* empty */
	pb_long(&pb, "sun.gc.generation.1.space.0.used", 1);
	assert_int_equal(perfdata_parse(pb.b, pb.len, &pd), -ENOENT); /* no collector */
	pb_init(&pb);
	pb_long(&pb, "sun.gc.collector.0.invocations", 1);
	assert_int_equal(perfdata_parse(pb.b, pb.len, &pd), -ENOENT); /* no space */
	pb_long(&pb, "sun.gc.generation.1.space.0.used", 1);
	assert_int_equal(perfdata_parse(pb.b, pb.len, &pd), 0);
	/* a JVM without a cause counter: the collector's name stands in */
	struct perfdata_sample a, b;
	perfdata_sample(&pd, &a);
	assert_string_equal(a.cause, "");
	b = a;
	b.invocations[0]++;
	char cause[PERFDATA_CAUSE_MAX];
	int full = -1;
	perfdata_gc(&pd, &a, &b, &full, cause, sizeof(cause));
	assert_int_equal(full, 0);
	assert_string_equal(cause, "GC pause"); /* no name counter either */
}

/* Whether heap use can only grow between GCs, from the collectors' names
 * as JDK 17 gives them (jcmd PID PerfCounter.print under each -XX:+Use*GC). */
static void tells_collectors_that_free_only_in_pauses(void **state)
{
	(void)state;
	static const struct {
		const char *names[3]; /* collectors 0..2; NULL: no such collector */
		int pauses_only;
	} cases[] = {
		{ { "G1 young collection pauses", "G1 full collection pauses", "G1 concurrent cycle pauses" }, 1 },
		{ { "Parallel young collection pauses", "Parallel full collection pauses", NULL }, 1 },
		{ { "Serial young collection pauses", "Serial full collection pauses", NULL }, 1 },
		{ { NULL, NULL, "Z concurrent cycle pauses" }, 0 },
		{ { "Shenandoah partial", "Shenandoah full", NULL }, 0 },
		{ { "Serial young collection pauses", "", NULL }, 0 },         /* a nameless one */
		{ { "Z young collection pauses", NULL, NULL }, 0 },
		{ { " young collection pauses", NULL, NULL }, 0 },             /* no collector named */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct pbuf pb;
		pb_init(&pb);
		char key[64];
		for (int i = 0; i < 3; i++) {
			if (!cases[k].names[i])
				continue;
			snprintf(key, sizeof key, "sun.gc.collector.%d.name", i);
			if (cases[k].names[i][0])
				pb_string(&pb, key, cases[k].names[i]);
			snprintf(key, sizeof key, "sun.gc.collector.%d.invocations", i);
			pb_long(&pb, key, 1);
		}
		pb_long(&pb, "sun.gc.generation.1.space.0.used", 1);
		struct perfdata pd;
		assert_int_equal(perfdata_parse(pb.b, pb.len, &pd), 0);
		if (pd.frees_in_pauses_only != cases[k].pauses_only)
			fail_msg("case %zu (%s): %d", k, cases[k].names[0] ? cases[k].names[0] : cases[k].names[2],
				 pd.frees_in_pauses_only);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_counters_and_sums_spaces),
		cmocka_unit_test(tells_what_the_gc_was),
		cmocka_unit_test(sums_unloaded_classes),
		cmocka_unit_test(refuses_damaged_buffers),
		cmocka_unit_test(needs_collectors_and_spaces),
		cmocka_unit_test(tells_collectors_that_free_only_in_pauses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

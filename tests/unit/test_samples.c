/* test_samples.c - format 1.3's ALLOC_SAMPLE and OLD_SAMPLE events
 * (a JFR recording's allocation and old-object samples) written, read back
 * through the footer and by scanning, and what analyses/samples.c makes of
 * them: the estimates per allocation site and the leak candidates per
 * (type, site).  Every expected value is computed here from the weights,
 * sizes and times written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyses/samples.h"
#include "model/htr_writer.h"
#include "model/trace.h"

enum { T_A, T_BYTES, T_CLASS, T_MAP };      /* type ids */
enum { M_NEW, M_CALLER1, M_CALLER2, M_FILL }; /* method ids */
enum { S_A1, S_A2, S_BYTES };               /* sites: A at one frame from two callers */

static void gc(struct htr_writer *w, uint32_t n, uint64_t t)
{
	struct htr_gc_event g = { .gc = n, .time_ns = t, .used = 100, .capacity = 1 << 20, .cause = "test" };
	assert_int_equal(htr_write_gc_start(w, &g), 0);
	g.time_ns = t + 10;
	assert_int_equal(htr_write_gc_end(w, &g), 0);
}

static void sample(struct htr_writer *w, uint64_t t, uint32_t kind, uint32_t type, uint32_t site, uint64_t weight,
		   uint64_t size)
{
	struct htr_alloc_sample s = { .time_ns = t, .kind = kind, .type = type, .site = site, .thread = 1,
				      .weight = weight, .size = size };
	assert_int_equal(htr_write_alloc_sample(w, &s), 0);
}

static void symbols(struct htr_writer *w)
{
	const char *names[] = { "p.A", "byte[]", "java.lang.Class", "java.util.HashMap" };
	const uint32_t kinds[] = { HTR_TYPE_INSTANCE, HTR_TYPE_PRIM_ARRAY, HTR_TYPE_INSTANCE, HTR_TYPE_INSTANCE };
	for (uint32_t i = 0; i < 4; i++) {
		struct htr_type_def d = { .id = i, .name = names[i], .kind = kinds[i], .super_id = HTR_NO_TYPE };
		assert_int_equal(htr_write_type(w, &d), 0);
	}
	assert_int_equal(htr_write_method(w, M_NEW, "p.A", "make", "()Lp/A;", NULL), 0);
	assert_int_equal(htr_write_method(w, M_CALLER1, "p.B", "one", "()V", NULL), 0);
	assert_int_equal(htr_write_method(w, M_CALLER2, "p.B", "two", "()V", NULL), 0);
	assert_int_equal(htr_write_method(w, M_FILL, "p.C", "fill", "()V", NULL), 0);
	struct htr_site_frame f1[] = { { M_NEW, 10 }, { M_CALLER1, 5 } }, f2[] = { { M_NEW, 10 }, { M_CALLER2, 7 } },
			      f3[] = { { M_FILL, 3 } };
	assert_int_equal(htr_write_site(w, S_A1, 2, f1), 0);
	assert_int_equal(htr_write_site(w, S_A2, 2, f2), 0);
	assert_int_equal(htr_write_site(w, S_BYTES, 1, f3), 0);
	assert_int_equal(htr_write_thread(w, 1, "main"), 0);
}

/* An old sample of type at site, allocated at alloc, held by a static
 * field HashMap p.Holder.MAP (a Class mirror) through the map's table. */
static void old(struct htr_writer *w, uint64_t t, uint64_t alloc, uint32_t type, uint32_t site, int with_path)
{
	struct htr_old_ref path[] = {
		{ .type = type, .how = "", .desc = "" },
		{ .type = T_MAP, .how = "value", .desc = "Size: 3", .skip = 2 },
		{ .type = T_CLASS, .how = "MAP", .desc = "Class Name: p.Holder" },
	};
	struct htr_old_sample o = { .time_ns = t, .alloc_ns = alloc, .age_ns = t - alloc, .type = type, .site = site,
				    .thread = 1, .array_length = type == T_BYTES ? 16 : -1, .heap_used = 4096,
				    .root_kind = with_path ? "Global Object Handle" : "",
				    .root_desc = "", .root_system = with_path ? "VM Global" : "",
				    .npath = with_path ? 3 : 1, .path = path };
	assert_int_equal(htr_write_old_sample(w, &o), 0);
}

/* path (a mkstemp template) made an empty file, for a writer to replace. */
static void make_temp(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

/* GCs at 1000 and 2000 ns.  Before GC 1: JFR samples of A at both sites
 * (weights 100 and 50, no size) and of byte[] (weight 4000), a TLAB event
 * of A giving its size (24: weight 480) and of byte[] (size 40).  After:
 * one more JFR sample of A (weight 30).  Old samples: three of A (two from
 * S_A1, one from S_A2: one kind of site), one of byte[] without a path. */
static void write_trace(const char *path, int footer)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .no_footer = !footer };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	symbols(w);
	sample(w, 100, HTR_SAMPLE_JFR, T_A, S_A1, 100, 0);
	sample(w, 200, HTR_SAMPLE_JFR, T_A, S_A2, 50, 0);
	sample(w, 300, HTR_SAMPLE_JFR, T_BYTES, S_BYTES, 4000, 0);
	sample(w, 400, HTR_SAMPLE_JFR_NEW_TLAB, T_A, S_A1, 480, 24);
	sample(w, 500, HTR_SAMPLE_JFR_OUTSIDE_TLAB, T_BYTES, S_BYTES, 40, 40);
	gc(w, 1, 1000);
	sample(w, 1500, HTR_SAMPLE_JFR, T_A, S_A1, 30, 0);
	/* no stack trace, no class: written as id + 1 = 2^32 */
	sample(w, 1550, HTR_SAMPLE_JFR, HTR_NO_TYPE, HTR_NO_SITE, 7, 0);
	old(w, 1600, 150, T_A, S_A1, 1);
	old(w, 1700, 120, T_A, S_A2, 1);
	old(w, 1800, 1400, T_A, S_A1, 1);
	old(w, 1900, 300, T_BYTES, S_BYTES, 0);
	gc(w, 2, 2000);
	if (footer) {
		assert_int_equal(htr_writer_close(w), 0);
	} else {
		/* events after the last GC are lost with their frame: none here */
		htr_writer_abandon(w);
	}
}

static struct trace *open_trace(const char *path)
{
	struct trace *t;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	assert_int_equal(trace_open(&t, path, NULL, &err), 0);
	return t;
}

static void check_counts(int footer)
{
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	write_trace(path, footer);
	struct trace *t = open_trace(path);
	assert_int_equal(t->had_footer, footer);
	assert_int_equal(t->alloc_samples, 7);
	assert_int_equal(t->old_samples, 4);
	assert_int_equal(t->ngcs, 2);
	trace_close(t);
	unlink(path);
}

static void test_counts_from_footer(void **st)
{
	(void)st;
	check_counts(1);
}

static void test_counts_from_scan(void **st)
{
	(void)st;
	check_counts(0);
}

static const struct sample_row *row_of(const struct sample_set *s, uint32_t type)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->rows[i].type == type)
			return &s->rows[i];
	return NULL;
}

static void test_estimates(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	write_trace(path, 1);
	struct trace *t = open_trace(path);
	struct sample_set s;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	/* the whole trace: the JFR samples (the TLAB events are not added) */
	assert_int_equal(samples_collect(t, 0, UINT64_MAX, &s, &err), 0);
	assert_int_equal(s.kind, HTR_SAMPLE_JFR);
	assert_int_equal(s.n, 3); /* A's two sites are one frame; the unknown one */
	assert_int_equal(s.by_kind[HTR_SAMPLE_JFR], 5);
	assert_int_equal(s.by_kind[HTR_SAMPLE_JFR_NEW_TLAB], 1);
	assert_int_equal(s.by_kind[HTR_SAMPLE_JFR_OUTSIDE_TLAB], 1);
	assert_int_equal(s.samples, 5);
	assert_int_equal(s.weight, 100 + 50 + 4000 + 30 + 7);
	const struct sample_row *u = row_of(&s, HTR_NO_TYPE);
	assert_non_null(u);
	assert_int_equal(u->site, HTR_NO_SITE);
	assert_int_equal(u->weight, 7);
	assert_int_equal(s.rows[0].type, T_BYTES); /* most bytes first */
	const struct sample_row *a = row_of(&s, T_A), *b = row_of(&s, T_BYTES);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->samples, 3);
	assert_int_equal(a->weight, 180);
	/* A is an instance: its size (24) from the TLAB event counts it */
	assert_int_equal(a->sized, 3);
	assert_true(fabs(a->est_count - 180.0 / 24) < 1e-9);
	/* byte[] is an array: sizes differ, no count estimate */
	assert_int_equal(b->samples, 1);
	assert_int_equal(b->sized, 0);
	samples_free(&s);

	/* a time range: after GC 1 only */
	assert_int_equal(samples_collect(t, 1010, 1540, &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.rows[0].weight, 30);
	samples_free(&s);
	trace_close(t);
	unlink(path);
}

/* Without ObjectAllocationSample events, the TLAB events are the samples:
 * a new-TLAB event counts TLAB / object size allocations, an outside-TLAB
 * event one. */
static void test_tlab_estimates(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	symbols(w);
	sample(w, 100, HTR_SAMPLE_JFR_NEW_TLAB, T_A, S_A1, 24000, 24);
	sample(w, 200, HTR_SAMPLE_JFR_NEW_TLAB, T_A, S_A2, 48000, 24);
	sample(w, 300, HTR_SAMPLE_JFR_OUTSIDE_TLAB, T_BYTES, S_BYTES, 70000, 70000);
	gc(w, 1, 1000);
	assert_int_equal(htr_writer_close(w), 0);
	struct trace *t = open_trace(path);
	struct sample_set s;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	assert_int_equal(samples_collect(t, 0, UINT64_MAX, &s, &err), 0);
	assert_int_equal(s.kind, HTR_SAMPLE_JFR_NEW_TLAB);
	assert_int_equal(s.n, 2);
	const struct sample_row *a = row_of(&s, T_A), *b = row_of(&s, T_BYTES);
	assert_int_equal(a->weight, 72000);
	assert_true(fabs(a->est_count - 3000.0) < 1e-9);
	assert_true(fabs(b->est_count - 1.0) < 1e-9);
	assert_int_equal(b->sized, 1);
	samples_free(&s);
	trace_close(t);
	unlink(path);
}

static void test_leak_candidates(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	write_trace(path, 1);
	struct trace *t = open_trace(path);
	struct old_set s;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	assert_int_equal(old_samples_collect(t, &s, &err), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.ngroups, 2);
	const struct old_group *g = &s.groups[0]; /* A: 3 samples, first */
	assert_int_equal(g->type, T_A);
	assert_int_equal(g->samples, 3);
	assert_int_equal(g->with_path, 3);
	assert_int_equal(g->first_alloc_ns, 120);
	assert_int_equal(g->last_alloc_ns, 1400);
	assert_int_equal(g->max_age_ns, 1700 - 120);
	const struct old_row *ex = &s.rows[g->example];
	assert_int_equal(ex->alloc_ns, 120); /* the oldest */
	assert_int_equal(ex->npath, 3);
	assert_string_equal(s.strs + ex->root_kind, "Global Object Handle");
	const struct old_path_entry *p = &s.path[ex->path_off];
	assert_string_equal(s.strs + p[1].how, "value");
	assert_int_equal(p[1].skip, 2);
	char scratch[64];
	assert_string_equal(old_entry_type(t, &s, &p[1], scratch, sizeof scratch), "java.util.HashMap");
	/* a static field's holder: the class, not java.lang.Class */
	assert_string_equal(old_entry_type(t, &s, &p[2], scratch, sizeof scratch), "p.Holder");
	g = &s.groups[1];
	assert_int_equal(g->type, T_BYTES);
	assert_int_equal(g->samples, 1);
	assert_int_equal(g->with_path, 0);
	assert_int_equal(s.rows[g->example].array_length, 16);
	old_samples_free(&s);
	trace_close(t);
	unlink(path);
}

/* The writer of an older minor has no sample events, and a reader refuses
 * them in a file that says it is older. */
static void test_older_minor_refused(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	struct htr_writer_opts o = { .minor = 2 };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	struct htr_alloc_sample s = { .time_ns = 1, .kind = HTR_SAMPLE_JFR, .type = HTR_NO_TYPE, .site = HTR_NO_SITE,
				      .weight = 1 };
	assert_int_equal(htr_write_alloc_sample(w, &s), -EINVAL);
	htr_writer_abandon(w);
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	s.kind = 0;
	assert_int_equal(htr_write_alloc_sample(w, &s), -EINVAL); /* no such sampler */
	htr_writer_abandon(w);
	unlink(path);
}

/* An array length below -1 has no encoding the reader accepts (length + 1
 * is an unsigned varint): the writer refuses it rather than write an event
 * that makes the file unreadable past it (fuzz_jfr found an import that
 * did, tests/fuzz/crashes/old-sample-negative-array.jfr). */
static void test_negative_array_length_refused(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	struct htr_old_sample o = { .time_ns = 1, .type = HTR_NO_TYPE, .site = HTR_NO_SITE, .array_length = -5,
				    .heap_used = UINT64_MAX };
	assert_int_equal(htr_write_old_sample(w, &o), -EINVAL);
	htr_writer_abandon(w);
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	struct htr_alloc a = { .id = 1, .type = 0, .site = HTR_NO_SITE, .thread = 1, .size = 16, .array_length = -2,
			       .time_ns = 10 };
	assert_int_equal(htr_write_alloc(w, &a), -EINVAL);
	htr_writer_abandon(w);
	unlink(path);
}

/* The agent's mode=sample: ALLOC events are samples of a Poisson process
 * over bytes with mean interval I; one of s bytes stands for
 * 1/(1-exp(-s/I)) objects, a pre-existing object for itself. */
static void write_sampled(const char *path, const char *interval)
{
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	assert_int_equal(htr_write_info(w, "agent.mode", "sample"), 0);
	if (interval)
		assert_int_equal(htr_write_info(w, "sample.interval", interval), 0);
	symbols(w);
	struct htr_alloc a = { .id = 1, .type = T_A, .site = S_A1, .thread = 1, .size = 1000,
			       .array_length = -1, .time_ns = 10 };
	assert_int_equal(htr_write_alloc(w, &a), 0);
	a.id = 2, a.site = S_A2, a.time_ns = 20;
	assert_int_equal(htr_write_alloc(w, &a), 0);
	a = (struct htr_alloc){ .id = 3, .type = T_BYTES, .site = S_BYTES, .thread = 1, .size = 64000,
				.array_length = 63984, .time_ns = 30 };
	assert_int_equal(htr_write_alloc(w, &a), 0);
	a = (struct htr_alloc){ .id = 4, .type = T_A, .site = HTR_NO_SITE, .thread = 1, .size = 1000,
				.array_length = -1, .time_ns = 5, .flags = HTR_ALLOC_PREEXISTING };
	assert_int_equal(htr_write_alloc(w, &a), 0);
	gc(w, 1, 1000);
	assert_int_equal(htr_writer_close(w), 0);
}

static void test_agent_samples(void **st)
{
	(void)st;
	char path[] = "/tmp/heapfs-test-samples-XXXXXX";
	make_temp(path);
	write_sampled(path, "1000");
	struct trace *t = open_trace(path);
	assert_int_equal(t->sample_interval, 1000);
	double w1 = 1.0 / (1.0 - exp(-1.0)); /* s = I */
	assert_true(fabs(trace_sample_weight(t, 0, 1000) - w1) < 1e-12);
	assert_true(fabs(trace_sample_weight(t, 0, 64000) - 1.0 / (1.0 - exp(-64.0))) < 1e-12);
	assert_true(trace_sample_weight(t, HTR_ALLOC_PREEXISTING, 1000) == 1.0);
	/* small objects: about I / s each */
	assert_true(fabs(trace_sample_weight(t, 0, 10) - 100.5) < 0.01);
	struct sample_set s;
	struct htr_err err;
	memset(&err, 0, sizeof err);
	assert_int_equal(samples_collect(t, 0, UINT64_MAX, &s, &err), 0);
	assert_int_equal(s.kind, SAMPLES_AGENT);
	assert_int_equal(s.samples, 3); /* the pre-existing object is no sample */
	const struct sample_row *a = row_of(&s, T_A), *b = row_of(&s, T_BYTES);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->samples, 2);
	assert_true(fabs(a->est_count - 2 * w1) < 1e-9);
	assert_int_equal(a->weight, (uint64_t)llround(1000 * w1) * 2);
	assert_true(fabs(b->est_count - 1.0) < 1e-9);
	assert_int_equal(b->weight, 64000);
	samples_free(&s);
	trace_close(t);
	unlink(path);
}

/* A sampled trace without its interval cannot be weighted: refused. */
static void test_agent_samples_need_interval(void **st)
{
	(void)st;
	const char *bad[] = { NULL, "0", "12x", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[] = "/tmp/heapfs-test-samples-XXXXXX";
		make_temp(path);
		write_sampled(path, bad[i]);
		struct trace *t = NULL;
		struct htr_err err;
		memset(&err, 0, sizeof err);
		assert_int_equal(trace_open(&t, path, NULL, &err), -EBADMSG);
		assert_non_null(strstr(err.msg, "sample.interval"));
		unlink(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_from_footer),
		cmocka_unit_test(test_counts_from_scan),
		cmocka_unit_test(test_estimates),
		cmocka_unit_test(test_tlab_estimates),
		cmocka_unit_test(test_leak_candidates),
		cmocka_unit_test(test_older_minor_refused),
		cmocka_unit_test(test_negative_array_length_refused),
		cmocka_unit_test(test_agent_samples),
		cmocka_unit_test(test_agent_samples_need_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

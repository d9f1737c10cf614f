/* test_classify_par.c - classify_objects on several threads gives what it
 * gives on one: the same rows, the same keys interned in the same order
 * and the same failure record, on synthetic heap states (multicache,
 * company) with classifiers of every kind the loop treats differently:
 * per info (type, package and a package level, size), per object with
 * keys met while classifying (age, a user-defined expression over object
 * ids that interns thousands of values, collection-health over the
 * references), parts (instance-health), one whose evaluation fails for
 * some objects, a chain with a per-object step, and a diff.  Expected
 * values are the serial run's, on a registry of its own (keys are interned
 * per registry), and from construction (counts add up to the state's
 * objects).
 * Runs under TSan in make tsan. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/bitset.h"
#include "analyses/classify.h"
#include "analyses/parallel.h"
#include "model/heap_state.h"
#include "model/synth.h"
#include "fixture_state.h"
#include "model/trace.h"

static char g_dir[64], g_mc[128], g_co[128];

/* "id % 3001" interns up to 3001 values in the order objects meet them;
 * "100 / (size % 24)" divides by zero for sizes that are multiples of 24
 * (the failures); the parts one puts an object's bytes under 2 keys. */
static const char defs[] =
	"idmod = id % 3001\n"
	"idmix = if id % 7 == 0 then \"seven\" elif age > 0 then \"old\" else type\n"
	"failing = 100 / (size % 24)\n"
	"failing-parts = parts(\"a\", size / (size % 24), \"b\", 8)\n"
	"old = age > 0\n"
	"ih-general = parts(\"header\", header_bytes + 0, \"pointer\", pointer_bytes + 0, \"null\", null_bytes + 0, \"primitive\", primitive_bytes + 0)\n"
	"nul-first = parts(\"null\", null_bytes, \"header\", header_bytes, \"pointer\", pointer_bytes)\n"
	"nul-first-general = parts(\"null\", null_bytes * 1, \"header\", header_bytes * 1, \"pointer\", pointer_bytes * 1)\n"
	"sized = parts(\"all\", size, \"prim\", primitive_bytes)\n"
	"sized-general = parts(\"all\", size + 0, \"prim\", primitive_bytes + 0)\n";

struct fixture {
	struct trace *t;
	struct heap_state *s, *prev;
};

static int setup(void **state)
{
	(void)state;
	snprintf(g_dir, sizeof g_dir, "/tmp/test_classify_par.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_mc, sizeof g_mc, "%s/mc.htr", g_dir);
	snprintf(g_co, sizeof g_co, "%s/co.htr", g_dir);
	fx_synth_trace("multicache", 5000, 3, g_mc);
	fx_synth_trace("company", 8000, 3, g_co);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(g_mc);
	unlink(g_co);
	rmdir(g_dir);
	return 0;
}

static void fixture_open(const char *path, struct fixture *f)
{
	struct htr_err err;
	struct trace_open_opts oo = { .progress = NULL };
	memset(f, 0, sizeof *f);
	assert_int_equal(trace_open(&f->t, path, &oo, &err), 0);
	assert_true(f->t->ngcs >= 2);
	assert_int_equal(heap_state_build(f->t, f->t->ngcs - 1, NULL, &f->s, &err), 0);
	assert_int_equal(heap_state_build(f->t, f->t->ngcs - 2, NULL, &f->prev, &err), 0);
	/* enough objects that 4 threads get several chunks each */
	assert_true(f->s->n >= 8 * 4096);
}

static void fixture_close(struct fixture *f)
{
	heap_state_free(f->s);
	heap_state_free(f->prev);
	trace_close(f->t);
}

static void registry_open(struct cls_registry *r, const struct trace *t)
{
	char msg[300];
	assert_int_equal(cls_registry_init(r, t, NULL), 0);
	/* one definition per line */
	const char *p = defs;
	while (*p) {
		const char *eq = strstr(p, " = "), *nl = strchr(p, '\n');
		char name[64];
		assert_non_null(eq);
		assert_non_null(nl);
		snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
		assert_int_equal(cls_define(r, name, eq + 3, (size_t)(nl - eq - 3), msg, sizeof msg), 0);
		p = nl + 1;
	}
}

static int fail_line(void *ctx, const struct cls_failure *f)
{
	struct buf *b = ctx;
	char line[400];
	int n = snprintf(line, sizeof line, "%s gc %u objects %llu at %u:%u %s over %d\n",
			 f->classifier, f->gci, (unsigned long long)f->objects, f->line, f->col,
			 f->why ? f->why : "-", f->sum_overflow);
	return buf_put(b, line, (size_t)n);
}

/* Everything a classification leaves behind that must not depend on the
 * threads: every classifier's keys, in order, and the failure record. */
static void registry_dump(struct cls_registry *r, struct buf *out)
{
	for (uint32_t c = 0; c < cls_count(r); c++) {
		const struct cls_def *d = cls_get(r, c);
		if (!d)
			continue;
		uint32_t n = ks_count(&d->ks);
		char line[128];
		int len = snprintf(line, sizeof line, "%s %u keys:", d->name, n);
		assert_int_equal(buf_put(out, line, (size_t)len), 0);
		for (uint32_t k = 0; k < n; k++) {
			const char *raw = ks_raw(&d->ks, k);
			assert_int_equal(buf_put(out, " ", 1), 0);
			assert_int_equal(buf_put(out, raw, strlen(raw)), 0);
		}
		assert_int_equal(buf_put(out, "\n", 1), 0);
	}
	struct buf log;
	buf_init(&log);
	assert_int_equal(cls_errors(r, &log, fail_line, out), 0);
	assert_int_equal(buf_put(out, log.data, log.len), 0);
	buf_free(&log);
}

/* One classification: the group of ch, in s (and prev for a diff chain). */
struct job {
	const char *cls;
	int diff;
	int step;           /* the chain: 0 none, 1 only-old (per object), 2 by-package/java */
};

static int classify(struct cls_registry *r, struct fixture *f, const struct job *j,
		    uint32_t threads, struct buf *rows)
{
	struct chain ch;
	struct objsrc src[2] = { { f->s, NULL, 0 }, { f->prev, NULL, 1 } };
	uint64_t *in[2] = { NULL, NULL };
	uint32_t cls = cls_find(r, j->cls), nsrc = 1;
	assert_int_not_equal(cls, CLS_NONE);
	chain_init(&ch);
	if (j->step == 1)
		assert_int_equal(chain_push(&ch, ST_FILTER, cls_find(r, "old"), 0), 0);
	if (j->step == 2) {
		assert_int_equal(cls_prepare(r, CB_PACKAGE), 0);
		uint32_t java = ks_find_raw(&r->defs[CB_PACKAGE]->ks, "java", 4);
		assert_int_not_equal(java, KS_NO_KEY);
		assert_int_equal(chain_push(&ch, ST_CLS, CB_PACKAGE, java), 0);
	}
	if (j->diff) {
		/* born/perm/died from the ids: objects of both states are perm */
		ch.diff_gci = f->prev->gc_index;
		in[0] = calloc((f->s->n + 63) / 64 + 1, 8);
		in[1] = calloc((f->prev->n + 63) / 64 + 1, 8);
		assert_non_null(in[0]);
		assert_non_null(in[1]);
		for (uint32_t a = 0, b = 0; a < f->s->n && b < f->prev->n;) {
			if (f->s->id[a] == f->prev->id[b]) {
				in[0][a / 64] |= 1ull << (a % 64);
				in[1][b / 64] |= 1ull << (b % 64);
				a++, b++;
			} else if (f->s->id[a] < f->prev->id[b]) {
				a++;
			} else {
				b++;
			}
		}
		src[0].in_other = in[0];
		src[1].in_other = in[1];
		nsrc = 2;
	}
	int rc = classify_objects(r, src, nsrc, &ch, cls, threads, rows);
	free(in[0]);
	free(in[1]);
	return rc;
}

static const struct job jobs[] = {
	{ "type", 0, 0 },          { "package", 0, 0 },      { "size", 0, 0 },
	{ "array-length", 0, 0 },  { "age", 0, 0 },          { "birth", 0, 0 },
	{ "idmod", 0, 0 },         { "idmix", 0, 0 },        { "collection-health", 0, 0 },
	{ "instance-health", 0, 0 }, { "failing", 0, 0 },    { "failing-parts", 0, 0 },
	{ "reachable", 0, 0 },     { "idmod", 1, 0 },        { "type", 1, 0 },
	{ "idmix", 0, 1 },         { "failing", 1, 1 },      { "age", 0, 1 },
	{ "package", 0, 2 },       { "idmod", 0, 2 },        { "failing-parts", 1, 0 },
	{ "nul-first", 1, 0 },     { "sized", 0, 1 },
};
#define NJOBS (sizeof jobs / sizeof jobs[0])

/* Classifies every job on a fresh registry with `threads` threads; rows
 * of all jobs one after another, then the registry's keys and failures. */
static void run_all(struct fixture *f, uint32_t threads, struct buf *out)
{
	struct cls_registry r;
	registry_open(&r, f->t);
	for (size_t k = 0; k < NJOBS; k++) {
		struct buf rows;
		buf_init(&rows);
		assert_int_equal(classify(&r, f, &jobs[k], threads, &rows), 0);
		/* construction: a one-to-one classifier of the whole state puts
		 * every object under one key */
		const struct cls_row *row = (const struct cls_row *)rows.data;
		uint64_t sum = 0;
		for (size_t i = 0; i < rows.len / sizeof *row; i++)
			sum += row[i].c[COL_LIVE] + row[i].c[COL_PERM];
		const struct cls_def *d = cls_get(&r, cls_find(&r, jobs[k].cls));
		if (d->card == CARD_ONE && !jobs[k].step)
			assert_int_equal(sum, f->s->n);
		char head[64];
		int n = snprintf(head, sizeof head, "job %zu rows %zu\n", k, rows.len / sizeof *row);
		assert_int_equal(buf_put(out, head, (size_t)n), 0);
		assert_int_equal(buf_put(out, rows.data, rows.len), 0);
		buf_free(&rows);
	}
	registry_dump(&r, out);
	cls_registry_destroy(&r);
}

static void expect_same(const struct buf *a, const struct buf *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->data, b->data, a->len);
}

static void check_trace(const char *path)
{
	struct fixture f;
	struct buf one, many;
	fixture_open(path, &f);
	buf_init(&one);
	run_all(&f, 1, &one);
	for (uint32_t threads = 2; threads <= 4; threads += 2) {
		buf_init(&many);
		run_all(&f, threads, &many);
		expect_same(&one, &many);
		buf_free(&many);
	}
	buf_free(&one);
	fixture_close(&f);
}

static void test_multicache(void **state)
{
	(void)state;
	check_trace(g_mc);
}

static void test_company(void **state)
{
	(void)state;
	check_trace(g_co);
}

/* The failing classifiers did fail, so the test covers failures. */
static void test_failures_seen(void **state)
{
	(void)state;
	struct fixture f;
	struct cls_registry r;
	struct buf rows, log;
	fixture_open(g_mc, &f);
	registry_open(&r, f.t);
	buf_init(&rows);
	buf_init(&log);
	assert_int_equal(classify(&r, &f, &jobs[10], 4, &rows), 0);
	uint32_t cls = cls_find(&r, "failing");
	uint32_t err = ks_find_raw(&((struct cls_def *)cls_get(&r, cls))->ks, "<error>", 7);
	assert_int_not_equal(err, KS_NO_KEY);
	assert_int_equal(cls_errors(&r, &log, fail_line, &log), 0);
	assert_non_null(memmem(log.data, log.len, "failing gc", 10));
	buf_free(&rows);
	buf_free(&log);
	cls_registry_destroy(&r);
	fixture_close(&f);
}

/* A parts() of literal names and byte properties runs without evaluating
 * the expression (loop_parts); the same parts with "+ 0" on each byte
 * count go through the evaluator, the oracle: same rows, same keys in the
 * same order, on the whole state, a chain and a diff, on 1 and 4
 * threads.  "nul-first" meets its first part after its second (most
 * objects have no null slot), so the order keys are interned in is
 * tested. */
static void expect_same_parts(struct cls_registry *r, const char *plan, const char *general,
			      const struct buf *a, const struct buf *b)
{
	const struct cls_def *dp = cls_get(r, cls_find(r, plan));
	const struct cls_def *dg = cls_get(r, cls_find(r, general));
	const struct cls_row *x = (const struct cls_row *)a->data;
	const struct cls_row *y = (const struct cls_row *)b->data;
	assert_int_equal(a->len, b->len);
	assert_true(a->len > 0);
	for (size_t i = 0; i < a->len / sizeof *x; i++) {
		assert_string_equal(ks_raw(&dp->ks, x[i].key), ks_raw(&dg->ks, y[i].key));
		assert_memory_equal(x[i].c, y[i].c, sizeof x[i].c);
		assert_memory_equal(x[i].b, y[i].b, sizeof x[i].b);
		assert_memory_equal(x[i].s, y[i].s, sizeof x[i].s);
	}
	assert_int_equal(ks_count(&dp->ks), ks_count(&dg->ks));
	for (uint32_t k = 0; k < ks_count(&dp->ks); k++)
		assert_string_equal(ks_raw(&dp->ks, k), ks_raw(&dg->ks, k));
}

static void test_parts_plan(void **state)
{
	(void)state;
	static const char *pairs[][2] = {
		{ "instance-health", "ih-general" },
		{ "nul-first", "nul-first-general" },
		{ "sized", "sized-general" },
	};
	static const struct job shapes[] = { { NULL, 0, 0 }, { NULL, 1, 0 }, { NULL, 0, 1 },
					     { NULL, 0, 2 } };
	struct fixture f;
	fixture_open(g_mc, &f);
	for (uint32_t threads = 1; threads <= 4; threads += 3) {
		for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
			/* a fresh registry for each shape: the keyspaces start empty */
			struct cls_registry r;
			registry_open(&r, f.t);
			for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
				struct job jp = shapes[sh], jg = shapes[sh];
				struct buf a, b;
				jp.cls = pairs[k][0];
				jg.cls = pairs[k][1];
				buf_init(&a);
				buf_init(&b);
				assert_int_equal(classify(&r, &f, &jp, threads, &a), 0);
				assert_int_equal(classify(&r, &f, &jg, threads, &b), 0);
				expect_same_parts(&r, pairs[k][0], pairs[k][1], &a, &b);
				buf_free(&a);
				buf_free(&b);
			}
			cls_registry_destroy(&r);
		}
	}
	fixture_close(&f);
}

/* group_members_bits_many: each group's members as group_members_bits
 * gives them one by one (the oracle), for type and size groups; refused
 * for a classifier evaluated per object. */
static void test_members_many(void **state)
{
	(void)state;
	struct fixture f;
	struct cls_registry r;
	fixture_open(g_mc, &f);
	registry_open(&r, f.t);
	static const char *const names[] = { "type", "size" };
	for (size_t c = 0; c < 2; c++) {
		uint32_t cls = cls_find(&r, names[c]), keys[5], n = 0;
		/* size buckets are interned as objects meet them: classify first */
		struct job j = { names[c], 0, 0 };
		struct buf rows;
		buf_init(&rows);
		assert_int_equal(classify(&r, &f, &j, 1, &rows), 0);
		buf_free(&rows);
		const struct cls_def *d = cls_get(&r, cls);
		for (uint32_t k = 0; k < ks_count(&d->ks) && n < 5; k += 2)
			keys[n++] = k;
		assert_true(n >= 2);
		uint64_t *bits[5];
		assert_int_equal(group_members_bits_many(&r, f.s, cls, keys, n, bits), 0);
		uint64_t members = 0;
		for (uint32_t k = 0; k < n; k++) {
			struct chain ch;
			uint64_t *one;
			chain_init(&ch);
			assert_int_equal(chain_push(&ch, ST_CLS, cls, keys[k]), 0);
			assert_int_equal(group_members_bits(&r, f.s, &ch, &one), 0);
			assert_memory_equal(bits[k], one, (f.s->n + 63) / 64 * 8);
			for (uint32_t o = 0; o < f.s->n; o++)
				members += one[o / 64] >> (o % 64) & 1;
			free(one);
			free(bits[k]);
		}
		assert_true(members > 0);
	}
	uint64_t *none[1];
	uint32_t key = 0;
	assert_int_equal(group_members_bits_many(&r, f.s, cls_find(&r, "idmod"), &key, 1, none),
			 -EINVAL);
	cls_registry_destroy(&r);
	fixture_close(&f);
}

/* One failure line's object count for `name` at gci, from cls_errors
 * (0 without one). */
static uint64_t failed_objects(struct cls_registry *r, const char *name, uint32_t gci)
{
	struct buf log;
	char want[96];
	buf_init(&log);
	assert_int_equal(cls_errors(r, &log, fail_line, &log), 0);
	snprintf(want, sizeof want, "%s gc %u objects ", name, gci);
	uint64_t n = 0;
	const char *at = memmem(log.data, log.len, want, strlen(want));
	if (at)
		n = strtoull(at + strlen(want), NULL, 10);
	buf_free(&log);
	return n;
}

/* A fresh registry whose "failing" and "type" have their keys: both
 * classified at the earlier GC (f->prev), so that failures logged at the
 * last GC are those of what the test does there.  *err: failing's
 * <error> key. */
static void registry_keyed(struct cls_registry *r, struct fixture *f, uint32_t *err)
{
	registry_open(r, f->t);
	struct objsrc src = { f->prev, NULL, 0 };
	static const char *const names[] = { "failing", "type" };
	for (size_t k = 0; k < 2; k++) {
		struct chain ch;
		struct buf rows;
		chain_init(&ch);
		buf_init(&rows);
		assert_int_equal(classify_objects(r, &src, 1, &ch, cls_find(r, names[k]), 1, &rows), 0);
		buf_free(&rows);
	}
	*err = ks_find_raw(&r->defs[cls_find(r, "failing")]->ks, "<error>", 7);
	assert_int_not_equal(*err, KS_NO_KEY);
	assert_int_equal(failed_objects(r, "failing", f->s->gc_index), 0);
}

/* A filter step over a group's members (group_members_bits keeps the
 * passing objects 64 at a time): "failing" divides by size % 24, so its
 * <error> group is exactly the objects whose size is a multiple of 24,
 * found here object by object from the state; after a type step, those
 * of that type (the type's members from group_members_bits_many, another
 * path).  The failures the filter logs are those among the objects it
 * was given: all of them, then the type's. */
static void test_members_filter(void **state)
{
	(void)state;
	struct fixture f;
	struct cls_registry r;
	fixture_open(g_mc, &f);
	const struct heap_state *s = f.s;
	size_t words = (s->n + 63) / 64;
	uint64_t *want = bitset_new(s->n);
	uint64_t nwant = 0;
	for (uint32_t o = 0; o < s->n; o++)
		if (hs_info(s, o)->size % 24 == 0) {
			bitset_set(want, o);
			nwant++;
		}
	assert_true(nwant > 0 && nwant < s->n);
	/* n not a multiple of 64: the last word's tail is checked too */
	assert_int_not_equal(s->n % 64, 0);

	uint32_t err;
	struct chain ch;
	uint64_t *got;
	registry_keyed(&r, &f, &err);
	uint32_t fcls = cls_find(&r, "failing"), tcls = cls_find(&r, "type");
	chain_init(&ch);
	assert_int_equal(chain_push(&ch, ST_CLS, fcls, err), 0);
	assert_int_equal(group_members_bits(&r, s, &ch, &got), 0);
	assert_memory_equal(got, want, words * 8);
	free(got);
	assert_int_equal(failed_objects(&r, "failing", s->gc_index), nwant);
	cls_registry_destroy(&r);

	/* type, then failing, for a type with objects of both kinds */
	int found = 0;
	for (uint32_t k = 0; !found; k++) {
		registry_keyed(&r, &f, &err);
		assert_true(k < ks_count(&cls_get(&r, tcls)->ks));
		uint64_t *tb[1];
		assert_int_equal(group_members_bits_many(&r, s, tcls, &k, 1, tb), 0);
		uint64_t both = 0, all = 0;
		for (size_t w = 0; w < words; w++) {
			all += (uint64_t)__builtin_popcountll(tb[0][w]);
			both += (uint64_t)__builtin_popcountll(tb[0][w] & want[w]);
		}
		if (both > 0 && both < all) {
			found = 1;
			chain_init(&ch);
			assert_int_equal(chain_push(&ch, ST_CLS, tcls, k), 0);
			assert_int_equal(chain_push(&ch, ST_CLS, fcls, err), 0);
			assert_int_equal(group_members_bits(&r, s, &ch, &got), 0);
			for (size_t w = 0; w < words; w++)
				assert_int_equal(got[w], tb[0][w] & want[w]);
			free(got);
			assert_int_equal(failed_objects(&r, "failing", s->gc_index), both);
		}
		free(tb[0]);
		cls_registry_destroy(&r);
	}
	bitset_free(want);
	fixture_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multicache),
		cmocka_unit_test(test_company),
		cmocka_unit_test(test_failures_seen),
		cmocka_unit_test(test_parts_plan),
		cmocka_unit_test(test_members_many),
		cmocka_unit_test(test_members_filter),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

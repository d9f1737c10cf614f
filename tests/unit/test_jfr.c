/* test_jfr.c - the JFR reader (model/jfr.h) on chunks built byte by byte
 * here, one rule of the format at a time: integers as varints (up to the
 * 9-byte form whose last byte gives 8 bits) and as fixed big-endian, every
 * string encoding, constant pools in two checkpoints chained by their
 * delta (one a flush checkpoint, a type with a pool in each), ticks to ns,
 * an event type the reader keeps nothing of, an id the metadata lacks, a
 * second chunk, a cut second chunk, a cut first chunk, a bad magic.  The
 * expected values are those written (an event of an unknown type id is
 * neither kept nor counted).  Real recordings are compared with
 * the JDK's own reader in tests/integration/test_jfr_reader.sh.
 *
 * HEAPFS_JFR_SEEDS=DIR also writes the recordings built here to DIR (the
 * fuzz target's hand-made seeds, tests/fuzz/seeds/fuzz_jfr/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/jfr.h"

/* --- a byte builder --------------------------------------------------------- */

struct bb {
	uint8_t *p;
	size_t n, cap;
	int fixed;                 /* integers big-endian, not varints */
};

static void put(struct bb *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void u1(struct bb *b, uint8_t v) { put(b, &v, 1); }

static void be(struct bb *b, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		u1(b, (uint8_t)(v >> (8 * i)));
}

/* LEB128 as the JDK writes it: 7 bits a byte, a 9th byte of 8 bits */
static void varint(struct bb *b, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		if (v < 0x80) {
			u1(b, (uint8_t)v);
			return;
		}
		u1(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	u1(b, (uint8_t)v);
}

static void lng(struct bb *b, int64_t v) { if (b->fixed) be(b, (uint64_t)v, 8); else varint(b, (uint64_t)v); }
static void in4(struct bb *b, int32_t v) { if (b->fixed) be(b, (uint32_t)v, 4); else varint(b, (uint32_t)v); }

/* strings: encoding byte, then per encoding */
static void s_utf8(struct bb *b, const char *s) { u1(b, 3); in4(b, (int32_t)strlen(s)); put(b, s, strlen(s)); }
static void s_pool(struct bb *b, int64_t key) { u1(b, 2); lng(b, key); }

/* an event: size (4 bytes: a padded varint, or a big-endian int), body */
static void event(struct bb *out, const struct bb *body)
{
	uint32_t size = (uint32_t)body->n + 4;
	if (out->fixed) {
		be(out, size, 4);
	} else {
		u1(out, (uint8_t)(size | 0x80));
		u1(out, (uint8_t)(size >> 7 | 0x80));
		u1(out, (uint8_t)(size >> 14 | 0x80));
		u1(out, (uint8_t)(size >> 21 & 0x7f));
	}
	put(out, body->p, body->n);
}

/* --- metadata ----------------------------------------------------------------- */

struct meta {
	struct bb tree;
	const char *strs[128];
	int nstrs;
};

static int sidx(struct meta *m, const char *s)
{
	for (int i = 0; i < m->nstrs; i++)
		if (strcmp(m->strs[i], s) == 0)
			return i;
	m->strs[m->nstrs] = s;
	return m->nstrs++;
}

/* An element: name, attributes (key, value pairs, NULL-ended), then the
 * number of children that the next calls write. */
static void el(struct meta *m, const char *name, int nkids, ...)
{
	const char *kv[32];
	int n = 0;
	va_list ap;
	va_start(ap, nkids);
	for (const char *k; (k = va_arg(ap, const char *));)
		kv[n++] = k;
	va_end(ap);
	in4(&m->tree, sidx(m, name));
	in4(&m->tree, n / 2);
	for (int i = 0; i < n; i++)
		in4(&m->tree, sidx(m, kv[i]));
	in4(&m->tree, nkids);
}

/* The types these tests use; ids as a JDK might number them. */
enum { T_LONG = 10, T_INT = 11, T_STRING = 12, T_TIMESTAMP = 20, T_TIMESPAN = 21, T_GC = 101, T_OTHER = 102 };

static void prim(struct meta *m, const char *name, const char *id)
{
	el(m, "class", 0, "name", name, "id", id, NULL);
}

static void annotated(struct meta *m, const char *field, const char *type, const char *ann, const char *unit)
{
	el(m, "field", 1, "name", field, "class", type, NULL);
	el(m, "annotation", 0, "class", ann, "value", unit, NULL);
}

static void write_meta(struct bb *out, int fixed)
{
	struct meta m = { .tree = { .fixed = fixed } };
	el(&m, "root", 2, NULL);
	el(&m, "metadata", 7, NULL);
	prim(&m, "long", "10");
	prim(&m, "int", "11");
	prim(&m, "java.lang.String", "12");
	el(&m, "class", 1, "name", "jdk.jfr.Timestamp", "id", "20", "superType", "java.lang.annotation.Annotation", NULL);
	el(&m, "field", 0, "name", "value", "class", "12", NULL);
	el(&m, "class", 1, "name", "jdk.jfr.Timespan", "id", "21", "superType", "java.lang.annotation.Annotation", NULL);
	el(&m, "field", 0, "name", "value", "class", "12", NULL);
	el(&m, "class", 7, "name", "jdk.GarbageCollection", "id", "101", "superType", "jdk.jfr.Event", NULL);
	annotated(&m, "startTime", "10", "20", "TICKS");
	annotated(&m, "duration", "10", "21", "TICKS");
	el(&m, "field", 0, "name", "gcId", "class", "10", NULL);
	el(&m, "field", 0, "name", "name", "class", "12", NULL);
	el(&m, "field", 0, "name", "cause", "class", "12", "constantPool", "true", NULL);
	annotated(&m, "sumOfPauses", "10", "21", "TICKS");
	annotated(&m, "longestPause", "10", "21", "NANOSECONDS");
	el(&m, "class", 2, "name", "test.Other", "id", "102", "superType", "jdk.jfr.Event", NULL);
	el(&m, "field", 0, "name", "x", "class", "11", NULL);
	el(&m, "field", 0, "name", "values", "class", "11", "dimension", "1", NULL);
	el(&m, "region", 0, "locale", "en_US", "gmtOffset", "0", NULL);

	struct bb body = { .fixed = fixed };
	lng(&body, 0);                    /* type: metadata */
	lng(&body, 0);                    /* start */
	lng(&body, 0);                    /* duration */
	lng(&body, 7);                    /* metadata id */
	in4(&body, m.nstrs);
	for (int i = 0; i < m.nstrs; i++)
		s_utf8(&body, m.strs[i]);
	put(&body, m.tree.p, m.tree.n);
	event(out, &body);
	free(body.p);
	free(m.tree.p);
}

/* A GC event: times in ticks; name written by the caller's function. */
static void gc_event(struct bb *out, int64_t start, int64_t dur, int64_t id, void (*name)(struct bb *),
		     int64_t cause_key)
{
	struct bb b = { .fixed = out->fixed };
	lng(&b, T_GC);
	lng(&b, start);
	lng(&b, dur);
	lng(&b, id);
	name(&b);
	lng(&b, cause_key);
	lng(&b, dur / 2);                 /* sumOfPauses, ticks */
	lng(&b, 1234);                    /* longestPause, ns */
	event(out, &b);
	free(b.p);
}

/* An event of a type id the metadata does not have: skipped by its
 * size, as the JDK does. */
static void unknown_event(struct bb *out)
{
	struct bb b = { .fixed = out->fixed };
	lng(&b, 999);
	put(&b, "\xff\xff\xff\x02\x00", 5);
	event(out, &b);
	free(b.p);
}

static void other_event(struct bb *out, int32_t x, int n)
{
	struct bb b = { .fixed = out->fixed };
	lng(&b, T_OTHER);
	in4(&b, x);
	in4(&b, n);
	for (int i = 0; i < n; i++)
		in4(&b, i * 1000);
	event(out, &b);
	free(b.p);
}

/* A checkpoint holding one String pool of n (key, UTF-8 value) pairs. */
static void checkpoint(struct bb *out, int64_t delta, uint8_t flags, int n, const int64_t *keys,
		       const char *const *vals)
{
	struct bb b = { .fixed = out->fixed };
	lng(&b, 1);                       /* type: checkpoint */
	lng(&b, 0);
	lng(&b, 0);
	lng(&b, delta);
	u1(&b, flags);
	in4(&b, 1);                       /* pools */
	lng(&b, T_STRING);
	in4(&b, n);
	for (int i = 0; i < n; i++) {
		lng(&b, keys[i]);
		s_utf8(&b, vals[i]);
	}
	event(out, &b);
	free(b.p);
}

/* names in every encoding */
static void n_null(struct bb *b) { u1(b, 0); }
static void n_empty(struct bb *b) { u1(b, 1); }
static void n_pool(struct bb *b) { s_pool(b, 1); }
static void n_utf8(struct bb *b) { s_utf8(b, "G1New"); }
static void n_chars(struct bb *b)
{
	/* "é😀" as UTF-16: U+00E9, then the pair D83D DE00 */
	u1(b, 4);
	in4(b, 3);
	const uint16_t cs[] = { 0xe9, 0xd83d, 0xde00 };
	for (int i = 0; i < 3; i++) {
		if (b->fixed)
			be(b, cs[i], 2);
		else
			varint(b, cs[i]);
	}
}
static void n_latin1(struct bb *b) { u1(b, 5); in4(b, 4); put(b, "caf\xe9", 4); }

#define START_NS 1700000000000000000ll
#define START_TICKS 5000ll
#define TPS 2000000000ll           /* 2 ticks a ns */

/* One chunk of six GC events (one per name encoding) and two other
 * events, pools in two checkpoints; flags as given. */
static void chunk(struct bb *out, int fixed, int64_t gc0)
{
	struct bb c = { .fixed = fixed };
	uint8_t hdr[68] = "FLR";
	put(&c, hdr, sizeof hdr);
	void (*names[])(struct bb *) = { n_null, n_empty, n_pool, n_utf8, n_chars, n_latin1 };
	const int64_t k1[] = { 1, 5 }, k2[] = { 2 };
	const char *const v1[] = { "first", "unused" }, *const v2[] = { "System.gc()" };
	for (int i = 0; i < 3; i++)
		gc_event(&c, START_TICKS + 2000 * (i + 1), 600, gc0 + i, names[i], 2);
	size_t cp1 = c.n;
	checkpoint(&c, 0, 0, 2, k1, v1);
	other_event(&c, -5, 3);
	unknown_event(&c);
	for (int i = 3; i < 6; i++)
		gc_event(&c, START_TICKS + 2000 * (i + 1), 600, gc0 + i, names[i], 2);
	size_t cp2 = c.n;
	checkpoint(&c, (int64_t)cp1 - (int64_t)cp2, 1 /* flush */, 1, k2, v2);
	other_event(&c, 70000, 0);
	size_t md = c.n;
	write_meta(&c, fixed);
	uint8_t *h = c.p;
	memcpy(h, "FLR\0", 4);
	h[5] = 2; h[7] = 1;               /* version 2.1 */
	struct bb hb = { 0 };
	be(&hb, c.n, 8);
	be(&hb, cp2, 8);
	be(&hb, md, 8);
	be(&hb, (uint64_t)START_NS, 8);
	be(&hb, 1000000, 8);              /* duration */
	be(&hb, START_TICKS, 8);
	be(&hb, TPS, 8);
	memcpy(h + 8, hb.p, 56);
	h[64] = 0;                        /* finished */
	h[67] = (uint8_t)((fixed ? 0 : 1) | 2);
	free(hb.p);
	put(out, c.p, c.n);
	free(c.p);
}

static struct jfr_recording *open_bytes(const struct bb *b, int expect_rc, struct htr_err *err)
{
	struct jfr_recording *r = NULL;
	const char *dir = getenv("HEAPFS_JFR_SEEDS");
	static int seed;
	if (dir) {
		char path[512];
		snprintf(path, sizeof path, "%s/hand-%02d.jfr", dir, seed++);
		FILE *f = fopen(path, "wb");
		if (f) {
			fwrite(b->p, 1, b->n, f);
			fclose(f);
		}
	}
	int rc = jfr_open_buffer(&r, b->p, b->n, "hand.jfr", err);
	assert_int_equal(rc, expect_rc);
	return r;
}

static void check_chunk_records(const struct jfr_recording *r, uint32_t first, int64_t gc0)
{
	const char *want[] = { NULL, "", "first", "G1New", "\xc3\xa9\xf0\x9f\x98\x80", "caf\xc3\xa9" };
	for (uint32_t i = 0; i < 6; i++) {
		uint32_t k = first + i;
		assert_int_equal(r->gcs.gc_id[k], gc0 + (int64_t)i);
		const char *name = jfr_str(r, r->gcs.name[k]);
		if (want[i])
			assert_string_equal(name, want[i]);
		else
			assert_null(name);
		assert_string_equal(jfr_str(r, r->gcs.cause[k]), "System.gc()");
		/* ticks 2000 (i + 1) after the start at 2 ticks a ns */
		assert_int_equal(r->gcs.start_ns[k], START_NS + 1000 * (int64_t)(i + 1));
		assert_int_equal(r->gcs.duration_ns[k], 300);
		assert_int_equal(r->gcs.sum_pauses_ns[k], 150);
		assert_int_equal(r->gcs.longest_pause_ns[k], 1234); /* NANOSECONDS: as written */
	}
}

static void test_one_chunk_every_encoding(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	struct jfr_recording *r = open_bytes(&b, 0, &err);
	assert_int_equal(r->nchunks, 1);
	assert_int_equal(r->truncated, 0);
	assert_int_equal(r->gcs.n, 6);
	check_chunk_records(r, 0, 1);
	assert_int_equal(r->chunks[0].events, 8);
	assert_int_equal(r->event_counts.n, 2);
	assert_string_equal(jfr_str(r, r->event_counts.name[0]), "jdk.GarbageCollection");
	assert_int_equal(r->event_counts.count[0], 6);
	assert_string_equal(jfr_str(r, r->event_counts.name[1]), "test.Other");
	assert_int_equal(r->event_counts.count[1], 2);
	jfr_close(r);
	free(b.p);
}

static void test_fixed_integers(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 1, 40);
	struct jfr_recording *r = open_bytes(&b, 0, &err);
	assert_int_equal(r->gcs.n, 6);
	check_chunk_records(r, 0, 40);
	jfr_close(r);
	free(b.p);
}

static void test_varint_forms(void **st)
{
	(void)st;
	/* -1 takes all 9 bytes, the last giving 8 bits; 2^62 + 5 as well */
	const int64_t vals[] = { 0, 127, 128, 300, -1, (1ll << 62) + 5, INT64_MIN };
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		struct bb b = { 0 };
		struct htr_err err;
		chunk(&b, 0, vals[i]);
		struct jfr_recording *r = open_bytes(&b, 0, &err);
		assert_int_equal(r->gcs.gc_id[0], vals[i]);
		jfr_close(r);
		free(b.p);
	}
	struct bb b = { 0 };
	varint(&b, UINT64_MAX);
	assert_int_equal(b.n, 9);
	assert_int_equal(b.p[8], 0xff);
	free(b.p);
}

static void test_second_chunk(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	size_t first = b.n;
	chunk(&b, 0, 100);
	struct jfr_recording *r = open_bytes(&b, 0, &err);
	assert_int_equal(r->nchunks, 2);
	assert_int_equal(r->chunks[1].offset, first);
	assert_int_equal(r->gcs.n, 12);
	check_chunk_records(r, 0, 1);
	check_chunk_records(r, 6, 100);
	assert_int_equal(r->event_counts.count[0], 12);
	/* the names are interned once */
	assert_int_equal(r->gcs.name[3], r->gcs.name[9]);
	jfr_close(r);
	free(b.p);
}

static void test_cut_second_chunk(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	size_t first = b.n;
	chunk(&b, 0, 100);
	for (size_t cut = first + 1; cut < b.n; cut += 37) {
		struct bb c = { .p = b.p, .n = cut };
		struct jfr_recording *r = open_bytes(&c, 0, &err);
		assert_int_equal(r->nchunks, 1);
		assert_int_equal(r->truncated, 1);
		assert_int_equal(r->gcs.n, 6);
		char want[64];
		snprintf(want, sizeof want, "hand.jfr: offset %zu: ", first);
		assert_non_null(strstr(r->warning, want));
		jfr_close(r);
	}
	free(b.p);
}

static void test_cut_first_chunk(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	for (size_t cut = 1; cut < b.n; cut += 13) {
		struct bb c = { .p = b.p, .n = cut };
		struct jfr_recording *r = open_bytes(&c, -EBADMSG, &err);
		assert_null(r);
	}
	free(b.p);
}

static void test_bad_magic(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	b.p[1] = 'X';
	assert_null(open_bytes(&b, -EPROTO, &err));
	assert_int_equal(err.offset, 0);
	assert_non_null(strstr(err.msg, "magic"));
	b.p[1] = 'L';
	b.p[5] = 1;                       /* version 1.1 */
	assert_null(open_bytes(&b, -EPROTO, &err));
	assert_non_null(strstr(err.msg, "version 1.1"));
	free(b.p);
}

/* A checkpoint delta that points forward is damage (the walk back could
 * otherwise loop). */
static void test_bad_delta(void **st)
{
	(void)st;
	struct bb b = { 0 };
	struct htr_err err;
	chunk(&b, 0, 1);
	struct jfr_recording *r = open_bytes(&b, 0, &err);
	jfr_close(r);
	/* the second checkpoint's delta: find it and make it positive */
	uint64_t cp2 = 0;
	for (int i = 0; i < 8; i++)
		cp2 = cp2 << 8 | b.p[16 + i];
	/* size (4), type 1 (1), start 0 (1), duration 0 (1), delta */
	uint8_t *d = b.p + cp2 + 7;
	assert_true(d[0] & 0x80);         /* a negative delta: 9 bytes */
	d[0] = 0x05;                      /* +5, then the rest no longer parses */
	assert_null(open_bytes(&b, -EBADMSG, &err));
	free(b.p);
}

/* A real recording of JfrWorkload by JDK 17 (the fuzz target's seed,
 * made with few events: GCs, heap summaries, allocation samples, old
 * objects with paths to roots; its metadata trimmed to the types it uses
 * by tests/fuzz/trim_jfr.py); the expected values are what `jfr print
 * --json` and `jfr summary` show for it (the same before and after the
 * trim). */
static void test_real_recording(void **st)
{
	(void)st;
	struct jfr_recording *r;
	struct htr_err err;
	const char *path = "tests/fuzz/seeds/fuzz_jfr/real-tiny-jdk17.jfr";
	if (jfr_open(&r, path, &err) != 0) {
		fprintf(stderr, "%s: offset %llu: %s\n", path, (unsigned long long)err.offset, err.msg);
		fail();
	}
	assert_int_equal(r->nchunks, 1);
	assert_int_equal(r->gcs.n, 2);
	assert_int_equal(r->gcs.gc_id[0], 2);
	assert_string_equal(jfr_str(r, r->gcs.name[0]), "G1New");
	assert_string_equal(jfr_str(r, r->gcs.cause[0]), "G1 Evacuation Pause");
	assert_int_equal(r->gcs.start_ns[0], 1795823049825977805ll); /* 2026-11-27T23:44:09.825977805Z */
	assert_int_equal(r->gcs.duration_ns[0], 11153893);
	assert_int_equal(r->gcs.gc_id[1], 3);
	assert_string_equal(jfr_str(r, r->gcs.name[1]), "G1Full");
	assert_string_equal(jfr_str(r, r->gcs.cause[1]), "System.gc()");
	assert_int_equal(r->gcs.longest_pause_ns[1], 36742518);
	assert_int_equal(r->heap.n, 4);
	assert_int_equal(r->allocs.n, 4);
	const int64_t weights[] = { 146232, 65360, 146248, 146120 };
	const char *const types[] = { "[B", "[B", "[I", "[B" };
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r->allocs.weight[i], weights[i]);
		assert_string_equal(jfr_str(r, r->classes.name[r->allocs.cls[i]]), types[i]);
		assert_string_equal(jfr_str(r, r->threads.java_name[r->allocs.thread[i]]), "jfr-worker-0");
	}
	uint32_t top = r->stacks.method[r->stacks.frame_off[r->allocs.stack[3]]];
	assert_string_equal(jfr_str(r, r->methods.name[top]), "churn");
	assert_int_equal(r->stacks.line[r->stacks.frame_off[r->allocs.stack[3]]], 38);
	assert_int_equal(r->old.n, 9);
	int products = 0;
	for (uint32_t i = 0; i < r->old.n; i++) {
		uint64_t p = r->old.path_off[i];
		if (strcmp(jfr_str(r, r->classes.name[r->old_path.cls[p]]), "JfrWorkload$Product") != 0)
			continue;
		products++;
		assert_int_equal(r->old_path.address[p], 4229663568ll);
		assert_int_equal(r->old.path_off[i + 1] - p, 6);
		assert_string_equal(jfr_str(r, r->old.root_system[i]), "Class Loader Data");
	}
	assert_int_equal(products, 1);
	assert_int_equal(r->event_counts.n, 4);
	jfr_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_chunk_every_encoding),
		cmocka_unit_test(test_fixed_integers),
		cmocka_unit_test(test_varint_forms),
		cmocka_unit_test(test_second_chunk),
		cmocka_unit_test(test_cut_second_chunk),
		cmocka_unit_test(test_cut_first_chunk),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_delta),
		cmocka_unit_test(test_real_recording),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

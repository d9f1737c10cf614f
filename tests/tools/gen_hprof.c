/* gen_hprof.c - writes a heap dump of any size directly in HPROF 1.0.2
 * format, streaming (memory stays at one 64 MB segment buffer whatever
 * the dump's size), and the figures its construction fixes, for checking
 * heapfs on dumps larger than a JVM on this machine could make (issue 29:
 * a dump of at least 10 GB).
 *
 *   gen_hprof -n ENTRIES [-g GARBAGE] [-o OUT.hprof] [-t TRUTH.txt]
 *   (at least one of -o and -t: -t alone writes the figures only)
 *
 * The heap (8-byte ids, no compressed-oops hint, so heapfs's size model
 * (docs/hprof.md) uses an oop size of 8 and a 16-byte header):
 *   - class app.Registry, static ENTRIES -> an Object[] of B = ceil(N/8)
 *     buckets; bucket b -> app.Entry b, whose `next` is entry b + B, and so
 *     on: each chain holds about 8 entries.
 *   - app.Entry { long key; Object payload; Object next }: entry i's
 *     payload is a byte[] of 200 + (i * 7919) % 201 bytes.
 *   - app.Shared (held by a JNI global) -> Object[] `items` of S = N/10
 *     references to the payloads of entries 0, 10, 20...: those payloads
 *     have two owners, so no single object retains them.
 *   - G app.Garbage { long v } that nothing references (a dump made
 *     without -live has them).
 * The truth file holds, one `key value` a line: objects, reachable,
 * count.TYPE and shallow.TYPE for each type, the retained size and count
 * of the bucket array (the biggest object by retained size) and of
 * Shared, and of the app.Entry and Object[] groups, each computed from the
 * construction alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG_CAP (64u << 20)

struct out {
	FILE *f;
	uint8_t *seg;      /* the open HEAP_DUMP_SEGMENT's body */
	size_t seg_len;
	int err;
};

/* ---- bytes ------------------------------------------------------------------ */

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
}

static void file_be(struct out *o, uint64_t v, int n)
{
	uint8_t b[8];
	put_be(b, v, n);
	if (fwrite(b, 1, (size_t)n, o->f) != (size_t)n)
		o->err = errno ? errno : EIO;
}

/* A top-level record with its body. */
static void record(struct out *o, uint8_t tag, const void *body, uint32_t len)
{
	file_be(o, tag, 1);
	file_be(o, 0, 4);
	file_be(o, len, 4);
	if (len && fwrite(body, 1, len, o->f) != len)
		o->err = errno ? errno : EIO;
}

static void seg_flush(struct out *o)
{
	if (o->seg_len)
		record(o, 0x1c, o->seg, (uint32_t)o->seg_len);
	o->seg_len = 0;
}

/* Room for n more bytes in the segment: a full one is written out first.
 * A sub-record never spans two segments. */
static uint8_t *seg_room(struct out *o, size_t n)
{
	if (n > SEG_CAP) {
		o->err = EFBIG;
		return NULL;
	}
	if (o->seg_len + n > SEG_CAP)
		seg_flush(o);
	uint8_t *p = o->seg + o->seg_len;
	o->seg_len += n;
	return p;
}

/* ---- the construction -------------------------------------------------------- */

enum { T_OBJ = 2, T_BYTE = 8, T_INT = 10, T_LONG = 11 };
enum { S_OBJECT = 1, S_REGISTRY, S_ENTRY, S_OBJARR, S_BYTEARR, S_SHARED, S_GARBAGE,
       S_ENTRIES, S_KEY, S_PAYLOAD, S_NEXT, S_ITEMS, S_V, S_NSTR };
enum { C_OBJECT = 0x100, C_REGISTRY = 0x108, C_ENTRY = 0x110, C_OBJARR = 0x118, C_BYTEARR = 0x120,
       C_SHARED = 0x128, C_GARBAGE = 0x130 };
#define O_BUCKETS 0x1000u
#define O_SHARED 0x2000u
#define O_ITEMS 0x3000u
#define O_BASE 0x100000000ull

static const char *const names[S_NSTR] = {
	[S_OBJECT] = "java/lang/Object", [S_REGISTRY] = "app/Registry", [S_ENTRY] = "app/Entry",
	[S_OBJARR] = "[Ljava/lang/Object;", [S_BYTEARR] = "[B", [S_SHARED] = "app/Shared",
	[S_GARBAGE] = "app/Garbage", [S_ENTRIES] = "ENTRIES", [S_KEY] = "key", [S_PAYLOAD] = "payload",
	[S_NEXT] = "next", [S_ITEMS] = "items", [S_V] = "v",
};

struct shape {
	uint64_t n, buckets, shared, garbage;
};

static uint64_t entry_id(uint64_t i) { return O_BASE + 64 * i; }
static uint64_t payload_id(uint64_t i) { return O_BASE + 64 * i + 32; }
static uint64_t garbage_id(const struct shape *s, uint64_t j) { return O_BASE + 64 * s->n + 16 * j; }
static uint32_t payload_len(uint64_t i) { return 200 + (uint32_t)((i * 7919) % 201); }

static uint64_t align8(uint64_t v) { return (v + 7) & ~7ull; }

/* heapfs's sizes for this dump (docs/hprof.md: oop 8, header 16) */
static uint64_t size_entry(void) { return align8(16 + 8 + 8 + 8); }
static uint64_t size_small(void) { return align8(16 + 8); } /* Shared, Garbage */
static uint64_t size_bytes(uint64_t len) { return align8(16 + 4 + len); }
static uint64_t size_refs(uint64_t len) { return align8(16 + 4 + 8 * len); }

static void strings_and_classes(struct out *o)
{
	uint8_t b[256];
	for (uint32_t s = 1; s < S_NSTR; s++) {
		size_t l = strlen(names[s]);
		put_be(b, s, 8);
		memcpy(b + 8, names[s], l);
		record(o, 0x01, b, (uint32_t)(8 + l));
	}
	static const uint64_t cls[][2] = { { C_OBJECT, S_OBJECT }, { C_REGISTRY, S_REGISTRY }, { C_ENTRY, S_ENTRY },
					   { C_OBJARR, S_OBJARR }, { C_BYTEARR, S_BYTEARR }, { C_SHARED, S_SHARED },
					   { C_GARBAGE, S_GARBAGE } };
	for (uint32_t k = 0; k < sizeof cls / sizeof cls[0]; k++) {
		put_be(b, k + 1, 4);       /* class serial */
		put_be(b + 4, cls[k][0], 8);
		put_be(b + 12, 1, 4);      /* stack trace serial */
		put_be(b + 16, cls[k][1], 8);
		record(o, 0x02, b, 24);
	}
	put_be(b, 1, 4); /* the empty stack trace HotSpot writes for objects */
	put_be(b + 4, 0, 4);
	put_be(b + 8, 0, 4);
	record(o, 0x05, b, 12);
}

struct field { uint64_t name; uint8_t type; uint64_t value; };

static void class_dump(struct out *o, uint64_t cid, uint64_t super, uint32_t nstatics, const struct field *st,
		       uint32_t nfields, const struct field *fl)
{
	/* tag, id, serial, super, loader, signers, domain, 2 reserved, size, pool, statics, fields */
	size_t n = 1 + 8 + 4 + 8 + 8 * 5 + 4 + 2 + 2 + nstatics * (8 + 1 + 8) + 2 + nfields * (8 + 1);
	uint8_t *p = seg_room(o, n);
	if (!p)
		return;
	uint32_t isz = 0;
	for (uint32_t i = 0; i < nfields; i++)
		isz += fl[i].type == T_OBJ || fl[i].type == T_LONG ? 8 : 4;
	*p++ = 0x20;
	put_be(p, cid, 8), p += 8;
	put_be(p, 1, 4), p += 4;
	put_be(p, super, 8), p += 8;
	memset(p, 0, 8 * 5), p += 8 * 5;
	put_be(p, isz, 4), p += 4;
	put_be(p, 0, 2), p += 2;         /* constant pool */
	put_be(p, nstatics, 2), p += 2;
	for (uint32_t i = 0; i < nstatics; i++) {
		put_be(p, st[i].name, 8), p += 8;
		*p++ = st[i].type;
		put_be(p, st[i].value, 8), p += 8; /* statics here are references or longs */
	}
	put_be(p, nfields, 2), p += 2;
	for (uint32_t i = 0; i < nfields; i++) {
		put_be(p, fl[i].name, 8), p += 8;
		*p++ = fl[i].type;
	}
}

static void class_dumps(struct out *o)
{
	const struct field reg_s[] = { { S_ENTRIES, T_OBJ, O_BUCKETS } };
	const struct field entry_f[] = { { S_KEY, T_LONG, 0 }, { S_PAYLOAD, T_OBJ, 0 }, { S_NEXT, T_OBJ, 0 } };
	const struct field shared_f[] = { { S_ITEMS, T_OBJ, 0 } };
	const struct field garbage_f[] = { { S_V, T_LONG, 0 } };
	class_dump(o, C_OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(o, C_REGISTRY, C_OBJECT, 1, reg_s, 0, NULL);
	class_dump(o, C_ENTRY, C_OBJECT, 0, NULL, 3, entry_f);
	class_dump(o, C_OBJARR, C_OBJECT, 0, NULL, 0, NULL);
	class_dump(o, C_BYTEARR, C_OBJECT, 0, NULL, 0, NULL);
	class_dump(o, C_SHARED, C_OBJECT, 0, NULL, 1, shared_f);
	class_dump(o, C_GARBAGE, C_OBJECT, 0, NULL, 1, garbage_f);
}

static void roots(struct out *o)
{
	static const uint64_t sticky[] = { C_OBJECT, C_REGISTRY, C_ENTRY, C_OBJARR, C_BYTEARR, C_SHARED, C_GARBAGE };
	for (size_t k = 0; k < sizeof sticky / sizeof sticky[0]; k++) {
		uint8_t *p = seg_room(o, 9);
		if (!p)
			return;
		*p = 0x05;
		put_be(p + 1, sticky[k], 8);
	}
	uint8_t *p = seg_room(o, 17); /* ROOT_JNI_GLOBAL: object, global ref id */
	if (!p)
		return;
	*p = 0x01;
	put_be(p + 1, O_SHARED, 8);
	put_be(p + 9, 0x7777, 8);
}

static void instance(struct out *o, uint64_t oid, uint64_t cid, uint32_t nvals, const uint64_t *vals)
{
	uint8_t *p = seg_room(o, 1 + 8 + 4 + 8 + 4 + 8 * (size_t)nvals);
	if (!p)
		return;
	*p++ = 0x21;
	put_be(p, oid, 8), p += 8;
	put_be(p, 1, 4), p += 4;
	put_be(p, cid, 8), p += 8;
	put_be(p, 8 * nvals, 4), p += 4;
	for (uint32_t i = 0; i < nvals; i++)
		put_be(p + 8 * i, vals[i], 8);
}

/* An Object[] of n references, elem(ctx, k) each. */
static void ref_array(struct out *o, uint64_t oid, uint64_t n, uint64_t (*elem)(const struct shape *, uint64_t),
		      const struct shape *s)
{
	uint8_t *p = seg_room(o, 1 + 8 + 4 + 4 + 8 + 8 * n);
	if (!p)
		return;
	*p++ = 0x22;
	put_be(p, oid, 8), p += 8;
	put_be(p, 1, 4), p += 4;
	put_be(p, n, 4), p += 4;
	put_be(p, C_OBJARR, 8), p += 8;
	for (uint64_t k = 0; k < n; k++)
		put_be(p + 8 * k, elem(s, k), 8);
}

static uint64_t bucket_head(const struct shape *s, uint64_t b) { return b < s->n ? entry_id(b) : 0; }
static uint64_t shared_item(const struct shape *s, uint64_t k) { (void)s; return payload_id(10 * k); }

static void byte_array(struct out *o, uint64_t oid, uint32_t len, uint64_t seed)
{
	uint8_t *p = seg_room(o, 1 + 8 + 4 + 4 + 1 + (size_t)len);
	if (!p)
		return;
	*p++ = 0x23;
	put_be(p, oid, 8), p += 8;
	put_be(p, 1, 4), p += 4;
	put_be(p, len, 4), p += 4;
	*p++ = T_BYTE;
	for (uint32_t k = 0; k < len; k++)
		p[k] = (uint8_t)(seed + k);
}

static void objects(struct out *o, const struct shape *s)
{
	ref_array(o, O_BUCKETS, s->buckets, bucket_head, s);
	uint64_t items = O_ITEMS;
	instance(o, O_SHARED, C_SHARED, 1, &items);
	ref_array(o, O_ITEMS, s->shared, shared_item, s);
	for (uint64_t i = 0; i < s->n && !o->err; i++) {
		uint64_t next = i + s->buckets < s->n ? entry_id(i + s->buckets) : 0;
		uint64_t v[3] = { i, payload_id(i), next };
		instance(o, entry_id(i), C_ENTRY, 3, v);
		byte_array(o, payload_id(i), payload_len(i), i);
	}
	for (uint64_t j = 0; j < s->garbage && !o->err; j++) {
		uint64_t v = j;
		instance(o, garbage_id(s, j), C_GARBAGE, 1, &v);
	}
}

static int write_truth(const char *path, const struct shape *s)
{
	uint64_t bytes_all = 0, bytes_owned = 0; /* payloads: all, and those only an entry holds */
	for (uint64_t i = 0; i < s->n; i++) {
		uint64_t b = size_bytes(payload_len(i));
		bytes_all += b;
		if (!(i % 10 == 0 && i / 10 < s->shared))
			bytes_owned += b;
	}
	uint64_t owned = s->n - s->shared;
	uint64_t buckets_size = size_refs(s->buckets), items_size = size_refs(s->shared);
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "objects %" PRIu64 "\n", 2 * s->n + s->garbage + 3);
	fprintf(f, "reachable %" PRIu64 "\n", 2 * s->n + 3);
	fprintf(f, "count.app.Entry %" PRIu64 "\nshallow.app.Entry %" PRIu64 "\n", s->n, s->n * size_entry());
	fprintf(f, "count.byte[] %" PRIu64 "\nshallow.byte[] %" PRIu64 "\n", s->n, bytes_all);
	fprintf(f, "count.java.lang.Object[] 2\nshallow.java.lang.Object[] %" PRIu64 "\n", buckets_size + items_size);
	fprintf(f, "count.app.Shared 1\nshallow.app.Shared %" PRIu64 "\n", size_small());
	fprintf(f, "count.app.Garbage %" PRIu64 "\nshallow.app.Garbage %" PRIu64 "\n", s->garbage,
		s->garbage * size_small());
	/* the bucket array dominates every entry and the payloads no Shared item names */
	fprintf(f, "retained_count.buckets %" PRIu64 "\n", 1 + s->n + owned);
	fprintf(f, "retained.buckets %" PRIu64 "\n", buckets_size + s->n * size_entry() + bytes_owned);
	/* a type's objects together (by-type/table): the entries retain themselves
	 * and the payloads no Shared item names; the two arrays everything
	 * reachable but Shared */
	fprintf(f, "group_retained_count.app.Entry %" PRIu64 "\n", s->n + owned);
	fprintf(f, "group_retained.app.Entry %" PRIu64 "\n", s->n * size_entry() + bytes_owned);
	fprintf(f, "group_retained_count.java.lang.Object[] %" PRIu64 "\n", 2 + 2 * s->n);
	fprintf(f, "group_retained.java.lang.Object[] %" PRIu64 "\n",
		buckets_size + items_size + s->n * size_entry() + bytes_all);
	/* Shared dominates its array only: each item is also an entry's payload */
	fprintf(f, "retained_count.shared %u\nretained.shared %" PRIu64 "\n", 2u, size_small() + items_size);
	return fclose(f) ? -errno : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: gen_hprof -n ENTRIES [-g GARBAGE] [-o OUT.hprof] [-t TRUTH.txt]\n"
			"Writes a heap dump of 2*ENTRIES+GARBAGE+3 objects (about 367 bytes per entry) and\n"
			"the figures its construction fixes (the head of tests/tools/gen_hprof.c).\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct shape s = { 0 };
	const char *out = NULL, *truth = NULL;
	int c;
	while ((c = getopt(argc, argv, "n:g:o:t:")) != -1) {
		char *end;
		switch (c) {
		case 'n': s.n = strtoull(optarg, &end, 10); if (*end || !s.n) return usage(); break;
		case 'g': s.garbage = strtoull(optarg, &end, 10); if (*end) return usage(); break;
		case 'o': out = optarg; break;
		case 't': truth = optarg; break;
		default: return usage();
		}
	}
	if ((!out && !truth) || optind != argc)
		return usage();
	s.buckets = (s.n + 7) / 8;
	s.shared = s.n / 10;
	if (s.buckets > UINT32_MAX || 8 * s.buckets + 64 > SEG_CAP) {
		fprintf(stderr, "gen_hprof: -n %" PRIu64 " makes a bucket array over one segment (at most %u entries)\n",
			s.n, (SEG_CAP - 64) / 8 * 8);
		return 2;
	}
	if (!out)
		goto figures;
	struct out o = { .f = fopen(out, "wb"), .seg = malloc(SEG_CAP) };
	if (!o.f || !o.seg) {
		fprintf(stderr, "gen_hprof: %s: %s\n", out, strerror(errno));
		return 1;
	}
	static char iobuf[1 << 20];
	setvbuf(o.f, iobuf, _IOFBF, sizeof iobuf);
	uint8_t hdr[31];
	memcpy(hdr, "JAVA PROFILE 1.0.2", 19);
	put_be(hdr + 19, 8, 4);
	put_be(hdr + 23, 0, 4);
	put_be(hdr + 27, 1700000000, 4);
	if (fwrite(hdr, 1, sizeof hdr, o.f) != sizeof hdr)
		o.err = errno;
	strings_and_classes(&o);
	class_dumps(&o);
	roots(&o);
	objects(&o, &s);
	seg_flush(&o);
	record(&o, 0x2c, NULL, 0);
	if (fclose(o.f) && !o.err)
		o.err = errno;
	free(o.seg);
	if (o.err) {
		fprintf(stderr, "gen_hprof: %s: %s\n", out, strerror(o.err));
		unlink(out);
		return 1;
	}
figures:
	if (truth && write_truth(truth, &s)) {
		fprintf(stderr, "gen_hprof: %s: %s\n", truth, strerror(errno));
		return 1;
	}
	return 0;
}

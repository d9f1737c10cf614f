/* test_hprof.c - the HPROF reader and importer.
 *
 * The dumps are written byte by byte by the small HPROF writer below, so
 * every expected value (types, sizes, edges, roots, ids) comes from the
 * construction: sizes from the size rules written out in docs/hprof.md,
 * never from the importer.  Each test imports, then checks the trace with
 * trace_open() and heap_state_build().  A dump opened directly gets its
 * heap state from the dump itself (trace->prebuilt); the direct-mount
 * tests require it to equal, column by column, the state rebuilt from the
 * imported trace's events.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/buf.h"
#include "model/heap_state.h"
#include "model/heap_state_make.h"
#include "model/hprof.h"
#include "model/state_cache.h"
#include "model/trace.h"

static char dir[] = "/tmp/heapfs-test-hprof-XXXXXX";

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* ---- a tiny HPROF writer ------------------------------------------------------ */

struct hw {
	struct buf b;
	uint32_t ids;
	size_t rec_len_at;   /* offset of the open record's length field */
};

static void be(struct hw *w, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		assert_int_equal(buf_putc(&w->b, (uint8_t)(v >> (8 * i))), 0);
}
static void u1(struct hw *w, uint64_t v) { be(w, v, 1); }
static void u2(struct hw *w, uint64_t v) { be(w, v, 2); }
static void u4(struct hw *w, uint64_t v) { be(w, v, 4); }
static void id(struct hw *w, uint64_t v) { be(w, v, (int)w->ids); }

static void hw_init(struct hw *w, const char *version, uint32_t ids, uint64_t time_ms)
{
	buf_init(&w->b);
	w->ids = ids;
	char magic[19] = "JAVA PROFILE ";
	memcpy(magic + 13, version, 5);
	magic[18] = '\0';
	assert_int_equal(buf_put(&w->b, magic, 19), 0);
	u4(w, ids);
	u4(w, time_ms >> 32);
	u4(w, time_ms & 0xffffffffu);
}

static void rec_begin(struct hw *w, uint8_t tag)
{
	u1(w, tag);
	u4(w, 0);               /* time */
	w->rec_len_at = w->b.len;
	u4(w, 0);               /* length, patched by rec_end */
}

static void rec_end(struct hw *w)
{
	uint32_t len = (uint32_t)(w->b.len - w->rec_len_at - 4);
	for (int i = 0; i < 4; i++)
		w->b.data[w->rec_len_at + i] = (uint8_t)(len >> (24 - 8 * i));
}

static void utf8(struct hw *w, uint64_t sid, const char *s)
{
	rec_begin(w, 0x01);
	id(w, sid);
	assert_int_equal(buf_put(&w->b, s, strlen(s)), 0);
	rec_end(w);
}

static void load_class(struct hw *w, uint32_t serial, uint64_t cid, uint64_t name)
{
	rec_begin(w, 0x02);
	u4(w, serial);
	id(w, cid);
	u4(w, 1);
	id(w, name);
	rec_end(w);
}

static void frame(struct hw *w, uint64_t fid, uint64_t name, uint64_t sig, uint64_t src,
		  uint32_t class_serial, int32_t line)
{
	rec_begin(w, 0x04);
	id(w, fid);
	id(w, name);
	id(w, sig);
	id(w, src);
	u4(w, class_serial);
	u4(w, (uint32_t)line);
	rec_end(w);
}

static void trace(struct hw *w, uint32_t serial, uint32_t thread, uint32_t n, const uint64_t *frames)
{
	rec_begin(w, 0x05);
	u4(w, serial);
	u4(w, thread);
	u4(w, n);
	for (uint32_t i = 0; i < n; i++)
		id(w, frames[i]);
	rec_end(w);
}

static void start_thread(struct hw *w, uint32_t serial, uint64_t obj, uint64_t name)
{
	rec_begin(w, 0x0a);
	u4(w, serial);
	id(w, obj);
	u4(w, 1);
	id(w, name);
	id(w, 0);
	id(w, 0);
	rec_end(w);
}

/* Basic types */
enum { T_OBJ = 2, T_BOOL = 4, T_CHAR = 5, T_FLOAT = 6, T_DOUBLE = 7, T_BYTE = 8, T_SHORT = 9,
       T_INT = 10, T_LONG = 11 };

struct fdef {
	uint64_t name;
	uint8_t type;
	uint64_t value;      /* statics */
};

static uint32_t tsize(const struct hw *w, uint8_t t)
{
	switch (t) {
	case T_OBJ: return w->ids;
	case T_BOOL: case T_BYTE: return 1;
	case T_CHAR: case T_SHORT: return 2;
	case T_FLOAT: case T_INT: return 4;
	default: return 8;
	}
}

static void class_dump(struct hw *w, uint64_t cid, uint64_t super, uint32_t nstatics,
		       const struct fdef *statics, uint32_t nfields, const struct fdef *fields)
{
	u1(w, 0x20);
	id(w, cid);
	u4(w, 1);
	id(w, super);
	id(w, 0);   /* loader */
	id(w, 0);
	id(w, 0);
	id(w, 0);
	id(w, 0);
	uint32_t isz = 0;
	for (uint32_t i = 0; i < nfields; i++)
		isz += tsize(w, fields[i].type);
	u4(w, isz);  /* as HotSpot writes it: bytes of the field values */
	u2(w, 1);    /* one constant pool entry, to be skipped */
	u2(w, 3);
	u1(w, T_INT);
	u4(w, 99);
	u2(w, nstatics);
	for (uint32_t i = 0; i < nstatics; i++) {
		id(w, statics[i].name);
		u1(w, statics[i].type);
		be(w, statics[i].value, (int)tsize(w, statics[i].type));
	}
	u2(w, nfields);
	for (uint32_t i = 0; i < nfields; i++) {
		id(w, fields[i].name);
		u1(w, fields[i].type);
	}
}

/* values: (type, value) pairs in dump order (own fields, then super's) */
static void instance(struct hw *w, uint64_t oid, uint32_t trace_serial, uint64_t cid, uint32_t n,
		     const struct fdef *values)
{
	u1(w, 0x21);
	id(w, oid);
	u4(w, trace_serial);
	id(w, cid);
	uint32_t len = 0;
	for (uint32_t i = 0; i < n; i++)
		len += tsize(w, values[i].type);
	u4(w, len);
	for (uint32_t i = 0; i < n; i++)
		be(w, values[i].value, (int)tsize(w, values[i].type));
}

static void obj_array(struct hw *w, uint64_t oid, uint64_t cid, uint32_t n, const uint64_t *elems)
{
	u1(w, 0x22);
	id(w, oid);
	u4(w, 1);
	u4(w, n);
	id(w, cid);
	for (uint32_t i = 0; i < n; i++)
		id(w, elems[i]);
}

static void prim_array(struct hw *w, uint64_t oid, uint8_t type, uint32_t n, const uint8_t *bytes)
{
	u1(w, 0x23);
	id(w, oid);
	u4(w, 1);
	u4(w, n);
	u1(w, type);
	uint32_t sz = tsize(w, type);
	for (uint32_t i = 0; i < n * sz; i++)
		u1(w, bytes ? bytes[i] : (uint8_t)i);
}

static void root1(struct hw *w, uint8_t tag, uint64_t obj)
{
	u1(w, tag);
	id(w, obj);
}

static void root_thread(struct hw *w, uint8_t tag, uint64_t obj, uint32_t thread)
{
	root1(w, tag, obj);
	u4(w, thread);
}

static void root_frame(struct hw *w, uint8_t tag, uint64_t obj, uint32_t thread, uint32_t frame)
{
	root_thread(w, tag, obj, thread);
	u4(w, frame);
}

static void save(struct hw *w, const char *path)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(w->b.data, 1, w->b.len, f), w->b.len);
	assert_int_equal(fclose(f), 0);
	const char *seeds = getenv("HEAPFS_HPROF_SEEDS");  /* tests/fuzz/seeds/fuzz_hprof_import */
	if (seeds) {
		char p[512];
		snprintf(p, sizeof p, "%s/%s", seeds, strrchr(path, '/') + 1);
		FILE *g = fopen(p, "wb");
		if (g) {
			fwrite(w->b.data, 1, w->b.len, g);
			fclose(g);
		}
	}
}

/* ---- the scenario ---------------------------------------------------------------- */

/* UTF8 ids */
enum {
	S_OBJECT = 1, S_NODE, S_SUB, S_HOLDER, S_OBJARR, S_BYTEARR, S_STRING, S_THREAD, S_MAIN,
	S_NEXT, S_VALUE, S_X, S_FLAG, S_ROOT, S_COUNT, S_NAME, S_CODER, S_M_MAIN, S_M_RUN, S_SIG,
	S_RUNSIG, S_FILE, S_WORKER, S_ATOMIC, S_ADO, S_ATO, S_LONGARR,
};
/* class ids */
enum {
	C_OBJECT = 0x100, C_NODE = 0x108, C_SUB = 0x110, C_HOLDER = 0x118, C_OBJARR = 0x120,
	C_BYTEARR = 0x128, C_STRING = 0x130, C_THREAD = 0x138, C_MAIN = 0x140, C_ATOMIC = 0x148,
	C_LONGARR = 0x150, C_MISSING = 0x999,
};
/* object ids */
enum {
	O_N1 = 0x1000, O_N2 = 0x1010, O_S1 = 0x1020, O_ARR = 0x1030, O_BYTES = 0x1040,
	O_INTS = 0x1050, O_STR = 0x1060, O_STRB = 0x1070, O_THR = 0x1080, O_UNK = 0x1090,
};
#define NOBJ 10u
#define F_MAIN 0x500
#define F_RUN 0x508

struct scenario {
	const char *version;   /* "1.0.1" or "1.0.2" */
	uint32_t ids;
	int segmented;         /* HEAP_DUMP_SEGMENTs + HEAP_DUMP_END, else one HEAP_DUMP */
	int oop_hint;          /* java.lang.Class$Atomic with offsets 4 apart */
	uint64_t time_ms;
};

static void strings(struct hw *w)
{
	static const char *const s[] = {
		[S_OBJECT] = "java/lang/Object", [S_NODE] = "x/Node", [S_SUB] = "x/Sub",
		[S_HOLDER] = "x/Holder", [S_OBJARR] = "[Ljava/lang/Object;", [S_BYTEARR] = "[B",
		[S_STRING] = "java/lang/String", [S_THREAD] = "java/lang/Thread", [S_MAIN] = "x/Main",
		[S_NEXT] = "next", [S_VALUE] = "value", [S_X] = "x", [S_FLAG] = "flag", [S_ROOT] = "ROOT",
		[S_COUNT] = "count", [S_NAME] = "name", [S_CODER] = "coder", [S_M_MAIN] = "main",
		[S_M_RUN] = "run", [S_SIG] = "([Ljava/lang/String;)V", [S_RUNSIG] = "()V",
		[S_FILE] = "Main.java", [S_WORKER] = "worker", [S_ATOMIC] = "java/lang/Class$Atomic",
		[S_ADO] = "annotationDataOffset", [S_ATO] = "annotationTypeOffset", [S_LONGARR] = "[J",
	};
	for (size_t i = 1; i < sizeof s / sizeof s[0]; i++)
		utf8(w, i, s[i]);
}

static void classes(struct hw *w, const struct scenario *sc)
{
	static const struct { uint32_t serial; uint64_t cid, name; } lc[] = {
		{ 1, C_OBJECT, S_OBJECT }, { 2, C_NODE, S_NODE }, { 3, C_SUB, S_SUB },
		{ 4, C_HOLDER, S_HOLDER }, { 5, C_OBJARR, S_OBJARR }, { 6, C_BYTEARR, S_BYTEARR },
		{ 7, C_STRING, S_STRING }, { 8, C_THREAD, S_THREAD }, { 9, C_MAIN, S_MAIN },
		{ 10, C_ATOMIC, S_ATOMIC }, { 11, C_LONGARR, S_LONGARR },
	};
	for (size_t i = 0; i < sizeof lc / sizeof lc[0]; i++)
		if (lc[i].cid != C_ATOMIC || sc->oop_hint)
			load_class(w, lc[i].serial, lc[i].cid, lc[i].name);
}

static void class_dumps(struct hw *w, const struct scenario *sc)
{
	struct fdef node_f[] = { { S_NEXT, T_OBJ, 0 }, { S_VALUE, T_INT, 0 } };
	struct fdef sub_f[] = { { S_X, T_LONG, 0 }, { S_FLAG, T_BOOL, 0 } };
	struct fdef holder_s[] = { { S_ROOT, T_OBJ, O_N2 }, { S_COUNT, T_INT, 7 } };
	struct fdef string_f[] = { { S_VALUE, T_OBJ, 0 }, { S_CODER, T_BYTE, 0 } };
	struct fdef thread_f[] = { { S_NAME, T_OBJ, 0 } };
	struct fdef atomic_s[] = { { S_ADO, T_LONG, 12 }, { S_ATO, T_LONG, 16 } };
	class_dump(w, C_OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(w, C_NODE, C_OBJECT, 0, NULL, 2, node_f);
	class_dump(w, C_SUB, C_NODE, 0, NULL, 2, sub_f);
	class_dump(w, C_HOLDER, C_OBJECT, 2, holder_s, 0, NULL);
	class_dump(w, C_OBJARR, C_OBJECT, 0, NULL, 0, NULL);
	class_dump(w, C_BYTEARR, C_OBJECT, 0, NULL, 0, NULL);
	class_dump(w, C_STRING, C_OBJECT, 0, NULL, 2, string_f);
	class_dump(w, C_THREAD, C_OBJECT, 0, NULL, 1, thread_f);
	class_dump(w, C_MAIN, C_OBJECT, 0, NULL, 0, NULL);
	class_dump(w, C_LONGARR, C_OBJECT, 0, NULL, 0, NULL);
	if (sc->oop_hint)
		class_dump(w, C_ATOMIC, C_OBJECT, 2, atomic_s, 0, NULL);
}

static void roots(struct hw *w)
{
	root1(w, 0xff, O_N1);                      /* ROOT_UNKNOWN */
	root1(w, 0x01, O_N2);                      /* ROOT_JNI_GLOBAL + its ref id */
	id(w, 0x7777);
	root_frame(w, 0x02, O_ARR, 1, 0);          /* ROOT_JNI_LOCAL */
	root_frame(w, 0x03, O_S1, 1, 1);           /* ROOT_JAVA_FRAME: main, two locals */
	root_frame(w, 0x03, O_BYTES, 1, 1);
	root_frame(w, 0x03, O_N2, 1, 0);           /* ... and one in run */
	root_thread(w, 0x04, O_INTS, 1);           /* ROOT_NATIVE_STACK */
	root1(w, 0x05, C_HOLDER);                  /* ROOT_STICKY_CLASS naming a class: skipped */
	root1(w, 0x05, O_STRB);                    /* ... naming an object */
	root_thread(w, 0x06, O_N1, 1);             /* ROOT_THREAD_BLOCK */
	root1(w, 0x07, O_N2);                      /* ROOT_MONITOR_USED */
	root_frame(w, 0x08, O_THR, 1, 2);          /* ROOT_THREAD_OBJECT: serial 1, trace 2 */
}

static void objects(struct hw *w)
{
	struct fdef n1[] = { { 0, T_OBJ, O_N2 }, { 0, T_INT, 1 } };
	struct fdef n2[] = { { 0, T_OBJ, 0 }, { 0, T_INT, 2 } };
	/* Sub: own fields first (x, flag), then Node's (next, value) */
	struct fdef s1[] = { { 0, T_LONG, 5 }, { 0, T_BOOL, 1 }, { 0, T_OBJ, O_N1 }, { 0, T_INT, 3 } };
	struct fdef str[] = { { 0, T_OBJ, O_STRB }, { 0, T_BYTE, 0 } };
	struct fdef thr[] = { { 0, T_OBJ, O_STR } };
	struct fdef unk[] = { { 0, T_INT, 4 } };
	uint64_t arr[] = { O_N1, C_NODE, O_S1 };   /* a class reference: not an edge */
	instance(w, O_N1, 3, C_NODE, 2, n1);
	instance(w, O_N2, 1, C_NODE, 2, n2);
	instance(w, O_S1, 1, C_SUB, 4, s1);
	obj_array(w, O_ARR, C_OBJARR, 3, arr);
	prim_array(w, O_BYTES, T_BYTE, 5, NULL);
	prim_array(w, O_INTS, T_INT, 2, NULL);     /* no [I class in the dump */
	instance(w, O_STR, 1, C_STRING, 2, str);
	prim_array(w, O_STRB, T_BYTE, 4, (const uint8_t *)"main");
	instance(w, O_THR, 1, C_THREAD, 1, thr);
	instance(w, O_UNK, 1, C_MISSING, 1, unk);
}

static void build(struct hw *w, const struct scenario *sc)
{
	hw_init(w, sc->version, sc->ids, sc->time_ms);
	strings(w);
	classes(w, sc);
	frame(w, F_MAIN, S_M_MAIN, S_SIG, S_FILE, 9, 42);
	frame(w, F_RUN, S_M_RUN, S_RUNSIG, S_FILE, 9, 7);
	uint64_t stack[] = { F_RUN, F_MAIN }, site[] = { F_MAIN };
	trace(w, 1, 0, 0, NULL);          /* HotSpot's empty trace for objects */
	trace(w, 2, 1, 2, stack);         /* thread 1: run (depth 0) called by main */
	trace(w, 3, 1, 1, site);          /* an allocation site */
	start_thread(w, 2, 0, S_WORKER);  /* a thread known only by START_THREAD */
	rec_begin(w, sc->segmented ? 0x1c : 0x0c);
	class_dumps(w, sc);
	roots(w);
	if (sc->segmented) {
		rec_end(w);
		rec_begin(w, 0x1c);
	}
	objects(w);
	rec_end(w);
	if (sc->segmented) {
		rec_begin(w, 0x2c);
		rec_end(w);
	}
}

/* ---- checking the trace ------------------------------------------------------------- */

static uint32_t type_by_name(const struct trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->ntypes; i++)
		if (t->types[i].name && strcmp(t->types[i].name, name) == 0)
			return i;
	fail_msg("no type %s", name);
	return 0;
}

static const struct objinfo *obj(const struct heap_state *s, uint64_t oid)
{
	uint32_t i = heap_state_find(s, oid);
	assert_int_not_equal(i, UINT32_MAX);
	return hs_info(s, i);
}

/* 1 if the state has the edge src -> dst in slot. */
static int has_edge(const struct heap_state *s, uint64_t src, uint32_t slot, uint64_t dst)
{
	uint32_t i = heap_state_find(s, src), j = heap_state_find(s, dst);
	for (uint64_t e = s->out_off[i]; e < s->out_off[i + 1]; e++)
		if (s->out_tgt[e] == j && hs_ref_slot(s, i, e) == slot)
			return 1;
	return 0;
}

static uint32_t out_degree(const struct heap_state *s, uint64_t src)
{
	uint32_t i = heap_state_find(s, src);
	return s->out_off[i + 1] - s->out_off[i];
}

static const struct hs_root *find_root(const struct heap_state *s, uint32_t kind, uint64_t oid,
				       uint32_t nth)
{
	uint32_t i = heap_state_find(s, oid);
	for (uint32_t r = 0; r < s->nroots; r++)
		if (s->roots[r].kind == kind && s->roots[r].object == i && nth-- == 0)
			return &s->roots[r];
	return NULL;
}

static uint32_t count_roots(const struct heap_state *s, uint32_t kind)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < s->nroots; r++)
		n += s->roots[r].kind == kind;
	return n;
}

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static void open_state(const char *path, uint32_t gc_index, struct trace **t, struct heap_state **s)
{
	struct htr_err err;
	struct trace_open_opts oo = { NULL };
	int rc = trace_open(t, path, &oo, &err);
	if (rc)
		fail_msg("trace_open: %s", err.msg);
	struct heap_build_opts bo = { 0 };
	rc = heap_state_build(*t, gc_index, &bo, s, &err);
	if (rc)
		fail_msg("heap_state_build: %s", err.msg);
}

static const char *method_name(const struct trace *t, uint32_t m)
{
	assert_true(m < t->nmethods);
	return t->methods[m].name;
}

/* Imports the scenario and checks everything the construction fixes.
 * header/oop: the VisualVM size rules' header and reference size. */
static void check_scenario(const struct scenario *sc, uint32_t header, uint32_t oop)
{
	char hp[256], tp[256], err[512] = "", name[64];
	snprintf(name, sizeof name, "scenario-%u-%s%s.hprof", sc->ids, sc->version, sc->oop_hint ? "-hint" : "");
	path_in_dir(hp, sizeof hp, name);
	path_in_dir(tp, sizeof tp, "scenario.htr");
	struct hw w;
	build(&w, sc);
	save(&w, hp);
	buf_free(&w.b);
	const char *dumps[] = { hp };
	int rc = hprof_import(dumps, 1, tp, NULL, err, sizeof err);
	if (rc)
		fail_msg("import: %s", err);

	struct trace *t;
	struct heap_state *s;
	open_state(tp, 0, &t, &s);
	assert_int_equal(t->ngcs, 1);
	assert_true(t->gcs[0].flags & HTR_GC_HAS_GRAPH);
	assert_int_equal(t->gcs[0].start_ns, sc->time_ms * 1000000ull);
	assert_int_equal(s->n, NOBJ);

	/* types: Java names, fields inherited first, statics last */
	uint32_t node = type_by_name(t, "x.Node"), sub = type_by_name(t, "x.Sub");
	uint32_t holder = type_by_name(t, "x.Holder");
	const struct trace_type *ts = &t->types[sub];
	assert_int_equal(ts->nfields, 4);
	assert_string_equal(ts->fields[0].name, "next");
	assert_int_equal(ts->fields[0].flags, HTR_FIELD_REF);
	assert_string_equal(ts->fields[1].name, "value");
	assert_string_equal(ts->fields[1].sig, "I");
	assert_string_equal(ts->fields[2].name, "x");
	assert_string_equal(ts->fields[2].sig, "J");
	assert_string_equal(ts->fields[3].name, "flag");
	assert_string_equal(ts->fields[3].sig, "Z");
	assert_int_equal(ts->super_id, node);
	const struct trace_type *th = &t->types[holder];
	assert_int_equal(th->nfields, 2);
	assert_string_equal(th->fields[0].name, "ROOT");
	assert_int_equal(th->fields[0].flags, HTR_FIELD_STATIC | HTR_FIELD_REF);
	assert_int_equal(th->fields[1].flags, HTR_FIELD_STATIC);
	assert_int_equal(t->types[type_by_name(t, "java.lang.Object[]")].kind, HTR_TYPE_OBJ_ARRAY);
	assert_int_equal(t->types[type_by_name(t, "byte[]")].kind, HTR_TYPE_PRIM_ARRAY);
	assert_int_equal(t->types[type_by_name(t, "long[]")].kind, HTR_TYPE_PRIM_ARRAY);
	assert_int_equal(t->types[type_by_name(t, "int[]")].kind, HTR_TYPE_PRIM_ARRAY);

	/* objects, types and VisualVM sizes */
	assert_int_equal(obj(s, O_N1)->type, node);
	assert_int_equal(obj(s, O_S1)->type, sub);
	assert_int_equal(obj(s, O_N1)->size, align8(header + oop + 4));
	assert_int_equal(obj(s, O_S1)->size, align8(header + oop + 4 + 8 + 1));
	assert_int_equal(obj(s, O_ARR)->size, align8(header + 4 + 3 * oop));
	assert_int_equal(obj(s, O_ARR)->array_length, 3);
	assert_int_equal(obj(s, O_BYTES)->size, align8(header + 4 + 5));
	assert_int_equal(obj(s, O_INTS)->size, align8(header + 4 + 2 * 4));
	assert_int_equal(obj(s, O_INTS)->type, type_by_name(t, "int[]"));
	assert_int_equal(obj(s, O_STR)->size, align8(header + oop + 1));
	assert_int_equal(obj(s, O_THR)->size, align8(header + oop));
	assert_int_equal(obj(s, O_UNK)->type, type_by_name(t, "<unknown class>"));
	assert_int_equal(obj(s, O_N2)->array_length, -1);

	/* an allocation site from the object's stack trace */
	uint32_t site = obj(s, O_N1)->site;
	assert_int_not_equal(site, HTR_NO_SITE);
	assert_int_equal(t->sites[site].nframes, 1);
	assert_string_equal(method_name(t, t->sites[site].frames[0].method), "main");
	assert_string_equal(t->methods[t->sites[site].frames[0].method].cls, "x.Main");
	assert_int_equal(t->sites[site].frames[0].line, 42);
	assert_int_equal(obj(s, O_N2)->site, HTR_NO_SITE);

	/* edges: slots are flattened field indexes / element indexes */
	assert_true(has_edge(s, O_N1, 0, O_N2));
	assert_int_equal(out_degree(s, O_N2), 0);
	assert_true(has_edge(s, O_S1, 0, O_N1));
	assert_int_equal(out_degree(s, O_S1), 1);
	assert_true(has_edge(s, O_ARR, 0, O_N1));
	assert_true(has_edge(s, O_ARR, 2, O_S1));
	assert_int_equal(out_degree(s, O_ARR), 2);   /* the class reference is not an edge */
	assert_true(has_edge(s, O_STR, 0, O_STRB));
	assert_true(has_edge(s, O_THR, 0, O_STR));
	assert_int_equal(s->dangling_refs, 0);
	assert_int_equal(s->nedges, 6);

	/* roots: every kind, the sticky class naming a class skipped */
	assert_non_null(find_root(s, HTR_ROOT_OTHER, O_N1, 0));
	assert_non_null(find_root(s, HTR_ROOT_JNI_GLOBAL, O_N2, 0));
	const struct hs_root *r = find_root(s, HTR_ROOT_JNI_LOCAL, O_ARR, 0);
	assert_non_null(r);
	assert_int_equal(t->threads[r->thread].id, 1);
	assert_int_equal(r->depth, 0);
	r = find_root(s, HTR_ROOT_LOCAL, O_S1, 0);
	assert_non_null(r);
	assert_int_equal(r->depth, 1);
	assert_int_equal(r->slot, 0);
	assert_string_equal(method_name(t, r->method), "main");
	r = find_root(s, HTR_ROOT_LOCAL, O_BYTES, 0);
	assert_non_null(r);
	assert_int_equal(r->depth, 1);
	assert_int_equal(r->slot, 1);
	r = find_root(s, HTR_ROOT_LOCAL, O_N2, 0);
	assert_non_null(r);
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->slot, 0);
	assert_string_equal(method_name(t, r->method), "run");
	assert_non_null(find_root(s, HTR_ROOT_NATIVE_STACK, O_INTS, 0));
	assert_non_null(find_root(s, HTR_ROOT_SYSTEM_CLASS, O_STRB, 0));
	assert_int_equal(count_roots(s, HTR_ROOT_SYSTEM_CLASS), 1);
	assert_non_null(find_root(s, HTR_ROOT_THREAD_BLOCK, O_N1, 0));
	assert_non_null(find_root(s, HTR_ROOT_MONITOR, O_N2, 0));
	r = find_root(s, HTR_ROOT_THREAD, O_THR, 0);
	assert_non_null(r);
	assert_int_equal(t->threads[r->thread].id, 1);
	r = find_root(s, HTR_ROOT_STATIC, O_N2, 0);
	assert_non_null(r);
	assert_int_equal(r->type, holder);
	assert_int_equal(r->field, 0);
	assert_int_equal(s->nroots, 12);
	assert_int_equal(s->dropped_roots, 0);

	/* thread names: from the Thread object's String, or START_THREAD */
	uint32_t t1 = trace_thread_index(t, 1), t2 = trace_thread_index(t, 2);
	assert_int_not_equal(t1, UINT32_MAX);
	assert_string_equal(t->threads[t1].name, "main");
	assert_int_not_equal(t2, UINT32_MAX);
	assert_string_equal(t->threads[t2].name, "worker");
	assert_int_equal(obj(s, O_N1)->thread, t1);   /* the thread of its stack trace */

	heap_state_free(s);
	trace_close(t);
}

static void test_segmented_8byte_ids(void **state)
{
	(void)state;
	struct scenario sc = { "1.0.2", 8, 1, 0, 1700000000123ull };
	check_scenario(&sc, 16, 8);   /* no sign of compressed oops: 8-byte references */
}

static void test_heap_dump_4byte_ids_v101(void **state)
{
	(void)state;
	struct scenario sc = { "1.0.1", 4, 0, 0, 5000 };
	check_scenario(&sc, 8, 4);
}

static void test_compressed_oops_guess(void **state)
{
	(void)state;
	/* java.lang.Class$Atomic's field offsets 12 and 16: 4-byte references */
	struct scenario sc = { "1.0.2", 8, 1, 1, 77 };
	check_scenario(&sc, 12, 4);
}

static void test_hotspot_layout(void **state)
{
	(void)state;
	char hp[256], tp[256], err[512] = "";
	path_in_dir(hp, sizeof hp, "hotspot.hprof");
	path_in_dir(tp, sizeof tp, "hotspot.htr");
	struct scenario sc = { "1.0.2", 8, 1, 0, 1 };
	struct hw w;
	build(&w, &sc);
	save(&w, hp);
	buf_free(&w.b);
	const char *dumps[] = { hp };
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	o.layout = HPROF_LAYOUT_HOTSPOT;
	o.compressed_class_pointers = 0;  /* 16-byte header, 24-byte array header */
	assert_int_equal(hprof_import_with(dumps, 1, tp, &o, err, sizeof err), 0);
	struct trace *t;
	struct heap_state *s;
	open_state(tp, 0, &t, &s);
	/* Node {next: ref 4, value: int}: value at 16, next at 20, end 24 */
	assert_int_equal(obj(s, O_N1)->size, 24);
	/* Sub adds {x: long, flag: boolean}: x at 24, flag at 32, end 33 -> 40 */
	assert_int_equal(obj(s, O_S1)->size, 40);
	assert_int_equal(obj(s, O_ARR)->size, 40);    /* 24 + 3 * 4 = 36 -> 40 */
	assert_int_equal(obj(s, O_BYTES)->size, 32);  /* 24 + 5 = 29 -> 32 */
	heap_state_free(s);
	trace_close(t);

	/* compressed class pointers: Node's int fills the gap after the
	 * 12-byte header: value at 12, next at 16, end 20 -> 24; Sub: x at
	 * 24, flag at 20 (the gap before x), end 32 */
	o.compressed_class_pointers = 1;
	assert_int_equal(hprof_import_with(dumps, 1, tp, &o, err, sizeof err), 0);
	open_state(tp, 0, &t, &s);
	assert_int_equal(obj(s, O_N1)->size, 24);
	assert_int_equal(obj(s, O_S1)->size, 32);
	assert_int_equal(obj(s, O_ARR)->size, 32);    /* 16 + 12 = 28 -> 32 */
	heap_state_free(s);
	trace_close(t);
}

/* ---- several dumps ---------------------------------------------------------------- */

/* A minimal dump: class x.Node (one int field) and x.Leaf (no field), and
 * the given objects (id, class). */
static void small_dump(const char *path, uint64_t time_ms, uint32_t n, const uint64_t (*objs)[2])
{
	struct hw w;
	hw_init(&w, "1.0.2", 8, time_ms);
	utf8(&w, 1, "x/Node");
	utf8(&w, 2, "value");
	utf8(&w, 3, "x/Leaf");
	load_class(&w, 1, C_NODE, 1);
	load_class(&w, 2, C_SUB, 3);
	rec_begin(&w, 0x1c);
	struct fdef f[] = { { 2, T_INT, 0 } };
	class_dump(&w, C_NODE, 0, 0, NULL, 1, f);
	class_dump(&w, C_SUB, 0, 0, NULL, 0, NULL);
	for (uint32_t i = 0; i < n; i++) {
		struct fdef v[] = { { 0, T_INT, i } };
		instance(&w, objs[i][0], 1, objs[i][1], objs[i][1] == C_NODE, v);
		root1(&w, 0xff, objs[i][0]);
	}
	rec_end(&w);
	rec_begin(&w, 0x2c);
	rec_end(&w);
	save(&w, path);
	buf_free(&w.b);
}

static int has_id(const struct heap_state *s, uint64_t oid)
{
	return heap_state_find(s, oid) != UINT32_MAX;
}

static void test_three_dumps(void **state)
{
	(void)state;
	char p0[256], p1[256], p2[256], tp[256], err[512] = "";
	path_in_dir(p0, sizeof p0, "d0.hprof");
	path_in_dir(p1, sizeof p1, "d1.hprof");
	path_in_dir(p2, sizeof p2, "d2.hprof");
	path_in_dir(tp, sizeof tp, "three.htr");
	/* dump 0: A, B, C; dump 1: A kept, B gone, C's address now holds a
	 * Leaf (a different object), D new; dump 2: B's old address reused by
	 * a new Node, D kept */
	const uint64_t d0[][2] = { { 0xA0, C_NODE }, { 0xB0, C_NODE }, { 0xC0, C_NODE } };
	const uint64_t d1[][2] = { { 0xA0, C_NODE }, { 0xC0, C_SUB }, { 0xD0, C_NODE } };
	const uint64_t d2[][2] = { { 0xA0, C_NODE }, { 0xB0, C_NODE }, { 0xD0, C_NODE } };
	small_dump(p0, 1000, 3, d0);
	small_dump(p1, 3000, 3, d1);
	small_dump(p2, 6000, 3, d2);
	const char *dumps[] = { p0, p1, p2 };
	assert_int_equal(hprof_import(dumps, 3, tp, NULL, err, sizeof err), 0);

	struct trace *t;
	struct heap_state *s;
	open_state(tp, 0, &t, &s);
	assert_int_equal(t->ngcs, 3);
	for (uint32_t g = 0; g < 3; g++) {
		assert_int_equal(t->gcs[g].gc, g);
		assert_true(t->gcs[g].flags & HTR_GC_HAS_GRAPH);
	}
	assert_int_equal(t->gcs[1].start_ns, 3000 * 1000000ull);
	assert_int_equal(t->gcs[2].start_ns, 6000 * 1000000ull);
	assert_int_equal(s->n, 3);
	assert_true(has_id(s, 0xA0) && has_id(s, 0xB0) && has_id(s, 0xC0));
	assert_int_equal(obj(s, 0xA0)->flags & HTR_ALLOC_PREEXISTING, HTR_ALLOC_PREEXISTING);
	heap_state_free(s);

	struct htr_err e;
	struct heap_build_opts bo = { 0 };
	assert_int_equal(heap_state_build(t, 1, &bo, &s, &e), 0);
	assert_int_equal(s->n, 3);
	assert_true(has_id(s, 0xA0) && has_id(s, 0xD0));
	assert_false(has_id(s, 0xB0));   /* died */
	assert_false(has_id(s, 0xC0));   /* the old C died; the Leaf got a fresh id */
	uint64_t leaf = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->id[i] != 0xA0 && s->id[i] != 0xD0)
			leaf = s->id[i];
	assert_true(leaf >= (1ull << 48));
	assert_int_equal(obj(s, leaf)->type, type_by_name(t, "x.Leaf"));
	assert_int_equal(s->birth[heap_state_find(s, 0xD0)], 0);     /* born after GC 0 */
	assert_int_equal(s->birth[heap_state_find(s, 0xA0)], HS_NO_BIRTH);
	assert_int_equal(t->gcs[1].deaths, 2);
	heap_state_free(s);

	assert_int_equal(heap_state_build(t, 2, &bo, &s, &e), 0);
	assert_int_equal(s->n, 3);
	assert_true(has_id(s, 0xA0) && has_id(s, 0xD0));
	assert_false(has_id(s, 0xB0));   /* 0xB0 was the dead B's id: the new Node is fresh */
	assert_false(has_id(s, leaf));
	uint64_t reborn = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->id[i] != 0xA0 && s->id[i] != 0xD0)
			reborn = s->id[i];
	assert_true(reborn >= (1ull << 48) && reborn != leaf);
	assert_int_equal(s->birth[heap_state_find(s, reborn)], 1);
	assert_int_equal(t->gcs[2].deaths, 1);
	heap_state_free(s);
	trace_close(t);
}

/* ---- damage and truncation -------------------------------------------------------- */

static void test_truncated_dump_imports_what_is_complete(void **state)
{
	(void)state;
	char hp[256], tp[256], err[512] = "";
	path_in_dir(hp, sizeof hp, "cut.hprof");
	path_in_dir(tp, sizeof tp, "cut.htr");
	struct scenario sc = { "1.0.2", 8, 1, 0, 1 };
	struct hw w;
	build(&w, &sc);
	/* cut inside the last object (O_UNK) and drop HEAP_DUMP_END: 9 bytes of
	 * record header, then 1 + 8 + 4 + 8 + 4 + 4 bytes of O_UNK */
	w.b.len -= 9 + 10;
	save(&w, hp);
	buf_free(&w.b);
	const char *dumps[] = { hp };
	assert_int_equal(hprof_import(dumps, 1, tp, NULL, err, sizeof err), 0);
	struct trace *t;
	struct heap_state *s;
	open_state(tp, 0, &t, &s);
	assert_int_equal(s->n, NOBJ - 1);
	assert_false(has_id(s, O_UNK));
	assert_true(has_id(s, O_THR));
	const char *msg = trace_info(t, "hprof.0.truncated");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "HEAP_DUMP_SEGMENT"));
	heap_state_free(s);
	trace_close(t);
}

/* 1 if a record of the dump data[0..len) starts at off, or off is its
 * end. */
static int record_boundary(const uint8_t *data, size_t len, size_t off)
{
	size_t at = 31;   /* "JAVA PROFILE 1.0.N\0", id size, time */
	while (at < off && at + 9 <= len) {
		const uint8_t *p = data + at + 5;
		at += 9 + ((size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]);
	}
	return at == off;
}

/* A dump cut at any byte is either refused (the header cut) or opens as a
 * truncated trace, directly and once imported: never as a whole one.  The
 * cuts that fall between two records are the ones a record-by-record
 * reader cannot see (before the heap dump record, after the last segment
 * without HEAP_DUMP_END; a dump of one HEAP_DUMP record ends with it, so
 * every cut of it is inside a record): all of them and the bytes beside
 * them are tried, and every 7th byte elsewhere (each import syncs its
 * trace to disk: every byte took 15 s).  31 bytes: the header, which
 * holds no record yet. */
static void cut_everywhere(const struct scenario *sc)
{
	char hp[256], tp[256], err[512];
	path_in_dir(hp, sizeof hp, "cutall.hprof");
	path_in_dir(tp, sizeof tp, "cutall.htr");
	struct hw w;
	build(&w, sc);
	size_t full = w.b.len;
	for (size_t len = 0; len <= full; len++) {
		if (len % 7 && !record_boundary(w.b.data, full, len) &&
		    !record_boundary(w.b.data, full, len + 1) &&
		    (len == 0 || !record_boundary(w.b.data, full, len - 1)))
			continue;
		w.b.len = len;
		save(&w, hp);
		const char *dumps[] = { hp };
		struct trace *t;
		struct htr_err e;
		struct trace_open_opts oo = { NULL };
		memset(&e, 0, sizeof e);
		if (trace_open(&t, hp, &oo, &e) == 0) {
			if (t->truncated != (len < full))
				fail_msg("dump cut at %zu of %zu bytes opens with truncated %d", len, full,
					 t->truncated);
			assert_int_equal(t->ngcs, 1);
			trace_close(t);
		} else if (len >= 31) {
			fail_msg("dump cut at %zu of %zu bytes refused: %s", len, full, e.msg);
		}
		if (hprof_import(dumps, 1, tp, NULL, err, sizeof err) != 0)
			continue;
		assert_int_equal(trace_open(&t, tp, &oo, &e), 0);
		if (t->truncated != (len < full))
			fail_msg("dump cut at %zu of %zu bytes imports with truncated %d", len, full,
				 t->truncated);
		assert_int_equal(t->truncated_dump, len < full);
		if (len < full)
			assert_non_null(trace_info(t, "hprof.0.truncated_at"));
		trace_close(t);
	}
	w.b.len = full;
	buf_free(&w.b);
}

static void test_dump_cut_anywhere_is_truncated(void **state)
{
	(void)state;
	struct scenario segmented = { "1.0.2", 8, 1, 0, 1 }, one_record = { "1.0.1", 4, 0, 0, 1 };
	cut_everywhere(&segmented);
	cut_everywhere(&one_record);
}

static void expect_refused(struct hw *w, const char *name, const char *needle1, const char *needle2)
{
	char hp[256], tp[256], err[512] = "";
	path_in_dir(hp, sizeof hp, name);
	path_in_dir(tp, sizeof tp, "refused.htr");
	save(w, hp);
	const char *dumps[] = { hp };
	int rc = hprof_import(dumps, 1, tp, NULL, err, sizeof err);
	assert_int_not_equal(rc, 0);
	if (!strstr(err, needle1) || !strstr(err, needle2))
		fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", err, needle1, needle2);
	assert_int_equal(access(tp, F_OK), -1);   /* no half-written trace */
}

static void test_damage_is_refused_with_tag_and_offset(void **state)
{
	(void)state;
	struct hw w;
	char off[64];

	/* an unknown sub-record tag */
	hw_init(&w, "1.0.2", 8, 1);
	utf8(&w, 1, "x/Node");
	rec_begin(&w, 0x1c);
	size_t rec_at = w.rec_len_at - 5;
	root1(&w, 0xff, 0x10);
	size_t bad_at = w.b.len;
	u1(&w, 0x42);
	id(&w, 0x20);
	rec_end(&w);
	snprintf(off, sizeof off, "offset %zu", bad_at);
	expect_refused(&w, "badtag.hprof", "0x42", off);
	snprintf(off, sizeof off, "at offset %zu", rec_at);
	expect_refused(&w, "badtag.hprof", "HEAP_DUMP_SEGMENT", off);
	buf_free(&w.b);

	/* a FRAME record too short for its fields */
	hw_init(&w, "1.0.2", 8, 1);
	size_t frame_at = w.b.len;
	rec_begin(&w, 0x04);
	u4(&w, 1);
	rec_end(&w);
	snprintf(off, sizeof off, "offset %zu", frame_at);
	expect_refused(&w, "shortframe.hprof", "FRAME", off);
	buf_free(&w.b);

	/* a sub-record running past the end of its (complete) record */
	hw_init(&w, "1.0.2", 8, 1);
	rec_begin(&w, 0x0c);
	prim_array(&w, 0x10, T_INT, 4, NULL);
	rec_end(&w);
	size_t len_at = w.rec_len_at;
	w.b.data[len_at + 3] -= 2;            /* the record now ends 2 bytes early */
	buf_putc(&w.b, 0x2c);                 /* so that the file does not end there */
	for (int i = 0; i < 8; i++)
		buf_putc(&w.b, 0);
	expect_refused(&w, "overrun.hprof", "PRIM_ARRAY_DUMP", "runs past the end of record HEAP_DUMP");
	buf_free(&w.b);

	/* a bad identifier size and a file that is not a dump */
	hw_init(&w, "1.0.2", 6, 1);
	expect_refused(&w, "idsize.hprof", "identifier size 6", "offset 19");
	buf_free(&w.b);
	buf_init(&w.b);
	assert_int_equal(buf_put(&w.b, "HEAPFSTR and more", 17), 0);
	expect_refused(&w, "notadump.hprof", "not an HPROF heap dump", "notadump.hprof");
	buf_free(&w.b);
}

static void test_is_dump_and_cli_usage(void **state)
{
	(void)state;
	char hp[256], tp[256];
	path_in_dir(hp, sizeof hp, "isdump.hprof");
	path_in_dir(tp, sizeof tp, "isdump.htr");
	struct scenario sc = { "1.0.2", 8, 1, 0, 1 };
	struct hw w;
	build(&w, &sc);
	save(&w, hp);
	buf_free(&w.b);
	assert_int_equal(hprof_is_dump(hp), 1);
	assert_int_equal(hprof_is_dump("/nonexistent/x.hprof"), 0);

	char *no_out[] = { "import", hp, NULL };
	assert_int_equal(hprof_import_cli_main(2, no_out), 2);
	char *no_dump[] = { "import", "-o", tp, NULL };
	assert_int_equal(hprof_import_cli_main(3, no_dump), 2);
	char *bad_opt[] = { "import", hp, "-o", tp, "--frobnicate", NULL };
	assert_int_equal(hprof_import_cli_main(5, bad_opt), 2);
	char *bad_layout[] = { "import", hp, "-o", tp, "--layout=jrockit", NULL };
	assert_int_equal(hprof_import_cli_main(5, bad_layout), 2);
	char *ok[] = { "import", "-q", hp, "-o", tp, "--layout=hotspot", NULL };
	assert_int_equal(hprof_import_cli_main(6, ok), 0);
	assert_int_equal(hprof_is_dump(tp), 0);
	char *missing[] = { "import", "-q", "/nonexistent/x.hprof", "-o", tp, NULL };
	assert_int_equal(hprof_import_cli_main(5, missing), 1);
}

/* ---- direct mounts: the heap state built from the dump ------------------------------ */

/* A dump for VisualVM's referent rule and the graph's corner cases: weak,
 * soft and a subclassed weak reference whose referents only referents
 * reach (dropped) or that are reachable otherwise (kept); an object array
 * longer than 65536 (slots with high bits), with a class among its
 * elements (no edge) and an id no object has (dangling); objects written
 * out of id order. */
enum {
	RS_OBJECT = 1, RS_REFERENCE, RS_WEAK, RS_SOFT, RS_MYREF, RS_OBJARR, RS_REFERENT, RS_EXTRA,
	RS_NODE, RS_NEXT,
};
enum {
	RC_OBJECT = 0x100, RC_REFERENCE = 0x108, RC_WEAK = 0x110, RC_SOFT = 0x118, RC_MYREF = 0x120,
	RC_OBJARR = 0x128, RC_NODE = 0x130,
};
enum {
	R_W1 = 0x2000, R_W2 = 0x2010, R_S1 = 0x2020, R_MY = 0x2030, R_LONELY = 0x2100,
	R_SHARED = 0x2110, R_SOFTONLY = 0x2120, R_CHAIN = 0x2130, R_N = 0x2140, R_NODE_D = 0x2150,
	R_BIG = 0x2200, R_DANGLING1 = 0xDEAD0, R_DANGLING2 = 0xBEEF0,
};
#define R_BIG_LEN 70000u
#define R_NOBJ 11u

/* fill > 0: that many more objects after those above, at ids from
 * R_FILL on: nodes pointing at each other (forward, backward, cycles, null,
 * dangling), weak references to some of them, objects of a class the dump
 * lacks, in several segments; a root holds the first.  Enough of them make
 * the first pass (model/hprof_scan.c) and the pass over the objects
 * (SPLIT_PASS_MIN in model/hprof.c) run on two threads. */
#define R_FILL 0x1000000u
#define R_FILL_DANGLING 0x70000000u

static void fill_objects(struct hw *w, uint32_t fill)
{
	for (uint32_t k = 0; k < fill; k++) {
		if (k % 50000 == 49999) {
			/* a new segment, which starts with a root, a class dumped
			 * again (the first dump counts) and 9 MB of bytes: the
			 * first pass collects the objects of segments over 32 MB
			 * on several threads, the other sub-records in file order */
			rec_end(w);
			rec_begin(w, 0x1c);
			root1(w, 0xff, R_FILL + 16ull * (k / 3));
			class_dump(w, RC_NODE, RC_OBJECT, 0, NULL, 0, NULL);
			prim_array(w, R_FILL + 16ull * (fill + k), T_BYTE, 9u << 20, NULL);
		}
		struct fdef v = { 0, T_OBJ, R_FILL + 16ull * (uint32_t)(k * 2654435761u % fill) };
		if (k % 5 == 0)
			v.value = 0;
		else if (k % 97 == 0)
			v.value = R_FILL_DANGLING + 16ull * k;
		uint64_t oid = R_FILL + 16ull * k;
		if (k % 1000 == 1)
			instance(w, oid, 1, 0x999, 1, &v);   /* no such class */
		else
			instance(w, oid, 1, k % 7 == 3 ? RC_WEAK : RC_NODE, 1, &v);
	}
}

static void referents_dump(const char *path, uint32_t ids, uint32_t fill)
{
	struct hw w;
	hw_init(&w, "1.0.2", ids, 1234);
	static const char *const names[] = {
		[RS_OBJECT] = "java/lang/Object", [RS_REFERENCE] = "java/lang/ref/Reference",
		[RS_WEAK] = "java/lang/ref/WeakReference", [RS_SOFT] = "java/lang/ref/SoftReference",
		[RS_MYREF] = "x/MyRef", [RS_OBJARR] = "[Ljava/lang/Object;", [RS_REFERENT] = "referent",
		[RS_EXTRA] = "extra", [RS_NODE] = "x/Node", [RS_NEXT] = "next",
	};
	for (uint32_t i = 1; i < sizeof names / sizeof names[0]; i++)
		utf8(&w, i, names[i]);
	static const uint64_t lc[][2] = {
		{ RC_OBJECT, RS_OBJECT }, { RC_REFERENCE, RS_REFERENCE }, { RC_WEAK, RS_WEAK },
		{ RC_SOFT, RS_SOFT }, { RC_MYREF, RS_MYREF }, { RC_OBJARR, RS_OBJARR }, { RC_NODE, RS_NODE },
	};
	for (uint32_t i = 0; i < sizeof lc / sizeof lc[0]; i++)
		load_class(&w, i + 1, lc[i][0], lc[i][1]);
	rec_begin(&w, 0x1c);
	struct fdef referent_f[] = { { RS_REFERENT, T_OBJ, 0 } };
	struct fdef extra_f[] = { { RS_EXTRA, T_OBJ, 0 } };
	struct fdef next_f[] = { { RS_NEXT, T_OBJ, 0 } };
	class_dump(&w, RC_OBJECT, 0, 0, NULL, 0, NULL);
	class_dump(&w, RC_REFERENCE, RC_OBJECT, 0, NULL, 1, referent_f);
	class_dump(&w, RC_WEAK, RC_REFERENCE, 0, NULL, 0, NULL);
	class_dump(&w, RC_SOFT, RC_REFERENCE, 0, NULL, 0, NULL);
	class_dump(&w, RC_MYREF, RC_WEAK, 0, NULL, 1, extra_f);
	class_dump(&w, RC_OBJARR, RC_OBJECT, 0, NULL, 0, NULL);
	class_dump(&w, RC_NODE, RC_OBJECT, 0, NULL, 1, next_f);
	root1(&w, 0xff, R_BIG);
	root1(&w, 0xff, R_NODE_D);
	uint64_t jni[] = { R_W1, R_W2, R_S1, R_MY };
	for (uint32_t i = 0; i < 4; i++) {
		root1(&w, 0x01, jni[i]);
		id(&w, 0x7000 + i);
	}
	if (fill)
		root1(&w, 0xff, R_FILL);
	rec_end(&w);
	rec_begin(&w, 0x1c);
	/* the array first: the file is not in id order */
	uint64_t *big = calloc(R_BIG_LEN, sizeof *big);
	assert_non_null(big);
	big[3] = R_SHARED;
	big[10] = RC_NODE;          /* a class: not an edge */
	big[65541] = R_N;           /* slot 65541: high bits 1 */
	big[R_BIG_LEN - 1] = R_DANGLING1;
	obj_array(&w, R_BIG, RC_OBJARR, R_BIG_LEN, big);
	free(big);
	struct fdef v[2];
	v[0] = (struct fdef){ 0, T_OBJ, R_LONELY };
	instance(&w, R_W1, 1, RC_WEAK, 1, v);
	v[0].value = R_SHARED;
	instance(&w, R_W2, 1, RC_WEAK, 1, v);
	v[0].value = R_SOFTONLY;
	instance(&w, R_S1, 1, RC_SOFT, 1, v);
	v[0] = (struct fdef){ 0, T_OBJ, R_N };      /* own field first: extra */
	v[1] = (struct fdef){ 0, T_OBJ, R_LONELY }; /* then Reference's: referent */
	instance(&w, R_MY, 1, RC_MYREF, 2, v);
	v[0] = (struct fdef){ 0, T_OBJ, 0 };
	instance(&w, R_LONELY, 1, RC_NODE, 1, v);
	instance(&w, R_SHARED, 1, RC_NODE, 1, v);
	instance(&w, R_CHAIN, 1, RC_NODE, 1, v);
	instance(&w, R_N, 1, RC_NODE, 1, v);
	v[0].value = R_CHAIN;
	instance(&w, R_SOFTONLY, 1, RC_NODE, 1, v);
	v[0].value = R_DANGLING2;
	instance(&w, R_NODE_D, 1, RC_NODE, 1, v);
	fill_objects(&w, fill);
	rec_end(&w);
	rec_begin(&w, 0x2c);
	rec_end(&w);
	save(&w, path);
	buf_free(&w.b);
}

/* Every column of two states, as the analyses read them. */
static void expect_same_state(const struct heap_state *a, const struct heap_state *b)
{
	assert_int_equal(a->gc_index, b->gc_index);
	assert_int_equal(a->gc, b->gc);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->total_bytes, b->total_bytes);
	assert_int_equal(a->ninfos, b->ninfos);
	for (uint32_t i = 0; i < a->n; i++) {
		assert_int_equal(a->id[i], b->id[i]);
		assert_int_equal(a->info[i], b->info[i]);
		assert_int_equal(a->birth[i], b->birth[i]);
	}
	for (uint32_t k = 0; k < a->ninfos; k++) {
		const struct objinfo *x = &a->infos[k], *y = &b->infos[k];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->site, y->site);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->array_length, y->array_length);
	}
	assert_int_equal(a->has_graph, b->has_graph);
	assert_int_equal(a->nedges, b->nedges);
	for (uint32_t i = 0; i <= a->n; i++) {
		assert_int_equal(a->out_off[i], b->out_off[i]);
		assert_int_equal(a->in_off[i], b->in_off[i]);
	}
	for (uint32_t i = 0; i < a->n; i++)
		for (uint64_t e = a->out_off[i]; e < a->out_off[i + 1]; e++) {
			assert_int_equal(a->out_tgt[e], b->out_tgt[e]);
			assert_int_equal(hs_ref_slot(a, i, e), hs_ref_slot(b, i, e));
		}
	for (uint64_t e = 0; e < a->nedges; e++) {
		assert_int_equal(a->out_slot[e], b->out_slot[e]);
		assert_int_equal(a->in_src[e], b->in_src[e]);
	}
	assert_int_equal(a->nslot_hi, b->nslot_hi);
	for (uint32_t k = 0; k < a->nslot_hi; k++) {
		assert_int_equal(a->slot_hi_edge[k], b->slot_hi_edge[k]);
		assert_int_equal(a->slot_hi[k], b->slot_hi[k]);
	}
	assert_int_equal(a->nroots, b->nroots);
	for (uint32_t r = 0; r < a->nroots; r++) {
		const struct hs_root *x = &a->roots[r], *y = &b->roots[r];
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->object, y->object);
		assert_int_equal(x->thread, y->thread);
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->field, y->field);
		assert_int_equal(x->method, y->method);
		assert_int_equal(x->depth, y->depth);
		assert_int_equal(x->slot, y->slot);
	}
	assert_int_equal(a->nreachable, b->nreachable);
	assert_int_equal(a->reachable_bytes, b->reachable_bytes);
	for (uint32_t i = 0; i < a->n; i++)
		assert_int_equal(hs_is_reachable(a, i), hs_is_reachable(b, i));
	assert_int_equal(a->unknown_objects, b->unknown_objects);
	assert_int_equal(a->dangling_refs, b->dangling_refs);
	assert_int_equal(a->dropped_roots, b->dropped_roots);
	for (uint32_t i = 0; i < a->n; i++)
		assert_int_equal(heap_state_find(a, a->id[i]), i);
	assert_int_equal(heap_state_memory(a), heap_state_memory(b));
}

/* The dump opened directly (its state built from the dump) against the
 * same dump imported into a trace and rebuilt from the trace's events;
 * heap_state_build() on the direct trace gives a copy of that state (its
 * temporary trace has no graph records to rebuild it from), and so does
 * heap_state_copy. */
static void expect_direct_equals_trace(const char *dump, enum hprof_layout layout)
{
	char tp[256], err[512] = "";
	path_in_dir(tp, sizeof tp, "direct.htr");
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	o.layout = layout;
	const char *dumps[] = { dump };
	if (hprof_import_with(dumps, 1, tp, &o, err, sizeof err))
		fail_msg("import: %s", err);
	struct trace *t, *direct;
	struct heap_state *s, *rebuilt;
	open_state(tp, 0, &t, &s);

	struct htr_err e;
	struct trace_open_opts oo = { .hprof_layout = layout };
	if (trace_open(&direct, dump, &oo, &e))
		fail_msg("trace_open of the dump: %s", e.msg);
	assert_non_null(direct->prebuilt);
	assert_int_equal(direct->ngcs, 1);
	assert_int_equal(direct->ntypes, t->ntypes);
	assert_int_equal(direct->nthreads, t->nthreads);
	assert_int_equal(direct->total_allocs, t->total_allocs);
	expect_same_state(direct->prebuilt, s);
	struct heap_build_opts bo = { 0 };
	if (heap_state_build(direct, 0, &bo, &rebuilt, &e))
		fail_msg("heap_state_build on the direct trace: %s", e.msg);
	assert_ptr_not_equal(rebuilt->id, direct->prebuilt->id);
	expect_same_state(rebuilt, s);
	heap_state_free(rebuilt);
	struct heap_state *copy = NULL;
	assert_int_equal(heap_state_copy(direct->prebuilt, &copy), 0);
	assert_ptr_not_equal(copy->id, direct->prebuilt->id);
	expect_same_state(copy, s);
	heap_state_free(copy);
	heap_state_free(s);
	trace_close(direct);
	trace_close(t);
}

static void test_direct_state_equals_trace(void **state)
{
	(void)state;
	static const struct scenario scs[] = {
		{ "1.0.2", 8, 1, 0, 1700000000123ull }, { "1.0.1", 4, 0, 0, 5000 }, { "1.0.2", 8, 1, 1, 77 },
	};
	char hp[256];
	for (size_t i = 0; i < sizeof scs / sizeof scs[0]; i++) {
		struct hw w;
		path_in_dir(hp, sizeof hp, "direct-scenario.hprof");
		build(&w, &scs[i]);
		save(&w, hp);
		buf_free(&w.b);
		expect_direct_equals_trace(hp, HPROF_LAYOUT_VISUALVM);
		expect_direct_equals_trace(hp, HPROF_LAYOUT_HOTSPOT);
	}
	/* a dump cut off inside its last object */
	struct hw w;
	build(&w, &scs[0]);
	w.b.len -= 9 + 10;
	path_in_dir(hp, sizeof hp, "direct-cut.hprof");
	save(&w, hp);
	buf_free(&w.b);
	expect_direct_equals_trace(hp, HPROF_LAYOUT_VISUALVM);
	/* referents, long arrays, dangling references; both id sizes */
	path_in_dir(hp, sizeof hp, "referents-8.hprof");
	referents_dump(hp, 8, 0);
	expect_direct_equals_trace(hp, HPROF_LAYOUT_VISUALVM);
	path_in_dir(hp, sizeof hp, "referents-4.hprof");
	referents_dump(hp, 4, 0);
	expect_direct_equals_trace(hp, HPROF_LAYOUT_VISUALVM);
}

static void read_whole(const char *path, struct buf *out)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char chunk[65536];
	size_t k;
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		assert_int_equal(buf_put(out, chunk, k), 0);
	fclose(f);
}

/* The first pass's objects collected on two threads, and the pass over
 * the objects on two (the graph on one, the allocations and properties on
 * the other), build what they build on one: the direct state column by
 * column, and an imported trace byte for byte. */
static void test_pass_on_two_threads(void **state)
{
	(void)state;
	char hp[256], tp[2][256], err[512] = "";
	path_in_dir(hp, sizeof hp, "two-threads.hprof");
	referents_dump(hp, 8, 400000);   /* past SPLIT_AHEAD: the faster side waits */
	struct trace *direct[2];
	struct buf bytes[2] = { { 0 }, { 0 } };
	for (uint32_t k = 0; k < 2; k++) {
		struct htr_err e;
		struct trace_open_opts oo = { .threads = k + 1 };
		if (trace_open(&direct[k], hp, &oo, &e))
			fail_msg("trace_open of the dump at %u threads: %s", k + 1, e.msg);
		assert_non_null(direct[k]->prebuilt);
		assert_true(direct[k]->prebuilt->n > 400000);
		struct hprof_import_opts o;
		hprof_import_opts_init(&o);
		o.threads = k + 1;
		path_in_dir(tp[k], sizeof tp[k], k ? "two-threads-2.htr" : "two-threads-1.htr");
		const char *dumps[] = { hp };
		if (hprof_import_with(dumps, 1, tp[k], &o, err, sizeof err))
			fail_msg("import at %u threads: %s", k + 1, err);
		read_whole(tp[k], &bytes[k]);
	}
	expect_same_state(direct[0]->prebuilt, direct[1]->prebuilt);
	assert_int_equal(direct[0]->total_allocs, direct[1]->total_allocs);
	assert_int_equal(bytes[0].len, bytes[1].len);
	assert_memory_equal(bytes[0].data, bytes[1].data, bytes[0].len);
	/* and the trace rebuilds the direct state */
	struct trace *t;
	struct heap_state *s;
	open_state(tp[1], 0, &t, &s);
	expect_same_state(direct[1]->prebuilt, s);
	heap_state_free(s);
	trace_close(t);
	for (uint32_t k = 0; k < 2; k++) {
		trace_close(direct[k]);
		buf_free(&bytes[k]);
	}
}

/* VisualVM's referent rule and the graph's corner cases, from the
 * construction of referents_dump, on the direct state (equal to the
 * trace's by test_direct_state_equals_trace). */
static void test_referents_and_long_arrays(void **state)
{
	(void)state;
	char hp[256];
	path_in_dir(hp, sizeof hp, "referents.hprof");
	referents_dump(hp, 8, 0);
	struct trace *t;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, hp, &oo, &e))
		fail_msg("trace_open: %s", e.msg);
	const struct heap_state *s = t->prebuilt;
	assert_non_null(s);
	assert_int_equal(s->n, R_NOBJ);
	/* referents whose target only referents reach are not edges */
	assert_false(has_edge(s, R_W1, 0, R_LONELY));
	assert_false(has_edge(s, R_S1, 0, R_SOFTONLY));
	assert_false(has_edge(s, R_MY, 0, R_LONELY));
	assert_string_equal(trace_info(t, "hprof.0.referents_dropped"), "3");
	/* a referent to an object reachable otherwise stays (shared owner) */
	assert_true(has_edge(s, R_W2, 0, R_SHARED));
	assert_true(has_edge(s, R_MY, 1, R_N));      /* MyRef.extra: flattened after referent */
	assert_int_equal(out_degree(s, R_MY), 1);
	assert_true(has_edge(s, R_SOFTONLY, 0, R_CHAIN));
	/* the long array: slots past 65535, a class and a dangling id */
	assert_true(has_edge(s, R_BIG, 3, R_SHARED));
	assert_true(has_edge(s, R_BIG, 65541, R_N));
	assert_int_equal(out_degree(s, R_BIG), 2);
	assert_string_equal(trace_info(t, "hprof.0.refs_to_classes"), "1");
	assert_int_equal(s->dangling_refs, 2);       /* R_DANGLING1 and R_DANGLING2 */
	assert_int_equal(s->nedges, 5);              /* W2, MY.extra, SOFTONLY.next, BIG[3], BIG[65541] */
	/* reachable: the roots and what they reach without referents */
	assert_int_equal(s->nreachable, 8);
	assert_false(hs_is_reachable(s, heap_state_find(s, R_LONELY)));
	assert_false(hs_is_reachable(s, heap_state_find(s, R_SOFTONLY)));
	assert_false(hs_is_reachable(s, heap_state_find(s, R_CHAIN)));
	assert_true(hs_is_reachable(s, heap_state_find(s, R_SHARED)));
	assert_int_equal(obj(s, R_BIG)->size, align8(16 + 4 + R_BIG_LEN * 8));
	assert_int_equal(obj(s, R_BIG)->array_length, R_BIG_LEN);
	trace_close(t);
}

/* The state cache serves a directly opened dump's state as it is: no
 * rebuild, and it is not the cache's to free (ASan would catch a double
 * free at trace_close). */
static void test_state_cache_serves_prebuilt(void **state)
{
	(void)state;
	char hp[256];
	path_in_dir(hp, sizeof hp, "cache.hprof");
	referents_dump(hp, 8, 0);
	struct trace *t;
	struct htr_err e;
	struct trace_open_opts oo = { NULL };
	if (trace_open(&t, hp, &oo, &e))
		fail_msg("trace_open: %s", e.msg);
	struct state_cache *c;
	assert_int_equal(state_cache_new(&c, t, 1, 0), 0);   /* a 1-byte budget */
	const struct heap_state *s = NULL;
	assert_int_equal(state_cache_get(c, 0, &s, &e), 0);
	assert_ptr_equal(s, t->prebuilt);
	state_cache_put(c, s);
	struct state_cache_stats st;
	state_cache_stats(c, &st);
	assert_int_equal(st.builds, 0);
	assert_int_equal(st.evictions, 0);
	state_cache_free(c);
	trace_close(t);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segmented_8byte_ids),
		cmocka_unit_test(test_heap_dump_4byte_ids_v101),
		cmocka_unit_test(test_compressed_oops_guess),
		cmocka_unit_test(test_hotspot_layout),
		cmocka_unit_test(test_three_dumps),
		cmocka_unit_test(test_truncated_dump_imports_what_is_complete),
		cmocka_unit_test(test_dump_cut_anywhere_is_truncated),
		cmocka_unit_test(test_damage_is_refused_with_tag_and_offset),
		cmocka_unit_test(test_is_dump_and_cli_usage),
		cmocka_unit_test(test_direct_state_equals_trace),
		cmocka_unit_test(test_referents_and_long_arrays),
		cmocka_unit_test(test_state_cache_serves_prebuilt),
		cmocka_unit_test(test_pass_on_two_threads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

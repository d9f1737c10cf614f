/* test_synth.c - `heapfs synth`: every scenario's trace read back through
 * the model (trace_open + heap_state_build), checked against the counts of
 * the scenario's construction (docs/scenarios.md), worked out here by hand
 * or with small independent loops; plus determinism and the error paths.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "model/heap_state.h"
#include "model/synth.h"
#include "model/trace.h"

#define MS 1000000ull

static char dir[] = "/tmp/heapfs-test-synth-XXXXXX";

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* Baseline objects of every scenario with T threads (docs/scenarios.md). */
#define BASE_OBJECTS(T) (3 * (T) + 1 + 3 + 1)

/* ------------------------------------------------------------- helpers */

static void write_trace(const char *scenario, uint64_t n, uint32_t g, uint64_t seed,
			const char *path)
{
	struct synth_opts o;
	char err[512] = "";
	synth_opts_init(&o);
	o.objects = n;
	o.gcs = g;
	o.seed = seed;
	int rc = synth_write(scenario, &o, path, err, sizeof(err));
	if (rc)
		fail_msg("synth_write %s: %d %s", scenario, rc, err);
}

static struct trace *open_trace(const char *path)
{
	struct trace *t = NULL;
	struct htr_err err;
	int rc = trace_open(&t, path, NULL, &err);
	if (rc)
		fail_msg("trace_open %s: %s", path, err.msg);
	return t;
}

static struct heap_state *state_at(const struct trace *t, uint32_t gc_index)
{
	struct heap_state *s = NULL;
	struct htr_err err;
	int rc = heap_state_build(t, gc_index, NULL, &s, &err);
	if (rc)
		fail_msg("heap_state_build gc index %u: %s", gc_index, err.msg);
	return s;
}

static uint32_t type_id(const struct trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->ntypes; i++)
		if (t->types[i].name && !strcmp(t->types[i].name, name))
			return i;
	return UINT32_MAX;
}

static const char *obj_type(const struct trace *t, const struct heap_state *s, uint32_t i)
{
	uint32_t ty = hs_info(s, i)->type;
	return ty < t->ntypes && t->types[ty].name ? t->types[ty].name : "?";
}

static uint64_t count_type(const struct trace *t, const struct heap_state *s, const char *name)
{
	uint64_t c = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(obj_type(t, s, i), name))
			c++;
	return c;
}

/* Objects of a type whose array length is len. */
static uint64_t count_type_len(const struct trace *t, const struct heap_state *s, const char *name,
			       int64_t len)
{
	uint64_t c = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(obj_type(t, s, i), name) && hs_info(s, i)->array_length == len)
			c++;
	return c;
}

/* Index of the field named name in type ty's field list. */
static uint32_t field_index(const struct trace *t, uint32_t ty, const char *name)
{
	const struct trace_type *tt = &t->types[ty];
	for (uint32_t f = 0; f < tt->nfields; f++)
		if (!strcmp(tt->fields[f].name, name))
			return f;
	fail_msg("type %s has no field %s", tt->name, name);
	return UINT32_MAX;
}

/* Target of object i's reference in slot, or UINT32_MAX. */
static uint32_t ref_at(const struct heap_state *s, uint32_t i, uint32_t slot)
{
	for (uint64_t e = s->out_off[i]; e < s->out_off[i + 1]; e++)
		if (hs_ref_slot(s, i, e) == slot)
			return s->out_tgt[e];
	return UINT32_MAX;
}

/* Name of the allocation site's innermost frame and its line. */
static void site_top(const struct trace *t, const struct heap_state *s, uint32_t i,
		     const char **method, int32_t *line)
{
	uint32_t site = hs_info(s, i)->site;
	assert_true(site < t->nsites && t->sites[site].nframes > 0);
	const struct htr_site_frame *f = &t->sites[site].frames[0];
	*method = t->methods[f->method].name;
	*line = f->line;
}

/* Every GC: graph present, every live object reachable, nothing unknown. */
static void check_graph_complete(const struct trace *t)
{
	for (uint32_t gi = 0; gi < t->ngcs; gi++) {
		assert_true(t->gcs[gi].flags & HTR_GC_HAS_GRAPH);
		struct heap_state *s = state_at(t, gi);
		assert_true(s->has_graph);
		assert_int_equal(s->unknown_objects, 0);
		assert_int_equal(s->nreachable, s->n);
		assert_int_equal(s->total_bytes, t->gcs[gi].used_after);
		heap_state_free(s);
	}
}

static void check_baseline(const struct trace *t, const struct heap_state *s, uint32_t threads)
{
	assert_int_equal(count_type(t, s, "java.lang.Thread"), threads);
	assert_int_equal(count_type(t, s, "java.lang.Class"), 3);
	assert_int_equal(count_type(t, s, "java.lang.String[]"), 1);
	assert_int_equal(t->nthreads, threads);
}

/* ---------------------------------------------------------- multicache */

/* -n 1000 -g 5: GC k holds the first 200k Products. */
static void test_multicache_counts(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "mc.htr");
	write_trace("multicache", 1000, 5, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 5);
	/* table length: smallest power of two >= 16 whose 3/4 holds P */
	static const uint64_t products[] = { 200, 400, 600, 800, 1000 };
	static const int64_t table[] = { 512, 1024, 1024, 2048, 2048 };
	for (uint32_t gi = 0; gi < 5; gi++) {
		struct heap_state *s = state_at(t, gi);
		uint64_t p = products[gi];
		assert_int_equal(t->gcs[gi].gc, gi + 1);
		assert_int_equal(count_type(t, s, "example.multicache.Product"), p);
		assert_int_equal(count_type(t, s, "java.lang.Long"), p);
		assert_int_equal(count_type(t, s, "int[]"), p);
		assert_int_equal(count_type(t, s, "java.util.HashMap$Node"), 2 * p);
		assert_int_equal(count_type(t, s, "java.lang.String"), p + 3);
		assert_int_equal(count_type(t, s, "byte[]"), p + 3);
		assert_int_equal(count_type(t, s, "java.util.HashMap"), 2);
		assert_int_equal(count_type(t, s, "java.util.HashMap$Node[]"), 2);
		assert_int_equal(count_type_len(t, s, "java.util.HashMap$Node[]", table[gi]), 2);
		assert_int_equal(count_type(t, s, "example.multicache.Loader"), 2);
		assert_int_equal(count_type(t, s, "java.lang.StringBuilder"), 0);
		assert_int_equal(s->n, 7 * p + 6 + BASE_OBJECTS(3));
		check_baseline(t, s, 3);
		heap_state_free(s);
	}
	assert_string_equal(t->gcs[4].cause, "System.gc()");
	assert_true(t->gcs[4].flags & HTR_GC_FULL);
	assert_string_equal(t->gcs[0].cause, "G1 Evacuation Pause");
	assert_false(t->gcs[0].flags & HTR_GC_FULL);
	/* GC 1 frees 200 StringBuilders, their 200 byte[24] and the tables
	 * 16..256 of both maps (5 each) */
	assert_int_equal(t->gcs[0].deaths, 200 + 200 + 2 * 5);
	check_graph_complete(t);
	trace_close(t);
}

/* Products are held by exactly two HashMap$Nodes, one per static cache. */
static void test_multicache_ownership(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "mc-own.htr");
	write_trace("multicache", 1000, 5, 7, path);
	struct trace *t = open_trace(path);
	struct heap_state *s = state_at(t, t->ngcs - 1);
	uint32_t t_node = type_id(t, "java.util.HashMap$Node");
	uint32_t f_key = field_index(t, t_node, "key"), f_value = field_index(t, t_node, "value");
	uint64_t products = 0, long_keys = 0, string_keys = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const char *ty = obj_type(t, s, i);
		if (!strcmp(ty, "example.multicache.Product")) {
			products++;
			assert_int_equal(s->in_off[i + 1] - s->in_off[i], 2);
			for (uint32_t e = s->in_off[i]; e < s->in_off[i + 1]; e++)
				assert_string_equal(obj_type(t, s, s->in_src[e]), "java.util.HashMap$Node");
		} else if (!strcmp(ty, "java.util.HashMap$Node")) {
			uint32_t k = ref_at(s, i, f_key), v = ref_at(s, i, f_value);
			assert_true(k != UINT32_MAX && v != UINT32_MAX);
			assert_string_equal(obj_type(t, s, v), "example.multicache.Product");
			if (!strcmp(obj_type(t, s, k), "java.lang.Long"))
				long_keys++;
			else if (!strcmp(obj_type(t, s, k), "java.lang.String"))
				string_keys++;
		}
	}
	assert_int_equal(products, 1000);
	assert_int_equal(long_keys, 1000);
	assert_int_equal(string_keys, 1000);

	/* two static roots: IdCache.byId and NameCache.byName, both HashMaps */
	uint32_t statics = 0, by_id = UINT32_MAX;
	for (uint32_t r = 0; r < s->nroots; r++) {
		const struct hs_root *root = &s->roots[r];
		if (root->kind != HTR_ROOT_STATIC)
			continue;
		statics++;
		assert_string_equal(obj_type(t, s, root->object), "java.util.HashMap");
		const struct trace_type *cls = &t->types[root->type];
		const char *field = cls->fields[root->field].name;
		assert_true(cls->fields[root->field].flags & HTR_FIELD_STATIC);
		if (!strcmp(cls->name, "example.multicache.IdCache")) {
			assert_string_equal(field, "byId");
			by_id = root->object;
		} else {
			assert_string_equal(cls->name, "example.multicache.NameCache");
			assert_string_equal(field, "byName");
		}
	}
	assert_int_equal(statics, 2);
	assert_true(by_id != UINT32_MAX);

	/* Bucket placement follows Long.hashCode and HashMap.hash: keys
	 * 1000000..1000999 in a 2048 table land in distinct buckets
	 * (v ^ (v >>> 16)) & 2047, computed here independently. */
	uint32_t t_map = type_id(t, "java.util.HashMap");
	uint32_t table = ref_at(s, by_id, field_index(t, t_map, "table"));
	assert_true(table != UINT32_MAX);
	assert_int_equal(hs_info(s, table)->array_length, 2048);
	char *expect = calloc(2048, 1);
	assert_non_null(expect);
	for (uint32_t v = 1000000; v < 1001000; v++)
		expect[(v ^ (v >> 16)) & 2047] = 1;
	uint32_t used = 0;
	for (uint64_t e = s->out_off[table]; e < s->out_off[table + 1]; e++) {
		uint32_t slot = hs_ref_slot(s, table, e);
		assert_true(slot < 2048 && expect[slot]);
		used++;
	}
	assert_int_equal(used, 1000);
	free(expect);
	heap_state_free(s);
	trace_close(t);
}

/* HotSpot compressed-oops shallow sizes of the JDK types. */
static void test_jdk_type_sizes(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "sizes.htr");
	write_trace("company", 8, 1, 1, path);
	struct trace *t = open_trace(path);
	static const struct { const char *name; uint32_t size; } want[] = {
		{ "java.util.HashMap", 48 }, { "java.util.HashMap$Node", 32 },
		{ "java.lang.String", 24 }, { "java.util.ArrayList", 24 },
		{ "java.util.LinkedList", 32 }, { "java.util.LinkedList$Node", 24 },
		{ "java.util.HashSet", 16 }, { "java.lang.Object", 16 },
		{ "java.lang.StringBuilder", 24 }, { "example.company.Employee", 24 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t ty = type_id(t, want[i].name);
		assert_true(ty != UINT32_MAX);
		assert_int_equal(t->types[ty].instance_size, want[i].size);
	}
	/* HashMap's fields: inherited AbstractMap fields first, statics last */
	uint32_t hm = type_id(t, "java.util.HashMap");
	assert_string_equal(t->types[hm].fields[0].name, "keySet");
	assert_string_equal(t->types[hm].fields[2].name, "table");
	assert_true(t->types[hm].fields[2].flags & HTR_FIELD_REF);
	assert_true(t->types[hm].fields[t->types[hm].nfields - 1].flags & HTR_FIELD_STATIC);
	uint32_t bytes = type_id(t, "byte[]");
	assert_int_equal(t->types[bytes].kind, HTR_TYPE_PRIM_ARRAY);
	assert_int_equal(t->types[bytes].elem_size, 1);
	trace_close(t);

	path_in_dir(path, sizeof(path), "sizes2.htr");
	write_trace("churn", 100, 3, 1, path);
	t = open_trace(path);
	assert_int_equal(t->types[type_id(t, "java.lang.Integer")].instance_size, 16);
	trace_close(t);
	path_in_dir(path, sizeof(path), "sizes3.htr");
	write_trace("multicache", 10, 1, 1, path);
	t = open_trace(path);
	assert_int_equal(t->types[type_id(t, "java.lang.Long")].instance_size, 24);
	assert_int_equal(t->types[type_id(t, "example.multicache.Product")].instance_size, 32);
	trace_close(t);
}

/* ---------------------------------------------------------- buggystack */

/* -n 1000 -g 4: M = 100, 2200 operations; GCs after operations 550, 1100,
 * 1650, 2200.  Capacities 16, 33, 67, 135, 271, 543, 1087. */
static void test_buggystack_counts(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "bs.htr");
	write_trace("buggystack", 1000, 4, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 4);
	static const uint64_t live[] = { 550, 1000, 1000, 1000 };
	struct heap_state *prev = NULL;
	for (uint32_t gi = 0; gi < 4; gi++) {
		struct heap_state *s = state_at(t, gi);
		assert_int_equal(count_type(t, s, "example.buggystack.TestObject"), live[gi]);
		assert_int_equal(count_type(t, s, "example.buggystack.BuggyStack"), 1);
		assert_int_equal(count_type(t, s, "java.lang.Object[]"), 1);
		assert_int_equal(count_type_len(t, s, "java.lang.Object[]", 1087), 1);
		assert_int_equal(s->n, live[gi] + 2 + BASE_OBJECTS(1));
		check_baseline(t, s, 1);
		heap_state_free(prev);
		prev = s;
	}
	/* at the end: 900 from the first round (line 43), 100 from the second
	 * (line 137), each held only by the stack's Object[] */
	uint64_t first = 0, second = 0;
	for (uint32_t i = 0; i < prev->n; i++) {
		if (strcmp(obj_type(t, prev, i), "example.buggystack.TestObject"))
			continue;
		const char *m;
		int32_t line;
		site_top(t, prev, i, &m, &line);
		assert_string_equal(m, "main");
		if (line == 43)
			first++;
		else if (line == 137)
			second++;
		assert_int_equal(prev->in_off[i + 1] - prev->in_off[i], 1);
		assert_string_equal(obj_type(t, prev, prev->in_src[prev->in_off[i]]), "java.lang.Object[]");
	}
	assert_int_equal(first, 900);
	assert_int_equal(second, 100);
	/* the second round's 100 pushes overwrote 100 slots between GC 3 and 4 */
	assert_int_equal(t->gcs[3].deaths, 100);
	/* the stack is a local of main: slot 1 of BuggyMain.main */
	int found = 0;
	for (uint32_t r = 0; r < prev->nroots; r++)
		if (prev->roots[r].kind == HTR_ROOT_LOCAL && prev->roots[r].slot == 1) {
			assert_string_equal(obj_type(t, prev, prev->roots[r].object),
					    "example.buggystack.BuggyStack");
			found = 1;
		}
	assert_true(found);
	heap_state_free(prev);
	check_graph_complete(t);
	trace_close(t);
}

/* ------------------------------------------------------------- company */

/* -n 12: D = 3 departments of 4 employees each. */
static void test_company_counts(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "co.htr");
	write_trace("company", 12, 2, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 2);
	struct heap_state *s = state_at(t, 1);
	static const struct { const char *type; uint64_t n; } want[] = {
		{ "example.company.Company", 1 }, { "java.util.ArrayList", 1 },
		{ "java.lang.Object[]", 1 }, { "java.util.LinkedList", 1 },
		{ "java.util.LinkedList$Node", 12 }, { "example.company.Department", 3 },
		{ "java.util.HashSet", 3 }, { "java.util.HashMap", 3 },
		{ "java.util.HashMap$Node", 12 }, { "java.util.HashMap$Node[]", 3 },
		{ "example.company.Employee", 12 }, { "java.lang.String", 24 + 1 },
		{ "byte[]", 24 + 1 }, { "char[]", 12 }, { "java.lang.Object", 2 },
		{ "java.lang.StringBuilder", 0 },
	};
	uint64_t total = 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(count_type(t, s, want[i].type), want[i].n);
		total += want[i].n;
	}
	assert_int_equal(s->n, total + 1 /* Thread */ + 3 /* Class */ + 1 /* String[] */);
	assert_int_equal(count_type_len(t, s, "java.lang.Object[]", 10), 1);
	assert_int_equal(count_type_len(t, s, "java.util.HashMap$Node[]", 16), 3);
	assert_int_equal(count_type_len(t, s, "char[]", 4), 12);

	uint32_t t_emp = type_id(t, "example.company.Employee");
	uint32_t t_dep = type_id(t, "example.company.Department");
	uint32_t t_node = type_id(t, "java.util.HashMap$Node");
	uint32_t f_assoc = field_index(t, t_dep, "associatedDepartment");
	uint32_t f_value = field_index(t, t_node, "value");
	assert_int_equal(field_index(t, t_emp, "accessRights"), 2);
	uint32_t present = UINT32_MAX, associated = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const char *ty = obj_type(t, s, i);
		if (!strcmp(ty, "example.company.Employee")) {
			/* held by a LinkedList$Node (item) and a HashMap$Node (key) */
			assert_int_equal(s->in_off[i + 1] - s->in_off[i], 2);
			assert_int_equal(s->out_off[i + 1] - s->out_off[i], 3);
		} else if (!strcmp(ty, "java.util.HashMap$Node")) {
			uint32_t v = ref_at(s, i, f_value);
			if (present == UINT32_MAX)
				present = v;
			assert_int_equal(v, present); /* all values are HashSet.PRESENT */
		} else if (!strcmp(ty, "example.company.Department")) {
			if (ref_at(s, i, f_assoc) != UINT32_MAX)
				associated++;
		}
	}
	assert_int_equal(associated, 2);
	int present_rooted = 0;
	for (uint32_t r = 0; r < s->nroots; r++)
		if (s->roots[r].kind == HTR_ROOT_STATIC && s->roots[r].object == present) {
			const struct trace_type *cls = &t->types[s->roots[r].type];
			assert_string_equal(cls->name, "java.util.HashSet");
			assert_string_equal(cls->fields[s->roots[r].field].name, "PRESENT");
			present_rooted = 1;
		}
	assert_true(present_rooted);
	/* printReport leaves D = 3 StringBuilders + byte[256] before each GC */
	assert_int_equal(t->gcs[1].deaths, 6);
	assert_true(t->gcs[0].flags & HTR_GC_FULL);
	heap_state_free(s);
	check_graph_complete(t);
	trace_close(t);
}

/* --------------------------------------------------------------- churn */

/* -n 1000 -g 9: a = 3, b = 6; C = 10 byte[1024] per interval. */
static void test_churn_phases(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "churn.htr");
	write_trace("churn", 1000, 9, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 9);
	for (uint32_t gi = 0; gi < 9; gi++) {
		uint32_t k = gi + 1;
		int churn = k > 3 && k <= 6;
		const struct htr_gc_summary *g = &t->gcs[gi];
		assert_int_equal(g->end_ns - g->start_ns, (churn ? 2 : 5) * MS);
		uint64_t prev_end = gi ? t->gcs[gi - 1].end_ns : 100 * MS;
		assert_int_equal(g->start_ns - prev_end, (churn ? 50 : 1000) * MS);
		if (gi) {
			assert_int_equal(g->allocs, 10 + (churn ? 1000 : 0));
			assert_int_equal(g->deaths, g->allocs);
			assert_int_equal(g->used_before - g->used_after,
					 10 * 1040 + (churn ? 1000 * 16 : 0));
		}
		struct heap_state *s = state_at(t, gi);
		assert_int_equal(count_type(t, s, "java.lang.Integer"), 0);
		assert_int_equal(count_type_len(t, s, "byte[]", 1024), 0);
		/* registry: 1 session name String (N/1000) */
		assert_int_equal(count_type(t, s, "java.lang.String"), 1 + 3);
		assert_int_equal(count_type(t, s, "example.churn.Worker"), 2);
		heap_state_free(s);
	}
	check_graph_complete(t);
	trace_close(t);
}

/* ------------------------------------------------------------ gcstress */

/* -n 1000 -g 9: stress GCs 4..6 retain 333, 666, 1000 tasks; GC 7 frees
 * them. */
static void test_gcstress_phases(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "stress.htr");
	write_trace("gcstress", 1000, 9, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 9);
	static const uint64_t tasks[] = { 0, 0, 0, 333, 666, 1000, 0, 0, 0 };
	for (uint32_t gi = 0; gi < 9; gi++) {
		uint32_t k = gi + 1;
		int stress = k > 3 && k <= 6;
		const struct htr_gc_summary *g = &t->gcs[gi];
		assert_int_equal(g->end_ns - g->start_ns, (stress ? 80 : 10) * MS);
		uint64_t prev_end = gi ? t->gcs[gi - 1].end_ns : 100 * MS;
		assert_int_equal(g->start_ns - prev_end, (stress ? 20 : 1000) * MS);
		struct heap_state *s = state_at(t, gi);
		assert_int_equal(count_type(t, s, "example.gcstress.Task"), tasks[gi]);
		assert_int_equal(count_type(t, s, "java.util.LinkedList$Node"), tasks[gi]);
		assert_int_equal(count_type_len(t, s, "byte[]", 48), tasks[gi]);
		assert_int_equal(count_type(t, s, "java.util.LinkedList"), 1);
		heap_state_free(s);
	}
	/* GC 7: the 1000 tasks (3 objects each) and 10 buffers die */
	assert_int_equal(t->gcs[6].deaths, 3000 + 10);
	check_graph_complete(t);
	trace_close(t);
}

/* ----------------------------------------------------------- leakdrops */

/* -n 100 -g 8: big drop at GC 2, small drops at GCs 4 and 6. */
static void test_leakdrops_sessions(void **state)
{
	(void)state;
	char path[256];
	path_in_dir(path, sizeof(path), "leak.htr");
	write_trace("leakdrops", 100, 8, 1, path);
	struct trace *t = open_trace(path);
	assert_int_equal(t->ngcs, 8);
	/* 100; 100-50; +100; 150-15; +100; 235-23; +100; +100 */
	static const uint64_t sessions[] = { 100, 50, 150, 135, 235, 212, 312, 412 };
	for (uint32_t gi = 0; gi < 8; gi++) {
		struct heap_state *s = state_at(t, gi);
		assert_int_equal(count_type(t, s, "example.leakdrops.Session"), sessions[gi]);
		assert_int_equal(count_type(t, s, "java.util.LinkedList$Node"), sessions[gi]);
		assert_int_equal(count_type_len(t, s, "byte[]", 240), sessions[gi]);
		assert_int_equal(t->gcs[gi].end_ns - t->gcs[gi].start_ns, 10 * MS);
		heap_state_free(s);
	}
	const struct htr_gc_summary *g = t->gcs;
	/* the big drop breaks the heuristic's growth condition (< 75 % of the
	 * maximum), the small ones do not */
	assert_true(g[1].used_after * 4 < g[0].used_after * 3);
	assert_true(g[3].used_after < g[2].used_after);
	assert_true(g[3].used_after * 4 >= g[2].used_after * 3);
	assert_true(g[3].used_after > g[1].used_after);
	assert_true(g[5].used_after < g[4].used_after);
	assert_true(g[5].used_after * 4 >= g[4].used_after * 3);
	check_graph_complete(t);
	trace_close(t);
}

/* ------------------------------------------------------- determinism */

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb;
	while (same) {
		int ca = fgetc(fa), cb = fgetc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void test_deterministic(void **state)
{
	(void)state;
	static const char *const names[] = { "multicache", "buggystack", "company", "churn",
					     "gcstress", "leakdrops" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[256], b[256], c[256];
		path_in_dir(a, sizeof(a), "det-a.htr");
		path_in_dir(b, sizeof(b), "det-b.htr");
		path_in_dir(c, sizeof(c), "det-c.htr");
		write_trace(names[i], 300, 9, 42, a);
		write_trace(names[i], 300, 9, 42, b);
		assert_true(same_file(a, b));
		write_trace(names[i], 300, 9, 43, c);
		/* a different seed changes values but never the counts */
		struct trace *ta = open_trace(a), *tc = open_trace(c);
		assert_int_equal(ta->ngcs, tc->ngcs);
		for (uint32_t gi = 0; gi < ta->ngcs; gi++) {
			assert_int_equal(ta->gcs[gi].allocs, tc->gcs[gi].allocs);
			assert_int_equal(ta->gcs[gi].deaths, tc->gcs[gi].deaths);
		}
		trace_close(ta);
		trace_close(tc);
		if (!strcmp(names[i], "multicache") || !strcmp(names[i], "company"))
			assert_false(same_file(a, c));
	}
}

/* -------------------------------------------------------------- errors */

static void test_write_errors(void **state)
{
	(void)state;
	char path[256], err[512];
	struct synth_opts o;
	path_in_dir(path, sizeof(path), "err.htr");
	synth_opts_init(&o);
	assert_int_equal(synth_write("nosuch", &o, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown scenario"));
	assert_non_null(strstr(err, "multicache"));
	o.objects = 1000000000000ull;
	assert_int_equal(synth_write("multicache", &o, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-n"));
	synth_opts_init(&o);
	o.gcs = 3; /* leakdrops needs 8 */
	assert_int_equal(synth_write("leakdrops", &o, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-g"));
	synth_opts_init(&o);
	o.objects = 10;
	assert_true(synth_write("multicache", &o, "/nonexistent-dir/x.htr", err, sizeof(err)) < 0);
	assert_int_equal(access(path, F_OK), -1); /* nothing written on failure */

	assert_true(synth_scenario_count() >= 6);
	for (size_t i = 0; i < synth_scenario_count(); i++) {
		assert_non_null(synth_scenario_name(i));
		assert_non_null(synth_scenario_summary(i));
	}
	assert_null(synth_scenario_name(synth_scenario_count()));
}

/* Runs the CLI with stdout and stderr sent to /dev/null. */
static int run_cli(int argc, const char **argv)
{
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2), nul = open("/dev/null", O_WRONLY);
	assert_true(so >= 0 && se >= 0 && nul >= 0);
	dup2(nul, 1);
	dup2(nul, 2);
	int rc = synth_cli_main(argc, (char **)argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(nul);
	return rc;
}

static void test_cli(void **state)
{
	(void)state;
	char out[256];
	path_in_dir(out, sizeof(out), "cli.htr");
	const char *ok[] = { "synth", "company", "-n", "8", "-g", "2", "--seed", "0x10", "-o", out };
	assert_int_equal(run_cli(10, ok), 0);
	assert_int_equal(access(out, R_OK), 0);
	struct trace *t = open_trace(out);
	assert_int_equal(t->ngcs, 2);
	assert_string_equal(trace_info(t, "scenario"), "company");
	assert_string_equal(trace_info(t, "scenario.seed"), "16");
	trace_close(t);
	unlink(out);

	const char *help[] = { "synth", "--help" };
	assert_int_equal(run_cli(2, help), 0);
	const char *bad_n[] = { "synth", "multicache", "-n", "abc", "-o", out };
	assert_int_equal(run_cli(6, bad_n), 2);
	const char *zero_n[] = { "synth", "multicache", "-n", "0", "-o", out };
	assert_int_equal(run_cli(6, zero_n), 2);
	const char *neg_g[] = { "synth", "multicache", "-g", "-3", "-o", out };
	assert_int_equal(run_cli(6, neg_g), 2);
	const char *no_out[] = { "synth", "multicache" };
	assert_int_equal(run_cli(2, no_out), 2);
	const char *no_scenario[] = { "synth", "-o", out };
	assert_int_equal(run_cli(3, no_scenario), 2);
	const char *unknown[] = { "synth", "bogus", "-o", out };
	assert_int_equal(run_cli(4, unknown), 2);
	const char *bad_opt[] = { "synth", "multicache", "--frobnicate", "-o", out };
	assert_int_equal(run_cli(5, bad_opt), 2);
	const char *missing_val[] = { "synth", "multicache", "-o" };
	assert_int_equal(run_cli(3, missing_val), 2);
	const char *few_gcs[] = { "synth", "leakdrops", "-g", "2", "-o", out };
	assert_int_equal(run_cli(6, few_gcs), 2);
	const char *unwritable[] = { "synth", "company", "-o", "/nonexistent-dir/x.htr" };
	assert_int_equal(run_cli(4, unwritable), 1);
	assert_int_equal(access(out, F_OK), -1);
}

/* ---------------------------------------------------------------- main */

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multicache_counts),
		cmocka_unit_test(test_multicache_ownership),
		cmocka_unit_test(test_jdk_type_sizes),
		cmocka_unit_test(test_buggystack_counts),
		cmocka_unit_test(test_company_counts),
		cmocka_unit_test(test_churn_phases),
		cmocka_unit_test(test_gcstress_phases),
		cmocka_unit_test(test_leakdrops_sessions),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}

/* test_engine.c - the analyses of a trace with no tree above them
 * (analyses/engine.h): eng_open and its failures, and the engine's cached
 * results checked against what the heap state itself says, counted here
 * object by object.
 *
 * The trace is the multicache scenario (heapfs synth), whose last GC
 * carries a graph. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/dominators.h"
#include "analyses/engine.h"
#include "analyses/groups.h"
#include "analyses/paths.h"
#include "analyses/retained.h"
#include "analyses/suspects_engine.h"
#include "model/synth.h"

static char g_dir[64], g_path[96];

static int setup(void **st)
{
	(void)st;
	char err[256];
	struct synth_opts o;
	snprintf(g_dir, sizeof g_dir, "/tmp/test_engine.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(g_path, sizeof g_path, "%s/m.htr", g_dir);
	synth_opts_init(&o);
	o.objects = 3000;
	o.gcs = 6;
	if (synth_write("multicache", &o, g_path, err, sizeof err)) {
		fprintf(stderr, "synth: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	unlink(g_path);
	rmdir(g_dir);
	return 0;
}

static void open_engine(struct engine *en)
{
	struct htr_err err;
	struct eng_opts o = { .state_budget = 256u << 20, .result_budget = 64u << 20 };
	memset(&err, 0, sizeof err);
	assert_int_equal(eng_open(en, g_path, &o, &err), 0);
}

/* The last GC with a graph. */
static uint32_t graph_gc(const struct engine *en)
{
	for (uint32_t g = en->trace->ngcs; g-- > 0;)
		if (eng_gc_has_graph(en, g))
			return g;
	fail_msg("no GC with a graph");
	return 0;
}

static void test_open_failures(void **st)
{
	(void)st;
	struct engine en;
	struct htr_err err;
	struct eng_opts o = { .state_budget = 1u << 20, .result_budget = 1u << 20 };
	memset(&err, 0, sizeof err);
	assert_int_equal(eng_open(&en, "/nonexistent/t.htr", &o, &err), -ENOENT);
	assert_null(en.trace); /* left destroyed */
	eng_destroy(&en);      /* and may be destroyed again */

	o.features = "/nonexistent/features";
	memset(&err, 0, sizeof err);
	assert_true(eng_open(&en, g_path, &o, &err) < 0);
	assert_non_null(strstr(err.msg, "features=/nonexistent/features"));
	assert_null(en.trace);
	eng_destroy(&en);
}

/* The root group's totals and the by-type classification against a tally
 * of the state's objects. */
static void test_groups_against_state(void **st)
{
	(void)st;
	struct engine en;
	open_engine(&en);
	uint32_t g = graph_gc(&en);
	const struct heap_state *s;
	assert_int_equal(eng_state_get(&en, g, &s), 0);

	uint64_t *count = calloc(en.trace->ntypes + 1, sizeof *count);
	uint64_t *bytes = calloc(en.trace->ntypes + 1, sizeof *bytes);
	uint64_t all_bytes = 0;
	assert_non_null(count);
	assert_non_null(bytes);
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t ty = hs_info(s, i)->type;
		assert_true(ty < en.trace->ntypes);
		count[ty]++;
		bytes[ty] += hs_info(s, i)->size;
		all_bytes += hs_info(s, i)->size;
	}

	struct chain all;
	struct cls_row row;
	chain_init(&all);
	assert_int_equal(eng_group_totals(&en, g, &all, &row), 0);
	assert_int_equal(row.c[COL_LIVE], s->n);
	assert_int_equal(row.b[COL_LIVE], all_bytes);

	/* by-type's keys are type ids */
	uint32_t cls = cls_find(&en.reg, "type");
	struct rc_entry *e;
	const struct cls_row *rows;
	uint32_t nrows, seen = 0;
	assert_int_equal(eng_classification_get(&en, g, &all, cls, &e, &rows, &nrows), 0);
	for (uint32_t r = 0; r < nrows; r++) {
		assert_true(rows[r].key < en.trace->ntypes);
		assert_int_equal(rows[r].c[COL_LIVE], count[rows[r].key]);
		assert_int_equal(rows[r].b[COL_LIVE], bytes[rows[r].key]);
		seen++;
	}
	uint32_t nonempty = 0;
	for (uint32_t t = 0; t < en.trace->ntypes; t++)
		nonempty += count[t] != 0;
	assert_int_equal(seen, nonempty);
	eng_put(&en, e);

	/* a type's group: its members are exactly the objects of that type */
	struct chain one;
	struct buf ids;
	chain_init(&one);
	assert_int_equal(chain_push(&one, ST_CLS, cls, hs_info(s, 0)->type), 0);
	buf_init(&ids);
	assert_int_equal(eng_group_member_ids(&en, g, &one, &ids), 0);
	assert_int_equal(ids.len / sizeof(uint64_t), count[hs_info(s, 0)->type]);
	const uint64_t *id = (const uint64_t *)ids.data;
	for (size_t k = 0; k < ids.len / sizeof *id; k++) {
		uint32_t i = heap_state_find(s, id[k]);
		assert_true(i != UINT32_MAX);
		assert_int_equal(hs_info(s, i)->type, hs_info(s, 0)->type);
		if (k)
			assert_true(id[k - 1] < id[k]);
	}
	buf_free(&ids);
	free(count);
	free(bytes);
	eng_state_put(&en, s);
	eng_destroy(&en);
}

/* Dominators: the subtrees under the roots hold exactly the reachable
 * bytes; every reachable object retains at least itself.  Owners: rooted
 * objects, largest retained first. */
static void test_dominators_and_owners(void **st)
{
	(void)st;
	struct engine en;
	open_engine(&en);
	uint32_t g = graph_gc(&en);
	const struct heap_state *s;
	struct rc_entry *e;
	struct dom_view v;
	assert_int_equal(eng_state_get(&en, g, &s), 0);
	assert_int_equal(eng_dominators_get(&en, g, &e, &v), 0);
	assert_int_equal(v.n, s->n);
	uint64_t top_sum = 0, reach_bytes = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (!hs_is_reachable(s, i)) {
			assert_int_equal(v.idom[i], DOM_UNREACHABLE);
			continue;
		}
		reach_bytes += hs_info(s, i)->size;
		assert_true(v.retained[i] >= hs_info(s, i)->size);
		if (v.idom[i] == DOM_ROOT)
			top_sum += v.retained[i];
	}
	assert_int_equal(top_sum, reach_bytes);
	uint32_t top[5], ntop;
	assert_int_equal(dom_top(&v, 5, top, &ntop), 0);
	assert_true(ntop > 0);
	for (uint32_t k = 0; k < s->n; k++) /* nothing outside the top retains more */
		if (v.idom[k] != DOM_UNREACHABLE)
			assert_true(v.retained[k] <= v.retained[top[0]]);
	eng_put(&en, e);

	struct chain all;
	struct buf ob;
	chain_init(&all);
	buf_init(&ob);
	assert_int_equal(eng_group_owners(&en, s, &all, &ob), 0);
	const struct group_owner *w = (const struct group_owner *)ob.data;
	size_t nw = ob.len / sizeof *w;
	assert_true(nw > 0);
	for (size_t k = 0; k < nw; k++) {
		int rooted = 0;
		for (uint32_t r = 0; r < s->nroots; r++)
			rooted |= s->roots[r].object == w[k].obj;
		assert_true(rooted);
		if (k)
			assert_true(w[k - 1].retained >= w[k].retained);
	}
	buf_free(&ob);
	eng_state_put(&en, s);
	eng_destroy(&en);
}

/* Every level of a hierarchy from one trie equals the classification of
 * that level (the per-level computation listings used before): for each
 * node, its children's keys are the keys of the rows of classifying its
 * group by the same classifier. */
static void check_trie(struct engine *en, uint32_t g, const char *cls_name)
{
	uint32_t cls = cls_find(&en->reg, cls_name);
	assert_true(cls != CLS_NONE);
	struct chain base;
	chain_init(&base);
	struct rc_entry *te;
	const struct cls_trie_node *t;
	uint32_t n, checked = 0;
	assert_int_equal(eng_hier_trie_get(en, g, &base, cls, &te, &t, &n), 0);
	assert_true(n > 1);
	uint32_t path[CHAIN_KEYS_MAX];
	for (uint32_t x = 0; x < n && checked < 300; x++) {
		/* the node's key path, from the top */
		uint32_t len = 0;
		for (uint32_t y = x; y != 0; y = t[y].parent)
			len++;
		if (len >= CHAIN_KEYS_MAX)
			continue;
		uint32_t i = len;
		for (uint32_t y = x; y != 0; y = t[y].parent)
			path[--i] = t[y].key;
		assert_int_equal(trie_find(t, n, path, len), x);
		struct chain ch = base;
		for (uint32_t k = 0; k < len; k++)
			assert_int_equal(k ? chain_extend(&ch, path[k]) : chain_push(&ch, ST_CLS, cls, path[k]), 0);
		struct rc_entry *e;
		const struct cls_row *rows;
		uint32_t nrows;
		assert_int_equal(eng_classification_get(en, g, &ch, cls, &e, &rows, &nrows), 0);
		assert_int_equal(nrows, t[x].nchildren);
		for (uint32_t r = 0; r < nrows; r++)
			assert_int_equal(rows[r].key, t[t[x].first_child + r].key);
		eng_put(en, e);
		checked++;
	}
	eng_put(en, te);
}

static void test_hierarchy_tries(void **st)
{
	(void)st;
	struct engine en;
	open_engine(&en);
	uint32_t g = graph_gc(&en);
	check_trie(&en, g, "site");
	check_trie(&en, g, "package");
	check_trie(&en, g, "root");          /* several paths per object */
	check_trie(&en, g, "indirect-root");
	eng_destroy(&en);
}

/* The report is one cached result: two reads view the same bytes. */
static void test_suspects_once(void **st)
{
	(void)st;
	struct engine en;
	struct rc_entry *e1, *e2;
	struct sus_report r1, r2;
	open_engine(&en);
	assert_int_equal(eng_suspects_get(&en, &e1, &r1), 0);
	assert_int_equal(eng_suspects_get(&en, &e2, &r2), 0);
	assert_ptr_equal(rc_data(e1), rc_data(e2));
	eng_put(&en, e1);
	eng_put(&en, e2);
	eng_destroy(&en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_failures),
		cmocka_unit_test(test_groups_against_state),
		cmocka_unit_test(test_dominators_and_owners),
		cmocka_unit_test(test_hierarchy_tries),
		cmocka_unit_test(test_suspects_once),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

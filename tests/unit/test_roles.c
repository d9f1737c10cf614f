/* test_roles.c - data-structure roles, heads, owners and measures
 * (analyses/roles.h).
 *
 * The running example comes from `synth company` (the paper's Listing 1);
 * every other heap is built by hand here, and the expected roles are worked
 * out from the rules in docs/roles.md, object by object, in the comments.
 */
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

#include "analyses/bitset.h"
#include "analyses/dominators.h"
#include "analyses/roles.h"
#include "model/heap_state.h"
#include "fixture_state.h"
#include "model/synth.h"
#include "model/trace.h"

#define R_CONT DS_CONTAINER
#define R_REC (DS_RECURSIVE | DS_TRANSITION)

/* ------------------------------------------------------- heap builder */

struct hb {
	struct trace_type types[32];
	struct trace_field fields[32];
	uint64_t tsize[32];
	uint32_t ntypes;
	uint32_t *type_of;
	uint32_t n, cap;
	struct fx_edge *edges;
	uint32_t ne, ecap;
	uint32_t roots[64], nroots;
};

/* A type; self_field: the name of an instance field declared with the
 * type itself (makes it recursive by declaration), or NULL. */
static uint32_t hb_type(struct hb *b, const char *name, uint32_t kind, uint64_t size,
			const char *self_field)
{
	uint32_t t = b->ntypes++;
	assert_true(t < 32);
	struct trace_type *ty = &b->types[t];
	memset(ty, 0, sizeof *ty);
	ty->name = (char *)name;
	ty->kind = kind;
	b->tsize[t] = size;
	if (self_field) {
		static char sigs[32][128];
		snprintf(sigs[t], sizeof sigs[t], "L%s;", name);
		for (char *p = sigs[t]; *p; p++)
			if (*p == '.')
				*p = '/';
		b->fields[t].name = (char *)self_field;
		b->fields[t].sig = sigs[t];
		b->fields[t].flags = HTR_FIELD_REF;
		ty->nfields = 1;
		ty->fields = &b->fields[t];
	}
	return t;
}

static uint32_t hb_obj(struct hb *b, uint32_t type)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->type_of = realloc(b->type_of, b->cap * sizeof *b->type_of);
		assert_non_null(b->type_of);
	}
	b->type_of[b->n] = type;
	return b->n++;
}

static void hb_ref(struct hb *b, uint32_t from, uint32_t to)
{
	if (b->ne == b->ecap) {
		b->ecap = b->ecap ? b->ecap * 2 : 64;
		b->edges = realloc(b->edges, b->ecap * sizeof *b->edges);
		assert_non_null(b->edges);
	}
	b->edges[b->ne++] = (struct fx_edge){ from, to };
}

static void hb_root(struct hb *b, uint32_t o)
{
	assert_true(b->nroots < 64);
	b->roots[b->nroots++] = o;
}

/* The heap state: one objinfo per type, edges in insertion order,
 * reachability by BFS from the roots (fixture_state.h). */
static struct heap_state *hb_state(struct hb *b)
{
	struct heap_state *s = fx_state(b->n, b->type_of, b->ntypes, b->edges, b->ne, b->roots, b->nroots);
	for (uint32_t t = 0; t < b->ntypes; t++) {
		s->infos[t].type = t;
		s->infos[t].size = b->tsize[t];
		s->infos[t].array_length = b->types[t].kind == HTR_TYPE_INSTANCE ? -1 : 4;
	}
	for (uint32_t i = 0; i < b->n; i++)
		s->total_bytes += b->tsize[b->type_of[i]];
	return s;
}

static void hb_free(struct hb *b)
{
	free(b->type_of);
	free(b->edges);
}

/* Everything computed over one state. */
struct ds {
	struct heap_state *s;
	uint16_t *roles;
	uint32_t *owner, *head_obj, nheads;
	struct ds_head *heads;
	struct dominators *dom;
};

static void check_type_sums(const struct ds *d, uint32_t ntypes);

static void ds_run(struct ds *d, struct heap_state *s, const struct trace_type *types,
		   uint32_t ntypes)
{
	memset(d, 0, sizeof *d);
	d->s = s;
	d->roles = malloc((s->n + 1) * sizeof *d->roles);
	d->owner = malloc((s->n + 1) * sizeof *d->owner);
	assert_non_null(d->roles);
	assert_non_null(d->owner);
	assert_int_equal(ds_roles_compute(s, types, ntypes, 1, d->roles), 0);
	/* on 3 threads: the same roles (the state cut into ranges of 1,024
	 * objects: several on the bigger states here) */
	uint16_t *par = malloc((s->n + 1) * sizeof *par);
	assert_non_null(par);
	assert_int_equal(ds_roles_compute(s, types, ntypes, 3, par), 0);
	assert_memory_equal(par, d->roles, s->n * sizeof *par);
	free(par);
	d->nheads = ds_heads_index(s, d->roles, NULL);
	d->head_obj = malloc((d->nheads + 1) * sizeof *d->head_obj);
	d->heads = malloc((d->nheads + 1) * sizeof *d->heads);
	assert_int_equal(ds_heads_index(s, d->roles, d->head_obj), d->nheads);
	assert_int_equal(ds_owners_compute(s, d->roles, d->head_obj, d->nheads, d->owner), 0);
	assert_int_equal(dominators_compute(s, &d->dom), 0);
	assert_int_equal(ds_heads_measure(s, d->roles, d->owner, d->head_obj, d->nheads, d->dom, 1,
					  d->heads),
			 0);
	/* on 3 threads: the same heads, field for field (outer, the smallest
	 * holding slot, whatever order they were measured in) */
	struct ds_head *again = malloc((d->nheads + 1) * sizeof *again);
	assert_non_null(again);
	assert_int_equal(ds_heads_measure(s, d->roles, d->owner, d->head_obj, d->nheads, d->dom, 3, again),
			 0);
	if (d->nheads)
		assert_memory_equal(again, d->heads, d->nheads * sizeof *again);
	free(again);
	check_type_sums(d, ntypes);
}

/* ds_type_sums_compute against the heads' own measures summed by type,
 * on 1 and 3 threads, with one type fewer than the state has (its heads
 * left out). */
static void check_type_sums(const struct ds *d, uint32_t ntypes)
{
	const struct heap_state *s = d->s;
	for (uint32_t i = 0; i < s->ninfos; i++)
		if (s->infos[i].type != UINT32_MAX && s->infos[i].type >= ntypes)
			ntypes = s->infos[i].type + 1;
	struct ds_type_sums *want = calloc(ntypes + 1, sizeof *want);
	struct ds_type_sums *got = calloc(ntypes + 1, sizeof *got);
	assert_non_null(want);
	assert_non_null(got);
	for (uint32_t k = 0; k < d->nheads; k++) {
		uint32_t ty = hs_info(s, d->heads[k].obj)->type;
		want[ty].heads++;
		want[ty].member_bytes += d->heads[k].member_bytes;
		want[ty].element_bytes += d->heads[k].element_bytes;
	}
	uint32_t threads[] = { 1, 3 };
	for (uint32_t i = 0; i < 2; i++) {
		memset(got, 0xee, (ntypes + 1) * sizeof *got);
		assert_int_equal(ds_type_sums_compute(s, d->roles, d->owner, d->head_obj, d->nheads, ntypes,
						      threads[i], got),
				 0);
		assert_memory_equal(got, want, ntypes * sizeof *got);
		if (ntypes) {
			assert_int_equal(ds_type_sums_compute(s, d->roles, d->owner, d->head_obj, d->nheads,
							      ntypes - 1, threads[i], got),
					 0);
			if (ntypes > 1)
				assert_memory_equal(got, want, (ntypes - 1) * sizeof *got);
		}
	}
	free(want);
	free(got);
}

static void ds_done(struct ds *d, int free_state)
{
	free(d->roles);
	free(d->owner);
	free(d->head_obj);
	free(d->heads);
	dominators_free(d->dom);
	if (free_state)
		heap_state_free(d->s);
}

/* The measures of the head at object o (fails if o is not a head). */
static const struct ds_head *head_of(const struct ds *d, uint32_t o)
{
	for (uint32_t k = 0; k < d->nheads; k++)
		if (d->head_obj[k] == o)
			return &d->heads[k];
	fail_msg("object %u is not a head (roles 0x%x)", o, d->roles[o]);
	return NULL;
}

static void expect_roles(const struct ds *d, uint32_t o, uint16_t want, const char *what)
{
	if (d->roles[o] != want)
		fail_msg("%s (object %u): roles 0x%x, want 0x%x", what, o, d->roles[o], want);
}

/* ------------------------------------------------ the running example */

static char tmpdir[] = "/tmp/heapfs-test-roles-XXXXXX";

static int setup_dir(void **st)
{
	(void)st;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static uint32_t type_id(const struct trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->ntypes; i++)
		if (t->types[i].name && !strcmp(t->types[i].name, name))
			return i;
	fail_msg("no type %s", name);
	return UINT32_MAX;
}

/* Roles every object of a type must have, and how many objects there are. */
struct type_expect {
	const char *type;
	uint16_t roles;
};

/* Figure 9 with N = 12 employees (D = 3 departments of 4): every object
 * of each type listed has exactly these roles. */
static void test_company_figure9(void **st)
{
	(void)st;
	char path[256];
	char err[256] = "";
	struct synth_opts o;
	synth_opts_init(&o);
	o.objects = 12;
	o.gcs = 1;
	snprintf(path, sizeof path, "%s/company.htr", tmpdir);
	assert_int_equal(synth_write("company", &o, path, err, sizeof err), 0);
	struct trace *t = NULL;
	struct htr_err herr;
	assert_int_equal(trace_open(&t, path, NULL, &herr), 0);
	struct heap_state *s = NULL;
	assert_int_equal(heap_state_build(t, t->ngcs - 1, NULL, &s, &herr), 0);
	struct ds d;
	ds_run(&d, s, t->types, t->ntypes);

	static const struct type_expect fig9[] = {
		{ "example.company.Company", DS_MCONTAINER | DS_CONTAINER },
		{ "java.util.LinkedList", DS_CONTAINER },
		{ "java.util.LinkedList$Node", R_REC },
		{ "java.util.HashSet", DS_HCONTAINER | DS_CONTAINER },
		{ "java.util.HashMap", DS_ICONTAINER },
		{ "example.company.Employee", DS_HCONTAINER | DS_CONTAINER },
		{ "java.lang.String", DS_TRUE_DATA },
		{ "char[]", DS_PRIM_ARRAY },
		{ "byte[]", DS_PRIM_ARRAY },
		{ "java.util.HashMap$Node[]", DS_REF_ARRAY },
		/* not named by the acceptance list; from the rules */
		{ "java.util.ArrayList", DS_CONTAINER },
		{ "java.lang.Object[]", DS_REF_ARRAY },        /* holds recursive Departments */
		{ "example.company.Department", R_REC },
		{ "java.util.HashMap$Node", R_REC },
		{ "java.lang.Thread", DS_MCONTAINER | DS_CONTAINER }, /* name String: True Data */
		{ "java.lang.String[]", DS_REF_ARRAY | DS_TRANSITION }, /* main's empty args */
	};
	uint32_t seen[sizeof fig9 / sizeof fig9[0]] = { 0 };
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t ty = hs_info(s, i)->type;
		for (size_t k = 0; k < sizeof fig9 / sizeof fig9[0]; k++) {
			if (ty != type_id(t, fig9[k].type))
				continue;
			seen[k]++;
			expect_roles(&d, i, fig9[k].roles, fig9[k].type);
		}
	}
	/* counts from docs/scenarios.md (N = 12, D = 3) */
	static const uint32_t want_n[] = { 1, 1, 12, 3, 3, 12, 25, 12, 25, 3, 1, 1, 3, 12, 1, 1 };
	for (size_t k = 0; k < sizeof fig9 / sizeof fig9[0]; k++)
		if (seen[k] != want_n[k])
			fail_msg("%s: %u objects, want %u", fig9[k].type, seen[k], want_n[k]);

	/* java.lang.Object: HashSet.PRESENT, held by the HashMap$Nodes: CID;
	 * the JNI global: isolated, EStructure. */
	uint32_t t_obj = type_id(t, "java.lang.Object"), ncid = 0, nest = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (hs_info(s, i)->type != t_obj)
			continue;
		if (d.roles[i] == DS_CID)
			ncid++;
		else if (d.roles[i] == DS_ESTRUCTURE)
			nest++;
	}
	assert_int_equal(ncid, 1);
	assert_int_equal(nest, 1);

	/* Heads: each HashSet is one structure with its HashMap as IContainer
	 * and its 4 Employees as elements; the LinkedList holds all 12. */
	uint32_t t_set = type_id(t, "java.util.HashSet"), t_map = type_id(t, "java.util.HashMap");
	uint32_t t_ll = type_id(t, "java.util.LinkedList"), t_emp = type_id(t, "example.company.Employee");
	uint32_t sets = 0;
	for (uint32_t k = 0; k < d.nheads; k++) {
		const struct ds_head *h = &d.heads[k];
		uint32_t ty = hs_info(s, h->obj)->type;
		assert_int_not_equal(ty, t_map); /* never a head of its own */
		if (ty == t_set) {
			sets++;
			assert_int_not_equal(h->icontainer, DS_NONE);
			assert_int_equal(hs_info(s, h->icontainer)->type, t_map);
			assert_int_equal(h->heads_held, 4);
			assert_int_equal(h->head_types, 1);
			/* elements: the 4 Employees; PRESENT is a shared detail */
			assert_int_equal(h->elements, 4);
			/* members: set, map, table, 4 nodes (+ PRESENT in one set) */
			assert_true(h->members == 7 || h->members == 8);
			assert_int_not_equal(h->retained, DS_NO_RETAINED);
		} else if (ty == t_ll) {
			assert_int_equal(h->members, 13);
			assert_int_equal(h->elements, 12);
			assert_int_equal(h->icontainer, DS_NONE);
		} else if (ty == t_emp) {
			/* name, email (True Data) and accessRights (char[]) */
			assert_int_equal(h->members, 1);
			assert_int_equal(h->elements, 3);
			assert_int_equal(h->element_bytes, 24 + 24 + 24);
			assert_int_not_equal(h->outer, DS_NONE);
		}
		assert_int_equal(h->flags, 0);
	}
	assert_int_equal(sets, 3);
	ds_done(&d, 1);
	trace_close(t);
}

/* -------------------------------------------------- hand-built heaps */

/* The JDK-like types the hand-built heaps use (sizes are arbitrary but
 * distinct per type, so byte sums identify objects). */
struct jdk {
	uint32_t map, node, table, set, alist, oarr, str, bytes, chars, llist, llnode, obj;
};

static void jdk_types(struct hb *b, struct jdk *j)
{
	j->map = hb_type(b, "java.util.HashMap", HTR_TYPE_INSTANCE, 48, NULL);
	j->node = hb_type(b, "java.util.HashMap$Node", HTR_TYPE_INSTANCE, 32, "next");
	j->table = hb_type(b, "java.util.HashMap$Node[]", HTR_TYPE_OBJ_ARRAY, 80, NULL);
	j->set = hb_type(b, "java.util.HashSet", HTR_TYPE_INSTANCE, 16, NULL);
	j->alist = hb_type(b, "java.util.ArrayList", HTR_TYPE_INSTANCE, 24, NULL);
	j->oarr = hb_type(b, "java.lang.Object[]", HTR_TYPE_OBJ_ARRAY, 56, NULL);
	j->str = hb_type(b, "java.lang.String", HTR_TYPE_INSTANCE, 24, NULL);
	j->bytes = hb_type(b, "byte[]", HTR_TYPE_PRIM_ARRAY, 40, NULL);
	j->chars = hb_type(b, "char[]", HTR_TYPE_PRIM_ARRAY, 8, NULL);
	j->llist = hb_type(b, "java.util.LinkedList", HTR_TYPE_INSTANCE, 33, NULL);
	j->llnode = hb_type(b, "java.util.LinkedList$Node", HTR_TYPE_INSTANCE, 25, "next");
	j->obj = hb_type(b, "java.lang.Object", HTR_TYPE_INSTANCE, 16, NULL);
}

static uint32_t new_string(struct hb *b, const struct jdk *j)
{
	uint32_t s = hb_obj(b, j->str), v = hb_obj(b, j->bytes);
	hb_ref(b, s, v);
	return s;
}

/* HashMap<String, ArrayList<String>> with 3 entries of 2 strings each,
 * held by a root only:
 *   map -> table -> node_i -> key_i (String), list_i -> arr_i -> 2 Strings
 * map: MContainer + Container (holds a Reference Array, no referrer);
 * table: Reference Array (holds recursive nodes: no Transition);
 * nodes: Recursive + Transition (declared `next`);
 * list_i: held by a Recursive node: HContainer + Container;
 * arr_i: Reference Array + Transition (Strings are not recursive).
 * Structures: the map (members map, table, 3 nodes; elements 3 keys and
 * 3 lists, the lists being heads) and 3 lists nested in it (members list
 * and array; elements its 2 Strings). */
static void test_nested_heads(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t map = hb_obj(&b, j.map), table = hb_obj(&b, j.table);
	uint32_t lists[3], arrs[3], nodes[3];
	hb_ref(&b, map, table);
	hb_root(&b, map);
	for (int i = 0; i < 3; i++) {
		nodes[i] = hb_obj(&b, j.node);
		hb_ref(&b, table, nodes[i]);
		hb_ref(&b, nodes[i], new_string(&b, &j));
		lists[i] = hb_obj(&b, j.alist);
		arrs[i] = hb_obj(&b, j.oarr);
		hb_ref(&b, nodes[i], lists[i]);
		hb_ref(&b, lists[i], arrs[i]);
		hb_ref(&b, arrs[i], new_string(&b, &j));
		hb_ref(&b, arrs[i], new_string(&b, &j));
	}
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	expect_roles(&d, map, DS_MCONTAINER | DS_CONTAINER, "map");
	expect_roles(&d, table, DS_REF_ARRAY, "table");
	const struct ds_head *hm = head_of(&d, map);
	assert_int_equal(hm->members, 5);
	assert_int_equal(hm->member_bytes, 48 + 80 + 3 * 32);
	assert_int_equal(hm->elements, 6);
	assert_int_equal(hm->heads_held, 3);
	assert_int_equal(hm->head_types, 1);
	assert_int_equal(hm->outer, DS_NONE);
	assert_int_equal(hm->retained, d.s->total_bytes); /* the only root */
	uint32_t map_slot = d.owner[map];
	for (int i = 0; i < 3; i++) {
		expect_roles(&d, nodes[i], R_REC, "node");
		expect_roles(&d, lists[i], DS_HCONTAINER | DS_CONTAINER, "list");
		expect_roles(&d, arrs[i], DS_REF_ARRAY | DS_TRANSITION, "list array");
		const struct ds_head *hl = head_of(&d, lists[i]);
		assert_int_equal(hl->outer, map_slot);
		assert_int_equal(hl->members, 2);
		assert_int_equal(hl->elements, 2);
		assert_int_equal(hl->element_bytes, 2 * 24);
		assert_int_equal(hl->retained, 24 + 56 + 2 * (24 + 40));
		assert_int_equal(d.owner[nodes[i]], map_slot);
		assert_int_equal(d.owner[arrs[i]], d.owner[lists[i]]);
	}
	/* 4 heads: the map, 3 lists (Strings are True Data, not heads) */
	assert_int_equal(d.nheads, 4);
	ds_done(&d, 1);
	hb_free(&b);
}

/* The proxy: owner -> set -> map -> table -> node -> elem (String).
 * owner holds set and a second String, so the set is a plain Container;
 * map has one referrer (set), holds one object, and set holds nothing
 * else: IContainer.  One structure, headed by the set. */
static void test_hashset_proxy(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t owner_t = hb_type(&b, "example.Owner", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t owner = hb_obj(&b, owner_t), set = hb_obj(&b, j.set), map = hb_obj(&b, j.map);
	uint32_t table = hb_obj(&b, j.table), node = hb_obj(&b, j.node);
	hb_ref(&b, owner, set);
	hb_ref(&b, owner, new_string(&b, &j));
	hb_ref(&b, set, map);
	hb_ref(&b, map, table);
	hb_ref(&b, table, node);
	hb_ref(&b, node, new_string(&b, &j));
	/* a second set held only by a root: MContainer + Container over its
	 * own IContainer map */
	uint32_t set2 = hb_obj(&b, j.set), map2 = hb_obj(&b, j.map), table2 = hb_obj(&b, j.table);
	hb_ref(&b, set2, map2);
	hb_ref(&b, map2, table2);
	/* a set whose only referrer is a recursive node holding nothing else
	 * (the last Department of the running example): a nested head, not
	 * an IContainer */
	uint32_t rec_t = hb_type(&b, "example.Dept", HTR_TYPE_INSTANCE, 16, "next");
	uint32_t dept = hb_obj(&b, rec_t), set3 = hb_obj(&b, j.set), map3 = hb_obj(&b, j.map);
	uint32_t table3 = hb_obj(&b, j.table);
	hb_ref(&b, dept, set3);
	hb_ref(&b, set3, map3);
	hb_ref(&b, map3, table3);
	hb_root(&b, owner);
	hb_root(&b, set2);
	hb_root(&b, dept);

	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	expect_roles(&d, owner, DS_MCONTAINER | DS_CONTAINER, "owner");
	expect_roles(&d, set, DS_CONTAINER, "set");
	expect_roles(&d, map, DS_ICONTAINER, "map");
	expect_roles(&d, table, DS_REF_ARRAY, "table");
	expect_roles(&d, set2, DS_MCONTAINER | DS_CONTAINER, "set2");
	expect_roles(&d, map2, DS_ICONTAINER, "map2");
	expect_roles(&d, table2, DS_REF_ARRAY | DS_TRANSITION, "empty table2");
	expect_roles(&d, dept, R_REC, "dept");
	expect_roles(&d, set3, DS_HCONTAINER | DS_CONTAINER, "set3");
	expect_roles(&d, map3, DS_ICONTAINER, "map3");
	const struct ds_head *h = head_of(&d, set);
	assert_int_equal(h->icontainer, map);
	assert_int_equal(h->members, 4); /* set, map, table, node */
	assert_int_equal(h->member_bytes, 16 + 48 + 80 + 32);
	assert_int_equal(h->elements, 1);
	assert_int_equal(head_of(&d, set2)->icontainer, map2);
	assert_int_equal(head_of(&d, set3)->icontainer, map3);
	/* heads: owner, set, set2, set3 (maps are never heads) */
	assert_int_equal(d.nheads, 4);
	ds_done(&d, 1);
	hb_free(&b);
}

/* Self references are ignored; cycles get the same answer whatever the
 * index order.
 *   a: only a self reference: no referrer, references nothing else:
 *      EStructure (isolated).
 *   s: self reference and one char[]: True Data (one referenced object),
 *      and MContainer (no other object references it).
 *   x <-> y, nothing else: a cycle that holds nothing: both EStructure.
 *   p <-> q, q -> char[]: q holds a primitive array, p holds q (strong):
 *      both Container (each holds two things or has a complex referrer
 *      that holds two things). */
static void build_cycles(struct hb *b, const struct jdk *j, uint32_t ids[6], int reverse)
{
	/* one type each: two objects of one type referencing each other
	 * would make the type recursive */
	static const char *const names[6] = { "example.A", "example.S", "example.X",
					      "example.Y", "example.P", "example.Q" };
	uint32_t o[6], t[6];
	for (int i = 0; i < 6; i++)
		t[i] = hb_type(b, names[i], HTR_TYPE_INSTANCE, 24, NULL);
	for (int i = 0; i < 6; i++) {
		int k = reverse ? 5 - i : i;
		o[k] = hb_obj(b, t[k]);
	}
	uint32_t a = o[0], sd = o[1], x = o[2], y = o[3], p = o[4], q = o[5];
	hb_ref(b, a, a);
	hb_ref(b, sd, sd);
	hb_ref(b, sd, hb_obj(b, j->chars));
	hb_ref(b, x, y);
	hb_ref(b, y, x);
	hb_ref(b, p, q);
	hb_ref(b, q, p);
	hb_ref(b, q, hb_obj(b, j->chars));
	memcpy(ids, o, sizeof o);
}

static void test_self_references_and_cycles(void **st)
{
	(void)st;
	uint16_t first[6];
	for (int rev = 0; rev < 2; rev++) {
		struct hb b = { 0 };
		struct jdk j;
		uint32_t o[6];
		jdk_types(&b, &j);
		build_cycles(&b, &j, o, rev);
		struct ds d;
		ds_run(&d, hb_state(&b), b.types, b.ntypes);
		expect_roles(&d, o[0], DS_ESTRUCTURE, "self only");
		expect_roles(&d, o[1], DS_MCONTAINER | DS_TRUE_DATA, "self + char[]");
		expect_roles(&d, o[2], DS_ESTRUCTURE, "empty cycle x");
		expect_roles(&d, o[3], DS_ESTRUCTURE, "empty cycle y");
		expect_roles(&d, o[4], DS_CONTAINER, "cycle p");
		expect_roles(&d, o[5], DS_CONTAINER, "cycle q");
		for (int i = 0; i < 6; i++) {
			if (rev)
				assert_int_equal(d.roles[o[i]], first[i]);
			else
				first[i] = d.roles[o[i]];
		}
		ds_done(&d, 1);
		hb_free(&b);
	}
}

/* Empty structures.
 *   holder -> list -> empty Object[]; holder -> map (no table yet)
 *   list: holds a Reference Array: Container; the empty array: Reference
 *   Array + Transition (points to nothing recursive);
 *   map: references nothing; held by a Container: Container Impl. Detail;
 *   holder: MContainer + Container.
 *   lone -> leaf: lone holds only an object that holds nothing:
 *   MContainer + EStructure; leaf: CID (its referrer is an MContainer). */
static void test_empty_structures(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t ht = hb_type(&b, "example.Holder", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t holder = hb_obj(&b, ht), list = hb_obj(&b, j.alist), arr = hb_obj(&b, j.oarr);
	uint32_t map = hb_obj(&b, j.map), lone = hb_obj(&b, ht), leaf = hb_obj(&b, j.obj);
	hb_ref(&b, holder, list);
	hb_ref(&b, list, arr);
	hb_ref(&b, holder, map);
	hb_ref(&b, lone, leaf);
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	expect_roles(&d, holder, DS_MCONTAINER | DS_CONTAINER, "holder");
	expect_roles(&d, list, DS_CONTAINER, "list");
	expect_roles(&d, arr, DS_REF_ARRAY | DS_TRANSITION, "empty array");
	expect_roles(&d, map, DS_CID, "empty map");
	expect_roles(&d, lone, DS_MCONTAINER | DS_ESTRUCTURE, "lone");
	expect_roles(&d, leaf, DS_CID, "leaf");
	const struct ds_head *hl = head_of(&d, list);
	assert_int_equal(hl->members, 2);
	assert_int_equal(hl->elements, 0);
	/* the empty map is a CID held once: data of the holder */
	const struct ds_head *hh = head_of(&d, holder);
	assert_int_equal(hh->elements, 2);
	assert_int_equal(hh->heads_held, 1);
	/* no graph: refused */
	d.s->has_graph = 0;
	assert_int_equal(ds_roles_compute(d.s, b.types, b.ntypes, 1, d.roles), -EINVAL);
	assert_int_equal(ds_owners_compute(d.s, d.roles, d.head_obj, d.nheads, d.owner), -EINVAL);
	d.s->has_graph = 1;
	ds_done(&d, 1);
	hb_free(&b);
}

/* Shared ownership.
 *   h1 -> n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6   (singly linked)
 *   h2 -> n4
 * Each node's item is its own String.  Every node belongs to exactly one
 * structure, the nearest head: n0..n3 to h1 (1..4 hops; h2 cannot reach
 * them), n4..n6 to h2 (1..3 hops, h1 needs 5..7).  h1's members reach n4,
 * which is h2's: not an element of h1.  h1 and h2 are Containers (they
 * hold recursive nodes) with a second field each (a shared String held by
 * both: an element of both). */
static void test_shared_ownership(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t ht = hb_type(&b, "example.Head", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t h1 = hb_obj(&b, ht), h2 = hb_obj(&b, ht), n[7];
	for (int i = 0; i < 7; i++) {
		n[i] = hb_obj(&b, j.llnode);
		hb_ref(&b, n[i], new_string(&b, &j));
		if (i)
			hb_ref(&b, n[i - 1], n[i]);
	}
	uint32_t shared = new_string(&b, &j);
	hb_ref(&b, h1, n[0]);
	hb_ref(&b, h1, shared);
	hb_ref(&b, h2, n[4]);
	hb_ref(&b, h2, shared);
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	expect_roles(&d, h1, DS_MCONTAINER | DS_CONTAINER, "h1");
	expect_roles(&d, h2, DS_MCONTAINER | DS_CONTAINER, "h2");
	expect_roles(&d, shared, DS_TRUE_DATA, "shared string");
	uint32_t s1 = d.owner[h1], s2 = d.owner[h2];
	for (int i = 0; i < 7; i++)
		assert_int_equal(d.owner[n[i]], i < 4 ? s1 : s2);
	const struct ds_head *a = head_of(&d, h1), *c = head_of(&d, h2);
	assert_int_equal(a->members, 5);
	assert_int_equal(a->elements, 4 + 1);
	assert_int_equal(c->members, 4);
	assert_int_equal(c->elements, 3 + 1);
	ds_done(&d, 1);
	hb_free(&b);
}

/* What ds_type_sums_compute must not count twice, or at all: a string two
 * nodes of one list hold (one element of that list, counted once), and
 * the list itself, which its last node refers back to (a member's
 * reference to its own head is no element).  ds_run compares the sums
 * with the heads' measures; here the measures are pinned to the
 * construction first. */
static void test_type_sums_shared_element_and_back_reference(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t lists[2], shared = 0;
	for (int l = 0; l < 2; l++) {
		uint32_t list = lists[l] = hb_obj(&b, j.llist), n[4];
		hb_root(&b, list);
		shared = new_string(&b, &j);
		for (int i = 0; i < 4; i++) {
			n[i] = hb_obj(&b, j.llnode);
			hb_ref(&b, n[i], i == 0 || i == 2 ? shared : new_string(&b, &j));
			if (i)
				hb_ref(&b, n[i - 1], n[i]);
		}
		hb_ref(&b, list, n[0]);
		hb_ref(&b, n[3], list);
	}
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	for (int l = 0; l < 2; l++) {
		const struct ds_head *h = head_of(&d, lists[l]);
		/* the list and its 4 nodes; 3 distinct strings */
		assert_int_equal(h->members, 5);
		assert_int_equal(h->elements, 3);
		assert_int_equal(h->element_bytes, 3 * b.tsize[j.str]);
	}
	ds_done(&d, 1);
	hb_free(&b);
}

/* A LinkedList of 10^6 nodes, doubly linked, each item a String with its
 * byte[]: nothing recursive in the code may overflow, and the numbers
 * come out of the construction. */
static void test_long_list(void **st)
{
	(void)st;
	const uint32_t N = 1000000;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t list = hb_obj(&b, j.llist), prev = UINT32_MAX, first = 0, last = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t node = hb_obj(&b, j.llnode);
		hb_ref(&b, node, new_string(&b, &j));
		if (prev != UINT32_MAX) {
			hb_ref(&b, prev, node);
			hb_ref(&b, node, prev);
		} else {
			first = node;
		}
		prev = last = node;
	}
	hb_ref(&b, list, first);
	hb_ref(&b, list, last);
	hb_root(&b, list);
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	uint32_t nodes = 0, strings = 0, arrays = 0;
	for (uint32_t i = 0; i < d.s->n; i++) {
		uint32_t ty = hs_info(d.s, i)->type;
		if (ty == j.llnode)
			nodes += d.roles[i] == R_REC;
		else if (ty == j.str)
			strings += d.roles[i] == DS_TRUE_DATA;
		else if (ty == j.bytes)
			arrays += d.roles[i] == DS_PRIM_ARRAY;
	}
	assert_int_equal(nodes, N);
	assert_int_equal(strings, N);
	assert_int_equal(arrays, N);
	expect_roles(&d, list, DS_MCONTAINER | DS_CONTAINER, "list");
	assert_int_equal(d.nheads, 1);
	const struct ds_head *h = head_of(&d, list);
	assert_int_equal(h->members, (uint64_t)N + 1);
	assert_int_equal(h->member_bytes, 33 + (uint64_t)N * 25);
	assert_int_equal(h->elements, N);
	assert_int_equal(h->retained, d.s->total_bytes);
	ds_done(&d, 1);
	hb_free(&b);
}

/* Loader-like: a registry holding 80 heads of 10 types through an
 * Object[] is flagged; an ArrayList of 100 heads of one type, and a
 * registry of 63 heads of 10 types, are not. */
static void test_loader_like(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t svc[10];
	char names[10][32];
	for (int k = 0; k < 10; k++) {
		snprintf(names[k], sizeof names[k], "example.Service%d", k);
		svc[k] = hb_type(&b, names[k], HTR_TYPE_INSTANCE, 16, NULL);
	}
	uint32_t rt = hb_type(&b, "example.Registry", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t et = hb_type(&b, "example.Employee", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t reg = hb_obj(&b, rt), regarr = hb_obj(&b, j.oarr);
	uint32_t small = hb_obj(&b, rt), smallarr = hb_obj(&b, j.oarr);
	uint32_t list = hb_obj(&b, j.alist), listarr = hb_obj(&b, j.oarr);
	hb_ref(&b, reg, regarr);
	hb_ref(&b, small, smallarr);
	hb_ref(&b, list, listarr);
	for (int i = 0; i < 80; i++) {
		uint32_t o = hb_obj(&b, svc[i % 10]);
		hb_ref(&b, o, new_string(&b, &j));
		hb_ref(&b, regarr, o);
	}
	for (int i = 0; i < 63; i++) {
		uint32_t o = hb_obj(&b, svc[i % 10]);
		hb_ref(&b, o, new_string(&b, &j));
		hb_ref(&b, smallarr, o);
	}
	for (int i = 0; i < 100; i++) {
		uint32_t o = hb_obj(&b, et);
		hb_ref(&b, o, new_string(&b, &j));
		hb_ref(&b, o, hb_obj(&b, j.chars));
		hb_ref(&b, listarr, o);
	}
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	const struct ds_head *hr = head_of(&d, reg), *hs = head_of(&d, small), *hl = head_of(&d, list);
	assert_int_equal(hr->heads_held, 80);
	assert_int_equal(hr->head_types, 10);
	assert_int_equal(hr->flags, DS_FLAG_LOADER_LIKE);
	assert_int_equal(hs->heads_held, 63);
	assert_int_equal(hs->flags, 0);
	assert_int_equal(hl->heads_held, 100);
	assert_int_equal(hl->head_types, 1);
	assert_int_equal(hl->flags, 0);
	ds_done(&d, 1);
	hb_free(&b);
}

/* Reference arrays: Transition only when none of their elements is
 * recursive; arrays are never recursive, even holding their own type. */
static void test_transition_and_arrays(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t strs = hb_obj(&b, j.oarr), nodes = hb_obj(&b, j.oarr), nested = hb_obj(&b, j.oarr);
	hb_ref(&b, strs, new_string(&b, &j));
	uint32_t n1 = hb_obj(&b, j.node);
	hb_ref(&b, nodes, n1);
	hb_ref(&b, nodes, new_string(&b, &j));
	hb_ref(&b, nested, strs);
	/* a type recursive only through the objects (no declared field) */
	uint32_t ot = hb_type(&b, "example.Peer", HTR_TYPE_INSTANCE, 16, NULL);
	uint32_t p1 = hb_obj(&b, ot), p2 = hb_obj(&b, ot), p3 = hb_obj(&b, ot);
	hb_ref(&b, p1, p2);
	hb_ref(&b, p3, hb_obj(&b, j.chars));
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	expect_roles(&d, strs, DS_REF_ARRAY | DS_TRANSITION, "array of strings");
	expect_roles(&d, nodes, DS_REF_ARRAY, "array with a recursive node");
	expect_roles(&d, nested, DS_REF_ARRAY | DS_TRANSITION, "array of arrays");
	expect_roles(&d, n1, R_REC, "lone HashMap$Node (declared recursive)");
	expect_roles(&d, p1, R_REC, "p1");
	expect_roles(&d, p2, R_REC, "p2");
	expect_roles(&d, p3, R_REC, "p3: the type is recursive");
	/* names */
	assert_string_equal(ds_role_name(0), "recursive");
	assert_string_equal(ds_role_name(9), "container-impl-detail");
	assert_string_equal(ds_role_name(10), "true-data");
	assert_null(ds_role_name(11));
	ds_done(&d, 1);
	hb_free(&b);
}

/* ds_for_each_holder: an Employee held by a LinkedList and a HashSet is
 * an element of both; a backbone node is nobody's element. */
static int collect(void *ctx, uint32_t slot)
{
	uint64_t *mask = ctx;
	*mask |= 1ull << slot;
	return 0;
}

static void test_holders(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t et = hb_type(&b, "example.Employee", HTR_TYPE_INSTANCE, 24, NULL);
	uint32_t list = hb_obj(&b, j.llist), lnode = hb_obj(&b, j.llnode);
	uint32_t set = hb_obj(&b, j.set), map = hb_obj(&b, j.map), table = hb_obj(&b, j.table);
	uint32_t hnode = hb_obj(&b, j.node), emp = hb_obj(&b, et);
	hb_ref(&b, list, lnode);
	hb_ref(&b, lnode, emp);
	hb_ref(&b, set, map);
	hb_ref(&b, map, table);
	hb_ref(&b, table, hnode);
	hb_ref(&b, hnode, emp);
	hb_ref(&b, emp, new_string(&b, &j));
	hb_ref(&b, emp, new_string(&b, &j));
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	uint64_t mask = 0;
	assert_int_equal(ds_for_each_holder(d.s, d.roles, d.owner, emp, collect, &mask), 0);
	assert_int_equal(mask, (1ull << d.owner[list]) | (1ull << d.owner[set]));
	mask = 0;
	assert_int_equal(ds_for_each_holder(d.s, d.roles, d.owner, lnode, collect, &mask), 0);
	assert_int_equal(mask, 0);
	assert_int_equal(d.owner[lnode], d.owner[list]);
	assert_int_equal(d.owner[hnode], d.owner[set]);
	assert_int_equal(d.owner[map], d.owner[set]);
	ds_done(&d, 1);
	hb_free(&b);
}

/* A head held by two heads: its outer slot is the smaller of theirs,
 * whichever is measured first, on 1 thread or 3 (ds_run). */
static void test_outer_is_smallest(void **st)
{
	(void)st;
	struct hb b = { 0 };
	struct jdk j;
	jdk_types(&b, &j);
	uint32_t maps[2], list = 0;
	for (int m = 0; m < 2; m++) {
		uint32_t table = hb_obj(&b, j.table), node = hb_obj(&b, j.node);
		maps[m] = hb_obj(&b, j.map);
		hb_ref(&b, maps[m], table);
		hb_ref(&b, table, node);
		hb_ref(&b, node, new_string(&b, &j));
		hb_root(&b, maps[m]);
		if (m == 0) {
			list = hb_obj(&b, j.alist);
			uint32_t arr = hb_obj(&b, j.oarr);
			hb_ref(&b, list, arr);
			hb_ref(&b, arr, new_string(&b, &j));
		}
		hb_ref(&b, node, list);
	}
	struct ds d;
	ds_run(&d, hb_state(&b), b.types, b.ntypes);
	uint32_t s0 = d.owner[maps[0]], s1 = d.owner[maps[1]];
	assert_int_not_equal(s0, s1);
	assert_int_equal(head_of(&d, maps[0])->heads_held, 1);
	assert_int_equal(head_of(&d, maps[1])->heads_held, 1);
	assert_int_equal(head_of(&d, list)->outer, s0 < s1 ? s0 : s1);
	ds_done(&d, 1);
	hb_free(&b);
}

/* Roles on 1 and 3 threads are the same on synthetic heaps of every
 * structure the scenarios build (ds_run compares them), big enough for
 * dozens of ranges. */
static void test_synth_threads(void **st)
{
	(void)st;
	static const char *const scenarios[] = { "company", "multicache", "buggystack" };
	for (size_t k = 0; k < sizeof scenarios / sizeof *scenarios; k++) {
		char path[256], err[256] = "";
		struct synth_opts o;
		synth_opts_init(&o);
		o.objects = 20000;
		o.gcs = 1;
		snprintf(path, sizeof path, "%s/%s-big.htr", tmpdir, scenarios[k]);
		assert_int_equal(synth_write(scenarios[k], &o, path, err, sizeof err), 0);
		struct trace *t = NULL;
		struct htr_err herr;
		assert_int_equal(trace_open(&t, path, NULL, &herr), 0);
		struct heap_state *s = NULL;
		assert_int_equal(heap_state_build(t, t->ngcs - 1, NULL, &s, &herr), 0);
		assert_true(s->n >= 16 * 1024);
		struct ds d;
		ds_run(&d, s, t->types, t->ntypes);
		ds_done(&d, 1);
		trace_close(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_company_figure9),
		cmocka_unit_test(test_nested_heads),
		cmocka_unit_test(test_hashset_proxy),
		cmocka_unit_test(test_self_references_and_cycles),
		cmocka_unit_test(test_empty_structures),
		cmocka_unit_test(test_shared_ownership),
		cmocka_unit_test(test_type_sums_shared_element_and_back_reference),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_loader_like),
		cmocka_unit_test(test_transition_and_arrays),
		cmocka_unit_test(test_holders),
		cmocka_unit_test(test_synth_threads),
		cmocka_unit_test(test_outer_is_smallest),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}

/* test_closure.c - transitive and GC closures, dominators.
 *
 * Heaps are built by hand as heap_state structs.  Expected values come
 * from the construction, or from a brute-force definition computed here
 * independently: the GC closure of G is every object of G's transitive
 * closure that cannot be reached from a GC root without passing through G.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/dominators.h"
#include "model/heap_state.h"
#include "fixture_state.h"

/* A state of n objects of distinct sizes (sizes[i]), with edges and root
 * objects; reachability by a plain BFS. */
static struct heap_state *mkstate(uint32_t n, const uint64_t *sizes, const struct fx_edge *edges,
				  uint32_t ne, const uint32_t *roots, uint32_t nroots)
{
	struct heap_state *s = fx_state(n, NULL, n, edges, ne, roots, nroots);
	for (uint32_t i = 0; i < n; i++)
		s->infos[i].size = sizes[i];
	return s;
}

/* The running example: roots A(0), B(1).  A->C, B->C; C->D->E->C (a
 * cycle); A->F->G and A->G; H(7) unreachable with H->C.  Sizes 2^i. */
enum { A, B, C, D, E, F, G, H, NOBJ };
static const struct fx_edge ex_edges[] = {
	{ A, C }, { B, C }, { C, D }, { D, E }, { E, C }, { A, F }, { F, G }, { A, G }, { H, C },
};
static const uint32_t ex_roots[] = { A, B };

static struct heap_state *example(void)
{
	uint64_t sizes[NOBJ];
	for (int i = 0; i < NOBJ; i++)
		sizes[i] = 1ull << i;
	return mkstate(NOBJ, sizes, ex_edges, sizeof(ex_edges) / sizeof(ex_edges[0]), ex_roots, 2);
}

static uint64_t sz(uint32_t i) { return 1ull << i; }

static void test_dominators_example(void **state)
{
	(void)state;
	struct heap_state *s = example();
	struct dominators *d;
	assert_int_equal(dominators_compute(s, &d), 0);
	assert_int_equal(d->idom[A], DOM_ROOT);
	assert_int_equal(d->idom[B], DOM_ROOT);
	assert_int_equal(d->idom[C], DOM_ROOT); /* shared by A and B */
	assert_int_equal(d->idom[D], C);
	assert_int_equal(d->idom[E], D);
	assert_int_equal(d->idom[F], A);
	assert_int_equal(d->idom[G], A);        /* A->G and A->F->G */
	assert_int_equal(d->idom[H], DOM_UNREACHABLE);
	assert_int_equal(d->retained[A], sz(A) + sz(F) + sz(G));
	assert_int_equal(d->retained[B], sz(B));
	assert_int_equal(d->retained[C], sz(C) + sz(D) + sz(E));
	assert_int_equal(d->retained[D], sz(D) + sz(E));
	assert_int_equal(d->retained_count[C], 3);
	assert_int_equal(d->retained[H], 0);
	assert_int_equal(d->nreachable, 7);
	dominators_free(d);
	heap_state_free(s);
}

static void test_closures_example(void **state)
{
	(void)state;
	struct heap_state *s = example();
	struct closure_ctx *c;
	assert_int_equal(closure_ctx_new(&c, s), 0);
	uint64_t *g = bitset_new(NOBJ);
	struct closure_metrics deep, ret;

	/* {A}: deep A C D E F G; retained A F G (C is also B's) */
	bitset_set(g, A);
	assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
	assert_int_equal(deep.count, 6);
	assert_int_equal(deep.bytes, sz(A) + sz(C) + sz(D) + sz(E) + sz(F) + sz(G));
	assert_int_equal(ret.count, 3);
	assert_int_equal(ret.bytes, sz(A) + sz(F) + sz(G));

	/* {A, B} together own C, D, E as well: the multicache case */
	bitset_set(g, B);
	assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
	assert_int_equal(ret.count, 7);

	/* {D}: the cycle's other members keep nothing: D->E, but E is only
	 * reachable through D; C stays (rooted path A->C).  Retained D, E */
	memset(g, 0, bitset_words(NOBJ) * 8);
	bitset_set(g, D);
	assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
	assert_int_equal(deep.count, 3); /* D E C */
	assert_int_equal(ret.bytes, sz(D) + sz(E));

	/* {H}: garbage; its closure reaches C, kept alive by A and B */
	memset(g, 0, bitset_words(NOBJ) * 8);
	bitset_set(g, H);
	assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
	assert_int_equal(deep.count, 4);
	assert_int_equal(ret.count, 1);
	assert_int_equal(ret.bytes, sz(H));
	bitset_free(g);
	closure_ctx_free(c);
	heap_state_free(s);
}

/* A list of a million nodes: a million-deep DFS must not recurse. */
static void test_long_list(void **state)
{
	(void)state;
	const uint32_t n = 1000000;
	uint64_t *sizes = malloc(n * sizeof(uint64_t));
	struct fx_edge *edges = malloc(n * sizeof(struct fx_edge));
	for (uint32_t i = 0; i < n; i++)
		sizes[i] = 16;
	for (uint32_t i = 0; i + 1 < n; i++)
		edges[i] = (struct fx_edge){ i, i + 1 };
	uint32_t root = 0;
	struct heap_state *s = mkstate(n, sizes, edges, n - 1, &root, 1);
	struct dominators *d;
	assert_int_equal(dominators_compute(s, &d), 0);
	assert_int_equal(d->idom[0], DOM_ROOT);
	assert_int_equal(d->idom[n - 1], n - 2);
	assert_int_equal(d->retained[0], 16ull * n);
	assert_int_equal(d->retained[n / 2], 16ull * (n - n / 2));
	struct closure_ctx *c;
	assert_int_equal(closure_ctx_new(&c, s), 0);
	uint64_t *g = bitset_new(n);
	bitset_set(g, n / 2);
	struct closure_metrics deep, ret;
	assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
	assert_int_equal(ret.count, n - n / 2);
	bitset_free(g);
	closure_ctx_free(c);
	dominators_free(d);
	heap_state_free(s);
	free(sizes);
	free(edges);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t bound)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rng_state >> 33) % bound);
}

/* Brute force: T(G) minus what roots outside G reach without entering G. */
static uint64_t brute_retained_bytes(const struct heap_state *s, const uint64_t *g)
{
	uint32_t n = s->n;
	uint8_t *inT = calloc(n, 1), *alive = calloc(n, 1);
	uint32_t *q = malloc(n * sizeof(uint32_t)), h = 0, t = 0;
	for (uint32_t i = 0; i < n; i++)
		if (bitset_get(g, i)) {
			inT[i] = 1;
			q[t++] = i;
		}
	while (h < t) {
		uint32_t o = q[h++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++)
			if (!inT[s->out_tgt[e]]) {
				inT[s->out_tgt[e]] = 1;
				q[t++] = s->out_tgt[e];
			}
	}
	h = t = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (!bitset_get(g, o) && !alive[o]) {
			alive[o] = 1;
			q[t++] = o;
		}
	}
	while (h < t) {
		uint32_t o = q[h++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t x = s->out_tgt[e];
			if (!bitset_get(g, x) && !alive[x]) {
				alive[x] = 1;
				q[t++] = x;
			}
		}
	}
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < n; i++)
		if (inT[i] && !alive[i])
			bytes += hs_info(s, i)->size;
	free(inT);
	free(alive);
	free(q);
	return bytes;
}

/* Random graphs (2000 of them): the GC closure of random groups equals the brute force,
 * and each reachable object's dominator-subtree size equals the GC closure
 * of that object alone. */
/* A random state of 5 to 64 objects and up to 3n edges (cycles, shared
 * subgraphs, self-loops, duplicates) and 1 to 4 roots, from rng_state. */
static struct heap_state *small_random_state(void)
{
	uint32_t n = 5 + rnd(60), ne = rnd(3 * n), nr = 1 + rnd(4);
	uint64_t sizes[70];
	struct fx_edge edges[200];
	uint32_t roots[5];
	for (uint32_t i = 0; i < n; i++)
		sizes[i] = 1 + rnd(1000);
	for (uint32_t e = 0; e < ne; e++)
		edges[e] = (struct fx_edge){ rnd(n), rnd(n) };
	for (uint32_t r = 0; r < nr; r++)
		roots[r] = rnd(n);
	return mkstate(n, sizes, edges, ne, roots, nr);
}

static void test_random_graphs(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		rng_state = seed;
		struct heap_state *s = small_random_state();
		uint32_t n = s->n;
		struct closure_ctx *c;
		struct dominators *d;
		assert_int_equal(closure_ctx_new(&c, s), 0);
		assert_int_equal(dominators_compute(s, &d), 0);
		uint64_t *g = bitset_new(n);
		struct closure_metrics deep, ret;
		for (uint32_t x = 0; x < n; x++) {
			memset(g, 0, bitset_words(n) * 8);
			bitset_set(g, x);
			assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
			assert_int_equal(ret.bytes, brute_retained_bytes(s, g));
			if (hs_is_reachable(s, x)) {
				assert_int_equal(d->retained[x], ret.bytes);
				assert_int_equal(d->retained_count[x], ret.count);
			} else {
				assert_int_equal(d->idom[x], DOM_UNREACHABLE);
			}
		}
		for (int k = 0; k < 10; k++) {
			memset(g, 0, bitset_words(n) * 8);
			for (uint32_t m = 1 + rnd(5); m > 0; m--)
				bitset_set(g, rnd(n));
			assert_int_equal(closure_metrics_of(c, g, &deep, &ret), 0);
			assert_int_equal(ret.bytes, brute_retained_bytes(s, g));
		}
		bitset_free(g);
		dominators_free(d);
		closure_ctx_free(c);
		heap_state_free(s);
	}
}

/* ---- an independent oracle for big graphs: Cooper, Harvey and Kennedy's
 * iterative dataflow ("A Simple, Fast Dominance Algorithm", 2001), the
 * dominators as the fixed point of idom(v) = NCA over v's predecessors,
 * over the graph with a virtual root (index n) whose successors are the
 * rooted objects.  Nothing of it is shared with dominators.c. ---- */

struct chk {
	const struct heap_state *s;
	uint32_t n;
	uint32_t *po;     /* [n + 1] postorder number, UINT32_MAX: unreached */
	uint32_t *idom;   /* [n + 1] */
	uint8_t *rooted;  /* [n] */
};

static uint32_t chk_intersect(const struct chk *c, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (c->po[a] < c->po[b])
			a = c->idom[a];
		while (c->po[b] < c->po[a])
			b = c->idom[b];
	}
	return a;
}

/* idom by object in dominators.h's terms (DOM_ROOT, DOM_UNREACHABLE). */
static uint32_t *chk_dominators(const struct heap_state *s)
{
	uint32_t n = s->n, V = n;
	struct chk c = { s, n, malloc((n + 1) * sizeof(uint32_t)), malloc((n + 1) * sizeof(uint32_t)),
			 calloc(n ? n : 1, 1) };
	uint32_t *order = malloc((n + 1) * sizeof(uint32_t)), norder = 0;
	uint32_t *stack = malloc((n + 1) * sizeof(uint32_t)), *pos = malloc((n + 1) * sizeof(uint32_t));
	uint8_t *seen = calloc(n + 1, 1);
	for (uint32_t r = 0; r < s->nroots; r++)
		c.rooted[s->roots[r].object] = 1;
	for (uint32_t i = 0; i <= n; i++)
		c.po[i] = c.idom[i] = UINT32_MAX;
	/* postorder by an iterative walk: the root's successors are the
	 * rooted objects, in object order */
	uint32_t sp = 0;
	stack[sp] = V;
	pos[sp++] = 0;
	seen[V] = 1;
	while (sp) {
		uint32_t v = stack[sp - 1], next = UINT32_MAX;
		if (v == V) {
			while (pos[sp - 1] < n && next == UINT32_MAX) {
				uint32_t o = pos[sp - 1]++;
				if (c.rooted[o] && !seen[o])
					next = o;
			}
		} else {
			while (s->out_off[v] + pos[sp - 1] < s->out_off[v + 1] && next == UINT32_MAX) {
				uint32_t t = s->out_tgt[s->out_off[v] + pos[sp - 1]++];
				if (!seen[t])
					next = t;
			}
		}
		if (next == UINT32_MAX) {
			c.po[v] = norder;
			order[norder++] = v;
			sp--;
			continue;
		}
		seen[next] = 1;
		stack[sp] = next;
		pos[sp++] = 0;
	}
	c.idom[V] = V;
	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t i = norder - 1; i-- > 0;) { /* reverse postorder, the root left out */
			uint32_t b = order[i], nd = UINT32_MAX;
			if (c.rooted[b])
				nd = V;
			for (uint32_t e = s->in_off[b]; e < s->in_off[b + 1]; e++) {
				uint32_t p = s->in_src[e];
				if (c.idom[p] == UINT32_MAX)
					continue; /* not processed yet, or unreached */
				nd = nd == UINT32_MAX ? p : chk_intersect(&c, p, nd);
			}
			if (c.idom[b] != nd) {
				c.idom[b] = nd;
				changed = 1;
			}
		}
	}
	uint32_t *out = malloc((n ? n : 1) * sizeof(uint32_t));
	for (uint32_t o = 0; o < n; o++)
		out[o] = c.po[o] == UINT32_MAX ? DOM_UNREACHABLE : c.idom[o] == V ? DOM_ROOT : c.idom[o];
	free(c.po);
	free(c.idom);
	free(c.rooted);
	free(order);
	free(stack);
	free(pos);
	free(seen);
	return out;
}

/* Random heaps of 300,000 objects shaped like Java heaps: 40% of the
 * objects hold no reference (most of them with one referrer: the simple
 * leaves dominators.c leaves out of its walk; some shared, some rooted),
 * a spanning tree from object 0 plus extra references (cycles, shared
 * subgraphs, self-loops, duplicates), a few more roots, and an
 * unreachable cluster.  The immediate dominators equal the dataflow
 * oracle's, the retained sizes and counts the sums over its tree, and
 * 1, 2 and 4 threads give the same arrays. */
static void test_big_random_against_dataflow(void **state)
{
	(void)state;
	const uint32_t n = 300000, unreached = n - 2998; /* a non-leaf: the cluster's first */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		rng_state = seed * 7919;
		uint64_t *sizes = malloc(n * sizeof *sizes);
		struct fx_edge *edges = malloc((size_t)2 * n * sizeof *edges);
		uint32_t ne = 0, roots[8], nr = 0;
		for (uint32_t i = 0; i < n; i++)
			sizes[i] = 16 + 8 * rnd(20);
		/* non-leaves: i % 5 >= 2, and object 0 */
#define NONLEAF(lo, hi) ({ uint32_t _x; do _x = (lo) + rnd((hi) - (lo)); while (_x % 5 < 2 && _x); _x; })
		for (uint32_t i = 1; i < n; i++) {
			if (i < unreached)
				edges[ne++] = (struct fx_edge){ NONLEAF(0, i), i };
			else if (i > unreached)
				edges[ne++] = (struct fx_edge){ NONLEAF(unreached, i), i };
		}
		for (uint32_t k = 0; k < n / 4; k++) {
			uint32_t a = NONLEAF(0, unreached), b = rnd(unreached);
			/* a third go back up (cycles), some to a leaf (shared) */
			edges[ne++] = (struct fx_edge){ a, k % 7 == 0 ? a : b };
		}
#undef NONLEAF
		roots[nr++] = 0;
		roots[nr++] = 5;                /* a leaf */
		roots[nr++] = 5;                /* twice */
		roots[nr++] = 1 + rnd(unreached - 1);
		roots[nr++] = 1 + rnd(unreached - 1);
		struct heap_state *s = mkstate(n, sizes, edges, ne, roots, nr);
		uint32_t *want = chk_dominators(s);
		/* the sums over the oracle's tree, children before parents: a
		 * child's idom is found by climbing, so sum by depth */
		uint64_t *ret = calloc(n, sizeof *ret);
		uint32_t *cnt = calloc(n, sizeof *cnt), *depth = calloc(n, sizeof *depth), maxd = 0;
		for (uint32_t o = 0; o < n; o++) {
			uint32_t d = 0;
			for (uint32_t q = o; want[q] != DOM_ROOT && want[q] != DOM_UNREACHABLE; q = want[q])
				d++;
			depth[o] = d;
			if (d > maxd)
				maxd = d;
		}
		for (uint32_t d = maxd + 1; d-- > 0;)
			for (uint32_t o = 0; o < n; o++) {
				if (depth[o] != d || want[o] == DOM_UNREACHABLE)
					continue;
				ret[o] += sizes[o];
				cnt[o] += 1;
				if (want[o] != DOM_ROOT) {
					ret[want[o]] += ret[o];
					cnt[want[o]] += cnt[o];
				}
			}
		uint32_t reachable = 0, leaves_one_ref = 0;
		for (uint32_t o = 0; o < n; o++) {
			reachable += want[o] != DOM_UNREACHABLE;
			leaves_one_ref += s->out_off[o + 1] == s->out_off[o] &&
					  s->in_off[o + 1] - s->in_off[o] == 1;
		}
		assert_true(reachable < unreached + 1 && reachable > unreached / 2);
		assert_true(leaves_one_ref > n / 5); /* the case left out of the walk */
		for (uint32_t t = 1; t <= 4; t *= 2) {
			struct dominators d = { .idom = malloc(n * sizeof(uint32_t)),
						.retained = malloc(n * sizeof(uint64_t)),
						.retained_count = malloc(n * sizeof(uint32_t)) };
			assert_int_equal(dominators_compute_into(s, t, &d), 0);
			assert_int_equal(d.nreachable, reachable);
			for (uint32_t o = 0; o < n; o++) {
				assert_int_equal(d.idom[o], want[o]);
				assert_int_equal(d.retained[o], want[o] == DOM_UNREACHABLE ? 0 : ret[o]);
				assert_int_equal(d.retained_count[o], want[o] == DOM_UNREACHABLE ? 0 : cnt[o]);
			}
			free(d.idom);
			free(d.retained);
			free(d.retained_count);
		}
		free(want);
		free(ret);
		free(cnt);
		free(depth);
		heap_state_free(s);
		free(sizes);
		free(edges);
	}
}

/* The small random graphs again, immediate dominators against the
 * oracle, on 1 and 3 threads. */
static void test_small_random_against_dataflow(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		rng_state = seed * 31;
		struct heap_state *s = small_random_state();
		uint32_t n = s->n;
		uint32_t *want = chk_dominators(s);
		for (uint32_t t = 1; t <= 3; t += 2) {
			uint32_t idom[70], cnt[70];
			uint64_t ret[70];
			struct dominators d = { .idom = idom, .retained = ret, .retained_count = cnt };
			assert_int_equal(dominators_compute_into(s, t, &d), 0);
			for (uint32_t o = 0; o < n; o++)
				assert_int_equal(idom[o], want[o]);
		}
		free(want);
		heap_state_free(s);
	}
}

static void test_needs_graph(void **state)
{
	(void)state;
	struct heap_state s;
	memset(&s, 0, sizeof(s));
	struct closure_ctx *c;
	struct dominators *d;
	assert_int_equal(closure_ctx_new(&c, &s), -EINVAL);
	assert_int_equal(dominators_compute(&s, &d), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominators_example),
		cmocka_unit_test(test_closures_example),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_random_graphs),
		cmocka_unit_test(test_big_random_against_dataflow),
		cmocka_unit_test(test_small_random_against_dataflow),
		cmocka_unit_test(test_needs_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

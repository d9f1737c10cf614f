/* gen_tworefs.c - writes the bench's second heap: two references per live
 * object, the shape DESIGN's memory goal names (<= 48 bytes per live object
 * "for a heap with about two references per object"; the multicache heap
 * has about 1.3).
 *
 * N objects of class bench.Node {Node next; Node other;} (24 bytes), each
 * with next = the following node (one list of N: no recursion survives it)
 * and other = a pseudo-random earlier node (no locality, as in a real
 * object graph); one static root holds the head.  Between the live nodes,
 * one garbage node in five dies before the GC, as allocation-heavy code
 * leaves it.  One GC with the graph: N live objects, 2N - 1 edges.
 *
 * Usage: gen_tworefs N OUT.htr
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/htr_writer.h"
#include "tests/xorshift.h"

#define T_NODE 0
#define T_HOLDER 1
#define M_MAIN 0
#define S_MAIN 0

static int define_symbols(struct htr_writer *w)
{
	struct htr_field node_fields[] = {
		{ "next", 0, "Lbench/Node;", 0, 0 },
		{ "other", 0, "Lbench/Node;", 0, 0 },
	};
	struct htr_field holder_fields[] = { { "HEAD", 0, "Lbench/Node;", 0, HTR_FIELD_STATIC } };
	struct htr_type_def node = { T_NODE, "bench.Node", HTR_TYPE_INSTANCE, 24, 0, HTR_NO_TYPE, 2,
				     node_fields };
	struct htr_type_def holder = { T_HOLDER, "bench.Holder", HTR_TYPE_INSTANCE, 16, 0,
				       HTR_NO_TYPE, 1, holder_fields };
	struct htr_site_frame f = { M_MAIN, 12 };
	int rc = htr_write_type(w, &node);
	if (!rc)
		rc = htr_write_type(w, &holder);
	if (!rc)
		rc = htr_write_method(w, M_MAIN, "bench.Main", "main", "([Ljava/lang/String;)V",
				      "Main.java");
	if (!rc)
		rc = htr_write_site(w, S_MAIN, 1, &f);
	if (!rc)
		rc = htr_write_thread(w, 1, "main");
	return rc;
}

/* Live node k (0-based) has id live_id(k): ids 1.. with every sixth id a
 * garbage node. */
static uint64_t live_id(uint64_t k)
{
	return 1 + k + k / 5;
}

static int write_heap(struct htr_writer *w, uint64_t n)
{
	int rc = define_symbols(w);
	uint64_t ndead = 0, t = 0;
	for (uint64_t k = 0; k < n && !rc; k++) {
		struct htr_alloc a = { live_id(k), T_NODE, S_MAIN, 1, 24, -1, t += 50, 0 };
		rc = htr_write_alloc(w, &a);
		if (!rc && k % 5 == 4) { /* the garbage id after every fifth node */
			a.id = live_id(k) + 1;
			rc = htr_write_alloc(w, &a);
			ndead++;
		}
	}
	struct htr_gc_event g = { 1, t + 1000, 24 * (n + ndead), 1ull << 34, 0, "bench", NULL, 0, 0 };
	if (!rc)
		rc = htr_write_gc_start(w, &g);
	struct htr_root root = { .kind = HTR_ROOT_STATIC, .object = live_id(0), .type = T_HOLDER,
				 .field = 0 };
	if (!rc && n)
		rc = htr_write_roots(w, 1, 1, &root);
	uint64_t rng = 88172645463325252ull; /* xorshift64 */
	for (uint64_t k = 0; k < n && !rc; k++) {
		xorshift64(&rng);
		struct htr_ref refs[2] = { { 0, k + 1 < n ? live_id(k + 1) : 0 },
					   { 1, live_id(k ? rng % k : 0) } };
		if (k + 1 < n)
			rc = htr_write_graph_object(w, live_id(k), 2, refs);
		else
			rc = htr_write_graph_object(w, live_id(k), 1, &refs[1]);
	}
	uint64_t dead[64];
	uint32_t nd = 0;
	for (uint64_t k = 4; k < n && !rc; k += 5) {
		dead[nd++] = live_id(k) + 1;
		if (nd == 64 || k + 5 >= n) {
			rc = htr_write_deaths(w, 1, nd, dead);
			nd = 0;
		}
	}
	g.time_ns += 5000;
	g.used = 24 * n;
	g.flags = HTR_GC_HAS_GRAPH;
	g.cause = NULL;
	if (!rc)
		rc = htr_write_gc_end(w, &g);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gen_tworefs N OUT.htr\n");
		return 2;
	}
	char *end;
	errno = 0;
	uint64_t n = strtoull(argv[1], &end, 10);
	if (errno || *end || n == 0 || n > UINT32_MAX / 2) {
		fprintf(stderr, "gen_tworefs: N must be 1..%u, not %s\n", UINT32_MAX / 2, argv[1]);
		return 2;
	}
	struct htr_writer *w;
	int rc = htr_writer_open(&w, argv[2], NULL);
	if (rc) {
		fprintf(stderr, "gen_tworefs: %s: %s\n", argv[2], strerror(-rc));
		return 1;
	}
	rc = write_heap(w, n);
	int rc2 = htr_writer_close(w);
	if (rc || rc2) {
		fprintf(stderr, "gen_tworefs: writing %s: %s\n", argv[2], strerror(-(rc ? rc : rc2)));
		return 1;
	}
	return 0;
}

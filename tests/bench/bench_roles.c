/* bench_roles.c - times the data-structure analysis (analyses/roles.h) on
 * the last GC of one trace, in-process, on one core:
 *
 *   roles_s      ds_roles_compute (goal: <= 5 s for 10^7 objects)
 *   heads_s      what ds/heads needs after the roles: ds_heads_index,
 *                ds_owners_compute, ds_heads_measure (goal: <= 2 s)
 *   dominators_s dominators_compute, for the heads' retained sizes (shared
 *                with objects/<id>/retained_size; reported apart)
 *
 * Output: one "key<TAB>value" line per figure, like bench_rebuild.
 *
 * Build and run (from the repository root, after `make build`):
 *   cc -std=gnu11 -O2 -D_GNU_SOURCE -I. tests/bench/bench_roles.c \
 *      build/libheapfs.a $(pkg-config --libs fuse3 libzstd) -lpthread -lm \
 *      -o build/bench_roles
 *   build/heapfs synth company -n 1120000 -g 1 -o /tmp/company.htr   # 10^7 objects
 *   build/bench_roles /tmp/company.htr
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/dominators.h"
#include "analyses/roles.h"
#include "model/heap_state.h"
#include "model/trace.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct trace *t = NULL;
	struct heap_state *s = NULL;
	struct dominators *dom = NULL;
	struct htr_err err;
	uint16_t *roles = NULL;
	uint32_t *owner = NULL, *head_obj = NULL;
	struct ds_head *heads = NULL;
	int rc = 1;
	if (argc != 2) {
		fprintf(stderr, "usage: bench_roles TRACE\n");
		return 2;
	}
	if (trace_open(&t, argv[1], NULL, &err) != 0 || t->ngcs == 0) {
		fprintf(stderr, "bench_roles: %s: cannot open or no GC\n", argv[1]);
		goto out;
	}
	double t0 = now_s();
	if (heap_state_build(t, t->ngcs - 1, NULL, &s, &err) != 0 || !s->has_graph) {
		fprintf(stderr, "bench_roles: cannot rebuild the last GC with a graph\n");
		goto out;
	}
	double build_s = now_s() - t0;
	roles = malloc((s->n + 1) * sizeof *roles);
	owner = malloc((s->n + 1) * sizeof *owner);
	if (!roles || !owner)
		goto out;

	t0 = now_s();
	if (ds_roles_compute(s, t->types, t->ntypes, 1, roles) != 0)
		goto out;
	double roles_s = now_s() - t0;

	t0 = now_s();
	if (dominators_compute(s, &dom) != 0)
		goto out;
	double dom_s = now_s() - t0;

	t0 = now_s();
	uint32_t nheads = ds_heads_index(s, roles, NULL);
	head_obj = malloc((nheads + 1) * sizeof *head_obj);
	heads = malloc((nheads + 1) * sizeof *heads);
	if (!head_obj || !heads)
		goto out;
	ds_heads_index(s, roles, head_obj);
	if (ds_owners_compute(s, roles, head_obj, nheads, owner) != 0 ||
	    ds_heads_measure(s, roles, owner, head_obj, nheads, dom, 1, heads) != 0)
		goto out;
	double heads_s = now_s() - t0;

	uint64_t per_role[DS_NROLES] = { 0 }, loader = 0;
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t k = 0; k < DS_NROLES; k++)
			per_role[k] += (roles[i] >> k) & 1;
	for (uint32_t k = 0; k < nheads; k++)
		loader += heads[k].flags & DS_FLAG_LOADER_LIKE;
	printf("objects\t%" PRIu32 "\nedges\t%" PRIu64 "\n", s->n, s->nedges);
	printf("build_s\t%.3f\nroles_s\t%.3f\nheads_s\t%.3f\ndominators_s\t%.3f\n", build_s,
	       roles_s, heads_s, dom_s);
	printf("roles_objects_per_s\t%.0f\n", roles_s > 0 ? s->n / roles_s : 0);
	printf("heads\t%" PRIu32 "\nloader_like\t%" PRIu64 "\n", nheads, loader);
	printf("ds_bytes_per_object\t%zu\n", sizeof *roles + sizeof *owner);
	for (uint32_t k = 0; k < DS_NROLES; k++)
		printf("role_%s\t%" PRIu64 "\n", ds_role_name(k), per_role[k]);
	rc = 0;
out:
	free(roles);
	free(owner);
	free(head_obj);
	free(heads);
	dominators_free(dom);
	heap_state_free(s);
	trace_close(t);
	return rc;
}

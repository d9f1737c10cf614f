/* bench_rebuild.c - times the hot paths of heapfs on one trace, in-process:
 * trace_open, heap_state_build of the last GC (reconstruction including
 * edges, reverse edges and reachability), and the by-type grouping of that
 * state, both ways fs/ evaluates it (census_compute + classify_tallies, what
 * gc/NNN/by-type/table needs before rendering, and classify_objects, the
 * per-object path).  tests/bench/bench.sh builds and runs it under
 * /usr/bin/time for the peak RSS.
 *
 * Output: one "key<TAB>value" line per figure (parsed by bench.sh).
 * Build without the classifiers (if analyses/classify.h does not fit) with -DBENCH_NO_CLASSIFY.
 *
 * Usage: bench_rebuild TRACE
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/heap_state.h"
#include "model/trace.h"
#ifndef BENCH_NO_CLASSIFY
#include "analyses/classify.h"
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process: on a shared machine the wall clock also
 * counts time other processes held the core; the goal is per core. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#ifndef BENCH_NO_CLASSIFY
/* Sanity: the children of "all objects" by type add up to n. */
static int rows_add_up(const struct buf *rows, const struct heap_state *s, uint64_t *nrows)
{
	const struct cls_row *r = (const struct cls_row *)rows->data;
	uint64_t sum = 0;
	*nrows = rows->len / sizeof(*r);
	for (uint64_t k = 0; k < *nrows; k++)
		sum += r[k].c[COL_LIVE];
	if (sum == s->n)
		return 1;
	fprintf(stderr, "bench_rebuild: by-type counts add up to %" PRIu64 ", state has %u\n", sum, s->n);
	return 0;
}

/* Seconds of the by-type classification of the whole state, from the
 * census into *info_s and object by object into *obj_s; 0 or -1.  The
 * classifier's trace-level tables are prepared before the clock starts:
 * they are per trace, not per GC. */
static int time_by_type(const struct trace *t, const struct heap_state *s, uint64_t *nrows,
			double *info_s, double *obj_s)
{
	struct cls_registry reg;
	struct buf census, rows;
	struct chain all;
	struct census c;
	int rc = -1;
	buf_init(&census);
	buf_init(&rows);
	if (cls_registry_init(&reg, t, NULL) != 0)
		return -1;
	if (cls_prepare(&reg, CB_TYPE) != 0)
		goto out;
	chain_init(&all);

	double t0 = now_s();
	if (census_compute(s, &census) != 0 || census_view(census.data, census.len, &c) != 0)
		goto out;
	struct tally ty = { c.infos, c.h->ninfos, { c.counts, NULL, NULL } };
	if (classify_tallies(&reg, s->gc_index, &ty, 1, &all, CB_TYPE, &rows) != 0)
		goto out;
	*info_s = now_s() - t0;
	if (!rows_add_up(&rows, s, nrows))
		goto out;

	buf_reset(&rows);
	struct objsrc src = { s, NULL, 0 };
	t0 = now_s();
	if (classify_objects(&reg, &src, 1, &all, CB_TYPE, 1, &rows) != 0)
		goto out;
	*obj_s = now_s() - t0;
	if (!rows_add_up(&rows, s, nrows))
		goto out;
	rc = 0;
out:
	buf_free(&census);
	buf_free(&rows);
	cls_registry_destroy(&reg);
	return rc;
}
#endif

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_rebuild TRACE\n");
		return 2;
	}
	struct trace *t = NULL;
	struct heap_state *s = NULL;
	struct htr_err err;
	struct trace_open_opts oo = { NULL };
	int rc = 1;

	double t0 = now_s();
	if (trace_open(&t, argv[1], &oo, &err) != 0) {
		fprintf(stderr, "bench_rebuild: %s: offset %" PRIu64 ": %s\n", argv[1], err.offset, err.msg);
		return 1;
	}
	double t_open = now_s() - t0;
	if (t->ngcs == 0) {
		fprintf(stderr, "bench_rebuild: %s: no GC in the trace\n", argv[1]);
		goto out;
	}
	uint32_t last = t->ngcs - 1;
	t0 = now_s();
	double c0 = cpu_s();
	if (heap_state_build(t, last, NULL, &s, &err) != 0) {
		fprintf(stderr, "bench_rebuild: %s: offset %" PRIu64 ": %s\n", argv[1], err.offset, err.msg);
		goto out;
	}
	double t_build = now_s() - t0;
	double c_build = cpu_s() - c0;

	printf("gcs\t%u\n", t->ngcs);
	printf("objects\t%u\n", s->n);
	printf("edges\t%" PRIu64 "\n", s->nedges);
	printf("infos\t%u\n", s->ninfos);
	printf("has_graph\t%d\n", s->has_graph);
	printf("open_s\t%.6f\n", t_open);
	printf("build_s\t%.6f\n", t_build);
	printf("build_objects_per_s\t%.0f\n", s->n / t_build);
	printf("build_cpu_s\t%.6f\n", c_build);
	printf("build_objects_per_cpu_s\t%.0f\n", s->n / c_build);
	printf("state_bytes\t%zu\n", heap_state_memory(s));
	printf("state_bytes_per_object\t%.2f\n", s->n ? (double)heap_state_memory(s) / s->n : 0.0);
#ifndef BENCH_NO_CLASSIFY
	uint64_t nrows = 0;
	double t_info = 0, t_obj = 0;
	if (time_by_type(t, s, &nrows, &t_info, &t_obj) != 0) {
		fprintf(stderr, "bench_rebuild: by-type grouping failed\n");
		goto out;
	}
	printf("bytype_rows\t%" PRIu64 "\n", nrows);
	printf("bytype_s\t%.6f\n", t_info);
	printf("bytype_obj_s\t%.6f\n", t_obj);
#endif
	rc = 0;
out:
	heap_state_free(s);
	trace_close(t);
	return rc;
}

/* bench_closures.c - the closures' performance figures, in-process, on one
 * trace (tests/bench/bench_closures.sh builds and runs it):
 *   - the dominator tree of the last GC (analyses/dominators.c);
 *   - GC closure throughput: transitive + GC closure (the paper's improved
 *     algorithm, analyses/closure.c) of each type's objects, closure objects
 *     (|transitive| + |retained|... counted as the transitive closure's
 *     objects, what the algorithm walks) per second;
 *   - every type's closures at once (analyses/groupclo.c, issue 29 item 1:
 *     what by-X/table now runs), wall and CPU seconds against the per-type
 *     loop above, and whether every type's four numbers agree (1 = all);
 *   - gc/latest/by-type/table with deep and retained sizes for every type,
 *     through the tree (fs/tree.h), with the heap state already built (the
 *     reconstruction is measured by bench.sh) and from a fresh mount.
 *
 * Output: one "key<TAB>value" line per figure.
 * Usage: bench_closures TRACE
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/dominators.h"
#include "analyses/groupclo.h"
#include "analyses/parallel.h"
#include "fs/tree.h"
#include "model/heap_state.h"
#include "model/trace.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Per type (dense type id), the per-group loop's and groupclo's numbers. */
struct type_m {
	struct closure_metrics deep, ret;
};

/* Transitive + GC closure of every type's objects; returns the seconds,
 * *objs the sum of the transitive closures' sizes. */
static int time_type_closures(const struct heap_state *s, double *secs, double *cpu, uint64_t *objs,
			      struct type_m *per, uint32_t *ntypes_out)
{
	struct closure_ctx *c = NULL;
	uint32_t ntypes = 0;
	for (uint32_t j = 0; j < s->ninfos; j++)
		ntypes = s->infos[j].type + 1 > ntypes ? s->infos[j].type + 1 : ntypes;
	uint64_t *group = bitset_alloc(s->n), *clo = bitset_alloc(s->n);
	uint32_t *type_of = malloc(((size_t)s->n + 1) * sizeof *type_of);
	int rc = closure_ctx_new(&c, s);
	if (rc || !group || !clo || !type_of) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->n; i++)
		type_of[i] = hs_info(s, i)->type;
	*objs = 0;
	double t0 = now_s(), c0 = cpu_s();
	for (uint32_t ty = 0; ty < ntypes && !rc; ty++) {
		uint64_t members = 0;
		memset(group, 0, bitset_words(s->n) * sizeof *group);
		for (uint32_t i = 0; i < s->n; i++) {
			if (type_of[i] == ty) {
				bitset_set(group, i);
				members++;
			}
		}
		if (!members)
			continue;
		struct closure_metrics deep, ret;
		if (!(rc = closure_transitive(c, group, clo, &deep)))
			rc = closure_retained(c, group, clo, &ret);
		*objs += deep.count;
		if (per)
			per[ty] = (struct type_m){ deep, ret };
	}
	*secs = now_s() - t0;
	*cpu = cpu_s() - c0;
	*ntypes_out = ntypes;
out:
	closure_ctx_free(c);
	free(group);
	free(clo);
	free(type_of);
	return rc;
}

/* Every type's closures at once, from (type, object) pairs as
 * classify_member_pairs gives them; *same = every type agrees with per[]. */
static int time_type_allgroups(const struct heap_state *s, const struct type_m *per, uint32_t ntypes,
			       uint32_t threads, double *secs, double *cpu, struct gclo_stats *st, int *same)
{
	struct cls_pair *pr = malloc(((size_t)s->n + 1) * sizeof *pr);
	uint32_t *cnt = calloc((size_t)ntypes + 1, sizeof *cnt), ng = 0;
	struct closure_metrics *deep = NULL, *ret = NULL;
	int rc = -ENOMEM;
	if (!pr || !cnt)
		goto out;
	for (uint32_t i = 0; i < s->n; i++) /* counting sort by type */
		cnt[hs_info(s, i)->type + 1]++;
	for (uint32_t t = 0; t < ntypes; t++)
		cnt[t + 1] += cnt[t];
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t t = hs_info(s, i)->type;
		pr[cnt[t]++] = (struct cls_pair){ t, i };
	}
	/* BENCH_GCLO_BUDGET: the groupclo budget to try (0: its default) */
	const char *bud = getenv("BENCH_GCLO_BUDGET");
	struct gclo_opts o = { .stats = st, .budget = bud ? (uint32_t)strtoul(bud, NULL, 10) : 0,
			       .threads = threads };
	double t0 = now_s(), c0 = cpu_s();
	rc = gclo_compute(s, pr, s->n, &o, &ng, &deep, &ret, NULL);
	*secs = now_s() - t0;
	*cpu = cpu_s() - c0;
	if (rc)
		goto out;
	*same = 1;
	for (uint32_t i = 0, g = 0; i < s->n; g++) {
		uint32_t t = pr[i].key;
		const struct type_m *w = &per[t];
		if (w->deep.count != deep[g].count || w->deep.bytes != deep[g].bytes ||
		    w->ret.count != ret[g].count || w->ret.bytes != ret[g].bytes)
			*same = 0;
		while (i < s->n && pr[i].key == t)
			i++;
	}
out:
	free(pr);
	free(cnt);
	free(deep);
	free(ret);
	return rc;
}

static int read_file(struct hfs *fs, const char *path, double *secs, uint64_t *lines)
{
	struct buf b;
	buf_init(&b);
	double t0 = now_s();
	int rc = hfs_read(fs, path, &b);
	*secs = now_s() - t0;
	*lines = 0;
	for (size_t i = 0; i < b.len; i++)
		*lines += b.data[i] == '\n';
	buf_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	struct trace *t = NULL;
	struct heap_state *s = NULL;
	struct dominators *d = NULL;
	struct htr_err err;
	struct hfs *fs = NULL;
	int rc;
	if (argc != 2) {
		fprintf(stderr, "usage: bench_closures TRACE\n");
		return 2;
	}
	memset(&err, 0, sizeof err);
	if ((rc = trace_open(&t, argv[1], NULL, &err)) ||
	    (rc = heap_state_build(t, t->ngcs - 1, NULL, &s, &err))) {
		fprintf(stderr, "bench_closures: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	printf("objects\t%u\nedges\t%" PRIu64 "\n", s->n, s->nedges);
	double t0 = now_s();
	if ((rc = dominators_compute(s, &d))) {
		fprintf(stderr, "bench_closures: dominators: %s\n", strerror(-rc));
		return 1;
	}
	printf("dominators_s\t%.3f\n", now_s() - t0);
	dominators_free(d);
	double secs, cpu, asecs, acpu;
	uint64_t objs;
	uint32_t ntypes = 0;
	for (uint32_t j = 0; j < s->ninfos; j++)
		ntypes = s->infos[j].type + 1 > ntypes ? s->infos[j].type + 1 : ntypes;
	struct type_m *per = calloc((size_t)ntypes + 1, sizeof *per);
	struct gclo_stats st;
	int same = 0;
	if (!per || (rc = time_type_closures(s, &secs, &cpu, &objs, per, &ntypes))) {
		fprintf(stderr, "bench_closures: closures: %s\n", strerror(per ? -rc : ENOMEM));
		return 1;
	}
	printf("closure_objects\t%" PRIu64 "\nclosure_s\t%.3f\nclosure_objects_per_s\t%.0f\n", objs,
	       secs, secs > 0 ? (double)objs / secs : 0.0);
	printf("per_type_closures_cpu_s\t%.3f\n", cpu);
	if ((rc = time_type_allgroups(s, per, ntypes, 1, &asecs, &acpu, &st, &same))) {
		fprintf(stderr, "bench_closures: all groups: %s\n", strerror(-rc));
		return 1;
	}
	printf("allgroups_s\t%.3f\nallgroups_cpu_s\t%.3f\nallgroups_types\t%u\n"
	       "allgroups_alone\t%u\nallgroups_batched\t%u\nallgroups_passes\t%u\n"
	       "allgroups_components\t%u\nallgroups_equal\t%d\nallgroups_speedup\t%.1f\n",
	       asecs, acpu, st.groups, st.alone, st.batched, st.passes, st.components, same,
	       asecs > 0 ? secs / asecs : 0.0);
	/* thread scaling (issue 29): 2 threads and every core, same results */
	uint32_t all = par_threads(0), tries[2] = { 2, all };
	for (int k = 0; k < 2; k++) {
		if (k && tries[k] == tries[0])
			continue;
		double ts, tc;
		int same_t = 0;
		if ((rc = time_type_allgroups(s, per, ntypes, tries[k], &ts, &tc, &st, &same_t))) {
			fprintf(stderr, "bench_closures: all groups on %u threads: %s\n", tries[k], strerror(-rc));
			return 1;
		}
		printf("allgroups_threads_%u_s\t%.3f\nallgroups_threads_%u_equal\t%d\n"
		       "allgroups_threads_%u_speedup\t%.2f\n", tries[k], ts, tries[k], same_t, tries[k],
		       ts > 0 ? asecs / ts : 0.0);
	}
	free(per);
	heap_state_free(s);
	trace_close(t);

	/* through the tree: fresh, then warm state, one type table */
	struct hfs_opts o = { .cache_mb = 4096 };
	uint64_t lines;
	double fresh, state, table;
	if ((rc = hfs_open(&fs, argv[1], &o, &err))) {
		fprintf(stderr, "bench_closures: open: %s\n", err.msg);
		return 1;
	}
	if ((rc = read_file(fs, "/gc/latest/info", &state, &lines)) ||
	    (rc = read_file(fs, "/gc/latest/by-type/table", &table, &lines))) {
		fprintf(stderr, "bench_closures: read: %s\n", strerror(-rc));
		return 1;
	}
	fresh = state + table;
	printf("state_build_s\t%.3f\nby_type_table_s\t%.3f\nby_type_table_fresh_s\t%.3f\n"
	       "by_type_rows\t%" PRIu64 "\n", state, table, fresh, lines ? lines - 1 : 0);
	if ((rc = read_file(fs, "/gc/latest/dominators/top", &secs, &lines))) {
		fprintf(stderr, "bench_closures: read: %s\n", strerror(-rc));
		return 1;
	}
	printf("dominators_top_s\t%.3f\n", secs);
	hfs_close(fs);
	return 0;
}

/* bench_classify.c - the classification goals, timed in-process on
 * the last GC of a trace (and the one before it, for the diff), without
 * FUSE and without the rendered cache:
 *
 *   by-type, by-site          first level, from the census (census_compute
 *                             + classify_tallies: what fs/ does) and object
 *                             by object (classify_objects)
 *   type -> site -> thread    the chain by-type/T/by-site/S/by-thread
 *   expression                a user-defined one-to-one expression (info
 *                             level) and the predefined collection-health
 *                             (per object, reads references)
 *   diff                      diff_census_compute of the last two GCs, then
 *                             the by-type classification of the diff
 *   roots                     dominators, rootlabels_indirect (every root
 *                             its own label) and rootlabels_first, the work
 *                             behind by-indirect-root and by-first-root
 *
 * Usage: bench_classify TRACE [TYPE SITE]  (defaults: multicache's Product
 * and its site).  Prints one TSV line per figure: name, seconds, M objects/s
 * (objects of the state / seconds).  Build (tests/bench/bench.sh does the
 * same for bench_rebuild):
 *   cc -std=gnu11 -O2 -D_GNU_SOURCE -I. tests/bench/bench_classify.c \
 *      build/libheapfs.a $(pkg-config --libs fuse3 libzstd) -lpthread -lm
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/dominators.h"
#include "analyses/rootlabels.h"
#include "analyses/classify.h"
#include "model/heap_state.h"
#include "model/trace.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *name, double secs, uint64_t objects)
{
	printf("%-44s\t%8.3f s\t%9.1f M objects/s\n", name, secs,
	       secs > 0 ? (double)objects / secs / 1e6 : 0.0);
	fflush(stdout);
}

static uint32_t type_id(const struct trace *t, const char *name)
{
	char scratch[64];
	for (uint32_t k = 0; k < t->ntypes; k++) {
		if (!strcmp(trace_type_name(t, k, scratch, sizeof scratch), name))
			return k;
	}
	return UINT32_MAX;
}

/* Classifies the chain's group by cls from a fresh census (tallies) and
 * object by object; prints both.  Returns the rows' count sum or -1. */
static int64_t time_cls(struct cls_registry *reg, const struct heap_state *s, const struct chain *ch,
			uint32_t cls, const char *name)
{
	struct buf census, rows;
	struct census c;
	char label[128];
	int64_t sum = 0;
	buf_init(&census);
	buf_init(&rows);
	if (chain_info_level(reg, ch, cls)) {
		double t0 = now_s();
		if (census_compute(s, &census) || census_view(census.data, census.len, &c))
			return -1;
		struct tally tl = { c.infos, c.h->ninfos, { c.counts, NULL, NULL } };
		if (classify_tallies(reg, s->gc_index, &tl, 1, ch, cls, &rows))
			return -1;
		snprintf(label, sizeof label, "%s (census + tallies)", name);
		report(label, now_s() - t0, s->n);
		buf_reset(&rows);
	}
	struct objsrc src = { s, NULL, 0 };
	double t0 = now_s();
	if (classify_objects(reg, &src, 1, ch, cls, 1, &rows))
		return -1;
	snprintf(label, sizeof label, "%s (object by object)", name);
	report(label, now_s() - t0, s->n);
	const struct cls_row *r = (const struct cls_row *)rows.data;
	for (size_t k = 0; k < rows.len / sizeof *r; k++)
		sum += (int64_t)r[k].c[COL_LIVE];
	buf_free(&census);
	buf_free(&rows);
	return sum;
}

static int bench_roots(const struct heap_state *s)
{
	struct dominators *dom;
	struct rootlabels rl;
	uint32_t *label = malloc(((size_t)s->nroots + 1) * sizeof *label);
	uint32_t *first = malloc(((size_t)s->n + 1) * sizeof *first);
	if (!label || !first)
		return -1;
	for (uint32_t r = 0; r < s->nroots; r++)
		label[r] = r;
	double t0 = now_s();
	if (dominators_compute(s, &dom))
		return -1;
	report("dominators_compute", now_s() - t0, s->n);
	t0 = now_s();
	if (rootlabels_indirect(s, label, dom->idom, RL_CAP_DEFAULT, &rl))
		return -1;
	report("rootlabels_indirect (after dominators)", now_s() - t0, s->n);
	printf("  root labels %u, label sets %u\n", s->nroots, rl.nsets);
	t0 = now_s();
	if (rootlabels_first(s, label, first))
		return -1;
	report("rootlabels_first", now_s() - t0, s->n);
	rootlabels_free(&rl);
	dominators_free(dom);
	free(label);
	free(first);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: bench_classify TRACE [TYPE SITE]\n");
		return 2;
	}
	const char *tname = argc == 4 ? argv[2] : "example.multicache.Product";
	const char *sname = argc == 4 ? argv[3] : "example.multicache.Loader.load:30";
	struct trace *t = NULL;
	struct heap_state *s = NULL, *prev = NULL;
	struct htr_err err;
	struct trace_open_opts oo = { NULL };
	struct cls_registry reg;
	char msg[300];
	int rc = 1;
	if (trace_open(&t, argv[1], &oo, &err) || t->ngcs == 0) {
		fprintf(stderr, "bench_classify: %s: cannot open or no GC\n", argv[1]);
		return 1;
	}
	double t0 = now_s();
	if (heap_state_build(t, t->ngcs - 1, NULL, &s, &err)) {
		fprintf(stderr, "bench_classify: %s\n", err.msg);
		goto out;
	}
	printf("objects\t%u (state built in %.2f s)\n", s->n, now_s() - t0);
	if (cls_registry_init(&reg, t, NULL))
		goto out;
	static const char bigness[] = "if size > 32 then \"big\" else \"small\"";
	if (cls_define(&reg, "bigness", bigness, sizeof bigness - 1, msg, sizeof msg)) {
		fprintf(stderr, "bench_classify: %s\n", msg);
		goto out_reg;
	}
	struct chain all, chain3;
	chain_init(&all);
	uint32_t type = type_id(t, tname);
	if (type == UINT32_MAX || cls_prepare(&reg, CB_SITE)) {
		fprintf(stderr, "bench_classify: no type %s\n", tname);
		goto out_reg;
	}
	uint32_t site = ks_find_raw(&reg.defs[CB_SITE]->ks, sname, strlen(sname));
	if (site == KS_NO_KEY) {
		fprintf(stderr, "bench_classify: no site %s\n", sname);
		goto out_reg;
	}
	chain_init(&chain3);
	chain_push(&chain3, ST_CLS, CB_TYPE, type);
	chain_push(&chain3, ST_CLS, CB_SITE, site);

	int64_t n;
	if ((n = time_cls(&reg, s, &all, CB_TYPE, "by-type")) != (int64_t)s->n)
		fprintf(stderr, "bench_classify: by-type rows add up to %" PRId64 "\n", n);
	time_cls(&reg, s, &all, CB_SITE, "by-site");
	n = time_cls(&reg, s, &chain3, CB_THREAD, "by-type/T/by-site/S/by-thread");
	printf("  %s at %s: %" PRId64 " objects\n", tname, sname, n);
	time_cls(&reg, s, &all, cls_find(&reg, "bigness"), "expression (size, one-to-one)");
	time_cls(&reg, s, &all, cls_find(&reg, "collection-health"), "expression collection-health");

	if (t->ngcs >= 2) {
		t0 = now_s();
		if (heap_state_build(t, t->ngcs - 2, NULL, &prev, &err)) {
			fprintf(stderr, "bench_classify: %s\n", err.msg);
			goto out_reg;
		}
		printf("previous GC: %u objects (built in %.2f s)\n", prev->n, now_s() - t0);
		struct buf d, rows;
		struct tally tl[2];
		buf_init(&d);
		buf_init(&rows);
		t0 = now_s();
		if (diff_census_compute(s, prev, &d) || diff_census_view(d.data, d.len, tl))
			goto out_reg;
		struct chain dch;
		chain_init(&dch);
		dch.diff_gci = prev->gc_index;
		if (classify_tallies(&reg, s->gc_index, tl, 2, &dch, CB_TYPE, &rows))
			goto out_reg;
		report("diff of the last two GCs + by-type", now_s() - t0, (uint64_t)s->n + prev->n);
		buf_free(&d);
		buf_free(&rows);
	}
	if (s->has_graph && bench_roots(s))
		goto out_reg;
	rc = 0;
out_reg:
	cls_registry_destroy(&reg);
out:
	heap_state_free(prev);
	heap_state_free(s);
	trace_close(t);
	return rc;
}

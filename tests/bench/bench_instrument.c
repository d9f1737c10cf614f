/* bench_instrument.c - the agent's instrumenter (agent/instrument.h) alone:
 * what mode=count costs each class as it loads, without the JVM.
 *
 * Usage: bench_instrument [-r RUNS] [-m paths|sites] DIR...
 * Reads every *.class under the directories (extracted jars), then
 * instruments all of them RUNS times (default 5) with a sink that keeps
 * nothing, as the agent does by default (path counters, exception
 * corrections in the bytecode).  Prints the classes, their bytes, the
 * classes changed, a digest of the classes written (to check that a
 * change to the instrumenter left its output alone), and per run the
 * milliseconds, with the median and the microseconds per class.
 * agent/bench.sh runs it on ANTLR 3's jars.
 *
 * Build (agent/agent.mk: make build/tests/bench_instrument):
 *   cc -O2 -I. tests/bench/bench_instrument.c agent/instrument.c agent/suid.c
 *      agent/paths.c agent/cfg.c agent/classfile.c model/buf.c
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/instrument.h"
#include "model/buf.h"
#include "tests/slurp.h"

struct cls {
	uint8_t *data;
	size_t n;
};

static struct cls *classes;
static size_t nclasses, capclasses, total_bytes;
static uint32_t next_counter, next_method;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int add_class(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t len = strlen(path);
	if (type != FTW_F || len < 6 || strcmp(path + len - 6, ".class"))
		return 0;
	if (nclasses == capclasses) {
		size_t cap = capclasses ? capclasses * 2 : 1024;
		struct cls *p = realloc(classes, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		classes = p;
		capclasses = cap;
	}
	struct cls *c = &classes[nclasses];
	if (!(c->data = slurp(path, &c->n))) {
		fprintf(stderr, "bench_instrument: cannot read %s\n", path);
		return -EIO;
	}
	total_bytes += classes[nclasses++].n;
	return 0;
}

/* The sink keeps nothing: ids and counters are handed out, as the agent
 * would, and the meanings dropped. */
static uint32_t s_reserve(void *ctx, uint32_t n)
{
	(void)ctx;
	uint32_t first = next_counter;
	next_counter += n;
	return first;
}

static uint32_t s_method(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			 size_t dl, uint32_t nsites, uint64_t code_hash, uint32_t nblocks, uint32_t nnormal)
{
	(void)ctx, (void)cls, (void)cl, (void)name, (void)nl, (void)desc, (void)dl, (void)nsites, (void)code_hash,
		(void)nblocks, (void)nnormal;
	return next_method++;
}

static int s_site(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type)
{
	(void)ctx, (void)method, (void)k, (void)pc, (void)line, (void)type;
	return 0;
}

static int s_counter(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
		     uint32_t n)
{
	(void)ctx, (void)method, (void)counter, (void)k, (void)coef, (void)n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = 5, opt;
	enum instr_mode mode = INSTR_PATHS;
	while ((opt = getopt(argc, argv, "r:m:")) != -1) {
		if (opt == 'r' && atoi(optarg) > 0) {
			runs = atoi(optarg);
		} else if (opt == 'm' && (!strcmp(optarg, "paths") || !strcmp(optarg, "sites"))) {
			mode = !strcmp(optarg, "paths") ? INSTR_PATHS : INSTR_SITES;
		} else {
			fprintf(stderr, "usage: bench_instrument [-r RUNS] [-m paths|sites] DIR...\n");
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: bench_instrument [-r RUNS] [-m paths|sites] DIR...\n");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		if (nftw(argv[i], add_class, 16, FTW_PHYS)) {
			fprintf(stderr, "bench_instrument: cannot read the classes under %s\n", argv[i]);
			return 1;
		}
	}
	if (!nclasses) {
		fprintf(stderr, "bench_instrument: no .class file under the directories\n");
		return 1;
	}
	struct instr_sink sink = { .reserve = s_reserve, .method = s_method, .site = s_site, .counter = s_counter,
				   .bytecode = 1 };
	double *ms = calloc((size_t)runs, sizeof *ms);
	struct buf out;
	buf_init(&out);
	size_t changed = 0, failed = 0;
	uint64_t digest = 14695981039346656037ull;
	if (!ms)
		return 1;
	/* run -1, not timed: the digest; then every run writes the same classes */
	for (int r = -1; r < runs; r++) {
		struct instr_stats st = { 0 };
		changed = failed = 0;
		next_counter = next_method = 0;
		double t0 = now_ms();
		for (size_t c = 0; c < nclasses; c++) {
			buf_reset(&out);
			int rc = instr_class(classes[c].data, classes[c].n, &sink, mode, &out, &st);
			changed += rc == 1;
			failed += rc < 0;
			for (size_t i = 0; r < 0 && i < out.len; i++) /* FNV-1a */
				digest = (digest ^ out.data[i]) * 1099511628211ull;
		}
		if (r >= 0)
			ms[r] = now_ms() - t0;
	}
	printf("classes\t%zu (%zu bytes; %zu changed, %zu not parseable)\n", nclasses, total_bytes, changed, failed);
	printf("output_digest\t%016llx (FNV-1a of the instrumented classes: equal digests, equal output)\n",
	       (unsigned long long)digest);
	printf("runs_ms");
	for (int r = 0; r < runs; r++)
		printf("\t%.1f", ms[r]);
	qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
	double med = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
	printf("\nmedian_ms\t%.1f\nus_per_class\t%.1f\nmb_per_s\t%.1f\n", med, med * 1e3 / (double)nclasses,
	       (double)total_bytes / 1e6 / (med / 1e3));
	buf_free(&out);
	for (size_t c = 0; c < nclasses; c++)
		free(classes[c].data);
	free(classes);
	free(ms);
	return 0;
}

/* synth.c - `heapfs synth`: the scenario table, synth_write and the CLI.
 * The scenarios themselves live in synth_<name>.c over synth_world.h. */
#include "synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "progress.h"
#include "synth_world.h"

struct scenario {
	const char *name;
	const char *summary;
	int (*run)(struct sw *w, const struct sw_scenario_params *p);
	uint64_t def_n, max_n;
	uint32_t def_g, min_g;
};

#define MAX_GCS 100000u

static const struct scenario scenarios[] = {
	{ "multicache", "Products held by two static HashMap caches (gc-roots paper 5.1); "
	  "-n: Products live at the last GC", synth_multicache, 10000, 50000000, 20, 1 },
	{ "buggystack", "a stack whose pop keeps the reference (classification paper 5.3.1); "
	  "-n: pushes of the first round", synth_buggystack, 100000, 100000000, 10, 1 },
	{ "company", "Company/Department/Employee of the roles paper's Listing 1; "
	  "-n: Employees", synth_company, 12, 10000000, 3, 1 },
	{ "churn", "calm phases around a phase of short-lived Integers (windows paper 3.4); "
	  "-n: Integers per churn interval", synth_churn, 100000, 100000000, 30, 3 },
	{ "gcstress", "a phase of frequent long GC pauses (windows paper 3.3); "
	  "-n: objects retained at the end of the stress phase", synth_gcstress, 100000, 50000000, 30, 3 },
	{ "leakdrops", "growing reachable memory with one large and two small drops (windows paper "
	  "3.2, Fig. 2); -n: sessions added per interval", synth_leakdrops, 1000, 10000000, 40, 8 },
};
#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

void synth_opts_init(struct synth_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
}

size_t synth_scenario_count(void)
{
	return NSCENARIOS;
}

const char *synth_scenario_name(size_t i)
{
	return i < NSCENARIOS ? scenarios[i].name : NULL;
}

const char *synth_scenario_summary(size_t i)
{
	return i < NSCENARIOS ? scenarios[i].summary : NULL;
}

static const struct scenario *find_scenario(const char *name)
{
	for (size_t i = 0; i < NSCENARIOS; i++)
		if (name && !strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

static void known_list(char *s, size_t len)
{
	size_t k = 0;
	s[0] = 0;
	for (size_t i = 0; i < NSCENARIOS && k < len; i++)
		k += (size_t)snprintf(s + k, len - k, "%s%s", i ? ", " : "", scenarios[i].name);
}

/* Applies defaults and checks ranges; fills p. */
static int resolve_params(const struct scenario *sc, const struct synth_opts *o,
			  struct sw_scenario_params *p, char *err, size_t errlen)
{
	p->n = o->objects ? o->objects : sc->def_n;
	p->g = o->gcs ? o->gcs : sc->def_g;
	p->seed = o->seed;
	if (p->n > sc->max_n) {
		snprintf(err, errlen, "-n %llu is out of range for %s (1..%llu)",
			 (unsigned long long)p->n, sc->name, (unsigned long long)sc->max_n);
		return -EINVAL;
	}
	if (p->g < sc->min_g || p->g > MAX_GCS) {
		snprintf(err, errlen, "-g %u is out of range for %s (%u..%u)", p->g, sc->name,
			 sc->min_g, MAX_GCS);
		return -EINVAL;
	}
	return 0;
}

static void write_info(struct sw *w, const struct scenario *sc, const struct sw_scenario_params *p)
{
	sw_info(w, "producer", "heapfs synth");
	sw_info(w, "vm", "synthetic HotSpot model (JDK 17, 64-bit, compressed oops)");
	sw_info(w, "scenario", sc->name);
	sw_info(w, "scenario.description", sc->summary);
	sw_info_u64(w, "scenario.objects", p->n);
	sw_info_u64(w, "scenario.gcs", p->g);
	sw_info_u64(w, "scenario.seed", p->seed);
}

int synth_write(const char *scenario, const struct synth_opts *o, const char *out_path,
		char *err, size_t errlen)
{
	char known[256];
	struct synth_opts defaults;
	if (!o) {
		synth_opts_init(&defaults);
		o = &defaults;
	}
	const struct scenario *sc = find_scenario(scenario);
	if (!sc) {
		known_list(known, sizeof(known));
		snprintf(err, errlen, "unknown scenario '%s' (known: %s)", scenario ? scenario : "",
			 known);
		return -ENOENT;
	}
	struct sw_scenario_params p;
	int rc = resolve_params(sc, o, &p, err, errlen);
	if (rc)
		return rc;

	struct outfile of;
	char msg[sizeof(((struct sw *)0)->msg)];
	if ((rc = outfile_begin(&of, out_path, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s: %s", out_path, msg);
		return rc;
	}
	struct sw *w = calloc(1, sizeof(*w));
	if (!w) {
		outfile_abort(&of);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sw_open(w, of.tmp, p.seed);
	if (!sw_failed(w)) {
		write_info(w, sc, &p);
		/* progress in GCs written (sw_gc counts them) */
		progress_phase(progress_here(), p.g, "writing %s, GCs", sc->name);
		sc->run(w, &p);
	}
	rc = sw_close(w);
	snprintf(msg, sizeof(msg), "%s", w->msg);
	free(w);
	if (rc) {
		outfile_abort(&of);
		snprintf(err, errlen, "%s: %s", sc->name, msg[0] ? msg : strerror(-rc));
	} else if ((rc = outfile_commit(&of, msg, sizeof(msg)))) {
		snprintf(err, errlen, "%s: %s", out_path, msg);
	}
	return rc;
}

/* ------------------------------------------------------------------ CLI */

static void usage(FILE *f)
{
	fprintf(f, "usage: heapfs synth SCENARIO [-n OBJECTS] [-g GCS] [--seed S] -o OUT.htr\n"
		   "Writes a deterministic synthetic trace (same arguments, same bytes).\n"
		   "docs/scenarios.md lists the exact object counts of each scenario.\n\n"
		   "scenarios (default -n, default -g):\n");
	for (size_t i = 0; i < NSCENARIOS; i++)
		fprintf(f, "  %-11s %s (defaults: -n %llu, -g %u)\n", scenarios[i].name,
			scenarios[i].summary, (unsigned long long)scenarios[i].def_n,
			scenarios[i].def_g);
	fprintf(f, "\noptions:\n"
		   "  -n OBJECTS  scenario size, a positive integer (meaning per scenario, above)\n"
		   "  -g GCS      number of GCs, a positive integer\n"
		   "  --seed S    PRNG seed (decimal or 0x hex; default 1); changes values, never counts\n"
		   "  -o OUT.htr  output file (written to .OUT.htr.XXXXXX beside it, then renamed over\n"
		   "              it: a failure leaves an existing OUT.htr as it was)\n"
		   "  -q          no progress on stderr (heapfs --help: Progress)\n");
}

/* Parses a whole non-negative integer (decimal, or hex with 0x if allow_hex). */
static int parse_u64(const char *s, int allow_hex, uint64_t *out)
{
	int base = 10;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

struct cli {
	const char *scenario, *out;
	const char *n_arg, *g_arg, *seed_arg;
};

/* Takes the value of option opt: "-n 5", "-n5", "--seed=5", "--seed 5". */
static int opt_value(int argc, char **argv, int *i, const char *opt, const char **val)
{
	const char *a = argv[*i];
	size_t ol = strlen(opt);
	if (strncmp(a, opt, ol))
		return 0;
	if (a[ol] == 0) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "heapfs synth: option %s needs a value\n", opt);
			return -1;
		}
		*val = argv[++*i];
		return 1;
	}
	if (opt[1] == '-' ? a[ol] == '=' : 1) {
		*val = a + ol + (opt[1] == '-');
		return 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct cli *c)
{
	static const char *const opts[] = { "-n", "-g", "--seed", "-o" };
	memset(c, 0, sizeof(*c));
	for (int i = 1; i < argc; i++) {
		const char **dst[] = { &c->n_arg, &c->g_arg, &c->seed_arg, &c->out };
		int matched = 0;
		for (size_t k = 0; k < 4 && !matched; k++) {
			int r = opt_value(argc, argv, &i, opts[k], dst[k]);
			if (r < 0)
				return -1;
			matched = r;
		}
		if (matched)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "heapfs synth: unknown option '%s'\n", argv[i]);
			return -1;
		}
		if (c->scenario) {
			fprintf(stderr, "heapfs synth: more than one scenario ('%s', '%s')\n", c->scenario,
				argv[i]);
			return -1;
		}
		c->scenario = argv[i];
	}
	return 0;
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

/* Converts the textual options; prints the first problem. */
static int check_cli(const struct cli *c, struct synth_opts *o)
{
	uint64_t v;
	synth_opts_init(o);
	if (!c->scenario) {
		fprintf(stderr, "heapfs synth: missing SCENARIO\n");
		return -1;
	}
	if (!find_scenario(c->scenario)) {
		char known[256];
		known_list(known, sizeof(known));
		fprintf(stderr, "heapfs synth: unknown scenario '%s' (known: %s)\n", c->scenario, known);
		return -1;
	}
	if (!c->out || !*c->out) {
		fprintf(stderr, "heapfs synth: missing -o OUT.htr\n");
		return -1;
	}
	if (c->n_arg) {
		if (parse_u64(c->n_arg, 0, &v) || v == 0) {
			fprintf(stderr, "heapfs synth: -n '%s' is not a positive integer\n", c->n_arg);
			return -1;
		}
		o->objects = v;
	}
	if (c->g_arg) {
		if (parse_u64(c->g_arg, 0, &v) || v == 0 || v > UINT32_MAX) {
			fprintf(stderr, "heapfs synth: -g '%s' is not a positive integer\n", c->g_arg);
			return -1;
		}
		o->gcs = (uint32_t)v;
	}
	if (c->seed_arg && parse_u64(c->seed_arg, 1, &o->seed)) {
		fprintf(stderr, "heapfs synth: --seed '%s' is not a non-negative integer\n", c->seed_arg);
		return -1;
	}
	struct sw_scenario_params p;
	char err[256];
	if (resolve_params(find_scenario(c->scenario), o, &p, err, sizeof(err))) {
		fprintf(stderr, "heapfs synth: %s\n", err);
		return -1;
	}
	return 0;
}

int synth_cli_main(int argc, char **argv)
{
	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	struct cli c;
	struct synth_opts o;
	if (parse_args(argc, argv, &c) || check_cli(&c, &o)) {
		fprintf(stderr, "usage: heapfs synth SCENARIO [-n OBJECTS] [-g GCS] [--seed S] -o OUT.htr\n"
				"       heapfs synth --help   lists the scenarios and their defaults\n");
		return 2;
	}
	char err[512];
	int rc = synth_write(c.scenario, &o, c.out, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "heapfs synth: %s\n", err);
		return 1;
	}
	return 0;
}

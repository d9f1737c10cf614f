/* agent_opts.c - see agent_opts.h. */
#include "agent_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help_text[] =
	"heapfs JVMTI agent: records a JVM's allocations, deaths, GCs and heap graphs\n"
	"into a heapfs trace (.htr).\n"
	"\n"
	"usage: java -agentpath:/path/to/libheapfs-agent.so=OPT[,OPT...] ...\n"
	"\n"
	"  out=FILE        trace file to write (default heapfs.htr)\n"
	"  graph=MODE      when to record the object graph and roots with a heap walk:\n"
	"                  every (after every GC, default), N (every N-th GC),\n"
	"                  full (after full GCs only), none (never)\n"
	"  depth=N         stack frames per allocation site, 0..64 (default 2;\n"
	"                  0 records no sites, the cheapest)\n"
	"  deaths=on|off   record object deaths (default on)\n"
	"  gcwait=on|off   System.gc() (and Runtime.gc(), MemoryMXBean.gc()) waits\n"
	"                  until the agent has walked the heap of the GCs before it\n"
	"                  and of its own, and allocations after a GC with a graph\n"
	"                  wait for its walk (default on), so that back-to-back GCs\n"
	"                  each get a graph; off: a GC whose successor starts before\n"
	"                  its walk gets none\n"
	"  stacks=jvmti|fast  how sites are taken: GetStackTrace (default) or\n"
	"                  AsyncGetCallTrace with a GetStackTrace fallback (experimental)\n"
	"  zstd=LEVEL      compression level 1..19 (default 1)\n"
	"  mode=full|count|sample  full: every allocation, death and heap graph\n"
	"                  (default); count: allocation counts per site from bytecode\n"
	"                  path counters (no objects, graphs or deaths recorded);\n"
	"                  sample: the objects the JVM's heap sampler picks (one per\n"
	"                  interval= bytes on average), their sites and deaths, GCs\n"
	"                  (graph= default none: a walk's other objects have no site;\n"
	"                  deaths stay on)\n"
	"  interval=BYTES  mode=sample: mean bytes allocated between samples, 1..2^30,\n"
	"                  a number or with k or m (default 512k, as JFR's and\n"
	"                  async-profiler's)\n"
	"  start=none|first-gc|all  mode=sample: the objects the JVM holds when the\n"
	"                  agent starts: none recorded but the class mirrors (none,\n"
	"                  the default: no heap iteration at start, ~20-60 ms less\n"
	"                  on a short run); all recorded, their deaths followed to\n"
	"                  the first GC, which frees the JVM's start-up garbage,\n"
	"                  then their tags cleared (first-gc); or to the end (all;\n"
	"                  always so with graph=)\n"
	"  counters=N      mode=count: most counters (default 1048576; the array\n"
	"                  starts at 4096 and grows as classes need more)\n"
	"  counts=FILE     mode=count: also write the per-site counts as TSV\n"
	"  hot=N           mode=count: a method called N times is re-instrumented\n"
	"                  with paths from its measured edge frequencies, unless\n"
	"                  they plan the counters it has (default 0: never; e.g.\n"
	"                  20, or 10000 for long runs)\n"
	"  profile=FILE    mode=count: plan each method's paths from the edge\n"
	"                  frequencies FILE has for its code (measured by an earlier\n"
	"                  run: no retransformation), and write the frequencies this\n"
	"                  run measured for the others to FILE at exit (created when\n"
	"                  missing); with inline=on, also which callers to link to\n"
	"                  clones from the start\n"
	"  counting=paths|sites  mode=count: path counters (default) or one counter\n"
	"                  per allocation site (more increments; exact under\n"
	"                  exceptions without the corrections below)\n"
	"  atomic=on|off   mode=count: atomic counter increments (default off: plain\n"
	"                  increments, which threads racing on a counter can lose)\n"
	"  exceptions=bytecode|events|off  mode=count, paths: correct the counts of\n"
	"                  the frames an exception leaves mid-path by handlers in the\n"
	"                  instrumented code (bytecode, the default), by JVMTI\n"
	"                  Exception events (events, also `correct`; ~10 us per\n"
	"                  exception thrown), or not at all (off)\n"
	"  inline=on|off   mode=count, paths: a constructor or a static, private or\n"
	"                  final method that makes the same allocations on every\n"
	"                  call is counted by its callers (counter inlining through\n"
	"                  synthetic clones; default off: reflection sees them)\n"
	"  loops=on|off    mode=count, paths: a counted loop (an int from 0, one\n"
	"                  increment per turn) adds its count once at its exits\n"
	"                  instead of counting every turn (default off; not with\n"
	"                  exceptions=events or atomic=on)\n"
	"  jdk=on|off      mode=count: count the allocations made in the JDK's java.*\n"
	"                  classes too, per site and per application call site that\n"
	"                  called into the JDK (default on)\n"
	"  verbose         print recording statistics on stderr at exit\n"
	"  help            print this text and stop the JVM\n"
	"\n"
	"More: man -l docs/heapfs-agent.7, agent/README.md\n";

const char *agent_opts_help(void)
{
	return help_text;
}

static void defaults(struct agent_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->out, sizeof(o->out), "heapfs.htr");
	o->graph = AGENT_GRAPH_EVERY;
	o->graph_every = 1;
	o->depth = AGENT_DEFAULT_DEPTH;
	o->zstd_level = 1;
	o->deaths = 1;
	o->gc_wait = 1;
	o->stacks_asgct = 0;
	o->mode = AGENT_MODE_FULL;
	o->counters = AGENT_DEFAULT_COUNTERS;
	o->hot = AGENT_DEFAULT_HOT;
	o->count_exceptions = COUNT_EXC_BYTECODE;
	o->count_jdk = 1;
	o->interval = AGENT_DEFAULT_INTERVAL;
	o->start = AGENT_START_NONE;
}

static const char *const start_names[] = { [AGENT_START_NONE] = "none", [AGENT_START_FIRST_GC] = "first-gc",
					    [AGENT_START_ALL] = "all" };

const char *agent_start_name(enum agent_start s)
{
	return start_names[s];
}

/* Bytes: decimal digits with an optional k, m or g (binary multiples), in
 * [1, AGENT_MAX_INTERVAL]. */
static int parse_bytes(const char *v, uint32_t *out)
{
	size_t digits = strspn(v, "0123456789");
	if (!digits || digits > 10)
		return -EINVAL;
	unsigned long long x = strtoull(v, NULL, 10), mult = 1;
	const char *suffix = v + digits;
	if (*suffix) {
		if (suffix[1])
			return -EINVAL;
		switch (*suffix) {
		case 'k': case 'K': mult = 1ull << 10; break;
		case 'm': case 'M': mult = 1ull << 20; break;
		case 'g': case 'G': mult = 1ull << 30; break;
		default: return -EINVAL;
		}
	}
	/* x < 10^10 and mult <= 2^30: the product fits in 64 bits */
	x *= mult;
	if (x < 1 || x > AGENT_MAX_INTERVAL)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

/* Strict unsigned decimal in [lo, hi]. */
static int parse_uint(const char *v, unsigned long lo, unsigned long hi, uint32_t *out)
{
	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9)
		return -EINVAL;
	unsigned long x = strtoul(v, NULL, 10);
	if (x < lo || x > hi)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

static int parse_graph(struct agent_opts *o, const char *v)
{
	if (!strcmp(v, "every")) {
		o->graph = AGENT_GRAPH_EVERY;
	} else if (!strcmp(v, "full")) {
		o->graph = AGENT_GRAPH_FULL;
	} else if (!strcmp(v, "none")) {
		o->graph = AGENT_GRAPH_NONE;
	} else {
		if (parse_uint(v, 1, 1000000, &o->graph_every))
			return -EINVAL;
		o->graph = o->graph_every == 1 ? AGENT_GRAPH_EVERY : AGENT_GRAPH_NTH;
	}
	return 0;
}

static int parse_onoff(const char *v, int *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
		*out = 1;
	else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* One "key" or "key=value" item. */
static int parse_item(struct agent_opts *o, char *item, char *err, size_t errlen)
{
	char *eq = strchr(item, '=');
	const char *key = item, *val = eq ? eq + 1 : NULL;
	if (eq)
		*eq = 0;
	int rc = 0;
	uint32_t u = 0;
	if (!strcmp(key, "help") && !val) {
		o->help = 1;
	} else if (!strcmp(key, "verbose") && !val) {
		o->verbose = 1;
	} else if (!strcmp(key, "out") && val) {
		if (!*val || strlen(val) >= sizeof(o->out))
			rc = -EINVAL;
		else
			snprintf(o->out, sizeof(o->out), "%s", val);
	} else if (!strcmp(key, "graph") && val) {
		rc = parse_graph(o, val);
		o->graph_set = 1;
	} else if (!strcmp(key, "depth") && val) {
		rc = parse_uint(val, 0, AGENT_MAX_DEPTH, &o->depth);
	} else if (!strcmp(key, "zstd") && val) {
		rc = parse_uint(val, 1, 19, &u);
		o->zstd_level = (int)u;
	} else if (!strcmp(key, "deaths") && val) {
		rc = parse_onoff(val, &o->deaths);
		o->deaths_set = 1;
	} else if (!strcmp(key, "gcwait") && val) {
		rc = parse_onoff(val, &o->gc_wait);
	} else if (!strcmp(key, "mode") && val) {
		if (!strcmp(val, "full"))
			o->mode = AGENT_MODE_FULL;
		else if (!strcmp(val, "count"))
			o->mode = AGENT_MODE_COUNT;
		else if (!strcmp(val, "sample"))
			o->mode = AGENT_MODE_SAMPLE;
		else
			rc = -EINVAL;
	} else if (!strcmp(key, "interval") && val) {
		if (parse_bytes(val, &o->interval)) {
			snprintf(err, errlen, "bad value '%s' for option 'interval': bytes from 1 to %u (2^30), "
				 "a number or with k or m, e.g. 512k", val, AGENT_MAX_INTERVAL);
			return -EINVAL;
		}
		o->interval_set = 1;
	} else if (!strcmp(key, "start") && val) {
		rc = -EINVAL;
		for (size_t i = 0; i < sizeof(start_names) / sizeof(start_names[0]); i++)
			if (!strcmp(val, start_names[i])) {
				o->start = (enum agent_start)i;
				rc = 0;
			}
		o->start_set = 1;
	} else if (!strcmp(key, "counters") && val) {
		rc = parse_uint(val, 1, AGENT_MAX_COUNTERS, &o->counters);
	} else if (!strcmp(key, "hot") && val) {
		rc = parse_uint(val, 0, 1000000000, &o->hot);
	} else if (!strcmp(key, "counting") && val) {
		if (!strcmp(val, "paths"))
			o->count_sites = 0;
		else if (!strcmp(val, "sites"))
			o->count_sites = 1;
		else
			rc = -EINVAL;
	} else if (!strcmp(key, "inline") && val) {
		rc = parse_onoff(val, &o->count_inline);
	} else if (!strcmp(key, "jdk") && val) {
		rc = parse_onoff(val, &o->count_jdk);
	} else if (!strcmp(key, "loops") && val) {
		rc = parse_onoff(val, &o->count_loops);
	} else if (!strcmp(key, "atomic") && val) {
		rc = parse_onoff(val, &o->count_atomic);
	} else if (!strcmp(key, "exceptions") && val) {
		if (!strcmp(val, "bytecode"))
			o->count_exceptions = COUNT_EXC_BYTECODE;
		else if (!strcmp(val, "events") || !strcmp(val, "correct"))
			o->count_exceptions = COUNT_EXC_EVENTS;
		else if (!strcmp(val, "off"))
			o->count_exceptions = COUNT_EXC_OFF;
		else
			rc = -EINVAL;
	} else if (!strcmp(key, "counts") && val) {
		if (!*val || strlen(val) >= sizeof(o->counts))
			rc = -EINVAL;
		else
			snprintf(o->counts, sizeof(o->counts), "%s", val);
	} else if (!strcmp(key, "profile") && val) {
		if (!*val || strlen(val) >= sizeof(o->profile) - 4) /* room for ".tmp" */
			rc = -EINVAL;
		else
			snprintf(o->profile, sizeof(o->profile), "%s", val);
	} else if (!strcmp(key, "stacks") && val) {
		if (!strcmp(val, "fast"))
			o->stacks_asgct = 1;
		else if (!strcmp(val, "jvmti"))
			o->stacks_asgct = 0;
		else
			rc = -EINVAL;
	} else {
		snprintf(err, errlen, "unknown option '%s%s%s' (use the option 'help' for the list)", key,
			 val ? "=" : "", val ? val : "");
		return -EINVAL;
	}
	if (rc)
		snprintf(err, errlen, "bad value '%s' for option '%s' (use the option 'help' for the list)",
			 val ? val : "", key);
	return rc;
}

/* The options that mode=sample changes or refuses, once all are read (the
 * order of the items does not matter). */
static int check_sample(struct agent_opts *o, char *err, size_t errlen)
{
	if (o->mode != AGENT_MODE_SAMPLE) {
		/* sampling at an interval in another mode would silently record
		 * every allocation (full) or none (count) */
		if (o->interval_set || o->start_set) {
			snprintf(err, errlen, "%s= needs mode=sample", o->interval_set ? "interval" : "start");
			return -EINVAL;
		}
		o->start = AGENT_START_ALL;
		return 0;
	}
	/* Heap walks are optional here (default none): the objects a walk
	 * meets without a sample are written as HTR_ALLOC_WALKED (format 1.5),
	 * which the reader keeps out of every estimate. */
	/* Without deaths every sample would stay live: the live estimates are
	 * what the mode is for. */
	if (o->deaths_set && !o->deaths) {
		snprintf(err, errlen, "mode=sample: deaths=off is not supported (the samples' deaths are "
				      "what tells live objects from garbage)");
		return -EINVAL;
	}
	if (!o->graph_set)
		o->graph = AGENT_GRAPH_NONE;
	o->deaths = 1;
	/* A heap walk meets the objects found at start by their tags; cleared,
	 * it would give them other ids, and they would count twice; never
	 * recorded, the walks would write each as new. */
	if (o->graph != AGENT_GRAPH_NONE) {
		if (o->start_set && o->start != AGENT_START_ALL) {
			snprintf(err, errlen, "mode=sample: start=%s needs graph=none (a heap walk "
					      "meets the objects found at start by their tags)",
				 agent_start_name(o->start));
			return -EINVAL;
		}
		o->start = AGENT_START_ALL;
	}
	return 0;
}

int agent_opts_parse(struct agent_opts *o, const char *s, char *err, size_t errlen)
{
	defaults(o);
	if (err && errlen)
		err[0] = 0;
	if (!s || !*s)
		return 0;
	char *copy = strdup(s);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int rc = 0;
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save))
		rc = parse_item(o, item, err, errlen);
	free(copy);
	if (!rc)
		rc = check_sample(o, err, errlen);
	if (!rc && o->mode == AGENT_MODE_COUNT) { /* no objects in this mode */
		o->graph = AGENT_GRAPH_NONE;
		o->deaths = 0;
	}
	if (!rc && o->count_sites) { /* per-site counters have no paths to improve */
		o->hot = 0;
		o->profile[0] = 0;
	}
	return rc;
}

int agent_opts_wants_graph(const struct agent_opts *o, uint32_t gc, int full)
{
	switch (o->graph) {
	case AGENT_GRAPH_EVERY:
		return 1;
	case AGENT_GRAPH_NTH:
		return gc % o->graph_every == 0;
	case AGENT_GRAPH_FULL:
		return full;
	case AGENT_GRAPH_NONE:
		return 0;
	}
	return 0;
}

int agent_opts_gc_wait(const struct agent_opts *o)
{
	return o->gc_wait && o->mode == AGENT_MODE_FULL && o->graph != AGENT_GRAPH_NONE;
}

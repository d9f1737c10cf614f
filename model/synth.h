/* synth.h - `heapfs synth`: deterministic synthetic traces of the papers'
 * scenarios (multicache, buggystack, company, churn, gcstress, leakdrops).
 *
 * A scenario is a small simulated Java program over a simulated heap with
 * HotSpot-like 64-bit compressed-oops object layouts.  Every GC of a
 * synthetic trace carries roots and the full object graph; liveness is
 * decided by marking from the roots, so the graph, the deaths and the
 * heap sizes always agree.  docs/scenarios.md lists, per scenario and
 * parameters, the exact object counts that can be checked.
 *
 * Determinism: the same (scenario, objects, gcs, seed) gives a
 * byte-identical file.  The seed only changes values (identity hash codes,
 * array lengths, which thread allocates what), never object counts or the
 * GC timeline.
 *
 * Ownership: nothing is retained between calls; err buffers belong to the
 * caller.
 */
#ifndef HEAPFS_SYNTH_H
#define HEAPFS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

struct synth_opts {
	uint64_t objects;  /* -n; 0 = the scenario's default */
	uint32_t gcs;      /* -g; 0 = the scenario's default */
	uint64_t seed;     /* --seed */
};

/* objects = 0, gcs = 0, seed = 1. */
void synth_opts_init(struct synth_opts *o);

/* The scenarios, in a fixed order: i in [0, synth_scenario_count()). */
size_t synth_scenario_count(void);
const char *synth_scenario_name(size_t i);
/* One line: what the scenario builds and what -n means. */
const char *synth_scenario_summary(size_t i);

/* Writes the scenario's trace to out_path (through a temporary file beside
 * it that is renamed over it at the end, model/files.h: a failure leaves an
 * existing out_path as it was and no temporary file).
 * Returns 0, or a negative errno with a sentence in err:
 * -ENOENT unknown scenario, -EINVAL objects or gcs out of range,
 * -ENOMEM, or the I/O error of the writer. */
int synth_write(const char *scenario, const struct synth_opts *o, const char *out_path,
		char *err, size_t errlen);

/* `heapfs synth SCENARIO [-n OBJECTS] [-g GCS] [--seed S] -o OUT.htr`;
 * argv[0] is "synth".  Prints errors and usage on stderr.  Returns the
 * process exit code: 0 ok, 1 failure, 2 usage error. */
int synth_cli_main(int argc, char **argv);

#endif

/* winstate.h - a trace's suspicious time windows, computed once: the
 * reachable memory after every GC with a graph (the leak detectors'
 * series) and the five detectors' results (analyses/windows.h).
 *
 * Reachable memory per GC (section 3.2.1 of the windows paper) needs the
 * heap state of every GC with a graph, i.e. a rebuild per GC, unless the
 * trace records the GC's reachable summary (format 1.2,
 * HTR_GC_HAS_REACHABLE; `heapfs check` verifies it): it is computed once,
 * on the first call that needs it, each state built from the one before,
 * and kept (8 bytes per GC).  With reachable_every=K only every K-th GC
 * with a graph has a value (recorded or rebuilt).
 *
 * The leak detectors run on the reachable series when at least two GCs
 * have a reachable value, and otherwise on used_after at every GC (a trace
 * without graphs).  The two are never mixed: used_after includes floating
 * garbage, so alternating the two would turn every sample into a false
 * drop or rise.
 *
 * Ownership: the caller owns the struct win_state (win_state_new,
 * win_state_free); the series and results it hands out stay valid until
 * win_state_free.
 *
 * Locking: win_state's lock is a leaf; it is never held while a heap state
 * is built or a detector runs (one thread computes, the others wait on its
 * condition variable: single flight).  Progress counters are atomics.
 */
#ifndef HEAPFS_ANALYSES_WINSTATE_H
#define HEAPFS_ANALYSES_WINSTATE_H

#include <stdint.h>
#include <stdio.h>

#include "model/heap_state.h"
#include "model/trace.h"
#include "windows.h"

enum win_kind { WK_LEAK, WK_NARROW, WK_REGRESSION, WK_GC_OVERHEAD, WK_CHURN, WK_COUNT };

struct win_state;

/* What computing the series needs from its caller. */
struct win_inputs {
	const struct trace *t;
	uint32_t threads;      /* each rebuild's (heap_build_opts.threads) */
	/* The state after GC g from the caller's cache, pinned until put: used
	 * when the trace has one GC to rebuild (a heap dump's state is there
	 * already) instead of a second build of it. */
	int (*state_get)(void *ctx, uint32_t g, const struct heap_state **s);
	void (*state_put)(void *ctx, const struct heap_state *s);
	/* Damage found while rebuilding, for the caller to report. */
	void (*damage)(void *ctx, const struct htr_err *err);
	void *ctx;
};

/* p NULL: the paper's defaults. */
int win_state_new(struct win_state **out, const struct win_params *p);
void win_state_free(struct win_state *w);

/* Reachable bytes per GC index ([ngcs], UINT64_MAX where not computed:
 * no graph, or not sampled), computed on first use.  0, -EIO (damage,
 * remembered: reported once through in->damage), -ENOMEM (retried). */
int win_state_reachable(struct win_state *w, const struct win_inputs *in,
			const uint64_t **reachable);

/* The five detectors' results ([WK_COUNT]), computed on first use. */
int win_state_results(struct win_state *w, const struct win_inputs *in,
		      const struct win_result **res);

/* A time of the trace (ns) on the windows' clock: since the trace's first
 * event (0 before it). */
uint64_t win_rel_ns(const struct trace *t, uint64_t ns);

struct win_state_info {
	const struct win_params *params;
	int reach_ready, reach_busy, reach_err; /* the series: computed, under way, failed */
	int leak_on_reachable;  /* 1: the leak series is reachable memory; 0: used_after */
	uint32_t nsampled;      /* GCs with a reachable value */
	uint32_t leak_points;   /* points of the leak series */
	int program_time;       /* 1: gc-overhead and churn ran on the program's own
	                           time, the recorder's removed_ns taken out */
	uint64_t removed_ns;
	uint64_t done, total;   /* progress of the series */
};
/* What the files and status say about the computation (the counts are
 * meaningful once the results are ready). */
void win_state_info(struct win_state *w, struct win_state_info *out);

#endif

/* engine.h - the analyses of one open trace: its heap states, its
 * classifier registry, the windows and ad-hoc groups, and the one typed
 * cache every analysis result goes through.
 *
 * The front end (fs/) holds one struct engine per mount and asks it for
 * results; the engine knows nothing of paths or text.  Results are keyed
 * by struct result_key (what, which GC(s), which classifier, which group
 * chain); eng_result_get is the only place that turns a key into the
 * cache's own key, so two kinds of result can never share one.
 *
 * The cache (analyses/rcache.h) is shared: fs keeps its rendered files in
 * it too, under keys that never start with "\x01" as every result key
 * does.  One budget for both is deliberate: a dominator tree (16 B per
 * object) in a separate small budget would be evicted and recomputed on
 * every read that needs it.
 *
 * Locks: the state cache, the result cache, the registry, the windows and
 * the ad-hoc registry each have their own leaf lock; err_lock guards
 * last_error.  No lock is held across a state build or a computation.
 *
 * Ownership: the engine owns everything it points to except progress
 * (borrowed); eng_destroy frees it all.  Fields are set up by eng_open
 * and are immutable afterwards, apart from what their own locks guard.
 */
#ifndef HEAPFS_ANALYSES_ENGINE_H
#define HEAPFS_ANALYSES_ENGINE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "analyses/classify.h"
#include "analyses/rcache.h"
#include "analyses/suspects.h"
#include "model/heap_state.h"
#include "model/htr_reader.h"
#include "model/state_cache.h"
#include "model/trace.h"

struct win_state;
struct adhoc;

struct engine {
	struct trace *trace;        /* owned; immutable after open */
	struct state_cache *states; /* owned; own lock */
	struct rcache *rc;          /* owned; own lock: results (and fs's rendered files) */
	struct cls_registry reg;    /* owned; own lock */
	int reg_ready;              /* reg initialized (for cleanup) */
	uint64_t state_budget;      /* bytes of heap states kept */
	FILE *progress;             /* borrowed; where state failures are reported, or NULL */
	pthread_mutex_t err_lock;
	char last_error[600];       /* err_lock; "" = none */
	struct win_state *win;      /* owned; analyses/winstate.h, own lock (a leaf) */
	struct adhoc *adhoc;        /* owned; analyses/adhoc.h, own lock (a leaf) */
	struct sus_params sus;      /* suspects thresholds; immutable after open */
	uint32_t threads;           /* threads one analysis uses (>= 1); immutable */
};

/* What an analysis result is. */
enum result_kind {
	RES_CENSUS,          /* gci: objects per classifier key at a GC */
	RES_DIFF_CENSUS,     /* gci against gci2 */
	RES_CLASSIFICATION,  /* gci, chain, cls: the children of a classification */
	RES_HIER_TRIE,       /* gci, chain, cls: every level of a hierarchy classifier */
	RES_GROUP_TOTALS,    /* gci, chain: a group's counts and bytes */
	RES_GROUP_DEEP,      /* gci, chain: a group's transitive closure metrics */
	RES_GROUP_RETAINED,  /* gci, chain: its transitive and GC closure metrics */
	RES_CLOSURE_TABLE,   /* gci, chain, cls: closure columns of a classification */
	RES_DOMINATORS,      /* gci: the dominator tree */
	RES_ROOT_PATHS,      /* gci: each GC root's name, sorted */
	RES_ROOT_LABELS,     /* gci, variant: which roots reach each object */
	RES_DS_ROLES,        /* gci: data-structure roles */
	RES_DS_HEADS,        /* gci: data-structure heads */
	RES_SUSPECTS,        /* the whole trace: the suspects findings */
	RES_KINDS_
};

struct result_key {
	enum result_kind what;
	uint32_t gci, gci2;        /* the GC(s), 0 where the kind has none */
	uint32_t cls;              /* classifier id, 0 where the kind has none */
	int variant;               /* the kind's own variant, 0 if none */
	const struct chain *chain; /* the group's chain, or NULL (borrowed) */
};

struct win_params;

struct eng_opts {
	FILE *progress;               /* progress and failures of long work; NULL: quiet */
	const char *features;         /* feature map file (README), or NULL */
	const char *classifiers;      /* classifier definitions file, or NULL */
	const struct win_params *windows; /* copied; NULL: the paper's defaults */
	const struct sus_params *suspects; /* copied; NULL: the defaults */
	int hprof_layout;             /* heap dumps' object sizes (model/hprof.h) */
	uint32_t threads;             /* threads one analysis uses (analyses/parallel.h:
	                                 0: HEAPFS_THREADS, else every core) */
	uint64_t state_budget;        /* bytes of heap states kept */
	uint64_t result_budget;       /* bytes of results (and fs's rendered files) kept */
};

/* Opens the trace (indexing it, with progress) and sets up everything the
 * engine holds: the state and result caches, the classifier registry
 * (built-ins, the analysis classifiers of classify_ext.h, then the
 * options' definitions), the windows and the ad-hoc groups.  On failure
 * err says what and the engine is left destroyed.  Pair with eng_destroy. */
int eng_open(struct engine *en, const char *trace_path, const struct eng_opts *o,
	     struct htr_err *err);
/* Sets up the lock; everything else is zero (an engine for tests that
 * fill in the fields themselves).  Pair with eng_destroy. */
void eng_init(struct engine *en);
/* Frees what the engine owns and zeroes it; a zeroed or destroyed engine
 * may be destroyed again. */
void eng_destroy(struct engine *en);

/* The result k names, computed by fn(ctx) if the cache does not have it
 * (rcache_get's single flight and pinning: release with eng_put, which
 * takes NULL too). */
int eng_result_get(struct engine *en, const struct result_key *k, rc_compute_fn fn, void *ctx,
		   struct rc_entry **e);
void eng_put(struct engine *en, struct rc_entry *e);

/* State after GC gci, pinned; a failure is recorded for eng_last_error
 * (and written to progress) and returned as -EIO (or -ENOMEM). */
int eng_state_get(struct engine *en, uint32_t gci, const struct heap_state **s);
void eng_state_put(struct engine *en, const struct heap_state *s);

void eng_set_error(struct engine *en, const struct htr_err *err);
/* The last recorded error into buf; 1 if there was one. */
int eng_last_error(struct engine *en, char *buf, size_t len);

/* Reachable bytes per GC index ([ngcs], UINT64_MAX where not computed:
 * no graph, or not sampled; analyses/winstate.h), computed on first use.
 * Valid until eng_destroy.  0, -EIO (damage, message in eng_last_error),
 * -ENOMEM. */
int eng_reachable_series(struct engine *en, const uint64_t **reachable);
/* The five window detectors' results ([WK_COUNT]), computed on first
 * use (they need the reachable series). */
struct win_result;
int eng_windows_results(struct engine *en, const struct win_result **res);

/* 1 if GC gci's trace carries the object graph. */
int eng_gc_has_graph(const struct engine *en, uint32_t gci);

#endif

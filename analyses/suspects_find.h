/* suspects_find.h - the findings of the suspects report as data: what is
 * wrong with the program's memory, each claim with the numbers and the ids
 * (GC indexes, classifier keys, object ids) that back it.  No text and no
 * tree paths here: fs/render_suspects.c turns a report into the `suspects`
 * and `suspects.json` files, and builds the paths a claim points to from
 * its ids.  The decisions themselves (thresholds, rankings) are in
 * analyses/suspects.h; the sections and their severities are described in
 * fs/render_suspects.h.
 *
 * A report is one flat, position-independent block of bytes (a header,
 * then arrays whose cross references are indexes, and a string pool whose
 * strings are referred to by offset): sus_find writes it into a struct
 * buf, sus_report_view gives the typed view over it.  Flat so that it can
 * be kept, as is, in a byte cache shared by concurrent readers (no
 * pointers to fix up, nothing to free but the bytes), and so that the two
 * files print the same report without re-deriving it.
 *
 * Inputs: sus_find reads heap states, cached analyses (dominators,
 * data-structure roles, classifications, the suspicious windows) and two
 * files of the tree (a group's roots and paths, which the claims quote)
 * through struct sus_source, so that this module depends only on model/
 * and analyses/.
 *
 * Ownership: sus_find appends to a caller-owned buf; a struct sus_report
 * borrows the bytes it views (valid while they are); struct sus_source
 * borrows everything it points to; pins handed out by its callbacks are
 * released through its release callback before sus_find returns.
 */
#ifndef HEAPFS_ANALYSES_SUSPECTS_FIND_H
#define HEAPFS_ANALYSES_SUSPECTS_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/classify.h"
#include "analyses/dominators.h"
#include "analyses/roles.h"
#include "analyses/suspects.h"
#include "analyses/windows.h"
#include "model/buf.h"
#include "model/heap_state.h"
#include "model/htr_reader.h"
#include "model/trace.h"

/* ---- the report ---- */

/* Finding kinds, in the order that breaks severity ties. */
enum sus_kind { SUS_LEAK, SUS_GC_OVERHEAD, SUS_CHURN, SUS_BIG, SUS_BLOAT, SUS_KIND_COUNT };

/* What was checked, listed before the findings. */
enum sus_check_what {
	SUS_CHECK_NO_GC,     /* the trace has no GC: nothing was checked */
	SUS_CHECK_SCOPE,     /* what was checked: big_pct, graph */
	SUS_CHECK_NO_WINDOW, /* a window detector found nothing: window, reason */
	SUS_CHECK_QUIET,     /* none of the three window detectors found anything */
};

struct sus_check {
	uint32_t what;    /* enum sus_check_what */
	uint32_t window;  /* NO_WINDOW: SUS_LEAK, SUS_GC_OVERHEAD or SUS_CHURN */
	uint32_t big_pct; /* SCOPE: the big-retainer threshold (suspect_big_pct) */
	uint32_t graph;   /* SCOPE: 1 when a GC has a graph (big retainers and
	                     bloat were checked at the last such GC) */
	uint32_t reason;  /* NO_WINDOW: string, the detector's reason */
};

struct sus_finding {
	uint32_t kind;      /* enum sus_kind */
	uint32_t severity;  /* the order of the findings (fs/render_suspects.h) */
	uint32_t start_gci, end_gci; /* the window; SUS_BIG, SUS_BLOAT: the GC
	                                checked, in both */
	uint32_t pct;       /* GC_OVERHEAD: % of the time in GC (rounded);
	                       BIG: the threshold, % of the reachable heap */
	uint32_t first_claim, nclaims; /* its claims: claims[first .. first + n) */
	uint32_t reserved;
	double per_s;       /* LEAK: growth, bytes/s; CHURN: bytes freed/s */
	uint64_t bytes;     /* LEAK: growth; CHURN: bytes freed; BIG: reachable
	                       bytes at the GC */
	uint64_t reachable; /* LEAK: reachable bytes at the window's end */
	uint64_t gc_ms;     /* GC_OVERHEAD: time in GC in the window */
};

/* Claims.  A "group" is a type group (site 0, key: a key of by-type) or
 * an allocation-site group (site 1, key: a key of by-site's first level,
 * the allocating frame), at GC gci; "type" is a key of by-type.  Level 1
 * claims detail the level 0 claim before them. */
enum sus_claim_what {
	/* leak */
	SUS_C_LEAK_WINDOW,      /* the leak window */
	SUS_C_LEAK_CAUTION,     /* it starts at the first GC: maybe start-up */
	SUS_C_LEAK_GROWERS,     /* the groups below are ranked at gci */
	SUS_C_GROUP_GROWTH,     /* group grew by net_bytes, net_count; n: 1 when
	                           gci has a graph */
	SUS_C_GROUP_RETAINED,   /* group retains bytes */
	SUS_C_GROUP_ROOT,       /* root (ir keys) reaches count of total members */
	SUS_C_GROUP_HOLDER,     /* key2 (a by-ds key, n: 1 element-of, 0
	                           member-of) covers count members */
	SUS_C_HOLDER_SITE,      /* heads of type key2 allocated at the site
	                           group key hold count members (of the group of
	                           the claims before) */
	SUS_C_GROUP_PATH,       /* a path from the root (ir keys, none: any
	                           root) to a member: hops */
	SUS_C_GROUP_NOT_SHARED, /* its n root objects retain bytes together, no
	                           more than alone */
	SUS_C_GROUP_SHARED,     /* its n root objects retain bytes together,
	                           bytes2 alone; key2: their one type when its
	                           group is exactly them, else KS_NO_KEY */
	/* gc-overhead */
	SUS_C_GCO_WINDOW,       /* the GC-overhead window */
	SUS_C_GCO_SURVIVORS,    /* the groups below survived the most, at gci */
	SUS_C_GROUP_SURVIVED,   /* count objects survived, bytes: byte-GCs */
	/* churn */
	SUS_C_CHURN_WINDOW,     /* the churn window */
	SUS_C_CHURN_BORN_DEAD,  /* pct of the bytes allocated died inside it */
	SUS_C_GROUP_CHURNED,    /* count objects, bytes, born and dead inside;
	                           n: 1 when some members are alive at gci;
	                           pct 1: a site in the JDK, and key2 the
	                           string of the caller that allocated most
	                           through it */
	/* big retainers */
	SUS_C_BIG_INTRO,        /* the objects that retain the most, at gci */
	SUS_C_BIG_OBJECT,       /* object (id) of type key retains bytes, pct */
	SUS_C_ACCUMULATION,     /* n levels down: object of type key retains
	                           bytes over count children */
	SUS_C_ACCUMULATED,      /* count objects of type key (bytes: what those
	                           not below another of their type retain)
	                           accumulated below object (type key2: the
	                           accumulation point, or the big object
	                           itself), held by the roots named by string
	                           n ("" when none points at the big object) */
	SUS_C_BIG_TYPE,         /* type key retains bytes together, pct */
	SUS_C_BIG_TYPE_SPLIT,   /* its objects one by one retain only bytes */
	SUS_C_BIG_NONE,         /* nothing retains pct % of the heap */
	/* bloat */
	SUS_C_OVERHEAD,         /* count structures of type key: bytes of
	                           structure for bytes2 of data, pct overhead */
	SUS_C_EMPTY,            /* count of total structures of type key hold
	                           at most one element: bytes */
	SUS_C_SPARSE,           /* count of total collections of type key
	                           (non-empty) use under pct % of their slots:
	                           bytes of unused slots (all of the type's) */
	SUS_C_NO_BLOAT,         /* nothing over pct overhead, count: the
	                           empty-structure threshold */
	SUS_C_HEALTH,           /* instance health: shares */
	/* a recording of samples, without objects (JFR): key, key2 are
	 * strings (the type's and the allocating frame's names) */
	SUS_C_CANDIDATES,       /* count old-object samples (leak candidates),
	                           alive when the recording was written */
	SUS_C_CANDIDATE,        /* count of total samples are of type key
	                           allocated at key2; n of them inside the
	                           window */
	SUS_C_CANDIDATE_PATH,   /* the oldest one's path from its root: hops */
	SUS_C_CANDIDATE_HOLDER, /* count of total samples are held through the
	                           static field key ("Class.field"); key "":
	                           no sample has a recorded path */
	SUS_C_SAMPLED_SITES,    /* count allocation samples in the window,
	                           standing for bytes (an estimate) */
	SUS_C_SAMPLED_SITE,     /* type key allocated at key2: count samples,
	                           bytes estimated */
	SUS_C_COUNT_
};

struct sus_claim {
	uint16_t what;      /* enum sus_claim_what */
	uint8_t level;      /* 0, or 1: a detail of the claim before */
	uint8_t site;       /* group claims: 1 a site group, 0 a type group */
	uint32_t gci;       /* the GC of the group, object or type (the
	                       window's end for window claims) */
	uint32_t key, key2; /* see what */
	uint32_t pct, n;
	uint32_t ir_first, nir;       /* GROUP_ROOT, GROUP_PATH: the root, its
	                                 by-indirect-root keys from the top */
	uint32_t item_first, nitems;  /* GROUP_PATH: hops; HEALTH: shares */
	uint32_t reserved;
	uint64_t object;    /* an object id */
	uint64_t count, total, bytes, bytes2;
	int64_t net_bytes, net_count;
};

/* One object on a path from a GC root: how it is reached (via: the root
 * for the first hop, then a field name or "[i]") and its type's name, as
 * the group's paths file writes them. */
struct sus_hop {
	uint32_t via, type; /* strings */
};

/* One by-instance-health child: bytes, pct of all the classified bytes. */
struct sus_share {
	uint32_t key;  /* a key of by-instance-health */
	uint32_t pct;
	uint64_t bytes;
};

/* A typed view of a report (every pointer into the viewed bytes). */
struct sus_report {
	uint32_t nchecks, nfindings, nclaims, nir_keys, nhops, nshares;
	const struct sus_check *checks;
	const struct sus_finding *findings; /* most severe first */
	const struct sus_claim *claims;
	const uint32_t *ir_keys;            /* keys of by-indirect-root */
	const struct sus_hop *hops;
	const struct sus_share *shares;
	const char *strings;                /* NUL-terminated, by offset */
	uint32_t strings_len;
};

/* 0, or -EBADMSG when data is not a whole report (every index and offset
 * is checked to be in range). */
int sus_report_view(const void *data, size_t len, struct sus_report *r);

/* The string at off ("" when out of range). */
const char *sus_str(const struct sus_report *r, uint32_t off);

/* ---- the inputs ---- */

/* The window detectors' results (analyses/windows.h), computed by the
 * caller; NULL fields are never read when found is 0. */
struct sus_windows {
	const struct win_result *leak, *gc_overhead, *churn;
	int leak_spans;            /* the leak window's first and last GC differ */
	const uint64_t *reachable; /* [ngcs] reachable bytes, UINT64_MAX where
	                              unknown; NULL: no series (used_after) */
};

/* by-indirect-root of a set of objects, as a trie: node 0 is the set
 * itself; every other node has its parent (< its index), its key and the
 * members with a root path through it. */
struct sus_ir_node {
	uint32_t parent, key;
	uint64_t count;
};

/* Data-structure roles of a GC (analyses/roles.h): roles and owners of
 * every object, the heads' dense indexes. */
struct sus_ds_roles {
	uint32_t nheads;
	const uint16_t *roles;
	const uint32_t *owner;
	const uint32_t *head_obj;
};

/* Callbacks reporting what a file of the tree holds, one call per item;
 * the strings are lent for the call (the report keeps copies). */
typedef int (*sus_hop_fn)(void *ctx, const char *via, size_t via_len, const char *type,
			  size_t type_len);
typedef int (*sus_owner_fn)(void *ctx, uint64_t id, uint64_t retained);

/* Where sus_find gets what it reads.  Every callback returns 0 or a
 * negative errno; a callback that hands out a pin (void **pin) lends what
 * it returns until release(ctx, pin). */
struct sus_source {
	void *ctx;
	const struct trace *trace;
	struct cls_registry *reg;     /* classifiers type, site, indirect-root,
	                                 ds and instance-health must exist */
	const struct sus_params *p;
	/* Threads the report may use (analyses/parallel.h): with more than
	 * one, the big-retainer and bloat sections' three independent
	 * analyses (dominators, data-structure heads, instance health) are
	 * computed at once first, through the callbacks below, which must
	 * then be safe to call from several threads; 0 or 1: one by one. */
	uint32_t threads;

	int (*windows)(void *ctx, struct sus_windows *w);
	int (*state_get)(void *ctx, uint32_t gci, const struct heap_state **s);
	void (*state_put)(void *ctx, const struct heap_state *s);
	void (*release)(void *ctx, void *pin);
	/* classification of the chain's group at gci by cls, rows by key */
	int (*classification)(void *ctx, uint32_t gci, const struct chain *ch, uint32_t cls,
			      void **pin, const struct cls_row **rows, uint32_t *nrows);
	int (*group_totals)(void *ctx, uint32_t gci, const struct chain *ch, struct cls_row *row);
	/* dominator tree of gci (arrays borrowed) */
	int (*dominators)(void *ctx, uint32_t gci, void **pin, struct dominators *d);
	int (*ds_roles)(void *ctx, uint32_t gci, void **pin, struct sus_ds_roles *v);
	/* appends struct sus_ir_node[] for members (a bitset over s) to out
	 * (sus_find's) */
	int (*ir_trie)(void *ctx, uint32_t gci, const struct heap_state *s, const uint64_t *members,
		       struct buf *out);
	/* The first path of the group's paths file, or of the paths of its
	 * members the root (by-indirect-root keys from the top, nroot 0: any
	 * root) reaches: hop per object from the root.  No call: no path. */
	int (*group_path)(void *ctx, uint32_t gci, int site, uint32_t key, const uint32_t *root,
			  uint32_t nroot, sus_hop_fn hop, void *hop_ctx);
	/* The rows of the group's roots file: the root objects it is
	 * reachable from, with their retained sizes. */
	int (*group_owners)(void *ctx, uint32_t gci, int site, uint32_t key, sus_owner_fn owner,
			    void *owner_ctx);
	/* a damaged trace frame met while reading allocation events */
	void (*trace_error)(void *ctx, const struct htr_err *err);
};

/* The report of src's trace, appended to out (flat; view it with
 * sus_report_view).  0, -ENOMEM, -EIO (a damaged trace, or a classifier
 * missing), -EINVAL (suspect_top above 16 with a leak window), or what a
 * callback returned; out may then hold part of a report. */
int sus_find(const struct sus_source *src, struct buf *out);

#endif

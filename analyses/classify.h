/* classify.h - classifiers, groups, filters, transformers and the per-GC
 * census (classification paper §3).
 *
 * A group is (GC, chain of steps): the root group of a GC has an empty
 * chain; gc/NNN/by-type/Foo/pointed-from/by-type/Bar has the chain
 * [type=Foo, pointed-from, type=Bar].  Steps:
 *   ST_CLS        keep the objects a classifier puts under a key; for a
 *                 one-to-hierarchy classifier the step holds the key path
 *                 (by-site/A/B: allocated in A called from B)
 *   ST_FILTER     only-<filter>/: keep the objects a filter accepts
 *   ST_POINTS_TO / ST_POINTED_FROM   transformers: the objects the group
 *                 references / is referenced by (paper §3.7)
 * Within one segment (the steps after the last transformer) a classifier
 * is never repeated, so chains are finite; a transformer starts a new
 * segment (the paper's Figure 15: type, pointed-from, type, ...), and the
 * number of steps is bounded by CHAIN_STEPS_MAX.
 *
 * Diff groups (gc/N/diff/M/...) carry diff_gci = M: their objects are the
 * group's objects at N (born: not alive at M, perm: alive at both) and at M
 * (died: not alive at N).  Every count below has three columns,
 * COL_LIVE (or born), COL_PERM, COL_DIED; a plain group uses COL_LIVE only.
 *
 * Classifiers are rows of a registry: the predefined ones (type, package,
 * site, thread, age, kind, array-length, size, birth, feature, filters),
 * the predefined expression classifiers (collection-health,
 * instance-health) and user-defined ones (analyses/expr.h) added at run
 * time.  A classifier gives every object a list of keys: one key
 * (one-to-one), a set (one-to-many), a path (one-to-hierarchy), or for a
 * filter one key when it accepts the object.  Keys index the classifier's
 * keyspace (analyses/keyspace.h): stable names for the whole mount.
 *
 * Two ways to evaluate, same results:
 *   - info level: when every step and the classifier depend only on an
 *     object's interned objinfo (type, site, thread, size, array length),
 *     counts roll up from a tally (objects per objinfo: the census) without
 *     touching objects again;
 *   - object level: otherwise, one pass over the heap state's dense index
 *     with the group as a bitset (age, birth, reachability, references,
 *     transformers, per-object expressions).
 * Parents never count an object twice (paper §3.6): a group's count is the
 * number of distinct objects in it, never a sum of its children.
 *
 * Locking: the registry lock (reg->lock, a leaf) guards adding/removing
 * classifiers and preparing a classifier's trace-level tables; prepared
 * tables are immutable.  Keyspaces have their own leaf lock.
 *
 * Ownership: the registry owns its classifiers, their expressions and
 * keyspaces; results are appended to caller-owned bufs.
 */
#ifndef HEAPFS_ANALYSES_CLASSIFY_H
#define HEAPFS_ANALYSES_CLASSIFY_H

#include <pthread.h>
#include <stdint.h>

#include "analyses/expr.h"
#include "analyses/features.h"
#include "analyses/keyspace.h"
#include "model/buf.h"
#include "model/heap_state.h"
#include "model/symbols.h"
#include "model/trace.h"

#define CLS_MAX 256
#define CLS_NONE UINT32_MAX
#define CHAIN_STEPS_MAX 16
#define CHAIN_KEYS_MAX 160
#define SMALL_ARRAY_MAX 254 /* kind: small array < 255 elements */

enum cls_card { CARD_ONE, CARD_MANY, CARD_HIER, CARD_FILTER, CARD_PARTS };

/* Predefined classifiers: fixed ids (registry rows in this order). */
enum cls_builtin {
	CB_TYPE, CB_PACKAGE, CB_SITE, CB_THREAD, CB_AGE, CB_KIND, CB_ARRAY_LENGTH, CB_SIZE,
	CB_BIRTH, CB_FEATURE, CB_F_ARRAYS, CB_F_INSTANCES, CB_F_REACHABLE, CB_F_UNREACHABLE,
	CB_COUNT_
};
#define CB_EXPR (-1)
#define CB_EXT (-2)    /* registered with cls_register_ext */

/* ---- classifiers over a per-GC analysis ----
 *
 * Some classifiers need a result computed once per heap state (roles, root
 * labels, ...) that the engine keeps in its result cache.  classify.c knows
 * nothing of that cache: such a classifier is registered with three
 * callbacks.  An evaluation pass (one classification, one group's totals
 * or members, at one GC) calls acquire the first time it needs the
 * classifier's keys at that GC, keys once per object, and release when the
 * pass ends.  The handle is used by one thread only.  At a GC without a
 * graph (acquire: -EINVAL), e.g. the other side of a diff, objects get no
 * keys: they count in the group, under no child.
 *
 * Multi-path hierarchies (multi_path = 1 with CARD_HIER): keys returns
 * several paths, each terminated by CLS_PATH_END (by-indirect-root: an
 * object reached from two roots sits under both).  An object counts once
 * per child at every level whatever the number of its paths through that
 * child (paper §3.6).  CARD_MANY keys must be distinct (the callbacks
 * ensure it). */
#define CLS_PATH_END (UINT32_MAX - 1)

struct cls_keys;   /* a pass's key list */
/* Appends a key; -ENOMEM. */
int cls_keys_add(struct cls_keys *kb, uint32_t key);

struct cls_ext_ops {
	/* The analysis of GC gci for classifier keyspace ks (keys may be
	 * interned into it).  -EINVAL when the GC has no such analysis. */
	int (*acquire)(void *ctx, struct keyspace *ks, uint32_t gci, void **h);
	/* Keys of object o (dense index) of state s into kb. */
	int (*keys)(void *h, const struct heap_state *s, uint32_t o, struct cls_keys *kb);
	void (*release)(void *ctx, void *h);
};

struct cls_ext {
	const char *name, *about;
	enum cls_card card;          /* CARD_ONE, CARD_MANY, CARD_HIER or CARD_FILTER */
	int multi_path;              /* CARD_HIER: several paths per object */
	int needs_graph;
	const char *const *fixed;    /* names interned first (keys 0..nfixed-1), may be NULL */
	uint32_t nfixed;
	const struct cls_ext_ops *ops;
	void *ctx;                   /* borrowed: must outlive the registry */
};

struct cls_def {
	char name[64];
	char about[200];
	enum cls_card card;
	int per_object;        /* needs the object, not only its objinfo */
	int needs_graph;       /* only at GCs with a graph */
	int builtin;           /* enum cls_builtin, or CB_EXPR */
	struct expr *ex;       /* CB_EXPR: owned */
	char *source;          /* CB_EXPR: the definition text, owned */
	int user;              /* defined through classifiers/ or -o classifiers */
	int removed;           /* atomic: hidden, id kept so old nodes stay valid */
	int multi_path;        /* CARD_HIER with several paths per object (CB_EXT) */
	const struct cls_ext_ops *ext_ops; /* CB_EXT, borrowed */
	void *ext_ctx;         /* CB_EXT, borrowed */
	const char *const *ext_fixed; uint32_t ext_nfixed; /* CB_EXT, borrowed */
	struct keyspace ks;
	/* trace-level tables, built once under reg->lock (prepared = 1) */
	int prepared;
	uint32_t *path_off;    /* site/package: per site/type id offsets into path_keys */
	uint32_t *path_keys;
	uint32_t npaths;
	uint32_t unknown_key;  /* key of objects the tables do not cover */
	uint32_t *feat_off, *feat_keys; /* feature: per site id, the feature keys */
	/* CB_EXPR, under reg->lock: per GC index, the objects whose evaluation
	 * failed and why (classifiers/errors); NULL until one did */
	struct cls_fail *fails;
};

struct cls_registry {
	const struct trace *t;             /* borrowed */
	pthread_mutex_t lock;
	struct cls_def *defs[CLS_MAX];     /* append-only; lock to add */
	uint32_t ndefs;                    /* atomic */
	struct feature_map fm;             /* -o features, may be empty */
	int has_features;
	char errors[8192];                 /* lock: log of refused definitions */
	/* members of an ad-hoc group (ST_ADHOC step, version id) in
	 * state s, OR-ed into bits; set once at open (fs/render_closure.c). */
	int (*adhoc_bits)(void *ctx, uint32_t version, const struct heap_state *s, uint64_t *bits);
	void *adhoc_ctx;
};

/* Creates the registry with the predefined classifiers; features may be
 * NULL (no by-feature).  Fails only on allocation. */
int cls_registry_init(struct cls_registry *r, const struct trace *t, struct feature_map *features);
void cls_registry_destroy(struct cls_registry *r);

uint32_t cls_count(const struct cls_registry *r);
/* The classifier, or NULL for an id out of range or removed. */
const struct cls_def *cls_get(const struct cls_registry *r, uint32_t id);
/* Id of a live classifier by name, or CLS_NONE. */
uint32_t cls_find(const struct cls_registry *r, const char *name);
/* Builds the classifier's trace-level tables if not yet done. */
int cls_prepare(struct cls_registry *r, uint32_t id);

/* Adds (or replaces) a user-defined classifier from its expression text.
 * -EINVAL with "line L, column C: what" in msg when it does not compile or
 * the name is taken by a predefined classifier. */
int cls_define(struct cls_registry *r, const char *name, const char *src, size_t len, char *msg,
	       size_t msglen);
/* Registers a classifier over a per-GC analysis; its id in *id (may be
 * NULL).  -EEXIST for a name already taken, -ENOSPC when full. */
int cls_register_ext(struct cls_registry *r, const struct cls_ext *x, uint32_t *id);
/* Loads a definitions file (NAME = EXPR ...), a regular file of at most
 * FILES_OPTION_MAX bytes (model/files.h).  msg: "line L, column C: what"
 * or what is wrong with the file, never quoting its text and without its
 * name (the caller names the option and the file). */
int cls_define_file(struct cls_registry *r, const char *path, char *msg, size_t msglen);
/* Removes a user-defined classifier (-ENOENT, -EPERM for predefined). */
int cls_undefine(struct cls_registry *r, const char *name);
/* Appends a line to the error log (classifiers/errors). */
void cls_log_error(struct cls_registry *r, const char *line);
/* Where an expression classifier failed at one GC: objects is the most
 * objects of that GC one classification by it has met (classifying the
 * GC's whole heap meets them all), with the first reason (line and column
 * 0 when the reason has no place); sum_overflow when the bytes of a part
 * added up beyond UINT64_MAX. */
struct cls_failure {
	const char *classifier;
	uint32_t gci;
	uint64_t objects;
	uint32_t line, col;
	const char *why;       /* NULL: evaluation failed, no reason kept */
	int sum_overflow;
};
typedef int (*cls_failure_fn)(void *ctx, const struct cls_failure *f);
/* The error log (definition errors, one per line) appended to log, then
 * fn per classifier and GC with failures, in definition and GC order.
 * Runs under the registry lock: fn must not call into the registry.
 * Stops at fn's first non-zero return and returns it. */
int cls_errors(struct cls_registry *r, struct buf *log, cls_failure_fn fn, void *ctx);

/* ---- chains ---- */

enum step_op { ST_CLS = 1, ST_FILTER, ST_POINTS_TO, ST_POINTED_FROM,
	/* fs/render_closure.c: closure/transitive/, closure/retained/
	 * and ad-hoc groups (groups/NAME: the step's cls holds the group's
	 * version id).  All three are transformers: they start a new segment. */
	ST_CLOSURE_TRANSITIVE, ST_CLOSURE_RETAINED, ST_ADHOC };

struct chain_step {
	uint8_t op;
	uint8_t nkeys;         /* ST_CLS: length of the key path (1 unless hierarchy) */
	uint16_t key0;         /* first key in chain.keys */
	uint32_t cls;          /* ST_CLS, ST_FILTER */
};

struct chain {
	uint32_t depth, nkeys;
	uint32_t diff_gci;     /* UINT32_MAX: not a diff group */
	struct chain_step steps[CHAIN_STEPS_MAX];
	uint32_t keys[CHAIN_KEYS_MAX];
};

void chain_init(struct chain *c);
/* 1 if cls is used in the current segment (after the last transformer). */
int chain_uses(const struct chain *c, uint32_t cls);
/* Appends a step; -E2BIG when the chain is full. */
int chain_push(struct chain *c, enum step_op op, uint32_t cls, uint32_t key);
/* Appends a key to the last (hierarchy) step. */
int chain_extend(struct chain *c, uint32_t key);
/* Transformer steps in the chain. */
uint32_t chain_transforms(const struct chain *c);
/* 1 if the chain's last step is a classifier step of cls (a hierarchy level). */
int chain_at_level_of(const struct chain *c, uint32_t cls);
/* A compact text key for caches. */
int chain_key(const struct chain *c, struct buf *out);
/* 1 if the chain and cls (CLS_NONE: none) can be evaluated from tallies. */
int chain_info_level(const struct cls_registry *r, const struct chain *c, uint32_t cls);

/* ---- tallies (the census) ---- */

enum { COL_LIVE = 0, COL_PERM = 1, COL_DIED = 2, NCOLS = 3 };

/* The census of one GC, as one flat blob:
 *   struct census_hdr | struct objinfo[ninfos] | uint64_t counts[ninfos]
 * The infos are a copy, so the census stays valid after the state is
 * evicted (a rebuilt state may intern in another order). */
struct census_hdr {
	uint64_t n, total_bytes, nreachable, reachable_bytes;
	uint64_t unknown_objects, nroots, nedges;
	uint32_t has_graph, ninfos;
};

struct census {
	const struct census_hdr *h;
	const struct objinfo *infos;
	const uint64_t *counts;
};

int census_compute(const struct heap_state *s, struct buf *out);
/* Views a blob made by census_compute; -EINVAL if it is not one. */
int census_view(const void *data, size_t len, struct census *c);

/* The diff census of states N and M: per objinfo of N, born and perm
 * counts; per objinfo of M, died counts.  Blob:
 *   u32 ninfos_n, ninfos_m | infos_n | born[n] | perm[n] | infos_m | died[m] */
int diff_census_compute(const struct heap_state *sn, const struct heap_state *sm,
			struct buf *out);

/* Objects per objinfo, in up to three columns (NULL: none). */
struct tally {
	const struct objinfo *infos;
	uint32_t ninfos;
	const uint64_t *col[NCOLS];
};
/* The two tallies of a diff census blob (N side, M side). */
int diff_census_view(const void *data, size_t len, struct tally t[2]);

/* ---- object level ---- */

/* One heap state and, for diff groups, which of its objects are alive in
 * the other state (bitset, NULL for plain groups).  side 0: the state of
 * the group's own GC (live / born / perm), side 1: the other one (died). */
struct objsrc {
	const struct heap_state *s;
	const uint64_t *in_other;
	int side;
};

/* ---- results ---- */

/* One child of a classification: its key and per-column counts/bytes.
 * In a sampled trace (trace.h sample_interval) c and b are estimates:
 * the sums of the members' sample weights (trace_sample_weight), rounded,
 * and s counts the recorded objects (the samples) behind them; elsewhere
 * s equals c.  Analyses that rank or compare groups read c and b, which
 * makes them work on the estimates; renderers say which it is. */
struct cls_row {
	uint32_t key;
	uint32_t reserved;
	uint64_t c[NCOLS], b[NCOLS];
	uint64_t s[NCOLS];
	double ec[NCOLS], eb[NCOLS]; /* sampled traces: the unrounded estimates */
	/* sampled traces at a GC with a graph: the objects of the graph,
	 * exact (model/heap_state.h HS_FLAG_OFF_GRAPH) */
	uint64_t xc[NCOLS], xb[NCOLS];
};

/* Adds n recorded objects of the given size and alloc flags (bytes: their
 * bytes as the classification counts them) to column col of row.  In a
 * sampled trace, objects a heap walk met without a sample
 * (HTR_ALLOC_WALKED) add to the exact columns only, sampled objects off
 * the graph (HS_FLAG_OFF_GRAPH) to the samples and estimates only. */
void cls_row_add(struct cls_row *row, const struct trace *t, int col, uint64_t n, uint64_t bytes,
		 uint32_t flags, uint64_t size);
/* Sampled traces: c and b from the estimates, rounded.  No-op elsewhere. */
void cls_row_settle(struct cls_row *row, const struct trace *t);

/* Rows (sorted by key, non-empty only) of classifying the chain's group by
 * cls, appended to out as struct cls_row[].  If the chain ends at a level of
 * the hierarchy classifier cls, the rows are the next level. */
int classify_tallies(struct cls_registry *r, uint32_t gci, const struct tally *t, uint32_t nt,
		     const struct chain *ch, uint32_t cls, struct buf *out);
/* classify_objects: the loop over the group's objects runs on up to
 * `threads` threads (analyses/parallel.h; the caller's count, 0 or 1: the
 * caller's thread only), each over its own chunks of the objects with
 * its own accumulator; the rows, the keys interned and the failures
 * recorded are those of one thread, for any count.  Classifiers over a
 * per-GC analysis (cls_register_ext), multi-path hierarchies and sampled
 * traces stay on one thread.  The threads share src read-only. */
int classify_objects(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
		     const struct chain *ch, uint32_t cls, uint32_t threads, struct buf *out);

/* Every level of hierarchy classifier cls over the chain's group (the
 * chain ends before the classifier's step): a trie of the key paths its
 * members have, appended to out as struct cls_trie_node[].  Node 0 is the
 * group itself; nodes are breadth-first and the children of a node are
 * nodes first_child .. first_child + nchildren - 1, sorted by key, so a
 * level lists in the order its classification's rows have.  One pass over
 * the members (one per distinct object info where the keys come from the
 * info), however deep the hierarchy: listing a hierarchy's directories
 * costs a pass per classification, not per directory. */
struct cls_trie_node {
	uint32_t parent, key;
	uint32_t first_child, nchildren;
};
int classify_trie(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
		  const struct chain *ch, uint32_t cls, struct buf *out);

/* Totals of the chain's group as one row (key 0). */
int group_totals_tallies(struct cls_registry *r, uint32_t gci, const struct tally *t,
			 uint32_t nt, const struct chain *ch, struct cls_row *row);
int group_totals_objects(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
			 const struct chain *ch, struct cls_row *row);

/* Appends the ids of the group's members in src, ascending, as uint64_t values. */
int group_member_ids(struct cls_registry *r, const struct objsrc *src, const struct chain *ch,
		     struct buf *out);

/* ---- closures (fs/render_closure.c) ---- */

/* The group's members in state s as a bitset over s's dense index (caller
 * frees).  A diff chain is evaluated on s alone. */
int group_members_bits(struct cls_registry *r, const struct heap_state *s, const struct chain *ch,
		       uint64_t **out);

/* The members of the first-level groups cls/keys[0..n) in state s, in
 * one pass over the objects: bits[k] is what group_members_bits gives for
 * the chain of cls and keys[k] (a bitset each, the caller frees them;
 * NULL after a failure).  For one-to-one classifiers keyed per info (type,
 * package, size...) and fewer than 127 groups; -EINVAL for the others. */
int group_members_bits_many(struct cls_registry *r, const struct heap_state *s, uint32_t cls,
			    const uint32_t *keys, uint32_t n, uint64_t **bits);

/* (key, dense index) of every member of the chain's group, for the children
 * of classifying it by cls (the next level when the chain ends at a level of
 * hierarchy classifier cls), appended to out as struct cls_pair[], sorted by
 * key then index.  One-to-many classifiers give an object one pair per key. */
struct cls_pair {
	uint32_t key, obj;
};
int classify_member_pairs(struct cls_registry *r, const struct heap_state *s,
			  const struct chain *ch, uint32_t cls, struct buf *out);

#endif

/* tree.c - paths to nodes, directory tables, attributes and dispatch.
 *
 * Every directory type has one table of fixed children (name, node type,
 * a presence test) and, where the children depend on the trace or on a
 * heap state, one function to list them and one to look one up.  Lookup,
 * getattr and readdir all go through these tables, so a name that is listed
 * is a name that resolves, and nothing else does.
 *
 * Rendered files are cached in fs->en.rc keyed by their canonical path (the
 * path with every symlink resolved), which is also what the inode number is
 * hashed from, followed by the ids of the user classifiers it goes through.
 * Analysis results (census, classifications, closures, dominators...) live
 * in the same cache under typed keys (analyses/engine.h).
 */
#include "tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyses/adhoc.h"
#include "analyses/bitset.h"
#include "analyses/diff.h"
#include "analyses/classify_ext.h"
#include "fs/jobs.h"
#include "model/names.h"
#include "render.h"
#include "render_allocs.h"
#include "render_leaks.h"
#include "render_collections.h"
#include "render_closure.h"
#include "render_ds.h"
#include "render_suspects.h"
#include "render_windows.h"
#include "tree_internal.h"

#define LINK_LOOP_MAX 40

/* ---- node types ---- */

enum cost {
	COST_NONE,      /* directories and links */
	COST_CHEAP,     /* rendered on getattr: exact size always */
	COST_EXPENSIVE, /* needs a heap state: size known once rendered */
	COST_VOLATILE,  /* changes over time: never cached, size unknown */
};

struct child_def;
struct dyn_ops;

struct nt_def {
	enum hfs_kind kind;
	enum cost cost;
	render_fn render;              /* files */
	int arg;                       /* files: render's argument */
	const struct child_def *fixed; /* directories: fixed children */
	const struct dyn_ops *dyn;     /* directories: children from the data, or NULL */
};


/* ---- presence tests for fixed children ---- */

typedef int (*present_fn)(const struct hfs *fs, const struct node *parent);

static int has_gcs(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->en.trace->ngcs > 0;
}

static int latest_has_graph(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->en.trace->ngcs > 0 && eng_gc_has_graph(&fs->en, fs->en.trace->ngcs - 1);
}

static int is_gc_root_group(const struct hfs *fs, const struct node *p)
{
	(void)fs;
	return p->chain.depth == 0 && p->chain.diff_gci == UINT32_MAX;
}

static int is_sub_group(const struct hfs *fs, const struct node *p)
{
	(void)fs;
	return p->chain.depth > 0 || p->chain.diff_gci != UINT32_MAX;
}

/* A diff group whose objects are known across its two GCs (born, died
 * and perm files), or of heap dumps, where only the net change is known
 * (model/trace.h identity_unknown). */
static int is_diff_group(const struct hfs *fs, const struct node *p)
{
	return p->chain.diff_gci != UINT32_MAX && !fs->en.trace->identity_unknown;
}

static int is_dump_diff_group(const struct hfs *fs, const struct node *p)
{
	return p->chain.diff_gci != UINT32_MAX && fs->en.trace->identity_unknown;
}

static int gc_root_with_others(const struct hfs *fs, const struct node *p)
{
	return is_gc_root_group(fs, p) && fs->en.trace->ngcs > 1 && !fs->en.trace->objects_unrecorded;
}

/* A JFR recording has GCs but no objects (model/trace.h
 * objects_unrecorded): its GC directories hold info only, and there are
 * no ad-hoc groups to make. */
static int objects_known(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return !fs->en.trace->objects_unrecorded;
}

/* The agent's mode=sample: the objects are samples, and the files that
 * count them are named for the estimates they show (est_count, ...). */
static int sampled(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->en.trace->sample_interval != 0;
}

static int objects_exact(const struct hfs *fs, const struct node *p)
{
	return objects_known(fs, p) && !sampled(fs, p);
}

/* A sampled trace's GC with a graph (mode=sample with graph=): the walk's
 * objects are counted exactly beside the estimates. */
static int sampled_walked(const struct hfs *fs, const struct node *p)
{
	return sampled(fs, p) && p->chain.diff_gci == UINT32_MAX && eng_gc_has_graph(&fs->en, p->gci);
}

static int is_sampled_diff_group(const struct hfs *fs, const struct node *p)
{
	return is_diff_group(fs, p) && sampled(fs, p);
}

static int is_exact_diff_group(const struct hfs *fs, const struct node *p)
{
	return is_diff_group(fs, p) && !sampled(fs, p);
}

static int gc_root_objects_known(const struct hfs *fs, const struct node *p)
{
	return is_gc_root_group(fs, p) && objects_known(fs, p);
}

static int has_leak_candidates(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->en.trace->old_samples > 0;
}

/* A level of a one-to-hierarchy classifier (by-site/A/B): its table lists
 * the next level. */
static int is_hier_level(const struct hfs *fs, const struct node *p)
{
	const struct chain *c = &p->chain;
	if (!c->depth || c->steps[c->depth - 1].op != ST_CLS)
		return 0;
	const struct cls_def *d = cls_get(&fs->en.reg, c->steps[c->depth - 1].cls);
	return d && d->card == CARD_HIER;
}

static int gc_root_with_graph(const struct hfs *fs, const struct node *p)
{
	return is_gc_root_group(fs, p) && eng_gc_has_graph(&fs->en, p->gci);
}

static int gc_with_graph(const struct hfs *fs, const struct node *p)
{
	return eng_gc_has_graph(&fs->en, p->gci);
}

/* closure files on plain groups at GCs with a graph */
static int has_closures(const struct hfs *fs, const struct node *p)
{
	return closure_files_present(fs, p);
}

static int sub_group_with_closures(const struct hfs *fs, const struct node *p)
{
	return is_sub_group(fs, p) && closure_files_present(fs, p);
}

/* groups/NAME itself (not groups/NAME/gc/NNN or a subgroup) */
static int is_adhoc_top(const struct hfs *fs, const struct node *p)
{
	(void)fs;
	return p->aux[0] == 1 && p->chain.depth == 1 && p->chain.steps[0].op == ST_ADHOC;
}

/* A fixed child: its name, node type and presence test.  A plain file
 * needs nothing more than its row: type NT_FILE and its definition in
 * `file` (FILE_ROW), so adding one to a directory is one row plus its
 * renderer; other types are defined once in nt_defs. */
struct child_def {
	const char *name;
	enum nt type;
	present_fn present;         /* NULL: always */
	const struct nt_def *file;  /* NT_FILE: the file; else NULL */
};

#define FILE_ROW(name, present, cost, render, arg) \
	{ name, NT_FILE, present, &(const struct nt_def){ HFS_FILE, cost, render, arg, NULL, NULL } }

static const struct child_def root_children[] = {
	{ "README", NT_README, NULL, NULL },
	{ "status", NT_STATUS, NULL, NULL },
	{ "trace", NT_TRACE_DIR, NULL, NULL },
	{ "timeline", NT_TIMELINE_DIR, NULL, NULL },
	{ "gc", NT_GC_DIR, NULL, NULL },
	{ "roots", NT_ROOTS_LINK, latest_has_graph, NULL },
	{ "ds", NT_DS_LINK, latest_has_graph, NULL },
	{ "classifiers", NT_CLASSIFIERS_DIR, NULL, NULL },
	{ "windows", NT_WINDOWS_DIR, NULL, NULL },
	{ "groups", NT_GROUPS_DIR, objects_known, NULL },
	{ "suspects", NT_SUSPECTS, NULL, NULL },
	{ "suspects.json", NT_SUSPECTS_JSON, NULL, NULL },
	{ "allocs", NT_ALLOCS_DIR, NULL, NULL },
	{ "leak-candidates", NT_LEAKS_DIR, has_leak_candidates, NULL },
	{ NULL, 0, NULL, NULL },
};
/* leak-candidates/: fs/render_leaks.h */
#define LEAKS_ROW(name, file, fmt) FILE_ROW(name, NULL, COST_EXPENSIVE, render_leaks, LEAKS_ARG(file, fmt))
static const struct child_def leaks_children[] = {
	LEAKS_ROW("info", LEAKS_INFO, LEAKS_TSV),
	LEAKS_ROW("table", LEAKS_TABLE, LEAKS_TSV),
	LEAKS_ROW("table.csv", LEAKS_TABLE, LEAKS_CSV),
	LEAKS_ROW("table.json", LEAKS_TABLE, LEAKS_JSON),
	LEAKS_ROW("samples", LEAKS_SAMPLES, LEAKS_TSV),
	LEAKS_ROW("samples.csv", LEAKS_SAMPLES, LEAKS_CSV),
	LEAKS_ROW("samples.json", LEAKS_SAMPLES, LEAKS_JSON),
	{ NULL, 0, NULL, NULL },
};
/* allocs/: fs/render_allocs.h */
static const struct child_def allocs_children[] = {
	{ "by-site", NT_ALLOCS_BY_SITE, NULL, NULL },
	{ "by-site.csv", NT_ALLOCS_BY_SITE_CSV, NULL, NULL },
	{ "by-site.json", NT_ALLOCS_BY_SITE_JSON, NULL, NULL },
	{ "by-method", NT_ALLOCS_BY_METHOD, NULL, NULL },
	{ "by-method.csv", NT_ALLOCS_BY_METHOD_CSV, NULL, NULL },
	{ "by-method.json", NT_ALLOCS_BY_METHOD_JSON, NULL, NULL },
	{ "by-caller", NT_ALLOCS_BY_CALLER, NULL, NULL },
	{ "by-caller.csv", NT_ALLOCS_BY_CALLER_CSV, NULL, NULL },
	{ "by-caller.json", NT_ALLOCS_BY_CALLER_JSON, NULL, NULL },
	{ "stats", NT_ALLOCS_STATS, NULL, NULL },
	{ "stats.csv", NT_ALLOCS_STATS_CSV, NULL, NULL },
	{ "stats.json", NT_ALLOCS_STATS_JSON, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def classifiers_children[] = {
	{ "README", NT_CLASSIFIERS_README, NULL, NULL },
	{ "errors", NT_CLASSIFIERS_ERRORS, NULL, NULL },
	{ "list", NT_CLASSIFIERS_LIST, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def trace_children[] = {
	{ "info", NT_TRACE_INFO, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def timeline_children[] = {
	{ "gcs.csv", NT_GCS_CSV, NULL, NULL },
	{ "memory.svg", NT_MEMORY_SVG, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
/* windows/: the five kinds (dynamic: they carry node.win), summary, diff/ */
static const struct child_def windows_children[] = {
	{ "summary", NT_WINDOWS_SUMMARY, NULL, NULL },
	{ "diff", NT_WINDOWS_DIFF_DIR, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
/* diff and growing need two distinct GCs (a gc-overhead or churn window
 * of one GC has none).  The detectors' results are computed once and
 * never change, so a presence test may compute them. */
static int window_spans_gcs(const struct hfs *fs, const struct node *p)
{
	return hfs_window_spans((struct hfs *)fs, (enum win_kind)p->win);
}

static const struct child_def window_diff_children[] = {
	{ "start", NT_WINDOW_START, NULL, NULL },
	{ "end", NT_WINDOW_END, NULL, NULL },
	{ "diff", NT_WINDOW_DIFF, window_spans_gcs, NULL },
	{ "growing", NT_WINDOW_GROWING, window_spans_gcs, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def gc_dir_children[] = {
	{ "latest", NT_GC_LATEST, has_gcs, NULL },
	{ NULL, 0, NULL, NULL },
};
/* gc/NNN is the root group of its GC; it has info, objects/ (per-object
 * directories) and roots/ where a subgroup has the objects id file. */
static const struct child_def group_children[] = {
	{ "info", NT_GC_INFO, is_gc_root_group, NULL },
	FILE_ROW("count", objects_exact, COST_EXPENSIVE, render_group_metric, GF_COUNT),
	FILE_ROW("shallow_size", objects_exact, COST_EXPENSIVE, render_group_metric, GF_SHALLOW),
	FILE_ROW("samples", sampled, COST_EXPENSIVE, render_group_metric, GF_SAMPLES),
	FILE_ROW("count", sampled_walked, COST_EXPENSIVE, render_group_metric, GF_XCOUNT),
	FILE_ROW("shallow_size", sampled_walked, COST_EXPENSIVE, render_group_metric, GF_XSHALLOW),
	FILE_ROW("est_count", sampled, COST_EXPENSIVE, render_group_metric, GF_COUNT),
	FILE_ROW("est_shallow_size", sampled, COST_EXPENSIVE, render_group_metric, GF_SHALLOW),
	{ "summary", NT_GROUP_SUMMARY, objects_known, NULL },
	{ "objects", NT_OBJECTS_DIR, gc_root_objects_known, NULL },
	{ "objects", NT_GROUP_OBJECTS, is_sub_group, NULL },
	{ "roots", NT_ROOTS_DIR, gc_root_with_graph, NULL },
	{ "ds", NT_DS_DIR, gc_root_with_graph, NULL },
	FILE_ROW("born_count", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_BORN_C),
	FILE_ROW("born_bytes", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_BORN_B),
	FILE_ROW("died_count", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_DIED_C),
	FILE_ROW("died_bytes", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_DIED_B),
	FILE_ROW("perm_count", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_PERM_C),
	FILE_ROW("perm_bytes", is_exact_diff_group, COST_EXPENSIVE, render_group_metric, GF_PERM_B),
	FILE_ROW("est_born_count", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_BORN_C),
	FILE_ROW("est_born_bytes", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_BORN_B),
	FILE_ROW("est_died_count", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_DIED_C),
	FILE_ROW("est_died_bytes", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_DIED_B),
	FILE_ROW("est_perm_count", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_PERM_C),
	FILE_ROW("est_perm_bytes", is_sampled_diff_group, COST_EXPENSIVE, render_group_metric, GF_PERM_B),
	FILE_ROW("net_count", is_dump_diff_group, COST_EXPENSIVE, render_group_metric, GF_NET_C),
	FILE_ROW("net_bytes", is_dump_diff_group, COST_EXPENSIVE, render_group_metric, GF_NET_B),
	{ "diff", NT_DIFF_DIR, gc_root_with_others, NULL },
	{ "table", NT_TABLE_TSV, is_hier_level, NULL },
	{ "table.csv", NT_TABLE_CSV, is_hier_level, NULL },
	{ "table.json", NT_TABLE_JSON, is_hier_level, NULL },
	/* closures, roots, dominators, threads, ad-hoc groups */
	FILE_ROW("deep_count", has_closures, COST_EXPENSIVE, render_group_closure_file, CLF_DEEP_COUNT),
	FILE_ROW("deep_size", has_closures, COST_EXPENSIVE, render_group_closure_file, CLF_DEEP_SIZE),
	FILE_ROW("retained_count", has_closures, COST_EXPENSIVE, render_group_closure_file, CLF_RET_COUNT),
	FILE_ROW("retained_size", has_closures, COST_EXPENSIVE, render_group_closure_file, CLF_RET_SIZE),
	{ "roots", NT_GROUP_ROOTS, sub_group_with_closures, NULL },
	{ "paths", NT_GROUP_PATHS, has_closures, NULL },
	{ "dominators", NT_DOMINATORS_DIR, gc_root_with_graph, NULL },
	{ "threads", NT_THREADS_DIR, gc_root_with_graph, NULL },
	{ "members", NT_ADHOC_MEMBERS, is_adhoc_top, NULL },
	{ "gc", NT_ADHOC_GC_DIR, is_adhoc_top, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def classification_children[] = {
	{ "table", NT_TABLE_TSV, NULL, NULL },
	{ "table.csv", NT_TABLE_CSV, NULL, NULL },
	{ "table.json", NT_TABLE_JSON, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def objects_children[] = {
	{ "all", NT_OBJECTS_ALL, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def object_children[] = {
	{ "info", NT_OBJECT_INFO, NULL, NULL },
	{ "refs", NT_OBJECT_REFS, gc_with_graph, NULL },
	{ "referrers", NT_OBJECT_REFERRERS, gc_with_graph, NULL },
	{ "retained_size", NT_OBJECT_RETAINED, gc_with_graph, NULL },
	{ "dominator", NT_OBJECT_DOMINATOR, gc_with_graph, NULL },
	{ "path-to-root", NT_OBJECT_PATH, gc_with_graph, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def ds_children[] = {
	{ "roles", NT_DS_ROLES, NULL, NULL },
	{ "heads", NT_DS_HEADS, NULL, NULL },
	{ "table", NT_DS_TABLE, NULL, NULL },
	FILE_ROW("collections", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_TYPES, 0)),
	FILE_ROW("collections.csv", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_TYPES, 1)),
	FILE_ROW("collections.json", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_TYPES, 2)),
	FILE_ROW("collections-by-site", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_SITES, 0)),
	FILE_ROW("collections-by-site.csv", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_SITES, 1)),
	FILE_ROW("collections-by-site.json", NULL, COST_EXPENSIVE, render_collections, COLLF_ARG(COLLF_SITES, 2)),
	{ NULL, 0, NULL, NULL },
};
static const struct child_def roots_children[] = {
	{ "table", NT_ROOTS_TABLE, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def dominators_children[] = {
	{ "top", NT_DOMINATORS_TOP, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def thread_children[] = {
	{ "stack", NT_THREAD_STACK, NULL, NULL },
	{ NULL, 0, NULL, NULL },
};
static const struct child_def no_children[] = {
	{ NULL, 0, NULL, NULL },
};

/* ---- dynamic children ---- */

typedef int (*emit_fn)(void *ctx, const char *name, const struct node *child);

struct dyn_ops {
	int (*list)(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx);
	int (*lookup)(struct hfs *fs, const struct node *p, const char *name, struct node *child);
};

static int gc_dir_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	for (uint32_t i = 0; i < fs->en.trace->ngcs; i++) {
		char name[16];
		struct node c = *p;
		c.type = NT_GROUP;
		c.gci = i;
		hfs_gc_name(fs, i, name);
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

/* Only canonical names: exactly gc_width digits. */
static int gc_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	if (strlen(name) != fs->gc_width)
		return -ENOENT;
	uint64_t v = 0;
	for (const char *s = name; *s; s++) {
		if (*s < '0' || *s > '9')
			return -ENOENT;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > UINT32_MAX)
		return -ENOENT;
	uint32_t gci = trace_gc_index(fs->en.trace, (uint32_t)v);
	if (gci == UINT32_MAX)
		return -ENOENT;
	*c = *p;
	c->type = NT_GROUP;
	c->gci = gci;
	return 0;
}

/* What listings offer, so that `find` and `grep -r` over a GC finish in
 * reasonable time (every ordering of every classifier would be factorial):
 * a GC's root group lists its classifications with their children, and
 * each child lists further classifications (by-*, only-*, points-to/,
 * pointed-from/); those deeper classification directories list only their
 * tables.  A diff root lists one level.  Every deeper path still resolves
 * when typed: the tables name the children.  README says so. */
#define LIST_STEPS_MAX 2

/* How deep a group is for listings: its steps, each level of a hierarchy
 * after the first counting as one more (by-root/static/C/f is three
 * deep).  Without the levels, the thousands of groups of a real heap's
 * root hierarchies each listed every classifier, and `find` over one GC
 * of a 276,000-object heap dump met 1.9 million names. */
static uint32_t list_depth(const struct node *p)
{
	uint32_t d = p->chain.depth;
	for (uint32_t i = 0; i < p->chain.depth; i++)
		if (p->chain.steps[i].op == ST_CLS && p->chain.steps[i].nkeys > 1)
			d += p->chain.steps[i].nkeys - 1u;
	return d;
}

static int lists_steps(const struct node *p)
{
	if (p->chain.diff_gci != UINT32_MAX)
		return p->chain.depth == 0;
	return list_depth(p) < LIST_STEPS_MAX;
}

static int lists_children(const struct node *classification)
{
	return classification->chain.depth == 0;
}

static int listable(const struct hfs *fs, const struct node *p, uint32_t cls)
{
	const struct cls_def *d = cls_get(&fs->en.reg, cls);
	if (!d || chain_uses(&p->chain, cls) || fs->en.trace->objects_unrecorded)
		return 0;
	/* heap dumps: when an object was born is not known (identity across
	 * GCs is not, model/trace.h), so there is no age or birth to group by */
	if (fs->en.trace->identity_unknown && (d->builtin == CB_AGE || d->builtin == CB_BIRTH))
		return 0;
	return !d->needs_graph || eng_gc_has_graph(&fs->en, p->gci);
}

static int step_room(const struct node *p)
{
	return p->chain.depth < CHAIN_STEPS_MAX;
}

static int emit_steps(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	char name[80];
	if (!step_room(p))
		return 0;
	for (uint32_t k = 0; k < cls_count(&fs->en.reg); k++) {
		if (!listable(fs, p, k))
			continue;
		const struct cls_def *d = cls_get(&fs->en.reg, k);
		struct node c = *p;
		if (d->card == CARD_FILTER) {
			if (chain_push(&c.chain, ST_FILTER, k, 0))
				continue;
			c.type = NT_GROUP;
			snprintf(name, sizeof name, "only-%s", d->name);
		} else {
			c.type = NT_CLASSIFICATION;
			c.cls = k;
			snprintf(name, sizeof name, "by-%s", d->name);
		}
		if (emit(ctx, name, &c))
			return 1;
	}
	static const struct { const char *name; enum step_op op; } tr[] = {
		{ "points-to", ST_POINTS_TO }, { "pointed-from", ST_POINTED_FROM },
	};
	for (size_t t = 0; t < 2 && eng_gc_has_graph(&fs->en, p->gci); t++) {
		struct node c = *p;
		c.type = NT_GROUP;
		if (!chain_push(&c.chain, tr[t].op, CLS_NONE, 0) && emit(ctx, tr[t].name, &c))
			return 1;
	}
	if (closure_files_present(fs, p)) { /* closure/{transitive,retained} */
		struct node c = *p;
		c.type = NT_CLOSURE_DIR;
		if (emit(ctx, "closure", &c))
			return 1;
	}
	return 0;
}

/* A hierarchy level's place in the trie of its classification (every
 * level computed in one pass, analyses/groups.h): the chain without its
 * last (hierarchy) step, and that step's key path.  *e pinned. */
static int hier_node(struct hfs *fs, const struct node *p, struct rc_entry **e,
		     const struct cls_trie_node **nodes, uint32_t *at)
{
	const struct chain *ch = &p->chain;
	const struct chain_step *last = &ch->steps[ch->depth - 1];
	struct chain base = *ch;
	uint32_t n;
	base.depth--;
	base.nkeys -= last->nkeys;
	int rc = eng_hier_trie_get(&fs->en, p->gci, &base, last->cls, e, nodes, &n);
	if (rc)
		return rc;
	*at = trie_find(*nodes, n, ch->keys + last->key0, last->nkeys);
	if (*at == UINT32_MAX) {
		rcache_put(fs->en.rc, *e);
		return -ENOENT;
	}
	return 0;
}

/* Children of a hierarchy level: the next level's keys. */
static int hier_children(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	uint32_t cls = p->chain.steps[p->chain.depth - 1].cls;
	const struct cls_def *d = cls_get(&fs->en.reg, cls);
	const struct cls_trie_node *nodes;
	struct rc_entry *e;
	uint32_t at;
	if (!d)
		return -ENOENT;
	int rc = hier_node(fs, p, &e, &nodes, &at);
	if (rc)
		return rc;
	for (uint32_t k = 0; k < nodes[at].nchildren && !rc; k++) {
		struct node c = *p;
		c.cls = cls;
		if (chain_extend(&c.chain, nodes[nodes[at].first_child + k].key))
			break;
		rc = emit(ctx, ks_name(&d->ks, nodes[nodes[at].first_child + k].key), &c);
	}
	rcache_put(fs->en.rc, e);
	return rc > 0 ? 1 : rc;
}

static int group_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	if (is_hier_level(fs, p)) {
		int rc = hier_children(fs, p, emit, ctx);
		if (rc)
			return rc;
	}
	if (!lists_steps(p))
		return 0;
	return emit_steps(fs, p, emit, ctx);
}

struct find_ctx {
	const char *name;
	struct node *out;
	int found;
};

static int find_emit(void *vctx, const char *name, const struct node *child)
{
	struct find_ctx *f = vctx;
	if (strcmp(name, f->name) != 0)
		return 0;
	*f->out = *child;
	f->found = 1;
	return 1;
}

/* A hierarchy level's child by name, without listing them all. */
static int hier_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	uint32_t cls = p->chain.steps[p->chain.depth - 1].cls;
	const struct cls_def *d = cls_get(&fs->en.reg, cls);
	const struct cls_trie_node *nodes;
	struct rc_entry *e;
	uint32_t at;
	if (!d)
		return -ENOENT;
	int rc = hier_node(fs, p, &e, &nodes, &at);
	if (rc)
		return rc;
	uint32_t key = ks_find_name((struct keyspace *)&d->ks, name);
	rc = -ENOENT;
	for (uint32_t k = 0; k < nodes[at].nchildren; k++) {
		if (nodes[nodes[at].first_child + k].key == key) {
			rc = 0;
			break;
		}
	}
	rcache_put(fs->en.rc, e);
	if (!rc) {
		*c = *p;
		c->cls = cls;
		rc = chain_extend(&c->chain, key) ? -ENOENT : 0;
	}
	return rc;
}

static int group_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	/* Steps resolve at any depth (LIST_STEPS_MAX only limits listings). */
	struct find_ctx f = { name, c, 0 };
	int rc = emit_steps(fs, p, find_emit, &f);
	if (rc < 0)
		return rc;
	if (f.found)
		return 0;
	if (is_hier_level(fs, p))
		return hier_lookup(fs, p, name, c);
	return -ENOENT;
}

static void child_group(const struct node *p, uint32_t key, struct node *c)
{
	*c = *p;
	c->type = NT_GROUP;
	if (chain_push(&c->chain, ST_CLS, p->cls, key))
		c->type = NT_COUNT_; /* no room: the caller checks */
}

static int classification_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	const struct cls_def *d = cls_get(&fs->en.reg, p->cls);
	const struct cls_row *rows;
	struct rc_entry *e;
	uint32_t nrows;
	if (!d)
		return -ENOENT;
	if (!lists_children(p))
		return 0; /* the tables (fixed children) name them */
	int rc = eng_classification_get(&fs->en, p->gci, &p->chain, p->cls, &e, &rows, &nrows);
	if (rc)
		return rc;
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		struct node c;
		child_group(p, rows[r].key, &c);
		if (c.type != NT_GROUP)
			break;
		rc = emit(ctx, ks_name(&d->ks, rows[r].key), &c);
	}
	rcache_put(fs->en.rc, e);
	return rc > 0 ? 1 : rc;
}

static int classification_lookup(struct hfs *fs, const struct node *p, const char *name,
				 struct node *c)
{
	const struct cls_def *d = cls_get(&fs->en.reg, p->cls);
	const struct cls_row *rows;
	struct rc_entry *e;
	uint32_t nrows;
	if (!d)
		return -ENOENT;
	/* Classify first: dynamic keyspaces learn their keys while classifying. */
	int rc = eng_classification_get(&fs->en, p->gci, &p->chain, p->cls, &e, &rows, &nrows);
	if (rc)
		return rc;
	uint32_t key = ks_find_name((struct keyspace *)&d->ks, name);
	uint32_t lo = 0, hi = nrows;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rows[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	rc = (lo < nrows && rows[lo].key == key) ? 0 : -ENOENT;
	rcache_put(fs->en.rc, e);
	if (!rc) {
		child_group(p, key, c);
		if (c->type != NT_GROUP)
			rc = -ENOENT;
	}
	return rc;
}

/* gc/NNN/diff/MMM: every other GC. */
static int diff_dir_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	for (uint32_t i = 0; i < fs->en.trace->ngcs; i++) {
		if (i == p->gci)
			continue;
		char name[16];
		struct node c = *p;
		c.type = NT_GROUP;
		c.chain.diff_gci = i;
		hfs_gc_name(fs, i, name);
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

static int diff_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	struct node tmp;
	int rc = gc_dir_lookup(fs, p, name, &tmp);
	if (rc || tmp.gci == p->gci)
		return -ENOENT;
	*c = *p;
	c->type = NT_GROUP;
	c->chain.diff_gci = tmp.gci;
	return 0;
}

/* classifiers/NAME: the user-defined classifiers. */
static int classifiers_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	for (uint32_t k = 0; k < cls_count(&fs->en.reg); k++) {
		const struct cls_def *d = cls_get(&fs->en.reg, k);
		if (!d || !d->user)
			continue;
		struct node c = *p;
		c.type = NT_CLASSIFIER_DEF;
		c.cls = k;
		if (emit(ctx, d->name, &c))
			return 1;
	}
	return 0;
}

static int classifiers_lookup(struct hfs *fs, const struct node *p, const char *name,
			      struct node *c)
{
	uint32_t k = cls_find(&fs->en.reg, name);
	const struct cls_def *d = k == CLS_NONE ? NULL : cls_get(&fs->en.reg, k);
	if (!d || !d->user)
		return -ENOENT;
	*c = *p;
	c->type = NT_CLASSIFIER_DEF;
	c->cls = k;
	return 0;
}

/* objects/<id>: canonical decimal ids of objects live at that GC. */
static int objects_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	uint64_t id = 0;
	size_t len = strlen(name);
	if (len == 0 || len > 20 || (len > 1 && name[0] == '0'))
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -ENOENT;
		uint64_t d = (uint64_t)(name[i] - '0');
		if (id > (UINT64_MAX - d) / 10)
			return -ENOENT;
		id = id * 10 + d;
	}
	const struct heap_state *s;
	int rc = eng_state_get(&fs->en, p->gci, &s);
	if (rc)
		return rc;
	rc = heap_state_find(s, id) == UINT32_MAX ? -ENOENT : 0;
	eng_state_put(&fs->en, s);
	if (!rc) {
		*c = *p;
		c->type = NT_OBJECT_DIR;
		c->obj = id;
	}
	return rc;
}

static const struct dyn_ops gc_dir_ops = { gc_dir_list, gc_dir_lookup };
static const struct dyn_ops group_ops = { group_list, group_lookup };
static const struct dyn_ops classification_ops = { classification_list, classification_lookup };
static const struct dyn_ops objects_ops = { NULL, objects_lookup };
static const struct dyn_ops diff_dir_ops = { diff_dir_list, diff_dir_lookup };
static const struct dyn_ops classifiers_ops = { classifiers_list, classifiers_lookup };
/* fs/render_closure.c */
static const struct dyn_ops roots_ops = { roots_dir_list, roots_dir_lookup };
static const struct dyn_ops threads_ops = { threads_dir_list, threads_dir_lookup };
static const struct dyn_ops closure_ops = { closure_dir_list, closure_dir_lookup };
static const struct dyn_ops groups_ops = { groups_dir_list, groups_dir_lookup };
static const struct dyn_ops adhoc_gc_ops = { adhoc_gc_list, adhoc_gc_lookup };

/* windows/<kind> files (always all five) and windows/diff/<kind>/
 * directories (only the kinds that found a window: listing or looking one
 * up runs the detectors). */
static int windows_emit(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx,
			enum nt type, int only_found)
{
	const struct win_result *res = NULL;
	int rc = only_found ? eng_windows_results(&fs->en, &res) : 0;
	if (rc)
		return rc;
	for (uint32_t k = 0; k < WK_COUNT; k++) {
		if (only_found && !res[k].found)
			continue;
		struct node c = *p;
		c.type = type;
		c.win = k;
		if (emit(ctx, win_kind_name((enum win_kind)k), &c))
			return 1;
	}
	return 0;
}

static int windows_lookup_kind(struct hfs *fs, const struct node *p, const char *name,
			       struct node *c, enum nt type, int only_found)
{
	enum win_kind k = win_kind_of(name);
	const struct win_result *res;
	if (k == WK_COUNT)
		return -ENOENT;
	if (only_found) {
		int rc = eng_windows_results(&fs->en, &res);
		if (rc)
			return rc;
		if (!res[k].found)
			return -ENOENT;
	}
	*c = *p;
	c->type = type;
	c->win = k;
	return 0;
}

static int windows_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	return windows_emit(fs, p, emit, ctx, NT_WINDOW_FILE, 0);
}

static int windows_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	return windows_lookup_kind(fs, p, name, c, NT_WINDOW_FILE, 0);
}

static int windows_diff_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	return windows_emit(fs, p, emit, ctx, NT_WINDOW_DIFF_DIR, 1);
}

static int windows_diff_lookup(struct hfs *fs, const struct node *p, const char *name,
			       struct node *c)
{
	return windows_lookup_kind(fs, p, name, c, NT_WINDOW_DIFF_DIR, 1);
}

static const struct dyn_ops windows_ops = { windows_list, windows_lookup };
static const struct dyn_ops windows_diff_ops = { windows_diff_list, windows_diff_lookup };

/* ---- node renderers ----
 * render_fn adapters for the renderers that need less than a node and an
 * argument. */

#define FS_RENDERER(name, fn)                                                           \
	static int name(struct hfs *fs, const struct node *n, int arg, struct buf *out) \
	{                                                                               \
		(void)n;                                                                \
		(void)arg;                                                              \
		return fn(fs, out);                                                     \
	}
#define NODE_RENDERER(name, fn)                                                         \
	static int name(struct hfs *fs, const struct node *n, int arg, struct buf *out) \
	{                                                                               \
		(void)arg;                                                              \
		return fn(fs, n, out);                                                  \
	}

FS_RENDERER(readme_node, render_readme)
FS_RENDERER(status_node, render_status)
FS_RENDERER(trace_info_node, render_trace_info)
FS_RENDERER(gcs_csv_node, render_gcs_csv)
FS_RENDERER(classifiers_readme_node, render_classifiers_readme)
FS_RENDERER(memory_svg_node, render_memory_svg)
FS_RENDERER(windows_summary_node, render_windows_summary)
NODE_RENDERER(ds_node, render_ds)
NODE_RENDERER(object_info_node, render_object_info)
NODE_RENDERER(object_refs_node, render_object_refs)
NODE_RENDERER(object_referrers_node, render_object_referrers)
NODE_RENDERER(roots_table_node, render_roots_table)
NODE_RENDERER(group_roots_node, render_group_roots)
NODE_RENDERER(group_paths_node, render_group_paths)
NODE_RENDERER(dominators_top_node, render_dominators_top)
NODE_RENDERER(object_retained_node, render_object_retained)
NODE_RENDERER(object_dominator_node, render_object_dominator)
NODE_RENDERER(object_path_node, render_object_path)
NODE_RENDERER(roots_file_node, render_roots_file)
NODE_RENDERER(thread_stack_node, render_thread_stack)
NODE_RENDERER(adhoc_members_node, render_adhoc_members)

struct failure_ctx {
	struct hfs *fs;
	struct buf *out;
};

/* NAME: gc/NNN: N objects: line L, column C: integer overflow in + */
static int put_failure(void *vctx, const struct cls_failure *f)
{
	struct failure_ctx *c = vctx;
	char gc[16], where[48] = "";
	hfs_gc_name(c->fs, f->gci, gc);
	if (f->line)
		snprintf(where, sizeof where, "line %" PRIu32 ", column %" PRIu32 ": ", f->line, f->col);
	int rc = 0;
	if (f->objects)
		rc = buf_printf(c->out, "%s: gc/%s: %" PRIu64 " object%s: %s%s\n", f->classifier, gc,
				f->objects, f->objects == 1 ? "" : "s", where,
				f->why ? f->why : "evaluation failed");
	if (!rc && f->sum_overflow)
		rc = buf_printf(c->out, "%s: gc/%s: the bytes of a part add up beyond %" PRIu64
				": the classification fails (EOVERFLOW)\n", f->classifier, gc, UINT64_MAX);
	return rc;
}

/* classifiers/errors: the log, then per expression classifier and GC the
 * objects whose evaluation failed, with the first reason. */
static int classifiers_errors_node(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)n;
	(void)arg;
	struct failure_ctx c = { fs, out };
	return cls_errors(&fs->en.reg, out, put_failure, &c);
}

static int window_file_node(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)arg;
	return render_window_file(fs, (enum win_kind)n->win, out);
}

static int window_growing_node(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)arg;
	return render_window_growing(fs, (enum win_kind)n->win, out);
}

/* arg: enum sus_format */
static int suspects_node(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)n;
	return render_suspects(fs, (enum sus_format)arg, out);
}

/* allocs/ files: the table and the format in one argument */
#define ALLOCS_ARG(table, fmt) ((int)(table) * 4 + (int)(fmt))
static int allocs_node(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	(void)n;
	return render_allocs(fs, (enum allocs_table)(arg / 4), (enum allocs_format)(arg % 4), out);
}

/* Every node kind, declared once: what it is, what it costs, and the
 * function that renders it (files, with the argument that says which of
 * its files it is) or its children (directories: fixed names, then the
 * names only the data knows).  A new file is a row here and a row in its
 * directory's list of children, plus its renderer. */
static const struct nt_def nt_defs[NT_COUNT_] = {
	[NT_ROOT] = { HFS_DIR, COST_NONE, .fixed = root_children },
	[NT_README] = { HFS_FILE, COST_CHEAP, readme_node, 0 },
	[NT_STATUS] = { HFS_FILE, COST_VOLATILE, status_node, 0 },
	[NT_TRACE_DIR] = { HFS_DIR, COST_NONE, .fixed = trace_children },
	[NT_TRACE_INFO] = { HFS_FILE, COST_CHEAP, trace_info_node, 0 },
	[NT_TIMELINE_DIR] = { HFS_DIR, COST_NONE, .fixed = timeline_children },
	[NT_GCS_CSV] = { HFS_FILE, COST_EXPENSIVE, gcs_csv_node, 0 },
	[NT_GC_DIR] = { HFS_DIR, COST_NONE, .fixed = gc_dir_children, .dyn = &gc_dir_ops },
	[NT_GC_LATEST] = { HFS_LINK, COST_NONE },
	[NT_ROOTS_LINK] = { HFS_LINK, COST_NONE },
	[NT_GROUP] = { HFS_DIR, COST_NONE, .fixed = group_children, .dyn = &group_ops },
	[NT_GC_INFO] = { HFS_FILE, COST_EXPENSIVE, render_gc_info, 0 },
	[NT_GROUP_SUMMARY] = { HFS_FILE, COST_EXPENSIVE, render_group_metric, GF_SUMMARY },
	[NT_GROUP_OBJECTS] = { HFS_FILE, COST_EXPENSIVE, render_group_objects, 0 },
	[NT_CLASSIFICATION] = { HFS_DIR, COST_NONE, .fixed = classification_children, .dyn = &classification_ops },
	[NT_TABLE_TSV] = { HFS_FILE, COST_EXPENSIVE, render_table, TF_TSV },
	[NT_TABLE_CSV] = { HFS_FILE, COST_EXPENSIVE, render_table, TF_CSV },
	[NT_TABLE_JSON] = { HFS_FILE, COST_EXPENSIVE, render_table, TF_JSON },
	[NT_OBJECTS_DIR] = { HFS_DIR, COST_NONE, .fixed = objects_children, .dyn = &objects_ops },
	[NT_OBJECTS_ALL] = { HFS_FILE, COST_EXPENSIVE, render_group_objects, 0 },
	[NT_OBJECT_DIR] = { HFS_DIR, COST_NONE, .fixed = object_children },
	[NT_OBJECT_INFO] = { HFS_FILE, COST_EXPENSIVE, object_info_node, 0 },
	[NT_OBJECT_REFS] = { HFS_FILE, COST_EXPENSIVE, object_refs_node, 0 },
	[NT_OBJECT_REFERRERS] = { HFS_FILE, COST_EXPENSIVE, object_referrers_node, 0 },
	[NT_ROOTS_DIR] = { HFS_DIR, COST_NONE, .fixed = roots_children, .dyn = &roots_ops },
	[NT_ROOTS_TABLE] = { HFS_FILE, COST_EXPENSIVE, roots_table_node, 0 },
	[NT_DIFF_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &diff_dir_ops },
	[NT_CLASSIFIERS_DIR] = { HFS_DIR, COST_NONE, .fixed = classifiers_children, .dyn = &classifiers_ops },
	[NT_CLASSIFIERS_README] = { HFS_FILE, COST_CHEAP, classifiers_readme_node, 0 },
	[NT_CLASSIFIERS_ERRORS] = { HFS_FILE, COST_VOLATILE, classifiers_errors_node, 0 },
	[NT_CLASSIFIERS_LIST] = { HFS_FILE, COST_VOLATILE, render_classifiers_list, 0 },
	[NT_CLASSIFIER_DEF] = { HFS_FILE, COST_VOLATILE, render_classifier_def, 0 },
	[NT_MEMORY_SVG] = { HFS_FILE, COST_EXPENSIVE, memory_svg_node, 0 },
	[NT_WINDOWS_DIR] = { HFS_DIR, COST_NONE, .fixed = windows_children, .dyn = &windows_ops },
	[NT_WINDOW_FILE] = { HFS_FILE, COST_EXPENSIVE, window_file_node, 0 },
	[NT_WINDOWS_SUMMARY] = { HFS_FILE, COST_EXPENSIVE, windows_summary_node, 0 },
	[NT_WINDOWS_DIFF_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &windows_diff_ops },
	[NT_WINDOW_DIFF_DIR] = { HFS_DIR, COST_NONE, .fixed = window_diff_children },
	[NT_WINDOW_START] = { HFS_LINK, COST_NONE },
	[NT_WINDOW_END] = { HFS_LINK, COST_NONE },
	[NT_WINDOW_DIFF] = { HFS_LINK, COST_NONE },
	[NT_WINDOW_GROWING] = { HFS_FILE, COST_EXPENSIVE, window_growing_node, 0 },
	[NT_DS_DIR] = { HFS_DIR, COST_NONE, .fixed = ds_children },
	[NT_DS_ROLES] = { HFS_FILE, COST_EXPENSIVE, ds_node, 0 },
	[NT_DS_HEADS] = { HFS_FILE, COST_EXPENSIVE, ds_node, 0 },
	[NT_DS_TABLE] = { HFS_FILE, COST_EXPENSIVE, ds_node, 0 },
	[NT_DS_LINK] = { HFS_LINK, COST_NONE },
	[NT_CLOSURE_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &closure_ops },
	[NT_GROUP_ROOTS] = { HFS_FILE, COST_EXPENSIVE, group_roots_node, 0 },
	[NT_GROUP_PATHS] = { HFS_FILE, COST_EXPENSIVE, group_paths_node, 0 },
	[NT_DOMINATORS_DIR] = { HFS_DIR, COST_NONE, .fixed = dominators_children },
	[NT_DOMINATORS_TOP] = { HFS_FILE, COST_EXPENSIVE, dominators_top_node, 0 },
	[NT_OBJECT_RETAINED] = { HFS_FILE, COST_EXPENSIVE, object_retained_node, 0 },
	[NT_OBJECT_DOMINATOR] = { HFS_FILE, COST_EXPENSIVE, object_dominator_node, 0 },
	[NT_OBJECT_PATH] = { HFS_FILE, COST_EXPENSIVE, object_path_node, 0 },
	[NT_ROOTS_SUBDIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &roots_ops },
	[NT_ROOTS_FILE] = { HFS_FILE, COST_EXPENSIVE, roots_file_node, 0 },
	[NT_THREADS_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &threads_ops },
	[NT_THREAD_DIR] = { HFS_DIR, COST_NONE, .fixed = thread_children },
	[NT_THREAD_STACK] = { HFS_FILE, COST_EXPENSIVE, thread_stack_node, 0 },
	[NT_GROUPS_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &groups_ops },
	[NT_ADHOC_MEMBERS] = { HFS_FILE, COST_VOLATILE, adhoc_members_node, 0 },
	[NT_ADHOC_GC_DIR] = { HFS_DIR, COST_NONE, .fixed = no_children, .dyn = &adhoc_gc_ops },
	[NT_SUSPECTS] = { HFS_FILE, COST_EXPENSIVE, suspects_node, SUS_TEXT },
	[NT_SUSPECTS_JSON] = { HFS_FILE, COST_EXPENSIVE, suspects_node, SUS_JSON },
	[NT_ALLOCS_DIR] = { HFS_DIR, COST_NONE, .fixed = allocs_children },
	[NT_LEAKS_DIR] = { HFS_DIR, COST_NONE, .fixed = leaks_children },
	[NT_ALLOCS_BY_SITE] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_SITE, ALLOCS_TSV) },
	[NT_ALLOCS_BY_SITE_CSV] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_SITE, ALLOCS_CSV) },
	[NT_ALLOCS_BY_SITE_JSON] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_SITE, ALLOCS_JSON) },
	[NT_ALLOCS_BY_METHOD] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_METHOD, ALLOCS_TSV) },
	[NT_ALLOCS_BY_METHOD_CSV] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_METHOD, ALLOCS_CSV) },
	[NT_ALLOCS_BY_METHOD_JSON] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_METHOD, ALLOCS_JSON) },
	[NT_ALLOCS_BY_CALLER] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_CALLER, ALLOCS_TSV) },
	[NT_ALLOCS_BY_CALLER_CSV] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_CALLER, ALLOCS_CSV) },
	[NT_ALLOCS_BY_CALLER_JSON] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_BY_CALLER, ALLOCS_JSON) },
	[NT_ALLOCS_STATS] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_STATS, ALLOCS_TSV) },
	[NT_ALLOCS_STATS_CSV] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_STATS, ALLOCS_CSV) },
	[NT_ALLOCS_STATS_JSON] = { HFS_FILE, COST_EXPENSIVE, allocs_node, ALLOCS_ARG(ALLOCS_STATS, ALLOCS_JSON) },
};

/* A node's definition: its child row's for an NT_FILE, else its type's. */
static const struct nt_def *def_of(const struct node *n)
{
	return n->type == NT_FILE && n->file ? n->file : &nt_defs[n->type];
}


static int lookup_child(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	const struct nt_def *d = def_of(p);
	if (d->kind != HFS_DIR)
		return -ENOTDIR;
	for (const struct child_def *f = d->fixed; f->name; f++) {
		if (strcmp(f->name, name) == 0 && (!f->present || f->present(fs, p))) {
			*c = *p;
			c->type = f->type;
			c->file = f->file;
			return 0;
		}
	}
	if (d->dyn && d->dyn->lookup)
		return d->dyn->lookup(fs, p, name, c);
	return -ENOENT;
}

static int list_children(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	const struct nt_def *d = def_of(p);
	if (d->kind != HFS_DIR)
		return -ENOTDIR;
	for (const struct child_def *f = d->fixed; f->name; f++) {
		if (f->present && !f->present(fs, p))
			continue;
		struct node c = *p;
		c.type = f->type;
		c.file = f->file;
		if (emit(ctx, f->name, &c))
			return 1;
	}
	if (d->dyn && d->dyn->list)
		return d->dyn->list(fs, p, emit, ctx);
	return 0;
}

int render_node(struct hfs *fs, const struct node *n, struct buf *out)
{
	const struct nt_def *d = def_of(n);
	return d->render ? d->render(fs, n, d->arg, out) : -EISDIR;
}

/* ---- links ---- */

static int link_target(struct hfs *fs, const struct node *n, char *buf, size_t len)
{
	char name[16];
	switch (n->type) {
	case NT_GC_LATEST:
		hfs_gc_name(fs, fs->en.trace->ngcs - 1, name);
		snprintf(buf, len, "%s", name);
		return 0;
	case NT_DS_LINK:
		snprintf(buf, len, "gc/latest/ds");
		return 0;
	case NT_ROOTS_LINK:
		snprintf(buf, len, "gc/latest/roots");
		return 0;
	case NT_WINDOW_START:
	case NT_WINDOW_END:
		return hfs_window_link(fs, (enum win_kind)n->win, n->type == NT_WINDOW_END, buf, len);
	case NT_WINDOW_DIFF:
		return hfs_window_diff_link(fs, (enum win_kind)n->win, buf, len);
	default:
		return -EINVAL;
	}
}

/* ---- path resolution ---- */

static int next_component(const char **p, char *comp)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	if (!*s)
		return 0;
	const char *e = strchr(s, '/');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	if (n > NAME_MAX_BYTES)
		return -ENAMETOOLONG;
	memcpy(comp, s, n);
	comp[n] = '\0';
	*p = s + n;
	return 1;
}

static int rest_is_empty(const char *p)
{
	while (*p == '/')
		p++;
	return *p == '\0';
}

/* Replaces work with prefix + "/" + middle + rest (rest starts after the
 * current component). */
static int rebuild_path(char *work, const char *prefix, const char *middle, const char *rest)
{
	char tmp[HFS_PATH_MAX];
	int n = snprintf(tmp, sizeof tmp, "%s/%s%s", prefix, middle, rest);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return -ENAMETOOLONG;
	memcpy(work, tmp, (size_t)n + 1);
	return 0;
}

static void parent_of(const char *canon, char *out)
{
	strcpy(out, canon);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
}

/* Resolves path to a node and its canonical path ("" is the root while
 * walking, "/" on return).  Links in the middle are always followed, the
 * last one only if follow_last. */
static int resolve(struct hfs *fs, const char *path, int follow_last, struct node *n,
		   char canon[HFS_PATH_MAX])
{
	char work[HFS_PATH_MAX], comp[NAME_BUF], parent[HFS_PATH_MAX], target[HFS_PATH_MAX];
	int loops = 0, rc;
	if (strlen(path) >= sizeof work)
		return -ENAMETOOLONG;
	strcpy(work, path);
restart:
	memset(n, 0, sizeof *n);
	n->type = NT_ROOT;
	chain_init(&n->chain);
	canon[0] = '\0';
	const char *p = work;
	while ((rc = next_component(&p, comp)) > 0) {
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			parent_of(canon, parent);
			if ((rc = rebuild_path(work, parent, "", p)))
				return rc;
			goto restart;
		}
		struct node c;
		if ((rc = lookup_child(fs, n, comp, &c)))
			return rc;
		if (def_of(&c)->kind == HFS_LINK && (follow_last || !rest_is_empty(p))) {
			if (++loops > LINK_LOOP_MAX)
				return -ELOOP;
			if ((rc = link_target(fs, &c, target, sizeof target)))
				return rc;
			strcpy(parent, canon);
			if ((rc = rebuild_path(work, parent, target, p)))
				return rc;
			goto restart;
		}
		size_t cl = strlen(canon);
		if (cl + 1 + strlen(comp) >= HFS_PATH_MAX)
			return -ENAMETOOLONG;
		canon[cl] = '/';
		strcpy(canon + cl + 1, comp);
		*n = c;
	}
	if (rc < 0)
		return rc;
	if (!canon[0])
		strcpy(canon, "/");
	return 0;
}

/* ---- rendering through the cache ---- */

struct render_ctx {
	struct hfs *fs;
	const struct node *n;
};

static int render_cb(void *ctx, struct buf *out)
{
	struct render_ctx *rc = ctx;
	return render_node(rc->fs, rc->n, out);
}

/* Room for a canonical path and the definition ids node_cache_key adds. */
#define NODE_KEY_MAX (HFS_PATH_MAX + 12 * (CHAIN_STEPS_MAX + 1))

static int is_user_classifier(const struct cls_registry *r, uint32_t id)
{
	return id < __atomic_load_n(&r->ndefs, __ATOMIC_ACQUIRE) && r->defs[id]->user;
}

/* A file's render cache key: its canonical path, followed by the ids of
 * the user-defined classifiers its path goes through.  A definition
 * written again gets a new id, so the old definition's bytes (and their
 * remembered size) never answer for the new one at the same path. */
static void node_cache_key(struct hfs *fs, const struct node *n, const char *canon,
			   char key[NODE_KEY_MAX])
{
	size_t at = (size_t)snprintf(key, NODE_KEY_MAX, "%s", canon);
	for (uint32_t i = 0; i <= n->chain.depth; i++) {
		uint32_t id;
		if (i < n->chain.depth) {
			const struct chain_step *st = &n->chain.steps[i];
			if (st->op != ST_CLS && st->op != ST_FILTER)
				continue;
			id = st->cls;
		} else {
			id = n->cls;
		}
		if (is_user_classifier(&fs->en.reg, id) && at < NODE_KEY_MAX)
			at += (size_t)snprintf(key + at, NODE_KEY_MAX - at, "\x02%" PRIu32, id);
	}
}

static int render_cached(struct hfs *fs, const struct node *n, const char *canon,
			 struct rc_entry **e)
{
	struct render_ctx ctx = { fs, n };
	char key[NODE_KEY_MAX];
	node_cache_key(fs, n, canon, key);
	return rcache_get(fs->en.rc, key, render_cb, &ctx, e);
}

/* ---- attributes ---- */

static uint64_t path_ino(const char *canon)
{
	uint64_t h = name_hash64(canon, strlen(canon));
	return h <= 1 ? h + 2 : h;
}

static int node_attr(struct hfs *fs, const struct node *n, const char *canon, struct hfs_attr *a)
{
	const struct nt_def *d = def_of(n);
	memset(a, 0, sizeof *a);
	a->kind = d->kind;
	a->ino = path_ino(canon);
	a->nlink = d->kind == HFS_DIR ? 2 : 1;
	a->writable = n->type == NT_CLASSIFIER_DEF || n->type == NT_CLASSIFIERS_DIR ||
		      n->type == NT_GROUPS_DIR || n->type == NT_ADHOC_MEMBERS;
	if (d->kind == HFS_LINK) {
		char target[HFS_PATH_MAX];
		int rc = link_target(fs, n, target, sizeof target);
		if (rc)
			return rc;
		a->size = strlen(target);
		a->size_exact = 1;
		return 0;
	}
	if (d->kind == HFS_DIR)
		return 0;
	if (d->cost == COST_CHEAP) {
		struct rc_entry *e;
		int rc = render_cached(fs, n, canon, &e);
		if (rc)
			return rc;
		a->size = rc_len(e);
		a->size_exact = 1;
		rcache_put(fs->en.rc, e);
	} else if (d->cost == COST_EXPENSIVE) {
		char key[NODE_KEY_MAX];
		node_cache_key(fs, n, canon, key);
		a->size_exact = rcache_peek_size(fs->en.rc, key, &a->size);
	} else if (d->cost == COST_VOLATILE) {
		/* cheap but changing (status, classifiers/, members): its size
		 * now, because tools size their reading by it (sort given size
		 * 0 reads a 1 MB members file 4 KB at a time into a hundred
		 * temporary files); `changes` keeps it out of the page cache */
		struct buf b;
		buf_init(&b);
		int rc = render_node(fs, n, &b);
		a->size = b.len;
		buf_free(&b);
		if (rc)
			return rc;
		a->size_exact = 1;
		a->changes = 1;
	}
	return 0;
}

/* ---- public API ---- */

int hfs_getattr(struct hfs *fs, const char *path, struct hfs_attr *a)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 0, &n, canon);
	return rc ? rc : node_attr(fs, &n, canon, a);
}

struct readdir_ctx {
	struct hfs *fs;
	const char *dir;       /* canonical path of the directory */
	hfs_fill_fn fill;
	void *ctx;
	int err;
};

static int readdir_emit(void *vctx, const char *name, const struct node *child)
{
	struct readdir_ctx *r = vctx;
	char path[HFS_PATH_MAX];
	struct hfs_attr a;
	int n = snprintf(path, sizeof path, "%s/%s", strcmp(r->dir, "/") ? r->dir : "", name);
	if (n < 0 || (size_t)n >= sizeof path) {
		r->err = -ENAMETOOLONG;
		return 1;
	}
	int rc = node_attr(r->fs, child, path, &a);
	if (rc) {
		r->err = rc;
		return 1;
	}
	return r->fill(r->ctx, name, &a) ? 1 : 0;
}

int hfs_readdir(struct hfs *fs, const char *path, hfs_fill_fn fill, void *ctx)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 1, &n, canon);
	if (rc)
		return rc;
	if (def_of(&n)->kind != HFS_DIR)
		return -ENOTDIR;
	struct readdir_ctx r = { fs, canon, fill, ctx, 0 };
	rc = list_children(fs, &n, readdir_emit, &r);
	if (rc < 0)
		return rc;
	return r.err;
}

int hfs_readlink(struct hfs *fs, const char *path, char *buf, size_t len)
{
	struct node n;
	char canon[HFS_PATH_MAX], target[HFS_PATH_MAX];
	int rc = resolve(fs, path, 0, &n, canon);
	if (rc)
		return rc;
	if (def_of(&n)->kind != HFS_LINK)
		return -EINVAL;
	if ((rc = link_target(fs, &n, target, sizeof target)))
		return rc;
	if (len == 0)
		return -ERANGE;
	snprintf(buf, len, "%s", target);
	return 0;
}

int hfs_read(struct hfs *fs, const char *path, struct buf *out)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 1, &n, canon);
	if (rc)
		return rc;
	const struct nt_def *d = def_of(&n);
	if (d->kind == HFS_DIR)
		return -EISDIR;
	/* groups/NAME changes when its members do: its files are rendered
	 * each time (the results below them are cached per member version) */
	if (d->cost == COST_VOLATILE || strncmp(canon, "/groups/", 8) == 0)
		return render_node(fs, &n, out);
	struct rc_entry *e;
	if ((rc = render_cached(fs, &n, canon, &e)))
		return rc;
	rc = buf_put(out, rc_data(e), rc_len(e));
	rcache_put(fs->en.rc, e);
	return rc;
}

/* ---- shared helpers ---- */

int hfs_group_gc(struct hfs *fs, const char *path, uint32_t *gci)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 1, &n, canon);
	if (rc)
		return rc;
	if (n.type != NT_GROUP)
		return -ENOENT;
	*gci = n.gci;
	return 0;
}

void hfs_gc_name(const struct hfs *fs, uint32_t gci, char out[16])
{
	snprintf(out, 16, "%0*" PRIu32, (int)fs->gc_width, fs->en.trace->gcs[gci].gc);
}

int hfs_last_error(struct hfs *fs, char *buf, size_t len)
{
	return eng_last_error(&fs->en, buf, len);
}

/* ---- writable classifiers/ ---- */

/* NAME when path is /classifiers/NAME, else NULL. */
static const char *classifier_file_name(const char *path)
{
	while (*path == '/')
		path++;
	if (strncmp(path, "classifiers/", 12) != 0)
		return NULL;
	const char *name = path + 12;
	if (!*name || strchr(name, '/'))
		return NULL;
	return name;
}

static int reserved_in_classifiers(const char *name)
{
	for (const struct child_def *f = classifiers_children; f->name; f++) {
		if (!strcmp(f->name, name))
			return 1;
	}
	return 0;
}

int hfs_can_create(struct hfs *fs, const char *path)
{
	(void)fs;
	const char *name = classifier_file_name(path);
	return name && !reserved_in_classifiers(name) && expr_valid_name(name, strlen(name));
}

/* Whether a compile error lies at the end of src (after its last byte),
 * where more text could still complete the definition. */
static int error_at_end(const char *src, size_t len, const struct expr_error *err)
{
	uint32_t line = 1, col = 1;
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return err->line > line || (err->line == line && err->col >= col);
}

/* A definition checked without being applied: 0 when it compiles or is
 * only cut short (its error lies at its end, more text may come). */
static int check_definition(const char *name, const char *data, size_t len, char *msg,
			    size_t msglen)
{
	struct expr_error err;
	struct expr *e;
	int rc = expr_compile(data, len, &e, &err);
	if (rc == 0) {
		expr_free(e);
		return 0;
	}
	if (rc != -EINVAL || error_at_end(data, len, &err))
		return rc == -EINVAL ? 0 : rc;
	snprintf(msg, msglen, "%s: line %u, column %u: %s", name, err.line, err.col, err.msg);
	return -EINVAL;
}

/* Applies a writable file's text, or only checks it (check_only); a
 * refusal is logged (classifiers/errors, and the progress stream). */
static int write_text(struct hfs *fs, const char *path, const char *data, size_t len, char *msg,
		      size_t msglen, int check_only)
{
	char gname[256];
	msg[0] = '\0';
	if (adhoc_members_name(path, gname)) {
		int rc = check_only ? hfs_adhoc_check_members(fs, gname, data, len, msg, msglen)
				    : hfs_adhoc_set_members(fs, gname, data, len, msg, msglen);
		if (rc == -EINVAL && fs->en.progress)
			fprintf(fs->en.progress, "heapfs: %s\n", msg);
		return rc;
	}
	const char *name = classifier_file_name(path);
	if (!name || reserved_in_classifiers(name))
		return -EROFS;
	int rc = check_only ? check_definition(name, data, len, msg, msglen)
			    : cls_define(&fs->en.reg, name, data, len, msg, msglen);
	if (rc == -EINVAL) {
		cls_log_error(&fs->en.reg, msg);
		if (fs->en.progress)
			fprintf(fs->en.progress, "heapfs: classifiers/%s\n", msg);
	}
	return rc;
}

int hfs_write_file(struct hfs *fs, const char *path, const char *data, size_t len, char *msg,
		   size_t msglen)
{
	return write_text(fs, path, data, len, msg, msglen, 0);
}

int hfs_members_checked_whole(const struct hfs *fs)
{
	return fs->en.trace->identity_unknown;
}

int hfs_write_check(struct hfs *fs, const char *path, const char *data, size_t len, char *msg,
		    size_t msglen)
{
	return write_text(fs, path, data, len, msg, msglen, 1);
}

int hfs_unlink(struct hfs *fs, const char *path)
{
	const char *name = classifier_file_name(path);
	if (!name || reserved_in_classifiers(name))
		return -EROFS;
	return cls_undefine(&fs->en.reg, name);
}

/* groups/NAME */
int hfs_mkdir(struct hfs *fs, const char *path)
{
	char name[256];
	if (!adhoc_dir_name(path, name))
		return -EROFS;
	return hfs_adhoc_mkdir(fs, name);
}

int hfs_rmdir(struct hfs *fs, const char *path)
{
	char name[256];
	if (!adhoc_dir_name(path, name))
		return -EROFS;
	return hfs_adhoc_rmdir(fs, name);
}

/* ---- open / close ---- */

uint64_t proc_status_bytes(const char *key)
{
	char line[256];
	uint64_t v = 0;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoull(line + klen + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return v * 1024;
}

static uint32_t digits(uint32_t v)
{
	uint32_t d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* The classifier registry, with -o features and -o classifiers: a bad
 * file refuses the mount with the message (file, line, column). */
int hfs_open(struct hfs **out, const char *trace_path, const struct hfs_opts *o,
	     struct htr_err *err)
{
	struct hfs *fs = calloc(1, sizeof *fs);
	int rc = -ENOMEM;
	if (!fs)
		return htr_errf(err, -ENOMEM, 0, "out of memory");
	uint64_t mb = (o && o->cache_mb) ? o->cache_mb : 1024;
	fs->cache_budget = mb << 20;
	/* cache_mb is everything cached: three quarters for heap states, a
	 * quarter for analysis results and rendered files */
	struct eng_opts eo = {
		.progress = o ? o->progress : NULL,
		.features = o ? o->features : NULL,
		.classifiers = o ? o->classifiers : NULL,
		.windows = o ? o->windows : NULL,
		.suspects = o ? o->suspects : NULL,
		.hprof_layout = o ? o->hprof_layout : 0,
		.threads = o ? o->analysis_threads : 0,
		.state_budget = fs->cache_budget - fs->cache_budget / 4,
		.result_budget = fs->cache_budget / 4,
	};
	if ((rc = eng_open(&fs->en, trace_path, &eo, err)))
		goto fail;
	uint32_t maxgc = 0;
	for (uint32_t i = 0; i < fs->en.trace->ngcs; i++) {
		if (fs->en.trace->gcs[i].gc > maxgc)
			maxgc = fs->en.trace->gcs[i].gc;
	}
	fs->gc_width = digits(maxgc) < 3 ? 3 : digits(maxgc);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nthreads = o && o->compute_threads ? o->compute_threads : ncpu > 0 ? (unsigned)ncpu : 1;
	if ((rc = jobs_new(&fs->jobs, nthreads)) || (rc = jobs_new(&fs->list_jobs, nthreads))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	/* opening may need more than it keeps (importing a heap dump): its
	 * peak is part of the fixed overhead */
	fs->open_peak = proc_status_bytes("VmHWM");
	*out = fs;
	return 0;
fail:
	hfs_stop_jobs(fs, UINT32_MAX);
	eng_destroy(&fs->en);
	free(fs);
	return rc;
}

void hfs_open_error_text(char *buf, size_t len, const char *trace, int rc,
			 const struct htr_err *err)
{
	const char *msg = err->msg[0] ? err->msg : strerror(-rc);
	if (err->msg[0] && err->form == HTR_ERR_WHOLE)
		snprintf(buf, len, "%s", msg);
	else if (!err->msg[0] || err->form == HTR_ERR_FILE || rc == -ENOENT || rc == -EACCES ||
		 rc == -EPERM || rc == -EISDIR || rc == -ENOMEM)
		snprintf(buf, len, "%s: %s", trace, msg);
	else
		snprintf(buf, len, "%s: offset %" PRIu64 ": %s", trace, err->offset, msg);
}

struct jobs *hfs_jobs(struct hfs *fs)
{
	return fs->jobs;
}

struct jobs *hfs_list_jobs(struct hfs *fs)
{
	return fs->list_jobs;
}

int hfs_stop_jobs(struct hfs *fs, unsigned timeout_ms)
{
	int rc = 0;
	if (jobs_shutdown(fs->jobs, timeout_ms) == 0)
		fs->jobs = NULL;
	else
		rc = -EBUSY;
	if (jobs_shutdown(fs->list_jobs, timeout_ms) == 0)
		fs->list_jobs = NULL;
	else
		rc = -EBUSY;
	return rc;
}

void hfs_close(struct hfs *fs)
{
	if (!fs)
		return;
	hfs_stop_jobs(fs, UINT32_MAX);
	eng_destroy(&fs->en);
	free(fs);
}

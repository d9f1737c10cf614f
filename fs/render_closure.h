/* render_closure.h - closures, retained sizes, dominators, GC roots
 * and ad-hoc groups in the tree (gc-roots paper §3-§5).
 *
 * Cached internal results (fs/rcache.h, keys start with "\x01"), computed
 * once per heap state whatever the number of readers:
 *   "\x01dom/<gci>"          the dominator tree: retained[n] (u64),
 *                            idom[n], retained_count[n] (u32): 16 B/object
 *   "\x01clodeep/..." and "\x01cloret/..."   a group's deep / retained metrics
 *   "\x01clotab/..."         per child of a classification: deep and retained
 *                            metrics (one GC closure per child, sorted by key)
 *   "\x01rootpaths/<gci>"    every GC root's path under roots/, sorted
 * Dense indexes are stable across rebuilds of a state (id order), so the
 * blobs stay valid after the state is evicted.
 *
 * Ad-hoc groups (groups/NAME): a registry of named object-id sets (owned by
 * struct hfs through fs->en.adhoc, own leaf lock).  Every change of a group's
 * members makes a new version (an id that is never reused), and the group
 * node's chain carries the version in an ST_ADHOC step, so cached results of
 * an old version are never served for a new one.  Files under /groups are
 * rendered uncached for the same reason (tree.c).
 *
 * Ownership: views borrow pinned cache entries (release with
 * rcache_put(fs->en.rc, e)); everything else is written into caller bufs.
 */
#ifndef HEAPFS_FS_RENDER_CLOSURE_H
#define HEAPFS_FS_RENDER_CLOSURE_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/dominators.h"
#include "model/buf.h"

struct hfs;
struct node;
struct chain;
struct rc_entry;

/* ---- dominators ---- */

struct dom_view {
	uint32_t n, nreachable;
	const uint64_t *retained;       /* [n] bytes of the dominator subtree */
	const uint32_t *idom;           /* [n] DOM_ROOT / DOM_UNREACHABLE */
	const uint32_t *retained_count; /* [n] */
};

/* The dominator tree of GC gci (computed once, cached); -EINVAL at a GC
 * without a graph. */
int hfs_dominators_get(struct hfs *fs, uint32_t gci, struct rc_entry **e, struct dom_view *v);

/* A struct dominators over a view (borrowed arrays, for analyses that take
 * one; never pass it to dominators_free). */
void dom_view_as_dominators(const struct dom_view *v, struct dominators *d);

/* ---- closure metrics ---- */

struct clo_metrics {
	uint64_t deep_count, deep_bytes, retained_count, retained_bytes;
};


/* Per child of classifying the chain's group by cls, sorted by key. */
struct clo_row {
	uint32_t key, reserved;
	struct clo_metrics m;
};
int hfs_class_closures_get(struct hfs *fs, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct clo_row **rows, uint32_t *nrows);

/* 1 if closure files exist for this group node (plain group, graph). */
int closure_files_present(const struct hfs *fs, const struct node *n);

/* ---- files ---- */

/* deep_count, deep_size, retained_count, retained_size */
enum closure_file { CLF_DEEP_COUNT, CLF_DEEP_SIZE, CLF_RET_COUNT, CLF_RET_SIZE };
int render_group_closure_file(struct hfs *fs, const struct node *n, int which, struct buf *out);
/* The closure lines appended to a group's summary (nothing without a graph). */
int render_group_closure_summary(struct hfs *fs, const struct node *n, struct buf *out);
int render_group_roots(struct hfs *fs, const struct node *n, struct buf *out);
int render_group_paths(struct hfs *fs, const struct node *n, struct buf *out);
int render_dominators_top(struct hfs *fs, const struct node *n, struct buf *out);
int render_object_retained(struct hfs *fs, const struct node *n, struct buf *out);
int render_object_dominator(struct hfs *fs, const struct node *n, struct buf *out);
int render_object_path(struct hfs *fs, const struct node *n, struct buf *out);
int render_roots_file(struct hfs *fs, const struct node *n, struct buf *out);
int render_thread_stack(struct hfs *fs, const struct node *n, struct buf *out);
int render_adhoc_members(struct hfs *fs, const struct node *n, struct buf *out);

/* ---- directories (the same emit signature as tree.c's) ---- */

typedef int (*rclo_emit_fn)(void *ctx, const char *name, const struct node *child);

/* gc/NNN/roots/...: the kinds and their levels (node.aux[0] = depth in the
 * path trie, node.aux[1] = first root of the prefix in path order). */
int roots_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx);
int roots_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c);
/* gc/NNN/threads/<thread> (node.aux[0] = dense thread index) */
int threads_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx);
int threads_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c);
/* closure/transitive, closure/retained */
int closure_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx);
int closure_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c);
/* groups/NAME (node.aux[0] = 1 at groups/NAME itself) and groups/NAME/gc/NNN */
int groups_dir_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx);
int groups_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c);
int adhoc_gc_list(struct hfs *fs, const struct node *p, rclo_emit_fn emit, void *ctx);
int adhoc_gc_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c);

/* ---- ad-hoc groups ---- */

int hfs_adhoc_new(struct hfs *fs);   /* sets fs->en.adhoc and the registry hook */
/* NAME when path is /groups/NAME (no further component), else NULL. */
const char *adhoc_dir_name(const char *path, char name[256]);
/* NAME when path is /groups/NAME/members, else NULL. */
const char *adhoc_members_name(const char *path, char name[256]);
int hfs_adhoc_mkdir(struct hfs *fs, const char *name);
int hfs_adhoc_rmdir(struct hfs *fs, const char *name);
/* Replaces the selectors of a group (one per line: an object id, or the
 * path of a group node in the tree); -EINVAL with a message for a bad one. */
int hfs_adhoc_set_members(struct hfs *fs, const char *name, const char *data, size_t len,
			  char *msg, size_t msglen);
/* Checks selector lines as hfs_adhoc_set_members would, changing nothing. */
int hfs_adhoc_check_members(struct hfs *fs, const char *name, const char *data, size_t len,
			    char *msg, size_t msglen);

#endif

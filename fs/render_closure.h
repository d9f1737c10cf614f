/* render_closure.h - closures, retained sizes, dominators, GC roots
 * and ad-hoc groups in the tree (gc-roots paper §3-§5).
 *
 * The closures and dominators themselves are engine results
 * (analyses/retained.h); this file walks the graph for roots and paths,
 * caches every GC root's name for the roots/ directories, and prints.
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

#include "analyses/retained.h"
#include "model/buf.h"

struct hfs;
struct node;
struct chain;
struct rc_entry;

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

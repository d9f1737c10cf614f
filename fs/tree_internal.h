/* tree_internal.h - what fs/tree.c (paths, nodes, dispatch) and the
 * renderers (fs/render_*.c) share.  Not for the front ends: they use tree.h.
 *
 * Lock order (outermost first); no function holds two of these at once
 * except as listed, and none is held across a heap-state build or a render:
 *   1. state cache lock (model/state_cache.c, internal)
 *   2. rendered cache lock (fs->rc, fs/rcache.c, a leaf)
 *   3. classifier registry lock (fs->reg.lock, a leaf: held only while one
 *      key space is built from the trace)
 *   4. fs->err_lock (a leaf: held only to copy the last error message)
 * In practice every lock is a leaf: a render runs with no lock held and takes
 * each lock only for short, non-nested sections.
 */
#ifndef HEAPFS_FS_TREE_INTERNAL_H
#define HEAPFS_FS_TREE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "classify.h"
#include "model/heap_state.h"
#include "model/state_cache.h"
#include "model/trace.h"
#include "rcache.h"
#include "tree.h"

#define HFS_PATH_MAX 4096

struct hfs {
	struct trace *trace;        /* owned; immutable after open */
	struct state_cache *states; /* owned; own lock */
	struct rcache *rc;          /* owned; own lock */
	struct cls_registry reg;    /* owned; own lock */
	uint32_t gc_width;          /* digits of gc/NNN names */
	uint64_t state_budget;
	FILE *progress;             /* borrowed */
	pthread_mutex_t err_lock;
	char last_error[600];       /* err_lock; "" = none */
};

/* Node types.  A node is a value (no allocation): its type plus the
 * coordinates that type needs. */
enum nt {
	NT_ROOT = 1,
	NT_README,
	NT_STATUS,
	NT_TRACE_DIR,
	NT_TRACE_INFO,
	NT_TIMELINE_DIR,
	NT_GCS_CSV,
	NT_GC_DIR,
	NT_GC_LATEST,       /* link gc/latest -> NNN */
	NT_ROOTS_LINK,      /* link /roots -> gc/latest/roots */
	NT_GROUP,           /* gc/NNN (empty chain) or a classification child */
	NT_GC_INFO,
	NT_GROUP_COUNT,
	NT_GROUP_SHALLOW,
	NT_GROUP_SUMMARY,
	NT_GROUP_OBJECTS,   /* object ids file of a non-root group */
	NT_CLASSIFICATION,  /* by-<cls>/ */
	NT_TABLE_TSV,
	NT_TABLE_CSV,
	NT_TABLE_JSON,
	NT_OBJECTS_DIR,     /* gc/NNN/objects/ (lookup only) */
	NT_OBJECTS_ALL,     /* gc/NNN/objects/all: ids of all objects */
	NT_OBJECT_DIR,
	NT_OBJECT_INFO,
	NT_OBJECT_REFS,
	NT_OBJECT_REFERRERS,
	NT_ROOTS_DIR,
	NT_ROOTS_TABLE,
	NT_COUNT_
};

struct node {
	enum nt type;
	uint32_t gci;          /* gc index, for everything under gc/NNN */
	struct chain chain;    /* group nodes and what is below them */
	uint32_t cls;          /* classification node and its tables */
	uint64_t obj;          /* object id, under objects/<id> */
};

/* Renders a file node into out.  Expensive renders get heap states and
 * censuses through the helpers below. */
int render_node(struct hfs *fs, const struct node *n, struct buf *out);

/* State after GC gci, pinned; failures are recorded for hfs_last_error and
 * returned as -EIO (or -ENOMEM). */
int hfs_state_get(struct hfs *fs, uint32_t gci, const struct heap_state **s);
void hfs_state_put(struct hfs *fs, const struct heap_state *s);

/* Census of GC gci (cached); release *e with rcache_put(fs->rc, *e). */
int hfs_census_get(struct hfs *fs, uint32_t gci, struct rc_entry **e, struct census *c);

/* Classification of the chain's group at gci by cls (cached): rows sorted
 * by key; release *e with rcache_put. */
int hfs_classification_get(struct hfs *fs, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct cls_row **rows, uint32_t *nrows);

/* gc/NNN directory name of a gc index. */
void hfs_gc_name(const struct hfs *fs, uint32_t gci, char out[16]);
int hfs_gc_has_graph(const struct hfs *fs, uint32_t gci);

void hfs_set_error(struct hfs *fs, const struct htr_err *err);

#endif

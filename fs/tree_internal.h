/* tree_internal.h - what fs/tree.c (paths, nodes, dispatch) and the
 * renderers (fs/render_*.c) share.  Not for the front ends: they use tree.h.
 *
 * Locks: the engine's (analyses/engine.h) are all leaves, and the job
 * pools' (fs/jobs.h); a render runs with no lock held and takes each lock
 * only for short, non-nested sections.
 */
#ifndef HEAPFS_FS_TREE_INTERNAL_H
#define HEAPFS_FS_TREE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "analyses/classify.h"
#include "analyses/engine.h"
#include "analyses/groups.h"
#include "analyses/suspects.h"
#include "model/heap_state.h"
#include "model/state_cache.h"
#include "model/trace.h"
#include "analyses/rcache.h"
#include "tree.h"

#define HFS_PATH_MAX 4096

struct hfs {
	struct engine en;           /* the analyses (analyses/engine.h): trace, states,
	                               results, classifiers, windows, ad-hoc groups */
	uint32_t gc_width;          /* digits of gc/NNN names */
	struct jobs *jobs;          /* owned; own lock; NULL once stopped: reads */
	struct jobs *list_jobs;     /* owned; own lock; NULL once stopped: listings */
	uint64_t cache_budget;      /* cache_mb in bytes: states and rendered results */
	uint64_t open_peak;         /* peak resident bytes by the end of open: the fixed overhead */
};

/* Node types.  A node is a value (no allocation): its type plus the
 * coordinates that type needs. */
enum nt {
	NT_ROOT = 1,
	NT_FILE,            /* a plain file its parent's child row defines (node.file) */
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
	/* classification, diff, user-defined classifiers */
	NT_DIFF_DIR,        /* gc/NNN/diff/ */
	NT_CLASSIFIERS_DIR, /* /classifiers */
	NT_CLASSIFIERS_README,
	NT_CLASSIFIERS_ERRORS,
	NT_CLASSIFIERS_LIST, /* classifiers/list: every classifier, one per line */
	NT_CLASSIFIER_DEF,  /* classifiers/NAME: a user definition (writable) */
	/* windows and the memory plot (fs/render_windows.c) */
	NT_MEMORY_SVG,      /* timeline/memory.svg */
	NT_WINDOWS_DIR,     /* /windows */
	NT_WINDOW_FILE,     /* windows/<kind>; node.win = kind */
	NT_WINDOWS_SUMMARY,
	NT_WINDOWS_DIFF_DIR, /* windows/diff/ */
	NT_WINDOW_DIFF_DIR, /* windows/diff/<kind>/; node.win = kind */
	NT_WINDOW_START,    /* link windows/diff/<kind>/start -> ../../../gc/NNN */
	NT_WINDOW_END,      /* link .../end */
	NT_WINDOW_DIFF,     /* link .../diff -> ../../../gc/END/diff/START */
	NT_WINDOW_GROWING,  /* windows/diff/<kind>/growing: groups by net growth */
	/* data-structure roles (fs/render_ds.c) */
	NT_DS_DIR,          /* gc/NNN/ds/ */
	NT_DS_ROLES,        /* gc/NNN/ds/roles */
	NT_DS_HEADS,        /* gc/NNN/ds/heads */
	NT_DS_TABLE,        /* gc/NNN/ds/table */
	NT_DS_LINK,         /* link /ds -> gc/latest/ds */
	/* closures, dominators, roots, ad-hoc groups (fs/render_closure.c) */
	NT_CLOSURE_DIR,     /* <group>/closure/ */
	NT_GROUP_ROOTS,     /* <group>/roots (a subgroup's; gc/NNN/roots is the dir) */
	NT_GROUP_PATHS,     /* <group>/paths */
	NT_DOMINATORS_DIR,  /* gc/NNN/dominators/ */
	NT_DOMINATORS_TOP,
	NT_OBJECT_RETAINED, NT_OBJECT_DOMINATOR, NT_OBJECT_PATH,
	NT_ROOTS_SUBDIR,    /* gc/NNN/roots/<kind>/...; node.aux = trie position */
	NT_ROOTS_FILE,      /* a leaf under roots/ */
	NT_THREADS_DIR,     /* gc/NNN/threads/ */
	NT_THREAD_DIR,      /* threads/<thread>/; node.aux[0] = dense thread index */
	NT_THREAD_STACK,
	NT_GROUPS_DIR,      /* /groups */
	NT_ADHOC_MEMBERS,   /* groups/NAME/members (writable) */
	NT_ADHOC_GC_DIR,    /* groups/NAME/gc/ */
	/* suspects (fs/render_suspects.c) */
	NT_SUSPECTS, NT_SUSPECTS_JSON,
	/* allocation counts (fs/render_allocs.c) */
	NT_ALLOCS_DIR,      /* /allocs */
	NT_ALLOCS_BY_SITE, NT_ALLOCS_BY_SITE_CSV, NT_ALLOCS_BY_SITE_JSON,
	NT_ALLOCS_BY_METHOD, NT_ALLOCS_BY_METHOD_CSV, NT_ALLOCS_BY_METHOD_JSON,
	NT_ALLOCS_BY_CALLER, NT_ALLOCS_BY_CALLER_CSV, NT_ALLOCS_BY_CALLER_JSON,
	NT_ALLOCS_STATS, NT_ALLOCS_STATS_CSV, NT_ALLOCS_STATS_JSON,
	NT_LEAKS_DIR,       /* /leak-candidates (fs/render_leaks.c) */
	NT_COUNT_
};

struct nt_def;

struct node {
	enum nt type;
	const struct nt_def *file; /* NT_FILE: its definition (fs/tree.c), else NULL */
	uint32_t gci;          /* gc index, for everything under gc/NNN */
	struct chain chain;    /* group nodes and what is below them */
	uint32_t cls;          /* classification node and its tables; classifier
	                          definition file */
	uint64_t obj;          /* object id, under objects/<id> */
	uint32_t win;          /* window kind (enum win_kind), under windows/ */
	uint32_t aux[2];       /* fs/render_closure.h: roots/ trie
	                          position, thread index, groups/NAME flag */
};

/* A byte count of /proc/self/status ("VmRSS": resident now, "VmHWM": the
 * peak), 0 if unknown. */
uint64_t proc_status_bytes(const char *key);

/* Renders a file node into out. */
int render_node(struct hfs *fs, const struct node *n, struct buf *out);

/* The GC of the group node at path (links followed): 0, or -ENOENT when
 * path names no group node. */
int hfs_group_gc(struct hfs *fs, const char *path, uint32_t *gci);

/* gc/NNN directory name of a gc index. */
void hfs_gc_name(const struct hfs *fs, uint32_t gci, char out[16]);

#endif

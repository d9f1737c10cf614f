/* classify.h - classifiers, groups and the per-GC census.
 *
 * A group is (GC, chain of classifier steps): the root group of a GC has an
 * empty chain, gc/NNN/by-type/Foo/by-thread/main has the chain
 * [type=Foo, thread=main].  A chain never repeats a classifier, so every
 * chain of groups is finite (recursive walks terminate).
 *
 * Classifiers are rows of one table (classifiers[]).  Adding one (by-site
 * with callers, by-package, by-age, ...) is adding a row: a name, a key
 * space built from the trace (the names of all possible children), and a
 * function giving the key of an object.
 *
 * Fast path: the classifiers so far depend only on an object's interned
 * objinfo (type, site, thread, size).  The census of a GC counts objects per
 * objinfo in one pass over the dense index (counting into an array indexed
 * by info, no hashing); every group's count and shallow size and every
 * classification of an info-keyed chain is then a roll-up over the infos,
 * without touching objects again.  Member lists (the `objects` file) are
 * one pass over the state with a per-info match table.  A classifier that
 * needs the object itself (age, reachability, role) will set obj_key instead
 * of info_key and take the per-object pass; nothing else changes.
 *
 * Key spaces are built once per trace, lazily, under reg->lock (a leaf lock:
 * nothing else is locked while it is held).  Built spaces are immutable.
 *
 * Ownership: struct cls_registry owns the spaces; census blobs are plain
 * bytes owned by whoever holds them (the rendered cache in fs/tree.c).
 */
#ifndef HEAPFS_FS_CLASSIFY_H
#define HEAPFS_FS_CLASSIFY_H

#include <pthread.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/heap_state.h"
#include "model/trace.h"

enum cls_id { CLS_TYPE, CLS_SITE, CLS_THREAD, CLS_COUNT };
#define CHAIN_MAX CLS_COUNT
#define CLS_NO_KEY UINT32_MAX

struct name_ent;

/* All possible children of a classifier over the whole trace. */
struct cls_space {
	uint32_t nkeys;
	char **raw;            /* [nkeys] names as the trace has them, owned */
	char **names;          /* [nkeys] unique file names (names.h), owned */
	struct name_ent *map;  /* file name -> key, owned */
	uint32_t *site_key;    /* site classifier: site id -> key, owned */
	uint32_t nsite_key;
};

struct classifier {
	const char *name;      /* "type": the directory is by-type/ */
	const char *about;     /* one line for README */
	/* Fills sp->nkeys, sp->raw (and private maps). */
	int (*build)(const struct trace *t, struct cls_space *sp);
	/* Key of an object from its objinfo. */
	uint32_t (*info_key)(const struct trace *t, const struct cls_space *sp,
			     const struct objinfo *oi);
};

extern const struct classifier classifiers[CLS_COUNT];

struct chain_step {
	uint32_t cls, key;
};

struct chain {
	uint32_t depth;
	struct chain_step steps[CHAIN_MAX];
};

int chain_uses(const struct chain *c, uint32_t cls);

struct cls_registry {
	const struct trace *t;         /* borrowed */
	pthread_mutex_t lock;
	struct cls_space *sp[CLS_COUNT]; /* lock until built, then immutable */
};

int cls_registry_init(struct cls_registry *r, const struct trace *t);
void cls_registry_destroy(struct cls_registry *r);
/* The key space of a classifier, built on first use. */
int cls_space_get(struct cls_registry *r, uint32_t cls, const struct cls_space **out);
/* Key of a file name, or CLS_NO_KEY. */
uint32_t cls_space_find(const struct cls_space *sp, const char *name);

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

/* match[j] = 1 iff an object with infos[j] belongs to the chain's group. */
int chain_match(struct cls_registry *r, const struct chain *ch, const struct objinfo *infos,
		uint32_t ninfos, uint8_t **match);

/* Count and shallow bytes of a group. */
int group_totals(struct cls_registry *r, const struct census *c, const struct chain *ch,
		 uint64_t *count, uint64_t *bytes);

/* One child of a classification: key with its metrics. */
struct cls_row {
	uint32_t key;
	uint32_t reserved;
	uint64_t count, bytes;
};

/* Rows (sorted by key, count > 0 only) of classifying the chain's group by
 * cls, appended to out as struct cls_row[]. */
int classify(struct cls_registry *r, const struct census *c, const struct chain *ch,
	     uint32_t cls, struct buf *out);

/* Appends the ids of the group's members, ascending, one per line. */
int group_member_ids(struct cls_registry *r, const struct heap_state *s, const struct chain *ch,
		     struct buf *out);

/* "Class.method:line" for a frame (":line" only when known). */
int sym_frame(const struct trace *t, const struct htr_site_frame *f, struct buf *out);
/* "Class.method" of a method id. */
int sym_method(const struct trace *t, uint32_t method, struct buf *out);
/* Thread name of a dense thread index, "<unknown thread>" when none. */
const char *sym_thread(const struct trace *t, uint32_t thread);

#endif

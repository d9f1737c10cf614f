/* heap_state.h - the heap at one GC point, rebuilt from the trace.
 *
 * Objects get a dense index 0..n-1 in ascending object-id order, so object
 * sets are bitsets over n and properties are struct-of-arrays columns.
 * Per-object properties that many objects share (type, site, thread, size,
 * array length) are interned into `infos`, as AntTracks' ObjectInfo cache
 * does (classification paper §2.2): each object stores one u32.
 *
 * Memory per live object (all in, graph with E edges):
 *   id 8 + info 4 + birth 4 + out_off 4 + in_off 4
 *   + per edge: out_tgt 4 + out_slot 2 + in_src 4
 * = 24 + 10 E/n bytes, plus the reachable bitset (1 bit) and the shared
 * infos.  heap_state_memory() reports the exact figure.
 *
 * Ownership: a heap_state owns all its arrays; heap_state_free releases it.
 * A built state is immutable, so threads may read it concurrently.
 */
#ifndef HEAPFS_HEAP_STATE_H
#define HEAPFS_HEAP_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "iddir.h"
#include "trace.h"

struct objinfo {
	uint32_t type;         /* type id */
	uint32_t site;         /* site id, HTR_NO_SITE unknown */
	uint32_t thread;       /* dense thread index, UINT32_MAX unknown */
	uint32_t flags;        /* enum htr_alloc_flags */
	uint64_t size;         /* shallow bytes */
	int64_t array_length;  /* -1: not an array */
};

struct hs_root {
	uint32_t kind;         /* enum htr_root_kind */
	uint32_t object;       /* dense index of the referenced object */
	uint32_t thread;       /* dense thread index, UINT32_MAX none */
	uint32_t type, field, method, depth, slot; /* as struct htr_root */
};

#define HS_NO_BIRTH UINT32_MAX

/* objinfo.flags, beside enum htr_alloc_flags: at a GC with a graph of a
 * sampled trace (the agent's mode=sample with graph=), a sampled object
 * alive by its allocation and deaths that the heap walk did not meet (no
 * references; not in the exact counts, in the estimates).  Objects the
 * walk met without a sample carry HTR_ALLOC_WALKED (in the exact counts,
 * not in the estimates). */
#define HS_FLAG_OFF_GRAPH 0x80000000u

struct heap_state {
	uint32_t gc_index;     /* position in trace->gcs */
	uint32_t gc;           /* GC number */
	uint32_t n;            /* live objects */
	uint64_t total_bytes;  /* sum of shallow sizes */

	uint64_t *id;          /* [n] object ids, ascending */
	uint32_t *info;        /* [n] index into infos */
	uint32_t *birth;       /* [n] gc index of the GC the object was born
	                          after (0 = first GC of the trace ... ),
	                          HS_NO_BIRTH: before the first GC / unknown */
	struct objinfo *infos; uint32_t ninfos;

	int has_graph;         /* roots and edges below exist only if set */
	uint64_t nedges;
	uint32_t *out_off;     /* [n+1] CSR offsets into out_tgt/out_slot */
	uint32_t *out_tgt;     /* [nedges] dense target index */
	uint16_t *out_slot;    /* [nedges] low 16 bits of slot; see hs_ref_slot */
	uint32_t *in_off;      /* [n+1] */
	uint32_t *in_src;      /* [nedges] dense source index */
	/* Slots of 65536 and more (elements of big arrays) keep their low 16
	 * bits in out_slot; the high bits change rarely along the edge array,
	 * so they are kept as runs: from edge slot_hi_edge[k] on, the high bits
	 * are slot_hi[k] (before the first run: 0).  Exact for any slot. */
	uint64_t *slot_hi_edge; uint32_t *slot_hi; uint32_t nslot_hi;

	struct hs_root *roots; uint32_t nroots;
	uint64_t *reachable;   /* bitset [n]: reachable from a root */
	uint32_t nreachable;
	uint64_t reachable_bytes;

	uint32_t unknown_objects; /* graph objects with no allocation event */
	uint64_t dangling_refs;   /* references to objects not in the graph (dropped) */
	uint32_t dropped_roots;   /* roots naming objects not in the graph (dropped) */

	struct iddir dir;      /* id -> dense index */
	size_t mem_bytes;      /* heap memory this state holds */
};

/* Progress goes to the thread's record (model/progress.h), as all long
 * work's does. */
struct heap_build_opts {
	uint64_t *progress_done; /* optional atomic counters for `status` */
	uint64_t *progress_total;
	/* Optional: the state of an earlier GC of the same trace.  When the
	 * target GC has a graph, objects already alive at the base take their
	 * properties from it and only the frames after the base are read, so
	 * rebuilding GC after GC costs the live set plus the new events, not
	 * the whole trace each time.  Ignored otherwise.  Borrowed. */
	const struct heap_state *base;
	uint32_t threads;      /* for the derivation (model/mpar.h); 0: mpar_resolve(0) */
};

/* Rebuilds the heap state after GC number gc_index (position in t->gcs);
 * the GC of a heap dump opened directly: a copy of trace->prebuilt.
 * Returns 0 or negative errno with err filled. */
int heap_state_build(const struct trace *t, uint32_t gc_index, const struct heap_build_opts *o,
		     struct heap_state **out, struct htr_err *err);
void heap_state_free(struct heap_state *s);

/* Dense index of an object id, or UINT32_MAX if not live in this state. */
uint32_t heap_state_find(const struct heap_state *s, uint64_t id);

static inline const struct objinfo *hs_info(const struct heap_state *s, uint32_t i)
{
	return &s->infos[s->info[i]];
}

/* Full slot (field index or array element) of edge e, whose source is i. */
uint32_t hs_ref_slot(const struct heap_state *s, uint32_t i, uint64_t e);

static inline int hs_is_reachable(const struct heap_state *s, uint32_t i)
{
	return s->reachable && (s->reachable[i >> 6] >> (i & 63)) & 1;
}

size_t heap_state_memory(const struct heap_state *s);

#endif

/* suspects.h - the pure decisions behind the `suspects` file:
 * what counts as a big retainer, where a big retainer's objects accumulate,
 * which groups survived the most GCs of a window, whether ownership is
 * shared, whether a data structure's overhead dominates its data, and the
 * order of the findings.  analyses/suspects_find.c applies them to a
 * trace's heap states and cached results (windows, dominators, closures,
 * roles, classifications) and makes the report fs/render_suspects.c
 * prints.
 *
 * Thresholds (each one a mount option, mountopts.c, documented in README):
 *   suspect_big_pct      a single object or a group is a big retainer when
 *                        it retains at least this % of the reachable heap
 *                        (MAT's leak suspects use 10%)
 *   suspect_accum_pct    accumulation point: follow the dominator tree
 *                        down while one child retains at least this % of
 *                        its parent's retained size (MAT uses 80%)
 *   suspect_overhead_pct bloat: a kind of data structure whose own bytes
 *                        (head, backbone, implementation details) are at
 *                        least this % of its own bytes plus its data bytes
 *   suspect_empty_min    bloat: this many empty or near-empty (at most
 *                        one element) structures of one type
 *   suspect_top          groups listed per ranking
 *
 * No recursion: the dominator tree is walked with an explicit stack.
 * Ownership: inputs are borrowed; outputs are caller-owned arrays, except
 * struct sus_domtree, which owns its arrays (sus_domtree_free).
 */
#ifndef HEAPFS_ANALYSES_SUSPECTS_H
#define HEAPFS_ANALYSES_SUSPECTS_H

#include <stdint.h>

#include "analyses/bitset.h"

#define SUS_DEF_BIG_PCT 10
#define SUS_DEF_ACCUM_PCT 80
#define SUS_DEF_OVERHEAD_PCT 50
#define SUS_DEF_EMPTY_MIN 1000
#define SUS_DEF_TOP 3

struct sus_params {
	uint32_t big_pct, accum_pct, overhead_pct;
	uint64_t empty_min;
	uint32_t top;
};

void sus_params_default(struct sus_params *p);

/* ---- the dominator tree, children first ---- */

/* Children of every node of a dominator tree over n objects (idom as in
 * analyses/dominators.h: DOM_ROOT, DOM_UNREACHABLE).  Node n is the
 * virtual root (the objects only the GC roots dominate); unreachable
 * objects have no parent.  Children of k: kid[sus_kid_begin(t, k) ..
 * sus_kid_end(t, k)), in increasing order.  Offsets are kept only for the
 * nodes that have children (has_kids, ranked by kdir): a leaf of the
 * dominator tree holds no reference, so on heaps where half the objects
 * hold none the tree is 6 bytes an object, not 8. */
struct sus_domtree {
	uint32_t n;
	uint64_t *has_kids; /* [n + 1] bits */
	uint32_t *kdir;     /* rank directory over has_kids (bitset_rank_dir) */
	uint32_t *off;      /* [nodes with children + 1], by rank */
	uint32_t *kid;      /* [n] */
};

static inline uint32_t sus_kid_begin(const struct sus_domtree *t, uint32_t k)
{
	return bitset_get(t->has_kids, k) ? t->off[bitset_rank(t->has_kids, t->kdir, k)] : 0;
}

static inline uint32_t sus_kid_end(const struct sus_domtree *t, uint32_t k)
{
	return bitset_get(t->has_kids, k) ? t->off[bitset_rank(t->has_kids, t->kdir, k) + 1] : 0;
}

/* On up to `threads` threads (0 or 1: the caller's); the same tree for
 * any number.  0, or -ENOMEM. */
int sus_domtree_build(uint32_t n, const uint32_t *idom, uint32_t threads, struct sus_domtree *t);
void sus_domtree_free(struct sus_domtree *t);

/* From object o, follows the child that retains at least accum_pct % of
 * its parent's retained size while there is one; returns where it stops
 * (o itself when no child is big enough) and the steps in *depth. */
uint32_t sus_accumulation_point(const struct sus_domtree *t, const uint64_t *retained,
				uint32_t o, uint32_t accum_pct, uint32_t *depth);

/* What accumulated below an accumulation point a, as MAT's leak suspects
 * name it ("N instances of T occupy B bytes"): over a's dominator
 * subtree (a left out), per key (a type), the objects and the retained
 * bytes of those not below another object of their key; the key with the
 * most such bytes among those with at least max(half the fan-out of a,
 * SUS_ACCUM_MIN) objects (accumulation means many: a cache's four
 * segments are structure, its entries the accumulation; a linked map's
 * entries are nearly all of its dominator children), and a key with
 * app[key] set (the application's own types) instead when it has at
 * least half those bytes.  0 and *key = UINT32_MAX when no key qualifies;
 * -ENOMEM. */
#define SUS_ACCUM_MIN 64
int sus_accumulated(const struct sus_domtree *t, const uint64_t *retained, const uint32_t *info,
		    const uint32_t *info_key, uint32_t nkeys, const uint8_t *app, uint32_t a, uint32_t *key,
		    uint64_t *count, uint64_t *bytes);

/* The objects only the GC roots dominate (idom DOM_ROOT) retaining at
 * least min_bytes, largest first (then by index), at most max into out.
 * Every object retaining min_bytes is below one of these (a dominator
 * retains at least what its children do).  Returns how many. */
uint32_t sus_big_objects(uint32_t n, const uint32_t *idom, const uint64_t *retained,
			 uint64_t min_bytes, uint32_t *out, uint32_t max);

/* A lower bound of each key's group retained size (a key: a type, a site):
 * the sum of the retained sizes of its topmost members in the dominator
 * tree (members with no member of the same key above them), as MAT sums a
 * class's instances.  The exact GC closure of the group is never smaller.
 * key of object o: info_key[info[o]] (< nkeys, or UINT32_MAX: none).
 * out[nkeys] is overwritten.  O(n) time, 4 bytes per key and 8 per tree
 * depth of scratch. */
int sus_key_retained(const struct sus_domtree *t, const uint64_t *retained, const uint32_t *info,
		     const uint32_t *info_key, uint32_t nkeys, uint64_t *out);

/* Survivors of a window of GCs [start, end] (GC indexes), seen in the
 * state after GC end: an object born after GC b (birth[o] = b, or
 * UINT32_MAX: before the first GC) survived the window's GCs
 * max(b + 1, start) .. end.  Adds, per key, the objects' bytes times the
 * GCs they survived in the window to bytes_gcs[nkeys] and the objects that
 * survived at least one to count[nkeys] (both caller-zeroed). */
/* info_count: how many objects one object of each info stands for (a
 * sampled trace's weights, rounded; info_size then the bytes they stand
 * for); NULL: one. */
void sus_survivors(uint32_t n, const uint32_t *birth, const uint32_t *info,
		   const uint32_t *info_key, const uint64_t *info_size, const uint64_t *info_count,
		   uint32_t nkeys, uint32_t start, uint32_t end, uint64_t *bytes_gcs, uint64_t *count);

/* Indexes of the k largest values (> 0), largest first, then by index;
 * returns how many (<= k). */
uint32_t sus_top_k(const uint64_t *v, uint32_t n, uint32_t k, uint32_t *out);

/* Shared ownership (gc-roots paper §5.1): several owners keep a group
 * alive together when their group retained size exceeds the sum of their
 * single retained sizes (what none of them retains alone). */
int sus_shared(uint32_t nowners, uint64_t group_retained, uint64_t sum_single);

/* 1 when a structure kind's own bytes dominate its data. */
int sus_overhead_dominates(uint64_t own_bytes, uint64_t data_bytes, uint32_t overhead_pct);

/* v as an integer percentage of total (0 when total is 0), rounded down. */
uint32_t sus_pct(uint64_t v, uint64_t total);

#endif

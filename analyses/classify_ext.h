/* classify_ext.h - classifiers whose keys come from a per-GC analysis kept
 * as an engine result (analyses/classify.h: cls_register_ext).
 *
 *   by-role               one-to-many: the object's data-structure roles
 *                         (analyses/roles.h; an object with two roles sits
 *                         under both)
 *   by-ds                 one-to-many: member-of-<head type> for the
 *                         structure the object is part of, element-of-<head
 *                         type> for each structure holding it as data,
 *                         `none` when neither
 *   by-root               directly GC-rooted (gc-roots paper §4.3.1): the
 *                         roots pointing at the object, as a hierarchy
 *                         kind / class / field (static), kind / thread /
 *                         depth-method / slot (local), kind / thread
 *                         (thread, jni-local, ...), kind (the others);
 *                         `<not directly rooted>` otherwise.  Multi-path.
 *   by-root-var           the same, variables only (static, local, jni-local)
 *   by-indirect-root      §4.3.2: every root reaching the object, same
 *                         hierarchy; `<unreachable>`; objects reached from
 *                         more than RL_CAP_DEFAULT roots: the
 *                         RL_CAP_DEFAULT whose root objects retain the
 *                         most (then by name) and `<many roots>`
 *                         (analyses/rootlabels.h, docs/root-classifiers.md)
 *   by-indirect-root-var  the same, variables only; `<no variable>` for
 *                         objects only other roots reach
 *   by-first-root         the nearest root (smallest by name among the
 *                         nearest): "stop at the first root found"
 *
 * Each needs the GC's graph.  Results are cached per GC and variant
 * (RES_ROOT_LABELS: 4 bytes per object for the indirect and first
 * variants, a few bytes per root for the direct ones) and the roles of
 * analyses/ds.h.
 */
#ifndef HEAPFS_ANALYSES_CLASSIFY_EXT_H
#define HEAPFS_ANALYSES_CLASSIFY_EXT_H

#include <stdint.h>

#include "model/buf.h"
#include "model/heap_state.h"

struct engine;

/* by-indirect-root of one set of objects, every level of the hierarchy in
 * one pass over the members (classifying the group level by level takes a
 * pass per level): a trie of key paths in the classifier's keyspace.  Node
 * 0 is the set itself (count: its objects); every other node has its
 * parent (< its own index), its key and count, the members with at least
 * one root path through it: an object counts once per node whatever the
 * number of its paths through it (paper §3.6), as classifying gives.
 * members: bitset over s, the state of GC gci (with a graph).  Appends
 * struct ir_node[] to out.  -ENOMEM, -EINVAL (no graph). */
struct ir_node {
	uint32_t parent, key;
	uint64_t count;
};
int eng_indirect_root_trie(struct engine *en, uint32_t gci, const struct heap_state *s,
			   const uint64_t *members, struct buf *out);

/* The roots a group is named after: when the chain's last segment (after
 * its last transformer) classifies by one of the root classifiers above
 * down to a root's name or a prefix of one (static/C/field, local/main,
 * static, ...), the roots of s with that name, as a bitset over
 * s->roots in *roots (the caller frees it); *roots NULL when the chain
 * names no root (no such step, or a fixed key such as <many roots>).
 * The last such step counts.  0 or -ENOMEM. */
struct chain;
int eng_chain_roots(struct engine *en, const struct heap_state *s, const struct chain *ch, uint64_t **roots);

/* Registers the classifiers above in en->reg (after cls_registry_init,
 * before user definitions, so that users cannot take their names). */
int eng_register_analysis_classifiers(struct engine *en);

#endif

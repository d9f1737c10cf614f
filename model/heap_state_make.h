/* heap_state_make.h - heap states made from columns filled elsewhere than
 * in the trace reconstructor (model/heap_state.c): a heap dump mounted
 * directly gets its state straight from the dump (model/hprof_state.c),
 * without writing and decoding trace events.
 *
 * The maker fills the columns a reconstruction reads from the trace:
 * gc_index, gc, n, id (ascending), info, birth, infos/ninfos, and with a
 * graph has_graph, nedges, out_off/out_tgt/out_slot, the slot_hi runs,
 * roots/nroots (dense objects and threads), dangling_refs, dropped_roots,
 * unknown_objects.  heap_state_complete() derives the rest exactly as the
 * reconstructor does: the id directory, reachability, in-edges, totals
 * and mem_bytes.  The result is then indistinguishable from a rebuilt
 * state (tests/unit/test_hprof.c compares the two field by field).
 *
 * Ownership: the state owns its arrays as always; on failure the caller
 * still frees it with heap_state_free.
 */
#ifndef HEAPFS_HEAP_STATE_MAKE_H
#define HEAPFS_HEAP_STATE_MAKE_H

#include "heap_state.h"

/* Derives dir, reachable/nreachable/reachable_bytes, in_off/in_src,
 * total_bytes and mem_bytes, on up to `threads` threads (model/mpar.h;
 * 0: mpar_resolve(0)).  0 or -ENOMEM. */
int heap_state_complete(struct heap_state *s, uint32_t threads);

/* A deep copy of s (every array), owned by the caller.  0 or -ENOMEM.
 * heap_state_build() of a directly opened dump's GC returns one of
 * trace->prebuilt (its temporary trace has no graph records); the state
 * cache shares trace->prebuilt without copying. */
int heap_state_copy(const struct heap_state *s, struct heap_state **out);

#endif

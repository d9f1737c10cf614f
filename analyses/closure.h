/* closure.h - transitive closure and GC (retained) closure of object groups
 * (gc-roots paper §3.2, §4.2).
 *
 * Groups and closures are bitsets over the state's dense index.  The GC
 * closure uses the paper's improved algorithm: starting from the transitive
 * closure T of a group G, an object of T \ G stays alive (leaves the
 * closure, with everything it reaches inside T) if a GC root points at it
 * or a live object outside T does; references to G's members are ignored,
 * since G is the set being freed.  The cost grows with |T| and the
 * references into T, never with the whole heap (apart from clearing
 * bitsets, one word per 64 objects).
 *
 * Needs a state with a graph (s->has_graph); returns -EINVAL otherwise.
 *
 * Ownership: a closure_ctx owns its scratch (a queue and two bitsets) and
 * borrows the state; one ctx serves one thread at a time.  Result bitsets
 * belong to the caller.
 */
#ifndef HEAPFS_CLOSURE_H
#define HEAPFS_CLOSURE_H

#include <stdint.h>

#include "model/heap_state.h"

struct closure_metrics {
	uint64_t count;  /* objects */
	uint64_t bytes;  /* sum of shallow sizes */
};

struct closure_ctx;

int closure_ctx_new(struct closure_ctx **out, const struct heap_state *s);
void closure_ctx_free(struct closure_ctx *c);

/* out (n bits, caller-allocated, any content) = transitive closure of group. */
int closure_transitive(struct closure_ctx *c, const uint64_t *group, uint64_t *out,
		       struct closure_metrics *m);

/* closure holds the transitive closure of group on entry (from
 * closure_transitive) and the GC closure on return. */
int closure_retained(struct closure_ctx *c, const uint64_t *group, uint64_t *closure,
		     struct closure_metrics *m);

/* Both metrics of a group at once (scratch bitset inside the ctx). */
int closure_metrics_of(struct closure_ctx *c, const uint64_t *group, struct closure_metrics *deep,
		       struct closure_metrics *retained);

/* The closure step of a classification chain (closure/transitive/,
 * closure/retained/): replaces *bits (owned, n bits) by its transitive
 * closure (retained = 0) or GC closure (1); the empty set at a GC without
 * a graph. */
int closure_step_bits(const struct heap_state *s, int retained, uint64_t **bits);

/* Metrics of a set (count and shallow bytes). */
void closure_measure(const struct heap_state *s, const uint64_t *set, struct closure_metrics *m);

#endif

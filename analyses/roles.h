/* roles.h - data-structure roles and detected data structures, from the
 * object graph alone (data-structure-roles paper §4.1, §4.2, Listing 3).
 *
 * Three steps, each a pure function over one heap state with a graph:
 *
 *   1. ds_roles_compute: one u16 bitmask of the eleven roles per object.
 *      Listing 3 is a recursive walk whose answer on a cycle depends on
 *      where the walk entered it; here the same rules are evaluated as a
 *      least fixpoint (see docs/roles.md): local passes over the CSR edges
 *      and one backward breadth-first search, O(n + E), no recursion, so a
 *      linked list of 10^7 nodes is no deeper than one of 3.  Self
 *      references are ignored everywhere; null references are not edges.
 *   2. ds_heads_index / ds_owners_compute: the heads (objects with the
 *      Container role, numbered in dense-index order: the head's "slot")
 *      and, per object, the slot of the structure it is a member of: the
 *      head itself, its IContainers, its backbone (Recursive objects and
 *      Reference Arrays) and shared implementation details, each claimed
 *      by the nearest head (one multi-source BFS).
 *   3. ds_heads_measure: per head, members, member bytes, elements (the
 *      objects its members hold that are not part of a structure's
 *      internals), the heads among them, retained size, and the
 *      `loader-like` flag.
 *
 * Memory: roles 2 bytes and owners 4 bytes per object, plus one head slot
 * per head, all caller-owned arrays.  Scratch while computing: a work
 * queue of 4 bytes per object and a bitset (ds_roles_compute,
 * ds_owners_compute), and two bitsets plus a stack (ds_heads_measure),
 * freed before returning.
 *
 * Ownership: every output array belongs to the caller; the state and the
 * types are borrowed.  All functions are reentrant.
 */
#ifndef HEAPFS_ANALYSES_ROLES_H
#define HEAPFS_ANALYSES_ROLES_H

#include <stdint.h>

#include "analyses/dominators.h"
#include "model/heap_state.h"
#include "model/trace.h"

enum ds_role {
	/* basic roles (§4.1): from an object's own kind and type */
	DS_RECURSIVE = 1u << 0,      /* its type references its own type */
	DS_REF_ARRAY = 1u << 1,      /* an array of references */
	DS_TRANSITION = 1u << 2,     /* recursive, or a reference array of no recursive object */
	DS_PRIM_ARRAY = 1u << 3,     /* an array of primitives */
	/* complex roles: from what an object references and is referenced by */
	DS_MCONTAINER = 1u << 4,     /* referenced by no object, references some */
	DS_CONTAINER = 1u << 5,      /* a head: holds a backbone, structures or data */
	DS_ICONTAINER = 1u << 6,     /* an intermediate container (HashSet's HashMap) */
	DS_HCONTAINER = 1u << 7,     /* a container held by a backbone (nested head) */
	DS_ESTRUCTURE = 1u << 8,     /* nothing around it says what it is */
	DS_CID = 1u << 9,            /* Container Impl. Detail: a leaf held by a container */
	DS_TRUE_DATA = 1u << 10,     /* holds exactly one primitive array (a String) */
};
#define DS_NROLES 11
#define DS_BASIC_MASK (DS_RECURSIVE | DS_REF_ARRAY | DS_TRANSITION | DS_PRIM_ARRAY)
#define DS_NONE UINT32_MAX           /* no head / no object */
#define DS_NO_RETAINED UINT64_MAX    /* the head is not in the dominator tree */

/* Loader-like heads (the paper's §5 future work): a head that directly
 * holds at least DS_LOADER_MIN_HEADS other heads of at least
 * DS_LOADER_MIN_TYPES distinct types (docs/roles.md explains why both). */
#define DS_LOADER_MIN_HEADS 64
#define DS_LOADER_MIN_TYPES 8
#define DS_FLAG_LOADER_LIKE 1u

/* File and directory name of role bit k (0 .. DS_NROLES-1): "recursive",
 * "reference-array", ..., "true-data"; NULL past the end. */
const char *ds_role_name(uint32_t k);

/* Roles of every object into roles[s->n].  types/ntypes: the trace's type
 * table (kinds and declared fields).  Each pass over the objects runs on
 * up to `threads` threads (analyses/parallel.h; 0 or 1: the caller's),
 * with the same result for any count.  -EINVAL without a graph, -ENOMEM. */
int ds_roles_compute(const struct heap_state *s, const struct trace_type *types, uint32_t ntypes,
		     uint32_t threads, uint16_t *roles);

/* Number of heads; if head_obj is not NULL, fills it with their dense
 * indexes, ascending (slot k = head_obj[k]). */
uint32_t ds_heads_index(const struct heap_state *s, const uint16_t *roles, uint32_t *head_obj);

/* owner[s->n]: slot of the structure each object is a member of, DS_NONE
 * if none (owner[head_obj[k]] = k).  -EINVAL without a graph, -ENOMEM. */
int ds_owners_compute(const struct heap_state *s, const uint16_t *roles,
		      const uint32_t *head_obj, uint32_t nheads, uint32_t *owner);

/* 1 if object o, referenced by a member of another structure, counts as
 * that structure's element (data), 0 if it is internal to a structure
 * (an IContainer, a backbone object or a shared implementation detail). */
int ds_is_element(const struct heap_state *s, const uint16_t *roles, uint32_t o);

struct ds_head {
	uint32_t obj;          /* dense index of the head */
	uint32_t icontainer;   /* first IContainer member found (dense), DS_NONE */
	uint32_t outer;        /* smallest slot of a head holding this head as an element, DS_NONE */
	uint32_t flags;        /* DS_FLAG_* */
	uint64_t members;      /* objects of the structure, the head included */
	uint64_t member_bytes; /* their shallow sizes */
	uint64_t elements;     /* distinct objects the members hold (ds_is_element) */
	uint64_t element_bytes;
	uint32_t heads_held;   /* elements that are heads themselves */
	uint32_t head_types;   /* distinct types among those */
	uint64_t retained;     /* retained bytes of the head object, DS_NO_RETAINED */
};

/* out[nheads], one per slot.  dom may be NULL (retained = DS_NO_RETAINED).
 * The heads are measured on up to `threads` threads (analyses/parallel.h),
 * each with its own scratch (two bitsets, a stamp per type, its stacks):
 * the same results for any number. */
int ds_heads_measure(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
		     const uint32_t *head_obj, uint32_t nheads, const struct dominators *dom,
		     uint32_t threads, struct ds_head *out);

/* What the heads of one type measure together: per type T, the number of
 * heads of type T and the sums of their member_bytes and element_bytes, as
 * ds_heads_measure gives them head by head. */
struct ds_type_sums {
	uint64_t heads;
	uint64_t member_bytes;
	uint64_t element_bytes;
};

/* out[ntypes] (heads whose type is ntypes or more are left out), equal to
 * ds_heads_measure's figures summed by the heads' type, without measuring
 * a head at a time: a head's members are exactly the objects it owns
 * (ds_owners_compute's waves only go through owned objects), and its
 * elements are the element objects some owned object references, which
 * a pass over each element's referrers finds (ds_for_each_holder's
 * rule, each head once).  One pass over the objects on up to `threads`
 * threads, the same sums for any number; scratch: a stamp per head and
 * per thread.  -EINVAL without a graph, -ENOMEM. */
int ds_type_sums_compute(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
			 const uint32_t *head_obj, uint32_t nheads, uint32_t ntypes,
			 uint32_t threads, struct ds_type_sums *out);

/* Calls fn(ctx, slot) for every head whose structure holds o as an element
 * (once per referencing member; the same slot may repeat).  Stops when fn
 * returns nonzero and returns that value. */
typedef int (*ds_holder_fn)(void *ctx, uint32_t slot);
int ds_for_each_holder(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
		       uint32_t o, ds_holder_fn fn, void *ctx);

#endif

/* roles.c - data-structure roles, heads, owners and per-head measures.
 * See roles.h for the interface and docs/roles.md for every decision taken
 * where Listing 3 and the paper's prose disagree.
 */
#include "roles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/parallel.h"
#include "model/buf.h"
#include "model/mpar.h"
#include "model/progress.h"

static const char *const role_names[DS_NROLES] = {
	"recursive", "reference-array", "transition", "primitive-array", "mcontainer",
	"container", "icontainer", "hcontainer", "estructure", "container-impl-detail",
	"true-data",
};

const char *ds_role_name(uint32_t k)
{
	return k < DS_NROLES ? role_names[k] : NULL;
}

/* ---- the passes over the objects, on threads ----
 *
 * Each pass decides every object from its own role and from roles of
 * other objects that the pass never changes (each pass's comment says
 * which), so the objects can be cut into ranges decided on several threads
 * in any order.  Another object's role is read, and an object's own
 * written, as a relaxed atomic: a thread may read a neighbour's word while
 * its owner sets other bits of it.  On x86 these are plain moves. */

struct rpass {
	const struct heap_state *s;
	const struct trace_type *types;
	uint32_t ntypes, ntypes_ext;
	uint16_t *roles;
	uint8_t *rec;             /* recursive_types: a byte per type id */
	uint64_t *strong;         /* strong_objects, strong_role */
};

/* Ranges: multiples of 64 objects, so no two share a word of a bitset. */
#define RANGE_MIN 1024u
#define RANGES_PER_THREAD 16u

static uint16_t role_at(const uint16_t *roles, uint32_t x)
{
	return __atomic_load_n(&roles[x], __ATOMIC_RELAXED);
}

static void role_set(uint16_t *roles, uint32_t o, uint16_t v)
{
	__atomic_store_n(&roles[o], v, __ATOMIC_RELAXED);
}

/* fn over every object, in ranges on up to `threads` threads
 * (parallel.h). */
static int each_range(struct rpass *p, uint32_t threads, par_range_fn *fn)
{
	return par_ranges(threads, p->s->n, RANGES_PER_THREAD, RANGE_MIN, fn, p);
}

/* ---- neighbours, self references filtered ---- */

/* Distinct objects o references (not itself), counted up to 2. */
static uint32_t out_distinct2(const struct heap_state *s, uint32_t o, uint32_t *first)
{
	uint32_t n = 0, f = DS_NONE;
	for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
		uint32_t t = s->out_tgt[e];
		if (t == o)
			continue;
		if (n == 0) {
			f = t;
			n = 1;
		} else if (t != f) {
			n = 2;
			break;
		}
	}
	if (first)
		*first = f;
	return n;
}

/* Distinct objects referencing o (not itself), counted up to 2. */
static uint32_t in_distinct2(const struct heap_state *s, uint32_t o, uint32_t *first)
{
	uint32_t n = 0, f = DS_NONE;
	for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
		uint32_t r = s->in_src[e];
		if (r == o)
			continue;
		if (n == 0) {
			f = r;
			n = 1;
		} else if (r != f) {
			n = 2;
			break;
		}
	}
	if (first)
		*first = f;
	return n;
}

/* 1 if some other object referencing o has one of the roles in mask. */
static int referrer_has(const struct heap_state *s, const uint16_t *roles, uint32_t o,
			uint16_t mask)
{
	for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
		uint32_t r = s->in_src[e];
		if (r != o && (role_at(roles, r) & mask))
			return 1;
	}
	return 0;
}

/* ---- basic roles ---- */

/* The kind of an object: its type's kind, or for a type the trace never
 * defined, an array with references is a reference array and one without
 * is a primitive array. */
static uint32_t kind_of(const struct heap_state *s, const struct trace_type *types,
			uint32_t ntypes, uint32_t o)
{
	const struct objinfo *oi = hs_info(s, o);
	if (oi->type < ntypes && types[oi->type].name)
		return types[oi->type].kind;
	if (oi->array_length < 0)
		return HTR_TYPE_INSTANCE;
	return s->out_off[o + 1] > s->out_off[o] ? HTR_TYPE_OBJ_ARRAY : HTR_TYPE_PRIM_ARRAY;
}

/* 1 if field signature sig is "L<name with / for .>;". */
static int sig_names(const char *sig, const char *name)
{
	if (!sig || sig[0] != 'L')
		return 0;
	const char *p = sig + 1;
	for (; *name; name++, p++) {
		char c = *p == '/' ? '.' : *p;
		if (c != *name)
			return 0;
	}
	return p[0] == ';' && p[1] == '\0';
}

/* Types one of whose objects references another of its objects, objects
 * from..to-1 (rec: a byte per type, set by any range: relaxed). */
static void self_typed_refs(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	for (uint32_t o = from; o < to; o++) {
		uint32_t t = hs_info(s, o)->type;
		if (t >= p->ntypes_ext || __atomic_load_n(&p->rec[t], __ATOMIC_RELAXED) ||
		    hs_info(s, o)->array_length >= 0)
			continue;
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t x = s->out_tgt[e];
			if (x != o && hs_info(s, x)->type == t) {
				__atomic_store_n(&p->rec[t], 1, __ATOMIC_RELAXED);
				break;
			}
		}
	}
}

/* Recursive types: an instance type that declares an instance reference
 * field of its own type, or one of whose objects references another of
 * its objects in this state.  Arrays are never recursive (docs/roles.md).
 * rec has one byte per type id below ntypes_ext. */
static int recursive_types(struct rpass *p, uint32_t threads)
{
	const struct trace_type *types = p->types;
	uint8_t *rec = p->rec;
	for (uint32_t t = 0; t < p->ntypes && t < p->ntypes_ext; t++) {
		const struct trace_type *ty = &types[t];
		if (!ty->name || ty->kind != HTR_TYPE_INSTANCE)
			continue;
		for (uint32_t f = 0; f < ty->nfields && !rec[t]; f++) {
			const struct trace_field *fd = &ty->fields[f];
			if ((fd->flags & HTR_FIELD_REF) && !(fd->flags & HTR_FIELD_STATIC) &&
			    sig_names(fd->sig, ty->name))
				rec[t] = 1;
		}
	}
	return each_range(p, threads, self_typed_refs);
}

/* The kind-given roles of objects from..to-1. */
static void kind_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	for (uint32_t o = from; o < to; o++) {
		uint32_t k = kind_of(s, p->types, p->ntypes, o), t = hs_info(s, o)->type;
		uint16_t r = 0;
		if (k == HTR_TYPE_PRIM_ARRAY)
			r = DS_PRIM_ARRAY;
		else if (k == HTR_TYPE_OBJ_ARRAY)
			r = DS_REF_ARRAY;
		else if (t < p->ntypes_ext && p->rec[t])
			r = DS_RECURSIVE | DS_TRANSITION;
		role_set(p->roles, o, r);
	}
}

/* Transition: a reference array none of whose elements is recursive
 * (the prose and Chis et al.; Listing 3 line 9 says the opposite).  Reads
 * the Recursive bit of others, which this pass never sets. */
static void transition_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if (!(roles[o] & DS_REF_ARRAY))
			continue;
		int to_rec = 0;
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1] && !to_rec; e++) {
			uint32_t x = s->out_tgt[e];
			to_rec = x != o && (role_at(roles, x) & DS_RECURSIVE);
		}
		if (!to_rec)
			role_set(roles, o, roles[o] | DS_TRANSITION);
	}
}

static int basic_roles(struct rpass *p, uint32_t threads)
{
	const struct heap_state *s = p->s;
	p->ntypes_ext = p->ntypes;
	for (uint32_t i = 0; i < s->ninfos; i++) {
		if (s->infos[i].type != UINT32_MAX && s->infos[i].type >= p->ntypes_ext)
			p->ntypes_ext = s->infos[i].type + 1;
	}
	p->rec = calloc(p->ntypes_ext ? p->ntypes_ext : 1, 1);
	if (!p->rec)
		return -ENOMEM;
	int rc = recursive_types(p, threads);
	if (!rc)
		rc = each_range(p, threads, kind_roles);
	free(p->rec);
	p->rec = NULL;
	return rc ? rc : each_range(p, threads, transition_roles);
}

/* ---- complex roles ---- */

/* Leaves (complex objects that reference nothing): Container Impl. Detail
 * when a backbone holds them, else EStructure for now (a container parent
 * may still make them CID at the end).  Reads the basic roles of others,
 * which this pass never sets. */
static void leaf_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if (roles[o] || out_distinct2(s, o, NULL))
			continue;
		role_set(roles, o,
			 referrer_has(s, roles, o, DS_RECURSIVE | DS_REF_ARRAY) ? DS_CID : DS_ESTRUCTURE);
	}
}

/* Evidence a child gives its referrer, from roles already final. */
static int child_is_evidence(uint16_t r)
{
	return (r & (DS_RECURSIVE | DS_REF_ARRAY | DS_PRIM_ARRAY | DS_CID)) != 0;
}

/* Strong objects: complex non-leaves that hold, directly or through other
 * complex non-leaves, a backbone, a primitive array or a CID leaf.  This
 * is the least fixpoint of Listing 3's downward rules (a cycle of objects
 * that hold nothing else stays weak); computed as a backward BFS from the
 * seeds.  Complex non-leaves are exactly the objects with roles[o] == 0
 * after leaf_roles. */
static void strong_seeds(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	const uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if (roles[o])
			continue;
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t x = s->out_tgt[e];
			if (x != o && child_is_evidence(roles[x])) {
				bitset_set(p->strong, o); /* ranges never share a word */
				break;
			}
		}
	}
}

/* The seeds on threads, the backward walk on one (a set: its order does
 * not matter). */
static int strong_objects(struct rpass *p, uint32_t threads)
{
	const struct heap_state *s = p->s;
	const uint16_t *roles = p->roles;
	uint64_t *strong = p->strong;
	int rc = each_range(p, threads, strong_seeds);
	uint32_t *q = rc ? NULL : malloc((s->n ? s->n : 1) * sizeof *q);
	uint32_t head = 0, tail = 0;
	if (!q)
		return rc ? rc : -ENOMEM;
	BITSET_FOREACH(strong, s->n, o)
		q[tail++] = (uint32_t)o;
	while (head < tail) {
		uint32_t o = q[head++];
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t r = s->in_src[e];
			if (r != o && !roles[r] && !bitset_get(strong, r)) {
				bitset_set(strong, r);
				q[tail++] = r;
			}
		}
	}
	free(q);
	return 0;
}

/* IContainer: one referrer, one referenced object, and the referrer is a
 * complex object that references nothing else (a proxy such as HashSet
 * around its HashMap).  A backbone referrer makes a nested head instead. */
static int is_icontainer(const struct heap_state *s, const uint16_t *roles, uint32_t o)
{
	uint32_t p;
	if (in_distinct2(s, o, &p) != 1 || out_distinct2(s, o, NULL) != 1)
		return 0;
	return !(role_at(roles, p) & DS_BASIC_MASK) && out_distinct2(s, p, NULL) == 1;
}

/* The downward role of a strong object: Container/IContainer when it holds
 * a backbone, a CID or another strong object; True Data when all it holds
 * is one primitive array; Container when a primitive array is one of
 * several things it holds.  Reads only basic roles, leaf roles and the
 * strong set, which are final here. */
static uint16_t strong_role(const struct heap_state *s, const uint16_t *roles,
			    const uint64_t *strong, uint32_t o)
{
	int holds = 0;
	for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1] && !holds; e++) {
		uint32_t x = s->out_tgt[e];
		if (x == o)
			continue;
		holds = (role_at(roles, x) & (DS_RECURSIVE | DS_REF_ARRAY | DS_CID)) ||
			bitset_get(strong, x);
	}
	if (holds)
		return is_icontainer(s, roles, o) ? DS_ICONTAINER : DS_CONTAINER;
	return out_distinct2(s, o, NULL) == 1 ? DS_TRUE_DATA : DS_CONTAINER;
}

/* strong_role reads basic and leaf roles and the strong set; the roles it
 * writes (Container, IContainer, True Data) never carry a basic bit nor
 * CID, and EStructure, which it also writes, is read by no pass before
 * upward_roles: deciding objects in any order gives the same roles. */
static void downward_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if (bitset_get(p->strong, o))
			role_set(roles, o, strong_role(p->s, roles, p->strong, o));
		else if (!roles[o])
			role_set(roles, o, DS_ESTRUCTURE);
	}
}

/* MContainer: referenced by nothing, references something. */
static void mcontainer_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if (!(roles[o] & DS_BASIC_MASK) && in_distinct2(s, o, NULL) == 0 &&
		    out_distinct2(s, o, NULL) > 0)
			role_set(roles, o, roles[o] | DS_MCONTAINER);
	}
}

/* HContainer: a container held by a backbone (Listing 3 lines 91-94 with
 * the referrers' basic roles, which this pass never sets). */
static void hcontainer_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	uint16_t *roles = p->roles;
	for (uint32_t o = from; o < to; o++) {
		if ((roles[o] & (DS_CONTAINER | DS_ICONTAINER)) &&
		    referrer_has(p->s, roles, o, DS_RECURSIVE | DS_REF_ARRAY))
			role_set(roles, o, roles[o] | DS_HCONTAINER);
	}
}

/* CID through a container referrer (the prose of §4.1; lines 97-104).  The
 * objects it changes reference nothing, so none of them is a referrer it
 * reads. */
static void cid_roles(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct rpass *p = ctx;
	(void)range;
	const struct heap_state *s = p->s;
	uint16_t *roles = p->roles;
	const uint16_t holders = DS_MCONTAINER | DS_CONTAINER | DS_ICONTAINER | DS_HCONTAINER;
	for (uint32_t o = from; o < to; o++) {
		if (roles[o] == DS_ESTRUCTURE && out_distinct2(s, o, NULL) == 0 &&
		    referrer_has(s, roles, o, holders))
			role_set(roles, o, DS_CID);
	}
}

int ds_roles_compute(const struct heap_state *s, const struct trace_type *types, uint32_t ntypes,
		     uint32_t threads, uint16_t *roles)
{
	if (!s->has_graph)
		return -EINVAL;
	progress_phase(progress_here(), 0, "data-structure roles at GC %u", s->gc);
	struct rpass p = { .s = s, .types = types, .ntypes = ntypes, .roles = roles };
	int rc = basic_roles(&p, threads);
	if (!rc)
		rc = each_range(&p, threads, leaf_roles);
	if (rc)
		return rc;
	if (!(p.strong = bitset_new(s->n)))
		return -ENOMEM;
	if (!(rc = strong_objects(&p, threads)) && !(rc = each_range(&p, threads, downward_roles)) &&
	    !(rc = each_range(&p, threads, mcontainer_roles)) &&
	    !(rc = each_range(&p, threads, hcontainer_roles)))
		rc = each_range(&p, threads, cid_roles);
	bitset_free(p.strong);
	return rc;
}

/* ---- heads and owners ---- */

uint32_t ds_heads_index(const struct heap_state *s, const uint16_t *roles, uint32_t *head_obj)
{
	uint32_t k = 0;
	for (uint32_t o = 0; o < s->n; o++) {
		if (roles[o] & DS_CONTAINER) {
			if (head_obj)
				head_obj[k] = o;
			k++;
		}
	}
	return k;
}

int ds_is_element(const struct heap_state *s, const uint16_t *roles, uint32_t o)
{
	if (roles[o] & (DS_ICONTAINER | DS_RECURSIVE | DS_REF_ARRAY))
		return 0;
	/* A CID leaf held by several objects is a shared implementation
	 * detail (HashSet's PRESENT); held by one, it is a value boxed into a
	 * backbone slot (an Integer in an ArrayList): data. */
	if (roles[o] & DS_CID)
		return in_distinct2(s, o, NULL) < 2;
	return 1;
}

/* Objects a head's structure may claim as members. */
static int claimable(const struct heap_state *s, const uint16_t *roles, uint32_t o)
{
	return !(roles[o] & DS_CONTAINER) && !ds_is_element(s, roles, o);
}

int ds_owners_compute(const struct heap_state *s, const uint16_t *roles,
		      const uint32_t *head_obj, uint32_t nheads, uint32_t *owner)
{
	if (!s->has_graph)
		return -EINVAL;
	uint32_t *q = malloc((s->n ? s->n : 1) * sizeof *q);
	uint32_t head = 0, tail = 0;
	if (!q)
		return -ENOMEM;
	memset(owner, 0xff, (size_t)s->n * sizeof *owner);
	for (uint32_t k = 0; k < nheads; k++) {
		owner[head_obj[k]] = k;
		q[tail++] = head_obj[k];
	}
	/* Multi-source BFS: every internal object goes to the nearest head;
	 * at equal distance, to the head whose wave arrives first (slot order,
	 * then field order): deterministic. */
	while (head < tail) {
		uint32_t m = q[head++], k = owner[m];
		for (uint32_t e = s->out_off[m]; e < s->out_off[m + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (t != m && owner[t] == DS_NONE && claimable(s, roles, t)) {
				owner[t] = k;
				q[tail++] = t;
			}
		}
	}
	free(q);
	return 0;
}

/* ---- per-head measures ---- */

struct u32vec {
	uint32_t *v;
	size_t n;
	uint64_t cap;
};

static int vec_push(struct u32vec *a, uint32_t x)
{
	int rc = array_reserve((void **)&a->v, &a->cap, (uint64_t)a->n + 1, sizeof *a->v);
	if (!rc)
		a->v[a->n++] = x;
	return rc;
}

/* Workers' measures sit in one array, each on cache lines of its own: it
 * writes its vectors' lengths for every object, and side by side 2
 * threads took 1.7 times the CPU of one (H2 dump's heads). */
#define MEASURE_ALIGN 128

struct measure {
	const struct heap_state *s;
	const uint16_t *roles;
	const uint32_t *owner;
	uint64_t *member_seen, *elem_seen;
	uint32_t *type_stamp;   /* [ntypes_ext]: slot + 1 of the last head that counted the type */
	uint32_t ntypes_ext;
	struct u32vec stack, members, elems;
	/* (head slot held, holding slot k) pairs: the outer slots, set once
	 * every head is measured (ds_heads_measure) */
	struct u32vec held;
} __attribute__((aligned(MEASURE_ALIGN)));

/* Element t of head k: into h, head k's counters (the caller's own copy),
 * and t's holder into the worker's pairs. */
static int count_element(struct measure *m, struct ds_head *h, uint32_t k, uint32_t t)
{
	bitset_set(m->elem_seen, t);
	h->elements++;
	h->element_bytes += hs_info(m->s, t)->size;
	if (!(m->roles[t] & DS_CONTAINER))
		return 0;
	h->heads_held++;
	uint32_t ty = hs_info(m->s, t)->type;
	if (ty < m->ntypes_ext && m->type_stamp[ty] != k + 1) {
		m->type_stamp[ty] = k + 1;
		h->head_types++;
	}
	/* its outer slot, the smallest holding it, is taken once all heads are
	 * measured: an atomic minimum here, on lines other threads read, cost
	 * 2 threads most of what they saved */
	int rc = vec_push(&m->held, m->owner[t]);
	return rc ? rc : vec_push(&m->held, k);
}

/* Walks head k's members (the objects it owns, all reachable from it
 * through objects it owns) and the elements they hold. */
static int measure_head(struct measure *m, struct ds_head *out, uint32_t k)
{
	const struct heap_state *s = m->s;
	/* counted in a copy, written once: other threads read and set other
	 * heads' outer slots, and a line written for every member took 2
	 * threads to 2 times the CPU of one on the H2 dump */
	struct ds_head acc = { .obj = out[k].obj, .icontainer = DS_NONE }, *h = &acc;
	int rc = 0;
	m->stack.n = m->members.n = m->elems.n = 0;
	bitset_set(m->member_seen, h->obj);
	if ((rc = vec_push(&m->stack, h->obj)))
		return rc;
	while (m->stack.n && !rc) {
		uint32_t x = m->stack.v[--m->stack.n];
		if ((rc = vec_push(&m->members, x)))
			break;
		h->members++;
		h->member_bytes += hs_info(s, x)->size;
		if ((m->roles[x] & DS_ICONTAINER) && h->icontainer == DS_NONE)
			h->icontainer = x;
		for (uint32_t e = s->out_off[x]; e < s->out_off[x + 1] && !rc; e++) {
			uint32_t t = s->out_tgt[e];
			if (t == x)
				continue;
			if (m->owner[t] == k) {
				if (!bitset_get(m->member_seen, t)) {
					bitset_set(m->member_seen, t);
					rc = vec_push(&m->stack, t);
				}
			} else if (!bitset_get(m->elem_seen, t) && ds_is_element(s, m->roles, t)) {
				rc = count_element(m, h, k, t);
				if (!rc)
					rc = vec_push(&m->elems, t);
			}
		}
	}
	out[k].icontainer = acc.icontainer;
	out[k].members = acc.members;
	out[k].member_bytes = acc.member_bytes;
	out[k].elements = acc.elements;
	out[k].element_bytes = acc.element_bytes;
	out[k].heads_held = acc.heads_held;
	out[k].head_types = acc.head_types;
	/* Clear what this head marked (the stack's leftovers only on error). */
	for (size_t i = 0; i < m->members.n; i++)
		bitset_clear(m->member_seen, m->members.v[i]);
	for (size_t i = 0; i < m->stack.n; i++)
		bitset_clear(m->member_seen, m->stack.v[i]);
	for (size_t i = 0; i < m->elems.n; i++)
		bitset_clear(m->elem_seen, m->elems.v[i]);
	return rc;
}

static void measure_free(struct measure *m)
{
	bitset_free(m->member_seen);
	bitset_free(m->elem_seen);
	free(m->type_stamp);
	free(m->stack.v);
	free(m->members.v);
	free(m->elems.v);
	free(m->held.v);
}

/* A worker's measure: its own bits, stamps and vectors over the shared
 * state (made on its first head). */
static int measure_init(struct measure *m, const struct measure *proto)
{
	*m = (struct measure){ .s = proto->s, .roles = proto->roles, .owner = proto->owner,
			       .ntypes_ext = proto->ntypes_ext };
	m->member_seen = bitset_new(m->s->n);
	m->elem_seen = bitset_new(m->s->n);
	m->type_stamp = calloc(m->ntypes_ext ? m->ntypes_ext : 1, sizeof *m->type_stamp);
	if (!m->member_seen || !m->elem_seen || !m->type_stamp) {
		measure_free(m);
		memset(m, 0, sizeof *m);
		return -ENOMEM;
	}
	return 0;
}

struct measure_all {
	struct measure proto;
	struct measure *per_worker;
	struct ds_head *out;
	uint32_t nheads;
};

/* Heads a task measures, consecutive slots: one at a time, two threads
 * wrote neighbouring struct ds_heads of one cache line, and on the H2
 * dump (4.8 M objects) 2 threads took 2.5 times the CPU of one. */
#define HEADS_PER_TASK 256u

static int measure_task(void *vctx, uint32_t task, uint32_t worker)
{
	struct measure_all *a = vctx;
	struct measure *m = &a->per_worker[worker];
	int rc = m->s ? 0 : measure_init(m, &a->proto);
	uint32_t k = task * HEADS_PER_TASK, end = k + HEADS_PER_TASK < a->nheads ? k + HEADS_PER_TASK
									   : a->nheads;
	for (; k < end && !rc; k++) {
		rc = measure_head(m, a->out, k);
		/* head_types counts through type_stamp, which is per worker:
		 * the stamp is the head's slot, so a head is counted the same
		 * on any worker */
		if (!rc && a->out[k].heads_held >= DS_LOADER_MIN_HEADS &&
		    a->out[k].head_types >= DS_LOADER_MIN_TYPES)
			a->out[k].flags |= DS_FLAG_LOADER_LIKE;
	}
	progress_add(progress_here(), end - task * HEADS_PER_TASK);
	return rc;
}

int ds_heads_measure(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
		     const uint32_t *head_obj, uint32_t nheads, const struct dominators *dom,
		     uint32_t threads, struct ds_head *out)
{
	struct measure_all a = { .proto = { .s = s, .roles = roles, .owner = owner }, .out = out };
	if (!s->has_graph)
		return -EINVAL;
	for (uint32_t i = 0; i < s->ninfos; i++) {
		if (s->infos[i].type != UINT32_MAX && s->infos[i].type >= a.proto.ntypes_ext)
			a.proto.ntypes_ext = s->infos[i].type + 1;
	}
	/* 64 bytes a head, first written here: their pages come on the
	 * threads (model/mpar.h).  On the H2 dump's 1.5 M heads, 95 MB, this
	 * loop spent 0.2 s in the kernel's page faults. */
	mpar_memset(threads, out, 0, (size_t)nheads * sizeof *out);
	for (uint32_t k = 0; k < nheads; k++) {
		uint32_t o = head_obj[k];
		out[k].obj = o;
		out[k].icontainer = out[k].outer = DS_NONE;
		out[k].retained = dom && o < dom->n && dom->idom[o] != DOM_UNREACHABLE ?
					  dom->retained[o] : DS_NO_RETAINED;
	}
	uint32_t ntasks = (uint32_t)(((uint64_t)nheads + HEADS_PER_TASK - 1) / HEADS_PER_TASK);
	a.nheads = nheads;
	if (threads < 1)
		threads = 1;
	if (threads > ntasks)
		threads = ntasks ? ntasks : 1;
	a.per_worker = aligned_alloc(MEASURE_ALIGN, threads * sizeof *a.per_worker);
	if (a.per_worker)
		memset(a.per_worker, 0, threads * sizeof *a.per_worker);
	if (!a.per_worker)
		return -ENOMEM;
	progress_phase(progress_here(), nheads, "measuring %u data-structure heads", nheads);
	int rc = par_for(threads, ntasks, measure_task, &a);
	for (uint32_t w = 0; w < threads; w++) {
		const struct u32vec *p = &a.per_worker[w].held;
		for (size_t i = 0; !rc && i + 1 < p->n; i += 2) {
			if (p->v[i + 1] < out[p->v[i]].outer)
				out[p->v[i]].outer = p->v[i + 1];
		}
		if (a.per_worker[w].s)
			measure_free(&a.per_worker[w]);
	}
	free(a.per_worker);
	return rc;
}

/* ---- the heads' measures summed by type ---- */

#define SUMS_OBJECTS_PER_TASK 65536u

/* A worker's sums and its stamps: stamp[k] = o + 1 once element o has
 * counted for head k, so that a head holding o through several members
 * counts it once (object numbers are unique: never reset). */
struct sums_worker {
	struct ds_type_sums *sums;   /* [ntypes] */
	uint32_t *stamp;             /* [nheads] */
} __attribute__((aligned(MEASURE_ALIGN)));

struct sums_all {
	const struct heap_state *s;
	const uint16_t *roles;
	const uint32_t *owner, *head_obj;
	uint32_t nheads, ntypes;
	struct sums_worker *w;
};

static uint32_t head_type(const struct sums_all *a, uint32_t k)
{
	return hs_info(a->s, a->head_obj[k])->type;
}

static int sums_task(void *vctx, uint32_t task, uint32_t worker)
{
	struct sums_all *a = vctx;
	struct sums_worker *w = &a->w[worker];
	const struct heap_state *s = a->s;
	if (!w->sums) {
		w->sums = calloc(a->ntypes ? a->ntypes : 1, sizeof *w->sums);
		w->stamp = calloc(a->nheads ? a->nheads : 1, sizeof *w->stamp);
		if (!w->sums || !w->stamp)
			return -ENOMEM;
	}
	uint32_t o = task * SUMS_OBJECTS_PER_TASK;
	uint32_t end = s->n - o > SUMS_OBJECTS_PER_TASK ? o + SUMS_OBJECTS_PER_TASK : s->n;
	for (; o < end; o++) {
		uint32_t k = a->owner[o], ty;
		uint64_t size = hs_info(s, o)->size;
		if (k != DS_NONE && (ty = head_type(a, k)) < a->ntypes) {
			w->sums[ty].member_bytes += size;
			w->sums[ty].heads += a->head_obj[k] == o;
		}
		if (!ds_is_element(s, a->roles, o))
			continue;
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t r = s->in_src[e], kr = a->owner[r];
			if (r == o || kr == DS_NONE || kr == k || w->stamp[kr] == o + 1)
				continue;
			w->stamp[kr] = o + 1;
			if ((ty = head_type(a, kr)) < a->ntypes)
				w->sums[ty].element_bytes += size;
		}
	}
	return 0;
}

int ds_type_sums_compute(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
			 const uint32_t *head_obj, uint32_t nheads, uint32_t ntypes,
			 uint32_t threads, struct ds_type_sums *out)
{
	if (!s->has_graph)
		return -EINVAL;
	memset(out, 0, (size_t)ntypes * sizeof *out);
	uint32_t ntasks = (uint32_t)(((uint64_t)s->n + SUMS_OBJECTS_PER_TASK - 1) / SUMS_OBJECTS_PER_TASK);
	if (threads < 1)
		threads = 1;
	if (threads > ntasks)
		threads = ntasks ? ntasks : 1;
	struct sums_all a = { s, roles, owner, head_obj, nheads, ntypes, NULL };
	a.w = aligned_alloc(MEASURE_ALIGN, threads * sizeof *a.w);
	if (!a.w)
		return -ENOMEM;
	memset(a.w, 0, threads * sizeof *a.w);
	int rc = par_for(threads, ntasks, sums_task, &a);
	for (uint32_t w = 0; w < threads; w++) {
		for (uint32_t t = 0; !rc && a.w[w].sums && t < ntypes; t++) {
			out[t].heads += a.w[w].sums[t].heads;
			out[t].member_bytes += a.w[w].sums[t].member_bytes;
			out[t].element_bytes += a.w[w].sums[t].element_bytes;
		}
		free(a.w[w].sums);
		free(a.w[w].stamp);
	}
	free(a.w);
	return rc;
}

int ds_for_each_holder(const struct heap_state *s, const uint16_t *roles, const uint32_t *owner,
		       uint32_t o, ds_holder_fn fn, void *ctx)
{
	if (!ds_is_element(s, roles, o))
		return 0;
	for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
		uint32_t r = s->in_src[e];
		if (r == o || owner[r] == DS_NONE || owner[r] == owner[o])
			continue;
		int rc = fn(ctx, owner[r]);
		if (rc)
			return rc;
	}
	return 0;
}

/* dominators.c - see dominators.h.
 *
 * Vertices are renumbered in DFS preorder: 0 is the virtual root, 1..N-1
 * the reachable objects; vert, semi, parent and idom are indexed by that
 * number, and `num` maps a dense object index to it (0 = not reached).
 * Only the root and vertices with an out-edge are ever a DFS ancestor, so
 * the link-eval forest's ancestor and label are kept for them alone, at
 * dense slots (bitset_rank over those vertices): on heaps where half the
 * objects hold no reference (arrays of primitives, strings' bytes, boxed
 * values) that is 4 bytes an object less at the semidominators.
 */
#include "dominators.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bitset.h"
#include "model/progress.h"
#include "model/timing.h"

struct dom_work {
	const struct heap_state *s;
	uint32_t N;          /* vertices: reachable objects + the virtual root */
	uint32_t *num;       /* [n] object -> preorder number, 0 = unreached */
	uint32_t *vert;      /* [N] preorder number -> object (vert[0] unused) */
	uint32_t *semi;      /* [N] */
	uint32_t *parent;    /* [N] DFS parent (found by semidominators) */
	/* vertices that are the root or have an out-edge (fv, over preorder
	 * numbers, its rank directory fdir): the link-eval forest's slots */
	uint64_t *fv;
	uint32_t *fdir;
	uint32_t *anc;       /* [forest slots] ancestor's slot (read only once
	                        linked) */
	uint32_t *lab;       /* [forest slots] least semi on the compressed path */
	uint32_t *idom;      /* [N] */
	uint32_t *stack;     /* [stack_cap] compress() and DFS scratch: grown as
	                        deep as a path goes, which is rarely far (a
	                        million-long list makes it a million) */
	uint32_t stack_cap;
	int err;             /* -ENOMEM: the stack could not grow; the result
	                        is then discarded */
	uint32_t *edge_pos;  /* [N] DFS: next out-edge to try */
	uint64_t *rooted;    /* objects GC roots point at */
};

/* Room for one more entry at sp; 0, or -ENOMEM (w->err set). */
static int stack_room(struct dom_work *w, uint32_t sp)
{
	if (sp < w->stack_cap)
		return 0;
	uint32_t cap = w->stack_cap * 2;
	uint32_t *p = cap > w->stack_cap ? realloc(w->stack, (size_t)cap * sizeof *p) : NULL;
	if (!p) {
		w->err = -ENOMEM;
		return -ENOMEM;
	}
	w->stack = p;
	w->stack_cap = cap;
	return 0;
}

/* Depth-first search from the virtual root; preorder numbers from 1.
 * The DFS parents are not stored here: in preorder, an edge j -> k with
 * j < k goes to a descendant of j (k was numbered while j was on the
 * stack, before j's edges ran out), so every such predecessor of k is an
 * ancestor of k and the deepest of them, k's parent, has the largest
 * number: parent(k) = max { j < k : j -> k } (0, the virtual root, when
 * there is none: k was the start of a walk from a GC root).
 * semidominators reads every predecessor of k anyway and finds it there,
 * so the walk holds 4 bytes an object less. */
static void dfs(struct dom_work *w)
{
	const struct heap_state *s = w->s;
	uint32_t next = 1, sp = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (w->num[o])
			continue;
		w->num[o] = next;
		w->vert[next] = o;
		w->edge_pos[next] = s->out_off[o];
		if (stack_room(w, sp))
			return;
		w->stack[sp++] = next++;
		while (sp) {
			uint32_t k = w->stack[sp - 1], v = w->vert[k];
			if (w->edge_pos[k] == s->out_off[v + 1]) {
				sp--;
				continue;
			}
			uint32_t t = s->out_tgt[w->edge_pos[k]++];
			if (w->num[t])
				continue;
			w->num[t] = next;
			w->vert[next] = t;
			w->edge_pos[next] = s->out_off[t];
			if (stack_room(w, sp))
				return;
			w->stack[sp++] = next++;
		}
	}
	w->N = next;
}

/* The forest's vertices: the root and every vertex with an out-edge (a
 * DFS parent has one, the tree edge). */
static int forest_slots(struct dom_work *w)
{
	const struct heap_state *s = w->s;
	if (!(w->fv = bitset_new(w->N)))
		return -ENOMEM;
	bitset_set(w->fv, 0);
	for (uint32_t k = 1; k < w->N; k++) {
		uint32_t o = w->vert[k];
		if (s->out_off[o + 1] > s->out_off[o])
			bitset_set(w->fv, k);
	}
	return (w->fdir = bitset_rank_dir(w->fv, w->N)) ? 0 : -ENOMEM;
}

/* Path compression without recursion, on forest slots.  While vertex k
 * is being processed the vertices above k are linked and the others not;
 * thr = the slots of vertices up to k, so a slot is linked iff >= thr.
 * Collect the chain of linked vertices whose ancestor is linked, then
 * update them from the top down. */
static void compress(struct dom_work *w, uint32_t v, uint32_t thr)
{
	uint32_t sp = 0;
	while (w->anc[v] >= thr) {
		if (stack_room(w, sp))
			return; /* a partial compression would be wrong: w->err discards it all */
		w->stack[sp++] = v;
		v = w->anc[v];
	}
	while (sp) {
		uint32_t x = w->stack[--sp], a = w->anc[x];
		if (w->lab[a] < w->lab[x])
			w->lab[x] = w->lab[a];
		w->anc[x] = w->anc[a];
	}
}

/* The least semidominator on the forest path of linked slot v: lab holds
 * semi values (a linked vertex's semi is final), not the vertices
 * Lengauer-Tarjan's label names, whose semi was all that was read. */
static uint32_t eval(struct dom_work *w, uint32_t v, uint32_t thr)
{
	compress(w, v, thr);
	return w->lab[v];
}

/* One pass over k's in-edges gives its semidominator and its DFS parent
 * (see dfs): predecessors below k are not linked yet, so eval would give
 * themselves and their own numbers; those above k are evaluated (while
 * the best so far is above the root: nothing is below 0). */
static void semidominators(struct dom_work *w)
{
	const struct heap_state *s = w->s;
	w->semi[0] = w->parent[0] = 0;
	w->lab[0] = 0; /* the root: never linked */
	struct progress *pr = progress_here();
	for (uint32_t k = w->N - 1; k >= 1; k--) {
		if ((k & 0xffff) == 0)
			progress_add(pr, 0x10000);
		uint32_t o = w->vert[k], par = 0, best = bitset_get(w->rooted, o) ? 0 : k;
		uint32_t thr = bitset_rank(w->fv, w->fdir, k) + (uint32_t)bitset_get(w->fv, k);
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t j = w->num[s->in_src[e]];
			if (j == 0 || j == k)
				continue; /* unreached, or itself */
			if (j < k) {
				if (j > par)
					par = j;
				if (j < best)
					best = j;
			} else if (best) {
				uint32_t cand = eval(w, bitset_rank(w->fv, w->fdir, j), thr);
				if (cand < best)
					best = cand;
			}
		}
		w->semi[k] = best;
		w->parent[k] = par;
		if (bitset_get(w->fv, k)) { /* link (k's slot is thr - 1; a vertex
					      without one is nobody's ancestor) */
			w->anc[thr - 1] = bitset_rank(w->fv, w->fdir, par);
			w->lab[thr - 1] = best;
		}
	}
}

/* Semi-NCA: idom(k) is the nearest ancestor of parent(k), in the tree built
 * so far, whose number is at most semi(k). */
static void immediate_dominators(struct dom_work *w)
{
	w->idom[0] = 0;
	for (uint32_t k = 1; k < w->N; k++) {
		uint32_t d = w->parent[k];
		while (d > w->semi[k])
			d = w->idom[d];
		w->idom[k] = d;
	}
}

/* In two steps so that the preorder-indexed idom and the result's sums
 * are not held together: idom by object first (vert, w->idom, d->idom),
 * then, with w->idom freed, the sums (vert and the result). */
static void fill_idom(struct dom_work *w, struct dominators *d)
{
	const struct heap_state *s = w->s;
	for (uint32_t i = 0; i < s->n; i++)
		d->idom[i] = DOM_UNREACHABLE;
	for (uint32_t k = 1; k < w->N; k++) {
		uint32_t p = w->idom[k];
		d->idom[w->vert[k]] = p ? w->vert[p] : DOM_ROOT;
	}
}

static void fill_sums(struct dom_work *w, struct dominators *d)
{
	const struct heap_state *s = w->s;
	memset(d->retained, 0, (size_t)s->n * sizeof *d->retained);
	memset(d->retained_count, 0, (size_t)s->n * sizeof *d->retained_count);
	/* children have larger preorder numbers than their idom: sum upwards
	 * in reverse preorder */
	for (uint32_t k = w->N - 1; k >= 1; k--) {
		uint32_t o = w->vert[k], p = d->idom[o];
		d->retained[o] += hs_info(s, o)->size;
		d->retained_count[o] += 1;
		if (p != DOM_ROOT) {
			d->retained[p] += d->retained[o];
			d->retained_count[p] += d->retained_count[o];
		}
	}
	d->nreachable = w->N - 1;
}

static void drop(uint32_t **p)
{
	free(*p);
	*p = NULL;
}

static void drop_bits(uint64_t **p)
{
	bitset_free(*p);
	*p = NULL;
}

static void work_free(struct dom_work *w)
{
	free(w->num); free(w->vert); free(w->semi); free(w->parent);
	free(w->fdir); free(w->anc); free(w->lab); free(w->idom);
	free(w->stack); free(w->edge_pos);
	bitset_free(w->fv);
	bitset_free(w->rooted);
}

/* The arrays are allocated when a step needs them and freed when the last
 * step that reads them is done, so that no step holds much beside the
 * state.  Per object, with f the share of objects with an out-edge: the
 * walk 12 bytes (num, vert, edge_pos) and its stack as deep as paths go;
 * the semidominators 16 + 8f (num, vert, semi, parent, and the forest's
 * anc and lab); the immediate dominators 16 (vert, semi, parent, idom);
 * the result's idom 12 (vert, idom, the result's idom); its sums 20 (vert
 * and the result).  Dominators are the peak of a mount that computes
 * every retained size.  The result goes into arrays the caller gives
 * (dominators_compute_into), which may be the block the caller keeps and
 * which are not touched before the last two steps. */
int dominators_compute_into(const struct heap_state *s, struct dominators *d)
{
	if (!s->has_graph)
		return -EINVAL;
	int rc = -ENOMEM;
	struct dom_work w;
	memset(&w, 0, sizeof(w));
	w.s = s;
	size_t n1 = (size_t)s->n + 1;
	/* progress (model/progress.h) in objects: the depth-first walk, the
	 * semidominators (most of the time, counted as they go), then the
	 * tree and its sums */
	struct progress *pr = progress_here();
	progress_phase(pr, 3 * (uint64_t)s->n, "dominator tree of GC %u (objects, 3 passes)", s->gc);
	w.num = calloc(n1, sizeof(uint32_t));
	w.vert = malloc(n1 * sizeof(uint32_t));
	w.stack_cap = 4096;
	w.stack = malloc(w.stack_cap * sizeof(uint32_t));
	w.edge_pos = malloc(n1 * sizeof(uint32_t));
	w.rooted = bitset_new(s->n);
	if (!w.num || !w.vert || !w.stack || !w.edge_pos || !w.rooted)
		goto out;
	struct lap_t t0;
	lap_now(&t0);
	for (uint32_t r = 0; r < s->nroots; r++)
		bitset_set(w.rooted, s->roots[r].object);
	dfs(&w);
	timing_lap("dominators", "depth-first walk", &t0);
	if (w.err) {
		rc = w.err;
		goto out;
	}
	progress_set(pr, s->n);
	drop(&w.edge_pos);
	/* the walk's stack went as deep as the deepest path; compress's
	 * starts small again and grows only as far as its chains go */
	drop(&w.stack);
	w.stack_cap = 4096;
	w.stack = malloc(w.stack_cap * sizeof(uint32_t));
	if (!w.stack || forest_slots(&w))
		goto out;
	size_t N = w.N, F = w.fdir[bitset_words(N)];
	w.semi = malloc(N * sizeof(uint32_t));
	w.parent = malloc(N * sizeof(uint32_t));
	w.anc = malloc(F * sizeof(uint32_t));
	w.lab = malloc(F * sizeof(uint32_t));
	if (!w.semi || !w.parent || !w.anc || !w.lab)
		goto out;
	timing_lap("dominators", "forest slots", &t0);
	semidominators(&w);
	timing_lap("dominators", "semidominators", &t0);
	if (w.err) {
		rc = w.err;
		goto out;
	}
	progress_set(pr, 2 * (uint64_t)s->n);
	drop(&w.anc);
	drop(&w.lab);
	drop(&w.stack);
	drop(&w.fdir);
	drop(&w.num);
	drop_bits(&w.fv);
	drop_bits(&w.rooted);
	if (!(w.idom = malloc(N * sizeof(uint32_t))))
		goto out;
	immediate_dominators(&w);
	timing_lap("dominators", "immediate dominators", &t0);
	drop(&w.semi);
	drop(&w.parent);
	d->n = s->n;
	fill_idom(&w, d);
	drop(&w.idom);
	timing_lap("dominators", "idom by object", &t0);
	fill_sums(&w, d);
	timing_lap("dominators", "sums", &t0);
	rc = 0;
	progress_set(pr, 3 * (uint64_t)s->n);
out:
	work_free(&w);
	return rc;
}

int dominators_compute(const struct heap_state *s, struct dominators **out)
{
	if (!s->has_graph)
		return -EINVAL;
	size_t n1 = (size_t)s->n + 1;
	struct dominators *d = calloc(1, sizeof(*d));
	int rc = -ENOMEM;
	if (!d)
		return rc;
	d->idom = malloc(n1 * sizeof(uint32_t));
	d->retained = malloc(n1 * sizeof(uint64_t));
	d->retained_count = malloc(n1 * sizeof(uint32_t));
	if (d->idom && d->retained && d->retained_count)
		rc = dominators_compute_into(s, d);
	if (rc) {
		dominators_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void dominators_free(struct dominators *d)
{
	if (!d)
		return;
	free(d->idom);
	free(d->retained);
	free(d->retained_count);
	free(d);
}

size_t dominators_memory(const struct dominators *d)
{
	return sizeof(*d) + (size_t)d->n * (4 + 8 + 4);
}

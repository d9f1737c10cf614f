/* dominators.c - see dominators.h.
 *
 * Vertices are renumbered in DFS preorder: 0 is the virtual root, 1..N-1
 * the reachable objects.  All per-vertex arrays below are indexed by that
 * number; `num` maps a dense object index to it (0 = not reached).
 */
#include "dominators.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bitset.h"
#include "model/progress.h"

#define NONE UINT32_MAX

struct dom_work {
	const struct heap_state *s;
	uint32_t N;          /* vertices: reachable objects + the virtual root */
	uint32_t *num;       /* [n] object -> preorder number, 0 = unreached */
	uint32_t *vert;      /* [N] preorder number -> object (vert[0] unused) */
	uint32_t *semi;      /* [N] */
	uint32_t *label;     /* [N] */
	uint32_t *ancestor;  /* [N] link forest, NONE at a tree root */
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
 * The DFS parents are not stored: in preorder, an edge j -> k with j < k
 * goes to a descendant of j (k was numbered while j was on the stack,
 * before j's edges ran out), so every such predecessor of k is an
 * ancestor of k and the deepest of them, k's parent, has the largest
 * number: parent(k) = max { j < k : j -> k } (0, the virtual root, when
 * there is none: k was the start of a walk from a GC root).  dfs_parent
 * finds it from k's in-edges when it is needed, which saves 4 bytes an
 * object at the peak. */
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

/* Path compression without recursion: collect the chain of vertices whose
 * grand-ancestor exists, then update them from the top down. */
static void compress(struct dom_work *w, uint32_t v)
{
	uint32_t sp = 0;
	while (w->ancestor[w->ancestor[v]] != NONE) {
		if (stack_room(w, sp))
			return; /* a partial compression would be wrong: w->err discards it all */
		w->stack[sp++] = v;
		v = w->ancestor[v];
	}
	while (sp) {
		uint32_t x = w->stack[--sp], a = w->ancestor[x];
		if (w->semi[w->label[a]] < w->semi[w->label[x]])
			w->label[x] = w->label[a];
		w->ancestor[x] = w->ancestor[a];
	}
}

static uint32_t eval(struct dom_work *w, uint32_t v)
{
	if (w->ancestor[v] == NONE)
		return v;
	compress(w, v);
	return w->label[v];
}

/* k's DFS parent (see dfs) and, in *best, the smallest preorder number
 * among k's predecessors below k (k itself when none, 0 for a GC root):
 * one pass over k's in-edges. */
static uint32_t dfs_parent(const struct dom_work *w, uint32_t k, uint32_t *best)
{
	const struct heap_state *s = w->s;
	uint32_t o = w->vert[k], par = 0, b = bitset_get(w->rooted, o) ? 0 : k;
	for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
		uint32_t j = w->num[s->in_src[e]];
		if (j == 0 || j >= k)
			continue; /* unreached, itself, or not an ancestor */
		if (j > par)
			par = j;
		if (j < b)
			b = j;
	}
	*best = b;
	return par;
}

static void semidominators(struct dom_work *w)
{
	const struct heap_state *s = w->s;
	for (uint32_t k = 0; k < w->N; k++) {
		w->semi[k] = w->label[k] = k;
		w->ancestor[k] = NONE;
	}
	struct progress *pr = progress_here();
	for (uint32_t k = w->N - 1; k >= 1; k--) {
		if ((k & 0xffff) == 0)
			progress_add(pr, 0x10000);
		/* predecessors below k are not linked yet: eval gives
		 * themselves, semi their own numbers (dfs_parent's best) */
		uint32_t o = w->vert[k], best;
		uint32_t par = dfs_parent(w, k, &best);
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1] && best; e++) {
			uint32_t j = w->num[s->in_src[e]];
			if (j <= k)
				continue; /* unreached (0), itself, or done above */
			uint32_t cand = w->semi[eval(w, j)];
			if (cand < best)
				best = cand;
		}
		w->semi[k] = best;
		w->ancestor[k] = par; /* link */
	}
}

/* Semi-NCA: idom(k) is the nearest ancestor of parent(k), in the tree built
 * so far, whose number is at most semi(k). */
static void immediate_dominators(struct dom_work *w)
{
	w->idom[0] = 0;
	for (uint32_t k = 1; k < w->N; k++) {
		uint32_t unused;
		uint32_t d = dfs_parent(w, k, &unused);
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

static void work_free(struct dom_work *w)
{
	free(w->num); free(w->vert); free(w->semi);
	free(w->label); free(w->ancestor); free(w->idom); free(w->stack);
	free(w->edge_pos);
	bitset_free(w->rooted);
}

/* The arrays are allocated when a step needs them and freed when the last
 * step that reads them is done, so that the peak is 5 words a vertex (the
 * semidominators': num, vert, semi, label, ancestor; the DFS parents are
 * found again from the in-edges, see dfs), and no step holds more beside
 * the result (4 words an object): the walk 3 (num, vert, edge_pos), the
 * immediate dominators 4 (num, vert, semi, idom), the result's idom 3
 * (vert, idom, the result's idom), its sums vert and the result.
 * Dominators are the peak of a mount that computes every retained size.
 * Arrays made after the DFS have N entries (the reachable objects and the
 * root), not n + 1.  The result goes into arrays the caller gives
 * (dominators_compute_into), which may be the block the caller keeps and
 * which are not touched before the last two steps. */
static void drop(uint32_t **p)
{
	free(*p);
	*p = NULL;
}

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
	for (uint32_t r = 0; r < s->nroots; r++)
		bitset_set(w.rooted, s->roots[r].object);
	dfs(&w);
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
	size_t N = w.N;
	w.semi = malloc(N * sizeof(uint32_t));
	w.label = malloc(N * sizeof(uint32_t));
	w.ancestor = malloc(N * sizeof(uint32_t));
	if (!w.stack || !w.semi || !w.label || !w.ancestor)
		goto out;
	semidominators(&w);
	if (w.err) {
		rc = w.err;
		goto out;
	}
	progress_set(pr, 2 * (uint64_t)s->n);
	drop(&w.ancestor);
	drop(&w.stack);
	w.idom = w.label; /* label is read no more: its room holds idom */
	w.label = NULL;
	immediate_dominators(&w);
	drop(&w.num);
	drop(&w.semi);
	bitset_free(w.rooted);
	w.rooted = NULL;
	d->n = s->n;
	fill_idom(&w, d);
	drop(&w.idom);
	fill_sums(&w, d);
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

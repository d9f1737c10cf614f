/* dominators.c - see dominators.h.
 *
 * Objects with no reference, one referrer and no GC root (a string's
 * bytes, a boxed value, most arrays of primitives: "simple leaves") are
 * left out of the walk: every path to one ends with its referrer, so that
 * is its immediate dominator, and nothing lies beyond it, so the others'
 * dominators are the same without it.  They are half the objects of the
 * 1 GB bench dump (12.0 M of 24.0 M) and 37% of the H2 database's (1.8 M
 * of 4.8 M).  Finding them, their dominators and their share of the sums
 * are passes over the objects on the threads; the walk, the
 * semidominators' link-eval and the sums up the tree stay serial, the
 * semidominators reading what a pass on the threads wrote down for them
 * (below_preds).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitset.h"
#include "parallel.h"
#include "model/buf.h"
#include "model/mpar.h"
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
	/* [forest slots] ancestor's slot (read only once linked) and the
	 * least semi on the compressed path, side by side: eval reads both
	 * of a slot at random, one cache line (and one TLB entry) instead
	 * of two */
	struct forest_slot {
		uint32_t anc, lab;
	} *forest;
	uint32_t *idom;      /* [N] */
	uint32_t *stack;     /* [stack_cap] compress() and DFS scratch: grown as
	                        deep as a path goes, which is rarely far (a
	                        million-long list makes it a million) */
	uint32_t stack_cap;
	int err;             /* -ENOMEM: the stack could not grow; the result
	                        is then discarded */
	uint32_t *edge_pos;  /* [N] DFS: next out-edge to try */
	uint64_t *rooted;    /* objects GC roots point at */
	uint64_t *simple;    /* simple leaves (above): not in the walk */
	uint64_t *later;     /* [N] vertices with a predecessor numbered above
				them (below_preds) */
	uint32_t threads;
};

/* ---- passes over ranges of objects (or of preorder numbers), on the
 * threads ---- */

#define RANGES_PER_THREAD 8
#define RANGE_MIN 65536

/* One range's predecessors numbered above their vertex (below_preds):
 * for each vertex of the range in `later`, in ascending order, the forest
 * slots of those predecessors, the first with ABOVE_FIRST set (a count
 * entry instead made the 1 GB bench dump's lists twice as long: 8.0 M
 * entries for 4.0 M vertices, each fresh page a fault on these machines). */
#define ABOVE_FIRST 0x80000000u
struct above_list {
	uint32_t *v;
	uint64_t len, cap;
};

struct dom_pass {
	struct dom_work *w;
	struct dominators *d;
	uint32_t *reached;   /* [nreached] simple leaves reached, by range */
	uint32_t nreached;
	struct above_list *above; /* [nabove] by range (below_preds) */
	uint32_t nabove;
	int err;             /* -ENOMEM in a range task (atomic) */
};

/* fn over 0..n-1 in ranges, on the work's threads (parallel.h). */
static int each_range(struct dom_pass *p, uint32_t n, par_range_fn *fn)
{
	return par_ranges(p->w->threads, n, RANGES_PER_THREAD, RANGE_MIN, fn, p);
}

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
			if (bitset_get(w->simple, t) || w->num[t])
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

/* The vertices the walk will number, the virtual root among them: the
 * reachable objects that are no simple leaf (a path from a GC root runs
 * through objects with an out-edge, which simple leaves are not, so the
 * walk reaches exactly these).  Every object when the state does not say
 * which are reachable. */
static size_t walk_vertices(const struct dom_work *w)
{
	const struct heap_state *s = w->s;
	size_t words = bitset_words(s->n), count = 0;
	for (size_t k = 0; k < words; k++) {
		uint64_t live = s->reachable ? s->reachable[k] : ~(uint64_t)0;
		count += bitset_popcount64(live & ~w->simple[k]);
	}
	if (count > s->n)   /* the last word's bits past n, with no reachability */
		count = s->n;
	return count + 1;
}

/* The forest's vertices: the root and every vertex with an out-edge (a
 * DFS parent has one, the tree edge).  Preorder numbers from..to-1 of a
 * range (ranges are multiples of 64: each owns its words of fv); each
 * vertex's out_off is a read at random, so the ranges run on the
 * threads. */
static void forest_range(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	(void)range;
	const struct dom_work *w = p->w;
	const struct heap_state *s = w->s;
	for (uint32_t k = from ? from : 1; k < to; k++) {
		uint32_t o = w->vert[k];
		if (s->out_off[o + 1] > s->out_off[o])
			bitset_set(w->fv, k);
	}
}

static int forest_slots(struct dom_pass *p)
{
	struct dom_work *w = p->w;
	if (!(w->fv = bitset_new(w->N)))
		return -ENOMEM;
	bitset_set(w->fv, 0);
	int rc = each_range(p, w->N, forest_range);
	if (rc)
		return rc;
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
	struct forest_slot *f = w->forest;
	while (f[v].anc >= thr) {
		if (stack_room(w, sp))
			return; /* a partial compression would be wrong: w->err discards it all */
		w->stack[sp++] = v;
		v = f[v].anc;
	}
	while (sp) {
		uint32_t x = w->stack[--sp], a = f[x].anc;
		if (f[a].lab < f[x].lab)
			f[x].lab = f[a].lab;
		f[x].anc = f[a].anc;
	}
}

/* The least semidominator on the forest path of linked slot v: lab holds
 * semi values (a linked vertex's semi is final), not the vertices
 * Lengauer-Tarjan's label names, whose semi was all that was read. */
static uint32_t eval(struct dom_work *w, uint32_t v, uint32_t thr)
{
	compress(w, v, thr);
	return w->forest[v].lab;
}

/* Appends x to a range's list; -ENOMEM. */
static int above_push(struct above_list *l, uint32_t x)
{
	int rc = array_reserve((void **)&l->v, &l->cap, l->len + 1, sizeof *l->v);
	if (!rc)
		l->v[l->len++] = x;
	return rc;
}

/* A vertex's predecessors numbered below it are its DFS ancestors (see
 * dfs): the deepest is its parent, the least a candidate semidominator,
 * and neither needs the forest.  So a pass on the threads reads every
 * vertex's in-edges for those two (in parent and semi) and marks in
 * `later` the vertices with a predecessor numbered above them, the only
 * ones whose semidominator needs eval.  It also writes down the forest
 * slots of those predecessors (an edge's source has an out-edge, so it
 * has a slot), range by range: the serial pass below then reads them in
 * order, where reading the in-edges there (in_off, in_src and num, each
 * at random) took a third of its time on the H2 dump.  A GC root's
 * semidominator is the virtual root, 0, which nothing improves on. */
static void below_preds(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	struct dom_work *w = p->w;
	const struct heap_state *s = w->s;
	struct above_list *l = &p->above[range];
	for (uint32_t k = from ? from : 1; k < to; k++) {
		uint32_t o = w->vert[k], par = 0, best = bitset_get(w->rooted, o) ? 0 : k;
		uint64_t mark = l->len;
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1]; e++) {
			uint32_t j = w->num[s->in_src[e]];
			if (j == 0 || j == k)
				continue; /* unreached, or itself */
			if (j < k) {
				if (j > par)
					par = j;
				if (j < best)
					best = j;
			} else if (above_push(l, bitset_rank(w->fv, w->fdir, j) | (l->len == mark ? ABOVE_FIRST : 0))) {
				__atomic_store_n(&p->err, -ENOMEM, __ATOMIC_RELAXED);
				return;
			}
		}
		w->semi[k] = best;
		w->parent[k] = par;
		if (l->len == mark)
			continue;
		if (!best)
			l->len = mark; /* nothing improves on the root */
		else
			bitset_set(w->later, k);
	}
}

/* In reverse preorder: the predecessors above k are linked by now, and
 * eval gives the least semidominator on each one's forest path (while the
 * best so far is above the root: nothing is below 0); then k is linked.
 * The `later` vertices' lists (below_preds) are read from the last range's
 * end backwards, so in the order k descends. */
static void semidominators(struct dom_work *w, const struct dom_pass *p)
{
	w->semi[0] = w->parent[0] = 0;
	w->forest[0].lab = 0; /* the root: never linked */
	struct progress *pr = progress_here();
	uint32_t r = p->nabove;
	uint64_t pos = 0;
	for (uint32_t k = w->N - 1; k >= 1; k--) {
		if ((k & 0xffff) == 0)
			progress_add(pr, 0x10000);
		uint32_t best = w->semi[k];
		uint32_t thr = bitset_rank(w->fv, w->fdir, k) + (uint32_t)bitset_get(w->fv, k);
		if (bitset_get(w->later, k)) {
			while (pos == 0 && r > 0)
				pos = p->above[--r].len;
			const uint32_t *v = p->above[r].v;
			uint32_t x;
			do {
				x = v[--pos];
				if (best) {
					uint32_t cand = eval(w, x & ~ABOVE_FIRST, thr);
					if (cand < best)
						best = cand;
				}
			} while (!(x & ABOVE_FIRST));
			w->semi[k] = best;
		}
		if (bitset_get(w->fv, k)) { /* link (k's slot is thr - 1; a vertex
					      without one is nobody's ancestor) */
			w->forest[thr - 1].anc = bitset_rank(w->fv, w->fdir, w->parent[k]);
			w->forest[thr - 1].lab = best;
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

static void mark_simple(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	(void)range;
	const struct heap_state *s = p->w->s;
	for (uint32_t o = from; o < to; o++)
		if (s->out_off[o + 1] == s->out_off[o] && s->in_off[o + 1] - s->in_off[o] == 1 &&
		    !bitset_get(p->w->rooted, o))
			bitset_set(p->w->simple, o);
}

/* The walk's objects not reached yet: unreachable until the next pass
 * says otherwise. */
static void idom_unreached(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	(void)range;
	for (uint32_t o = from; o < to; o++)
		if (!bitset_get(p->w->simple, o))
			p->d->idom[o] = DOM_UNREACHABLE;
}

/* The walk's vertices from..to-1 (preorder numbers, 0 the virtual root):
 * their immediate dominators by object. */
static void idom_of_vertices(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	(void)range;
	const struct dom_work *w = p->w;
	for (uint32_t k = from ? from : 1; k < to; k++) {
		uint32_t q = w->idom[k];
		p->d->idom[w->vert[k]] = q ? w->vert[q] : DOM_ROOT;
	}
}

/* Simple leaves, by their referrer r (from..to-1 are referrers): r's
 * range writes r's sums and those of r's simple leaves (each has one
 * referrer, so one range writes it), with no atomics and no pass to zero
 * them first.  A leaf's immediate dominator is r when r was reached (r's
 * idom is set by now: r has an out-edge, so it is no simple leaf), and
 * its bytes go to r at once; r's own sum up the tree comes after. */
static void leaves_by_referrer(void *ctx, uint32_t from, uint32_t to, uint32_t range)
{
	struct dom_pass *p = ctx;
	const struct heap_state *s = p->w->s;
	const uint64_t *simple = p->w->simple;
	struct dominators *d = p->d;
	uint32_t reached = 0;
	for (uint32_t r = from; r < to; r++) {
		if (bitset_get(simple, r))
			continue; /* written by its own referrer's range */
		int live = d->idom[r] != DOM_UNREACHABLE;
		uint64_t bytes = 0;
		uint32_t count = 0;
		for (uint32_t e = s->out_off[r]; e < s->out_off[r + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!bitset_get(simple, t))
				continue;
			uint64_t size = live ? hs_info(s, t)->size : 0;
			d->idom[t] = live ? r : DOM_UNREACHABLE;
			d->retained[t] = size;
			d->retained_count[t] = live;
			bytes += size;
			count += (uint32_t)live;
		}
		d->retained[r] = bytes;
		d->retained_count[r] = count;
		reached += count;
	}
	p->reached[range] = reached;
}

/* Immediate dominators by object, in two steps so that the preorder-indexed
 * idom and the result's sums are not held together: idom first (vert,
 * w->idom, d->idom), then, with w->idom freed, the sums (vert and the
 * result). */
static int fill_idom(struct dom_pass *p)
{
	int rc = each_range(p, p->w->s->n, idom_unreached);
	return rc ? rc : each_range(p, p->w->N, idom_of_vertices);
}

static int fill_sums(struct dom_pass *p)
{
	struct dom_work *w = p->w;
	struct dominators *d = p->d;
	const struct heap_state *s = w->s;
	p->nreached = par_range_count(s->n, w->threads ? w->threads : 1, RANGES_PER_THREAD, RANGE_MIN);
	if (!(p->reached = calloc(p->nreached ? p->nreached : 1, sizeof *p->reached)))
		return -ENOMEM;
	int rc = each_range(p, s->n, leaves_by_referrer);
	if (rc)
		return rc;
	/* children have larger preorder numbers than their idom: sum upwards
	 * in reverse preorder */
	for (uint32_t k = w->N - 1; k >= 1; k--) {
		uint32_t o = w->vert[k], q = d->idom[o];
		d->retained[o] += hs_info(s, o)->size;
		d->retained_count[o] += 1;
		if (q != DOM_ROOT) {
			d->retained[q] += d->retained[o];
			d->retained_count[q] += d->retained_count[o];
		}
	}
	uint64_t reached = w->N - 1;
	for (uint32_t k = 0; k < p->nreached; k++)
		reached += p->reached[k];
	d->nreachable = (uint32_t)reached;
	return 0;
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

static void above_free(struct dom_pass *p)
{
	for (uint32_t r = 0; p->above && r < p->nabove; r++)
		free(p->above[r].v);
	free(p->above);
	p->above = NULL;
}

static void work_free(struct dom_work *w)
{
	free(w->num); free(w->vert); free(w->semi); free(w->parent);
	free(w->fdir); free(w->forest); free(w->idom);
	free(w->stack); free(w->edge_pos);
	bitset_free(w->fv);
	bitset_free(w->rooted);
	bitset_free(w->simple);
	bitset_free(w->later);
}

/* The arrays are allocated when a step needs them and freed when the last
 * step that reads them is done, so that no step holds much beside the
 * state.  Per object (num) and per object the walk reaches (the others;
 * simple leaves are not reached), with f the share of those with an
 * out-edge: the walk 4 + 8 bytes (num; vert, edge_pos) and its stack as
 * deep as paths go; the semidominators 4 + 12 + 8f (num; vert, semi,
 * parent, and the forest's anc and lab) and 4 bytes (up to 8 while the
 * lists grow) a predecessor numbered above its vertex (H2: 1.4 M of 4.8 M
 * objects; the 1 GB dump 4.0 M of 24.0 M); the immediate dominators 16
 * (vert, semi, parent, idom); the result's idom 8 + 4 (vert, idom; the
 * result's idom); its sums 4 + 16 (vert; the result).  Two bits an object
 * besides (GC roots, simple leaves).  Dominators are the peak of a mount
 * that computes every retained size.  The result goes into arrays the
 * caller gives (dominators_compute_into), which may be the block the
 * caller keeps and which are not touched before the last two steps. */
int dominators_compute_into(const struct heap_state *s, uint32_t threads, struct dominators *d)
{
	if (!s->has_graph)
		return -EINVAL;
	int rc = -ENOMEM;
	struct dom_work w;
	memset(&w, 0, sizeof(w));
	w.s = s;
	w.threads = threads;
	struct dom_pass pass = { .w = &w, .d = d };
	size_t n1 = (size_t)s->n + 1;
	/* progress (model/progress.h) in objects: the depth-first walk, the
	 * semidominators (most of the time, counted as they go), then the
	 * tree and its sums */
	struct progress *pr = progress_here();
	progress_phase(pr, 3 * (uint64_t)s->n, "dominator tree of GC %u (objects, 3 passes)", s->gc);
	w.num = malloc(n1 * sizeof(uint32_t));
	w.vert = malloc(n1 * sizeof(uint32_t));
	w.stack_cap = 4096;
	w.stack = malloc(w.stack_cap * sizeof(uint32_t));
	w.edge_pos = malloc(n1 * sizeof(uint32_t));
	w.rooted = bitset_new(s->n);
	w.simple = bitset_new(s->n);
	if (!w.num || !w.vert || !w.stack || !w.edge_pos || !w.rooted || !w.simple)
		goto out;
	struct lap_t t0;
	lap_now(&t0);
	for (uint32_t r = 0; r < s->nroots; r++)
		bitset_set(w.rooted, s->roots[r].object);
	if ((rc = each_range(&pass, s->n, mark_simple)))
		goto out;
	rc = -ENOMEM;
	/* the walk writes num all over and vert and edge_pos up to N, one
	 * object at a time: their pages come first, on the threads
	 * (model/mpar.h) */
	size_t nwalk = walk_vertices(&w);
	mpar_memset(threads, w.num, 0, n1 * sizeof(uint32_t));
	mpar_memset(threads, w.vert, 0, nwalk * sizeof(uint32_t));
	mpar_memset(threads, w.edge_pos, 0, nwalk * sizeof(uint32_t));
	if (timing_on())
		fprintf(stderr, "heapfs: dominators: %llu simple leaves of %u objects\n",
			(unsigned long long)bitset_count(w.simple, s->n), s->n);
	timing_lap("dominators", "simple leaves", &t0);
	dfs(&w);
	timing_lap("dominators", "depth-first walk", &t0);
	if (w.err) {
		rc = w.err;
		goto out;
	}
	progress_set(pr, s->n);
	/* edge_pos (n + 1 entries) becomes semi (N <= n + 1), and num becomes
	 * idom below: memory already touched, where a fresh block would be
	 * zeroed by the kernel page by page (costly on these machines) */
	w.semi = w.edge_pos;
	w.edge_pos = NULL;
	/* the walk's stack went as deep as the deepest path; compress's
	 * starts small again and grows only as far as its chains go */
	drop(&w.stack);
	w.stack_cap = 4096;
	w.stack = malloc(w.stack_cap * sizeof(uint32_t));
	if (!w.stack || forest_slots(&pass))
		goto out;
	size_t N = w.N, F = w.fdir[bitset_words(N)];
	/* below_preds marks a list's first entry in a slot's top bit.  So
	 * many vertices with an out-edge would also have more edges than
	 * the states' 32-bit offsets hold. */
	if (F > ABOVE_FIRST) {
		rc = -E2BIG;
		goto out;
	}
	w.parent = malloc(N * sizeof(uint32_t));
	w.forest = malloc(F * sizeof *w.forest);
	w.later = bitset_new(N);
	if (!w.parent || !w.forest || !w.later)
		goto out;
	/* written by the serial semidominators, each slot once */
	mpar_memset(threads, w.forest, 0, F * sizeof *w.forest);
	timing_lap("dominators", "forest slots", &t0);
	pass.nabove = par_range_count(w.N, threads ? threads : 1, RANGES_PER_THREAD, RANGE_MIN);
	if (!(pass.above = calloc(pass.nabove ? pass.nabove : 1, sizeof *pass.above)))
		goto out;
	if ((rc = each_range(&pass, w.N, below_preds)) || (rc = pass.err))
		goto out;
	rc = -ENOMEM;
	if (timing_on()) {
		uint64_t entries = 0;
		for (uint32_t r = 0; r < pass.nabove; r++)
			entries += pass.above[r].len;
		fprintf(stderr, "heapfs: dominators: %llu vertices with a predecessor numbered above them, "
				"lists of %llu entries\n",
			(unsigned long long)bitset_count(w.later, w.N), (unsigned long long)entries);
	}
	timing_lap("dominators", "parents", &t0);
	semidominators(&w, &pass);
	above_free(&pass);
	timing_lap("dominators", "semidominators", &t0);
	if (w.err) {
		rc = w.err;
		goto out;
	}
	progress_set(pr, 2 * (uint64_t)s->n);
	free(w.forest);
	w.forest = NULL;
	drop(&w.stack);
	drop(&w.fdir);
	w.idom = w.num;
	w.num = NULL;
	drop_bits(&w.fv);
	drop_bits(&w.rooted);
	drop_bits(&w.later);
	immediate_dominators(&w);
	timing_lap("dominators", "immediate dominators", &t0);
	drop(&w.semi);
	drop(&w.parent);
	d->n = s->n;
	if ((rc = fill_idom(&pass)))
		goto out;
	drop(&w.idom);
	timing_lap("dominators", "idom by object", &t0);
	if ((rc = fill_sums(&pass)))
		goto out;
	timing_lap("dominators", "sums", &t0);
	progress_set(pr, 3 * (uint64_t)s->n);
out:
	free(pass.reached);
	above_free(&pass);
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
		rc = dominators_compute_into(s, 1, d);
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

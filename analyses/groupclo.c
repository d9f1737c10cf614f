/* groupclo.c - see groupclo.h; the proof is in docs/closures.md ("Every
 * group at once").
 *
 * Definitions (those of closure.c): T(G) = G and everything reachable from
 * it; A(G) = objects reachable from a GC root in the graph without G's
 * members ("alive without G"); R(G) = T(G) \ A(G).  closure_retained's
 * "kept" set is exactly T(G) ∩ A(G), hence the same R(G).
 *
 * Batched: for 64 groups g (bit g of a word), per object x
 *   reach(x) = own(x) | OR over predecessors p of reach(p)
 *   alive(x) = ~own(x) & (rooted(x) ? ~0 : OR over predecessors p of alive(p))
 * reach is the least solution (bit g: x ∈ T(G)), alive the least solution
 * (bit g: x ∈ A(G)).  Over the strongly connected components in
 * topological order every predecessor outside x's component is final when
 * x's component is processed, so reach is one OR per component, and alive
 * is final after a work list inside the component (bits only ever get set,
 * so it ends; what it reaches is the least solution restricted to the
 * component given its final inputs).
 */
#include "groupclo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/bitset.h"
#include "analyses/parallel.h"
#include "model/progress.h"

#define NOSLOT UINT32_MAX
#define GCLO_FEW 4 /* at most this many big groups: each alone (gclo_compute) */

struct gclo {
	const struct heap_state *s;
	uint32_t n, ngroups;
	uint64_t *rooted;          /* objects a GC root points at */
	/* object -> its groups: gof[x] (or NOSLOT) when no object is in two
	 * groups (one-to-one classifiers: 4 B per object), else a CSR over
	 * the pairs (ooff, olist) */
	uint32_t *gof, *ooff, *olist;
	uint32_t *goff;            /* [ngroups+1] group -> its run in pairs */
	const struct cls_pair *pairs;
	struct buf *pairs_owner;   /* the caller's buffer of pairs, freed here
	                            * before the batched passes (gclo_opts) */
	struct closure_metrics *deep, *ret;
	uint64_t *uni;
	uint64_t *in_g;            /* few_big: the group's bits */
	/* batched path */
	uint32_t *corder;          /* [n] objects, component by component, in
	                            * topological order */
	uint64_t *cstart;          /* [n] bits over corder's positions: a
	                            * component starts there */
	/* Only objects with an out-edge are ever some object's predecessor
	 * or in a cycle, so only they keep their words between components:
	 * at dense slots, the rank of x among them (obj_slot). */
	uint64_t *haso;            /* [n] bits: x has an out-edge */
	uint32_t *hrank;           /* [n/64 + 1] objects with an out-edge
	                            * before word k of haso */
	uint32_t nhaso;
	uint32_t ncomp, maxcomp;   /* components, objects of the largest */
	uint32_t threads;          /* for the batches */
};

/* What an object with an out-edge keeps between components in a pass:
 * side by side, so that a predecessor costs one cache line. */
struct words {
	uint64_t reach, alive;
};

/* A pass's sums by word of group bits: an object adds its size to every
 * group of its reach word (and of its retained word), up to 64 of them;
 * objects that share a word (the same groups reach a whole structure)
 * are summed here first, and the word's groups get the sums
 * when its slot is taken by another word or the pass ends.  Direct
 * mapped; a word of 0 adds nothing and marks a free slot. */
#define SUM_SLOTS 512

struct word_sums {
	uint64_t word[SUM_SLOTS], count[SUM_SLOTS], bytes[SUM_SLOTS];
};

/* What one batch pass reads and writes besides the shared inputs: the
 * bits of its groups, and its scratch. */
struct batch {
	uint32_t *slot;            /* [ngroups] bit of each group in this batch, or NOSLOT */
	uint32_t bgroup[64];       /* group of each bit */
	struct words *wd;          /* [nhaso] by obj_slot */
	uint64_t *inq, *incomp;    /* [n] bits: queued; in the component at hand */
	uint32_t *ring;
	struct word_sums *deep, *ret; /* sums of T's and of R's words */
};

static void gclo_free(struct gclo *w)
{
	bitset_free(w->rooted);
	free(w->gof); free(w->ooff); free(w->olist); free(w->goff);
	bitset_free(w->in_g);
	free(w->corder);
	bitset_free(w->cstart);
	bitset_free(w->haso);
	free(w->hrank);
}

/* uni is shared by the threads: set its bits atomically. */
static inline void uni_set(uint64_t *uni, uint32_t x)
{
	__atomic_fetch_or(&uni[x >> 6], 1ull << (x & 63), __ATOMIC_RELAXED);
}

/* ---- one group alone, sparsely ---- */

/* A thread's scratch for groups alone: T's and G's bits, the kept bits,
 * T's list then kept's (all cleared after each group: O(|T|)). */
struct alone {
	uint64_t *in_t, *in_g, *kept;
	uint32_t *queue;
};

static void alone_free(struct alone *a)
{
	bitset_free(a->in_t);
	bitset_free(a->in_g);
	bitset_free(a->kept);
	free(a->queue);
	memset(a, 0, sizeof *a);
}

static int alone_alloc(const struct gclo *w, uint32_t budget, struct alone *a)
{
	a->in_t = bitset_new(w->n);
	a->in_g = bitset_new(w->n);
	a->kept = bitset_new(w->n);
	a->queue = malloc(((size_t)budget + 1) * 2 * sizeof *a->queue);
	if (!a->in_t || !a->in_g || !a->kept || !a->queue) {
		alone_free(a);
		return -ENOMEM;
	}
	return 0;
}

/* 1: done; 0: T(G) outgrew the budget (nothing changed); -errno never. */
static int one_group(const struct gclo *w, struct alone *a, uint32_t g, uint32_t budget)
{
	const struct heap_state *s = w->s;
	size_t head = 0, tail = 0;
	uint32_t lo = w->goff[g], hi = w->goff[g + 1];
	int fits = 1;
	if (hi - lo > budget)
		return 0; /* its members alone are over the budget */
	for (uint32_t k = lo; k < hi; k++) {
		uint32_t m = w->pairs[k].obj;
		bitset_set(a->in_g, m);
		if (!bitset_get(a->in_t, m)) {
			bitset_set(a->in_t, m);
			a->queue[tail++] = m;
		}
	}
	while (head < tail && fits) {
		uint32_t o = a->queue[head++];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (bitset_get(a->in_t, t))
				continue;
			if (tail >= budget) {
				fits = 0; /* too big to be worth a walk of its own */
				break;
			}
			bitset_set(a->in_t, t);
			a->queue[tail++] = t;
		}
	}
	if (fits) {
		/* closure_retained on the list: seeds are members of T \ G that a
		 * root or a reachable object outside T holds; what they reach in T
		 * avoiding G stays alive.  The kept objects are marked in a->kept;
		 * their list follows T's in the queue (kept ⊆ T, |T| <= budget + 1
		 * counting the member that may have reached it: 2 (budget + 1)). */
		size_t kh = tail, kt = tail;
		for (size_t i = 0; i < tail; i++) {
			uint32_t x = a->queue[i];
			if (bitset_get(a->in_g, x))
				continue;
			int held = bitset_get(w->rooted, x);
			for (uint32_t e = s->in_off[x]; e < s->in_off[x + 1] && !held; e++) {
				uint32_t y = s->in_src[e];
				held = hs_is_reachable(s, y) && !bitset_get(a->in_t, y);
			}
			if (held) {
				bitset_set(a->kept, x);
				a->queue[kt++] = x;
			}
		}
		while (kh < kt) {
			uint32_t o = a->queue[kh++];
			for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
				uint32_t t = s->out_tgt[e];
				if (bitset_get(a->in_t, t) && !bitset_get(a->in_g, t) &&
				    !bitset_get(a->kept, t)) {
					bitset_set(a->kept, t);
					a->queue[kt++] = t;
				}
			}
		}
		struct closure_metrics d = { 0, 0 }, r = { 0, 0 };
		for (size_t i = 0; i < tail; i++) {
			uint32_t x = a->queue[i];
			uint64_t sz = hs_info(s, x)->size;
			d.count++;
			d.bytes += sz;
			if (!bitset_get(a->kept, x)) {
				r.count++;
				r.bytes += sz;
			}
			if (w->uni)
				uni_set(w->uni, x);
		}
		w->deep[g] = d;
		w->ret[g] = r;
	}
	/* clear what was set: sparse, O(|T|) */
	for (size_t i = 0; i < tail; i++) {
		bitset_clear(a->in_t, a->queue[i]);
		bitset_clear(a->kept, a->queue[i]);
	}
	for (uint32_t k = lo; k < hi; k++)
		bitset_clear(a->in_g, w->pairs[k].obj);
	return fits;
}

struct alones {
	const struct gclo *w;
	uint32_t budget;
	struct alone *per_worker;  /* each worker's scratch, made on its first task */
	uint8_t *fit;              /* [ngroups] 1: computed alone */
};

static int alone_task(void *vctx, uint32_t g, uint32_t worker)
{
	struct alones *a = vctx;
	struct alone *sc = &a->per_worker[worker];
	if (!sc->in_t && alone_alloc(a->w, a->budget, sc))
		return -ENOMEM;
	a->fit[g] = (uint8_t)one_group(a->w, sc, g, a->budget);
	progress_add(progress_here(), 1);
	return 0;
}

/* Every group alone that fits the budget (fit[g] = 1), on the threads;
 * each thread's scratch is about n / 2 bytes. */
static int groups_alone(const struct gclo *w, uint32_t budget, uint8_t *fit)
{
	uint32_t nthreads = w->threads ? w->threads : 1;
	if (nthreads > w->ngroups)
		nthreads = w->ngroups;
	struct alones a = { w, budget, calloc(nthreads ? nthreads : 1, sizeof *a.per_worker), fit };
	if (!a.per_worker)
		return -ENOMEM;
	progress_phase(progress_here(), w->ngroups, "closures of %u groups, each alone", w->ngroups);
	int rc = par_for(nthreads, w->ngroups, alone_task, &a);
	for (uint32_t i = 0; i < nthreads; i++)
		alone_free(&a.per_worker[i]);
	free(a.per_worker);
	return rc;
}

/* The big groups one by one with closure.c (gclo_compute: when there are
 * at most GCLO_FEW of them). */
static int few_big(struct gclo *w, const uint32_t *big, uint32_t nbig)
{
	struct closure_ctx *cc = NULL;
	uint64_t *clo = bitset_alloc(w->n);
	w->in_g = bitset_new(w->n);
	int rc = clo && w->in_g ? closure_ctx_new(&cc, w->s) : -ENOMEM;
	for (uint32_t b = 0; b < nbig && !rc; b++) {
		uint32_t g = big[b];
		for (uint32_t k = w->goff[g]; k < w->goff[g + 1]; k++)
			bitset_set(w->in_g, w->pairs[k].obj);
		rc = closure_transitive(cc, w->in_g, clo, &w->deep[g]);
		if (!rc && w->uni)
			bitset_or(w->uni, clo, w->n);
		if (!rc)
			rc = closure_retained(cc, w->in_g, clo, &w->ret[g]);
		for (uint32_t k = w->goff[g]; k < w->goff[g + 1]; k++)
			bitset_clear(w->in_g, w->pairs[k].obj);
	}
	closure_ctx_free(cc);
	free(clo);
	return rc;
}

/* ---- strongly connected components (Tarjan, iterative) ---- */

/* Components in completion order: a component completes after every
 * component it reaches.  corder lists the objects component by component
 * from the last completed to the first, a topological order (an edge
 * between components goes to a later position), and cstart marks the
 * first position of each.
 *
 * Memory: idx, low, the Tarjan stack (becomes corder), the DFS stack and
 * its edge cursors (touched only as deep as the walk goes): 12 B per
 * object and 8 per level of depth, all but corder freed on return.
 * corder shares the Tarjan stack's array: objects on the stack sit at
 * [0, sp), completed ones are written from the end, at n-1-filled, and
 * sp + filled <= n (an object is on the stack, completed, or not yet
 * visited), so a write never lands on a live stack entry.  A completed
 * object's idx and low are never read again (only objects on the stack
 * are compared). */
static int components(struct gclo *w)
{
	const struct heap_state *s = w->s;
	uint32_t n = w->n, next = 1, sp = 0, csp = 0, filled = 0;
	int rc = -ENOMEM;
	uint32_t *idx = calloc((size_t)n + 1, sizeof *idx); /* 0 = unvisited */
	uint32_t *low = malloc(((size_t)n + 1) * sizeof *low);
	uint32_t *stk = malloc(((size_t)n + 1) * sizeof *stk);   /* Tarjan's stack */
	uint32_t *cs = malloc(((size_t)n + 1) * sizeof *cs);     /* DFS call stack */
	uint32_t *cpos = malloc(((size_t)n + 1) * sizeof *cpos); /* next out-edge */
	uint64_t *on = bitset_new(n);
	w->cstart = bitset_new(n);
	if (!idx || !low || !stk || !cs || !cpos || !on || !w->cstart)
		goto out;
	w->ncomp = w->maxcomp = 0;
	for (uint32_t v0 = 0; v0 < n; v0++) {
		if (idx[v0])
			continue;
		idx[v0] = low[v0] = next++;
		stk[sp++] = v0;
		bitset_set(on, v0);
		cs[csp] = v0;
		cpos[csp++] = s->out_off[v0];
		while (csp) {
			uint32_t v = cs[csp - 1];
			if (cpos[csp - 1] < s->out_off[v + 1]) {
				uint32_t t = s->out_tgt[cpos[csp - 1]++];
				if (!idx[t]) {
					idx[t] = low[t] = next++;
					stk[sp++] = t;
					bitset_set(on, t);
					cs[csp] = t;
					cpos[csp++] = s->out_off[t];
				} else if (bitset_get(on, t) && idx[t] < low[v]) {
					low[v] = idx[t];
				}
				continue;
			}
			csp--;
			if (low[v] == idx[v]) {
				/* v roots a component; its DFS parent's low is at
				 * most idx[parent] < idx[v]: no update to make */
				uint32_t x, size = 0;
				do {
					x = stk[--sp];
					bitset_clear(on, x);
					stk[n - 1 - filled++] = x;
					size++;
				} while (x != v);
				bitset_set(w->cstart, n - filled);
				w->ncomp++;
				if (size > w->maxcomp)
					w->maxcomp = size;
			} else if (csp) {
				uint32_t u = cs[csp - 1];
				if (low[v] < low[u])
					low[u] = low[v];
			}
		}
	}
	w->corder = stk;
	stk = NULL;
	rc = 0;
out:
	free(idx); free(low); free(stk); free(cs); free(cpos);
	bitset_free(on);
	return rc;
}

/* The objects with an out-edge and the rank directory over them. */
static int out_slots(struct gclo *w)
{
	const struct heap_state *s = w->s;
	if (!(w->haso = bitset_new(w->n)))
		return -ENOMEM;
	for (uint32_t x = 0; x < w->n; x++)
		if (s->out_off[x + 1] > s->out_off[x])
			bitset_set(w->haso, x);
	if (!(w->hrank = bitset_rank_dir(w->haso, w->n)))
		return -ENOMEM;
	w->nhaso = w->hrank[bitset_words(w->n)];
	return 0;
}

/* x's slot among the objects with an out-edge (x must have one). */
static inline uint32_t obj_slot(const struct gclo *w, uint32_t x)
{
	return bitset_rank(w->haso, w->hrank, x);
}

/* ---- 64 groups at a time ---- */

/* Bits of the batch's groups that contain x. */
static inline uint64_t own_bits(const struct gclo *w, const struct batch *bt, uint32_t x)
{
	if (w->gof) {
		uint32_t g = w->gof[x], sl = g == NOSLOT ? NOSLOT : bt->slot[g];
		return sl == NOSLOT ? 0 : 1ull << sl;
	}
	uint64_t b = 0;
	for (uint32_t k = w->ooff[x]; k < w->ooff[x + 1]; k++) {
		uint32_t sl = bt->slot[w->olist[k]];
		if (sl != NOSLOT)
			b |= 1ull << sl;
	}
	return b;
}

/* Adds count objects and their bytes to every group of bits.  The
 * batch's groups are its own: no other batch writes their metrics. */
static void add_bits(const struct batch *bt, uint64_t bits, uint64_t count, uint64_t bytes,
		     struct closure_metrics *m)
{
	while (bits) {
		uint32_t b = (uint32_t)__builtin_ctzll(bits);
		bits &= bits - 1;
		m[bt->bgroup[b]].count += count;
		m[bt->bgroup[b]].bytes += bytes;
	}
}

/* One object of sz bytes to the groups of bits, through the sums. */
static inline void sum_word(const struct batch *bt, struct word_sums *ws, uint64_t bits, uint64_t sz,
			    struct closure_metrics *m)
{
	if (!bits)
		return;
	uint32_t k = (uint32_t)((bits * 0x9e3779b97f4a7c15ull) >> 55) & (SUM_SLOTS - 1);
	if (ws->word[k] != bits) {
		add_bits(bt, ws->word[k], ws->count[k], ws->bytes[k], m);
		ws->word[k] = bits;
		ws->count[k] = ws->bytes[k] = 0;
	}
	ws->count[k]++;
	ws->bytes[k] += sz;
}

static void sums_flush(const struct batch *bt, struct word_sums *ws, struct closure_metrics *m)
{
	for (uint32_t k = 0; k < SUM_SLOTS; k++)
		add_bits(bt, ws->word[k], ws->count[k], ws->bytes[k], m);
	memset(ws, 0, sizeof *ws);
}



/* One pass for the (at most 64) groups with a slot, component by
 * component in topological order: every predecessor outside a component
 * is final when the component comes, and inside one (a cycle) reach is
 * shared and alive spreads through a work list (ring, inq) until it
 * settles.  Words are kept (wd) only for objects with an out-edge: an
 * object without one is nobody's predecessor and in no cycle. */
static void batch_pass(const struct gclo *w, const struct batch *bt)
{
	const struct heap_state *s = w->s;
	struct words *wd = bt->wd;
	uint64_t *inq = bt->inq, *incomp = bt->incomp;
	uint32_t *ring = bt->ring;
	for (uint32_t lo = 0, hi; lo < w->n; lo = hi) {
		hi = (uint32_t)bitset_next(w->cstart, w->n, (uint64_t)lo + 1);
		uint64_t r = 0;
		if (hi - lo == 1) {
			uint32_t x = w->corder[lo];
			uint64_t own = own_bits(w, bt, x), a = bitset_get(w->rooted, x) ? ~0ull : 0;
			r = own;
			for (uint32_t e = s->in_off[x]; e < s->in_off[x + 1]; e++) {
				uint32_t p = s->in_src[e];
				if (p == x)
					continue; /* a self-loop adds nothing to a least solution */
				const struct words *pw = &wd[obj_slot(w, p)];
				r |= pw->reach;
				a |= pw->alive;
			}
			a &= ~own;
			if (bitset_get(w->haso, x))
				wd[obj_slot(w, x)] = (struct words){ r, a };
			if (r) {
				uint64_t sz = hs_info(s, x)->size;
				sum_word(bt, bt->deep, r, sz, w->deep);
				sum_word(bt, bt->ret, r & ~a, sz, w->ret);
				if (w->uni)
					uni_set(w->uni, x);
			}
			continue;
		}
		/* a cycle (every member has an out-edge, so a slot): one reach
		 * for all (they reach each other); alive from the inputs from
		 * outside, then spread inside until it settles */
		size_t head = 0, tail = 0, cap = hi - lo;
		for (uint32_t i = lo; i < hi; i++)
			bitset_set(incomp, w->corder[i]);
		for (uint32_t i = lo; i < hi; i++) {
			uint32_t x = w->corder[i];
			uint64_t own = own_bits(w, bt, x), a = bitset_get(w->rooted, x) ? ~0ull : 0;
			r |= own;
			for (uint32_t e = s->in_off[x]; e < s->in_off[x + 1]; e++) {
				uint32_t p = s->in_src[e];
				if (bitset_get(incomp, p))
					continue;
				const struct words *pw = &wd[obj_slot(w, p)];
				r |= pw->reach;
				a |= pw->alive;
			}
			a &= ~own;
			wd[obj_slot(w, x)].alive = a;
			if (a) {
				bitset_set(inq, x);
				ring[tail++ % cap] = x;
			}
		}
		while (head < tail) {
			uint32_t v = ring[head++ % cap];
			uint64_t av = wd[obj_slot(w, v)].alive;
			bitset_clear(inq, v);
			for (uint32_t e = s->out_off[v]; e < s->out_off[v + 1]; e++) {
				uint32_t t = s->out_tgt[e];
				if (!bitset_get(incomp, t))
					continue;
				struct words *tw = &wd[obj_slot(w, t)];
				uint64_t na = tw->alive | (av & ~own_bits(w, bt, t));
				if (na == tw->alive)
					continue;
				tw->alive = na;
				if (!bitset_get(inq, t)) {
					/* at most cap objects are queued at once: the ring
					 * never overwrites a live entry */
					bitset_set(inq, t);
					ring[tail++ % cap] = t;
				}
			}
		}
		for (uint32_t i = lo; i < hi; i++) {
			uint32_t x = w->corder[i];
			struct words *xw = &wd[obj_slot(w, x)];
			bitset_clear(incomp, x);
			xw->reach = r;
			if (!r)
				continue;
			uint64_t sz = hs_info(s, x)->size;
			sum_word(bt, bt->deep, r, sz, w->deep);
			sum_word(bt, bt->ret, r & ~xw->alive, sz, w->ret);
			if (w->uni)
				uni_set(w->uni, x);
		}
	}
	sums_flush(bt, bt->deep, w->deep);
	sums_flush(bt, bt->ret, w->ret);
}

static void batch_free(struct batch *bt)
{
	free(bt->slot);
	free(bt->wd);
	free(bt->ring);
	bitset_free(bt->inq);
	bitset_free(bt->incomp);
	free(bt->deep);
	free(bt->ret);
	memset(bt, 0, sizeof *bt);
}

static int batch_alloc(const struct gclo *w, struct batch *bt)
{
	memset(bt, 0, sizeof *bt);
	bt->slot = malloc(((size_t)w->ngroups + 1) * sizeof *bt->slot);
	bt->ring = malloc(((size_t)w->maxcomp + 1) * sizeof *bt->ring); /* per component */
	bt->wd = malloc(((size_t)w->nhaso + 1) * sizeof *bt->wd);
	bt->inq = bitset_new(w->n);
	bt->incomp = bitset_new(w->n);
	bt->deep = calloc(1, sizeof *bt->deep);
	bt->ret = calloc(1, sizeof *bt->ret);
	if (!bt->slot || !bt->ring || !bt->wd || !bt->inq || !bt->incomp || !bt->deep || !bt->ret) {
		batch_free(bt);
		return -ENOMEM;
	}
	for (uint32_t g = 0; g < w->ngroups; g++)
		bt->slot[g] = NOSLOT;
	return 0;
}

struct batches {
	const struct gclo *w;
	const uint32_t *big;
	uint32_t nbig;
	struct batch *per_worker; /* scratch of each worker, made on its first task */
};

/* Task k: the groups big[64k .. 64k+63]. */
static int batch_task(void *vctx, uint32_t k, uint32_t worker)
{
	struct batches *b = vctx;
	struct batch *bt = &b->per_worker[worker];
	if (!bt->slot && batch_alloc(b->w, bt))
		return -ENOMEM;
	uint32_t b0 = k * 64, nb = b->nbig - b0 < 64 ? b->nbig - b0 : 64;
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t g = b->big[b0 + i];
		bt->slot[g] = i;
		bt->bgroup[i] = g;
		b->w->deep[g] = (struct closure_metrics){ 0, 0 };
		b->w->ret[g] = (struct closure_metrics){ 0, 0 };
	}
	batch_pass(b->w, bt);
	for (uint32_t i = 0; i < nb; i++)
		bt->slot[b->big[b0 + i]] = NOSLOT;
	progress_add(progress_here(), nb);
	return 0;
}

static int batched(struct gclo *w, const uint32_t *big, uint32_t nbig)
{
	int rc = components(w);
	if (!rc)
		rc = out_slots(w);
	if (rc)
		return rc;
	uint32_t ntasks = (nbig + 63) / 64, nthreads = w->threads ? w->threads : 1;
	if (nthreads > ntasks)
		nthreads = ntasks;
	struct batches b = { w, big, nbig, calloc(nthreads ? nthreads : 1, sizeof *b.per_worker) };
	if (!b.per_worker)
		return -ENOMEM;
	progress_phase(progress_here(), nbig, "closures of %u groups, 64 at a time", nbig);
	rc = par_for(nthreads, ntasks, batch_task, &b);
	for (uint32_t i = 0; i < nthreads; i++)
		batch_free(&b.per_worker[i]);
	free(b.per_worker);
	return rc;
}

/* ---- entry ---- */

/* The object -> groups map: gof when the groups are disjoint, else by
 * counting sort into ooff/olist. */
static int object_groups(struct gclo *w)
{
	size_t np = w->goff[w->ngroups];
	if (!(w->gof = malloc(((size_t)w->n + 1) * sizeof *w->gof)))
		return -ENOMEM;
	for (uint32_t x = 0; x < w->n; x++)
		w->gof[x] = NOSLOT;
	int disjoint = 1;
	for (uint32_t g = 0; g < w->ngroups && disjoint; g++)
		for (uint32_t k = w->goff[g]; k < w->goff[g + 1]; k++) {
			uint32_t x = w->pairs[k].obj;
			if (w->gof[x] != NOSLOT) {
				disjoint = 0;
				break;
			}
			w->gof[x] = g;
		}
	if (disjoint)
		return 0;
	free(w->gof);
	w->gof = NULL;
	w->ooff = calloc((size_t)w->n + 2, sizeof *w->ooff);
	w->olist = malloc((np + 1) * sizeof *w->olist);
	if (!w->ooff || !w->olist)
		return -ENOMEM;
	for (size_t i = 0; i < np; i++)
		w->ooff[w->pairs[i].obj + 1]++;
	for (uint32_t x = 0; x < w->n; x++)
		w->ooff[x + 1] += w->ooff[x];
	for (uint32_t g = 0; g < w->ngroups; g++)
		for (uint32_t k = w->goff[g]; k < w->goff[g + 1]; k++)
			w->olist[w->ooff[w->pairs[k].obj]++] = g;
	for (uint32_t x = w->n; x > 0; x--) /* the fill moved each start to the next one's */
		w->ooff[x] = w->ooff[x - 1];
	w->ooff[0] = 0;
	return 0;
}

int gclo_compute(const struct heap_state *s, const struct cls_pair *pairs, size_t np,
		 const struct gclo_opts *o, uint32_t *ngroups, struct closure_metrics **deep,
		 struct closure_metrics **ret, uint64_t *uni)
{
	struct gclo w;
	uint32_t *big = NULL, nbig = 0;
	uint8_t *fit = NULL;
	int rc = -ENOMEM;
	if (!s->has_graph)
		return -EINVAL;
	if (np > UINT32_MAX)
		return -EOVERFLOW;
	memset(&w, 0, sizeof w);
	w.s = s;
	w.n = s->n;
	w.pairs = pairs;
	w.pairs_owner = o ? o->pairs_owner : NULL;
	w.uni = uni;
	w.threads = o ? o->threads : 0;
	uint32_t ng = 0;
	for (size_t i = 0; i < np; i++)
		if (i == 0 || pairs[i].key != pairs[i - 1].key)
			ng++;
	w.ngroups = ng;
	w.goff = malloc(((size_t)ng + 1) * sizeof *w.goff);
	w.deep = calloc((size_t)ng + 1, sizeof *w.deep);
	w.ret = calloc((size_t)ng + 1, sizeof *w.ret);
	w.rooted = bitset_new(w.n);
	uint32_t budget = o && o->budget ? o->budget : w.n / 64 + 64;
	if (budget > w.n)
		budget = w.n; /* T never exceeds n: no group ever stops */
	big = malloc(((size_t)ng + 1) * sizeof *big);
	fit = calloc((size_t)ng + 1, 1);
	if (!w.goff || !w.deep || !w.ret || !w.rooted || !big || !fit)
		goto out;
	for (uint32_t r = 0; r < s->nroots; r++)
		bitset_set(w.rooted, s->roots[r].object);
	ng = 0;
	for (size_t i = 0; i < np; i++)
		if (i == 0 || pairs[i].key != pairs[i - 1].key)
			w.goff[ng++] = (uint32_t)i;
	w.goff[ng] = (uint32_t)np;
	if ((rc = object_groups(&w)))
		goto out;
	rc = -ENOMEM;
	/* A batch pass costs about a sweep of every object and edge and serves
	 * 64 groups, so a group whose T is below ~n/64 objects is cheaper
	 * alone; a group found bigger wasted at most that much. */
	if (!(o && o->all_batched) && (rc = groups_alone(&w, budget, fit)))
		goto out;
	rc = -ENOMEM;
	for (uint32_t g = 0; g < ng; g++) /* in group order, whatever the threads did */
		if (!fit[g])
			big[nbig++] = g;
	if (nbig && nbig <= GCLO_FEW && !(o && o->all_batched)) {
		/* A few big groups: the components and a pass cost about as
		 * much as 5 whole-heap closures (measured on a 4.9 M-object
		 * dump: 0.24 s against 0.05 s per closure), so these go alone,
		 * through closure.c itself: for a T near the whole heap its
		 * bitset sweeps in index order beat a list in BFS order. */
		if ((rc = few_big(&w, big, nbig)))
			goto out;
		nbig = 0;
	}
	if (nbig && w.pairs_owner) {
		/* the passes read gof/ooff/olist only: the pairs (8 bytes per
		 * member) need not sit beside their scratch at the peak */
		buf_free(w.pairs_owner);
		w.pairs = NULL;
	}
	rc = nbig ? batched(&w, big, nbig) : 0;
	if (!rc && o && o->stats)
		*o->stats = (struct gclo_stats){ ng, ng - nbig, nbig, (nbig + 63) / 64, w.ncomp };
out:
	free(big);
	free(fit);
	if (!rc) {
		*ngroups = ng;
		*deep = w.deep;
		*ret = w.ret;
	} else {
		free(w.deep);
		free(w.ret);
	}
	gclo_free(&w);
	return rc;
}

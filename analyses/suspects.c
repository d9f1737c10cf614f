/* suspects.c - see suspects.h. */
#include "analyses/suspects.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/dominators.h"
#include "analyses/parallel.h"

void sus_params_default(struct sus_params *p)
{
	p->big_pct = SUS_DEF_BIG_PCT;
	p->accum_pct = SUS_DEF_ACCUM_PCT;
	p->overhead_pct = SUS_DEF_OVERHEAD_PCT;
	p->empty_min = SUS_DEF_EMPTY_MIN;
	p->top = SUS_DEF_TOP;
}

/* Parent of o in the tree with the virtual root n; UINT32_MAX: none. */
static uint32_t parent_of(uint32_t n, const uint32_t *idom, uint32_t o)
{
	uint32_t d = idom[o];
	if (d == DOM_ROOT)
		return n;
	if (d == DOM_UNREACHABLE || d >= n)
		return UINT32_MAX;
	return d;
}

/* The tree's passes split by parent: task j owns the parents
 * [lo[j], lo[j + 1]) (multiples of 64; the virtual root n in the last).
 * Each task reads every object's parent and writes only its own parents'
 * bits, counts and children, in increasing object order: no atomics, and
 * the same lists for any split (as heap_state_par.c's in-edges).  Each
 * task reads idom whole, so there is one a thread, cut where each gets
 * about as many children (tree_split). */
#define TREE_SLICES 1024   /* tree_split's histogram over the parents' ids */
#define TREE_SAMPLE 64     /* ... of every 64th object's parent */
#define TREE_TASK_MIN 65536 /* objects a task at least: a read of idom whole each */

struct tree_build {
	uint32_t n, ntasks;
	const uint32_t *idom;
	struct sus_domtree *t;
	int fill;            /* 0: the has_kids bits; 1: counts; 2: children */
	uint32_t lo[PAR_MAX_THREADS + 1];
};

/* lo[]: cuts between the tasks' parents where the parents of a sample of
 * the objects divide evenly, so that each task fills about as many
 * children (on the 1 GB dump the second half of the ids parents twice as
 * many as the first). */
static int tree_split(struct tree_build *b)
{
	uint64_t span = ((uint64_t)b->n + 1 + TREE_SLICES - 1) / TREE_SLICES;
	span = (span + 63) & ~(uint64_t)63;
	uint64_t *hist = calloc(TREE_SLICES, sizeof *hist), total = 0;
	if (!hist)
		return -ENOMEM;
	for (uint32_t o = 0; o < b->n; o += TREE_SAMPLE) {
		uint32_t p = parent_of(b->n, b->idom, o);
		if (p != UINT32_MAX) {
			hist[p / span]++;
			total++;
		}
	}
	uint64_t seen = 0;
	uint32_t j = 1;
	b->lo[0] = 0;
	for (uint32_t k = 0; k < TREE_SLICES && j < b->ntasks; k++) {
		seen += hist[k];
		while (j < b->ntasks && seen * b->ntasks >= total * j) {
			/* past n: the word that holds n (the virtual root) */
			uint64_t cut = (k + 1) * span;
			b->lo[j++] = cut > b->n ? b->n & ~(uint32_t)63 : (uint32_t)cut;
		}
	}
	while (j < b->ntasks)
		b->lo[j++] = b->n & ~(uint32_t)63;
	b->lo[b->ntasks] = b->n + 1;
	free(hist);
	return 0;
}

static int tree_task(void *ctx, uint32_t j, uint32_t worker)
{
	(void)worker;
	const struct tree_build *b = ctx;
	struct sus_domtree *t = b->t;
	uint32_t lo = b->lo[j], hi = b->lo[j + 1];
	for (uint32_t o = 0; o < b->n; o++) {
		uint32_t p = parent_of(b->n, b->idom, o);
		if (p < lo || p >= hi) /* UINT32_MAX (no parent) is >= every hi */
			continue;
		if (b->fill == 0)
			bitset_set(t->has_kids, p);
		else if (b->fill == 1)
			t->off[bitset_rank(t->has_kids, t->kdir, p) + 1]++;
		else
			t->kid[t->off[bitset_rank(t->has_kids, t->kdir, p)]++] = o;
	}
	return 0;
}

/* par_for runs one task on the caller's thread, with no thread started */
static int tree_pass(struct tree_build *b, int fill)
{
	b->fill = fill;
	return par_for(b->ntasks, b->ntasks, tree_task, b);
}

int sus_domtree_build(uint32_t n, const uint32_t *idom, uint32_t threads, struct sus_domtree *t)
{
	memset(t, 0, sizeof *t);
	t->n = n;
	struct tree_build b = { .n = n, .ntasks = threads ? threads : 1, .idom = idom, .t = t };
	if (b.ntasks > PAR_MAX_THREADS)
		b.ntasks = PAR_MAX_THREADS;
	if ((uint64_t)b.ntasks * TREE_TASK_MIN > n)
		b.ntasks = n / TREE_TASK_MIN ? n / TREE_TASK_MIN : 1;
	b.lo[b.ntasks] = n + 1; /* one task: every parent */
	if (b.ntasks > 1 && tree_split(&b))
		goto fail;
	t->has_kids = bitset_new((uint64_t)n + 1);
	t->kid = malloc(((size_t)n + 1) * sizeof *t->kid);
	if (!t->has_kids || !t->kid || tree_pass(&b, 0))
		goto fail;
	if (!(t->kdir = bitset_rank_dir(t->has_kids, (uint64_t)n + 1)))
		goto fail;
	uint32_t np = t->kdir[bitset_words((uint64_t)n + 1)];
	if (!(t->off = calloc((size_t)np + 2, sizeof *t->off)))
		goto fail;
	/* counting sort by parent's rank: off[r + 1] counts, then prefix
	 * sums; the fill uses off[r] as a cursor and leaves off[r] = start
	 * of r + 1's range, which the final shift restores */
	if (tree_pass(&b, 1))
		goto fail;
	for (uint32_t r = 0; r < np; r++)
		t->off[r + 1] += t->off[r];
	if (tree_pass(&b, 2))
		goto fail;
	for (uint32_t r = np; r > 0; r--)
		t->off[r] = t->off[r - 1];
	t->off[0] = 0;
	return 0;
fail:
	sus_domtree_free(t);
	return -ENOMEM;
}

void sus_domtree_free(struct sus_domtree *t)
{
	bitset_free(t->has_kids);
	free(t->kdir);
	free(t->off);
	free(t->kid);
	t->has_kids = NULL;
	t->kdir = t->off = t->kid = NULL;
}

uint32_t sus_accumulation_point(const struct sus_domtree *t, const uint64_t *retained,
				uint32_t o, uint32_t accum_pct, uint32_t *depth)
{
	uint32_t steps = 0;
	for (;;) {
		uint32_t best = UINT32_MAX;
		for (uint32_t k = sus_kid_begin(t, o), e = sus_kid_end(t, o); k < e; k++) {
			uint32_t c = t->kid[k];
			if (best == UINT32_MAX || retained[c] > retained[best])
				best = c;
		}
		/* integer form of retained[best] >= accum_pct % of retained[o] */
		if (best == UINT32_MAX || retained[o] == 0 ||
		    (unsigned __int128)retained[best] * 100 <
			    (unsigned __int128)retained[o] * accum_pct)
			break;
		o = best;
		steps++;
	}
	if (depth)
		*depth = steps;
	return o;
}

struct by_ret {
	uint32_t o;
	uint64_t b;
};

static int by_ret_desc(const void *a, const void *b)
{
	const struct by_ret *x = a, *y = b;
	if (x->b != y->b)
		return x->b > y->b ? -1 : 1;
	return x->o < y->o ? -1 : x->o > y->o;
}

uint32_t sus_big_objects(uint32_t n, const uint32_t *idom, const uint64_t *retained,
			 uint64_t min_bytes, uint32_t *out, uint32_t max)
{
	/* few objects qualify (each holds a share of the heap, and they are
	 * disjoint): at most 100 / big_pct of them, so a small array suffices */
	uint32_t cap = 0, cnt = 0;
	struct by_ret *v = NULL;
	for (uint32_t o = 0; o < n; o++) {
		if (idom[o] != DOM_ROOT || retained[o] < min_bytes || retained[o] == 0)
			continue;
		if (cnt == cap) {
			uint32_t nc = cap ? cap * 2 : 16;
			struct by_ret *nv = realloc(v, nc * sizeof *nv);
			if (!nv)
				break; /* keep what we have: a shorter list, not a failure */
			v = nv;
			cap = nc;
		}
		v[cnt++] = (struct by_ret){ o, retained[o] };
	}
	if (cnt)
		qsort(v, cnt, sizeof *v, by_ret_desc);
	uint32_t m = cnt < max ? cnt : max;
	for (uint32_t k = 0; k < m; k++)
		out[k] = v[k].o;
	free(v);
	return m;
}

static uint32_t key_of(const uint32_t *info, const uint32_t *info_key, uint32_t nkeys, uint32_t o)
{
	uint32_t k = info_key[info[o]];
	return k < nkeys ? k : UINT32_MAX;
}

/* One node of the walk: the object and the next child to visit. */
struct walk {
	uint32_t o, next;
};

int sus_accumulated(const struct sus_domtree *t, const uint64_t *retained, const uint32_t *info,
		    const uint32_t *info_key, uint32_t nkeys, const uint8_t *app, uint32_t a, uint32_t *key,
		    uint64_t *count, uint64_t *bytes)
{
	*key = UINT32_MAX;
	*count = *bytes = 0;
	uint64_t *cnt = calloc(nkeys ? nkeys : 1, sizeof *cnt), *top = calloc(nkeys ? nkeys : 1, sizeof *top);
	uint32_t *active = calloc(nkeys ? nkeys : 1, sizeof *active);
	uint32_t cap = 64, depth = 0;
	struct walk *st = malloc(cap * sizeof *st);
	int rc = 0;
	if (!cnt || !top || !active || !st) {
		rc = -ENOMEM;
		goto out;
	}
	st[depth++] = (struct walk){ a, sus_kid_begin(t, a) };
	while (depth) {
		struct walk *w = &st[depth - 1];
		if (w->next == sus_kid_end(t, w->o)) { /* leaving w->o */
			uint32_t k = w->o == a ? UINT32_MAX : key_of(info, info_key, nkeys, w->o);
			if (k != UINT32_MAX)
				active[k]--;
			depth--;
			continue;
		}
		uint32_t c = t->kid[w->next++];
		uint32_t k = key_of(info, info_key, nkeys, c);
		if (k != UINT32_MAX) {
			cnt[k]++;
			if (!active[k]++)
				top[k] += retained[c];
		}
		if (depth == cap) {
			struct walk *ns = realloc(st, (size_t)cap * 2 * sizeof *ns);
			if (!ns) {
				rc = -ENOMEM;
				goto out;
			}
			st = ns;
			cap *= 2;
		}
		st[depth++] = (struct walk){ c, sus_kid_begin(t, c) };
	}
	/* half the fan-out: a map whose entries are its own dominator
	 * children (a linked map: every entry has two referrers) has a few
	 * more children than entries */
	uint64_t need = (sus_kid_end(t, a) - sus_kid_begin(t, a)) / 2;
	if (need < SUS_ACCUM_MIN)
		need = SUS_ACCUM_MIN;
	uint32_t best = UINT32_MAX, best_app = UINT32_MAX;
	for (uint32_t k = 0; k < nkeys; k++) {
		if (cnt[k] < need)
			continue;
		if (best == UINT32_MAX || top[k] > top[best])
			best = k;
		if (app && app[k] && (best_app == UINT32_MAX || top[k] > top[best_app]))
			best_app = k;
	}
	if (best_app != UINT32_MAX && top[best_app] * 2 >= top[best])
		best = best_app;
	if (best != UINT32_MAX) {
		*key = best;
		*count = cnt[best];
		*bytes = top[best];
	}
out:
	free(cnt);
	free(top);
	free(active);
	free(st);
	return rc;
}

int sus_key_retained(const struct sus_domtree *t, const uint64_t *retained, const uint32_t *info,
		     const uint32_t *info_key, uint32_t nkeys, uint64_t *out)
{
	struct frame {
		uint32_t node, cursor;
	};
	uint32_t n = t->n;
	uint32_t *on_path = calloc(nkeys ? nkeys : 1, sizeof *on_path);
	struct frame *st = malloc(((size_t)n + 1) * sizeof *st);
	if (!on_path || !st) {
		free(on_path);
		free(st);
		return -ENOMEM;
	}
	memset(out, 0, (size_t)nkeys * sizeof *out);
	/* iterative preorder walk; on_path[k] = members of key k on the path
	 * from the virtual root to the current node */
	uint32_t d = 0;
	st[0] = (struct frame){ n, sus_kid_begin(t, n) };
	for (;;) {
		struct frame *f = &st[d];
		if (f->cursor < sus_kid_end(t, f->node)) {
			uint32_t c = t->kid[f->cursor++];
			uint32_t k = key_of(info, info_key, nkeys, c);
			if (k != UINT32_MAX && on_path[k]++ == 0)
				out[k] += retained[c];
			st[++d] = (struct frame){ c, sus_kid_begin(t, c) };
			continue;
		}
		if (d == 0)
			break;
		uint32_t k = key_of(info, info_key, nkeys, f->node);
		if (k != UINT32_MAX)
			on_path[k]--;
		d--;
	}
	free(on_path);
	free(st);
	return 0;
}

void sus_survivors(uint32_t n, const uint32_t *birth, const uint32_t *info,
		   const uint32_t *info_key, const uint64_t *info_size, const uint64_t *info_count,
		   uint32_t nkeys, uint32_t start, uint32_t end, uint64_t *bytes_gcs, uint64_t *count)
{
	for (uint32_t o = 0; o < n; o++) {
		uint32_t k = key_of(info, info_key, nkeys, o);
		if (k == UINT32_MAX)
			continue;
		uint64_t first = birth[o] == UINT32_MAX ? 0 : (uint64_t)birth[o] + 1;
		if (first < start)
			first = start;
		if (first > end)
			continue; /* born after the window's last GC began: survived none */
		uint64_t gcs = (uint64_t)end - first + 1;
		bytes_gcs[k] += info_size[info[o]] * gcs;
		count[k] += info_count ? info_count[info[o]] : 1;
	}
}

uint32_t sus_top_k(const uint64_t *v, uint32_t n, uint32_t k, uint32_t *out)
{
	uint32_t m = 0;
	/* insertion into a sorted prefix: k is small (a handful of rows) */
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] == 0)
			continue;
		uint32_t p = m < k ? m : k;
		while (p > 0 && v[out[p - 1]] < v[i])
			p--;
		if (p >= k)
			continue;
		uint32_t last = m < k ? m : k - 1;
		for (uint32_t j = last; j > p; j--)
			out[j] = out[j - 1];
		out[p] = i;
		if (m < k)
			m++;
	}
	return m;
}

int sus_shared(uint32_t nowners, uint64_t group_retained, uint64_t sum_single)
{
	return nowners >= 2 && group_retained > sum_single;
}

int sus_overhead_dominates(uint64_t own_bytes, uint64_t data_bytes, uint32_t overhead_pct)
{
	uint64_t total = own_bytes + data_bytes;
	return total > 0 && (unsigned __int128)own_bytes * 100 >= (unsigned __int128)total * overhead_pct;
}

uint32_t sus_pct(uint64_t v, uint64_t total)
{
	if (!total)
		return 0;
	unsigned __int128 p = (unsigned __int128)v * 100 / total;
	return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

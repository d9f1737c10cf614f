/* rootlabels.c - see rootlabels.h. */
#include "rootlabels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dominators.h"
#include "model/buf.h"

#define UNSET (UINT32_MAX - 2)

/* Growable u32 array. */
struct u32v {
	uint32_t *v;
	uint32_t n;
	uint64_t cap;
};

static int u32v_push(struct u32v *a, uint32_t x)
{
	int rc = array_reserve((void **)&a->v, &a->cap, (uint64_t)a->n + 1, sizeof *a->v);
	if (!rc)
		a->v[a->n++] = x;
	return rc;
}

void rootlabels_free(struct rootlabels *rl)
{
	free(rl->set);
	free(rl->set_off);
	free(rl->set_lab);
	memset(rl, 0, sizeof *rl);
}

/* top[x]: U index of x's ancestor in U (x's own for x in U), RL_NONE for
 * unreachable objects; ulist[u]: the object of U index u. */
static int compute_tops(const struct heap_state *s, const uint32_t *idom, uint32_t *top,
			struct u32v *ulist)
{
	struct u32v stack = { 0 };
	int rc = 0;
	for (uint32_t x = 0; x < s->n && !rc; x++) {
		if (idom[x] == DOM_UNREACHABLE) {
			top[x] = RL_NONE;
		} else if (idom[x] == DOM_ROOT) {
			top[x] = ulist->n;
			rc = u32v_push(ulist, x);
		} else {
			top[x] = UNSET;
		}
	}
	/* Walk up to the first resolved ancestor, then resolve the walk:
	 * every object is pushed once. */
	for (uint32_t x = 0; x < s->n && !rc; x++) {
		uint32_t y = x;
		stack.n = 0;
		while (!rc && top[y] == UNSET) {
			rc = u32v_push(&stack, y);
			y = idom[y];
		}
		while (!rc && stack.n)
			top[stack.v[--stack.n]] = top[y];
	}
	free(stack.v);
	return rc;
}

/* Seeds: the labels of the roots on each U object, as CSR over U. */
static int compute_seeds(const struct heap_state *s, const uint32_t *root_label,
			 const uint32_t *top, uint32_t nu, uint32_t **off_out, uint32_t **lab_out)
{
	uint32_t *off = calloc((size_t)nu + 1, sizeof *off);
	uint32_t *lab = malloc(((size_t)s->nroots + 1) * sizeof *lab);
	uint32_t *fill = calloc((size_t)nu + 1, sizeof *fill);
	if (!off || !lab || !fill) {
		free(off);
		free(lab);
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (root_label[r] != RL_NONE && o < s->n && top[o] != RL_NONE)
			off[top[o] + 1]++;
	}
	for (uint32_t u = 0; u < nu; u++)
		off[u + 1] += off[u];
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object;
		if (root_label[r] != RL_NONE && o < s->n && top[o] != RL_NONE)
			lab[off[top[o]] + fill[top[o]]++] = root_label[r];
	}
	free(fill);
	*off_out = off;
	*lab_out = lab;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Everything the propagation needs. */
struct prop {
	const struct heap_state *s;
	const uint32_t *top, *ulist, *seed_off, *seed_lab;
	uint32_t cap;
	uint32_t *scc;        /* [nu] component of each U object, UNSET while open */
	uint32_t *scc_set;    /* component -> set (grown) */
	struct u32v scc_sets; /* backing of scc_set */
	struct u32v set_off, set_lab;
	uint32_t *mark;       /* per set: last component that used it */
	uint32_t mark_cap;
	struct u32v cand, sets_in;
	uint32_t *tab;        /* open addressing: set ids by content hash, RL_NONE empty */
	uint32_t tab_cap, tab_used;
};

static uint32_t hash_labels(const uint32_t *l, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= l[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

static int same_set(const struct prop *p, uint32_t set, const uint32_t *l, uint32_t n)
{
	uint32_t off = p->set_off.v[set];
	return p->set_off.v[set + 1] - off == n && (!n || !memcmp(p->set_lab.v + off, l, n * sizeof *l));
}

static int tab_grow(struct prop *p)
{
	uint32_t cap = p->tab_cap ? p->tab_cap * 2 : 1024;
	uint32_t *t = malloc((size_t)cap * sizeof *t);
	if (!t)
		return -ENOMEM;
	memset(t, 0xff, (size_t)cap * sizeof *t);
	for (uint32_t k = 0; k < p->tab_cap; k++) {
		uint32_t set = p->tab[k];
		if (set == RL_NONE)
			continue;
		uint32_t off = p->set_off.v[set], n = p->set_off.v[set + 1] - off;
		uint32_t h = hash_labels(p->set_lab.v + off, n) & (cap - 1);
		while (t[h] != RL_NONE)
			h = (h + 1) & (cap - 1);
		t[h] = set;
	}
	free(p->tab);
	p->tab = t;
	p->tab_cap = cap;
	return 0;
}

/* The id of the set l[0..n) (labels, then RL_MANY if capped): an equal
 * set made before, or a new one.  Sets are shared by content, so a heap
 * where most objects have one of a few sets stores a few sets. */
static int intern_set(struct prop *p, const uint32_t *l, uint32_t n, uint32_t *id)
{
	int rc = 0;
	if (2 * (p->tab_used + 1) > p->tab_cap && (rc = tab_grow(p)))
		return rc;
	uint32_t h = hash_labels(l, n) & (p->tab_cap - 1);
	for (; p->tab[h] != RL_NONE; h = (h + 1) & (p->tab_cap - 1)) {
		if (same_set(p, p->tab[h], l, n)) {
			*id = p->tab[h];
			return 0;
		}
	}
	*id = p->set_off.n - 1;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = u32v_push(&p->set_lab, l[i]);
	if (!rc)
		rc = u32v_push(&p->set_off, p->set_lab.n);
	if (!rc) {
		p->tab[h] = *id;
		p->tab_used++;
	}
	return rc;
}

static int ensure_mark(struct prop *p, uint32_t nsets)
{
	if (nsets <= p->mark_cap)
		return 0;
	uint32_t cap = p->mark_cap ? p->mark_cap : 64;
	while (cap < nsets)
		cap *= 2;
	uint32_t *m = realloc(p->mark, (size_t)cap * sizeof *m);
	if (!m)
		return -ENOMEM;
	for (uint32_t k = p->mark_cap; k < cap; k++)
		m[k] = RL_NONE;
	p->mark = m;
	p->mark_cap = cap;
	return 0;
}

/* The set of component c, whose members are members[0..nm): seeds of
 * the members and the finished sets of its predecessors in H. */
static int finish_component(struct prop *p, uint32_t c, const uint32_t *members, uint32_t nm)
{
	const struct heap_state *s = p->s;
	int rc = ensure_mark(p, p->set_off.n), seeded = 0, many = 0;
	p->sets_in.n = 0;
	p->cand.n = 0;
	for (uint32_t i = 0; i < nm && !rc; i++) {
		uint32_t u = members[i], o = p->ulist[u];
		for (uint32_t k = p->seed_off[u]; k < p->seed_off[u + 1] && !rc; k++) {
			seeded = 1;
			rc = u32v_push(&p->cand, p->seed_lab[k]);
		}
		for (uint32_t e = s->in_off[o]; e < s->in_off[o + 1] && !rc; e++) {
			uint32_t v = p->top[s->in_src[e]];
			if (v == RL_NONE || p->scc[v] == c)
				continue;
			uint32_t set = p->scc_set[p->scc[v]];
			if (p->mark[set] == c)
				continue;
			p->mark[set] = c;
			rc = u32v_push(&p->sets_in, set);
		}
	}
	if (rc)
		return rc;
	if (!seeded && p->sets_in.n == 1) {
		p->scc_set[c] = p->sets_in.v[0]; /* shares its only predecessor's set */
		return 0;
	}
	for (uint32_t i = 0; i < p->sets_in.n && !rc; i++) {
		uint32_t set = p->sets_in.v[i];
		for (uint32_t k = p->set_off.v[set]; k < p->set_off.v[set + 1] && !rc; k++) {
			if (p->set_lab.v[k] == RL_MANY)
				many = 1;
			else
				rc = u32v_push(&p->cand, p->set_lab.v[k]);
		}
	}
	if (rc)
		return rc;
	if (p->cand.n > 1)
		qsort(p->cand.v, p->cand.n, sizeof *p->cand.v, cmp_u32);
	uint32_t nd = 0;
	for (uint32_t i = 0; i < p->cand.n; i++) {
		if (!nd || p->cand.v[i] != p->cand.v[nd - 1])
			p->cand.v[nd++] = p->cand.v[i];
	}
	if (nd > p->cap) {
		nd = p->cap;
		many = 1;
	}
	if (many) {
		p->cand.n = nd; /* room: nd <= the candidates pushed */
		if ((rc = u32v_push(&p->cand, RL_MANY)))
			return rc;
		nd++;
	}
	return intern_set(p, p->cand.v, nd, &p->scc_set[c]);
}

/* Iterative Tarjan over H reversed (the successors of U object u are the
 * tops of the heap objects referencing it): components come out with
 * their H-predecessors first, so each is finished as it is emitted. */
static int tarjan(struct prop *p, uint32_t nu)
{
	const struct heap_state *s = p->s;
	uint32_t *index = malloc(((size_t)nu + 1) * sizeof *index);
	uint32_t *low = malloc(((size_t)nu + 1) * sizeof *low);
	uint32_t *fr_u = malloc(((size_t)nu + 1) * sizeof *fr_u);
	uint32_t *fr_e = malloc(((size_t)nu + 1) * sizeof *fr_e);
	uint32_t *stk = malloc(((size_t)nu + 1) * sizeof *stk);
	uint32_t counter = 0, nscc = 0, sp = 0;
	int rc = 0;
	if (!index || !low || !fr_u || !fr_e || !stk) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t u = 0; u < nu; u++) {
		index[u] = UNSET;
		p->scc[u] = UNSET;
	}
	for (uint32_t u0 = 0; u0 < nu && !rc; u0++) {
		if (index[u0] != UNSET)
			continue;
		uint32_t depth = 0;
		index[u0] = low[u0] = counter++;
		stk[sp++] = u0;
		fr_u[0] = u0;
		fr_e[0] = s->in_off[p->ulist[u0]];
		depth = 1;
		while (depth && !rc) {
			uint32_t u = fr_u[depth - 1], o = p->ulist[u];
			if (fr_e[depth - 1] < s->in_off[o + 1]) {
				uint32_t v = p->top[s->in_src[fr_e[depth - 1]++]];
				if (v == RL_NONE || v == u)
					continue;
				if (index[v] == UNSET) {
					index[v] = low[v] = counter++;
					stk[sp++] = v;
					fr_u[depth] = v;
					fr_e[depth] = s->in_off[p->ulist[v]];
					depth++;
				} else if (p->scc[v] == UNSET && index[v] < low[u]) {
					low[u] = index[v]; /* v still on the stack */
				}
				continue;
			}
			depth--;
			if (depth && low[u] < low[fr_u[depth - 1]])
				low[fr_u[depth - 1]] = low[u];
			if (low[u] != index[u])
				continue;
			uint32_t first = sp;
			do {
				first--;
				p->scc[stk[first]] = nscc;
			} while (stk[first] != u);
			if ((rc = u32v_push(&p->scc_sets, 0)))
				break;
			p->scc_set = p->scc_sets.v;
			rc = finish_component(p, nscc, stk + first, sp - first);
			sp = first;
			nscc++;
		}
	}
out:
	free(index);
	free(low);
	free(fr_u);
	free(fr_e);
	free(stk);
	return rc;
}

int rootlabels_indirect(const struct heap_state *s, const uint32_t *root_label,
			const uint32_t *idom, uint32_t cap, struct rootlabels *out)
{
	struct prop p = { 0 };
	struct u32v ulist = { 0 };
	uint32_t *seed_off = NULL, *seed_lab = NULL, *top = NULL;
	int rc = -ENOMEM;
	memset(out, 0, sizeof *out);
	if (!s->has_graph)
		return -EINVAL;
	if (!(top = malloc(((size_t)s->n + 1) * sizeof *top)))
		goto out;
	if ((rc = compute_tops(s, idom, top, &ulist)))
		goto out;
	if ((rc = compute_seeds(s, root_label, top, ulist.n, &seed_off, &seed_lab)))
		goto out;
	p.s = s;
	p.top = top;
	p.ulist = ulist.v;
	p.seed_off = seed_off;
	p.seed_lab = seed_lab;
	p.cap = cap ? cap : 1;
	rc = -ENOMEM;
	if (!(p.scc = malloc(((size_t)ulist.n + 1) * sizeof *p.scc)))
		goto out;
	if ((rc = u32v_push(&p.set_off, 0)))
		goto out;
	if ((rc = tarjan(&p, ulist.n)))
		goto out;
	/* Objects take their top's component's set. */
	for (uint32_t x = 0; x < s->n; x++)
		top[x] = top[x] == RL_NONE ? RL_NONE : p.scc_set[p.scc[top[x]]];
	out->n = s->n;
	out->set = top;
	top = NULL;
	out->nsets = p.set_off.n - 1;
	out->set_off = p.set_off.v;
	out->set_lab = p.set_lab.v;
	p.set_off.v = p.set_lab.v = NULL;
	rc = 0;
out:
	free(top);
	free(ulist.v);
	free(seed_off);
	free(seed_lab);
	free(p.scc);
	free(p.scc_sets.v);
	free(p.set_off.v);
	free(p.set_lab.v);
	free(p.mark);
	free(p.tab);
	free(p.cand.v);
	free(p.sets_in.v);
	return rc;
}

int rootlabels_first(const struct heap_state *s, const uint32_t *root_label, uint32_t *label)
{
	if (!s->has_graph)
		return -EINVAL;
	uint32_t *dist = malloc(((size_t)s->n + 1) * sizeof *dist);
	uint32_t *queue = malloc(((size_t)s->n + 1) * sizeof *queue);
	if (!dist || !queue) {
		free(dist);
		free(queue);
		return -ENOMEM;
	}
	uint32_t head = 0, tail = 0;
	for (uint32_t x = 0; x < s->n; x++) {
		label[x] = RL_NONE;
		dist[x] = RL_NONE;
	}
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t o = s->roots[r].object, l = root_label[r];
		if (l == RL_NONE || o >= s->n)
			continue;
		if (dist[o] == RL_NONE) {
			dist[o] = 0;
			queue[tail++] = o;
		}
		if (l < label[o])
			label[o] = l;
	}
	/* Level by level: every object of level d-1 is dequeued before any of
	 * level d, so an object's label is final before it spreads it. */
	while (head < tail) {
		uint32_t x = queue[head++];
		for (uint32_t e = s->out_off[x]; e < s->out_off[x + 1]; e++) {
			uint32_t y = s->out_tgt[e];
			if (dist[y] == RL_NONE) {
				dist[y] = dist[x] + 1;
				label[y] = label[x];
				queue[tail++] = y;
			} else if (dist[y] == dist[x] + 1 && label[x] < label[y]) {
				label[y] = label[x];
			}
		}
	}
	free(dist);
	free(queue);
	return 0;
}

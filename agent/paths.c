/* paths.c - see paths.h for the algorithm. */
#include "agent/paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void paths_free(struct paths *ps)
{
	free(ps->e);
	free(ps->block_path);
	free(ps->p);
	free(ps->edge_list);
	free(ps->counter_edge);
	free(ps->sem);
	free(ps->phi);
	memset(ps, 0, sizeof(*ps));
}

/* ---- the graph with X ----------------------------------------------------- */

struct u32v {
	uint32_t *a;
	uint32_t n, cap;
};

static int v_push(struct u32v *v, uint32_t x)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 8;
		uint32_t *a = realloc(v->a, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		v->a = a;
		v->cap = cap;
	}
	v->a[v->n++] = x;
	return 0;
}

/* Building state. */
struct bld {
	const struct cfg *g;
	const double *freq;
	struct paths *ps;
	uint32_t *out_first, *out;    /* CSR of out-edges per block, preferred first */
	uint32_t *indeg, *outdeg;     /* pedges in/out of each block (X edges included) */
	struct u32v *pe;              /* [paths] edges of each path while building */
	uint32_t *split_from;
	uint32_t npaths, cap_paths;
	uint32_t *order;              /* blocks in the order they were put on paths */
	uint8_t *allocates;           /* [nblocks] the block has an allocation site */
	uint32_t norder;
};

double paths_edge_freq(const struct cfg *g, const struct pedge *e, const double *freq)
{
	if (e->from == PATHS_X)
		return freq[g->nnormal + e->to];
	if (e->to == PATHS_X)
		return freq[g->nnormal + g->nblocks + e->from];
	return freq[e->cfg_edge];
}

/* The static heuristics (paths.h), higher is more likely. */
static double static_pref(const struct bld *B, const struct pedge *e)
{
	if (e->to == PATHS_X)
		return 1.0;
	const struct cfg *g = B->g;
	double s = 1.0;
	if (g->b[e->to].throws)
		s -= 100.0;
	if (e->from != PATHS_X && g->b[e->to].start_pc <= g->b[e->from].start_pc)
		s += 10.0;
	if (e->cfg_edge != PATHS_NONE && g->e[e->cfg_edge].fall)
		s += 1.0;
	if (B->allocates[e->to])
		s -= 2.0;
	return s;
}

static const struct bld *sort_ctx;
/* The most likely successor first: the higher measured frequency, then
 * (no frequencies, or equal ones) the static heuristics, then cfg order. */
static int pref_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct pedge *ex = &sort_ctx->ps->e[x], *ey = &sort_ctx->ps->e[y];
	if (sort_ctx->freq) {
		double fx = paths_edge_freq(sort_ctx->g, ex, sort_ctx->freq);
		double fy = paths_edge_freq(sort_ctx->g, ey, sort_ctx->freq);
		if (fx != fy)
			return fx > fy ? -1 : 1;
	}
	double px = static_pref(sort_ctx, ex), py = static_pref(sort_ctx, ey);
	if (px != py)
		return px > py ? -1 : 1;
	return x < y ? -1 : x > y; /* stable: cfg order (default before cases) */
}

/* Blocks reachable from the entry and the handlers over normal edges. */
static uint8_t *reachable(const struct cfg *g)
{
	uint8_t *r = calloc(g->nblocks ? g->nblocks : 1, 1);
	uint32_t *stack = malloc((g->nblocks + 1) * sizeof(*stack));
	uint32_t *first = calloc(g->nblocks + 1, sizeof(*first)); /* b's edges: [first[b], first[b + 1]) */
	if (!r || !stack || !first) {
		free(r);
		r = NULL;
		goto out;
	}
	for (uint32_t i = 0; i < g->nnormal; i++) /* edges are sorted by from */
		first[g->e[i].from + 1] = i + 1;
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (first[b + 1] < first[b])
			first[b + 1] = first[b];
	uint32_t sp = 0;
	for (uint32_t b = 0; b < g->nblocks; b++)
		if ((b == 0 || g->b[b].handler) && !r[b]) {
			r[b] = 1;
			stack[sp++] = b;
		}
	while (sp) {
		uint32_t b = stack[--sp];
		for (uint32_t i = first[b]; i < first[b + 1]; i++)
			if (!r[g->e[i].to]) {
				r[g->e[i].to] = 1;
				stack[sp++] = g->e[i].to;
			}
	}
out:
	free(stack);
	free(first);
	return r;
}

static int add_pedge(struct paths *ps, uint32_t from, uint32_t to, uint32_t cfg_edge)
{
	ps->e[ps->nedges++] = (struct pedge){ from, to, cfg_edge, PATHS_NONE, 0, 0 };
	return 0;
}

/* X edges and reachable normal edges, then the out-lists by preference. */
static int make_graph(struct bld *B)
{
	const struct cfg *g = B->g;
	struct paths *ps = B->ps;
	uint8_t *r = reachable(g);
	if (!r)
		return -ENOMEM;
	ps->e = calloc((size_t)g->nnormal + 2u * g->nblocks + 1, sizeof(*ps->e));
	B->out_first = calloc(g->nblocks + 1, sizeof(uint32_t));
	B->indeg = calloc(g->nblocks + 1, sizeof(uint32_t));
	B->outdeg = calloc(g->nblocks + 1, sizeof(uint32_t));
	if (!ps->e || !B->out_first || !B->indeg || !B->outdeg) {
		free(r);
		return -ENOMEM;
	}
	if (g->nblocks)
		add_pedge(ps, PATHS_X, 0, PATHS_NONE);
	for (uint32_t b = 1; b < g->nblocks; b++)
		if (g->b[b].handler)
			add_pedge(ps, PATHS_X, b, PATHS_NONE);
	for (uint32_t i = 0; i < g->nnormal; i++)
		if (r[g->e[i].from])
			add_pedge(ps, g->e[i].from, g->e[i].to, i);
	for (uint32_t b = 0; b < g->nblocks; b++)
		if (r[b] && g->b[b].exit)
			add_pedge(ps, b, PATHS_X, PATHS_NONE);
	free(r);
	for (uint32_t i = 0; i < ps->nedges; i++) {
		if (ps->e[i].from != PATHS_X)
			B->outdeg[ps->e[i].from]++;
		if (ps->e[i].to != PATHS_X)
			B->indeg[ps->e[i].to]++;
	}
	for (uint32_t b = 0; b < g->nblocks; b++)
		B->out_first[b + 1] = B->out_first[b] + B->outdeg[b];
	B->out = malloc((ps->nedges + 1) * sizeof(uint32_t));
	uint32_t *fill = calloc(g->nblocks + 1, sizeof(uint32_t));
	if (!B->out || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ps->nedges; i++)
		if (ps->e[i].from != PATHS_X)
			B->out[B->out_first[ps->e[i].from] + fill[ps->e[i].from]++] = i;
	free(fill);
	B->allocates = calloc(g->nblocks + 1, 1);
	if (!B->allocates)
		return -ENOMEM;
	for (uint32_t k = 0; k < g->nalloc; k++)
		B->allocates[g->site_block[k]] = 1;
	sort_ctx = B; /* qsort has no context argument; paths_build is not reentrant */
	for (uint32_t b = 0; b < g->nblocks; b++)
		qsort(B->out + B->out_first[b], B->outdeg[b], sizeof(uint32_t), pref_cmp);
	return 0;
}

/* ---- path building (§2.1) ----------------------------------------------- */

static uint32_t new_path(struct bld *B, uint32_t split_from)
{
	if (B->npaths == B->cap_paths) {
		uint32_t cap = B->cap_paths ? B->cap_paths * 2 : 16;
		struct u32v *pe = realloc(B->pe, cap * sizeof(*pe));
		if (!pe)
			return PATHS_NONE;
		B->pe = pe;
		uint32_t *sf = realloc(B->split_from, cap * sizeof(*sf));
		if (!sf)
			return PATHS_NONE;
		B->split_from = sf;
		B->cap_paths = cap;
	}
	memset(&B->pe[B->npaths], 0, sizeof(B->pe[0]));
	B->split_from[B->npaths] = split_from;
	return B->npaths++;
}

static int own(struct bld *B, uint32_t p, uint32_t e)
{
	B->ps->e[e].path = p;
	return v_push(&B->pe[p], e);
}

static void assign(struct bld *B, uint32_t p, uint32_t b)
{
	B->ps->block_path[b] = p;
	B->order[B->norder++] = b;
}

/* The most likely edge out of cur that path p may take, or PATHS_NONE. */
static uint32_t pick(const struct bld *B, uint32_t p, uint32_t cur)
{
	const struct paths *ps = B->ps;
	for (uint32_t k = B->out_first[cur]; k < B->out_first[cur + 1]; k++) {
		const struct pedge *e = &ps->e[B->out[k]];
		if (e->path != PATHS_NONE)
			continue;
		if (e->to != PATHS_X && ps->block_path[e->to] != PATHS_NONE &&
		    B->split_from[ps->block_path[e->to]] == p)
			continue; /* never join a loop split off from this path */
		return B->out[k];
	}
	return PATHS_NONE;
}

/* Splits the segment of p after header t (reached again by p's last edge)
 * into a loop path. */
static int split_loop(struct bld *B, uint32_t p, uint32_t t)
{
	struct paths *ps = B->ps;
	uint32_t j = 0;
	while (j < B->pe[p].n && ps->e[B->pe[p].a[j]].to != t)
		j++;
	uint32_t L = new_path(B, p);
	if (L == PATHS_NONE)
		return -ENOMEM;
	struct u32v *pp = &B->pe[p]; /* after new_path: it may move */
	for (uint32_t k = j + 1; k < pp->n; k++) {
		uint32_t e = pp->a[k];
		if (own(B, L, e))
			return -ENOMEM;
		pp = &B->pe[p];
		if (k + 1 < pp->n)
			ps->block_path[ps->e[e].to] = L;
	}
	pp->n = j + 1;
	return 0;
}

/* Grows a new path from edge e0 until it leaves the method or joins. */
static int grow(struct bld *B, uint32_t e0, uint32_t split_from)
{
	struct paths *ps = B->ps;
	uint32_t p = new_path(B, split_from);
	if (p == PATHS_NONE || own(B, p, e0))
		return -ENOMEM;
	uint32_t t = ps->e[e0].to;
	if (t == PATHS_X || ps->block_path[t] != PATHS_NONE)
		return 0;
	assign(B, p, t);
	uint32_t cur = t;
	for (;;) {
		uint32_t e = pick(B, p, cur);
		if (e == PATHS_NONE)
			return 0; /* only its own loops remain: it ends here */
		if (own(B, p, e))
			return -ENOMEM;
		t = ps->e[e].to;
		if (t == PATHS_X)
			return 0;
		if (ps->block_path[t] == PATHS_NONE) {
			assign(B, p, t);
			cur = t;
			continue;
		}
		if (ps->block_path[t] != p)
			return 0; /* join */
		if (split_loop(B, p, t))
			return -ENOMEM;
		cur = t;
	}
}

static int build_all(struct bld *B)
{
	struct paths *ps = B->ps;
	uint32_t wi = 0;
	int rc = 0;
	for (uint32_t x = 0; x < ps->nedges && !rc; x++) {
		if (ps->e[x].from != PATHS_X || ps->e[x].path != PATHS_NONE)
			continue;
		rc = grow(B, x, PATHS_NONE); /* the entry first, then each handler */
		while (!rc && wi < B->norder) {
			uint32_t b = B->order[wi++];
			for (uint32_t k = B->out_first[b]; k < B->out_first[b + 1] && !rc; k++)
				if (ps->e[B->out[k]].path == PATHS_NONE)
					rc = grow(B, B->out[k], PATHS_NONE);
		}
	}
	return rc;
}

static int flatten(struct bld *B)
{
	struct paths *ps = B->ps;
	ps->npaths = B->npaths;
	ps->p = calloc(B->npaths ? B->npaths : 1, sizeof(*ps->p));
	ps->edge_list = malloc((ps->nedges ? ps->nedges : 1) * sizeof(uint32_t));
	if (!ps->p || !ps->edge_list)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint32_t p = 0; p < B->npaths; p++) {
		ps->p[p].first = k;
		ps->p[p].n = B->pe[p].n;
		ps->p[p].split_from = B->split_from[p];
		ps->p[p].counter_edge = PATHS_NONE;
		memcpy(ps->edge_list + k, B->pe[p].a, B->pe[p].n * sizeof(uint32_t));
		k += B->pe[p].n;
	}
	return k == ps->nedges ? 0 : -EINVAL; /* every edge on exactly one path */
}

/* Share counts (§2.2.1) of every path's edges. */
static void share_counts(struct paths *ps)
{
	uint32_t nb = ps->nblocks;
	uint32_t *nbranch = calloc(nb + 1, sizeof(uint32_t)), *njoin = calloc(nb + 1, sizeof(uint32_t));
	if (!nbranch || !njoin)
		goto out;
	/* per block: edges of other paths leaving it (branches) and entering
	 * it (joins); a block is on one path, so one pass serves all paths */
	for (uint32_t i = 0; i < ps->nedges; i++) {
		const struct pedge *e = &ps->e[i];
		if (e->from != PATHS_X && ps->block_path[e->from] != e->path)
			nbranch[e->from]++;
		if (e->to != PATHS_X && ps->block_path[e->to] != e->path)
			njoin[e->to]++;
	}
	/* edge i of a path: 1 + the branches at its blocks from edge i's
	 * target on + the joins at the blocks before it (running sums) */
	for (uint32_t p = 0; p < ps->npaths; p++) {
		const uint32_t *el = ps->edge_list + ps->p[p].first;
		uint32_t n = ps->p[p].n, branches = 0, before_branch = 0, before_join = 0;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t b = ps->e[el[j]].to;
			if (b != PATHS_X && ps->block_path[b] == p)
				branches += nbranch[b];
		}
		for (uint32_t i = 0; i < n; i++) {
			ps->e[el[i]].share = 1 + branches - before_branch + before_join;
			uint32_t b = ps->e[el[i]].to;
			if (b != PATHS_X && ps->block_path[b] == p) {
				before_branch += nbranch[b];
				before_join += njoin[b];
			}
		}
	}
out:
	free(nbranch);
	free(njoin);
}

int paths_build(const struct cfg *g, const double *freq, struct paths *ps)
{
	memset(ps, 0, sizeof(*ps));
	if ((uint64_t)(g->nblocks + 1) * (g->nsites ? g->nsites : 1) > PATHS_MAX_CELLS)
		return -E2BIG;
	struct bld B = { .g = g, .freq = freq, .ps = ps };
	ps->nblocks = g->nblocks;
	ps->nsites = g->nsites;
	int rc = -ENOMEM;
	ps->block_path = malloc((g->nblocks ? g->nblocks : 1) * sizeof(uint32_t));
	B.order = malloc((g->nblocks ? g->nblocks : 1) * sizeof(uint32_t));
	if (!ps->block_path || !B.order)
		goto out;
	memset(ps->block_path, 0xff, (g->nblocks ? g->nblocks : 1) * sizeof(uint32_t));
	if ((rc = make_graph(&B)) || (rc = build_all(&B)) || (rc = flatten(&B)))
		goto out;
	share_counts(ps);
out:
	for (uint32_t p = 0; p < B.npaths; p++)
		free(B.pe[p].a);
	free(B.pe);
	free(B.split_from);
	free(B.order);
	free(B.out_first);
	free(B.out);
	free(B.indeg);
	free(B.outdeg);
	free(B.allocates);
	if (rc)
		paths_free(ps);
	return rc;
}

uint32_t paths_find_edge(const struct paths *ps, uint32_t from, uint32_t to)
{
	for (uint32_t i = 0; i < ps->nedges; i++)
		if (ps->e[i].from == from && ps->e[i].to == to)
			return i;
	return PATHS_NONE;
}

/* ---- counters (§2.2) -------------------------------------------------- */

/* How much instrumenting an edge costs: 0 inline, 1 a snippet between two
 * blocks, 2 a stub at the end of the code plus a goto. */
static int place_cost(const struct paths *ps, const struct cfg *g, const uint32_t *indeg, const uint32_t *outdeg,
		      uint32_t i)
{
	const struct pedge *e = &ps->e[i];
	if (e->from == PATHS_X)
		return e->to == 0 || indeg[e->to] == 1 ? 0 : 2;
	if (e->to == PATHS_X || outdeg[e->from] == 1 || indeg[e->to] == 1)
		return 0;
	return g->e[e->cfg_edge].fall ? 1 : 2;
}

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

static int uf_union(uint32_t *up, uint32_t a, uint32_t b)
{
	a = uf_find(up, a);
	b = uf_find(up, b);
	if (a == b)
		return 0;
	up[a] = b;
	return 1;
}

int paths_place(struct paths *ps, const struct cfg *g, const uint32_t *forced)
{
	uint32_t nb = ps->nblocks, X = nb;
	uint32_t *indeg = calloc(nb + 1, sizeof(uint32_t)), *outdeg = calloc(nb + 1, sizeof(uint32_t));
	uint32_t *up = malloc((nb + 1) * sizeof(uint32_t));
	uint8_t *designated = calloc(ps->nedges + 1, 1);
	int rc = -ENOMEM;
	if (!indeg || !outdeg || !up || !designated)
		goto out;
	for (uint32_t i = 0; i < ps->nedges; i++) {
		if (ps->e[i].from != PATHS_X)
			outdeg[ps->e[i].from]++;
		if (ps->e[i].to != PATHS_X)
			indeg[ps->e[i].to]++;
	}
	for (uint32_t p = 0; p < ps->npaths; p++) {
		uint32_t best = PATHS_NONE;
		int best_cost = 0;
		for (uint32_t k = 0; k < ps->p[p].n; k++) {
			uint32_t i = ps->edge_list[ps->p[p].first + k];
			int cost = place_cost(ps, g, indeg, outdeg, i);
			if (best == PATHS_NONE || ps->e[i].share < ps->e[best].share ||
			    (ps->e[i].share == ps->e[best].share && cost < best_cost)) {
				best = i;
				best_cost = cost;
			}
		}
		if (forced && forced[p] != PATHS_NONE)
			best = forced[p];
		ps->p[p].counter_edge = best;
		designated[best] = 1;
	}
	/* Kruskal: the other edges form the tree, unless they close a cycle */
	for (uint32_t x = 0; x <= nb; x++)
		up[x] = x;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < ps->nedges; i++) {
			if (designated[i] != (pass == 1))
				continue;
			uint32_t a = ps->e[i].from == PATHS_X ? X : ps->e[i].from;
			uint32_t b = ps->e[i].to == PATHS_X ? X : ps->e[i].to;
			ps->e[i].counter = !uf_union(up, a, b);
		}
	}
	for (uint32_t p = 0; p < ps->npaths; p++)
		if (ps->p[p].counter_edge != PATHS_NONE && !ps->e[ps->p[p].counter_edge].counter)
			ps->p[p].counter_edge = PATHS_NONE;
	rc = 0;
out:
	free(indeg);
	free(outdeg);
	free(up);
	free(designated);
	return rc;
}

uint32_t *paths_components(uint32_t nb, uint32_t nedges, const struct pedge *e)
{
	uint32_t *comp = malloc((nb + 1) * sizeof(uint32_t));
	uint32_t *index = malloc((nb + 1) * sizeof(uint32_t)), *low = malloc((nb + 1) * sizeof(uint32_t));
	uint32_t *first = calloc(nb + 2, sizeof(uint32_t)), *out = malloc((nedges + 1) * sizeof(uint32_t));
	uint32_t *stack = malloc((nb + 1) * sizeof(uint32_t)); /* Tarjan's stack */
	uint32_t *call = malloc((nb + 1) * sizeof(uint32_t));  /* the DFS: block */
	uint32_t *next = malloc((nb + 1) * sizeof(uint32_t));  /* and its next out-edge */
	uint8_t *on = calloc(nb + 1, 1);
	if (!comp || !index || !low || !first || !out || !stack || !call || !next || !on) {
		free(comp);
		comp = NULL;
		goto out;
	}
	/* out-edges between blocks, CSR */
	for (uint32_t i = 0; i < nedges; i++)
		if (e[i].from != PATHS_X && e[i].to != PATHS_X)
			first[e[i].from + 1]++;
	for (uint32_t b = 0; b < nb; b++)
		first[b + 1] += first[b];
	for (uint32_t b = 0; b < nb; b++)
		next[b] = first[b];
	for (uint32_t i = 0; i < nedges; i++)
		if (e[i].from != PATHS_X && e[i].to != PATHS_X)
			out[next[e[i].from]++] = e[i].to;
	for (uint32_t b = 0; b < nb; b++)
		index[b] = UINT32_MAX;
	uint32_t counter = 0, sp = 0, ncomp = 0;
	for (uint32_t root = 0; root < nb; root++) {
		if (index[root] != UINT32_MAX)
			continue;
		uint32_t depth = 0;
		call[depth] = root;
		next[depth++] = first[root];
		index[root] = low[root] = counter++;
		stack[sp++] = root;
		on[root] = 1;
		while (depth) {
			uint32_t v = call[depth - 1];
			if (next[depth - 1] < first[v + 1]) {
				uint32_t w = out[next[depth - 1]++];
				if (index[w] == UINT32_MAX) {
					index[w] = low[w] = counter++;
					stack[sp++] = w;
					on[w] = 1;
					call[depth] = w;
					next[depth++] = first[w];
				} else if (on[w] && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			if (low[v] == index[v]) { /* v roots a component */
				uint32_t w;
				do {
					w = stack[--sp];
					on[w] = 0;
					comp[w] = ncomp;
				} while (w != v);
				ncomp++;
			}
			if (--depth && low[v] < low[call[depth - 1]])
				low[call[depth - 1]] = low[v];
		}
	}
	comp[nb] = ncomp; /* X: a component of its own */
out:
	free(index);
	free(low);
	free(first);
	free(out);
	free(stack);
	free(call);
	free(next);
	free(on);
	return comp;
}

int paths_semantics(struct paths *ps, const struct cfg *g)
{
	uint32_t nb = ps->nblocks, ns = ps->nsites, X = nb;
	size_t cells = (size_t)(nb + 1) * (ns ? ns : 1);
	int32_t *phi = calloc(cells, sizeof(int32_t));
	int32_t *alloc = calloc(cells, sizeof(int32_t));
	uint8_t *seen = calloc(nb + 1, 1);
	uint32_t *queue = malloc((nb + 1) * sizeof(uint32_t));
	/* tree adjacency: CSR over both directions */
	uint32_t *adj_first = calloc(nb + 2, sizeof(uint32_t));
	uint32_t *adj = malloc((2 * (size_t)ps->nedges + 1) * sizeof(uint32_t));
	int rc = -ENOMEM;
	if (!phi || !alloc || !seen || !queue || !adj_first || !adj)
		goto out;
	for (uint32_t s = 0; s < ns; s++)
		alloc[(size_t)g->site_block[s] * ns + s]++;
#define NODE(v) ((v) == PATHS_X ? X : (v))
	for (uint32_t i = 0; i < ps->nedges; i++)
		if (!ps->e[i].counter) {
			adj_first[NODE(ps->e[i].from) + 1]++;
			adj_first[NODE(ps->e[i].to) + 1]++;
		}
	for (uint32_t x = 0; x <= nb; x++)
		adj_first[x + 1] += adj_first[x];
	{
		uint32_t *fill = calloc(nb + 1, sizeof(uint32_t));
		if (!fill)
			goto out;
		for (uint32_t i = 0; i < ps->nedges; i++)
			if (!ps->e[i].counter) {
				uint32_t a = NODE(ps->e[i].from), b = NODE(ps->e[i].to);
				adj[adj_first[a] + fill[a]++] = i;
				adj[adj_first[b] + fill[b]++] = i;
			}
		free(fill);
	}
	/* phi by BFS from X over the tree */
	uint32_t qh = 0, qt = 0;
	queue[qt++] = X;
	seen[X] = 1;
	while (qh < qt) {
		uint32_t u = queue[qh++];
		for (uint32_t k = adj_first[u]; k < adj_first[u + 1]; k++) {
			const struct pedge *e = &ps->e[adj[k]];
			uint32_t a = NODE(e->from), b = NODE(e->to);
			uint32_t v = a == u ? b : a;
			if (seen[v])
				continue;
			seen[v] = 1;
			queue[qt++] = v;
			int32_t *pv = phi + (size_t)v * ns, *pu = phi + (size_t)u * ns;
			if (v == b) /* forward: phi(b) = phi(a) + alloc(b) */
				for (uint32_t s = 0; s < ns; s++)
					pv[s] = pu[s] + (b == X ? 0 : alloc[(size_t)b * ns + s]);
			else /* backward: phi(a) = phi(b) - alloc(b) */
				for (uint32_t s = 0; s < ns; s++)
					pv[s] = pu[s] - (u == X ? 0 : alloc[(size_t)u * ns + s]);
		}
	}
	/* every node on a path must be in the tree */
	rc = -EINVAL;
	for (uint32_t b = 0; b < nb; b++)
		if (ps->block_path[b] != PATHS_NONE && !seen[b])
			goto out;
	rc = -ENOMEM;
	uint32_t nc = 0;
	for (uint32_t i = 0; i < ps->nedges; i++)
		nc += ps->e[i].counter;
	free(ps->counter_edge);
	free(ps->sem);
	ps->counter_edge = malloc((nc ? nc : 1) * sizeof(uint32_t));
	ps->sem = malloc((nc ? (size_t)nc : 1) * (ns ? ns : 1) * sizeof(int32_t));
	ps->ncounters = 0;
	if (!ps->counter_edge || !ps->sem)
		goto out;
	for (uint32_t i = 0; i < ps->nedges; i++) {
		if (!ps->e[i].counter)
			continue;
		uint32_t a = NODE(ps->e[i].from), b = NODE(ps->e[i].to);
		int32_t *S = ps->sem + (size_t)ps->ncounters * ns;
		int empty = 1;
		for (uint32_t s = 0; s < ns; s++) {
			S[s] = phi[(size_t)a * ns + s] + (b == X ? 0 : alloc[(size_t)b * ns + s]) - phi[(size_t)b * ns + s];
			empty &= S[s] == 0;
		}
		if (empty) { /* traversing it changes no count: dropped */
			ps->e[i].counter = 0;
			uint32_t p = ps->e[i].path;
			if (ps->p[p].counter_edge == i)
				ps->p[p].counter_edge = PATHS_NONE;
			continue;
		}
		ps->counter_edge[ps->ncounters++] = i;
	}
#undef NODE
	free(ps->phi);
	ps->phi = phi; /* kept: exception corrections (instrument.c) */
	phi = NULL;
	rc = 0;
out:
	free(phi);
	free(alloc);
	free(seen);
	free(queue);
	free(adj_first);
	free(adj);
	return rc;
}

int paths_plan(const struct cfg *g, const double *freq, struct paths *ps)
{
	int rc = paths_build(g, freq, ps);
	if (!rc)
		rc = paths_place(ps, g, NULL);
	if (!rc)
		rc = paths_semantics(ps, g);
	if (rc)
		paths_free(ps);
	return rc;
}

/* cfg.c - see cfg.h. */
#include "agent/cfg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void cfg_free(struct cfg *g)
{
	free(g->b);
	free(g->e);
	free(g->site_pc);
	free(g->site_block);
	memset(g, 0, sizeof(*g));
}

static void *dup_array(const void *a, size_t n, size_t size)
{
	void *d = malloc((n ? n : 1) * size);
	if (d && n)
		memcpy(d, a, n * size);
	return d;
}

int cfg_copy(const struct cfg *src, struct cfg *dst)
{
	memset(dst, 0, sizeof(*dst));
	dst->nblocks = src->nblocks;
	dst->nedges = dst->cap_edges = src->nedges;
	dst->nnormal = src->nnormal;
	dst->nsites = dst->cap_sites = src->nsites;
	dst->nalloc = src->nalloc;
	dst->b = dup_array(src->b, src->nblocks, sizeof(*src->b));
	dst->e = dup_array(src->e, src->nedges, sizeof(*src->e));
	dst->site_pc = dup_array(src->site_pc, src->nsites, sizeof(*src->site_pc));
	dst->site_block = dup_array(src->site_block, src->nsites, sizeof(*src->site_block));
	if (dst->b && dst->e && dst->site_pc && dst->site_block)
		return 0;
	cfg_free(dst);
	return -ENOMEM;
}

int cfg_init(struct cfg *g, uint32_t nblocks)
{
	memset(g, 0, sizeof(*g));
	g->nblocks = nblocks;
	g->b = calloc(nblocks ? nblocks : 1, sizeof(*g->b));
	if (!g->b)
		return -ENOMEM;
	for (uint32_t i = 0; i < nblocks; i++)
		g->b[i].start_pc = i;
	return 0;
}

int cfg_add_edge(struct cfg *g, uint32_t from, uint32_t to, enum cfg_edge_kind kind, int fall)
{
	if (g->nedges == g->cap_edges) {
		uint32_t cap = g->cap_edges ? g->cap_edges * 2 : 16;
		struct cfg_edge *e = realloc(g->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		g->e = e;
		g->cap_edges = cap;
	}
	g->e[g->nedges++] = (struct cfg_edge){ from, to, (uint8_t)kind, (uint8_t)(fall != 0), (uint8_t)(fall == 0) };
	return 0;
}

int cfg_add_site(struct cfg *g, uint32_t block, uint32_t pc)
{
	if (g->nsites == g->cap_sites) {
		uint32_t cap = g->cap_sites ? g->cap_sites * 2 : 16;
		uint32_t *a = realloc(g->site_pc, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		g->site_pc = a;
		uint32_t *b = realloc(g->site_block, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		g->site_block = b;
		g->cap_sites = cap;
	}
	g->site_pc[g->nsites] = pc;
	g->site_block[g->nsites++] = block;
	return 0;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct cfg_edge *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Sorts (normal edges first, by from, to) and merges duplicates. */
int cfg_finish(struct cfg *g)
{
	if (g->nedges)
		qsort(g->e, g->nedges, sizeof(*g->e), edge_cmp);
	uint32_t k = 0;
	for (uint32_t i = 0; i < g->nedges; i++) {
		if (k && !edge_cmp(&g->e[k - 1], &g->e[i])) {
			g->e[k - 1].fall |= g->e[i].fall;
			g->e[k - 1].jump |= g->e[i].jump;
			continue;
		}
		g->e[k++] = g->e[i];
	}
	g->nedges = k;
	g->nalloc = g->nsites;
	g->nnormal = 0;
	while (g->nnormal < k && g->e[g->nnormal].kind == CFG_NORMAL)
		g->nnormal++;
	return 0;
}

/* Instruction index of each bytecode offset (UINT32_MAX inside one). */
static uint32_t *pc_index(const struct cf_insn *v, uint32_t n, uint32_t len)
{
	uint32_t *m = malloc(((size_t)len + 1) * sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0xff, ((size_t)len + 1) * sizeof(*m));
	for (uint32_t i = 0; i < n; i++)
		m[v[i].pc] = i;
	m[len] = n;
	return m;
}

static uint32_t target_of(const struct cf_insn *in, uint32_t t)
{
	return in->targets ? in->targets[t] : in->target0;
}

/* Marks the leaders; returns 0 or -EINVAL/-ENOTSUP. */
static int mark_leaders(const struct cf_insn *v, uint32_t n, const struct cf_code *k, const uint32_t *pci,
			uint8_t *lead)
{
	lead[0] = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].kind == IK_JSR)
			return -ENOTSUP;
		for (uint32_t t = 0; t < v[i].ntargets; t++)
			lead[pci[target_of(&v[i], t)]] = 1;
		if (v[i].kind != IK_PLAIN && i + 1 < n)
			lead[i + 1] = 1;
	}
	for (uint32_t x = 0; x < k->nexc; x++) {
		const struct cf_exc *e = &k->exc[x];
		if (e->start >= k->len || e->end > k->len || e->handler >= k->len || pci[e->start] == UINT32_MAX ||
		    pci[e->end] == UINT32_MAX || pci[e->handler] == UINT32_MAX)
			return -EINVAL;
		lead[pci[e->start]] = lead[pci[e->handler]] = 1;
		if (e->end < k->len)
			lead[pci[e->end]] = 1;
	}
	return 0;
}

static int add_block_edges(struct cfg *g, const struct cf_insn *v, const uint32_t *blk_of, const uint32_t *pci,
			   uint32_t b)
{
	const struct cf_insn *last = &v[g->b[b].end - 1];
	int rc = 0;
	switch (last->kind) {
	case IK_RETURN:
	case IK_THROW:
		g->b[b].exit = 1;
		g->b[b].throws = last->kind == IK_THROW;
		return 0;
	case IK_PLAIN:
	case IK_COND:
		if (b + 1 >= g->nblocks)
			return -EINVAL; /* falls off the end of the code */
		rc = cfg_add_edge(g, b, b + 1, CFG_NORMAL, 1);
		break;
	default:
		break;
	}
	for (uint32_t t = 0; t < last->ntargets && !rc; t++)
		rc = cfg_add_edge(g, b, blk_of[pci[target_of(last, t)]], CFG_NORMAL, 0);
	return rc;
}

int cfg_build(const struct cf_insn *v, uint32_t n, const struct cf_code *k, struct cfg *g)
{
	memset(g, 0, sizeof(*g));
	if (!n)
		return -EINVAL;
	uint32_t *pci = pc_index(v, n, k->len);
	uint8_t *lead = calloc(n, 1);
	uint32_t *blk_of = malloc(n * sizeof(*blk_of));
	int rc = -ENOMEM;
	if (!pci || !lead || !blk_of)
		goto out;
	if ((rc = mark_leaders(v, n, k, pci, lead)))
		goto out;
	uint32_t nb = 0;
	for (uint32_t i = 0; i < n; i++)
		nb += lead[i];
	if ((rc = cfg_init(g, nb)))
		goto out;
	for (uint32_t i = 0, b = UINT32_MAX; i < n; i++) {
		if (lead[i]) {
			b = b == UINT32_MAX ? 0 : b + 1;
			g->b[b].first = i;
			g->b[b].start_pc = v[i].pc;
		}
		g->b[b].end = i + 1;
		blk_of[i] = b;
		if (v[i].site && (rc = cfg_add_site(g, b, v[i].pc)))
			goto out;
	}
	for (uint32_t b = 0; b < nb; b++)
		if ((rc = add_block_edges(g, v, blk_of, pci, b)))
			goto out;
	for (uint32_t x = 0; x < k->nexc; x++) {
		uint32_t lo = blk_of[pci[k->exc[x].start]];
		uint32_t hi = k->exc[x].end < k->len ? blk_of[pci[k->exc[x].end]] : nb;
		uint32_t h = blk_of[pci[k->exc[x].handler]];
		g->b[h].handler = 1;
		for (uint32_t b = lo; b < hi; b++)
			if ((rc = cfg_add_edge(g, b, h, CFG_EXC, 0)))
				goto out;
	}
	rc = cfg_finish(g);
out:
	free(pci);
	free(lead);
	free(blk_of);
	if (rc)
		cfg_free(g);
	return rc;
}

/* loops.c - see loops.h. */
#include "agent/loops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { OP_ICONST_0 = 0x03, OP_ISTORE = 0x36, OP_ASTORE = 0x3a, OP_ISTORE_0 = 0x3b, OP_ASTORE_3 = 0x4e,
       OP_IINC = 0x84, OP_GOTO = 0xa7, OP_WIDE = 0xc4, OP_GOTO_W = 0xc8 };

/* What instruction i does to the locals: 0 nothing; 1 stores into slots
 * [*slot, *slot + *width); 2 iinc of *slot by *inc. */
static int local_write(const struct cf_insn *in, const uint8_t *code, uint32_t *slot, uint32_t *width, int32_t *inc)
{
	const uint8_t *p = code + in->pc;
	uint8_t op = in->op;
	*width = 1;
	*inc = 0;
	if (op >= OP_ISTORE && op <= OP_ASTORE) {
		*slot = p[1];
		*width = op == 0x37 || op == 0x39 ? 2 : 1; /* lstore, dstore */
		return 1;
	}
	if (op >= OP_ISTORE_0 && op <= OP_ASTORE_3) {
		uint32_t kind = (uint32_t)(op - OP_ISTORE_0) / 4; /* i l f d a */
		*slot = (uint32_t)(op - OP_ISTORE_0) % 4;
		*width = kind == 1 || kind == 3 ? 2 : 1;
		return 1;
	}
	if (op == OP_IINC) {
		*slot = p[1];
		*inc = (int8_t)p[2];
		return 2;
	}
	if (op == OP_WIDE) {
		uint8_t op2 = p[1];
		*slot = (uint32_t)(p[2] << 8 | p[3]);
		if (op2 == OP_IINC) {
			*inc = (int16_t)(p[4] << 8 | p[5]);
			return 2;
		}
		if (op2 >= OP_ISTORE && op2 <= OP_ASTORE) {
			*width = op2 == 0x37 || op2 == 0x39 ? 2 : 1;
			return 1;
		}
	}
	return 0;
}

/* Whether instruction i stores an int into `var` (istore, istore_n, wide istore). */
static int is_istore(const struct cf_insn *in, const uint8_t *code, uint32_t var)
{
	const uint8_t *p = code + in->pc;
	if (in->op == OP_ISTORE)
		return p[1] == var;
	if (in->op >= OP_ISTORE_0 && in->op <= OP_ISTORE_0 + 3)
		return (uint32_t)(in->op - OP_ISTORE_0) == var;
	return in->op == OP_WIDE && p[1] == OP_ISTORE && (uint32_t)(p[2] << 8 | p[3]) == var;
}

int trip_frame_entry(const struct cf_frame *f, uint32_t slot)
{
	uint32_t s = 0;
	for (uint32_t i = 0; i < f->nlocals; i++) {
		uint32_t w = cf_vtype_slots(&f->locals[i]);
		if (slot == s)
			return (int)i;
		if (slot < s + w)
			return -2;
		s += w;
	}
	return -1;
}

/* Normal-edge predecessors as CSR: pred[first[b] .. first[b + 1]);
 * successors: g->e[succ[b] .. succ[b + 1]) (cfg_finish sorts the normal
 * edges by their block). */
struct preds {
	uint32_t *first, *pred;
	uint32_t *succ;
};

static int preds_build(const struct cfg *g, struct preds *p)
{
	p->first = calloc(g->nblocks + 2, sizeof(uint32_t));
	p->pred = malloc((g->nnormal + 1) * sizeof(uint32_t));
	p->succ = calloc(g->nblocks + 1, sizeof(uint32_t));
	if (!p->first || !p->pred || !p->succ)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nnormal; i++)
		p->succ[g->e[i].from + 1]++;
	for (uint32_t b = 0; b < g->nblocks; b++)
		p->succ[b + 1] += p->succ[b];
	for (uint32_t i = 0; i < g->nnormal; i++)
		p->first[g->e[i].to + 2]++;
	for (uint32_t b = 0; b < g->nblocks; b++)
		p->first[b + 2] += p->first[b + 1];
	for (uint32_t i = 0; i < g->nnormal; i++)
		p->pred[p->first[g->e[i].to + 1]++] = g->e[i].from;
	return 0;
}

/* The latch's loop variable when block b ends `iinc var 1; goto h`
 * (*head = h), else TRIP_NONE. */
static uint32_t latch_var(const struct cfg *g, const struct cf_insn *v, const uint8_t *code, uint32_t b,
			  uint32_t *head)
{
	const struct cfg_block *bl = &g->b[b];
	if (bl->end - bl->first < 2)
		return TRIP_NONE;
	const struct cf_insn *go = &v[bl->end - 1], *inc = &v[bl->end - 2];
	if (go->op != OP_GOTO && go->op != OP_GOTO_W)
		return TRIP_NONE;
	uint32_t slot, width;
	int32_t by;
	if (local_write(inc, code, &slot, &width, &by) != 2 || by != 1)
		return TRIP_NONE;
	for (uint32_t h = 0; h < g->nblocks; h++)
		if (g->b[h].start_pc == go->target0) {
			*head = h;
			return slot;
		}
	return TRIP_NONE;
}

/* Whether entry block p sets var to 0 last: `iconst_0; istore var`, then
 * perhaps a goto. */
static int entry_zeroes(const struct cfg *g, const struct cf_insn *v, const uint8_t *code, uint32_t p, uint32_t var)
{
	const struct cfg_block *bl = &g->b[p];
	uint32_t last = bl->end - 1;
	if (v[last].op == OP_GOTO || v[last].op == OP_GOTO_W)
		last--;
	return last > bl->first && last < bl->end && is_istore(&v[last], code, var) &&
	       v[last - 1].op == OP_ICONST_0;
}

/* Scratch space for one candidate. */
struct cand {
	uint8_t *in;               /* [nblocks] */
	uint32_t *stack;           /* [nblocks] */
	uint32_t size;
};

/* Marks the natural loop of latch -> head into c->in; returns its size. */
static uint32_t natural_loop(const struct preds *pr, uint32_t nblocks, uint32_t head, uint32_t latch,
			     struct cand *c)
{
	memset(c->in, 0, nblocks);
	c->in[head] = 1;
	uint32_t sp = 0, size = 1;
	if (!c->in[latch]) {
		c->in[latch] = 1;
		c->stack[sp++] = latch;
		size++;
	}
	while (sp) {
		uint32_t b = c->stack[--sp];
		for (uint32_t j = pr->first[b]; j < pr->first[b + 1]; j++) {
			uint32_t p = pr->pred[j];
			if (!c->in[p]) {
				c->in[p] = 1;
				c->stack[sp++] = p;
				size++;
			}
		}
	}
	return size;
}

/* Whether block w is entered from the loop (c->in) by a block other than b. */
static int entered_from_loop(const struct preds *pr, const struct cand *c, uint32_t w, uint32_t b)
{
	for (uint32_t j = pr->first[w]; j < pr->first[w + 1]; j++)
		if (pr->pred[j] != b && c->in[pr->pred[j]])
			return 1;
	return 0;
}

/* Adds to the loop the blocks a `break` leaves it through: a block
 * entered from the loop only, whose one successor is another exit target
 * of the loop (javac: the break's code, then a goto to the code after the
 * loop).  That target is then entered from the loop only, and the add at
 * its start sees the loop variable unchanged.  Returns the blocks added. */
static uint32_t absorb_breaks(const struct cfg *g, const struct preds *pr, struct cand *c)
{
	uint32_t added = 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t b = 0; b < g->nblocks; b++) {
			if (c->in[b] || g->b[b].handler || g->b[b].exit || pr->first[b] == pr->first[b + 1] ||
			    pr->succ[b + 1] - pr->succ[b] != 1)
				continue;
			int inside = 1;
			for (uint32_t j = pr->first[b]; j < pr->first[b + 1] && inside; j++)
				inside = c->in[pr->pred[j]];
			uint32_t w = g->e[pr->succ[b]].to;
			if (inside && !c->in[w] && entered_from_loop(pr, c, w, b)) {
				c->in[b] = 1;
				added++;
				changed = 1;
			}
		}
	}
	return added;
}

/* Whether the loop (c->in) of latch -> head with variable var qualifies
 * (loops.h), exits aside. */
static int loop_ok(const struct cfg *g, const struct cf_insn *v, const struct cf_code *k, const struct preds *pr,
		   const struct cand *c, uint32_t head, uint32_t latch, uint32_t var, const struct cf_frame *frames,
		   uint32_t nframes, int need_frames)
{
	if (head == 0 || head == latch)
		return 0;
	int entries = 0;
	for (uint32_t j = pr->first[head]; j < pr->first[head + 1]; j++) {
		uint32_t p = pr->pred[j];
		if (c->in[p]) {
			if (p != latch)
				return 0; /* a second back edge */
			continue;
		}
		if (pr->succ[p + 1] - pr->succ[p] != 1 || !entry_zeroes(g, v, k->code, p, var))
			return 0;
		entries++;
	}
	if (!entries)
		return 0;
	for (uint32_t b = 0; b < g->nblocks; b++) {
		if (!c->in[b])
			continue;
		const struct cfg_block *bl = &g->b[b];
		if (bl->exit || bl->handler)
			return 0;
		if (b != head)
			for (uint32_t j = pr->first[b]; j < pr->first[b + 1]; j++)
				if (!c->in[pr->pred[j]])
					return 0; /* entered in the middle */
		for (uint32_t i = bl->first; i < bl->end; i++) {
			uint32_t slot, width;
			int32_t by;
			int w = local_write(&v[i], k->code, &slot, &width, &by);
			if (w && slot <= var && var < slot + width && !(b == latch && i == bl->end - 2))
				return 0;
			for (uint32_t e = 0; e < k->nexc; e++)
				if (v[i].pc >= k->exc[e].start && v[i].pc < k->exc[e].end)
					return 0; /* a handler of the method covers it */
		}
		if (need_frames) {
			const struct cf_frame *f = cf_frame_at(frames, nframes, bl->start_pc);
			int at = f ? trip_frame_entry(f, var) : 0;
			if (f && (at < 0 || f->locals[at].tag != VT_INTEGER))
				return 0;
			if (!f && b == head)
				return 0;
		}
	}
	return 1;
}

/* Whether block p, outside the loop, may enter exit target t with var
 * set to 0 first (loops.h): p's one successor is t, reached by a goto or
 * by falling through, and t's frame f has no value in var (its
 * verifier-checked code reads none before writing one). */
static int zero_pred_ok(const struct cfg *g, const struct preds *pr, const struct cf_insn *v, uint32_t p,
			const struct cf_frame *f, uint32_t var)
{
	int at = f ? trip_frame_entry(f, var) : -2;
	if (at == -2 || (at >= 0 && f->locals[at].tag != VT_TOP) || pr->succ[p + 1] - pr->succ[p] != 1)
		return 0;
	const struct cf_insn *last = &v[g->b[p].end - 1];
	return last->kind == IK_PLAIN || last->kind == IK_GOTO;
}

/* Collects the loop's exit targets into ex (returns how many, or -1 if
 * one disqualifies the loop), and the blocks outside the loop that enter
 * one into zp (*nz of them; room for one per normal edge). */
static int32_t loop_exits(const struct cfg *g, const struct preds *pr, const struct cand *c, const struct cf_insn *v,
			  const struct cf_frame *frames, uint32_t nframes, int need_frames, uint32_t var, uint32_t *ex,
			  uint32_t *zp, uint32_t *nz)
{
	int32_t n = 0;
	*nz = 0;
	for (uint32_t i = 0; i < g->nedges; i++) {
		const struct cfg_edge *e = &g->e[i];
		if (!c->in[e->from] || c->in[e->to])
			continue;
		if (e->kind != CFG_NORMAL)
			return -1;
		int seen = 0;
		for (int32_t j = 0; j < n && !seen; j++)
			seen = ex[j] == e->to;
		if (seen)
			continue;
		if (g->b[e->to].handler)
			return -1;
		const struct cf_frame *f = need_frames ? cf_frame_at(frames, nframes, g->b[e->to].start_pc) : NULL;
		if (need_frames && (!f || trip_frame_entry(f, var) == -2))
			return -1;
		for (uint32_t j = pr->first[e->to]; j < pr->first[e->to + 1]; j++) {
			uint32_t p = pr->pred[j];
			if (c->in[p])
				continue;
			if (!zero_pred_ok(g, pr, v, p, f, var))
				return -1; /* reached from elsewhere with var live */
			zp[(*nz)++] = p;
		}
		ex[n++] = e->to;
	}
	return n ? n : -1;
}

struct found {
	uint32_t head, latch, var, size;
	uint32_t exit_first, nexits;
	uint32_t zero_first, nzero;
	uint8_t *in;
};

/* Whether candidate f can be kept beside the kept loops (out): no shared
 * block, and no block that sets one's variable to 0 inside another
 * (whose add at an exit target it shares would then see 0). */
static int clashes(const struct found *f, const uint32_t *zp, const struct trip_loops *out, uint32_t nb)
{
	for (uint32_t b = 0; b < nb; b++)
		if (f->in[b] && out->loop_of[b] != TRIP_NONE)
			return 1;
	for (uint32_t z = 0; z < f->nzero; z++)
		if (out->loop_of[zp[f->zero_first + z]] != TRIP_NONE)
			return 1;
	for (uint32_t l = 0; l < out->n; l++)
		for (uint32_t z = 0; z < out->l[l].nzero; z++)
			if (f->in[out->zero[out->l[l].zero_first + z]])
				return 1;
	return 0;
}

static int found_cmp(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->latch < y->latch ? -1 : x->latch > y->latch;
}

int trip_loops_find(const struct cfg *g, const struct cf_insn *v, const struct cf_code *k,
		    const struct cf_frame *frames, uint32_t nframes, int need_frames, struct trip_loops *out)
{
	memset(out, 0, sizeof(*out));
	uint32_t nb = g->nblocks;
	struct preds pr = { 0 };
	struct cand c = { 0 };
	struct found *fd = NULL;
	uint32_t nfd = 0, nex = 0, *ex = NULL, nzp = 0, *zp = NULL;
	int rc = preds_build(g, &pr);
	c.in = malloc(nb + 1);
	c.stack = malloc((nb + 1) * sizeof(uint32_t));
	out->loop_of = malloc((nb + 1) * sizeof(uint32_t));
	if (rc || !c.in || !c.stack || !out->loop_of)
		goto nomem;
	for (uint32_t b = 0; b < nb; b++)
		out->loop_of[b] = TRIP_NONE;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t head, var = latch_var(g, v, k->code, b, &head);
		if (var == TRIP_NONE)
			continue;
		uint32_t size = natural_loop(&pr, nb, head, b, &c);
		size += absorb_breaks(g, &pr, &c);
		if (!loop_ok(g, v, k, &pr, &c, head, b, var, frames, nframes, need_frames))
			continue;
		uint32_t *grown = realloc(ex, (nex + nb + 1) * sizeof(uint32_t));
		if (grown)
			ex = grown;
		uint32_t *zgrown = realloc(zp, (nzp + g->nnormal + 1) * sizeof(uint32_t));
		if (zgrown)
			zp = zgrown;
		struct found *f2 = realloc(fd, (nfd + 1) * sizeof(*fd));
		if (f2)
			fd = f2;
		if (!grown || !zgrown || !f2)
			goto nomem;
		uint32_t nz;
		int32_t ne = loop_exits(g, &pr, &c, v, frames, nframes, need_frames, var, ex + nex, zp + nzp, &nz);
		if (ne < 0)
			continue;
		uint8_t *in = malloc(nb + 1);
		if (!in)
			goto nomem;
		memcpy(in, c.in, nb);
		fd[nfd++] = (struct found){ head, b, var, size, nex, (uint32_t)ne, nzp, nz, in };
		nex += (uint32_t)ne;
		nzp += nz;
	}
	/* inner loops first; a loop sharing a block with a kept one is dropped */
	if (nfd)
		qsort(fd, nfd, sizeof(*fd), found_cmp);
	out->l = malloc((nfd + 1) * sizeof(*out->l));
	out->exit = malloc((nex + 1) * sizeof(uint32_t));
	out->zero = malloc((nzp + 1) * sizeof(uint32_t));
	if (!out->l || !out->exit || !out->zero)
		goto nomem;
	uint32_t kept_ex = 0, kept_z = 0;
	for (uint32_t i = 0; i < nfd; i++) {
		if (clashes(&fd[i], zp, out, nb))
			continue;
		for (uint32_t b = 0; b < nb; b++)
			if (fd[i].in[b])
				out->loop_of[b] = out->n;
		memcpy(out->exit + kept_ex, ex + fd[i].exit_first, fd[i].nexits * sizeof(uint32_t));
		memcpy(out->zero + kept_z, zp + fd[i].zero_first, fd[i].nzero * sizeof(uint32_t));
		out->l[out->n++] = (struct trip_loop){ fd[i].head, fd[i].latch, fd[i].var, kept_ex, fd[i].nexits,
						       kept_z, fd[i].nzero };
		kept_ex += fd[i].nexits;
		kept_z += fd[i].nzero;
	}
	goto done;
nomem:
	rc = -ENOMEM;
	trip_loops_free(out);
done:
	for (uint32_t i = 0; i < nfd; i++)
		free(fd[i].in);
	free(fd);
	free(ex);
	free(zp);
	free(c.in);
	free(c.stack);
	free(pr.first);
	free(pr.pred);
	free(pr.succ);
	return rc;
}

void trip_loops_free(struct trip_loops *t)
{
	free(t->l);
	free(t->exit);
	free(t->zero);
	free(t->loop_of);
	memset(t, 0, sizeof(*t));
}

void trip_count_read(struct trip_count *t, uint64_t packed)
{
	uint64_t growth = packed - t->last; /* modulo 2^64 */
	t->turns += growth & 0xffffffffu;
	t->adds += growth >> 32;
	t->last = packed;
}

/* instrument.c - see instrument.h. */
#include "agent/instrument.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cfg.h"
#include "agent/classfile.h"
#include "agent/loops.h"
#include "agent/paths.h"
#include "agent/suid.h"

#define SNIP_LEN 11u             /* plain increment */
#define SNIP_LEN_ATOMIC 9u       /* getstatic c; index; invokestatic inc */
#define EXTRA_STACK 6u           /* arrayref index arrayref index long */
#define NOT_SET UINT32_MAX

/* Snippets: FT placed before an instruction, passed by falling through
 * only; LABEL placed before it, where branches to it land; STUB after the
 * code; TRIP a counted loop's add at an exit target (sink->trip), after
 * the labels, where it is the last thing before the instruction. */
enum { SN_FT = 0, SN_LABEL = 1, SN_STUB = 2, SN_TRIP = 3 };

/* One counter snippet. */
struct snip {
	uint8_t kind;
	uint32_t var;        /* TRIP: the loop variable */
	uint32_t insn;       /* FT/LABEL: placed before it; STUB: jumps to it */
	uint32_t counter;    /* global counter index */
	uint32_t frame_insn; /* a branch lands on it: copy this insn's frame; NOT_SET none */
	uint8_t zero;        /* FT/LABEL: `iconst_0; istore var` instead of an
			      * increment (a counted loop's exit target entered
			      * from outside the loop, loops.h) */
	uint8_t entry;       /* FT at instruction 0: `invokestatic
			      * heapfs/Threads.e()V` instead of an increment,
			      * before everything else (sink->threads) */
	uint32_t pos;        /* new offset */
	uint32_t seq;        /* creation order (stable sort) */
};

/* A branch (or, insn == NOT_SET, an exception handler entry) that now
 * lands on a snippet instead of old_pc. */
struct retarget {
	uint32_t insn, old_pc, snip;
};

struct rw {
	struct cf_class *c;
	struct cf_member *m;
	struct cf_code *k;
	struct cf_insn *v;
	uint32_t n;
	uint32_t *pci;          /* [len + 1] old offset -> insn index */
	struct snip *s;
	uint32_t ns;
	uint32_t *ord;          /* snippets in layout order */
	struct retarget *rt;
	uint32_t nrt;
	uint32_t *ipos;         /* [n + 1] new offset of each insn; [n] end of the original part */
	uint32_t *fpos;         /* [n] new offset of the first snippet before it (or the insn) */
	uint32_t *jt;           /* [n] where branches to the insn land */
	uint32_t len;           /* new code length */
	uint16_t fieldref;      /* heapfs/Counters.c */
	uint16_t methodref;     /* heapfs/Counters.inc, atomic increments; 0 plain */
	uint16_t entryref;      /* heapfs/Threads.e (sink->threads); 0 none */
	uint32_t snip_len;      /* SNIP_LEN or SNIP_LEN_ATOMIC */
	uint32_t tail_len;      /* bytes to be appended after the code (handlers) */
	uint32_t ntrip;         /* TRIP snippets among s */
	struct cf_frame *old_frames; /* the method's frames, complete (rw_old_frames) */
	int old_frames_ready;
	uint32_t *ctx_id;       /* [n] or NULL: an application call into the JDK
				 * (sink->caller), emitted between `getstatic
				 * heapfs/Threads.c; istore ctx_var; push ID;
				 * putstatic c` and `iload ctx_var; putstatic c`;
				 * 0 none */
	uint16_t ctxref;        /* heapfs/Threads.c:I (sink->caller) */
	uint32_t ctx_var;       /* the local saving the caller's context */
	uint16_t *inl_ref;      /* [n] or NULL: an invoke emitted as aconst_null +
				 * the same invoke of this Methodref (a clone,
				 * counter inlining); 0 none */
};

static void rw_free(struct rw *r)
{
	free(r->pci);
	free(r->s);
	free(r->ord);
	free(r->rt);
	free(r->ipos);
	free(r->fpos);
	free(r->jt);
	free(r->inl_ref);
	free(r->ctx_id);
}

static int add_snip(struct rw *r, uint8_t kind, uint32_t insn, uint32_t counter, uint32_t frame_insn)
{
	struct snip *s = realloc(r->s, (r->ns + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	r->s = s;
	s[r->ns] = (struct snip){ .kind = kind, .insn = insn, .counter = counter, .frame_insn = frame_insn, .seq = r->ns };
	r->ns++;
	r->ntrip += kind == SN_TRIP;
	return 0;
}

static int add_retarget(struct rw *r, uint32_t insn, uint32_t old_pc)
{
	struct retarget *t = realloc(r->rt, (r->nrt + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	r->rt = t;
	t[r->nrt++] = (struct retarget){ insn, old_pc, r->ns - 1 };
	return 0;
}

/* ---- placement ---------------------------------------------------------- */

/* Snippets (and retargets) for the counter on pedge e. */
static int place(struct rw *r, const struct cfg *g, const struct paths *ps, const uint32_t *indeg,
		 const uint32_t *outdeg, uint32_t e, uint32_t counter, uint64_t *stubs)
{
	const struct pedge *pe = &ps->e[e];
	if (pe->from == PATHS_X && pe->to == 0)
		return add_snip(r, SN_FT, 0, counter, NOT_SET);
	if (pe->from == PATHS_X) { /* a handler */
		const struct cfg_block *h = &g->b[pe->to];
		if (indeg[pe->to] == 1)
			return add_snip(r, SN_LABEL, h->first, counter, NOT_SET);
		(*stubs)++;
		return add_snip(r, SN_STUB, h->first, counter, h->first) || add_retarget(r, NOT_SET, h->start_pc);
	}
	const struct cfg_block *u = &g->b[pe->from];
	uint32_t last = u->end - 1;
	if (pe->to == PATHS_X)
		return add_snip(r, SN_LABEL, last, counter, NOT_SET);
	const struct cfg_block *v = &g->b[pe->to];
	const struct cfg_edge *ce = &g->e[pe->cfg_edge];
	uint8_t kind = r->v[last].kind;
	if (outdeg[pe->from] == 1 && kind == IK_GOTO)
		return add_snip(r, SN_LABEL, last, counter, NOT_SET);
	if (outdeg[pe->from] == 1 && kind == IK_PLAIN)
		return add_snip(r, SN_FT, v->first, counter, NOT_SET);
	if (outdeg[pe->from] != 1 && indeg[pe->to] == 1)
		return add_snip(r, SN_LABEL, v->first, counter, NOT_SET);
	if (ce->fall) { /* between u and v; u's branch to v lands on it too */
		if (!ce->jump)
			return add_snip(r, SN_FT, v->first, counter, NOT_SET);
		return add_snip(r, SN_FT, v->first, counter, v->first) || add_retarget(r, last, v->start_pc);
	}
	(*stubs)++;
	return add_snip(r, SN_STUB, v->first, counter, v->first) || add_retarget(r, last, v->start_pc);
}

/* ---- layout ------------------------------------------------------------- */

static struct rw *ord_ctx;
static int ord_cmp(const void *a, const void *b)
{
	const struct snip *x = &ord_ctx->s[*(const uint32_t *)a], *y = &ord_ctx->s[*(const uint32_t *)b];
	int sx = x->kind == SN_STUB, sy = y->kind == SN_STUB;
	if (sx != sy)
		return sx - sy;
	if (!sx && x->insn != y->insn)
		return x->insn < y->insn ? -1 : 1;
	if (!sx && x->kind != y->kind)
		return x->kind - y->kind; /* fall-through snippets before labels */
	if (x->entry != y->entry)
		return y->entry - x->entry; /* the entry call first */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint32_t new_insn_len(const struct cf_insn *in, uint32_t pos)
{
	if (in->kind != IK_SWITCH)
		return in->len;
	uint32_t oldpad = ((in->pc + 4) & ~3u) - in->pc - 1;
	uint32_t newpad = ((pos + 4) & ~3u) - pos - 1;
	return in->len - oldpad + newpad;
}

/* Length of instruction i laid out at pos: a call redirected to a clone
 * takes one more byte (its aconst_null). */
/* `istore var` or `iload var` (2 bytes, wide: 4). */
static uint32_t var_len(uint32_t var)
{
	return var < 256 ? 2u : 4u;
}

/* The caller-context code around a call into the JDK (rw.ctx_id): before
 * it getstatic, istore, sipush|ldc_w, putstatic; after it iload, putstatic. */
static uint32_t ctx_pre_len(uint32_t var)
{
	return 9u + var_len(var);
}

static uint32_t ctx_post_len(uint32_t var)
{
	return 3u + var_len(var);
}

static uint32_t insn_len(const struct rw *r, uint32_t i, uint32_t pos)
{
	uint32_t ctx = r->ctx_id && r->ctx_id[i] ? ctx_pre_len(r->ctx_var) + ctx_post_len(r->ctx_var) : 0u;
	return new_insn_len(&r->v[i], pos) + (r->inl_ref && r->inl_ref[i] ? 1u : 0u) + ctx;
}

/* A counted loop's add (sink->trip):
 *     iload v; ifeq END; getstatic c; sipush|ldc_w INDEX; dup2; laload;
 *     iload v; i2l; ladd; ldc2_w 1L<<32; ladd; lastore; END:
 * (iload is wide for v > 255). */
static uint32_t trip_len(uint32_t var)
{
	return var < 256 ? 22u : 26u;
}

/* `iconst_0; istore var` (istore_<n>, istore, or wide istore). */
static uint32_t zero_len(uint32_t var)
{
	return var < 4 ? 2u : var < 256 ? 3u : 5u;
}

static uint32_t snip_len(const struct rw *r, const struct snip *s)
{
	return s->kind == SN_TRIP ? trip_len(s->var) : s->zero ? zero_len(s->var) : s->entry ? 3u : r->snip_len;
}

/* Offsets of everything; repeats until the switch paddings settle. */
static int layout(struct rw *r)
{
	for (int round = 0; round < 16; round++) {
		uint32_t pos = 0, si = 0;
		int changed = 0;
		for (uint32_t i = 0; i < r->n; i++) {
			uint32_t jt = NOT_SET;
			r->fpos[i] = pos;
			while (si < r->ns && r->s[r->ord[si]].kind != SN_STUB && r->s[r->ord[si]].insn == i) {
				struct snip *s = &r->s[r->ord[si++]];
				if ((s->kind == SN_LABEL || s->kind == SN_TRIP) && jt == NOT_SET)
					jt = pos;
				s->pos = pos;
				pos += snip_len(r, s);
			}
			changed |= r->ipos[i] != pos;
			r->ipos[i] = pos;
			r->jt[i] = jt == NOT_SET ? pos : jt;
			pos += insn_len(r, i, pos);
		}
		r->ipos[r->n] = pos;
		for (; si < r->ns; si++) {
			r->s[r->ord[si]].pos = pos;
			pos += r->snip_len + 5; /* snippet + goto_w */
		}
		r->len = pos;
		if (!changed && round > 0)
			return pos + r->tail_len > 65535 ? -E2BIG : 0;
	}
	return -EINVAL;
}

/* Where a branch of insn i to old offset pc lands now. */
static uint32_t resolve(const struct rw *r, uint32_t i, uint32_t pc)
{
	for (uint32_t t = 0; t < r->nrt; t++)
		if (r->rt[t].insn == i && r->rt[t].old_pc == pc)
			return r->s[r->rt[t].snip].pos;
	return r->jt[r->pci[pc]];
}

/* ---- emitting ----------------------------------------------------------- */

static void put2(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put4(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get2(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int32_t get4(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* sipush|ldc_w counter at p (3 bytes). */
static int emit_index(struct rw *r, uint8_t *p, uint32_t counter)
{
	if (counter < 32768) {
		p[0] = 0x11; /* sipush */
		put2(p + 1, counter);
		return 0;
	}
	uint16_t ci = cf_cp_integer(r->c, (int32_t)counter);
	if (!ci)
		return -E2BIG;
	p[0] = 0x13; /* ldc_w */
	put2(p + 1, ci);
	return 0;
}

static int emit_snip(struct rw *r, uint8_t *p, uint32_t counter)
{
	p[0] = 0xb2; /* getstatic */
	put2(p + 1, r->fieldref);
	if (r->methodref) {
		p[6] = 0xb8; /* invokestatic heapfs/Counters.inc([JI)V */
		put2(p + 7, r->methodref);
		return emit_index(r, p + 3, counter);
	}
	if (emit_index(r, p + 3, counter))
		return -E2BIG;
	p[6] = 0x5c; /* dup2 */
	p[7] = 0x2f; /* laload */
	p[8] = 0x0a; /* lconst_1 */
	p[9] = 0x61; /* ladd */
	p[10] = 0x50; /* lastore */
	return 0;
}

/* iload var at p (2 bytes, or wide: 4); returns its length. */
static uint32_t emit_iload(uint8_t *p, uint32_t var)
{
	if (var < 256) {
		p[0] = 0x15; /* iload */
		p[1] = (uint8_t)var;
		return 2;
	}
	p[0] = 0xc4; /* wide */
	p[1] = 0x15;
	put2(p + 2, var);
	return 4;
}

/* A counted loop's add at p (trip_len bytes; see there). */
static int emit_trip(struct rw *r, uint8_t *p, const struct snip *s)
{
	uint16_t k32 = cf_cp_long(r->c, (int64_t)1 << 32);
	if (!k32)
		return -E2BIG;
	uint32_t len = trip_len(s->var), at = emit_iload(p, s->var);
	p[at] = 0x99; /* ifeq END */
	put2(p + at + 1, len - at);
	at += 3;
	p[at] = 0xb2; /* getstatic */
	put2(p + at + 1, r->fieldref);
	if (emit_index(r, p + at + 3, s->counter))
		return -E2BIG;
	at += 6;
	p[at++] = 0x5c; /* dup2 */
	p[at++] = 0x2f; /* laload */
	at += emit_iload(p + at, s->var);
	p[at++] = 0x85; /* i2l */
	p[at++] = 0x61; /* ladd */
	p[at] = 0x14; /* ldc2_w */
	put2(p + at + 1, k32);
	at += 3;
	p[at++] = 0x61; /* ladd */
	p[at++] = 0x50; /* lastore */
	return at == len ? 0 : -EINVAL;
}

static void emit_zero(uint8_t *p, uint32_t var)
{
	p[0] = 0x03; /* iconst_0 */
	if (var < 4) {
		p[1] = (uint8_t)(0x3b + var); /* istore_<n> */
	} else if (var < 256) {
		p[1] = 0x36; /* istore */
		p[2] = (uint8_t)var;
	} else {
		p[1] = 0xc4; /* wide */
		p[2] = 0x36;
		put2(p + 3, var);
	}
}

/* istore (0x36) or iload (0x15) of var at p; returns its length. */
static uint32_t emit_var(uint8_t *p, uint8_t op, uint32_t var)
{
	if (var < 256) {
		p[0] = op;
		p[1] = (uint8_t)var;
		return 2;
	}
	p[0] = 0xc4; /* wide */
	p[1] = op;
	put2(p + 2, var);
	return 4;
}

static int emit_call(struct rw *r, uint8_t *p, uint32_t i, uint32_t at);

/* Instruction i; a call into the JDK from application code between the
 * caller-context code (rw.ctx_id), which leaves the stack as it was:
 * the JDK's counting reads heapfs.Threads.c, and the caller's own
 * context comes back when the call returns (a callback from the JDK
 * into the application that calls the JDK again leaves it as found). */
static int emit_insn(struct rw *r, uint8_t *out, uint32_t i)
{
	if (!r->ctx_id || !r->ctx_id[i])
		return emit_call(r, out + r->ipos[i], i, r->ipos[i]);
	uint8_t *p = out + r->ipos[i];
	p[0] = 0xb2; /* getstatic c */
	put2(p + 1, r->ctxref);
	uint32_t at = 3 + emit_var(p + 3, 0x36, r->ctx_var);
	if (emit_index(r, p + at, r->ctx_id[i]))
		return -E2BIG;
	p[at + 3] = 0xb3; /* putstatic c */
	put2(p + at + 4, r->ctxref);
	at += 6;
	uint32_t len = insn_len(r, i, r->ipos[i]) - ctx_pre_len(r->ctx_var) - ctx_post_len(r->ctx_var);
	int rc = emit_call(r, p + at, i, r->ipos[i] + at);
	at += len;
	at += emit_var(p + at, 0x15, r->ctx_var);
	p[at] = 0xb3; /* putstatic c */
	put2(p + at + 1, r->ctxref);
	return rc;
}

/* Instruction i itself at p (new offset at). */
static int emit_call(struct rw *r, uint8_t *p, uint32_t i, uint32_t at)
{
	const struct cf_insn *in = &r->v[i];
	const uint8_t *old = r->k->code + in->pc;
	if (in->kind == IK_COND || (in->kind == IK_GOTO && in->op == 167)) {
		int64_t off = (int64_t)resolve(r, i, in->target0) - at;
		if (off < -32768 || off > 32767)
			return -E2BIG;
		p[0] = in->op;
		put2(p + 1, (uint32_t)off);
		return 0;
	}
	if (in->kind == IK_GOTO) { /* goto_w */
		p[0] = in->op;
		put4(p + 1, (uint32_t)((int64_t)resolve(r, i, in->target0) - at));
		return 0;
	}
	if (r->inl_ref && r->inl_ref[i]) { /* the marker argument, then the clone */
		p[0] = 0x01; /* aconst_null */
		p[1] = in->op;
		put2(p + 2, r->inl_ref[i]);
		return 0;
	}
	if (in->kind != IK_SWITCH) {
		memcpy(p, old, in->len);
		return 0;
	}
	uint32_t ob = ((in->pc + 4) & ~3u) - in->pc, nb = ((at + 4) & ~3u) - at;
	/* padding: the original's bytes where the switch keeps its alignment
	 * (JVMS 6.5 asks only that they pad; a class may have nonzero ones,
	 * and a relayout must give the class back byte for byte), else 0 */
	if (nb == ob)
		memcpy(p, old, nb);
	else
		memset(p, 0, nb);
	p[0] = in->op;
	put4(p + nb, (uint32_t)((int64_t)resolve(r, i, in->targets[0]) - at));
	if (in->op == 170) { /* tableswitch: low, high, offsets */
		memcpy(p + nb + 4, old + ob + 4, 8);
		for (uint32_t t = 1; t < in->ntargets; t++)
			put4(p + nb + 8 + 4 * t, (uint32_t)((int64_t)resolve(r, i, in->targets[t]) - at));
	} else { /* lookupswitch: npairs, (match, offset) */
		memcpy(p + nb + 4, old + ob + 4, 4);
		for (uint32_t t = 1; t < in->ntargets; t++) {
			memcpy(p + nb + 8 * t, old + ob + 8 * t, 4);
			put4(p + nb + 8 * t + 4, (uint32_t)((int64_t)resolve(r, i, in->targets[t]) - at));
		}
	}
	(void)get4;
	return 0;
}

static int emit_code(struct rw *r, uint8_t **code_out)
{
	uint8_t *out = cf_alloc(r->c, r->len ? r->len : 1);
	if (!out)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t j = 0; j < r->ns && !rc; j++) {
		const struct snip *s = &r->s[j];
		if (s->kind == SN_TRIP) {
			rc = emit_trip(r, out + s->pos, s);
			continue;
		}
		if (s->zero) {
			emit_zero(out + s->pos, s->var);
			continue;
		}
		if (s->entry) {
			out[s->pos] = 0xb8; /* invokestatic heapfs/Threads.e()V */
			put2(out + s->pos + 1, r->entryref);
			continue;
		}
		rc = emit_snip(r, out + s->pos, s->counter);
		if (!rc && s->kind == SN_STUB) {
			uint32_t at = s->pos + r->snip_len;
			out[at] = 0xc8; /* goto_w */
			put4(out + at + 1, (uint32_t)((int64_t)r->jt[s->insn] - at));
		}
	}
	for (uint32_t i = 0; i < r->n && !rc; i++)
		rc = emit_insn(r, out, i);
	*code_out = out;
	return rc;
}

/* ---- tables ----------------------------------------------------------- */

static uint32_t map_end(const struct rw *r, uint32_t pc)
{
	return pc >= r->k->len ? r->ipos[r->n] : r->jt[r->pci[pc]];
}

static int valid_pc(const struct rw *r, uint32_t pc)
{
	return pc <= r->k->len && r->pci[pc] != NOT_SET;
}

/* Whether every exception range, handler, line and local-variable entry
 * sits on an instruction boundary (checked before anything is changed;
 * cfg_build checks the exception table too, but the relayout has no CFG). */
static int check_tables(const struct rw *r)
{
	const struct cf_code *k = r->k;
	for (uint32_t x = 0; x < k->nexc; x++) {
		const struct cf_exc *e = &k->exc[x];
		if (e->start >= k->len || e->handler >= k->len || !valid_pc(r, e->start) || !valid_pc(r, e->end) ||
		    !valid_pc(r, e->handler))
			return -EINVAL;
	}
	for (uint32_t a = 0; a < k->nattrs; a++) {
		const struct cf_code_attr *at = &k->attrs[a];
		if (at->kind == CA_LNT) {
			for (uint32_t j = 0; j < at->u.lnt.n; j++)
				if (!valid_pc(r, at->u.lnt.e[j].start) || at->u.lnt.e[j].start >= k->len)
					return -EINVAL;
		} else if (at->kind == CA_LVT || at->kind == CA_LVTT) {
			for (uint32_t j = 0; j < at->u.lvt.n; j++) {
				const struct cf_local *l = &at->u.lvt.e[j];
				if (!valid_pc(r, l->start) || !valid_pc(r, (uint32_t)l->start + l->len))
					return -EINVAL;
			}
		}
	}
	return 0;
}

static void relocate_tables(struct rw *r)
{
	struct cf_code *k = r->k;
	for (uint32_t x = 0; x < k->nexc; x++) {
		struct cf_exc *e = &k->exc[x];
		uint32_t h = e->handler;
		/* a range starts at its first instruction, after the snippets
		 * before it: javac covers a handler's first instructions by the
		 * handler itself, and C1 refuses to compile a method whose
		 * handler block has a trapping instruction (our getstatic,
		 * laload, lastore) under its own handler */
		e->start = (uint16_t)r->ipos[r->pci[e->start]];
		e->end = (uint16_t)map_end(r, e->end);
		e->handler = (uint16_t)resolve(r, NOT_SET, h);
	}
	for (uint32_t a = 0; a < k->nattrs; a++) {
		struct cf_code_attr *at = &k->attrs[a];
		if (at->kind == CA_LNT) {
			for (uint32_t j = 0; j < at->u.lnt.n; j++) {
				struct cf_line *l = &at->u.lnt.e[j];
				l->start = (uint16_t)r->fpos[r->pci[l->start]];
			}
		} else if (at->kind == CA_LVT || at->kind == CA_LVTT) {
			for (uint32_t j = 0; j < at->u.lvt.n; j++) {
				struct cf_local *l = &at->u.lvt.e[j];
				uint32_t end = (uint32_t)l->start + l->len;
				uint32_t ns = l->start >= k->len ? r->ipos[r->n] : r->jt[r->pci[l->start]];
				l->start = (uint16_t)ns;
				l->len = (uint16_t)(map_end(r, end) - ns);
			}
		}
	}
}

static int frame_cmp(const void *a, const void *b)
{
	const struct cf_frame *x = a, *y = b;
	return x->bci < y->bci ? -1 : x->bci > y->bci;
}

static void relocate_uninit(const struct rw *r, struct cf_vtype *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (t[i].tag == VT_UNINIT && t[i].val < r->k->len && r->pci[t[i].val] != NOT_SET)
			t[i].val = (uint16_t)r->ipos[r->pci[t[i].val]];
}

/* f with local `var` an int (a counted loop's exit target, where the
 * loop's add reads it): new locals array in the arena.  The slot is past
 * the frame's locals (tops fill the gap), or a top or an int in it (the
 * verifier accepted var as an int on every edge into f: loops.c). */
static int frame_with_int(struct rw *r, struct cf_frame *f, uint32_t var)
{
	int e = trip_frame_entry(f, var);
	if (e == -2)
		return -EINVAL;
	uint32_t slots = 0;
	for (uint32_t i = 0; i < f->nlocals; i++)
		slots += cf_vtype_slots(&f->locals[i]);
	uint32_t n = e >= 0 ? f->nlocals + 1u : f->nlocals + (var - slots) + 1u;
	struct cf_vtype *l = cf_alloc(r->c, n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	memcpy(l, f->locals, f->nlocals * sizeof(*l));
	if (e >= 0) {
		uint32_t was = cf_vtype_slots(&l[e]);
		l[e] = (struct cf_vtype){ .tag = VT_INTEGER };
		if (was == 2) { /* a long or double: its second slot becomes a top */
			memmove(l + e + 2, l + e + 1, (f->nlocals - (uint32_t)e - 1) * sizeof(*l));
			l[e + 1] = (struct cf_vtype){ .tag = VT_TOP };
		} else {
			n--;
		}
	} else {
		for (uint32_t i = f->nlocals; i + 1 < n; i++)
			l[i] = (struct cf_vtype){ .tag = VT_TOP };
		l[n - 1] = (struct cf_vtype){ .tag = VT_INTEGER };
	}
	f->locals = l;
	f->nlocals = (uint16_t)n;
	return 0;
}

/* The variable of the counted loop whose add is placed before insn, or
 * NOT_SET. */
static uint32_t trip_var_at(const struct rw *r, uint32_t insn)
{
	for (uint32_t j = 0; r->ntrip && j < r->ns; j++)
		if (r->s[j].kind == SN_TRIP && r->s[j].insn == insn)
			return r->s[j].var;
	return NOT_SET;
}

/* The frames of a counted loop's exit target: where branches land (the
 * first label or the add) the target's frame with the loop variable an
 * int; after the add, where its ifeq lands, the target's own (with the
 * variables set to 0 before the add as ints). */
static int trip_frames(struct rw *r, struct cf_frame *f, uint32_t *k)
{
	for (uint32_t j = 0; r->ntrip && j < r->ns; j++) {
		const struct snip *s = &r->s[j];
		if (s->kind != SN_TRIP)
			continue;
		struct cf_frame *w = NULL;
		for (uint32_t i = 0; i < *k && !w; i++)
			if (f[i].bci == r->jt[s->insn])
				w = &f[i];
		if (!w)
			return -EINVAL;
		struct cf_frame *own = &f[(*k)++];
		*own = *w;
		own->bci = r->ipos[s->insn];
		own->locals = cf_alloc(r->c, (w->nlocals + 1u) * sizeof(struct cf_vtype));
		own->stack = cf_alloc(r->c, (w->nstack + 1u) * sizeof(struct cf_vtype));
		if (!own->locals || !own->stack)
			return -ENOMEM;
		memcpy(own->locals, w->locals, w->nlocals * sizeof(struct cf_vtype));
		memcpy(own->stack, w->stack, w->nstack * sizeof(struct cf_vtype));
		int rc = frame_with_int(r, w, s->var);
		/* a block leaving for another loop's exit target set that
		 * loop's variable before this add (place_trip): its goto, after
		 * the add, must see it as an int */
		for (uint32_t z = 0; z < r->ns && !rc; z++)
			if (r->s[z].zero && r->s[z].insn == s->insn)
				rc = frame_with_int(r, own, r->s[z].var);
		if (rc)
			return rc;
	}
	return 0;
}

/* The Code's StackMapTable, or NULL. */
static struct cf_code_attr *code_smt(const struct cf_code *k)
{
	for (uint32_t a = 0; a < k->nattrs; a++)
		if (k->attrs[a].kind == CA_SMT)
			return &k->attrs[a];
	return NULL;
}

/* The method's frames as complete states (cf_frames_expand), expanded
 * once (find_loops, relocate_frames): *f NULL without a StackMapTable.
 * The arrays are the arena's; relocate_frames takes them over. */
static int rw_old_frames(struct rw *r, struct cf_frame **f)
{
	const struct cf_code_attr *smt = code_smt(r->k);
	int rc = 0;
	if (!r->old_frames_ready && smt)
		rc = cf_frames_expand(r->c, r->m, smt->u.smt.f, smt->u.smt.n, &r->old_frames);
	r->old_frames_ready = !rc;
	*f = r->old_frames;
	return rc;
}

/* New frames: the old ones at their new offsets, plus copies for the
 * snippets a branch lands on. */
static int relocate_frames(struct rw *r)
{
	struct cf_code_attr *smt = code_smt(r->k);
	uint32_t need = 0;
	for (uint32_t j = 0; j < r->ns; j++)
		need += r->s[j].frame_insn != NOT_SET || r->s[j].kind == SN_TRIP;
	if (!smt)
		return need && r->c->major >= 50 ? -EINVAL : 0;
	struct cf_frame *old;
	int rc = rw_old_frames(r, &old);
	if (rc)
		return rc;
	uint32_t n = smt->u.smt.n + need;
	struct cf_frame *f = cf_alloc(r->c, (n ? n : 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	uint32_t k = 0;
	for (uint32_t i = 0; i < smt->u.smt.n; i++) {
		if (old[i].bci >= r->k->len || r->pci[old[i].bci] == NOT_SET)
			return -EINVAL; /* a frame off the code's instructions */
		f[k] = old[i];
		f[k++].bci = r->jt[r->pci[old[i].bci]];
	}
	for (uint32_t j = 0; j < r->ns; j++) {
		if (r->s[j].frame_insn == NOT_SET)
			continue;
		const struct cf_frame *src = cf_frame_at(old, smt->u.smt.n, r->v[r->s[j].frame_insn].pc);
		if (!src)
			return -EINVAL;
		f[k] = *src;
		f[k].locals = cf_alloc(r->c, (src->nlocals + 1u) * sizeof(struct cf_vtype));
		f[k].stack = cf_alloc(r->c, (src->nstack + 1u) * sizeof(struct cf_vtype));
		if (!f[k].locals || !f[k].stack)
			return -ENOMEM;
		memcpy(f[k].locals, src->locals, src->nlocals * sizeof(struct cf_vtype));
		memcpy(f[k].stack, src->stack, src->nstack * sizeof(struct cf_vtype));
		f[k].bci = r->s[j].pos;
		/* a stub or snippet on the way to a counted loop's add: it comes
		 * from the loop too, and the add reads the variable */
		uint32_t var = trip_var_at(r, r->s[j].frame_insn);
		if (var != NOT_SET && (rc = frame_with_int(r, &f[k], var)))
			return rc;
		k++;
	}
	if ((rc = trip_frames(r, f, &k)))
		return rc;
	/* Uninitialized(offset) names the `new` instruction's offset; each
	 * frame has its own arrays (cf_frames_expand and the copies above) */
	for (uint32_t i = 0; i < n; i++) {
		relocate_uninit(r, f[i].locals, f[i].nlocals);
		relocate_uninit(r, f[i].stack, f[i].nstack);
	}
	qsort(f, n, sizeof(*f), frame_cmp);
	for (uint32_t i = 1; i < n; i++)
		if (f[i].bci == f[i - 1].bci)
			return -EINVAL;
	smt->u.smt.f = f;
	smt->u.smt.n = n;
	return 0;
}

/* ---- one method ----------------------------------------------------------- */

static int rw_init(struct rw *r, struct cf_class *c, struct cf_member *m, struct cf_insn *v, uint32_t n)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	r->m = m;
	r->k = m->code;
	r->v = v;
	r->n = n;
	r->pci = malloc(((size_t)r->k->len + 1) * sizeof(uint32_t));
	r->ipos = calloc(n + 1, sizeof(uint32_t));
	r->fpos = calloc(n + 1, sizeof(uint32_t));
	r->jt = calloc(n + 1, sizeof(uint32_t));
	if (!r->pci || !r->ipos || !r->fpos || !r->jt)
		return -ENOMEM;
	memset(r->pci, 0xff, ((size_t)r->k->len + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		r->pci[v[i].pc] = i;
	r->pci[r->k->len] = n;
	for (uint32_t i = 0; i < n; i++)
		r->ipos[i] = v[i].pc;
	return 0;
}

/* The class, name and descriptor of method m for the sink, NUL-free
 * slices of the pool: 0, or -1 if one is missing. */
static int member_names(const struct cf_class *c, const struct cf_member *m, const char **cn, uint16_t *cl,
			const char **mn, uint16_t *nl, const char **md, uint16_t *dl)
{
	*cn = cf_utf8(c, cf_class_name(c, c->this_class), cl);
	*mn = cf_utf8(c, m->name, nl);
	*md = cf_utf8(c, m->desc, dl);
	return *cn && *mn && *md ? 0 : -1;
}

/* Whether m is an allocating intrinsic (cf_method_allocates). */
static int is_allocating_intrinsic(const struct cf_class *c, const struct cf_member *m)
{
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	return !member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl) && cf_method_allocates(cn, cl, mn, nl, md, dl);
}

/* cf_code_decode of m's code.  The allocations in the body of an
 * allocating intrinsic are no sites: its callers count each call as its
 * allocation (cf_call_allocates), and the body runs only where a call is
 * not compiled as the intrinsic. */
static int decode_method(struct cf_class *c, const struct cf_member *m, struct cf_insn **v, uint32_t *n)
{
	int rc = cf_code_decode(c, m->code, v, n);
	if (!rc && is_allocating_intrinsic(c, m))
		for (uint32_t i = 0; i < *n; i++)
			(*v)[i].site = 0;
	return rc;
}

/* Decodes m's code into r, with the counter snippets' pool entries.  0,
 * -EINVAL (the code does not decode) or -ENOMEM. */
static int rw_open(struct rw *r, struct cf_class *c, struct cf_member *m, uint16_t fieldref, uint16_t methodref)
{
	struct cf_insn *v;
	uint32_t n;
	memset(r, 0, sizeof(*r));
	int rc = decode_method(c, m, &v, &n);
	if (rc)
		return rc == -ENOMEM ? rc : -EINVAL;
	if ((rc = rw_init(r, c, m, v, n)))
		return rc;
	r->fieldref = fieldref;
	r->methodref = methodref;
	r->snip_len = methodref ? SNIP_LEN_ATOMIC : SNIP_LEN;
	return 0;
}

/* Lays out, emits and relocates; the method's code is replaced on success. */
static int rw_apply(struct rw *r, int frames)
{
	r->ord = malloc((r->ns + 1) * sizeof(uint32_t));
	if (!r->ord)
		return -ENOMEM;
	for (uint32_t j = 0; j < r->ns; j++)
		r->ord[j] = j;
	ord_ctx = r; /* single-threaded per call: instr_class holds no state across threads */
	qsort(r->ord, r->ns, sizeof(uint32_t), ord_cmp);
	uint8_t *code;
	int rc = layout(r);
	if (rc || (rc = emit_code(r, &code)))
		return rc;
	if ((rc = check_tables(r)) || (frames && (rc = relocate_frames(r))))
		return rc;
	relocate_tables(r); /* nothing can fail from here on */
	r->k->code = code;
	r->k->len = r->len;
	return 0;
}

struct method_plan {
	struct cfg g;       /* sites: the g.nalloc allocating instructions, then
			     * calls of clones (counter inlining) */
	struct paths ps;
	uint32_t init;      /* a constructor planned by plan_ctor_paths: its super()
			     * or this() call's instruction, else NOT_SET */
	uint32_t *callee;   /* [nsites - nalloc] the clone each call site stands for */
	uint32_t *line;     /* [nalloc] source line of each site, from the original table */
	char *type;         /* [nalloc][256] allocated type of each site */
	uint64_t code_hash; /* instr_code_hash: for the sink's freq and method */
	struct trip_loops tl; /* counted loops (sink->loops, loops.h) */
	uint32_t *trip_counter; /* [tl.n] the counter (ps index) on each loop's back
				 * edge, NOT_SET: the loop is counted as any */
};

/* Whether instruction i is a site: an allocation (cf_insn's site: an
 * allocating instruction or a call of an allocating intrinsic), or a call
 * of a clone (which counts as made once the call returns). */
static int site_insn(const struct rw *r, uint32_t i)
{
	return r->v[i].site || (r->inl_ref && r->inl_ref[i]);
}

/* Copies a class name of n bytes into out with '.' for '/' (as traces
 * name it), NUL-terminated, cut to cap; the length copied. */
static size_t put_dotted(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (; o < n && o + 1 < cap; o++)
		out[o] = s[o] == '/' ? '.' : s[o];
	if (cap)
		out[o] = 0;
	return o;
}

/* Appends a field descriptor's type as traces name it: "[[I" -> int[][],
 * "Ljava/lang/String;" -> java.lang.String. */
static void desc_to_name(const char *d, size_t n, char *out, size_t cap)
{
	size_t dims = 0, o = 0;
	while (dims < n && d[dims] == '[')
		dims++;
	const char *e = d + dims;
	size_t en = n - dims;
	static const char *const prim[] = { "B", "byte", "C", "char", "D", "double", "F", "float", "I", "int",
					    "J", "long", "S", "short", "Z", "boolean" };
	const char *base = NULL;
	for (size_t i = 0; i < 16 && en == 1; i += 2)
		if (*e == prim[i][0])
			base = prim[i + 1];
	if (base) {
		o = (size_t)snprintf(out, cap, "%s", base);
	} else {
		if (en >= 2 && e[0] == 'L') { /* strip L...; */
			e++;
			en -= 2;
		}
		o = put_dotted(e, en, out, cap);
	}
	for (size_t i = 0; i < dims && o + 3 < cap; i++) {
		out[o++] = '[';
		out[o++] = ']';
		out[o] = 0;
	}
}

/* The type the allocating instruction at pc makes. */
static void site_type(const struct cf_class *c, const struct cf_code *k, uint32_t pc, char *out, size_t cap)
{
	static const char *const atype[] = { "boolean", "char", "float", "double", "byte", "short", "int", "long" };
	uint8_t op = k->code[pc];
	snprintf(out, cap, "?");
	if (op == 184) { /* a call of an allocating intrinsic: its declared
			  * return type (the array's class is the Class
			  * argument's, which the count does not see) */
		uint16_t cls, name, desc, dl;
		const char *d = cf_ref_parts(c, get2(k->code + pc + 1), &cls, &name, &desc) ? NULL
											  : cf_utf8(c, desc, &dl);
		const char *ret = d ? memchr(d, ')', dl) : NULL;
		if (ret)
			desc_to_name(ret + 1, (size_t)(d + dl - ret - 1), out, cap);
		return;
	}
	if (op == 188) { /* newarray */
		uint8_t t = k->code[pc + 1];
		if (t >= 4 && t <= 11)
			snprintf(out, cap, "%s[]", atype[t - 4]);
		return;
	}
	uint16_t len, ci = get2(k->code + pc + 1);
	const char *name = cf_utf8(c, cf_class_name(c, ci), &len);
	if (!name)
		return;
	if (op == 197) { /* multianewarray: an array descriptor */
		desc_to_name(name, len, out, cap);
		return;
	}
	if (op == 187) { /* new: a bare class name, which may begin with L
			  * (LinkAhead) or be one letter (a class B): not a
			  * descriptor */
		put_dotted(name, len, out, cap);
		return;
	}
	/* anewarray: an array of the named class or array type */
	char d[1024];
	if ((size_t)len + 4 > sizeof(d))
		return;
	d[0] = '[';
	size_t n = 1;
	if (name[0] != '[')
		d[n++] = 'L';
	memcpy(d + n, name, len);
	n += len;
	if (name[0] != '[')
		d[n++] = ';';
	desc_to_name(d, n, out, cap);
}

/* The non-zero entries of a per-site vector: sites into k, coefficients
 * into co (both [ns]); returns how many. */
static uint32_t sparse_sites(const int32_t *vec, uint32_t ns, uint32_t *k, int32_t *co)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < ns; s++)
		if (vec[s]) {
			k[n] = s;
			co[n++] = vec[s];
		}
	return n;
}

/* The (latch, head) block pairs of the method's counted loops, in order
 * (plan_forced, sink->graph); malloc'd, the caller frees; NULL: out of
 * memory. */
static uint32_t *loop_latches(const struct method_plan *mp)
{
	uint32_t *latch = malloc((2 * (size_t)mp->tl.n + 1) * sizeof(uint32_t));
	for (uint32_t l = 0; latch && l < mp->tl.n; l++) {
		latch[2 * l] = mp->tl.l[l].latch;
		latch[2 * l + 1] = mp->tl.l[l].head;
	}
	return latch;
}

/* Registers the plan's counters (base + j, mp->ps) with the sink; kmap
 * (NULL: none) maps the plan's site numbers to the method's (a counting
 * clone's plan is over its calls only). */
static int announce_plan_counters(const struct method_plan *mp, const struct instr_sink *sink, uint32_t id,
				  uint32_t base, const uint32_t *kmap)
{
	uint32_t ns = mp->ps.nsites;
	uint32_t *ks = malloc((ns + 1) * sizeof(uint32_t));
	int32_t *co = malloc((ns + 1) * sizeof(int32_t));
	int rc = ks && co ? 0 : -ENOMEM;
	for (uint32_t j = 0; j < mp->ps.ncounters && !rc; j++) {
		uint32_t nz = sparse_sites(mp->ps.sem + (size_t)j * ns, ns, ks, co);
		for (uint32_t i = 0; kmap && i < nz; i++)
			ks[i] = kmap[ks[i]];
		rc = sink->counter(sink->ctx, id, base + j, ks, co, nz);
	}
	free(ks);
	free(co);
	return rc;
}

/* Registers the method, its sites and counters with the sink; *idp its id. */
static int announce(struct cf_class *c, struct cf_member *m, const struct method_plan *mp,
		    const struct instr_sink *sink, uint32_t base, uint32_t *idp)
{
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	if (member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl))
		return -EINVAL;
	uint32_t id = sink->method(sink->ctx, cn, cl, mn, nl, md, dl, mp->g.nalloc, mp->code_hash, mp->g.nblocks,
				   mp->g.nnormal);
	if (id == UINT32_MAX)
		return -ENOMEM;
	*idp = id;
	for (uint32_t s = 0; s < mp->g.nalloc; s++)
		if (sink->site(sink->ctx, id, s, mp->g.site_pc[s], mp->line[s], mp->type + (size_t)s * 256))
			return -ENOMEM;
	for (uint32_t s = mp->g.nalloc; s < mp->g.nsites; s++)
		if (sink->inlined(sink->ctx, id, s, mp->callee[s - mp->g.nalloc]))
			return -ENOMEM;
	int rc = announce_plan_counters(mp, sink, id, base, NULL);
	if (!rc && sink->graph && mp->ps.e) {
		uint32_t *cnt = malloc((mp->ps.nedges + 1) * sizeof(uint32_t));
		if (!cnt)
			return -ENOMEM;
		for (uint32_t i = 0; i < mp->ps.nedges; i++)
			cnt[i] = UINT32_MAX;
		for (uint32_t j = 0; j < mp->ps.ncounters; j++)
			cnt[mp->ps.counter_edge[j]] = base + j;
		uint32_t *latch = loop_latches(mp);
		rc = latch ? sink->graph(sink->ctx, id, &mp->g, mp->init, mp->ps.nedges, mp->ps.e, cnt, latch,
					 mp->trip_counter ? mp->tl.n : 0)
			   : -ENOMEM;
		free(latch);
		free(cnt);
	}
	return rc;
}

/* The counted loop (loops.h) block b is in, if counted at its exits
 * (sink->trip), else NOT_SET. */
static uint32_t trip_loop_of_block(const struct method_plan *mp, uint32_t b)
{
	uint32_t l = mp->tl.loop_of ? mp->tl.loop_of[b] : TRIP_NONE;
	return l != TRIP_NONE && mp->trip_counter && mp->trip_counter[l] != NOT_SET ? l : NOT_SET;
}

/* Exception corrections (paths.h, phi): for every run of instructions of a
 * block up to and including its next allocation, phi(b) minus the
 * block's allocations not yet made.  An exit block's last instruction
 * comes after its exit counter, which settled the account: it needs
 * nothing.  Runs whose correction is zero are left out; the others come
 * in code order, each with its vector in vec[run * w]: a correction
 * per site, then (w = nsites + 1) the counted loop (loops.h) the run is
 * in, plus 1, or 0: an exception there must also add the loop's count so
 * far (the add at its exits, sink->trip), so that such runs are kept even
 * with no correction per site. */
struct corr_run {
	uint32_t first, last;      /* instruction indexes, inclusive */
};
struct corr_runs {
	uint32_t n, w;
	struct corr_run *run;      /* [n] */
	int32_t *vec;              /* [n * w] */
	uint64_t cap_run, cap_vec;
};

static void corr_runs_free(struct corr_runs *cr)
{
	free(cr->run);
	free(cr->vec);
	memset(cr, 0, sizeof(*cr));
}

static int corr_runs_push(struct corr_runs *cr, uint32_t first, uint32_t last, const int32_t *corr)
{
	uint32_t w = cr->w;
	if (array_reserve((void **)&cr->run, &cr->cap_run, cr->n + 1ull, sizeof(*cr->run)) ||
	    array_reserve((void **)&cr->vec, &cr->cap_vec, (cr->n + 1ull) * w, sizeof(*cr->vec)))
		return -ENOMEM;
	cr->run[cr->n] = (struct corr_run){ first, last };
	memcpy(cr->vec + (size_t)cr->n * w, corr, w * sizeof(*corr));
	cr->n++;
	return 0;
}

static int correction_runs(const struct rw *r, const struct method_plan *mp, struct corr_runs *cr)
{
	const struct cfg *g = &mp->g;
	const struct paths *ps = &mp->ps;
	uint32_t ns = g->nsites;
	memset(cr, 0, sizeof(*cr));
	cr->w = ns + 1;
	if (!ps->phi || !ns)
		return 0;
	int32_t *corr = malloc(cr->w * sizeof(int32_t));
	uint8_t *exit_counted = calloc(g->nblocks + 1, 1);
	int rc = corr && exit_counted ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < ps->nedges && !rc; i++)
		if (ps->e[i].counter && ps->e[i].to == PATHS_X && ps->e[i].from != PATHS_X)
			exit_counted[ps->e[i].from] = 1;
	for (uint32_t b = 0; b < g->nblocks && !rc; b++) {
		const struct cfg_block *bl = &g->b[b];
		if (ps->block_path[b] == PATHS_NONE || bl->first >= bl->end)
			continue;
		/* corr = phi(b) - allocations of b from the run's start on */
		for (uint32_t s = 0; s < ns; s++)
			corr[s] = ps->phi[(size_t)b * ns + s] - (g->site_block[s] == b);
		corr[ns] = (int32_t)(trip_loop_of_block(mp, b) + 1); /* NOT_SET + 1 = 0 */
		uint32_t last = bl->end - (exit_counted[b] ? 1 : 0);
		uint32_t i = bl->first;
		while (i < last && !rc) {
			uint32_t j = i; /* the run: up to and including the next allocation */
			while (j + 1 < last && !site_insn(r, j))
				j++;
			int any = 0;
			for (uint32_t s = 0; s < cr->w; s++)
				any |= corr[s] != 0;
			if (any)
				rc = corr_runs_push(cr, i, j, corr);
			if (site_insn(r, j)) /* made from here on */
				for (uint32_t s = 0; s < ns; s++)
					if (g->site_pc[s] == r->v[j].pc)
						corr[s]++;
			i = j + 1;
		}
	}
	free(corr);
	free(exit_counted);
	if (rc)
		corr_runs_free(cr);
	return rc;
}

/* Reports the corrections to sink->correction (offsets of the rewritten
 * code), then the relocated exception table to sink->handlers. */
static int report_corrections(const struct rw *r, const struct method_plan *mp, const struct instr_sink *sink,
			      uint32_t id)
{
	uint32_t ns = mp->g.nsites;
	struct corr_runs cr = { 0 };
	int rc = sink->correction ? correction_runs(r, mp, &cr) : 0;
	uint32_t *k = malloc((ns + 1) * sizeof(uint32_t));
	int32_t *co = malloc((ns + 1) * sizeof(int32_t));
	if (!rc && (!k || !co))
		rc = -ENOMEM;
	for (uint32_t x = 0; x < cr.n && !rc; x++) {
		uint32_t n = sparse_sites(cr.vec + (size_t)x * cr.w, ns, k, co);
		if (!n)
			continue; /* a counted loop's only (not with these corrections: uses_loops) */
		rc = sink->correction(sink->ctx, id, r->ipos[cr.run[x].first], r->ipos[cr.run[x].last] + 1, k, co, n);
	}
	if (!rc && sink->handlers && r->k->nexc) {
		uint16_t *seh = malloc(3 * r->k->nexc * sizeof(uint16_t));
		rc = seh ? 0 : -ENOMEM;
		for (uint32_t x = 0; x < r->k->nexc && !rc; x++) {
			seh[3 * x] = r->k->exc[x].start;
			seh[3 * x + 1] = r->k->exc[x].end;
			seh[3 * x + 2] = r->k->exc[x].handler;
		}
		if (!rc)
			rc = sink->handlers(sink->ctx, id, seh, r->k->nexc);
		free(seh);
	}
	corr_runs_free(&cr);
	free(k);
	free(co);
	return rc;
}

/* ---- exception corrections in bytecode (sink->bytecode) ------------------ */

/* The handlers a method gets: one per distinct correction vector, and one
 * stub per (exception table entry, vector) where the entry covers a run
 * of that vector.  Planned on instruction indexes, before the layout, so
 * that the layout can count their bytes. */
struct corr_plan {
	struct corr_runs cr;
	uint32_t *vid;          /* [cr.n] the run's vector */
	uint32_t nvec;
	uint32_t *uniq;         /* [nvec] a run with that vector */
	uint32_t *stub;         /* [nexc * nvec]: stub number, NOT_SET none */
	uint32_t nstub;
	uint32_t *plain;        /* [nexc]: plain stub number, NOT_SET none */
	uint32_t nplain;
	uint32_t cbase;         /* the vectors' counters: cbase + v */
	uint32_t *hoff;         /* [nvec + 1] H_v's offset after the code, then the end */
	const struct method_plan *mp;
	uint32_t tbase;         /* the method's first counter (counted loops' adds) */
};

static void corr_plan_free(struct corr_plan *cp)
{
	corr_runs_free(&cp->cr);
	free(cp->vid);
	free(cp->uniq);
	free(cp->stub);
	free(cp->plain);
	free(cp->hoff);
	memset(cp, 0, sizeof(*cp));
}

/* The instruction index range [first, end) an exception entry covers. */
static void exc_insns(const struct rw *r, const struct cf_exc *e, uint32_t *first, uint32_t *end)
{
	*first = r->pci[e->start];
	*end = e->end >= r->k->len ? r->n : r->pci[e->end];
}

/* A correction vector's hash, a multiply per element (vectors have an
 * element per site of the method: hundreds in a generated parser). */
static uint32_t vec_hash(const int32_t *v, uint32_t ns)
{
	uint64_t h = ns;
	for (uint32_t i = 0; i < ns; i++)
		h = (h ^ (uint32_t)v[i]) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

/* vid[x]: the number of run x's correction vector among the distinct ones,
 * numbered in order of first appearance (uniq[u]: the first run with
 * vector u; *nvec of them).  A hash table of the distinct vectors: big
 * generated parsers have thousands of runs. */
static int number_vectors(const struct corr_runs *cr, uint32_t ns, uint32_t *vid, uint32_t *uniq, uint32_t *nvec)
{
	uint32_t cap = 16;
	while (cap < 2 * cr->n)
		cap *= 2;
	uint32_t *slot = calloc(cap, sizeof(*slot)); /* u + 1, 0 empty */
	if (!slot)
		return -ENOMEM;
	*nvec = 0;
	for (uint32_t x = 0; x < cr->n; x++) {
		const int32_t *v = cr->vec + (size_t)x * ns;
		uint32_t s = vec_hash(v, ns) & (cap - 1);
		while (slot[s] && memcmp(cr->vec + (size_t)uniq[slot[s] - 1] * ns, v, ns * sizeof(*v)))
			s = (s + 1) & (cap - 1);
		if (!slot[s]) {
			uniq[*nvec] = x;
			slot[s] = ++*nvec;
		}
		vid[x] = slot[s] - 1;
	}
	free(slot);
	return 0;
}

/* Vector v's counted loop (corr_runs), or NOT_SET. */
static uint32_t vec_loop(const struct corr_plan *cp, uint32_t v)
{
	return (uint32_t)cp->cr.vec[(size_t)cp->uniq[v] * cp->cr.w + cp->cr.w - 1] - 1;
}

/* Whether vector v corrects any site (else only its loop's add). */
static int vec_corrects(const struct corr_plan *cp, uint32_t v)
{
	const int32_t *vec = cp->cr.vec + (size_t)cp->uniq[v] * cp->cr.w;
	for (uint32_t s = 0; s + 1 < cp->cr.w; s++)
		if (vec[s])
			return 1;
	return 0;
}

/* H_v's length: its counted loop's add, the snippet of its counter,
 * athrow. */
static uint32_t handler_len(const struct rw *r, const struct corr_plan *cp, uint32_t v)
{
	uint32_t l = vec_loop(cp, v);
	return (l != NOT_SET ? trip_len(cp->mp->tl.l[l].var) : 0) + (vec_corrects(cp, v) ? r->snip_len : 0) + 1;
}

static int plan_corr_handlers(const struct rw *r, const struct method_plan *mp, struct corr_plan *cp)
{
	uint32_t nexc = r->k->nexc;
	memset(cp, 0, sizeof(*cp));
	int rc = correction_runs(r, mp, &cp->cr);
	if (rc || !cp->cr.n)
		return rc;
	cp->vid = malloc(cp->cr.n * sizeof(uint32_t));
	cp->uniq = malloc(cp->cr.n * sizeof(uint32_t));
	if (!cp->vid || !cp->uniq)
		return -ENOMEM;
	if ((rc = number_vectors(&cp->cr, cp->cr.w, cp->vid, cp->uniq, &cp->nvec)))
		return rc;
	cp->stub = malloc(((size_t)nexc * cp->nvec + 1) * sizeof(uint32_t));
	cp->plain = malloc((nexc + 1) * sizeof(uint32_t));
	uint8_t *stubbed = calloc(nexc + 1, 1); /* some stub jumps to the entry's handler */
	rc = cp->stub && cp->plain && stubbed ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < (size_t)nexc * cp->nvec; i++)
		cp->stub[i] = NOT_SET;
	for (uint32_t e = 0; e < nexc && !rc; e++) {
		uint32_t a, b;
		exc_insns(r, &r->k->exc[e], &a, &b);
		for (uint32_t x = 0; x < cp->cr.n; x++) {
			uint32_t *st = &cp->stub[(size_t)e * cp->nvec + cp->vid[x]];
			if (cp->cr.run[x].first < b && a <= cp->cr.run[x].last && *st == NOT_SET) {
				*st = cp->nstub++;
				stubbed[e] = 1;
			}
		}
	}
	/* A handler some stub jumps to must be reached by nothing else
	 * (C1 refuses a handler reached by both normal and exceptional
	 * control flow): every entry with that handler goes through stubs,
	 * the pieces without a correction through a plain one (goto_w). */
	for (uint32_t e = 0; e < nexc && !rc; e++) {
		int redirect = 0;
		for (uint32_t f = 0; f < nexc && !redirect; f++)
			redirect = stubbed[f] && r->k->exc[f].handler == r->k->exc[e].handler;
		cp->plain[e] = redirect ? cp->nplain++ : NOT_SET;
	}
	free(stubbed);
	/* a counted loop has no handler of the method covering it
	 * (loops.c): its runs need no stub */
	for (uint32_t e = 0; e < nexc && !rc; e++)
		for (uint32_t v = 0; v < cp->nvec && !rc; v++)
			if (cp->stub[(size_t)e * cp->nvec + v] != NOT_SET && vec_loop(cp, v) != NOT_SET)
				rc = -EINVAL;
	cp->mp = mp;
	if (!rc && !(cp->hoff = malloc((cp->nvec + 1) * sizeof(uint32_t))))
		rc = -ENOMEM;
	for (uint32_t v = 0, at = 0; v <= cp->nvec && !rc; v++) {
		cp->hoff[v] = at;
		if (v < cp->nvec)
			at += handler_len(r, cp, v);
	}
	return rc;
}

/* Where run x lies in the rewritten code: [*rs, *re). */
static void run_span(const struct rw *r, const struct corr_runs *cr, uint32_t x, uint32_t *rs, uint32_t *re)
{
	uint32_t l = cr->run[x].last;
	*rs = r->ipos[cr->run[x].first];
	*re = r->ipos[l] + insn_len(r, l, r->ipos[l]);
}

static uint32_t corr_tail_len(const struct rw *r, const struct corr_plan *cp)
{
	/* a plan that found nothing to correct has no handler offsets */
	uint32_t handlers = cp->hoff ? cp->hoff[cp->nvec] : 0;
	return handlers + cp->nstub * (r->snip_len + 5) + cp->nplain * 5;
}

/* A full frame at bci: no locals, the stack one java/lang/Throwable. */
static int throwable_frame(struct rw *r, uint32_t bci, uint16_t throwable, struct cf_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->type = 255;
	f->bci = bci;
	f->nstack = 1;
	f->locals = cf_alloc(r->c, sizeof(struct cf_vtype));
	f->stack = cf_alloc(r->c, sizeof(struct cf_vtype));
	if (!f->locals || !f->stack)
		return -ENOMEM;
	f->stack[0] = (struct cf_vtype){ .tag = VT_OBJECT, .val = throwable };
	return 0;
}

/* H_v at p: the add of its counted loop (as at the loop's exits), the
 * increment of its counter unless it corrects no site, athrow. */
static int emit_handler(struct rw *r, const struct corr_plan *cp, uint32_t v, uint8_t *p)
{
	uint32_t l = vec_loop(cp, v), at = 0;
	int rc = 0;
	if (l != NOT_SET) {
		struct snip t = { .kind = SN_TRIP, .var = cp->mp->tl.l[l].var,
				  .counter = cp->tbase + cp->mp->trip_counter[l] };
		rc = emit_trip(r, p, &t);
		at += trip_len(t.var);
	}
	if (!rc && vec_corrects(cp, v)) {
		rc = emit_snip(r, p + at, cp->cbase + v);
		at += r->snip_len;
	}
	p[at] = 0xbf; /* athrow */
	return rc;
}

/* After rw_apply: appends the handlers, rewrites the exception table and
 * adds the handlers' frames.  H_v (catch-all, after the method's own
 * entries, so that those still catch first): increment v's counter,
 * athrow.  S_{e,v}: increment v's counter, goto_w e's handler; entry e is
 * split where it overlaps runs of v, those pieces pointing at S_{e,v},
 * its other pieces at P_e: goto_w e's handler (plan_corr_handlers: a
 * handler a stub jumps to is reached through stubs only).  Nothing is
 * changed unless everything succeeds. */
static int emit_corr_handlers(struct rw *r, const struct corr_plan *cp)
{
	struct cf_code *k = r->k;
	uint32_t nvec = cp->nvec, sl = r->snip_len, base = k->len;
	uint32_t len = base + corr_tail_len(r, cp);
	uint8_t *code = cf_alloc(r->c, len);
	/* pieces: an entry splits into at most 2 * runs + 1 */
	size_t cap = (size_t)k->nexc * (2 * cp->cr.n + 1) + cp->cr.n;
	struct cf_exc *exc = cf_alloc(r->c, (cap ? cap : 1) * sizeof(*exc));
	uint16_t throwable = cf_cp_class(r->c, "java/lang/Throwable", 19);
	if (!code || !exc || !throwable)
		return -ENOMEM;
	memcpy(code, k->code, base);
	int rc = 0;
	for (uint32_t v = 0; v < nvec && !rc; v++)
		rc = emit_handler(r, cp, v, code + base + cp->hoff[v]);
	uint32_t sbase = base + cp->hoff[nvec];
	for (uint32_t e = 0; e < k->nexc && !rc; e++)
		for (uint32_t v = 0; v < nvec && !rc; v++) {
			uint32_t st = cp->stub[(size_t)e * nvec + v];
			if (st == NOT_SET)
				continue;
			uint32_t at = sbase + st * (sl + 5);
			rc = emit_snip(r, code + at, cp->cbase + v);
			code[at + sl] = 0xc8; /* goto_w */
			put4(code + at + sl + 1, (uint32_t)((int64_t)k->exc[e].handler - (at + sl)));
		}
	uint32_t pbase = sbase + cp->nstub * (sl + 5);
	for (uint32_t e = 0; e < k->nexc; e++)
		if (cp->plain[e] != NOT_SET) {
			uint32_t at = pbase + cp->plain[e] * 5;
			code[at] = 0xc8; /* goto_w */
			put4(code + at + 1, (uint32_t)((int64_t)k->exc[e].handler - at));
		}
	if (rc)
		return rc;
	/* the runs in new offsets */
	uint32_t n = 0;
	for (uint32_t e = 0; e < k->nexc; e++) {
		const struct cf_exc *o = &k->exc[e];
		uint16_t other = cp->plain[e] == NOT_SET ? o->handler : (uint16_t)(pbase + cp->plain[e] * 5);
		uint32_t cur = o->start;
		for (uint32_t x = 0; x < cp->cr.n; x++) {
			uint32_t rs, re;
			run_span(r, &cp->cr, x, &rs, &re);
			uint32_t a = rs > cur ? rs : cur, b = re < o->end ? re : o->end;
			if (a >= b)
				continue;
			if (cur < a)
				exc[n++] = (struct cf_exc){ (uint16_t)cur, (uint16_t)a, other, o->catch_type };
			uint32_t st = cp->stub[(size_t)e * nvec + cp->vid[x]];
			if (st == NOT_SET) /* plan_corr_handlers saw no overlap: cannot happen */
				return -EINVAL;
			exc[n++] = (struct cf_exc){ (uint16_t)a, (uint16_t)b, (uint16_t)(sbase + st * (sl + 5)),
						    o->catch_type };
			cur = b;
		}
		if (cur < o->end)
			exc[n++] = (struct cf_exc){ (uint16_t)cur, o->end, other, o->catch_type };
	}
	for (uint32_t x = 0; x < cp->cr.n; x++) {
		uint32_t rs, re;
		run_span(r, &cp->cr, x, &rs, &re);
		uint16_t h = (uint16_t)(base + cp->hoff[cp->vid[x]]);
		if (n && exc[n - 1].catch_type == 0 && exc[n - 1].handler == h && exc[n - 1].end == rs)
			exc[n - 1].end = (uint16_t)re; /* adjacent runs of one vector: one entry */
		else
			exc[n++] = (struct cf_exc){ (uint16_t)rs, (uint16_t)re, h, 0 };
	}
	/* frames (class files of version 50 on) */
	struct cf_code_attr *smt = code_smt(k);
	struct cf_code_attr *attrs = k->attrs;
	uint32_t nattrs = k->nattrs;
	if (!smt && r->c->major >= 50) {
		attrs = cf_alloc(r->c, (nattrs + 1) * sizeof(*attrs));
		uint16_t name = cf_cp_utf8(r->c, "StackMapTable", 13);
		if (!attrs || !name)
			return -ENOMEM;
		if (nattrs)
			memcpy(attrs, k->attrs, nattrs * sizeof(*attrs));
		smt = &attrs[nattrs++];
		memset(smt, 0, sizeof(*smt));
		smt->kind = CA_SMT;
		smt->raw.name = name;
	}
	struct cf_frame *f = NULL;
	uint32_t nf = 0;
	if (smt) {
		uint32_t old = smt->u.smt.n;
		f = cf_alloc(r->c, (old + 2 * nvec + cp->nstub + cp->nplain + 1) * sizeof(*f));
		if (!f)
			return -ENOMEM;
		if (old) /* a new StackMapTable has none (and no array) */
			memcpy(f, smt->u.smt.f, old * sizeof(*f));
		nf = old;
		for (uint32_t v = 0; v < nvec && !rc; v++) {
			uint32_t l = vec_loop(cp, v), at = base + cp->hoff[v];
			if (l == NOT_SET) {
				rc = throwable_frame(r, at, throwable, &f[nf++]);
				continue;
			}
			/* the loop's add reads its variable; its ifeq lands after it */
			uint32_t var = cp->mp->tl.l[l].var;
			if (!(rc = throwable_frame(r, at, throwable, &f[nf])) && !(rc = frame_with_int(r, &f[nf], var)))
				rc = throwable_frame(r, at + trip_len(var), throwable, &f[nf + 1]);
			if (!rc)
				rc = frame_with_int(r, &f[nf + 1], var);
			nf += 2;
		}
		for (uint32_t e = 0; e < k->nexc && !rc; e++)
			for (uint32_t v = 0; v < nvec && !rc; v++) {
				uint32_t st = cp->stub[(size_t)e * nvec + v];
				if (st == NOT_SET)
					continue;
				const struct cf_frame *src = cf_frame_at(smt->u.smt.f, old, k->exc[e].handler);
				if (!src)
					return -EINVAL;
				f[nf] = *src; /* read only from here on: the arrays can be shared */
				f[nf++].bci = sbase + st * (sl + 5);
			}
		for (uint32_t e = 0; e < k->nexc && !rc; e++) {
			if (cp->plain[e] == NOT_SET)
				continue;
			const struct cf_frame *src = cf_frame_at(smt->u.smt.f, old, k->exc[e].handler);
			if (!src)
				return -EINVAL;
			f[nf] = *src;
			f[nf++].bci = pbase + cp->plain[e] * 5;
		}
		qsort(f, nf, sizeof(*f), frame_cmp); /* stubs are numbered in run order */
	}
	if (rc)
		return rc;
	if (n > 65535)
		return -E2BIG;
	k->code = code;
	k->len = len;
	k->exc = exc;
	k->nexc = n;
	k->attrs = attrs;
	k->nattrs = nattrs;
	if (smt) {
		smt->u.smt.f = f;
		smt->u.smt.n = nf;
	}
	uint32_t need = 1 + (r->methodref ? 2 : 6); /* the exception under the snippet */
	if (k->max_stack < need)
		k->max_stack = (uint16_t)need;
	return 0;
}

/* Tells the sink which of the plan's counters (base + j) stand for
 * counted loops' back edges (sink->trip). */
static int announce_trips(const struct method_plan *mp, const struct instr_sink *sink, uint32_t id, uint32_t base,
			  struct instr_stats *st)
{
	int rc = 0;
	for (uint32_t l = 0; !rc && mp->trip_counter && l < mp->tl.n; l++)
		if (mp->trip_counter[l] != NOT_SET && !(rc = sink->trip(sink->ctx, id, base + mp->trip_counter[l])))
			st->trip_loops++;
	return rc;
}

/* Room for the snippets' operands (EXTRA_STACK) on a rewritten method's
 * stack. */
static void raise_max_stack(struct cf_code *k)
{
	k->max_stack = (uint16_t)(k->max_stack + EXTRA_STACK > 65535 ? 65535 : k->max_stack + EXTRA_STACK);
}

/* Registers the vectors' counters with the sink; kmap (NULL: none) maps
 * mp's site numbers to the method's (a counting clone's). */
static int announce_corr_counters(const struct corr_plan *cp, const struct method_plan *mp,
				  const struct instr_sink *sink, uint32_t id, const uint32_t *kmap)
{
	uint32_t ns = mp->g.nsites;
	uint32_t *ks = malloc((ns + 1) * sizeof(uint32_t));
	int32_t *co = malloc((ns + 1) * sizeof(int32_t));
	int rc = ks && co ? 0 : -ENOMEM;
	for (uint32_t v = 0; v < cp->nvec && !rc; v++) {
		uint32_t nz = sparse_sites(cp->cr.vec + (size_t)cp->uniq[v] * cp->cr.w, ns, ks, co);
		for (uint32_t i = 0; kmap && i < nz; i++)
			ks[i] = kmap[ks[i]];
		rc = sink->counter(sink->ctx, id, cp->cbase + v, ks, co, nz);
	}
	free(ks);
	free(co);
	return rc;
}

/* Increments the path counters would execute at these frequencies. */
static double paths_cost(const struct cfg *g, const struct paths *ps, const double *freq)
{
	double n = 0;
	for (uint32_t j = 0; j < ps->ncounters; j++)
		n += paths_edge_freq(g, &ps->e[ps->counter_edge[j]], freq);
	return n;
}

/* Increments one counter per site would execute: every block's inflow
 * for each of its sites. */
static double sites_cost(const struct cfg *g, const double *freq)
{
	double n = 0;
	for (uint32_t s = 0; s < g->nsites; s++) {
		uint32_t b = g->site_block[s];
		double in = freq[g->nnormal + b];
		for (uint32_t i = 0; i < g->nnormal; i++)
			if (g->e[i].to == b)
				in += freq[i];
		n += in;
	}
	return n;
}

/* A constructor's super() or this() call: the one invokespecial <init> that
 * no `new` before it in code order is waiting for (javac brackets every
 * `new` with its <init> in one expression), with no branch into the code
 * up to it from after it, nor a handler starting in that code.  Its
 * instruction index, or NOT_SET when the code does not look like that
 * (two candidates, a jump back, a handler over it). */
static uint32_t ctor_init_call(const struct cf_class *c, const struct cf_code *k, const struct cf_insn *v, uint32_t n)
{
	uint32_t pending = 0, init = NOT_SET;
	for (uint32_t i = 0; i < n; i++) {
		const struct cf_insn *in = &v[i];
		if (in->op == 187) { /* new */
			pending++;
		} else if (in->op == 183) { /* invokespecial */
			uint16_t ref = get2(k->code + in->pc + 1);
			if (!cf_utf8_eq(c, cf_ref_name(c, ref), "<init>"))
				continue;
			if (pending) {
				pending--;
			} else {
				if (init != NOT_SET)
					return NOT_SET;
				init = i;
			}
		}
	}
	if (init == NOT_SET)
		return NOT_SET;
	uint32_t end_pc = v[init].pc;
	for (uint32_t i = init + 1; i < n; i++) {
		const struct cf_insn *in = &v[i];
		if ((in->kind == IK_COND || in->kind == IK_GOTO) && in->target0 <= end_pc)
			return NOT_SET;
		for (uint32_t t = 0; in->kind == IK_SWITCH && t < in->ntargets; t++)
			if (in->targets[t] <= end_pc)
				return NOT_SET;
	}
	for (uint32_t e = 0; e < k->nexc; e++)
		if (k->exc[e].start <= end_pc || k->exc[e].handler <= end_pc)
			return NOT_SET;
	return init;
}

/* Whether a counter on pedge e is placed after instruction init
 * (instrument.h: where each kind of edge puts its snippet). */
static int edge_after(const struct cfg *g, const struct pedge *e, uint32_t init)
{
	if (e->from == PATHS_X)
		return e->to != 0 && g->b[e->to].first > init;
	return g->b[e->from].end - 1 >= init;
}

/* plan_ctor_paths' counters, from the CFG alone: 1 every counter lies
 * after the call (ps planned), 0 not, <0 an error of paths.h (ps to be
 * freed by the caller either way). */
static int ctor_counters(const struct cfg *g, const double *freq, uint32_t init, struct paths *ps)
{
	uint32_t *forced = NULL;
	int rc = paths_build(g, freq, ps);
	if (rc || (rc = paths_place(ps, g, NULL)))
		goto out;
	rc = -ENOMEM;
	if (!(forced = malloc((ps->npaths + 1) * sizeof(uint32_t))))
		goto out;
	for (uint32_t p = 0; p < ps->npaths; p++) {
		forced[p] = PATHS_NONE;
		uint32_t cur = ps->p[p].counter_edge;
		if (cur == PATHS_NONE || edge_after(g, &ps->e[cur], init))
			continue;
		for (uint32_t k = 0; k < ps->p[p].n; k++) {
			uint32_t i = ps->edge_list[ps->p[p].first + k];
			if (edge_after(g, &ps->e[i], init) &&
			    (forced[p] == PATHS_NONE || ps->e[i].share < ps->e[forced[p]].share))
				forced[p] = i;
		}
	}
	if ((rc = paths_place(ps, g, forced)) || (rc = paths_semantics(ps, g)))
		goto out;
	rc = 1;
	for (uint32_t j = 0; j < ps->ncounters && rc; j++)
		rc = edge_after(g, &ps->e[ps->counter_edge[j]], init);
out:
	free(forced);
	return rc;
}

/* Path counters for a constructor with corrections in the bytecode: the
 * code up to its super() call (instruction init) runs with `this`
 * uninitialized, where no handler may cover it, so nothing there may
 * need a correction.  Each path's counter goes on its least-shared edge
 * placed after the call; the plan holds if every counter lies there and
 * no run needing a correction starts up to the call (so: no allocation in
 * the super() arguments).  1 planned, 0 not (mp->ps freed), <0 fatal. */
static int plan_ctor_paths(const struct rw *r, const double *freq, struct method_plan *mp, uint32_t init)
{
	struct paths *ps = &mp->ps;
	struct corr_runs cr = { 0 };
	int rc = ctor_counters(&mp->g, freq, init, ps), holds = rc > 0;
	if (rc < 0)
		goto out;
	if (holds && (rc = correction_runs(r, mp, &cr)))
		goto out;
	for (uint32_t x = 0; x < cr.n && holds; x++)
		holds = cr.run[x].first > init;
	rc = holds && ps->ncounters ? 1 : 0;
out:
	if (rc < 0 && rc != -ENOMEM)
		rc = 0; /* too large for paths: per site, as before */
	if (rc <= 0)
		paths_free(ps);
	corr_runs_free(&cr);
	return rc;
}

/* A counter's edge as (from, to, cfg edge), for comparing plans. */
struct edge_key {
	uint32_t from, to, cfg_edge;
};

/* paths_plan, but with the path counter of each counted loop (loops.h;
 * latch[2l], latch[2l + 1]: its latch and head blocks) forced onto the
 * loop's back edge, where it counts the turns: the loop's variable holds
 * them at its exits, where sink->trip's adds go.  trip_counter[l] (NULL:
 * not wanted): the counter (ps index) on loop l's back edge, NOT_SET if
 * none is in the end (empty semantics: the loop is counted as any).  On
 * failure ps is freed. */
static int plan_forced(const struct cfg *g, const double *freq, const uint32_t *latch, uint32_t nlatch,
		       struct paths *ps, uint32_t *trip_counter)
{
	uint32_t *forced = NULL, *pe = malloc((nlatch + 1) * sizeof(uint32_t));
	int rc = pe ? paths_build(g, freq, ps) : -ENOMEM;
	if (rc)
		goto out;
	if (!(forced = malloc((ps->npaths + 1) * sizeof(uint32_t)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t p = 0; p < ps->npaths; p++)
		forced[p] = PATHS_NONE;
	for (uint32_t l = 0; l < nlatch; l++) {
		pe[l] = paths_find_edge(ps, latch[2 * l], latch[2 * l + 1]);
		if (pe[l] != PATHS_NONE && forced[ps->e[pe[l]].path] == PATHS_NONE)
			forced[ps->e[pe[l]].path] = pe[l];
		else
			pe[l] = PATHS_NONE; /* two loops' back edges on one path: the first */
	}
	if ((rc = paths_place(ps, g, forced)) || (rc = paths_semantics(ps, g)))
		goto out;
	for (uint32_t l = 0; trip_counter && l < nlatch; l++) {
		trip_counter[l] = NOT_SET;
		for (uint32_t j = 0; j < ps->ncounters && pe[l] != PATHS_NONE; j++)
			if (ps->counter_edge[j] == pe[l])
				trip_counter[l] = j;
	}
out:
	free(forced);
	free(pe);
	if (rc)
		paths_free(ps);
	return rc;
}

static int edge_key_cmp(const void *a, const void *b)
{
	const struct edge_key *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return x->cfg_edge < y->cfg_edge ? -1 : x->cfg_edge > y->cfg_edge;
}

int instr_plan_unchanged(const struct cfg *g, uint32_t init, const double *freq, uint32_t nedges,
			 const struct pedge *e, const uint32_t *counter, const uint32_t *latch, uint32_t nlatch)
{
	struct paths ps;
	memset(&ps, 0, sizeof(ps));
	/* a constructor: planned as plan_ctor_paths does (its correction runs
	 * do not matter here: the same counter edges execute the same
	 * increments) */
	int rc;
	if (init == UINT32_MAX)
		rc = nlatch ? plan_forced(g, freq, latch, nlatch, &ps, NULL) : paths_plan(g, freq, &ps);
	else if ((rc = ctor_counters(g, freq, init, &ps)) >= 0)
		rc = rc ? 0 : -EINVAL; /* a counter would lie before the call: per site */
	if (rc) {
		paths_free(&ps);
		return rc == -ENOMEM ? rc : 0;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < nedges; i++)
		n += counter[i] != UINT32_MAX;
	struct edge_key *a = malloc((n + 1) * sizeof(*a)), *b = malloc((ps.ncounters + 1) * sizeof(*b));
	rc = a && b ? 0 : -ENOMEM;
	if (rc || n != ps.ncounters || (freq && paths_cost(g, &ps, freq) > sites_cost(g, freq)))
		goto out;
	for (uint32_t i = 0, k = 0; i < nedges; i++)
		if (counter[i] != UINT32_MAX)
			a[k++] = (struct edge_key){ e[i].from, e[i].to, e[i].cfg_edge };
	for (uint32_t j = 0; j < n; j++) {
		const struct pedge *x = &ps.e[ps.counter_edge[j]];
		b[j] = (struct edge_key){ x->from, x->to, x->cfg_edge };
	}
	qsort(a, n, sizeof(*a), edge_key_cmp);
	qsort(b, n, sizeof(*b), edge_key_cmp);
	rc = !memcmp(a, b, n * sizeof(*a));
out:
	free(a);
	free(b);
	paths_free(&ps);
	return rc;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

uint64_t instr_code_hash(const struct cf_code *k)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ull, k->code, k->len);
	for (uint32_t i = 0; i < k->nexc; i++) {
		const struct cf_exc *x = &k->exc[i];
		uint8_t b[8] = { x->start >> 8, x->start & 0xff, x->end >> 8, x->end & 0xff,
				 x->handler >> 8, x->handler & 0xff, x->catch_type >> 8, x->catch_type & 0xff };
		h = fnv1a(h, b, sizeof(b));
	}
	return h;
}

/* Whether m's counted loops are counted at their exits: loops=on, but not
 * in a constructor planned with bytecode corrections (plan_ctor_paths).
 * Bytecode corrections add a loop's count so far when an exception leaves
 * it (emit_handler); reported ones (sink->correction) do not: the sink
 * must not ask for loops with those applied. */
static int uses_loops(const struct instr_sink *sink, const struct cf_class *c, const struct cf_member *m)
{
	return sink->loops && sink->trip && !(sink->bytecode && cf_utf8_eq(c, m->name, "<init>"));
}

/* The method's counted loops (loops.h) into mp->tl. */
static int find_loops(struct rw *r, struct method_plan *mp)
{
	struct cf_frame *frames;
	const struct cf_code_attr *smt = code_smt(r->k);
	int rc = rw_old_frames(r, &frames);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return 0; /* frames that do not expand: no loops */
	return trip_loops_find(&mp->g, r->v, r->k, frames, smt ? smt->u.smt.n : 0, r->c->major >= 50, &mp->tl);
}

/* plan_forced for the method's counted loops (mp->tl), into
 * mp->trip_counter. */
static int plan_loop_paths(const double *freq, struct method_plan *mp)
{
	uint32_t *latch = loop_latches(mp);
	mp->trip_counter = malloc((mp->tl.n + 1) * sizeof(uint32_t));
	if (!latch || !mp->trip_counter) {
		free(latch);
		return -ENOMEM;
	}
	int rc = plan_forced(&mp->g, freq, latch, mp->tl.n, &mp->ps, mp->trip_counter);
	free(latch);
	return rc;
}

/* Plans the method's path counters (mp->ps) from the measured
 * frequencies sink->freq has for it, or from the static heuristics; or
 * sets *mode to INSTR_SITES when the measured frequencies say that one
 * counter per site executes fewer increments.  1 planned, 0 left alone (a
 * reason counted), <0 fatal. */
static int plan_paths(const struct rw *r, const struct instr_sink *sink, struct method_plan *mp,
		      struct instr_stats *st, enum instr_mode *mode)
{
	struct cf_class *c = r->c;
	const struct cf_member *m = r->m;
	const double *freq = NULL;
	int sites = 0;
	if (sink->freq) {
		const char *cn, *mn, *md;
		uint16_t cl, nl, dl;
		if (!member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl))
			freq = sink->freq(sink->ctx, cn, cl, mn, nl, md, dl, mp->code_hash, mp->g.nblocks, mp->g.nnormal,
					  &sites);
	}
	if (sites) {
		st->per_site++;
		*mode = INSTR_SITES;
		return 1;
	}
	int rc;
	if (sink->bytecode && cf_utf8_eq(c, m->name, "<init>")) {
		/* no handler may cover a constructor's super() or this() call,
		 * nor code before it: path counters after the call, or one
		 * counter per site (exact without handlers) */
		uint32_t init = ctor_init_call(c, r->k, r->v, r->n);
		rc = init == NOT_SET ? 0 : plan_ctor_paths(r, freq, mp, init);
		mp->init = init;
		if (rc < 0)
			return rc;
		if (!rc) {
			st->ctor_sites++;
			*mode = INSTR_SITES;
			return 1;
		}
		rc = 0;
	} else if (mp->tl.n) {
		rc = plan_loop_paths(freq, mp);
	} else {
		rc = paths_plan(&mp->g, freq, &mp->ps);
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0 || !mp->ps.ncounters) {
		rc ? st->skipped++ : st->no_allocs++;
		return 0;
	}
	if (freq && paths_cost(&mp->g, &mp->ps, freq) > sites_cost(&mp->g, freq)) {
		paths_free(&mp->ps);
		st->per_site++;
		*mode = INSTR_SITES;
	}
	return 1;
}

/* The counted loop whose back edge carries counter j, or NOT_SET. */
static uint32_t trip_loop_of(const struct method_plan *mp, uint32_t j)
{
	for (uint32_t l = 0; mp->trip_counter && l < mp->tl.n; l++)
		if (mp->trip_counter[l] == j)
			return l;
	return NOT_SET;
}

/* A counted loop's counter: its add at the start of every exit target
 * (instead of an increment on the back edge). */
static int place_trip(struct rw *r, const struct method_plan *mp, uint32_t l, uint32_t counter)
{
	const struct trip_loop *tl = &mp->tl.l[l];
	int rc = 0;
	for (uint32_t x = 0; x < tl->nexits && !rc; x++) {
		rc = add_snip(r, SN_TRIP, mp->g.b[mp->tl.exit[tl->exit_first + x]].first, counter, NOT_SET);
		if (!rc)
			r->s[r->ns - 1].var = tl->var;
	}
	/* blocks outside entering an exit target: var = 0 as they leave,
	 * before their goto, or where only their fall-through passes */
	for (uint32_t z = 0; z < tl->nzero && !rc; z++) {
		const struct cfg_block *b = &mp->g.b[mp->tl.zero[tl->zero_first + z]];
		uint32_t last = b->end - 1;
		rc = r->v[last].kind == IK_GOTO ? add_snip(r, SN_LABEL, last, NOT_SET, NOT_SET)
						: add_snip(r, SN_FT, last + 1, NOT_SET, NOT_SET);
		if (!rc) {
			r->s[r->ns - 1].var = tl->var;
			r->s[r->ns - 1].zero = 1;
		}
	}
	return rc;
}

/* Places the plan's counters base + j (mp->ps): a counted loop's adds at
 * its exits, the others on their edges.  0 or <0. */
static int place_counters(struct rw *r, const struct method_plan *mp, uint32_t base, uint64_t *stubs)
{
	const struct paths *ps = &mp->ps;
	uint32_t *indeg = calloc(mp->g.nblocks + 1, sizeof(uint32_t)), *outdeg = calloc(mp->g.nblocks + 1, sizeof(uint32_t));
	int rc = indeg && outdeg ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < ps->nedges && !rc; i++) {
		if (ps->e[i].from != PATHS_X)
			outdeg[ps->e[i].from]++;
		if (ps->e[i].to != PATHS_X)
			indeg[ps->e[i].to]++;
	}
	for (uint32_t j = 0; j < ps->ncounters && !rc; j++) {
		uint32_t l = trip_loop_of(mp, j);
		rc = l != NOT_SET ? place_trip(r, mp, l, base + j)
				  : place(r, &mp->g, ps, indeg, outdeg, ps->counter_edge[j], base + j, stubs);
	}
	free(indeg);
	free(outdeg);
	return rc;
}

/* Per-site counting (INSTR_SITES): counter s right after site s, meaning
 * that site once.  Fills mp->ps's counters and places the snippets. */
static int plan_sites(struct rw *r, struct method_plan *mp, uint32_t base)
{
	uint32_t ns = mp->g.nsites;
	mp->ps.nsites = ns;
	mp->ps.ncounters = ns;
	mp->ps.sem = calloc((size_t)ns * ns, sizeof(int32_t));
	if (!mp->ps.sem)
		return -ENOMEM;
	int rc = 0;
	for (uint32_t s = 0; s < ns && !rc; s++) {
		mp->ps.sem[(size_t)s * ns + s] = 1;
		/* an allocating instruction never ends a block: a next one exists */
		rc = add_snip(r, SN_FT, r->pci[mp->g.site_pc[s]] + 1, base + s, NOT_SET);
	}
	return rc;
}

/* The block holding instruction i (blocks are in code order). */
static uint32_t block_of(const struct cfg *g, uint32_t i)
{
	uint32_t lo = 0, hi = g->nblocks;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->b[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A method descriptor with the marker parameter appended, into out[cap];
 * 0, or -1 if desc is no method descriptor or does not fit. */
static int clone_desc(const char *d, size_t dl, char *out, size_t cap)
{
	const char *close = dl ? memchr(d, ')', dl) : NULL;
	if (!close || d[0] != '(' || dl + sizeof(INSTR_INLINE_MARKER) + 2 > cap)
		return -1;
	snprintf(out, cap, "%.*sL%s;%.*s", (int)(close - d), d, INSTR_INLINE_MARKER, (int)(dl - (size_t)(close - d)),
		 close);
	return 0;
}

/* Whether a block holds an allocating instruction. */
static int block_allocates(const struct method_plan *mp, uint32_t b)
{
	for (uint32_t s = 0; s < mp->g.nalloc; s++)
		if (mp->g.site_block[s] == b)
			return 1;
	return 0;
}

/* Whether block b is in a counted loop (loops.h): a call there counts at
 * the loop's exits, once per run of the loop, like its allocations. */
static int in_counted_loop(const struct method_plan *mp, uint32_t b)
{
	return mp->tl.loop_of && mp->tl.loop_of[b] != TRIP_NONE;
}

/* Counter inlining, the caller's side: every invokespecial, invokestatic
 * or invokevirtual of a class's method (a Methodref) whose clone the sink
 * knows is redirected to it (r->inl_ref) and becomes a site of its own
 * (mp->callee), if its block allocates.  A call next to an allocation
 * (the `new` of a constructor call) is on the same walks, so every
 * counter gets the same coefficient for it as for the allocation: no
 * counter that was dropped for empty semantics comes back, and the
 * caller executes the increments it did before, while the callee's are
 * gone.  A call elsewhere could make such counters (a side path skipping
 * the call gets a correction), each costing what the clone saves.
 * 0 or -ENOMEM. */
static int find_inlined(struct rw *r, struct method_plan *mp, const struct instr_sink *sink, int loops_only)
{
	uint32_t cap = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		const struct cf_insn *in = &r->v[i];
		uint16_t ci, ni, di, cl, nl, dl, ref = in->len >= 3 ? get2(r->k->code + in->pc + 1) : 0;
		if ((in->op != 182 && in->op != 183 && in->op != 184) || ref >= r->c->cp_count ||
		    r->c->cp_tag[ref] != CP_METHODREF || cf_ref_parts(r->c, ref, &ci, &ni, &di))
			continue;
		const char *cn = cf_utf8(r->c, ci, &cl), *mn = cf_utf8(r->c, ni, &nl), *d = cf_utf8(r->c, di, &dl);
		char owner[1024], name[1024], desc[1100];
		uint32_t b = block_of(&mp->g, i);
		if (!cn || !mn || !d || cl >= sizeof(owner) || nl >= sizeof(name) || clone_desc(d, dl, desc, sizeof(desc)) ||
		    (in->op != 183 && cf_utf8_eq(r->c, ni, "<init>")) ||
		    (!in_counted_loop(mp, b) && (loops_only || !block_allocates(mp, b))))
			continue;
		uint32_t h = sink->callee(sink->ctx, cn, cl, mn, nl, d, dl);
		if (h == UINT32_MAX)
			continue;
		memcpy(owner, cn, cl);
		owner[cl] = 0;
		memcpy(name, mn, nl);
		name[nl] = 0;
		ref = cf_cp_methodref(r->c, owner, name, desc);
		if (!ref)
			continue; /* the pool is full: the call stays */
		uint32_t k = mp->g.nsites - mp->g.nalloc;
		if (!r->inl_ref && !(r->inl_ref = calloc(r->n, sizeof(*r->inl_ref))))
			return -ENOMEM;
		if (k == cap) {
			cap = cap ? 2 * cap : 8;
			uint32_t *a = realloc(mp->callee, cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			mp->callee = a;
		}
		if (cfg_add_site(&mp->g, b, in->pc))
			return -ENOMEM;
		mp->callee[k] = h;
		r->inl_ref[i] = ref;
	}
	return 0;
}

/* The clones a method's calls were redirected to (mp->callee), in site
 * order: what its own clone must redirect too (do_counted_clone). */
struct inl_calls {
	uint32_t n;
	uint32_t *callee;   /* [n], owned */
	uint32_t *pc;       /* [n], owned: the calls' bytecode offsets */
};

/* 1 instrumented, 0 left alone (a reason counted), <0 fatal.  *idp: the
 * method's id with the sink, UINT32_MAX if it was left alone.  calls (may
 * be NULL): filled for an instrumented method (the caller frees callee). */
/* Whether class name n[0..len) is the JDK's (as instr_sink.caller means it). */
static int jdk_class(const char *n, size_t len)
{
	static const char *const prefixes[] = { "java/", "javax/", "jdk/", "sun/", "com/sun/" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);
		if (len >= pl && !strncmp(n, prefixes[i], pl))
			return 1;
	}
	return 0;
}

/* Whether instruction i calls into the JDK: an invokedynamic (its call
 * site is the JDK's: string concatenation, lambdas), or an invoke of a
 * method of a JDK class other than Object's constructor (every
 * constructor calls it; it allocates nothing). */
static int calls_jdk(const struct rw *r, uint32_t i)
{
	const struct cf_insn *in = &r->v[i];
	if (in->op == 0xba)
		return 1;
	if (in->op < 0xb6 || in->op > 0xb9)
		return 0;
	uint16_t cls, name, desc, cl;
	if (cf_ref_parts(r->c, get2(r->k->code + in->pc + 1), &cls, &name, &desc))
		return 0;
	const char *n = cf_utf8(r->c, cls, &cl);
	if (!n || !jdk_class(n, cl))
		return 0;
	return !(cl == 16 && !memcmp(n, "java/lang/Object", 16) && cf_utf8_eq(r->c, name, "<init>"));
}

/* The application's calls into the JDK (sink->caller): each gets its
 * caller id, and the method a local for the caller's context.  *n: how
 * many.  0 or -ENOMEM. */
static int find_jdk_calls(struct rw *r, const struct instr_sink *sink, uint32_t *n)
{
	*n = 0;
	if (!r->ctxref)
		return 0;
	uint16_t nl, dl;
	const char *mn = cf_utf8(r->c, r->m->name, &nl), *md = cf_utf8(r->c, r->m->desc, &dl);
	for (uint32_t i = 0; i < r->n && mn && md; i++) {
		if (!calls_jdk(r, i))
			continue;
		uint32_t id = sink->caller(sink->ctx, mn, nl, md, dl, r->v[i].pc, cf_line_of(r->k, r->v[i].pc));
		if (!id || id > INT32_MAX)
			continue;
		if (!r->ctx_id && !(r->ctx_id = calloc(r->n, sizeof(*r->ctx_id))))
			return -ENOMEM;
		r->ctx_id[i] = id;
		(*n)++;
	}
	r->ctx_var = r->k->max_locals;
	return 0;
}

/* A method without allocations that calls into the JDK: only the
 * caller-context code.  No thread entry call (sink->threads): a thread
 * that only runs such methods increments no counter plainly (the JDK's
 * counting sends it to the atomic side, heapfs.Threads.j), so it is not
 * one whose races threads_max reports (ThreadsMax idle: a sleeper
 * calling Thread.sleep, a TimerTask calling Thread.yield).  The price:
 * its calls get no caller counts until it runs a method with counters.
 * 1 rewritten, 0 left alone, or a negative errno. */
static int do_calls_only(struct cf_class *c, struct cf_member *m, struct rw *r, const struct method_plan *mp,
			 const struct instr_sink *sink, uint16_t entryref, uint32_t *idp)
{
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	if (member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl))
		return -EINVAL;
	(void)entryref; /* no Threads.e(): such a method makes no plain increment of its own */
	struct cf_code saved = *m->code;
	m->code->max_locals = (uint16_t)(r->ctx_var + 1);
	int rc = r->ctx_var + 1 > 65535 ? -E2BIG : rw_apply(r, 1);
	if (rc) {
		*m->code = saved;
		return rc == -ENOMEM ? rc : 0;
	}
	raise_max_stack(m->code);
	uint32_t id = sink->method(sink->ctx, cn, cl, mn, nl, md, dl, 0, mp->code_hash, mp->g.nblocks, mp->g.nnormal);
	if (id == UINT32_MAX)
		return -ENOMEM;
	*idp = id;
	return 1;
}

/* heapfs/Threads.c:I in c's pool when the application's calls into the
 * JDK are marked (sink->caller, not in the JDK's own classes), else 0. */
static uint16_t ctxref_of(struct cf_class *c, const struct instr_sink *sink)
{
	return sink->caller && !sink->jdk ? cf_cp_fieldref(c, INSTR_THREADS_CLASS, INSTR_THREADS_CALLER, "I") : 0;
}

/* Whether the method can be left alone without decoding it: it has no
 * allocating instruction, and nothing else would rewrite it (the calls
 * into the JDK that sink->caller marks, the calls of clones that
 * sink->callee counts, both only outside the JDK's classes).  Most
 * methods allocate nothing (BoxingChurn with jdk=on: 4,343 of the 5,908
 * methods of the 231 classes instrumented); decoding them and building
 * their graphs took about 15% of the instrumenter's time on the JDK's
 * classes (tests/bench/bench_instrument.c).  Code that does not scan is
 * decoded as before (which leaves it alone as skipped). */
/* Whether code has an allocating instruction or a call of an allocating
 * intrinsic, or does not scan (then it may: instr_stats.uncounted is the
 * conservative side). */
static int code_allocates(const struct cf_class *c, const struct cf_code *k)
{
	for (uint32_t pc = 0; pc < k->len;) {
		int l = cf_insn_len(k->code, k->len, pc);
		if (l <= 0 || cf_insn_allocates(c, k->code, pc, l))
			return 1;
		pc += (uint32_t)l;
	}
	return 0;
}

static int no_allocs_fast(const struct cf_class *c, const struct cf_member *m, const struct instr_sink *sink,
			  enum instr_mode mode)
{
	if (mode == INSTR_RELAYOUT || (!sink->jdk && (sink->caller || sink->callee)))
		return 0;
	return !code_allocates(c, m->code);
}

static int do_method(struct cf_class *c, struct cf_member *m, const struct instr_sink *sink, enum instr_mode mode,
		     struct instr_stats *st, uint16_t fieldref, uint16_t methodref, uint16_t entryref, uint32_t *idp,
		     struct inl_calls *calls)
{
	*idp = UINT32_MAX;
	if (!calls && no_allocs_fast(c, m, sink, mode)) {
		st->no_allocs++;
		return 0;
	}
	struct method_plan mp = { .init = NOT_SET };
	struct corr_plan cp = { 0 };
	struct rw r;
	const enum instr_mode asked = mode; /* plan_paths may choose one counter per site */
	const uint64_t skipped0 = st->skipped;
	const struct cf_code *orig = m->code; /* restored on every path that leaves it alone */
	int rc = rw_open(&r, c, m, fieldref, methodref);
	if (rc) {
		if (rc == -EINVAL) { /* the code does not decode: left alone */
			st->skipped++;
			rc = 0;
		}
		goto out;
	}
	if (mode == INSTR_RELAYOUT) {
		rc = rw_apply(&r, 0);
		rc = rc ? rc : 1;
		goto out;
	}
	rc = cfg_build(r.v, r.n, m->code, &mp.g);
	mp.code_hash = instr_code_hash(m->code);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		st->skipped++;
		rc = 0;
		goto out;
	}
	if (mode == INSTR_PATHS && !sink->jdk && uses_loops(sink, c, m) && (rc = find_loops(&r, &mp)))
		goto out;
	if (mode == INSTR_PATHS && sink->callee && !sink->jdk && (rc = find_inlined(&r, &mp, sink, 0)))
		goto out;
	uint32_t njdk = 0;
	r.ctxref = calls ? 0 : ctxref_of(c, sink);
	if ((rc = find_jdk_calls(&r, sink, &njdk)))
		goto out;
	if (!mp.g.nsites && njdk) {
		rc = do_calls_only(c, m, &r, &mp, sink, entryref, idp);
		st->calls_only += rc > 0;
		st->skipped += rc == 0;
		goto out;
	}
	if (!mp.g.nsites) {
		st->no_allocs++;
		goto out;
	}

	rc = -ENOMEM;
	if (!(mp.line = malloc((mp.g.nalloc + 1) * sizeof(uint32_t))) || !(mp.type = malloc((size_t)(mp.g.nalloc + 1) * 256)))
		goto out;
	for (uint32_t s = 0; s < mp.g.nalloc; s++) {
		mp.line[s] = cf_line_of(m->code, mp.g.site_pc[s]);
		site_type(c, m->code, mp.g.site_pc[s], mp.type + (size_t)s * 256, 256);
	}
	uint32_t base;
	uint64_t stubs = 0;
	if (mode == INSTR_PATHS && (rc = plan_paths(&r, sink, &mp, st, &mode)) <= 0)
		goto out;
	if (mode == INSTR_SITES) {
		if ((base = sink->reserve(sink->ctx, mp.g.nsites)) == UINT32_MAX) {
			st->skipped++;
			rc = 0;
			goto out;
		}
		if ((rc = plan_sites(&r, &mp, base)))
			goto out;
		goto apply;
	}
	base = sink->reserve(sink->ctx, mp.ps.ncounters);
	if (base == UINT32_MAX) {
		st->skipped++;
		goto out;
	}
	if ((rc = place_counters(&r, &mp, base, &stubs)))
		goto out;
apply:;
	/* the thread's first counted code (heapfs.Threads, sink->threads) */
	if (entryref) {
		if ((rc = add_snip(&r, SN_FT, 0, 0, NOT_SET)))
			goto out;
		r.s[r.ns - 1].entry = 1;
		r.entryref = entryref;
	}
	if (mode == INSTR_PATHS && sink->bytecode) {
		if ((rc = plan_corr_handlers(&r, &mp, &cp)))
			goto out;
		cp.tbase = base;
		if (cp.nvec && (cp.cbase = sink->reserve(sink->ctx, cp.nvec)) == UINT32_MAX) {
			st->skipped++;
			goto out;
		}
		r.tail_len = corr_tail_len(&r, &cp);
	}
	/* the code is only replaced when everything fits */
	struct cf_code saved = *m->code;
	if (njdk)
		m->code->max_locals = (uint16_t)(r.ctx_var + 1);
	if (njdk && r.ctx_var + 1 > 65535)
		rc = -E2BIG;
	else
	rc = rw_apply(&r, 1);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		*m->code = saved;
		st->skipped++;
		rc = 0; /* its counters stay reserved, never incremented */
		goto out;
	}
	raise_max_stack(m->code);
	/* past here a failure fails the class (out untouched) */
	if (cp.nvec && (rc = emit_corr_handlers(&r, &cp)) != 0)
		goto out;
	uint32_t id;
	if ((rc = announce(c, m, &mp, sink, base, &id)))
		goto out;
	*idp = id;
	if (asked == INSTR_PATHS && mode == INSTR_SITES && sink->sites_chosen)
		sink->sites_chosen(sink->ctx, id);
	if (mode == INSTR_PATHS && !sink->bytecode && (rc = report_corrections(&r, &mp, sink, id)))
		goto out;
	if (cp.nvec && (rc = announce_corr_counters(&cp, &mp, sink, id, NULL)))
		goto out;
	if (mode == INSTR_PATHS && (rc = announce_trips(&mp, sink, id, base, st)))
		goto out;
	st->corr_handlers += cp.nvec;
	st->corr_stubs += cp.nstub;
	st->instrumented++;
	st->counters += mp.ps.ncounters;
	st->sites += mp.g.nalloc;
	st->stubs += stubs;
	st->inlined += mp.g.nsites - mp.g.nalloc;
	if (calls && mp.g.nsites > mp.g.nalloc) {
		calls->n = mp.g.nsites - mp.g.nalloc;
		calls->callee = mp.callee; /* handed over */
		mp.callee = NULL;
		if (!(calls->pc = malloc(calls->n * sizeof(uint32_t)))) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(calls->pc, mp.g.site_pc + mp.g.nalloc, calls->n * sizeof(uint32_t));
	}
	rc = 1;
out:
	if (st->skipped > skipped0 && code_allocates(c, orig))
		st->uncounted++;
	rw_free(&r);
	corr_plan_free(&cp);
	free(mp.callee);
	free(mp.line);
	free(mp.type);
	free(mp.trip_counter);
	trip_loops_free(&mp.tl);
	paths_free(&mp.ps);
	cfg_free(&mp.g);
	return rc;
}


/* ---- counter inlining: clones (paper §5) ---------------------------------- */

/* A method that gets a clone (instrument.h, sink->clone): the
 * allocations made by the end of each block, which do not depend on the
 * walk (no counters: phi of paths.h), and E, those of every normal
 * completion. */
struct clone_plan {
	uint32_t orig, clone;      /* method indexes */
	struct cfg g;              /* the original's, which is the clone's too */
	int32_t *phi;              /* [(g.nblocks + 1) * g.nsites], X's row zero */
	uint32_t *block_path;      /* [g.nblocks] 0 reached, PATHS_NONE not */
	int32_t *e;                /* [g.nsites] */
	int linked;                /* sink->linked: callers may call the clone already */
	int trampoline;            /* the clone calls the original (no g, phi, e) */
};

static void clone_plan_free(struct clone_plan *p)
{
	cfg_free(&p->g);
	free(p->phi);
	free(p->block_path);
	free(p->e);
	memset(p, 0, sizeof(*p));
}

/* Whether the profile linked callers to method m's clone (sink->linked). */
static int method_linked(const struct cf_class *c, const struct cf_member *m, const struct instr_sink *sink)
{
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	return sink->linked && !member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl) &&
	       sink->linked(sink->ctx, cn, cl, mn, nl, md, dl) == 1;
}

/* Adds block b's allocations to vec. */
static void add_block_allocs(const struct cfg *g, uint32_t b, int32_t *vec)
{
	for (uint32_t s = 0; s < g->nsites; s++)
		vec[s] += g->site_block[s] == b;
}

/* phi over the normal edges from the entry: phi(v) = phi(u) + allocs(v);
 * 1 if every block gets one value and every block ending in a return the
 * same non-zero E, 0 if not (an allocation on a branch or in a loop),
 * -ENOMEM. */
static int invariant_allocs(const struct cfg *g, struct clone_plan *p)
{
	uint32_t nb = g->nblocks, ns = g->nsites;
	/* block u's successors: g->e[first[u] .. first[u + 1]) (cfg_finish
	 * sorts the normal edges by their block) */
	uint32_t *first = calloc(nb + 1, sizeof(uint32_t));
	uint32_t *stack = malloc((nb + 1) * sizeof(uint32_t));
	int32_t *cand = malloc(ns * sizeof(int32_t));
	p->phi = calloc((size_t)(nb + 1) * ns, sizeof(int32_t));
	p->block_path = malloc(nb * sizeof(uint32_t));
	p->e = calloc(ns, sizeof(int32_t));
	int rc = first && stack && cand && p->phi && p->block_path && p->e ? 1 : -ENOMEM;
	if (rc < 0)
		goto out;
	for (uint32_t i = 0; i < g->nnormal; i++)
		first[g->e[i].from + 1]++;
	for (uint32_t b = 0; b < nb; b++)
		first[b + 1] += first[b];
	for (uint32_t b = 0; b < nb; b++)
		p->block_path[b] = PATHS_NONE;
	uint32_t sp = 0;
	p->block_path[0] = 0;
	add_block_allocs(g, 0, p->phi);
	stack[sp++] = 0;
	while (sp && rc == 1) {
		uint32_t u = stack[--sp];
		for (uint32_t x = first[u]; x < first[u + 1] && rc == 1; x++) {
			uint32_t w = g->e[x].to;
			memcpy(cand, p->phi + (size_t)u * ns, ns * sizeof(int32_t));
			add_block_allocs(g, w, cand);
			if (p->block_path[w] == PATHS_NONE) {
				p->block_path[w] = 0;
				memcpy(p->phi + (size_t)w * ns, cand, ns * sizeof(int32_t));
				stack[sp++] = w;
			} else if (memcmp(p->phi + (size_t)w * ns, cand, ns * sizeof(int32_t))) {
				rc = 0;
			}
		}
	}
	int returns = 0;
	for (uint32_t b = 0; b < nb && rc == 1; b++) {
		if (p->block_path[b] == PATHS_NONE || !g->b[b].exit || g->b[b].throws)
			continue;
		if (!returns++)
			memcpy(p->e, p->phi + (size_t)b * ns, ns * sizeof(int32_t));
		else if (memcmp(p->e, p->phi + (size_t)b * ns, ns * sizeof(int32_t)))
			rc = 0;
	}
	int any = 0;
	for (uint32_t s = 0; s < ns; s++)
		any |= p->e[s] != 0;
	if (rc == 1 && (!returns || !any))
		rc = 0;
out:
	free(first);
	free(stack);
	free(cand);
	return rc;
}

/* Whether method m gets a clone (instrument.h): a constructor, or a
 * method only one instruction can call (static, private, final, or of a
 * final class; not in an interface); no exception table; the same
 * allocations on every normal completion; a constructor's all after its
 * super() or this() call (no handler may cover that call, so nothing
 * before it may need a correction).  1 (p filled), 0 not, <0 fatal. */
static int clone_eligible(struct cf_class *c, struct cf_member *m, struct clone_plan *p)
{
	int ctor = cf_utf8_eq(c, m->name, "<init>");
	if (!m->code || m->code->nexc || (c->access & 0x0200) || cf_utf8_eq(c, m->name, "<clinit>") ||
	    (!ctor && !(m->access & 0x001A) && !(c->access & 0x0010))) /* static|private|final, final class */
		return 0;
	struct cf_insn *v;
	uint32_t n;
	struct cfg *g = &p->g;
	int rc = decode_method(c, m, &v, &n);
	if (rc)
		return rc == -ENOMEM ? rc : 0;
	if ((rc = cfg_build(v, n, m->code, g)))
		goto out;
	uint32_t init = ctor ? ctor_init_call(c, m->code, v, n) : NOT_SET;
	rc = (!ctor || init != NOT_SET) && g->nsites && (uint64_t)(g->nblocks + 1) * g->nsites <= PATHS_MAX_CELLS;
	for (uint32_t s = 0; s < g->nsites && rc && ctor; s++)
		rc = g->site_pc[s] > v[init].pc;
	if (rc)
		rc = invariant_allocs(g, p);
out:
	if (rc <= 0)
		clone_plan_free(p);
	return rc == -ENOMEM ? rc : rc > 0;
}

/* The next parameter of a method descriptor, *p inside its parentheses:
 * the parameter's first letter ('[' for an array, 'L' for a class), *p
 * moved past it.  0 at the ')' or where the descriptor breaks off (*p
 * then at the ')' or at the NUL). */
static char next_param(const char **p)
{
	const char *t = *p;
	char first = *t;
	if (!first || first == ')')
		return 0;
	while (*t == '[')
		t++;
	if (*t == 'L')
		t = strchr(t, ';');
	if (!t || !*t) {
		*p += strlen(*p);
		return 0;
	}
	*p = t + 1;
	return first;
}

/* Local-variable slots a parameter of first letter t takes. */
static uint32_t param_size(char t)
{
	return t == 'J' || t == 'D' ? 2 : 1;
}

/* Local-variable slots of a method descriptor's parameters. */
static uint32_t param_slots(const char *d)
{
	uint32_t n = 0;
	char t;
	for (const char *p = d + 1; (t = next_param(&p));)
		n += param_size(t);
	return n;
}

/* Appends the clone of method orig (room for it is there): the same name,
 * access (bridge and varargs dropped) and code, synthetic, the marker
 * parameter last; its frames as complete states against the original's
 * parameters (its own first frame is the original's plus the marker,
 * which the code overwrites like any free slot).  1 added (*out its
 * index), 0 not (the descriptor exists, the pool is full), <0 fatal. */
static int add_clone(struct cf_class *c, uint32_t orig, uint32_t *out)
{
	const struct cf_member *m = &c->methods[orig];
	uint16_t dl;
	const char *d = cf_utf8(c, m->desc, &dl);
	char desc[1100];
	if (!d || clone_desc(d, dl, desc, sizeof(desc)))
		return 0;
	uint32_t slots = (m->access & 0x0008 ? 0 : 1) + param_slots(desc);
	if (slots > 255)
		return 0;
	uint16_t nl;
	const char *name = cf_utf8(c, m->name, &nl);
	for (uint32_t i = 0; name && i < c->nmethods; i++) {
		uint16_t l;
		const char *o = cf_utf8(c, c->methods[i].name, &l);
		if (o && l == nl && !memcmp(o, name, nl) && cf_utf8_eq(c, c->methods[i].desc, desc))
			return 0; /* (the pool may hold a name twice) */
	}
	uint16_t di = cf_cp_utf8(c, desc, strlen(desc)), code_name = cf_cp_utf8(c, "Code", 4);
	if (!di || !code_name)
		return 0;
	struct cf_code *k = cf_code_copy(c, m->code);
	struct cf_attr *at = cf_alloc(c, sizeof(*at));
	if (!k || !at)
		return -ENOMEM;
	for (uint32_t a = 0; a < k->nattrs; a++) {
		struct cf_code_attr *x = &k->attrs[a];
		if (x->kind != CA_SMT)
			continue;
		struct cf_frame *full;
		int rc = cf_frames_expand(c, m, x->u.smt.f, x->u.smt.n, &full);
		if (rc)
			return rc == -ENOMEM ? rc : 0;
		x->u.smt.f = full;
	}
	if (k->max_locals < slots)
		k->max_locals = (uint16_t)slots;
	at->name = code_name;
	struct cf_member *cm = &c->methods[c->nmethods];
	memset(cm, 0, sizeof(*cm));
	cm->access = (uint16_t)((m->access & ~0x00C0) | 0x1000); /* no bridge, varargs; synthetic */
	cm->name = m->name;
	cm->desc = di;
	cm->attrs = at;
	cm->nattrs = 1;
	cm->code_attr = 0;
	cm->code = k;
	*out = c->nmethods++;
	return 1;
}

/* Java serialization's identity of the class: 1 if it declares a static
 * final long serialVersionUID, -1 if it has a field so named that is not
 * one (Java ignores it), 0 if none. */
static int declared_suid(const struct cf_class *c)
{
	for (uint32_t i = 0; i < c->nfields; i++)
		if (cf_utf8_eq(c, c->fields[i].name, "serialVersionUID"))
			return (c->fields[i].access & 0x0018) == 0x0018 && cf_utf8_eq(c, c->fields[i].desc, "J") ? 1 : -1;
	return 0;
}

/* Adds `private static final long serialVersionUID = v`.  0 or <0. */
static int add_suid_field(struct cf_class *c, int64_t v)
{
	uint16_t name = cf_cp_utf8(c, "serialVersionUID", 16), desc = cf_cp_utf8(c, "J", 1);
	uint16_t cv = cf_cp_utf8(c, "ConstantValue", 13), val = cf_cp_long(c, v);
	if (!name || !desc || !cv || !val || c->nfields == 65535)
		return -E2BIG;
	struct cf_member *fs = cf_alloc(c, (c->nfields + 1u) * sizeof(*fs));
	struct cf_attr *at = cf_alloc(c, sizeof(*at));
	uint8_t *d = cf_alloc(c, 2);
	if (!fs || !at || !d)
		return -ENOMEM;
	memcpy(fs, c->fields, c->nfields * sizeof(*fs));
	put2(d, val);
	*at = (struct cf_attr){ .name = cv, .len = 2, .data = d };
	fs[c->nfields] = (struct cf_member){ .access = 0x001A, .name = name, .desc = desc, .attrs = at, .nattrs = 1,
					     .code_attr = -1 };
	c->fields = fs;
	c->nfields++;
	return 0;
}

/* Every method that gets a clone, with the clone appended to the class:
 * *plans [*n] (caller frees each and the array).  A clone that is not
 * private would change the default serialVersionUID of a Serializable
 * class (suid.h), so a class that declares none gets its original value
 * declared; one whose value cannot be computed gets no clone.  The value is
 * computed over the class's own methods, only for a class with clones.
 * 0 or <0. */
static int plan_clones(struct cf_class *c, const struct instr_sink *sink, struct clone_plan **plans, uint32_t *n)
{
	uint32_t coded = 0;
	*plans = NULL;
	*n = 0;
	for (uint32_t i = 0; i < c->nmethods; i++)
		coded += c->methods[i].code != NULL;
	int declared = declared_suid(c), rc;
	if (!coded || c->nmethods + coded > 65535 || declared < 0)
		return 0;
	struct cf_member *ms = cf_alloc(c, (c->nmethods + coded) * sizeof(*ms));
	*plans = calloc(coded, sizeof(**plans));
	if (!ms || !*plans)
		return -ENOMEM;
	memcpy(ms, c->methods, c->nmethods * sizeof(*ms));
	c->methods = ms;
	uint32_t nm = c->nmethods;
	int visible = 0; /* a clone serialization sees */
	for (uint32_t i = 0; i < nm; i++) {
		struct cf_member *m = &c->methods[i];
		if (!m->code)
			continue; /* (*n < coded: p is in the array) */
		struct clone_plan *p = &(*plans)[*n];
		int linked = !(c->access & 0x0200) && !cf_utf8_eq(c, m->name, "<clinit>") && method_linked(c, m, sink);
		rc = clone_eligible(c, m, p);
		if (rc < 0)
			return rc;
		p->trampoline = !rc && linked;
		if ((rc || linked) && (rc = add_clone(c, i, &p->clone)) <= 0)
			clone_plan_free(p);
		if (rc < 0)
			return rc;
		if (rc) {
			p->orig = i;
			p->linked = linked;
			(*n)++;
			visible |= !(m->access & 0x0002);
		}
	}
	if (!*n || declared)
		return 0;
	uint16_t all = c->nmethods;
	int64_t suid;
	c->nmethods = (uint16_t)nm; /* the class as Java serialization knew it */
	rc = suid_default(c, &suid);
	c->nmethods = all;
	if (rc == -ENOMEM)
		return rc;
	if (rc) { /* no clone then, but for those callers link to already */
		uint32_t kept = 0;
		for (uint32_t j = 0; j < *n; j++) {
			struct clone_plan *p = &(*plans)[j];
			if (!p->linked) {
				clone_plan_free(p);
				continue;
			}
			struct clone_plan q = *p;
			c->methods[nm + kept] = c->methods[q.clone];
			q.clone = nm + kept;
			(*plans)[kept++] = q;
		}
		*n = kept;
		c->nmethods = (uint16_t)(nm + kept);
		return 0;
	}
	return visible ? add_suid_field(c, suid) : 0;
}

/* g with only its calls of clones as sites (numbered from 0): what a
 * counting clone's counters count (its own allocations are E, its
 * callers').  0 or -ENOMEM. */
static int calls_only(const struct cfg *g, struct cfg *out)
{
	int rc = cfg_copy(g, out);
	if (rc)
		return rc;
	uint32_t ncall = g->nsites - g->nalloc;
	memmove(out->site_pc, out->site_pc + g->nalloc, ncall * sizeof(uint32_t));
	memmove(out->site_block, out->site_block + g->nalloc, ncall * sizeof(uint32_t));
	out->nsites = ncall;
	out->nalloc = 0;
	return 0;
}

/* phi over the whole method (its own allocations, then its calls of
 * clones, as mp->g numbers them) for a counting clone: its own
 * allocations are counted by nobody inside it, so their phi is what was
 * made by then (p->phi); its calls' is that of its counters (calls, the
 * plan over calls_only).  [(nblocks + 1) * nsites], malloc'd, or NULL. */
static int32_t *clone_phi(const struct clone_plan *p, const struct paths *calls, uint32_t nalloc, uint32_t ncall)
{
	uint32_t nb = p->g.nblocks, ns = nalloc + ncall;
	int32_t *phi = malloc((size_t)(nb + 1) * ns * sizeof(int32_t));
	for (uint32_t b = 0; phi && b <= nb; b++) {
		memcpy(phi + (size_t)b * ns, p->phi + (size_t)b * nalloc, nalloc * sizeof(int32_t));
		memcpy(phi + (size_t)b * ns + nalloc, calls->phi + (size_t)b * ncall, ncall * sizeof(int32_t));
	}
	return phi;
}

/* kmap for a counting clone (g: the whole clone's CFG, callee its calls'
 * clones): its own allocations are the original's, each call the
 * original's call at the same offset to the same clone.  NULL if one is
 * not among the original's calls, or out of memory (*rc). */
static uint32_t *clone_site_map(const struct cfg *g, const uint32_t *callee, const struct inl_calls *calls, int *rc)
{
	uint32_t *kmap = malloc((g->nsites + 1) * sizeof(uint32_t));
	*rc = kmap ? 0 : -ENOMEM;
	for (uint32_t s = 0; kmap && s < g->nsites; s++) {
		kmap[s] = s < g->nalloc ? s : NOT_SET;
		for (uint32_t j = 0; s >= g->nalloc && j < calls->n && kmap[s] == NOT_SET; j++)
			if (calls->pc[j] == g->site_pc[s] && calls->callee[j] == callee[s - g->nalloc])
				kmap[s] = g->nalloc + j;
		if (kmap[s] == NOT_SET) {
			free(kmap);
			return NULL;
		}
	}
	return kmap;
}

/* A clone whose counted loops (loops=on) call clones counts those calls
 * itself: they are redirected to the clones (as in its original), and the
 * clone gets path counters over them alone (static heuristics; its loops
 * counted at their exits), as counters of the original.  Its callers
 * still count its own allocations, E.  So a recursion through a counted
 * loop stays in clones once its class was relinked (hot=N): a leaf, whose
 * loop does not turn, costs no increment, an inner node one add.  Calls
 * elsewhere in the clone still go to their originals: counted there by
 * the original's entry path, one increment, as a counter in the clone
 * would be.  Its correction handlers add what it made (phi of its own
 * allocations) and what its counters have not counted of its calls.
 * Needs bytecode corrections; not for constructors (no counters before
 * super()).  1 instrumented (r is the rewritten clone), 0 not (then
 * do_clone makes a plain clone), -EINVAL failed after its code was
 * rewritten (left unregistered), -ENOMEM. */
static int do_counted_clone(struct rw *r, const struct clone_plan *p, const struct instr_sink *sink, uint32_t id,
			    struct instr_stats *st, const struct inl_calls *calls)
{
	struct cf_class *c = r->c;
	struct cf_member *m = r->m;
	struct method_plan mp = { .init = NOT_SET }, whole = { .init = NOT_SET };
	struct corr_plan cp = { 0 };
	struct cfg g = { 0 };
	uint64_t stubs = 0;
	uint32_t base, *kmap = NULL;
	int applied = 0; /* the clone's code was rewritten */
	if (!calls->n || !sink->bytecode || !uses_loops(sink, c, m) || cf_utf8_eq(c, m->name, "<init>"))
		return 0;
	int rc = cfg_build(r->v, r->n, m->code, &mp.g);
	if (rc || (rc = find_loops(r, &mp)) || !mp.tl.n || (rc = find_inlined(r, &mp, sink, 1)))
		goto out;
	g = mp.g; /* the whole clone's, owned by g from here on */
	memset(&mp.g, 0, sizeof(mp.g));
	uint32_t nalloc = g.nalloc, ncall = g.nsites - g.nalloc;
	if (!ncall || nalloc != p->g.nsites || !(kmap = clone_site_map(&g, mp.callee, calls, &rc)))
		goto out;
	if ((rc = calls_only(&g, &mp.g)) || (rc = plan_loop_paths(NULL, &mp)) || !mp.ps.ncounters)
		goto out;
	if ((base = sink->reserve(sink->ctx, mp.ps.ncounters)) == UINT32_MAX)
		goto out;
	if ((rc = place_counters(r, &mp, base, &stubs)))
		goto out;
	/* the corrections see the whole clone: its allocations and calls */
	whole.g = g;
	whole.tl = mp.tl;
	whole.trip_counter = mp.trip_counter;
	whole.ps = mp.ps;
	whole.ps.nsites = g.nsites;
	whole.ps.sem = NULL;
	if (!(whole.ps.phi = clone_phi(p, &mp.ps, nalloc, ncall))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = plan_corr_handlers(r, &whole, &cp)))
		goto out;
	cp.tbase = base;
	if (cp.nvec && (cp.cbase = sink->reserve(sink->ctx, cp.nvec)) == UINT32_MAX)
		goto out;
	r->tail_len = corr_tail_len(r, &cp);
	struct cf_code saved = *m->code;
	if ((rc = rw_apply(r, 1))) {
		*m->code = saved;
		goto out;
	}
	raise_max_stack(m->code);
	applied = 1;
	if ((cp.nvec && (rc = emit_corr_handlers(r, &cp))) ||
	    (rc = announce_plan_counters(&mp, sink, id, base, kmap + nalloc)) ||
	    (cp.nvec && (rc = announce_corr_counters(&cp, &whole, sink, id, kmap))) ||
	    (rc = announce_trips(&mp, sink, id, base, st)))
		goto out;
	st->corr_handlers += cp.nvec;
	st->corr_stubs += cp.nstub;
	st->counters += mp.ps.ncounters;
	st->stubs += stubs;
	st->inlined += ncall;
	st->counting_clones++;
	rc = 1;
out:
	free(kmap);
	free(whole.ps.phi);
	corr_plan_free(&cp);
	cfg_free(&mp.g);
	cfg_free(&g);
	paths_free(&mp.ps);
	free(mp.callee);
	free(mp.trip_counter);
	trip_loops_free(&mp.tl);
	if (rc < 0 && rc != -ENOMEM)
		rc = applied ? -EINVAL : 0;
	return rc;
}

/* The load (iload, lload, fload, dload, aload) and return opcodes of a
 * descriptor's type letter. */
static uint8_t load_op(char t)
{
	return t == 'J' ? 22 : t == 'F' ? 23 : t == 'D' ? 24 : t == 'L' || t == '[' ? 25 : 21;
}

static uint8_t return_op(char t)
{
	return t == 'V' ? 177 : t == 'J' ? 173 : t == 'F' ? 174 : t == 'D' ? 175 : t == 'L' || t == '[' ? 176 : 172;
}

/* Replaces clone p->clone's code with a call of its original: `aload_0`
 * (an instance method or constructor), each parameter loaded, invoke the
 * original (invokestatic; invokespecial for a constructor, which may call
 * another of its class's, or a private method; invokevirtual for a final
 * one), return.  The marker parameter is left unread.  Straight-line code
 * needs no stack-map frames; the original counts what it allocates, and
 * an exception passes through (the clone has nothing to correct).  0, or
 * -E2BIG (the pool is full), -EINVAL, -ENOMEM. */
static int make_trampoline(struct cf_class *c, const struct clone_plan *p)
{
	const struct cf_member *m = &c->methods[p->orig];
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	if (member_names(c, m, &cn, &cl, &mn, &nl, &md, &dl) || dl < 3 || md[0] != '(')
		return -EINVAL;
	char owner[1024], name[1024], desc[1024];
	if (cl >= sizeof(owner) || nl >= sizeof(name) || dl >= sizeof(desc))
		return -EINVAL;
	memcpy(owner, cn, cl);
	owner[cl] = 0;
	memcpy(name, mn, nl);
	name[nl] = 0;
	memcpy(desc, md, dl);
	desc[dl] = 0;
	int is_static = (m->access & 0x0008) != 0, ctor = !strcmp(name, "<init>");
	uint16_t ref = cf_cp_methodref(c, owner, name, desc);
	if (!ref)
		return -E2BIG;
	/* at most 255 slots (add_clone): a load is 2 bytes each */
	uint8_t *code = cf_alloc(c, 2 * 256 + 8);
	struct cf_code *k = cf_alloc(c, sizeof(*k));
	if (!code || !k)
		return -ENOMEM;
	uint32_t n = 0, slot = 0;
	if (!is_static) {
		code[n++] = 42; /* aload_0 */
		slot = 1;
	}
	const char *t = desc + 1;
	char first;
	while ((first = next_param(&t))) {
		if (slot > 255)
			return -EINVAL;
		code[n++] = load_op(first);
		code[n++] = (uint8_t)slot;
		slot += param_size(first);
	}
	if (*t != ')')
		return -EINVAL;
	code[n++] = is_static ? 184 : ctor || (m->access & 0x0002) ? 183 : 182;
	put2(code + n, ref);
	n += 2;
	code[n++] = return_op(t[1]);
	uint32_t ret = t[1] == 'V' ? 0 : t[1] == 'J' || t[1] == 'D' ? 2 : 1; /* what the invoke leaves */
	memset(k, 0, sizeof(*k));
	k->code = code;
	k->len = n;
	k->max_stack = (uint16_t)(slot > ret ? slot : ret);
	k->max_locals = (uint16_t)(slot + 1); /* the marker */
	c->methods[p->clone].code = k;
	return 0;
}

/* A linked method's clone that counts nothing for its callers: a
 * trampoline, announced as such (sink->clone_none).  1, or <0 (the class
 * fails: a caller linked to the clone would not find it). */
static int link_trampoline(struct cf_class *c, const struct clone_plan *p, const struct instr_sink *sink,
			   struct instr_stats *st)
{
	const char *cn, *mn, *md;
	uint16_t cl, nl, dl;
	int rc = make_trampoline(c, p);
	if (!rc && member_names(c, &c->methods[p->orig], &cn, &cl, &mn, &nl, &md, &dl))
		rc = -EINVAL;
	if (!rc && sink->clone_none)
		rc = sink->clone_none(sink->ctx, cn, cl, mn, nl, md, dl);
	if (rc)
		return rc;
	st->trampolines++;
	return 1;
}

/* Instruments a clone (its original's id with the sink): a counting one
 * (do_counted_clone) where it can be, else one without counters that,
 * with bytecode corrections, has handlers that count what it made when
 * an exception leaves it (phi, per run), as counters of the original.
 * Then registers it.  1 registered, 0 not (it stays a plain copy that
 * nobody calls), <0 fatal. */
static int do_clone(struct cf_class *c, const struct clone_plan *p, const struct instr_sink *sink, uint32_t id,
		    struct instr_stats *st, uint16_t fieldref, uint16_t methodref, const struct inl_calls *calls)
{
	struct cf_member *m = &c->methods[p->clone];
	struct method_plan mp = { .init = NOT_SET };
	struct corr_plan cp = { 0 };
	struct rw r;
	int rc = rw_open(&r, c, m, fieldref, methodref);
	if (rc)
		goto out;
	if ((rc = do_counted_clone(&r, p, sink, id, st, calls)) < 0)
		goto out;
	if (rc) {
		rc = 0;
		goto registered;
	}
	rw_free(&r); /* a plain clone: afresh, without redirected calls */
	if ((rc = rw_open(&r, c, m, fieldref, methodref)))
		goto out;
	mp.g = p->g; /* borrowed (the same code, decoded the same): not freed here */
	mp.ps.nblocks = p->g.nblocks;
	mp.ps.nsites = p->g.nsites;
	mp.ps.phi = p->phi; /* borrowed: unset before paths_free */
	mp.ps.block_path = p->block_path;
	if (sink->bytecode) {
		if ((rc = plan_corr_handlers(&r, &mp, &cp)))
			goto out;
		if (cp.nvec && (cp.cbase = sink->reserve(sink->ctx, cp.nvec)) == UINT32_MAX)
			goto out;
		r.tail_len = corr_tail_len(&r, &cp);
	}
	if (cp.nvec) {
		struct cf_code saved = *m->code;
		if ((rc = rw_apply(&r, 1))) {
			*m->code = saved;
			goto out;
		}
		if ((rc = emit_corr_handlers(&r, &cp)) || (rc = announce_corr_counters(&cp, &mp, sink, id, NULL)))
			goto out;
		st->corr_handlers += cp.nvec;
		st->corr_stubs += cp.nstub;
	}
registered:;
	uint32_t ns = p->g.nsites, *k = malloc((ns + 1) * sizeof(uint32_t));
	int32_t *co = malloc((ns + 1) * sizeof(int32_t));
	rc = k && co ? sink->clone(sink->ctx, id, k, co, sparse_sites(p->e, ns, k, co)) : -ENOMEM;
	free(k);
	free(co);
	if (!rc) {
		st->clones++;
		rc = 1;
	}
out:
	if (rc < 0 && rc != -ENOMEM)
		rc = 0; /* a plain copy that nobody calls */
	mp.ps.phi = NULL;
	mp.ps.block_path = NULL;
	rw_free(&r);
	corr_plan_free(&cp);
	paths_free(&mp.ps);
	return rc;
}

/* Whether the code has branch targets: a jump, a switch, an exception
 * handler (code that does not scan counts as having some). */
static int code_branches(const struct cf_code *k)
{
	if (k->nexc)
		return 1;
	for (uint32_t pc = 0; pc < k->len;) {
		int l = cf_insn_len(k->code, k->len, pc);
		if (l <= 0)
			return 1;
		uint8_t kind = cf_op_kind(k->code[pc]);
		if (kind == IK_COND || kind == IK_GOTO || kind == IK_SWITCH || kind == IK_JSR)
			return 1;
		pc += (uint32_t)l;
	}
	return 0;
}

/* sink->frames_first: whether a method of c that instr_class would try to
 * rewrite needs stack-map frames (version 50 on, branch targets) and has
 * none.  A counter at a branch target needs the frame there
 * (relocate_frames), so such a method would be left alone or fail the
 * class; checked before anything is told to the sink, since a retry with
 * other bytes must not find the methods registered twice. */
static int lacks_frames(const struct cf_class *c, const struct instr_sink *sink, enum instr_mode mode)
{
	if (c->major < 50)
		return 0;
	for (uint32_t i = 0; i < c->nmethods; i++) {
		const struct cf_member *m = &c->methods[i];
		if (m->code && !code_smt(m->code) && code_branches(m->code) && !no_allocs_fast(c, m, sink, mode))
			return 1;
	}
	return 0;
}

int instr_class(const uint8_t *data, size_t n, const struct instr_sink *sink, enum instr_mode mode, struct buf *out,
		struct instr_stats *st)
{
	struct cf_class *c;
	int rc = cf_parse(data, n, &c);
	if (rc)
		return rc;
	if (sink->frames_first && lacks_frames(c, sink, mode)) {
		cf_free(c);
		return INSTR_NO_FRAMES;
	}
	uint16_t fieldref =
		mode == INSTR_RELAYOUT ? 0 : cf_cp_fieldref(c, INSTR_COUNTERS_CLASS, INSTR_COUNTERS_FIELD, "[J");
	/* the JDK's classes count through heapfs.Threads.j (instrument.h,
	 * sink->jdk) and never call Threads.e */
	uint16_t methodref = mode == INSTR_RELAYOUT ? 0
			     : sink->jdk    ? cf_cp_methodref(c, INSTR_THREADS_CLASS, INSTR_THREADS_JDK, "([JI)V")
			     : !sink->atomic ? 0
					     : cf_cp_methodref(c, INSTR_COUNTERS_CLASS, INSTR_COUNTERS_INC, "([JI)V");
	uint16_t entryref = mode == INSTR_RELAYOUT || !sink->threads || sink->jdk
				    ? 0
				    : cf_cp_methodref(c, INSTR_THREADS_CLASS, INSTR_THREADS_ENTER, "()V");
	if (mode != INSTR_RELAYOUT && (!fieldref || ((sink->atomic || sink->jdk) && !methodref) ||
				       (sink->threads && !sink->jdk && !entryref))) {
		cf_free(c);
		return -E2BIG;
	}
	/* counter inlining: clones first (the class's own methods may call
	 * them), each registered after its original got its sites */
	struct clone_plan *plans = NULL;
	uint32_t nplans = 0, nm = c->nmethods, id;
	uint8_t *done = calloc(nm + 1, 1);
	rc = done ? 0 : -ENOMEM;
	if (!rc && mode == INSTR_PATHS && sink->clone && sink->callee && sink->inlined && !sink->jdk)
		rc = plan_clones(c, sink, &plans, &nplans);
	int changed = nplans > 0;
	for (uint32_t j = 0; j < nplans && rc >= 0; j++) {
		st->methods++;
		done[plans[j].orig] = 1;
		struct inl_calls calls = { 0 };
		int cloned = 0;
		rc = do_method(c, &c->methods[plans[j].orig], sink, mode, st, fieldref, methodref, entryref, &id, &calls);
		if (rc >= 0 && id != UINT32_MAX && !plans[j].trampoline)
			rc = cloned = do_clone(c, &plans[j], sink, id, st, fieldref, methodref, &calls);
		/* a clone callers link to already must not copy the original's
		 * allocations uncounted */
		if (rc >= 0 && !cloned && plans[j].linked)
			rc = link_trampoline(c, &plans[j], sink, st);
		free(calls.callee);
		free(calls.pc);
	}
	for (uint32_t i = 0; i < nm && rc >= 0; i++) {
		struct cf_member *m = &c->methods[i];
		if (!m->code || done[i])
			continue;
		st->methods++;
		rc = do_method(c, m, sink, mode, st, fieldref, methodref, entryref, &id, NULL);
		changed |= rc > 0;
	}
	for (uint32_t j = 0; j < nplans; j++)
		clone_plan_free(&plans[j]);
	free(plans);
	free(done);
	if (rc >= 0 && changed) {
		size_t before = out->len;
		rc = cf_write(c, out);
		if (rc)
			out->len = before;
		else
			rc = 1;
	} else if (rc >= 0) {
		rc = 0;
	}
	cf_free(c);
	return rc;
}

/* The atomic variant of the helper (instrument.h). */
static int counters_class_atomic(uint32_t ncounters, struct buf *out)
{
	static const uint8_t head[] = {
		0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 32,
		/* 1 */ 1, 0, 15, 'h', 'e', 'a', 'p', 'f', 's', '/', 'C', 'o', 'u', 'n', 't', 'e', 'r', 's',
		/* 2 */ 7, 0, 1,
		/* 3 */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
		/* 4 */ 7, 0, 3,
		/* 5 */ 1, 0, 1, 'c',
		/* 6 */ 1, 0, 2, '[', 'J',
		/* 7 */ 1, 0, 8, '<', 'c', 'l', 'i', 'n', 'i', 't', '>',
		/* 8 */ 1, 0, 3, '(', ')', 'V',
		/* 9 */ 1, 0, 4, 'C', 'o', 'd', 'e',
		/* 10: Integer ncounters, written below */ 3,
	};
	static const uint8_t tail[] = {
		/* 11 */ 12, 0, 5, 0, 6,
		/* 12 */ 9, 0, 2, 0, 11,
		/* 13 */ 1, 0, 1, 'h',
		/* 14 */ 1, 0, 28, 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'i', 'n', 'v', 'o', 'k', 'e',
		'/', 'V', 'a', 'r', 'H', 'a', 'n', 'd', 'l', 'e', ';',
		/* 15 */ 12, 0, 13, 0, 14,
		/* 16 */ 9, 0, 2, 0, 15,
		/* 17 */ 1, 0, 30, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'i', 'n', 'v', 'o', 'k', 'e', '/',
		'M', 'e', 't', 'h', 'o', 'd', 'H', 'a', 'n', 'd', 'l', 'e', 's',
		/* 18 */ 7, 0, 17,
		/* 19 */ 1, 0, 21, 'a', 'r', 'r', 'a', 'y', 'E', 'l', 'e', 'm', 'e', 'n', 't', 'V', 'a', 'r', 'H', 'a',
		'n', 'd', 'l', 'e',
		/* 20 */ 1, 0, 47, '(', 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'C', 'l', 'a', 's', 's',
		';', ')', 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'i', 'n', 'v', 'o', 'k', 'e', '/',
		'V', 'a', 'r', 'H', 'a', 'n', 'd', 'l', 'e', ';',
		/* 21 */ 12, 0, 19, 0, 20,
		/* 22 */ 10, 0, 18, 0, 21,
		/* 23 */ 7, 0, 6,
		/* 24 */ 1, 0, 26, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'i', 'n', 'v', 'o', 'k', 'e', '/',
		'V', 'a', 'r', 'H', 'a', 'n', 'd', 'l', 'e',
		/* 25 */ 7, 0, 24,
		/* 26 */ 1, 0, 9, 'g', 'e', 't', 'A', 'n', 'd', 'A', 'd', 'd',
		/* 27 */ 1, 0, 7, '(', '[', 'J', 'I', 'J', ')', 'J',
		/* 28 */ 12, 0, 26, 0, 27,
		/* 29 */ 10, 0, 25, 0, 28,
		/* 30 */ 1, 0, 3, 'i', 'n', 'c',
		/* 31 */ 1, 0, 6, '(', '[', 'J', 'I', ')', 'V',
		/* public final super, this #2, super #4, no interfaces */ 0, 0x31, 0, 2, 0, 4, 0, 0,
		/* two fields: public static long[] c; static final VarHandle h */ 0, 2,
		0, 0x09, 0, 5, 0, 6, 0, 0,
		0, 0x18, 0, 13, 0, 14, 0, 0,
		/* two methods */ 0, 2,
		/* static <clinit>()V */ 0, 0x08, 0, 7, 0, 8, 0, 1,
		0, 9, 0, 0, 0, 29, /* max_stack */ 0, 1, /* max_locals */ 0, 0, /* code length */ 0, 0, 0, 17,
		0x13, 0, 10,  /* ldc_w #10 */
		0xbc, 11,     /* newarray long */
		0xb3, 0, 12,  /* putstatic c */
		0x12, 23,     /* ldc long[].class */
		0xb8, 0, 22,  /* invokestatic MethodHandles.arrayElementVarHandle */
		0xb3, 0, 16,  /* putstatic h */
		0xb1,         /* return */
		0, 0, 0, 0,
		/* public static inc(long[], int) */ 0, 0x09, 0, 30, 0, 31, 0, 1,
		0, 9, 0, 0, 0, 23, /* max_stack */ 0, 5, /* max_locals */ 0, 2, /* code length */ 0, 0, 0, 11,
		0xb2, 0, 16,  /* getstatic h */
		0x2a,         /* aload_0 */
		0x1b,         /* iload_1 */
		0x0a,         /* lconst_1 */
		0xb6, 0, 29,  /* invokevirtual VarHandle.getAndAdd([JIJ)J */
		0x58,         /* pop2 */
		0xb1,         /* return */
		0, 0, 0, 0,
		/* no class attributes */ 0, 0,
	};
	uint8_t n[4];
	put4(n, ncounters);
	return buf_put(out, head, sizeof(head)) || buf_put(out, n, 4) || buf_put(out, tail, sizeof(tail)) ? -ENOMEM : 0;
}

int instr_counters_class(uint32_t ncounters, int atomic, struct buf *out)
{
	if (atomic)
		return counters_class_atomic(ncounters, out);
	static const uint8_t head[] = {
		0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 49, 0, 13,
		/* 1 */ 1, 0, 15, 'h', 'e', 'a', 'p', 'f', 's', '/', 'C', 'o', 'u', 'n', 't', 'e', 'r', 's',
		/* 2 */ 7, 0, 1,
		/* 3 */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
		/* 4 */ 7, 0, 3,
		/* 5 */ 1, 0, 1, 'c',
		/* 6 */ 1, 0, 2, '[', 'J',
		/* 7 */ 1, 0, 8, '<', 'c', 'l', 'i', 'n', 'i', 't', '>',
		/* 8 */ 1, 0, 3, '(', ')', 'V',
		/* 9 */ 1, 0, 4, 'C', 'o', 'd', 'e',
		/* 10: Integer ncounters, written below */ 3,
	};
	static const uint8_t tail[] = {
		/* 11 */ 12, 0, 5, 0, 6,
		/* 12 */ 9, 0, 2, 0, 11,
		/* public final super, this #2, super #4, no interfaces */ 0, 0x31, 0, 2, 0, 4, 0, 0,
		/* one field: public static long[] c */ 0, 1, 0, 0x09, 0, 5, 0, 6, 0, 0,
		/* one method: static <clinit>()V with Code */ 0, 1, 0, 0x08, 0, 7, 0, 8, 0, 1,
		0, 9, 0, 0, 0, 21, /* max_stack */ 0, 1, /* max_locals */ 0, 0, /* code length */ 0, 0, 0, 9,
		0x13, 0, 10,  /* ldc_w #10 */
		0xbc, 11,     /* newarray long */
		0xb3, 0, 12,  /* putstatic #12 */
		0xb1,         /* return */
		/* no exceptions, no attributes */ 0, 0, 0, 0,
		/* no class attributes */ 0, 0,
	};
	uint8_t n[4];
	put4(n, ncounters);
	return buf_put(out, head, sizeof(head)) || buf_put(out, n, 4) || buf_put(out, tail, sizeof(tail)) ? -ENOMEM : 0;
}

int instr_marker_class(struct buf *out)
{
	static const uint8_t cls[] = {
		0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 49, 0, 5,
		/* 1 */ 1, 0, 10, 'h', 'e', 'a', 'p', 'f', 's', '/', 'I', 'n', 'l',
		/* 2 */ 7, 0, 1,
		/* 3 */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
		/* 4 */ 7, 0, 3,
		/* public final super, this #2, super #4, no interfaces, fields,
		 * methods or attributes */
		0, 0x31, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	return buf_put(out, cls, sizeof(cls)) ? -ENOMEM : 0;
}

int instr_threads_class(struct buf *out)
{
	static const uint8_t cls[] = {
		0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 49, 0, 59,
		/* 1 */ 1, 0, 14, 'h', 'e', 'a', 'p', 'f', 's', '/', 'T', 'h', 'r', 'e', 'a', 'd', 's',
		/* 2 */ 7, 0, 1,
		/* 3 */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
		/* 4 */ 7, 0, 3,
		/* 5 */ 1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'T', 'h', 'r', 'e', 'a', 'd',
		/* 6 */ 7, 0, 5,
		/* 7 */ 1, 0, 1, 's',
		/* 8 */ 1, 0, 19, '[', 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'T', 'h', 'r', 'e', 'a',
		'd', ';',
		/* 9 */ 12, 0, 7, 0, 8,
		/* 10 */ 9, 0, 2, 0, 9,
		/* 11 */ 1, 0, 13, 'c', 'u', 'r', 'r', 'e', 'n', 't', 'T', 'h', 'r', 'e', 'a', 'd',
		/* 12 */ 1, 0, 20, '(', ')', 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'T', 'h', 'r',
		'e', 'a', 'd', ';',
		/* 13 */ 12, 0, 11, 0, 12,
		/* 14 */ 10, 0, 6, 0, 13,
		/* 15 */ 1, 0, 5, 'g', 'e', 't', 'I', 'd',
		/* 16 */ 1, 0, 3, '(', ')', 'J',
		/* 17 */ 12, 0, 15, 0, 16,
		/* 18 */ 10, 0, 6, 0, 17,
		/* 19 */ 1, 0, 1, 'e',
		/* 20 */ 1, 0, 3, '(', ')', 'V',
		/* 21 */ 1, 0, 1, 'n',
		/* 22 */ 12, 0, 21, 0, 20,
		/* 23 */ 10, 0, 2, 0, 22,
		/* 24 */ 1, 0, 8, '<', 'c', 'l', 'i', 'n', 'i', 't', '>',
		/* 25 */ 1, 0, 4, 'C', 'o', 'd', 'e',
		/* 26 */ 1, 0, 1, 't',
		/* 27 */ 1, 0, 18, 'L', 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'T', 'h', 'r', 'e', 'a', 'd',
		';',
		/* 28 */ 12, 0, 26, 0, 27,
		/* 29 */ 9, 0, 2, 0, 28,
		/* 30 */ 1, 0, 1, 'm',
		/* 31 */ 1, 0, 1, 'Z',
		/* 32 */ 12, 0, 30, 0, 31,
		/* 33 */ 9, 0, 2, 0, 32,
		/* 34 */ 1, 0, 1, 'f',
		/* 35 */ 12, 0, 34, 0, 20,
		/* 36 */ 10, 0, 2, 0, 35,
		/* 37 */ 1, 0, 1, 'j',
		/* 38 */ 1, 0, 6, '(', '[', 'J', 'I', ')', 'V',
		/* 39 */ 1, 0, 1, 'k',
		/* 40 */ 1, 0, 4, '(', 'I', ')', 'V',
		/* 41 */ 12, 0, 39, 0, 40,
		/* 42 */ 10, 0, 2, 0, 41,
		/* 43 */ 1, 0, 1, 'c',
		/* 44 */ 1, 0, 1, 'I',
		/* 45 */ 12, 0, 43, 0, 44,
		/* 46 */ 9, 0, 2, 0, 45,
		/* 47 */ 1, 0, 2, 'p', 'k',
		/* 48 */ 1, 0, 2, '[', 'J',
		/* 49 */ 12, 0, 47, 0, 48,
		/* 50 */ 9, 0, 2, 0, 49,
		/* 51 */ 1, 0, 2, 'p', 'c',
		/* 52 */ 12, 0, 51, 0, 48,
		/* 53 */ 9, 0, 2, 0, 52,
		/* 54 */ 1, 0, 1, 'q',
		/* 55 */ 1, 0, 6, '(', 'J', 'J', 'J', ')', 'V',
		/* 56 */ 12, 0, 54, 0, 55,
		/* 57 */ 10, 0, 2, 0, 56,
		/* 58 */ 3, 0x9e, 0x37, 0x79, 0xb1, /* the golden ratio's 32 bits */
		/* public final super, this #2, super #4, no interfaces */
		0, 0x31, 0, 2, 0, 4, 0, 0,
		/* six fields */ 0, 6,
		/* private static final Thread[] s */ 0, 0x1a, 0, 7, 0, 8, 0, 0,
		/* private static Thread t */ 0, 0x0a, 0, 26, 0, 27, 0, 0,
		/* private static boolean m */ 0, 0x0a, 0, 30, 0, 31, 0, 0,
		/* public static int c */ 0, 0x09, 0, 43, 0, 44, 0, 0,
		/* private static final long[] pk */ 0, 0x1a, 0, 47, 0, 48, 0, 0,
		/* private static final long[] pc */ 0, 0x1a, 0, 51, 0, 48, 0, 0,
		/* seven methods */ 0, 7,
		/* public static void e() */ 0, 0x09, 0, 19, 0, 20, 0, 1,
		0, 25, 0, 0, 0, 25, /* max_stack */ 0, 2, /* max_locals */ 0, 0, /* code length */ 0, 0, 0, 13,
		0xb8, 0, 14,  /* 0: invokestatic Thread.currentThread */
		0xb2, 0, 29,  /* 3: getstatic t */
		0xa5, 0, 6,   /* 6: if_acmpeq 12 */
		0xb8, 0, 36,  /* 9: invokestatic f */
		0xb1,         /* 12: return */
		/* no exceptions, no attributes */ 0, 0, 0, 0,
		/* private static void f() */ 0, 0x0a, 0, 34, 0, 20, 0, 1,
		0, 25, 0, 0, 0, 55, /* max_stack */ 0, 3, /* max_locals */ 0, 2, /* code length */ 0, 0, 0, 43,
		0xb8, 0, 14,  /* 0: invokestatic Thread.currentThread */
		0x4b,         /* 3: astore_0 */
		0x2a,         /* 4: aload_0 */
		0xb6, 0, 18,  /* 5: invokevirtual Thread.getId */
		0x88,         /* 8: l2i */
		0x11, 0, INSTR_THREADS_SLOTS - 1, /* 9: sipush */
		0x7e,         /* 12: iand */
		0x3c,         /* 13: istore_1 */
		0xb2, 0, 10,  /* 14: getstatic s */
		0x1b,         /* 17: iload_1 */
		0x32,         /* 18: aaload */
		0x2a,         /* 19: aload_0 */
		0xa5, 0, 12,  /* 20: if_acmpeq 32 */
		0xb8, 0, 23,  /* 23: invokestatic n */
		0xb2, 0, 10,  /* 26: getstatic s */
		0x1b,         /* 29: iload_1 */
		0x2a,         /* 30: aload_0 */
		0x53,         /* 31: aastore */
		0xb2, 0, 33,  /* 32: getstatic m */
		0x9a, 0, 7,   /* 35: ifne 42 */
		0x2a,         /* 38: aload_0 */
		0xb3, 0, 29,  /* 39: putstatic t */
		0xb1,         /* 42: return */
		/* no exceptions, no attributes */ 0, 0, 0, 0,
		/* private static native void n() */ 0x01, 0x0a, 0, 21, 0, 20, 0, 0,
		/* static <clinit>()V */ 0, 0x08, 0, 24, 0, 20, 0, 1,
		0, 25, 0, 0, 0, 38, /* max_stack */ 0, 1, /* max_locals */ 0, 0, /* code length */ 0, 0, 0, 26,
		0x11, INSTR_THREADS_SLOTS >> 8, INSTR_THREADS_SLOTS & 0xff, /* sipush */
		0xbd, 0, 6,   /* anewarray Thread */
		0xb3, 0, 10,  /* putstatic s */
		0x11, INSTR_CALLER_SLOTS >> 8, INSTR_CALLER_SLOTS & 0xff, /* 9: sipush */
		0xbc, 11,     /* newarray long */
		0xb3, 0, 50,  /* putstatic pk */
		0x11, INSTR_CALLER_SLOTS >> 8, INSTR_CALLER_SLOTS & 0xff, /* 17: sipush */
		0xbc, 11,     /* newarray long */
		0xb3, 0, 53,  /* putstatic pc */
		0xb1,         /* return */
		/* no exceptions, no attributes */ 0, 0, 0, 0,
		/* public static void j(long[] a, int i) */ 0, 0x09, 0, 37, 0, 38, 0, 1,
		0, 25, 0, 0, 0, 122, /* max_stack */ 0, 8, /* max_locals */ 0, 6, /* code length */ 0, 0, 0, 110,
		0xb8, 0, 14,  /* 0: invokestatic Thread.currentThread */
		0xb2, 0, 29,  /* 3: getstatic t */
		0xa5, 0, 8,   /* 6: if_acmpeq 14 */
		0x1b,         /* 9: iload_1 */
		0xb8, 0, 42,  /* 10: invokestatic k: another thread, atomic */
		0xb1,         /* 13: return */
		0x2a, 0x1b, 0x5c, 0x2f, 0x0a, 0x61, 0x50, /* 14: a[i]++ */
		0xb2, 0, 46,  /* 21: getstatic c */
		0x59, 0x3d,   /* 24: dup; istore_2 */
		0x9a, 0, 4,   /* 26: ifne 30 */
		0xb1,         /* 29: return: no application caller */
		0x1c, 0x85, 0x10, 32, 0x79, /* 30: (long) c << 32 */
		0x1b, 0x85, 0x81, 0x42, /* 35: | i; lstore_3: key */
		0x1c, 0x13, 0, 58, 0x68, /* 39: c * golden */
		0x1b, 0x60, 0x59, 0x10, 16, 0x7c, 0x82, /* 44: + i; h ^= h >>> 16 */
		0x11, (INSTR_CALLER_SLOTS - 1) >> 8, (INSTR_CALLER_SLOTS - 1) & 0xff, 0x7e, /* 51: & mask */
		0x36, 5,      /* 55: istore 5: h */
		0xb2, 0, 50, 0x15, 5, 0x2f, 0x21, 0x94, /* 57: pk[h] cmp key */
		0x9a, 0, 14,  /* 65: ifne 79 */
		0xb2, 0, 53, 0x15, 5, 0x5c, 0x2f, 0x0a, 0x61, 0x50, /* 68: pc[h]++ */
		0xb1,         /* 78: return */
		0xb2, 0, 50, 0x15, 5, 0x2f, /* 79: pk[h] */
		0xb2, 0, 53, 0x15, 5, 0x2f, /* 85: pc[h] */
		0x21,         /* 91: lload_3 */
		0xb8, 0, 57,  /* 92: invokestatic q: the evicted pair to the agent */
		0xb2, 0, 50, 0x15, 5, 0x21, 0x50, /* 95: pk[h] = key */
		0xb2, 0, 53, 0x15, 5, 0x0a, 0x50, /* 102: pc[h] = 1 */
		0xb1,         /* 109: return */
		/* no exceptions, no attributes */ 0, 0, 0, 0,
		/* private static native void k(int) */ 0x01, 0x0a, 0, 39, 0, 40, 0, 0,
		/* private static native void q(long, long, long) */ 0x01, 0x0a, 0, 54, 0, 55, 0, 0,
		/* no class attributes */ 0, 0,
	};
	return buf_put(out, cls, sizeof(cls)) ? -ENOMEM : 0;
}

/* One pass of flow conservation: nodes node[v] (v a block or nblocks for
 * X); edges with known[i] have flow[i]; edges between two blocks of one
 * node are left alone (their flow cancels in its balance).  A node with
 * one unknown edge left determines it (tree leaves first, inwards). */
static int conserve(uint32_t nblocks, uint32_t nnodes, const uint32_t *node, uint32_t nedges, const struct pedge *e,
		    uint8_t *known, double *flow)
{
	uint32_t *unknown = calloc(nnodes + 1, sizeof(uint32_t)); /* unknown edges at each node */
	double *bal = calloc(nnodes + 1, sizeof(double));           /* in - out of the known edges */
	if (!unknown || !bal) {
		free(unknown);
		free(bal);
		return -ENOMEM;
	}
#define NODE(v) node[(v) == PATHS_X ? nblocks : (v)]
	for (uint32_t i = 0; i < nedges; i++) {
		uint32_t a = NODE(e[i].from), b = NODE(e[i].to);
		if (a == b)
			continue;
		if (known[i]) {
			bal[a] -= flow[i];
			bal[b] += flow[i];
		} else {
			unknown[a]++;
			unknown[b]++;
		}
	}
	for (int progress = 1; progress;) {
		progress = 0;
		for (uint32_t i = 0; i < nedges; i++) {
			uint32_t a = NODE(e[i].from), b = NODE(e[i].to);
			if (known[i] || a == b)
				continue;
			double f;
			if (unknown[a] == 1)
				f = bal[a];       /* out of a: in - out must be 0 */
			else if (unknown[b] == 1)
				f = -bal[b];
			else
				continue;
			if (f < 0)
				f = 0;
			known[i] = 1;
			flow[i] = f;
			bal[a] -= f;
			bal[b] += f;
			unknown[a]--;
			unknown[b]--;
			progress = 1;
		}
	}
#undef NODE
	free(unknown);
	free(bal);
	return 0;
}

double instr_solve_flow(uint32_t nblocks, uint32_t nedges, const struct pedge *e, const uint8_t *counted,
			const double *value, double *flow)
{
	double entry = 0;
	uint8_t *known = calloc(nedges + 1, 1);
	uint32_t *self = malloc((nblocks + 1) * sizeof(uint32_t));
	/* first between the strongly connected components, where the flows
	 * of uncounted edges inside loops cancel, then block by block */
	uint32_t *comp = paths_components(nblocks, nedges, e);
	if (!known || !self || !comp)
		goto out;
	for (uint32_t i = 0; i < nedges; i++) {
		known[i] = counted[i];
		flow[i] = counted[i] ? value[i] : 0;
	}
	for (uint32_t v = 0; v <= nblocks; v++)
		self[v] = v;
	if (conserve(nblocks, comp[nblocks] + 1, comp, nedges, e, known, flow) ||
	    conserve(nblocks, nblocks + 1, self, nedges, e, known, flow))
		goto out;
	for (uint32_t i = 0; i < nedges; i++) {
		if (!known[i])
			flow[i] = 0; /* conservation cannot tell (a cycle of uncounted edges) */
		if (e[i].from == PATHS_X && e[i].to == 0)
			entry = flow[i];
	}
out:
	free(known);
	free(self);
	free(comp);
	return entry;
}

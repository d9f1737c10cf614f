/* heap_state_par.c - see heap_state_par.h.
 *
 * Marking is a level-synchronous breadth-first search: the frontier is a
 * range of the queue, split into tasks; a thread claims an object by an
 * atomic OR on its bit (the one that set it queues it) and collects what
 * it claims in a small buffer of its own, appended to the queue by one
 * atomic add a buffer.  Levels below level_min run on the caller's thread
 * alone: a heap's long lists give millions of one-object levels, which
 * would cost a fork-join each.
 *
 * In-edges: the targets split into one range a thread; each thread reads
 * every edge and counts, then fills, its own targets' entries over the
 * sources in ascending order: the order one thread's fill gives, with no
 * atomic operation (before: atomic counts and cursors over all targets,
 * then a sort of each target's sources, no faster on 2 threads than the
 * loop on one). */
#include "heap_state_par.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpar.h"

#define PAR_PREFETCH 32
#define MARK_BUF 1024          /* entries a thread collects before appending */

struct hs_par_opts hs_par_defaults(uint32_t nthreads)
{
	/* a task of 16 K entries is a few hundred microseconds: enough to
	 * hide the hand-out, small enough to balance; a level of 64 K
	 * entries is about what starting a thread costs */
	return (struct hs_par_opts){ .nthreads = nthreads, .level_min = 1u << 16, .chunk = 1u << 14 };
}

static uint32_t ntasks_of(uint64_t n, uint32_t chunk)
{
	return (uint32_t)((n + chunk - 1) / chunk);
}

/* ---- marking ---------------------------------------------------------------------------- */

struct mark {
	struct heap_state *s;
	uint32_t *queue;
	uint64_t head, end;    /* the frontier being expanded */
	uint64_t tail;         /* atomic: the next free queue entry */
	uint32_t chunk;
	uint32_t *bufs;        /* [nthreads * MARK_BUF], a buffer per worker */
};

/* 1 when this call set t's bit (it queues t). */
static inline int claim(uint64_t *bits, uint32_t t)
{
	uint64_t bit = 1ull << (t & 63);
	if (__atomic_load_n(&bits[t >> 6], __ATOMIC_RELAXED) & bit)
		return 0;
	return !(__atomic_fetch_or(&bits[t >> 6], bit, __ATOMIC_RELAXED) & bit);
}

static void append(struct mark *m, const uint32_t *buf, uint32_t n)
{
	uint64_t at = __atomic_fetch_add(&m->tail, n, __ATOMIC_RELAXED);
	memcpy(m->queue + at, buf, n * sizeof *buf);
}

static int mark_task(void *ctx, uint32_t task, uint32_t worker)
{
	struct mark *m = ctx;
	const struct heap_state *s = m->s;
	uint32_t *buf = m->bufs + (size_t)worker * MARK_BUF, nb = 0;
	uint64_t lo = m->head + (uint64_t)task * m->chunk;
	uint64_t hi = lo + m->chunk < m->end ? lo + m->chunk : m->end;
	for (uint64_t q = lo; q < hi; q++) {
		if (q + PAR_PREFETCH < hi)
			__builtin_prefetch(&s->out_off[m->queue[q + PAR_PREFETCH]]);
		if (q + PAR_PREFETCH / 2 < hi)
			__builtin_prefetch(&s->out_tgt[s->out_off[m->queue[q + PAR_PREFETCH / 2]]]);
		uint32_t o = m->queue[q];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!claim(s->reachable, t))
				continue;
			buf[nb++] = t;
			if (nb == MARK_BUF) {
				append(m, buf, nb);
				nb = 0;
			}
		}
	}
	if (nb)
		append(m, buf, nb);
	return 0;
}

/* One level on the caller's thread (no other thread runs): plain stores. */
static uint64_t mark_level_here(struct heap_state *s, uint32_t *queue, uint64_t head, uint64_t end,
				uint64_t tail)
{
	for (uint64_t q = head; q < end; q++) {
		uint32_t o = queue[q];
		for (uint32_t e = s->out_off[o]; e < s->out_off[o + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (!hs_is_reachable(s, t)) {
				s->reachable[t >> 6] |= 1ull << (t & 63);
				queue[tail++] = t;
			}
		}
	}
	return tail;
}

int hs_mark_par(struct heap_state *s, const struct hs_par_opts *o)
{
	uint32_t nt = o->nthreads ? o->nthreads : 1;
	struct mark m = { .s = s, .queue = s->in_src, .chunk = o->chunk ? o->chunk : 1 };
	int rc = 0;
	m.bufs = malloc((size_t)nt * MARK_BUF * sizeof *m.bufs);
	if (!m.bufs)
		return -ENOMEM;
	uint64_t head = 0, tail = 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		uint32_t obj = s->roots[r].object;
		if (!hs_is_reachable(s, obj)) {
			s->reachable[obj >> 6] |= 1ull << (obj & 63);
			m.queue[tail++] = obj;
		}
	}
	while (head < tail) {
		uint64_t end = tail;
		if (end - head < o->level_min) {
			tail = mark_level_here(s, m.queue, head, end, tail);
		} else {
			m.head = head;
			m.end = m.tail = end;
			if ((rc = mpar_for(nt, ntasks_of(end - head, m.chunk), mark_task, &m)))
				goto out;
			tail = m.tail;
		}
		head = end;
	}
	s->nreachable = (uint32_t)tail;
out:
	free(m.bufs);
	return rc;
}

/* ---- in-edges ----------------------------------------------------------------------------- */

/* Task k owns the targets [k n / ntasks, (k + 1) n / ntasks): it reads
 * every edge and writes only its own targets' counts, cursors and
 * entries, so no two threads write one entry and nothing is atomic. */
struct inb {
	struct heap_state *s;
	uint32_t ntasks;
};

static void target_range(const struct inb *b, uint32_t k, uint32_t *lo, uint32_t *hi)
{
	*lo = (uint32_t)((uint64_t)b->s->n * k / b->ntasks);
	*hi = (uint32_t)((uint64_t)b->s->n * (k + 1) / b->ntasks);
}

/* One more in-edge for each of the task's targets. */
static int count_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct inb *b = ctx;
	struct heap_state *s = b->s;
	uint32_t lo, hi;
	target_range(b, task, &lo, &hi);
	for (uint64_t e = 0; e < s->nedges; e++) {
		uint32_t t = s->out_tgt[e];
		if (t - lo < hi - lo)
			s->in_off[t + 1]++;
	}
	return 0;
}

/* The sources in ascending order: each edge to one of the task's targets
 * takes the next entry of its target's range (in_off[t] is the cursor),
 * so every target's sources come out ascending. */
static int fill_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct inb *b = ctx;
	struct heap_state *s = b->s;
	uint32_t lo, hi;
	target_range(b, task, &lo, &hi);
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t e = s->out_off[i]; e < s->out_off[i + 1]; e++) {
			uint32_t t = s->out_tgt[e];
			if (t - lo < hi - lo)
				s->in_src[s->in_off[t]++] = i;
		}
	return 0;
}

int hs_in_edges_par(struct heap_state *s, const struct hs_par_opts *o)
{
	struct inb b = { .s = s, .ntasks = o->nthreads ? o->nthreads : 1 };
	int rc;
	if ((rc = mpar_for(b.ntasks, b.ntasks, count_task, &b)))
		return rc;
	for (uint32_t i = 0; i < s->n; i++)
		s->in_off[i + 1] += s->in_off[i];
	if ((rc = mpar_for(b.ntasks, b.ntasks, fill_task, &b)))
		return rc;
	/* each cursor stopped at the next target's start: shift back */
	for (uint32_t i = s->n; i > 0; i--)
		s->in_off[i] = s->in_off[i - 1];
	s->in_off[0] = 0;
	return 0;
}

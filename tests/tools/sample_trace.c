/* sample_trace.c - writes what the agent's mode=sample would have recorded
 * of a program whose full recording is IN: the test oracle of sampled
 * traces.  A test tool, not part of heapfs.
 *
 * Usage: sample_trace IN.htr OUT.htr INTERVAL [SEED]
 *
 * HotSpot's heap sampler (ThreadHeapSampler) is a Poisson process over
 * each thread's allocated bytes with mean INTERVAL: an allocation is
 * sampled when one of the process's points falls in its bytes, which for
 * an object of s bytes happens with probability 1 - exp(-s/INTERVAL).
 * This tool runs that process over IN's ALLOC events, per thread, with
 * exponential gaps from a seeded xorshift64 (default seed 1), and writes:
 *   - every INFO (but agent.mode and sample.interval, replaced by
 *     "sample" and INTERVAL), TYPE, METHOD, SITE and THREAD event;
 *   - the sampled ALLOCs, and every ALLOC flagged HTR_ALLOC_PREEXISTING
 *     (the agent tags the objects that exist before VMInit in every mode);
 *   - DEATHS of those objects only;
 *   - GC_START and GC_END without graph (mode=sample walks no heap);
 * and drops ROOTS, GRAPH_OBJ, counts and JFR samples.  The exact answers
 * stay in IN: a test compares heapfs's estimates on OUT with them.
 * Prints "allocations N sampled K preexisting P" on stdout.
 * Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/htr_writer.h"
#include "model/trace.h"
#include "tests/xorshift.h"

/* An open-addressing set of object ids (ids are never 0 here: 0 = empty
 * slot; an id 0 is kept in its own flag). */
struct idset {
	uint64_t *slot;
	size_t cap, n;
	int has_zero;
};

static size_t id_hash(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int idset_add(struct idset *s, uint64_t id)
{
	if (id == 0) {
		s->has_zero = 1;
		return 0;
	}
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *n = calloc(cap, sizeof *n);
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slot[i])
				continue;
			size_t h = id_hash(s->slot[i], cap);
			while (n[h])
				h = (h + 1) & (cap - 1);
			n[h] = s->slot[i];
		}
		free(s->slot);
		s->slot = n;
		s->cap = cap;
	}
	size_t h = id_hash(id, s->cap);
	while (s->slot[h] && s->slot[h] != id)
		h = (h + 1) & (s->cap - 1);
	if (!s->slot[h]) {
		s->slot[h] = id;
		s->n++;
	}
	return 0;
}

static int idset_has(const struct idset *s, uint64_t id)
{
	if (id == 0)
		return s->has_zero;
	if (!s->cap)
		return 0;
	size_t h = id_hash(id, s->cap);
	while (s->slot[h]) {
		if (s->slot[h] == id)
			return 1;
		h = (h + 1) & (s->cap - 1);
	}
	return 0;
}

/* Each thread's bytes to its next sample point. */
struct thread_left {
	uint64_t thread;
	double left;
};

struct ctx {
	struct htr_writer *w;
	double interval;
	uint64_t rng;
	struct idset kept;
	struct thread_left *tl;
	size_t ntl;
	uint64_t *deaths;
	size_t cap_deaths;
	uint64_t allocs, sampled, preexisting;
	char *s1, *s2, *s3, *s4; /* NUL-terminated copies of an event's strings */
	size_t c1, c2, c3, c4;
};

static double exp_gap(struct ctx *c)
{
	/* uniform in (0, 1]: never log(0) */
	double u = ((double)(xorshift64(&c->rng) >> 11) + 1.0) / 9007199254740992.0;
	return -log(u) * c->interval;
}

static double *left_of(struct ctx *c, uint64_t thread)
{
	for (size_t i = 0; i < c->ntl; i++)
		if (c->tl[i].thread == thread)
			return &c->tl[i].left;
	struct thread_left *n = realloc(c->tl, (c->ntl + 1) * sizeof *n);
	if (!n)
		return NULL;
	c->tl = n;
	c->tl[c->ntl] = (struct thread_left){ thread, exp_gap(c) };
	return &c->tl[c->ntl++].left;
}

static const char *cstr(char **buf, size_t *cap, const char *s, uint32_t len)
{
	if (len + 1 > *cap) {
		char *n = realloc(*buf, len + 1);
		if (!n)
			return NULL;
		*buf = n;
		*cap = len + 1;
	}
	memcpy(*buf, s ? s : "", len);
	(*buf)[len] = '\0';
	return *buf;
}

static int copy_type(struct ctx *c, const struct htr_event *ev)
{
	uint32_t nf = ev->u.type.nfields;
	struct htr_field *f = calloc(nf ? nf : 1, sizeof *f);
	char **names = calloc(2 * (size_t)(nf ? nf : 1), sizeof *names);
	int rc = f && names ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < nf && !rc; i++) {
		const struct htr_field *src = &ev->u.type.fields[i];
		names[2 * i] = strndup(src->name ? src->name : "", src->name_len);
		names[2 * i + 1] = strndup(src->sig ? src->sig : "", src->sig_len);
		if (!names[2 * i] || !names[2 * i + 1])
			rc = -ENOMEM;
		f[i] = (struct htr_field){ names[2 * i], src->name_len, names[2 * i + 1], src->sig_len,
					   src->flags };
	}
	const char *name = rc ? NULL : cstr(&c->s1, &c->c1, ev->u.type.name, ev->u.type.name_len);
	if (!rc && !name)
		rc = -ENOMEM;
	if (!rc) {
		struct htr_type_def d = { ev->u.type.id, name, ev->u.type.kind, ev->u.type.instance_size,
					  ev->u.type.elem_size, ev->u.type.super_id, nf, f };
		rc = htr_write_type(c->w, &d);
	}
	for (uint32_t i = 0; names && i < 2 * nf; i++)
		free(names[i]);
	free(names);
	free(f);
	return rc;
}

static int on_alloc(struct ctx *c, const struct htr_alloc *a)
{
	c->allocs++;
	int keep = 0;
	if (a->flags & HTR_ALLOC_PREEXISTING) {
		keep = 1;
		c->preexisting++;
	} else {
		double *left = left_of(c, a->thread);
		if (!left)
			return -ENOMEM;
		*left -= (double)a->size;
		while (*left <= 0) { /* a point in this object's bytes */
			keep = 1;
			*left += exp_gap(c);
		}
		c->sampled += keep;
	}
	if (!keep)
		return 0;
	int rc = idset_add(&c->kept, a->id);
	return rc ? rc : htr_write_alloc(c->w, a);
}

static int on_deaths(struct ctx *c, const struct htr_event *ev)
{
	uint32_t n = 0;
	if (ev->u.deaths.count > c->cap_deaths) {
		uint64_t *d = realloc(c->deaths, ev->u.deaths.count * sizeof *d);
		if (!d)
			return -ENOMEM;
		c->deaths = d;
		c->cap_deaths = ev->u.deaths.count;
	}
	for (uint32_t i = 0; i < ev->u.deaths.count; i++)
		if (idset_has(&c->kept, ev->u.deaths.ids[i]))
			c->deaths[n++] = ev->u.deaths.ids[i];
	return n ? htr_write_deaths(c->w, ev->u.deaths.gc, n, c->deaths) : 0;
}

static int on_gc(struct ctx *c, const struct htr_event *ev)
{
	struct htr_gc_event g = { ev->u.gc.gc, ev->u.gc.time_ns, ev->u.gc.used, ev->u.gc.capacity,
				  ev->u.gc.flags & ~(uint32_t)(HTR_GC_HAS_GRAPH | HTR_GC_HAS_REACHABLE),
				  NULL, NULL, 0, 0 };
	if (ev->type == HTR_EV_GC_END)
		return htr_write_gc_end(c->w, &g);
	g.cause = cstr(&c->s1, &c->c1, ev->u.gc.cause, ev->u.gc.cause_len);
	g.collector = cstr(&c->s2, &c->c2, ev->u.gc.collector, ev->u.gc.collector_len);
	return g.cause && g.collector ? htr_write_gc_start(c->w, &g) : -ENOMEM;
}

static int on_event(void *vctx, const struct htr_event *ev)
{
	struct ctx *c = vctx;
	const char *a, *b, *d, *e;
	switch (ev->type) {
	case HTR_EV_INFO:
		a = cstr(&c->s1, &c->c1, ev->u.info.key, ev->u.info.key_len);
		b = cstr(&c->s2, &c->c2, ev->u.info.val, ev->u.info.val_len);
		if (!a || !b)
			return -ENOMEM;
		if (!strcmp(a, "agent.mode") || !strcmp(a, "sample.interval"))
			return 0;
		return htr_write_info(c->w, a, b);
	case HTR_EV_TYPE:
		return copy_type(c, ev);
	case HTR_EV_METHOD:
		a = cstr(&c->s1, &c->c1, ev->u.method.cls, ev->u.method.cls_len);
		b = cstr(&c->s2, &c->c2, ev->u.method.name, ev->u.method.name_len);
		d = cstr(&c->s3, &c->c3, ev->u.method.sig, ev->u.method.sig_len);
		e = cstr(&c->s4, &c->c4, ev->u.method.file, ev->u.method.file_len);
		if (!a || !b || !d || !e)
			return -ENOMEM;
		return htr_write_method(c->w, ev->u.method.id, a, b, d, e);
	case HTR_EV_SITE:
		return htr_write_site(c->w, ev->u.site.id, ev->u.site.nframes, ev->u.site.frames);
	case HTR_EV_THREAD:
		a = cstr(&c->s1, &c->c1, ev->u.thread.name, ev->u.thread.name_len);
		return a ? htr_write_thread(c->w, ev->u.thread.id, a) : -ENOMEM;
	case HTR_EV_ALLOC:
		return on_alloc(c, &ev->u.alloc);
	case HTR_EV_DEATHS:
		return on_deaths(c, ev);
	case HTR_EV_GC_START:
	case HTR_EV_GC_END:
		return on_gc(c, ev);
	default: /* roots, graph, counts, JFR samples: not in a sampled recording */
		return 0;
	}
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: sample_trace IN.htr OUT.htr INTERVAL [SEED]\n");
		return 1;
	}
	char *end;
	unsigned long long iv = strtoull(argv[3], &end, 10);
	if (*end || iv == 0) {
		fprintf(stderr, "sample_trace: bad interval %s\n", argv[3]);
		return 1;
	}
	struct ctx c = { .interval = (double)iv, .rng = argc == 5 ? strtoull(argv[4], NULL, 10) : 1 };
	if (!c.rng)
		c.rng = 1;
	struct trace *t = NULL;
	struct htr_err err = { 0 };
	struct trace_open_opts oo = { 0 };
	int rc = trace_open(&t, argv[1], &oo, &err);
	if (rc) {
		fprintf(stderr, "sample_trace: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	rc = htr_writer_open(&c.w, argv[2], NULL);
	char ivs[32];
	snprintf(ivs, sizeof ivs, "%llu", iv);
	if (!rc) rc = htr_write_info(c.w, "agent.mode", "sample");
	if (!rc) rc = htr_write_info(c.w, "sample.interval", ivs);
	if (!rc) rc = trace_each_event(t, on_event, &c, &err);
	if (c.w) {
		int rc2 = htr_writer_close(c.w);
		if (!rc)
			rc = rc2;
	}
	if (rc)
		fprintf(stderr, "sample_trace: %s\n", err.msg[0] ? err.msg : strerror(-rc));
	else
		printf("allocations %llu sampled %llu preexisting %llu\n", (unsigned long long)c.allocs,
		       (unsigned long long)c.sampled, (unsigned long long)c.preexisting);
	trace_close(t);
	free(c.kept.slot);
	free(c.tl);
	free(c.deaths);
	free(c.s1);
	free(c.s2);
	free(c.s3);
	free(c.s4);
	return rc ? 1 : 0;
}

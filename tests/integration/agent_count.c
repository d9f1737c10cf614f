/* agent_count.c - counts what a recorded trace holds, independently of the
 * fs/ tree, for the agent's integration tests (tests/integration/test_agent*.sh).
 *
 *   agent_count TRACE
 *
 * prints TSV lines:
 *   allocs N | preexisting N | duplicate_ids N | deaths N | deaths_unallocated N
 *   last_gc_graph 0|1 | gcs N | graph_gcs N | merged_gcs N | full_gcs N | truncated 0|1
 *   type <TAB> NAME <TAB> allocations (recorded allocations only)
 *   type-site <TAB> TYPE <TAB> Class.method:line (allocating frame) <TAB> allocations
 *   type-app <TAB> TYPE <TAB> Class.method:line (innermost frame in a class
 *            named example.*) <TAB> allocations
 *   site-caller <TAB> Class.method(descriptor) (allocating frame) <TAB>
 *            Class.method of its caller ("-" without one) <TAB> allocations
 *            (one line per type and site; agent/callers.sh sums them)
 *
 *   agent_count TRACE --reach TYPE
 *
 * rebuilds the last GC and prints, for every static-field and local-variable
 * root, how many objects of TYPE are reachable from it:
 *   reach <TAB> static:Class.field | local:Class.method:slot <TAB> count
 *
 *   agent_count TRACE --lifetimes TYPE CAUSE NTH
 *
 * for mode=sample's deaths (test_agent_sample.sh): whether each sample of
 * TYPE died at the NTH GC that started after its allocation and whose
 * cause contains CAUSE ("" any), or later with every GC in between flagged
 * merged (deaths of several GCs in one batch):
 *   lifetimes <TAB> samples <TAB> exact <TAB> late, merged <TAB> wrong
 *             <TAB> alive at the end <TAB> merged GCs of the trace
 * (AGENT_COUNT_DEBUG set: each wrong one's GCs on stderr)
 *
 *   agent_count TRACE --sampled
 *
 * for mode=sample (test_agent_sample.sh): the recorded allocations (flags
 * 0, the samples) and which of them died, per type and size and per thread:
 *   sampled <TAB> TYPE <TAB> size <TAB> samples <TAB> dead <TAB> live
 *   thread-sampled <TAB> NAME <TAB> samples <TAB> estimated bytes (the sum of
 *           size / (1 - exp(-size / interval)) over its samples, interval
 *           from the info key sample.interval)
 *   start <TAB> found <TAB> bytes <TAB> dead by the first GC <TAB> bytes
 *           <TAB> dead later <TAB> bytes <TAB> dead later, neither a Class
 *           nor a thread <TAB> alive after the first GC, neither a Class
 *           nor a thread (Thread objects: the ids of the trace's threads)
 *           <TAB> int[] of 64 KiB or more never dead
 *           for the objects found at start (flag PREEXISTING)
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "model/heap_state.h"
#include "model/trace.h"

struct key {
	uint32_t type, site;
};

struct count {
	struct key k;
	uint64_t n;
	UT_hash_handle hh;
};

struct ids {
	uint64_t *v;
	size_t n, cap;
};

static int push_id(struct ids *s, uint64_t id)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 65536;
		uint64_t *p = realloc(s->v, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = c;
	}
	s->v[s->n++] = id;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int bump(struct count **h, uint32_t type, uint32_t site)
{
	struct key k = { type, site };
	struct count *c = NULL;
	HASH_FIND(hh, *h, &k, sizeof(k), c);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->k = k;
		HASH_ADD(hh, *h, k, sizeof(c->k), c);
	}
	c->n++;
	return 0;
}

struct totals {
	uint64_t allocs, pre, deaths;
	struct ids alloc_ids, death_ids;
	struct count *by_site;
};

static int scan_frame(const struct trace *t, const struct trace_frame *fr, struct totals *s,
		      struct htr_err *err)
{
	struct htr_frame_hdr h = { fr->offset, fr->kind, fr->comp_len, fr->raw_len, fr->nevents };
	struct htr_iter *it = NULL;
	int rc = htr_iter_open(&it, t->file, &h, err);
	if (rc)
		return rc;
	struct htr_event ev;
	while (!rc && (rc = htr_iter_next(it, &ev, err)) == 1) {
		rc = 0;
		if (ev.type == HTR_EV_ALLOC) {
			rc = push_id(&s->alloc_ids, ev.u.alloc.id);
			if (ev.u.alloc.flags & HTR_ALLOC_PREEXISTING) {
				s->pre++;
			} else {
				s->allocs++;
				if (!rc)
					rc = bump(&s->by_site, ev.u.alloc.type, ev.u.alloc.site);
			}
		} else if (ev.type == HTR_EV_DEATHS) {
			for (uint32_t i = 0; i < ev.u.deaths.count && !rc; i++)
				rc = push_id(&s->death_ids, ev.u.deaths.ids[i]);
			s->deaths += ev.u.deaths.count;
		}
	}
	htr_iter_close(it);
	return rc < 0 ? rc : 0;
}

static void print_frame(const struct trace *t, const struct htr_site_frame *f)
{
	const struct trace_method *m = f->method < t->nmethods ? &t->methods[f->method] : NULL;
	printf("%s.%s:%d", m && m->cls ? m->cls : "?", m && m->name ? m->name : "?", (int)f->line);
}

static void print_site(const struct trace *t, const struct count *c, char *scratch, size_t len)
{
	const char *tn = trace_type_name(t, c->k.type, scratch, len);
	const struct trace_site *s = c->k.site < t->nsites ? &t->sites[c->k.site] : NULL;
	printf("type-site\t%s\t", tn);
	if (s && s->nframes)
		print_frame(t, &s->frames[0]);
	else
		printf("?");
	printf("\t%" PRIu64 "\n", c->n);
	if (s && s->nframes) {
		const struct trace_method *m = s->frames[0].method < t->nmethods ? &t->methods[s->frames[0].method] : NULL;
		const struct trace_method *by = s->nframes > 1 && s->frames[1].method < t->nmethods
						? &t->methods[s->frames[1].method] : NULL;
		char caller[1024] = "-";
		if (by)
			snprintf(caller, sizeof(caller), "%s.%s", by->cls ? by->cls : "?", by->name ? by->name : "?");
		printf("site-caller\t%s.%s%s\t%s\t%" PRIu64 "\n", m && m->cls ? m->cls : "?",
		       m && m->name ? m->name : "?", m && m->sig ? m->sig : "", caller, c->n);
	}
	for (uint32_t i = 0; s && i < s->nframes; i++) {
		const struct htr_site_frame *f = &s->frames[i];
		const struct trace_method *m = f->method < t->nmethods ? &t->methods[f->method] : NULL;
		if (m && m->cls && !strncmp(m->cls, "example.", 8)) {
			printf("type-app\t%s\t", tn);
			print_frame(t, f);
			printf("\t%" PRIu64 "\n", c->n);
			break;
		}
	}
}

static void root_label(const struct trace *t, const struct hs_root *r, char *out, size_t len)
{
	char scratch[64];
	if (r->kind == HTR_ROOT_STATIC) {
		const struct trace_type *ty = r->type < t->ntypes ? &t->types[r->type] : NULL;
		snprintf(out, len, "static:%s.%s", trace_type_name(t, r->type, scratch, sizeof(scratch)),
			 ty && r->field < ty->nfields ? ty->fields[r->field].name : "?");
	} else {
		const struct trace_method *m = r->method < t->nmethods ? &t->methods[r->method] : NULL;
		snprintf(out, len, "local:%s.%s:%u", m && m->cls ? m->cls : "?", m && m->name ? m->name : "?",
			 r->slot);
	}
}

/* Objects of type `type` reachable from root object `start` (BFS with an
 * explicit queue; mark is scratch of s->n bytes). */
static uint64_t reach_count(const struct heap_state *s, uint32_t start, uint32_t type, uint8_t *mark,
			    uint32_t *queue)
{
	memset(mark, 0, s->n);
	uint32_t head = 0, tail = 0;
	uint64_t n = 0;
	queue[tail++] = start;
	mark[start] = 1;
	while (head < tail) {
		uint32_t i = queue[head++];
		n += hs_info(s, i)->type == type;
		for (uint32_t e = s->out_off[i]; e < s->out_off[i + 1]; e++) {
			uint32_t j = s->out_tgt[e];
			if (!mark[j]) {
				mark[j] = 1;
				queue[tail++] = j;
			}
		}
	}
	return n;
}

static int reach(const struct trace *t, const char *type_name)
{
	uint32_t type = UINT32_MAX;
	for (uint32_t i = 0; i < t->ntypes; i++)
		if (t->types[i].name && !strcmp(t->types[i].name, type_name))
			type = i;
	if (type == UINT32_MAX || !t->ngcs) {
		fprintf(stderr, "agent_count: no type %s or no GC\n", type_name);
		return 1;
	}
	struct heap_state *s = NULL;
	struct htr_err err;
	memset(&err, 0, sizeof(err));
	if (heap_state_build(t, t->ngcs - 1, NULL, &s, &err)) {
		fprintf(stderr, "agent_count: %s\n", err.msg);
		return 1;
	}
	uint8_t *mark = malloc(s->n + 1);
	uint32_t *queue = malloc((s->n + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; mark && queue && s->has_graph && r < s->nroots; r++) {
		const struct hs_root *rt = &s->roots[r];
		if (rt->kind != HTR_ROOT_STATIC && rt->kind != HTR_ROOT_LOCAL)
			continue;
		char label[512];
		root_label(t, rt, label, sizeof(label));
		uint64_t n = reach_count(s, rt->object, type, mark, queue);
		if (n)
			printf("reach\t%s\t%" PRIu64 "\n", label, n);
	}
	free(mark);
	free(queue);
	heap_state_free(s);
	return 0;
}

/* ---- --sampled ---- */

struct sample {
	uint64_t id, size, time_ns;
	uint32_t type, thread; /* thread: dense index, UINT32_MAX none */
	int dead;
	uint32_t death_gc;     /* the GC its death was written with (dead) */
	UT_hash_handle hh;
};

struct per_size {
	struct key2 { uint32_t type; uint64_t size; } k;
	uint64_t samples, dead;
	UT_hash_handle hh;
};

/* The objects found at start: id, size, whether a Class or thread, the
 * GC of their death (0: none recorded) */
struct start_obj {
	uint64_t id, size;
	int plain, big_int_array;
	uint32_t death_gc;
	UT_hash_handle hh;
};

static int add_start(const struct trace *t, const struct htr_event *ev, struct start_obj **start)
{
	struct start_obj *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	char scratch[64];
	x->id = ev->u.alloc.id;
	x->size = ev->u.alloc.size;
	const char *name = trace_type_name(t, ev->u.alloc.type, scratch, sizeof(scratch));
	x->plain = strcmp(name, "java.lang.Class") && trace_thread_index(t, x->id) == UINT32_MAX;
	x->big_int_array = !strcmp(name, "int[]") && x->size >= 65536;
	HASH_ADD(hh, *start, id, sizeof(x->id), x);
	return 0;
}

static int collect_samples(const struct trace *t, const struct trace_frame *fr, struct sample **all,
			   struct start_obj **start, struct htr_err *err)
{
	struct htr_frame_hdr h = { fr->offset, fr->kind, fr->comp_len, fr->raw_len, fr->nevents };
	struct htr_iter *it = NULL;
	int rc = htr_iter_open(&it, t->file, &h, err);
	if (rc)
		return rc;
	struct htr_event ev;
	while (!rc && (rc = htr_iter_next(it, &ev, err)) == 1) {
		rc = 0;
		if (ev.type == HTR_EV_ALLOC && (ev.u.alloc.flags & HTR_ALLOC_PREEXISTING)) {
			rc = add_start(t, &ev, start);
		} else if (ev.type == HTR_EV_ALLOC) {
			struct sample *x = calloc(1, sizeof(*x));
			if (!x) {
				rc = -ENOMEM;
				break;
			}
			x->id = ev.u.alloc.id;
			x->size = ev.u.alloc.size;
			x->type = ev.u.alloc.type;
			x->time_ns = ev.u.alloc.time_ns;
			x->thread = trace_thread_index(t, ev.u.alloc.thread);
			HASH_ADD(hh, *all, id, sizeof(x->id), x);
		} else if (ev.type == HTR_EV_DEATHS) {
			for (uint32_t i = 0; i < ev.u.deaths.count; i++) {
				struct sample *x = NULL;
				HASH_FIND(hh, *all, &ev.u.deaths.ids[i], sizeof(uint64_t), x);
				if (x && !x->dead) {
					x->dead = 1;
					x->death_gc = ev.u.deaths.gc;
				}
				struct start_obj *so = NULL;
				HASH_FIND(hh, *start, &ev.u.deaths.ids[i], sizeof(uint64_t), so);
				if (so && !so->death_gc)
					so->death_gc = ev.u.deaths.gc;
			}
		}
	}
	htr_iter_close(it);
	return rc < 0 ? rc : 0;
}

/* Every EVENTS frame's samples and objects found at start (collect_samples). */
static int collect_all_samples(const struct trace *t, struct sample **all, struct start_obj **start,
			       struct htr_err *err)
{
	int rc = 0;
	for (uint32_t f = 0; f < t->nframes && !rc; f++)
		if (t->frames[f].kind == HTR_FRAME_EVENTS)
			rc = collect_samples(t, &t->frames[f], all, start, err);
	return rc;
}

static int sampled(const struct trace *t)
{
	const char *iv = trace_info(t, "sample.interval");
	double interval = iv ? strtod(iv, NULL) : 0;
	if (!(interval > 0)) {
		fprintf(stderr, "agent_count: no sample.interval in the trace's info\n");
		return 1;
	}
	struct sample *all = NULL, *x, *tmp;
	struct start_obj *start = NULL, *so, *stmp;
	struct htr_err err;
	memset(&err, 0, sizeof(err));
	int rc = collect_all_samples(t, &all, &start, &err);
	uint32_t first_gc = t->ngcs ? t->gcs[0].gc : UINT32_MAX;
	uint64_t found = 0, found_b = 0, d1 = 0, d1_b = 0, dl = 0, dl_b = 0, dl_plain = 0, alive_plain = 0;
	uint64_t big_alive = 0;
	HASH_ITER(hh, start, so, stmp) {
		found++;
		found_b += so->size;
		if (so->death_gc && so->death_gc <= first_gc) {
			d1++;
			d1_b += so->size;
		} else if (so->death_gc) {
			dl++;
			dl_b += so->size;
			dl_plain += so->plain;
		} else {
			alive_plain += so->plain;
			big_alive += so->big_int_array;
		}
		HASH_DEL(start, so);
		free(so);
	}
	if (!rc)
		printf("start\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
		       "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", found, found_b, d1, d1_b, dl, dl_b, dl_plain,
		       alive_plain + dl_plain, big_alive);
	struct per_size *sizes = NULL, *ps, *ptmp;
	uint64_t *tsamples = calloc(t->nthreads + 1, sizeof(uint64_t));
	double *tbytes = calloc(t->nthreads + 1, sizeof(double));
	if (!rc && (!tsamples || !tbytes))
		rc = -ENOMEM;
	HASH_ITER(hh, all, x, tmp) {
		if (!rc) {
			struct key2 k;
			memset(&k, 0, sizeof(k));
			k.type = x->type;
			k.size = x->size;
			HASH_FIND(hh, sizes, &k, sizeof(k), ps);
			if (!ps && (ps = calloc(1, sizeof(*ps))) != NULL) {
				ps->k = k;
				HASH_ADD(hh, sizes, k, sizeof(ps->k), ps);
			}
			if (ps) {
				ps->samples++;
				ps->dead += x->dead;
			} else {
				rc = -ENOMEM;
			}
		}
		if (!rc && x->thread < t->nthreads) {
			tsamples[x->thread]++;
			double pr = -expm1(-(double)x->size / interval);
			tbytes[x->thread] += pr > 0 ? (double)x->size / pr : (double)x->size;
		}
		HASH_DEL(all, x);
		free(x);
	}
	char scratch[64];
	HASH_ITER(hh, sizes, ps, ptmp) {
		if (!rc)
			printf("sampled\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
			       trace_type_name(t, ps->k.type, scratch, sizeof(scratch)), ps->k.size, ps->samples,
			       ps->dead, ps->samples - ps->dead);
		HASH_DEL(sizes, ps);
		free(ps);
	}
	for (uint32_t i = 0; !rc && i < t->nthreads; i++)
		if (tsamples[i])
			printf("thread-sampled\t%s\t%" PRIu64 "\t%.0f\n", t->threads[i].name ? t->threads[i].name : "?",
			       tsamples[i], tbytes[i]);
	free(tsamples);
	free(tbytes);
	if (rc)
		fprintf(stderr, "agent_count: %s\n", err.msg[0] ? err.msg : strerror(-rc));
	return rc ? 1 : 0;
}

/* The index in t->gcs of GC number gc, or UINT32_MAX. */
static uint32_t gc_index(const struct trace *t, uint32_t gc)
{
	for (uint32_t g = 0; g < t->ngcs; g++)
		if (t->gcs[g].gc == gc)
			return g;
	return UINT32_MAX;
}

/* --lifetimes TYPE CAUSE NTH: each sample of TYPE should die at the NTH
 * GC that starts after its allocation and whose cause contains CAUSE (""
 * any GC).  Prints "lifetimes <TAB> samples <TAB> exact <TAB> late, every GC
 * between flagged merged <TAB> wrong <TAB> alive <TAB> merged GCs". */
static int lifetimes(const struct trace *t, const char *type, const char *cause, uint32_t nth)
{
	struct sample *all = NULL, *x, *tmp;
	struct start_obj *start = NULL, *so, *stmp;
	struct htr_err err;
	memset(&err, 0, sizeof(err));
	int rc = collect_all_samples(t, &all, &start, &err);
	uint64_t n = 0, exact = 0, late = 0, wrong = 0, alive = 0, merged = 0;
	char scratch[64];
	for (uint32_t g = 0; g < t->ngcs; g++)
		merged += !!(t->gcs[g].flags & HTR_GC_DEATHS_MERGED);
	HASH_ITER(hh, all, x, tmp) {
		if (!rc && !strcmp(trace_type_name(t, x->type, scratch, sizeof(scratch)), type)) {
			n++;
			uint32_t want = UINT32_MAX, got = x->dead ? gc_index(t, x->death_gc) : UINT32_MAX;
			for (uint32_t g = 0, k = 0; g < t->ngcs && want == UINT32_MAX; g++)
				if (t->gcs[g].start_ns > x->time_ns && strstr(t->gcs[g].cause, cause) && ++k == nth)
					want = g;
			int ok_late = got != UINT32_MAX && want != UINT32_MAX && got > want;
			for (uint32_t g = want + 1; ok_late && g <= got; g++)
				ok_late = !!(t->gcs[g].flags & HTR_GC_DEATHS_MERGED);
			if (!x->dead)
				alive++;
			else if (got == want)
				exact++;
			else if (ok_late)
				late++;
			else {
				wrong++;
				if (getenv("AGENT_COUNT_DEBUG"))
					fprintf(stderr, "wrong: want %u got %u\n", want < t->ngcs ? t->gcs[want].gc : 0,
						got < t->ngcs ? t->gcs[got].gc : 0);
			}
		}
		HASH_DEL(all, x);
		free(x);
	}
	HASH_ITER(hh, start, so, stmp) {
		HASH_DEL(start, so);
		free(so);
	}
	if (rc) {
		fprintf(stderr, "agent_count: %s\n", err.msg[0] ? err.msg : strerror(-rc));
		return 1;
	}
	printf("lifetimes\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", n,
	       exact, late, wrong, alive, merged);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--reach")) &&
	    !(argc == 3 && !strcmp(argv[2], "--sampled")) && !(argc == 6 && !strcmp(argv[2], "--lifetimes"))) {
		fprintf(stderr, "usage: agent_count TRACE [--reach TYPE | --sampled | --lifetimes TYPE CAUSE NTH]\n");
		return 2;
	}
	struct trace *t = NULL;
	struct htr_err err;
	memset(&err, 0, sizeof(err));
	int rc = trace_open(&t, argv[1], NULL, &err);
	if (rc) {
		fprintf(stderr, "agent_count: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	if (argc == 6) {
		rc = lifetimes(t, argv[3], argv[4], (uint32_t)strtoul(argv[5], NULL, 10));
		trace_close(t);
		return rc;
	}
	if (argc == 4) {
		rc = reach(t, argv[3]);
		trace_close(t);
		return rc;
	}
	if (argc == 3) {
		rc = sampled(t);
		trace_close(t);
		return rc;
	}
	struct totals s;
	memset(&s, 0, sizeof(s));
	for (uint32_t f = 0; f < t->nframes && !rc; f++)
		if (t->frames[f].kind == HTR_FRAME_EVENTS)
			rc = scan_frame(t, &t->frames[f], &s, &err);
	if (rc) {
		fprintf(stderr, "agent_count: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	qsort(s.alloc_ids.v, s.alloc_ids.n, sizeof(uint64_t), cmp_u64);
	uint64_t dup = 0, unalloc = 0;
	for (size_t i = 1; i < s.alloc_ids.n; i++)
		dup += s.alloc_ids.v[i] == s.alloc_ids.v[i - 1];
	for (size_t i = 0; i < s.death_ids.n; i++)
		unalloc += !bsearch(&s.death_ids.v[i], s.alloc_ids.v, s.alloc_ids.n, sizeof(uint64_t), cmp_u64);
	uint32_t graphs = 0, merged = 0, full = 0, dropped = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		graphs += !!(t->gcs[g].flags & HTR_GC_HAS_GRAPH);
		dropped += !!(t->gcs[g].flags & HTR_GC_GRAPH_DROPPED);
		merged += !!(t->gcs[g].flags & HTR_GC_DEATHS_MERGED);
		full += !!(t->gcs[g].flags & HTR_GC_FULL);
	}
	printf("allocs\t%" PRIu64 "\npreexisting\t%" PRIu64 "\nduplicate_ids\t%" PRIu64 "\n", s.allocs, s.pre, dup);
	printf("deaths\t%" PRIu64 "\ndeaths_unallocated\t%" PRIu64 "\n", s.deaths, unalloc);
	printf("last_gc_graph\t%d\n", t->ngcs ? !!(t->gcs[t->ngcs - 1].flags & HTR_GC_HAS_GRAPH) : 0);
	printf("gcs\t%u\ngraph_gcs\t%u\ndropped_graph_gcs\t%u\nmerged_gcs\t%u\nfull_gcs\t%u\ntruncated\t%d\n",
	       t->ngcs, graphs, dropped, merged, full, t->truncated);
	/* mode=count: each counted site's METHOD, by id ("?" when the id has
	 * no METHOD event), to check that the ids are valid METHOD ids */
	for (uint32_t i = 0; i < t->ncount_sites; i++) {
		const struct trace_count_site *cs = &t->count_sites[i];
		if (!cs->type)
			continue;
		const struct trace_method *m = cs->method < t->nmethods ? &t->methods[cs->method] : NULL;
		printf("count-site\t%u\t%u\t%s.%s%s\t%u\t%s\t%" PRId64 "\n", i, cs->method,
		       m && m->cls ? m->cls : "?", m && m->name ? m->name : "?", m && m->sig ? m->sig : "?", cs->bci,
		       cs->type, i < t->nsite_counts ? t->site_counts[i] : (int64_t)0);
	}
	/* per type, then per (type, allocating frame) */
	uint64_t *per_type = calloc(t->ntypes + 1, sizeof(uint64_t));
	char scratch[64];
	struct count *c, *tmp;
	HASH_ITER(hh, s.by_site, c, tmp)
		if (per_type && c->k.type < t->ntypes)
			per_type[c->k.type] += c->n;
	for (uint32_t i = 0; per_type && i < t->ntypes; i++)
		if (per_type[i])
			printf("type\t%s\t%" PRIu64 "\n", trace_type_name(t, i, scratch, sizeof(scratch)), per_type[i]);
	HASH_ITER(hh, s.by_site, c, tmp) {
		print_site(t, c, scratch, sizeof(scratch));
		HASH_DEL(s.by_site, c);
		free(c);
	}
	free(per_type);
	free(s.alloc_ids.v);
	free(s.death_ids.v);
	trace_close(t);
	return 0;
}

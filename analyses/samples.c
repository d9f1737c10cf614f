/* samples.c - see samples.h. */
#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* ---- sampled allocations ---- */

/* A site's allocating frame (method, line): sites of different callers
 * that allocate at the same place are one allocation site here. */
uint64_t samples_site_key(const struct trace *t, uint32_t site)
{
	if (site >= t->nsites || !t->sites[site].nframes)
		return UINT64_MAX;
	const struct htr_site_frame *f = &t->sites[site].frames[0];
	return (uint64_t)f->method << 32 | (uint32_t)f->line;
}

/* One (allocating frame, type, sampler) while collecting. */
struct acc {
	UT_hash_handle hh;
	struct { uint64_t frame; uint32_t type, tlab; } key;
	uint32_t site;             /* the first site seen with that frame */
	uint64_t samples, weight, sized;
	double est;                /* sum of weight / size over the sized samples */
	uint64_t unsized, unsized_weight;
};

struct collect {
	const struct trace *t;
	uint64_t from, to;
	struct acc *h;
	uint64_t *type_size;       /* [ntypes]: an instance's size from a TLAB event; 0 unknown */
	uint64_t by_kind[HTR_SAMPLE_KIND_MAX + 1];
	uint64_t agent_samples;
};

static int is_instance(const struct trace *t, uint32_t type)
{
	return type < t->ntypes && t->types[type].name && t->types[type].kind == HTR_TYPE_INSTANCE;
}

static struct acc *acc_of(struct collect *c, uint32_t site, uint32_t type, uint32_t tlab)
{
	struct acc probe, *a;
	memset(&probe.key, 0, sizeof probe.key);
	probe.key.frame = samples_site_key(c->t, site);
	probe.key.type = type;
	probe.key.tlab = tlab;
	HASH_FIND(hh, c->h, &probe.key, sizeof probe.key, a);
	if (!a) {
		if (!(a = calloc(1, sizeof *a)))
			return NULL;
		a->key = probe.key;
		a->site = site;
		HASH_ADD(hh, c->h, key, sizeof a->key, a);
	}
	return a;
}

/* The agent's mode=sample: each ALLOC an object the sampler picked, of
 * known size, standing for trace_sample_weight() allocations. */
static int on_sampled_alloc(struct collect *c, const struct htr_alloc *al)
{
	if ((al->flags & HTR_ALLOC_PREEXISTING) || al->time_ns < c->from || al->time_ns >= c->to)
		return 0;
	struct acc *a = acc_of(c, al->site, al->type, 0);
	if (!a)
		return -ENOMEM;
	double w = trace_sample_weight(c->t, al->flags, al->size);
	a->samples++;
	a->sized++;
	a->weight += (uint64_t)llround(w * (double)al->size);
	a->est += w;
	c->agent_samples++;
	return 0;
}

static int on_sample(void *vc, const struct htr_event *ev)
{
	struct collect *c = vc;
	if (ev->type == HTR_EV_ALLOC && c->t->sample_interval)
		return on_sampled_alloc(c, &ev->u.alloc);
	if (ev->type != HTR_EV_ALLOC_SAMPLE)
		return 0;
	const struct htr_alloc_sample *s = &ev->u.alloc_sample;
	if (s->size && is_instance(c->t, s->type))
		c->type_size[s->type] = s->size;
	if (s->time_ns < c->from || s->time_ns >= c->to)
		return 0;
	c->by_kind[s->kind]++;
	struct acc *a = acc_of(c, s->site, s->type, s->kind != HTR_SAMPLE_JFR);
	if (!a)
		return -ENOMEM;
	a->samples++;
	a->weight += s->weight;
	if (s->size) {
		a->sized++;
		a->est += (double)s->weight / (double)s->size;
	} else {
		a->unsized++;
		a->unsized_weight += s->weight;
	}
	return 0;
}

static int by_weight(const void *x, const void *y)
{
	const struct sample_row *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->type < b->type ? -1 : a->type > b->type;
}

/* Keeps the rows of the chosen sampler, with the estimates finished. */
static int finish(struct collect *c, struct sample_set *out)
{
	/* the agent's samples are the trace's only sampler (tlab 0) */
	int tlab = c->by_kind[HTR_SAMPLE_JFR] == 0 && c->agent_samples == 0;
	uint32_t n = 0;
	struct acc *a, *tmp;
	HASH_ITER(hh, c->h, a, tmp) n += a->key.tlab == (uint32_t)tlab;
	out->rows = calloc(n ? n : 1, sizeof *out->rows);
	if (!out->rows)
		return -ENOMEM;
	out->kind = !c->h ? 0 : c->agent_samples ? SAMPLES_AGENT : tlab ? HTR_SAMPLE_JFR_NEW_TLAB : HTR_SAMPLE_JFR;
	HASH_ITER(hh, c->h, a, tmp) {
		if (a->key.tlab != (uint32_t)tlab)
			continue;
		struct sample_row *r = &out->rows[out->n++];
		r->site = a->site;
		r->type = a->key.type;
		r->samples = a->samples;
		r->weight = a->weight;
		r->est_count = a->est;
		r->sized = a->sized;
		uint64_t size = a->key.type < c->t->ntypes ? c->type_size[a->key.type] : 0;
		if (a->unsized && size) {
			r->est_count += (double)a->unsized_weight / (double)size;
			r->sized += a->unsized;
		}
		out->samples += r->samples;
		out->weight += r->weight;
	}
	qsort(out->rows, out->n, sizeof *out->rows, by_weight);
	return 0;
}

int samples_collect(const struct trace *t, uint64_t from_ns, uint64_t to_ns, struct sample_set *out,
		    struct htr_err *err)
{
	memset(out, 0, sizeof *out);
	struct collect c = { .t = t, .from = from_ns, .to = to_ns };
	c.type_size = calloc((size_t)t->ntypes + 1, sizeof *c.type_size);
	int rc = c.type_size ? 0 : -ENOMEM;
	if (!rc && (t->alloc_samples || t->sample_interval))
		rc = trace_each_event(t, on_sample, &c, err);
	if (!rc)
		rc = finish(&c, out);
	memcpy(out->by_kind, c.by_kind, sizeof out->by_kind);
	struct acc *a, *tmp;
	HASH_ITER(hh, c.h, a, tmp) {
		HASH_DEL(c.h, a);
		free(a);
	}
	free(c.type_size);
	if (rc)
		samples_free(out);
	return rc;
}

void samples_free(struct sample_set *s)
{
	free(s->rows);
	memset(s, 0, sizeof *s);
}

/* ---- sampled live objects ---- */

static int grow(void **p, uint64_t *cap, uint64_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint64_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

struct old_collect {
	struct old_set *s;
	uint64_t rows_cap, path_cap, strs_cap;
};

/* Appends len bytes and a NUL; *off their offset. */
static int str_add(struct old_collect *c, const char *p, uint32_t len, uint32_t *off)
{
	struct old_set *s = c->s;
	if (!len) {
		*off = 0;
		return 0;
	}
	if (s->strs_len + len + 1 > UINT32_MAX)
		return -EOVERFLOW;
	int rc = grow((void **)&s->strs, &c->strs_cap, s->strs_len + len + 1, 1);
	if (rc)
		return rc;
	*off = (uint32_t)s->strs_len;
	memcpy(s->strs + s->strs_len, p, len);
	s->strs[s->strs_len + len] = '\0';
	s->strs_len += len + 1;
	return 0;
}

static int on_old(void *vc, const struct htr_event *ev)
{
	struct old_collect *c = vc;
	struct old_set *s = c->s;
	if (ev->type != HTR_EV_OLD_SAMPLE)
		return 0;
	const struct htr_old_sample *o = &ev->u.old_sample;
	int rc = grow((void **)&s->rows, &c->rows_cap, s->n + 1, sizeof *s->rows);
	if (!rc)
		rc = grow((void **)&s->path, &c->path_cap, s->npath + o->npath, sizeof *s->path);
	if (rc)
		return rc;
	struct old_row *r = &s->rows[s->n];
	*r = (struct old_row){ .time_ns = o->time_ns, .alloc_ns = o->alloc_ns, .age_ns = o->age_ns,
			       .heap_used = o->heap_used, .type = o->type, .site = o->site, .thread = o->thread,
			       .array_length = o->array_length, .path_off = s->npath, .npath = o->npath };
	if ((rc = str_add(c, o->root_kind, o->root_kind_len, &r->root_kind)) ||
	    (rc = str_add(c, o->root_desc, o->root_desc_len, &r->root_desc)) ||
	    (rc = str_add(c, o->root_system, o->root_system_len, &r->root_system)))
		return rc;
	for (uint32_t i = 0; i < o->npath; i++) {
		struct old_path_entry *e = &s->path[s->npath + i];
		e->type = o->path[i].type;
		e->skip = o->path[i].skip;
		if ((rc = str_add(c, o->path[i].how, o->path[i].how_len, &e->how)) ||
		    (rc = str_add(c, o->path[i].desc, o->path[i].desc_len, &e->desc)))
			return rc;
	}
	s->npath += o->npath;
	s->n++;
	return 0;
}

struct sort_ctx {
	const struct trace *t;
	const struct old_set *s;
};

static int by_type_site(const void *x, const void *y, void *vctx)
{
	const struct sort_ctx *c = vctx;
	const struct old_row *a = &c->s->rows[*(const uint32_t *)x], *b = &c->s->rows[*(const uint32_t *)y];
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	uint64_t sa = samples_site_key(c->t, a->site), sb = samples_site_key(c->t, b->site);
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (a->alloc_ns != b->alloc_ns)
		return a->alloc_ns < b->alloc_ns ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int by_samples(const void *x, const void *y)
{
	const struct old_group *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->first_alloc_ns != b->first_alloc_ns)
		return a->first_alloc_ns < b->first_alloc_ns ? -1 : 1;
	return a->type != b->type ? (a->type < b->type ? -1 : 1) : (a->site < b->site ? -1 : a->site > b->site);
}

/* Groups by (type, allocating frame): sort row indexes, then one pass
 * (qsort_r: several files may be rendered at once). */
static int group(const struct trace *t, struct old_set *s)
{
	if (s->n > UINT32_MAX)
		return -EOVERFLOW;
	uint32_t *ix = malloc((s->n ? s->n : 1) * sizeof *ix);
	s->groups = calloc(s->n ? s->n : 1, sizeof *s->groups);
	if (!ix || !s->groups) {
		free(ix);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->n; i++)
		ix[i] = i;
	struct sort_ctx sc = { t, s };
	qsort_r(ix, s->n, sizeof *ix, by_type_site, &sc);
	for (uint32_t k = 0; k < s->n; k++) {
		const struct old_row *r = &s->rows[ix[k]];
		struct old_group *g = s->ngroups ? &s->groups[s->ngroups - 1] : NULL;
		if (!g || g->type != r->type || samples_site_key(t, g->site) != samples_site_key(t, r->site)) {
			g = &s->groups[s->ngroups++];
			*g = (struct old_group){ .type = r->type, .site = r->site, .first_alloc_ns = r->alloc_ns,
						 .example = ix[k] };
		}
		g->samples++;
		g->with_path += r->npath > 1 || s->strs[r->root_kind];
		g->last_alloc_ns = r->alloc_ns;
		if (r->age_ns > g->max_age_ns)
			g->max_age_ns = r->age_ns;
	}
	free(ix);
	qsort(s->groups, s->ngroups, sizeof *s->groups, by_samples);
	return 0;
}

int old_samples_collect(const struct trace *t, struct old_set *out, struct htr_err *err)
{
	memset(out, 0, sizeof *out);
	struct old_collect c = { .s = out };
	/* offset 0 is "" (what str_add gives an empty string) */
	int rc = grow((void **)&out->strs, &c.strs_cap, 1, 1);
	if (!rc) {
		out->strs[0] = '\0';
		out->strs_len = 1;
	}
	if (!rc && t->old_samples)
		rc = trace_each_event(t, on_old, &c, err);
	if (!rc)
		rc = group(t, out);
	if (rc)
		old_samples_free(out);
	return rc;
}

void old_samples_free(struct old_set *s)
{
	free(s->rows);
	free(s->path);
	free(s->strs);
	free(s->groups);
	memset(s, 0, sizeof *s);
}

const char *old_entry_type(const struct trace *t, const struct old_set *s, const struct old_path_entry *e,
			   char *scratch, size_t len)
{
	static const char prefix[] = "Class Name: ";
	if (e->type == HTR_NO_TYPE)
		return "<unknown type>";
	const char *name = trace_type_name(t, e->type, scratch, len), *desc = s->strs + e->desc;
	if (!strcmp(name, "java.lang.Class") && !strncmp(desc, prefix, sizeof prefix - 1))
		return desc + sizeof prefix - 1;
	return name;
}

int old_static_holder(const struct trace *t, const struct old_set *s, const struct old_row *r, char *out,
		      size_t len)
{
	char scratch[64];
	for (uint64_t i = 1; i < r->npath; i++) {
		const struct old_path_entry *e = &s->path[r->path_off + i];
		if (e->type == HTR_NO_TYPE || e->type >= t->ntypes || !t->types[e->type].name ||
		    strcmp(t->types[e->type].name, "java.lang.Class") != 0 || !s->strs[e->how])
			continue;
		const char *cls = old_entry_type(t, s, e, scratch, sizeof scratch);
		if (!strcmp(cls, "java.lang.Class"))
			continue; /* a Class object the recorder did not describe */
		snprintf(out, len, "%s.%s", cls, s->strs + e->how);
		return 1;
	}
	return 0;
}

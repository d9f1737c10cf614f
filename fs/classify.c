/* classify.c - see classify.h */
#include "classify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "names.h"

struct name_ent {
	UT_hash_handle hh;
	const char *name;      /* borrowed from the space's names[] or raw[] */
	uint32_t key;
};

/* ---- symbols ---- */

int sym_method(const struct trace *t, uint32_t method, struct buf *out)
{
	if (method < t->nmethods && t->methods[method].name) {
		const struct trace_method *m = &t->methods[method];
		return buf_printf(out, "%s.%s", m->cls ? m->cls : "?", m->name);
	}
	return buf_printf(out, "<unknown method %" PRIu32 ">", method);
}

int sym_frame(const struct trace *t, const struct htr_site_frame *f, struct buf *out)
{
	int rc = sym_method(t, f->method, out);
	if (!rc && f->line >= 0)
		rc = buf_printf(out, ":%" PRId32, f->line);
	return rc;
}

const char *sym_thread(const struct trace *t, uint32_t thread)
{
	if (thread < t->nthreads && t->threads[thread].name)
		return t->threads[thread].name;
	return "<unknown thread>";
}

/* ---- the classifiers ---- */

static int raw_alloc(struct cls_space *sp, uint32_t nkeys)
{
	sp->nkeys = nkeys;
	sp->raw = calloc(nkeys ? nkeys : 1, sizeof *sp->raw);
	return sp->raw ? 0 : -ENOMEM;
}

/* Keys 0..ntypes-1 are type ids; key ntypes holds objects whose type id is
 * outside the trace's table. */
static int type_build(const struct trace *t, struct cls_space *sp)
{
	int rc = raw_alloc(sp, t->ntypes + 1);
	char scratch[64];
	for (uint32_t k = 0; k < t->ntypes && !rc; k++) {
		sp->raw[k] = strdup(trace_type_name(t, k, scratch, sizeof scratch));
		rc = sp->raw[k] ? 0 : -ENOMEM;
	}
	if (!rc) {
		sp->raw[t->ntypes] = strdup("<unknown type>");
		rc = sp->raw[t->ntypes] ? 0 : -ENOMEM;
	}
	return rc;
}

static uint32_t type_key(const struct trace *t, const struct cls_space *sp,
			 const struct objinfo *oi)
{
	(void)sp;
	return oi->type < t->ntypes ? oi->type : t->ntypes;
}

static int thread_build(const struct trace *t, struct cls_space *sp)
{
	int rc = raw_alloc(sp, t->nthreads + 1);
	for (uint32_t k = 0; k <= t->nthreads && !rc; k++) {
		sp->raw[k] = strdup(k < t->nthreads ? sym_thread(t, k) : "<unknown thread>");
		rc = sp->raw[k] ? 0 : -ENOMEM;
	}
	return rc;
}

static uint32_t thread_key(const struct trace *t, const struct cls_space *sp,
			   const struct objinfo *oi)
{
	(void)sp;
	return oi->thread < t->nthreads ? oi->thread : t->nthreads;
}

/* Sites share a key when their innermost frames are equal: the key space is
 * the distinct "Class.method:line" strings, plus one for unknown sites. */
static int site_build(const struct trace *t, struct cls_space *sp)
{
	struct name_ent *seen = NULL, *e, *tmp;
	struct buf b;
	char **raw = NULL;
	uint32_t nkeys = 0;
	int rc = -ENOMEM;
	buf_init(&b);
	sp->site_key = malloc((t->nsites ? t->nsites : 1) * sizeof *sp->site_key);
	raw = calloc((size_t)t->nsites + 1, sizeof *raw);
	if (!sp->site_key || !raw)
		goto out;
	sp->nsite_key = t->nsites;
	for (uint32_t s = 0; s < t->nsites; s++) {
		sp->site_key[s] = CLS_NO_KEY;
		if (t->sites[s].nframes == 0)
			continue;
		buf_reset(&b);
		if ((rc = sym_frame(t, &t->sites[s].frames[0], &b)) || (rc = buf_putc(&b, 0)))
			goto out;
		rc = -ENOMEM;
		HASH_FIND_STR(seen, (char *)b.data, e);
		if (!e) {
			e = calloc(1, sizeof *e);
			raw[nkeys] = strdup((char *)b.data);
			if (!e || !raw[nkeys]) {
				free(e);
				goto out;
			}
			e->name = raw[nkeys];
			e->key = nkeys++;
			HASH_ADD_KEYPTR(hh, seen, e->name, strlen(e->name), e);
		}
		sp->site_key[s] = e->key;
	}
	raw[nkeys] = strdup("<unknown site>");
	if (!raw[nkeys])
		goto out;
	for (uint32_t s = 0; s < t->nsites; s++) {
		if (sp->site_key[s] == CLS_NO_KEY)
			sp->site_key[s] = nkeys;
	}
	sp->nkeys = nkeys + 1;
	sp->raw = raw;
	raw = NULL;
	rc = 0;
out:
	HASH_ITER(hh, seen, e, tmp) {
		HASH_DEL(seen, e);
		free(e);
	}
	if (raw) {
		for (uint32_t k = 0; k <= nkeys; k++)
			free(raw[k]);
		free(raw);
	}
	buf_free(&b);
	return rc;
}

static uint32_t site_key(const struct trace *t, const struct cls_space *sp,
			 const struct objinfo *oi)
{
	(void)t;
	/* The last key is "<unknown site>". */
	return oi->site < sp->nsite_key ? sp->site_key[oi->site] : sp->nkeys - 1;
}

const struct classifier classifiers[CLS_COUNT] = {
	[CLS_TYPE] = { "type", "the object's class (java.util.HashMap, int[])", type_build, type_key },
	[CLS_SITE] = { "site", "the allocating frame, Class.method:line (innermost frame only)",
		       site_build, site_key },
	[CLS_THREAD] = { "thread", "the allocating thread", thread_build, thread_key },
};

int chain_uses(const struct chain *c, uint32_t cls)
{
	for (uint32_t i = 0; i < c->depth; i++) {
		if (c->steps[i].cls == cls)
			return 1;
	}
	return 0;
}

/* ---- key spaces ---- */

static void space_free(struct cls_space *sp)
{
	if (!sp)
		return;
	struct name_ent *e, *tmp;
	HASH_ITER(hh, sp->map, e, tmp) {
		HASH_DEL(sp->map, e);
		free(e);
	}
	for (uint32_t k = 0; k < sp->nkeys; k++) {
		if (sp->raw)
			free(sp->raw[k]);
		if (sp->names)
			free(sp->names[k]);
	}
	free(sp->raw);
	free(sp->names);
	free(sp->site_key);
	free(sp);
}

/* Escapes every raw name; a later key whose file name is taken gets the
 * first free "%#N" suffix, so the names are unique and the same for every
 * GC of the trace. */
static int space_name_keys(struct cls_space *sp)
{
	sp->names = calloc(sp->nkeys ? sp->nkeys : 1, sizeof *sp->names);
	if (!sp->names)
		return -ENOMEM;
	for (uint32_t k = 0; k < sp->nkeys; k++) {
		char name[NAME_BUF], base[NAME_BUF];
		struct name_ent *e;
		name_escape(sp->raw[k], strlen(sp->raw[k]), base);
		strcpy(name, base);
		for (uint32_t n = 2;; n++) {
			HASH_FIND_STR(sp->map, name, e);
			if (!e)
				break;
			strcpy(name, base);
			name_add_suffix(name, n);
		}
		sp->names[k] = strdup(name);
		e = calloc(1, sizeof *e);
		if (!sp->names[k] || !e) {
			free(e);
			return -ENOMEM;
		}
		e->name = sp->names[k];
		e->key = k;
		HASH_ADD_KEYPTR(hh, sp->map, e->name, strlen(e->name), e);
	}
	return 0;
}

int cls_registry_init(struct cls_registry *r, const struct trace *t)
{
	memset(r, 0, sizeof *r);
	r->t = t;
	int rc = pthread_mutex_init(&r->lock, NULL);
	return -rc;
}

void cls_registry_destroy(struct cls_registry *r)
{
	for (uint32_t c = 0; c < CLS_COUNT; c++)
		space_free(r->sp[c]);
	pthread_mutex_destroy(&r->lock);
}

int cls_space_get(struct cls_registry *r, uint32_t cls, const struct cls_space **out)
{
	int rc = 0;
	if (cls >= CLS_COUNT)
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	if (!r->sp[cls]) {
		struct cls_space *sp = calloc(1, sizeof *sp);
		rc = sp ? classifiers[cls].build(r->t, sp) : -ENOMEM;
		if (!rc)
			rc = space_name_keys(sp);
		if (rc)
			space_free(sp);
		else
			r->sp[cls] = sp;
	}
	*out = r->sp[cls];
	pthread_mutex_unlock(&r->lock);
	return rc;
}

uint32_t cls_space_find(const struct cls_space *sp, const char *name)
{
	struct name_ent *e;
	HASH_FIND_STR(sp->map, name, e);
	return e ? e->key : CLS_NO_KEY;
}

/* ---- census ---- */

int census_compute(const struct heap_state *s, struct buf *out)
{
	struct census_hdr h = {
		.n = s->n, .total_bytes = s->total_bytes,
		.nreachable = s->nreachable, .reachable_bytes = s->reachable_bytes,
		.unknown_objects = s->unknown_objects, .nroots = s->nroots,
		.nedges = s->nedges, .has_graph = (uint32_t)!!s->has_graph,
		.ninfos = s->ninfos,
	};
	size_t need = sizeof h + (size_t)s->ninfos * (sizeof(struct objinfo) + sizeof(uint64_t));
	int rc = buf_reserve(out, need);
	if (rc)
		return rc;
	buf_put(out, &h, sizeof h);
	buf_put(out, s->infos, (size_t)s->ninfos * sizeof(struct objinfo));
	uint64_t *counts = (uint64_t *)(out->data + out->len);
	memset(counts, 0, (size_t)s->ninfos * sizeof *counts);
	/* The one pass over all objects: a histogram of interned infos. */
	const uint32_t *info = s->info;
	for (uint32_t i = 0; i < s->n; i++)
		counts[info[i]]++;
	out->len += (size_t)s->ninfos * sizeof *counts;
	return 0;
}

int census_view(const void *data, size_t len, struct census *c)
{
	if (len < sizeof *c->h)
		return -EINVAL;
	c->h = data;
	size_t need = sizeof *c->h + (size_t)c->h->ninfos * (sizeof(struct objinfo) + sizeof(uint64_t));
	if (len != need)
		return -EINVAL;
	c->infos = (const struct objinfo *)(c->h + 1);
	c->counts = (const uint64_t *)(c->infos + c->h->ninfos);
	return 0;
}

/* ---- groups ---- */

int chain_match(struct cls_registry *r, const struct chain *ch, const struct objinfo *infos,
		uint32_t ninfos, uint8_t **match)
{
	const struct cls_space *sp[CHAIN_MAX];
	int rc = 0;
	for (uint32_t d = 0; d < ch->depth && !rc; d++)
		rc = cls_space_get(r, ch->steps[d].cls, &sp[d]);
	if (rc)
		return rc;
	uint8_t *m = malloc(ninfos ? ninfos : 1);
	if (!m)
		return -ENOMEM;
	for (uint32_t j = 0; j < ninfos; j++) {
		uint8_t keep = 1;
		for (uint32_t d = 0; d < ch->depth && keep; d++) {
			const struct chain_step *st = &ch->steps[d];
			keep = classifiers[st->cls].info_key(r->t, sp[d], &infos[j]) == st->key;
		}
		m[j] = keep;
	}
	*match = m;
	return 0;
}

int group_totals(struct cls_registry *r, const struct census *c, const struct chain *ch,
		 uint64_t *count, uint64_t *bytes)
{
	uint8_t *m;
	int rc = chain_match(r, ch, c->infos, c->h->ninfos, &m);
	if (rc)
		return rc;
	uint64_t n = 0, b = 0;
	for (uint32_t j = 0; j < c->h->ninfos; j++) {
		if (m[j]) {
			n += c->counts[j];
			b += c->counts[j] * c->infos[j].size;
		}
	}
	free(m);
	*count = n;
	*bytes = b;
	return 0;
}

int classify(struct cls_registry *r, const struct census *c, const struct chain *ch,
	     uint32_t cls, struct buf *out)
{
	const struct cls_space *sp;
	uint8_t *m = NULL;
	uint64_t *cnt = NULL, *bytes = NULL;
	int rc = cls_space_get(r, cls, &sp);
	if (rc)
		return rc;
	if ((rc = chain_match(r, ch, c->infos, c->h->ninfos, &m)))
		return rc;
	rc = -ENOMEM;
	cnt = calloc(sp->nkeys ? sp->nkeys : 1, sizeof *cnt);
	bytes = calloc(sp->nkeys ? sp->nkeys : 1, sizeof *bytes);
	if (!cnt || !bytes)
		goto out;
	for (uint32_t j = 0; j < c->h->ninfos; j++) {
		if (!m[j] || !c->counts[j])
			continue;
		uint32_t k = classifiers[cls].info_key(r->t, sp, &c->infos[j]);
		if (k >= sp->nkeys)
			continue; /* a classifier bug must not write out of bounds */
		cnt[k] += c->counts[j];
		bytes[k] += c->counts[j] * c->infos[j].size;
	}
	rc = 0;
	for (uint32_t k = 0; k < sp->nkeys && !rc; k++) {
		if (!cnt[k])
			continue;
		struct cls_row row = { .key = k, .count = cnt[k], .bytes = bytes[k] };
		rc = buf_put(out, &row, sizeof row);
	}
out:
	free(m);
	free(cnt);
	free(bytes);
	return rc;
}

int group_member_ids(struct cls_registry *r, const struct heap_state *s, const struct chain *ch,
		     struct buf *out)
{
	uint8_t *m;
	int rc = chain_match(r, ch, s->infos, s->ninfos, &m);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < s->n && !rc; i++) {
		if (!m[s->info[i]])
			continue;
		/* Hand-rolled decimal: this loop writes millions of lines. */
		char tmp[24];
		int p = sizeof tmp;
		uint64_t v = s->id[i];
		tmp[--p] = '\n';
		do {
			tmp[--p] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		rc = buf_put(out, tmp + p, sizeof tmp - (size_t)p);
	}
	free(m);
	return rc;
}

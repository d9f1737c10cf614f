/* render_collections.c - see render_collections.h. */
#include "render_collections.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "analyses/collections.h"
#include "model/symbols.h"
#include "table.h"
#include "tree_internal.h"

static const struct tcol type_cols[] = {
	{ "type", TCOL_STR }, { "count", TCOL_U64 }, { "empty", TCOL_U64 }, { "empty_bytes", TCOL_U64 },
	{ "with_slots", TCOL_U64 }, { "slots", TCOL_U64 }, { "used", TCOL_U64 }, { "fill_pct", TCOL_U64 },
	{ "sparse", TCOL_U64 }, { "wasted_bytes", TCOL_U64 },
};
static const struct tcol site_cols[] = {
	{ "type", TCOL_STR }, { "site", TCOL_STR }, { "count", TCOL_U64 }, { "empty", TCOL_U64 },
	{ "empty_bytes", TCOL_U64 }, { "with_slots", TCOL_U64 }, { "slots", TCOL_U64 }, { "used", TCOL_U64 },
	{ "fill_pct", TCOL_U64 }, { "sparse", TCOL_U64 }, { "wasted_bytes", TCOL_U64 },
};

/* Rows of one (type, allocating frame) name: sites of different callers
 * that allocate at one place are one row. */
struct named {
	UT_hash_handle hh;
	struct coll_stat st;
	char *type, *site; /* owned */
	char key[];
};

static void add_into(struct coll_stat *a, const struct coll_stat *b)
{
	a->count += b->count;
	a->empty += b->empty;
	a->empty_bytes += b->empty_bytes;
	a->with_slots += b->with_slots;
	a->slots += b->slots;
	a->used += b->used;
	a->sparse += b->sparse;
	a->wasted += b->wasted;
}

static void cells(struct table *t, uint32_t col, const struct coll_stat *x)
{
	table_set_u64(t, col, x->count);
	table_set_u64(t, col + 1, x->empty);
	table_set_u64(t, col + 2, x->empty_bytes);
	table_set_u64(t, col + 3, x->with_slots);
	if (x->with_slots) {
		table_set_u64(t, col + 4, x->slots);
		table_set_u64(t, col + 5, x->used);
		table_set_u64(t, col + 6, x->slots ? x->used * 100 / x->slots : 0);
		table_set_u64(t, col + 7, x->sparse);
		table_set_u64(t, col + 8, x->wasted);
	}
}

static uint64_t waste(const struct coll_stat *x)
{
	return x->wasted + x->empty_bytes;
}

static int by_waste(const void *a, const void *b)
{
	const struct named *x = *(struct named *const *)a, *y = *(struct named *const *)b;
	if (waste(&x->st) != waste(&y->st))
		return waste(&x->st) > waste(&y->st) ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int fill_types(const struct trace *tr, const struct coll_stat *cs, size_t n, struct table *t)
{
	table_init(t, type_cols, 10);
	struct coll_stat *v = malloc((n ? n : 1) * sizeof *v);
	char scratch[64];
	int rc = v ? 0 : -ENOMEM;
	if (!rc) {
		memcpy(v, cs, n * sizeof *v);
		coll_sort_by_waste(v, n);
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = table_add_row(t)))
			break;
		const char *name = trace_type_name(tr, v[i].type, scratch, sizeof scratch);
		table_set_str(t, 0, name, strlen(name));
		cells(t, 1, &v[i]);
	}
	free(v);
	return rc;
}

static int fill_sites(const struct trace *tr, const struct coll_stat *cs, size_t n, struct table *t)
{
	table_init(t, site_cols, 11);
	struct named *h = NULL, *e, *tmp;
	struct buf site;
	buf_init(&site);
	char scratch[64];
	int rc = 0;
	uint32_t rows = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct trace_site *ts = cs[i].site < tr->nsites && tr->sites[cs[i].site].nframes ?
						      &tr->sites[cs[i].site] : NULL;
		buf_reset(&site);
		rc = ts ? sym_frame(tr, &ts->frames[0], &site) : buf_printf(&site, "<unknown site>");
		if (!rc)
			rc = buf_putc(&site, '\0');
		if (rc)
			break;
		const char *ty = trace_type_name(tr, cs[i].type, scratch, sizeof scratch);
		size_t kl = strlen(ty) + site.len + 2;
		char *key = malloc(kl);
		if (!key) {
			rc = -ENOMEM;
			break;
		}
		snprintf(key, kl, "%s\t%s", ty, (const char *)site.data);
		HASH_FIND_STR(h, key, e);
		if (!e) {
			if (!(e = calloc(1, sizeof *e + kl))) {
				free(key);
				rc = -ENOMEM;
				break;
			}
			memcpy(e->key, key, kl);
			e->type = strdup(ty);
			e->site = strdup((const char *)site.data);
			e->st.type = cs[i].type;
			HASH_ADD_STR(h, key, e);
			rows++;
			if (!e->type || !e->site)
				rc = -ENOMEM;
		}
		free(key);
		add_into(&e->st, &cs[i]);
	}
	struct named **v = calloc(rows ? rows : 1, sizeof *v);
	uint32_t k = 0;
	if (!v && !rc)
		rc = -ENOMEM;
	HASH_ITER(hh, h, e, tmp) if (v) v[k++] = e;
	if (!rc) {
		qsort(v, k, sizeof *v, by_waste);
		for (uint32_t i = 0; i < k && !rc; i++) {
			if ((rc = table_add_row(t)))
				break;
			table_set_str(t, 0, v[i]->type, strlen(v[i]->type));
			table_set_str(t, 1, v[i]->site, strlen(v[i]->site));
			cells(t, 2, &v[i]->st);
		}
	}
	free(v);
	HASH_ITER(hh, h, e, tmp) {
		HASH_DEL(h, e);
		free(e->type);
		free(e->site);
		free(e);
	}
	buf_free(&site);
	return rc;
}

int render_collections(struct hfs *fs, const struct node *n, int arg, struct buf *out)
{
	const struct heap_state *s;
	int rc = eng_state_get(&fs->en, n->gci, &s);
	if (rc)
		return rc;
	struct buf cb;
	struct table t;
	buf_init(&cb);
	memset(&t, 0, sizeof t);
	int file = arg / 4, fmt = arg % 4;
	rc = file == COLLF_SITES ? coll_census_by_site(fs->en.trace, s, &cb) : coll_census(fs->en.trace, s, &cb);
	if (!rc) {
		const struct coll_stat *cs = (const struct coll_stat *)cb.data;
		size_t ncs = cb.len / sizeof *cs;
		rc = file == COLLF_SITES ? fill_sites(fs->en.trace, cs, ncs, &t) : fill_types(fs->en.trace, cs, ncs, &t);
	}
	if (!rc)
		rc = fmt == 1 ? table_render_csv(&t, out) : fmt == 2 ? table_render_json(&t, out) : table_render_tsv(&t, out);
	table_free(&t);
	buf_free(&cb);
	eng_state_put(&fs->en, s);
	return rc;
}

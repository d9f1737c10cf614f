/* adhoc.c - see adhoc.h */
#include "adhoc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitset.h"

#define ADHOC_NAME_MAX 255

struct adhoc_group {
	char name[ADHOC_NAME_MAX + 1];
	char *text;            /* the selectors as written, owned */
	size_t len;
	uint32_t version;      /* current version id */
	uint32_t home_gci;     /* the GC its selectors named; UINT32_MAX: none said */
	int removed;
};

struct adhoc_version {
	uint64_t *ids;         /* sorted, distinct; owned */
	uint32_t nids;
};

struct adhoc {
	pthread_mutex_t lock;  /* a leaf: guards everything below */
	struct adhoc_group *g;
	uint32_t ng, capg;
	struct adhoc_version *v; /* version id k is v[k - 1] */
	uint32_t nv, capv;
};

int adhoc_new(struct adhoc **out)
{
	struct adhoc *a = calloc(1, sizeof *a);
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
}

void adhoc_free(struct adhoc *a)
{
	if (!a)
		return;
	for (uint32_t k = 0; k < a->ng; k++)
		free(a->g[k].text);
	for (uint32_t k = 0; k < a->nv; k++)
		free(a->v[k].ids);
	free(a->g);
	free(a->v);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int adhoc_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > ADHOC_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)name[i] < 0x20 || name[i] == '/' || name[i] == 0x7f)
			return 0;
	}
	return 1;
}

/* index of the live group called name, or UINT32_MAX; lock held */
static uint32_t find_locked(const struct adhoc *a, const char *name)
{
	for (uint32_t k = 0; k < a->ng; k++) {
		if (!a->g[k].removed && strcmp(a->g[k].name, name) == 0)
			return k;
	}
	return UINT32_MAX;
}

/* New version holding ids (taken over on success); lock held. */
static int add_version_locked(struct adhoc *a, uint64_t *ids, uint32_t nids, uint32_t *version)
{
	if (a->nv == a->capv) {
		uint32_t cap = a->capv ? a->capv * 2 : 16;
		struct adhoc_version *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		a->v = v;
		a->capv = cap;
	}
	a->v[a->nv].ids = ids;
	a->v[a->nv].nids = nids;
	*version = ++a->nv;
	return 0;
}

int adhoc_add(struct adhoc *a, const char *name)
{
	int rc = 0;
	if (!adhoc_name_ok(name))
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	if (find_locked(a, name) != UINT32_MAX) {
		rc = -EEXIST;
		goto out;
	}
	if (a->ng == a->capg) {
		uint32_t cap = a->capg ? a->capg * 2 : 8;
		struct adhoc_group *g = realloc(a->g, cap * sizeof *g);
		if (!g) {
			rc = -ENOMEM;
			goto out;
		}
		a->g = g;
		a->capg = cap;
	}
	struct adhoc_group *g = &a->g[a->ng];
	memset(g, 0, sizeof *g);
	g->home_gci = UINT32_MAX;
	snprintf(g->name, sizeof g->name, "%s", name);
	if (!(rc = add_version_locked(a, NULL, 0, &g->version)))
		a->ng++;
out:
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int adhoc_remove(struct adhoc *a, const char *name)
{
	pthread_mutex_lock(&a->lock);
	uint32_t k = find_locked(a, name);
	if (k != UINT32_MAX)
		a->g[k].removed = 1;
	pthread_mutex_unlock(&a->lock);
	return k == UINT32_MAX ? -ENOENT : 0;
}

uint32_t adhoc_version(struct adhoc *a, const char *name)
{
	pthread_mutex_lock(&a->lock);
	uint32_t k = find_locked(a, name);
	uint32_t v = k == UINT32_MAX ? 0 : a->g[k].version;
	pthread_mutex_unlock(&a->lock);
	return v;
}

int adhoc_set(struct adhoc *a, const char *name, uint64_t *ids, uint32_t nids, const char *text,
	      size_t len, uint32_t home_gci)
{
	char *copy = malloc(len + 1);
	if (!copy) {
		free(ids);
		return -ENOMEM;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	int rc;
	uint32_t version = 0;
	pthread_mutex_lock(&a->lock);
	uint32_t k = find_locked(a, name);
	if (k == UINT32_MAX)
		rc = -ENOENT;
	else if (!(rc = add_version_locked(a, ids, nids, &version))) {
		ids = NULL;
		free(a->g[k].text);
		a->g[k].text = copy;
		a->g[k].len = len;
		a->g[k].version = version;
		a->g[k].home_gci = home_gci;
		copy = NULL;
	}
	pthread_mutex_unlock(&a->lock);
	free(ids);
	free(copy);
	return rc;
}

uint32_t adhoc_home(struct adhoc *a, uint32_t version)
{
	uint32_t home = UINT32_MAX;
	pthread_mutex_lock(&a->lock);
	for (uint32_t k = 0; k < a->ng; k++)
		if (!a->g[k].removed && a->g[k].version == version)
			home = a->g[k].home_gci;
	pthread_mutex_unlock(&a->lock);
	return home;
}

int adhoc_text(struct adhoc *a, uint32_t version, struct buf *out)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&a->lock);
	for (uint32_t k = 0; k < a->ng; k++) {
		if (a->g[k].version == version && !a->g[k].removed) {
			rc = a->g[k].len ? buf_put(out, a->g[k].text, a->g[k].len) : 0;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int adhoc_nth(struct adhoc *a, uint32_t k, char *name, size_t namelen, uint32_t *version)
{
	int found = 0;
	pthread_mutex_lock(&a->lock);
	if (k < a->ng) {
		found = 1;
		snprintf(name, namelen, "%s", a->g[k].name);
		*version = a->g[k].removed ? 0 : a->g[k].version;
	}
	pthread_mutex_unlock(&a->lock);
	return found;
}

int adhoc_bits(struct adhoc *a, uint32_t version, const struct heap_state *s, uint64_t *bits)
{
	int rc = 0;
	pthread_mutex_lock(&a->lock);
	if (version == 0 || version > a->nv) {
		rc = -ENOENT;
	} else {
		const struct adhoc_version *v = &a->v[version - 1];
		for (uint32_t k = 0; k < v->nids; k++) {
			uint32_t i = heap_state_find(s, v->ids[k]);
			if (i != UINT32_MAX)
				bitset_set(bits, i);
		}
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

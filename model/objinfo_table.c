/* objinfo_table.c - see objinfo_table.h. */
#include "objinfo_table.h"

#include <errno.h>
#include <stdlib.h>

#include "buf.h"

static uint64_t info_hash(const struct objinfo *x)
{
	uint64_t h = x->type * 0x9E3779B97F4A7C15ull;
	h ^= (x->site + ((uint64_t)x->thread << 32)) * 0xC2B2AE3D27D4EB4Full;
	h ^= (x->size + ((uint64_t)x->flags << 56)) * 0x165667B19E3779F9ull;
	h ^= (uint64_t)x->array_length * 0xD6E8FEB86659FD93ull;
	h ^= h >> 29;
	return h;
}

/* Doubles the slots (at most half full after). */
static int rehash(struct objinfo_table *t)
{
	if (t->nslots >= 1u << 31)
		return -E2BIG; /* the slot count would wrap */
	uint32_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t h = (uint32_t)info_hash(&t->infos[i]) & (ns - 1);
		while (slots[h])
			h = (h + 1) & (ns - 1);
		slots[h] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

int objinfo_table_put(struct objinfo_table *t, const struct objinfo *x, uint32_t *out)
{
	if ((uint64_t)(t->n + 1) * 2 > t->nslots) {
		int rc = rehash(t);
		if (rc)
			return rc;
	}
	uint32_t h = (uint32_t)info_hash(x) & (t->nslots - 1);
	while (t->slots[h]) {
		uint32_t i = t->slots[h] - 1;
		if (objinfo_eq(&t->infos[i], x)) {
			*out = i;
			return 0;
		}
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == UINT32_MAX - 1)
		return -E2BIG;
	int rc = array_reserve((void **)&t->infos, &t->cap, (uint64_t)t->n + 1, sizeof(*t->infos));
	if (rc)
		return rc;
	t->infos[t->n] = *x;
	t->slots[h] = t->n + 1;
	*out = t->n++;
	return 0;
}

void objinfo_table_free(struct objinfo_table *t)
{
	free(t->infos);
	free(t->slots);
	t->infos = NULL;
	t->slots = NULL;
	t->n = t->nslots = 0;
	t->cap = 0;
}

/* tagset.c - see tagset.h. */
#include "agent/tagset.h"

#include <errno.h>
#include <stdlib.h>

/* Fibonacci hashing: tags are mostly consecutive ids, which this spreads
 * over the table. */
static uint32_t home(uint64_t tag, uint32_t cap)
{
	return (uint32_t)((tag * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* The slot holding tag, or the empty slot where it would go. */
static uint32_t find(const struct tagset *s, uint64_t tag)
{
	uint32_t i = home(tag, s->cap);
	while (s->tag[i] && s->tag[i] != tag)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int grow(struct tagset *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : TAGSET_MIN;
	if (cap < s->cap)
		return -ENOMEM;
	struct tagset t = { calloc(cap, sizeof(uint64_t)), malloc(cap * sizeof(uint64_t)), cap, 0 };
	if (!t.tag || !t.val) {
		free(t.tag);
		free(t.val);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->tag[i]) {
			uint32_t j = find(&t, s->tag[i]);
			t.tag[j] = s->tag[i];
			t.val[j] = s->val[i];
			t.n++;
		}
	tagset_free(s);
	*s = t;
	return 0;
}

int tagset_add(struct tagset *s, uint64_t tag, uint64_t val)
{
	if (!tag)
		return -EINVAL;
	if (2 * ((uint64_t)s->n + 1) > s->cap) {
		int rc = grow(s);
		if (rc)
			return rc;
	}
	uint32_t i = find(s, tag);
	if (s->tag[i])
		return 1;
	s->tag[i] = tag;
	s->val[i] = val;
	s->n++;
	return 0;
}

int tagset_has(const struct tagset *s, uint64_t tag)
{
	return tag && s->cap && s->tag[find(s, tag)] == tag;
}

int tagset_remove(struct tagset *s, uint64_t tag, uint64_t *val)
{
	if (!tagset_has(s, tag))
		return 0;
	uint32_t mask = s->cap - 1, hole = find(s, tag);
	if (val)
		*val = s->val[hole];
	/* backward shift: an entry after the hole moves into it unless its
	 * home lies cyclically in (hole, j], where it is found without it */
	for (uint32_t j = (hole + 1) & mask; s->tag[j]; j = (j + 1) & mask) {
		uint32_t h = home(s->tag[j], s->cap);
		int stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
		if (!stays) {
			s->tag[hole] = s->tag[j];
			s->val[hole] = s->val[j];
			hole = j;
		}
	}
	s->tag[hole] = 0;
	s->n--;
	return 1;
}

uint32_t tagset_copy(const struct tagset *s, uint64_t *tags, uint64_t *vals)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->tag[i]) {
			tags[k] = s->tag[i];
			if (vals)
				vals[k] = s->val[i];
			k++;
		}
	return k;
}

void tagset_free(struct tagset *s)
{
	free(s->tag);
	free(s->val);
	s->tag = s->val = NULL;
	s->cap = s->n = 0;
}

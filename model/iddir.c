/* iddir.c - see iddir.h. */
#include "iddir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int iddir_build(struct iddir *d, const uint64_t *ids, uint32_t n)
{
	memset(d, 0, sizeof *d);
	if (n == 0)
		return 0;
	uint64_t lo = ids[0], span = ids[n - 1] - lo;
	uint32_t shift = 0;
	/* about one bucket per four objects: 1 byte per object, and a lookup
	 * searches a handful of ids.  span >> 63 <= 1: no overflow below. */
	uint64_t want = (uint64_t)n / 4 + 1;
	while (shift < 63 && (span >> shift) >= want)
		shift++;
	uint64_t nslot = (span >> shift) + 2;
	uint32_t *slot = big_malloc(nslot * sizeof *slot);
	if (!slot)
		return -ENOMEM;
	uint64_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t bucket = (ids[i] - lo) >> shift;
		while (k <= bucket)
			slot[k++] = i;
	}
	while (k < nslot)
		slot[k++] = n;
	d->slot = slot;
	d->nslot = nslot;
	d->base = lo;
	d->shift = shift;
	return 0;
}

void iddir_free(struct iddir *d)
{
	free(d->slot);
	memset(d, 0, sizeof *d);
}

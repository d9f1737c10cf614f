/* objinfo_table.h - interning of object properties.
 *
 * A heap state stores, per object, an index into a table of distinct
 * (type, site, thread, flags, size, array length) tuples: AntTracks'
 * ObjectInfo idea, which makes a million objects of a few kinds cost one
 * u32 each.  Both makers of heap states (the trace rebuilder, and the
 * direct import of a heap dump) intern through this one table, so equal
 * inputs give equal tables.
 *
 * Ownership: the table owns infos and slots; a caller may take infos
 * (setting it to NULL and n to 0) before objinfo_table_free.
 */
#ifndef HEAPFS_OBJINFO_TABLE_H
#define HEAPFS_OBJINFO_TABLE_H

#include <stdint.h>

#include "heap_state.h"

struct objinfo_table {
	struct objinfo *infos; uint32_t n; uint64_t cap;
	uint32_t *slots; uint32_t nslots;  /* open addressing: info index + 1; 0 empty */
};

/* The index of x in t, added if new.  0, -ENOMEM, or -E2BIG (past 2^30
 * distinct tuples, where the slots, kept at most half full, would need
 * 2^32).  A zeroed struct is an empty table. */
int objinfo_table_put(struct objinfo_table *t, const struct objinfo *x, uint32_t *out);

static inline int objinfo_eq(const struct objinfo *a, const struct objinfo *b)
{
	return a->type == b->type && a->site == b->site && a->thread == b->thread &&
	       a->flags == b->flags && a->size == b->size && a->array_length == b->array_length;
}

void objinfo_table_free(struct objinfo_table *t);

#endif

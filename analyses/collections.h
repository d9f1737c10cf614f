/* collections.h - how full the heap's collections are, from structure
 * alone (issue: bloat from empty collections, MAT's fill-ratio views).
 *
 * A collection is an instance of a class below java.util.AbstractCollection,
 * java.util.AbstractMap or java.util.Dictionary (every JDK list, set,
 * queue and map but CopyOnWriteArrayList, which is named too, and the
 * libraries' classes built on them, Guava's and Commons' among them).
 * Value wrappers (Jackson's TextNode, Guava's StrongValueReference) are
 * not collections, whatever their shape.
 *
 * Empty, read from the object's references (primitive fields, such as
 * size, are not in every source: a recording has none):
 *   - every reference it holds is a null-only object array, an array of
 *     length 0, or one of the fields that never hold elements (views
 *     keySet, values, entrySet, navigableKeySet, descendingMap; comparator,
 *     lock, queue of a WeakHashMap, counterCells of a ConcurrentHashMap);
 *   - a set or wrapper backed by a map or collection (its field map, m
 *     or c) is empty when that is.
 * A reference to anything else (an entry, a node, a non-empty array, a
 * primitive array that is not empty: its content is not known) means not
 * empty, so a collection is never called empty when it may hold something.
 *
 * Wasted bytes of an empty collection: its shallow size and that of the
 * arrays only it refers to (a shared empty array costs nothing more).
 *
 * Fill ratio (MAT's collection fill-ratio view), for collections whose
 * slots are an object array they (or the map or collection behind a set
 * or wrapper) hold in a known field: elementData (ArrayList, Vector),
 * elements (ArrayDeque), table (HashMap and its kin, Hashtable,
 * ConcurrentHashMap, WeakHashMap, IdentityHashMap), queue (PriorityQueue,
 * when it is an array), array (CopyOnWriteArrayList).  Slots: the array's
 * length; used: its non-null slots (a hash table's buckets in use, not
 * its entries; a list's null elements count as unused); wasted: the
 * unused slots times the array's reference size.  Sparse: a collection
 * with elements whose slots are less than COLL_SPARSE_PCT % used.
 */
#define COLL_SPARSE_PCT 25
#ifndef HEAPFS_ANALYSES_COLLECTIONS_H
#define HEAPFS_ANALYSES_COLLECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/heap_state.h"
#include "model/trace.h"

struct coll_stat {
	uint32_t type;
	uint32_t site;        /* coll_census_by_site: the allocation site; else HTR_NO_SITE */
	uint64_t count;       /* instances at this state */
	uint64_t empty;       /* of them, empty */
	uint64_t empty_bytes; /* wasted by the empty ones */
	uint64_t with_slots;  /* of them, with a slot array in a known field */
	uint64_t slots, used; /* those arrays' lengths and non-null slots */
	uint64_t sparse;      /* non-empty, less than COLL_SPARSE_PCT % of slots used */
	uint64_t wasted;      /* bytes of unused slots */
};

/* One struct coll_stat per collection type with reachable instances in s
 * (s needs its graph), by type id, appended to out.  0, -ENOMEM, -EINVAL
 * (no graph). */
int coll_census(const struct trace *t, const struct heap_state *s, struct buf *out);
/* The same per (type, allocation site): most wasted bytes (unused slots
 * plus empty collections) first. */
int coll_census_by_site(const struct trace *t, const struct heap_state *s, struct buf *out);
/* Most wasted bytes (unused slots plus empty collections) first, then by
 * type and site. */
void coll_sort_by_waste(struct coll_stat *v, size_t n);

#endif

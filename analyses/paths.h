/* paths.h - what keeps a group alive (gc-roots paper §3.4): the root
 * objects it is reachable from, and shortest paths from a root to one of
 * its members.  Both walk the in-edges backwards from the members with an
 * explicit queue (no recursion: heaps hold million-long lists).
 *
 * A group named after roots (a chain whose last segment classifies by one
 * of the root classifiers down to a root's name: by-indirect-root/static/
 * C/f/...) has its paths start at those roots when one of them reaches
 * the member, so a path shows why the member is under that name.
 *
 * Dense indexes are those of the heap state passed in.  Ownership: out
 * bufs belong to the caller; a path finder owns its arrays (path_finder_
 * free) and borrows the state, which the caller keeps pinned.
 */
#ifndef HEAPFS_ANALYSES_PATHS_H
#define HEAPFS_ANALYSES_PATHS_H

#include <stdint.h>

#include "analyses/engine.h"
#include "model/buf.h"
#include "model/heap_state.h"

/* A root object the group is reachable from, with its retained size. */
struct group_owner {
	uint32_t obj, reserved;
	uint64_t retained;
};

/* The owners of the chain's group in s (the state of its GC, with a
 * graph), by retained size descending, then dense index: struct
 * group_owner[] appended to out.  -ENOENT without a graph. */
int eng_group_owners(struct engine *en, const struct heap_state *s, const struct chain *ch,
		     struct buf *out);

struct path_finder;

/* A finder of paths to members of the chain's group in s. */
int path_finder_new(struct path_finder **out, struct engine *en, const struct heap_state *s,
		    const struct chain *ch);
void path_finder_free(struct path_finder *pf);

/* The rooted object nearest to t, from the group's named roots if one
 * reaches t (*named 1), else from any root; UINT32_MAX when t is
 * unreachable.  The path from it to t is then followed with
 * path_finder_next (valid until the next call). */
uint32_t path_finder_root(struct path_finder *pf, uint32_t t, int *named);
/* The object after o on the path, UINT32_MAX after the target. */
uint32_t path_finder_next(const struct path_finder *pf, uint32_t o);
/* The group's named roots (bitset over s->roots), or NULL. */
const uint64_t *path_finder_named_roots(const struct path_finder *pf);

#endif

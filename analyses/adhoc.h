/* adhoc.h - ad-hoc object groups (groups/NAME): their names, the object
 * ids each names, and the text their members were written as.
 *
 * Every change of a group's members makes a new version: a version id
 * names one fixed set of ids for as long as the store lives, so results
 * computed for a version (cached under it) never go stale; a group's name
 * points at its current version.  Version 0 is none.
 *
 * Ownership: the caller owns the store (adhoc_new, adhoc_free); the store
 * owns every version's ids and every group's text.
 *
 * Locking: one mutex, a leaf; every function may be called from any
 * thread.
 */
#ifndef HEAPFS_ANALYSES_ADHOC_H
#define HEAPFS_ANALYSES_ADHOC_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/heap_state.h"

struct adhoc;

int adhoc_new(struct adhoc **out);
void adhoc_free(struct adhoc *a);

/* 1 if name can name a group (1 to 255 bytes, no '/', no control byte,
 * not "." or ".."). */
int adhoc_name_ok(const char *name);
/* A new empty group: 0, -EINVAL (bad name), -EEXIST, -ENOMEM. */
int adhoc_add(struct adhoc *a, const char *name);
/* Removes a group (its versions stay): 0 or -ENOENT. */
int adhoc_remove(struct adhoc *a, const char *name);
/* The group's current version, or 0 if there is no such group. */
uint32_t adhoc_version(struct adhoc *a, const char *name);
/* Sets a group's members to ids (sorted, distinct; taken over, freed on
 * failure too) and their text (copied): a new version.  home_gci: the GC
 * the selectors took the members from (UINT32_MAX: not said), for traces
 * whose objects are not known across GCs (heap dumps).  0, -ENOENT,
 * -ENOMEM. */
int adhoc_set(struct adhoc *a, const char *name, uint64_t *ids, uint32_t nids, const char *text,
	      size_t len, uint32_t home_gci);
/* The home GC (adhoc_set) of the live group whose current version is
 * version; UINT32_MAX if none said or no such group. */
uint32_t adhoc_home(struct adhoc *a, uint32_t version);
/* Appends the text of the live group whose current version is version:
 * 0, or -ENOENT. */
int adhoc_text(struct adhoc *a, uint32_t version, struct buf *out);
/* The k-th group (k from 0, in creation order): 1 and its name and
 * current version (0 if removed), or 0 past the last. */
int adhoc_nth(struct adhoc *a, uint32_t k, char *name, size_t namelen, uint32_t *version);
/* Sets in bits (s->n bits) the version's objects live in s: 0 or -ENOENT. */
int adhoc_bits(struct adhoc *a, uint32_t version, const struct heap_state *s, uint64_t *bits);

#endif

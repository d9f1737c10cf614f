/* groups.h - a GC's census and the groups of the classification engine
 * (analyses/classify.h) as cached results of the engine: tallies,
 * classifications, a group's totals and its members.
 *
 * Results are computed once per key (analyses/engine.h) whatever the
 * number of readers.  A classifier step's group is one row of its parent's
 * classification (computed once for all siblings); other groups are counted
 * directly.  Groups of a diff (chain->diff_gci set) draw on two states.
 *
 * Ownership: an entry *e handed out is pinned, and the views into it
 * (census, tallies, rows) are valid until eng_put(en, *e).
 */
#ifndef HEAPFS_ANALYSES_GROUPS_H
#define HEAPFS_ANALYSES_GROUPS_H

#include <stdint.h>

#include "analyses/classify.h"
#include "analyses/engine.h"
#include "model/buf.h"

/* Census of GC gci. */
int eng_census_get(struct engine *en, uint32_t gci, struct rc_entry **e, struct census *c);

/* Tallies of a group's GC: the census (diff_gci UINT32_MAX) or the diff
 * census against diff_gci; *nt is 1 or 2. */
int eng_tallies_get(struct engine *en, uint32_t gci, uint32_t diff_gci, struct rc_entry **e,
		    struct tally t[2], uint32_t *nt);

/* Classification of the chain's group at gci by cls: rows sorted by key;
 * the next level when the chain ends at a level of hierarchy classifier
 * cls. */
int eng_classification_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct cls_row **rows, uint32_t *nrows);

/* Every level of hierarchy classifier cls over the chain's group (the
 * chain ends before the classifier's step; analyses/classify.h
 * classify_trie), computed once: listing and looking up a hierarchy's
 * directories reads it instead of classifying each level. */
int eng_hier_trie_get(struct engine *en, uint32_t gci, const struct chain *ch, uint32_t cls,
		      struct rc_entry **e, const struct cls_trie_node **nodes, uint32_t *n);
/* The node of a key path (from the top level) in such a trie, or
 * UINT32_MAX when no member has that path. */
uint32_t trie_find(const struct cls_trie_node *nodes, uint32_t n, const uint32_t *path, uint32_t len);

/* Totals of a group (count and bytes per column) into *row. */
int eng_group_totals(struct engine *en, uint32_t gci, const struct chain *ch, struct cls_row *row);

/* Appends the ids of a group's members to out as uint64_t values:
 * ascending, and for a diff group those of the GC's own state first. */
int eng_group_member_ids(struct engine *en, uint32_t gci, const struct chain *ch, struct buf *out);

#endif

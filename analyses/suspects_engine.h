/* suspects_engine.h - the suspects report (analyses/suspects_find.h) of
 * the engine's trace: sus_find run over the engine's states and cached
 * results, and kept as one engine result (RES_SUSPECTS).
 *
 * The report takes seconds on a big heap and both of its files need it,
 * so it is computed once per mount in its flat form and viewed in place.
 * The result cache computes a key once however many readers ask at a time
 * (single flight), never changes a ready entry, and keeps it pinned until
 * eng_put, so concurrent readers share one immutable report and none can
 * see it freed or half written.
 *
 * Ownership: *r views the pinned entry *e; release it with eng_put.
 */
#ifndef HEAPFS_ANALYSES_SUSPECTS_ENGINE_H
#define HEAPFS_ANALYSES_SUSPECTS_ENGINE_H

#include "analyses/engine.h"
#include "analyses/suspects_find.h"

int eng_suspects_get(struct engine *en, struct rc_entry **e, struct sus_report *r);

#endif

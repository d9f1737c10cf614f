/* render_suspects.h - `suspects` and `suspects.json` at the top of the
 * tree: what is wrong with the program's memory and where to look, every
 * claim naming the tree path that shows it.
 *
 * Sections (most severe first, see README "Finding a leak"):
 *   leak          the leak window: net growth, the type and site groups
 *                 that grew most (ranked by retained size at the window's
 *                 end among the biggest net growers), per group the
 *                 indirect GC roots that keep it alive, the data structure
 *                 that holds it (head type and allocation site), one path
 *                 from a root, and shared ownership (gc-roots paper §5.1)
 *   gc-overhead   the window, its share of time in GC, the types and sites
 *                 whose objects survived the most GCs in it
 *   churn         the window, bytes freed per second, the types and sites
 *                 born and dead inside it (from the allocation events: such
 *                 objects are in no heap state, so the claims name the
 *                 window files)
 *   big-retainers objects and types retaining suspect_big_pct % of the
 *                 reachable heap at the last GC with a graph, with the
 *                 accumulation point of each object
 *   bloat         structure kinds whose own bytes dominate their data,
 *                 empty and near-empty structures, the instance-health split
 * Severity (the order): leak = growth as % of reachable memory at the
 * window's end; gc-overhead = % of time in GC; churn = % of the window's
 * allocated bytes that died inside it; big-retainers = the largest share
 * retained; bloat = bytes flagged as % of the heap.  Ties keep that order.
 *
 * The findings are computed by analyses/suspects_find.c (a typed report,
 * no text), once per mount on the first read of either file, and kept as
 * an engine result (analyses/suspects_engine.h); both files print it.
 */
#ifndef HEAPFS_FS_RENDER_SUSPECTS_H
#define HEAPFS_FS_RENDER_SUSPECTS_H

#include "model/buf.h"

struct hfs;

enum sus_format { SUS_TEXT, SUS_JSON };
/* suspects (the text file, 80 columns) or suspects.json.  Appends to out
 * (the caller's). */
int render_suspects(struct hfs *fs, enum sus_format fmt, struct buf *out);

#endif

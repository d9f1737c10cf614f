/* render_allocs.h - allocs/ at the top of the tree: allocations per site and
 * per method over the whole run.
 *
 *   allocs/by-site[.csv|.json]    site (Class.method:line), type, count,
 *                                 bci, descriptor; for a JDK site with
 *                                 callers (format 1.4): top_caller (the
 *                                 application call above it that made the
 *                                 most of its allocations), that caller's
 *                                 count, callers (how many); most
 *                                 allocations first
 *   allocs/by-method[.csv|.json]  method (Class.method), descriptor, count
 *   allocs/by-caller[.csv|.json]  site, type, caller (Class.method:line of
 *                                 the application call above the site),
 *                                 count, bci, caller_bci: per counted site
 *                                 with callers (format 1.4, the agent's
 *                                 JDK sites), a row per caller and a
 *                                 "<no caller>" row for the rest, so that
 *                                 a site's rows add up to its by-site count;
 *                                 empty without COUNT_CALLERS
 *   allocs/stats[.json]           name, value: source, counting scheme,
 *                                 allocations, sites, methods, increments
 *                                 the counters executed, increments one
 *                                 counter per site would have executed,
 *                                 the saving in %
 *
 * Source: a trace with allocation counts (the agent's mode=count, format
 * 1.1) uses its counters' totals; otherwise the allocation events of a full
 * recording are counted by their allocating frame (objects that existed
 * before recording are not allocations of the run).  In the latter case
 * bci, descriptor and the increments are empty.
 */
#ifndef HEAPFS_FS_RENDER_ALLOCS_H
#define HEAPFS_FS_RENDER_ALLOCS_H

#include "model/buf.h"

struct hfs;

enum allocs_table { ALLOCS_BY_SITE, ALLOCS_BY_METHOD, ALLOCS_STATS, ALLOCS_BY_CALLER };
enum allocs_format { ALLOCS_TSV, ALLOCS_CSV, ALLOCS_JSON };

int render_allocs(struct hfs *fs, enum allocs_table which, enum allocs_format fmt, struct buf *out);

/* The same table before rendering (fs/table.h; heapfs export reads its
 * columns by name).  t is initialized here, owned by the caller
 * (table_free), even on failure. */
struct table;
int allocs_table(struct hfs *fs, enum allocs_table which, struct table *t);

#endif

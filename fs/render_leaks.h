/* render_leaks.h - leak-candidates/ at the top of the tree, for traces
 * with sampled live objects (a JFR recording's jdk.OldObjectSample;
 * analyses/samples.h):
 *
 *   leak-candidates/info            key<TAB>value: where the samples come
 *                                   from, how many, what they can and
 *                                   cannot tell
 *   leak-candidates/table[.csv|.json]   one row per (type, allocation
 *                                   site): samples, samples with a path to
 *                                   a root, first and last allocation and
 *                                   the oldest age (ms), and the oldest
 *                                   sample's root and path
 *   leak-candidates/samples[.csv|.json] one row per sample
 *
 * Times are ms since the trace's first event, as in timeline/gcs.csv.
 * Counts are samples, not objects: the JVM keeps a bounded set of sampled
 * objects, so a type's share of the samples is its share of the sampled
 * old objects, not a count of its instances.
 */
#ifndef HEAPFS_FS_RENDER_LEAKS_H
#define HEAPFS_FS_RENDER_LEAKS_H

#include "model/buf.h"

struct hfs;
struct node;

enum leaks_file { LEAKS_INFO, LEAKS_TABLE, LEAKS_SAMPLES };
enum leaks_format { LEAKS_TSV, LEAKS_CSV, LEAKS_JSON };
#define LEAKS_ARG(file, fmt) ((int)(file) * 4 + (int)(fmt))

/* arg: LEAKS_ARG(file, format) */
int render_leaks(struct hfs *fs, const struct node *n, int arg, struct buf *out);

#endif

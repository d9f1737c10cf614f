/* render_windows.h - the per-GC series, the suspicious time windows and the
 * memory plot as files of the tree:
 *
 *   timeline/gcs.csv      its reachable column comes from here
 *   timeline/memory.svg   used and reachable memory, GC pauses, windows
 *   windows/<kind>        key<TAB>value per detector (analyses/windows.h)
 *   windows/summary       one TSV row per kind
 *   windows/diff/<kind>/  start, end -> ../../../gc/NNN (found kinds only),
 *                         diff -> ../../../gc/END/diff/START (the heap diff
 *                         node over the window: born, died, perm per group),
 *                         growing: groups by type and by allocation site
 *                         ranked by net growth over the window
 *
 * The series and the detectors' results are computed once, by
 * analyses/winstate.h, over this tree's trace and state cache.
 *
 * Ownership: struct hfs owns one struct win_state (fs->en.win), created in
 * hfs_open and freed in hfs_close.
 */
#ifndef HEAPFS_FS_RENDER_WINDOWS_H
#define HEAPFS_FS_RENDER_WINDOWS_H

#include <stdint.h>

#include "analyses/windows.h"
#include "analyses/winstate.h"
#include "model/buf.h"

struct hfs;

/* File name of a kind under windows/ ("leak", "leak-narrow", ...). */
const char *win_kind_name(enum win_kind k);
/* Kind of a name, or WK_COUNT. */
enum win_kind win_kind_of(const char *name);


/* windows/diff/<kind>/{start,end} link targets ("../../../gc/NNN");
 * -ENOENT when the kind found no window. */
int hfs_window_link(struct hfs *fs, enum win_kind k, int end, char *buf, size_t len);

/* 1 if kind k found a window whose first and last GC differ (it then has
 * diff and growing), else 0 (also when the detectors failed). */
int hfs_window_spans(struct hfs *fs, enum win_kind k);
/* windows/diff/<kind>/diff target ("../../../gc/END/diff/START"); -ENOENT
 * when the kind found no window or its window is a single GC. */
int hfs_window_diff_link(struct hfs *fs, enum win_kind k, char *buf, size_t len);

int render_window_file(struct hfs *fs, enum win_kind k, struct buf *out);
/* windows/diff/<kind>/growing: TSV, header first, one row per type and
 * per allocation site (top frame) present at the window's first or last
 * GC: classifier, name (as under by-type/ and by-site/), net_bytes,
 * net_count (last minus first), born_count, born_bytes, died_count,
 * died_bytes, start_count, start_bytes, end_count, end_bytes.  Type rows
 * first, then site rows, each by net_bytes descending, then by name. */
int render_window_growing(struct hfs *fs, enum win_kind k, struct buf *out);
int render_windows_summary(struct hfs *fs, struct buf *out);
int render_memory_svg(struct hfs *fs, struct buf *out);
/* key<TAB>value lines for `status`: progress of the reachable series. */
int render_windows_status(struct hfs *fs, struct buf *out);

#endif

/* tree.h - the heapfs tree as a library: path -> node -> rendered bytes.
 *
 * One tree, two front ends: the FUSE adapter (fs/fuse_adapter.c) and
 * `heapfs ls` / `heapfs cat` (fs/main.c).  Neither knows anything about
 * nodes: both call only the functions below with absolute paths inside the
 * tree ("/", "/gc/003/info").
 *
 * Cheap vs expensive: hfs_getattr and hfs_readdir never start an expensive
 * computation (`ls -l` must stay fast).  A file whose size is not yet known
 * cheaply reports size_exact = 0 and size 0; the FUSE adapter then serves
 * it with direct_io.  Once rendered, results are cached and getattr reports
 * the exact size.
 *
 * Errors are negative errno: -ENOENT no such node, -ENOTDIR, -EISDIR,
 * -EROFS for writes to read-only nodes, -EIO for a damaged trace (the
 * message is in hfs_last_error / status).
 *
 * Thread safety: every function may be called from any number of threads at
 * once.  A result is computed once even when many readers ask at the same
 * time (they wait for the one computation).
 *
 * Ownership: struct hfs owns the trace, the state cache and the rendered
 * cache; the caller owns the struct buf it passes to hfs_read.
 */
#ifndef HEAPFS_FS_TREE_H
#define HEAPFS_FS_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/buf.h"
#include "model/htr_reader.h"

struct win_params; /* analyses/windows.h */
struct sus_params; /* analyses/suspects.h */

struct hfs_opts {
	uint64_t cache_mb;     /* budget for heap states (0: default 1024) */
	FILE *progress;        /* progress lines for long work; NULL: quiet */
	const char *features;  /* -o features=FILE: feature map (README); NULL: none */
	const char *classifiers; /* -o classifiers=FILE: definitions; NULL: none */
	const struct win_params *windows; /* window detector options (borrowed, copied
	                                     at open); NULL: the paper's defaults */
	const struct sus_params *suspects; /* suspects thresholds (borrowed, copied
	                                      at open); NULL: the defaults */
	int hprof_layout;      /* -o layout: heap dumps' object sizes, enum
	                          hprof_layout (model/hprof.h); 0: VisualVM's */
	unsigned compute_threads; /* computations run at once by hfs_jobs
	                             (0: the online CPUs) */
	unsigned analysis_threads; /* threads one computation uses (-o threads;
	                              0: HEAPFS_THREADS, else every core) */
};

struct hfs;

/* Opens the trace (indexing it, with progress) and builds the tree. */
int hfs_open(struct hfs **out, const char *trace_path, const struct hfs_opts *o,
	     struct htr_err *err);
/* hfs_open's failure as the user reads it: "FILE: offset N: what" for
 * damage at a place, "FILE: what" about the file as a whole, the message
 * alone when it names its own subject (an option file's error:
 * "features=FILE: line L, column C: what"). */
void hfs_open_error_text(char *buf, size_t len, const char *trace, int rc,
			 const struct htr_err *err);

/* Frees the tree.  Call hfs_stop_jobs first when hfs_jobs was used. */
void hfs_close(struct hfs *fs);

/* The pools of compute_threads threads each that run reads of files not
 * yet rendered, and listings, for the FUSE adapter (fs/jobs.h); owned by
 * fs.  Two pools, so that a listing never waits behind long renders.
 * Their counts, and the memory bound they imply, are in status. */
struct jobs;
struct jobs *hfs_jobs(struct hfs *fs);
struct jobs *hfs_list_jobs(struct hfs *fs);
/* Stops the pools, waiting up to timeout_ms for running computations:
 * 0, or -EBUSY when some still run (then hfs_close must not be called:
 * they use the tree). */
int hfs_stop_jobs(struct hfs *fs, unsigned timeout_ms);

enum hfs_kind { HFS_DIR = 1, HFS_FILE = 2, HFS_LINK = 3 };

struct hfs_attr {
	enum hfs_kind kind;
	uint64_t ino;          /* deterministic from the path, never 0 or 1 */
	uint64_t size;         /* exact if size_exact, else 0 */
	int size_exact;
	int changes;           /* the content may differ at the next read (status,
	                          written files): never serve it from a cache */
	int writable;
	uint32_t nlink;
};

int hfs_getattr(struct hfs *fs, const char *path, struct hfs_attr *a);

/* Calls fill for each entry (not "." or ".."), in a stable order.  fill
 * returns nonzero to stop early (buffer full); hfs_readdir then returns 0. */
typedef int (*hfs_fill_fn)(void *ctx, const char *name, const struct hfs_attr *a);
int hfs_readdir(struct hfs *fs, const char *path, hfs_fill_fn fill, void *ctx);

/* Symlink target (relative), NUL-terminated into buf. */
int hfs_readlink(struct hfs *fs, const char *path, char *buf, size_t len);

/* Appends the whole content of a file to out. */
int hfs_read(struct hfs *fs, const char *path, struct buf *out);

/* Writable files (classifiers/NAME): replaces the whole content of the
 * file at path with data and applies it.  A definition that does not
 * compile is refused with -EINVAL and the message ("NAME: line L, column C:
 * what") in msg, in classifiers/errors and on the progress stream; other
 * paths give -EROFS (-ENOENT under a missing directory).  The FUSE adapter
 * collects an open file's writes and calls this at flush/release (and may
 * call it on every write to fail the write itself). */
int hfs_write_file(struct hfs *fs, const char *path, const char *data, size_t len, char *msg,
		   size_t msglen);
/* Checks the text written so far into a writable file without applying
 * it, so that a write can fail at write() (the shell sees it): 0 when
 * nothing in it is wrong yet (a definition may still be incomplete, cut
 * before its end), -EINVAL and msg (logged as hfs_write_file logs) when it
 * is and will stay wrong.  For groups/NAME/members, data is the complete
 * lines just written, or all lines written so far where
 * hfs_members_checked_whole says so. */
int hfs_write_check(struct hfs *fs, const char *path, const char *data, size_t len, char *msg,
		    size_t msglen);
/* Removes classifiers/NAME (-EROFS elsewhere, -EPERM for predefined). */
int hfs_unlink(struct hfs *fs, const char *path);
/* 1 if a file may be created at path (a new classifiers/NAME), else 0. */
int hfs_can_create(struct hfs *fs, const char *path);
/* groups/NAME: creates / removes an ad-hoc group; -EROFS for
 * any other path, -EEXIST, -ENOENT, -EINVAL for a bad name.  Its members
 * are written to groups/NAME/members with hfs_write_file (one selector per
 * line: an object id or the path of a group node; -EINVAL and msg for a
 * bad one). */
int hfs_mkdir(struct hfs *fs, const char *path);
int hfs_rmdir(struct hfs *fs, const char *path);

/* The message of the last damage found while rebuilding a heap state
 * ("FILE: offset N: what"), copied into buf.  Returns 1 if there is one,
 * 0 (and buf = "") if not. */
int hfs_last_error(struct hfs *fs, char *buf, size_t len);

/* 1 if members files are checked as a whole at each write: on traces of
 * heap dumps, whose lines must all name one GC (objects are not known
 * from one dump to the next), which lines checked apart cannot tell. */
int hfs_members_checked_whole(const struct hfs *fs);

#endif

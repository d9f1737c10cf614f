/* files.h - the files heapfs reads and writes on the user's behalf.
 *
 * Reading: traces, heap dumps and option files (-o features=, classifiers=)
 * must be regular files.  A FIFO, a device or a directory is refused by its
 * kind before anything is opened that could block (a FIFO without a writer)
 * or act (a device whose open does something), and an option file has a
 * size cap, so /dev/zero or a FIFO never makes heapfs read forever.
 *
 * Writing: `heapfs import` and `heapfs synth` write a temporary file beside
 * the target (same directory, ".NAME.XXXXXX") and rename it over the target
 * once it is complete and on disk (struct outfile).  On failure the old file
 * is untouched and the temporary file removed; SIGINT, SIGTERM and SIGHUP
 * during the write remove it too (where those signals have their default
 * action: a program that handles them itself keeps its handlers).
 * SIGKILL or a crash can leave the temporary file behind; its name says
 * whose it is.
 *
 * Ownership: struct outfile owns its two paths and its descriptor until
 * outfile_commit or outfile_abort; everything else borrows its arguments.
 */
#ifndef HEAPFS_FILES_H
#define HEAPFS_FILES_H

#include <stddef.h>
#include <sys/stat.h>

#include "buf.h"

/* The size cap of an option file (-o features=FILE, classifiers=FILE). */
#define FILES_OPTION_MAX (1u << 20)
#define FILES_OPTION_MAX_TEXT "1 MiB"

/* What a file of this mode is, for a refusal: "is a directory", "is a
 * FIFO", "is a character device", "is a block device", "is a socket";
 * "is a regular file" for one. */
const char *file_kind(mode_t mode);

/* Opens path read-only (O_CLOEXEC) if it is a regular file (symbolic links
 * followed).  Returns the descriptor, owned by the caller, or a negative
 * errno: -EISDIR for a directory, -EINVAL for another kind of file that is
 * not regular; -ENOENT, -EACCES... as open(2) says.  *what: the reason as
 * words for a message (file_kind's, or strerror's), static.  st: the
 * file's stat (may be NULL). */
int file_open_regular(const char *path, struct stat *st, const char **what);

/* Reads the whole regular file path, at most max bytes, into out (appended).
 * 0 or a negative errno with msg set to the reason without the file's name
 * ("is a FIFO", "is larger than 1048576 bytes (the limit for this file)"); -EFBIG when
 * the file is larger than max. */
int file_read_capped(const char *path, size_t max, struct buf *out, char *msg, size_t msglen);

/* A file being written: tmp in the same directory as path, renamed over
 * path by outfile_commit. */
struct outfile {
	char *path;   /* owned: the target (a symbolic link resolved) */
	char *tmp;    /* owned: the temporary file; NULL once renamed or removed */
	int fd;       /* owned: open on tmp, -1 when closed */
};

/* Creates the temporary file beside path (mode: the existing target's
 * permissions, else 0644 less the umask).  The caller writes tmp (through
 * fd or by opening tmp by name), then calls outfile_commit or outfile_abort.
 * Refuses a target that exists and is not a regular file (-EISDIR,
 * -EINVAL: renaming over it would replace a device or a FIFO).  On failure
 * msg says why without the target's name and nothing is left behind; f
 * needs no abort. */
int outfile_begin(struct outfile *f, const char *path, char *msg, size_t msglen);

/* Makes the temporary file durable (fsync) and renames it over the target
 * (the directory is not synced: after a crash the target is the old file
 * or the new one, whole either way).  On failure msg says why, the
 * temporary file is removed and the target untouched.  Frees f's
 * resources either way. */
int outfile_commit(struct outfile *f, char *msg, size_t msglen);

/* Removes the temporary file; the target stays as it was.  Frees f's
 * resources; a no-op after outfile_commit, after a failed outfile_begin
 * and on a zeroed f. */
void outfile_abort(struct outfile *f);

#endif

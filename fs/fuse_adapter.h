/* fuse_adapter.h - the FUSE front end: `heapfs [options] TRACE MOUNTPOINT`.
 *
 * A thin caller of fs/tree.h (no knowledge of nodes): libfuse's high-level,
 * path-based API turns each request into one hfs_* call.
 *
 * Process model: the trace is opened and indexed before anything is
 * mounted, so a damaged trace makes the command fail with the message on
 * the terminal and a non-zero exit, and nothing is mounted.  Without -f the
 * command returns once the file system is mounted; the daemon keeps
 * serving until `fusermount3 -u MOUNTPOINT` (or SIGTERM/SIGINT).
 *
 * Exit status: 0 mounted (then unmounted cleanly, in the foreground);
 * 1 the trace cannot be used or mounting failed; 2 bad command line
 * (MOUNTOPTS_EXIT_USAGE).
 */
#ifndef HEAPFS_FS_FUSE_ADAPTER_H
#define HEAPFS_FS_FUSE_ADAPTER_H

/* argv: the whole process argv, argv[0] the program name, e.g.
 * {"heapfs", "-f", "-o", "cache_mb=256", "T.htr", "/mnt/t"}.
 * Returns the process exit status.  In background mode the calling
 * process returns as soon as the mount is ready (or failed); the forked
 * daemon returns from this function only when it is unmounted. */
int heapfs_mount_main(int argc, char **argv);

struct mountopts;
struct win_params;
struct sus_params;
struct hfs_opts;
/* The tree's options (fs/tree.h) from the heapfs -o options, for a mount
 * and for ls/cat alike.  o points at *wp and *sp, which the caller keeps
 * until hfs_open (which copies them); o->progress is left NULL. */
void heapfs_tree_opts(const struct mountopts *mo, struct win_params *wp, struct sus_params *sp,
		      struct hfs_opts *o);

#endif

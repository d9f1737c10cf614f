/* export.h - `heapfs export TRACE... -o DIR`: the traces' heap states as
 * tables in a Hive-style partitioned layout (docs/export.md).
 *
 * Exit status as the other commands: 0 ok, 1 failure (a message on
 * stderr), 2 bad command line.  Progress goes to the record bound to the
 * calling thread (model/progress.h); fs/main.c binds it.
 */
#ifndef HEAPFS_FS_EXPORT_H
#define HEAPFS_FS_EXPORT_H

/* argv[0] is "export". */
int export_cli_main(int argc, char **argv);

#endif

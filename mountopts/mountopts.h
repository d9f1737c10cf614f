/* mountopts.h - the mount command line:
 *
 *   heapfs [-f] [-d] [-s] [-o OPT[,OPT...]] TRACE MOUNTPOINT
 *
 * Parsed with libfuse's fuse_opt (no mounting, no /dev/fuse: testable on
 * its own).  Every -o option is one of
 *   - a heapfs option (cache_mb=N, threads=N, fuse_threads=N): a row of the table in
 *     mountopts.c, parsed, range-checked and stored in struct mountopts;
 *   - a FUSE or mount option on the allow-list in mountopts.c (what libfuse
 *     3.14's fuse_new, fuse_parse_conn_info_opts and the kernel accept):
 *     its value is checked, then it is passed through in fuse_args;
 *   - anything else: refused, naming the option.
 * After parsing, cross-option checks run (e.g. -s with fuse_threads=N>1).
 *
 * Ownership: struct mountopts owns trace, mountpoint and fuse_args;
 * mountopts_free releases them (safe after a failed parse too).
 */
#ifndef HEAPFS_MOUNTOPTS_H
#define HEAPFS_MOUNTOPTS_H

#include <stdint.h>
#include <stdio.h>

#include <fuse_opt.h>

/* Exit status for a command line that cannot be used (unknown option,
 * invalid value, missing argument). */
#define MOUNTOPTS_EXIT_USAGE 2

struct mountopts {
	char *trace;               /* owned; TRACE as given */
	char *mountpoint;          /* owned; MOUNTPOINT as given */
	int foreground;            /* -f, or implied by -d */
	int debug;                 /* -d or -o debug: libfuse logs every request */
	int single_thread;         /* -s */
	int help;                  /* -h or --help: print help, mount nothing */

	/* heapfs options (rows of the option table; defaults filled by parse) */
	uint64_t cache_mb;         /* heap-state cache budget, MiB */
	uint64_t threads;          /* threads one analysis uses; 0: HEAPFS_THREADS or all cores */
	uint64_t fuse_threads;     /* max FUSE worker threads */
	/* suspicious time windows (analyses/windows.h; defaults: the paper's) */
	uint64_t leak_min_gcs_pct, leak_keep_pct, narrow_min_pct, narrow_max_pct;
	uint64_t regression_start_pct, gc_window_min, gc_window_max, gc_overhead_min_pct;
	uint64_t churn_window_min, churn_window_max, churn_min_bytes_per_s, reachable_every;
	/* suspects (analyses/suspects.h) */
	uint64_t suspect_big_pct, suspect_accum_pct, suspect_overhead_pct, suspect_empty_min;
	uint64_t suspect_top;
	uint32_t given;            /* bit i: table row i appeared on the command line */
	char *features;            /* owned; -o features=FILE, NULL if not given */
	char *classifiers;         /* owned; -o classifiers=FILE, NULL if not given */
	int layout;                /* -o layout=visualvm|hotspot: enum hprof_layout (0 visualvm) */

	/* What libfuse gets: argv[0], "-o" with the allowed FUSE options (plus
	 * defaults fsname=heapfs:TRACE and subtype=heapfs unless given), and -d. */
	struct fuse_args fuse_args;

	char error[512];           /* why parse failed, without the "heapfs: " prefix */
};

/* Parses argv (argv[0] is the program name).  Returns 0, or -EINVAL with
 * mo->error set (print it as "heapfs: %s" and exit MOUNTOPTS_EXIT_USAGE),
 * or -ENOMEM.  When -h/--help was given, returns 0 with mo->help set and
 * TRACE/MOUNTPOINT may be missing. */
int mountopts_parse(struct mountopts *mo, int argc, char **argv);
void mountopts_free(struct mountopts *mo);

/* heapfs ls and cat: the heapfs -o options alone, no TRACE, MOUNTPOINT or
 * flags.  opts[0..nopts) are the values of the -o arguments (OPT[,OPT...],
 * split as a mount's are).  The same table, defaults, ranges and messages
 * as mountopts_parse; FUSE and mount options are refused, naming the
 * option.  Returns 0, -EINVAL with mo->error set, or -ENOMEM; free mo with
 * mountopts_free in every case. */
int mountopts_parse_opts(struct mountopts *mo, int nopts, const char *const *opts);

/* The mount part of `heapfs --help`: every option with default and range,
 * and the FUSE options passed through. */
void mountopts_print_help(FILE *out);

struct win_params;
/* The window detector options as analyses/windows.h takes them. */
void mountopts_win_params(const struct mountopts *mo, struct win_params *p);

/* 1 if the -o option NAME (the part before '=') is on the FUSE allow-list. */
int mountopts_is_fuse_option(const char *name);

struct sus_params;
/* The suspects thresholds as analyses/suspects.h takes them. */
void mountopts_sus_params(const struct mountopts *mo, struct sus_params *p);

#endif

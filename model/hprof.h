/* hprof.h - imports HPROF heap dumps into an .htr trace.
 *
 * One GC point per dump, GC numbers 0, 1, 2, ... in the order given, each
 * with HTR_GC_HAS_GRAPH: the dump's classes become types, its objects
 * allocation events (kept ids, see below), its roots and references the
 * GC's roots and graph.  Objects of dump k-1 that dump k does not hold die
 * at GC k.  docs/hprof.md describes every mapping, the size rules and the
 * limits (objects are matched across dumps by id, i.e. by address: a
 * moving collector makes moved objects look like deaths plus births).
 *
 * The dumps are memory-mapped and read in streaming passes (model/
 * hprof_reader.h); memory grows with the number of objects and references
 * (about 16 bytes per object for the index plus the graph: 4 per object
 * and 6 per reference), never with the dump's size.
 *
 * Ownership: the caller owns every argument; nothing is kept after return.
 */
#ifndef HEAPFS_HPROF_H
#define HEAPFS_HPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How shallow sizes are computed (docs/hprof.md, "Object sizes"). */
enum hprof_layout {
	/* VisualVM's heap library (org-graalvm-visualvm-lib-jfluid-heap):
	 * header = id size + oop size, fields at their value sizes (references
	 * at the oop size, which it guesses from the dump), 8-byte alignment,
	 * arrays header + 4 + length * element size.  The default: by-type
	 * tables equal VisualVM's class histogram. */
	HPROF_LAYOUT_VISUALVM = 0,
	/* HotSpot's layout (JDK 15+ field layout): mark word + class pointer,
	 * fields packed largest first into the gaps the superclasses leave,
	 * 8-byte alignment, 16/24-byte array header. */
	HPROF_LAYOUT_HOTSPOT = 1,
};

struct hprof_import_opts {
	enum hprof_layout layout;
	/* HOTSPOT layout: 1 compressed oops (4-byte references, default),
	 * 0 8-byte references. */
	int compressed_oops;
	/* HOTSPOT layout: 1 compressed class pointers (12-byte object header,
	 * default), 0 16-byte header. */
	int compressed_class_pointers;
	/* 0 (default): as VisualVM, the referent of a weak, soft, final or
	 * phantom reference keeps nothing alive: a referent edge whose target
	 * is not reachable otherwise is left out (docs/hprof.md).  1: every
	 * reference is an edge. */
	int keep_referents;
	int zstd_level;        /* 0: the writer's default */
	FILE *progress;        /* progress and warnings; NULL: quiet */
	uint32_t threads;      /* the first pass's object collection, sorting the ids,
	                          the pass over the objects, a direct state's
	                          derivation (model/mpar.h); 0: mpar_resolve(0) */
	int par_any_size;      /* tests and fuzzing: the first pass and the pass over
	                          the objects take threads however small the dump
	                          (0: only from 32 MB of heap records and 131,072
	                          objects on) */
};

/* The defaults: VisualVM layout; compressed oops and class pointers for
 * the HotSpot layout. */
void hprof_import_opts_init(struct hprof_import_opts *o);

/* Imports dumps[0..ndumps-1] (in that order) into out_htr.  Returns 0, or
 * a negative errno with err filled ("FILE: offset N: what is wrong" for
 * damage).  A dump whose tail is cut off is imported up to its last
 * complete sub-record; that is not an error: a warning goes to progress
 * and into the trace's info (hprof.N.truncated). */
int hprof_import(const char *const *dumps, int ndumps, const char *out_htr, FILE *progress,
		 char *err, size_t errlen);
int hprof_import_with(const char *const *dumps, int ndumps, const char *out_htr,
		      const struct hprof_import_opts *o, char *err, size_t errlen);

/* For using a dump directly (mount, ls, cat): imports one dump into a new
 * temporary trace ($TMPDIR or /tmp, heapfs-hprof-XXXXXX.htr; about 1-2 %
 * of the dump's size) and puts its path in tmp_path.  The caller opens it
 * and unlinks it (an opened trace keeps working).  o: NULL for the
 * defaults.  err: offset and message, without the file name (as
 * trace_open's).  On failure no file is left behind. */
struct htr_err;
int hprof_import_temp(const char *dump, const struct hprof_import_opts *o, char *tmp_path,
		      size_t tmp_len, struct htr_err *err);

/* The same, and the heap state of the dump's GC built straight from the
 * dump in the same pass (no trace event is decoded to build it), handed
 * back in *direct: a dump mounted directly starts with its state.  Thread
 * indexes are the trace's, so the state is finished once the trace is
 * open: hprof_direct_finish().  *direct is owned by the caller (NULL on
 * failure). */
struct hprof_direct;
struct heap_state;
struct trace;
int hprof_import_temp_direct(const char *dump, const struct hprof_import_opts *o, char *tmp_path,
			     size_t tmp_len, struct hprof_direct **direct, struct htr_err *err);
/* Maps the state's threads to t's dense thread indexes and derives what a
 * reconstruction derives (reachability, in-edges, id directory): the
 * result equals heap_state_build(t, 0) (tests/unit/test_hprof.c).
 * Consumes x, success or not; *out is owned by the caller. */
int hprof_direct_finish(struct hprof_direct *x, const struct trace *t, struct heap_state **out,
			struct htr_err *err);
void hprof_direct_free(struct hprof_direct *x);

/* `heapfs import DUMP.hprof... -o OUT.htr [options]`; argv[0] is "import".
 * Returns the exit status: 0 ok, 1 failure, 2 bad command line. */
int hprof_import_cli_main(int argc, char **argv);

/* 1 if the file starts with "JAVA PROFILE 1.0.", else 0. */
int hprof_is_dump(const char *path);

#endif

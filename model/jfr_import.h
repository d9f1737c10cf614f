/* jfr_import.h - a JDK Flight Recorder recording as a heapfs trace.
 *
 * The recording's tables (model/jfr.h) are written as a trace (format 1.3)
 * so that everything built on traces reads it: every GC
 * (jdk.GarbageCollection with its jdk.GCHeapSummary before and after) is a
 * GC of the trace without a graph; allocation samples
 * (jdk.ObjectAllocationSample, and the TLAB events of the profile
 * settings) are ALLOC_SAMPLE events, old-object samples
 * (jdk.OldObjectSample) OLD_SAMPLE events with their path to a root; both
 * in time order between the GCs.  Classes become types (names in Java
 * form, no sizes or fields: a recording has none), stack traces sites,
 * methods and threads symbols; the JVM, the recording's settings and the
 * event counts info keys (jfr.*, source.format = jfr).  docs/jfr.md says
 * what maps where and what a recording cannot tell.
 *
 * A GC's end is its start plus the sum of its pauses (a concurrent cycle
 * runs far longer, beside the program, and is not time the program lost),
 * so GC time in the tree is pause time.
 *
 * Ownership: nothing is kept; the recording is borrowed.
 */
#ifndef HEAPFS_JFR_IMPORT_H
#define HEAPFS_JFR_IMPORT_H

#include <stddef.h>
#include <stdio.h>

#include "htr_reader.h"

struct jfr_recording;

/* Writes r as a trace at out_htr (created or truncated; callers that must
 * not lose an existing file write a temporary one: see jfr_import_file).
 * err: the message (offset 0) on failure. */
int jfr_import_recording(const struct jfr_recording *r, const char *out_htr, struct htr_err *err);

/* Reads the recording at path and imports it into a new temporary trace
 * ($TMPDIR or /tmp, heapfs-jfr-XXXXXX.htr), whose path goes to tmp_path;
 * the caller opens it and unlinks it.  A recording read only in part (a
 * later chunk cut or damaged) imports what was read and its warning
 * becomes the trace's info key jfr.warning.  On failure nothing is left
 * behind; err says what is wrong (offset in the recording). */
int jfr_import_temp(const char *path, char *tmp_path, size_t tmp_len, struct htr_err *err);

/* `heapfs import REC.jfr -o OUT.htr`: out is written beside and renamed
 * over at the end (model/files.h), so a failure leaves it as it was.
 * msg: "FILE: offset N: MESSAGE" on failure.  warn (may be NULL) gets the
 * warning of a recording read in part. */
int jfr_import_file(const char *path, const char *out, FILE *warn, char *msg, size_t msglen);

#endif

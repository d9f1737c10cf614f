/* symbols.h - the trace's methods, frames and threads named as users read
 * them ("Class.method:line", "<unknown thread>").  Every file and
 * classifier that names them uses these, so one thing has one name
 * everywhere.
 *
 * Pure functions over the trace's tables; thread-safe.
 */
#ifndef HEAPFS_MODEL_SYMBOLS_H
#define HEAPFS_MODEL_SYMBOLS_H

#include <stdint.h>

#include "buf.h"
#include "trace.h"

/* "Class.method:line" for a frame (":line" only when known). */
int sym_frame(const struct trace *t, const struct htr_site_frame *f, struct buf *out);
/* "Class.method" of a method id, "<unknown method N>" when none. */
int sym_method(const struct trace *t, uint32_t method, struct buf *out);
/* Thread name of a dense thread index, "<unknown thread>" when none. */
const char *sym_thread(const struct trace *t, uint32_t thread);

#endif

/* symbols.h - the trace's methods, frames, threads and roots named as users read
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

struct hs_root;
/* What identifies a root beyond its object (the static field "C.f", the
 * thread, the frame "thread #depth Class.method slot N"); nothing for
 * kinds without detail. */
int sym_root_detail(const struct trace *t, const struct hs_root *r, struct buf *out);
/* "kind detail" of a root ("static C.f", "jni-global"). */
int sym_root(const struct trace *t, const struct hs_root *r, struct buf *out);
struct heap_state;
/* sym_root of every root pointing at dense object o, "; "-separated (only:
 * of those set in this bitset over s->roots, if not NULL). */
int sym_roots_of(const struct trace *t, const struct heap_state *s, uint32_t o, const uint64_t *only,
		 struct buf *out);
/* The reference from dense object `from` to `to` in s as a path names it:
 * the field's name, "[i]" for an array slot, "#slot" for a field the
 * trace does not name, "?" when from does not refer to to (the first
 * such reference when several do). */
int sym_ref(const struct trace *t, const struct heap_state *s, uint32_t from, uint32_t to,
	    struct buf *out);

#endif

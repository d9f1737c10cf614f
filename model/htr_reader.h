/* htr_reader.h - low-level .htr reading: file header, frame headers, and a
 * streaming event iterator over one frame.
 *
 * Damage is reported, never trusted: every length is checked against the
 * file size and every varint against its event's bounds.  Errors carry the
 * file offset and a sentence (struct htr_err) that callers print as
 * "FILE: offset N: MESSAGE".
 *
 * Ownership: htr_file owns its fd; an iterator owns its zstd context and
 * buffers and borrows the htr_file (close iterators before the file).
 * An htr_file may be shared by threads: it is only read with pread().
 * An iterator belongs to one thread.
 */
#ifndef HEAPFS_HTR_READER_H
#define HEAPFS_HTR_READER_H

#include <stddef.h>
#include <stdint.h>

#include "htr.h"

/* How a message is printed (fs/main.c, the mount). */
enum htr_err_form {
	/* "FILE: offset N: MSG": damage at a place in the file (the default) */
	HTR_ERR_AT = 0,
	/* "FILE: MSG": about the file as a whole (cannot be opened, is a FIFO) */
	HTR_ERR_FILE = 1,
	/* "MSG": complete, naming its own subject, never the trace (an option
	 * file's error: "features=FILE: line L, column C: what") */
	HTR_ERR_WHOLE = 2,
};

struct htr_err {
	uint64_t offset;
	char msg[400];
	int form;          /* enum htr_err_form */
};

/* Sets err (offset, formatted message, HTR_ERR_AT) and returns code
 * (negative errno). */
int htr_errf(struct htr_err *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same for a message of another form (offset 0). */
int htr_errf_as(struct htr_err *err, enum htr_err_form form, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

struct htr_file {
	int fd;
	uint64_t size;
	uint16_t major, minor;
	char *path; /* owned */
};

/* Opens and checks the file header.  -EPROTO: not an .htr file, or a
 * version this reader does not know (err says which). */
int htr_file_open(struct htr_file **out, const char *path, struct htr_err *err);
void htr_file_close(struct htr_file *f);

struct htr_frame_hdr {
	uint64_t offset;       /* of the frame header */
	uint32_t kind;
	uint64_t comp_len, raw_len;
	uint32_t nevents;
};

/* Reads and checks the frame header at offset.  Returns 0, or
 * -ENODATA when the frame is cut off by the end of the file (header or
 *  payload incomplete: a truncated tail),
 * -EBADMSG when it is damaged (bad magic or CRC, impossible lengths). */
int htr_frame_header(const struct htr_file *f, uint64_t offset, struct htr_frame_hdr *h,
		     struct htr_err *err);

/* Reads the trailer; returns 0 and the footer offset, or -ENOENT if the
 * file has no (valid) trailer. */
int htr_trailer(const struct htr_file *f, uint64_t *footer_offset);

struct htr_iter;
int htr_iter_open(struct htr_iter **out, const struct htr_file *f, const struct htr_frame_hdr *h,
		  struct htr_err *err);
/* 1: *ev holds the next event; 0: end of frame (payload and event count
 * checked); <0: damage, described in err. */
int htr_iter_next(struct htr_iter *it, struct htr_event *ev, struct htr_err *err);
/* Bulk decoding, for readers of millions of events (the heap-state
 * rebuilder): runs of allocations or of graph objects decoded straight into
 * the caller's arrays, without an htr_event and a dispatch per event.  A
 * call decodes while the next event is of its kind and the arrays have
 * room, and returns how many events it took: 0 when the next event is of
 * another kind, does not fit, or the frame has ended (htr_iter_next then
 * takes it, and checks the frame's end); <0 on damage, with err set as
 * htr_iter_next sets it.  Both mix freely with htr_iter_next. */
int htr_iter_allocs(struct htr_iter *it, struct htr_alloc *out, uint32_t max, struct htr_err *err);

/* Graph objects as CSR columns owned by the caller: object k has id[k] and
 * the edges off[k] .. off[k+1] (or nedges, for the last) in tgt[] and
 * slot[].  An object whose references span several events (chunks of
 * HTR_MAX_CHUNK, same id) stays one object.  Offsets are 32-bit: an object
 * that would take the edge count past UINT32_MAX - 1 is left to
 * htr_iter_next. */
struct htr_graph_cols {
	uint64_t *id; uint32_t *off; uint64_t nobj, obj_cap;
	uint64_t *tgt; uint32_t *slot; uint64_t nedges, edge_cap;
	int unsorted;           /* set once an id is lower than the one before */
};
int htr_iter_graph(struct htr_iter *it, struct htr_graph_cols *g, struct htr_err *err);
/* Whether id starts a new object (it is not the last object's, whose
 * references continue in another chunk). */
int htr_graph_cols_fresh(const struct htr_graph_cols *g, uint64_t id);
/* Starts object id at the current edge count (room for it made by the
 * caller; nedges < UINT32_MAX); notes an id lower than the one before. */
void htr_graph_cols_start(struct htr_graph_cols *g, uint64_t id);

/* Offset in the frame's raw (decompressed) payload of the next event. */
uint64_t htr_iter_raw_pos(const struct htr_iter *it);
void htr_iter_close(struct htr_iter *it);

#endif

/* jfr_internal.h - what the JFR reader's files share (model/jfr*.c):
 * the byte cursor, the metadata of one chunk, decoded values, hash maps.
 * Not for use outside model/jfr*.c.
 *
 * Ownership: a struct jfr_chunk_ctx owns its metadata, pool index, value
 * buffer and caches; jfr_ctx_free releases them.  Everything in it
 * borrows the recording's bytes.
 */
#ifndef HEAPFS_JFR_INTERNAL_H
#define HEAPFS_JFR_INTERNAL_H

#include <errno.h>
#include <stdint.h>

#include "jfr.h"

/* Bounds that keep damaged input from costing unbounded time or memory. */
#define JFR_MAX_DEPTH 32          /* nesting of inline values */
#define JFR_MAX_META_DEPTH 64     /* nesting of metadata elements */
#define JFR_MAX_VALS (1u << 20)   /* decoded nodes of one value */
/* old-object path entries a chunk may add, per byte of chunk, beyond
 * JFR_PATH_SLACK (a real chunk's are well below 1 a byte) */
#define JFR_PATH_PER_BYTE 4u
#define JFR_PATH_SLACK 65536u
#define JFR_MAX_CHAIN 1024u       /* old-object referrer hops (the JDK keeps chains of
                                     * at most about 100 edges: leak profiler's depth) */

/* --- cursor (jfr_input.c) ---------------------------------------------- */

/* Reads [pos, end) of the file; compressed: integers are LEB128-style
 * varints (the chunk's flag bit 0), else fixed big-endian. */
struct jfr_in {
	const uint8_t *base;
	uint64_t pos, end;
	int compressed;
	struct htr_err *err;
};

int jin_u1(struct jfr_in *in, uint8_t *v);
int jin_long(struct jfr_in *in, int64_t *v);   /* long (varint or 8 bytes) */
int jin_int(struct jfr_in *in, int32_t *v);    /* int (varint truncated, or 4 bytes) */
int jin_short(struct jfr_in *in, int32_t *v);  /* short and char (varint, or 2 bytes) */
int jin_raw32(struct jfr_in *in, uint32_t *v); /* float bits: always 4 bytes */
int jin_raw64(struct jfr_in *in, uint64_t *v); /* double bits, header fields */
/* A count (array length, string length): an int that must be >= 0 and at
 * most the bytes left times per_byte (each element takes at least
 * 1/per_byte of a byte... in practice 1 byte: per_byte is 1). */
int jin_count(struct jfr_in *in, uint32_t *n, const char *what);
uint64_t jin_varint_raw(const uint8_t *p, const uint8_t *end, int64_t *v); /* bytes used, 0 on cut */

/* --- strings (jfr_input.c) ---------------------------------------------- */

enum jfr_enc {
	JFR_ENC_NULL = 0, JFR_ENC_EMPTY = 1, JFR_ENC_POOL = 2,
	JFR_ENC_UTF8 = 3, JFR_ENC_CHARS = 4, JFR_ENC_LATIN1 = 5,
};

/* Reads one string's encoding and payload (not a pool reference: the
 * caller handles JFR_ENC_POOL, whose key is left in *key).  *off and *n:
 * where the payload starts and its length (bytes, or chars for CHARS). */
int jin_string(struct jfr_in *in, uint8_t *enc, uint64_t *off, uint32_t *n, int64_t *key);
/* Appends the string's UTF-8 form to a scratch buffer (CHARS and LATIN1
 * converted; unpaired surrogates become U+FFFD). */
struct buf;
int jfr_string_utf8(const uint8_t *base, uint64_t end, int compressed, uint8_t enc, uint64_t off,
		    uint32_t n, struct buf *out);

int jfr_strings_intern(struct jfr_strings *s, const char *p, uint32_t len, uint32_t *id);
void jfr_strings_free(struct jfr_strings *s);

/* --- maps (jfr_input.c) -------------------------------------------------- */

/* Open addressing, two 64-bit key words -> 64-bit value. */
struct jfr_map {
	uint64_t *ka, *kb, *val;
	uint8_t *used;
	uint64_t cap, n;
};
int jfr_map_put(struct jfr_map *m, uint64_t a, uint64_t b, uint64_t v); /* replaces */
int jfr_map_get(const struct jfr_map *m, uint64_t a, uint64_t b, uint64_t *v); /* 1 found */
void jfr_map_free(struct jfr_map *m);
void jfr_map_clear(struct jfr_map *m);

/* --- metadata (jfr_meta.c) ------------------------------------------------ */

enum jfr_prim {
	JP_NONE = 0, JP_BOOLEAN, JP_BYTE, JP_SHORT, JP_CHAR, JP_INT, JP_LONG,
	JP_FLOAT, JP_DOUBLE, JP_STRING,
};

enum jfr_unit {
	JU_NONE = 0, JU_TS_TICKS, JU_TS_MILLIS,
	JU_SPAN_TICKS, JU_SPAN_NANOS, JU_SPAN_MICROS, JU_SPAN_MILLIS, JU_SPAN_SECONDS,
};

struct jfr_mfield {
	const char *name;
	uint32_t cls;            /* class index */
	uint8_t array, cpool, unit;
};

struct jfr_mclass {
	int64_t id;
	const char *name, *super;
	uint32_t field0, nfields;
	uint8_t prim, simple, event;
	uint32_t name_sid;       /* interned name (for event counts) */
};

struct jfr_meta {
	char *arena;             /* every name above points in here */
	struct jfr_mclass *cls;
	uint32_t ncls;
	struct jfr_mfield *fld;
	uint32_t nfld;
	struct jfr_map by_id;    /* class id -> index */
	int64_t id;              /* the metadata event's metadata id */
	uint32_t string_cls;     /* index of java.lang.String, or JFR_NONE */
};

/* Reads the metadata event at off (absolute), in.end the chunk's end. */
int jfr_meta_read(struct jfr_meta *m, struct jfr_in *in, struct jfr_strings *names);
void jfr_meta_free(struct jfr_meta *m);

/* --- values (jfr_value.c) ------------------------------------------------- */

enum jfr_vkind {
	JV_NULL = 0,             /* a null string */
	JV_INT, JV_FLOAT,
	JV_STR,                  /* an inline string: enc, off, n */
	JV_REF,                  /* a constant-pool key (i) of class cls */
	JV_OBJ, JV_ARR,
};

struct jfr_val {
	uint8_t kind, enc;
	uint32_t cls;            /* class index (of the elements for JV_ARR) */
	uint32_t field;          /* field index, JFR_NONE for a root or an element */
	uint32_t end;            /* index just past this node's subtree */
	uint32_t n;              /* JV_ARR: elements; JV_STR: payload length */
	int64_t i;               /* JV_INT value, JV_REF key */
	double d;
	uint64_t off;            /* JV_STR payload */
};

struct jfr_vals {
	struct jfr_val *v;
	uint32_t n;
	uint64_t cap;
};

struct jfr_chunk_ctx {
	struct jfr_recording *rec;
	struct jfr_chunk *hdr;   /* its events are counted in */
	uint64_t start, end;     /* absolute */
	int compressed;
	/* the time converter (jdk.jfr.internal.consumer.TimeConverter): this
	 * chunk's start and ticks per ns, or those of the chunk before when
	 * both have the same metadata id, as the JDK's reader keeps them */
	int64_t conv_ticks, conv_nanos;
	double divisor;
	struct jfr_meta meta;
	struct jfr_map pool;     /* (class index, key) -> absolute offset of the value */
	struct jfr_vals vals;
	struct jfr_map cache;    /* (kind << 32 | class index, key) -> dense id */
	struct buf *scratch;
	struct htr_err *err;
	int rc;                  /* a failure inside a reader of values (ENOMEM) */
	struct jfr_intern *intern;
	uint8_t *handler;        /* per class: which extractor, 0 none */
	uint32_t *evcount;       /* per class: index in event_counts + 1, 0 none yet */
	/* old_path may not grow past this in the chunk: chains share their
	 * ends in the pools, so each sample's chain is copied out whole, and
	 * a few hundred bytes of pool entries that refer to one another could
	 * otherwise make millions of entries */
	uint64_t path_budget;
};

/* Decodes one value of class cls (field fld's, or JFR_NONE) at in into
 * ctx->vals; *root its index. */
int jfr_decode(struct jfr_chunk_ctx *c, struct jfr_in *in, uint32_t cls, uint32_t fld,
	       uint32_t *root);
/* Child of object node obj by field name, JFR_NONE if none. */
uint32_t jfr_vfield(const struct jfr_chunk_ctx *c, uint32_t obj, const char *name);
/* Dereferences a JV_REF node: decodes the pool's value for it (appended);
 * JFR_NONE when the pool has no such key (the JDK gives null). */
uint32_t jfr_vderef(struct jfr_chunk_ctx *c, uint32_t ref);
/* A node dereferenced while a reference: the object, or JFR_NONE. */
uint32_t jfr_vobj(struct jfr_chunk_ctx *c, uint32_t v);
/* A node, dereferenced if a reference and unwrapped while a one-field
 * object (simple types), JFR_NONE if null or unresolvable. */
uint32_t jfr_vresolve(struct jfr_chunk_ctx *c, uint32_t v);
/* Integer of a node (after jfr_vresolve), def when none. */
int64_t jfr_vint(struct jfr_chunk_ctx *c, uint32_t v, int64_t def);
/* Interned string of a node, JFR_NONE when null or none. */
int jfr_vstr(struct jfr_chunk_ctx *c, uint32_t v, uint32_t *sid);

int64_t jfr_ticks_to_ns(const struct jfr_chunk_ctx *c, int64_t ticks);
int64_t jfr_span_to_ns(const struct jfr_chunk_ctx *c, int64_t ticks);
/* A field's value as a time per its unit annotation: timestamps to epoch
 * ns, spans to ns. */
int64_t jfr_vtime(struct jfr_chunk_ctx *c, uint32_t v);

/* Recording-wide interning of classes, methods, stacks, threads, and
 * what is joined at the end (jfr.c owns it for the time of jfr_open). */
struct jfr_intern {
	struct jfr_map classes, methods, stacks, threads, events, gen_by_gc;
};

/* --- chunks and events (jfr_chunk.c, jfr_events.c) ------------------------ */

int jfr_chunk_header(const uint8_t *base, uint64_t size, uint64_t off, struct jfr_chunk *h,
		     struct htr_err *err);
/* Indexes the pools (following the checkpoints' deltas) and walks every
 * event, checking each against its metadata; nothing is extracted. */
int jfr_chunk_check(struct jfr_chunk_ctx *c);
/* Walks the events again and fills the recording's tables. */
int jfr_chunk_extract(struct jfr_chunk_ctx *c);

/* Appends to a table column set: grows every column to hold n + 1. */
int jfr_grow(void **cols[], const size_t sizes[], uint32_t ncols, uint64_t *cap, uint64_t need);

#endif

/* hprof_reader.h - low-level reading of HPROF heap dumps (JAVA PROFILE
 * 1.0.1 and 1.0.2, 4- and 8-byte identifiers), memory-mapped.
 *
 * The file is mapped read-only and walked in streaming passes: top-level
 * records with hprof_next_record(), the sub-records of a HEAP_DUMP or
 * HEAP_DUMP_SEGMENT record with hprof_next_sub().  Nothing is copied: the
 * decoded structs hold file offsets, and hprof_u1/u2/u4/id() read values at
 * offsets the decoder has already checked against the record's bounds.
 *
 * Damage is reported, never trusted: every length is checked against the
 * enclosing record and the file.  Errors fill a struct htr_err with the
 * file offset and a sentence naming the record tag.  A record cut off by
 * the end of the file is reported as truncated (flag in the record), not
 * as an error, so that callers can use what is complete.
 *
 * Format reference: the HPROF description shipped with the JDK
 * (demo/jvmti/hprof/src/manual.html, "Binary Dump Format") and HotSpot's
 * heapDumper.cpp; docs/hprof.md summarises what heapfs reads.
 *
 * Ownership: hprof_file owns its mapping and path; hprof_close releases
 * them.  A mapped file is read-only, so threads may share it.
 */
#ifndef HEAPFS_HPROF_READER_H
#define HEAPFS_HPROF_READER_H

#include <stddef.h>
#include <stdint.h>

#include "htr_reader.h"

#define HPROF_MAGIC_PREFIX "JAVA PROFILE 1.0."

/* Top-level record tags. */
enum hprof_tag {
	HPROF_UTF8 = 0x01,
	HPROF_LOAD_CLASS = 0x02,
	HPROF_UNLOAD_CLASS = 0x03,
	HPROF_FRAME = 0x04,
	HPROF_TRACE = 0x05,
	HPROF_ALLOC_SITES = 0x06,
	HPROF_HEAP_SUMMARY = 0x07,
	HPROF_START_THREAD = 0x0a,
	HPROF_END_THREAD = 0x0b,
	HPROF_HEAP_DUMP = 0x0c,
	HPROF_CPU_SAMPLES = 0x0d,
	HPROF_CONTROL_SETTINGS = 0x0e,
	HPROF_HEAP_DUMP_SEGMENT = 0x1c,
	HPROF_HEAP_DUMP_END = 0x2c,
};

/* Heap dump sub-record tags. */
enum hprof_sub_tag {
	HPROF_ROOT_UNKNOWN = 0xff,
	HPROF_ROOT_JNI_GLOBAL = 0x01,
	HPROF_ROOT_JNI_LOCAL = 0x02,
	HPROF_ROOT_JAVA_FRAME = 0x03,
	HPROF_ROOT_NATIVE_STACK = 0x04,
	HPROF_ROOT_STICKY_CLASS = 0x05,
	HPROF_ROOT_THREAD_BLOCK = 0x06,
	HPROF_ROOT_MONITOR_USED = 0x07,
	HPROF_ROOT_THREAD_OBJECT = 0x08,
	HPROF_CLASS_DUMP = 0x20,
	HPROF_INSTANCE_DUMP = 0x21,
	HPROF_OBJ_ARRAY_DUMP = 0x22,
	HPROF_PRIM_ARRAY_DUMP = 0x23,
};

/* Basic types of fields and array elements. */
enum hprof_type {
	HPROF_T_OBJECT = 2,
	HPROF_T_BOOLEAN = 4,
	HPROF_T_CHAR = 5,
	HPROF_T_FLOAT = 6,
	HPROF_T_DOUBLE = 7,
	HPROF_T_BYTE = 8,
	HPROF_T_SHORT = 9,
	HPROF_T_INT = 10,
	HPROF_T_LONG = 11,
};

struct hprof_file {
	char *path;            /* owned */
	const uint8_t *map;    /* read-only mapping of the whole file (NULL if empty) */
	uint64_t size;
	uint32_t id_size;      /* 4 or 8 */
	uint32_t minor;        /* 1: "1.0.1", 2: "1.0.2", 3: "1.0.3" (Android) */
	uint64_t time_ms;      /* header timestamp, ms since the epoch */
	uint64_t first_record; /* offset of the first record */
};

/* Maps path and checks the header.  -EPROTO: not an HPROF file (err says
 * why); -EBADMSG: a damaged header; other negative errno from the system. */
int hprof_open(struct hprof_file **out, const char *path, struct htr_err *err);
void hprof_close(struct hprof_file *f);

/* Drops the mapping's pages in [from, to) from the process (rounded inward
 * to pages): a pass that is done with a part of the dump says so, and the
 * process's resident memory stays the index's, not the dump's.  The pages
 * stay in the page cache; reading there again faults them back in. */
void hprof_release(const struct hprof_file *f, uint64_t from, uint64_t to);

/* Bytes a pass goes past between two releases: big enough that madvise
 * calls stay rare (128 a GB), small against the dump.  At 64 MB the pages
 * of a small dump were most of the import's peak: MultiCache's 71 MB dump
 * had 60 MB mapped beside 52 MB of heapfs's own memory (peak 123 MB for
 * dominators/top, now 85 MB, the dominators' own), the time the same. */
#define HPROF_RELEASE_STEP (8ull << 20)

/* A pass reading forward is at pos and done with what lies below it:
 * releases [*released, pos) once that is HPROF_RELEASE_STEP or more, and
 * moves *released up. */
void hprof_release_behind(const struct hprof_file *f, uint64_t *released, uint64_t pos);

/* 1 if the file at path starts with "JAVA PROFILE 1.0.", 0 if not or
 * unreadable. */
int hprof_file_is_dump(const char *path);

/* Name of a record tag / sub-record tag / basic type ("UTF8", "CLASS_DUMP",
 * "int"), or "unknown". */
const char *hprof_tag_name(uint32_t tag);
const char *hprof_sub_tag_name(uint32_t tag);
const char *hprof_type_name(uint32_t type);
/* Bytes a value of basic type takes in the dump (objects: id_size), or 0
 * for a type that does not exist. */
uint32_t hprof_type_size(const struct hprof_file *f, uint32_t type);

struct hprof_record {
	uint8_t tag;
	uint32_t time_us;      /* microseconds since the header timestamp */
	uint64_t offset;       /* of the tag byte */
	uint64_t body;         /* offset of the body */
	uint64_t len;          /* body bytes present in the file */
	uint64_t declared_len; /* body length the record header declares */
	int truncated;         /* 1: the file ends inside this record */
};

/* Decodes the record at *pos and advances *pos past it.  Returns 1 with *r
 * filled, 0 at the end of the file.  A record whose header or body the end
 * of the file cuts off is returned with truncated set (and *pos at the end
 * of the file). */
int hprof_next_record(const struct hprof_file *f, uint64_t *pos, struct hprof_record *r);

struct hprof_class_dump {
	uint64_t super_id, loader_id;
	uint32_t instance_size;/* as the dumper wrote it (HotSpot: field value bytes) */
	uint32_t nstatics;
	uint64_t statics;      /* offset of the first static: id name, u1 type, value */
	uint32_t nfields;
	uint64_t fields;       /* offset of the first instance field: id name, u1 type */
};

struct hprof_sub {
	uint8_t tag;
	uint64_t offset;       /* of the sub-record's tag byte */
	uint64_t end;          /* offset just past it */
	uint64_t id;           /* object, array or class id; roots: the object */
	uint32_t thread_serial;/* JNI_LOCAL, JAVA_FRAME, NATIVE_STACK, THREAD_BLOCK, THREAD_OBJECT */
	uint32_t frame;        /* JNI_LOCAL, JAVA_FRAME: frame number, UINT32_MAX none */
	uint32_t trace_serial; /* THREAD_OBJECT, CLASS_DUMP, *_DUMP */
	uint64_t class_id;     /* INSTANCE_DUMP, OBJ_ARRAY_DUMP */
	uint32_t length;       /* arrays: elements; INSTANCE_DUMP: value bytes */
	uint8_t elem_type;     /* PRIM_ARRAY_DUMP */
	uint64_t data;         /* offset of the values / elements */
	struct hprof_class_dump cls;  /* CLASS_DUMP */
};

/* Decodes the sub-record at *pos, which must lie in [*pos, end); on
 * success advances *pos.  rec names the enclosing record in messages.
 * Returns 1 with *s filled, 0 when *pos == end, -ENODATA when the
 * sub-record runs past end (err filled: the caller decides whether that is
 * a truncation or damage), -EBADMSG on damage (unknown tag, bad type). */
int hprof_next_sub(const struct hprof_file *f, uint64_t *pos, uint64_t end,
		   const struct hprof_record *rec, struct hprof_sub *s, struct htr_err *err);

/* Big-endian reads at an offset the decoder has checked. */
static inline uint32_t hprof_u1(const struct hprof_file *f, uint64_t off)
{
	return f->map[off];
}
static inline uint32_t hprof_u2(const struct hprof_file *f, uint64_t off)
{
	const uint8_t *p = f->map + off;
	return (uint32_t)p[0] << 8 | p[1];
}
static inline uint32_t hprof_u4(const struct hprof_file *f, uint64_t off)
{
	const uint8_t *p = f->map + off;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t hprof_u8(const struct hprof_file *f, uint64_t off)
{
	return (uint64_t)hprof_u4(f, off) << 32 | hprof_u4(f, off + 4);
}
static inline uint64_t hprof_id(const struct hprof_file *f, uint64_t off)
{
	return f->id_size == 8 ? hprof_u8(f, off) : hprof_u4(f, off);
}
/* A value of basic type at off, zero-extended to 64 bits. */
uint64_t hprof_value(const struct hprof_file *f, uint64_t off, uint32_t type);

#endif

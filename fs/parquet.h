/* parquet.h - a streaming writer of Apache Parquet files (flat schemas),
 * for `heapfs export` (fs/export.h, docs/export.md).
 *
 * What it writes, and why that subset: every reader (DuckDB, Spark's
 * parquet-mr, Trino, Arrow) reads it, and it is small enough to get right
 * by hand.
 *   - columns INT64, BOOLEAN, BYTE_ARRAY with logical type STRING, each
 *     REQUIRED or OPTIONAL (definition levels, bit width 1); no nesting;
 *   - data pages v1, values PLAIN, or for dictionary columns
 *     PLAIN_DICTIONARY: a dictionary page of the row group's distinct
 *     strings, then indices RLE/bit-packed; definition levels RLE (the
 *     hybrid encoding's bit-packed runs);
 *   - every page compressed with zstd (codec ZSTD), one frame per page;
 *   - metadata in Thrift's compact protocol (parquet.thrift's
 *     FileMetaData, PageHeader); no statistics, no page index.
 * Dictionary columns are for strings drawn from a table the caller owns
 * (type, site and thread names): the rows give an id, the dictionary page
 * holds each id's string once per row group.
 *
 * Memory is bounded: a row group is at most rg_rows rows; each column
 * holds its current page (about page_bytes of values) uncompressed and the
 * row group's pages compressed, then they go to the file and the buffers
 * are reused.  A 10^7-row table never sits in memory.
 *
 * Errors are negative errno and sticky: after the first failure every
 * call returns it, and pq_close reports it.
 *
 * Ownership: the writer owns its descriptor, its buffers and the dictionary
 * maps; it borrows the column array and the dictionaries' string tables,
 * which must outlive it.  pq_close or pq_abort frees it.
 */
#ifndef HEAPFS_FS_PARQUET_H
#define HEAPFS_FS_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

enum pq_type {
	PQ_INT64,   /* INT64 */
	PQ_BOOL,    /* BOOLEAN */
	PQ_STRING,  /* BYTE_ARRAY, STRING: values given as bytes */
	PQ_DICT,    /* BYTE_ARRAY, STRING: values given as ids of a string table */
};

struct pq_column {
	const char *name;
	enum pq_type type;
	int optional;          /* 1: may be null */
};

/* The strings a PQ_DICT column's ids name: str[id], len[id] bytes
 * (borrowed). */
struct pq_strings {
	const char *const *str;
	const uint32_t *len;
	uint32_t n;
};

struct pq_opts {
	uint32_t rg_rows;      /* rows per row group (0: 1048576) */
	uint32_t page_bytes;   /* values per page before it is cut, bytes (0: 1 MiB) */
	int zstd_level;        /* 0: 1 */
};

struct pq_writer;

/* Creates path (O_EXCL: it must not exist) and writes the magic.  dicts:
 * one struct per column, used for PQ_DICT columns only (may be NULL when
 * there are none). */
int pq_open(struct pq_writer **out, const char *path, const struct pq_column *cols, uint32_t ncols,
	    const struct pq_strings *dicts, const struct pq_opts *o);

/* One value of column c in the current row; every column gets exactly one
 * per row, then pq_row_end.  pq_null only for optional columns. */
int pq_i64(struct pq_writer *w, uint32_t c, int64_t v);
int pq_bool(struct pq_writer *w, uint32_t c, int v);
int pq_str(struct pq_writer *w, uint32_t c, const char *s, size_t len);
int pq_dict(struct pq_writer *w, uint32_t c, uint32_t id);
int pq_null(struct pq_writer *w, uint32_t c);
/* Ends a row; a full row group goes to the file. */
int pq_row_end(struct pq_writer *w);

/* Writes the last row group and the footer and closes: the file is
 * complete once this returns 0 (not yet durable: the caller syncs, once
 * for many files).  Frees w either way; on failure the file is left for
 * the caller to remove. */
int pq_close(struct pq_writer *w, uint64_t *file_bytes);
/* Closes without a footer and frees w (the caller removes the file). */
void pq_abort(struct pq_writer *w);

/* Rows written so far, and the bytes of the values as pages hold them
 * before compression (page headers and dictionaries included). */
uint64_t pq_rows(const struct pq_writer *w);
uint64_t pq_raw_bytes(const struct pq_writer *w);

/* ---- encodings, exposed for tests/unit/test_export.c ---- */

/* The RLE/bit-packed hybrid encoding's bit-packed runs: n values of width
 * bits (1..32), at most 63 groups of 8 per run (a one-byte run header, as
 * parquet-mr writes them); the last group padded with zeros. */
int pq_hybrid_bitpacked(struct buf *out, const uint32_t *v, uint32_t n, unsigned width);
/* 0/1 bytes packed 8 to a byte, least significant bit first (PLAIN
 * BOOLEAN, and the body of a width-1 bit-packed run). */
int pq_pack_bits(struct buf *out, const uint8_t *v, uint32_t n);

/* Thrift compact protocol, the part Parquet's metadata uses. */
enum tc_type { TC_TRUE = 1, TC_FALSE = 2, TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };
#define TC_DEPTH_MAX 8
struct tc {
	struct buf *out;       /* borrowed */
	int16_t last[TC_DEPTH_MAX]; /* the last field id written in each open struct */
	int depth;
	int rc;                /* sticky: the first error */
};
void tc_init(struct tc *t, struct buf *out);
void tc_i32(struct tc *t, int16_t id, int32_t v);
void tc_i64(struct tc *t, int16_t id, int64_t v);
void tc_bool(struct tc *t, int16_t id, int v);
void tc_bin(struct tc *t, int16_t id, const void *s, size_t len);
/* A struct field (id > 0) or a struct element of a list (id 0). */
void tc_struct_begin(struct tc *t, int16_t id);
void tc_struct_end(struct tc *t);
void tc_list_begin(struct tc *t, int16_t id, enum tc_type elem, uint32_t n);
/* A list element of type i32 or binary. */
void tc_elem_i32(struct tc *t, int32_t v);
void tc_elem_bin(struct tc *t, const void *s, size_t len);

#endif

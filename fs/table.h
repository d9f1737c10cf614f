/* table.h - one tabular result, rendered as TSV, CSV or JSON.
 *
 * A table is a list of columns (name and type) and rows of cells; analyses
 * that add metrics (deep_size, retained_size, ...) add columns, the
 * renderers do not change.  A cell may be empty (the value is unknown):
 * an empty field in TSV/CSV, null in JSON.
 *
 * TSV: header first, fields separated by tabs; tabs and newlines inside a
 * string are written as spaces.  CSV: RFC 4180, a field is quoted when it
 * holds a comma, a quote, CR or LF.  JSON: an array of objects, one per
 * row, keys = column names.
 *
 * Ownership: the table owns its cells and copies of string values; the
 * column array is borrowed (usually static).
 */
#ifndef HEAPFS_FS_TABLE_H
#define HEAPFS_FS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

enum tcol_type { TCOL_STR, TCOL_U64, TCOL_I64 };

struct tcol {
	const char *name;
	enum tcol_type type;
};

struct tcell {
	int empty;
	union { char *s; uint64_t u; int64_t i; } v;
};

struct table {
	const struct tcol *cols; /* borrowed */
	uint32_t ncols;
	struct tcell *cells;     /* owned, nrows * ncols */
	uint32_t nrows, caprows;
	int oom;                 /* an add failed; render returns -ENOMEM */
};

void table_init(struct table *t, const struct tcol *cols, uint32_t ncols);
void table_free(struct table *t);

/* Starts a new row (all cells empty); returns -ENOMEM. */
int table_add_row(struct table *t);
/* Set a cell of the last row.  set_str copies len bytes. */
void table_set_str(struct table *t, uint32_t col, const char *s, size_t len);
void table_set_u64(struct table *t, uint32_t col, uint64_t v);
void table_set_i64(struct table *t, uint32_t col, int64_t v);

int table_render_tsv(const struct table *t, struct buf *out);
int table_render_csv(const struct table *t, struct buf *out);
int table_render_json(const struct table *t, struct buf *out);

/* Helpers also used for key<TAB>value files. */
int put_tsv_field(struct buf *out, const char *s, size_t len);
int put_csv_field(struct buf *out, const char *s, size_t len);
int put_json_string(struct buf *out, const char *s, size_t len);

/* "key<TAB>value" lines of the key-value files (summary, info). */
int kv_u64(struct buf *out, const char *k, uint64_t v);
int kv_i64(struct buf *out, const char *k, int64_t v);
/* v in decimal, nothing around it. */
int put_u64(struct buf *out, uint64_t v);

#endif

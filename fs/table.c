/* table.c - see table.h */
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, const struct tcol *cols, uint32_t ncols)
{
	memset(t, 0, sizeof *t);
	t->cols = cols;
	t->ncols = ncols;
}

void table_free(struct table *t)
{
	for (uint64_t i = 0; i < (uint64_t)t->nrows * t->ncols; i++) {
		if (t->cols[i % t->ncols].type == TCOL_STR)
			free(t->cells[i].v.s);
	}
	free(t->cells);
	memset(t, 0, sizeof *t);
}

int table_add_row(struct table *t)
{
	if (t->nrows == t->caprows) {
		uint32_t cap = t->caprows ? t->caprows * 2 : 64;
		struct tcell *p = realloc(t->cells, (size_t)cap * t->ncols * sizeof *p);
		if (!p) {
			t->oom = 1;
			return -ENOMEM;
		}
		t->cells = p;
		t->caprows = cap;
	}
	struct tcell *row = &t->cells[(size_t)t->nrows * t->ncols];
	for (uint32_t c = 0; c < t->ncols; c++) {
		row[c].empty = 1;
		row[c].v.u = 0;
	}
	t->nrows++;
	return 0;
}

static struct tcell *last_cell(struct table *t, uint32_t col)
{
	return &t->cells[(size_t)(t->nrows - 1) * t->ncols + col];
}

void table_set_str(struct table *t, uint32_t col, const char *s, size_t len)
{
	struct tcell *c = last_cell(t, col);
	char *p = malloc(len + 1);
	if (!p) {
		t->oom = 1;
		return;
	}
	memcpy(p, s, len);
	p[len] = '\0';
	free(c->v.s);
	c->v.s = p;
	c->empty = 0;
}

void table_set_u64(struct table *t, uint32_t col, uint64_t v)
{
	struct tcell *c = last_cell(t, col);
	c->v.u = v;
	c->empty = 0;
}

void table_set_i64(struct table *t, uint32_t col, int64_t v)
{
	struct tcell *c = last_cell(t, col);
	c->v.i = v;
	c->empty = 0;
}

int put_tsv_field(struct buf *out, const char *s, size_t len)
{
	int rc = buf_reserve(out, len);
	for (size_t i = 0; i < len && !rc; i++) {
		char ch = s[i];
		rc = buf_putc(out, (uint8_t)(ch == '\t' || ch == '\n' || ch == '\r' ? ' ' : ch));
	}
	return rc;
}

int put_csv_field(struct buf *out, const char *s, size_t len)
{
	if (!memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\n', len) &&
	    !memchr(s, '\r', len))
		return buf_put(out, s, len);
	int rc = buf_putc(out, '"');
	for (size_t i = 0; i < len && !rc; i++) {
		if (s[i] == '"')
			rc = buf_putc(out, '"');
		if (!rc)
			rc = buf_putc(out, (uint8_t)s[i]);
	}
	return rc ? rc : buf_putc(out, '"');
}

int put_json_string(struct buf *out, const char *s, size_t len)
{
	int rc = buf_putc(out, '"');
	for (size_t i = 0; i < len && !rc; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			rc = buf_printf(out, "\\%c", c);
		else if (c == '\n')
			rc = buf_put(out, "\\n", 2);
		else if (c == '\t')
			rc = buf_put(out, "\\t", 2);
		else if (c < 0x20 || c == 0x7f)
			rc = buf_printf(out, "\\u%04x", c);
		else
			rc = buf_putc(out, c);
	}
	return rc ? rc : buf_putc(out, '"');
}

enum fmt { FMT_TSV, FMT_CSV, FMT_JSON };

static int put_cell(struct buf *out, const struct tcol *col, const struct tcell *c, enum fmt f)
{
	if (c->empty)
		return f == FMT_JSON ? buf_put(out, "null", 4) : 0;
	switch (col->type) {
	case TCOL_U64:
		return buf_printf(out, "%" PRIu64, c->v.u);
	case TCOL_I64:
		return buf_printf(out, "%" PRId64, c->v.i);
	case TCOL_STR:
		break;
	}
	size_t len = strlen(c->v.s);
	if (f == FMT_TSV)
		return put_tsv_field(out, c->v.s, len);
	if (f == FMT_CSV)
		return put_csv_field(out, c->v.s, len);
	return put_json_string(out, c->v.s, len);
}

static int render_delimited(const struct table *t, struct buf *out, enum fmt f)
{
	char sep = f == FMT_TSV ? '\t' : ',';
	int rc = 0;
	if (t->oom)
		return -ENOMEM;
	for (uint32_t c = 0; c < t->ncols && !rc; c++) {
		if (c)
			rc = buf_putc(out, (uint8_t)sep);
		if (!rc)
			rc = buf_put(out, t->cols[c].name, strlen(t->cols[c].name));
	}
	if (!rc)
		rc = buf_putc(out, '\n');
	for (uint32_t r = 0; r < t->nrows && !rc; r++) {
		const struct tcell *row = &t->cells[(size_t)r * t->ncols];
		for (uint32_t c = 0; c < t->ncols && !rc; c++) {
			if (c)
				rc = buf_putc(out, (uint8_t)sep);
			if (!rc)
				rc = put_cell(out, &t->cols[c], &row[c], f);
		}
		if (!rc)
			rc = buf_putc(out, '\n');
	}
	return rc;
}

int table_render_tsv(const struct table *t, struct buf *out)
{
	return render_delimited(t, out, FMT_TSV);
}

int table_render_csv(const struct table *t, struct buf *out)
{
	return render_delimited(t, out, FMT_CSV);
}

int table_render_json(const struct table *t, struct buf *out)
{
	if (t->oom)
		return -ENOMEM;
	int rc = buf_putc(out, '[');
	for (uint32_t r = 0; r < t->nrows && !rc; r++) {
		const struct tcell *row = &t->cells[(size_t)r * t->ncols];
		rc = buf_put(out, r ? ",\n {" : "\n {", r ? 4 : 3);
		for (uint32_t c = 0; c < t->ncols && !rc; c++) {
			if (c)
				rc = buf_put(out, ", ", 2);
			if (!rc)
				rc = put_json_string(out, t->cols[c].name, strlen(t->cols[c].name));
			if (!rc)
				rc = buf_put(out, ": ", 2);
			if (!rc)
				rc = put_cell(out, &t->cols[c], &row[c], FMT_JSON);
		}
		if (!rc)
			rc = buf_putc(out, '}');
	}
	return rc ? rc : buf_put(out, "\n]\n", 3);
}

int kv_u64(struct buf *out, const char *k, uint64_t v)
{
	return buf_printf(out, "%s\t%" PRIu64 "\n", k, v);
}

int kv_i64(struct buf *out, const char *k, int64_t v)
{
	return buf_printf(out, "%s\t%" PRId64 "\n", k, v);
}

/* Hand-rolled decimal: objects files and tables write millions of them. */
int put_u64(struct buf *out, uint64_t v)
{
	char tmp[24];
	int i = (int)sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return buf_put(out, tmp + i, sizeof tmp - (size_t)i);
}

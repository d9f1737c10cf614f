/* parquet.c - see parquet.h.  Field ids and enum values are those of
 * parquet-format's parquet.thrift (apache/parquet-format). */
#include "parquet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* parquet.thrift enums */
enum { T_BOOLEAN = 0, T_INT64 = 2, T_BYTE_ARRAY = 6 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };
enum { ENC_PLAIN = 0, ENC_PLAIN_DICTIONARY = 2, ENC_RLE = 3 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_ZSTD = 6 };
enum { CONVERTED_UTF8 = 0 };

#define PQ_RG_ROWS_DEFAULT (1u << 20)
#define PQ_PAGE_BYTES_DEFAULT (1u << 20)
/* "NAME version V": the form parquet-mr's VersionParser reads (Spark logs
 * a warning for others) */
#define PQ_CREATED_BY "heapfs export version 1"
/* A page ends at page_bytes of values or at this many values, whichever
 * comes first: the definition levels then fit a fixed array, and the
 * per-value path never grows a buffer for them. */
#define PQ_PAGE_VALUES_MAX (1u << 17)
/* Room kept free in a page's value buffer: an INT64 or a dictionary index
 * is written without a capacity check (strings check). */
#define PQ_VALS_SLACK 64

/* ---------------- Thrift compact protocol ---------------- */

void tc_init(struct tc *t, struct buf *out)
{
	memset(t, 0, sizeof *t);
	t->out = out;
}

static void tc_put(struct tc *t, int rc)
{
	if (rc && !t->rc)
		t->rc = rc;
}

/* The field header: the id as a delta from the previous field's when it is
 * 1..15 (one byte), else the type byte and the id as a zigzag varint. */
static void tc_field(struct tc *t, int16_t id, uint8_t type)
{
	int16_t delta = (int16_t)(id - t->last[t->depth]);
	if (delta > 0 && delta <= 15) {
		tc_put(t, buf_putc(t->out, (uint8_t)(delta << 4 | type)));
	} else {
		tc_put(t, buf_putc(t->out, type));
		tc_put(t, buf_put_sv(t->out, id));
	}
	t->last[t->depth] = id;
}

void tc_i32(struct tc *t, int16_t id, int32_t v)
{
	tc_field(t, id, TC_I32);
	tc_put(t, buf_put_sv(t->out, v));
}

void tc_i64(struct tc *t, int16_t id, int64_t v)
{
	tc_field(t, id, TC_I64);
	tc_put(t, buf_put_sv(t->out, v));
}

void tc_bool(struct tc *t, int16_t id, int v)
{
	tc_field(t, id, v ? TC_TRUE : TC_FALSE);
}

void tc_elem_bin(struct tc *t, const void *s, size_t len)
{
	tc_put(t, buf_put_uv(t->out, len));
	tc_put(t, buf_put(t->out, s, len));
}

void tc_bin(struct tc *t, int16_t id, const void *s, size_t len)
{
	tc_field(t, id, TC_BINARY);
	tc_elem_bin(t, s, len);
}

void tc_elem_i32(struct tc *t, int32_t v)
{
	tc_put(t, buf_put_sv(t->out, v));
}

void tc_struct_begin(struct tc *t, int16_t id)
{
	if (id)
		tc_field(t, id, TC_STRUCT);
	if (t->depth + 1 >= TC_DEPTH_MAX) {
		tc_put(t, -E2BIG);
		return;
	}
	t->last[++t->depth] = 0;
}

void tc_struct_end(struct tc *t)
{
	tc_put(t, buf_putc(t->out, 0)); /* STOP */
	if (t->depth > 0)
		t->depth--;
}

void tc_list_begin(struct tc *t, int16_t id, enum tc_type elem, uint32_t n)
{
	tc_field(t, id, TC_LIST);
	if (n < 15) {
		tc_put(t, buf_putc(t->out, (uint8_t)(n << 4 | elem)));
	} else {
		tc_put(t, buf_putc(t->out, (uint8_t)(0xf0 | elem)));
		tc_put(t, buf_put_uv(t->out, n));
	}
}

/* ---------------- value encodings ---------------- */

int pq_pack_bits(struct buf *out, const uint8_t *v, uint32_t n)
{
	int rc = buf_reserve(out, (n + 7) / 8);
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	for (uint32_t i = 0; i < n; i += 8) {
		uint8_t byte = 0;
		for (uint32_t k = 0; k < 8 && i + k < n; k++)
			byte |= (uint8_t)((v[i + k] & 1) << k);
		*p++ = byte;
	}
	out->len = (size_t)(p - out->data);
	return 0;
}

#define HYBRID_GROUPS_MAX 63

int pq_hybrid_bitpacked(struct buf *out, const uint32_t *v, uint32_t n, unsigned width)
{
	if (width < 1 || width > 32)
		return -EINVAL;
	uint32_t groups = (n + 7) / 8;
	/* per run: a header byte and width bytes per group */
	int rc = buf_reserve(out, (size_t)groups * width + groups / HYBRID_GROUPS_MAX + 1);
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	for (uint32_t g = 0; g < groups; g += HYBRID_GROUPS_MAX) {
		uint32_t ng = groups - g < HYBRID_GROUPS_MAX ? groups - g : HYBRID_GROUPS_MAX;
		*p++ = (uint8_t)(ng << 1 | 1);
		uint64_t acc = 0;
		unsigned bits = 0;
		for (uint32_t i = g * 8; i < (g + ng) * 8; i++) {
			uint64_t x = i < n ? v[i] : 0;
			acc |= x << bits;
			bits += width;
			while (bits >= 8) {
				*p++ = (uint8_t)acc;
				acc >>= 8;
				bits -= 8;
			}
		}
		/* 8 values of any width fill whole bytes: nothing is left over */
	}
	out->len = (size_t)(p - out->data);
	return 0;
}

/* ---------------- the writer ---------------- */

struct pq_chunk_meta {
	uint64_t dict_off, data_off;   /* dict_off 0: no dictionary page */
	uint64_t raw, comp, nvals;     /* bytes with page headers; values with nulls */
};

struct pq_col_state {
	struct buf vals;       /* the current page's values: INT64 little-endian, BOOL and
	                          defs one byte each, STRING plain, DICT u32 local index */
	uint8_t *defs;         /* [PQ_PAGE_VALUES_MAX] the current page's definition levels */
	uint32_t page_n;       /* values (nulls included) in the current page */
	struct buf chunk;      /* the row group's finished pages (headers and bodies) */
	uint64_t chunk_raw;    /* their size uncompressed, headers included */
	uint64_t chunk_vals;
	uint32_t *local;       /* DICT: [dict.n] 1 + local index, 0 not in this row group */
	uint32_t *globals;     /* DICT: local index -> id */
	uint32_t ndict, capdict;
};

struct pq_writer {
	int fd;
	const struct pq_column *cols;  /* borrowed */
	const struct pq_strings *dicts;/* borrowed, [ncols] or NULL */
	uint32_t ncols;
	struct pq_col_state *cs;       /* owned, [ncols] */
	uint32_t rg_rows, page_bytes;
	int level;
	ZSTD_CCtx *z;                  /* owned */
	uint64_t offset;               /* bytes written to the file */
	uint64_t rows, rg_row_count, raw_bytes;
	struct pq_chunk_meta *meta;    /* owned, [nrgs * ncols] */
	uint64_t *rg_rows_of;          /* owned, [nrgs] */
	uint32_t nrgs, caprgs;
	struct buf page, comp, hdr;    /* scratch */
	int rc;                        /* sticky */
};

static int pq_fail(struct pq_writer *w, int rc)
{
	if (rc && !w->rc)
		w->rc = rc;
	return w->rc;
}

static int write_all(struct pq_writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = write(w->fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return pq_fail(w, -errno);
		}
		b += k;
		n -= (size_t)k;
		w->offset += (uint64_t)k;
	}
	return 0;
}

int pq_open(struct pq_writer **out, const char *path, const struct pq_column *cols, uint32_t ncols,
	    const struct pq_strings *dicts, const struct pq_opts *o)
{
	int rc = -ENOMEM;
	struct pq_writer *w = calloc(1, sizeof *w);
	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->cols = cols;
	w->ncols = ncols;
	w->dicts = dicts;
	w->rg_rows = o && o->rg_rows ? o->rg_rows : PQ_RG_ROWS_DEFAULT;
	w->page_bytes = o && o->page_bytes ? o->page_bytes : PQ_PAGE_BYTES_DEFAULT;
	w->level = o && o->zstd_level ? o->zstd_level : 1;
	buf_init(&w->page);
	buf_init(&w->comp);
	buf_init(&w->hdr);
	if (!(w->cs = calloc(ncols ? ncols : 1, sizeof *w->cs)) || !(w->z = ZSTD_createCCtx()))
		goto fail;
	for (uint32_t c = 0; c < ncols; c++) {
		buf_init(&w->cs[c].vals);
		buf_init(&w->cs[c].chunk);
		if (buf_reserve(&w->cs[c].vals, w->page_bytes + PQ_VALS_SLACK) ||
		    !(w->cs[c].defs = malloc(PQ_PAGE_VALUES_MAX)))
			goto fail;
		if (cols[c].type != PQ_DICT)
			continue;
		if (!dicts || !(w->cs[c].local = calloc(dicts[c].n ? dicts[c].n : 1, sizeof(uint32_t))))
			goto fail;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, w->level))) {
		rc = -EINVAL;
		goto fail;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = -errno;
		goto fail;
	}
	if ((rc = write_all(w, "PAR1", 4)))
		goto fail;
	*out = w;
	return 0;
fail:
	pq_abort(w);
	return rc;
}

static int flush_page(struct pq_writer *w, uint32_t c);

/* After a value of column c: its definition level, and the page cut when
 * full.  The value buffer always keeps PQ_VALS_SLACK bytes free past
 * page_bytes, so fixed-size values need no capacity check. */
static inline int after_value(struct pq_writer *w, struct pq_col_state *s, uint32_t c, uint8_t defined)
{
	s->defs[s->page_n++] = defined;
	if (s->page_n == PQ_PAGE_VALUES_MAX || s->vals.len >= w->page_bytes)
		return flush_page(w, c);
	return 0;
}

int pq_i64(struct pq_writer *w, uint32_t c, int64_t v)
{
	struct pq_col_state *s = &w->cs[c];
	if (w->rc)
		return w->rc;
	put_le64(s->vals.data + s->vals.len, (uint64_t)v);
	s->vals.len += 8;
	return after_value(w, s, c, 1);
}

int pq_bool(struct pq_writer *w, uint32_t c, int v)
{
	struct pq_col_state *s = &w->cs[c];
	if (w->rc)
		return w->rc;
	s->vals.data[s->vals.len++] = v ? 1 : 0;
	return after_value(w, s, c, 1);
}

int pq_str(struct pq_writer *w, uint32_t c, const char *str, size_t len)
{
	struct pq_col_state *s = &w->cs[c];
	if (w->rc)
		return w->rc;
	if (len > INT32_MAX)
		return pq_fail(w, -EOVERFLOW);
	/* keep the slack for the fixed-size values of later calls */
	int rc = buf_reserve(&s->vals, 4 + len + PQ_VALS_SLACK);
	if (rc)
		return pq_fail(w, rc);
	put_le32(s->vals.data + s->vals.len, (uint32_t)len);
	memcpy(s->vals.data + s->vals.len + 4, str, len);
	s->vals.len += 4 + len;
	return after_value(w, s, c, 1);
}

/* The row group's local index of id, added to its dictionary when new. */
static int dict_local(struct pq_writer *w, uint32_t c, uint32_t id, uint32_t *idx)
{
	struct pq_col_state *s = &w->cs[c];
	if (id >= w->dicts[c].n)
		return -EINVAL;
	if (s->local[id]) {
		*idx = s->local[id] - 1;
		return 0;
	}
	if (s->ndict == s->capdict) {
		uint32_t cap = s->capdict ? s->capdict * 2 : 256;
		uint32_t *g = realloc(s->globals, (size_t)cap * sizeof *g);
		if (!g)
			return -ENOMEM;
		s->globals = g;
		s->capdict = cap;
	}
	s->globals[s->ndict] = id;
	*idx = s->ndict++;
	s->local[id] = *idx + 1;
	return 0;
}

int pq_dict(struct pq_writer *w, uint32_t c, uint32_t id)
{
	struct pq_col_state *s = &w->cs[c];
	uint32_t idx;
	if (w->rc)
		return w->rc;
	if (id < w->dicts[c].n && s->local[id]) {
		idx = s->local[id] - 1;
	} else {
		int rc = dict_local(w, c, id, &idx);
		if (rc)
			return pq_fail(w, rc);
	}
	memcpy(s->vals.data + s->vals.len, &idx, sizeof idx);
	s->vals.len += sizeof idx;
	return after_value(w, s, c, 1);
}

int pq_null(struct pq_writer *w, uint32_t c)
{
	if (w->rc)
		return w->rc;
	if (!w->cols[c].optional)
		return pq_fail(w, -EINVAL);
	return after_value(w, &w->cs[c], c, 0);
}

static unsigned bit_width(uint32_t n)
{
	unsigned b = 1; /* never 0: a width-0 run is legal but not every reader takes it */
	while (b < 32 && (n >> b))
		b++;
	return b;
}

/* The page's body before compression: definition levels (optional
 * columns: a 4-byte length, then the hybrid runs), then the values. */
static int page_body(struct pq_writer *w, uint32_t c, struct buf *pg)
{
	struct pq_col_state *s = &w->cs[c];
	int rc = 0;
	buf_reset(pg);
	if (w->cols[c].optional) {
		size_t at = pg->len;
		uint32_t groups = (s->page_n + 7) / 8, runs = (groups + HYBRID_GROUPS_MAX - 1) / HYBRID_GROUPS_MAX;
		if ((rc = buf_put_le32(pg, 0)))
			return rc;
		/* width 1: a run is its header byte and one byte per group */
		for (uint32_t r = 0; r < runs && !rc; r++) {
			uint32_t g0 = r * HYBRID_GROUPS_MAX;
			uint32_t ng = groups - g0 < HYBRID_GROUPS_MAX ? groups - g0 : HYBRID_GROUPS_MAX;
			uint32_t n = ng * 8 < s->page_n - g0 * 8 ? ng * 8 : s->page_n - g0 * 8;
			rc = buf_putc(pg, (uint8_t)(ng << 1 | 1));
			if (!rc)
				rc = pq_pack_bits(pg, s->defs + (size_t)g0 * 8, n);
		}
		if (rc)
			return rc;
		put_le32(pg->data + at, (uint32_t)(pg->len - at - 4));
	}
	switch (w->cols[c].type) {
	case PQ_BOOL:
		return pq_pack_bits(pg, s->vals.data, (uint32_t)s->vals.len);
	case PQ_DICT: {
		unsigned width = bit_width(s->ndict ? s->ndict - 1 : 0);
		if ((rc = buf_putc(pg, (uint8_t)width)))
			return rc;
		return pq_hybrid_bitpacked(pg, (const uint32_t *)(const void *)s->vals.data,
					   (uint32_t)(s->vals.len / sizeof(uint32_t)), width);
	}
	default:
		return buf_put(pg, s->vals.data, s->vals.len);
	}
}

/* Compresses w->page into w->comp (one zstd frame). */
static int compress_page(struct pq_writer *w)
{
	size_t bound = ZSTD_compressBound(w->page.len);
	buf_reset(&w->comp);
	int rc = buf_reserve(&w->comp, bound);
	if (rc)
		return rc;
	size_t n = ZSTD_compress2(w->z, w->comp.data, bound, w->page.data, w->page.len);
	if (ZSTD_isError(n))
		return -EIO;
	w->comp.len = n;
	return w->page.len > INT32_MAX || n > INT32_MAX ? -EOVERFLOW : 0;
}

/* PageHeader of a data page (dict: 0) or a dictionary page (dict: the
 * number of its values) for w->page / w->comp, into w->hdr. */
static int page_header(struct pq_writer *w, int type, uint32_t nvals, int enc)
{
	struct tc t;
	buf_reset(&w->hdr);
	tc_init(&t, &w->hdr);
	tc_struct_begin(&t, 0);
	tc_i32(&t, 1, type);
	tc_i32(&t, 2, (int32_t)w->page.len);
	tc_i32(&t, 3, (int32_t)w->comp.len);
	if (type == PAGE_DATA) {
		tc_struct_begin(&t, 5); /* DataPageHeader */
		tc_i32(&t, 1, (int32_t)nvals);
		tc_i32(&t, 2, enc);
		tc_i32(&t, 3, ENC_RLE);
		tc_i32(&t, 4, ENC_RLE);
		tc_struct_end(&t);
	} else {
		tc_struct_begin(&t, 7); /* DictionaryPageHeader */
		tc_i32(&t, 1, (int32_t)nvals);
		tc_i32(&t, 2, enc);
		tc_struct_end(&t);
	}
	tc_struct_end(&t);
	return t.rc;
}

static int data_encoding(const struct pq_column *col)
{
	return col->type == PQ_DICT ? ENC_PLAIN_DICTIONARY : ENC_PLAIN;
}

/* The current page of column c, compressed, onto its row group chunk. */
static int flush_page(struct pq_writer *w, uint32_t c)
{
	struct pq_col_state *s = &w->cs[c];
	int rc = page_body(w, c, &w->page);
	if (!rc)
		rc = compress_page(w);
	if (!rc)
		rc = page_header(w, PAGE_DATA, s->page_n, data_encoding(&w->cols[c]));
	if (!rc)
		rc = buf_put(&s->chunk, w->hdr.data, w->hdr.len);
	if (!rc)
		rc = buf_put(&s->chunk, w->comp.data, w->comp.len);
	if (rc)
		return pq_fail(w, rc);
	s->chunk_raw += w->hdr.len + w->page.len;
	s->chunk_vals += s->page_n;
	w->raw_bytes += w->hdr.len + w->page.len;
	buf_reset(&s->vals);
	s->page_n = 0;
	return 0;
}

/* The dictionary page of column c's row group goes to the file; its
 * dictionary is emptied for the next row group. */
static int write_dict_page(struct pq_writer *w, uint32_t c, struct pq_chunk_meta *m)
{
	struct pq_col_state *s = &w->cs[c];
	const struct pq_strings *d = &w->dicts[c];
	int rc = 0;
	buf_reset(&w->page);
	for (uint32_t k = 0; k < s->ndict && !rc; k++) {
		uint32_t id = s->globals[k];
		rc = buf_put_le32(&w->page, d->len[id]);
		if (!rc)
			rc = buf_put(&w->page, d->str[id], d->len[id]);
		s->local[id] = 0;
	}
	if (!rc)
		rc = compress_page(w);
	if (!rc)
		rc = page_header(w, PAGE_DICTIONARY, s->ndict, ENC_PLAIN_DICTIONARY);
	if (rc)
		return pq_fail(w, rc);
	s->ndict = 0;
	m->dict_off = w->offset;
	m->raw += w->hdr.len + w->page.len;
	m->comp += w->hdr.len + w->comp.len;
	w->raw_bytes += w->hdr.len + w->page.len;
	if ((rc = write_all(w, w->hdr.data, w->hdr.len)))
		return rc;
	return write_all(w, w->comp.data, w->comp.len);
}

static int flush_row_group(struct pq_writer *w)
{
	if (w->rg_row_count == 0)
		return w->rc;
	if (w->nrgs == w->caprgs) {
		uint32_t cap = w->caprgs ? w->caprgs * 2 : 8;
		struct pq_chunk_meta *m = realloc(w->meta, (size_t)cap * w->ncols * sizeof *m);
		if (!m)
			return pq_fail(w, -ENOMEM);
		w->meta = m;
		uint64_t *r = realloc(w->rg_rows_of, (size_t)cap * sizeof *r);
		if (!r)
			return pq_fail(w, -ENOMEM);
		w->rg_rows_of = r;
		w->caprgs = cap;
	}
	struct pq_chunk_meta *meta = w->meta + (size_t)w->nrgs * w->ncols;
	for (uint32_t c = 0; c < w->ncols && !w->rc; c++) {
		struct pq_col_state *s = &w->cs[c];
		struct pq_chunk_meta *m = &meta[c];
		memset(m, 0, sizeof *m);
		if (s->page_n && flush_page(w, c))
			break;
		if (w->cols[c].type == PQ_DICT && write_dict_page(w, c, m))
			break;
		m->data_off = w->offset;
		m->raw += s->chunk_raw;
		m->comp += s->chunk.len;
		m->nvals = s->chunk_vals;
		if (write_all(w, s->chunk.data, s->chunk.len))
			break;
		buf_reset(&s->chunk);
		s->chunk_raw = s->chunk_vals = 0;
	}
	if (w->rc)
		return w->rc;
	w->rg_rows_of[w->nrgs++] = w->rg_row_count;
	w->rg_row_count = 0;
	return 0;
}

int pq_row_end(struct pq_writer *w)
{
	if (w->rc)
		return w->rc;
	w->rows++;
	if (++w->rg_row_count >= w->rg_rows)
		return flush_row_group(w);
	return 0;
}

uint64_t pq_rows(const struct pq_writer *w)
{
	return w->rows;
}

uint64_t pq_raw_bytes(const struct pq_writer *w)
{
	return w->raw_bytes;
}

static void schema_element(struct tc *t, const struct pq_column *col)
{
	tc_struct_begin(t, 0);
	tc_i32(t, 1, col->type == PQ_INT64 ? T_INT64 : col->type == PQ_BOOL ? T_BOOLEAN : T_BYTE_ARRAY);
	tc_i32(t, 3, col->optional ? REP_OPTIONAL : REP_REQUIRED);
	tc_bin(t, 4, col->name, strlen(col->name));
	if (col->type == PQ_STRING || col->type == PQ_DICT) {
		tc_i32(t, 6, CONVERTED_UTF8);
		tc_struct_begin(t, 10);  /* LogicalType (a union) */
		tc_struct_begin(t, 1);   /* STRING: StringType, empty */
		tc_struct_end(t);
		tc_struct_end(t);
	}
	tc_struct_end(t);
}

static void column_chunk(struct tc *t, const struct pq_column *col, const struct pq_chunk_meta *m)
{
	int enc = data_encoding(col);
	tc_struct_begin(t, 0);
	tc_i64(t, 2, (int64_t)(m->dict_off ? m->dict_off : m->data_off)); /* file_offset */
	tc_struct_begin(t, 3);   /* ColumnMetaData */
	tc_i32(t, 1, col->type == PQ_INT64 ? T_INT64 : col->type == PQ_BOOL ? T_BOOLEAN : T_BYTE_ARRAY);
	tc_list_begin(t, 2, TC_I32, 2);
	tc_elem_i32(t, enc);
	tc_elem_i32(t, ENC_RLE);
	tc_list_begin(t, 3, TC_BINARY, 1);
	tc_elem_bin(t, col->name, strlen(col->name));
	tc_i32(t, 4, CODEC_ZSTD);
	tc_i64(t, 5, (int64_t)m->nvals);
	tc_i64(t, 6, (int64_t)m->raw);
	tc_i64(t, 7, (int64_t)m->comp);
	tc_i64(t, 9, (int64_t)m->data_off);
	if (m->dict_off)
		tc_i64(t, 11, (int64_t)m->dict_off);
	tc_struct_end(t);
	tc_struct_end(t);
}

/* FileMetaData into out. */
static int footer(const struct pq_writer *w, struct buf *out)
{
	struct tc t;
	tc_init(&t, out);
	tc_struct_begin(&t, 0);
	tc_i32(&t, 1, 1); /* version */
	tc_list_begin(&t, 2, TC_STRUCT, w->ncols + 1);
	tc_struct_begin(&t, 0); /* the root */
	tc_bin(&t, 4, "schema", 6);
	tc_i32(&t, 5, (int32_t)w->ncols);
	tc_struct_end(&t);
	for (uint32_t c = 0; c < w->ncols; c++)
		schema_element(&t, &w->cols[c]);
	tc_i64(&t, 3, (int64_t)w->rows);
	tc_list_begin(&t, 4, TC_STRUCT, w->nrgs);
	for (uint32_t g = 0; g < w->nrgs; g++) {
		const struct pq_chunk_meta *meta = w->meta + (size_t)g * w->ncols;
		uint64_t raw = 0;
		tc_struct_begin(&t, 0);
		tc_list_begin(&t, 1, TC_STRUCT, w->ncols);
		for (uint32_t c = 0; c < w->ncols; c++) {
			column_chunk(&t, &w->cols[c], &meta[c]);
			raw += meta[c].raw;
		}
		tc_i64(&t, 2, (int64_t)raw);
		tc_i64(&t, 3, (int64_t)w->rg_rows_of[g]);
		tc_struct_end(&t);
	}
	tc_bin(&t, 6, PQ_CREATED_BY, strlen(PQ_CREATED_BY));
	tc_struct_end(&t);
	return t.rc;
}

int pq_close(struct pq_writer *w, uint64_t *file_bytes)
{
	struct buf f;
	buf_init(&f);
	int rc = flush_row_group(w);
	if (!rc)
		rc = footer(w, &f);
	if (!rc && f.len > UINT32_MAX)
		rc = -EOVERFLOW;
	if (!rc)
		rc = buf_put_le32(&f, (uint32_t)f.len);
	if (!rc)
		rc = buf_put(&f, "PAR1", 4);
	if (!rc)
		rc = write_all(w, f.data, f.len);
	if (!rc && file_bytes)
		*file_bytes = w->offset;
	if (w->fd >= 0 && close(w->fd) && !rc)
		rc = -errno;
	w->fd = -1;
	buf_free(&f);
	pq_abort(w);
	return rc;
}

void pq_abort(struct pq_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (uint32_t c = 0; w->cs && c < w->ncols; c++) {
		buf_free(&w->cs[c].vals);
		free(w->cs[c].defs);
		buf_free(&w->cs[c].chunk);
		free(w->cs[c].local);
		free(w->cs[c].globals);
	}
	free(w->cs);
	ZSTD_freeCCtx(w->z);
	free(w->meta);
	free(w->rg_rows_of);
	buf_free(&w->page);
	buf_free(&w->comp);
	buf_free(&w->hdr);
	free(w);
}

/* pq_info.c - what a Parquet file's footer says, for
 * tests/integration/test_export.sh (which runs without DuckDB):
 *   pq_info FILE.parquet
 * prints
 *   rows N          FileMetaData.num_rows
 *   row_groups K    and the sum of their num_rows, which must equal N
 *   columns a,b,c   the schema's leaf names
 * and exits 1 when the framing ("PAR1" at both ends, the footer length)
 * or the Thrift compact encoding is broken.  A generic compact-protocol
 * reader that skips every field it does not need: it shares no code with
 * fs/parquet.c's writer.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint8_t byte(struct rd *r)
{
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static uint64_t varint(struct rd *r)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64 && !r->bad; shift += 7) {
		uint8_t b = byte(r);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t zigzag(struct rd *r)
{
	uint64_t v = varint(r);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void skip(struct rd *r, int type, int depth);

static void skip_bytes(struct rd *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		return;
	}
	r->p += n;
}

/* Calls fn for each field of a struct (fn skips what it does not read). */
typedef void (*field_fn)(struct rd *r, int16_t id, int type, void *ctx, int depth);

static void read_struct(struct rd *r, field_fn fn, void *ctx, int depth)
{
	int16_t last = 0;
	if (depth > 32) {
		r->bad = 1;
		return;
	}
	while (!r->bad) {
		uint8_t b = byte(r);
		if (b == 0)
			return;
		int type = b & 15, delta = b >> 4;
		int16_t id = delta ? (int16_t)(last + delta) : (int16_t)zigzag(r);
		last = id;
		if (fn)
			fn(r, id, type, ctx, depth + 1);
		else
			skip(r, type, depth + 1);
	}
}

static uint64_t list_header(struct rd *r, int *elem)
{
	uint8_t b = byte(r);
	*elem = b & 15;
	uint64_t n = b >> 4;
	return n == 15 ? varint(r) : n;
}

static void skip(struct rd *r, int type, int depth)
{
	int elem;
	switch (type) {
	case 1: case 2: return;            /* bool in a field header */
	case 3: skip_bytes(r, 1); return;
	case 4: case 5: case 6: varint(r); return;
	case 7: skip_bytes(r, 8); return;
	case 8: skip_bytes(r, varint(r)); return;
	case 9: case 10: {
		uint64_t n = list_header(r, &elem);
		for (uint64_t i = 0; i < n && !r->bad; i++)
			elem == 1 || elem == 2 ? skip_bytes(r, 1) : skip(r, elem, depth + 1);
		return;
	}
	case 11: {
		uint64_t n = varint(r);
		uint8_t kv = n ? byte(r) : 0;
		for (uint64_t i = 0; i < n && !r->bad; i++) {
			skip(r, kv >> 4, depth + 1);
			skip(r, kv & 15, depth + 1);
		}
		return;
	}
	case 12: read_struct(r, NULL, NULL, depth); return;
	default: r->bad = 1;
	}
}

struct meta {
	int64_t rows, rg_rows;
	uint64_t row_groups, leaves;
	char cols[4096];
	int64_t cur_children;
	int have_children;
	char cur_name[256];
};

static void schema_field(struct rd *r, int16_t id, int type, void *ctx, int depth)
{
	struct meta *m = ctx;
	if (id == 4 && type == 8) {
		uint64_t n = varint(r);
		if (n >= sizeof m->cur_name || (uint64_t)(r->end - r->p) < n) {
			r->bad = 1;
			return;
		}
		memcpy(m->cur_name, r->p, n);
		m->cur_name[n] = '\0';
		r->p += n;
	} else if (id == 5 && type == 5) {
		m->cur_children = zigzag(r);
		m->have_children = 1;
	} else {
		skip(r, type, depth);
	}
}

static void rowgroup_field(struct rd *r, int16_t id, int type, void *ctx, int depth)
{
	struct meta *m = ctx;
	if (id == 3 && type == 6)
		m->rg_rows += zigzag(r);
	else
		skip(r, type, depth);
}

static void file_field(struct rd *r, int16_t id, int type, void *ctx, int depth)
{
	struct meta *m = ctx;
	int elem;
	if (id == 2 && type == 9) {
		uint64_t n = list_header(r, &elem);
		for (uint64_t i = 0; i < n && !r->bad; i++) {
			m->cur_name[0] = '\0';
			m->have_children = 0;
			read_struct(r, schema_field, m, depth);
			if (m->have_children)  /* the root: not a column */
				continue;
			size_t l = strlen(m->cols);
			snprintf(m->cols + l, sizeof m->cols - l, "%s%s", l ? "," : "", m->cur_name);
			m->leaves++;
		}
	} else if (id == 3 && type == 6) {
		m->rows = zigzag(r);
	} else if (id == 4 && type == 9) {
		uint64_t n = list_header(r, &elem);
		for (uint64_t i = 0; i < n && !r->bad; i++) {
			read_struct(r, rowgroup_field, m, depth);
			m->row_groups++;
		}
	} else {
		skip(r, type, depth);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pq_info FILE.parquet\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			uint8_t *d = realloc(data, cap);
			if (!d) {
				fprintf(stderr, "out of memory\n");
				return 1;
			}
			data = d;
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	if (len < 12 || memcmp(data, "PAR1", 4) || memcmp(data + len - 4, "PAR1", 4)) {
		fprintf(stderr, "%s: no PAR1 at the start and the end\n", argv[1]);
		return 1;
	}
	uint32_t flen = (uint32_t)data[len - 8] | (uint32_t)data[len - 7] << 8 | (uint32_t)data[len - 6] << 16 |
			(uint32_t)data[len - 5] << 24;
	if (flen > len - 12) {
		fprintf(stderr, "%s: footer length %" PRIu32 " beyond the file\n", argv[1], flen);
		return 1;
	}
	struct rd r = { data + len - 8 - flen, data + len - 8, 0 };
	struct meta m;
	memset(&m, 0, sizeof m);
	read_struct(&r, file_field, &m, 0);
	if (r.bad || r.p != r.end) {
		fprintf(stderr, "%s: the footer is not Thrift compact FileMetaData\n", argv[1]);
		return 1;
	}
	if (m.rg_rows != m.rows) {
		fprintf(stderr, "%s: row groups hold %" PRId64 " rows, the file says %" PRId64 "\n", argv[1], m.rg_rows,
			m.rows);
		return 1;
	}
	printf("rows %" PRId64 "\nrow_groups %" PRIu64 "\ncolumns %s\n", m.rows, m.row_groups, m.cols);
	free(data);
	return 0;
}

/* jfr_input.c - the JFR reader's byte cursor, string encodings, interned
 * strings and hash maps (model/jfr_internal.h).
 *
 * Integers: in a chunk whose header sets flag bit 0 (every chunk the JDK
 * writes), short, char, int and long are LEB128-style varints of up to 9
 * bytes: 7 bits per byte, low group first, high bit set while more follow,
 * and a 9th byte that gives its whole 8 bits (RecordingInput.readLong).
 * Without the flag they are big-endian of their Java size (JMC's
 * SeekableInputStream).  float and double are always big-endian IEEE bits,
 * boolean and byte one byte.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jfr_internal.h"
#include "names.h"

static int cut(struct jfr_in *in, const char *what)
{
	return htr_errf(in->err, -EBADMSG, in->pos, "%s runs past the end of its event or chunk (at %llu)",
			what, (unsigned long long)in->end);
}

int jin_u1(struct jfr_in *in, uint8_t *v)
{
	if (in->pos >= in->end)
		return cut(in, "a byte");
	*v = in->base[in->pos++];
	return 0;
}

uint64_t jin_varint_raw(const uint8_t *p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	for (unsigned i = 0; i < 9; i++) {
		if (p + i >= end)
			return 0;
		uint8_t b = p[i];
		if (i == 8) {  /* the 9th byte gives all its 8 bits */
			r |= (uint64_t)b << 56;
			*v = (int64_t)r;
			return 9;
		}
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = (int64_t)r;
			return i + 1;
		}
	}
	return 0; /* not reached */
}

static int fixed(struct jfr_in *in, unsigned n, uint64_t *v, const char *what)
{
	if (in->end - in->pos < n || in->pos > in->end)
		return cut(in, what);
	uint64_t r = 0;
	for (unsigned i = 0; i < n; i++)
		r = r << 8 | in->base[in->pos + i];
	in->pos += n;
	*v = r;
	return 0;
}

int jin_long(struct jfr_in *in, int64_t *v)
{
	if (!in->compressed) {
		uint64_t u = 0;
		int rc = fixed(in, 8, &u, "a long");
		*v = (int64_t)u;
		return rc;
	}
	if (in->pos > in->end)
		return cut(in, "a varint");
	uint64_t k = jin_varint_raw(in->base + in->pos, in->base + in->end, v);
	if (!k)
		return cut(in, "a varint");
	in->pos += k;
	return 0;
}

int jin_int(struct jfr_in *in, int32_t *v)
{
	int64_t l = 0;
	int rc;
	if (!in->compressed) {
		uint64_t u = 0;
		rc = fixed(in, 4, &u, "an int");
		*v = (int32_t)(uint32_t)u;
		return rc;
	}
	rc = jin_long(in, &l);
	*v = (int32_t)(uint32_t)(uint64_t)l; /* Java's (int) cast */
	return rc;
}

int jin_short(struct jfr_in *in, int32_t *v)
{
	int64_t l = 0;
	int rc;
	if (!in->compressed) {
		uint64_t u = 0;
		rc = fixed(in, 2, &u, "a short");
		*v = (int32_t)u;
		return rc;
	}
	rc = jin_long(in, &l);
	*v = (int32_t)(uint16_t)(uint64_t)l;
	return rc;
}

int jin_raw32(struct jfr_in *in, uint32_t *v)
{
	uint64_t u = 0;
	int rc = fixed(in, 4, &u, "a float");
	*v = (uint32_t)u;
	return rc;
}

int jin_raw64(struct jfr_in *in, uint64_t *v)
{
	return fixed(in, 8, v, "a double");
}

int jin_count(struct jfr_in *in, uint32_t *n, const char *what)
{
	uint64_t at = in->pos;
	int32_t v;
	int rc = jin_int(in, &v);
	if (rc)
		return rc;
	/* every element or byte takes at least one byte: a count beyond the
	 * bytes left is damage (the JDK's RecordingInput.require) */
	if (v < 0 || (uint64_t)v > in->end - in->pos)
		return htr_errf(in->err, -EBADMSG, at, "%s count %d exceeds the %llu bytes left", what, v,
				(unsigned long long)(in->end - in->pos));
	*n = (uint32_t)v;
	return 0;
}

/* Whether the next n chars are each one byte below 0x80 (varints of
 * ASCII): the JDK writes the metadata's strings as chars, nearly all
 * ASCII, and reading them a varint at a time took most of the time of
 * reading a small recording.  jin_count has checked n bytes are there. */
static int ascii_chars(const struct jfr_in *in, uint32_t n)
{
	const uint8_t *p = in->base + in->pos;
	uint8_t any = 0;
	if (!in->compressed)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		any |= p[i];
	return !(any & 0x80);
}

int jin_string(struct jfr_in *in, uint8_t *enc, uint64_t *off, uint32_t *n, int64_t *key)
{
	uint64_t at = in->pos;
	int rc = jin_u1(in, enc);
	*n = 0;
	*off = in->pos;
	if (rc)
		return rc;
	switch (*enc) {
	case JFR_ENC_NULL:
	case JFR_ENC_EMPTY:
		return 0;
	case JFR_ENC_POOL:
		return jin_long(in, key);
	case JFR_ENC_UTF8:
	case JFR_ENC_LATIN1:
		if ((rc = jin_count(in, n, "string byte")))
			return rc;
		*off = in->pos;
		in->pos += *n;
		return 0;
	case JFR_ENC_CHARS:
		if ((rc = jin_count(in, n, "string char")))
			return rc;
		*off = in->pos;
		if (ascii_chars(in, *n)) {
			in->pos += *n;
			return 0;
		}
		for (uint32_t i = 0; i < *n; i++) {
			int32_t ch;
			if ((rc = jin_short(in, &ch)))
				return rc;
		}
		return 0;
	default:
		return htr_errf(in->err, -EBADMSG, at, "unknown string encoding %u", *enc);
	}
}

static int put_utf8(struct buf *out, uint32_t cp)
{
	uint8_t b[4];
	size_t k;
	if (cp < 0x80) {
		b[0] = (uint8_t)cp; k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6); b[1] = (uint8_t)(0x80 | (cp & 0x3f)); k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12); b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f)); k = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18); b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f)); b[3] = (uint8_t)(0x80 | (cp & 0x3f)); k = 4;
	}
	return buf_put(out, b, k);
}

/* UTF-16 code units, re-read from the payload, as UTF-8: a surrogate pair
 * is one code point, a lone surrogate U+FFFD. */
static int chars_utf8(struct jfr_in *in, uint32_t n, struct buf *out)
{
	uint32_t hi = 0;
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		int32_t ch;
		if ((rc = jin_short(in, &ch)))
			return rc;
		uint32_t u = (uint32_t)ch & 0xffff;
		if (hi && u >= 0xdc00 && u < 0xe000) {
			rc = put_utf8(out, 0x10000 + ((hi - 0xd800) << 10) + (u - 0xdc00));
			hi = 0;
			continue;
		}
		if (hi)
			rc = put_utf8(out, 0xfffd);
		hi = 0;
		if (!rc && u >= 0xd800 && u < 0xdc00)
			hi = u;
		else if (!rc)
			rc = put_utf8(out, u >= 0xdc00 && u < 0xe000 ? 0xfffd : u);
	}
	if (!rc && hi)
		rc = put_utf8(out, 0xfffd);
	return rc;
}

int jfr_string_utf8(const uint8_t *base, uint64_t end, int compressed, uint8_t enc, uint64_t off,
		    uint32_t n, struct buf *out)
{
	struct htr_err dummy;
	struct jfr_in in = { .base = base, .pos = off, .end = end, .compressed = compressed, .err = &dummy };
	switch (enc) {
	case JFR_ENC_UTF8:
		return buf_put(out, base + off, n);
	case JFR_ENC_LATIN1:
		for (uint32_t i = 0; i < n; i++) {
			int rc = put_utf8(out, base[off + i]);
			if (rc)
				return rc;
		}
		return 0;
	case JFR_ENC_CHARS:
		if (n <= end - off && ascii_chars(&in, n))
			return buf_put(out, base + off, n);
		return chars_utf8(&in, n, out) == -ENOMEM ? -ENOMEM : 0;
	default:
		return 0;
	}
}

/* --- interned strings ------------------------------------------------------ */

static uint64_t str_hash(const char *p, uint32_t len)
{
	return name_hash64(p, len);
}

static int strings_rehash(struct jfr_strings *s, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof *slots);
	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 0; id < s->n; id++) {
		const char *p = s->bytes + s->off[id];
		uint32_t h = (uint32_t)str_hash(p, (uint32_t)strlen(p)) & (nslots - 1);
		while (slots[h])
			h = (h + 1) & (nslots - 1);
		slots[h] = id + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	return 0;
}

/* Strings are kept NUL-terminated; one with a NUL inside is cut there,
 * so that jfr_str's C string is the whole of what is kept. */
int jfr_strings_intern(struct jfr_strings *s, const char *p, uint32_t len, uint32_t *id)
{
	if (!len)
		p = ""; /* an empty scratch buffer has no bytes: p may be NULL */
	const char *nul = memchr(p, 0, len);
	if (nul)
		len = (uint32_t)(nul - p);
	if ((uint64_t)(s->n + 1) * 2 > s->nslots) {
		if (s->n >= UINT32_MAX / 4)
			return -ENOMEM;
		int rc = strings_rehash(s, s->nslots ? s->nslots * 2 : 1024);
		if (rc)
			return rc;
	}
	uint32_t h = (uint32_t)str_hash(p, len) & (s->nslots - 1);
	for (; s->slots[h]; h = (h + 1) & (s->nslots - 1)) {
		const char *q = s->bytes + s->off[s->slots[h] - 1];
		if (strncmp(q, p, len) == 0 && q[len] == 0) {
			*id = s->slots[h] - 1;
			return 0;
		}
	}
	if (s->len + len + 1 > s->cap) {
		uint64_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + len + 1)
			cap *= 2;
		char *b = realloc(s->bytes, cap);
		if (!b)
			return -ENOMEM;
		s->bytes = b;
		s->cap = cap;
	}
	if (s->n == s->cap_n) {
		uint32_t cap = s->cap_n ? s->cap_n * 2 : 1024;
		uint64_t *off = realloc(s->off, (size_t)cap * sizeof *off);
		if (!off)
			return -ENOMEM;
		s->off = off;
		s->cap_n = cap;
	}
	memcpy(s->bytes + s->len, p, len);
	s->bytes[s->len + len] = 0;
	s->off[s->n] = s->len;
	s->len += len + 1;
	s->slots[h] = s->n + 1;
	*id = s->n++;
	return 0;
}

void jfr_strings_free(struct jfr_strings *s)
{
	free(s->bytes);
	free(s->off);
	free(s->slots);
	memset(s, 0, sizeof *s);
}

/* --- maps -------------------------------------------------------------------- */

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 32;
}

static int map_grow(struct jfr_map *m)
{
	struct jfr_map n = { .cap = m->cap ? m->cap * 2 : 256 };
	n.ka = malloc(n.cap * sizeof *n.ka);
	n.kb = malloc(n.cap * sizeof *n.kb);
	n.val = malloc(n.cap * sizeof *n.val);
	n.used = calloc(n.cap, 1);
	if (!n.ka || !n.kb || !n.val || !n.used) {
		jfr_map_free(&n);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < m->cap; i++)
		if (m->used[i])
			(void)jfr_map_put(&n, m->ka[i], m->kb[i], m->val[i]);
	jfr_map_free(m);
	*m = n;
	return 0;
}

int jfr_map_put(struct jfr_map *m, uint64_t a, uint64_t b, uint64_t v)
{
	if ((m->n + 1) * 2 > m->cap) {
		int rc = map_grow(m);
		if (rc)
			return rc;
	}
	uint64_t h = mix(a, b) & (m->cap - 1);
	for (; m->used[h]; h = (h + 1) & (m->cap - 1)) {
		if (m->ka[h] == a && m->kb[h] == b) {
			m->val[h] = v;
			return 0;
		}
	}
	m->used[h] = 1;
	m->ka[h] = a;
	m->kb[h] = b;
	m->val[h] = v;
	m->n++;
	return 0;
}

int jfr_map_get(const struct jfr_map *m, uint64_t a, uint64_t b, uint64_t *v)
{
	if (!m->cap)
		return 0;
	for (uint64_t h = mix(a, b) & (m->cap - 1); m->used[h]; h = (h + 1) & (m->cap - 1)) {
		if (m->ka[h] == a && m->kb[h] == b) {
			*v = m->val[h];
			return 1;
		}
	}
	return 0;
}

void jfr_map_clear(struct jfr_map *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

void jfr_map_free(struct jfr_map *m)
{
	free(m->ka);
	free(m->kb);
	free(m->val);
	free(m->used);
	memset(m, 0, sizeof *m);
}

/* --- tables --------------------------------------------------------------------- */

int jfr_grow(void **cols[], const size_t sizes[], uint32_t ncols, uint64_t *cap, uint64_t need)
{
	if (need <= *cap)
		return 0;
	uint64_t n = *cap ? *cap : 64;
	while (n < need) {
		if (n > (UINT64_MAX / 2) / 16)
			return -ENOMEM;
		n *= 2;
	}
	/* each column is grown on its own: a failure leaves the ones before
	 * it larger, which is harmless, and *cap unchanged */
	for (uint32_t i = 0; i < ncols; i++) {
		void *p = realloc(*cols[i], n * sizes[i]);
		if (!p)
			return -ENOMEM;
		*cols[i] = p;
	}
	*cap = n;
	return 0;
}

/* suid.c - see suid.h. */
#include "agent/suid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"

/* ---- SHA-1 (FIPS 180-4) ------------------------------------------------- */

static uint32_t rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDC;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6;
		}
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void suid_sha1(const uint8_t *data, size_t n, uint8_t md[20])
{
	uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0 };
	size_t full = n / 64 * 64;
	for (size_t i = 0; i < full; i += 64)
		sha1_block(h, data + i);
	uint8_t tail[128] = { 0 };
	size_t rest = n - full, len = rest + 9 <= 64 ? 64 : 128;
	memcpy(tail, data + full, rest);
	tail[rest] = 0x80;
	uint64_t bits = (uint64_t)n * 8;
	for (int i = 0; i < 8; i++)
		tail[len - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (size_t i = 0; i < len; i += 64)
		sha1_block(h, tail + i);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 4; j++)
			md[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

/* ---- the stream Java hashes ------------------------------------------- */

/* A member as Java sorts it: name, then descriptor (both as in the pool). */
struct sig {
	const char *name, *desc;
	uint16_t nl, dl;
	uint16_t access;
};

static int ascii(const char *s, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		if ((uint8_t)s[i] >= 0x80)
			return 0;
	return 1;
}

static int cmp_str(const char *a, uint16_t an, const char *b, uint16_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	return c ? c : (an > bn) - (an < bn);
}

static int sig_cmp(const void *x, const void *y)
{
	const struct sig *a = x, *b = y;
	int c = cmp_str(a->name, a->nl, b->name, b->nl);
	return c ? c : cmp_str(a->desc, a->dl, b->desc, b->dl);
}

static int sig_cmp_name(const void *x, const void *y)
{
	const struct sig *a = x, *b = y;
	return cmp_str(a->name, a->nl, b->name, b->nl);
}

/* DataOutputStream.writeUTF of a modified UTF-8 string (the pool's), '/'
 * turned into '.' when dots. */
static int w_utf(struct buf *b, const char *s, uint16_t n, int dots)
{
	uint8_t len[2] = { (uint8_t)(n >> 8), (uint8_t)n };
	if (buf_put(b, len, 2))
		return -ENOMEM;
	for (uint16_t i = 0; i < n; i++) {
		uint8_t ch = (uint8_t)(dots && s[i] == '/' ? '.' : s[i]);
		if (buf_put(b, &ch, 1))
			return -ENOMEM;
	}
	return 0;
}

static int w_int(struct buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	return buf_put(b, x, 4) ? -ENOMEM : 0;
}

/* Class.getModifiers(): a member class's flags from its InnerClasses
 * entry, otherwise the class's own. */
static uint16_t class_modifiers(const struct cf_class *c)
{
	for (uint32_t a = 0; a < c->nattrs; a++) {
		const struct cf_attr *at = &c->attrs[a];
		if (!cf_utf8_eq(c, at->name, "InnerClasses") || at->len < 2)
			continue;
		uint32_t n = (uint32_t)at->data[0] << 8 | at->data[1];
		for (uint32_t i = 0; i < n && 2 + 8 * (i + 1) <= at->len; i++) {
			const uint8_t *e = at->data + 2 + 8 * i;
			if ((uint16_t)(e[0] << 8 | e[1]) == c->this_class)
				return (uint16_t)(e[6] << 8 | e[7]);
		}
	}
	return c->access;
}

/* The members (fields, or methods named so or not) as sigs; -ENOTSUP
 * beyond ASCII. */
static int collect(const struct cf_class *c, const struct cf_member *m, uint32_t n, int want_init, int methods,
		   struct sig *out, uint32_t *count)
{
	*count = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct sig s;
		s.name = cf_utf8(c, m[i].name, &s.nl);
		s.desc = cf_utf8(c, m[i].desc, &s.dl);
		s.access = m[i].access;
		if (!s.name || !s.desc)
			return -EINVAL;
		if (!ascii(s.name, s.nl) || !ascii(s.desc, s.dl))
			return -ENOTSUP;
		int init = s.nl == 6 && !memcmp(s.name, "<init>", 6);
		int clinit = s.nl == 8 && !memcmp(s.name, "<clinit>", 8);
		if (methods && (clinit || init != want_init))
			continue;
		out[(*count)++] = s;
	}
	return 0;
}

/* The bytes ObjectStreamClass.computeDefaultSUID hashes. */
static int suid_stream(const struct cf_class *c, struct buf *b, struct sig *tmp)
{
	enum { PUB = 0x1, PRIV = 0x2, PROT = 0x4, STAT = 0x8, FIN = 0x10, SYNC = 0x20, VOL = 0x40, TRANS = 0x80,
	       NAT = 0x100, INTF = 0x200, ABS = 0x400, STRICT = 0x800 };
	uint16_t nl;
	const char *name = cf_utf8(c, cf_class_name(c, c->this_class), &nl);
	if (!name)
		return -EINVAL;
	if (!ascii(name, nl))
		return -ENOTSUP;
	int rc = w_utf(b, name, nl, 1);
	uint32_t mods = class_modifiers(c) & (PUB | FIN | INTF | ABS), n = 0, nm = 0;
	if (mods & INTF) {
		for (uint32_t i = 0; i < c->nmethods; i++)
			nm += !cf_utf8_eq(c, c->methods[i].name, "<init>") && !cf_utf8_eq(c, c->methods[i].name, "<clinit>");
		mods = nm ? mods | ABS : mods & ~(uint32_t)ABS;
	}
	if (rc || (rc = w_int(b, mods)))
		return rc;
	for (uint32_t i = 0; i < c->ninterfaces; i++) { /* interface names, sorted */
		struct sig *s = &tmp[n++];
		s->name = cf_utf8(c, cf_class_name(c, c->interfaces[i]), &s->nl);
		s->desc = "";
		s->dl = 0;
		if (!s->name)
			return -EINVAL;
		if (!ascii(s->name, s->nl))
			return -ENOTSUP;
	}
	qsort(tmp, n, sizeof(*tmp), sig_cmp);
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = w_utf(b, tmp[i].name, tmp[i].nl, 1);
	/* fields by name: all but private static and private transient ones */
	if (rc || (rc = collect(c, c->fields, c->nfields, 0, 0, tmp, &n)))
		return rc;
	qsort(tmp, n, sizeof(*tmp), sig_cmp_name);
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t fm = tmp[i].access & (PUB | PRIV | PROT | STAT | FIN | VOL | TRANS);
		if (!(fm & PRIV) || !(fm & (STAT | TRANS)))
			rc = w_utf(b, tmp[i].name, tmp[i].nl, 0) || w_int(b, fm) || w_utf(b, tmp[i].desc, tmp[i].dl, 0)
				     ? -ENOMEM
				     : 0;
	}
	for (uint32_t i = 0; i < c->nmethods && !rc; i++)
		if (cf_utf8_eq(c, c->methods[i].name, "<clinit>")) {
			rc = w_utf(b, "<clinit>", 8, 0) || w_int(b, STAT) || w_utf(b, "()V", 3, 0) ? -ENOMEM : 0;
			break;
		}
	/* non-private constructors, then methods, by name and descriptor */
	const uint32_t mmask = PUB | PRIV | PROT | STAT | FIN | SYNC | NAT | ABS | STRICT;
	for (int init = 1; init >= 0 && !rc; init--) {
		if ((rc = collect(c, c->methods, c->nmethods, init, 1, tmp, &n)))
			return rc;
		qsort(tmp, n, sizeof(*tmp), sig_cmp);
		for (uint32_t i = 0; i < n && !rc; i++) {
			uint32_t mm = tmp[i].access & mmask;
			if (!(mm & PRIV))
				rc = w_utf(b, tmp[i].name, tmp[i].nl, 0) || w_int(b, mm) ||
						     w_utf(b, tmp[i].desc, tmp[i].dl, 1)
					     ? -ENOMEM
					     : 0;
		}
	}
	return rc;
}

int suid_default(const struct cf_class *c, int64_t *out)
{
	uint32_t most = c->nmethods > c->nfields ? c->nmethods : c->nfields;
	if (c->ninterfaces > most)
		most = c->ninterfaces;
	struct sig *tmp = malloc((most + 1) * sizeof(*tmp));
	struct buf b;
	buf_init(&b);
	int rc = tmp ? suid_stream(c, &b, tmp) : -ENOMEM;
	if (!rc) {
		uint8_t md[20];
		suid_sha1(b.data, b.len, md);
		uint64_t h = 0;
		for (int i = 7; i >= 0; i--)
			h = h << 8 | md[i];
		*out = (int64_t)h;
	}
	buf_free(&b);
	free(tmp);
	return rc;
}

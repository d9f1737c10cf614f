/* profile.c - reads and writes mode=count's profile files (profile.h). */
#include "agent/profile.h"
#include "model/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void entry_free(struct profile_entry *e)
{
	free(e->key);
	free(e->freq);
	free(e);
}

static struct profile_link *find_link(const struct profile *p, const char *key, size_t keylen)
{
	struct profile_link *l = NULL;
	HASH_FIND(hh, p->links, key, keylen, l);
	return l;
}

static void drop_link(struct profile *p, struct profile_link *l)
{
	HASH_DEL(p->links, l);
	free(l->key);
	free(l);
	p->nlinks--;
}

void profile_free(struct profile *p)
{
	struct profile_entry *e, *tmp;
	HASH_ITER(hh, p->by_key, e, tmp) {
		HASH_DEL(p->by_key, e);
		entry_free(e);
	}
	struct profile_link *l, *ltmp;
	HASH_ITER(hh, p->links, l, ltmp)
		drop_link(p, l);
	p->n = 0;
	p->nlinks = 0;
	p->changed = 0;
}

/* Whether a name can be a field of a line: not empty, no TAB, no line
 * break, no NUL. */
static int field_ok(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == 0)
			return 0;
	return 1;
}

char *profile_key(const char *cls, size_t cl, const char *name, size_t nl, const char *desc, size_t dl,
		  size_t *keylen)
{
	char *key = malloc((*keylen = cl + 1 + nl + 1 + dl) + 1);
	if (!key)
		return NULL;
	memcpy(key, cls, cl);
	key[cl] = 0;
	memcpy(key + cl + 1, name, nl);
	key[cl + 1 + nl] = 0;
	memcpy(key + cl + 2 + nl, desc, dl);
	key[*keylen] = 0;
	return key;
}

/* An owned, NUL-terminated copy of a key. */
static char *key_dup(const char *key, size_t keylen)
{
	char *k = malloc(keylen + 1);
	if (k) {
		memcpy(k, key, keylen);
		k[keylen] = 0;
	}
	return k;
}

/* Whether key is "class \0 method \0 descriptor", each a valid field. */
static int key_ok(const char *key, size_t keylen)
{
	size_t part = 0, start = 0;
	for (size_t i = 0; i <= keylen; i++) {
		if (i < keylen && key[i])
			continue;
		if (part++ == 3 || !field_ok(key + start, i - start))
			return 0;
		start = i + 1;
	}
	return part == 3;
}

static int put_entry(struct profile *p, char *key, size_t keylen, uint64_t hash, uint32_t nblocks,
		     uint32_t nnormal, double *freq)
{
	struct profile_entry *e = calloc(1, sizeof(*e)), *old = NULL;
	if (!e)
		return -ENOMEM;
	e->key = key;
	e->keylen = keylen;
	e->hash = hash;
	e->nblocks = nblocks;
	e->nnormal = nnormal;
	e->sites = freq == NULL;
	e->freq = freq;
	HASH_FIND(hh, p->by_key, key, keylen, old);
	if (old) {
		HASH_DEL(p->by_key, old);
		entry_free(old);
		p->n--;
	}
	HASH_ADD_KEYPTR(hh, p->by_key, e->key, e->keylen, e);
	p->n++;
	return 0;
}

int profile_put(struct profile *p, const char *key, size_t keylen, uint64_t hash, uint32_t nblocks,
		uint32_t nnormal, const double *freq)
{
	if (!key_ok(key, keylen) || !nblocks || nblocks > PROFILE_MAX_BLOCKS || nnormal > PROFILE_MAX_EDGES)
		return -EINVAL;
	size_t nf = nnormal + 2 * (size_t)nblocks;
	char *k = key_dup(key, keylen);
	double *f = freq ? malloc((nf + 1) * sizeof(*f)) : NULL;
	if (!k || (freq && !f)) {
		free(k);
		free(f);
		return -ENOMEM;
	}
	if (freq)
		memcpy(f, freq, nf * sizeof(*f));
	int rc = put_entry(p, k, keylen, hash, nblocks, nnormal, f);
	if (rc) {
		free(k);
		free(f);
		return rc;
	}
	p->changed++;
	return 0;
}

const double *profile_plan(const struct profile *p, const char *key, size_t keylen, uint64_t hash,
			   uint32_t nblocks, uint32_t nnormal, int *sites)
{
	struct profile_entry *e = NULL;
	HASH_FIND(hh, p->by_key, key, keylen, e);
	if (!e || e->hash != hash || e->nblocks != nblocks || e->nnormal != nnormal)
		return NULL;
	if (e->sites)
		*sites = 1;
	return e->freq;
}

int profile_linked(const struct profile *p, const char *key, size_t keylen)
{
	return find_link(p, key, keylen) != NULL;
}

/* Adds key (taken over: freed when it was there already).  1, 0, or
 * -ENOMEM (key freed). */
static int add_link(struct profile *p, char *key, size_t keylen)
{
	struct profile_link *l = find_link(p, key, keylen);
	if (l) {
		free(key);
		return 0;
	}
	if (!(l = calloc(1, sizeof(*l)))) {
		free(key);
		return -ENOMEM;
	}
	l->key = key;
	l->keylen = keylen;
	HASH_ADD_KEYPTR(hh, p->links, l->key, l->keylen, l);
	p->nlinks++;
	return 1;
}

int profile_link(struct profile *p, const char *key, size_t keylen, int drop)
{
	if (!key_ok(key, keylen))
		return -EINVAL;
	if (drop) {
		struct profile_link *l = find_link(p, key, keylen);
		if (!l)
			return 0;
		drop_link(p, l);
		p->changed++;
		return 1;
	}
	char *k = key_dup(key, keylen);
	if (!k)
		return -ENOMEM;
	int rc = add_link(p, k, keylen);
	p->changed += rc > 0;
	return rc;
}

/* ---- parsing ------------------------------------------------------------ */

struct line {
	const char *s;
	size_t n;
	unsigned long no;
};

/* The next TAB-separated field of l (advanced past it); 0 at the end. */
static int next_field(struct line *l, const char **f, size_t *n)
{
	if (!l->s)
		return 0;
	const char *tab = memchr(l->s, '\t', l->n);
	*f = l->s;
	*n = tab ? (size_t)(tab - l->s) : l->n;
	if (tab) {
		l->n -= *n + 1;
		l->s = tab + 1;
	} else {
		l->s = NULL;
	}
	return 1;
}

/* An unsigned decimal of at most max, the whole field. */
static int parse_u64(const char *f, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!n || n > 20)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (f[i] < '0' || f[i] > '9')
			return 0;
		unsigned d = (unsigned)(f[i] - '0');
		if (v > (max - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = v;
	return 1;
}

static int parse_hash(const char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n != 16)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = f[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
		if (d == 16)
			return 0;
		v = v << 4 | d;
	}
	*out = v;
	return 1;
}

/* FREQS: exactly nf comma-separated counts (below 2^53: exact doubles). */
static int parse_freqs(const char *f, size_t n, size_t nf, double *out)
{
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && f[i] != ',')
			continue;
		uint64_t v;
		if (k == nf || !parse_u64(f + start, i - start, (1ull << 53), &v))
			return 0;
		out[k++] = (double)v;
		start = i + 1;
	}
	return k == nf;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); rc = -EINVAL; goto out; } while (0)

/* The lookup key of a line's fields CLASS, METHOD, DESCRIPTOR. */
static char *fields_key(const char *const *f, const size_t *n, size_t *keylen)
{
	return profile_key(f[0], n[0], f[1], n[1], f[2], n[2], keylen);
}

/* A clone link line: CLASS METHOD DESCRIPTOR clone. */
static int parse_link(struct profile *p, const char **f, const size_t *n, unsigned long no, char *err,
		      size_t errlen)
{
	int rc = 0;
	for (int i = 0; i < 3; i++)
		if (!field_ok(f[i], n[i]))
			FAIL("line %lu: an empty class, method or descriptor", no);
	if (n[3] != 5 || memcmp(f[3], "clone", 5))
		FAIL("line %lu: 4 fields, but the last is not 'clone'", no);
	size_t keylen;
	char *key = fields_key(f, n, &keylen);
	if (!key)
		return -ENOMEM;
	rc = add_link(p, key, keylen);
	if (rc == 0)
		FAIL("line %lu: the clone link is listed twice", no);
	return rc < 0 ? rc : 0;
out:
	return rc;
}

static int parse_line(struct profile *p, struct line l, int version, char *err, size_t errlen)
{
	const char *f[8];
	size_t n[8];
	int nfields = 0, rc = 0;
	char *key = NULL;
	double *freq = NULL;
	while (nfields < 8 && next_field(&l, &f[nfields], &n[nfields]))
		nfields++;
	if (nfields == 4 && !l.s && version >= 2)
		return parse_link(p, f, n, l.no, err, errlen);
	if (nfields < 8 || l.s)
		FAIL("line %lu: %d fields, not 8 separated by TABs", l.no, nfields + (l.s != NULL));
	for (int i = 0; i < 3; i++)
		if (!field_ok(f[i], n[i]))
			FAIL("line %lu: an empty class, method or descriptor", l.no);
	uint64_t hash, nb, ne;
	if (!parse_hash(f[3], n[3], &hash))
		FAIL("line %lu: the code hash is not 16 lower-case hex digits", l.no);
	if (!parse_u64(f[4], n[4], PROFILE_MAX_BLOCKS, &nb) || !nb)
		FAIL("line %lu: blocks not a number in 1..%u", l.no, PROFILE_MAX_BLOCKS);
	if (!parse_u64(f[5], n[5], PROFILE_MAX_EDGES, &ne))
		FAIL("line %lu: edges not a number in 0..%u", l.no, PROFILE_MAX_EDGES);
	int sites = n[6] == 5 && !memcmp(f[6], "sites", 5);
	if (!sites && !(n[6] == 5 && !memcmp(f[6], "paths", 5)))
		FAIL("line %lu: the plan is neither 'paths' nor 'sites'", l.no);
	size_t keylen, nf = ne + 2 * nb;
	if (!(key = fields_key(f, n, &keylen)) || (!sites && !(freq = malloc((nf + 1) * sizeof(*freq))))) {
		rc = -ENOMEM;
		goto out;
	}
	if (sites ? n[7] != 1 || f[7][0] != '-' : !parse_freqs(f[7], n[7], nf, freq))
		FAIL("line %lu: %s", l.no, sites ? "a 'sites' plan has '-' for frequencies"
					      : "frequencies are not blocks x 2 + edges counts separated by commas");
	struct profile_entry *dup = NULL;
	HASH_FIND(hh, p->by_key, key, keylen, dup);
	if (dup)
		FAIL("line %lu: the method is listed twice", l.no);
	if ((rc = put_entry(p, key, keylen, hash, (uint32_t)nb, (uint32_t)ne, freq)))
		goto out;
	return 0;
out:
	free(key);
	free(freq);
	return rc;
}

int profile_parse(struct profile *p, const char *text, size_t len, char *err, size_t errlen)
{
	struct line l = { 0 };
	size_t at = 0;
	int rc = 0, version = 0;
	if (err && errlen)
		err[0] = 0;
	while (at < len && !rc) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		l = (struct line){ text + at, n, l.no + 1 };
		at += n + 1;
		if (n && l.s[n - 1] == '\r')
			l.n--;
		if (l.no == 1) {
			version = l.n == strlen(PROFILE_HEADER) && !memcmp(l.s, PROFILE_HEADER, l.n)	      ? 2
				: l.n == strlen(PROFILE_HEADER_V1) && !memcmp(l.s, PROFILE_HEADER_V1, l.n) ? 1
													  : 0;
			if (!version) {
				snprintf(err, errlen,
					 "line 1: not a heapfs-agent profile (its first line is '%s', or '%s')",
					 PROFILE_HEADER, PROFILE_HEADER_V1);
				return -EINVAL;
			}
		}
		if (memchr(l.s, 0, l.n)) {
			snprintf(err, errlen, "line %lu: a NUL byte", l.no);
			return -EINVAL;
		}
		if (l.n && l.s[0] != '#')
			rc = parse_line(p, l, version, err, errlen);
	}
	if (!rc && !len) {
		snprintf(err, errlen, "line 1: empty file, not a heapfs-agent profile");
		rc = -EINVAL;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

int profile_load(struct profile *p, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		return -e;
	}
	struct buf text;
	buf_init(&text);
	int rc = 0;
	for (;;) {
		if ((rc = buf_reserve(&text, 65536))) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		errno = 0;
		size_t got = fread(text.data + text.len, 1, text.cap - text.len, f);
		text.len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) { /* a directory, an I/O error */
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s", strerror(-rc));
		goto out;
	}
	rc = profile_parse(p, (const char *)text.data, text.len, err, errlen);
	p->changed = 0;
out:
	buf_free(&text);
	fclose(f);
	return rc;
}

/* ---- writing ------------------------------------------------------------ */

/* Keys in byte order, a prefix first, so that a saved profile is stable. */
static int compare_keys(const char *x, size_t xlen, const char *y, size_t ylen)
{
	int c = memcmp(x, y, xlen < ylen ? xlen : ylen);
	return c ? c : (xlen > ylen) - (xlen < ylen);
}

static int by_key(const void *a, const void *b)
{
	const struct profile_entry *x = *(const struct profile_entry *const *)a;
	const struct profile_entry *y = *(const struct profile_entry *const *)b;
	return compare_keys(x->key, x->keylen, y->key, y->keylen);
}

static int link_by_key(const void *a, const void *b)
{
	const struct profile_link *x = *(const struct profile_link *const *)a;
	const struct profile_link *y = *(const struct profile_link *const *)b;
	return compare_keys(x->key, x->keylen, y->key, y->keylen);
}

static void write_key(FILE *f, const char *key, size_t keylen)
{
	for (size_t i = 0; i < keylen; i++)
		fputc(key[i] ? key[i] : '\t', f);
}

static void write_entry(FILE *f, const struct profile_entry *e)
{
	write_key(f, e->key, e->keylen);
	fprintf(f, "\t%016llx\t%u\t%u\t%s\t", (unsigned long long)e->hash, e->nblocks, e->nnormal,
		e->sites ? "sites" : "paths");
	if (e->sites)
		fputc('-', f);
	size_t nf = e->sites ? 0 : e->nnormal + 2 * (size_t)e->nblocks;
	for (size_t i = 0; i < nf; i++) {
		double v = e->freq[i];
		/* solved flows are sums and differences of counts: integers,
		 * unless racing threads lost increments */
		v = v < 0 || v != v ? 0 : v > 9007199254740992.0 ? 9007199254740992.0 : v + 0.5;
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)v);
	}
	fputc('\n', f);
}

int profile_save(const struct profile *p, const char *path)
{
	struct profile_entry **v = malloc(((size_t)p->n + 1) * sizeof(*v)), *e, *tmp;
	struct profile_link **lv = malloc(((size_t)p->nlinks + 1) * sizeof(*lv)), *l, *ltmp;
	size_t plen = strlen(path);
	char *tmpath = malloc(plen + 5);
	FILE *f = NULL;
	int rc = 0;
	if (!v || !lv || !tmpath) {
		rc = -ENOMEM;
		goto out;
	}
	size_t n = 0, nl = 0;
	HASH_ITER(hh, p->by_key, e, tmp)
		v[n++] = e;
	qsort(v, n, sizeof(*v), by_key);
	HASH_ITER(hh, p->links, l, ltmp)
		lv[nl++] = l;
	qsort(lv, nl, sizeof(*lv), link_by_key);
	memcpy(tmpath, path, plen);
	memcpy(tmpath + plen, ".tmp", 5);
	if (!(f = fopen(tmpath, "w"))) {
		rc = -errno;
		goto out;
	}
	fprintf(f, "%s\n# class\tmethod\tdescriptor\tcode hash\tblocks\tedges\tplan\tfrequencies"
		   " (agent/profile.h)\n", PROFILE_HEADER);
	for (size_t i = 0; i < n; i++)
		write_entry(f, v[i]);
	if (nl)
		fprintf(f, "# class\tmethod\tdescriptor\tclone: callers linked to its clone at once\n");
	for (size_t i = 0; i < nl; i++) {
		write_key(f, lv[i]->key, lv[i]->keylen);
		fputs("\tclone\n", f);
	}
	errno = 0;
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		rc = errno ? -errno : -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	f = NULL;
	if (!rc && rename(tmpath, path))
		rc = -errno;
	if (rc)
		unlink(tmpath);
out:
	free(v);
	free(lv);
	free(tmpath);
	return rc;
}

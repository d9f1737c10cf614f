/* names.c - see names.h for the escaping rule. */
#include "model/names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Whole names the tree uses for its own files and directories, in group
 * nodes, classification nodes and object directories (now or in planned
 * issues).  A type named "count" must not hide the file count. */
static const char *const reserved_names[] = {
	"count", "shallow_size", "deep_count", "deep_size", "retained_count",
	"retained_size", "summary", "objects", "table", "info", "roots", "refs",
	"referrers", "closure", "points-to", "pointed-from", "stack", "latest",
	"dominator", "path-to-root", "README", "status", "diff", "ds", "all",
};
/* Prefixes reserved for families of entries: classifiers, filters, table
 * formats, born/died/perm metrics of diff nodes. */
static const char *const reserved_prefixes[] = {
	"by-", "only-", "table.", "born_", "died_", "perm_",
};

#define SHORT_HASH_LEN 18 /* "%~" + 16 hex digits */
#define SHORT_KEEP (NAME_MAX_BYTES - SHORT_HASH_LEN)

uint64_t name_hash64(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int name_is_reserved(const char *raw, size_t len)
{
	if ((len == 1 && raw[0] == '.') || (len == 2 && raw[0] == '.' && raw[1] == '.'))
		return 1;
	for (size_t i = 0; i < sizeof reserved_names / sizeof *reserved_names; i++) {
		if (strlen(reserved_names[i]) == len && memcmp(reserved_names[i], raw, len) == 0)
			return 1;
	}
	for (size_t i = 0; i < sizeof reserved_prefixes / sizeof *reserved_prefixes; i++) {
		size_t pl = strlen(reserved_prefixes[i]);
		if (len >= pl && memcmp(reserved_prefixes[i], raw, pl) == 0)
			return 1;
	}
	return 0;
}

static int needs_escape(unsigned char c)
{
	return c == '%' || c == '/' || c < 0x20 || c == 0x7f;
}

static size_t token_len(const char *raw, size_t i, int escape_first)
{
	return (needs_escape((unsigned char)raw[i]) || (i == 0 && escape_first)) ? 3 : 1;
}

static void put_token(char *out, size_t *pos, unsigned char c, int esc)
{
	static const char hex[] = "0123456789ABCDEF";
	if (!esc) {
		out[(*pos)++] = (char)c;
		return;
	}
	out[(*pos)++] = '%';
	out[(*pos)++] = hex[c >> 4];
	out[(*pos)++] = hex[c & 15];
}

static int is_utf8_continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t name_escape(const char *raw, size_t len, char out[NAME_BUF])
{
	if (len == 0) {
		strcpy(out, "%");
		return 1;
	}
	int escape_first = name_is_reserved(raw, len);
	size_t total = 0;
	for (size_t i = 0; i < len; i++)
		total += token_len(raw, i, escape_first);
	size_t limit = total <= NAME_MAX_BYTES ? NAME_MAX_BYTES : SHORT_KEEP;
	size_t pos = 0, safe = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)raw[i];
		size_t tl = token_len(raw, i, escape_first);
		/* A cut is allowed before any token that does not continue a
		 * UTF-8 character written raw. */
		if (tl == 3 || !is_utf8_continuation(c))
			safe = pos;
		if (pos + tl > limit)
			break;
		put_token(out, &pos, c, tl == 3);
	}
	if (total > NAME_MAX_BYTES) {
		/* Shortened: cut at the last safe boundary, then the hash. */
		pos = safe;
		pos += (size_t)snprintf(out + pos, NAME_BUF - pos, "%%~%016llx",
					(unsigned long long)name_hash64(raw, len));
	}
	out[pos] = '\0';
	return pos;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int name_unescape(const char *name, char *out, size_t cap)
{
	size_t n = 0;
	if (strcmp(name, "%") == 0)
		goto done;
	for (size_t i = 0; name[i];) {
		char c = name[i];
		if (c == '/')
			return -EINVAL;
		if (c != '%') {
			if (n + 1 >= cap)
				return -ENOSPC;
			out[n++] = c;
			i++;
			continue;
		}
		if (name[i + 1] == '~')
			return -ENAMETOOLONG;
		if (name[i + 1] == '#')
			break; /* disambiguation suffix: not part of the name */
		int hi = hexval(name[i + 1]);
		int lo = hi < 0 ? -1 : hexval(name[i + 2]);
		if (lo < 0)
			return -EINVAL;
		if (n + 1 >= cap)
			return -ENOSPC;
		out[n++] = (char)(hi << 4 | lo);
		i += 3;
	}
done:
	if (n >= cap)
		return -ENOSPC;
	out[n] = '\0';
	return (int)n;
}

size_t name_add_suffix(char name[NAME_BUF], uint32_t n)
{
	char suffix[16];
	int sl = snprintf(suffix, sizeof suffix, "%%#%u", n);
	size_t len = strlen(name);
	if (len + (size_t)sl > NAME_MAX_BYTES) {
		/* Cut back to a boundary that is neither inside a %XX token nor
		 * inside a UTF-8 character. */
		size_t want = NAME_MAX_BYTES - (size_t)sl, pos = 0, safe = 0;
		while (pos < len) {
			size_t tl = name[pos] == '%' ? 3 : 1;
			if (tl == 3 || !is_utf8_continuation((unsigned char)name[pos]))
				safe = pos;
			if (pos + tl > want)
				break;
			pos += tl;
		}
		len = safe;
	}
	memcpy(name + len, suffix, (size_t)sl + 1);
	return len + (size_t)sl;
}

/* features.c - see features.h */
#include "features.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"
#include "model/files.h"

int glob_match(const char *pat, const char *s, size_t len)
{
	/* Iterative with one backtrack point: the last '*' seen. */
	size_t si = 0, star_si = 0;
	const char *star = NULL;
	while (si < len) {
		if (*pat == '*') {
			star = pat++;
			star_si = si;
		} else if (*pat && (*pat == '?' || *pat == s[si])) {
			pat++;
			si++;
		} else if (star) {
			pat = star + 1;
			si = ++star_si;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

void feature_map_free(struct feature_map *fm)
{
	for (uint32_t i = 0; i < fm->nnames; i++)
		free(fm->names[i]);
	for (uint32_t i = 0; i < fm->npats; i++)
		free(fm->pats[i].glob);
	free(fm->names);
	free(fm->pats);
	memset(fm, 0, sizeof *fm);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static uint32_t feature_index(struct feature_map *fm, const char *w, size_t n)
{
	for (uint32_t i = 0; i < fm->nnames; i++) {
		if (strlen(fm->names[i]) == n && memcmp(fm->names[i], w, n) == 0)
			return i;
	}
	char **p = realloc(fm->names, (fm->nnames + 1) * sizeof *p);
	if (!p)
		return UINT32_MAX;
	fm->names = p;
	if (!(p[fm->nnames] = strndup(w, n)))
		return UINT32_MAX;
	return fm->nnames++;
}

static int add_pattern(struct feature_map *fm, uint32_t f, const char *w, size_t n)
{
	struct feature_pattern *p = realloc(fm->pats, (fm->npats + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	fm->pats = p;
	p[fm->npats].feature = f;
	if (!(p[fm->npats].glob = strndup(w, n)))
		return -ENOMEM;
	p[fm->npats].with_line = memchr(w, ':', n) != NULL;
	fm->npats++;
	return 0;
}

/* One line: FEATURE PATTERN... ; returns 0, -EINVAL (err set), -ENOMEM. */
static int parse_line(struct feature_map *fm, const char *l, size_t n, uint32_t lineno, char *err,
		      size_t errlen)
{
	size_t i = 0, words = 0;
	uint32_t f = 0;
	while (i < n) {
		while (i < n && is_blank(l[i]))
			i++;
		if (i == n || l[i] == '#')
			break;
		size_t s = i;
		while (i < n && !is_blank(l[i]) && l[i] != '#')
			i++;
		if (words == 0) {
			if ((f = feature_index(fm, l + s, i - s)) == UINT32_MAX)
				return -ENOMEM;
		} else if (add_pattern(fm, f, l + s, i - s)) {
			return -ENOMEM;
		}
		words++;
	}
	/* the message never quotes the line: the file may be anything the
	 * user could read (-o features=/etc/shadow), and stderr may go
	 * elsewhere */
	if (words == 1) {
		snprintf(err, errlen, "line %u, column %zu: a feature without a pattern "
			 "(expected FEATURE PATTERN...)", lineno, n + 1);
		return -EINVAL;
	}
	return 0;
}

int feature_map_parse(const char *text, size_t len, struct feature_map *fm, char *err,
		      size_t errlen)
{
	memset(fm, 0, sizeof *fm);
	uint32_t lineno = 1;
	size_t i = 0;
	int rc = 0;
	while (i < len && !rc) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		for (size_t k = i; k < e && !rc; k++) {
			if (text[k] == '\0') {
				snprintf(err, errlen, "line %u, column %zu: NUL byte", lineno, k - i + 1);
				rc = -EINVAL;
			}
		}
		if (!rc)
			rc = parse_line(fm, text + i, e - i, lineno, err, errlen);
		i = e + 1;
		lineno++;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc)
		feature_map_free(fm);
	return rc;
}

int feature_map_load(const char *path, struct feature_map *fm, char *err, size_t errlen)
{
	struct buf text;
	char msg[400];
	buf_init(&text);
	memset(fm, 0, sizeof *fm);
	int rc = file_read_capped(path, FILES_OPTION_MAX, &text, msg, sizeof msg);
	if (rc == -EINVAL || rc == -EISDIR)
		snprintf(err, errlen, "%s, not a regular file", msg);
	else if (rc)
		snprintf(err, errlen, "%s", msg);
	else
		rc = feature_map_parse((const char *)text.data, text.len, fm, err, errlen);
	buf_free(&text);
	return rc;
}

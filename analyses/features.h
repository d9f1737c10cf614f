/* features.h - the feature map of `-o features=FILE` (classification
 * paper §3.3.2): feature name -> code patterns.
 *
 * File format (also in README.md):
 *   # comment                      (also after the patterns on a line)
 *   FEATURE  PATTERN [PATTERN...]   one or more lines per feature
 * FEATURE is any word without blanks; PATTERN is a glob ('*' any run of
 * characters, '?' one character) matched against "Class.method" of a frame
 * (e.g. example.multicache.Loader.*), or against "Class.method:line" when
 * the pattern holds a ':'.  An object belongs to every feature one of whose
 * patterns matches some frame of its allocation site (the allocating method
 * or any caller).
 *
 * Ownership: struct feature_map owns its strings; feature_map_free.
 */
#ifndef HEAPFS_ANALYSES_FEATURES_H
#define HEAPFS_ANALYSES_FEATURES_H

#include <stddef.h>
#include <stdint.h>

struct feature_pattern {
	uint32_t feature;   /* index into names */
	char *glob;         /* owned */
	int with_line;      /* matches "Class.method:line" */
};

struct feature_map {
	char **names; uint32_t nnames;
	struct feature_pattern *pats; uint32_t npats;
};

/* Parses text; on error returns -EINVAL with "line L, column C: what" in
 * err. */
int feature_map_parse(const char *text, size_t len, struct feature_map *fm, char *err,
		      size_t errlen);
/* Reads and parses a file: a regular file of at most FILES_OPTION_MAX
 * bytes (model/files.h).  On error err says what without the file's name
 * ("line L, column C: what", "is a FIFO, not a regular file"), never
 * quoting the file's text; the caller names the option and the file. */
int feature_map_load(const char *path, struct feature_map *fm, char *err, size_t errlen);
void feature_map_free(struct feature_map *fm);

/* Glob match of the whole string s[0..len). */
int glob_match(const char *pat, const char *s, size_t len);

#endif

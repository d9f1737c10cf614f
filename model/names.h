/* names.h - turning names of types, sites, threads into file names and back.
 *
 * The rule (also written in the generated README):
 *   - the bytes '%', '/', NUL, the control bytes 0x01-0x1F and 0x7F are
 *     written as %XX (two upper-case hex digits);
 *   - a name equal to ".", "..", or a reserved file name (count, summary,
 *     objects, table, by-*, only-*, ... see name_is_reserved) gets its first
 *     byte written as %XX: "count" -> "%63ount";
 *   - the empty name is written "%";
 *   - a result longer than 255 bytes is cut (never inside a %XX or a UTF-8
 *     character) and ends in "%~" and 16 hex digits of a hash of the whole
 *     name;
 *   - two different things with the same name (two classes of one name from
 *     different class loaders) are told apart by a suffix "%#N" (N = 2, 3,
 *     ...) on the later ones (done by the caller with name_add_suffix).
 * Escaping is a function of the name alone, so one type has one file name at
 * every GC.  Unescaping a name that was not shortened gives the name back.
 *
 * It lives in model/, the lowest layer, because both analyses/ (a
 * classifier's key space names its children) and fs/ apply it, and
 * dependencies only run down.
 *
 * All functions are pure and thread-safe.
 */
#ifndef HEAPFS_MODEL_NAMES_H
#define HEAPFS_MODEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NAME_MAX_BYTES 255
#define NAME_BUF (NAME_MAX_BYTES + 1)

/* Writes the file name for raw[0..len) into out (NUL-terminated, at most
 * NAME_MAX_BYTES bytes).  Returns its length. */
size_t name_escape(const char *raw, size_t len, char out[NAME_BUF]);

/* Decodes a file name into out (cap bytes, NUL-terminated when it fits).
 * Returns the decoded length, -EINVAL for a name that is not a valid
 * escaped name, -ENAMETOOLONG for a shortened name (the rest is lost), or
 * -ENOSPC when out is too small.  A "%#N" suffix is dropped. */
int name_unescape(const char *name, char *out, size_t cap);

/* 1 if a raw name would clash with a file name the tree itself uses. */
int name_is_reserved(const char *raw, size_t len);

/* Appends "%#N" to an escaped name, shortening it first if needed so the
 * result stays within NAME_MAX_BYTES.  Returns the new length. */
size_t name_add_suffix(char name[NAME_BUF], uint32_t n);

/* 64-bit FNV-1a. */
uint64_t name_hash64(const void *p, size_t n);

#endif

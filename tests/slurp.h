/* slurp.h - a whole file into memory, for the tests and benches that read
 * class files.  Header-only. */
#ifndef HEAPFS_TESTS_SLURP_H
#define HEAPFS_TESTS_SLURP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* path's bytes (the caller frees) and their number in *n; NULL when the
 * file cannot be read or memory runs out. */
static inline uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	uint8_t *p = NULL;
	if (fstat(fileno(f), &st) == 0 && (p = malloc((size_t)st.st_size + 1)))
		*n = fread(p, 1, (size_t)st.st_size, f);
	if (p && *n != (size_t)st.st_size) {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

#endif

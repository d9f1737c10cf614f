/* malloc_wrap.c - the heapfs program's malloc, calloc and realloc ask for
 * huge pages for big blocks (model/hugepages.h says why).
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (the
 * Makefile's WRAP_LDFLAGS: the program, the unit tests and the test
 * tools): every call to malloc from heapfs's own objects comes here, and
 * __real_malloc is the C library's.  The C library's and libfuse's own
 * calls are not wrapped.  A program linked without those flags never
 * refers to this file's symbols, so the archive's copy stays out of it.
 *
 * glibc serves a block of HUGEPAGES_MIN or more from a mapping of its own
 * (or from the top of its heap, above the dynamic mmap threshold); either
 * way the pages are this process's, and realloc's mremap keeps the
 * advice when it moves one.
 */
#include <stddef.h>

#include "model/hugepages.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
	void *p = __real_malloc(n);
	hugepages_advise(p, n);
	return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
	void *p = __real_calloc(k, n);
	if (p && n && k <= (size_t)-1 / n)
		hugepages_advise(p, k * n);
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q = __real_realloc(p, n);
	hugepages_advise(q, n);
	return q;
}

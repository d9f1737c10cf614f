/* hugepages.c - see hugepages.h. */
#include "hugepages.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Written by hugepages_setup before threads start, read after. */
static int advise_on;
static uintptr_t page_size = 4096;

void hugepages_setup(void)
{
	const char *v = getenv("HEAPFS_HUGEPAGES");
	long ps = sysconf(_SC_PAGESIZE);
	if (ps > 0)
		page_size = (uintptr_t)ps;
	advise_on = !(v && strcmp(v, "0") == 0);
}

int hugepages_on(void)
{
	return advise_on;
}

void hugepages_advise(void *p, size_t n)
{
	if (!advise_on || !p || n < HUGEPAGES_MIN)
		return;
	uintptr_t start = (uintptr_t)p & ~(page_size - 1);
	uintptr_t end = ((uintptr_t)p + n + page_size - 1) & ~(page_size - 1);
	/* a hint: on failure (EINVAL without CONFIG_TRANSPARENT_HUGEPAGE)
	 * the memory is as good, only slower to walk */
	(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

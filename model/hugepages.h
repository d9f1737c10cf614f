/* hugepages.h - heapfs's big arrays in transparent huge pages.
 *
 * Most of heapfs's time on a big heap goes to random reads and writes over
 * arrays of 4 to 8 bytes an object: the graph's edges, the dominator
 * tree's work arrays, the id index.  Each such access to a 100 MB array
 * misses the TLB; on a virtual machine every miss is a two-level page
 * walk.  In 2 MB pages the same arrays take a few dozen TLB entries, not
 * tens of thousands: on the 1 GB dump (24 M objects) on these machines,
 * `heapfs cat DUMP suspects` ran in 10.3 s instead of 18.3 s on one
 * thread, and 6.7 s instead of 14.5 s on two (medians of 3, interleaved),
 * with the same peak memory.
 *
 * Linux gives a process huge pages for a mapping it asks for with
 * madvise(MADV_HUGEPAGE) when /sys/kernel/mm/transparent_hugepage/enabled
 * is "madvise" (Debian's default) or "always"; "never" turns them off
 * whatever we ask.  The heapfs program asks for every allocation of
 * HUGEPAGES_MIN bytes or more (fs/malloc_wrap.c wraps malloc, calloc and
 * realloc at link time), and model code that maps memory itself calls
 * hugepages_advise.  HEAPFS_HUGEPAGES=0 in the environment asks for none:
 * on a machine whose memory is fragmented, the kernel may compact memory
 * when a huge page is first touched (the "defrag" setting beside
 * "enabled"), which costs time at the fault.
 *
 * A big block that grows by realloc is moved by mremap, which splits its
 * huge pages into 4 KB ones wherever the old and new addresses do not
 * line up: a mounted dump's edge arrays, grown that way, ended up 37 % in
 * huge pages (98 % for the other big arrays).  Arrays that analyses read
 * at random are grown by a new block and a copy instead
 * (model/hprof_graph.c), or sized once.
 */
#ifndef HEAPFS_MODEL_HUGEPAGES_H
#define HEAPFS_MODEL_HUGEPAGES_H

#include <stddef.h>

/* Allocations below this are not advised: a region shorter than a huge
 * page (2 MB on x86-64) rarely holds an aligned one. */
#define HUGEPAGES_MIN ((size_t)2 << 20)

/* Turns the advice on, unless HEAPFS_HUGEPAGES is "0" (then off), and
 * in either case fixes glibc's mmap threshold at HUGEPAGES_MIN: every
 * block of that size or more is a mapping of its own (the advice then
 * covers that block alone) and goes back to the kernel when freed, instead
 * of glibc's threshold rising with the blocks freed and later big blocks
 * sharing its heap with freed ones.  Call once, before any thread starts
 * (the program's main does); until then, and in programs that never call
 * it (the unit tests), nothing is advised. */
void hugepages_setup(void);

/* 1 if hugepages_setup turned the advice on. */
int hugepages_on(void);

/* Asks for huge pages for the n bytes at p, memory this process owns (a
 * malloc'd block, a mapping), when the advice is on and n is at least
 * HUGEPAGES_MIN.  The whole pages that hold the block are advised: their
 * other bytes, if any, are the allocator's, whose advice it is to give.
 * A refusal (a kernel without transparent huge pages) changes nothing
 * but speed and is not reported. */
void hugepages_advise(void *p, size_t n);

#endif

/* firsttouch.c - what this machine charges for memory a process touches
 * for the first time, apart from heapfs.
 *
 * Every array heapfs builds is fresh memory: the kernel zeroes each page at
 * its first touch.  On bare metal that is a few GB/s.  On a virtual machine
 * whose guest reports its free pages to the host (virtio-balloon's free
 * page reporting, as on the machines docs/bench.md was measured on), pages
 * that stayed free for a few seconds are given back to the host, and the
 * next touch of each one waits for the host to supply it again: there,
 * huge pages were touched at 370-750 MB/s after 5 s free, at 14-16 GB/s
 * right after another process had freed them, and 4 KB pages at 243-316
 * MB/s either way (each fault leaves the guest: 13-17 us a page).  So
 * the same heapfs command on the H2 dump took 2.1-2.2 s or 1.7 s, with
 * 1.2 or 0.4 s in the kernel, depending on how long the machine's memory
 * had stayed free before it ran.
 *
 *   firsttouch            the rates, each case 3 times (below)
 *   firsttouch warm MB    touches MB in huge pages and frees them, so that
 *                         a command run right after finds warm memory
 *                         (bench_stages.sh, BENCH_MEMORY=warm)
 *
 * The cases: 256 MB touched a page at a time, in 4 KB pages and in huge
 * pages (madvise MADV_HUGEPAGE), right after the same amount was freed and
 * after 5 s with the memory free.
 *
 * Build: cc -O2 -o /tmp/firsttouch tests/bench/firsttouch.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MB ((size_t)1 << 20)

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Maps n bytes, touches a byte of every 4 KB page, unmaps: MB/s of the
 * touches, or -1 when the mapping fails. */
static double touch(size_t n, int huge)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (huge)
		(void)madvise(p, n, MADV_HUGEPAGE); /* a hint: refused without THP */
	double t0 = now();
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	double t = now() - t0;
	munmap(p, n);
	return (double)(n / MB) / (t > 0 ? t : 1e-9);
}

static int rates(void)
{
	const size_t n = 256 * MB;
	static const char *names[] = { "4 KB pages", "huge pages" };
	printf("first touch of fresh memory, MB/s (256 MB, 3 times each)\n");
	for (int huge = 0; huge < 2; huge++) {
		double warm[3], cold[3];
		for (int r = 0; r < 3; r++) {
			(void)touch(n, huge); /* frees n bytes just before */
			warm[r] = touch(n, huge);
			sleep(5);
			cold[r] = touch(n, huge);
		}
		printf("  %-11s right after a free: %6.0f %6.0f %6.0f   after 5 s free: %6.0f %6.0f %6.0f\n",
		       names[huge], warm[0], warm[1], warm[2], cold[0], cold[1], cold[2]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 1)
		return rates();
	if (argc == 3 && strcmp(argv[1], "warm") == 0) {
		long mb = atol(argv[2]);
		if (mb <= 0) {
			fprintf(stderr, "firsttouch: warm needs a size in MB, not %s\n", argv[2]);
			return 2;
		}
		return touch((size_t)mb * MB, 1) < 0 ? 1 : 0;
	}
	fprintf(stderr, "usage: firsttouch [warm MB]\n");
	return 2;
}

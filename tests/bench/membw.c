/* membw.c - how far this machine's memory lets two threads scale, apart
 * from heapfs: random 8-byte reads over 512 MB per thread (as graph walks
 * read), then sequential sums, the same work per thread on 1 and 2
 * threads at once.  docs/bench.md ("Open-to-suspects on 1 and 2
 * threads") quotes it.  Build and run by hand:
 *   cc -O2 -pthread -o /tmp/membw tests/bench/membw.c && /tmp/membw
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (64u << 20)          /* 8-byte words per thread: 512 MB */
#define READS 40000000u

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct arg {
	uint64_t *a;
	uint64_t r;            /* seed in, sum out (keeps the reads) */
	int seq;
};

static void *run(void *p)
{
	struct arg *x = p;
	uint64_t s = 0, h = x->r | 1;
	if (x->seq) {
		for (int k = 0; k < 4; k++)
			for (size_t i = 0; i < N; i++)
				s += x->a[i];
	} else {
		for (size_t i = 0; i < READS; i++) {
			h ^= h << 13;
			h ^= h >> 7;
			h ^= h << 17;
			s += x->a[h & (N - 1)];
		}
	}
	x->r = s;
	return NULL;
}

int main(void)
{
	for (int seq = 0; seq < 2; seq++)
		for (int t = 1; t <= 2; t++) {
			pthread_t th[2];
			struct arg ar[2];
			for (int i = 0; i < t; i++) {
				if (!(ar[i].a = malloc((size_t)N * 8)))
					return 1;
				for (size_t j = 0; j < N; j++)
					ar[i].a[j] = j;
				ar[i].r = 12345 + (uint64_t)i;
				ar[i].seq = seq;
			}
			double t0 = now();
			for (int i = 0; i < t; i++)
				pthread_create(&th[i], NULL, run, &ar[i]);
			for (int i = 0; i < t; i++)
				pthread_join(th[i], NULL);
			double dt = now() - t0;
			printf("%s, %d thread%s: %.2f s for %d units of work (%.2f units/s; sum %llu)\n",
			       seq ? "sequential" : "random", t, t > 1 ? "s" : "", dt, t, t / dt,
			       (unsigned long long)(ar[0].r & 0xff));
			for (int i = 0; i < t; i++)
				free(ar[i].a);
		}
	return 0;
}

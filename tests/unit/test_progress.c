/* test_progress.c - the progress interface (model/progress.h), its
 * terminal lines (fs/progress_term.h), its reach into analyses/parallel.h's
 * workers, and the `work` lines of a mount's status. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analyses/parallel.h"
#include "fs/progress_term.h"
#include "fs/tree.h"
#include "model/buf.h"
#include "model/progress.h"
#include "model/synth.h"

/* Nothing bound: every call is a no-op, nothing crashes. */
static void test_unbound_is_quiet(void **st)
{
	(void)st;
	assert_null(progress_here());
	progress_phase(NULL, 10, "x %d", 1);
	progress_add(NULL, 5);
	progress_set(NULL, 7);
	progress_release(NULL);
}

static void test_phase_counts_and_binding(void **st)
{
	(void)st;
	struct progress *p = progress_claim();
	assert_non_null(p);
	struct progress_view v;
	progress_read(p, &v);
	assert_int_equal(v.seq, 0);
	assert_string_equal(v.phase, "");
	assert_null(progress_bind(p));
	assert_ptr_equal(progress_here(), p);
	progress_phase(progress_here(), 1000, "rebuilding GC %u", 12u);
	progress_add(progress_here(), 250);
	progress_add(progress_here(), 250);
	progress_read(p, &v);
	assert_string_equal(v.phase, "rebuilding GC 12");
	assert_int_equal(v.done, 500);
	assert_int_equal(v.total, 1000);
	assert_int_equal(v.seq, 1);
	/* a new phase starts its count afresh */
	progress_phase(p, 0, "%s", "assembling");
	progress_read(p, &v);
	assert_int_equal(v.done, 0);
	assert_int_equal(v.total, 0);
	assert_int_equal(v.seq, 2);
	assert_true(v.eta_s < 0); /* no total: no time left to say */
	/* a name longer than the record holds is cut, never overrun */
	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	progress_phase(p, 1, "%s", longname);
	progress_read(p, &v);
	assert_int_equal(strlen(v.phase), PROGRESS_PHASE_MAX - 1);
	assert_ptr_equal(progress_bind(NULL), p);
	progress_release(p);
}

static int count_shown(void *ctx, const struct progress_view *v)
{
	(void)v;
	(*(int *)ctx)++;
	return 0;
}

/* The board: PROGRESS_BOARD_SLOTS records, then NULL; progress_each lists
 * the claimed ones that have begun a phase. */
static void test_board(void **st)
{
	(void)st;
	struct progress *p[PROGRESS_BOARD_SLOTS];
	for (int i = 0; i < PROGRESS_BOARD_SLOTS; i++)
		assert_non_null(p[i] = progress_claim());
	assert_null(progress_claim());
	int shown = 0;
	assert_int_equal(progress_each(count_shown, &shown), 0);
	assert_int_equal(shown, 0);
	progress_phase(p[3], 5, "a");
	progress_phase(p[40], 0, "b");
	shown = 0;
	progress_each(count_shown, &shown);
	assert_int_equal(shown, 2);
	progress_release(p[40]);
	shown = 0;
	progress_each(count_shown, &shown);
	assert_int_equal(shown, 1);
	/* a record claimed again starts blank */
	struct progress *q = progress_claim();
	assert_ptr_equal(q, p[40]);
	struct progress_view v;
	progress_read(q, &v);
	assert_int_equal(v.seq, 0);
	for (int i = 0; i < PROGRESS_BOARD_SLOTS; i++)
		progress_release(p[i]);
}

/* One writer changing phases (name "phase N" with total N) and counting,
 * one reader: a view never pairs a name with another phase's total, and
 * never counts past it (run under TSan in make tsan). */
struct race {
	struct progress *p;
	int stop;
	int bad;
};

static void *writer(void *arg)
{
	struct race *r = arg;
	for (uint32_t n = 1; n <= 2000; n++) {
		progress_phase(r->p, n, "phase %u", n);
		for (uint32_t k = 0; k < n; k++)
			progress_add(r->p, 1);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *arg)
{
	struct race *r = arg;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct progress_view v;
		progress_read(r->p, &v);
		unsigned n;
		if (v.seq && (sscanf(v.phase, "phase %u", &n) != 1 || n != v.total))
			r->bad = 1;
	}
	return NULL;
}

static void test_concurrent_reader(void **st)
{
	(void)st;
	struct race r = { progress_claim(), 0, 0 };
	assert_non_null(r.p);
	pthread_t w, rd;
	assert_int_equal(pthread_create(&rd, NULL, reader, &r), 0);
	assert_int_equal(pthread_create(&w, NULL, writer, &r), 0);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	assert_int_equal(r.bad, 0);
	struct progress_view v;
	progress_read(r.p, &v);
	assert_int_equal(v.done, 2000);
	progress_release(r.p);
}

/* par_for's workers report to the record of the thread that called it. */
struct seen {
	struct progress *where[64];
};

static int note_binding(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct seen *s = ctx;
	s->where[task] = progress_here();
	progress_add(progress_here(), 1);
	usleep(1000); /* let the other workers take tasks too */
	return 0;
}

static void test_workers_report_to_the_caller(void **st)
{
	(void)st;
	struct progress *p = progress_claim();
	progress_bind(p);
	progress_phase(p, 64, "tasks");
	struct seen s;
	memset(&s, 0, sizeof s);
	assert_int_equal(par_for(4, 64, note_binding, &s), 0);
	for (int t = 0; t < 64; t++)
		assert_ptr_equal(s.where[t], p);
	struct progress_view v;
	progress_read(p, &v);
	assert_int_equal(v.done, 64);
	progress_bind(NULL);
	progress_release(p);
}

static void test_term_format(void **st)
{
	(void)st;
	char line[256];
	struct progress_view v = { .phase = "rebuilding GC 7", .done = 1234567, .total = 10000000,
				   .seq = 1, .phase_s = 3, .eta_s = 21.4 };
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567/10,000,000 (12%), about 21 s left");
	v.eta_s = 0.42;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567/10,000,000 (12%), about 0.4 s left");
	v.eta_s = 125;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567/10,000,000 (12%), about 2 min 5 s left");
	v.eta_s = 7260;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567/10,000,000 (12%), about 2 h 1 min left");
	v.eta_s = -1;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567/10,000,000 (12%)");
	v.total = 0;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 1,234,567");
	v.done = 0;
	v.phase_s = 4.4;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7, 4.4 s");
	/* too long for the width: the name is cut, the numbers stay */
	struct progress_view w = { .phase = "scanning heapfs-huge-30000000-1000000.hprof (bytes)", .done = 909651345,
				   .total = 11097003219, .seq = 1, .phase_s = 3, .eta_s = 33 };
	progress_term_format(&w, line, 72);
	/* 71 = 18 of the name + "..." + the 50 of ": 909,651,345/11,097,003,219 (8%), about 33 s left" */
	assert_string_equal(line, "scanning heapfs-hu...: 909,651,345/11,097,003,219 (8%), about 33 s left");
	assert_int_equal(strlen(line), 71);
	v.done = 999;
	v.total = 999;
	progress_term_format(&v, line, sizeof line);
	assert_string_equal(line, "rebuilding GC 7: 999/999 (100%)");
}

/* A mount's status lists the work running: a record with a phase is a
 * `work` line (phase, done, total, seconds, seconds left). */
static void test_status_lists_work(void **st)
{
	(void)st;
	char dir[] = "/tmp/heapfs-test-progress-XXXXXX", path[256], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/c.htr", dir);
	assert_int_equal(synth_write("company", NULL, path, err, sizeof err), 0);
	struct hfs_opts o;
	memset(&o, 0, sizeof o);
	struct htr_err herr;
	struct hfs *fs = NULL;
	assert_int_equal(hfs_open(&fs, path, &o, &herr), 0);
	struct progress *p = progress_claim();
	progress_phase(p, 40, "closures of 40 groups, each alone");
	progress_add(p, 10);
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(fs, "/status", &b), 0);
	assert_int_equal(buf_putc(&b, '\0'), 0);
	const char *w = strstr((const char *)b.data, "\nwork\tclosures of 40 groups, each alone\t10\t40\t");
	assert_non_null(w);
	progress_release(p);
	buf_reset(&b);
	assert_int_equal(hfs_read(fs, "/status", &b), 0);
	assert_int_equal(buf_putc(&b, '\0'), 0);
	assert_null(strstr((const char *)b.data, "\nwork\t"));
	buf_free(&b);
	hfs_close(fs);
	unlink(path);
	rmdir(dir);
}

/* The board's log (a mount in the foreground): one line per phase of every
 * record, each phase once, and a record claimed again (its phases counted
 * from 1 again) is a new piece of work whose phases print too. */
static void test_board_log(void **st)
{
	(void)st;
	setenv("HEAPFS_PROGRESS_AFTER_MS", "0", 1); /* every phase, as it begins */
	FILE *f = tmpfile();
	assert_non_null(f);
	struct progress_term *t = NULL;
	assert_int_equal(progress_term_start_board(&t, f), 0);
	struct progress *a = progress_claim(), *b = progress_claim();
	assert_non_null(a);
	assert_non_null(b);
	progress_phase(a, 10, "phase a1");
	progress_phase(b, 0, "phase b1");
	progress_release(a);
	struct progress *c = progress_claim(); /* a's slot again, phase 1 again */
	assert_ptr_equal(c, a);
	progress_phase(c, 0, "phase c1");
	progress_phase(c, 0, "phase c2");
	usleep(300 * 1000); /* a tick of the reporter's thread: nothing again */
	progress_term_stop(t);
	progress_release(b);
	progress_release(c);
	unsetenv("HEAPFS_PROGRESS_AFTER_MS");
	char text[1024];
	rewind(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	/* the names in order; what follows a name (count or seconds) varies */
	const char *want[] = { "heapfs: phase a1: 0/10 (0%)\n", "heapfs: phase b1, ", "heapfs: phase c1, ",
			       "heapfs: phase c2, " };
	const char *at = text;
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		const char *w = strstr(at, want[k]);
		assert_non_null(w);
		assert_ptr_equal(w, at); /* the next line, nothing between */
		at = strchr(w, '\n') + 1;
	}
	assert_string_equal(at, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unbound_is_quiet),
		cmocka_unit_test(test_phase_counts_and_binding),
		cmocka_unit_test(test_board),
		cmocka_unit_test(test_concurrent_reader),
		cmocka_unit_test(test_workers_report_to_the_caller),
		cmocka_unit_test(test_term_format),
		cmocka_unit_test(test_board_log),
		cmocka_unit_test(test_status_lists_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_count_callers.c - format 1.4's COUNT_CALLERS event (the agent's
 * mode=count with the JDK's sites: a JDK site's allocations per
 * application call above it): written, read back through the footer and,
 * without a footer, by scanning the frames; chunks of more than
 * HTR_MAX_CHUNK entries; refused in a file of an older minor; and
 * allocs/by-caller.  Expected values are those written, worked out by
 * hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/buf.h"
#include "model/htr_writer.h"
#include "model/trace.h"
#include "fs/tree.h"

enum { NE = 5000 }; /* more entries than one event holds */

static void make_temp(char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

/* Entry i: site i % 3, method 1 + i % 2, bci i, line i (odd i: unknown),
 * count i + 1. */
static struct htr_count_caller entry(uint32_t i)
{
	return (struct htr_count_caller){ i % 3, 1 + i % 2, i, i % 2 ? -1 : (int32_t)i, (uint64_t)i + 1 };
}

static void write_chunked(const char *path, int footer)
{
	struct htr_writer *w;
	struct htr_writer_opts o = { .no_footer = !footer };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	assert_int_equal(htr_write_method(w, 0, "java.lang.Long", "valueOf", "(J)Ljava/lang/Long;", "Long.java"), 0);
	assert_int_equal(htr_write_method(w, 1, "p.App", "a", "(I)V", "App.java"), 0);
	assert_int_equal(htr_write_method(w, 2, "p.App", "b", "(I)V", "App.java"), 0);
	for (uint32_t s = 0; s < 3; s++)
		assert_int_equal(htr_write_count_site(w, s, 0, 31 + s, 1211, "java.lang.Long"), 0);
	struct htr_count_caller *c = malloc(NE * sizeof(*c));
	assert_non_null(c);
	for (uint32_t i = 0; i < NE; i++)
		c[i] = entry(i);
	assert_int_equal(htr_write_count_callers(w, NE, c), 0);
	free(c);
	if (footer) {
		assert_int_equal(htr_writer_close(w), 0);
	} else {
		struct htr_gc_event g = { 1, 1000, 100, 1 << 20, 0, "test", NULL, 0, 0 };
		assert_int_equal(htr_write_gc_start(w, &g), 0); /* the frame ends at the GC end */
		g.time_ns += 10;
		assert_int_equal(htr_write_gc_end(w, &g), 0);
		assert_int_equal(htr_writer_close(w), 0);
	}
}

static void check_chunked(const char *path, int footer)
{
	struct trace *t;
	struct htr_err err;
	assert_int_equal(trace_open(&t, path, NULL, &err), 0);
	assert_int_equal(t->had_footer, footer);
	assert_int_equal(t->ncount_callers, NE);
	for (uint32_t i = 0; i < NE; i++) {
		struct htr_count_caller e = entry(i);
		assert_int_equal(t->count_callers[i].site, e.site);
		assert_int_equal(t->count_callers[i].method, e.method);
		assert_int_equal(t->count_callers[i].bci, e.bci);
		assert_int_equal(t->count_callers[i].line, e.line);
		assert_int_equal(t->count_callers[i].count, e.count);
	}
	trace_close(t);
}

static void test_callers_footer_and_scan(void **state)
{
	(void)state;
	for (int footer = 0; footer < 2; footer++) {
		char path[] = "/tmp/heapfs-test-callers-XXXXXX";
		make_temp(path);
		write_chunked(path, footer);
		check_chunked(path, footer);
		unlink(path);
	}
}

/* A writer of 1.3 has no COUNT_CALLERS; a reader refuses one in a file
 * that says it is 1.3 (its header patched, CRC and all). */
static void test_older_minor_refused(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-callers-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	struct htr_writer_opts o = { .minor = 3 };
	struct htr_count_caller c = { 0, 0, 1, 2, 3 };
	assert_int_equal(htr_writer_open(&w, path, &o), 0);
	assert_int_equal(htr_write_count_callers(w, 1, &c), -EINVAL);
	htr_writer_abandon(w);
	write_chunked(path, 1);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	uint8_t h[32];
	assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
	h[10] = 3;
	h[11] = 0;
	uint32_t crc = crc32_ieee(h, 28);
	for (int i = 0; i < 4; i++)
		h[28 + i] = (uint8_t)(crc >> (8 * i));
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	assert_int_equal(fwrite(h, 1, sizeof(h), f), sizeof(h));
	assert_int_equal(fclose(f), 0);
	struct trace *t;
	struct htr_err err;
	assert_int_not_equal(trace_open(&t, path, NULL, &err), 0);
	unlink(path);
}

static char *read_file(struct hfs *fs, const char *path)
{
	struct buf b;
	buf_init(&b);
	assert_int_equal(hfs_read(fs, path, &b), 0);
	assert_int_equal(buf_putc(&b, 0), 0);
	return (char *)b.data;
}

/* JdkMix's shape: Long.valueOf's one site counted 37005 times, 30000
 * under App.a's call (bci 16, line 13), 7000 under App.b's (bci 13, line
 * 17; written as 6000 + 1000: entries with one key add up), 5 under none;
 * an application site without callers.  by-site keeps the totals;
 * by-caller splits the JDK site, its rows adding up to them. */
static void test_allocs_by_caller(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-callers-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	assert_int_equal(htr_write_method(w, 0, "java.lang.Long", "valueOf", "(J)Ljava/lang/Long;", "Long.java"), 0);
	assert_int_equal(htr_write_method(w, 1, "p.App", "a", "(I)V", "App.java"), 0);
	assert_int_equal(htr_write_method(w, 2, "p.App", "b", "(I)V", "App.java"), 0);
	assert_int_equal(htr_write_count_site(w, 0, 0, 31, 1211, "java.lang.Long"), 0);
	assert_int_equal(htr_write_count_site(w, 1, 1, 2, 12, "int[]"), 0);
	uint32_t ids[2] = { 0, 1 };
	int64_t cnt[2] = { 37005, 4 };
	assert_int_equal(htr_write_alloc_counts(w, 0, HTR_COUNTS_FINAL, 10, 10, 2, ids, cnt), 0);
	struct htr_count_caller c[3] = {
		{ 0, 2, 13, 17, 6000 },
		{ 0, 1, 16, 13, 30000 },
		{ 0, 2, 13, 17, 1000 },
	};
	assert_int_equal(htr_write_count_callers(w, 3, c), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, path, &o, &err), 0);
	char *s = read_file(fs, "/allocs/by-caller");
	assert_string_equal(s, "site\ttype\tcaller\tcount\tbci\tcaller_bci\n"
			       "java.lang.Long.valueOf:1211\tjava.lang.Long\tp.App.a:13\t30000\t31\t16\n"
			       "java.lang.Long.valueOf:1211\tjava.lang.Long\tp.App.b:17\t7000\t31\t13\n"
			       "java.lang.Long.valueOf:1211\tjava.lang.Long\t<no caller>\t5\t31\t\n");
	free(s);
	s = read_file(fs, "/allocs/by-site");
	/* the site's top caller (a() made 30000 of its 37005, of 2 callers);
	 * an application site has no caller columns */
	assert_string_equal(s, "site\ttype\tcount\tbci\tdescriptor\ttop_caller\ttop_caller_count\tcallers\n"
			       "java.lang.Long.valueOf:1211\tjava.lang.Long\t37005\t31\t(J)Ljava/lang/Long;\tp.App.a:13\t30000\t2\n"
			       "p.App.a:12\tint[]\t4\t2\t(I)V\t\t\t\n");
	free(s);
	s = read_file(fs, "/allocs/by-caller.csv");
	assert_non_null(strstr(s, "site,type,caller,count,bci,caller_bci\n"));
	free(s);
	s = read_file(fs, "/allocs/by-caller.json");
	assert_non_null(strstr(s, "\"caller\": \"p.App.a:13\""));
	free(s);
	hfs_close(fs);
	unlink(path);
}

/* A trace without COUNT_CALLERS (no counters at all): by-caller is its
 * header alone. */
static void test_by_caller_empty(void **state)
{
	(void)state;
	char path[] = "/tmp/heapfs-test-callers-XXXXXX";
	make_temp(path);
	struct htr_writer *w;
	assert_int_equal(htr_writer_open(&w, path, NULL), 0);
	assert_int_equal(htr_writer_close(w), 0);
	struct hfs *fs;
	struct htr_err err;
	struct hfs_opts o = { 0 };
	assert_int_equal(hfs_open(&fs, path, &o, &err), 0);
	char *s = read_file(fs, "/allocs/by-caller");
	assert_string_equal(s, "site\ttype\tcaller\tcount\tbci\tcaller_bci\n");
	free(s);
	hfs_close(fs);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callers_footer_and_scan),
		cmocka_unit_test(test_older_minor_refused),
		cmocka_unit_test(test_allocs_by_caller),
		cmocka_unit_test(test_by_caller_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_files.c - the files heapfs writes and reads on the user's behalf
 * (model/files.h and its users).
 *
 * Writing: a failed `heapfs import` or `heapfs synth` leaves an existing
 * output file byte for byte as it was and no temporary file beside it; a
 * successful one replaces it whole (keeping its permissions, through a
 * symbolic link); SIGTERM during the write removes the temporary file;
 * a device or a directory is never replaced.
 * Reading: traces, dumps and option files that are not regular files are
 * refused by their kind without blocking (a FIFO without a writer would
 * block an open forever: every such call runs under alarm(), so a hang
 * fails the test instead of stalling it); option files have a size cap,
 * and their errors never quote the file's text.
 * Expected contents are the bytes the test wrote itself.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyses/features.h"
#include "analyses/classify.h"
#include "model/files.h"
#include "model/hprof.h"
#include "model/htr_reader.h"
#include "model/synth.h"
#include "model/trace.h"

/* A call that blocks (a FIFO opened for reading) ends the test here. */
#define HANG_SECONDS 10

static char dir[] = "/tmp/heapfs-test-files-XXXXXX";
static const char precious[] = "precious\n";

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The file holds exactly data[0..len). */
static void assert_file_is(const char *path, const void *data, size_t len)
{
	char got[64];
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(got, 1, sizeof got, f);
	fclose(f);
	assert_int_equal(n, len);
	assert_memory_equal(got, data, len);
}

/* The names in dir, other than . and .., sorted, '/'-joined. */
static void dir_names(char *out, size_t len)
{
	struct dirent **e;
	int n = scandir(dir, &e, NULL, alphasort);
	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(e[i]->d_name, ".") && strcmp(e[i]->d_name, ".."))
			snprintf(out + strlen(out), len - strlen(out), "%s/", e[i]->d_name);
		free(e[i]);
	}
	free(e);
}

/* Removes everything in dir (each test starts empty). */
static int empty_dir(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof cmd, "find '%s' -mindepth 1 -delete", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- writing ---------------------------------------------------------------------------- */

/* The case: `echo precious > keep.htr; heapfs import bad.hprof -o
 * keep.htr` lost keep.htr. */
static void test_failed_import_keeps_the_output(void **state)
{
	(void)state;
	char bad[256], out[256], err[512], names[256];
	path_in_dir(bad, sizeof bad, "bad.hprof");
	path_in_dir(out, sizeof out, "keep.htr");
	write_file(bad, "not a dump", 10);
	write_file(out, precious, sizeof precious - 1);
	const char *dumps[] = { bad };
	assert_true(hprof_import(dumps, 1, out, NULL, err, sizeof err) < 0);
	assert_non_null(strstr(err, "not an HPROF heap dump"));
	assert_file_is(out, precious, sizeof precious - 1);
	dir_names(names, sizeof names);
	assert_string_equal(names, "bad.hprof/keep.htr/");
}

/* A write that fails half way (the file size limit): the old file stays,
 * the temporary file goes.  In a child: the limit is per process. */
static void test_failed_synth_keeps_the_output(void **state)
{
	(void)state;
	char out[256], names[256];
	path_in_dir(out, sizeof out, "keep.htr");
	write_file(out, precious, sizeof precious - 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[512];
		struct synth_opts o;
		/* 64 KiB: the trace header fits, the first GC's frame does not */
		struct rlimit rl = { 65536, 65536 };
		synth_opts_init(&o);
		o.objects = 200000;
		signal(SIGXFSZ, SIG_IGN);   /* write() then fails with EFBIG */
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		int rc = synth_write("multicache", &o, out, err, sizeof err);
		_exit(rc == -EFBIG ? 0 : rc == 0 ? 1 : 2);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_file_is(out, precious, sizeof precious - 1);
	dir_names(names, sizeof names);
	assert_string_equal(names, "keep.htr/");
}

static void test_synth_replaces_whole_keeping_mode_and_link(void **state)
{
	(void)state;
	char out[256], link[256], err[512], names[256];
	struct synth_opts o;
	struct stat st;
	synth_opts_init(&o);
	o.objects = 100;
	o.gcs = 2;
	path_in_dir(out, sizeof out, "keep.htr");
	path_in_dir(link, sizeof link, "link.htr");
	write_file(out, precious, sizeof precious - 1);
	assert_int_equal(chmod(out, 0600), 0);
	assert_int_equal(symlink("keep.htr", link), 0);
	assert_int_equal(synth_write("multicache", &o, link, err, sizeof err), 0);
	/* the link still names the file, which now holds a trace */
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	char magic[8];
	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(magic, "HEAPFSTR", 8);
	dir_names(names, sizeof names);
	assert_string_equal(names, "keep.htr/link.htr/");
}

static void test_special_targets_are_never_replaced(void **state)
{
	(void)state;
	struct outfile f;
	char msg[256], sub[256], fifo[256], names[256];
	struct stat st;
	/* a FIFO of ours stands for a device (/dev/null, when run as root) */
	path_in_dir(fifo, sizeof fifo, "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(outfile_begin(&f, fifo, msg, sizeof msg), -EINVAL);
	assert_non_null(strstr(msg, "is a FIFO"));
	path_in_dir(sub, sizeof sub, "sub");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(outfile_begin(&f, sub, msg, sizeof msg), -EISDIR);
	assert_non_null(strstr(msg, "is a directory"));
	dir_names(names, sizeof names);
	assert_string_equal(names, "fifo/sub/");
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	outfile_abort(&f);   /* a no-op after a failed begin */
}

/* SIGTERM while the temporary file exists: the process dies of it, and
 * the temporary file is gone with it. */
static void test_signal_removes_the_temporary_file(void **state)
{
	(void)state;
	char out[256], names[256];
	path_in_dir(out, sizeof out, "keep.htr");
	write_file(out, precious, sizeof precious - 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct outfile f;
		char msg[256];
		signal(SIGTERM, SIG_DFL);
		if (outfile_begin(&f, out, msg, sizeof msg))
			_exit(2);
		if (write(f.fd, "half", 4) != 4)
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_file_is(out, precious, sizeof precious - 1);
	dir_names(names, sizeof names);
	assert_string_equal(names, "keep.htr/");
}

/* ---- reading ---------------------------------------------------------------------------- */

static void make_fifo(char *path, size_t n)
{
	path_in_dir(path, n, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void test_trace_that_is_not_a_file(void **state)
{
	(void)state;
	char fifo[256];
	struct trace *t = NULL;
	struct htr_err err;
	struct trace_open_opts o = { .progress = NULL };
	make_fifo(fifo, sizeof fifo);
	const struct { const char *path, *what; int rc; } cases[] = {
		{ fifo, "is a FIFO", -EINVAL },
		{ "/dev/zero", "is a character device", -EINVAL },
		{ dir, "is a directory", -EISDIR },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(&err, 0, sizeof err);
		alarm(HANG_SECONDS);
		assert_int_equal(trace_open(&t, cases[i].path, &o, &err), cases[i].rc);
		alarm(0);
		assert_non_null(strstr(err.msg, cases[i].what));
		assert_int_equal(err.form, HTR_ERR_FILE);   /* no offset: about the file */
	}
	/* the importer refuses it as a dump the same way */
	char out[256], msg[512];
	path_in_dir(out, sizeof out, "out.htr");
	const char *dumps[] = { fifo };
	alarm(HANG_SECONDS);
	assert_int_equal(hprof_import(dumps, 1, out, NULL, msg, sizeof msg), -EINVAL);
	alarm(0);
	assert_non_null(strstr(msg, "is a FIFO"));
	assert_int_equal(access(out, F_OK), -1);
}

/* An option file (-o features=, classifiers=): the same refusals, a size
 * cap, and errors that never quote the file. */
struct option_case {
	const char *name;   /* in dir; NULL: path */
	const char *path;
	int rc;
	const char *msg;    /* what the message starts with */
};

static void option_cases(struct option_case *c, size_t *n, char *fifo, size_t fifolen, char *big,
			 size_t biglen)
{
	make_fifo(fifo, fifolen);
	path_in_dir(big, biglen, "big");
	char *text = malloc(FILES_OPTION_MAX + 1);
	assert_non_null(text);
	memset(text, '#', FILES_OPTION_MAX + 1);   /* a comment: only its size is wrong */
	write_file(big, text, FILES_OPTION_MAX + 1);
	free(text);
	struct option_case cases[] = {
		{ NULL, fifo, -EINVAL, "is a FIFO, not a regular file" },
		{ NULL, "/dev/zero", -EINVAL, "is a character device, not a regular file" },
		{ NULL, dir, -EISDIR, "is a directory, not a regular file" },
		{ NULL, big, -EFBIG, "is larger than 1048576 bytes" },
	};
	memcpy(c, cases, sizeof cases);
	*n = sizeof cases / sizeof cases[0];
}

static void test_feature_file_refusals(void **state)
{
	(void)state;
	char fifo[256], big[256], shadow[256], msg[400];
	struct option_case c[8];
	size_t n;
	struct feature_map fm;
	option_cases(c, &n, fifo, sizeof fifo, big, sizeof big);
	for (size_t i = 0; i < n; i++) {
		alarm(HANG_SECONDS);
		assert_int_equal(feature_map_load(c[i].path, &fm, msg, sizeof msg), c[i].rc);
		alarm(0);
		assert_memory_equal(msg, c[i].msg, strlen(c[i].msg));
	}
	/* /etc/shadow's shape: one word on a line, which is a feature without
	 * a pattern at the end of line 1 (column 27) */
	static const char secret[] = "root:s3cr3tHASH:19000:0:::\n";
	path_in_dir(shadow, sizeof shadow, "shadow");
	write_file(shadow, secret, sizeof secret - 1);
	assert_int_equal(feature_map_load(shadow, &fm, msg, sizeof msg), -EINVAL);
	assert_memory_equal(msg, "line 1, column 27: ", 19);
	assert_null(strstr(msg, "s3cr3t"));
	assert_null(strstr(msg, "root"));
	/* a good file still loads */
	static const char good[] = "cache example.Cache.*\n";
	write_file(shadow, good, sizeof good - 1);
	assert_int_equal(feature_map_load(shadow, &fm, msg, sizeof msg), 0);
	assert_int_equal(fm.nnames, 1);
	feature_map_free(&fm);
}

static void test_classifier_file_refusals(void **state)
{
	(void)state;
	char fifo[256], big[256], tr[256], defs[256], msg[400], err[512];
	struct option_case c[8];
	size_t n;
	struct synth_opts so;
	synth_opts_init(&so);
	so.objects = 100;
	so.gcs = 1;
	path_in_dir(tr, sizeof tr, "t.htr");
	assert_int_equal(synth_write("multicache", &so, tr, err, sizeof err), 0);
	struct trace *t;
	struct htr_err he;
	struct trace_open_opts o = { .progress = NULL };
	assert_int_equal(trace_open(&t, tr, &o, &he), 0);
	struct cls_registry reg;
	assert_int_equal(cls_registry_init(&reg, t, NULL), 0);

	option_cases(c, &n, fifo, sizeof fifo, big, sizeof big);
	for (size_t i = 0; i < n; i++) {
		alarm(HANG_SECONDS);
		assert_int_equal(cls_define_file(&reg, c[i].path, msg, sizeof msg), c[i].rc);
		alarm(0);
		assert_memory_equal(msg, c[i].msg, strlen(c[i].msg));
	}
	/* errors that would quote the text: a token after the name, an
	 * unknown function, an unknown character, a token after an expression */
	static const struct { const char *text, *msg; } bad[] = {
		{ "secretword otherword\n", "line 1, column 12: expected '='" },
		{ "x = secretfn(1)\n", "line 1, column 5: unknown function" },
		{ "root:secret:19000\n", "line 1, column 5: unexpected character" },
		{ "x = size )secretword\n", "line 1, column 10: expected a classifier name" },
		{ "type = size\n", "line 1, column 1: the name of a predefined classifier" },
	};
	path_in_dir(defs, sizeof defs, "defs");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_file(defs, bad[i].text, strlen(bad[i].text));
		assert_int_equal(cls_define_file(&reg, defs, msg, sizeof msg), -EINVAL);
		assert_string_equal(msg, bad[i].msg);
	}
	static const char good[] = "big = size > 100\n";
	write_file(defs, good, sizeof good - 1);
	assert_int_equal(cls_define_file(&reg, defs, msg, sizeof msg), 0);
	cls_registry_destroy(&reg);
	trace_close(t);
}

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_failed_import_keeps_the_output, empty_dir),
		cmocka_unit_test_setup(test_failed_synth_keeps_the_output, empty_dir),
		cmocka_unit_test_setup(test_synth_replaces_whole_keeping_mode_and_link, empty_dir),
		cmocka_unit_test_setup(test_special_targets_are_never_replaced, empty_dir),
		cmocka_unit_test_setup(test_signal_removes_the_temporary_file, empty_dir),
		cmocka_unit_test_setup(test_trace_that_is_not_a_file, empty_dir),
		cmocka_unit_test_setup(test_feature_file_refusals, empty_dir),
		cmocka_unit_test_setup(test_classifier_file_refusals, empty_dir),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}

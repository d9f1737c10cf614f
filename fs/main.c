/* main.c - the heapfs command: mount, ls, cat, synth, check, import.
 *
 * ls and cat serve the same tree as the mount (fs/tree.h) without FUSE, so
 * every file can be read in a script or a test without mounting anything.
 * Exit status: 0 ok, 1 failure (a message on stderr), 2 bad command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/export.h"
#include "fs/fuse_adapter.h"
#include "fs/progress_term.h"
#include "mountopts/mountopts.h"
#include "fs/tree.h"
#include "fs/render.h"
#include "model/heap_state.h"
#include "model/hprof.h"
#include "model/htr.h"
#include "model/hugepages.h"
#include "model/progress.h"
#include "model/synth.h"
#include "model/trace.h"
#include "analyses/suspects.h"
#include "analyses/windows.h"

#define HEAPFS_VERSION "0.1.0"
#define EXIT_USAGE 2
#define PATH_BUF 4096
#define LINK_FOLLOW_MAX 40

static const char usage_text[] =
	"usage:\n"
	"  heapfs [-f] [-d] [-s] [-o OPT[,OPT...]] TRACE MOUNTPOINT\n"
	"        mount TRACE (an .htr trace, .hprof heap dump or .jfr JDK Flight Recorder\n"
	"        recording, told apart by their bytes) on MOUNTPOINT; -f stays in the foreground,\n"
	"        -d prints FUSE debug output, -s serves with one thread; the -o\n"
	"        options are listed below.\n"
	"        Unmount with: fusermount3 -u MOUNTPOINT\n"
	"  heapfs ls [-l] [-q] [-o OPT[,OPT...]] TRACE [PATH]\n"
	"        list one directory of the tree (default: the root), one name per line;\n"
	"        -l: kind (d directory, f file, l link), size ('-' when not known\n"
	"        without computing it), name, and '-> target' for links\n"
	"  heapfs cat [-q] [-o OPT[,OPT...]] TRACE PATH...\n"
	"        print files of the tree (PATH relative to the tree root:\n"
	"        gc/latest/info or /gc/latest/info; links are followed)\n"
	"        ls and cat take the heapfs -o options below (thresholds, features=,\n"
	"        classifiers=, layout=, ...) with the same defaults as a mount; FUSE\n"
	"        and mount options are refused\n"
	"  heapfs synth SCENARIO [-n OBJECTS] [-g GCS] [--seed S] [-q] -o OUT.htr\n"
	"        write a deterministic synthetic trace (heapfs synth --help lists them)\n"
	"  heapfs check [-q] TRACE\n"
	"        validate and summarize TRACE and rebuild the heap after every GC;\n"
	"        exit 1 on damage, with the file, the offset and what is wrong; a\n"
	"        truncated trace (or a heap dump cut short) says truncated yes, exit 0\n"
	"  heapfs import DUMP.hprof... -o OUT.htr [--layout=visualvm|hotspot]\n"
	"        HPROF heap dumps as one trace, one GC per dump (heapfs import --help);\n"
	"        TRACE may also be a single .hprof dump: it is imported on the fly\n"
	"  heapfs import REC.jfr -o OUT.htr\n"
	"        a JDK Flight Recorder recording as a trace (docs/jfr.md); TRACE may\n"
	"        also be a .jfr recording\n"
	"        synth and import write OUT.htr beside it and rename it at the end: a\n"
	"        failed or interrupted command leaves an existing OUT.htr as it was\n"
	"  heapfs export TRACE... -o DIR [--gcs A-B] [-q]\n"
	"        the traces' GCs as Parquet tables for DuckDB, Spark, Trino (docs/export.md;\n"
	"        heapfs export --help)\n"
	"  Progress: ls, cat, check, synth, import and export say on stderr what they\n"
	"        are doing (phase, done/total, time left): one line redrawn on a terminal\n"
	"        and erased at the end, one line per phase lasting 1 s otherwise;\n"
	"        -q (--quiet): none\n"
	"  heapfs --help | -h      this text\n"
	"  heapfs --version        the version\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "heapfs: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr);
	return EXIT_USAGE;
}

/* "heapfs: " and the error as hfs_open_error_text words it. */
static void print_open_error(const char *trace, int rc, const struct htr_err *err)
{
	char line[sizeof err->msg + PATH_MAX + 64];
	hfs_open_error_text(line, sizeof line, trace, rc, err);
	fprintf(stderr, "heapfs: %s\n", line);
}

/* Opens the tree with the heapfs options of ls/cat (mo: what
 * mountopts_parse_opts made of their -o arguments), as a mount would. */
struct cmd_progress;
static void cmd_progress_hold(struct cmd_progress *cp);

static int open_tree(const char *trace, const struct mountopts *mo, struct hfs **fs,
		     struct cmd_progress *cp)
{
	struct htr_err err;
	struct win_params wp;
	struct sus_params sp;
	struct hfs_opts o;
	heapfs_tree_opts(mo, &wp, &sp, &o);
	memset(&err, 0, sizeof err);
	int rc = hfs_open(fs, trace, &o, &err);
	if (rc) {
		cmd_progress_hold(cp);
		print_open_error(trace, rc, &err);
	}
	return rc;
}

/* The arguments of ls/cat: -o OPTS (also -oOPTS) anywhere, their own
 * flags (-l for ls), "--" ends the options; the rest in order. */
struct cli_args {
	const char **opts; int nopts;   /* values of -o */
	const char **pos; int npos;     /* TRACE, PATH... */
	int long_format;                /* ls -l */
	int quiet;                      /* -q: no progress on stderr */
};

/* 0, or the exit status of a usage error (printed). argv[0] is the
 * command name.  Arrays are owned by a (cli_args_free). */
static int cli_args_parse(struct cli_args *a, int argc, char **argv, int allow_l)
{
	int only_args = 0;
	memset(a, 0, sizeof *a);
	a->opts = calloc((size_t)argc, sizeof *a->opts);
	a->pos = calloc((size_t)argc, sizeof *a->pos);
	if (!a->opts || !a->pos) {
		fprintf(stderr, "heapfs: %s: out of memory\n", argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *v = argv[i];
		if (!only_args && strcmp(v, "--") == 0) {
			only_args = 1;
		} else if (!only_args && strcmp(v, "-o") == 0) {
			if (i + 1 >= argc)
				return usage_error("%s: missing argument after -o", argv[0]);
			a->opts[a->nopts++] = argv[++i];
		} else if (!only_args && strncmp(v, "-o", 2) == 0) {
			a->opts[a->nopts++] = v + 2;
		} else if (!only_args && allow_l && strcmp(v, "-l") == 0) {
			a->long_format = 1;
		} else if (!only_args && (strcmp(v, "-q") == 0 || strcmp(v, "--quiet") == 0)) {
			a->quiet = 1;
		} else if (!only_args && v[0] == '-' && v[1]) {
			fprintf(stderr, "heapfs: %s: unknown option %s\n", argv[0], v);
			usage(stderr);
			return EXIT_USAGE;
		} else {
			a->pos[a->npos++] = v;
		}
	}
	return 0;
}

/* A command's progress (model/progress.h) on stderr (fs/progress_term.h):
 * a record bound to the main thread for the command's length, and a
 * reporter while it works.  A command that prints as it goes holds the
 * reporter (erasing its line) before printing and resumes it after. */
struct cmd_progress {
	struct progress *p, *prev;
	struct progress_term *term;
	enum progress_term_mode mode;
};

static void cmd_progress_resume(struct cmd_progress *cp)
{
	if (!cp->term && progress_term_start(&cp->term, cp->p, stderr, cp->mode))
		cp->term = NULL; /* no thread: the command runs without progress */
}

static void cmd_progress_hold(struct cmd_progress *cp)
{
	progress_term_stop(cp->term);
	cp->term = NULL;
}

static void cmd_progress_start(struct cmd_progress *cp, int quiet)
{
	cp->p = progress_claim();
	cp->prev = progress_bind(cp->p);
	cp->term = NULL;
	cp->mode = progress_term_mode_for(STDERR_FILENO, quiet);
	cmd_progress_resume(cp);
}

static void cmd_progress_stop(struct cmd_progress *cp)
{
	cmd_progress_hold(cp);
	progress_bind(cp->prev);
	progress_release(cp->p);
}

/* Takes -q / --quiet (before any "--") out of argv; 1 when it was there. */
static int take_quiet(int *argc, char **argv)
{
	int quiet = 0, k = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[k++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else
			argv[k++] = argv[i];
	}
	*argc = k;
	argv[k] = NULL;
	return quiet;
}

static void cli_args_free(struct cli_args *a)
{
	free(a->opts);
	free(a->pos);
}

/* The -o options of ls/cat; a refused one is a usage error naming it. */
static int cli_opts(const char *cmd, const struct cli_args *a, struct mountopts *mo)
{
	int rc = mountopts_parse_opts(mo, a->nopts, a->opts);
	if (rc == -EINVAL) {
		fprintf(stderr, "heapfs: %s: %s\n", cmd, mo->error);
		return EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "heapfs: %s: %s\n", cmd, strerror(-rc));
		return 1;
	}
	return 0;
}

/* The value of key in the key<TAB>value file at path of the tree, or
 * NULL; out holds it. */
static const char *tree_value(struct hfs *fs, const char *path, const char *key, char *out,
			      size_t len)
{
	struct buf b;
	const char *found = NULL;
	size_t klen = strlen(key);
	buf_init(&b);
	if (hfs_read(fs, path, &b) == 0) {
		const char *p = (const char *)b.data, *end = p + b.len;
		while (p < end && !found) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (n > klen && memcmp(p, key, klen) == 0 && p[klen] == '\t') {
				snprintf(out, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
				found = out;
			}
			p += n + 1;
		}
	}
	buf_free(&b);
	return found;
}

/* A path under gc/ (or a link into it) that does not exist because the
 * trace has no complete GC: the error says so, and which trace. */
static int missing_for_want_of_gc(struct hfs *fs, const char *path, int rc)
{
	char v[32];
	while (*path == '/')
		path++;
	if (rc != -ENOENT || (strncmp(path, "gc/", 3) && strncmp(path, "roots", 5) &&
			      strncmp(path, "ds", 2)))
		return 0;
	return tree_value(fs, "/trace/info", "gcs", v, sizeof v) && strcmp(v, "0") == 0;
}

static void print_error(struct hfs *fs, const char *cmd, const char *trace, const char *path,
			int rc)
{
	char msg[640], v[32];
	if (rc == -EIO && hfs_last_error(fs, msg, sizeof msg))
		fprintf(stderr, "heapfs: %s: %s: %s\n", cmd, path, msg);
	else if (missing_for_want_of_gc(fs, path, rc))
		fprintf(stderr, "heapfs: %s: %s: %s: %s has no complete GC: %s\n", cmd, path,
			strerror(-rc), trace,
			tree_value(fs, "/trace/info", "truncated", v, sizeof v) && !strcmp(v, "yes")
				? "it was cut before its first GC ended" : "it records none");
	else
		fprintf(stderr, "heapfs: %s: %s: %s\n", cmd, path, strerror(-rc));
}

/* Follows links at the end of path, like a shell would (the tree follows
 * links in the middle of a path itself). */
static int follow_links(struct hfs *fs, const char *path, char out[PATH_BUF])
{
	char target[PATH_BUF], tmp[PATH_BUF];
	struct hfs_attr a;
	snprintf(out, PATH_BUF, "%s", path);
	for (int i = 0; i < LINK_FOLLOW_MAX; i++) {
		int rc = hfs_getattr(fs, out, &a);
		if (rc)
			return rc;
		if (a.kind != HFS_LINK)
			return 0;
		if ((rc = hfs_readlink(fs, out, target, sizeof target)))
			return rc;
		char *slash = strrchr(out, '/');
		if (slash)
			*slash = '\0';
		else
			out[0] = '\0';
		if (snprintf(tmp, sizeof tmp, "%s/%s", out, target) >= (int)sizeof tmp)
			return -ENAMETOOLONG;
		memcpy(out, tmp, sizeof tmp);
	}
	return -ELOOP;
}

struct ls_ctx {
	struct hfs *fs;
	const char *dir;
	int long_format;
	struct cmd_progress *cp;
};

static void print_entry(struct hfs *fs, const char *path, const char *name,
			const struct hfs_attr *a, int long_format)
{
	if (!long_format) {
		printf("%s\n", name);
		return;
	}
	char kind = a->kind == HFS_DIR ? 'd' : a->kind == HFS_LINK ? 'l' : 'f';
	char size[24] = "-";
	if (a->kind == HFS_FILE && a->size_exact)
		snprintf(size, sizeof size, "%" PRIu64, a->size);
	printf("%c %10s %s", kind, size, name);
	if (a->kind == HFS_LINK) {
		char target[PATH_BUF];
		if (hfs_readlink(fs, path, target, sizeof target) == 0)
			printf(" -> %s", target);
	}
	printf("\n");
}

static int ls_fill(void *vctx, const char *name, const struct hfs_attr *a)
{
	struct ls_ctx *c = vctx;
	char path[PATH_BUF];
	cmd_progress_hold(c->cp); /* the listing is computed: it prints now */
	snprintf(path, sizeof path, "%s/%s", c->dir, name);
	print_entry(c->fs, path, name, a, c->long_format);
	return 0;
}

static int cmd_ls(int argc, char **argv)
{
	struct cli_args a;
	struct mountopts mo;
	memset(&mo, 0, sizeof mo);
	int st = cli_args_parse(&a, argc, argv, 1);
	if (!st && a.npos < 1)
		st = usage_error("ls: missing TRACE%s", "");
	if (!st && a.npos > 2)
		st = usage_error("ls: too many arguments (%s)", a.pos[2]);
	if (!st)
		st = cli_opts("ls", &a, &mo);
	if (st)
		goto out;
	const char *path = a.npos > 1 ? a.pos[1] : "/";
	struct hfs *fs;
	struct cmd_progress cp;
	cmd_progress_start(&cp, a.quiet);
	st = 1;
	if (open_tree(a.pos[0], &mo, &fs, &cp)) {
		cmd_progress_stop(&cp);
		goto out;
	}
	char real[PATH_BUF];
	struct hfs_attr at;
	int rc = follow_links(fs, path, real);
	if (!rc)
		rc = hfs_getattr(fs, real, &at);
	if (!rc && at.kind == HFS_FILE) {
		cmd_progress_hold(&cp);
		print_entry(fs, real, path, &at, a.long_format);
	} else if (!rc) {
		struct ls_ctx c = { fs, real, a.long_format, &cp };
		rc = hfs_readdir(fs, real, ls_fill, &c);
	}
	cmd_progress_stop(&cp);
	if (rc)
		print_error(fs, "ls", a.pos[0], path, rc);
	hfs_close(fs);
	st = rc ? 1 : 0;
out:
	mountopts_free(&mo);
	cli_args_free(&a);
	return st;
}

static int cat_paths(struct hfs *fs, const char *trace, const char *const *paths, int n,
		     struct cmd_progress *cp)
{
	int failed = 0;
	struct buf b;
	buf_init(&b);
	for (int i = 0; i < n; i++) {
		buf_reset(&b);
		cmd_progress_resume(cp);
		int rc = hfs_read(fs, paths[i], &b);
		cmd_progress_hold(cp);
		if (rc) {
			fflush(stdout);
			print_error(fs, "cat", trace, paths[i], rc);
			failed = 1;
			continue;
		}
		if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len) {
			fprintf(stderr, "heapfs: cat: write error: %s\n", strerror(errno));
			failed = 1;
			break;
		}
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "heapfs: cat: write error: %s\n", strerror(errno));
		failed = 1;
	}
	buf_free(&b);
	return failed;
}

static int cmd_cat(int argc, char **argv)
{
	struct cli_args a;
	struct mountopts mo;
	memset(&mo, 0, sizeof mo);
	int st = cli_args_parse(&a, argc, argv, 0);
	if (!st && a.npos < 2)
		st = usage_error("cat: missing %s", a.npos < 1 ? "TRACE and PATH" : "PATH");
	if (!st)
		st = cli_opts("cat", &a, &mo);
	if (st)
		goto out;
	struct hfs *fs;
	struct cmd_progress cp;
	cmd_progress_start(&cp, a.quiet);
	st = 1;
	int opened = open_tree(a.pos[0], &mo, &fs, &cp) == 0;
	if (opened) {
		st = cat_paths(fs, a.pos[0], a.pos + 1, a.npos - 1, &cp);
		hfs_close(fs);
	}
	cmd_progress_stop(&cp);
out:
	mountopts_free(&mo);
	cli_args_free(&a);
	return st;
}

/* trace/info's lines (the same keys whether a user checks or mounts),
 * then the warnings the reader collected.  0 or 1 (printed). */
static int print_trace_summary(const struct trace *t)
{
	struct buf b;
	buf_init(&b);
	int rc = render_trace_summary(t, &b);
	if (rc)
		fprintf(stderr, "heapfs: check: %s\n", strerror(-rc));
	else if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len)
		rc = errno ? -errno : -EIO;
	buf_free(&b);
	for (const char *w = t->warnings ? t->warnings : ""; *w && !rc;) {
		const char *nl = strchr(w, '\n');
		int len = nl ? (int)(nl - w) : (int)strlen(w);
		if (len)
			printf("warning\t%.*s\n", len, w);
		w += len + (nl ? 1 : 0);
	}
	if (fflush(stdout) != 0 && !rc)
		rc = errno ? -errno : -EIO;
	if (rc && rc != -ENOMEM)
		fprintf(stderr, "heapfs: check: write error: %s\n", strerror(-rc));
	return rc ? 1 : 0;
}

/* A GC's recorded reachable summary (format 1.2) against the rebuilt
 * state: readers use the recorded values instead of rebuilding, so a
 * recorder that gets them wrong must be caught here.  0 or 1 (printed). */
static int check_recorded_reachable(const struct trace *t, uint32_t g, const struct heap_state *s)
{
	char msg[256];
	uint64_t objects = s->has_graph ? s->nreachable : 0;
	uint64_t bytes = s->has_graph ? s->reachable_bytes : 0;
	if (!trace_check_reachable(t, g, objects, bytes, msg, sizeof msg))
		return 0;
	fprintf(stderr, "heapfs: %s: %s\n", t->path, msg);
	return 1;
}

/* Rebuilds the heap after every GC: the only way to know that every part
 * of the trace decodes and agrees (deaths of live objects, edges to live
 * objects, roots, recorded reachable summaries).  A heap dump's GC: the
 * state its import built (trace->prebuilt; its temporary trace has no
 * graph records), not a copy of it. */
static int check_states(const struct trace *t, struct cmd_progress *cp)
{
	uint64_t objects = 0, bytes = 0;
	uint32_t nrecorded = 0;
	for (uint32_t g = 0; g < t->ngcs; g++) {
		struct heap_state *built = NULL;
		const struct heap_state *s = t->prebuilt && t->prebuilt->gc_index == g ? t->prebuilt : NULL;
		struct htr_err err;
		struct heap_build_opts o = { 0 };
		memset(&err, 0, sizeof err);
		int rc = s ? 0 : heap_state_build(t, g, &o, &built, &err);
		if (!s)
			s = built;
		if (rc) {
			cmd_progress_hold(cp);
			fprintf(stderr, "heapfs: %s: offset %" PRIu64 ": %s\n", t->path, err.offset,
				err.msg);
			return 1;
		}
		objects = s->n;
		bytes = s->total_bytes;
		cmd_progress_hold(cp);
		int bad = check_recorded_reachable(t, g, s);
		cmd_progress_resume(cp);
		nrecorded += (t->gcs[g].flags & HTR_GC_HAS_REACHABLE) != 0;
		heap_state_free(built);
		if (bad)
			return 1;
	}
	cmd_progress_hold(cp);
	printf("heap_states\t%" PRIu32 " rebuilt, ok\n", t->ngcs);
	printf("reachable_summaries\t%" PRIu32 " recorded, ok\n", nrecorded);
	if (t->ngcs) {
		printf("last_gc_objects\t%" PRIu64 "\n", objects);
		printf("last_gc_bytes\t%" PRIu64 "\n", bytes);
	}
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	int quiet = take_quiet(&argc, argv);
	if (argc != 2)
		return usage_error("check: expected one TRACE%s", "");
	struct trace *t;
	struct htr_err err;
	struct trace_open_opts o = { .progress = NULL };
	struct cmd_progress cp;
	memset(&err, 0, sizeof err);
	cmd_progress_start(&cp, quiet);
	int rc = trace_open(&t, argv[1], &o, &err);
	cmd_progress_hold(&cp);
	if (rc) {
		print_open_error(argv[1], rc, &err);
		cmd_progress_stop(&cp);
		return 1;
	}
	if (print_trace_summary(t)) {
		trace_close(t);
		cmd_progress_stop(&cp);
		return 1;
	}
	if (t->truncated && t->truncated_dump && t->objects_unrecorded)
		fprintf(stderr, "heapfs: %s: truncated: the JFR recording was read up to its last "
			"complete chunk (offset %" PRIu64 ")\n", argv[1], t->truncated_at);
	else if (t->truncated && t->truncated_dump)
		fprintf(stderr, "heapfs: %s: truncated: a heap dump was cut (the warning says "
			"where); its GC holds what the dump held before offset %" PRIu64 "\n",
			argv[1], t->truncated_at);
	else if (t->truncated)
		fprintf(stderr, "heapfs: %s: truncated at offset %" PRIu64
			": the trace is usable up to its last complete frame\n", argv[1],
			t->truncated_at);
	if (!t->ngcs)
		fprintf(stderr, "heapfs: %s: no complete GC: %s\n", argv[1],
			t->truncated ? "the trace was cut before its first GC ended"
				     : "the trace records no garbage collection");
	cmd_progress_resume(&cp);
	rc = check_states(t, &cp);
	cmd_progress_stop(&cp);
	trace_close(t);
	return rc;
}

/* import and synth parse their own arguments (model/); the progress
 * reporter is theirs too.  import takes -q itself (it also silences its
 * summary lines); synth's -q is taken out here. */
static int cmd_import(int argc, char **argv)
{
	int quiet = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		quiet |= !strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet");
	struct cmd_progress cp;
	cmd_progress_start(&cp, quiet);
	int st = hprof_import_cli_main(argc, argv);
	cmd_progress_stop(&cp);
	return st;
}

/* export takes -q itself too (it also silences its summary lines). */
static int cmd_export(int argc, char **argv)
{
	int quiet = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		quiet |= !strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet");
	struct cmd_progress cp;
	cmd_progress_start(&cp, quiet);
	int st = export_cli_main(argc, argv);
	cmd_progress_stop(&cp);
	return st;
}

static int cmd_synth(int argc, char **argv)
{
	int quiet = take_quiet(&argc, argv);
	struct cmd_progress cp;
	cmd_progress_start(&cp, quiet);
	int st = synth_cli_main(argc, argv);
	cmd_progress_stop(&cp);
	return st;
}

int main(int argc, char **argv)
{
	hugepages_setup(); /* before any thread: see model/hugepages.h */
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		fputs("\n", stdout);
		mountopts_print_help(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("heapfs %s (trace format %d.%d)\n", HEAPFS_VERSION, HTR_VERSION_MAJOR,
		       HTR_VERSION_MINOR);
		return 0;
	}
	if (strcmp(cmd, "ls") == 0)
		return cmd_ls(argc - 1, argv + 1);
	if (strcmp(cmd, "cat") == 0)
		return cmd_cat(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "synth") == 0)
		return cmd_synth(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	return heapfs_mount_main(argc, argv);
}

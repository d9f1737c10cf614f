/* hprof_cli.c - `heapfs import DUMP.hprof... -o OUT.htr [options]`, and
 * `heapfs import REC.jfr -o OUT.htr` (model/jfr_import.h).
 * Exit status: 0 ok, 1 failure (message on stderr), 2 bad command line.
 */
#include "hprof.h"
#include "jfr.h"
#include "jfr_import.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXIT_USAGE 2

static const char import_usage[] =
	"usage: heapfs import DUMP.hprof... -o OUT.htr [options]\n"
	"       heapfs import REC.jfr -o OUT.htr [-q]\n"
	"  Imports HPROF heap dumps (jcmd PID GC.heap_dump, -XX:+HeapDumpOnOutOfMemoryError)\n"
	"  as one trace, one GC point per dump in the order given; objects are matched\n"
	"  across dumps by id (see docs/hprof.md for the limits).  Or one JDK Flight\n"
	"  Recorder recording (told apart by its magic bytes): its GCs, allocation\n"
	"  samples and old-object samples (see docs/jfr.md).\n"
	"options:\n"
	"  -o OUT.htr                     the trace to write (required), as .OUT.htr.XXXXXX\n"
	"                                 beside it, renamed over it at the end: a failed\n"
	"                                 import leaves an existing OUT.htr as it was\n"
	"  --layout=visualvm|hotspot      object sizes as VisualVM computes them (default)\n"
	"                                 or as HotSpot lays objects out\n"
	"  --no-compressed-oops           hotspot layout: 8-byte references\n"
	"  --no-compressed-class-pointers hotspot layout: 16-byte object header\n"
	"  --keep-referents               referents of weak/soft/final/phantom references\n"
	"                                 keep their objects alive (default: as VisualVM,\n"
	"                                 they do not)\n"
	"  -q, --quiet                    no progress on stderr\n"
	"  -h, --help                     this text\n";

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "heapfs import: %s%s%s\n%s", what, arg ? ": " : "", arg ? arg : "", import_usage);
	return EXIT_USAGE;
}

static int parse_layout(const char *v, struct hprof_import_opts *o)
{
	if (strcmp(v, "visualvm") == 0)
		o->layout = HPROF_LAYOUT_VISUALVM;
	else if (strcmp(v, "hotspot") == 0)
		o->layout = HPROF_LAYOUT_HOTSPOT;
	else
		return -1;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int hprof_import_cli_main(int argc, char **argv)
{
	struct hprof_import_opts o;
	hprof_import_opts_init(&o);
	o.progress = stderr;
	const char *out = NULL;
	const char **dumps = calloc((size_t)argc + 1, sizeof *dumps);
	int ndumps = 0, only_args = 0, status = EXIT_USAGE;
	if (!dumps) {
		fprintf(stderr, "heapfs import: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_args || a[0] != '-' || !a[1]) {
			dumps[ndumps++] = a;
		} else if (strcmp(a, "--") == 0) {
			only_args = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(import_usage, stdout);
			status = 0;
			goto done;
		} else if (strcmp(a, "-o") == 0) {
			if (i + 1 >= argc) {
				status = usage_error("-o needs a file name", NULL);
				goto done;
			}
			out = argv[++i];
		} else if (strncmp(a, "--layout=", 9) == 0 || strcmp(a, "--layout") == 0) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
			if (parse_layout(v, &o)) {
				status = usage_error("unknown layout (visualvm or hotspot)", v);
				goto done;
			}
		} else if (strcmp(a, "--no-compressed-oops") == 0) {
			o.compressed_oops = 0;
		} else if (strcmp(a, "--no-compressed-class-pointers") == 0) {
			o.compressed_class_pointers = 0;
		} else if (strcmp(a, "--keep-referents") == 0) {
			o.keep_referents = 1;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			o.progress = NULL;
		} else {
			status = usage_error("unknown option", a);
			goto done;
		}
	}
	if (!ndumps) {
		status = usage_error("no heap dump given", NULL);
		goto done;
	}
	if (!out) {
		status = usage_error("no output trace given (-o OUT.htr)", NULL);
		goto done;
	}
	/* the same file under another name (./D.hprof, a link) counts too */
	struct stat ost, dst;
	int have_out = stat(out, &ost) == 0;
	for (int i = 0; i < ndumps; i++) {
		if (strcmp(dumps[i], out) == 0 ||
		    (have_out && stat(dumps[i], &dst) == 0 && dst.st_dev == ost.st_dev &&
		     dst.st_ino == ost.st_ino)) {
			status = usage_error("the output would overwrite a dump", out);
			goto done;
		}
	}
	char err[1024] = "";
	double t0 = now_s();
	int njfr = 0;
	for (int i = 0; i < ndumps; i++)
		njfr += jfr_file_is_recording(dumps[i]);
	if (njfr && ndumps > 1) {
		status = usage_error("a JFR recording is imported alone (one recording, no dumps)", NULL);
		goto done;
	}
	int rc = njfr ? jfr_import_file(dumps[0], out, stderr, err, sizeof err)
		      : hprof_import_with(dumps, ndumps, out, &o, err, sizeof err);
	if (rc) {
		fprintf(stderr, "heapfs import: %s\n", err);
		status = 1;
		goto done;
	}
	if (o.progress)
		progress_note(o.progress, "heapfs import: wrote %s (%s, %.1f s)\n", out,
			njfr ? "a JFR recording" : ndumps == 1 ? "1 dump" : "dumps", now_s() - t0);
	status = 0;
done:
	free(dumps);
	return status;
}

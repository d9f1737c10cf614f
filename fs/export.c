/* export.c - see export.h; the layout and the schema are docs/export.md's.
 *
 * One trace at a time: open it as `heapfs cat` does (fs/tree.h), write
 * every table of the chosen GCs into a staging directory inside DIR
 * (".heapfs-export-NAME.XXXXXX": a dot name, which Hive, Spark, Trino and
 * DuckDB's globs skip), then move each table's trace=NAME directory into
 * place (an atomic exchange with the old one where there is one) and
 * remove the staging directory with what it then holds.  A failure or a
 * signal before that leaves DIR's partitions as they were.
 *
 * Rows are streamed from the heap state (and the dominator tree) into
 * fs/parquet.h's writers, each holding one row group at most: memory is
 * the engine's (states, results: what a mount holds) plus a few MB per
 * file being written (the edges, and one objects part per thread, at
 * once).
 */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyses/engine.h"
#include "analyses/groups.h"
#include "analyses/retained.h"
#include "analyses/windows.h"
#include "fs/fuse_adapter.h"
#include "fs/parquet.h"
#include "fs/render_allocs.h"
#include "fs/table.h"
#include "fs/tree_internal.h"
#include "model/files.h"
#include "model/progress.h"
#include "model/symbols.h"
#include "mountopts/mountopts.h"

#define EXIT_USAGE 2
#define ROW_BATCH 65536u       /* rows between progress updates and signal checks */

static const char help_text[] =
	"usage: heapfs export TRACE... -o DIR [--gcs RANGE] [-q]\n"
	"\n"
	"Writes the heap states of each TRACE (an .htr trace, .hprof heap dump or .jfr\n"
	"recording, as heapfs cat opens them) as Parquet tables (zstd-compressed) in a\n"
	"Hive-style partitioned layout that DuckDB, Spark and Trino read:\n"
	"\n"
	"  DIR/objects/trace=NAME/gc=N/part-K.parquet       one row per object\n"
	"  DIR/edges/trace=NAME/gc=N/part-0.parquet         one row per reference\n"
	"  DIR/roots/trace=NAME/gc=N/part-0.parquet         one row per GC root\n"
	"  DIR/histogram/trace=NAME/gc=N/part-0.parquet     one row per type\n"
	"  DIR/gcs/trace=NAME/part-0.parquet                one row per GC (the timeline)\n"
	"  DIR/allocs/trace=NAME/part-0.parquet             one row per allocation site and type\n"
	"\n"
	"NAME is the trace's file name without .htr/.hprof/.jfr (characters other than\n"
	"letters, digits, '.', '_' and '-' written %XX); N the GC number (gc=7, not\n"
	"gc=007: engines then type it as an integer).  A GC's objects are written in\n"
	"one part per thread (HEAPFS_THREADS, else every core; at least 131,072 rows\n"
	"a part): part-0, part-1, ... hold them in id order.\n"
	"objects, edges and roots exist only for GCs whose trace carries the object\n"
	"graph.  docs/export.md has every column and its type, and example queries.\n"
	"\n"
	"  -o DIR        the output directory (created if missing); other traces'\n"
	"                partitions in it are left alone; a trace exported again has\n"
	"                its partitions replaced by the new ones\n"
	"  --gcs RANGE   the GCs to export: A-B, A, A-, -B (GC numbers, within the\n"
	"                trace's first and last) or latest; default: all\n"
	"  -q            no progress on stderr\n"
	"\n"
	"Each trace's tables are written to DIR/.heapfs-export-NAME.XXXXXX and moved into\n"
	"place when all are complete: a failed or interrupted export leaves DIR as it was.\n";

/* ---------------- the command line ---------------- */

struct exp_args {
	const char **traces;  /* owned array, borrowed strings */
	int ntraces;
	const char *dir;
	int quiet;            /* -q: no summary lines either */
	int has_range, latest;
	int has_lo, has_hi;   /* the range names that end (A- and -B leave one open) */
	uint64_t gc_lo, gc_hi;
	const char *range;    /* as given, for messages */
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("heapfs export: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(heapfs export --help lists the options)\n", stderr);
	return EXIT_USAGE;
}

static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	if (s == end)
		return -EINVAL;
	uint64_t x = 0;
	for (const char *p = s; p < end; p++) {
		if (*p < '0' || *p > '9' || x > (UINT32_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*v = x;
	return 0;
}

/* --gcs: A-B, A, A-, -B or latest. */
static int parse_range(struct exp_args *a, const char *s)
{
	const char *dash = strchr(s, '-'), *end = s + strlen(s);
	a->range = s;
	a->has_range = 1;
	if (!strcmp(s, "latest")) {
		a->latest = 1;
		return 0;
	}
	a->gc_lo = 0;
	a->gc_hi = UINT32_MAX;
	if (!dash) {
		a->has_lo = a->has_hi = 1;
		return parse_u64(s, end, &a->gc_lo) ? -EINVAL : parse_u64(s, end, &a->gc_hi);
	}
	a->has_lo = dash > s;
	a->has_hi = dash + 1 < end;
	if (!a->has_lo && !a->has_hi)
		return -EINVAL;
	if (a->has_lo && parse_u64(s, dash, &a->gc_lo))
		return -EINVAL;
	if (a->has_hi && parse_u64(dash + 1, end, &a->gc_hi))
		return -EINVAL;
	return a->gc_lo <= a->gc_hi ? 0 : -ERANGE;
}

/* 0, -1 for --help, or the exit status of a usage error (printed). */
static int parse_args(struct exp_args *a, int argc, char **argv)
{
	int only_args = 0;
	memset(a, 0, sizeof *a);
	if (!(a->traces = calloc((size_t)argc, sizeof *a->traces))) {
		fprintf(stderr, "heapfs export: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *v = argv[i], *val = NULL;
		if (only_args || v[0] != '-' || !v[1]) {
			a->traces[a->ntraces++] = v;
			continue;
		}
		if (!strcmp(v, "--")) {
			only_args = 1;
		} else if (!strcmp(v, "-q") || !strcmp(v, "--quiet")) {
			a->quiet = 1;
		} else if (!strcmp(v, "--help") || !strcmp(v, "-h")) {
			return -1;
		} else if (!strcmp(v, "-o") || !strcmp(v, "--output")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a directory", v);
			a->dir = argv[++i];
		} else if (!strncmp(v, "-o", 2) || !strncmp(v, "--output=", 9)) {
			a->dir = v[1] == 'o' ? v + 2 : v + 9;
		} else if (!strcmp(v, "--gcs") || !strncmp(v, "--gcs=", 6)) {
			if (!v[5] && i + 1 >= argc)
				return usage_error("--gcs needs a range (A-B, A, A-, -B or latest)");
			val = v[5] ? v + 6 : argv[++i];
			int rc = parse_range(a, val);
			if (rc == -ERANGE)
				return usage_error("--gcs %s: the range is empty (%" PRIu64 " > %" PRIu64 ")", val,
						   a->gc_lo, a->gc_hi);
			if (rc)
				return usage_error("--gcs %s: not a range of GC numbers (A-B, A, A-, -B or latest)", val);
		} else {
			return usage_error("unknown option '%s'", v);
		}
	}
	if (!a->dir || !*a->dir)
		return usage_error("-o DIR is missing: where to write the tables");
	if (!a->ntraces)
		return usage_error("no TRACE given");
	return 0;
}

/* ---------------- names ---------------- */

/* The partition value of a trace: its file name without the directory and
 * a known extension, with bytes other than [A-Za-z0-9._-] written %XX (as
 * Hive escapes partition values), never empty or starting with '.'. */
static void trace_name(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	static const char *const exts[] = { ".htr", ".hprof", ".jfr" };
	for (size_t k = 0; k < sizeof exts / sizeof *exts; k++) {
		size_t el = strlen(exts[k]);
		if (n > el && !strcmp(base + n - el, exts[k])) {
			n -= el;
			break;
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < n && o + 4 < len; i++) {
		unsigned char c = (unsigned char)base[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '_' || c == '-' || (c == '.' && o > 0);
		if (plain)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
	}
	if (!o && len > 6)
		o = (size_t)snprintf(out, len, "trace");
	out[o] = '\0';
}

/* ---------------- signals ---------------- */

/* SIGINT, SIGTERM, SIGHUP where their action is the default: noted, the
 * export stops at its next row batch, removes its staging directory and
 * then dies of the signal as it would have. */
static volatile sig_atomic_t stop_signal;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
static int handled[3];

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void signals_catch(void)
{
	for (int k = 0; k < 3; k++) {
		struct sigaction old, sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		handled[k] = !sigaction(stop_signals[k], NULL, &old) && old.sa_handler == SIG_DFL &&
			     !sigaction(stop_signals[k], &sa, NULL);
	}
}

static void signals_restore(void)
{
	for (int k = 0; k < 3; k++)
		if (handled[k])
			signal(stop_signals[k], SIG_DFL);
	if (stop_signal)
		raise(stop_signal);
}

static int interrupted(void)
{
	return stop_signal ? -EINTR : 0;
}

/* ---------------- string tables for the dictionary columns ---------------- */

/* Strings by id in one arena.  Owns arena and the two arrays. */
struct strtab {
	struct buf arena;
	uint64_t *off;         /* [n] during filling; then str points into arena */
	const char **str;
	uint32_t *len;
	uint32_t n;
};

static int strtab_init(struct strtab *s, uint32_t n)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->arena);
	s->n = n;
	s->off = calloc(n ? n : 1, sizeof *s->off);
	s->str = calloc(n ? n : 1, sizeof *s->str);
	s->len = calloc(n ? n : 1, sizeof *s->len);
	return s->off && s->str && s->len ? 0 : -ENOMEM;
}

static int strtab_set(struct strtab *s, uint32_t id, const char *p, size_t len)
{
	if (len > UINT32_MAX)
		return -EOVERFLOW;
	s->off[id] = s->arena.len;
	s->len[id] = (uint32_t)len;
	return buf_put(&s->arena, p, len);
}

/* Once every id is set: the pointers (the arena no longer moves; it has
 * no bytes at all when every string is empty). */
static void strtab_seal(struct strtab *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		s->str[i] = s->arena.data ? (const char *)s->arena.data + s->off[i] : "";
}

static void strtab_free(struct strtab *s)
{
	buf_free(&s->arena);
	free(s->off);
	free(s->str);
	free(s->len);
	memset(s, 0, sizeof *s);
}

/* The names of one trace's types, sites, threads and fields. */
struct names {
	struct strtab types;   /* [ntypes + 1]: the last for ids beyond the table */
	struct strtab sites;   /* [nsites]: allocating frame, "Class.method:line" */
	struct strtab threads; /* [nthreads] */
	struct strtab fields;  /* [sum of nfields]: field_base[type] + index */
	uint32_t *field_base;  /* owned, [ntypes] */
};

static int names_types(struct names *nm, const struct trace *t)
{
	char scratch[64];
	int rc = strtab_init(&nm->types, t->ntypes + 1);
	for (uint32_t i = 0; i < t->ntypes && !rc; i++) {
		const char *s = trace_type_name(t, i, scratch, sizeof scratch);
		rc = strtab_set(&nm->types, i, s, strlen(s));
	}
	if (!rc)
		rc = strtab_set(&nm->types, t->ntypes, "<unknown type>", 14);
	return rc;
}

static int names_sites(struct names *nm, const struct trace *t)
{
	struct buf b;
	buf_init(&b);
	int rc = strtab_init(&nm->sites, t->nsites);
	for (uint32_t i = 0; i < t->nsites && !rc; i++) {
		buf_reset(&b);
		rc = t->sites[i].nframes ? sym_frame(t, &t->sites[i].frames[0], &b) : buf_printf(&b, "<unknown site>");
		if (!rc)
			rc = strtab_set(&nm->sites, i, (const char *)b.data, b.len);
	}
	buf_free(&b);
	return rc;
}

static int names_fields(struct names *nm, const struct trace *t)
{
	uint32_t total = 0;
	if (!(nm->field_base = calloc(t->ntypes ? t->ntypes : 1, sizeof *nm->field_base)))
		return -ENOMEM;
	for (uint32_t i = 0; i < t->ntypes; i++) {
		nm->field_base[i] = total;
		if (t->types[i].nfields > UINT32_MAX - total)
			return -EOVERFLOW;
		total += t->types[i].nfields;
	}
	int rc = strtab_init(&nm->fields, total);
	for (uint32_t i = 0; i < t->ntypes && !rc; i++)
		for (uint32_t f = 0; f < t->types[i].nfields && !rc; f++) {
			const char *s = t->types[i].fields[f].name ? t->types[i].fields[f].name : "";
			rc = strtab_set(&nm->fields, nm->field_base[i] + f, s, strlen(s));
		}
	return rc;
}

static void names_free(struct names *nm)
{
	strtab_free(&nm->types);
	strtab_free(&nm->sites);
	strtab_free(&nm->threads);
	strtab_free(&nm->fields);
	free(nm->field_base);
	memset(nm, 0, sizeof *nm);
}

static int names_build(struct names *nm, const struct trace *t)
{
	memset(nm, 0, sizeof *nm);
	int rc = names_types(nm, t);
	if (!rc)
		rc = names_sites(nm, t);
	if (!rc)
		rc = strtab_init(&nm->threads, t->nthreads);
	for (uint32_t i = 0; i < t->nthreads && !rc; i++) {
		const char *s = sym_thread(t, i);
		rc = strtab_set(&nm->threads, i, s, strlen(s));
	}
	if (!rc)
		rc = names_fields(nm, t);
	if (rc) {
		names_free(nm);
		return rc;
	}
	strtab_seal(&nm->types);
	strtab_seal(&nm->sites);
	strtab_seal(&nm->threads);
	strtab_seal(&nm->fields);
	return 0;
}

/* ---------------- one trace ---------------- */

struct exp_trace {
	struct hfs *fs;              /* owned */
	const struct trace *t;       /* fs's */
	const char *path;            /* borrowed */
	char name[NAME_MAX / 2];
	char stage[PATH_MAX];        /* the staging directory */
	struct names nm;             /* owned */
	uint64_t rows, raw_bytes, file_bytes; /* totals written */
	uint64_t write_ns;           /* time in the row loops and closing files, summed
	                                over threads: the writing itself, without the
	                                heap states, dominator trees and closures */
	struct progress *p;          /* borrowed: the caller's record */
};

static const char *const table_names[] = { "objects", "edges", "roots", "histogram", "gcs", "allocs" };
#define NTABLES (sizeof table_names / sizeof *table_names)

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -errno : 0;
}

/* Part `part` of a table's partition in the staging directory (gci
 * UINT32_MAX: a per-trace table), its directories created. */
static int part_path(struct exp_trace *x, const char *table, uint32_t gci, uint32_t part, char *out, size_t len)
{
	char dir[PATH_MAX];
	int n = gci == UINT32_MAX
		? snprintf(dir, sizeof dir, "%s/%s/trace=%s", x->stage, table, x->name)
		: snprintf(dir, sizeof dir, "%s/%s/trace=%s/gc=%" PRIu32, x->stage, table, x->name,
			   x->t->gcs[gci].gc);
	if (n < 0 || n >= (int)sizeof dir)
		return -ENAMETOOLONG;
	int rc = mkdirs(dir);
	if (rc)
		return rc;
	return snprintf(out, len, "%s/part-%" PRIu32 ".parquet", dir, part) >= (int)len ? -ENAMETOOLONG : 0;
}

static int open_part_n(struct exp_trace *x, const char *table, uint32_t gci, uint32_t part,
		       const struct pq_column *cols, uint32_t ncols, const struct pq_strings *dicts,
		       struct pq_writer **w)
{
	char path[PATH_MAX];
	int rc = part_path(x, table, gci, part, path, sizeof path);
	return rc ? rc : pq_open(w, path, cols, ncols, dicts, NULL);
}

/* The table's only part, part-0. */
static int open_part(struct exp_trace *x, const char *table, uint32_t gci, const struct pq_column *cols,
		     uint32_t ncols, const struct pq_strings *dicts, struct pq_writer **w)
{
	return open_part_n(x, table, gci, 0, cols, ncols, dicts, w);
}

static int close_part(struct exp_trace *x, struct pq_writer *w)
{
	uint64_t bytes = 0;
	x->rows += pq_rows(w);
	x->raw_bytes += pq_raw_bytes(w);
	int rc = pq_close(w, &bytes);
	x->file_bytes += bytes;
	return rc;
}

/* Progress and the signal check, every ROW_BATCH rows. */
static int row_tick(struct exp_trace *x, uint64_t row)
{
	if ((row + 1) % ROW_BATCH)
		return 0;
	progress_add(x->p, ROW_BATCH);
	return interrupted();
}

/* ---- side jobs ---- */

/* Work on another thread beside the caller's (the machine's other cores):
 * a GC's edges while the caller computes the GC's closures and dominator
 * tree and writes the objects; the later parts of the objects table; the
 * allocation sites (a scan of every event) while the caller rebuilds the
 * first GC.  Each reads what is immutable (the state, the dominator tree,
 * the trace) and writes its own files.  The job has its own copy of the
 * trace's context (counters zeroed; the caller's progress record only
 * where it counts rows of the caller's phase), merged at the join, which
 * always comes before the context goes. */
struct side_job {
	struct exp_trace x;
	int (*fn)(struct side_job *j);
	uint32_t gci;
	const struct heap_state *s;
	/* an objects part: its rows [lo, hi) and what they read */
	const struct dom_view *d;
	const struct pq_strings *dicts;
	uint32_t part, lo, hi;
	int rc, threaded;
	pthread_t th;
};

static void *side_main(void *arg)
{
	struct side_job *j = arg;
	j->rc = j->fn(j);
	return NULL;
}

static void side_prepare(struct side_job *j, const struct exp_trace *x, int (*fn)(struct side_job *), uint32_t gci,
			 const struct heap_state *s)
{
	memset(j, 0, sizeof *j);
	j->x = *x;
	j->x.p = NULL;
	j->x.rows = j->x.raw_bytes = j->x.file_bytes = j->x.write_ns = 0;
	j->fn = fn;
	j->gci = gci;
	j->s = s;
}

static void side_launch(struct side_job *j)
{
	j->threaded = pthread_create(&j->th, NULL, side_main, j) == 0;
	if (!j->threaded)
		side_main(j); /* no thread to be had: one after the other */
}

static void side_start(struct side_job *j, const struct exp_trace *x, int (*fn)(struct side_job *), uint32_t gci,
		       const struct heap_state *s)
{
	side_prepare(j, x, fn, gci, s);
	side_launch(j);
}

static int side_join(struct side_job *j, struct exp_trace *x)
{
	if (j->threaded)
		pthread_join(j->th, NULL);
	x->rows += j->x.rows;
	x->raw_bytes += j->x.raw_bytes;
	x->file_bytes += j->x.file_bytes;
	x->write_ns += j->x.write_ns;
	return j->rc;
}

/* ---- objects ---- */

enum { OC_ID, OC_TYPE, OC_SIZE, OC_ALEN, OC_SITE, OC_THREAD, OC_BIRTH, OC_REACH, OC_RET, OC_RETC, OC_DOM, OC_N };
static const struct pq_column object_cols[OC_N] = {
	[OC_ID] = { "id", PQ_INT64, 0 },
	[OC_TYPE] = { "type", PQ_DICT, 0 },
	[OC_SIZE] = { "size", PQ_INT64, 0 },
	[OC_ALEN] = { "array_length", PQ_INT64, 1 },
	[OC_SITE] = { "site", PQ_DICT, 1 },
	[OC_THREAD] = { "thread", PQ_DICT, 1 },
	[OC_BIRTH] = { "birth_gc", PQ_INT64, 1 },
	[OC_REACH] = { "reachable", PQ_BOOL, 0 },
	[OC_RET] = { "retained_size", PQ_INT64, 1 },
	[OC_RETC] = { "retained_count", PQ_INT64, 1 },
	[OC_DOM] = { "dominator", PQ_INT64, 1 },
};

static int object_row(struct exp_trace *x, struct pq_writer *w, const struct heap_state *s,
		      const struct dom_view *d, uint32_t i)
{
	const struct objinfo *oi = hs_info(s, i);
	const struct trace *t = x->t;
	uint32_t b = s->birth[i], idom = d->idom[i];
	int reach = idom != DOM_UNREACHABLE;
	pq_i64(w, OC_ID, (int64_t)s->id[i]);
	pq_dict(w, OC_TYPE, oi->type < t->ntypes ? oi->type : t->ntypes);
	pq_i64(w, OC_SIZE, (int64_t)oi->size);
	if (oi->array_length >= 0)
		pq_i64(w, OC_ALEN, oi->array_length);
	else
		pq_null(w, OC_ALEN);
	if (oi->site < t->nsites)
		pq_dict(w, OC_SITE, oi->site);
	else
		pq_null(w, OC_SITE);
	if (oi->thread < t->nthreads)
		pq_dict(w, OC_THREAD, oi->thread);
	else
		pq_null(w, OC_THREAD);
	if (b < t->ngcs)
		pq_i64(w, OC_BIRTH, t->gcs[b].gc);
	else
		pq_null(w, OC_BIRTH);
	pq_bool(w, OC_REACH, reach);
	if (reach) {
		pq_i64(w, OC_RET, (int64_t)d->retained[i]);
		pq_i64(w, OC_RETC, d->retained_count[i]);
	} else {
		pq_null(w, OC_RET);
		pq_null(w, OC_RETC);
	}
	if (idom < s->n)
		pq_i64(w, OC_DOM, (int64_t)s->id[idom]);
	else
		pq_null(w, OC_DOM);
	return pq_row_end(w);
}

/* Rows [lo, hi) of the objects into part `part`. */
static int objects_part(struct exp_trace *x, uint32_t gci, const struct heap_state *s, const struct dom_view *d,
			const struct pq_strings *dicts, uint32_t part, uint32_t lo, uint32_t hi)
{
	struct pq_writer *w = NULL;
	uint64_t t0 = progress_now_ns();
	int rc = open_part_n(x, "objects", gci, part, object_cols, OC_N, dicts, &w);
	for (uint32_t i = lo; i < hi && !rc; i++) {
		rc = object_row(x, w, s, d, i);
		if (!rc)
			rc = row_tick(x, i);
	}
	if (!rc) {
		rc = close_part(x, w);
		w = NULL;
	}
	pq_abort(w);
	x->write_ns += progress_now_ns() - t0;
	return rc;
}

static int objects_part_job(struct side_job *j)
{
	return objects_part(&j->x, j->gci, j->s, j->d, j->dicts, j->part, j->lo, j->hi);
}

/* How many parts the objects of a state are written in: one per thread
 * allowed, none smaller than OBJECT_PART_ROWS rows.  After the dominator
 * tree, writing the objects is the longest stretch of an export on one
 * thread, and the one that splits cleanly: part k holds a contiguous range
 * of the state's objects, so parts 0, 1, ... in turn are the rows in id
 * order. */
#define OBJECT_PART_ROWS 131072u
#define OBJECT_PARTS_MAX 16u

static uint32_t objects_nparts(const struct exp_trace *x, const struct heap_state *s)
{
	uint32_t n = s->n / OBJECT_PART_ROWS, threads = x->fs->en.threads;
	if (n > threads)
		n = threads;
	if (n > OBJECT_PARTS_MAX)
		n = OBJECT_PARTS_MAX;
	return n ? n : 1;
}

static int export_objects(struct exp_trace *x, uint32_t gci, const struct heap_state *s)
{
	struct pq_strings dicts[OC_N];
	struct side_job jobs[OBJECT_PARTS_MAX];
	struct rc_entry *e = NULL;
	struct dom_view d;
	uint32_t nparts = objects_nparts(x, s), started = 0;
	memset(dicts, 0, sizeof dicts);
	dicts[OC_TYPE] = (struct pq_strings){ x->nm.types.str, x->nm.types.len, x->nm.types.n };
	dicts[OC_SITE] = (struct pq_strings){ x->nm.sites.str, x->nm.sites.len, x->nm.sites.n };
	dicts[OC_THREAD] = (struct pq_strings){ x->nm.threads.str, x->nm.threads.len, x->nm.threads.n };
	int rc = eng_dominators_get(&x->fs->en, gci, &e, &d);
	if (rc)
		goto out;
	if (d.n != s->n) {
		rc = -EIO;
		goto out;
	}
	progress_phase(x->p, s->n, "export %s: objects of GC %" PRIu32, x->name, s->gc);
	/* parts 1.. on their own threads, counting into this phase (progress_add
	 * is atomic); part 0 here */
	for (uint32_t k = 1; k < nparts; k++, started++) {
		struct side_job *j = &jobs[k - 1];
		side_prepare(j, x, objects_part_job, gci, s);
		j->x.p = x->p;
		j->d = &d;
		j->dicts = dicts;
		j->part = k;
		j->lo = (uint32_t)((uint64_t)s->n * k / nparts);
		j->hi = (uint32_t)((uint64_t)s->n * (k + 1) / nparts);
		side_launch(j);
	}
	rc = objects_part(x, gci, s, &d, dicts, 0, 0, (uint32_t)(s->n / nparts));
	for (uint32_t k = 0; k < started; k++) {
		int jrc = side_join(&jobs[k], x);
		if (!rc)
			rc = jrc;
	}
out:
	eng_put(&x->fs->en, e);
	return rc;
}

/* ---- edges ---- */

enum { EC_SRC, EC_TGT, EC_FIELD, EC_INDEX, EC_N };
static const struct pq_column edge_cols[EC_N] = {
	[EC_SRC] = { "source", PQ_INT64, 0 },
	[EC_TGT] = { "target", PQ_INT64, 0 },
	[EC_FIELD] = { "field", PQ_DICT, 1 },
	[EC_INDEX] = { "index", PQ_INT64, 0 },
};

/* The references of object i: field named where its type names the slot
 * (instance fields), null for array elements and unnamed slots; index the
 * slot (field index or element index). */
static int edge_rows(struct exp_trace *x, struct pq_writer *w, const struct heap_state *s, uint32_t i)
{
	const struct trace *t = x->t;
	uint32_t type = hs_info(s, i)->type;
	const struct trace_type *ty = type < t->ntypes && t->types[type].name ? &t->types[type] : NULL;
	int instance = ty && ty->kind == HTR_TYPE_INSTANCE;
	int rc = 0;
	for (uint64_t e = s->out_off[i]; e < s->out_off[i + 1] && !rc; e++) {
		uint32_t slot = hs_ref_slot(s, i, e);
		pq_i64(w, EC_SRC, (int64_t)s->id[i]);
		pq_i64(w, EC_TGT, (int64_t)s->id[s->out_tgt[e]]);
		if (instance && slot < ty->nfields && ty->fields[slot].name)
			pq_dict(w, EC_FIELD, x->nm.field_base[type] + slot);
		else
			pq_null(w, EC_FIELD);
		pq_i64(w, EC_INDEX, slot);
		rc = pq_row_end(w);
	}
	return rc;
}

static int export_edges(struct exp_trace *x, uint32_t gci, const struct heap_state *s)
{
	struct pq_strings dicts[EC_N];
	struct pq_writer *w = NULL;
	memset(dicts, 0, sizeof dicts);
	dicts[EC_FIELD] = (struct pq_strings){ x->nm.fields.str, x->nm.fields.len, x->nm.fields.n };
	int rc = open_part(x, "edges", gci, edge_cols, EC_N, dicts, &w);
	if (rc)
		return rc;
	progress_phase(x->p, s->n, "export %s: edges of GC %" PRIu32 " (objects)", x->name, s->gc);
	uint64_t t0 = progress_now_ns();
	for (uint32_t i = 0; i < s->n && !rc; i++) {
		rc = edge_rows(x, w, s, i);
		if (!rc)
			rc = row_tick(x, i);
	}
	if (!rc)
		rc = close_part(x, w);
	else
		pq_abort(w);
	x->write_ns += progress_now_ns() - t0;
	return rc;
}

/* ---- roots ---- */

enum { RC_KIND, RC_OBJ, RC_CLASS, RC_FIELD, RC_THREAD, RC_METHOD, RC_DEPTH, RC_SLOT, RC_NAME, RC_N };
static const struct pq_column root_cols[RC_N] = {
	[RC_KIND] = { "kind", PQ_STRING, 0 },
	[RC_OBJ] = { "object", PQ_INT64, 0 },
	[RC_CLASS] = { "class", PQ_STRING, 1 },
	[RC_FIELD] = { "field", PQ_STRING, 1 },
	[RC_THREAD] = { "thread", PQ_STRING, 1 },
	[RC_METHOD] = { "method", PQ_STRING, 1 },
	[RC_DEPTH] = { "depth", PQ_INT64, 1 },
	[RC_SLOT] = { "slot", PQ_INT64, 1 },
	[RC_NAME] = { "name", PQ_STRING, 0 },
};

static int put_opt_str(struct pq_writer *w, uint32_t c, int have, const char *s)
{
	return have ? pq_str(w, c, s, strlen(s)) : pq_null(w, c);
}

static int root_row(struct exp_trace *x, struct pq_writer *w, const struct heap_state *s,
		    const struct hs_root *r, struct buf *tmp)
{
	const struct trace *t = x->t;
	char scratch[64];
	const char *kind = htr_root_kind_name(r->kind);
	int stat = r->kind == HTR_ROOT_STATIC;
	int thr = r->kind == HTR_ROOT_THREAD || r->kind == HTR_ROOT_LOCAL || r->kind == HTR_ROOT_JNI_LOCAL ||
		  r->kind == HTR_ROOT_NATIVE_STACK || r->kind == HTR_ROOT_THREAD_BLOCK;
	int meth = r->kind == HTR_ROOT_LOCAL || r->kind == HTR_ROOT_CODE_BLOB;
	int depth = r->kind == HTR_ROOT_LOCAL || r->kind == HTR_ROOT_JNI_LOCAL;
	const struct trace_type *ty = stat && r->type < t->ntypes ? &t->types[r->type] : NULL;
	const char *field = ty && r->field < ty->nfields ? ty->fields[r->field].name : NULL;
	pq_str(w, RC_KIND, kind ? kind : "root", strlen(kind ? kind : "root"));
	pq_i64(w, RC_OBJ, (int64_t)s->id[r->object]);
	put_opt_str(w, RC_CLASS, stat, stat ? trace_type_name(t, r->type, scratch, sizeof scratch) : NULL);
	put_opt_str(w, RC_FIELD, field != NULL, field);
	put_opt_str(w, RC_THREAD, thr && r->thread != UINT32_MAX, thr ? sym_thread(t, r->thread) : NULL);
	buf_reset(tmp);
	int rc = meth ? sym_method(t, r->method, tmp) : 0;
	if (!rc && meth)
		pq_str(w, RC_METHOD, (const char *)tmp->data, tmp->len);
	else
		pq_null(w, RC_METHOD);
	if (depth)
		pq_i64(w, RC_DEPTH, r->depth);
	else
		pq_null(w, RC_DEPTH);
	if (r->kind == HTR_ROOT_LOCAL)
		pq_i64(w, RC_SLOT, r->slot);
	else
		pq_null(w, RC_SLOT);
	buf_reset(tmp);
	if (!rc)
		rc = sym_root(t, r, tmp);
	if (!rc)
		pq_str(w, RC_NAME, (const char *)tmp->data, tmp->len);
	return rc ? rc : pq_row_end(w);
}

static int export_roots(struct exp_trace *x, uint32_t gci, const struct heap_state *s)
{
	struct pq_writer *w = NULL;
	struct buf tmp;
	buf_init(&tmp);
	int rc = open_part(x, "roots", gci, root_cols, RC_N, NULL, &w);
	if (rc)
		goto out;
	progress_phase(x->p, s->nroots, "export %s: roots of GC %" PRIu32, x->name, s->gc);
	uint64_t t0 = progress_now_ns();
	for (uint32_t r = 0; r < s->nroots && !rc; r++) {
		rc = root_row(x, w, s, &s->roots[r], &tmp);
		if (!rc)
			rc = row_tick(x, r);
	}
	if (!rc) {
		rc = close_part(x, w);
		w = NULL;
	}
	x->write_ns += progress_now_ns() - t0;
out:
	pq_abort(w);
	buf_free(&tmp);
	return rc;
}

/* ---- histogram ---- */

enum { HC_TYPE, HC_COUNT, HC_SHALLOW, HC_DEEPC, HC_DEEP, HC_RETC, HC_RET, HC_SAMPLES, HC_N };
static const struct pq_column histogram_cols[HC_N] = {
	[HC_TYPE] = { "type", PQ_STRING, 0 },
	[HC_COUNT] = { "count", PQ_INT64, 0 },
	[HC_SHALLOW] = { "shallow_size", PQ_INT64, 0 },
	[HC_DEEPC] = { "deep_count", PQ_INT64, 1 },
	[HC_DEEP] = { "deep_size", PQ_INT64, 1 },
	[HC_RETC] = { "retained_count", PQ_INT64, 1 },
	[HC_RET] = { "retained_size", PQ_INT64, 1 },
	[HC_SAMPLES] = { "samples", PQ_INT64, 1 },
};

/* One row per child of gc/NNN/by-type/, the figures of its table. */
static int histogram_row(struct pq_writer *w, const char *name, const struct cls_row *r, const struct clo_row *clo,
			 int sampled)
{
	pq_str(w, HC_TYPE, name, strlen(name));
	pq_i64(w, HC_COUNT, (int64_t)(r->c[COL_LIVE] + r->c[COL_PERM]));
	pq_i64(w, HC_SHALLOW, (int64_t)(r->b[COL_LIVE] + r->b[COL_PERM]));
	if (clo) {
		pq_i64(w, HC_DEEPC, (int64_t)clo->m.deep_count);
		pq_i64(w, HC_DEEP, (int64_t)clo->m.deep_bytes);
		pq_i64(w, HC_RETC, (int64_t)clo->m.retained_count);
		pq_i64(w, HC_RET, (int64_t)clo->m.retained_bytes);
	} else {
		for (uint32_t c = HC_DEEPC; c <= HC_RET; c++)
			pq_null(w, c);
	}
	if (sampled)
		pq_i64(w, HC_SAMPLES, (int64_t)(r->s[COL_LIVE] + r->s[COL_PERM]));
	else
		pq_null(w, HC_SAMPLES);
	return pq_row_end(w);
}

static int export_histogram(struct exp_trace *x, uint32_t gci)
{
	struct engine *en = &x->fs->en;
	struct chain root;
	struct rc_entry *e = NULL, *ce = NULL;
	const struct cls_row *rows;
	const struct clo_row *clo = NULL;
	uint32_t nrows = 0, nclo = 0, cls = cls_find(&en->reg, "type");
	struct pq_writer *w = NULL;
	const struct cls_def *d = cls_get(&en->reg, cls);
	chain_init(&root);
	if (!d)
		return -ENOENT;
	progress_phase(x->p, 0, "export %s: histogram of GC %" PRIu32, x->name, x->t->gcs[gci].gc);
	int rc = eng_classification_get(en, gci, &root, cls, &e, &rows, &nrows);
	if (!rc && eng_gc_has_graph(en, gci))
		rc = eng_class_closures_get(en, gci, &root, cls, &ce, &clo, &nclo);
	uint64_t t0 = progress_now_ns();
	if (!rc)
		rc = open_part(x, "histogram", gci, histogram_cols, HC_N, NULL, &w);
	int sampled = x->t->sample_interval != 0;
	for (uint32_t r = 0; r < nrows && !rc; r++)
		rc = histogram_row(w, ks_name(&d->ks, rows[r].key), &rows[r], ce ? clo_row_find(clo, nclo, rows[r].key) : NULL,
				   sampled);
	if (!rc) {
		rc = close_part(x, w);
		w = NULL;
	}
	x->write_ns += progress_now_ns() - t0;
	pq_abort(w);
	eng_put(en, ce);
	eng_put(en, e);
	return rc;
}

/* ---- gcs ---- */

enum { GC_GC, GC_START, GC_END, GC_PAUSE, GC_CAUSE, GC_UBEFORE, GC_UAFTER, GC_REACH, GC_FREED, GC_ALLOC,
       GC_GRAPH, GC_N };
static const struct pq_column gcs_cols[GC_N] = {
	[GC_GC] = { "gc", PQ_INT64, 0 },
	[GC_START] = { "start_ms", PQ_INT64, 0 },
	[GC_END] = { "end_ms", PQ_INT64, 0 },
	[GC_PAUSE] = { "pause_ms", PQ_INT64, 1 },
	[GC_CAUSE] = { "cause", PQ_STRING, 0 },
	[GC_UBEFORE] = { "used_before", PQ_INT64, 1 },
	[GC_UAFTER] = { "used_after", PQ_INT64, 1 },
	[GC_REACH] = { "reachable", PQ_INT64, 1 },
	[GC_FREED] = { "freed", PQ_INT64, 1 },
	[GC_ALLOC] = { "allocated", PQ_INT64, 1 },
	[GC_GRAPH] = { "graph", PQ_BOOL, 0 },
};

static uint64_t ms_since_start(const struct trace *t, uint64_t ns)
{
	return ns > t->first_ns ? (ns - t->first_ns) / 1000000 : 0;
}

static void put_opt_u64(struct pq_writer *w, uint32_t c, uint64_t v)
{
	if (v == UINT64_MAX)
		pq_null(w, c);
	else
		pq_i64(w, c, (int64_t)v);
}

/* The row of timeline/gcs.csv for GC gci (same values, same unknowns). */
static int gcs_row(struct exp_trace *x, struct pq_writer *w, uint32_t gci, uint64_t reachable)
{
	const struct trace *t = x->t;
	const struct htr_gc_summary *g = &t->gcs[gci];
	int have_freed = g->used_before != UINT64_MAX && g->used_after != UINT64_MAX && g->used_before >= g->used_after;
	pq_i64(w, GC_GC, g->gc);
	pq_i64(w, GC_START, (int64_t)ms_since_start(t, g->start_ns));
	pq_i64(w, GC_END, (int64_t)ms_since_start(t, g->end_ns));
	put_opt_u64(w, GC_PAUSE, g->end_ns >= g->start_ns ? (g->end_ns - g->start_ns) / 1000000 : UINT64_MAX);
	pq_str(w, GC_CAUSE, g->cause, strnlen(g->cause, sizeof g->cause));
	put_opt_u64(w, GC_UBEFORE, g->used_before);
	put_opt_u64(w, GC_UAFTER, g->used_after);
	put_opt_u64(w, GC_REACH, reachable);
	put_opt_u64(w, GC_FREED, have_freed ? g->used_before - g->used_after : UINT64_MAX);
	put_opt_u64(w, GC_ALLOC, t->objects_unrecorded || t->sample_interval ? UINT64_MAX : g->alloc_bytes);
	pq_bool(w, GC_GRAPH, eng_gc_has_graph(&x->fs->en, gci));
	return pq_row_end(w);
}

static int export_gcs(struct exp_trace *x, const uint32_t *sel, uint32_t nsel)
{
	const uint64_t *reach;
	struct pq_writer *w = NULL;
	progress_phase(x->p, 0, "export %s: timeline (reachable memory per GC)", x->name);
	int rc = eng_reachable_series(&x->fs->en, &reach);
	if (!rc)
		rc = open_part(x, "gcs", UINT32_MAX, gcs_cols, GC_N, NULL, &w);
	for (uint32_t k = 0; k < nsel && !rc; k++)
		rc = gcs_row(x, w, sel[k], reach[sel[k]]);
	if (!rc)
		return close_part(x, w);
	pq_abort(w);
	return rc;
}

/* ---- allocs ---- */

enum { AC_SITE, AC_TYPE, AC_COUNT, AC_BYTES, AC_SAMPLES, AC_BCI, AC_DESC, AC_TOP_CALLER, AC_TOP_CALLER_COUNT, AC_CALLERS, AC_N };
static const struct pq_column alloc_cols[AC_N] = {
	[AC_SITE] = { "site", PQ_STRING, 0 },
	[AC_TYPE] = { "type", PQ_STRING, 0 },
	[AC_COUNT] = { "count", PQ_INT64, 1 },
	[AC_BYTES] = { "bytes", PQ_INT64, 1 },
	[AC_SAMPLES] = { "samples", PQ_INT64, 1 },
	[AC_BCI] = { "bci", PQ_INT64, 1 },
	[AC_DESC] = { "descriptor", PQ_STRING, 1 },
	[AC_TOP_CALLER] = { "top_caller", PQ_STRING, 1 },
	[AC_TOP_CALLER_COUNT] = { "top_caller_count", PQ_INT64, 1 },
	[AC_CALLERS] = { "callers", PQ_INT64, 1 },
};

/* Which export column each of allocs/by-site's columns fills: count and
 * est_count are both "count", est_bytes "bytes" (sampled recordings). */
static int alloc_col_of(const char *name)
{
	static const struct { const char *file; int col; } map[] = {
		{ "site", AC_SITE }, { "type", AC_TYPE }, { "count", AC_COUNT }, { "est_count", AC_COUNT },
		{ "est_bytes", AC_BYTES }, { "samples", AC_SAMPLES }, { "bci", AC_BCI }, { "descriptor", AC_DESC },
		{ "top_caller", AC_TOP_CALLER }, { "top_caller_count", AC_TOP_CALLER_COUNT }, { "callers", AC_CALLERS },
	};
	for (size_t k = 0; k < sizeof map / sizeof *map; k++)
		if (!strcmp(map[k].file, name))
			return map[k].col;
	return -1;
}

static int alloc_row(struct pq_writer *w, const struct table *tb, uint32_t r, const int *col_of)
{
	int set[AC_N] = { 0 };
	for (uint32_t c = 0; c < tb->ncols; c++) {
		const struct tcell *cell = &tb->cells[(size_t)r * tb->ncols + c];
		int k = col_of[c];
		if (k < 0 || cell->empty)
			continue;
		set[k] = 1;
		if (tb->cols[c].type == TCOL_STR)
			pq_str(w, (uint32_t)k, cell->v.s, strlen(cell->v.s));
		else if (tb->cols[c].type == TCOL_U64)
			pq_i64(w, (uint32_t)k, (int64_t)cell->v.u);
		else
			pq_i64(w, (uint32_t)k, cell->v.i);
	}
	for (uint32_t k = 0; k < AC_N; k++) {
		if (set[k])
			continue;
		if (alloc_cols[k].optional)
			pq_null(w, k);
		else
			pq_str(w, k, "", 0);
	}
	return pq_row_end(w);
}

static int export_allocs(struct exp_trace *x)
{
	struct table tb;
	struct pq_writer *w = NULL;
	int col_of[16];
	progress_phase(x->p, 0, "export %s: allocation sites", x->name);
	int rc = allocs_table(x->fs, ALLOCS_BY_SITE, &tb);
	if (!rc && tb.ncols > sizeof col_of / sizeof *col_of)
		rc = -EOVERFLOW;
	for (uint32_t c = 0; !rc && c < tb.ncols; c++)
		col_of[c] = alloc_col_of(tb.cols[c].name);
	if (!rc)
		rc = open_part(x, "allocs", UINT32_MAX, alloc_cols, AC_N, NULL, &w);
	for (uint32_t r = 0; r < tb.nrows && !rc; r++)
		rc = alloc_row(w, &tb, r, col_of);
	if (!rc) {
		rc = close_part(x, w);
		w = NULL;
	}
	pq_abort(w);
	table_free(&tb);
	return rc;
}

/* ---- the GCs ---- */

static int edges_job(struct side_job *j)
{
	return export_edges(&j->x, j->gci, j->s);
}

/* A GC with a graph: the edges on a side job from the moment the state is
 * there (they need nothing else), beside the histogram's closures, the
 * dominator tree and the objects. */
static int export_graph_gc(struct exp_trace *x, uint32_t gci, const struct heap_state *s)
{
	struct side_job j;
	side_start(&j, x, edges_job, gci, s);
	int rc = export_histogram(x, gci);
	if (!rc)
		rc = export_objects(x, gci, s);
	if (!rc)
		rc = export_roots(x, gci, s);
	int jrc = side_join(&j, x);
	return rc ? rc : jrc;
}

/* A recording that records no objects (JFR) has no per-GC tables: an
 * empty histogram would say the heap held nothing (its GC directories hold
 * info only, for the same reason). */
static int export_gc(struct exp_trace *x, uint32_t gci)
{
	const struct heap_state *s = NULL;
	if (x->t->objects_unrecorded)
		return 0;
	if (!eng_gc_has_graph(&x->fs->en, gci))
		return export_histogram(x, gci);
	progress_phase(x->p, 0, "export %s: heap state of GC %" PRIu32, x->name, x->t->gcs[gci].gc);
	int rc = eng_state_get(&x->fs->en, gci, &s);
	if (rc)
		return rc;
	rc = s->has_graph ? export_graph_gc(x, gci, s) : export_histogram(x, gci);
	eng_state_put(&x->fs->en, s);
	return rc;
}

/* The gc indexes the range selects, or a message why none can be. */
static int select_gcs(const struct exp_args *a, const struct trace *t, uint32_t **sel, uint32_t *nsel,
		      char *msg, size_t len)
{
	*sel = NULL;
	*nsel = 0;
	if (!t->ngcs) {
		snprintf(msg, len, "the trace has no complete GC");
		return -ENOENT;
	}
	uint32_t first = t->gcs[0].gc, last = t->gcs[t->ngcs - 1].gc;
	/* an end the range names must be one of the trace's GC numbers' span */
	if (a->has_range && !a->latest &&
	    ((a->has_lo && (a->gc_lo < first || a->gc_lo > last)) || (a->has_hi && (a->gc_hi < first || a->gc_hi > last)))) {
		snprintf(msg, len, "--gcs %s is out of range: the trace's GCs are %" PRIu32 "-%" PRIu32, a->range, first,
			 last);
		return -ERANGE;
	}
	if (!(*sel = malloc(t->ngcs * sizeof **sel)))
		return -ENOMEM;
	for (uint32_t i = 0; i < t->ngcs; i++) {
		uint32_t gc = t->gcs[i].gc;
		if (a->latest ? i == t->ngcs - 1 : !a->has_range || (gc >= a->gc_lo && gc <= a->gc_hi))
			(*sel)[(*nsel)++] = i;
	}
	return 0;
}

/* ---- staging and committing ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

/* Removes a directory tree of ours (no symbolic links followed). */
static int rm_tree(const char *path)
{
	if (access(path, F_OK))
		return 0;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

/* Moves one table's trace=NAME from the staging directory into DIR,
 * exchanging it with the one there (atomically: a reader sees the old
 * partitions or the new, never none); the old goes into the staging
 * directory, removed with it.  A table this export has no partitions of
 * loses the old ones. */
static int commit_table(struct exp_trace *x, const char *dir, const char *table)
{
	char src[PATH_MAX], dst[PATH_MAX], parent[PATH_MAX], old[PATH_MAX];
	if (snprintf(src, sizeof src, "%s/%s/trace=%s", x->stage, table, x->name) >= (int)sizeof src ||
	    snprintf(parent, sizeof parent, "%s/%s", dir, table) >= (int)sizeof parent ||
	    snprintf(dst, sizeof dst, "%s/trace=%s", parent, x->name) >= (int)sizeof dst ||
	    snprintf(old, sizeof old, "%s/old-%s", x->stage, table) >= (int)sizeof old)
		return -ENAMETOOLONG;
	int have_new = !access(src, F_OK), have_old = !access(dst, F_OK);
	if (!have_new)
		return have_old && rename(dst, old) ? -errno : 0;
	int rc = mkdirs(parent);
	if (rc)
		return rc;
	if (have_old)
		return renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_EXCHANGE) ? -errno : 0;
	return rename(src, dst) ? -errno : 0;
}

/* Every file written is made durable before any is moved into place: one
 * syncfs for the staging directory's file system, not an fsync per part
 * (a trace of 1,000 GCs has 4,000 of them). */
static int commit_trace(struct exp_trace *x, const char *dir)
{
	progress_phase(x->p, 0, "export %s: syncing and moving the tables into place", x->name);
	int fd = open(x->stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = syncfs(fd) ? -errno : 0;
	close(fd);
	for (size_t k = 0; k < NTABLES && !rc; k++)
		rc = commit_table(x, dir, table_names[k]);
	return rc;
}

static void fail_msg(const struct exp_trace *x, const char *what, int rc)
{
	char why[600] = "";
	if (rc == -EINTR)
		progress_note(stderr, "heapfs export: %s: interrupted by a signal; none of its tables were moved into place\n",
			      x->path);
	else if (rc == -EIO && x->fs && eng_last_error(&x->fs->en, why, sizeof why))
		progress_note(stderr, "heapfs export: %s: %s: %s\n", x->path, what, why);
	else
		progress_note(stderr, "heapfs export: %s: %s: %s\n", x->path, what, strerror(-rc));
}

static int open_trace(struct exp_trace *x)
{
	struct mountopts mo;
	struct win_params wp;
	struct sus_params sp;
	struct hfs_opts o;
	struct htr_err err;
	memset(&mo, 0, sizeof mo);
	memset(&err, 0, sizeof err);
	int rc = mountopts_parse_opts(&mo, 0, NULL);
	if (!rc) {
		heapfs_tree_opts(&mo, &wp, &sp, &o);
		rc = hfs_open(&x->fs, x->path, &o, &err);
		if (rc) {
			char line[sizeof err.msg + PATH_MAX + 64];
			hfs_open_error_text(line, sizeof line, x->path, rc, &err);
			progress_note(stderr, "heapfs export: %s\n", line);
			x->fs = NULL;
		}
	}
	mountopts_free(&mo);
	return rc;
}

static int allocs_job(struct side_job *j)
{
	return export_allocs(&j->x);
}

/* Every table of the trace into its staging directory (messages printed). */
static int stage_trace(struct exp_trace *x, const uint32_t *sel, uint32_t nsel)
{
	struct side_job aj;
	char msg[64];
	side_start(&aj, x, allocs_job, 0, NULL);
	int rc = export_gcs(x, sel, nsel);
	if (rc)
		fail_msg(x, "the timeline", rc);
	for (uint32_t k = 0; k < nsel && !rc; k++) {
		if ((rc = interrupted()) || (rc = export_gc(x, sel[k]))) {
			snprintf(msg, sizeof msg, "GC %" PRIu32, x->t->gcs[sel[k]].gc);
			fail_msg(x, msg, rc);
		}
	}
	int arc = side_join(&aj, x);
	if (arc && !rc)
		fail_msg(x, "allocation sites", arc);
	return rc ? rc : arc;
}

/* Writes every table of one trace into its staging directory and moves
 * them into DIR.  Messages printed here; returns 0 or negative errno. */
static int export_one(const struct exp_args *a, struct exp_trace *x)
{
	uint32_t *sel = NULL, nsel = 0;
	char msg[256];
	int rc = open_trace(x), staged = 0;
	if (rc)
		return rc;
	x->t = x->fs->en.trace;
	if ((rc = select_gcs(a, x->t, &sel, &nsel, msg, sizeof msg))) {
		if (rc != -ENOMEM)
			progress_note(stderr, "heapfs export: %s: %s\n", x->path, msg);
		else
			fail_msg(x, "selecting GCs", rc);
		goto out;
	}
	if ((rc = names_build(&x->nm, x->t))) {
		fail_msg(x, "naming types, sites and threads", rc);
		goto out;
	}
	errno = 0;
	if (snprintf(x->stage, sizeof x->stage, "%s/.heapfs-export-%s.XXXXXX", a->dir, x->name) >= (int)sizeof x->stage ||
	    !mkdtemp(x->stage)) {
		rc = errno ? -errno : -ENAMETOOLONG;
		fail_msg(x, "creating the staging directory", rc);
		goto out;
	}
	staged = 1;
	rc = stage_trace(x, sel, nsel);
	if (!rc && (rc = interrupted()))
		fail_msg(x, "interrupted", rc);
	if (!rc && (rc = commit_trace(x, a->dir)))
		fail_msg(x, "moving the tables into place", rc);
out:
	if (staged) {
		int rm = rm_tree(x->stage);
		if (rm && !rc) {
			fail_msg(x, "removing the staging directory", rm);
			rc = rm;
		}
	}
	free(sel);
	names_free(&x->nm);
	hfs_close(x->fs);
	x->fs = NULL;
	return rc;
}

/* Two traces of one name would replace each other's partitions. */
static int check_names(const struct exp_args *a, char (*names)[NAME_MAX / 2])
{
	for (int i = 0; i < a->ntraces; i++) {
		trace_name(a->traces[i], names[i], sizeof names[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return usage_error("%s and %s would both be trace=%s: rename one", a->traces[j],
						   a->traces[i], names[i]);
	}
	return 0;
}

/* Every input is a readable regular file before anything is written:
 * traces are exported one after another, and a missing third one should
 * not be found after the first two are in place. */
static int check_readable(const struct exp_args *a)
{
	for (int i = 0; i < a->ntraces; i++) {
		const char *what;
		int fd = file_open_regular(a->traces[i], NULL, &what);
		if (fd < 0) {
			fprintf(stderr, "heapfs export: %s: %s\n", a->traces[i], what);
			return 1;
		}
		close(fd);
	}
	return 0;
}

int export_cli_main(int argc, char **argv)
{
	struct exp_args a;
	char (*names)[NAME_MAX / 2] = NULL;
	int st = parse_args(&a, argc, argv);
	if (st == -1) {
		fputs(help_text, stdout);
		st = 0;
		goto out;
	}
	if (st)
		goto out;
	if (!(names = calloc((size_t)a.ntraces, sizeof *names))) {
		fprintf(stderr, "heapfs export: out of memory\n");
		st = 1;
		goto out;
	}
	if ((st = check_names(&a, names)) || (st = check_readable(&a)))
		goto out;
	int rc = mkdirs(a.dir);
	if (rc) {
		fprintf(stderr, "heapfs export: -o %s: %s\n", a.dir, strerror(-rc));
		st = 1;
		goto out;
	}
	signals_catch();
	for (int i = 0; i < a.ntraces && !st && !stop_signal; i++) {
		struct exp_trace x;
		memset(&x, 0, sizeof x);
		x.path = a.traces[i];
		x.p = progress_here();
		snprintf(x.name, sizeof x.name, "%s", names[i]);
		uint64_t t0 = progress_now_ns();
		if (export_one(&a, &x)) {
			st = 1;
			break;
		}
		double s = (double)(progress_now_ns() - t0) / 1e9;
		if (!a.quiet)
			progress_note(stderr, "heapfs export: %s: trace=%s, %" PRIu64 " rows, %.1f MB of values, %.1f MB written, "
				      "%.2f s (%.2f s writing rows)\n", x.path, x.name, x.rows, (double)x.raw_bytes / 1e6,
				      (double)x.file_bytes / 1e6, s, (double)x.write_ns / 1e9);
	}
	signals_restore();
out:
	free(names);
	free(a.traces);
	return st;
}

/* mountopts.c - parse and check the mount command line (see mountopts.h).
 *
 * Two tables drive everything:
 *   heapfs_opts  the heapfs -o options: name, field (offsetof), default,
 *                range, help.  Adding an option is one row here plus its
 *                field in struct mountopts (and, if it interacts with
 *                others, a line in check_cross_options).
 *   fuse_opts    the allow-list of FUSE and mount options passed through to
 *                libfuse, with the kind of value each takes.
 * fuse_opt_parse walks argv; the flags (-f -s) are filled through the
 * fuse_opt table by offsetof, everything else reaches opt_proc.
 */
#include "mountopts/mountopts.h"

#include "analyses/suspects.h"
#include "analyses/windows.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- heapfs options ---------------------------------------------------- */

struct heapfs_opt {
	const char *name;
	size_t offset;          /* of a uint64_t in struct mountopts */
	uint64_t def, min, max;
	const char *help;
};

/* Integer options.  A later kind of value (a file name, a ratio) gets its
 * own kind field and parser here; no such option exists yet. */
static const struct heapfs_opt heapfs_opts[] = {
	{ "cache_mb", offsetof(struct mountopts, cache_mb), 1024, 16, 1048576,
	  "memory for cached heap states, MiB" },
	{ "threads", offsetof(struct mountopts, threads), 0, 0, 256,
	  "threads one analysis uses (0: HEAPFS_THREADS, else every core)" },
	{ "fuse_threads", offsetof(struct mountopts, fuse_threads), 10, 1, 256,
	  "maximum FUSE worker threads" },
#define WOPT(name, def, min, max, help) { #name, offsetof(struct mountopts, name), def, min, max, help }
	WOPT(leak_min_gcs_pct, WIN_DEF_LEAK_MIN_GCS_PCT, 0, 100,
	     "windows/leak: the window covers at least this % of all GCs"),
	WOPT(leak_keep_pct, WIN_DEF_LEAK_KEEP_PCT, 1, 100,
	     "windows/leak: a drop is tolerated down to this % of the window's maximum"),
	WOPT(narrow_min_pct, WIN_DEF_NARROW_MIN_PCT, 1, 100,
	     "windows/leak-narrow: smallest subwindow, % of the leak window's points"),
	WOPT(narrow_max_pct, WIN_DEF_NARROW_MAX_PCT, 1, 100,
	     "windows/leak-narrow: largest subwindow, % of the leak window's points"),
	WOPT(regression_start_pct, WIN_DEF_REGRESSION_START_PCT, 1, 100,
	     "windows/leak-regression: first window, the last % of all GCs"),
	WOPT(gc_window_min, WIN_DEF_GC_WINDOW_MIN, 1, 100000, "windows/gc-overhead: fewest GCs"),
	WOPT(gc_window_max, WIN_DEF_GC_WINDOW_MAX, 1, 100000, "windows/gc-overhead: most GCs"),
	WOPT(gc_overhead_min_pct, WIN_DEF_GC_OVERHEAD_MIN_PCT, 0, 100,
	     "windows/gc-overhead: reported from this % of time in GC"),
	WOPT(churn_window_min, WIN_DEF_CHURN_WINDOW_MIN, 1, 100000, "windows/churn: fewest GCs"),
	WOPT(churn_window_max, WIN_DEF_CHURN_WINDOW_MAX, 1, 100000, "windows/churn: most GCs"),
	WOPT(churn_min_bytes_per_s, WIN_DEF_CHURN_MIN_BYTES_PER_S, 0, UINT64_MAX / 1000000000u,
	     "windows/churn: reported from this many bytes freed per second"),
	WOPT(reachable_every, WIN_DEF_REACHABLE_EVERY, 1, 1000000,
	     "reachable memory at every K-th GC with a graph (timeline/, windows/)"),
	/* suspects (analyses/suspects.h) */
	WOPT(suspect_big_pct, SUS_DEF_BIG_PCT, 1, 100,
	     "suspects: big retainers retain at least this % of the reachable heap"),
	WOPT(suspect_accum_pct, SUS_DEF_ACCUM_PCT, 50, 100,
	     "suspects: accumulation point: descend while one child retains this % of its parent"),
	WOPT(suspect_overhead_pct, SUS_DEF_OVERHEAD_PCT, 1, 100,
	     "suspects: bloat: structure bytes are this % of structure plus data bytes"),
	WOPT(suspect_empty_min, SUS_DEF_EMPTY_MIN, 1, 1000000000,
	     "suspects: bloat: this many empty or one-element structures of a type"),
	WOPT(suspect_top, SUS_DEF_TOP, 1, 5, "suspects: groups listed per ranking"),
#undef WOPT
};
#define N_HEAPFS_OPTS (sizeof heapfs_opts / sizeof heapfs_opts[0])
_Static_assert(N_HEAPFS_OPTS <= 32, "mountopts.given has one bit per option");

/* File options: a path, kept as given (the tree opens and checks it, so
 * its errors can name line and column). */
struct heapfs_path_opt {
	const char *name;
	size_t offset;          /* of a char * in struct mountopts (owned) */
	const char *help;
};
static const struct heapfs_path_opt heapfs_path_opts[] = {
	{ "features", offsetof(struct mountopts, features),
	  "feature map for by-feature: FEATURE PATTERN... lines (README);\n"
	  "                      a regular file of at most 1 MiB" },
	{ "classifiers", offsetof(struct mountopts, classifiers),
	  "user-defined classifiers: NAME = EXPR definitions (classifiers/README);\n"
	  "                      a regular file of at most 1 MiB" },
};
#define N_HEAPFS_PATH_OPTS (sizeof heapfs_path_opts / sizeof heapfs_path_opts[0])

/* Choice options: one word of a fixed list, stored as its index (0 is the
 * default). */
struct heapfs_choice_opt {
	const char *name;
	size_t offset;          /* of an int in struct mountopts */
	const char *choices[4]; /* NULL-terminated; choices[0] is the default */
	const char *help;
};

static const struct heapfs_choice_opt heapfs_choice_opts[] = {
	/* index = enum hprof_layout (model/hprof.h) */
	{ "layout", offsetof(struct mountopts, layout), { "visualvm", "hotspot", NULL },
	  "heap dumps: object sizes as VisualVM computes them, or HotSpot's layout (docs/hprof.md)" },
};
#define N_HEAPFS_CHOICE_OPTS (sizeof heapfs_choice_opts / sizeof heapfs_choice_opts[0])

/* Stores the index of value among o's choices; refuses anything else. */
static int take_choice_opt(struct mountopts *mo, const struct heapfs_choice_opt *o,
			   const char *value);

/* ---- the FUSE allow-list ----------------------------------------------- */

enum fuse_val {
	VAL_NONE,       /* a flag: no "=value" */
	VAL_UINT,       /* decimal, fits 32 bits (libfuse parses it with %u) */
	VAL_OCTAL,      /* octal mode bits, at most 0777 */
	VAL_STRING,     /* any non-empty string */
};

enum fuse_dest {
	TO_LIBFUSE,     /* kept in fuse_args: fuse_new / the mount code / kernel */
	TO_CONN,        /* kept in fuse_args, consumed by fuse_parse_conn_info_opts */
	TO_NOWHERE,     /* accepted and dropped: heapfs already does it */
};

struct fuse_allowed {
	const char *name;
	enum fuse_val val;
	enum fuse_dest dest;
	const char *help;
};

/* What libfuse 3.14 accepts, checked option by option against the installed
 * library (fuse_new on "-o OPT"; tests/unit/test_mountopts.c does the same).
 * Left out on purpose: the cache and timeout options (entry_timeout,
 * attr_timeout, negative_timeout, ac_attr_timeout, kernel_cache,
 * auto_cache, direct_io, use_ino): heapfs sets them per file for
 * correctness (a file whose size is not known yet must not be cached as
 * empty); blkdev and blksize (block-device mounts only); modules= (needs
 * libfuse modules that are not installed); user= (mtab bookkeeping).
 * Refused by libfuse 3.14 itself: nonempty, large_read, hard_remove,
 * readdir_ino, nopath, relatime and the other *time flags not listed. */
static const struct fuse_allowed fuse_opts[] = {
	{ "allow_other", VAL_NONE, TO_LIBFUSE, "let other users see the mount" },
	{ "allow_root", VAL_NONE, TO_LIBFUSE, "let root see the mount" },
	{ "auto_unmount", VAL_NONE, TO_LIBFUSE, "unmount when heapfs exits" },
	{ "default_permissions", VAL_NONE, TO_LIBFUSE, "kernel checks permissions" },
	{ "fsname", VAL_STRING, TO_LIBFUSE, "source name in the mount table (default: TRACE)" },
	{ "subtype", VAL_STRING, TO_LIBFUSE, "type fuse.SUBTYPE in the mount table (default: heapfs)" },
	{ "max_read", VAL_UINT, TO_LIBFUSE, "largest read request, bytes" },
	{ "ro", VAL_NONE, TO_LIBFUSE, "read-only mount" },
	{ "rw", VAL_NONE, TO_LIBFUSE, NULL },
	{ "suid", VAL_NONE, TO_LIBFUSE, NULL },
	{ "nosuid", VAL_NONE, TO_LIBFUSE, NULL },
	{ "dev", VAL_NONE, TO_LIBFUSE, NULL },
	{ "nodev", VAL_NONE, TO_LIBFUSE, NULL },
	{ "exec", VAL_NONE, TO_LIBFUSE, NULL },
	{ "noexec", VAL_NONE, TO_LIBFUSE, NULL },
	{ "async", VAL_NONE, TO_LIBFUSE, NULL },
	{ "sync", VAL_NONE, TO_LIBFUSE, NULL },
	{ "dirsync", VAL_NONE, TO_LIBFUSE, NULL },
	{ "atime", VAL_NONE, TO_LIBFUSE, NULL },
	{ "noatime", VAL_NONE, TO_LIBFUSE, NULL },
	{ "context", VAL_STRING, TO_LIBFUSE, NULL },
	{ "fscontext", VAL_STRING, TO_LIBFUSE, NULL },
	{ "defcontext", VAL_STRING, TO_LIBFUSE, NULL },
	{ "rootcontext", VAL_STRING, TO_LIBFUSE, NULL },
	{ "umask", VAL_OCTAL, TO_LIBFUSE, "mask applied to permission bits (octal)" },
	{ "uid", VAL_UINT, TO_LIBFUSE, "owner of every file (default: the mounting user)" },
	{ "gid", VAL_UINT, TO_LIBFUSE, "group of every file (default: the mounting user's)" },
	{ "noforget", VAL_NONE, TO_LIBFUSE, NULL },
	{ "remember", VAL_UINT, TO_LIBFUSE, NULL },
	{ "no_rofd_flush", VAL_NONE, TO_LIBFUSE, NULL },
	{ "max_readahead", VAL_UINT, TO_CONN, "kernel readahead limit, bytes" },
	{ "max_background", VAL_UINT, TO_CONN, "kernel limit of background requests" },
	{ "congestion_threshold", VAL_UINT, TO_CONN, NULL },
	{ "async_read", VAL_NONE, TO_CONN, NULL },
	{ "sync_read", VAL_NONE, TO_CONN, NULL },
	/* libfuse 2's -o intr; libfuse 3 takes it only from the filesystem,
	 * and heapfs always turns it on. */
	{ "intr", VAL_NONE, TO_NOWHERE, "interruptible requests (always on)" },
};
#define N_FUSE_OPTS (sizeof fuse_opts / sizeof fuse_opts[0])

/* ---- fuse_opt plumbing ------------------------------------------------- */

enum { KEY_DEBUG, KEY_HELP };

/* The fuse_opt data pointer: mo first, so the offsetof() rows of the
 * fuse_opt table land in it. */
struct parse_ctx {
	struct mountopts mo;
	int fsname_given, subtype_given;
	int no_mount;   /* heapfs ls/cat: heapfs options only (mountopts_parse_opts) */
	int oom;        /* a copy failed: the parse returns -ENOMEM, not a usage error */
};
_Static_assert(offsetof(struct parse_ctx, mo) == 0, "mo must be first");

#define FLAG(t, field) { t, offsetof(struct mountopts, field), 1 }
static const struct fuse_opt flag_table[] = {
	FLAG("-f", foreground),
	FLAG("-s", single_thread),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_END
};

static int fail(struct mountopts *mo, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records the first error only: later ones are usually consequences. */
static int fail(struct mountopts *mo, const char *fmt, ...)
{
	if (mo->error[0] == '\0') {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(mo->error, sizeof mo->error, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Out of memory while taking an option: not the user's mistake. */
static int fail_oom(struct parse_ctx *ctx)
{
	ctx->oom = 1;
	return fail(&ctx->mo, "out of memory");
}

/* Decimal digits only (no sign, no spaces, no 0x); 0 or -ERANGE/-EINVAL. */
static int parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static const struct heapfs_opt *find_heapfs_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < N_HEAPFS_OPTS; i++)
		if (strlen(heapfs_opts[i].name) == len && memcmp(heapfs_opts[i].name, name, len) == 0)
			return &heapfs_opts[i];
	return NULL;
}

static const struct fuse_allowed *find_fuse_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < N_FUSE_OPTS; i++)
		if (strlen(fuse_opts[i].name) == len && memcmp(fuse_opts[i].name, name, len) == 0)
			return &fuse_opts[i];
	return NULL;
}

void mountopts_win_params(const struct mountopts *mo, struct win_params *p)
{
	win_params_default(p);
	p->leak_min_gcs_pct = (uint32_t)mo->leak_min_gcs_pct;
	p->leak_keep_pct = (uint32_t)mo->leak_keep_pct;
	p->narrow_min_pct = (uint32_t)mo->narrow_min_pct;
	p->narrow_max_pct = (uint32_t)mo->narrow_max_pct;
	p->regression_start_pct = (uint32_t)mo->regression_start_pct;
	p->gc_window_min = (uint32_t)mo->gc_window_min;
	p->gc_window_max = (uint32_t)mo->gc_window_max;
	p->gc_overhead_min_pct = (uint32_t)mo->gc_overhead_min_pct;
	p->churn_window_min = (uint32_t)mo->churn_window_min;
	p->churn_window_max = (uint32_t)mo->churn_window_max;
	p->churn_min_bytes_per_s = mo->churn_min_bytes_per_s;
	p->reachable_every = (uint32_t)mo->reachable_every;
}

void mountopts_sus_params(const struct mountopts *mo, struct sus_params *p)
{
	sus_params_default(p);
	p->big_pct = (uint32_t)mo->suspect_big_pct;
	p->accum_pct = (uint32_t)mo->suspect_accum_pct;
	p->overhead_pct = (uint32_t)mo->suspect_overhead_pct;
	p->empty_min = mo->suspect_empty_min;
	p->top = (uint32_t)mo->suspect_top;
}

int mountopts_is_fuse_option(const char *name)
{
	return find_fuse_opt(name, strlen(name)) != NULL;
}

/* value is NULL when the option had no '='. */
static int take_heapfs_opt(struct mountopts *mo, const struct heapfs_opt *o, const char *value)
{
	uint64_t v;
	if (value == NULL || parse_decimal(value, &v) != 0 || v < o->min || v > o->max)
		return fail(mo, "invalid value for %s: '%s' (expected an integer %llu..%llu)", o->name,
			    value ? value : "", (unsigned long long)o->min, (unsigned long long)o->max);
	*(uint64_t *)((char *)mo + o->offset) = v;
	mo->given |= 1u << (o - heapfs_opts);
	return 0;
}

static int check_fuse_value(struct mountopts *mo, const struct fuse_allowed *o, const char *value)
{
	uint64_t v;
	switch (o->val) {
	case VAL_NONE:
		if (value != NULL)
			return fail(mo, "invalid value for %s: '%s' (expected no value)", o->name, value);
		return 0;
	case VAL_UINT:
		if (value == NULL || parse_decimal(value, &v) != 0 || v > UINT32_MAX)
			return fail(mo, "invalid value for %s: '%s' (expected an integer 0..%u)", o->name,
				    value ? value : "", UINT32_MAX);
		return 0;
	case VAL_OCTAL:
		if (value == NULL || *value == '\0' || strspn(value, "01234567") != strlen(value) ||
		    strtoul(value, NULL, 8) > 0777)
			return fail(mo, "invalid value for %s: '%s' (expected octal 0..777)", o->name,
				    value ? value : "");
		return 0;
	case VAL_STRING:
		if (value == NULL || *value == '\0')
			return fail(mo, "invalid value for %s: '' (expected a string)", o->name);
		return 0;
	}
	return fail(mo, "internal error: option %s", o->name);
}

/* An option that no table row matched: a heapfs option, an allowed FUSE
 * option, or a refusal.  Returns 0 (consumed), 1 (keep for libfuse), -1. */
static int take_option(struct parse_ctx *ctx, const char *arg)
{
	struct mountopts *mo = &ctx->mo;
	const char *eq = strchr(arg, '=');
	size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
	const char *value = eq ? eq + 1 : NULL;

	if (arg[0] == '-')
		return fail(mo, "unknown option '%s'", arg);
	for (size_t i = 0; i < N_HEAPFS_PATH_OPTS; i++) {
		const struct heapfs_path_opt *po = &heapfs_path_opts[i];
		if (strlen(po->name) != name_len || memcmp(po->name, arg, name_len) != 0)
			continue;
		if (value == NULL || *value == '\0')
			return fail(mo, "invalid value for %s: expected a file name", po->name);
		char **slot = (char **)((char *)mo + po->offset);
		free(*slot);
		*slot = strdup(value);
		return *slot ? 0 : fail_oom(ctx);
	}
	for (size_t i = 0; i < N_HEAPFS_CHOICE_OPTS; i++) {
		const struct heapfs_choice_opt *co = &heapfs_choice_opts[i];
		if (strlen(co->name) == name_len && memcmp(co->name, arg, name_len) == 0)
			return take_choice_opt(mo, co, value);
	}
	const struct heapfs_opt *h = find_heapfs_opt(arg, name_len);
	if (h)
		return take_heapfs_opt(mo, h, value);
	const struct fuse_allowed *f = find_fuse_opt(arg, name_len);
	if (!f)
		return fail(mo, "unknown option '%s'", arg);
	if (ctx->no_mount)
		return fail(mo, "option '%s' is a mount option: it means nothing without a mount", arg);
	if (check_fuse_value(mo, f, value) != 0)
		return -1;
	if (strcmp(f->name, "fsname") == 0)
		ctx->fsname_given = 1;
	if (strcmp(f->name, "subtype") == 0)
		ctx->subtype_given = 1;
	return f->dest == TO_NOWHERE ? 0 : 1;
}

static int take_choice_opt(struct mountopts *mo, const struct heapfs_choice_opt *o,
			   const char *value)
{
	for (int k = 0; o->choices[k]; k++)
		if (value && strcmp(value, o->choices[k]) == 0) {
			*(int *)((char *)mo + o->offset) = k;
			return 0;
		}
	char list[128] = "";
	for (int k = 0; o->choices[k]; k++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
			 o->choices[k]);
	return fail(mo, "invalid value for %s: '%s' (expected one of %s)", o->name,
		    value ? value : "", list);
}

static int take_positional(struct parse_ctx *ctx, const char *arg)
{
	struct mountopts *mo = &ctx->mo;
	char **slot = mo->trace == NULL ? &mo->trace : mo->mountpoint == NULL ? &mo->mountpoint : NULL;
	/* `heapfs mount TRACE MNT` reads as TRACE "mount": say how to mount */
	if (slot == NULL && strcmp(mo->trace, "mount") == 0)
		return fail(mo, "unexpected argument '%s' (there is no 'mount' command: "
			    "mount with heapfs [-o OPT[,OPT...]] TRACE MOUNTPOINT)", arg);
	if (slot == NULL)
		return fail(mo, "unexpected argument '%s'", arg);
	if (*arg == '\0')
		return fail(mo, "empty %s argument", slot == &mo->trace ? "TRACE" : "MOUNTPOINT");
	*slot = strdup(arg);
	return *slot ? 0 : fail_oom(ctx);
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct parse_ctx *ctx = data;
	(void)outargs;
	switch (key) {
	case KEY_DEBUG:
		if (ctx->no_mount)
			return fail(&ctx->mo, "option '%s' is a mount option: it means nothing without a mount",
				    arg);
		ctx->mo.debug = 1;
		ctx->mo.foreground = 1;
		return 1; /* libfuse prints the requests */
	case KEY_HELP:
		ctx->mo.help = 1;
		return 0;
	case FUSE_OPT_KEY_NONOPT:
		return take_positional(ctx, arg);
	case FUSE_OPT_KEY_OPT:
		return take_option(ctx, arg);
	}
	return fail(&ctx->mo, "internal error: option key %d", key);
}

static int was_given(const struct mountopts *mo, const char *name)
{
	const struct heapfs_opt *o = find_heapfs_opt(name, strlen(name));
	return o != NULL && (mo->given & (1u << (o - heapfs_opts))) != 0;
}

/* Pairs of heapfs options that must agree (mount, ls and cat alike). */
static int check_option_pairs(struct mountopts *mo)
{
	if (mo->narrow_min_pct > mo->narrow_max_pct)
		return fail(mo, "narrow_min_pct=%llu is above narrow_max_pct=%llu",
			    (unsigned long long)mo->narrow_min_pct, (unsigned long long)mo->narrow_max_pct);
	if (mo->gc_window_min > mo->gc_window_max)
		return fail(mo, "gc_window_min=%llu is above gc_window_max=%llu",
			    (unsigned long long)mo->gc_window_min, (unsigned long long)mo->gc_window_max);
	if (mo->churn_window_min > mo->churn_window_max)
		return fail(mo, "churn_window_min=%llu is above churn_window_max=%llu",
			    (unsigned long long)mo->churn_window_min,
			    (unsigned long long)mo->churn_window_max);
	return 0;
}

static int check_cross_options(struct mountopts *mo)
{
	if (mo->help)
		return 0;
	if (mo->trace == NULL)
		return fail(mo, "missing TRACE and MOUNTPOINT");
	if (mo->mountpoint == NULL)
		return fail(mo, "missing MOUNTPOINT");
	if (mo->single_thread && was_given(mo, "fuse_threads") && mo->fuse_threads > 1)
		return fail(mo, "-s (single-threaded) conflicts with fuse_threads=%llu",
			    (unsigned long long)mo->fuse_threads);
	return check_option_pairs(mo);
}

/* fsname=TRACE and subtype=heapfs make `mount` and `df` say what is mounted. */
static int add_default_fuse_opts(struct parse_ctx *ctx)
{
	struct mountopts *mo = &ctx->mo;
	char *opts = NULL;
	int rc = 0;
	if (!ctx->fsname_given) {
		char *abs = realpath(mo->trace, NULL);
		size_t n = strlen(abs ? abs : mo->trace) + sizeof "fsname=";
		char *o = malloc(n);
		if (o) {
			snprintf(o, n, "fsname=%s", abs ? abs : mo->trace);
			rc = fuse_opt_add_opt_escaped(&opts, o);
		} else {
			rc = -1;
		}
		free(o);
		free(abs);
	}
	if (rc == 0 && !ctx->subtype_given)
		rc = fuse_opt_add_opt(&opts, "subtype=heapfs");
	if (rc == 0 && opts != NULL) {
		rc = fuse_opt_add_arg(&mo->fuse_args, "-o");
		if (rc == 0)
			rc = fuse_opt_add_arg(&mo->fuse_args, opts);
	}
	free(opts);
	return rc == 0 ? 0 : -ENOMEM;
}

static void set_defaults(struct mountopts *mo)
{
	for (size_t i = 0; i < N_HEAPFS_OPTS; i++)
		*(uint64_t *)((char *)mo + heapfs_opts[i].offset) = heapfs_opts[i].def;
}

int mountopts_parse(struct mountopts *mo_out, int argc, char **argv)
{
	struct parse_ctx ctx;
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int rc;

	memset(&ctx, 0, sizeof ctx);
	set_defaults(&ctx.mo);
	/* fuse_opt would only log this one; say it ourselves. */
	if (argc > 1 && strcmp(argv[argc - 1], "-o") == 0) {
		fail(&ctx.mo, "missing argument after -o");
		rc = -EINVAL;
		goto out;
	}
	if (fuse_opt_parse(&args, &ctx, flag_table, opt_proc) != 0) {
		fail(&ctx.mo, "invalid command line");
		rc = ctx.oom ? -ENOMEM : -EINVAL;
		goto out;
	}
	ctx.mo.fuse_args = args;
	args = (struct fuse_args)FUSE_ARGS_INIT(0, NULL);
	if (check_cross_options(&ctx.mo) != 0) {
		rc = -EINVAL;
		goto out;
	}
	rc = ctx.mo.help ? 0 : add_default_fuse_opts(&ctx);
out:
	fuse_opt_free_args(&args);
	*mo_out = ctx.mo;
	return rc;
}

int mountopts_parse_opts(struct mountopts *mo_out, int nopts, const char *const *opts)
{
	struct parse_ctx ctx;
	int rc = 0;

	memset(&ctx, 0, sizeof ctx);
	set_defaults(&ctx.mo);
	ctx.no_mount = 1;
	/* the same walk as a mount's "-o OPTS": fuse_opt splits at unescaped
	 * commas and every option reaches take_option */
	for (int i = 0; i < nopts && rc == 0; i++) {
		char *av[] = { "heapfs", "-o", (char *)opts[i], NULL };
		struct fuse_args args = FUSE_ARGS_INIT(3, av);
		if (opts[i][0] == '\0') {
			fail(&ctx.mo, "empty -o argument");
			rc = -EINVAL;
		} else if (fuse_opt_parse(&args, &ctx, flag_table, opt_proc) != 0) {
			fail(&ctx.mo, "invalid option list '%s'", opts[i]);
			rc = ctx.oom ? -ENOMEM : -EINVAL;
		}
		fuse_opt_free_args(&args);
	}
	if (rc == 0 && check_option_pairs(&ctx.mo) != 0)
		rc = -EINVAL;
	*mo_out = ctx.mo;
	return rc;
}

void mountopts_free(struct mountopts *mo)
{
	free(mo->trace);
	free(mo->mountpoint);
	free(mo->features);
	free(mo->classifiers);
	fuse_opt_free_args(&mo->fuse_args);
	mo->trace = mo->mountpoint = NULL;
	mo->features = mo->classifiers = NULL;
}

void mountopts_print_help(FILE *out)
{
	fprintf(out,
		"Mount:  heapfs [-f] [-d] [-s] [-o OPT[,OPT...]] TRACE MOUNTPOINT\n"
		"Unmount: fusermount3 -u MOUNTPOINT\n"
		"\n"
		"  -f                  stay in the foreground (indexing progress and errors on stderr)\n"
		"  -d                  debug: log every FUSE request on stderr (implies -f)\n"
		"  -s                  single-threaded (one request at a time)\n");
	for (size_t i = 0; i < N_HEAPFS_OPTS; i++) {
		const struct heapfs_opt *o = &heapfs_opts[i];
		char lhs[64];
		snprintf(lhs, sizeof lhs, "-o %s=N", o->name);
		fprintf(out, "  %-19s %s (default %llu, %llu..%llu)\n", lhs, o->help,
			(unsigned long long)o->def, (unsigned long long)o->min,
			(unsigned long long)o->max);
	}
	for (size_t i = 0; i < N_HEAPFS_PATH_OPTS; i++) {
		char lhs[64];
		snprintf(lhs, sizeof lhs, "-o %s=FILE", heapfs_path_opts[i].name);
		fprintf(out, "  %-19s %s\n", lhs, heapfs_path_opts[i].help);
	}
	for (size_t i = 0; i < N_HEAPFS_CHOICE_OPTS; i++) {
		const struct heapfs_choice_opt *o = &heapfs_choice_opts[i];
		char lhs[64];   /* "-o layout=visualvm|hotspot" */
		snprintf(lhs, sizeof lhs, "-o %s=", o->name);
		for (int k = 0; o->choices[k]; k++)
			snprintf(lhs + strlen(lhs), sizeof lhs - strlen(lhs), "%s%s", k ? "|" : "",
				 o->choices[k]);
		fprintf(out, "  %-19s %s (default %s)\n", lhs, o->help, o->choices[0]);
	}
	fprintf(out, "\nFUSE and mount options passed to libfuse (see mount.fuse3(8)):\n");
	for (size_t i = 0; i < N_FUSE_OPTS; i++) {
		const struct fuse_allowed *o = &fuse_opts[i];
		if (o->help == NULL)
			continue;
		char lhs[64];
		snprintf(lhs, sizeof lhs, "-o %s%s", o->name,
			 o->val == VAL_NONE ? "" : o->val == VAL_STRING ? "=S" : "=N");
		fprintf(out, "  %-26s %s\n", lhs, o->help);
	}
	fprintf(out, "  also:");
	size_t col = 7;
	for (size_t i = 0; i < N_FUSE_OPTS; i++) {
		if (fuse_opts[i].help != NULL)
			continue;
		const char *suffix = fuse_opts[i].val == VAL_NONE ? "" : "=";
		size_t w = strlen(fuse_opts[i].name) + strlen(suffix) + 1;
		if (col + w > 78) {
			fprintf(out, "\n       ");
			col = 7;
		}
		fprintf(out, " %s%s", fuse_opts[i].name, suffix);
		col += w;
	}
	fprintf(out, "\n  Other options are refused.\n");
}

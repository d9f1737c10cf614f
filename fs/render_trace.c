/* render_trace.c - the files about the whole trace: README, status,
 * trace/info, timeline/gcs.csv.  All cheap (no heap state). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/jobs.h"
#include "model/progress.h"
#include "render.h"
#include "render_windows.h"
#include "table.h"
#include "tree_internal.h"

static const char readme_text[] =
	"heapfs - a Java memory trace as a directory tree\n"
	"\n"
	"Every file is computed the first time it is read and then cached.  Files\n"
	"that need a heap state (everything under gc/NNN/ except directories)\n"
	"report size 0 until they have been read once; read them with cat, head,\n"
	"grep, Python open().read() as usual.  Numbers are plain integers: bytes,\n"
	"counts, milliseconds since the first event of the trace.  Tabular files\n"
	"are TSV with a header row (tables also come as .csv and .json).\n"
	"\n"
	"  README              this file\n"
	"  status              indexing progress, warnings (truncated trace), cache use\n"
	"  trace/info          key<TAB>value: source file, format, VM, GCs, allocations, ...\n"
	"  timeline/gcs.csv    one row per GC: gc,start_ms,end_ms,pause_ms,cause,\n"
	"                      used_before,used_after,reachable,freed,allocated\n"
	"                      (an empty field: the trace has no value)\n"
	"  timeline/memory.svg heap used, reachable memory, GC pauses, windows found\n"
	"  windows/KIND        suspicious time windows (leak, leak-narrow,\n"
	"                      leak-regression, gc-overhead, churn): key<TAB>value,\n"
	"                      found or not and why; windows/summary: all in one TSV\n"
	"  windows/diff/KIND/  start, end -> the window's GCs; diff -> their heap diff;\n"
	"                      growing: types and sites ranked by net growth\n"
	"  allocs/by-site      allocations per site (Class.method:line) and type over\n"
	"                      the whole run; by-method; stats (counter increments vs\n"
	"                      per-site counting): from the agent's mode=count\n"
	"                      counters, else from the allocation events; of a JFR\n"
	"                      recording, its allocation samples (estimates)\n"
	"  leak-candidates/    a JFR recording's old-object samples: table (per type\n"
	"                      and site, with a path from the root), samples, info\n"
	"  gc/NNN/             the heap after GC number NNN (zero-padded to the width\n"
	"                      of the largest number, at least 3 digits; only that\n"
	"                      spelling exists); gc/latest -> the last GC\n"
	"  roots -> gc/latest/roots   (when the last GC carries a graph)\n"
	"\n"
	"A GC directory is the group of all objects live after that GC:\n"
	"  info                key<TAB>value: time, cause, objects, bytes, reachable\n"
	"                      objects and bytes, whether the GC carries a graph\n"
	"  count shallow_size  the group's object count and summed shallow bytes\n"
	"  summary             key<TAB>value of the group's metrics\n"
	"  by-<classifier>/    the group split by a classifier (below)\n"
	"  objects/<id>/       one object (decimal id): info, and refs, referrers at\n"
	"                      GCs with a graph.  Lookup only: `ls objects/` shows\n"
	"                      just objects/all, the ids of all objects, ascending.\n"
	"  roots/table         the GC roots: kind, object, type, detail (GCs with a graph)\n"
	"\n"
	"A classification directory (by-type/, by-site/, by-thread/) holds one group\n"
	"directory per child that has objects at this GC, and\n"
	"  table table.csv table.json   one row per child: name, count, shallow_size,\n"
	"                      sorted by shallow_size (largest first), then name;\n"
	"                      name is the child's directory name\n"
	"Every child group directory has count, shallow_size, summary, objects (the\n"
	"member ids, ascending, one per line) and by-<classifier>/ for each\n"
	"classifier not used yet on the way down (a chain never repeats one).\n"
	"gc/NNN/by-type/X/by-thread/Y is the objects of type X allocated by thread Y.\n"
	"Listings stay small so that find, du and grep -r finish: below the first\n"
	"classification a group lists its by-* directories, but those list only\n"
	"their tables; type a child's name (the tables list them) to go deeper,\n"
	"as deep as you like.  A diff (gc/NNN/diff/MMM) lists one level the same way.\n"
	"\n"
	"Classifiers:\n";

static const char readme_names[] =
	"\n"
	"Names.  Type, site and thread names become directory names by this rule:\n"
	"  - '%', '/', NUL, control bytes (0x01-0x1F) and DEL are written %XX (hex,\n"
	"    upper case): java/lang/Foo -> java%2Flang%2FFoo, 50% -> 50%25;\n"
	"  - a name that equals \".\", \"..\" or a file name the tree uses itself\n"
	"    (count, shallow_size, deep_count, deep_size, retained_count,\n"
	"    retained_size, summary, objects, table, info, roots, refs, referrers,\n"
	"    closure, points-to, pointed-from, stack, latest, dominator,\n"
	"    path-to-root, README, status, diff, ds, all, and anything starting with\n"
	"    by-, only-, table., born_, died_, perm_) has its first byte written\n"
	"    %XX: a class named count is %63ount;\n"
	"  - the empty name is %;\n"
	"  - a name longer than 255 bytes once escaped is cut (at a character\n"
	"    boundary) and ends in %~ and 16 hex digits of a hash of the full name;\n"
	"  - different things with one name (two classes of one name from\n"
	"    different class loaders, two threads called main) are told apart by\n"
	"    %#2, %#3, ... on all but the first.\n"
	"Decoding every %XX gives the name back (up to a %~ or %#).  A name has\n"
	"the same spelling at every GC.\n"
	"\n"
	"The tree is read-only; writes fail with EROFS.\n";

int render_readme(struct hfs *fs, struct buf *out)
{
	int rc = buf_put(out, readme_text, sizeof readme_text - 1);
	/* The classifiers known at mount (classifiers/list has them all). */
	for (uint32_t k = 0; k < cls_count(&fs->en.reg) && !rc; k++) {
		const struct cls_def *d = cls_get(&fs->en.reg, k);
		if (d)
			rc = buf_printf(out, "  %s%-18s %s\n", d->card == CARD_FILTER ? "only-" : "by-",
					d->name, d->about);
	}
	return rc ? rc : buf_put(out, readme_names, sizeof readme_names - 1);
}

/* key<TAB>value with the value made safe for one line. */
static int kv_str(struct buf *out, const char *k, const char *v)
{
	int rc = buf_printf(out, "%s\t", k);
	if (!rc)
		rc = put_tsv_field(out, v, strlen(v));
	return rc ? rc : buf_putc(out, '\n');
}

static uint64_t ms_since_start(const struct trace *t, uint64_t ns)
{
	return ns > t->first_ns ? (ns - t->first_ns) / 1000000 : 0;
}

static uint32_t defined_types(const struct trace *t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->ntypes; i++)
		n += t->types[i].name != NULL;
	return n;
}

static uint32_t defined_sites(const struct trace *t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->nsites; i++)
		n += t->sites[i].nframes > 0;
	return n;
}

int render_trace_info(struct hfs *fs, struct buf *out)
{
	return render_trace_summary(fs->en.trace, out);
}

int render_trace_summary(const struct trace *t, struct buf *out)
{
	char ver[32];
	snprintf(ver, sizeof ver, "%u.%u", t->file->major, t->file->minor);
	int rc = kv_str(out, "source", t->path);
	if (!rc) rc = kv_str(out, "format_version", ver);
	if (!rc) rc = kv_str(out, "footer", t->had_footer ? "yes" : "no");
	if (!rc) rc = kv_str(out, "truncated", t->truncated ? "yes" : "no");
	if (!rc && t->truncated) rc = kv_u64(out, "truncated_at", t->truncated_at);
	if (!rc && t->identity_unknown)
		rc = kv_str(out, "object_identity",
			    "unknown across GCs: heap dumps give objects by address, which moving "
			    "collections change; diffs give net changes, not births or deaths");
	if (!rc) rc = kv_u64(out, "file_bytes", t->source_bytes);
	if (!rc) rc = kv_u64(out, "gcs", t->ngcs);
	if (!rc) rc = kv_u64(out, "graph_gcs", trace_count_gcs(t, HTR_GC_HAS_GRAPH));
	if (!rc) rc = kv_u64(out, "graph_dropped_gcs", trace_count_gcs(t, HTR_GC_GRAPH_DROPPED));
	if (!rc) rc = kv_u64(out, "deaths_merged_gcs", trace_count_gcs(t, HTR_GC_DEATHS_MERGED));
	if (!rc) rc = kv_u64(out, "frames", t->nframes);
	if (t->sample_interval) { /* mode=sample: what was recorded are samples */
		if (!rc) rc = kv_str(out, "allocations", "");
		if (!rc) rc = kv_str(out, "alloc_bytes", "");
		if (!rc) rc = kv_str(out, "deaths", "");
		if (!rc) rc = kv_u64(out, "sampled_allocations", t->total_allocs);
		if (!rc) rc = kv_u64(out, "sampled_alloc_bytes", t->total_alloc_bytes);
		if (!rc) rc = kv_u64(out, "sampled_deaths", t->total_deaths);
		if (!rc) rc = kv_str(out, "sampling", "the agent's mode=sample: objects are samples, "
				     "counts estimates (allocs/, gc/NNN/est_count)");
	} else if (!t->objects_unrecorded) {
		if (!rc) rc = kv_u64(out, "allocations", t->total_allocs);
		if (!rc) rc = kv_u64(out, "alloc_bytes", t->total_alloc_bytes);
		if (!rc) rc = kv_u64(out, "deaths", t->total_deaths);
	} else { /* a JFR recording: no objects, only samples */
		if (!rc) rc = kv_str(out, "allocations", "");
		if (!rc) rc = kv_str(out, "alloc_bytes", "");
		if (!rc) rc = kv_str(out, "deaths", "");
	}
	if (!rc && t->alloc_samples) rc = kv_u64(out, "alloc_samples", t->alloc_samples);
	if (!rc && t->old_samples) rc = kv_u64(out, "old_object_samples", t->old_samples);
	if (!rc) rc = kv_u64(out, "duration_ms", t->last_ns > t->first_ns ?
			     (t->last_ns - t->first_ns) / 1000000 : 0);
	if (!rc) rc = kv_u64(out, "types", defined_types(t));
	if (!rc) rc = kv_u64(out, "sites", defined_sites(t));
	if (!rc) rc = kv_u64(out, "threads", t->nthreads);
	uint32_t overheads = 0;
	for (uint32_t i = 0; i < t->ninfo && !rc; i++) {
		/* one per GC: counted below, not listed */
		if (!strcmp(t->info[i].key, "agent.overhead")) {
			overheads++;
			continue;
		}
		rc = put_tsv_field(out, t->info[i].key, strlen(t->info[i].key));
		if (!rc)
			rc = buf_putc(out, '\t');
		if (!rc)
			rc = put_tsv_field(out, t->info[i].value, strlen(t->info[i].value));
		if (!rc)
			rc = buf_putc(out, '\n');
	}
	if (!rc && overheads)
		rc = buf_printf(out, "agent.overhead\t%" PRIu32 " GCs: the agent's time taken from the program "
				"before each (windows/ run on the program's own time)\n", overheads);
	return rc;
}

/* timeline/gcs.csv is written row by row without the table module: at
 * 10^6 GCs a cell per value (and a copy per cause) costs seconds, and the
 * goal is one second.  Same format as table_render_csv: an empty field
 * where the trace has no value, RFC 4180 quoting of the cause. */
static const char gcs_header[] =
	"gc,start_ms,end_ms,pause_ms,cause,used_before,used_after,reachable,freed,allocated\n";

/* Appends v in decimal and a separator to p; returns the new end. */
static char *put_dec(char *p, uint64_t v, char sep)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	*p++ = sep;
	return p;
}

/* As put_dec, or only the separator when v is UINT64_MAX (unknown). */
static char *put_opt(char *p, uint64_t v, char sep)
{
	if (v == UINT64_MAX) {
		*p++ = sep;
		return p;
	}
	return put_dec(p, v, sep);
}

static int gcs_row(struct buf *out, const struct trace *t, const struct htr_gc_summary *g,
		   uint64_t reachable)
{
	char line[8 * 22];
	char *p = put_dec(line, g->gc, ',');
	p = put_dec(p, ms_since_start(t, g->start_ns), ',');
	p = put_dec(p, ms_since_start(t, g->end_ns), ',');
	p = put_opt(p, g->end_ns >= g->start_ns ? (g->end_ns - g->start_ns) / 1000000 : UINT64_MAX,
		    ',');
	int rc = buf_put(out, line, (size_t)(p - line));
	if (!rc)
		rc = put_csv_field(out, g->cause, strnlen(g->cause, sizeof g->cause));
	if (rc)
		return rc;
	p = line;
	*p++ = ',';
	p = put_opt(p, g->used_before, ',');
	p = put_opt(p, g->used_after, ',');
	/* reachable: at GCs with a graph (every reachable_every-th of them) */
	p = put_opt(p, reachable, ',');
	int have_freed = g->used_before != UINT64_MAX && g->used_after != UINT64_MAX &&
		g->used_before >= g->used_after;
	p = put_opt(p, have_freed ? g->used_before - g->used_after : UINT64_MAX, ',');
	/* allocated: unknown where allocations are not all recorded (a JFR
	 * recording, a sampled one) */
	p = put_opt(p, t->objects_unrecorded || t->sample_interval ? UINT64_MAX : g->alloc_bytes, '\n');
	return buf_put(out, line, (size_t)(p - line));
}

int render_gcs_csv(struct hfs *fs, struct buf *out)
{
	const struct trace *t = fs->en.trace;
	const uint64_t *reach;
	int rc = eng_reachable_series(&fs->en, &reach);
	if (!rc)
		rc = buf_reserve(out, sizeof gcs_header + (size_t)t->ngcs * 80);
	if (!rc)
		rc = buf_put(out, gcs_header, sizeof gcs_header - 1);
	for (uint32_t i = 0; i < t->ngcs && !rc; i++)
		rc = gcs_row(out, t, &t->gcs[i], reach[i]);
	return rc;
}


/* The memory bound (README, "Memory"): what is cached stays within
 * cache_mb, except states pinned by computations under way and the most
 * recently used state when it alone is larger than the states' budget
 * (model/state_cache.h: kept rather than rebuilt for every read); at most
 * compute_threads computations run at once (renders and listings), each holding at most
 * WORKING_SET_STATES states' worth (two states and a build base pinned,
 * and temporaries no larger than two states); the rest is fixed: the
 * process's peak while it opened the trace, and the remembered sizes. */
#define WORKING_SET_STATES 5

static int render_memory_status(struct hfs *fs, const struct state_cache_stats *ss,
				const struct rcache_stats *rs, struct buf *out)
{
	struct jobs_stats js = { 0 }, ls = { 0 };
	if (fs->jobs)
		jobs_stats(fs->jobs, &js);
	if (fs->list_jobs)
		jobs_stats(fs->list_jobs, &ls);
	uint64_t fixed = fs->open_peak + rs->sizes_bytes;
	uint64_t ws = WORKING_SET_STATES * ss->largest;
	uint64_t over = ss->largest > ss->budget ? ss->largest : 0; /* a state kept over budget */
	/* listings need states too (a classification's census) */
	uint64_t threads = (uint64_t)js.max_threads + ls.max_threads;
	js.running += ls.running;
	js.queued += ls.queued;
	js.skipped += ls.skipped;
	js.abandoned += ls.abandoned;
	int rc = kv_u64(out, "state_cache_peak", ss->peak_used);
	if (!rc) rc = kv_u64(out, "largest_state", ss->largest);
	if (!rc) rc = kv_u64(out, "compute_threads", threads);
	if (!rc) rc = kv_u64(out, "computations_running", js.running);
	if (!rc) rc = kv_u64(out, "computations_queued", js.queued);
	if (!rc) rc = kv_u64(out, "reads_interrupted", js.abandoned);
	if (!rc) rc = kv_u64(out, "computations_dropped", js.skipped);
	if (!rc) rc = kv_u64(out, "memory_cache_budget", fs->cache_budget);
	if (!rc) rc = kv_u64(out, "memory_fixed", fixed);
	if (!rc) rc = kv_u64(out, "largest_working_set", ws);
	if (!rc) rc = kv_u64(out, "memory_bound", fixed + fs->cache_budget + over + threads * ws);
	if (!rc) rc = kv_u64(out, "rss", proc_status_bytes("VmRSS"));
	if (!rc) rc = kv_u64(out, "peak_rss", proc_status_bytes("VmHWM"));
	return rc;
}

/* One `work` line per computation running (model/progress.h): phase,
 * done, total (0: not known), seconds in the phase, seconds left at its
 * rate so far (-1: not known). */
static int work_line(void *ctx, const struct progress_view *v)
{
	struct buf *out = ctx;
	char line[PROGRESS_PHASE_MAX + 96];
	int n = snprintf(line, sizeof line, "%" PRIu64 "\t%" PRIu64 "\t%.1f\t%.0f\n", v->done, v->total,
			 v->phase_s, v->eta_s < 0 ? -1.0 : v->eta_s);
	int rc = buf_put(out, "work\t", 5);
	if (!rc) rc = put_tsv_field(out, v->phase, strlen(v->phase));
	if (!rc) rc = buf_putc(out, '\t');
	if (!rc) rc = buf_put(out, line, (size_t)n);
	return rc;
}

int render_status(struct hfs *fs, struct buf *out)
{
	const struct trace *t = fs->en.trace;
	struct state_cache_stats ss;
	struct rcache_stats rs;
	char err[sizeof fs->en.last_error];
	state_cache_stats(fs->en.states, &ss);
	rcache_stats(fs->en.rc, &rs);
	uint64_t done = __atomic_load_n(&t->progress_done, __ATOMIC_RELAXED);
	uint64_t total = __atomic_load_n(&t->progress_total, __ATOMIC_RELAXED);
	int rc = kv_str(out, "trace", t->path);
	if (!rc) rc = kv_str(out, "indexing", done >= total ? "done" : "running");
	if (!rc) rc = kv_u64(out, "indexing_done", done);
	if (!rc) rc = kv_u64(out, "indexing_total", total);
	if (!rc) rc = kv_str(out, "truncated", t->truncated ? "yes" : "no");
	if (!rc && t->truncated) rc = kv_u64(out, "truncated_at", t->truncated_at);
	if (!rc) rc = kv_u64(out, "state_cache_budget", ss.budget);
	if (!rc) rc = kv_u64(out, "state_cache_used", ss.used);
	if (!rc) rc = kv_u64(out, "states_cached", ss.cached);
	if (!rc) rc = kv_u64(out, "states_building", ss.building);
	if (!rc) rc = kv_u64(out, "state_cache_hits", ss.hits);
	if (!rc) rc = kv_u64(out, "state_builds", ss.builds);
	if (!rc) rc = kv_u64(out, "state_evictions", ss.evictions);
	if (!rc && ss.building) rc = kv_u64(out, "build_done", ss.build_done);
	if (!rc && ss.building) rc = kv_u64(out, "build_total", ss.build_total);
	if (!rc) rc = kv_u64(out, "render_cache_budget", rs.budget);
	if (!rc) rc = kv_u64(out, "render_cache_used", rs.used);
	if (!rc) rc = kv_u64(out, "render_cache_entries", rs.entries);
	if (!rc) rc = kv_u64(out, "render_cache_hits", rs.hits);
	if (!rc) rc = kv_u64(out, "render_cache_misses", rs.misses);
	if (!rc) rc = kv_u64(out, "render_cache_waits", rs.waits);
	if (!rc) rc = kv_u64(out, "render_cache_evictions", rs.evictions);
	if (!rc) rc = kv_u64(out, "render_results", rs.misses);
	if (!rc) rc = kv_u64(out, "render_recomputed", rs.recomputed);
	if (!rc) rc = kv_u64(out, "render_size_changed", rs.size_changed);
	if (!rc) rc = kv_u64(out, "render_sizes_known", rs.sizes_known);
	if (!rc) rc = render_memory_status(fs, &ss, &rs, out);
	if (!rc) rc = progress_each(work_line, out);
	if (!rc && hfs_last_error(fs, err, sizeof err)) rc = kv_str(out, "error", err);
	if (!rc) rc = render_windows_status(fs, out);
	/* Warnings of the trace, one "warning" line each. */
	const char *w = t->warnings ? t->warnings : "";
	while (*w && !rc) {
		const char *nl = strchr(w, '\n');
		size_t len = nl ? (size_t)(nl - w) : strlen(w);
		if (len) {
			rc = buf_put(out, "warning\t", 8);
			if (!rc) rc = put_tsv_field(out, w, len);
			if (!rc) rc = buf_putc(out, '\n');
		}
		w += len + (nl ? 1 : 0);
	}
	return rc;
}

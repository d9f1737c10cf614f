/* render_suspects.c - `suspects` and `suspects.json` (render_suspects.h):
 * the report of analyses/suspects_find.h (computed and cached by
 * analyses/suspects_engine.h) printed as text and as JSON.
 *
 * Both files print one struct sus_report, item by item: what an item says
 * (its text) and the tree paths that show it are built here, once, from
 * its numbers and ids, and the two printers only lay them out.  Texts are
 * made to fit one line (tabs and line breaks become spaces) and cut where
 * the report has always cut them: claims and checks at 2,047 bytes,
 * titles at 1,023, a path's part below gc/NNN/ at 1,799.
 */
#include "render_suspects.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/suspects_engine.h"
#include "analyses/winstate.h"
#include "render_windows.h"
#include "table.h"
#include "tree_internal.h"

#define TEXT_COLS 80

static const char *const kind_names[SUS_KIND_COUNT] = {
	"leak", "gc-overhead", "churn", "big-retainers", "bloat",
};
static const char *const kind_titles[SUS_KIND_COUNT] = {
	"Leak", "GC overhead", "Churn", "Big retainers", "Bloat",
};

/* The keyspaces the report's keys belong to. */
struct names {
	struct hfs *fs;
	const struct cls_def *type, *site, *ir, *ds, *ih;
};

static int names_init(struct names *nm, struct hfs *fs)
{
	const char *const want[5] = { "type", "site", "indirect-root", "ds", "instance-health" };
	const struct cls_def **slot[5] = { &nm->type, &nm->site, &nm->ir, &nm->ds, &nm->ih };
	nm->fs = fs;
	for (int k = 0; k < 5; k++) {
		uint32_t id = cls_find(&fs->en.reg, want[k]);
		/* type and site fill their keyspaces from the trace on first use */
		int rc = id == CLS_NONE ? -EIO : k < 2 ? cls_prepare(&fs->en.reg, id) : 0;
		if (rc)
			return rc;
		if (!(*slot[k] = cls_get(&fs->en.reg, id)))
			return -EIO;
	}
	return 0;
}

static const char *group_dir(int site)
{
	return site ? "by-site" : "by-type";
}

static const char *group_name(const struct names *nm, int site, uint32_t key)
{
	return ks_name(site ? &nm->site->ks : &nm->type->ks, key);
}

static const char *type_name(const struct names *nm, uint32_t key)
{
	return ks_name(&nm->type->ks, key);
}

/* "a/b/c": a root's by-indirect-root names from the top. */
static int put_ir_path(const struct names *nm, const uint32_t *keys, uint32_t n, struct buf *out)
{
	int rc = 0;
	for (uint32_t k = 0; k < n && !rc; k++)
		rc = buf_printf(out, "%s%s", k ? "/" : "", ks_name(&nm->ir->ks, keys[k]));
	return rc ? rc : buf_putc(out, '\0');
}


/* ---- what each item says ---- */

/* One line of text: tabs and line breaks become spaces. */
static size_t one_line(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
			s[i] = ' ';
	}
	return len;
}

/* printf into out[size], cut to fit, made one line; returns the length. */
static size_t say(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static size_t say(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0) {
		out[0] = '\0';
		return 0;
	}
	return one_line(out, (size_t)n < size ? (size_t)n : size - 1);
}

struct rctx {
	struct names nm;
	const struct sus_report *r;
	struct buf tmp;
};

static const char *gc_name(const struct rctx *x, uint32_t gci, char buf[16])
{
	hfs_gc_name(x->nm.fs, gci, buf);
	return buf;
}

static size_t heading_text(const struct rctx *x, char out[2048])
{
	const struct trace *t = x->nm.fs->en.trace;
	const char *base = strrchr(t->path, '/');
	if (t->sample_interval)
		return say(out, 2048, "heapfs suspects: %s, %" PRIu32 " GCs; a sampled recording "
			   "(mode=sample, a mean interval of %" PRIu64 " bytes, %" PRIu64 " sampled "
			   "allocations): counts and bytes of objects are estimates", base ? base + 1 : t->path,
			   t->ngcs, t->sample_interval, t->total_allocs);
	return say(out, 2048, "heapfs suspects: %s, %" PRIu32 " GCs", base ? base + 1 : t->path,
		   t->ngcs);
}

static size_t check_text(const struct rctx *x, const struct sus_check *ck, char out[2048])
{
	switch (ck->what) {
	case SUS_CHECK_NO_GC:
		return say(out, 2048, "nothing to check: the trace has no GC");
	case SUS_CHECK_SCOPE:
		return say(out, 2048, "checked: leak, gc-overhead and churn windows; big retainers "
			   "(%" PRIu32 "%% of the heap) and bloat at %s", ck->big_pct,
			   ck->graph ? "the last GC with a graph" : "no GC (no object graph in the trace)");
	case SUS_CHECK_NO_WINDOW:
		return say(out, 2048, "no %s window: %s",
			   ck->window < SUS_KIND_COUNT ? kind_names[ck->window] : "",
			   sus_str(x->r, ck->reason));
	case SUS_CHECK_QUIET:
		return say(out, 2048, "no leak, GC-overhead or churn window: nothing grew or "
			   "collected suspiciously");
	}
	out[0] = '\0';
	return 0;
}

/* Whether the leak series is reachable memory (GCs with a graph) or the
 * heap in use after each GC (without: old garbage included). */
static int leak_on_reachable(const struct rctx *x)
{
	struct win_state_info w;
	win_state_info(x->nm.fs->en.win, &w);
	return w.leak_on_reachable;
}

/* " (estimated)" after object counts of a sampled trace. */
static const char *est_word(const struct rctx *x)
{
	return x->nm.fs->en.trace->sample_interval ? " (estimated)" : "";
}

static size_t title_text(const struct rctx *x, const struct sus_finding *f, char out[1024])
{
	char a[16], b[16];
	switch (f->kind) {
	case SUS_LEAK:
		return say(out, 1024, "memory grew by %" PRIu64 " bytes over GC %s..%s (%.0f bytes/s), "
			   "to %" PRIu64 " bytes %s", f->bytes, gc_name(x, f->start_gci, a),
			   gc_name(x, f->end_gci, b), f->per_s, f->reachable,
			   leak_on_reachable(x) ? "reachable" : "in use after GC");
	case SUS_GC_OVERHEAD:
		return say(out, 1024, "%" PRIu32 "%% of the time in GC over GC %s..%s (%" PRIu32
			   " GCs, %" PRIu64 " ms in GC)", f->pct, gc_name(x, f->start_gci, a),
			   gc_name(x, f->end_gci, b), f->end_gci - f->start_gci + 1, f->gc_ms);
	case SUS_CHURN:
		return say(out, 1024, "%.0f bytes/s freed over GC %s..%s (%" PRIu64 " bytes freed in %"
			   PRIu32 " GCs)", f->per_s, gc_name(x, f->start_gci, a),
			   gc_name(x, f->end_gci, b), f->bytes, f->end_gci - f->start_gci + 1);
	case SUS_BIG:
		return say(out, 1024, "at GC %s, retaining at least %" PRIu32 "%% of %" PRIu64
			   " reachable bytes", gc_name(x, f->end_gci, a), f->pct, f->bytes);
	case SUS_BLOAT:
		return say(out, 1024, "at GC %s: data structures and instances",
			   gc_name(x, f->end_gci, a));
	}
	out[0] = '\0';
	return 0;
}

/* The by-ds value of a holder claim ("element-of-T", "member-of-T"), cut
 * at 511 bytes as it always was, and where T starts in it. */
static const char *holder_type(const struct rctx *x, const struct sus_claim *c, char raw[512])
{
	snprintf(raw, 512, "%s", ks_raw(&x->nm.ds->ks, c->key2));
	return raw + (c->n ? 11 : 10);
}

/* The "a/b/c" of the claim's root, in x->tmp. */
static const char *claim_root(struct rctx *x, const struct sus_claim *c)
{
	buf_reset(&x->tmp);
	if (put_ir_path(&x->nm, x->r->ir_keys + c->ir_first, c->nir, &x->tmp))
		return NULL;
	return (const char *)x->tmp.data;
}

/* "ROOT > TYPE .field > TYPE [i] > TYPE" ("->" starts the path lines of
 * the text), in x->tmp. */
static const char *claim_hops(struct rctx *x, const struct sus_claim *c)
{
	int rc = 0;
	buf_reset(&x->tmp);
	for (uint32_t k = 0; k < c->nitems && !rc; k++) {
		const struct sus_hop *h = &x->r->hops[c->item_first + k];
		const char *via = sus_str(x->r, h->via);
		rc = buf_printf(&x->tmp, "%s%s%s > %s", k ? " " : "", k && via[0] != '[' ? "." : "", via,
				sus_str(x->r, h->type));
	}
	return rc || buf_putc(&x->tmp, '\0') ? NULL : (const char *)x->tmp.data;
}

/* "healthy 123 (40%), ..." in x->tmp. */
static const char *claim_shares(struct rctx *x, const struct sus_claim *c)
{
	int rc = 0;
	buf_reset(&x->tmp);
	for (uint32_t k = 0; k < c->nitems && !rc; k++) {
		const struct sus_share *s = &x->r->shares[c->item_first + k];
		rc = buf_printf(&x->tmp, "%s%s %" PRIu64 " (%" PRIu32 "%%)", k ? ", " : "",
				ks_raw(&x->nm.ih->ks, s->key), s->bytes, s->pct);
	}
	return rc || buf_putc(&x->tmp, '\0') ? NULL : (const char *)x->tmp.data;
}

/* The claim's text in out; -ENOMEM. */
static int claim_text(struct rctx *x, const struct sus_claim *c, char out[2048], size_t *len)
{
	const struct names *nm = &x->nm;
	const char *gn = group_name(nm, c->site, c->key), *what = c->site ? "site" : "type";
	const char *s;
	char g[16], raw[512];
	switch (c->what) {
	case SUS_C_LEAK_WINDOW:
		*len = say(out, 2048, "the leak window (suspicious-time-windows paper 3.2)");
		break;
	case SUS_C_LEAK_CAUTION:
		*len = say(out, 2048, "caution: the window starts at the first GC, so this may be "
			   "start-up or a program building its result, not a leak: a leak keeps "
			   "growing while the work stays the same");
		break;
	case SUS_C_LEAK_GROWERS:
		*len = say(out, 2048, "groups that grew most, by retained size at GC %s:",
			   gc_name(x, c->gci, g));
		break;
	case SUS_C_GROUP_GROWTH:
		*len = say(out, 2048, "%s %s: %+" PRId64 " bytes, %+" PRId64 " objects%s%s", what, gn,
			   c->net_bytes, c->net_count, est_word(x),
			   c->n ? "" : " (no graph at the window's end)");
		break;
	case SUS_C_GROUP_RETAINED:
		*len = say(out, 2048, "retains %" PRIu64 " bytes at the window's end", c->bytes);
		break;
	case SUS_C_GROUP_ROOT:
		if (!(s = claim_root(x, c)))
			return -ENOMEM;
		*len = say(out, 2048, "kept alive by the root %s (reaches %" PRIu64 " of %" PRIu64
			   " objects)", s, c->count, c->total);
		break;
	case SUS_C_GROUP_HOLDER:
		*len = say(out, 2048, "%s %s structures: %" PRIu64 " of them (data-structure roles)",
			   c->n ? "held as elements by" : "part of", holder_type(x, c, raw), c->count);
		break;
	case SUS_C_HOLDER_SITE:
		*len = say(out, 2048, "%s allocated at %s holds %" PRIu64 " of them",
			   type_name(nm, c->key2), gn, c->count);
		break;
	case SUS_C_GROUP_PATH:
		if (!(s = claim_hops(x, c)))
			return -ENOMEM;
		*len = say(out, 2048, "path: %s", s);
		break;
	case SUS_C_GROUP_NOT_SHARED:
		*len = say(out, 2048, "not shared: its %" PRIu32 " root objects retain no more together "
			   "(%" PRIu64 " bytes) than alone", c->n, c->bytes);
		break;
	case SUS_C_GROUP_SHARED:
		*len = say(out, 2048, "shared ownership (gc-roots paper 5.1): its %" PRIu32 " root "
			   "objects retain %" PRIu64 " bytes together, %" PRIu64 " alone: no single "
			   "owner frees it", c->n, c->bytes, c->bytes2);
		break;
	case SUS_C_GCO_WINDOW:
		*len = say(out, 2048, "the GC-overhead window (suspicious-time-windows paper 3.3)");
		break;
	case SUS_C_GCO_SURVIVORS:
		*len = say(out, 2048, "survivors make collections slow; most GCs survived "
			   "(bytes x GCs) in the window, at GC %s:", gc_name(x, c->gci, g));
		break;
	case SUS_C_GROUP_SURVIVED:
		*len = say(out, 2048, "%s %s: %" PRIu64 " objects survived%s, %" PRIu64 " byte-GCs", what,
			   gn, c->count, est_word(x), c->bytes);
		break;
	case SUS_C_CHURN_WINDOW:
		*len = say(out, 2048, "the churn window (suspicious-time-windows paper 3.4)");
		break;
	case SUS_C_CHURN_BORN_DEAD:
		*len = say(out, 2048, "born and dead inside the window (%" PRIu32 "%% of the bytes "
			   "allocated in it), from the allocation events:", c->pct);
		break;
	case SUS_C_GROUP_CHURNED:
		*len = say(out, 2048, "%s %s: %" PRIu64 " objects, %" PRIu64 " bytes%s%s%s", what, gn,
			   c->count, c->bytes, est_word(x), c->pct ? ", called most from " : "",
			   c->pct ? sus_str(x->r, c->key2) : "");
		break;
	case SUS_C_BIG_INTRO:
		*len = say(out, 2048, "the objects that retain the most (dominator tree):");
		break;
	case SUS_C_BIG_OBJECT:
		*len = say(out, 2048, "object %" PRIu64 " (%s) retains %" PRIu64 " bytes, %" PRIu32 "%%",
			   c->object, type_name(nm, c->key), c->bytes, c->pct);
		break;
	case SUS_C_ACCUMULATION:
		*len = say(out, 2048, "accumulation point %" PRIu32 " levels down: object %" PRIu64
			   " (%s) retains %" PRIu64 " bytes over %" PRIu32 " children", c->n, c->object,
			   type_name(nm, c->key), c->bytes, (uint32_t)c->count);
		break;
	case SUS_C_ACCUMULATED: {
		const char *roots = sus_str(x->r, c->n);
		char ap[512];
		snprintf(ap, sizeof ap, "%s", type_name(nm, c->key2));
		*len = say(out, 2048, "%" PRIu64 " instances of %s, retained through %s (object %" PRIu64 ")%s%s, "
			   "occupy %" PRIu64 " bytes", c->count, type_name(nm, c->key), ap, c->object,
			   *roots ? " under " : "", roots, c->bytes);
		break;
	}
	case SUS_C_BIG_TYPE:
		*len = say(out, 2048, "type %s retains %" PRIu64 " bytes together, %" PRIu32 "%%",
			   type_name(nm, c->key), c->bytes, c->pct);
		break;
	case SUS_C_BIG_TYPE_SPLIT:
		*len = say(out, 2048, "its objects one by one retain only %" PRIu64 " bytes: the rest "
			   "is shared with other owners", c->bytes);
		break;
	case SUS_C_BIG_NONE:
		*len = say(out, 2048, "none: no object or type retains %" PRIu32 "%% of the heap",
			   c->pct);
		break;
	case SUS_C_OVERHEAD:
		*len = say(out, 2048, "%" PRIu64 " %s structures: %" PRIu64 " bytes of structure for %"
			   PRIu64 " bytes of data (%" PRIu32 "%% overhead)", c->count,
			   type_name(nm, c->key), c->bytes, c->bytes2, c->pct);
		break;
	case SUS_C_EMPTY:
		*len = say(out, 2048, "%" PRIu64 " of %" PRIu64 " reachable %s are empty (%" PRIu64
			   " bytes)", c->count, c->total, type_name(nm, c->key), c->bytes);
		break;
	case SUS_C_SPARSE:
		*len = say(out, 2048, "%" PRIu64 " of %" PRIu64 " reachable %s use under %" PRIu32 "%% of their "
			   "slots (%" PRIu64 " bytes of unused slots in all)", c->count, c->total,
			   type_name(nm, c->key), c->pct, c->bytes);
		break;
	case SUS_C_NO_BLOAT:
		*len = say(out, 2048, "no structure kind whose overhead is %" PRIu32 "%% of it and 1%% "
			   "of the heap, no %" PRIu64 " empty collections of a type", c->pct, c->count);
		break;
	case SUS_C_HEALTH:
		if (!(s = claim_shares(x, c)))
			return -ENOMEM;
		*len = say(out, 2048, "instance health (bytes): %s", s);
		break;
	case SUS_C_CANDIDATES:
		*len = say(out, 2048, "leak candidates: %" PRIu64 " sampled objects still alive when the "
			   "recording was written (jdk.OldObjectSample), by type and allocation site:", c->count);
		break;
	case SUS_C_CANDIDATE:
		*len = say(out, 2048, "%s allocated at %s: %" PRIu64 " of the %" PRIu64 " samples, %" PRIu32
			   " of them allocated in the window", sus_str(x->r, c->key), sus_str(x->r, c->key2),
			   c->count, c->total, c->n);
		break;
	case SUS_C_CANDIDATE_HOLDER:
		if (!*sus_str(x->r, c->key)) {
			*len = say(out, 2048, "no path to a GC root was recorded, so what holds them is not "
				   "known (record with path-to-gc-roots=true)");
			break;
		}
		*len = say(out, 2048, "held through the static field %s: %" PRIu64 " of the %" PRIu64 " samples",
			   sus_str(x->r, c->key), c->count, c->total);
		break;
	case SUS_C_CANDIDATE_PATH:
		if (!(s = claim_hops(x, c)))
			return -ENOMEM;
		*len = say(out, 2048, "path of the oldest: %s", s);
		break;
	case SUS_C_SAMPLED_SITES:
		if (!c->count) {
			*len = say(out, 2048, "no allocation sample fell in the window (the JVM throttles "
				   "them: see allocs/stats)");
			break;
		}
		*len = say(out, 2048, "allocated most in the window, from %" PRIu64 " allocation samples "
			   "(estimates: %" PRIu64 " bytes in all):", c->count, c->bytes);
		break;
	case SUS_C_SAMPLED_SITE:
		*len = say(out, 2048, "%s at %s: about %" PRIu64 " bytes (%" PRIu64 " samples)",
			   sus_str(x->r, c->key), sus_str(x->r, c->key2), c->bytes, c->count);
		break;
	default:
		out[0] = '\0';
		*len = 0;
	}
	return 0;
}

/* ---- the paths that show an item ---- */

typedef int (*path_fn)(void *ctx, const char *path, size_t len);

struct paths {
	struct rctx *x;
	path_fn fn;
	void *ctx;
};

/* "gc/NNN/" + rest when gci != UINT32_MAX, else rest alone. */
static int path(struct paths *p, uint32_t gci, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int path(struct paths *p, uint32_t gci, const char *fmt, ...)
{
	char rest[1800], line[2048], g[16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof rest, fmt, ap);
	va_end(ap);
	size_t len = gci == UINT32_MAX ? say(line, sizeof line, "%s", rest) :
					 say(line, sizeof line, "gc/%s/%s", gc_name(p->x, gci, g), rest);
	return p->fn(p->ctx, line, len);
}

static int check_paths(struct paths *p, const struct sus_check *ck)
{
	static const enum win_kind wk[3] = { [SUS_LEAK] = WK_LEAK, [SUS_GC_OVERHEAD] = WK_GC_OVERHEAD,
					     [SUS_CHURN] = WK_CHURN };
	if (ck->what != SUS_CHECK_NO_WINDOW || ck->window >= 3)
		return 0;
	return path(p, UINT32_MAX, "windows/%s", win_kind_name(wk[ck->window]));
}

static int claim_paths(struct paths *p, const struct sus_claim *c)
{
	struct rctx *x = p->x;
	const struct names *nm = &x->nm;
	const char *dir = group_dir(c->site), *gn = group_name(nm, c->site, c->key), *s;
	uint32_t g = c->gci;
	int rc = 0;
	switch (c->what) {
	case SUS_C_LEAK_WINDOW:
		return path(p, UINT32_MAX, "windows/leak");
	case SUS_C_LEAK_GROWERS:
		return path(p, UINT32_MAX, "windows/diff/leak/growing");
	case SUS_C_GROUP_GROWTH:
		/* with a graph, the retained claim that follows shows it */
		return c->n ? 0 : path(p, g, "%s/%s/", dir, gn);
	case SUS_C_GROUP_RETAINED:
		return path(p, g, "%s/%s/retained_size", dir, gn);
	case SUS_C_GROUP_ROOT:
		if (!(s = claim_root(x, c)))
			return -ENOMEM;
		return path(p, g, "%s/%s/by-indirect-root/%s/", dir, gn, s);
	case SUS_C_GROUP_HOLDER:
		return path(p, g, "%s/%s/by-ds/%s/", dir, gn, ks_name(&nm->ds->ks, c->key2));
	case SUS_C_HOLDER_SITE:
		return path(p, g, "by-type/%s/by-site/%s/", type_name(nm, c->key2), gn);
	case SUS_C_GROUP_PATH:
		if (!(s = claim_root(x, c)))
			return -ENOMEM;
		return path(p, g, "%s/%s/%s%s%spaths", dir, gn, c->nir ? "by-indirect-root/" : "", s,
			    c->nir ? "/" : "");
	case SUS_C_GROUP_SHARED:
		rc = path(p, g, "%s/%s/roots", dir, gn);
		if (!rc && c->key2 != KS_NO_KEY)
			rc = path(p, g, "by-type/%s/retained_size", type_name(nm, c->key2));
		return rc;
	case SUS_C_GCO_WINDOW:
		return path(p, UINT32_MAX, "windows/gc-overhead");
	case SUS_C_GROUP_SURVIVED:
		return path(p, g, "%s/%s/by-age/", dir, gn);
	case SUS_C_CHURN_WINDOW:
		rc = path(p, UINT32_MAX, "windows/churn");
		return rc ? rc : path(p, UINT32_MAX, "timeline/gcs.csv");
	case SUS_C_GROUP_CHURNED:
		/* objects that never survived a GC are in no heap state: the
		 * window files are the evidence; the group directory only when
		 * some of its objects are alive at the window's end */
		return c->n ? path(p, g, "%s/%s/", dir, gn) : 0;
	case SUS_C_BIG_INTRO:
		return path(p, g, "dominators/top");
	case SUS_C_BIG_OBJECT:
		rc = path(p, g, "objects/%" PRIu64 "/retained_size", c->object);
		return rc ? rc : path(p, g, "objects/%" PRIu64 "/path-to-root", c->object);
	case SUS_C_ACCUMULATION:
		return path(p, g, "objects/%" PRIu64 "/", c->object);
	case SUS_C_ACCUMULATED:
		return path(p, g, "by-type/%s/", type_name(nm, c->key));
	case SUS_C_BIG_TYPE:
		return path(p, g, "by-type/%s/retained_size", type_name(nm, c->key));
	case SUS_C_OVERHEAD:
		rc = path(p, g, "ds/table");
		return rc ? rc : path(p, g, "by-type/%s/by-role/", type_name(nm, c->key));
	case SUS_C_EMPTY:
		return path(p, g, "by-type/%s/", type_name(nm, c->key));
	case SUS_C_SPARSE:
		rc = path(p, g, "ds/collections");
		return rc ? rc : path(p, g, "ds/collections-by-site");
	case SUS_C_NO_BLOAT:
		return path(p, g, "ds/table");
	case SUS_C_HEALTH:
		return path(p, g, "by-instance-health/table");
	case SUS_C_CANDIDATES:
		return path(p, UINT32_MAX, "leak-candidates/table");
	case SUS_C_SAMPLED_SITES:
		return path(p, UINT32_MAX, "allocs/by-site");
	default:
		return 0;
	}
}

/* ---- text ---- */

/* Words of text wrapped at TEXT_COLS, every line starting with indent
 * spaces (the first with first, which has the same width). */
static int put_wrapped(struct buf *out, const char *first, int indent, const char *s, size_t len)
{
	int col = 0, rc = buf_printf(out, "%s", first);
	col = (int)strlen(first);
	size_t i = 0;
	int at_start = 1;
	while (i < len && !rc) {
		size_t j = i;
		while (j < len && s[j] != ' ')
			j++;
		int w = (int)(j - i);
		if (!at_start && col + 1 + w > TEXT_COLS) {
			rc = buf_printf(out, "\n%*s", indent, "");
			col = indent;
			at_start = 1;
		}
		if (!rc && !at_start) {
			rc = buf_putc(out, ' ');
			col++;
		}
		if (!rc && w)
			rc = buf_put(out, s + i, (size_t)w);
		col += w;
		at_start = 0;
		i = j;
		while (i < len && s[i] == ' ')
			i++;
	}
	return rc ? rc : buf_putc(out, '\n');
}

struct text_paths {
	struct buf *out;
	int indent;
};

static int text_path(void *vctx, const char *p, size_t len)
{
	struct text_paths *t = vctx;
	return buf_printf(t->out, "%*s-> %.*s\n", t->indent, "", (int)len, p);
}

static int render_text(struct rctx *x, struct buf *out)
{
	const struct sus_report *r = x->r;
	char text[2048], title[1024], hd[1200];
	struct text_paths tp = { out, 2 };
	struct paths p = { x, text_path, &tp };
	size_t len = heading_text(x, text);
	int rc = put_wrapped(out, "", 2, text, len);
	for (uint32_t k = 0; k < r->nchecks && !rc; k++) {
		len = check_text(x, &r->checks[k], text);
		rc = put_wrapped(out, "", 2, text, len);
		tp.indent = 2;
		if (!rc) rc = check_paths(&p, &r->checks[k]);
	}
	for (uint32_t k = 0; k < r->nfindings && !rc; k++) {
		const struct sus_finding *f = &r->findings[k];
		title_text(x, f, title);
		int hl = snprintf(hd, sizeof hd, "%" PRIu32 ". %s (severity %" PRIu32 "): %s", k + 1,
				  kind_titles[f->kind], f->severity, title);
		if (hl < 0)
			hl = 0;
		rc = buf_putc(out, '\n');
		if (!rc)
			rc = put_wrapped(out, "", 3, hd, (size_t)hl < sizeof hd ? (size_t)hl : sizeof hd - 1);
		for (uint32_t j = 0; j < f->nclaims && !rc; j++) {
			const struct sus_claim *c = &r->claims[f->first_claim + j];
			char first[32];
			int ind = 3 + 2 * (c->level ? 1 : 0);
			snprintf(first, sizeof first, "%*s", ind, "");
			if (!(rc = claim_text(x, c, text, &len)))
				rc = put_wrapped(out, first, ind + 2, text, len);
			tp.indent = ind + 2;
			if (!rc) rc = claim_paths(&p, c);
		}
	}
	return rc;
}

/* ---- JSON ---- */

struct json_paths {
	struct buf *out;
	int n;
};

static int json_path(void *vctx, const char *p, size_t len)
{
	struct json_paths *j = vctx;
	int rc = buf_printf(j->out, "%s", j->n++ ? ", " : "");
	return rc ? rc : put_json_string(j->out, p, len);
}

static int render_json(struct rctx *x, struct buf *out)
{
	const struct sus_report *r = x->r;
	char text[2048], title[1024];
	struct json_paths jp = { out, 0 };
	struct paths p = { x, json_path, &jp };
	size_t len = heading_text(x, text);
	int rc = buf_printf(out, "{\"heading\": ");
	if (!rc) rc = put_json_string(out, text, len);
	if (!rc) rc = buf_printf(out, ",\n \"checked\": [");
	for (uint32_t k = 0; k < r->nchecks && !rc; k++) {
		len = check_text(x, &r->checks[k], text);
		rc = buf_printf(out, "%s\n  {\"text\": ", k ? "," : "");
		if (!rc) rc = put_json_string(out, text, len);
		if (!rc) rc = buf_printf(out, ", \"paths\": [");
		jp.n = 0;
		if (!rc) rc = check_paths(&p, &r->checks[k]);
		if (!rc) rc = buf_printf(out, "]}");
	}
	for (uint32_t k = 0; k < r->nfindings && !rc; k++) {
		const struct sus_finding *f = &r->findings[k];
		len = title_text(x, f, title);
		rc = buf_printf(out, k ? "]},\n  " : "],\n \"findings\": [\n  ");
		if (!rc) rc = buf_printf(out, "{\"kind\": ");
		if (!rc) rc = put_json_string(out, kind_names[f->kind], strlen(kind_names[f->kind]));
		if (!rc) rc = buf_printf(out, ", \"severity\": %" PRIu32 ", \"title\": ", f->severity);
		if (!rc) rc = put_json_string(out, title, len);
		if (!rc) rc = buf_printf(out, ", \"claims\": [");
		for (uint32_t j = 0; j < f->nclaims && !rc; j++) {
			const struct sus_claim *c = &r->claims[f->first_claim + j];
			rc = buf_printf(out, "%s\n   {\"level\": %d, \"text\": ", j ? "," : "",
					c->level ? 1 : 0);
			if (!rc) rc = claim_text(x, c, text, &len);
			if (!rc) rc = put_json_string(out, text, len);
			if (!rc) rc = buf_printf(out, ", \"paths\": [");
			jp.n = 0;
			if (!rc) rc = claim_paths(&p, c);
			if (!rc) rc = buf_printf(out, "]}");
		}
	}
	if (!rc)
		rc = buf_printf(out, r->nfindings ? "]}\n ]}\n" : "],\n \"findings\": []}\n");
	return rc;
}

int render_suspects(struct hfs *fs, enum sus_format fmt, struct buf *out)
{
	int json = fmt == SUS_JSON;
	struct rc_entry *e;
	struct sus_report r;
	struct rctx x;
	int rc = eng_suspects_get(&fs->en, &e, &r);
	if (rc)
		return rc;
	buf_init(&x.tmp);
	x.r = &r;
	if (!(rc = names_init(&x.nm, fs)))
		rc = json ? render_json(&x, out) : render_text(&x, out);
	buf_free(&x.tmp);
	eng_put(&fs->en, e);
	return rc;
}

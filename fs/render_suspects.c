/* render_suspects.c - `suspects` and `suspects.json` (render_suspects.h).
 *
 * Gathering writes a record blob, one record per line, fields separated by
 * tabs (texts never hold tabs or newlines: put_text replaces them):
 *   H <text>                      heading line of the report
 *   C <text>                      what was checked
 *   F <kind> <severity> <title>   a finding; the claims below belong to it
 *   T <level> <text>              a claim (level 0, or 1 for details)
 *   P <path>                      a tree path showing the claim before it
 * Findings are gathered one by one into their own bufs and sorted by
 * severity when the blob is assembled.  Both files parse the blob.
 */
#include "render_suspects.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/suspects.h"
#include "classify_ext.h"
#include "render_closure.h"
#include "render_ds.h"
#include "render_windows.h"
#include "table.h"
#include "tree_internal.h"

#define TEXT_COLS 80
#define MAX_FINDINGS 8
#define ROOT_LEAVES_MAX 3   /* indirect roots named per group */
#define ROOT_WALK_MAX 16    /* hierarchy nodes visited per group */
#define ROOT_QUEUE_MAX 128  /* nodes waiting to be visited */
#define HOLDER_SITES_MAX 2  /* head allocation sites named per group */
#define DETAIL_GROUPS 2     /* leak groups per classifier with roots, holder, path */
#define CLO_MEMO_MAX 16     /* GC closures remembered by member set */

enum fkind { FK_LEAK, FK_GC_OVERHEAD, FK_CHURN, FK_BIG, FK_BLOAT, FK_COUNT };
static const char *const fkind_names[FK_COUNT] = {
	"leak", "gc-overhead", "churn", "big-retainers", "bloat",
};
static const char *const fkind_titles[FK_COUNT] = {
	"Leak", "GC overhead", "Churn", "Big retainers", "Bloat",
};

struct finding {
	enum fkind kind;
	uint32_t severity;
	struct buf b;      /* its F, T and P records */
};

struct sctx {
	struct hfs *fs;
	const struct sus_params *p;
	uint32_t cls_type, cls_site, cls_ir, cls_ds, cls_ih;
	const struct cls_def *dtype, *dsite, *dir, *dds, *dih;
	struct finding f[MAX_FINDINGS];
	uint32_t nf;
	struct buf head;   /* H and C records */
	/* GC closures computed so far, by GC and member set (exact: the sets
	 * are compared): a type and a site often hold the same objects
	 * (HashMap$Node and HashMap.newNode), and the groups of one leak share
	 * their owners */
	struct clo_memo {
		uint32_t gci;
		uint64_t count;
		uint64_t *bits;       /* owned */
		struct closure_metrics deep, ret;
	} memo[CLO_MEMO_MAX];
	uint32_t nmemo;
	struct buf tmp;
};

/* ---- timing ---- */

/* HEAPFS_TIMING=1 in the environment: how long each part of the report
 * took, wall clock and this process's CPU time (the machine may be shared),
 * on stderr (what tests/bench/bench_suspects.sh shows). */
struct lap_t {
	double wall, cpu;
};

static void lap_now(struct lap_t *t)
{
	struct timespec w, c;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	t->wall = (double)w.tv_sec + (double)w.tv_nsec * 1e-9;
	t->cpu = (double)c.tv_sec + (double)c.tv_nsec * 1e-9;
}

static void lap(const char *what, struct lap_t *t0)
{
	/* read each time (a handful of laps per report): FUSE threads share
	 * no lazily set flag */
	const char *v = getenv("HEAPFS_TIMING");
	if (!v || !*v || !strcmp(v, "0"))
		return;
	struct lap_t t1;
	lap_now(&t1);
	fprintf(stderr, "heapfs: suspects: %-22s %8.3f s wall %8.3f s cpu\n", what,
		t1.wall - t0->wall, t1.cpu - t0->cpu);
	*t0 = t1;
}

/* ---- records ---- */

static int put_text(struct buf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
		if (buf_putc(out, (uint8_t)c))
			return -ENOMEM;
	}
	return 0;
}

/* A record with one text field: tag, tab, the text made safe. */
static int rec(struct buf *out, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rec(struct buf *out, const char *tag, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
	int rc = buf_printf(out, "%s\t", tag);
	if (!rc) rc = put_text(out, line, len);
	return rc ? rc : buf_putc(out, '\n');
}

static struct finding *finding_new(struct sctx *c, enum fkind k, uint32_t severity, const char *fmt,
				   ...) __attribute__((format(printf, 4, 5)));
static struct finding *finding_new(struct sctx *c, enum fkind k, uint32_t severity, const char *fmt,
				   ...)
{
	if (c->nf == MAX_FINDINGS)
		return NULL;
	struct finding *f = &c->f[c->nf];
	char title[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(title, sizeof title, fmt, ap);
	va_end(ap);
	f->kind = k;
	f->severity = severity;
	buf_init(&f->b);
	c->nf++;
	/* the severity is written when the blob is assembled (it may change
	 * while the finding's claims are gathered) */
	if (put_text(&f->b, title, strlen(title)) || buf_putc(&f->b, '\n'))
		return NULL; /* freed with the others by sctx_free */
	return f;
}

static int claim(struct finding *f, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int claim(struct finding *f, int level, const char *fmt, ...)
{
	char text[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	int rc = buf_printf(&f->b, "T\t%d\t", level);
	if (!rc) rc = put_text(&f->b, text, strlen(text));
	return rc ? rc : buf_putc(&f->b, '\n');
}

/* P record: "gc/NNN/" + rest when gci != UINT32_MAX, else rest alone. */
static int evidence(struct sctx *c, struct finding *f, uint32_t gci, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int evidence(struct sctx *c, struct finding *f, uint32_t gci, const char *fmt, ...)
{
	char rest[1800], gname[16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof rest, fmt, ap);
	va_end(ap);
	if (gci == UINT32_MAX)
		return rec(&f->b, "P", "%s", rest);
	hfs_gc_name(c->fs, gci, gname);
	return rec(&f->b, "P", "gc/%s/%s", gname, rest);
}

/* ---- names ---- */

static const char *type_name(struct sctx *c, uint32_t type)
{
	return ks_name(&c->dtype->ks, type < c->fs->trace->ntypes ? type : c->dtype->unknown_key);
}

/* Key of a site's allocating frame in by-site's keyspace (its first level). */
static uint32_t site_frame_key(struct sctx *c, uint32_t site)
{
	const struct cls_def *d = c->dsite;
	if (site >= d->npaths || d->path_off[site] == d->path_off[site + 1])
		return d->unknown_key;
	return d->path_keys[d->path_off[site]];
}

static const char *gc_name(struct sctx *c, uint32_t gci, char buf[16])
{
	hfs_gc_name(c->fs, gci, buf);
	return buf;
}

/* A group chain: one classifier step (type or site frame). */
static void group_chain(struct sctx *c, int site, uint32_t key, struct chain *ch)
{
	chain_init(ch);
	chain_push(ch, ST_CLS, site ? c->cls_site : c->cls_type, key);
}

static const char *group_dir(int site)
{
	return site ? "by-site" : "by-type";
}

static const char *group_key_name(struct sctx *c, int site, uint32_t key)
{
	return ks_name(site ? &c->dsite->ks : &c->dtype->ks, key);
}

/* ---- GC closures of the groups the report ranks ---- */

/* Transitive and GC closure metrics of a member set of state s (GC gci).
 * Only the groups the report ranks are computed, one by one: the tree's
 * closure tables (by-type/table) compute every sibling of a group, most of
 * which the report never names.  *bits is taken over by the memo (set to
 * NULL) when it is remembered. */
static int set_closures(struct sctx *c, const struct heap_state *s, uint32_t gci, uint64_t **bits,
			struct closure_metrics *deep, struct closure_metrics *ret)
{
	uint64_t count = bitset_count(*bits, s->n);
	size_t words = ((size_t)s->n + 63) / 64;
	for (uint32_t k = 0; k < c->nmemo; k++) {
		const struct clo_memo *m = &c->memo[k];
		if (m->gci == gci && m->count == count && !memcmp(m->bits, *bits, words * 8)) {
			*deep = m->deep;
			*ret = m->ret;
			return 0;
		}
	}
	struct closure_ctx *cc = NULL;
	int rc = closure_ctx_new(&cc, s);
	if (!rc)
		rc = closure_metrics_of(cc, *bits, deep, ret);
	closure_ctx_free(cc);
	if (!rc && c->nmemo < CLO_MEMO_MAX) {
		c->memo[c->nmemo++] = (struct clo_memo){ gci, count, *bits, *deep, *ret };
		*bits = NULL;
	}
	return rc;
}

/* The GC closure (retained) bytes of a type or site group at GC gci, which
 * has a graph: what by-type/NAME/retained_size shows. */
static int group_retained(struct sctx *c, uint32_t gci, int site, uint32_t key, uint64_t *bytes)
{
	const struct heap_state *s;
	uint64_t *bits = NULL;
	struct chain ch;
	struct closure_metrics deep, ret;
	int rc = hfs_state_get(c->fs, gci, &s);
	if (rc)
		return rc;
	group_chain(c, site, key, &ch);
	if (!(rc = group_members_bits(&c->fs->reg, s, &ch, &bits)) &&
	    !(rc = set_closures(c, s, gci, &bits, &deep, &ret)))
		*bytes = ret.bytes;
	free(bits);
	hfs_state_put(c->fs, s);
	return rc;
}

/* ---- leak: the groups that grew ---- */

struct grower {
	uint32_t key;
	int64_t net_b, net_c;
	uint64_t retained;   /* at the window's end; 0 without a graph */
};

static int grower_by_net(const void *a, const void *b)
{
	const struct grower *x = a, *y = b;
	if (x->net_b != y->net_b)
		return x->net_b > y->net_b ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int grower_by_retained(const void *a, const void *b)
{
	const struct grower *x = a, *y = b;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return grower_by_net(a, b);
}

/* The groups of one classifier that grew most between start and end: the
 * 2 x top biggest net growers, re-ranked by retained size at end (what
 * freeing them would give back; one GC closure each), top kept.  Returns
 * how many in g. */
static int growers(struct sctx *c, int site, uint32_t start, uint32_t end, struct grower *g,
		   uint32_t *ng)
{
	struct chain ch;
	chain_init(&ch);
	ch.diff_gci = start;
	struct rc_entry *e;
	const struct cls_row *rows;
	uint32_t nrows, cand = c->p->top * 2, m = 0;
	*ng = 0;
	int rc = hfs_classification_get(c->fs, end, &ch, site ? c->cls_site : c->cls_type, &e, &rows,
					&nrows);
	if (rc)
		return rc;
	struct grower *all = malloc(sizeof *all * (nrows ? nrows : 1));
	if (!all) {
		rcache_put(c->fs->rc, e);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nrows; i++) {
		/* in a diff, COL_LIVE holds the born */
		int64_t nb = (int64_t)rows[i].b[COL_LIVE] - (int64_t)rows[i].b[COL_DIED];
		int64_t nc = (int64_t)rows[i].c[COL_LIVE] - (int64_t)rows[i].c[COL_DIED];
		if (nb > 0)
			all[m++] = (struct grower){ rows[i].key, nb, nc, 0 };
	}
	rcache_put(c->fs->rc, e);
	qsort(all, m, sizeof *all, grower_by_net);
	if (m > cand)
		m = cand;
	for (uint32_t i = 0; i < m && hfs_gc_has_graph(c->fs, end); i++) {
		if ((rc = group_retained(c, end, site, all[i].key, &all[i].retained)))
			break;
	}
	if (!rc) {
		qsort(all, m, sizeof *all, grower_by_retained);
		*ng = m < c->p->top ? m : c->p->top;
		memcpy(g, all, *ng * sizeof *g);
	}
	free(all);
	return rc;
}

/* The indirect roots of a group: a walk down by-indirect-root's hierarchy
 * (largest children first) to ROOT_LEAVES_MAX leaves.  The hierarchy comes
 * in one pass over the group (hfs_indirect_root_trie: what classifying the
 * group level by level gives, without a pass over the heap per level). */
struct ir_visit {
	uint32_t node, key;
	uint64_t count;
};

/* Largest first, then by key: the order of a classification's rows
 * sorted by count (node indexes do not follow key order). */
static int ir_by_count(const void *a, const void *b)
{
	const struct ir_visit *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* "a/b/c": the by-indirect-root keys from the trie's root down to node. */
static int ir_path(struct sctx *c, const struct hfs_ir_node *t, uint32_t node, struct buf *out)
{
	uint32_t keys[CHAIN_KEYS_MAX], n = 0;
	for (; node != 0 && n < CHAIN_KEYS_MAX; node = t[node].parent)
		keys[n++] = t[node].key;
	for (uint32_t k = n; k > 0; k--) {
		int rc = buf_printf(out, "%s%s", k < n ? "/" : "", ks_name(&c->dir->ks, keys[k - 1]));
		if (rc)
			return rc;
	}
	return buf_putc(out, '\0');
}

/* The children of node x, largest first, then by key. */
static uint32_t ir_children(const struct hfs_ir_node *t, uint32_t nt, uint32_t x,
			    struct ir_visit *out)
{
	uint32_t n = 0;
	for (uint32_t i = x + 1; i < nt; i++) {
		if (t[i].parent == x && t[i].count)
			out[n++] = (struct ir_visit){ i, t[i].key, t[i].count };
	}
	qsort(out, n, sizeof *out, ir_by_count);
	return n;
}

/* The roots keeping the group alive, best first; *top gets the first one's
 * path under by-indirect-root/ (NUL-terminated; left empty when none). */
static int leak_roots(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key,
		      uint64_t total, struct buf *top)
{
	const struct heap_state *s;
	uint64_t *bits = NULL;
	struct ir_visit *q = NULL, *kids = NULL;
	struct buf tb;
	struct chain ch;
	buf_init(&tb);
	int rc = hfs_state_get(c->fs, end, &s);
	if (rc)
		return rc;
	group_chain(c, site, key, &ch);
	if ((rc = group_members_bits(&c->fs->reg, s, &ch, &bits)) ||
	    (rc = hfs_indirect_root_trie(c->fs, end, s, bits, &tb)))
		goto out;
	const struct hfs_ir_node *t = (const struct hfs_ir_node *)tb.data;
	uint32_t nt = (uint32_t)(tb.len / sizeof *t), head = 0, tail = 0, leaves = 0, visits = 0;
	q = malloc(sizeof *q * ROOT_QUEUE_MAX);
	kids = malloc(sizeof *kids * (nt ? nt : 1));
	if (!q || !kids) {
		rc = -ENOMEM;
		goto out;
	}
	q[tail++] = (struct ir_visit){ 0, UINT32_MAX, total };
	/* best first: the unvisited node reaching the most members (a queue of
	 * at most ROOT_QUEUE_MAX nodes: a linear scan) */
	while (head < tail && leaves < ROOT_LEAVES_MAX && visits++ < ROOT_WALK_MAX && !rc) {
		uint32_t best = head;
		for (uint32_t i = head + 1; i < tail; i++) {
			if (q[i].count > q[best].count)
				best = i;
		}
		struct ir_visit cur = q[best];
		q[best] = q[head++];
		uint32_t nk = ir_children(t, nt, cur.node, kids);
		if (nk == 0 && cur.node != 0) { /* a leaf: a root */
			buf_reset(&c->tmp);
			if (!(rc = ir_path(c, t, cur.node, &c->tmp))) {
				const char *p = (const char *)c->tmp.data;
				rc = claim(f, 1, "kept alive by the root %s (reaches %" PRIu64 " of %" PRIu64
					   " objects)", p, cur.count, total);
				if (!rc && !leaves)
					rc = buf_put(top, p, strlen(p) + 1);
				if (!rc)
					rc = evidence(c, f, end, "%s/%s/by-indirect-root/%s/", group_dir(site),
						      group_key_name(c, site, key), p);
			}
			leaves++;
		}
		for (uint32_t r = 0; r < nk && tail < ROOT_QUEUE_MAX; r++)
			q[tail++] = kids[r];
	}
out:
	free(q);
	free(kids);
	free(bits);
	buf_free(&tb);
	hfs_state_put(c->fs, s);
	return rc;
}

/* The data structure holding a group: by-ds's largest element-of row (else
 * member-of), and the allocation sites of the heads of that type that hold
 * the group's members. */
static int leak_holder(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key);

struct holder_ctx {
	const struct ds_view *dv;
	const struct heap_state *s;
	uint32_t type;
	uint64_t *per_site;  /* [nsites + 1] */
	uint32_t nsites;
	uint32_t last_slot;
};

static int holder_cb(void *vctx, uint32_t slot)
{
	struct holder_ctx *h = vctx;
	if (slot == h->last_slot || slot >= h->dv->nheads)
		return 0;
	h->last_slot = slot;
	const struct objinfo *oi = hs_info(h->s, h->dv->head_obj[slot]);
	if (oi->type != h->type)
		return 0;
	h->per_site[oi->site < h->nsites ? oi->site : h->nsites]++;
	return 0;
}

static int holder_sites(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key,
			uint32_t head_type)
{
	const struct heap_state *s;
	struct rc_entry *e = NULL;
	struct ds_view dv;
	uint64_t *bits = NULL, *per_site = NULL;
	struct chain ch;
	int rc = hfs_state_get(c->fs, end, &s);
	if (rc)
		return rc;
	if ((rc = hfs_ds_get(c->fs, end, &e, &dv)))
		goto out;
	group_chain(c, site, key, &ch);
	if ((rc = group_members_bits(&c->fs->reg, s, &ch, &bits)))
		goto out;
	uint32_t nsites = c->fs->trace->nsites;
	per_site = calloc((size_t)nsites + 1, sizeof *per_site);
	if (!per_site) {
		rc = -ENOMEM;
		goto out;
	}
	struct holder_ctx h = { &dv, s, head_type, per_site, nsites, UINT32_MAX };
	BITSET_FOREACH(bits, s->n, o) {
		h.last_slot = UINT32_MAX;
		ds_for_each_holder(s, dv.roles, dv.owner, o, holder_cb, &h);
	}
	/* sites can share their allocating frame: sum by by-site's first level */
	uint32_t nkeys = ks_count(&c->dsite->ks);
	uint64_t *per_key = calloc(nkeys ? nkeys : 1, sizeof *per_key);
	if (!per_key) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k <= nsites; k++) {
		uint32_t fk = k < nsites ? site_frame_key(c, k) : c->dsite->unknown_key;
		if (fk < nkeys)
			per_key[fk] += per_site[k];
	}
	uint32_t top[HOLDER_SITES_MAX];
	uint32_t nt = sus_top_k(per_key, nkeys, HOLDER_SITES_MAX, top);
	for (uint32_t i = 0; i < nt && !rc; i++) {
		const char *sn = ks_name(&c->dsite->ks, top[i]);
		rc = claim(f, 1, "%s allocated at %s holds %" PRIu64 " of them", type_name(c, head_type),
			   sn, per_key[top[i]]);
		if (!rc)
			rc = evidence(c, f, end, "by-type/%s/by-site/%s/", type_name(c, head_type), sn);
	}
	free(per_key);
out:
	free(per_site);
	free(bits);
	if (e)
		rcache_put(c->fs->rc, e);
	hfs_state_put(c->fs, s);
	return rc;
}

static int leak_holder(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key)
{
	struct chain ch;
	struct rc_entry *e;
	const struct cls_row *rows;
	uint32_t nrows, best = UINT32_MAX;
	int best_elem = 0;
	group_chain(c, site, key, &ch);
	int rc = hfs_classification_get(c->fs, end, &ch, c->cls_ds, &e, &rows, &nrows);
	if (rc)
		return rc;
	for (uint32_t r = 0; r < nrows; r++) {
		const char *n = ks_raw(&c->dds->ks, rows[r].key);
		int elem = strncmp(n, "element-of-", 11) == 0;
		if (!elem && strncmp(n, "member-of-", 10) != 0)
			continue;
		if (best == UINT32_MAX || elem > best_elem ||
		    (elem == best_elem && rows[r].c[COL_LIVE] > rows[best].c[COL_LIVE])) {
			best = r;
			best_elem = elem;
		}
	}
	char raw[512] = "";
	uint64_t cnt = 0;
	if (best != UINT32_MAX) {
		snprintf(raw, sizeof raw, "%s", ks_raw(&c->dds->ks, rows[best].key));
		cnt = rows[best].c[COL_LIVE];
		const char *kname = ks_name(&c->dds->ks, rows[best].key);
		const char *ht = raw + (best_elem ? 11 : 10);
		rc = claim(f, 1, "%s %s structures: %" PRIu64 " of them (data-structure roles)",
			   best_elem ? "held as elements by" : "part of", ht, cnt);
		if (!rc)
			rc = evidence(c, f, end, "%s/%s/by-ds/%s/", group_dir(site),
				      group_key_name(c, site, key), kname);
	}
	rcache_put(c->fs->rc, e);
	if (rc || best == UINT32_MAX || !best_elem)
		return rc;
	/* the head type's id: by-type's keys are type ids */
	const char *tn = raw + 11;
	uint32_t tkey = ks_find_raw((struct keyspace *)&c->dtype->ks, tn, strlen(tn));
	if (tkey == KS_NO_KEY || tkey >= c->fs->trace->ntypes)
		return 0;
	return holder_sites(c, f, end, site, key, tkey);
}

/* One path from a root: the first block of the paths file of the group's
 * members that root reaches (root: a by-indirect-root/ path, or "" for
 * all members), which starts at that root.  Not the whole group's paths
 * file: it samples the oldest members, and for a recorded leak of
 * HashMap$Nodes those were the JDK's system properties, not the leaking
 * map's entries. */
static int leak_path(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key,
		     const char *root)
{
	char gname[16], path[HFS_PATH_MAX], sub[HFS_PATH_MAX];
	int len = snprintf(sub, sizeof sub, "%s%s%s", *root ? "by-indirect-root/" : "", root, *root ? "/" : "");
	if (len < 0 || (size_t)len >= sizeof sub ||
	    (size_t)snprintf(path, sizeof path, "/gc/%s/%s/%s/%spaths", gc_name(c, end, gname), group_dir(site),
			     group_key_name(c, site, key), sub) >= sizeof path)
		return 0; /* a name too long for a path of the tree: no path to show */
	struct buf pb, line;
	buf_init(&pb);
	buf_init(&line);
	int rc = hfs_read(c->fs, path, &pb);
	if (rc)
		goto out;
	/* lines after "# object N" up to a blank line: id, type, via */
	const char *s = (const char *)pb.data, *e = s + pb.len;
	int started = 0, n = 0;
	while (s < e && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);
		if (len && s[0] == '#') {
			if (started)
				break;
			started = 1;
		} else if (len == 0) {
			if (started)
				break;
		} else if (started) {
			const char *t1 = memchr(s, '\t', len);
			const char *t2 = t1 ? memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - s)) : NULL;
			if (t1 && t2) {
				size_t tl = (size_t)(t2 - t1 - 1), vl = len - (size_t)(t2 + 1 - s);
				/* "ROOT > TYPE", then ".field > TYPE" or "[i] > TYPE"
				 * (not "->": that starts the path lines of the text) */
				int idx = vl && t2[1] == '[';
				rc = buf_printf(&line, "%s%s%.*s > %.*s", n ? " " : "", n && !idx ? "." : "",
						(int)vl, t2 + 1, (int)tl, t1 + 1);
				n++;
			}
		}
		s = nl ? nl + 1 : e;
	}
	if (!rc && n) {
		rc = buf_putc(&line, '\0');
		if (!rc) rc = claim(f, 1, "path: %s", (const char *)line.data);
		if (!rc)
			rc = evidence(c, f, end, "%s/%s/%spaths", group_dir(site), group_key_name(c, site, key), sub);
	}
out:
	buf_free(&pb);
	buf_free(&line);
	return rc == -ENOENT ? 0 : rc;
}

/* Shared ownership (§5.1): the root objects that keep the group alive (its
 * roots file) retain more together than the sum of what each retains. */
static int leak_shared(struct sctx *c, struct finding *f, uint32_t end, int site, uint32_t key)
{
	char gname[16], path[HFS_PATH_MAX];
	snprintf(path, sizeof path, "/gc/%s/%s/%s/roots", gc_name(c, end, gname), group_dir(site),
		 group_key_name(c, site, key));
	struct buf rb;
	buf_init(&rb);
	const struct heap_state *s = NULL;
	uint64_t *bits = NULL;
	int rc = hfs_read(c->fs, path, &rb);
	if (rc)
		goto out;
	if ((rc = hfs_state_get(c->fs, end, &s)))
		goto out;
	bits = bitset_alloc(s->n);
	if (!bits) {
		rc = -ENOMEM;
		goto out;
	}
	/* rows after the header: id, type, retained_size, roots */
	uint32_t nowners = 0, one_type = UINT32_MAX;
	int same_type = 1;
	uint64_t sum_single = 0;
	const char *p = memchr(rb.data, '\n', rb.len), *e = (const char *)rb.data + rb.len;
	while (p && ++p < e) {
		char *tab;
		uint64_t id = strtoull(p, &tab, 10);
		uint32_t o = heap_state_find(s, id);
		if (o != UINT32_MAX && *tab == '\t') {
			const char *t2 = strchr(tab + 1, '\t');
			sum_single += t2 ? strtoull(t2 + 1, NULL, 10) : 0;
			bitset_set(bits, o);
			uint32_t ty = hs_info(s, o)->type;
			if (nowners++ && ty != one_type)
				same_type = 0;
			one_type = ty;
		}
		p = memchr(p, '\n', (size_t)(e - p));
	}
	if (nowners < 2)
		goto out;
	struct closure_metrics deep, ret;
	if ((rc = set_closures(c, s, end, &bits, &deep, &ret)))
		goto out;
	if (!sus_shared(nowners, ret.bytes, sum_single)) {
		rc = claim(f, 1, "not shared: its %" PRIu32 " root objects retain no more together "
			   "(%" PRIu64 " bytes) than alone", nowners, ret.bytes);
		goto out;
	}
	rc = claim(f, 1, "shared ownership (gc-roots paper 5.1): its %" PRIu32 " root objects "
		   "retain %" PRIu64 " bytes together, %" PRIu64 " alone: no single owner frees it",
		   nowners, ret.bytes, sum_single);
	if (!rc)
		rc = evidence(c, f, end, "%s/%s/roots", group_dir(site), group_key_name(c, site, key));
	if (!rc && same_type) {
		/* the owners' type group is exactly the owners: its retained size
		 * is the joint one */
		struct chain tc;
		struct cls_row row;
		group_chain(c, 0, one_type, &tc);
		if (!hfs_group_totals(c->fs, end, &tc, &row) && row.c[COL_LIVE] == nowners)
			rc = evidence(c, f, end, "by-type/%s/retained_size", type_name(c, one_type));
	}
out:
	free(bits);
	if (s)
		hfs_state_put(c->fs, s);
	buf_free(&rb);
	return rc == -ENOENT ? 0 : rc;
}

static int leak_group(struct sctx *c, struct finding *f, uint32_t end, int site,
		      const struct grower *g, int details)
{
	const char *name = group_key_name(c, site, g->key);
	int graph = hfs_gc_has_graph(c->fs, end);
	int rc = claim(f, 0, "%s %s: %+" PRId64 " bytes, %+" PRId64 " objects%s", site ? "site" : "type",
		       name, g->net_b, g->net_c, graph ? "" : " (no graph at the window's end)");
	if (!rc && graph)
		rc = claim(f, 1, "retains %" PRIu64 " bytes at the window's end", g->retained);
	if (!rc)
		rc = evidence(c, f, end, "%s/%s/%s", group_dir(site), name, graph ? "retained_size" : "");
	if (rc || !graph || !details)
		return rc;
	struct chain ch;
	struct cls_row row;
	struct buf top;
	buf_init(&top);
	group_chain(c, site, g->key, &ch);
	if (!(rc = hfs_group_totals(c->fs, end, &ch, &row)) &&
	    !(rc = leak_roots(c, f, end, site, g->key, row.c[COL_LIVE], &top)) &&
	    !(rc = leak_holder(c, f, end, site, g->key)) &&
	    !(rc = leak_path(c, f, end, site, g->key, top.len ? (const char *)top.data : "")))
		rc = leak_shared(c, f, end, site, g->key);
	buf_free(&top);
	return rc;
}

static uint64_t reachable_at(struct hfs *fs, uint32_t gci)
{
	const uint64_t *reach;
	if (!hfs_reachable_series(fs, &reach) && reach[gci] != UINT64_MAX)
		return reach[gci];
	return fs->trace->gcs[gci].used_after;
}

static int sec_leak(struct sctx *c, const struct win_result *r)
{
	char a[16], b[16];
	uint64_t at_end = reachable_at(c->fs, r->end_gci);
	uint64_t growth = r->growth_bytes > 0 ? (uint64_t)r->growth_bytes : 0;
	uint32_t sev = sus_pct(growth, at_end);
	struct finding *f = finding_new(c, FK_LEAK, sev ? sev : 1,
					"memory grew by %" PRIu64 " bytes over GC %s..%s "
					"(%.0f bytes/s), to %" PRIu64 " bytes reachable",
					growth, gc_name(c, r->start_gci, a), gc_name(c, r->end_gci, b),
					r->per_s, at_end);
	if (!f)
		return -ENOMEM;
	int rc = claim(f, 0, "the leak window (suspicious-time-windows paper 3.2)");
	if (!rc) rc = evidence(c, f, UINT32_MAX, "windows/leak");
	/* The heuristic cannot tell a leak from a program that builds up what
	 * it needs (start-up, a batch job's result) when the growth starts
	 * with the trace: say so, rather than let severity alone speak. */
	if (!rc && r->first == 0)
		rc = claim(f, 0, "caution: the window starts at the first GC, so this may be "
				 "start-up or a program building its result, not a leak: a leak "
				 "keeps growing while the work stays the same");
	if (rc || !hfs_window_spans(c->fs, WK_LEAK))
		return rc;
	rc = claim(f, 0, "groups that grew most, by retained size at GC %s:", b);
	if (!rc) rc = evidence(c, f, UINT32_MAX, "windows/diff/leak/growing");
	for (int site = 0; site <= 1 && !rc; site++) {
		struct grower g[16];
		uint32_t ng = 0;
		if (c->p->top > 16)
			return -EINVAL;
		struct lap_t t0;
		lap_now(&t0);
		rc = growers(c, site, r->start_gci, r->end_gci, g, &ng);
		lap(site ? "leak: site growers" : "leak: type growers", &t0);
		for (uint32_t i = 0; i < ng && !rc; i++)
			rc = leak_group(c, f, r->end_gci, site, &g[i], i < DETAIL_GROUPS);
		lap(site ? "leak: site details" : "leak: type details", &t0);
	}
	return rc;
}

/* ---- GC overhead: who survived the window's GCs ---- */

static int survivors_rank(struct sctx *c, struct finding *f, const struct heap_state *s,
			  uint32_t start, uint32_t end, int site)
{
	uint32_t nkeys = site ? ks_count(&c->dsite->ks) : c->fs->trace->ntypes;
	uint32_t *info_key = malloc(sizeof *info_key * (s->ninfos ? s->ninfos : 1));
	uint64_t *info_size = malloc(sizeof *info_size * (s->ninfos ? s->ninfos : 1));
	uint64_t *bg = calloc(nkeys ? nkeys : 1, sizeof *bg);
	uint64_t *cnt = calloc(nkeys ? nkeys : 1, sizeof *cnt);
	uint32_t top[16];
	int rc = 0;
	if (!info_key || !info_size || !bg || !cnt) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->ninfos; i++) {
		info_key[i] = site ? site_frame_key(c, s->infos[i].site) : s->infos[i].type;
		info_size[i] = s->infos[i].size;
	}
	sus_survivors(s->n, s->birth, s->info, info_key, info_size, nkeys, start, end, bg, cnt);
	uint32_t nt = sus_top_k(bg, nkeys, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < nt && !rc; i++) {
		const char *n = group_key_name(c, site, top[i]);
		rc = claim(f, 1, "%s %s: %" PRIu64 " objects survived, %" PRIu64 " byte-GCs",
			   site ? "site" : "type", n, cnt[top[i]], bg[top[i]]);
		if (!rc)
			rc = evidence(c, f, end, "%s/%s/by-age/", group_dir(site), n);
	}
out:
	free(info_key);
	free(info_size);
	free(bg);
	free(cnt);
	return rc;
}

static int sec_gc_overhead(struct sctx *c, const struct win_result *r)
{
	char a[16], b[16];
	uint32_t pct = (uint32_t)(r->per_s * 100 + 0.5);
	struct finding *f = finding_new(c, FK_GC_OVERHEAD, pct,
					"%" PRIu32 "%% of the time in GC over GC %s..%s (%" PRIu32
					" GCs, %" PRIu64 " ms in GC)",
					pct, gc_name(c, r->start_gci, a), gc_name(c, r->end_gci, b),
					r->end_gci - r->start_gci + 1, r->gc_ns / 1000000);
	if (!f)
		return -ENOMEM;
	int rc = claim(f, 0, "the GC-overhead window (suspicious-time-windows paper 3.3)");
	if (!rc) rc = evidence(c, f, UINT32_MAX, "windows/gc-overhead");
	if (!rc) rc = claim(f, 0, "survivors make collections slow; most GCs survived "
			    "(bytes x GCs) in the window, at GC %s:", b);
	if (rc)
		return rc;
	const struct heap_state *s;
	if ((rc = hfs_state_get(c->fs, r->end_gci, &s)))
		return rc;
	rc = survivors_rank(c, f, s, r->start_gci, r->end_gci, 0);
	if (!rc)
		rc = survivors_rank(c, f, s, r->start_gci, r->end_gci, 1);
	hfs_state_put(c->fs, s);
	return rc;
}

/* ---- churn: born and dead inside the window ---- */

struct churn_tally {
	uint64_t *tc, *tb;  /* per type: allocated in the window, then minus survivors */
	uint64_t *sc, *sb;  /* per by-site first-level key */
	uint32_t ntypes, nkeys;
	uint64_t alloc_bytes;
};

static void churn_add(struct sctx *c, struct churn_tally *t, uint32_t type, uint32_t site,
		      uint64_t size, int sub)
{
	uint32_t sk = site_frame_key(c, site);
	if (type < t->ntypes) {
		t->tc[type] += sub ? (uint64_t)-1 : 1;
		t->tb[type] += sub ? (uint64_t)0 - size : size;
	}
	if (sk < t->nkeys) {
		t->sc[sk] += sub ? (uint64_t)-1 : 1;
		t->sb[sk] += sub ? (uint64_t)0 - size : size;
	}
}

/* Allocations after GC start-1 ended and before GC end began, from the
 * trace's event frames (frames end at GC boundaries: the ones before the
 * window are skipped by their GC index range, never decoded). */
static int churn_scan(struct sctx *c, uint32_t start, uint32_t end, struct churn_tally *t)
{
	const struct trace *tr = c->fs->trace;
	/* GCs ended so far: the window's allocations are those seen after
	 * `start` GCs ended and before GC `end` starts */
	uint64_t ended = 0;
	int rc = 0;
	for (uint32_t fi = 0; fi < tr->nframes && !rc; fi++) {
		const struct trace_frame *fr = &tr->frames[fi];
		if (fr->kind != HTR_FRAME_EVENTS)
			continue;
		uint64_t after = fr->last_gc_index == UINT32_MAX ? ended : (uint64_t)fr->last_gc_index + 1;
		if (after < start) { /* wholly before the window */
			ended = after;
			continue;
		}
		if (ended > end)
			break;
		struct htr_frame_hdr h;
		struct htr_iter *it;
		struct htr_err err;
		memset(&err, 0, sizeof err);
		if ((rc = htr_frame_header(tr->file, fr->offset, &h, &err)) ||
		    (rc = htr_iter_open(&it, tr->file, &h, &err))) {
			hfs_set_error(c->fs, &err);
			return -EIO;
		}
		struct htr_event ev;
		int more;
		int in_gc = 0;
		while ((more = htr_iter_next(it, &ev, &err)) > 0) {
			if (ev.type == HTR_EV_GC_START)
				in_gc = 1;
			else if (ev.type == HTR_EV_GC_END) {
				in_gc = 0;
				ended++;
			} else if (ev.type == HTR_EV_ALLOC && !in_gc && ended >= start && ended <= end &&
				   !(ev.u.alloc.flags & HTR_ALLOC_PREEXISTING)) {
				churn_add(c, t, ev.u.alloc.type, ev.u.alloc.site, ev.u.alloc.size, 0);
				t->alloc_bytes += ev.u.alloc.size;
			}
		}
		htr_iter_close(it);
		if (more < 0) {
			hfs_set_error(c->fs, &err);
			return -EIO;
		}
		if (fr->last_gc_index != UINT32_MAX)
			ended = (uint64_t)fr->last_gc_index + 1;
	}
	return rc;
}

static int churn_rank(struct sctx *c, struct finding *f, const uint64_t *cnt, const uint64_t *bytes,
		      uint32_t n, int site, uint32_t end)
{
	uint32_t top[16];
	uint32_t nt = sus_top_k(bytes, n, c->p->top < 16 ? c->p->top : 16, top);
	int rc = 0;
	for (uint32_t i = 0; i < nt && !rc; i++) {
		const char *name = group_key_name(c, site, top[i]);
		rc = claim(f, 1, "%s %s: %" PRIu64 " objects, %" PRIu64 " bytes", site ? "site" : "type",
			   name, cnt[top[i]], bytes[top[i]]);
		/* objects that never survived a GC are in no heap state: the
		 * window files are the evidence; the group directory only when
		 * some of its objects are alive at the window's end */
		struct chain ch;
		struct cls_row row;
		group_chain(c, site, top[i], &ch);
		if (!rc && !hfs_group_totals(c->fs, end, &ch, &row) && row.c[COL_LIVE])
			rc = evidence(c, f, end, "%s/%s/", group_dir(site), name);
	}
	return rc;
}

static int sec_churn(struct sctx *c, const struct win_result *r)
{
	char a[16], b[16];
	struct churn_tally t;
	memset(&t, 0, sizeof t);
	t.ntypes = c->fs->trace->ntypes;
	t.nkeys = ks_count(&c->dsite->ks);
	t.tc = calloc(t.ntypes + 1, sizeof *t.tc);
	t.tb = calloc(t.ntypes + 1, sizeof *t.tb);
	t.sc = calloc(t.nkeys + 1, sizeof *t.sc);
	t.sb = calloc(t.nkeys + 1, sizeof *t.sb);
	const struct heap_state *s = NULL;
	int rc = -ENOMEM;
	if (!t.tc || !t.tb || !t.sc || !t.sb)
		goto out;
	if ((rc = churn_scan(c, r->start_gci, r->end_gci, &t)))
		goto out;
	/* minus the window's allocations still alive at its end */
	if ((rc = hfs_state_get(c->fs, r->end_gci, &s)))
		goto out;
	for (uint32_t o = 0; o < s->n; o++) {
		uint32_t bth = s->birth[o];
		int in_window = bth == HS_NO_BIRTH ? r->start_gci == 0 && !(hs_info(s, o)->flags &
									       HTR_ALLOC_PREEXISTING)
						   : bth + 1 >= r->start_gci && bth < r->end_gci;
		if (in_window) {
			const struct objinfo *oi = hs_info(s, o);
			churn_add(c, &t, oi->type, oi->site, oi->size, 1);
		}
	}
	uint64_t died = 0;
	for (uint32_t k = 0; k < t.ntypes; k++)
		died += t.tb[k];
	uint32_t sev = sus_pct(died, t.alloc_bytes);
	struct finding *f = finding_new(c, FK_CHURN, sev ? sev : 1,
					"%.0f bytes/s freed over GC %s..%s (%" PRIu64
					" bytes freed in %" PRIu32 " GCs)",
					r->per_s, gc_name(c, r->start_gci, a), gc_name(c, r->end_gci, b),
					r->freed_bytes, r->end_gci - r->start_gci + 1);
	rc = -ENOMEM;
	if (!f)
		goto out;
	rc = claim(f, 0, "the churn window (suspicious-time-windows paper 3.4)");
	if (!rc) rc = evidence(c, f, UINT32_MAX, "windows/churn");
	if (!rc) rc = evidence(c, f, UINT32_MAX, "timeline/gcs.csv");
	if (!rc) rc = claim(f, 0, "born and dead inside the window (%" PRIu32 "%% of the bytes "
			    "allocated in it), from the allocation events:", sev);
	if (!rc) rc = churn_rank(c, f, t.tc, t.tb, t.ntypes, 0, r->end_gci);
	if (!rc) rc = churn_rank(c, f, t.sc, t.sb, t.nkeys, 1, r->end_gci);
out:
	if (s)
		hfs_state_put(c->fs, s);
	free(t.tc);
	free(t.tb);
	free(t.sc);
	free(t.sb);
	return rc;
}

/* ---- big retainers ---- */

static int big_objects(struct sctx *c, struct finding *f, const struct heap_state *s,
		       const struct dom_view *dv, const struct sus_domtree *dt, uint64_t min,
		       uint64_t heap, uint32_t gci, uint32_t *maxpct)
{
	uint32_t big[16];
	struct dominators d;
	dom_view_as_dominators(dv, &d);
	uint32_t nb = sus_big_objects(s->n, d.idom, d.retained, min, big,
				      c->p->top < 16 ? c->p->top : 16);
	int rc = 0;
	for (uint32_t i = 0; i < nb && !rc; i++) {
		uint32_t o = big[i], depth;
		uint32_t pct = sus_pct(d.retained[o], heap);
		if (pct > *maxpct)
			*maxpct = pct;
		rc = claim(f, 0, "object %" PRIu64 " (%s) retains %" PRIu64 " bytes, %" PRIu32 "%%",
			   s->id[o], type_name(c, hs_info(s, o)->type), d.retained[o], pct);
		if (!rc) rc = evidence(c, f, gci, "objects/%" PRIu64 "/retained_size", s->id[o]);
		if (!rc) rc = evidence(c, f, gci, "objects/%" PRIu64 "/path-to-root", s->id[o]);
		uint32_t a = sus_accumulation_point(dt, d.retained, o, c->p->accum_pct, &depth);
		if (!rc && a != o) {
			rc = claim(f, 1, "accumulation point %" PRIu32 " levels down: object %" PRIu64
				   " (%s) retains %" PRIu64 " bytes over %" PRIu32 " children",
				   depth, s->id[a], type_name(c, hs_info(s, a)->type), d.retained[a],
				   dt->off[a + 1] - dt->off[a]);
			if (!rc) rc = evidence(c, f, gci, "objects/%" PRIu64 "/", s->id[a]);
		}
	}
	return rc;
}

static int big_types(struct sctx *c, struct finding *f, const struct heap_state *s,
		     const struct dom_view *dv, const struct sus_domtree *dt, uint64_t min,
		     uint64_t heap, uint32_t gci, uint32_t *maxpct)
{
	uint32_t nt = c->fs->trace->ntypes, cand[32];
	uint32_t *info_key = malloc(sizeof *info_key * (s->ninfos ? s->ninfos : 1));
	uint64_t *lb = malloc(sizeof *lb * (nt ? nt : 1));
	int rc = 0;
	if (!info_key || !lb) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->ninfos; i++)
		info_key[i] = s->infos[i].type;
	if ((rc = sus_key_retained(dt, dv->retained, s->info, info_key, nt, lb)))
		goto out;
	uint32_t ncand = sus_top_k(lb, nt, c->p->top < 32 ? c->p->top : 32, cand);
	struct grower g[32];
	uint32_t ng = 0;
	for (uint32_t i = 0; i < ncand; i++) {
		uint64_t retained;
		if ((rc = group_retained(c, gci, 0, cand[i], &retained)))
			goto out;
		if (retained >= min && retained > 0)
			g[ng++] = (struct grower){ cand[i], (int64_t)lb[cand[i]], 0, retained };
	}
	qsort(g, ng, sizeof *g, grower_by_retained);
	for (uint32_t i = 0; i < ng && i < c->p->top && !rc; i++) {
		uint32_t pct = sus_pct(g[i].retained, heap);
		if (pct > *maxpct)
			*maxpct = pct;
		rc = claim(f, 0, "type %s retains %" PRIu64 " bytes together, %" PRIu32 "%%",
			   type_name(c, g[i].key), g[i].retained, pct);
		if (!rc) rc = evidence(c, f, gci, "by-type/%s/retained_size", type_name(c, g[i].key));
		if (!rc && g[i].retained > (uint64_t)g[i].net_b)
			rc = claim(f, 1, "its objects one by one retain only %" PRIu64 " bytes: "
				   "the rest is shared with other owners", (uint64_t)g[i].net_b);
	}
out:
	free(info_key);
	free(lb);
	return rc;
}

static int sec_big(struct sctx *c, uint32_t gci)
{
	const struct heap_state *s;
	struct rc_entry *de = NULL;
	struct dom_view dv;
	struct sus_domtree dt;
	memset(&dt, 0, sizeof dt);
	int rc = hfs_state_get(c->fs, gci, &s);
	if (rc)
		return rc;
	if ((rc = hfs_dominators_get(c->fs, gci, &de, &dv)))
		goto out;
	struct dominators d;
	dom_view_as_dominators(&dv, &d);
	if ((rc = sus_domtree_build(s->n, d.idom, &dt)))
		goto out;
	uint64_t heap = s->reachable_bytes;
	uint64_t min = heap / 100 * c->p->big_pct + heap % 100 * c->p->big_pct / 100;
	struct finding *f = finding_new(c, FK_BIG, 0,
					"at GC %s, retaining at least %" PRIu32 "%% of %" PRIu64
					" reachable bytes", gc_name(c, gci, (char[16]){ 0 }),
					c->p->big_pct, heap);
	if (!f) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t maxpct = 0;
	rc = claim(f, 0, "the objects that retain the most (dominator tree):");
	if (!rc)
		rc = evidence(c, f, gci, "dominators/top");
	if (!rc)
		rc = big_objects(c, f, s, &dv, &dt, min, heap, gci, &maxpct);
	if (!rc)
		rc = big_types(c, f, s, &dv, &dt, min, heap, gci, &maxpct);
	if (!rc && maxpct == 0)
		rc = claim(f, 0, "none: no object or type retains %" PRIu32 "%% of the heap",
			   c->p->big_pct);
	f->severity = maxpct;
out:
	sus_domtree_free(&dt);
	if (de)
		rcache_put(c->fs->rc, de);
	hfs_state_put(c->fs, s);
	return rc;
}

/* ---- bloat ---- */

struct ds_agg {
	uint64_t heads, own, data, empty, empty_bytes;
};

static int bloat_structures(struct sctx *c, struct finding *f, uint32_t gci, uint64_t heap,
			    uint64_t *flagged)
{
	const struct heap_state *s;
	struct rc_entry *e;
	const struct ds_head *h;
	uint32_t nh, nt = c->fs->trace->ntypes;
	int rc = hfs_state_get(c->fs, gci, &s);
	if (rc)
		return rc;
	if ((rc = hfs_ds_heads_get(c->fs, gci, &e, &h, &nh))) {
		hfs_state_put(c->fs, s);
		return rc;
	}
	struct ds_agg *a = calloc(nt + 1, sizeof *a);
	uint64_t *own = calloc(nt + 1, sizeof *own), *empty = calloc(nt + 1, sizeof *empty);
	uint32_t top[16];
	if (!a || !own || !empty) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < nh; k++) {
		uint32_t ty = hs_info(s, h[k].obj)->type;
		if (ty >= nt)
			continue;
		a[ty].heads++;
		a[ty].own += h[k].member_bytes;
		a[ty].data += h[k].element_bytes;
		if (h[k].elements <= 1) {
			a[ty].empty++;
			a[ty].empty_bytes += h[k].member_bytes;
		}
	}
	/* a kind of structure counts when it holds at least 1% of the heap */
	for (uint32_t ty = 0; ty < nt; ty++) {
		if (sus_overhead_dominates(a[ty].own, a[ty].data, c->p->overhead_pct) &&
		    sus_pct(a[ty].own, heap) >= 1)
			own[ty] = a[ty].own;
		if (a[ty].empty >= c->p->empty_min)
			empty[ty] = a[ty].empty;
	}
	uint32_t n = sus_top_k(own, nt, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t ty = top[i];
		*flagged += a[ty].own;
		rc = claim(f, 0, "%" PRIu64 " %s structures: %" PRIu64 " bytes of structure for %" PRIu64
			   " bytes of data (%" PRIu32 "%% overhead)", a[ty].heads, type_name(c, ty),
			   a[ty].own, a[ty].data, sus_pct(a[ty].own, a[ty].own + a[ty].data));
		if (!rc) rc = evidence(c, f, gci, "ds/table");
		if (!rc) rc = evidence(c, f, gci, "by-type/%s/by-role/", type_name(c, ty));
	}
	n = sus_top_k(empty, nt, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t ty = top[i];
		*flagged += a[ty].empty_bytes;
		rc = claim(f, 0, "%" PRIu64 " of %" PRIu64 " %s structures are empty or hold one element "
			   "(%" PRIu64 " bytes)", a[ty].empty, a[ty].heads, type_name(c, ty),
			   a[ty].empty_bytes);
		if (!rc) rc = evidence(c, f, gci, "ds/heads");
	}
out:
	free(a);
	free(own);
	free(empty);
	rcache_put(c->fs->rc, e);
	hfs_state_put(c->fs, s);
	return rc;
}

static int bloat_health(struct sctx *c, struct finding *f, uint32_t gci)
{
	struct chain ch;
	struct rc_entry *e;
	const struct cls_row *rows;
	uint32_t nrows;
	chain_init(&ch);
	int rc = hfs_classification_get(c->fs, gci, &ch, c->cls_ih, &e, &rows, &nrows);
	if (rc)
		return rc;
	uint64_t total = 0;
	for (uint32_t r = 0; r < nrows; r++)
		total += rows[r].b[COL_LIVE];
	buf_reset(&c->tmp);
	for (uint32_t r = 0; r < nrows && !rc; r++)
		rc = buf_printf(&c->tmp, "%s%s %" PRIu64 " (%" PRIu32 "%%)", r ? ", " : "",
				ks_raw(&c->dih->ks, rows[r].key), rows[r].b[COL_LIVE],
				sus_pct(rows[r].b[COL_LIVE], total));
	rcache_put(c->fs->rc, e);
	if (!rc) rc = buf_putc(&c->tmp, '\0');
	if (!rc) rc = claim(f, 0, "instance health (bytes): %s", (const char *)c->tmp.data);
	if (!rc) rc = evidence(c, f, gci, "by-instance-health/table");
	return rc;
}

static int sec_bloat(struct sctx *c, uint32_t gci)
{
	const struct heap_state *s;
	int rc = hfs_state_get(c->fs, gci, &s);
	if (rc)
		return rc;
	uint64_t heap = s->reachable_bytes;
	hfs_state_put(c->fs, s);
	struct finding *f = finding_new(c, FK_BLOAT, 0, "at GC %s: data structures and instances",
					gc_name(c, gci, (char[16]){ 0 }));
	if (!f)
		return -ENOMEM;
	uint64_t flagged = 0;
	struct lap_t t0;
	lap_now(&t0);
	rc = bloat_structures(c, f, gci, heap, &flagged);
	lap("bloat: structures", &t0);
	if (!rc && flagged == 0)
		rc = claim(f, 0, "no structure kind whose overhead is %" PRIu32 "%% of it and 1%% of "
			   "the heap, no %" PRIu64 " empty ones of a type", c->p->overhead_pct,
			   c->p->empty_min);
	if (!rc && flagged == 0)
		rc = evidence(c, f, gci, "ds/table");
	if (!rc)
		rc = bloat_health(c, f, gci);
	lap("bloat: instance health", &t0);
	f->severity = sus_pct(flagged, heap);
	return rc;
}

/* ---- assembling ---- */

static int checked_windows(struct sctx *c, const struct win_result *res)
{
	static const struct { enum win_kind k; const char *what; } kinds[] = {
		{ WK_LEAK, "leak" }, { WK_GC_OVERHEAD, "gc-overhead" }, { WK_CHURN, "churn" },
	};
	int rc = 0;
	for (size_t i = 0; i < 3 && !rc; i++) {
		if (res[kinds[i].k].found)
			continue;
		rc = rec(&c->head, "C", "no %s window: %s", kinds[i].what, res[kinds[i].k].reason);
		if (!rc)
			rc = rec(&c->head, "P", "windows/%s", win_kind_name(kinds[i].k));
	}
	return rc;
}

/* Problems found over time (the windows) before snapshot findings (big
 * retainers, bloat): a trend is the stronger evidence; by severity within
 * each. */
static int from_window(enum fkind k)
{
	return k == FK_LEAK || k == FK_GC_OVERHEAD || k == FK_CHURN;
}

static int by_severity(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (from_window(x->kind) != from_window(y->kind))
		return from_window(x->kind) ? -1 : 1;
	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int sctx_init(struct sctx *c, struct hfs *fs)
{
	memset(c, 0, sizeof *c);
	c->fs = fs;
	c->p = &fs->sus;
	buf_init(&c->head);
	buf_init(&c->tmp);
	c->cls_type = cls_find(&fs->reg, "type");
	c->cls_site = cls_find(&fs->reg, "site");
	c->cls_ir = cls_find(&fs->reg, "indirect-root");
	c->cls_ds = cls_find(&fs->reg, "ds");
	c->cls_ih = cls_find(&fs->reg, "instance-health");
	if (c->cls_type == CLS_NONE || c->cls_site == CLS_NONE || c->cls_ir == CLS_NONE ||
	    c->cls_ds == CLS_NONE || c->cls_ih == CLS_NONE)
		return -EIO;
	int rc = cls_prepare(&fs->reg, c->cls_type);
	if (!rc) rc = cls_prepare(&fs->reg, c->cls_site);
	if (rc)
		return rc;
	c->dtype = cls_get(&fs->reg, c->cls_type);
	c->dsite = cls_get(&fs->reg, c->cls_site);
	c->dir = cls_get(&fs->reg, c->cls_ir);
	c->dds = cls_get(&fs->reg, c->cls_ds);
	c->dih = cls_get(&fs->reg, c->cls_ih);
	return c->dtype && c->dsite && c->dir && c->dds && c->dih ? 0 : -EIO;
}

static void sctx_free(struct sctx *c)
{
	for (uint32_t k = 0; k < c->nmemo; k++)
		free(c->memo[k].bits);
	for (uint32_t k = 0; k < c->nf; k++)
		buf_free(&c->f[k].b);
	buf_free(&c->head);
	buf_free(&c->tmp);
}

static uint32_t last_graph_gc(const struct hfs *fs)
{
	for (uint32_t i = fs->trace->ngcs; i > 0; i--) {
		if (hfs_gc_has_graph(fs, i - 1))
			return i - 1;
	}
	return UINT32_MAX;
}

static int gather(struct sctx *c, struct buf *out)
{
	struct hfs *fs = c->fs;
	const struct trace *t = fs->trace;
	const char *base = strrchr(t->path, '/');
	base = base ? base + 1 : t->path;
	int rc = rec(&c->head, "H", "heapfs suspects: %s, %" PRIu32 " GCs", base, t->ngcs);
	if (rc)
		return rc;
	if (t->ngcs == 0) {
		rc = rec(&c->head, "C", "nothing to check: the trace has no GC");
		goto assemble;
	}
	const struct win_result *res = NULL;
	struct lap_t t0;
	lap_now(&t0);
	if ((rc = hfs_windows_results(fs, &res)))
		return rc;
	lap("windows", &t0);
	uint32_t g = last_graph_gc(fs);
	rc = rec(&c->head, "C", "checked: leak, gc-overhead and churn windows; big retainers "
		 "(%" PRIu32 "%% of the heap) and bloat at %s", c->p->big_pct,
		 g == UINT32_MAX ? "no GC (no object graph in the trace)" : "the last GC with a graph");
	if (!rc) rc = checked_windows(c, res);
	if (!rc && res[WK_LEAK].found) {
		rc = sec_leak(c, &res[WK_LEAK]);
		lap("leak", &t0);
	}
	if (!rc && res[WK_GC_OVERHEAD].found) {
		rc = sec_gc_overhead(c, &res[WK_GC_OVERHEAD]);
		lap("gc-overhead", &t0);
	}
	if (!rc && res[WK_CHURN].found) {
		rc = sec_churn(c, &res[WK_CHURN]);
		lap("churn", &t0);
	}
	if (!rc && g != UINT32_MAX) {
		rc = sec_big(c, g);
		lap("big retainers", &t0);
	}
	if (!rc && g != UINT32_MAX) {
		rc = sec_bloat(c, g);
		lap("bloat", &t0);
	}
	if (rc)
		return rc;
	if (!res[WK_LEAK].found && !res[WK_GC_OVERHEAD].found && !res[WK_CHURN].found)
		rc = rec(&c->head, "C", "no leak, GC-overhead or churn window: nothing grew or "
			 "collected suspiciously");
assemble:
	if (rc)
		return rc;
	qsort(c->f, c->nf, sizeof *c->f, by_severity);
	rc = buf_put(out, c->head.data, c->head.len);
	for (uint32_t k = 0; k < c->nf && !rc; k++) {
		/* the F record: kind and severity, then the title line */
		rc = buf_printf(out, "F\t%s\t%" PRIu32 "\t", fkind_names[c->f[k].kind],
				c->f[k].severity);
		if (!rc)
			rc = buf_put(out, c->f[k].b.data, c->f[k].b.len);
	}
	return rc;
}

static int suspects_cb(void *vctx, struct buf *out)
{
	struct sctx c;
	int rc = sctx_init(&c, vctx);
	if (!rc)
		rc = gather(&c, out);
	sctx_free(&c);
	return rc;
}

/* ---- rendering ---- */

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

/* Field k (0-based) of a record line (tag excluded); the last field runs
 * to the end of the line. */
static const char *field(const char *line, size_t len, int k, size_t *flen)
{
	const char *p = memchr(line, '\t', len);
	const char *e = line + len;
	for (int i = 0; p && i < k; i++)
		p = memchr(p + 1, '\t', (size_t)(e - p - 1));
	if (!p) {
		*flen = 0;
		return e;
	}
	p++;
	const char *q = memchr(p, '\t', (size_t)(e - p));
	*flen = (size_t)((q ? q : e) - p);
	return p;
}

static const char *rest_from(const char *line, size_t len, int k, size_t *flen)
{
	const char *p = field(line, len, k, flen);
	*flen = (size_t)(line + len - p);
	return p;
}

static int render_text(const struct buf *blob, struct buf *out)
{
	const char *s = (const char *)blob->data, *e = s + blob->len;
	int rc = 0, nfind = 0, level = 0;
	while (s < e && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);
		size_t fl;
		const char *fp;
		char first[32];
		switch (s[0]) {
		case 'H':
			fp = rest_from(s, len, 0, &fl);
			rc = put_wrapped(out, "", 2, fp, fl);
			break;
		case 'C':
			fp = rest_from(s, len, 0, &fl);
			rc = put_wrapped(out, "", 2, fp, fl);
			level = -1;
			break;
		case 'F': {
			size_t kl, sl;
			const char *kp = field(s, len, 0, &kl);
			const char *sp = field(s, len, 1, &sl);
			fp = rest_from(s, len, 2, &fl);
			const char *title = kp;
			for (int k = 0; k < FK_COUNT; k++) {
				if (strlen(fkind_names[k]) == kl && !memcmp(fkind_names[k], kp, kl))
					title = fkind_titles[k];
			}
			char hd[1200];
			int hl = snprintf(hd, sizeof hd, "%d. %s (severity %.*s): %.*s", ++nfind, title,
					  (int)sl, sp, (int)fl, fp);
			if (hl < 0)
				hl = 0;
			rc = buf_putc(out, '\n');
			if (!rc)
				rc = put_wrapped(out, "", 3, hd, (size_t)hl < sizeof hd ? (size_t)hl : sizeof hd - 1);
			level = 0;
			break;
		}
		case 'T': {
			size_t ll;
			const char *lp = field(s, len, 0, &ll);
			level = ll && lp[0] == '1' ? 1 : 0;
			fp = rest_from(s, len, 1, &fl);
			int ind = 3 + 2 * level;
			snprintf(first, sizeof first, "%*s", ind, "");
			rc = put_wrapped(out, first, ind + 2, fp, fl);
			break;
		}
		case 'P': {
			fp = rest_from(s, len, 0, &fl);
			int ind = level < 0 ? 2 : 5 + 2 * level;
			rc = buf_printf(out, "%*s-> %.*s\n", ind, "", (int)fl, fp);
			break;
		}
		default:
			break;
		}
		s = nl ? nl + 1 : e;
	}
	return rc;
}

static int json_str(struct buf *out, const char *s, size_t len)
{
	return put_json_string(out, s, len);
}

static int render_json(const struct buf *blob, struct buf *out)
{
	const char *s = (const char *)blob->data, *e = s + blob->len;
	int rc = buf_printf(out, "{\"heading\": ");
	int in_find = 0, nclaims = 0, nchecked = 0, npaths = 0, heading = 0, in_claim = 0;
	/* state: inside "checked" (claims of the header), or a finding */
	while (s < e && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);
		size_t fl, kl, sl, ll;
		const char *fp, *kp, *sp, *lp;
		switch (s[0]) {
		case 'H':
			fp = rest_from(s, len, 0, &fl);
			rc = json_str(out, fp, fl);
			if (!rc) rc = buf_printf(out, ",\n \"checked\": [");
			heading = 1;
			break;
		case 'C':
			fp = rest_from(s, len, 0, &fl);
			if (in_claim) rc = buf_printf(out, "]}");
			if (!rc) rc = buf_printf(out, "%s\n  {\"text\": ", nchecked++ ? "," : "");
			if (!rc) rc = json_str(out, fp, fl);
			if (!rc) rc = buf_printf(out, ", \"paths\": [");
			in_claim = 1;
			npaths = 0;
			break;
		case 'F':
			kp = field(s, len, 0, &kl);
			sp = field(s, len, 1, &sl);
			fp = rest_from(s, len, 2, &fl);
			if (in_claim) rc = buf_printf(out, "]}");
			in_claim = 0;
			if (!rc) rc = buf_printf(out, in_find ? "]},\n  " : "],\n \"findings\": [\n  ");
			if (!rc) rc = buf_printf(out, "{\"kind\": ");
			if (!rc) rc = json_str(out, kp, kl);
			if (!rc) rc = buf_printf(out, ", \"severity\": %.*s, \"title\": ", (int)sl, sp);
			if (!rc) rc = json_str(out, fp, fl);
			if (!rc) rc = buf_printf(out, ", \"claims\": [");
			in_find = 1;
			nclaims = 0;
			break;
		case 'T':
			lp = field(s, len, 0, &ll);
			fp = rest_from(s, len, 1, &fl);
			if (in_claim) rc = buf_printf(out, "]}");
			if (!rc) rc = buf_printf(out, "%s\n   {\"level\": %c, \"text\": ", nclaims++ ? "," : "",
						ll ? lp[0] : '0');
			if (!rc) rc = json_str(out, fp, fl);
			if (!rc) rc = buf_printf(out, ", \"paths\": [");
			in_claim = 1;
			npaths = 0;
			break;
		case 'P':
			fp = rest_from(s, len, 0, &fl);
			if (in_claim) {
				rc = buf_printf(out, "%s", npaths++ ? ", " : "");
				if (!rc) rc = json_str(out, fp, fl);
			}
			break;
		default:
			break;
		}
		s = nl ? nl + 1 : e;
	}
	if (!rc && !heading)
		rc = buf_printf(out, "\"\", \"checked\": [");
	if (!rc && in_claim)
		rc = buf_printf(out, "]}");
	if (!rc)
		rc = buf_printf(out, in_find ? "]}\n ]}\n" : "],\n \"findings\": []}\n");
	return rc;
}

int render_suspects(struct hfs *fs, int json, struct buf *out)
{
	struct rc_entry *e;
	int rc = rcache_get(fs->rc, "\x01suspects", suspects_cb, fs, &e);
	if (rc)
		return rc;
	struct buf blob = { 0 };
	blob.data = (uint8_t *)rc_data(e);
	blob.len = rc_len(e);
	rc = json ? render_json(&blob, out) : render_text(&blob, out);
	rcache_put(fs->rc, e);
	return rc;
}

/* suspects_find.c - the findings of the suspects report (suspects_find.h).
 *
 * Each section (leak, gc-overhead, churn, big retainers, bloat) adds one
 * finding and its claims; claims are appended to one array as they are
 * found, so the claims of a finding are contiguous.  The findings are
 * sorted by severity when the report is written out.
 */
#include "analyses/suspects_find.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyses/bitset.h"
#include "analyses/closure.h"
#include "analyses/collections.h"
#include "analyses/keyspace.h"
#include "analyses/parallel.h"
#include "analyses/samples.h"
#include "model/progress.h"
#include "model/symbols.h"
#include "model/timing.h"

#define MAX_FINDINGS 8
#define ROOT_LEAVES_MAX 3   /* indirect roots named per group */
#define ROOT_WALK_MAX 16    /* hierarchy nodes visited per group */
#define ROOT_QUEUE_MAX 128  /* nodes waiting to be visited */
#define HOLDER_SITES_MAX 2  /* head allocation sites named per group */
#define DETAIL_GROUPS 2     /* leak groups per classifier with roots, holder, path */
#define CLO_MEMO_MAX 16     /* GC closures remembered by member set */

#define SUS_MAGIC 0x31535553u /* "SUS1" */

/* The graph sections' steps (graph_sections): the big-retainer section's
 * first two (its last is no step: big_end) and the analyses the bloat
 * section reads. */
enum { STEP_BIG_BEGIN, STEP_HEALTH, STEP_CENSUS, STEP_BIG_CLOSURES, STEP_DS_SUMS, STEP_COUNT };

#define BIG_CAND_MAX 32 /* candidate types whose closures the big section computes */
#define CAND_BATCH 8    /* their member sets made in one pass (group_members_bits_many): 1 bit an object each */

/* The big-retainer section between its steps (big_begin, big_closures,
 * big_end): its finding, the threshold, and the candidate types with the
 * lower bound of their retained size, then their GC closures' bytes. */
struct big_pending {
	struct sus_finding *f;
	uint64_t min, heap;
	uint32_t maxpct;
	uint32_t ncand, cand[BIG_CAND_MAX];
	uint64_t cand_lb[BIG_CAND_MAX], cand_ret[BIG_CAND_MAX];
};

struct sctx {
	const struct sus_source *src;
	const struct sus_params *p;
	const struct trace *t;
	uint32_t cls_type, cls_site, cls_ds, cls_ih;
	const struct cls_def *dtype, *dsite, *dds;
	struct sus_finding f[MAX_FINDINGS];
	uint32_t nf;
	struct sus_finding *cur;  /* the finding claims are added to */
	/* the report's arrays, as they grow (each an array of its struct) */
	struct buf checks, claims, ir_keys, hops, shares, strings;
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
	/* A closure context held across a loop of closures of one state
	 * (clo_hold, clo_drop; owned): each is 4.4 bytes an object of memory
	 * the kernel zeroes when it is new.  Like the memo, one thread's at a
	 * time (sets_closures lends it to one worker of its batch). */
	struct closure_ctx *cc;
	const struct heap_state *cc_state;
	/* The graph sections at warm.gci (graph_sections): the big section
	 * between its steps, and the analyses the bloat section reads, held
	 * here until the sections are done (the source's cache may be too
	 * small to keep them, and would then compute them again); steps: the
	 * round graph_task runs; pin[k]: what step k holds. */
	struct {
		uint32_t gci;
		const uint8_t *steps;
		void *pin[STEP_COUNT];
		struct big_pending big;
		struct ds_type_sums *sums;  /* [ntypes]: the heads' bytes by type (owned) */
		const struct cls_row *rows;
		uint32_t nrows;
		struct buf census;  /* struct coll_stat[] */
	} warm;
};

/* ---- timing (model/timing.h) ---- */

static void lap(const char *what, struct lap_t *t0)
{
	timing_lap("suspects", what, t0);
}

/* ---- building the report ---- */

static int add_str(struct sctx *c, const char *s, size_t len, uint32_t *off)
{
	if (c->strings.len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	*off = (uint32_t)c->strings.len;
	int rc = buf_put(&c->strings, s, len);
	return rc ? rc : buf_putc(&c->strings, '\0');
}

static uint32_t count_of(const struct buf *b, size_t size)
{
	return (uint32_t)(b->len / size);
}

static int add_check(struct sctx *c, struct sus_check ck)
{
	return buf_put(&c->checks, &ck, sizeof ck);
}

static struct sus_finding *finding_new(struct sctx *c, enum sus_kind k, uint32_t severity)
{
	if (c->nf == MAX_FINDINGS)
		return NULL;
	struct sus_finding *f = &c->f[c->nf++];
	memset(f, 0, sizeof *f);
	f->kind = k;
	f->severity = severity;
	f->first_claim = count_of(&c->claims, sizeof(struct sus_claim));
	c->cur = f;
	return f;
}

/* Appends a claim to the current finding. */
static int add_claim(struct sctx *c, struct sus_claim cl)
{
	int rc = buf_put(&c->claims, &cl, sizeof cl);
	if (!rc)
		c->cur->nclaims++;
	return rc;
}

/* ---- names ---- */

/* The by-type key naming a type (types the trace does not know: by-type's
 * unknown key). */
static uint32_t type_key(struct sctx *c, uint32_t type)
{
	return type < c->t->ntypes ? type : c->dtype->unknown_key;
}

/* Key of a site's allocating frame in by-site's keyspace (its first level). */
static uint32_t site_frame_key(struct sctx *c, uint32_t site)
{
	const struct cls_def *d = c->dsite;
	if (site >= d->npaths || d->path_off[site] == d->path_off[site + 1])
		return d->unknown_key;
	return d->path_keys[d->path_off[site]];
}

static int has_graph(struct sctx *c, uint32_t gci)
{
	return gci < c->t->ngcs && (c->t->gcs[gci].flags & HTR_GC_HAS_GRAPH);
}

/* A group chain: one classifier step (type or site frame). */
static void group_chain(struct sctx *c, int site, uint32_t key, struct chain *ch)
{
	chain_init(ch);
	chain_push(ch, ST_CLS, site ? c->cls_site : c->cls_type, key);
}

static int state_get(struct sctx *c, uint32_t gci, const struct heap_state **s)
{
	return c->src->state_get(c->src->ctx, gci, s);
}

static void state_put(struct sctx *c, const struct heap_state *s)
{
	c->src->state_put(c->src->ctx, s);
}

static void release(struct sctx *c, void *pin)
{
	if (pin)
		c->src->release(c->src->ctx, pin);
}

static int classification(struct sctx *c, uint32_t gci, const struct chain *ch, uint32_t cls,
			  void **pin, const struct cls_row **rows, uint32_t *nrows)
{
	return c->src->classification(c->src->ctx, gci, ch, cls, pin, rows, nrows);
}

static int group_totals(struct sctx *c, uint32_t gci, const struct chain *ch, struct cls_row *row)
{
	return c->src->group_totals(c->src->ctx, gci, ch, row);
}

/* ---- GC closures of the groups the report ranks ---- */

/* The memo's closures of a member set of state s (GC gci) with `count`
 * members: 1 (deep and ret set) if it holds them, else 0. */
static int memo_find(const struct sctx *c, const struct heap_state *s, uint32_t gci, const uint64_t *bits,
		     uint64_t count, struct closure_metrics *deep, struct closure_metrics *ret)
{
	size_t words = ((size_t)s->n + 63) / 64;
	for (uint32_t k = 0; k < c->nmemo; k++) {
		const struct clo_memo *m = &c->memo[k];
		if (m->gci == gci && m->count == count && !memcmp(m->bits, bits, words * 8)) {
			*deep = m->deep;
			*ret = m->ret;
			return 1;
		}
	}
	return 0;
}

/* Remembers a set's closures while the memo has room, taking *bits (set
 * to NULL then). */
static void memo_add(struct sctx *c, uint32_t gci, uint64_t **bits, uint64_t count,
		     const struct closure_metrics *deep, const struct closure_metrics *ret)
{
	if (c->nmemo == CLO_MEMO_MAX)
		return;
	c->memo[c->nmemo++] = (struct clo_memo){ gci, count, *bits, *deep, *ret };
	*bits = NULL;
}

/* Transitive and GC closure metrics of a member set of state s (GC gci).
 * Only the groups the report ranks are computed, one by one: the tree's
 * closure tables (by-type/table) compute every sibling of a group, most of
 * which the report never names.  *bits is taken over by the memo (set to
 * NULL) when it is remembered. */
static int set_closures(struct sctx *c, const struct heap_state *s, uint32_t gci, uint64_t **bits,
			struct closure_metrics *deep, struct closure_metrics *ret)
{
	uint64_t count = bitset_count(*bits, s->n);
	if (memo_find(c, s, gci, *bits, count, deep, ret))
		return 0;
	struct closure_ctx *cc = c->cc_state == s ? c->cc : NULL;
	int rc = cc ? 0 : closure_ctx_new(&cc, s);
	if (!rc)
		rc = closure_metrics_of(cc, *bits, deep, ret);
	if (cc != c->cc)
		closure_ctx_free(cc);
	if (!rc)
		memo_add(c, gci, bits, count, deep, ret);
	return rc;
}

/* The closures of a batch of member sets, on the threads: each worker
 * has a closure context of its own, made at its first set (4.4 bytes an
 * object each; worker 0 takes the one clo_hold holds, if any). */
struct clo_batch {
	const struct heap_state *s;
	uint64_t *const *bits;
	const uint32_t *todo;           /* indexes into bits of the sets to close */
	struct closure_ctx **cc;        /* [workers] */
	struct closure_metrics *deep, *ret;
};

static int clo_batch_task(void *ctx, uint32_t task, uint32_t worker)
{
	struct clo_batch *b = ctx;
	int rc = b->cc[worker] ? 0 : closure_ctx_new(&b->cc[worker], b->s);
	uint32_t k = b->todo[task];
	return rc ? rc : closure_metrics_of(b->cc[worker], b->bits[k], &b->deep[k], &b->ret[k]);
}

/* set_closures for n sets at once: the memo's first, then the others on
 * the threads, entered in the memo in order afterwards (taking their
 * bits, as set_closures does), so that the memo and the results are the
 * same for any number of threads.  For the loops over many groups outside
 * the report's memory peak (the leak section's growers): a context per
 * thread is more memory than set_closures' one. */
static int sets_closures(struct sctx *c, const struct heap_state *s, uint32_t gci, uint64_t **bits,
			 uint32_t n, struct closure_metrics *deep, struct closure_metrics *ret)
{
	uint32_t threads = par_threads(c->src->threads), todo[CAND_BATCH], ntodo = 0;
	uint64_t count[CAND_BATCH];
	if (threads < 2 || n < 2 || n > CAND_BATCH) {
		int rc = 0;
		for (uint32_t k = 0; k < n && !rc; k++)
			rc = set_closures(c, s, gci, &bits[k], &deep[k], &ret[k]);
		return rc;
	}
	for (uint32_t k = 0; k < n; k++) {
		count[k] = bitset_count(bits[k], s->n);
		if (!memo_find(c, s, gci, bits[k], count[k], &deep[k], &ret[k]))
			todo[ntodo++] = k;
	}
	if (threads > ntodo)
		threads = ntodo;
	struct closure_ctx **cc = calloc(threads ? threads : 1, sizeof *cc);
	if (!cc)
		return -ENOMEM;
	cc[0] = c->cc_state == s ? c->cc : NULL;
	struct clo_batch b = { s, bits, todo, cc, deep, ret };
	int rc = ntodo ? par_for(threads, ntodo, clo_batch_task, &b) : 0;
	for (uint32_t w = 0; w < threads; w++)
		if (cc[w] != c->cc)
			closure_ctx_free(cc[w]);
	free(cc);
	for (uint32_t i = 0; i < ntodo && !rc; i++)
		memo_add(c, gci, &bits[todo[i]], count[todo[i]], &deep[todo[i]], &ret[todo[i]]);
	return rc;
}

/* Holds a closure context for the closures of state s that follow, until
 * clo_drop: a loop over several groups then allocates one.  Without
 * memory for it, each closure makes its own (and fails as it would). */
static void clo_hold(struct sctx *c, const struct heap_state *s)
{
	if (c->cc || closure_ctx_new(&c->cc, s))
		return;
	c->cc_state = s;
}

static void clo_drop(struct sctx *c)
{
	closure_ctx_free(c->cc);
	c->cc = NULL;
	c->cc_state = NULL;
}

/* ---- leak: the groups that grew ---- */

struct grower {
	uint32_t key;
	int64_t net_b, net_c;
	uint64_t retained;   /* at the window's end; 0 without a graph */
};

/* The GC closures' bytes of n <= CAND_BATCH type or site groups at GC
 * gci (state s, which has a graph) into their `retained`: their member
 * sets in one pass over the objects, their closures on the threads. */
static int groups_retained(struct sctx *c, const struct heap_state *s, uint32_t gci, int site,
			   struct grower *g, uint32_t n)
{
	uint64_t *bits[CAND_BATCH] = { 0 };
	uint32_t keys[CAND_BATCH];
	struct closure_metrics deep[CAND_BATCH], ret[CAND_BATCH];
	for (uint32_t k = 0; k < n; k++)
		keys[k] = g[k].key;
	int rc = group_members_bits_many(c->src->reg, s, site ? c->cls_site : c->cls_type, keys, n, bits);
	if (rc == -EINVAL) { /* a classifier it refuses: the groups one by one */
		rc = 0;
		for (uint32_t k = 0; k < n && !rc; k++) {
			struct chain ch;
			group_chain(c, site, keys[k], &ch);
			rc = group_members_bits(c->src->reg, s, &ch, &bits[k]);
		}
	}
	if (!rc)
		rc = sets_closures(c, s, gci, bits, n, deep, ret);
	for (uint32_t k = 0; k < n; k++) {
		if (!rc)
			g[k].retained = ret[k].bytes;
		free(bits[k]);
	}
	return rc;
}

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

/* 1 if a type is the program's own (or a library's), not the JDK's: what
 * a person names first when instances of it accumulate, rather than the
 * HashMap$Nodes and byte[]s that hold its data. */
static int application_type(const struct trace *t, uint32_t type)
{
	static const char *const jdk[] = { "java.", "javax.", "jdk.", "sun.", "com.sun." };
	const struct trace_type *ty = type < t->ntypes ? &t->types[type] : NULL;
	if (!ty || !ty->name || ty->kind != HTR_TYPE_INSTANCE)
		return 0;
	for (size_t i = 0; i < sizeof jdk / sizeof *jdk; i++)
		if (!strncmp(ty->name, jdk[i], strlen(jdk[i])))
			return 0;
	return 1;
}

/* Moves the top biggest net growers among application types right after
 * the first m (the list is sorted by net growth): the candidates then hold
 * them even when JDK containers grew more bytes.  Returns the new m. */
static uint32_t add_application_growers(struct sctx *c, struct grower *all, uint32_t n, uint32_t m)
{
	uint32_t added = 0;
	for (uint32_t i = m; i < n && added < c->p->top; i++) {
		if (!application_type(c->t, all[i].key))
			continue;
		struct grower x = all[i];
		memmove(&all[m + 1], &all[m], (size_t)(i - m) * sizeof *all);
		all[m++] = x;
		added++;
	}
	return m;
}

/* 1 if the type belongs to the program's own package: the package of the
 * main class the recorder names (trace info `command`, the JVM's
 * sun.java.command: "pkg.Main args..."), nested classes included.  Its
 * types come before a library's when both accumulate. */
static int main_package_type(const struct trace *t, uint32_t type)
{
	const char *cmd = trace_info(t, "command");
	const struct trace_type *ty = type < t->ntypes ? &t->types[type] : NULL;
	if (!cmd || !ty || !ty->name)
		return 0;
	size_t end = strcspn(cmd, " "), dot = 0;
	for (size_t i = 0; i < end; i++)
		if (cmd[i] == '.')
			dot = i;
	if (!dot || (end > 4 && !strncmp(cmd + end - 4, ".jar", 4))) /* no package, or -jar */
		return 0;
	return !strncmp(ty->name, cmd, dot + 1);
}

/* Application types that retain at least half of what the first grower
 * retains go first (in retained order): the array or map a program's
 * objects sit in retains them all and a little more, and naming the
 * container before what accumulates in it hides the leak's subject.
 * Without a graph (no retained sizes) the same by net growth: the byte[]s
 * and int[]s a program's objects own grow as much as they do.  The
 * program's own package (main_package_type) goes before its libraries. */
static void application_first(struct sctx *c, struct grower *g, uint32_t n, int graph)
{
	if (!n)
		return;
	uint64_t bar = (graph ? g[0].retained : (uint64_t)g[0].net_b) / 2;
	uint32_t w = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = w; i < n; i++) {
			uint64_t v = graph ? g[i].retained : (uint64_t)g[i].net_b;
			if (!application_type(c->t, g[i].key) || v < bar || v == 0 ||
			    (pass == 0 && !main_package_type(c->t, g[i].key)))
				continue;
			struct grower x = g[i];
			memmove(&g[w + 1], &g[w], (size_t)(i - w) * sizeof *g);
			g[w++] = x;
		}
	}
}

/* The groups of one classifier that grew most between start and end: the
 * 2 x top biggest net growers and, for types, the top biggest application
 * types among the rest, re-ranked by retained size at end (what freeing
 * them would give back; one GC closure each), top kept.  Returns how many
 * in g. */
static int growers(struct sctx *c, int site, uint32_t start, uint32_t end, struct grower *g,
		   uint32_t *ng)
{
	struct chain ch;
	chain_init(&ch);
	ch.diff_gci = start;
	void *e;
	const struct cls_row *rows;
	uint32_t nrows, cand = c->p->top * 2, m = 0;
	*ng = 0;
	int rc = classification(c, end, &ch, site ? c->cls_site : c->cls_type, &e, &rows, &nrows);
	if (rc)
		return rc;
	struct grower *all = malloc(sizeof *all * (nrows ? nrows : 1));
	if (!all) {
		release(c, e);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nrows; i++) {
		/* in a diff, COL_LIVE holds the born */
		int64_t nb = (int64_t)rows[i].b[COL_LIVE] - (int64_t)rows[i].b[COL_DIED];
		int64_t nc = (int64_t)rows[i].c[COL_LIVE] - (int64_t)rows[i].c[COL_DIED];
		if (nb > 0)
			all[m++] = (struct grower){ rows[i].key, nb, nc, 0 };
	}
	release(c, e);
	qsort(all, m, sizeof *all, grower_by_net);
	uint32_t n = m;
	if (m > cand)
		m = cand;
	if (!site && c->t->ntypes)
		m = add_application_growers(c, all, n, m);
	const struct heap_state *s = NULL;
	if (m && has_graph(c, end) && !(rc = state_get(c, end, &s)))
		clo_hold(c, s);
	for (uint32_t i = 0; i < m && s && !rc; i += CAND_BATCH)
		rc = groups_retained(c, s, end, site, all + i, m - i < CAND_BATCH ? m - i : CAND_BATCH);
	if (s) {
		clo_drop(c);
		state_put(c, s);
	}
	if (!rc) {
		qsort(all, m, sizeof *all, grower_by_retained);
		if (!site)
			application_first(c, all, m, has_graph(c, end));
		*ng = m < c->p->top ? m : c->p->top;
		memcpy(g, all, *ng * sizeof *g);
	}
	free(all);
	return rc;
}

/* The indirect roots of a group: a walk down by-indirect-root's hierarchy
 * (largest children first) to ROOT_LEAVES_MAX leaves.  The hierarchy comes
 * in one pass over the group (src->ir_trie: what classifying the group
 * level by level gives, without a pass over the heap per level). */
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

/* The by-indirect-root keys from the trie's root down to node, appended to
 * the report's key array (at most CHAIN_KEYS_MAX: the deepest ones). */
static int ir_keys(struct sctx *c, const struct sus_ir_node *t, uint32_t node, uint32_t *first,
		   uint32_t *n)
{
	uint32_t keys[CHAIN_KEYS_MAX], k = 0;
	for (; node != 0 && k < CHAIN_KEYS_MAX; node = t[node].parent)
		keys[k++] = t[node].key;
	*first = count_of(&c->ir_keys, sizeof(uint32_t));
	*n = k;
	for (; k > 0; k--) {
		int rc = buf_put(&c->ir_keys, &keys[k - 1], sizeof keys[0]);
		if (rc)
			return rc;
	}
	return 0;
}

/* The children of node x, largest first, then by key. */
static uint32_t ir_children(const struct sus_ir_node *t, uint32_t nt, uint32_t x,
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

/* The roots keeping the group alive, best first; *top_first, *top_n get
 * the first one's keys in the report's key array (*top_n 0 when none). */
static int leak_roots(struct sctx *c, uint32_t end, int site, uint32_t key, uint64_t total,
		      uint32_t *top_first, uint32_t *top_n)
{
	const struct heap_state *s;
	uint64_t *bits = NULL;
	struct ir_visit *q = NULL, *kids = NULL;
	struct buf tb;
	struct chain ch;
	buf_init(&tb);
	*top_first = *top_n = 0;
	int rc = state_get(c, end, &s);
	if (rc)
		return rc;
	group_chain(c, site, key, &ch);
	if ((rc = group_members_bits(c->src->reg, s, &ch, &bits)) ||
	    (rc = c->src->ir_trie(c->src->ctx, end, s, bits, &tb)))
		goto out;
	const struct sus_ir_node *t = (const struct sus_ir_node *)tb.data;
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
			struct sus_claim cl = { .what = SUS_C_GROUP_ROOT, .level = 1, .site = (uint8_t)site,
						.gci = end, .key = key, .count = cur.count, .total = total };
			if (!(rc = ir_keys(c, t, cur.node, &cl.ir_first, &cl.nir)))
				rc = add_claim(c, cl);
			if (!rc && !leaves) {
				*top_first = cl.ir_first;
				*top_n = cl.nir;
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
	state_put(c, s);
	return rc;
}

/* The data structure holding a group: by-ds's largest element-of row (else
 * member-of), and the allocation sites of the heads of that type that hold
 * the group's members. */
struct holder_ctx {
	const struct sus_ds_roles *dv;
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

static int holder_sites(struct sctx *c, uint32_t end, int site, uint32_t key, uint32_t head_type)
{
	const struct heap_state *s;
	void *e = NULL;
	struct sus_ds_roles dv;
	uint64_t *bits = NULL, *per_site = NULL;
	struct chain ch;
	int rc = state_get(c, end, &s);
	if (rc)
		return rc;
	if ((rc = c->src->ds_roles(c->src->ctx, end, &e, &dv)))
		goto out;
	group_chain(c, site, key, &ch);
	if ((rc = group_members_bits(c->src->reg, s, &ch, &bits)))
		goto out;
	uint32_t nsites = c->t->nsites;
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
	for (uint32_t i = 0; i < nt && !rc; i++)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_HOLDER_SITE, .level = 1,
						      .site = 1, .gci = end, .key = top[i],
						      .key2 = type_key(c, head_type),
						      .count = per_key[top[i]] });
	free(per_key);
out:
	free(per_site);
	free(bits);
	if (e)
		release(c, e);
	state_put(c, s);
	return rc;
}

static int leak_holder(struct sctx *c, uint32_t end, int site, uint32_t key)
{
	struct chain ch;
	void *e;
	const struct cls_row *rows;
	uint32_t nrows, best = UINT32_MAX;
	int best_elem = 0;
	group_chain(c, site, key, &ch);
	int rc = classification(c, end, &ch, c->cls_ds, &e, &rows, &nrows);
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
	/* the head type's name as the claim shows it: at most 511 bytes of
	 * the by-ds value */
	char raw[512] = "";
	if (best != UINT32_MAX) {
		snprintf(raw, sizeof raw, "%s", ks_raw(&c->dds->ks, rows[best].key));
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GROUP_HOLDER, .level = 1,
						      .site = (uint8_t)site, .gci = end, .key = key,
						      .key2 = rows[best].key, .n = (uint32_t)best_elem,
						      .count = rows[best].c[COL_LIVE] });
	}
	release(c, e);
	if (rc || best == UINT32_MAX || !best_elem)
		return rc;
	/* the head type's id: by-type's keys are type ids */
	const char *tn = raw + 11;
	uint32_t tkey = ks_find_raw((struct keyspace *)&c->dtype->ks, tn, strlen(tn));
	if (tkey == KS_NO_KEY || tkey >= c->t->ntypes)
		return 0;
	return c->t->nsites ? holder_sites(c, end, site, key, tkey) : 0;
}

/* One path from a root: the first block of the paths file of the group's
 * members that root reaches (none: all members), which starts at that
 * root.  Not the whole group's paths file: it samples the oldest members,
 * and for a recorded leak of HashMap$Nodes those were the JDK's system
 * properties, not the leaking map's entries. */
static int hop_cb(void *vctx, const char *via, size_t via_len, const char *type, size_t type_len)
{
	struct sctx *c = vctx;
	struct sus_hop h;
	int rc = add_str(c, via, via_len, &h.via);
	if (!rc) rc = add_str(c, type, type_len, &h.type);
	return rc ? rc : buf_put(&c->hops, &h, sizeof h);
}

static int leak_path(struct sctx *c, uint32_t end, int site, uint32_t key, uint32_t root_first,
		     uint32_t root_n)
{
	uint32_t first = count_of(&c->hops, sizeof(struct sus_hop));
	/* the keys stay put: hop_cb appends to other arrays */
	const uint32_t *root = root_n ? (const uint32_t *)c->ir_keys.data + root_first : NULL;
	int rc = c->src->group_path(c->src->ctx, end, site, key, root, root_n, hop_cb, c);
	uint32_t n = count_of(&c->hops, sizeof(struct sus_hop)) - first;
	if (!rc && n)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GROUP_PATH, .level = 1,
						      .site = (uint8_t)site, .gci = end, .key = key,
						      .ir_first = root_first, .nir = root_n,
						      .item_first = first, .nitems = n });
	return rc == -ENOENT ? 0 : rc;
}

/* Shared ownership (gc-roots paper 5.1): the root objects that keep the
 * group alive (its roots file) retain more together than the sum of what
 * each retains. */
struct owner {
	uint64_t id, retained;
};

static int owner_cb(void *vctx, uint64_t id, uint64_t retained)
{
	struct owner o = { id, retained };
	return buf_put(vctx, &o, sizeof o);
}

static int leak_shared(struct sctx *c, uint32_t end, int site, uint32_t key)
{
	struct buf ob;
	buf_init(&ob);
	const struct heap_state *s = NULL;
	uint64_t *bits = NULL;
	int rc = c->src->group_owners(c->src->ctx, end, site, key, owner_cb, &ob);
	if (rc)
		goto out;
	if ((rc = state_get(c, end, &s)))
		goto out;
	bits = bitset_alloc(s->n);
	if (!bits) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t nowners = 0, one_type = UINT32_MAX;
	int same_type = 1;
	uint64_t sum_single = 0;
	const struct owner *ow = (const struct owner *)ob.data;
	for (size_t k = 0; k < ob.len / sizeof *ow; k++) {
		uint32_t o = heap_state_find(s, ow[k].id);
		if (o == UINT32_MAX)
			continue;
		sum_single += ow[k].retained;
		bitset_set(bits, o);
		uint32_t ty = hs_info(s, o)->type;
		if (nowners++ && ty != one_type)
			same_type = 0;
		one_type = ty;
	}
	if (nowners < 2)
		goto out;
	struct closure_metrics deep, ret;
	if ((rc = set_closures(c, s, end, &bits, &deep, &ret)))
		goto out;
	struct sus_claim cl = { .what = SUS_C_GROUP_NOT_SHARED, .level = 1, .site = (uint8_t)site,
				.gci = end, .key = key, .n = nowners, .bytes = ret.bytes,
				.key2 = KS_NO_KEY };
	if (!sus_shared(nowners, ret.bytes, sum_single)) {
		rc = add_claim(c, cl);
		goto out;
	}
	cl.what = SUS_C_GROUP_SHARED;
	cl.bytes2 = sum_single;
	if (same_type) {
		/* the owners' type group is exactly the owners: its retained size
		 * is the joint one */
		struct chain tc;
		struct cls_row row;
		group_chain(c, 0, one_type, &tc);
		if (!group_totals(c, end, &tc, &row) && row.c[COL_LIVE] == nowners)
			cl.key2 = type_key(c, one_type);
	}
	rc = add_claim(c, cl);
out:
	free(bits);
	if (s)
		state_put(c, s);
	buf_free(&ob);
	return rc == -ENOENT ? 0 : rc;
}

static int leak_group(struct sctx *c, uint32_t end, int site, const struct grower *g, int details)
{
	int graph = has_graph(c, end);
	int rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GROUP_GROWTH, .site = (uint8_t)site,
						  .gci = end, .key = g->key, .n = (uint32_t)graph,
						  .net_bytes = g->net_b, .net_count = g->net_c });
	if (!rc && graph)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GROUP_RETAINED, .level = 1,
						      .site = (uint8_t)site, .gci = end, .key = g->key,
						      .bytes = g->retained });
	if (rc || !graph || !details)
		return rc;
	struct chain ch;
	struct cls_row row;
	uint32_t top_first, top_n;
	group_chain(c, site, g->key, &ch);
	if (!(rc = group_totals(c, end, &ch, &row)) &&
	    !(rc = leak_roots(c, end, site, g->key, row.c[COL_LIVE], &top_first, &top_n)) &&
	    !(rc = leak_holder(c, end, site, g->key)) &&
	    !(rc = leak_path(c, end, site, g->key, top_first, top_n)))
		rc = leak_shared(c, end, site, g->key);
	return rc;
}

/* ---- a recording of samples (JFR): candidates and sampled sites ---- */

/* The window's time: from its first GC's start to its last GC's end. */
static void window_ns(struct sctx *c, uint32_t start, uint32_t end, uint64_t *from, uint64_t *to)
{
	*from = c->t->gcs[start].start_ns;
	*to = c->t->gcs[end].end_ns + 1;
}

/* The names of a type and of a site's allocating frame, as strings. */
static int add_type_site(struct sctx *c, uint32_t type, uint32_t site, uint32_t *tk, uint32_t *sk)
{
	const struct trace *t = c->t;
	char scratch[64];
	const char *tn = type == HTR_NO_TYPE ? "<unknown type>" : trace_type_name(t, type, scratch, sizeof scratch);
	struct buf b;
	buf_init(&b);
	int rc = add_str(c, tn, strlen(tn), tk);
	if (!rc)
		rc = site < t->nsites && t->sites[site].nframes ? sym_frame(t, &t->sites[site].frames[0], &b)
								: buf_printf(&b, "<unknown site>");
	if (!rc)
		rc = add_str(c, (const char *)b.data, b.len, sk);
	buf_free(&b);
	return rc;
}

static int samples_error(struct sctx *c, int rc, const struct htr_err *err)
{
	if (rc != -ENOMEM)
		c->src->trace_error(c->src->ctx, err);
	return rc == -ENOMEM ? rc : -EIO;
}

/* The sites that allocated most in the window, from the allocation
 * samples (estimates: analyses/samples.h). */
static int sampled_sites(struct sctx *c, uint32_t start, uint32_t end)
{
	struct sample_set ss;
	struct htr_err err;
	uint64_t from, to;
	memset(&err, 0, sizeof err);
	window_ns(c, start, end, &from, &to);
	int rc = samples_collect(c->t, from, to, &ss, &err);
	if (rc)
		return samples_error(c, rc, &err);
	rc = add_claim(c, (struct sus_claim){ .what = SUS_C_SAMPLED_SITES, .gci = end, .count = ss.samples,
					      .bytes = ss.weight });
	uint32_t top = c->p->top < 16 ? c->p->top : 16;
	for (uint32_t i = 0; i < ss.n && i < top && !rc; i++) {
		struct sus_claim cl = { .what = SUS_C_SAMPLED_SITE, .level = 1, .gci = end,
					.count = ss.rows[i].samples, .bytes = ss.rows[i].weight };
		if (!(rc = add_type_site(c, ss.rows[i].type, ss.rows[i].site, &cl.key, &cl.key2)))
			rc = add_claim(c, cl);
	}
	samples_free(&ss);
	return rc;
}

/* Hops from the root to the sampled object: the root, then each object
 * with the field or index that leads to it. */
static int candidate_hops(struct sctx *c, const struct old_set *os, const struct old_row *r, uint32_t *first,
			  uint32_t *n)
{
	char scratch[64];
	*first = count_of(&c->hops, sizeof(struct sus_hop));
	*n = 0;
	const char *kind = os->strs + r->root_kind, *sys = os->strs + r->root_system;
	struct buf root;
	buf_init(&root);
	int rc = buf_printf(&root, "%s%s%s", *kind ? kind : "root", *sys ? " " : "", sys);
	for (uint64_t k = 0; k < r->npath && !rc; k++) {
		const struct old_path_entry *e = &os->path[r->path_off + r->npath - 1 - k];
		const struct old_path_entry *holder = k ? e + 1 : NULL;
		const char *via = holder ? os->strs + holder->how : (const char *)root.data;
		const char *ty = old_entry_type(c->t, os, e, scratch, sizeof scratch);
		struct sus_hop h;
		if (!(rc = add_str(c, via, strlen(via), &h.via)) && !(rc = add_str(c, ty, strlen(ty), &h.type)))
			rc = buf_put(&c->hops, &h, sizeof h);
		(*n)++;
	}
	buf_free(&root);
	return rc;
}

/* The static fields that hold the most candidates (the accumulation
 * points a user fixes: a cache, a registry), from the recorded paths. */
static int candidate_holders(struct sctx *c, const struct old_set *os, uint32_t end)
{
	enum { MAXH = 64 };
	char name[MAXH][160];
	uint64_t count[MAXH];
	uint32_t nh = 0;
	uint64_t with_path = 0;
	for (uint64_t i = 0; i < os->n; i++) {
		char h[160];
		with_path += os->rows[i].npath > 1;
		if (!old_static_holder(c->t, os, &os->rows[i], h, sizeof h))
			continue;
		uint32_t k = 0;
		while (k < nh && strcmp(name[k], h) != 0)
			k++;
		if (k == nh) {
			if (nh == MAXH)
				continue; /* more distinct holders than a report names */
			memcpy(name[nh], h, sizeof h);
			count[nh++] = 0;
		}
		count[k]++;
	}
	if (os->n && !with_path) /* key 0: "" says no path was recorded */
		return add_claim(c, (struct sus_claim){ .what = SUS_C_CANDIDATE_HOLDER, .level = 1, .gci = end,
							.total = os->n });
	uint32_t top[16];
	uint32_t nt = sus_top_k(count, nh, c->p->top < 16 ? c->p->top : 16, top);
	int rc = 0;
	for (uint32_t k = 0; k < nt && !rc; k++) {
		struct sus_claim cl = { .what = SUS_C_CANDIDATE_HOLDER, .level = 1, .gci = end,
					.count = count[top[k]], .total = os->n };
		if (!(rc = add_str(c, name[top[k]], strlen(name[top[k]]), &cl.key)))
			rc = add_claim(c, cl);
	}
	return rc;
}

/* Which candidate groups to show: the top most sampled, and the most
 * sampled of the application's own types (issue 27: the type a user
 * wrote is the one to name, even when its arrays or map nodes are sampled
 * more often) when it is not among them. */
static void candidate_groups(struct sctx *c, const struct old_set *os, uint32_t top, uint32_t *shown,
			     uint32_t *n)
{
	*n = 0;
	int app_shown = 0;
	for (uint32_t g = 0; g < os->ngroups && *n < top; g++) {
		shown[(*n)++] = g;
		app_shown |= os->groups[g].type != HTR_NO_TYPE && application_type(c->t, os->groups[g].type);
	}
	for (uint32_t g = *n; g < os->ngroups && !app_shown; g++) {
		if (os->groups[g].type != HTR_NO_TYPE && application_type(c->t, os->groups[g].type)) {
			shown[(*n)++] = g;
			app_shown = 1;
		}
	}
}

/* The leak candidates of a recording, most sampled (type, site) first:
 * objects sampled at allocation that were still alive when the recording
 * was written, how many of them were allocated in the leak window, and
 * the path from a GC root to the oldest of each kind. */
static int leak_candidates(struct sctx *c, uint32_t start, uint32_t end)
{
	struct old_set os;
	struct htr_err err;
	uint64_t from, to;
	memset(&err, 0, sizeof err);
	window_ns(c, start, end, &from, &to);
	int rc = old_samples_collect(c->t, &os, &err);
	if (rc)
		return samples_error(c, rc, &err);
	if (os.n)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_CANDIDATES, .gci = end, .count = os.n });
	if (!rc)
		rc = candidate_holders(c, &os, end);
	uint32_t top = c->p->top < 16 ? c->p->top : 16, shown[17], nshown = 0;
	candidate_groups(c, &os, top, shown, &nshown);
	for (uint32_t k = 0; k < nshown && !rc; k++) {
		uint32_t g = shown[k];
		const struct old_group *gr = &os.groups[g];
		const struct old_row *ex = &os.rows[gr->example];
		struct sus_claim cl = { .what = SUS_C_CANDIDATE, .level = 1, .gci = end, .count = gr->samples,
					.total = os.n };
		for (uint64_t i = 0; i < os.n; i++) { /* this group's samples born in the window */
			const struct old_row *r = &os.rows[i];
			cl.n += r->type == gr->type && r->alloc_ns >= from && r->alloc_ns < to &&
				samples_site_key(c->t, r->site) == samples_site_key(c->t, gr->site);
		}
		if ((rc = add_type_site(c, gr->type, gr->site, &cl.key, &cl.key2)) || (rc = add_claim(c, cl)))
			break;
		if (ex->npath > 1 && k < DETAIL_GROUPS * 2) {
			struct sus_claim pc = { .what = SUS_C_CANDIDATE_PATH, .level = 1, .gci = end };
			if (!(rc = candidate_hops(c, &os, ex, &pc.item_first, &pc.nitems)))
				rc = add_claim(c, pc);
		}
	}
	old_samples_free(&os);
	return rc;
}

static uint64_t reachable_at(struct sctx *c, const struct sus_windows *w, uint32_t gci)
{
	if (w->reachable && w->reachable[gci] != UINT64_MAX)
		return w->reachable[gci];
	return c->t->gcs[gci].used_after;
}

static int sec_leak(struct sctx *c, const struct sus_windows *w)
{
	const struct win_result *r = w->leak;
	uint64_t at_end = reachable_at(c, w, r->end_gci);
	uint64_t growth = r->growth_bytes > 0 ? (uint64_t)r->growth_bytes : 0;
	uint32_t sev = sus_pct(growth, at_end);
	struct sus_finding *f = finding_new(c, SUS_LEAK, sev ? sev : 1);
	if (!f)
		return -ENOMEM;
	f->start_gci = r->start_gci;
	f->end_gci = r->end_gci;
	f->bytes = growth;
	f->per_s = r->per_s;
	f->reachable = at_end;
	int rc = add_claim(c, (struct sus_claim){ .what = SUS_C_LEAK_WINDOW, .gci = r->end_gci });
	/* The heuristic cannot tell a leak from a program that builds up what
	 * it needs (start-up, a batch job's result) when the growth starts
	 * with the trace: say so, rather than let severity alone speak. */
	if (!rc && r->first == 0)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_LEAK_CAUTION, .gci = r->end_gci });
	if (!rc && c->t->objects_unrecorded) { /* samples, no objects: candidates and sites */
		rc = leak_candidates(c, r->start_gci, r->end_gci);
		return rc ? rc : sampled_sites(c, r->start_gci, r->end_gci);
	}
	if (rc || !w->leak_spans)
		return rc;
	rc = add_claim(c, (struct sus_claim){ .what = SUS_C_LEAK_GROWERS, .gci = r->end_gci });
	/* a trace without allocation sites (heap dumps) has one site group,
	 * <unknown site>, which says nothing */
	int last = c->t->nsites ? 1 : 0;
	for (int site = 0; site <= last && !rc; site++) {
		struct grower g[16];
		uint32_t ng = 0;
		if (c->p->top > 16)
			return -EINVAL;
		struct lap_t t0;
		lap_now(&t0);
		rc = growers(c, site, r->start_gci, r->end_gci, g, &ng);
		lap(site ? "leak: site growers" : "leak: type growers", &t0);
		for (uint32_t i = 0; i < ng && !rc; i++)
			rc = leak_group(c, r->end_gci, site, &g[i], i < DETAIL_GROUPS);
		lap(site ? "leak: site details" : "leak: type details", &t0);
	}
	return rc;
}

/* ---- GC overhead: who survived the window's GCs ---- */

/* What one recorded object stands for: itself, or in a sampled trace
 * (trace.h sample_interval) its weight in objects and bytes, rounded per
 * object (the same for every object of one size, so subtracting what was
 * added cancels exactly). */
static void stands_for(const struct trace *t, uint32_t flags, uint64_t size, uint64_t *n, uint64_t *bytes)
{
	if (!t->sample_interval) {
		*n = 1;
		*bytes = size;
		return;
	}
	if (flags & HTR_ALLOC_WALKED) { /* met by a heap walk, no sample: no estimate */
		*n = *bytes = 0;
		return;
	}
	double w = trace_sample_weight(t, flags, size);
	*n = (uint64_t)llround(w);
	*bytes = (uint64_t)llround(w * (double)size);
}

static int survivors_rank(struct sctx *c, const struct heap_state *s, uint32_t start, uint32_t end,
			  int site)
{
	uint32_t nkeys = site ? ks_count(&c->dsite->ks) : c->t->ntypes;
	uint32_t *info_key = malloc(sizeof *info_key * (s->ninfos ? s->ninfos : 1));
	uint64_t *info_size = malloc(sizeof *info_size * (s->ninfos ? s->ninfos : 1));
	uint64_t *info_count = malloc(sizeof *info_count * (s->ninfos ? s->ninfos : 1));
	uint64_t *bg = calloc(nkeys ? nkeys : 1, sizeof *bg);
	uint64_t *cnt = calloc(nkeys ? nkeys : 1, sizeof *cnt);
	uint32_t top[16];
	int rc = 0;
	if (!info_key || !info_size || !info_count || !bg || !cnt) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->ninfos; i++) {
		info_key[i] = site ? site_frame_key(c, s->infos[i].site) : s->infos[i].type;
		stands_for(c->t, s->infos[i].flags, s->infos[i].size, &info_count[i], &info_size[i]);
	}
	sus_survivors(s->n, s->birth, s->info, info_key, info_size, info_count, nkeys, start, end, bg, cnt);
	uint32_t nt = sus_top_k(bg, nkeys, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < nt && !rc; i++)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GROUP_SURVIVED, .level = 1,
						      .site = (uint8_t)site, .gci = end, .key = top[i],
						      .count = cnt[top[i]], .bytes = bg[top[i]] });
out:
	free(info_key);
	free(info_size);
	free(info_count);
	free(bg);
	free(cnt);
	return rc;
}

static int sec_gc_overhead(struct sctx *c, const struct win_result *r)
{
	uint32_t pct = (uint32_t)(r->per_s * 100 + 0.5);
	struct sus_finding *f = finding_new(c, SUS_GC_OVERHEAD, pct);
	if (!f)
		return -ENOMEM;
	f->start_gci = r->start_gci;
	f->end_gci = r->end_gci;
	f->pct = pct;
	f->gc_ms = r->gc_ns / 1000000;
	int rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GCO_WINDOW, .gci = r->end_gci });
	if (!rc && c->t->objects_unrecorded) /* no survivors known: what allocated */
		return sampled_sites(c, r->start_gci, r->end_gci);
	if (!rc)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_GCO_SURVIVORS, .gci = r->end_gci });
	if (rc)
		return rc;
	const struct heap_state *s;
	if ((rc = state_get(c, r->end_gci, &s)))
		return rc;
	rc = survivors_rank(c, s, r->start_gci, r->end_gci, 0);
	if (!rc)
		rc = survivors_rank(c, s, r->start_gci, r->end_gci, 1);
	state_put(c, s);
	return rc;
}

/* ---- churn: born and dead inside the window ---- */

struct churn_tally {
	uint64_t *tc, *tb;  /* per type: allocated in the window, then minus survivors */
	uint64_t *sc, *sb;  /* per by-site first-level key */
	uint64_t *fb;       /* per trace site (all its frames): bytes, for the callers */
	uint32_t ntypes, nkeys;
	uint64_t alloc_bytes;
};

static void churn_add(struct sctx *c, struct churn_tally *t, uint32_t type, uint32_t site,
		      uint32_t flags, uint64_t size, int sub)
{
	uint32_t sk = site_frame_key(c, site);
	uint64_t n, bytes;
	stands_for(c->t, flags, size, &n, &bytes);
	if (sub) {
		n = (uint64_t)0 - n;
		bytes = (uint64_t)0 - bytes;
	}
	if (type < t->ntypes) {
		t->tc[type] += n;
		t->tb[type] += bytes;
	}
	if (sk < t->nkeys) {
		t->sc[sk] += n;
		t->sb[sk] += bytes;
	}
	if (site < c->t->nsites)
		t->fb[site] += bytes;
	if (!sub)
		t->alloc_bytes += bytes;
}

/* Allocations after GC start-1 ended and before GC end began, from the
 * trace's event frames (frames end at GC boundaries: the ones before the
 * window are skipped by their GC index range, never decoded). */
static int churn_scan(struct sctx *c, uint32_t start, uint32_t end, struct churn_tally *t)
{
	const struct trace *tr = c->t;
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
			c->src->trace_error(c->src->ctx, &err);
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
				churn_add(c, t, ev.u.alloc.type, ev.u.alloc.site, ev.u.alloc.flags,
					  ev.u.alloc.size, 0);
			}
		}
		htr_iter_close(it);
		if (more < 0) {
			c->src->trace_error(c->src->ctx, &err);
			return -EIO;
		}
		if (fr->last_gc_index != UINT32_MAX)
			ended = (uint64_t)fr->last_gc_index + 1;
	}
	return rc;
}

/* A JDK method allocates for its caller (Long.valueOf boxes for the code
 * that called it): for a churned site whose allocating frame is the
 * JDK's, the caller frame of its trace site with the most churned bytes,
 * as a report string in *str.  0 and *found = 0 when there is none (an
 * application frame, or sites of one frame). */
static int churn_caller(struct sctx *c, const struct churn_tally *t, uint32_t key, uint32_t *str, int *found)
{
	static const char *const jdk[] = { "java.", "javax.", "jdk.", "sun.", "com.sun." };
	const struct trace *tr = c->t;
	uint32_t best = UINT32_MAX;
	*found = 0;
	for (uint32_t s = 0; s < tr->nsites; s++) {
		if (t->fb[s] && (int64_t)t->fb[s] > 0 && site_frame_key(c, s) == key &&
		    (best == UINT32_MAX || t->fb[s] > t->fb[best]))
			best = s;
	}
	if (best == UINT32_MAX || tr->sites[best].nframes < 2)
		return 0;
	uint32_t m = tr->sites[best].frames[0].method;
	const char *cls = m < tr->nmethods ? tr->methods[m].cls : NULL;
	int in_jdk = 0;
	for (size_t i = 0; cls && i < sizeof jdk / sizeof *jdk; i++)
		in_jdk |= !strncmp(cls, jdk[i], strlen(jdk[i]));
	if (!in_jdk)
		return 0;
	struct buf b;
	buf_init(&b);
	int rc = sym_frame(tr, &tr->sites[best].frames[1], &b);
	if (!rc)
		rc = add_str(c, (const char *)b.data, b.len, str);
	buf_free(&b);
	*found = !rc;
	return rc;
}

static int churn_rank(struct sctx *c, const struct churn_tally *t, const uint64_t *cnt, const uint64_t *bytes,
		      uint32_t n, int site, uint32_t end)
{
	uint32_t top[16];
	uint32_t nt = sus_top_k(bytes, n, c->p->top < 16 ? c->p->top : 16, top);
	int rc = 0;
	for (uint32_t i = 0; i < nt && !rc; i++) {
		/* objects that never survived a GC are in no heap state: the
		 * window files are the evidence; the group directory only when
		 * some of its objects are alive at the window's end */
		struct chain ch;
		struct cls_row row;
		group_chain(c, site, top[i], &ch);
		int alive = !group_totals(c, end, &ch, &row) && row.c[COL_LIVE];
		struct sus_claim cl = { .what = SUS_C_GROUP_CHURNED, .level = 1, .site = (uint8_t)site,
					.gci = end, .key = top[i], .n = (uint32_t)alive, .count = cnt[top[i]],
					.bytes = bytes[top[i]] };
		int found = 0;
		if (site)
			rc = churn_caller(c, t, top[i], &cl.key2, &found);
		cl.pct = (uint32_t)found;
		if (!rc)
			rc = add_claim(c, cl);
	}
	return rc;
}

/* A recording of samples: the churn window's sampled sites. */
static int sec_churn_sampled(struct sctx *c, const struct win_result *r)
{
	struct sus_finding *f = finding_new(c, SUS_CHURN, 1);
	if (!f)
		return -ENOMEM;
	f->start_gci = r->start_gci;
	f->end_gci = r->end_gci;
	f->per_s = r->per_s;
	f->bytes = r->freed_bytes;
	int rc = add_claim(c, (struct sus_claim){ .what = SUS_C_CHURN_WINDOW, .gci = r->end_gci });
	return rc ? rc : sampled_sites(c, r->start_gci, r->end_gci);
}

static int sec_churn(struct sctx *c, const struct win_result *r)
{
	if (c->t->objects_unrecorded)
		return sec_churn_sampled(c, r);
	struct churn_tally t;
	memset(&t, 0, sizeof t);
	t.ntypes = c->t->ntypes;
	t.nkeys = ks_count(&c->dsite->ks);
	t.tc = calloc(t.ntypes + 1, sizeof *t.tc);
	t.tb = calloc(t.ntypes + 1, sizeof *t.tb);
	t.sc = calloc(t.nkeys + 1, sizeof *t.sc);
	t.sb = calloc(t.nkeys + 1, sizeof *t.sb);
	t.fb = calloc((size_t)c->t->nsites + 1, sizeof *t.fb);
	const struct heap_state *s = NULL;
	int rc = -ENOMEM;
	if (!t.tc || !t.tb || !t.sc || !t.sb || !t.fb)
		goto out;
	if ((rc = churn_scan(c, r->start_gci, r->end_gci, &t)))
		goto out;
	/* minus the window's allocations still alive at its end */
	if ((rc = state_get(c, r->end_gci, &s)))
		goto out;
	for (uint32_t o = 0; o < s->n; o++) {
		uint32_t bth = s->birth[o];
		int in_window = bth == HS_NO_BIRTH ? r->start_gci == 0 && !(hs_info(s, o)->flags &
									       HTR_ALLOC_PREEXISTING)
						   : bth + 1 >= r->start_gci && bth < r->end_gci;
		if (in_window) {
			const struct objinfo *oi = hs_info(s, o);
			churn_add(c, &t, oi->type, oi->site, oi->flags, oi->size, 1);
		}
	}
	uint64_t died = 0;
	for (uint32_t k = 0; k < t.ntypes; k++)
		died += t.tb[k];
	uint32_t sev = sus_pct(died, t.alloc_bytes);
	struct sus_finding *f = finding_new(c, SUS_CHURN, sev ? sev : 1);
	rc = -ENOMEM;
	if (!f)
		goto out;
	f->start_gci = r->start_gci;
	f->end_gci = r->end_gci;
	f->per_s = r->per_s;
	f->bytes = r->freed_bytes;
	rc = add_claim(c, (struct sus_claim){ .what = SUS_C_CHURN_WINDOW, .gci = r->end_gci });
	if (!rc)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_CHURN_BORN_DEAD, .gci = r->end_gci,
						      .pct = sev });
	if (!rc) rc = churn_rank(c, &t, t.tc, t.tb, t.ntypes, 0, r->end_gci);
	if (!rc) rc = churn_rank(c, &t, t.sc, t.sb, t.nkeys, 1, r->end_gci);
out:
	if (s)
		state_put(c, s);
	free(t.tc);
	free(t.tb);
	free(t.sc);
	free(t.sb);
	free(t.fb);
	return rc;
}

/* ---- big retainers ---- */

/* The package that owns big retainer o: that of the class whose static
 * field holds it, cut to its first two components ("com.acme" of
 * com.acme.session.Registry; "" for the default package), into out; 0
 * when no static field holds o. */
static int owner_package(const struct sctx *c, const struct heap_state *s, uint32_t o, char *out, size_t len)
{
	for (uint32_t r = 0; r < s->nroots; r++) {
		const struct hs_root *rt = &s->roots[r];
		if (rt->object != o || rt->kind != HTR_ROOT_STATIC || rt->type >= c->t->ntypes ||
		    !c->t->types[rt->type].name)
			continue;
		const char *name = c->t->types[rt->type].name, *last = strrchr(name, '.');
		size_t n = 0;
		if (last) { /* up to the second dot, or the last one before the class */
			const char *first = strchr(name, '.'), *second = strchr(first + 1, '.');
			n = (size_t)((second && second <= last ? second : last) - name);
		}
		snprintf(out, len, "%.*s", (int)n, name);
		return 1;
	}
	return 0;
}

/* Whether type k is of the owner's package (owner_package), or, without
 * one, any type outside the JDK: the accumulated objects a user wrote,
 * rather than the library containers (Guava's cache entries, an event
 * bus's subscribers) that hold them. */
static int owned_type(const struct sctx *c, uint32_t k, const char *owner, int have_owner)
{
	if (!have_owner)
		return application_type(c->t, k);
	const struct trace_type *ty = &c->t->types[k];
	if (!ty->name || ty->kind != HTR_TYPE_INSTANCE)
		return 0;
	size_t n = strlen(owner);
	return n ? !strncmp(ty->name, owner, n) && ty->name[n] == '.' : strchr(ty->name, '.') == NULL;
}

/* The MAT-like sentence of a big retainer o whose accumulation point is
 * a: which objects accumulated below a (the owner's type first), how
 * many, what they retain, and the roots that hold o. */
static int accumulated_claim(struct sctx *c, const struct heap_state *s, const struct dominators *d,
			     const struct sus_domtree *dt, uint32_t o, uint32_t a, uint32_t gci)
{
	uint32_t nt = c->t->ntypes;
	uint32_t *info_key = malloc(sizeof *info_key * (s->ninfos ? s->ninfos : 1));
	uint8_t *app = calloc(nt ? nt : 1, 1);
	struct buf roots;
	buf_init(&roots);
	int rc = info_key && app ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < s->ninfos && !rc; i++)
		info_key[i] = s->infos[i].type;
	char owner[256];
	int have_owner = owner_package(c, s, o, owner, sizeof owner);
	for (uint32_t k = 0; k < nt && !rc; k++)
		app[k] = (uint8_t)owned_type(c, k, owner, have_owner);
	uint32_t type;
	uint64_t count, bytes;
	if (!rc)
		rc = sus_accumulated(dt, d->retained, s->info, info_key, nt, app, a, &type, &count, &bytes);
	if (!rc && type != UINT32_MAX) {
		struct sus_claim cl = { .what = SUS_C_ACCUMULATED, .level = 1, .gci = gci, .key = type_key(c, type),
					.key2 = type_key(c, hs_info(s, a)->type), .object = s->id[a], .count = count,
					.bytes = bytes };
		if (!(rc = sym_roots_of(c->t, s, o, NULL, &roots)) && !(rc = add_str(c, (const char *)roots.data,
										    roots.len, &cl.n)))
			rc = add_claim(c, cl);
	}
	buf_free(&roots);
	free(info_key);
	free(app);
	return rc;
}

static int big_objects(struct sctx *c, const struct heap_state *s, const struct dominators *d,
		       const struct sus_domtree *dt, uint64_t min, uint64_t heap, uint32_t gci,
		       uint32_t *maxpct)
{
	uint32_t big[16];
	uint32_t nb = sus_big_objects(s->n, d->idom, d->retained, min, big,
				      c->p->top < 16 ? c->p->top : 16);
	int rc = 0;
	for (uint32_t i = 0; i < nb && !rc; i++) {
		uint32_t o = big[i], depth;
		uint32_t pct = sus_pct(d->retained[o], heap);
		if (pct > *maxpct)
			*maxpct = pct;
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_BIG_OBJECT, .gci = gci,
						      .key = type_key(c, hs_info(s, o)->type),
						      .object = s->id[o], .bytes = d->retained[o],
						      .pct = pct });
		uint32_t a = sus_accumulation_point(dt, d->retained, o, c->p->accum_pct, &depth);
		if (!rc && a != o)
			rc = add_claim(c, (struct sus_claim){ .what = SUS_C_ACCUMULATION, .level = 1,
							      .gci = gci, .n = depth,
							      .key = type_key(c, hs_info(s, a)->type),
							      .object = s->id[a], .bytes = d->retained[a],
							      .count = sus_kid_end(dt, a) - sus_kid_begin(dt, a) });
		if (!rc)
			rc = accumulated_claim(c, s, d, dt, o, a, gci);
	}
	return rc;
}

/* big_begin's two tasks once the tree is built, one beside the other:
 * the biggest objects' claims (task 0: the only one that writes to the
 * report) and the types' lower bounds from the tree (task 1: lb). */
struct begin_tasks {
	struct sctx *c;
	const struct heap_state *s;
	const struct dominators *d;
	const struct sus_domtree *dt;
	struct big_pending *b;
	uint32_t gci;
	uint32_t *info_key;
	uint64_t *lb;
};

static int begin_task(void *ctx, uint32_t task, uint32_t worker)
{
	(void)worker;
	struct begin_tasks *bt = ctx;
	struct sctx *c = bt->c;
	const struct heap_state *s = bt->s;
	if (task == 0) {
		int rc = add_claim(c, (struct sus_claim){ .what = SUS_C_BIG_INTRO, .gci = bt->gci });
		return rc ? rc : big_objects(c, s, bt->d, bt->dt, bt->b->min, bt->b->heap, bt->gci, &bt->b->maxpct);
	}
	for (uint32_t i = 0; i < s->ninfos; i++)
		bt->info_key[i] = s->infos[i].type;
	return sus_key_retained(bt->dt, bt->d->retained, s->info, bt->info_key, c->t->ntypes, bt->lb);
}

/* The big-retainer section's first step: its finding, the biggest
 * objects from the dominator tree, and the candidate types by a lower
 * bound of their retained size from the tree.  The tree and the
 * dominators are let go before it returns (a mount's default result
 * budget does not keep a big heap's dominators unpinned), so that nothing
 * computed after it, the candidates' closures included, sits beside
 * them: they are the peak of the report. */
static int big_begin(struct sctx *c, uint32_t gci, struct big_pending *b)
{
	const struct heap_state *s;
	void *de = NULL;
	struct dominators d;
	struct sus_domtree dt;
	uint32_t nt = c->t->ntypes;
	uint32_t *info_key = NULL;
	uint64_t *lb = NULL;
	memset(&dt, 0, sizeof dt);
	int rc = state_get(c, gci, &s);
	if (rc)
		return rc;
	struct lap_t t0;
	lap_now(&t0);
	if ((rc = c->src->dominators(c->src->ctx, gci, &de, &d)))
		goto out;
	lap("dominators", &t0);
	if ((rc = sus_domtree_build(s->n, d.idom, c->src->threads, &dt)))
		goto out;
	lap("dominator tree's children", &t0);
	uint64_t heap = s->reachable_bytes;
	b->heap = heap;
	b->min = heap / 100 * c->p->big_pct + heap % 100 * c->p->big_pct / 100;
	if (!(b->f = finding_new(c, SUS_BIG, 0))) {
		rc = -ENOMEM;
		goto out;
	}
	b->f->start_gci = b->f->end_gci = gci;
	b->f->pct = c->p->big_pct;
	b->f->bytes = heap;
	b->maxpct = 0;
	info_key = malloc(sizeof *info_key * (s->ninfos ? s->ninfos : 1));
	lb = malloc(sizeof *lb * (nt ? nt : 1));
	if (!info_key || !lb) {
		rc = -ENOMEM;
		goto out;
	}
	struct begin_tasks bt = { c, s, &d, &dt, b, gci, info_key, lb };
	if ((rc = par_for(c->src->threads, 2, begin_task, &bt)))
		goto out;
	lap("big objects and types' bounds", &t0);
	b->ncand = sus_top_k(lb, nt, c->p->top < BIG_CAND_MAX ? c->p->top : BIG_CAND_MAX, b->cand);
	for (uint32_t i = 0; i < b->ncand; i++)
		b->cand_lb[i] = lb[b->cand[i]];
out:
	free(info_key);
	free(lb);
	sus_domtree_free(&dt);
	release(c, de);
	state_put(c, s);
	return rc;
}

/* The second step: the candidates' GC closures, which need neither the
 * tree nor the dominators. */
static int big_closures(struct sctx *c, uint32_t gci, struct big_pending *b)
{
	const struct heap_state *s;
	int rc = state_get(c, gci, &s);
	if (rc)
		return rc;
	clo_hold(c, s);
	for (uint32_t i = 0; i < b->ncand && !rc; i += CAND_BATCH) {
		uint32_t n = b->ncand - i < CAND_BATCH ? b->ncand - i : CAND_BATCH;
		uint64_t *bits[CAND_BATCH] = { 0 };
		rc = group_members_bits_many(c->src->reg, s, c->cls_type, b->cand + i, n, bits);
		for (uint32_t k = 0; k < n && !rc; k++) {
			struct closure_metrics deep, ret;
			if (!(rc = set_closures(c, s, gci, &bits[k], &deep, &ret)))
				b->cand_ret[i + k] = ret.bytes;
		}
		for (uint32_t k = 0; k < n; k++)
			free(bits[k]);
	}
	clo_drop(c);
	state_put(c, s);
	return rc;
}

/* The last: the candidates that retain the most, as the finding's claims
 * (after big_begin's: no other finding took claims in between). */
static int big_end(struct sctx *c, uint32_t gci, struct big_pending *b)
{
	struct grower g[BIG_CAND_MAX];
	uint32_t ng = 0;
	int rc = 0;
	for (uint32_t i = 0; i < b->ncand; i++) {
		uint64_t retained = b->cand_ret[i];
		if (retained >= b->min && retained > 0)
			g[ng++] = (struct grower){ b->cand[i], (int64_t)b->cand_lb[i], 0, retained };
	}
	qsort(g, ng, sizeof *g, grower_by_retained);
	for (uint32_t i = 0; i < ng && i < c->p->top && !rc; i++) {
		uint32_t pct = sus_pct(g[i].retained, b->heap);
		if (pct > b->maxpct)
			b->maxpct = pct;
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_BIG_TYPE, .gci = gci,
						      .key = type_key(c, g[i].key),
						      .bytes = g[i].retained, .pct = pct });
		if (!rc && g[i].retained > (uint64_t)g[i].net_b)
			rc = add_claim(c, (struct sus_claim){ .what = SUS_C_BIG_TYPE_SPLIT, .level = 1,
							      .gci = gci, .key = type_key(c, g[i].key),
							      .bytes = (uint64_t)g[i].net_b });
	}
	if (!rc && b->maxpct == 0)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_BIG_NONE, .gci = gci,
						      .pct = c->p->big_pct });
	b->f->severity = b->maxpct;
	return rc;
}

/* The data-structure heads' member and element bytes summed by type
 * (ds_type_sums_compute), all the bloat section reads of the structures:
 * one pass over the objects, where the heads' measures one by one (which
 * the ds/ files read) took 64 bytes a head, 96 MB and 0.23 s at 2 threads
 * on the H2 dump's 1.5 M heads, and set the report's peak. */
static int ds_sums(struct sctx *c, uint32_t gci)
{
	const struct heap_state *s;
	struct sus_ds_roles dv;
	void *pin = NULL;
	uint32_t nt = c->t->ntypes;
	int rc = c->src->ds_roles(c->src->ctx, gci, &pin, &dv);
	if (rc)
		return rc;
	if (!(rc = state_get(c, gci, &s))) {
		c->warm.sums = calloc(nt ? nt : 1, sizeof *c->warm.sums);
		rc = c->warm.sums ? ds_type_sums_compute(s, dv.roles, dv.owner, dv.head_obj, dv.nheads, nt,
							 c->src->threads, c->warm.sums)
				  : -ENOMEM;
		state_put(c, s);
	}
	release(c, pin);
	return rc;
}

/* One step of a round of graph_sections, on a worker.  Each writes only
 * its own fields of c->warm; the big steps also write the findings, the
 * claims and the closures' memo, which no other step touches. */
static int graph_step(struct sctx *c, uint32_t step, uint32_t worker)
{
	uint32_t gci = c->warm.gci;
	int rc = 0;
	struct lap_t t0, t1;
	lap_now_on(&t0, CLOCK_THREAD_CPUTIME_ID);
	switch (step) {
	case STEP_BIG_BEGIN:
		rc = big_begin(c, gci, &c->warm.big);
		break;
	case STEP_BIG_CLOSURES:
		rc = big_closures(c, gci, &c->warm.big);
		break;
	case STEP_DS_SUMS:
		rc = ds_sums(c, gci);
		break;
	case STEP_HEALTH: {
		struct chain ch;
		chain_init(&ch);
		rc = classification(c, gci, &ch, c->cls_ih, &c->warm.pin[step], &c->warm.rows,
				    &c->warm.nrows);
		break;
	}
	case STEP_CENSUS: {
		const struct heap_state *s;
		if ((rc = state_get(c, gci, &s)))
			break;
		rc = coll_census(c->t, s, &c->warm.census);
		state_put(c, s);
		break;
	}
	}
	if (timing_on()) {
		lap_now_on(&t1, CLOCK_THREAD_CPUTIME_ID);
		fprintf(stderr, "heapfs: suspects: step %u on worker %u: %.3f s wall %.3f s thread cpu\n",
			step, worker, t1.wall - t0.wall, t1.cpu - t0.cpu);
	}
	return rc;
}

static int graph_task(void *vctx, uint32_t task, uint32_t worker)
{
	struct sctx *c = vctx;
	return graph_step(c, c->warm.steps[task], worker);
}

/* ---- bloat ---- */

static int bloat_structures(struct sctx *c, uint32_t gci, uint64_t heap, uint64_t *flagged)
{
	const struct ds_type_sums *a = c->warm.sums;
	uint32_t nt = c->t->ntypes;
	if (!a)
		return -EIO; /* graph_sections computes them before */
	int rc = 0;
	uint64_t *own = calloc(nt + 1, sizeof *own), *empty = calloc(nt + 1, sizeof *empty);
	uint32_t top[16];
	if (!own || !empty) {
		rc = -ENOMEM;
		goto out;
	}
	/* empty collections: real ones (analyses/collections.h), not every
	 * structure the roles found (a value wrapper is one of those) */
	const struct buf *census = &c->warm.census;
	const struct coll_stat *cs = (const struct coll_stat *)census->data;
	size_t ncs = census->len / sizeof *cs;
	for (size_t k = 0; k < ncs; k++)
		if (cs[k].type < nt && cs[k].empty >= c->p->empty_min)
			empty[cs[k].type] = cs[k].empty_bytes ? cs[k].empty_bytes : 1;
	/* a kind of structure counts when it holds at least 1% of the heap */
	for (uint32_t ty = 0; ty < nt; ty++) {
		if (sus_overhead_dominates(a[ty].member_bytes, a[ty].element_bytes, c->p->overhead_pct) &&
		    sus_pct(a[ty].member_bytes, heap) >= 1)
			own[ty] = a[ty].member_bytes;
	}
	uint32_t n = sus_top_k(own, nt, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t ty = top[i];
		*flagged += a[ty].member_bytes;
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_OVERHEAD, .gci = gci,
						      .key = type_key(c, ty), .count = a[ty].heads,
						      .bytes = a[ty].member_bytes, .bytes2 = a[ty].element_bytes,
						      .pct = sus_pct(a[ty].member_bytes, a[ty].member_bytes + a[ty].element_bytes) });
	}
	n = sus_top_k(empty, nt, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t ty = top[i];
		const struct coll_stat *x = NULL;
		for (size_t k = 0; k < ncs && !x; k++)
			x = cs[k].type == ty ? &cs[k] : NULL;
		if (!x)
			continue;
		*flagged += x->empty_bytes;
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_EMPTY, .gci = gci,
						      .key = type_key(c, ty), .count = x->empty,
						      .total = x->count, .bytes = x->empty_bytes });
	}
	/* sparse collections (MAT's fill ratio): as many as empty ones make a
	 * finding, ranked by the bytes of their unused slots */
	memset(empty, 0, (nt + 1) * sizeof *empty);
	for (size_t k = 0; k < ncs; k++)
		if (cs[k].type < nt && cs[k].sparse >= c->p->empty_min)
			empty[cs[k].type] = cs[k].wasted ? cs[k].wasted : 1;
	n = sus_top_k(empty, nt, c->p->top < 16 ? c->p->top : 16, top);
	for (uint32_t i = 0; i < n && !rc; i++) {
		const struct coll_stat *x = NULL;
		for (size_t k = 0; k < ncs && !x; k++)
			x = cs[k].type == top[i] ? &cs[k] : NULL;
		if (!x)
			continue;
		*flagged += x->wasted;
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_SPARSE, .gci = gci,
						      .key = type_key(c, x->type), .count = x->sparse,
						      .total = x->count, .bytes = x->wasted,
						      .pct = COLL_SPARSE_PCT });
	}
out:
	free(own);
	free(empty);
	return rc;
}

static int bloat_health(struct sctx *c, uint32_t gci)
{
	const struct cls_row *rows = c->warm.rows;
	uint32_t nrows = c->warm.nrows;
	int rc = 0;
	uint64_t total = 0;
	for (uint32_t r = 0; r < nrows; r++)
		total += rows[r].b[COL_LIVE];
	uint32_t first = count_of(&c->shares, sizeof(struct sus_share));
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		struct sus_share sh = { rows[r].key, sus_pct(rows[r].b[COL_LIVE], total),
					rows[r].b[COL_LIVE] };
		rc = buf_put(&c->shares, &sh, sizeof sh);
	}
	if (!rc)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_HEALTH, .gci = gci,
						      .item_first = first, .nitems = nrows });
	return rc;
}

static int sec_bloat(struct sctx *c, uint32_t gci)
{
	const struct heap_state *s;
	int rc = state_get(c, gci, &s);
	if (rc)
		return rc;
	uint64_t heap = s->reachable_bytes;
	state_put(c, s);
	struct sus_finding *f = finding_new(c, SUS_BLOAT, 0);
	if (!f)
		return -ENOMEM;
	f->start_gci = f->end_gci = gci;
	uint64_t flagged = 0;
	struct lap_t t0;
	lap_now(&t0);
	rc = bloat_structures(c, gci, heap, &flagged);
	lap("bloat: structures", &t0);
	if (!rc && flagged == 0)
		rc = add_claim(c, (struct sus_claim){ .what = SUS_C_NO_BLOAT, .gci = gci,
						      .pct = c->p->overhead_pct,
						      .count = c->p->empty_min });
	if (!rc)
		rc = bloat_health(c, gci);
	lap("bloat: instance health", &t0);
	f->severity = sus_pct(flagged, heap);
	return rc;
}

/* The big-retainer and bloat sections at gci, in two rounds.  Round 1,
 * one step after the other: the instance-health classification (on every
 * thread, object by object), then the dominators and the dominator tree
 * (big_begin, the report's memory peak: the dominators' passes and the
 * tree's children lists on the threads, then the big objects' claims
 * beside the types' bounds), then the census.
 * Nothing runs beside the dominators: on a 24 M-object heap the
 * classification beside them, though over in 0.7 s, made them 0.45 s
 * slower (its pass over the objects evicts what their walk keeps in the
 * cache), and the data-structure roles beside them took 2 threads from
 * 59.5 to 64-69 bytes an object.  Round 2, at once on up to src->threads
 * threads (one after the other on one): the candidates' closures beside
 * the roles, once the dominators are let go.  Results are the same for any
 * number of threads: in round 2 only the closures write to the report (to
 * the big section's pending state), and the rounds, big_end and the bloat
 * section run in this order. */
static int graph_sections(struct sctx *c, uint32_t gci, struct lap_t *t0)
{
	static const uint8_t round2[] = { STEP_BIG_CLOSURES, STEP_DS_SUMS };
	struct progress *pr = progress_here();
	uint32_t g = c->t->gcs[gci].gc;
	const struct heap_state *s;
	/* held through both rounds and the bloat section: each step gets the
	 * state on its own, and it must not be rebuilt between them */
	int rc = state_get(c, gci, &s);
	if (rc)
		return rc;
	c->warm.gci = gci;
	progress_phase(pr, 0, "suspects: instance health, dominators and big objects of GC %u", g);
	rc = graph_step(c, STEP_HEALTH, 0);
	if (!rc)
		rc = graph_step(c, STEP_BIG_BEGIN, 0);
	if (!rc)
		rc = graph_step(c, STEP_CENSUS, 0);
	lap("health and dominators", t0);
	if (!rc) {
		progress_phase(pr, 0, "suspects: big types' closures and structures at GC %u", g);
		c->warm.steps = round2;
		rc = par_for(c->src->threads, sizeof round2, graph_task, c);
		lap("closures and structures", t0);
	}
	if (!rc) {
		rc = big_end(c, gci, &c->warm.big);
		lap("big retainers: claims", t0);
	}
	if (!rc) {
		progress_phase(pr, 0, "suspects: bloat at GC %u", g);
		rc = sec_bloat(c, gci);
		lap("bloat", t0);
	}
	state_put(c, s);
	return rc;
}

static void warm_drop(struct sctx *c)
{
	for (uint32_t k = 0; k < STEP_COUNT; k++) {
		release(c, c->warm.pin[k]);
		c->warm.pin[k] = NULL;
	}
	buf_free(&c->warm.census);
	free(c->warm.sums);
	c->warm.sums = NULL;
}

/* ---- assembling ---- */

static int checked_windows(struct sctx *c, const struct sus_windows *w)
{
	const struct { enum sus_kind k; const struct win_result *r; } kinds[] = {
		{ SUS_LEAK, w->leak }, { SUS_GC_OVERHEAD, w->gc_overhead }, { SUS_CHURN, w->churn },
	};
	int rc = 0;
	for (size_t i = 0; i < 3 && !rc; i++) {
		if (kinds[i].r->found)
			continue;
		const char *why = kinds[i].r->reason;
		struct sus_check ck = { .what = SUS_CHECK_NO_WINDOW, .window = kinds[i].k };
		rc = add_str(c, why, strnlen(why, sizeof kinds[i].r->reason), &ck.reason);
		if (!rc)
			rc = add_check(c, ck);
	}
	return rc;
}

/* Problems found over time (the windows) before snapshot findings (big
 * retainers, bloat): a trend is the stronger evidence; by severity within
 * each. */
static int from_window(uint32_t k)
{
	return k == SUS_LEAK || k == SUS_GC_OVERHEAD || k == SUS_CHURN;
}

static int by_severity(const void *a, const void *b)
{
	const struct sus_finding *x = a, *y = b;
	if (from_window(x->kind) != from_window(y->kind))
		return from_window(x->kind) ? -1 : 1;
	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int sctx_init(struct sctx *c, const struct sus_source *src)
{
	memset(c, 0, sizeof *c);
	c->src = src;
	c->p = src->p;
	c->t = src->trace;
	buf_init(&c->checks);
	buf_init(&c->claims);
	buf_init(&c->ir_keys);
	buf_init(&c->hops);
	buf_init(&c->shares);
	buf_init(&c->strings);
	buf_init(&c->warm.census);
	struct cls_registry *reg = src->reg;
	c->cls_type = cls_find(reg, "type");
	c->cls_site = cls_find(reg, "site");
	/* indirect-root's keys are only passed on (the claims' roots), but a
	 * report without it could not name them */
	uint32_t cls_ir = cls_find(reg, "indirect-root");
	c->cls_ds = cls_find(reg, "ds");
	c->cls_ih = cls_find(reg, "instance-health");
	if (c->cls_type == CLS_NONE || c->cls_site == CLS_NONE || cls_ir == CLS_NONE ||
	    c->cls_ds == CLS_NONE || c->cls_ih == CLS_NONE)
		return -EIO;
	int rc = cls_prepare(reg, c->cls_type);
	if (!rc) rc = cls_prepare(reg, c->cls_site);
	if (rc)
		return rc;
	c->dtype = cls_get(reg, c->cls_type);
	c->dsite = cls_get(reg, c->cls_site);
	c->dds = cls_get(reg, c->cls_ds);
	if (!c->dtype || !c->dsite || !c->dds || !cls_get(reg, cls_ir) || !cls_get(reg, c->cls_ih))
		return -EIO;
	/* offset 0: the empty string */
	return buf_putc(&c->strings, '\0');
}

static void sctx_free(struct sctx *c)
{
	warm_drop(c);
	for (uint32_t k = 0; k < c->nmemo; k++)
		free(c->memo[k].bits);
	buf_free(&c->checks);
	buf_free(&c->claims);
	buf_free(&c->ir_keys);
	buf_free(&c->hops);
	buf_free(&c->shares);
	buf_free(&c->strings);
}

static uint32_t last_graph_gc(struct sctx *c)
{
	for (uint32_t i = c->t->ngcs; i > 0; i--) {
		if (has_graph(c, i - 1))
			return i - 1;
	}
	return UINT32_MAX;
}

static int gather(struct sctx *c)
{
	if (c->t->ngcs == 0)
		return add_check(c, (struct sus_check){ .what = SUS_CHECK_NO_GC });
	struct sus_windows w;
	memset(&w, 0, sizeof w);
	struct lap_t t0;
	lap_now(&t0);
	int rc = c->src->windows(c->src->ctx, &w);
	if (rc)
		return rc;
	lap("windows", &t0);
	uint32_t g = last_graph_gc(c);
	rc = add_check(c, (struct sus_check){ .what = SUS_CHECK_SCOPE, .big_pct = c->p->big_pct,
					      .graph = g != UINT32_MAX });
	if (!rc) rc = checked_windows(c, &w);
	struct progress *pr = progress_here();
	if (!rc && w.leak->found) {
		progress_phase(pr, 0, "suspects: the leak window's groups");
		rc = sec_leak(c, &w);
		lap("leak", &t0);
	}
	if (!rc && w.gc_overhead->found) {
		progress_phase(pr, 0, "suspects: the GC-overhead window");
		rc = sec_gc_overhead(c, w.gc_overhead);
		lap("gc-overhead", &t0);
	}
	if (!rc && w.churn->found) {
		progress_phase(pr, 0, "suspects: the churn window's sites");
		rc = sec_churn(c, w.churn);
		lap("churn", &t0);
	}
	if (!rc && g != UINT32_MAX)
		rc = graph_sections(c, g, &t0);
	warm_drop(c);
	if (!rc && !w.leak->found && !w.gc_overhead->found && !w.churn->found)
		rc = add_check(c, (struct sus_check){ .what = SUS_CHECK_QUIET });
	return rc;
}

/* ---- the flat form ---- */

struct flat_hdr {
	uint32_t magic;
	uint32_t nchecks, nfindings, nclaims, nir_keys, nhops, nshares, strings_len;
};

enum { A_CHECKS, A_FINDINGS, A_CLAIMS, A_IR_KEYS, A_HOPS, A_SHARES, A_STRINGS, A_COUNT };

/* Byte offsets of the arrays after the header (each 8-aligned), and the
 * total size in off[A_COUNT]. */
static void layout(const struct flat_hdr *h, uint64_t off[A_COUNT + 1])
{
	const uint64_t size[A_COUNT] = {
		(uint64_t)h->nchecks * sizeof(struct sus_check),
		(uint64_t)h->nfindings * sizeof(struct sus_finding),
		(uint64_t)h->nclaims * sizeof(struct sus_claim),
		(uint64_t)h->nir_keys * sizeof(uint32_t),
		(uint64_t)h->nhops * sizeof(struct sus_hop),
		(uint64_t)h->nshares * sizeof(struct sus_share),
		h->strings_len,
	};
	uint64_t at = sizeof *h;
	for (int k = 0; k < A_COUNT; k++) {
		at = (at + 7) & ~(uint64_t)7;
		off[k] = at;
		at += size[k];
	}
	off[A_COUNT] = at;
}

static int put_array(struct buf *out, size_t base, uint64_t off, const void *p, size_t n)
{
	while (out->len - base < off) {
		int rc = buf_putc(out, 0);
		if (rc)
			return rc;
	}
	return buf_put(out, p, n);
}

static int write_flat(struct sctx *c, struct buf *out)
{
	struct flat_hdr h = {
		SUS_MAGIC,
		count_of(&c->checks, sizeof(struct sus_check)),
		c->nf,
		count_of(&c->claims, sizeof(struct sus_claim)),
		count_of(&c->ir_keys, sizeof(uint32_t)),
		count_of(&c->hops, sizeof(struct sus_hop)),
		count_of(&c->shares, sizeof(struct sus_share)),
		(uint32_t)c->strings.len,
	};
	uint64_t off[A_COUNT + 1];
	layout(&h, off);
	size_t base = out->len;
	const struct buf *arr[A_COUNT] = { &c->checks, NULL, &c->claims, &c->ir_keys,
					   &c->hops, &c->shares, &c->strings };
	int rc = buf_reserve(out, (size_t)off[A_COUNT]);
	if (!rc)
		rc = buf_put(out, &h, sizeof h);
	for (int k = 0; k < A_COUNT && !rc; k++) {
		if (k == A_FINDINGS)
			rc = put_array(out, base, off[k], c->f, c->nf * sizeof c->f[0]);
		else
			rc = put_array(out, base, off[k], arr[k]->data, arr[k]->len);
	}
	return rc;
}

int sus_find(const struct sus_source *src, struct buf *out)
{
	struct sctx c;
	int rc = sctx_init(&c, src);
	if (!rc)
		rc = gather(&c);
	if (!rc) {
		qsort(c.f, c.nf, sizeof *c.f, by_severity);
		rc = write_flat(&c, out);
	}
	sctx_free(&c);
	return rc;
}

/* ---- viewing ---- */

static int in_range(uint32_t first, uint32_t n, uint32_t max)
{
	return first <= max && n <= max - first;
}

int sus_report_view(const void *data, size_t len, struct sus_report *r)
{
	struct flat_hdr h;
	uint64_t off[A_COUNT + 1];
	if (len < sizeof h)
		return -EBADMSG;
	memcpy(&h, data, sizeof h);
	layout(&h, off);
	if (h.magic != SUS_MAGIC || off[A_COUNT] > len || h.strings_len == 0)
		return -EBADMSG;
	const char *p = data;
	memset(r, 0, sizeof *r);
	r->nchecks = h.nchecks;
	r->nfindings = h.nfindings;
	r->nclaims = h.nclaims;
	r->nir_keys = h.nir_keys;
	r->nhops = h.nhops;
	r->nshares = h.nshares;
	r->strings_len = h.strings_len;
	r->checks = (const struct sus_check *)(p + off[A_CHECKS]);
	r->findings = (const struct sus_finding *)(p + off[A_FINDINGS]);
	r->claims = (const struct sus_claim *)(p + off[A_CLAIMS]);
	r->ir_keys = (const uint32_t *)(p + off[A_IR_KEYS]);
	r->hops = (const struct sus_hop *)(p + off[A_HOPS]);
	r->shares = (const struct sus_share *)(p + off[A_SHARES]);
	r->strings = p + off[A_STRINGS];
	if (r->strings[r->strings_len - 1] != '\0')
		return -EBADMSG;
	for (uint32_t k = 0; k < r->nchecks; k++) {
		if (r->checks[k].reason >= r->strings_len)
			return -EBADMSG;
	}
	for (uint32_t k = 0; k < r->nfindings; k++) {
		const struct sus_finding *f = &r->findings[k];
		if (f->kind >= SUS_KIND_COUNT || !in_range(f->first_claim, f->nclaims, r->nclaims))
			return -EBADMSG;
	}
	for (uint32_t k = 0; k < r->nclaims; k++) {
		const struct sus_claim *cl = &r->claims[k];
		uint32_t items = cl->what == SUS_C_HEALTH ? r->nshares : r->nhops;
		if (cl->what >= SUS_C_COUNT_ || !in_range(cl->ir_first, cl->nir, r->nir_keys) ||
		    !in_range(cl->item_first, cl->nitems, items))
			return -EBADMSG;
		if (cl->what == SUS_C_GROUP_CHURNED && cl->pct && cl->key2 >= r->strings_len)
			return -EBADMSG;
	}
	for (uint32_t k = 0; k < r->nhops; k++) {
		if (r->hops[k].via >= r->strings_len || r->hops[k].type >= r->strings_len)
			return -EBADMSG;
	}
	return 0;
}

const char *sus_str(const struct sus_report *r, uint32_t off)
{
	return off < r->strings_len ? r->strings + off : "";
}

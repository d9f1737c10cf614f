/* tree.c - paths to nodes, directory tables, attributes and dispatch.
 *
 * Every directory type has one table of fixed children (name, node type,
 * a presence test) and, where the children depend on the trace or on a
 * heap state, one function to list them and one to look one up.  Lookup,
 * getattr and readdir all go through these tables, so a name that is listed
 * is a name that resolves, and nothing else does.
 *
 * Rendered files are cached in fs->rc keyed by their canonical path (the
 * path with every symlink resolved), which is also what the inode number is
 * hashed from.  Internal results (census, classifications) live in the same
 * cache under keys that start with "\x01", which no path does.
 */
#include "tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "tree_internal.h"

#define LINK_LOOP_MAX 40

/* ---- node types ---- */

enum cost {
	COST_NONE,      /* directories and links */
	COST_CHEAP,     /* rendered on getattr: exact size always */
	COST_EXPENSIVE, /* needs a heap state: size known once rendered */
	COST_VOLATILE,  /* changes over time: never cached, size unknown */
};

struct nt_def {
	enum hfs_kind kind;
	enum cost cost;
};

static const struct nt_def nt_defs[NT_COUNT_] = {
	[NT_ROOT] = { HFS_DIR, COST_NONE },
	[NT_README] = { HFS_FILE, COST_CHEAP },
	[NT_STATUS] = { HFS_FILE, COST_VOLATILE },
	[NT_TRACE_DIR] = { HFS_DIR, COST_NONE },
	[NT_TRACE_INFO] = { HFS_FILE, COST_CHEAP },
	[NT_TIMELINE_DIR] = { HFS_DIR, COST_NONE },
	[NT_GCS_CSV] = { HFS_FILE, COST_CHEAP },
	[NT_GC_DIR] = { HFS_DIR, COST_NONE },
	[NT_GC_LATEST] = { HFS_LINK, COST_NONE },
	[NT_ROOTS_LINK] = { HFS_LINK, COST_NONE },
	[NT_GROUP] = { HFS_DIR, COST_NONE },
	[NT_GC_INFO] = { HFS_FILE, COST_EXPENSIVE },
	[NT_GROUP_COUNT] = { HFS_FILE, COST_EXPENSIVE },
	[NT_GROUP_SHALLOW] = { HFS_FILE, COST_EXPENSIVE },
	[NT_GROUP_SUMMARY] = { HFS_FILE, COST_EXPENSIVE },
	[NT_GROUP_OBJECTS] = { HFS_FILE, COST_EXPENSIVE },
	[NT_CLASSIFICATION] = { HFS_DIR, COST_NONE },
	[NT_TABLE_TSV] = { HFS_FILE, COST_EXPENSIVE },
	[NT_TABLE_CSV] = { HFS_FILE, COST_EXPENSIVE },
	[NT_TABLE_JSON] = { HFS_FILE, COST_EXPENSIVE },
	[NT_OBJECTS_DIR] = { HFS_DIR, COST_NONE },
	[NT_OBJECTS_ALL] = { HFS_FILE, COST_EXPENSIVE },
	[NT_OBJECT_DIR] = { HFS_DIR, COST_NONE },
	[NT_OBJECT_INFO] = { HFS_FILE, COST_EXPENSIVE },
	[NT_OBJECT_REFS] = { HFS_FILE, COST_EXPENSIVE },
	[NT_OBJECT_REFERRERS] = { HFS_FILE, COST_EXPENSIVE },
	[NT_ROOTS_DIR] = { HFS_DIR, COST_NONE },
	[NT_ROOTS_TABLE] = { HFS_FILE, COST_EXPENSIVE },
};

/* ---- presence tests for fixed children ---- */

typedef int (*present_fn)(const struct hfs *fs, const struct node *parent);

static int has_gcs(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->trace->ngcs > 0;
}

static int latest_has_graph(const struct hfs *fs, const struct node *p)
{
	(void)p;
	return fs->trace->ngcs > 0 && hfs_gc_has_graph(fs, fs->trace->ngcs - 1);
}

static int is_gc_root_group(const struct hfs *fs, const struct node *p)
{
	(void)fs;
	return p->chain.depth == 0;
}

static int is_sub_group(const struct hfs *fs, const struct node *p)
{
	(void)fs;
	return p->chain.depth > 0;
}

static int gc_root_with_graph(const struct hfs *fs, const struct node *p)
{
	return p->chain.depth == 0 && hfs_gc_has_graph(fs, p->gci);
}

static int gc_with_graph(const struct hfs *fs, const struct node *p)
{
	return hfs_gc_has_graph(fs, p->gci);
}

struct child_def {
	const char *name;
	enum nt type;
	present_fn present; /* NULL: always */
};

static const struct child_def root_children[] = {
	{ "README", NT_README, NULL },
	{ "status", NT_STATUS, NULL },
	{ "trace", NT_TRACE_DIR, NULL },
	{ "timeline", NT_TIMELINE_DIR, NULL },
	{ "gc", NT_GC_DIR, NULL },
	{ "roots", NT_ROOTS_LINK, latest_has_graph },
	{ NULL, 0, NULL },
};
static const struct child_def trace_children[] = {
	{ "info", NT_TRACE_INFO, NULL },
	{ NULL, 0, NULL },
};
static const struct child_def timeline_children[] = {
	{ "gcs.csv", NT_GCS_CSV, NULL },
	{ NULL, 0, NULL },
};
static const struct child_def gc_dir_children[] = {
	{ "latest", NT_GC_LATEST, has_gcs },
	{ NULL, 0, NULL },
};
/* gc/NNN is the root group of its GC; it has info, objects/ (per-object
 * directories) and roots/ where a subgroup has the objects id file. */
static const struct child_def group_children[] = {
	{ "info", NT_GC_INFO, is_gc_root_group },
	{ "count", NT_GROUP_COUNT, NULL },
	{ "shallow_size", NT_GROUP_SHALLOW, NULL },
	{ "summary", NT_GROUP_SUMMARY, NULL },
	{ "objects", NT_OBJECTS_DIR, is_gc_root_group },
	{ "objects", NT_GROUP_OBJECTS, is_sub_group },
	{ "roots", NT_ROOTS_DIR, gc_root_with_graph },
	{ NULL, 0, NULL },
};
static const struct child_def classification_children[] = {
	{ "table", NT_TABLE_TSV, NULL },
	{ "table.csv", NT_TABLE_CSV, NULL },
	{ "table.json", NT_TABLE_JSON, NULL },
	{ NULL, 0, NULL },
};
static const struct child_def objects_children[] = {
	{ "all", NT_OBJECTS_ALL, NULL },
	{ NULL, 0, NULL },
};
static const struct child_def object_children[] = {
	{ "info", NT_OBJECT_INFO, NULL },
	{ "refs", NT_OBJECT_REFS, gc_with_graph },
	{ "referrers", NT_OBJECT_REFERRERS, gc_with_graph },
	{ NULL, 0, NULL },
};
static const struct child_def roots_children[] = {
	{ "table", NT_ROOTS_TABLE, NULL },
	{ NULL, 0, NULL },
};

/* ---- dynamic children ---- */

typedef int (*emit_fn)(void *ctx, const char *name, const struct node *child);

struct dyn_ops {
	int (*list)(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx);
	int (*lookup)(struct hfs *fs, const struct node *p, const char *name, struct node *child);
};

static int gc_dir_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	for (uint32_t i = 0; i < fs->trace->ngcs; i++) {
		char name[16];
		struct node c = *p;
		c.type = NT_GROUP;
		c.gci = i;
		hfs_gc_name(fs, i, name);
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

/* Only canonical names: exactly gc_width digits. */
static int gc_dir_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	if (strlen(name) != fs->gc_width)
		return -ENOENT;
	uint64_t v = 0;
	for (const char *s = name; *s; s++) {
		if (*s < '0' || *s > '9')
			return -ENOENT;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > UINT32_MAX)
		return -ENOENT;
	uint32_t gci = trace_gc_index(fs->trace, (uint32_t)v);
	if (gci == UINT32_MAX)
		return -ENOENT;
	*c = *p;
	c->type = NT_GROUP;
	c->gci = gci;
	return 0;
}

/* by-<classifier> for every classifier the chain has not used. */
static int group_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	(void)fs;
	for (uint32_t k = 0; k < CLS_COUNT; k++) {
		if (chain_uses(&p->chain, k))
			continue;
		char name[64];
		snprintf(name, sizeof name, "by-%s", classifiers[k].name);
		struct node c = *p;
		c.type = NT_CLASSIFICATION;
		c.cls = k;
		if (emit(ctx, name, &c))
			return 1;
	}
	return 0;
}

static int group_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	(void)fs;
	if (strncmp(name, "by-", 3) != 0)
		return -ENOENT;
	for (uint32_t k = 0; k < CLS_COUNT; k++) {
		if (strcmp(name + 3, classifiers[k].name) != 0 || chain_uses(&p->chain, k))
			continue;
		*c = *p;
		c->type = NT_CLASSIFICATION;
		c->cls = k;
		return 0;
	}
	return -ENOENT;
}

static void child_group(const struct node *p, uint32_t key, struct node *c)
{
	*c = *p;
	c->type = NT_GROUP;
	c->chain.steps[c->chain.depth].cls = p->cls;
	c->chain.steps[c->chain.depth].key = key;
	c->chain.depth++;
}

static int classification_list(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	const struct cls_space *sp;
	const struct cls_row *rows;
	struct rc_entry *e;
	uint32_t nrows;
	int rc = cls_space_get(&fs->reg, p->cls, &sp);
	if (rc)
		return rc;
	rc = hfs_classification_get(fs, p->gci, &p->chain, p->cls, &e, &rows, &nrows);
	if (rc)
		return rc;
	for (uint32_t r = 0; r < nrows && !rc; r++) {
		struct node c;
		child_group(p, rows[r].key, &c);
		rc = emit(ctx, sp->names[rows[r].key], &c);
	}
	rcache_put(fs->rc, e);
	return rc > 0 ? 1 : rc;
}

static int classification_lookup(struct hfs *fs, const struct node *p, const char *name,
				 struct node *c)
{
	const struct cls_space *sp;
	const struct cls_row *rows;
	struct rc_entry *e;
	uint32_t nrows;
	int rc = cls_space_get(&fs->reg, p->cls, &sp);
	if (rc)
		return rc;
	uint32_t key = cls_space_find(sp, name);
	if (key == CLS_NO_KEY)
		return -ENOENT;
	rc = hfs_classification_get(fs, p->gci, &p->chain, p->cls, &e, &rows, &nrows);
	if (rc)
		return rc;
	uint32_t lo = 0, hi = nrows;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rows[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	rc = (lo < nrows && rows[lo].key == key) ? 0 : -ENOENT;
	rcache_put(fs->rc, e);
	if (!rc)
		child_group(p, key, c);
	return rc;
}

/* objects/<id>: canonical decimal ids of objects live at that GC. */
static int objects_lookup(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	uint64_t id = 0;
	size_t len = strlen(name);
	if (len == 0 || len > 20 || (len > 1 && name[0] == '0'))
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -ENOENT;
		uint64_t d = (uint64_t)(name[i] - '0');
		if (id > (UINT64_MAX - d) / 10)
			return -ENOENT;
		id = id * 10 + d;
	}
	const struct heap_state *s;
	int rc = hfs_state_get(fs, p->gci, &s);
	if (rc)
		return rc;
	rc = heap_state_find(s, id) == UINT32_MAX ? -ENOENT : 0;
	hfs_state_put(fs, s);
	if (!rc) {
		*c = *p;
		c->type = NT_OBJECT_DIR;
		c->obj = id;
	}
	return rc;
}

static const struct dyn_ops gc_dir_ops = { gc_dir_list, gc_dir_lookup };
static const struct dyn_ops group_ops = { group_list, group_lookup };
static const struct dyn_ops classification_ops = { classification_list, classification_lookup };
static const struct dyn_ops objects_ops = { NULL, objects_lookup };

struct dir_def {
	const struct child_def *fixed;
	const struct dyn_ops *dyn;
};

static int dir_def_of(enum nt type, struct dir_def *d)
{
	d->dyn = NULL;
	switch (type) {
	case NT_ROOT: d->fixed = root_children; break;
	case NT_TRACE_DIR: d->fixed = trace_children; break;
	case NT_TIMELINE_DIR: d->fixed = timeline_children; break;
	case NT_GC_DIR: d->fixed = gc_dir_children; d->dyn = &gc_dir_ops; break;
	case NT_GROUP: d->fixed = group_children; d->dyn = &group_ops; break;
	case NT_CLASSIFICATION:
		d->fixed = classification_children;
		d->dyn = &classification_ops;
		break;
	case NT_OBJECTS_DIR: d->fixed = objects_children; d->dyn = &objects_ops; break;
	case NT_OBJECT_DIR: d->fixed = object_children; break;
	case NT_ROOTS_DIR: d->fixed = roots_children; break;
	default: return -ENOTDIR;
	}
	return 0;
}

static int lookup_child(struct hfs *fs, const struct node *p, const char *name, struct node *c)
{
	struct dir_def d;
	int rc = dir_def_of(p->type, &d);
	if (rc)
		return rc;
	for (const struct child_def *f = d.fixed; f->name; f++) {
		if (strcmp(f->name, name) == 0 && (!f->present || f->present(fs, p))) {
			*c = *p;
			c->type = f->type;
			return 0;
		}
	}
	if (d.dyn && d.dyn->lookup)
		return d.dyn->lookup(fs, p, name, c);
	return -ENOENT;
}

static int list_children(struct hfs *fs, const struct node *p, emit_fn emit, void *ctx)
{
	struct dir_def d;
	int rc = dir_def_of(p->type, &d);
	if (rc)
		return rc;
	for (const struct child_def *f = d.fixed; f->name; f++) {
		if (f->present && !f->present(fs, p))
			continue;
		struct node c = *p;
		c.type = f->type;
		if (emit(ctx, f->name, &c))
			return 1;
	}
	if (d.dyn && d.dyn->list)
		return d.dyn->list(fs, p, emit, ctx);
	return 0;
}

/* ---- links ---- */

static int link_target(struct hfs *fs, const struct node *n, char *buf, size_t len)
{
	char name[16];
	switch (n->type) {
	case NT_GC_LATEST:
		hfs_gc_name(fs, fs->trace->ngcs - 1, name);
		snprintf(buf, len, "%s", name);
		return 0;
	case NT_ROOTS_LINK:
		snprintf(buf, len, "gc/latest/roots");
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- path resolution ---- */

static int next_component(const char **p, char *comp)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	if (!*s)
		return 0;
	const char *e = strchr(s, '/');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	if (n > NAME_MAX_BYTES)
		return -ENAMETOOLONG;
	memcpy(comp, s, n);
	comp[n] = '\0';
	*p = s + n;
	return 1;
}

static int rest_is_empty(const char *p)
{
	while (*p == '/')
		p++;
	return *p == '\0';
}

/* Replaces work with prefix + "/" + middle + rest (rest starts after the
 * current component). */
static int rebuild_path(char *work, const char *prefix, const char *middle, const char *rest)
{
	char tmp[HFS_PATH_MAX];
	int n = snprintf(tmp, sizeof tmp, "%s/%s%s", prefix, middle, rest);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return -ENAMETOOLONG;
	memcpy(work, tmp, (size_t)n + 1);
	return 0;
}

static void parent_of(const char *canon, char *out)
{
	strcpy(out, canon);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
}

/* Resolves path to a node and its canonical path ("" is the root while
 * walking, "/" on return).  Links in the middle are always followed, the
 * last one only if follow_last. */
static int resolve(struct hfs *fs, const char *path, int follow_last, struct node *n,
		   char canon[HFS_PATH_MAX])
{
	char work[HFS_PATH_MAX], comp[NAME_BUF], parent[HFS_PATH_MAX], target[HFS_PATH_MAX];
	int loops = 0, rc;
	if (strlen(path) >= sizeof work)
		return -ENAMETOOLONG;
	strcpy(work, path);
restart:
	memset(n, 0, sizeof *n);
	n->type = NT_ROOT;
	canon[0] = '\0';
	const char *p = work;
	while ((rc = next_component(&p, comp)) > 0) {
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			parent_of(canon, parent);
			if ((rc = rebuild_path(work, parent, "", p)))
				return rc;
			goto restart;
		}
		struct node c;
		if ((rc = lookup_child(fs, n, comp, &c)))
			return rc;
		if (nt_defs[c.type].kind == HFS_LINK && (follow_last || !rest_is_empty(p))) {
			if (++loops > LINK_LOOP_MAX)
				return -ELOOP;
			if ((rc = link_target(fs, &c, target, sizeof target)))
				return rc;
			strcpy(parent, canon);
			if ((rc = rebuild_path(work, parent, target, p)))
				return rc;
			goto restart;
		}
		size_t cl = strlen(canon);
		if (cl + 1 + strlen(comp) >= HFS_PATH_MAX)
			return -ENAMETOOLONG;
		canon[cl] = '/';
		strcpy(canon + cl + 1, comp);
		*n = c;
	}
	if (rc < 0)
		return rc;
	if (!canon[0])
		strcpy(canon, "/");
	return 0;
}

/* ---- rendering through the cache ---- */

struct render_ctx {
	struct hfs *fs;
	const struct node *n;
};

static int render_cb(void *ctx, struct buf *out)
{
	struct render_ctx *rc = ctx;
	return render_node(rc->fs, rc->n, out);
}

static int render_cached(struct hfs *fs, const struct node *n, const char *canon,
			 struct rc_entry **e)
{
	struct render_ctx ctx = { fs, n };
	return rcache_get(fs->rc, canon, render_cb, &ctx, e);
}

/* ---- attributes ---- */

static uint64_t path_ino(const char *canon)
{
	uint64_t h = name_hash64(canon, strlen(canon));
	return h <= 1 ? h + 2 : h;
}

static int node_attr(struct hfs *fs, const struct node *n, const char *canon, struct hfs_attr *a)
{
	const struct nt_def *d = &nt_defs[n->type];
	memset(a, 0, sizeof *a);
	a->kind = d->kind;
	a->ino = path_ino(canon);
	a->nlink = d->kind == HFS_DIR ? 2 : 1;
	if (d->kind == HFS_LINK) {
		char target[HFS_PATH_MAX];
		int rc = link_target(fs, n, target, sizeof target);
		if (rc)
			return rc;
		a->size = strlen(target);
		a->size_exact = 1;
		return 0;
	}
	if (d->kind == HFS_DIR)
		return 0;
	if (d->cost == COST_CHEAP) {
		struct rc_entry *e;
		int rc = render_cached(fs, n, canon, &e);
		if (rc)
			return rc;
		a->size = rc_len(e);
		a->size_exact = 1;
		rcache_put(fs->rc, e);
	} else if (d->cost == COST_EXPENSIVE) {
		a->size_exact = rcache_peek_size(fs->rc, canon, &a->size);
	}
	return 0;
}

/* ---- public API ---- */

int hfs_getattr(struct hfs *fs, const char *path, struct hfs_attr *a)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 0, &n, canon);
	return rc ? rc : node_attr(fs, &n, canon, a);
}

struct readdir_ctx {
	struct hfs *fs;
	const char *dir;       /* canonical path of the directory */
	hfs_fill_fn fill;
	void *ctx;
	int err;
};

static int readdir_emit(void *vctx, const char *name, const struct node *child)
{
	struct readdir_ctx *r = vctx;
	char path[HFS_PATH_MAX];
	struct hfs_attr a;
	int n = snprintf(path, sizeof path, "%s/%s", strcmp(r->dir, "/") ? r->dir : "", name);
	if (n < 0 || (size_t)n >= sizeof path) {
		r->err = -ENAMETOOLONG;
		return 1;
	}
	int rc = node_attr(r->fs, child, path, &a);
	if (rc) {
		r->err = rc;
		return 1;
	}
	return r->fill(r->ctx, name, &a) ? 1 : 0;
}

int hfs_readdir(struct hfs *fs, const char *path, hfs_fill_fn fill, void *ctx)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 1, &n, canon);
	if (rc)
		return rc;
	if (nt_defs[n.type].kind != HFS_DIR)
		return -ENOTDIR;
	struct readdir_ctx r = { fs, canon, fill, ctx, 0 };
	rc = list_children(fs, &n, readdir_emit, &r);
	if (rc < 0)
		return rc;
	return r.err;
}

int hfs_readlink(struct hfs *fs, const char *path, char *buf, size_t len)
{
	struct node n;
	char canon[HFS_PATH_MAX], target[HFS_PATH_MAX];
	int rc = resolve(fs, path, 0, &n, canon);
	if (rc)
		return rc;
	if (nt_defs[n.type].kind != HFS_LINK)
		return -EINVAL;
	if ((rc = link_target(fs, &n, target, sizeof target)))
		return rc;
	if (len == 0)
		return -ERANGE;
	snprintf(buf, len, "%s", target);
	return 0;
}

int hfs_read(struct hfs *fs, const char *path, struct buf *out)
{
	struct node n;
	char canon[HFS_PATH_MAX];
	int rc = resolve(fs, path, 1, &n, canon);
	if (rc)
		return rc;
	const struct nt_def *d = &nt_defs[n.type];
	if (d->kind == HFS_DIR)
		return -EISDIR;
	if (d->cost == COST_VOLATILE)
		return render_node(fs, &n, out);
	struct rc_entry *e;
	if ((rc = render_cached(fs, &n, canon, &e)))
		return rc;
	rc = buf_put(out, rc_data(e), rc_len(e));
	rcache_put(fs->rc, e);
	return rc;
}

/* ---- shared helpers ---- */

void hfs_gc_name(const struct hfs *fs, uint32_t gci, char out[16])
{
	snprintf(out, 16, "%0*" PRIu32, (int)fs->gc_width, fs->trace->gcs[gci].gc);
}

int hfs_gc_has_graph(const struct hfs *fs, uint32_t gci)
{
	return gci < fs->trace->ngcs && (fs->trace->gcs[gci].flags & HTR_GC_HAS_GRAPH);
}

void hfs_set_error(struct hfs *fs, const struct htr_err *err)
{
	pthread_mutex_lock(&fs->err_lock);
	snprintf(fs->last_error, sizeof fs->last_error, "%s: offset %" PRIu64 ": %s",
		 fs->trace->path, err->offset, err->msg);
	pthread_mutex_unlock(&fs->err_lock);
}

int hfs_last_error(struct hfs *fs, char *buf, size_t len)
{
	pthread_mutex_lock(&fs->err_lock);
	snprintf(buf, len, "%s", fs->last_error);
	int have = fs->last_error[0] != '\0';
	pthread_mutex_unlock(&fs->err_lock);
	return have;
}

int hfs_state_get(struct hfs *fs, uint32_t gci, const struct heap_state **s)
{
	struct htr_err err;
	memset(&err, 0, sizeof err);
	int rc = state_cache_get(fs->states, gci, s, &err);
	if (rc == 0 || rc == -ENOMEM)
		return rc;
	hfs_set_error(fs, &err);
	if (fs->progress)
		fprintf(fs->progress, "heapfs: %s: offset %" PRIu64 ": %s\n", fs->trace->path,
			err.offset, err.msg);
	return -EIO;
}

void hfs_state_put(struct hfs *fs, const struct heap_state *s)
{
	state_cache_put(fs->states, s);
}

struct census_ctx {
	struct hfs *fs;
	uint32_t gci;
};

static int census_cb(void *vctx, struct buf *out)
{
	struct census_ctx *c = vctx;
	const struct heap_state *s;
	int rc = hfs_state_get(c->fs, c->gci, &s);
	if (rc)
		return rc;
	rc = census_compute(s, out);
	hfs_state_put(c->fs, s);
	return rc;
}

int hfs_census_get(struct hfs *fs, uint32_t gci, struct rc_entry **e, struct census *c)
{
	char key[64];
	struct census_ctx ctx = { fs, gci };
	snprintf(key, sizeof key, "\x01" "census/%" PRIu32, gci);
	int rc = rcache_get(fs->rc, key, census_cb, &ctx, e);
	if (rc)
		return rc;
	rc = census_view(rc_data(*e), rc_len(*e), c);
	if (rc)
		rcache_put(fs->rc, *e);
	return rc;
}

struct classify_ctx {
	struct hfs *fs;
	uint32_t gci, cls;
	const struct chain *ch;
};

static int classify_cb(void *vctx, struct buf *out)
{
	struct classify_ctx *c = vctx;
	struct rc_entry *e;
	struct census cs;
	int rc = hfs_census_get(c->fs, c->gci, &e, &cs);
	if (rc)
		return rc;
	rc = classify(&c->fs->reg, &cs, c->ch, c->cls, out);
	rcache_put(c->fs->rc, e);
	return rc;
}

int hfs_classification_get(struct hfs *fs, uint32_t gci, const struct chain *ch, uint32_t cls,
			   struct rc_entry **e, const struct cls_row **rows, uint32_t *nrows)
{
	char key[256];
	int n = snprintf(key, sizeof key, "\x01" "cls/%" PRIu32 "/%" PRIu32, gci, cls);
	for (uint32_t d = 0; d < ch->depth; d++)
		n += snprintf(key + n, sizeof key - (size_t)n, "/%" PRIu32 ":%" PRIu32,
			      ch->steps[d].cls, ch->steps[d].key);
	struct classify_ctx ctx = { fs, gci, cls, ch };
	int rc = rcache_get(fs->rc, key, classify_cb, &ctx, e);
	if (rc)
		return rc;
	*rows = rc_data(*e);
	*nrows = (uint32_t)(rc_len(*e) / sizeof **rows);
	return 0;
}

/* ---- open / close ---- */

static uint32_t digits(uint32_t v)
{
	uint32_t d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

int hfs_open(struct hfs **out, const char *trace_path, const struct hfs_opts *o,
	     struct htr_err *err)
{
	struct hfs *fs = calloc(1, sizeof *fs);
	int rc = -ENOMEM;
	if (!fs)
		return htr_errf(err, -ENOMEM, 0, "out of memory");
	pthread_mutex_init(&fs->err_lock, NULL);
	fs->progress = o ? o->progress : NULL;
	uint64_t mb = (o && o->cache_mb) ? o->cache_mb : 1024;
	fs->state_budget = mb << 20;
	struct trace_open_opts to = { .progress = fs->progress };
	if ((rc = trace_open(&fs->trace, trace_path, &to, err)))
		goto fail;
	if ((rc = state_cache_new(&fs->states, fs->trace, fs->state_budget, fs->progress))) {
		htr_errf(err, rc, 0, "cannot create the state cache");
		goto fail;
	}
	/* Rendered results: a quarter of the state budget, at least 64 MB. */
	uint64_t rbudget = fs->state_budget / 4 > (64ull << 20) ? fs->state_budget / 4 : 64ull << 20;
	if ((rc = rcache_new(&fs->rc, rbudget))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	if ((rc = cls_registry_init(&fs->reg, fs->trace))) {
		htr_errf(err, rc, 0, "cannot initialize classifiers");
		goto fail;
	}
	uint32_t maxgc = 0;
	for (uint32_t i = 0; i < fs->trace->ngcs; i++) {
		if (fs->trace->gcs[i].gc > maxgc)
			maxgc = fs->trace->gcs[i].gc;
	}
	fs->gc_width = digits(maxgc) < 3 ? 3 : digits(maxgc);
	*out = fs;
	return 0;
fail:
	if (fs->rc)
		rcache_free(fs->rc);
	if (fs->states)
		state_cache_free(fs->states);
	if (fs->trace)
		trace_close(fs->trace);
	pthread_mutex_destroy(&fs->err_lock);
	free(fs);
	return rc;
}

void hfs_close(struct hfs *fs)
{
	if (!fs)
		return;
	cls_registry_destroy(&fs->reg);
	rcache_free(fs->rc);
	state_cache_free(fs->states);
	trace_close(fs->trace);
	pthread_mutex_destroy(&fs->err_lock);
	free(fs);
}

/* classify.c - see classify.h */
#include "analyses/classify.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "analyses/bitset.h"
#include "analyses/parallel.h"
#include "analyses/closure.h"
#include "analyses/diff.h"
#include "model/files.h"
#include "model/progress.h"

#define ARENA_BYTES (64 * 1024)
/* An evaluation may grow the arena to this: a list of the names of 67
 * million referees.  Beyond it the object is classified <error>. */
#define ARENA_MAX ((size_t)1 << 30)
#define REF_BYTES 4       /* compressed oops, as the traces' layouts */
#define INSTANCE_HEADER 12

/* Objects of one GC whose evaluation by an expression failed (they are
 * classified <error>), for classifiers/errors. */
struct cls_fail {
	uint64_t objects;          /* the most one loop over the GC's objects met */
	struct expr_fault why;     /* the first reason */
	int sum_overflow;          /* a part's bytes over all objects beyond UINT64_MAX */
};

/* ---- predefined classifiers ---- */

struct builtin_row {
	const char *name;
	enum cls_card card;
	int per_object, needs_graph;
	const char *about;
};

static const struct builtin_row builtins[CB_COUNT_] = {
	[CB_TYPE] = { "type", CARD_ONE, 0, 0, "the object's class (java.util.HashMap, int[])" },
	[CB_PACKAGE] = { "package", CARD_HIER, 0, 0,
			 "package segments of the class as levels (java/util/...)" },
	[CB_SITE] = { "site", CARD_HIER, 0, 0,
		      "allocating frame Class.method:line, then its callers, one level each" },
	[CB_THREAD] = { "thread", CARD_ONE, 0, 0, "the allocating thread" },
	[CB_AGE] = { "age", CARD_ONE, 1, 0, "GCs survived up to this GC (unknown: recorded as existing)" },
	[CB_KIND] = { "kind", CARD_ONE, 0, 0, "instance, small-array (< 255 elements), big-array" },
	[CB_ARRAY_LENGTH] = { "array-length", CARD_ONE, 0, 0, "elements of arrays, -1 for instances" },
	[CB_SIZE] = { "size", CARD_ONE, 0, 0, "shallow size in power-of-two buckets (16-31, ...)" },
	[CB_BIRTH] = { "birth", CARD_ONE, 1, 0,
		       "number of the GC the object was born after (before-first-gc, unknown)" },
	[CB_FEATURE] = { "feature", CARD_MANY, 0, 0,
			 "features of -o features=FILE whose patterns match a frame of the site" },
	[CB_F_ARRAYS] = { "arrays", CARD_FILTER, 0, 0, "arrays only" },
	[CB_F_INSTANCES] = { "instances", CARD_FILTER, 0, 0, "class instances only" },
	[CB_F_REACHABLE] = { "reachable", CARD_FILTER, 1, 1, "objects reachable from GC roots" },
	[CB_F_UNREACHABLE] = { "unreachable", CARD_FILTER, 1, 1, "objects no root reaches (garbage)" },
};

/* The paper's §5.3.2 classifiers, on the user-defined machinery. */
static const char predefined_exprs[] =
	"# collection health (Mitchell and Sevitsky): array backbones, entries\n"
	"# (objects referencing their own type), heads (referencing arrays or\n"
	"# entries), everything else contained\n"
	"collection-health =\n"
	"  if type_kind == \"object-array\" then \"array\"\n"
	"  elif type in referee_types then \"entry\"\n"
	"  elif any_referee(type_kind != \"instance\" or type in referee_types) then \"head\"\n"
	"  else \"contained\"\n"
	"# instance health: every object's bytes split into header, pointer,\n"
	"# null and primitive bytes\n"
	"instance-health = parts(\"header\", header_bytes, \"pointer\", pointer_bytes,\n"
	"  \"null\", null_bytes, \"primitive\", primitive_bytes)\n";

static int is_builtin_name(const char *name)
{
	for (uint32_t b = 0; b < CB_COUNT_; b++) {
		if (!strcmp(builtins[b].name, name))
			return 1;
	}
	return 0;
}

/* A predefined or analysis classifier's name (user definitions may not
 * take it); r->lock held. */
static int is_reserved_name_locked(const struct cls_registry *r, const char *name)
{
	for (uint32_t i = 0; i < r->ndefs; i++) {
		if (r->defs[i]->builtin == CB_EXT && !strcmp(r->defs[i]->name, name))
			return 1;
	}
	return is_builtin_name(name);
}

static void def_free(struct cls_def *d)
{
	if (!d)
		return;
	ks_destroy(&d->ks);
	expr_free(d->ex);
	free(d->source);
	free(d->path_off);
	free(d->path_keys);
	free(d->feat_off);
	free(d->feat_keys);
	free(d->fails);
	free(d);
}

static struct cls_def *def_new(const char *name)
{
	struct cls_def *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (ks_init(&d->ks)) {
		free(d);
		return NULL;
	}
	snprintf(d->name, sizeof d->name, "%s", name);
	d->unknown_key = KS_NO_KEY;
	return d;
}

uint32_t cls_count(const struct cls_registry *r)
{
	return __atomic_load_n(&r->ndefs, __ATOMIC_ACQUIRE);
}

const struct cls_def *cls_get(const struct cls_registry *r, uint32_t id)
{
	if (id >= cls_count(r))
		return NULL;
	const struct cls_def *d = r->defs[id];
	if (__atomic_load_n(&d->removed, __ATOMIC_ACQUIRE))
		return NULL;
	if (d->builtin == CB_FEATURE && !r->has_features)
		return NULL;
	return d;
}

uint32_t cls_find(const struct cls_registry *r, const char *name)
{
	for (uint32_t i = 0; i < cls_count(r); i++) {
		const struct cls_def *d = cls_get(r, i);
		if (d && !strcmp(d->name, name))
			return i;
	}
	return CLS_NONE;
}

static int add_def_locked(struct cls_registry *r, struct cls_def *d)
{
	if (r->ndefs >= CLS_MAX)
		return -ENOSPC;
	r->defs[r->ndefs] = d;
	__atomic_store_n(&r->ndefs, r->ndefs + 1, __ATOMIC_RELEASE);
	return 0;
}

static enum cls_card card_of(enum xtype t)
{
	switch (t) {
	case XT_BOOL: return CARD_FILTER;
	case XT_LIST: return CARD_MANY;
	case XT_PATH: return CARD_HIER;
	case XT_PARTS: return CARD_PARTS;
	default: return CARD_ONE;
	}
}

static const char *card_name(enum cls_card c)
{
	switch (c) {
	case CARD_ONE: return "one-to-one";
	case CARD_MANY: return "one-to-many";
	case CARD_HIER: return "one-to-hierarchy";
	case CARD_FILTER: return "filter";
	case CARD_PARTS: return "one-to-many (byte parts)";
	}
	return "?";
}

/* Takes e and src. */
static int install_expr(struct cls_registry *r, const char *name, struct expr *e, char *src,
			int user, char *msg, size_t msglen)
{
	int rc = 0;
	if (is_builtin_name(name)) {
		snprintf(msg, msglen, "%s: the name of a predefined classifier", name);
		expr_free(e);
		free(src);
		return -EINVAL;
	}
	struct cls_def *d = def_new(name);
	if (!d) {
		expr_free(e);
		free(src);
		return -ENOMEM;
	}
	d->builtin = CB_EXPR;
	d->ex = e;
	d->source = src;
	d->user = user;
	d->card = card_of(expr_type(e));
	d->per_object = expr_per_object(e);
	d->needs_graph = expr_uses_graph(e);
	snprintf(d->about, sizeof d->about, "%s, defined as an expression (%s)",
		 card_name(d->card), user ? "classifiers/" : "predefined");
	pthread_mutex_lock(&r->lock);
	if (is_reserved_name_locked(r, name)) {
		pthread_mutex_unlock(&r->lock);
		snprintf(msg, msglen, "%s: the name of a predefined classifier", name);
		def_free(d);
		return -EINVAL;
	}
	/* A new definition of a name replaces the old one; the old id stays
	 * valid (hidden) for nodes that still hold it. */
	for (uint32_t i = 0; i < r->ndefs; i++) {
		struct cls_def *o = r->defs[i];
		if (!o->removed && !strcmp(o->name, name) && o->builtin == CB_EXPR)
			__atomic_store_n(&o->removed, 1, __ATOMIC_RELEASE);
	}
	rc = add_def_locked(r, d);
	pthread_mutex_unlock(&r->lock);
	if (rc) {
		snprintf(msg, msglen, "%s: too many classifiers (at most %d)", name, CLS_MAX);
		def_free(d);
	}
	return rc;
}

int cls_define(struct cls_registry *r, const char *name, const char *src, size_t len, char *msg,
	       size_t msglen)
{
	struct expr_error err;
	struct expr *e;
	if (!expr_valid_name(name, strlen(name))) {
		snprintf(msg, msglen,
			 "%s: a classifier name is lower-case letters, digits, '-', '_', '.' (at most 48)",
			 name);
		return -EINVAL;
	}
	int rc = expr_compile(src, len, &e, &err);
	if (rc) {
		if (err.line)
			snprintf(msg, msglen, "%s: line %u, column %u: %s", name, err.line, err.col,
				 err.msg);
		else
			snprintf(msg, msglen, "%s: %s", name, err.msg);
		return rc;
	}
	char *copy = strndup(src, len);
	if (!copy) {
		expr_free(e);
		return -ENOMEM;
	}
	return install_expr(r, name, e, copy, 1, msg, msglen);
}

struct defs_ctx {
	struct cls_registry *r;
	int user;
	char *msg;
	size_t msglen;
};

static int define_one(void *vctx, const char *name, struct expr *e)
{
	struct defs_ctx *c = vctx;
	char *src = strdup("(from a definitions file)");
	if (!src) {
		expr_free(e);
		return -ENOMEM;
	}
	return install_expr(c->r, name, e, src, c->user, c->msg, c->msglen);
}

static int define_text(struct cls_registry *r, const char *what, const char *text, size_t len,
		       int user, char *msg, size_t msglen)
{
	struct expr_error err;
	struct defs_ctx c = { r, user, msg, msglen };
	msg[0] = '\0';
	int rc = expr_compile_defs(text, len, define_one, &c, &err);
	if (rc == -EINVAL && err.line)
		snprintf(msg, msglen, "%s: line %u, column %u: %s", what, err.line, err.col, err.msg);
	else if (rc && !msg[0])
		snprintf(msg, msglen, "%s: %s", what, err.msg[0] ? err.msg : strerror(-rc));
	return rc;
}

/* The file is one given as a mount option: it must be a regular file of
 * at most FILES_OPTION_MAX bytes, and since it may be anything the user
 * can read (-o classifiers=/etc/shadow) its errors never quote its text:
 * the expression compiler's messages that do are said without the quote,
 * and a definition the registry refuses without its name.  msg: "line L,
 * column C: what" or what is wrong with the file, without its name. */
int cls_define_file(struct cls_registry *r, const char *path, char *msg, size_t msglen)
{
	/* analyses/expr.c's messages that quote the text, by how they start */
	static const struct { const char *start, *say; } quoting[] = {
		{ "unexpected character", "unexpected character" },
		{ "unexpected byte", "unexpected byte" },
		{ "unknown escape", "unknown escape sequence in a string" },
		{ "unknown function", "unknown function" },
		{ "unknown property", "unknown property" },
		{ "unexpected ", "unexpected text" },
	};
	struct buf b;
	struct expr_error err;
	char what[sizeof err.msg + 64] = "", said[sizeof what], refused[256] = "";
	struct defs_ctx c = { r, 1, refused, sizeof refused };
	buf_init(&b);
	memset(&err, 0, sizeof err);
	int rc = file_read_capped(path, FILES_OPTION_MAX, &b, what, sizeof what);
	if (rc == -EINVAL || rc == -EISDIR) {
		snprintf(msg, msglen, "%s, not a regular file", what);
		goto out;
	}
	if (rc) {
		snprintf(msg, msglen, "%s", what);
		goto out;
	}
	rc = expr_compile_defs((const char *)b.data, b.len, define_one, &c, &err);
	if (!rc)
		goto out;
	if (refused[0]) {
		/* install_expr's "NAME: why" */
		const char *why = strstr(refused, ": ");
		snprintf(what, sizeof what, "%s", why ? why + 2 : refused);
	} else {
		snprintf(what, sizeof what, "%s", err.msg[0] ? err.msg : strerror(-rc));
		char *found = strstr(what, ", found ");
		if (found)
			*found = '\0';
		for (size_t i = 0; i < sizeof quoting / sizeof quoting[0]; i++) {
			if (strncmp(what, quoting[i].start, strlen(quoting[i].start)))
				continue;
			snprintf(said, sizeof said, "%s%s", quoting[i].say,
				 strstr(what, " after the expression") ? " after the expression" :
				 strstr(what, " in a number") ? " in a number" : "");
			memcpy(what, said, sizeof what);
			break;
		}
	}
	if (err.line)
		snprintf(msg, msglen, "line %u, column %u: %s", err.line, err.col, what);
	else
		snprintf(msg, msglen, "%s", what);
out:
	buf_free(&b);
	return rc;
}

int cls_register_ext(struct cls_registry *r, const struct cls_ext *x, uint32_t *id)
{
	struct cls_def *d = def_new(x->name);
	int rc = 0;
	if (!d)
		return -ENOMEM;
	d->builtin = CB_EXT;
	d->card = x->card;
	d->multi_path = x->card == CARD_HIER && x->multi_path;
	d->per_object = 1;
	d->needs_graph = x->needs_graph;
	d->ext_ops = x->ops;
	d->ext_ctx = x->ctx;
	d->ext_fixed = x->fixed;
	d->ext_nfixed = x->nfixed;
	snprintf(d->about, sizeof d->about, "%s", x->about ? x->about : "");
	pthread_mutex_lock(&r->lock);
	for (uint32_t i = 0; i < r->ndefs && !rc; i++) {
		if (!r->defs[i]->removed && !strcmp(r->defs[i]->name, x->name))
			rc = -EEXIST;
	}
	uint32_t at = r->ndefs;
	if (!rc)
		rc = add_def_locked(r, d);
	pthread_mutex_unlock(&r->lock);
	if (rc)
		def_free(d);
	else if (id)
		*id = at;
	return rc;
}

int cls_undefine(struct cls_registry *r, const char *name)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&r->lock);
	for (uint32_t i = 0; i < r->ndefs; i++) {
		struct cls_def *d = r->defs[i];
		if (d->removed || strcmp(d->name, name))
			continue;
		if (!d->user) {
			rc = -EPERM;
			break;
		}
		__atomic_store_n(&d->removed, 1, __ATOMIC_RELEASE);
		rc = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void cls_log_error(struct cls_registry *r, const char *line)
{
	pthread_mutex_lock(&r->lock);
	size_t have = strlen(r->errors), add = strlen(line) + 1;
	if (have + add >= sizeof r->errors) {
		/* keep the newest: drop the oldest half */
		size_t cut = have / 2;
		char *nl = strchr(r->errors + cut, '\n');
		cut = nl ? (size_t)(nl - r->errors) + 1 : have;
		memmove(r->errors, r->errors + cut, have - cut + 1);
		have -= cut;
	}
	if (have + add < sizeof r->errors)
		snprintf(r->errors + have, sizeof r->errors - have, "%s\n", line);
	pthread_mutex_unlock(&r->lock);
}

/* Keeps what a pass met: per GC the largest count (loops over parts of a
 * GC meet fewer objects, none meets more than the GC has) and the first
 * reason.  Without memory for the table the failures go unrecorded; the
 * objects are still under <error>. */
static void note_failures(struct cls_registry *r, uint32_t cls, uint32_t gci, uint64_t objects,
			  const struct expr_fault *why, int sum_overflow)
{
	struct cls_def *d = r->defs[cls];
	if (gci >= r->t->ngcs)
		return;
	pthread_mutex_lock(&r->lock);
	if (!d->fails)
		d->fails = calloc(r->t->ngcs, sizeof *d->fails);
	if (d->fails) {
		struct cls_fail *f = &d->fails[gci];
		if (objects > f->objects)
			f->objects = objects;
		if (!f->why.what && why->what)
			f->why = *why;
		f->sum_overflow |= sum_overflow;
	}
	pthread_mutex_unlock(&r->lock);
}

int cls_errors(struct cls_registry *r, struct buf *log, cls_failure_fn fn, void *ctx)
{
	pthread_mutex_lock(&r->lock);
	int rc = buf_put(log, r->errors, strlen(r->errors));
	for (uint32_t i = 0; i < r->ndefs && !rc; i++) {
		const struct cls_def *d = r->defs[i];
		if (!d->fails || __atomic_load_n(&d->removed, __ATOMIC_ACQUIRE))
			continue;
		for (uint32_t g = 0; g < r->t->ngcs && !rc; g++) {
			const struct cls_fail *f = &d->fails[g];
			if (!f->objects && !f->sum_overflow)
				continue;
			struct cls_failure x = { d->name, g, f->objects, f->why.line, f->why.col,
						 f->why.what, f->sum_overflow };
			rc = fn(ctx, &x);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int cls_registry_init(struct cls_registry *r, const struct trace *t, struct feature_map *features)
{
	char msg[300];
	memset(r, 0, sizeof *r);
	r->t = t;
	int rc = -pthread_mutex_init(&r->lock, NULL);
	if (rc)
		return rc;
	if (features) {
		r->fm = *features;
		memset(features, 0, sizeof *features);
		r->has_features = 1;
	}
	for (uint32_t b = 0; b < CB_COUNT_ && !rc; b++) {
		struct cls_def *d = def_new(builtins[b].name);
		if (!d) {
			rc = -ENOMEM;
			break;
		}
		d->builtin = (int)b;
		d->card = builtins[b].card;
		d->per_object = builtins[b].per_object;
		d->needs_graph = builtins[b].needs_graph;
		snprintf(d->about, sizeof d->about, "%s", builtins[b].about);
		if ((rc = add_def_locked(r, d)))
			def_free(d);
	}
	if (!rc)
		rc = define_text(r, "predefined", predefined_exprs, sizeof predefined_exprs - 1, 0, msg,
				 sizeof msg);
	if (rc)
		cls_registry_destroy(r);
	return rc;
}

void cls_registry_destroy(struct cls_registry *r)
{
	for (uint32_t i = 0; i < r->ndefs; i++)
		def_free(r->defs[i]);
	r->ndefs = 0;
	feature_map_free(&r->fm);
	pthread_mutex_destroy(&r->lock);
}

/* ---- trace-level tables ---- */

/* Appends path arrays: off[i]..off[i+1] in keys. */
struct pathb {
	uint32_t *off, *keys;
	uint32_t n, nkeys, capkeys;
};

static int pathb_add(struct pathb *p, uint32_t key)
{
	if (p->nkeys == p->capkeys) {
		uint32_t cap = p->capkeys ? p->capkeys * 2 : 256;
		uint32_t *k = realloc(p->keys, cap * sizeof *k);
		if (!k)
			return -ENOMEM;
		p->keys = k;
		p->capkeys = cap;
	}
	if (key == KS_NO_KEY)
		return -ENOMEM;
	p->keys[p->nkeys++] = key;
	return 0;
}

static int prepare_type_like(struct cls_def *d, const struct trace *t)
{
	char scratch[64];
	for (uint32_t k = 0; k < t->ntypes; k++) {
		const char *n = trace_type_name(t, k, scratch, sizeof scratch);
		if (ks_add(&d->ks, n, strlen(n)) != k)
			return -ENOMEM;
	}
	d->unknown_key = ks_add(&d->ks, "<unknown type>", 14);
	return d->unknown_key == KS_NO_KEY ? -ENOMEM : 0;
}

static int prepare_thread(struct cls_def *d, const struct trace *t)
{
	for (uint32_t k = 0; k < t->nthreads; k++) {
		const char *n = sym_thread(t, k);
		if (ks_add(&d->ks, n, strlen(n)) != k)
			return -ENOMEM;
	}
	d->unknown_key = ks_add(&d->ks, "<unknown thread>", 16);
	return d->unknown_key == KS_NO_KEY ? -ENOMEM : 0;
}

/* Per site: the keys of its frames, innermost first. */
static int prepare_site(struct cls_def *d, const struct trace *t)
{
	struct pathb p = { 0 };
	struct buf b;
	int rc = -ENOMEM;
	buf_init(&b);
	p.off = malloc(((size_t)t->nsites + 1) * sizeof *p.off);
	if (!p.off)
		goto out;
	d->unknown_key = ks_intern(&d->ks, "<unknown site>", 14);
	rc = 0;
	for (uint32_t s = 0; s < t->nsites && !rc; s++) {
		p.off[s] = p.nkeys;
		for (uint32_t f = 0; f < t->sites[s].nframes && !rc; f++) {
			buf_reset(&b);
			if (!(rc = sym_frame(t, &t->sites[s].frames[f], &b)))
				rc = pathb_add(&p, ks_intern(&d->ks, (char *)b.data, b.len));
		}
	}
	p.off[t->nsites] = p.nkeys;
out:
	buf_free(&b);
	d->path_off = p.off;
	d->path_keys = p.keys;
	d->npaths = t->nsites;
	return rc;
}

/* Per type: its package segments ("java.util.HashMap" -> java, util);
 * arrays take their element class's package. */
static int prepare_package(struct cls_def *d, const struct trace *t)
{
	struct pathb p = { 0 };
	char scratch[64];
	int rc = -ENOMEM;
	p.off = malloc(((size_t)t->ntypes + 1) * sizeof *p.off);
	if (!p.off)
		goto out;
	d->unknown_key = ks_intern(&d->ks, "<no package>", 12);
	rc = 0;
	for (uint32_t k = 0; k < t->ntypes && !rc; k++) {
		p.off[k] = p.nkeys;
		const char *n = trace_type_name(t, k, scratch, sizeof scratch);
		size_t len = strlen(n);
		while (len >= 2 && n[len - 2] == '[' && n[len - 1] == ']')
			len -= 2;
		const char *last = NULL;
		for (size_t i = 0; i < len; i++) {
			if (n[i] == '.')
				last = n + i;
		}
		if (!last) {
			rc = pathb_add(&p, d->unknown_key);
			continue;
		}
		const char *s = n;
		while (!rc && s < last) {
			const char *dot = memchr(s, '.', (size_t)(last - s));
			size_t seg = dot ? (size_t)(dot - s) : (size_t)(last - s);
			rc = pathb_add(&p, ks_intern(&d->ks, s, seg));
			s += seg + 1;
		}
	}
	p.off[t->ntypes] = p.nkeys;
out:
	d->path_off = p.off;
	d->path_keys = p.keys;
	d->npaths = t->ntypes;
	return rc;
}

static int frame_matches(const struct trace *t, const struct htr_site_frame *f,
			 const struct feature_pattern *fp, struct buf *b)
{
	buf_reset(b);
	int rc = fp->with_line ? sym_frame(t, f, b) : sym_method(t, f->method, b);
	return !rc && glob_match(fp->glob, (const char *)b->data, b->len);
}

/* Per site: the features one of whose patterns matches one of its frames. */
static int prepare_feature(struct cls_registry *r, struct cls_def *d)
{
	const struct trace *t = r->t;
	struct pathb p = { 0 };
	struct buf b;
	int rc = -ENOMEM;
	buf_init(&b);
	p.off = malloc(((size_t)t->nsites + 1) * sizeof *p.off);
	if (!p.off)
		goto out;
	rc = 0;
	for (uint32_t f = 0; f < r->fm.nnames && !rc; f++) {
		if (ks_add(&d->ks, r->fm.names[f], strlen(r->fm.names[f])) != f)
			rc = -ENOMEM;
	}
	d->unknown_key = ks_add(&d->ks, "<no feature>", 12);
	for (uint32_t s = 0; s < t->nsites && !rc; s++) {
		p.off[s] = p.nkeys;
		for (uint32_t f = 0; f < r->fm.nnames && !rc; f++) {
			int hit = 0;
			for (uint32_t k = 0; k < r->fm.npats && !hit; k++) {
				if (r->fm.pats[k].feature != f)
					continue;
				for (uint32_t fr = 0; fr < t->sites[s].nframes && !hit; fr++)
					hit = frame_matches(t, &t->sites[s].frames[fr], &r->fm.pats[k], &b);
			}
			if (hit)
				rc = pathb_add(&p, f);
		}
	}
	p.off[t->nsites] = p.nkeys;
out:
	buf_free(&b);
	d->feat_off = p.off;
	d->feat_keys = p.keys;
	d->npaths = t->nsites;
	return rc;
}

static int prepare_fixed(struct cls_def *d, const char *const *names, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (ks_intern(&d->ks, names[k], strlen(names[k])) != k)
			return -ENOMEM;
	}
	return 0;
}

static const char *const kind_names[] = { "instance", "small-array", "big-array" };
static const char *const filter_names[] = { "yes" };

int cls_prepare(struct cls_registry *r, uint32_t id)
{
	if (id >= cls_count(r))
		return -ENOENT;
	struct cls_def *d = r->defs[id];
	if (__atomic_load_n(&d->prepared, __ATOMIC_ACQUIRE))
		return 0;
	int rc = 0;
	pthread_mutex_lock(&r->lock);
	if (!d->prepared) {
		switch (d->builtin) {
		case CB_TYPE: rc = prepare_type_like(d, r->t); break;
		case CB_THREAD: rc = prepare_thread(d, r->t); break;
		case CB_SITE: rc = prepare_site(d, r->t); break;
		case CB_PACKAGE: rc = prepare_package(d, r->t); break;
		case CB_FEATURE: rc = prepare_feature(r, d); break;
		case CB_KIND: rc = prepare_fixed(d, kind_names, 3); break;
		case CB_EXT:
			rc = d->card == CARD_FILTER ? prepare_fixed(d, filter_names, 1) :
			     prepare_fixed(d, d->ext_fixed, d->ext_nfixed);
			break;
		case CB_F_ARRAYS: case CB_F_INSTANCES: case CB_F_REACHABLE: case CB_F_UNREACHABLE:
			rc = prepare_fixed(d, filter_names, 1);
			break;
		default:
			if (d->card == CARD_FILTER)
				rc = prepare_fixed(d, filter_names, 1);
			break;
		}
		if (!rc)
			__atomic_store_n(&d->prepared, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* ---- chains ---- */

void chain_init(struct chain *c)
{
	memset(c, 0, sizeof *c);
	c->diff_gci = UINT32_MAX;
}

static int is_transform(uint8_t op)
{
	return op == ST_POINTS_TO || op == ST_POINTED_FROM || op == ST_CLOSURE_TRANSITIVE ||
	       op == ST_CLOSURE_RETAINED || op == ST_ADHOC; /* the last three: closures and ad-hoc groups */
}

int chain_uses(const struct chain *c, uint32_t cls)
{
	for (uint32_t i = c->depth; i > 0; i--) {
		const struct chain_step *s = &c->steps[i - 1];
		if (is_transform(s->op))
			return 0;
		if (s->cls == cls)
			return 1;
	}
	return 0;
}

int chain_push(struct chain *c, enum step_op op, uint32_t cls, uint32_t key)
{
	int has_key = op == ST_CLS;
	if (c->depth >= CHAIN_STEPS_MAX || (has_key && c->nkeys >= CHAIN_KEYS_MAX))
		return -E2BIG;
	struct chain_step *s = &c->steps[c->depth++];
	s->op = (uint8_t)op;
	/* an ad-hoc step keeps its group's version id */
	s->cls = is_transform((uint8_t)op) && op != ST_ADHOC ? CLS_NONE : cls;
	s->key0 = (uint16_t)c->nkeys;
	s->nkeys = 0;
	if (has_key) {
		c->keys[c->nkeys++] = key;
		s->nkeys = 1;
	}
	return 0;
}

int chain_extend(struct chain *c, uint32_t key)
{
	if (!c->depth || c->nkeys >= CHAIN_KEYS_MAX || c->steps[c->depth - 1].nkeys >= 255)
		return -E2BIG;
	c->keys[c->nkeys++] = key;
	c->steps[c->depth - 1].nkeys++;
	return 0;
}

uint32_t chain_transforms(const struct chain *c)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->depth; i++)
		n += is_transform(c->steps[i].op);
	return n;
}

int chain_at_level_of(const struct chain *c, uint32_t cls)
{
	return c->depth && c->steps[c->depth - 1].op == ST_CLS && c->steps[c->depth - 1].cls == cls;
}

int chain_key(const struct chain *c, struct buf *out)
{
	int rc = buf_printf(out, "d%" PRIu32, c->diff_gci);
	for (uint32_t i = 0; i < c->depth && !rc; i++) {
		const struct chain_step *s = &c->steps[i];
		rc = buf_printf(out, "/%u:%" PRIu32, s->op, s->cls);
		for (uint32_t k = 0; k < s->nkeys && !rc; k++)
			rc = buf_printf(out, "%c%" PRIu32, k ? '.' : '=', c->keys[s->key0 + k]);
	}
	return rc;
}

int chain_info_level(const struct cls_registry *r, const struct chain *c, uint32_t cls)
{
	for (uint32_t i = 0; i < c->depth; i++) {
		if (is_transform(c->steps[i].op))
			return 0;
		const struct cls_def *d = c->steps[i].cls < cls_count(r) ? r->defs[c->steps[i].cls] : NULL;
		if (!d || d->per_object)
			return 0;
	}
	if (cls != CLS_NONE) {
		const struct cls_def *d = cls < cls_count(r) ? r->defs[cls] : NULL;
		if (!d || d->per_object)
			return 0;
	}
	return 1;
}

/* ---- keys of objects ---- */

struct cls_keys {
	uint32_t n, cap;
	uint32_t *k;
	int64_t *w;      /* CARD_PARTS: bytes per key */
};

static int kb_add(struct cls_keys *kb, uint32_t key, int64_t w);

int cls_keys_add(struct cls_keys *kb, uint32_t key)
{
	return kb_add(kb, key, 0);
}

static int kb_add(struct cls_keys *kb, uint32_t key, int64_t w)
{
	if (kb->n == kb->cap) {
		uint32_t cap = kb->cap ? kb->cap * 2 : 16;
		uint32_t *k = realloc(kb->k, cap * sizeof *k);
		if (!k)
			return -ENOMEM;
		kb->k = k;
		int64_t *ww = realloc(kb->w, cap * sizeof *ww);
		if (!ww)
			return -ENOMEM;
		kb->w = ww;
		kb->cap = cap;
	}
	kb->k[kb->n] = key;
	kb->w[kb->n++] = w;
	return 0;
}

/* A local string -> key cache, so a per-object classifier does not take
 * the keyspace lock for every object. */
struct lkey {
	UT_hash_handle hh;
	uint32_t key;
	char s[];
};

/* Keys of strings that stay put for the pass (the expression's literals,
 * the trace's names), found by address: an expression's value is most
 * often one of a few literals, and hashing its bytes for every object
 * cost a tenth of collection health's time.  Direct-mapped. */
#define PCACHE_SLOTS 64
struct pkey {
	const char *s;
	uint32_t len, key;
};

/* A pass of one thread of a parallel object loop (classify_objects):
 * values the classifier's keyspace does not hold yet get provisional
 * keys (PROV_BIT | index into e) instead of being interned, as the loop's
 * threads meet them out of object order.  The merge interns them in
 * (object, sequence) order, the order a loop on one thread meets them in,
 * so keys are the same for any number of threads. */
#define PROV_BIT 0x80000000u
#define PROV_MAX 0x7ffffff0u    /* below CLS_PATH_END and KS_NO_KEY */
struct prov_ent {
	uint64_t obj;               /* the object that met the value first */
	uint32_t seq;               /* its how-manieth new value */
	uint32_t len;
	const char *s;              /* borrowed from the pass's lcache */
};
struct prov {
	uint32_t cls;               /* the classifier whose values are provisional */
	uint64_t obj;               /* the object being classified */
	uint32_t seq;
	struct prov_ent *e;
	uint32_t n, cap;
	uint32_t *real;             /* after the merge: e[i]'s key */
};

/* What one evaluation pass needs. */
struct pass {
	struct cls_registry *r;
	const struct trace *t;
	const struct heap_state *s;   /* object level; NULL at info level */
	const struct objinfo *infos;  /* the infos keys are computed over */
	int info_mode;                /* expression host: o is an info index */
	uint32_t gci;
	struct xarena arena;
	struct cls_keys kb;
	struct lkey *lcache[CLS_MAX];
	struct pkey *pcache[CLS_MAX]; /* PCACHE_SLOTS each, allocated when first used */
	uint32_t *birth_key[CLS_MAX]; /* age/birth: key per birth value + 2 */
	uint32_t *tname_len;          /* per type with a name: strlen, UINT32_MAX unknown */
	uint32_t *ref_fields;         /* per type: instance_ref_fields, UINT32_MAX unknown */
	uint32_t *tkey;               /* per type: the first type of its name (host_type_key) */
	int tkey_tried;               /* tkey built, or could not be (names are compared) */
	void *ext_h[CLS_MAX];         /* CB_EXT: acquired analysis handles */
	uint8_t ext_held[CLS_MAX];
	struct buf scratch;
	/* Evaluation failures, per classifier: failed is set by keys_of for
	 * the object it was asked; nfail is the most objects one loop over
	 * objects met (two loops of a pass can see an object twice: by-x/V/
	 * points-to/by-x/), fault the first reason, sum_over a part's bytes
	 * beyond UINT64_MAX.  pass_free hands them to the registry. */
	int failed;
	uint64_t nfail[CLS_MAX];
	struct expr_fault fault[CLS_MAX];
	uint8_t sum_over[CLS_MAX];
	struct prov *prov;            /* a parallel loop's thread: NULL elsewhere */
};

static int pass_init(struct pass *p, struct cls_registry *r, uint32_t gci)
{
	memset(p, 0, sizeof *p);
	p->r = r;
	p->t = r->t;
	p->gci = gci;
	buf_init(&p->scratch);
	p->arena.cap = ARENA_BYTES;
	p->arena.buf = malloc(ARENA_BYTES);
	/* NULL (no memo) is fine: neighbour types are then copied */
	p->tname_len = malloc(((size_t)r->t->ntypes + 1) * sizeof *p->tname_len);
	if (p->tname_len)
		memset(p->tname_len, 0xff, ((size_t)r->t->ntypes + 1) * sizeof *p->tname_len);
	/* NULL here too: the fields are then walked for every object */
	p->ref_fields = malloc(((size_t)r->t->ntypes + 1) * sizeof *p->ref_fields);
	if (p->ref_fields)
		memset(p->ref_fields, 0xff, ((size_t)r->t->ntypes + 1) * sizeof *p->ref_fields);
	return p->arena.buf ? 0 : -ENOMEM;
}

static void pass_free(struct pass *p)
{
	for (uint32_t c = 0; c < CLS_MAX; c++) {
		if (p->nfail[c] || p->sum_over[c])
			note_failures(p->r, c, p->gci, p->nfail[c], &p->fault[c], p->sum_over[c]);
		struct lkey *e, *tmp;
		HASH_ITER(hh, p->lcache[c], e, tmp) {
			HASH_DEL(p->lcache[c], e);
			free(e);
		}
		free(p->birth_key[c]);
		free(p->pcache[c]);
		if (p->ext_held[c] == 1)
			p->r->defs[c]->ext_ops->release(p->r->defs[c]->ext_ctx, p->ext_h[c]);
	}
	free(p->arena.buf);
	free(p->tname_len);
	free(p->ref_fields);
	free(p->tkey);
	free(p->kb.k);
	free(p->kb.w);
	buf_free(&p->scratch);
}

static uint32_t intern_cached(struct pass *p, struct cls_def *d, uint32_t cls, const char *s,
			      size_t len)
{
	struct lkey *e;
	HASH_FIND(hh, p->lcache[cls], s, len, e);
	if (e)
		return e->key;
	struct prov *pv = p->prov && p->prov->cls == cls ? p->prov : NULL;
	uint32_t key = pv ? ks_find_raw(&d->ks, s, len) : ks_intern(&d->ks, s, len);
	if ((!pv && key == KS_NO_KEY) || !(e = malloc(sizeof *e + len + 1)))
		return KS_NO_KEY;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	if (key == KS_NO_KEY) { /* pv: a value new to the keyspace */
		if (pv->n == PROV_MAX) {
			free(e);
			return KS_NO_KEY;
		}
		if (pv->n == pv->cap) {
			uint32_t cap = pv->cap ? pv->cap * 2 : 64;
			struct prov_ent *ne = realloc(pv->e, cap * sizeof *ne);
			if (!ne) {
				free(e);
				return KS_NO_KEY;
			}
			pv->e = ne;
			pv->cap = cap;
		}
		pv->e[pv->n] = (struct prov_ent){ pv->obj, pv->seq++, (uint32_t)len, e->s };
		key = PROV_BIT | pv->n++;
	}
	e->key = key;
	HASH_ADD(hh, p->lcache[cls], s[0], len, e);
	return key;
}

/* intern_cached for an expression's string value: strings outside the
 * arena (which each object's evaluation reuses) keep their address for
 * the pass, so their key is remembered by address. */
static uint32_t intern_value(struct pass *p, struct cls_def *d, uint32_t cls, struct xstr v)
{
	if (v.s >= p->arena.buf && v.s < p->arena.buf + p->arena.cap)
		return intern_cached(p, d, cls, v.s, v.len);
	if (!p->pcache[cls] && !(p->pcache[cls] = calloc(PCACHE_SLOTS, sizeof *p->pcache[cls])))
		return intern_cached(p, d, cls, v.s, v.len);
	struct pkey *e = &p->pcache[cls][((uintptr_t)v.s >> 3) % PCACHE_SLOTS];
	if (e->s == v.s && e->len == v.len)
		return e->key;
	uint32_t key = intern_cached(p, d, cls, v.s, v.len);
	if (key != KS_NO_KEY)
		*e = (struct pkey){ v.s, v.len, key };
	return key;
}

static uint32_t intern_u64(struct pass *p, struct cls_def *d, uint32_t cls, const char *fmt,
			   int64_t v)
{
	char tmp[48];
	int n = snprintf(tmp, sizeof tmp, fmt, v);
	return intern_cached(p, d, cls, tmp, (size_t)n);
}

static uint32_t size_bucket_key(struct pass *p, struct cls_def *d, uint32_t cls, uint64_t size)
{
	char tmp[48];
	int n;
	if (size == 0) {
		n = snprintf(tmp, sizeof tmp, "0");
	} else {
		int k = 63 - __builtin_clzll(size);
		uint64_t lo = 1ull << k, hi = k == 63 ? UINT64_MAX : (lo << 1) - 1;
		n = snprintf(tmp, sizeof tmp, "%" PRIu64 "-%" PRIu64, lo, hi);
	}
	return intern_cached(p, d, cls, tmp, (size_t)n);
}

static const struct objinfo *obj_info(const struct pass *p, uint32_t o)
{
	return p->info_mode ? &p->infos[o] : hs_info(p->s, o);
}

/* ---- the expression host ---- */

static int put_str(struct xarena *a, const char *s, size_t len, struct xval *out)
{
	char *p = xarena_alloc(a, len + 1);
	if (!p)
		return -ERANGE;
	memcpy(p, s, len);
	p[len] = '\0';
	out->s = (struct xstr){ p, (uint32_t)len };
	return 0;
}

static const char *type_name(const struct pass *p, uint32_t type, char *scratch, size_t len)
{
	return trace_type_name(p->t, type, scratch, len);
}

static uint32_t type_kind(const struct trace *t, uint32_t type)
{
	return type < t->ntypes ? t->types[type].kind : HTR_TYPE_INSTANCE;
}

static const char *type_kind_name(uint32_t k)
{
	return k == HTR_TYPE_OBJ_ARRAY ? "object-array" :
	       k == HTR_TYPE_PRIM_ARRAY ? "primitive-array" : "instance";
}

static uint32_t kind_key(const struct objinfo *oi)
{
	if (oi->array_length < 0)
		return 0;
	return oi->array_length <= SMALL_ARRAY_MAX ? 1 : 2;
}

/* Non-static reference fields of type ty.  A type's field list holds its
 * supers' instance fields already, first (docs/trace-format.md: the agent,
 * the dump importer and synth all write it so): walking the supers too
 * counted them twice, and instance health of the H2 dump gave 401,022
 * ValueNumerics of 24 bytes 28 bytes of parts each. */
static uint32_t instance_ref_fields(const struct trace *t, uint32_t ty)
{
	uint32_t n = 0;
	if (ty >= t->ntypes)
		return 0;
	const struct trace_type *tt = &t->types[ty];
	for (uint32_t f = 0; f < tt->nfields; f++) {
		if ((tt->fields[f].flags & HTR_FIELD_REF) && !(tt->fields[f].flags & HTR_FIELD_STATIC))
			n++;
	}
	return n;
}

/* An object's reference slots: an object array's elements, an instance's
 * reference fields (memoized per type: instance health asks for every
 * object, and walking a class's fields and supers each time took most of
 * the property's time). */
static uint64_t ref_slots(struct pass *p, const struct objinfo *oi)
{
	if (oi->array_length >= 0)
		return type_kind(p->t, oi->type) == HTR_TYPE_OBJ_ARRAY ? (uint64_t)oi->array_length : 0;
	if (!p->ref_fields || oi->type >= p->t->ntypes)
		return instance_ref_fields(p->t, oi->type);
	if (p->ref_fields[oi->type] == UINT32_MAX)
		p->ref_fields[oi->type] = instance_ref_fields(p->t, oi->type);
	return p->ref_fields[oi->type];
}

static uint64_t header_bytes(const struct trace *t, const struct objinfo *oi)
{
	if (oi->array_length >= 0 && oi->type < t->ntypes)
		return t->types[oi->type].instance_size;
	return INSTANCE_HEADER;
}

static uint32_t out_degree(const struct heap_state *s, uint32_t o)
{
	return s->has_graph ? s->out_off[o + 1] - s->out_off[o] : 0;
}

static int prop_neighbour_types(struct pass *p, uint32_t o, int dir, struct xval *out)
{
	const struct heap_state *s = p->s;
	uint32_t deg = !s->has_graph ? 0 : dir ? s->in_off[o + 1] - s->in_off[o] : out_degree(s, o);
	out->items = xarena_alloc(&p->arena, (deg ? deg : 1) * sizeof *out->items);
	if (!out->items)
		return -ERANGE;
	out->n = 0;
	char scratch[64];
	for (uint32_t k = 0; k < deg; k++) {
		uint32_t j = dir ? s->in_src[s->in_off[o] + k] : s->out_tgt[s->out_off[o] + k];
		uint32_t type = hs_info(s, j)->type;
		/* the trace's names are stable: no copy, lengths memoized per pass */
		if (p->tname_len && type < p->t->ntypes && p->t->types[type].name) {
			if (p->tname_len[type] == UINT32_MAX)
				p->tname_len[type] = (uint32_t)strlen(type_name(p, type, scratch, sizeof scratch));
			out->items[out->n++] = (struct xstr){ p->t->types[type].name, p->tname_len[type] };
			continue;
		}
		const char *n = type_name(p, type, scratch, sizeof scratch);
		struct xval v;
		if (put_str(&p->arena, n, strlen(n), &v))
			return -ERANGE;
		out->items[out->n++] = v.s;
	}
	return 0;
}

/* -1 (unknown) for objects that existed when recording began, and for
 * every object of a trace of heap dumps, which are not known across GCs
 * (model/trace.h identity_unknown). */
static int64_t age_of(const struct pass *p, uint32_t birth, const struct objinfo *oi)
{
	if ((oi->flags & HTR_ALLOC_PREEXISTING) || p->t->identity_unknown)
		return -1;
	if (birth == HS_NO_BIRTH)
		return (int64_t)p->gci + 1; /* born before the first GC */
	return birth <= p->gci ? (int64_t)(p->gci - birth) : -1;
}

static int64_t birth_of(const struct pass *p, uint32_t birth, const struct objinfo *oi)
{
	if ((oi->flags & HTR_ALLOC_PREEXISTING) || p->t->identity_unknown)
		return -1;
	if (birth == HS_NO_BIRTH)
		return 0;
	return birth < p->t->ngcs ? (int64_t)p->t->gcs[birth].gc : -1;
}

static int prop_frames(struct pass *p, const struct objinfo *oi, int all, struct xval *out)
{
	struct cls_def *site = p->r->defs[CB_SITE];
	if (cls_prepare(p->r, CB_SITE))
		return -ERANGE;
	uint32_t from = 0, to = 0;
	if (oi->site < site->npaths) {
		from = site->path_off[oi->site];
		to = site->path_off[oi->site + 1];
	}
	if (!all) {
		const char *n = from < to ? ks_raw(&site->ks, site->path_keys[from]) : "<unknown site>";
		out->s = (struct xstr){ n, (uint32_t)strlen(n) };
		return 0;
	}
	out->items = xarena_alloc(&p->arena, (to - from + 1) * sizeof *out->items);
	if (!out->items)
		return -ERANGE;
	out->n = 0;
	for (uint32_t k = from; k < to; k++) {
		const char *n = ks_raw(&site->ks, site->path_keys[k]);
		out->items[out->n++] = (struct xstr){ n, (uint32_t)strlen(n) };
	}
	return 0;
}

/* The byte properties: an object's size and the four parts instance
 * health splits it into. */
static int is_bytes_prop(enum xprop prop)
{
	return prop == XP_SIZE || prop == XP_HEADER_BYTES || prop == XP_POINTER_BYTES ||
	       prop == XP_NULL_BYTES || prop == XP_PRIMITIVE_BYTES;
}

/* Object o's byte properties, all at once (the parts share the header,
 * the references and the slots), into v[] by enum xprop. */
static void object_bytes(struct pass *p, uint32_t o, const struct objinfo *oi, int64_t v[XP_COUNT_])
{
	uint64_t nonnull = out_degree(p->s, o), slots = ref_slots(p, oi), header = header_bytes(p->t, oi);
	if (nonnull > slots)
		slots = nonnull;
	uint64_t used = header + slots * REF_BYTES;
	v[XP_SIZE] = (int64_t)oi->size;
	v[XP_HEADER_BYTES] = (int64_t)header;
	v[XP_POINTER_BYTES] = (int64_t)(nonnull * REF_BYTES);
	v[XP_NULL_BYTES] = (int64_t)((slots - nonnull) * REF_BYTES);
	v[XP_PRIMITIVE_BYTES] = oi->size > used ? (int64_t)(oi->size - used) : 0;
}

static int host_prop(void *ctx, uint32_t o, enum xprop prop, struct xval *out, struct xarena *a)
{
	struct pass *p = ctx;
	const struct objinfo *oi = obj_info(p, o);
	const struct heap_state *s = p->s;
	char scratch[64];
	(void)a;
	switch (prop) {
	case XP_TYPE: {
		const char *n = type_name(p, oi->type, scratch, sizeof scratch);
		if (n != scratch && p->tname_len) { /* the trace's name: stable, no copy */
			if (p->tname_len[oi->type] == UINT32_MAX)
				p->tname_len[oi->type] = (uint32_t)strlen(n);
			out->s = (struct xstr){ n, p->tname_len[oi->type] };
			return 0;
		}
		return put_str(&p->arena, n, strlen(n), out);
	}
	case XP_PACKAGE: {
		const char *n = type_name(p, oi->type, scratch, sizeof scratch);
		size_t len = strlen(n), end = 0;
		while (len >= 2 && n[len - 2] == '[' && n[len - 1] == ']')
			len -= 2;
		for (size_t i = 0; i < len; i++) {
			if (n[i] == '.')
				end = i;
		}
		return put_str(&p->arena, n, end, out);
	}
	case XP_SITE: return prop_frames(p, oi, 0, out);
	case XP_FRAMES: return prop_frames(p, oi, 1, out);
	case XP_THREAD: {
		const char *n = sym_thread(p->t, oi->thread);
		out->s = (struct xstr){ n, (uint32_t)strlen(n) };
		return 0;
	}
	case XP_SIZE: out->i = (int64_t)oi->size; return 0;
	case XP_ARRAY_LENGTH: out->i = oi->array_length; return 0;
	case XP_KIND: {
		const char *n = kind_names[kind_key(oi)];
		out->s = (struct xstr){ n, (uint32_t)strlen(n) };
		return 0;
	}
	case XP_TYPE_KIND: {
		const char *n = type_kind_name(type_kind(p->t, oi->type));
		out->s = (struct xstr){ n, (uint32_t)strlen(n) };
		return 0;
	}
	case XP_IS_ARRAY: out->i = oi->array_length >= 0; return 0;
	default: break;
	}
	if (p->info_mode)
		return -ERANGE; /* a per-object property with no object: a bug */
	if (is_bytes_prop(prop)) {
		int64_t v[XP_COUNT_];
		object_bytes(p, o, oi, v);
		out->i = v[prop];
		return 0;
	}
	switch (prop) {
	case XP_AGE: out->i = age_of(p, s->birth[o], oi); return 0;
	case XP_BIRTH: out->i = birth_of(p, s->birth[o], oi); return 0;
	case XP_ID: out->i = (int64_t)s->id[o]; return 0;
	case XP_REFEREE_TYPES: return prop_neighbour_types(p, o, 0, out);
	case XP_REFERRER_TYPES: return prop_neighbour_types(p, o, 1, out);
	case XP_REFEREES: out->i = out_degree(s, o); return 0;
	case XP_REFERRERS: out->i = s->has_graph ? s->in_off[o + 1] - s->in_off[o] : 0; return 0;
	default: return -ERANGE;
	}
}

static uint32_t host_degree(void *ctx, uint32_t o, int dir)
{
	struct pass *p = ctx;
	const struct heap_state *s = p->s;
	if (p->info_mode || !s->has_graph)
		return 0;
	return dir ? s->in_off[o + 1] - s->in_off[o] : s->out_off[o + 1] - s->out_off[o];
}

static uint32_t host_neighbour(void *ctx, uint32_t o, int dir, uint32_t k)
{
	struct pass *p = ctx;
	const struct heap_state *s = p->s;
	return dir ? s->in_src[s->in_off[o] + k] : s->out_tgt[s->out_off[o] + k];
}

/* Types of one name (one class, several loaders) share the first one's
 * type id, the key type_key gives.  Types without a record are named after
 * their id, so their id is their key. */
static uint32_t host_type_key(void *ctx, uint32_t o)
{
	const struct pass *p = ctx;
	uint32_t type = hs_info(p->s, o)->type;
	return type < p->t->ntypes ? p->tkey[type] : type;
}

/* p->tkey from the by-type names (ks_find_raw: the first key of a name);
 * NULL when that fails, and the host then goes without type_key. */
static void build_type_keys(struct pass *p)
{
	struct cls_def *td = p->r->defs[CB_TYPE];
	p->tkey_tried = 1;
	if (cls_prepare(p->r, CB_TYPE) || !(p->tkey = malloc(((size_t)p->t->ntypes + 1) * sizeof *p->tkey)))
		return;
	char scratch[64];
	for (uint32_t k = 0; k < p->t->ntypes; k++) {
		const char *n = type_name(p, k, scratch, sizeof scratch);
		p->tkey[k] = ks_find_raw(&td->ks, n, strlen(n));
		if (p->tkey[k] >= p->t->ntypes) { /* not a type's key: cannot happen */
			free(p->tkey);
			p->tkey = NULL;
			return;
		}
	}
}

/* An object whose evaluation filled the arena (a big array's referee
 * types) is evaluated again in a larger one, kept for the rest of the
 * pass: at least 4 times larger, twice what it asked for. */
static int grow_arena(struct xarena *a)
{
	if (a->need > ARENA_MAX)
		return -ERANGE;
	size_t cap = a->cap * 4 > a->need * 2 ? a->cap * 4 : a->need * 2;
	if (cap > ARENA_MAX)
		cap = ARENA_MAX;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	free(a->buf);
	a->buf = buf;
	a->cap = cap;
	return 0;
}

/* An object whose expression has no value (overflow, division by zero,
 * an arena that cannot hold it): under <error>, with all its bytes for
 * parts() so that the parts still add up to the parent; a filter leaves
 * it out, as it cannot say the object passes.  The loop that asked counts
 * it (p->failed). */
static int eval_failed(struct pass *p, struct cls_def *d, uint32_t cls, uint32_t o,
		       const struct expr_fault *why)
{
	p->failed = 1;
	if (!p->fault[cls].what)
		p->fault[cls] = *why;
	if (d->card == CARD_FILTER)
		return 0;
	uint32_t k = intern_cached(p, d, cls, "<error>", 7);
	if (k == KS_NO_KEY)
		return -ENOMEM;
	return kb_add(&p->kb, k, d->card == CARD_PARTS ? (int64_t)obj_info(p, o)->size : 0);
}

/* A loop over objects met n failures of classifier cls. */
static void count_failed(struct pass *p, uint32_t cls, uint64_t n)
{
	if (n > p->nfail[cls])
		p->nfail[cls] = n;
}

/* Keys of an expression's value. */
static int expr_keys(struct pass *p, struct cls_def *d, uint32_t cls, uint32_t o)
{
	if (!p->tkey_tried && !p->info_mode && expr_uses_graph(d->ex))
		build_type_keys(p);
	/* no object in info mode: no type key either (host_prop refuses too) */
	struct expr_host h = { p, host_prop, host_degree, host_neighbour,
			       p->tkey && !p->info_mode ? host_type_key : NULL };
	struct xval v;
	struct expr_fault why;
	int rc;
	do {
		p->arena.len = p->arena.need = 0;
		rc = expr_eval_fault(d->ex, &h, o, &p->arena, &v, &why);
	} while (rc && p->arena.need > p->arena.cap && !grow_arena(&p->arena));
	if (rc) {
		if (p->arena.need > ARENA_MAX)
			why = (struct expr_fault){ "the value needs more than 1 GiB to compute", 0, 0 };
		return eval_failed(p, d, cls, o, &why);
	}
	switch (v.t) {
	case XT_BOOL:
		return v.i ? kb_add(&p->kb, 0, 0) : 0;
	case XT_INT: {
		uint32_t k = intern_u64(p, d, cls, "%" PRId64, v.i);
		return k == KS_NO_KEY ? -ENOMEM : kb_add(&p->kb, k, 0);
	}
	case XT_STR: {
		uint32_t k = intern_value(p, d, cls, v.s);
		return k == KS_NO_KEY ? -ENOMEM : kb_add(&p->kb, k, 0);
	}
	default:
		break;
	}
	for (uint32_t i = 0; i < v.n && !rc; i++) {
		if (v.t == XT_PARTS && v.w[i] <= 0)
			continue;
		uint32_t k = intern_value(p, d, cls, v.items[i]);
		if (k == KS_NO_KEY)
			return -ENOMEM;
		/* a set: one-to-many keys are distinct */
		int dup = 0;
		for (uint32_t j = 0; j < p->kb.n && !dup && v.t != XT_PATH; j++)
			dup = p->kb.k[j] == k;
		if (dup && v.t == XT_PARTS) {
			for (uint32_t j = 0; j < p->kb.n; j++) {
				if (p->kb.k[j] == k)
					p->kb.w[j] += v.w[i];
			}
		}
		if (!dup)
			rc = kb_add(&p->kb, k, v.t == XT_PARTS ? v.w[i] : 0);
	}
	return rc;
}

/* The keys of entry idx of an offsets/keys table (path levels of a site
 * or package, the features of a site), or the unknown key. */
static int table_keys(struct pass *p, const struct cls_def *d, const uint32_t *off,
		      const uint32_t *keys, uint32_t idx)
{
	if (idx >= d->npaths || off[idx] == off[idx + 1])
		return kb_add(&p->kb, d->unknown_key, 0);
	int rc = 0;
	for (uint32_t k = off[idx]; k < off[idx + 1] && !rc; k++)
		rc = kb_add(&p->kb, keys[k], 0);
	return rc;
}

static int path_keys(struct pass *p, const struct cls_def *d, uint32_t idx)
{
	return table_keys(p, d, d->path_off, d->path_keys, idx);
}

static int feature_keys(struct pass *p, const struct cls_def *d, uint32_t site)
{
	return table_keys(p, d, d->feat_off, d->feat_keys, site);
}

/* Age and birth: one key per birth value, memoized for the pass. */
static int birth_keys(struct pass *p, struct cls_def *d, uint32_t cls, uint32_t o)
{
	const struct objinfo *oi = hs_info(p->s, o);
	uint32_t b = p->s->birth[o];
	uint32_t slot = (oi->flags & HTR_ALLOC_PREEXISTING) ? 0 : b == HS_NO_BIRTH ? 1 :
			b < p->t->ngcs ? b + 2 : 0;
	if (!p->birth_key[cls]) {
		p->birth_key[cls] = malloc(((size_t)p->t->ngcs + 2) * sizeof(uint32_t));
		if (!p->birth_key[cls])
			return -ENOMEM;
		memset(p->birth_key[cls], 0xff, ((size_t)p->t->ngcs + 2) * sizeof(uint32_t));
	}
	uint32_t *k = &p->birth_key[cls][slot];
	if (*k == KS_NO_KEY) {
		int64_t v = d->builtin == CB_AGE ? age_of(p, b, oi) : birth_of(p, b, oi);
		if (v < 0)
			*k = intern_cached(p, d, cls, "unknown", 7);
		else if (d->builtin == CB_BIRTH && slot == 1)
			*k = intern_cached(p, d, cls, "before-first-gc", 15);
		else
			*k = intern_u64(p, d, cls, "%" PRId64, v);
		if (*k == KS_NO_KEY)
			return -ENOMEM;
	}
	return kb_add(&p->kb, *k, 0);
}

/* An analysis classifier: its per-GC result acquired once per pass. */
static int ext_keys(struct pass *p, struct cls_def *d, uint32_t cls, uint32_t o)
{
	if (p->info_mode)
		return -ERANGE; /* per-object only: a bug if reached */
	if (p->ext_held[cls] == 2)
		return 0; /* no such analysis at this GC (the other side of a diff) */
	if (!p->ext_held[cls]) {
		int rc = d->ext_ops->acquire(d->ext_ctx, &d->ks, p->gci, &p->ext_h[cls]);
		if (rc == -EINVAL && !p->s->has_graph) {
			p->ext_held[cls] = 2;
			return 0;
		}
		if (rc)
			return rc;
		p->ext_held[cls] = 1;
	}
	return d->ext_ops->keys(p->ext_h[cls], p->s, o, &p->kb);
}

/* Fills p->kb with the keys of object o (an info index in info mode). */
static int keys_of(struct pass *p, uint32_t cls, uint32_t o)
{
	struct cls_def *d = p->r->defs[cls];
	const struct objinfo *oi = obj_info(p, o);
	p->kb.n = 0;
	p->failed = 0;
	switch (d->builtin) {
	case CB_TYPE: return kb_add(&p->kb, oi->type < p->t->ntypes ? oi->type : d->unknown_key, 0);
	case CB_THREAD:
		return kb_add(&p->kb, oi->thread < p->t->nthreads ? oi->thread : d->unknown_key, 0);
	case CB_SITE: return path_keys(p, d, oi->site);
	case CB_PACKAGE: return path_keys(p, d, oi->type);
	case CB_FEATURE: return feature_keys(p, d, oi->site);
	case CB_KIND: return kb_add(&p->kb, kind_key(oi), 0);
	case CB_ARRAY_LENGTH: {
		uint32_t k = intern_u64(p, d, cls, "%" PRId64, oi->array_length < 0 ? -1 : oi->array_length);
		return k == KS_NO_KEY ? -ENOMEM : kb_add(&p->kb, k, 0);
	}
	case CB_SIZE: {
		uint32_t k = size_bucket_key(p, d, cls, oi->size);
		return k == KS_NO_KEY ? -ENOMEM : kb_add(&p->kb, k, 0);
	}
	case CB_AGE: case CB_BIRTH: return birth_keys(p, d, cls, o);
	case CB_F_ARRAYS: return oi->array_length >= 0 ? kb_add(&p->kb, 0, 0) : 0;
	case CB_F_INSTANCES: return oi->array_length < 0 ? kb_add(&p->kb, 0, 0) : 0;
	case CB_F_REACHABLE: return hs_is_reachable(p->s, o) ? kb_add(&p->kb, 0, 0) : 0;
	case CB_F_UNREACHABLE:
		return p->s->reachable && !hs_is_reachable(p->s, o) ? kb_add(&p->kb, 0, 0) : 0;
	case CB_EXT: return ext_keys(p, d, cls, o);
	default: return expr_keys(p, d, cls, o);
	}
}

/* Multi-path keys: does one of the paths (each ended by CLS_PATH_END)
 * start with prefix? */
static int paths_match(const uint32_t *k, uint32_t nk, const uint32_t *prefix, uint32_t plen)
{
	uint32_t start = 0;
	for (uint32_t i = 0; i <= nk; i++) {
		if (i < nk && k[i] != CLS_PATH_END)
			continue;
		uint32_t len = i - start, j = 0;
		while (j < plen && j < len && k[start + j] == prefix[j])
			j++;
		if (j == plen)
			return 1;
		start = i + 1;
	}
	return 0;
}

/* Multi-path keys: the distinct keys at `level` of the paths that start
 * with prefix[0..level), into out (at most nk); returns how many.  An
 * object with two paths through one child counts once there (§3.6). */
static uint32_t paths_level_keys(const uint32_t *k, uint32_t nk, const uint32_t *prefix,
				 uint32_t level, uint32_t *out)
{
	uint32_t start = 0, n = 0;
	for (uint32_t i = 0; i <= nk; i++) {
		if (i < nk && k[i] != CLS_PATH_END)
			continue;
		uint32_t len = i - start, j = 0;
		while (j < level && j < len && k[start + j] == prefix[j])
			j++;
		if (j == level && len > level) {
			uint32_t key = k[start + level], dup = 0;
			for (uint32_t m = 0; m < n && !dup; m++)
				dup = out[m] == key;
			if (!dup)
				out[n++] = key;
		}
		start = i + 1;
	}
	return n;
}

/* Does a key list match a step? */
static int step_match(const struct cls_def *d, const struct cls_keys *kb, const uint32_t *path,
		      uint32_t plen)
{
	if (d->card == CARD_FILTER)
		return kb->n > 0;
	if (d->multi_path)
		return paths_match(kb->k, kb->n, path, plen);
	if (d->card == CARD_HIER) {
		if (kb->n < plen)
			return 0;
		for (uint32_t i = 0; i < plen; i++) {
			if (kb->k[i] != path[i])
				return 0;
		}
		return 1;
	}
	for (uint32_t i = 0; i < kb->n; i++) {
		if (kb->k[i] == path[0])
			return 1;
	}
	return 0;
}

/* ---- per-info tables ---- */

/* off[j]..off[j+1]: keys (and weights) of infos[j] for one classifier. */
struct ktab {
	uint32_t *off, *keys;
	int64_t *w;
	uint8_t *fail;   /* per info: its evaluation failed; NULL when none did */
};

static void ktab_free(struct ktab *kt)
{
	free(kt->off);
	free(kt->keys);
	free(kt->w);
	free(kt->fail);
}

static int ktab_failed(const struct ktab *kt, uint32_t j)
{
	return kt->fail && kt->fail[j];
}

/* Objects of info j a tally counts in the pass's GC: a diff's died
 * column holds objects of the other GC. */
static uint64_t tally_objects(const struct tally *t, uint32_t j)
{
	uint64_t n = 0;
	for (int c = 0; c < NCOLS; c++) {
		if (c != COL_DIED && t->col[c])
			n += t->col[c][j];
	}
	return n;
}

static int ktab_build(struct pass *p, uint32_t cls, uint32_t ninfos, struct ktab *kt)
{
	struct cls_keys all = { 0 };
	int rc = 0;
	memset(kt, 0, sizeof *kt);
	kt->off = malloc(((size_t)ninfos + 1) * sizeof *kt->off);
	if (!kt->off)
		return -ENOMEM;
	p->info_mode = 1;
	for (uint32_t j = 0; j < ninfos && !rc; j++) {
		kt->off[j] = all.n;
		rc = keys_of(p, cls, j);
		if (!rc && p->failed && !kt->fail && !(kt->fail = calloc(ninfos, 1)))
			rc = -ENOMEM;
		if (!rc && p->failed)
			kt->fail[j] = 1;
		for (uint32_t i = 0; i < p->kb.n && !rc; i++)
			rc = kb_add(&all, p->kb.k[i], p->kb.w[i]);
	}
	p->info_mode = 0;
	kt->off[ninfos] = all.n;
	kt->keys = all.k;
	kt->w = all.w;
	if (rc)
		ktab_free(kt);
	return rc;
}

/* m[j] = 1 iff objects with infos[j] pass every step of the chain; t
 * counts the objects of each info, for the failures of each step. */
static int info_match(struct pass *p, const struct chain *ch, const struct tally *t, uint32_t ninfos,
		      uint8_t **out)
{
	uint8_t *m = malloc(ninfos ? ninfos : 1);
	int rc = 0;
	if (!m)
		return -ENOMEM;
	memset(m, 1, ninfos);
	p->info_mode = 1;
	for (uint32_t d = 0; d < ch->depth && !rc; d++) {
		const struct chain_step *st = &ch->steps[d];
		if ((rc = cls_prepare(p->r, st->cls)))
			break;
		uint64_t nf = 0;
		for (uint32_t j = 0; j < ninfos && !rc; j++) {
			if (!m[j])
				continue;
			if (!(rc = keys_of(p, st->cls, j)))
				m[j] = (uint8_t)step_match(p->r->defs[st->cls], &p->kb, ch->keys + st->key0,
							   st->nkeys);
			if (!rc && p->failed)
				nf += tally_objects(t, j);
		}
		count_failed(p, st->cls, nf);
	}
	p->info_mode = 0;
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

/* ---- results ---- */

/* Per-key accumulators, grown as keys appear. */
struct acc {
	uint32_t cap;
	struct cls_row *rows;  /* indexed by key */
	const struct trace *t; /* for the sample weights */
	struct acc *prov;      /* a parallel loop's thread: provisional keys' rows */
};

void cls_row_add(struct cls_row *row, const struct trace *t, int col, uint64_t n, uint64_t bytes,
		 uint32_t flags, uint64_t size)
{
	row->c[col] += n;
	row->b[col] += bytes;
	if (t->sample_interval) {
		if (!(flags & HS_FLAG_OFF_GRAPH)) {
			row->xc[col] += n;
			row->xb[col] += bytes;
		}
		if (flags & HTR_ALLOC_WALKED)
			return; /* no sample: the estimates are as without the walk */
	}
	row->s[col] += n;
	if (t->sample_interval) {
		double w = trace_sample_weight(t, flags, size);
		row->ec[col] += (double)n * w;
		row->eb[col] += (double)bytes * w;
	}
}

void cls_row_settle(struct cls_row *row, const struct trace *t)
{
	if (!t->sample_interval)
		return;
	for (int c = 0; c < NCOLS; c++) {
		row->c[c] = (uint64_t)llround(row->ec[c]);
		row->b[c] = (uint64_t)llround(row->eb[c]);
	}
}

/* The row of key, grown into; NULL without memory. */
static struct cls_row *acc_row(struct acc *a, uint32_t key)
{
	if (key >= a->cap) {
		uint64_t cap = a->cap ? a->cap : 64;
		while (cap <= key)
			cap *= 2;
		struct cls_row *r = realloc(a->rows, cap * sizeof *r);
		if (!r)
			return NULL;
		memset(r + a->cap, 0, (cap - a->cap) * sizeof *r);
		a->rows = r;
		a->cap = (uint32_t)cap;
	}
	return &a->rows[key];
}

static int acc_add(struct acc *a, uint32_t key, int col, uint64_t count, uint64_t bytes,
		   uint32_t flags, uint64_t size)
{
	if (a->prov && (key & PROV_BIT)) {
		a = a->prov;
		key &= ~PROV_BIT;
	}
	/* checked: a part's bytes are the expression's, any size it likes */
	struct cls_row *r = acc_row(a, key);
	if (!r)
		return -ENOMEM;
	uint64_t c, b;
	if (__builtin_add_overflow(r->c[col], count, &c) || __builtin_add_overflow(r->b[col], bytes, &b))
		return -EOVERFLOW;
	cls_row_add(r, a->t, col, count, bytes, flags, size);
	return 0;
}

static int acc_emit(struct acc *a, struct buf *out)
{
	int rc = 0;
	for (uint32_t k = 0; k < a->cap && !rc; k++) {
		struct cls_row *r = &a->rows[k];
		/* a sampled trace's walked GC: a group may have no sample and
		 * still objects in the graph (exact counts, xc) */
		if (!(r->s[0] | r->s[1] | r->s[2] | r->xc[0] | r->xc[1] | r->xc[2]))
			continue;
		r->key = k;
		cls_row_settle(r, a->t);
		rc = buf_put(out, r, sizeof *r);
	}
	free(a->rows);
	a->rows = NULL;
	return rc;
}

/* Adds one object (or `count` objects of one info) to the classification:
 * the keys at the next level. */
static int acc_keys(struct acc *a, const struct cls_def *d, const uint32_t *keys,
		    const int64_t *w, uint32_t nk, uint32_t level, int col, uint64_t count,
		    uint64_t size, uint32_t flags)
{
	if (d->card == CARD_HIER && !d->multi_path) /* multi-path: kb_level made them a set */
		return nk > level ? acc_add(a, keys[level], col, count, count * size, flags, size) : 0;
	if (d->card == CARD_FILTER)
		return nk ? acc_add(a, 0, col, count, count * size, flags, size) : 0;
	int rc = 0;
	for (uint32_t i = 0; i < nk && !rc; i++) {
		uint64_t bytes;
		if (__builtin_mul_overflow(count, d->card == CARD_PARTS ? (uint64_t)w[i] : size, &bytes))
			return -EOVERFLOW;
		rc = acc_add(a, keys[i], col, count, bytes, flags, size);
	}
	return rc;
}

static uint32_t level_of(const struct chain *ch, uint32_t cls)
{
	return chain_at_level_of(ch, cls) ? ch->steps[ch->depth - 1].nkeys : 0;
}

/* Multi-path hierarchies: replaces an object's paths by the distinct keys
 * of the level below the chain's (in place); a no-op for the others. */
static void kb_level(struct cls_keys *kb, const struct cls_def *d, const struct chain *ch,
		     uint32_t cls)
{
	if (!d->multi_path)
		return;
	uint32_t level = level_of(ch, cls);
	const uint32_t *prefix = level ? ch->keys + ch->steps[ch->depth - 1].key0 : NULL;
	kb->n = paths_level_keys(kb->k, kb->n, prefix, level, kb->k);
}

int classify_tallies(struct cls_registry *r, uint32_t gci, const struct tally *t, uint32_t nt,
		     const struct chain *ch, uint32_t cls, struct buf *out)
{
	struct pass p;
	struct acc a = { .t = r->t };
	int rc = pass_init(&p, r, gci);
	if (!rc)
		rc = cls_prepare(r, cls);
	const struct cls_def *d = r->defs[cls];
	uint32_t level = level_of(ch, cls);
	for (uint32_t s = 0; s < nt && !rc; s++) {
		uint8_t *m = NULL;
		struct ktab kt;
		p.infos = t[s].infos;
		if ((rc = info_match(&p, ch, &t[s], t[s].ninfos, &m)))
			break;
		if ((rc = ktab_build(&p, cls, t[s].ninfos, &kt))) {
			free(m);
			break;
		}
		uint64_t nf = 0;
		for (uint32_t j = 0; j < t[s].ninfos && !rc; j++) {
			if (!m[j])
				continue;
			if (ktab_failed(&kt, j))
				nf += tally_objects(&t[s], j);
			for (int c = 0; c < NCOLS && !rc; c++) {
				if (!t[s].col[c] || !t[s].col[c][j])
					continue;
				rc = acc_keys(&a, d, kt.keys + kt.off[j], kt.w + kt.off[j],
					      kt.off[j + 1] - kt.off[j], level, c, t[s].col[c][j],
					      t[s].infos[j].size, t[s].infos[j].flags);
			}
		}
		count_failed(&p, cls, nf);
		ktab_free(&kt);
		free(m);
	}
	if (rc == -EOVERFLOW)
		p.sum_over[cls] = 1;
	if (!rc)
		rc = acc_emit(&a, out);
	free(a.rows);
	pass_free(&p);
	return rc;
}

int group_totals_tallies(struct cls_registry *r, uint32_t gci, const struct tally *t,
			 uint32_t nt, const struct chain *ch, struct cls_row *row)
{
	struct pass p;
	int rc = pass_init(&p, r, gci);
	memset(row, 0, sizeof *row);
	for (uint32_t s = 0; s < nt && !rc; s++) {
		uint8_t *m = NULL;
		p.infos = t[s].infos;
		if ((rc = info_match(&p, ch, &t[s], t[s].ninfos, &m)))
			break;
		for (uint32_t j = 0; j < t[s].ninfos; j++) {
			for (int c = 0; c < NCOLS && m[j]; c++) {
				if (!t[s].col[c])
					continue;
				cls_row_add(row, r->t, c, t[s].col[c][j],
					    t[s].col[c][j] * t[s].infos[j].size, t[s].infos[j].flags,
					    t[s].infos[j].size);
			}
		}
		free(m);
	}
	pass_free(&p);
	cls_row_settle(row, r->t);
	return rc;
}

/* ---- object level ---- */

/* Keeps the objects of `bits` whose info passes (bit 0 of m[info]) and
 * returns how many of those in `bits` failed to evaluate (bit 1): a word
 * of 64 objects at a time, without a branch per object.  A group's first
 * step starts from every object, so this runs over the whole heap for
 * each group a file or the suspects report asks about (the leak section
 * asks for each grower's members several times); object by object with
 * bitset_next and bitset_clear it took ~10 ns an object. */
static uint64_t keep_passing(const struct heap_state *s, const uint8_t *m, uint64_t *bits)
{
	size_t words = bitset_words(s->n);
	uint64_t nf = 0;
	for (size_t w = 0; w < words; w++) {
		uint64_t in = bits[w], keep = 0, failed = 0;
		if (!in)
			continue;
		uint32_t base = (uint32_t)(w * 64);
		uint32_t len = s->n - base < 64 ? s->n - base : 64;
		const uint32_t *info = s->info + base;
		for (uint32_t k = 0; k < len; k++) {
			uint64_t v = m[info[k]];
			keep |= (v & 1) << k;
			failed |= (v >> 1 & 1) << k;
		}
		bits[w] = in & keep;
		nf += bitset_popcount64(in & failed);
	}
	return nf;
}

/* Keeps the objects of `bits` that pass a classifier or filter step. */
static int filter_bits(struct pass *p, const struct chain_step *st, const uint32_t *path,
		       uint64_t *bits)
{
	const struct heap_state *s = p->s;
	const struct cls_def *d = p->r->defs[st->cls];
	uint64_t nf = 0;
	int rc = cls_prepare(p->r, st->cls);
	if (rc)
		return rc;
	if (!d->per_object) {
		/* per info, then one lookup per object */
		uint8_t *m = malloc(s->ninfos ? s->ninfos : 1);
		if (!m)
			return -ENOMEM;
		/* m[j]: bit 0 passes, bit 1 its evaluation failed */
		p->info_mode = 1;
		for (uint32_t j = 0; j < s->ninfos && !rc; j++) {
			if (!(rc = keys_of(p, st->cls, j)))
				m[j] = (uint8_t)(step_match(d, &p->kb, path, st->nkeys) | p->failed << 1);
		}
		p->info_mode = 0;
		if (!rc)
			nf = keep_passing(s, m, bits);
		free(m);
		count_failed(p, st->cls, nf);
		return rc;
	}
	for (uint64_t i = bitset_next(bits, s->n, 0); i < s->n && !rc;
	     i = bitset_next(bits, s->n, i + 1)) {
		if (!(rc = keys_of(p, st->cls, (uint32_t)i)) && !step_match(d, &p->kb, path, st->nkeys))
			bitset_clear(bits, i);
		nf += p->failed;
	}
	count_failed(p, st->cls, nf);
	return rc;
}

/* points-to / pointed-from: the objects referenced by / referencing the
 * set.  No graph at this GC: the empty set. */
static int transform_bits(const struct heap_state *s, uint8_t op, uint64_t **bits)
{
	if (op == ST_CLOSURE_TRANSITIVE || op == ST_CLOSURE_RETAINED)
		return closure_step_bits(s, op == ST_CLOSURE_RETAINED, bits);
	uint64_t *nb = bitset_alloc(s->n);
	if (!nb)
		return -ENOMEM;
	if (s->has_graph) {
		for (uint64_t i = bitset_next(*bits, s->n, 0); i < s->n;
		     i = bitset_next(*bits, s->n, i + 1)) {
			if (op == ST_POINTS_TO) {
				for (uint32_t e = s->out_off[i]; e < s->out_off[i + 1]; e++)
					bitset_set(nb, s->out_tgt[e]);
			} else {
				for (uint32_t e = s->in_off[i]; e < s->in_off[i + 1]; e++)
					bitset_set(nb, s->in_src[e]);
			}
		}
	}
	free(*bits);
	*bits = nb;
	return 0;
}

/* an ad-hoc group's members (groups/NAME) replace the set. */
static int adhoc_step_bits(struct cls_registry *r, uint32_t version, const struct heap_state *s,
			   uint64_t *bits)
{
	memset(bits, 0, bitset_words(s->n) * sizeof *bits);
	return r->adhoc_bits ? r->adhoc_bits(r->adhoc_ctx, version, s, bits) : -ENOENT;
}

/* The group's members in one state, as a bitset (caller frees). */
static int members(struct pass *p, const struct chain *ch, uint64_t **out)
{
	const struct heap_state *s = p->s;
	uint64_t *bits = bitset_alloc(s->n);
	int rc = 0;
	if (!bits)
		return -ENOMEM;
	bitset_fill(bits, s->n);
	for (uint32_t d = 0; d < ch->depth && !rc; d++) {
		const struct chain_step *st = &ch->steps[d];
		if (st->op == ST_ADHOC) /* groups/NAME replaces the set */
			rc = adhoc_step_bits(p->r, st->cls, s, bits);
		else if (is_transform(st->op))
			rc = transform_bits(s, st->op, &bits);
		else
			rc = filter_bits(p, st, ch->keys + st->key0, bits);
	}
	if (rc) {
		free(bits);
		return rc;
	}
	*out = bits;
	return 0;
}

/* Column of object i of a source, or -1 when it does not count there. */
static int column_of(const struct objsrc *src, uint64_t i)
{
	if (!src->in_other)
		return COL_LIVE;
	int both = bitset_get(src->in_other, i);
	if (src->side == 0)
		return both ? COL_PERM : COL_LIVE;
	return both ? -1 : COL_DIED;
}

static uint32_t src_gci(const struct objsrc *src)
{
	return src->s->gc_index;
}

/* One source's pass over a group: the pass, the group's members in that
 * source (*bits) and, for classifiers keyed per object info (cls not
 * CLS_NONE and not per object), their keys (*kt).  Close it with
 * src_pass_close whatever this returns. */
static int src_pass_open(struct cls_registry *r, const struct objsrc *src, const struct chain *ch,
			 uint32_t cls, struct pass *p, uint64_t **bits, struct ktab *kt)
{
	memset(kt, 0, sizeof *kt);
	*bits = NULL;
	int rc = pass_init(p, r, src_gci(src));
	p->s = src->s;
	p->infos = src->s->infos;
	if (!rc)
		rc = members(p, ch, bits);
	if (!rc && cls != CLS_NONE && !r->defs[cls]->per_object)
		rc = ktab_build(p, cls, src->s->ninfos, kt);
	return rc;
}

static void src_pass_close(struct pass *p, uint64_t *bits, struct ktab *kt)
{
	ktab_free(kt);
	free(bits);
	pass_free(p);
}

/* What one loop over a source's group reads (shared, read-only). */
struct oloop {
	const struct objsrc *src;
	const struct chain *ch;
	uint32_t cls, level;
	const struct cls_def *d;
	const uint64_t *bits;       /* the group's members in src */
	const struct ktab *kt;      /* keys per info, when not per object */
	const struct xparts_plan *plan; /* loop_parts may run it, or NULL */
};

/* The plan of d's expression when loop_parts can run it: per object (no
 * per-info key table for it), parts of byte properties it reads itself, in
 * a trace without sampling (whose rows carry weighted estimates). */
static int parts_plan_of(const struct cls_registry *r, const struct cls_def *d,
			 struct xparts_plan *plan)
{
	if (!d || d->builtin != CB_EXPR || d->card != CARD_PARTS || !d->per_object ||
	    r->t->sample_interval || !expr_parts_plan(d->ex, plan))
		return 0;
	for (uint32_t k = 0; k < plan->n; k++) {
		if (!is_bytes_prop(plan->prop[k]))
			return 0;
	}
	return 1;
}

/* Objects from..to-1 of the group by a parts plan: each object's bytes
 * read straight from the state and summed per part and column, without
 * evaluating the expression (instance health of a 4.8 M-object dump, one
 * thread: 0.09 s, against 0.35 s through the evaluator).  The parts are
 * interned at the end in the order the general loop meets them (by the first object with bytes
 * in the part, then by its place in parts()), so the keyspace, the
 * provisional keys of a lane and the rows are the general loop's.
 * Returns 1, having changed nothing, when an object would fail the
 * evaluation (a negative byte count, parts adding up beyond INT64_MAX):
 * the general loop then runs the range and records why. */
static int loop_parts(const struct oloop *lp, struct pass *p, struct acc *a, uint64_t from,
		      uint64_t to, struct progress *pr)
{
	const struct xparts_plan *pl = lp->plan;
	const struct heap_state *s = lp->src->s;
	uint64_t cnt[XPARTS_PLAN_MAX][NCOLS], bytes[XPARTS_PLAN_MAX][NCOLS];
	uint64_t first[XPARTS_PLAN_MAX];
	memset(cnt, 0, sizeof cnt);
	memset(bytes, 0, sizeof bytes);
	for (uint32_t k = 0; k < pl->n; k++)
		first[k] = UINT64_MAX;
	for (uint64_t i = bitset_next(lp->bits, to, from); i < to; i = bitset_next(lp->bits, to, i + 1)) {
		if (pr && (i & 0xffff) == 0)
			progress_set(pr, i);
		int col = column_of(lp->src, i);
		if (col < 0)
			continue;
		int64_t v[XP_COUNT_], w[XPARTS_PLAN_MAX], total = 0;
		object_bytes(p, (uint32_t)i, hs_info(s, (uint32_t)i), v);
		for (uint32_t k = 0; k < pl->n; k++) {
			w[k] = v[pl->prop[k]];
			if (w[k] < 0 || __builtin_add_overflow(total, w[k], &total))
				return 1;
		}
		for (uint32_t k = 0; k < pl->n; k++) {
			if (w[k] <= 0)
				continue;
			cnt[k][col]++;
			if (__builtin_add_overflow(bytes[k][col], (uint64_t)w[k], &bytes[k][col]))
				return 1;
			if (first[k] == UINT64_MAX)
				first[k] = i;
		}
	}
	uint32_t order[XPARTS_PLAN_MAX], n = 0;
	for (uint32_t k = 0; k < pl->n; k++) {
		if (first[k] == UINT64_MAX)
			continue;
		uint32_t j = n++;
		for (; j > 0 && first[order[j - 1]] > first[k]; j--) /* stable: k ascends */
			order[j] = order[j - 1];
		order[j] = k;
	}
	struct cls_def *d = p->r->defs[lp->cls];
	for (uint32_t j = 0; j < n; j++) {
		uint32_t k = order[j];
		if (p->prov && (j == 0 || first[order[j - 1]] != first[k])) {
			p->prov->obj = first[k];
			p->prov->seq = 0;
		}
		uint32_t key = intern_value(p, d, lp->cls, pl->name[k]);
		if (key == KS_NO_KEY)
			return -ENOMEM;
		for (int col = 0; col < NCOLS; col++) {
			int rc = cnt[k][col] ? acc_add(a, key, col, cnt[k][col], bytes[k][col], 0, 0) : 0;
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Objects from..to-1 of the group into a.  Failures of the classifier add
 * to *nf; *first_fail is the first failing object (UINT64_MAX: none so
 * far).  pr: progress every 64 Ki objects, or NULL. */
static int loop_objects(const struct oloop *lp, struct pass *p, struct acc *a, uint64_t from,
			uint64_t to, uint64_t *nf, uint64_t *first_fail, struct progress *pr)
{
	const struct heap_state *s = lp->src->s;
	const struct cls_def *d = lp->d;
	uint64_t failures = 0, first = *first_fail;
	int rc = lp->plan ? loop_parts(lp, p, a, from, to, pr) : 1;
	if (rc <= 0)
		return rc;
	rc = 0;
	for (uint64_t i = bitset_next(lp->bits, to, from); i < to && !rc;
	     i = bitset_next(lp->bits, to, i + 1)) {
		if (pr && (i & 0xffff) == 0)
			progress_set(pr, i);
		int col = column_of(lp->src, i);
		if (col < 0)
			continue;
		const struct objinfo *in = hs_info(s, (uint32_t)i);
		int failed;
		if (d->per_object) {
			if (p->prov) {
				p->prov->obj = i;
				p->prov->seq = 0;
			}
			if ((rc = keys_of(p, lp->cls, (uint32_t)i)))
				break;
			failed = p->failed;
			kb_level(&p->kb, d, lp->ch, lp->cls);
			rc = acc_keys(a, d, p->kb.k, p->kb.w, p->kb.n, lp->level, col, 1, in->size,
				      in->flags);
		} else {
			uint32_t j = s->info[i];
			failed = ktab_failed(lp->kt, j);
			rc = acc_keys(a, d, lp->kt->keys + lp->kt->off[j], lp->kt->w + lp->kt->off[j],
				      lp->kt->off[j + 1] - lp->kt->off[j], lp->level, col, 1, in->size,
				      in->flags);
		}
		failures += (uint64_t)failed;
		if (failed && first == UINT64_MAX)
			first = i;
	}
	*nf += failures;
	*first_fail = first;
	return rc;
}

/* ---- the object loop on several threads ----
 *
 * The group's objects are cut into chunks of a multiple of 64 objects
 * (no two share a word of a bitset), handed out in order to up to
 * `threads` lanes.  Each lane has its own pass (arena, caches, failures)
 * and its own accumulator; the heap state, the group's bitset and the
 * key tables are shared, read-only.  The merge adds the lanes' rows up
 * (integer sums: any order gives the same), interns the values the lanes
 * met first in object order (struct prov) and keeps the failures of the
 * first failing object, so the rows, the keyspace and the failure record
 * are those of the loop on one thread.  What stays on one thread:
 * classifiers over a per-GC analysis (CB_EXT: their handle is one
 * thread's), multi-path hierarchies, and sampled traces (the estimates
 * are floating-point sums, whose rounding depends on their order). */
#define CHUNK_MIN 4096u        /* objects: below two of them, one thread */
#define CHUNKS_PER_THREAD 16u  /* balance: a late lane waits for at most one */

/* Aligned so that no two lanes share a cache line: each writes its
 * pass's arena and key list and its counters for every object, and with
 * lanes side by side in one array 2 threads took 5.1 s of CPU for what 1
 * does in 2.7 (instance health, 24 M objects). */
#define LANE_ALIGN 128
struct lane {
	struct pass p;
	struct acc a, pa;           /* keys, provisional keys */
	struct prov prov;
	uint64_t nf, first_fail;
	int ran, rc;
} __attribute__((aligned(LANE_ALIGN)));

struct split {
	const struct oloop *lp;
	struct cls_registry *r;
	uint64_t n, chunk;
	uint32_t nchunks;
	uint32_t next;              /* atomic: the next chunk */
	int stop;                   /* atomic: no chunk left, or a lane failed */
	struct progress *pr;
	struct lane *lanes;
};

static int lane_run(void *vctx, uint32_t task, uint32_t worker)
{
	struct split *sp = vctx;
	struct lane *l = &sp->lanes[task];
	const struct oloop *lp = sp->lp;
	int rc;
	(void)worker;
	l->ran = 1;
	l->first_fail = UINT64_MAX;
	l->a.t = l->pa.t = sp->r->t;
	l->a.prov = &l->pa;
	l->prov.cls = lp->cls;
	rc = pass_init(&l->p, sp->r, src_gci(lp->src));
	l->p.s = lp->src->s;
	l->p.infos = lp->src->s->infos;
	l->p.prov = &l->prov;
	while (!rc && !__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		uint32_t k = __atomic_fetch_add(&sp->next, 1, __ATOMIC_RELAXED);
		if (k >= sp->nchunks)
			break;
		uint64_t from = (uint64_t)k * sp->chunk;
		uint64_t to = from + sp->chunk < sp->n ? from + sp->chunk : sp->n;
		rc = loop_objects(lp, &l->p, &l->a, from, to, &l->nf, &l->first_fail, NULL);
		progress_add(sp->pr, to - from);
	}
	__atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
	l->rc = rc;
	return rc;
}

/* Adds a lane's row into a's row of key. */
static int acc_merge(struct acc *a, uint32_t key, const struct cls_row *x)
{
	if (!(x->s[0] | x->s[1] | x->s[2] | x->xc[0] | x->xc[1] | x->xc[2] |
	      x->c[0] | x->c[1] | x->c[2]))
		return 0;
	struct cls_row *r = acc_row(a, key);
	if (!r)
		return -ENOMEM;
	for (int c = 0; c < NCOLS; c++) {
		if (__builtin_add_overflow(r->c[c], x->c[c], &r->c[c]) ||
		    __builtin_add_overflow(r->b[c], x->b[c], &r->b[c]))
			return -EOVERFLOW;
		r->s[c] += x->s[c];
		r->xc[c] += x->xc[c];
		r->xb[c] += x->xb[c];
		r->ec[c] += x->ec[c];
		r->eb[c] += x->eb[c];
	}
	return 0;
}

static int by_first_seen(const void *va, const void *vb)
{
	const struct prov_ent *a = *(const struct prov_ent *const *)va;
	const struct prov_ent *b = *(const struct prov_ent *const *)vb;
	if (a->obj != b->obj)
		return a->obj < b->obj ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The lanes' results into p (failures) and a (rows), as one thread's loop
 * would have left them. */
static int lanes_merge(struct split *sp, uint32_t nlanes, struct pass *p, struct acc *a)
{
	const struct oloop *lp = sp->lp;
	struct cls_def *d = sp->r->defs[lp->cls];
	struct prov_ent **order = NULL;
	const struct lane *first = NULL;
	uint64_t total = 0, nf = 0;
	int rc = 0;
	for (uint32_t k = 0; k < nlanes; k++) {
		if (!rc)
			rc = sp->lanes[k].rc;
		total += sp->lanes[k].prov.n;
	}
	if (rc)
		return rc;
	if (total && !(order = malloc(total * sizeof *order)))
		return -ENOMEM;
	total = 0;
	for (uint32_t k = 0; k < nlanes && !rc; k++) {
		struct prov *pv = &sp->lanes[k].prov;
		for (uint32_t i = 0; i < pv->n; i++)
			order[total++] = &pv->e[i];
		if (pv->n && !(pv->real = malloc(pv->n * sizeof *pv->real)))
			rc = -ENOMEM;
	}
	if (!rc && total) /* qsort must not be given NULL */
		qsort(order, total, sizeof *order, by_first_seen);
	for (uint64_t i = 0; i < total && !rc; i++) {
		uint32_t key = ks_intern(&d->ks, order[i]->s, order[i]->len);
		if (key == KS_NO_KEY) {
			rc = -ENOMEM;
			break;
		}
		/* which lane's: entries are in their lane's e[] */
		for (uint32_t k = 0; k < nlanes; k++) {
			struct prov *pv = &sp->lanes[k].prov;
			if (order[i] >= pv->e && order[i] < pv->e + pv->n) {
				pv->real[order[i] - pv->e] = key;
				break;
			}
		}
	}
	free(order);
	for (uint32_t k = 0; k < nlanes && !rc; k++) {
		struct lane *l = &sp->lanes[k];
		for (uint32_t key = 0; key < l->a.cap && !rc; key++)
			rc = acc_merge(a, key, &l->a.rows[key]);
		for (uint32_t key = 0; key < l->pa.cap && key < l->prov.n && !rc; key++)
			rc = acc_merge(a, l->prov.real[key], &l->pa.rows[key]);
		nf += l->nf;
		if (l->ran && l->first_fail != UINT64_MAX && (!first || l->first_fail < first->first_fail))
			first = l;
	}
	if (!rc)
		count_failed(p, lp->cls, nf);
	/* the reason one thread's loop keeps: its first failing object's */
	if (!rc && first && !p->fault[lp->cls].what)
		p->fault[lp->cls] = first->p.fault[lp->cls];
	return rc;
}

static void lanes_free(struct lane *lanes, uint32_t nlanes)
{
	for (uint32_t k = 0; k < nlanes; k++) {
		struct lane *l = &lanes[k];
		if (!l->ran)
			continue;
		/* the merge took the failures over: the lane does not note them */
		memset(l->p.nfail, 0, sizeof l->p.nfail);
		memset(l->p.sum_over, 0, sizeof l->p.sum_over);
		pass_free(&l->p);
		free(l->a.rows);
		free(l->pa.rows);
		free(l->prov.e);
		free(l->prov.real);
	}
	free(lanes);
}

/* The loop over lp's source on up to `threads` lanes, merged into p and a. */
static int loop_split(const struct oloop *lp, struct cls_registry *r, uint32_t threads,
		      struct pass *p, struct acc *a, struct progress *pr)
{
	uint64_t n = lp->src->s->n;
	uint64_t chunk = par_chunk(n, threads, CHUNKS_PER_THREAD, CHUNK_MIN);
	uint64_t nchunks = (n + chunk - 1) / chunk;
	uint32_t nlanes = nchunks < threads ? (uint32_t)nchunks : threads;
	struct split sp = { .lp = lp, .r = r, .n = n, .chunk = chunk, .nchunks = (uint32_t)nchunks,
			    .pr = pr };
	if (!(sp.lanes = aligned_alloc(LANE_ALIGN, nlanes * sizeof *sp.lanes)))
		return -ENOMEM;
	memset(sp.lanes, 0, nlanes * sizeof *sp.lanes);
	int rc = par_for(nlanes, nlanes, lane_run, &sp);
	if (!rc)
		rc = lanes_merge(&sp, nlanes, p, a);
	lanes_free(sp.lanes, nlanes);
	return rc;
}

/* 1 if the loop over src may run on several threads (see above). */
static int loop_splits(const struct cls_registry *r, const struct cls_def *d,
		       const struct objsrc *src, uint32_t threads)
{
	return threads > 1 && src->s->n >= 2 * (uint64_t)CHUNK_MIN && !r->t->sample_interval &&
	       d->builtin != CB_EXT && !d->multi_path;
}

static int classify_run(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
			const struct chain *ch, uint32_t cls, uint32_t threads, struct buf *out,
			int *redo)
{
	struct acc a = { .t = r->t };
	int rc = cls_prepare(r, cls);
	const struct cls_def *d = r->defs[cls];
	uint32_t level = level_of(ch, cls);
	struct progress *pr = progress_here();
	for (uint32_t k = 0; k < nsrc && !rc; k++) {
		struct pass p;
		uint64_t *bits;
		struct ktab kt;
		const struct heap_state *s = src[k].s;
		progress_phase(pr, s->n, "grouping by %s at GC %u (objects)", d ? d->name : "?", s->gc);
		rc = src_pass_open(r, &src[k], ch, cls, &p, &bits, &kt);
		struct xparts_plan plan;
		struct oloop lp = { &src[k], ch, cls, level, d, bits, &kt,
				    parts_plan_of(r, d, &plan) ? &plan : NULL };
		if (!rc && loop_splits(r, d, &src[k], threads)) {
			rc = loop_split(&lp, r, threads, &p, &a, pr);
			/* the record of the sum's overflow is one thread's loop's */
			if (rc == -EOVERFLOW)
				*redo = 1;
		} else if (!rc) {
			uint64_t nf = 0, first = UINT64_MAX;
			rc = loop_objects(&lp, &p, &a, 0, s->n, &nf, &first, pr);
			count_failed(&p, cls, nf);
			if (rc == -EOVERFLOW)
				p.sum_over[cls] = 1;
		}
		src_pass_close(&p, bits, &kt);
	}
	if (!rc)
		rc = acc_emit(&a, out);
	free(a.rows);
	return rc;
}

int classify_objects(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
		     const struct chain *ch, uint32_t cls, uint32_t threads, struct buf *out)
{
	int redo = 0;
	int rc = classify_run(r, src, nsrc, ch, cls, threads, out, &redo);
	/* bytes beyond UINT64_MAX: what the failure record says (how many
	 * objects failed before the sum overflowed) is one thread's */
	if (redo)
		rc = classify_run(r, src, nsrc, ch, cls, 1, out, &redo);
	return rc;
}

/* ---- every level of a hierarchy at once ---- */

/* A trie under construction: nodes in creation order, found by (parent,
 * key) through an open-addressing table. */
struct trie {
	struct cls_trie_node *nodes;
	uint32_t n, cap;
	uint32_t *slots, nslots; /* node index + 1; 0 empty */
};

static uint32_t trie_hash(uint32_t parent, uint32_t key, uint32_t mask)
{
	uint64_t h = ((uint64_t)parent << 32 | key) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & mask;
}

static int trie_grow_slots(struct trie *t)
{
	uint32_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *sl = calloc(ns, sizeof *sl);
	if (!sl)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t h = trie_hash(t->nodes[i].parent, t->nodes[i].key, ns - 1);
		while (sl[h])
			h = (h + 1) & (ns - 1);
		sl[h] = i + 1;
	}
	free(t->slots);
	t->slots = sl;
	t->nslots = ns;
	return 0;
}

/* The child of parent under key, made if new; UINT32_MAX when out of
 * memory. */
static uint32_t trie_child(struct trie *t, uint32_t parent, uint32_t key)
{
	if ((uint64_t)(t->n + 1) * 2 > t->nslots && trie_grow_slots(t))
		return UINT32_MAX;
	uint32_t h = trie_hash(parent, key, t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
		const struct cls_trie_node *x = &t->nodes[t->slots[h] - 1];
		if (x->parent == parent && x->key == key)
			return t->slots[h] - 1;
	}
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 256;
		struct cls_trie_node *nn = realloc(t->nodes, sizeof *nn * nc);
		if (!nn)
			return UINT32_MAX;
		t->nodes = nn;
		t->cap = nc;
	}
	t->nodes[t->n] = (struct cls_trie_node){ parent, key, 0, 0 };
	t->slots[h] = ++t->n;
	return t->n - 1;
}

/* Adds key paths (several, each ended by CLS_PATH_END, when multi). */
static int trie_add_paths(struct trie *t, const uint32_t *k, uint32_t nk, int multi)
{
	uint32_t at = 0;
	for (uint32_t i = 0; i < nk; i++) {
		if (multi && k[i] == CLS_PATH_END) {
			at = 0;
			continue;
		}
		if ((at = trie_child(t, at, k[i])) == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

static int by_parent_key(const void *a, const void *b)
{
	const struct cls_trie_node *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Breadth-first, each node's children contiguous and sorted by key. */
static int trie_emit(struct trie *t, struct buf *out)
{
	uint32_t n = t->n;
	uint32_t *order = malloc(sizeof *order * (n ? n : 1));
	uint32_t *newi = malloc(sizeof *newi * (n ? n : 1));
	struct cls_trie_node *sorted = malloc(sizeof *sorted * (n ? n : 1));
	uint32_t *first = calloc((size_t)n + 1, sizeof *first);
	int rc = -ENOMEM;
	if (!order || !newi || !sorted || !first)
		goto out;
	/* children of each old node, sorted by key: sort a copy by (parent,
	 * key), remembering old indexes in the unused count field */
	for (uint32_t i = 0; i < n; i++) {
		sorted[i] = t->nodes[i];
		sorted[i].nchildren = i;
	}
	if (n > 1)
		qsort(sorted + 1, n - 1, sizeof *sorted, by_parent_key);
	for (uint32_t i = n; i-- > 1;)
		first[sorted[i].parent] = i; /* first sorted position of each parent's children */
	/* BFS over old indexes */
	uint32_t head = 0, tail = 0;
	order[tail++] = 0;
	newi[0] = 0;
	while (head < tail) {
		uint32_t o = order[head++];
		for (uint32_t j = first[o]; j && j < n && sorted[j].parent == o; j++) {
			newi[sorted[j].nchildren] = tail;
			order[tail++] = sorted[j].nchildren;
		}
	}
	if ((rc = buf_reserve(out, sizeof(struct cls_trie_node) * (size_t)n)))
		goto out;
	struct cls_trie_node *res = (struct cls_trie_node *)(out->data + out->len);
	for (uint32_t i = 0; i < n; i++) {
		const struct cls_trie_node *x = &t->nodes[order[i]];
		res[i] = (struct cls_trie_node){ i ? newi[x->parent] : UINT32_MAX, i ? x->key : 0, 0, 0 };
	}
	for (uint32_t i = n; i-- > 1;) { /* children of a node are contiguous: count them */
		struct cls_trie_node *par = &res[res[i].parent];
		par->first_child = i;
		par->nchildren++;
	}
	out->len += sizeof(struct cls_trie_node) * (size_t)n;
	rc = 0;
out:
	free(order);
	free(newi);
	free(sorted);
	free(first);
	return rc;
}

int classify_trie(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
		  const struct chain *ch, uint32_t cls, struct buf *out)
{
	struct trie t = { 0 };
	int rc = cls_prepare(r, cls);
	const struct cls_def *d = r->defs[cls];
	if (!rc && d->card != CARD_HIER)
		rc = -EINVAL;
	if (!rc && trie_child(&t, UINT32_MAX, UINT32_MAX) == UINT32_MAX)
		rc = -ENOMEM; /* node 0: the group itself */
	for (uint32_t k = 0; k < nsrc && !rc; k++) {
		struct pass p;
		uint64_t *bits;
		uint8_t *seen = NULL;
		struct ktab kt;
		const struct heap_state *s = src[k].s;
		rc = src_pass_open(r, &src[k], ch, cls, &p, &bits, &kt);
		if (!rc && !d->per_object && !(seen = calloc(s->ninfos ? s->ninfos : 1, 1)))
			rc = -ENOMEM;
		for (uint64_t i = rc ? s->n : bitset_next(bits, s->n, 0); i < s->n && !rc;
		     i = bitset_next(bits, s->n, i + 1)) {
			if (column_of(&src[k], i) < 0)
				continue;
			if (d->per_object) {
				if (!(rc = keys_of(&p, cls, (uint32_t)i)))
					rc = trie_add_paths(&t, p.kb.k, p.kb.n, d->multi_path);
			} else {
				/* objects of one info share its path: add it once */
				uint32_t j = s->info[i];
				if (!seen[j]) {
					seen[j] = 1;
					rc = trie_add_paths(&t, kt.keys + kt.off[j], kt.off[j + 1] - kt.off[j],
							    d->multi_path);
				}
			}
		}
		free(seen);
		src_pass_close(&p, bits, &kt);
	}
	if (!rc)
		rc = trie_emit(&t, out);
	free(t.nodes);
	free(t.slots);
	return rc;
}

int group_totals_objects(struct cls_registry *r, const struct objsrc *src, uint32_t nsrc,
			 const struct chain *ch, struct cls_row *row)
{
	int rc = 0;
	memset(row, 0, sizeof *row);
	for (uint32_t k = 0; k < nsrc && !rc; k++) {
		struct pass p;
		uint64_t *bits;
		struct ktab kt;
		const struct heap_state *s = src[k].s;
		if (!(rc = src_pass_open(r, &src[k], ch, CLS_NONE, &p, &bits, &kt))) {
			for (uint64_t i = bitset_next(bits, s->n, 0); i < s->n;
			     i = bitset_next(bits, s->n, i + 1)) {
				int col = column_of(&src[k], i);
				if (col < 0)
					continue;
				const struct objinfo *in = hs_info(s, (uint32_t)i);
				cls_row_add(row, r->t, col, 1, in->size, in->flags, in->size);
			}
		}
		src_pass_close(&p, bits, &kt);
	}
	cls_row_settle(row, r->t);
	return rc;
}

int group_member_ids(struct cls_registry *r, const struct objsrc *src, const struct chain *ch,
		     struct buf *out)
{
	struct pass p;
	uint64_t *bits = NULL;
	const struct heap_state *s = src->s;
	int rc = pass_init(&p, r, src_gci(src));
	p.s = s;
	p.infos = s->infos;
	if (!rc)
		rc = members(&p, ch, &bits);
	for (uint64_t i = rc ? s->n : bitset_next(bits, s->n, 0); i < s->n && !rc;
	     i = bitset_next(bits, s->n, i + 1)) {
		if (column_of(src, i) >= 0)
			rc = buf_put(out, &s->id[i], sizeof s->id[i]);
	}
	free(bits);
	pass_free(&p);
	return rc;
}

/* ---- census ---- */

int census_compute(const struct heap_state *s, struct buf *out)
{
	struct census_hdr h = {
		.n = s->n, .total_bytes = s->total_bytes,
		.nreachable = s->nreachable, .reachable_bytes = s->reachable_bytes,
		.unknown_objects = s->unknown_objects, .nroots = s->nroots,
		.nedges = s->nedges, .has_graph = (uint32_t)!!s->has_graph,
		.ninfos = s->ninfos,
	};
	size_t need = sizeof h + (size_t)s->ninfos * (sizeof(struct objinfo) + sizeof(uint64_t));
	int rc = buf_reserve(out, need);
	if (!rc) rc = buf_put(out, &h, sizeof h);
	if (!rc) rc = buf_put(out, s->infos, (size_t)s->ninfos * sizeof(struct objinfo));
	if (rc)
		return rc;
	uint64_t *counts = (uint64_t *)(out->data + out->len);
	memset(counts, 0, (size_t)s->ninfos * sizeof *counts);
	/* The one pass over all objects: a histogram of interned infos. */
	const uint32_t *info = s->info;
	for (uint32_t i = 0; i < s->n; i++)
		counts[info[i]]++;
	out->len += (size_t)s->ninfos * sizeof *counts;
	return 0;
}

int census_view(const void *data, size_t len, struct census *c)
{
	if (len < sizeof *c->h)
		return -EINVAL;
	c->h = data;
	size_t need = sizeof *c->h + (size_t)c->h->ninfos * (sizeof(struct objinfo) + sizeof(uint64_t));
	if (len != need)
		return -EINVAL;
	c->infos = (const struct objinfo *)(c->h + 1);
	c->counts = (const uint64_t *)(c->infos + c->h->ninfos);
	return 0;
}

int diff_census_compute(const struct heap_state *sn, const struct heap_state *sm, struct buf *out)
{
	uint64_t *n_in_m = bitset_alloc(sn->n), *m_in_n = bitset_alloc(sm->n);
	int rc = -ENOMEM;
	if (!n_in_m || !m_in_n)
		goto out;
	diff_mark_common(sn->id, sn->n, sm->id, sm->n, n_in_m, m_in_n);
	uint32_t hdr[2] = { sn->ninfos, sm->ninfos };
	size_t need = sizeof hdr + (size_t)sn->ninfos * (sizeof(struct objinfo) + 2 * sizeof(uint64_t)) +
		      (size_t)sm->ninfos * (sizeof(struct objinfo) + sizeof(uint64_t));
	if ((rc = buf_reserve(out, need)) || (rc = buf_put(out, hdr, sizeof hdr)) ||
	    (rc = buf_put(out, sn->infos, (size_t)sn->ninfos * sizeof(struct objinfo))))
		goto out;
	uint64_t *born = (uint64_t *)(out->data + out->len), *perm = born + sn->ninfos;
	memset(born, 0, 2 * (size_t)sn->ninfos * sizeof *born);
	for (uint32_t i = 0; i < sn->n; i++) {
		if (bitset_get(n_in_m, i))
			perm[sn->info[i]]++;
		else
			born[sn->info[i]]++;
	}
	out->len += 2 * (size_t)sn->ninfos * sizeof *born;
	if ((rc = buf_put(out, sm->infos, (size_t)sm->ninfos * sizeof(struct objinfo))))
		goto out;
	uint64_t *died = (uint64_t *)(out->data + out->len);
	memset(died, 0, (size_t)sm->ninfos * sizeof *died);
	for (uint32_t i = 0; i < sm->n; i++) {
		if (!bitset_get(m_in_n, i))
			died[sm->info[i]]++;
	}
	out->len += (size_t)sm->ninfos * sizeof *died;
	rc = 0;
out:
	free(n_in_m);
	free(m_in_n);
	return rc;
}

int diff_census_view(const void *data, size_t len, struct tally t[2])
{
	const uint32_t *hdr = data;
	if (len < 2 * sizeof *hdr)
		return -EINVAL;
	size_t need = 2 * sizeof *hdr + (size_t)hdr[0] * (sizeof(struct objinfo) + 2 * sizeof(uint64_t)) +
		      (size_t)hdr[1] * (sizeof(struct objinfo) + sizeof(uint64_t));
	if (len != need)
		return -EINVAL;
	const char *p = (const char *)(hdr + 2);
	memset(t, 0, 2 * sizeof *t);
	t[0].ninfos = hdr[0];
	t[0].infos = (const struct objinfo *)p;
	p += (size_t)hdr[0] * sizeof(struct objinfo);
	t[0].col[COL_LIVE] = (const uint64_t *)p;
	t[0].col[COL_PERM] = (const uint64_t *)p + hdr[0];
	p += 2 * (size_t)hdr[0] * sizeof(uint64_t);
	t[1].ninfos = hdr[1];
	t[1].infos = (const struct objinfo *)p;
	p += (size_t)hdr[1] * sizeof(struct objinfo);
	t[1].col[COL_DIED] = (const uint64_t *)p;
	return 0;
}

/* ---- member sets for closures (fs/render_closure.c) ---- */

int group_members_bits(struct cls_registry *r, const struct heap_state *s, const struct chain *ch,
		       uint64_t **out)
{
	struct pass p;
	int rc = pass_init(&p, r, s->gc_index);
	if (rc)
		return rc;
	p.s = s;
	p.infos = s->infos;
	rc = members(&p, ch, out);
	pass_free(&p);
	return rc;
}

int group_members_bits_many(struct cls_registry *r, const struct heap_state *s, uint32_t cls,
			    const uint32_t *keys, uint32_t n, uint64_t **bits)
{
	struct pass p;
	uint8_t *m = NULL;
	uint64_t nf = 0;
	memset(bits, 0, n * sizeof *bits);
	int rc = n >= 0x7f ? -EINVAL : cls_prepare(r, cls);
	const struct cls_def *d = rc ? NULL : r->defs[cls];
	if (!rc && (d->per_object || d->card != CARD_ONE))
		rc = -EINVAL;
	if (rc || (rc = pass_init(&p, r, s->gc_index)))
		return rc;
	p.s = s;
	p.infos = s->infos;
	if (!(m = malloc(s->ninfos ? s->ninfos : 1)))
		rc = -ENOMEM;
	for (uint32_t k = 0; k < n && !rc; k++)
		rc = (bits[k] = bitset_alloc(s->n)) ? 0 : -ENOMEM;
	/* as filter_bits, once per info, then one lookup per object; m[j]:
	 * the group of info j's objects (NO_GROUP: none), and FAILED when
	 * its evaluation failed */
	enum { NO_GROUP = 0x7f, FAILED = 0x80 };
	p.info_mode = 1;
	for (uint32_t j = 0; j < s->ninfos && !rc; j++) {
		if ((rc = keys_of(&p, cls, j)))
			break;
		uint8_t g = NO_GROUP;
		for (uint32_t k = 0; k < n && g == NO_GROUP; k++)
			g = step_match(d, &p.kb, &keys[k], 1) ? (uint8_t)k : NO_GROUP;
		m[j] = (uint8_t)(g | (p.failed ? FAILED : 0));
	}
	p.info_mode = 0;
	for (uint32_t o = 0; o < s->n && !rc; o++) {
		uint8_t g = m[s->info[o]];
		nf += g >> 7;
		if ((g & NO_GROUP) != NO_GROUP)
			bitset_set(bits[g & NO_GROUP], o);
	}
	count_failed(&p, cls, nf);
	free(m);
	pass_free(&p);
	if (rc) {
		for (uint32_t k = 0; k < n; k++) {
			free(bits[k]);
			bits[k] = NULL;
		}
	}
	return rc;
}

/* Pairs arrive in index order: a stable counting sort by key keeps the
 * index order within a key, in O(n + keys) (qsort of 10^7 pairs: ~1.5 s). */
static int pairs_sort(struct cls_pair *a, size_t n)
{
	uint32_t maxk = 0;
	for (size_t i = 0; i < n; i++)
		maxk = a[i].key > maxk ? a[i].key : maxk;
	size_t *start = calloc((size_t)maxk + 2, sizeof *start);
	struct cls_pair *tmp = malloc((n ? n : 1) * sizeof *tmp);
	if (!start || !tmp) {
		free(start);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		start[a[i].key + 1]++;
	for (uint32_t k = 0; k <= maxk; k++)
		start[k + 1] += start[k];
	for (size_t i = 0; i < n; i++)
		tmp[start[a[i].key]++] = a[i];
	if (n) /* a is NULL when the group has no pairs */
		memcpy(a, tmp, n * sizeof *a);
	free(tmp);
	free(start);
	return 0;
}

/* Keys of one member at the classification's level, as acc_keys counts them. */
static int pairs_add(struct buf *out, const struct cls_def *d, const uint32_t *keys, uint32_t nk,
		     uint32_t level, uint32_t o)
{
	struct cls_pair pr = { 0, o };
	if (d->card == CARD_HIER && !d->multi_path) { /* multi-path: kb_level made a set */
		if (nk <= level)
			return 0;
		pr.key = keys[level];
		return buf_put(out, &pr, sizeof pr);
	}
	if (d->card == CARD_FILTER)
		return nk ? buf_put(out, &pr, sizeof pr) : 0;
	int rc = 0;
	for (uint32_t i = 0; i < nk && !rc; i++) {
		pr.key = keys[i];
		rc = buf_put(out, &pr, sizeof pr);
	}
	return rc;
}

int classify_member_pairs(struct cls_registry *r, const struct heap_state *s,
			  const struct chain *ch, uint32_t cls, struct buf *out)
{
	struct pass p;
	uint64_t *bits = NULL;
	struct ktab kt = { 0 };
	int rc = cls_prepare(r, cls);
	if (rc)
		return rc;
	const struct cls_def *d = r->defs[cls];
	uint32_t level = level_of(ch, cls);
	size_t base = out->len;
	if ((rc = pass_init(&p, r, s->gc_index)))
		return rc;
	p.s = s;
	p.infos = s->infos;
	rc = members(&p, ch, &bits);
	if (!rc && !d->per_object)
		rc = ktab_build(&p, cls, s->ninfos, &kt);
	uint64_t nf = 0;
	for (uint64_t i = rc ? s->n : bitset_next(bits, s->n, 0); i < s->n && !rc;
	     i = bitset_next(bits, s->n, i + 1)) {
		if (d->per_object) {
			if (!(rc = keys_of(&p, cls, (uint32_t)i))) {
				nf += p.failed;
				kb_level(&p.kb, d, ch, cls);
				rc = pairs_add(out, d, p.kb.k, p.kb.n, level, (uint32_t)i);
			}
		} else {
			uint32_t j = s->info[i];
			nf += ktab_failed(&kt, j);
			rc = pairs_add(out, d, kt.keys + kt.off[j], kt.off[j + 1] - kt.off[j], level,
				       (uint32_t)i);
		}
	}
	count_failed(&p, cls, nf);
	if (!d->per_object)
		ktab_free(&kt);
	free(bits);
	pass_free(&p);
	if (!rc)
		rc = pairs_sort((struct cls_pair *)(out->data + base),
				(out->len - base) / sizeof(struct cls_pair));
	return rc;
}

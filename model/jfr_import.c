/* jfr_import.c - see jfr_import.h. */
#include "jfr_import.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

#include "files.h"
#include "hprof_internal.h" /* hprof_java_name: VM class names in Java form */
#include "htr_writer.h"
#include "jfr.h"
#include "progress.h"

/* A type written, by Java name: one type per name whatever the chunk or
 * loader the recording gives the class under. */
struct type_name {
	UT_hash_handle hh;
	uint32_t id;
	char name[];
};

struct jimp {
	const struct jfr_recording *r;
	struct htr_writer *w;
	uint32_t *cls_type;        /* class id -> type id; UINT32_MAX not yet written */
	struct type_name *types;   /* by name */
	uint32_t ntypes;
	uint8_t *method_done;      /* method id -> written */
	uint32_t *stack_site;      /* stack id -> site id; UINT32_MAX not yet, HTR_NO_SITE none */
	uint8_t *thread_done;
	struct htr_site_frame frames[HTR_MAX_FRAMES_PER_SITE];
};

static const char *str_or(const struct jfr_recording *r, uint32_t sid, const char *dflt)
{
	const char *s = jfr_str(r, sid);
	return s ? s : dflt;
}

static const char *class_vm_name(const struct jfr_recording *r, uint32_t cls)
{
	return cls < r->classes.n ? str_or(r, r->classes.name[cls], "<unnamed class>") : "<unknown class>";
}

/* Primitive array classes "[B", "[I" ...: one dimension, a basic type. */
static uint32_t type_kind(const char *vm)
{
	if (vm[0] != '[')
		return HTR_TYPE_INSTANCE;
	return vm[1] && vm[1] != '[' && vm[1] != 'L' && !vm[2] ? HTR_TYPE_PRIM_ARRAY : HTR_TYPE_OBJ_ARRAY;
}

/* The type id of class cls, written on first use; HTR_NO_TYPE for none. */
static int type_of(struct jimp *x, uint32_t cls, uint32_t *out)
{
	*out = HTR_NO_TYPE;
	if (cls == JFR_NONE || cls >= x->r->classes.n)
		return 0;
	if (x->cls_type[cls] != UINT32_MAX) {
		*out = x->cls_type[cls];
		return 0;
	}
	const char *vm = class_vm_name(x->r, cls);
	char *java = hprof_java_name(vm, strlen(vm));
	if (!java)
		return -ENOMEM;
	struct type_name *e;
	HASH_FIND_STR(x->types, java, e);
	int rc = 0;
	if (!e) {
		size_t len = strlen(java);
		if (!(e = malloc(sizeof *e + len + 1))) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(e->name, java, len + 1);
		e->id = x->ntypes++;
		HASH_ADD_STR(x->types, name, e);
		struct htr_type_def d = { .id = e->id, .name = java, .kind = type_kind(vm),
					  .super_id = HTR_NO_TYPE };
		if ((rc = htr_write_type(x->w, &d)))
			goto out;
	}
	x->cls_type[cls] = e->id;
	*out = e->id;
out:
	free(java);
	return rc;
}

static int method_write(struct jimp *x, uint32_t m)
{
	if (x->method_done[m])
		return 0;
	const struct jfr_recording *r = x->r;
	const char *vm = class_vm_name(r, r->methods.cls[m]);
	char *cls = hprof_java_name(vm, strlen(vm));
	if (!cls)
		return -ENOMEM;
	int rc = htr_write_method(x->w, m, cls, str_or(r, r->methods.name[m], "<unnamed>"),
				  str_or(r, r->methods.descriptor[m], ""), NULL);
	free(cls);
	x->method_done[m] = 1;
	return rc;
}

/* The site of stack trace st (its frames, top first, become the site's
 * frames, the allocating method first), written on first use. */
static int site_of(struct jimp *x, uint32_t st, uint32_t *out)
{
	*out = HTR_NO_SITE;
	const struct jfr_stacks *s = &x->r->stacks;
	if (st == JFR_NONE || st >= s->n)
		return 0;
	if (x->stack_site[st] != UINT32_MAX) {
		*out = x->stack_site[st];
		return 0;
	}
	uint32_t n = 0;
	int rc = 0;
	for (uint64_t f = s->frame_off[st]; f < s->frame_off[st + 1] && n < HTR_MAX_FRAMES_PER_SITE; f++) {
		uint32_t m = s->method[f];
		if (m == JFR_NONE || m >= x->r->methods.n)
			continue;
		if ((rc = method_write(x, m)))
			return rc;
		x->frames[n].method = m;
		x->frames[n].line = s->line[f] >= 0 ? s->line[f] : -1;
		n++;
	}
	x->stack_site[st] = HTR_NO_SITE;
	if (n) {
		if ((rc = htr_write_site(x->w, st, n, x->frames)))
			return rc;
		x->stack_site[st] = st;
	}
	*out = x->stack_site[st];
	return 0;
}

/* Trace thread ids are the recording's thread index + 1 (0: none). */
static int thread_of(struct jimp *x, uint32_t th, uint64_t *out)
{
	*out = 0;
	const struct jfr_threads *t = &x->r->threads;
	if (th == JFR_NONE || th >= t->n)
		return 0;
	*out = (uint64_t)th + 1;
	if (x->thread_done[th])
		return 0;
	x->thread_done[th] = 1;
	char dflt[32];
	snprintf(dflt, sizeof dflt, "thread-%u", th);
	const char *name = jfr_str(x->r, t->java_name[th]);
	if (!name || !*name)
		name = str_or(x->r, t->os_name[th], dflt);
	return htr_write_thread(x->w, *out, name);
}

/* ---- order of events ---- */

static int by_key(const void *a, const void *b, void *vkey)
{
	const int64_t *key = vkey;
	int64_t x = key[*(const uint32_t *)a], y = key[*(const uint32_t *)b];
	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Indexes 0..n-1 in the order of key (stable: ties by index). */
static uint32_t *order_by(const int64_t *key, uint32_t n)
{
	uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof *ix, by_key, (void *)key);
	return ix;
}

static int write_alloc_sample(struct jimp *x, uint32_t i)
{
	const struct jfr_allocs *a = &x->r->allocs;
	static const uint32_t kinds[] = { [JFR_ALLOC_SAMPLE] = HTR_SAMPLE_JFR,
					  [JFR_ALLOC_NEW_TLAB] = HTR_SAMPLE_JFR_NEW_TLAB,
					  [JFR_ALLOC_OUTSIDE_TLAB] = HTR_SAMPLE_JFR_OUTSIDE_TLAB };
	if (a->kind[i] > JFR_ALLOC_OUTSIDE_TLAB || a->start_ns[i] < 0 || a->weight[i] < 0)
		return 0; /* nothing the reader gives; a negative weight is damage: leave it out */
	struct htr_alloc_sample s = { .time_ns = (uint64_t)a->start_ns[i], .kind = kinds[a->kind[i]] };
	int rc = type_of(x, a->cls[i], &s.type);
	if (!rc) rc = site_of(x, a->stack[i], &s.site);
	if (!rc) rc = thread_of(x, a->thread[i], &s.thread);
	if (rc)
		return rc;
	switch (a->kind[i]) {
	case JFR_ALLOC_SAMPLE:
		s.weight = (uint64_t)a->weight[i];
		break;
	case JFR_ALLOC_NEW_TLAB: /* one event per new TLAB: it stands for the TLAB */
		s.size = (uint64_t)a->weight[i];
		s.weight = a->tlab_size[i] > 0 ? (uint64_t)a->tlab_size[i] : s.size;
		break;
	default: /* every allocation outside a TLAB has its event */
		s.weight = s.size = (uint64_t)a->weight[i];
	}
	return htr_write_alloc_sample(x->w, &s);
}

static uint64_t nonneg(int64_t v)
{
	return v < 0 ? 0 : (uint64_t)v;
}

/* How far a lies after b, 0 when it does not: in unsigned, since a
 * damaged recording's times may lie far enough apart that a - b
 * overflows int64_t (fuzz_jfr). */
static uint64_t ns_after(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : 0;
}

static int write_old_sample(struct jimp *x, uint32_t k, struct htr_old_ref *path, char (*how)[24])
{
	const struct jfr_recording *r = x->r;
	const struct jfr_old_samples *o = &r->old;
	const struct jfr_old_path *p = &r->old_path;
	uint64_t first = o->path_off[k], end = o->path_off[k + 1];
	struct htr_old_sample s = {
		.time_ns = nonneg(o->start_ns[k]), .alloc_ns = nonneg(o->alloc_ns[k]), .age_ns = nonneg(o->age_ns[k]),
		.array_length = o->array_elements[k] < 0 ? -1 : o->array_elements[k], /* INT32_MIN: not an array; other negatives: damage */
		.heap_used = o->heap_usage[k] < 0 ? UINT64_MAX : (uint64_t)o->heap_usage[k],
		.root_kind = str_or(r, o->root_type[k], ""), .root_desc = str_or(r, o->root_description[k], ""),
		.root_system = str_or(r, o->root_system[k], ""), .path = path,
	};
	int rc = first < end ? type_of(x, p->cls[first], &s.type) : 0;
	if (!rc) rc = site_of(x, o->stack[k], &s.site);
	if (!rc) rc = thread_of(x, o->thread[k], &s.thread);
	for (uint64_t i = first; i < end && s.npath < HTR_MAX_CHUNK && !rc; i++) {
		struct htr_old_ref *e = &path[s.npath];
		rc = type_of(x, p->cls[i], &e->type);
		e->desc = str_or(r, p->description[i], "");
		e->skip = p->ref_skip[i] > 0 ? (uint32_t)p->ref_skip[i] : 0;
		e->how = "";
		if (i > first && p->ref_field[i] != JFR_NONE) {
			e->how = str_or(r, p->ref_field[i], "");
		} else if (i > first && p->ref_index[i] >= 0) {
			snprintf(how[s.npath], sizeof how[0], "[%d]", p->ref_index[i]);
			e->how = how[s.npath];
		}
		s.npath++;
	}
	return rc ? rc : htr_write_old_sample(x->w, &s);
}

/* ---- GCs ---- */

struct gc_row {
	uint32_t i;                /* index in r->gcs */
	uint64_t before, after, committed; /* UINT64_MAX unknown */
};

/* The heap summaries of gcId id nearest to start: before and after use. */
static void heap_of(const struct jfr_recording *r, const uint32_t *by_id, struct gc_row *g)
{
	const struct jfr_heap_summaries *h = &r->heap;
	int64_t id = r->gcs.gc_id[g->i], start = r->gcs.start_ns[g->i];
	uint32_t lo = 0, hi = h->n;
	while (lo < hi) { /* first summary of this gcId */
		uint32_t mid = lo + (hi - lo) / 2;
		if (h->gc_id[by_id[mid]] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
	g->before = g->after = g->committed = UINT64_MAX;
	for (uint32_t k = lo; k < h->n && h->gc_id[by_id[k]] == id; k++) {
		uint32_t s = by_id[k];
		const char *when = jfr_str(r, h->when[s]);
		int after = when && !strcmp(when, "After GC");
		if (!after && !(when && !strcmp(when, "Before GC")))
			continue;
		/* the same gcId in two JVMs' chunks: take the nearest in time */
		uint64_t d = ns_after(h->start_ns[s], start) + ns_after(start, h->start_ns[s]);
		if (d >= best[after])
			continue;
		best[after] = d;
		if (after) {
			g->after = nonneg(h->heap_used[s]);
			g->committed = h->committed[s] > 0 ? (uint64_t)h->committed[s] : UINT64_MAX;
		} else {
			g->before = nonneg(h->heap_used[s]);
		}
	}
}

static int write_gc(struct jimp *x, const struct gc_row *g, uint32_t number)
{
	const struct jfr_gcs *c = &x->r->gcs;
	uint32_t i = g->i;
	uint64_t start = nonneg(c->start_ns[i]);
	int64_t pause = c->sum_pauses_ns[i] >= 0 ? c->sum_pauses_ns[i] : c->duration_ns[i];
	struct htr_gc_event e = { .gc = number, .time_ns = start, .used = g->before, .capacity = UINT64_MAX,
				  .flags = c->generation[i] == 2 ? HTR_GC_FULL : 0,
				  .cause = str_or(x->r, c->cause[i], ""), .collector = str_or(x->r, c->name[i], "") };
	int rc = htr_write_gc_start(x->w, &e);
	if (rc)
		return rc;
	e.time_ns = start + nonneg(pause);
	e.used = g->after;
	e.capacity = g->committed;
	e.cause = e.collector = NULL;
	return htr_write_gc_end(x->w, &e);
}

/* ---- info ---- */

static int info_u64(struct htr_writer *w, const char *key, uint64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "%" PRIu64, v);
	return htr_write_info(w, key, s);
}

static int info_str(struct htr_writer *w, const char *key, const char *v)
{
	return v ? htr_write_info(w, key, v) : 0;
}

/* The settings that say what the allocation and leak data mean. */
static int setting_wanted(const char *type)
{
	static const char *const want[] = { "jdk.ObjectAllocationSample", "jdk.ObjectAllocationInNewTLAB",
					    "jdk.ObjectAllocationOutsideTLAB", "jdk.OldObjectSample",
					    "jdk.GarbageCollection", NULL };
	for (const char *const *p = want; *p; p++)
		if (type && !strcmp(type, *p))
			return 1;
	return 0;
}

static int write_info(struct jimp *x)
{
	const struct jfr_recording *r = x->r;
	struct htr_writer *w = x->w;
	int rc = htr_write_info(w, "recorder", "heapfs import (JDK Flight Recorder recording)");
	if (!rc) rc = htr_write_info(w, "source.format", "jfr");
	if (!rc) rc = info_u64(w, "jfr.chunks", r->nchunks);
	if (!rc && r->nchunks) {
		char v[16];
		snprintf(v, sizeof v, "%u.%u", r->chunks[0].major, r->chunks[0].minor);
		rc = htr_write_info(w, "jfr.version", v);
	}
	if (!rc) rc = info_u64(w, "jfr.start_ns", nonneg(r->start_ns));
	if (!rc) rc = info_u64(w, "jfr.duration_ms", ns_after(r->end_ns, r->start_ns) / 1000000);
	if (!rc) rc = info_str(w, "vm.name", jfr_str(r, r->jvm.name));
	if (!rc) rc = info_str(w, "vm.version", jfr_str(r, r->jvm.version));
	if (!rc) rc = info_str(w, "command", jfr_str(r, r->jvm.java_arguments));
	if (!rc) rc = info_str(w, "vm.arguments", jfr_str(r, r->jvm.arguments));
	if (!rc && r->jvm.pid >= 0) rc = info_u64(w, "pid", (uint64_t)r->jvm.pid);
	if (!rc && r->truncated) rc = htr_write_info(w, "jfr.warning", r->warning);
	if (!rc && r->truncated) rc = info_u64(w, "jfr.truncated_at", r->damage.offset);
	/* settings: the last value of each (type, name), in first-seen order */
	const struct jfr_settings *s = &r->settings;
	for (uint32_t i = 0; i < s->n && !rc; i++) {
		const char *type = jfr_str(r, s->type_name[i]), *name = jfr_str(r, s->name[i]);
		if (!setting_wanted(type) || !name)
			continue;
		uint32_t last = i;
		int seen = 0;
		for (uint32_t j = 0; j < s->n; j++) {
			if (s->type_name[j] != s->type_name[i] || s->name[j] != s->name[i])
				continue;
			if (j < i)
				seen = 1;
			last = j;
		}
		if (seen)
			continue;
		char key[512];
		snprintf(key, sizeof key, "jfr.setting.%s#%s", type, name);
		rc = htr_write_info(w, key, str_or(r, s->value[last], ""));
	}
	for (uint32_t i = 0; i < r->event_counts.n && !rc; i++) {
		char key[512];
		snprintf(key, sizeof key, "jfr.events.%s", str_or(r, r->event_counts.name[i], "?"));
		rc = info_u64(w, key, r->event_counts.count[i]);
	}
	return rc;
}

/* ---- the import ---- */

static int jimp_init(struct jimp *x, const struct jfr_recording *r)
{
	memset(x, 0, sizeof *x);
	x->r = r;
	x->cls_type = malloc(((size_t)r->classes.n + 1) * sizeof *x->cls_type);
	x->method_done = calloc((size_t)r->methods.n + 1, 1);
	x->stack_site = malloc(((size_t)r->stacks.n + 1) * sizeof *x->stack_site);
	x->thread_done = calloc((size_t)r->threads.n + 1, 1);
	if (!x->cls_type || !x->method_done || !x->stack_site || !x->thread_done)
		return -ENOMEM;
	memset(x->cls_type, 0xff, ((size_t)r->classes.n + 1) * sizeof *x->cls_type);
	memset(x->stack_site, 0xff, ((size_t)r->stacks.n + 1) * sizeof *x->stack_site);
	return 0;
}

static void jimp_free(struct jimp *x)
{
	struct type_name *e, *tmp;
	HASH_ITER(hh, x->types, e, tmp) {
		HASH_DEL(x->types, e);
		free(e);
	}
	free(x->cls_type);
	free(x->method_done);
	free(x->stack_site);
	free(x->thread_done);
}

/* GC numbers: the recording's gcIds, in their order, where no two GCs
 * share one (one JVM: a concurrent cycle may start before the young GC
 * numbered just before it ends, so ids, not start times, give the order);
 * else (chunks of several JVMs, ids again from 0) 0, 1, 2... in the
 * order of their start times. */
static int gc_rows(const struct jfr_recording *r, struct gc_row **out, uint32_t **numbers)
{
	const struct jfr_gcs *c = &r->gcs;
	uint32_t *ord = order_by(c->gc_id, c->n), *by_id = order_by(r->heap.gc_id, r->heap.n);
	struct gc_row *g = malloc(((size_t)c->n + 1) * sizeof *g);
	uint32_t *num = malloc(((size_t)c->n + 1) * sizeof *num);
	int rc = ord && by_id && g && num ? 0 : -ENOMEM;
	int ids_ok = 1;
	for (uint32_t k = 0; k < c->n && !rc; k++) {
		int64_t id = c->gc_id[ord[k]];
		if (id < 0 || id >= UINT32_MAX || (k && id == c->gc_id[ord[k - 1]]))
			ids_ok = 0;
	}
	if (!rc && !ids_ok) {
		free(ord);
		if (!(ord = order_by(c->start_ns, c->n)))
			rc = -ENOMEM;
	}
	for (uint32_t k = 0; k < c->n && !rc; k++) {
		g[k].i = ord[k];
		heap_of(r, by_id, &g[k]);
		num[k] = ids_ok ? (uint32_t)c->gc_id[ord[k]] : k;
	}
	free(ord);
	free(by_id);
	if (rc) {
		free(g);
		free(num);
		return rc;
	}
	*out = g;
	*numbers = num;
	return 0;
}

static int write_events(struct jimp *x)
{
	const struct jfr_recording *r = x->r;
	struct gc_row *gcs = NULL;
	uint32_t *gcno = NULL;
	uint32_t *aord = order_by(r->allocs.start_ns, r->allocs.n), *oord = order_by(r->old.start_ns, r->old.n);
	struct htr_old_ref *path = malloc(HTR_MAX_CHUNK * sizeof *path);
	char (*how)[24] = malloc(HTR_MAX_CHUNK * sizeof *how);
	int rc = aord && oord && path && how ? gc_rows(r, &gcs, &gcno) : -ENOMEM;
	uint32_t a = 0, o = 0;
	struct progress *pr = progress_here();
	progress_phase(pr, r->gcs.n, "writing the recording's GCs and samples");
	for (uint32_t k = 0; k <= r->gcs.n && !rc; k++) {
		progress_set(pr, k);
		/* the samples before this GC (all that are left after the last) */
		int64_t until = k < r->gcs.n ? r->gcs.start_ns[gcs[k].i] : INT64_MAX;
		while (!rc && ((a < r->allocs.n && r->allocs.start_ns[aord[a]] < until) ||
			       (o < r->old.n && r->old.start_ns[oord[o]] < until))) {
			int alloc_first = o == r->old.n ||
				(a < r->allocs.n && r->allocs.start_ns[aord[a]] <= r->old.start_ns[oord[o]]);
			rc = alloc_first ? write_alloc_sample(x, aord[a++]) : write_old_sample(x, oord[o++], path, how);
		}
		if (!rc && k < r->gcs.n)
			rc = write_gc(x, &gcs[k], gcno[k]);
	}
	free(aord);
	free(oord);
	free(path);
	free(how);
	free(gcs);
	free(gcno);
	return rc;
}

/* temp: out_htr is a temporary trace (jfr_import_temp), not fsynced. */
static int import_recording(const struct jfr_recording *r, const char *out_htr, int temp, struct htr_err *err)
{
	struct jimp x;
	struct htr_writer_opts wo = { .no_sync = temp };
	int rc = jimp_init(&x, r);
	if (!rc && (rc = htr_writer_open(&x.w, out_htr, &wo)))
		htr_errf_as(err, HTR_ERR_FILE, rc, "cannot write %s: %s", out_htr, strerror(-rc));
	else if (!rc && !(rc = write_info(&x)))
		rc = write_events(&x);
	if (x.w) {
		int crc = htr_writer_close(x.w);
		if (!rc && crc)
			rc = crc;
	}
	if (rc && !err->msg[0])
		htr_errf_as(err, HTR_ERR_FILE, rc, "cannot write the trace: %s", strerror(-rc));
	jimp_free(&x);
	return rc;
}

int jfr_import_recording(const struct jfr_recording *r, const char *out_htr, struct htr_err *err)
{
	return import_recording(r, out_htr, 0, err);
}

int jfr_import_temp(const char *path, char *tmp_path, size_t tmp_len, struct htr_err *err)
{
	struct jfr_recording *r = NULL;
	int rc = jfr_open(&r, path, err);
	if (rc)
		return rc;
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(tmp_path, tmp_len, "%s/heapfs-jfr-XXXXXX.htr", dir) >= tmp_len) {
		rc = htr_errf(err, -ENAMETOOLONG, 0, "temporary file name too long");
		goto out;
	}
	int fd = mkstemps(tmp_path, 4);
	if (fd < 0) {
		rc = htr_errf(err, -errno, 0, "cannot create a temporary trace in %s: %s", dir, strerror(errno));
		goto out;
	}
	close(fd); /* the writer opens it again by name */
	memset(err, 0, sizeof *err);
	rc = import_recording(r, tmp_path, 1, err);
	if (rc)
		unlink(tmp_path);
out:
	jfr_close(r);
	return rc;
}

int jfr_import_file(const char *path, const char *out, FILE *warn, char *msg, size_t msglen)
{
	struct jfr_recording *r = NULL;
	struct htr_err e;
	struct outfile of;
	memset(&e, 0, sizeof e);
	const char *where = path; /* the file the error is about */
	int rc = jfr_open(&r, path, &e);
	if (!rc && r->truncated && warn)
		fprintf(warn, "heapfs: %s\n", r->warning);
	if (!rc) {
		where = out;
		if ((rc = outfile_begin(&of, out, e.msg, sizeof e.msg))) {
			e.form = HTR_ERR_FILE;
		} else if ((rc = jfr_import_recording(r, of.tmp, &e))) {
			outfile_abort(&of);
		} else if ((rc = outfile_commit(&of, e.msg, sizeof e.msg))) {
			e.form = HTR_ERR_FILE;
		}
	}
	if (rc && e.form == HTR_ERR_AT)
		snprintf(msg, msglen, "%s: offset %" PRIu64 ": %s", where, e.offset, e.msg);
	else if (rc)
		snprintf(msg, msglen, "%s: %s", where, e.msg);
	jfr_close(r);
	return rc;
}

/* hprof_dump.c - one heap dump: the first pass and reading objects back.
 *
 * The first pass walks every record once and keeps only small tables:
 * strings and frames as file offsets, classes, roots, and for each object
 * its id and the offset of its sub-record (16 bytes per object).  Later
 * passes go through that index in id order and decode each object where
 * it lies in the mapping, so the dump itself is never copied.
 */
#include "hprof_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htr.h"
#include "mpar.h"
#include "progress.h"

#define PROGRESS_STEP (256ull << 20)   /* bytes between progress lines */
#define PROGRESS_STEP_BOUND (16ull << 20) /* between updates of a bound record */

static int grow32(void *pp, uint32_t *cap, uint32_t n, size_t el)
{
	if (n < *cap)
		return 0;
	if (*cap >= UINT32_MAX / 2)
		return -E2BIG;
	uint32_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*(void **)pp, (size_t)nc * el);
	if (!p)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = nc;
	return 0;
}

int dump_open(struct dump *d, const char *path, const struct hprof_import_opts *o,
	      struct htr_err *err)
{
	memset(d, 0, sizeof *d);
	d->o = o;
	d->class_class = HPROF_NONE;
	for (int i = 0; i < 12; i++)
		d->prim_class[i] = HPROF_NONE;
	return hprof_open(&d->f, path, err);
}

void dump_free(struct dump *d)
{
	u64map_free(&d->strings);
	free(d->str_off);
	free(d->str_len);
	u64map_free(&d->lc_by_id);
	u64map_free(&d->lc_by_serial);
	free(d->lc_name);
	free(d->lc_class);
	u64map_free(&d->frame_idx);
	free(d->frames);
	u64map_free(&d->trace_idx);
	free(d->traces);
	u64map_free(&d->thread_idx);
	free(d->threads);
	free(d->segs);
	u64map_free(&d->class_idx);
	for (uint32_t i = 0; i < d->nclasses; i++) {
		free(d->classes[i].name);
		free(d->classes[i].vm_name);
		free(d->classes[i].plan);
		free(d->classes[i].refs);
	}
	free(d->classes);
	free(d->roots);
	free(d->objs);
	free(d->ids);
	free(d->offs);
	idindex_free(&d->index);
	hprof_close(d->f);
	memset(d, 0, sizeof *d);
}

/* ---- top-level records ---------------------------------------------------- */

static int too_short(const struct hprof_record *r, uint64_t needs, struct htr_err *err)
{
	return htr_errf(err, -EBADMSG, r->offset,
			"record %s (0x%02x) at offset %llu: length %llu is too short (needs %llu)",
			hprof_tag_name(r->tag), r->tag, (unsigned long long)r->offset,
			(unsigned long long)r->len, (unsigned long long)needs);
}

static int map_put(struct u64map *m, uint64_t key, uint32_t val, const struct hprof_record *r,
		   struct htr_err *err)
{
	int rc = u64map_put(m, key, val);
	if (rc == -ERANGE)
		return htr_errf(err, -EBADMSG, r->offset, "record %s (0x%02x) at offset %llu: invalid id 0x%llx",
				hprof_tag_name(r->tag), r->tag, (unsigned long long)r->offset,
				(unsigned long long)key);
	if (rc)
		return htr_errf(err, rc, r->offset, "out of memory");
	return 0;
}

static int oom(struct htr_err *err, int rc)
{
	return htr_errf(err, rc, 0, rc == -ENOMEM ? "out of memory" : "too many entries in one dump");
}

static int rec_utf8(struct dump *d, const struct hprof_record *r, struct htr_err *err)
{
	uint32_t ids = d->f->id_size;
	if (r->len < ids)
		return too_short(r, ids, err);
	if (r->len - ids > UINT32_MAX)
		return htr_errf(err, -EBADMSG, r->offset, "record UTF8 (0x01) at offset %llu: string too long",
				(unsigned long long)r->offset);
	int rc;
	uint32_t cap = d->capstr;
	if ((rc = grow32(&d->str_off, &d->capstr, d->nstr, sizeof *d->str_off)))
		return oom(err, rc);
	if (cap != d->capstr) {   /* str_len grows in step with str_off */
		void *p = realloc(d->str_len, (size_t)d->capstr * sizeof *d->str_len);
		if (!p)
			return oom(err, -ENOMEM);
		d->str_len = p;
	}
	d->str_off[d->nstr] = r->body + ids;
	d->str_len[d->nstr] = (uint32_t)(r->len - ids);
	if ((rc = map_put(&d->strings, hprof_id(d->f, r->body), d->nstr, r, err)))
		return rc;
	d->nstr++;
	return 0;
}

static int rec_load_class(struct dump *d, const struct hprof_record *r, struct htr_err *err)
{
	const struct hprof_file *f = d->f;
	uint64_t need = 8 + 2ull * f->id_size;
	if (r->len < need)
		return too_short(r, need, err);
	uint32_t serial = hprof_u4(f, r->body);
	uint64_t cls = hprof_id(f, r->body + 4);
	uint64_t name = hprof_id(f, r->body + 8 + f->id_size);
	int rc;
	uint32_t cap = d->caplc;
	if ((rc = grow32(&d->lc_name, &d->caplc, d->nlc, sizeof *d->lc_name)))
		return oom(err, rc);
	if (cap != d->caplc) {
		void *p = realloc(d->lc_class, (size_t)d->caplc * sizeof *d->lc_class);
		if (!p)
			return oom(err, -ENOMEM);
		d->lc_class = p;
	}
	d->lc_name[d->nlc] = name;
	d->lc_class[d->nlc] = cls;
	if ((rc = map_put(&d->lc_by_id, cls, d->nlc, r, err)) ||
	    (rc = map_put(&d->lc_by_serial, serial, d->nlc, r, err)))
		return rc;
	d->nlc++;
	return 0;
}

static int rec_frame(struct dump *d, const struct hprof_record *r, struct htr_err *err)
{
	const struct hprof_file *f = d->f;
	uint32_t ids = f->id_size;
	uint64_t need = 4ull * ids + 8;
	if (r->len < need)
		return too_short(r, need, err);
	int rc;
	if ((rc = grow32(&d->frames, &d->capframes, d->nframes, sizeof *d->frames)))
		return oom(err, rc);
	struct dframe *fr = &d->frames[d->nframes];
	fr->name = hprof_id(f, r->body + ids);
	fr->sig = hprof_id(f, r->body + 2 * ids);
	fr->src = hprof_id(f, r->body + 3 * ids);
	fr->class_serial = hprof_u4(f, r->body + 4 * ids);
	fr->line = (int32_t)hprof_u4(f, r->body + 4 * ids + 4);
	fr->method = HPROF_NONE;
	if ((rc = map_put(&d->frame_idx, hprof_id(f, r->body), d->nframes, r, err)))
		return rc;
	d->nframes++;
	return 0;
}

static int rec_trace(struct dump *d, const struct hprof_record *r, struct htr_err *err)
{
	const struct hprof_file *f = d->f;
	if (r->len < 12)
		return too_short(r, 12, err);
	uint32_t n = hprof_u4(f, r->body + 8);
	uint64_t need = 12 + (uint64_t)n * f->id_size;
	if (r->len < need)
		return too_short(r, need, err);
	int rc;
	if ((rc = grow32(&d->traces, &d->captraces, d->ntraces, sizeof *d->traces)))
		return oom(err, rc);
	struct dtrace *t = &d->traces[d->ntraces];
	t->serial = hprof_u4(f, r->body);
	t->thread_serial = hprof_u4(f, r->body + 4);
	t->nframes = n;
	t->frames = r->body + 12;
	t->site = HPROF_NONE;
	if ((rc = map_put(&d->trace_idx, t->serial, d->ntraces, r, err)))
		return rc;
	d->ntraces++;
	return 0;
}

/* Thread table entry for a serial, created on first sight. */
static struct dthread *thread_entry(struct dump *d, uint32_t serial, int *rc)
{
	uint32_t i = u64map_get(&d->thread_idx, serial);
	if (i != U64MAP_NONE)
		return &d->threads[i];
	if ((*rc = grow32(&d->threads, &d->capthreads, d->nthreads, sizeof *d->threads)) ||
	    (*rc = u64map_put(&d->thread_idx, serial, d->nthreads)))
		return NULL;
	struct dthread *t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof *t);
	t->serial = serial;
	return t;
}

static int rec_start_thread(struct dump *d, const struct hprof_record *r, struct htr_err *err)
{
	const struct hprof_file *f = d->f;
	uint64_t need = 8 + 4ull * f->id_size;
	if (r->len < need)
		return too_short(r, need, err);
	int rc = 0;
	struct dthread *t = thread_entry(d, hprof_u4(f, r->body), &rc);
	if (!t)
		return oom(err, rc);
	if (!t->object)
		t->object = hprof_id(f, r->body + 4);
	if (!t->trace_serial)
		t->trace_serial = hprof_u4(f, r->body + 4 + f->id_size);
	t->name = hprof_id(f, r->body + 8 + f->id_size);
	return 0;
}

/* ---- heap dump sub-records ------------------------------------------------ */

static int sub_root(struct dump *d, const struct hprof_sub *s, struct htr_err *err)
{
	int rc;
	if ((rc = grow32(&d->roots, &d->caproots, d->nroots, sizeof *d->roots)))
		return oom(err, rc);
	struct droot *r = &d->roots[d->nroots++];
	r->tag = s->tag;
	r->id = s->id;
	r->thread_serial = s->thread_serial;
	r->frame = s->frame;
	if (s->tag == HPROF_ROOT_THREAD_OBJECT) {
		struct dthread *t = thread_entry(d, s->thread_serial, &rc);
		if (!t)
			return oom(err, rc);
		t->object = s->id;
		if (s->trace_serial)
			t->trace_serial = s->trace_serial;
	}
	return 0;
}

static int sub_class(struct dump *d, const struct hprof_sub *s, struct htr_err *err)
{
	if (u64map_get(&d->class_idx, s->id) != U64MAP_NONE) {
		d->duplicate_classes++;  /* keep the first dump of a class */
		return 0;
	}
	int rc;
	if ((rc = grow32(&d->classes, &d->capclasses, d->nclasses, sizeof *d->classes)))
		return oom(err, rc);
	rc = u64map_put(&d->class_idx, s->id, d->nclasses);
	if (rc == -ERANGE)
		return htr_errf(err, -EBADMSG, s->offset, "CLASS_DUMP at offset %llu: invalid class id",
				(unsigned long long)s->offset);
	if (rc)
		return oom(err, rc);
	struct dclass *c = &d->classes[d->nclasses++];
	memset(c, 0, sizeof *c);
	c->id = s->id;
	c->offset = s->offset;
	c->cd = s->cls;
	c->super = HPROF_NONE;
	c->type_id = HPROF_NONE;
	return 0;
}

/* Where a progress record is bound (model/progress.h: a command's terminal
 * reporter), the scan reports there; else (a mount's foreground) it
 * prints a line. */
static void progress_line(FILE *p, const char *label, uint64_t done, uint64_t total)
{
	struct progress *pr = progress_here();
	if (pr) {
		progress_set(pr, done);
		return;
	}
	if (!p || !total)
		return;
	fprintf(p, "heapfs import: %s: scanning %3u%%%s", label, (unsigned)(done * 100 / total),
		isatty(fileno(p)) ? "\r" : "\n");
	fflush(p);
}

static int push_object(struct dump *d, uint64_t id, uint64_t offset, struct htr_err *err)
{
	if (d->nobjs == d->capobjs) {
		size_t nc = d->capobjs ? d->capobjs * 2 : 4096;
		struct keyidx *p = realloc(d->objs, nc * sizeof *p);
		if (!p)
			return oom(err, -ENOMEM);
		d->objs = p;
		d->capobjs = nc;
	}
	d->objs[d->nobjs].key = id;
	d->objs[d->nobjs].idx = offset;
	d->nobjs++;
	return 0;
}

/* Room for every object the file can hold and its class objects
 * (hprof_max_objects), so that push_object never moves the array; where
 * the system refuses that much address space, push_object grows it. */
static void reserve_objects(struct dump *d)
{
	uint64_t n = hprof_max_objects(d->f, d->f->size);
	if (n > SIZE_MAX / sizeof *d->objs)
		return;
	if ((d->objs = malloc((size_t)n * sizeof *d->objs)))
		d->capobjs = (size_t)n;
}

/* A heap record scanned, its complete sub-records ending at end. */
static int push_segment(struct dump *d, const struct hprof_record *r, uint64_t end,
			struct htr_err *err)
{
	int rc = grow32(&d->segs, &d->capsegs, d->nsegs, sizeof *d->segs);
	if (rc)
		return oom(err, rc);
	d->segs[d->nsegs].rec = *r;
	d->segs[d->nsegs].end = end;
	d->nsegs++;
	return 0;
}

/* Walks the sub-records of a heap dump record.  A sub-record cut off by
 * the end of a truncated file ends the walk (the dump is used up to
 * there); one that crosses the end of a complete record is damage. */
static int scan_segment(struct dump *d, const struct hprof_record *r, FILE *progress,
			const char *label, uint64_t *next_progress, struct htr_err *err)
{
	uint64_t pos = r->body, end = r->body + r->len;
	struct hprof_sub s;
	int rc;
	for (;;) {
		uint64_t id, next;
		uint64_t stop = *next_progress < d->released + HPROF_RELEASE_STEP ? *next_progress
										     : d->released + HPROF_RELEASE_STEP;
		while (pos < end && pos < stop && dump_object_extent(d->f, pos, end, &id, &next)) {
			if ((rc = push_object(d, id, pos, err)))
				return rc;
			pos = next;
		}
		if ((rc = hprof_next_sub(d->f, &pos, end, r, &s, err)) != 1)
			break;
		switch (s.tag) {
		case HPROF_CLASS_DUMP:
			rc = sub_class(d, &s, err);
			break;
		case HPROF_INSTANCE_DUMP:
		case HPROF_OBJ_ARRAY_DUMP:
		case HPROF_PRIM_ARRAY_DUMP:
			rc = push_object(d, s.id, s.offset, err);
			break;
		default:
			rc = sub_root(d, &s, err);
			break;
		}
		if (rc)
			return rc;
		if (pos >= *next_progress) {
			progress_line(progress, label, pos, d->f->size);
			*next_progress = pos + (progress_here() ? PROGRESS_STEP_BOUND : PROGRESS_STEP);
		}
		/* what is scanned is not read again before the pass over the
		 * objects: out of the resident set until then */
		hprof_release_behind(d->f, &d->released, pos);
	}
	if (rc == -ENODATA && r->truncated) {
		d->truncated = 1;
		d->truncated_at = pos;
		snprintf(d->truncated_msg, sizeof d->truncated_msg,
			 "the file ends inside record %s (0x%02x) at offset %llu (it declares %llu bytes, "
			 "%llu are present); imported up to offset %llu, the last complete sub-record",
			 hprof_tag_name(r->tag), r->tag, (unsigned long long)r->offset,
			 (unsigned long long)r->declared_len, (unsigned long long)r->len,
			 (unsigned long long)pos);
		rc = 0;
	}
	if (rc == -ENODATA)
		rc = -EBADMSG;   /* crosses the end of a complete record: damage */
	if (rc)
		return rc;
	return push_segment(d, r, pos, err);
}

/* A heap record whose objects dump_collect_objects has collected (and
 * reported as progress): only its other sub-records (class dumps, roots)
 * are decoded here. */
static int scan_others(struct dump *d, const struct hprof_record *r, struct scan_pre *pre,
		       struct htr_err *err)
{
	uint64_t end = r->body + r->len;
	struct hprof_sub s;
	int rc;
	while (pre->next_other < pre->nothers && pre->others[pre->next_other] < end) {
		uint64_t pos = pre->others[pre->next_other++];
		/* dump_collect_objects decoded it already */
		if ((rc = hprof_next_sub(d->f, &pos, end, r, &s, err)) != 1)
			return rc ? rc : -EBADMSG;
		rc = s.tag == HPROF_CLASS_DUMP ? sub_class(d, &s, err) : sub_root(d, &s, err);
		if (rc)
			return rc;
	}
	return push_segment(d, r, end, err);
}

static void note_truncated_record(struct dump *d, const struct hprof_record *r)
{
	d->truncated = 1;
	d->truncated_at = r->offset;
	snprintf(d->truncated_msg, sizeof d->truncated_msg,
		 "the file ends inside record %s (0x%02x) at offset %llu; imported the records before it",
		 hprof_tag_name(r->tag), r->tag, (unsigned long long)r->offset);
}

int dump_scan(struct dump *d, FILE *progress, const char *label, struct htr_err *err)
{
	uint64_t pos = d->f->first_record;
	uint64_t next_progress = progress_here() ? PROGRESS_STEP_BOUND : PROGRESS_STEP;
	progress_phase(progress_here(), d->f->size, "scanning %s (bytes)", label);
	struct hprof_record r;
	struct scan_pre pre;
	int seen_heap = 0, seen_segment = 0, seen_end = 0;
	int rc = dump_collect_objects(d, d->o ? d->o->threads : 0, &pre), collected = rc == 1;
	if (rc < 0)
		return oom(err, rc);
	rc = 0;
	if (collected) {
		free(d->objs);
		d->objs = pre.objs;
		d->nobjs = pre.nobjs;
		d->capobjs = pre.capobjs;
		pre.objs = NULL;
	} else if (!d->objs) {
		reserve_objects(d);
	}
	while (!rc && hprof_next_record(d->f, &pos, &r) == 1) {
		int heap = r.tag == HPROF_HEAP_DUMP || r.tag == HPROF_HEAP_DUMP_SEGMENT;
		if (r.truncated && !heap) {
			note_truncated_record(d, &r);
			break;
		}
		switch (r.tag) {
		case HPROF_UTF8: rc = rec_utf8(d, &r, err); break;
		case HPROF_LOAD_CLASS: rc = rec_load_class(d, &r, err); break;
		case HPROF_FRAME: rc = rec_frame(d, &r, err); break;
		case HPROF_TRACE: rc = rec_trace(d, &r, err); break;
		case HPROF_START_THREAD: rc = rec_start_thread(d, &r, err); break;
		case HPROF_HEAP_DUMP:
		case HPROF_HEAP_DUMP_SEGMENT:
			seen_heap = 1;
			seen_segment |= r.tag == HPROF_HEAP_DUMP_SEGMENT;
			seen_end = 0;
			rc = collected ? scan_others(d, &r, &pre, err)
				       : scan_segment(d, &r, progress, label, &next_progress, err);
			break;
		case HPROF_HEAP_DUMP_END: seen_end = 1; break;
		default: d->skipped_records++; break;  /* lengths are known: skip what we do not use */
		}
		if (!rc && r.truncated && !d->truncated)
			note_truncated_record(d, &r);
	}
	scan_pre_free(&pre);
	if (rc)
		return rc;
	/* A file cut between two records looks complete record by record;
	 * what is missing then is the heap dump itself, or the HEAP_DUMP_END
	 * that HotSpot writes after the last segment. */
	if (!d->truncated && (!seen_heap || (seen_segment && !seen_end))) {
		d->truncated = 1;
		d->truncated_at = d->f->size;
		snprintf(d->truncated_msg, sizeof d->truncated_msg,
			 !seen_heap ? "the file ends at offset %llu before any heap dump record"
				      "; no object was imported"
				    : "the file ends at offset %llu after a heap dump segment, without "
				      "the HEAP_DUMP_END record that closes the dump; imported the segments "
				      "before it",
			 (unsigned long long)d->f->size);
	}
	progress_line(progress, label, d->f->size, d->f->size);
	return 0;
}

/* ---- strings and names ------------------------------------------------------ */

const char *dump_utf8(const struct dump *d, uint64_t id, uint32_t *len)
{
	uint32_t i = u64map_get(&d->strings, id);
	if (i == U64MAP_NONE)
		return NULL;
	*len = d->str_len[i];
	return (const char *)d->f->map + d->str_off[i];
}

char *dump_utf8_copy(const struct dump *d, uint64_t id, char *out, size_t max)
{
	uint32_t len = 0;
	const char *s = dump_utf8(d, id, &len);
	if (!s)
		len = 0;
	if (len > max - 1)
		len = (uint32_t)(max - 1);
	for (uint32_t i = 0; i < len; i++)
		out[i] = s[i] ? s[i] : '?';
	out[len] = '\0';
	return out;
}

static const char *prim_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'C': return "char";
	case 'F': return "float";
	case 'D': return "double";
	case 'B': return "byte";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	case 'V': return "void";
	default: return NULL;
	}
}

char *hprof_java_name(const char *vm, size_t len)
{
	size_t dims = 0;
	while (dims < len && vm[dims] == '[')
		dims++;
	const char *base = vm + dims;
	size_t blen = len - dims;
	const char *prim = NULL;
	if (dims && blen >= 2 && base[0] == 'L' && base[blen - 1] == ';') {
		base++;
		blen -= 2;
	} else if (dims && blen == 1) {
		prim = prim_name(base[0]);
	}
	if (prim) {
		base = prim;
		blen = strlen(prim);
	}
	char *out = malloc(blen + 2 * dims + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < blen; i++)
		out[i] = base[i] == '/' ? '.' : base[i] ? base[i] : '?';
	for (size_t i = 0; i < dims; i++)
		memcpy(out + blen + 2 * i, "[]", 2);
	out[blen + 2 * dims] = '\0';
	return out;
}

/* Element basic type of a one-dimensional primitive array class name, in
 * VM form ("[I") or Java form ("int[]"), or 0. */
static uint32_t prim_array_type(const char *vm, const char *java)
{
	static const struct { const char *vm, *java; uint32_t t; } tab[] = {
		{ "[Z", "boolean[]", HPROF_T_BOOLEAN }, { "[C", "char[]", HPROF_T_CHAR },
		{ "[F", "float[]", HPROF_T_FLOAT }, { "[D", "double[]", HPROF_T_DOUBLE },
		{ "[B", "byte[]", HPROF_T_BYTE }, { "[S", "short[]", HPROF_T_SHORT },
		{ "[I", "int[]", HPROF_T_INT }, { "[J", "long[]", HPROF_T_LONG },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(vm, tab[i].vm) == 0 || strcmp(java, tab[i].java) == 0)
			return tab[i].t;
	return 0;
}

static int class_names(struct dump *d, struct dclass *c)
{
	uint32_t lc = u64map_get(&d->lc_by_id, c->id), len = 0;
	const char *s = lc == U64MAP_NONE ? NULL : dump_utf8(d, d->lc_name[lc], &len);
	char fallback[48];
	if (!s) {
		len = (uint32_t)snprintf(fallback, sizeof fallback, "unknown.Class0x%" PRIx64, c->id);
		s = fallback;
	}
	if (len > HTR_MAX_STR / 2)
		len = HTR_MAX_STR / 2;   /* leaves room for "[]" pairs in the Java name */
	c->vm_name = malloc(len + 1);
	if (!c->vm_name)
		return -ENOMEM;
	for (uint32_t i = 0; i < len; i++)
		c->vm_name[i] = s[i] ? s[i] : '?';
	c->vm_name[len] = '\0';
	c->name = hprof_java_name(c->vm_name, len);
	if (!c->name)
		return -ENOMEM;
	c->elem_type = prim_array_type(c->vm_name, c->name);
	size_t nl = strlen(c->name);
	if (c->elem_type)
		c->kind = HTR_TYPE_PRIM_ARRAY;
	else if (c->vm_name[0] == '[' || (nl > 2 && strcmp(c->name + nl - 2, "[]") == 0))
		c->kind = HTR_TYPE_OBJ_ARRAY;
	else
		c->kind = HTR_TYPE_INSTANCE;
	return 0;
}

/* The superclass chain [c, super, super's super, ...]; chain must hold
 * nclasses + 1 entries.  Returns its length, or 0 if it loops. */
static uint32_t class_chain(const struct dump *d, uint32_t c, uint32_t *chain)
{
	uint32_t n = 0;
	for (uint32_t x = c; x != HPROF_NONE; x = d->classes[x].super) {
		if (n == d->nclasses)
			return 0;
		chain[n++] = x;
	}
	return n;
}

static int class_plan(struct dump *d, uint32_t c, uint32_t *chain, uint32_t *base,
		      struct htr_err *err)
{
	struct dclass *k = &d->classes[c];
	uint32_t n = class_chain(d, c, chain);
	if (!n)
		return htr_errf(err, -EBADMSG, k->offset, "CLASS_DUMP at offset %llu: the superclass chain of %s loops",
				(unsigned long long)k->offset, k->name);
	uint64_t total = 0;
	for (uint32_t i = n; i-- > 0;) {   /* from the root class down */
		base[i] = (uint32_t)total;
		total += d->classes[chain[i]].cd.nfields;
	}
	if (total + k->cd.nstatics > HTR_MAX_FIELDS)
		return htr_errf(err, -EBADMSG, k->offset,
				"CLASS_DUMP at offset %llu: %s has %llu fields with its superclasses (at most %u)",
				(unsigned long long)k->offset, k->name,
				(unsigned long long)(total + k->cd.nstatics), HTR_MAX_FIELDS);
	k->ninst = (uint32_t)total;
	k->ninherited = (uint32_t)total - k->cd.nfields;
	k->plan = malloc((total ? total : 1) * sizeof *k->plan);
	if (!k->plan)
		return oom(err, -ENOMEM);
	uint32_t p = 0, ids = d->f->id_size;
	k->value_bytes = 0;
	k->nrefs = 0;
	for (uint32_t i = 0; i < n; i++) {   /* dump order: own fields first */
		const struct dclass *x = &d->classes[chain[i]];
		for (uint32_t j = 0; j < x->cd.nfields; j++) {
			uint32_t t = hprof_u1(d->f, x->cd.fields + (uint64_t)j * (ids + 1) + ids);
			k->plan[p++] = t << 28 | (base[i] + j);
			k->nrefs += t == HPROF_T_OBJECT;
		}
	}
	/* the reference fields alone, with their offsets: what the pass over
	 * the objects reads of an instance */
	k->refs = malloc((k->nrefs ? k->nrefs : 1) * 2 * sizeof *k->refs);
	if (!k->refs)
		return oom(err, -ENOMEM);
	uint32_t r = 0;
	for (uint32_t q = 0; q < p; q++) {
		uint32_t t = PLAN_TYPE(k->plan[q]);
		if (t == HPROF_T_OBJECT) {
			k->refs[2 * r] = (uint32_t)k->value_bytes;
			k->refs[2 * r + 1] = PLAN_INDEX(k->plan[q]);
			r++;
		}
		k->value_bytes += hprof_type_size(d->f, t);
	}
	return 0;
}

int dump_resolve_classes(struct dump *d, struct htr_err *err)
{
	int rc = 0;
	for (uint32_t i = 0; i < d->nclasses; i++) {
		struct dclass *c = &d->classes[i];
		if ((rc = class_names(d, c)))
			return oom(err, rc);
		uint32_t s = c->cd.super_id ? u64map_get(&d->class_idx, c->cd.super_id) : U64MAP_NONE;
		c->super = s == U64MAP_NONE ? HPROF_NONE : s;
		if (c->kind == HTR_TYPE_PRIM_ARRAY)
			d->prim_class[c->elem_type] = i;  /* the last one wins, as in VisualVM */
	}
	uint32_t *chain = malloc(((size_t)d->nclasses + 1) * 2 * sizeof *chain);
	if (!chain)
		return oom(err, -ENOMEM);
	for (uint32_t i = 0; i < d->nclasses && !rc; i++)
		rc = class_plan(d, i, chain, chain + d->nclasses + 1, err);
	free(chain);
	return rc;
}

/* ---- the object index --------------------------------------------------------- */

/* The sorted pairs become two arrays (ids, offs) in place of one: the ids
 * are packed into the front of the pair array (id i moves from byte 16 i
 * to 8 i, which is pair i / 2's, read already: one pass does both), which
 * then shrinks. */
static int split_objects(struct dump *d)
{
	size_t n = d->nobjs;
	d->offs = malloc((n ? n : 1) * sizeof *d->offs);
	if (!d->offs)
		return -ENOMEM;
	/* filled in id order below: its pages first, on the threads */
	mpar_memset(mpar_resolve(d->o ? d->o->threads : 0), d->offs, 0, n * sizeof *d->offs);
	uint64_t *ids = (uint64_t *)d->objs;
	for (size_t i = 0; i < n; i++) {
		struct keyidx p = d->objs[i];
		d->offs[i] = p.idx;
		ids[i] = p.key;
	}
	uint64_t *shrunk = realloc(ids, (n ? n : 1) * sizeof *ids);
	d->ids = shrunk ? shrunk : ids;
	d->objs = NULL;
	d->capobjs = 0;
	return 0;
}

/* Every class's mirror joins the object index, at its CLASS_DUMP: the JVM
 * counts class objects as instances of java.lang.Class (jcmd
 * GC.class_histogram), and HotSpot dumps them only as CLASS_DUMPs (the
 * mirrors of the primitive types alone come as INSTANCE_DUMPs).  Without
 * java.lang.Class in the dump they would have no type: left out. */
static int push_class_objects(struct dump *d, struct htr_err *err)
{
	d->class_class = dump_class_by_name(d, "java.lang.Class");
	if (d->class_class == HPROF_NONE)
		return 0;
	for (uint32_t c = 0; c < d->nclasses; c++) {
		int rc = push_object(d, d->classes[c].id, d->classes[c].offset, err);
		if (rc)
			return rc;
	}
	d->class_objects = d->nclasses;
	return 0;
}

/* Duplicate ids after the sort: the same object twice is damage; a class
 * id that is an object id too (damage the importer has always tolerated)
 * keeps the object and drops the class object. */
static int drop_duplicates(struct dump *d, struct htr_err *err)
{
	size_t k = 0;
	for (size_t i = 0; i < d->nobjs; i++) {
		if (k && d->objs[k - 1].key == d->objs[i].key) {
			int prev_class = d->f->map[d->objs[k - 1].idx] == HPROF_CLASS_DUMP;
			int this_class = d->f->map[d->objs[i].idx] == HPROF_CLASS_DUMP;
			if (prev_class == this_class)
				return htr_errf(err, -EBADMSG, d->objs[i].idx,
						"object id 0x%llx is dumped twice (sub-records at offsets %llu and %llu)",
						(unsigned long long)d->objs[i].key,
						(unsigned long long)d->objs[k - 1].idx,
						(unsigned long long)d->objs[i].idx);
			d->class_ids_are_objects = 1;
			d->class_objects--;
			if (prev_class)
				d->objs[k - 1] = d->objs[i];
			continue;
		}
		if (k != i) /* nothing moves before the first duplicate */
			d->objs[k] = d->objs[i];
		k++;
	}
	d->nobjs = k;
	return 0;
}

int dump_sort_objects(struct dump *d, struct htr_err *err)
{
	/* HotSpot walks its heap by address, so the scanned objects come with
	 * ascending ids and only the class objects pushed after them are out
	 * of order: keyidx_sort_after merges those few in (24 M objects: a
	 * pass, against 1.0 s and a second 384 MB array for a whole sort) */
	size_t nscanned = d->nobjs;
	int rc = push_class_objects(d, err);
	if (rc)
		return rc;
	if ((rc = keyidx_sort_after(d->objs, nscanned, d->nobjs, d->o ? d->o->threads : 0)))
		return oom(err, rc);
	if ((rc = drop_duplicates(d, err)))
		return rc;
	rc = split_objects(d);
	if (!rc)
		rc = idindex_build(&d->index, d->ids, d->nobjs, d->o ? d->o->threads : 0);
	if (rc)
		return oom(err, rc);
	/* without class objects, a class id in the index is an instance's */
	if (d->class_class == HPROF_NONE)
		for (uint32_t c = 0; c < d->nclasses; c++)
			d->class_ids_are_objects |= dump_find_object(d, d->classes[c].id) != SIZE_MAX;
	return 0;
}

uint32_t dump_class_by_name(const struct dump *d, const char *name)
{
	for (uint32_t i = 0; i < d->nclasses; i++)
		if (strcmp(d->classes[i].name, name) == 0)
			return i;
	return HPROF_NONE;
}

static int utf8_equals(const struct dump *d, uint64_t id, const char *s)
{
	uint32_t len;
	const char *u = dump_utf8(d, id, &len);
	return u && len == strlen(s) && memcmp(u, s, len) == 0;
}

int dump_static_field(const struct dump *d, uint32_t c, const char *name, uint32_t *type,
		      uint64_t *value)
{
	const struct dclass *k = &d->classes[c];
	uint32_t ids = d->f->id_size;
	uint64_t off = k->cd.statics;
	for (uint32_t j = 0; j < k->cd.nstatics; j++) {
		uint32_t t = hprof_u1(d->f, off + ids);
		if (utf8_equals(d, hprof_id(d->f, off), name)) {
			*type = t;
			*value = hprof_value(d->f, off + ids + 1, t);
			return 1;
		}
		off += ids + 1 + hprof_type_size(d->f, t);
	}
	return 0;
}

/* Name id of flattened instance field `flat` of class c. */
static uint64_t field_name_id(const struct dump *d, uint32_t c, uint32_t flat)
{
	uint32_t ids = d->f->id_size;
	for (uint32_t x = c, steps = 0; x != HPROF_NONE && steps <= d->nclasses;
	     x = d->classes[x].super, steps++) {
		const struct dclass *cx = &d->classes[x];
		if (flat >= cx->ninherited && flat < cx->ninst)
			return hprof_id(d->f, cx->cd.fields + (uint64_t)(flat - cx->ninherited) * (ids + 1));
	}
	return 0;
}

uint32_t dump_field_index(const struct dump *d, uint32_t c, const char *name)
{
	for (uint32_t f = 0; f < d->classes[c].ninst; f++)
		if (utf8_equals(d, field_name_id(d, c, f), name))
			return f;
	return HPROF_NONE;
}

int dump_instance_field(const struct dump *d, uint64_t obj, const char *name, uint32_t *type,
			uint64_t *value)
{
	size_t i = dump_find_object(d, obj);
	if (i == SIZE_MAX)
		return 0;
	struct dobj s;
	dump_object_at(d, d->offs[i], &s);
	uint32_t c = dump_object_class(d, &s);
	if (s.tag != HPROF_INSTANCE_DUMP || c == HPROF_NONE || s.length < d->classes[c].value_bytes)
		return 0;
	const struct dclass *k = &d->classes[c];
	/* the superclass-most field of that name: lowest flattened index */
	uint32_t want = HPROF_NONE;
	for (uint32_t f = 0; f < k->ninst && want == HPROF_NONE; f++)
		if (utf8_equals(d, field_name_id(d, c, f), name))
			want = f;
	if (want == HPROF_NONE)
		return 0;
	uint64_t off = s.data;
	for (uint32_t p = 0; p < k->ninst; p++) {
		uint32_t t = PLAN_TYPE(k->plan[p]);
		if (PLAN_INDEX(k->plan[p]) == want) {
			*type = t;
			*value = hprof_value(d->f, off, t);
			return 1;
		}
		off += hprof_type_size(d->f, t);
	}
	return 0;
}

/* Appends code point cp as UTF-8 if it fits in out[*n .. max-1). */
static void put_utf8(char *out, size_t max, size_t *n, uint32_t cp)
{
	char b[4];
	size_t k;
	if (cp == 0 || (cp >= 0xd800 && cp < 0xe000))
		cp = 0xfffd;   /* NUL and lone surrogates */
	if (cp < 0x80) {
		b[0] = (char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (*n + k < max) {
		memcpy(out + *n, b, k);
		*n += k;
	}
}

/* UTF-16 units [from, from+count) of a char[] (big-endian in the dump) or
 * of a UTF16 byte[] (little-endian pairs, as VisualVM reads them). */
static void utf16_to_utf8(const struct dump *d, uint64_t data, int in_bytes, uint64_t from,
			  uint64_t count, char *out, size_t max, size_t *n)
{
	for (uint64_t i = from; i < from + count; i++) {
		uint32_t u = in_bytes ? hprof_u1(d->f, data + 2 * i) | hprof_u1(d->f, data + 2 * i + 1) << 8
				      : hprof_u2(d->f, data + 2 * i);
		if (u >= 0xd800 && u < 0xdc00 && i + 1 < from + count) {
			uint32_t v = in_bytes ? hprof_u1(d->f, data + 2 * i + 2) | hprof_u1(d->f, data + 2 * i + 3) << 8
					      : hprof_u2(d->f, data + 2 * i + 2);
			if (v >= 0xdc00 && v < 0xe000) {
				put_utf8(out, max, n, 0x10000 + ((u - 0xd800) << 10) + (v - 0xdc00));
				i++;
				continue;
			}
		}
		put_utf8(out, max, n, u);
	}
}

int dump_string_text(const struct dump *d, uint64_t obj, char *out, size_t max)
{
	uint32_t t;
	uint64_t value, coder = 0, offset = 0, count = UINT64_MAX;
	out[0] = '\0';
	size_t i = dump_find_object(d, obj);
	if (i == SIZE_MAX || max == 0)
		return 0;
	struct dobj s;
	dump_object_at(d, d->offs[i], &s);
	uint32_t c = dump_object_class(d, &s);
	if (c == HPROF_NONE || strcmp(d->classes[c].name, "java.lang.String") != 0)
		return 0;
	if (!dump_instance_field(d, obj, "value", &t, &value) || t != HPROF_T_OBJECT)
		return 0;
	int has_coder = dump_instance_field(d, obj, "coder", &t, &coder);
	if (dump_instance_field(d, obj, "offset", &t, &offset) && t != HPROF_T_INT)
		offset = 0;
	if (dump_instance_field(d, obj, "count", &t, &count) && t != HPROF_T_INT)
		count = UINT64_MAX;
	size_t ai = dump_find_object(d, value);
	if (ai == SIZE_MAX)
		return 0;
	struct dobj a;
	dump_object_at(d, d->offs[ai], &a);
	if (a.tag != HPROF_PRIM_ARRAY_DUMP)
		return 0;
	uint64_t len = a.length;
	if (offset > len)
		offset = len;
	if (count > len - offset)
		count = len - offset;
	size_t n = 0;
	if (a.elem_type == HPROF_T_CHAR)
		utf16_to_utf8(d, a.data, 0, offset, count, out, max, &n);
	else if (a.elem_type == HPROF_T_BYTE && has_coder && coder == 1)
		utf16_to_utf8(d, a.data, 1, offset / 2, count / 2, out, max, &n);
	else if (a.elem_type == HPROF_T_BYTE)
		for (uint64_t k = offset; k < offset + count; k++)
			put_utf8(out, max, &n, hprof_u1(d->f, a.data + k));
	else
		return 0;
	out[n] = '\0';
	return 1;
}

int dump_static_refs(const struct dump *d, int (*fn)(void *ctx, uint32_t c, uint32_t j, uint64_t id), void *ctx)
{
	uint32_t ids = d->f->id_size;
	int rc = 0;
	for (uint32_t c = 0; c < d->nclasses && !rc; c++) {
		const struct dclass *k = &d->classes[c];
		uint64_t at = k->cd.statics;
		for (uint32_t j = 0; j < k->cd.nstatics && !rc; j++) {
			uint32_t t = hprof_u1(d->f, at + ids);
			uint64_t v = t == HPROF_T_OBJECT ? hprof_value(d->f, at + ids + 1, t) : 0;
			at += ids + 1 + hprof_type_size(d->f, t);
			if (v)
				rc = fn(ctx, c, j, v);
		}
	}
	return rc;
}

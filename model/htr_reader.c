/* htr_reader.c - see htr_reader.h.
 *
 * The iterator decompresses a frame as a stream into a window buffer and
 * decodes events from it.  Every event a writer produces is at most
 * MAX_EVENT bytes, so the window is refilled whenever fewer than MAX_EVENT
 * undecoded bytes remain; an event that does not fit in MAX_EVENT is
 * damage.  The zstd content checksum catches corrupted payloads.
 */
#include "htr_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "buf.h"
#include "files.h"

#define MAX_EVENT (1u << 20)
#define WINDOW (4u * MAX_EVENT)
#define READ_CHUNK (1u << 20)

int htr_errf(struct htr_err *err, int code, uint64_t offset, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->offset = offset;
		err->form = HTR_ERR_AT;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

int htr_errf_as(struct htr_err *err, enum htr_err_form form, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->offset = 0;
		err->form = form;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *htr_root_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[HTR_ROOT_CLASS_LOADER] = "class-loader",
		[HTR_ROOT_STATIC] = "static",
		[HTR_ROOT_THREAD] = "thread",
		[HTR_ROOT_LOCAL] = "local",
		[HTR_ROOT_CODE_BLOB] = "code-blob",
		[HTR_ROOT_JNI_GLOBAL] = "jni-global",
		[HTR_ROOT_JNI_LOCAL] = "jni-local",
		[HTR_ROOT_JVMTI] = "jvmti",
		[HTR_ROOT_MONITOR] = "monitor",
		[HTR_ROOT_MANAGEMENT] = "management",
		[HTR_ROOT_OTHER] = "other",
		[HTR_ROOT_SYSTEM_CLASS] = "class",
		[HTR_ROOT_NATIVE_STACK] = "native-stack",
		[HTR_ROOT_THREAD_BLOCK] = "thread-block",
	};
	if (kind < 1 || kind > HTR_ROOT_KIND_MAX)
		return NULL;
	return names[kind];
}

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *b = p;
	while (n) {
		ssize_t k = pread(fd, b, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ENODATA;
		b += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

int htr_file_open(struct htr_file **out, const char *path, struct htr_err *err)
{
	int rc;
	struct htr_file *f = calloc(1, sizeof(*f));
	if (!f)
		return htr_errf(err, -ENOMEM, 0, "out of memory");
	struct stat st;
	const char *what;
	f->fd = file_open_regular(path, &st, &what);
	if (f->fd < 0) {
		rc = f->fd == -EISDIR || f->fd == -EINVAL
			     ? htr_errf_as(err, HTR_ERR_FILE, f->fd, "%s, not a regular file", what)
			     : htr_errf_as(err, HTR_ERR_FILE, f->fd, "cannot open: %s", what);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	f->path = strdup(path);
	if (!f->path) {
		rc = htr_errf(err, -ENOMEM, 0, "out of memory");
		goto fail;
	}
	uint8_t h[HTR_HEADER_SIZE];
	if (f->size < HTR_HEADER_SIZE) {
		rc = htr_errf(err, -EPROTO, 0, "file too short for a heapfs trace header (%llu bytes, need %d)",
			      (unsigned long long)f->size, HTR_HEADER_SIZE);
		goto fail;
	}
	rc = pread_all(f->fd, h, sizeof(h), 0);
	if (rc) {
		htr_errf(err, rc, 0, "cannot read header: %s", strerror(-rc));
		goto fail;
	}
	if (memcmp(h, HTR_MAGIC, 8) != 0) {
		rc = htr_errf(err, -EPROTO, 0, "not a heapfs trace (bad magic)");
		goto fail;
	}
	f->major = (uint16_t)(h[8] | h[9] << 8);
	f->minor = (uint16_t)(h[10] | h[11] << 8);
	if (get_le32(h + 28) != crc32_ieee(h, 28)) {
		rc = htr_errf(err, -EBADMSG, 0, "header checksum mismatch");
		goto fail;
	}
	if (f->major != HTR_VERSION_MAJOR) {
		rc = htr_errf(err, -EPROTO, 8, "trace format version %u.%u is not supported (this heapfs reads %d.x)",
			      f->major, f->minor, HTR_VERSION_MAJOR);
		goto fail;
	}
	if (get_le32(h + 12) != HTR_HEADER_SIZE) {
		rc = htr_errf(err, -EBADMSG, 12, "header size %u, expected %d", get_le32(h + 12), HTR_HEADER_SIZE);
		goto fail;
	}
	*out = f;
	return 0;
fail:
	htr_file_close(f);
	return rc;
}

void htr_file_close(struct htr_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

int htr_frame_header(const struct htr_file *f, uint64_t offset, struct htr_frame_hdr *h,
		     struct htr_err *err)
{
	uint8_t b[HTR_FRAME_HEADER_SIZE];
	if (offset > f->size || f->size - offset < HTR_FRAME_HEADER_SIZE)
		return htr_errf(err, -ENODATA, offset, "frame header cut off by the end of the file");
	int rc = pread_all(f->fd, b, sizeof(b), offset);
	if (rc)
		return htr_errf(err, rc == -ENODATA ? rc : -EIO, offset, "cannot read frame header: %s",
				strerror(-rc));
	if (all_zero(b, sizeof(b)))
		return htr_errf(err, -ENODATA, offset,
				"frame never completed (the writer stopped while writing it)");
	if (memcmp(b, HTR_FRAME_MAGIC, 4) != 0)
		return htr_errf(err, -EBADMSG, offset, "bad frame magic");
	if (get_le32(b + 28) != crc32_ieee(b, 28))
		return htr_errf(err, -EBADMSG, offset, "frame header checksum mismatch");
	h->offset = offset;
	h->kind = get_le32(b + 4);
	h->comp_len = get_le64(b + 8);
	h->raw_len = get_le64(b + 16);
	h->nevents = get_le32(b + 24);
	if (h->kind != HTR_FRAME_EVENTS && h->kind != HTR_FRAME_FOOTER && h->kind != HTR_FRAME_GRAPH)
		return htr_errf(err, -EBADMSG, offset, "unknown frame kind %u", h->kind);
	if (h->comp_len == 0)
		return htr_errf(err, -EBADMSG, offset, "empty frame payload");
	if (h->comp_len > f->size - offset - HTR_FRAME_HEADER_SIZE)
		return htr_errf(err, -ENODATA, offset,
				"frame payload of %llu bytes cut off by the end of the file",
				(unsigned long long)h->comp_len);
	return 0;
}

int htr_trailer(const struct htr_file *f, uint64_t *footer_offset)
{
	uint8_t t[HTR_TRAILER_SIZE];
	if (f->size < HTR_HEADER_SIZE + HTR_TRAILER_SIZE)
		return -ENOENT;
	uint64_t at = f->size - HTR_TRAILER_SIZE;
	if (pread_all(f->fd, t, sizeof(t), at) != 0)
		return -ENOENT;
	if (memcmp(t + 16, HTR_TRAILER_MAGIC, 8) != 0)
		return -ENOENT;
	uint64_t off = get_le64(t), len = get_le64(t + 8);
	if (off < HTR_HEADER_SIZE || off > at || len != at - off)
		return -ENOENT;
	*footer_offset = off;
	return 0;
}

struct htr_iter {
	const struct htr_file *f;
	struct htr_frame_hdr h;
	ZSTD_DCtx *dctx;
	uint8_t *in; size_t in_cap, in_len, in_pos;  /* compressed bytes read so far */
	uint64_t comp_read;                  /* payload bytes read from file */
	uint8_t *win; size_t win_cap, win_len, win_pos;
	uint64_t raw_consumed;               /* raw bytes before win[0] */
	int stream_done;
	uint32_t events;
	/* decoded arrays; the chunk arrays are allocated at their first event
	 * and the buffers sized to the frame, so that opening an iterator on a
	 * small frame does not cost megabytes (ASan maps and poisons each) */
	struct htr_field *fields; uint32_t fields_cap;
	struct htr_site_frame frames[HTR_MAX_FRAMES_PER_SITE];
	struct htr_ref *refs;
	struct htr_root *roots;
	uint64_t *ids;
	uint32_t *count_sites; /* ALLOC_COUNTS */
	int64_t *counts;
	struct htr_count_caller *callers; /* COUNT_CALLERS */
	struct htr_old_ref *old_path; /* OLD_SAMPLE */
	uint64_t prev_alloc_id, prev_time, prev_graph_id;
};

int htr_iter_open(struct htr_iter **out, const struct htr_file *f, const struct htr_frame_hdr *h,
		  struct htr_err *err)
{
	struct htr_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return htr_errf(err, -ENOMEM, h->offset, "out of memory");
	it->f = f;
	it->h = *h;
	it->dctx = ZSTD_createDCtx();
	it->in_cap = h->comp_len < READ_CHUNK ? (size_t)h->comp_len + 1 : READ_CHUNK;
	it->win_cap = h->raw_len < WINDOW - 1 ? (size_t)h->raw_len + 1 : WINDOW;
	it->in = malloc(it->in_cap);
	it->win = malloc(it->win_cap);
	if (!it->dctx || !it->in || !it->win) {
		htr_iter_close(it);
		return htr_errf(err, -ENOMEM, h->offset, "out of memory");
	}
	/* Cap the decoder's window so a hostile frame cannot ask for GiBs. */
	ZSTD_DCtx_setParameter(it->dctx, ZSTD_d_windowLogMax, 27);
	*out = it;
	return 0;
}

void htr_iter_close(struct htr_iter *it)
{
	if (!it)
		return;
	ZSTD_freeDCtx(it->dctx);
	free(it->in);
	free(it->win);
	free(it->fields);
	free(it->refs); free(it->roots); free(it->ids); free(it->count_sites); free(it->counts);
	free(it->callers); free(it->old_path);
	free(it);
}

uint64_t htr_iter_raw_pos(const struct htr_iter *it)
{
	return it->raw_consumed + it->win_pos;
}

/* Decompresses until the window holds MAX_EVENT undecoded bytes or the
 * stream ends. */
static int refill(struct htr_iter *it, struct htr_err *err)
{
	uint64_t payload = it->h.offset + HTR_FRAME_HEADER_SIZE;
	if (it->win_pos) {
		memmove(it->win, it->win + it->win_pos, it->win_len - it->win_pos);
		it->raw_consumed += it->win_pos;
		it->win_len -= it->win_pos;
		it->win_pos = 0;
	}
	while (!it->stream_done && it->win_len < MAX_EVENT) {
		if (it->in_pos == it->in_len) {
			uint64_t left = it->h.comp_len - it->comp_read;
			if (left == 0)
				return htr_errf(err, -EBADMSG, it->h.offset,
						"frame payload ends inside a compressed block");
			size_t n = left < it->in_cap ? (size_t)left : it->in_cap;
			int rc = pread_all(it->f->fd, it->in, n, payload + it->comp_read);
			if (rc)
				return htr_errf(err, -EIO, payload + it->comp_read, "read error: %s",
						strerror(-rc));
			it->comp_read += n;
			it->in_len = n;
			it->in_pos = 0;
		}
		ZSTD_inBuffer in = { it->in, it->in_len, it->in_pos };
		ZSTD_outBuffer ob = { it->win, it->win_cap, it->win_len };
		size_t r = ZSTD_decompressStream(it->dctx, &ob, &in);
		if (ZSTD_isError(r))
			return htr_errf(err, -EBADMSG, payload + it->comp_read - (it->in_len - in.pos),
					"frame payload damaged: %s", ZSTD_getErrorName(r));
		it->in_pos = in.pos;
		it->win_len = ob.pos;
		if (it->raw_consumed + it->win_len > it->h.raw_len)
			return htr_errf(err, -EBADMSG, it->h.offset,
					"frame payload larger than its header says (%llu bytes)",
					(unsigned long long)it->h.raw_len);
		if (r == 0) {
			it->stream_done = 1;
			if (it->in_pos != it->in_len || it->comp_read != it->h.comp_len)
				return htr_errf(err, -EBADMSG, it->h.offset,
						"frame has bytes after its compressed payload");
		}
	}
	return 0;
}

#define GET(expr) do { if ((rc = (expr)) != 0) goto bad; } while (0)

/* An id written as id + 1 (0 = none): HTR_NO_TYPE / HTR_NO_SITE. */
static int cur_id_or_none(struct cur *c, uint32_t *id)
{
	uint64_t v;
	int rc = cur_uv(c, &v);
	if (rc)
		return rc;
	if (v > (uint64_t)UINT32_MAX + 1)
		return -EBADMSG;
	*id = v ? (uint32_t)(v - 1) : UINT32_MAX; /* UINT32_MAX written as 2^32 reads as itself */
	return 0;
}

static int decode_alloc_sample(struct cur *c, struct htr_alloc_sample *a)
{
	int rc;
	GET(cur_uv(c, &a->time_ns));
	GET(cur_u32(c, &a->kind));
	if (a->kind == 0 || a->kind > HTR_SAMPLE_KIND_MAX)
		return -EBADMSG;
	GET(cur_id_or_none(c, &a->type));
	GET(cur_id_or_none(c, &a->site));
	GET(cur_uv(c, &a->thread));
	GET(cur_uv(c, &a->weight));
	GET(cur_uv(c, &a->size));
	return 0;
bad:
	return rc;
}

/* COUNT_CALLERS (1.4): at most HTR_MAX_CHUNK entries, into it->callers. */
static int decode_callers(struct htr_iter *it, struct cur *c, struct htr_event *ev)
{
	int rc;
	uint64_t v;
	GET(cur_u32(c, &ev->u.count_callers.count));
	if (ev->u.count_callers.count > HTR_MAX_CHUNK)
		return -EBADMSG;
	if (!it->callers && !(it->callers = malloc(HTR_MAX_CHUNK * sizeof *it->callers)))
		return -ENOMEM;
	for (uint32_t i = 0; i < ev->u.count_callers.count; i++) {
		struct htr_count_caller *k = &it->callers[i];
		GET(cur_u32(c, &k->site));
		GET(cur_u32(c, &k->method));
		GET(cur_u32(c, &k->bci));
		GET(cur_uv(c, &v));
		if (v > (uint64_t)INT32_MAX + 1)
			return -EBADMSG;
		k->line = (int32_t)((int64_t)v - 1); /* v = 2^31 is INT32_MAX */
		GET(cur_uv(c, &k->count));
		if (k->count > INT64_MAX) /* no run makes more; readers add them as int64_t */
			return -EBADMSG;
	}
	ev->u.count_callers.callers = it->callers;
	return 0;
bad:
	return rc;
}

static int decode_old_sample(struct htr_iter *it, struct cur *c, struct htr_old_sample *o)
{
	int rc;
	uint64_t v;
	GET(cur_uv(c, &o->time_ns));
	GET(cur_uv(c, &o->alloc_ns));
	GET(cur_uv(c, &o->age_ns));
	GET(cur_id_or_none(c, &o->type));
	GET(cur_id_or_none(c, &o->site));
	GET(cur_uv(c, &o->thread));
	GET(cur_uv(c, &v));
	if (v > (uint64_t)INT64_MAX)
		return -EBADMSG;
	o->array_length = (int64_t)v - 1;
	GET(cur_uv(c, &v));
	o->heap_used = v ? v - 1 : UINT64_MAX;
	GET(cur_str(c, &o->root_kind, &o->root_kind_len));
	GET(cur_str(c, &o->root_desc, &o->root_desc_len));
	GET(cur_str(c, &o->root_system, &o->root_system_len));
	GET(cur_u32(c, &o->npath));
	if (o->npath > HTR_MAX_CHUNK)
		return -EBADMSG;
	if (o->npath && !it->old_path && !(it->old_path = malloc(HTR_MAX_CHUNK * sizeof *it->old_path)))
		return -ENOMEM;
	for (uint32_t i = 0; i < o->npath; i++) {
		struct htr_old_ref *r = &it->old_path[i];
		GET(cur_id_or_none(c, &r->type));
		GET(cur_str(c, &r->how, &r->how_len));
		GET(cur_str(c, &r->desc, &r->desc_len));
		GET(cur_u32(c, &r->skip));
	}
	o->path = it->old_path;
	return 0;
bad:
	return rc;
}

static int decode_type(struct htr_iter *it, struct cur *c, struct htr_event *ev)
{
	int rc;
	uint64_t super;
	GET(cur_u32(c, &ev->u.type.id));
	GET(cur_str(c, &ev->u.type.name, &ev->u.type.name_len));
	GET(cur_u32(c, &ev->u.type.kind));
	GET(cur_u32(c, &ev->u.type.instance_size));
	GET(cur_u32(c, &ev->u.type.elem_size));
	GET(cur_uv(c, &super));
	GET(cur_u32(c, &ev->u.type.nfields));
	if (ev->u.type.kind > HTR_TYPE_PRIM_ARRAY || super > (uint64_t)UINT32_MAX + 1 ||
	    ev->u.type.nfields > HTR_MAX_FIELDS)
		return -EBADMSG;
	ev->u.type.super_id = super ? (uint32_t)(super - 1) : HTR_NO_TYPE;
	uint32_t nf = ev->u.type.nfields;
	if (nf > it->fields_cap) {
		struct htr_field *p = realloc(it->fields, nf * sizeof(*p));
		if (!p)
			return -ENOMEM;
		it->fields = p;
		it->fields_cap = nf;
	}
	for (uint32_t i = 0; i < nf; i++) {
		struct htr_field *fl = &it->fields[i];
		GET(cur_str(c, &fl->name, &fl->name_len));
		GET(cur_str(c, &fl->sig, &fl->sig_len));
		GET(cur_u32(c, &fl->flags));
	}
	ev->u.type.fields = it->fields;
	return 0;
bad:
	return rc;
}

static int decode_root(struct cur *c, struct htr_root *r)
{
	int rc;
	uint8_t kind;
	memset(r, 0, sizeof(*r));
	GET(cur_byte(c, &kind));
	if (kind < 1 || kind > HTR_ROOT_KIND_MAX)
		return -EBADMSG;
	r->kind = kind;
	GET(cur_uv(c, &r->object));
	switch (kind) {
	case HTR_ROOT_STATIC:
		GET(cur_u32(c, &r->type));
		GET(cur_u32(c, &r->field));
		break;
	case HTR_ROOT_THREAD:
	case HTR_ROOT_NATIVE_STACK:
	case HTR_ROOT_THREAD_BLOCK:
		GET(cur_uv(c, &r->thread));
		break;
	case HTR_ROOT_LOCAL:
		GET(cur_uv(c, &r->thread));
		GET(cur_u32(c, &r->method));
		GET(cur_u32(c, &r->depth));
		GET(cur_u32(c, &r->slot));
		break;
	case HTR_ROOT_CODE_BLOB:
		GET(cur_u32(c, &r->method));
		break;
	case HTR_ROOT_JNI_LOCAL:
		GET(cur_uv(c, &r->thread));
		GET(cur_u32(c, &r->depth));
		break;
	default:
		break;
	}
	return 0;
bad:
	return rc;
}

/* 1.2's recorded reachable objects and bytes (GC_END, GC_SUMMARY): each
 * stored +1, 0 = not recorded.  HTR_GC_HAS_REACHABLE in *flags must say
 * the same, and needs a graph; files before 1.2 carry neither. */
static int decode_reachable(struct cur *c, uint16_t minor, uint32_t *flags, uint64_t *objects,
			    uint64_t *bytes)
{
	int rc;
	uint64_t o = 0, b = 0;
	*objects = *bytes = 0;
	if (minor < 2) {
		*flags &= ~(uint32_t)HTR_GC_HAS_REACHABLE;
		return 0;
	}
	GET(cur_uv(c, &o));
	GET(cur_uv(c, &b));
	int known = (*flags & HTR_GC_HAS_REACHABLE) != 0;
	if (known != (o != 0) || known != (b != 0) || (known && !(*flags & HTR_GC_HAS_GRAPH)))
		return -EBADMSG;
	if (known) {
		*objects = o - 1;
		*bytes = b - 1;
	}
	return 0;
bad:
	return rc;
}

static int decode_gc(struct cur *c, uint16_t minor, struct htr_event *ev, int with_cause)
{
	int rc;
	uint64_t used, cap;
	GET(cur_u32(c, &ev->u.gc.gc));
	GET(cur_uv(c, &ev->u.gc.time_ns));
	GET(cur_uv(c, &used));
	GET(cur_uv(c, &cap));
	GET(cur_u32(c, &ev->u.gc.flags));
	ev->u.gc.used = used - 1;        /* 0 -> UINT64_MAX: unknown */
	ev->u.gc.capacity = cap - 1;
	ev->u.gc.cause = ev->u.gc.collector = "";
	ev->u.gc.cause_len = ev->u.gc.collector_len = 0;
	ev->u.gc.reachable_objects = ev->u.gc.reachable_bytes = 0;
	if (with_cause) {
		GET(cur_str(c, &ev->u.gc.cause, &ev->u.gc.cause_len));
		if (minor >= 3)
			GET(cur_str(c, &ev->u.gc.collector, &ev->u.gc.collector_len));
		ev->u.gc.flags &= ~(uint32_t)HTR_GC_HAS_REACHABLE; /* a GC_END's alone */
	} else {
		GET(decode_reachable(c, minor, &ev->u.gc.flags, &ev->u.gc.reachable_objects,
				     &ev->u.gc.reachable_bytes));
	}
	return 0;
bad:
	return rc;
}

static int decode_summary(struct cur *c, uint16_t minor, struct htr_gc_summary *g)
{
	int rc;
	const char *cause;
	uint32_t cause_len;
	uint64_t ub, ua, cap;
	memset(g, 0, sizeof(*g));
	GET(cur_u32(c, &g->gc));
	GET(cur_u32(c, &g->frame));
	GET(cur_uv(c, &g->start_ns));
	GET(cur_uv(c, &g->end_ns));
	GET(cur_uv(c, &ub));
	GET(cur_uv(c, &ua));
	GET(cur_uv(c, &cap));
	GET(cur_u32(c, &g->flags));
	GET(cur_uv(c, &g->allocs));
	GET(cur_uv(c, &g->alloc_bytes));
	GET(cur_uv(c, &g->deaths));
	GET(cur_str(c, &cause, &cause_len));
	GET(decode_reachable(c, minor, &g->flags, &g->reachable_objects, &g->reachable_bytes));
	if (minor >= 3) {
		const char *col;
		uint32_t col_len;
		GET(cur_str(c, &col, &col_len));
		if (col_len >= sizeof(g->collector))
			col_len = sizeof(g->collector) - 1;
		memcpy(g->collector, col, col_len);
	}
	g->used_before = ub - 1;
	g->used_after = ua - 1;
	g->capacity = cap - 1;
	if (cause_len >= sizeof(g->cause))
		cause_len = sizeof(g->cause) - 1;
	memcpy(g->cause, cause, cause_len);
	g->cause[cause_len] = 0;
	return 0;
bad:
	return rc;
}

/* The fields of an allocation (after its type byte); shared by
 * htr_iter_next and htr_iter_allocs. */
static inline int decode_alloc(struct htr_iter *it, struct cur *c, struct htr_alloc *a)
{
	int rc;
	uint64_t site, alen;
	int64_t d;
	GET(cur_u32(c, &a->flags));
	GET(cur_sv(c, &d));
	a->id = it->prev_alloc_id + (uint64_t)d;
	GET(cur_u32(c, &a->type));
	GET(cur_uv(c, &site));
	GET(cur_uv(c, &a->thread));
	GET(cur_uv(c, &a->size));
	GET(cur_uv(c, &alen));
	GET(cur_sv(c, &d));
	if (site > (uint64_t)UINT32_MAX + 1 || alen > (uint64_t)INT64_MAX)
		return -EBADMSG;
	a->site = site ? (uint32_t)(site - 1) : HTR_NO_SITE;
	a->array_length = (int64_t)alen - 1;
	a->time_ns = it->prev_time + (uint64_t)d;
	/* WALKED (1.5) is a kind of PREEXISTING object: older readers never
	 * meet it, and a WALKED object alone would be counted as a sample */
	if ((a->flags & HTR_ALLOC_WALKED) && (it->f->minor < 5 || !(a->flags & HTR_ALLOC_PREEXISTING)))
		return -EBADMSG;
	it->prev_alloc_id = a->id;
	it->prev_time = a->time_ns;
	return 0;
bad:
	return rc;
}

/* A graph object's id and reference count (after its type byte). */
static inline int decode_graph_head(struct htr_iter *it, struct cur *c, uint64_t *id, uint32_t *count)
{
	int64_t d;
	int rc = cur_sv(c, &d);
	if (!rc)
		rc = cur_u32(c, count);
	if (rc)
		return rc;
	if (*count > HTR_MAX_CHUNK)
		return -EBADMSG;
	*id = it->prev_graph_id + (uint64_t)d;
	return 0;
}

/* One reference of object id: the slot as a delta from the previous
 * one's (*slot_acc), the target as a delta from the object's id. */
static inline int decode_ref(struct cur *c, uint64_t id, int64_t *slot_acc, uint32_t *slot,
			     uint64_t *target)
{
	int64_t d;
	int rc = cur_sv(c, &d);
	if (rc)
		return rc;
	if (__builtin_add_overflow(*slot_acc, d, slot_acc) || *slot_acc < 0 || *slot_acc > UINT32_MAX)
		return -EBADMSG;
	*slot = (uint32_t)*slot_acc;
	if ((rc = cur_sv(c, &d)))
		return rc;
	*target = id + (uint64_t)d;
	return 0;
}

static int decode_event(struct htr_iter *it, struct cur *c, struct htr_event *ev)
{
	int rc;
	uint8_t type;
	uint64_t v;
	int64_t d;
	GET(cur_byte(c, &type));
	ev->type = type;
	switch (type) {
	case HTR_EV_INFO:
		GET(cur_str(c, &ev->u.info.key, &ev->u.info.key_len));
		GET(cur_str(c, &ev->u.info.val, &ev->u.info.val_len));
		return 0;
	case HTR_EV_TYPE:
		return decode_type(it, c, ev);
	case HTR_EV_METHOD:
		GET(cur_u32(c, &ev->u.method.id));
		GET(cur_str(c, &ev->u.method.cls, &ev->u.method.cls_len));
		GET(cur_str(c, &ev->u.method.name, &ev->u.method.name_len));
		GET(cur_str(c, &ev->u.method.sig, &ev->u.method.sig_len));
		GET(cur_str(c, &ev->u.method.file, &ev->u.method.file_len));
		return 0;
	case HTR_EV_SITE:
		GET(cur_u32(c, &ev->u.site.id));
		GET(cur_u32(c, &ev->u.site.nframes));
		if (ev->u.site.nframes == 0 || ev->u.site.nframes > HTR_MAX_FRAMES_PER_SITE)
			return -EBADMSG;
		for (uint32_t i = 0; i < ev->u.site.nframes; i++) {
			GET(cur_u32(c, &it->frames[i].method));
			GET(cur_sv(c, &d));
			if (d < INT32_MIN || d > INT32_MAX)
				return -EBADMSG;
			it->frames[i].line = (int32_t)d;
		}
		ev->u.site.frames = it->frames;
		return 0;
	case HTR_EV_THREAD:
		GET(cur_uv(c, &ev->u.thread.id));
		GET(cur_str(c, &ev->u.thread.name, &ev->u.thread.name_len));
		return 0;
	case HTR_EV_ALLOC:
		return decode_alloc(it, c, &ev->u.alloc);
	case HTR_EV_DEATHS: {
		GET(cur_u32(c, &ev->u.deaths.gc));
		GET(cur_u32(c, &ev->u.deaths.count));
		if (ev->u.deaths.count > HTR_MAX_CHUNK)
			return -EBADMSG;
		if (!it->ids && !(it->ids = malloc(HTR_MAX_CHUNK * sizeof *it->ids)))
			return -ENOMEM;
		uint64_t prev = 0;
		for (uint32_t i = 0; i < ev->u.deaths.count; i++) {
			GET(cur_uv(c, &v));
			prev += v;
			it->ids[i] = prev;
		}
		ev->u.deaths.ids = it->ids;
		return 0;
	}
	case HTR_EV_COUNT_SITE:
		GET(cur_u32(c, &ev->u.count_site.id));
		GET(cur_u32(c, &ev->u.count_site.method));
		GET(cur_u32(c, &ev->u.count_site.bci));
		GET(cur_uv(c, &v));
		if (v > (uint64_t)INT32_MAX + 1)
			return -EBADMSG;
		ev->u.count_site.line = (int32_t)((int64_t)v - 1); /* v = 2^31 is INT32_MAX */
		GET(cur_str(c, &ev->u.count_site.type, &ev->u.count_site.type_len));
		return 0;
	case HTR_EV_ALLOC_COUNTS: {
		GET(cur_u32(c, &ev->u.alloc_counts.gc));
		GET(cur_u32(c, &ev->u.alloc_counts.flags));
		GET(cur_uv(c, &ev->u.alloc_counts.increments));
		GET(cur_uv(c, &ev->u.alloc_counts.per_site));
		GET(cur_u32(c, &ev->u.alloc_counts.count));
		if (ev->u.alloc_counts.count > HTR_MAX_CHUNK)
			return -EBADMSG;
		if ((!it->count_sites && !(it->count_sites = malloc(HTR_MAX_CHUNK * sizeof *it->count_sites))) ||
		    (!it->counts && !(it->counts = malloc(HTR_MAX_CHUNK * sizeof *it->counts))))
			return -ENOMEM;
		uint64_t prev = 0;
		for (uint32_t i = 0; i < ev->u.alloc_counts.count; i++) {
			GET(cur_uv(c, &v));
			prev += v;
			if (prev > UINT32_MAX || (i && v == 0))
				return -EBADMSG; /* ids ascend strictly */
			it->count_sites[i] = (uint32_t)prev;
			GET(cur_sv(c, &it->counts[i]));
		}
		ev->u.alloc_counts.sites = it->count_sites;
		ev->u.alloc_counts.counts = it->counts;
		return 0;
	}
	case HTR_EV_COUNT_CALLERS:
		if (it->f->minor < 4)
			return -EBADMSG;
		return decode_callers(it, c, ev);
	case HTR_EV_ALLOC_SAMPLE:
		if (it->f->minor < 3)
			return -EBADMSG;
		return decode_alloc_sample(c, &ev->u.alloc_sample);
	case HTR_EV_OLD_SAMPLE:
		if (it->f->minor < 3)
			return -EBADMSG;
		return decode_old_sample(it, c, &ev->u.old_sample);
	case HTR_EV_SAMPLE_TOTALS:
		if (it->f->minor < 3)
			return -EBADMSG;
		GET(cur_uv(c, &ev->u.sample_totals.alloc_samples));
		GET(cur_uv(c, &ev->u.sample_totals.old_samples));
		return 0;
	case HTR_EV_GC_START:
		return decode_gc(c, it->f->minor, ev, 1);
	case HTR_EV_GC_END:
		return decode_gc(c, it->f->minor, ev, 0);
	case HTR_EV_ROOTS:
		GET(cur_u32(c, &ev->u.roots.gc));
		GET(cur_u32(c, &ev->u.roots.count));
		if (ev->u.roots.count > HTR_MAX_CHUNK)
			return -EBADMSG;
		if (!it->roots && !(it->roots = malloc(HTR_MAX_CHUNK * sizeof *it->roots)))
			return -ENOMEM;
		for (uint32_t i = 0; i < ev->u.roots.count; i++)
			GET(decode_root(c, &it->roots[i]));
		ev->u.roots.roots = it->roots;
		return 0;
	case HTR_EV_GRAPH_OBJ: {
		uint64_t id;
		GET(decode_graph_head(it, c, &id, &ev->u.graph.count));
		if (!it->refs && !(it->refs = malloc(HTR_MAX_CHUNK * sizeof *it->refs)))
			return -ENOMEM;
		ev->u.graph.id = id;
		int64_t slot = 0;
		for (uint32_t i = 0; i < ev->u.graph.count; i++)
			GET(decode_ref(c, id, &slot, &it->refs[i].slot, &it->refs[i].target));
		ev->u.graph.refs = it->refs;
		it->prev_graph_id = id;
		return 0;
	}
	case HTR_EV_FRAME_ENTRY: {
		uint64_t mdg;
		GET(cur_uv(c, &ev->u.frame_entry.offset));
		GET(cur_uv(c, &ev->u.frame_entry.comp_len));
		GET(cur_uv(c, &ev->u.frame_entry.raw_len));
		GET(cur_u32(c, &ev->u.frame_entry.nevents));
		GET(cur_uv(c, &mdg));
		if (mdg > (uint64_t)UINT32_MAX + 1)
			return -EBADMSG;
		ev->u.frame_entry.min_death_gc = (uint32_t)(mdg ? mdg - 1 : UINT32_MAX);
		GET(cur_u32(c, &ev->u.frame_entry.kind));
		GET(cur_uv(c, &mdg));
		if (mdg > (uint64_t)UINT32_MAX + 1 ||
		    (ev->u.frame_entry.kind != HTR_FRAME_EVENTS && ev->u.frame_entry.kind != HTR_FRAME_GRAPH))
			return -EBADMSG;
		ev->u.frame_entry.graph_gc = (uint32_t)(mdg ? mdg - 1 : UINT32_MAX);
		return 0;
	}
	case HTR_EV_GC_SUMMARY:
		return decode_summary(c, it->f->minor, &ev->u.gc_summary);
	case HTR_EV_TOTALS:
		GET(cur_uv(c, &ev->u.totals.allocs));
		GET(cur_uv(c, &ev->u.totals.alloc_bytes));
		GET(cur_uv(c, &ev->u.totals.deaths));
		GET(cur_uv(c, &ev->u.totals.first_ns));
		GET(cur_uv(c, &ev->u.totals.last_ns));
		return 0;
	default:
		return -EBADMSG;
	}
bad:
	return rc;
}

static const char *event_name(uint8_t t)
{
	switch (t) {
	case HTR_EV_INFO: return "info";
	case HTR_EV_TYPE: return "type";
	case HTR_EV_METHOD: return "method";
	case HTR_EV_SITE: return "site";
	case HTR_EV_THREAD: return "thread";
	case HTR_EV_ALLOC: return "allocation";
	case HTR_EV_DEATHS: return "deaths";
	case HTR_EV_GC_START: return "gc start";
	case HTR_EV_GC_END: return "gc end";
	case HTR_EV_ROOTS: return "roots";
	case HTR_EV_GRAPH_OBJ: return "graph object";
	case HTR_EV_FRAME_ENTRY: return "frame entry";
	case HTR_EV_GC_SUMMARY: return "gc summary";
	case HTR_EV_TOTALS: return "totals";
	case HTR_EV_COUNT_SITE: return "count site";
	case HTR_EV_ALLOC_COUNTS: return "allocation counts";
	case HTR_EV_COUNT_CALLERS: return "count callers";
	case HTR_EV_ALLOC_SAMPLE: return "allocation sample";
	case HTR_EV_OLD_SAMPLE: return "old-object sample";
	case HTR_EV_SAMPLE_TOTALS: return "sample totals";
	default: return "unknown";
	}
}

/* The window holds the next event whole, or the rest of the stream. */
static inline int window_ready(struct htr_iter *it, struct htr_err *err)
{
	if (it->win_len - it->win_pos < MAX_EVENT && !it->stream_done)
		return refill(it, err);
	return 0;
}

/* A cursor over the next event's bytes (at most MAX_EVENT of them). */
static inline struct cur event_cursor(const struct htr_iter *it)
{
	size_t avail = it->win_len - it->win_pos;
	return (struct cur){ it->win + it->win_pos,
			     it->win + it->win_pos + (avail < MAX_EVENT ? avail : MAX_EVENT) };
}

static int damaged(const struct htr_iter *it, uint8_t type, int rc, struct htr_err *err)
{
	return htr_errf(err, rc == -ENOMEM ? rc : -EBADMSG, it->h.offset,
			"damaged %s event at byte %llu of the frame's payload", event_name(type),
			(unsigned long long)htr_iter_raw_pos(it));
}

int htr_iter_next(struct htr_iter *it, struct htr_event *ev, struct htr_err *err)
{
	int rc = window_ready(it, err);
	if (rc)
		return rc;
	if (it->win_pos == it->win_len) {
		if (!it->stream_done)
			return htr_errf(err, -EBADMSG, it->h.offset, "frame payload incomplete");
		if (it->raw_consumed + it->win_len != it->h.raw_len)
			return htr_errf(err, -EBADMSG, it->h.offset,
					"frame payload is %llu bytes, header says %llu",
					(unsigned long long)(it->raw_consumed + it->win_len),
					(unsigned long long)it->h.raw_len);
		if (it->h.kind != HTR_FRAME_FOOTER && it->events != it->h.nevents)
			return htr_errf(err, -EBADMSG, it->h.offset,
					"frame holds %u events, header says %u", it->events, it->h.nevents);
		return 0;
	}
	struct cur c = event_cursor(it);
	uint8_t t = it->win[it->win_pos];
	rc = decode_event(it, &c, ev);
	if (rc)
		return damaged(it, t, rc, err);
	it->win_pos = (size_t)(c.p - it->win);
	it->events++;
	return 1;
}

int htr_iter_allocs(struct htr_iter *it, struct htr_alloc *out, uint32_t max, struct htr_err *err)
{
	uint32_t n = 0;
	int rc;
	while (n < max) {
		if ((rc = window_ready(it, err)))
			return rc;
		if (it->win_pos == it->win_len || it->win[it->win_pos] != HTR_EV_ALLOC)
			break;
		struct cur c = event_cursor(it);
		c.p++; /* the type byte */
		if ((rc = decode_alloc(it, &c, &out[n])))
			return damaged(it, HTR_EV_ALLOC, rc, err);
		it->win_pos = (size_t)(c.p - it->win);
		it->events++;
		n++;
	}
	return (int)n;
}

int htr_graph_cols_fresh(const struct htr_graph_cols *g, uint64_t id)
{
	return !(g->nobj && g->id[g->nobj - 1] == id);
}

void htr_graph_cols_start(struct htr_graph_cols *g, uint64_t id)
{
	if (g->nobj && id < g->id[g->nobj - 1])
		g->unsorted = 1;
	g->id[g->nobj] = id;
	g->off[g->nobj] = (uint32_t)g->nedges;
	g->nobj++;
}

/* One graph object event into g, or 0 (nothing consumed) if it does not
 * fit; 1 when taken; <0 damage. */
static int graph_event(struct htr_iter *it, struct htr_graph_cols *g)
{
	struct cur c = event_cursor(it);
	c.p++; /* the type byte */
	uint64_t id;
	uint32_t count;
	int rc = decode_graph_head(it, &c, &id, &count);
	if (rc)
		return rc;
	int fresh = htr_graph_cols_fresh(g, id);
	if ((fresh && g->nobj == g->obj_cap) || g->nedges + count > g->edge_cap ||
	    g->nedges + count > UINT32_MAX - 1)
		return 0;
	int64_t slot = 0;
	for (uint32_t i = 0; i < count; i++)
		if ((rc = decode_ref(&c, id, &slot, &g->slot[g->nedges + i], &g->tgt[g->nedges + i])))
			return rc;
	if (fresh)
		htr_graph_cols_start(g, id);
	g->nedges += count;
	it->prev_graph_id = id;
	it->win_pos = (size_t)(c.p - it->win);
	it->events++;
	return 1;
}

int htr_iter_graph(struct htr_iter *it, struct htr_graph_cols *g, struct htr_err *err)
{
	int n = 0, rc;
	for (;;) {
		if ((rc = window_ready(it, err)))
			return rc;
		if (it->win_pos == it->win_len || it->win[it->win_pos] != HTR_EV_GRAPH_OBJ)
			break;
		rc = graph_event(it, g);
		if (rc < 0)
			return damaged(it, HTR_EV_GRAPH_OBJ, rc, err);
		if (rc == 0 || n == INT32_MAX)
			break;
		n++;
	}
	return n;
}

/* htr_writer.c - see htr_writer.h and docs/trace-format.md.
 *
 * Events are encoded into `raw`; whenever raw passes FLUSH_AT bytes it is
 * pushed through the frame's zstd stream and the compressed bytes go to the
 * file, so a GC epoch of any size needs only bounded memory.  A frame header
 * is first written as 32 zero bytes and patched once the frame is complete:
 * a crash mid-frame leaves a zero header that readers recognise as the
 * truncated tail.
 */
#include "htr_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "buf.h"

#define FLUSH_AT (1u << 20)
#define MAX_EVENT (1u << 20)

struct frame_rec {
	uint64_t offset, comp_len, raw_len;
	uint32_t nevents;
	uint32_t min_death_gc;
	uint32_t kind, graph_gc;
};

struct htr_writer {
	int fd;
	int err;                 /* first error, sticky */
	uint64_t pos;            /* file offset of the next byte */
	ZSTD_CCtx *cctx;
	struct buf raw;          /* events not yet compressed */
	struct buf out;          /* compressed scratch */
	struct buf scratch;      /* encoding one event */
	struct buf symbols;      /* every symbol event, again, for the footer */
	int no_footer, no_sync;
	uint16_t minor;          /* format minor version written (opts.minor) */

	/* the open frame */
	int frame_open;
	uint32_t frame_kind;
	uint64_t frame_offset, frame_raw, frame_comp;
	uint32_t frame_events;
	uint32_t frame_min_death_gc;
	uint64_t prev_alloc_id, prev_time, prev_graph_id;

	struct frame_rec *frames; uint32_t nframes; uint64_t frames_cap;
	struct htr_gc_summary *gcs; uint32_t ngcs; uint64_t gcs_cap;
	struct htr_gc_summary pending;  /* the GC started, not yet ended */
	int gc_in_progress;
	uint64_t allocs_since, bytes_since;
	uint64_t total_allocs, total_bytes, total_deaths;
	uint64_t first_ns, last_ns;      /* first_ns UINT64_MAX until a time */
	uint64_t *sort_tmp;
	/* allocation counts (1.1): totals per count-site id, for the footer */
	int64_t *count_tot; uint32_t count_cap;
	int have_counts;
	uint32_t count_gc, count_flags;
	uint64_t count_incr, count_per_site;
	/* sampled allocations and old-object samples (1.3), for the footer */
	uint64_t alloc_samples, old_samples;
};

static int fail(struct htr_writer *w, int rc)
{
	if (rc && !w->err)
		w->err = rc;
	return rc;
}

static int write_all(struct htr_writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = write(w->fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, -errno);
		}
		b += k;
		n -= (size_t)k;
		w->pos += (uint64_t)k;
	}
	return 0;
}

static int pwrite_all(struct htr_writer *w, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = pwrite(w->fd, b, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, -errno);
		}
		b += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

int htr_writer_open(struct htr_writer **out, const char *path, const struct htr_writer_opts *opts)
{
	int rc = -ENOMEM;
	struct htr_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	buf_init(&w->raw);
	buf_init(&w->out);
	buf_init(&w->scratch);
	buf_init(&w->symbols);
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx)
		goto fail;
	int level = opts && opts->zstd_level ? opts->zstd_level : 3;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1))) {
		rc = -EINVAL;
		goto fail;
	}
	w->no_footer = opts ? opts->no_footer : 0;
	w->no_sync = opts ? opts->no_sync : 0;
	w->minor = opts && opts->minor ? (uint16_t)opts->minor : HTR_VERSION_MINOR;
	if (opts && (opts->minor < 0 || opts->minor > HTR_VERSION_MINOR)) {
		rc = -EINVAL;
		goto fail;
	}
	w->first_ns = UINT64_MAX;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		rc = -errno;
		goto fail;
	}
	uint8_t h[HTR_HEADER_SIZE] = {0};
	memcpy(h, HTR_MAGIC, 8);
	h[8] = HTR_VERSION_MAJOR & 0xff; h[9] = HTR_VERSION_MAJOR >> 8;
	h[10] = w->minor & 0xff; h[11] = (uint8_t)(w->minor >> 8);
	put_le32(h + 12, HTR_HEADER_SIZE);
	put_le32(h + 28, crc32_ieee(h, 28));
	rc = write_all(w, h, sizeof(h));
	if (rc)
		goto fail;
	*out = w;
	return 0;
fail:
	htr_writer_abandon(w);
	return rc;
}

void htr_writer_abandon(struct htr_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	buf_free(&w->raw);
	buf_free(&w->out);
	buf_free(&w->scratch);
	buf_free(&w->symbols);
	free(w->frames);
	free(w->gcs);
	free(w->sort_tmp);
	free(w->count_tot);
	free(w);
}

uint64_t htr_writer_bytes(const struct htr_writer *w)
{
	return w->pos;
}

static int frame_end(struct htr_writer *w);

/* Makes sure a frame of this kind is open, closing one of another kind. */
static int frame_begin(struct htr_writer *w, uint32_t kind)
{
	if (w->frame_open && w->frame_kind == kind)
		return 0;
	if (w->frame_open) {
		int rc = frame_end(w);
		if (rc)
			return rc;
	}
	w->frame_kind = kind;
	uint8_t zero[HTR_FRAME_HEADER_SIZE] = {0};
	w->frame_offset = w->pos;
	int rc = write_all(w, zero, sizeof(zero));
	if (rc)
		return rc;
	w->frame_open = 1;
	w->frame_raw = w->frame_comp = 0;
	w->frame_events = 0;
	w->frame_min_death_gc = UINT32_MAX;
	w->prev_alloc_id = w->prev_time = w->prev_graph_id = 0;
	ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
	return 0;
}

/* Pushes raw through the compressor; end = finish the zstd frame. */
static int compress_raw(struct htr_writer *w, int end)
{
	ZSTD_inBuffer in = { w->raw.data, w->raw.len, 0 };
	size_t chunk = ZSTD_CStreamOutSize();
	int rc = buf_reserve(&w->out, chunk);
	if (rc)
		return fail(w, rc);
	for (;;) {
		ZSTD_outBuffer ob = { w->out.data, chunk, 0 };
		size_t left = ZSTD_compressStream2(w->cctx, &ob, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return fail(w, -EIO);
		rc = write_all(w, w->out.data, ob.pos);
		if (rc)
			return rc;
		w->frame_comp += ob.pos;
		if (end ? left == 0 : in.pos == in.size)
			break;
	}
	w->frame_raw += w->raw.len;
	buf_reset(&w->raw);
	return 0;
}

static int frames_push(struct htr_writer *w, const struct frame_rec *f)
{
	if (array_reserve((void **)&w->frames, &w->frames_cap, (uint64_t)w->nframes + 1,
			  sizeof(*w->frames)))
		return fail(w, -ENOMEM);
	w->frames[w->nframes++] = *f;
	return 0;
}

static void frame_header_bytes(uint8_t *h, uint32_t kind, uint64_t comp, uint64_t raw, uint32_t nev)
{
	memcpy(h, HTR_FRAME_MAGIC, 4);
	put_le32(h + 4, kind);
	put_le64(h + 8, comp);
	put_le64(h + 16, raw);
	put_le32(h + 24, nev);
	put_le32(h + 28, crc32_ieee(h, 28));
}

static int frame_end(struct htr_writer *w)
{
	if (!w->frame_open)
		return 0;
	uint32_t kind = w->frame_kind;
	int rc = compress_raw(w, 1);
	if (rc)
		return rc;
	uint8_t h[HTR_FRAME_HEADER_SIZE];
	frame_header_bytes(h, kind, w->frame_comp, w->frame_raw, w->frame_events);
	rc = pwrite_all(w, h, sizeof(h), w->frame_offset);
	if (rc)
		return rc;
	w->frame_open = 0;
	if (kind == HTR_FRAME_FOOTER)
		return 0;
	struct frame_rec f = { w->frame_offset, w->frame_comp, w->frame_raw, w->frame_events,
			       w->frame_min_death_gc, kind,
			       kind == HTR_FRAME_GRAPH ? w->pending.gc : HTR_NO_GC };
	return frames_push(w, &f);
}

/* Appends the encoded event in scratch to a frame of the given kind (and,
 * for symbols, to the footer's copy). */
static int emit_in(struct htr_writer *w, int is_symbol, uint32_t kind)
{
	if (w->err)
		return w->err;
	if (w->scratch.len > MAX_EVENT)
		return fail(w, -E2BIG);
	int rc = frame_begin(w, kind);
	if (rc)
		return rc;
	rc = buf_put(&w->raw, w->scratch.data, w->scratch.len);
	if (!rc && is_symbol)
		rc = buf_put(&w->symbols, w->scratch.data, w->scratch.len);
	if (rc)
		return fail(w, rc);
	w->frame_events++;
	if (w->raw.len >= FLUSH_AT)
		return compress_raw(w, 0);
	return 0;
}

static int emit(struct htr_writer *w, int is_symbol)
{
	return emit_in(w, is_symbol, HTR_FRAME_EVENTS);
}

/* Encoders return 0 or -ENOMEM; PUT keeps the first error and skips the
 * rest, so one check after a run of puts suffices. */
#define PUT(expr) do { if (!rc) rc = (expr); } while (0)

static int check_str(const char *s)
{
	return s && strlen(s) > HTR_MAX_STR ? -ENAMETOOLONG : 0;
}

int htr_write_info(struct htr_writer *w, const char *key, const char *value)
{
	int rc = check_str(key);
	PUT(check_str(value));
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_INFO));
	PUT(buf_put_str(b, key));
	PUT(buf_put_str(b, value));
	return rc ? fail(w, rc) : emit(w, 1);
}

int htr_write_type(struct htr_writer *w, const struct htr_type_def *t)
{
	int rc = check_str(t->name);
	if (t->nfields > HTR_MAX_FIELDS)
		rc = -E2BIG;
	for (uint32_t i = 0; i < t->nfields && !rc; i++) {
		PUT(check_str(t->fields[i].name));
		PUT(check_str(t->fields[i].sig));
	}
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_TYPE));
	PUT(buf_put_uv(b, t->id));
	PUT(buf_put_str(b, t->name));
	PUT(buf_put_uv(b, t->kind));
	PUT(buf_put_uv(b, t->instance_size));
	PUT(buf_put_uv(b, t->elem_size));
	PUT(buf_put_uv(b, (uint64_t)t->super_id + 1)); /* HTR_NO_TYPE -> 0 */
	PUT(buf_put_uv(b, t->nfields));
	for (uint32_t i = 0; i < t->nfields; i++) {
		PUT(buf_put_str(b, t->fields[i].name));
		PUT(buf_put_str(b, t->fields[i].sig));
		PUT(buf_put_uv(b, t->fields[i].flags));
	}
	return rc ? fail(w, rc) : emit(w, 1);
}

int htr_write_method(struct htr_writer *w, uint32_t id, const char *cls, const char *name,
		     const char *sig, const char *file)
{
	int rc = check_str(cls);
	PUT(check_str(name));
	PUT(check_str(sig));
	PUT(check_str(file));
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_METHOD));
	PUT(buf_put_uv(b, id));
	PUT(buf_put_str(b, cls));
	PUT(buf_put_str(b, name));
	PUT(buf_put_str(b, sig));
	PUT(buf_put_str(b, file));
	return rc ? fail(w, rc) : emit(w, 1);
}

int htr_write_site(struct htr_writer *w, uint32_t id, uint32_t nframes,
		   const struct htr_site_frame *frames)
{
	if (nframes == 0 || nframes > HTR_MAX_FRAMES_PER_SITE)
		return fail(w, -EINVAL);
	int rc = 0;
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_SITE));
	PUT(buf_put_uv(b, id));
	PUT(buf_put_uv(b, nframes));
	for (uint32_t i = 0; i < nframes; i++) {
		PUT(buf_put_uv(b, frames[i].method));
		PUT(buf_put_sv(b, frames[i].line));
	}
	return rc ? fail(w, rc) : emit(w, 1);
}

int htr_write_thread(struct htr_writer *w, uint64_t id, const char *name)
{
	int rc = check_str(name);
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_THREAD));
	PUT(buf_put_uv(b, id));
	PUT(buf_put_str(b, name));
	return rc ? fail(w, rc) : emit(w, 1);
}

static void note_time(struct htr_writer *w, uint64_t ns)
{
	if (ns < w->first_ns)
		w->first_ns = ns;
	if (ns > w->last_ns)
		w->last_ns = ns;
}

int htr_write_alloc(struct htr_writer *w, const struct htr_alloc *a)
{
	if (a->array_length < -1) /* the reader would refuse what we wrote */
		return fail(w, -EINVAL);
	if ((a->flags & HTR_ALLOC_WALKED) && (w->minor < 5 || !(a->flags & HTR_ALLOC_PREEXISTING)))
		return fail(w, -EINVAL);
	/* open the frame first: it resets the delta bases encoded below */
	int rc = frame_begin(w, HTR_FRAME_EVENTS);
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_ALLOC));
	PUT(buf_put_uv(b, a->flags));
	PUT(buf_put_sv(b, (int64_t)(a->id - w->prev_alloc_id)));
	PUT(buf_put_uv(b, a->type));
	PUT(buf_put_uv(b, (uint64_t)a->site + 1));
	PUT(buf_put_uv(b, a->thread));
	PUT(buf_put_uv(b, a->size));
	PUT(buf_put_uv(b, (uint64_t)(a->array_length + 1)));
	PUT(buf_put_sv(b, (int64_t)(a->time_ns - w->prev_time)));
	if (rc)
		return fail(w, rc);
	w->prev_alloc_id = a->id;
	w->prev_time = a->time_ns;
	if (!(a->flags & HTR_ALLOC_WALKED)) { /* (no allocation: seen by a walk only) */
		w->allocs_since++;
		w->bytes_since += a->size;
		w->total_allocs++;
		w->total_bytes += a->size;
	}
	note_time(w, a->time_ns);
	return emit(w, 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void count_deaths(struct htr_writer *w, uint32_t gc, uint32_t n)
{
	/* Deaths may name a GC already ended (late batches): find it. */
	for (uint32_t i = w->ngcs; i-- > 0;) {
		if (w->gcs[i].gc == gc) {
			w->gcs[i].deaths += n;
			return;
		}
		if (w->gcs[i].gc < gc)
			break;
	}
	if (w->gc_in_progress && w->pending.gc == gc)
		w->pending.deaths += n;
}

int htr_write_deaths(struct htr_writer *w, uint32_t gc, uint32_t count, const uint64_t *ids)
{
	int rc = 0;
	if (!w->sort_tmp) {
		w->sort_tmp = malloc(HTR_MAX_CHUNK * sizeof(uint64_t));
		if (!w->sort_tmp)
			return fail(w, -ENOMEM);
	}
	while (count) {
		uint32_t n = count > HTR_MAX_CHUNK ? HTR_MAX_CHUNK : count;
		memcpy(w->sort_tmp, ids, n * sizeof(uint64_t));
		qsort(w->sort_tmp, n, sizeof(uint64_t), cmp_u64);
		rc = frame_begin(w, HTR_FRAME_EVENTS);
		if (rc)
			return fail(w, rc);
		struct buf *b = &w->scratch;
		buf_reset(b);
		PUT(buf_putc(b, HTR_EV_DEATHS));
		PUT(buf_put_uv(b, gc));
		PUT(buf_put_uv(b, n));
		uint64_t prev = 0;
		for (uint32_t i = 0; i < n; i++) {
			PUT(buf_put_uv(b, w->sort_tmp[i] - prev));
			prev = w->sort_tmp[i];
		}
		if (rc)
			return fail(w, rc);
		rc = emit(w, 0);
		if (rc)
			return rc;
		if (gc < w->frame_min_death_gc)
			w->frame_min_death_gc = gc;
		count_deaths(w, gc, n);
		w->total_deaths += n;
		ids += n;
		count -= n;
	}
	return 0;
}

/* Format 1.2's reachable summary (GC_END, GC_SUMMARY): objects + 1 and
 * bytes + 1, 0 = not recorded (htr_reader.c, decode_reachable). */
static int put_reachable(struct buf *b, uint32_t flags, uint64_t objects, uint64_t bytes)
{
	int known = (flags & HTR_GC_HAS_REACHABLE) != 0;
	int rc = 0;
	PUT(buf_put_uv(b, known ? objects + 1 : 0));
	PUT(buf_put_uv(b, known ? bytes + 1 : 0));
	return rc;
}

/* g's flags carry HTR_GC_HAS_REACHABLE only where the layout has the
 * summary (htr_write_gc_end clears it for minor < 2). */
static int put_gc(struct buf *b, uint16_t minor, uint32_t type, const struct htr_gc_event *g)
{
	int rc = 0;
	PUT(buf_putc(b, (uint8_t)type));
	PUT(buf_put_uv(b, g->gc));
	PUT(buf_put_uv(b, g->time_ns));
	PUT(buf_put_uv(b, g->used + 1));      /* UINT64_MAX (unknown) -> 0 */
	PUT(buf_put_uv(b, g->capacity + 1));
	if (type == HTR_EV_GC_START) {
		PUT(buf_put_uv(b, g->flags & ~(uint32_t)HTR_GC_HAS_REACHABLE));
		PUT(buf_put_str(b, g->cause ? g->cause : ""));
		if (minor >= 3)
			PUT(buf_put_str(b, g->collector ? g->collector : ""));
		return rc;
	}
	PUT(buf_put_uv(b, g->flags));
	if (minor >= 2) /* the older layout (tests) has no reachable summary */
		PUT(put_reachable(b, g->flags, g->reachable_objects, g->reachable_bytes));
	return rc;
}

int htr_write_gc_start(struct htr_writer *w, const struct htr_gc_event *g)
{
	if (w->gc_in_progress || (w->ngcs && g->gc <= w->gcs[w->ngcs - 1].gc))
		return fail(w, -EINVAL);
	int rc = check_str(g->cause);
	if (!rc)
		rc = check_str(g->collector);
	if (rc)
		return fail(w, rc);
	buf_reset(&w->scratch);
	rc = put_gc(&w->scratch, w->minor, HTR_EV_GC_START, g);
	if (rc)
		return fail(w, rc);
	rc = emit(w, 0);
	if (rc)
		return rc;
	note_time(w, g->time_ns);
	memset(&w->pending, 0, sizeof(w->pending));
	w->pending.gc = g->gc;
	w->pending.start_ns = g->time_ns;
	w->pending.used_before = g->used;
	w->pending.capacity = g->capacity;
	w->pending.flags = g->flags & ~(uint32_t)HTR_GC_HAS_REACHABLE;
	snprintf(w->pending.cause, sizeof(w->pending.cause), "%s", g->cause ? g->cause : "");
	snprintf(w->pending.collector, sizeof(w->pending.collector), "%s", g->collector ? g->collector : "");
	w->gc_in_progress = 1;
	return 0;
}

int htr_write_roots(struct htr_writer *w, uint32_t gc, uint32_t count, const struct htr_root *roots)
{
	if (!w->gc_in_progress || gc != w->pending.gc)
		return fail(w, -EINVAL);
	while (count) {
		uint32_t n = count > HTR_MAX_CHUNK ? HTR_MAX_CHUNK : count;
		int rc = 0;
		struct buf *b = &w->scratch;
		buf_reset(b);
		PUT(buf_putc(b, HTR_EV_ROOTS));
		PUT(buf_put_uv(b, gc));
		PUT(buf_put_uv(b, n));
		for (uint32_t i = 0; i < n; i++) {
			const struct htr_root *r = &roots[i];
			if (r->kind < 1 || r->kind > HTR_ROOT_KIND_MAX)
				return fail(w, -EINVAL);
			PUT(buf_putc(b, (uint8_t)r->kind));
			PUT(buf_put_uv(b, r->object));
			switch (r->kind) {
			case HTR_ROOT_STATIC:
				PUT(buf_put_uv(b, r->type));
				PUT(buf_put_uv(b, r->field));
				break;
			case HTR_ROOT_THREAD:
			case HTR_ROOT_NATIVE_STACK:
			case HTR_ROOT_THREAD_BLOCK:
				PUT(buf_put_uv(b, r->thread));
				break;
			case HTR_ROOT_LOCAL:
				PUT(buf_put_uv(b, r->thread));
				PUT(buf_put_uv(b, r->method));
				PUT(buf_put_uv(b, r->depth));
				PUT(buf_put_uv(b, r->slot));
				break;
			case HTR_ROOT_CODE_BLOB:
				PUT(buf_put_uv(b, r->method));
				break;
			case HTR_ROOT_JNI_LOCAL:
				PUT(buf_put_uv(b, r->thread));
				PUT(buf_put_uv(b, r->depth));
				break;
			default:
				break;
			}
		}
		if (rc)
			return fail(w, rc);
		rc = emit_in(w, 0, HTR_FRAME_GRAPH);
		if (rc)
			return rc;
		roots += n;
		count -= n;
	}
	return 0;
}

int htr_write_graph_object(struct htr_writer *w, uint64_t id, uint32_t nrefs,
			   const struct htr_ref *refs)
{
	if (!w->gc_in_progress)
		return fail(w, -EINVAL);
	do {
		uint32_t n = nrefs > HTR_MAX_CHUNK ? HTR_MAX_CHUNK : nrefs;
		int rc = frame_begin(w, HTR_FRAME_GRAPH); /* resets prev_graph_id */
		if (rc)
			return rc;
		struct buf *b = &w->scratch;
		buf_reset(b);
		PUT(buf_putc(b, HTR_EV_GRAPH_OBJ));
		PUT(buf_put_sv(b, (int64_t)(id - w->prev_graph_id)));
		PUT(buf_put_uv(b, n));
		uint32_t prev_slot = 0;
		for (uint32_t i = 0; i < n; i++) {
			PUT(buf_put_sv(b, (int64_t)refs[i].slot - (int64_t)prev_slot));
			PUT(buf_put_sv(b, (int64_t)(refs[i].target - id)));
			prev_slot = refs[i].slot;
		}
		if (rc)
			return fail(w, rc);
		rc = emit_in(w, 0, HTR_FRAME_GRAPH);
		if (rc)
			return rc;
		w->prev_graph_id = id;
		if (n) /* refs may be NULL when there are none */
			refs += n;
		nrefs -= n;
	} while (nrefs);
	return 0;
}

static int gcs_push(struct htr_writer *w, const struct htr_gc_summary *g)
{
	if (array_reserve((void **)&w->gcs, &w->gcs_cap, (uint64_t)w->ngcs + 1, sizeof(*w->gcs)))
		return fail(w, -ENOMEM);
	w->gcs[w->ngcs++] = *g;
	return 0;
}

int htr_write_gc_end(struct htr_writer *w, const struct htr_gc_event *ev)
{
	if (!w->gc_in_progress || ev->gc != w->pending.gc)
		return fail(w, -EINVAL);
	if ((ev->flags & HTR_GC_HAS_REACHABLE) &&
	    (!(ev->flags & HTR_GC_HAS_GRAPH) || ev->reachable_objects == UINT64_MAX ||
	     ev->reachable_bytes == UINT64_MAX))
		return fail(w, -EINVAL);
	if ((ev->flags & HTR_GC_GRAPH_DROPPED) && (ev->flags & HTR_GC_HAS_GRAPH))
		return fail(w, -EINVAL);
	struct htr_gc_event e = *ev;
	const struct htr_gc_event *g = &e;
	if (w->minor < 2) /* the older layout (tests): no reachable summary */
		e.flags &= ~(uint32_t)HTR_GC_HAS_REACHABLE;
	buf_reset(&w->scratch);
	int rc = put_gc(&w->scratch, w->minor, HTR_EV_GC_END, g);
	if (rc)
		return fail(w, rc);
	rc = emit(w, 0);
	if (rc)
		return rc;
	note_time(w, g->time_ns);
	struct htr_gc_summary s = w->pending;
	s.end_ns = g->time_ns;
	s.used_after = g->used;
	if (g->capacity != UINT64_MAX)
		s.capacity = g->capacity;
	s.flags |= g->flags;
	s.frame = w->nframes; /* the frame about to be closed */
	s.allocs = w->allocs_since;
	s.alloc_bytes = w->bytes_since;
	if (g->flags & HTR_GC_HAS_REACHABLE) {
		s.reachable_objects = g->reachable_objects;
		s.reachable_bytes = g->reachable_bytes;
	}
	w->allocs_since = w->bytes_since = 0;
	w->gc_in_progress = 0;
	rc = gcs_push(w, &s);
	if (rc)
		return rc;
	return frame_end(w);
}

int htr_write_count_site(struct htr_writer *w, uint32_t id, uint32_t method, uint32_t bci, int32_t line,
			 const char *type)
{
	int rc = check_str(type);
	if (rc)
		return fail(w, rc);
	struct buf *b = &w->scratch;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_COUNT_SITE));
	PUT(buf_put_uv(b, id));
	PUT(buf_put_uv(b, method));
	PUT(buf_put_uv(b, bci));
	PUT(buf_put_uv(b, line < 0 ? 0 : (uint64_t)line + 1));
	PUT(buf_put_str(b, type ? type : ""));
	if (rc)
		return fail(w, rc);
	return emit(w, 1);
}

/* One COUNT_CALLERS event of n (at most HTR_MAX_CHUNK) entries. */
static int put_callers(struct buf *b, uint32_t n, const struct htr_count_caller *c)
{
	int rc = 0;
	PUT(buf_putc(b, HTR_EV_COUNT_CALLERS));
	PUT(buf_put_uv(b, n));
	for (uint32_t i = 0; i < n; i++) {
		PUT(buf_put_uv(b, c[i].site));
		PUT(buf_put_uv(b, c[i].method));
		PUT(buf_put_uv(b, c[i].bci));
		PUT(buf_put_uv(b, c[i].line < 0 ? 0 : (uint64_t)c[i].line + 1));
		PUT(buf_put_uv(b, c[i].count));
	}
	return rc;
}

int htr_write_count_callers(struct htr_writer *w, uint32_t n, const struct htr_count_caller *c)
{
	if (w->minor < 4 || (n && !c))
		return fail(w, -EINVAL);
	while (n) {
		uint32_t k = n < HTR_MAX_CHUNK ? n : HTR_MAX_CHUNK;
		buf_reset(&w->scratch);
		int rc = put_callers(&w->scratch, k, c);
		if (rc)
			return fail(w, rc);
		/* a symbol: the footer repeats it, so a reader of the footer alone has it */
		if ((rc = emit(w, 1)))
			return rc;
		c += k;
		n -= k;
	}
	return 0;
}

/* One ALLOC_COUNTS event per chunk of at most HTR_MAX_CHUNK sites. */
static int put_counts(struct buf *b, uint32_t gc, uint32_t flags, uint64_t incr, uint64_t per_site, uint32_t n,
		      const uint32_t *sites, const int64_t *counts)
{
	int rc = 0;
	PUT(buf_putc(b, HTR_EV_ALLOC_COUNTS));
	PUT(buf_put_uv(b, gc));
	PUT(buf_put_uv(b, flags));
	PUT(buf_put_uv(b, incr));
	PUT(buf_put_uv(b, per_site));
	PUT(buf_put_uv(b, n));
	uint32_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		PUT(buf_put_uv(b, sites[i] - prev)); /* ascending: deltas */
		PUT(buf_put_sv(b, counts[i]));
		prev = sites[i];
	}
	return rc;
}

int htr_write_alloc_counts(struct htr_writer *w, uint32_t gc, uint32_t flags, uint64_t increments,
			   uint64_t per_site, uint32_t count, const uint32_t *sites, const int64_t *counts)
{
	for (uint32_t i = 0; i < count; i++) {
		if (i && sites[i] <= sites[i - 1])
			return fail(w, -EINVAL);
		if (sites[i] >= w->count_cap) {
			uint32_t cap = w->count_cap ? w->count_cap : 1024;
			while (cap <= sites[i])
				cap *= 2;
			int64_t *p = realloc(w->count_tot, cap * sizeof(*p));
			if (!p)
				return fail(w, -ENOMEM);
			memset(p + w->count_cap, 0, (cap - w->count_cap) * sizeof(*p));
			w->count_tot = p;
			w->count_cap = cap;
		}
		w->count_tot[sites[i]] += counts[i];
	}
	w->have_counts = 1;
	w->count_gc = gc;
	w->count_flags = flags;
	w->count_incr = increments;
	w->count_per_site = per_site;
	do {
		uint32_t n = count > HTR_MAX_CHUNK ? HTR_MAX_CHUNK : count;
		buf_reset(&w->scratch);
		int rc = put_counts(&w->scratch, gc, flags, increments, per_site, n, sites, counts);
		if (rc)
			return fail(w, rc);
		if ((rc = emit(w, 0)))
			return rc;
		sites += n;
		counts += n;
		count -= n;
	} while (count);
	return 0;
}

int htr_write_alloc_sample(struct htr_writer *w, const struct htr_alloc_sample *a)
{
	if (w->minor < 3 || a->kind == 0 || a->kind > HTR_SAMPLE_KIND_MAX)
		return fail(w, -EINVAL);
	struct buf *b = &w->scratch;
	int rc = 0;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_ALLOC_SAMPLE));
	PUT(buf_put_uv(b, a->time_ns));
	PUT(buf_put_uv(b, a->kind));
	PUT(buf_put_uv(b, (uint64_t)a->type + 1));
	PUT(buf_put_uv(b, (uint64_t)a->site + 1));
	PUT(buf_put_uv(b, a->thread));
	PUT(buf_put_uv(b, a->weight));
	PUT(buf_put_uv(b, a->size));
	if (rc)
		return fail(w, rc);
	w->alloc_samples++;
	note_time(w, a->time_ns);
	return emit(w, 0);
}

/* Strings of an old sample are cut to this many bytes (on a UTF-8
 * boundary is not needed: readers treat them as bytes), so that a path of
 * HTR_MAX_CHUNK objects stays well within one event. */
#define OLD_STR_MAX 200u

static int put_short_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > OLD_STR_MAX)
		n = OLD_STR_MAX;
	int rc = buf_put_uv(b, n);
	return rc ? rc : buf_put(b, s ? s : "", n);
}

int htr_write_old_sample(struct htr_writer *w, const struct htr_old_sample *o)
{
	/* An array length below -1 would be written as a value the reader
	 * refuses: refuse it here, where the caller can be named. */
	if (w->minor < 3 || o->npath > HTR_MAX_CHUNK || (o->npath && !o->path) || o->array_length < -1)
		return fail(w, -EINVAL);
	struct buf *b = &w->scratch;
	int rc = 0;
	buf_reset(b);
	PUT(buf_putc(b, HTR_EV_OLD_SAMPLE));
	PUT(buf_put_uv(b, o->time_ns));
	PUT(buf_put_uv(b, o->alloc_ns));
	PUT(buf_put_uv(b, o->age_ns));
	PUT(buf_put_uv(b, (uint64_t)o->type + 1));
	PUT(buf_put_uv(b, (uint64_t)o->site + 1));
	PUT(buf_put_uv(b, o->thread));
	PUT(buf_put_uv(b, (uint64_t)(o->array_length + 1)));
	PUT(buf_put_uv(b, o->heap_used == UINT64_MAX ? 0 : o->heap_used + 1));
	PUT(put_short_str(b, o->root_kind));
	PUT(put_short_str(b, o->root_desc));
	PUT(put_short_str(b, o->root_system));
	PUT(buf_put_uv(b, o->npath));
	for (uint32_t i = 0; i < o->npath; i++) {
		PUT(buf_put_uv(b, (uint64_t)o->path[i].type + 1));
		PUT(put_short_str(b, o->path[i].how));
		PUT(put_short_str(b, o->path[i].desc));
		PUT(buf_put_uv(b, o->path[i].skip));
	}
	if (rc)
		return fail(w, rc);
	w->old_samples++;
	note_time(w, o->time_ns);
	return emit(w, 0);
}

/* The footer's ALLOC_COUNTS: the totals of every site, in chunks. */
static int put_count_totals(struct htr_writer *w, struct buf *b)
{
	uint32_t ids[256];
	int64_t cnt[256];
	uint32_t n = 0;
	int rc = 0;
	for (uint32_t i = 0; i < w->count_cap && !rc; i++) {
		if (!w->count_tot[i])
			continue;
		ids[n] = i;
		cnt[n++] = w->count_tot[i];
		if (n == 256) {
			rc = put_counts(b, w->count_gc, w->count_flags, w->count_incr, w->count_per_site, n, ids, cnt);
			n = 0;
		}
	}
	if (!rc && (n || !w->count_cap)) /* at least one event carries the increments */
		rc = put_counts(b, w->count_gc, w->count_flags, w->count_incr, w->count_per_site, n, ids, cnt);
	return rc;
}

static int put_footer(struct htr_writer *w, struct buf *b)
{
	int rc = buf_put(b, w->symbols.data, w->symbols.len);
	if (!rc && w->have_counts)
		rc = put_count_totals(w, b);
	for (uint32_t i = 0; i < w->nframes; i++) {
		const struct frame_rec *f = &w->frames[i];
		PUT(buf_putc(b, HTR_EV_FRAME_ENTRY));
		PUT(buf_put_uv(b, f->offset));
		PUT(buf_put_uv(b, f->comp_len));
		PUT(buf_put_uv(b, f->raw_len));
		PUT(buf_put_uv(b, f->nevents));
		PUT(buf_put_uv(b, (uint64_t)f->min_death_gc + 1));
		PUT(buf_put_uv(b, f->kind));
		PUT(buf_put_uv(b, (uint64_t)f->graph_gc + 1));
	}
	for (uint32_t i = 0; i < w->ngcs; i++) {
		const struct htr_gc_summary *g = &w->gcs[i];
		PUT(buf_putc(b, HTR_EV_GC_SUMMARY));
		PUT(buf_put_uv(b, g->gc));
		PUT(buf_put_uv(b, g->frame));
		PUT(buf_put_uv(b, g->start_ns));
		PUT(buf_put_uv(b, g->end_ns));
		PUT(buf_put_uv(b, g->used_before + 1));
		PUT(buf_put_uv(b, g->used_after + 1));
		PUT(buf_put_uv(b, g->capacity + 1));
		PUT(buf_put_uv(b, g->flags));
		PUT(buf_put_uv(b, g->allocs));
		PUT(buf_put_uv(b, g->alloc_bytes));
		PUT(buf_put_uv(b, g->deaths));
		PUT(buf_put_str(b, g->cause));
		if (w->minor >= 2)
			PUT(put_reachable(b, g->flags, g->reachable_objects, g->reachable_bytes));
		if (w->minor >= 3)
			PUT(buf_put_str(b, g->collector));
	}
	if (w->minor >= 3) {
		PUT(buf_putc(b, HTR_EV_SAMPLE_TOTALS));
		PUT(buf_put_uv(b, w->alloc_samples));
		PUT(buf_put_uv(b, w->old_samples));
	}
	PUT(buf_putc(b, HTR_EV_TOTALS));
	PUT(buf_put_uv(b, w->total_allocs));
	PUT(buf_put_uv(b, w->total_bytes));
	PUT(buf_put_uv(b, w->total_deaths));
	PUT(buf_put_uv(b, w->first_ns == UINT64_MAX ? 0 : w->first_ns));
	PUT(buf_put_uv(b, w->last_ns));
	return rc;
}

static int write_footer(struct htr_writer *w)
{
	struct buf body;
	buf_init(&body);
	uint64_t off = w->pos;
	int rc = put_footer(w, &body);
	if (rc)
		goto out;
	rc = frame_begin(w, HTR_FRAME_FOOTER);
	if (rc)
		goto out;
	/* The footer's bytes go in unframed by emit(): its nevents stays 0,
	 * which readers take as "not counted" for footer frames. */
	rc = buf_put(&w->raw, body.data, body.len);
	if (rc)
		goto out;
	rc = frame_end(w);
	if (rc)
		goto out;
	uint8_t t[HTR_TRAILER_SIZE];
	put_le64(t, off);
	put_le64(t + 8, w->pos - off);
	memcpy(t + 16, HTR_TRAILER_MAGIC, 8);
	rc = write_all(w, t, sizeof(t));
out:
	buf_free(&body);
	return rc ? fail(w, rc) : 0;
}

int htr_writer_close(struct htr_writer *w)
{
	if (!w)
		return -EINVAL;
	int rc = w->err;
	if (!rc && w->gc_in_progress)
		rc = -EINVAL; /* a GC started and never ended */
	if (!rc)
		rc = frame_end(w); /* events after the last GC */
	if (!rc && !w->no_footer)
		rc = write_footer(w);
	if (!rc && !w->no_sync && fsync(w->fd) < 0 && errno != EINVAL)
		rc = -errno;
	if (close(w->fd) < 0 && !rc)
		rc = -errno;
	w->fd = -1;
	htr_writer_abandon(w);
	return rc;
}

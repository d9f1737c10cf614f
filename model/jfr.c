/* jfr.c - opening a JFR recording: the file, the chunks one after
 * another, and what is kept when a later chunk is cut or damaged.
 *
 * Each chunk is read in two passes: jfr_chunk_check reads its metadata,
 * indexes its constant pools and decodes every event against the
 * metadata, touching no table; only a chunk that passed is extracted
 * (jfr_chunk_extract), so that the tables never hold part of a damaged
 * chunk and extraction itself cannot meet damage.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "files.h"
#include "jfr_internal.h"
#include "progress.h"

static void ctx_free(struct jfr_chunk_ctx *c)
{
	jfr_meta_free(&c->meta);
	jfr_map_free(&c->pool);
	jfr_map_free(&c->cache);
	free(c->vals.v);
	free(c->handler);
	free(c->evcount);
	memset(&c->vals, 0, sizeof c->vals);
	c->handler = NULL;
	c->evcount = NULL;
}

/* The JDK's reader (ChunkParser) keeps the parsers, and with them the
 * time converter, of the chunk before when a chunk's metadata has the same
 * metadata id: its times are converted with that chunk's start and rate
 * (they differ by tens of ns from the chunk's own).  Done the same, so
 * that times agree with jfr print's to the ns; but only where the chunk
 * continues the one before (starts where it ended), so that recordings of
 * two JVMs concatenated, whose metadata ids may well be equal, each keep
 * their own clock.  (Nor are pool values carried over from the chunk
 * before, which the JDK does for keys it has resolved there: right within
 * one JVM, whose keys are global, and wrong across two, where it shows
 * the stack traces of the first JVM's events for the second's.) */
struct conv {
	int64_t meta_id, ticks, nanos, end_nanos;
	double divisor;
	int set;
};

static int read_chunk(struct jfr_recording *r, struct jfr_chunk *h, struct jfr_intern *in, struct buf *scratch,
		      struct conv *conv, struct htr_err *err)
{
	struct jfr_chunk_ctx c = {
		.rec = r, .hdr = h, .start = h->offset, .end = h->offset + h->size,
		.compressed = h->flags & 1, .scratch = scratch, .err = err, .intern = in,
		.path_budget = r->old_path.n + JFR_PATH_SLACK + h->size * JFR_PATH_PER_BYTE,
	};
	struct jfr_in mi = { .base = r->data, .pos = h->offset + h->meta_offset, .end = c.end,
			     .compressed = c.compressed, .err = err };
	int rc = jfr_meta_read(&c.meta, &mi, &r->strings);
	if (rc)
		goto out;
	struct conv next = { .meta_id = c.meta.id, .ticks = h->start_ticks, .nanos = h->start_nanos,
			     .divisor = (double)h->ticks_per_second / 1000000000.0, .set = 1 };
	if (conv->set && conv->meta_id == c.meta.id && conv->end_nanos == h->start_nanos)
		next = *conv;
	next.end_nanos = (int64_t)((uint64_t)h->start_nanos + (uint64_t)h->duration_nanos);
	c.conv_ticks = next.ticks;
	c.conv_nanos = next.nanos;
	c.divisor = next.divisor;
	c.handler = calloc(c.meta.ncls ? c.meta.ncls : 1, 1);
	c.evcount = calloc(c.meta.ncls ? c.meta.ncls : 1, sizeof *c.evcount);
	if (!c.handler || !c.evcount) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = jfr_chunk_check(&c)))
		goto out;
	if (!(rc = jfr_chunk_extract(&c)))
		*conv = next;
out:
	ctx_free(&c);
	return rc;
}

static int add_chunk(struct jfr_recording *r, const struct jfr_chunk *h)
{
	struct jfr_chunk *p = realloc(r->chunks, ((size_t)r->nchunks + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	r->chunks = p;
	r->chunks[r->nchunks++] = *h;
	return 0;
}

/* A problem after the first chunk: keep what was read, say what and
 * where. */
static void note_damage(struct jfr_recording *r, const struct htr_err *e)
{
	r->truncated = 1;
	r->damage = *e;
	snprintf(r->warning, sizeof r->warning, "%s: offset %llu: %s (read the %u complete chunk%s before it)",
		 r->path, (unsigned long long)e->offset, e->msg, r->nchunks, r->nchunks == 1 ? "" : "s");
}

/* GC ids are one JVM's: the young/old events of a run of chunks that
 * continue one another (each starts where the one before ended) name the
 * GCs of that run only, so two JVMs' recordings concatenated keep apart. */
static void join_generations(struct jfr_recording *r, struct jfr_intern *in, uint32_t from)
{
	for (uint32_t i = from; i < r->gcs.n; i++) {
		uint64_t g;
		if (jfr_map_get(&in->gen_by_gc, (uint64_t)r->gcs.gc_id[i], 0, &g))
			r->gcs.generation[i] = (uint8_t)g;
	}
	jfr_map_clear(&in->gen_by_gc);
}

static void finish(struct jfr_recording *r)
{
	if (r->nchunks) {
		const struct jfr_chunk *l = &r->chunks[r->nchunks - 1];
		r->start_ns = r->chunks[0].start_nanos;
		r->end_ns = (int64_t)((uint64_t)l->start_nanos + (uint64_t)l->duration_nanos);
	}
}

static void intern_free(struct jfr_intern *in)
{
	jfr_map_free(&in->classes);
	jfr_map_free(&in->methods);
	jfr_map_free(&in->stacks);
	jfr_map_free(&in->threads);
	jfr_map_free(&in->events);
	jfr_map_free(&in->gen_by_gc);
}

static int read_all(struct jfr_recording *r, struct htr_err *err)
{
	struct jfr_intern in = { 0 };
	struct conv conv = { 0 };
	struct buf scratch;
	uint64_t pos = 0;
	uint32_t run_gcs = 0;      /* the first GC of the current run of chunks */
	int rc = 0;
	buf_init(&scratch);
	struct progress *pr = progress_here();
	progress_phase(pr, r->size, "reading the recording's chunks (bytes)");
	while (pos < r->size) {
		struct jfr_chunk h;
		struct htr_err e = { 0 };
		rc = jfr_chunk_header(r->data, r->size, pos, &h, &e);
		if (!rc && r->nchunks && h.start_nanos != conv.end_nanos) {
			join_generations(r, &in, run_gcs);
			run_gcs = r->gcs.n;
		}
		if (!rc)
			rc = read_chunk(r, &h, &in, &scratch, &conv, &e);
		if (rc == -ENOMEM)
			goto out;
		if (rc) {
			if (!r->nchunks) {  /* nothing to keep */
				*err = e;
				if (rc == -ENODATA)
					rc = -EBADMSG;
				goto out;
			}
			note_damage(r, &e);
			rc = 0;
			break;
		}
		if ((rc = add_chunk(r, &h)))
			goto out;
		pos += h.size;
		r->read_bytes = pos;
		progress_set(pr, pos);
	}
	join_generations(r, &in, run_gcs);
	if (!r->size)
		rc = htr_errf(err, -EPROTO, 0, "empty file, not a JFR recording");
	else
		finish(r);
out:
	intern_free(&in);
	buf_free(&scratch);
	return rc;
}

static int open_common(struct jfr_recording *r, struct jfr_recording **out, struct htr_err *err)
{
	r->jvm = (struct jfr_jvm){ JFR_NONE, JFR_NONE, JFR_NONE, JFR_NONE, JFR_NONE, -1, -1 };
	int rc = read_all(r, err);
	if (rc) {
		jfr_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int jfr_open_buffer(struct jfr_recording **out, const uint8_t *data, uint64_t size, const char *name,
		    struct htr_err *err)
{
	struct jfr_recording *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r || !(r->path = strdup(name ? name : "(buffer)"))) {
		free(r);
		return htr_errf_as(err, HTR_ERR_FILE, -ENOMEM, "out of memory");
	}
	r->data = data;
	r->size = size;
	return open_common(r, out, err);
}

int jfr_open(struct jfr_recording **out, const char *path, struct htr_err *err)
{
	struct stat st;
	const char *what;
	*out = NULL;
	int fd = file_open_regular(path, &st, &what);
	if (fd < 0)
		return htr_errf_as(err, HTR_ERR_FILE, fd, "%s", what);
	struct jfr_recording *r = calloc(1, sizeof *r);
	if (!r || !(r->path = strdup(path))) {
		free(r);
		close(fd);
		return htr_errf_as(err, HTR_ERR_FILE, -ENOMEM, "out of memory");
	}
	r->size = (uint64_t)st.st_size;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = -errno;
			close(fd);
			jfr_close(r);
			return htr_errf_as(err, HTR_ERR_FILE, e, "cannot map: %s", strerror(-e));
		}
		r->data = m;
		r->mapped = 1;
	}
	close(fd);
	return open_common(r, out, err);
}

#define FREE_ALL(...) do { \
		void *ps_[] = { __VA_ARGS__ }; \
		for (size_t i_ = 0; i_ < sizeof ps_ / sizeof ps_[0]; i_++) \
			free(ps_[i_]); \
	} while (0)

void jfr_close(struct jfr_recording *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->data, r->size);
	free(r->path);
	free(r->chunks);
	jfr_strings_free(&r->strings);
	FREE_ALL(r->classes.name, r->classes.loader);
	FREE_ALL(r->methods.cls, r->methods.name, r->methods.descriptor);
	FREE_ALL(r->stacks.frame_off, r->stacks.truncated, r->stacks.method, r->stacks.line, r->stacks.bci,
		 r->stacks.type);
	FREE_ALL(r->threads.java_name, r->threads.os_name, r->threads.java_id, r->threads.os_id);
	FREE_ALL(r->gcs.gc_id, r->gcs.name, r->gcs.cause, r->gcs.start_ns, r->gcs.duration_ns, r->gcs.sum_pauses_ns,
		 r->gcs.longest_pause_ns, r->gcs.generation);
	FREE_ALL(r->heap.gc_id, r->heap.when, r->heap.start_ns, r->heap.heap_used, r->heap.committed,
		 r->heap.reserved);
	FREE_ALL(r->pauses.gc_id, r->pauses.name, r->pauses.start_ns, r->pauses.duration_ns);
	FREE_ALL(r->allocs.kind, r->allocs.start_ns, r->allocs.cls, r->allocs.stack, r->allocs.thread,
		 r->allocs.weight, r->allocs.tlab_size);
	FREE_ALL(r->old.start_ns, r->old.alloc_ns, r->old.age_ns, r->old.heap_usage, r->old.array_elements,
		 r->old.stack, r->old.thread, r->old.root_description, r->old.root_system, r->old.root_type,
		 r->old.path_off);
	FREE_ALL(r->old_path.address, r->old_path.cls, r->old_path.description, r->old_path.ref_field,
		 r->old_path.ref_modifiers, r->old_path.ref_array_size, r->old_path.ref_index, r->old_path.ref_skip);
	FREE_ALL(r->settings.type_id, r->settings.type_name, r->settings.name, r->settings.value);
	FREE_ALL(r->recordings.id, r->recordings.name, r->recordings.destination, r->recordings.max_age_ns,
		 r->recordings.max_size, r->recordings.start_ns, r->recordings.duration_ns);
	FREE_ALL(r->event_counts.name, r->event_counts.count);
	free(r);
}

int jfr_file_is_recording(const char *path)
{
	uint8_t m[4];
	const char *what;
	int fd = file_open_regular(path, NULL, &what); /* never a FIFO's open */
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, m, 4);
	close(fd);
	return k == 4 && memcmp(m, JFR_MAGIC, 4) == 0;
}

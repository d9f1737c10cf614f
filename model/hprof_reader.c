/* hprof_reader.c - see hprof_reader.h. */
#include "hprof_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

/* header: "JAVA PROFILE 1.0.N\0", u4 id size, u4 time high, u4 time low */
#define MAGIC_LEN 19
#define HEADER_LEN (MAGIC_LEN + 12)
#define RECORD_HEADER_LEN 9   /* u1 tag, u4 time, u4 length */

/* Only a regular file can be a dump: anything else is left to the trace
 * reader, which refuses it by its kind (and a FIFO is never opened). */
int hprof_file_is_dump(const char *path)
{
	char buf[sizeof(HPROF_MAGIC_PREFIX) - 1];
	const char *what;
	int fd = file_open_regular(path, NULL, &what);
	if (fd < 0)
		return 0;
	ssize_t k = pread(fd, buf, sizeof buf, 0);
	close(fd);
	return k == (ssize_t)sizeof buf && memcmp(buf, HPROF_MAGIC_PREFIX, sizeof buf) == 0;
}

static int check_header(struct hprof_file *f, struct htr_err *err)
{
	const size_t plen = sizeof(HPROF_MAGIC_PREFIX) - 1;
	if (f->size < plen || memcmp(f->map, HPROF_MAGIC_PREFIX, plen) != 0)
		return htr_errf(err, -EPROTO, 0, "not an HPROF heap dump (no \"JAVA PROFILE 1.0.\" header)");
	if (f->size < HEADER_LEN)
		return htr_errf(err, -EBADMSG, 0, "HPROF header cut off: the file has %llu bytes, the header needs %d",
				(unsigned long long)f->size, HEADER_LEN);
	char v = (char)f->map[plen];
	if ((v != '1' && v != '2' && v != '3') || f->map[plen + 1] != 0)
		return htr_errf(err, -EPROTO, 0, "HPROF version \"1.0.%.*s\" is not supported (1.0.1, 1.0.2 and 1.0.3 are)",
				4, (const char *)f->map + plen);
	f->minor = (uint32_t)(v - '0');
	uint32_t idsz = hprof_u4(f, MAGIC_LEN);
	if (idsz != 4 && idsz != 8)
		return htr_errf(err, -EBADMSG, MAGIC_LEN, "identifier size %u in the HPROF header (must be 4 or 8)", idsz);
	f->id_size = idsz;
	f->time_ms = hprof_u8(f, MAGIC_LEN + 4);
	f->first_record = HEADER_LEN;
	return 0;
}

int hprof_open(struct hprof_file **out, const char *path, struct htr_err *err)
{
	*out = NULL;
	struct hprof_file *f = calloc(1, sizeof *f);
	int rc = -ENOMEM, fd = -1;
	if (!f || !(f->path = strdup(path))) {
		htr_errf(err, rc, 0, "out of memory");
		goto fail;
	}
	struct stat st;
	const char *what;
	fd = file_open_regular(path, &st, &what);
	if (fd < 0) {
		rc = fd;
		if (rc == -EISDIR || rc == -EINVAL)
			htr_errf_as(err, HTR_ERR_FILE, rc, "%s, not a regular file", what);
		else
			htr_errf_as(err, HTR_ERR_FILE, rc, "cannot open: %s", what);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	if (f->size) {
		void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			rc = -errno;
			htr_errf(err, rc, 0, "cannot map the file: %s", strerror(errno));
			goto fail;
		}
		f->map = m;
		/* passes read front to back */
		(void)madvise(m, f->size, MADV_SEQUENTIAL);
	}
	close(fd);
	fd = -1;
	if ((rc = check_header(f, err)))
		goto fail;
	*out = f;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	hprof_close(f);
	return rc;
}

void hprof_release(const struct hprof_file *f, uint64_t from, uint64_t to)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (to > f->size)
		to = f->size;
	from = (from + page - 1) / page * page;
	to = to / page * page;
	if (!f->map || from >= to)
		return;
	/* a read-only private mapping: dropping pages loses nothing */
	(void)madvise((void *)(f->map + from), to - from, MADV_DONTNEED);
}

void hprof_release_behind(const struct hprof_file *f, uint64_t *released, uint64_t pos)
{
	if (pos < *released + HPROF_RELEASE_STEP)
		return;
	hprof_release(f, *released, pos);
	*released = pos;
}

void hprof_close(struct hprof_file *f)
{
	if (!f)
		return;
	if (f->map)
		munmap((void *)f->map, f->size);
	free(f->path);
	free(f);
}

const char *hprof_tag_name(uint32_t tag)
{
	switch (tag) {
	case HPROF_UTF8: return "UTF8";
	case HPROF_LOAD_CLASS: return "LOAD_CLASS";
	case HPROF_UNLOAD_CLASS: return "UNLOAD_CLASS";
	case HPROF_FRAME: return "FRAME";
	case HPROF_TRACE: return "TRACE";
	case HPROF_ALLOC_SITES: return "ALLOC_SITES";
	case HPROF_HEAP_SUMMARY: return "HEAP_SUMMARY";
	case HPROF_START_THREAD: return "START_THREAD";
	case HPROF_END_THREAD: return "END_THREAD";
	case HPROF_HEAP_DUMP: return "HEAP_DUMP";
	case HPROF_CPU_SAMPLES: return "CPU_SAMPLES";
	case HPROF_CONTROL_SETTINGS: return "CONTROL_SETTINGS";
	case HPROF_HEAP_DUMP_SEGMENT: return "HEAP_DUMP_SEGMENT";
	case HPROF_HEAP_DUMP_END: return "HEAP_DUMP_END";
	default: return "unknown";
	}
}

const char *hprof_sub_tag_name(uint32_t tag)
{
	switch (tag) {
	case HPROF_ROOT_UNKNOWN: return "ROOT_UNKNOWN";
	case HPROF_ROOT_JNI_GLOBAL: return "ROOT_JNI_GLOBAL";
	case HPROF_ROOT_JNI_LOCAL: return "ROOT_JNI_LOCAL";
	case HPROF_ROOT_JAVA_FRAME: return "ROOT_JAVA_FRAME";
	case HPROF_ROOT_NATIVE_STACK: return "ROOT_NATIVE_STACK";
	case HPROF_ROOT_STICKY_CLASS: return "ROOT_STICKY_CLASS";
	case HPROF_ROOT_THREAD_BLOCK: return "ROOT_THREAD_BLOCK";
	case HPROF_ROOT_MONITOR_USED: return "ROOT_MONITOR_USED";
	case HPROF_ROOT_THREAD_OBJECT: return "ROOT_THREAD_OBJECT";
	case HPROF_CLASS_DUMP: return "CLASS_DUMP";
	case HPROF_INSTANCE_DUMP: return "INSTANCE_DUMP";
	case HPROF_OBJ_ARRAY_DUMP: return "OBJ_ARRAY_DUMP";
	case HPROF_PRIM_ARRAY_DUMP: return "PRIM_ARRAY_DUMP";
	default: return "unknown";
	}
}

const char *hprof_type_name(uint32_t type)
{
	switch (type) {
	case HPROF_T_OBJECT: return "object";
	case HPROF_T_BOOLEAN: return "boolean";
	case HPROF_T_CHAR: return "char";
	case HPROF_T_FLOAT: return "float";
	case HPROF_T_DOUBLE: return "double";
	case HPROF_T_BYTE: return "byte";
	case HPROF_T_SHORT: return "short";
	case HPROF_T_INT: return "int";
	case HPROF_T_LONG: return "long";
	default: return "unknown";
	}
}

uint32_t hprof_type_size(const struct hprof_file *f, uint32_t type)
{
	switch (type) {
	case HPROF_T_OBJECT: return f->id_size;
	case HPROF_T_BOOLEAN: case HPROF_T_BYTE: return 1;
	case HPROF_T_CHAR: case HPROF_T_SHORT: return 2;
	case HPROF_T_FLOAT: case HPROF_T_INT: return 4;
	case HPROF_T_DOUBLE: case HPROF_T_LONG: return 8;
	default: return 0;
	}
}

uint64_t hprof_value(const struct hprof_file *f, uint64_t off, uint32_t type)
{
	switch (hprof_type_size(f, type)) {
	case 1: return hprof_u1(f, off);
	case 2: return hprof_u2(f, off);
	case 4: return hprof_u4(f, off);
	case 8: return hprof_u8(f, off);
	default: return 0;
	}
}

int hprof_next_record(const struct hprof_file *f, uint64_t *pos, struct hprof_record *r)
{
	uint64_t at = *pos;
	if (at >= f->size)
		return 0;
	memset(r, 0, sizeof *r);
	r->offset = at;
	r->tag = f->map[at];
	if (f->size - at < RECORD_HEADER_LEN) {
		r->truncated = 1;
		r->body = f->size;
		*pos = f->size;
		return 1;
	}
	r->time_us = hprof_u4(f, at + 1);
	r->declared_len = hprof_u4(f, at + 5);
	r->body = at + RECORD_HEADER_LEN;
	uint64_t avail = f->size - r->body;
	if (r->declared_len > avail) {
		r->truncated = 1;
		r->len = avail;
	} else {
		r->len = r->declared_len;
	}
	*pos = r->body + r->len;
	return 1;
}

/* Cursor over one sub-record: every read checks the bytes are there. */
struct hcur {
	const struct hprof_file *f;
	uint64_t pos, end;
	int short_read;
};

static int need(struct hcur *c, uint64_t n)
{
	if (c->end - c->pos < n) {
		c->short_read = 1;
		return 0;
	}
	return 1;
}

static uint32_t get_u1(struct hcur *c)
{
	if (!need(c, 1))
		return 0;
	return hprof_u1(c->f, c->pos++);
}

static uint32_t get_u2(struct hcur *c)
{
	if (!need(c, 2))
		return 0;
	uint32_t v = hprof_u2(c->f, c->pos);
	c->pos += 2;
	return v;
}

static uint32_t get_u4(struct hcur *c)
{
	if (!need(c, 4))
		return 0;
	uint32_t v = hprof_u4(c->f, c->pos);
	c->pos += 4;
	return v;
}

static uint64_t get_id(struct hcur *c)
{
	if (!need(c, c->f->id_size))
		return 0;
	uint64_t v = hprof_id(c->f, c->pos);
	c->pos += c->f->id_size;
	return v;
}

static void skip(struct hcur *c, uint64_t n)
{
	if (need(c, n))
		c->pos += n;
	else
		c->pos = c->end;
}

static int bad_type(struct hcur *c, const struct hprof_record *rec, const struct hprof_sub *s,
		    uint32_t type, const char *what, struct htr_err *err)
{
	return htr_errf(err, -EBADMSG, c->pos - 1,
			"%s at offset %llu in record %s (0x%02x) at offset %llu: %s has invalid basic type %u",
			hprof_sub_tag_name(s->tag), (unsigned long long)s->offset,
			hprof_tag_name(rec->tag), rec->tag, (unsigned long long)rec->offset, what, type);
}

/* CLASS_DUMP: the constant pool and the statics carry values of their own
 * types, so the record's length is only known by walking it. */
static int decode_class_dump(struct hcur *c, const struct hprof_record *rec, struct hprof_sub *s,
			     struct htr_err *err)
{
	const struct hprof_file *f = c->f;
	s->id = get_id(c);
	s->trace_serial = get_u4(c);
	s->cls.super_id = get_id(c);
	s->cls.loader_id = get_id(c);
	skip(c, 4ull * f->id_size); /* signers, protection domain, two reserved */
	s->cls.instance_size = get_u4(c);
	uint32_t ncp = get_u2(c);
	for (uint32_t i = 0; i < ncp && !c->short_read; i++) {
		skip(c, 2);
		uint32_t t = get_u1(c);
		if (!c->short_read && !hprof_type_size(f, t))
			return bad_type(c, rec, s, t, "a constant pool entry", err);
		skip(c, hprof_type_size(f, t));
	}
	s->cls.nstatics = get_u2(c);
	s->cls.statics = c->pos;
	for (uint32_t i = 0; i < s->cls.nstatics && !c->short_read; i++) {
		skip(c, f->id_size);
		uint32_t t = get_u1(c);
		if (!c->short_read && !hprof_type_size(f, t))
			return bad_type(c, rec, s, t, "a static field", err);
		skip(c, hprof_type_size(f, t));
	}
	s->cls.nfields = get_u2(c);
	s->cls.fields = c->pos;
	for (uint32_t i = 0; i < s->cls.nfields && !c->short_read; i++) {
		skip(c, f->id_size);
		uint32_t t = get_u1(c);
		if (!c->short_read && !hprof_type_size(f, t))
			return bad_type(c, rec, s, t, "an instance field", err);
	}
	return 0;
}

static int decode_body(struct hcur *c, const struct hprof_record *rec, struct hprof_sub *s,
		       struct htr_err *err)
{
	const struct hprof_file *f = c->f;
	s->frame = UINT32_MAX;
	switch (s->tag) {
	case HPROF_ROOT_UNKNOWN:
	case HPROF_ROOT_STICKY_CLASS:
	case HPROF_ROOT_MONITOR_USED:
		s->id = get_id(c);
		return 0;
	case HPROF_ROOT_JNI_GLOBAL:
		s->id = get_id(c);
		skip(c, f->id_size); /* the JNI global reference's own id */
		return 0;
	case HPROF_ROOT_JNI_LOCAL:
	case HPROF_ROOT_JAVA_FRAME:
		s->id = get_id(c);
		s->thread_serial = get_u4(c);
		s->frame = get_u4(c);
		return 0;
	case HPROF_ROOT_NATIVE_STACK:
	case HPROF_ROOT_THREAD_BLOCK:
		s->id = get_id(c);
		s->thread_serial = get_u4(c);
		return 0;
	case HPROF_ROOT_THREAD_OBJECT:
		s->id = get_id(c);
		s->thread_serial = get_u4(c);
		s->trace_serial = get_u4(c);
		return 0;
	case HPROF_CLASS_DUMP:
		return decode_class_dump(c, rec, s, err);
	case HPROF_INSTANCE_DUMP:
		s->id = get_id(c);
		s->trace_serial = get_u4(c);
		s->class_id = get_id(c);
		s->length = get_u4(c);
		s->data = c->pos;
		skip(c, s->length);
		return 0;
	case HPROF_OBJ_ARRAY_DUMP:
		s->id = get_id(c);
		s->trace_serial = get_u4(c);
		s->length = get_u4(c);
		s->class_id = get_id(c);
		s->data = c->pos;
		skip(c, (uint64_t)s->length * f->id_size);
		return 0;
	case HPROF_PRIM_ARRAY_DUMP: {
		s->id = get_id(c);
		s->trace_serial = get_u4(c);
		s->length = get_u4(c);
		s->elem_type = (uint8_t)get_u1(c);
		s->data = c->pos;
		if (c->short_read)
			return 0;
		uint32_t esz = hprof_type_size(f, s->elem_type);
		if (!esz || s->elem_type == HPROF_T_OBJECT)
			return bad_type(c, rec, s, s->elem_type, "the element type", err);
		skip(c, (uint64_t)s->length * esz);
		return 0;
	}
	default:
		return htr_errf(err, -EBADMSG, s->offset,
				"unknown heap dump sub-record tag 0x%02x in record %s (0x%02x) at offset %llu",
				s->tag, hprof_tag_name(rec->tag), rec->tag, (unsigned long long)rec->offset);
	}
}

/* The three object sub-records make up nearly all of a heap dump: decode
 * them without the per-field checks when their fixed part is present
 * (only the variable part needs a check then).  Returns 1 when done. */
static int decode_object_fast(const struct hprof_file *f, uint64_t pos, uint64_t end,
			      struct hprof_sub *s)
{
	uint32_t ids = f->id_size, tag = f->map[pos];
	uint64_t p = pos + 1, avail = end - pos;
	uint64_t fixed = 1 + 2ull * ids + 8;   /* id, u4, id|u4, u4|id: same size for all three */
	if ((tag != HPROF_INSTANCE_DUMP && tag != HPROF_OBJ_ARRAY_DUMP && tag != HPROF_PRIM_ARRAY_DUMP) ||
	    avail < fixed + 1)
		return 0;
	s->tag = (uint8_t)tag;
	s->offset = pos;
	s->frame = UINT32_MAX;
	s->id = hprof_id(f, p);
	s->trace_serial = hprof_u4(f, p + ids);
	uint64_t body;
	if (tag == HPROF_INSTANCE_DUMP) {
		s->class_id = hprof_id(f, p + ids + 4);
		s->length = hprof_u4(f, p + 2 * ids + 4);
		s->data = pos + fixed;
		body = s->length;
	} else if (tag == HPROF_OBJ_ARRAY_DUMP) {
		s->length = hprof_u4(f, p + ids + 4);
		s->class_id = hprof_id(f, p + ids + 8);
		s->data = pos + fixed;
		body = (uint64_t)s->length * ids;
	} else {
		s->length = hprof_u4(f, p + ids + 4);
		s->elem_type = f->map[p + ids + 8];
		s->data = pos + 1 + ids + 9;
		uint32_t esz = hprof_type_size(f, s->elem_type);
		if (!esz || s->elem_type == HPROF_T_OBJECT)
			return 0;   /* the slow path reports it */
		body = (uint64_t)s->length * esz;
	}
	if (end - s->data < body)
		return 0;
	s->end = s->data + body;
	return 1;
}

int hprof_next_sub(const struct hprof_file *f, uint64_t *pos, uint64_t end,
		   const struct hprof_record *rec, struct hprof_sub *s, struct htr_err *err)
{
	if (*pos >= end)
		return 0;
	memset(s, 0, sizeof *s);
	if (decode_object_fast(f, *pos, end, s)) {
		*pos = s->end;
		return 1;
	}
	memset(s, 0, sizeof *s);
	struct hcur c = { f, *pos, end, 0 };
	s->offset = *pos;
	s->tag = (uint8_t)get_u1(&c);
	int rc = decode_body(&c, rec, s, err);
	if (rc)
		return rc;
	if (c.short_read)
		return htr_errf(err, -ENODATA, s->offset,
				"sub-record %s (0x%02x) at offset %llu runs past the end of record %s (0x%02x) at offset %llu",
				hprof_sub_tag_name(s->tag), s->tag, (unsigned long long)s->offset,
				hprof_tag_name(rec->tag), rec->tag, (unsigned long long)rec->offset);
	s->end = c.pos;
	*pos = c.pos;
	return 1;
}

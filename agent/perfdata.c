/* perfdata.c - see perfdata.h.
 *
 * The hsperfdata layout (HotSpot perfMemory.hpp, version 2): a 32-byte
 * prologue (magic 0xcafec0c0 stored big-endian, byte order, major and
 * minor version, accessible, used, overflow, modification time, offset of
 * the first entry, number of entries), then entries of
 *   int32 entry_length, name_offset, vector_length;
 *   int8 data_type ('J' long, 'B' byte vector = string), flags, units,
 *        variability;
 *   int32 data_offset
 * with the name and the data at those offsets from the entry's start.
 * Every offset is checked against the buffer before it is used.
 */
#include "agent/perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROLOGUE_SIZE 32
#define ENTRY_HEADER 20

struct entry {
	const char *name;
	const unsigned char *data;
	int32_t vector_length;
	char type;
};

static int32_t get_i32(const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static int native_little_endian(void)
{
	const uint16_t one = 1;
	unsigned char b;
	memcpy(&b, &one, 1);
	return b == 1;
}

/* Entry at off, checked: 0 and *e filled, or -EINVAL. */
static int read_entry(const unsigned char *buf, size_t len, size_t off, size_t *next, struct entry *e)
{
	if (off > len || len - off < ENTRY_HEADER)
		return -EINVAL;
	const unsigned char *p = buf + off;
	int32_t elen = get_i32(p), noff = get_i32(p + 4), vlen = get_i32(p + 8), doff = get_i32(p + 16);
	if (elen < ENTRY_HEADER || (size_t)elen > len - off || noff < ENTRY_HEADER || noff >= elen ||
	    doff < ENTRY_HEADER || doff > elen || vlen < 0)
		return -EINVAL;
	if (!memchr(p + noff, 0, (size_t)(elen - noff)))
		return -EINVAL; /* name not terminated inside its entry */
	e->type = (char)p[12];
	size_t need = e->type == 'J' ? 8 : (size_t)vlen;
	if ((size_t)(elen - doff) < need)
		return -EINVAL;
	e->name = (const char *)p + noff;
	e->data = p + doff;
	e->vector_length = vlen;
	*next = off + (size_t)elen;
	return 0;
}

/* "PREFIX<n>SUFFIX" -> n, or -1. */
static long index_between(const char *name, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0)
		return -1;
	char *end = NULL;
	unsigned long n = strtoul(name + pl, &end, 10);
	if (end == name + pl || strcmp(end, suffix) != 0 || n > 1000)
		return -1;
	return (long)n;
}

static const volatile int64_t *long_of(const struct entry *e)
{
	/* the JVM aligns longs; an unaligned one is not a buffer we understand */
	if (e->type != 'J' || e->vector_length != 0 || ((uintptr_t)e->data & 7u))
		return NULL;
	return (const volatile int64_t *)(const void *)e->data;
}

/* A NUL-terminated copy of at most len bytes of src, which the JVM may be
 * writing (read byte by byte, up to its NUL). */
static void copy_bounded(char *dst, size_t cap, const volatile char *src, size_t len)
{
	size_t n = 0;
	while (src && n + 1 < cap && n < len && src[n]) {
		dst[n] = src[n];
		n++;
	}
	dst[n] = 0;
}

/* sun.gc.generation.G.space.S.{used,capacity}: one space per (G, S). */
struct space_key {
	long gen, space;
};

static int space_slot(struct perfdata *pd, struct space_key *keys, long gen, long space)
{
	for (uint32_t i = 0; i < pd->nspaces; i++)
		if (keys[i].gen == gen && keys[i].space == space)
			return (int)i;
	if (pd->nspaces == PERFDATA_MAX_SPACES)
		return -1;
	keys[pd->nspaces].gen = gen;
	keys[pd->nspaces].space = space;
	return (int)pd->nspaces++;
}

static void take_space(struct perfdata *pd, struct space_key *keys, const struct entry *e)
{
	if (strncmp(e->name, "sun.gc.generation.", 18) != 0)
		return;
	char *end = NULL;
	long gen = strtol(e->name + 18, &end, 10);
	if (end == e->name + 18 || gen < 0)
		return;
	long space = index_between(end, ".space.", ".used");
	int is_used = space >= 0;
	if (!is_used && (space = index_between(end, ".space.", ".capacity")) < 0)
		return;
	const volatile int64_t *v = long_of(e);
	int slot = v ? space_slot(pd, keys, gen, space) : -1;
	if (slot < 0)
		return;
	if (is_used)
		pd->used[slot] = v;
	else
		pd->capacity[slot] = v;
}

static void take_entry(struct perfdata *pd, struct space_key *keys, const struct entry *e)
{
	long n;
	if ((n = index_between(e->name, "sun.gc.collector.", ".invocations")) >= 0) {
		const volatile int64_t *v = long_of(e);
		if (n < PERFDATA_MAX_COLLECTORS && v)
			pd->invocations[n] = v;
	} else if ((n = index_between(e->name, "sun.gc.collector.", ".name")) >= 0) {
		if (n < PERFDATA_MAX_COLLECTORS && e->type == 'B') {
			copy_bounded(pd->collector_name[n], sizeof(pd->collector_name[n]),
				     (const volatile char *)e->data, (size_t)e->vector_length);
			pd->full[n] = strcasestr(pd->collector_name[n], "full") != NULL;
		}
	} else if (!strcmp(e->name, "java.cls.unloadedClasses")) {
		pd->unloaded[0] = long_of(e);
	} else if (!strcmp(e->name, "java.cls.sharedUnloadedClasses")) {
		pd->unloaded[1] = long_of(e);
	} else if (!strcmp(e->name, "sun.gc.cause")) {
		if (e->type == 'B') {
			pd->cause = (const volatile char *)e->data;
			pd->cause_len = (uint32_t)e->vector_length;
		}
	} else {
		take_space(pd, keys, e);
	}
}

/* A collector that frees memory only in its pauses, by its counter's
 * name (HotSpot 17: "Serial young collection pauses", "Parallel full
 * collection pauses", ...; G1 frees in its remark and cleanup pauses, not
 * concurrently; ZGC's "Z concurrent cycle pauses" and Shenandoah's
 * "Shenandoah partial" free between them). */
static int pauses_only_collector(const char *name)
{
	static const char *const suffix[] = { " young collection pauses", " full collection pauses" };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t k = strlen(suffix[i]);
		if (n > k && !strcmp(name + n - k, suffix[i]) && strncmp(name, "Z ", 2) &&
		    strncmp(name, "Shenandoah", 10))
			return 1;
	}
	return !strcmp(name, "G1 concurrent cycle pauses");
}

int perfdata_parse(const void *buf, size_t len, struct perfdata *pd)
{
	const unsigned char *b = buf;
	memset(pd, 0, sizeof(*pd));
	if (len < PROLOGUE_SIZE || b[0] != 0xca || b[1] != 0xfe || b[2] != 0xc0 || b[3] != 0xc0 ||
	    b[4] != (native_little_endian() ? 1 : 0) || b[5] != 2)
		return -EINVAL;
	int32_t first = get_i32(b + 24), nentries = get_i32(b + 28);
	if (first < PROLOGUE_SIZE || (size_t)first > len || nentries < 0)
		return -EINVAL;
	struct space_key keys[PERFDATA_MAX_SPACES];
	size_t off = (size_t)first;
	for (int32_t i = 0; i < nentries; i++) {
		struct entry e;
		if (read_entry(b, len, off, &off, &e))
			return -EINVAL;
		take_entry(pd, keys, &e);
	}
	for (uint32_t i = 0; i < PERFDATA_MAX_COLLECTORS; i++)
		if (pd->invocations[i])
			pd->ncollectors = i + 1;
	pd->frees_in_pauses_only = pd->ncollectors > 0;
	for (uint32_t i = 0; i < pd->ncollectors; i++)
		if (pd->invocations[i] && !pauses_only_collector(pd->collector_name[i]))
			pd->frees_in_pauses_only = 0;
	int have_used = 0;
	for (uint32_t i = 0; i < pd->nspaces; i++)
		have_used |= pd->used[i] != NULL;
	return pd->ncollectors && have_used ? 0 : -ENOENT;
}

void perfdata_sample(const struct perfdata *pd, struct perfdata_sample *s)
{
	s->used = s->capacity = 0;
	for (uint32_t i = 0; i < pd->nspaces; i++) {
		if (pd->used[i] && *pd->used[i] > 0)
			s->used += (uint64_t)*pd->used[i];
		if (pd->capacity[i] && *pd->capacity[i] > 0)
			s->capacity += (uint64_t)*pd->capacity[i];
	}
	for (uint32_t i = 0; i < PERFDATA_MAX_COLLECTORS; i++)
		s->invocations[i] = pd->invocations[i] ? *pd->invocations[i] : 0;
	copy_bounded(s->cause, sizeof(s->cause), pd->cause, pd->cause_len);
	if (!strcmp(s->cause, "No GC"))
		s->cause[0] = 0;
}

int64_t perfdata_unloaded(const struct perfdata *pd)
{
	if (!pd->unloaded[0] && !pd->unloaded[1])
		return -1;
	return (pd->unloaded[0] ? *pd->unloaded[0] : 0) + (pd->unloaded[1] ? *pd->unloaded[1] : 0);
}

void perfdata_gc(const struct perfdata *pd, const struct perfdata_sample *before,
		 const struct perfdata_sample *after, int *full, char *cause, size_t cause_len)
{
	int grew = -1;
	*full = 0;
	for (uint32_t i = 0; i < pd->ncollectors; i++) {
		if (after->invocations[i] <= before->invocations[i])
			continue;
		if (grew < 0 || pd->full[i])
			grew = (int)i;
		*full |= pd->full[i];
	}
	const char *c = after->cause[0] ? after->cause : before->cause[0] ? before->cause
						    : grew >= 0 && pd->collector_name[grew][0] ? pd->collector_name[grew]
						    : "GC pause";
	snprintf(cause, cause_len, "%s", c);
}

int perfdata_open_self(struct perfdata *pd)
{
	char buf[1024], path[512];
	struct passwd pw, *found = NULL;
	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &found) || !found)
		return -ENOENT;
	/* HotSpot on Linux: os::get_temp_directory() is always /tmp */
	snprintf(path, sizeof(path), "/tmp/hsperfdata_%s/%d", found->pw_name, (int)getpid());
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) ? -errno : 0;
	void *map = MAP_FAILED;
	if (!rc && st.st_size >= PROLOGUE_SIZE)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (rc || map == MAP_FAILED)
		return rc ? rc : -EINVAL;
	rc = perfdata_parse(map, (size_t)st.st_size, pd);
	if (rc) {
		munmap(map, (size_t)st.st_size);
		memset(pd, 0, sizeof(*pd)); /* no pointer into the unmapped file */
	}
	return rc;
}

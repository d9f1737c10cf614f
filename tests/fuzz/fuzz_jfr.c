/* fuzz_jfr.c - libFuzzer target for the JFR reader (model/jfr.h): chunk
 * headers, metadata, constant pools, every event decoded per the
 * metadata, the typed records extracted, several chunks, and a damaged
 * later chunk kept out with a warning.
 *
 * Input: a recording as it is, read from memory (jfr_open_buffer, which
 * borrows the bytes: a read past them is ASan's to catch).  Nothing may
 * crash, hang or leak whatever the bytes; refusing damage is correct and
 * ignored.  What opens is walked: every id a table holds must name a row
 * of the table it refers to, every string id a string.
 *
 * What opens is then imported as a trace (model/jfr_import.h: the file a
 * mount reads) into a file under /dev/shm (or TMPDIR), which must open
 * and hold one GC per jdk.GarbageCollection, one OLD_SAMPLE per
 * jdk.OldObjectSample, at most one ALLOC_SAMPLE per allocation event, and
 * decode to its end.
 *
 * Seeds (tests/fuzz/seeds/fuzz_jfr/): the chunks test_jfr builds by hand
 * (HEAPFS_JFR_SEEDS=DIR build/tests/test_jfr: every string encoding,
 * fixed and varint integers, two checkpoints, two chunks, cut ones) and two
 * small real recordings of tests/integration/JfrWorkload.java (JDK 17, one
 * chunk; JDK 25, three chunks) made with few events and trimmed to the
 * types they use by trim_jfr.py (tests/fuzz/README.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/jfr.h"
#include "model/jfr_import.h"
#include "model/trace.h"

#include "fuzz_common.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

static void str(const struct jfr_recording *r, uint32_t sid)
{
	check(sid == JFR_NONE || sid < r->strings.n);
	(void)jfr_str(r, sid);
}

static void id(uint32_t v, uint32_t n)
{
	check(v == JFR_NONE || v < n);
}

static void walk_symbols(const struct jfr_recording *r)
{
	for (uint32_t i = 0; i < r->classes.n; i++) {
		str(r, r->classes.name[i]);
		str(r, r->classes.loader[i]);
	}
	for (uint32_t i = 0; i < r->methods.n; i++) {
		id(r->methods.cls[i], r->classes.n);
		str(r, r->methods.name[i]);
		str(r, r->methods.descriptor[i]);
	}
	const struct jfr_stacks *s = &r->stacks;
	for (uint32_t i = 0; i < s->n; i++) {
		check(s->frame_off[i] <= s->frame_off[i + 1] && s->frame_off[i + 1] <= s->nframes);
		for (uint64_t f = s->frame_off[i]; f < s->frame_off[i + 1]; f++) {
			id(s->method[f], r->methods.n);
			str(r, s->type[f]);
		}
	}
	for (uint32_t i = 0; i < r->threads.n; i++) {
		str(r, r->threads.java_name[i]);
		str(r, r->threads.os_name[i]);
	}
}

static void walk_events(const struct jfr_recording *r)
{
	for (uint32_t i = 0; i < r->gcs.n; i++) {
		str(r, r->gcs.name[i]);
		str(r, r->gcs.cause[i]);
	}
	for (uint32_t i = 0; i < r->heap.n; i++)
		str(r, r->heap.when[i]);
	for (uint32_t i = 0; i < r->pauses.n; i++)
		str(r, r->pauses.name[i]);
	for (uint32_t i = 0; i < r->allocs.n; i++) {
		id(r->allocs.cls[i], r->classes.n);
		id(r->allocs.stack[i], r->stacks.n);
		id(r->allocs.thread[i], r->threads.n);
	}
	const struct jfr_old_samples *o = &r->old;
	for (uint32_t i = 0; i < o->n; i++) {
		id(o->stack[i], r->stacks.n);
		id(o->thread[i], r->threads.n);
		str(r, o->root_description[i]);
		str(r, o->root_system[i]);
		str(r, o->root_type[i]);
		check(o->path_off[i] <= o->path_off[i + 1] && o->path_off[i + 1] <= r->old_path.n);
		for (uint64_t k = o->path_off[i]; k < o->path_off[i + 1]; k++) {
			id(r->old_path.cls[k], r->classes.n);
			str(r, r->old_path.description[k]);
			str(r, r->old_path.ref_field[k]);
		}
	}
	for (uint32_t i = 0; i < r->settings.n; i++) {
		str(r, r->settings.type_name[i]);
		str(r, r->settings.name[i]);
		str(r, r->settings.value[i]);
	}
	for (uint32_t i = 0; i < r->event_counts.n; i++)
		str(r, r->event_counts.name[i]);
	str(r, r->jvm.name);
	str(r, r->jvm.version);
}

static int count_event(void *ctx, const struct htr_event *ev)
{
	(void)ev;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* The trace a mount would read: it opens, and holds what the recording
 * gave it. */
static void import_and_read(const struct jfr_recording *r)
{
	static char path[256];
	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
		snprintf(path, sizeof path, "%s/heapfs-fuzz-jfr-%d.htr", dir && *dir ? dir : "/tmp", (int)getpid());
	}
	struct htr_err err;
	memset(&err, 0, sizeof err);
	if (jfr_import_recording(r, path, &err) != 0)
		return; /* a write failing (disk full) is not the recording's fault */
	struct trace *t = NULL;
	memset(&err, 0, sizeof err);
	check(trace_open(&t, path, NULL, &err) == 0);
	check(t->ngcs == r->gcs.n);
	check(t->old_samples == r->old.n);
	check(t->alloc_samples <= r->allocs.n);
	uint64_t events = 0;
	check(trace_each_event(t, count_event, &events, &err) == 0);
	trace_close(t);
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return fuzz_init(argc, argv, (const char *const[]){ "-max_len=65536", NULL });
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfr_recording *r = NULL;
	struct htr_err err;
	if (jfr_open_buffer(&r, data, size, "fuzz.jfr", &err) != 0)
		return 0;
	check(r->nchunks > 0 && r->read_bytes <= size);
	walk_symbols(r);
	walk_events(r);
	import_and_read(r);
	jfr_close(r);
	return 0;
}

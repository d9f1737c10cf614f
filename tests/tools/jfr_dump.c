/* jfr_dump.c - prints what model/jfr.c reads from a recording as
 * canonical TSV, one record a line, for tests/integration/
 * test_jfr_reader.sh to compare with the JDK's `jfr print --json` (turned
 * into the same lines by jq).  A test tool, not part of heapfs.
 *
 * Usage: jfr_dump REC.jfr [SECTION...]   sections: gc gen heap pause alloc
 *        old count info setup (default: all).  Null strings print as "null", times
 *        as ns since the epoch, durations as ns; a stack trace as its
 *        frames "class.method descriptor line bci type" joined by " | ".
 * Exit 0, or 1 with the reader's message on stderr; a recording read only
 * in part prints its warning on stderr and exits 0.
 */
#include <stdio.h>
#include <string.h>

#include "model/jfr.h"

static const char *s(const struct jfr_recording *r, uint32_t sid)
{
	const char *p = jfr_str(r, sid);
	return p ? p : "null";
}

static const char *cls(const struct jfr_recording *r, uint32_t c)
{
	return c == JFR_NONE ? "null" : s(r, r->classes.name[c]);
}

static void stack(const struct jfr_recording *r, uint32_t st)
{
	if (st == JFR_NONE) {
		fputs("null", stdout);
		return;
	}
	const struct jfr_stacks *t = &r->stacks;
	printf("%s", t->truncated[st] ? "truncated" : "complete");
	for (uint64_t f = t->frame_off[st]; f < t->frame_off[st + 1]; f++) {
		uint32_t m = t->method[f];
		printf(" | %s.%s %s %d %d %s", m == JFR_NONE ? "null" : cls(r, r->methods.cls[m]),
		       m == JFR_NONE ? "null" : s(r, r->methods.name[m]),
		       m == JFR_NONE ? "null" : s(r, r->methods.descriptor[m]), t->line[f], t->bci[f], s(r, t->type[f]));
	}
}

static const char *thread(const struct jfr_recording *r, uint32_t th)
{
	return th == JFR_NONE ? "null" : s(r, r->threads.java_name[th]);
}

static int want(int argc, char **argv, const char *sec)
{
	if (argc <= 2)
		return 1;
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], sec) == 0)
			return 1;
	return 0;
}

static void dump_gc(const struct jfr_recording *r)
{
	const struct jfr_gcs *g = &r->gcs;
	for (uint32_t i = 0; i < g->n; i++)
		printf("gc\t%lld\t%s\t%s\t%lld\t%lld\t%lld\t%lld\n", (long long)g->gc_id[i], s(r, g->name[i]),
		       s(r, g->cause[i]), (long long)g->start_ns[i], (long long)g->duration_ns[i],
		       (long long)g->sum_pauses_ns[i], (long long)g->longest_pause_ns[i]);
}

/* GCs that a jdk.YoungGarbageCollection (1) or OldGarbageCollection (2)
 * names. */
static void dump_gen(const struct jfr_recording *r)
{
	const struct jfr_gcs *g = &r->gcs;
	for (uint32_t i = 0; i < g->n; i++)
		if (g->generation[i])
			printf("gen\t%lld\t%u\n", (long long)g->gc_id[i], g->generation[i]);
}

static void dump_heap(const struct jfr_recording *r)
{
	const struct jfr_heap_summaries *h = &r->heap;
	for (uint32_t i = 0; i < h->n; i++)
		printf("heap\t%lld\t%s\t%lld\t%lld\t%lld\t%lld\n", (long long)h->gc_id[i], s(r, h->when[i]),
		       (long long)h->start_ns[i], (long long)h->heap_used[i], (long long)h->committed[i],
		       (long long)h->reserved[i]);
}

static void dump_pause(const struct jfr_recording *r)
{
	const struct jfr_gc_pauses *p = &r->pauses;
	for (uint32_t i = 0; i < p->n; i++)
		printf("pause\t%lld\t%s\t%lld\t%lld\n", (long long)p->gc_id[i], s(r, p->name[i]),
		       (long long)p->start_ns[i], (long long)p->duration_ns[i]);
}

static void dump_alloc(const struct jfr_recording *r)
{
	static const char *const kinds[] = { "jdk.ObjectAllocationSample", "jdk.ObjectAllocationInNewTLAB",
					     "jdk.ObjectAllocationOutsideTLAB" };
	const struct jfr_allocs *a = &r->allocs;
	for (uint32_t i = 0; i < a->n; i++) {
		printf("alloc\t%s\t%lld\t%s\t%lld\t%lld\t%s\t", kinds[a->kind[i]], (long long)a->start_ns[i],
		       cls(r, a->cls[i]), (long long)a->weight[i], (long long)a->tlab_size[i], thread(r, a->thread[i]));
		stack(r, a->stack[i]);
		putchar('\n');
	}
}

static void dump_old(const struct jfr_recording *r)
{
	const struct jfr_old_samples *o = &r->old;
	const struct jfr_old_path *p = &r->old_path;
	for (uint32_t i = 0; i < o->n; i++) {
		printf("old\t%lld\t%lld\t%lld\t%lld\t%d\t%s\t%s/%s/%s\t", (long long)o->start_ns[i],
		       (long long)o->alloc_ns[i], (long long)o->age_ns[i], (long long)o->heap_usage[i],
		       o->array_elements[i], thread(r, o->thread[i]), s(r, o->root_system[i]), s(r, o->root_type[i]),
		       s(r, o->root_description[i]));
		for (uint64_t k = o->path_off[i]; k < o->path_off[i + 1]; k++) {
			if (k > o->path_off[i])
				printf(" <- %s[%d/%d]+%d ", s(r, p->ref_field[k]), p->ref_index[k], p->ref_array_size[k],
				       p->ref_skip[k]);
			printf("%lld:%s:%s", (long long)p->address[k], cls(r, p->cls[k]), s(r, p->description[k]));
		}
		putchar('\t');
		stack(r, o->stack[i]);
		putchar('\n');
	}
}

/* The JVM, the recordings and their settings, as jdk.JVMInformation,
 * jdk.ActiveRecording and jdk.ActiveSetting give them. */
static void dump_setup(const struct jfr_recording *r)
{
	const struct jfr_jvm *j = &r->jvm;
	printf("jvm\t%s\t%s\t%s\t%s\t%s\t%lld\t%lld\n", s(r, j->name), s(r, j->version), s(r, j->arguments),
	       s(r, j->flags), s(r, j->java_arguments), (long long)j->start_ns, (long long)j->pid);
	const struct jfr_active_recordings *a = &r->recordings;
	for (uint32_t i = 0; i < a->n; i++)
		printf("recording\t%lld\t%s\t%s\t%lld\t%lld\n", (long long)a->id[i], s(r, a->name[i]),
		       s(r, a->destination[i]), (long long)a->max_size[i], (long long)a->start_ns[i]);
	const struct jfr_settings *t = &r->settings;
	for (uint32_t i = 0; i < t->n; i++)
		printf("setting\t%lld\t%s\t%s\n", (long long)t->type_id[i], s(r, t->name[i]), s(r, t->value[i]));
}

static void dump_info(const struct jfr_recording *r)
{
	printf("info\tchunks\t%u\n", r->nchunks);
	printf("info\tjvm\t%s\t%s\n", s(r, r->jvm.name), s(r, r->jvm.version));
	printf("info\tpid\t%lld\n", (long long)r->jvm.pid);
	for (uint32_t i = 0; i < r->recordings.n; i++)
		printf("info\trecording\t%s\t%s\n", s(r, r->recordings.name[i]), s(r, r->recordings.destination[i]));
	printf("info\tsettings\t%u\n", r->settings.n);
}

int main(int argc, char **argv)
{
	struct jfr_recording *r;
	struct htr_err err;
	if (argc < 2) {
		fprintf(stderr, "usage: jfr_dump REC.jfr [gc|gen|heap|pause|alloc|old|count|info|setup...]\n");
		return 2;
	}
	if (jfr_open(&r, argv[1], &err) != 0) {
		if (err.form == HTR_ERR_FILE)
			fprintf(stderr, "jfr_dump: %s: %s\n", argv[1], err.msg);
		else
			fprintf(stderr, "jfr_dump: %s: offset %llu: %s\n", argv[1], (unsigned long long)err.offset, err.msg);
		return 1;
	}
	if (r->truncated)
		fprintf(stderr, "jfr_dump: %s\n", r->warning);
	if (want(argc, argv, "gc"))
		dump_gc(r);
	if (want(argc, argv, "gen"))
		dump_gen(r);
	if (want(argc, argv, "heap"))
		dump_heap(r);
	if (want(argc, argv, "pause"))
		dump_pause(r);
	if (want(argc, argv, "alloc"))
		dump_alloc(r);
	if (want(argc, argv, "old"))
		dump_old(r);
	if (want(argc, argv, "count"))
		for (uint32_t i = 0; i < r->event_counts.n; i++)
			printf("count\t%s\t%llu\n", s(r, r->event_counts.name[i]),
			       (unsigned long long)r->event_counts.count[i]);
	if (want(argc, argv, "info"))
		dump_info(r);
	if (want(argc, argv, "setup"))
		dump_setup(r);
	jfr_close(r);
	return 0;
}

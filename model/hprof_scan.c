/* hprof_scan.c - the object sub-records of a dump collected on several
 * threads, for the first pass (dump_scan in hprof_dump.c).
 *
 * Nearly all of a dump is its object sub-records, and HotSpot writes its
 * heap in segments (HEAP_DUMP_SEGMENT records: 1,011 in a 1.1 GB dump),
 * whose lengths the record headers give.  So threads each walk a run of
 * consecutive segments, collecting the (id, offset) pairs of its objects
 * and the offsets of the other sub-records (class dumps, roots), both in
 * file order; the runs are joined in order, which gives the serial walk's
 * arrays exactly.  dump_scan then takes the objects as they are and
 * decodes only the other sub-records, in file order, with the records
 * around them.
 *
 * Whatever is unusual leaves the whole pass to the serial walk, whose
 * messages and tolerances stay the one definition of them: a truncated
 * record, a sub-record the decoder refuses, a single heap record, one
 * thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buf.h"
#include "hugepages.h"
#include "hprof_internal.h"
#include "mpar.h"
#include "progress.h"

/* Heaps smaller than this are walked on one thread. */
#define COLLECT_MIN_BYTES (32ull << 20)
/* Runs per thread: runs are handed out in order, so the threads stay busy
 * when some segments are denser than others. */
#define RUNS_PER_THREAD 4

struct run {
	struct keyidx *objs; size_t nobjs, capobjs;   /* mapped (grow_mapped), not malloc'd */
	size_t reserve;        /* the most objects its segments can hold, 0: unknown */
	uint64_t *others; size_t nothers; uint64_t capothers;
	int refused;           /* something the serial walk must decide */
};

struct collect {
	const struct dump *d;
	const struct hprof_record *segs; /* [nsegs] the heap records, in file order */
	uint32_t nsegs;
	uint32_t *first;       /* [nruns + 1]: run k walks segs[first[k], first[k+1]) */
	struct run *runs;      /* [nruns] */
	struct progress *pr;
	uint64_t done;         /* bytes walked, all runs (atomic) */
};

/* A run's pairs are mapped memory of their own, grown by mremap and
 * unmapped once joined: blocks malloc'd on a worker thread of a few MB
 * would stay in that thread's arena after free() (18 MB more at the peak
 * of the 244 MB H2 dump's dominators/top at 2 threads). */
static int grow_mapped(struct run *r)
{
	if (r->nobjs < r->capobjs)
		return 0;
	size_t nc = r->capobjs ? r->capobjs * 2 : (1u << 20) / sizeof *r->objs;
	if (!r->objs && r->reserve > nc) {
		/* the run's bound at once: the kernel supplies pages only as
		 * they are written, and a block grown by mremap pays for its
		 * pages again at the join's copy (hprof_max_objects) */
		void *q = mmap(NULL, r->reserve * sizeof *r->objs, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (q != MAP_FAILED) {
			hugepages_advise(q, r->reserve * sizeof *r->objs);
			r->objs = q;
			r->capobjs = r->reserve;
			return 0;
		}
	}
	void *q = r->objs ? mremap(r->objs, r->capobjs * sizeof *r->objs, nc * sizeof *r->objs,
				   MREMAP_MAYMOVE)
			  : mmap(NULL, nc * sizeof *r->objs, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return -ENOMEM;
	hugepages_advise(q, nc * sizeof *r->objs);
	r->objs = q;
	r->capobjs = nc;
	return 0;
}

static void unmap_objs(struct run *r)
{
	if (r->objs)
		munmap(r->objs, r->capobjs * sizeof *r->objs);
	r->objs = NULL;
	r->capobjs = 0;
}

static int push_obj(struct run *r, uint64_t id, uint64_t off)
{
	if (grow_mapped(r))
		return -ENOMEM;
	r->objs[r->nobjs++] = (struct keyidx){ id, off };
	return 0;
}

static int is_object(uint8_t tag)
{
	return tag == HPROF_INSTANCE_DUMP || tag == HPROF_OBJ_ARRAY_DUMP ||
	       tag == HPROF_PRIM_ARRAY_DUMP;
}

/* One segment's sub-records into run r.  0, -ENOMEM, or 0 with r->refused
 * set when a sub-record does not decode. */
static int walk_segment(const struct hprof_file *f, const struct hprof_record *rec, struct run *r,
			uint64_t *released)
{
	uint64_t pos = rec->body, end = rec->body + rec->len;
	while (pos < end) {
		uint64_t id, next;
		if (dump_object_extent(f, pos, end, &id, &next)) {
			if (push_obj(r, id, pos))
				return -ENOMEM;
			pos = next;
			hprof_release_behind(f, released, pos);
			continue;
		}
		struct hprof_sub s;
		struct htr_err e;
		if (hprof_next_sub(f, &pos, end, rec, &s, &e) != 1) {
			r->refused = 1;
			return 0;
		}
		if (is_object(s.tag)) {
			if (push_obj(r, s.id, s.offset))
				return -ENOMEM;
		} else {
			if (array_reserve((void **)&r->others, &r->capothers, r->nothers + 1,
					  sizeof *r->others))
				return -ENOMEM;
			r->others[r->nothers++] = s.offset;
		}
	}
	return 0;
}

static int collect_run(void *ctx, uint32_t k, uint32_t worker)
{
	(void)worker;
	struct collect *c = ctx;
	struct run *r = &c->runs[k];
	const struct hprof_file *f = c->d->f;
	uint64_t released = c->segs[c->first[k]].body;
	const struct hprof_record *last = &c->segs[c->first[k + 1] - 1];
	int rc = 0;
	for (uint32_t i = c->first[k]; i < c->first[k + 1] && !r->refused && !rc; i++) {
		rc = walk_segment(f, &c->segs[i], r, &released);
		uint64_t done = __atomic_add_fetch(&c->done, c->segs[i].len, __ATOMIC_RELAXED);
		progress_set(c->pr, done);
	}
	/* the run's tail too (less than HPROF_RELEASE_STEP): with many
	 * threads, the runs' tails together would be large */
	hprof_release(f, released, last->body + last->len);
	return rc;
}

/* The heap records, if every record of the file is complete; 0: none to
 * walk here (the serial walk decides about the file). */
static uint32_t heap_records(const struct dump *d, struct hprof_record **out, uint64_t *bytes)
{
	struct hprof_record r, *segs = NULL;
	size_t n = 0;
	uint64_t cap = 0;
	uint64_t pos = d->f->first_record;
	*bytes = 0;
	while (hprof_next_record(d->f, &pos, &r) == 1) {
		if (r.truncated || n >= UINT32_MAX - 1)
			goto none;
		if (r.tag != HPROF_HEAP_DUMP && r.tag != HPROF_HEAP_DUMP_SEGMENT)
			continue;
		if (array_reserve((void **)&segs, &cap, n + 1, sizeof *segs))
			goto none;
		segs[n++] = r;
		*bytes += r.len;
	}
	*out = segs;
	return (uint32_t)n;
none:
	free(segs);
	*out = NULL;
	return 0;
}

/* Consecutive runs of segments of about equal bytes. */
static uint32_t plan_runs(struct collect *c, uint32_t want, uint64_t bytes)
{
	uint32_t k = 0;
	uint64_t acc = 0;
	c->first[0] = 0;
	for (uint32_t i = 0; i < c->nsegs; i++) {
		acc += c->segs[i].len;
		if (acc * want >= bytes * (k + 1) && k + 1 < want)
			c->first[++k] = i + 1;
	}
	if (c->first[k] < c->nsegs)
		c->first[++k] = c->nsegs;
	return k;
}

/* Joining: run k's arrays copied to their places in the joined ones. */
struct join {
	struct collect *c;
	struct keyidx *objs;
	uint64_t *others;
	size_t *at_obj, *at_other;  /* [nruns] where each run's go */
};

static int join_run(void *ctx, uint32_t k, uint32_t worker)
{
	(void)worker;
	struct join *j = ctx;
	struct run *r = &j->c->runs[k];
	/* (an empty run's arrays are NULL) */
	if (r->nobjs)
		memcpy(j->objs + j->at_obj[k], r->objs, r->nobjs * sizeof *j->objs);
	if (r->nothers)
		memcpy(j->others + j->at_other[k], r->others, r->nothers * sizeof *j->others);
	/* let go as soon as copied: the joined array and the runs' are
	 * resident together only for the runs being copied */
	unmap_objs(r);
	free(r->others);
	r->others = NULL;
	return 0;
}

/* Joins the runs' arrays in order into pre (malloc'd: the dump owns
 * them), the copies on the threads (a quarter of a second for 24 M
 * objects on one). */
static int join_runs(struct collect *c, uint32_t nruns, uint32_t nthreads, struct scan_pre *pre)
{
	size_t nobjs = 0, nothers = 0;
	struct join j = { .c = c };
	j.at_obj = malloc(nruns * sizeof *j.at_obj);
	j.at_other = malloc(nruns * sizeof *j.at_other);
	if (!j.at_obj || !j.at_other)
		goto oom;
	for (uint32_t k = 0; k < nruns; k++) {
		j.at_obj[k] = nobjs;
		j.at_other[k] = nothers;
		nobjs += c->runs[k].nobjs;
		nothers += c->runs[k].nothers;
	}
	/* room for the class objects dump_sort_objects appends, one per
	 * CLASS_DUMP (each among the others): growing the array then would
	 * move it (mremap), and the next pass over a moved block pays for its
	 * pages again (0.11 s on the H2 dump's 77 MB, on these machines) */
	size_t cap = nobjs + nothers;
	if (!(j.objs = malloc((cap ? cap : 1) * sizeof *j.objs)))
		goto oom;
	if (!(j.others = malloc((nothers ? nothers : 1) * sizeof *j.others))) {
		free(j.objs);
		goto oom;
	}
	(void)mpar_for(nthreads, nruns, join_run, &j);   /* join_run never fails */
	pre->objs = j.objs;
	pre->nobjs = nobjs;
	pre->capobjs = cap;
	pre->others = j.others;
	pre->nothers = nothers;
	free(j.at_obj);
	free(j.at_other);
	return 0;
oom:
	free(j.at_obj);
	free(j.at_other);
	return -ENOMEM;
}

int dump_collect_objects(const struct dump *d, uint32_t threads, struct scan_pre *pre)
{
	memset(pre, 0, sizeof *pre);
	uint32_t nthreads = mpar_resolve(threads);
	uint64_t bytes;
	struct collect c = { .d = d, .pr = progress_here() };
	if (nthreads < 2)
		return 0;
	struct hprof_record *segs;
	c.nsegs = heap_records(d, &segs, &bytes);
	c.segs = segs;
	if (c.nsegs < 2 || (bytes < COLLECT_MIN_BYTES && !(d->o && d->o->par_any_size))) {
		free(segs);
		return 0;
	}
	uint32_t want = nthreads * RUNS_PER_THREAD < c.nsegs ? nthreads * RUNS_PER_THREAD : c.nsegs;
	int rc = -ENOMEM;
	c.first = malloc(((size_t)want + 1) * sizeof *c.first);
	c.runs = calloc(want, sizeof *c.runs);
	if (!c.first || !c.runs)
		goto out;
	uint32_t nruns = plan_runs(&c, want, bytes);
	for (uint32_t k = 0; k < nruns; k++) {
		uint64_t run_bytes = 0;
		for (uint32_t i = c.first[k]; i < c.first[k + 1]; i++)
			run_bytes += c.segs[i].len;
		uint64_t most = hprof_max_objects(d->f, run_bytes);
		c.runs[k].reserve = most <= SIZE_MAX / sizeof(struct keyidx) ? (size_t)most : 0;
	}
	if ((rc = mpar_for(nthreads, nruns, collect_run, &c)))
		goto out;
	for (uint32_t k = 0; k < nruns; k++)
		if (c.runs[k].refused)
			goto out;   /* rc 0: the serial walk */
	if ((rc = join_runs(&c, nruns, nthreads, pre)))
		goto out;
	rc = 1;
out:
	for (uint32_t k = 0; c.runs && k < want; k++) {
		unmap_objs(&c.runs[k]);
		free(c.runs[k].others);
	}
	free(c.runs);
	free(c.first);
	free(segs);
	return rc;
}

void scan_pre_free(struct scan_pre *pre)
{
	free(pre->objs);
	free(pre->others);
	memset(pre, 0, sizeof *pre);
}

/* counting.c - mode=count: allocation counts per site from DuckTracks path
 * counters (agent/instrument.h does the rewriting).
 *
 * The counters are one long[] in the helper class heapfs.Counters, which
 * the agent writes at load time into a private directory appended to the
 * bootstrap class path: every class loader finds it, and a class
 * retransformed later still reaches the same array.  ClassFileLoadHook
 * instruments classes loaded after VMInit by application class loaders
 * (not the boot or platform loader: code in named JDK modules cannot read
 * the boot loader's unnamed module, where the helper lives).  Hooks are
 * serialized by one mutex (the instrumenter uses qsort contexts in
 * globals, and the tables below grow).
 *
 * Per site, count = sum over counters of value(counter) * coefficient.
 * Plain (non-atomic) increments: threads racing on a counter may lose
 * increments, and an exception leaving a method mid-path leaves its
 * counts off (agent/README.md).
 */
#include "agent/agent.h"
#include "agent/instrument.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cmethod {
	char *cls, *name, *desc;    /* owned; cls with '/' */
	uint32_t site_first, nsites;
	/* hot paths (hot=N): the path graph and the counter of each edge */
	uint32_t nblocks, nnormal, nedges;
	struct pedge *e;            /* owned, [nedges] */
	uint32_t *cnt;              /* owned, [nedges], UINT32_MAX none */
	double *freq;               /* owned, [nnormal]: measured, for the next version */
	int state;                  /* HOT_* */
};
enum { HOT_NO = 0, HOT_PENDING, HOT_DONE };
struct csite {
	uint32_t method, pc, line;
	char *type;                 /* owned */
};
struct csem {
	uint32_t site;              /* global site index */
	int32_t coef;
};
struct ccounter {
	uint32_t sem_first, nsem;
};

static struct {
	pthread_mutex_t mu;
	int active;                 /* after VMInit */
	jobject platform_loader;    /* global ref */
	char dir[64];               /* the helper class's directory */
	struct cmethod *m; uint32_t nm, cap_m;
	struct csite *s; uint32_t ns, cap_s;
	struct csem *sem; uint32_t nsem, cap_sem;
	struct ccounter *c;         /* [opts.counters] */
	uint32_t next_counter;
	uint64_t classes, failed;
	/* trace output (agent thread only): what was written already */
	uint32_t methods_written, sites_written;
	int64_t *last; uint32_t cap_last;  /* per site: counts written so far */
	struct instr_stats st;
} C = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t n = *cap ? *cap * 2 : 1024;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, (size_t)n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* ---- the instrumenter's sink (under C.mu) ------------------------------- */

static uint32_t sink_reserve(void *ctx, uint32_t n)
{
	(void)ctx;
	if (C.next_counter + (uint64_t)n > A.opts.counters)
		return UINT32_MAX;
	uint32_t b = C.next_counter;
	C.next_counter += n;
	return b;
}

static uint32_t sink_method(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			    size_t dl, uint32_t nsites)
{
	(void)ctx;
	if (grow((void **)&C.m, &C.cap_m, C.nm + 1, sizeof(*C.m)) ||
	    grow((void **)&C.s, &C.cap_s, C.ns + nsites, sizeof(*C.s)))
		return UINT32_MAX;
	struct cmethod *m = &C.m[C.nm];
	memset(m, 0, sizeof(*m));
	m->cls = strndup(cls, cl);
	m->name = strndup(name, nl);
	m->desc = strndup(desc, dl);
	if (!m->cls || !m->name || !m->desc) {
		free(m->cls);
		free(m->name);
		free(m->desc);
		return UINT32_MAX;
	}
	m->nsites = nsites;
	/* a new version of a method (retransformed) keeps its sites: the
	 * counts of every version add up on them */
	for (uint32_t i = 0; i < C.nm; i++) {
		const struct cmethod *o = &C.m[i];
		if (o->nsites == nsites && !strcmp(o->cls, m->cls) && !strcmp(o->name, m->name) &&
		    !strcmp(o->desc, m->desc)) {
			m->site_first = o->site_first;
			m->state = HOT_DONE;
			return C.nm++;
		}
	}
	m->site_first = C.ns;
	memset(C.s + C.ns, 0, nsites * sizeof(*C.s)); /* sink_site tells new from described */
	C.ns += nsites;
	return C.nm++;
}

static int sink_site(void *ctx, uint32_t method, uint32_t k, uint32_t pc, uint32_t line, const char *type)
{
	(void)ctx;
	char *t = strdup(type);
	if (!t)
		return -ENOMEM;
	struct csite *s = &C.s[C.m[method].site_first + k];
	if (s->type && s->method != method) /* a new version: the site stays as first described */
		free(t);
	else
		*s = (struct csite){ method, pc, line, t };
	return 0;
}

static int sink_graph(void *ctx, uint32_t method, uint32_t nblocks, uint32_t nnormal, uint32_t nedges,
		      const struct pedge *e, const uint32_t *counter)
{
	(void)ctx;
	struct cmethod *m = &C.m[method];
	if (!A.opts.hot || m->state == HOT_DONE)
		return 0;
	m->e = malloc((nedges + 1) * sizeof(*m->e));
	m->cnt = malloc((nedges + 1) * sizeof(*m->cnt));
	if (!m->e || !m->cnt) {
		free(m->e);
		free(m->cnt);
		m->e = NULL;
		m->cnt = NULL;
		return 0; /* no hot path for this one */
	}
	memcpy(m->e, e, nedges * sizeof(*e));
	memcpy(m->cnt, counter, nedges * sizeof(*counter));
	m->nblocks = nblocks;
	m->nnormal = nnormal;
	m->nedges = nedges;
	return 0;
}

/* The measured frequencies of a method being retransformed, if it is hot. */
static const double *sink_freq(void *ctx, const char *cls, size_t cl, const char *name, size_t nl, const char *desc,
			       size_t dl, uint32_t nnormal)
{
	(void)ctx;
	for (uint32_t i = 0; i < C.nm; i++) {
		const struct cmethod *m = &C.m[i];
		if (m->state == HOT_PENDING && m->freq && m->nnormal == nnormal && strlen(m->cls) == cl &&
		    !memcmp(m->cls, cls, cl) && strlen(m->name) == nl && !memcmp(m->name, name, nl) &&
		    strlen(m->desc) == dl && !memcmp(m->desc, desc, dl))
			return m->freq;
	}
	return NULL;
}

static int sink_counter(void *ctx, uint32_t method, uint32_t counter, const uint32_t *k, const int32_t *coef,
			uint32_t n)
{
	(void)ctx;
	if (grow((void **)&C.sem, &C.cap_sem, C.nsem + n, sizeof(*C.sem)))
		return -ENOMEM;
	C.c[counter] = (struct ccounter){ C.nsem, n };
	for (uint32_t i = 0; i < n; i++)
		C.sem[C.nsem++] = (struct csem){ C.m[method].site_first + k[i], coef[i] };
	return 0;
}

static const struct instr_sink sink = { NULL, sink_reserve, sink_method, sink_site, sink_counter, sink_freq,
					 sink_graph };

/* ---- hooks ----------------------------------------------------------------- */

static int skipped_name(const char *name)
{
	static const char *const prefixes[] = { "java/", "javax/", "jdk/", "sun/", "com/sun/", "heapfs/" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined, jobject loader,
				       const char *name, jobject pd, jint len, const unsigned char *data,
				       jint *new_len, unsigned char **new_data)
{
	(void)redefined;
	(void)pd;
	if (!__atomic_load_n(&C.active, __ATOMIC_ACQUIRE) || !loader || !name || skipped_name(name))
		return;
	/* class_being_redefined: a retransformation (hot=N); the bytes are the
	 * original ones again, instrumented afresh with measured frequencies */
	if (C.platform_loader && (*jni)->IsSameObject(jni, loader, C.platform_loader))
		return;
	struct buf out;
	buf_init(&out);
	pthread_mutex_lock(&C.mu);
	int rc = instr_class(data, (size_t)len, &sink, A.opts.count_sites ? INSTR_SITES : INSTR_PATHS, &out, &C.st);
	if (rc < 0)
		C.failed++;
	else if (rc == 1)
		C.classes++;
	pthread_mutex_unlock(&C.mu);
	unsigned char *p = NULL;
	if (rc == 1 && (*jvmti)->Allocate(jvmti, (jlong)out.len, &p) == JVMTI_ERROR_NONE) {
		memcpy(p, out.data, out.len);
		*new_len = (jint)out.len;
		*new_data = p;
	}
	buf_free(&out);
}

void count_set_callbacks(jvmtiEventCallbacks *cb)
{
	cb->ClassFileLoadHook = on_class_file_load;
}

int count_onload(jvmtiEnv *jvmti)
{
	C.c = calloc(A.opts.counters, sizeof(*C.c));
	if (!C.c)
		return -ENOMEM;
	snprintf(C.dir, sizeof(C.dir), "/tmp/heapfs-agent-XXXXXX");
	if (!mkdtemp(C.dir))
		return -errno;
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs", C.dir);
	if (mkdir(path, 0700))
		return -errno;
	snprintf(path, sizeof(path), "%s/heapfs/Counters.class", C.dir);
	struct buf b;
	buf_init(&b);
	int rc = instr_counters_class(A.opts.counters, &b);
	FILE *f = rc ? NULL : fopen(path, "wb");
	if (!f || fwrite(b.data, 1, b.len, f) != b.len)
		rc = rc ? rc : -EIO;
	if (f && fclose(f))
		rc = -EIO;
	buf_free(&b);
	if (rc)
		return rc;
	if ((*jvmti)->AddToBootstrapClassLoaderSearch(jvmti, C.dir) != JVMTI_ERROR_NONE)
		return -EINVAL;
	return 0;
}

void count_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	/* enabled only now: classes loaded before VMInit are not instrumented,
	 * and a hook enabled at OnLoad makes the JVM hand over the bytes of
	 * every class it loads from the shared archive (slower start) */
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL) !=
	    JVMTI_ERROR_NONE) {
		fprintf(stderr, "heapfs-agent: cannot enable ClassFileLoadHook: nothing is counted\n");
		return;
	}
	jclass k = (*jni)->FindClass(jni, "java/lang/ClassLoader");
	jmethodID m = k ? (*jni)->GetStaticMethodID(jni, k, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
	jobject l = m ? (*jni)->CallStaticObjectMethod(jni, k, m) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (l)
		C.platform_loader = (*jni)->NewGlobalRef(jni, l);
	__atomic_store_n(&C.active, 1, __ATOMIC_RELEASE);
}

/* ---- hot paths --------------------------------------------------------------- */

static uint64_t n_retransformed;

/* Retransforms the loaded classes named (internal names), then marks their
 * pending methods done (the hook ran during RetransformClasses). */
static void retransform(jvmtiEnv *jvmti, JNIEnv *jni, char **names, uint32_t n)
{
	jint nclasses = 0;
	jclass *classes = NULL;
	if ((*jvmti)->GetLoadedClasses(jvmti, &nclasses, &classes) != JVMTI_ERROR_NONE)
		return;
	jclass *sel = malloc(((size_t)nclasses + 1) * sizeof(*sel));
	jint nsel = 0;
	for (jint i = 0; i < nclasses && sel; i++) {
		char *sig = NULL;
		if ((*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) == JVMTI_ERROR_NONE && sig) {
			size_t l = strlen(sig);
			for (uint32_t j = 0; j < n && l > 2 && sig[0] == 'L'; j++)
				if (strlen(names[j]) == l - 2 && !memcmp(sig + 1, names[j], l - 2)) {
					sel[nsel++] = classes[i];
					break;
				}
			(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
		}
	}
	jvmtiError e = nsel ? (*jvmti)->RetransformClasses(jvmti, nsel, sel) : JVMTI_ERROR_NONE;
	if (e != JVMTI_ERROR_NONE && A.opts.verbose)
		fprintf(stderr, "heapfs-agent: RetransformClasses failed (error %d)\n", (int)e);
	else
		n_retransformed += (uint64_t)nsel;
	/* every method of those classes has a new version now (or the
	 * retransformation failed): none is re-planned again */
	pthread_mutex_lock(&C.mu);
	for (uint32_t i = 0; i < C.nm; i++)
		for (uint32_t j = 0; j < n; j++)
			if (C.m[i].state == HOT_PENDING || !strcmp(C.m[i].cls, names[j]))
				C.m[i].state = HOT_DONE;
	pthread_mutex_unlock(&C.mu);
	for (jint i = 0; i < nclasses; i++)
		(*jni)->DeleteLocalRef(jni, classes[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
	free(sel);
}

/* ---- results ---------------------------------------------------------------- */

/* Per-site counts from the current counter values: *out [C.ns] (caller
 * frees), *incr the increments the path counters executed. */
static int site_counts(JNIEnv *jni, int64_t **out, uint64_t *incr)
{
	*incr = 0;
	jclass k = (*jni)->FindClass(jni, INSTR_COUNTERS_CLASS);
	jfieldID f = k ? (*jni)->GetStaticFieldID(jni, k, INSTR_COUNTERS_FIELD, "[J") : NULL;
	jlongArray arr = f ? (jlongArray)(*jni)->GetStaticObjectField(jni, k, f) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!arr)
		return -ENOENT;
	pthread_mutex_lock(&C.mu);
	uint32_t n = C.next_counter;
	jlong *v = malloc(((size_t)n + 1) * sizeof(*v));
	int64_t *cnt = calloc((size_t)C.ns + 1, sizeof(*cnt));
	int rc = -ENOMEM;
	if (v && cnt) {
		(*jni)->GetLongArrayRegion(jni, arr, 0, (jsize)n, v);
		for (uint32_t i = 0; i < n; i++) {
			*incr += (uint64_t)v[i];
			for (uint32_t j = 0; j < C.c[i].nsem; j++) {
				const struct csem *s = &C.sem[C.c[i].sem_first + j];
				cnt[s->site] += (int64_t)v[i] * s->coef;
			}
		}
		*out = cnt;
		cnt = NULL;
		rc = 0;
	}
	pthread_mutex_unlock(&C.mu);
	free(v);
	free(cnt);
	return rc;
}

/* Writes METHOD and COUNT_SITE symbols not written yet, then the counts
 * since the previous call as one ALLOC_COUNTS.  Method ids: mode=count
 * writes no other METHOD events (no allocation sites, no heap walks), so
 * it numbers methods from 0. */
void count_write(JNIEnv *jni, struct htr_writer *w, uint32_t gc, int final)
{
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(jni, &cnt, &incr) && !final)
		return; /* no counter ran yet */
	pthread_mutex_lock(&C.mu);
	uint32_t ns = C.ns, nm = C.nm;
	int rc = grow((void **)&C.last, &C.cap_last, ns + 1, sizeof(*C.last));
	uint32_t *ids = malloc(((size_t)ns + 1) * sizeof(*ids));
	int64_t *delta = malloc(((size_t)ns + 1) * sizeof(*delta));
	char *cls = NULL;
	for (uint32_t i = C.methods_written; i < nm && !rc; i++) {
		const struct cmethod *m = &C.m[i];
		free(cls);
		if (!(cls = strdup(m->cls))) {
			rc = -ENOMEM;
			break;
		}
		for (char *p = cls; *p; p++)
			*p = *p == '/' ? '.' : *p;
		rc = htr_write_method(w, i, cls, m->name, m->desc, "");
	}
	free(cls);
	if (!rc)
		C.methods_written = nm;
	for (uint32_t i = C.sites_written; i < ns && !rc; i++) {
		const struct csite *s = &C.s[i];
		rc = htr_write_count_site(w, i, s->method, s->pc, s->line ? (int32_t)s->line : -1, s->type);
		C.last[i] = 0;
	}
	if (!rc)
		C.sites_written = ns;
	uint32_t n = 0;
	for (uint32_t i = 0; i < ns && !rc && ids && delta && cnt; i++) {
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
		if (cnt[i] == C.last[i])
			continue;
		ids[n] = i;
		delta[n++] = cnt[i] - C.last[i];
		C.last[i] = cnt[i];
	}
	if (!rc && ids && delta && (n || final))
		rc = htr_write_alloc_counts(w, gc,
					    (final ? HTR_COUNTS_FINAL : 0) | (A.opts.count_sites ? 0 : HTR_COUNTS_PATHS),
					    incr, per_site, n, ids, delta);
	pthread_mutex_unlock(&C.mu);
	if (rc)
		fprintf(stderr, "heapfs-agent: writing allocation counts failed: %s\n", strerror(-rc));
	free(ids);
	free(delta);
	free(cnt);
}

/* hot=N: methods whose entry flow (solved from their counters) reached N
 * get their edge frequencies stored; their classes are retransformed, and
 * the hook plans their paths from the frequencies. */
void count_poll(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!A.opts.hot || !__atomic_load_n(&C.active, __ATOMIC_ACQUIRE))
		return;
	jclass k = (*jni)->FindClass(jni, INSTR_COUNTERS_CLASS);
	jfieldID f = k ? (*jni)->GetStaticFieldID(jni, k, INSTR_COUNTERS_FIELD, "[J") : NULL;
	jlongArray arr = f ? (jlongArray)(*jni)->GetStaticObjectField(jni, k, f) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (!arr)
		return;
	pthread_mutex_lock(&C.mu);
	uint32_t nc = C.next_counter;
	pthread_mutex_unlock(&C.mu);
	jlong *v = malloc(((size_t)nc + 1) * sizeof(*v));
	if (!v)
		return;
	(*jni)->GetLongArrayRegion(jni, arr, 0, (jsize)nc, v);
	char **pending = NULL;
	uint32_t npending = 0;
	pthread_mutex_lock(&C.mu);
	for (uint32_t i = 0; i < C.nm; i++) {
		struct cmethod *m = &C.m[i];
		if (m->state != HOT_NO || !m->e)
			continue;
		uint8_t *counted = calloc(m->nedges + 1, 1);
		double *val = calloc(m->nedges + 1, sizeof(double)), *flow = calloc(m->nedges + 1, sizeof(double));
		double entry = -1;
		if (counted && val && flow) {
			for (uint32_t j = 0; j < m->nedges; j++)
				if (m->cnt[j] != UINT32_MAX && m->cnt[j] < nc) {
					counted[j] = 1;
					val[j] = (double)v[m->cnt[j]];
				}
			entry = instr_solve_flow(m->nblocks, m->nedges, m->e, counted, val, flow);
		}
		if (entry >= (double)A.opts.hot && (m->freq = calloc(m->nnormal + 1, sizeof(double)))) {
			for (uint32_t j = 0; j < m->nedges; j++)
				if (m->e[j].cfg_edge != PATHS_NONE && m->e[j].cfg_edge < m->nnormal)
					m->freq[m->e[j].cfg_edge] = flow[j];
			m->state = HOT_PENDING;
			int seen = 0;
			for (uint32_t p = 0; p < npending && !seen; p++)
				seen = !strcmp(pending[p], m->cls);
			char **np = seen ? pending : realloc(pending, (npending + 1) * sizeof(*np));
			if (np) {
				pending = np;
				if (!seen)
					pending[npending++] = m->cls; /* owned by the method, which stays */
			}
		}
		free(counted);
		free(val);
		free(flow);
	}
	pthread_mutex_unlock(&C.mu);
	free(v);
	if (npending)
		retransform(jvmti, jni, pending, npending);
	free(pending);
}

static void print_dotted(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '/' ? '.' : *s, f);
}

/* Writes FILE: "Class.method:line <TAB> type <TAB> count <TAB> descriptor
 * <TAB> bci" for every site with a count, then "#" statistics lines. */
static int write_counts(const char *path, const int64_t *cnt, uint64_t incr, uint64_t per_site)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < C.ns; i++) {
		if (!cnt[i])
			continue;
		const struct cmethod *m = &C.m[C.s[i].method];
		print_dotted(f, m->cls);
		fprintf(f, ".%s:%u\t%s\t%lld\t%s\t%u\n", m->name, C.s[i].line, C.s[i].type, (long long)cnt[i], m->desc,
			C.s[i].pc);
	}
	fprintf(f, "#increments\t%llu\n#per_site_increments\t%llu\n", (unsigned long long)incr,
		(unsigned long long)per_site);
	return fclose(f) ? -EIO : 0;
}

void count_finish(JNIEnv *jni)
{
	__atomic_store_n(&C.active, 0, __ATOMIC_RELEASE);
	int64_t *cnt = NULL;
	uint64_t incr = 0, per_site = 0;
	if (site_counts(jni, &cnt, &incr)) {
		if (A.opts.verbose)
			fprintf(stderr, "heapfs-agent: mode=count: no counters (nothing instrumented ran)\n");
		cnt = calloc((size_t)C.ns + 1, sizeof(*cnt));
		if (!cnt)
			return;
	}
	for (uint32_t i = 0; i < C.ns; i++)
		per_site += (uint64_t)(cnt[i] > 0 ? cnt[i] : 0);
	if (A.opts.counts[0] && write_counts(A.opts.counts, cnt, incr, per_site))
		fprintf(stderr, "heapfs-agent: cannot write %s\n", A.opts.counts);
	if (A.opts.verbose)
		fprintf(stderr,
			"heapfs-agent: mode=count: %llu classes instrumented (%llu failed), %llu methods (%llu without "
			"allocations, %llu left alone), %u counters, %llu stubs, %llu classes retransformed (hot=%u); "
			"increments %llu vs %llu per-site (%.1f%% fewer)\n",
			(unsigned long long)C.classes, (unsigned long long)C.failed,
			(unsigned long long)C.st.instrumented, (unsigned long long)C.st.no_allocs,
			(unsigned long long)C.st.skipped, C.next_counter, (unsigned long long)C.st.stubs,
			(unsigned long long)n_retransformed, A.opts.hot, (unsigned long long)incr, (unsigned long long)per_site,
			per_site ? 100.0 * (1.0 - (double)incr / (double)per_site) : 0.0);
	free(cnt);
	char path[128];
	snprintf(path, sizeof(path), "%s/heapfs/Counters.class", C.dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/heapfs", C.dir);
	rmdir(path);
	rmdir(C.dir);
}

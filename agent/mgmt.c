/* mgmt.c - heap use and GC kind from the JVM's management beans
 * (java.lang.management), called through JNI by the agent thread after a
 * GC.  JVMTI itself tells neither the heap use nor whether a GC was full.
 *
 * Per GC: the collector bean whose collection count grew names the GC
 * ("G1 Young Generation", "G1 Old Generation" = full); its last GcInfo
 * gives the heap use before and after.  A GC no bean counts (G1's remark
 * and cleanup pauses) gets the current heap use as "after".  When the agent
 * thread falls behind by more than one GC the figures belong to the latest.
 */
#include "agent/agent.h"

#include <stdio.h>
#include <string.h>

#define MAX_BEANS 8

static jobject mem_bean;
static jobject gc_bean[MAX_BEANS];
static char gc_name[MAX_BEANS][64];
static jlong gc_count[MAX_BEANS];
static int gc_full[MAX_BEANS];
static int nbeans;
static jobject heap_pool[MAX_BEANS];   /* names (String) of the heap's pools */
static int npools;
static jmethodID m_get;
static jmethodID m_heap_usage, m_used, m_committed, m_count, m_last_info, m_before, m_after,
	m_values, m_to_array;

static int failed(JNIEnv *jni)
{
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		return 1;
	}
	return 0;
}

static jmethodID method(JNIEnv *jni, const char *cls, const char *name, const char *sig)
{
	jclass k = (*jni)->FindClass(jni, cls);
	if (!k) {
		failed(jni);
		return NULL;
	}
	jmethodID m = (*jni)->GetMethodID(jni, k, name, sig);
	if (!m)
		failed(jni);
	return m;
}

static int lookup_methods(JNIEnv *jni)
{
	m_heap_usage = method(jni, "java/lang/management/MemoryMXBean", "getHeapMemoryUsage",
			      "()Ljava/lang/management/MemoryUsage;");
	m_used = method(jni, "java/lang/management/MemoryUsage", "getUsed", "()J");
	m_committed = method(jni, "java/lang/management/MemoryUsage", "getCommitted", "()J");
	m_count = method(jni, "java/lang/management/GarbageCollectorMXBean", "getCollectionCount", "()J");
	m_last_info = method(jni, "com/sun/management/GarbageCollectorMXBean", "getLastGcInfo",
			     "()Lcom/sun/management/GcInfo;");
	m_before = method(jni, "com/sun/management/GcInfo", "getMemoryUsageBeforeGc", "()Ljava/util/Map;");
	m_after = method(jni, "com/sun/management/GcInfo", "getMemoryUsageAfterGc", "()Ljava/util/Map;");
	m_values = method(jni, "java/util/Map", "values", "()Ljava/util/Collection;");
	m_to_array = method(jni, "java/util/Collection", "toArray", "()[Ljava/lang/Object;");
	m_get = method(jni, "java/util/Map", "get", "(Ljava/lang/Object;)Ljava/lang/Object;");
	return m_heap_usage && m_used && m_committed && m_count ? 0 : -1;
}

/* Names of the memory pools of type HEAP: GcInfo maps hold every pool,
 * metaspace and code cache too. */
static void find_heap_pools(JNIEnv *jni, jclass mf, jmethodID m_name)
{
	jmethodID get_pools = (*jni)->GetStaticMethodID(jni, mf, "getMemoryPoolMXBeans", "()Ljava/util/List;");
	jmethodID m_type = method(jni, "java/lang/management/MemoryPoolMXBean", "getType",
				  "()Ljava/lang/management/MemoryType;");
	jclass mt = (*jni)->FindClass(jni, "java/lang/management/MemoryType");
	jfieldID f_heap = mt ? (*jni)->GetStaticFieldID(jni, mt, "HEAP", "Ljava/lang/management/MemoryType;") : NULL;
	jmethodID m_pname = method(jni, "java/lang/management/MemoryPoolMXBean", "getName", "()Ljava/lang/String;");
	if (failed(jni) || !get_pools || !m_type || !f_heap || !m_pname || !m_to_array) {
		failed(jni);
		return;
	}
	(void)m_name;
	jobject heap = (*jni)->GetStaticObjectField(jni, mt, f_heap);
	jobject list = (*jni)->CallStaticObjectMethod(jni, mf, get_pools);
	jobjectArray arr = list && !failed(jni) ? (*jni)->CallObjectMethod(jni, list, m_to_array) : NULL;
	if (failed(jni) || !arr)
		return;
	jint n = (*jni)->GetArrayLength(jni, arr);
	for (jint i = 0; i < n && npools < MAX_BEANS; i++) {
		jobject p = (*jni)->GetObjectArrayElement(jni, arr, i);
		jobject t = p ? (*jni)->CallObjectMethod(jni, p, m_type) : NULL;
		if (failed(jni) || !t || !(*jni)->IsSameObject(jni, t, heap))
			continue;
		jobject name = (*jni)->CallObjectMethod(jni, p, m_pname);
		if (!failed(jni) && name)
			heap_pool[npools++] = (*jni)->NewGlobalRef(jni, name);
	}
}

/* The beans were looked up (once: by mgmt_init in mode=full, by the
 * first mgmt_query in mode=count). */
static int tried;

/* mode=count: cheap, the beans are looked up lazily, by the agent thread
 * after the first GC.  ManagementFactory's first use loads ~350 classes
 * and spins lambdas (~70 ms); done at VMInit it held up the application's
 * start, and runs without a GC never need it.  Collection counts start
 * from 0 (the JVM's start), so the first query still sees which
 * collector's count grew.  mode=full looks them up at once, before it
 * records allocations: later, the beans' own objects would be recorded
 * as the agent thread's allocations. */
static int beans_init(JNIEnv *jni);

static int beans_try(JNIEnv *jni)
{
	tried = 1;
	int rc = beans_init(jni);
	if (rc)
		fprintf(stderr, "heapfs-agent: management beans unavailable; heap use not recorded\n");
	return rc;
}

int mgmt_init(JNIEnv *jni)
{
	return A.opts.mode != AGENT_MODE_COUNT ? beans_try(jni) : 0;
}

static int beans_init(JNIEnv *jni)
{
	if ((*jni)->PushLocalFrame(jni, 64))
		return -1;
	int rc = -1;
	jclass mf = (*jni)->FindClass(jni, "java/lang/management/ManagementFactory");
	if (!mf || lookup_methods(jni))
		goto out;
	jmethodID get_mem = (*jni)->GetStaticMethodID(jni, mf, "getMemoryMXBean",
						      "()Ljava/lang/management/MemoryMXBean;");
	jmethodID get_gcs = (*jni)->GetStaticMethodID(jni, mf, "getGarbageCollectorMXBeans",
						      "()Ljava/util/List;");
	if (!get_mem || !get_gcs)
		goto out;
	jobject mb = (*jni)->CallStaticObjectMethod(jni, mf, get_mem);
	jobject list = (*jni)->CallStaticObjectMethod(jni, mf, get_gcs);
	if (failed(jni) || !mb || !list)
		goto out;
	mem_bean = (*jni)->NewGlobalRef(jni, mb);
	jmethodID m_name = method(jni, "java/lang/management/MemoryManagerMXBean", "getName",
				  "()Ljava/lang/String;");
	jobjectArray arr = (*jni)->CallObjectMethod(jni, list, m_to_array ? m_to_array :
		method(jni, "java/util/List", "toArray", "()[Ljava/lang/Object;"));
	if (failed(jni) || !arr || !m_name)
		goto out;
	find_heap_pools(jni, mf, m_name);
	jint n = (*jni)->GetArrayLength(jni, arr);
	for (jint i = 0; i < n && nbeans < MAX_BEANS; i++) {
		jobject b = (*jni)->GetObjectArrayElement(jni, arr, i);
		jstring s = b ? (*jni)->CallObjectMethod(jni, b, m_name) : NULL;
		if (failed(jni) || !s)
			continue;
		const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
		snprintf(gc_name[nbeans], sizeof(gc_name[0]), "%s", c ? c : "?");
		if (c)
			(*jni)->ReleaseStringUTFChars(jni, s, c);
		gc_full[nbeans] = strstr(gc_name[nbeans], "Old") || strstr(gc_name[nbeans], "MarkSweep") ||
				  strstr(gc_name[nbeans], "Major");
		gc_bean[nbeans] = (*jni)->NewGlobalRef(jni, b);
		/* lazily (mode=count): counts since the JVM's start */
		gc_count[nbeans] = A.opts.mode == AGENT_MODE_COUNT ? 0 : (*jni)->CallLongMethod(jni, b, m_count);
		failed(jni);
		nbeans++;
	}
	rc = 0;
out:
	failed(jni);
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}

/* Sum of used and committed over the heap pools' MemoryUsage in a Map. */
static void sum_map(JNIEnv *jni, jobject map, uint64_t *used, uint64_t *committed)
{
	if (!map || !m_get || !npools)
		return;
	uint64_t u = 0, c = 0;
	for (int i = 0; i < npools; i++) {
		jobject mu = (*jni)->CallObjectMethod(jni, map, m_get, heap_pool[i]);
		if (failed(jni))
			return;
		if (!mu)
			continue;
		u += (uint64_t)(*jni)->CallLongMethod(jni, mu, m_used);
		c += (uint64_t)(*jni)->CallLongMethod(jni, mu, m_committed);
		(*jni)->DeleteLocalRef(jni, mu);
		if (failed(jni))
			return;
	}
	*used = u;
	if (committed)
		*committed = c;
}

void mgmt_query(JNIEnv *jni, struct gc_info *out)
{
	memset(out, 0, sizeof(*out));
	out->used_before = out->used_after = out->capacity = UINT64_MAX;
	snprintf(out->cause, sizeof(out->cause), "GC pause");
	if (!tried)
		beans_try(jni);
	if (!mem_bean || (*jni)->PushLocalFrame(jni, 64))
		return;
	int which = -1;
	for (int i = 0; i < nbeans; i++) {
		jlong c = (*jni)->CallLongMethod(jni, gc_bean[i], m_count);
		if (failed(jni))
			continue;
		if (c > gc_count[i] && (which < 0 || gc_full[i]))
			which = i;
		gc_count[i] = c;
	}
	if (which >= 0) {
		out->full = gc_full[which];
		snprintf(out->cause, sizeof(out->cause), "%s", gc_name[which]);
		jobject info = m_last_info ? (*jni)->CallObjectMethod(jni, gc_bean[which], m_last_info) : NULL;
		if (!failed(jni) && info && m_before && m_after) {
			jobject before = (*jni)->CallObjectMethod(jni, info, m_before);
			if (!failed(jni))
				sum_map(jni, before, &out->used_before, NULL);
			jobject after = (*jni)->CallObjectMethod(jni, info, m_after);
			if (!failed(jni))
				sum_map(jni, after, &out->used_after, &out->capacity);
		}
	}
	if (out->used_after == UINT64_MAX) {
		jobject mu = (*jni)->CallObjectMethod(jni, mem_bean, m_heap_usage);
		if (!failed(jni) && mu) {
			out->used_after = (uint64_t)(*jni)->CallLongMethod(jni, mu, m_used);
			out->capacity = (uint64_t)(*jni)->CallLongMethod(jni, mu, m_committed);
			failed(jni);
		}
	}
	(*jni)->PopLocalFrame(jni, NULL);
}

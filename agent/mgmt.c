/* mgmt.c - heap use and GC kind from the JVM's management beans
 * (java.lang.management), called through JNI by the agent thread after a
 * GC.  JVMTI itself tells neither the heap use nor whether a GC was full.
 *
 * Per GC: the collector bean whose collection count grew names the GC
 * ("G1 Young Generation", "G1 Old Generation" = full); its last GcInfo
 * gives the heap use before and after.  A GC no bean counts (G1's remark
 * and cleanup pauses) gets the current heap use as "after".  When the agent
 * thread falls behind by more than one GC the figures belong to the latest.
 *
 * State: struct mgmt (recorder_internal.h), part of the recorder's, used
 * by the agent thread only.
 */
#include "agent/recorder_internal.h"

#include <stdio.h>
#include <string.h>

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

static int lookup_methods(struct mgmt *m, JNIEnv *jni)
{
	m->m_heap_usage = method(jni, "java/lang/management/MemoryMXBean", "getHeapMemoryUsage",
				 "()Ljava/lang/management/MemoryUsage;");
	m->m_used = method(jni, "java/lang/management/MemoryUsage", "getUsed", "()J");
	m->m_committed = method(jni, "java/lang/management/MemoryUsage", "getCommitted", "()J");
	m->m_count = method(jni, "java/lang/management/GarbageCollectorMXBean", "getCollectionCount", "()J");
	m->m_last_info = method(jni, "com/sun/management/GarbageCollectorMXBean", "getLastGcInfo",
				"()Lcom/sun/management/GcInfo;");
	m->m_before = method(jni, "com/sun/management/GcInfo", "getMemoryUsageBeforeGc", "()Ljava/util/Map;");
	m->m_after = method(jni, "com/sun/management/GcInfo", "getMemoryUsageAfterGc", "()Ljava/util/Map;");
	m->m_values = method(jni, "java/util/Map", "values", "()Ljava/util/Collection;");
	m->m_to_array = method(jni, "java/util/Collection", "toArray", "()[Ljava/lang/Object;");
	m->m_get = method(jni, "java/util/Map", "get", "(Ljava/lang/Object;)Ljava/lang/Object;");
	return m->m_heap_usage && m->m_used && m->m_committed && m->m_count ? 0 : -1;
}

/* Names of the memory pools of type HEAP: GcInfo maps hold every pool,
 * metaspace and code cache too. */
static void find_heap_pools(struct mgmt *m, JNIEnv *jni, jclass mf, jmethodID m_name)
{
	jmethodID get_pools = (*jni)->GetStaticMethodID(jni, mf, "getMemoryPoolMXBeans", "()Ljava/util/List;");
	jmethodID m_type = method(jni, "java/lang/management/MemoryPoolMXBean", "getType",
				  "()Ljava/lang/management/MemoryType;");
	jclass mt = (*jni)->FindClass(jni, "java/lang/management/MemoryType");
	jfieldID f_heap = mt ? (*jni)->GetStaticFieldID(jni, mt, "HEAP", "Ljava/lang/management/MemoryType;") : NULL;
	jmethodID m_pname = method(jni, "java/lang/management/MemoryPoolMXBean", "getName", "()Ljava/lang/String;");
	if (failed(jni) || !get_pools || !m_type || !f_heap || !m_pname || !m->m_to_array) {
		failed(jni);
		return;
	}
	(void)m_name;
	jobject heap = (*jni)->GetStaticObjectField(jni, mt, f_heap);
	jobject list = (*jni)->CallStaticObjectMethod(jni, mf, get_pools);
	jobjectArray arr = list && !failed(jni) ? (*jni)->CallObjectMethod(jni, list, m->m_to_array) : NULL;
	if (failed(jni) || !arr)
		return;
	jint n = (*jni)->GetArrayLength(jni, arr);
	for (jint i = 0; i < n && m->npools < MGMT_MAX_BEANS; i++) {
		jobject p = (*jni)->GetObjectArrayElement(jni, arr, i);
		jobject t = p ? (*jni)->CallObjectMethod(jni, p, m_type) : NULL;
		if (failed(jni) || !t || !(*jni)->IsSameObject(jni, t, heap))
			continue;
		jobject name = (*jni)->CallObjectMethod(jni, p, m_pname);
		if (!failed(jni) && name)
			m->heap_pool[m->npools++] = (*jni)->NewGlobalRef(jni, name);
	}
}

/* mode=count: cheap, the beans are looked up lazily, by the agent thread
 * after the first GC.  ManagementFactory's first use loads ~350 classes
 * and spins lambdas (~70 ms); done at VMInit it held up the application's
 * start, and runs without a GC never need it.  Collection counts start
 * from 0 (the JVM's start), so the first query still sees which
 * collector's count grew.  mode=full looks them up at once, before it
 * records allocations: later, the beans' own objects would be recorded
 * as the agent thread's allocations. */
static int beans_init(struct mgmt *m, JNIEnv *jni);

static int beans_try(struct mgmt *m, JNIEnv *jni)
{
	m->tried = 1;
	int rc = beans_init(m, jni);
	if (rc)
		fprintf(stderr, "heapfs-agent: management beans unavailable; heap use not recorded\n");
	return rc;
}

int mgmt_init(struct mgmt *m, JNIEnv *jni, int lazy)
{
	m->lazy = lazy;
	return !lazy ? beans_try(m, jni) : 0;
}

static int beans_init(struct mgmt *m, JNIEnv *jni)
{
	if ((*jni)->PushLocalFrame(jni, 64))
		return -1;
	int rc = -1;
	jclass mf = (*jni)->FindClass(jni, "java/lang/management/ManagementFactory");
	if (!mf || lookup_methods(m, jni))
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
	m->mem_bean = (*jni)->NewGlobalRef(jni, mb);
	jmethodID m_name = method(jni, "java/lang/management/MemoryManagerMXBean", "getName",
				  "()Ljava/lang/String;");
	jobjectArray arr = (*jni)->CallObjectMethod(jni, list, m->m_to_array ? m->m_to_array :
		method(jni, "java/util/List", "toArray", "()[Ljava/lang/Object;"));
	if (failed(jni) || !arr || !m_name)
		goto out;
	find_heap_pools(m, jni, mf, m_name);
	jint n = (*jni)->GetArrayLength(jni, arr);
	for (jint i = 0; i < n && m->nbeans < MGMT_MAX_BEANS; i++) {
		jobject b = (*jni)->GetObjectArrayElement(jni, arr, i);
		jstring s = b ? (*jni)->CallObjectMethod(jni, b, m_name) : NULL;
		if (failed(jni) || !s)
			continue;
		const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
		snprintf(m->gc_name[m->nbeans], sizeof(m->gc_name[0]), "%s", c ? c : "?");
		if (c)
			(*jni)->ReleaseStringUTFChars(jni, s, c);
		const char *name = m->gc_name[m->nbeans];
		m->gc_full[m->nbeans] = strstr(name, "Old") || strstr(name, "MarkSweep") || strstr(name, "Major");
		m->gc_bean[m->nbeans] = (*jni)->NewGlobalRef(jni, b);
		/* lazily (mode=count): counts since the JVM's start */
		m->gc_count[m->nbeans] = m->lazy ? 0 : (*jni)->CallLongMethod(jni, b, m->m_count);
		failed(jni);
		m->nbeans++;
	}
	rc = 0;
out:
	failed(jni);
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}

/* Sum of used and committed over the heap pools' MemoryUsage in a Map. */
static void sum_map(struct mgmt *m, JNIEnv *jni, jobject map, uint64_t *used, uint64_t *committed)
{
	if (!map || !m->m_get || !m->npools)
		return;
	uint64_t u = 0, c = 0;
	for (int i = 0; i < m->npools; i++) {
		jobject mu = (*jni)->CallObjectMethod(jni, map, m->m_get, m->heap_pool[i]);
		if (failed(jni))
			return;
		if (!mu)
			continue;
		u += (uint64_t)(*jni)->CallLongMethod(jni, mu, m->m_used);
		c += (uint64_t)(*jni)->CallLongMethod(jni, mu, m->m_committed);
		(*jni)->DeleteLocalRef(jni, mu);
		if (failed(jni))
			return;
	}
	*used = u;
	if (committed)
		*committed = c;
}

void mgmt_query(struct mgmt *m, JNIEnv *jni, struct gc_info *out)
{
	memset(out, 0, sizeof(*out));
	out->used_before = out->used_after = out->capacity = UINT64_MAX;
	snprintf(out->cause, sizeof(out->cause), "GC pause");
	if (!m->tried)
		beans_try(m, jni);
	if (!m->mem_bean || (*jni)->PushLocalFrame(jni, 64))
		return;
	int which = -1;
	for (int i = 0; i < m->nbeans; i++) {
		jlong c = (*jni)->CallLongMethod(jni, m->gc_bean[i], m->m_count);
		if (failed(jni))
			continue;
		if (c > m->gc_count[i] && (which < 0 || m->gc_full[i]))
			which = i;
		m->gc_count[i] = c;
	}
	if (which >= 0) {
		out->full = m->gc_full[which];
		snprintf(out->cause, sizeof(out->cause), "%s", m->gc_name[which]);
		jobject info =
			m->m_last_info ? (*jni)->CallObjectMethod(jni, m->gc_bean[which], m->m_last_info) : NULL;
		if (!failed(jni) && info && m->m_before && m->m_after) {
			jobject before = (*jni)->CallObjectMethod(jni, info, m->m_before);
			if (!failed(jni))
				sum_map(m, jni, before, &out->used_before, NULL);
			jobject after = (*jni)->CallObjectMethod(jni, info, m->m_after);
			if (!failed(jni))
				sum_map(m, jni, after, &out->used_after, &out->capacity);
		}
	}
	if (out->used_after == UINT64_MAX) {
		jobject mu = (*jni)->CallObjectMethod(jni, m->mem_bean, m->m_heap_usage);
		if (!failed(jni) && mu) {
			out->used_after = (uint64_t)(*jni)->CallLongMethod(jni, mu, m->m_used);
			out->capacity = (uint64_t)(*jni)->CallLongMethod(jni, mu, m->m_committed);
			failed(jni);
		}
	}
	(*jni)->PopLocalFrame(jni, NULL);
}

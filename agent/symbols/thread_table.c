#include "thread_table.h"

#include <pthread.h>
#include <string.h>

#include "jvmti_util.h"
#include "mem_account.h"
#include "segarray.h"
#include "string_table.h"
#include "tags.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct segarray entries; /* serial = index + 1 */

static void threads_measure(struct mem_use *u)
{
    u->entries = segarray_count(&entries);
    u->bytes = segarray_bytes(&entries);
}

int thread_table_init(void)
{
    segarray_init(&entries, sizeof(struct thread_info));
    mem_account_register("threads", threads_measure);
    return 0;
}

struct thread_info *thread_table_get(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&entries))
        return NULL;
    return segarray_at(&entries, serial - 1);
}

uint32_t thread_table_count(void)
{
    return segarray_count(&entries);
}

static hprof_id group_name(jvmtiEnv *jvmti, JNIEnv *jni, jthreadGroup group, jthreadGroup *parent)
{
    jvmtiThreadGroupInfo gi;
    memset(&gi, 0, sizeof gi);
    if (!group || (*jvmti)->GetThreadGroupInfo(jvmti, group, &gi) != JVMTI_ERROR_NONE)
        return 0;
    hprof_id id = string_table_intern(gi.name);
    jvmti_util_free(jvmti, gi.name);
    if (parent)
        *parent = gi.parent;
    else if (gi.parent)
        (*jni)->DeleteLocalRef(jni, gi.parent);
    return id;
}

static hprof_id object_id(jvmtiEnv *jvmti, jthread thread)
{
    jlong tag = 0;
    if ((*jvmti)->GetTag(jvmti, thread, &tag) != JVMTI_ERROR_NONE)
        return 0;
    if (tag == 0) {
        tag = (jlong)tag_make(0, tags_next_serial());
        (*jvmti)->SetTag(jvmti, thread, tag);
    }
    return (hprof_id)tag;
}

static struct thread_info *create(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &ti) != JVMTI_ERROR_NONE)
        return NULL;
    hprof_id name_id = string_table_intern(ti.name ? ti.name : "");
    jvmti_util_free(jvmti, ti.name);
    jthreadGroup parent = NULL;
    hprof_id group_id = group_name(jvmti, jni, ti.thread_group, &parent);
    hprof_id parent_id = group_name(jvmti, jni, parent, NULL);
    if (ti.thread_group)
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (parent)
        (*jni)->DeleteLocalRef(jni, parent);
    if (ti.context_class_loader)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);

    pthread_mutex_lock(&lock);
    struct thread_info *t = NULL;
    void *existing = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, &existing) == JVMTI_ERROR_NONE && existing) {
        t = existing; /* registered meanwhile by another thread */
    } else {
        uint32_t i = segarray_append(&entries);
        if (i != UINT32_MAX) {
            t = segarray_at(&entries, i);
            t->serial = i + 1;
            t->object_id = object_id(jvmti, thread);
            t->name_id = name_id;
            t->group_id = group_id;
            t->parent_group_id = parent_id;
            t->trace_serial = HPROF_TRACE_SERIAL_NONE;
            (*jvmti)->SetThreadLocalStorage(jvmti, thread, t);
        }
    }
    pthread_mutex_unlock(&lock);
    return t;
}

struct thread_info *thread_table_of(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    void *p = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, &p) == JVMTI_ERROR_NONE && p)
        return p;
    return create(jvmti, jni, thread);
}

struct thread_info *thread_table_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    void *p = NULL;
    if ((*jvmti)->GetThreadLocalStorage(jvmti, NULL, &p) == JVMTI_ERROR_NONE && p)
        return p;
    return thread_table_of(jvmti, jni, thread);
}

struct thread_info *thread_table_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct thread_info *t = thread_table_of(jvmti, jni, thread);
    if (!t || atomic_exchange(&t->ended, true))
        return NULL;
    return t;
}

void thread_table_register_live(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jthread *threads = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetAllThreads(jvmti, &n, &threads), "GetAllThreads"))
        return;
    for (jint i = 0; i < n; i++) {
        thread_table_of(jvmti, jni, threads[i]);
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    jvmti_util_free(jvmti, threads);
}

jthread thread_table_find_live(jvmtiEnv *jvmti, JNIEnv *jni, hprof_id id)
{
    jint n = 0;
    jthread *threads = NULL;
    if (id == 0 ||
        jvmti_util_failed(jvmti, (*jvmti)->GetAllThreads(jvmti, &n, &threads), "GetAllThreads"))
        return NULL;
    jthread found = NULL;
    for (jint i = 0; i < n; i++) {
        jlong tag = 0;
        if (!found && (*jvmti)->GetTag(jvmti, threads[i], &tag) == JVMTI_ERROR_NONE &&
            (hprof_id)tag == id)
            found = threads[i];
        else
            (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    jvmti_util_free(jvmti, threads);
    return found;
}

void thread_table_teardown(void)
{
    segarray_free(&entries);
}

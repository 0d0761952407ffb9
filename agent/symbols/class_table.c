#include "class_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti_util.h"
#include "log.h"
#include "mem_account.h"
#include "names.h"
#include "segarray.h"
#include "string_table.h"
#include "tags.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct segarray entries; /* serial = index + 1 */
static jvmtiEnv *watch_env;     /* the unload watcher: class objects tagged, ObjectFree on */
static size_t name_bytes;       /* the entries' names and signatures; under the lock */
static _Atomic(uint32_t) unloaded_count; /* classes marked unloaded so far */

static void classes_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&entries);
    u->bytes = segarray_bytes(&entries) + name_bytes;
    pthread_mutex_unlock(&lock);
}

/* ObjectFree of the unload watcher: only class objects carry tags there. No JVMTI calls. */
static void JNICALL on_class_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    uint64_t t = (uint64_t)tag;
    if (tag_site(t) == TAG_SITE_CLASS)
        class_table_mark_unloaded((uint32_t)tag_serial(t));
}

/* An environment of its own, so that no other tag (heap=sites tags objects by the million in
 * the agent's environment) brings ObjectFree events with it. The JDK's debug agent tracks
 * class unloading the same way (JDK-8256811). */
static void watch_unloads(void)
{
    JavaVM *vm = jvmti_util_vm();
    jvmtiEnv *e = NULL;
    if (!vm || (*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e)
        return;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = 1;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ObjectFree = on_class_free;
    if ((*e)->AddCapabilities(e, &caps) != JVMTI_ERROR_NONE ||
        (*e)->SetEventCallbacks(e, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE ||
        (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL) !=
            JVMTI_ERROR_NONE) {
        (*e)->DisposeEnvironment(e);
        log_warning("this VM gives no ObjectFree events: class unloading is not reported "
                    "(no UNLOAD CLASS records)");
        return;
    }
    watch_env = e;
}

int class_table_init(void)
{
    segarray_init(&entries, sizeof(struct class_info));
    mem_account_register("classes", classes_measure);
    watch_unloads();
    return 0;
}

void class_table_flush_unloads(void)
{
    if (watch_env)
        (*watch_env)
            ->SetEventNotificationMode(watch_env, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
}

const struct class_info *class_table_get(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&entries))
        return NULL;
    return segarray_at(&entries, serial - 1);
}

uint32_t class_table_count(void)
{
    return segarray_count(&entries);
}

static uint32_t serial_from_tag(jlong tag)
{
    uint64_t t = (uint64_t)tag;
    return tag_site(t) == TAG_SITE_CLASS ? (uint32_t)tag_serial(t) : 0;
}

/* A new entry owning name and sig (lock held); NULL when the table is full. */
static struct class_info *append_locked(hprof_id name_id, char *name, char *sig)
{
    uint32_t i = segarray_append(&entries);
    if (i == UINT32_MAX)
        return NULL;
    struct class_info *c = segarray_at(&entries, i);
    c->serial = i + 1;
    c->class_id = tag_make(TAG_SITE_CLASS, c->serial);
    c->name_id = name_id;
    c->name = name;
    c->signature = sig;
    c->array_type = names_array_type(sig);
    size_t names = mem_block(strlen(name) + 1) + mem_block(strlen(sig) + 1);
    name_bytes += names;
    mem_account_charge(names);
    return c;
}

uint32_t class_table_serial_of(jvmtiEnv *jvmti, jclass klass)
{
    jlong tag = 0;
    if (klass == NULL || (*jvmti)->GetTag(jvmti, klass, &tag) != JVMTI_ERROR_NONE)
        return 0;
    uint32_t serial = serial_from_tag(tag);
    if (serial)
        return serial;

    char *sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
        return 0;
    char *name = names_java_class_name(sig);
    char *sig_copy = strdup(sig);
    jvmti_util_free(jvmti, sig);
    if (!name || !sig_copy) {
        free(name);
        free(sig_copy);
        return 0;
    }
    hprof_id name_id = string_table_intern(name);

    pthread_mutex_lock(&lock);
    /* Another thread may have registered it while we read the signature. */
    if ((*jvmti)->GetTag(jvmti, klass, &tag) == JVMTI_ERROR_NONE &&
        (serial = serial_from_tag(tag))) {
        pthread_mutex_unlock(&lock);
        free(name);
        free(sig_copy);
        return serial;
    }
    struct class_info *c = append_locked(name_id, name, sig_copy);
    if (c) {
        serial = c->serial;
        (*jvmti)->SetTag(jvmti, klass, (jlong)c->class_id);
        if (watch_env)
            (*watch_env)->SetTag(watch_env, klass, (jlong)c->class_id);
    } else {
        free(name);
        free(sig_copy);
    }
    pthread_mutex_unlock(&lock);
    return serial;
}

uint32_t class_table_register_synthetic(const char *name)
{
    char *name_copy = strdup(name);
    size_t len = strlen(name);
    char *sig = malloc(len + 3);
    if (!name_copy || !sig) {
        free(name_copy);
        free(sig);
        return 0;
    }
    sig[0] = 'L';
    memcpy(sig + 1, name, len);
    sig[len + 1] = ';';
    sig[len + 2] = '\0';
    hprof_id name_id = string_table_intern(name);
    pthread_mutex_lock(&lock);
    struct class_info *c = append_locked(name_id, name_copy, sig);
    uint32_t serial = c ? c->serial : 0;
    pthread_mutex_unlock(&lock);
    if (!serial) {
        free(name_copy);
        free(sig);
    }
    return serial;
}

void class_table_register_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes),
                          "GetLoadedClasses"))
        return;
    for (jint i = 0; i < n; i++) {
        class_table_serial_of(jvmti, classes[i]);
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_util_free(jvmti, classes);
}

void class_table_mark_unloaded(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&entries))
        return;
    if (!atomic_exchange(&((struct class_info *)segarray_at(&entries, serial - 1))->unloaded, true))
        atomic_fetch_add_explicit(&unloaded_count, 1, memory_order_relaxed);
}

uint32_t class_table_unloaded_count(void)
{
    return atomic_load_explicit(&unloaded_count, memory_order_relaxed);
}

void class_table_teardown(void)
{
    uint32_t n = segarray_count(&entries);
    for (uint32_t i = 0; i < n; i++) {
        struct class_info *c = segarray_at(&entries, i);
        free((char *)c->name);
        free((char *)c->signature);
    }
    segarray_free(&entries);
    atomic_store(&unloaded_count, 0);
    mem_account_uncharge(name_bytes);
    name_bytes = 0;
    if (watch_env)
        (*watch_env)->DisposeEnvironment(watch_env);
    watch_env = NULL;
}

#include "carriers.h"

#include <stdarg.h>

#include "jvmti_util.h"

/* The slot of the platform thread this OS thread is (bound at its ThreadStart). */
static _Thread_local struct carrier_slot *tls_slot;
static bool watching;
static void (*observer)(JNIEnv *jni, jthread vthread);

void carriers_slot_init(struct carrier_slot *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->vthread = NULL;
    atomic_init(&s->mounted, false);
}

void carriers_slot_destroy(JNIEnv *jni, struct carrier_slot *s)
{
    if (s->vthread)
        (*jni)->DeleteWeakGlobalRef(jni, s->vthread);
    s->vthread = NULL;
    pthread_mutex_destroy(&s->lock);
}

void carriers_slot_bind_current(struct carrier_slot *s)
{
    tls_slot = s;
}

jthread carriers_slot_mounted(JNIEnv *jni, struct carrier_slot *s)
{
    jthread local = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->vthread && carriers_slot_carrying(s))
        local = (*jni)->NewLocalRef(jni, s->vthread); /* NULL if it was collected */
    pthread_mutex_unlock(&s->lock);
    return local;
}

/* Extension events are called as jvmtiExtensionEvent, (jvmtiEnv *, ...): here with the
 * JNIEnv * and the virtual thread, on the carrier, the virtual thread being current. */
static void JNICALL on_mount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    va_list ap;
    va_start(ap, jvmti);
    JNIEnv *jni = va_arg(ap, JNIEnv *);
    jthread vthread = va_arg(ap, jthread);
    va_end(ap);
    if (observer)
        observer(jni, vthread);
    struct carrier_slot *s = tls_slot;
    if (!s)
        return; /* a thread not listed (started before an attach, or no memory) */
    /* Only this thread writes s->vthread, so reading it here needs no lock. A virtual thread
     * that parks and resumes on the same carrier costs no new reference. */
    if (vthread && (!s->vthread || !(*jni)->IsSameObject(jni, s->vthread, vthread))) {
        jweak ref = (*jni)->NewWeakGlobalRef(jni, vthread);
        pthread_mutex_lock(&s->lock);
        jweak old = s->vthread;
        s->vthread = ref;
        pthread_mutex_unlock(&s->lock);
        if (old)
            (*jni)->DeleteWeakGlobalRef(jni, old);
    }
    atomic_store_explicit(&s->mounted, vthread != NULL, memory_order_release);
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    if (observer)
        observer(NULL, NULL);
    struct carrier_slot *s = tls_slot;
    if (s)
        atomic_store_explicit(&s->mounted, false, memory_order_release);
}

struct hprof_error carriers_watch(jvmtiEnv *jvmti)
{
    if (!jvmti_util_add_virtual_threads_capability(jvmti))
        return hprof_ok(); /* JDK 17: no virtual threads */
    if (!jvmti_util_watch_mounts(jvmti, on_mount, on_unmount))
        return hprof_errorf("this VM has no virtual-thread mount events");
    watching = true;
    return hprof_ok();
}

void carriers_observe(void (*fn)(JNIEnv *jni, jthread vthread))
{
    observer = fn;
}

bool carriers_watching(void)
{
    return watching;
}

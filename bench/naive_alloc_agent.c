/* The "obvious" allocation tracker that bench/sites-overhead.sh compares heap=sites against:
 * SampledObjectAlloc at interval 0, a 4-frame GetStackTrace, a SetTag with a fresh serial and
 * ObjectFree enabled, for every allocation, with nothing cached. It keeps no tables (its work
 * is a lower bound of what a plain agent would do). Not part of the product. */
#include <jvmti.h>
#include <stdatomic.h>
#include <string.h>

static _Atomic(jlong) serial, freed;

static void JNICALL on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                             jclass klass, jlong size)
{
    (void)jni;
    (void)thread;
    (void)klass;
    (void)size;
    jvmtiFrameInfo frames[4];
    jint n = 0;
    (*jvmti)->GetStackTrace(jvmti, NULL, 0, 4, frames, &n);
    (*jvmti)->SetTag(jvmti, object, atomic_fetch_add(&serial, 1) + 1);
}

static void JNICALL on_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    (void)tag;
    atomic_fetch_add(&freed, 1);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options;
    (void)reserved;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_sampled_object_alloc_events = 1;
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = 1;
    (*jvmti)->AddCapabilities(jvmti, &caps);
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.SampledObjectAlloc = on_alloc;
    cb.ObjectFree = on_free;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
    (*jvmti)->SetHeapSamplingInterval(jvmti, 0);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
    return JNI_OK;
}

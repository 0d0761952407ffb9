/* The floor of exact allocation tracking, part by part (bench/sites-threads.sh): a
 * SampledObjectAlloc callback at interval 0 that does only what its options ask, so the cost of
 * each JVMTI call an exact allocation profiler cannot avoid is measured with no code of ours
 * around it. Not part of the product.
 *
 *   -agentpath:libfloor.so[=part,part...]
 *   (nothing)  the event alone, an empty callback
 *   stack      GetStackTrace of 4 frames of the current thread
 *   tag        SetTag of a fresh serial on the object
 *   envs=N     tags go through N JVMTI environments (1..64), one chosen per thread (each
 *              environment has its own tag map and its own lock in HotSpot)
 *   free       ObjectFree enabled (in every environment that tags) */
#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ENVS_MAX 64

static jvmtiEnv *envs[ENVS_MAX];
static int nenvs = 1;
static bool stack, tag, freed_on;
static _Atomic(jlong) serial, freed;
static _Atomic(unsigned) next_env;
static _Thread_local int my_env = -1;

static void JNICALL on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                             jclass klass, jlong size)
{
    (void)jni;
    (void)thread;
    (void)klass;
    (void)size;
    if (stack) {
        jvmtiFrameInfo frames[4];
        jint n = 0;
        (*jvmti)->GetStackTrace(jvmti, NULL, 0, 4, frames, &n);
    }
    if (tag) {
        if (my_env < 0)
            my_env = (int)(atomic_fetch_add(&next_env, 1) % (unsigned)nenvs);
        jvmtiEnv *e = envs[my_env];
        (*e)->SetTag(e, object, atomic_fetch_add_explicit(&serial, 1, memory_order_relaxed) + 1);
    }
}

static void JNICALL on_free(jvmtiEnv *jvmti, jlong t)
{
    (void)jvmti;
    (void)t;
    atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
}

static bool setup_env(jvmtiEnv *e, bool events)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = freed_on;
    caps.can_generate_sampled_object_alloc_events = events;
    if ((*e)->AddCapabilities(e, &caps) != JVMTI_ERROR_NONE)
        return false;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.SampledObjectAlloc = on_alloc;
    cb.ObjectFree = on_free;
    (*e)->SetEventCallbacks(e, &cb, (jint)sizeof cb);
    if (freed_on)
        (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
    return true;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    for (char *p = options; p && *p;) {
        size_t len = strcspn(p, ",");
        if (strncmp(p, "stack", len) == 0 && len == 5)
            stack = true;
        else if (strncmp(p, "tag", len) == 0 && len == 3)
            tag = true;
        else if (strncmp(p, "free", len) == 0 && len == 4)
            freed_on = true;
        else if (strncmp(p, "envs=", 5) == 0)
            nenvs = atoi(p + 5);
        else
            return JNI_ERR;
        p += len + (p[len] == ',');
    }
    if (nenvs < 1 || nenvs > ENVS_MAX)
        return JNI_ERR;
    for (int i = 0; i < nenvs; i++)
        if ((*vm)->GetEnv(vm, (void **)&envs[i], JVMTI_VERSION_11) != JNI_OK ||
            !setup_env(envs[i], i == 0))
            return JNI_ERR;
    jvmtiEnv *jvmti = envs[0];
    (*jvmti)->SetHeapSamplingInterval(jvmti, 0);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    return JNI_OK;
}

/* What heap=sites asks of the VM's JVMTI tag maps, without the agent's tables (the soak's
 * "floor:tags" configuration, bench/soak/soak.sh; doc/memory.md): SampledObjectAlloc with
 * SetHeapSamplingInterval(0), and a tag of its own (unique, never 0) on every allocated object,
 * set through one of 4 environments chosen per thread as heap=sites does (tag_envs.h). HotSpot
 * keeps one tag map per environment; it grows with the tagged objects alive and is rehashed and
 * cleaned of dead objects' entries after a GC. Options: none. Not part of the product. */
#include <jvmti.h>
#include <stdatomic.h>
#include <string.h>

#define ENVS 4

static jvmtiEnv *envs[ENVS];
static atomic_uint next_env;
static _Atomic(jlong) next_tag = 1;
static _Thread_local int my_env = -1;

static void JNICALL on_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                             jclass klass, jlong size)
{
    (void)jvmti, (void)jni, (void)thread, (void)klass, (void)size;
    if (my_env < 0)
        my_env = (int)(atomic_fetch_add(&next_env, 1) % ENVS);
    jvmtiEnv *e = envs[my_env];
    (*e)->SetTag(e, object, atomic_fetch_add_explicit(&next_tag, 1, memory_order_relaxed));
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)options, (void)reserved;
    jvmtiEnv *main_env = NULL;
    if ((*vm)->GetEnv(vm, (void **)&main_env, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_sampled_object_alloc_events = 1;
    if ((*main_env)->AddCapabilities(main_env, &caps) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.SampledObjectAlloc = on_alloc;
    (*main_env)->SetEventCallbacks(main_env, &cb, (jint)sizeof cb);
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    for (int i = 0; i < ENVS; i++)
        if ((*vm)->GetEnv(vm, (void **)&envs[i], JVMTI_VERSION_11) != JNI_OK ||
            (*envs[i])->AddCapabilities(envs[i], &caps) != JVMTI_ERROR_NONE)
            return JNI_ERR;
    (*main_env)->SetHeapSamplingInterval(main_env, 0);
    (*main_env)->SetEventNotificationMode(main_env, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
                                          NULL);
    return JNI_OK;
}

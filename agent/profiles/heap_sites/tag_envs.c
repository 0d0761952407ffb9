#include "tag_envs.h"

#include <stdatomic.h>
#include <string.h>

#include "jvmti_util.h"
#include "log.h"

static jvmtiEnv *envs[TAG_ENVS_MAX];
static int nenvs;
static _Atomic(unsigned) next_thread_env;
static _Atomic(uint64_t) collections;
static bool frees;

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    (void)jvmti;
    atomic_fetch_add_explicit(&collections, 1, memory_order_relaxed);
}

static struct hprof_error setup(jvmtiEnv *e, jvmtiEventObjectFree on_free, bool gc_events)
{
    jvmtiCapabilities potential, caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_generate_object_free_events = on_free != NULL;
    if ((*e)->GetPotentialCapabilities(e, &potential) == JVMTI_ERROR_NONE)
        caps.can_generate_garbage_collection_events =
            gc_events && potential.can_generate_garbage_collection_events;
    struct hprof_error err =
        jvmti_util_error(e, (*e)->AddCapabilities(e, &caps), "AddCapabilities (heap=sites tags)");
    if (hprof_failed(&err))
        return err;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.ObjectFree = on_free;
    cb.GarbageCollectionFinish = on_gc_finish;
    err =
        jvmti_util_error(e, (*e)->SetEventCallbacks(e, &cb, (jint)sizeof cb), "SetEventCallbacks");
    if (hprof_failed(&err))
        return err;
    if (on_free)
        err = jvmti_util_error(
            e, (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL),
            "SetEventNotificationMode(ObjectFree)");
    if (hprof_failed(&err))
        return err;
    if (caps.can_generate_garbage_collection_events)
        jvmti_util_failed(e,
                          (*e)->SetEventNotificationMode(
                              e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL),
                          "SetEventNotificationMode(GarbageCollectionFinish)");
    return hprof_ok();
}

struct hprof_error tag_envs_init(int n, jvmtiEventObjectFree on_free)
{
    JavaVM *vm = jvmti_util_vm();
    if (n < 1 || n > TAG_ENVS_MAX || !vm)
        return hprof_errorf("heap=sites: %d environments for tags (1 to %d)", n, TAG_ENVS_MAX);
    frees = on_free != NULL;
    for (int i = 0; i < n; i++) {
        jvmtiEnv *e = NULL;
        if ((*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e)
            return hprof_errorf("heap=sites: no JVMTI environment for tags");
        struct hprof_error err = setup(e, on_free, i == 0);
        if (hprof_failed(&err)) {
            (*e)->DisposeEnvironment(e);
            return err;
        }
        envs[nenvs++] = e;
    }
    return hprof_ok();
}

int tag_envs_count(void)
{
    return nenvs;
}

jvmtiEnv *tag_envs_at(int i)
{
    return envs[i];
}

int tag_envs_next_for_thread(void)
{
    return (int)(atomic_fetch_add_explicit(&next_thread_env, 1, memory_order_relaxed) %
                 (unsigned)nenvs);
}

uint64_t tag_envs_collections(void)
{
    return atomic_load_explicit(&collections, memory_order_acquire);
}

void tag_envs_flush_frees(void)
{
    for (int i = 0; frees && i < nenvs; i++)
        (*envs[i])->SetEventNotificationMode(envs[i], JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
}

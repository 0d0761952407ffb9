/* wall=y on virtual threads (wall_vthreads.h). */
#include "wall_vthreads.h"

#include <string.h>

#include "jvmti_util.h"
#include "wall_sampler.h"
#include "wall_threads.h"

/* JDK 21's event numbers, not in the JDK 17 jvmti.h the agent is built against. */
#define EVENT_VIRTUAL_THREAD_START ((jvmtiEvent)87)
#define EVENT_VIRTUAL_THREAD_END ((jvmtiEvent)88)

typedef void(JNICALL *vthread_event)(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread);

/* JDK 21's callback table: JDK 17's, then events 87 and 88. */
struct callbacks21 {
    jvmtiEventCallbacks base;
    vthread_event virtual_thread_start, virtual_thread_end;
};

static jvmtiEnv *main_env; /* the profile's environment: thread table, stacks */
static jvmtiEnv *event_env;

static void JNICALL on_vthread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    uint64_t now;
    int64_t tick = wall_sampler_tick_now(&now);
    wall_threads_add_virtual(main_env, jni, vthread, tick, now);
}

static void JNICALL on_vthread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    wall_sampler_thread_ended(main_env, jni, vthread);
}

static struct hprof_error fail(jvmtiEnv *e, jvmtiError err, const char *what)
{
    struct hprof_error r = jvmti_util_error(e, err, what);
    (*e)->DisposeEnvironment(e);
    return r;
}

struct hprof_error wall_vthreads_start(jvmtiEnv *jvmti)
{
    JavaVM *vm = jvmti_util_vm();
    if (!vm || !jvmti_util_add_virtual_threads_capability(jvmti))
        return hprof_ok(); /* JDK 17: no virtual threads */
    jvmtiEnv *e = NULL;
    if ((*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e)
        return hprof_errorf("no JVMTI environment for virtual-thread events");
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    jvmti_util_caps_set_virtual_threads(&caps);
    jvmtiError err = (*e)->AddCapabilities(e, &caps);
    if (err != JVMTI_ERROR_NONE)
        return fail(e, err, "AddCapabilities(can_support_virtual_threads)");
    struct callbacks21 cb;
    memset(&cb, 0, sizeof cb);
    cb.virtual_thread_start = on_vthread_start;
    cb.virtual_thread_end = on_vthread_end;
    err = (*e)->SetEventCallbacks(e, &cb.base, (jint)sizeof cb);
    if (err != JVMTI_ERROR_NONE)
        return fail(e, err, "SetEventCallbacks(VirtualThreadStart)");
    main_env = jvmti;
    err = (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, EVENT_VIRTUAL_THREAD_START, NULL);
    if (err == JVMTI_ERROR_NONE)
        err = (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, EVENT_VIRTUAL_THREAD_END, NULL);
    if (err != JVMTI_ERROR_NONE)
        return fail(e, err, "SetEventNotificationMode(VirtualThreadStart)");
    event_env = e;
    return hprof_ok();
}

void wall_vthreads_vm_init(JNIEnv *jni)
{
    if (!event_env)
        return;
    /* The default scheduler's carriers (JDK 21, 25). */
    jclass cls = (*jni)->FindClass(jni, "jdk/internal/misc/CarrierThread");
    if (!cls) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    wall_threads_skip_carriers((*jni)->NewGlobalRef(jni, cls));
    (*jni)->DeleteLocalRef(jni, cls);
}

bool wall_vthreads_followed(void)
{
    return event_env != NULL;
}

#include "jvmti_util.h"

#include <stdint.h>
#include <string.h>

#include "log.h"

static jvmtiEnv *the_jvmti;
static JavaVM *the_vm;

jvmtiEnv *jvmti_util_env(void)
{
    return the_jvmti;
}
void jvmti_util_set_env(jvmtiEnv *jvmti)
{
    the_jvmti = jvmti;
}
JavaVM *jvmti_util_vm(void)
{
    return the_vm;
}
void jvmti_util_set_vm(JavaVM *vm)
{
    the_vm = vm;
}

bool jvmti_util_start_agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                                   jvmtiStartFunction fn, void *arg, jint priority)
{
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = init ? (*jni)->NewStringUTF(jni, name) : NULL;
    jthread thread = jname ? (*jni)->NewObject(jni, cls, init, jname) : NULL;
    bool ok =
        thread && (*jvmti)->RunAgentThread(jvmti, thread, fn, arg, priority) == JVMTI_ERROR_NONE;
    if (!thread)
        (*jni)->ExceptionClear(jni);
    if (thread)
        (*jni)->DeleteLocalRef(jni, thread);
    if (jname)
        (*jni)->DeleteLocalRef(jni, jname);
    if (cls)
        (*jni)->DeleteLocalRef(jni, cls);
    return ok;
}

struct hprof_error jvmti_util_error(jvmtiEnv *jvmti, jvmtiError err, const char *what)
{
    if (err == JVMTI_ERROR_NONE)
        return hprof_ok();
    char *name = NULL;
    if (jvmti && (*jvmti)->GetErrorName(jvmti, err, &name) == JVMTI_ERROR_NONE && name) {
        struct hprof_error e = hprof_errorf("%s failed: %s (%d)", what, name, (int)err);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        return e;
    }
    return hprof_errorf("%s failed: JVMTI error %d", what, (int)err);
}

bool jvmti_util_failed(jvmtiEnv *jvmti, jvmtiError err, const char *what)
{
    struct hprof_error e = jvmti_util_error(jvmti, err, what);
    if (hprof_failed(&e))
        log_error("%s", e.text);
    return hprof_failed(&e);
}

void jvmti_util_free(jvmtiEnv *jvmti, void *p)
{
    if (p)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

bool jvmti_util_live(jvmtiEnv *jvmti)
{
    jvmtiPhase phase = JVMTI_PHASE_DEAD;
    return (*jvmti)->GetPhase(jvmti, &phase) == JVMTI_ERROR_NONE && phase == JVMTI_PHASE_LIVE;
}

_Static_assert(sizeof(jvmtiCapabilities) == 16, "jvmtiCapabilities is four 32-bit units");

/* The mask of JVMTI_CAP_VIRTUAL_THREADS_BIT within its 32-bit unit. */
static uint32_t vthread_mask(void)
{
    unsigned bit = JVMTI_CAP_VIRTUAL_THREADS_BIT % 32;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    bit = 31 - bit;
#endif
    return UINT32_C(1) << bit;
}

void jvmti_util_caps_set_virtual_threads(jvmtiCapabilities *caps)
{
    uint32_t units[4];
    memcpy(units, caps, sizeof units);
    units[JVMTI_CAP_VIRTUAL_THREADS_BIT / 32] |= vthread_mask();
    memcpy(caps, units, sizeof units);
}

bool jvmti_util_caps_has_virtual_threads(const jvmtiCapabilities *caps)
{
    uint32_t units[4];
    memcpy(units, caps, sizeof units);
    return (units[JVMTI_CAP_VIRTUAL_THREADS_BIT / 32] & vthread_mask()) != 0;
}

bool jvmti_util_add_virtual_threads_capability(jvmtiEnv *jvmti)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    if ((*jvmti)->GetCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE &&
        jvmti_util_caps_has_virtual_threads(&caps))
        return true; /* another profile added it */
    memset(&caps, 0, sizeof caps);
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
        !jvmti_util_caps_has_virtual_threads(&caps))
        return false;
    memset(&caps, 0, sizeof caps);
    jvmti_util_caps_set_virtual_threads(&caps);
    return (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
}

jint jvmti_util_extension_event_index(jvmtiEnv *jvmti, const char *id)
{
    jint n = 0;
    jvmtiExtensionEventInfo *events = NULL;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &events) != JVMTI_ERROR_NONE)
        return -1;
    jint index = -1;
    for (jint i = 0; i < n; i++) {
        if (index < 0 && events[i].id && strcmp(events[i].id, id) == 0)
            index = events[i].extension_event_index;
        for (jint p = 0; p < events[i].param_count; p++)
            jvmti_util_free(jvmti, events[i].params[p].name);
        jvmti_util_free(jvmti, events[i].params);
        jvmti_util_free(jvmti, events[i].id);
        jvmti_util_free(jvmti, events[i].short_description);
    }
    jvmti_util_free(jvmti, events);
    return index;
}

bool jvmti_util_watch_mounts(jvmtiEnv *jvmti, jvmtiExtensionEvent on_mount,
                             jvmtiExtensionEvent on_unmount)
{
    jint mount =
        jvmti_util_extension_event_index(jvmti, "com.sun.hotspot.events.VirtualThreadMount");
    jint unmount =
        jvmti_util_extension_event_index(jvmti, "com.sun.hotspot.events.VirtualThreadUnmount");
    /* HotSpot enables an extension event with its callback, and also through
     * SetEventNotificationMode with the extension index as the event type. */
    if (mount >= 0 && unmount >= 0 &&
        (*jvmti)->SetExtensionEventCallback(jvmti, mount, on_mount) == JVMTI_ERROR_NONE &&
        (*jvmti)->SetExtensionEventCallback(jvmti, unmount, on_unmount) == JVMTI_ERROR_NONE &&
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)mount, NULL) ==
            JVMTI_ERROR_NONE &&
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)unmount, NULL) ==
            JVMTI_ERROR_NONE)
        return true;
    if (mount >= 0) {
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, (jvmtiEvent)mount, NULL);
        (*jvmti)->SetExtensionEventCallback(jvmti, mount, NULL);
    }
    if (unmount >= 0)
        (*jvmti)->SetExtensionEventCallback(jvmti, unmount, NULL);
    return false;
}

/* What the async cpu=samples sampler asks of the VM before it takes a single sample, without
 * sampling (bench/cpu-samples/floor.sh compares it with no agent and with cpu=samples):
 *   cml  CompiledMethodLoad enabled with an empty callback: HotSpot then records debug
 *        information at non-safepoint pcs in every compiled method (DebugNonSafepoints) and its
 *        service thread builds each method's address-to-location map to post the event;
 *   ids  ClassLoad enabled (AsyncGetCallTrace refuses to walk without it) and a jmethodID for
 *        every method of every class at ClassPrepare (AGCT names only methods that have one).
 * Options: a comma-separated list of these. Not part of the product. */
#include <jvmti.h>
#include <string.h>

static void JNICALL on_compiled(jvmtiEnv *jvmti, jmethodID method, jint code_size,
                                const void *code_addr, jint map_length,
                                const jvmtiAddrLocationMap *map, const void *compile_info)
{
    (void)jvmti, (void)method, (void)code_size, (void)code_addr, (void)map_length, (void)map,
        (void)compile_info;
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jvmti, (void)jni, (void)thread, (void)klass;
}

static void JNICALL on_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jni, (void)thread;
    jint n = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) == JVMTI_ERROR_NONE)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    int cml = options && strstr(options, "cml") != NULL;
    int ids = options && strstr(options, "ids") != NULL;
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_compiled_method_load_events = cml;
    (*jvmti)->AddCapabilities(jvmti, &caps);
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.CompiledMethodLoad = on_compiled;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_prepare;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
    if (cml)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                           NULL);
    if (ids) {
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL);
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL);
    }
    return JNI_OK;
}

#include "agct_stack.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* AGCT's trace, from its public description: it names the calling thread's JNIEnv and
 * receives the frame count (negative: an error code). Its frames are struct async_frame. */
struct agct_trace {
    JNIEnv *env_id;
    jint num_frames;
    struct async_frame *frames;
};

typedef void (*agct_fn)(struct agct_trace *trace, jint depth, void *ucontext);

/* jvmtiFrameInfo is converted in place from agct_frame: each frame must fit in its slot. */
_Static_assert(sizeof(struct async_frame) == sizeof(jvmtiFrameInfo), "frame sizes");

static agct_fn agct;

bool agct_stack_init(void)
{
    if (agct)
        return true;
    void *sym = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (!sym) {
        /* libjvm loaded without RTLD_GLOBAL (an embedding launcher): ask it directly. */
        void *jvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
        if (jvm) {
            sym = dlsym(jvm, "AsyncGetCallTrace");
            dlclose(jvm);
        }
    }
    agct = (agct_fn)sym;
    return agct != NULL;
}

bool agct_stack_available(void)
{
    return agct != NULL;
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    (void)klass;
}

void agct_stack_set_callbacks(jvmtiEventCallbacks *cb)
{
    if (!cb->ClassLoad)
        cb->ClassLoad = on_class_load;
}

int agct_stack_enable_events(jvmtiEnv *jvmti)
{
    return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL) ==
                   JVMTI_ERROR_NONE
               ? 0
               : -1;
}

void agct_stack_prepare_class(jvmtiEnv *jvmti, jclass klass)
{
    jint n = 0;
    jmethodID *methods = NULL;
    /* GetClassMethods creates the jmethodIDs it returns; a class not prepared yet fails and
     * gets its turn at ClassPrepare. */
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) == JVMTI_ERROR_NONE && methods)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

int agct_stack_get(JNIEnv *jni, jvmtiFrameInfo *frames, int depth)
{
    if (!agct || depth <= 0)
        return -1;
    struct agct_trace trace = {jni, 0, (struct async_frame *)(void *)frames};
    agct(&trace, depth, NULL);
    int n = trace.num_frames;
    if (n < 0 || n > depth)
        return -1;
    return agct_stack_to_frame_info(frames, n);
}

int agct_stack_to_frame_info(jvmtiFrameInfo *frames, int n)
{
    /* Same slots, converted front to back: each frame is copied out whole before its slot is
     * written (memcpy: the two views of one slot must not be reordered). */
    for (int i = 0; i < n; i++) {
        struct async_frame a;
        memcpy(&a, (const unsigned char *)frames + sizeof a * (size_t)i, sizeof a);
        jint lineno = a.lineno;
        jmethodID method = a.method_id;
        if (!method)
            return -1; /* no jmethodID yet: GetStackTrace makes one */
        jlocation location;
        if (lineno >= 0)
            location = lineno;
        else if (lineno == ASYNC_FRAME_NATIVE)
            location = -1;
        else
            return -1;
        jvmtiFrameInfo f = {method, location};
        memcpy(&frames[i], &f, sizeof f);
    }
    return n;
}

int agct_stack_walk(JNIEnv *env, struct async_frame *frames, int depth, void *ucontext)
{
    agct_fn fn = agct;
    if (!fn)
        return ASYNC_TICKS_UNKNOWN_STATE;
    struct agct_trace trace = {env, 0, frames};
    fn(&trace, depth, ucontext);
    return trace.num_frames;
}

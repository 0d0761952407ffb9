#include "agct_stack.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* AGCT's structures, from its public description: a frame is a line number field (the
 * bytecode index of a Java frame, negative for a native method) and the jmethodID; the trace
 * names the calling thread's JNIEnv and receives the frame count (negative: an error code). */
struct agct_frame {
    jint lineno;
    jmethodID method_id;
};

struct agct_trace {
    JNIEnv *env_id;
    jint num_frames;
    struct agct_frame *frames;
};

typedef void (*agct_fn)(struct agct_trace *trace, jint depth, void *ucontext);

/* The value AGCT puts in lineno for a native method's frame. */
#define AGCT_NATIVE_FRAME (-3)

/* jvmtiFrameInfo is converted in place from agct_frame: each frame must fit in its slot. */
_Static_assert(sizeof(struct agct_frame) == sizeof(jvmtiFrameInfo), "frame sizes");

static agct_fn agct;

bool async_stack_init(void)
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

bool async_stack_available(void)
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

void async_stack_set_callbacks(jvmtiEventCallbacks *cb)
{
    if (!cb->ClassLoad)
        cb->ClassLoad = on_class_load;
}

int async_stack_enable_events(jvmtiEnv *jvmti)
{
    return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL) ==
                   JVMTI_ERROR_NONE
               ? 0
               : -1;
}

void async_stack_prepare_class(jvmtiEnv *jvmti, jclass klass)
{
    jint n = 0;
    jmethodID *methods = NULL;
    /* GetClassMethods creates the jmethodIDs it returns; a class not prepared yet fails and
     * gets its turn at ClassPrepare. */
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) == JVMTI_ERROR_NONE && methods)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

int async_stack_get(JNIEnv *jni, jvmtiFrameInfo *frames, int depth)
{
    if (!agct || depth <= 0)
        return -1;
    struct agct_trace trace = {jni, 0, (struct agct_frame *)(void *)frames};
    agct(&trace, depth, NULL);
    int n = trace.num_frames;
    if (n < 0 || n > depth)
        return -1;
    /* Same slots, converted front to back: each frame is copied out whole before its slot is
     * written (memcpy: the two views of one slot must not be reordered). */
    for (int i = 0; i < n; i++) {
        struct agct_frame a;
        memcpy(&a, (const unsigned char *)frames + sizeof a * (size_t)i, sizeof a);
        jint lineno = a.lineno;
        jmethodID method = a.method_id;
        if (!method)
            return -1; /* no jmethodID yet: GetStackTrace makes one */
        jlocation location;
        if (lineno >= 0)
            location = lineno;
        else if (lineno == AGCT_NATIVE_FRAME)
            location = -1;
        else
            return -1;
        jvmtiFrameInfo f = {method, location};
        memcpy(&frames[i], &f, sizeof f);
    }
    return n;
}

/* heap_walk_probe(): the heap walk's reading of the VM's callback arguments checked on a known
 * object graph before a dump relies on it (heap_walk.h). */
#include "heap_walk.h"

#include <stdlib.h>
#include <string.h>

/* ---- the probe ---------------------------------------------------------------------------- */

#define PROBE_MAX 64

struct probe_event {
    char what; /* 'r' reference, 'p' primitive field, 'a' array values */
    jvmtiHeapReferenceKind kind;
    jint index;
    uint64_t object, referrer; /* addresses read as the walk would */
    jint count;
    jint first, second; /* int array contents */
};

struct probe {
    struct probe_event ev[PROBE_MAX];
    int n;
    bool broken;
};

static struct probe_event *probe_add(struct probe *P, char what)
{
    if (P->n == PROBE_MAX) {
        P->broken = true;
        return NULL;
    }
    struct probe_event *e = &P->ev[P->n++];
    memset(e, 0, sizeof *e);
    e->what = what;
    return e;
}

static jint JNICALL probe_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                    jlong class_tag, jlong referrer_class_tag, jlong size,
                                    jlong *tp, jlong *rtp, jint length, void *user_data)
{
    (void)length;
    struct probe *P = user_data;
    struct probe_event *e = probe_add(P, 'r');
    if (!e || !rtp)
        return 0;
    if (tp[-1] != size || tp[1] != class_tag ||
        (rtp != tp && (rtp[1] != referrer_class_tag || rtp[2] != (jlong)(intptr_t)rtp)))
        P->broken = true;
    e->kind = kind;
    e->index = kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT ? info->array.index : -1;
    e->object = (uint64_t)tp[-2];
    e->referrer = rtp == tp ? e->object : (uint64_t)rtp[-1];
    /* Stay inside the probe's graph: not into classes. */
    return kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT || kind == JVMTI_HEAP_REFERENCE_FIELD
               ? JVMTI_VISIT_OBJECTS
               : 0;
}

static jint JNICALL probe_primitive_field(jvmtiHeapReferenceKind kind,
                                          const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                          jlong *tp, jvalue value, jvmtiPrimitiveType type,
                                          void *user_data)
{
    (void)kind;
    (void)info;
    (void)value;
    (void)type;
    struct probe *P = user_data;
    struct probe_event *e = probe_add(P, 'p');
    if (!e)
        return 0;
    if (tp[1] != class_tag)
        P->broken = true;
    e->object = (uint64_t)tp[-2];
    return 0;
}

static jint JNICALL probe_array(jlong class_tag, jlong size, jlong *tp, jint count,
                                jvmtiPrimitiveType type, const void *elements, void *user_data)
{
    struct probe *P = user_data;
    struct probe_event *e = probe_add(P, 'a');
    if (!e)
        return 0;
    if (tp[-1] != size || tp[1] != class_tag)
        P->broken = true;
    e->object = (uint64_t)tp[-2];
    e->count = count;
    if (type == JVMTI_PRIMITIVE_TYPE_INT && count == 2) {
        e->first = ((const jint *)elements)[0];
        e->second = ((const jint *)elements)[1];
    }
    return 0;
}

static bool plausible_address(uint64_t a)
{
    return a != 0 && (a & 7) == 0 && a < (1ull << 62);
}

/* The graph: p = {a, b, a, c, s} with a = new Object(), b = {a}, c = {7, 8}, s a String. */
static bool probe_check(const struct probe *P)
{
    if (P->broken || P->n == 0 || P->ev[0].what != 'r')
        return false;
    uint64_t pa = P->ev[0].referrer, e[5] = {0};
    for (int i = 0; i < P->n; i++) {
        const struct probe_event *ev = &P->ev[i];
        if (ev->what == 'r' && ev->referrer == pa &&
            ev->kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT && ev->index >= 0 && ev->index < 5)
            e[ev->index] = ev->object;
    }
    for (int i = 0; i < 5; i++)
        if (!plausible_address(e[i]) || e[i] == pa)
            return false;
    if (e[0] != e[2] || e[0] == e[1] || e[0] == e[3] || e[0] == e[4] || e[1] == e[3] ||
        e[1] == e[4] || e[3] == e[4])
        return false;
    bool b_to_a = false, a_visited = false, c_values = false, s_fields = false;
    for (int i = 0; i < P->n; i++) {
        const struct probe_event *ev = &P->ev[i];
        if (ev->what == 'r' && ev->referrer == e[1] &&
            ev->kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT && ev->index == 0 && ev->object == e[0])
            b_to_a = true;
        if (ev->what == 'r' && ev->referrer == e[0] && ev->kind == JVMTI_HEAP_REFERENCE_CLASS)
            a_visited = true;
        if (ev->what == 'a' && ev->object == e[3] && ev->count == 2 && ev->first == 7 &&
            ev->second == 8)
            c_values = true;
        if (ev->what == 'p' && ev->object == e[4])
            s_fields = true;
    }
    return b_to_a && a_visited && c_values && s_fields;
}

bool heap_walk_probe(jvmtiEnv *denv, JNIEnv *jni)
{
    if ((*jni)->PushLocalFrame(jni, 16) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    bool ok = false;
    jclass object = (*jni)->FindClass(jni, "java/lang/Object");
    jobject a = object ? (*jni)->AllocObject(jni, object) : NULL;
    jobjectArray b = a ? (*jni)->NewObjectArray(jni, 1, object, a) : NULL;
    jintArray c = b ? (*jni)->NewIntArray(jni, 2) : NULL;
    jstring s = c ? (*jni)->NewStringUTF(jni, "hprof heap walk probe") : NULL;
    jobjectArray p = s ? (*jni)->NewObjectArray(jni, 5, object, NULL) : NULL;
    if (p) {
        const jint vals[2] = {7, 8};
        (*jni)->SetIntArrayRegion(jni, c, 0, 2, vals);
        jobject elems[5] = {a, b, a, c, s};
        for (jsize i = 0; i < 5; i++)
            (*jni)->SetObjectArrayElement(jni, p, i, elems[i]);
    }
    if (p && !(*jni)->ExceptionCheck(jni)) {
        struct probe *P = calloc(1, sizeof *P);
        jvmtiHeapCallbacks cb;
        memset(&cb, 0, sizeof cb);
        cb.heap_reference_callback = probe_reference;
        cb.primitive_field_callback = probe_primitive_field;
        cb.array_primitive_value_callback = probe_array;
        if (P && (*denv)->FollowReferences(denv, 0, NULL, p, &cb, P) == JVMTI_ERROR_NONE)
            ok = probe_check(P);
        free(P);
    }
    (*jni)->ExceptionClear(jni);
    (*jni)->PopLocalFrame(jni, NULL);
    return ok;
}

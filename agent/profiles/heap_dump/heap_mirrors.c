#include "heap_mirrors.h"

#include <stdlib.h>
#include <string.h>

#include "heap_classes.h"
#include "jvmti_util.h"
#include "log.h"
#include "tags.h"

#define NPRIMITIVES 9

/* A field of java.lang.Class: its slot in the class's layout and how to read it. */
struct class_field {
    uint32_t slot;
    jfieldID id;
    enum hprof_basic_type type;
};

struct primitive {
    hprof_id id; /* its tag in the dump environment */
    union hprof_value *values;
    uint32_t *holder_index; /* per slot: index in the holder + 1, 0 = none */
};

static struct {
    jobject holder; /* global reference */
    uint64_t holder_tag;
    hprof_id *element_ids; /* holder index -> id reported by the walk */
    uint32_t nelements;
    struct primitive prim[NPRIMITIVES];
    uint32_t nprim, nvalues;
} M;

/* Growable list of local references to keep. */
struct refs {
    jobject *v;
    uint32_t n, cap;
};

static bool refs_add(struct refs *r, jobject o)
{
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 1024;
        jobject *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return false;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = o;
    return true;
}

static void clear(JNIEnv *jni)
{
    if (M.holder && jni)
        (*jni)->DeleteGlobalRef(jni, M.holder);
    for (uint32_t i = 0; i < M.nprim; i++) {
        free(M.prim[i].values);
        free(M.prim[i].holder_index);
    }
    free(M.element_ids);
    memset(&M, 0, sizeof M);
}

static union hprof_value read_primitive(JNIEnv *jni, jobject o, const struct class_field *f)
{
    union hprof_value v;
    memset(&v, 0, sizeof v);
    switch (f->type) {
    case HPROF_TYPE_BOOLEAN:
        v.z = (*jni)->GetBooleanField(jni, o, f->id);
        break;
    case HPROF_TYPE_BYTE:
        v.b = (*jni)->GetByteField(jni, o, f->id);
        break;
    case HPROF_TYPE_CHAR:
        v.c = (*jni)->GetCharField(jni, o, f->id);
        break;
    case HPROF_TYPE_SHORT:
        v.s = (*jni)->GetShortField(jni, o, f->id);
        break;
    case HPROF_TYPE_INT:
        v.i = (*jni)->GetIntField(jni, o, f->id);
        break;
    case HPROF_TYPE_LONG:
        v.j = (*jni)->GetLongField(jni, o, f->id);
        break;
    case HPROF_TYPE_FLOAT:
        v.f = (*jni)->GetFloatField(jni, o, f->id);
        break;
    case HPROF_TYPE_DOUBLE:
        v.d = (*jni)->GetDoubleField(jni, o, f->id);
        break;
    default:
        break;
    }
    return v;
}

/* The fields of java.lang.Class, in the slots of its layout (its own instance fields, in
 * GetClassFields order: java.lang.Object has none). */
static uint32_t class_fields(jvmtiEnv *jvmti, jclass class_class, const struct class_layout *l,
                             struct class_field *out, uint32_t max)
{
    jint n = 0;
    jfieldID *fields = NULL;
    if ((*jvmti)->GetClassFields(jvmti, class_class, &n, &fields) != JVMTI_ERROR_NONE)
        return 0;
    uint32_t k = 0, slot = 0;
    for (jint i = 0; i < n && k < max; i++) {
        jint mods = 0;
        char *sig = NULL;
        if ((*jvmti)->GetFieldModifiers(jvmti, class_class, fields[i], &mods) != JVMTI_ERROR_NONE ||
            (mods & 0x0008) != 0 ||
            (*jvmti)->GetFieldName(jvmti, class_class, fields[i], NULL, &sig, NULL) !=
                JVMTI_ERROR_NONE)
            continue;
        if (slot < l->nown) {
            out[k].slot = slot;
            out[k].id = fields[i];
            out[k].type = l->instance[slot].type;
            k++;
        }
        slot++;
        jvmti_util_free(jvmti, sig);
    }
    jvmti_util_free(jvmti, fields);
    return slot == l->nown ? k : 0;
}

static const char *const wrappers[NPRIMITIVES] = {
    "java/lang/Boolean", "java/lang/Character", "java/lang/Float",
    "java/lang/Double",  "java/lang/Byte",      "java/lang/Short",
    "java/lang/Integer", "java/lang/Long",      "java/lang/Void",
};

/* int.class and the others, through Integer.TYPE... Only from an initialized wrapper class:
 * GetStaticFieldID would initialize it (run its static initializer). */
static jclass primitive_class(jvmtiEnv *jvmti, JNIEnv *jni, const char *wrapper)
{
    jclass w = (*jni)->FindClass(jni, wrapper);
    jint status = 0;
    if (w && ((*jvmti)->GetClassStatus(jvmti, w, &status) != JVMTI_ERROR_NONE ||
              !(status & JVMTI_CLASS_STATUS_INITIALIZED))) {
        (*jni)->DeleteLocalRef(jni, w);
        w = NULL;
    }
    jfieldID f = w ? (*jni)->GetStaticFieldID(jni, w, "TYPE", "Ljava/lang/Class;") : NULL;
    jobject p = f ? (*jni)->GetStaticObjectField(jni, w, f) : NULL;
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (w)
        (*jni)->DeleteLocalRef(jni, w);
    return (jclass)p;
}

static hprof_id tag_in(jvmtiEnv *denv, jobject o)
{
    jlong tag = 0;
    if ((*denv)->GetTag(denv, o, &tag) == JVMTI_ERROR_NONE && tag == 0) {
        tag = (jlong)tag_make(0, tags_next_serial());
        if ((*denv)->SetTag(denv, o, tag) != JVMTI_ERROR_NONE)
            tag = 0;
    }
    return (hprof_id)tag;
}

static bool fill(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni, struct refs *keep)
{
    const struct dump_class *cc = heap_classes_get(heap_classes_class_serial());
    jclass class_class = (*jni)->FindClass(jni, "java/lang/Class");
    if (!cc || !cc->has_layout || !class_class) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    const struct class_layout *l = &cc->layout;
    struct class_field f[64];
    uint32_t nf = class_fields(jvmti, class_class, l, f, 64);
    if (nf == 0)
        return false;
    M.nvalues = l->ninstance;

    /* Primitive types' class objects: every field, for their INSTANCE DUMPs. */
    for (int p = 0; p < NPRIMITIVES; p++) {
        jclass pc = primitive_class(jvmti, jni, wrappers[p]);
        if (!pc)
            continue;
        struct primitive *pr = &M.prim[M.nprim];
        pr->id = tag_in(denv, pc);
        pr->values = calloc(l->ninstance ? l->ninstance : 1, sizeof *pr->values);
        pr->holder_index = calloc(l->ninstance ? l->ninstance : 1, sizeof *pr->holder_index);
        if (!pr->id || !pr->values || !pr->holder_index)
            return false;
        M.nprim++;
        for (uint32_t i = 0; i < nf; i++) {
            if (f[i].type != HPROF_TYPE_OBJECT) {
                pr->values[f[i].slot] = read_primitive(jni, pc, &f[i]);
                continue;
            }
            jobject v = (*jni)->GetObjectField(jni, pc, f[i].id);
            if (v) {
                if (!refs_add(keep, v))
                    return false;
                pr->holder_index[f[i].slot] = keep->n;
            }
        }
        (*jni)->DeleteLocalRef(jni, pc);
    }

    /* Every loaded class: only the references, to keep what they reach in the dump. */
    jint n = 0;
    jclass *classes = NULL;
    if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
        return false;
    bool ok = true;
    for (jint c = 0; c < n; c++) {
        for (uint32_t i = 0; ok && i < nf; i++) {
            if (f[i].type != HPROF_TYPE_OBJECT)
                continue;
            jobject v = (*jni)->GetObjectField(jni, classes[c], f[i].id);
            if (v)
                ok = refs_add(keep, v);
        }
        (*jni)->DeleteLocalRef(jni, classes[c]);
    }
    jvmti_util_free(jvmti, classes);
    (*jni)->DeleteLocalRef(jni, class_class);
    return ok;
}

void heap_mirrors_prepare(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni)
{
    clear(jni);
    struct refs keep = {0};
    bool ok = fill(jvmti, denv, jni, &keep);
    jclass object = ok ? (*jni)->FindClass(jni, "java/lang/Object") : NULL;
    jobjectArray holder = object ? (*jni)->NewObjectArray(jni, (jsize)keep.n, object, NULL) : NULL;
    for (uint32_t i = 0; holder && i < keep.n; i++)
        (*jni)->SetObjectArrayElement(jni, holder, (jsize)i, keep.v[i]);
    if (holder && !(*jni)->ExceptionCheck(jni)) {
        M.holder = (*jni)->NewGlobalRef(jni, holder);
        M.holder_tag = M.holder ? tag_in(denv, M.holder) : 0;
        M.nelements = keep.n;
        M.element_ids = calloc(keep.n ? keep.n : 1, sizeof *M.element_ids);
    }
    (*jni)->ExceptionClear(jni);
    for (uint32_t i = 0; i < keep.n; i++)
        (*jni)->DeleteLocalRef(jni, keep.v[i]);
    free(keep.v);
    if (holder)
        (*jni)->DeleteLocalRef(jni, holder);
    if (object)
        (*jni)->DeleteLocalRef(jni, object);
    if (!M.holder_tag || !M.element_ids) {
        log_warning("heap dump: the fields of class objects could not be read; objects only "
                    "they refer to are left out");
        clear(jni);
    }
}

uint64_t heap_mirrors_holder_tag(void)
{
    return M.holder_tag;
}

void heap_mirrors_element(uint32_t index, hprof_id id)
{
    if (index < M.nelements)
        M.element_ids[index] = id;
}

const union hprof_value *heap_mirrors_values(hprof_id id)
{
    for (uint32_t p = 0; p < M.nprim; p++) {
        struct primitive *pr = &M.prim[p];
        if (pr->id != id)
            continue;
        for (uint32_t s = 0; s < M.nvalues; s++)
            if (pr->holder_index[s] && pr->holder_index[s] <= M.nelements)
                pr->values[s].obj = M.element_ids[pr->holder_index[s] - 1];
        return pr->values;
    }
    return NULL;
}

void heap_mirrors_release(JNIEnv *jni)
{
    clear(jni);
}

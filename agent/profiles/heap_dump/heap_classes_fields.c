/* The field layout of a heap dump's classes: each class's declared fields (GetClassFields, plus
 * the fields the VM hides from it), and for an instance class the layout of its whole chain of
 * superclasses and interfaces (heap_layout.h), read once per class. */
#include "heap_classes_internal.h"

#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "jvmti_util.h"
#include "string_table.h"

/* Fields the VM hides from GetClassFields but FollowReferences counts (HotSpot's filtered
 * fields of reflection internals); each is its class's only field. */
static const struct {
    const char *class_sig, *name;
} hidden_fields[] = {
    {"Ljdk/internal/reflect/ConstantPool;", "constantPoolOop"},
    {"Ljdk/internal/reflect/UnsafeStaticFieldAccessorImpl;", "base"},
};

static void add_hidden_field(struct dump_class *c, const char *sig)
{
    for (size_t h = 0; h < sizeof hidden_fields / sizeof *hidden_fields; h++) {
        if (strcmp(sig, hidden_fields[h].class_sig) != 0)
            continue;
        for (uint32_t i = 0; i < c->ndeclared; i++)
            if (strcmp(c->declared[i].name, hidden_fields[h].name) == 0)
                return;
        struct layout_field *d = realloc(c->declared, (c->ndeclared + 1) * sizeof *d);
        if (!d)
            return;
        memmove(d + 1, d, c->ndeclared * sizeof *d);
        hprof_id id = string_table_intern(hidden_fields[h].name);
        d[0] = (struct layout_field){id, string_table_text(id), HPROF_TYPE_OBJECT, false};
        c->declared = d;
        c->ndeclared++;
    }
}

/* Reads the declared fields of k once. Returns false if the class is not prepared yet. */
static bool read_declared(jvmtiEnv *jvmti, jclass k, struct dump_class *c)
{
    if (c->declared)
        return true;
    jint n = 0;
    jfieldID *fields = NULL;
    if ((*jvmti)->GetClassFields(jvmti, k, &n, &fields) != JVMTI_ERROR_NONE)
        return false;
    struct layout_field *d = calloc(n > 0 ? (size_t)n : 1, sizeof *d);
    bool ok = d != NULL;
    for (jint i = 0; ok && i < n; i++) {
        char *name = NULL, *sig = NULL;
        jint mods = 0;
        if ((*jvmti)->GetFieldName(jvmti, k, fields[i], &name, &sig, NULL) != JVMTI_ERROR_NONE ||
            (*jvmti)->GetFieldModifiers(jvmti, k, fields[i], &mods) != JVMTI_ERROR_NONE) {
            ok = false;
        } else {
            hprof_id id = string_table_intern(name);
            d[i] =
                (struct layout_field){id, string_table_text(id), heap_layout_type_of_signature(sig),
                                      (mods & 0x0008) != 0 /* ACC_STATIC */};
            ok = id != 0;
        }
        jvmti_util_free(jvmti, name);
        jvmti_util_free(jvmti, sig);
    }
    jvmti_util_free(jvmti, fields);
    if (!ok) {
        free(d);
        return false;
    }
    c->declared = d;
    c->ndeclared = (uint32_t)n;
    const struct class_info *ci = class_table_get(c->serial);
    if (ci && ci->signature)
        add_hidden_field(c, ci->signature);
    return true;
}

struct serial_set {
    uint32_t *v;
    size_t n, cap;
};

static bool set_add(struct serial_set *s, uint32_t serial)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == serial)
            return false;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        uint32_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return false;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = serial;
    return true;
}

/* Adds the interfaces k implements or extends, transitively, to set; sums their fields. */
static bool add_interfaces(jvmtiEnv *jvmti, JNIEnv *jni, jclass k, struct serial_set *set,
                           uint32_t *nfields, int depth)
{
    jint n = 0;
    jclass *ifs = NULL;
    if (depth > 64 || (*jvmti)->GetImplementedInterfaces(jvmti, k, &n, &ifs) != JVMTI_ERROR_NONE)
        return false;
    bool ok = true;
    for (jint i = 0; i < n; i++) {
        uint32_t s = class_table_serial_of(jvmti, ifs[i]);
        struct dump_class *ic = heap_classes_entry(s);
        if (ok && ic && set_add(set, s)) {
            ok = read_declared(jvmti, ifs[i], ic) &&
                 add_interfaces(jvmti, jni, ifs[i], set, nfields, depth + 1);
            *nfields += ic->ndeclared;
        } else if (!ic) {
            ok = false;
        }
        (*jni)->DeleteLocalRef(jni, ifs[i]);
    }
    jvmti_util_free(jvmti, ifs);
    return ok;
}

/* Reads the field layout of instance class k (and the declared fields of its supers). */
void heap_classes_fields_read_layout(jvmtiEnv *jvmti, JNIEnv *jni, jclass k, struct dump_class *c)
{
    struct layout_level levels[DUMP_CLASS_MAX_CHAIN];
    struct serial_set ifaces = {0};
    uint32_t nif = 0;
    size_t nlevels = 0;
    bool ok = true;
    jclass cur = (*jni)->NewLocalRef(jni, k);
    while (ok && cur && nlevels < DUMP_CLASS_MAX_CHAIN) {
        struct dump_class *lc = heap_classes_entry(class_table_serial_of(jvmti, cur));
        ok = lc && read_declared(jvmti, cur, lc) &&
             add_interfaces(jvmti, jni, cur, &ifaces, &nif, 0);
        if (ok)
            levels[nlevels++] = (struct layout_level){lc->declared, lc->ndeclared};
        jclass super = ok ? (*jni)->GetSuperclass(jni, cur) : NULL;
        (*jni)->DeleteLocalRef(jni, cur);
        cur = super;
    }
    if (cur)
        (*jni)->DeleteLocalRef(jni, cur);
    free(ifaces.v);
    if (!ok || nlevels == DUMP_CLASS_MAX_CHAIN)
        return;
    if (heap_layout_build(levels, nlevels, nif, &c->layout) != 0)
        return;
    c->statics = calloc(c->layout.nstatics ? c->layout.nstatics : 1, sizeof *c->statics);
    if (!c->statics) {
        heap_layout_free(&c->layout);
        return;
    }
    for (uint32_t i = 0; i < c->layout.nstatics; i++)
        c->statics[i].field = c->layout.statics[i];
    c->has_layout = true;
}

/* The class list of a heap dump: the table of dump_class entries, which classes are in the dump
 * (pinned, tagged in the dump environment), their loaders, the per-dump state and CLASS DUMP
 * contents. Layouts: heap_classes_fields.c; object arrays' element classes:
 * heap_classes_elements.c. */
#include "heap_classes.h"
#include "heap_classes_internal.h"

#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "emit.h"
#include "idmap.h"
#include "jvmti_util.h"
#include "log.h"
#include "tags.h"

/* Entries by class serial (kept across dumps), serials below limit. */
static struct dump_class **table;
static uint32_t limit;

static uint32_t class_serial, object_array_serial, object_serial;
/* The listed classes' objects, pinned for the dump (global reference), and its denv tag. */
#define MAX_PINS 8
static jobject pins[MAX_PINS];
static unsigned npins;
static uint64_t pin_tag;
/* Tags of the class loaders the last prepare met -> (written by the walk, unused). */
static struct idmap loaders;
static bool loaders_ready;
static struct array_size_rule array_rule = {16, 4, 8}; /* compressed oops, until measured */
static bool array_rule_measured;

struct dump_class *heap_classes_get(uint32_t serial)
{
    return serial < limit ? table[serial] : NULL;
}

uint32_t heap_classes_limit(void)
{
    return limit;
}

struct dump_class *heap_classes_of_tag(uint64_t tag)
{
    if (tag_site(tag) != TAG_SITE_CLASS)
        return NULL;
    uint64_t s = tag_serial(tag);
    return s < limit ? table[s] : NULL;
}

uint32_t heap_classes_class_serial(void)
{
    return class_serial;
}
uint32_t heap_classes_object_array_serial(void)
{
    return object_array_serial;
}

uint64_t heap_classes_object_array_size(uint64_t n)
{
    return layout_array_size(&array_rule, n);
}

const char *heap_classes_name(uint32_t serial)
{
    const struct class_info *ci = class_table_get(serial);
    return ci && ci->name ? ci->name : "?";
}

/* Grows the table to hold serials below limit; entries are kept across dumps. */
static int table_reserve(uint32_t want)
{
    if (want <= limit)
        return 0;
    struct dump_class **t = realloc(table, want * sizeof *t);
    if (!t)
        return -1;
    memset(t + limit, 0, (want - limit) * sizeof *t);
    table = t;
    limit = want;
    return 0;
}

struct dump_class *heap_classes_entry(uint32_t serial)
{
    if (serial == 0 || table_reserve(serial + 1) != 0)
        return NULL;
    struct dump_class *c = table[serial];
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        c->serial = serial;
        const struct class_info *ci = class_table_get(serial);
        c->array_type = ci ? ci->array_type : 0;
        c->name = ci && ci->name ? ci->name : "?";
        table[serial] = c;
    }
    return c;
}

/* The loader's id: its tag in the dump environment, given on first sight. */
static hprof_id loader_id(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni, jclass k)
{
    jobject loader = NULL;
    if ((*jvmti)->GetClassLoader(jvmti, k, &loader) != JVMTI_ERROR_NONE || !loader)
        return 0;
    jlong tag = 0;
    if ((*denv)->GetTag(denv, loader, &tag) == JVMTI_ERROR_NONE && tag == 0) {
        tag = (jlong)tag_make(0, tags_next_serial());
        if ((*denv)->SetTag(denv, loader, tag) != JVMTI_ERROR_NONE)
            tag = 0;
    }
    (*jni)->DeleteLocalRef(jni, loader);
    if (tag != 0 && loaders_ready)
        idmap_put(&loaders, (uint64_t)tag, 0, 0);
    return (hprof_id)tag;
}

void heap_classes_note_written(uint64_t tag)
{
    if (loaders_ready && idmap_get(&loaders, tag, NULL, NULL))
        idmap_put(&loaders, tag, 1, 0);
}

static bool loader_written(hprof_id id)
{
    uint32_t written = 0;
    return id != 0 && loaders_ready && idmap_get(&loaders, id, &written, NULL) && written;
}

uint64_t heap_classes_pin_tag(void)
{
    return pin_tag;
}

void heap_classes_release(JNIEnv *jni)
{
    for (unsigned i = 0; i < npins && jni; i++)
        (*jni)->DeleteGlobalRef(jni, pins[i]);
    npins = 0;
    pin_tag = 0;
}

/* Holds the n classes in one Object[] under a global reference, tagged pin_tag in denv (every
 * pin of a dump has the same tag). */
static void pin_classes(jvmtiEnv *denv, JNIEnv *jni, jclass *classes, jint n)
{
    jobject pin = NULL;
    jclass class_class = npins < MAX_PINS ? (*jni)->FindClass(jni, "java/lang/Class") : NULL;
    jobjectArray a = class_class ? (*jni)->NewObjectArray(jni, n, class_class, NULL) : NULL;
    for (jint i = 0; a && i < n; i++)
        (*jni)->SetObjectArrayElement(jni, a, i, classes[i]);
    if (a && !(*jni)->ExceptionCheck(jni))
        pin = (*jni)->NewGlobalRef(jni, a);
    (*jni)->ExceptionClear(jni);
    if (a)
        (*jni)->DeleteLocalRef(jni, a);
    if (class_class)
        (*jni)->DeleteLocalRef(jni, class_class);
    if (pin && !pin_tag)
        pin_tag = tag_make(0, tags_next_serial());
    if (pin && (*denv)->SetTag(denv, pin, (jlong)pin_tag) == JVMTI_ERROR_NONE) {
        pins[npins++] = pin;
    } else {
        if (pin)
            (*jni)->DeleteGlobalRef(jni, pin);
        log_warning("heap dump: the classes could not be held for the dump; a class that "
                    "unloads meanwhile is written without its statics");
    }
}

/* Instance classes whose layout and every superclass's were read can have INSTANCE DUMPs that
 * match their CLASS DUMP chain. */
static void mark_writable(void)
{
    for (uint32_t s = 1; s < limit; s++) {
        struct dump_class *c = table[s];
        if (!c || !c->in_dump || c->array_type)
            continue;
        bool ok = c->has_layout;
        const struct dump_class *k = c;
        for (int depth = 0; ok && k->super_id != 0 && depth < DUMP_CLASS_MAX_CHAIN; depth++) {
            k = heap_classes_get((uint32_t)tag_serial(k->super_id));
            ok = k && k->in_dump && k->has_layout;
        }
        c->writable = ok;
    }
}

static void reset_walk_state(struct dump_class *c)
{
    c->visited = false;
    c->walk_loader_id = c->domain_id = c->signers_id = 0;
    c->ncp = 0;
    c->instance_size = c->mirror_size = 0;
    for (uint32_t i = 0; i < c->layout.nstatics; i++)
        memset(&c->statics[i].value, 0, sizeof c->statics[i].value);
}

/* Object[] sizes for n = 0..16, to size object arrays the walk reports without a size. */
static void measure_array_rule(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (array_rule_measured)
        return;
    array_rule_measured = true;
    jclass object = (*jni)->FindClass(jni, "java/lang/Object");
    if (!object) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    uint64_t sizes[17];
    size_t n = 0;
    for (; n < sizeof sizes / sizeof *sizes; n++) {
        jobjectArray a = (*jni)->NewObjectArray(jni, (jsize)n, object, NULL);
        jlong size = 0;
        if (!a || (*jvmti)->GetObjectSize(jvmti, a, &size) != JVMTI_ERROR_NONE) {
            (*jni)->ExceptionClear(jni);
            break;
        }
        sizes[n] = (uint64_t)size;
        (*jni)->DeleteLocalRef(jni, a);
    }
    (*jni)->DeleteLocalRef(jni, object);
    struct array_size_rule r;
    if (n == sizeof sizes / sizeof *sizes && heap_layout_solve_array_rule(sizes, n, &r))
        array_rule = r;
    else
        log_warning("object array sizes follow no known rule; sizes of object arrays in heap "
                    "dumps are estimates");
}

/* A class of the boot loader that is loaded but not linked can still have instances: objects
 * the CDS archive maps in at start-up (jdk.internal.math.FDBigInteger...). GetClassFields
 * needs a prepared class, so with CDS on such classes are linked, through
 * Class.getDeclaredFields0 (JNI ignores its access), which links without initializing (but
 * loads the classes of the fields' types). Only boot classes: other loaders' classes cannot
 * have instances before they are initialized. */
static bool link_boot_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass k)
{
    static jmethodID declared_fields;
    jint status = 0;
    jobject loader = NULL;
    if ((*jvmti)->GetClassStatus(jvmti, k, &status) != JVMTI_ERROR_NONE ||
        (status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ERROR |
                   JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) != 0)
        return false;
    if ((*jvmti)->GetClassLoader(jvmti, k, &loader) != JVMTI_ERROR_NONE || loader) {
        if (loader)
            (*jni)->DeleteLocalRef(jni, loader);
        return false;
    }
    if (!declared_fields) {
        jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
        if (cls) {
            declared_fields = (*jni)->GetMethodID(jni, cls, "getDeclaredFields0",
                                                  "(Z)[Ljava/lang/reflect/Field;");
            (*jni)->DeleteLocalRef(jni, cls);
        }
        if (!declared_fields) {
            (*jni)->ExceptionClear(jni);
            return false;
        }
    }
    jobject fields = (*jni)->CallObjectMethod(jni, k, declared_fields, JNI_FALSE);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    if (fields)
        (*jni)->DeleteLocalRef(jni, fields);
    return true;
}

static bool cds_active(jvmtiEnv *jvmti)
{
    char *info = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.info", &info) != JVMTI_ERROR_NONE || !info)
        return false;
    bool on = strstr(info, "sharing") != NULL;
    jvmti_util_free(jvmti, info);
    return on;
}

/* Links the unprepared boot classes (once each: linked classes stay linked). */
static void link_boot_classes(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        link_boot_class(jvmti, jni, classes[i]);
        (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_util_free(jvmti, classes);
}

static uint32_t serial_of_name(jvmtiEnv *jvmti, JNIEnv *jni, const char *name)
{
    jclass k = (*jni)->FindClass(jni, name);
    if (!k) {
        (*jni)->ExceptionClear(jni);
        return 0;
    }
    uint32_t s = class_table_serial_of(jvmti, k);
    (*jni)->DeleteLocalRef(jni, k);
    return s;
}

/* Lists the loaded classes and adds those not in the dump yet (all of them when fresh):
 * pins them, tags them in denv, reads what their CLASS DUMPs need. */
static struct hprof_error add_loaded(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni, bool fresh,
                                     uint32_t *added)
{
    jint n = 0;
    jclass *classes = NULL;
    *added = 0;
    jvmtiError err = (*jvmti)->GetLoadedClasses(jvmti, &n, &classes);
    if (err != JVMTI_ERROR_NONE)
        return hprof_errorf("GetLoadedClasses failed: JVMTI error %d", (int)err);
    if (fresh)
        for (uint32_t s = 1; s < limit; s++)
            if (table[s])
                table[s]->in_dump = table[s]->writable = false;
    /* Keep only the new ones and those not linked when listed (their layouts may be readable
     * now); the others are in the dump and pinned already. */
    jint nnew = 0;
    for (jint i = 0; i < n; i++) {
        jlong tag = 0;
        const struct dump_class *c = NULL;
        if (!fresh && (*denv)->GetTag(denv, classes[i], &tag) == JVMTI_ERROR_NONE)
            c = heap_classes_of_tag((uint64_t)tag);
        if (c && c->in_dump && (c->array_type || c->has_layout))
            (*jni)->DeleteLocalRef(jni, classes[i]);
        else
            classes[nnew++] = classes[i];
    }
    /* Before anything else: a class the list names could unload from here on otherwise. */
    if (nnew > 0)
        pin_classes(denv, jni, classes, nnew);
    int rc = 0;
    for (jint i = 0; i < nnew; i++) {
        jclass k = classes[i];
        uint32_t serial = class_table_serial_of(jvmti, k);
        struct dump_class *c = serial ? heap_classes_entry(serial) : NULL;
        if (!c) {
            rc = serial ? -1 : rc; /* serial 0: the class cannot be inspected; left out */
        } else {
            jlong tag = 0;
            hprof_id id = heap_classes_id_of(serial);
            if ((*denv)->GetTag(denv, k, &tag) == JVMTI_ERROR_NONE && (hprof_id)tag != id)
                (*denv)->SetTag(denv, k, (jlong)id);
            /* Counted: classes new to the dump, and listed ones whose layout can be read now
             * (one still not linked is retried by the next pass, not counted). */
            bool was_whole = c->in_dump && (c->array_type || c->has_layout);
            if (!c->has_layout && c->array_type == 0)
                heap_classes_fields_read_layout(jvmti, jni, k, c);
            *added += !was_whole && (!c->in_dump || c->array_type || c->has_layout);
            jboolean iface = JNI_FALSE;
            (*jvmti)->IsInterface(jvmti, k, &iface);
            c->is_interface = iface == JNI_TRUE;
            if (serial == object_serial) {
                c->super_id = 0;
            } else if (c->array_type || c->is_interface) {
                c->super_id = heap_classes_id_of(object_serial); /* as HotSpot writes them */
            } else {
                jclass super = (*jni)->GetSuperclass(jni, k);
                c->super_id = 0;
                if (super) {
                    c->super_id = heap_classes_id_of(class_table_serial_of(jvmti, super));
                    (*jni)->DeleteLocalRef(jni, super);
                }
            }
            c->loader_id = loader_id(jvmti, denv, jni, k);
            reset_walk_state(c);
            c->in_dump = true;
        }
        (*jni)->DeleteLocalRef(jni, k);
    }
    jvmti_util_free(jvmti, classes);
    if (nnew > 0 || fresh) {
        mark_writable();
        if (rc == 0)
            rc = heap_classes_elements_link(object_serial);
    }
    return rc != 0 ? hprof_errorf("out of memory reading the classes") : hprof_ok();
}

struct hprof_error heap_classes_prepare(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni)
{
    measure_array_rule(jvmti, jni);
    class_serial = serial_of_name(jvmti, jni, "java/lang/Class");
    object_serial = serial_of_name(jvmti, jni, "java/lang/Object");
    object_array_serial = serial_of_name(jvmti, jni, "[Ljava/lang/Object;");
    /* First, as linking may load classes: the list below has them. */
    if (cds_active(jvmti))
        link_boot_classes(jvmti, jni);

    if (!loaders_ready)
        loaders_ready = idmap_init(&loaders, 256) == 0;
    else
        idmap_clear(&loaders);
    heap_classes_release(jni);
    uint32_t added = 0;
    return add_loaded(jvmti, denv, jni, true, &added);
}

struct hprof_error heap_classes_update(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni,
                                       uint32_t *added)
{
    return add_loaded(jvmti, denv, jni, false, added);
}

void heap_classes_add_cp(struct dump_class *c, uint16_t index, hprof_id id)
{
    if (c->ncp == c->cp_cap) {
        uint32_t cap = c->cp_cap ? 2 * c->cp_cap : 16;
        struct hprof_cp_entry *cp = realloc(c->cp, cap * sizeof *cp);
        if (!cp)
            return;
        c->cp = cp;
        c->cp_cap = cap;
    }
    struct hprof_cp_entry *e = &c->cp[c->ncp++];
    e->index = index;
    e->type = HPROF_TYPE_OBJECT;
    memset(&e->value, 0, sizeof e->value);
    e->value.obj = id;
}

void heap_classes_write_names(struct hprof_writer *w)
{
    for (uint32_t s = 1; s < limit; s++) {
        struct dump_class *c = table[s];
        if (!c || !c->in_dump)
            continue;
        emit_class(w, s);
        for (uint32_t i = 0; i < c->layout.nown; i++)
            emit_string(w, c->layout.instance[i].name_id);
        for (uint32_t i = 0; i < c->layout.nstatics; i++)
            emit_string(w, c->layout.statics[i].name_id);
    }
}

void heap_classes_describe(const struct dump_class *c, struct hprof_class_dump *out)
{
    memset(out, 0, sizeof *out);
    out->class_id = heap_classes_id_of(c->serial);
    out->trace_serial = HPROF_TRACE_SERIAL_NONE;
    out->super_id = c->super_id;
    /* The loader the walk reported (instance classes), else the one read before the walk
     * (array classes, whose class objects report none) if the walk wrote it. */
    out->loader_id = c->walk_loader_id              ? c->walk_loader_id
                     : loader_written(c->loader_id) ? c->loader_id
                                                    : 0;
    out->signers_id = c->signers_id;
    out->domain_id = c->domain_id;
    out->instance_size = c->layout.instance_bytes;
    out->heap_instance_size = c->instance_size;
    out->class_object_size = c->mirror_size;
    out->name = c->name;
    out->ncp = c->ncp;
    out->cp = c->cp;
    out->nstatics = c->layout.nstatics;
    out->statics = c->statics;
    out->nfields = c->layout.nown;
    out->fields = c->layout.instance;
}

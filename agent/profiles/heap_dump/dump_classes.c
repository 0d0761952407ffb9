#include "dump_classes.h"

#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "emit.h"
#include "idmap.h"
#include "jvmti_util.h"
#include "log.h"
#include "string_table.h"
#include "tags.h"

struct dump_class **heap_classes_table_;
uint32_t heap_classes_limit_;

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

/* Fields the VM hides from GetClassFields but FollowReferences counts (HotSpot's filtered
 * fields of reflection internals); each is its class's only field. */
static const struct {
    const char *class_sig, *name;
} hidden_fields[] = {
    {"Ljdk/internal/reflect/ConstantPool;", "constantPoolOop"},
    {"Ljdk/internal/reflect/UnsafeStaticFieldAccessorImpl;", "base"},
};

struct dump_class *heap_classes_get(uint32_t serial)
{
    return serial < heap_classes_limit_ ? heap_classes_table_[serial] : NULL;
}

uint32_t heap_classes_limit(void)
{
    return heap_classes_limit_;
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
    const struct class_info *ci = classes_get(serial);
    return ci && ci->name ? ci->name : "?";
}

/* Grows the table to hold serials below limit; entries are kept across dumps. */
static int table_reserve(uint32_t limit)
{
    if (limit <= heap_classes_limit_)
        return 0;
    struct dump_class **t = realloc(heap_classes_table_, limit * sizeof *t);
    if (!t)
        return -1;
    memset(t + heap_classes_limit_, 0, (limit - heap_classes_limit_) * sizeof *t);
    heap_classes_table_ = t;
    heap_classes_limit_ = limit;
    return 0;
}

static struct dump_class *entry(uint32_t serial)
{
    if (serial == 0 || table_reserve(serial + 1) != 0)
        return NULL;
    struct dump_class *c = heap_classes_table_[serial];
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        c->serial = serial;
        const struct class_info *ci = classes_get(serial);
        c->array_type = ci ? ci->array_type : 0;
        c->name = ci && ci->name ? ci->name : "?";
        heap_classes_table_[serial] = c;
    }
    return c;
}

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
        hprof_id id = strings_intern(hidden_fields[h].name);
        d[0] = (struct layout_field){id, strings_text(id), HPROF_TYPE_OBJECT, false};
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
            hprof_id id = strings_intern(name);
            d[i] = (struct layout_field){id, strings_text(id), layout_type_of_signature(sig),
                                         (mods & 0x0008) != 0 /* ACC_STATIC */};
            ok = id != 0;
        }
        jvmti_free(jvmti, name);
        jvmti_free(jvmti, sig);
    }
    jvmti_free(jvmti, fields);
    if (!ok) {
        free(d);
        return false;
    }
    c->declared = d;
    c->ndeclared = (uint32_t)n;
    const struct class_info *ci = classes_get(c->serial);
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
        uint32_t s = classes_serial_of(jvmti, ifs[i]);
        struct dump_class *ic = entry(s);
        if (ok && ic && set_add(set, s)) {
            ok = read_declared(jvmti, ifs[i], ic) &&
                 add_interfaces(jvmti, jni, ifs[i], set, nfields, depth + 1);
            *nfields += ic->ndeclared;
        } else if (!ic) {
            ok = false;
        }
        (*jni)->DeleteLocalRef(jni, ifs[i]);
    }
    jvmti_free(jvmti, ifs);
    return ok;
}

#define MAX_CHAIN 256

/* Reads the field layout of instance class k (and the declared fields of its supers). */
static void read_layout(jvmtiEnv *jvmti, JNIEnv *jni, jclass k, struct dump_class *c)
{
    struct layout_level levels[MAX_CHAIN];
    struct serial_set ifaces = {0};
    uint32_t nif = 0;
    size_t nlevels = 0;
    bool ok = true;
    jclass cur = (*jni)->NewLocalRef(jni, k);
    while (ok && cur && nlevels < MAX_CHAIN) {
        struct dump_class *lc = entry(classes_serial_of(jvmti, cur));
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
    if (!ok || nlevels == MAX_CHAIN)
        return;
    if (layout_build(levels, nlevels, nif, &c->layout) != 0)
        return;
    c->statics = calloc(c->layout.nstatics ? c->layout.nstatics : 1, sizeof *c->statics);
    if (!c->statics) {
        layout_free(&c->layout);
        return;
    }
    for (uint32_t i = 0; i < c->layout.nstatics; i++)
        c->statics[i].field = c->layout.statics[i];
    c->has_layout = true;
}

static hprof_id class_id_of(uint32_t serial);

struct name_key {
    uint64_t hash;
    hprof_id loader;
    uint32_t serial;
};

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static int cmp_key(uint64_t h1, hprof_id l1, uint64_t h2, hprof_id l2)
{
    if (h1 != h2)
        return h1 < h2 ? -1 : 1;
    return l1 < l2 ? -1 : l1 > l2;
}

static int cmp_name_key(const void *a, const void *b)
{
    const struct name_key *x = a, *y = b;
    return cmp_key(x->hash, x->loader, y->hash, y->loader);
}

/* Every object array class in the dump gets the class id of its element class: the class
 * whose name is the array's without its last "[]" and whose loader is the array's (an array
 * class is defined by its element's loader); java.lang.Object when none matches. By name and
 * loader, sorted by (hash, loader): one pass, no JNI, and no scan of the many classes of one
 * name that class loaders defining the same class again make. */
static int link_elements(void)
{
    uint32_t n = 0;
    for (uint32_t s = 1; s < heap_classes_limit_; s++)
        n += heap_classes_table_[s] && heap_classes_table_[s]->in_dump;
    struct name_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return -1;
    uint32_t k = 0;
    for (uint32_t s = 1; s < heap_classes_limit_; s++) {
        const struct dump_class *c = heap_classes_table_[s];
        if (c && c->in_dump)
            keys[k++] = (struct name_key){name_hash(c->name, strlen(c->name)), c->loader_id, s};
    }
    qsort(keys, n, sizeof *keys, cmp_name_key);
    for (uint32_t s = 1; s < heap_classes_limit_; s++) {
        struct dump_class *c = heap_classes_table_[s];
        if (!c || !c->in_dump || c->array_type != HPROF_TYPE_OBJECT)
            continue;
        c->elem_id = class_id_of(object_serial);
        size_t len = strlen(c->name);
        if (len < 2 || strcmp(c->name + len - 2, "[]") != 0)
            continue;
        len -= 2;
        uint64_t h = name_hash(c->name, len);
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_key(keys[mid].hash, keys[mid].loader, h, c->loader_id) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n && keys[lo].hash == h && keys[lo].loader == c->loader_id; lo++) {
            const struct dump_class *e = heap_classes_table_[keys[lo].serial];
            if (strlen(e->name) == len && memcmp(e->name, c->name, len) == 0) {
                c->elem_id = class_id_of(keys[lo].serial);
                break;
            }
        }
    }
    free(keys);
    return 0;
}

static hprof_id class_id_of(uint32_t serial)
{
    return serial ? tag_make(TAG_SITE_CLASS, serial) : 0;
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
    for (uint32_t s = 1; s < heap_classes_limit_; s++) {
        struct dump_class *c = heap_classes_table_[s];
        if (!c || !c->in_dump || c->array_type)
            continue;
        bool ok = c->has_layout;
        const struct dump_class *k = c;
        for (int depth = 0; ok && k->super_id != 0 && depth < MAX_CHAIN; depth++) {
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
    if (n == sizeof sizes / sizeof *sizes && layout_solve_array_rule(sizes, n, &r))
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
    jvmti_free(jvmti, info);
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
    jvmti_free(jvmti, classes);
}

static uint32_t serial_of_name(jvmtiEnv *jvmti, JNIEnv *jni, const char *name)
{
    jclass k = (*jni)->FindClass(jni, name);
    if (!k) {
        (*jni)->ExceptionClear(jni);
        return 0;
    }
    uint32_t s = classes_serial_of(jvmti, k);
    (*jni)->DeleteLocalRef(jni, k);
    return s;
}

/* Lists the loaded classes and adds those not in the dump yet (all of them when fresh):
 * pins them, tags them in denv, reads what their CLASS DUMPs need. */
static int add_loaded(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni, bool fresh, uint32_t *added)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes), "GetLoadedClasses"))
        return -1;
    if (fresh)
        for (uint32_t s = 1; s < heap_classes_limit_; s++)
            if (heap_classes_table_[s])
                heap_classes_table_[s]->in_dump = heap_classes_table_[s]->writable = false;
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
    *added = 0;
    /* Before anything else: a class the list names could unload from here on otherwise. */
    if (nnew > 0)
        pin_classes(denv, jni, classes, nnew);
    int rc = 0;
    for (jint i = 0; i < nnew; i++) {
        jclass k = classes[i];
        uint32_t serial = classes_serial_of(jvmti, k);
        struct dump_class *c = serial ? entry(serial) : NULL;
        if (!c) {
            rc = serial ? -1 : rc; /* serial 0: the class cannot be inspected; left out */
        } else {
            jlong tag = 0;
            hprof_id id = class_id_of(serial);
            if ((*denv)->GetTag(denv, k, &tag) == JVMTI_ERROR_NONE && (hprof_id)tag != id)
                (*denv)->SetTag(denv, k, (jlong)id);
            /* Counted: classes new to the dump, and listed ones whose layout can be read now
             * (one still not linked is retried by the next pass, not counted). */
            bool was_whole = c->in_dump && (c->array_type || c->has_layout);
            if (!c->has_layout && c->array_type == 0)
                read_layout(jvmti, jni, k, c);
            *added += !was_whole && (!c->in_dump || c->array_type || c->has_layout);
            jboolean iface = JNI_FALSE;
            (*jvmti)->IsInterface(jvmti, k, &iface);
            c->is_interface = iface == JNI_TRUE;
            if (serial == object_serial) {
                c->super_id = 0;
            } else if (c->array_type || c->is_interface) {
                c->super_id = class_id_of(object_serial); /* as HotSpot writes them */
            } else {
                jclass super = (*jni)->GetSuperclass(jni, k);
                c->super_id = 0;
                if (super) {
                    c->super_id = class_id_of(classes_serial_of(jvmti, super));
                    (*jni)->DeleteLocalRef(jni, super);
                }
            }
            c->loader_id = loader_id(jvmti, denv, jni, k);
            reset_walk_state(c);
            c->in_dump = true;
        }
        (*jni)->DeleteLocalRef(jni, k);
    }
    jvmti_free(jvmti, classes);
    if (nnew > 0 || fresh) {
        mark_writable();
        if (rc == 0)
            rc = link_elements();
    }
    if (rc != 0)
        log_error("out of memory reading classes for a heap dump");
    return rc;
}

int heap_classes_prepare(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni)
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

int heap_classes_update(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni)
{
    uint32_t added = 0;
    int rc = add_loaded(jvmti, denv, jni, false, &added);
    return rc < 0 ? rc : (int)(added > INT32_MAX ? INT32_MAX : added);
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
    for (uint32_t s = 1; s < heap_classes_limit_; s++) {
        struct dump_class *c = heap_classes_table_[s];
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
    out->class_id = class_id_of(c->serial);
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

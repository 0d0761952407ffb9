#include "heap_walk.h"

#include <stdlib.h>
#include <string.h>

#include "heap_mirrors.h"
#include "idmap.h"
#include "log.h"
#include "tags.h"

enum visit_kind {
    VISIT_NONE,
    VISIT_INSTANCE,
    VISIT_OBJ_ARRAY,
    VISIT_PRIM_ARRAY, /* written by the array callback; pending until it comes */
    VISIT_CLASS,      /* a class object of the dump: its statics and references */
    VISIT_HOLDER,     /* heap_mirrors' holder: its elements are noted, it is not written */
    VISIT_PIN,        /* heap_classes' pin of the listed classes: not written */
    VISIT_SKIP,       /* nothing to write (a class object of no dumped class, unknown class) */
};

struct walk {
    enum walk_ids ids;
    const struct walk_out *out;
    struct heap_walk_result *res;
    uint64_t class_class_tag;        /* tag of java.lang.Class's class object */
    struct dump_class *object_array; /* java.lang.Object[], for arrays of unknown class */
    uint64_t holder_tag;             /* heap_mirrors' holder */
    uint64_t pin_tag;                /* heap_classes' pin */

    /* The object being visited. */
    enum visit_kind kind;
    uint64_t key; /* address (WALK_IDS_ADDRESSES) or tag: what identifies it in callbacks */
    hprof_id id;
    uint64_t own_tag;
    struct dump_class *cls;
    uint64_t size;
    uint32_t len;
    bool len_known;
    union hprof_value *values;
    size_t values_cap;
    hprof_id *elems;
    size_t elems_cap;

    /* Object arrays reported but not visited yet: key -> (length, size / 8). FollowReferences
     * gives an array's length only where the array is referenced, not where it is visited. */
    struct idmap pending_arrays;
    /* Class objects that are no class of the dump (int.class...): id -> size / 8. */
    struct idmap loose_classes;

    uint64_t since_poll;
    bool stop;
};

/* ---- ids -------------------------------------------------------------------------------- */

static inline bool addresses(const struct walk *W)
{
    return W->ids == WALK_IDS_ADDRESSES;
}

/* Key and id of the object a CallbackWrapper-held tag pointer is about (see heap_walk.h). With
 * size < 0 the size check is skipped (primitive field callbacks pass no size). */
static inline bool object_of(struct walk *W, jlong *tp, jlong class_tag, jlong size, uint64_t *key,
                             hprof_id *id)
{
    if (addresses(W)) {
        if (!heap_walk_address_of(tp, class_tag, size, key)) {
            W->res->layout_broken = true;
            return false;
        }
        *id = *tp ? (hprof_id)*tp : tag_address_id(*key);
    } else {
        if (*tp == 0)
            *tp = (jlong)tag_make(0, tags_next_serial());
        *key = *id = (hprof_id)*tp;
    }
    return true;
}

/* The referrer of a reference callback (never the same wrapper as the referree here). */
static inline bool referrer_of(struct walk *W, jlong *rtp, jlong class_tag, uint64_t *key,
                               hprof_id *id)
{
    if (addresses(W)) {
        if (rtp[1] != class_tag || rtp[2] != (jlong)(intptr_t)rtp) {
            W->res->layout_broken = true;
            return false;
        }
        *key = (uint64_t)rtp[-1];
        *id = *rtp ? (hprof_id)*rtp : tag_address_id(*key);
    } else {
        if (*rtp == 0)
            *rtp = (jlong)tag_make(0, tags_next_serial());
        *key = *id = (hprof_id)*rtp;
    }
    return true;
}

/* ---- writing visited objects -------------------------------------------------------------- */

static void poll(struct walk *W)
{
    if (++W->since_poll >= 4096) {
        W->since_poll = 0;
        if (W->out->stop && W->out->stop(W->out->ctx))
            W->stop = true;
    }
}

static bool reserve_values(struct walk *W, size_t n)
{
    if (n <= W->values_cap)
        return true;
    size_t cap = n < 64 ? 64 : n;
    union hprof_value *v = realloc(W->values, cap * sizeof *v);
    if (!v)
        return false;
    W->values = v;
    W->values_cap = cap;
    return true;
}

static bool reserve_elems(struct walk *W, size_t n)
{
    if (n <= W->elems_cap)
        return true;
    size_t cap = W->elems_cap ? W->elems_cap : 1024;
    while (cap < n)
        cap *= 2;
    hprof_id *e = realloc(W->elems, cap * sizeof *e);
    if (!e)
        return false;
    W->elems = e;
    W->elems_cap = cap;
    return true;
}

/* The allocation trace of the object with this key (an address, or a tag). */
static uint32_t trace_of(const struct walk *W, uint64_t key)
{
    return addresses(W) && W->out->trace_of ? W->out->trace_of(W->out->ctx, key)
                                            : HPROF_TRACE_SERIAL_NONE;
}

static void finish_visit(struct walk *W)
{
    struct heap_walk_result *R = W->res;
    switch (W->kind) {
    case VISIT_INSTANCE:
        W->out->instance(W->out->ctx, W->cls, W->id, trace_of(W, W->key), W->size, W->values);
        R->instances++;
        if (W->own_tag)
            heap_classes_note_written(W->own_tag);
        break;
    case VISIT_OBJ_ARRAY:
        if (!W->len_known) /* never happens: every visited array was referenced first */
            W->size = heap_classes_object_array_size(W->len);
        W->out->obj_array(W->out->ctx, W->cls, W->id, trace_of(W, W->key), W->size, W->len,
                          W->elems);
        R->obj_arrays++;
        break;
    case VISIT_PRIM_ARRAY: /* no contents reported: an empty array */
        W->out->prim_array(W->out->ctx, W->id, trace_of(W, W->key),
                           (enum hprof_basic_type)W->cls->array_type, W->size, 0, W->elems);
        R->prim_arrays++;
        break;
    default:
        W->kind = VISIT_NONE;
        return;
    }
    R->objects++;
    R->bytes += W->size;
    W->kind = VISIT_NONE;
    poll(W);
}

/* A new visit starts: write the previous object, set up this one. */
static void begin_visit(struct walk *W, uint64_t key, hprof_id id, jlong class_tag, jlong own_tag)
{
    finish_visit(W);
    W->key = key;
    W->id = id;
    W->own_tag = (uint64_t)own_tag;
    W->kind = VISIT_SKIP;
    if ((uint64_t)own_tag == W->holder_tag && own_tag != 0) {
        W->kind = VISIT_HOLDER;
        return;
    }
    if ((uint64_t)own_tag == W->pin_tag && own_tag != 0) {
        W->kind = VISIT_PIN;
        return;
    }
    struct dump_class *c = heap_classes_of_tag((uint64_t)class_tag);
    if ((uint64_t)class_tag == W->class_class_tag && class_tag != 0) {
        struct dump_class *mc = heap_classes_of_tag((uint64_t)own_tag);
        if (mc && mc->in_dump) {
            W->kind = VISIT_CLASS;
            W->cls = mc;
            mc->visited = true;
        }
        return;
    }
    if (!c || !c->in_dump || (!c->array_type && !c->writable)) {
        W->res->unknown_class++;
        /* An object array of an array class made after the dump read the classes (the only
         * kind of class without a ClassPrepare event): write it as an Object[]. An instance
         * of a class loaded (or linked) since then is left out: its layout is not known. */
        if ((c && !c->array_type) || !W->object_array ||
            !idmap_get(&W->pending_arrays, key, NULL, NULL))
            return;
        c = W->object_array;
    }
    W->cls = c;
    if (c->array_type == HPROF_TYPE_OBJECT) {
        uint32_t len = 0, words = 0;
        W->len_known = idmap_take(&W->pending_arrays, key, &len, &words);
        W->len = len;
        W->size = (uint64_t)words * 8;
        if (!reserve_elems(W, len)) {
            W->res->failed = W->stop = true;
            W->kind = VISIT_SKIP;
            return;
        }
        memset(W->elems, 0, (size_t)len * sizeof *W->elems);
        W->kind = VISIT_OBJ_ARRAY;
    } else if (c->array_type) {
        W->size = 0;
        W->kind = VISIT_PRIM_ARRAY;
    } else {
        if (!reserve_values(W, c->layout.ninstance)) {
            W->res->failed = W->stop = true;
            W->kind = VISIT_SKIP;
            return;
        }
        memset(W->values, 0, c->layout.ninstance * sizeof *W->values);
        W->size = c->instance_size;
        W->kind = VISIT_INSTANCE;
    }
}

/* ---- references ------------------------------------------------------------------------- */

/* Whether the object a reference callback reports (class_tag, own_tag, length as given) gets
 * a record of its own in this dump, decided as begin_visit will decide it when it is visited:
 * a reference to an object that will not be written is written as null (and counted), so no
 * reference in the dump names an object that is not in it. */
static bool will_write(const struct walk *W, jlong class_tag, jlong own_tag, jint length)
{
    if (own_tag != 0 && ((uint64_t)own_tag == W->holder_tag || (uint64_t)own_tag == W->pin_tag))
        return false;
    if ((uint64_t)class_tag == W->class_class_tag && class_tag != 0)
        return true; /* a CLASS DUMP, or an INSTANCE DUMP of java.lang.Class (loose classes) */
    const struct dump_class *c = heap_classes_of_tag((uint64_t)class_tag);
    if (length >= 0) { /* an array; of an unknown class, written as an Object[] */
        if (c && c->in_dump)
            return true;
        return (!c || c->array_type == HPROF_TYPE_OBJECT) && W->object_array != NULL;
    }
    return c && c->in_dump && !c->array_type && c->writable;
}

/* Bookkeeping of a referenced object: sizes the visit will not report. */
static void note_referree(struct walk *W, jlong class_tag, jlong size, jlong own_tag, jint length,
                          uint64_t key, hprof_id id)
{
    struct dump_class *c = heap_classes_of_tag((uint64_t)class_tag);
    if ((uint64_t)class_tag == W->class_class_tag && class_tag != 0) {
        struct dump_class *mc = heap_classes_of_tag((uint64_t)own_tag);
        if (mc && mc->in_dump)
            mc->mirror_size = (uint64_t)size;
        else
            idmap_put(&W->loose_classes, id, (uint32_t)((uint64_t)size / 8), 0);
    } else if (length >= 0) {
        if (!c || c->array_type == HPROF_TYPE_OBJECT)
            idmap_put(&W->pending_arrays, key, (uint32_t)length, (uint32_t)((uint64_t)size / 8));
    } else if (c && c->instance_size == 0) {
        c->instance_size = (uint64_t)size;
    }
}

static void write_root(struct walk *W, jvmtiHeapReferenceKind kind,
                       const jvmtiHeapReferenceInfo *info, hprof_id id, jlong own_tag)
{
    struct hprof_root r;
    memset(&r, 0, sizeof r);
    r.object = id;
    r.kind = HPROF_ROOT_UNKNOWN;
    uint32_t serial = 0, trace = 0;
    const struct walk_out *o = W->out;
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_JNI_GLOBAL:
        r.kind = HPROF_ROOT_JNI_GLOBAL;
        r.trace_serial = HPROF_TRACE_SERIAL_NONE;
        break;
    case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: {
        r.kind = HPROF_ROOT_STICKY_CLASS;
        struct dump_class *c = heap_classes_of_tag((uint64_t)own_tag);
        r.class_name = c ? heap_classes_name(c->serial) : "java.lang.Class";
        break;
    }
    case JVMTI_HEAP_REFERENCE_MONITOR:
        r.kind = HPROF_ROOT_MONITOR_USED;
        break;
    case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
        if (o->thread_of_tag(o->ctx, (uint64_t)info->stack_local.thread_tag, &serial, &trace)) {
            r.kind = HPROF_ROOT_JAVA_FRAME;
            r.thread_serial = serial;
            r.frame_depth = info->stack_local.depth;
        }
        break;
    case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
        if (o->thread_of_tag(o->ctx, (uint64_t)info->jni_local.thread_tag, &serial, &trace)) {
            r.kind = HPROF_ROOT_JNI_LOCAL;
            r.thread_serial = serial;
            r.frame_depth = info->jni_local.depth;
        }
        break;
    case JVMTI_HEAP_REFERENCE_THREAD:
        if (o->thread_of_tag(o->ctx, (uint64_t)own_tag, &serial, &trace)) {
            r.kind = HPROF_ROOT_THREAD_OBJECT;
            r.thread_serial = serial;
            r.trace_serial = trace;
        }
        break;
    default:
        break;
    }
    o->root(o->ctx, &r);
    W->res->roots++;
}

static void class_reference(struct walk *W, jvmtiHeapReferenceKind kind,
                            const jvmtiHeapReferenceInfo *info, hprof_id id)
{
    struct dump_class *c = W->cls;
    if (!c->array_type && !c->has_layout) /* not linked when listed: no statics written */
        return;
    switch (kind) {
    case JVMTI_HEAP_REFERENCE_CLASS_LOADER:
        c->walk_loader_id = id;
        break;
    case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
        c->domain_id = id;
        break;
    case JVMTI_HEAP_REFERENCE_SIGNERS:
        c->signers_id = id;
        break;
    case JVMTI_HEAP_REFERENCE_CONSTANT_POOL:
        if (id && info->constant_pool.index >= 0 && info->constant_pool.index <= 0xFFFF)
            heap_classes_add_cp(c, (uint16_t)info->constant_pool.index, id);
        break;
    case JVMTI_HEAP_REFERENCE_STATIC_FIELD: {
        jint i = info->field.index;
        int32_t slot = i >= 0 && (uint32_t)i < c->layout.nindex ? c->layout.static_of_index[i] : -1;
        if (slot >= 0 && c->statics[slot].field.type == HPROF_TYPE_OBJECT)
            c->statics[slot].value.obj = id;
        else
            W->res->layout_mismatches++;
        break;
    }
    default: /* SUPERCLASS, INTERFACE: in the CLASS DUMP already */
        break;
    }
}

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
                                 jlong class_tag, jlong referrer_class_tag, jlong size,
                                 jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
                                 void *user_data)
{
    struct walk *W = user_data;
    if (W->stop)
        return JVMTI_VISIT_ABORT;
    uint64_t key;
    hprof_id id;
    if (!object_of(W, tag_ptr, class_tag, size, &key, &id)) {
        W->stop = true;
        return JVMTI_VISIT_ABORT;
    }
    note_referree(W, class_tag, size, *tag_ptr, length, key, id);
    bool kept = will_write(W, class_tag, *tag_ptr, length);
    if (kept && addresses(W) && W->out->trace_soon)
        W->out->trace_soon(W->out->ctx, key);
    if (!referrer_tag_ptr) {
        bool ours = *tag_ptr != 0 &&
                    ((uint64_t)*tag_ptr == W->holder_tag || (uint64_t)*tag_ptr == W->pin_tag);
        if (kept)
            write_root(W, kind, info, id, *tag_ptr);
        else if (!ours)
            W->res->roots_left_out++;
        return JVMTI_VISIT_OBJECTS;
    }
    uint64_t rkey;
    hprof_id rid;
    if (referrer_tag_ptr == tag_ptr) {
        rkey = key;
        rid = id;
    } else if (!referrer_of(W, referrer_tag_ptr, referrer_class_tag, &rkey, &rid)) {
        W->stop = true;
        return JVMTI_VISIT_ABORT;
    }
    if (rkey != W->key || W->kind == VISIT_NONE)
        begin_visit(W, rkey, rid, referrer_class_tag, *referrer_tag_ptr);
    /* From here on id is what the referrer's record holds. */
    if (!kept)
        id = 0;

    switch (W->kind) {
    case VISIT_INSTANCE:
        if (kind == JVMTI_HEAP_REFERENCE_FIELD) {
            jint i = info->field.index;
            const struct class_layout *l = &W->cls->layout;
            int32_t slot = i >= 0 && (uint32_t)i < l->nindex ? l->slot_of_index[i] : -1;
            if (slot >= 0 && l->instance[slot].type == HPROF_TYPE_OBJECT) {
                W->values[slot].obj = id;
                W->res->refs_nulled += !kept;
            } else {
                W->res->layout_mismatches++;
            }
        }
        break;
    case VISIT_OBJ_ARRAY:
        if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT && info->array.index >= 0) {
            uint32_t i = (uint32_t)info->array.index;
            if (i >= W->len) { /* length unknown: grow to what is reported */
                if (!reserve_elems(W, (size_t)i + 1)) {
                    W->res->failed = W->stop = true;
                    return JVMTI_VISIT_ABORT;
                }
                memset(W->elems + W->len, 0, (size_t)(i + 1 - W->len) * sizeof *W->elems);
                W->len = i + 1;
            }
            W->elems[i] = id;
            W->res->refs_nulled += !kept;
        }
        break;
    case VISIT_CLASS:
        class_reference(W, kind, info, id);
        W->res->refs_nulled += !kept;
        break;
    case VISIT_HOLDER:
        if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT && info->array.index >= 0)
            heap_mirrors_element((uint32_t)info->array.index, id);
        break;
    default:
        break;
    }
    return JVMTI_VISIT_OBJECTS;
}

/* ---- primitive values --------------------------------------------------------------------- */

static enum hprof_basic_type basic_type(jvmtiPrimitiveType t)
{
    switch (t) {
    case JVMTI_PRIMITIVE_TYPE_BOOLEAN:
        return HPROF_TYPE_BOOLEAN;
    case JVMTI_PRIMITIVE_TYPE_BYTE:
        return HPROF_TYPE_BYTE;
    case JVMTI_PRIMITIVE_TYPE_CHAR:
        return HPROF_TYPE_CHAR;
    case JVMTI_PRIMITIVE_TYPE_SHORT:
        return HPROF_TYPE_SHORT;
    case JVMTI_PRIMITIVE_TYPE_INT:
        return HPROF_TYPE_INT;
    case JVMTI_PRIMITIVE_TYPE_LONG:
        return HPROF_TYPE_LONG;
    case JVMTI_PRIMITIVE_TYPE_FLOAT:
        return HPROF_TYPE_FLOAT;
    case JVMTI_PRIMITIVE_TYPE_DOUBLE:
        return HPROF_TYPE_DOUBLE;
    }
    return HPROF_TYPE_OBJECT;
}

/* A jvalue holds the value in the member of its type, at offset 0 like union hprof_value's
 * members of the same sizes: the bytes carry over as they are. */
_Static_assert(sizeof(jvalue) == sizeof(union hprof_value), "jvalue and hprof_value differ");

static inline union hprof_value value_of(jvalue v)
{
    union hprof_value r;
    memcpy(&r, &v, sizeof r);
    return r;
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind,
                                       const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                       jlong *tag_ptr, jvalue value, jvmtiPrimitiveType value_type,
                                       void *user_data)
{
    struct walk *W = user_data;
    if (W->stop)
        return JVMTI_VISIT_ABORT;
    uint64_t key;
    hprof_id id;
    if (!object_of(W, tag_ptr, class_tag, -1, &key, &id)) {
        W->stop = true;
        return JVMTI_VISIT_ABORT;
    }
    if (key != W->key || W->kind == VISIT_NONE)
        begin_visit(W, key, id, class_tag, *tag_ptr);
    enum hprof_basic_type t = basic_type(value_type);
    jint i = info->field.index;
    if (kind == JVMTI_HEAP_REFERENCE_FIELD && W->kind == VISIT_INSTANCE) {
        const struct class_layout *l = &W->cls->layout;
        int32_t slot = i >= 0 && (uint32_t)i < l->nindex ? l->slot_of_index[i] : -1;
        if (slot >= 0 && l->instance[slot].type == t)
            W->values[slot] = value_of(value);
        else
            W->res->layout_mismatches++;
    } else if (kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD && W->kind == VISIT_CLASS &&
               (W->cls->array_type || W->cls->has_layout)) {
        struct dump_class *c = W->cls;
        int32_t slot = i >= 0 && (uint32_t)i < c->layout.nindex ? c->layout.static_of_index[i] : -1;
        if (slot >= 0 && c->statics[slot].field.type == t)
            c->statics[slot].value = value_of(value);
        else
            W->res->layout_mismatches++;
    }
    return 0;
}

static jint JNICALL on_array_values(jlong class_tag, jlong size, jlong *tag_ptr, jint count,
                                    jvmtiPrimitiveType type, const void *elements, void *user_data)
{
    struct walk *W = user_data;
    if (W->stop)
        return JVMTI_VISIT_ABORT;
    uint64_t key;
    hprof_id id;
    if (!object_of(W, tag_ptr, class_tag, size, &key, &id)) {
        W->stop = true;
        return JVMTI_VISIT_ABORT;
    }
    if (key != W->key || W->kind == VISIT_NONE)
        begin_visit(W, key, id, class_tag, *tag_ptr);
    W->out->prim_array(W->out->ctx, id, trace_of(W, key), basic_type(type), (uint64_t)size,
                       count > 0 ? (uint32_t)count : 0, elements);
    W->res->prim_arrays++;
    W->res->objects++;
    W->res->bytes += (uint64_t)size;
    W->kind = VISIT_NONE; /* written */
    poll(W);
    return W->stop ? JVMTI_VISIT_ABORT : 0;
}

/* ---- the walk --------------------------------------------------------------------------- */

static int walk_init(struct walk *W, enum walk_ids ids, const struct walk_out *out,
                     struct heap_walk_result *res)
{
    memset(W, 0, sizeof *W);
    W->ids = ids;
    W->out = out;
    W->res = res;
    uint32_t cs = heap_classes_class_serial();
    W->class_class_tag = cs ? tag_make(TAG_SITE_CLASS, cs) : 0;
    W->object_array = heap_classes_get(heap_classes_object_array_serial());
    W->holder_tag = heap_mirrors_holder_tag();
    W->pin_tag = heap_classes_pin_tag();
    if (idmap_init(&W->pending_arrays, 1 << 16) != 0 || idmap_init(&W->loose_classes, 64) != 0)
        return -1;
    return 0;
}

static void walk_free(struct walk *W)
{
    idmap_free(&W->pending_arrays);
    idmap_free(&W->loose_classes);
    free(W->values);
    free(W->elems);
}

/* Class objects the walk met that belong to no class of the dump (the primitive types'):
 * written as instances of java.lang.Class, with the fields heap_mirrors read. */
static void write_loose_classes(struct walk *W)
{
    struct dump_class *cc = heap_classes_get(heap_classes_class_serial());
    if (!cc || !cc->in_dump || !reserve_values(W, cc->layout.ninstance))
        return;
    for (size_t i = 0; i <= W->loose_classes.mask; i++) {
        const struct idmap_entry *e = &W->loose_classes.slots[i];
        if (!e->key)
            continue;
        hprof_id id = e->key;
        uint64_t size = (uint64_t)e->a * 8;
        const union hprof_value *v = heap_mirrors_values(id);
        if (v)
            memcpy(W->values, v, cc->layout.ninstance * sizeof *W->values);
        else
            memset(W->values, 0, cc->layout.ninstance * sizeof *W->values);
        W->out->instance(W->out->ctx, cc, id, HPROF_TRACE_SERIAL_NONE, size, W->values);
        W->res->instances++;
        W->res->objects++;
        W->res->bytes += size;
    }
}

void heap_walk_run(jvmtiEnv *denv, enum walk_ids ids, const struct walk_out *out,
                   struct heap_walk_result *res)
{
    memset(res, 0, sizeof *res);
    struct walk W;
    if (walk_init(&W, ids, out, res) != 0) {
        walk_free(&W);
        res->failed = true;
        log_error("out of memory for the heap walk");
        return;
    }
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = on_reference;
    cb.primitive_field_callback = on_primitive_field;
    cb.array_primitive_value_callback = on_array_values;
    jvmtiError err = (*denv)->FollowReferences(denv, 0, NULL, NULL, &cb, &W);
    if (err != JVMTI_ERROR_NONE) {
        res->failed = true;
        log_error("FollowReferences failed: JVMTI error %d", (int)err);
    }
    if (!res->layout_broken) {
        finish_visit(&W);
        write_loose_classes(&W);
    }
    for (uint32_t s = 1; s < heap_classes_limit(); s++) {
        const struct dump_class *c = heap_classes_get(s);
        if (c && c->in_dump)
            res->class_objects_bytes += c->mirror_size;
    }
    res->aborted = W.stop && !res->layout_broken && !res->failed;
    walk_free(&W);
}

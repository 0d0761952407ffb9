#include "frame_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "jvmti_util.h"
#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"
#include "string_table.h"

_Static_assert(sizeof(struct method_info) == 32, "a method entry is 32 bytes (doc/memory.md)");
_Static_assert(sizeof(struct frame_info) == 8, "a frame entry is 8 bytes (doc/memory.md)");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct keymap *methods_by_id; /* jmethodID -> index + 1 */
/* Two keys lead to a frame: (jmethodID, location), what a stack walk gives, and (jmethodID,
 * line), what the frame is. Locations on one line are one frame, so stacks that print alike
 * are one trace and allocations on one line one site. */
static struct keymap *frames_by_key;  /* (jmethodID, location) -> serial */
static struct keymap *frames_by_line; /* (jmethodID, line) -> serial */
static struct segarray methods, frames;
static bool with_lines = true;
static _Atomic(size_t) line_bytes; /* the methods' line tables */

static void methods_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&methods);
    u->bytes = keymap_bytes(methods_by_id) + segarray_bytes(&methods) + line_bytes;
    pthread_mutex_unlock(&lock);
}

static void frames_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&frames);
    u->bytes = keymap_bytes(frames_by_key) + keymap_bytes(frames_by_line) + segarray_bytes(&frames);
    pthread_mutex_unlock(&lock);
}

/* The line tables are charged when a method's entry keeps one, uncharged when it is freed. */
static void lines_charge(const struct method_info *m, bool charge)
{
    if (!m->lines)
        return;
    size_t b = mem_block(sizeof *m->lines * (size_t)m->nlines);
    if (charge) {
        atomic_fetch_add(&line_bytes, b);
        mem_account_charge(b);
    } else {
        atomic_fetch_sub(&line_bytes, b);
        mem_account_uncharge(b);
    }
}

int frame_table_init(bool lineno)
{
    with_lines = lineno;
    segarray_init(&methods, sizeof(struct method_info));
    segarray_init(&frames, sizeof(struct frame_info));
    methods_by_id = keymap_new(8192);
    frames_by_key = keymap_new(16384);
    frames_by_line = keymap_new(16384);
    mem_account_register("methods", methods_measure);
    mem_account_register("frames", frames_measure);
    return methods_by_id && frames_by_key && frames_by_line ? 0 : -1;
}

static int compare_lines(const void *a, const void *b)
{
    jlocation x = ((const jvmtiLineNumberEntry *)a)->start_location;
    jlocation y = ((const jvmtiLineNumberEntry *)b)->start_location;
    return x < y ? -1 : x > y;
}

/* Reads a method's details outside any lock: several JVMTI calls. */
static bool read_method(jvmtiEnv *jvmti, jmethodID method, struct method_info *m)
{
    memset(m, 0, sizeof *m);
    jclass klass = NULL;
    char *name = NULL, *sig = NULL, *source = NULL;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) != JVMTI_ERROR_NONE)
        return false;
    if ((*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) != JVMTI_ERROR_NONE)
        return false;
    m->class_serial = class_table_serial_of(jvmti, klass);
    m->name_id = (uint32_t)string_table_intern(name);
    m->sig_id = (uint32_t)string_table_intern(sig);
    jvmti_util_free(jvmti, name);
    jvmti_util_free(jvmti, sig);
    if ((*jvmti)->GetSourceFileName(jvmti, klass, &source) == JVMTI_ERROR_NONE) {
        m->source_id = (uint32_t)string_table_intern(source);
        jvmti_util_free(jvmti, source);
    }
    jboolean native = JNI_FALSE;
    if ((*jvmti)->IsMethodNative(jvmti, method, &native) == JVMTI_ERROR_NONE)
        m->native = native;
    jvmtiLineNumberEntry *lines = NULL;
    jint nlines = 0;
    if (!m->native && with_lines &&
        (*jvmti)->GetLineNumberTable(jvmti, method, &nlines, &lines) == JVMTI_ERROR_NONE &&
        nlines > 0) {
        m->lines = malloc(sizeof *lines * (size_t)nlines);
        if (m->lines) {
            memcpy(m->lines, lines, sizeof *lines * (size_t)nlines);
            qsort(m->lines, (size_t)nlines, sizeof *lines, compare_lines);
            m->nlines = nlines;
        }
    }
    jvmti_util_free(jvmti, lines);
    /* klass is a local reference of the calling native frame; event callbacks and agent
     * threads return to the VM soon, which frees it. */
    return true;
}

/* The method's index + 1, reading and keeping its details on first sight; 0 if unreadable. */
static uint32_t method_number(jvmtiEnv *jvmti, jmethodID method)
{
    uint32_t idx = 0;
    pthread_mutex_lock(&lock);
    bool found = keymap_get(methods_by_id, &method, sizeof method, &idx);
    pthread_mutex_unlock(&lock);
    if (found)
        return idx;

    struct method_info m;
    if (!read_method(jvmti, method, &m))
        return 0;
    uint32_t result = 0;
    pthread_mutex_lock(&lock);
    if (keymap_get(methods_by_id, &method, sizeof method, &idx)) {
        free(m.lines); /* another thread was first */
        result = idx;
    } else {
        uint32_t i = segarray_append(&methods);
        if (i != UINT32_MAX && keymap_put(methods_by_id, &method, sizeof method, i + 1)) {
            struct method_info *slot = segarray_at(&methods, i);
            *slot = m;
            lines_charge(slot, true);
            result = i + 1;
        } else {
            free(m.lines);
        }
    }
    pthread_mutex_unlock(&lock);
    return result;
}

const struct method_info *frame_table_method(jvmtiEnv *jvmti, jmethodID method)
{
    uint32_t number = method_number(jvmti, method);
    return number ? segarray_at(&methods, number - 1) : NULL;
}

bool frame_table_register_synthetic(jmethodID id, uint32_t class_serial, const char *name)
{
    struct method_info m;
    memset(&m, 0, sizeof m);
    m.class_serial = class_serial;
    m.name_id = (uint32_t)string_table_intern(name);
    m.sig_id = (uint32_t)string_table_intern("()V");
    bool ok = false;
    uint32_t idx = 0;
    pthread_mutex_lock(&lock);
    if (keymap_get(methods_by_id, &id, sizeof id, &idx)) {
        ok = true;
    } else {
        uint32_t i = segarray_append(&methods);
        if (i != UINT32_MAX && keymap_put(methods_by_id, &id, sizeof id, i + 1)) {
            *(struct method_info *)segarray_at(&methods, i) = m;
            ok = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

static int32_t line_at(const struct method_info *m, jlocation location)
{
    if (m->native)
        return HPROF_LINE_NATIVE;
    if (!with_lines)
        return HPROF_LINE_NONE;
    if (m->nlines == 0 || location < 0)
        return HPROF_LINE_UNKNOWN;
    int32_t line = HPROF_LINE_UNKNOWN;
    for (jint i = 0; i < m->nlines && m->lines[i].start_location <= location; i++)
        line = m->lines[i].line_number;
    return line;
}

uint32_t frame_table_intern(jvmtiEnv *jvmti, jmethodID method, jlocation location)
{
    if (!with_lines)
        location = 0;
    struct {
        jmethodID method;
        jlocation location;
    } key = {method, location};
    uint32_t serial = 0;
    pthread_mutex_lock(&lock);
    bool found = keymap_get(frames_by_key, &key, sizeof key, &serial);
    pthread_mutex_unlock(&lock);
    if (found)
        return serial;

    uint32_t number = method_number(jvmti, method);
    if (!number)
        return 0;
    const struct method_info *m = segarray_at(&methods, number - 1);
    struct {
        jmethodID method;
        int64_t line;
    } line_key = {method, 0};
    pthread_mutex_lock(&lock);
    line_key.line = line_at(m, location); /* under the lock: frame_table_forget frees lines */
    if (!keymap_get(frames_by_key, &key, sizeof key, &serial)) {
        if (!keymap_get(frames_by_line, &line_key, sizeof line_key, &serial)) {
            uint32_t i = segarray_append(&frames);
            if (i != UINT32_MAX) {
                struct frame_info *f = segarray_at(&frames, i);
                f->method = number - 1;
                f->line = (int32_t)line_key.line;
                serial = keymap_put(frames_by_line, &line_key, sizeof line_key, i + 1);
            }
        }
        if (serial && !keymap_put(frames_by_key, &key, sizeof key, serial))
            serial = 0;
    }
    pthread_mutex_unlock(&lock);
    return serial;
}

const struct frame_info *frame_table_get(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&frames))
        return NULL;
    return segarray_at(&frames, serial - 1);
}

void frame_table_describe(uint32_t serial, struct hprof_frame *out)
{
    memset(out, 0, sizeof *out);
    const struct frame_info *f = frame_table_get(serial);
    if (!f)
        return;
    const struct method_info *m = segarray_at(&methods, f->method);
    const struct class_info *c = class_table_get(m->class_serial);
    out->frame_id = serial;
    out->method_name_id = m->name_id;
    out->method_sig_id = m->sig_id;
    out->source_name_id = m->source_id;
    out->class_serial = m->class_serial;
    out->line = f->line;
    out->class_name = c ? c->name : "<unknown class>";
    out->method_name = string_table_text(m->name_id);
    out->method_sig = string_table_text(m->sig_id);
    out->source_name = string_table_text(m->source_id);
}

uint32_t frame_table_frame_class(uint32_t serial)
{
    const struct frame_info *f = frame_table_get(serial);
    return f ? ((const struct method_info *)segarray_at(&methods, f->method))->class_serial : 0;
}

void frame_table_method_label(uint32_t serial, char *buf, size_t len)
{
    struct hprof_frame view;
    frame_table_describe(serial, &view);
    if (!view.method_name)
        snprintf(buf, len, "<unknown>");
    else
        snprintf(buf, len, "%s.%s", view.class_name, view.method_name);
}

/* ---- forgetting the lookups of unloaded classes ------------------------------------- */

struct forget_set {
    const uint8_t *classes; /* classes[serial] != 0: forget */
    uint32_t n;
};

static bool forgotten(const struct forget_set *f, uint32_t class_serial)
{
    return class_serial < f->n && f->classes[class_serial];
}

/* Under the lock. */
static uint32_t class_of_method(jmethodID method)
{
    uint32_t idx = 0;
    if (!keymap_get(methods_by_id, &method, sizeof method, &idx))
        return 0;
    return ((const struct method_info *)segarray_at(&methods, idx - 1))->class_serial;
}

uint32_t frame_table_class_of(jmethodID method)
{
    pthread_mutex_lock(&lock);
    uint32_t c = class_of_method(method);
    pthread_mutex_unlock(&lock);
    return c;
}

/* frames_by_key and frames_by_line: keys start with the jmethodID. */
static bool keep_frame_key(const void *key, size_t len, uint32_t value, void *ctx)
{
    (void)len, (void)value;
    jmethodID method;
    memcpy(&method, key, sizeof method);
    return !forgotten(ctx, class_of_method(method));
}

static bool keep_method(const void *key, size_t len, uint32_t value, void *ctx)
{
    (void)key, (void)len;
    return !forgotten(ctx,
                      ((const struct method_info *)segarray_at(&methods, value - 1))->class_serial);
}

size_t frame_table_forget(const uint8_t *classes, uint32_t n)
{
    struct forget_set f = {classes, n};
    size_t gone = 0, g;
    pthread_mutex_lock(&lock);
    /* The frame keys first: they find their class through methods_by_id. */
    if ((g = keymap_prune(frames_by_key, keep_frame_key, &f)) != SIZE_MAX)
        gone += g;
    if ((g = keymap_prune(frames_by_line, keep_frame_key, &f)) != SIZE_MAX)
        gone += g;
    if ((g = keymap_prune(methods_by_id, keep_method, &f)) != SIZE_MAX)
        gone += g;
    uint32_t count = segarray_count(&methods);
    for (uint32_t i = 0; i < count; i++) {
        struct method_info *m = segarray_at(&methods, i);
        if (m->lines && forgotten(&f, m->class_serial)) {
            lines_charge(m, false);
            free(m->lines);
            m->lines = NULL;
            m->nlines = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return gone;
}

void frame_table_teardown(void)
{
    uint32_t n = segarray_count(&methods);
    for (uint32_t i = 0; i < n; i++) {
        struct method_info *m = segarray_at(&methods, i);
        lines_charge(m, false);
        free(m->lines);
    }
    segarray_free(&methods);
    segarray_free(&frames);
    keymap_free(methods_by_id);
    keymap_free(frames_by_key);
    keymap_free(frames_by_line);
    methods_by_id = frames_by_key = frames_by_line = NULL;
}

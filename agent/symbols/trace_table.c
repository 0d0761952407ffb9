#include "trace_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "chunk_store.h"
#include "frame_table.h"
#include "class_table.h"
#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"
#include "unload_forget.h"

_Static_assert(sizeof(struct trace_info) == 16, "a trace entry is 16 bytes (doc/memory.md)");

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Two keys lead to a trace: the raw (method, location) pairs a stack walk gives, looked up
 * first, and the frame serials it resolves to, which decide: stacks whose locations differ but
 * whose frames are the same (frame_table.h: one frame per line) are one trace. */
static struct keymap *traces_by_key;    /* thread serial, raw frames -> serial */
static struct keymap *traces_by_frames; /* thread serial, frame serials -> serial */
static struct segarray traces;          /* serial = index + 1 */
/* The traces' frame lists (4 bytes a frame), apart from traces_by_frames: that index forgets a
 * trace whose frames name a forgotten method (no stack resolves to those frames again), and
 * the trace keeps its frames for every output. */
static struct chunk_store frame_lists;

/* A raw frame in a key: the method and its location, which is a bytecode index (below 65536)
 * or -1, so 32 bits hold it: 12 bytes a frame instead of 16. */
#define RAW_FRAME_BYTES (sizeof(jmethodID) + sizeof(int32_t))

/* Past the memory budget (memory=), new stacks are counted under one trace (one per thread
 * with thread=y): one frame, <memory_budget_reached>.<new_stacks>, made when the budget is
 * first reached. */
static pthread_mutex_t overflow_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(uint32_t) overflow_frame;
static char overflow_method_id; /* its address names the pseudo-method */

static void traces_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&traces);
    u->bytes = keymap_bytes(traces_by_key) + keymap_bytes(traces_by_frames) +
               segarray_bytes(&traces) + frame_lists.bytes;
    pthread_mutex_unlock(&lock);
}

static _Atomic(int) max_depth;

int trace_table_depth(void)
{
    return atomic_load_explicit(&max_depth, memory_order_relaxed);
}
void trace_table_set_depth(int depth)
{
    atomic_store_explicit(&max_depth, depth, memory_order_relaxed);
}

int trace_table_init(int depth)
{
    trace_table_set_depth(depth);
    segarray_init(&traces, sizeof(struct trace_info));
    traces_by_key = keymap_new(16384);
    traces_by_frames = keymap_new(16384);
    mem_account_register("traces", traces_measure);
    if (!traces_by_key || !traces_by_frames)
        return -1;
    /* serial 1: the empty trace */
    return segarray_append(&traces) == UINT32_MAX ? -1 : 0;
}

/* The key: thread serial, then the raw (method, location) pairs. */
static size_t make_key(uint8_t *key, const jvmtiFrameInfo *frames, jint n, uint32_t thread)
{
    memcpy(key, &thread, sizeof thread);
    size_t off = sizeof thread;
    for (jint i = 0; i < n; i++) {
        int32_t location = (int32_t)frames[i].location;
        memcpy(key + off, &frames[i].method, sizeof frames[i].method);
        memcpy(key + off + sizeof frames[i].method, &location, sizeof location);
        off += RAW_FRAME_BYTES;
    }
    return off;
}

/* A new trace of the n frame serials in frames (followed by the thread serial: the frames key,
 * frames_len bytes). Its frame list is a copy in frame_lists, which never moves. Under the
 * lock. */
static uint32_t add_trace(const uint32_t *frames, jint n, uint32_t thread_serial, size_t frames_len)
{
    if (n > UINT16_MAX)
        return HPROF_TRACE_SERIAL_NONE;
    uint32_t i = segarray_append(&traces);
    if (i == UINT32_MAX)
        return HPROF_TRACE_SERIAL_NONE;
    struct trace_info *t = segarray_at(&traces, i);
    t->thread_serial = thread_serial;
    uint32_t *list = chunk_store_add(&frame_lists, frames, sizeof *frames * (size_t)n);
    if (!list || !keymap_put(traces_by_frames, frames, frames_len, i + 1))
        return HPROF_TRACE_SERIAL_NONE; /* out of memory: an empty trace nobody names */
    t->nframes = (uint16_t)n;
    t->frames = list;
    return i + 1;
}

/* The trace new stacks are counted under past the budget; made on first need (its frame and
 * class are two small entries). HPROF_TRACE_SERIAL_NONE if even that fails. */
uint32_t trace_table_overflow(jvmtiEnv *jvmti, uint32_t thread_serial)
{
    uint32_t frame = atomic_load(&overflow_frame);
    if (!frame) {
        pthread_mutex_lock(&overflow_lock);
        jmethodID id = (jmethodID)(void *)&overflow_method_id;
        frame = atomic_load(&overflow_frame);
        uint32_t cls = frame ? 0 : class_table_register_synthetic("<memory_budget_reached>");
        if (cls && frame_table_register_synthetic(id, cls, "<new_stacks>"))
            atomic_store(&overflow_frame, frame = frame_table_intern(jvmti, id, 0));
        pthread_mutex_unlock(&overflow_lock);
    }
    if (!frame)
        return HPROF_TRACE_SERIAL_NONE;
    uint32_t key[2] = {frame, thread_serial}, serial = HPROF_TRACE_SERIAL_NONE;
    pthread_mutex_lock(&lock);
    if (!keymap_get(traces_by_frames, key, sizeof key, &serial))
        serial = add_trace(key, 1, thread_serial, sizeof key);
    pthread_mutex_unlock(&lock);
    return serial;
}

uint32_t trace_table_intern(jvmtiEnv *jvmti, const jvmtiFrameInfo *frames, jint n,
                            uint32_t thread_serial)
{
    if (n <= 0)
        return HPROF_TRACE_SERIAL_NONE;
    uint8_t small[4 + RAW_FRAME_BYTES * 16];
    size_t need = 4 + RAW_FRAME_BYTES * (size_t)n;
    uint8_t *key = need <= sizeof small ? small : malloc(need);
    if (!key)
        return HPROF_TRACE_SERIAL_NONE;
    size_t len = make_key(key, frames, n, thread_serial);

    uint32_t serial = 0;
    pthread_mutex_lock(&lock);
    bool found = keymap_get(traces_by_key, key, len, &serial);
    pthread_mutex_unlock(&lock);

    if (!found && mem_account_budget_reached("new stacks")) {
        serial = trace_table_overflow(jvmti, thread_serial);
    } else if (!found) {
        unload_forget_poll(); /* new stacks come with new classes, and unloads with those */
        /* New raw stack: resolve its frames outside the lock. */
        uint32_t *serials = malloc(sizeof *serials * ((size_t)n + 1));
        bool ok = serials != NULL;
        if (ok)
            serials[n] = thread_serial; /* the frames key's last word */
        for (jint i = 0; ok && i < n; i++)
            ok =
                (serials[i] = frame_table_intern(jvmti, frames[i].method, frames[i].location)) != 0;
        size_t frames_len = sizeof *serials * ((size_t)n + 1);
        pthread_mutex_lock(&lock);
        if (!ok) {
            serial = HPROF_TRACE_SERIAL_NONE;
        } else if (!keymap_get(traces_by_key, key, len, &serial)) {
            if (!keymap_get(traces_by_frames, serials, frames_len, &serial))
                serial = add_trace(serials, n, thread_serial, frames_len);
            if (serial != HPROF_TRACE_SERIAL_NONE && !keymap_put(traces_by_key, key, len, serial))
                serial = HPROF_TRACE_SERIAL_NONE;
        }
        pthread_mutex_unlock(&lock);
        free(serials);
    }
    if (key != small)
        free(key);
    return serial;
}

struct forget_set {
    const uint8_t *classes;
    uint32_t n;
};

/* A raw key stays unless one of its methods is of a class to forget. */
static bool keep_raw_key(const void *key, size_t len, uint32_t value, void *ctx)
{
    (void)value;
    const struct forget_set *f = ctx;
    for (size_t off = sizeof(uint32_t); off + RAW_FRAME_BYTES <= len; off += RAW_FRAME_BYTES) {
        jmethodID method;
        memcpy(&method, (const uint8_t *)key + off, sizeof method);
        uint32_t c = frame_table_class_of(method);
        if (c < f->n && f->classes[c])
            return false;
    }
    return true;
}

/* A frames key (frame serials, then the thread serial) stays unless one of its frames is of a
 * method of a class to forget: frame_table then forgets that method, and a stack of it met
 * later resolves to new frames, never to these. */
static bool keep_frames_key(const void *key, size_t len, uint32_t value, void *ctx)
{
    const struct forget_set *f = ctx;
    for (size_t off = 0; off + 2 * sizeof(uint32_t) <= len; off += sizeof(uint32_t)) {
        uint32_t serial;
        memcpy(&serial, (const uint8_t *)key + off, sizeof serial);
        uint32_t c = frame_table_frame_class(serial);
        if (c < f->n && f->classes[c]) {
            /* Set even if the prune runs out of memory: the frame is forgotten all the same. */
            struct trace_info *t = segarray_at(&traces, value - 1);
            atomic_store_explicit(&t->forgotten, true, memory_order_relaxed);
            return false;
        }
    }
    return true;
}

size_t trace_table_forget(const uint8_t *classes, uint32_t n)
{
    struct forget_set f = {classes, n};
    pthread_mutex_lock(&lock);
    size_t gone = keymap_prune(traces_by_key, keep_raw_key, &f);
    size_t gone_frames = keymap_prune(traces_by_frames, keep_frames_key, &f);
    pthread_mutex_unlock(&lock);
    return (gone == SIZE_MAX ? 0 : gone) + (gone_frames == SIZE_MAX ? 0 : gone_frames);
}

const struct trace_info *trace_table_get(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&traces))
        return NULL;
    return segarray_at(&traces, serial - 1);
}

uint32_t trace_table_count(void)
{
    return segarray_count(&traces);
}

void trace_table_top_label(uint32_t serial, char *buf, size_t len)
{
    const struct trace_info *t = trace_table_get(serial);
    if (!t || t->nframes == 0) {
        snprintf(buf, len, "<empty>");
        return;
    }
    frame_table_method_label(t->frames[0], buf, len);
}

void trace_table_teardown(void)
{
    unload_forget_teardown();
    segarray_free(&traces);
    chunk_store_free(&frame_lists);
    atomic_store(&overflow_frame, 0);
    keymap_free(traces_by_key);
    keymap_free(traces_by_frames);
    traces_by_key = traces_by_frames = NULL;
}

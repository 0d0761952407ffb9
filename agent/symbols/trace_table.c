#include "trace_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "frame_table.h"
#include "keymap.h"
#include "segarray.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Two keys lead to a trace: the raw (method, location) pairs a stack walk gives, looked up
 * first, and the frame serials it resolves to, which decide: stacks whose locations differ but
 * whose frames are the same (frame_table.h: one frame per line) are one trace. */
static struct keymap *traces_by_key;    /* thread serial, raw frames -> serial */
static struct keymap *traces_by_frames; /* thread serial, frame serials -> serial */
static struct segarray traces;          /* serial = index + 1 */

struct raw_frame {
    jmethodID method;
    jlocation location;
};

static _Atomic(int) max_depth;

int traces_depth(void)
{
    return atomic_load_explicit(&max_depth, memory_order_relaxed);
}
void traces_set_depth(int depth)
{
    atomic_store_explicit(&max_depth, depth, memory_order_relaxed);
}

int traces_init(int depth)
{
    traces_set_depth(depth);
    segarray_init(&traces, sizeof(struct trace_info));
    traces_by_key = keymap_new(16384);
    traces_by_frames = keymap_new(16384);
    if (!traces_by_key || !traces_by_frames)
        return -1;
    uint32_t i = segarray_append(&traces); /* serial 1: the empty trace */
    struct trace_info *t = segarray_at(&traces, i);
    t->serial = HPROF_TRACE_SERIAL_NONE;
    return 0;
}

/* The key: thread serial, then the raw (method, location) pairs. */
static size_t make_key(uint8_t *key, const jvmtiFrameInfo *frames, jint n, uint32_t thread)
{
    memcpy(key, &thread, sizeof thread);
    size_t off = sizeof thread;
    for (jint i = 0; i < n; i++) {
        struct raw_frame r = {frames[i].method, frames[i].location};
        memcpy(key + off, &r, sizeof r);
        off += sizeof r;
    }
    return off;
}

/* A new trace of the n frame serials in *serials (followed by the thread serial: the frames
 * key, frames_len bytes), which it takes over (*serials set to NULL). Under the lock. */
static uint32_t add_trace(uint32_t *frames, jint n, uint32_t thread_serial, size_t frames_len,
                          uint32_t **serials)
{
    uint32_t i = segarray_append(&traces);
    if (i == UINT32_MAX)
        return HPROF_TRACE_SERIAL_NONE;
    struct trace_info *t = segarray_at(&traces, i);
    t->serial = i + 1;
    t->thread_serial = thread_serial;
    t->nframes = (uint32_t)n;
    t->frames = frames;
    *serials = NULL;
    /* Out of memory: a trace nobody names (written, never referred to). */
    return keymap_put(traces_by_frames, frames, frames_len, i + 1) ? i + 1
                                                                   : HPROF_TRACE_SERIAL_NONE;
}

uint32_t traces_intern(jvmtiEnv *jvmti, const jvmtiFrameInfo *frames, jint n,
                       uint32_t thread_serial)
{
    if (n <= 0)
        return HPROF_TRACE_SERIAL_NONE;
    uint8_t small[4 + 16 * 16];
    size_t need = 4 + sizeof(struct raw_frame) * (size_t)n;
    uint8_t *key = need <= sizeof small ? small : malloc(need);
    if (!key)
        return HPROF_TRACE_SERIAL_NONE;
    size_t len = make_key(key, frames, n, thread_serial);

    uint32_t serial = 0;
    pthread_mutex_lock(&lock);
    bool found = keymap_get(traces_by_key, key, len, &serial);
    pthread_mutex_unlock(&lock);

    if (!found) {
        /* New raw stack: resolve its frames outside the lock. */
        uint32_t *serials = malloc(sizeof *serials * ((size_t)n + 1));
        bool ok = serials != NULL;
        if (ok)
            serials[n] = thread_serial; /* the frames key's last word */
        for (jint i = 0; ok && i < n; i++)
            ok = (serials[i] = frames_intern(jvmti, frames[i].method, frames[i].location)) != 0;
        size_t frames_len = sizeof *serials * ((size_t)n + 1);
        pthread_mutex_lock(&lock);
        if (!ok) {
            serial = HPROF_TRACE_SERIAL_NONE;
        } else if (!keymap_get(traces_by_key, key, len, &serial)) {
            if (!keymap_get(traces_by_frames, serials, frames_len, &serial))
                serial = add_trace(serials, n, thread_serial, frames_len, &serials);
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

const struct trace_info *traces_get(uint32_t serial)
{
    if (serial == 0 || serial > segarray_count(&traces))
        return NULL;
    return segarray_at(&traces, serial - 1);
}

uint32_t traces_count(void)
{
    return segarray_count(&traces);
}

void traces_top_label(uint32_t serial, char *buf, size_t len)
{
    const struct trace_info *t = traces_get(serial);
    if (!t || t->nframes == 0) {
        snprintf(buf, len, "<empty>");
        return;
    }
    frames_method_label(t->frames[0], buf, len);
}

void traces_teardown(void)
{
    uint32_t n = segarray_count(&traces);
    for (uint32_t i = 0; i < n; i++)
        free(((struct trace_info *)segarray_at(&traces, i))->frames);
    segarray_free(&traces);
    keymap_free(traces_by_key);
    keymap_free(traces_by_frames);
    traces_by_key = traces_by_frames = NULL;
}

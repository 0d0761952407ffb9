#include "emit.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "frame_table.h"
#include "output.h"
#include "string_table.h"
#include "thread_table.h"
#include "trace_table.h"

/* Which ids of one table are in the output: a bit per id, grown as ids grow. Guarded by the
 * output lock, like everything written. */
struct written_set {
    uint64_t *bits;
    uint32_t nwords;
};

static struct written_set strings_out, classes_out, frames_out, traces_out, threads_out;
/* Classes whose UNLOAD CLASS is written. They stay in classes_out: never loaded again. */
static struct written_set unloads_out;

/* Marks id written; true when it was not before. When the set cannot grow, says "not
 * written": a record written twice is harmless to readers, one never written is not. */
static bool first_time(struct written_set *s, uint64_t id)
{
    uint64_t word = id / 64;
    if (word >= s->nwords) {
        uint64_t n = s->nwords ? s->nwords : 64;
        while (n <= word)
            n *= 2;
        if (n > UINT32_MAX)
            return true;
        uint64_t *bits = realloc(s->bits, n * sizeof *bits);
        if (!bits)
            return true;
        memset(bits + s->nwords, 0, (n - s->nwords) * sizeof *bits);
        s->bits = bits;
        s->nwords = (uint32_t)n;
    }
    uint64_t bit = 1ull << (id % 64);
    if (s->bits[word] & bit)
        return false;
    s->bits[word] |= bit;
    return true;
}

static bool was_written(const struct written_set *s, uint64_t id)
{
    return id / 64 < s->nwords && (s->bits[id / 64] >> (id % 64)) & 1;
}

void emit_unloads(struct hprof_writer *w)
{
    uint32_t n = class_table_count();
    for (uint32_t serial = 1; serial <= n; serial++) {
        const struct class_info *c = class_table_get(serial);
        if (c && atomic_load(&c->unloaded) && was_written(&classes_out, serial) &&
            first_time(&unloads_out, serial))
            w->ops->unload_class(w, serial);
    }
}

struct hprof_writer *emit_begin(void)
{
    return output_lock();
}

void emit_end(void)
{
    output_unlock();
}

static uint32_t serial_at(const uint32_t *first, size_t stride, size_t i)
{
    return *(const uint32_t *)((const char *)first + i * stride);
}

bool emit_section(const struct emit_refs *refs, emit_body body, void *ctx)
{
    struct hprof_writer *w = output_lock();
    for (size_t i = 0; w && refs && i < refs->n; i++) {
        if (refs->threads)
            emit_thread(w, serial_at(refs->threads, refs->stride, i));
        if (refs->classes)
            emit_class(w, serial_at(refs->classes, refs->stride, i));
        if (refs->traces)
            emit_trace(w, serial_at(refs->traces, refs->stride, i));
    }
    if (w)
        body(w, ctx);
    output_unlock();
    return w != NULL;
}

static void empty_trace(struct hprof_writer *w, void *ctx)
{
    (void)ctx;
    emit_trace(w, HPROF_TRACE_SERIAL_NONE);
}

void emit_first_records(void)
{
    emit_section(NULL, empty_trace, NULL);
}

void emit_string(struct hprof_writer *w, hprof_id id)
{
    const char *text = string_table_text(id);
    if (text && first_time(&strings_out, id))
        w->ops->string(w, id, text, strlen(text));
}

void emit_class(struct hprof_writer *w, uint32_t serial)
{
    const struct class_info *c = class_table_get(serial);
    if (!c || !first_time(&classes_out, serial))
        return;
    emit_string(w, c->name_id);
    w->ops->load_class(w, c->serial, c->class_id, HPROF_TRACE_SERIAL_NONE, c->name_id, c->name);
}

void emit_frame(struct hprof_writer *w, uint32_t serial)
{
    if (!frame_table_get(serial) || !first_time(&frames_out, serial))
        return;
    struct hprof_frame view;
    frame_table_describe(serial, &view);
    emit_string(w, view.method_name_id);
    emit_string(w, view.method_sig_id);
    emit_string(w, view.source_name_id);
    emit_class(w, view.class_serial);
    w->ops->frame(w, &view);
}

void emit_trace(struct hprof_writer *w, uint32_t serial)
{
    const struct trace_info *t = trace_table_get(serial);
    if (!t || !first_time(&traces_out, serial))
        return;
    struct hprof_frame small[16];
    struct hprof_frame *views = t->nframes <= 16 ? small : calloc(t->nframes, sizeof *views);
    if (!views)
        return;
    if (t->thread_serial)
        emit_thread(w, t->thread_serial);
    for (uint32_t i = 0; i < t->nframes; i++) {
        emit_frame(w, t->frames[i]);
        frame_table_describe(t->frames[i], &views[i]);
    }
    w->ops->trace(w, serial, t->thread_serial, t->nframes, views);
    if (views != small)
        free(views);
}

void emit_thread(struct hprof_writer *w, uint32_t serial)
{
    const struct thread_info *t = thread_table_get(serial);
    if (!t || !first_time(&threads_out, serial))
        return;
    emit_string(w, t->name_id);
    emit_string(w, t->group_id);
    emit_string(w, t->parent_group_id);
    emit_trace(w, t->trace_serial);
    struct hprof_thread_info view = {
        .thread_serial = t->serial,
        .thread_obj = t->object_id,
        .trace_serial = t->trace_serial,
        .name_id = t->name_id,
        .group_id = t->group_id,
        .parent_group_id = t->parent_group_id,
        .name = string_table_text(t->name_id),
        .group = string_table_text(t->group_id),
        .parent_group = string_table_text(t->parent_group_id),
    };
    w->ops->thread_start(w, &view);
}

struct range {
    void (*one)(struct hprof_writer *, uint32_t);
    uint32_t first, last;
};

static void range_body(struct hprof_writer *w, void *ctx)
{
    const struct range *r = ctx;
    for (uint32_t serial = r->first; serial <= r->last; serial++)
        r->one(w, serial);
}

/* Under the lock: one(w, serial) for serials first..last. */
static void emit_range(void (*one)(struct hprof_writer *, uint32_t), uint32_t first, uint32_t last)
{
    struct range r = {one, first, last};
    emit_section(NULL, range_body, &r);
}

void emit_threads_known(void)
{
    emit_range(emit_thread, 1, thread_table_count());
}

void emit_thread_start(uint32_t serial)
{
    emit_range(emit_thread, serial, serial);
}

void emit_traces_known(void)
{
    emit_range(emit_trace, 1, trace_table_count());
}

static void thread_end_body(struct hprof_writer *w, void *ctx)
{
    uint32_t serial = *(const uint32_t *)ctx;
    emit_thread(w, serial);
    w->ops->thread_end(w, serial);
}

void emit_thread_end(uint32_t serial)
{
    emit_section(NULL, thread_end_body, &serial);
}

void emit_reset(void)
{
    struct written_set *all[] = {&strings_out, &classes_out, &frames_out,
                                 &traces_out,  &threads_out, &unloads_out};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        free(all[i]->bits);
        all[i]->bits = NULL;
        all[i]->nwords = 0;
    }
}

/* HPROF binary output, "JAVA PROFILE 1.0.2" with 8-byte identifiers (doc/formats.md): the
 * header and the profile's top-level records, each assembled on the stack and handed to the
 * sink in one piece. Heap dumps (segments and sub-records): binary_heap_dump.c. */
#include "binary_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- top-level records --------------------------------------------------------------- */

static uint32_t record_time(struct hprof_writer *w)
{
    uint64_t now = w->clock_us();
    /* u4 microseconds: wraps after about 71 minutes, as in the old agent. */
    return now > w->start_us ? (uint32_t)(now - w->start_us) : 0;
}

static uint8_t *put_header(struct hprof_writer *w, uint8_t *p, uint8_t tag, uint32_t len)
{
    p = put_u1(p, tag);
    p = put_u4(p, record_time(w));
    return put_u4(p, len);
}

void binary_writer_header(struct hprof_writer *w, uint8_t tag, uint32_t len)
{
    uint8_t h[HPROF_RECORD_HEADER_SIZE];
    put_header(w, h, tag, len);
    sink_write(w->sink, h, sizeof h);
}

/* Records other than the dump's own sub-records are refused inside a heap dump: readers
 * require the segments of one dump to follow each other. Reported once. */
bool binary_writer_top_level_ok(struct hprof_writer *w, const char *what)
{
    struct binary_writer *b = bw(w);
    if (!b->in_dump)
        return true;
    if (!b->misuse_reported) {
        b->misuse_reported = true;
        fprintf(stderr,
                "HPROF ERROR: internal: a %s record was written inside a heap dump; "
                "dropped (such records are dropped until HEAP DUMP END)\n",
                what);
    }
    return false;
}

static void bin_begin(struct hprof_writer *w)
{
    if (!binary_writer_top_level_ok(w, "header"))
        return;
    static const char magic[] = "JAVA PROFILE 1.0.2"; /* written with its NUL */
    uint8_t h[sizeof magic + 12];
    w->start_us = w->clock_us();
    uint64_t ms = w->start_us / 1000u;
    memcpy(h, magic, sizeof magic);
    uint8_t *p = put_u4(h + sizeof magic, 8);
    p = put_u4(p, (uint32_t)(ms >> 32));
    put_u4(p, (uint32_t)ms);
    sink_write(w->sink, h, sizeof h);
}

static void bin_string(struct hprof_writer *w, hprof_id id, const char *utf8, size_t len)
{
    if (!binary_writer_top_level_ok(w, "STRING"))
        return;
    if (!utf8)
        len = 0;
    if (len > UINT32_MAX - 8)
        len = UINT32_MAX - 8;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 8];
    uint8_t *p = put_header(w, r, HPROF_TAG_STRING, (uint32_t)(8 + len));
    put_u8(p, id);
    sink_write(w->sink, r, sizeof r);
    sink_write(w->sink, utf8, len);
}

static void bin_load_class(struct hprof_writer *w, uint32_t class_serial, hprof_id class_id,
                           uint32_t trace_serial, hprof_id name_id, const char *name)
{
    (void)name;
    if (!binary_writer_top_level_ok(w, "LOAD CLASS"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 24];
    uint8_t *p = put_header(w, r, HPROF_TAG_LOAD_CLASS, 24);
    p = put_u4(p, class_serial);
    p = put_u8(p, class_id);
    p = put_u4(p, trace_serial);
    put_u8(p, name_id);
    sink_write(w->sink, r, sizeof r);
}

static void bin_unload_class(struct hprof_writer *w, uint32_t class_serial)
{
    if (!binary_writer_top_level_ok(w, "UNLOAD CLASS"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 4];
    put_u4(put_header(w, r, HPROF_TAG_UNLOAD_CLASS, 4), class_serial);
    sink_write(w->sink, r, sizeof r);
}

static void bin_frame(struct hprof_writer *w, const struct hprof_frame *f)
{
    if (!binary_writer_top_level_ok(w, "STACK FRAME"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 40];
    uint8_t *p = put_header(w, r, HPROF_TAG_STACK_FRAME, 40);
    p = put_u8(p, f->frame_id);
    p = put_u8(p, f->method_name_id);
    p = put_u8(p, f->method_sig_id);
    p = put_u8(p, f->source_name_id);
    p = put_u4(p, f->class_serial);
    put_u4(p, (uint32_t)f->line);
    sink_write(w->sink, r, sizeof r);
}

static void bin_trace(struct hprof_writer *w, uint32_t trace_serial, uint32_t thread_serial,
                      size_t nframes, const struct hprof_frame *frames)
{
    if (!binary_writer_top_level_ok(w, "STACK TRACE"))
        return;
    if (nframes > (UINT32_MAX - 12) / 8)
        nframes = (UINT32_MAX - 12) / 8;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 12 + 8 * 32];
    uint8_t *p = put_header(w, r, HPROF_TAG_STACK_TRACE, (uint32_t)(12 + 8 * nframes));
    p = put_u4(p, trace_serial);
    p = put_u4(p, thread_serial);
    p = put_u4(p, (uint32_t)nframes);
    for (size_t i = 0; i < nframes; i++) {
        if ((size_t)(r + sizeof r - p) < 8) {
            sink_write(w->sink, r, (size_t)(p - r));
            p = r;
        }
        p = put_u8(p, frames[i].frame_id);
    }
    sink_write(w->sink, r, (size_t)(p - r));
}

static void bin_thread_start(struct hprof_writer *w, const struct hprof_thread_info *t)
{
    if (!binary_writer_top_level_ok(w, "START THREAD"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 40];
    uint8_t *p = put_header(w, r, HPROF_TAG_START_THREAD, 40);
    p = put_u4(p, t->thread_serial);
    p = put_u8(p, t->thread_obj);
    p = put_u4(p, t->trace_serial);
    p = put_u8(p, t->name_id);
    p = put_u8(p, t->group_id);
    put_u8(p, t->parent_group_id);
    sink_write(w->sink, r, sizeof r);
}

static void bin_thread_end(struct hprof_writer *w, uint32_t thread_serial)
{
    if (!binary_writer_top_level_ok(w, "END THREAD"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 4];
    put_u4(put_header(w, r, HPROF_TAG_END_THREAD, 4), thread_serial);
    sink_write(w->sink, r, sizeof r);
}

static void bin_control_settings(struct hprof_writer *w, bool alloc_traces, bool cpu_sampling,
                                 uint16_t depth)
{
    if (!binary_writer_top_level_ok(w, "CONTROL SETTINGS"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 6];
    uint8_t *p = put_header(w, r, HPROF_TAG_CONTROL_SETTINGS, 6);
    p = put_u4(p, (alloc_traces ? 0x1u : 0) | (cpu_sampling ? 0x2u : 0));
    put_u2(p, depth);
    sink_write(w->sink, r, sizeof r);
}

#define SITES_FIXED 34u
#define SITES_ROW 25u

static void bin_sites(struct hprof_writer *w, const struct hprof_sites_report *s)
{
    if (!binary_writer_top_level_ok(w, "ALLOC SITES"))
        return;
    size_t n = s->nrows;
    if (n > (UINT32_MAX - SITES_FIXED) / SITES_ROW)
        n = (UINT32_MAX - SITES_FIXED) / SITES_ROW;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + SITES_FIXED + SITES_ROW * 40];
    uint8_t *p = put_header(w, r, HPROF_TAG_ALLOC_SITES, (uint32_t)(SITES_FIXED + SITES_ROW * n));
    p = put_u2(p, s->flags);
    p = put_u4(p, float_bits(s->cutoff));
    p = put_u4(p, clamp_u4(s->total_live_bytes));
    p = put_u4(p, clamp_u4(s->total_live_objs));
    p = put_u8(p, s->total_alloc_bytes);
    p = put_u8(p, s->total_alloc_objs);
    p = put_u4(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        if ((size_t)(r + sizeof r - p) < SITES_ROW) {
            sink_write(w->sink, r, (size_t)(p - r));
            p = r;
        }
        const struct hprof_site_row *row = &s->rows[i];
        p = put_u1(p, row->array_type);
        p = put_u4(p, row->class_serial);
        p = put_u4(p, row->trace_serial);
        p = put_u4(p, clamp_u4(row->live_bytes));
        p = put_u4(p, clamp_u4(row->live_objs));
        p = put_u4(p, clamp_u4(row->alloc_bytes));
        p = put_u4(p, clamp_u4(row->alloc_objs));
    }
    sink_write(w->sink, r, (size_t)(p - r));
}

static void bin_heap_summary(struct hprof_writer *w, const struct hprof_heap_summary *s)
{
    if (!binary_writer_top_level_ok(w, "HEAP SUMMARY"))
        return;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 24];
    uint8_t *p = put_header(w, r, HPROF_TAG_HEAP_SUMMARY, 24);
    p = put_u4(p, clamp_u4(s->total_live_bytes));
    p = put_u4(p, clamp_u4(s->total_live_objs));
    p = put_u8(p, s->total_alloc_bytes);
    put_u8(p, s->total_alloc_objs);
    sink_write(w->sink, r, sizeof r);
}

static void bin_cpu_samples(struct hprof_writer *w, const struct hprof_cost_report *c)
{
    if (!binary_writer_top_level_ok(w, "CPU SAMPLES"))
        return;
    size_t n = c->nrows;
    if (n > (UINT32_MAX - 8) / 8)
        n = (UINT32_MAX - 8) / 8;
    uint8_t r[HPROF_RECORD_HEADER_SIZE + 8 + 8 * 64];
    uint8_t *p = put_header(w, r, HPROF_TAG_CPU_SAMPLES, (uint32_t)(8 + 8 * n));
    p = put_u4(p, clamp_u4(c->total));
    p = put_u4(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        if ((size_t)(r + sizeof r - p) < 8) {
            sink_write(w->sink, r, (size_t)(p - r));
            p = r;
        }
        p = put_u4(p, clamp_u4(c->rows[i].count));
        p = put_u4(p, c->rows[i].trace_serial);
    }
    sink_write(w->sink, r, (size_t)(p - r));
}

/* cpu=times, cpu=old and monitor=y have no binary records (the manual does not allow them
 * with format=b): nothing is written. */
static void bin_cpu_times(struct hprof_writer *w, const struct hprof_cost_report *c)
{
    (void)w;
    (void)c;
}

static void bin_cpu_old(struct hprof_writer *w, const struct hprof_method_time_report *r)
{
    (void)w;
    (void)r;
}

static void bin_monitor_time(struct hprof_writer *w, const struct hprof_cost_report *c)
{
    (void)w;
    (void)c;
}

static void bin_monitor_wait(struct hprof_writer *w, const char *class_sig, int64_t timeout_ms,
                             uint32_t thread_serial)
{
    (void)w;
    (void)class_sig;
    (void)timeout_ms;
    (void)thread_serial;
}

static void bin_monitor_dump(struct hprof_writer *w, const struct hprof_monitor_dump *d)
{
    (void)w;
    (void)d;
}

/* ---- flush / close ------------------------------------------------------------------- */

static void bin_flush(struct hprof_writer *w)
{
    struct binary_writer *b = bw(w);
    if (b->in_dump)
        binary_heap_dump_flush(b); /* a segment may be shorter than the limit */
    sink_flush(w->sink);
}

static void bin_close(struct hprof_writer *w)
{
    if (!w)
        return;
    struct binary_writer *b = bw(w);
    if (b->in_dump)
        binary_heap_dump_end(w, NULL); /* leave a readable file */
    sink_close(w->sink);
    free(b->seg);
    free(b);
}

static const struct hprof_writer_ops binary_ops = {
    .name = "binary",
    .begin = bin_begin,
    .string = bin_string,
    .load_class = bin_load_class,
    .unload_class = bin_unload_class,
    .frame = bin_frame,
    .trace = bin_trace,
    .thread_start = bin_thread_start,
    .thread_end = bin_thread_end,
    .control_settings = bin_control_settings,
    .sites = bin_sites,
    .heap_summary = bin_heap_summary,
    .cpu_samples = bin_cpu_samples,
    .wall_samples = bin_cpu_samples, /* the same record; its traces say it is wall time */
    .cpu_times = bin_cpu_times,
    .cpu_old = bin_cpu_old,
    .monitor_time = bin_monitor_time,
    .monitor_wait = bin_monitor_wait,
    .monitor_waited = bin_monitor_wait,
    .monitor_dump = bin_monitor_dump,
    .heap_dump_begin = binary_heap_dump_begin,
    .root = binary_heap_dump_root,
    .class_dump = binary_heap_dump_class,
    .instance_dump = binary_heap_dump_instance,
    .obj_array_dump = binary_heap_dump_obj_array,
    .prim_array_dump = binary_heap_dump_prim_array,
    .heap_dump_end = binary_heap_dump_end,
    .flush = bin_flush,
    .close = bin_close,
};

struct hprof_writer *binary_writer_new(struct hprof_sink *sink)
{
    struct binary_writer *b = calloc(1, sizeof *b);
    if (!b) {
        sink_close(sink);
        return NULL;
    }
    writer_common_init(&b->w, &binary_ops, sink);
    return &b->w;
}

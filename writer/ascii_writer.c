/* hprof ascii output ("JAVA PROFILE 1.0.1" text), line shapes as spec/ascii-layout.md and
 * doc/formats.md. Serials arrive internal (from 1) and are shown with the historic bases:
 * thread 200000 + serial, trace 299999 + serial. Identifiers print as lower-case hex. */
#include "ascii_dump_spool.h"
#include "writer.h"
#include "writer_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ascii_header_text[] =
    "This file was written by the hprof agent. Its records are:\n"
    "\n"
    "THREAD START, THREAD END\n"
    "        a Java thread started or ended; \"id\" is the thread's number.\n"
    "TRACE   a stack trace, top frame first. Other records name traces by number:\n"
    "        where objects were allocated, where roots were found, what ran.\n"
    "SITES   allocation sites (class and trace) ranked by live bytes (heap=sites).\n"
    "CPU SAMPLES\n"
    "        traces ranked by how often a thread was found running them\n"
    "        (cpu=samples).\n"
    "CPU TIME\n"
    "        traces ranked by the time spent in them, with exact call counts\n"
    "        (cpu=times); CPU TIME BY METHOD is the same per method (cpu=old).\n"
    "MONITOR TIME, MONITOR DUMP, WAIT, WAITED\n"
    "        contended monitors ranked by the time threads waited to enter them,\n"
    "        the state of threads and monitors, Object.wait calls (monitor=y).\n"
    "HEAP DUMP\n"
    "        every live object: roots (ROOT), classes (CLS), objects (OBJ) and\n"
    "        arrays (ARR) with the references they hold (heap=dump).\n"
    "\n"
    "Thread numbers start at 200001, trace numbers at 300000 (TRACE 300000 is\n"
    "the empty trace: no stack known). Object identifiers are hexadecimal.\n"
    "\n"
    "--------\n"
    "\n";

static unsigned long long thread_no(uint32_t serial)
{
    return (unsigned long long)HPROF_ASCII_THREAD_BASE + serial;
}

static unsigned long long trace_no(uint32_t serial)
{
    return (unsigned long long)HPROF_ASCII_TRACE_BASE + (serial ? serial : HPROF_TRACE_SERIAL_NONE);
}

static const char *str_or(const char *s, const char *fallback)
{
    return s ? s : fallback;
}

static double percent(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static const char *now_date(struct hprof_writer *w, char *buf)
{
    return writer_common_format_date(w->clock_us(), buf);
}

#define OUT(w, ...) sink_printf((w)->sink, __VA_ARGS__)

/* The writer. A heap dump begun without its totals is held back (ascii_dump_spool.h): while
 * it is, w->sink is the spool's file, so records are written there unchanged and
 * writer_common_failed() sees the spool fail (the heap walk stops); out is the real output. */
struct ascii_writer {
    struct hprof_writer w;
    struct hprof_sink *out;         /* the output while a dump is held back */
    struct ascii_dump_spool *spool; /* the held-back dump, or NULL */
    bool dropping;                  /* a dump that could not be held back: not written */
};

static struct ascii_writer *aw(struct hprof_writer *w)
{
    return (struct ascii_writer *)w;
}

/* ---- header, threads, traces --------------------------------------------------------- */

static void ascii_begin(struct hprof_writer *w)
{
    char date[WRITER_DATE_LEN];
    w->start_us = w->clock_us();
    OUT(w, "JAVA PROFILE 1.0.1, created %s\n\n", writer_common_format_date(w->start_us, date));
    sink_write(w->sink, ascii_header_text, sizeof ascii_header_text - 1);
}

static void ascii_string(struct hprof_writer *w, hprof_id id, const char *utf8, size_t len)
{
    (void)w;
    (void)id;
    (void)utf8;
    (void)len;
}

static void ascii_load_class(struct hprof_writer *w, uint32_t class_serial, hprof_id class_id,
                             uint32_t trace_serial, hprof_id name_id, const char *name)
{
    (void)w;
    (void)class_serial;
    (void)class_id;
    (void)trace_serial;
    (void)name_id;
    (void)name;
}

static void ascii_unload_class(struct hprof_writer *w, uint32_t class_serial)
{
    (void)w;
    (void)class_serial;
}

static void ascii_frame(struct hprof_writer *w, const struct hprof_frame *f)
{
    (void)w;
    (void)f;
}

static void ascii_trace(struct hprof_writer *w, uint32_t trace_serial, uint32_t thread_serial,
                        size_t nframes, const struct hprof_frame *frames)
{
    if (thread_serial)
        OUT(w, "TRACE %llu: (thread=%llu)\n", trace_no(trace_serial), thread_no(thread_serial));
    else
        OUT(w, "TRACE %llu:\n", trace_no(trace_serial));
    if (nframes == 0) {
        OUT(w, "\t<empty>\n");
        return;
    }
    for (size_t i = 0; i < nframes; i++) {
        const struct hprof_frame *f = &frames[i];
        const char *cls = str_or(f->class_name, "<Unknown Class>");
        const char *m = str_or(f->method_name, "<Unknown Method>");
        if (f->line == HPROF_LINE_NATIVE)
            OUT(w, "\t%s.%s(Native Method)\n", cls, m);
        else if (f->line > 0)
            OUT(w, "\t%s.%s(%s:%d)\n", cls, m, str_or(f->source_name, "<Unknown Source>"),
                (int)f->line);
        else
            OUT(w, "\t%s.%s(%s:Unknown line)\n", cls, m,
                str_or(f->source_name, "<Unknown Source>"));
    }
}

static void ascii_thread_start(struct hprof_writer *w, const struct hprof_thread_info *t)
{
    OUT(w, "THREAD START (obj=%" PRIx64 ", id = %llu, name=\"%s\", group=\"%s\")\n", t->thread_obj,
        thread_no(t->thread_serial), str_or(t->name, ""), str_or(t->group, ""));
}

static void ascii_thread_end(struct hprof_writer *w, uint32_t thread_serial)
{
    OUT(w, "THREAD END (id = %llu)\n", thread_no(thread_serial));
}

static void ascii_control_settings(struct hprof_writer *w, bool alloc_traces, bool cpu_sampling,
                                   uint16_t depth)
{
    (void)w;
    (void)alloc_traces;
    (void)cpu_sampling;
    (void)depth;
}

/* ---- sites, summaries, costs --------------------------------------------------------- */

static void ascii_sites(struct hprof_writer *w, const struct hprof_sites_report *r)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "SITES BEGIN (ordered by %s) %s\n",
        (r->flags & HPROF_SITES_BY_ALLOC) ? "allocated bytes" : "live bytes", now_date(w, date));
    OUT(w, "          percent          live          alloc'ed  stack class\n"
           " rank   self  accum     bytes objs     bytes  objs trace name\n");
    uint64_t accum = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct hprof_site_row *s = &r->rows[i];
        accum += s->live_bytes;
        OUT(w,
            "%5zu %5.2f%% %5.2f%% %9" PRIu64 " %4" PRIu64 " %9" PRIu64 " %5" PRIu64 " %5llu %s\n",
            i + 1, percent(s->live_bytes, r->total_live_bytes), percent(accum, r->total_live_bytes),
            s->live_bytes, s->live_objs, s->alloc_bytes, s->alloc_objs, trace_no(s->trace_serial),
            str_or(s->class_name, "<Unknown Class>"));
    }
    OUT(w, "SITES END\n");
}

static void ascii_heap_summary(struct hprof_writer *w, const struct hprof_heap_summary *s)
{
    (void)w;
    (void)s;
}

/* The ranked table shared by CPU SAMPLES, CPU TIME and MONITOR TIME. */
static void cost_rows(struct hprof_writer *w, const struct hprof_cost_report *r, const char *suffix)
{
    uint64_t accum = 0, of = r->cost_total ? r->cost_total : r->total;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct hprof_cost_row *c = &r->rows[i];
        accum += c->cost;
        OUT(w, "%4zu %5.2f%% %5.2f%% %7" PRIu64 " %5llu %s%s\n", i + 1, percent(c->cost, of),
            percent(accum, of), c->count, trace_no(c->trace_serial),
            str_or(c->method, "<Unknown Method>"), suffix);
    }
}

static void ascii_cpu_samples(struct hprof_writer *w, const struct hprof_cost_report *r)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "CPU SAMPLES BEGIN (total = %" PRIu64 ") %s\n", r->total, now_date(w, date));
    OUT(w, "rank   self  accum   count trace method\n");
    cost_rows(w, r, "");
    OUT(w, "CPU SAMPLES END\n");
}

static void ascii_cpu_times(struct hprof_writer *w, const struct hprof_cost_report *r)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "CPU TIME (ms) BEGIN (total = %" PRIu64 ") %s\n", r->total, now_date(w, date));
    OUT(w, "rank   self  accum   count trace method\n");
    cost_rows(w, r, "");
    OUT(w, "CPU TIME (ms) END\n");
}

/* cpu=old: per method, with its self and total (self + callees) time. A keyword of its own
 * so that scripts reading CPU TIME (by trace) are not misled by different columns. */
static void ascii_cpu_old(struct hprof_writer *w, const struct hprof_method_time_report *r)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "CPU TIME BY METHOD (ms) BEGIN (total = %" PRIu64 ") %s\n", r->total_ms,
        now_date(w, date));
    OUT(w, "rank   self  accum   count  self_ms total_ms method signature\n");
    uint64_t accum = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct hprof_method_time_row *m = &r->rows[i];
        accum += m->self_ms;
        OUT(w, "%4zu %5.2f%% %5.2f%% %7" PRIu64 " %8" PRIu64 " %8" PRIu64 " %s %s\n", i + 1,
            percent(m->self_ms, r->total_ms), percent(accum, r->total_ms), m->count, m->self_ms,
            m->total_ms, str_or(m->method, "<Unknown Method>"), str_or(m->sig, "()"));
    }
    OUT(w, "CPU TIME BY METHOD (ms) END\n");
}

/* ---- monitors ------------------------------------------------------------------------ */

static void ascii_monitor_time(struct hprof_writer *w, const struct hprof_cost_report *r)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "MONITOR TIME BEGIN (total = %" PRIu64 " ms) %s\n", r->total, now_date(w, date));
    OUT(w, "rank   self  accum   count trace monitor\n");
    cost_rows(w, r, " (Java)");
    OUT(w, "MONITOR TIME END\n");
}

static void ascii_monitor_wait(struct hprof_writer *w, const char *class_sig, int64_t timeout_ms,
                               uint32_t thread_serial)
{
    OUT(w, "WAIT: MONITOR %s, timeout=%" PRId64 ", thread %llu\n", str_or(class_sig, "<Unknown>"),
        timeout_ms, thread_no(thread_serial));
}

static void ascii_monitor_waited(struct hprof_writer *w, const char *class_sig, int64_t waited_ms,
                                 uint32_t thread_serial)
{
    OUT(w, "WAITED: MONITOR %s, time_waited=%" PRId64 ", thread %llu\n",
        str_or(class_sig, "<Unknown>"), waited_ms, thread_no(thread_serial));
}

/* "R", "CW", "MW", "SL", "ZO" (or "UN" when no state bit is set), then ",S" when suspended
 * and ",I" when interrupted: "CW,S,I". One state: the first set of ZO, MW, CW, SL, R. */
static void status_letters(unsigned status, char *buf)
{
    const char *base = "UN";
    if (status & HPROF_TS_ZOMBIE)
        base = "ZO";
    else if (status & HPROF_TS_MONITOR_WAIT)
        base = "MW";
    else if (status & HPROF_TS_COND_WAIT)
        base = "CW";
    else if (status & HPROF_TS_SLEEPING)
        base = "SL";
    else if (status & HPROF_TS_RUNNABLE)
        base = "R";
    strcpy(buf, base);
    if (status & HPROF_TS_SUSPENDED)
        strcat(buf, ",S");
    if (status & HPROF_TS_INTERRUPTED)
        strcat(buf, ",I");
}

static void thread_list(struct hprof_writer *w, const char *label, size_t n, const uint32_t *t)
{
    OUT(w, "\t%s:", label);
    for (size_t i = 0; i < n; i++)
        OUT(w, "%s thread %llu", i ? "," : "", thread_no(t[i]));
    OUT(w, "\n");
}

static void ascii_monitor_dump(struct hprof_writer *w, const struct hprof_monitor_dump *d)
{
    OUT(w, "MONITOR DUMP BEGIN\n");
    for (size_t i = 0; i < d->nthreads; i++) {
        const struct hprof_monitor_thread *t = &d->threads[i];
        char st[16];
        status_letters(t->status, st);
        OUT(w, "    THREAD %llu, trace %llu, status: %s\n", thread_no(t->thread_serial),
            trace_no(t->trace_serial), st);
    }
    for (size_t i = 0; i < d->nmonitors; i++) {
        const struct hprof_monitor_info *m = &d->monitors[i];
        const char *sig = str_or(m->class_sig, "<Unknown>");
        if (m->owner_serial) {
            OUT(w, "    MONITOR %s\n", sig);
            OUT(w, "\towner: thread %llu, entry count: %u\n", thread_no(m->owner_serial),
                m->entry_count);
        } else {
            OUT(w, "    MONITOR %s unowned\n", sig);
        }
        thread_list(w, "waiting to enter", m->nwaiters, m->waiters);
        thread_list(w, "waiting to be notified", m->nnotify, m->notify);
    }
    OUT(w, "MONITOR DUMP END\n");
}

/* ---- heap dump ----------------------------------------------------------------------- */

static void heap_dump_header(struct hprof_writer *w, const struct hprof_heap_totals *t)
{
    char date[WRITER_DATE_LEN];
    OUT(w, "HEAP DUMP BEGIN (%" PRIu64 " objects, %" PRIu64 " bytes) ", t->objects, t->bytes);
    if (t->sites)
        OUT(w, "(%" PRIu64 " with an allocation site, %" PRIu64 " without) ", t->with_site,
            t->without_site);
    OUT(w, "%s\n", now_date(w, date));
}

static void ascii_heap_dump_begin(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    struct ascii_writer *a = aw(w);
    if (a->spool || a->dropping)
        return; /* one dump at a time */
    if (totals) {
        heap_dump_header(w, totals);
        return;
    }
    struct hprof_error e = ascii_dump_spool_open(&a->spool);
    if (hprof_failed(&e)) {
        fprintf(stderr,
                "HPROF ERROR: heap dump not written: it cannot be held back until its "
                "totals are known: %s\n",
                e.text);
        a->dropping = true;
        return;
    }
    a->out = w->sink;
    w->sink = ascii_dump_spool_records(a->spool);
}

/* Dump records while a dump could not be held back go nowhere. */
static bool dropped(struct hprof_writer *w)
{
    return aw(w)->dropping;
}

static void ascii_root(struct hprof_writer *w, const struct hprof_root *r)
{
    if (dropped(w))
        return;
    uint64_t id = r->object;
    switch (r->kind) {
    case HPROF_ROOT_THREAD_OBJECT:
        OUT(w, "ROOT %" PRIx64 " (kind=<thread>, id=%llu, trace=%llu)\n", id,
            thread_no(r->thread_serial), trace_no(r->trace_serial));
        break;
    case HPROF_ROOT_THREAD_BLOCK:
        OUT(w, "ROOT %" PRIx64 " (kind=<thread block>, thread=%llu)\n", id,
            thread_no(r->thread_serial));
        break;
    case HPROF_ROOT_JAVA_FRAME:
        OUT(w, "ROOT %" PRIx64 " (kind=<Java stack>, thread=%llu, frame=%d)\n", id,
            thread_no(r->thread_serial), (int)r->frame_depth);
        break;
    case HPROF_ROOT_JNI_LOCAL:
        OUT(w, "ROOT %" PRIx64 " (kind=<JNI local ref>, thread=%llu, frame=%d)\n", id,
            thread_no(r->thread_serial), (int)r->frame_depth);
        break;
    case HPROF_ROOT_JNI_GLOBAL:
        OUT(w, "ROOT %" PRIx64 " (kind=<JNI global ref>, id=%" PRIx64 ", trace=%llu)\n", id,
            r->jni_ref, trace_no(r->trace_serial));
        break;
    case HPROF_ROOT_STICKY_CLASS:
        OUT(w, "ROOT %" PRIx64 " (kind=<system class>, name=%s)\n", id,
            str_or(r->class_name, "<Unknown Class>"));
        break;
    case HPROF_ROOT_MONITOR_USED:
        OUT(w, "ROOT %" PRIx64 " (kind=<busy monitor>)\n", id);
        break;
    case HPROF_ROOT_NATIVE_STACK:
        OUT(w, "ROOT %" PRIx64 " (kind=<native stack>, thread=%llu)\n", id,
            thread_no(r->thread_serial));
        break;
    case HPROF_ROOT_UNKNOWN:
    default:
        OUT(w, "ROOT %" PRIx64 " (kind=<unknown>)\n", id);
        break;
    }
}

static void class_dump_text(struct hprof_writer *w, const struct hprof_class_dump *c)
{
    OUT(w, "CLS %" PRIx64 " (name=%s, trace=%llu)\n", c->class_id,
        str_or(c->name, "<Unknown Class>"), trace_no(c->trace_serial));
    if (c->super_id)
        OUT(w, "\tsuper\t\t%" PRIx64 "\n", c->super_id);
    if (c->loader_id)
        OUT(w, "\tloader\t\t%" PRIx64 "\n", c->loader_id);
    if (c->signers_id)
        OUT(w, "\tsigners\t\t%" PRIx64 "\n", c->signers_id);
    if (c->domain_id)
        OUT(w, "\tdomain\t\t%" PRIx64 "\n", c->domain_id);
    for (size_t i = 0; i < c->nstatics; i++) {
        const struct hprof_static_field *s = &c->statics[i];
        if (s->field.type == HPROF_TYPE_OBJECT && s->value.obj)
            OUT(w, "\tstatic %s\t%" PRIx64 "\n", str_or(s->field.name, "?"), s->value.obj);
    }
    for (size_t i = 0; i < c->ncp; i++) {
        const struct hprof_cp_entry *e = &c->cp[i];
        if (e->type == HPROF_TYPE_OBJECT && e->value.obj)
            OUT(w, "\tconstant pool entry %u\t%" PRIx64 "\n", (unsigned)e->index, e->value.obj);
    }
}

/* Held back, CLASS DUMPs go to the spool's class text, written before the records. */
static void ascii_class_dump(struct hprof_writer *w, const struct hprof_class_dump *c)
{
    struct ascii_writer *a = aw(w);
    if (dropped(w))
        return;
    if (!a->spool) {
        class_dump_text(w, c);
        return;
    }
    struct hprof_sink *records = w->sink;
    w->sink = ascii_dump_spool_classes(a->spool);
    class_dump_text(w, c);
    w->sink = records;
}

static void ascii_instance_dump(struct hprof_writer *w, const struct hprof_instance_dump *o)
{
    if (dropped(w))
        return;
    OUT(w, "OBJ %" PRIx64 " (sz=%u, trace=%llu, class=%s@%" PRIx64 ")\n", o->object_id, o->size,
        trace_no(o->trace_serial), str_or(o->class_name, "<Unknown Class>"), o->class_id);
    for (size_t i = 0; i < o->nvalues; i++) {
        if (o->fields[i].type != HPROF_TYPE_OBJECT || !o->values[i].obj)
            continue;
        const char *name = str_or(o->fields[i].name, "?");
        /* Values line up at the second tab stop: one tab after names of 8 or more. */
        OUT(w, "\t%s\t%s%" PRIx64 "\n", name, strlen(name) < 8 ? "\t" : "", o->values[i].obj);
    }
}

static void ascii_obj_array_dump(struct hprof_writer *w, const struct hprof_obj_array_dump *a)
{
    if (dropped(w))
        return;
    OUT(w, "ARR %" PRIx64 " (sz=%u, trace=%llu, nelems=%u, elem type=%s@%" PRIx64 ")\n",
        a->array_id, a->size, trace_no(a->trace_serial), a->nelems,
        str_or(a->class_name, "<Unknown Class>"), a->class_id);
    for (uint32_t i = 0; i < a->nelems; i++)
        if (a->elems[i])
            OUT(w, "\t[%u]\t\t%" PRIx64 "\n", i, a->elems[i]);
}

static void ascii_prim_array_dump(struct hprof_writer *w, const struct hprof_prim_array_dump *a)
{
    if (dropped(w))
        return;
    OUT(w, "ARR %" PRIx64 " (sz=%u, trace=%llu, nelems=%u, elem type=%s[])\n", a->array_id, a->size,
        trace_no(a->trace_serial), a->nelems, str_or(writer_common_type_name(a->elem_type), "?"));
}

/* Ends a held-back dump: totals NULL drops it (abandoned), else the header with the totals,
 * the classes, the records, the end. */
static void release_held_dump(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    struct ascii_writer *a = aw(w);
    w->sink = a->out;
    a->out = NULL;
    if (!totals) {
        /* abandoned by the caller, who says why */
    } else if (ascii_dump_spool_failed(a->spool)) {
        fprintf(stderr, "HPROF ERROR: heap dump not written: writing it to its temporary file "
                        "failed (disk full?)\n");
    } else {
        heap_dump_header(w, totals);
        struct hprof_error e = ascii_dump_spool_copy(a->spool, w->sink);
        if (hprof_failed(&e))
            fprintf(stderr, "HPROF ERROR: the heap dump is incomplete: %s\n", e.text);
        OUT(w, "HEAP DUMP END\n");
    }
    ascii_dump_spool_close(a->spool);
    a->spool = NULL;
}

static void ascii_heap_dump_end(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    struct ascii_writer *a = aw(w);
    if (a->dropping)
        a->dropping = false;
    else if (a->spool)
        release_held_dump(w, totals);
    else
        OUT(w, "HEAP DUMP END\n");
}

static void ascii_flush(struct hprof_writer *w)
{
    sink_flush(w->sink);
}

static void ascii_close(struct hprof_writer *w)
{
    if (!w)
        return;
    if (aw(w)->spool)
        release_held_dump(w, NULL); /* a dump without its totals is not written */
    sink_close(w->sink);
    free(aw(w));
}

static const struct hprof_writer_ops ascii_ops = {
    .name = "ascii",
    .begin = ascii_begin,
    .string = ascii_string,
    .load_class = ascii_load_class,
    .unload_class = ascii_unload_class,
    .frame = ascii_frame,
    .trace = ascii_trace,
    .thread_start = ascii_thread_start,
    .thread_end = ascii_thread_end,
    .control_settings = ascii_control_settings,
    .sites = ascii_sites,
    .heap_summary = ascii_heap_summary,
    .cpu_samples = ascii_cpu_samples,
    .cpu_times = ascii_cpu_times,
    .cpu_old = ascii_cpu_old,
    .monitor_time = ascii_monitor_time,
    .monitor_wait = ascii_monitor_wait,
    .monitor_waited = ascii_monitor_waited,
    .monitor_dump = ascii_monitor_dump,
    .heap_dump_begin = ascii_heap_dump_begin,
    .root = ascii_root,
    .class_dump = ascii_class_dump,
    .instance_dump = ascii_instance_dump,
    .obj_array_dump = ascii_obj_array_dump,
    .prim_array_dump = ascii_prim_array_dump,
    .heap_dump_end = ascii_heap_dump_end,
    .flush = ascii_flush,
    .close = ascii_close,
};

struct hprof_writer *ascii_writer_new(struct hprof_sink *sink)
{
    struct ascii_writer *a = calloc(1, sizeof *a);
    if (!a) {
        sink_close(sink);
        return NULL;
    }
    writer_common_init(&a->w, &ascii_ops, sink);
    return &a->w;
}

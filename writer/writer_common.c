/* Parts shared by every writer: basic type tables, the clock, dates, the operations a format
 * leaves out. */
#include "writer.h"
#include "sink.h"
#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>

int writer_common_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

unsigned writer_common_type_size(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_OBJECT:
        return 8;
    case HPROF_TYPE_BOOLEAN:
    case HPROF_TYPE_BYTE:
        return 1;
    case HPROF_TYPE_CHAR:
    case HPROF_TYPE_SHORT:
        return 2;
    case HPROF_TYPE_FLOAT:
    case HPROF_TYPE_INT:
        return 4;
    case HPROF_TYPE_DOUBLE:
    case HPROF_TYPE_LONG:
        return 8;
    }
    return 0;
}

const char *writer_common_type_name(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_OBJECT:
        return NULL;
    case HPROF_TYPE_BOOLEAN:
        return "boolean";
    case HPROF_TYPE_CHAR:
        return "char";
    case HPROF_TYPE_FLOAT:
        return "float";
    case HPROF_TYPE_DOUBLE:
        return "double";
    case HPROF_TYPE_BYTE:
        return "byte";
    case HPROF_TYPE_SHORT:
        return "short";
    case HPROF_TYPE_INT:
        return "int";
    case HPROF_TYPE_LONG:
        return "long";
    }
    return NULL;
}

uint64_t writer_common_wall_clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

char *writer_common_format_date(uint64_t epoch_us, char *buf)
{
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(epoch_us / 1000000u);
    struct tm tm;
    if (!localtime_r(&t, &tm) || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 ||
        tm.tm_mon > 11) {
        snprintf(buf, WRITER_DATE_LEN, "%s", "???");
        return buf;
    }
    snprintf(buf, WRITER_DATE_LEN, "%s %s %2d %02d:%02d:%02d %d", days[tm.tm_wday],
             months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
    return buf;
}

/* ---- the operations a format leaves out: nothing is written ----------------------------- */

static void no_begin(struct hprof_writer *w)
{
    (void)w;
}

static void no_string(struct hprof_writer *w, hprof_id id, const char *utf8, size_t len)
{
    (void)w, (void)id, (void)utf8, (void)len;
}

static void no_load_class(struct hprof_writer *w, uint32_t class_serial, hprof_id class_id,
                          uint32_t trace_serial, hprof_id name_id, const char *name)
{
    (void)w, (void)class_serial, (void)class_id, (void)trace_serial, (void)name_id, (void)name;
}

static void no_serial(struct hprof_writer *w, uint32_t serial)
{
    (void)w, (void)serial;
}

static void no_frame(struct hprof_writer *w, const struct hprof_frame *f)
{
    (void)w, (void)f;
}

static void no_trace(struct hprof_writer *w, uint32_t trace_serial, uint32_t thread_serial,
                     size_t nframes, const struct hprof_frame *frames)
{
    (void)w, (void)trace_serial, (void)thread_serial, (void)nframes, (void)frames;
}

static void no_thread_start(struct hprof_writer *w, const struct hprof_thread_info *t)
{
    (void)w, (void)t;
}

static void no_control_settings(struct hprof_writer *w, bool alloc_traces, bool cpu_sampling,
                                uint16_t depth)
{
    (void)w, (void)alloc_traces, (void)cpu_sampling, (void)depth;
}

static void no_sites(struct hprof_writer *w, const struct hprof_sites_report *r)
{
    (void)w, (void)r;
}

static void no_heap_summary(struct hprof_writer *w, const struct hprof_heap_summary *s)
{
    (void)w, (void)s;
}

static void no_cost_report(struct hprof_writer *w, const struct hprof_cost_report *r)
{
    (void)w, (void)r;
}

static void no_cpu_old(struct hprof_writer *w, const struct hprof_method_time_report *r)
{
    (void)w, (void)r;
}

static void no_monitor_wait(struct hprof_writer *w, const char *class_sig, int64_t ms,
                            uint32_t thread_serial)
{
    (void)w, (void)class_sig, (void)ms, (void)thread_serial;
}

static void no_monitor_dump(struct hprof_writer *w, const struct hprof_monitor_dump *d)
{
    (void)w, (void)d;
}

static void no_heap_dump_totals(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)w, (void)totals;
}

static void no_root(struct hprof_writer *w, const struct hprof_root *r)
{
    (void)w, (void)r;
}

static void no_class_dump(struct hprof_writer *w, const struct hprof_class_dump *c)
{
    (void)w, (void)c;
}

static void no_instance_dump(struct hprof_writer *w, const struct hprof_instance_dump *o)
{
    (void)w, (void)o;
}

static void no_obj_array_dump(struct hprof_writer *w, const struct hprof_obj_array_dump *a)
{
    (void)w, (void)a;
}

static void no_prim_array_dump(struct hprof_writer *w, const struct hprof_prim_array_dump *a)
{
    (void)w, (void)a;
}

static void flush_sink(struct hprof_writer *w)
{
    sink_flush(w->sink);
}

#define OR(op, fallback) (o->op ? o->op : (fallback))

void writer_common_init(struct hprof_writer *w, const struct hprof_writer_ops *ops,
                        struct hprof_sink *sink)
{
    const struct hprof_writer_ops *o = ops;
    w->completed_ops = (struct hprof_writer_ops){
        .name = o->name,
        .begin = OR(begin, no_begin),
        .string = OR(string, no_string),
        .load_class = OR(load_class, no_load_class),
        .unload_class = OR(unload_class, no_serial),
        .frame = OR(frame, no_frame),
        .trace = OR(trace, no_trace),
        .thread_start = OR(thread_start, no_thread_start),
        .thread_end = OR(thread_end, no_serial),
        .control_settings = OR(control_settings, no_control_settings),
        .sites = OR(sites, no_sites),
        .heap_summary = OR(heap_summary, no_heap_summary),
        .cpu_samples = OR(cpu_samples, no_cost_report),
        .cpu_times = OR(cpu_times, no_cost_report),
        .wall_samples = OR(wall_samples, no_cost_report),
        .cpu_old = OR(cpu_old, no_cpu_old),
        .monitor_time = OR(monitor_time, no_cost_report),
        .monitor_wait = OR(monitor_wait, no_monitor_wait),
        .monitor_waited = OR(monitor_waited, no_monitor_wait),
        .monitor_dump = OR(monitor_dump, no_monitor_dump),
        .heap_dump_begin = OR(heap_dump_begin, no_heap_dump_totals),
        .root = OR(root, no_root),
        .class_dump = OR(class_dump, no_class_dump),
        .instance_dump = OR(instance_dump, no_instance_dump),
        .obj_array_dump = OR(obj_array_dump, no_obj_array_dump),
        .prim_array_dump = OR(prim_array_dump, no_prim_array_dump),
        .heap_dump_end = OR(heap_dump_end, no_heap_dump_totals),
        .flush = OR(flush, flush_sink),
        .close = o->close,
    };
    w->ops = &w->completed_ops;
    w->sink = sink;
    w->clock_us = writer_common_wall_clock_us;
    w->start_us = writer_common_wall_clock_us();
}

bool writer_common_failed(const struct hprof_writer *w)
{
    return sink_failed(w->sink);
}

void writer_common_set_bulk(struct hprof_writer *w, bool on)
{
    sink_set_bulk(w->sink, on);
}

int writer_common_temp_file(const char *dir, const char *prefix)
{
    if (!dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    /* Filesystems without O_TMPFILE: a named file, unlinked at once. */
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s-XXXXXX", dir, prefix) >= (int)sizeof path)
        return -ENAMETOOLONG;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    unlink(path);
    return fd;
}

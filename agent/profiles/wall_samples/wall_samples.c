/* wall=y, the profile: options, events, dump, CONTROL (wall_samples.h). */
#include "wall_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agct_stack.h"
#include "clock.h"
#include "emit.h"
#include "frame_table.h"
#include "log.h"
#include "ranking.h"
#include "trace_table.h"
#include "wall_sampler.h"
#include "wall_signals.h"
#include "wall_threads.h"
#include "wall_vthreads.h"

/* Longest "class.method[state]" label kept for a row; longer ones are cut. */

static bool binary_output;

static bool wall_samples_enabled(const struct hprof_options *opts)
{
    return opts->wall;
}

static void wall_samples_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    (void)opts;
    caps->can_get_thread_cpu_time = 1; /* whether a thread ran since its last visit */
}

static void wall_samples_set_callbacks(jvmtiEventCallbacks *cb)
{
    agct_stack_set_callbacks(cb); /* ClassLoad: AGCT answers only while it is on */
}

static struct hprof_error wall_samples_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                             bool live)
{
    (void)live;
    binary_output = opts->format == HPROF_FORMAT_BINARY;
    if (!wall_sampler_init(opts->wall_interval_ms, opts->wall_states, opts->thread) ||
        !wall_threads_init(opts->wall_names))
        return hprof_errorf("wall=y: out of memory at start-up");
    const char *why = wall_signals_start();
    if (!why && agct_stack_enable_events(jvmti) != 0)
        why = "ClassLoad events cannot be enabled"; /* the handlers' walks would all fail */
    if (why)
        log_warning("wall=y: %s; the stacks of threads in Java code are taken by GetStackTrace "
                    "(a handshake: more costly)",
                    why);
    struct hprof_error e = wall_vthreads_start(jvmti); /* JDK 21+ */
    if (hprof_failed(&e))
        log_warning("wall=y: %s; virtual threads will not be sampled", e.text);
    return hprof_ok();
}

static void wall_samples_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    wall_sampler_prepare();
    uint64_t now;
    int64_t tick = wall_sampler_tick_now(&now);
    wall_vthreads_vm_init(jni);
    wall_threads_add_live(jvmti, jni, thread, tick, now);
    if (!wall_sampler_start(jvmti, jni))
        log_error("wall=y: cannot start the sampler thread");
}

static void wall_samples_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    uint64_t now;
    int64_t tick = wall_sampler_tick_now(&now);
    /* ThreadStart runs on the new thread: its own CPU clock is the cheap one. */
    wall_threads_add(jvmti, jni, thread, tick, now, clock_thread_cpu_ns(), true);
}

static void wall_samples_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    wall_sampler_thread_ended(jvmti, jni, thread);
}

/* The row's label: the first real frame's "class.method" and the state in brackets, no space
 * (a row's method is one word: "java.net.SocketInputStream.read[native]"). */
static void row_label(uint32_t serial, char *buf, size_t len)
{
    const struct trace_info *ti = trace_table_get(serial);
    char state[64];
    trace_table_top_label(serial, state, sizeof state);
    const char *dot = strchr(state, '.');
    const char *name = dot ? dot + 1 : state;
    if (ti && ti->nframes > 1) {
        frame_table_method_label(ti->frames[1], buf, len);
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "[%s]", name);
    } else {
        snprintf(buf, len, "[%s]", name);
    }
}

static void write_wall_section(struct hprof_writer *w, void *ctx)
{
    w->ops->wall_samples(w, ctx);
}

static void wall_samples_dump(const struct dump_request *req)
{
    if (!(req->sections & DUMP_CPU))
        return;
    struct hprof_cost_row *rows = NULL;
    uint64_t total = 0;
    size_t n = wall_sampler_snapshot(&rows, &total);
    if (binary_output && total == 0) {
        free(rows); /* an empty CPU SAMPLES record would read as cpu=samples' (formats.md) */
        return;
    }
    size_t keep = ranking_sort_and_cut(rows, n, total, req->cutoff);
    char *labels = ranking_label_rows(rows, keep, row_label);
    struct emit_refs refs = {keep, sizeof *rows, keep ? &rows->trace_serial : NULL, NULL, NULL};
    struct hprof_cost_report report = {.total = total, .nrows = keep, .rows = rows};
    emit_section(&refs, write_wall_section, &report);
    free(labels);
    free(rows);
}

static void wall_samples_control(const struct control_request *req)
{
    switch (req->kind) {
    case CONTROL_CPU_SAMPLING_ON:
    case CONTROL_CPU_SAMPLING_OFF: {
        bool on = req->kind == CONTROL_CPU_SAMPLING_ON;
        if (!req->thread) {
            wall_sampler_set_on(on);
            wall_threads_set_on(NULL, on);
        } else if (req->jni) {
            struct thread_info *info = thread_table_of(req->jvmti, req->jni, req->thread);
            if (info)
                wall_threads_set_on(info, on);
        }
        break;
    }
    case CONTROL_CLEAR_CPU_SAMPLES:
        wall_sampler_clear();
        break;
    case CONTROL_ALLOC_TRACES_ON:
    case CONTROL_ALLOC_TRACES_OFF:
    case CONTROL_SET_DEPTH:
        break; /* the sampler reads the depth every tick */
    }
}

static void wall_samples_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    wall_sampler_stop(jvmti, jni);
    struct wall_sampler_stats s;
    wall_sampler_get_stats(&s);
    double secs = (double)s.running_ns / 1e9;
    log_info("wall=y: %llu samples (%llu left out by wall_states) in %llu ticks over %.2f s "
             "(%llu skipped); %llu thread visits, %llu stack walks (%.1f%% reused); %.1f us of "
             "CPU per tick on average, %.1f us of wall time at most",
             (unsigned long long)s.samples, (unsigned long long)s.left_out,
             (unsigned long long)s.ticks, secs, (unsigned long long)s.missed,
             (unsigned long long)s.visits, (unsigned long long)s.walks,
             s.visits ? 100.0 * (double)(s.visits - s.walks) / (double)s.visits : 0.0,
             s.ticks ? (double)s.cpu_ns / (double)s.ticks / 1e3 : 0.0, (double)s.max_tick_ns / 1e3);
    struct wall_signals_stats g;
    wall_signals_get_stats(&g);
    if (wall_signals_active())
        log_info("wall=y: %llu stacks asked by signal: %llu walked by the thread itself (%.1f us "
                 "of its CPU each), %llu not walkable there and %llu unanswered within the wait "
                 "(both then by GetStackTrace)",
                 (unsigned long long)g.sent, (unsigned long long)g.walked,
                 g.walked + g.failed ? (double)g.handler_ns / (double)(g.walked + g.failed) / 1e3
                                     : 0.0,
                 (unsigned long long)g.failed, (unsigned long long)g.timeouts);
}

const struct hprof_profile wall_samples_profile = {
    .name = "wall=y",
    .sections = DUMP_CPU,
    .option_text = "wall=y",
    .enabled = wall_samples_enabled,
    .add_capabilities = wall_samples_add_capabilities,
    .set_callbacks = wall_samples_set_callbacks,
    .start = wall_samples_start,
    .vm_init = wall_samples_vm_init,
    .thread_start = wall_samples_thread_start,
    .thread_end = wall_samples_thread_end,
    .dump = wall_samples_dump,
    .control = wall_samples_control,
    .vm_death = wall_samples_vm_death,
};

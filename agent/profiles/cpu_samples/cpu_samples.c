#include "cpu_samples.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "carriers.h"
#include "sampler_thread.h"
#include "log.h"
#include "emit.h"
#include "output.h"
#include "ranking.h"
#include "trace_table.h"

/* Longest "class.method" label kept for a row; longer ones are cut. */
#define LABEL_LEN 512

/* The alloc-traces bit of CONTROL SETTINGS: heap=sites or heap=dump (as the old agent and the
 * listener's own CONTROL SETTINGS have it), switched by CONTROL commands. */
static _Atomic(bool) alloc_traces;

static bool cpu_samples_enabled(const struct hprof_options *opts)
{
    return opts->cpu == HPROF_CPU_SAMPLES;
}

static void cpu_samples_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    (void)opts;
    caps->can_get_thread_cpu_time = 1; /* other threads' CPU time: busy or waiting in native */
}

static int cpu_samples_start(jvmtiEnv *jvmti, const struct hprof_options *opts, bool live)
{
    (void)live;
    atomic_store(&alloc_traces, opts->heap_sites || opts->heap_dump);
    if (cpu_sampler_init(opts->interval_ms, opts->thread) != 0) {
        log_error("cpu=samples: out of memory at start-up");
        return -1;
    }
    cpu_carriers_watch(jvmti); /* JDK 21+: follow virtual threads on their carriers */
    return 0;
}

static void cpu_samples_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    cpu_sampler_add_live_threads(jvmti, jni);
    cpu_sampler_start(jvmti, jni); /* on failure: logged, and no samples */
}

static void cpu_samples_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    cpu_sampler_thread_started(jvmti, jni, thread);
}

static void cpu_samples_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    cpu_sampler_thread_ended(jvmti, jni, thread);
}

static void cpu_samples_dump(const struct dump_request *req)
{
    if (!(req->sections & DUMP_CPU))
        return;
    struct hprof_cost_row *rows = NULL;
    uint64_t total = 0;
    size_t n = cpu_sampler_snapshot(&rows, &total);
    size_t keep = ranking_sort_and_cut(rows, n, total, req->cutoff);
    char *labels = keep ? malloc(keep * LABEL_LEN) : NULL;
    for (size_t i = 0; i < keep && labels; i++) {
        traces_top_label(rows[i].trace_serial, labels + i * LABEL_LEN, LABEL_LEN);
        rows[i].method = labels + i * LABEL_LEN;
    }
    bool sampling = cpu_sampler_sampling();
    struct emit_refs refs = {keep, sizeof *rows, keep ? &rows->trace_serial : NULL, NULL, NULL};
    struct hprof_writer *w = emit_section(&refs);
    if (w) {
        w->ops->control_settings(w, atomic_load(&alloc_traces), sampling, (uint16_t)traces_depth());
        struct hprof_cost_report report = {.total = total, .nrows = keep, .rows = rows};
        w->ops->cpu_samples(w, &report);
    }
    emit_end();
    free(labels);
    free(rows);
}

static void cpu_samples_control(const struct control_request *req)
{
    switch (req->kind) {
    case CONTROL_CPU_SAMPLING_ON:
    case CONTROL_CPU_SAMPLING_OFF:
        if (req->thread && !req->jni)
            return; /* a thread reference needs the caller's JNI environment */
        cpu_sampler_set_sampling(req->jvmti, req->jni, req->thread,
                                 req->kind == CONTROL_CPU_SAMPLING_ON);
        break;
    case CONTROL_CLEAR_CPU_SAMPLES:
        cpu_sampler_clear();
        break;
    case CONTROL_ALLOC_TRACES_ON:
    case CONTROL_ALLOC_TRACES_OFF:
        atomic_store(&alloc_traces, req->kind == CONTROL_ALLOC_TRACES_ON);
        break;
    case CONTROL_SET_DEPTH:
        break; /* the listener sets it; the sampler reads the depth every round */
    }
}

static void cpu_samples_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    cpu_sampler_stop();
    struct cpu_sampler_stats s;
    cpu_sampler_get_stats(&s);
    double secs = (double)s.running_ns / 1e9;
    log_info("cpu=samples: %llu samples in %llu rounds over %.2f s (%.1f rounds/s, %llu skipped); "
             "%.1f us per round on average (%.1f us of CPU), %.1f us at most",
             (unsigned long long)s.samples, (unsigned long long)s.ticks, secs,
             secs > 0 ? (double)s.ticks / secs : 0.0, (unsigned long long)s.missed,
             s.ticks ? (double)s.busy_ns / (double)s.ticks / 1e3 : 0.0,
             s.ticks ? (double)s.cpu_ns / (double)s.ticks / 1e3 : 0.0, (double)s.max_tick_ns / 1e3);
    if (cpu_carriers_watching())
        log_info("cpu=samples: %llu samples on virtual threads, %llu dropped (the virtual "
                 "thread had unmounted before its stack was taken)",
                 (unsigned long long)s.vthread_samples, (unsigned long long)s.vthread_dropped);
}

const struct hprof_profile cpu_samples_profile = {
    .name = "cpu=samples",
    .enabled = cpu_samples_enabled,
    .add_capabilities = cpu_samples_add_capabilities,
    .start = cpu_samples_start,
    .vm_init = cpu_samples_vm_init,
    .thread_start = cpu_samples_thread_start,
    .thread_end = cpu_samples_thread_end,
    .dump = cpu_samples_dump,
    .control = cpu_samples_control,
    .vm_death = cpu_samples_vm_death,
};

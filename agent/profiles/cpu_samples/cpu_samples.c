#include "cpu_samples.h"

#include <stdlib.h>
#include <string.h>

#include "async_sampler.h"
#include "carriers.h"
#include "cpu_profile.h"
#include "emit.h"
#include "log.h"
#include "process_threads.h"
#include "ranking.h"
#include "sampled_threads.h"
#include "sampler_thread.h"
#include "trace_table.h"

/* Longest "class.method" label kept for a row; longer ones are cut. */

static bool cpu_samples_enabled(const struct hprof_options *opts)
{
    return opts->cpu == HPROF_CPU_SAMPLES;
}

static void cpu_samples_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    caps->can_get_thread_cpu_time = 1; /* other threads' CPU time: busy or waiting in native */
    if (opts->sampler == HPROF_SAMPLER_ASYNC)
        async_sampler_add_capabilities(caps);
}

static void cpu_samples_set_callbacks(jvmtiEventCallbacks *cb)
{
    async_sampler_set_callbacks(cb);
}

static bool vm_threads; /* vmthreads=y: the whole-process engine (process_threads.h) */

static struct hprof_error cpu_samples_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                            bool live)
{
    (void)live;
    sampler_thread_init(opts->interval_ms, opts->thread);
    process_threads_init((int64_t)opts->interval_ms * 1000000, opts->verbose);
    vm_threads = opts->vm_threads;
    if (!sampled_threads_init() || !cpu_profile_init(opts->thread))
        return hprof_errorf("cpu=samples: out of memory at start-up");
    struct hprof_error e = async_sampler_start(jvmti, opts);
    if (hprof_failed(&e)) /* the safepoint sampler's rounds sample every thread */
        log_warning("cpu=samples: %s; using the safepoint sampler (sampler=safepoint)", e.text);
    e = carriers_watch(jvmti); /* JDK 21+: follow virtual threads on their carriers */
    if (hprof_failed(&e))
        log_warning("cpu=samples: %s; virtual threads will not be sampled", e.text);
    return hprof_ok();
}

static void cpu_samples_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    if (async_sampler_active())
        cpu_profile_prepare(jvmti, jni); /* pseudo-frames, virtual-thread boundary */
    async_sampler_vm_init(jvmti, jni);
    sampled_threads_add_live(jvmti, jni);
    sampled_threads_cover_current(jvmti, jni); /* VM init runs on the main thread */
    process_threads_java_current();
    if (vm_threads)
        process_threads_start(jvmti);
    if (!sampler_thread_start(jvmti, jni))
        log_error("cpu=samples: cannot start the sampler thread");
}

static void cpu_samples_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    sampled_threads_started(jvmti, jni, thread);
    process_threads_java_current(); /* ThreadStart runs on the new thread */
}

static void cpu_samples_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jni;
    (void)thread;
    async_sampler_class_prepare(jvmti, klass);
}

static void cpu_samples_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    sampled_threads_ended(jvmti, jni, thread);
}

/* CONTROL SETTINGS (core's record: req->write_settings) then CPU SAMPLES. */
struct cpu_section {
    const struct dump_request *req;
    struct hprof_cost_report report;
};

static void write_cpu_section(struct hprof_writer *w, void *ctx)
{
    struct cpu_section *s = ctx;
    if (s->req->write_settings)
        s->req->write_settings(w);
    w->ops->cpu_samples(w, &s->report);
}

static void cpu_samples_dump(const struct dump_request *req)
{
    if (!(req->sections & DUMP_CPU))
        return;
    cpu_profile_drain(req->jvmti, req->jni); /* the samples still in the ring count too */
    struct hprof_cost_row *rows = NULL;
    uint64_t total = 0;
    size_t n = cpu_profile_snapshot(&rows, &total);
    size_t keep = ranking_sort_and_cut(rows, n, total, req->cutoff);
    char *labels = ranking_label_rows(rows, keep, trace_table_top_label);
    struct emit_refs refs = {keep, sizeof *rows, keep ? &rows->trace_serial : NULL, NULL, NULL};
    struct cpu_section section = {req, {.total = total, .nrows = keep, .rows = rows}};
    emit_section(&refs, write_cpu_section, &section);
    free(labels);
    free(rows);
}

static void cpu_samples_control(const struct control_request *req)
{
    switch (req->kind) {
    case CONTROL_CPU_SAMPLING_ON:
    case CONTROL_CPU_SAMPLING_OFF:
        if (req->thread && !req->jni)
            return;       /* a thread reference needs the caller's JNI environment */
        if (!req->thread) /* before: no credit after OFF returns */
            process_threads_switch_all(req->kind == CONTROL_CPU_SAMPLING_ON);
        sampled_threads_set_sampling(req->jvmti, req->jni, req->thread,
                                     req->kind == CONTROL_CPU_SAMPLING_ON);
        break;
    case CONTROL_CLEAR_CPU_SAMPLES:
        cpu_profile_clear();
        break;
    case CONTROL_ALLOC_TRACES_ON:
    case CONTROL_ALLOC_TRACES_OFF:
    case CONTROL_SET_DEPTH:
        break; /* core's settings; the sampler reads the depth every round */
    }
}

/* A socket command asked for CPU SAMPLES while no CPU profile runs: the section, empty (no rows,
 * total 0), so that a front end waiting for it gets one. */
static void write_empty_cpu(struct hprof_writer *w, void *ctx)
{
    (void)ctx;
    struct hprof_cost_report r;
    memset(&r, 0, sizeof r);
    w->ops->cpu_samples(w, &r);
    w->ops->flush(w);
}

static void cpu_samples_answer_off(const struct dump_request *req)
{
    if (req->sections & DUMP_CPU)
        emit_section(NULL, write_empty_cpu, NULL);
}

static void cpu_samples_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    async_sampler_stop(); /* no signal after this; the exit dump drains what is left */
    sampler_thread_stop();
    process_threads_scan(jvmti, sampled_threads_sampling());
    cpu_profile_drain(jvmti, jni);
    async_sampler_log_stats();
    process_threads_log_stats();
    struct sampler_thread_stats s;
    sampler_thread_get_stats(&s);
    if (async_sampler_active() && s.ticks == 0)
        return; /* every thread had its timer: no rounds to report */
    double secs = (double)s.running_ns / 1e9;
    log_info("cpu=samples: %llu samples in %llu rounds over %.2f s (%.1f rounds/s, %llu skipped); "
             "%.1f us per round on average (%.1f us of CPU), %.1f us at most",
             (unsigned long long)s.round.samples, (unsigned long long)s.ticks, secs,
             secs > 0 ? (double)s.ticks / secs : 0.0, (unsigned long long)s.missed,
             s.ticks ? (double)s.busy_ns / (double)s.ticks / 1e3 : 0.0,
             s.ticks ? (double)s.cpu_ns / (double)s.ticks / 1e3 : 0.0, (double)s.max_tick_ns / 1e3);
    if (carriers_watching())
        log_info("cpu=samples: %llu samples on virtual threads, %llu dropped (the virtual "
                 "thread had unmounted before its stack was taken)",
                 (unsigned long long)s.round.vthread_samples,
                 (unsigned long long)s.round.vthread_dropped);
}

const struct hprof_profile cpu_samples_profile = {
    .name = "cpu=samples",
    .sections = DUMP_CPU,
    .option_text = "cpu=samples",
    .enabled = cpu_samples_enabled,
    .add_capabilities = cpu_samples_add_capabilities,
    .set_callbacks = cpu_samples_set_callbacks,
    .start = cpu_samples_start,
    .vm_init = cpu_samples_vm_init,
    .thread_start = cpu_samples_thread_start,
    .thread_end = cpu_samples_thread_end,
    .class_prepare = cpu_samples_class_prepare,
    .dump = cpu_samples_dump,
    .control = cpu_samples_control,
    .sampling_on = sampled_threads_sampling,
    .answer_off = cpu_samples_answer_off,
    .vm_death = cpu_samples_vm_death,
};

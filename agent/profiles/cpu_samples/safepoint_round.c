/* One round of the safepoint sampler (sampler=safepoint, and threads the async sampler does not
 * cover yet): which listed threads are due samples by their CPU time, their stacks, the counts.
 * Runs on the sampler thread only (sampler_thread.c). */
#include "sampler_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "carriers.h"
#include "cpu_activity.h"
#include "cpu_timers.h"
#include "jvmti_util.h"
#include "sample_counts.h"
#include "thread_table.h"
#include "trace_table.h"

/* Up to this many threads on the CPU, their stacks are taken one by one: each is a handshake
 * with that thread alone. More are taken with one GetThreadListStackTraces call, one
 * safepoint for all (doc/cpu-samples.md has the measurements behind the number). */
#define STACKS_ONE_BY_ONE_MAX 4

/* Arrays of one round, owned by the sampler thread and grown as the thread list grows. */
static struct sampled_thread **cands, **picked;
static jthread *refs;
static size_t round_cap;

static bool round_arrays_fit(size_t n)
{
    if (n <= round_cap)
        return true;
    size_t cap = n + n / 2 + 16;
    struct sampled_thread **c = realloc(cands, cap * sizeof *c);
    if (c)
        cands = c;
    struct sampled_thread **p = realloc(picked, cap * sizeof *p);
    if (p)
        picked = p;
    jthread *r = realloc(refs, cap * sizeof *r);
    if (r)
        refs = r;
    if (!c || !p || !r)
        return false;
    round_cap = cap;
    return true;
}

/* The threads to look at this round: listed, enabled, not the sampler itself. */
static size_t gather(void)
{
    struct thread_info *self = atomic_load(&sampler_self_info);
    pthread_mutex_lock(&sampler_list_lock);
    size_t n = 0;
    if (round_arrays_fit(sampler_list_len)) {
        for (size_t i = 0; i < sampler_list_len; i++) {
            struct sampled_thread *t = sampler_list[i];
            if (t->fresh_start) {
                cpu_credit_reset(&t->credit);
                t->fresh_start = false;
            }
            if (t->enabled && !t->retired && t->info != self && !t->covered)
                cands[n++] = t;
        }
    }
    pthread_mutex_unlock(&sampler_list_lock);
    return n;
}

/* Uniform in [0, 1), for rounding fractions of a sample (xorshift64*; sampler thread only). */
static double uniform(void)
{
    static uint64_t state = UINT64_C(0x9E3779B97F4A7C15);
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (double)((state * UINT64_C(0x2545F4914F6CDD1D)) >> 11) / 9007199254740992.0;
}

/* How many samples a runnable thread is due this round: its CPU time since the last
 * reading, in whole intervals (cpu_activity.h). */
static uint32_t samples_due(jvmtiEnv *jvmti, struct sampled_thread *t)
{
    jlong cpu = 0;
    if ((*jvmti)->GetThreadCpuTime(jvmti, t->ref, &cpu) != JVMTI_ERROR_NONE)
        return 0;
    sampler_stats.cpu_reads++;
    if (t->timer_slot >= 0 && cpu >= YOUNG_CPU_NS) {
        /* Grown up: its timer's signals sample it from now on. */
        pthread_mutex_lock(&sampler_list_lock);
        if (t->timer_slot >= 0 && !t->retired && !t->covered) {
            t->covered = true;
            cpu_timers_set_enabled(t->timer_slot, t->enabled);
        }
        pthread_mutex_unlock(&sampler_list_lock);
    }
    return cpu_credit_update(&t->credit, (int64_t)cpu, sampler_interval_ns, uniform());
}

/* The stack of the virtual thread a carrier ran: its trace serial, or 0 when it is not
 * counted. The virtual thread may have unmounted between the look at the carrier and the
 * stack: parked or ended by then, its samples are dropped, neither counted at the park nor
 * given back to the carrier (which may run another virtual thread next). */
static uint32_t virtual_trace_of(jvmtiEnv *jvmti, struct sampled_thread *t,
                                 const jvmtiStackInfo *si, jint depth)
{
    if (cpu_activity_of_state(si->state) == CPU_IDLE || (si->frame_count == 0 && depth > 0)) {
        sampler_stats.vthread_dropped += t->due;
        return 0;
    }
    uint32_t serial = traces_intern(jvmti, si->frame_buffer, si->frame_count,
                                    t->vthread_info ? t->vthread_info->serial : 0);
    if (serial == HPROF_TRACE_SERIAL_NONE && si->frame_count > 0)
        return 0;
    sampler_stats.vthread_samples += t->due;
    return serial;
}

/* One thread's stack, as taken: its trace serial, or 0 when it is not counted. */
static uint32_t trace_of(jvmtiEnv *jvmti, struct sampled_thread *t, const jvmtiStackInfo *si,
                         jint depth)
{
    if (t->virtual_stack)
        return virtual_trace_of(jvmti, t, si, depth);
    if (cpu_activity_of_state(si->state) == CPU_IDLE) {
        /* Went to sleep, wait or park since its state was read: count its CPU time at a
         * later round rather than at the sleep. */
        cpu_credit_refund(&t->credit, t->due, sampler_interval_ns);
        sampler_stats.refunded += t->due;
        return 0;
    }
    if (si->frame_count == 0 && depth > 0)
        return 0; /* no Java frames: the CPU time was not spent in Java code */
    uint32_t serial = traces_intern(jvmti, si->frame_buffer, si->frame_count,
                                    sampler_per_thread ? t->info->serial : 0);
    if (serial == HPROF_TRACE_SERIAL_NONE && si->frame_count > 0)
        return 0; /* a frame could not be read (its class was unloaded) */
    return serial;
}

/* Sets the trace of picked[0..m). */
static void take_stacks(jvmtiEnv *jvmti, size_t m, jint depth)
{
    for (size_t i = 0; i < m; i++)
        picked[i]->trace = 0;
    if (m <= STACKS_ONE_BY_ONE_MAX) {
        for (size_t i = 0; i < m; i++) {
            jvmtiStackInfo *si = NULL;
            /* JDK 17 answers NONE with no stack info for a thread that ended before the
             * handshake reached it. */
            if ((*jvmti)->GetThreadListStackTraces(jvmti, 1, &refs[i], depth, &si) !=
                    JVMTI_ERROR_NONE ||
                !si)
                continue;
            sampler_stats.stacks++;
            picked[i]->trace = trace_of(jvmti, picked[i], &si[0], depth);
            jvmti_free(jvmti, si);
        }
        return;
    }
    jvmtiStackInfo *si = NULL;
    if ((*jvmti)->GetThreadListStackTraces(jvmti, (jint)m, refs, depth, &si) != JVMTI_ERROR_NONE ||
        !si)
        return;
    sampler_stats.stacks += m;
    for (size_t i = 0; i < m; i++)
        picked[i]->trace = trace_of(jvmti, picked[i], &si[i], depth);
    jvmti_free(jvmti, si);
}

void safepoint_round(jvmtiEnv *jvmti, JNIEnv *jni)
{
    size_t n = gather();
    if (n == 0)
        return;
    /* Stack infos hold local references; this thread never returns to Java, so they would
     * pile up without a frame of their own. */
    if ((*jni)->PushLocalFrame(jni, (jint)(n < 1000 ? n : 1000) + 16) != 0) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        struct sampled_thread *t = cands[i];
        jint state = 0;
        sampler_stats.states++;
        if ((*jvmti)->GetThreadState(jvmti, t->ref, &state) != JVMTI_ERROR_NONE)
            continue;
        /* A carrier running a virtual thread reports itself waiting: its CPU time says
         * whether the virtual thread works. */
        bool carrying = carrier_slot_carrying(&t->carrier);
        if (cpu_activity_of_state(state) == CPU_IDLE && !carrying)
            continue; /* uses no CPU: its credit waits until it runs again */
        t->due = samples_due(jvmti, t);
        if (t->due == 0)
            continue;
        t->virtual_stack = false;
        t->vthread_info = NULL;
        jthread ref = t->ref;
        if (carrying) {
            ref = carrier_slot_mounted(jni, &t->carrier);
            if (!ref) { /* unmounted since: whose time it was is unknown */
                sampler_stats.vthread_dropped += t->due;
                continue;
            }
            t->virtual_stack = true;
            if (sampler_per_thread) { /* registers it (THREAD START) on its first sample */
                t->vthread_info = threads_of(jvmti, jni, ref);
                if (!t->vthread_info) {
                    sampler_stats.vthread_dropped += t->due;
                    continue;
                }
            }
        }
        picked[m] = t;
        refs[m] = ref;
        m++;
    }
    if (m)
        take_stacks(jvmti, m, (jint)traces_depth());
    (*jni)->PopLocalFrame(jni, NULL);

    pthread_mutex_lock(&cpu_counts_lock);
    for (size_t i = 0; i < m; i++) {
        if (picked[i]->trace) {
            sample_counts_add(cpu_counts, picked[i]->trace, picked[i]->due);
            sampler_stats.samples += picked[i]->due;
        }
    }
    pthread_mutex_unlock(&cpu_counts_lock);
}

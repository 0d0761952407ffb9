/* One round of the safepoint sampler (safepoint_round.h). */
#include "safepoint_round.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "carriers.h"
#include "cpu_activity.h"
#include "cpu_credit.h"
#include "jvmti_util.h"
#include "cpu_profile.h"
#include "sampled_threads.h"
#include "thread_table.h"
#include "trace_table.h"

/* Up to this many threads on the CPU, their stacks are taken one by one: each is a handshake
 * with that thread alone. More are taken with one GetThreadListStackTraces call, one
 * safepoint for all (doc/cpu-samples.md has the measurements behind the number). */
#define STACKS_ONE_BY_ONE_MAX 4

/* Arrays of one round, owned by the sampler thread and grown as the thread list grows. */
static struct sampled_thread **picked;
static jthread *refs;
static size_t round_cap;

static bool round_arrays_fit(size_t n)
{
    if (n <= round_cap)
        return true;
    size_t cap = n + n / 2 + 16;
    struct sampled_thread **p = realloc(picked, cap * sizeof *p);
    if (p)
        picked = p;
    jthread *r = realloc(refs, cap * sizeof *r);
    if (r)
        refs = r;
    if (!p || !r)
        return false;
    round_cap = cap;
    return true;
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
static uint32_t samples_due(jvmtiEnv *jvmti, struct safepoint_round *round,
                            struct sampled_thread *t)
{
    jlong cpu = 0;
    if ((*jvmti)->GetThreadCpuTime(jvmti, t->ref, &cpu) != JVMTI_ERROR_NONE)
        return 0;
    round->stats.cpu_reads++;
    if (t->timer_slot >= 0 && cpu >= SAMPLED_THREADS_YOUNG_CPU_NS)
        sampled_threads_cover_grown(t); /* its timer's signals sample it from now on */
    return cpu_credit_update(&t->credit, (int64_t)cpu, round->interval_ns, uniform());
}

/* The stack of the virtual thread a carrier ran: its trace serial, or 0 when it is not
 * counted. The virtual thread may have unmounted between the look at the carrier and the
 * stack: parked or ended by then, its samples are dropped, neither counted at the park nor
 * given back to the carrier (which may run another virtual thread next). */
static uint32_t virtual_trace_of(jvmtiEnv *jvmti, struct safepoint_round *round,
                                 struct sampled_thread *t, const jvmtiStackInfo *si, jint depth)
{
    if (cpu_activity_of_state(si->state) == CPU_IDLE || (si->frame_count == 0 && depth > 0)) {
        round->stats.vthread_dropped += t->due;
        return 0;
    }
    uint32_t serial = trace_table_intern(jvmti, si->frame_buffer, si->frame_count,
                                         t->vthread_info ? t->vthread_info->serial : 0);
    if (serial == HPROF_TRACE_SERIAL_NONE && si->frame_count > 0)
        return 0;
    round->stats.vthread_samples += t->due;
    return serial;
}

/* One thread's stack, as taken: its trace serial, or 0 when it is not counted. */
static uint32_t trace_of(jvmtiEnv *jvmti, struct safepoint_round *round, struct sampled_thread *t,
                         const jvmtiStackInfo *si, jint depth)
{
    if (t->virtual_stack)
        return virtual_trace_of(jvmti, round, t, si, depth);
    if (cpu_activity_of_state(si->state) == CPU_IDLE) {
        /* Went to sleep, wait or park since its state was read: count its CPU time at a
         * later round rather than at the sleep. */
        cpu_credit_refund(&t->credit, t->due, round->interval_ns);
        round->stats.refunded += t->due;
        return 0;
    }
    if (si->frame_count == 0 && depth > 0)
        return 0; /* no Java frames: the CPU time was not spent in Java code */
    uint32_t serial = trace_table_intern(jvmti, si->frame_buffer, si->frame_count,
                                         round->per_thread ? t->info->serial : 0);
    if (serial == HPROF_TRACE_SERIAL_NONE && si->frame_count > 0)
        return 0; /* a frame could not be read (its class was unloaded) */
    return serial;
}

/* Sets the trace of picked[0..m). */
static void take_stacks(jvmtiEnv *jvmti, struct safepoint_round *round, size_t m, jint depth)
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
            round->stats.stacks++;
            picked[i]->trace = trace_of(jvmti, round, picked[i], &si[0], depth);
            jvmti_util_free(jvmti, si);
        }
        return;
    }
    jvmtiStackInfo *si = NULL;
    if ((*jvmti)->GetThreadListStackTraces(jvmti, (jint)m, refs, depth, &si) != JVMTI_ERROR_NONE ||
        !si)
        return;
    round->stats.stacks += m;
    for (size_t i = 0; i < m; i++)
        picked[i]->trace = trace_of(jvmti, round, picked[i], &si[i], depth);
    jvmti_util_free(jvmti, si);
}

void safepoint_round_run(jvmtiEnv *jvmti, JNIEnv *jni, struct safepoint_round *round)
{
    size_t n = 0;
    struct sampled_thread **cands = sampled_threads_gather(round->self, &n);
    if (n == 0 || !round_arrays_fit(n))
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
        round->stats.states++;
        if ((*jvmti)->GetThreadState(jvmti, t->ref, &state) != JVMTI_ERROR_NONE)
            continue;
        /* A carrier running a virtual thread reports itself waiting: its CPU time says
         * whether the virtual thread works. */
        bool carrying = carriers_slot_carrying(&t->carrier);
        if (cpu_activity_of_state(state) == CPU_IDLE && !carrying)
            continue; /* uses no CPU: its credit waits until it runs again */
        t->due = samples_due(jvmti, round, t);
        if (t->due == 0)
            continue;
        t->virtual_stack = false;
        t->vthread_info = NULL;
        jthread ref = t->ref;
        if (carrying) {
            ref = carriers_slot_mounted(jni, &t->carrier);
            if (!ref) { /* unmounted since: whose time it was is unknown */
                round->stats.vthread_dropped += t->due;
                continue;
            }
            t->virtual_stack = true;
            if (round->per_thread) { /* registers it (THREAD START) on its first sample */
                t->vthread_info = thread_table_of(jvmti, jni, ref);
                if (!t->vthread_info) {
                    round->stats.vthread_dropped += t->due;
                    continue;
                }
            }
        }
        picked[m] = t;
        refs[m] = ref;
        m++;
    }
    if (m)
        take_stacks(jvmti, round, m, (jint)trace_table_depth());
    (*jni)->PopLocalFrame(jni, NULL);

    for (size_t i = 0; i < m; i++) {
        if (picked[i]->trace) {
            cpu_profile_add(picked[i]->trace, picked[i]->due);
            round->stats.samples += picked[i]->due;
        }
    }
}

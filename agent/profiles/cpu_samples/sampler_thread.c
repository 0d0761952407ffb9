#include "sampler_thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cpu_activity.h"
#include "carriers.h"
#include "jvmti_util.h"
#include "log.h"
#include "sample_counts.h"
#include "thread_table.h"
#include "trace_table.h"

/* Up to this many threads on the CPU, their stacks are taken one by one: each is a handshake
 * with that thread alone. More are taken with one GetThreadListStackTraces call, one
 * safepoint for all (doc/cpu-samples.md has the measurements behind the number). */
#define STACKS_ONE_BY_ONE_MAX 4
/* A paused sampler still wakes this often to free the entries of threads that ended. */
#define PAUSED_WAKE_NS INT64_C(1000000000)
/* vm_death waits at most this long for the sampler to leave its round. */
#define STOP_WAIT_NS INT64_C(5000000000)
/* A CONTROL command switching sampling off waits at most this long for the round in progress. */
#define OFF_WAIT_NS INT64_C(2000000000)

struct sampled_thread {
    jthread ref; /* global reference */
    struct thread_info *info;
    bool enabled;                /* CONTROL_CPU_SAMPLING_ON/OFF; guarded by lock */
    bool retired;                /* the thread ended; guarded by lock, freed by the sampler */
    bool fresh_start;            /* switched on: forget its CPU credit; guarded by lock */
    struct carrier_slot carrier; /* the virtual thread it runs, if any (JDK 21+) */
    /* Used by the sampler thread only. */
    struct cpu_credit credit;
    uint32_t due;   /* samples due this round */
    uint32_t trace; /* this round's trace, 0 = not counted */
    /* This round's stack is the mounted virtual thread's: its entry (thread=y), else NULL. */
    bool virtual_stack;
    struct thread_info *vthread_info;
};

/* lock guards the thread list, the switches and the sampler's life cycle; wake is signalled
 * when any of them changes. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static struct sampled_thread **list;
static size_t nlist, list_cap;
static size_t nretired;
static bool default_on = true; /* for threads not switched one by one */
static size_t enabled_count;   /* listed, not retired, enabled */
static bool stop_requested, sampler_running;
static bool in_round; /* the sampler is between its look at the switches and its counts */

/* counts_lock guards the counts and the statistics. */
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sample_counts *counts;
static struct cpu_sampler_stats published; /* a copy of stats after each round */
/* Updated by the sampler thread only. */
static struct cpu_sampler_stats stats;

static int64_t interval_ns;
static bool per_thread;
static _Atomic(struct thread_info *) self_info; /* the sampler's own thread */

static struct timespec timespec_of(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}

int cpu_sampler_init(int interval_ms, bool thread_traces)
{
    interval_ns = (int64_t)(interval_ms > 0 ? interval_ms : 1) * 1000000;
    per_thread = thread_traces;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    counts = sample_counts_new();
    return counts ? 0 : -1;
}

/* ---- the thread list ----------------------------------------------------------------- */

static struct sampled_thread *find_locked(const struct thread_info *info)
{
    for (size_t i = 0; i < nlist; i++)
        if (list[i]->info == info && !list[i]->retired)
            return list[i];
    return NULL;
}

/* from_start: seen at its ThreadStart, so all its CPU time counts. Returns the thread's
 * entry (new or listed before), or NULL. The entry stays valid while the thread lives. */
static struct sampled_thread *add_thread(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         bool from_start)
{
    struct thread_info *info = threads_of(jvmti, jni, thread);
    if (!info || atomic_load(&info->ended))
        return NULL;
    pthread_mutex_lock(&lock);
    struct sampled_thread *listed = find_locked(info);
    pthread_mutex_unlock(&lock);
    if (listed)
        return listed;

    struct sampled_thread *t = calloc(1, sizeof *t);
    jthread ref = (*jni)->NewGlobalRef(jni, thread);
    if (!t || !ref) {
        free(t);
        if (ref)
            (*jni)->DeleteGlobalRef(jni, ref);
        return NULL;
    }
    t->ref = ref;
    t->info = info;
    carrier_slot_init(&t->carrier);
    if (from_start)
        cpu_credit_from_start(&t->credit);

    pthread_mutex_lock(&lock);
    bool added = false;
    struct sampled_thread *found = find_locked(info);
    if (!found) { /* not added meanwhile by VM init's walk */
        if (nlist == list_cap) {
            size_t cap = list_cap ? list_cap * 2 : 64;
            struct sampled_thread **grown = realloc(list, cap * sizeof *grown);
            if (grown) {
                list = grown;
                list_cap = cap;
            }
        }
        if (nlist < list_cap) {
            t->enabled = default_on;
            if (t->enabled)
                enabled_count++;
            list[nlist++] = t;
            added = true;
            pthread_cond_broadcast(&wake);
        }
    }
    pthread_mutex_unlock(&lock);
    if (!added) {
        (*jni)->DeleteGlobalRef(jni, ref);
        carrier_slot_destroy(jni, &t->carrier);
        free(t);
        return found;
    }
    return t;
}

void cpu_sampler_thread_started(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct sampled_thread *t = add_thread(jvmti, jni, thread, true);
    /* ThreadStart runs on the new thread: bind it, in case it becomes a carrier. */
    if (t && cpu_carriers_watching())
        carrier_slot_bind_current(&t->carrier);
}

static void retire_locked(struct sampled_thread *t)
{
    if (t->retired)
        return;
    t->retired = true;
    nretired++;
    if (t->enabled)
        enabled_count--;
}

void cpu_sampler_thread_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    carrier_slot_bind_current(NULL); /* ThreadEnd runs on the ending thread */
    struct thread_info *info = threads_of(jvmti, jni, thread);
    if (!info)
        return;
    pthread_mutex_lock(&lock);
    struct sampled_thread *t = find_locked(info);
    if (t)
        retire_locked(t);
    pthread_mutex_unlock(&lock);
}

void cpu_sampler_add_live_threads(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jthread *threads = NULL;
    if (jvmti_failed(jvmti, (*jvmti)->GetAllThreads(jvmti, &n, &threads), "GetAllThreads"))
        return;
    for (jint i = 0; i < n; i++) {
        add_thread(jvmti, jni, threads[i], false);
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    jvmti_free(jvmti, threads);
}

/* Frees the entries of ended threads. Sampler thread only: it alone holds entry pointers
 * outside the lock, and not while this runs. */
static void free_retired(JNIEnv *jni)
{
    pthread_mutex_lock(&lock);
    if (nretired == 0) {
        pthread_mutex_unlock(&lock);
        return;
    }
    struct sampled_thread *gone_small[64];
    struct sampled_thread **gone = nretired <= 64 ? gone_small : malloc(nretired * sizeof *gone);
    size_t ngone = 0, kept = 0;
    for (size_t i = 0; i < nlist; i++) {
        if (list[i]->retired && gone)
            gone[ngone++] = list[i];
        else
            list[kept++] = list[i];
    }
    nlist = kept;
    nretired = gone ? 0 : nretired;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < ngone; i++) {
        (*jni)->DeleteGlobalRef(jni, gone[i]->ref);
        carrier_slot_destroy(jni, &gone[i]->carrier);
        free(gone[i]);
    }
    if (gone != gone_small)
        free(gone);
}

/* ---- one sampling round -------------------------------------------------------------- */

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
    struct thread_info *self = atomic_load(&self_info);
    pthread_mutex_lock(&lock);
    size_t n = 0;
    if (round_arrays_fit(nlist)) {
        for (size_t i = 0; i < nlist; i++) {
            struct sampled_thread *t = list[i];
            if (t->fresh_start) {
                cpu_credit_reset(&t->credit);
                t->fresh_start = false;
            }
            if (t->enabled && !t->retired && t->info != self)
                cands[n++] = t;
        }
    }
    pthread_mutex_unlock(&lock);
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
    stats.cpu_reads++;
    return cpu_credit_update(&t->credit, (int64_t)cpu, interval_ns, uniform());
}

/* The stack of the virtual thread a carrier ran: its trace serial, or 0 when it is not
 * counted. The virtual thread may have unmounted between the look at the carrier and the
 * stack: parked or ended by then, its samples are dropped, neither counted at the park nor
 * given back to the carrier (which may run another virtual thread next). */
static uint32_t virtual_trace_of(jvmtiEnv *jvmti, struct sampled_thread *t,
                                 const jvmtiStackInfo *si, jint depth)
{
    if (cpu_activity_of_state(si->state) == CPU_IDLE || (si->frame_count == 0 && depth > 0)) {
        stats.vthread_dropped += t->due;
        return 0;
    }
    uint32_t serial = traces_intern(jvmti, si->frame_buffer, si->frame_count,
                                    t->vthread_info ? t->vthread_info->serial : 0);
    if (serial == HPROF_TRACE_SERIAL_NONE && si->frame_count > 0)
        return 0;
    stats.vthread_samples += t->due;
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
        cpu_credit_refund(&t->credit, t->due, interval_ns);
        stats.refunded += t->due;
        return 0;
    }
    if (si->frame_count == 0 && depth > 0)
        return 0; /* no Java frames: the CPU time was not spent in Java code */
    uint32_t serial =
        traces_intern(jvmti, si->frame_buffer, si->frame_count, per_thread ? t->info->serial : 0);
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
            stats.stacks++;
            picked[i]->trace = trace_of(jvmti, picked[i], &si[0], depth);
            jvmti_free(jvmti, si);
        }
        return;
    }
    jvmtiStackInfo *si = NULL;
    if ((*jvmti)->GetThreadListStackTraces(jvmti, (jint)m, refs, depth, &si) != JVMTI_ERROR_NONE ||
        !si)
        return;
    stats.stacks += m;
    for (size_t i = 0; i < m; i++)
        picked[i]->trace = trace_of(jvmti, picked[i], &si[i], depth);
    jvmti_free(jvmti, si);
}

static void sample_round(jvmtiEnv *jvmti, JNIEnv *jni)
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
        stats.states++;
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
                stats.vthread_dropped += t->due;
                continue;
            }
            t->virtual_stack = true;
            if (per_thread) { /* registers it (THREAD START) on its first sample */
                t->vthread_info = threads_of(jvmti, jni, ref);
                if (!t->vthread_info) {
                    stats.vthread_dropped += t->due;
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

    pthread_mutex_lock(&counts_lock);
    for (size_t i = 0; i < m; i++) {
        if (picked[i]->trace) {
            sample_counts_add(counts, picked[i]->trace, picked[i]->due);
            stats.samples += picked[i]->due;
        }
    }
    pthread_mutex_unlock(&counts_lock);
}

/* ---- the agent thread ---------------------------------------------------------------- */

static bool sampling_on_locked(void)
{
    return default_on || enabled_count > 0;
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    atomic_store(&self_info, threads_of(jvmti, jni, NULL));
    int64_t first = 0, last = 0;
    pthread_mutex_lock(&lock);
    int64_t next = (int64_t)clock_monotonic_ns() + interval_ns;
    while (!stop_requested) {
        if (!sampling_on_locked()) {
            struct timespec until = timespec_of((int64_t)clock_monotonic_ns() + PAUSED_WAKE_NS);
            pthread_cond_timedwait(&wake, &lock, &until);
            pthread_mutex_unlock(&lock);
            free_retired(jni);
            pthread_mutex_lock(&lock);
            next = (int64_t)clock_monotonic_ns() + interval_ns;
            continue;
        }
        int64_t now = (int64_t)clock_monotonic_ns();
        if (now < next) {
            struct timespec until = timespec_of(next);
            pthread_cond_timedwait(&wake, &lock, &until);
            continue; /* re-check stop and pause */
        }
        in_round = true;
        pthread_mutex_unlock(&lock);

        int64_t cpu_start = (int64_t)clock_thread_cpu_ns();
        free_retired(jni);
        sample_round(jvmti, jni);
        int64_t end = (int64_t)clock_monotonic_ns();
        stats.cpu_ns += (uint64_t)((int64_t)clock_thread_cpu_ns() - cpu_start);
        pthread_mutex_lock(&lock);
        in_round = false;
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);

        stats.ticks++;
        stats.busy_ns += (uint64_t)(end - now);
        if ((uint64_t)(end - now) > stats.max_tick_ns)
            stats.max_tick_ns = (uint64_t)(end - now);
        if (!first)
            first = now;
        last = end;
        stats.running_ns = (uint64_t)(last - first);
        /* Keep the phase; rounds the last one overran are skipped, never made up in a burst. */
        next += interval_ns;
        if (next <= end) {
            int64_t behind = (end - next) / interval_ns + 1;
            stats.missed += (uint64_t)behind;
            next += behind * interval_ns;
        }
        pthread_mutex_lock(&counts_lock);
        published = stats;
        pthread_mutex_unlock(&counts_lock);
        pthread_mutex_lock(&lock);
    }
    sampler_running = false;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
}

int cpu_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = init ? (*jni)->NewStringUTF(jni, "HPROF cpu sampler") : NULL;
    jthread thread = name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
    if (!thread) {
        (*jni)->ExceptionClear(jni);
        log_error("cpu=samples: cannot create the sampler thread");
        return -1;
    }
    pthread_mutex_lock(&lock);
    sampler_running = true;
    pthread_mutex_unlock(&lock);
    jvmtiError err =
        (*jvmti)->RunAgentThread(jvmti, thread, sampler_main, NULL, JVMTI_THREAD_MAX_PRIORITY);
    (*jni)->DeleteLocalRef(jni, thread);
    (*jni)->DeleteLocalRef(jni, name);
    (*jni)->DeleteLocalRef(jni, cls);
    if (jvmti_failed(jvmti, err, "RunAgentThread")) {
        pthread_mutex_lock(&lock);
        sampler_running = false;
        pthread_mutex_unlock(&lock);
        return -1;
    }
    return 0;
}

void cpu_sampler_stop(void)
{
    pthread_mutex_lock(&lock);
    stop_requested = true;
    pthread_cond_broadcast(&wake);
    struct timespec until = timespec_of((int64_t)clock_monotonic_ns() + STOP_WAIT_NS);
    while (sampler_running)
        if (pthread_cond_timedwait(&wake, &lock, &until) != 0)
            break;
    bool stuck = sampler_running;
    pthread_mutex_unlock(&lock);
    if (stuck)
        log_warning("cpu=samples: the sampler thread did not stop within 5 s");
}

/* ---- control ------------------------------------------------------------------------- */

void cpu_sampler_set_sampling(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool on)
{
    struct thread_info *info = NULL;
    if (thread) {
        add_thread(jvmti, jni, thread, false); /* started before the agent was attached */
        info = threads_of(jvmti, jni, thread);
        if (!info)
            return;
    }
    pthread_mutex_lock(&lock);
    if (!thread) {
        default_on = on;
        enabled_count = 0;
        for (size_t i = 0; i < nlist; i++) {
            if (on && !list[i]->enabled)
                list[i]->fresh_start = true;
            list[i]->enabled = on;
            if (on && !list[i]->retired)
                enabled_count++;
        }
    } else {
        struct sampled_thread *t = find_locked(info);
        if (t && t->enabled != on) {
            t->enabled = on;
            t->fresh_start = on;
            if (on)
                enabled_count++;
            else
                enabled_count--;
        }
    }
    pthread_cond_broadcast(&wake);
    /* Once the command returns, no sample of a thread switched off is added: a round in
     * progress read the switches before the change. */
    struct timespec until = timespec_of((int64_t)clock_monotonic_ns() + OFF_WAIT_NS);
    while (!on && in_round && !stop_requested)
        if (pthread_cond_timedwait(&wake, &lock, &until) != 0)
            break;
    pthread_mutex_unlock(&lock);
}

bool cpu_sampler_sampling(void)
{
    pthread_mutex_lock(&lock);
    bool on = sampling_on_locked();
    pthread_mutex_unlock(&lock);
    return on;
}

void cpu_sampler_clear(void)
{
    pthread_mutex_lock(&counts_lock);
    sample_counts_clear(counts);
    pthread_mutex_unlock(&counts_lock);
}

size_t cpu_sampler_snapshot(struct hprof_cost_row **rows, uint64_t *total)
{
    *rows = NULL;
    *total = 0;
    pthread_mutex_lock(&counts_lock);
    size_t n = sample_counts_traces(counts);
    struct hprof_cost_row *r = n ? malloc(n * sizeof *r) : NULL;
    if (r) {
        n = sample_counts_rows(counts, r, n);
        *total = sample_counts_total(counts);
    } else {
        n = 0;
    }
    pthread_mutex_unlock(&counts_lock);
    *rows = r;
    return n;
}

void cpu_sampler_get_stats(struct cpu_sampler_stats *out)
{
    pthread_mutex_lock(&counts_lock);
    *out = published;
    pthread_mutex_unlock(&counts_lock);
}

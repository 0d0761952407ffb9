#include "sampler_thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cpu_activity.h"
#include "async_sampler.h"
#include "carriers.h"
#include "cpu_timers.h"
#include "jvmti_util.h"
#include "log.h"
#include "sample_counts.h"
#include "sampler_internal.h"
#include "thread_table.h"
#include "trace_table.h"

/* A paused sampler still wakes this often to free the entries of threads that ended. */
#define PAUSED_WAKE_NS INT64_C(1000000000)
/* vm_death waits at most this long for the sampler to leave its round. */
#define STOP_WAIT_NS INT64_C(5000000000)
/* A CONTROL command switching sampling off waits at most this long for the round in progress. */
#define OFF_WAIT_NS INT64_C(2000000000)
/* With the async sampler, how often the agent thread checks that SIGPROF is still its own. */
#define SIGNAL_CHECK_NS INT64_C(1000000000)

/* sampler_list_lock guards the thread list, the switches and the sampler's life cycle; wake
 * is signalled when any of them changes. */
pthread_mutex_t sampler_list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
struct sampled_thread **sampler_list;
size_t sampler_list_len;
static size_t list_cap;
static size_t nretired;
static bool default_on = true; /* for threads not switched one by one */
static size_t enabled_count;   /* listed, not retired, enabled */
static bool stop_requested, sampler_running;
static bool in_round; /* the sampler is between its look at the switches and its counts */

/* cpu_counts_lock guards the counts and the statistics. */
pthread_mutex_t cpu_counts_lock = PTHREAD_MUTEX_INITIALIZER;
struct sample_counts *cpu_counts;
static struct cpu_sampler_stats published; /* a copy of stats after each round */
/* Updated by the sampler thread only. */
struct cpu_sampler_stats sampler_stats;

int64_t sampler_interval_ns;
bool sampler_per_thread;
_Atomic(struct thread_info *) sampler_self_info; /* the sampler's own thread */

int cpu_sampler_init(int interval_ms, bool thread_traces)
{
    sampler_interval_ns = (int64_t)(interval_ms > 0 ? interval_ms : 1) * 1000000;
    sampler_per_thread = thread_traces;
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    cpu_counts = sample_counts_new();
    return cpu_counts ? 0 : -1;
}

/* ---- the thread list ----------------------------------------------------------------- */

static struct sampled_thread *find_locked(const struct thread_info *info)
{
    for (size_t i = 0; i < sampler_list_len; i++)
        if (sampler_list[i]->info == info && !sampler_list[i]->retired)
            return sampler_list[i];
    return NULL;
}

/* from_start: seen at its ThreadStart (on the thread itself), so all its CPU time from now on
 * counts (cpu_activity.h: not what its OS thread used before it was attached). Returns the
 * thread's
 * entry (new or listed before), or NULL. The entry stays valid while the thread lives. */
static struct sampled_thread *add_thread(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         bool from_start)
{
    struct thread_info *info = threads_of(jvmti, jni, thread);
    if (!info || atomic_load(&info->ended))
        return NULL;
    pthread_mutex_lock(&sampler_list_lock);
    struct sampled_thread *listed = find_locked(info);
    pthread_mutex_unlock(&sampler_list_lock);
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
    t->timer_slot = -1;
    carrier_slot_init(&t->carrier);
    jlong cpu_now = 0;
    if (from_start && (*jvmti)->GetThreadCpuTime(jvmti, thread, &cpu_now) == JVMTI_ERROR_NONE)
        cpu_credit_from_start(&t->credit, (int64_t)cpu_now);

    pthread_mutex_lock(&sampler_list_lock);
    bool added = false;
    struct sampled_thread *found = find_locked(info);
    if (!found) { /* not added meanwhile by VM init's walk */
        if (sampler_list_len == list_cap) {
            size_t cap = list_cap ? list_cap * 2 : 64;
            struct sampled_thread **grown = realloc(sampler_list, cap * sizeof *grown);
            if (grown) {
                sampler_list = grown;
                list_cap = cap;
            }
        }
        if (sampler_list_len < list_cap) {
            t->enabled = default_on;
            if (t->enabled)
                enabled_count++;
            sampler_list[sampler_list_len++] = t;
            added = true;
            pthread_cond_broadcast(&wake);
        }
    }
    pthread_mutex_unlock(&sampler_list_lock);
    if (!added) {
        (*jni)->DeleteGlobalRef(jni, ref);
        carrier_slot_destroy(jni, &t->carrier);
        free(t);
        return found;
    }
    return t;
}

/* On the thread itself: a CPU-time timer, so that signals sample it from now on. */
static void cover_current(JNIEnv *jni, struct sampled_thread *t)
{
    if (!cpu_async_active())
        return;
    pthread_mutex_lock(&sampler_list_lock);
    if (t->timer_slot < 0 && !t->retired)
        /* armed when grown up */
        t->timer_slot = cpu_async_cover_current(jni, t->info, t->ref, false);
    pthread_mutex_unlock(&sampler_list_lock);
}

void cpu_sampler_cover_current(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jthread self = NULL;
    if ((*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE || !self)
        return;
    struct sampled_thread *t = add_thread(jvmti, jni, self, false);
    if (t)
        cover_current(jni, t);
    (*jni)->DeleteLocalRef(jni, self);
}

void cpu_sampler_thread_started(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct sampled_thread *t = add_thread(jvmti, jni, thread, true);
    if (t)
        cover_current(jni, t);
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
    pthread_mutex_lock(&sampler_list_lock);
    struct sampled_thread *t = info ? find_locked(info) : NULL;
    /* Its timer goes with its entry's slot number, under sampler_list_lock, as switches are:
     * the slot may serve another thread once the drain is past this one's samples. */
    cpu_async_uncover_current(jni);
    if (t) {
        t->timer_slot = -1;
        t->covered = false;
        retire_locked(t);
    }
    pthread_mutex_unlock(&sampler_list_lock);
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
 * outside the sampler_list_lock, and not while this runs. */
static void free_retired(JNIEnv *jni)
{
    pthread_mutex_lock(&sampler_list_lock);
    if (nretired == 0) {
        pthread_mutex_unlock(&sampler_list_lock);
        return;
    }
    struct sampled_thread *gone_small[64];
    struct sampled_thread **gone = nretired <= 64 ? gone_small : malloc(nretired * sizeof *gone);
    size_t ngone = 0, kept = 0;
    for (size_t i = 0; i < sampler_list_len; i++) {
        if (sampler_list[i]->retired && gone)
            gone[ngone++] = sampler_list[i];
        else
            sampler_list[kept++] = sampler_list[i];
    }
    sampler_list_len = kept;
    nretired = gone ? 0 : nretired;
    pthread_mutex_unlock(&sampler_list_lock);
    for (size_t i = 0; i < ngone; i++) {
        (*jni)->DeleteGlobalRef(jni, gone[i]->ref);
        carrier_slot_destroy(jni, &gone[i]->carrier);
        free(gone[i]);
    }
    if (gone != gone_small)
        free(gone);
}

/* ---- the agent thread ---------------------------------------------------------------- */

static bool sampling_on_locked(void)
{
    return default_on || enabled_count > 0;
}

/* Listed threads the rounds must sample: enabled, alive, without a timer, not the sampler. */
static size_t uncovered_locked(void)
{
    struct thread_info *self = atomic_load(&sampler_self_info);
    size_t n = 0;
    for (size_t i = 0; i < sampler_list_len; i++)
        if (sampler_list[i]->enabled && !sampler_list[i]->retired && !sampler_list[i]->covered &&
            sampler_list[i]->info != self)
            n++;
    return n;
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    struct thread_info *self = threads_of(jvmti, jni, NULL);
    atomic_store(&sampler_self_info, self);
    int64_t first = 0, last = 0;
    pthread_mutex_lock(&sampler_list_lock);
    /* The sampler's own CPU time is no sample: no timer for it. */
    struct sampled_thread *me = self ? find_locked(self) : NULL;
    if (me && me->timer_slot >= 0) {
        cpu_async_uncover_current(jni);
        me->timer_slot = -1;
        me->covered = false;
    }
    int64_t next = (int64_t)clock_monotonic_ns() + sampler_interval_ns;
    int64_t next_signal_check = (int64_t)clock_monotonic_ns() + SIGNAL_CHECK_NS;
    while (!stop_requested) {
        if (cpu_async_active()) {
            pthread_mutex_unlock(&sampler_list_lock);
            cpu_async_drain(jvmti, jni);
            pthread_mutex_lock(&sampler_list_lock);
            if ((int64_t)clock_monotonic_ns() >= next_signal_check) {
                next_signal_check = (int64_t)clock_monotonic_ns() + SIGNAL_CHECK_NS;
                if (!cpu_async_check_signal()) /* taken over: rounds sample everyone now */
                    for (size_t i = 0; i < sampler_list_len; i++) {
                        sampler_list[i]->timer_slot = -1;
                        sampler_list[i]->covered = false;
                        sampler_list[i]->fresh_start =
                            true; /* its CPU since the last round is lost */
                    }
            }
        }
        if (!sampling_on_locked()) {
            struct timespec until =
                clock_timespec_of((int64_t)clock_monotonic_ns() +
                                  (cpu_async_active() ? CPU_ASYNC_DRAIN_NS : PAUSED_WAKE_NS));
            pthread_cond_timedwait(&wake, &sampler_list_lock, &until);
            pthread_mutex_unlock(&sampler_list_lock);
            free_retired(jni);
            pthread_mutex_lock(&sampler_list_lock);
            next = (int64_t)clock_monotonic_ns() + sampler_interval_ns;
            continue;
        }
        int64_t now = (int64_t)clock_monotonic_ns();
        if (now < next) {
            struct timespec until = clock_timespec_of(next);
            pthread_cond_timedwait(&wake, &sampler_list_lock, &until);
            continue; /* re-check stop and pause */
        }
        if (cpu_async_active() && uncovered_locked() == 0) {
            /* Every thread has its timer: only the ring to drain, less often than rounds. */
            next = now + (sampler_interval_ns > CPU_ASYNC_DRAIN_NS ? sampler_interval_ns
                                                                   : CPU_ASYNC_DRAIN_NS);
            continue;
        }
        in_round = true;
        pthread_mutex_unlock(&sampler_list_lock);

        int64_t cpu_start = (int64_t)clock_thread_cpu_ns();
        free_retired(jni);
        safepoint_round(jvmti, jni);
        int64_t end = (int64_t)clock_monotonic_ns();
        sampler_stats.cpu_ns += (uint64_t)((int64_t)clock_thread_cpu_ns() - cpu_start);
        pthread_mutex_lock(&sampler_list_lock);
        in_round = false;
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&sampler_list_lock);

        sampler_stats.ticks++;
        sampler_stats.busy_ns += (uint64_t)(end - now);
        if ((uint64_t)(end - now) > sampler_stats.max_tick_ns)
            sampler_stats.max_tick_ns = (uint64_t)(end - now);
        if (!first)
            first = now;
        last = end;
        sampler_stats.running_ns = (uint64_t)(last - first);
        /* Keep the phase; rounds the last one overran are skipped, never made up in a burst. */
        next += sampler_interval_ns;
        if (next <= end) {
            int64_t behind = (end - next) / sampler_interval_ns + 1;
            sampler_stats.missed += (uint64_t)behind;
            next += behind * sampler_interval_ns;
        }
        pthread_mutex_lock(&cpu_counts_lock);
        published = sampler_stats;
        pthread_mutex_unlock(&cpu_counts_lock);
        pthread_mutex_lock(&sampler_list_lock);
    }
    sampler_running = false;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&sampler_list_lock);
}

int cpu_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    pthread_mutex_lock(&sampler_list_lock);
    sampler_running = true;
    pthread_mutex_unlock(&sampler_list_lock);
    if (!jvmti_start_agent_thread(jvmti, jni, "HPROF cpu sampler", sampler_main, NULL,
                                  JVMTI_THREAD_MAX_PRIORITY)) {
        log_error("cpu=samples: cannot start the sampler thread");
        pthread_mutex_lock(&sampler_list_lock);
        sampler_running = false;
        pthread_mutex_unlock(&sampler_list_lock);
        return -1;
    }
    return 0;
}

void cpu_sampler_stop(void)
{
    pthread_mutex_lock(&sampler_list_lock);
    stop_requested = true;
    pthread_cond_broadcast(&wake);
    struct timespec until = clock_timespec_of((int64_t)clock_monotonic_ns() + STOP_WAIT_NS);
    while (sampler_running)
        if (pthread_cond_timedwait(&wake, &sampler_list_lock, &until) != 0)
            break;
    bool stuck = sampler_running;
    pthread_mutex_unlock(&sampler_list_lock);
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
    pthread_mutex_lock(&sampler_list_lock);
    if (!thread) {
        default_on = on;
        enabled_count = 0;
        for (size_t i = 0; i < sampler_list_len; i++) {
            if (on && !sampler_list[i]->enabled)
                sampler_list[i]->fresh_start = true;
            sampler_list[i]->enabled = on;
            if (on && !sampler_list[i]->retired)
                enabled_count++;
            if (sampler_list[i]->covered)
                cpu_timers_set_enabled(sampler_list[i]->timer_slot, on);
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
            if (t->covered)
                cpu_timers_set_enabled(t->timer_slot, on);
        }
    }
    pthread_cond_broadcast(&wake);
    /* Once the command returns, no sample of a thread switched off is added: a round in
     * progress read the switches before the change. */
    struct timespec until = clock_timespec_of((int64_t)clock_monotonic_ns() + OFF_WAIT_NS);
    while (!on && in_round && !stop_requested)
        if (pthread_cond_timedwait(&wake, &sampler_list_lock, &until) != 0)
            break;
    pthread_mutex_unlock(&sampler_list_lock);
}

bool cpu_sampler_sampling(void)
{
    pthread_mutex_lock(&sampler_list_lock);
    bool on = sampling_on_locked();
    pthread_mutex_unlock(&sampler_list_lock);
    return on;
}

void cpu_sampler_clear(void)
{
    if (cpu_async_active())
        cpu_timers_bump_epochs(); /* samples still in the ring were taken before the clear */
    pthread_mutex_lock(&cpu_counts_lock);
    sample_counts_clear(cpu_counts);
    pthread_mutex_unlock(&cpu_counts_lock);
}

void cpu_sampler_add_samples(uint32_t trace, uint64_t n)
{
    pthread_mutex_lock(&cpu_counts_lock);
    sample_counts_add(cpu_counts, trace, n);
    pthread_mutex_unlock(&cpu_counts_lock);
}

size_t cpu_sampler_snapshot(struct hprof_cost_row **rows, uint64_t *total)
{
    *rows = NULL;
    *total = 0;
    pthread_mutex_lock(&cpu_counts_lock);
    size_t n = sample_counts_traces(cpu_counts);
    struct hprof_cost_row *r = n ? malloc(n * sizeof *r) : NULL;
    if (r) {
        n = sample_counts_rows(cpu_counts, r, n);
        *total = sample_counts_total(cpu_counts);
    } else {
        n = 0;
    }
    pthread_mutex_unlock(&cpu_counts_lock);
    *rows = r;
    return n;
}

void cpu_sampler_get_stats(struct cpu_sampler_stats *out)
{
    pthread_mutex_lock(&cpu_counts_lock);
    *out = published;
    pthread_mutex_unlock(&cpu_counts_lock);
}

/* The cpu=samples sampler thread (sampler_thread.h): scheduling only. */
#include "sampler_thread.h"

#include <pthread.h>
#include <time.h>

#include "async_sampler.h"
#include "clock.h"
#include "cpu_profile.h"
#include "jvmti_util.h"
#include "log.h"
#include "process_threads.h"
#include "sampled_threads.h"
#include "thread_table.h"

/* A paused sampler still wakes this often to free the entries of threads that ended. */
#define PAUSED_WAKE_NS INT64_C(1000000000)
/* vm_death waits at most this long for the sampler to leave its round. */
#define STOP_WAIT_NS INT64_C(5000000000)
/* With the async sampler, how often the agent thread checks that SIGPROF is still its own. */
#define SIGNAL_CHECK_NS INT64_C(1000000000)

/* The rounds' context and statistics: the sampler thread's alone while it runs. */
static struct safepoint_round round;
/* life_lock guards running and published; ended is signalled when the thread leaves. */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ended = PTHREAD_COND_INITIALIZER;
static bool running;
static struct sampler_thread_stats published; /* a copy of the statistics after each round */

void sampler_thread_init(int interval_ms, bool per_thread)
{
    round.interval_ns = (int64_t)(interval_ms > 0 ? interval_ms : 1) * 1000000;
    round.per_thread = per_thread;
}

static int64_t now_ns(void)
{
    return (int64_t)clock_monotonic_ns();
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    struct thread_info *self = thread_table_of(jvmti, jni, NULL);
    round.self = self;
    struct sampler_thread_stats stats = {0};
    int64_t first = 0, last = 0;
    const int64_t interval = round.interval_ns;
    /* The sampler's own CPU time is no sample: no timer for it. */
    sampled_threads_forget_timer_of(jni, self);
    int64_t next = now_ns() + interval;
    int64_t next_signal_check = now_ns() + SIGNAL_CHECK_NS;
    while (!sampled_threads_stopping()) {
        process_threads_tick(jvmti, sampled_threads_sampling()); /* GC, JIT, VM threads */
        if (async_sampler_active()) {
            cpu_profile_drain(jvmti, jni);
            if (now_ns() >= next_signal_check) {
                next_signal_check = now_ns() + SIGNAL_CHECK_NS;
                if (!async_sampler_check_signal()) /* taken over: rounds sample everyone now */
                    sampled_threads_uncover_all();
            }
        }
        if (!sampled_threads_sampling()) {
            sampled_threads_wait(
                now_ns() + (async_sampler_active() ? CPU_PROFILE_DRAIN_NS : PAUSED_WAKE_NS), true);
            sampled_threads_free_retired(jni);
            next = now_ns() + interval;
            continue;
        }
        int64_t now = now_ns();
        if (now < next) {
            sampled_threads_wait(next, false);
            continue; /* re-check stop and pause */
        }
        if (async_sampler_active() && sampled_threads_uncovered(self) == 0) {
            /* Every thread has its timer: only the ring to drain, less often than rounds. */
            next = now + (interval > CPU_PROFILE_DRAIN_NS ? interval : CPU_PROFILE_DRAIN_NS);
            continue;
        }
        sampled_threads_round_begin();
        int64_t cpu_start = (int64_t)clock_thread_cpu_ns();
        sampled_threads_free_retired(jni);
        safepoint_round_run(jvmti, jni, &round);
        int64_t end = now_ns();
        stats.cpu_ns += (uint64_t)((int64_t)clock_thread_cpu_ns() - cpu_start);
        sampled_threads_round_end();

        stats.ticks++;
        stats.busy_ns += (uint64_t)(end - now);
        if ((uint64_t)(end - now) > stats.max_tick_ns)
            stats.max_tick_ns = (uint64_t)(end - now);
        if (!first)
            first = now;
        last = end;
        stats.running_ns = (uint64_t)(last - first);
        /* Keep the phase; rounds the last one overran are skipped, never made up in a burst. */
        next += interval;
        if (next <= end) {
            int64_t behind = (end - next) / interval + 1;
            stats.missed += (uint64_t)behind;
            next += behind * interval;
        }
        stats.round = round.stats;
        pthread_mutex_lock(&life_lock);
        published = stats;
        pthread_mutex_unlock(&life_lock);
    }
    pthread_mutex_lock(&life_lock);
    running = false;
    pthread_cond_broadcast(&ended);
    pthread_mutex_unlock(&life_lock);
}

bool sampler_thread_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    pthread_mutex_lock(&life_lock);
    running = true;
    pthread_mutex_unlock(&life_lock);
    if (!jvmti_util_start_agent_thread(jvmti, jni, "HPROF cpu sampler", sampler_main, NULL,
                                       JVMTI_THREAD_MAX_PRIORITY)) {
        pthread_mutex_lock(&life_lock);
        running = false;
        pthread_mutex_unlock(&life_lock);
        return false;
    }
    return true;
}

void sampler_thread_stop(void)
{
    sampled_threads_request_stop();
    pthread_mutex_lock(&life_lock);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STOP_WAIT_NS / 1000000000;
    while (running)
        if (pthread_cond_timedwait(&ended, &life_lock, &until) != 0)
            break;
    bool stuck = running;
    pthread_mutex_unlock(&life_lock);
    if (stuck)
        log_warning("cpu=samples: the sampler thread did not stop within 5 s");
}

void sampler_thread_get_stats(struct sampler_thread_stats *out)
{
    pthread_mutex_lock(&life_lock);
    *out = published;
    pthread_mutex_unlock(&life_lock);
}

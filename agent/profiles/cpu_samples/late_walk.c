#include "late_walk.h"

#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "jvmti_util.h"
#include "sample_records.h"
#include "sample_ring.h"

/* Records waiting for the walker at most; more are published unwalked (counted). */
#define QUEUE_RECORDS 1024u
/* The walker wakes this often to notice a stop even when no signal posts it. */
#define IDLE_WAKE_NS (100 * 1000000L)
/* late_walk_stop waits at most this long for the walker to publish what it holds. */
#define STOP_WAIT_NS (2000 * 1000000LL)

struct late_entry {
    uint64_t pos;
    struct sample_record *rec;
    uintptr_t thread_ref;
    uint64_t signal_ns;
};

static struct sample_ring *queue;
static sem_t wake;
static _Atomic(bool) accepting, stop_requested, walker_done;
/* Handlers between their check of accepting and their push: stop waits for them. */
static _Atomic(int) offers_in_flight;

static _Atomic(uint64_t) n_offered, n_walked, n_failed, n_refused, latency_sum, n_fast, latency_max;

bool late_walk_wanted(int nframes)
{
    return nframes == ASYNC_TICKS_UNKNOWN_NOT_JAVA ||
           nframes == ASYNC_TICKS_NOT_WALKABLE_NOT_JAVA || nframes == ASYNC_TICKS_DEOPT ||
           nframes == ASYNC_TICKS_GC_ACTIVE;
}

bool late_walk_offer(struct sample_record *rec, uint64_t pos, uintptr_t thread_ref)
{
    if (!thread_ref)
        return false;
    atomic_fetch_add_explicit(&offers_in_flight, 1, memory_order_acq_rel);
    bool taken = false;
    uint64_t qpos;
    struct late_entry *e;
    if (atomic_load_explicit(&accepting, memory_order_acquire) &&
        (e = sample_ring_claim(queue, &qpos)) != NULL) {
        *e = (struct late_entry){pos, rec, thread_ref, clock_monotonic_ns()};
        sample_ring_publish(queue, qpos);
        taken = true;
    }
    atomic_fetch_sub_explicit(&offers_in_flight, 1, memory_order_acq_rel);
    if (!taken) {
        atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
        return false;
    }
    atomic_fetch_add_explicit(&n_offered, 1, memory_order_relaxed);
    sem_post(&wake); /* async-signal-safe */
    return true;
}

static void note_latency(uint64_t ns)
{
    atomic_fetch_add_explicit(&latency_sum, ns, memory_order_relaxed);
    if (ns < 100000)
        atomic_fetch_add_explicit(&n_fast, 1, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&latency_max, memory_order_relaxed);
    while (ns > max && !atomic_compare_exchange_weak(&latency_max, &max, ns))
        ;
}

/* Walks one record's thread (unless stopping) and publishes the record. */
static void walk_one(jvmtiEnv *jvmti, const struct late_entry *e, jvmtiFrameInfo *buf,
                     bool stopping)
{
    struct sample_record *rec = e->rec;
    int depth = sample_records_depth();
    jint n = 0;
    if (!stopping && (*jvmti)->GetStackTrace(jvmti, (jthread)e->thread_ref, 0, depth, buf, &n) ==
                         JVMTI_ERROR_NONE) {
        note_latency(clock_monotonic_ns() - e->signal_ns);
        for (jint i = 0; i < n; i++) {
            rec->frames[i].method_id = buf[i].method;
            rec->frames[i].lineno =
                buf[i].location >= 0 ? (jint)buf[i].location : ASYNC_FRAME_NATIVE;
        }
        rec->nframes = n;
        rec->walked_late = 1;
        atomic_fetch_add_explicit(&n_walked, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&n_failed, 1, memory_order_relaxed);
    }
    sample_records_publish(e->pos);
}

static void JNICALL walker_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jni;
    jvmtiFrameInfo *buf = arg;
    for (;;) {
        struct timespec until = clock_timespec_of((int64_t)clock_monotonic_ns() + IDLE_WAKE_NS);
        while (sem_clockwait(&wake, CLOCK_MONOTONIC, &until) != 0 && errno == EINTR)
            ;
        bool stopping = atomic_load(&stop_requested);
        struct late_entry *e;
        while ((e = sample_ring_peek(queue)) != NULL) {
            struct late_entry copy = *e;
            sample_ring_release(queue);
            walk_one(jvmti, &copy, buf, stopping);
        }
        if (stopping && atomic_load(&offers_in_flight) == 0 && !sample_ring_peek(queue))
            break;
    }
    atomic_store(&walker_done, true);
}

struct hprof_error late_walk_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jvmtiFrameInfo *buf = malloc(sizeof *buf * (size_t)sample_records_max_frames());
    queue = buf ? sample_ring_new(QUEUE_RECORDS, sizeof(struct late_entry)) : NULL;
    if (!queue || sem_init(&wake, 0, 0) != 0) {
        free(buf);
        sample_ring_free(queue);
        queue = NULL;
        return hprof_errorf("out of memory for the late walker");
    }
    atomic_store(&accepting, true);
    if (!jvmti_util_start_agent_thread(jvmti, jni, "HPROF cpu=samples late walker", walker_main,
                                       buf, JVMTI_THREAD_MAX_PRIORITY)) {
        atomic_store(&accepting, false);
        return hprof_errorf("no thread to walk samples taken out of Java code");
    }
    return hprof_ok();
}

void late_walk_stop(void)
{
    if (!queue || !atomic_exchange(&accepting, false))
        return;
    while (atomic_load(&offers_in_flight) != 0)
        sched_yield(); /* a handler between its check and its push: a few instructions */
    atomic_store(&stop_requested, true);
    sem_post(&wake);
    int64_t deadline = (int64_t)clock_monotonic_ns() + STOP_WAIT_NS;
    while (!atomic_load(&walker_done) && (int64_t)clock_monotonic_ns() < deadline) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}

void late_walk_get_stats(struct late_walk_stats *out)
{
    out->offered = atomic_load(&n_offered);
    out->walked = atomic_load(&n_walked);
    out->failed = atomic_load(&n_failed);
    out->refused = atomic_load(&n_refused);
    out->latency_ns = atomic_load(&latency_sum);
    out->under_100us = atomic_load(&n_fast);
    out->max_ns = atomic_load(&latency_max);
}

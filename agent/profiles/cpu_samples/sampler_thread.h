/* The cpu=samples sampler thread ("HPROF cpu sampler", RunAgentThread): it only schedules. Every
 * interval it runs a safepoint round for the threads no timer covers (safepoint_round.h); with
 * the async sampler it drains the records into counts (cpu_profile_drain) and checks now and
 * then that SIGPROF is still hprof's. It waits on the thread list (sampled_threads.h) while
 * sampling is paused. doc/cpu-samples.md explains what a sample is. */
#ifndef HPROF_SAMPLER_THREAD_H
#define HPROF_SAMPLER_THREAD_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "safepoint_round.h"

/* interval_ms >= 1; per_thread: traces keyed by thread (thread=y). */
void sampler_thread_init(int interval_ms, bool per_thread);

/* Starts the agent thread (live phase). Returns false if it could not start. */
bool sampler_thread_start(jvmtiEnv *jvmti, JNIEnv *jni);
/* Stops the agent thread and waits (bounded) until it has left its loop. Idempotent. */
void sampler_thread_stop(void);

/* What the sampler thread did, for verbose messages and measurements. */
struct sampler_thread_stats {
    uint64_t ticks;       /* sampling rounds */
    uint64_t missed;      /* rounds skipped because the previous one overran the interval */
    uint64_t busy_ns;     /* wall time spent inside rounds */
    uint64_t cpu_ns;      /* the sampler thread's CPU time inside rounds */
    uint64_t max_tick_ns; /* the longest round */
    uint64_t running_ns;  /* wall time between the first and the last round */
    struct safepoint_round_stats round;
};
void sampler_thread_get_stats(struct sampler_thread_stats *out);

#endif

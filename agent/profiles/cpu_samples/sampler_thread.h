/* The cpu=samples sampler: an agent thread (RunAgentThread) that every interval takes the
 * stacks of the threads that are on the CPU running Java, and counts samples per trace.
 * Also the list of threads it looks at (kept from ThreadStart/ThreadEnd) and the switches the
 * socket CONTROL commands turn. Thread-safe. doc/cpu-samples.md explains what a sample is. */
#ifndef HPROF_SAMPLER_THREAD_H
#define HPROF_SAMPLER_THREAD_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* interval_ms >= 1; per_thread: traces keyed by thread (thread=y). Returns 0 or -1 (memory). */
int cpu_sampler_init(int interval_ms, bool per_thread);

/* Thread list: ThreadStart adds, ThreadEnd retires (the sampler frees retired entries). */
void cpu_sampler_thread_started(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void cpu_sampler_thread_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Adds every live thread not listed yet (VM init, attach). */
void cpu_sampler_add_live_threads(jvmtiEnv *jvmti, JNIEnv *jni);

/* Starts the agent thread (live phase). Returns 0 or -1 after logging why. */
int cpu_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni);
/* Stops the agent thread and waits (bounded) until it has left its loop. Idempotent. */
void cpu_sampler_stop(void);

/* CONTROL_CPU_SAMPLING_ON/OFF. thread NULL: all threads (off pauses the sampler, on resumes
 * it and re-enables every thread); else that thread only (on also resumes a paused sampler).
 * Switching off waits (at most 2 s) for the round in progress, so that no sample of a thread
 * switched off is added after the call: OFF then CLEAR leaves the counts at zero. */
void cpu_sampler_set_sampling(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool on);
/* Whether sampling is on (not paused), for CONTROL SETTINGS. */
bool cpu_sampler_sampling(void);
/* CONTROL_CLEAR_CPU_SAMPLES. */
void cpu_sampler_clear(void);

/* A copy of the counts: rows (trace, count, cost = count) in no order, malloc'ed (free it;
 * NULL when empty), and the total. Returns the number of rows. */
size_t cpu_sampler_snapshot(struct hprof_cost_row **rows, uint64_t *total);

/* What the sampler did, for verbose messages and measurements. */
struct cpu_sampler_stats {
    uint64_t ticks;           /* sampling rounds */
    uint64_t missed;          /* rounds skipped because the previous one overran the interval */
    uint64_t samples;         /* samples counted (cleared samples included) */
    uint64_t busy_ns;         /* wall time spent inside rounds */
    uint64_t cpu_ns;          /* the sampler thread's CPU time inside rounds */
    uint64_t max_tick_ns;     /* the longest round */
    uint64_t running_ns;      /* wall time between the first and the last round */
    uint64_t states;          /* threads looked at (GetThreadState) */
    uint64_t cpu_reads;       /* GetThreadCpuTime calls */
    uint64_t stacks;          /* stacks taken */
    uint64_t refunded;        /* samples put back: the thread went idle before its stack */
    uint64_t vthread_samples; /* samples counted on virtual threads' stacks */
    uint64_t vthread_dropped; /* samples of a carrier whose virtual thread unmounted first */
};
void cpu_sampler_get_stats(struct cpu_sampler_stats *out);

#endif

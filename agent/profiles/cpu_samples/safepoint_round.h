/* One round of the safepoint sampler (sampler=safepoint, and threads the async sampler does not
 * cover yet): which listed threads are due samples by their CPU time, their stacks by
 * GetThreadListStackTraces, and their traces handed to the profile (cpu_profile_add). A
 * producer that takes stacks itself; runs on the sampler thread only (sampler_thread.c). */
#ifndef HPROF_SAFEPOINT_ROUND_H
#define HPROF_SAFEPOINT_ROUND_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

struct thread_info;

/* What the rounds did, for verbose messages and measurements. */
struct safepoint_round_stats {
    uint64_t samples;         /* samples counted (cleared samples included) */
    uint64_t states;          /* threads looked at (GetThreadState) */
    uint64_t cpu_reads;       /* GetThreadCpuTime calls */
    uint64_t stacks;          /* stacks taken */
    uint64_t refunded;        /* samples put back: the thread went idle before its stack */
    uint64_t vthread_samples; /* samples counted on virtual threads' stacks */
    uint64_t vthread_dropped; /* samples of a carrier whose virtual thread unmounted first */
};

/* The context of the rounds, kept by the sampler thread from one round to the next. */
struct safepoint_round {
    int64_t interval_ns;            /* CPU time per sample */
    bool per_thread;                /* traces keyed by thread (thread=y) */
    const struct thread_info *self; /* the sampler's own thread, never sampled */
    struct safepoint_round_stats stats;
};

/* One round: samples the listed, enabled, uncovered threads by their CPU time since the last
 * round. */
void safepoint_round_run(jvmtiEnv *jvmti, JNIEnv *jni, struct safepoint_round *round);

#endif

/* State the sampler thread (sampler_thread.c) shares with its safepoint rounds
 * (safepoint_round.c): the thread list and its lock, the counts and the statistics. Internal to
 * cpu_samples/. */
#ifndef HPROF_SAMPLER_INTERNAL_H
#define HPROF_SAMPLER_INTERNAL_H

#include <jvmti.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carriers.h"
#include "cpu_activity.h"
#include "sampler_thread.h"
#include "thread_table.h"

/* With the async sampler, the CPU time a thread uses before signals sample it (rounds do
 * until then). */
#define YOUNG_CPU_NS INT64_C(20000000)

struct sampled_thread {
    jthread ref; /* global reference */
    struct thread_info *info;
    bool enabled;     /* CONTROL_CPU_SAMPLING_ON/OFF; guarded by sampler_list_lock */
    bool retired;     /* the thread ended; guarded by sampler_list_lock, freed by the sampler */
    bool fresh_start; /* switched on: forget its CPU credit; guarded by sampler_list_lock */
    struct carrier_slot carrier; /* the virtual thread it runs, if any (JDK 21+) */
    /* Its CPU-time timer's slot (cpu_timers.h), -1 when it has none; covered: the timer is
     * armed and signals sample it, not rounds. A thread starts with its timer disarmed and is
     * covered once it has used YOUNG_CPU_NS of CPU (doc/cpu-samples.md: the kernel checks CPU
     * timers at its tick, so a thread that lives less than a few ticks would get no signal).
     * Guarded by sampler_list_lock. */
    int32_t timer_slot;
    bool covered;
    /* Used by the sampler thread only. */
    struct cpu_credit credit;
    uint32_t due;   /* samples due this round */
    uint32_t trace; /* this round's trace, 0 = not counted */
    /* This round's stack is the mounted virtual thread's: its entry (thread=y), else NULL. */
    bool virtual_stack;
    struct thread_info *vthread_info;
};

/* sampler_list_lock guards the thread list (its entries' switches and flags), the sampler's
 * switches and life cycle (sampler_thread.c). */
extern pthread_mutex_t sampler_list_lock;
extern struct sampled_thread **sampler_list;
extern size_t sampler_list_len;

/* cpu_counts_lock guards the samples per trace and the published statistics. */
extern pthread_mutex_t cpu_counts_lock;
extern struct sample_counts *cpu_counts;
/* Updated by the sampler thread only. */
extern struct cpu_sampler_stats sampler_stats;

/* Set once by cpu_sampler_init. */
extern int64_t sampler_interval_ns;
extern bool sampler_per_thread;
/* The sampler's own thread, never sampled. */
extern _Atomic(struct thread_info *) sampler_self_info;

/* One round: samples the listed, enabled, uncovered threads by their CPU time since the last
 * round. Sampler thread only. */
void safepoint_round(jvmtiEnv *jvmti, JNIEnv *jni);

#endif

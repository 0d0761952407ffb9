/* cpu=samples' thread list: the threads the profile samples (kept from ThreadStart/ThreadEnd),
 * whether each has a CPU-time timer (cpu_timers.h) or is left to the safepoint rounds, and the
 * switches the socket CONTROL commands turn. The sampler thread (sampler_thread.c) waits here
 * for a switch to change and marks its rounds, so that a thread switched off gets no sample
 * once the command returns. Thread-safe: one lock guards the list, its entries' switches and
 * flags, and the stop request. */
#ifndef HPROF_SAMPLED_THREADS_H
#define HPROF_SAMPLED_THREADS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carriers.h"
#include "cpu_activity.h"
#include "cpu_credit.h"

struct thread_info;

/* With the async sampler, the CPU time a thread uses before signals sample it (rounds do
 * until then). */
#define SAMPLED_THREADS_YOUNG_CPU_NS INT64_C(20000000)

struct sampled_thread {
    jthread ref; /* global reference */
    struct thread_info *info;
    bool enabled;     /* CONTROL_CPU_SAMPLING_ON/OFF; guarded by the list lock */
    bool retired;     /* the thread ended; guarded by the list lock, freed by the sampler */
    bool fresh_start; /* switched on: forget its CPU credit; guarded by the list lock */
    struct carrier_slot carrier; /* the virtual thread it runs, if any (JDK 21+) */
    /* Its CPU-time timer's slot (cpu_timers.h), -1 when it has none; covered: the timer is
     * armed and signals sample it, not rounds. A thread starts with its timer disarmed and is
     * covered once it has used SAMPLED_THREADS_YOUNG_CPU_NS of CPU (doc/cpu-samples.md: the
     * kernel checks CPU timers at its tick, so a thread that lives less than a few ticks would
     * get no signal). Guarded by the list lock. */
    int32_t timer_slot;
    bool covered;
    /* Used by the sampler thread only (safepoint_round.c). */
    struct cpu_credit credit;
    uint32_t due;   /* samples due this round */
    uint32_t trace; /* this round's trace, 0 = not counted */
    /* This round's stack is the mounted virtual thread's: its entry (thread=y), else NULL. */
    bool virtual_stack;
    struct thread_info *vthread_info;
};

/* Returns false when out of resources. */
bool sampled_threads_init(void);

/* ThreadStart adds (and gives the thread its timer), ThreadEnd retires (the sampler thread
 * frees retired entries). */
void sampled_threads_started(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void sampled_threads_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Adds every live thread not listed yet (VM init, attach). */
void sampled_threads_add_live(jvmtiEnv *jvmti, JNIEnv *jni);
/* Gives the current thread (VM init's) a CPU-time timer when the async sampler runs. */
void sampled_threads_cover_current(jvmtiEnv *jvmti, JNIEnv *jni);

/* CONTROL_CPU_SAMPLING_ON/OFF. thread NULL: all threads (off pauses the sampler, on resumes
 * it and re-enables every thread); else that thread only (on also resumes a paused sampler).
 * Switching off waits (at most 2 s) for the round in progress, so that no sample of a thread
 * switched off is added after the call: OFF then CLEAR leaves the counts at zero. */
void sampled_threads_set_sampling(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool on);
/* Whether sampling is on (not paused), for CONTROL SETTINGS. */
bool sampled_threads_sampling(void);

/* ---- for the sampler thread only ---- */

/* The sampler's own thread is never sampled: its timer (if any) goes. */
void sampled_threads_forget_timer_of(JNIEnv *jni, const struct thread_info *self);
/* The signal was taken over: every thread is the rounds' again, its CPU since the last round
 * lost. */
void sampled_threads_uncover_all(void);
/* Frees the entries of ended threads. */
void sampled_threads_free_retired(JNIEnv *jni);
/* Listed threads the rounds must sample: enabled, alive, without a timer, not self. */
size_t sampled_threads_uncovered(const struct thread_info *self);
/* Waits until until_ns, a stop request, or a change of the list or the switches; paused: the
 * caller saw sampling paused (returns at once if it is on again), else on. */
void sampled_threads_wait(int64_t until_ns, bool paused);
/* A round starts and ends: set_sampling(off) waits for the end of a round in progress. */
void sampled_threads_round_begin(void);
void sampled_threads_round_end(void);
/* The threads a round looks at (listed, enabled, uncovered, not self), in an array owned here
 * and valid until the next call; credits of threads switched on again are reset. */
struct sampled_thread **sampled_threads_gather(const struct thread_info *self, size_t *n);
/* A thread with a timer that has grown up: its timer samples it from now on. */
void sampled_threads_cover_grown(struct sampled_thread *t);

/* The stop request (VM death): wakes a waiting sampler and a waiting switch. */
void sampled_threads_request_stop(void);
bool sampled_threads_stopping(void);

#endif

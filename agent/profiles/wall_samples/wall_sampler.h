/* wall=y's agent thread, "HPROF wall sampler": every wall_interval it visits a bounded batch of
 * the sampled threads (wall_threads.h), decides their state (wall_state.h), takes new stacks of
 * those that ran since their last visit (by signal for threads in Java code: wall_signals.h;
 * one GetStackTrace each for the others), reuses the last stack of
 * the others (virtual threads too: wall_vthreads.h), and counts the samples per trace (state
 * pseudo-frame on top). Owns the counts behind WALL SAMPLES. doc/wall-samples.md. */
#ifndef HPROF_WALL_SAMPLER_H
#define HPROF_WALL_SAMPLER_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* At most this many threads are visited per tick; with more, each is visited every
 * ceil(n / WALL_SAMPLER_BATCH) ticks and its samples weigh that many ticks. */
#define WALL_SAMPLER_BATCH 128

struct wall_sampler_stats {
    uint64_t ticks, missed;     /* ticks run; ticks skipped because the last one overran */
    uint64_t visits, walks;     /* thread visits; visits that took a new stack */
    uint64_t samples, left_out; /* samples counted; samples of states wall_states= leaves out */
    uint64_t cpu_ns, busy_ns, max_tick_ns; /* the sampler's CPU and wall time in ticks */
    uint64_t running_ns;
};

/* At start. False: out of memory. */
bool wall_sampler_init(int interval_ms, unsigned states, bool per_thread);
/* VM init: the pseudo-frames <wall>.<state>. */
void wall_sampler_prepare(void);
/* The tick a thread starting now starts in, and the time. */
int64_t wall_sampler_tick_now(uint64_t *now_ns);

bool wall_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni);
/* VM death: stops the thread, then credits every live thread up to now. */
void wall_sampler_stop(jvmtiEnv *jvmti, JNIEnv *jni);
/* ThreadEnd (on the ending thread): credits its last ticks, forgets it. */
void wall_sampler_thread_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* CONTROL: sampling of every thread on or off; whether it is on. */
void wall_sampler_set_on(bool on);
bool wall_sampler_on(void);
/* CONTROL_CLEAR_CPU_SAMPLES. */
void wall_sampler_clear(void);
/* A copy of the counts (rows malloc'ed, NULL when empty) and the total; returns the rows. */
size_t wall_sampler_snapshot(struct hprof_cost_row **rows, uint64_t *total);
void wall_sampler_get_stats(struct wall_sampler_stats *out);

#endif

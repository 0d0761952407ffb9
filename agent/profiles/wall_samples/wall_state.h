/* wall=y's pure rules, without JVMTI calls (unit-tested in tests/test_wall_samples.c): which
 * state a thread is in at a visit, how many samples the visit stands for, and whether its
 * last stack can be used again. doc/wall-samples.md says why. */
#ifndef HPROF_WALL_STATE_H
#define HPROF_WALL_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/* What the sampler remembers of a thread between two visits. */
struct wall_seen {
    int64_t tick;        /* the last tick credited (the thread's start tick at first) */
    uint64_t cpu_ns;     /* its CPU time at the last visit (or at its start) */
    uint64_t visit_ns;   /* monotonic time of the last visit (or of its start) */
    bool have_stack;     /* frames from an earlier walk are kept */
    int32_t jvmti_state; /* the JVMTI state bits seen at the last visit */
};

/* What one visit decided. */
struct wall_visit {
    enum hprof_wall_state state;
    uint64_t weight; /* samples: ticks since the last credit (0: nothing to count) */
    bool walk;       /* the thread ran since its last stack: take a new one */
};

/* The state of a thread whose JVMTI state is jvmti_state and which used cpu_delta_ns of CPU in
 * the last wall_delta_ns: a RUNNABLE thread (in Java, the VM or a native method) is running
 * when it was on the CPU for at least half of that time. */
enum hprof_wall_state wall_state_of(int32_t jvmti_state, uint64_t cpu_delta_ns,
                                    uint64_t wall_delta_ns);

/* The tick a monotonic time falls in, ticks of interval_ns counted from t0_ns. */
int64_t wall_state_tick(uint64_t t0_ns, uint64_t now_ns, uint64_t interval_ns);

/* A visit at tick now_tick, at now_ns, of a thread with jvmti_state and CPU time cpu_ns:
 * fills *out and moves *seen on (the caller sets have_stack once it has frames). A thread
 * whose CPU time has not moved since its last visit has not run: its stack is the same. */
void wall_state_visit(struct wall_seen *seen, int32_t jvmti_state, uint64_t cpu_ns, uint64_t now_ns,
                      int64_t now_tick, struct wall_visit *out);

/* The same for a virtual thread, which has no CPU time in JVMTI: RUNNABLE counts as running
 * (mounted, or queued for a carrier: JVMTI cannot tell), and its last stack is reused while it
 * stays unmounted in the same JVMTI state (parked, sleeping, waiting, blocked): an unmounted
 * virtual thread has not run. */
void wall_state_visit_virtual(struct wall_seen *seen, int32_t jvmti_state, uint64_t now_ns,
                              int64_t now_tick, struct wall_visit *out);

/* Of a visit's weight samples, how many go to the trace of the last visit when the trace
 * changed (changed): the older half, rounded down; 0 when it did not. */
uint64_t wall_state_split(uint64_t weight, bool changed);

#endif

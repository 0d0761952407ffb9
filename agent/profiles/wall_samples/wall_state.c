/* wall=y's pure rules (wall_state.h). */
#include "wall_state.h"

#include <jvmti.h>

enum hprof_wall_state wall_state_of(int32_t jvmti_state, uint64_t cpu_delta_ns,
                                    uint64_t wall_delta_ns)
{
    if (jvmti_state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        return HPROF_WALL_BLOCKED;
    if (jvmti_state & JVMTI_THREAD_STATE_WAITING) {
        if (jvmti_state & JVMTI_THREAD_STATE_PARKED)
            return HPROF_WALL_PARKED;
        if (jvmti_state & JVMTI_THREAD_STATE_SLEEPING)
            return HPROF_WALL_SLEEPING;
        return HPROF_WALL_WAITING;
    }
    /* RUNNABLE: the flag alone cannot tell a read() from a computation (doc/cpu-samples.md,
     * "What a sample is"); the CPU time it used can. */
    bool on_cpu = wall_delta_ns > 0 && cpu_delta_ns >= wall_delta_ns / 2;
    if (on_cpu)
        return HPROF_WALL_RUNNING;
    return (jvmti_state & JVMTI_THREAD_STATE_IN_NATIVE) ? HPROF_WALL_NATIVE : HPROF_WALL_RUNNABLE;
}

uint64_t wall_state_split(uint64_t weight, bool changed)
{
    return changed ? weight / 2 : 0;
}

int64_t wall_state_tick(uint64_t t0_ns, uint64_t now_ns, uint64_t interval_ns)
{
    if (now_ns <= t0_ns || interval_ns == 0)
        return 0;
    return (int64_t)((now_ns - t0_ns) / interval_ns);
}

void wall_state_visit(struct wall_seen *seen, int32_t jvmti_state, uint64_t cpu_ns, uint64_t now_ns,
                      int64_t now_tick, struct wall_visit *out)
{
    uint64_t cpu_delta = cpu_ns > seen->cpu_ns ? cpu_ns - seen->cpu_ns : 0;
    uint64_t wall_delta = now_ns > seen->visit_ns ? now_ns - seen->visit_ns : 0;
    out->state = wall_state_of(jvmti_state, cpu_delta, wall_delta);
    out->weight = now_tick > seen->tick ? (uint64_t)(now_tick - seen->tick) : 0;
    /* Not run (same CPU time): same frames, whatever its state says now (a thread woken but
     * not yet scheduled is RUNNABLE with the stack it blocked in). */
    out->walk = !seen->have_stack || cpu_ns != seen->cpu_ns;
    if (now_tick > seen->tick)
        seen->tick = now_tick;
    seen->cpu_ns = cpu_ns;
    seen->visit_ns = now_ns;
    seen->jvmti_state = jvmti_state;
}

void wall_state_visit_virtual(struct wall_seen *seen, int32_t jvmti_state, uint64_t now_ns,
                              int64_t now_tick, struct wall_visit *out)
{
    bool runnable = (jvmti_state & JVMTI_THREAD_STATE_RUNNABLE) != 0;
    /* No CPU clock: a RUNNABLE virtual thread is taken as on the CPU (1 ns of 1 ns). */
    out->state = wall_state_of(jvmti_state, runnable ? 1 : 0, 1);
    out->weight = now_tick > seen->tick ? (uint64_t)(now_tick - seen->tick) : 0;
    out->walk = !seen->have_stack || runnable || jvmti_state != seen->jvmti_state;
    if (now_tick > seen->tick)
        seen->tick = now_tick;
    seen->visit_ns = now_ns;
    seen->jvmti_state = jvmti_state;
}

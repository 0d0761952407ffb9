/* Unit tests of wall=y's pure parts (agent/profiles/wall_samples/wall_state.c): the state a
 * visit records, the ticks a visit stands for, when the last stack is reused; and the
 * wall_states= list of the option parser. */
#include "check_helpers.h"
#include <check.h>
#include <jvmti.h>
#include <stdint.h>
#include <string.h>

#include "options.h"
#include "wall_state.h"

#define MS UINT64_C(1000000)
#define ALIVE JVMTI_THREAD_STATE_ALIVE
#define RUNNABLE (ALIVE | JVMTI_THREAD_STATE_RUNNABLE)
#define WAITING (ALIVE | JVMTI_THREAD_STATE_WAITING)

START_TEST(blocked_waiting_parked_sleeping_whatever_the_cpu)
{
    jint blocked = ALIVE | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER;
    jint wait =
        WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY | JVMTI_THREAD_STATE_IN_OBJECT_WAIT;
    jint park = WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT | JVMTI_THREAD_STATE_PARKED;
    jint sleep = WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT | JVMTI_THREAD_STATE_SLEEPING;
    jint join = WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY;
    /* Even with CPU used since the last visit (it ran, then blocked): the state now wins. */
    for (uint64_t cpu = 0; cpu <= 20 * MS; cpu += 20 * MS) {
        ck_assert_int_eq(wall_state_of(blocked, cpu, 20 * MS), HPROF_WALL_BLOCKED);
        ck_assert_int_eq(wall_state_of(wait, cpu, 20 * MS), HPROF_WALL_WAITING);
        ck_assert_int_eq(wall_state_of(park, cpu, 20 * MS), HPROF_WALL_PARKED);
        ck_assert_int_eq(wall_state_of(sleep, cpu, 20 * MS), HPROF_WALL_SLEEPING);
        ck_assert_int_eq(wall_state_of(join, cpu, 20 * MS), HPROF_WALL_WAITING);
    }
}
END_TEST

START_TEST(runnable_splits_on_the_cpu_it_used)
{
    jint native = RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE;
    /* Half the interval or more on the CPU: running, in Java or in native code. */
    ck_assert_int_eq(wall_state_of(RUNNABLE, 20 * MS, 20 * MS), HPROF_WALL_RUNNING);
    ck_assert_int_eq(wall_state_of(RUNNABLE, 10 * MS, 20 * MS), HPROF_WALL_RUNNING);
    ck_assert_int_eq(wall_state_of(native, 15 * MS, 20 * MS), HPROF_WALL_RUNNING);
    /* Less: waiting for a CPU (Java) or for I/O (native). */
    ck_assert_int_eq(wall_state_of(RUNNABLE, 10 * MS - 1, 20 * MS), HPROF_WALL_RUNNABLE);
    ck_assert_int_eq(wall_state_of(RUNNABLE, 0, 20 * MS), HPROF_WALL_RUNNABLE);
    ck_assert_int_eq(wall_state_of(native, 0, 20 * MS), HPROF_WALL_NATIVE);
    ck_assert_int_eq(wall_state_of(native, 1 * MS, 20 * MS), HPROF_WALL_NATIVE);
    /* No time elapsed: nothing says it was on the CPU. */
    ck_assert_int_eq(wall_state_of(native, 5 * MS, 0), HPROF_WALL_NATIVE);
}
END_TEST

START_TEST(ticks_count_from_t0)
{
    uint64_t t0 = 1000 * MS;
    ck_assert_int_eq(wall_state_tick(t0, t0, 20 * MS), 0);
    ck_assert_int_eq(wall_state_tick(t0, t0 - 5, 20 * MS), 0);
    ck_assert_int_eq(wall_state_tick(t0, t0 + 20 * MS - 1, 20 * MS), 0);
    ck_assert_int_eq(wall_state_tick(t0, t0 + 20 * MS, 20 * MS), 1);
    ck_assert_int_eq(wall_state_tick(t0, t0 + 1000 * MS, 20 * MS), 50);
    ck_assert_int_eq(wall_state_tick(t0, t0 + 1000 * MS, 0), 0);
}
END_TEST

START_TEST(a_visit_weighs_the_ticks_since_the_last)
{
    struct wall_seen s = {.tick = 10, .cpu_ns = 5 * MS, .visit_ns = 200 * MS};
    struct wall_visit v;
    /* First visit 3 ticks after the start: 3 samples, a walk (no stack yet). */
    wall_state_visit(&s, RUNNABLE, 60 * MS, 260 * MS, 13, &v);
    ck_assert_uint_eq(v.weight, 3);
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_RUNNING);
    ck_assert_int_eq(s.tick, 13);
    ck_assert_uint_eq(s.cpu_ns, 60 * MS);
    ck_assert_uint_eq(s.visit_ns, 260 * MS);
    /* The same tick again (a visit the batch brought round early): no sample. */
    wall_state_visit(&s, RUNNABLE, 61 * MS, 261 * MS, 13, &v);
    ck_assert_uint_eq(v.weight, 0);
    /* Ticks the sampler skipped count at the next visit: total = ticks of the life. */
    s.have_stack = true;
    wall_state_visit(&s, RUNNABLE, 61 * MS, 400 * MS, 20, &v);
    ck_assert_uint_eq(v.weight, 7);
    ck_assert_int_eq(s.tick, 20);
}
END_TEST

START_TEST(a_thread_that_did_not_run_reuses_its_stack)
{
    struct wall_seen s = {.tick = 0, .cpu_ns = 7 * MS, .visit_ns = 0, .have_stack = true};
    struct wall_visit v;
    jint park = WAITING | JVMTI_THREAD_STATE_PARKED;
    /* Same CPU time: no walk, whatever the state says (woken but not yet scheduled). */
    wall_state_visit(&s, park, 7 * MS, 20 * MS, 1, &v);
    ck_assert(!v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_PARKED);
    wall_state_visit(&s, RUNNABLE, 7 * MS, 40 * MS, 2, &v);
    ck_assert(!v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_RUNNABLE);
    /* One nanosecond of CPU: it ran, its stack may have changed. */
    wall_state_visit(&s, park, 7 * MS + 1, 60 * MS, 3, &v);
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_PARKED);
    /* No stack kept (a walk failed, or the depth changed): walk even if it did not run. */
    s.have_stack = false;
    wall_state_visit(&s, park, 7 * MS + 1, 80 * MS, 4, &v);
    ck_assert(v.walk);
}
END_TEST

START_TEST(a_virtual_thread_reuses_its_stack_while_unmounted_in_one_state)
{
    struct wall_seen s = {.tick = 0, .visit_ns = 0, .have_stack = false};
    struct wall_visit v;
    jint sleep = WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT | JVMTI_THREAD_STATE_SLEEPING;
    jint park = WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY | JVMTI_THREAD_STATE_PARKED;
    wall_state_visit_virtual(&s, sleep, 20 * MS, 1, &v); /* first visit: no stack yet */
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_SLEEPING);
    ck_assert_uint_eq(v.weight, 1);
    s.have_stack = true;
    wall_state_visit_virtual(&s, sleep, 80 * MS, 4, &v); /* still asleep: same frames */
    ck_assert(!v.walk);
    ck_assert_uint_eq(v.weight, 3);
    wall_state_visit_virtual(&s, park, 100 * MS, 5, &v); /* another state: it ran between */
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_PARKED);
    /* RUNNABLE (mounted or queued for a carrier): running, and always walked. */
    wall_state_visit_virtual(&s, RUNNABLE, 120 * MS, 6, &v);
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_RUNNING);
    wall_state_visit_virtual(&s, RUNNABLE, 140 * MS, 7, &v);
    ck_assert(v.walk);
    ck_assert_int_eq(v.state, HPROF_WALL_RUNNING);
    wall_state_visit_virtual(&s, RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE, 160 * MS, 8, &v);
    ck_assert_int_eq(v.state, HPROF_WALL_RUNNING); /* on its carrier, in native code */
}
END_TEST

START_TEST(a_changed_trace_splits_the_gap_at_its_midpoint)
{
    ck_assert_uint_eq(wall_state_split(1, true), 0); /* one tick: all to what is seen now */
    ck_assert_uint_eq(wall_state_split(2, true), 1);
    ck_assert_uint_eq(wall_state_split(7, true), 3);
    ck_assert_uint_eq(wall_state_split(7, false), 0);
    ck_assert_uint_eq(wall_state_split(0, true), 0);
}
END_TEST

START_TEST(wall_states_option_parses_names_joined_by_plus)
{
    unsigned m = 0;
    ck_assert(options_parse_wall_states("blocked+waiting+native", &m));
    ck_assert_uint_eq(m, (1u << HPROF_WALL_BLOCKED) | (1u << HPROF_WALL_WAITING) |
                             (1u << HPROF_WALL_NATIVE));
    ck_assert(options_parse_wall_states("running", &m));
    ck_assert_uint_eq(m, 1u << HPROF_WALL_RUNNING);
    for (unsigned s = 0; s < HPROF_WALL_NSTATES; s++) {
        ck_assert(options_parse_wall_states(options_wall_state_name(s), &m));
        ck_assert_uint_eq(m, 1u << s);
    }
    ck_assert_ptr_null(options_wall_state_name(HPROF_WALL_NSTATES));
    m = 99;
    ck_assert(!options_parse_wall_states("", &m));
    ck_assert(!options_parse_wall_states("blocked+", &m));
    ck_assert(!options_parse_wall_states("blocke", &m));
    ck_assert(!options_parse_wall_states("blocked+nope", &m));
    ck_assert_uint_eq(m, 99); /* untouched on errors */

    struct hprof_options o;
    struct hprof_error e = options_parse("wall=y,wall_interval=5,wall_states=parked+sleeping,"
                                         "wall_names=pool-*",
                                         &o);
    ck_assert(!hprof_failed(&e));
    ck_assert(o.wall);
    ck_assert(!o.heap_dump && !o.heap_sites); /* wall=y alone is a profile: no heap=all */
    ck_assert_int_eq(o.wall_interval_ms, 5);
    ck_assert_uint_eq(o.wall_states, (1u << HPROF_WALL_PARKED) | (1u << HPROF_WALL_SLEEPING));
    ck_assert_str_eq(o.wall_names, "pool-*");
    options_free(&o);
    e = options_parse("wall=y,wall_states=idle", &o);
    ck_assert(hprof_failed(&e));
    ck_assert_ptr_nonnull(strstr(e.text, "wall_states option value must be"));
    e = options_parse("wall=y,wall_interval=0", &o);
    ck_assert(hprof_failed(&e));
    e = options_parse("wal=y", &o);
    ck_assert(hprof_failed(&e));
    ck_assert_ptr_nonnull(strstr(e.text, "wall_names"));
    e = options_parse("", &o);
    ck_assert(!o.wall);
    ck_assert_int_eq(o.wall_interval_ms, HPROF_WALL_DEFAULT_INTERVAL_MS);
    ck_assert_uint_eq(o.wall_states, HPROF_WALL_ALL_STATES);
    options_free(&o);
}
END_TEST

int main(void)
{
    return run_tests("wall-samples", "core", 60,
                     TESTS(blocked_waiting_parked_sleeping_whatever_the_cpu,
                           runnable_splits_on_the_cpu_it_used, ticks_count_from_t0,
                           a_visit_weighs_the_ticks_since_the_last,
                           a_thread_that_did_not_run_reuses_its_stack,
                           a_virtual_thread_reuses_its_stack_while_unmounted_in_one_state,
                           a_changed_trace_splits_the_gap_at_its_midpoint,
                           wall_states_option_parses_names_joined_by_plus));
}

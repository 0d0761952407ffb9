/* Unit tests of monitor=y's pure parts: the contention table, the nanosecond -> millisecond
 * MONITOR TIME rows (the JDK 8 agent divided milliseconds as if they were nanoseconds), and
 * the thread status letters. */
#include "check_helpers.h"
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti_util.h"
#include "contention.h"

#define MS 1000000ull /* nanoseconds */

static const struct contention_row *find(const struct contention_row *rows, size_t n, uint32_t cls,
                                         uint32_t trace)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].class_serial == cls && rows[i].trace_serial == trace)
            return &rows[i];
    return NULL;
}

START_TEST(contention_rows_add_up_per_class_and_trace)
{
    struct contention_table *t = contention_new();
    ck_assert_ptr_nonnull(t);
    struct contention_row *rows = NULL;
    uint64_t total = 99;
    ck_assert_uint_eq(contention_snapshot(t, &rows, &total), 0);
    ck_assert_ptr_null(rows);
    ck_assert_uint_eq(total, 0);

    ck_assert_int_eq(contention_add(t, 7, 3, 50 * MS), 0);
    ck_assert_int_eq(contention_add(t, 7, 3, 25 * MS), 0);
    ck_assert_int_eq(contention_add(t, 7, 4, 1), 0);  /* same class, other trace */
    ck_assert_int_eq(contention_add(t, 8, 3, 10), 0); /* other class, same trace */
    size_t n = contention_snapshot(t, &rows, &total);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(total, 75 * MS + 11);
    const struct contention_row *r = find(rows, n, 7, 3);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->count, 2);
    ck_assert_uint_eq(r->ns, 75 * MS);
    r = find(rows, n, 7, 4);
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->ns, 1);
    r = find(rows, n, 8, 3);
    ck_assert_uint_eq(r->count, 1);
    ck_assert_uint_eq(r->ns, 10);
    free(rows);
    contention_free(t);
}
END_TEST

struct adder_arg {
    struct contention_table *t;
    uint32_t trace;
};

static void *adder(void *p)
{
    struct adder_arg *a = p;
    for (int i = 0; i < 20000; i++)
        contention_add(a->t, 1 + (uint32_t)(i % 5), a->trace, 1000);
    return NULL;
}

START_TEST(contention_is_thread_safe)
{
    struct contention_table *t = contention_new();
    pthread_t th[4];
    struct adder_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct adder_arg){t, (uint32_t)(i % 2) + 1};
        pthread_create(&th[i], NULL, adder, &args[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    struct contention_row *rows = NULL;
    uint64_t total = 0;
    size_t n = contention_snapshot(t, &rows, &total);
    ck_assert_uint_eq(n, 10); /* 5 classes x 2 traces */
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(rows[i].count, 8000); /* 2 threads x 20000 / 5 */
        count += rows[i].count;
    }
    ck_assert_uint_eq(count, 80000);
    ck_assert_uint_eq(total, 80000ull * 1000);
    free(rows);
    contention_free(t);
}
END_TEST

START_TEST(ns_to_ms_rounds_half_up)
{
    ck_assert_uint_eq(monitor_ns_to_ms(0), 0);
    ck_assert_uint_eq(monitor_ns_to_ms(499999), 0);
    ck_assert_uint_eq(monitor_ns_to_ms(500000), 1);
    ck_assert_uint_eq(monitor_ns_to_ms(1 * MS), 1);
    ck_assert_uint_eq(monitor_ns_to_ms(1499999), 1);
    ck_assert_uint_eq(monitor_ns_to_ms(300 * MS), 300);
    /* An hour of contention stays an hour (no 32-bit overflow). */
    ck_assert_uint_eq(monitor_ns_to_ms(3600000ull * MS), 3600000);
}
END_TEST

/* The old agent's fault: 1 s of contention printed as total = 0 and no rows. */
START_TEST(monitor_time_is_in_milliseconds)
{
    struct hprof_cost_row rows[] = {
        {.trace_serial = 5, .count = 19, .cost = 750 * MS, .method = "Lock"},
        {.trace_serial = 6, .count = 1, .cost = 250 * MS, .method = "java.lang.Object"},
    };
    uint64_t total_ms = 0;
    size_t keep = contention_time_rows(rows, 2, 1000 * MS, 0.0001, &total_ms);
    ck_assert_uint_eq(keep, 2);
    ck_assert_uint_eq(total_ms, 1000);
    ck_assert_uint_eq(rows[0].cost, 750);
    ck_assert_uint_eq(rows[0].count, 19);
    ck_assert_str_eq(rows[0].method, "Lock");
    ck_assert_uint_eq(rows[1].cost, 250);
}
END_TEST

START_TEST(monitor_time_ranks_and_cuts_on_nanoseconds)
{
    /* Given smallest first; the cutoff 0.01 of 100.05 ms drops the 0.9 ms row (0.9%) even
     * though it rounds to 1 ms, and keeps the 2 ms row. */
    struct hprof_cost_row rows[] = {
        {.trace_serial = 9, .count = 1, .cost = 900000, .method = "C"},
        {.trace_serial = 8, .count = 2, .cost = 2 * MS, .method = "B"},
        {.trace_serial = 7, .count = 3, .cost = 97 * MS + 150000, .method = "A"},
    };
    uint64_t total_ns = 900000 + 2 * MS + 97 * MS + 150000;
    uint64_t total_ms = 0;
    size_t keep = contention_time_rows(rows, 3, total_ns, 0.01, &total_ms);
    ck_assert_uint_eq(keep, 2);
    ck_assert_str_eq(rows[0].method, "A");
    ck_assert_uint_eq(rows[0].cost, 97);
    ck_assert_str_eq(rows[1].method, "B");
    ck_assert_uint_eq(rows[1].cost, 2);
    ck_assert_uint_eq(total_ms, 100);
}
END_TEST

START_TEST(monitor_time_total_covers_rounded_rows)
{
    /* Three rows of 0.6 ms round to 1 ms each; the total (1.8 ms -> 2) is raised to 3 so
     * the accumulated percentage ends at 100%, not 150%. */
    struct hprof_cost_row rows[] = {
        {.trace_serial = 2, .count = 1, .cost = 600000, .method = "A"},
        {.trace_serial = 3, .count = 1, .cost = 600000, .method = "B"},
        {.trace_serial = 4, .count = 1, .cost = 600000, .method = "C"},
    };
    uint64_t total_ms = 0;
    size_t keep = contention_time_rows(rows, 3, 1800000, 0.0001, &total_ms);
    ck_assert_uint_eq(keep, 3);
    ck_assert_uint_eq(total_ms, 3);
    /* Nothing contended: no rows, total 0. */
    ck_assert_uint_eq(contention_time_rows(rows, 0, 0, 0.0001, &total_ms), 0);
    ck_assert_uint_eq(total_ms, 0);
}
END_TEST

START_TEST(status_letters_from_jvmti_state)
{
    const jint alive = JVMTI_THREAD_STATE_ALIVE;
    const struct {
        jint state;
        unsigned want;
    } cases[] = {
        {alive | JVMTI_THREAD_STATE_RUNNABLE, HPROF_TS_RUNNABLE},
        {alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE, HPROF_TS_RUNNABLE},
        {alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER, HPROF_TS_MONITOR_WAIT},
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
             JVMTI_THREAD_STATE_IN_OBJECT_WAIT,
         HPROF_TS_COND_WAIT},
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT |
             JVMTI_THREAD_STATE_PARKED,
         HPROF_TS_COND_WAIT},
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT |
             JVMTI_THREAD_STATE_SLEEPING,
         HPROF_TS_SLEEPING},
        {JVMTI_THREAD_STATE_TERMINATED, HPROF_TS_ZOMBIE},
        {0, 0}, /* new: not started */
        {alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER | JVMTI_THREAD_STATE_SUSPENDED |
             JVMTI_THREAD_STATE_INTERRUPTED,
         HPROF_TS_MONITOR_WAIT | HPROF_TS_SUSPENDED | HPROF_TS_INTERRUPTED},
        {alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_INTERRUPTED,
         HPROF_TS_RUNNABLE | HPROF_TS_INTERRUPTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_msg(contention_thread_status(cases[i].state) == cases[i].want,
                      "case %zu: state 0x%x: got 0x%x, want 0x%x", i, (unsigned)cases[i].state,
                      contention_thread_status(cases[i].state), cases[i].want);
}
END_TEST

/* The bit jvmti_util_caps_set_virtual_threads sets is the JDK 21+ can_support_virtual_threads
 * field: byte 5, bit 4 on little-endian targets (read off the JDK 25 jvmti.h), and nothing
 * else. Built against a JDK 21+ header, the field itself is compared too. */
START_TEST(virtual_thread_capability_bit)
{
    jvmtiCapabilities caps, none;
    memset(&caps, 0, sizeof caps);
    memset(&none, 0, sizeof none);
    ck_assert(!jvmti_util_caps_has_virtual_threads(&caps));
    jvmti_util_caps_set_virtual_threads(&caps);
    ck_assert(jvmti_util_caps_has_virtual_threads(&caps));
    const unsigned char *b = (const unsigned char *)&caps;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < sizeof caps; i++)
        ck_assert_uint_eq(b[i], i == 5 ? 0x10 : 0);
#endif
    /* Neighbours stay as they were. */
    caps.can_generate_sampled_object_alloc_events = 1;
    caps.can_tag_objects = 1;
    ck_assert(jvmti_util_caps_has_virtual_threads(&caps));
    none.can_generate_sampled_object_alloc_events = 1;
    none.can_tag_objects = 1;
    ck_assert(!jvmti_util_caps_has_virtual_threads(&none));
#ifdef HPROF_HAVE_VT_CAPABILITY_FIELD
    jvmtiCapabilities real;
    memset(&real, 0, sizeof real);
    real.can_support_virtual_threads = 1;
    ck_assert(jvmti_util_caps_has_virtual_threads(&real));
    memset(&caps, 0, sizeof caps);
    jvmti_util_caps_set_virtual_threads(&caps);
    ck_assert_int_eq(memcmp(&caps, &real, sizeof caps), 0);
#endif
    (void)b;
}
END_TEST

int main(void)
{
    return run_tests("monitors", "core", 60,
                     TESTS(contention_rows_add_up_per_class_and_trace, contention_is_thread_safe,
                           ns_to_ms_rounds_half_up, monitor_time_is_in_milliseconds,
                           monitor_time_ranks_and_cuts_on_nanoseconds,
                           monitor_time_total_covers_rounded_rows, status_letters_from_jvmti_state,
                           virtual_thread_capability_bit));
}

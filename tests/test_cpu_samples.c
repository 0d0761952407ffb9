/* Unit tests of the pure parts of cpu=samples: the trace -> count table, the thread states
 * that can use the CPU, and the CPU credit that turns CPU time into samples. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu_activity.h"
#include "ranking.h"
#include "sample_counts.h"

#define MS INT64_C(1000000)
/* u values for cpu_credit_update: never / always round a fraction up. */
#define NEVER 0.999999999
#define ALWAYS 0.0

START_TEST(counts_add_get_total)
{
    struct sample_counts *c = sample_counts_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(sample_counts_add(c, 7, 3), 0);
    ck_assert_int_eq(sample_counts_add(c, 7, 2), 0);
    ck_assert_int_eq(sample_counts_add(c, 9, 1), 0);
    ck_assert_int_eq(sample_counts_add(c, 0, 5), 0); /* serial 0 is never a trace: ignored */
    ck_assert_int_eq(sample_counts_add(c, 11, 0), 0);
    ck_assert_uint_eq(sample_counts_get(c, 7), 5);
    ck_assert_uint_eq(sample_counts_get(c, 9), 1);
    ck_assert_uint_eq(sample_counts_get(c, 11), 0);
    ck_assert_uint_eq(sample_counts_get(c, 0), 0);
    ck_assert_uint_eq(sample_counts_total(c), 6);
    ck_assert_uint_eq(sample_counts_traces(c), 2);
    sample_counts_free(c);
}
END_TEST

START_TEST(counts_grow_keeps_every_count)
{
    struct sample_counts *c = sample_counts_new();
    for (uint32_t s = 1; s <= 100000; s++)
        ck_assert_int_eq(sample_counts_add(c, s, s % 7 + 1), 0);
    for (uint32_t s = 1; s <= 100000; s += 3) /* again, after every growth */
        ck_assert_int_eq(sample_counts_add(c, s, 1), 0);
    uint64_t total = 0;
    for (uint32_t s = 1; s <= 100000; s++) {
        uint64_t want = s % 7 + 1 + ((s - 1) % 3 == 0 ? 1 : 0);
        ck_assert_uint_eq(sample_counts_get(c, s), want);
        total += want;
    }
    ck_assert_uint_eq(sample_counts_total(c), total);
    ck_assert_uint_eq(sample_counts_traces(c), 100000);
    ck_assert_uint_eq(sample_counts_get(c, 100001), 0);
    sample_counts_free(c);
}
END_TEST

START_TEST(counts_clear_forgets_everything)
{
    struct sample_counts *c = sample_counts_new();
    for (uint32_t s = 1; s <= 1000; s++)
        sample_counts_add(c, s, 2);
    sample_counts_clear(c);
    ck_assert_uint_eq(sample_counts_total(c), 0);
    ck_assert_uint_eq(sample_counts_traces(c), 0);
    ck_assert_uint_eq(sample_counts_get(c, 500), 0);
    struct hprof_cost_row rows[4];
    ck_assert_uint_eq(sample_counts_rows(c, rows, 4), 0);
    sample_counts_add(c, 500, 1); /* usable after a clear */
    ck_assert_uint_eq(sample_counts_get(c, 500), 1);
    ck_assert_uint_eq(sample_counts_total(c), 1);
    sample_counts_free(c);
}
END_TEST

START_TEST(counts_rows_rank_with_cutoff)
{
    struct sample_counts *c = sample_counts_new();
    sample_counts_add(c, 5, 75);
    sample_counts_add(c, 3, 25);
    sample_counts_add(c, 8, 1);
    struct hprof_cost_row rows[8];
    size_t n = sample_counts_rows(c, rows, 8);
    ck_assert_uint_eq(n, 3);
    /* cutoff 0.05 of 101 samples: the row of 1 is left out. */
    size_t keep = ranking_sort_and_cut(rows, n, sample_counts_total(c), 0.05);
    ck_assert_uint_eq(keep, 2);
    ck_assert_uint_eq(rows[0].trace_serial, 5);
    ck_assert_uint_eq(rows[0].count, 75);
    ck_assert_uint_eq(rows[0].cost, 75);
    ck_assert_ptr_null(rows[0].method);
    ck_assert_uint_eq(rows[1].trace_serial, 3);
    ck_assert_uint_eq(rows[2].trace_serial, 8);
    /* max limits the rows written */
    ck_assert_uint_eq(sample_counts_rows(c, rows, 2), 2);
    sample_counts_free(c);
}
END_TEST

START_TEST(states_that_can_use_the_cpu)
{
    const jint alive = JVMTI_THREAD_STATE_ALIVE;
    ck_assert_int_eq(cpu_activity_of_state(alive | JVMTI_THREAD_STATE_RUNNABLE), CPU_RUNNING_JAVA);
    ck_assert_int_eq(
        cpu_activity_of_state(alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE),
        CPU_IN_NATIVE);
    ck_assert_int_eq(
        cpu_activity_of_state(alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_INTERRUPTED),
        CPU_RUNNING_JAVA);
    /* Thread.sleep, LockSupport.park, Object.wait, monitor entry, suspended, dead, new */
    ck_assert_int_eq(cpu_activity_of_state(alive | JVMTI_THREAD_STATE_WAITING |
                                           JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT |
                                           JVMTI_THREAD_STATE_SLEEPING),
                     CPU_IDLE);
    ck_assert_int_eq(cpu_activity_of_state(alive | JVMTI_THREAD_STATE_WAITING |
                                           JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
                                           JVMTI_THREAD_STATE_PARKED),
                     CPU_IDLE);
    ck_assert_int_eq(cpu_activity_of_state(alive | JVMTI_THREAD_STATE_WAITING |
                                           JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
                                           JVMTI_THREAD_STATE_IN_OBJECT_WAIT),
                     CPU_IDLE);
    ck_assert_int_eq(cpu_activity_of_state(alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER),
                     CPU_IDLE);
    ck_assert_int_eq(
        cpu_activity_of_state(alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_SUSPENDED),
        CPU_IDLE);
    ck_assert_int_eq(cpu_activity_of_state(JVMTI_THREAD_STATE_TERMINATED), CPU_IDLE);
    ck_assert_int_eq(cpu_activity_of_state(0), CPU_IDLE);
}
END_TEST

START_TEST(credit_turns_cpu_time_into_samples)
{
    struct cpu_credit c = {0};
    /* The first reading is only a baseline, whatever the thread used before. */
    ck_assert_uint_eq(cpu_credit_update(&c, 500 * MS, 10 * MS, ALWAYS), 0);
    ck_assert_uint_eq(cpu_credit_update(&c, 525 * MS, 10 * MS, NEVER), 2); /* 25 ms: 2, 5 left */
    ck_assert_uint_eq(cpu_credit_update(&c, 529 * MS, 10 * MS, NEVER), 0); /* 9 ms left */
    ck_assert_uint_eq(cpu_credit_update(&c, 531 * MS, 10 * MS, NEVER), 1); /* 11: 1, 1 left */
    /* A thread blocked in read() uses almost nothing: no sample for a long time. */
    for (int i = 1; i <= 1000; i++)
        ck_assert_uint_eq(cpu_credit_update(&c, 531 * MS + i * 1000, 10 * MS, NEVER), 0);
    /* 1 ms + 1000 us: 2 ms of credit; 8 ms more make one sample. */
    ck_assert_uint_eq(cpu_credit_update(&c, 540 * MS, 10 * MS, NEVER), 1);
    ck_assert_int_eq(c.credit_ns, 0);
}
END_TEST

START_TEST(credit_rounds_fractions_at_random)
{
    struct cpu_credit c = {0};
    cpu_credit_from_start(&c); /* seen from its start: its first 3 ms count */
    ck_assert_uint_eq(cpu_credit_update(&c, 3 * MS, 10 * MS, 0.29), 1);    /* 0.29 < 0.3 */
    ck_assert_int_eq(c.credit_ns, -7 * MS);                                /* paid ahead */
    ck_assert_uint_eq(cpu_credit_update(&c, 10 * MS, 10 * MS, ALWAYS), 0); /* back at 0 */
    ck_assert_uint_eq(cpu_credit_update(&c, 13 * MS, 10 * MS, 0.31), 0);   /* 0.31 >= 0.3 */
    ck_assert_int_eq(c.credit_ns, 3 * MS);
    /* Many threads that each live 0.3 intervals of CPU time: about 0.3 samples each. */
    uint32_t total = 0;
    const int n = 10000;
    for (int i = 0; i < n; i++) {
        struct cpu_credit t = {0};
        cpu_credit_from_start(&t);
        double u = (double)i * 0.6180339887498949;
        total += cpu_credit_update(&t, 3 * MS, 10 * MS, u - (double)(int64_t)u);
    }
    ck_assert_uint_ge(total, (uint32_t)(n * 0.29));
    ck_assert_uint_le(total, (uint32_t)(n * 0.31));
    /* A steady thread: the expected count is exact whatever the rounding. */
    struct cpu_credit busy = {0};
    cpu_credit_update(&busy, 0, 10 * MS, ALWAYS);
    uint32_t samples = 0;
    for (int i = 1; i <= 1000; i++) {
        double u = (double)i * 0.6180339887498949;
        samples += cpu_credit_update(&busy, (int64_t)i * 9 * MS, 10 * MS, u - (double)(int64_t)u);
    }
    ck_assert_uint_ge(samples, 899); /* 9000 ms of CPU time at 10 ms */
    ck_assert_uint_le(samples, 901);
}
END_TEST

START_TEST(credit_refund_reset_and_guards)
{
    struct cpu_credit c = {0};
    cpu_credit_update(&c, 0, 10 * MS, ALWAYS);
    ck_assert_uint_eq(cpu_credit_update(&c, 10 * MS, 10 * MS, NEVER), 1);
    cpu_credit_refund(&c, 1, 10 * MS); /* went idle before its stack was taken */
    ck_assert_uint_eq(cpu_credit_update(&c, 10 * MS, 10 * MS, NEVER), 1);
    /* A clock going backwards starts over. */
    ck_assert_uint_eq(cpu_credit_update(&c, 5 * MS, 10 * MS, ALWAYS), 0);
    ck_assert_uint_eq(cpu_credit_update(&c, 15 * MS, 10 * MS, NEVER), 1);
    /* Reset: CPU time used while sampling was off does not come back. */
    cpu_credit_reset(&c);
    ck_assert_uint_eq(cpu_credit_update(&c, 100000 * MS, 10 * MS, ALWAYS), 0);
    ck_assert_uint_eq(cpu_credit_update(&c, 100010 * MS, 10 * MS, NEVER), 1);
    /* Never more than CPU_CREDIT_MAX_SAMPLES from one reading. */
    ck_assert_uint_eq(cpu_credit_update(&c, 100010 * MS + 10 * MS * 5000, 10 * MS, NEVER),
                      CPU_CREDIT_MAX_SAMPLES);
    ck_assert_uint_eq(cpu_credit_update(&c, 100010 * MS + 10 * MS * 5001, 10 * MS, NEVER), 1);
    /* A refund without a baseline is ignored. */
    struct cpu_credit fresh = {0};
    cpu_credit_refund(&fresh, 3, 10 * MS);
    ck_assert_uint_eq(cpu_credit_update(&fresh, 0, 10 * MS, ALWAYS), 0);
    ck_assert_int_eq(fresh.credit_ns, 0);
    ck_assert_uint_eq(cpu_credit_update(&fresh, 1, 0, ALWAYS), 0); /* interval 0: nothing */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu-samples");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, counts_add_get_total);
    tcase_add_test(tc, counts_grow_keeps_every_count);
    tcase_add_test(tc, counts_clear_forgets_everything);
    tcase_add_test(tc, counts_rows_rank_with_cutoff);
    tcase_add_test(tc, states_that_can_use_the_cpu);
    tcase_add_test(tc, credit_turns_cpu_time_into_samples);
    tcase_add_test(tc, credit_rounds_fractions_at_random);
    tcase_add_test(tc, credit_refund_reset_and_guards);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

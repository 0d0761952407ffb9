/* Unit tests of the pure parts of cpu=samples: the trace -> count table, the thread states
 * that can use the CPU, and the CPU credit that turns CPU time into samples. */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu_activity.h"
#include "cpu_credit.h"
#include "ranking.h"
#include "sample_counts.h"
#include "sample_ring.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

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
    const struct {
        jint state;
        enum cpu_activity want;
    } cases[] = {
        {alive | JVMTI_THREAD_STATE_RUNNABLE, CPU_RUNNING_JAVA},
        {alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE, CPU_IN_NATIVE},
        {alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_INTERRUPTED, CPU_RUNNING_JAVA},
        /* Thread.sleep, LockSupport.park, Object.wait, monitor entry, suspended, dead, new */
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT |
             JVMTI_THREAD_STATE_SLEEPING,
         CPU_IDLE},
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
             JVMTI_THREAD_STATE_PARKED,
         CPU_IDLE},
        {alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
             JVMTI_THREAD_STATE_IN_OBJECT_WAIT,
         CPU_IDLE},
        {alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER, CPU_IDLE},
        {alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_SUSPENDED, CPU_IDLE},
        {JVMTI_THREAD_STATE_TERMINATED, CPU_IDLE},
        {0, CPU_IDLE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_msg(cpu_activity_of_state(cases[i].state) == cases[i].want,
                      "case %zu: state 0x%x: got %d, want %d", i, (unsigned)cases[i].state,
                      (int)cpu_activity_of_state(cases[i].state), (int)cases[i].want);
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

/* DestroyJavaVM at exit (and any native thread attached through JNI) is a new Java thread on
 * an OS thread that already used CPU time: only what it uses after its ThreadStart counts. */
START_TEST(credit_of_an_attached_thread_starts_at_its_attach)
{
    struct cpu_credit c = {0};
    cpu_credit_from_start(&c, 2500 * MS); /* the OS thread ran 2.5 s before it attached */
    ck_assert_uint_eq(cpu_credit_update(&c, 2500 * MS + 20 * MS, 10 * MS, ALWAYS), 2);
    ck_assert_uint_eq(cpu_credit_update(&c, 2530 * MS, 10 * MS, ALWAYS), 1);
}
END_TEST

START_TEST(credit_rounds_fractions_at_random)
{
    struct cpu_credit c = {0};
    cpu_credit_from_start(&c, 0); /* seen from its start: its first 3 ms count */
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
        cpu_credit_from_start(&t, 0);
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

START_TEST(ring_fifo_full_and_reuse)
{
    struct sample_ring *r = sample_ring_new(5, 24); /* rounded up to 8 */
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(sample_ring_capacity(r), 8);
    ck_assert_ptr_null(sample_ring_peek(r));
    for (uint32_t lap = 0; lap < 3; lap++) {
        for (uint32_t i = 0; i < 8; i++) {
            uint64_t pos;
            uint32_t *rec = sample_ring_claim(r, &pos);
            ck_assert_ptr_nonnull(rec);
            ck_assert_uint_eq(pos, lap * 8 + i);
            rec[0] = lap * 100 + i;
            sample_ring_publish(r, pos);
        }
        uint64_t pos;
        ck_assert_ptr_null(sample_ring_claim(r, &pos)); /* full: refused, nothing overwritten */
        ck_assert_uint_eq(sample_ring_claimed(r), (lap + 1) * 8);
        for (uint32_t i = 0; i < 8; i++) {
            uint32_t *rec = sample_ring_peek(r);
            ck_assert_ptr_nonnull(rec);
            ck_assert_uint_eq(rec[0], lap * 100 + i); /* oldest first */
            sample_ring_release(r);
        }
        ck_assert_ptr_null(sample_ring_peek(r));
        ck_assert_uint_eq(sample_ring_consumed(r), (lap + 1) * 8);
    }
    sample_ring_free(r);
}
END_TEST

START_TEST(ring_holds_back_at_an_unpublished_record)
{
    struct sample_ring *r = sample_ring_new(4, 8);
    uint64_t a, b;
    uint64_t *ra = sample_ring_claim(r, &a), *rb = sample_ring_claim(r, &b);
    *rb = 2;
    sample_ring_publish(r, b);
    ck_assert_ptr_null(sample_ring_peek(r)); /* a is claimed, not published: wait for it */
    *ra = 1;
    sample_ring_publish(r, a);
    ck_assert_uint_eq(*(uint64_t *)sample_ring_peek(r), 1);
    sample_ring_release(r);
    ck_assert_uint_eq(*(uint64_t *)sample_ring_peek(r), 2);
    sample_ring_release(r);
    sample_ring_free(r);
}
END_TEST

/* Producers in threads and in a signal handler (as in the agent), one consumer: every record
 * arrives once, intact, and records refused by a full ring are counted by their producers. */
#define PRODUCERS 4
#define PER_PRODUCER 20000u
#define SIGNAL_SEQS (1u << 22) /* far more than a run's 1-ms CPU-time signals */
static struct sample_ring *shared_ring;
static _Atomic(uint64_t) refused, from_signals;

struct record3 {
    uint32_t producer, seq, check;
};

static void produce(uint32_t producer, uint32_t seq, int tries)
{
    uint64_t pos;
    struct record3 *rec = sample_ring_claim(shared_ring, &pos);
    while (!rec && --tries > 0) {
        sched_yield();
        rec = sample_ring_claim(shared_ring, &pos);
    }
    if (!rec) {
        atomic_fetch_add(&refused, 1);
        return;
    }
    rec->producer = producer;
    rec->seq = seq;
    rec->check = producer * 2654435761u ^ seq;
    sample_ring_publish(shared_ring, pos);
}

static void on_alarm(int sig)
{
    (void)sig;
    produce(PRODUCERS, (uint32_t)atomic_fetch_add(&from_signals, 1), 1); /* never waits */
}

static void *producer_main(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; i < PER_PRODUCER; i++)
        produce(id, i, 1000);
    return NULL;
}

START_TEST(ring_many_producers_one_consumer)
{
    shared_ring = sample_ring_new(1024, sizeof(struct record3));
    atomic_store(&refused, 0);
    atomic_store(&from_signals, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &it, NULL);
    pthread_t th[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&th[i], NULL, producer_main, (void *)i);
    static uint32_t next[PRODUCERS];
    memset(next, 0, sizeof next);
    static bool signal_seen[SIGNAL_SEQS];
    memset(signal_seen, 0, sizeof signal_seen);
    uint64_t got = 0;
    bool done = false;
    while (!done) {
        struct record3 *rec = sample_ring_peek(shared_ring);
        if (!rec) {
            done = sample_ring_claimed(shared_ring) == sample_ring_consumed(shared_ring) &&
                   got + atomic_load(&refused) ==
                       (uint64_t)PRODUCERS * PER_PRODUCER + atomic_load(&from_signals);
            if (done) {
                struct itimerval off = {{0, 0}, {0, 0}};
                setitimer(ITIMER_PROF, &off, NULL);
                /* a signal may have come in after the check */
                done = got + atomic_load(&refused) ==
                       (uint64_t)PRODUCERS * PER_PRODUCER + atomic_load(&from_signals);
                if (!done)
                    setitimer(ITIMER_PROF, &it, NULL);
            }
            continue;
        }
        ck_assert_uint_le(rec->producer, PRODUCERS);
        ck_assert_uint_eq(rec->check, rec->producer * 2654435761u ^ rec->seq);
        if (rec->producer < PRODUCERS) {
            /* Per producer thread, records arrive in order (refused ones leave gaps). */
            ck_assert_uint_ge(rec->seq, next[rec->producer]);
            next[rec->producer] = rec->seq + 1;
        } else {
            /* The signal handler runs on any thread, several at once: its numbers are taken
             * before its claims, so they may arrive out of order; each arrives once. */
            ck_assert_uint_lt(rec->seq, SIGNAL_SEQS);
            ck_assert(!signal_seen[rec->seq]);
            signal_seen[rec->seq] = true;
        }
        got++;
        sample_ring_release(shared_ring);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    signal(SIGPROF, SIG_DFL);
    /* Producers wait a little when the ring is full: most records get through. */
    ck_assert_uint_gt(got, (uint64_t)PRODUCERS * PER_PRODUCER / 2);
    sample_ring_free(shared_ring);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu-samples");
    suite_add_tests(
        s, "core", 60,
        TESTS(counts_add_get_total, counts_grow_keeps_every_count, counts_clear_forgets_everything,
              counts_rows_rank_with_cutoff, states_that_can_use_the_cpu,
              credit_turns_cpu_time_into_samples, credit_rounds_fractions_at_random,
              credit_of_an_attached_thread_starts_at_its_attach, credit_refund_reset_and_guards,
              ring_fifo_full_and_reuse, ring_holds_back_at_an_unpublished_record,
              ring_many_producers_one_consumer));
    return run_suite(s);
}

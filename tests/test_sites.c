/* Unit tests of heap=sites' pure C tables: the lock-free site table (also under concurrent
 * interning), the per-thread trace cache, the table of sampled objects, sample weights. */
#include "check_helpers.h"
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem_account.h"
#include "sampled_objects.h"
#include "site_table.h"
#include "trace_cache.h"

/* ---- site table ---------------------------------------------------------------------- */

START_TEST(sites_intern_is_stable)
{
    ck_assert_int_eq(site_table_init(false), 0);
    ck_assert_uint_eq(site_table_end(), SITE_ID_FIRST);
    uint32_t a = site_table_intern(7, 1), b = site_table_intern(7, 2), c = site_table_intern(8, 1);
    ck_assert_uint_eq(a, SITE_ID_FIRST);
    ck_assert_uint_ne(a, b);
    ck_assert_uint_ne(a, c);
    ck_assert_uint_ne(b, c);
    ck_assert_uint_eq(site_table_intern(7, 1), a);
    ck_assert_uint_eq(site_table_intern(8, 1), c);
    ck_assert_uint_eq(site_table_end(), SITE_ID_FIRST + 3);
    struct site *s = site_table_get(b);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->class_serial, 7);
    ck_assert_uint_eq(s->trace_serial, 2);
    ck_assert_ptr_null(site_table_get(0));
    ck_assert_ptr_null(site_table_get(SITE_ID_UNTRACKED));
    ck_assert_ptr_null(site_table_get(site_table_end()));
    ck_assert_uint_eq(site_table_intern(0, 0), 0); /* the one key that is never valid */
    sites_count_allocs(s, 1, 24);
    ck_assert_uint_eq(sites_count_allocs(s, 1, 24), 2);
    ck_assert_uint_eq(atomic_load(&s->alloc_objs), 2);
    ck_assert_uint_eq(atomic_load(&s->alloc_bytes), 48);
    ck_assert_ptr_null(site_table_live(a)); /* exact mode keeps no live estimates */
    site_table_free();
}
END_TEST

START_TEST(sites_grow_keeps_everything)
{
    ck_assert_int_eq(site_table_init(true), 0);
    /* Many more than the initial index holds, with keys that share class or trace. */
    for (uint32_t i = 1; i <= 100000; i++) {
        ck_assert_uint_eq(site_table_intern(i % 97 + 1, i), SITE_ID_FIRST + i - 1);
        atomic_store(&site_table_live(SITE_ID_FIRST + i - 1)->objs, i); /* sampled mode */
    }
    for (uint32_t i = 1; i <= 100000; i++) {
        uint32_t id = site_table_intern(i % 97 + 1, i);
        ck_assert_uint_eq(id, SITE_ID_FIRST + i - 1);
        ck_assert_uint_eq(site_table_get(id)->trace_serial, i);
        ck_assert_uint_eq(atomic_load(&site_table_live(id)->objs), i);
    }
    ck_assert_ptr_null(site_table_live(site_table_end()));
    site_table_free();
}
END_TEST

/* Steady state of a program that keeps making code: only the last LIVE_TRACES traces can
 * still count allocations. */
#define LIVE_TRACES 5000
static _Atomic(uint32_t) retired_below;
static bool retired_trace(uint32_t class_serial, uint32_t trace_serial)
{
    (void)class_serial;
    return trace_serial < atomic_load(&retired_below);
}

/* Interns traces 1..n of class 3, retiring all but the last LIVE_TRACES if retire; returns the
 * bytes charged while the table held them. */
static size_t intern_steady(uint32_t n, bool retire)
{
    size_t before = mem_account_charged();
    ck_assert_int_eq(site_table_init(false), 0);
    site_table_set_retired(retire ? retired_trace : NULL);
    for (uint32_t i = 1; i <= n; i++) {
        atomic_store(&retired_below, i > LIVE_TRACES ? i - LIVE_TRACES : 0);
        ck_assert_uint_eq(site_table_intern(3, i), SITE_ID_FIRST + i - 1);
    }
    /* Live sites keep their ids; every site keeps its entry. */
    for (uint32_t i = n - LIVE_TRACES + 1; i <= n; i++)
        ck_assert_uint_eq(site_table_intern(3, i), SITE_ID_FIRST + i - 1);
    ck_assert_uint_eq(site_table_end(), SITE_ID_FIRST + n);
    for (uint32_t i = 1; i <= n; i += 997)
        ck_assert_uint_eq(site_table_get(SITE_ID_FIRST + i - 1)->trace_serial, i);
    size_t charged = mem_account_charged() - before;
    if (retire) { /* a retired site met again (it never is) would get a new id */
        ck_assert_uint_eq(site_table_intern(3, 1), SITE_ID_FIRST + n);
        ck_assert_uint_eq(site_table_get(SITE_ID_FIRST + n)->trace_serial, 1);
    }
    site_table_free();
    ck_assert_uint_eq(mem_account_charged(), before);
    return charged;
}

/* The index keeps the live sites only: the retired ones' lookups go, the old indexes are
 * freed (the bytes charged are the entries and an index sized for the live sites). */
START_TEST(sites_retired_lookups_go)
{
    const uint32_t n = 200000;
    size_t all = intern_steady(n, false), live = intern_steady(n, true);
    size_t entries = n * sizeof(struct site);
    ck_assert_uint_gt(all, entries + 4 * 1024 * 1024); /* 512 K slots of 8 B */
    ck_assert_uint_lt(live, entries + 1024 * 1024);    /* 32 K slots, a few chunks of slack */
}
END_TEST

#define NTHREADS 8
#define PER_THREAD 20000

struct worker {
    int index;
    uint32_t ids[PER_THREAD];
};

/* Every thread interns the same keys in a different order and counts allocations. */
static void *intern_worker(void *arg)
{
    struct worker *w = arg;
    for (int j = 0; j < PER_THREAD; j++) {
        int i = (j * 7919 + w->index * 1237) % PER_THREAD;
        uint32_t id = site_table_intern((uint32_t)(i % 50 + 1), (uint32_t)(i + 1));
        w->ids[i] = id;
        struct site *s = site_table_get(id);
        if (s)
            sites_count_allocs(s, 1, 16);
    }
    return NULL;
}

START_TEST(sites_concurrent_intern)
{
    ck_assert_int_eq(site_table_init(false), 0);
    static struct worker workers[NTHREADS];
    pthread_t threads[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        workers[t].index = t;
        ck_assert_int_eq(pthread_create(&threads[t], NULL, intern_worker, &workers[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(threads[t], NULL);
    ck_assert_uint_eq(site_table_end(), SITE_ID_FIRST + PER_THREAD);
    for (int i = 0; i < PER_THREAD; i++) {
        uint32_t id = workers[0].ids[i];
        ck_assert_uint_ne(id, 0);
        for (int t = 1; t < NTHREADS; t++)
            ck_assert_uint_eq(workers[t].ids[i], id);
        struct site *s = site_table_get(id);
        ck_assert_uint_eq(s->class_serial, (uint32_t)(i % 50 + 1));
        ck_assert_uint_eq(s->trace_serial, (uint32_t)(i + 1));
        ck_assert_uint_eq(atomic_load(&s->alloc_objs), NTHREADS);
        ck_assert_uint_eq(atomic_load(&s->alloc_bytes), NTHREADS * 16);
    }
    site_table_free();
}
END_TEST

START_TEST(sites_class_state)
{
    ck_assert_int_eq(site_table_init(false), 0);
    ck_assert_ptr_null(site_table_class(0));
    ck_assert_ptr_null(site_table_class_peek(5000));
    struct site_class *k = site_table_class(5000);
    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_eq(site_table_class_peek(5000), k);
    ck_assert_ptr_eq(site_table_class(5000), k);
    ck_assert_uint_eq(atomic_load(&k->kind), SITE_CLASS_UNKNOWN);
    ck_assert_uint_eq(atomic_load(&k->default_site), 0);
    ck_assert_ptr_ne(site_table_class(5001), k);
    ck_assert_ptr_nonnull(site_table_class(16u * 1024 * 1024 - 1));
    ck_assert_ptr_null(site_table_class(16u * 1024 * 1024));
    site_table_free();
}
END_TEST

START_TEST(sample_weights)
{
    ck_assert_uint_eq(site_table_sample_weight(100, 0), SITE_WEIGHT_ONE);
    ck_assert_uint_eq(site_table_sample_weight(0, 4096), SITE_WEIGHT_ONE);
    /* Far larger than the interval: always sampled, weight 1. */
    ck_assert_uint_eq(site_table_sample_weight(1 << 20, 1024), SITE_WEIGHT_ONE);
    /* size == interval: 1 / (1 - 1/e). */
    ck_assert_uint_eq(site_table_sample_weight(4096, 4096),
                      (uint64_t)llround(256.0 / (1 - exp(-1))));
    /* Much smaller: about interval / size objects per sample. */
    uint64_t w = site_table_sample_weight(16, 512 * 1024);
    ck_assert(fabs((double)w / SITE_WEIGHT_ONE - 32768.5) < 1.0);
    /* Interval 1 (every allocation sampled) weighs objects as one. */
    ck_assert_uint_eq(site_table_sample_weight(16, 1), SITE_WEIGHT_ONE);
    ck_assert_uint_eq(sites_weight_round(SITE_WEIGHT_ONE * 3 + SITE_WEIGHT_ONE / 2), 4);
    ck_assert_uint_eq(sites_weight_round(SITE_WEIGHT_ONE * 3 + SITE_WEIGHT_ONE / 2 - 1), 3);
}
END_TEST

/* ---- trace cache --------------------------------------------------------------------- */

static void fill(struct raw_frame *f, unsigned n, uint64_t seed)
{
    for (unsigned i = 0; i < n; i++) {
        f[i].method = 0x7f0000001000ull + seed * 64 + i * 8;
        f[i].location = (int64_t)(seed + i);
    }
}

START_TEST(trace_cache_hits_and_misses)
{
    struct trace_cache *c = trace_cache_new(4, 256);
    ck_assert_ptr_null(trace_cache_new(4, 100)); /* not a power of two */
    ck_assert_uint_eq(trace_cache_slots(c), 256);
    struct raw_frame a[4], b[4];
    fill(a, 4, 1);
    fill(b, 4, 1);
    b[3].location++; /* differs in the deepest frame only */
    uint64_t ha = trace_cache_hash(a, 4, 0), hb = trace_cache_hash(b, 4, 0);
    ck_assert_uint_ne(ha, hb);
    ck_assert_ptr_null(trace_cache_find(c, ha, a, 4, 0));
    struct trace_cache_entry *e = trace_cache_store(c, ha, a, 4, 0, 42);
    ck_assert_ptr_nonnull(e);
    e->class_serial = 3;
    e->site = 9;
    ck_assert_ptr_eq(trace_cache_find(c, ha, a, 4, 0), e);
    ck_assert_uint_eq(trace_cache_find(c, ha, a, 4, 0)->trace_serial, 42);
    ck_assert_ptr_null(trace_cache_find(c, hb, b, 4, 0));
    /* Same frames, other thread serial (thread=y): another stack. */
    ck_assert_ptr_null(trace_cache_find(c, trace_cache_hash(a, 4, 5), a, 4, 5));
    /* Fewer frames: another stack, though a prefix. */
    ck_assert_ptr_null(trace_cache_find(c, trace_cache_hash(a, 3, 0), a, 3, 0));
    /* A forged hash with other frames never matches. */
    ck_assert_ptr_null(trace_cache_find(c, ha, b, 4, 0));
    /* The empty stack is cacheable. */
    uint64_t h0 = trace_cache_hash(a, 0, 0);
    ck_assert_ptr_nonnull(trace_cache_store(c, h0, a, 0, 0, 1));
    ck_assert_uint_eq(trace_cache_find(c, h0, NULL, 0, 0)->trace_serial, 1);
    /* Deeper than the cache keeps: not stored. */
    struct raw_frame deep[8];
    fill(deep, 8, 2);
    ck_assert_ptr_null(trace_cache_store(c, trace_cache_hash(deep, 8, 0), deep, 8, 0, 7));
    ck_assert_ptr_null(trace_cache_find(c, trace_cache_hash(deep, 8, 0), deep, 8, 0));
    trace_cache_free(c);
}
END_TEST

static void count_ref(void *ref, void *ctx)
{
    (void)ref;
    (*(int *)ctx)++;
}

START_TEST(trace_cache_replacement_and_refs)
{
    struct trace_cache *c = trace_cache_new(64, 64); /* capped at TRACE_CACHE_MAX_FRAMES */
    struct raw_frame f[TRACE_CACHE_MAX_FRAMES + 1];
    int stored = 0;
    static int token;
    for (uint64_t s = 0; s < 4 * 64; s++) {
        fill(f, TRACE_CACHE_MAX_FRAMES, s);
        uint64_t h = trace_cache_hash(f, TRACE_CACHE_MAX_FRAMES, 0);
        struct trace_cache_entry *e =
            trace_cache_store(c, h, f, TRACE_CACHE_MAX_FRAMES, 0, (uint32_t)s + 1);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->site, 0);
        e->class_ref = &token;
        /* The newest stack is always found, with its own serial. */
        e = trace_cache_find(c, h, f, TRACE_CACHE_MAX_FRAMES, 0);
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->trace_serial, (uint32_t)s + 1);
        stored++;
    }
    fill(f, TRACE_CACHE_MAX_FRAMES + 1, 1);
    ck_assert_ptr_null(trace_cache_store(c, 1, f, TRACE_CACHE_MAX_FRAMES + 1, 0, 1));
    int refs = 0;
    trace_cache_each_ref(c, count_ref, &refs);
    ck_assert_int_gt(refs, 0);
    ck_assert_int_le(refs, 64);
    trace_cache_free(c);
}
END_TEST

/* ---- sampled objects ----------------------------------------------------------------- */

START_TEST(samples_put_take)
{
    ck_assert_int_eq(sampled_objects_init(), 0);
    enum { N = 50000 };
    static uint64_t sizes[N + 1];
    static bool present[N + 1];
    uint64_t size = 0;
    ck_assert(!sampled_objects_put(0, 1));
    ck_assert(!sampled_objects_take(12345, &size));
    /* Random puts and takes, checked against a plain array. */
    uint64_t x = 88172645463325252ull;
    size_t live = 0;
    for (int step = 0; step < 400000; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t k = x % N + 1, tag = (k << 40) | (k * 2654435761u % (1u << 30));
        if (x & (1ull << 40)) {
            if (!present[k])
                live++;
            sizes[k] = x % 1000 + 16;
            present[k] = true;
            ck_assert(sampled_objects_put(tag, sizes[k]));
        } else {
            bool found = sampled_objects_take(tag, &size);
            ck_assert_int_eq(found, present[k]);
            if (found) {
                ck_assert_uint_eq(size, sizes[k]);
                present[k] = false;
                live--;
            }
        }
        ck_assert_uint_eq(sampled_objects_count(), live);
    }
    for (uint64_t k = 1; k <= N; k++) {
        uint64_t tag = (k << 40) | (k * 2654435761u % (1u << 30));
        ck_assert_int_eq(sampled_objects_take(tag, &size), present[k]);
    }
    ck_assert_uint_eq(sampled_objects_count(), 0);
    sampled_objects_free();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sites");
    suite_add_tests(s, "site table", 120,
                    TESTS(sites_intern_is_stable, sites_grow_keeps_everything,
                          sites_retired_lookups_go, sites_concurrent_intern, sites_class_state,
                          sample_weights));
    suite_add_tests(s, "trace cache", 0,
                    TESTS(trace_cache_hits_and_misses, trace_cache_replacement_and_refs));
    suite_add_tests(s, "sampled objects", 120, TESTS(samples_put_take));
    return s;
}

int main(void)
{
    return run_suite(suite());
}

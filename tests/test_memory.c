/* Unit tests of the agent's memory accounting and budget (issue 31): the memory= option, what
 * keymap and segarray charge and give back, keymap_put_ref's stable key copies, and cpu=times'
 * call paths past the budget, where every call and every tick must still be counted (made-up
 * times, so the totals are exact). */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_store.h"
#include "keymap.h"
#include "mem_account.h"
#include "options.h"
#include "segarray.h"
#include "shadow_stack.h"

START_TEST(memory_option)
{
    struct hprof_options o;
    struct hprof_error e = options_parse("heap=sites", &o);
    ck_assert(!hprof_failed(&e));
    ck_assert_int_eq(o.memory_mb, 256);
    options_free(&o);
    e = options_parse("memory=0", &o);
    ck_assert(!hprof_failed(&e));
    ck_assert_int_eq(o.memory_mb, 0);
    options_free(&o);
    e = options_parse("memory=1048576", &o);
    ck_assert(!hprof_failed(&e));
    ck_assert_int_eq(o.memory_mb, 1048576);
    options_free(&o);
    e = options_parse("memory=1048577", &o);
    ck_assert(hprof_failed(&e));
    ck_assert_str_eq(e.text, "memory option value must be an integer from 0 to 1048576 "
                             "(MB; 0 = no budget) (memory=1048577)");
    e = options_parse("memory=1g", &o);
    ck_assert(hprof_failed(&e));
}
END_TEST

START_TEST(containers_charge_what_they_hold)
{
    size_t before = mem_account_charged();
    struct keymap *m = keymap_new(16);
    ck_assert_uint_eq(mem_account_charged() - before, keymap_bytes(m));
    size_t empty = keymap_bytes(m);
    char key[64];
    for (uint32_t i = 1; i <= 5000; i++) {
        int n = snprintf(key, sizeof key, "key-%u", i);
        ck_assert_uint_eq(keymap_put(m, key, (size_t)n, i), i);
    }
    ck_assert_uint_gt(keymap_bytes(m), empty + 5000 * 8);
    ck_assert_uint_eq(mem_account_charged() - before, keymap_bytes(m));
    keymap_free(m);
    ck_assert_uint_eq(mem_account_charged(), before);

    struct segarray *a = malloc(sizeof *a);
    segarray_init(a, 24);
    for (int i = 0; i < 10000; i++)
        ck_assert_uint_ne(segarray_append(a), UINT32_MAX);
    ck_assert_uint_eq(segarray_bytes(a), 3 * mem_block(SEG_CHUNK * 24)); /* 10000: 3 chunks */
    ck_assert_uint_eq(mem_account_charged() - before, segarray_bytes(a));
    segarray_free(a);
    free(a);
    ck_assert_uint_eq(mem_account_charged(), before);
}
END_TEST

/* keymap_prune's predicate: keep values whose bit in the mask (the context) is set. */
static bool keep_marked(const void *key, size_t len, uint32_t value, void *ctx)
{
    (void)key, (void)len;
    return ((const uint8_t *)ctx)[value] != 0;
}

/* A key of i: its length varies (4..43 bytes), so keys span chunks unevenly. */
static size_t prune_key(uint32_t i, uint8_t *key)
{
    size_t len = 4 + i % 40; /* 4 bytes at least: every key differs */
    for (size_t k = 0; k < len; k++)
        key[k] = (uint8_t)(i >> (8 * (k % 4))) ^ (uint8_t)k;
    return len;
}

START_TEST(prune_keeps_exactly_what_it_is_told)
{
    enum { N = 20000 };
    size_t before = mem_account_charged();
    struct keymap *m = keymap_new(16);
    uint8_t key[64];
    for (uint32_t i = 1; i <= N; i++)
        ck_assert_uint_eq(keymap_put(m, key, prune_key(i, key), i), i);
    ck_assert_uint_eq(keymap_count(m), N);
    /* The reference: a pseudo-random three quarters go, as unloaded classes' lookups do. */
    uint8_t *keep = calloc(2 * N + 1, 1); /* values up to 2N: one key is put again */
    uint32_t kept = 0, x = 12345;
    for (uint32_t i = 1; i <= N; i++) {
        x = x * 1103515245u + 12345u;
        keep[i] = (x >> 16) % 4 == 0;
        kept += keep[i];
    }
    size_t full = keymap_bytes(m);
    ck_assert_uint_eq(keymap_prune(m, keep_marked, keep), N - kept);
    ck_assert_uint_eq(keymap_count(m), kept);
    for (uint32_t i = 1; i <= N; i++) {
        uint32_t v = 0;
        size_t len = prune_key(i, key);
        ck_assert_int_eq(keymap_get(m, key, len, &v), keep[i]);
        if (keep[i])
            ck_assert_uint_eq(v, i);
    }
    /* The bytes of what went are given back, and the figures still add up. */
    ck_assert_uint_lt(keymap_bytes(m), full / 2);
    ck_assert_uint_eq(mem_account_charged() - before, keymap_bytes(m));
    /* Nothing to drop: the map stays as it is; a dropped key can be put again. */
    ck_assert_uint_eq(keymap_prune(m, keep_marked, keep), 0);
    for (uint32_t i = 1; i <= N; i++)
        if (!keep[i]) {
            ck_assert_uint_eq(keymap_put(m, key, prune_key(i, key), i + N), i + N);
            break;
        }
    ck_assert_uint_eq(keymap_count(m), kept + 1);
    /* Everything goes. */
    memset(keep, 0, 2 * N + 1);
    ck_assert_uint_eq(keymap_prune(m, keep_marked, keep), kept + 1);
    ck_assert_uint_eq(keymap_count(m), 0);
    ck_assert(!keymap_get(m, key, prune_key(1, key), &x));
    ck_assert_uint_eq(mem_account_charged() - before, keymap_bytes(m));
    keymap_free(m);
    free(keep);
    ck_assert_uint_eq(mem_account_charged(), before);
}
END_TEST

START_TEST(put_ref_keeps_one_copy_in_place)
{
    struct keymap *m = keymap_new(4);
    const void *first = NULL, *again = NULL;
    uint32_t k[3] = {7, 8, 9};
    ck_assert_uint_eq(keymap_put_ref(m, k, sizeof k, 1, &first), 1);
    ck_assert_ptr_ne(first, k);
    ck_assert_int_eq(memcmp(first, k, sizeof k), 0);
    ck_assert_uint_eq((uintptr_t)first % 8, 0);
    for (uint32_t i = 0; i < 20000; i++) { /* grow the index and add key chunks */
        uint32_t other[3] = {i, i + 1, 100000};
        keymap_put(m, other, sizeof other, i + 2);
    }
    ck_assert_uint_eq(keymap_put_ref(m, k, sizeof k, 99, &again), 1); /* already there */
    ck_assert_ptr_eq(again, first);
    ck_assert_int_eq(memcmp(first, k, sizeof k), 0);
    keymap_free(m);
}
END_TEST

START_TEST(budget_reached_says_so_once)
{
    mem_account_budget_set(0);
    ck_assert(!mem_account_budget_reached("x"));
    mem_account_budget_set(mem_account_charged() + 1000);
    ck_assert(!mem_account_budget_passed());
    mem_account_charge(1000);
    capture_begin();
    ck_assert(mem_account_budget_reached("new stacks"));
    ck_assert(mem_account_budget_reached("new stacks"));
    char *err = capture_end();
    ck_assert_int_eq(count_of(err, "HPROF WARNING: the agent's tables reached memory="), 1);
    ck_assert_int_eq(count_of(err, "new stacks are counted under <memory_budget_reached>"), 1);
    free(err);
    mem_account_uncharge(1000);
    ck_assert(!mem_account_budget_passed());
    mem_account_budget_set(0);
}
END_TEST

#define F(m) SHADOW_FRAME(3, m)

/* Calls on a chain of `height` distinct methods, each leaf taking 10 ticks: the number of calls
 * and the self time of all rows. */
static void sums(const struct shadow_totals *s, uint64_t *calls, uint64_t *self,
                 uint64_t *overflow_calls)
{
    *calls = *self = *overflow_calls = 0;
    for (size_t i = 0; i < shadow_totals_count(s); i++) {
        const struct shadow_total *r = shadow_totals_at(s, i);
        *calls += r->calls;
        *self += r->self;
        if (r->n && r->frames[0] == SHADOW_FRAME_OVERFLOW)
            *overflow_calls += r->calls;
    }
}

START_TEST(call_paths_past_the_budget_count_every_call)
{
    mem_account_budget_set(0);
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    uint64_t now = 0;
    /* Before the budget: 10 paths main -> m_i -> leaf. */
    shadow_stack_enter(t, F(1), now, 4);
    for (uint32_t i = 0; i < 10; i++) {
        shadow_stack_enter(t, F(100 + i), now += 1, 4);
        shadow_stack_enter(t, F(2), now += 1, 4);
        shadow_stack_exit(t, F(2), now += 10);
        shadow_stack_exit(t, F(100 + i), now += 1);
    }
    uint32_t nodes = shadow_stack_node_count(t);
    /* Past it: 1000 new paths, each 3 deep, and known ones again. */
    mem_account_budget_set(mem_account_charged() > 1 ? mem_account_charged() - 1 : 1);
    capture_begin();
    for (uint32_t i = 0; i < 1000; i++) {
        shadow_stack_enter(t, F(1000 + i), now += 1, 4);
        shadow_stack_enter(t, F(5000 + i), now += 1, 4);
        shadow_stack_enter(t, F(2), now += 1, 4);
        shadow_stack_exit(t, F(2), now += 10);
        shadow_stack_exit(t, F(5000 + i), now += 1);
        shadow_stack_exit(t, F(1000 + i), now += 1);
        shadow_stack_enter(t, F(100), now += 1, 4); /* known: still its own row */
        shadow_stack_exit(t, F(100), now += 1);
    }
    shadow_stack_exit(t, F(1), now += 1);
    free(capture_end());
    ck_assert_uint_eq(shadow_stack_height(t), 0);
    /* Bounded: one overflow node below each node at most, and nothing below an overflow node. */
    ck_assert_uint_le(shadow_stack_node_count(t), 2 * nodes);
    struct shadow_totals *s = shadow_totals_new();
    ck_assert_int_eq(shadow_totals_add_thread(s, t, 0, 4), 0);
    uint64_t calls, self, overflow;
    sums(s, &calls, &self, &overflow);
    ck_assert_uint_eq(calls, 1 + 10 * 2 + 1000 * 4);
    ck_assert_uint_eq(overflow, 1000 * 3);
    ck_assert_uint_eq(self, now); /* every tick of main's span is someone's self time */
    shadow_frame known[] = {F(100), F(1)};
    for (size_t i = 0; i < shadow_totals_count(s); i++) {
        const struct shadow_total *r = shadow_totals_at(s, i);
        if (r->n == 2 && memcmp(r->frames, known, sizeof known) == 0)
            ck_assert_uint_eq(r->calls, 1 + 1000);
    }
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
    mem_account_budget_set(0);
}
END_TEST

/* chunk_store: every copy stays where it was put, aligned, with its bytes, among 20,000 of
 * lengths 0-300 (some longer than the first chunks); what it charges is what it reports, and
 * freeing gives it all back. */
START_TEST(chunk_store_keeps_every_copy)
{
    size_t charged0 = mem_account_charged();
    struct chunk_store store = {0};
    enum { N = 20000 };
    static unsigned char *copies[N];
    unsigned char buf[300];
    for (int i = 0; i < N; i++) {
        size_t len = (size_t)(i * 7919) % 301;
        memset(buf, i & 0xFF, sizeof buf);
        copies[i] = chunk_store_add(&store, buf, len);
        ck_assert_ptr_nonnull(copies[i]);
        ck_assert_uint_eq((uintptr_t)copies[i] % 8, 0);
    }
    ck_assert_uint_eq(mem_account_charged() - charged0, store.bytes);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        size_t len = (size_t)(i * 7919) % 301;
        memset(buf, i & 0xFF, sizeof buf);
        wrong += memcmp(copies[i], buf, len) != 0;
    }
    ck_assert_int_eq(wrong, 0);
    chunk_store_free(&store);
    ck_assert_uint_eq(store.bytes, 0);
    ck_assert_uint_eq(mem_account_charged(), charged0);
}
END_TEST

int main(void)
{
    return run_tests("memory", "memory", 0,
                     TESTS(memory_option, containers_charge_what_they_hold,
                           prune_keeps_exactly_what_it_is_told, put_ref_keeps_one_copy_in_place,
                           budget_reached_says_so_once, chunk_store_keeps_every_copy,
                           call_paths_past_the_budget_count_every_call));
}

/* Unit tests of cpu=times bookkeeping (agent/profiles/cpu_times/shadow_stack.c): exact call counts
 * per distinct top of stack, self and inclusive time, exits below the top (exceptions out of
 * super()), exits of frames never entered, depth changes, growth of every table, and totals over
 * threads. Times are made up, so every figure is exact. */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shadow_stack.h"

#define F(c, m) SHADOW_FRAME(c, m)
enum { MAIN = 1, MID, LEAF, REC, THROWER, CATCHER };
#define M(x) F(7, x)

/* The totals row of exactly these frames (top first), or NULL. */
static const struct shadow_total *row_of(const struct shadow_totals *s, uint32_t thread,
                                         const shadow_frame *frames, uint32_t n)
{
    for (size_t i = 0; i < shadow_totals_count(s); i++) {
        const struct shadow_total *r = shadow_totals_at(s, i);
        if (r->thread == thread && r->n == n && memcmp(r->frames, frames, sizeof *frames * n) == 0)
            return r;
    }
    return NULL;
}

static const struct shadow_method_total *method_of(const struct shadow_totals *s, shadow_frame f)
{
    for (size_t i = 0; i < shadow_totals_method_count(s); i++)
        if (shadow_totals_method_at(s, i)->frame == f)
            return shadow_totals_method_at(s, i);
    return NULL;
}

static struct shadow_totals *totals_of(const struct shadow_thread *t, unsigned depth)
{
    struct shadow_totals *s = shadow_totals_new();
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(shadow_totals_add_thread(s, t, 0, depth), 0);
    return s;
}

START_TEST(self_time_excludes_callees)
{
    struct shadow_thread *t = shadow_stack_thread_new(true, NULL);
    shadow_stack_enter(t, M(MAIN), 100, 4);
    shadow_stack_enter(t, M(MID), 110, 4);
    shadow_stack_enter(t, M(LEAF), 120, 4);
    shadow_stack_exit(t, M(LEAF), 150); /* leaf: 30 */
    shadow_stack_exit(t, M(MID), 160);  /* mid: 50 elapsed, 20 self */
    shadow_stack_exit(t, M(MAIN), 200); /* main: 100 elapsed, 50 self */
    ck_assert_uint_eq(shadow_stack_height(t), 0);
    struct shadow_totals *s = totals_of(t, 4);
    ck_assert_uint_eq(shadow_totals_count(s), 3);
    shadow_frame k1[] = {M(MAIN)}, k2[] = {M(MID), M(MAIN)}, k3[] = {M(LEAF), M(MID), M(MAIN)};
    ck_assert_uint_eq(row_of(s, 0, k1, 1)->self, 50);
    ck_assert_uint_eq(row_of(s, 0, k2, 2)->self, 20);
    ck_assert_uint_eq(row_of(s, 0, k3, 3)->self, 30);
    ck_assert_uint_eq(row_of(s, 0, k3, 3)->calls, 1);
    ck_assert_uint_eq(method_of(s, M(MAIN))->total, 100);
    ck_assert_uint_eq(method_of(s, M(MID))->total, 50);
    ck_assert_uint_eq(method_of(s, M(LEAF))->total, 30);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

/* The counts the Java test program (CpuTimesProgram) makes, exactly. */
static void known_program(struct shadow_thread *t, uint64_t *clock)
{
    shadow_stack_enter(t, M(MAIN), ++*clock, 4);
    int leaves = 0;
    for (int i = 0; i < 678; i++) {
        shadow_stack_enter(t, M(MID), ++*clock, 4);
        int n = 12345 / 678 + (i < 12345 % 678 ? 1 : 0);
        for (int k = 0; k < n; k++, leaves++) {
            shadow_stack_enter(t, M(LEAF), ++*clock, 4);
            shadow_stack_exit(t, M(LEAF), ++*clock);
        }
        shadow_stack_exit(t, M(MID), ++*clock);
    }
    ck_assert_int_eq(leaves, 12345);
    for (int r = 0; r < 100; r++) {
        for (int d = 0; d < 10; d++)
            shadow_stack_enter(t, M(REC), ++*clock, 4);
        for (int d = 0; d < 10; d++)
            shadow_stack_exit(t, M(REC), ++*clock);
    }
    for (int i = 0; i < 50; i++) {
        shadow_stack_enter(t, M(CATCHER), ++*clock, 4);
        shadow_stack_enter(t, M(THROWER), ++*clock, 4);
        shadow_stack_exit(t, M(THROWER), ++*clock); /* the handler's exit call, then athrow */
        shadow_stack_exit(t, M(CATCHER), ++*clock);
    }
    shadow_stack_exit(t, M(MAIN), ++*clock);
}

START_TEST(exact_counts_per_trace)
{
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    uint64_t clock = 0;
    known_program(t, &clock);
    struct shadow_totals *s = totals_of(t, 4);
    shadow_frame leaf[] = {M(LEAF), M(MID), M(MAIN)};
    shadow_frame mid[] = {M(MID), M(MAIN)};
    shadow_frame r1[] = {M(REC), M(MAIN)};
    shadow_frame r2[] = {M(REC), M(REC), M(MAIN)};
    shadow_frame r3[] = {M(REC), M(REC), M(REC), M(MAIN)};
    shadow_frame r4[] = {M(REC), M(REC), M(REC), M(REC)};
    shadow_frame thr[] = {M(THROWER), M(CATCHER), M(MAIN)};
    ck_assert_uint_eq(row_of(s, 0, leaf, 3)->calls, 12345);
    ck_assert_uint_eq(row_of(s, 0, leaf, 3)->self, 12345);
    ck_assert_uint_eq(row_of(s, 0, mid, 2)->calls, 678);
    ck_assert_uint_eq(row_of(s, 0, r1, 2)->calls, 100);
    ck_assert_uint_eq(row_of(s, 0, r2, 3)->calls, 100);
    ck_assert_uint_eq(row_of(s, 0, r3, 4)->calls, 100);
    ck_assert_uint_eq(row_of(s, 0, r4, 4)->calls, 700);
    ck_assert_uint_eq(row_of(s, 0, thr, 3)->calls, 50);
    ck_assert_uint_eq(method_of(s, M(REC))->calls, 1000);
    ck_assert_uint_eq(method_of(s, M(LEAF))->calls, 12345);
    ck_assert_uint_eq(shadow_totals_count(s), 9); /* main, mid, leaf, 4 rec, catcher, thrower */
    /* every tick but the first is inside main */
    uint64_t self = 0;
    for (size_t i = 0; i < shadow_totals_count(s); i++)
        self += shadow_totals_at(s, i)->self;
    ck_assert_uint_eq(self, clock - 1);
    shadow_totals_free(s);

    /* depth 1: one row per method */
    s = totals_of(t, 1);
    shadow_frame rec[] = {M(REC)};
    ck_assert_uint_eq(row_of(s, 0, rec, 1)->calls, 1000);
    ck_assert_uint_eq(shadow_totals_count(s), 6);
    shadow_totals_free(s);
    /* depth 0: everything in the empty trace */
    s = totals_of(t, 0);
    ck_assert_uint_eq(shadow_totals_count(s), 1);
    ck_assert_uint_eq(shadow_totals_at(s, 0)->n, 0);
    ck_assert_uint_eq(shadow_totals_at(s, 0)->calls, 1 + 678 + 12345 + 1000 + 100);
    shadow_totals_free(s);
    ck_assert_uint_eq(shadow_stack_thread_stats(t).unmatched_exits, 0);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(recursion_counts_inclusive_time_once)
{
    struct shadow_thread *t = shadow_stack_thread_new(true, NULL);
    uint64_t now = 0;
    for (int d = 0; d < 10; d++)
        shadow_stack_enter(t, M(REC), now += 10, 4);
    for (int d = 0; d < 10; d++)
        shadow_stack_exit(t, M(REC), now += 10);
    struct shadow_totals *s = totals_of(t, 4);
    const struct shadow_method_total *m = method_of(s, M(REC));
    ck_assert_uint_eq(m->calls, 10);
    ck_assert_uint_eq(m->total, 190); /* outermost entry at 10, exit at 200 */
    ck_assert_uint_eq(m->self, 190);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(exit_below_top_unwinds)
{
    /* A constructor whose super() threw: its own exit is missing, the caller's comes. */
    struct shadow_thread *t = shadow_stack_thread_new(true, NULL);
    shadow_stack_enter(t, M(MAIN), 0, 4);
    shadow_stack_enter(t, M(MID), 10, 4);
    shadow_stack_enter(t, M(LEAF), 20, 4);
    shadow_stack_enter(t, M(REC), 30, 4);
    shadow_stack_exit(t, M(MID), 70);
    ck_assert_uint_eq(shadow_stack_height(t), 1);
    ck_assert_uint_eq(shadow_stack_thread_stats(t).unwound, 2);
    shadow_stack_exit(t, M(MAIN), 100);
    struct shadow_totals *s = totals_of(t, 4);
    shadow_frame rec[] = {M(REC), M(LEAF), M(MID), M(MAIN)};
    shadow_frame leaf[] = {M(LEAF), M(MID), M(MAIN)};
    shadow_frame mid[] = {M(MID), M(MAIN)};
    ck_assert_uint_eq(row_of(s, 0, rec, 4)->self, 40);
    ck_assert_uint_eq(row_of(s, 0, leaf, 3)->self, 10);
    ck_assert_uint_eq(row_of(s, 0, mid, 2)->self, 10);
    ck_assert_uint_eq(method_of(s, M(LEAF))->total, 50);
    ck_assert_uint_eq(method_of(s, M(MAIN))->total, 100);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(exit_never_entered_is_ignored)
{
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    shadow_stack_exit(t, M(MAIN), 5); /* empty stack */
    shadow_stack_enter(t, M(MID), 10, 4);
    shadow_stack_exit(t, M(LEAF), 15); /* not on the stack */
    ck_assert_uint_eq(shadow_stack_height(t), 1);
    shadow_stack_exit(t, M(MID), 20);
    ck_assert_uint_eq(shadow_stack_thread_stats(t).unmatched_exits, 2);
    struct shadow_totals *s = totals_of(t, 4);
    ck_assert_uint_eq(shadow_totals_count(s), 1);
    ck_assert_uint_eq(shadow_totals_at(s, 0)->self, 10);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(depth_change_keeps_old_nodes)
{
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    shadow_stack_enter(t, M(MAIN), 0, 2);
    shadow_stack_enter(t, M(MID), 0, 2);
    shadow_stack_enter(t, M(LEAF), 0, 2);
    shadow_stack_exit(t, M(LEAF), 1);
    shadow_stack_enter(t, M(LEAF), 1, 3); /* depth 3 from now on */
    shadow_stack_exit(t, M(LEAF), 2);
    shadow_stack_exit(t, M(MID), 2);
    shadow_stack_exit(t, M(MAIN), 2);
    struct shadow_totals *s = totals_of(t, 3);
    shadow_frame l2[] = {M(LEAF), M(MID)}, l3[] = {M(LEAF), M(MID), M(MAIN)};
    ck_assert_uint_eq(row_of(s, 0, l2, 2)->calls, 1);
    ck_assert_uint_eq(row_of(s, 0, l3, 3)->calls, 1);
    shadow_totals_free(s);
    s = totals_of(t, 2); /* cut to 2 frames: the two merge */
    ck_assert_uint_eq(row_of(s, 0, l2, 2)->calls, 2);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(callee_table_grows_under_an_open_call)
{
    /* depth 1: [REC] calls itself, so the entry of the inner REC points into [REC]'s callee
     * table, which then grows as REC calls new methods. */
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    uint64_t now = 0;
    shadow_stack_enter(t, M(REC), now++, 1);
    shadow_stack_enter(t, M(REC), now++, 1);
    for (uint32_t m = 0; m < 100; m++) {
        shadow_stack_enter(t, F(20, m), now++, 1);
        shadow_stack_exit(t, F(20, m), now++);
    }
    shadow_stack_exit(t, M(REC), now++);
    shadow_stack_exit(t, M(REC), now++);
    ck_assert_uint_eq(shadow_stack_height(t), 0);
    struct shadow_totals *s = totals_of(t, 1);
    shadow_frame rec[] = {M(REC)};
    ck_assert_uint_eq(row_of(s, 0, rec, 1)->calls, 2);
    ck_assert_uint_eq(row_of(s, 0, rec, 1)->self, (now - 1) - 100);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(many_traces_and_methods)
{
    /* 20000 methods each called from 3 callers: 60000 traces, every table grows. */
    struct shadow_thread *t = shadow_stack_thread_new(true, NULL);
    uint64_t now = 0;
    shadow_stack_enter(t, M(MAIN), now++, 3);
    for (int c = 0; c < 3; c++) {
        shadow_stack_enter(t, F(9, c), now++, 3);
        for (uint32_t m = 0; m < 20000; m++) {
            for (uint32_t k = 0; k <= m % 3; k++) {
                shadow_stack_enter(t, F(100 + m / 1000, m), now++, 3);
                shadow_stack_exit(t, F(100 + m / 1000, m), now++);
            }
        }
        shadow_stack_exit(t, F(9, c), now++);
    }
    shadow_stack_exit(t, M(MAIN), now++);
    ck_assert_uint_eq(shadow_stack_node_count(t), 1 + 1 + 3 + 60000);
    struct shadow_totals *s = totals_of(t, 3);
    ck_assert_uint_eq(shadow_totals_count(s), 1 + 3 + 60000);
    for (uint32_t m = 0; m < 20000; m += 997) {
        shadow_frame k[] = {F(100 + m / 1000, m), F(9, 2), M(MAIN)};
        const struct shadow_total *r = row_of(s, 0, k, 3);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(r->calls, m % 3 + 1);
        ck_assert_uint_eq(r->self, m % 3 + 1);
        ck_assert_uint_eq(method_of(s, k[0])->calls, 3 * (m % 3 + 1));
    }
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(deep_stack_and_overflow)
{
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    for (uint32_t i = 0; i < SHADOW_MAX_HEIGHT + 10; i++)
        shadow_stack_enter(t, M(REC), i, 4);
    ck_assert_uint_eq(shadow_stack_height(t), SHADOW_MAX_HEIGHT);
    ck_assert_uint_eq(shadow_stack_thread_stats(t).overflow, 10);
    for (uint32_t i = 0; i < SHADOW_MAX_HEIGHT + 10; i++)
        shadow_stack_exit(t, M(REC), SHADOW_MAX_HEIGHT + 10 + i);
    ck_assert_uint_eq(shadow_stack_height(t), 0);
    ck_assert_uint_eq(shadow_stack_thread_stats(t).unmatched_exits, 0);
    struct shadow_totals *s = totals_of(t, 4);
    shadow_frame r4[] = {M(REC), M(REC), M(REC), M(REC)};
    ck_assert_uint_eq(row_of(s, 0, r4, 4)->calls, SHADOW_MAX_HEIGHT - 3);
    shadow_totals_free(s);
    shadow_stack_thread_free(t);
}
END_TEST

START_TEST(totals_over_threads)
{
    struct shadow_thread *a = shadow_stack_thread_new(true, NULL),
                         *b = shadow_stack_thread_new(true, NULL);
    uint64_t ca = 0, cb = 1000;
    known_program(a, &ca);
    known_program(b, &cb);
    struct shadow_totals *merged = shadow_totals_new(), *split = shadow_totals_new();
    ck_assert_int_eq(shadow_totals_add_thread(merged, a, 0, 4), 0);
    ck_assert_int_eq(shadow_totals_add_thread(merged, b, 0, 4), 0);
    ck_assert_int_eq(shadow_totals_add_thread(split, a, 1, 4), 0);
    ck_assert_int_eq(shadow_totals_add_thread(split, b, 2, 4), 0);
    shadow_frame leaf[] = {M(LEAF), M(MID), M(MAIN)};
    ck_assert_uint_eq(row_of(merged, 0, leaf, 3)->calls, 2 * 12345);
    ck_assert_uint_eq(row_of(split, 1, leaf, 3)->calls, 12345);
    ck_assert_uint_eq(row_of(split, 2, leaf, 3)->calls, 12345);
    ck_assert_uint_eq(shadow_totals_count(split), 2 * shadow_totals_count(merged));
    /* a copy cut to depth 2 */
    struct shadow_totals *cut = shadow_totals_new();
    ck_assert_int_eq(shadow_totals_add_totals(cut, merged, 2), 0);
    shadow_frame leaf2[] = {M(LEAF), M(MID)};
    ck_assert_uint_eq(row_of(cut, 0, leaf2, 2)->calls, 2 * 12345);
    ck_assert_uint_eq(method_of(cut, M(REC))->calls, 2000);
    ck_assert_uint_eq(method_of(cut, M(MAIN))->total, method_of(merged, M(MAIN))->total);
    shadow_totals_free(cut);
    shadow_totals_free(merged);
    shadow_totals_free(split);
    shadow_stack_thread_free(a);
    shadow_stack_thread_free(b);
}
END_TEST

/* ---- the fold of unloaded classes' paths (shadow_fold.c) ---------------------------------- */

#define FOLD_CLASSES 48
static bool fold_gone[FOLD_CLASSES + 1];

static bool gone_of(uint32_t cnum, void *ctx)
{
    (void)ctx;
    return cnum <= FOLD_CLASSES && fold_gone[cnum];
}

struct fold_ctx {
    struct shadow_totals *retired;
    unsigned runs, folded;
};

static void fold_hook(struct shadow_thread *t, void *ctx)
{
    struct fold_ctx *fc = ctx;
    struct shadow_fold_result r;
    ck_assert_int_eq(shadow_fold_run(t, fc->retired, 0, gone_of, NULL, 16, &r), 0);
    ck_assert_uint_le(r.nodes_after, r.nodes_before);
    fc->runs++;
    fc->folded += r.nodes_after < r.nodes_before;
}

static bool gone_of(uint32_t cnum, void *ctx);

/* The rows of s as they print: each cut after its first frame of a gone class (below it a
 * trace is the empty one whatever the frames; below a live top, whatever that class was), rows
 * that become equal summed. */
static struct shadow_totals *printed_rows(const struct shadow_totals *s)
{
    struct shadow_totals *p = shadow_totals_new();
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < shadow_totals_count(s); i++) {
        const struct shadow_total *r = shadow_totals_at(s, i);
        shadow_frame cut[SHADOW_MAX_DEPTH];
        uint32_t n = r->n;
        memcpy(cut, r->frames, n * sizeof *cut);
        for (uint32_t g = 0; g < r->n; g++)
            if (cut[g] == SHADOW_FRAME_UNLOADED || gone_of(SHADOW_CNUM(cut[g]), NULL)) {
                if (g > 0) /* below a live top: which gone class does not print */
                    cut[g] = SHADOW_FRAME_UNLOADED;
                n = g + 1;
                break;
            }
        ck_assert_int_eq(shadow_totals_add_count(p, r->thread, cut, n, r->calls, r->self), 0);
    }
    return p;
}

/* Every printed row and every method of a equal to b's (both cut to depth). */
static void assert_same_totals(const struct shadow_totals *a, const struct shadow_totals *b)
{
    struct shadow_totals *pa = printed_rows(a), *pb = printed_rows(b);
    ck_assert_uint_eq(shadow_totals_count(pa), shadow_totals_count(pb));
    for (size_t i = 0; i < shadow_totals_count(pa); i++) {
        const struct shadow_total *r = shadow_totals_at(pa, i);
        const struct shadow_total *o = row_of(pb, r->thread, r->frames, r->n);
        ck_assert_ptr_nonnull(o);
        ck_assert_uint_eq(r->calls, o->calls);
        ck_assert_uint_eq(r->self, o->self);
    }
    shadow_totals_free(pa);
    shadow_totals_free(pb);
    ck_assert_uint_eq(shadow_totals_method_count(a), shadow_totals_method_count(b));
    for (size_t i = 0; i < shadow_totals_method_count(a); i++) {
        const struct shadow_method_total *m = shadow_totals_method_at(a, i);
        const struct shadow_method_total *o = method_of(b, m->frame);
        ck_assert_ptr_nonnull(o);
        ck_assert_uint_eq(m->calls, o->calls);
        ck_assert_uint_eq(m->self, o->self);
        ck_assert_uint_eq(m->total, o->total);
    }
}

/* The folded thread's totals (its folded rows and what it still holds) against a thread fed the
 * same calls that never folds. */
static void compare(struct shadow_thread *folded, struct fold_ctx *fc, struct shadow_thread *ref,
                    unsigned depth)
{
    struct shadow_totals *a = shadow_totals_new(), *b = totals_of(ref, depth);
    ck_assert_int_eq(shadow_totals_add_totals(a, fc->retired, depth), 0);
    ck_assert_int_eq(shadow_totals_add_thread(a, folded, 0, depth), 0);
    assert_same_totals(a, b);
    shadow_totals_free(a);
    shadow_totals_free(b);
}

/* Random calls over classes 1..48 (class 1 never unloads, the others one by one, never while on
 * the stack, and are never called again), depth 3, with the fold hook due every few nodes: the
 * counts, times and per-method totals stay exactly those of a thread that keeps every path, and
 * the folded thread holds far fewer nodes. */
START_TEST(fold_keeps_every_count)
{
    memset(fold_gone, 0, sizeof fold_gone);
    struct fold_ctx fc = {.retired = shadow_totals_new()};
    struct shadow_thread *t = shadow_stack_thread_new(true, NULL);
    struct shadow_thread *ref = shadow_stack_thread_new(true, NULL);
    shadow_stack_set_fold_hook(t, fold_hook, &fc, 16);
    shadow_frame stack[64];
    uint32_t height = 0, next_gone = 2;
    uint64_t now = 0, rnd = 12345;
    for (int step = 0; step < 100000; step++) {
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(rnd >> 33);
        now += 1 + r % 7;
        if (height < 64 && (height < 2 || r % 100 < 48)) {
            /* a live class near the newest gone one, so paths keep changing */
            uint32_t cnum = 1;
            if (height >= 2 && next_gone <= FOLD_CLASSES)
                cnum = next_gone + (r >> 8) % 3 > FOLD_CLASSES ? FOLD_CLASSES
                                                               : next_gone + (r >> 8) % 3;
            shadow_frame f = F(cnum, (r >> 12) % 4);
            stack[height++] = f;
            shadow_stack_enter(t, f, now, 3);
            shadow_stack_enter(ref, f, now, 3);
        } else if (height) {
            shadow_frame f = stack[--height];
            shadow_stack_exit(t, f, now);
            shadow_stack_exit(ref, f, now);
        }
        if (step % 2000 == 1999 && next_gone < FOLD_CLASSES) {
            bool on_stack = false;
            for (uint32_t h = 0; h < height; h++)
                on_stack |= SHADOW_CNUM(stack[h]) == next_gone;
            if (!on_stack)
                fold_gone[next_gone++] = true;
        }
        if (step % 25000 == 24999)
            compare(t, &fc, ref, 3);
    }
    while (height) {
        shadow_frame f = stack[--height];
        shadow_stack_exit(t, f, ++now);
        shadow_stack_exit(ref, f, now);
    }
    compare(t, &fc, ref, 3);
    compare(t, &fc, ref, 2); /* cut further, as a dump at a smaller depth does */
    ck_assert_uint_gt(fc.folded, 5);
    ck_assert_uint_lt(shadow_stack_node_count(t), shadow_stack_node_count(ref) / 2);
    ck_assert_uint_lt(shadow_stack_thread_bytes(t), shadow_stack_thread_bytes(ref) / 2);
    shadow_totals_free(fc.retired);
    shadow_stack_thread_free(t);
    shadow_stack_thread_free(ref);
}
END_TEST

/* A frame of a gone class still on the stack (an exit the tracker never saw) keeps its path:
 * the calls made under it after the fold are counted on the same rows. */
START_TEST(fold_keeps_paths_on_the_stack)
{
    memset(fold_gone, 0, sizeof fold_gone);
    struct shadow_totals *retired = shadow_totals_new();
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    struct shadow_thread *ref = shadow_stack_thread_new(false, NULL);
    shadow_frame path[] = {F(1, 0), F(2, 0), F(3, 0)};
    uint64_t now = 0;
    for (int i = 0; i < 3; i++) {
        shadow_stack_enter(t, path[i], now += 2, 4);
        shadow_stack_enter(ref, path[i], now, 4);
    }
    for (int k = 0; k < 40; k++) { /* paths of class 4 under the open ones */
        shadow_stack_enter(t, F(4, (uint32_t)k), now += 1, 4);
        shadow_stack_enter(ref, F(4, (uint32_t)k), now, 4);
        shadow_stack_exit(t, F(4, (uint32_t)k), now += 3);
        shadow_stack_exit(ref, F(4, (uint32_t)k), now);
    }
    fold_gone[2] = fold_gone[4] = true;
    struct shadow_fold_result r;
    ck_assert_int_eq(shadow_fold_run(t, retired, 0, gone_of, NULL, 16, &r), 0);
    ck_assert_uint_eq(r.rows, 40);
    ck_assert_uint_eq(r.nodes_after, 4); /* the root and the three open frames */
    /* each folded path is kept as its top frame alone (a frame of gone class 4) */
    ck_assert_uint_eq(shadow_totals_count(retired), 40);
    for (int k = 0; k < 40; k++) {
        shadow_frame top = F(4, (uint32_t)k);
        ck_assert_ptr_nonnull(row_of(retired, 0, &top, 1));
        ck_assert_uint_eq(row_of(retired, 0, &top, 1)->calls, 1);
    }
    for (int k = 0; k < 5; k++) {
        shadow_stack_enter(t, F(5, 0), now += 1, 4);
        shadow_stack_enter(ref, F(5, 0), now, 4);
        shadow_stack_exit(t, F(5, 0), now += 3);
        shadow_stack_exit(ref, F(5, 0), now);
    }
    for (int i = 2; i >= 0; i--) {
        shadow_stack_exit(t, path[i], now += 5);
        shadow_stack_exit(ref, path[i], now);
    }
    struct shadow_totals *a = shadow_totals_new(), *b = totals_of(ref, 4);
    ck_assert_int_eq(shadow_totals_add_totals(a, retired, 4), 0);
    ck_assert_int_eq(shadow_totals_add_thread(a, t, 0, 4), 0);
    assert_same_totals(a, b);
    shadow_frame five[] = {F(5, 0), F(3, 0), F(2, 0), F(1, 0)};
    ck_assert_uint_eq(row_of(a, 0, five, 4)->calls, 5);
    shadow_totals_free(a);
    shadow_totals_free(b);
    shadow_totals_free(retired);
    shadow_stack_thread_free(t);
    shadow_stack_thread_free(ref);
}
END_TEST

/* Calls of one gone method from different live callers become one row (what prints: the empty
 * trace under that method's name), and calls of a live method from different gone classes one
 * row under the unloaded marker, with every call and tick. */
START_TEST(fold_merges_the_paths_of_a_gone_method)
{
    memset(fold_gone, 0, sizeof fold_gone);
    struct shadow_totals *retired = shadow_totals_new();
    struct shadow_thread *t = shadow_stack_thread_new(false, NULL);
    uint64_t now = 0;
    for (uint32_t caller = 0; caller < 3; caller++) {
        shadow_stack_enter(t, F(1, caller), now += 1, 4);
        for (int k = 0; k < 2; k++) {
            shadow_stack_enter(t, F(6, 0), now += 1, 4);
            shadow_stack_exit(t, F(6, 0), now += 5);
        }
        shadow_stack_exit(t, F(1, caller), now += 1);
    }
    /* live method 1.7 called from two gone classes' methods, under one live caller */
    shadow_stack_enter(t, F(1, 0), now += 1, 4);
    for (uint32_t gone = 7; gone <= 8; gone++) {
        shadow_stack_enter(t, F(gone, 0), now += 1, 4);
        shadow_stack_enter(t, F(1, 7), now += 1, 4);
        shadow_stack_exit(t, F(1, 7), now += 10);
        shadow_stack_exit(t, F(gone, 0), now += 1);
    }
    shadow_stack_exit(t, F(1, 0), now += 1);
    fold_gone[6] = fold_gone[7] = fold_gone[8] = true;
    struct shadow_fold_result r;
    ck_assert_int_eq(shadow_fold_run(t, retired, 0, gone_of, NULL, 16, &r), 0);
    ck_assert_uint_eq(r.rows, 7); /* 6.0 under 3 callers, 7.0, 8.0, 1.7 under each */
    ck_assert_uint_eq(shadow_totals_count(retired), 4);
    shadow_frame six = F(6, 0);
    ck_assert_uint_eq(row_of(retired, 0, &six, 1)->calls, 6);
    ck_assert_uint_eq(row_of(retired, 0, &six, 1)->self, 30);
    shadow_frame seven = F(7, 0), eight = F(8, 0);
    ck_assert_uint_eq(row_of(retired, 0, &seven, 1)->calls, 1);
    ck_assert_uint_eq(row_of(retired, 0, &eight, 1)->calls, 1);
    shadow_frame live_under_gone[] = {F(1, 7), SHADOW_FRAME_UNLOADED};
    ck_assert_ptr_nonnull(row_of(retired, 0, live_under_gone, 2));
    ck_assert_uint_eq(row_of(retired, 0, live_under_gone, 2)->calls, 2);
    ck_assert_uint_eq(row_of(retired, 0, live_under_gone, 2)->self, 20);
    shadow_totals_free(retired);
    shadow_stack_thread_free(t);
}
END_TEST

int main(void)
{
    return run_tests("shadow-stack", "core", 120,
                     TESTS(self_time_excludes_callees, exact_counts_per_trace,
                           recursion_counts_inclusive_time_once, exit_below_top_unwinds,
                           exit_never_entered_is_ignored, depth_change_keeps_old_nodes,
                           callee_table_grows_under_an_open_call, many_traces_and_methods,
                           deep_stack_and_overflow, totals_over_threads, fold_keeps_every_count,
                           fold_keeps_paths_on_the_stack, fold_merges_the_paths_of_a_gone_method));
}

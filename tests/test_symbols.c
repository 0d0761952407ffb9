/* Unit tests of agent/symbols' forgetting of unloaded classes (unload_forget, frame_table_forget,
 * trace_table_forget), on synthetic classes and methods, which need no JVMTI: the lookups of a
 * class unloaded a pass ago go, its traces and frames stay as they were (outputs name them), and
 * a jmethodID handed to a new method afterwards gets new serials, never the old ones. */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "class_table.h"
#include "frame_table.h"
#include "mem_account.h"
#include "string_table.h"
#include "trace_table.h"
#include "unload_forget.h"

/* Method ids: addresses of our own data, as frame_table_register_synthetic asks. */
static char ids[6];
#define ID(i) ((jmethodID)(void *)&ids[i])

static uint32_t intern(const int *methods, int n)
{
    jvmtiFrameInfo f[8];
    for (int i = 0; i < n; i++)
        f[i] = (jvmtiFrameInfo){ID(methods[i]), i};
    return trace_table_intern(NULL, f, n, 0);
}

static const char *method_name_of(uint32_t frame)
{
    struct hprof_frame view;
    frame_table_describe(frame, &view);
    return view.method_name;
}

START_TEST(unloaded_lookups_go_entries_stay)
{
    size_t charged0 = mem_account_charged();
    ck_assert_int_eq(string_table_init(), 0);
    ck_assert_int_eq(class_table_init(), 0);
    ck_assert_int_eq(frame_table_init(true), 0);
    ck_assert_int_eq(trace_table_init(8), 0);
    /* A stays loaded, B unloads; methods 0, 1 of A, 2, 3 of B, 4, 5 of C. */
    uint32_t a = class_table_register_synthetic("A"), b = class_table_register_synthetic("B");
    uint32_t c = class_table_register_synthetic("C");
    const char *names[6] = {"a0", "a1", "b2", "b3", "c4", "c5"};
    uint32_t cls[6] = {a, a, b, b, c, c};
    for (int i = 0; i < 6; i++)
        ck_assert(frame_table_register_synthetic(ID(i), cls[i], names[i]));
    const int s1[] = {0, 1}, s2[] = {2, 0}, s3[] = {4, 5, 3}, s4[] = {1};
    uint32_t t1 = intern(s1, 2), t2 = intern(s2, 2), t3 = intern(s3, 3), t4 = intern(s4, 1);
    ck_assert_uint_eq(t2, t1 + 1);
    uint32_t traces = trace_table_count();
    uint32_t t2_frames[2], t3_frames[3];
    memcpy(t2_frames, trace_table_get(t2)->frames, sizeof t2_frames);
    memcpy(t3_frames, trace_table_get(t3)->frames, sizeof t3_frames);

    class_table_mark_unloaded(b);
    class_table_mark_unloaded(b); /* ObjectFree of one class comes once; counted once anyway */
    ck_assert_uint_eq(class_table_unloaded_count(), 1);
    unload_forget_poll(); /* below FORGET_BATCH: no pass */
    ck_assert_uint_eq(frame_table_class_of(ID(2)), b);
    /* The first pass sees B unloaded, the next one forgets it. */
    ck_assert_uint_eq(unload_forget_pass(), 0);
    ck_assert_uint_eq(frame_table_class_of(ID(2)), b);
    size_t before = mem_account_charged();
    ck_assert_uint_eq(unload_forget_pass(), 1);
    ck_assert_uint_eq(frame_table_class_of(ID(2)), 0);
    ck_assert_uint_eq(frame_table_class_of(ID(3)), 0);
    ck_assert_uint_eq(frame_table_class_of(ID(0)), a);
    ck_assert_uint_eq(frame_table_class_of(ID(4)), c);
    ck_assert_uint_lt(mem_account_charged(), before); /* the rebuilt indexes are smaller */
    ck_assert_uint_eq(unload_forget_pass(), 0);       /* once forgotten, done */

    /* Traces with a frame of B are marked forgotten (heap=sites drops their sites' lookups). */
    ck_assert(atomic_load(&trace_table_get(t2)->forgotten));
    ck_assert(atomic_load(&trace_table_get(t3)->forgotten));
    ck_assert(!atomic_load(&trace_table_get(t1)->forgotten));
    ck_assert(!atomic_load(&trace_table_get(t4)->forgotten));

    /* Entries and serials stay: the traces print as before. */
    ck_assert_uint_eq(trace_table_count(), traces);
    ck_assert_mem_eq(trace_table_get(t2)->frames, t2_frames, sizeof t2_frames);
    ck_assert_mem_eq(trace_table_get(t3)->frames, t3_frames, sizeof t3_frames);
    ck_assert_str_eq(method_name_of(t2_frames[0]), "b2");
    ck_assert_str_eq(method_name_of(t3_frames[2]), "b3");
    /* Stacks of loaded classes still find their traces. */
    ck_assert_uint_eq(intern(s1, 2), t1);
    ck_assert_uint_eq(intern(s4, 1), t4);

    /* The VM hands B's freed method id 2 to a method of a new class D: it gets a frame and a
     * trace of its own, new serials, and B's trace still names b2. */
    uint32_t d = class_table_register_synthetic("D");
    ck_assert(frame_table_register_synthetic(ID(2), d, "d2"));
    uint32_t t5 = intern(s2, 2);
    ck_assert_uint_eq(t5, traces + 1);
    const struct trace_info *n5 = trace_table_get(t5);
    ck_assert_uint_gt(n5->frames[0], t3_frames[2]);
    ck_assert_str_eq(method_name_of(n5->frames[0]), "d2");
    ck_assert_uint_eq(n5->frames[1], t2_frames[1]); /* A's frame is the same frame */
    ck_assert_str_eq(method_name_of(trace_table_get(t2)->frames[0]), "b2");

    /* Forgetting D drops t5's two lookups, by raw frames and by frame serials (no stack
     * resolves to d2's frame once D's methods are forgotten), and t5 keeps its frames. */
    uint8_t forget_d[8] = {0};
    ck_assert_uint_lt(d, sizeof forget_d);
    forget_d[d] = 1;
    uint32_t t5_frames[2] = {n5->frames[0], n5->frames[1]};
    ck_assert_uint_eq(trace_table_forget(forget_d, sizeof forget_d), 2);
    ck_assert_uint_eq(trace_table_forget(forget_d, sizeof forget_d), 0);
    ck_assert(atomic_load(&trace_table_get(t5)->forgotten));
    ck_assert_mem_eq(trace_table_get(t5)->frames, t5_frames, sizeof t5_frames);
    ck_assert_str_eq(method_name_of(trace_table_get(t5)->frames[0]), "d2");
    ck_assert_uint_eq(intern(s1, 2), t1);

    trace_table_teardown();
    frame_table_teardown();
    class_table_teardown();
    string_table_teardown();
    ck_assert_uint_eq(mem_account_charged(), charged0);
}
END_TEST

/* unload_forget_poll: no pass below FORGET_BATCH unloads; an unload is forgotten one pass
 * after the pass that saw it, never in the same one. */
START_TEST(poll_forgets_a_batch_one_pass_late)
{
    enum { N = 2 * FORGET_BATCH };
    static char mids[N];
    size_t charged0 = mem_account_charged();
    ck_assert_int_eq(string_table_init(), 0);
    ck_assert_int_eq(class_table_init(), 0);
    ck_assert_int_eq(frame_table_init(true), 0);
    ck_assert_int_eq(trace_table_init(8), 0);
    uint32_t cls[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "K%d", i);
        cls[i] = class_table_register_synthetic(name);
        jmethodID id = (jmethodID)(void *)&mids[i];
        ck_assert(frame_table_register_synthetic(id, cls[i], "m"));
        ck_assert_uint_ne(frame_table_intern(NULL, id, 0), 0);
    }
    uint32_t base = class_table_unloaded_count();
    for (unsigned i = 0; i < FORGET_BATCH - 1; i++)
        class_table_mark_unloaded(cls[i]);
    unload_forget_poll(); /* one short of a batch: nothing happens */
    class_table_mark_unloaded(cls[FORGET_BATCH - 1]);
    ck_assert_uint_eq(class_table_unloaded_count() - base, FORGET_BATCH);
    unload_forget_poll(); /* a pass: the first batch is seen, not forgotten */
    for (unsigned i = 0; i < FORGET_BATCH; i++)
        ck_assert_uint_eq(frame_table_class_of((jmethodID)(void *)&mids[i]), cls[i]);
    for (unsigned i = FORGET_BATCH; i < N; i++)
        class_table_mark_unloaded(cls[i]);
    unload_forget_poll(); /* the next pass: the first batch goes, the second is seen */
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(frame_table_class_of((jmethodID)(void *)&mids[i]),
                          ((unsigned)i < FORGET_BATCH ? 0 : cls[i]));
    trace_table_teardown();
    frame_table_teardown();
    class_table_teardown();
    string_table_teardown();
    ck_assert_uint_eq(mem_account_charged(), charged0);
}
END_TEST

/* unload_forget_poll's batch follows the classes still loaded, not all classes ever seen: after
 * a long run of unloads (16 batches gone, 2 batches loaded) a pass runs after FORGET_BATCH more
 * unloads, where a sixteenth of all classes (18 batches / 16) would wait longer; so the lookups
 * kept between passes do not grow with the run. */
START_TEST(poll_batch_follows_loaded_classes)
{
    enum { B = FORGET_BATCH, N = 18 * FORGET_BATCH };
    static char mids[N];
    size_t charged0 = mem_account_charged();
    ck_assert_int_eq(string_table_init(), 0);
    ck_assert_int_eq(class_table_init(), 0);
    ck_assert_int_eq(frame_table_init(true), 0);
    ck_assert_int_eq(trace_table_init(8), 0);
    uint32_t base_classes = class_table_count(), base = class_table_unloaded_count();
    static uint32_t cls[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "L%d", i);
        cls[i] = class_table_register_synthetic(name);
        jmethodID id = (jmethodID)(void *)&mids[i];
        ck_assert(frame_table_register_synthetic(id, cls[i], "m"));
        ck_assert_uint_ne(frame_table_intern(NULL, id, 0), 0);
    }
    for (int i = 0; i < 16 * B; i++)
        class_table_mark_unloaded(cls[i]);
    ck_assert_uint_eq(unload_forget_pass(), 0);             /* seen */
    ck_assert_uint_eq(unload_forget_pass(), 16 * B);        /* forgotten */
    ck_assert_uint_ge(class_table_count() / 16, B + B / 8); /* the old rule would wait */
    ck_assert_uint_eq(class_table_count() - base_classes, N);
    for (int i = 16 * B; i < 17 * B; i++) {
        class_table_mark_unloaded(cls[i]);
        unload_forget_poll(); /* a pass at the last one: the batch is seen */
    }
    ck_assert_uint_eq(class_table_unloaded_count() - base, 17 * B);
    ck_assert_uint_eq(unload_forget_pass(), B); /* seen by the poll's pass, so forgotten now */
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(frame_table_class_of((jmethodID)(void *)&mids[i]),
                          i < 17 * B ? 0 : cls[i]);
    trace_table_teardown();
    frame_table_teardown();
    class_table_teardown();
    string_table_teardown();
    ck_assert_uint_eq(mem_account_charged(), charged0);
}
END_TEST

static void strings_use(const char *name, const struct mem_use *use, void *ctx)
{
    if (strcmp(name, "strings") == 0)
        *(struct mem_use *)ctx = *use;
}

/* The string table against a reference: 100,000 distinct texts (and the empty one) interned
 * twice get one id each, in order, their texts back, and cost under 60 bytes a string (a keymap
 * index cost about 87 here: 24-byte slots and a key copy beside the text); teardown gives every
 * byte back. */
START_TEST(strings_interned_once_compactly)
{
    enum { N = 100000 };
    size_t charged0 = mem_account_charged();
    ck_assert_int_eq(string_table_init(), 0);
    static hprof_id id[N];
    char text[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            snprintf(text, sizeof text, "s%d", i);
            hprof_id got = string_table_intern(text);
            if (round == 0) {
                ck_assert_uint_eq(got, (hprof_id)i + 1);
                id[i] = got;
            }
            ck_assert_uint_eq(got, id[i]);
        }
    for (int i = 0; i < N; i++) {
        snprintf(text, sizeof text, "s%d", i);
        ck_assert_str_eq(string_table_text(id[i]), text);
    }
    hprof_id empty = string_table_intern("");
    ck_assert_uint_eq(empty, N + 1);
    ck_assert_uint_eq(string_table_intern(""), empty);
    ck_assert_str_eq(string_table_text(empty), "");
    ck_assert_ptr_null(string_table_text(N + 2));
    ck_assert_uint_eq(string_table_intern(NULL), 0);
    struct mem_use use = {0, 0};
    mem_account_each(strings_use, &use);
    ck_assert_uint_eq(use.entries, N + 1);
    ck_assert_uint_lt(use.bytes, 60u * N);
    ck_assert_uint_eq(mem_account_charged() - charged0, use.bytes);
    string_table_teardown();
    ck_assert_uint_eq(mem_account_charged(), charged0);
}
END_TEST

int main(void)
{
    return run_tests("symbols", "forget", 60,
                     TESTS(unloaded_lookups_go_entries_stay, poll_forgets_a_batch_one_pass_late,
                           poll_batch_follows_loaded_classes, strings_interned_once_compactly));
}

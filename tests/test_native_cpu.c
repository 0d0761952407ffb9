/* Unit tests of whole-process cpu=samples: kernel thread names to kinds (thread_kinds.h). */
#include "check_helpers.h"
#include <check.h>
#include <string.h>

#include "thread_kinds.h"

START_TEST(hotspot_thread_names_have_their_kinds)
{
    /* Names as /proc/self/task/<tid>/comm shows them on JDK 17-25 (15 characters). */
    static const struct {
        const char *comm;
        enum thread_kind kind;
    } cases[] = {
        {"GC Thread#0", THREAD_KIND_GC},
        {"G1 Main Marker", THREAD_KIND_GC},
        {"G1 Conc#0", THREAD_KIND_GC},
        {"G1 Refine#0", THREAD_KIND_GC},
        {"G1 Service", THREAD_KIND_GC},
        {"ZWorker#1", THREAD_KIND_GC},
        {"C2 CompilerThre", THREAD_KIND_JIT},
        {"C1 CompilerThre", THREAD_KIND_JIT},
        {"Sweeper thread", THREAD_KIND_JIT},
        {"VM Thread", THREAD_KIND_VM},
        {"VM Periodic Tas", THREAD_KIND_VM},
        {"Service Thread", THREAD_KIND_VM},
        {"Monitor Deflati", THREAD_KIND_VM},
        {"HPROF cpu sampl", THREAD_KIND_AGENT},
        {"main", THREAD_KIND_OTHER},
        {"java", THREAD_KIND_OTHER},
        {"Reference Handl", THREAD_KIND_OTHER},
        {"", THREAD_KIND_OTHER},
        {"GC", THREAD_KIND_OTHER},
        {"G1", THREAD_KIND_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(thread_kinds_of(cases[i].comm) == cases[i].kind, "%s: kind %d, expected %d",
                      cases[i].comm, (int)thread_kinds_of(cases[i].comm), (int)cases[i].kind);
}
END_TEST

START_TEST(kinds_have_bracketed_labels)
{
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_GC), "[GC]");
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_JIT), "[JIT]");
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_VM), "[VM]");
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_AGENT), "[agent]");
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_OTHER), "[native]");
    ck_assert_str_eq(thread_kinds_label(THREAD_KIND_COUNT), "[native]");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("native-cpu");
    suite_add_tests(s, "core", 60,
                    TESTS(hotspot_thread_names_have_their_kinds, kinds_have_bracketed_labels));
    return run_suite(s);
}

/* Unit tests of whole-process cpu=samples: kernel thread names to kinds (thread_kinds.h), and
 * native pcs to symbol and library (native_symbols.h) against the dynamic linker's own answer. */
#include "check_helpers.h"
#include <check.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "native_symbols.h"
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

/* A function of this executable: found in its .symtab (a local symbol .dynsym does not have). */
__attribute__((noinline)) static int local_function(int x)
{
    return x * 3 + 1;
}

static void check_resolves(struct native_symbols *ns, const void *fn, const char *name,
                           const char *library_prefix)
{
    struct native_place at;
    /* A pc a few bytes inside the function, as a sample would have. */
    ck_assert(native_symbols_lookup(ns, (uintptr_t)fn + 4, &at));
    ck_assert_ptr_nonnull(at.symbol);
    ck_assert_str_eq(at.symbol, name);
    ck_assert_msg(strncmp(at.library, library_prefix, strlen(library_prefix)) == 0,
                  "%s is in %s, expected %s...", name, at.library, library_prefix);
}

START_TEST(native_pcs_resolve_to_symbol_and_library)
{
    struct native_symbols *ns = native_symbols_new();
    ck_assert_ptr_nonnull(ns);
    ck_assert_int_eq(local_function(1), 4);
    check_resolves(ns, (const void *)deflate, "deflate", "libz.so");
    check_resolves(ns, (const void *)deflateInit2_, "deflateInit2_", "libz.so");
    check_resolves(ns, (const void *)local_function, "local_function", "test_native-cpu");
    /* An exported libc function: the name found is one the dynamic linker gives the same
     * address (libc has aliases: __strtol_internal, ...). */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(libc);
    void *fn = dlsym(libc, "strtoul");
    struct native_place in_libc;
    ck_assert(fn && native_symbols_lookup(ns, (uintptr_t)fn + 4, &in_libc));
    ck_assert_ptr_nonnull(in_libc.symbol);
    ck_assert_ptr_eq(dlsym(libc, in_libc.symbol), fn);
    ck_assert_msg(strncmp(in_libc.library, "libc.so", 7) == 0, "%s", in_libc.library);
    dlclose(libc);
    /* Heap memory is in no file mapping: no place (as the JIT's code cache). */
    char *heap = malloc(64);
    struct native_place at;
    ck_assert(!native_symbols_lookup(ns, (uintptr_t)heap, &at));
    free(heap);
    native_symbols_free(ns);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("native-cpu");
    suite_add_tests(s, "core", 60,
                    TESTS(hotspot_thread_names_have_their_kinds, kinds_have_bracketed_labels,
                          native_pcs_resolve_to_symbol_and_library));
    return run_suite(s);
}

/* Unit tests of the agent's pure C parts: the key map under every table, the append-only
 * segmented array, and class-name conversion. */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "names.h"
#include "ranking.h"
#include "segarray.h"

START_TEST(keymap_put_get_many)
{
    struct keymap *m = keymap_new(4);
    char key[32];
    for (uint32_t i = 1; i <= 100000; i++) {
        int n = snprintf(key, sizeof key, "key-%u", i);
        ck_assert_uint_eq(keymap_put(m, key, (size_t)n, i), i);
    }
    ck_assert_uint_eq(keymap_count(m), 100000);
    for (uint32_t i = 1; i <= 100000; i++) {
        int n = snprintf(key, sizeof key, "key-%u", i);
        uint32_t v = 0;
        ck_assert(keymap_get(m, key, (size_t)n, &v));
        ck_assert_uint_eq(v, i);
    }
    uint32_t v = 0;
    ck_assert(!keymap_get(m, "absent", 6, &v));
    keymap_free(m);
}
END_TEST

START_TEST(keymap_existing_value_wins)
{
    struct keymap *m = keymap_new(16);
    ck_assert_uint_eq(keymap_put(m, "a", 1, 7), 7);
    ck_assert_uint_eq(keymap_put(m, "a", 1, 9), 7);
    ck_assert_uint_eq(keymap_count(m), 1);
    /* Keys differing only in length or binary content are distinct. */
    uint8_t k1[3] = {0, 0, 0}, k2[2] = {0, 0};
    ck_assert_uint_eq(keymap_put(m, k1, 3, 1), 1);
    ck_assert_uint_eq(keymap_put(m, k2, 2, 2), 2);
    ck_assert_uint_eq(keymap_put(m, "", 0, 3), 3);
    ck_assert_uint_eq(keymap_count(m), 4);
    keymap_free(m);
}
END_TEST

START_TEST(keymap_large_keys)
{
    struct keymap *m = keymap_new(16);
    size_t len = 200000; /* larger than one key chunk */
    uint8_t *big = calloc(1, len);
    big[len - 1] = 1;
    ck_assert_uint_eq(keymap_put(m, big, len, 5), 5);
    uint32_t v = 0;
    ck_assert(keymap_get(m, big, len, &v));
    ck_assert_uint_eq(v, 5);
    big[len - 1] = 2;
    ck_assert(!keymap_get(m, big, len, &v));
    free(big);
    keymap_free(m);
}
END_TEST

START_TEST(segarray_addresses_are_stable)
{
    struct segarray *a = malloc(sizeof *a);
    segarray_init(a, sizeof(uint64_t));
    uint64_t *first = NULL;
    for (uint32_t i = 0; i < 3 * SEG_CHUNK + 5; i++) {
        uint32_t idx = segarray_append(a);
        ck_assert_uint_eq(idx, i);
        uint64_t *p = segarray_at(a, idx);
        *p = i * 3ull;
        if (i == 0)
            first = p;
    }
    ck_assert_ptr_eq(first, segarray_at(a, 0));
    ck_assert_uint_eq(segarray_count(a), 3 * SEG_CHUNK + 5);
    for (uint32_t i = 0; i < segarray_count(a); i++)
        ck_assert_uint_eq(*(uint64_t *)segarray_at(a, i), i * 3ull);
    for (uint32_t c = 0; c < SEG_CHUNKS; c++)
        free(atomic_load(&a->chunks[c]));
    free(a);
}
END_TEST

static void check_name(const char *sig, const char *want)
{
    char *got = names_java_class_name(sig);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(names_java_source_form)
{
    check_name("Ljava/lang/String;", "java.lang.String");
    check_name("[I", "int[]");
    check_name("[[J", "long[][]");
    check_name("[Z", "boolean[]");
    check_name("[[Ljava/lang/String;", "java.lang.String[][]");
    check_name("LAlloc$Foo;", "Alloc$Foo");
    check_name("[LAlloc$Foo;", "Alloc$Foo[]");
    check_name("LFoo$$Lambda$1/0x00007f4168000a08;", "Foo$$Lambda$1.0x00007f4168000a08");
    check_name("java/util/List", "java.util.List");
    check_name("I", "int");
    check_name("LI;", "I");
}
END_TEST

START_TEST(names_array_types)
{
    ck_assert_uint_eq(names_array_type("Ljava/lang/String;"), 0);
    ck_assert_uint_eq(names_array_type("[Ljava/lang/String;"), 2);
    ck_assert_uint_eq(names_array_type("[[I"), 2);
    ck_assert_uint_eq(names_array_type("[Z"), 4);
    ck_assert_uint_eq(names_array_type("[C"), 5);
    ck_assert_uint_eq(names_array_type("[F"), 6);
    ck_assert_uint_eq(names_array_type("[D"), 7);
    ck_assert_uint_eq(names_array_type("[B"), 8);
    ck_assert_uint_eq(names_array_type("[S"), 9);
    ck_assert_uint_eq(names_array_type("[I"), 10);
    ck_assert_uint_eq(names_array_type("[J"), 11);
}
END_TEST

START_TEST(ranking_sorts_and_cuts)
{
    struct hprof_cost_row rows[] = {
        {.trace_serial = 5, .cost = 10}, {.trace_serial = 2, .cost = 70},
        {.trace_serial = 9, .cost = 1},  {.trace_serial = 3, .cost = 10},
        {.trace_serial = 4, .cost = 9},
    };
    size_t keep = ranking_sort_and_cut(rows, 5, 100, 0.05);
    ck_assert_uint_eq(keep, 4);
    ck_assert_uint_eq(rows[0].trace_serial, 2);
    ck_assert_uint_eq(rows[1].trace_serial, 3); /* equal cost: smaller serial first */
    ck_assert_uint_eq(rows[2].trace_serial, 5);
    ck_assert_uint_eq(rows[3].trace_serial, 4);
    ck_assert_uint_eq(ranking_sort_and_cut(rows, 5, 100, 0.0), 5);
    ck_assert_uint_eq(ranking_sort_and_cut(rows, 5, 100, 1.0), 0);
    ck_assert_uint_eq(ranking_sort_and_cut(rows, 5, 0, 0.0), 0);
}
END_TEST

int main(void)
{
    return run_tests("agent-pure", "core", 60,
                     TESTS(keymap_put_get_many, keymap_existing_value_wins, keymap_large_keys,
                           segarray_addresses_are_stable, names_java_source_form, names_array_types,
                           ranking_sorts_and_cuts));
}

/* Unit tests of heap=dump's pure parts: JVMTI field index -> INSTANCE DUMP slot layouts, the
 * object-array size rule and the id map of the heap walk (the ascii writer holds a dump back
 * itself: test_writer.c). */
#include "check_helpers.h"
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_layout.h"
#include "heap_site_table.h"
#include "idmap.h"

static struct layout_field F(const char *name, enum hprof_basic_type t, bool is_static) {
    return (struct layout_field){(hprof_id)(uintptr_t)name[0], name, t, is_static};
}

/* class C extends B implements I (I declares 1 constant); B extends Object;
 *   B: int b1; static long bs; Object b2
 *   C: static int cs; byte c1; Object c2
 * JVMTI numbering: I's field 0, then B's fields 1..3, then C's 4..6. */
START_TEST(layout_numbers_superinterfaces_then_superclasses_then_own)
{
    struct layout_field b[] = {F("b1", HPROF_TYPE_INT, false), F("bs", HPROF_TYPE_LONG, true),
                               F("b2", HPROF_TYPE_OBJECT, false)};
    struct layout_field c[] = {F("cs", HPROF_TYPE_INT, true), F("c1", HPROF_TYPE_BYTE, false),
                               F("c2", HPROF_TYPE_OBJECT, false)};
    struct layout_level chain[] = {{c, 3}, {b, 3}, {NULL, 0} /* java.lang.Object */};
    struct class_layout l;
    ck_assert_int_eq(heap_layout_build(chain, 3, 1, &l), 0);
    ck_assert_uint_eq(l.nindex, 7);
    /* Instance order: own (c1, c2), then B's (b1, b2). */
    ck_assert_uint_eq(l.ninstance, 4);
    ck_assert_uint_eq(l.nown, 2);
    ck_assert_str_eq(l.instance[0].name, "c1");
    ck_assert_str_eq(l.instance[1].name, "c2");
    ck_assert_str_eq(l.instance[2].name, "b1");
    ck_assert_str_eq(l.instance[3].name, "b2");
    ck_assert_uint_eq(l.instance_bytes, 1 + 8 + 4 + 8);
    int32_t slots[7] = {-1, 2, -1, 3, -1, 0, 1};
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(l.slot_of_index[i], slots[i]);
    /* Statics: only the class's own, by its index. */
    ck_assert_uint_eq(l.nstatics, 1);
    ck_assert_str_eq(l.statics[0].name, "cs");
    int32_t statics[7] = {-1, -1, -1, -1, 0, -1, -1};
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(l.static_of_index[i], statics[i]);
    heap_layout_free(&l);
}
END_TEST

START_TEST(layout_of_a_class_without_fields)
{
    struct layout_level chain[] = {{NULL, 0}, {NULL, 0}};
    struct class_layout l;
    ck_assert_int_eq(heap_layout_build(chain, 2, 0, &l), 0);
    ck_assert_uint_eq(l.nindex, 0);
    ck_assert_uint_eq(l.ninstance, 0);
    ck_assert_uint_eq(l.instance_bytes, 0);
    heap_layout_free(&l);
}
END_TEST

START_TEST(layout_types_of_signatures)
{
    ck_assert_int_eq(heap_layout_type_of_signature("Z"), HPROF_TYPE_BOOLEAN);
    ck_assert_int_eq(heap_layout_type_of_signature("C"), HPROF_TYPE_CHAR);
    ck_assert_int_eq(heap_layout_type_of_signature("F"), HPROF_TYPE_FLOAT);
    ck_assert_int_eq(heap_layout_type_of_signature("D"), HPROF_TYPE_DOUBLE);
    ck_assert_int_eq(heap_layout_type_of_signature("B"), HPROF_TYPE_BYTE);
    ck_assert_int_eq(heap_layout_type_of_signature("S"), HPROF_TYPE_SHORT);
    ck_assert_int_eq(heap_layout_type_of_signature("I"), HPROF_TYPE_INT);
    ck_assert_int_eq(heap_layout_type_of_signature("J"), HPROF_TYPE_LONG);
    ck_assert_int_eq(heap_layout_type_of_signature("Ljava/lang/String;"), HPROF_TYPE_OBJECT);
    ck_assert_int_eq(heap_layout_type_of_signature("[I"), HPROF_TYPE_OBJECT);
}
END_TEST

static void sizes_of(const struct array_size_rule *r, uint64_t *sizes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sizes[i] = layout_array_size(r, i);
}

START_TEST(array_rule_is_found_back)
{
    /* Compressed oops (16-byte header, 4-byte refs), plain (16/8), 12-byte header with
     * compact headers, 16-byte alignment. */
    const struct array_size_rule rules[] = {
        {16, 4, 8}, {16, 8, 8}, {12, 4, 8}, {16, 4, 16}, {24, 8, 8}};
    for (size_t k = 0; k < sizeof rules / sizeof *rules; k++) {
        uint64_t sizes[17];
        sizes_of(&rules[k], sizes, 17);
        struct array_size_rule got;
        ck_assert(heap_layout_solve_array_rule(sizes, 17, &got));
        for (uint64_t n = 0; n < 5000; n += 7)
            ck_assert_uint_eq(layout_array_size(&got, n), layout_array_size(&rules[k], n));
    }
    uint64_t nonsense[3] = {16, 8, 4};
    struct array_size_rule got;
    ck_assert(!heap_layout_solve_array_rule(nonsense, 3, &got));
}
END_TEST

START_TEST(idmap_put_get_take_many)
{
    struct idmap m;
    ck_assert_int_eq(idmap_init(&m, 4), 0);
    /* Keys like object addresses: 8-aligned, clustered. */
    for (uint64_t i = 1; i <= 200000; i++)
        ck_assert(idmap_put(&m, 0x700000000ull + i * 24, (uint32_t)i, (uint32_t)(i * 3)));
    ck_assert_uint_eq(m.count, 200000);
    uint32_t a = 0, b = 0;
    for (uint64_t i = 1; i <= 200000; i += 3) {
        ck_assert(idmap_get(&m, 0x700000000ull + i * 24, &a, &b));
        ck_assert_uint_eq(a, i);
        ck_assert_uint_eq(b, i * 3);
    }
    /* Take every other key; the rest stay findable (backward-shift deletion). */
    for (uint64_t i = 1; i <= 200000; i += 2) {
        ck_assert(idmap_take(&m, 0x700000000ull + i * 24, &a, NULL));
        ck_assert_uint_eq(a, i);
    }
    ck_assert_uint_eq(m.count, 100000);
    for (uint64_t i = 1; i <= 200000; i++)
        ck_assert(idmap_get(&m, 0x700000000ull + i * 24, NULL, NULL) == (i % 2 == 0));
    ck_assert(!idmap_take(&m, 0x700000000ull + 24, NULL, NULL));
    /* Overwrite. */
    ck_assert(idmap_put(&m, 0x700000000ull + 48, 7, 8));
    ck_assert(idmap_get(&m, 0x700000000ull + 48, &a, &b));
    ck_assert_uint_eq(a, 7);
    ck_assert_uint_eq(m.count, 100000);
    /* Key 0 is reserved. */
    ck_assert(!idmap_put(&m, 0, 1, 1));
    idmap_clear(&m);
    ck_assert_uint_eq(m.count, 0);
    ck_assert(!idmap_get(&m, 0x700000000ull + 48, NULL, NULL));
    idmap_free(&m);
}
END_TEST

START_TEST(idmap_take_keeps_colliding_chains)
{
    struct idmap m;
    ck_assert_int_eq(idmap_init(&m, 16), 0);
    /* Many keys in a small table: long probe chains that wrap around. */
    for (uint64_t round = 0; round < 50; round++) {
        for (uint64_t i = 1; i <= 11; i++)
            ck_assert(idmap_put(&m, i * 0x1000 + round, (uint32_t)i, 0));
        for (uint64_t i = 1; i <= 11; i += 2)
            ck_assert(idmap_take(&m, i * 0x1000 + round, NULL, NULL));
        for (uint64_t i = 1; i <= 11; i++)
            ck_assert(idmap_get(&m, i * 0x1000 + round, NULL, NULL) == (i % 2 == 0));
        for (uint64_t i = 2; i <= 11; i += 2)
            ck_assert(idmap_take(&m, i * 0x1000 + round, NULL, NULL));
        ck_assert_uint_eq(m.count, 0);
    }
    idmap_free(&m);
}
END_TEST

/* ---- the site map's table: address -> value, checked against a sorted copy ---------------- */

struct pair {
    uint64_t address;
    uint32_t value;
};

static int pair_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct pair *)a)->address, y = ((const struct pair *)b)->address;
    return (x > y) - (x < y);
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* n distinct addresses: objects of 16 to 16 + 8 * (spread - 1) bytes one after the other from
 * base, in `runs` interleaved address-ordered runs (as heap=sites' walks give them, one per
 * tag environment), with values below value_limit. */
static struct pair *make_pairs(size_t n, uint64_t base, unsigned spread, uint32_t value_limit,
                               int runs)
{
    struct pair *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    uint64_t a = base;
    for (size_t i = 0; i < n; i++) {
        p[i].address = a;
        p[i].value = 1 + (uint32_t)(rng() % (value_limit - 1));
        a += 16 + 8 * (rng() % spread);
    }
    /* Run r takes every runs-th object from r: each run is in address order. */
    struct pair *order = malloc(n * sizeof *order);
    ck_assert_ptr_nonnull(order);
    size_t k = 0;
    for (int r = 0; r < runs; r++)
        for (size_t i = (size_t)r; i < n; i += (size_t)runs)
            order[k++] = p[i];
    free(p);
    return order;
}

/* Every address added answers its value, and addresses next to them, below and above them
 * answer 0, as a sorted copy of the pairs says. */
static void check_table(const struct heap_site_table *t, struct pair *pairs, size_t n)
{
    struct pair *sorted = malloc(n * sizeof *sorted);
    ck_assert_ptr_nonnull(sorted);
    memcpy(sorted, pairs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, pair_cmp);
    size_t wrong = 0; /* counted, not asserted one by one: Check's assertions are slow */
    for (size_t i = 0; i < n; i++) {
        heap_site_table_prefetch(t, sorted[i].address);
        wrong += heap_site_table_get(t, sorted[i].address) != sorted[i].value;
        struct pair key = {sorted[i].address + 8, 0};
        bool kept = bsearch(&key, sorted, n, sizeof *sorted, pair_cmp) != NULL;
        wrong += (heap_site_table_get(t, key.address) != 0) != kept;
    }
    ck_assert_uint_eq(wrong, 0);
    ck_assert_uint_eq(heap_site_table_get(t, sorted[0].address - 8), 0);
    ck_assert_uint_eq(heap_site_table_get(t, sorted[n - 1].address + 8), 0);
    ck_assert_uint_eq(heap_site_table_get(t, 0), 0);
    ck_assert_uint_eq(heap_site_table_get(t, HEAP_SITE_TABLE_ADDRESS_LIMIT + 64), 0);
    ck_assert_uint_eq(heap_site_table_get(t, UINT64_MAX - 7), 0);
    free(sorted);
}

static void fill(struct heap_site_table *t, const struct pair *p, size_t n)
{
    memset(t, 0, sizeof *t);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += heap_site_table_add(t, p[i].address, p[i].value);
    ck_assert_uint_eq(kept, n);
}

START_TEST(site_table_dense_heap_goes_direct_and_answers_exactly)
{
    size_t n = 200000;
    struct pair *p = make_pairs(n, 0x7f0000018ull, 6, 3000, 4);
    struct heap_site_table t;
    fill(&t, p, n);
    ck_assert(heap_site_table_make(&t, HEAP_SITE_NONE));
    ck_assert_int_eq(t.layout, HEAP_SITE_DIRECT);
    ck_assert_uint_eq(t.n, n);
    check_table(&t, p, n);
    heap_site_table_free(&t);
    /* The same pairs, hashed: the same answers. */
    fill(&t, p, n);
    ck_assert(heap_site_table_make(&t, HEAP_SITE_HASHED));
    ck_assert_int_eq(t.layout, HEAP_SITE_HASHED);
    check_table(&t, p, n);
    heap_site_table_free(&t);
    free(p);
}
END_TEST

START_TEST(site_table_sparse_heap_or_wide_values_go_hashed)
{
    /* Objects 1 GB apart: the direct layout would touch one page per object. */
    size_t n = 3000;
    struct pair *p = make_pairs(n, 0x100000000ull, 2, 60000, 2);
    for (size_t i = 0; i < n; i++)
        p[i].address += (uint64_t)(i % 2 ? n + i : i) << 30;
    struct heap_site_table t;
    fill(&t, p, n);
    ck_assert(heap_site_table_make(&t, HEAP_SITE_NONE));
    ck_assert_int_eq(t.layout, HEAP_SITE_HASHED);
    check_table(&t, p, n);
    heap_site_table_free(&t);
    free(p);
    /* Dense, but values of 2^16 and more do not fit the direct layout's 16 bits. */
    n = 50000;
    p = make_pairs(n, 0x800000000ull, 4, HEAP_SITE_TABLE_VALUE_LIMIT, 3);
    fill(&t, p, n);
    ck_assert_uint_gt(t.max_value, UINT16_MAX);
    ck_assert(heap_site_table_make(&t, HEAP_SITE_DIRECT));
    ck_assert_int_eq(t.layout, HEAP_SITE_HASHED);
    check_table(&t, p, n);
    heap_site_table_free(&t);
    free(p);
}
END_TEST

START_TEST(site_table_edges)
{
    struct heap_site_table t;
    memset(&t, 0, sizeof t);
    /* Out of range: nothing kept. */
    ck_assert(!heap_site_table_add(&t, HEAP_SITE_TABLE_ADDRESS_LIMIT, 5));
    ck_assert(!heap_site_table_add(&t, 0x1000, 0));
    ck_assert(!heap_site_table_add(&t, 0x1000, HEAP_SITE_TABLE_VALUE_LIMIT));
    ck_assert_uint_eq(t.ngathered, 0);
    /* Empty: every look-up answers 0. */
    ck_assert(heap_site_table_make(&t, HEAP_SITE_NONE));
    ck_assert_uint_eq(heap_site_table_get(&t, 0x1000), 0);
    heap_site_table_free(&t);
    /* One address given twice: the last value counts, in both layouts; the highest address
     * below the limit is kept. */
    for (int hashed = 0; hashed < 2; hashed++) {
        memset(&t, 0, sizeof t);
        ck_assert(heap_site_table_add(&t, 0x2000, 7));
        ck_assert(heap_site_table_add(&t, 0x2008, 8));
        ck_assert(heap_site_table_add(&t, 0x2000, 9));
        ck_assert(heap_site_table_make(&t, hashed ? HEAP_SITE_HASHED : HEAP_SITE_NONE));
        ck_assert_int_eq(t.layout, (hashed ? HEAP_SITE_HASHED : HEAP_SITE_DIRECT));
        ck_assert_uint_eq(heap_site_table_get(&t, 0x2000), 9);
        ck_assert_uint_eq(heap_site_table_get(&t, 0x2008), 8);
        ck_assert_uint_eq(heap_site_table_get(&t, 0x1ff8), 0);
        ck_assert_uint_eq(heap_site_table_get(&t, 0x2010), 0);
        heap_site_table_free(&t);
    }
    memset(&t, 0, sizeof t);
    ck_assert(heap_site_table_add(&t, HEAP_SITE_TABLE_ADDRESS_LIMIT - 8, 3));
    ck_assert(heap_site_table_make(&t, HEAP_SITE_HASHED));
    ck_assert_uint_eq(heap_site_table_get(&t, HEAP_SITE_TABLE_ADDRESS_LIMIT - 8), 3);
    heap_site_table_free(&t);
}
END_TEST

int main(void)
{
    return run_tests("heap-dump", "pure", 60,
                     TESTS(layout_numbers_superinterfaces_then_superclasses_then_own,
                           layout_of_a_class_without_fields, layout_types_of_signatures,
                           array_rule_is_found_back, idmap_put_get_take_many,
                           idmap_take_keeps_colliding_chains,
                           site_table_dense_heap_goes_direct_and_answers_exactly,
                           site_table_sparse_heap_or_wide_values_go_hashed, site_table_edges));
}

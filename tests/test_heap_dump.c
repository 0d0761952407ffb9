/* Unit tests of heap=dump's pure parts: JVMTI field index -> INSTANCE DUMP slot layouts, the
 * object-array size rule, the id map of the heap walk, and the spool that holds a dump back. */
#include "check_helpers.h"
#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_layout.h"
#include "heap_spool.h"
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
    ck_assert_int_eq(layout_build(chain, 3, 1, &l), 0);
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
    layout_free(&l);
}
END_TEST

START_TEST(layout_of_a_class_without_fields)
{
    struct layout_level chain[] = {{NULL, 0}, {NULL, 0}};
    struct class_layout l;
    ck_assert_int_eq(layout_build(chain, 2, 0, &l), 0);
    ck_assert_uint_eq(l.nindex, 0);
    ck_assert_uint_eq(l.ninstance, 0);
    ck_assert_uint_eq(l.instance_bytes, 0);
    layout_free(&l);
}
END_TEST

START_TEST(layout_types_of_signatures)
{
    ck_assert_int_eq(layout_type_of_signature("Z"), HPROF_TYPE_BOOLEAN);
    ck_assert_int_eq(layout_type_of_signature("C"), HPROF_TYPE_CHAR);
    ck_assert_int_eq(layout_type_of_signature("F"), HPROF_TYPE_FLOAT);
    ck_assert_int_eq(layout_type_of_signature("D"), HPROF_TYPE_DOUBLE);
    ck_assert_int_eq(layout_type_of_signature("B"), HPROF_TYPE_BYTE);
    ck_assert_int_eq(layout_type_of_signature("S"), HPROF_TYPE_SHORT);
    ck_assert_int_eq(layout_type_of_signature("I"), HPROF_TYPE_INT);
    ck_assert_int_eq(layout_type_of_signature("J"), HPROF_TYPE_LONG);
    ck_assert_int_eq(layout_type_of_signature("Ljava/lang/String;"), HPROF_TYPE_OBJECT);
    ck_assert_int_eq(layout_type_of_signature("[I"), HPROF_TYPE_OBJECT);
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
        ck_assert(layout_solve_array_rule(sizes, 17, &got));
        for (uint64_t n = 0; n < 5000; n += 7)
            ck_assert_uint_eq(layout_array_size(&got, n), layout_array_size(&rules[k], n));
    }
    uint64_t nonsense[3] = {16, 8, 4};
    struct array_size_rule got;
    ck_assert(!layout_solve_array_rule(nonsense, 3, &got));
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

/* ---- spool --------------------------------------------------------------------------- */

struct replayed {
    char log[4096];
    size_t len;
};

static void logf_(struct replayed *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct replayed *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->len += (size_t)vsnprintf(r->log + r->len, sizeof r->log - r->len, fmt, ap);
    va_end(ap);
}

static void rp_root(void *ctx, const struct hprof_root *x)
{
    logf_(ctx, "R%x:%llx:%u:%d:%u;", (unsigned)x->kind, (unsigned long long)x->object,
          x->thread_serial, (int)x->frame_depth, x->trace_serial);
}

static void rp_instance(void *ctx, uint32_t cls, hprof_id id, uint64_t size, uint32_t n,
                        const union hprof_value *v)
{
    logf_(ctx, "I%u:%llx:%llu:%u", cls, (unsigned long long)id, (unsigned long long)size, n);
    for (uint32_t i = 0; i < n; i++)
        logf_(ctx, ":%llx", (unsigned long long)v[i].j);
    logf_(ctx, ";");
}

static void rp_obj_array(void *ctx, uint32_t cls, hprof_id id, uint64_t size, uint32_t n,
                         const hprof_id *e)
{
    logf_(ctx, "A%u:%llx:%llu:%u", cls, (unsigned long long)id, (unsigned long long)size, n);
    for (uint32_t i = 0; i < n; i++)
        logf_(ctx, ":%llx", (unsigned long long)e[i]);
    logf_(ctx, ";");
}

static void rp_prim_array(void *ctx, hprof_id id, enum hprof_basic_type t, uint64_t size,
                          uint32_t n, const void *e)
{
    logf_(ctx, "P%d:%llx:%llu:%u", (int)t, (unsigned long long)id, (unsigned long long)size, n);
    const uint8_t *b = e;
    for (uint32_t i = 0; i < n * hprof_type_size(t); i++)
        logf_(ctx, ":%02x", b[i]);
    logf_(ctx, ";");
}

START_TEST(spool_replays_every_record_in_order)
{
    struct heap_spool *s = spool_open();
    ck_assert_ptr_nonnull(s);
    struct hprof_root r = {.kind = HPROF_ROOT_JAVA_FRAME,
                           .object = 0x8000000712345678ull,
                           .thread_serial = 3,
                           .frame_depth = -1,
                           .trace_serial = 9};
    spool_root(s, &r);
    union hprof_value v[3];
    memset(v, 0, sizeof v);
    v[0].i = -2;
    v[1].obj = 0xABCDEF;
    v[2].d = 1.5;
    spool_instance(s, 42, 0x10, 24, 3, v);
    spool_instance(s, 43, 0x11, 16, 0, NULL);
    hprof_id elems[2] = {0x10, 0};
    spool_obj_array(s, 7, 0x12, 32, 2, elems);
    int16_t shorts[3] = {1, -1, 256};
    spool_prim_array(s, 0x13, HPROF_TYPE_SHORT, 24, 3, shorts);
    spool_prim_array(s, 0x14, HPROF_TYPE_INT, 16, 0, NULL);
    ck_assert(!spool_failed(s));
    struct replayed got = {0};
    const struct spool_reader reader = {&got, rp_root, rp_instance, rp_obj_array, rp_prim_array};
    ck_assert_int_eq(spool_replay(s, &reader), 0);
    ck_assert_str_eq(got.log, "R3:8000000712345678:3:-1:9;"
                              "I42:10:24:3:fffffffe:abcdef:3ff8000000000000;"
                              "I43:11:16:0;"
                              "A7:12:32:2:10:0;"
                              "P9:13:24:3:01:00:ff:ff:00:01;"
                              "P10:14:16:0;");
    spool_close(s);
}
END_TEST

START_TEST(spool_of_nothing_replays_nothing)
{
    struct heap_spool *s = spool_open();
    ck_assert_ptr_nonnull(s);
    struct replayed got = {0};
    const struct spool_reader reader = {&got, rp_root, rp_instance, rp_obj_array, rp_prim_array};
    ck_assert_int_eq(spool_replay(s, &reader), 0);
    ck_assert_uint_eq(got.len, 0);
    spool_close(s);
    spool_close(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("heap-dump");
    TCase *t = tcase_create("pure");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, layout_numbers_superinterfaces_then_superclasses_then_own);
    tcase_add_test(t, layout_of_a_class_without_fields);
    tcase_add_test(t, layout_types_of_signatures);
    tcase_add_test(t, array_rule_is_found_back);
    tcase_add_test(t, idmap_put_get_take_many);
    tcase_add_test(t, idmap_take_keeps_colliding_chains);
    tcase_add_test(t, spool_replays_every_record_in_order);
    tcase_add_test(t, spool_of_nothing_replays_nothing);
    suite_add_tcase(s, t);
    return run_suite(s);
}

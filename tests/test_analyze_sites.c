/*
 * test_analyze_sites: allocation sites in hprof-analyze and hprof-diff (tools/analyze/heap_sites,
 * report_sites, tools/diff/diff_sites, diff_retained's JSON) on hand-built dumps whose objects
 * name STACK TRACEs: per-site counts, live and retained bytes, two traces with the same frames
 * as one site, the empty and an undefined trace counted apart, the leak suspect's sites, a
 * HotSpot-like dump (every object on the empty trace), and the growth per site between two
 * files and between two dumps of one file. Every expected figure follows from the construction
 * (the size model: Item 16 bytes, byte[20] 40, Object[n] 16 + 4n aligned to 8).
 */
#include "bytes.h"
#include "check_helpers.h"
#include "diff_retained.h"
#include "heap_sites.h"
#include "report_heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OBJ = 0x100, APP = 0x200, ITEM = 0x300, OARR = 0x400 };
enum { ARR = 0x1000, ITEMS = 0x2000, DATA = 0x3000, SHARED = 0x4000, LOST = 0x5000 };
enum { F_MAKE = 0x70, F_MAIN = 0x71, F_FILL = 0x72 };
#define L 20 /* byte[] length: 40 bytes in the model */

static void record(struct bytes *b, uint8_t tag, const struct bytes *body)
{
    bytes_u1(b, tag);
    bytes_u4(b, 0);
    bytes_u4(b, (uint32_t)body->n);
    bytes_put(b, body->p, body->n);
}

static void string(struct bytes *b, uint64_t sid, const char *s)
{
    struct bytes r = {.id_size = 8};
    bytes_id(&r, sid);
    bytes_put(&r, s, strlen(s));
    record(b, 0x01, &r);
    bytes_free(&r);
}

static void frame(struct bytes *b, uint64_t fid, uint64_t meth, uint32_t cls_serial, int32_t line)
{
    struct bytes r = {.id_size = 8};
    bytes_id(&r, fid);
    bytes_id(&r, meth);
    bytes_id(&r, 0x1a); /* "()V" */
    bytes_id(&r, 0x1b); /* "App.java" */
    bytes_u4(&r, cls_serial);
    bytes_u4(&r, (uint32_t)line);
    record(b, 0x04, &r);
    bytes_free(&r);
}

static void trace(struct bytes *b, uint32_t serial, uint32_t thread, unsigned n,
                  const uint64_t *frames)
{
    struct bytes r = {.id_size = 8};
    bytes_u4(&r, serial);
    bytes_u4(&r, thread);
    bytes_u4(&r, n);
    for (unsigned i = 0; i < n; i++)
        bytes_id(&r, frames[i]);
    record(b, 0x05, &r);
    bytes_free(&r);
}

static void class_dump(struct bytes *b, uint64_t cid, uint64_t super, uint64_t static_name,
                       uint64_t static_value, uint64_t field_name)
{
    bytes_u1(b, 0x20);
    bytes_id(b, cid);
    bytes_u4(b, 1);
    bytes_id(b, super);
    for (int i = 0; i < 5; i++)
        bytes_id(b, 0);
    bytes_u4(b, 0);
    bytes_u2(b, 0);
    bytes_u2(b, static_name ? 1 : 0);
    if (static_name) {
        bytes_id(b, static_name);
        bytes_u1(b, 2);
        bytes_id(b, static_value);
    }
    bytes_u2(b, field_name ? 1 : 0);
    if (field_name) {
        bytes_id(b, field_name);
        bytes_u1(b, 2);
    }
}

static void item(struct bytes *b, uint64_t oid, uint32_t serial, uint64_t data)
{
    bytes_u1(b, 0x21);
    bytes_id(b, oid);
    bytes_u4(b, serial);
    bytes_id(b, ITEM);
    bytes_u4(b, 8);
    bytes_id(b, data);
}

static void bytes_array(struct bytes *b, uint64_t oid, uint32_t serial)
{
    bytes_u1(b, 0x23);
    bytes_id(b, oid);
    bytes_u4(b, serial);
    bytes_u4(b, L);
    bytes_u1(b, 8);
    for (int i = 0; i < L; i++)
        bytes_u1(b, (uint8_t)(oid + (uint64_t)i));
}

/* One heap dump of n items (n >= 3) in App.items, an Object[n] made in main (trace 5): item 0
 * on the empty trace (1) with a byte[] on an undefined trace (9); the others made in make
 * (traces 2 and, for odd i, 4: the same frames from another thread); items 1 and 2 share one
 * byte[], items 3.. have their own (trace 3: fill); one unreachable item and byte[] (traces 2,
 * 3). With `empty`, every object names trace 1 (as HotSpot's dumps do). */
static void heap_dump(struct bytes *b, unsigned n, bool empty)
{
    struct bytes d = {.id_size = 8};
    class_dump(&d, OBJ, 0, 0, 0, 0);
    class_dump(&d, APP, OBJ, 0x1c, ARR, 0);
    class_dump(&d, ITEM, OBJ, 0, 0, 0x1d);
    class_dump(&d, OARR, OBJ, 0, 0, 0);
    bytes_u1(&d, 0x05); /* sticky class App */
    bytes_id(&d, APP);
    bytes_u1(&d, 0x22);
    bytes_id(&d, ARR);
    bytes_u4(&d, empty ? 1 : 5);
    bytes_u4(&d, n);
    bytes_id(&d, OARR);
    for (unsigned i = 0; i < n; i++)
        bytes_id(&d, ITEMS + i);
    for (unsigned i = 0; i < n; i++) {
        uint32_t t = empty || i == 0 ? 1 : i % 2 ? 4 : 2;
        item(&d, ITEMS + i, t, i == 1 || i == 2 ? SHARED : DATA + i);
        if (i != 1 && i != 2)
            bytes_array(&d, DATA + i, empty ? 1 : i == 0 ? 9 : 3);
    }
    bytes_array(&d, SHARED, empty ? 1 : 3);
    item(&d, LOST, empty ? 1 : 2, LOST + 1);
    bytes_array(&d, LOST + 1, empty ? 1 : 3);
    record(b, 0x0C, &d);
    bytes_free(&d);
}

/* A file of the dumps ns[0..nd) (a fresh buffer; free it) */
static struct bytes build(const unsigned *ns, size_t nd, int empty)
{
    struct bytes b = {.id_size = 8};
    bytes_put(&b, "JAVA PROFILE 1.0.2", 19);
    bytes_u4(&b, 8);
    bytes_u8(&b, 0);
    const char *names[] = {"java/lang/Object",
                           "App",
                           "Item",
                           "[Ljava/lang/Object;",
                           "make",
                           "main",
                           "fill",
                           "x",
                           "y",
                           "z",
                           "()V",
                           "App.java",
                           "items",
                           "data"};
    for (unsigned i = 0; i < 14; i++)
        string(&b, 0x10 + i, names[i]);
    uint64_t cls[] = {OBJ, APP, ITEM, OARR};
    for (unsigned i = 0; i < 4; i++) {
        struct bytes r = {.id_size = 8};
        bytes_u4(&r, i + 1);
        bytes_id(&r, cls[i]);
        bytes_u4(&r, 1);
        bytes_id(&r, 0x10 + i);
        record(&b, 0x02, &r);
        bytes_free(&r);
    }
    frame(&b, F_MAKE, 0x14, 2, 10);
    frame(&b, F_MAIN, 0x15, 2, 20);
    frame(&b, F_FILL, 0x16, 2, 30);
    uint64_t make[] = {F_MAKE, F_MAIN}, fill[] = {F_FILL, F_MAIN}, main_[] = {F_MAIN};
    trace(&b, 1, 0, 0, NULL);
    if (empty == 2) { /* as HotSpot: no trace with frames at all */
        for (size_t i = 0; i < nd; i++)
            heap_dump(&b, ns[i], true);
        return b;
    }
    trace(&b, 2, 1, 2, make);
    trace(&b, 3, 1, 2, fill);
    trace(&b, 4, 2, 2, make);
    trace(&b, 5, 1, 1, main_);
    for (size_t i = 0; i < nd; i++)
        heap_dump(&b, ns[i], empty);
    return b;
}

static const char *write_file(const char *name, const struct bytes *b)
{
    const char *path = scratch_path(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b->p, 1, b->n, f), b->n);
    fclose(f);
    return path;
}

static uint64_t arr_bytes(unsigned n)
{
    return (16 + 4 * (uint64_t)n + 7) & ~(uint64_t)7;
}

#define ITEM_SITE "Item at App.make(App.java:10) <- App.main(App.java:20)"
#define BYTES_SITE "byte[] at App.fill(App.java:30) <- App.main(App.java:20)"
#define ARR_SITE "java.lang.Object[] at App.main(App.java:20)"

static void setup(void)
{
    scratch_dir_make("test_analyze_sites");
}

static void load(const char *path, size_t which, struct heap_graph *g, struct heap_analysis *a)
{
    char err[512];
    bool bad;
    ck_assert_msg(heap_graph_load(g, path, which, 4, false, err, sizeof err, &bad) == 0, "%s", err);
    ck_assert_int_eq(heap_analysis_run(a, g), 0);
}

/* The site named name, or fail */
static const struct hs_site *site(const struct heap_sites *s, const struct heap_graph *g,
                                  const char *name)
{
    char buf[1024];
    for (uint32_t k = 1; k < s->ns; k++)
        if (!strcmp(heap_sites_name(s, g, k, 8, buf, sizeof buf), name))
            return &s->s[k];
    ck_abort_msg("no site %s", name);
    return NULL;
}

START_TEST(per_site_counts)
{
    const unsigned n = 12;
    struct bytes b = build(&n, 1, 0);
    const char *path = write_file("s.hprof", &b);
    bytes_free(&b);
    struct heap_graph g;
    struct heap_analysis a;
    load(path, 0, &g, &a);
    struct heap_sites s;
    ck_assert_int_eq(heap_sites_build(&s, &a), 0);
    ck_assert_ptr_nonnull(s.site);
    /* with a trace: the array, items 1.., their byte[]s but item 0's, the lost pair */
    ck_assert_uint_eq(s.with, 1 + (n - 1) + (n - 2) + 2);
    ck_assert_uint_eq(s.without, 2); /* item 0 (trace 1) and its byte[] (trace 9: undefined) */
    ck_assert_uint_eq(s.ns - 1, 3);  /* traces 2 and 4 list the same frames: one site */
    const struct hs_site *it = site(&s, &g, ITEM_SITE), *by = site(&s, &g, BYTES_SITE),
                         *ar = site(&s, &g, ARR_SITE);
    /* reachable only: the lost item and byte[] are not counted */
    ck_assert_uint_eq(it->count, n - 1);
    ck_assert_uint_eq(it->shallow, 16 * (n - 1));
    /* items 1 and 2 share their byte[]: neither retains it */
    ck_assert_uint_eq(it->retained, 16 * (n - 1) + 40 * (n - 3));
    ck_assert_uint_eq(by->count, n - 2);
    ck_assert_uint_eq(by->shallow, 40 * (n - 2));
    ck_assert_uint_eq(by->retained, 40 * (n - 2));
    ck_assert_uint_eq(ar->count, 1);
    ck_assert_uint_eq(ar->shallow, arr_bytes(n));
    ck_assert_uint_eq(ar->retained, arr_bytes(n) + 16 * n + 40 * (n - 1));
    ck_assert_uint_eq(ar->retained, a.reachable_bytes);
    /* what the array accumulates was made in make: items 1.. with what they retain */
    uint64_t bytes, count;
    uint32_t k = heap_sites_below(&s, &a, heap_graph_node(&g, ARR), &bytes, &count);
    ck_assert_ptr_eq(&s.s[k], it);
    ck_assert_uint_eq(count, n - 1);
    ck_assert_uint_eq(bytes, it->retained);
    uint32_t order[8];
    ck_assert_uint_eq(heap_sites_sorted(&s, order), 3);
    ck_assert_ptr_eq(&s.s[order[0]], ar);
    ck_assert_ptr_eq(&s.s[order[1]], it);
    heap_sites_free(&s);
    heap_analysis_free(&a);
    heap_graph_free(&g);
    scratch_dir_remove();
}
END_TEST

static char *report(const char *path, enum rout_format fmt)
{
    struct heap_graph g;
    struct heap_analysis a;
    load(path, 0, &g, &a);
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    struct report_opts ro = {.file = path,
                             .top = 20,
                             .depth = 2,
                             .fanout = 3,
                             .suspect = 0.1,
                             .accumulation = 0.8,
                             .sites = true};
    struct rout out;
    rout_begin(&out, f, fmt);
    ck_assert_int_eq(report_heap(&a, &ro, &out), 0);
    rout_end(&out);
    fclose(f);
    heap_analysis_free(&a);
    heap_graph_free(&g);
    return text;
}

START_TEST(report_json)
{
    const unsigned n = 12;
    struct bytes b = build(&n, 1, 0);
    const char *path = write_file("r.hprof", &b);
    bytes_free(&b);
    char *j = report(path, ROUT_JSON), want[512];
    ck_assert_ptr_nonnull(strstr(j, "\"objects_with_site\": 24"));
    ck_assert_ptr_nonnull(strstr(j, "\"objects_without_site\": 2"));
    snprintf(want, sizeof want,
             "{\"objects\": %u, \"live_bytes\": %u, \"retained_bytes\": %u, \"retained_pct\": "
             "%.2f, \"trace\": 2, \"class\": \"Item\", \"stack\": \"App.make(App.java:10) <- "
             "App.main(App.java:20)\"}",
             n - 1, 16 * (n - 1), 16 * (n - 1) + 40 * (n - 3),
             100.0 * (16 * (n - 1) + 40 * (n - 3)) /
                 (double)(arr_bytes(n) + 16 * n + 40 * (n - 1)));
    ck_assert_msg(strstr(j, want), "no %s in %s", want, j);
    /* the suspect (class App) accumulates at the array: where it and its items were made */
    snprintf(want, sizeof want,
             "\"allocated_at\": \"" ARR_SITE "\", \"accumulated_site\": \"" ITEM_SITE
             "\", \"accumulated_site_bytes\": %u",
             16 * (n - 1) + 40 * (n - 3));
    ck_assert_msg(strstr(j, want), "no %s in %s", want, j);
    free(j);
    char *t = report(path, ROUT_TEXT);
    ck_assert_ptr_nonnull(strstr(t, "Allocation sites by retained size"));
    free(t);
    scratch_dir_remove();
}
END_TEST

/* HotSpot's dumps: every object on the empty trace; one line, no per-site section (with and
 * without traces that have frames in the file) */
START_TEST(empty_traces)
{
    const unsigned n = 5;
    struct bytes b = build(&n, 1, 1 + _i);
    const char *path = write_file("e.hprof", &b);
    bytes_free(&b);
    char *j = report(path, ROUT_JSON);
    ck_assert_ptr_nonnull(strstr(j, "\"objects_with_site\": 0"));
    ck_assert_ptr_nonnull(strstr(j, "\"objects_without_site\": 12")); /* 1 + 5 + 4 + 2 */
    ck_assert_ptr_nonnull(strstr(j, "\"allocation_sites\": \"none: "));
    ck_assert_ptr_null(strstr(j, "\"sites\""));
    ck_assert_ptr_nonnull(strstr(j, "\"allocated_at\": \"\""));
    free(j);
    struct heap_graph g;
    struct heap_analysis a;
    load(path, 0, &g, &a);
    struct heap_sites s;
    ck_assert_int_eq(heap_sites_build(&s, &a), 0);
    ck_assert_ptr_null(s.site); /* no per-object array at all */
    heap_sites_free(&s);
    heap_analysis_free(&a);
    heap_graph_free(&g);
    scratch_dir_remove();
}
END_TEST

static char *diff_json(const char *base, const char *nw, unsigned bn, unsigned nn)
{
    char err[512];
    struct diff_retained_opts o = {0.10, 0.01};
    struct diff_retained *d = diff_retained_run(base, nw, bn, nn, &o, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    diff_retained_write_json(f, d);
    diff_retained_write_text(f, d);
    fclose(f);
    ck_assert_uint_eq(diff_retained_verdicts(d), 1);
    diff_retained_free(d);
    return text;
}

static void check_growth(const char *j, unsigned n1, unsigned n2)
{
    char want[1024];
    snprintf(want, sizeof want,
             "\"allocated_at\":\"" ITEM_SITE "\",\"site_base_objects\":%u,\"site_new_objects\":%u",
             n1 - 1, n2 - 1);
    ck_assert_msg(strstr(j, want), "no %s in %s", want, j);
    snprintf(want, sizeof want, "\"holder\":\"class App.items\"");
    ck_assert_msg(strstr(j, want), "no %s in %s", want, j);
    /* sites by growth of live bytes: the byte[]s (40 each), the items (16), the array */
    char row[3][512];
    snprintf(row[0], sizeof row[0],
             "{\"base_objects\":%u,\"new_objects\":%u,\"base_live_bytes\":%u,\"new_live_bytes\":%u,"
             "\"base_retained_bytes\":%u,\"new_retained_bytes\":%u,\"site\":\"" BYTES_SITE "\"}",
             n1 - 2, n2 - 2, 40 * (n1 - 2), 40 * (n2 - 2), 40 * (n1 - 2), 40 * (n2 - 2));
    snprintf(row[1], sizeof row[1],
             "{\"base_objects\":%u,\"new_objects\":%u,\"base_live_bytes\":%u,\"new_live_bytes\":%u,"
             "\"base_retained_bytes\":%u,\"new_retained_bytes\":%u,\"site\":\"" ITEM_SITE "\"}",
             n1 - 1, n2 - 1, 16 * (n1 - 1), 16 * (n2 - 1), 16 * (n1 - 1) + 40 * (n1 - 3),
             16 * (n2 - 1) + 40 * (n2 - 3));
    snprintf(row[2], sizeof row[2],
             "{\"base_objects\":1,\"new_objects\":1,\"base_live_bytes\":%u,\"new_live_bytes\":%u",
             (unsigned)arr_bytes(n1), (unsigned)arr_bytes(n2));
    const char *at[3];
    for (int i = 0; i < 3; i++)
        at[i] = strstr(j, row[i]);
    ck_assert_msg(at[0] && at[1] && at[0] < at[1], "rows %s, %s in %s", row[0], row[1], j);
    ck_assert_msg(!at[2], "the array's count did not grow, yet it is listed: %s", j);
    snprintf(want, sizeof want, "    allocated at: " ITEM_SITE " (%u -> %u objects)\n", n1 - 1,
             n2 - 1);
    ck_assert_msg(strstr(j, want), "no %s in %s", want, j);
}

START_TEST(diff_two_files)
{
    const unsigned n1 = 10, n2 = 210;
    struct bytes b1 = build(&n1, 1, 0), b2 = build(&n2, 1, 0);
    const char *p1 = write_file("base.hprof", &b1);
    const char *p2 = write_file("new.hprof", &b2);
    bytes_free(&b1);
    bytes_free(&b2);
    char *j = diff_json(p1, p2, 1, 1);
    check_growth(j, n1, n2);
    free(j);
    scratch_dir_remove();
}
END_TEST

START_TEST(diff_two_dumps_of_one_file)
{
    const unsigned ns[] = {10, 110};
    struct bytes b = build(ns, 2, 0);
    const char *p = write_file("two.hprof", &b);
    bytes_free(&b);
    char *j = diff_json(p, p, 1, 2);
    check_growth(j, ns[0], ns[1]);
    free(j);
    scratch_dir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("analyze_sites");
    TCase *t = suite_add_tests(
        s, "sites", 120,
        TESTS(per_site_counts, report_json, diff_two_files, diff_two_dumps_of_one_file));
    tcase_add_loop_test(t, empty_traces, 0, 2);
    tcase_add_checked_fixture(t, setup, NULL);
    return run_suite(s);
}

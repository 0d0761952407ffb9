/*
 * test_analyze: hprof-analyze's loader and analysis (tools/analyze/) on a hand-built HPROF file
 * whose graph, sizes and dominators are known: a diamond, a cycle, a weak referent, a frame
 * root under its thread, unreachable objects; then the same file cut at every byte and with
 * bytes changed, which must give a one-line error with an offset (or a graph), never a crash.
 */
#include "check_helpers.h"
#include "heap_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
    uint8_t b[8192];
    size_t n;
};
static void u1(struct buf *b, unsigned v)
{
    b->b[b->n++] = (uint8_t)v;
}
static void u2(struct buf *b, unsigned v)
{
    u1(b, v >> 8);
    u1(b, v);
}
static void u4(struct buf *b, uint32_t v)
{
    u2(b, v >> 16);
    u2(b, v & 0xffff);
}
/* With spread_ids, ids (all of them, string ids too) get one of 8 high halves from their bits
 * 8..10: the loader must then keep several id segments (heap_graph.h). */
static bool spread_ids;
static uint64_t X(uint64_t v)
{
    return spread_ids ? v + ((v & 0x700) << 32) : v;
}
static void id(struct buf *b, uint64_t v)
{
    v = X(v);
    u4(b, (uint32_t)(v >> 32));
    u4(b, (uint32_t)v);
}

static void string(struct buf *b, uint64_t sid, const char *s)
{
    u1(b, 0x01);
    u4(b, 0);
    u4(b, 8 + (uint32_t)strlen(s));
    id(b, sid);
    memcpy(b->b + b->n, s, strlen(s));
    b->n += strlen(s);
}

static void load_class(struct buf *b, uint32_t serial, uint64_t cid, uint64_t name)
{
    u1(b, 0x02);
    u4(b, 0);
    u4(b, 24);
    u4(b, serial);
    id(b, cid);
    u4(b, 1);
    id(b, name);
}

/* CLASS DUMP with nf instance fields (name ids, types) and one optional static reference */
static void class_dump(struct buf *b, uint64_t cid, uint64_t super, unsigned nf,
                       const uint64_t *names, const uint8_t *types, uint64_t static_name,
                       uint64_t static_value)
{
    u1(b, 0x20);
    id(b, cid);
    u4(b, 1);
    id(b, super);
    for (int i = 0; i < 5; i++)
        id(b, 0);
    u4(b, 0);
    u2(b, 0);
    u2(b, static_name ? 1 : 0);
    if (static_name) {
        id(b, static_name);
        u1(b, 2);
        id(b, static_value);
    }
    u2(b, nf);
    for (unsigned i = 0; i < nf; i++) {
        id(b, names[i]);
        u1(b, types[i]);
    }
}

/* a Node: next, val, other */
static void node(struct buf *b, uint64_t oid, uint64_t next, uint64_t other)
{
    u1(b, 0x21);
    id(b, oid);
    u4(b, 1);
    id(b, 0x200);
    u4(b, 20);
    id(b, next);
    u4(b, 7);
    id(b, other);
}

enum { OBJ = 0x100, NODE = 0x200, REF = 0x300, WEAK = 0x310, HOLDER = 0x400, OARR = 0x500 };
enum { A = 0x1000, B = 0x1100, C = 0x1200, D = 0x1300, E = 0x2000, F = 0x2100, G = 0x2200 };
enum { W = 0x3000, ARR = 0x4000, INTS = 0x5000, BYTES = 0x5100 };

static size_t build(struct buf *b)
{
    memset(b, 0, sizeof *b);
    memcpy(b->b, "JAVA PROFILE 1.0.2", 19);
    b->n = 19;
    u4(b, 8);
    id(b, 0);
    const char *names[] = {"java/lang/Object",
                           "Node",
                           "java/lang/ref/Reference",
                           "java/lang/ref/WeakReference",
                           "Holder",
                           "[Ljava/lang/Object;",
                           "next",
                           "val",
                           "other",
                           "referent",
                           "queue",
                           "items"};
    for (unsigned i = 0; i < 12; i++)
        string(b, 0x10 + i, names[i]);
    uint64_t cls[] = {OBJ, NODE, REF, WEAK, HOLDER, OARR};
    for (unsigned i = 0; i < 6; i++)
        load_class(b, i + 1, cls[i], 0x10 + i);
    u1(b, 0x1C);
    u4(b, 0);
    size_t len_at = b->n;
    u4(b, 0);
    class_dump(b, OBJ, 0, 0, NULL, NULL, 0, 0);
    uint64_t nf[] = {0x16, 0x17, 0x18};
    uint8_t nt[] = {2, 10, 2};
    class_dump(b, NODE, OBJ, 3, nf, nt, 0, 0);
    uint64_t rf[] = {0x19, 0x1a};
    uint8_t rt[] = {2, 2};
    class_dump(b, REF, OBJ, 2, rf, rt, 0, 0);
    class_dump(b, WEAK, REF, 0, NULL, NULL, 0, 0);
    class_dump(b, HOLDER, OBJ, 0, NULL, NULL, 0x1b, A);
    class_dump(b, OARR, OBJ, 0, NULL, NULL, 0, 0);
    u1(b, 0x05); /* sticky class Holder */
    id(b, HOLDER);
    u1(b, 0x03); /* Java frame of thread 1 holds E */
    id(b, E);
    u4(b, 1);
    u4(b, 0);
    node(b, A, B, C);
    node(b, B, D, BYTES);
    node(b, C, D, 0);
    node(b, D, A, 0);
    node(b, E, F, W);
    node(b, F, 0, 0);
    node(b, G, 0, 0);
    u1(b, 0x21); /* W: a WeakReference to G */
    id(b, W);
    u4(b, 1);
    id(b, WEAK);
    u4(b, 16);
    id(b, G);
    id(b, 0);
    u1(b, 0x22); /* an unreachable Object[3] */
    id(b, ARR);
    u4(b, 1);
    u4(b, 3);
    id(b, OARR);
    id(b, A);
    id(b, 0);
    id(b, E);
    u1(b, 0x23); /* unreachable int[3] */
    id(b, INTS);
    u4(b, 1);
    u4(b, 3);
    u1(b, 10);
    for (int i = 0; i < 12; i++)
        u1(b, i);
    u1(b, 0x23); /* byte[10] held by B */
    id(b, BYTES);
    u4(b, 1);
    u4(b, 10);
    u1(b, 8);
    for (int i = 0; i < 10; i++)
        u1(b, 'a' + i);
    uint32_t seg = (uint32_t)(b->n - len_at - 4);
    b->b[len_at] = (uint8_t)(seg >> 24);
    b->b[len_at + 1] = (uint8_t)(seg >> 16);
    b->b[len_at + 2] = (uint8_t)(seg >> 8);
    b->b[len_at + 3] = (uint8_t)seg;
    u1(b, 0x2C);
    u4(b, 0);
    u4(b, 0);
    return b->n;
}

static void write_all(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void setup(void)
{
    scratch_dir_make("test_analyze");
}

START_TEST(known_graph)
{
    static struct buf b;
    size_t n = build(&b);
    const char *path = scratch_path("g.hprof");
    write_all(path, b.b, n);
    struct heap_graph g;
    char err[512];
    bool bad;
    ck_assert_int_eq(heap_graph_load(&g, path, 0, 4, false, err, sizeof err, &bad), 0);
    ck_assert_uint_eq(g.nobjects, 6 + 11); /* 6 class objects, 11 objects */
    ck_assert_uint_eq(g.nthreads, 1);
    ck_assert_uint_eq(g.weak_skipped, 1);
    uint32_t a = heap_graph_node(&g, A), wn = heap_graph_node(&g, W);
    ck_assert_uint_eq(heap_graph_shallow(&g, a), 24); /* 12 + 3 fields of 4, aligned */
    ck_assert_uint_eq(heap_graph_shallow(&g, wn), 24);
    ck_assert_uint_eq(heap_graph_shallow(&g, heap_graph_node(&g, BYTES)), 32);
    ck_assert_uint_eq(heap_graph_shallow(&g, heap_graph_node(&g, ARR)), 32);
    ck_assert_uint_eq(g.off[wn + 1] - g.off[wn], 0); /* the referent is not an edge */
    ck_assert_uint_eq(heap_graph_node(&g, 0x9999), HG_NONE);
    struct heap_analysis an;
    ck_assert_int_eq(heap_analysis_run(&an, &g), 0);
    uint64_t want[][2] = {{D, 24}, {B, 56}, {C, 24}, {A, 128},   {HOLDER, 128},
                          {E, 72}, {F, 24}, {W, 24}, {BYTES, 32}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(
            heap_analysis_retained(&an, heap_graph_node(&g, want[i][0])) == want[i][1],
            "retained of 0x%llx: %llu, want %llu", (unsigned long long)want[i][0],
            (unsigned long long)heap_analysis_retained(&an, heap_graph_node(&g, want[i][0])),
            (unsigned long long)want[i][1]);
    ck_assert_uint_eq(an.idom[heap_graph_node(&g, D)], a); /* the diamond's join */
    ck_assert_uint_eq(heap_analysis_retained(&an, 1), 72); /* thread 1's frames hold E */
    /* G (weakly held), the Object[], the int[] and 5 class objects are unreachable */
    ck_assert_uint_eq(an.unreachable_objects, 8);
    ck_assert_uint_eq(an.unreachable_bytes, 24 + 32 + 32);
    ck_assert_uint_eq(an.reachable_bytes, 128 + 72 + 0);
    /* the accumulation point below the holder, and the path to D */
    ck_assert_uint_eq(
        domtree_accumulation_point(&an.tree, an.retained, heap_graph_node(&g, HOLDER), 0.8), a);
    uint32_t *p;
    long len = heap_analysis_path(&an, heap_graph_node(&g, D), &p);
    ck_assert_int_eq(len, 5); /* root, Holder, A, B or C, D */
    ck_assert_uint_eq(p[1], heap_graph_node(&g, HOLDER));
    free(p);
    /* shallow sizes derived from the retained sizes (reachable: less the children's;
     * unreachable: kept), equal to the graph's; and the 64-bit path (heaps of 32 GiB and more)
     * gives the same retained and shallow sizes */
    ck_assert_ptr_null(g.shallow8);
    ck_assert_uint_eq(heap_analysis_shallow(&an, a), 24);
    ck_assert_uint_eq(heap_analysis_shallow(&an, heap_graph_node(&g, BYTES)), 32);
    ck_assert_uint_eq(heap_analysis_shallow(&an, heap_graph_node(&g, ARR)), 32); /* unreachable */
    ck_assert_uint_eq(heap_analysis_shallow(&an, heap_graph_node(&g, G)), 24);   /* unreachable */
    ck_assert_uint_eq(heap_analysis_shallow(&an, 0), 0);
    struct heap_graph g2;
    ck_assert_int_eq(heap_graph_load(&g2, path, 0, 4, false, err, sizeof err, &bad), 0);
    uint64_t limit = heap_analysis_narrow_limit;
    heap_analysis_narrow_limit = 0;
    struct heap_analysis an2;
    ck_assert_int_eq(heap_analysis_run(&an2, &g2), 0);
    heap_analysis_narrow_limit = limit;
    ck_assert_ptr_nonnull(g2.shallow8);
    ck_assert_uint_eq(an2.ret_shift, 3);
    ck_assert_uint_eq(g2.n, g.n);
    for (uint32_t v = 0; v < g.n; v++) {
        ck_assert_uint_eq(heap_analysis_retained(&an2, v), heap_analysis_retained(&an, v));
        ck_assert_uint_eq(heap_analysis_shallow(&an2, v), heap_analysis_shallow(&an, v));
        ck_assert_uint_eq(heap_graph_shallow(&g2, v), heap_analysis_shallow(&an, v));
    }
    heap_analysis_free(&an2);
    heap_graph_free(&g2);
    heap_analysis_free(&an);
    heap_graph_free(&g);
    scratch_dir_remove();
}
END_TEST

/* Every object's id maps to its node and back, ids in between or in another half to none. */
static void check_ids(const struct heap_graph *g)
{
    for (uint32_t v = g->first_obj; v < g->n; v++) {
        uint64_t i = heap_graph_id(g, v);
        ck_assert_uint_eq(heap_graph_node(g, i), v);
        ck_assert_uint_eq(heap_graph_node(g, i + 1), HG_NONE);
        ck_assert_uint_eq(heap_graph_node(g, i ^ (1ull << 40)), HG_NONE);
        if (v > g->first_obj)
            ck_assert_uint_gt(i, heap_graph_id(g, v - 1));
    }
}

/* Ids in several high halves: every id maps to its node and back, others to none, before and
 * after the analysis (which coarsens the bucket index), and the retained sizes are those of
 * known_graph. */
START_TEST(ids_in_several_halves)
{
    static struct buf b;
    spread_ids = true;
    size_t n = build(&b);
    spread_ids = false;
    const char *path = scratch_path("g.hprof");
    write_all(path, b.b, n);
    struct heap_graph g;
    char err[512];
    bool bad;
    ck_assert_int_eq(heap_graph_load(&g, path, 0, 4, false, err, sizeof err, &bad), 0);
    spread_ids = true;
    ck_assert_uint_eq(g.nobjects, 6 + 11);
    ck_assert_uint_ge(g.nsegs, 5);
    check_ids(&g);
    uint64_t known[] = {OBJ, NODE, REF, WEAK, HOLDER, OARR, A,    B,    C,
                        D,   E,    F,   G,    W,      ARR,  INTS, BYTES};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        ck_assert_uint_eq(heap_graph_id(&g, heap_graph_node(&g, X(known[i]))), X(known[i]));
    ck_assert_uint_eq(heap_graph_node(&g, known[1]), HG_NONE); /* NODE without its high half */
    struct heap_analysis an;
    ck_assert_int_eq(heap_analysis_run(&an, &g), 0);
    ck_assert_uint_eq(heap_analysis_retained(&an, heap_graph_node(&g, X(A))), 128);
    ck_assert_uint_eq(heap_analysis_retained(&an, heap_graph_node(&g, X(B))), 56);
    ck_assert_uint_eq(heap_analysis_retained(&an, heap_graph_node(&g, X(E))), 72);
    ck_assert_uint_eq(an.idom[heap_graph_node(&g, X(D))], heap_graph_node(&g, X(A)));
    check_ids(&g); /* again, through the coarser index the run leaves */
    spread_ids = false;
    heap_analysis_free(&an);
    heap_graph_free(&g);
    scratch_dir_remove();
}
END_TEST

/* Every prefix of the file, and every byte changed, loads or fails with an offset. */
START_TEST(truncated_and_corrupt)
{
    static struct buf b;
    size_t n = build(&b);
    const char *path = scratch_path("t.hprof");
    char err[512];
    bool bad;
    for (size_t cut = 0; cut < n - 9; cut++) {
        write_all(path, b.b, cut);
        struct heap_graph g;
        int rc = heap_graph_load(&g, path, 0, 4, false, err, sizeof err, &bad);
        ck_assert_msg(rc == -1 && bad && strstr(err, "offset"), "cut %zu: rc %d, %s", cut, rc, err);
        heap_graph_free(&g);
    }
    for (size_t at = 0; at < n; at++) {
        static struct buf c;
        c = b;
        c.b[at] ^= (uint8_t)(at * 37 + 1);
        write_all(path, c.b, n);
        struct heap_graph g;
        if (heap_graph_load(&g, path, 0, 4, false, err, sizeof err, &bad) == 0) {
            struct heap_analysis an;
            ck_assert_int_eq(heap_analysis_run(&an, &g), 0);
            heap_analysis_free(&an);
        } else {
            ck_assert_msg(!bad || strstr(err, "offset"), "byte %zu: %s", at, err);
        }
        heap_graph_free(&g);
    }
    scratch_dir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("analyze");
    TCase *t = suite_add_tests(s, "graph", 120,
                               TESTS(known_graph, ids_in_several_halves, truncated_and_corrupt));
    tcase_add_checked_fixture(t, setup, NULL);
    return run_suite(s);
}

/* tools/analyze/dominators: the Semi-NCA dominator tree and retained sizes on hand-built graphs
 * whose dominators are known, on thousands of random graphs against two naive computations
 * (iterative data-flow over bitsets for idom; "what becomes unreachable when v is removed" for
 * retained sizes), and on 10-million-node chains (no recursion to overflow); tools/analyze/domtree:
 * the children lists (exactly the dominated nodes, biggest first) and accumulation points. */
#include "check_helpers.h"
#include "dominators.h"
#include "domtree.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* A CSR graph built from an edge list (edges kept in the given order per source). */
struct test_graph {
    struct csr_graph g;
    uint32_t *off;
    uint32_t *adj;
};

static void graph_make(struct test_graph *t, uint32_t n, const uint32_t (*edges)[2], size_t m)
{
    t->off = calloc((size_t)n + 1, sizeof *t->off);
    t->adj = malloc((m ? m : 1) * sizeof *t->adj);
    ck_assert(t->off && t->adj);
    for (size_t e = 0; e < m; e++)
        t->off[edges[e][0] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        t->off[i + 1] += t->off[i];
    uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    ck_assert_ptr_nonnull(pos);
    memcpy(pos, t->off, ((size_t)n + 1) * sizeof *pos);
    for (size_t e = 0; e < m; e++)
        t->adj[pos[edges[e][0]]++] = edges[e][1];
    free(pos);
    t->g = (struct csr_graph){.n = n, .off = t->off, .adj = t->adj};
}

static void graph_free(struct test_graph *t)
{
    free(t->off);
    free(t->adj);
}

/* Naive dominators: reachable set, then dom(v) = {v} + intersection of dom(p) over reachable
 * predecessors p, iterated to a fixed point; idom(v) = the strict dominator whose own set is
 * dom(v) minus v. Bitsets of w words per node. */
static void naive_idom(const struct test_graph *t, uint32_t *idom)
{
    uint32_t n = t->g.n;
    size_t w = (n + 63) / 64;
    uint64_t *dom = malloc((size_t)n * w * sizeof *dom);
    uint64_t *tmp = malloc(w * sizeof *tmp);
    uint8_t *reach = calloc(n, 1);
    uint32_t *stack = malloc((size_t)n * sizeof *stack);
    ck_assert(dom && tmp && reach && stack);
    size_t sp = 0;
    reach[0] = 1;
    stack[sp++] = 0;
    while (sp) {
        uint32_t u = stack[--sp];
        for (uint32_t e = t->off[u]; e < t->off[u + 1]; e++)
            if (!reach[t->adj[e]]) {
                reach[t->adj[e]] = 1;
                stack[sp++] = t->adj[e];
            }
    }
    for (uint32_t v = 0; v < n; v++)
        memset(dom + v * w, v == 0 ? 0 : 0xff, w * sizeof *dom);
    dom[0] |= 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t v = 1; v < n; v++) {
            if (!reach[v])
                continue;
            memset(tmp, 0xff, w * sizeof *tmp);
            for (uint32_t u = 0; u < n; u++) {
                if (!reach[u])
                    continue;
                for (uint32_t e = t->off[u]; e < t->off[u + 1]; e++)
                    if (t->adj[e] == v)
                        for (size_t k = 0; k < w; k++)
                            tmp[k] &= dom[u * w + k];
            }
            tmp[v / 64] |= (uint64_t)1 << (v % 64);
            if (memcmp(tmp, dom + v * w, w * sizeof *tmp) != 0) {
                memcpy(dom + v * w, tmp, w * sizeof *tmp);
                changed = 1;
            }
        }
    }
    for (uint32_t v = 0; v < n; v++) {
        idom[v] = v == 0 ? 0 : NONE;
        if (!reach[v] || v == 0)
            continue;
        int count = 0;
        for (size_t k = 0; k < w; k++)
            count += __builtin_popcountll(dom[v * w + k]);
        for (uint32_t d = 0; d < n; d++) {
            if (d == v || !(dom[v * w + d / 64] >> (d % 64) & 1))
                continue;
            int cd = 0;
            for (size_t k = 0; k < w; k++)
                cd += __builtin_popcountll(dom[d * w + k]);
            if (cd == count - 1)
                idom[v] = d;
        }
        ck_assert_uint_ne(idom[v], NONE);
    }
    free(dom);
    free(tmp);
    free(reach);
    free(stack);
}

/* Nodes reachable from 0 when `removed` is taken out (NONE: nothing removed). */
static void reach_without(const struct test_graph *t, uint32_t removed, uint8_t *reach,
                          uint32_t *stack)
{
    size_t sp = 0;
    memset(reach, 0, t->g.n);
    if (removed == 0)
        return;
    reach[0] = 1;
    stack[sp++] = 0;
    while (sp) {
        uint32_t u = stack[--sp];
        for (uint32_t e = t->off[u]; e < t->off[u + 1]; e++) {
            uint32_t v = t->adj[e];
            if (v != removed && !reach[v]) {
                reach[v] = 1;
                stack[sp++] = v;
            }
        }
    }
}

/* Naive retained sizes: the shallow sizes of all that becomes unreachable when v goes. */
static void naive_retained(const struct test_graph *t, const uint64_t *shallow, uint64_t *ret)
{
    uint32_t n = t->g.n;
    uint8_t *all = malloc(n), *without = malloc(n);
    uint32_t *stack = malloc((size_t)n * sizeof *stack);
    ck_assert(all && without && stack);
    reach_without(t, NONE, all, stack);
    for (uint32_t v = 0; v < n; v++) {
        ret[v] = 0;
        if (!all[v])
            continue;
        reach_without(t, v, without, stack);
        for (uint32_t x = 0; x < n; x++)
            if (all[x] && !without[x])
                ret[v] += shallow[x];
    }
    free(all);
    free(without);
    free(stack);
}

/* Runs dominators_compute (with and without order_out) and checks the preorder it returns:
 * starts at 0, no repeats, exactly the reachable nodes, each node's idom before it, each node
 * after one of its predecessors. Returns idom (malloc'ed) and fills order. */
static uint32_t *compute_checked(const struct test_graph *t, uint32_t *order, uint32_t *reached)
{
    uint32_t n = t->g.n;
    uint32_t *idom = malloc((size_t)n * sizeof *idom), *idom2 = malloc((size_t)n * sizeof *idom);
    uint32_t *pos = malloc((size_t)n * sizeof *pos);
    ck_assert(idom && idom2 && pos);
    ck_assert_int_eq(dominators_compute(&t->g, idom, order, reached), 0);
    ck_assert_int_eq(dominators_compute(&t->g, idom2, NULL, NULL), 0);
    ck_assert_int_eq(memcmp(idom, idom2, (size_t)n * sizeof *idom), 0);
    ck_assert_uint_ge(*reached, 1);
    ck_assert_uint_eq(order[0], 0);
    ck_assert_uint_eq(idom[0], 0);
    memset(pos, 0xff, (size_t)n * sizeof *pos);
    for (uint32_t i = 0; i < *reached; i++) {
        ck_assert_uint_lt(order[i], n);
        ck_assert_uint_eq(pos[order[i]], NONE);
        pos[order[i]] = i;
    }
    uint32_t unreached = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (pos[v] == NONE) {
            ck_assert_uint_eq(idom[v], NONE);
            unreached++;
        } else if (v != 0) {
            ck_assert_uint_lt(pos[idom[v]], pos[v]);
        }
    }
    ck_assert_uint_eq(unreached + *reached, n);
    for (uint32_t i = 1; i < *reached; i++) {
        int has_earlier_pred = 0;
        for (uint32_t u = 0; u < n && !has_earlier_pred; u++)
            for (uint32_t e = t->off[u]; e < t->off[u + 1]; e++)
                if (t->adj[e] == order[i] && pos[u] < i)
                    has_earlier_pred = 1;
        ck_assert(has_earlier_pred);
    }
    free(idom2);
    free(pos);
    return idom;
}

/* The graph's idom against `expect` (NULL: against the naive computation) and its retained
 * sizes against the naive ones, with shallow size i + 1 for node i. */
static void check_graph(uint32_t n, const uint32_t (*edges)[2], size_t m, const uint32_t *expect)
{
    struct test_graph t;
    graph_make(&t, n, edges, m);
    uint32_t *order = malloc((size_t)n * sizeof *order), reached;
    uint32_t *naive = malloc((size_t)n * sizeof *naive);
    uint64_t *shallow = malloc((size_t)n * sizeof *shallow);
    uint64_t *ret = malloc((size_t)n * sizeof *ret), *nret = malloc((size_t)n * sizeof *ret);
    ck_assert(order && naive && shallow && ret && nret);
    uint32_t *idom = compute_checked(&t, order, &reached);
    naive_idom(&t, naive);
    for (uint32_t v = 0; v < n; v++) {
        ck_assert_msg(idom[v] == naive[v], "node %u: idom %u, naive %u", v, idom[v], naive[v]);
        if (expect)
            ck_assert_msg(idom[v] == expect[v], "node %u: idom %u, expected %u", v, idom[v],
                          expect[v]);
        shallow[v] = v + 1;
    }
    dominators_retained(n, idom, order, reached, shallow, ret);
    naive_retained(&t, shallow, nret);
    for (uint32_t v = 0; v < n; v++)
        ck_assert_msg(ret[v] == nret[v], "node %u: retained %llu, naive %llu", v,
                      (unsigned long long)ret[v], (unsigned long long)nret[v]);
    free(idom);
    free(order);
    free(naive);
    free(shallow);
    free(ret);
    free(nret);
    graph_free(&t);
}

#define EDGES(...) ((const uint32_t[][2]){__VA_ARGS__})
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK(n, edges, ...)                                                                       \
    do {                                                                                           \
        static const uint32_t e_[][2] = edges;                                                     \
        static const uint32_t x_[n] = {__VA_ARGS__};                                               \
        check_graph(n, e_, COUNT(e_), x_);                                                         \
    } while (0)
#define E(...)                                                                                     \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

START_TEST(test_known_graphs)
{
    /* chain */
    CHECK(4, E({0, 1}, {1, 2}, {2, 3}), 0, 0, 1, 2);
    /* diamond: the join is dominated by the fork */
    CHECK(5, E({0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}), 0, 0, 1, 1, 1);
    /* cycle entered at 1, and a back edge to the root */
    CHECK(4, E({0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 0}), 0, 0, 1, 2);
    /* a node reached from two roots is dominated by the virtual root only */
    CHECK(4, E({0, 1}, {0, 2}, {1, 3}, {2, 3}), 0, 0, 0, 0);
    /* self-loops */
    CHECK(3, E({0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}), 0, 0, 1);
    /* duplicate edges, and a forward edge that bypasses 1 */
    CHECK(3, E({0, 1}, {0, 1}, {1, 2}, {1, 2}, {0, 2}, {0, 2}), 0, 0, 0);
    /* unreachable island (a cycle) pointing into the reachable part */
    CHECK(4, E({0, 1}, {2, 3}, {3, 2}, {3, 1}), 0, 0, NONE, NONE);
    /* root with no edges; the others linked among themselves */
    CHECK(4, E({1, 2}, {2, 3}), 0, NONE, NONE, NONE);
    /* a cross edge from a later subtree: 4 is reached from 2 (first) and from 3 */
    CHECK(6, E({0, 1}, {1, 2}, {2, 4}, {1, 3}, {3, 4}, {4, 5}, {0, 5}), 0, 0, 1, 1, 1, 0);
    /* Lengauer and Tarjan's example flowgraph: R=0 A B C D E F G H I J K L */
    CHECK(13,
          E({0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 1}, {2, 4}, {2, 5}, {3, 6}, {3, 7}, {4, 12}, {5, 8},
            {6, 9}, {7, 9}, {7, 10}, {8, 5}, {8, 11}, {9, 11}, {10, 9}, {11, 9}, {11, 0}, {12, 8}),
          0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 7, 0, 4);
    /* only the root */
    check_graph(1, NULL, 0, (const uint32_t[]){0});
}
END_TEST

START_TEST(test_no_nodes)
{
    struct csr_graph g = {.n = 0, .off = (const uint32_t[]){0}, .adj = NULL};
    uint32_t reached = 7;
    ck_assert_int_eq(dominators_compute(&g, NULL, NULL, &reached), 0);
    ck_assert_uint_eq(reached, 0);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t bound)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)((rng_state >> 11) % bound);
}

/* Random graphs of several shapes: uniform with varying density (self-loops and duplicates
 * included), and heap-like (a random tree plus a few shared and backward references). */
static size_t random_edges(uint32_t n, uint32_t (*edges)[2], size_t cap, int shape)
{
    size_t m = 0;
    if (shape == 0) {
        size_t want = rnd((uint32_t)(3 * n + 1));
        for (; m < want && m < cap; m++) {
            edges[m][0] = rnd(n);
            edges[m][1] = rnd(n);
        }
        return m;
    }
    for (uint32_t v = 1; v < n && m < cap; v++) {
        edges[m][0] = rnd(v);
        edges[m][1] = v;
        m++;
    }
    size_t extra = rnd(n / 2 + 1);
    for (size_t k = 0; k < extra && m < cap; k++, m++) {
        edges[m][0] = rnd(n);
        edges[m][1] = rnd(n);
    }
    return m;
}

START_TEST(test_random_graphs)
{
    enum { N_MAX = 40, CAP = 4 * N_MAX };
    uint32_t edges[CAP][2];
    for (int round = 0; round < 3000; round++) {
        uint32_t n = 1 + rnd(N_MAX);
        size_t m = random_edges(n, edges, CAP, round % 2);
        check_graph(n, edges, m, NULL);
    }
}
END_TEST

START_TEST(test_random_medium)
{
    /* larger graphs, where paths are long enough for the compression to matter */
    enum { N = 1500, CAP = 4 * N };
    uint32_t(*edges)[2] = malloc(CAP * sizeof *edges);
    ck_assert_ptr_nonnull(edges);
    for (int round = 0; round < 6; round++) {
        uint32_t n = N / 2 + rnd(N / 2);
        size_t m = random_edges(n, edges, CAP, round % 2);
        check_graph(n, edges, m, NULL);
    }
    free(edges);
}
END_TEST

/* 10 million nodes in one chain 0 -> 1 -> ... (with `back`, every node also points at node 1,
 * so that the first eval walks the whole chain): idom[i] = i - 1, retained[i] = n - i. */
static void check_long_chain(int back)
{
    const uint32_t n = 10 * 1000 * 1000;
    uint32_t *off = malloc(((size_t)n + 1) * sizeof *off);
    uint32_t *adj = malloc(2 * (size_t)n * sizeof *adj);
    uint32_t *idom = malloc((size_t)n * sizeof *idom), *order = malloc((size_t)n * sizeof *order);
    uint64_t *shallow = malloc((size_t)n * sizeof *shallow);
    uint64_t *ret = malloc((size_t)n * sizeof *ret);
    ck_assert(off && adj && idom && order && shallow && ret);
    size_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        off[i] = m;
        if (i + 1 < n)
            adj[m++] = i + 1;
        if (back && i > 1)
            adj[m++] = 1;
        shallow[i] = 1;
    }
    off[n] = m;
    struct csr_graph g = {.n = n, .off = off, .adj = adj};
    uint32_t reached;
    ck_assert_int_eq(dominators_compute(&g, idom, order, &reached), 0);
    ck_assert_uint_eq(reached, n);
    dominators_retained(n, idom, order, reached, shallow, ret);
    ck_assert_uint_eq(idom[0], 0);
    for (uint32_t i = 1; i < n; i++) {
        if (idom[i] != i - 1 || order[i] != i || ret[i] != n - i)
            ck_abort_msg("node %u: idom %u order %u retained %llu", i, idom[i], order[i],
                         (unsigned long long)ret[i]);
    }
    ck_assert_uint_eq(ret[0], n);
    free(off);
    free(adj);
    free(idom);
    free(order);
    free(shallow);
    free(ret);
}

START_TEST(test_long_chain)
{
    check_long_chain(0);
}
END_TEST

START_TEST(test_long_chain_back_edges)
{
    check_long_chain(1);
}
END_TEST

/* The tree's lists hold exactly the nodes each node immediately dominates, each once, in
 * (retained descending, index ascending) order. */
/* Computes t's dominators (they must succeed) and the retained sizes of its n nodes; returns
 * how many nodes the roots reach. */
static uint32_t retained_of(const struct test_graph *t, uint32_t n, uint32_t *idom, uint32_t *order,
                            const uint64_t *shallow, uint64_t *ret)
{
    uint32_t reached;
    ck_assert_int_eq(dominators_compute(&t->g, idom, order, &reached), 0);
    dominators_retained(n, idom, order, reached, shallow, ret);
    return reached;
}

/* domtree takes 32-bit retained sizes (heap_analysis keeps them in units of 8 bytes): a copy
 * of ret, every node but the root (nobody's child) within 32 bits. Freed by the caller. */
static uint32_t *ret32(const uint64_t *ret, uint32_t n)
{
    uint32_t *r = malloc((size_t)n * sizeof *r + 1);
    ck_assert(r);
    for (uint32_t v = 0; v < n; v++) {
        ck_assert(v == 0 || ret[v] <= UINT32_MAX);
        r[v] = ret[v] > UINT32_MAX ? UINT32_MAX : (uint32_t)ret[v];
    }
    return r;
}

static void check_domtree(uint32_t n, const uint32_t *idom, const uint64_t *ret)
{
    struct domtree t;
    uint32_t *r = ret32(ret, n);
    ck_assert_int_eq(domtree_build(&t, n, idom, r), 0);
    free(r);
    ck_assert_uint_eq(t.n, n);
    ck_assert_uint_eq(t.child_off[0], 0);
    uint64_t listed = 0;
    for (uint32_t u = 0; u < n; u++) {
        const uint32_t *c;
        uint32_t k = domtree_children(&t, u, &c);
        listed += k;
        for (uint32_t i = 0; i < k; i++) {
            ck_assert_uint_ne(c[i], 0);
            ck_assert_uint_eq(idom[c[i]], u);
            if (i > 0)
                ck_assert(ret[c[i - 1]] > ret[c[i]] ||
                          (ret[c[i - 1]] == ret[c[i]] && c[i - 1] < c[i]));
        }
    }
    uint64_t dominated = 0;
    for (uint32_t v = 1; v < n; v++)
        dominated += idom[v] != NONE;
    ck_assert_uint_eq(listed, dominated);
    ck_assert_uint_eq(t.child_off[n], dominated);
    domtree_free(&t);
}

/* The heap arrays of a test on n nodes and up to edge_cap edges. */
struct big_arrays {
    uint32_t (*edges)[2], *idom, *order;
    uint64_t *shallow, *ret;
};

static void big_arrays_make(struct big_arrays *a, size_t n, size_t edge_cap)
{
    a->edges = malloc(edge_cap * sizeof *a->edges);
    a->idom = malloc(n * sizeof *a->idom);
    a->order = malloc(n * sizeof *a->order);
    a->shallow = malloc(n * sizeof *a->shallow);
    a->ret = malloc(n * sizeof *a->ret);
    ck_assert(a->edges && a->idom && a->order && a->shallow && a->ret);
}

static void big_arrays_free(struct big_arrays *a)
{
    free(a->edges);
    free(a->idom);
    free(a->order);
    free(a->shallow);
    free(a->ret);
}

START_TEST(test_domtree_random)
{
    /* a root with many children (the heap sort) and random graphs below, ties included */
    enum { N = 3000, CAP = 4 * N };
    struct big_arrays a;
    big_arrays_make(&a, N, CAP);
    uint32_t(*edges)[2] = a.edges, *idom = a.idom, *order = a.order;
    uint64_t *shallow = a.shallow, *ret = a.ret;
    for (int round = 0; round < 40; round++) {
        uint32_t n = 2 + rnd(N - 1);
        size_t m = random_edges(n, edges, CAP, round % 2);
        for (uint32_t v = 1; v < n && m < CAP && round % 4 < 2; v += 1 + rnd(3)) {
            edges[m][0] = 0;
            edges[m][1] = v;
            m++;
        }
        for (uint32_t v = 0; v < n; v++)
            shallow[v] = rnd(round % 3 == 0 ? 4 : 1000);
        struct test_graph t;
        graph_make(&t, n, edges, m);
        retained_of(&t, n, idom, order, shallow, ret);
        check_domtree(n, idom, ret);
        graph_free(&t);
    }
    big_arrays_free(&a);
}
END_TEST

START_TEST(test_domtree_big_list)
{
    /* more than 65,536 children (the radix sort): sizes over two 16-bit digits, many ties */
    enum { N = 150001 };
    struct big_arrays a;
    big_arrays_make(&a, N, N + 100);
    uint32_t(*edges)[2] = a.edges, *idom = a.idom, *order = a.order;
    uint64_t *shallow = a.shallow, *ret = a.ret;
    size_t m = 0;
    for (uint32_t v = 1; v < N; v++, m++) {
        edges[m][0] = v <= 100 ? v - 1 : 0;
        edges[m][1] = v;
        shallow[v] = ((uint64_t)rnd(3) << 22) + ((uint64_t)rnd(2) << 11) + rnd(50);
    }
    shallow[0] = 0;
    struct test_graph t;
    graph_make(&t, N, edges, m);
    retained_of(&t, N, idom, order, shallow, ret);
    check_domtree(N, idom, ret);
    /* and a list whose sizes all share their upper digits */
    for (uint32_t v = 1; v < N; v++)
        ret[v] = rnd(1000);
    check_domtree(N, idom, ret);
    graph_free(&t);
    big_arrays_free(&a);
}
END_TEST

/* Group retained sizes against a naive union: for each group, the nodes that some member
 * dominates (unreachable once that member is removed), each counted once. */
START_TEST(test_group_retained)
{
    enum { N_MAX = 40, CAP = 4 * N_MAX, GROUPS = 4 };
    uint32_t edges[CAP][2], idom[N_MAX], order[N_MAX], group[N_MAX];
    uint64_t shallow[N_MAX], ret[N_MAX], out[GROUPS];
    uint8_t all[N_MAX], without[N_MAX], held[GROUPS][N_MAX];
    uint32_t stack[N_MAX];
    for (int round = 0; round < 1000; round++) {
        uint32_t n = 1 + rnd(N_MAX);
        size_t m = random_edges(n, edges, CAP, round % 2);
        struct test_graph t;
        graph_make(&t, n, edges, m);
        for (uint32_t v = 0; v < n; v++) {
            shallow[v] = 1 + rnd(100);
            group[v] = v == 0 || rnd(5) == 0 ? NONE : rnd(GROUPS);
        }
        retained_of(&t, n, idom, order, shallow, ret);
        struct domtree dt;
        uint32_t *r = ret32(ret, n);
        ck_assert_int_eq(domtree_build(&dt, n, idom, r), 0);
        ck_assert_int_eq(domtree_group_retained(&dt, r, group, GROUPS, out), 0);
        free(r);
        memset(held, 0, sizeof held);
        reach_without(&t, NONE, all, stack);
        for (uint32_t v = 1; v < n; v++) {
            if (!all[v] || group[v] == NONE)
                continue;
            reach_without(&t, v, without, stack);
            for (uint32_t x = 0; x < n; x++)
                held[group[v]][x] |= all[x] && !without[x];
        }
        for (uint32_t g = 0; g < GROUPS; g++) {
            uint64_t want = 0;
            for (uint32_t x = 0; x < n; x++)
                want += held[g][x] ? shallow[x] : 0;
            ck_assert_uint_eq(out[g], want);
        }
        domtree_free(&dt);
        graph_free(&t);
    }
}
END_TEST

START_TEST(test_group_retained_deep)
{
    /* a 2-million-long chain, alternating two groups below a third: the walk's stack grows */
    const uint32_t n = 2000000;
    uint32_t *edges = malloc(2 * (size_t)n * sizeof *edges);
    uint32_t *idom = malloc((size_t)n * sizeof *idom), *order = malloc((size_t)n * sizeof *order);
    uint32_t *group = malloc((size_t)n * sizeof *group);
    uint64_t *shallow = malloc((size_t)n * sizeof *shallow), *ret = malloc((size_t)n * sizeof *ret);
    ck_assert(edges && idom && order && group && shallow && ret);
    for (uint32_t v = 0; v + 1 < n; v++) {
        edges[2 * v] = v;
        edges[2 * v + 1] = v + 1;
    }
    for (uint32_t v = 0; v < n; v++) {
        shallow[v] = 1;
        group[v] = v == 0 ? NONE : v == 1 ? 2 : v % 2;
    }
    struct test_graph t;
    graph_make(&t, n, (const uint32_t(*)[2])edges, n - 1);
    retained_of(&t, n, idom, order, shallow, ret);
    struct domtree dt;
    uint32_t *r = ret32(ret, n);
    ck_assert_int_eq(domtree_build(&dt, n, idom, r), 0);
    uint64_t out[3];
    ck_assert_int_eq(domtree_group_retained(&dt, r, group, 3, out), 0);
    free(r);
    /* group 2 is node 1, which holds all but the root; 0 first appears at node 2, 1 at 3 */
    ck_assert_uint_eq(out[2], n - 1);
    ck_assert_uint_eq(out[0], n - 2);
    ck_assert_uint_eq(out[1], n - 3);
    domtree_free(&dt);
    graph_free(&t);
    free(edges);
    free(idom);
    free(order);
    free(group);
    free(shallow);
    free(ret);
}
END_TEST

/* A leak: root -> holder (1) -> list (2) -> array (3) -> 100 elements (10..109), and a
 * smaller neighbour (4 -> 5) beside the holder; element 10 is also referenced by node 4. */
/* domtree_accumulation_point(dt, ret, from, share) must be expect. */
struct accumulation_case {
    uint32_t from;
    double share;
    uint32_t expect;
};

static void check_accumulation(const struct domtree *dt, const uint64_t *ret,
                               const struct accumulation_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t *r = ret32(ret, dt->n);
        uint32_t got = domtree_accumulation_point(dt, r, cases[i].from, cases[i].share);
        free(r);
        ck_assert_msg(got == cases[i].expect, "case %zu: from %u share %g: got %u, want %u", i,
                      cases[i].from, cases[i].share, got, cases[i].expect);
    }
}

START_TEST(test_accumulation_point)
{
    enum { N = 110 };
    uint32_t edges[N + 8][2];
    size_t m = 0;
    const uint32_t chain[][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 4}, {4, 5}, {4, 10}};
    for (size_t i = 0; i < COUNT(chain); i++, m++)
        memcpy(edges[m], chain[i], sizeof chain[i]);
    for (uint32_t e = 10; e < N; e++, m++) {
        edges[m][0] = 3;
        edges[m][1] = e;
    }
    uint64_t shallow[N] = {0, 16, 24, 416, 40, 60};
    for (uint32_t e = 10; e < N; e++)
        shallow[e] = 10;
    struct test_graph t;
    graph_make(&t, N, edges, m);
    uint32_t idom[N], order[N];
    uint64_t ret[N];
    retained_of(&t, N, idom, order, shallow, ret);
    /* element 10 is shared with node 4: the array keeps 99 elements */
    ck_assert_uint_eq(idom[10], 0);
    ck_assert_uint_eq(ret[3], 416 + 990);
    ck_assert_uint_eq(ret[2], 24 + 416 + 990);
    ck_assert_uint_eq(ret[1], 16 + 24 + 416 + 990);
    ck_assert_uint_eq(ret[0], 16 + 24 + 416 + 1000 + 40 + 60);
    struct domtree dt;
    uint32_t *r = ret32(ret, N);
    ck_assert_int_eq(domtree_build(&dt, N, idom, r), 0);
    free(r);
    const uint32_t *c;
    ck_assert_uint_eq(domtree_children(&dt, 0, &c), 3);
    ck_assert_uint_eq(c[0], 1);
    ck_assert_uint_eq(c[1], 4);
    ck_assert_uint_eq(c[2], 10);
    const struct accumulation_case cases[] = {
        /* 1446 of 1556 (93 %) under the holder, then 98.9 % and 98.3 % further down */
        {0, 0.8, 3},
        {1, 0.8, 3},
        {0, 0.95, 0},
        {1, 0.985, 2},
        /* leaves, a node whose children all retain little, a share above 1 */
        {5, 0.8, 5},
        {4, 0.8, 4},
        {2, 1.01, 2},
    };
    check_accumulation(&dt, ret, cases, COUNT(cases));
    domtree_free(&dt);
    graph_free(&t);
}
END_TEST

START_TEST(test_accumulation_ties_and_zeros)
{
    /* equal children: the first by index is followed; nothing to follow below a node that
     * retains 0 bytes */
    uint32_t edges[][2] = {{0, 1}, {1, 3}, {1, 2}, {3, 4}, {0, 5}, {5, 6}};
    uint64_t shallow[7] = {0, 0, 50, 50, 0, 0, 0};
    struct test_graph t;
    graph_make(&t, 7, edges, COUNT(edges));
    uint32_t idom[7], order[7];
    uint64_t ret[7];
    retained_of(&t, 7, idom, order, shallow, ret);
    struct domtree dt;
    uint32_t *r = ret32(ret, 7);
    ck_assert_int_eq(domtree_build(&dt, 7, idom, r), 0);
    free(r);
    const struct accumulation_case cases[] = {
        {1, 0.5, 2},
        {1, 0.6, 1},
        {0, 0.5, 2},
        {5, 0.5, 5},
    };
    check_accumulation(&dt, ret, cases, COUNT(cases));
    domtree_free(&dt);
    graph_free(&t);
}
END_TEST

/* With the argument "long", only the 10-million-node chains (a test of their own in meson, so
 * that the two run side by side). */
int main(int argc, char **argv)
{
    int long_only = argc > 1 && strcmp(argv[1], "long") == 0;
    Suite *s = suite_create("dominators");
    TCase *tc = tcase_create(long_only ? "chains" : "graphs");
    tcase_set_timeout(tc, 120);
    if (long_only) {
        tcase_add_test(tc, test_long_chain);
        tcase_add_test(tc, test_long_chain_back_edges);
    } else {
        tcase_add_test(tc, test_known_graphs);
        tcase_add_test(tc, test_no_nodes);
        tcase_add_test(tc, test_random_graphs);
        tcase_add_test(tc, test_random_medium);
        tcase_add_test(tc, test_domtree_random);
        tcase_add_test(tc, test_domtree_big_list);
        tcase_add_test(tc, test_group_retained);
        tcase_add_test(tc, test_group_retained_deep);
        tcase_add_test(tc, test_accumulation_point);
        tcase_add_test(tc, test_accumulation_ties_and_zeros);
    }
    suite_add_tcase(s, tc);
    return run_suite(s);
}

/* Times tools/analyze's dominators, retained sizes and dominator-tree lists on synthetic graphs
 * shaped like heaps, and prints the peak RSS after each phase (doc/heap-analysis.md,
 * "Algorithms", says how the figures there were taken).
 *
 *   dominators-bench heap NODES [SEED [FAR]]   a heap-like graph (below), FAR = 0.15 unless given
 *   dominators-bench chain NODES         0 -> 1 -> ... -> NODES - 1
 *   DOMINATORS_BENCH_NOHUGE=1 in the environment: no huge pages asked for the graph and the
 *   arrays the caller owns (dominators_compute still asks for its own).
 *
 * The heap-like graph: nodes 1..1000 are GC roots (children of the virtual root 0); every other
 * node v has one referrer p < v (the tree), 1 - FAR of the time close before it (v - 1 - a
 * geometric number of mean 8, as objects allocated together lie together), else anywhere before;
 * then each node has 0-3 more references (mean 1.45): 55 % to one of 20,000 popular objects
 * (skewed towards the first), 45 % - FAR to a node within 1,000 of it either way, FAR to any node
 * (sharing across subtrees, cycles). About 2.45 edges per node. Everything is a hash of the node
 * index, so the CSR is built in place with no temporary edge list. */
#include "dominators.h"
#include "domtree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t seed = 1;
/* huge pages for the graph and the arrays around it too, as the loader should (see "nohuge") */
static int huge = 1;
static double far = 0.15;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [0, 1) from node v's k-th draw */
static double draw(uint32_t v, uint32_t k)
{
    return (double)(mix(seed * 0x100000001b3ull ^ ((uint64_t)v << 8 | k)) >> 11) * 0x1p-53;
}

enum { ROOTS = 1000, HUBS = 20000 };

static uint32_t referrer(uint32_t v)
{
    if (v <= ROOTS)
        return 0;
    if (draw(v, 0) < far)
        return (uint32_t)(draw(v, 1) * v);
    uint32_t back = (uint32_t)(-log(1.0 - draw(v, 1)) * 8.0);
    return back >= v ? 0 : v - 1 - back;
}

static uint32_t extras(uint32_t v)
{
    double u = draw(v, 2);
    return u < 0.25 ? 0 : u < 0.55 ? 1 : u < 0.75 ? 2 : 3;
}

static uint32_t extra_target(uint32_t v, uint32_t k, uint32_t n)
{
    double u = draw(v, 3 + 2 * k), x = draw(v, 4 + 2 * k);
    if (u < 0.55)
        return 1 + ROOTS + (uint32_t)(HUBS * x * x * x) % (n - 1 - ROOTS);
    if (u < 1.0 - far) {
        int64_t t = (int64_t)v - 1000 + (int64_t)(x * 2001);
        return t < 1 ? 1 : t >= n ? n - 1 : (uint32_t)t;
    }
    return 1 + (uint32_t)(x * (n - 1));
}

/* wall and CPU seconds: the machine is shared, CPU time says what a phase costs by itself */
static double cpu0;
static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void)
{
    cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    return seconds(CLOCK_MONOTONIC);
}
static double cpu_since(void)
{
    return seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "dominators-bench: out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

static void make_heap(uint32_t n, uint32_t **offp, uint32_t **adjp)
{
    uint32_t *off = xmalloc(((size_t)n + 1) * sizeof *off);
    if (huge)
        dominators_advise_huge(off, ((size_t)n + 1) * sizeof *off);
    memset(off, 0, ((size_t)n + 1) * sizeof *off);
    for (uint32_t v = 1; v < n; v++) {
        off[referrer(v)]++;
        off[v] += extras(v);
    }
    uint64_t total = 0;
    for (uint32_t v = 0; v < n; v++) {
        total += off[v];
        off[v] = total;
    }
    off[n] = total;
    uint32_t *adj = xmalloc(total * sizeof *adj);
    if (huge)
        dominators_advise_huge(adj, total * sizeof *adj);
    /* filled from the ends of the ranges: extras first (they end up last), then children */
    for (uint32_t v = n; v-- > 1;)
        for (uint32_t k = extras(v); k-- > 0;)
            adj[--off[v]] = extra_target(v, k, n);
    for (uint32_t v = n; v-- > 1;)
        adj[--off[referrer(v)]] = v;
    *offp = off;
    *adjp = adj;
}

static void make_chain(uint32_t n, uint32_t **offp, uint32_t **adjp)
{
    uint32_t *off = xmalloc(((size_t)n + 1) * sizeof *off);
    uint32_t *adj = xmalloc((size_t)n * sizeof *adj);
    for (uint32_t v = 0; v < n; v++) {
        off[v] = v;
        adj[v] = v + 1;
    }
    off[n] = n - 1;
    *offp = off;
    *adjp = adj;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "heap") != 0 && strcmp(argv[1], "chain") != 0)) {
        fprintf(stderr, "usage: dominators-bench heap|chain NODES [SEED]\n");
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[2], NULL, 10);
    if (n < ROOTS + HUBS + 2) {
        fprintf(stderr, "dominators-bench: NODES must be at least %d\n", ROOTS + HUBS + 2);
        return 2;
    }
    if (argc > 3)
        seed = strtoull(argv[3], NULL, 10);
    if (argc > 4)
        far = strtod(argv[4], NULL);
    if (!(far >= 0 && far <= 0.45)) {
        fprintf(stderr, "dominators-bench: FAR must be between 0 and 0.45\n");
        return 2;
    }
    huge = getenv("DOMINATORS_BENCH_NOHUGE") == NULL;
    uint32_t *off;
    uint32_t *adj;
    double t0 = now();
    if (argv[1][0] == 'h')
        make_heap(n, &off, &adj);
    else
        make_chain(n, &off, &adj);
    double c = cpu_since(), t1 = seconds(CLOCK_MONOTONIC);
    printf("graph: %u nodes, %llu edges (%.2f per node), built in %.2f s (cpu %.2f s), peak RSS "
           "%.0f MiB\n",
           n, (unsigned long long)off[n], (double)off[n] / n, t1 - t0, c, peak_mib());

    struct csr_graph g = {.n = n, .off = off, .adj = adj};
    uint32_t *idom = xmalloc((size_t)n * sizeof *idom), *order = xmalloc((size_t)n * sizeof *order);
    uint64_t *shallow = xmalloc((size_t)n * sizeof *shallow);
    uint64_t *ret = xmalloc((size_t)n * sizeof *ret);
    if (huge) {
        dominators_advise_huge(shallow, (size_t)n * sizeof *shallow);
        dominators_advise_huge(ret, (size_t)n * sizeof *ret);
    }
    for (uint32_t v = 0; v < n; v++)
        shallow[v] = v == 0 ? 0 : 16 + 8 * (mix(v) % 8);
    /* touch the outputs now so the peaks below show the algorithms' own memory */
    memset(idom, 0, (size_t)n * sizeof *idom);
    memset(order, 0, (size_t)n * sizeof *order);
    memset(ret, 0, (size_t)n * sizeof *ret);
    double base = peak_mib();
    printf("with idom, order, shallow, retained: peak RSS %.0f MiB\n", base);

    uint32_t reached;
    t0 = now();
    if (dominators_compute(&g, idom, order, &reached) != 0) {
        fprintf(stderr, "dominators-bench: dominators_compute failed\n");
        return 1;
    }
    c = cpu_since(), t1 = seconds(CLOCK_MONOTONIC);
    printf("dominators_compute: %.2f s (cpu %.2f s), %u reached, peak RSS %.0f MiB (+%.0f)\n",
           t1 - t0, c, reached, peak_mib(), peak_mib() - base);
    t0 = now();
    dominators_retained(n, idom, order, reached, shallow, ret);
    c = cpu_since(), t1 = seconds(CLOCK_MONOTONIC);
    printf("dominators_retained: %.2f s (cpu %.2f s), root retains %llu bytes\n", t1 - t0, c,
           (unsigned long long)ret[0]);
    /* the tree takes 32-bit sizes, as hprof-analyze keeps them (units of 8 bytes) */
    uint32_t *ret8 = xmalloc((size_t)n * sizeof *ret8);
    for (uint32_t i = 0; i < n; i++)
        ret8[i] = ret[i] >> 3 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ret[i] >> 3);
    struct domtree dt;
    double before = peak_mib();
    t0 = now();
    if (domtree_build(&dt, n, idom, ret8) != 0) {
        fprintf(stderr, "dominators-bench: domtree_build failed\n");
        return 1;
    }
    c = cpu_since(), t1 = seconds(CLOCK_MONOTONIC);
    const uint32_t *top;
    uint32_t roots = domtree_children(&dt, 0, &top);
    printf(
        "domtree_build: %.2f s (cpu %.2f s), %u children of the root, peak RSS %.0f MiB (+%.0f)\n",
        t1 - t0, c, roots, peak_mib(), peak_mib() - before);

    /* after the timings: how many up edges (the predecessors the algorithm stores) */
    uint32_t *pos = xmalloc((size_t)n * sizeof *pos);
    memset(pos, 0xff, (size_t)n * sizeof *pos);
    for (uint32_t i = 0; i < reached; i++)
        pos[order[i]] = i;
    uint64_t up = 0;
    for (uint32_t u = 0; u < n; u++)
        for (uint32_t e = off[u]; e < off[u + 1]; e++)
            up += pos[u] != UINT32_MAX && pos[adj[e]] < pos[u];
    printf("up edges: %llu (%.2f per node)\n", (unsigned long long)up, (double)up / n);
    free(pos);
    domtree_free(&dt);
    free(idom);
    free(order);
    free(shallow);
    free(ret);
    free(off);
    free(adj);
    return 0;
}

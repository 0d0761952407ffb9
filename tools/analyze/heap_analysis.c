/*
 * heap_analysis.c: dominators and retained sizes of a heap graph, the children of each
 * dominator, class totals, accumulation points, top retainers, shortest paths. See
 * heap_analysis.h and doc/heap-analysis.md.
 */
#include "heap_analysis.h"

#include "array_spill.h"
#include "dominators.h"
#include "rss_trace.h"

#include <stdlib.h>
#include <string.h>

uint64_t heap_analysis_narrow_limit = (uint64_t)UINT32_MAX << 3 | 7;

/* Sort k[0..n) by retained size, biggest first (short lists: insertion; else qsort). */
static const uint32_t *sort_key;
static int cmp_kid(const void *x, const void *y)
{
    uint32_t a = sort_key[*(const uint32_t *)x], b = sort_key[*(const uint32_t *)y];
    return a < b ? 1 : a > b ? -1 : 0;
}
static void sort_kids(uint32_t *k, uint32_t n, const uint32_t *ret)
{
    if (n > 16) {
        sort_key = ret;
        qsort(k, n, sizeof *k, cmp_kid);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = k[i], j = i;
        for (; j && ret[k[j - 1]] < ret[v]; j--)
            k[j] = k[j - 1];
        k[j] = v;
    }
}

/* Class totals: counts and shallow bytes of the reachable instances; the retained size of
 * the instances no other instance of the class dominates (domtree_group_retained), so nested
 * instances are not counted twice. */
static int class_totals(struct heap_analysis *a)
{
    const struct heap_graph *g = a->g;
    a->classes = calloc(g->nclasses, sizeof *a->classes);
    uint64_t *ret = calloc(g->nclasses, sizeof *ret);
    if (!a->classes || !ret ||
        domtree_group_retained(&a->tree, a->retained, g->cls, g->nclasses, ret) < 0) {
        free(ret);
        return -1;
    }
    for (uint32_t v = g->first_obj; v < g->n; v++)
        if (a->idom[v] != HG_NONE && g->cls[v] != HG_NONE) {
            a->classes[g->cls[v]].count++;
            a->classes[g->cls[v]].shallow += heap_analysis_shallow(a, v);
        }
    for (uint32_t k = 0; k < g->nclasses; k++)
        a->classes[k].retained = ret[k] << a->ret_shift;
    free(ret);
    return 0;
}

static int bfs(struct heap_analysis *a, uint32_t *queue);

/* 32 GiB reachable or more: the sums are made in 64 bits (dominators_retained reads shallow[i]
 * before it writes retained[i], so in place), then narrowed to the coarsest unit that fits,
 * front to back in the same buffer (the 4 bytes of entry i overlap only entries <= i, read
 * already), which then shrinks to half; the shallow sizes are kept (exact). */
static int retained_wide(struct heap_analysis *a)
{
    const struct heap_graph *g = a->g;
    uint32_t n = g->n;
    uint64_t *ret = malloc((size_t)n * sizeof *ret);
    if (!ret)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        ret[i] = heap_graph_shallow(g, i);
    dominators_retained(n, a->idom, a->order, a->reached, ret, ret);
    for (uint32_t i = 0; i < n; i++) /* an unreachable node's "retained" is its shallow size */
        if (a->idom[i] == HG_NONE)
            ret[i] = heap_graph_shallow(g, i);
    while (ret[0] >> a->ret_shift > UINT32_MAX) /* node 0 retains the whole reachable heap */
        a->ret_shift++;
    unsigned char *buf = (unsigned char *)ret;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, buf + 8 * (size_t)i, 8);
        uint32_t w = (uint32_t)(v >> a->ret_shift);
        memcpy(buf + 4 * (size_t)i, &w, 4);
    }
    uint32_t *half = realloc(buf, (size_t)n * sizeof *a->retained + 1);
    a->retained = half ? half : (uint32_t *)buf;
    return 0;
}

/* Read back what array_spill_out parked. */
static int unspill(struct array_spill sp[2], struct heap_graph *g)
{
    int rc = array_spill_in(&sp[0], (void **)&g->ids32);
    rc |= array_spill_in(&sp[1], (void **)&g->cls);
    return rc;
}

int heap_analysis_run(struct heap_analysis *a, struct heap_graph *g)
{
    return heap_analysis_run_with(a, g, NULL, NULL);
}

int heap_analysis_run_with(struct heap_analysis *a, struct heap_graph *g, heap_analysis_hook hook,
                           void *ctx)
{
    memset(a, 0, sizeof *a);
    a->g = g;
    uint32_t n = g->n;
    a->idom = malloc((size_t)n * sizeof *a->idom);
    a->order = malloc((size_t)n * sizeof *a->order);
    if (!a->idom || !a->order)
        return -1;
    /* the dominators read only the references: the ids and classes (8 bytes an object) wait on
     * disk until the references are freed (the shortest-path tree does not read them either);
     * the bucket index and the shallow sizes stay, the dominators' peak being below the
     * report's (doc/heap-analysis.md, "Memory") */
    struct array_spill sp[3];
    array_spill_out(&sp[0], (void **)&g->ids32, g->nobjects * sizeof *g->ids32);
    array_spill_out(&sp[1], (void **)&g->cls, (size_t)n * sizeof *g->cls);
    array_spill_out(&sp[2], (void **)&g->shallow8, (size_t)n * sizeof *g->shallow8);
    struct csr_graph cg = {n, g->off, g->adj};
    int drc = dominators_compute(&cg, a->idom, a->order, &a->reached);
    if (array_spill_in(&sp[2], (void **)&g->shallow8) < 0 || drc < 0)
        return unspill(sp, g), -1;
    rss_trace("dominators");
    for (uint32_t i = g->first_obj; i < n; i++) {
        if (a->idom[i] == HG_NONE) {
            a->unreachable_objects++;
            a->unreachable_bytes += heap_graph_shallow(g, i);
        } else {
            a->reachable_objects++;
            a->reachable_bytes += heap_graph_shallow(g, i);
        }
    }
    /* retained sizes in 32 bits, units of 8 bytes: the shallow sizes' own unit, so while the
     * reachable heap is under 32 GiB they are summed in place in the shallow sizes' array
     * (reverse preorder: every node after all it dominates; an unreachable node keeps its
     * shallow size) and no other array is needed; heap_analysis_shallow derives the shallow
     * sizes from then on */
    a->ret_shift = 3;
    if (a->reachable_bytes <= heap_analysis_narrow_limit) {
        a->retained = g->shallow8;
        g->shallow8 = NULL;
        for (uint32_t i = a->reached; i-- > 1;) {
            uint32_t v = a->order[i];
            a->retained[a->idom[v]] += a->retained[v];
        }
    } else if (retained_wide(a) < 0) {
        return unspill(sp, g), -1;
    }
    rss_trace("retained sizes");
    int rc = bfs(a, a->order); /* the preorder is not needed any more: it is the BFS queue */
    free(a->order);
    a->order = NULL;
    /* the reports walk the dominator tree and the BFS tree, never the references again: they
     * go before the children lists are built, which keeps the peak lower */
    heap_graph_drop_edges(g);
    if (unspill(sp, g) < 0)
        rc = -1;
    rss_trace("shortest paths");
    if (!rc && hook)
        rc = hook(a, ctx);
    /* the reports look up few ids (collections, paths): a coarser index is enough */
    heap_graph_coarsen_index(g);
    if (rc < 0 || domtree_build(&a->tree, n, a->idom, a->retained) < 0 || class_totals(a) < 0)
        return -1;
    rss_trace("dominator tree, classes");
    return 0;
}

void heap_analysis_free(struct heap_analysis *a)
{
    free(a->idom);
    free(a->order);
    free(a->retained);
    domtree_free(&a->tree);
    free(a->classes);
    free(a->bfs_parent);
    memset(a, 0, sizeof *a);
}

size_t heap_analysis_top_objects(const struct heap_analysis *a, size_t k, uint32_t *out)
{
    /* a min-heap of the k biggest seen so far */
    size_t n = 0;
    const uint32_t *r = a->retained;
    for (uint32_t v = a->g->first_obj; v < a->g->n; v++) {
        if (a->idom[v] == HG_NONE || !k)
            continue;
        if (n == k && r[v] <= r[out[0]])
            continue;
        size_t i;
        if (n < k) {
            i = n++;
            while (i && r[out[(i - 1) / 2]] > r[v]) {
                out[i] = out[(i - 1) / 2];
                i = (i - 1) / 2;
            }
        } else {
            i = 0;
            for (;;) {
                size_t c = 2 * i + 1;
                if (c >= n)
                    break;
                if (c + 1 < n && r[out[c + 1]] < r[out[c]])
                    c++;
                if (r[out[c]] >= r[v])
                    break;
                out[i] = out[c];
                i = c;
            }
        }
        out[i] = v;
    }
    sort_kids(out, (uint32_t)n, r);
    return n;
}

/* Breadth-first from the virtual root: each node's parent on a shortest path (queue: n nodes) */
static int bfs(struct heap_analysis *a, uint32_t *queue)
{
    const struct heap_graph *g = a->g;
    uint32_t *parent = a->bfs_parent = malloc((size_t)g->n * sizeof *parent);
    if (!parent)
        return -1;
    memset(parent, 0xff, (size_t)g->n * sizeof *parent);
    size_t head = 0, tail = 0;
    queue[tail++] = 0;
    parent[0] = 0;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint64_t e = g->off[v]; e < g->off[v + 1]; e++) {
            uint32_t w = g->adj[e];
            if (parent[w] == HG_NONE) {
                parent[w] = v;
                queue[tail++] = w;
            }
        }
    }
    return 0;
}

long heap_analysis_path(const struct heap_analysis *a, uint32_t target, uint32_t **path)
{
    const uint32_t *parent = a->bfs_parent;
    *path = NULL;
    if (a->idom[target] == HG_NONE)
        return 0;
    long len = 0;
    if (parent[target] != HG_NONE) {
        for (uint32_t v = target; v != 0; v = parent[v])
            len++;
        len++;
        uint32_t *p = malloc((size_t)len * sizeof *p);
        if (!p)
            len = -1;
        else {
            long i = len;
            for (uint32_t v = target;; v = parent[v]) {
                p[--i] = v;
                if (v == 0)
                    break;
            }
            *path = p;
        }
    }
    return len;
}

uint64_t heap_analysis_shallow(const struct heap_analysis *a, uint32_t v)
{
    if (a->g->shallow8)
        return heap_graph_shallow(a->g, v);
    uint64_t r = heap_analysis_retained(a, v);
    if (a->idom[v] == HG_NONE)
        return r;
    const uint32_t *kids;
    uint32_t k = domtree_children(&a->tree, v, &kids);
    for (uint32_t i = 0; i < k; i++)
        r -= heap_analysis_retained(a, kids[i]);
    return r;
}

/* Semi-NCA dominators (Georgiadis' variant of Lengauer-Tarjan) in DFS preorder numbers.
 *
 * Phases, each a loop (no recursion anywhere):
 *  1. DFS from node 0. The path is the parent array itself (backtracking follows it), and the
 *     per-node edge cursor lives in `best` while the node is on the path. Every edge is
 *     classified as it is scanned: tree edge; forward edge (target numbered after the source,
 *     already finished: folds the source into best[target], the lowest "low" predecessor);
 *     up edge (target numbered before the source: counted per target); self-loop (ignored).
 *  2. A second pass over the edges stores the sources of up edges grouped by target, the only
 *     predecessors that need an eval (a low predecessor is its own candidate).
 *  3. Semidominators in reverse preorder with link-eval on `anc` (parent links, compressed by
 *     path halving in one pass) and `best` (lowest semidominator on the compressed segment),
 *     side by side in one array so that a step of eval costs one cache miss, not two.
 *     semi[w] is kept in upoff[w + 1], free once w's predecessor range has been read.
 *  4. NCA: idom[w] = the first dominator-tree ancestor of parent[w] numbered at most semi[w],
 *     in preorder, in place over the parent array.
 * The caller's idom array maps node -> preorder number until phase 4 is done. The loops that
 * walk memory at random prefetch what the next iterations read: the run time is cache misses. */
#include "dominators.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NONE UINT32_MAX
/* pre[] marks of a leaf (no successor, exactly one referrer): not yet seen, seen by the DFS */
#define LEAF_MARK (NONE - 1)
#define LEAF_SEEN (NONE - 2)
#define PREFETCH_AHEAD 16

/* link-eval state of a node (preorder numbers) */
struct link {
    uint32_t anc;  /* forest parent, compressed */
    uint32_t best; /* edge cursor, then lowest low predecessor, then eval label */
};

struct dom_work {
    const struct csr_graph *g;
    uint32_t *pre;    /* node -> preorder number (the caller's idom array) */
    uint32_t *order;  /* preorder number -> node */
    uint32_t *parent; /* DFS tree parent, then the immediate dominator (preorder numbers) */
    struct link *lk;
    uint32_t *upoff;  /* up-edge counts, then offsets into up, then semidominators (shifted) */
    uint32_t *up;     /* sources of up edges, grouped by target */
    uint32_t reached; /* numbered by the DFS */
    uint32_t leaves;  /* leaves reached, appended to order[] after the numbered nodes */
};

void dominators_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = 4096;
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(page - 1);
    if (bytes >= ((size_t)4 << 20) && end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* malloc, with huge pages asked for */
static void *big_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p)
        dominators_advise_huge(p, bytes);
    return p;
}

/* Before phase 1: pre[v] = LEAF_MARK for each node with no successor and one referrer (one
 * edge in all, duplicates counted), else NONE. Its immediate dominator is that referrer: it gets
 * no preorder number and none of the link-eval state (16 bytes a node less; on heap dumps many
 * objects are such leaves: strings' arrays, boxed values, primitive arrays). */
static int mark_leaves(struct dom_work *w)
{
    uint32_t n = w->g->n;
    size_t words = ((size_t)n + 63) / 64;
    uint64_t *once = calloc(words ? words * 2 : 1, sizeof *once), *more = once + words;
    if (!once)
        return -1;
    const uint32_t *off = w->g->off, *adj = w->g->adj;
    for (uint32_t e = 0; e < off[n]; e++) {
        uint32_t v = adj[e];
        uint64_t bit = (uint64_t)1 << (v & 63);
        more[v >> 6] |= once[v >> 6] & bit;
        once[v >> 6] |= bit;
    }
    for (uint32_t v = 0; v < n; v++) {
        uint64_t bit = (uint64_t)1 << (v & 63);
        bool one = (once[v >> 6] & bit) && !(more[v >> 6] & bit);
        w->pre[v] = v && one && off[v] == off[v + 1] ? LEAF_MARK : NONE;
    }
    free(once);
    return 0;
}

/* Phase 1. */
static int dfs(struct dom_work *w)
{
    const uint32_t *off = w->g->off;
    const uint32_t *adj = w->g->adj;
    uint32_t *pre = w->pre, *order = w->order, *parent = w->parent;
    struct link *lk = w->lk;
    uint32_t *cnt = w->upoff;
    uint32_t r = 1, cur = 0;

    pre[0] = 0;
    order[0] = 0;
    parent[0] = 0;
    lk[0] = (struct link){0, 0};
    cnt[0] = 0;
    for (;;) {
        uint32_t u = order[cur];
        uint32_t base = off[u], deg = off[u + 1] - base;
        uint32_t k = lk[cur].best;
        if (k == 0) {
            /* first visit: fetch the successors' numbers and lists all at once */
            for (uint32_t e = base; e < base + deg; e++) {
                __builtin_prefetch(&pre[adj[e]]);
                __builtin_prefetch(&off[adj[e]]);
            }
        }
        while (k < deg) {
            uint32_t v = adj[base + k++];
            uint32_t pv = pre[v];
            if (pv == LEAF_MARK) { /* a leaf: this is its only referrer */
                pre[v] = LEAF_SEEN;
                w->leaves++;
                continue;
            }
            if (pv == NONE) {
                lk[cur].best = k;
                pre[v] = r;
                order[r] = v;
                parent[r] = cur;
                lk[r] = (struct link){cur, 0};
                cnt[r] = 0;
                cur = r++;
                goto next;
            }
            if (pv < cur)
                cnt[pv]++;
            else if (pv > cur && cur < lk[pv].best)
                lk[pv].best = cur;
        }
        /* finished: best now holds the lowest low predecessor found so far (the parent,
         * lowered by forward edges scanned later) */
        lk[cur].best = parent[cur];
        if (cur == 0)
            break;
        cur = parent[cur];
    next:;
    }
    w->reached = r;
    return 0;
}

/* Phase 2: upoff[i] = start of i's up predecessors in up[], upoff[reached] = their count. The
 * same pass gives each leaf the DFS saw its referrer (pre[leaf] = that node) and appends it to
 * order[] after the numbered nodes; unreached leaves go back to NONE. */
static int fill_up_edges(struct dom_work *w)
{
    uint32_t r = w->reached, n = w->g->n;
    uint64_t total = 0;
    for (uint32_t i = 0; i < r; i++) {
        total += w->upoff[i];
        w->upoff[i] = (uint32_t)total;
        if (total >= NONE)
            return -1;
    }
    w->upoff[r] = (uint32_t)total;
    w->up = big_alloc(total * sizeof *w->up);
    if (!w->up)
        return -1;
    const uint32_t *off = w->g->off;
    const uint32_t *adj = w->g->adj;
    uint32_t *pre = w->pre, nleaf = r;
    /* in node order: the successor lists are read sequentially */
    uint32_t m = off[n];
    for (uint32_t u = 0; u < n; u++) {
        uint32_t pu = pre[u];
        if (pu >= LEAF_SEEN || pu == NONE) {
            if (pu == LEAF_MARK)
                pre[u] = NONE;
            continue; /* an unreached node, or a leaf (no successors) */
        }
        for (uint32_t e = off[u]; e < off[u + 1]; e++) {
            if (e + PREFETCH_AHEAD < m)
                __builtin_prefetch(&pre[adj[e + PREFETCH_AHEAD]]);
            uint32_t v = adj[e], pv = pre[v];
            if (pv == LEAF_SEEN) {
                pre[v] = u; /* node numbers from here on: v has no other referrer */
                w->order[nleaf++] = v;
            } else if (pv < pu)
                w->up[--w->upoff[pv]] = pu;
        }
    }
    return 0;
}

/* The lowest semidominator on the forest path from u (linked, u > w) up to its first ancestor
 * numbered at most w, halving the path on the way: best[x] always covers the original tree
 * path from x (included) to anc[x] (excluded). */
static uint32_t eval_min(struct link *lk, uint32_t u, uint32_t w)
{
    uint32_t res = NONE, x = u;
    do {
        struct link *lx = &lk[x];
        if (lx->anc > w) {
            struct link lp = lk[lx->anc];
            if (lp.best < lx->best)
                lx->best = lp.best;
            lx->anc = lp.anc;
        }
        if (lx->best < res)
            res = lx->best;
        x = lx->anc;
    } while (x > w);
    return res;
}

/* Phases 3 and 4. */
static void semi_nca(struct dom_work *w)
{
    uint32_t r = w->reached;
    struct link *lk = w->lk;
    uint32_t *upoff = w->upoff, *up = w->up, *parent = w->parent;
    for (uint32_t v = r - 1; v >= 1; v--) {
        uint32_t s = lk[v].best;
        /* up[] is read from its end to its start: prefetch the links of sources read later.
         * Once s is the root nothing can lower it: the remaining evals are skipped (two thirds of
         * them on the synthetic heaps of dominators-bench). */
        for (uint32_t k = upoff[v + 1]; k-- > upoff[v] && s > 0;) {
            if (k >= PREFETCH_AHEAD)
                __builtin_prefetch(&lk[up[k - PREFETCH_AHEAD]]);
            uint32_t e = eval_min(lk, up[k], v);
            if (e < s)
                s = e;
        }
        lk[v].best = s;
        upoff[v + 1] = s;
    }
    for (uint32_t v = 1; v < r; v++) {
        uint32_t x = parent[v], s = upoff[v + 1];
        while (x > s)
            x = parent[x];
        parent[v] = x;
    }
}

static void work_free(struct dom_work *w, uint32_t *order_out)
{
    if (w->order != order_out)
        free(w->order);
    free(w->parent);
    free(w->lk);
    free(w->upoff);
    free(w->up);
}

int dominators_compute(const struct csr_graph *g, uint32_t *idom, uint32_t *order_out,
                       uint32_t *reached)
{
    uint32_t n = g->n;
    if (reached)
        *reached = 0;
    if (n == 0)
        return 0;
    if (n >= LEAF_SEEN)
        return -1;
    /* n-sized buffers: only the first `reached` entries are ever touched */
    struct dom_work w = {.g = g, .pre = idom};
    w.order = order_out ? order_out : big_alloc((size_t)n * sizeof *w.order);
    w.parent = big_alloc((size_t)n * sizeof *w.parent);
    w.lk = big_alloc((size_t)n * sizeof *w.lk);
    w.upoff = big_alloc(((size_t)n + 1) * sizeof *w.upoff);
    dominators_advise_huge(idom, (size_t)n * sizeof *idom);
    if (order_out)
        dominators_advise_huge(order_out, (size_t)n * sizeof *order_out);
    int rc = -1;
    if (!w.order || !w.parent || !w.lk || !w.upoff)
        goto out;
    if (mark_leaves(&w) != 0 || dfs(&w) != 0 || fill_up_edges(&w) != 0)
        goto out;
    semi_nca(&w);
    /* back to node numbers: unreached nodes are NONE in pre[] already, the leaves hold their
     * referrer, the numbered nodes are overwritten here */
    for (uint32_t i = 0; i < w.reached; i++)
        idom[w.order[i]] = w.order[w.parent[i]];
    if (reached)
        *reached = w.reached + w.leaves;
    rc = 0;
out:
    work_free(&w, order_out);
    return rc;
}

void dominators_retained(uint32_t n, const uint32_t *idom, const uint32_t *order, uint32_t reached,
                         const uint64_t *shallow, uint64_t *retained)
{
    for (uint32_t i = 0; i < n; i++)
        retained[i] = idom[i] == NONE ? 0 : shallow[i];
    /* reverse preorder: every node after all it dominates (they are its DFS descendants) */
    for (uint32_t i = reached; i-- > 1;) {
        uint32_t v = order[i];
        retained[idom[v]] += retained[v];
    }
}

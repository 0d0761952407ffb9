/* The dominator tree as lists of children, biggest retainer first, and the walks the heap
 * reports make on it (accumulation point of a leak suspect). Built from dominators.h's idom and
 * retained arrays; see doc/heap-analysis.md, "Algorithms". */
#ifndef HPROF_DOMTREE_H
#define HPROF_DOMTREE_H

#include <stdint.h>

/* Children of each reachable node in the dominator tree, as a CSR: node v's children are
 * child[child_off[v]..child_off[v + 1]) (child_off has n + 1 entries), each node's children
 * sorted by retained size descending, then by node index ascending. Node 0 (the virtual root)
 * is nobody's child; unreachable nodes have no children and are nobody's child. */
struct domtree {
    uint32_t n;
    uint32_t *child_off; /* 32 bits: a tree of n nodes has fewer than n children */
    uint32_t *child;
};

/* Retained sizes are 32-bit, in any unit (heap_analysis: units of 8 bytes, the size model's
 * alignment); group sums are in the same unit. */

/* Builds t from idom (UINT32_MAX: unreachable) and retained. Returns 0, or -1 on out of memory
 * (t is then empty and domtree_free may still be called). Keeps 4 bytes per node and 4 per
 * reachable node; while sorting, also 16 bytes per child of the node with most children (4 when
 * it has more than 65,536) and 1 MiB. */
int domtree_build(struct domtree *t, uint32_t n, const uint32_t *idom, const uint32_t *retained);
void domtree_free(struct domtree *t);

/* Number of children of v, and a pointer to the first (biggest retainer). */
static inline uint32_t domtree_children(const struct domtree *t, uint32_t v, const uint32_t **first)
{
    *first = t->child + t->child_off[v];
    return (uint32_t)(t->child_off[v + 1] - t->child_off[v]);
}

/* The accumulation point below node v: descend to the child holding the largest retained size
 * while that child holds at least `share` (e.g. 0.8) of its parent's retained size; returns the
 * last node reached (v itself if no child qualifies, or if v retains nothing). */
uint32_t domtree_accumulation_point(const struct domtree *t, const uint32_t *retained, uint32_t v,
                                    double share);

/* Retained sizes of groups of nodes (the instances of each class, say): out[g] = the sum of
 * retained[v] over the nodes v with group[v] == g that no other node of group g dominates, i.e.
 * what the members keep alive each on their own, counted once. It is a lower bound of what
 * freeing the whole group would free: objects that only two members hold together are not
 * counted. group[v] = UINT32_MAX puts v in no group; out has `groups` entries. Walks the tree
 * with an explicit stack (16 bytes per level of the deepest path) and 4 bytes per group.
 * Returns 0, or -1 on out of memory. */
int domtree_group_retained(const struct domtree *t, const uint32_t *retained, const uint32_t *group,
                           uint32_t groups, uint64_t *out);

#endif

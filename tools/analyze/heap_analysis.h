/*
 * heap_analysis: what the reports of hprof-analyze stand on: the dominator tree of a heap graph
 * (dominators.c), retained sizes, each dominator's children by retained size, per-class totals
 * (a class's retained size counts the instances that no other instance of the class dominates,
 * so nothing is counted twice), unreachable objects counted apart, accumulation points.
 */
#ifndef HEAP_ANALYSIS_H
#define HEAP_ANALYSIS_H

#include "domtree.h"
#include "heap_graph.h"

struct class_total {
    uint64_t count, shallow, retained;
};

struct heap_analysis {
    struct heap_graph *g;
    uint32_t *idom;       /* HG_NONE: unreachable */
    uint32_t *order;      /* freed once the children are built */
    uint32_t *bfs_parent; /* the shortest-path tree from the virtual root (BFS) */
    uint32_t reached;
    /* retained sizes in units of 2^ret_shift bytes: 32 bits a node; ret_shift is 3 (exact: the
     * size model aligns every object to 8) unless the reachable heap is 32 GiB or more, when
     * it grows until the root's retained size fits (sizes then rounded down to that unit) */
    uint32_t *retained;
    unsigned ret_shift;
    struct domtree tree;         /* dominator tree children, biggest retained first (domtree.h) */
    struct class_total *classes; /* reachable instances, per class index */
    uint64_t reachable_objects, reachable_bytes, unreachable_objects, unreachable_bytes;
};

/* Reachable heaps up to this many bytes (default: 32 GiB - 1) have their retained sizes summed in
 * place in 32 bits; bigger ones take the 64-bit path. A variable so that tests run both. */
extern uint64_t heap_analysis_narrow_limit;

/* The retained size of node v in bytes. */
static inline uint64_t heap_analysis_retained(const struct heap_analysis *a, uint32_t v)
{
    return (uint64_t)a->retained[v] << a->ret_shift;
}

/* The shallow size of node v in bytes: the graph's while it keeps them; once the retained sizes
 * exist the graph's array is freed (4 bytes an object less at the report's peak) and a
 * reachable node's is its retained size less its children's in the dominator tree (built by
 * then), an unreachable one's is kept in its retained size (which counts nothing else). */
uint64_t heap_analysis_shallow(const struct heap_analysis *a, uint32_t v);

/* Returns 0 or -1 (out of memory). */
int heap_analysis_run(struct heap_analysis *a, struct heap_graph *g);
/* The same, calling hook(a, ctx) (when not NULL) once the retained sizes and the shortest-path
 * tree exist and the references are freed, before the dominator-tree lists are built: a report
 * step that needs much memory of its own runs there, below the final peak (report_waste). A
 * hook's -1 fails the run. */
typedef int (*heap_analysis_hook)(const struct heap_analysis *a, void *ctx);
int heap_analysis_run_with(struct heap_analysis *a, struct heap_graph *g, heap_analysis_hook hook,
                           void *ctx);
void heap_analysis_free(struct heap_analysis *a);

/* The k object nodes with the largest retained sizes, biggest first, into out; returns how many. */
size_t heap_analysis_top_objects(const struct heap_analysis *a, size_t k, uint32_t *out);

/* Shortest path (fewest references) from the virtual root to target, in the BFS tree;
 * path[0] = 0 ... path[len-1] = target. Returns its length, 0 if unreachable, -1 out of memory.
 * *path is malloc'ed. */
long heap_analysis_path(const struct heap_analysis *a, uint32_t target, uint32_t **path);

#endif

/*
 * report_heap: the reports of hprof-analyze over an analysed heap (doc/heap-analysis.md):
 * summary, classes and objects by retained size, dominator tree, leak suspects with their
 * accumulation point and path, per-thread memory of stack frames, a path from the GC roots.
 */
#ifndef REPORT_HEAP_H
#define REPORT_HEAP_H

#include "heap_analysis.h"
#include "report_out.h"

struct report_opts {
    const char *file;
    size_t top;          /* rows of the top lists */
    unsigned depth;      /* dominator tree levels (0: no tree section) */
    unsigned fanout;     /* children shown per tree node */
    double suspect;      /* share of the reachable heap that makes a suspect */
    double accumulation; /* share a child must hold to be followed to the accumulation point */
    const char *path_to; /* "0x<id>" or a class name (its biggest instance); NULL: none */
    bool waste;          /* duplicate arrays and sparse collections (report_waste.h) */
    bool sites;          /* allocation sites (report_sites.h): one more walk over the dump */
};

/* Write every section; returns 0, -1 out of memory, -2 the path target is not in the dump. */
int report_heap(const struct heap_analysis *a, const struct report_opts *o, struct rout *out);

/* Class indexes with instances into out (room for g->nclasses), biggest retained first;
 * returns how many. */
uint32_t report_classes_by_retained(const struct heap_analysis *a, uint32_t *out);

/* "java.util.ArrayList@0x1234", "class Foo", "<GC roots>", "<thread 5 frames>" into buf. */
const char *report_node_name(const struct heap_graph *g, uint32_t node, char *buf, size_t len);

#endif

/*
 * report_waste: the sections of hprof-analyze about memory that buys nothing: identical
 * primitive arrays (duplicate strings) and empty or mostly empty collections
 * (doc/heap-analysis.md). Each needs one more walk over the dump; --no-waste leaves them out.
 */
#ifndef REPORT_WASTE_H
#define REPORT_WASTE_H

#include "report_heap.h"

/* Write both sections; 0, or -1 out of memory. */
int report_waste(const struct heap_analysis *a, const struct report_opts *o, struct rout *out);

#endif

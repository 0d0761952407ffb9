/*
 * report_waste: the sections of hprof-analyze about memory that buys nothing: identical
 * primitive arrays (duplicate strings) and empty or mostly empty collections
 * (doc/heap-analysis.md). Each needs one more walk over the dump; --no-waste leaves them out.
 */
#ifndef REPORT_WASTE_H
#define REPORT_WASTE_H

#include "report_heap.h"

/* A heap_analysis_hook (ctx: the struct report_opts): finds the identical arrays while the
 * dominator-tree lists do not exist yet (its 24 bytes per primitive array then stay below the
 * peak) and keeps the --top biggest groups for report_waste. 0, or -1 out of memory. */
int report_waste_prepare(const struct heap_analysis *a, void *opts);
/* Write both sections (the duplicates from report_waste_prepare's groups when it ran on a);
 * 0, or -1 out of memory. */
int report_waste(const struct heap_analysis *a, const struct report_opts *o, struct rout *out);

#endif

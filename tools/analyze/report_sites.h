/*
 * report_sites: hprof-analyze's section of live and retained bytes by allocation site
 * (heap_sites.h, doc/heap-analysis.md "Allocation sites"), and the summary lines that say how
 * many objects have a site (or, in one line, that the dump has none).
 */
#ifndef REPORT_SITES_H
#define REPORT_SITES_H

#include "heap_sites.h"
#include "report_heap.h"

/* Frames shown per stack in the reports */
#define REPORT_SITES_FRAMES 8

/* Summary key/values: objects_with_site, objects_without_site, allocation_sites. */
void report_sites_summary(const struct heap_sites *s, struct rout *out);
/* The "sites" table (nothing when no object has a site); 0, or -1 out of memory. */
int report_sites(const struct heap_analysis *a, const struct heap_sites *s,
                 const struct report_opts *o, struct rout *out);

#endif

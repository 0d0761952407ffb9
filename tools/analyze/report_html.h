/*
 * report_html: hprof-analyze --format=html, one self-contained page whose dominator tree opens
 * level by level (doc/heap-analysis.md).
 */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include "report_heap.h"

#include <stdio.h>

/* Write the page; 0, or -1 out of memory. */
int report_html(const struct heap_analysis *a, const struct report_opts *o, FILE *f);

#endif

/*
 * phd_histogram.h: the class histogram of an OpenJ9 portable heap dump, read by phd-read's
 * parser (tools/phd_read.c) for the tools that compare heap dumps (hprof-diff).
 */
#ifndef HPROF_PHD_HISTOGRAM_H
#define HPROF_PHD_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One type: its name as phd-read prints it (slash form "pkg/Node", arrays as descriptors
 * "[I", "[Ljava/lang/String;"), the objects counted under it and their bytes (instances at
 * their class's instance size, arrays at their own). */
struct phd_class_count {
    char *name;
    uint64_t count, bytes;
};

/* True if the n bytes at p start a PHD file ("portable heap dump"). */
bool phd_looks_like(const unsigned char *p, size_t n);

/* Read path strictly (every check of phd-read, nothing printed) and return its histogram,
 * largest bytes first. 0 ok; -1 with one message in err (unreadable, not a PHD file, or the
 * number of violations phd-read would report). */
int phd_histogram(const char *path, struct phd_class_count **rows, size_t *nrows, char *err,
                  size_t errlen);
void phd_histogram_free(struct phd_class_count *rows, size_t nrows);

#endif

/*
 * diff_retained: hprof-diff's comparison of retained sizes between two HPROF heap dumps
 * (doc/heap-analysis.md, "Comparing two dumps"). Each dump is analysed in turn (tools/analyze/)
 * and its dominator tree summarised by holder keys: the chain of class names from the GC roots
 * down the dominator tree (a class object is "class X"), siblings of one class under one key
 * added together, so the keys match between two runs whatever the object ids. A key whose
 * retained size grew past the thresholds is flagged; the verdict is the deepest single object
 * of a flagged chain (the accumulation point) with its holder (the class and static field, or
 * the root, above it), the growth in bytes, the path from the GC roots and what accumulates.
 */
#ifndef DIFF_RETAINED_H
#define DIFF_RETAINED_H

#include <stddef.h>
#include <stdio.h>

struct diff_retained;

struct diff_retained_opts {
    double growth;    /* relative growth of a key's retained size that flags it (0.10) */
    double min_share; /* and absolute growth, as a share of the new reachable heap (0.01) */
};

/* Analyse both dumps (nth: 1-based, 0 = last) and judge. NULL with a message in err when a
 * dump cannot be read. */
struct diff_retained *diff_retained_run(const char *base, const char *nw, unsigned base_nth,
                                        unsigned new_nth, const struct diff_retained_opts *o,
                                        char *err, size_t errlen);
/* Leak verdicts found (each is a regression). */
size_t diff_retained_verdicts(const struct diff_retained *d);
void diff_retained_write_text(FILE *o, const struct diff_retained *d);
void diff_retained_write_markdown(FILE *o, const struct diff_retained *d);
/* The same as one JSON object (hprof-diff's "retained" key, doc/heap-analysis.md). */
void diff_retained_write_json(FILE *o, const struct diff_retained *d);
void diff_retained_free(struct diff_retained *d);

#endif

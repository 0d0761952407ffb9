/*
 * convert.h: one section of a loaded profile (profile.h) as stacks, written as collapsed
 * stacks, an HTML flame graph (tools/flame/) or pprof. Used by hprof-convert.
 *
 * A row's stack is its trace's frames root first, then, for SITES and MONITOR TIME, the
 * allocated class or the monitor's class as the leaf. CPU TIME BY METHOD rows (cpu=old)
 * have no trace: their stack is the one method. A row without a known trace, or with the
 * empty trace, has the one frame "[no stack]".
 */
#ifndef HPROF_CONVERT_H
#define HPROF_CONVERT_H

#include "flame.h"
#include "profile.h"

#include <stdbool.h>
#include <stdio.h>

struct conv {
    const struct hprof_profile *p;
    const struct hprof_section *s;
    bool lines;         /* frame names with "(File.java:12)" (collapsed, HTML) */
    char **frame_names; /* per profile frame, "java.util.HashMap.put" [+ line] */
    enum flame_kind *frame_kinds;
};

/* 0, or -1 on out of memory */
int conv_init(struct conv *c, const struct hprof_profile *p, const struct hprof_section *s,
              bool lines);
void conv_free(struct conv *c);

/* The stack of row r, root first, in names[]/kinds[] (room for conv_max_depth(c) entries).
 * Returns its length (>= 1). */
size_t conv_max_depth(const struct conv *c);
size_t conv_stack(const struct conv *c, const struct hprof_row *r, const char **names,
                  enum flame_kind *kinds);

/* The part of the header's total (measure 0) that no row holds: rows left out by the agent's
 * cutoff, and cpu=old's methods of under 1 ms. Written as one more stack, the frame
 * CONV_REST, so every output adds up to the header's total. */
#define CONV_REST "[in no row: cutoff or under 1 ms]"
uint64_t conv_rest(const struct conv *c);

/* "frame;frame;leaf value" per row whose measure m is not 0, in the section's row order.
 * 0, or -1 on a write error or out of memory; *sum = the sum of the values written. */
int conv_collapsed(const struct conv *c, unsigned m, FILE *out, uint64_t *sum);

/* The merged tree of measure m (one value per node); NULL on out of memory. */
struct flame_tree *conv_tree(const struct conv *c, unsigned m);

/* pprof (profile.proto, gzipped): one sample per row, one sample type per measure, one
 * location per frame with its line where known. 0, or -1 (errno set). */
int conv_pprof(const struct conv *c, const char *comment, FILE *out);

/* pprof's (type, unit) of measure m of kind k */
void conv_pprof_type(enum hprof_section_kind k, unsigned m, const char **type, const char **unit);

#endif

/*
 * flame.h: a tree of stack frames with one or two values per node, written as a
 * self-contained interactive HTML flame graph (inline script and style, no network).
 *
 * Build the tree by walking each stack from its root: node = flame_child(t, node, name, kind)
 * for every frame, then flame_add(t, leaf, values) once per stack (the values count for the
 * leaf and all its ancestors). flame_write_html() merges nothing more: each distinct path is one
 * node, siblings are drawn in name order.
 *
 * One value per node: a plain flame graph (width = value). Two values per node (before, after):
 * a differential graph, width = after, colour = how the node's share changed (red: grew, blue:
 * shrank); tooltips show both. Used by hprof-convert (tools/hprof_convert.c) and by
 * hprof-diff (tools/diff/diff_report.c). C11, no dependency.
 */
#ifndef HPROF_FLAME_H
#define HPROF_FLAME_H

#include <stdint.h>
#include <stdio.h>

enum flame_kind {
    FLAME_OTHER, /* grey: synthetic frames ("[no stack]") */
    FLAME_JDK,   /* java.*, javax.*, jdk.*, sun.*, com.sun.* */
    FLAME_APP,   /* any other Java frame */
    FLAME_LEAF,  /* not a frame: the allocated class (heap=sites), the monitor's class */
    FLAME_NKINDS
};

#define FLAME_ROOT 0u         /* the root node ("all"), present in every tree */
#define FLAME_NONE UINT32_MAX /* returned on out of memory */

struct flame_tree;

/* nvalues = 1 or 2. NULL on out of memory or a bad nvalues. */
struct flame_tree *flame_tree_new(unsigned nvalues);
void flame_tree_free(struct flame_tree *t);

/* The child of parent named name (copied) with this kind, added if new. A child is known by
 * its name and kind. FLAME_NONE on out of memory. */
uint32_t flame_child(struct flame_tree *t, uint32_t parent, const char *name, enum flame_kind kind);

/* Adds v[0..nvalues-1] to node and every ancestor up to the root. */
void flame_add(struct flame_tree *t, uint32_t node, const uint64_t *v);

/* The kind of a Java frame from its class name (dots): FLAME_JDK or FLAME_APP. */
enum flame_kind flame_kind_of_class(const char *class_name);

size_t flame_nodes(const struct flame_tree *t);
/* node's value i (the sum over the stacks through it) */
uint64_t flame_value(const struct flame_tree *t, uint32_t node, unsigned i);

struct flame_html_info {
    const char *title;         /* the page's heading: what was measured ("CPU SAMPLES: samples") */
    const char *subtitle;      /* one line: options, file, totals; may be NULL */
    const char *unit;          /* the values' unit for the tooltip ("samples", "ms", "bytes") */
    const char *value_name[2]; /* names of the two values of a differential graph ("before",
                                  "after"); NULL for a plain one */
};

/* Writes the page. Returns 0, or -1 when out of memory or when writing failed (errno set). */
int flame_write_html(const struct flame_tree *t, const struct flame_html_info *info, FILE *out);

#endif

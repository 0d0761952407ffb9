/*
 * heap_walk: the sub-record walker the graph passes share (internal to tools/analyze/), and
 * the class table built by the first pass (heap_classes.c).
 */
#ifndef HEAP_WALK_H
#define HEAP_WALK_H

#include "heap_graph.h"

#include <stdio.h>

enum { PASS_IDS = 1, PASS_COUNT = 2, PASS_FILL = 3, PASS_FIND = 4 };

struct walk {
    struct heap_graph *g;
    int pass;
    char err[256];
    /* pass 1 */
    uint64_t *ids;
    size_t nids, cap;
    size_t roots_cap;
    /* pass 2 and 3 */
    uint64_t dangling, weak;
    uint64_t last_cid; /* the class of the last instance (instances come in runs) */
    uint32_t last_ci;
    /* PASS_FIND: sorted ids wanted, their record offsets */
    const uint64_t *want;
    size_t nwant;
    uint64_t *found;
    void (*each)(void *ctx, uint64_t rec); /* PASS_FIND: every object record instead */
    void *each_ctx;
};

/* Walk the sub-records of one dump range; -1 with w->err set on bad input or no memory. */
int heap_walk_range(struct walk *w, const struct mdump_range *r);

/* Class table (heap_classes.c) */
int heap_classes_add(struct walk *w, const uint8_t *body, uint64_t body_off, const uint8_t *end);
int heap_classes_resolve(struct heap_graph *g, char *err, size_t errlen);
uint32_t heap_classes_find(const struct heap_graph *g, uint64_t id);
void heap_classes_free(struct heap_graph *g);
/* "java/util/HashMap$Node" -> "java.util.HashMap$Node", "[[I" -> "int[][]": malloc'ed */
char *heap_classes_java_name(const char *s, uint32_t len);
/* A class with no CLASS DUMP ("int[]", "java.lang.Class"), appended; -1 out of memory. */
int heap_classes_add_pseudo(struct heap_graph *g, const char *name, uint32_t *idx);

/* g->ids (ascending) become segments, the bucket index and ids32; ids is freed (heap_graph.c) */
int heap_graph_index_ids(struct heap_graph *g);
/* PHD (OpenJ9 portable heap dump) into the same graph, roots inferred (heap_graph_phd.c) */
int heap_graph_load_phd(struct heap_graph *g, const char *path, char *err, size_t errlen,
                        bool *bad_input);

#endif

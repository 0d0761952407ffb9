/*
 * heap_sites: live and retained bytes of a heap dump by allocation site (doc/heap-analysis.md,
 * "Allocation sites"). An INSTANCE, OBJECT ARRAY or PRIMITIVE ARRAY DUMP names the STACK TRACE
 * of the place that allocated it (this agent with heap=all; HotSpot names the empty trace for
 * every object). A site is a class together with a stack: traces that list the same frames
 * (the same stack seen from two threads) are one site. The per-object site index is kept only
 * when some object has a non-empty trace: 4 bytes per node then, nothing otherwise.
 */
#ifndef HEAP_SITES_H
#define HEAP_SITES_H

#include "heap_analysis.h"

struct hs_trace {
    uint32_t serial;
    uint32_t nframes;
    uint32_t canon;      /* index of the first trace with the same frames */
    uint64_t frames_off; /* its frame ids in the mapping */
};

struct hs_site {
    uint32_t trace;                    /* canonical trace index */
    uint32_t cls;                      /* class index */
    uint64_t count, shallow, retained; /* reachable objects only */
};

struct heap_sites {
    struct hs_trace *traces; /* sorted by serial */
    size_t ntraces;
    uint64_t *frames; /* pairs (frame id, body offset), sorted by id */
    size_t nframes;
    uint64_t *lclass; /* pairs (class serial, name string id), sorted by serial */
    size_t nlclass;
    uint32_t *site;    /* per node: site index (0: none); NULL when no object has a site */
    struct hs_site *s; /* s[1..ns): s[0] is "no site" */
    uint32_t ns;
    uint64_t with, without; /* instances and arrays of the dump with a non-empty trace, without */
};

/* Read the dump's traces and every object's trace (one walk), then count and sum the
 * reachable objects per site and their retained sizes (no object counted twice within a
 * site). Returns 0, or -1 out of memory or on a walk error. */
int heap_sites_build(struct heap_sites *s, const struct heap_analysis *a);
void heap_sites_free(struct heap_sites *s);

/* Site indexes 1..ns-1 by retained bytes, biggest first, into out (room for ns); how many. */
uint32_t heap_sites_sorted(const struct heap_sites *s, uint32_t *out);

/* A trace's frames, top first, "pkg.Class.method(File.java:12) <- ..." (at most maxf frames,
 * "<- ..." if there are more), into buf. */
const char *heap_sites_stack(const struct heap_sites *s, const struct heap_graph *g, uint32_t trace,
                             unsigned maxf, char *buf, size_t len);

/* "java.util.ArrayList at LeakApp.main(LeakApp.java:42) <- ..." for site k, into buf. */
const char *heap_sites_name(const struct heap_sites *s, const struct heap_graph *g, uint32_t k,
                            unsigned maxf, char *buf, size_t len);

/* The site that allocated what node v accumulates: among v's children in the dominator tree,
 * the site whose objects retain the most together (v's own site if it has no child with a
 * site). Returns the site index (0: none) and its children's retained bytes and count. */
uint32_t heap_sites_below(const struct heap_sites *s, const struct heap_analysis *a, uint32_t v,
                          uint64_t *bytes, uint64_t *count);

#endif

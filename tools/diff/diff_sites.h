/*
 * diff_sites: hprof-diff's growth of live objects per allocation site between two heap dumps
 * (doc/heap-analysis.md, "Comparing two dumps"). A site is keyed by its class and stack text
 * (heap_sites_name), not by trace serial, so sites match between two runs of a program as well
 * as between two dumps of one file.
 */
#ifndef DIFF_SITES_H
#define DIFF_SITES_H

#include "heap_sites.h"

#include <stdbool.h>
#include <stdio.h>

struct diff_site {
    char *name;           /* "LeakApp$Entry at LeakApp.main(LeakApp.java:42) <- ..." */
    uint64_t nbase, nnow; /* live (reachable) objects */
    uint64_t bbase, bnow; /* their shallow bytes */
    uint64_t rbase, rnow; /* their retained bytes */
    uint64_t hash;
};

struct diff_sites {
    struct diff_site *s;
    size_t n, cap;
    uint32_t *index; /* open addressing over s by name hash: entry + 1, 0 empty */
    size_t icap;
    bool base_has, now_has; /* the dump had per-object traces */
};

/* Add one dump's sites (the base or the new dump). 0, or -1 out of memory. Hidden classes'
 * addresses in the names ("$Lambda$1.0x00007efd6c002800") are written "0x..". */
int diff_sites_add(struct diff_sites *d, const struct heap_sites *s, const struct heap_graph *g,
                   bool now);
/* The entry of a site name (heap_sites_name's, normalised here in place), NULL if none. */
const struct diff_site *diff_sites_find(const struct diff_sites *d, char *name);
/* Sort by growth of live bytes, biggest first (sites that shrank last). */
void diff_sites_sort(struct diff_sites *d);
/* Sites that grew in live objects: text lines, Markdown table, JSON array (at most top rows). */
void diff_sites_write_text(FILE *o, const struct diff_sites *d, size_t top);
void diff_sites_write_markdown(FILE *o, const struct diff_sites *d, size_t top);
void diff_sites_write_json(FILE *o, const struct diff_sites *d, size_t top);
void diff_sites_free(struct diff_sites *d);

/* A JSON string (shared with diff_retained.c's JSON). */
void diff_sites_json_str(FILE *o, const char *s);

#endif

/*
 * diff_retained.c: retained sizes of two heap dumps compared by holder key; leak verdicts at
 * the accumulation point. See diff_retained.h and doc/heap-analysis.md.
 */
#include "diff_retained.h"

#include "diff_sites.h"
#include "heap_analysis.h"
#include "heap_find.h"
#include "report_heap.h"
#include "report_sites.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 24 /* keys below this depth of the dominator tree are not kept */
#define MAX_VERDICTS 16
#define SITE_ROWS 20 /* sites listed by growth */

struct key {
    uint64_t hash, parent; /* 0: empty slot; parent 0 for the top level */
    uint64_t base, now;    /* retained bytes in the base and the new dump */
    uint64_t nbase, nnow;  /* objects under this key */
    uint32_t node;         /* the biggest object of the key in the new dump */
    uint16_t depth;
    bool flagged;
};

struct verdict {
    uint64_t growth, base, now;
    char *holder, *point, *path, *what, *site;
    uint64_t what_nbase, what_nnow;
    uint64_t site_nbase, site_nnow; /* live objects of the site in both dumps */
};

struct diff_retained {
    struct key *k;
    size_t cap, n;
    uint64_t base_total, new_total;
    struct verdict v[MAX_VERDICTS];
    size_t nv;
    struct diff_sites sites;
};

static uint64_t mix(uint64_t h, const char *s)
{
    h ^= 0x9E3779B97F4A7C15ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    h ^= h >> 29;
    return h ? h : 1;
}

static struct key *slot(struct diff_retained *d, uint64_t h)
{
    if (2 * (d->n + 1) > d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 1 << 14;
        struct key *nk = calloc(nc, sizeof *nk);
        if (!nk)
            return NULL;
        for (size_t i = 0; i < d->cap; i++)
            if (d->k[i].hash) {
                size_t j = d->k[i].hash & (nc - 1);
                while (nk[j].hash)
                    j = (j + 1) & (nc - 1);
                nk[j] = d->k[i];
            }
        free(d->k);
        d->k = nk;
        d->cap = nc;
    }
    size_t j = h & (d->cap - 1);
    while (d->k[j].hash && d->k[j].hash != h)
        j = (j + 1) & (d->cap - 1);
    if (!d->k[j].hash) {
        d->k[j].hash = h;
        d->k[j].node = HG_NONE;
        d->n++;
    }
    return &d->k[j];
}

static const char *label(const struct heap_graph *g, uint32_t v, char *buf, size_t len)
{
    if (v < g->first_obj)
        return v ? "<thread frames>" : "<GC roots>";
    if (g->cls[v] == g->class_class)
        return report_node_name(g, v, buf, len); /* "class X" */
    return g->cls[v] == HG_NONE ? "?" : g->classes[g->cls[v]].name;
}

/* Add the retained sizes of one dump's dominator tree by key (iterative DFS, depth-capped). */
static int collect(struct diff_retained *d, const struct heap_analysis *a, bool now)
{
    const struct heap_graph *g = a->g;
    uint32_t st[MAX_DEPTH + 1];
    uint64_t nx[MAX_DEPTH + 1];
    const uint32_t *off = a->tree.child_off;
    uint64_t kh[MAX_DEPTH + 1];
    int sp = 1;
    st[0] = 0;
    nx[0] = off[0];
    kh[0] = 0;
    while (sp) {
        uint32_t v = st[sp - 1];
        if (nx[sp - 1] >= off[v + 1]) {
            sp--;
            continue;
        }
        uint32_t c = a->tree.child[nx[sp - 1]++];
        char buf[512];
        uint64_t h = mix(kh[sp - 1] * 31 + (uint64_t)sp, label(g, c, buf, sizeof buf));
        struct key *k = slot(d, h);
        if (!k)
            return -1;
        k->parent = kh[sp - 1];
        k->depth = (uint16_t)sp;
        if (now) {
            k->now += heap_analysis_retained(a, c);
            k->nnow++;
            if (k->node == HG_NONE ||
                heap_analysis_retained(a, c) > heap_analysis_retained(a, k->node))
                k->node = c;
        } else {
            k->base += heap_analysis_retained(a, c);
            k->nbase++;
        }
        if (sp < MAX_DEPTH) {
            st[sp] = c;
            nx[sp] = off[c];
            kh[sp++] = h;
        }
    }
    return 0;
}

static char *xstrdup(const char *s)
{
    char *r = strdup(s);
    return r ? r : (char *)"";
}

/* The allocation site of what accumulates under the verdict's point (heap_sites_below) */
static void site_of(struct diff_retained *d, const struct heap_analysis *a,
                    const struct heap_sites *hs, struct verdict *v, uint32_t node)
{
    uint64_t bytes, count;
    uint32_t k = heap_sites_below(hs, a, node, &bytes, &count);
    char name[4096];
    v->site =
        xstrdup(k ? heap_sites_name(hs, a->g, k, REPORT_SITES_FRAMES, name, sizeof name) : "");
    const struct diff_site *e = k ? diff_sites_find(&d->sites, name) : NULL;
    v->site_nbase = e ? e->nbase : 0;
    v->site_nnow = e ? e->nnow : 0;
}

/* Holder, path and what accumulates for the verdict at key k (its node in the new dump). */
static void describe(struct diff_retained *d, const struct heap_analysis *a,
                     const struct heap_sites *hs, struct key *k)
{
    const struct heap_graph *g = a->g;
    struct verdict *v = &d->v[d->nv++];
    v->growth = k->now - k->base;
    v->base = k->base;
    v->now = k->now;
    char buf[4096], name[512], field[256];
    v->point = xstrdup(report_node_name(g, k->node, name, sizeof name));
    uint32_t *p = NULL;
    long len = heap_analysis_path(a, k->node, &p);
    uint64_t *recs = len > 0 ? calloc((size_t)len, sizeof *recs) : NULL;
    if (recs)
        heap_find_records(g, p, (size_t)len, recs);
    size_t off = 0;
    buf[0] = 0;
    v->holder = NULL;
    for (long i = 1; i < len && off < sizeof buf - 1; i++) {
        field[0] = 0;
        if (recs && i > 1 && p[i - 1] >= g->first_obj)
            heap_find_ref_name(g, recs[i - 1], p[i], field, sizeof field);
        /* the holder: the last class object on the path, with the static that leaves it */
        if (i > 1 && p[i - 1] >= g->first_obj && g->cls[p[i - 1]] == g->class_class) {
            char hb[800];
            snprintf(hb, sizeof hb, "%s.%s", report_node_name(g, p[i - 1], name, sizeof name),
                     strncmp(field, "static ", 7) ? field : field + 7);
            free(v->holder);
            v->holder = xstrdup(hb);
        }
        int w = snprintf(buf + off, sizeof buf - off, "%s%s%s%s", i > 1 ? " -> " : "",
                         field[0] ? "." : "", field, field[0] ? " -> " : "");
        off += w > 0 ? (size_t)w : 0;
        if (off < sizeof buf - 1) {
            w = snprintf(buf + off, sizeof buf - off, "%s",
                         report_node_name(g, p[i], name, sizeof name));
            off += w > 0 ? (size_t)w : 0;
        }
    }
    if (!v->holder)
        v->holder = xstrdup(len > 1 ? report_node_name(g, p[1], name, sizeof name) : "?");
    v->path = xstrdup(buf);
    free(p);
    free(recs);
    /* what accumulates: the child key that grew most */
    struct key *best = NULL;
    for (size_t i = 0; i < d->cap; i++) {
        struct key *c = &d->k[i];
        if (c->hash && c->parent == k->hash && c->depth == k->depth + 1 && c->now > c->base &&
            (!best || c->now - c->base > best->now - best->base))
            best = c;
    }
    v->what = xstrdup(best && best->node != HG_NONE ? label(g, best->node, name, sizeof name) : "");
    v->what_nbase = best ? best->nbase : 0;
    v->what_nnow = best ? best->nnow : 0;
    site_of(d, a, hs, v, k->node);
}

static bool grew(const struct key *k, const struct diff_retained_opts *o, uint64_t total)
{
    if (k->now <= k->base)
        return false;
    uint64_t g = k->now - k->base;
    return (double)g >= o->min_share * (double)total && (double)g >= o->growth * (double)k->base;
}

/* The verdicts: flagged keys of one object whose growth no flagged one-object child carries
 * mostly (80%): the deepest point of each growing chain. */
static void judge(struct diff_retained *d, const struct heap_analysis *a,
                  const struct heap_sites *hs, const struct diff_retained_opts *o)
{
    for (size_t i = 0; i < d->cap; i++)
        d->k[i].flagged = d->k[i].hash && grew(&d->k[i], o, d->new_total);
    for (size_t i = 0; i < d->cap; i++) {
        struct key *k = &d->k[i];
        if (!k->flagged || k->nnow != 1 || k->node == HG_NONE || k->node < a->g->first_obj)
            continue;
        bool deeper = false;
        for (size_t j = 0; j < d->cap && !deeper; j++) {
            const struct key *c = &d->k[j];
            deeper = c->flagged && c->nnow == 1 && c->parent == k->hash &&
                     c->depth == k->depth + 1 &&
                     (double)(c->now - c->base) >= 0.8 * (double)(k->now - k->base);
        }
        if (!deeper && d->nv < MAX_VERDICTS)
            describe(d, a, hs, k);
    }
}

static int analyse(const char *path, unsigned nth, struct heap_graph *g, struct heap_analysis *a,
                   char *err, size_t errlen)
{
    bool bad;
    char e[512];
    size_t which = nth == 0 ? SIZE_MAX : (size_t)nth - 1;
    if (heap_graph_load(g, path, which, 4, false, e, sizeof e, &bad) < 0) {
        snprintf(err, errlen, "%s: %s", path, e);
        heap_graph_free(g);
        return -1;
    }
    if (heap_analysis_run(a, g) < 0) {
        snprintf(err, errlen, "%s: out of memory computing dominators", path);
        heap_analysis_free(a);
        heap_graph_free(g);
        return -1;
    }
    return 0;
}

struct diff_retained *diff_retained_run(const char *base, const char *nw, unsigned base_nth,
                                        unsigned new_nth, const struct diff_retained_opts *o,
                                        char *err, size_t errlen)
{
    struct diff_retained *d = calloc(1, sizeof *d);
    struct heap_graph g;
    struct heap_analysis a;
    if (!d || analyse(base, base_nth, &g, &a, err, errlen) < 0) {
        free(d);
        return NULL;
    }
    struct heap_sites hs = {0};
    int rc = collect(d, &a, false);
    if (!rc)
        rc =
            heap_sites_build(&hs, &a) < 0 || diff_sites_add(&d->sites, &hs, &g, false) < 0 ? -1 : 0;
    heap_sites_free(&hs);
    d->base_total = a.reachable_bytes;
    heap_analysis_free(&a);
    heap_graph_free(&g);
    if (rc < 0 || analyse(nw, new_nth, &g, &a, err, errlen) < 0) {
        if (rc < 0)
            snprintf(err, errlen, "out of memory comparing retained sizes");
        diff_retained_free(d);
        return NULL;
    }
    d->new_total = a.reachable_bytes;
    if (collect(d, &a, true) < 0 || heap_sites_build(&hs, &a) < 0 ||
        diff_sites_add(&d->sites, &hs, &g, true) < 0) {
        snprintf(err, errlen, "out of memory comparing retained sizes");
        diff_retained_free(d);
        d = NULL;
    } else {
        judge(d, &a, &hs, o);
        diff_sites_sort(&d->sites);
    }
    heap_sites_free(&hs);
    heap_analysis_free(&a);
    heap_graph_free(&g);
    return d;
}

size_t diff_retained_verdicts(const struct diff_retained *d)
{
    return d->nv;
}

void diff_retained_write_text(FILE *o, const struct diff_retained *d)
{
    fprintf(o,
            "\nRetained sizes (heap dumps): reachable %" PRIu64 " -> %" PRIu64
            " bytes, %zu leak verdict(s)\n",
            d->base_total, d->new_total, d->nv);
    for (size_t i = 0; i < d->nv; i++) {
        const struct verdict *v = &d->v[i];
        fprintf(o,
                "  LEAK +%" PRIu64 " bytes retained under %s (%" PRIu64 " -> %" PRIu64
                "), held by %s\n    accumulates: %s (%" PRIu64 " -> %" PRIu64
                " objects)\n    path: %s\n",
                v->growth, v->point, v->base, v->now, v->holder, v->what, v->what_nbase,
                v->what_nnow, v->path);
        if (*v->site)
            fprintf(o, "    allocated at: %s (%" PRIu64 " -> %" PRIu64 " objects)\n", v->site,
                    v->site_nbase, v->site_nnow);
    }
    diff_sites_write_text(o, &d->sites, SITE_ROWS);
}

void diff_retained_write_markdown(FILE *o, const struct diff_retained *d)
{
    fprintf(o,
            "\n## Retained sizes (heap dumps)\n\n| growth_bytes | accumulation point | holder | "
            "accumulates | allocated at | path |\n| ---: | :--- | :--- | :--- | :--- | :--- |\n");
    for (size_t i = 0; i < d->nv; i++) {
        const struct verdict *v = &d->v[i];
        fprintf(o,
                "| %" PRIu64 " | %s | %s | %s (%" PRIu64 " -> %" PRIu64 ") | %s (%" PRIu64
                " -> %" PRIu64 ") | %s |\n",
                v->growth, v->point, v->holder, v->what, v->what_nbase, v->what_nnow, v->site,
                v->site_nbase, v->site_nnow, v->path);
    }
    diff_sites_write_markdown(o, &d->sites, SITE_ROWS);
}

void diff_retained_write_json(FILE *o, const struct diff_retained *d)
{
    fprintf(o,
            "{\"base_reachable_bytes\":%" PRIu64 ",\"new_reachable_bytes\":%" PRIu64
            ",\"verdicts\":[",
            d->base_total, d->new_total);
    for (size_t i = 0; i < d->nv; i++) {
        const struct verdict *v = &d->v[i];
        fprintf(o,
                "%s{\"growth_bytes\":%" PRIu64 ",\"base_bytes\":%" PRIu64 ",\"new_bytes\":%" PRIu64
                ",\"accumulation_point\":",
                i ? "," : "", v->growth, v->base, v->now);
        diff_sites_json_str(o, v->point);
        fputs(",\"holder\":", o);
        diff_sites_json_str(o, v->holder);
        fputs(",\"accumulates\":", o);
        diff_sites_json_str(o, v->what);
        fprintf(o,
                ",\"accumulates_base_objects\":%" PRIu64 ",\"accumulates_new_objects\":%" PRIu64
                ",\"allocated_at\":",
                v->what_nbase, v->what_nnow);
        diff_sites_json_str(o, v->site);
        fprintf(o, ",\"site_base_objects\":%" PRIu64 ",\"site_new_objects\":%" PRIu64 ",\"path\":",
                v->site_nbase, v->site_nnow);
        diff_sites_json_str(o, v->path);
        fputc('}', o);
    }
    fputs("],\"sites\":", o);
    diff_sites_write_json(o, &d->sites, SITE_ROWS);
    fputc('}', o);
}

void diff_retained_free(struct diff_retained *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nv; i++) {
        struct verdict *v = &d->v[i];
        char *s[] = {v->holder, v->point, v->path, v->what, v->site};
        for (int j = 0; j < 5; j++)
            if (s[j] && *s[j])
                free(s[j]);
    }
    diff_sites_free(&d->sites);
    free(d->k);
    free(d);
}

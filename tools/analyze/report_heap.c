/*
 * report_heap.c: the sections of hprof-analyze's report. See report_heap.h and
 * doc/heap-analysis.md.
 */
#include "report_heap.h"

#include "heap_find.h"
#include "report_sites.h"
#include "report_waste.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NUM(buf, v) (snprintf((buf), sizeof(buf), "%" PRIu64, (uint64_t)(v)), (buf))

const char *report_node_name(const struct heap_graph *g, uint32_t node, char *buf, size_t len)
{
    if (node == 0)
        snprintf(buf, len, "<GC roots>");
    else if (node < g->first_obj)
        snprintf(buf, len, "<thread %u frames>", g->threads[node - 1].serial);
    else if (g->cls[node] == g->class_class && g->cls[node] != HG_NONE) {
        uint32_t ci = heap_classes_find(g, heap_graph_id(g, node));
        snprintf(buf, len, "class %s", ci == HG_NONE ? "?" : g->classes[ci].name);
    } else
        snprintf(buf, len, "%s@0x%" PRIx64,
                 g->cls[node] == HG_NONE ? "?" : g->classes[g->cls[node]].name,
                 heap_graph_id(g, node));
    return buf;
}

static double share(const struct heap_analysis *a, uint64_t v)
{
    return a->reachable_bytes ? 100.0 * (double)v / (double)a->reachable_bytes : 0;
}

static void summary(const struct heap_analysis *a, const struct report_opts *o, struct rout *out,
                    const struct heap_sites *sites)
{
    const struct heap_graph *g = a->g;
    rout_kv_begin(out, "summary", "Heap dump");
    rout_kv_str(out, "file", o->file);
    rout_kv_num(out, "dump", g->m.which + 1);
    rout_kv_num(out, "dumps_in_file", g->m.ndumps);
    rout_kv_num(out, "id_size", g->m.idsize);
    rout_kv_num(out, "oop_size", g->oop_size);
    rout_kv_num(out, "objects", g->nobjects);
    rout_kv_num(out, "references", g->object_refs);
    rout_kv_num(out, "dangling_references", g->dangling);
    rout_kv_num(out, "gc_roots", g->nroots);
    rout_kv_num(out, "threads", g->nthreads);
    rout_kv_num(out, "classes", g->ndumped);
    rout_kv_num(out, "reference_objects", g->weak_skipped);
    rout_kv_num(out, "reachable_objects", a->reachable_objects);
    rout_kv_num(out, "reachable_bytes", a->reachable_bytes);
    rout_kv_num(out, "unreachable_objects", a->unreachable_objects);
    rout_kv_num(out, "unreachable_bytes", a->unreachable_bytes);
    if (sites)
        report_sites_summary(sites, out);
    rout_section_end(out);
}

static int cmp_class_ret(const void *x, const void *y, const struct heap_analysis *a)
{
    const struct class_total *p = &a->classes[*(const uint32_t *)x],
                             *q = &a->classes[*(const uint32_t *)y];
    if (p->retained != q->retained)
        return p->retained < q->retained ? 1 : -1;
    return p->shallow < q->shallow ? 1 : p->shallow > q->shallow ? -1 : 0;
}
static const struct heap_analysis *cmp_a;
static int cmp_class_qs(const void *x, const void *y)
{
    return cmp_class_ret(x, y, cmp_a);
}

uint32_t report_classes_by_retained(const struct heap_analysis *a, uint32_t *v)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->g->nclasses; i++)
        if (a->classes[i].count)
            v[n++] = i;
    cmp_a = a;
    if (n)
        qsort(v, n, sizeof *v, cmp_class_qs);
    return n;
}

static void classes(const struct heap_analysis *a, const struct report_opts *o, struct rout *out,
                    const uint32_t *ci, uint32_t nci)
{
    static const struct rout_col cols[] = {{"instances", 'n', 11},
                                           {"shallow_bytes", 'n', 14},
                                           {"retained_bytes", 'n', 14},
                                           {"retained_pct", 'n', 12},
                                           {"class", 's', 0}};
    rout_table_begin(out, "classes", "Classes by retained size", cols, 5);
    for (uint32_t i = 0; i < nci && i < o->top; i++) {
        const struct class_total *t = &a->classes[ci[i]];
        char n1[24], n2[24], n3[24], pct[16];
        snprintf(pct, sizeof pct, "%.2f", share(a, t->retained));
        const char *cells[] = {NUM(n1, t->count), NUM(n2, t->shallow), NUM(n3, t->retained), pct,
                               a->g->classes[ci[i]].name};
        rout_row(out, cells);
    }
    rout_section_end(out);
}

static void objects(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    static const struct rout_col cols[] = {{"id", 's', 18},
                                           {"shallow_bytes", 'n', 14},
                                           {"retained_bytes", 'n', 14},
                                           {"retained_pct", 'n', 12},
                                           {"object", 's', 0}};
    uint32_t *top = malloc((o->top + 1) * sizeof *top);
    if (!top)
        return;
    size_t n = heap_analysis_top_objects(a, o->top, top);
    rout_table_begin(out, "objects", "Objects by retained size", cols, 5);
    for (size_t i = 0; i < n; i++) {
        char id[24], n1[24], n2[24], pct[16], name[512];
        snprintf(pct, sizeof pct, "%.2f", share(a, heap_analysis_retained(a, top[i])));
        snprintf(id, sizeof id, "0x%" PRIx64, heap_graph_id(a->g, top[i]));
        const char *cells[] = {id, NUM(n1, heap_analysis_shallow(a, top[i])),
                               NUM(n2, heap_analysis_retained(a, top[i])), pct,
                               report_node_name(a->g, top[i], name, sizeof name)};
        rout_row(out, cells);
    }
    rout_section_end(out);
    free(top);
}

/* The dominator tree, depth-first, biggest children first, o->fanout per node. */
static void tree(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    static const struct rout_col cols[] = {{"depth", 'n', 5},
                                           {"shallow_bytes", 'n', 14},
                                           {"retained_bytes", 'n', 14},
                                           {"retained_pct", 'n', 12},
                                           {"object", 's', 0}};
    rout_table_begin(out, "dominator_tree", "Dominator tree", cols, 5);
    uint32_t st_node[64], st_next[64];
    unsigned sp = 0, maxd = o->depth < 64 ? o->depth : 64;
    st_node[0] = 0;
    st_next[0] = 0;
    sp = 1;
    while (sp) {
        uint32_t v = st_node[sp - 1], k = st_next[sp - 1]++;
        const uint32_t *kids;
        uint32_t nk = domtree_children(&a->tree, v, &kids);
        if (sp > maxd || k >= nk || k >= o->fanout) {
            sp--;
            continue;
        }
        uint32_t c = kids[k];
        char d[8], n1[24], n2[24], pct[16], name[512], ind[600];
        snprintf(d, sizeof d, "%u", sp);
        snprintf(pct, sizeof pct, "%.2f", share(a, heap_analysis_retained(a, c)));
        snprintf(ind, sizeof ind, "%*s%s", out->fmt == ROUT_JSON ? 0 : 2 * (int)(sp - 1), "",
                 report_node_name(a->g, c, name, sizeof name));
        const char *cells[] = {d, NUM(n1, heap_analysis_shallow(a, c)),
                               NUM(n2, heap_analysis_retained(a, c)), pct, ind};
        rout_row(out, cells);
        st_node[sp] = c;
        st_next[sp++] = 0;
    }
    rout_section_end(out);
}

/* "class Foo .static items -> java.util.ArrayList@0x.. .elementData -> ..." */
static void path_text(const struct heap_graph *g, const uint32_t *p, long len,
                      const uint32_t *nodes, const uint64_t *recs, size_t nrec, char *buf,
                      size_t blen)
{
    size_t k = 0;
    buf[0] = 0;
    for (long i = 1; i < len && k + 8 < blen; i++) {
        char name[512], field[256] = "";
        if (i > 1 && p[i - 1] >= g->first_obj) {
            uint64_t rec = 0;
            for (size_t j = 0; j < nrec; j++)
                if (nodes[j] == p[i - 1])
                    rec = recs[j];
            heap_find_ref_name(g, rec, p[i], field, sizeof field);
        }
        int w = snprintf(buf + k, blen - k, "%s%s%s%s", i > 1 ? " -> " : "", field[0] ? "." : "",
                         field, field[0] ? " -> " : "");
        k += w > 0 ? (size_t)w : 0;
        if (k >= blen)
            break;
        w = snprintf(buf + k, blen - k, "%s", report_node_name(g, p[i], name, sizeof name));
        k += w > 0 ? (size_t)w : 0;
    }
    if (k >= blen)
        buf[blen - 1] = 0;
}

struct suspect {
    uint32_t node, accum;
    uint32_t *path;
    long plen;
    uint32_t cls; /* class suspects: the class; HG_NONE for an object suspect */
};

static bool dominated_by_any(const struct heap_analysis *a, uint32_t v, const uint32_t *cand,
                             size_t n)
{
    unsigned steps = 0;
    for (uint32_t u = a->idom[v]; u != 0 && u != HG_NONE && steps < 100000; u = a->idom[u]) {
        for (size_t i = 0; i < n; i++)
            if (cand[i] == u)
                return true;
        steps++;
    }
    return false;
}

static int suspects(const struct heap_analysis *a, const struct report_opts *o, struct rout *out,
                    const uint32_t *ci, uint32_t nci, const struct heap_sites *sites)
{
    const struct heap_graph *g = a->g;
    enum { MAXS = 32 };
    uint32_t top[MAXS];
    struct suspect s[2 * MAXS];
    size_t ns = 0, nt = heap_analysis_top_objects(a, MAXS, top);
    uint64_t limit = (uint64_t)(o->suspect * (double)a->reachable_bytes);
    size_t nbig = 0;
    while (nbig < nt && heap_analysis_retained(a, top[nbig]) >= limit &&
           heap_analysis_retained(a, top[nbig]))
        nbig++;
    for (size_t i = 0; i < nbig; i++)
        if (!dominated_by_any(a, top[i], top, nbig))
            s[ns++] = (struct suspect){top[i], 0, NULL, 0, HG_NONE};
    /* classes whose many instances retain much, none of them alone (that is an object
     * suspect); class objects as a whole say nothing */
    for (uint32_t i = 0; i < nci && ns < 2 * MAXS; i++) {
        if (a->classes[ci[i]].retained < limit || !a->classes[ci[i]].retained)
            break;
        if (ci[i] == g->class_class || a->classes[ci[i]].count < 2)
            continue;
        /* its biggest instance leads to the accumulation point */
        uint32_t best = HG_NONE;
        for (uint32_t v = g->first_obj; v < g->n; v++)
            if (g->cls[v] == ci[i] && a->idom[v] != HG_NONE &&
                (best == HG_NONE || heap_analysis_retained(a, v) > heap_analysis_retained(a, best)))
                best = v;
        bool dup = false;
        for (size_t k = 0; k < ns; k++)
            dup |= s[k].node == best;
        if (best != HG_NONE && !dup && heap_analysis_retained(a, best) < limit)
            s[ns++] = (struct suspect){best, 0, NULL, 0, ci[i]};
    }
    size_t nn = 0;
    for (size_t i = 0; i < ns; i++) {
        s[i].accum = domtree_accumulation_point(&a->tree, a->retained, s[i].node, o->accumulation);
        s[i].plen = heap_analysis_path(a, s[i].accum, &s[i].path);
        if (s[i].plen < 0)
            return -1;
        nn += (size_t)s[i].plen;
    }
    uint32_t *nodes = malloc((nn + 1) * sizeof *nodes);
    uint64_t *recs = malloc((nn + 1) * sizeof *recs);
    int rc = -1;
    if (!nodes || !recs)
        goto out;
    nn = 0;
    for (size_t i = 0; i < ns; i++)
        for (long k = 0; k < s[i].plen; k++)
            if (s[i].path[k] >= g->first_obj)
                nodes[nn++] = s[i].path[k];
    if (nn && heap_find_records(g, nodes, nn, recs) < 0)
        goto out;
    static const struct rout_col cols[] = {{"kind", 's', 6},
                                           {"retained_bytes", 'n', 14},
                                           {"retained_pct", 'n', 12},
                                           {"suspect", 's', 40},
                                           {"instances", 'n', 10},
                                           {"accumulation_point", 's', 40},
                                           {"accumulated_bytes", 'n', 14},
                                           {"allocated_at", 's', 30},
                                           {"accumulated_site", 's', 30},
                                           {"accumulated_site_bytes", 'n', 14},
                                           {"path", 's', 0}};
    rout_table_begin(out, "suspects", "Leak suspects", cols, 11);
    for (size_t i = 0; i < ns; i++) {
        char n1[24], n2[24], n3[24], pct[16], what[512], acc[512], path[4096];
        uint64_t ret = s[i].cls == HG_NONE ? heap_analysis_retained(a, s[i].node)
                                           : a->classes[s[i].cls].retained;
        snprintf(pct, sizeof pct, "%.2f", share(a, ret));
        if (s[i].cls == HG_NONE)
            report_node_name(g, s[i].node, what, sizeof what);
        else
            snprintf(what, sizeof what, "%s", g->classes[s[i].cls].name);
        path_text(g, s[i].path, s[i].plen, nodes, recs, nn, path, sizeof path);
        /* where the accumulation point was allocated, and where what it holds was */
        char own[4096] = "", below[4096] = "", n4[24];
        uint64_t bbytes = 0, bcount = 0;
        if (sites && sites->site) {
            if (sites->site[s[i].accum])
                heap_sites_name(sites, g, sites->site[s[i].accum], REPORT_SITES_FRAMES, own,
                                sizeof own);
            uint32_t k = heap_sites_below(sites, a, s[i].accum, &bbytes, &bcount);
            if (k)
                heap_sites_name(sites, g, k, REPORT_SITES_FRAMES, below, sizeof below);
        }
        const char *cells[] = {s[i].cls == HG_NONE ? "object" : "class",
                               NUM(n1, ret),
                               pct,
                               what,
                               NUM(n3, s[i].cls == HG_NONE ? 1 : a->classes[s[i].cls].count),
                               report_node_name(g, s[i].accum, acc, sizeof acc),
                               NUM(n2, heap_analysis_retained(a, s[i].accum)),
                               own,
                               below,
                               NUM(n4, bbytes),
                               path};
        rout_row(out, cells);
    }
    rout_section_end(out);
    rc = 0;
out:
    for (size_t i = 0; i < ns; i++)
        free(s[i].path);
    free(nodes);
    free(recs);
    return rc;
}

/* Per thread: the bytes only its stack frames keep alive (its virtual node's retained size). */
static int threads(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    const struct heap_graph *g = a->g;
    uint32_t nt = g->nthreads;
    uint32_t *nodes = malloc((nt + 1) * sizeof *nodes);
    uint64_t *recs = calloc(nt + 1, sizeof *recs), *srec = calloc(nt + 1, sizeof *srec);
    uint64_t *arec = calloc(nt + 1, sizeof *arec);
    int rc = -1;
    if (!nodes || !recs || !srec || !arec)
        goto out;
    /* thread object -> its name String -> the String's value array: three batched lookups */
    uint32_t k = 0;
    for (uint32_t t = 0; t < nt; t++)
        if (g->threads[t].object != HG_NONE)
            nodes[k++] = g->threads[t].object;
    if (k && heap_find_records(g, nodes, k, recs) < 0)
        goto out;
    for (int step = 0; step < 2 && k; step++) {
        uint64_t *from = step ? srec : recs, *to = step ? arec : srec;
        for (uint32_t i = 0; i < k; i++) {
            uint64_t v = 0;
            heap_find_field(g, from[i], step ? "value" : "name", &v);
            uint32_t nd = heap_graph_node(g, v);
            nodes[i] = nd == HG_NONE ? 0 : nd;
        }
        if (heap_find_records(g, nodes, k, to) < 0)
            goto out;
    }
    static const struct rout_col cols[] = {{"serial", 'n', 7},
                                           {"frames_retained_bytes", 'n', 21},
                                           {"thread_retained_bytes", 'n', 21},
                                           {"name", 's', 0}};
    rout_table_begin(out, "threads", "Threads: memory kept alive by their stack frames", cols, 4);
    k = 0;
    for (uint32_t t = 0; t < nt && t < o->top; t++) {
        char n0[24], n1[24], n2[24], name[256] = "";
        uint32_t obj = g->threads[t].object;
        if (obj != HG_NONE) {
            heap_find_string(g, srec[k], arec[k], name, sizeof name);
            k++;
        }
        const char *cells[] = {
            NUM(n0, g->threads[t].serial), NUM(n1, heap_analysis_retained(a, 1 + t)),
            NUM(n2, obj == HG_NONE || a->idom[obj] == HG_NONE ? 0 : heap_analysis_retained(a, obj)),
            name};
        rout_row(out, cells);
    }
    rout_section_end(out);
    rc = 0;
out:
    free(nodes);
    free(recs);
    free(srec);
    free(arec);
    return rc;
}

static int path_to(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    const struct heap_graph *g = a->g;
    uint32_t target = HG_NONE;
    if (!strncmp(o->path_to, "0x", 2)) {
        target = heap_graph_node(g, strtoull(o->path_to + 2, NULL, 16));
    } else {
        for (uint32_t ci = 0; ci < g->nclasses; ci++)
            if (!strcmp(g->classes[ci].name, o->path_to))
                for (uint32_t v = g->first_obj; v < g->n; v++)
                    if (g->cls[v] == ci && a->idom[v] != HG_NONE &&
                        (target == HG_NONE ||
                         heap_analysis_retained(a, v) > heap_analysis_retained(a, target)))
                        target = v;
    }
    if (target == HG_NONE)
        return -2;
    uint32_t *p = NULL;
    long len = heap_analysis_path(a, target, &p);
    if (len < 0)
        return -1;
    uint64_t *recs = calloc((size_t)len + 1, sizeof *recs);
    if (!recs || (len && heap_find_records(g, p, (size_t)len, recs) < 0)) {
        free(p);
        free(recs);
        return -1;
    }
    static const struct rout_col cols[] = {
        {"step", 'n', 4}, {"retained_bytes", 'n', 14}, {"via", 's', 24}, {"object", 's', 0}};
    rout_table_begin(out, "path", "Shortest path from the GC roots", cols, 4);
    for (long i = 1; i < len; i++) {
        char n0[24], n1[24], via[256] = "", name[512];
        if (i > 1 && p[i - 1] >= g->first_obj)
            heap_find_ref_name(g, recs[i - 1], p[i], via, sizeof via);
        else
            snprintf(via, sizeof via, "%s", i == 1 ? "GC root" : "stack frame");
        if (g->phd) /* PHD: roots inferred, references without field names */
            snprintf(via, sizeof via, "%s", i == 1 ? "inferred root" : "reference");
        const char *cells[] = {NUM(n0, i), NUM(n1, heap_analysis_retained(a, p[i])), via,
                               report_node_name(g, p[i], name, sizeof name)};
        rout_row(out, cells);
    }
    if (len == 0) {
        const char *cells[] = {"0", "0", "unreachable", o->path_to};
        rout_row(out, cells);
    }
    rout_section_end(out);
    free(p);
    free(recs);
    return 0;
}

int report_heap(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    uint32_t *ci = malloc(((size_t)a->g->nclasses + 1) * sizeof *ci);
    if (!ci)
        return -1;
    uint32_t nci = report_classes_by_retained(a, ci);
    struct heap_sites sites;
    bool with_sites = o->sites;
    if (with_sites && heap_sites_build(&sites, a) < 0) {
        heap_sites_free(&sites);
        free(ci);
        return -1;
    }
    summary(a, o, out, with_sites ? &sites : NULL);
    classes(a, o, out, ci, nci);
    int rc = with_sites ? report_sites(a, &sites, o, out) : 0;
    objects(a, o, out);
    if (o->depth)
        tree(a, o, out);
    if (!rc)
        rc = suspects(a, o, out, ci, nci, with_sites ? &sites : NULL);
    if (!rc)
        rc = threads(a, o, out);
    if (!rc && o->waste)
        rc = report_waste(a, o, out);
    if (!rc && o->path_to)
        rc = path_to(a, o, out);
    if (with_sites)
        heap_sites_free(&sites);
    free(ci);
    return rc;
}

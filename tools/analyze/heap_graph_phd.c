/*
 * heap_graph_phd.c: an OpenJ9 portable heap dump (PHD, read by tools/reader/phd_parse.c) into
 * the graph of heap_graph.h. PHD records no GC roots, no field names and no field values, so
 * the roots are inferred (doc/heap-analysis.md, "PHD dumps"): every class object, every object
 * no other object refers to, then one object of each cycle still unreached, in address order.
 */
#include "heap_walk.h"
#include "phd_parse.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Class indexes sorted by Java name, to find an array class by the name of its elements. */
static const struct heap_graph *name_graph;
static int cmp_name(const void *x, const void *y)
{
    return strcmp(name_graph->classes[*(const uint32_t *)x].name,
                  name_graph->classes[*(const uint32_t *)y].name);
}

struct phd_load {
    struct heap_graph *g;
    struct phd_file f;
    struct phd_index ix;
    uint32_t *by_name;  /* dumped class indexes by name */
    uint32_t *array_of; /* per dumped class: the class of arrays of it, HG_NONE until needed */
};

static uint32_t find_by_name(const struct phd_load *L, const char *name)
{
    size_t lo = 0, hi = L->g->ndumped;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(L->g->classes[L->by_name[mid]].name, name);
        if (!c)
            return L->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return HG_NONE;
}

/* The class of an object array whose element class is dumped class ec: the dumped array
 * class of that name if there is one, else a pseudo class. HG_NONE: out of memory. */
static uint32_t array_class(struct phd_load *L, uint32_t ec)
{
    struct heap_graph *g = L->g;
    if (L->array_of[ec] != HG_NONE)
        return L->array_of[ec];
    size_t n = strlen(g->classes[ec].name);
    char *name = malloc(n + 3);
    if (!name)
        return HG_NONE;
    memcpy(name, g->classes[ec].name, n);
    memcpy(name + n, "[]", 3);
    uint32_t k = find_by_name(L, name);
    if (k == HG_NONE && heap_classes_add_pseudo(g, name, &k) < 0)
        k = HG_NONE;
    free(name);
    return L->array_of[ec] = k;
}

/* The dumped classes, in address order (heap_classes_find's binary search), and the pseudo
 * classes of class objects and primitive arrays. */
static int load_classes(struct phd_load *L)
{
    struct heap_graph *g = L->g;
    const struct phd_file *f = &L->f;
    for (size_t k = 0; k < L->ix.n; k++) {
        const struct phd_rec *r = &f->recs[L->ix.by_addr[k]];
        if (r->kind != PHD_K_CLASS)
            continue;
        if (heap_classes_add_pseudo(g, "", &(uint32_t){0}) < 0)
            return -1;
        struct hg_class *c = &g->classes[g->nclasses - 1];
        const char *s = phd_class_name(f, r);
        free(c->name);
        c->name = heap_classes_java_name(s, (uint32_t)strlen(s));
        if (!c->name)
            return -1;
        c->id = r->addr;
        c->super_id = r->cls;
        c->rec_off = r->off;
        c->node = g->first_obj + (uint32_t)k;
        c->shallow = (uint32_t)(r->size > UINT32_MAX - 7 ? UINT32_MAX - 7 : r->size);
    }
    g->ndumped = g->nclasses;
    L->by_name = malloc((g->ndumped + 1) * sizeof *L->by_name);
    L->array_of = malloc((g->ndumped + 1) * sizeof *L->array_of);
    if (!L->by_name || !L->array_of)
        return -1;
    for (uint32_t i = 0; i < g->ndumped; i++) {
        L->by_name[i] = i;
        L->array_of[i] = HG_NONE;
        struct hg_class *c = &g->classes[i];
        c->super = c->super_id ? heap_classes_find(g, c->super_id) : HG_NONE;
    }
    name_graph = g;
    qsort(L->by_name, g->ndumped, sizeof *L->by_name, cmp_name);
    uint32_t cc = find_by_name(L, "java.lang.Class");
    if (cc != HG_NONE)
        g->class_class = cc;
    else if (heap_classes_add_pseudo(g, "java.lang.Class", &g->class_class) < 0)
        return -1;
    static const char *pn[8] = {"boolean[]", "char[]",  "float[]", "double[]",
                                "byte[]",    "short[]", "int[]",   "long[]"};
    for (unsigned t = 0; t < 8; t++)
        if (heap_classes_add_pseudo(g, pn[t], &g->prim_class[4 + t]) < 0)
            return -1;
    return 0;
}

/* Each node's class and shallow size (instances: the class record's instance size, the
 * VM's; arrays: the size model of heap_graph.h from their length), and its reference count. */
static int size_nodes(struct phd_load *L, char *err, size_t errlen, bool *bad)
{
    struct heap_graph *g = L->g;
    const struct phd_file *f = &L->f;
    static const uint8_t esz[8] = {1, 2, 4, 8, 1, 2, 4, 8};
    for (size_t k = 0; k < L->ix.n; k++) {
        const struct phd_rec *r = &f->recs[L->ix.by_addr[k]];
        uint32_t v = g->first_obj + (uint32_t)k, ci = HG_NONE;
        uint64_t bytes = 0, elem = 0;
        if (r->kind == PHD_K_CLASS) {
            ci = g->class_class;
        } else if (r->kind == PHD_K_PRIM_ARRAY) {
            ci = g->prim_class[4 + (r->ptype & 7)];
            elem = esz[r->ptype & 7];
        } else {
            uint32_t c = heap_classes_find(g, r->cls);
            if (c == HG_NONE) {
                *bad = true;
                snprintf(err, errlen,
                         "offset %" PRIu64 ": %s of class %#" PRIx64 ", which no "
                         "class record defines",
                         r->off, r->kind == PHD_K_OBJECT ? "object" : "object array", r->cls);
                return -1;
            }
            ci = r->kind == PHD_K_OBJECT ? c : array_class(L, c);
            if (ci == HG_NONE)
                return -1;
            bytes = r->kind == PHD_K_OBJECT ? g->classes[c].shallow : 0;
            elem = g->oop_size;
        }
        if (r->kind == PHD_K_OBJ_ARRAY || r->kind == PHD_K_PRIM_ARRAY)
            bytes = r->length < 0 ? r->size : 8 + g->oop_size + 4 + (uint64_t)r->length * elem;
        bytes = (bytes + 7) / 8;
        g->cls[v] = ci;
        g->shallow8[v] = (uint32_t)(bytes > UINT32_MAX ? UINT32_MAX : bytes);
    }
    return 0;
}

/* The references between objects into the CSR (node 0 left empty), dangling ones counted. */
static int edges(struct phd_load *L, char *err, size_t errlen)
{
    struct heap_graph *g = L->g;
    const struct phd_file *f = &L->f;
    uint64_t total = 0;
    for (int fill = 0; fill < 2; fill++) {
        for (size_t k = 0; k < L->ix.n; k++) {
            const struct phd_rec *r = &f->recs[L->ix.by_addr[k]];
            uint32_t v = g->first_obj + (uint32_t)k, w = fill ? g->off[v] : 0;
            for (uint32_t j = 0; j < r->nrefs; j++) {
                uint32_t to = heap_graph_node(g, f->refs[r->refs_at + j]);
                if (to == HG_NONE)
                    g->dangling += !fill;
                else if (fill)
                    g->adj[w++] = to;
                else
                    w++;
            }
            if (!fill)
                g->off[v + 1] = w;
        }
        if (fill)
            break;
        for (uint32_t i = 0; i <= g->n; i++) {
            total += g->off[i];
            if (total >= UINT32_MAX) {
                snprintf(err, errlen,
                         "more than %" PRIu32 " references: too many for this "
                         "analyzer",
                         UINT32_MAX - 1);
                return -1;
            }
            g->off[i] = (uint32_t)total;
        }
        g->adj = malloc(((size_t)total + 1) * sizeof *g->adj);
        if (!g->adj)
            return -2;
    }
    g->nrefs = g->object_refs = total;
    return 0;
}

#define BIT(b, i) ((b)[(i) >> 6] >> ((i)&63) & 1)
#define SET(b, i) ((b)[(i) >> 6] |= (uint64_t)1 << ((i)&63))

/* Mark what `from` reaches (queue: g->n entries). */
static void reach(const struct heap_graph *g, uint32_t from, uint64_t *seen, uint32_t *queue)
{
    size_t head = 0, tail = 0;
    SET(seen, from);
    queue[tail++] = from;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t e = g->off[v]; e < g->off[v + 1]; e++)
            if (!BIT(seen, g->adj[e])) {
                SET(seen, g->adj[e]);
                queue[tail++] = g->adj[e];
            }
    }
}

/* The inferred roots become node 0's edges, in front of the others. */
static int roots(struct heap_graph *g)
{
    size_t words = ((size_t)g->n + 63) / 64;
    uint64_t *referred = calloc(words, 8), *seen = calloc(words, 8);
    uint32_t *queue = malloc((size_t)g->n * sizeof *queue), *root = NULL;
    int rc = -2;
    if (!referred || !seen || !queue)
        goto out;
    for (uint32_t v = g->first_obj; v < g->n; v++)
        for (uint32_t e = g->off[v]; e < g->off[v + 1]; e++)
            if (g->adj[e] != v)
                SET(referred, g->adj[e]);
    /* pass 0 counts, pass 1 writes; in both, the same nodes in the same order */
    size_t nroots = 0;
    for (int pass = 0; pass < 2; pass++) {
        memset(seen, 0, words * 8);
        SET(seen, 0);
        size_t k = 0;
        for (uint32_t v = g->first_obj; v < g->n; v++)
            if (g->cls[v] == g->class_class || !BIT(referred, v)) {
                if (pass)
                    root[k] = v;
                k++;
                reach(g, v, seen, queue);
            }
        for (uint32_t v = g->first_obj; v < g->n; v++)
            if (!BIT(seen, v)) { /* a cycle nothing outside refers to */
                if (pass)
                    root[k] = v;
                k++;
                reach(g, v, seen, queue);
            }
        nroots = k;
        if (!pass && !(root = malloc((nroots + 1) * sizeof *root)))
            goto out;
    }
    if ((uint64_t)g->off[g->n] + nroots >= UINT32_MAX) {
        rc = -1;
        goto out;
    }
    uint32_t *adj = realloc(g->adj, ((size_t)g->off[g->n] + nroots + 1) * sizeof *adj);
    if (!adj)
        goto out;
    g->adj = adj;
    memmove(adj + nroots, adj, (size_t)g->off[g->n] * sizeof *adj);
    memcpy(adj, root, nroots * sizeof *adj);
    for (uint32_t i = 1; i <= g->n; i++)
        g->off[i] += (uint32_t)nroots;
    g->nroots = nroots;
    g->nrefs += nroots;
    rc = 0;
out:
    free(referred);
    free(seen);
    free(queue);
    free(root);
    return rc;
}

int heap_graph_load_phd(struct heap_graph *g, const char *path, char *err, size_t errlen, bool *bad)
{
    struct phd_load L = {.g = g};
    L.f.path = path;
    *bad = false;
    uint8_t *data = phd_slurp(path, &L.f.len, err, errlen);
    if (!data)
        return -1;
    L.f.p = data;
    int rc = -2;
    g->phd = true;
    g->m.idsize = 8;
    g->m.ndumps = 1;
    if (phd_read_header(&L.f))
        phd_read_records(&L.f);
    if (L.f.oom || !phd_build_index(&L.f, &L.ix))
        goto out;
    for (size_t k = 1; k < L.ix.n && !L.f.errors; k++) {
        const struct phd_rec *a = &L.f.recs[L.ix.by_addr[k - 1]], *b = &L.f.recs[L.ix.by_addr[k]];
        if (a->addr == b->addr)
            phd_violation(&L.f, true, b->off,
                          "address %#" PRIx64 " used by two records (the "
                          "other at offset %" PRIu64 ")",
                          b->addr, a->off);
    }
    if (L.f.errors) {
        *bad = true;
        snprintf(err, errlen, "%s", L.f.first_error);
        rc = -1;
        goto out;
    }
    if (L.ix.n >= UINT32_MAX - 1024) {
        snprintf(err, errlen, "%zu objects: more than 32-bit indexes allow", L.ix.n);
        rc = -1;
        goto out;
    }
    g->m.idsize = L.f.wide ? 8 : 4;
    g->nobjects = L.ix.n;
    g->first_obj = 1;
    g->n = 1 + (uint32_t)L.ix.n;
    g->threads = calloc(1, sizeof *g->threads);
    g->ids = malloc((L.ix.n + 1) * sizeof *g->ids);
    g->cls = malloc((size_t)g->n * sizeof *g->cls);
    g->shallow8 = calloc(g->n, sizeof *g->shallow8);
    g->off = calloc((size_t)g->n + 1, sizeof *g->off);
    if (!g->threads || !g->ids || !g->cls || !g->shallow8 || !g->off)
        goto out;
    g->cls[0] = HG_NONE;
    for (size_t k = 0; k < L.ix.n; k++)
        g->ids[k] = L.f.recs[L.ix.by_addr[k]].addr;
    if (heap_graph_index_ids(g) < 0 || load_classes(&L) < 0)
        goto out;
    rc = size_nodes(&L, err, errlen, bad);
    if (!rc)
        rc = edges(&L, err, errlen);
    if (!rc)
        rc = roots(g);
out:
    if (rc == -2)
        snprintf(err, errlen, "out of memory reading the PHD dump");
    free(L.by_name);
    free(L.array_of);
    phd_free_file(&L.f, &L.ix);
    return rc < 0 ? -1 : 0;
}

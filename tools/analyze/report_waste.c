/*
 * report_waste.c: memory that buys nothing: identical primitive arrays (duplicate strings among
 * them: byte[]/char[] values of java.lang.String) and empty or mostly empty collections. One
 * walk over the dump for each. See report_heap.h and doc/heap-analysis.md.
 */
#include "report_waste.h"

#include "heap_find.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NUM(buf, v) (snprintf((buf), sizeof(buf), "%" PRIu64, (uint64_t)(v)), (buf))

/* ------------------------------------------------------------------------------------------ */
/* Identical primitive arrays                                                                 */

/* Two independent hashes of (type, length, contents), 64 and 32 bits: arrays are called
 * identical when both agree (a false match has odds of about 2^-96), so no array is read
 * twice. The node is looked up during the walk, while the record's page is mapped: looking it
 * up after the sort would touch the whole file again in hash order, and keep it resident. */
struct arr {
    uint64_t hash;
    uint32_t hash2, node;
    uint64_t rec;
};

struct dup_walk {
    const struct heap_graph *g;
    struct arr *v;
    size_t n, cap;
    bool oom;
};

static uint64_t hash_bytes(const uint8_t *p, size_t n, uint64_t h)
{
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        h = (h ^ x) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    while (n--)
        h = (h ^ *p++) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

/* A primitive array's element type, count and data. */
static const uint8_t *prim(const struct heap_graph *g, uint64_t rec, unsigned *type, uint32_t *n,
                           size_t *bytes)
{
    const uint8_t *p = g->m.base + rec;
    unsigned ids = g->m.idsize;
    *n = mdump_u4(p + 1 + ids + 4);
    *type = p[1 + ids + 8];
    *bytes = (size_t)*n * heap_graph_type_size(g, *type);
    return p + 1 + ids + 9;
}

static void dup_visit(void *ctx, uint64_t rec)
{
    struct dup_walk *w = ctx;
    if (w->g->m.base[rec] != 0x23 || w->oom)
        return;
    unsigned type;
    uint32_t n;
    size_t bytes;
    const uint8_t *d = prim(w->g, rec, &type, &n, &bytes);
    if (!n)
        return;
    if (w->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 1 << 16;
        struct arr *v = realloc(w->v, nc * sizeof *v);
        if (!v) {
            w->oom = true;
            return;
        }
        w->v = v;
        w->cap = nc;
    }
    w->v[w->n++] =
        (struct arr){hash_bytes(d, bytes, type * 0x51ED27ull + n),
                     (uint32_t)hash_bytes(d, bytes, ~(uint64_t)n * 0xC2B2AE3D27D4EB4Full + type),
                     heap_graph_node(w->g, mdump_id(&w->g->m, w->g->m.base + rec + 1)), rec};
}

static int cmp_arr(const void *x, const void *y)
{
    const struct arr *a = x, *b = y;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    return a->hash2 < b->hash2 ? -1 : a->hash2 > b->hash2;
}

/* Sort by (hash, hash2) in place: one in-place radix pass on the top byte of the hash (it is
 * uniform), then qsort within each bucket, so qsort's copy is a bucket's size, not the whole
 * array's (the array is 24 bytes per primitive array of the dump). */
static void sort_arrs(struct arr *v, size_t n)
{
    size_t start[257] = {0}, next[256];
    for (size_t i = 0; i < n; i++)
        start[(v[i].hash >> 56) + 1]++;
    for (int b = 0; b < 256; b++) {
        start[b + 1] += start[b];
        next[b] = start[b];
    }
    for (int b = 0; b < 256; b++)
        while (next[b] < start[b + 1]) {
            struct arr x = v[next[b]];
            size_t d = (size_t)(x.hash >> 56);
            if (d == (size_t)b) {
                next[b]++;
                continue;
            }
            v[next[b]] = v[next[d]]; /* swap x into its bucket, bring that slot's entry here */
            v[next[d]++] = x;
        }
    for (int b = 0; b < 256; b++)
        if (start[b + 1] - start[b] > 1)
            qsort(v + start[b], start[b + 1] - start[b], sizeof *v, cmp_arr);
}

struct group {
    uint64_t rec, copies, each;
};

static int cmp_group(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    uint64_t wa = (a->copies - 1) * a->each, wb = (b->copies - 1) * b->each;
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* First bytes of an array as text: Latin-1/UTF-8-ish bytes, or UTF-16 chars */
static void preview(const struct heap_graph *g, uint64_t rec, char *buf, size_t len)
{
    unsigned type;
    uint32_t n;
    size_t bytes, k = 0;
    const uint8_t *d = prim(g, rec, &type, &n, &bytes);
    buf[0] = 0;
    if (type != 8 && type != 5)
        return;
    for (uint32_t i = 0; i < n && k + 2 < len && k < 40; i++) {
        unsigned c = type == 5 ? (unsigned)(d[2 * i] << 8 | d[2 * i + 1]) : d[i];
        buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '.';
    }
    buf[k] = 0;
}

/* The groups of identical arrays, most wasted bytes first, the `keep` first ones kept. */
static int find_groups(const struct heap_analysis *a, size_t keep, struct group **out, size_t *nout)
{
    const struct heap_graph *g = a->g;
    struct dup_walk w = {.g = g};
    *out = NULL;
    *nout = 0;
    if (heap_find_each(g, dup_visit, &w) < 0 || w.oom) {
        free(w.v);
        return -1;
    }
    sort_arrs(w.v, w.n);
    struct group *gr = NULL;
    size_t ng = 0, gcap = 0;
    for (size_t i = 0; i < w.n;) {
        size_t j = i + 1;
        while (j < w.n && w.v[j].hash == w.v[i].hash && w.v[j].hash2 == w.v[i].hash2)
            j++;
        uint64_t copies = j - i;
        if (copies > 1) {
            if (ng == gcap) {
                gcap = gcap ? 2 * gcap : 1024;
                struct group *ngr = realloc(gr, gcap * sizeof *ngr);
                if (!ngr) {
                    free(gr);
                    free(w.v);
                    return -1;
                }
                gr = ngr;
            }
            uint32_t node = w.v[i].node;
            /* the graph's shallow sizes are freed by now (heap_analysis_shallow) and the tree
             * not built yet; a primitive array dominates nothing, so its retained size is its
             * shallow size (also when unreachable) */
            uint64_t each = node == HG_NONE ? 0
                            : g->shallow8   ? heap_graph_shallow(g, node)
                                            : heap_analysis_retained(a, node);
            gr[ng++] = (struct group){w.v[i].rec, copies, each};
        }
        i = j;
    }
    free(w.v);
    if (ng) /* qsort's array may not be NULL, even empty */
        qsort(gr, ng, sizeof *gr, cmp_group);
    *nout = ng < keep ? ng : keep;
    struct group *kept = *nout && *nout < ng ? realloc(gr, *nout * sizeof *gr) : NULL;
    *out = kept ? kept : gr;
    return 0;
}

/* report_waste_prepare's result, for the one analysis it ran on */
static struct {
    const struct heap_analysis *a;
    struct group *gr;
    size_t ng;
} prepared;

int report_waste_prepare(const struct heap_analysis *a, void *opts)
{
    const struct report_opts *o = opts;
    free(prepared.gr);
    prepared.a = NULL;
    if (find_groups(a, o->top, &prepared.gr, &prepared.ng) < 0)
        return -1;
    prepared.a = a;
    return 0;
}

static int duplicates(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    const struct heap_graph *g = a->g;
    struct group *gr;
    size_t ng;
    if (prepared.a == a) {
        gr = prepared.gr;
        ng = prepared.ng;
        prepared.a = NULL;
        prepared.gr = NULL;
    } else if (find_groups(a, o->top, &gr, &ng) < 0) {
        return -1;
    }
    static const struct rout_col cols[] = {{"kind", 's', 6},          {"copies", 'n', 8},
                                           {"wasted_bytes", 'n', 12}, {"bytes_each", 'n', 10},
                                           {"type", 's', 10},         {"preview", 's', 0}};
    rout_table_begin(out, "duplicates", "Identical primitive arrays (duplicate strings)", cols, 6);
    for (size_t i = 0; i < ng && i < o->top; i++) {
        uint32_t node = heap_graph_node(g, mdump_id(&g->m, g->m.base + gr[i].rec + 1));
        uint32_t parent = node == HG_NONE ? HG_NONE : a->bfs_parent[node];
        bool str = parent != HG_NONE && parent >= g->first_obj && g->cls[parent] != HG_NONE &&
                   !strcmp(g->classes[g->cls[parent]].name, "java.lang.String");
        char n1[24], n2[24], n3[24], pv[64];
        preview(g, gr[i].rec, pv, sizeof pv);
        const char *cells[] = {str ? "string" : "array",
                               NUM(n1, gr[i].copies),
                               NUM(n2, (gr[i].copies - 1) * gr[i].each),
                               NUM(n3, gr[i].each),
                               node == HG_NONE ? "?" : g->classes[g->cls[node]].name,
                               pv};
        rout_row(out, cells);
    }
    rout_section_end(out);
    free(gr);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Empty and mostly empty collections                                                         */

static const struct {
    const char *cls, *size, *array;
} known[] = {
    {"java.util.ArrayList", "size", "elementData"},
    {"java.util.Vector", "elementCount", "elementData"},
    {"java.util.HashMap", "size", "table"},
    {"java.util.LinkedHashMap", "size", "table"},
    {"java.util.Hashtable", "count", "table"},
    {"java.util.WeakHashMap", "size", "table"},
    {"java.util.IdentityHashMap", "size", "table"},
};
#define NKNOWN (sizeof known / sizeof *known)

struct coll {
    uint32_t ci;
    uint32_t size_off, arr_off;
    unsigned size_type;
    uint64_t instances, empty, sparse, wasted;
};

struct coll_walk {
    const struct heap_analysis *a;
    struct coll c[NKNOWN];
};

static void coll_visit(void *ctx, uint64_t rec)
{
    struct coll_walk *w = ctx;
    const struct heap_graph *g = w->a->g;
    const uint8_t *p = g->m.base + rec;
    unsigned ids = g->m.idsize;
    if (p[0] != 0x21)
        return;
    uint32_t ci = heap_classes_find(g, mdump_id(&g->m, p + 1 + ids + 4));
    for (size_t i = 0; i < NKNOWN; i++) {
        struct coll *c = &w->c[i];
        if (c->ci != ci || ci == HG_NONE)
            continue;
        uint32_t nb = mdump_u4(p + 1 + 2 * ids + 4);
        const uint8_t *d = p + 1 + 2 * ids + 8;
        if (c->size_off + 4 > nb || c->arr_off + ids > nb || c->size_type != 10)
            return;
        uint32_t size = mdump_u4(d + c->size_off);
        uint32_t self = heap_graph_node(g, mdump_id(&g->m, p + 1));
        uint32_t arr = heap_graph_node(g, mdump_id(&g->m, d + c->arr_off));
        c->instances++;
        /* the backing array counts only when this collection alone holds it (an empty
         * ArrayList shares one empty array with every other) */
        uint64_t abytes = arr != HG_NONE && self != HG_NONE && w->a->idom[arr] == self
                              ? heap_analysis_shallow(w->a, arr)
                              : 0;
        uint64_t cap = abytes > 16 ? (abytes - 16) / g->oop_size : 0;
        if (size == 0) {
            c->empty++;
            c->wasted += abytes;
        } else if (cap >= 16 && (uint64_t)size * 4 < cap) {
            c->sparse++;
            c->wasted += (cap - size) * g->oop_size;
        }
        return;
    }
}

static int collections(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    const struct heap_graph *g = a->g;
    struct coll_walk w = {.a = a};
    bool any = false;
    for (size_t i = 0; i < NKNOWN; i++) {
        struct coll *c = &w.c[i];
        c->ci = HG_NONE;
        for (uint32_t k = 0; k < g->ndumped; k++)
            if (!strcmp(g->classes[k].name, known[i].cls)) {
                unsigned at;
                if (heap_find_field_offset(g, k, known[i].size, &c->size_off, &c->size_type) == 0 &&
                    heap_find_field_offset(g, k, known[i].array, &c->arr_off, &at) == 0 &&
                    at == 2) {
                    c->ci = k;
                    any = true;
                }
            }
    }
    if (any && heap_find_each(g, coll_visit, &w) < 0)
        return -1;
    static const struct rout_col cols[] = {{"instances", 'n', 10},
                                           {"empty", 'n', 10},
                                           {"mostly_empty", 'n', 12},
                                           {"wasted_bytes", 'n', 12},
                                           {"class", 's', 0}};
    rout_table_begin(out, "collections", "Empty and mostly empty collections", cols, 5);
    for (size_t i = 0; i < NKNOWN && i < o->top; i++) {
        const struct coll *c = &w.c[i];
        if (!c->instances)
            continue;
        char n1[24], n2[24], n3[24], n4[24];
        const char *cells[] = {NUM(n1, c->instances), NUM(n2, c->empty), NUM(n3, c->sparse),
                               NUM(n4, c->wasted), known[i].cls};
        rout_row(out, cells);
    }
    rout_section_end(out);
    return 0;
}

int report_waste(const struct heap_analysis *a, const struct report_opts *o, struct rout *out)
{
    int rc = duplicates(a, o, out);
    return rc ? rc : collections(a, o, out);
}

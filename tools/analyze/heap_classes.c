/*
 * heap_classes.c: the class table of a heap graph: CLASS DUMP records, their instance layouts
 * (reference field offsets with the superclasses' fields after the class's own, as HPROF lays
 * instance data out), sizes in the size model, Java names. See heap_graph.h and
 * doc/heap-analysis.md.
 */
#include "heap_walk.h"

#include <stdlib.h>
#include <string.h>

static bool grow(void **v, uint32_t n, size_t *cap, size_t elsz)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 256;
    void *p = realloc(*v, nc * elsz);
    if (!p)
        return false;
    *v = p;
    *cap = nc;
    return true;
}

/* Add the CLASS DUMP whose body (after the tag) starts at body; end bounds the range. */
int heap_classes_add(struct walk *w, const uint8_t *body, uint64_t body_off, const uint8_t *end)
{
    struct heap_graph *g = w->g;
    const struct mapped_dump *m = &g->m;
    unsigned ids = m->idsize;
    const uint8_t *p = body + 7 * ids + 4 + 4 + 2; /* ids, trace, instance size, cp count */
    if (p > end)
        return -1;
    if (!grow((void **)&g->classes, g->nclasses, &g->classes_cap, sizeof *g->classes))
        return -2;
    struct hg_class *c = &g->classes[g->nclasses];
    memset(c, 0, sizeof *c);
    c->id = mdump_id(m, body);
    c->super_id = mdump_id(m, body + ids + 4);
    c->rec_off = body_off;
    c->super = HG_NONE;
    c->node = HG_NONE;
    /* constant pool and statics were checked by the walker; skip to the instance fields */
    unsigned ncp = (unsigned)(p[-2] << 8 | p[-1]);
    for (unsigned i = 0; i < ncp; i++) {
        if (end - p < 3)
            return -1;
        unsigned sz = heap_graph_type_size(g, p[2]);
        if (!sz || (size_t)(end - p) < 3 + (size_t)sz)
            return -1;
        p += 3 + sz;
    }
    if (end - p < 2)
        return -1;
    unsigned nst = (unsigned)(p[0] << 8 | p[1]);
    p += 2;
    for (unsigned i = 0; i < nst; i++) {
        if ((size_t)(end - p) < ids + 1)
            return -1;
        unsigned sz = heap_graph_type_size(g, p[ids]);
        if (!sz || (size_t)(end - p) < ids + 1 + (size_t)sz)
            return -1;
        p += ids + 1 + sz;
    }
    if (end - p < 2)
        return -1;
    unsigned nf = (unsigned)(p[0] << 8 | p[1]);
    p += 2;
    c->own_refs_off = g->nfields;
    for (unsigned i = 0; i < nf; i++) {
        if ((size_t)(end - p) < ids + 1)
            return -1;
        unsigned t = p[ids], sz = heap_graph_type_size(g, t);
        if (!sz)
            return -1;
        if (t == 2) {
            if (!grow((void **)&g->fields, g->nfields, &g->fields_cap, sizeof *g->fields))
                return -2;
            g->fields[g->nfields++] = (struct hg_field){c->own_bytes, mdump_id(m, p)};
            c->own_nrefs++;
        }
        c->own_bytes += sz;
        c->own_model += t == 2 ? g->oop_size : sz;
        p += ids + 1;
    }
    g->nclasses++;
    return (int)(p - body);
}

static int cmp_class(const void *a, const void *b)
{
    const struct hg_class *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t heap_classes_find(const struct heap_graph *g, uint64_t id)
{
    uint32_t lo = 0, hi = g->ndumped;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->classes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->ndumped && g->classes[lo].id == id ? lo : HG_NONE;
}

/* "java/util/HashMap$Node" -> "java.util.HashMap$Node"; "[[I" -> "int[][]"; "[Lx/Y;" -> "x.Y[]" */
char *heap_classes_java_name(const char *s, uint32_t len)
{
    unsigned dims = 0;
    while (dims < len && s[dims] == '[')
        dims++;
    const char *base = s + dims;
    uint32_t blen = len - dims;
    static const char *prim[][2] = {{"Z", "boolean"}, {"C", "char"}, {"F", "float"},
                                    {"D", "double"},  {"B", "byte"}, {"S", "short"},
                                    {"I", "int"},     {"J", "long"}};
    if (dims && blen == 1)
        for (size_t i = 0; i < 8; i++)
            if (base[0] == prim[i][0][0]) {
                base = prim[i][1];
                blen = (uint32_t)strlen(base);
            }
    if (dims && blen >= 2 && base[0] == 'L' && base[blen - 1] == ';') {
        base++;
        blen -= 2;
    }
    char *r = malloc((size_t)blen + 2 * dims + 1);
    if (!r)
        return NULL;
    for (uint32_t i = 0; i < blen; i++)
        r[i] = base[i] == '/' ? '.' : base[i];
    for (unsigned d = 0; d < dims; d++)
        memcpy(r + blen + 2 * d, "[]", 2);
    r[blen + 2 * dims] = 0;
    return r;
}

int heap_classes_add_pseudo(struct heap_graph *g, const char *name, uint32_t *idx)
{
    if (!grow((void **)&g->classes, g->nclasses, &g->classes_cap, sizeof *g->classes))
        return -1;
    struct hg_class *c = &g->classes[g->nclasses];
    memset(c, 0, sizeof *c);
    c->id = 0;
    c->super = c->node = HG_NONE;
    c->resolved = true;
    c->name = strdup(name);
    if (!c->name)
        return -1;
    *idx = g->nclasses++;
    return 0;
}

/* Flatten the reference fields of c and its superclasses (own first), drop Reference.referent */
static int resolve(struct heap_graph *g, uint32_t ci, uint32_t ref_class, uint64_t referent_id)
{
    struct hg_class *c = &g->classes[ci];
    uint32_t nrefs = 0, bytes = 0, model = 0, depth = 0;
    for (uint32_t k = ci; k != HG_NONE && depth <= g->nclasses; k = g->classes[k].super, depth++) {
        nrefs += g->classes[k].own_nrefs;
        model += g->classes[k].own_model;
        if (k == ref_class)
            c->is_reference = true;
    }
    if (depth > g->nclasses)
        return -1; /* a superclass cycle */
    if (!grow((void **)&g->fields, g->nfields + nrefs, &g->fields_cap, sizeof *g->fields))
        return -2;
    c->refs_off = g->nfields;
    for (uint32_t k = ci; k != HG_NONE; k = g->classes[k].super) {
        const struct hg_class *s = &g->classes[k];
        for (uint32_t i = 0; i < s->own_nrefs; i++) {
            struct hg_field f = g->fields[s->own_refs_off + i];
            if (k == ref_class && f.name_id == referent_id)
                continue;
            f.off += bytes;
            g->fields[g->nfields++] = f;
        }
        bytes += s->own_bytes;
    }
    c->nrefs = g->nfields - c->refs_off;
    c->inst_bytes = bytes;
    uint32_t sz = 8 + g->oop_size + model; /* mark word + class pointer + fields */
    c->shallow = (sz + 7) & ~7u;
    c->resolved = true;
    return 0;
}

int heap_classes_resolve(struct heap_graph *g, char *err, size_t errlen)
{
    if (g->nclasses) /* qsort's array may not be NULL, even empty */
        qsort(g->classes, g->nclasses, sizeof *g->classes, cmp_class);
    uint32_t ndumped = g->ndumped = g->nclasses;
    uint32_t ref_class = HG_NONE, class_class = HG_NONE;
    uint64_t referent_id = 0;
    for (uint32_t i = 0; i < ndumped; i++) {
        struct hg_class *c = &g->classes[i];
        if (i && c->id == g->classes[i - 1].id) {
            snprintf(err, errlen, "offset %llu: class 0x%llx dumped twice",
                     (unsigned long long)c->rec_off, (unsigned long long)c->id);
            return -1;
        }
        c->super = c->super_id ? heap_classes_find(g, c->super_id) : HG_NONE;
        c->name_id = mdump_class_name_id(&g->m, c->id);
        uint32_t len = 0;
        const char *s = c->name_id ? mdump_string(&g->m, c->name_id, &len) : NULL;
        char hex[40];
        if (!s) {
            len = (uint32_t)snprintf(hex, sizeof hex, "class@0x%llx", (unsigned long long)c->id);
            s = hex;
        }
        c->name = heap_classes_java_name(s, len);
        if (!c->name)
            goto oom;
        if (!strcmp(c->name, "java.lang.ref.Reference"))
            ref_class = i;
        if (!strcmp(c->name, "java.lang.Class"))
            class_class = i;
    }
    if (ref_class != HG_NONE) { /* the name id of its "referent" field */
        char buf[16];
        for (uint32_t i = 0; i < g->classes[ref_class].own_nrefs; i++) {
            uint64_t nid = g->fields[g->classes[ref_class].own_refs_off + i].name_id;
            if (!strcmp(heap_graph_str(g, nid, buf, sizeof buf), "referent"))
                referent_id = nid;
        }
    }
    for (uint32_t i = 0; i < ndumped; i++) {
        int r = resolve(g, i, ref_class, referent_id);
        if (r == -2)
            goto oom;
        if (r < 0) {
            snprintf(err, errlen, "offset %llu: class %s has a superclass cycle",
                     (unsigned long long)g->classes[i].rec_off, g->classes[i].name);
            return -1;
        }
    }
    if (class_class != HG_NONE)
        g->class_class = class_class;
    else if (heap_classes_add_pseudo(g, "java.lang.Class", &g->class_class) < 0)
        goto oom;
    static const char *pn[12] = {
        [4] = "boolean[]", [5] = "char[]",  [6] = "float[]", [7] = "double[]",
        [8] = "byte[]",    [9] = "short[]", [10] = "int[]",  [11] = "long[]"};
    for (unsigned t = 4; t < 12; t++)
        if (heap_classes_add_pseudo(g, pn[t], &g->prim_class[t]) < 0)
            goto oom;
    return 0;
oom:
    snprintf(err, errlen, "out of memory (classes)");
    return -2;
}

void heap_classes_free(struct heap_graph *g)
{
    for (uint32_t i = 0; i < g->nclasses; i++)
        free(g->classes[i].name);
    free(g->classes);
    free(g->fields);
    g->classes = NULL;
    g->fields = NULL;
    g->classes_cap = g->fields_cap = 0;
}

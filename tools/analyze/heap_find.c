/*
 * heap_find.c: records of chosen objects, field names and values, string contents. See
 * heap_find.h.
 */
#include "heap_find.h"

#include "heap_walk.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int heap_find_records(const struct heap_graph *g, const uint32_t *nodes, size_t n,
                      uint64_t *offsets)
{
    uint64_t *want = malloc((n + 1) * sizeof *want), *found = calloc(n + 1, sizeof *found);
    if (!want || !found) {
        free(want);
        free(found);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        want[i] = heap_graph_id(g, nodes[i]);
    qsort(want, n, sizeof *want, cmp_u64);
    size_t nw = 0; /* distinct ids: the walk stores each record's offset once */
    for (size_t i = 0; i < n; i++)
        if (!nw || want[nw - 1] != want[i])
            want[nw++] = want[i];
    struct walk w = {.g = (struct heap_graph *)g, .pass = PASS_FIND};
    w.want = want;
    w.nwant = nw;
    w.found = found;
    int rc = 0;
    for (size_t i = 0; i < g->m.nranges && !rc; i++)
        rc = heap_walk_range(&w, &g->m.ranges[i]);
    for (size_t i = 0; i < n; i++) {
        uint64_t id = heap_graph_id(g, nodes[i]);
        const uint64_t *p = bsearch(&id, want, nw, sizeof *want, cmp_u64);
        offsets[i] = id && p ? found[p - want] : 0;
    }
    free(want);
    free(found);
    return rc ? -1 : 0;
}

int heap_find_each(const struct heap_graph *g, void (*fn)(void *ctx, uint64_t rec), void *ctx)
{
    struct walk w = {.g = (struct heap_graph *)g, .pass = PASS_FIND, .each = fn, .each_ctx = ctx};
    for (size_t i = 0; i < g->m.nranges; i++)
        if (heap_walk_range(&w, &g->m.ranges[i]) != 0)
            return -1;
    return 0;
}

/* Walk the instance fields of class ci (own first, then the superclasses'), calling fn with
 * each field's name id, basic type and offset in the instance data until it returns true. */
static bool each_field(const struct heap_graph *g, uint32_t ci,
                       bool (*fn)(void *, uint64_t, unsigned, uint32_t), void *ctx)
{
    unsigned ids = g->m.idsize;
    uint32_t base = 0, depth = 0;
    for (uint32_t k = ci; k != HG_NONE && k < g->ndumped && depth++ <= g->ndumped;
         k = g->classes[k].super) {
        const uint8_t *p = g->m.base + g->classes[k].rec_off + 7 * ids + 8;
        unsigned n = (unsigned)(p[0] << 8 | p[1]);
        p += 2;
        for (unsigned i = 0; i < n; i++)
            p += 3 + heap_graph_type_size(g, p[2]);
        n = (unsigned)(p[0] << 8 | p[1]);
        p += 2;
        for (unsigned i = 0; i < n; i++)
            p += ids + 1 + heap_graph_type_size(g, p[ids]);
        n = (unsigned)(p[0] << 8 | p[1]);
        p += 2;
        uint32_t off = base;
        for (unsigned i = 0; i < n; i++, p += ids + 1) {
            unsigned t = p[ids];
            if (fn(ctx, mdump_id(&g->m, p), t, off))
                return true;
            off += heap_graph_type_size(g, t);
        }
        base = off;
    }
    return false;
}

struct field_q {
    const struct heap_graph *g;
    const uint8_t *data;
    uint32_t nbytes;
    uint64_t want_id; /* a reference value looked for */
    const char *want_name;
    uint64_t value;
    char *buf;
    size_t len;
};

static bool by_value(void *c, uint64_t name, unsigned type, uint32_t off)
{
    struct field_q *q = c;
    unsigned ids = q->g->m.idsize;
    if (type != 2 || off + ids > q->nbytes || mdump_id(&q->g->m, q->data + off) != q->want_id)
        return false;
    heap_graph_str(q->g, name, q->buf, q->len);
    return true;
}

static bool by_name(void *c, uint64_t name, unsigned type, uint32_t off)
{
    struct field_q *q = c;
    char nb[256];
    unsigned sz = heap_graph_type_size(q->g, type);
    if (strcmp(heap_graph_str(q->g, name, nb, sizeof nb), q->want_name) || off + sz > q->nbytes)
        return false;
    q->value = 0;
    for (unsigned i = 0; i < sz; i++)
        q->value = q->value << 8 | q->data[off + i];
    return true;
}

/* The class index and instance data of an INSTANCE DUMP at rec, false if it is not one. */
static bool instance_at(const struct heap_graph *g, uint64_t rec, uint32_t *ci,
                        const uint8_t **data, uint32_t *nbytes)
{
    unsigned ids = g->m.idsize;
    const uint8_t *p = g->m.base + rec;
    if (!rec || p[0] != 0x21)
        return false;
    *ci = heap_classes_find(g, mdump_id(&g->m, p + 1 + ids + 4));
    *nbytes = mdump_u4(p + 1 + 2 * ids + 4);
    *data = p + 1 + 2 * ids + 8;
    return *ci != HG_NONE;
}

const char *heap_find_ref_name(const struct heap_graph *g, uint64_t rec, uint32_t to, char *buf,
                               size_t len)
{
    unsigned ids = g->m.idsize;
    uint64_t id = heap_graph_id(g, to);
    snprintf(buf, len, "%s", g->phd ? "" : "?"); /* PHD records name no fields */
    if (!rec)
        return buf;
    const uint8_t *p = g->m.base + rec;
    if (p[0] == 0x21) {
        struct field_q q = {.g = g, .want_id = id, .buf = buf, .len = len};
        uint32_t ci;
        if (instance_at(g, rec, &ci, &q.data, &q.nbytes))
            each_field(g, ci, by_value, &q);
    } else if (p[0] == 0x22) {
        uint32_t n = mdump_u4(p + 1 + ids + 4);
        const uint8_t *e = p + 1 + 2 * ids + 8;
        for (uint32_t i = 0; i < n; i++)
            if (mdump_id(&g->m, e + (size_t)i * ids) == id) {
                snprintf(buf, len, "[%u]", i);
                break;
            }
    } else if (p[0] == 0x20) {
        if (mdump_id(&g->m, p + 1 + 2 * ids + 4) == id) {
            snprintf(buf, len, "<classLoader>");
            return buf;
        }
        const uint8_t *q = p + 1 + 7 * ids + 8;
        unsigned n = (unsigned)(q[0] << 8 | q[1]);
        q += 2;
        for (unsigned i = 0; i < n; i++)
            q += 3 + heap_graph_type_size(g, q[2]);
        n = (unsigned)(q[0] << 8 | q[1]);
        q += 2;
        for (unsigned i = 0; i < n; i++) {
            if (q[ids] == 2 && mdump_id(&g->m, q + ids + 1) == id) {
                char nb[200];
                snprintf(buf, len, "static %s",
                         heap_graph_str(g, mdump_id(&g->m, q), nb, sizeof nb));
                break;
            }
            q += ids + 1 + heap_graph_type_size(g, q[ids]);
        }
    }
    return buf;
}

struct offset_q {
    const struct heap_graph *g;
    const char *name;
    uint32_t off;
    unsigned type;
};

static bool offset_by_name(void *c, uint64_t name, unsigned type, uint32_t off)
{
    struct offset_q *q = c;
    char nb[256];
    if (strcmp(heap_graph_str(q->g, name, nb, sizeof nb), q->name))
        return false;
    q->off = off;
    q->type = type;
    return true;
}

int heap_find_field_offset(const struct heap_graph *g, uint32_t ci, const char *name, uint32_t *off,
                           unsigned *type)
{
    struct offset_q q = {g, name, 0, 0};
    if (ci == HG_NONE || ci >= g->ndumped || !each_field(g, ci, offset_by_name, &q))
        return -1;
    *off = q.off;
    *type = q.type;
    return 0;
}

int heap_find_field(const struct heap_graph *g, uint64_t rec, const char *name, uint64_t *value)
{
    struct field_q q = {.g = g, .want_name = name};
    uint32_t ci;
    if (!instance_at(g, rec, &ci, &q.data, &q.nbytes) || !each_field(g, ci, by_name, &q))
        return -1;
    *value = q.value;
    return 0;
}

const char *heap_find_string(const struct heap_graph *g, uint64_t str_rec, uint64_t arr_rec,
                             char *buf, size_t len)
{
    unsigned ids = g->m.idsize;
    uint64_t coder = 0;
    size_t k = 0;
    buf[0] = 0;
    const uint8_t *a = g->m.base + arr_rec;
    if (!arr_rec || a[0] != 0x23)
        return buf;
    if (heap_find_field(g, str_rec, "coder", &coder) < 0)
        coder = a[1 + ids + 8] == 5 ? 1 : 0; /* char[] value: UTF-16 */
    uint32_t n = mdump_u4(a + 1 + ids + 4);
    const uint8_t *d = a + 1 + ids + 9;
    unsigned et = a[1 + ids + 8];
    bool wide = coder == 1 || et == 5;
    uint32_t nch = et == 5 ? n : wide ? n / 2 : n;
    for (uint32_t i = 0; i < nch && k + 4 < len; i++) {
        unsigned c;
        if (et == 5) /* char[]: big-endian in the dump */
            c = (unsigned)(d[2 * i] << 8 | d[2 * i + 1]);
        else if (wide) /* JDK 9+ UTF-16 byte[]: the VM's (little-endian) byte order */
            c = (unsigned)(d[2 * i] | d[2 * i + 1] << 8);
        else
            c = d[i];
        if (c < 0x20 || c == 0x7f)
            c = '?';
        if (c < 0x80) {
            buf[k++] = (char)c;
        } else if (c < 0x800) {
            buf[k++] = (char)(0xC0 | c >> 6);
            buf[k++] = (char)(0x80 | (c & 0x3F));
        } else {
            buf[k++] = (char)(0xE0 | c >> 12);
            buf[k++] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[k++] = (char)(0x80 | (c & 0x3F));
        }
    }
    buf[k] = 0;
    return buf;
}

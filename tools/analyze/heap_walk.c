/*
 * heap_walk.c: one walk over the sub-records of a heap dump range, for the three passes that
 * build the graph (heap_graph.c): ids, classes and roots; class, shallow size and reference
 * count of each object; the references. Every length is checked against the range's end, so
 * a corrupt dump stops with the offset of the sub-record at fault.
 */
#include "heap_walk.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int bad(struct walk *w, const uint8_t *at, const char *what)
{
    snprintf(w->err, sizeof w->err, "offset %" PRIu64 ": %s", (uint64_t)(at - w->g->m.base), what);
    return -1;
}

static int oom(struct walk *w)
{
    snprintf(w->err, sizeof w->err, "out of memory");
    return -2;
}

static inline uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

static int add_root(struct walk *w, uint8_t kind, uint64_t id, uint32_t thread)
{
    struct heap_graph *g = w->g;
    if (g->nroots == w->roots_cap) {
        size_t nc = w->roots_cap ? w->roots_cap * 2 : 1024;
        void *p = realloc(g->roots, nc * sizeof *g->roots);
        if (!p)
            return oom(w);
        g->roots = p;
        w->roots_cap = nc;
    }
    g->roots[g->nroots++] = (struct hg_root){id, thread, kind};
    return 0;
}

static int add_id(struct walk *w, uint64_t id)
{
    if (w->nids == w->cap) {
        /* the first allocation holds as many ids as the dump could: untouched pages cost no
         * memory, and no copy happens while growing */
        uint64_t most = w->g->m.dump_bytes / (10 + w->g->m.idsize) + 16;
        size_t nc = w->cap ? w->cap + w->cap / 2 : (size_t)most;
        void *p = realloc(w->ids, nc * sizeof *w->ids);
        if (!p)
            return oom(w);
        w->ids = p;
        w->cap = nc;
    }
    w->ids[w->nids++] = id;
    return 0;
}

/* Bytes of a CLASS DUMP body (after the tag), or 0 if it runs past end; statics are counted
 * (non-null references) into *nstatic_refs or written to adj (pass 3). */
static size_t class_dump(struct walk *w, const uint8_t *p, const uint8_t *end, uint32_t *nrefs,
                         uint32_t *adj)
{
    struct heap_graph *g = w->g;
    unsigned ids = g->m.idsize;
    const uint8_t *q = p + 7 * ids + 8;
    if (q + 2 > end || q < p)
        return 0;
    unsigned n = (unsigned)(q[0] << 8 | q[1]);
    q += 2;
    for (unsigned i = 0; i < n; i++) {
        unsigned sz = end - q >= 3 ? heap_graph_type_size(g, q[2]) : 0;
        if (!sz || (size_t)(end - q) < 3 + (size_t)sz)
            return 0;
        q += 3 + sz;
    }
    if (end - q < 2)
        return 0;
    n = (unsigned)(q[0] << 8 | q[1]);
    q += 2;
    /* the class loader, as VisualVM's "<classLoader>" static, then the static fields */
    uint32_t k = 0;
    uint64_t loader = mdump_id(&g->m, p + 2 * ids + 4);
    if (loader && adj) {
        adj[k] = heap_graph_node(g, loader);
        w->dangling += adj[k] == HG_NONE;
    }
    k += loader != 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned sz = (size_t)(end - q) > ids ? heap_graph_type_size(g, q[ids]) : 0;
        if (!sz || (size_t)(end - q) < ids + 1 + (size_t)sz)
            return 0;
        if (q[ids] == 2) {
            uint64_t id = mdump_id(&g->m, q + ids + 1);
            if (id && adj) {
                uint32_t t = heap_graph_node(g, id);
                adj[k] = t;
                w->dangling += t == HG_NONE;
            }
            k += id != 0;
        }
        q += ids + 1 + sz;
    }
    if (end - q < 2)
        return 0;
    n = (unsigned)(q[0] << 8 | q[1]);
    q += 2;
    if ((uint64_t)(end - q) < (uint64_t)n * (ids + 1))
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (!heap_graph_type_size(g, q[i * (ids + 1) + ids]))
            return 0;
    q += (size_t)n * (ids + 1);
    *nrefs = k;
    return (size_t)(q - p);
}

/* Record node's class, size and reference count (pass 2); the count goes to off[node + 1]. */
static int set_node(struct walk *w, const uint8_t *rec, uint64_t id, uint32_t cls, uint64_t size,
                    uint32_t nrefs, uint32_t *node_out)
{
    struct heap_graph *g = w->g;
    uint32_t node = heap_graph_node(g, id);
    if (node == HG_NONE)
        return bad(w, rec, "object id not found in the first pass (file changed?)");
    if (g->cls[node] != HG_NONE)
        return bad(w, rec, "object id dumped twice");
    g->cls[node] = cls;
    g->shallow8[node] = size >> 3 > UINT32_MAX ? UINT32_MAX : (uint32_t)(size >> 3);
    g->off[node + 1] = nrefs;
    *node_out = node;
    return 0;
}

/* Pass 3: the slot range of node's references. */
static uint32_t *slots(struct heap_graph *g, uint64_t id, uint32_t *cap)
{
    uint32_t node = heap_graph_node(g, id);
    *cap = (uint32_t)(g->off[node + 1] - g->off[node]);
    return g->adj + g->off[node];
}

/* One non-null reference t of an object: in the fill pass, its target's node goes to the
 * object's next successor slot (a dangling one is counted); every pass counts it in *k. */
static void count_ref(struct walk *w, uint32_t *adj, uint32_t cap, uint32_t *k, uint64_t t)
{
    if (adj && *k < cap) {
        uint32_t tn = heap_graph_node(w->g, t);
        adj[*k] = tn;
        w->dangling += tn == HG_NONE;
    }
    (*k)++;
}

static int instance(struct walk *w, const uint8_t *rec, const uint8_t *p, uint32_t nbytes)
{
    struct heap_graph *g = w->g;
    unsigned ids = g->m.idsize;
    uint64_t id = mdump_id(&g->m, p), cid = mdump_id(&g->m, p + ids + 4);
    const uint8_t *data = p + 2 * ids + 8;
    if (w->pass == PASS_IDS)
        return add_id(w, id);
    uint32_t ci = cid && cid == w->last_cid ? w->last_ci : heap_classes_find(g, cid);
    if (ci == HG_NONE)
        return bad(w, rec, "instance of a class that has no CLASS DUMP");
    w->last_cid = cid;
    w->last_ci = ci;
    const struct hg_class *c = &g->classes[ci];
    const struct hg_field *f = g->fields + c->refs_off;
    uint32_t k = 0, cap = 0, *adj = w->pass == PASS_FILL ? slots(g, id, &cap) : NULL;
    for (uint32_t i = 0; i < c->nrefs; i++) {
        if (f[i].off + (uint64_t)ids > nbytes)
            continue;
        uint64_t t = mdump_id(&g->m, data + f[i].off);
        if (!t)
            continue;
        count_ref(w, adj, cap, &k, t);
    }
    if (adj)
        return 0;
    w->weak += c->is_reference;
    uint32_t node;
    return set_node(w, rec, id, ci, c->shallow, k, &node);
}

static int obj_array(struct walk *w, const uint8_t *rec, const uint8_t *p, uint32_t n)
{
    struct heap_graph *g = w->g;
    unsigned ids = g->m.idsize;
    uint64_t id = mdump_id(&g->m, p), cid = mdump_id(&g->m, p + ids + 8);
    const uint8_t *e = p + 2 * ids + 8;
    if (w->pass == PASS_IDS)
        return add_id(w, id);
    uint32_t k = 0, cap = 0, *adj = w->pass == PASS_FILL ? slots(g, id, &cap) : NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t = mdump_id(&g->m, e + (size_t)i * ids);
        if (!t)
            continue;
        count_ref(w, adj, cap, &k, t);
    }
    if (adj)
        return 0;
    uint32_t ci = heap_classes_find(g, cid), node;
    if (ci == HG_NONE)
        return bad(w, rec, "object array of a class that has no CLASS DUMP");
    return set_node(w, rec, id, ci, align8(12 + g->oop_size + (uint64_t)n * g->oop_size), k, &node);
}

static void find(struct walk *w, const uint8_t *rec, uint64_t id)
{
    size_t lo = 0, hi = w->nwant;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->want[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < w->nwant && w->want[lo] == id)
        w->found[lo] = (uint64_t)(rec - w->g->m.base);
}

/* Mapped pages a walk keeps behind it before it drops them (they count in RSS meanwhile) */
#define RELEASE_STEP (8u << 20)

int heap_walk_range(struct walk *w, const struct mdump_range *r)
{
    struct heap_graph *g = w->g;
    unsigned ids = g->m.idsize;
    const uint8_t *p = g->m.base + r->off, *end = p + r->len, *kept = p;
    while (p < end) {
        const uint8_t *rec = p;
        if ((size_t)(rec - kept) >= RELEASE_STEP) {
            /* a record can be 4 GB: drop what lies behind every few MB, not per record */
            mdump_release(&g->m, (uint64_t)(kept - g->m.base), (uint64_t)(rec - kept));
            kept = rec;
        }
        unsigned tag = *p++;
        size_t avail = (size_t)(end - p), need;
        uint32_t thread = 0;
        int rc = 0;
        if (w->pass == PASS_FIND && tag >= 0x20 && tag <= 0x23 && avail >= ids) {
            if (w->each)
                w->each(w->each_ctx, (uint64_t)(rec - g->m.base));
            else
                find(w, rec, mdump_id(&g->m, p));
        }
        switch (tag) {
        case 0xFF: /* root unknown, sticky class, monitor used: id */
        case 0x05:
        case 0x07:
            need = ids;
            break;
        case 0x01: /* JNI global: id, JNI global ref id */
            need = 2 * (size_t)ids;
            break;
        case 0x04: /* native stack, thread block: id, thread serial */
        case 0x06:
            need = ids + 4;
            break;
        case 0x02: /* JNI local, Java frame, thread object: id, thread serial, frame / trace */
        case 0x03:
        case 0x08:
            need = ids + 8;
            if (avail >= need)
                thread = mdump_u4(p + ids);
            break;
        case 0x20: {
            uint32_t nrefs = 0, node, cap = 0;
            uint32_t *adj = NULL;
            if (w->pass == PASS_FILL)
                adj = slots(g, mdump_id(&g->m, p), &cap);
            need = avail >= 7 * (size_t)ids + 8 ? class_dump(w, p, end, &nrefs, adj) : 0;
            if (!need)
                return bad(w, rec, "CLASS DUMP runs past the end of its record or has a bad type");
            if (w->pass == PASS_FIND) {
                p += need;
                continue;
            }
            if (adj && nrefs > cap)
                return bad(w, rec, "CLASS DUMP changed between passes");
            if (w->pass == PASS_IDS) {
                rc = add_id(w, mdump_id(&g->m, p));
                if (!rc)
                    rc = heap_classes_add(w, p, (uint64_t)(p - g->m.base), end) < 0 ? -2 : 0;
                if (rc)
                    return oom(w);
            } else if (w->pass == PASS_COUNT) {
                rc = set_node(w, rec, mdump_id(&g->m, p), g->class_class, 0, nrefs,
                              &node); /* class objects: 0 bytes, as VisualVM counts them */
            }
            p += need;
            if (rc)
                return rc;
            continue;
        }
        case 0x21: {
            if (avail < 2 * (size_t)ids + 8)
                return bad(w, rec, "INSTANCE DUMP runs past the end of its record");
            uint32_t nb = mdump_u4(p + 2 * ids + 4);
            need = 2 * (size_t)ids + 8 + nb;
            if (avail < need)
                return bad(w, rec, "INSTANCE DUMP runs past the end of its record");
            if (w->pass != PASS_FIND)
                rc = instance(w, rec, p, nb);
            break;
        }
        case 0x22: {
            if (avail < 2 * (size_t)ids + 8)
                return bad(w, rec, "OBJECT ARRAY DUMP runs past the end of its record");
            uint32_t n = mdump_u4(p + ids + 4);
            need = 2 * (size_t)ids + 8 + (size_t)n * ids;
            if (avail < need)
                return bad(w, rec, "OBJECT ARRAY DUMP runs past the end of its record");
            if (w->pass != PASS_FIND)
                rc = obj_array(w, rec, p, n);
            break;
        }
        case 0x23: {
            if (avail < (size_t)ids + 9)
                return bad(w, rec, "PRIMITIVE ARRAY DUMP runs past the end of its record");
            uint32_t n = mdump_u4(p + ids + 4);
            unsigned t = p[ids + 8], sz = t == 2 ? 0 : heap_graph_type_size(g, t);
            if (!sz)
                return bad(w, rec, "PRIMITIVE ARRAY DUMP with a bad element type");
            need = (size_t)ids + 9 + (size_t)n * sz;
            if (avail < need)
                return bad(w, rec, "PRIMITIVE ARRAY DUMP runs past the end of its record");
            uint64_t id = mdump_id(&g->m, p);
            uint32_t node;
            if (w->pass == PASS_IDS)
                rc = add_id(w, id);
            else if (w->pass == PASS_COUNT)
                rc = set_node(w, rec, id, g->prim_class[t],
                              align8(12 + g->oop_size + (uint64_t)n * sz), 0, &node);
            break;
        }
        default:
            return bad(w, rec, "unknown heap dump sub-record tag");
        }
        if (avail < need)
            return bad(w, rec, "GC root sub-record runs past the end of its record");
        if (tag < 0x20 || tag == 0xFF) {
            if (w->pass == PASS_IDS)
                rc = add_root(w, (uint8_t)tag, mdump_id(&g->m, p), thread);
        }
        if (rc)
            return rc;
        p += need;
    }
    mdump_release(&g->m, (uint64_t)(kept - g->m.base), (uint64_t)(end - kept));
    return 0;
}

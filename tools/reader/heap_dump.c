/*
 * heap_dump.c: HEAP DUMP (SEGMENT) sub-records: structure, integrity checks, per-dump statistics.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Heap dumps                                                                                 */

#define DS(P) (&(P)->sum->dumps[(P)->d->idx])

void hp_dump_begin(struct parser *P, bool segmented)
{
    struct hprof_summary *S = P->sum;
    S->dumps = hp_grow(P, S->dumps, &P->dumps_cap, S->ndumps + 1, sizeof *S->dumps);
    struct hprof_dump_summary *ds = &S->dumps[S->ndumps];
    memset(ds, 0, sizeof *ds);
    ds->offset = P->rec_off;
    ds->segmented = segmented;
    struct dump *d = calloc(1, sizeof *d);
    if (!d)
        hp_die(P, "out of memory");
    d->idx = S->ndumps++;
    d->pend_limit = (size_t)1 << 20;
    P->d = d;
    hp_map_init(P, &d->objs, (size_t)1 << 16, true);
    hp_map_init(P, &d->dcls, 1024, false);
}

void hp_dump_free(struct dump *d)
{
    hp_trace_counts_free(&d->traces);
    hp_map_free(&d->objs);
    hp_map_free(&d->dcls);
    VFREE(d->dc);
    VFREE(d->types);
    VFREE(d->lay);
    VFREE(d->refoffs);
    VFREE(d->pend);
    VFREE(d->di);
    VFREE(d->dbytes);
    VFREE(d->da);
    VFREE(d->chain);
    free(d);
}

static int cmp_pend(const void *a, const void *b)
{
    const struct pend *x = a, *y = b;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* Drop pending references whose target is now known; sort and merge the rest */
static void pend_compact(struct dump *d)
{
    size_t j = 0;
    for (size_t i = 0; i < d->pend.n; i++)
        if (!map_get(&d->objs, d->pend.v[i].target, NULL))
            d->pend.v[j++] = d->pend.v[i];
    d->pend.n = j;
    if (d->pend.n > 1)
        qsort(d->pend.v, d->pend.n, sizeof *d->pend.v, cmp_pend);
    j = 0;
    for (size_t i = 0; i < d->pend.n; i++) {
        if (j && d->pend.v[j - 1].target == d->pend.v[i].target) {
            struct pend *q = &d->pend.v[j - 1];
            q->count += d->pend.v[i].count;
            if (d->pend.v[i].off < q->off)
                q->off = d->pend.v[i].off;
        } else {
            d->pend.v[j++] = d->pend.v[i];
        }
    }
    d->pend.n = j;
    d->pend_limit = 2 * j > ((size_t)1 << 20) ? 2 * j : ((size_t)1 << 20);
}

static inline void ref(struct parser *P, struct dump *d, uint64_t target, uint64_t off)
{
    if (target == 0)
        return;
    P->sum->dumps[d->idx].references++;
    if (map_get(&d->objs, target, NULL))
        return;
    if (d->pend.n >= d->pend_limit)
        pend_compact(d);
    struct pend *p = VPUSH(P, d->pend);
    p->target = target;
    p->off = off;
    p->count = 1;
}

static void add_object(struct parser *P, struct dump *d, uint64_t id, uint64_t off,
                       const char *what)
{
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "%s with object id 0", what);
        return;
    }
    if (!hp_map_put(P, &d->objs, id, 0, NULL))
        ERR(P, HK_DUP_OBJECT, off, "%s: object id 0x%" PRIx64 " dumped twice", what, id);
}

static inline void heap_trace(struct parser *P, struct dump *d, uint32_t serial, uint64_t off,
                              const char *what)
{
    if (P->o->lenient_traces || (serial == d->trace_ok && serial != 0))
        return;
    if (serial == 0)
        ERR(P, HK_TRACE, off, "%s: stack trace serial 0", what);
    else if (!map_get(&P->traces, serial, NULL))
        ERR(P, HK_TRACE, off, "%s: stack trace serial %" PRIu32 " not defined by a STACK TRACE",
            what, serial);
    else
        d->trace_ok = serial;
}

static inline void heap_thread(struct parser *P, struct dump *d, uint32_t serial, uint64_t off,
                               const char *what)
{
    if (serial != 0 && serial == d->thread_ok)
        return;
    hp_check_thread(P, serial, off, what);
    d->thread_ok = serial;
}

/* Flattened instance layout of class index ci (this class, then its superclasses).
   Returns the layout index, -1 if a superclass is not dumped (yet), -2 on a cycle. */
static int32_t layout_of(struct parser *P, struct dump *d, size_t ci)
{
    if (d->dc.v[ci].layout >= 0)
        return d->dc.v[ci].layout;
    d->chain.n = 0;
    size_t c = ci;
    for (;;) {
        *VPUSH(P, d->chain) = c;
        uint64_t sup = d->dc.v[c].super;
        if (sup == 0)
            break;
        uint32_t si;
        if (!map_get(&d->dcls, sup, &si))
            return -1;
        if (d->chain.n > d->dc.n)
            return -2;
        c = si;
    }
    struct layout L = {.size = 0, .nrefs = 0, .refs_off = d->refoffs.n};
    uint64_t size = 0;
    for (size_t k = 0; k < d->chain.n; k++) {
        const struct dclass *k_c = &d->dc.v[d->chain.v[k]];
        for (uint32_t f = 0; f < k_c->own_n; f++) {
            uint8_t t = d->types.v[k_c->own_off + f];
            if (t == BT_OBJECT) {
                *VPUSH(P, d->refoffs) = (uint32_t)size;
                L.nrefs++;
            }
            size += P->tsize[t];
        }
    }
    if (size > UINT32_MAX)
        return -2;
    L.size = (uint32_t)size;
    *VPUSH(P, d->lay) = L;
    d->dc.v[ci].layout = (int32_t)(d->lay.n - 1);
    return d->dc.v[ci].layout;
}

/* Field values of one instance of a class with a known layout */
static void instance_fields(struct parser *P, struct dump *d, size_t ci, int32_t li,
                            const uint8_t *data, uint32_t n, uint64_t off)
{
    const struct layout *L = &d->lay.v[li];
    struct dclass *c = &d->dc.v[ci];
    c->count++;
    c->bytes += n;
    if (L->size != n) {
        ERR(P, HK_FIELD_SIZE, off,
            "INSTANCE DUMP of class 0x%" PRIx64 ": %" PRIu32
            " bytes of field values, the class and its superclasses declare %" PRIu32,
            c->id, n, L->size);
        return;
    }
    if (!data)
        return;
    const uint32_t *ro = d->refoffs.v + L->refs_off;
    for (uint32_t i = 0; i < L->nrefs; i++)
        ref(P, d, getid(P, data + ro[i]), off);
}

/* Sub-record reader: n bytes that must lie before end (the end of the enclosing record) */
static inline const uint8_t *sub_rd(struct parser *P, size_t n, uint64_t end)
{
    if (cur(P) + n > end) {
        P->straddle = true;
        return NULL;
    }
    return rd(P, n);
}

static bool sub_class_dump(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 7 * I + 10, end);
    if (!p)
        return false;
    uint64_t cid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint64_t super = getid(P, p + I + 4);
    uint64_t loader = getid(P, p + 2 * I + 4);
    uint64_t signers = getid(P, p + 3 * I + 4);
    uint64_t domain = getid(P, p + 4 * I + 4);
    uint16_t ncp = be16(p + 7 * I + 8);
    DS(P)->classes++;
    add_object(P, d, cid, off, "CLASS DUMP");
    heap_trace(P, d, trace, off, "CLASS DUMP");
    uint32_t ci;
    if (cid && !map_get(&P->class_by_id, cid, &ci))
        ERR(P, HK_CLASS_DUMP, off, "CLASS DUMP 0x%" PRIx64 " has no LOAD CLASS record", cid);
    else if (cid && P->cls.v[ci].unloaded)
        ERR(P, HK_CLASS_DUMP, off,
            "CLASS DUMP 0x%" PRIx64 ": its class (serial %" PRIu32
            ") was unloaded by an earlier UNLOAD CLASS",
            cid, P->cls.v[ci].serial);
    ref(P, d, super, off);
    ref(P, d, loader, off);
    ref(P, d, signers, off);
    ref(P, d, domain, off);
    for (unsigned i = 0; i < ncp; i++) {
        if (!(p = sub_rd(P, 3, end)))
            return false;
        unsigned t = p[2];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off,
                "CLASS DUMP 0x%" PRIx64 ": constant pool entry %u has bad type %u", cid, i, t);
            return false;
        }
        if (!(p = sub_rd(P, P->tsize[t], end)))
            return false;
        if (t == BT_OBJECT)
            ref(P, d, getid(P, p), off);
    }
    if (!(p = sub_rd(P, 2, end)))
        return false;
    unsigned nst = be16(p);
    for (unsigned i = 0; i < nst; i++) {
        if (!(p = sub_rd(P, I + 1, end)))
            return false;
        hp_check_str(P, getid(P, p), false, off, "CLASS DUMP static field name");
        unsigned t = p[I];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off, "CLASS DUMP 0x%" PRIx64 ": static field %u has bad type %u",
                cid, i, t);
            return false;
        }
        if (!(p = sub_rd(P, P->tsize[t], end)))
            return false;
        if (t == BT_OBJECT)
            ref(P, d, getid(P, p), off);
    }
    if (!(p = sub_rd(P, 2, end)))
        return false;
    unsigned nin = be16(p);
    size_t own_off = d->types.n;
    VRESERVE(P, d->types, d->types.n + nin);
    for (unsigned i = 0; i < nin; i++) {
        if (!(p = sub_rd(P, I + 1, end)))
            return false;
        hp_check_str(P, getid(P, p), false, off, "CLASS DUMP instance field name");
        unsigned t = p[I];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off, "CLASS DUMP 0x%" PRIx64 ": instance field %u has bad type %u",
                cid, i, t);
            return false;
        }
        d->types.v[d->types.n++] = (uint8_t)t;
    }
    if (cid && hp_map_put(P, &d->dcls, cid, (uint32_t)d->dc.n, NULL)) {
        struct dclass *c = VPUSH(P, d->dc);
        memset(c, 0, sizeof *c);
        c->id = cid;
        c->super = super;
        c->off = off;
        c->own_off = own_off;
        c->own_n = nin;
        c->layout = -1;
    } else {
        d->types.n = own_off;
    }
    return true;
}

static bool sub_instance(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 2 * I + 8, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint64_t cid = getid(P, p + I + 4);
    uint32_t n = be32(p + 2 * I + 4);
    struct hprof_dump_summary *ds = DS(P);
    ds->instances++;
    ds->instance_bytes += n;
    add_object(P, d, oid, off, "INSTANCE DUMP");
    heap_trace(P, d, trace, off, "INSTANCE DUMP");
    hp_trace_count(P, &d->traces, trace, cid, 0, n);
    if (cur(P) + n > end) {
        P->straddle = true;
        return false;
    }
    const uint8_t *data = NULL;
    if (n <= MAX_NEED) {
        if (!(data = rd(P, n)))
            return false;
    } else if (!hp_skip(P, n)) {
        return false;
    }
    uint32_t ci;
    if (map_get(&d->dcls, cid, &ci)) {
        int32_t li = layout_of(P, d, ci);
        if (li >= 0) {
            instance_fields(P, d, ci, li, data, n, off);
            return true;
        }
    }
    /* class (or a superclass) not dumped yet: check at the end of the dump */
    struct dinst *x = VPUSH(P, d->di);
    x->class_id = cid;
    x->off = off;
    x->nbytes = n;
    x->data_off = d->dbytes.n;
    if (data && n) {
        VRESERVE(P, d->dbytes, d->dbytes.n + n);
        memcpy(d->dbytes.v + d->dbytes.n, data, n);
        d->dbytes.n += n;
    } else {
        x->data_off = SIZE_MAX;
    }
    return true;
}

static bool sub_obj_array(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 2 * I + 8, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint32_t n = be32(p + I + 4);
    uint64_t cid = getid(P, p + I + 8);
    struct hprof_dump_summary *ds = DS(P);
    ds->object_arrays++;
    ds->object_array_elements += n;
    add_object(P, d, oid, off, "OBJECT ARRAY DUMP");
    heap_trace(P, d, trace, off, "OBJECT ARRAY DUMP");
    uint64_t bytes = (uint64_t)n * I;
    hp_trace_count(P, &d->traces, trace, cid, 0, bytes);
    if (cur(P) + bytes > end) {
        P->straddle = true;
        return false;
    }
    uint32_t ci;
    if (map_get(&d->dcls, cid, &ci)) {
        d->dc.v[ci].count++;
        d->dc.v[ci].bytes += bytes;
        d->dc.v[ci].is_array_cls = true;
    } else {
        struct darr *a = VPUSH(P, d->da);
        a->class_id = cid;
        a->off = off;
        a->elems = n;
    }
    uint32_t left = n;
    const uint32_t chunk = (uint32_t)(MAX_NEED / I);
    while (left) {
        uint32_t k = left < chunk ? left : chunk;
        if (!(p = rd(P, (size_t)k * I)))
            return false;
        if (I == 8) {
            for (uint32_t i = 0; i < k; i++)
                ref(P, d, be64(p + 8 * (size_t)i), off);
        } else {
            for (uint32_t i = 0; i < k; i++)
                ref(P, d, be32(p + 4 * (size_t)i), off);
        }
        left -= k;
    }
    return true;
}

static bool sub_prim_array(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, I + 9, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint32_t n = be32(p + I + 4);
    unsigned t = p[I + 8];
    add_object(P, d, oid, off, "PRIMITIVE ARRAY DUMP");
    heap_trace(P, d, trace, off, "PRIMITIVE ARRAY DUMP");
    if (t < 4 || t > 11) {
        ERR(P, HK_SUBRECORD, off, "PRIMITIVE ARRAY DUMP 0x%" PRIx64 ": bad element type %u", oid,
            t);
        return false;
    }
    uint64_t bytes = (uint64_t)n * P->tsize[t];
    hp_trace_count(P, &d->traces, trace, 0, t, bytes);
    struct hprof_dump_summary *ds = DS(P);
    ds->primitive_arrays++;
    ds->primitive_array_bytes += bytes;
    d->prim_count[t]++;
    d->prim_bytes[t] += bytes;
    if (cur(P) + bytes > end) {
        P->straddle = true;
        return false;
    }
    return hp_skip(P, bytes);
}

/* Parse the sub-records of one HEAP DUMP or HEAP DUMP SEGMENT record body */
void hp_dump_body(struct parser *P, uint64_t len)
{
    struct dump *d = P->d;
    unsigned I = P->idsize;
    uint64_t end = cur(P) + len;
    DS(P)->bytes += len;
    if (d->skip_rest) {
        hp_skip(P, len);
        return;
    }
    while (!P->fatal && cur(P) < end) {
        uint64_t off = cur(P);
        const uint8_t *p = rd(P, 1);
        if (!p)
            return;
        unsigned tag = *p;
        bool ok = true;
        int root = -1;
        uint32_t thread = 0;
        P->straddle = false;
        switch (tag) {
        case S_ROOT_UNKNOWN:
        case S_ROOT_STICKY_CLASS:
        case S_ROOT_MONITOR_USED:
            if ((p = sub_rd(P, I, end))) {
                root = tag == S_ROOT_UNKNOWN        ? HR_UNKNOWN
                       : tag == S_ROOT_STICKY_CLASS ? HR_STICKY_CLASS
                                                    : HR_MONITOR_USED;
                ref(P, d, getid(P, p), off);
            }
            break;
        case S_ROOT_JNI_GLOBAL:
            if ((p = sub_rd(P, 2 * I, end))) {
                root = HR_JNI_GLOBAL;
                ref(P, d, getid(P, p), off);
            }
            break;
        case S_ROOT_JNI_LOCAL:
        case S_ROOT_JAVA_FRAME:
            if ((p = sub_rd(P, I + 8, end))) {
                root = tag == S_ROOT_JNI_LOCAL ? HR_JNI_LOCAL : HR_JAVA_FRAME;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                heap_thread(P, d, thread, off, hp_sub_name(tag));
            }
            break;
        case S_ROOT_NATIVE_STACK:
        case S_ROOT_THREAD_BLOCK:
            if ((p = sub_rd(P, I + 4, end))) {
                root = tag == S_ROOT_NATIVE_STACK ? HR_NATIVE_STACK : HR_THREAD_BLOCK;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                heap_thread(P, d, thread, off, hp_sub_name(tag));
            }
            break;
        case S_ROOT_THREAD_OBJECT:
            if ((p = sub_rd(P, I + 8, end))) {
                root = HR_THREAD_OBJECT;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                uint32_t trace = be32(p + I + 4);
                heap_thread(P, d, thread, off, hp_sub_name(tag));
                heap_trace(P, d, trace, off, hp_sub_name(tag));
            }
            break;
        case S_CLASS_DUMP:
            ok = sub_class_dump(P, d, off, end);
            break;
        case S_INSTANCE_DUMP:
            ok = sub_instance(P, d, off, end);
            break;
        case S_OBJ_ARRAY_DUMP:
            ok = sub_obj_array(P, d, off, end);
            break;
        case S_PRIM_ARRAY_DUMP:
            ok = sub_prim_array(P, d, off, end);
            break;
        default:
            ERR(P, HK_SUBRECORD, off,
                "unknown heap dump sub-record tag 0x%02x (rest of the record skipped)", tag);
            ok = false;
        }
        if (root >= 0) {
            DS(P)->roots[root]++;
            DS(P)->roots_total++;
        }
        if (P->fatal)
            return;
        if (P->straddle) {
            ERR(P, HK_STRADDLE, off,
                "%s sub-record crosses the end of its %s record at offset %" PRIu64 " (%" PRIu64
                " bytes left in the record); rest of this dump not parsed",
                hp_sub_name(tag), hprof_tag_name(P->rec_tag), P->rec_off, end - off);
            d->skip_rest = true;
            ok = false;
        } else if (!p && ok) {
            ok = false;
        }
        if (!ok) {
            d->desync = true;
            if (cur(P) < end)
                hp_skip(P, end - cur(P));
            return;
        }
    }
}

static int cmp_class_row(const void *a, const void *b)
{
    const struct hprof_class_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

char *hp_xstrndup(struct parser *P, const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (!r)
        hp_die(P, "out of memory");
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

char *hp_class_name(struct parser *P, uint64_t cid, unsigned prim)
{
    uint32_t ci;
    const char *s;
    size_t n;
    char buf[40];
    if (prim) {
        snprintf(buf, sizeof buf, "%s[]", hprof_basic_type_name(prim));
        return hp_xstrndup(P, buf, strlen(buf));
    }
    if (map_get(&P->class_by_id, cid, &ci) && hp_str_get(P, P->cls.v[ci].name, &s, &n))
        return hp_xstrndup(P, s, n);
    snprintf(buf, sizeof buf, "0x%" PRIx64, cid);
    return hp_xstrndup(P, buf, strlen(buf));
}

static void dump_top_classes(struct parser *P, struct dump *d)
{
    struct hprof_dump_summary *ds = DS(P);
    size_t cand = 0;
    for (size_t i = 0; i < d->dc.n; i++)
        cand += d->dc.v[i].count > 0;
    for (int t = 4; t < 12; t++)
        cand += d->prim_count[t] > 0;
    bool visit = P->o->visit && P->o->visit->heap_dump;
    if (visit && !cand)
        P->o->visit->heap_dump(P->o->visit->ctx, ds, NULL, 0);
    if (!cand || (!P->o->top_n && !visit))
        return;
    struct hprof_class_row *rows = calloc(cand, sizeof *rows);
    if (!rows)
        hp_die(P, "out of memory");
    ds->top = rows; /* freed with the summary even if hp_die() strikes below */
    size_t n = 0;
    for (size_t i = 0; i < d->dc.n; i++) {
        const struct dclass *c = &d->dc.v[i];
        if (c->count == 0)
            continue;
        rows[n] = (struct hprof_class_row){.class_id = c->id, .count = c->count, .bytes = c->bytes};
        rows[n].name = hp_class_name(P, c->id, 0);
        ds->ntop = ++n;
    }
    for (unsigned t = 4; t < 12; t++) {
        if (d->prim_count[t] == 0)
            continue;
        rows[n] = (struct hprof_class_row){.count = d->prim_count[t], .bytes = d->prim_bytes[t]};
        rows[n].name = hp_class_name(P, 0, t);
        ds->ntop = ++n;
    }
    qsort(rows, n, sizeof *rows, cmp_class_row);
    if (visit)
        P->o->visit->heap_dump(P->o->visit->ctx, ds, rows, n);
    size_t keep = n < P->o->top_n ? n : P->o->top_n;
    for (size_t i = keep; i < n; i++)
        free(rows[i].name);
    ds->ntop = keep;
}

void hp_dump_finish(struct parser *P)
{
    struct dump *d = P->d;
    struct hprof_dump_summary *ds = DS(P);
    if (!d->desync && !P->fatal) {
        ds->complete = true;
        /* instances whose class layout was not known when they were read */
        for (size_t i = 0; i < d->di.n; i++) {
            struct dinst *x = &d->di.v[i];
            uint32_t ci;
            if (!map_get(&d->dcls, x->class_id, &ci)) {
                ERR(P, HK_INSTANCE, x->off,
                    "INSTANCE DUMP of class 0x%" PRIx64 ", which has no CLASS DUMP", x->class_id);
                continue;
            }
            int32_t li = layout_of(P, d, ci);
            if (li < 0) {
                if (d->dc.v[ci].layout != -2) {
                    ERR(P, HK_CLASS_DUMP, d->dc.v[ci].off,
                        "CLASS DUMP 0x%" PRIx64 ": superclass chain %s; instances not checked",
                        d->dc.v[ci].id,
                        li == -1 ? "reaches a class with no CLASS DUMP"
                                 : "has a cycle or is too large");
                    d->dc.v[ci].layout = -2;
                }
                continue;
            }
            instance_fields(P, d, ci, li,
                            x->data_off == SIZE_MAX ? NULL : d->dbytes.v + x->data_off, x->nbytes,
                            x->off);
        }
        for (size_t i = 0; i < d->da.n; i++) {
            struct darr *a = &d->da.v[i];
            uint32_t ci;
            if (!map_get(&d->dcls, a->class_id, &ci)) {
                ERR(P, HK_INSTANCE, a->off,
                    "OBJECT ARRAY DUMP of array class 0x%" PRIx64 ", which has no CLASS DUMP",
                    a->class_id);
                continue;
            }
            d->dc.v[ci].count++;
            d->dc.v[ci].bytes += a->elems * P->idsize;
        }
        pend_compact(d);
        uint64_t dangling = 0;
        struct pend ex[DANGLING_EXAMPLES];
        size_t nex = 0;
        for (size_t i = 0; i < d->pend.n; i++) {
            struct pend *q = &d->pend.v[i];
            dangling += q->count;
            /* keep the examples with the smallest offsets */
            size_t at = nex;
            while (at > 0 && ex[at - 1].off > q->off)
                at--;
            if (at < DANGLING_EXAMPLES) {
                size_t last = nex < DANGLING_EXAMPLES ? nex : DANGLING_EXAMPLES - 1;
                memmove(&ex[at + 1], &ex[at], (last - at) * sizeof *ex);
                ex[at] = *q;
                if (nex < DANGLING_EXAMPLES)
                    nex++;
            }
        }
        ds->dangling = dangling;
        if (dangling) {
            char buf[600];
            size_t bl = 0;
            for (size_t i = 0; i < nex && bl < sizeof buf; i++)
                bl += (size_t)snprintf(buf + bl, sizeof buf - bl,
                                       "%s0x%" PRIx64 " from the sub-record at offset %" PRIu64,
                                       i ? ", " : "", ex[i].target, ex[i].off);
            hp_viol(P, dangling <= P->o->allow_dangling ? HPROF_WARNING : HPROF_ERROR, HK_DANGLING,
                    ex[0].off,
                    "heap dump at offset %" PRIu64 ": %" PRIu64
                    " dangling references to %zu distinct ids not in the dump (allowed: %" PRIu64
                    "), e.g. %s",
                    ds->offset, dangling, d->pend.n, P->o->allow_dangling, buf);
        }
    }
    dump_top_classes(P, d);
    hp_trace_rows(P, &d->traces, DS(P));
    hp_dump_free(d);
    P->d = NULL;
}

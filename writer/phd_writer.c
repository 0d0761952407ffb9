/* OpenJ9 portable heap dump (PHD) version 6, 64-bit, as the current OpenJ9 VM writes it
 * (doc/phd.md; byte layout in the PHD notes of the spec folder).
 *
 * A PHD file holds one heap dump and nothing else: begin writes nothing, the first
 * heap_dump_begin writes the header, its heap_dump_end the end-of-dump tag; a later dump is
 * dropped with one message on stderr. Every other record (strings, traces, roots, sites, CPU,
 * monitors) has no place in the format and is ignored.
 *
 * Addresses: openj9_common_address() (writer_internal.h), unique, multiples of the 4-byte unit,
 * every difference fits a signed 64-bit gap. A class's address is that of its class record.
 *
 * No hash codes are written (flags 5: 64-bit words, J9 dump; no "all hashed" flag, no
 * per-record hash bits). Records use the smallest form the notes allow: short object records
 * for a class in the 4-slot class cache, medium for up to 7 references, long otherwise;
 * primitive arrays as tag 0x20; object arrays as tag 8 with their true length. */
#include "writer.h"
#include "writer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHD_VERSION 6
#define PHD_FLAGS 5 /* 1 = 64-bit words, 4 = J9 dump */
#define PHD_UNIT 4u
#define PHD_FULL_VERSION "hprof agent (JVMTI), PHD writer 1"

struct phd_writer {
    struct hprof_writer w;
    bool in_dump, dumped;
    bool extra_dump_reported, big_id_reported, nomem_reported;
    uint64_t prev;     /* address of the previous record */
    uint64_t cache[4]; /* class cache: class addresses, 0 = empty */
    unsigned next_slot;
    int64_t *refs; /* reference deltas of the record being written */
    size_t refs_cap;
    uint8_t *buf; /* one record */
    size_t buf_cap;
    hprof_id *ids; /* the object ids a record refers to, before they become deltas */
    size_t ids_cap;
};

static struct phd_writer *pw(struct hprof_writer *w)
{
    return (struct phd_writer *)w;
}

/* ---- addresses ----------------------------------------------------------------------- */

static uint64_t phd_address(struct phd_writer *p, hprof_id id)
{
    return openj9_common_address(id, &p->big_id_reported);
}

/* ---- encoding ------------------------------------------------------------------------ */

/* Size code of a signed value, by magnitude as the VM picks it (-128 takes 2 bytes). */
static unsigned signed_code(int64_t v)
{
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return m < 0x80 ? 0 : m < 0x8000 ? 1 : m < 0x80000000u ? 2 : 3;
}

/* Size code of a length read unsigned (u1, u2) or as s4/s8. */
static unsigned length_code(uint64_t n)
{
    return n <= 0xFF ? 0 : n <= 0xFFFF ? 1 : n <= 0x7FFFFFFF ? 2 : 3;
}

static void nomem(struct phd_writer *p)
{
    if (!p->nomem_reported) {
        p->nomem_reported = true;
        fprintf(stderr, "HPROF ERROR: PHD output: out of memory; records are missing\n");
    }
}

/* buf (of *cap elements of elem bytes) regrown to hold need > *cap elements, at least min_cap:
 * the new buffer, or NULL when out of memory (buf and *cap are then unchanged). */
static void *grow(void *buf, size_t *cap, size_t need, size_t min_cap, size_t elem)
{
    size_t c = need < min_cap ? min_cap : need;
    void *b = realloc(buf, c * elem);
    if (b)
        *cap = c;
    return b;
}

/* Room for a record of bytes, nrefs reference deltas and nids ids (arrays need no ids). */
static bool reserve(struct phd_writer *p, size_t bytes, size_t nrefs, size_t nids)
{
    if (bytes > p->buf_cap) {
        uint8_t *b = grow(p->buf, &p->buf_cap, bytes, 4096, 1);
        if (!b)
            goto nomem;
        p->buf = b;
    }
    if (nids > p->ids_cap) {
        hprof_id *r = grow(p->ids, &p->ids_cap, nids, 256, sizeof *r);
        if (!r)
            goto nomem;
        p->ids = r;
    }
    if (nrefs > p->refs_cap) {
        int64_t *r = grow(p->refs, &p->refs_cap, nrefs, 256, sizeof *r);
        if (!r)
            goto nomem;
        p->refs = r;
    }
    return true;
nomem:
    nomem(p);
    return false;
}

static uint8_t *put_be(uint8_t *q, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        q[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    return q + bytes;
}

static uint8_t *put_code(uint8_t *q, int64_t v, unsigned code)
{
    return put_be(q, (uint64_t)v, 1u << code);
}

/* The signed distance in units from the previous record; the record becomes the previous. */
static int64_t take_gap(struct phd_writer *p, uint64_t addr)
{
    int64_t gap = (int64_t)(addr - p->prev) / (int64_t)PHD_UNIT;
    p->prev = addr;
    return gap;
}

/* refs[i] = (target - addr) / unit for the non-zero ids; returns how many and the size code
 * that covers them all. IBM's reader drops a first reference that equals the record's class
 * address, so none may come first: another reference goes first where there is one; when
 * every reference is to the class, one more copy of it goes first, for the reader to drop
 * (it then lists exactly the record's references). refs has room for nids + 1. */
static size_t collect_refs(struct phd_writer *p, uint64_t addr, uint64_t class_addr,
                           const hprof_id *ids, size_t nids, bool reverse, unsigned *code)
{
    size_t n = 0;
    unsigned c = 0;
    for (size_t k = 0; k < nids; k++) {
        hprof_id id = ids[reverse ? nids - 1 - k : k];
        if (id == 0)
            continue;
        int64_t d = (int64_t)(phd_address(p, id) - addr) / (int64_t)PHD_UNIT;
        p->refs[n++] = d;
        unsigned dc = signed_code(d);
        if (dc > c)
            c = dc;
    }
    int64_t cls = (int64_t)(class_addr - addr) / (int64_t)PHD_UNIT;
    if (n > 0 && p->refs[0] == cls) {
        size_t k = 1;
        while (k < n && p->refs[k] == cls)
            k++;
        if (k < n) {
            p->refs[0] = p->refs[k];
            p->refs[k] = cls;
        } else {
            p->refs[n++] = cls; /* all equal: the copy that is dropped */
        }
    }
    *code = c;
    return n;
}

static uint8_t *put_refs(struct phd_writer *p, uint8_t *q, size_t n, unsigned code)
{
    for (size_t k = 0; k < n; k++)
        q = put_code(q, p->refs[k], code);
    return q;
}

static void emit(struct phd_writer *p, const uint8_t *end)
{
    sink_write(p->w.sink, p->buf, (size_t)(end - p->buf));
}

static bool dump_ok(struct phd_writer *p)
{
    return p->in_dump;
}

/* ---- records ------------------------------------------------------------------------- */

static void phd_heap_dump_begin(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals; /* not written in this format */
    struct phd_writer *p = pw(w);
    if (p->in_dump)
        return;
    if (p->dumped) {
        if (!p->extra_dump_reported) {
            p->extra_dump_reported = true;
            fprintf(stderr, "HPROF WARNING: a PHD file holds one heap dump: this and later "
                            "heap dumps are not written (the first one is in the file)\n");
        }
        return;
    }
    static const char magic[] = "portable heap dump";
    sink_u2(w->sink, (uint16_t)(sizeof magic - 1));
    sink_write(w->sink, magic, sizeof magic - 1);
    sink_u4(w->sink, PHD_VERSION);
    sink_u4(w->sink, PHD_FLAGS);
    sink_u1(w->sink, 1); /* start of header */
    sink_u1(w->sink, 4); /* full version */
    sink_u2(w->sink, (uint16_t)strlen(PHD_FULL_VERSION));
    sink_write(w->sink, PHD_FULL_VERSION, strlen(PHD_FULL_VERSION));
    sink_u1(w->sink, 2); /* end of header */
    sink_u1(w->sink, 2); /* start of dump */
    p->in_dump = true;
    p->prev = 0;
    memset(p->cache, 0, sizeof p->cache);
    p->next_slot = 0;
}

static void phd_heap_dump_end(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals;
    struct phd_writer *p = pw(w);
    if (!p->in_dump)
        return;
    sink_u1(w->sink, 3);
    p->in_dump = false;
    p->dumped = true;
    sink_flush(w->sink);
}

static void phd_instance_dump(struct hprof_writer *w, const struct hprof_instance_dump *o)
{
    struct phd_writer *p = pw(w);
    if (!dump_ok(p))
        return;
    size_t nobj = 0;
    for (size_t i = 0; i < o->nvalues; i++)
        nobj += o->fields[i].type == HPROF_TYPE_OBJECT;
    if (!reserve(p, 32 + 8 * nobj, nobj + 1, nobj + 1))
        return;
    uint64_t addr = phd_address(p, o->object_id), cls = phd_address(p, o->class_id);
    hprof_id *ids = p->ids;
    size_t k = 0;
    for (size_t i = 0; i < o->nvalues; i++)
        if (o->fields[i].type == HPROF_TYPE_OBJECT)
            ids[k++] = o->values[i].obj;
    unsigned rc;
    size_t n = collect_refs(p, addr, cls, ids, k, false, &rc);

    int64_t gap = take_gap(p, addr);
    unsigned gc = signed_code(gap);
    int slot = -1;
    for (int s = 0; s < 4; s++)
        if (p->cache[s] == cls && cls != 0)
            slot = s;
    uint8_t *q = p->buf;
    if (n <= 3 && gc <= 1 && slot >= 0) {
        *q++ = (uint8_t)(0x80 | (unsigned)slot << 5 | (unsigned)n << 3 | gc << 2 | rc);
        q = put_code(q, gap, gc);
        q = put_refs(p, q, n, rc);
        emit(p, q);
        return;
    }
    if (n <= 7 && gc <= 1) {
        *q++ = (uint8_t)(0x40 | (unsigned)n << 3 | gc << 2 | rc);
        q = put_code(q, gap, gc);
        q = put_be(q, cls, 8);
    } else {
        *q++ = 4;
        *q++ = (uint8_t)(gc << 6 | rc << 4 | 0x01);
        q = put_code(q, gap, gc);
        q = put_be(q, cls, 8);
        q = put_be(q, n, 4);
    }
    q = put_refs(p, q, n, rc);
    emit(p, q);
    p->cache[p->next_slot] = cls;
    p->next_slot = (p->next_slot + 1) % 4;
}

/* Instance size in 4-byte units, as a u4. */
static uint32_t size_units(uint32_t bytes)
{
    return bytes / 4;
}

static void phd_obj_array_dump(struct hprof_writer *w, const struct hprof_obj_array_dump *a)
{
    struct phd_writer *p = pw(w);
    if (!dump_ok(p) || !reserve(p, 48 + 8 * (size_t)a->nelems, (size_t)a->nelems + 1, 0))
        return;
    uint64_t addr = phd_address(p, a->array_id);
    uint64_t elem = phd_address(p, a->elem_class_id ? a->elem_class_id : a->class_id);
    unsigned rc;
    /* reversed: IBM's reader returns them in reverse file order, so it lists index order */
    size_t n = collect_refs(p, addr, elem, a->elems, a->nelems, true, &rc);
    int64_t gap = take_gap(p, addr);
    unsigned gc = signed_code(gap);
    uint8_t *q = p->buf;
    *q++ = 8;
    *q++ = (uint8_t)(gc << 6 | rc << 4 | 0x01);
    q = put_code(q, gap, gc);
    q = put_be(q, elem, 8);
    q = put_be(q, n, 4);
    q = put_refs(p, q, n, rc);
    q = put_be(q, a->nelems, 4);
    q = put_be(q, size_units(a->size), 4);
    emit(p, q);
}

/* hprof basic type -> PHD primitive type code; -1 for none. */
static int prim_code(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_BOOLEAN:
        return 0;
    case HPROF_TYPE_CHAR:
        return 1;
    case HPROF_TYPE_FLOAT:
        return 2;
    case HPROF_TYPE_DOUBLE:
        return 3;
    case HPROF_TYPE_BYTE:
        return 4;
    case HPROF_TYPE_SHORT:
        return 5;
    case HPROF_TYPE_INT:
        return 6;
    case HPROF_TYPE_LONG:
        return 7;
    case HPROF_TYPE_OBJECT:
        break;
    }
    return -1;
}

static void phd_prim_array_dump(struct hprof_writer *w, const struct hprof_prim_array_dump *a)
{
    struct phd_writer *p = pw(w);
    int t = prim_code(a->elem_type);
    if (!dump_ok(p) || t < 0 || !reserve(p, 32, 0, 0))
        return;
    int64_t gap = take_gap(p, phd_address(p, a->array_id));
    unsigned c = signed_code(gap), lc = length_code(a->nelems);
    if (lc > c)
        c = lc;
    uint8_t *q = p->buf;
    *q++ = (uint8_t)(0x20 | (unsigned)t << 2 | c);
    q = put_code(q, gap, c);
    q = put_code(q, (int64_t)a->nelems, c);
    q = put_be(q, size_units(a->size), 4);
    emit(p, q);
}

static void phd_class_dump(struct hprof_writer *w, const struct hprof_class_dump *c)
{
    struct phd_writer *p = pw(w);
    size_t nids = c->nstatics + c->ncp + 3;
    if (!dump_ok(p) || !reserve(p, 64 + 0xFFFF + 8 * nids, nids, nids))
        return;
    hprof_id *ids = p->ids;
    size_t k = 0;
    for (size_t i = 0; i < c->nstatics; i++)
        if (c->statics[i].field.type == HPROF_TYPE_OBJECT)
            ids[k++] = c->statics[i].value.obj;
    for (size_t i = 0; i < c->ncp; i++)
        if (c->cp[i].type == HPROF_TYPE_OBJECT)
            ids[k++] = c->cp[i].value.obj;
    ids[k++] = c->loader_id;
    ids[k++] = c->signers_id;
    ids[k++] = c->domain_id;
    uint64_t addr = phd_address(p, c->class_id);
    unsigned rc;
    size_t n = collect_refs(p, addr, 0, ids, k, false, &rc);
    int64_t gap = take_gap(p, addr);
    unsigned gc = signed_code(gap);
    uint8_t *q = p->buf;
    *q++ = 6;
    *q++ = (uint8_t)(gc << 6 | rc << 4);
    q = put_code(q, gap, gc);
    q = put_be(q, c->heap_instance_size > INT32_MAX ? INT32_MAX : c->heap_instance_size, 4);
    q = put_be(q, c->super_id ? phd_address(p, c->super_id) : 0, 8);
    char *name = (char *)q + 2;
    size_t len = openj9_common_class_name(c->name ? c->name : "?", name, 0x10000);
    q = put_be(q, len, 2) + len;
    q = put_be(q, n, 4);
    q = put_refs(p, q, n, rc);
    emit(p, q);
}

/* ---- the rest of the interface has no place in a PHD file: left out (NULL) ------------- */

static void phd_close(struct hprof_writer *w)
{
    struct phd_writer *p = pw(w);
    phd_heap_dump_end(w, NULL); /* close inside a dump ends it */
    sink_close(w->sink);
    free(p->buf);
    free(p->refs);
    free(p->ids);
    free(p);
}

static const struct hprof_writer_ops phd_ops = {
    .name = "phd",
    .heap_dump_begin = phd_heap_dump_begin,
    .class_dump = phd_class_dump,
    .instance_dump = phd_instance_dump,
    .obj_array_dump = phd_obj_array_dump,
    .prim_array_dump = phd_prim_array_dump,
    .heap_dump_end = phd_heap_dump_end,
    .close = phd_close,
};

struct hprof_writer *phd_writer_new(struct hprof_sink *sink)
{
    struct phd_writer *p = calloc(1, sizeof *p);
    if (!p) {
        sink_close(sink);
        return NULL;
    }
    writer_common_init(&p->w, &phd_ops, sink);
    return &p->w;
}

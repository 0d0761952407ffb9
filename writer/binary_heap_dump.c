/* HPROF binary heap dumps: HEAP DUMP SEGMENT records and their sub-records, framed as
 * HotSpot's dumper frames them.
 *
 * Sub-records are written straight into one segment buffer of HPROF_SEGMENT_LIMIT bytes
 * (allocated once, at the first heap dump); when the next sub-record would not fit, the
 * buffer goes out as a HEAP DUMP SEGMENT record. A sub-record larger than the limit becomes a
 * segment of its own: its header is written with the exact length and its bytes stream
 * through the same buffer. No allocation per record, no formatted printing: array elements
 * are byte-swapped in bulk loops. */
#include "binary_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* n elements of esz bytes from host order to big-endian. */
static void copy_be(uint8_t *restrict dst, const uint8_t *restrict src, size_t n, unsigned esz)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy(dst, src, n * esz);
#else
    switch (esz) {
    case 2:
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, src + 2 * i, 2);
            v = __builtin_bswap16(v);
            memcpy(dst + 2 * i, &v, 2);
        }
        break;
    case 4:
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, src + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(dst + 4 * i, &v, 4);
        }
        break;
    case 8:
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, src + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(dst + 8 * i, &v, 8);
        }
        break;
    default:
        memcpy(dst, src, n * esz);
        break;
    }
#endif
}

/* ---- heap dump: segments and sub-records --------------------------------------------- */

uint32_t binary_heap_dump_array_max_elems(uint32_t nelems, unsigned elem_size, unsigned header_size)
{
    /* A record's u4 length counts its body only: a sub-record that is a segment of its own
     * may fill all of it, as in HotSpot's dumper (max_juint - header size). */
    const uint64_t max_record = (uint64_t)UINT32_MAX;
    if (elem_size == 0)
        return nelems;
    if (header_size >= max_record)
        return 0;
    uint64_t most = (max_record - header_size) / elem_size;
    return (uint64_t)nelems > most ? (uint32_t)most : nelems;
}

/* Writes the pending sub-records as one HEAP DUMP SEGMENT. */
void binary_heap_dump_flush(struct binary_writer *b)
{
    if (b->seg_len == 0)
        return;
    binary_writer_header(&b->w, HPROF_TAG_HEAP_DUMP_SEGMENT, (uint32_t)b->seg_len);
    sink_write(b->w.sink, b->seg, b->seg_len);
    b->seg_len = 0;
}

/* Starts a sub-record of exactly n bytes. False when it cannot be written (not in a dump,
 * no buffer). */
static bool sub_open(struct binary_writer *b, uint64_t n)
{
    if (!b->in_dump) {
        if (!b->misuse_reported) {
            b->misuse_reported = true;
            fprintf(stderr, "HPROF ERROR: internal: a heap dump record was written outside a "
                            "heap dump; dropped\n");
        }
        return false;
    }
    if (!b->seg)
        return false;
    if (b->seg_len + n > HPROF_SEGMENT_LIMIT)
        binary_heap_dump_flush(b);
    if (n > HPROF_SEGMENT_LIMIT) {
        /* A segment of its own; n <= UINT32_MAX - 9 by construction (array capping). */
        binary_writer_header(&b->w, HPROF_TAG_HEAP_DUMP_SEGMENT, (uint32_t)n);
        b->streaming = true;
    }
    return true;
}

static void sub_close(struct binary_writer *b)
{
    if (b->streaming) {
        sink_write(b->w.sink, b->seg, b->seg_len);
        b->seg_len = 0;
        b->streaming = false;
    }
}

/* Room for k more bytes (k <= 16). Only a streamed sub-record ever needs to drain: a
 * buffered one was given its room by sub_open. */
static inline uint8_t *room(struct binary_writer *b, size_t k)
{
    if (HPROF_SEGMENT_LIMIT - b->seg_len < k) {
        sink_write(b->w.sink, b->seg, b->seg_len);
        b->seg_len = 0;
    }
    return b->seg + b->seg_len;
}

static inline void s_u1(struct binary_writer *b, uint8_t v)
{
    put_u1(room(b, 1), v);
    b->seg_len += 1;
}

static inline void s_u2(struct binary_writer *b, uint16_t v)
{
    put_u2(room(b, 2), v);
    b->seg_len += 2;
}

static inline void s_u4(struct binary_writer *b, uint32_t v)
{
    put_u4(room(b, 4), v);
    b->seg_len += 4;
}

static inline void s_u8(struct binary_writer *b, uint64_t v)
{
    put_u8(room(b, 8), v);
    b->seg_len += 8;
}

static void s_value(struct binary_writer *b, enum hprof_basic_type t, const union hprof_value *v)
{
    switch (t) {
    case HPROF_TYPE_OBJECT:
        s_u8(b, v->obj);
        break;
    case HPROF_TYPE_BOOLEAN:
        s_u1(b, v->z);
        break;
    case HPROF_TYPE_BYTE:
        s_u1(b, (uint8_t)v->b);
        break;
    case HPROF_TYPE_CHAR:
        s_u2(b, v->c);
        break;
    case HPROF_TYPE_SHORT:
        s_u2(b, (uint16_t)v->s);
        break;
    case HPROF_TYPE_FLOAT:
        s_u4(b, float_bits(v->f));
        break;
    case HPROF_TYPE_INT:
        s_u4(b, (uint32_t)v->i);
        break;
    case HPROF_TYPE_DOUBLE:
        s_u8(b, double_bits(v->d));
        break;
    case HPROF_TYPE_LONG:
        s_u8(b, (uint64_t)v->j);
        break;
    }
}

/* n elements of esz bytes (host order) in big-endian, through the buffer. */
static void s_elems(struct binary_writer *b, const void *src, size_t n, unsigned esz)
{
    const uint8_t *p = src;
    while (n > 0) {
        size_t fit = (HPROF_SEGMENT_LIMIT - b->seg_len) / esz;
        if (fit == 0) {
            room(b, esz); /* streamed: drains */
            continue;
        }
        if (fit > n)
            fit = n;
        copy_be(b->seg + b->seg_len, p, fit, esz);
        b->seg_len += fit * esz;
        p += fit * esz;
        n -= fit;
    }
}

void binary_heap_dump_begin(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals; /* not written in this format */
    struct binary_writer *b = bw(w);
    if (!binary_writer_top_level_ok(w, "HEAP DUMP BEGIN"))
        return;
    if (!b->seg) {
        b->seg = malloc(HPROF_SEGMENT_LIMIT);
        if (!b->seg && !b->nomem_reported) {
            b->nomem_reported = true;
            fprintf(stderr, "HPROF ERROR: out of memory for the heap dump buffer; "
                            "the heap dump is written empty\n");
        }
    }
    b->in_dump = true;
    b->seg_len = 0;
}

void binary_heap_dump_end(struct hprof_writer *w, const struct hprof_heap_totals *totals)
{
    (void)totals;
    struct binary_writer *b = bw(w);
    if (!b->in_dump)
        return;
    binary_heap_dump_flush(b);
    binary_writer_header(w, HPROF_TAG_HEAP_DUMP_END, 0);
    b->in_dump = false;
}

void binary_heap_dump_root(struct hprof_writer *w, const struct hprof_root *r)
{
    struct binary_writer *b = bw(w);
    unsigned size;
    switch (r->kind) {
    case HPROF_ROOT_UNKNOWN:
    case HPROF_ROOT_STICKY_CLASS:
    case HPROF_ROOT_MONITOR_USED:
        size = 9;
        break;
    case HPROF_ROOT_NATIVE_STACK:
    case HPROF_ROOT_THREAD_BLOCK:
        size = 13;
        break;
    case HPROF_ROOT_JNI_GLOBAL:
    case HPROF_ROOT_JNI_LOCAL:
    case HPROF_ROOT_JAVA_FRAME:
    case HPROF_ROOT_THREAD_OBJECT:
        size = 17;
        break;
    default:
        return; /* not a root kind */
    }
    if (!sub_open(b, size))
        return;
    uint8_t *p = b->seg + b->seg_len;
    p = put_u1(p, (uint8_t)r->kind);
    p = put_u8(p, r->object);
    switch (r->kind) {
    case HPROF_ROOT_JNI_GLOBAL:
        put_u8(p, r->jni_ref);
        break;
    case HPROF_ROOT_JNI_LOCAL:
    case HPROF_ROOT_JAVA_FRAME:
        p = put_u4(p, r->thread_serial);
        put_u4(p, (uint32_t)r->frame_depth);
        break;
    case HPROF_ROOT_NATIVE_STACK:
    case HPROF_ROOT_THREAD_BLOCK:
        put_u4(p, r->thread_serial);
        break;
    case HPROF_ROOT_THREAD_OBJECT:
        p = put_u4(p, r->thread_serial);
        put_u4(p, r->trace_serial);
        break;
    default:
        break;
    }
    b->seg_len += size;
}

#define U2_MAX 65535u

void binary_heap_dump_class(struct hprof_writer *w, const struct hprof_class_dump *c)
{
    struct binary_writer *b = bw(w);
    /* The counts are u2 in the format; a class never has more. */
    size_t ncp = c->ncp > U2_MAX ? U2_MAX : c->ncp;
    size_t nst = c->nstatics > U2_MAX ? U2_MAX : c->nstatics;
    size_t nfi = c->nfields > U2_MAX ? U2_MAX : c->nfields;
    uint64_t size = 1 + 8 + 4 + 6 * 8 + 4 + 2 + 2 + 2 + 9 * (uint64_t)nfi;
    for (size_t i = 0; i < ncp; i++)
        size += 3 + writer_common_type_size(c->cp[i].type);
    for (size_t i = 0; i < nst; i++)
        size += 9 + writer_common_type_size(c->statics[i].field.type);
    if (!sub_open(b, size))
        return;
    s_u1(b, HPROF_SUB_CLASS_DUMP);
    s_u8(b, c->class_id);
    s_u4(b, c->trace_serial);
    s_u8(b, c->super_id);
    s_u8(b, c->loader_id);
    s_u8(b, c->signers_id);
    s_u8(b, c->domain_id);
    s_u8(b, 0);
    s_u8(b, 0);
    s_u4(b, c->instance_size);
    s_u2(b, (uint16_t)ncp);
    for (size_t i = 0; i < ncp; i++) {
        s_u2(b, c->cp[i].index);
        s_u1(b, (uint8_t)c->cp[i].type);
        s_value(b, c->cp[i].type, &c->cp[i].value);
    }
    s_u2(b, (uint16_t)nst);
    for (size_t i = 0; i < nst; i++) {
        const struct hprof_static_field *sf = &c->statics[i];
        s_u8(b, sf->field.name_id);
        s_u1(b, (uint8_t)sf->field.type);
        s_value(b, sf->field.type, &sf->value);
    }
    s_u2(b, (uint16_t)nfi);
    for (size_t i = 0; i < nfi; i++) {
        s_u8(b, c->fields[i].name_id);
        s_u1(b, (uint8_t)c->fields[i].type);
    }
    sub_close(b);
}

/* Value bytes of a basic type, inlined for the per-field loops of INSTANCE DUMP. */
static inline unsigned value_size(enum hprof_basic_type t)
{
    switch (t) {
    case HPROF_TYPE_BOOLEAN:
    case HPROF_TYPE_BYTE:
        return 1;
    case HPROF_TYPE_CHAR:
    case HPROF_TYPE_SHORT:
        return 2;
    case HPROF_TYPE_FLOAT:
    case HPROF_TYPE_INT:
        return 4;
    default:
        return 8;
    }
}

static inline uint8_t *put_value(uint8_t *p, enum hprof_basic_type t, const union hprof_value *v)
{
    switch (t) {
    case HPROF_TYPE_BOOLEAN:
        return put_u1(p, v->z);
    case HPROF_TYPE_BYTE:
        return put_u1(p, (uint8_t)v->b);
    case HPROF_TYPE_CHAR:
        return put_u2(p, v->c);
    case HPROF_TYPE_SHORT:
        return put_u2(p, (uint16_t)v->s);
    case HPROF_TYPE_FLOAT:
        return put_u4(p, float_bits(v->f));
    case HPROF_TYPE_INT:
        return put_u4(p, (uint32_t)v->i);
    case HPROF_TYPE_DOUBLE:
        return put_u8(p, double_bits(v->d));
    default: /* OBJECT, LONG */
        return put_u8(p, (uint64_t)v->j);
    }
}

void binary_heap_dump_instance(struct hprof_writer *w, const struct hprof_instance_dump *o)
{
    struct binary_writer *b = bw(w);
    uint64_t nbytes = 0;
    for (size_t i = 0; i < o->nvalues; i++)
        nbytes += value_size(o->fields[i].type);
    if (nbytes > UINT32_MAX - HPROF_RECORD_HEADER_SIZE - 25)
        return; /* impossible for a Java object (at most 65535 fields per class) */
    if (!sub_open(b, 25 + nbytes))
        return;
    if (!b->streaming) {
        /* The common case: straight into the buffer, which has room for all of it. */
        uint8_t *p = b->seg + b->seg_len;
        p = put_u1(p, HPROF_SUB_INSTANCE_DUMP);
        p = put_u8(p, o->object_id);
        p = put_u4(p, o->trace_serial);
        p = put_u8(p, o->class_id);
        p = put_u4(p, (uint32_t)nbytes);
        for (size_t i = 0; i < o->nvalues; i++)
            p = put_value(p, o->fields[i].type, &o->values[i]);
        b->seg_len = (size_t)(p - b->seg);
        return;
    }
    s_u1(b, HPROF_SUB_INSTANCE_DUMP);
    s_u8(b, o->object_id);
    s_u4(b, o->trace_serial);
    s_u8(b, o->class_id);
    s_u4(b, (uint32_t)nbytes);
    for (size_t i = 0; i < o->nvalues; i++)
        s_value(b, o->fields[i].type, &o->values[i]);
    sub_close(b);
}

static void report_truncation(struct binary_writer *b, hprof_id id, const char *type,
                              uint32_t nelems, uint32_t kept)
{
    if (b->truncation_reported)
        return;
    b->truncation_reported = true;
    fprintf(stderr,
            "HPROF WARNING: array %llx (%s, %u elements) does not fit in one HPROF record; "
            "only its first %u elements are written\n",
            (unsigned long long)id, type, nelems, kept);
}

void binary_heap_dump_obj_array(struct hprof_writer *w, const struct hprof_obj_array_dump *a)
{
    struct binary_writer *b = bw(w);
    uint32_t n = binary_heap_dump_array_max_elems(a->nelems, 8, HPROF_OBJ_ARRAY_HEADER_SIZE);
    if (!sub_open(b, HPROF_OBJ_ARRAY_HEADER_SIZE + 8 * (uint64_t)n))
        return;
    if (n < a->nelems)
        report_truncation(b, a->array_id, a->class_name ? a->class_name : "Object[]", a->nelems, n);
    s_u1(b, HPROF_SUB_OBJ_ARRAY_DUMP);
    s_u8(b, a->array_id);
    s_u4(b, a->trace_serial);
    s_u4(b, n);
    s_u8(b, a->class_id);
    s_elems(b, a->elems, n, 8);
    sub_close(b);
}

void binary_heap_dump_prim_array(struct hprof_writer *w, const struct hprof_prim_array_dump *a)
{
    struct binary_writer *b = bw(w);
    unsigned esz = writer_common_type_size(a->elem_type);
    if (esz == 0 || a->elem_type == HPROF_TYPE_OBJECT)
        return; /* not a primitive type */
    uint32_t n = binary_heap_dump_array_max_elems(a->nelems, esz, HPROF_PRIM_ARRAY_HEADER_SIZE);
    if (!sub_open(b, HPROF_PRIM_ARRAY_HEADER_SIZE + (uint64_t)esz * n))
        return;
    if (n < a->nelems) {
        char type[16];
        snprintf(type, sizeof type, "%s[]", writer_common_type_name(a->elem_type));
        report_truncation(b, a->array_id, type, a->nelems, n);
    }
    s_u1(b, HPROF_SUB_PRIM_ARRAY_DUMP);
    s_u8(b, a->array_id);
    s_u4(b, a->trace_serial);
    s_u4(b, n);
    s_u1(b, (uint8_t)a->elem_type);
    s_elems(b, a->elems, n, esz);
    sub_close(b);
}

/* What the two halves of the HPROF binary writer share: binary_writer.c (the header and the
 * profile's top-level records, the operation table) and binary_heap_dump.c (HEAP DUMP
 * SEGMENTs and their sub-records). Internal to writer/. */
#ifndef HPROF_BINARY_INTERNAL_H
#define HPROF_BINARY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "writer.h"

struct binary_writer {
    struct hprof_writer w;
    bool in_dump;
    bool streaming; /* the current sub-record is a segment of its own, streamed */
    bool misuse_reported, truncation_reported, nomem_reported;
    uint8_t *seg; /* HPROF_SEGMENT_LIMIT bytes, or NULL before the first dump */
    size_t seg_len;
};

static inline struct binary_writer *bw(struct hprof_writer *w)
{
    return (struct binary_writer *)w;
}

/* ---- big-endian encoding ------------------------------------------------------------- */

static inline uint8_t *put_u1(uint8_t *p, uint8_t v)
{
    *p = v;
    return p + 1;
}

static inline uint8_t *put_u2(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

static inline uint8_t *put_u4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}

static inline uint8_t *put_u8(uint8_t *p, uint64_t v)
{
    p = put_u4(p, (uint32_t)(v >> 32));
    return put_u4(p, (uint32_t)v);
}

static inline uint32_t clamp_u4(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static inline uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* ---- binary_writer.c ------------------------------------------------------------------ */

/* Writes a top-level record header (tag, time, body length) to the sink. */
void binary_writer_header(struct hprof_writer *w, uint8_t tag, uint32_t len);
/* False (and one stderr line, once) for a top-level record inside a heap dump. */
bool binary_writer_top_level_ok(struct hprof_writer *w, const char *what);

/* ---- binary_heap_dump.c: the heap-dump operations ------------------------------------- */

void binary_heap_dump_begin(struct hprof_writer *w, const struct hprof_heap_totals *totals);
void binary_heap_dump_end(struct hprof_writer *w, const struct hprof_heap_totals *totals);
void binary_heap_dump_root(struct hprof_writer *w, const struct hprof_root *r);
void binary_heap_dump_class(struct hprof_writer *w, const struct hprof_class_dump *c);
void binary_heap_dump_instance(struct hprof_writer *w, const struct hprof_instance_dump *o);
void binary_heap_dump_obj_array(struct hprof_writer *w, const struct hprof_obj_array_dump *a);
void binary_heap_dump_prim_array(struct hprof_writer *w, const struct hprof_prim_array_dump *a);
/* Inside a dump: writes the pending sub-records as a (shorter) segment. */
void binary_heap_dump_flush(struct binary_writer *b);

#endif

/*
 * trace_counts.c: objects of a heap dump counted by allocation trace serial and class
 * (hprof-read --traces): the trace serial each INSTANCE, OBJECT ARRAY and PRIMITIVE ARRAY DUMP
 * carries, with its class (id) or element type.
 */
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

struct trace_count {
    uint64_t class_id; /* 0 for a primitive array */
    uint32_t trace;
    uint8_t prim; /* element type of a primitive array, else 0 */
    bool used;
    uint64_t count, bytes;
};

static size_t tc_slot(uint32_t trace, uint64_t class_id, unsigned prim, size_t mask)
{
    uint64_t h = (class_id ^ ((uint64_t)trace << 32 | prim)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 24) & mask;
}

static struct trace_count *find(struct trace_counts *T, uint32_t trace, uint64_t class_id,
                                unsigned prim)
{
    size_t i = tc_slot(trace, class_id, prim, T->mask);
    while (T->slots[i].used && !(T->slots[i].trace == trace && T->slots[i].class_id == class_id &&
                                 T->slots[i].prim == prim))
        i = (i + 1) & T->mask;
    return &T->slots[i];
}

static void grow(struct parser *P, struct trace_counts *T)
{
    size_t cap = T->slots ? 2 * (T->mask + 1) : 256;
    struct trace_count *old = T->slots;
    size_t old_cap = old ? T->mask + 1 : 0;
    T->slots = calloc(cap, sizeof *T->slots);
    if (!T->slots)
        hp_die(P, "out of memory");
    T->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *find(T, old[i].trace, old[i].class_id, old[i].prim) = old[i];
    free(old);
}

void hp_trace_count(struct parser *P, struct trace_counts *T, uint32_t trace, uint64_t class_id,
                    unsigned prim, uint64_t bytes)
{
    if (!P->o->trace_counts)
        return;
    if (!T->slots || (T->n + 1) * 2 > T->mask + 1)
        grow(P, T);
    struct trace_count *e = find(T, trace, class_id, prim);
    if (!e->used) {
        *e = (struct trace_count){
            .class_id = class_id, .trace = trace, .prim = (uint8_t)prim, .used = true};
        T->n++;
    }
    e->count++;
    e->bytes += bytes;
}

static int cmp_row(const void *a, const void *b)
{
    const struct hprof_trace_row *x = a, *y = b;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    return strcmp(x->name, y->name);
}

void hp_trace_rows(struct parser *P, struct trace_counts *T, struct hprof_dump_summary *ds)
{
    if (!T->n)
        return;
    ds->trace_rows = calloc(T->n, sizeof *ds->trace_rows);
    if (!ds->trace_rows)
        hp_die(P, "out of memory");
    for (size_t i = 0; i <= T->mask; i++) {
        const struct trace_count *e = &T->slots[i];
        if (!e->used)
            continue;
        struct hprof_trace_row *r = &ds->trace_rows[ds->ntrace_rows++];
        *r = (struct hprof_trace_row){.trace = e->trace, .count = e->count, .bytes = e->bytes};
        r->name = hp_class_name(P, e->class_id, e->prim);
    }
    qsort(ds->trace_rows, ds->ntrace_rows, sizeof *ds->trace_rows, cmp_row);
}

void hp_trace_counts_free(struct trace_counts *T)
{
    free(T->slots);
    memset(T, 0, sizeof *T);
}

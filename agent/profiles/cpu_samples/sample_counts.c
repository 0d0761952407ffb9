#include "sample_counts.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing with linear probing; serial 0 marks an empty slot. The table stays at most
 * half full, so probes are short. */
struct slot {
    uint32_t serial;
    uint64_t count;
};

struct sample_counts {
    struct slot *slots;
    size_t capacity; /* a power of two */
    size_t used;
    uint64_t total;
    uint64_t dropped;
};

#define INITIAL_CAPACITY 256u

static size_t slot_of(uint32_t serial, size_t capacity)
{
    /* Serials are dense small integers: a multiplicative hash spreads neighbours. */
    return (size_t)((serial * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (capacity - 1);
}

struct sample_counts *sample_counts_new(void)
{
    struct sample_counts *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->slots = calloc(INITIAL_CAPACITY, sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return NULL;
    }
    c->capacity = INITIAL_CAPACITY;
    return c;
}

void sample_counts_free(struct sample_counts *c)
{
    if (!c)
        return;
    free(c->slots);
    free(c);
}

static struct slot *find(struct slot *slots, size_t capacity, uint32_t serial)
{
    size_t i = slot_of(serial, capacity);
    while (slots[i].serial != 0 && slots[i].serial != serial)
        i = (i + 1) & (capacity - 1);
    return &slots[i];
}

static int grow(struct sample_counts *c)
{
    size_t capacity = c->capacity * 2;
    struct slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->slots[i].serial != 0)
            *find(slots, capacity, c->slots[i].serial) = c->slots[i];
    free(c->slots);
    c->slots = slots;
    c->capacity = capacity;
    return 0;
}

int sample_counts_add(struct sample_counts *c, uint32_t serial, uint64_t n)
{
    if (serial == 0 || n == 0)
        return 0;
    struct slot *s = find(c->slots, c->capacity, serial);
    if (s->serial == 0) {
        if ((c->used + 1) * 2 > c->capacity) {
            if (grow(c) != 0) {
                c->dropped += n;
                return -1;
            }
            s = find(c->slots, c->capacity, serial);
        }
        s->serial = serial;
        c->used++;
    }
    s->count += n;
    c->total += n;
    return 0;
}

void sample_counts_clear(struct sample_counts *c)
{
    memset(c->slots, 0, c->capacity * sizeof *c->slots);
    c->used = 0;
    c->total = 0;
    c->dropped = 0;
}

uint64_t sample_counts_total(const struct sample_counts *c)
{
    return c->total;
}
size_t sample_counts_traces(const struct sample_counts *c)
{
    return c->used;
}
uint64_t sample_counts_dropped(const struct sample_counts *c)
{
    return c->dropped;
}

uint64_t sample_counts_get(const struct sample_counts *c, uint32_t serial)
{
    if (serial == 0)
        return 0;
    const struct slot *s = find(c->slots, c->capacity, serial);
    return s->serial == serial ? s->count : 0;
}

size_t sample_counts_rows(const struct sample_counts *c, struct hprof_cost_row *rows, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < c->capacity && n < max; i++) {
        if (c->slots[i].serial == 0)
            continue;
        rows[n].trace_serial = c->slots[i].serial;
        rows[n].count = c->slots[i].count;
        rows[n].cost = c->slots[i].count;
        rows[n].method = NULL;
        n++;
    }
    return n;
}

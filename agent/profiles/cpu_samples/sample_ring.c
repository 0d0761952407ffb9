#include "sample_ring.h"

#include <stdlib.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the ring needs lock-free 64-bit atomics");

struct cell {
    _Atomic(uint64_t) seq; /* == pos: free for pos's producer; == pos + 1: published */
};

struct sample_ring {
    size_t capacity, mask;
    size_t record_size, stride; /* stride: cell header + record, aligned */
    unsigned char *cells;
    /* Producers and the consumer on separate cache lines. */
    _Alignas(64) _Atomic(uint64_t) tail; /* next position to claim */
    _Alignas(64) _Atomic(uint64_t) head; /* next position to consume (consumer only writes) */
};

static struct cell *cell_at(const struct sample_ring *r, uint64_t pos)
{
    return (struct cell *)(void *)(r->cells + (size_t)(pos & r->mask) * r->stride);
}

struct sample_ring *sample_ring_new(size_t capacity, size_t record_size)
{
    size_t cap = 2;
    while (cap < capacity && cap < ((size_t)1 << 30))
        cap <<= 1;
    struct sample_ring *r = aligned_alloc(64, sizeof *r);
    if (!r)
        return NULL;
    r->capacity = cap;
    r->mask = cap - 1;
    r->record_size = record_size;
    r->stride = (sizeof(struct cell) + record_size + 15) & ~(size_t)15;
    r->cells = calloc(cap, r->stride);
    if (!r->cells) {
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++)
        atomic_init(&cell_at(r, i)->seq, i);
    atomic_init(&r->tail, 0);
    atomic_init(&r->head, 0);
    return r;
}

void sample_ring_free(struct sample_ring *r)
{
    if (!r)
        return;
    free(r->cells);
    free(r);
}

size_t sample_ring_capacity(const struct sample_ring *r)
{
    return r->capacity;
}

size_t sample_ring_record_size(const struct sample_ring *r)
{
    return r->record_size;
}

void *sample_ring_claim(struct sample_ring *r, uint64_t *pos)
{
    uint64_t p = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        struct cell *c = cell_at(r, p);
        uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - p);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->tail, &p, p + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *pos = p;
                return c + 1;
            }
            /* p was reloaded by the failed exchange */
        } else if (dif < 0) {
            return NULL; /* the cell still holds the record of the previous lap: full */
        } else {
            p = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
}

void sample_ring_publish(struct sample_ring *r, uint64_t pos)
{
    atomic_store_explicit(&cell_at(r, pos)->seq, pos + 1, memory_order_release);
}

void *sample_ring_peek(struct sample_ring *r)
{
    uint64_t p = atomic_load_explicit(&r->head, memory_order_relaxed);
    struct cell *c = cell_at(r, p);
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != p + 1)
        return NULL;
    return c + 1;
}

void sample_ring_release(struct sample_ring *r)
{
    uint64_t p = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&cell_at(r, p)->seq, p + r->capacity, memory_order_release);
    atomic_store_explicit(&r->head, p + 1, memory_order_release);
}

uint64_t sample_ring_claimed(struct sample_ring *r)
{
    return atomic_load_explicit(&r->tail, memory_order_acquire);
}

uint64_t sample_ring_consumed(struct sample_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire);
}

/* An append-only array of fixed-size elements whose addresses never move: element i of a
 * table can be read without the table's lock once its index has been handed out. Chunks of
 * SEG_CHUNK elements are allocated as the array grows (up to SEG_CHUNK * SEG_CHUNKS). */
#ifndef HPROF_SEGARRAY_H
#define HPROF_SEGARRAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SEG_CHUNK_BITS 12
#define SEG_CHUNK (1u << SEG_CHUNK_BITS)
#define SEG_CHUNKS 4096u

struct segarray {
    size_t elem_size;
    _Atomic(uint32_t) count;
    _Atomic(void *) chunks[SEG_CHUNKS];
};

void segarray_init(struct segarray *a, size_t elem_size);

/* Appends a zeroed element, returns its index or UINT32_MAX when full or out of memory.
 * Callers serialise appends (the table's lock); readers may run concurrently. */
uint32_t segarray_append(struct segarray *a);
/* Frees every chunk; the array is empty again (elements' own allocations are the caller's). */
void segarray_free(struct segarray *a);
/* The chunks' bytes (charged to mem_account); the struct itself is the caller's. */
size_t segarray_bytes(struct segarray *a);

static inline void *segarray_at(struct segarray *a, uint32_t i)
{
    char *chunk = atomic_load_explicit(&a->chunks[i >> SEG_CHUNK_BITS], memory_order_acquire);
    return chunk + (size_t)(i & (SEG_CHUNK - 1)) * a->elem_size;
}

static inline uint32_t segarray_count(struct segarray *a)
{
    return atomic_load_explicit(&a->count, memory_order_acquire);
}

#endif

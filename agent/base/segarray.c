#include "segarray.h"

#include <stdlib.h>
#include <string.h>

#include "mem_account.h"

void segarray_init(struct segarray *a, size_t elem_size)
{
    memset(a, 0, sizeof *a);
    a->elem_size = elem_size;
}

uint32_t segarray_append(struct segarray *a)
{
    uint32_t i = atomic_load_explicit(&a->count, memory_order_relaxed);
    uint32_t c = i >> SEG_CHUNK_BITS;
    if (c >= SEG_CHUNKS)
        return UINT32_MAX;
    if (!atomic_load_explicit(&a->chunks[c], memory_order_relaxed)) {
        void *chunk = calloc(SEG_CHUNK, a->elem_size);
        if (!chunk)
            return UINT32_MAX;
        atomic_store_explicit(&a->chunks[c], chunk, memory_order_release);
        mem_account_charge(mem_block(SEG_CHUNK * a->elem_size));
    }
    atomic_store_explicit(&a->count, i + 1, memory_order_release);
    return i;
}

void segarray_free(struct segarray *a)
{
    for (uint32_t c = 0; c < SEG_CHUNKS; c++) {
        void *chunk = atomic_load_explicit(&a->chunks[c], memory_order_relaxed);
        if (chunk)
            mem_account_uncharge(mem_block(SEG_CHUNK * a->elem_size));
        free(chunk);
        atomic_store_explicit(&a->chunks[c], NULL, memory_order_relaxed);
    }
    atomic_store_explicit(&a->count, 0, memory_order_relaxed);
}

size_t segarray_bytes(struct segarray *a)
{
    uint32_t n = segarray_count(a);
    size_t chunks = (n + SEG_CHUNK - 1) >> SEG_CHUNK_BITS;
    return chunks * mem_block(SEG_CHUNK * a->elem_size);
}

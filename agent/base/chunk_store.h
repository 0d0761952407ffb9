/* An append-only store of byte strings whose copies never move: chunks of up to 64 KiB,
 * freed only all at once. For data kept for the life of the process beside an index that may be
 * rebuilt (a trace's frame list, which outlives its lookup). Pure C, not thread-safe: the owner
 * holds its table's lock. Every chunk is charged to mem_account. */
#ifndef HPROF_CHUNK_STORE_H
#define HPROF_CHUNK_STORE_H

#include <stddef.h>

struct chunk_store {
    struct chunk_store_chunk *chunks; /* newest first */
    size_t bytes;                     /* every chunk, as mem_account counts them */
};

/* A copy of data[0..len) aligned to 8 bytes, or NULL when memory ran out. */
void *chunk_store_add(struct chunk_store *s, const void *data, size_t len);
/* Frees every chunk (every copy goes); the store is empty again. */
void chunk_store_free(struct chunk_store *s);

#endif

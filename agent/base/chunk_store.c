#include "chunk_store.h"

#include <stdlib.h>
#include <string.h>

#include "mem_account.h"

struct chunk_store_chunk {
    struct chunk_store_chunk *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
};

/* Chunks double from 1 KiB to 64 KiB: a store that holds little costs little. */
#define CHUNK_FIRST 1024
#define CHUNK_MAX (64 * 1024)

void *chunk_store_add(struct chunk_store *s, const void *data, size_t len)
{
    struct chunk_store_chunk *c = s->chunks;
    if (!c || c->size - c->used < len) {
        size_t size = c ? c->size * 2 : CHUNK_FIRST;
        size = size > CHUNK_MAX ? CHUNK_MAX : size;
        size = len > size ? len : size;
        c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->size = size;
        c->used = 0;
        c->next = s->chunks;
        s->chunks = c;
        s->bytes += mem_block(sizeof *c + size);
        mem_account_charge(mem_block(sizeof *c + size));
    }
    unsigned char *dst = c->data + c->used;
    if (len)
        memcpy(dst, data, len);
    c->used += (len + 7) & ~(size_t)7;
    if (c->used > c->size)
        c->used = c->size;
    return dst;
}

void chunk_store_free(struct chunk_store *s)
{
    for (struct chunk_store_chunk *c = s->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    mem_account_uncharge(s->bytes);
    s->chunks = NULL;
    s->bytes = 0;
}

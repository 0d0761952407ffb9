/* An open-addressing hash map from 64-bit keys (object ids) to two 32-bit values, with
 * removal. Used by the heap walk for objects seen as referenced but not visited yet. Pure C,
 * not thread-safe. Key 0 is reserved. */
#ifndef HPROF_IDMAP_H
#define HPROF_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap_entry {
    uint64_t key;
    uint32_t a, b;
};

struct idmap {
    struct idmap_entry *slots;
    size_t mask; /* capacity - 1; capacity a power of two */
    size_t count;
};

/* Returns 0, or -1 when out of memory. */
int idmap_init(struct idmap *m, size_t initial_capacity);
void idmap_free(struct idmap *m);
void idmap_clear(struct idmap *m);

/* Inserts or overwrites key -> (a, b). Returns false when memory ran out (map unchanged). */
bool idmap_put(struct idmap *m, uint64_t key, uint32_t a, uint32_t b);

/* Finds key; sets *a, *b (either may be NULL). */
bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *a, uint32_t *b);

/* Removes key; returns whether it was there (setting *a, *b if non-NULL). */
bool idmap_take(struct idmap *m, uint64_t key, uint32_t *a, uint32_t *b);

#endif

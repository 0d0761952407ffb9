/* A hash map from byte-string keys to 32-bit values, the index under most agent tables
 * (methods, frames, traces, cpu=times' classes). Pure C, not thread-safe: each table holds its own
 * lock. Keys are copied into the map's own arena, so callers may pass stack buffers. */
#ifndef HPROF_KEYMAP_H
#define HPROF_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keymap;

struct keymap *keymap_new(size_t initial_capacity);
void keymap_free(struct keymap *m);

/* Finds key; returns true and sets *value if present. */
bool keymap_get(const struct keymap *m, const void *key, size_t len, uint32_t *value);

/* Inserts key -> value unless key is present. Returns the value now stored (the existing one
 * if key was already there), or 0 if memory ran out (0 is never a valid value). */
uint32_t keymap_put(struct keymap *m, const void *key, size_t len, uint32_t value);

/* The same, and *stored (if not NULL) is the map's own copy of the key, which stays where it is
 * until keymap_free (8-byte aligned): a table can keep its entries' data there, once. */
uint32_t keymap_put_ref(struct keymap *m, const void *key, size_t len, uint32_t value,
                        const void **stored);

/* Keeps only the entries for which keep(key, len, value, ctx) is true, in a new index and new
 * key chunks (so the bytes of the others go back to the allocator); returns how many entries
 * went, or SIZE_MAX when memory ran out (then the map is unchanged). Every key copy moves: never
 * on a map whose copies are kept (keymap_put_ref). */
size_t keymap_prune(struct keymap *m,
                    bool (*keep)(const void *key, size_t len, uint32_t value, void *ctx),
                    void *ctx);

size_t keymap_count(const struct keymap *m);
/* What the map holds (index and keys), charged to mem_account; 0 for NULL. */
size_t keymap_bytes(const struct keymap *m);

/* FNV-1a over bytes; exposed so tables can pre-hash. */
uint64_t keymap_hash(const void *key, size_t len);

#endif

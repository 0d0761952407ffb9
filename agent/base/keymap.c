#include "keymap.h"

#include <stdlib.h>
#include <string.h>

#include "chunk_store.h"
#include "mem_account.h"

/* Open addressing with linear probing; slots hold the hash, so most probes compare no keys.
 * Keys live in a chunk store (never moved), so growing the table copies only slots. */
struct slot {
    uint64_t hash; /* 0 = empty */
    const uint8_t *key;
    uint32_t len;
    uint32_t value;
};

struct keymap {
    struct slot *slots;
    size_t capacity; /* a power of two */
    size_t count;
    struct chunk_store keys;
    size_t bytes; /* the map and its slots, as mem_account counts them (keys: keys.bytes) */
};

uint64_t keymap_hash(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 29;
    return h ? h : 1; /* 0 marks an empty slot */
}

struct keymap *keymap_new(size_t initial_capacity)
{
    struct keymap *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    size_t cap = 16;
    while (cap < initial_capacity * 2)
        cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    m->capacity = cap;
    m->bytes = mem_block(sizeof *m) + mem_block(cap * sizeof *m->slots);
    mem_account_charge(m->bytes);
    return m;
}

void keymap_free(struct keymap *m)
{
    if (!m)
        return;
    chunk_store_free(&m->keys);
    free(m->slots);
    mem_account_uncharge(m->bytes);
    free(m);
}

static const struct slot *find(const struct keymap *m, const void *key, size_t len, uint64_t h)
{
    size_t mask = m->capacity - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const struct slot *s = &m->slots[i];
        if (s->hash == 0)
            return s;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
            return s;
    }
}

bool keymap_get(const struct keymap *m, const void *key, size_t len, uint32_t *value)
{
    const struct slot *s = find(m, key, len, keymap_hash(key, len));
    if (s->hash == 0)
        return false;
    *value = s->value;
    return true;
}

static bool grow(struct keymap *m)
{
    size_t cap = m->capacity * 2;
    struct slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < m->capacity; i++) {
        struct slot s = m->slots[i];
        if (s.hash == 0)
            continue;
        size_t j = s.hash & (cap - 1);
        while (slots[j].hash != 0)
            j = (j + 1) & (cap - 1);
        slots[j] = s;
    }
    free(m->slots);
    size_t more = mem_block(cap * sizeof *slots) - mem_block(m->capacity * sizeof *slots);
    m->bytes += more;
    mem_account_charge(more);
    m->slots = slots;
    m->capacity = cap;
    return true;
}

uint32_t keymap_put(struct keymap *m, const void *key, size_t len, uint32_t value)
{
    return keymap_put_ref(m, key, len, value, NULL);
}

uint32_t keymap_put_ref(struct keymap *m, const void *key, size_t len, uint32_t value,
                        const void **stored)
{
    if (len > UINT32_MAX)
        return 0;
    uint64_t h = keymap_hash(key, len);
    struct slot *s = (struct slot *)find(m, key, len, h);
    if (s->hash != 0) {
        if (stored)
            *stored = s->key;
        return s->value;
    }
    if ((m->count + 1) * 4 > m->capacity * 3) { /* keep the load under 3/4 */
        if (!grow(m))
            return 0;
        s = (struct slot *)find(m, key, len, h);
    }
    const uint8_t *copy = chunk_store_add(&m->keys, key, len);
    if (!copy)
        return 0;
    s->hash = h;
    s->key = copy;
    s->len = (uint32_t)len;
    s->value = value;
    m->count++;
    if (stored)
        *stored = copy;
    return value;
}

size_t keymap_prune(struct keymap *m,
                    bool (*keep)(const void *key, size_t len, uint32_t value, void *ctx), void *ctx)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->capacity; i++) {
        const struct slot *s = &m->slots[i];
        if (s->hash != 0 && keep(s->key, s->len, s->value, ctx))
            kept++;
    }
    if (kept == m->count)
        return 0;
    /* A fresh map of the size keymap_new gives kept entries, filled with them. */
    struct keymap *fresh = keymap_new(kept);
    if (!fresh)
        return SIZE_MAX;
    for (size_t i = 0; i < m->capacity; i++) {
        const struct slot *s = &m->slots[i];
        if (s->hash != 0 && keep(s->key, s->len, s->value, ctx) &&
            !keymap_put(fresh, s->key, s->len, s->value)) {
            keymap_free(fresh);
            return SIZE_MAX;
        }
    }
    size_t gone = m->count - kept;
    struct keymap old = *m;
    *m = *fresh;
    *fresh = old;
    keymap_free(fresh); /* the old index and key chunks */
    return gone;
}

size_t keymap_count(const struct keymap *m)
{
    return m->count;
}

size_t keymap_bytes(const struct keymap *m)
{
    return m ? m->bytes + m->keys.bytes : 0;
}

#include "idmap.h"

#include <stdlib.h>
#include <string.h>

static inline size_t slot_of(const struct idmap *m, uint64_t key)
{
    /* Object addresses differ in their middle bits: mix them all in. */
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & m->mask;
}

int idmap_init(struct idmap *m, size_t initial_capacity)
{
    size_t cap = 16;
    while (cap < initial_capacity)
        cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    m->mask = cap - 1;
    m->count = 0;
    return m->slots ? 0 : -1;
}

void idmap_free(struct idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void idmap_clear(struct idmap *m)
{
    if (m->slots)
        memset(m->slots, 0, (m->mask + 1) * sizeof *m->slots);
    m->count = 0;
}

static bool grow(struct idmap *m)
{
    size_t cap = 2 * (m->mask + 1);
    struct idmap_entry *old = m->slots;
    size_t oldcap = m->mask + 1;
    struct idmap_entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    m->slots = slots;
    m->mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++) {
        if (!old[i].key)
            continue;
        size_t j = slot_of(m, old[i].key);
        while (m->slots[j].key)
            j = (j + 1) & m->mask;
        m->slots[j] = old[i];
    }
    free(old);
    return true;
}

bool idmap_put(struct idmap *m, uint64_t key, uint32_t a, uint32_t b)
{
    if (!m->slots || key == 0)
        return false;
    if ((m->count + 1) * 4 > (m->mask + 1) * 3 && !grow(m))
        return false;
    size_t i = slot_of(m, key);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (!m->slots[i].key)
        m->count++;
    m->slots[i] = (struct idmap_entry){key, a, b};
    return true;
}

bool idmap_get(const struct idmap *m, uint64_t key, uint32_t *a, uint32_t *b)
{
    if (!m->slots || key == 0)
        return false;
    size_t i = slot_of(m, key);
    while (m->slots[i].key) {
        if (m->slots[i].key == key) {
            if (a)
                *a = m->slots[i].a;
            if (b)
                *b = m->slots[i].b;
            return true;
        }
        i = (i + 1) & m->mask;
    }
    return false;
}

bool idmap_take(struct idmap *m, uint64_t key, uint32_t *a, uint32_t *b)
{
    if (!m->slots || key == 0)
        return false;
    size_t i = slot_of(m, key);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (!m->slots[i].key)
        return false;
    if (a)
        *a = m->slots[i].a;
    if (b)
        *b = m->slots[i].b;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->slots[j].key; j = (j + 1) & m->mask) {
        size_t home = slot_of(m, m->slots[j].key);
        /* j's entry may move into the hole unless its home lies cyclically in (hole, j]. */
        bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = 0;
    m->count--;
    return true;
}

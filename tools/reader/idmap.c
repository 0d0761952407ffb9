/*
 * idmap.c: the open-addressing map of u64 ids to u32 indexes (or set of ids), and growable arrays.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

void hp_map_free(struct map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void *reader_grow(void *p, size_t *cap, size_t need, size_t elsz)
{
    if (need <= *cap)
        return p;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elsz)
            return NULL;
        nc += nc / 2 + 16;
    }
    void *q = realloc(p, nc * elsz);
    if (q)
        *cap = nc;
    return q;
}

void *hp_grow(struct parser *P, void *p, size_t *cap, size_t need, size_t elsz)
{
    void *q = reader_grow(p, cap, need, elsz);
    if (!q && need)
        hp_die(P, "out of memory (%zu elements of %zu bytes)", need, elsz);
    return q;
}

void hp_map_init(struct parser *P, struct map *m, size_t cap, bool is_set)
{
    m->cap = cap;
    m->n = 0;
    m->shift = 64;
    for (size_t c = cap; c > 1; c >>= 1)
        m->shift--;
    m->is_set = is_set;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = is_set ? NULL : malloc(cap * sizeof *m->vals);
    if (!m->keys || (!is_set && !m->vals))
        hp_die(P, "out of memory (hash table of %zu entries)", cap);
}

static void map_rehash(struct parser *P, struct map *m)
{
    struct map old = *m;
    hp_map_init(P, m, old.cap * 2, old.is_set);
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < old.cap; i++) {
        uint64_t k = old.keys[i];
        if (!k)
            continue;
        size_t j = slot_of(k, m->shift);
        while (m->keys[j])
            j = (j + 1) & mask;
        m->keys[j] = k;
        if (m->vals)
            m->vals[j] = old.vals[i];
    }
    m->n = old.n;
    hp_map_free(&old);
}

/* Insert k -> v unless present. Returns false (and *old) if k was already there. */
bool hp_map_put(struct parser *P, struct map *m, uint64_t k, uint32_t v, uint32_t *old)
{
    if (k == 0)
        return false; /* callers reject id 0 before */
    if (m->cap == 0)
        hp_map_init(P, m, 1024, m->is_set);
    else if ((m->n + 1) * 4 > m->cap * 3)
        map_rehash(P, m);
    size_t mask = m->cap - 1, i = slot_of(k, m->shift);
    for (;;) {
        uint64_t x = m->keys[i];
        if (x == k) {
            if (old && m->vals)
                *old = m->vals[i];
            return false;
        }
        if (x == 0)
            break;
        i = (i + 1) & mask;
    }
    m->keys[i] = k;
    if (m->vals)
        m->vals[i] = v;
    m->n++;
    return true;
}

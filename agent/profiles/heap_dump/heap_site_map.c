#include "heap_site_map.h"

#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "heap_sites.h"
#include "heap_walk.h"
#include "log.h"

#define SITE_BITS 24
#define SITE_MASK ((1ull << SITE_BITS) - 1)
#define ADDRESS_LIMIT (1ull << (64 - SITE_BITS + 3)) /* addresses / 8 must fit above the site */
#define FIRST_SLOTS (1u << 16)

/* Fibonacci hashing: the top bits of the product, as many as the table has. */
static inline size_t slot_of(uint64_t word_address, size_t mask)
{
    return (size_t)((word_address * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_popcountll(mask)));
}

static void put(uint64_t *slots, size_t mask, uint64_t entry)
{
    size_t i = slot_of(entry >> SITE_BITS, mask);
    while (slots[i] != 0 && (slots[i] >> SITE_BITS) != (entry >> SITE_BITS))
        i = (i + 1) & mask;
    slots[i] = entry;
}

static bool grow(struct heap_site_map *m)
{
    size_t cap = (m->mask + 1) * 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i])
            put(slots, cap - 1, m->slots[i]);
    free(m->slots);
    m->slots = slots;
    m->mask = cap - 1;
    return true;
}

static bool note_site(struct heap_site_map *m, uint32_t site)
{
    if (site >= m->sites_cap) {
        uint32_t cap = m->sites_cap ? m->sites_cap : 1024;
        while (cap <= site)
            cap *= 2;
        uint8_t *seen = realloc(m->sites_seen, cap);
        if (!seen)
            return false;
        memset(seen + m->sites_cap, 0, cap - m->sites_cap);
        m->sites_seen = seen;
        m->sites_cap = cap;
    }
    m->sites_seen[site] = 1;
    return true;
}

/* heap=sites' walk callback (heap_sites_object_fn): on the VM thread, inside the walk. */
static void add_object(void *ctx, jlong *tag_ptr, jlong class_tag, jlong size, uint32_t site)
{
    struct heap_site_map *m = ctx;
    uint64_t address;
    if (!m->active)
        return;
    if (!heap_walk_address_of(tag_ptr, class_tag, size, &address)) {
        m->broken = true;
        return;
    }
    if (address >= ADDRESS_LIMIT || address == 0)
        return;
    if ((m->n + 1) * 2 > m->mask + 1 && !grow(m)) {
        m->active = false;
        return;
    }
    if (!note_site(m, site)) {
        m->active = false;
        return;
    }
    put(m->slots, m->mask, (address >> 3) << SITE_BITS | site);
    m->n++;
}

bool heap_site_map_build(struct heap_site_map *m, const struct dump_request *req)
{
    memset(m, 0, sizeof *m);
    m->slots = calloc(FIRST_SLOTS, sizeof *m->slots);
    if (!m->slots)
        return false;
    m->mask = FIRST_SLOTS - 1;
    m->active = true;
    if (!heap_sites_walk_objects(req, add_object, m, &m->collections) || m->broken) {
        if (m->broken)
            log_warning("heap dump: heap=sites' heap walk did not give object addresses; "
                        "objects carry no allocation sites");
        heap_site_map_free(m);
        return false;
    }
    if (!m->active) {
        log_error("out of memory for the allocation sites of a heap dump; objects carry none");
        heap_site_map_free(m);
        return false;
    }
    return true;
}

void heap_site_map_emit_traces(const struct heap_site_map *m, struct hprof_writer *w)
{
    for (uint32_t site = 0; m->active && site < m->sites_cap; site++)
        if (m->sites_seen[site])
            emit_trace(w, heap_sites_trace_of_site(site));
}

uint32_t heap_site_map_trace(struct heap_site_map *m, uint64_t address)
{
    if (!m->checked) {
        m->checked = true;
        m->stale = heap_sites_collections() != m->collections;
    }
    if (!m->active || m->stale || address >= ADDRESS_LIMIT || address == 0)
        return HPROF_TRACE_SERIAL_NONE;
    uint64_t word = address >> 3;
    for (size_t i = slot_of(word, m->mask); m->slots[i] != 0; i = (i + 1) & m->mask)
        if ((m->slots[i] >> SITE_BITS) == word)
            return heap_sites_trace_of_site((uint32_t)(m->slots[i] & SITE_MASK));
    return HPROF_TRACE_SERIAL_NONE;
}

void heap_site_map_recheck(struct heap_site_map *m)
{
    m->checked = m->stale = false;
}

void heap_site_map_free(struct heap_site_map *m)
{
    free(m->slots);
    free(m->sites_seen);
    memset(m, 0, sizeof *m);
}

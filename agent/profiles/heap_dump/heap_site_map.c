#include "heap_site_map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "emit.h"
#include "heap_sites.h"
#include "heap_walk.h"
#include "log.h"

#define SITE_BITS 24
#define SITE_MASK ((1ull << SITE_BITS) - 1)
#define ADDRESS_LIMIT (1ull << (64 - SITE_BITS + 3)) /* addresses / 8 must fit above the site */
#define FIRST_SLOTS (1u << 16)

/* Buckets of one cache line (8 entries) hold the objects of 128-byte blocks of the heap: the
 * objects of one block share a line, so the dump's walk, which often goes from an object to one
 * allocated next to it, finds the next one's line in the cache (a look-up is a load that misses
 * otherwise: perf showed 97% of a look-up's time on it). A full bucket spills into the next. */
#define BUCKET 8u

/* Fibonacci hashing of the block: the top bits of the product, as many as there are buckets. */
static inline size_t bucket_of(uint64_t word_address, size_t mask)
{
    size_t nbuckets = (mask + 1) / BUCKET;
    return (size_t)(((word_address >> 4) * 0x9E3779B97F4A7C15ull) >>
                    (64 - __builtin_ctzll(nbuckets))) &
           (nbuckets - 1);
}

static void put(uint64_t *slots, size_t mask, uint64_t entry)
{
    uint64_t word = entry >> SITE_BITS;
    for (size_t i = bucket_of(word, mask) * BUCKET;; i = (i + 1) & mask) {
        if (slots[i] == 0 || (slots[i] >> SITE_BITS) == word) {
            slots[i] = entry;
            return;
        }
    }
}

/* Entries gathered during the walks, before the table is made. */
static bool gather(struct heap_site_map *m, uint64_t entry)
{
    if (m->ngathered == m->gathered_cap) {
        size_t cap = m->gathered_cap ? m->gathered_cap * 2 : FIRST_SLOTS;
        uint64_t *g = realloc(m->gathered, cap * sizeof *g);
        if (!g)
            return false;
        m->gathered = g;
        m->gathered_cap = cap;
    }
    m->gathered[m->ngathered++] = entry;
    return true;
}

/* The table, sized once for the entries gathered: at most half full. Inserts in gathered
 * order land on buckets in random order, each a cache miss: the bucket of the entry PREFETCH
 * places ahead is fetched while this one goes in, so the misses overlap. */
#define PREFETCH 16u

/* The table in pages of 2 MB where the kernel has them (transparent huge pages in madvise
 * mode): look-ups and inserts go to random lines of a table of 16 bytes per object, and with
 * 4 KB pages nearly each one also misses the TLB (perf put the prefetch's samples on it). */
#define HUGE_PAGE (2u << 20)

/* Mapped, not allocated: fresh pages are zero, so nothing clears the table (a memset of it
 * cost as much as the inserts), and munmap gives it back at once. */
static uint64_t *table_alloc(struct heap_site_map *m, size_t cap)
{
    size_t bytes = cap * sizeof(uint64_t);
    size_t len = bytes >= HUGE_PAGE ? bytes + HUGE_PAGE : bytes; /* room to align */
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    m->map_base = p;
    m->map_len = len;
    if (bytes < HUGE_PAGE)
        return p;
    uintptr_t aligned = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    madvise((void *)aligned, bytes, MADV_HUGEPAGE); /* a hint: the table works without it */
    return (uint64_t *)aligned;
}

static bool make_table(struct heap_site_map *m)
{
    size_t cap = FIRST_SLOTS;
    while (cap < m->ngathered * 2)
        cap *= 2;
    m->slots = table_alloc(m, cap);
    if (!m->slots)
        return false;
    m->mask = cap - 1;
    const uint64_t *g = m->gathered;
    for (size_t i = 0; i < m->ngathered; i++) {
        if (i + PREFETCH < m->ngathered)
            __builtin_prefetch(&m->slots[bucket_of(g[i + PREFETCH] >> SITE_BITS, m->mask) * BUCKET],
                               1);
        put(m->slots, m->mask, g[i]);
    }
    m->n = m->ngathered;
    free(m->gathered);
    m->gathered = NULL;
    m->ngathered = m->gathered_cap = 0;
    return true;
}

/* The site's trace, kept by site id (0: no object of the map is there): a look-up reads it here (a
 * small array, in the cache) rather than in heap=sites' table. */
static bool note_site(struct heap_site_map *m, uint32_t site)
{
    if (site >= m->sites_cap) {
        uint32_t cap = m->sites_cap ? m->sites_cap : 1024;
        while (cap <= site)
            cap *= 2;
        uint32_t *traces = realloc(m->traces, cap * sizeof *traces);
        if (!traces)
            return false;
        memset(traces + m->sites_cap, 0, (cap - m->sites_cap) * sizeof *traces);
        m->traces = traces;
        m->sites_cap = cap;
    }
    if (m->traces[site] == 0)
        m->traces[site] = heap_sites_trace_of_site(site);
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
    if (!note_site(m, site) || !gather(m, (address >> 3) << SITE_BITS | site))
        m->active = false;
}

bool heap_site_map_build(struct heap_site_map *m, const struct dump_request *req)
{
    memset(m, 0, sizeof *m);
    m->active = true;
    if (!heap_sites_walk_objects(req, add_object, m, &m->collections) || m->broken) {
        if (m->broken)
            log_warning("heap dump: heap=sites' heap walk did not give object addresses; "
                        "objects carry no allocation sites");
        heap_site_map_free(m);
        return false;
    }
    if (!m->active || !make_table(m)) {
        log_error("out of memory for the allocation sites of a heap dump; objects carry none");
        heap_site_map_free(m);
        return false;
    }
    return true;
}

void heap_site_map_emit_traces(const struct heap_site_map *m, struct hprof_writer *w)
{
    for (uint32_t site = 0; m->active && site < m->sites_cap; site++)
        if (m->traces[site] != 0)
            emit_trace(w, m->traces[site]);
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
    for (size_t i = bucket_of(word, m->mask) * BUCKET; m->slots[i] != 0; i = (i + 1) & m->mask)
        if ((m->slots[i] >> SITE_BITS) == word)
            return m->traces[m->slots[i] & SITE_MASK];
    return HPROF_TRACE_SERIAL_NONE;
}

void heap_site_map_prefetch(const struct heap_site_map *m, uint64_t address)
{
    if (m->slots && address < ADDRESS_LIMIT)
        __builtin_prefetch(&m->slots[bucket_of(address >> 3, m->mask) * BUCKET]);
}

void heap_site_map_recheck(struct heap_site_map *m)
{
    m->checked = m->stale = false;
}

void heap_site_map_free(struct heap_site_map *m)
{
    if (m->map_base)
        munmap(m->map_base, m->map_len);
    free(m->gathered);
    free(m->traces);
    memset(m, 0, sizeof *m);
}

#include "heap_site_table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BITS HEAP_SITE_TABLE_BITS
#define BUCKET HEAP_SITE_TABLE_BUCKET
#define FIRST_GATHERED (1u << 16)
#define FIRST_SLOTS (1u << 16)

bool heap_site_table_add(struct heap_site_table *t, uint64_t address, uint32_t value)
{
    if (address >= HEAP_SITE_TABLE_ADDRESS_LIMIT || value == 0 ||
        value >= HEAP_SITE_TABLE_VALUE_LIMIT)
        return false;
    if (t->ngathered == t->gathered_cap) {
        size_t cap = t->gathered_cap ? t->gathered_cap * 2 : FIRST_GATHERED;
        uint64_t *g = realloc(t->gathered, cap * sizeof *g);
        if (!g)
            return false;
        t->gathered = g;
        t->gathered_cap = cap;
    }
    uint64_t word = address >> 3;
    if (t->ngathered == 0 || word < t->lo)
        t->lo = word;
    if (t->ngathered == 0 || word > t->hi)
        t->hi = word;
    if (value > t->max_value)
        t->max_value = value;
    t->gathered[t->ngathered++] = word << BITS | value;
    return true;
}

/* Both layouts are mapped, not allocated: fresh pages are zero (a memset of the hashed table
 * cost as much as its inserts), munmap gives them back at once, and the mapping can ask for 2
 * MB pages (madvise): look-ups and inserts spread over megabytes, and with 4 KB pages nearly
 * each one also missed the TLB (perf put the prefetches' samples on it). */
#define HUGE_PAGE (2u << 20)

static void *table_map(struct heap_site_table *t, size_t bytes)
{
    size_t len = bytes >= HUGE_PAGE ? bytes + HUGE_PAGE : bytes; /* room to align */
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    t->map_base = p;
    t->map_len = len;
    if (bytes < HUGE_PAGE)
        return p;
    uintptr_t aligned = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    madvise((void *)aligned, bytes, MADV_HUGEPAGE); /* a hint: the table works without it */
    return (void *)aligned;
}

/* The direct layout spans the whole heap between the lowest and highest object (the 2 GB of a
 * 2 GB heap with 30 MB live: 512 MB of address space), but only the pages that hold an entry
 * are ever touched: counted in 2 MB pages (the table's 2 MB page covers 8 MB of heap, aligned
 * to 8 MB), that is the memory it takes. */
#define PAGE_WORDS (HUGE_PAGE / sizeof(uint16_t))

static size_t direct_pages(const struct heap_site_table *t, uint64_t origin)
{
    size_t npages = (size_t)((t->hi - origin) / PAGE_WORDS) + 1, touched = 0;
    uint8_t *seen = calloc(npages, 1);
    if (!seen)
        return SIZE_MAX;
    for (size_t i = 0; i < t->ngathered; i++) {
        size_t page = (size_t)(((t->gathered[i] >> BITS) - origin) / PAGE_WORDS);
        touched += !seen[page];
        seen[page] = 1;
    }
    free(seen);
    return touched;
}

/* The walks report each environment's objects in address order: the stores go forward. */
static bool make_direct(struct heap_site_table *t, uint64_t origin)
{
    t->lo = origin;
    t->words = t->hi - origin + 1;
    t->direct = table_map(t, t->words * sizeof *t->direct);
    if (!t->direct)
        return false;
    for (size_t i = 0; i < t->ngathered; i++)
        t->direct[(t->gathered[i] >> BITS) - origin] = (uint16_t)(t->gathered[i] & 0xffff);
    return true;
}

static void put(uint64_t *slots, size_t mask, uint64_t entry)
{
    uint64_t word = entry >> BITS;
    for (size_t i = heap_site_table_bucket(word, mask) * BUCKET;; i = (i + 1) & mask) {
        if (slots[i] == 0 || (slots[i] >> BITS) == word) {
            slots[i] = entry;
            return;
        }
    }
}

/* Inserts land on buckets in random order, each a cache miss: the bucket of the entry PREFETCH
 * places ahead is fetched while this one goes in, so the misses overlap. */
#define PREFETCH 16u

static bool make_hashed(struct heap_site_table *t, size_t cap)
{
    t->slots = table_map(t, cap * sizeof *t->slots);
    if (!t->slots)
        return false;
    t->mask = cap - 1;
    const uint64_t *g = t->gathered;
    for (size_t i = 0; i < t->ngathered; i++) {
        if (i + PREFETCH < t->ngathered)
            __builtin_prefetch(
                &t->slots[heap_site_table_bucket(g[i + PREFETCH] >> BITS, t->mask) * BUCKET], 1);
        put(t->slots, t->mask, g[i]);
    }
    return true;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

bool heap_site_table_make(struct heap_site_table *t, enum heap_site_layout force)
{
    size_t cap = FIRST_SLOTS; /* the hashed layout's slots: at most half full */
    while (cap < t->ngathered * 2)
        cap *= 2;
    /* Direct where its touched pages take no more memory than the hashed layout's slots (or one
     * 2 MB page, for small heaps). */
    uint64_t origin = t->lo & ~(uint64_t)(PAGE_WORDS - 1);
    size_t budget = max_size(cap * sizeof(uint64_t), HUGE_PAGE) / HUGE_PAGE; /* in 2 MB pages */
    bool direct = t->ngathered > 0 && t->max_value <= UINT16_MAX && force != HEAP_SITE_HASHED &&
                  (force == HEAP_SITE_DIRECT || direct_pages(t, origin) <= budget);
    bool ok = true;
    enum heap_site_layout layout = HEAP_SITE_DIRECT; /* nothing kept: answers 0 to every look-up */
    if (direct && make_direct(t, origin)) {
        layout = HEAP_SITE_DIRECT;
    } else if (t->ngathered > 0) {
        layout = HEAP_SITE_HASHED;
        ok = make_hashed(t, cap);
    }
    t->n = ok ? t->ngathered : 0;
    t->layout = ok ? layout : HEAP_SITE_NONE;
    free(t->gathered);
    t->gathered = NULL;
    t->ngathered = t->gathered_cap = 0;
    return ok;
}

void heap_site_table_free(struct heap_site_table *t)
{
    if (t->map_base)
        munmap(t->map_base, t->map_len);
    free(t->gathered);
    memset(t, 0, sizeof *t);
}

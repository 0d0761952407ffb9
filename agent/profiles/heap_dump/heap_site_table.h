/* The table behind the heap dump's site map (heap_site_map.h): object address -> a small value
 * (the map's index of the object's site), made once from the (address, value) pairs gathered
 * during heap=sites' walks, then read by address during the dump's walk. Pure C: no JVMTI.
 *
 * Two layouts, chosen when the table is made, whichever the pairs allow (doc/heap-dump.md,
 * "Map layout"):
 *  - direct: one 16-bit value per 8-byte word of the heap between the lowest and the highest
 *    address gathered, read at (address - lowest) / 8. A look-up is one load, and objects
 *    next to each other in the heap are next to each other here (one cache line covers 256
 *    bytes of heap); the walks report objects in address order, so making it is a sequential
 *    write. Used when every value is below 2^16 and the span takes no more memory than the
 *    hashed layout would: 2 bytes per 8 bytes of heap spanned.
 *  - hashed: one word per entry (address / 8 above, value in the low 24 bits) in buckets of
 *    one cache line per 128-byte block of the heap, open addressing, at most half full: for
 *    values of 2^16 and more, or a heap whose objects are too sparse in their span.
 * Addresses are multiples of 8 below 2^43 (8 TiB); values are 1 .. 2^24 - 1 (0: none). */
#ifndef HPROF_HEAP_SITE_TABLE_H
#define HPROF_HEAP_SITE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_SITE_TABLE_VALUE_LIMIT (1u << 24)
#define HEAP_SITE_TABLE_ADDRESS_LIMIT (1ull << 43)

enum heap_site_layout { HEAP_SITE_NONE, HEAP_SITE_DIRECT, HEAP_SITE_HASHED };

struct heap_site_table {
    enum heap_site_layout layout; /* NONE until made */
    uint64_t *gathered;           /* until made: address / 8 << 24 | value */
    size_t ngathered, gathered_cap;
    uint64_t lo, hi;    /* lowest and highest address / 8 gathered */
    uint32_t max_value; /* highest value gathered */
    uint16_t *direct;   /* direct: the value at lo + i, for i < words */
    uint64_t words;     /* direct: hi - lo + 1 */
    uint64_t *slots;    /* hashed: mask + 1 entries */
    size_t mask, n;     /* n: entries made */
    void *map_base;     /* the mapping that holds direct or slots */
    size_t map_len;
};

/* Keeps (address, value) for the table to be made; false: out of memory, or an address or value
 * out of range (nothing kept). */
bool heap_site_table_add(struct heap_site_table *t, uint64_t address, uint32_t value);

/* Makes the table from the pairs added (a pair added twice for one address: the last one
 * counts) in the layout they allow, or in `force` (HEAP_SITE_NONE: the cheaper one); frees
 * the gathered pairs. False: out of memory (the table is then empty). */
bool heap_site_table_make(struct heap_site_table *t, enum heap_site_layout force);

/* The value kept for this address; 0 if none. */
static inline uint32_t heap_site_table_get(const struct heap_site_table *t, uint64_t address);

/* Starts loading the table's line for this address, which heap_site_table_get will read. */
static inline void heap_site_table_prefetch(const struct heap_site_table *t, uint64_t address);

void heap_site_table_free(struct heap_site_table *t);

/* ---- inline look-ups -------------------------------------------------------------------- */

#define HEAP_SITE_TABLE_BITS 24
#define HEAP_SITE_TABLE_BUCKET 8u

/* Fibonacci hashing of the 128-byte block: the top bits of the product. */
static inline size_t heap_site_table_bucket(uint64_t word, size_t mask)
{
    size_t nbuckets = (mask + 1) / HEAP_SITE_TABLE_BUCKET;
    return (size_t)(((word >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(nbuckets))) &
           (nbuckets - 1);
}

static inline uint32_t heap_site_table_get(const struct heap_site_table *t, uint64_t address)
{
    uint64_t word = address >> 3;
    if (t->layout == HEAP_SITE_DIRECT) {
        uint64_t i = word - t->lo; /* wraps to a huge value below lo */
        return i < t->words ? t->direct[i] : 0;
    }
    if (t->layout != HEAP_SITE_HASHED || address >= HEAP_SITE_TABLE_ADDRESS_LIMIT)
        return 0;
    for (size_t i = heap_site_table_bucket(word, t->mask) * HEAP_SITE_TABLE_BUCKET;
         t->slots[i] != 0; i = (i + 1) & t->mask)
        if ((t->slots[i] >> HEAP_SITE_TABLE_BITS) == word)
            return (uint32_t)(t->slots[i] & (HEAP_SITE_TABLE_VALUE_LIMIT - 1));
    return 0;
}

static inline void heap_site_table_prefetch(const struct heap_site_table *t, uint64_t address)
{
    uint64_t word = address >> 3;
    if (t->layout == HEAP_SITE_DIRECT) {
        if (word - t->lo < t->words)
            __builtin_prefetch(&t->direct[word - t->lo]);
    } else if (t->layout == HEAP_SITE_HASHED && address < HEAP_SITE_TABLE_ADDRESS_LIMIT) {
        __builtin_prefetch(
            &t->slots[heap_site_table_bucket(word, t->mask) * HEAP_SITE_TABLE_BUCKET]);
    }
}

#endif

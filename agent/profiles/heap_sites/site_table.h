/* Allocation sites of heap=sites: (class serial, trace serial) -> site id, with counters per
 * site, and what the profile knows per class (its default site). Pure C, no JVMTI, so it is
 * unit-tested under the sanitizers.
 *
 * Thread-safety: lookups and counter updates are lock-free (allocation callbacks run on every
 * allocating thread); only adding a new site or class chunk takes a mutex, once per site.
 * Site ids are the site field of object tags (agent/symbols/tags.h), so they stay below 2^23. */
#ifndef HPROF_SITE_TABLE_H
#define HPROF_SITE_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Site ids: 0 means "no site"; SITE_ID_UNTRACKED tags objects that exist but were never seen
 * allocated (the heap at start-up, allocations while tracking was off); real sites start at
 * SITE_ID_FIRST. */
#define SITE_ID_NONE 0u
#define SITE_ID_UNTRACKED 1u
#define SITE_ID_FIRST 2u
/* Site fields from 0x800000 up are kept for other ids (class objects, heap-dump address ids). */
#define SITE_ID_MAX 0x7FFFFFu

struct site {
    uint32_t class_serial;
    uint32_t trace_serial;
    /* Allocation counts: exact counts, or in sampled mode estimates in fixed point
     * (SITE_WEIGHT_ONE per object). */
    _Atomic(uint64_t) alloc_objs, alloc_bytes;
    /* What the last dump showed, for incremental dumps (dump lock held). */
    uint64_t dumped_alloc_objs, dumped_live_objs;
};

/* Sampled mode only: a site's live estimates kept up to date by ObjectFree (fixed point), in
 * an array of their own, so exact mode (live counts from a heap walk) spends no bytes on them. */
struct site_live {
    _Atomic(uint64_t) objs, bytes;
};

/* Fixed-point unit of the sampled-mode counters: 1 object = 256. */
#define SITE_WEIGHT_SHIFT 8
#define SITE_WEIGHT_ONE (1ull << SITE_WEIGHT_SHIFT)

/* Per class: what heap=sites decided about it, indexed by class serial. */
enum site_class_kind {
    SITE_CLASS_UNKNOWN = 0, /* not looked at yet */
    SITE_CLASS_TAGGED = 1,  /* every tracked object carries its site in its tag */
    SITE_CLASS_DEFAULT = 2, /* objects of the default site stay untagged (see heap_sites.c) */
    SITE_CLASS_IGNORED = 3, /* not counted (java.lang.Class: the class table owns those tags) */
    /* A default-site class whose default is being moved to another site: until the move is
     * done every new object is tagged, and untagged ones belong to default_site. */
    SITE_CLASS_SWITCHING = 4,
};

struct site_class {
    _Atomic(uint8_t) kind;          /* enum site_class_kind */
    _Atomic(uint8_t) move_pending;  /* a move of the default site is queued */
    _Atomic(uint8_t) moves;         /* moves made so far */
    _Atomic(uint32_t) default_site; /* SITE_CLASS_DEFAULT: the site of untagged objects */
    _Atomic(uint32_t) next_default; /* the site it moves to (set with move_pending) */
    _Atomic(void *) class_ref;      /* SITE_CLASS_DEFAULT: the owner's reference to the class */
};

/* sampled: keep a struct site_live per site (site_table_live). */
int site_table_init(bool sampled);
/* Frees everything (tests; the agent keeps its tables for the life of the process). */
void site_table_free(void);

/* The id of the site (class_serial, trace_serial), adding it if new; 0 when the table is
 * full or memory ran out. Both serials must be non-zero. */
uint32_t site_table_intern(uint32_t class_serial, uint32_t trace_serial);

/* is_retired(class, trace) says that no new allocation can be counted at that site any more
 * (its class unloaded, or its trace never given again): the index may drop its lookup (the site
 * and its id stay; a retired site met again would get a new id). NULL: none is. */
void site_table_set_retired(bool (*is_retired)(uint32_t class_serial, uint32_t trace_serial));

/* The site with this id, or NULL. */
struct site *site_table_get(uint32_t id);

/* Sampled mode: the live estimates of the site with this id, or NULL. */
struct site_live *site_table_live(uint32_t id);

/* One past the largest id handed out (ids SITE_ID_FIRST .. site_table_end() - 1 exist). */
uint32_t site_table_end(void);

/* The state of a class, created zeroed on first use; NULL for serial 0 or out of memory. */
struct site_class *site_table_class(uint32_t class_serial);
/* The same without creating anything (for heap-walk callbacks): NULL if never created. */
struct site_class *site_table_class_peek(uint32_t class_serial);

/* Counts objs allocations of bytes in all (exact mode: a thread's pending count); returns
 * the site's allocated objects now. */
static inline uint64_t sites_count_allocs(struct site *s, uint64_t objs, uint64_t bytes)
{
    uint64_t before = atomic_fetch_add_explicit(&s->alloc_objs, objs, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->alloc_bytes, bytes, memory_order_relaxed);
    return before + objs;
}

/* Sampled mode: the weight (fixed point, SITE_WEIGHT_ONE = 1 object) of one sampled object
 * of size bytes when one sample is taken per interval bytes on average: 1 / P(sampled), where
 * P = 1 - exp(-size / interval) (the sampler's points form a Poisson process over bytes).
 * interval 0 (exact) gives SITE_WEIGHT_ONE. */
uint64_t site_table_sample_weight(uint64_t size, uint64_t interval);

/* Fixed point -> rounded whole number. */
static inline uint64_t sites_weight_round(uint64_t fixed)
{
    return (fixed + SITE_WEIGHT_ONE / 2) >> SITE_WEIGHT_SHIFT;
}

#endif

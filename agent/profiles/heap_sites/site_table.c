#include "site_table.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "mem_account.h"
#include "segarray.h"

/* The index: open addressing, 8 bytes a slot: the site id (low 32 bits) and the high 32 bits of
 * the key's hash (a slot is 0 when empty; ids are never 0). A slot whose hash bits match is
 * checked against the site's own serials, so the key is not stored twice (a slot of key and id
 * took 16 bytes). Readers probe without a lock; a writer (holding the mutex) fills the site's
 * serials before it stores the slot, with release order, so a reader that sees the slot sees
 * the serials. Growing builds a new index and publishes it; old indexes stay readable until
 * site_table_free (they total less than the current one), because a reader may still be
 * probing them. */
struct index {
    size_t mask; /* capacity - 1, capacity a power of two */
    struct index *older;
    _Atomic(uint64_t) slots[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct index *) current;
static struct segarray sites; /* id = index + SITE_ID_FIRST */
static struct segarray lives; /* sampled mode: the same index, struct site_live */
static bool with_lives;
static size_t used; /* entries in the current index; under the lock */

#define CLASS_CHUNK_BITS 10
#define CLASS_CHUNK (1u << CLASS_CHUNK_BITS)
#define CLASS_CHUNKS 16384u /* 16 M class serials */
static _Atomic(struct site_class *) class_chunks[CLASS_CHUNKS];
/* The indexes (the current and the older ones) and the class chunks, charged to mem_account. */
static _Atomic(size_t) index_bytes, class_bytes;

static void sites_measure(struct mem_use *u)
{
    u->entries = segarray_count(&sites);
    u->bytes = segarray_bytes(&sites) + segarray_bytes(&lives) + atomic_load(&index_bytes) +
               atomic_load(&class_bytes);
}

static void charge(_Atomic(size_t) *counter, size_t bytes)
{
    atomic_fetch_add(counter, bytes);
    mem_account_charge(bytes);
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static struct index *index_new(size_t capacity)
{
    struct index *x = calloc(1, sizeof *x + capacity * sizeof x->slots[0]);
    if (x) {
        x->mask = capacity - 1;
        charge(&index_bytes, mem_block(sizeof *x + capacity * sizeof x->slots[0]));
    }
    return x;
}

#define HASH_BITS(h) ((h)&0xFFFFFFFF00000000ull)

/* Writer side (lock held): put key -> id into x, which has room. */
static void index_put(struct index *x, uint64_t key, uint32_t id)
{
    uint64_t h = mix(key);
    size_t i = h & x->mask;
    while (atomic_load_explicit(&x->slots[i], memory_order_relaxed) != 0)
        i = (i + 1) & x->mask;
    atomic_store_explicit(&x->slots[i], HASH_BITS(h) | id, memory_order_release);
}

static uint64_t key_of_site(const struct site *s)
{
    return (uint64_t)s->class_serial << 32 | s->trace_serial;
}

static uint32_t index_get(const struct index *x, uint64_t key)
{
    uint64_t h = mix(key);
    size_t i = h & x->mask;
    for (;;) {
        uint64_t slot = atomic_load_explicit(&x->slots[i], memory_order_acquire);
        if (slot == 0)
            return 0;
        uint32_t id = (uint32_t)slot;
        if (HASH_BITS(slot) == HASH_BITS(h) &&
            key_of_site(segarray_at(&sites, id - SITE_ID_FIRST)) == key)
            return id;
        i = (i + 1) & x->mask;
    }
}

int site_table_init(bool sampled)
{
    segarray_init(&sites, sizeof(struct site));
    segarray_init(&lives, sizeof(struct site_live));
    with_lives = sampled;
    mem_account_register("sites", sites_measure);
    struct index *x = index_new(4096);
    if (!x)
        return -1;
    used = 0;
    atomic_store_explicit(&current, x, memory_order_release);
    return 0;
}

void site_table_free(void)
{
    struct index *x = atomic_exchange(&current, NULL);
    while (x) {
        struct index *older = x->older;
        free(x);
        x = older;
    }
    segarray_free(&sites);
    segarray_free(&lives);
    mem_account_uncharge(atomic_exchange(&index_bytes, 0) + atomic_exchange(&class_bytes, 0));
    for (uint32_t c = 0; c < CLASS_CHUNKS; c++) {
        free(atomic_load(&class_chunks[c]));
        atomic_store(&class_chunks[c], NULL);
    }
}

static uint64_t key_of(uint32_t class_serial, uint32_t trace_serial)
{
    return (uint64_t)class_serial << 32 | trace_serial;
}

/* Doubles the index (lock held). Returns false when memory ran out (the old one stays). */
static bool grow(struct index *x)
{
    struct index *bigger = index_new((x->mask + 1) * 2);
    if (!bigger)
        return false;
    uint32_t n = segarray_count(&sites);
    for (uint32_t i = 0; i < n; i++) {
        struct site *s = segarray_at(&sites, i);
        index_put(bigger, key_of_site(s), i + SITE_ID_FIRST);
    }
    bigger->older = x;
    atomic_store_explicit(&current, bigger, memory_order_release);
    return true;
}

uint32_t site_table_intern(uint32_t class_serial, uint32_t trace_serial)
{
    uint64_t key = key_of(class_serial, trace_serial);
    struct index *x = atomic_load_explicit(&current, memory_order_acquire);
    if (!x || key == 0)
        return 0;
    uint32_t id = index_get(x, key);
    if (id)
        return id;

    pthread_mutex_lock(&lock);
    x = atomic_load_explicit(&current, memory_order_relaxed);
    id = index_get(x, key);
    if (!id && segarray_count(&sites) < SITE_ID_MAX - SITE_ID_FIRST + 1) {
        if ((used + 1) * 2 > x->mask + 1 && grow(x))
            x = atomic_load_explicit(&current, memory_order_relaxed);
        if ((used + 1) * 4 <= (x->mask + 1) * 3) { /* a full index would never end a probe */
            /* The live estimates first: a reader that finds the site finds them. */
            uint32_t live = with_lives ? segarray_append(&lives) : UINT32_MAX;
            uint32_t i = !with_lives || live != UINT32_MAX ? segarray_append(&sites) : UINT32_MAX;
            if (i != UINT32_MAX) {
                struct site *s = segarray_at(&sites, i);
                s->class_serial = class_serial;
                s->trace_serial = trace_serial;
                id = i + SITE_ID_FIRST;
                index_put(x, key, id);
                used = segarray_count(&sites);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}

struct site *site_table_get(uint32_t id)
{
    if (id < SITE_ID_FIRST || id - SITE_ID_FIRST >= segarray_count(&sites))
        return NULL;
    return segarray_at(&sites, id - SITE_ID_FIRST);
}

struct site_live *site_table_live(uint32_t id)
{
    if (!with_lives || id < SITE_ID_FIRST || id - SITE_ID_FIRST >= segarray_count(&sites))
        return NULL;
    return segarray_at(&lives, id - SITE_ID_FIRST);
}

uint32_t site_table_end(void)
{
    return segarray_count(&sites) + SITE_ID_FIRST;
}

struct site_class *site_table_class(uint32_t class_serial)
{
    uint32_t c = class_serial >> CLASS_CHUNK_BITS;
    if (class_serial == 0 || c >= CLASS_CHUNKS)
        return NULL;
    struct site_class *chunk = atomic_load_explicit(&class_chunks[c], memory_order_acquire);
    if (!chunk) {
        struct site_class *fresh = calloc(CLASS_CHUNK, sizeof *fresh);
        if (!fresh)
            return NULL;
        struct site_class *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&class_chunks[c], &expected, fresh,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            chunk = fresh;
            charge(&class_bytes, mem_block(CLASS_CHUNK * sizeof *fresh));
        } else {
            free(fresh); /* another thread was first */
            chunk = expected;
        }
    }
    return &chunk[class_serial & (CLASS_CHUNK - 1)];
}

struct site_class *site_table_class_peek(uint32_t class_serial)
{
    uint32_t c = class_serial >> CLASS_CHUNK_BITS;
    if (class_serial == 0 || c >= CLASS_CHUNKS)
        return NULL;
    struct site_class *chunk = atomic_load_explicit(&class_chunks[c], memory_order_acquire);
    return chunk ? &chunk[class_serial & (CLASS_CHUNK - 1)] : NULL;
}

uint64_t site_table_sample_weight(uint64_t size, uint64_t interval)
{
    if (interval == 0 || size == 0)
        return SITE_WEIGHT_ONE;
    double p = -expm1(-(double)size / (double)interval);
    double w = (double)SITE_WEIGHT_ONE / p;
    if (!(w < 1e18)) /* p underflowed: an object far smaller than the interval */
        w = 1e18;
    uint64_t fixed = (uint64_t)llround(w);
    return fixed < SITE_WEIGHT_ONE ? SITE_WEIGHT_ONE : fixed;
}

#include "site_table.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "hash_mix.h"
#include "mem_account.h"
#include "segarray.h"

/* The index: open addressing, 8 bytes a slot: the site id (low 32 bits) and the high 32 bits of
 * the key's hash (a slot is 0 when empty; ids are never 0). A slot whose hash bits match is
 * checked against the site's own serials, so the key is not stored twice. Readers probe without
 * a lock; a writer (holding the mutex) fills the site's serials before it stores the slot, with
 * release order, so a reader that sees the slot sees the serials.
 *
 * When it is half full the index is rebuilt from its own entries, without the retired sites
 * (site_table_set_retired: a class unloaded, or a trace no stack resolves to any more, so no
 * new allocation can be counted there), at four times the entries it keeps: amortised O(1) an
 * insert, and the index holds the live sites, not every site ever made. The old index is freed
 * once no reader can still probe it: a reader counts itself in readers[epoch & 1] while it
 * probes, and the writer, after publishing the new index, flips the epoch and waits for the old
 * parity's readers to leave, twice (a reader that read the epoch before a flip but counted
 * itself after it is caught by the second wait). */
struct index {
    size_t mask; /* capacity - 1, capacity a power of two */
    _Atomic(uint64_t) slots[];
};

static _Atomic(uint32_t) reader_epoch;
static _Atomic(uint32_t) readers[2];
static bool (*retired)(uint32_t class_serial, uint32_t trace_serial);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct index *) current;
static struct segarray sites; /* id = index + SITE_ID_FIRST */
static struct segarray lives; /* sampled mode: the same index, struct site_live */
static bool with_lives;
static size_t used; /* entries in the current index; under the lock */
#define INDEX_MIN 4096

#define CLASS_CHUNK_BITS 10
#define CLASS_CHUNK (1u << CLASS_CHUNK_BITS)
#define CLASS_CHUNKS 16384u /* 16 M class serials */
static _Atomic(struct site_class *) class_chunks[CLASS_CHUNKS];
/* The index and the class chunks, charged to mem_account. */
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
    uint64_t h = hash_mix64(key);
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
    uint64_t h = hash_mix64(key);
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
    struct index *x = index_new(INDEX_MIN);
    if (!x)
        return -1;
    used = 0;
    atomic_store_explicit(&current, x, memory_order_release);
    return 0;
}

void site_table_free(void)
{
    free(atomic_exchange(&current, NULL));
    retired = NULL;
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

void site_table_set_retired(bool (*is_retired)(uint32_t class_serial, uint32_t trace_serial))
{
    pthread_mutex_lock(&lock);
    retired = is_retired;
    pthread_mutex_unlock(&lock);
}

/* Lock held, the new index published: returns once no reader can still probe an older one. */
static void wait_for_readers(void)
{
    for (int phase = 0; phase < 2; phase++) {
        uint32_t old = atomic_fetch_add(&reader_epoch, 1) & 1;
        while (atomic_load(&readers[old]) != 0)
            sched_yield();
    }
}

/* Rebuilds the index from its own entries without the retired sites, at four times the entries
 * kept (lock held). Returns false when memory ran out (the old one stays). */
static bool rebuild(struct index *x)
{
    size_t kept = 0;
    for (size_t i = 0; i <= x->mask; i++) {
        uint64_t slot = atomic_load_explicit(&x->slots[i], memory_order_relaxed);
        const struct site *s = slot ? segarray_at(&sites, (uint32_t)slot - SITE_ID_FIRST) : NULL;
        kept += s && !(retired && retired(s->class_serial, s->trace_serial));
    }
    size_t capacity = INDEX_MIN;
    while (capacity < (kept + 1) * 4)
        capacity *= 2;
    struct index *fresh = index_new(capacity);
    if (!fresh)
        return false;
    used = 0;
    for (size_t i = 0; i <= x->mask; i++) {
        uint64_t slot = atomic_load_explicit(&x->slots[i], memory_order_relaxed);
        const struct site *s = slot ? segarray_at(&sites, (uint32_t)slot - SITE_ID_FIRST) : NULL;
        if (s && !(retired && retired(s->class_serial, s->trace_serial))) {
            index_put(fresh, key_of_site(s), (uint32_t)slot);
            used++;
        }
    }
    atomic_store(&current, fresh);
    wait_for_readers();
    size_t gone = mem_block(sizeof *x + (x->mask + 1) * sizeof x->slots[0]);
    free(x);
    atomic_fetch_sub(&index_bytes, gone);
    mem_account_uncharge(gone);
    return true;
}

uint32_t site_table_intern(uint32_t class_serial, uint32_t trace_serial)
{
    uint64_t key = key_of(class_serial, trace_serial);
    if (key == 0)
        return 0;
    uint32_t epoch = atomic_load(&reader_epoch) & 1;
    atomic_fetch_add(&readers[epoch], 1);
    struct index *x = atomic_load(&current);
    uint32_t id = x ? index_get(x, key) : 0;
    atomic_fetch_sub_explicit(&readers[epoch], 1, memory_order_release);
    if (id || !x)
        return id;

    pthread_mutex_lock(&lock);
    x = atomic_load_explicit(&current, memory_order_relaxed);
    id = index_get(x, key);
    if (!id && segarray_count(&sites) < SITE_ID_MAX - SITE_ID_FIRST + 1) {
        if ((used + 1) * 2 > x->mask + 1 && rebuild(x))
            x = atomic_load_explicit(&current, memory_order_relaxed);
        if ((used + 1) * 4 <= (x->mask + 1) * 3) { /* a full index would never end a probe */
            /* The live estimates first (a reader that finds the site finds them), at the
             * site's index (one may be left over from a site that could not be added). */
            bool live_ok = !with_lives || segarray_count(&lives) > segarray_count(&sites) ||
                           segarray_append(&lives) != UINT32_MAX;
            uint32_t i = live_ok ? segarray_append(&sites) : UINT32_MAX;
            if (i != UINT32_MAX) {
                struct site *s = segarray_at(&sites, i);
                s->class_serial = class_serial;
                s->trace_serial = trace_serial;
                id = i + SITE_ID_FIRST;
                index_put(x, key, id);
                used++;
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

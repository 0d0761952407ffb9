#include "string_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_store.h"
#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"

/* A string is kept once, for the life of the process (outputs name its id): its text, with its
 * NUL, in a chunk store that never moves, and an entry that points to it. The index is open
 * addressing with 8-byte slots, the string's id (low 32 bits) and the high 32 bits of its hash
 * (a slot is 0 when empty; ids are never 0): a slot whose hash bits match is checked against the
 * entry's own text, so the key is not stored twice. A keymap's slot (24 bytes, with its own key
 * copy) cost about 60 bytes a string at its load. */
struct string_entry {
    const char *text;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *slots; /* under the lock */
static size_t mask;     /* capacity - 1, capacity a power of two */
static struct chunk_store texts;
static struct segarray entries; /* id = index + 1 */
#define INDEX_FIRST 8192

static size_t index_bytes(size_t capacity)
{
    return mem_block(capacity * sizeof *slots);
}

static void strings_measure(struct mem_use *u)
{
    pthread_mutex_lock(&lock);
    u->entries = segarray_count(&entries);
    u->bytes = (slots ? index_bytes(mask + 1) : 0) + texts.bytes + segarray_bytes(&entries);
    pthread_mutex_unlock(&lock);
}

int string_table_init(void)
{
    segarray_init(&entries, sizeof(struct string_entry));
    slots = calloc(INDEX_FIRST, sizeof *slots);
    if (!slots)
        return -1;
    mask = INDEX_FIRST - 1;
    mem_account_charge(index_bytes(INDEX_FIRST));
    mem_account_register("strings", strings_measure);
    return 0;
}

#define HASH_BITS(h) ((h)&0xFFFFFFFF00000000ull)

static const char *text_of(uint64_t slot)
{
    return ((struct string_entry *)segarray_at(&entries, (uint32_t)slot - 1))->text;
}

/* The slot of s (len bytes with its NUL), or the empty slot where it goes. Under the lock. */
static uint64_t *find(const char *s, size_t len, uint64_t h)
{
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t v = slots[i];
        if (v == 0 || (HASH_BITS(v) == HASH_BITS(h) && memcmp(text_of(v), s, len) == 0))
            return &slots[i];
    }
}

/* Doubles the index (load kept under 3/4). Under the lock. */
static bool grow(void)
{
    size_t cap = (mask + 1) * 2;
    uint64_t *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return false;
    for (size_t i = 0; i <= mask; i++) {
        uint64_t v = slots[i];
        if (v == 0)
            continue;
        const char *t = text_of(v);
        size_t j = keymap_hash(t, strlen(t) + 1) & (cap - 1);
        while (fresh[j] != 0)
            j = (j + 1) & (cap - 1);
        fresh[j] = v;
    }
    mem_account_uncharge(index_bytes(mask + 1));
    mem_account_charge(index_bytes(cap));
    free(slots);
    slots = fresh;
    mask = cap - 1;
    return true;
}

hprof_id string_table_intern(const char *s)
{
    if (!s)
        return 0;
    size_t len = strlen(s) + 1; /* with the NUL: two texts match only whole */
    uint64_t h = keymap_hash(s, len);
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    uint64_t *slot = find(s, len, h);
    if (*slot) {
        id = (uint32_t)*slot;
    } else if ((segarray_count(&entries) + 1) * 4 > (mask + 1) * 3 && !grow()) {
        id = 0;
    } else {
        slot = find(s, len, h); /* the index may have grown */
        uint32_t i = segarray_append(&entries);
        const char *copy = i != UINT32_MAX ? chunk_store_add(&texts, s, len) : NULL;
        if (copy) {
            ((struct string_entry *)segarray_at(&entries, i))->text = copy;
            id = i + 1;
            *slot = HASH_BITS(h) | id;
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}

const char *string_table_text(hprof_id id)
{
    if (id == 0 || id > segarray_count(&entries))
        return NULL;
    return ((struct string_entry *)segarray_at(&entries, (uint32_t)(id - 1)))->text;
}

void string_table_teardown(void)
{
    segarray_free(&entries);
    chunk_store_free(&texts);
    if (slots)
        mem_account_uncharge(index_bytes(mask + 1));
    free(slots);
    slots = NULL;
    mask = 0;
}

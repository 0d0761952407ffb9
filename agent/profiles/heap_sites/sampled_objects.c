#include "sampled_objects.h"

#include <pthread.h>
#include <stdlib.h>

/* Open addressing with linear probing and backward-shift deletion (no tombstones), so a table
 * that sees many frees does not fill up with dead slots. */
struct entry {
    uint64_t tag; /* 0 = empty */
    uint64_t size;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static size_t capacity, count; /* capacity: a power of two */

static size_t home(uint64_t tag, size_t mask)
{
    tag ^= tag >> 31;
    tag *= 0x9e3779b97f4a7c15ull;
    return (size_t)(tag >> 20) & mask;
}

int sampled_objects_init(void)
{
    pthread_mutex_lock(&lock);
    free(table);
    capacity = 1024;
    count = 0;
    table = calloc(capacity, sizeof *table);
    pthread_mutex_unlock(&lock);
    return table ? 0 : -1;
}

void sampled_objects_free(void)
{
    pthread_mutex_lock(&lock);
    free(table);
    table = NULL;
    capacity = count = 0;
    pthread_mutex_unlock(&lock);
}

static void insert(struct entry *t, size_t mask, uint64_t tag, uint64_t size)
{
    size_t i = home(tag, mask);
    while (t[i].tag != 0 && t[i].tag != tag)
        i = (i + 1) & mask;
    t[i].tag = tag;
    t[i].size = size;
}

static bool grow(void)
{
    size_t bigger = capacity * 2;
    struct entry *t = calloc(bigger, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < capacity; i++)
        if (table[i].tag)
            insert(t, bigger - 1, table[i].tag, table[i].size);
    free(table);
    table = t;
    capacity = bigger;
    return true;
}

bool sampled_objects_put(uint64_t tag, uint64_t size)
{
    if (tag == 0)
        return false;
    bool ok = true;
    pthread_mutex_lock(&lock);
    if (!table || ((count + 1) * 2 > capacity && !grow())) {
        ok = false;
    } else {
        size_t mask = capacity - 1, i = home(tag, mask);
        while (table[i].tag != 0 && table[i].tag != tag)
            i = (i + 1) & mask;
        if (table[i].tag == 0)
            count++;
        table[i].tag = tag;
        table[i].size = size;
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

bool sampled_objects_take(uint64_t tag, uint64_t *size)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    if (table && tag != 0) {
        size_t mask = capacity - 1, i = home(tag, mask);
        while (table[i].tag != 0 && table[i].tag != tag)
            i = (i + 1) & mask;
        if (table[i].tag == tag) {
            found = true;
            *size = table[i].size;
            count--;
            /* Shift later members of the probe run back into the hole. */
            size_t hole = i;
            for (size_t j = (i + 1) & mask; table[j].tag != 0; j = (j + 1) & mask) {
                size_t h = home(table[j].tag, mask);
                /* j may move to hole unless its home lies cyclically in (hole, j]. */
                bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
                if (!stays) {
                    table[hole] = table[j];
                    hole = j;
                }
            }
            table[hole].tag = 0;
            table[hole].size = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

size_t sampled_objects_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}

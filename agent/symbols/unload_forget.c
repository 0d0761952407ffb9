#include "unload_forget.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "frame_table.h"
#include "mem_account.h"
#include "trace_table.h"

enum { LIVE = 0, PENDING = 1, FORGOTTEN = 2 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *state; /* per class serial; grows with the class table */
static uint32_t state_n;
static _Atomic(uint32_t) unloads_at_last_pass;

static bool grow_state(uint32_t n)
{
    if (n <= state_n)
        return true;
    uint32_t cap = state_n ? state_n : 1024;
    while (cap < n)
        cap *= 2;
    uint8_t *s = realloc(state, cap);
    if (!s)
        return false;
    memset(s + state_n, LIVE, cap - state_n);
    if (state_n)
        mem_account_uncharge(mem_block(state_n));
    mem_account_charge(mem_block(cap));
    state = s;
    state_n = cap;
    return true;
}

/* Under lock. */
static uint32_t pass(void)
{
    uint32_t n = class_table_count() + 1; /* serials 1..count */
    if (!grow_state(n))
        return 0;
    uint8_t *forget = calloc(n, 1);
    if (!forget)
        return 0;
    uint32_t forgot = 0;
    for (uint32_t s = 1; s < n; s++) {
        const struct class_info *c = class_table_get(s);
        if (state[s] == PENDING) {
            state[s] = FORGOTTEN;
            forget[s] = 1;
            forgot++;
        } else if (state[s] == LIVE && c && atomic_load(&c->unloaded)) {
            state[s] = PENDING;
        }
    }
    if (forgot) {
        trace_table_forget(forget, n); /* first: it finds methods' classes in frame_table */
        frame_table_forget(forget, n);
    }
    free(forget);
    return forgot;
}

void unload_forget_poll(void)
{
    uint32_t unloads = class_table_unloaded_count();
    uint32_t last = atomic_load_explicit(&unloads_at_last_pass, memory_order_relaxed);
    /* A sixteenth of the classes still loaded, not of all classes ever seen: the lookups kept
     * between passes (up to two batches' worth) then follow what is loaded, and do not grow
     * with a long run's unloaded classes (doc/memory.md, fifth round). */
    uint32_t need = (class_table_count() - unloads) / 16;
    need = need > FORGET_BATCH ? need : FORGET_BATCH;
    if (unloads - last < need || pthread_mutex_trylock(&lock) != 0)
        return;
    if (unloads - atomic_load(&unloads_at_last_pass) >= need) {
        pass();
        atomic_store(&unloads_at_last_pass, unloads);
    }
    pthread_mutex_unlock(&lock);
}

uint32_t unload_forget_pass(void)
{
    pthread_mutex_lock(&lock);
    uint32_t unloads = class_table_unloaded_count();
    uint32_t forgot = pass();
    atomic_store(&unloads_at_last_pass, unloads);
    pthread_mutex_unlock(&lock);
    return forgot;
}

void unload_forget_teardown(void)
{
    pthread_mutex_lock(&lock);
    if (state_n)
        mem_account_uncharge(mem_block(state_n));
    free(state);
    state = NULL;
    state_n = 0;
    atomic_store(&unloads_at_last_pass, 0);
    pthread_mutex_unlock(&lock);
}

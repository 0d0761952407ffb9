#include "contention.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"
#include "ranking.h"
#include "segarray.h"

struct contention_table {
    pthread_mutex_t lock;
    struct keymap *index; /* (class serial, trace serial) -> row index + 1 */
    struct segarray rows; /* struct contention_row */
    uint64_t total_ns;
};

void contention_measure(struct contention_table *t, struct mem_use *u)
{
    pthread_mutex_lock(&t->lock);
    u->entries += segarray_count(&t->rows);
    u->bytes += keymap_bytes(t->index) + segarray_bytes(&t->rows);
    pthread_mutex_unlock(&t->lock);
}

struct contention_table *contention_new(void)
{
    struct contention_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->index = keymap_new(256);
    if (!t->index) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    segarray_init(&t->rows, sizeof(struct contention_row));
    return t;
}

void contention_free(struct contention_table *t)
{
    if (!t)
        return;
    keymap_free(t->index);
    segarray_free(&t->rows);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int contention_add(struct contention_table *t, uint32_t class_serial, uint32_t trace_serial,
                   uint64_t ns)
{
    uint32_t key[2] = {class_serial, trace_serial};
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    uint32_t slot = 0;
    if (!keymap_get(t->index, key, sizeof key, &slot)) {
        uint32_t i = segarray_append(&t->rows);
        if (i != UINT32_MAX && keymap_put(t->index, key, sizeof key, i + 1) == i + 1) {
            struct contention_row *r = segarray_at(&t->rows, i);
            r->class_serial = class_serial;
            r->trace_serial = trace_serial;
            slot = i + 1;
        }
    }
    if (slot) {
        struct contention_row *r = segarray_at(&t->rows, slot - 1);
        r->count++;
        r->ns += ns;
        t->total_ns += ns;
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

size_t contention_snapshot(struct contention_table *t, struct contention_row **rows,
                           uint64_t *total_ns)
{
    *rows = NULL;
    pthread_mutex_lock(&t->lock);
    uint32_t n = segarray_count(&t->rows);
    *total_ns = t->total_ns;
    struct contention_row *copy = n ? malloc(sizeof *copy * n) : NULL;
    if (copy)
        for (uint32_t i = 0; i < n; i++)
            copy[i] = *(struct contention_row *)segarray_at(&t->rows, i);
    pthread_mutex_unlock(&t->lock);
    *rows = copy;
    return copy ? n : 0;
}

size_t contention_time_rows(struct hprof_cost_row *rows, size_t n, uint64_t total_ns, double cutoff,
                            uint64_t *total_ms)
{
    size_t keep = ranking_sort_and_cut(rows, n, total_ns, cutoff);
    uint64_t sum = 0;
    for (size_t i = 0; i < keep; i++) {
        rows[i].cost = monitor_ns_to_ms(rows[i].cost);
        sum += rows[i].cost;
    }
    uint64_t total = monitor_ns_to_ms(total_ns);
    *total_ms = total > sum ? total : sum;
    return keep;
}

unsigned contention_thread_status(jint s)
{
    unsigned bits = 0;
    if (s & JVMTI_THREAD_STATE_TERMINATED)
        bits = HPROF_TS_ZOMBIE;
    else if (!(s & JVMTI_THREAD_STATE_ALIVE))
        bits = 0; /* not started yet: no letters fit */
    else if (s & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        bits = HPROF_TS_MONITOR_WAIT;
    else if (s & JVMTI_THREAD_STATE_SLEEPING)
        bits = HPROF_TS_SLEEPING;
    else if (s & JVMTI_THREAD_STATE_WAITING)
        bits = HPROF_TS_COND_WAIT; /* Object.wait, parked, or another wait */
    else
        bits = HPROF_TS_RUNNABLE;
    if (s & JVMTI_THREAD_STATE_SUSPENDED)
        bits |= HPROF_TS_SUSPENDED;
    if (s & JVMTI_THREAD_STATE_INTERRUPTED)
        bits |= HPROF_TS_INTERRUPTED;
    return bits;
}

#include "alloc_gate.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

_Atomic(bool) alloc_gate_closed;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t opened = PTHREAD_COND_INITIALIZER;
static struct gate_slot *slots; /* every registered slot; under lock */
static _Thread_local bool closer;

void alloc_gate_register(struct gate_slot *s)
{
    pthread_mutex_lock(&lock);
    s->prev = NULL;
    s->next = slots;
    if (slots)
        slots->prev = s;
    slots = s;
    pthread_mutex_unlock(&lock);
}

void alloc_gate_unregister(struct gate_slot *s)
{
    pthread_mutex_lock(&lock);
    if (s->prev)
        s->prev->next = s->next;
    else if (slots == s)
        slots = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    pthread_mutex_unlock(&lock);
}

void alloc_gate_each(void (*fn)(struct gate_slot *s, void *arg), void *arg)
{
    pthread_mutex_lock(&lock);
    for (struct gate_slot *s = slots; s; s = s->next)
        fn(s, arg);
    pthread_mutex_unlock(&lock);
}

void alloc_gate_wait_open(struct gate_slot *s)
{
    if (closer)
        return;
    /* Out while waiting: the closer holds the lock while it waits for slots to empty. */
    atomic_store_explicit(&s->inside, 0, memory_order_seq_cst);
    pthread_mutex_lock(&lock);
    while (atomic_load_explicit(&alloc_gate_closed, memory_order_seq_cst))
        pthread_cond_wait(&opened, &lock);
    /* No closer can close it while the lock is held: back inside before letting go. */
    atomic_store_explicit(&s->inside, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&lock);
}

void alloc_gate_close(void)
{
    closer = true;
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&alloc_gate_closed, true, memory_order_seq_cst);
    /* Callbacks inside finish in microseconds; a descheduled one takes a time slice. The
     * lock is held so no slot is freed meanwhile; a thread leaving the gate needs no lock. */
    for (struct gate_slot *s = slots; s; s = s->next) {
        for (unsigned spins = 0; atomic_load_explicit(&s->inside, memory_order_seq_cst); spins++) {
            if (spins < 64) {
                sched_yield();
            } else {
                struct timespec pause = {0, 100000};
                nanosleep(&pause, NULL);
            }
        }
    }
    pthread_mutex_unlock(&lock);
}

void alloc_gate_open(void)
{
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&alloc_gate_closed, false, memory_order_seq_cst);
    pthread_cond_broadcast(&opened);
    pthread_mutex_unlock(&lock);
    closer = false;
}

/* A gate heap=sites' allocation callbacks pass through, which a dump closes while it counts
 * live objects: heap=sites tags through several JVMTI environments (tag_envs.h), and a dump
 * walks the heap once per environment, so the walks see one heap only if no callback tags an
 * object between them. Passing an open gate costs a store and a load on the thread's own slot
 * and on one shared, read-mostly flag: no lock, no shared write. Closing it waits for the
 * callbacks in progress to leave; callbacks that arrive meanwhile wait (in native state, so the
 * VM's safepoints go on) until it opens again. The thread that closed it passes. */
#ifndef HPROF_ALLOC_GATE_H
#define HPROF_ALLOC_GATE_H

#include <stdatomic.h>
#include <stdbool.h>

struct gate_slot {
    _Atomic(unsigned) inside; /* 1 while the owner thread is between enter and leave */
    struct gate_slot *next, *prev;
};

extern _Atomic(bool) alloc_gate_closed;

/* Adds a thread's slot (once, before its first enter) / removes it (before it is freed). */
void alloc_gate_register(struct gate_slot *s);
void alloc_gate_unregister(struct gate_slot *s);

void alloc_gate_wait_open(struct gate_slot *s);

/* Calls fn on every registered slot (under the gate's lock: no slot comes or goes meanwhile). */
void alloc_gate_each(void (*fn)(struct gate_slot *s, void *arg), void *arg);

static inline void gate_enter(struct gate_slot *s)
{
    /* Sequentially consistent: the closer stores the flag and then reads every slot, this
     * thread stores its slot and then reads the flag; one of the two sees the other. */
    atomic_store_explicit(&s->inside, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&alloc_gate_closed, memory_order_seq_cst))
        alloc_gate_wait_open(s);
}

static inline void gate_leave(struct gate_slot *s)
{
    atomic_store_explicit(&s->inside, 0, memory_order_release);
}

/* Closes the gate and waits until no other thread is inside; alloc_gate_open opens it again. One
 * closer at a time (the callers hold heap=sites' control lock). */
void alloc_gate_close(void);
void alloc_gate_open(void);

#endif

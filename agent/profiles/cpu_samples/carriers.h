/* cpu=samples and virtual threads (JDK 21+): which virtual thread each carrier thread runs.
 * A carrier running a virtual thread reports a waiting state, while its CPU time goes on
 * growing with the virtual thread's work; the sampler reads that CPU time and, when samples
 * are due, takes the stack of the virtual thread mounted on the carrier instead of the
 * carrier's own (doc/cpu-samples.md).
 *
 * Each sampled platform thread has a carrier_slot. HotSpot's VirtualThreadMount and
 * VirtualThreadUnmount extension events, called on the carrier, set and clear it: the slot
 * is found through a C thread-local bound at the thread's ThreadStart (on the thread itself).
 * Mount and unmount take no lock unless a different virtual thread than last time mounts. */
#ifndef HPROF_CARRIERS_H
#define HPROF_CARRIERS_H

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "hprof_error.h"

struct carrier_slot {
    pthread_mutex_t lock;  /* guards vthread: replaced at mount, borrowed by the sampler */
    jweak vthread;         /* the virtual thread mounted last (weak: never kept alive) */
    _Atomic(bool) mounted; /* between a mount and its unmount */
};

/* The VM can follow virtual threads: adds can_support_virtual_threads when the VM offers it
 * and enables the mount events. Call once at start (OnLoad or attach). Returns hprof_ok() (on
 * JDK 17 too: no virtual threads, nothing here costs), or the error of a VM with virtual
 * threads but without mount events (the caller says what is lost). carriers_watching says
 * whether mount events are on. */
struct hprof_error carriers_watch(jvmtiEnv *jvmti);
bool carriers_watching(void);
/* Also tells fn of each mount (the JNIEnv and the virtual thread) and unmount (NULL, NULL),
 * on the carrier: the async sampler's hook (async_sampler.c). Set before the events are on. */
void carriers_observe(void (*fn)(JNIEnv *jni, jthread vthread));

void carriers_slot_init(struct carrier_slot *s);
/* Frees the slot's reference; the thread has ended (no mount can come any more). */
void carriers_slot_destroy(JNIEnv *jni, struct carrier_slot *s);

/* Binds the current thread to its slot (ThreadStart, on the new thread), or unbinds it (NULL,
 * ThreadEnd). */
void carriers_slot_bind_current(struct carrier_slot *s);

/* Whether the slot's carrier has a virtual thread mounted now. */
static inline bool carriers_slot_carrying(struct carrier_slot *s)
{
    return atomic_load_explicit(&s->mounted, memory_order_acquire);
}

/* A new local reference to the virtual thread mounted on the slot's carrier, or NULL when
 * none is (it unmounted meanwhile). The thread may unmount right after: callers check the
 * state its stack comes with. */
jthread carriers_slot_mounted(JNIEnv *jni, struct carrier_slot *s);

#endif

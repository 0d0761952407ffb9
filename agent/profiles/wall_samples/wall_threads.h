/* wall=y's list of the threads it samples: one slot per live Java thread kept by wall_names=,
 * with what the sampler remembers of it (wall_state.h) and the frames of its last walk. One
 * lock guards the list: thread start and end take it briefly, the sampler holds it for a tick
 * (so a slot and its global reference cannot go while a tick reads them). */
#ifndef HPROF_WALL_THREADS_H
#define HPROF_WALL_THREADS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thread_table.h"
#include "wall_state.h"

struct wall_thread {
    jthread ref;              /* global reference */
    struct thread_info *info; /* the thread table's entry: the slot's key */
    bool on;                  /* CONTROL: sampling of this thread on */
    bool is_virtual;          /* a virtual thread: no CPU clock (wall_state_visit_virtual) */
    int32_t sig_slot;         /* its slot in wall_signals.h, -1: none (GetStackTrace) */
    bool frameless;           /* its last walk found no Java frame: not signalled (below) */
    struct wall_seen seen;
    enum hprof_wall_state state; /* at the last visit */
    uint32_t trace;              /* the last trace credited (state pseudo-frame on top), 0: none */
    int nframes, cap;
    jvmtiFrameInfo *frames; /* the last walk, without the pseudo-frame */
};

/* names: the wall_names= pattern (NULL: every thread). False: out of memory. */
bool wall_threads_init(const char *names);

void wall_threads_lock(void);
void wall_threads_unlock(void);
/* With the lock held: the number of slots, and slot i. */
size_t wall_threads_count(void);
struct wall_thread *wall_threads_at(size_t i);

/* A thread to sample from tick, with its CPU time cpu_ns now (its name is checked against the
 * pattern; the agent's own threads are left out). current: thread is the calling thread (jni
 * its own), which then gets a signal slot (wall_signals.h). Takes the lock. */
void wall_threads_add(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, int64_t tick, uint64_t now_ns,
                      uint64_t cpu_ns, bool current);
/* A virtual thread from its VirtualThreadStart (on it). Takes the lock. */
void wall_threads_add_virtual(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread, int64_t tick,
                              uint64_t now_ns);
/* From now on, platform threads of class carrier (a global reference, or NULL) are not
 * sampled: their work is their virtual threads' samples (doc/wall-samples.md). */
void wall_threads_skip_carriers(jclass carrier);
/* Every live thread (VM init, attach); current: the calling thread. */
void wall_threads_add_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread current, int64_t tick,
                           uint64_t now_ns);
/* ThreadEnd of info's thread: calls fn(slot, arg) with the lock held, then frees the slot. */
void wall_threads_end(JNIEnv *jni, const struct thread_info *info,
                      void (*fn)(struct wall_thread *t, void *arg), void *arg);
/* CONTROL: thread info (NULL: all) on or off. */
void wall_threads_set_on(const struct thread_info *info, bool on);

/* Keeps at least n frames in t (with the lock held). False: out of memory. */
bool wall_threads_reserve(struct wall_thread *t, int n);

#endif

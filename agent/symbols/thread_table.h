/* Java threads with stable serials. Each thread's entry hangs off JVMTI thread-local
 * storage, so finding the current thread's serial costs no lock. Looking a thread up never
 * writes: THREAD START and THREAD END are the emitter's (agent/emit/emit.h). Thread-safe. */
#ifndef HPROF_THREAD_TABLE_H
#define HPROF_THREAD_TABLE_H

#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

struct thread_info {
    uint32_t serial;
    hprof_id object_id; /* the Thread object's tag */
    hprof_id name_id, group_id, parent_group_id;
    uint32_t trace_serial; /* stack when it started */
    _Atomic(bool) ended;
    _Atomic(void *) cpu_times; /* cpu=times state of a virtual thread
                                  (agent/profiles/cpu_times/tracker_natives.c) */
};

int thread_table_init(void);
/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void thread_table_teardown(void);

/* The entry of thread (NULL = the current thread), registering it on first sight. */
struct thread_info *thread_table_of(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* The entry of the current thread, which an event callback was given as thread: one
 * thread-local-storage read with no thread lookup once the thread is registered (a virtual
 * thread mounted on its carrier included, JDK 21+), else thread_table_of(thread). About 0.1 us
 * against 0.5 us for thread_table_of with a jthread. */
struct thread_info *thread_table_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* ThreadEnd: marks the thread ended; its entry the first time, NULL after that. */
struct thread_info *thread_table_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);

/* Registers every live thread (at VM init or attach). */
void thread_table_register_live(jvmtiEnv *jvmti, JNIEnv *jni);

/* A new local reference to the live thread whose object id (its Thread object's tag, as in
 * THREAD START) is id, or NULL when no live thread has it. Walks GetAllThreads: for rare
 * lookups such as socket CONTROL commands, not for event callbacks. */
jthread thread_table_find_live(jvmtiEnv *jvmti, JNIEnv *jni, hprof_id id);

struct thread_info *thread_table_get(uint32_t serial);
uint32_t thread_table_count(void);

#endif

/* heap=sites inside: what its files share (heap_sites.c has the overview). Not for other
 * modules: they see heap_sites.h. */
#ifndef HPROF_HEAP_SITES_INTERNAL_H
#define HPROF_HEAP_SITES_INTERNAL_H

#include "heap_sites.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "agct_stack.h"
#include "alloc_gate.h"
#include "class_table.h"
#include "clock.h"
#include "env_knobs.h"
#include "jvmti_util.h"
#include "log.h"
#include "emit.h"
#include "output.h"
#include "ranking.h"
#include "sampled_objects.h"
#include "site_table.h"
#include "tag_envs.h"
#include "tags.h"
#include "thread_table.h"
#include "trace_cache.h"
#include "trace_table.h"

_Static_assert(sizeof(jvmtiFrameInfo) == sizeof(struct raw_frame), "frame layout");

/* The last few objects this thread's sampler reported (exact mode), for VMObjectAlloc: on
 * JDK 21+ the tag map is keyed by identity hash, and JVM_Clone resets the header of the clone
 * after the sampler reported it, so the tag set then is lost; the VMObjectAlloc event that
 * follows finds the object untagged, and these say it was counted and where. */
struct recent_alloc {
    uint32_t cls, site;
    uint64_t size;
    bool tagged; /* false: a default-site object, untagged on purpose */
};

#define RECENT_ALLOCS 4

/* Exact mode: allocations a thread counted at a site and not yet added to the site's shared
 * counters. Direct-mapped by site id; a slot is added (flushed) when another site takes it,
 * when it holds PENDING_MAX objects, and for every thread at a dump, behind the gate. Adds to
 * counters other threads add to (cache lines that move between cores on every allocation,
 * 200 ns at 32 threads) become one per PENDING_MAX allocations of a site. */
struct pending_count {
    uint32_t site, objs;
    uint64_t bytes;
};
#define PENDING_SLOTS 16u
#define PENDING_MAX 1024u

/* Per thread: the stack buffer, the cache in front of the shared tables, a block of tag
 * serials. Reached through a C thread-local pointer (no JVMTI call); created on the thread's
 * first allocation and freed at its ThreadEnd. */
struct site_thread {
    struct gate_slot gate; /* registered with the dump gate (alloc_gate.h) */
    int env;               /* its tag environment (tag_envs.h), for classes without defaults */
    struct trace_cache *cache;
    jvmtiFrameInfo *frames;
    jvmtiFrameInfo *check_frames; /* GetStackTrace's, in the AGCT self-check */
    int frames_cap;
    uint64_t serial_next, serial_end;
    struct recent_alloc recent[RECENT_ALLOCS];
    unsigned recent_next;
    uint32_t lookups, misses; /* of the stack cache, since it last grew */
    uint64_t seen_epoch;      /* heap_sites_state.epoch when its last allocation callback ended */
    struct pending_count pending[PENDING_SLOTS];
};

#define SERIAL_BLOCK 1024
#define CACHE_SLOTS_FIRST 1024u
/* A cache that misses more than one lookup in CACHE_MISS_RATIO of CACHE_WINDOW grows 4x. */
#define CACHE_WINDOW 65536u
#define CACHE_MISS_RATIO 32u

/* Moving default sites: a site allocating MOVE_FACTOR times as many objects as its class's
 * default (and MOVE_MIN more) takes over, checked whenever a thread's pending count of the site
 * is added (at most every PENDING_MAX allocations); requests queue for the worker thread. */
#define MOVE_FACTOR 2
#define MOVE_MIN 65536
#define MOVES_MAX 2 /* per class: each costs a (class-filtered) heap walk */
#define MOVE_QUEUE 512
#define MOVE_BATCH_DELAY_MS 100

struct heap_sites_state {
    bool sampled;      /* sites_interval > 0 */
    uint64_t interval; /* bytes per sample; 0 = exact */
    bool lineno, per_thread;
    bool defaults; /* exact mode started at OnLoad: default sites stay untagged */
    /* HPROF_SITES_AGCT_CHECK (a diagnostic): SampledObjectAlloc events also walk the stack
     * with AGCT (agct_stack.h) and compare it with GetStackTrace's, whose frames are always
     * the ones used; disagreements are counted and the first few printed. AGCT is not used
     * otherwise: from an allocation event it cannot walk most compiled frames and it returns
     * a truncated or a wrong stack in a few cases (doc/heap-sites.md, "Mechanism"). */
    bool async_check;
    bool attached; /* started by Agent_OnAttach */
    _Atomic(bool) tracking;
    /* While set, every tracked object is tagged, default site or not: the heap walks that
     * mark untracked objects run with it set, so nothing allocated meanwhile is mistaken. */
    _Atomic(bool) tag_all;
    /* Bumped before and after each heap walk that gives untagged objects of default-site
     * classes tags (a default site's move, tracking turned back on). An allocation callback
     * that saw it change while it ran tags its object, since the walk may have seen that
     * object untagged. One that finds it changed since its thread's previous callback ended
     * (site_thread.seen_epoch) checks its object's tag before leaving it untagged: the
     * object was allocated after that, so a walk may have tagged it before this callback
     * began (its thread descheduled right after the allocation). */
    _Atomic(uint64_t) epoch;
    pthread_mutex_t control_lock; /* control commands, heap passes, dumps */
    jclass thread_class;          /* global reference to java.lang.Thread */
};
extern struct heap_sites_state heap_sites_state;

/* Counters for tuning, printed at VM death when HPROF_SITES_STATS is set in the environment
 * (doc/heap-sites.md); off, they cost one predictable branch. */
enum {
    STAT_ALLOCS,
    STAT_TAGGED,
    STAT_STACK_MISSES,
    STAT_CLASS_MISSES,
    STAT_VM_ALLOCS,
    STAT_MOVES,
    STAT_ASYNC,           /* stacks AGCT walked */
    STAT_ASYNC_FALLBACKS, /* AGCT declined, GetStackTrace walked */
    STAT_ASYNC_MISMATCHES,
    STAT_ASYNC_NS,          /* time in AGCT calls that walked */
    STAT_ASYNC_FALLBACK_NS, /* time in AGCT calls that declined */
    STAT_CHECK_NS,          /* time in the check's GetStackTrace calls */
    STAT_N
};
extern _Atomic(uint64_t) heap_sites_stats[STAT_N];
extern bool heap_sites_stats_on;
#define STAT(i)                                                                                    \
    do {                                                                                           \
        if (heap_sites_stats_on)                                                                   \
            atomic_fetch_add_explicit(&heap_sites_stats[i], 1, memory_order_relaxed);              \
    } while (0)

/* ---- across the files ------------------------------------------------------------------ */

/* sites_alloc.c */
void sites_alloc_thread_free(JNIEnv *jni);
/* Adds every thread's pending counts to the sites' counters. Only with the gate closed. */
void sites_alloc_flush_pending(void);
struct site_class *sites_alloc_class_state(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass,
                                           uint32_t serial, uint8_t *kind);
/* The tag environment of a class with a default site (tag_envs.h). */
jvmtiEnv *sites_alloc_class_env(uint32_t class_serial);
void JNICALL sites_alloc_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                          jobject object, jclass klass, jlong size);
void JNICALL sites_alloc_on_vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                            jobject object, jclass klass, jlong size);
void JNICALL sites_alloc_on_object_free(jvmtiEnv *jvmti, jlong tag);

/* sites_walks.c */
struct site_class *sites_walks_default_class(jlong class_tag);
jint JNICALL sites_walks_mark_untracked(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                        void *user_data);
jint JNICALL sites_walks_pin_defaults(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                      void *user_data);
void sites_walks_walk_filtered(jvmtiEnv *jvmti, jint filter, jclass klass,
                               jvmtiHeapIterationCallback cb, void *user_data);
/* The objects of every class with a default site, each walked in its class's tag environment. */
void sites_walks_walk_default_classes(jvmtiHeapIterationCallback cb, void *user_data);
void sites_walks_classify_loaded(jvmtiEnv *jvmti, JNIEnv *jni);
void sites_walks_start_worker(jvmtiEnv *jvmti, JNIEnv *jni);
void sites_walks_stop_worker(void);
bool sites_walks_queue_move(uint32_t class_serial);

#endif

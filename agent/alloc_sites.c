/* heap=sites (doc/heap-sites.md).
 *
 * Allocations: SampledObjectAlloc with SetHeapSamplingInterval(0) (exact mode) or
 * sites_interval (sampled mode), set in Agent_OnLoad, plus VMObjectAlloc in exact mode for the
 * few VM-internal allocations the sampler skips or whose tag the VM wipes. Each allocation
 * costs one GetStackTrace of `depth` frames; a per-thread cache maps those frames to a trace
 * serial and, with the class, to a site id, without locks; counters are atomics in the site
 * table.
 *
 * Live counts, exact mode: a heap walk (IterateThroughHeap) at each dump counts the objects
 * still in the heap per site, so they are exact at that moment with no ObjectFree events to
 * settle. The walk needs each object's site: objects carry it in their tag, except one site per
 * class (its "default site") whose objects stay untagged, because SetTag is the most expensive
 * part of an allocation event after the stack walk. That is only sound for classes whose objects
 * are never allocated behind the sampler's back: VM fillers (int[], Object), interned strings,
 * method-handle internals and the thread objects of attaching threads are all of classes of the
 * boot loader, so only classes of other loaders get a default site (not Thread subclasses,
 * whose objects other modules tag). A class's default starts as the first site seen and moves
 * to a site that allocates far more; a background thread makes the move with one heap walk that
 * first gives the old default's untagged objects explicit tags. Objects that were in the heap
 * before tracking started (start-up, tracking turned off) are tagged "untracked" by a heap walk
 * so they are not taken for default-site objects.
 *
 * Live counts, sampled mode: every sampled object is tagged and ObjectFree takes its weight off
 * its site; pending ObjectFree events are flushed before each dump. */
#include "alloc_sites.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "alloc_gate.h"
#include "async_stack.h"
#include "class_table.h"
#include "jvmti_util.h"
#include "log.h"
#include "output.h"
#include "sample_table.h"
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

/* Per thread: the stack buffer, the cache in front of the shared tables, a block of tag
 * serials. Reached through a C thread-local pointer (no JVMTI call); created on the thread's
 * first allocation and freed at its ThreadEnd. */
struct site_thread {
    struct gate_slot gate; /* first: registered with the dump gate (alloc_gate.h) */
    int env;               /* its tag environment (tag_envs.h), for classes without defaults */
    struct trace_cache *cache;
    jvmtiFrameInfo *frames;
    jvmtiFrameInfo *check_frames; /* GetStackTrace's, in the AGCT self-check */
    int frames_cap;
    uint64_t serial_next, serial_end;
    struct recent_alloc recent[RECENT_ALLOCS];
    unsigned recent_next;
    uint32_t lookups, misses; /* of the stack cache, since it last grew */
    uint64_t seen_epoch;      /* S.epoch when its last allocation callback ended */
};

#define SERIAL_BLOCK 1024
#define CACHE_SLOTS_FIRST 1024u
/* A cache that misses more than one lookup in CACHE_MISS_RATIO of CACHE_WINDOW grows 4x. */
#define CACHE_WINDOW 65536u
#define CACHE_MISS_RATIO 32u

static _Thread_local struct site_thread *current_thread;

/* Moving default sites: a site allocating MOVE_FACTOR times as many objects as its class's
 * default (and MOVE_MIN more) takes over; requests queue for the worker thread. */
#define MOVE_FACTOR 2
#define MOVE_MIN 65536
#define MOVE_CHECK_MASK 1023u /* checked every 1024 allocations of a site */
#define MOVES_MAX 2           /* per class: each costs a (class-filtered) heap walk */
#define MOVE_QUEUE 512
#define MOVE_BATCH_DELAY_MS 100

static struct {
    bool sampled;      /* sites_interval > 0 */
    uint64_t interval; /* bytes per sample; 0 = exact */
    bool lineno, per_thread;
    bool defaults; /* exact mode started at OnLoad: default sites stay untagged */
    /* HPROF_SITES_AGCT_CHECK (a diagnostic): SampledObjectAlloc events also walk the stack
     * with AGCT (async_stack.h) and compare it with GetStackTrace's, whose frames are always
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
} S = {.control_lock = PTHREAD_MUTEX_INITIALIZER};

/* The worker that moves default sites. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t queue[MOVE_QUEUE]; /* class serials */
    int n;
    bool running, stopping;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

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
static _Atomic(uint64_t) stats[STAT_N];
static bool stats_on;
#define STAT(i)                                                                                    \
    do {                                                                                           \
        if (stats_on)                                                                              \
            atomic_fetch_add_explicit(&stats[i], 1, memory_order_relaxed);                         \
    } while (0)

/* ---- per-thread state ------------------------------------------------------------------ */

static struct site_thread *site_thread_get(void)
{
    struct site_thread *t = current_thread;
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cache = trace_cache_new((unsigned)traces_depth(), CACHE_SLOTS_FIRST);
    if (!t->cache) {
        free(t);
        return NULL;
    }
    t->env = tag_envs_next_for_thread();
    gate_register(&t->gate);
    current_thread = t;
    return t;
}

static void delete_weak(void *ref, void *jni)
{
    (*(JNIEnv *)jni)->DeleteWeakGlobalRef((JNIEnv *)jni, ref);
}

static void site_thread_free(JNIEnv *jni)
{
    struct site_thread *t = current_thread;
    current_thread = NULL;
    if (t) {
        gate_unregister(&t->gate);
        if (jni)
            trace_cache_each_ref(t->cache, delete_weak, jni);
        trace_cache_free(t->cache);
        free(t->frames);
        free(t->check_frames);
        free(t);
    }
}

/* Counts a stack lookup; replaces a cache that misses too often with a 4x larger one. True when
 * it did: entries of the old cache are freed then, so the caller must drop the one it holds. */
static bool cache_lookup_done(JNIEnv *jni, struct site_thread *t, bool hit)
{
    t->misses += !hit;
    if (++t->lookups < CACHE_WINDOW)
        return false;
    bool replaced = false;
    unsigned slots = trace_cache_slots(t->cache);
    if (t->misses > CACHE_WINDOW / CACHE_MISS_RATIO && slots < TRACE_CACHE_MAX_SLOTS) {
        struct trace_cache *bigger = trace_cache_new((unsigned)traces_depth(), slots * 4);
        if (bigger) {
            trace_cache_each_ref(t->cache, delete_weak, jni);
            trace_cache_free(t->cache);
            t->cache = bigger;
            replaced = true;
        }
    }
    t->lookups = t->misses = 0;
    return replaced;
}

static uint64_t next_serial(struct site_thread *t)
{
    if (t->serial_next == t->serial_end) {
        t->serial_next = tags_reserve_serials(SERIAL_BLOCK);
        t->serial_end = t->serial_next + SERIAL_BLOCK;
    }
    return t->serial_next++;
}

/* ---- classes --------------------------------------------------------------------------- */

static uint32_t class_serial(jvmtiEnv *jvmti, jclass klass)
{
    jlong tag = 0;
    if ((*jvmti)->GetTag(jvmti, klass, &tag) == JVMTI_ERROR_NONE &&
        tag_site((uint64_t)tag) == TAG_SITE_CLASS)
        return (uint32_t)tag_serial((uint64_t)tag);
    return classes_serial_of(jvmti, klass);
}

static uint8_t classify(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, uint32_t serial)
{
    const struct class_info *c = classes_get(serial);
    if (c && c->signature && strcmp(c->signature, "Ljava/lang/Class;") == 0)
        return SITE_CLASS_IGNORED;
    if (!S.defaults || !jni || !S.thread_class)
        return SITE_CLASS_TAGGED;
    jobject loader = NULL;
    if ((*jvmti)->GetClassLoader(jvmti, klass, &loader) != JVMTI_ERROR_NONE || !loader)
        return SITE_CLASS_TAGGED; /* the boot loader's: the VM allocates some behind our back */
    (*jni)->DeleteLocalRef(jni, loader);
    /* Thread objects get tags from the thread table when they start. */
    if ((*jni)->IsAssignableFrom(jni, klass, S.thread_class))
        return SITE_CLASS_TAGGED;
    return SITE_CLASS_DEFAULT;
}

/* The environment that holds the tags of a class with a default site. */
static jvmtiEnv *class_env(uint32_t class_serial)
{
    return tag_envs_at(tag_envs_of_class(class_serial, tag_envs_count()));
}

static bool has_default(uint8_t kind)
{
    return kind == SITE_CLASS_DEFAULT || kind == SITE_CLASS_SWITCHING;
}

/* The environment an object of this class allocated by this thread is tagged through. */
static jvmtiEnv *tag_env(uint32_t cls, uint8_t kind, const struct site_thread *t)
{
    return has_default(kind) ? class_env(cls) : tag_envs_at(t->env);
}

static struct site_class *class_state(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, uint32_t serial,
                                      uint8_t *kind)
{
    struct site_class *k = sites_class(serial);
    if (!k)
        return NULL;
    uint8_t v = atomic_load_explicit(&k->kind, memory_order_acquire);
    if (v == SITE_CLASS_UNKNOWN) {
        uint8_t expected = SITE_CLASS_UNKNOWN;
        v = classify(jvmti, jni, klass, serial); /* the same answer on every thread */
        if (v == SITE_CLASS_DEFAULT) {
            /* Its objects' tags are in the class's environment: the class is tagged there
             * too, so heap walks in that environment know it (twice in a race: harmless). */
            jvmtiEnv *e = class_env(serial);
            (*e)->SetTag(e, klass, (jlong)tag_make(TAG_SITE_CLASS, serial));
            /* For the worker's heap walks over this class only. */
            void *none = NULL, *ref = (*jni)->NewWeakGlobalRef(jni, klass);
            if (ref && !atomic_compare_exchange_strong(&k->class_ref, &none, ref))
                (*jni)->DeleteWeakGlobalRef(jni, ref);
        }
        if (!atomic_compare_exchange_strong_explicit(&k->kind, &expected, v, memory_order_acq_rel,
                                                     memory_order_acquire))
            v = expected;
    }
    *kind = v;
    return k;
}

/* ---- the allocation path --------------------------------------------------------------- */

/* What one allocation resolved to. */
struct alloc_site {
    uint32_t cls, site;
    struct site_class *k;
    uint8_t kind;
};

#define ASYNC_MISMATCHES_SHOWN 10

static void print_frames(jvmtiEnv *jvmti, const char *who, const jvmtiFrameInfo *f, jint n)
{
    fprintf(stderr, "  %s (%d frames):\n", who, (int)n);
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        jclass holder = NULL;
        (*jvmti)->GetMethodName(jvmti, f[i].method, &name, NULL, NULL);
        if ((*jvmti)->GetMethodDeclaringClass(jvmti, f[i].method, &holder) == JVMTI_ERROR_NONE)
            (*jvmti)->GetClassSignature(jvmti, holder, &sig, NULL);
        fprintf(stderr, "    %s.%s @%lld\n", sig ? sig : "?", name ? name : "?",
                (long long)f[i].location);
        jvmti_free(jvmti, name);
        jvmti_free(jvmti, sig);
    }
}

static uint64_t precise_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The AGCT self-check: AGCT and then GetStackTrace walk the same stack (into t->frames and
 * t->check_frames), both timed; a difference is counted (and the first few printed). Returns
 * GetStackTrace's frames, copied to t->frames, so what is recorded never depends on AGCT. */
static jint check_async(jvmtiEnv *jvmti, JNIEnv *jni, struct site_thread *t, int depth)
{
    uint64_t t0 = precise_ns();
    jint n_async = async_stack_get(jni, t->frames, depth);
    uint64_t t1 = precise_ns();
    jint n = 0;
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, NULL, 0, depth, t->check_frames, &n);
    uint64_t t2 = precise_ns();
    atomic_fetch_add(&stats[n_async >= 0 ? STAT_ASYNC : STAT_ASYNC_FALLBACKS], 1);
    atomic_fetch_add(&stats[n_async >= 0 ? STAT_ASYNC_NS : STAT_ASYNC_FALLBACK_NS], t1 - t0);
    atomic_fetch_add(&stats[STAT_CHECK_NS], t2 - t1);
    if (err != JVMTI_ERROR_NONE)
        return -1;
    bool same = n_async < 0 || n == n_async; /* declined: nothing to compare */
    for (jint i = 0; same && n_async >= 0 && i < n; i++)
        same = t->frames[i].method == t->check_frames[i].method &&
               t->frames[i].location == t->check_frames[i].location;
    if (!same) {
        uint64_t k = atomic_fetch_add(&stats[STAT_ASYNC_MISMATCHES], 1);
        if (k < ASYNC_MISMATCHES_SHOWN) {
            fprintf(stderr, "HPROF: heap=sites AGCT check: stacks differ\n");
            print_frames(jvmti, "AsyncGetCallTrace", t->frames, n_async);
            print_frames(jvmti, "GetStackTrace", t->check_frames, n);
        }
    }
    memcpy(t->frames, t->check_frames, sizeof *t->frames * (size_t)n);
    return n;
}

/* The current thread's stack, as a cache entry (or, for a stack too deep to cache, just its
 * trace serial in *trace). NULL with *trace 0 when memory ran out. */
static struct trace_cache_entry *current_stack(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                               bool async, struct site_thread *t, uint32_t *trace)
{
    *trace = 0;
    int depth = traces_depth();
    jint n = 0;
    if (depth > 0) {
        if (t->frames_cap < depth) {
            jvmtiFrameInfo *f = realloc(t->frames, sizeof *f * (size_t)depth);
            jvmtiFrameInfo *c = f && S.async_check
                                    ? realloc(t->check_frames, sizeof *c * (size_t)depth)
                                    : t->check_frames;
            if (f)
                t->frames = f;
            if (c)
                t->check_frames = c;
            if (!f || (S.async_check && !c))
                return NULL;
            t->frames_cap = depth;
        }
        n = async && S.async_check ? check_async(jvmti, jni, t, depth) : -1;
        if (n < 0 &&
            (*jvmti)->GetStackTrace(jvmti, NULL, 0, depth, t->frames, &n) != JVMTI_ERROR_NONE)
            n = 0;
    }
    if (!S.lineno) /* frames of one method are one frame: make their traces one trace too */
        for (jint i = 0; i < n; i++)
            t->frames[i].location = 0;
    uint32_t thread_serial = 0;
    if (S.per_thread) {
        struct thread_info *ti = threads_current(jvmti, jni, thread);
        thread_serial = ti ? ti->serial : 0;
    }
    const struct raw_frame *raw = (const struct raw_frame *)t->frames;
    uint64_t hash = trace_cache_hash(raw, (unsigned)n, thread_serial);
    struct trace_cache_entry *e = trace_cache_find(t->cache, hash, raw, (unsigned)n, thread_serial);
    if (cache_lookup_done(jni, t, e != NULL))
        e = NULL; /* it pointed into the cache just freed; the new one is empty */
    if (!e) {
        STAT(STAT_STACK_MISSES);
        *trace = traces_intern(jvmti, t->frames, n, thread_serial);
        e = trace_cache_store(t->cache, hash, raw, (unsigned)n, thread_serial, *trace);
    }
    if (e)
        *trace = e->trace_serial;
    return e;
}

/* The class and site of an allocation of klass by the current thread. The stack comes first:
 * its cache entry remembers the last class allocated under it as a weak reference, so the
 * usual case compares two references (IsSameObject) instead of reading the class's tag,
 * which goes through the VM's tag map and its lock. */
static bool resolve(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool async, jclass klass,
                    struct site_thread *t, struct alloc_site *a)
{
    uint32_t trace = 0;
    struct trace_cache_entry *e = current_stack(jvmti, jni, thread, async, t, &trace);
    if (!trace)
        return false;
    if (e && e->site && e->class_ref && (*jni)->IsSameObject(jni, klass, e->class_ref)) {
        a->cls = e->class_serial;
        a->site = e->site;
    } else {
        STAT(STAT_CLASS_MISSES);
        a->cls = class_serial(jvmti, klass);
        a->site = a->cls ? sites_intern(a->cls, trace) : 0;
        if (!a->site)
            return false;
        if (e) {
            if (e->class_ref)
                (*jni)->DeleteWeakGlobalRef(jni, e->class_ref);
            e->class_ref = (*jni)->NewWeakGlobalRef(jni, klass);
            e->class_serial = a->cls;
            e->site = a->site;
        }
    }
    a->k = class_state(jvmti, jni, klass, a->cls, &a->kind);
    return a->k != NULL;
}

enum tag_need { TAG_NO, TAG_YES, TAG_IF_TAGGED };

/* Exact mode: whether this object must carry its site in its tag. epoch: S.epoch when the
 * callback began. */
static enum tag_need needs_tag(const struct alloc_site *a, uint64_t epoch,
                               const struct site_thread *t)
{
    if (a->kind != SITE_CLASS_DEFAULT)
        return TAG_YES;
    uint32_t d = atomic_load_explicit(&a->k->default_site, memory_order_acquire);
    if (d == 0 && atomic_compare_exchange_strong_explicit(
                      &a->k->default_site, &d, a->site, memory_order_acq_rel, memory_order_acquire))
        d = a->site;
    if (d != a->site || atomic_load(&S.tag_all) || atomic_load(&S.epoch) != epoch)
        return TAG_YES;
    return epoch != t->seen_epoch ? TAG_IF_TAGGED : TAG_NO;
}

/* Exact mode, an allocation at a site that is not its class's default: asks for the default to
 * move here once this site allocates far more. */
static void maybe_move_default(const struct alloc_site *a, uint64_t allocated)
{
    if ((allocated & MOVE_CHECK_MASK) != 0 || a->kind != SITE_CLASS_DEFAULT)
        return;
    struct site *d = sites_get(atomic_load_explicit(&a->k->default_site, memory_order_relaxed));
    if (!d || d == sites_get(a->site))
        return;
    uint64_t at_default = atomic_load_explicit(&d->alloc_objs, memory_order_relaxed);
    if (allocated < MOVE_FACTOR * at_default + MOVE_MIN || atomic_load(&a->k->moves) >= MOVES_MAX)
        return;
    uint8_t idle = 0;
    if (!atomic_compare_exchange_strong(&a->k->move_pending, &idle, 1))
        return;
    atomic_store(&a->k->next_default, a->site);
    pthread_mutex_lock(&W.lock);
    if (W.running && !W.stopping && W.n < MOVE_QUEUE) {
        W.queue[W.n++] = a->cls;
        pthread_cond_signal(&W.cond);
    } else {
        atomic_store(&a->k->move_pending, 0);
    }
    pthread_mutex_unlock(&W.lock);
}

/* async: called from SampledObjectAlloc, where AGCT may walk the stack (async_stack.h). */
static void record(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool async, jobject object,
                   jclass klass, jlong size, struct site_thread *t)
{
    uint64_t epoch = atomic_load(&S.epoch);
    struct alloc_site a;
    if (!resolve(jvmti, jni, thread, async, klass, t, &a) || a.kind == SITE_CLASS_IGNORED)
        return;
    jvmtiEnv *tenv = tag_env(a.cls, a.kind, t);
    struct site *s = sites_get(a.site);
    if (!s)
        return;
    uint64_t bytes = size > 0 ? (uint64_t)size : 0;
    if (!S.sampled) {
        uint64_t n = atomic_fetch_add_explicit(&s->alloc_objs, 1, memory_order_relaxed) + 1;
        atomic_fetch_add_explicit(&s->alloc_bytes, bytes, memory_order_relaxed);
        enum tag_need need = needs_tag(&a, epoch, t);
        jlong tag = 0;
        if (need == TAG_IF_TAGGED &&
            ((*tenv)->GetTag(tenv, object, &tag) != JVMTI_ERROR_NONE || tag != 0))
            need = TAG_YES;
        bool tagged = need == TAG_YES;
        if (tagged) {
            (*tenv)->SetTag(tenv, object, (jlong)tag_make(a.site, next_serial(t)));
            maybe_move_default(&a, n);
        }
        t->recent[t->recent_next++ % RECENT_ALLOCS] =
            (struct recent_alloc){a.cls, a.site, bytes, tagged};
        STAT(STAT_ALLOCS);
        if (tagged)
            STAT(STAT_TAGGED);
        return;
    }
    uint64_t w = sites_sample_weight(bytes, S.interval);
    atomic_fetch_add_explicit(&s->alloc_objs, w, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->alloc_bytes, w * bytes, memory_order_relaxed);
    uint64_t tag = tag_make(a.site, next_serial(t));
    /* Recorded before tagging: the object cannot die before this callback returns. */
    if (!samples_put(tag, bytes))
        return;
    if ((*tenv)->SetTag(tenv, object, (jlong)tag) != JVMTI_ERROR_NONE) {
        uint64_t ignored;
        samples_take(tag, &ignored);
        return;
    }
    atomic_fetch_add_explicit(&s->live_objs, w, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->live_bytes, w * bytes, memory_order_relaxed);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                                     jclass klass, jlong size)
{
    if (!atomic_load_explicit(&S.tracking, memory_order_relaxed))
        return;
    struct site_thread *t = site_thread_get();
    if (!t)
        return;
    gate_enter(&t->gate);
    record(jvmti, jni, thread, S.async_check, object, klass, size, t);
    t->seen_epoch = atomic_load(&S.epoch);
    gate_leave(&t->gate);
}

static void vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                            jclass klass, jlong size, struct site_thread *t)
{
    uint32_t cls = class_serial(jvmti, klass);
    uint8_t kind = 0;
    if (!cls || !class_state(jvmti, jni, klass, cls, &kind) || kind == SITE_CLASS_IGNORED)
        return;
    jvmtiEnv *tenv = tag_env(cls, kind, t);
    jlong tag = 0;
    if ((*tenv)->GetTag(tenv, object, &tag) != JVMTI_ERROR_NONE || tag != 0)
        return;
    uint64_t bytes = size > 0 ? (uint64_t)size : 0;
    for (unsigned i = 1; i <= RECENT_ALLOCS; i++) {
        struct recent_alloc *r = &t->recent[(t->recent_next - i) % RECENT_ALLOCS];
        if (r->cls == cls && r->size == bytes) {
            if (r->tagged)
                (*tenv)->SetTag(tenv, object, (jlong)tag_make(r->site, next_serial(t)));
            r->cls = 0; /* matches one object only */
            return;
        }
    }
    if (kind == SITE_CLASS_TAGGED) {
        STAT(STAT_VM_ALLOCS);
        record(jvmti, jni, thread, false, object, klass, size, t);
    }
}

/* Objects the VM allocates for JNI, reflection, cloning and method handles (exact mode). The
 * sampler reported nearly all of them already; an untagged one here is either one whose tag
 * JVM_Clone wiped (see struct recent_alloc: it gets a fresh tag naming the same site) or,
 * rarely, one the sampler skipped: counted now. Classes with a default site are left to the
 * sampler, which sees all their allocations. */
static void JNICALL on_vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                                       jclass klass, jlong size)
{
    if (!atomic_load_explicit(&S.tracking, memory_order_relaxed))
        return;
    struct site_thread *t = site_thread_get();
    if (!t)
        return;
    gate_enter(&t->gate);
    vm_object_alloc(jvmti, jni, thread, object, klass, size, t);
    t->seen_epoch = atomic_load(&S.epoch);
    gate_leave(&t->gate);
}

/* Sampled mode. No JVMTI calls here (none are allowed). */
static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    uint64_t t = (uint64_t)tag, site = tag_site(t), size = 0;
    if (site == TAG_SITE_CLASS) {
        classes_mark_unloaded((uint32_t)tag_serial(t));
        return;
    }
    if (site < SITE_ID_FIRST || !samples_take(t, &size))
        return;
    struct site *s = sites_get((uint32_t)site);
    if (!s)
        return;
    uint64_t w = sites_sample_weight(size, S.interval);
    atomic_fetch_sub_explicit(&s->live_objs, w, memory_order_relaxed);
    atomic_fetch_sub_explicit(&s->live_bytes, w * size, memory_order_relaxed);
}

/* ---- heap walks (exact mode with default sites) ---------------------------------------- */

/* The state of a heap object's class if it has a default site, else NULL. */
static struct site_class *default_class(jlong class_tag)
{
    if (tag_site((uint64_t)class_tag) != TAG_SITE_CLASS)
        return NULL;
    struct site_class *k = sites_class_peek((uint32_t)tag_serial((uint64_t)class_tag));
    if (!k)
        return NULL;
    uint8_t kind = atomic_load_explicit(&k->kind, memory_order_relaxed);
    return kind == SITE_CLASS_DEFAULT || kind == SITE_CLASS_SWITCHING ? k : NULL;
}

/* Objects with no site yet are ones never seen allocated. */
static jint JNICALL mark_untracked(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                   void *user_data)
{
    (void)size;
    (void)length;
    (void)user_data;
    if (*tag_ptr == 0 && default_class(class_tag))
        *tag_ptr = (jlong)tag_make(SITE_ID_UNTRACKED, tags_next_serial());
    return 0;
}

/* Untagged objects of default-site classes get their class's current default site as an
 * explicit tag: every class's (user_data NULL), or, in a walk filtered to one class, that
 * class's (user_data its struct site_class). */
static jint JNICALL pin_defaults(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                 void *user_data)
{
    (void)size;
    (void)length;
    if (*tag_ptr != 0)
        return 0;
    struct site_class *k = user_data ? user_data : default_class(class_tag);
    uint32_t d = k ? atomic_load_explicit(&k->default_site, memory_order_relaxed) : 0;
    if (d)
        *tag_ptr = (jlong)tag_make(d, tags_next_serial());
    return 0;
}

static void walk_filtered(jvmtiEnv *jvmti, jint filter, jclass klass, jvmtiHeapIterationCallback cb,
                          void *user_data)
{
    jvmtiHeapCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.heap_iteration_callback = cb;
    jvmti_failed(jvmti, (*jvmti)->IterateThroughHeap(jvmti, filter, klass, &callbacks, user_data),
                 "IterateThroughHeap");
}

/* The objects of classes tagged in jvmti (of klass only, unless NULL). */
static void walk_heap_of(jvmtiEnv *jvmti, jclass klass, jvmtiHeapIterationCallback cb,
                         void *user_data)
{
    walk_filtered(jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, klass, cb, user_data);
}

/* The objects of every class with a default site, each walked in its class's tag environment
 * (where the class is tagged, and the tags of its objects are). */
static void walk_default_classes(jvmtiHeapIterationCallback cb, void *user_data)
{
    for (int i = 0; i < tag_envs_count(); i++)
        walk_heap_of(tag_envs_at(i), NULL, cb, user_data);
}

/* Classifies every loaded class, so the walk knows which have default sites. */
static void classify_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes), "GetLoadedClasses"))
        return;
    for (jint i = 0; i < n; i++) {
        uint32_t serial = classes_serial_of(jvmti, classes[i]);
        uint8_t kind;
        if (serial)
            class_state(jvmti, jni, classes[i], serial, &kind);
        if (jni)
            (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_free(jvmti, classes);
}

/* ---- the worker that moves default sites ----------------------------------------------- */

/* Moves one class's default site: its new objects are all tagged from now on (SWITCHING), a
 * heap walk filtered to the class gives its untagged objects the old default as explicit tags
 * (filtered, the walk looks up the tags of this class's objects only; an unfiltered one looks
 * up every object's, which costs far more where many objects are tagged), then the new
 * default takes over. control_lock held. */
static void move_default(JNIEnv *jni, uint32_t cls, struct site_class *k)
{
    uint8_t expected = SITE_CLASS_DEFAULT;
    jclass klass = (*jni)->NewLocalRef(jni, atomic_load(&k->class_ref));
    if (!klass) /* the class was unloaded: nothing left to move */
        return;
    atomic_fetch_add(&S.epoch, 1);
    if (atomic_compare_exchange_strong(&k->kind, &expected, SITE_CLASS_SWITCHING)) {
        walk_heap_of(class_env(cls), klass, pin_defaults, k);
        /* A callback whose object the walk may have seen untagged began before this bump;
         * it reads the epoch after the new default, sees it changed and tags its object. */
        atomic_fetch_add(&S.epoch, 1);
        atomic_store(&k->default_site, atomic_load(&k->next_default));
        atomic_store(&k->kind, SITE_CLASS_DEFAULT);
        atomic_fetch_add(&k->moves, 1);
        STAT(STAT_MOVES);
    }
    (*jni)->DeleteLocalRef(jni, klass);
}

static void move_defaults(JNIEnv *jni)
{
    uint32_t batch[MOVE_QUEUE];
    pthread_mutex_lock(&S.control_lock);
    pthread_mutex_lock(&W.lock);
    int n = W.stopping ? 0 : W.n;
    memcpy(batch, W.queue, sizeof *batch * (size_t)n);
    W.n = 0;
    pthread_mutex_unlock(&W.lock);
    for (int i = 0; i < n; i++) {
        struct site_class *k = sites_class_peek(batch[i]);
        move_default(jni, batch[i], k);
        atomic_store(&k->move_pending, 0);
    }
    pthread_mutex_unlock(&S.control_lock);
}

static void JNICALL worker(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    (void)arg;
    pthread_mutex_lock(&W.lock);
    while (!W.stopping) {
        if (W.n == 0) {
            pthread_cond_wait(&W.cond, &W.lock);
            continue;
        }
        pthread_mutex_unlock(&W.lock);
        /* Let requests gather, and leave the application some time between walks. */
        struct timespec delay = {0, MOVE_BATCH_DELAY_MS * 1000000L};
        nanosleep(&delay, NULL);
        move_defaults(jni);
        pthread_mutex_lock(&W.lock);
    }
    W.running = false;
    pthread_cond_broadcast(&W.cond);
    pthread_mutex_unlock(&W.lock);
}

static void start_worker(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring name = init ? (*jni)->NewStringUTF(jni, "HPROF heap=sites") : NULL;
    jthread thread = name ? (*jni)->NewObject(jni, tc, init, name) : NULL;
    if (!thread) {
        (*jni)->ExceptionClear(jni);
        log_warning("heap=sites: no worker thread; default sites stay where they start");
        return;
    }
    pthread_mutex_lock(&W.lock);
    W.running = true;
    pthread_mutex_unlock(&W.lock);
    if (jvmti_failed(
            jvmti, (*jvmti)->RunAgentThread(jvmti, thread, worker, NULL, JVMTI_THREAD_MIN_PRIORITY),
            "RunAgentThread")) {
        pthread_mutex_lock(&W.lock);
        W.running = false;
        pthread_mutex_unlock(&W.lock);
    }
}

static void stop_worker(void)
{
    pthread_mutex_lock(&W.lock);
    W.stopping = true;
    pthread_cond_broadcast(&W.cond);
    while (W.running)
        pthread_cond_wait(&W.cond, &W.lock);
    pthread_mutex_unlock(&W.lock);
}

/* ---- life cycle ------------------------------------------------------------------------ */

static bool sites_enabled(const struct hprof_options *opts)
{
    return opts->heap_sites;
}

static void sites_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    caps->can_tag_objects = 1;
    caps->can_generate_sampled_object_alloc_events = 1;
    if (opts->sites_interval > 0)
        caps->can_generate_object_free_events = 1;
    else
        caps->can_generate_vm_object_alloc_events = 1;
}

static void sites_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->SampledObjectAlloc = on_sampled_alloc;
    cb->VMObjectAlloc = on_vm_object_alloc;
    cb->ObjectFree = on_object_free;
    async_stack_set_callbacks(cb); /* a ClassLoad callback; the event is enabled in start */
}

static bool env_flag(const char *name, bool otherwise)
{
    const char *v = getenv(name);
    return v && *v ? strcmp(v, "0") != 0 : otherwise;
}

static int set_events(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
    if (jvmti_failed(
            jvmti,
            (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL),
            "SetEventNotificationMode(SampledObjectAlloc)"))
        return -1;
    if (!S.sampled && jvmti_failed(jvmti,
                                   (*jvmti)->SetEventNotificationMode(
                                       jvmti, mode, JVMTI_EVENT_VM_OBJECT_ALLOC, NULL),
                                   "SetEventNotificationMode(VMObjectAlloc)"))
        return -1;
    return 0;
}

static int sites_start(jvmtiEnv *jvmti, const struct hprof_options *opts, bool live)
{
    S.sampled = opts->sites_interval > 0;
    S.interval = opts->sites_interval;
    S.lineno = opts->lineno;
    S.per_thread = opts->thread;
    S.attached = live;
    stats_on = env_flag("HPROF_SITES_STATS", false);
    /* AGCT walks only in the self-check: it is not exact here (doc/heap-sites.md). */
    S.async_check = env_flag("HPROF_SITES_AGCT_CHECK", false) && async_stack_init() &&
                    async_stack_enable_events(jvmti) == 0;
    stats_on = stats_on || S.async_check; /* the check reports the counters */
    /* Attached to a running VM, the heap may be large: tag every tracked object instead of
     * walking it to mark what was there before. */
    S.defaults = !S.sampled && !live;
    atomic_store(&S.tag_all, S.defaults);
    if (sites_init() != 0 || (S.sampled && samples_init() != 0)) {
        log_error("out of memory at start-up");
        return -1;
    }
    /* Object tags go through environments of their own (tag_envs.h); HPROF_SITES_ENVS sets
     * how many (for measurements: doc/heap-sites.md, "Many threads"). */
    const char *envs = getenv("HPROF_SITES_ENVS");
    int nenvs = envs && *envs ? atoi(envs) : TAG_ENVS_DEFAULT;
    if (nenvs < 1 || nenvs > TAG_ENVS_MAX) {
        log_error("HPROF_SITES_ENVS must be 1 to %d", TAG_ENVS_MAX);
        return -1;
    }
    if (tag_envs_init(nenvs, S.sampled ? on_object_free : NULL) != 0)
        return -1;
    /* HotSpot's sampler puts its next point 1 + Exp(interval) bytes on, capped near 19 bytes
     * for an interval of 1: now and then that is past a 16-byte object, which then goes
     * unsampled. Its interval 0 samples every allocation, which is what 1 promises. */
    jint interval = (jint)(S.sampled && S.interval > 1 ? S.interval : 0);
    if (jvmti_failed(jvmti, (*jvmti)->SetHeapSamplingInterval(jvmti, interval),
                     "SetHeapSamplingInterval"))
        return -1;
    if (S.sampled && jvmti_failed(jvmti,
                                  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                                                     JVMTI_EVENT_OBJECT_FREE, NULL),
                                  "SetEventNotificationMode(ObjectFree)"))
        return -1;
    atomic_store(&S.tracking, true);
    return set_events(jvmti, JVMTI_ENABLE);
}

/* Every method of the classes loaded so far gets a jmethodID, so AGCT can name it. */
static void prepare_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes), "GetLoadedClasses"))
        return;
    for (jint i = 0; i < n; i++) {
        async_stack_prepare_class(jvmti, classes[i]);
        if (jni)
            (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_free(jvmti, classes);
}

static void sites_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jni;
    (void)thread;
    if (S.async_check)
        async_stack_prepare_class(jvmti, klass);
}

static void sites_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    if (S.async_check)
        prepare_loaded(jvmti, jni);
    pthread_mutex_lock(&S.control_lock);
    if (S.defaults) {
        jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
        S.thread_class = tc ? (*jni)->NewGlobalRef(jni, tc) : NULL;
        if (!S.thread_class) {
            (*jni)->ExceptionClear(jni);
            S.defaults = false; /* every object tagged then */
        }
    }
    /* Each thread's current TLAB was handed out before sampling was armed, and the sampler
     * only looks at allocations past a TLAB's sample end: without this, a thread's first
     * hundreds of KB (all of a short main()) would go unseen. A collection retires them all.
     * Sampled mode attached to a running VM skips it (a full GC of a large heap) and may miss
     * a TLAB's worth of allocations per thread. */
    if (!S.sampled || !S.attached)
        jvmti_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti), "ForceGarbageCollection");
    if (S.defaults) {
        classify_loaded(jvmti, jni);
        /* No guard needed: no application code has run, and the threads that have run
         * allocate classes of the boot loader only. */
        walk_default_classes(mark_untracked, NULL);
    }
    atomic_store(&S.tag_all, false);
    pthread_mutex_unlock(&S.control_lock);
    if (S.defaults)
        start_worker(jvmti, jni);
}

static void sites_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    stop_worker();
    if (S.async_check) {
        uint64_t ok = stats[STAT_ASYNC], declined = stats[STAT_ASYNC_FALLBACKS];
        fprintf(stderr,
                "HPROF: heap=sites AGCT check: %llu stacks compared, %llu differ; AGCT declined "
                "%llu; mean ns: AGCT walked %llu, AGCT declined %llu, GetStackTrace %llu\n",
                (unsigned long long)ok, (unsigned long long)stats[STAT_ASYNC_MISMATCHES],
                (unsigned long long)declined,
                (unsigned long long)(ok ? stats[STAT_ASYNC_NS] / ok : 0),
                (unsigned long long)(declined ? stats[STAT_ASYNC_FALLBACK_NS] / declined : 0),
                (unsigned long long)(ok + declined ? stats[STAT_CHECK_NS] / (ok + declined) : 0));
    }
    if (!stats_on)
        return;
    unsigned long long in_use = 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    in_use = (unsigned long long)mallinfo2().uordblks; /* the whole process's, JVM included */
#endif
    fprintf(stderr,
            "HPROF: heap=sites stats: allocations %llu, tagged %llu, stack cache misses %llu, "
            "class misses %llu, VM-only allocations %llu, default moves %llu, "
            "sites %u, traces %u, malloc in use %llu KiB, AGCT stacks %llu, fallbacks %llu, "
            "mismatches %llu\n",
            (unsigned long long)stats[STAT_ALLOCS], (unsigned long long)stats[STAT_TAGGED],
            (unsigned long long)stats[STAT_STACK_MISSES],
            (unsigned long long)stats[STAT_CLASS_MISSES], (unsigned long long)stats[STAT_VM_ALLOCS],
            (unsigned long long)stats[STAT_MOVES], sites_end() - SITE_ID_FIRST, traces_count(),
            in_use / 1024, (unsigned long long)stats[STAT_ASYNC],
            (unsigned long long)stats[STAT_ASYNC_FALLBACKS],
            (unsigned long long)stats[STAT_ASYNC_MISMATCHES]);
}

static void sites_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)thread;
    site_thread_free(jni); /* ThreadEnd runs on the ending thread */
}

/* ---- control --------------------------------------------------------------------------- */

static void set_tracking(jvmtiEnv *jvmti, JNIEnv *jni, bool on)
{
    pthread_mutex_lock(&S.control_lock);
    if (atomic_load(&S.tracking) != on) {
        if (!on) {
            if (S.defaults) {
                /* What is untagged now is default-site; give it explicit tags before
                 * untracked objects start to appear. */
                atomic_store(&S.tag_all, true);
                walk_default_classes(pin_defaults, NULL);
            }
            atomic_store(&S.tracking, false);
            set_events(jvmti, JVMTI_DISABLE);
        } else {
            set_events(jvmti, JVMTI_ENABLE);
            atomic_store(&S.tracking, true);
            /* As at start-up: the sampler skips the rest of every TLAB handed out while it
             * was off (JDK 17), so retire them all; what they held is marked untracked. */
            if (!S.sampled)
                jvmti_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti),
                             "ForceGarbageCollection");
            if (S.defaults) {
                classify_loaded(jvmti, jni); /* classes first seen while off */
                atomic_fetch_add(&S.epoch, 1);
                walk_default_classes(mark_untracked, NULL);
                atomic_fetch_add(&S.epoch, 1);
                atomic_store(&S.tag_all, false);
            }
        }
    }
    pthread_mutex_unlock(&S.control_lock);
}

static void sites_control(const struct control_request *req)
{
    if (req->kind == CONTROL_ALLOC_TRACES_ON)
        set_tracking(req->jvmti, req->jni, true);
    else if (req->kind == CONTROL_ALLOC_TRACES_OFF)
        set_tracking(req->jvmti, req->jni, false);
}

/* ---- dump ------------------------------------------------------------------------------ */

struct live_counts {
    uint32_t end;
    uint64_t *objs, *bytes;
};

static jint JNICALL count_live(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                               void *user_data)
{
    (void)length;
    struct live_counts *lc = user_data;
    uint64_t tag = (uint64_t)*tag_ptr, site = tag_site(tag);
    if (tag == 0) {
        struct site_class *k = S.defaults ? default_class(class_tag) : NULL;
        site = k ? atomic_load_explicit(&k->default_site, memory_order_relaxed) : 0;
    }
    if (site >= SITE_ID_FIRST && site < lc->end) {
        lc->objs[site]++;
        lc->bytes[site] += (uint64_t)size;
    }
    return 0;
}

#define LIVE_WALK_ATTEMPTS 3

/* Fills live counts for every site id below lc->end. Exact mode: the gate is closed. */
static void collect_live(jvmtiEnv *jvmti, struct live_counts *lc)
{
    if (!S.sampled) {
        /* One walk per tag environment: its tagged objects, and the untagged objects of the
         * default-site classes it holds. With the gate closed nothing is tagged between the
         * walks; a collection between them (rare: no thread can allocate twice) would make
         * them see different heaps, so they start again. */
        for (int attempt = 0; attempt < LIVE_WALK_ATTEMPTS; attempt++) {
            uint64_t collections = tag_envs_collections();
            memset(lc->objs, 0, sizeof *lc->objs * lc->end);
            memset(lc->bytes, 0, sizeof *lc->bytes * lc->end);
            for (int i = 0; i < tag_envs_count(); i++)
                walk_filtered(tag_envs_at(i), 0, NULL, count_live, lc);
            if (tag_envs_collections() == collections)
                break;
        }
        return;
    }
    /* ObjectFree events of objects already collected are posted lazily (JDK 16+): changing
     * the event's mode makes the VM post the pending ones now, before it returns. */
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
    tag_envs_flush_frees();
    for (uint32_t id = SITE_ID_FIRST; id < lc->end; id++) {
        struct site *s = sites_get(id);
        lc->objs[id] =
            sites_weight_round(atomic_load_explicit(&s->live_objs, memory_order_relaxed));
        lc->bytes[id] =
            sites_weight_round(atomic_load_explicit(&s->live_bytes, memory_order_relaxed));
    }
}

struct row_ref {
    struct hprof_site_row row;
    uint32_t id;
};

static bool by_alloc;

static int compare_rows(const void *a, const void *b)
{
    const struct hprof_site_row *x = &((const struct row_ref *)a)->row;
    const struct hprof_site_row *y = &((const struct row_ref *)b)->row;
    uint64_t kx = by_alloc ? x->alloc_bytes : x->live_bytes;
    uint64_t ky = by_alloc ? y->alloc_bytes : y->live_bytes;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    uint64_t ox = by_alloc ? x->live_bytes : x->alloc_bytes;
    uint64_t oy = by_alloc ? y->live_bytes : y->alloc_bytes;
    if (ox != oy)
        return ox > oy ? -1 : 1;
    if (x->trace_serial != y->trace_serial)
        return x->trace_serial < y->trace_serial ? -1 : 1;
    return (x->class_serial > y->class_serial) - (x->class_serial < y->class_serial);
}

static uint64_t alloc_count(_Atomic(uint64_t) *field)
{
    uint64_t v = atomic_load_explicit(field, memory_order_relaxed);
    return S.sampled ? sites_weight_round(v) : v;
}

static void sites_dump(const struct dump_request *req)
{
    if (!(req->sections & (DUMP_SITES | DUMP_HEAP_SUMMARY)))
        return;
    jvmtiEnv *jvmti = req->jvmti;
    pthread_mutex_lock(&S.control_lock);
    if (req->flags & HPROF_SITES_FORCE_GC)
        (*jvmti)->ForceGarbageCollection(jvmti);
    /* Until the counts are read: live counts from walks of one heap, allocation counts of
     * the same moment. */
    bool gated = !S.sampled;
    if (gated)
        gate_close();

    struct live_counts lc = {sites_end(), NULL, NULL};
    lc.objs = calloc(lc.end, sizeof *lc.objs);
    lc.bytes = calloc(lc.end, sizeof *lc.bytes);
    struct row_ref *rows = calloc(lc.end, sizeof *rows);
    struct hprof_site_row *view = NULL;
    if (!lc.objs || !lc.bytes || !rows) {
        log_error("out of memory writing SITES");
        goto done;
    }
    collect_live(jvmti, &lc);

    struct hprof_sites_report report = {.flags = req->flags, .cutoff = req->cutoff};
    size_t n = 0;
    for (uint32_t id = SITE_ID_FIRST; id < lc.end; id++) {
        struct site *s = sites_get(id);
        uint64_t alloc_objs = alloc_count(&s->alloc_objs);
        uint64_t alloc_bytes = alloc_count(&s->alloc_bytes);
        report.total_alloc_objs += alloc_objs;
        report.total_alloc_bytes += alloc_bytes;
        report.total_live_objs += lc.objs[id];
        report.total_live_bytes += lc.bytes[id];
        if (alloc_objs == 0 && lc.objs[id] == 0)
            continue;
        if ((req->flags & HPROF_SITES_INCREMENTAL) && alloc_objs == s->dumped_alloc_objs &&
            lc.objs[id] == s->dumped_live_objs)
            continue;
        const struct class_info *c = classes_get(s->class_serial);
        struct row_ref *r = &rows[n++];
        r->id = id;
        r->row.class_serial = s->class_serial;
        r->row.class_name = c ? c->name : NULL;
        r->row.array_type = c ? c->array_type : 0;
        r->row.trace_serial = s->trace_serial;
        r->row.live_bytes = lc.bytes[id];
        r->row.live_objs = lc.objs[id];
        r->row.alloc_bytes = alloc_bytes;
        r->row.alloc_objs = alloc_objs;
    }
    if (gated) { /* counts read: sorting and writing need no stopped allocations */
        gate_open();
        gated = false;
    }
    by_alloc = (req->flags & HPROF_SITES_BY_ALLOC) != 0;
    qsort(rows, n, sizeof *rows, compare_rows);
    uint64_t total = by_alloc ? report.total_alloc_bytes : report.total_live_bytes;
    size_t keep = 0;
    while (keep < n) {
        uint64_t key = by_alloc ? rows[keep].row.alloc_bytes : rows[keep].row.live_bytes;
        double ratio = total ? (double)key / (double)total : 0.0;
        if (ratio < (double)req->cutoff)
            break;
        keep++;
    }

    view = calloc(keep ? keep : 1, sizeof *view);
    struct hprof_writer *w = output_lock();
    if (w && view) {
        if (req->sections & DUMP_SITES) {
            /* Everything a row names goes first: LOAD CLASS, frames, STACK TRACE. */
            for (size_t i = 0; i < keep; i++) {
                view[i] = rows[i].row;
                classes_write_once(w, view[i].class_serial);
                traces_write_once(w, view[i].trace_serial);
            }
            report.nrows = keep;
            report.rows = view;
            w->ops->sites(w, &report);
        }
        if (req->sections & DUMP_HEAP_SUMMARY) {
            struct hprof_heap_summary sum = {report.total_live_bytes, report.total_live_objs,
                                             report.total_alloc_bytes, report.total_alloc_objs};
            w->ops->heap_summary(w, &sum);
        }
    }
    output_unlock();
    if (req->sections & DUMP_SITES)
        for (size_t i = 0; i < n; i++) {
            struct site *s = sites_get(rows[i].id);
            s->dumped_alloc_objs = rows[i].row.alloc_objs;
            s->dumped_live_objs = rows[i].row.live_objs;
        }
done:
    if (gated)
        gate_open();
    free(view);
    free(rows);
    free(lc.objs);
    free(lc.bytes);
    pthread_mutex_unlock(&S.control_lock);
}

uint32_t sites_trace_of(uint64_t tag, uint32_t class_serial)
{
    uint64_t site = tag_site(tag);
    if (tag == 0) {
        struct site_class *k = S.defaults ? sites_class_peek(class_serial) : NULL;
        uint8_t kind = k ? atomic_load_explicit(&k->kind, memory_order_relaxed) : 0;
        if (kind == SITE_CLASS_DEFAULT || kind == SITE_CLASS_SWITCHING)
            site = atomic_load_explicit(&k->default_site, memory_order_relaxed);
    }
    const struct site *s =
        site >= SITE_ID_FIRST && site <= SITE_ID_MAX ? sites_get((uint32_t)site) : NULL;
    return s ? s->trace_serial : HPROF_TRACE_SERIAL_NONE;
}

const struct hprof_profile sites_profile = {
    .name = "heap=sites",
    .enabled = sites_enabled,
    .add_capabilities = sites_add_capabilities,
    .set_callbacks = sites_set_callbacks,
    .start = sites_start,
    .vm_init = sites_vm_init,
    .class_prepare = sites_class_prepare,
    .thread_end = sites_thread_end,
    .dump = sites_dump,
    .control = sites_control,
    .vm_death = sites_vm_death,
};

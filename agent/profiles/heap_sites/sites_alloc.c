/* heap=sites: the allocation path (SampledObjectAlloc, VMObjectAlloc, ObjectFree), the
 * per-thread state it runs on, and the AGCT self-check of HPROF_SITES_AGCT_CHECK. */
#include "heap_sites_internal.h"

#include <stddef.h>

static _Thread_local struct site_thread *current_thread;

static void flush_thread(struct gate_slot *slot, void *arg);
_Static_assert(offsetof(struct site_thread, gate) == 0, "a gate slot is its site_thread");

/* ---- per-thread state ------------------------------------------------------------------ */

static struct site_thread *site_thread_get(void)
{
    struct site_thread *t = current_thread;
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cache = trace_cache_new((unsigned)trace_table_depth(), CACHE_SLOTS_FIRST);
    if (!t->cache) {
        free(t);
        return NULL;
    }
    t->env = tag_envs_next_for_thread();
    alloc_gate_register(&t->gate);
    current_thread = t;
    return t;
}

static void delete_weak(void *ref, void *jni)
{
    (*(JNIEnv *)jni)->DeleteWeakGlobalRef((JNIEnv *)jni, ref);
}

void sites_alloc_thread_free(JNIEnv *jni)
{
    struct site_thread *t = current_thread;
    current_thread = NULL;
    if (t) {
        gate_enter(&t->gate); /* not while a dump reads the counts */
        flush_thread(&t->gate, NULL);
        gate_leave(&t->gate);
        alloc_gate_unregister(&t->gate);
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
        struct trace_cache *bigger = trace_cache_new((unsigned)trace_table_depth(), slots * 4);
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
    return class_table_serial_of(jvmti, klass);
}

static uint8_t classify(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, uint32_t serial)
{
    const struct class_info *c = class_table_get(serial);
    if (c && c->signature && strcmp(c->signature, "Ljava/lang/Class;") == 0)
        return SITE_CLASS_IGNORED;
    if (!heap_sites_state.defaults || !jni || !heap_sites_state.thread_class)
        return SITE_CLASS_TAGGED;
    jobject loader = NULL;
    if ((*jvmti)->GetClassLoader(jvmti, klass, &loader) != JVMTI_ERROR_NONE || !loader)
        return SITE_CLASS_TAGGED; /* the boot loader's: the VM allocates some behind our back */
    (*jni)->DeleteLocalRef(jni, loader);
    /* Thread objects get tags from the thread table when they start. */
    if ((*jni)->IsAssignableFrom(jni, klass, heap_sites_state.thread_class))
        return SITE_CLASS_TAGGED;
    return SITE_CLASS_DEFAULT;
}

jvmtiEnv *sites_alloc_class_env(uint32_t class_serial)
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
    return has_default(kind) ? sites_alloc_class_env(cls) : tag_envs_at(t->env);
}

struct site_class *sites_alloc_class_state(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass,
                                           uint32_t serial, uint8_t *kind)
{
    struct site_class *k = site_table_class(serial);
    if (!k)
        return NULL;
    uint8_t v = atomic_load_explicit(&k->kind, memory_order_acquire);
    if (v == SITE_CLASS_UNKNOWN) {
        uint8_t expected = SITE_CLASS_UNKNOWN;
        v = classify(jvmti, jni, klass, serial); /* the same answer on every thread */
        if (v == SITE_CLASS_DEFAULT) {
            /* Its objects' tags are in the class's environment: the class is tagged there
             * too, so heap walks in that environment know it (twice in a race: harmless). */
            jvmtiEnv *e = sites_alloc_class_env(serial);
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
        jvmti_util_free(jvmti, name);
        jvmti_util_free(jvmti, sig);
    }
}

/* The AGCT self-check: AGCT and then GetStackTrace walk the same stack (into t->frames and
 * t->check_frames), both timed; a difference is counted (and the first few printed). Returns
 * GetStackTrace's frames, copied to t->frames, so what is recorded never depends on AGCT. */
static jint check_async(jvmtiEnv *jvmti, JNIEnv *jni, struct site_thread *t, int depth)
{
    uint64_t t0 = clock_monotonic_ns();
    jint n_async = agct_stack_get(jni, t->frames, depth);
    uint64_t t1 = clock_monotonic_ns();
    jint n = 0;
    jvmtiError err = (*jvmti)->GetStackTrace(jvmti, NULL, 0, depth, t->check_frames, &n);
    uint64_t t2 = clock_monotonic_ns();
    atomic_fetch_add(&heap_sites_stats[n_async >= 0 ? STAT_ASYNC : STAT_ASYNC_FALLBACKS], 1);
    atomic_fetch_add(&heap_sites_stats[n_async >= 0 ? STAT_ASYNC_NS : STAT_ASYNC_FALLBACK_NS],
                     t1 - t0);
    atomic_fetch_add(&heap_sites_stats[STAT_CHECK_NS], t2 - t1);
    if (err != JVMTI_ERROR_NONE)
        return -1;
    bool same = n_async < 0 || n == n_async; /* declined: nothing to compare */
    for (jint i = 0; same && n_async >= 0 && i < n; i++)
        same = t->frames[i].method == t->check_frames[i].method &&
               t->frames[i].location == t->check_frames[i].location;
    if (!same) {
        uint64_t k = atomic_fetch_add(&heap_sites_stats[STAT_ASYNC_MISMATCHES], 1);
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
    int depth = trace_table_depth();
    jint n = 0;
    if (depth > 0) {
        if (t->frames_cap < depth) {
            jvmtiFrameInfo *f = realloc(t->frames, sizeof *f * (size_t)depth);
            jvmtiFrameInfo *c = f && heap_sites_state.async_check
                                    ? realloc(t->check_frames, sizeof *c * (size_t)depth)
                                    : t->check_frames;
            if (f)
                t->frames = f;
            if (c)
                t->check_frames = c;
            if (!f || (heap_sites_state.async_check && !c))
                return NULL;
            t->frames_cap = depth;
        }
        n = async && heap_sites_state.async_check ? check_async(jvmti, jni, t, depth) : -1;
        if (n < 0 &&
            (*jvmti)->GetStackTrace(jvmti, NULL, 0, depth, t->frames, &n) != JVMTI_ERROR_NONE)
            n = 0;
    }
    if (!heap_sites_state
             .lineno) /* frames of one method are one frame: make their traces one trace too */
        for (jint i = 0; i < n; i++)
            t->frames[i].location = 0;
    uint32_t thread_serial = 0;
    if (heap_sites_state.per_thread) {
        struct thread_info *ti = thread_table_current(jvmti, jni, thread);
        thread_serial = ti ? ti->serial : 0;
    }
    const struct raw_frame *raw = (const struct raw_frame *)t->frames;
    uint64_t hash = trace_cache_hash(raw, (unsigned)n, thread_serial);
    struct trace_cache_entry *e = trace_cache_find(t->cache, hash, raw, (unsigned)n, thread_serial);
    if (cache_lookup_done(jni, t, e != NULL))
        e = NULL; /* it pointed into the cache just freed; the new one is empty */
    if (!e) {
        STAT(STAT_STACK_MISSES);
        *trace = trace_table_intern(jvmti, t->frames, n, thread_serial);
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
        a->site = a->cls ? site_table_intern(a->cls, trace) : 0;
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
    a->k = sites_alloc_class_state(jvmti, jni, klass, a->cls, &a->kind);
    return a->k != NULL;
}

enum tag_need { TAG_NO, TAG_YES, TAG_IF_TAGGED };

/* Exact mode: whether this object must carry its site in its tag. epoch: heap_sites_state.epoch
 * when the callback began. */
static enum tag_need needs_tag(const struct alloc_site *a, uint64_t epoch,
                               const struct site_thread *t)
{
    if (a->kind != SITE_CLASS_DEFAULT)
        return TAG_YES;
    uint32_t d = atomic_load_explicit(&a->k->default_site, memory_order_acquire);
    if (d == 0 && atomic_compare_exchange_strong_explicit(
                      &a->k->default_site, &d, a->site, memory_order_acq_rel, memory_order_acquire))
        d = a->site;
    if (d != a->site || atomic_load(&heap_sites_state.tag_all) ||
        atomic_load(&heap_sites_state.epoch) != epoch)
        return TAG_YES;
    return epoch != t->seen_epoch ? TAG_IF_TAGGED : TAG_NO;
}

/* Exact mode: asks for a class's default site to move to this site once it has allocated far
 * more (allocated: its count now). */
static void maybe_move_default(uint32_t site, uint64_t allocated)
{
    struct site *s = site_table_get(site);
    struct site_class *k = s ? site_table_class_peek(s->class_serial) : NULL;
    if (!k || atomic_load_explicit(&k->kind, memory_order_acquire) != SITE_CLASS_DEFAULT)
        return;
    struct site *d = site_table_get(atomic_load_explicit(&k->default_site, memory_order_relaxed));
    if (!d || d == s)
        return;
    uint64_t at_default = atomic_load_explicit(&d->alloc_objs, memory_order_relaxed);
    if (allocated < MOVE_FACTOR * at_default + MOVE_MIN || atomic_load(&k->moves) >= MOVES_MAX)
        return;
    uint8_t idle = 0;
    if (!atomic_compare_exchange_strong(&k->move_pending, &idle, 1))
        return;
    atomic_store(&k->next_default, site);
    if (!sites_walks_queue_move(s->class_serial))
        atomic_store(&k->move_pending, 0);
}

static void flush_pending(struct pending_count *p)
{
    if (p->objs == 0)
        return;
    uint64_t n = sites_count_allocs(site_table_get(p->site), p->objs, p->bytes);
    p->objs = 0;
    p->bytes = 0;
    maybe_move_default(p->site, n);
}

/* alloc_gate_each's callback (struct site_thread starts with its gate slot). */
static void flush_thread(struct gate_slot *slot, void *arg)
{
    (void)arg;
    struct site_thread *t = (struct site_thread *)slot;
    for (unsigned i = 0; i < PENDING_SLOTS; i++)
        flush_pending(&t->pending[i]);
}

void sites_alloc_flush_pending(void)
{
    alloc_gate_each(flush_thread, NULL);
}

/* Exact mode: counts one allocation in the thread's pending slot of its site. */
static void count_alloc(struct site_thread *t, uint32_t site, uint64_t bytes)
{
    struct pending_count *p = &t->pending[site % PENDING_SLOTS];
    if (p->site != site) {
        flush_pending(p);
        p->site = site;
    }
    p->bytes += bytes;
    if (++p->objs == PENDING_MAX)
        flush_pending(p);
}

/* async: called from SampledObjectAlloc, where AGCT may walk the stack (agct_stack.h). */
static void record(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool async, jobject object,
                   jclass klass, jlong size, struct site_thread *t)
{
    uint64_t epoch = atomic_load(&heap_sites_state.epoch);
    struct alloc_site a;
    if (!resolve(jvmti, jni, thread, async, klass, t, &a) || a.kind == SITE_CLASS_IGNORED)
        return;
    jvmtiEnv *tenv = tag_env(a.cls, a.kind, t);
    struct site *s = site_table_get(a.site);
    if (!s)
        return;
    uint64_t bytes = size > 0 ? (uint64_t)size : 0;
    if (!heap_sites_state.sampled) {
        count_alloc(t, a.site, bytes);
        enum tag_need need = needs_tag(&a, epoch, t);
        jlong tag = 0;
        if (need == TAG_IF_TAGGED &&
            ((*tenv)->GetTag(tenv, object, &tag) != JVMTI_ERROR_NONE || tag != 0))
            need = TAG_YES;
        bool tagged = need == TAG_YES;
        if (tagged)
            (*tenv)->SetTag(tenv, object, (jlong)tag_make(a.site, next_serial(t)));
        t->recent[t->recent_next++ % RECENT_ALLOCS] =
            (struct recent_alloc){a.cls, a.site, bytes, tagged};
        STAT(STAT_ALLOCS);
        if (tagged)
            STAT(STAT_TAGGED);
        return;
    }
    uint64_t w = site_table_sample_weight(bytes, heap_sites_state.interval);
    atomic_fetch_add_explicit(&s->alloc_objs, w, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->alloc_bytes, w * bytes, memory_order_relaxed);
    uint64_t tag = tag_make(a.site, next_serial(t));
    /* Recorded before tagging: the object cannot die before this callback returns. */
    if (!sampled_objects_put(tag, bytes))
        return;
    if ((*tenv)->SetTag(tenv, object, (jlong)tag) != JVMTI_ERROR_NONE) {
        uint64_t ignored;
        sampled_objects_take(tag, &ignored);
        return;
    }
    struct site_live *live = site_table_live(a.site);
    if (live) {
        atomic_fetch_add_explicit(&live->objs, w, memory_order_relaxed);
        atomic_fetch_add_explicit(&live->bytes, w * bytes, memory_order_relaxed);
    }
}

/* An allocation callback's start: the thread's state, past the dump gate; NULL when tracking
 * is off or memory ran out. */
static struct site_thread *callback_begin(void)
{
    if (!atomic_load_explicit(&heap_sites_state.tracking, memory_order_relaxed))
        return NULL;
    struct site_thread *t = site_thread_get();
    if (t)
        gate_enter(&t->gate);
    return t;
}

static void callback_end(struct site_thread *t)
{
    t->seen_epoch = atomic_load(&heap_sites_state.epoch); /* see heap_sites_state.epoch */
    gate_leave(&t->gate);
}

void JNICALL sites_alloc_on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                          jobject object, jclass klass, jlong size)
{
    struct site_thread *t = callback_begin();
    if (t) {
        record(jvmti, jni, thread, heap_sites_state.async_check, object, klass, size, t);
        callback_end(t);
    }
}

static void vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                            jclass klass, jlong size, struct site_thread *t)
{
    uint32_t cls = class_serial(jvmti, klass);
    uint8_t kind = 0;
    if (!cls || !sites_alloc_class_state(jvmti, jni, klass, cls, &kind) ||
        kind == SITE_CLASS_IGNORED)
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
void JNICALL sites_alloc_on_vm_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                            jobject object, jclass klass, jlong size)
{
    struct site_thread *t = callback_begin();
    if (t) {
        vm_object_alloc(jvmti, jni, thread, object, klass, size, t);
        callback_end(t);
    }
}

/* Sampled mode. No JVMTI calls here (none are allowed). */
void JNICALL sites_alloc_on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    uint64_t t = (uint64_t)tag, site = tag_site(t), size = 0;
    if (site == TAG_SITE_CLASS) {
        class_table_mark_unloaded((uint32_t)tag_serial(t));
        return;
    }
    if (site < SITE_ID_FIRST || !sampled_objects_take(t, &size))
        return;
    struct site_live *s = site_table_live((uint32_t)site);
    if (!s)
        return;
    uint64_t w = site_table_sample_weight(size, heap_sites_state.interval);
    atomic_fetch_sub_explicit(&s->objs, w, memory_order_relaxed);
    atomic_fetch_sub_explicit(&s->bytes, w * size, memory_order_relaxed);
}

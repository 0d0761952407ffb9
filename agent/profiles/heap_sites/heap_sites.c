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
#include "heap_sites_internal.h"

struct heap_sites_state heap_sites_state = {.control_lock = PTHREAD_MUTEX_INITIALIZER};
_Atomic(uint64_t) heap_sites_stats[STAT_N];
bool heap_sites_stats_on;

/* ---- life cycle ------------------------------------------------------------------------ */

static bool heap_sites_enabled(const struct hprof_options *opts)
{
    return opts->heap_sites;
}

static void heap_sites_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    caps->can_tag_objects = 1;
    caps->can_generate_sampled_object_alloc_events = 1;
    if (opts->sites_interval > 0)
        caps->can_generate_object_free_events = 1;
    else
        caps->can_generate_vm_object_alloc_events = 1;
}

static void heap_sites_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->SampledObjectAlloc = sites_alloc_on_sampled_alloc;
    cb->VMObjectAlloc = sites_alloc_on_vm_object_alloc;
    cb->ObjectFree = sites_alloc_on_object_free;
    agct_stack_set_callbacks(cb); /* a ClassLoad callback; the event is enabled in start */
}

/* No new allocation can be counted at a site whose class unloaded or whose trace has a frame of
 * a forgotten method (trace_table_forget): the site table drops its lookup. */
static bool site_retired(uint32_t class_serial, uint32_t trace_serial)
{
    const struct class_info *c = class_table_get(class_serial);
    const struct trace_info *t = trace_table_get(trace_serial);
    return (c && atomic_load(&c->unloaded)) || (t && atomic_load(&t->forgotten));
}

static struct hprof_error set_events(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
    struct hprof_error e = jvmti_util_error(
        jvmti,
        (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL),
        "SetEventNotificationMode(SampledObjectAlloc)");
    if (!hprof_failed(&e) && !heap_sites_state.sampled)
        e = jvmti_util_error(
            jvmti,
            (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_VM_OBJECT_ALLOC, NULL),
            "SetEventNotificationMode(VMObjectAlloc)");
    return e;
}

/* A CONTROL command switches the events: a failure is reported here, tracking goes on. */
static void switch_events(jvmtiEnv *jvmti, jvmtiEventMode mode)
{
    struct hprof_error e = set_events(jvmti, mode);
    if (hprof_failed(&e))
        log_error("%s", e.text);
}

static struct hprof_error heap_sites_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                           bool live)
{
    heap_sites_state.sampled = opts->sites_interval > 0;
    heap_sites_state.interval = opts->sites_interval;
    heap_sites_state.lineno = opts->lineno;
    heap_sites_state.per_thread = opts->thread;
    heap_sites_state.attached = live;
    heap_sites_stats_on = env_knobs()->sites_stats;
    /* AGCT walks only in the self-check: it is not exact here (doc/heap-sites.md). */
    heap_sites_state.async_check =
        env_knobs()->sites_agct_check && agct_stack_init() && agct_stack_enable_events(jvmti) == 0;
    heap_sites_stats_on =
        heap_sites_stats_on || heap_sites_state.async_check; /* the check reports the counters */
    /* Attached to a running VM, the heap may be large: tag every tracked object instead of
     * walking it to mark what was there before. */
    heap_sites_state.defaults = !heap_sites_state.sampled && !live;
    atomic_store(&heap_sites_state.tag_all, heap_sites_state.defaults);
    if (site_table_init(heap_sites_state.sampled) != 0 ||
        (heap_sites_state.sampled && sampled_objects_init() != 0))
        return hprof_errorf("out of memory at start-up");
    site_table_set_retired(site_retired);
    /* Object tags go through environments of their own (tag_envs.h); HPROF_SITES_ENVS sets
     * how many (for measurements: doc/heap-sites.md, "Many threads"). */
    int nenvs = env_knobs()->sites_envs ? env_knobs()->sites_envs : TAG_ENVS_DEFAULT;
    if (nenvs < 1 || nenvs > TAG_ENVS_MAX)
        return hprof_errorf("HPROF_SITES_ENVS must be 1 to %d", TAG_ENVS_MAX);
    struct hprof_error e =
        tag_envs_init(nenvs, heap_sites_state.sampled ? sites_alloc_on_object_free : NULL);
    if (hprof_failed(&e))
        return e;
    /* HotSpot's sampler puts its next point 1 + Exp(interval) bytes on, capped near 19 bytes
     * for an interval of 1: now and then that is past a 16-byte object, which then goes
     * unsampled. Its interval 0 samples every allocation, which is what 1 promises. */
    jint interval =
        (jint)(heap_sites_state.sampled && heap_sites_state.interval > 1 ? heap_sites_state.interval
                                                                         : 0);
    e = jvmti_util_error(jvmti, (*jvmti)->SetHeapSamplingInterval(jvmti, interval),
                         "SetHeapSamplingInterval");
    if (!hprof_failed(&e) && heap_sites_state.sampled)
        e = jvmti_util_error(
            jvmti,
            (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL),
            "SetEventNotificationMode(ObjectFree)");
    if (hprof_failed(&e))
        return e;
    atomic_store(&heap_sites_state.tracking, true);
    return set_events(jvmti, JVMTI_ENABLE);
}

/* Every method of the classes loaded so far gets a jmethodID, so AGCT can name it. */
static void prepare_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes),
                          "GetLoadedClasses"))
        return;
    for (jint i = 0; i < n; i++) {
        agct_stack_prepare_class(jvmti, classes[i]);
        if (jni)
            (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_util_free(jvmti, classes);
}

static void heap_sites_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jni;
    (void)thread;
    if (heap_sites_state.async_check)
        agct_stack_prepare_class(jvmti, klass);
}

static void heap_sites_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    if (heap_sites_state.async_check)
        prepare_loaded(jvmti, jni);
    pthread_mutex_lock(&heap_sites_state.control_lock);
    if (heap_sites_state.defaults) {
        jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
        heap_sites_state.thread_class = tc ? (*jni)->NewGlobalRef(jni, tc) : NULL;
        if (!heap_sites_state.thread_class) {
            (*jni)->ExceptionClear(jni);
            heap_sites_state.defaults = false; /* every object tagged then */
        }
    }
    /* Each thread's current TLAB was handed out before sampling was armed, and the sampler
     * only looks at allocations past a TLAB's sample end: without this, a thread's first
     * hundreds of KB (all of a short main()) would go unseen. A collection retires them all.
     * Sampled mode attached to a running VM skips it (a full GC of a large heap) and may miss
     * a TLAB's worth of allocations per thread. */
    if (!heap_sites_state.sampled || !heap_sites_state.attached)
        jvmti_util_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti), "ForceGarbageCollection");
    if (heap_sites_state.defaults) {
        sites_walks_classify_loaded(jvmti, jni);
        /* No guard needed: no application code has run, and the threads that have run
         * allocate classes of the boot loader only. */
        sites_walks_walk_default_classes(sites_walks_mark_untracked, NULL);
    }
    atomic_store(&heap_sites_state.tag_all, false);
    pthread_mutex_unlock(&heap_sites_state.control_lock);
    if (heap_sites_state.defaults)
        sites_walks_start_worker(jvmti, jni);
}

static void heap_sites_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    sites_walks_stop_worker();
    if (heap_sites_state.async_check) {
        uint64_t ok = heap_sites_stats[STAT_ASYNC],
                 declined = heap_sites_stats[STAT_ASYNC_FALLBACKS];
        fprintf(stderr,
                "HPROF: heap=sites AGCT check: %llu stacks compared, %llu differ; AGCT declined "
                "%llu; mean ns: AGCT walked %llu, AGCT declined %llu, GetStackTrace %llu\n",
                (unsigned long long)ok, (unsigned long long)heap_sites_stats[STAT_ASYNC_MISMATCHES],
                (unsigned long long)declined,
                (unsigned long long)(ok ? heap_sites_stats[STAT_ASYNC_NS] / ok : 0),
                (unsigned long long)(declined ? heap_sites_stats[STAT_ASYNC_FALLBACK_NS] / declined
                                              : 0),
                (unsigned long long)(ok + declined
                                         ? heap_sites_stats[STAT_CHECK_NS] / (ok + declined)
                                         : 0));
    }
    if (!heap_sites_stats_on)
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
            (unsigned long long)heap_sites_stats[STAT_ALLOCS],
            (unsigned long long)heap_sites_stats[STAT_TAGGED],
            (unsigned long long)heap_sites_stats[STAT_STACK_MISSES],
            (unsigned long long)heap_sites_stats[STAT_CLASS_MISSES],
            (unsigned long long)heap_sites_stats[STAT_VM_ALLOCS],
            (unsigned long long)heap_sites_stats[STAT_MOVES], site_table_end() - SITE_ID_FIRST,
            trace_table_count(), in_use / 1024, (unsigned long long)heap_sites_stats[STAT_ASYNC],
            (unsigned long long)heap_sites_stats[STAT_ASYNC_FALLBACKS],
            (unsigned long long)heap_sites_stats[STAT_ASYNC_MISMATCHES]);
}

static void heap_sites_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)thread;
    sites_alloc_thread_free(jni); /* ThreadEnd runs on the ending thread */
}

/* ---- control --------------------------------------------------------------------------- */

static void set_tracking(jvmtiEnv *jvmti, JNIEnv *jni, bool on)
{
    pthread_mutex_lock(&heap_sites_state.control_lock);
    if (atomic_load(&heap_sites_state.tracking) != on) {
        if (!on) {
            if (heap_sites_state.defaults) {
                /* What is untagged now is default-site; give it explicit tags before
                 * untracked objects start to appear. */
                atomic_store(&heap_sites_state.tag_all, true);
                sites_walks_walk_default_classes(sites_walks_pin_defaults, NULL);
            }
            atomic_store(&heap_sites_state.tracking, false);
            switch_events(jvmti, JVMTI_DISABLE);
        } else {
            switch_events(jvmti, JVMTI_ENABLE);
            atomic_store(&heap_sites_state.tracking, true);
            /* As at start-up: the sampler skips the rest of every TLAB handed out while it
             * was off (JDK 17), so retire them all; what they held is marked untracked. */
            if (!heap_sites_state.sampled)
                jvmti_util_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti),
                                  "ForceGarbageCollection");
            if (heap_sites_state.defaults) {
                sites_walks_classify_loaded(jvmti, jni); /* classes first seen while off */
                atomic_fetch_add(&heap_sites_state.epoch, 1);
                sites_walks_walk_default_classes(sites_walks_mark_untracked, NULL);
                atomic_fetch_add(&heap_sites_state.epoch, 1);
                atomic_store(&heap_sites_state.tag_all, false);
            }
        }
    }
    pthread_mutex_unlock(&heap_sites_state.control_lock);
}

static void heap_sites_control(const struct control_request *req)
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
    uint64_t *alloc_objs, *alloc_bytes; /* NULL: read the sites' counters */
};

/* Counts a heap dump's site walks made for the sections of the same request
 * (heap_sites_walk_objects); control_lock held to use it. */
static struct {
    const struct dump_request *req;
    struct live_counts lc;
} stash;

static void live_counts_free(struct live_counts *lc)
{
    free(lc->objs);
    free(lc->bytes);
    free(lc->alloc_objs);
    free(lc->alloc_bytes);
    memset(lc, 0, sizeof *lc);
}

/* The site an object of the heap is counted at: its tag's, or for an untagged object of a
 * class with a default site (class_tag is the class's tag in the walk's environment, set only
 * in the class's own), that default; 0 for none. */
static uint64_t site_of(uint64_t tag, jlong class_tag)
{
    if (tag != 0)
        return tag_site(tag);
    struct site_class *k = heap_sites_state.defaults ? sites_walks_default_class(class_tag) : NULL;
    return k ? atomic_load_explicit(&k->default_site, memory_order_relaxed) : 0;
}

static jint JNICALL count_live(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                               void *user_data)
{
    (void)length;
    struct live_counts *lc = user_data;
    uint64_t site = site_of((uint64_t)*tag_ptr, class_tag);
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
    if (!heap_sites_state.sampled) {
        /* One walk per tag environment: its tagged objects, and the untagged objects of the
         * default-site classes it holds. With the gate closed nothing is tagged between the
         * walks; a collection between them (rare: no thread can allocate twice) would make
         * them see different heaps, so they start again. */
        for (int attempt = 0; attempt < LIVE_WALK_ATTEMPTS; attempt++) {
            uint64_t collections = tag_envs_collections();
            memset(lc->objs, 0, sizeof *lc->objs * lc->end);
            memset(lc->bytes, 0, sizeof *lc->bytes * lc->end);
            for (int i = 0; i < tag_envs_count(); i++)
                sites_walks_walk_filtered(tag_envs_at(i), 0, NULL, count_live, lc);
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
        struct site_live *s = site_table_live(id);
        lc->objs[id] = sites_weight_round(atomic_load_explicit(&s->objs, memory_order_relaxed));
        lc->bytes[id] = sites_weight_round(atomic_load_explicit(&s->bytes, memory_order_relaxed));
    }
}

struct row_ref {
    struct hprof_site_row row;
    uint32_t id;
};

/* ctx points to a bool: ordered by allocated bytes rather than live bytes. */
static int compare_rows(const void *a, const void *b, void *ctx)
{
    const struct hprof_site_row *x = &((const struct row_ref *)a)->row;
    const struct hprof_site_row *y = &((const struct row_ref *)b)->row;
    bool by_alloc = *(const bool *)ctx;
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

/* The row's share of the report: its allocated or live bytes (ctx as for compare_rows). */
static uint64_t row_key(const void *row, void *ctx)
{
    const struct hprof_site_row *r = &((const struct row_ref *)row)->row;
    return *(const bool *)ctx ? r->alloc_bytes : r->live_bytes;
}

static uint64_t alloc_count(_Atomic(uint64_t) *field)
{
    uint64_t v = atomic_load_explicit(field, memory_order_relaxed);
    return heap_sites_state.sampled ? sites_weight_round(v) : v;
}

/* Allocations of site id: as of the live counts' walks. */
static void alloc_counts(const struct live_counts *lc, uint32_t id, uint64_t *objs, uint64_t *bytes)
{
    struct site *s = site_table_get(id);
    *objs = lc->alloc_objs ? lc->alloc_objs[id] : alloc_count(&s->alloc_objs);
    *bytes = lc->alloc_bytes ? lc->alloc_bytes[id] : alloc_count(&s->alloc_bytes);
}

/* The sections of one dump: SITES and HEAP SUMMARY, as asked. */
struct sites_section {
    unsigned sections;
    const struct hprof_sites_report *report;
};

static void write_sites_section(struct hprof_writer *w, void *ctx)
{
    const struct sites_section *s = ctx;
    if (s->sections & DUMP_SITES)
        w->ops->sites(w, s->report);
    if (s->sections & DUMP_HEAP_SUMMARY) {
        struct hprof_heap_summary sum = {s->report->total_live_bytes, s->report->total_live_objs,
                                         s->report->total_alloc_bytes, s->report->total_alloc_objs};
        w->ops->heap_summary(w, &sum);
    }
}

static void write_nothing(struct hprof_writer *w, void *ctx)
{
    (void)w;
    (void)ctx;
}

static void heap_sites_dump(const struct dump_request *req)
{
    if (!(req->sections & (DUMP_SITES | DUMP_HEAP_SUMMARY)))
        return;
    jvmtiEnv *jvmti = req->jvmti;
    pthread_mutex_lock(&heap_sites_state.control_lock);
    /* The heap dump of this request walked the heap for us (heap_sites_walk_objects). */
    struct live_counts lc = {0};
    bool stashed = stash.req == req && stash.lc.objs;
    if (stashed)
        lc = stash.lc;
    else
        live_counts_free(&stash.lc);
    memset(&stash, 0, sizeof stash);
    if (req->flags & HPROF_SITES_FORCE_GC)
        (*jvmti)->ForceGarbageCollection(jvmti);
    /* Until the counts are read: live counts from walks of one heap, allocation counts of
     * the same moment. */
    bool gated = !heap_sites_state.sampled && !stashed;
    if (gated) {
        alloc_gate_close();
        sites_alloc_flush_pending();
    }

    if (!stashed) {
        lc.end = site_table_end();
        lc.objs = calloc(lc.end, sizeof *lc.objs);
        lc.bytes = calloc(lc.end, sizeof *lc.bytes);
    }
    struct row_ref *rows = calloc(lc.end, sizeof *rows);
    struct hprof_site_row *view = NULL;
    if (!lc.objs || !lc.bytes || !rows) {
        log_error("out of memory writing SITES");
        goto done;
    }
    if (!stashed)
        collect_live(jvmti, &lc);

    struct hprof_sites_report report = {.flags = req->flags, .cutoff = req->cutoff};
    size_t n = 0;
    for (uint32_t id = SITE_ID_FIRST; id < lc.end; id++) {
        struct site *s = site_table_get(id);
        uint64_t alloc_objs, alloc_bytes;
        alloc_counts(&lc, id, &alloc_objs, &alloc_bytes);
        report.total_alloc_objs += alloc_objs;
        report.total_alloc_bytes += alloc_bytes;
        report.total_live_objs += lc.objs[id];
        report.total_live_bytes += lc.bytes[id];
        if (alloc_objs == 0 && lc.objs[id] == 0)
            continue;
        if ((req->flags & HPROF_SITES_INCREMENTAL) && alloc_objs == s->dumped_alloc_objs &&
            lc.objs[id] == s->dumped_live_objs)
            continue;
        const struct class_info *c = class_table_get(s->class_serial);
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
    if (gated) { /* counts read: ranking and writing need no stopped allocations */
        alloc_gate_open();
        gated = false;
    }
    bool by_alloc = (req->flags & HPROF_SITES_BY_ALLOC) != 0;
    uint64_t total = by_alloc ? report.total_alloc_bytes : report.total_live_bytes;
    size_t keep =
        ranking_rank(rows, n, sizeof *rows, compare_rows, row_key, &by_alloc, total, req->cutoff);

    view = calloc(keep ? keep : 1, sizeof *view);
    for (size_t i = 0; view && i < keep; i++)
        view[i] = rows[i].row;
    /* Everything a row names goes first: LOAD CLASS, frames, STACK TRACE. */
    bool sites = (req->sections & DUMP_SITES) && view;
    struct emit_refs refs = {sites ? keep : 0, sizeof *view, sites ? &view->trace_serial : NULL,
                             sites ? &view->class_serial : NULL, NULL};
    if (req->sections & DUMP_SITES) {
        report.nrows = keep;
        report.rows = view;
    }
    struct sites_section section = {req->sections, &report};
    emit_section(&refs, view ? write_sites_section : write_nothing, &section);
    if (req->sections & DUMP_SITES)
        for (size_t i = 0; i < n; i++) {
            struct site *s = site_table_get(rows[i].id);
            s->dumped_alloc_objs = rows[i].row.alloc_objs;
            s->dumped_live_objs = rows[i].row.live_objs;
        }
done:
    if (gated)
        alloc_gate_open();
    free(view);
    free(rows);
    live_counts_free(&lc);
    pthread_mutex_unlock(&heap_sites_state.control_lock);
}

/* ---- for heap dumps ------------------------------------------------------------------- */

struct object_walk {
    heap_sites_object_fn fn;
    void *ctx;
    struct live_counts *lc;
};

static jint JNICALL visit_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                 void *user_data)
{
    (void)length;
    const struct object_walk *ow = user_data;
    uint64_t site = site_of((uint64_t)*tag_ptr, class_tag);
    if (site >= SITE_ID_FIRST && site < ow->lc->end) {
        ow->lc->objs[site]++;
        ow->lc->bytes[site] += (uint64_t)size;
        ow->fn(ow->ctx, tag_ptr, class_tag, size, (uint32_t)site);
    }
    return 0;
}

/* With the gate closed: the allocation counts of this moment. */
static void snapshot_allocs(struct live_counts *lc)
{
    for (uint32_t id = SITE_ID_FIRST; id < lc->end; id++)
        alloc_counts(&(struct live_counts){0}, id, &lc->alloc_objs[id], &lc->alloc_bytes[id]);
}

bool heap_sites_walk_objects(const struct dump_request *req, heap_sites_object_fn fn, void *ctx,
                             uint64_t *collections)
{
    if (heap_sites_state.sampled || tag_envs_count() == 0)
        return false;
    pthread_mutex_lock(&heap_sites_state.control_lock);
    live_counts_free(&stash.lc);
    memset(&stash, 0, sizeof stash);
    alloc_gate_close();
    sites_alloc_flush_pending();
    struct live_counts lc = {site_table_end(), NULL, NULL, NULL, NULL};
    lc.objs = calloc(lc.end, sizeof *lc.objs);
    lc.bytes = calloc(lc.end, sizeof *lc.bytes);
    lc.alloc_objs = calloc(lc.end, sizeof *lc.alloc_objs);
    lc.alloc_bytes = calloc(lc.end, sizeof *lc.alloc_bytes);
    bool ok = lc.objs && lc.bytes && lc.alloc_objs && lc.alloc_bytes;
    *collections = tag_envs_collections();
    if (ok) {
        snapshot_allocs(&lc);
        struct object_walk ow = {fn, ctx, &lc};
        for (int i = 0; i < tag_envs_count(); i++)
            sites_walks_walk_filtered(tag_envs_at(i), 0, NULL, visit_object, &ow);
    }
    alloc_gate_open();
    /* Kept for this request's SITES only if the walks saw one heap (no collection between
     * them) and SITES will not force a collection first. */
    bool keep = ok && tag_envs_collections() == *collections &&
                (req->sections & (DUMP_SITES | DUMP_HEAP_SUMMARY)) &&
                !(req->flags & HPROF_SITES_FORCE_GC);
    if (keep) {
        stash.req = req;
        stash.lc = lc;
    } else {
        live_counts_free(&lc);
    }
    pthread_mutex_unlock(&heap_sites_state.control_lock);
    return ok;
}

uint32_t heap_sites_trace_of_site(uint32_t site)
{
    const struct site *s = site_table_get(site);
    return s ? s->trace_serial : HPROF_TRACE_SERIAL_NONE;
}

uint64_t heap_sites_collections(void)
{
    return tag_envs_collections();
}

/* A socket command asked for ALLOC SITES while heap=sites is off: the section, empty (no
 * rows, totals 0), so that a front end waiting for it gets one. HEAP SUMMARY gets none (its
 * zeros would read as an empty heap). */
static void write_empty_sites(struct hprof_writer *w, void *ctx)
{
    const struct dump_request *req = ctx;
    struct hprof_sites_report r;
    memset(&r, 0, sizeof r);
    r.flags = req->flags;
    r.cutoff = req->cutoff;
    w->ops->sites(w, &r);
    w->ops->flush(w);
}

static void heap_sites_answer_off(const struct dump_request *req)
{
    if (req->sections & DUMP_SITES)
        emit_section(NULL, write_empty_sites, (void *)req);
}

const struct hprof_profile heap_sites_profile = {
    .name = "heap=sites",
    .sections = DUMP_SITES | DUMP_HEAP_SUMMARY,
    .option_text = "heap=sites or heap=all",
    .enabled = heap_sites_enabled,
    .add_capabilities = heap_sites_add_capabilities,
    .set_callbacks = heap_sites_set_callbacks,
    .start = heap_sites_start,
    .vm_init = heap_sites_vm_init,
    .class_prepare = heap_sites_class_prepare,
    .thread_end = heap_sites_thread_end,
    .dump = heap_sites_dump,
    .control = heap_sites_control,
    .answer_off = heap_sites_answer_off,
    .vm_death = heap_sites_vm_death,
};

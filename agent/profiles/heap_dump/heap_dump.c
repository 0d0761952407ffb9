#include "heap_dump.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "heap_classes.h"
#include "env_knobs.h"
#include "heap_mirrors.h"
#include "heap_site_map.h"
#include "heap_walk.h"
#include "jvmti_util.h"
#include "log.h"
#include "emit.h"
#include "output.h"
#include "tags.h"
#include "thread_table.h"
#include "trace_table.h"

/* Frames kept of each thread's stack for its ROOT THREAD OBJECT trace; JAVA FRAME roots name
 * frames of it by depth. */
#define THREAD_TRACE_DEPTH HPROF_DEPTH_MAX
/* verbose=y: a progress line at most this often during a dump (HPROF_PROGRESS_MS changes it,
 * for tests), the clock read every PROGRESS_OBJECTS objects. */
#define PROGRESS_INTERVAL_US 2000000u
#define PROGRESS_OBJECTS 4096u
/* Reads of the class list right before the walk: each takes the classes loaded during the
 * one before, so each is shorter, and so is the time left for classes to appear unseen. */
#define UPDATE_PASSES 4

static struct {
    jvmtiEnv *denv;  /* the dump environment (heap_walk.h); NULL until the first dump */
    bool force_tags; /* HPROF_HEAP_WALK=tags */
    /* HPROF_DUMP_SITES=n: objects carry no allocation sites; =walks: neither, but heap=sites'
     * walks run where they would for them (both to measure them, bench/dump-sites). */
    bool no_sites, walks_only;
    bool probed, addresses_ok;
    bool heap_dump_option; /* heap=dump|all: also at exit and on signals */
    /* VM death has begun: only the exit dump runs (a later one would find the VM dead). */
    atomic_bool vm_dying;
    uint64_t progress_us; /* interval of progress lines */
} st;

struct dump_thread {
    uint64_t tag;
    uint32_t serial, trace;
};

/* One dump in progress. */
struct dump_ctx {
    struct hprof_writer *w; /* where records go (output lock held) */
    struct dump_thread *threads;
    size_t nthreads;
    uint64_t objects, heap_bytes;
    uint64_t start_us, last_report_us;
    struct heap_site_map sites; /* allocation sites of the objects (active: heap=sites exact) */
    uint64_t with_site, without_site; /* instances and arrays written with a trace, without */
};

static hprof_id class_id(const struct dump_class *c)
{
    return tag_make(TAG_SITE_CLASS, c->serial);
}

static uint32_t u32_size(uint64_t size)
{
    return size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
}

/* ---- progress ----------------------------------------------------------------------------- */

/* An instance or array written (its trace counted). */
static void progress(struct dump_ctx *d, uint64_t size, uint32_t trace)
{
    if (trace == HPROF_TRACE_SERIAL_NONE)
        d->without_site++;
    else
        d->with_site++;
    d->objects++;
    d->heap_bytes += size;
    if (d->objects % PROGRESS_OBJECTS != 0 || !log_verbose())
        return;
    uint64_t now = (clock_monotonic_ns() / 1000u);
    if (now - d->last_report_us < st.progress_us)
        return;
    d->last_report_us = now;
    log_info("heap dump: %.1f M objects, %.0f MB of heap written, %.1f s", (double)d->objects / 1e6,
             (double)d->heap_bytes / 1048576.0, (double)(now - d->start_us) / 1e6);
}

/* ---- walk output: streamed to the writer ---------------------------------------------------- */

static void write_root(void *ctx, const struct hprof_root *r)
{
    struct dump_ctx *d = ctx;
    struct hprof_root copy = *r;
    if (copy.kind == HPROF_ROOT_STICKY_CLASS && !copy.class_name) {
        const struct dump_class *c = heap_classes_of_tag(copy.object);
        copy.class_name = c ? heap_classes_name(c->serial) : "java.lang.Class";
    }
    d->w->ops->root(d->w, &copy);
}

static void write_instance(void *ctx, const struct dump_class *c, hprof_id id, uint32_t trace,
                           uint64_t size, const union hprof_value *values)
{
    struct dump_ctx *d = ctx;
    struct hprof_instance_dump o = {
        .object_id = id,
        .trace_serial = trace,
        .class_id = class_id(c),
        .class_name = c->name,
        .size = u32_size(size),
        .nvalues = c->layout.ninstance,
        .fields = c->layout.instance,
        .values = values,
    };
    d->w->ops->instance_dump(d->w, &o);
    progress(d, size, trace);
}

static void write_obj_array(void *ctx, const struct dump_class *c, hprof_id id, uint32_t trace,
                            uint64_t size, uint32_t n, const hprof_id *elems)
{
    struct dump_ctx *d = ctx;
    struct hprof_obj_array_dump a = {
        .array_id = id,
        .trace_serial = trace,
        .class_id = class_id(c),
        .class_name = c->name,
        .elem_class_id = c->elem_id,
        .size = u32_size(size),
        .nelems = n,
        .elems = elems,
    };
    d->w->ops->obj_array_dump(d->w, &a);
    progress(d, size, trace);
}

static void write_prim_array(void *ctx, hprof_id id, uint32_t trace, enum hprof_basic_type type,
                             uint64_t size, uint32_t n, const void *elems)
{
    struct dump_ctx *d = ctx;
    struct hprof_prim_array_dump a = {
        .array_id = id,
        .trace_serial = trace,
        .elem_type = type,
        .size = u32_size(size),
        .nelems = n,
        .elems = elems,
    };
    d->w->ops->prim_array_dump(d->w, &a);
    progress(d, size, trace);
}

static uint32_t site_trace_of(void *ctx, uint64_t address)
{
    return heap_site_map_trace(&((struct dump_ctx *)ctx)->sites, address);
}

static void site_trace_soon(void *ctx, uint64_t address)
{
    heap_site_map_prefetch(&((struct dump_ctx *)ctx)->sites, address);
}

static bool output_failed(void *ctx)
{
    return writer_common_failed(((struct dump_ctx *)ctx)->w);
}

/* A CLASS DUMP for every class in the dump, once the walk has found their statics, constant
 * pool entries and loaders. Returns how many. */
static uint64_t write_class_dumps(struct hprof_writer *w)
{
    uint64_t n = 0;
    for (uint32_t s = 1; s < heap_classes_limit(); s++) {
        const struct dump_class *c = heap_classes_get(s);
        if (!c || !c->in_dump)
            continue;
        struct hprof_class_dump d;
        heap_classes_describe(c, &d);
        w->ops->class_dump(w, &d);
        n++;
    }
    return n;
}

/* ---- threads -------------------------------------------------------------------------------- */

static int cmp_thread(const void *a, const void *b)
{
    uint64_t x = ((const struct dump_thread *)a)->tag, y = ((const struct dump_thread *)b)->tag;
    return x < y ? -1 : x > y;
}

static bool thread_of_tag(void *ctx, uint64_t tag, uint32_t *serial, uint32_t *trace)
{
    const struct dump_ctx *d = ctx;
    size_t lo = 0, hi = d->nthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->threads[mid].tag < tag)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (tag == 0 || lo == d->nthreads || d->threads[lo].tag != tag)
        return false;
    *serial = d->threads[lo].serial;
    *trace = d->threads[lo].trace;
    return true;
}

static bool add_thread(struct dump_ctx *d, size_t *cap, uint64_t tag, uint32_t serial,
                       uint32_t trace)
{
    if (d->nthreads == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        struct dump_thread *t = realloc(d->threads, c * sizeof *t);
        if (!t)
            return false;
        d->threads = t;
        *cap = c;
    }
    d->threads[d->nthreads++] = (struct dump_thread){tag, serial, trace};
    return true;
}

/* Every thread's stack now, as the trace of its ROOT THREAD OBJECT; thread objects get their
 * agent tag (the id THREAD START named them by) in the dump environment too, also threads
 * that have ended but whose Thread object is still reachable. */
static void prepare_threads(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni, struct dump_ctx *d)
{
    size_t cap = 0;
    jvmtiStackInfo *info = NULL;
    jint n = 0;
    if (!jvmti_util_failed(jvmti, (*jvmti)->GetAllStackTraces(jvmti, THREAD_TRACE_DEPTH, &info, &n),
                           "GetAllStackTraces")) {
        for (jint i = 0; i < n; i++) {
            struct thread_info *ti = thread_table_of(jvmti, jni, info[i].thread);
            if (ti && ti->object_id) {
                (*denv)->SetTag(denv, info[i].thread, (jlong)ti->object_id);
                uint32_t trace = trace_table_intern(jvmti, info[i].frame_buffer,
                                                    info[i].frame_count, ti->serial);
                add_thread(d, &cap, ti->object_id, ti->serial, trace);
            }
            (*jni)->DeleteLocalRef(jni, info[i].thread);
        }
        jvmti_util_free(jvmti, info);
    }
    /* Threads registered earlier that are not running now. */
    uint32_t nt = thread_table_count();
    jlong *tags = malloc((nt ? nt : 1) * sizeof *tags);
    jint ntags = 0;
    for (uint32_t s = 1; tags && s <= nt; s++) {
        const struct thread_info *ti = thread_table_get(s);
        if (ti && ti->object_id) {
            bool running = false;
            for (size_t k = 0; k < d->nthreads && !running; k++)
                running = d->threads[k].tag == ti->object_id;
            if (!running)
                tags[ntags++] = (jlong)ti->object_id;
        }
    }
    jint found = 0;
    jobject *objs = NULL;
    jlong *found_tags = NULL;
    if (ntags > 0 && (*jvmti)->GetObjectsWithTags(jvmti, ntags, tags, &found, &objs, &found_tags) ==
                         JVMTI_ERROR_NONE) {
        for (jint i = 0; i < found; i++) {
            (*denv)->SetTag(denv, objs[i], found_tags[i]);
            (*jni)->DeleteLocalRef(jni, objs[i]);
            for (uint32_t s = 1; s <= nt; s++) {
                const struct thread_info *ti = thread_table_get(s);
                if (ti && ti->object_id == (hprof_id)found_tags[i]) {
                    add_thread(d, &cap, ti->object_id, ti->serial, HPROF_TRACE_SERIAL_NONE);
                    break;
                }
            }
        }
        jvmti_util_free(jvmti, objs);
        jvmti_util_free(jvmti, found_tags);
    }
    free(tags);
    if (d->nthreads)
        qsort(d->threads, d->nthreads, sizeof *d->threads, cmp_thread);
}

/* ---- the dump ---------------------------------------------------------------------------- */

/* The dump environment (heap_walk.h), made at the first dump and after one that tagged every
 * object. */
static struct hprof_error open_dump_env(jvmtiEnv **out)
{
    *out = st.denv;
    if (st.denv)
        return hprof_ok();
    JavaVM *vm = jvmti_util_vm();
    jvmtiEnv *e = NULL;
    if (!vm || (*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_11) != JNI_OK || !e)
        return hprof_errorf("no JVMTI environment for the heap walk");
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    jvmtiError err = (*e)->AddCapabilities(e, &caps);
    if (err != JVMTI_ERROR_NONE) {
        (*e)->DisposeEnvironment(e);
        return hprof_errorf("AddCapabilities (can_tag_objects) failed: JVMTI error %d", (int)err);
    }
    *out = st.denv = e;
    return hprof_ok();
}

/* HotSpot (where the probe's layout is known) or not: other VMs keep to the spec (tags). */
static bool vm_is_hotspot(jvmtiEnv *jvmti)
{
    char *name = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.name", &name) != JVMTI_ERROR_NONE || !name)
        return false;
    bool hs = strstr(name, "HotSpot") || strstr(name, "Server VM") || strstr(name, "Client VM");
    jvmti_util_free(jvmti, name);
    return hs;
}

static enum walk_ids choose_ids(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni)
{
    if (st.force_tags)
        return WALK_IDS_TAGS;
    if (!st.probed) {
        st.probed = true;
        st.addresses_ok = vm_is_hotspot(jvmti) && heap_walk_probe(denv, jni);
        if (!st.addresses_ok)
            log_warning("heap dump: this VM's heap walk cannot name objects by address; every "
                        "object is tagged during a dump (slow, about 60 bytes per object)");
    }
    return st.addresses_ok ? WALK_IDS_ADDRESSES : WALK_IDS_TAGS;
}

static void report(const struct heap_walk_result *res, const struct dump_ctx *d)
{
    if (res->unknown_class)
        log_warning("heap dump: %llu objects of classes loaded or linked during the dump were "
                    "left out or written as Object[]",
                    (unsigned long long)res->unknown_class);
    if (res->refs_nulled || res->roots_left_out)
        log_warning("heap dump: %llu references to objects left out were written as null, "
                    "%llu roots of them left out",
                    (unsigned long long)res->refs_nulled, (unsigned long long)res->roots_left_out);
    if (res->layout_mismatches)
        log_warning("heap dump: %llu field values did not fit their class layout and were "
                    "left out",
                    (unsigned long long)res->layout_mismatches);
    if (d->sites.stale)
        log_warning("heap dump: a garbage collection ran between heap=sites' walk and the "
                    "dump's; objects carry no allocation sites in this dump");
    char sites[96] = "";
    if (d->sites.active)
        snprintf(sites, sizeof sites, ", %llu with an allocation site, %llu without",
                 (unsigned long long)d->with_site, (unsigned long long)d->without_site);
    log_info("heap dump: %llu objects (%.1f MB of heap)%s, %llu roots, %.2f s",
             (unsigned long long)res->objects, (double)res->bytes / 1048576.0, sites,
             (unsigned long long)res->roots,
             (double)((clock_monotonic_ns() / 1000u) - d->start_us) / 1e6);
}

/* The walk streams every record to the writer (output lock held): roots and objects as the
 * VM reports them, then the CLASS DUMPs, then the totals with the end (a format that prints
 * them first holds the dump back itself). A walk that found the VM's layout changed is
 * abandoned (no totals). */
static void walk_to_writer(jvmtiEnv *denv, enum walk_ids ids, struct dump_ctx *d,
                           struct heap_walk_result *res)
{
    const struct walk_out out = {d,
                                 write_root,
                                 write_instance,
                                 write_obj_array,
                                 write_prim_array,
                                 d->sites.active ? site_trace_of : NULL,
                                 d->sites.active ? site_trace_soon : NULL,
                                 thread_of_tag,
                                 output_failed};
    struct hprof_writer *w = d->w;
    writer_common_set_bulk(w, true);
    w->ops->heap_dump_begin(w, NULL);
    heap_walk_run(denv, ids, &out, res);
    uint64_t nclasses = write_class_dumps(w);
    const struct hprof_heap_totals totals = {
        res->objects + nclasses, res->bytes + res->class_objects_bytes,
        d->sites.active && !d->sites.stale, d->with_site, d->without_site};
    w->ops->heap_dump_end(w, res->layout_broken ? NULL : &totals);
    writer_common_set_bulk(w, false);
}

static void heap_dump(const struct dump_request *req)
{
    jvmtiEnv *jvmti = req->jvmti;
    JNIEnv *jni = req->jni;
    if (!jni) {
        log_warning("heap dump skipped: the dumping thread has no JNI environment");
        return;
    }
    if (st.vm_dying && req->reason != DUMP_AT_EXIT)
        return; /* a SIGQUIT or command that waited for the exit dump: the VM is going */
    if ((*jni)->PushLocalFrame(jni, 64) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    struct dump_ctx d;
    memset(&d, 0, sizeof d);
    d.start_us = d.last_report_us = (clock_monotonic_ns() / 1000u);
    jvmtiEnv *denv = NULL;
    struct hprof_error e = open_dump_env(&denv);
    if (!hprof_failed(&e))
        e = heap_classes_prepare(jvmti, denv, jni);
    if (hprof_failed(&e)) {
        log_error("heap dump skipped: %s", e.text);
        goto out;
    }
    enum walk_ids ids = choose_ids(jvmti, denv, jni);
    prepare_threads(jvmti, denv, jni, &d);
    heap_mirrors_prepare(jvmti, denv, jni);
    /* Objects are looked up by address: no sites when the walk tags them. */
    if (ids == WALK_IDS_ADDRESSES && st.walks_only)
        heap_site_map_walk_only(req);
    else if (ids == WALK_IDS_ADDRESSES && !st.no_sites)
        heap_site_map_build(&d.sites, req);

    for (int attempt = 0; attempt < 2; attempt++) {
        struct heap_walk_result res;
        memset(&res, 0, sizeof res);
        struct hprof_writer *w = emit_begin();
        if (!w) {
            emit_end();
            break;
        }
        /* The classes loaded since the list: the shorter the time between the last list
         * and the walk, the fewer objects of unknown classes the walk meets. */
        uint32_t added = 1;
        for (int pass = 0; pass < UPDATE_PASSES && added > 0; pass++) {
            e = heap_classes_update(jvmti, denv, jni, &added);
            if (hprof_failed(&e)) {
                log_warning("heap dump: %s; classes loaded since the dump began may be left out",
                            e.text);
                break;
            }
        }
        heap_classes_write_names(w);
        for (size_t i = 0; i < d.nthreads; i++) {
            emit_thread(w, d.threads[i].serial);
            emit_trace(w, d.threads[i].trace);
        }
        heap_site_map_emit_traces(&d.sites, w);
        heap_site_map_recheck(&d.sites);
        d.w = w;
        walk_to_writer(denv, ids, &d, &res);
        d.w = NULL;
        emit_end();
        if (!res.layout_broken) {
            report(&res, &d);
            break;
        }
        /* The probe passed but the VM's callbacks changed shape: never again by address. */
        log_error("heap dump: the VM's heap walk callbacks are not what the probe found; "
                  "dumping again with tagged objects");
        st.addresses_ok = false;
        ids = WALK_IDS_TAGS;
        heap_site_map_free(&d.sites);
        d.objects = d.heap_bytes = d.with_site = d.without_site = 0;
        e = heap_classes_prepare(jvmti, denv, jni);
        if (hprof_failed(&e))
            log_error("heap dump: %s; dumping again with the classes as they were read", e.text);
        heap_mirrors_prepare(jvmti, denv, jni);
    }
    heap_mirrors_release(jni);
    heap_classes_release(jni);
    if (ids == WALK_IDS_TAGS) {
        /* Dropping the environment frees every tag the walk gave at once. */
        (*denv)->DisposeEnvironment(denv);
        st.denv = NULL;
    }
out:
    heap_site_map_free(&d.sites);
    free(d.threads);
    (*jni)->PopLocalFrame(jni, NULL);
}

/* ---- the profile -------------------------------------------------------------------------- */

/* With net= the profile runs whatever heap= says: the socket's DUMP HEAP command dumps the
 * heap in any case, as the JDK 8 agent did. Exit and signal dumps only with heap=dump|all. */
static bool heap_dump_enabled(const struct hprof_options *opts)
{
    return opts->heap_dump || opts->net_host != NULL;
}

static struct hprof_error heap_dump_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                          bool live)
{
    (void)jvmti;
    (void)live;
    st.heap_dump_option = opts->heap_dump;
    const struct env_knobs *env = env_knobs();
    st.progress_us = env->has_progress_ms ? env->progress_ms * 1000u : PROGRESS_INTERVAL_US;
    st.force_tags = env->heap_walk_tags;
    const char *sites = getenv("HPROF_DUMP_SITES");
    st.no_sites = sites && strcmp(sites, "n") == 0;
    st.walks_only = sites && strcmp(sites, "walks") == 0;
    return hprof_ok();
}

static void heap_dump_dump(const struct dump_request *req)
{
    if ((req->sections & DUMP_HEAP) && (st.heap_dump_option || req->reason == DUMP_ON_COMMAND))
        heap_dump(req);
}

static void heap_dump_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    st.vm_dying = true;
}

const struct hprof_profile heap_dump_profile = {
    .name = "heap=dump",
    .enabled = heap_dump_enabled,
    .start = heap_dump_start,
    .dump = heap_dump_dump,
    .vm_death = heap_dump_vm_death,
};

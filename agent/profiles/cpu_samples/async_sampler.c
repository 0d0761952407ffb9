#include "async_sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agct_stack.h"
#include "class_table.h"
#include "clock.h"
#include "carriers.h"
#include "sampler_thread.h"
#include "cpu_timers.h"
#include "frame_table.h"
#include "jvmti_util.h"
#include "late_walk.h"
#include "log.h"
#include "thread_table.h"
#include "trace_table.h"

/* Frames a ring record holds at least: CONTROL_SET_DEPTH may deepen traces after start, up to
 * max(depth=, this). */
#define MIN_RECORD_FRAMES 64
/* Most virtual-thread boundary methods looked for (Continuation.enter and enterSpecial). */
#define MAX_BOUNDARY 8

/* Why a sample has no Java stack: AGCT's reasons (index = -count), and ours. Each has a
 * pseudo-frame "<unwalkable>.<name>" its samples are counted under. */
enum reason {
    R_OTHER = 0, /* a negative count AGCT did not document */
    R_NO_CLASS_LOAD = 1,
    R_GC_ACTIVE,
    R_UNKNOWN_NOT_JAVA,
    R_NOT_WALKABLE_NOT_JAVA,
    R_UNKNOWN_JAVA,
    R_NOT_WALKABLE_JAVA,
    R_UNKNOWN_STATE,
    R_THREAD_EXIT,
    R_DEOPT,
    R_SAFEPOINT,
    R_SKIPPED,
    R_BUFFER_FULL,      /* the ring was full: the stack was never walked */
    R_FRAME_UNREADABLE, /* a frame's method could not be read at the drain (class unloaded) */
    R_COUNT,
};

static const char *const reason_names[R_COUNT] = {
    "other",
    "no_class_load",
    "gc_active",
    "unknown_not_java",
    "not_walkable_not_java",
    "unknown_java",
    "not_walkable_java",
    "unknown_state",
    "thread_exit",
    "deoptimizing",
    "at_safepoint",
    "skipped",
    "buffer_full",
    "frame_unreadable",
};

/* Pseudo-methods: their ids are addresses in here, never real jmethodIDs. */
static char pseudo_ids[R_COUNT + 1];
#define NO_METHOD_ID_PSEUDO R_COUNT /* a frame whose method had no jmethodID */
static bool pseudo_ready;

static _Atomic(bool) active;
static bool per_thread;
static bool late_walks; /* the late walker runs: threads get a global reference for it */

static jmethodID boundary_enter[MAX_BOUNDARY], boundary_special[MAX_BOUNDARY];
static jmethodID yield_methods[MAX_BOUNDARY]; /* Continuation.yield, yield0, doYield */
static int nenter, nspecial, nyield;

/* drain_lock serialises drains (the agent thread, dumps, CONTROL commands). */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static jvmtiFrameInfo *frame_buf;

/* Weak references to virtual threads that a carrier replaced: freed once the drain has
 * consumed every record claimed before the replacement (records may name them). */
struct retired_ref {
    uint64_t pos;
    jweak ref;
};
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired_ref *retired;
static size_t nretired, retired_cap;

/* Guarded by drain_lock. */
static struct {
    uint64_t samples, records, weight_counted;
    uint64_t reasons[R_COUNT];
    uint64_t no_java, no_method_frames, discarded, vthread_samples, vthread_dropped;
    uint64_t walked_late;
    uint64_t drains, drain_ns;
} st;
/* CPU time making jmethodIDs (ClassPrepare and VM init), for the verbose message. */
static _Atomic(uint64_t) prepare_ns, prepared_classes;

/* ---- start ----------------------------------------------------------------------------- */

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
                                            const void *code_addr, jint map_length,
                                            const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    /* Nothing to do: having the event on is what matters. HotSpot then records debug
     * information at every pc of compiled code, not only at safepoints (unless
     * -XX:-DebugNonSafepoints), so AGCT resolves inlined frames where the thread really is. */
    (void)jvmti;
    (void)method;
    (void)code_size;
    (void)code_addr;
    (void)map_length;
    (void)map;
    (void)compile_info;
}

void cpu_async_add_capabilities(jvmtiCapabilities *caps)
{
    caps->can_generate_compiled_method_load_events = 1;
}

void cpu_async_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->CompiledMethodLoad = on_compiled_method_load;
    async_stack_set_callbacks(cb); /* ClassLoad: AGCT answers only while it is on */
}

static void on_mount(JNIEnv *jni, jthread vthread);

bool cpu_async_start(jvmtiEnv *jvmti, const struct hprof_options *opts)
{
    if (opts->sampler == HPROF_SAMPLER_SAFEPOINT)
        return false;
    const char *why = NULL;
    if (!async_stack_init()) {
        why = "this VM exports no AsyncGetCallTrace";
    } else if (async_stack_enable_events(jvmti) != 0) {
        why = "ClassLoad events cannot be enabled";
    } else {
        int frames = opts->depth > MIN_RECORD_FRAMES ? opts->depth : MIN_RECORD_FRAMES;
        switch (cpu_timers_setup((int64_t)opts->interval_ms * 1000000, frames)) {
        case CPU_TIMERS_OK:
            break;
        case CPU_TIMERS_SIGNAL_TAKEN:
            why = "SIGPROF is already handled by the application or another agent";
            break;
        case CPU_TIMERS_NO_TIMER:
            why = "the kernel refused a thread CPU-time timer";
            break;
        case CPU_TIMERS_NO_MEMORY:
            why = "out of memory";
            break;
        }
    }
    if (why) {
        log_warning("cpu=samples: %s; using the safepoint sampler (sampler=safepoint)", why);
        return false;
    }
    frame_buf = malloc(sizeof *frame_buf * (size_t)cpu_timers_max_frames());
    if (!frame_buf) {
        cpu_timers_stop();
        log_warning("cpu=samples: out of memory; using the safepoint sampler");
        return false;
    }
    if (jvmti_failed(jvmti,
                     (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                                        JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL),
                     "SetEventNotificationMode(CompiledMethodLoad)"))
        log_warning("cpu=samples: inlined frames will be resolved at safepoints only");
    per_thread = opts->thread;
    cpu_carriers_observe(on_mount);
    atomic_store(&active, true);
    return true;
}

bool cpu_async_active(void)
{
    return atomic_load(&active);
}

/* The methods where a virtual thread's stack ends on its carrier (JDK 21+): frames below
 * Continuation.enter are the carrier's, as JVMTI shows a virtual thread's stack. */
static void find_boundary(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jclass cls = (*jni)->FindClass(jni, "jdk/internal/vm/Continuation");
    if (!cls) {
        (*jni)->ExceptionClear(jni); /* JDK 17 */
        return;
    }
    jint n = 0;
    jmethodID *methods = NULL;
    if ((*jvmti)->GetClassMethods(jvmti, cls, &n, &methods) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            char *name = NULL;
            if ((*jvmti)->GetMethodName(jvmti, methods[i], &name, NULL, NULL) != JVMTI_ERROR_NONE)
                continue;
            if (strcmp(name, "enter") == 0 && nenter < MAX_BOUNDARY)
                boundary_enter[nenter++] = methods[i];
            else if (strcmp(name, "enterSpecial") == 0 && nspecial < MAX_BOUNDARY)
                boundary_special[nspecial++] = methods[i];
            else if ((strcmp(name, "yield") == 0 || strcmp(name, "yield0") == 0 ||
                      strcmp(name, "doYield") == 0) &&
                     nyield < MAX_BOUNDARY)
                yield_methods[nyield++] = methods[i];
            jvmti_free(jvmti, name);
        }
        jvmti_free(jvmti, methods);
    }
    (*jni)->DeleteLocalRef(jni, cls);
}

static void make_pseudo_frames(void)
{
    uint32_t cls = classes_register_synthetic("<unwalkable>");
    bool ok = cls != 0;
    for (int r = 0; ok && r < R_COUNT; r++)
        ok = frames_register_synthetic((jmethodID)(void *)&pseudo_ids[r], cls, reason_names[r]);
    if (ok)
        ok = frames_register_synthetic((jmethodID)(void *)&pseudo_ids[NO_METHOD_ID_PSEUDO], cls,
                                       "no_method_id");
    pseudo_ready = ok;
}

void cpu_async_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (!cpu_async_active())
        return;
    make_pseudo_frames();
    /* Classes loaded before the agent (start-up classes, or everything at an attach). */
    jint n = 0;
    jclass *classes = NULL;
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            async_stack_prepare_class(jvmti, classes[i]);
            (*jni)->DeleteLocalRef(jni, classes[i]);
        }
        jvmti_free(jvmti, classes);
        atomic_fetch_add(&prepared_classes, (uint64_t)n);
    }
    atomic_fetch_add(&prepare_ns, (uint64_t)((int64_t)clock_thread_cpu_ns() - t0));
    find_boundary(jvmti, jni);
    late_walks = late_walk_start(jvmti, jni);
}

void cpu_async_class_prepare(jvmtiEnv *jvmti, jclass klass)
{
    if (!cpu_async_active())
        return;
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    async_stack_prepare_class(jvmti, klass);
    atomic_fetch_add(&prepare_ns, (uint64_t)((int64_t)clock_thread_cpu_ns() - t0));
    atomic_fetch_add(&prepared_classes, 1);
}

/* ---- threads ------------------------------------------------------------------------------ */

int32_t cpu_async_cover_current(JNIEnv *jni, struct thread_info *info, jthread thread, bool enabled)
{
    if (!cpu_async_active() || !info)
        return -1;
    jobject ref = thread && late_walks ? (*jni)->NewGlobalRef(jni, thread) : NULL;
    int32_t slot = cpu_timers_add_current(jni, (uintptr_t)info, (uintptr_t)ref, enabled);
    if (slot < 0 && ref)
        (*jni)->DeleteGlobalRef(jni, ref);
    return slot;
}

static void retire_ref(jweak ref)
{
    pthread_mutex_lock(&retired_lock);
    if (nretired == retired_cap) {
        size_t cap = retired_cap ? retired_cap * 2 : 64;
        struct retired_ref *grown = realloc(retired, cap * sizeof *grown);
        if (grown) {
            retired = grown;
            retired_cap = cap;
        }
    }
    if (nretired < retired_cap) /* else the reference leaks: never freed, never unsafe */
        retired[nretired++] = (struct retired_ref){sample_ring_claimed(cpu_timers_ring()), ref};
    pthread_mutex_unlock(&retired_lock);
}

void cpu_async_uncover_current(JNIEnv *jni)
{
    (void)jni;
    if (cpu_timers_current() < 0)
        return;
    jweak last = (jweak)cpu_timers_mounted_vthread();
    cpu_timers_remove_current();
    if (last)
        retire_ref(last);
}

/* Mount and unmount of a virtual thread, on its carrier (cpu_carriers.c). With thread=y the
 * slot keeps a weak reference to the virtual thread, so that its samples are its own. */
static void on_mount(JNIEnv *jni, jthread vthread)
{
    if (cpu_timers_current() < 0)
        return;
    if (!vthread) {
        cpu_timers_mount_current(0, false);
        return;
    }
    if (!per_thread) {
        cpu_timers_mount_current(0, true);
        return;
    }
    jweak last = (jweak)cpu_timers_mounted_vthread();
    if (last && (*jni)->IsSameObject(jni, last, vthread)) {
        cpu_timers_mount_current(0, true);
        return;
    }
    jweak ref = (*jni)->NewWeakGlobalRef(jni, vthread);
    if (!ref) {
        (*jni)->ExceptionClear(jni);
        cpu_timers_mount_current(0, true);
        return;
    }
    /* The new one first: a signal between the two stores names a live reference. */
    cpu_timers_mount_current((uintptr_t)ref, true);
    if (last)
        retire_ref(last);
}

/* ---- the drain --------------------------------------------------------------------------- */

static bool is_one_of(jmethodID m, const jmethodID *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == m)
            return true;
    return false;
}

static uint32_t thread_serial_of(uintptr_t owner)
{
    const struct thread_info *info = (const struct thread_info *)owner;
    return per_thread && info ? info->serial : 0;
}

static void count_reason(jvmtiEnv *jvmti, enum reason r, uint32_t thread_serial, uint64_t w)
{
    st.reasons[r] += w;
    uint32_t serial = HPROF_TRACE_SERIAL_NONE;
    if (pseudo_ready && traces_depth() > 0) {
        jvmtiFrameInfo f = {(jmethodID)(void *)&pseudo_ids[r], 0};
        serial = traces_intern(jvmti, &f, 1, thread_serial);
    }
    cpu_sampler_add_samples(serial, w);
    st.samples += w;
}

static enum reason reason_of(int nframes)
{
    int r = -nframes;
    return r >= R_NO_CLASS_LOAD && r <= R_SKIPPED ? (enum reason)r : R_OTHER;
}

static void count_record(jvmtiEnv *jvmti, JNIEnv *jni, const struct timer_record *rec)
{
    uint64_t w = rec->weight;
    st.records++;
    if (!cpu_timers_record_current(rec)) {
        st.discarded += w; /* switched off or cleared since */
        return;
    }
    int n = rec->nframes;
    if (rec->walked_late && n > 0)
        st.walked_late += w;
    if (n < 0) {
        count_reason(jvmti, reason_of(n), thread_serial_of(rec->owner), w);
        return;
    }
    if (n == 0) {
        st.no_java += w; /* not in Java code: as the safepoint sampler, not counted */
        return;
    }
    if (n > cpu_timers_max_frames())
        n = cpu_timers_max_frames();
    /* A virtual thread's frames end at Continuation.enter; the carrier's follow. A stack with
     * Continuation.yield in it is a virtual thread's too: between the unmount event (which
     * clears "mounted") and the end of the yield, its frames are still on the carrier. */
    bool virtual_stack = rec->mounted != 0;
    int keep = n;
    for (int i = 0; i < n && (nenter || nspecial); i++) {
        jmethodID m = rec->frames[i].method_id;
        if (is_one_of(m, yield_methods, nyield))
            virtual_stack = true;
        if (is_one_of(m, boundary_enter, nenter)) {
            keep = i + 1;
            virtual_stack = true;
            break;
        }
        if (is_one_of(m, boundary_special, nspecial)) {
            keep = i;
            virtual_stack = true;
            break;
        }
    }
    int depth = traces_depth();
    if (keep > depth)
        keep = depth;
    bool no_method = false;
    for (int i = 0; i < keep; i++) {
        const struct async_frame *a = &rec->frames[i];
        if (a->method_id) {
            frame_buf[i].method = a->method_id;
            frame_buf[i].location = a->lineno >= 0 ? a->lineno : -1;
        } else {
            frame_buf[i].method = (jmethodID)(void *)&pseudo_ids[NO_METHOD_ID_PSEUDO];
            frame_buf[i].location = 0;
            no_method = true;
        }
    }
    if (no_method) {
        st.no_method_frames += w;
        if (!pseudo_ready) {
            count_reason(jvmti, R_FRAME_UNREADABLE, thread_serial_of(rec->owner), w);
            return;
        }
    }
    uint32_t thread_serial = thread_serial_of(rec->owner);
    if (virtual_stack) {
        if (per_thread) {
            jthread local = rec->vthread ? (*jni)->NewLocalRef(jni, (jweak)rec->vthread) : NULL;
            struct thread_info *vinfo = local ? threads_of(jvmti, jni, local) : NULL;
            if (local)
                (*jni)->DeleteLocalRef(jni, local);
            if (!vinfo) {
                st.vthread_dropped += w; /* the virtual thread is gone: whose time is unknown */
                return;
            }
            thread_serial = vinfo->serial;
        }
        st.vthread_samples += w;
    }
    if (keep == 0 && depth > 0) {
        st.no_java += w; /* a carrier between two virtual threads, in the entry stub */
        return;
    }
    uint32_t serial = traces_intern(jvmti, frame_buf, keep, thread_serial);
    if (serial == HPROF_TRACE_SERIAL_NONE && keep > 0) {
        count_reason(jvmti, R_FRAME_UNREADABLE, thread_serial, w);
        return;
    }
    cpu_sampler_add_samples(serial, w);
    st.samples += w;
    st.weight_counted += w;
}

struct lost_ctx {
    jvmtiEnv *jvmti;
};

static void count_lost(uintptr_t owner, uint64_t weight, void *arg)
{
    struct lost_ctx *c = arg;
    count_reason(c->jvmti, R_BUFFER_FULL, thread_serial_of(owner), weight);
}

static void free_retired_refs(JNIEnv *jni)
{
    uint64_t consumed = sample_ring_consumed(cpu_timers_ring());
    pthread_mutex_lock(&retired_lock);
    size_t kept = 0;
    for (size_t i = 0; i < nretired; i++) {
        if (retired[i].pos <= consumed)
            (*jni)->DeleteWeakGlobalRef(jni, retired[i].ref);
        else
            retired[kept++] = retired[i];
    }
    nretired = kept;
    pthread_mutex_unlock(&retired_lock);
}

static void release_thread_ref(uintptr_t ref, void *jni)
{
    (*(JNIEnv *)jni)->DeleteGlobalRef((JNIEnv *)jni, (jobject)ref);
}

void cpu_async_drain(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (!cpu_async_active() || !jni)
        return;
    pthread_mutex_lock(&drain_lock);
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    cpu_timers_set_depth(traces_depth() > 0 ? traces_depth() : 1);
    /* Method details and virtual threads make local references; this thread may never
     * return to Java to free them. */
    if ((*jni)->PushLocalFrame(jni, 64) == 0) {
        struct sample_ring *ring = cpu_timers_ring();
        /* At most one lap: producers keep adding while this runs. */
        for (size_t i = 0, cap = sample_ring_capacity(ring); i < cap; i++) {
            const struct timer_record *rec = sample_ring_peek(ring);
            if (!rec)
                break;
            if ((i & 63) == 63) { /* free the references made so far */
                (*jni)->PopLocalFrame(jni, NULL);
                if ((*jni)->PushLocalFrame(jni, 64) != 0) {
                    (*jni)->ExceptionClear(jni);
                    break;
                }
            }
            count_record(jvmti, jni, rec);
            sample_ring_release(ring);
        }
        struct lost_ctx ctx = {jvmti};
        cpu_timers_take_lost(count_lost, &ctx);
        (*jni)->PopLocalFrame(jni, NULL);
    } else {
        (*jni)->ExceptionClear(jni);
    }
    free_retired_refs(jni);
    cpu_timers_recycle(release_thread_ref, jni);
    st.drains++;
    st.drain_ns += (uint64_t)((int64_t)clock_thread_cpu_ns() - t0);
    pthread_mutex_unlock(&drain_lock);
}

void cpu_async_stop(void)
{
    if (cpu_async_active()) {
        cpu_timers_stop();
        late_walk_stop(); /* publishes what it holds, so the last drain sees every record */
    }
}

bool cpu_async_check_signal(void)
{
    if (!cpu_async_active())
        return false;
    if (cpu_timers_handler_intact())
        return true;
    cpu_timers_stop();
    atomic_store(&active, false);
    log_warning("cpu=samples: another handler replaced hprof's SIGPROF handler; the remaining "
                "samples are taken by the safepoint sampler");
    return false;
}

void cpu_async_log_stats(void)
{
    if (!frame_buf)
        return; /* never started */
    struct cpu_timers_stats t;
    cpu_timers_get_stats(&t);
    pthread_mutex_lock(&drain_lock);
    uint64_t unwalkable = 0;
    for (int r = 0; r < R_COUNT; r++)
        unwalkable += st.reasons[r];
    log_info("cpu=samples: async sampler (SIGPROF on per-thread CPU-time timers, "
             "AsyncGetCallTrace): %llu samples from %llu signals on %llu threads (%llu without "
             "a timer); %llu unwalkable (%.2f%%), %llu not in Java code, %llu switched off or "
             "cleared; handler %.1f us of CPU per signal, drain %.1f us per drain (%llu drains), "
             "jmethodIDs for %llu classes in %.1f ms",
             (unsigned long long)st.samples, (unsigned long long)t.signals,
             (unsigned long long)t.threads, (unsigned long long)t.failures,
             (unsigned long long)unwalkable,
             st.samples ? 100.0 * (double)unwalkable / (double)st.samples : 0.0,
             (unsigned long long)st.no_java, (unsigned long long)st.discarded,
             t.signals ? (double)t.handler_ns / (double)t.signals / 1e3 : 0.0,
             st.drains ? (double)st.drain_ns / (double)st.drains / 1e3 : 0.0,
             (unsigned long long)st.drains, (unsigned long long)atomic_load(&prepared_classes),
             (double)atomic_load(&prepare_ns) / 1e6);
    char buf[1024];
    size_t off = 0;
    for (int r = 0; r < R_COUNT && off < sizeof buf; r++)
        if (st.reasons[r])
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s %llu", off ? ", " : "",
                                    reason_names[r], (unsigned long long)st.reasons[r]);
    if (off >= sizeof buf)
        off = sizeof buf - 1;
    buf[off] = '\0';
    log_info(
        "cpu=samples: unwalkable samples by reason (pseudo-frames <unwalkable>.<reason>): "
        "%s; %llu of %llu walks that failed in Java code walked from the caller; frames without "
        "a jmethodID in %llu samples; %llu signals ignored (stale %llu, not from a timer "
        "%llu)",
        off ? buf : "none", (unsigned long long)t.recovered, (unsigned long long)t.retried,
        (unsigned long long)st.no_method_frames, (unsigned long long)(t.stale + t.foreign),
        (unsigned long long)t.stale, (unsigned long long)t.foreign);
    struct late_walk_stats lw;
    late_walk_get_stats(&lw);
    if (late_walks)
        log_info("cpu=samples: %llu samples walked late (the thread was in the VM or native code, "
                 "deoptimizing or in a collection: its stack by GetStackTrace at its next "
                 "transition), %llu records handed over, %llu not walkable then, %llu not handed "
                 "over; %.1f us from signal to walk on average, %llu%% within 100 us, %.1f ms "
                 "at most",
                 (unsigned long long)st.walked_late, (unsigned long long)lw.offered,
                 (unsigned long long)lw.failed, (unsigned long long)lw.refused,
                 lw.walked ? (double)lw.latency_ns / (double)lw.walked / 1e3 : 0.0,
                 (unsigned long long)(lw.walked ? 100 * lw.under_100us / lw.walked : 0),
                 (double)lw.max_ns / 1e6);
    if (cpu_carriers_watching())
        log_info("cpu=samples: %llu samples on virtual threads, %llu dropped (the virtual "
                 "thread was gone by the drain)",
                 (unsigned long long)st.vthread_samples, (unsigned long long)st.vthread_dropped);
    pthread_mutex_unlock(&drain_lock);
}

#include "async_sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agct_stack.h"
#include "carriers.h"
#include "clock.h"
#include "cpu_profile.h"
#include "cpu_timers.h"
#include "jvmti_util.h"
#include "late_walk.h"
#include "log.h"
#include "sample_records.h"

/* Frames a ring record holds at least: CONTROL_SET_DEPTH may deepen traces after start, up to
 * max(depth=, this). */
#define MIN_RECORD_FRAMES 64

static _Atomic(bool) active;
static bool per_thread;
static bool started;    /* set up, whether or not still active: the verbose message */
static bool late_walks; /* the late walker runs: threads get a global reference for it */

/* Weak references to virtual threads that a carrier replaced: freed once the drain has
 * consumed every record claimed before the replacement (records may name them). */
struct retired_ref {
    uint64_t pos;
    jweak ref;
};
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired_ref *retired;
static size_t nretired, retired_cap;

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

void async_sampler_add_capabilities(jvmtiCapabilities *caps)
{
    caps->can_generate_compiled_method_load_events = 1;
}

void async_sampler_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->CompiledMethodLoad = on_compiled_method_load;
    agct_stack_set_callbacks(cb); /* ClassLoad: AGCT answers only while it is on */
}

static void on_mount(JNIEnv *jni, jthread vthread);

struct hprof_error async_sampler_start(jvmtiEnv *jvmti, const struct hprof_options *opts)
{
    if (opts->sampler == HPROF_SAMPLER_SAFEPOINT)
        return hprof_ok();
    const char *why = NULL;
    if (!agct_stack_init()) {
        why = "this VM exports no AsyncGetCallTrace";
    } else if (agct_stack_enable_events(jvmti) != 0) {
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
    if (why)
        return hprof_errorf("%s", why);
    if (!cpu_profile_take_records(&async_sampler_source)) {
        cpu_timers_stop();
        return hprof_errorf("out of memory");
    }
    if (jvmti_util_failed(jvmti,
                          (*jvmti)->SetEventNotificationMode(
                              jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL),
                          "SetEventNotificationMode(CompiledMethodLoad)"))
        log_warning("cpu=samples: inlined frames will be resolved at safepoints only");
    per_thread = opts->thread;
    carriers_observe(on_mount);
    started = true;
    atomic_store(&active, true);
    return hprof_ok();
}

bool async_sampler_active(void)
{
    return atomic_load(&active);
}

void async_sampler_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (!async_sampler_active())
        return;
    /* Classes loaded before the agent (start-up classes, or everything at an attach). */
    jint n = 0;
    jclass *classes = NULL;
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            agct_stack_prepare_class(jvmti, classes[i]);
            (*jni)->DeleteLocalRef(jni, classes[i]);
        }
        jvmti_util_free(jvmti, classes);
        atomic_fetch_add(&prepared_classes, (uint64_t)n);
    }
    atomic_fetch_add(&prepare_ns, (uint64_t)((int64_t)clock_thread_cpu_ns() - t0));
    struct hprof_error e = late_walk_start(jvmti, jni);
    late_walks = !hprof_failed(&e);
    if (!late_walks)
        log_warning("cpu=samples: %s; they count as unwalkable", e.text);
}

void async_sampler_class_prepare(jvmtiEnv *jvmti, jclass klass)
{
    if (!async_sampler_active())
        return;
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    agct_stack_prepare_class(jvmti, klass);
    atomic_fetch_add(&prepare_ns, (uint64_t)((int64_t)clock_thread_cpu_ns() - t0));
    atomic_fetch_add(&prepared_classes, 1);
}

/* ---- threads ------------------------------------------------------------------------------ */

int32_t async_sampler_cover_current(JNIEnv *jni, struct thread_info *info, jthread thread,
                                    bool enabled)
{
    if (!async_sampler_active() || !info)
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
        retired[nretired++] = (struct retired_ref){sample_records_claimed(), ref};
    pthread_mutex_unlock(&retired_lock);
}

void async_sampler_uncover_current(JNIEnv *jni)
{
    (void)jni;
    if (cpu_timers_current() < 0)
        return;
    jweak last = (jweak)cpu_timers_mounted_vthread();
    cpu_timers_remove_current();
    if (last)
        retire_ref(last);
}

/* Mount and unmount of a virtual thread, on its carrier (carriers.c). With thread=y the
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
static void free_retired_refs(JNIEnv *jni)
{
    uint64_t consumed = sample_records_consumed();
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

static void after_drain(JNIEnv *jni)
{
    free_retired_refs(jni);
    cpu_timers_recycle(release_thread_ref, jni);
}

static void discard_pending(void)
{
    cpu_timers_bump_epochs();
}

const struct sample_source async_sampler_source = {
    .active = async_sampler_active,
    .record_current = cpu_timers_record_current,
    .take_lost = cpu_timers_take_lost,
    .after_drain = after_drain,
    .discard_pending = discard_pending,
};
void async_sampler_stop(void)
{
    if (async_sampler_active()) {
        cpu_timers_stop();
        late_walk_stop(); /* publishes what it holds, so the last drain sees every record */
    }
}

bool async_sampler_check_signal(void)
{
    if (!async_sampler_active())
        return false;
    if (cpu_timers_handler_intact())
        return true;
    cpu_timers_stop();
    atomic_store(&active, false);
    log_warning("cpu=samples: another handler replaced hprof's SIGPROF handler; the remaining "
                "samples are taken by the safepoint sampler");
    return false;
}

void async_sampler_log_stats(void)
{
    if (!started)
        return;
    struct cpu_timers_stats t;
    cpu_timers_get_stats(&t);
    struct cpu_profile_drain_stats st;
    cpu_profile_get_drain_stats(&st);
    uint64_t unwalkable = 0;
    for (int r = 0; r < CPU_PROFILE_REASONS; r++)
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
    for (int r = 0; r < CPU_PROFILE_REASONS && off < sizeof buf; r++)
        if (st.reasons[r])
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s %llu", off ? ", " : "",
                                    cpu_profile_reason_name(r), (unsigned long long)st.reasons[r]);
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
    if (carriers_watching())
        log_info("cpu=samples: %llu samples on virtual threads, %llu dropped (the virtual "
                 "thread was gone by the drain)",
                 (unsigned long long)st.vthread_samples, (unsigned long long)st.vthread_dropped);
}

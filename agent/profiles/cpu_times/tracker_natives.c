#include "tracker_natives.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "clock.h"
#include "env_knobs.h"
#include "jvmti_util.h"
#include "log.h"
#include "mem_account.h"
#include "rewritten_classes.h"
#include "thread_table.h"

/* ---- time -------------------------------------------------------------------------------
 * Ticks of the time-stamp counter when it is invariant (constant rate, running in every
 * C-state: rdtsc costs about 10 ns, CLOCK_MONOTONIC through the vDSO 20-60 ns on the machines
 * measured, CLOCK_THREAD_CPUTIME_ID a system call, about 1 us), else CLOCK_MONOTONIC ns.
 *
 * Elapsed time includes time the thread did not run. To come closer to thread CPU time, a gap
 * of more than GAP_NS between two events of a thread (it blocked, slept, waited or was
 * descheduled in between) makes it read its CPU clock: the part of the wall time since the
 * previous reading that was not CPU time, up to the gap itself, is taken out of the thread's
 * time (the frame on top during the gap loses it, and so do the frames below it). A thread also
 * reads its CPU clock every REFRESH_NS of events so the comparison stays recent. */
#define GAP_NS 50000u         /* 50 us */
#define REFRESH_NS 10000000u  /* 10 ms */
#define CALIBRATE_NS 5000000u /* 5 ms at start-up */

static bool use_tsc;
static double ns_per_tick = 1.0;
static uint64_t gap_ticks, refresh_ticks;
static uint64_t start_ticks, start_ns;
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (use_tsc)
        return __rdtsc();
#endif
    return clock_monotonic_ns();
}

/* Whether /proc/cpuinfo promises a TSC of constant rate that keeps running when idle. */
static bool tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (env_knobs()->cpu_clock_monotonic)
        return false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return false;
    char line[8192];
    bool ok = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    fclose(f);
    return ok;
#else
    return false;
#endif
}

static void calibrate(void)
{
    use_tsc = tsc_invariant();
    start_ticks = ticks();
    start_ns = clock_monotonic_ns();
    if (use_tsc) {
        struct timespec pause = {0, CALIBRATE_NS};
        nanosleep(&pause, NULL);
        uint64_t t = ticks(), n = clock_monotonic_ns();
        if (t > start_ticks && n > start_ns)
            ns_per_tick = (double)(n - start_ns) / (double)(t - start_ticks);
        else
            use_tsc = false;
    }
    if (!use_tsc) {
        start_ticks = ticks();
        ns_per_tick = 1.0;
    }
    gap_ticks = (uint64_t)(GAP_NS / ns_per_tick);
    refresh_ticks = (uint64_t)(REFRESH_NS / ns_per_tick);
}

/* The rate over the whole run so far, more precise than the start-up one. */
static double current_ns_per_tick(void)
{
    if (!use_tsc)
        return 1.0;
    pthread_mutex_lock(&clock_lock);
    uint64_t t = ticks(), n = clock_monotonic_ns();
    if (t > start_ticks && n - start_ns > 100 * CALIBRATE_NS)
        ns_per_tick = (double)(n - start_ns) / (double)(t - start_ticks);
    double r = ns_per_tick;
    pthread_mutex_unlock(&clock_lock);
    return r;
}

uint64_t tracker_natives_ticks_to_ns(uint64_t t)
{
    return (uint64_t)((double)t * current_ns_per_tick());
}

/* ---- per-thread state ---------------------------------------------------------------------- */

struct tracked_thread {
    struct shadow_thread *shadow;
    uint32_t thread_serial;      /* keys its traces with thread=y, else 0 */
    struct thread_info *vthread; /* a virtual thread's table entry, else NULL */
    uint64_t offset;             /* ticks taken out of this thread's time */
    uint64_t last;               /* raw ticks at its previous event */
    uint64_t read_ticks;         /* raw ticks at its last CPU clock reading; 0 = none */
    uint64_t read_cpu_ns;
    uint64_t paused_at; /* raw ticks: a virtual thread unmounted, or a carrier lent to one */
    struct tracked_thread *prev, *next;
};

static bool per_method, per_thread, per_call_lookup;
static _Atomic(bool) engaged; /* from VM init (tracker registered) to VM death */
static _Atomic(unsigned) depth_now;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracked_thread *live;   /* every thread with a state */
static struct shadow_totals *retired; /* counts of freed states, full depth */
static uint64_t nthreads;
static struct shadow_stats retired_stats;

/* The state the natives of this OS thread feed (a mounted virtual thread's, or the platform
 * thread's own), and the platform thread's own. initial-exec: one instruction to read, and
 * libhprof is loaded at start-up or by attach, when static TLS space is still there. */
static __thread struct tracked_thread *tls_current __attribute__((tls_model("initial-exec")));
static __thread struct tracked_thread *tls_own __attribute__((tls_model("initial-exec")));
/* What tls_current holds when a state could not be made: the natives do nothing. */
static struct tracked_thread untracked;

static _Atomic(uint64_t) folded; /* counters moved by the folds, for the verbose line */

static bool class_unloaded(uint32_t cnum, void *jni)
{
    return rewritten_classes_unloaded(jni, cnum);
}

/* The fold hook: the paths of unloaded classes go to the totals (shadow_fold_run). */
static void fold_unloaded(struct shadow_thread *shadow, void *ctx)
{
    struct tracked_thread *t = ctx;
    JavaVM *vm = jvmti_util_vm();
    JNIEnv *jni = NULL;
    if (!retired || !vm || (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || !jni)
        return;
    uint64_t start = ticks();
    struct shadow_fold_result r = {0};
    int rc = shadow_fold_run(shadow, retired, t->thread_serial, class_unloaded, jni,
                             SHADOW_FOLD_MIN_NODES, &r);
    /* the agent's own work: out of the thread's time, as a class rewrite is */
    uint64_t end = ticks();
    t->offset += end - start;
    t->last = end;
    atomic_fetch_add_explicit(&folded, r.rows, memory_order_relaxed);
    if (rc != 0)
        log_warning("out of memory: cpu=times could not fold the call paths of unloaded "
                    "classes (or lost part of their counts)");
}

static struct tracked_thread *create(uint32_t thread_serial)
{
    struct tracked_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->shadow = shadow_stack_thread_new(per_method, &registry_lock);
    if (!t->shadow) {
        free(t);
        return NULL;
    }
    t->thread_serial = per_thread ? thread_serial : 0;
    shadow_stack_set_fold_hook(t->shadow, fold_unloaded, t, SHADOW_FOLD_MIN_NODES);
    t->last = ticks();
    pthread_mutex_lock(&registry_lock);
    t->next = live;
    if (live)
        live->prev = t;
    live = t;
    nthreads++;
    pthread_mutex_unlock(&registry_lock);
    return t;
}

static void add_stats(struct shadow_stats *to, struct shadow_stats s)
{
    to->unmatched_exits += s.unmatched_exits;
    to->unwound += s.unwound;
    to->overflow += s.overflow;
}

/* Moves t's counts to the totals and frees it; t is no longer anyone's. */
static void retire(struct tracked_thread *t)
{

    pthread_mutex_lock(&registry_lock);
    if (retired &&
        shadow_totals_add_thread(retired, t->shadow, t->thread_serial, SHADOW_MAX_DEPTH) != 0)
        log_warning("out of memory: cpu=times lost part of an ended thread's counts");
    add_stats(&retired_stats, shadow_stack_thread_stats(t->shadow));
    if (t->prev)
        t->prev->next = t->next;
    else
        live = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&registry_lock);
    shadow_stack_thread_free(t->shadow);
    free(t);
}

/* First call of a platform thread (or any call when virtual threads cannot be followed). */
static struct tracked_thread *attach(JNIEnv *env)
{
    jvmtiEnv *jvmti = jvmti_util_env();
    jthread thread = NULL;
    if ((*jvmti)->GetCurrentThread(jvmti, &thread) != JVMTI_ERROR_NONE)
        thread = NULL;
    struct thread_info *info = thread ? thread_table_current(jvmti, env, thread) : NULL;
    if (thread)
        (*env)->DeleteLocalRef(env, thread);
    if (per_call_lookup) {
        if (!info)
            return NULL;
        struct tracked_thread *t = atomic_load_explicit(&info->cpu_times, memory_order_acquire);
        if (t)
            return t;
        /* only this thread makes its own state */
        t = create(info->serial);
        atomic_store_explicit(&info->cpu_times, t, memory_order_release);
        return t;
    }
    struct tracked_thread *t = create(info ? info->serial : 0);
    tls_own = t ? t : &untracked;
    tls_current = tls_own;
    return t;
}

static inline struct tracked_thread *current(JNIEnv *env)
{
    struct tracked_thread *t = tls_current;
    if (__builtin_expect(t != NULL, 1))
        return t == &untracked ? NULL : t;
    return attach(env);
}

/* The slow part of reading the time: a long gap, or a CPU clock reading due. */
static void __attribute__((noinline)) check_gap(struct tracked_thread *t, uint64_t now)
{
    uint64_t cpu = clock_thread_cpu_ns();
    if (cpu == 0) {
        t->read_ticks = now; /* no CPU clock: time stays elapsed time */
        return;
    }
    uint64_t gap = now - t->last;
    if (t->read_ticks && gap > gap_ticks && cpu >= t->read_cpu_ns) {
        double wall = (double)(now - t->read_ticks) * ns_per_tick;
        double ran = (double)(cpu - t->read_cpu_ns);
        if (wall > ran) {
            uint64_t idle = (uint64_t)((wall - ran) / ns_per_tick);
            t->offset += idle < gap ? idle : gap;
        }
    }
    t->read_ticks = now;
    t->read_cpu_ns = cpu;
}

static inline uint64_t event_time(struct tracked_thread *t)
{
    uint64_t now = ticks();
    if (__builtin_expect(now - t->last > gap_ticks || now - t->read_ticks > refresh_ticks, 0))
        check_gap(t, now);
    t->last = now;
    return now - t->offset;
}

static void JNICALL native_entry(JNIEnv *env, jclass cls, jint cnum, jint mnum)
{
    (void)cls;
    if (__builtin_expect(!atomic_load_explicit(&engaged, memory_order_relaxed), 0))
        return;
    struct tracked_thread *t = current(env);
    if (!t)
        return;
    shadow_stack_enter(t->shadow, SHADOW_FRAME(cnum, mnum), event_time(t),
                       atomic_load_explicit(&depth_now, memory_order_relaxed));
}

static void JNICALL native_exit(JNIEnv *env, jclass cls, jint cnum, jint mnum)
{
    (void)cls;
    if (__builtin_expect(!atomic_load_explicit(&engaged, memory_order_relaxed), 0))
        return;
    struct tracked_thread *t = current(env);
    if (!t)
        return;
    shadow_stack_exit(t->shadow, SHADOW_FRAME(cnum, mnum), event_time(t));
}

/* ---- diagnostic probes (HPROF_CPU_TIMES_PROBE) ----------------------------------------------
 * The floor of this mechanism: the same rewritten code and native calls, with natives that do
 * nothing, or that only read the clock and keep it where a real tracker would log it. */

#define CLOCK_LOG_LEN 4096 /* (frame, ticks) pairs */

static __thread uint64_t clock_log[2 * CLOCK_LOG_LEN] __attribute__((tls_model("initial-exec")));
static __thread uint32_t clock_log_next __attribute__((tls_model("initial-exec")));

static void JNICALL noop_probe(JNIEnv *env, jclass cls, jint cnum, jint mnum)
{
    (void)env, (void)cls, (void)cnum, (void)mnum;
}

static void JNICALL clock_probe(JNIEnv *env, jclass cls, jint cnum, jint mnum)
{
    (void)env, (void)cls;
    uint32_t i = clock_log_next;
    clock_log[2 * i] = SHADOW_FRAME(cnum, mnum);
    clock_log[2 * i + 1] = ticks();
    clock_log_next = (i + 1) % CLOCK_LOG_LEN;
}

struct hprof_error tracker_natives_probe_from_env(int *probe)
{
    static const char *const names[] = {
        [TRACKER_PROBE_NOOP] = "noop",
        [TRACKER_PROBE_CLOCK] = "clock",
        [TRACKER_PROBE_JAVA_EMPTY] = "java-empty",
        [TRACKER_PROBE_JAVA_CLOCK] = "java-clock",
        [TRACKER_PROBE_JAVA_STORE] = "java-store",
        [TRACKER_PROBE_JAVA_BUFFER] = "java-buffer",
    };
    const char *v = env_knobs()->cpu_times_probe;
    *probe = TRACKER_PROBE_COUNT;
    if (!v)
        return hprof_ok();
    for (int p = TRACKER_PROBE_NOOP; p <= TRACKER_PROBE_JAVA_BUFFER; p++)
        if (strcmp(v, names[p]) == 0) {
            log_warning("cpu=times: diagnostic probe HPROF_CPU_TIMES_PROBE=%s: nothing is counted",
                        v);
            *probe = p;
            return hprof_ok();
        }
    return hprof_errorf("HPROF_CPU_TIMES_PROBE=%s: unknown probe (allowed: noop, clock, "
                        "java-empty, java-clock, java-store, java-buffer; unset to count)",
                        v);
}

/* ---- virtual threads ----------------------------------------------------------------------
 * On the carrier, at mount (the virtual thread is current): the carrier's own frames stop
 * running until the unmount, the virtual thread's resume. */

/* Extension events are called as jvmtiExtensionEvent, (jvmtiEnv *, ...): here with the
 * JNIEnv * and the virtual thread. */
static void JNICALL on_mount(jvmtiEnv *jvmti, ...)
{
    uint64_t now = ticks();
    va_list ap;
    va_start(ap, jvmti);
    JNIEnv *jni = va_arg(ap, JNIEnv *);
    jthread vthread = va_arg(ap, jthread);
    va_end(ap);
    struct tracked_thread *carrier = tls_own;
    if (carrier && carrier != &untracked)
        carrier->paused_at = now;
    struct thread_info *info = thread_table_of(jvmti, jni, vthread);
    struct tracked_thread *v = NULL;
    if (info) {
        v = atomic_load_explicit(&info->cpu_times, memory_order_acquire);
        if (!v) {
            v = create(info->serial);
            if (v) {
                v->vthread = info;
                atomic_store_explicit(&info->cpu_times, v, memory_order_release);
            }
        }
    }
    if (v) {
        if (v->paused_at) /* parked: not running, like a blocked platform thread */
            v->offset += now - v->paused_at;
        v->paused_at = 0;
        v->last = now;
        v->read_ticks = 0; /* the CPU clock is the new carrier's */
    }
    tls_current = v ? v : &untracked;
}

static void JNICALL on_unmount(jvmtiEnv *jvmti, ...)
{
    (void)jvmti;
    uint64_t now = ticks();
    struct tracked_thread *v = tls_current;
    if (v && v != &untracked && v != tls_own && v->vthread) {
        if (shadow_stack_height(v->shadow) == 0) {
            /* nothing open: its counts can go to the totals now (a virtual thread's last
             * unmount is always such a one, so ended virtual threads cost no memory) */
            atomic_store_explicit(&v->vthread->cpu_times, NULL, memory_order_release);
            retire(v);
        } else {
            v->paused_at = now;
        }
    }
    struct tracked_thread *carrier = tls_own;
    if (carrier && carrier != &untracked && carrier->paused_at) {
        carrier->offset += now - carrier->paused_at;
        carrier->paused_at = 0;
        carrier->last = now;
        carrier->read_ticks = 0;
    }
    tls_current = carrier;
}

void tracker_natives_watch_virtual_threads(jvmtiEnv *jvmti, bool vm_has_virtual_threads)
{
    if (!vm_has_virtual_threads)
        return;
    if (jvmti_util_watch_mounts(jvmti, on_mount, on_unmount))
        return;
    per_call_lookup = true;
    log_warning("cpu=times: this VM has no virtual-thread mount events; every tracked call "
                "looks its thread up through JVMTI (slower)");
}

/* ---- life cycle and reports ---------------------------------------------------------------- */

/* verbose=y's memory report: the call-path nodes of every live thread and the totals of the
 * ended ones. */
static void tracker_natives_measure(struct mem_use *u)
{
    pthread_mutex_lock(&registry_lock);
    u->entries = 0;
    u->bytes = retired ? shadow_totals_bytes(retired) : 0;
    for (struct tracked_thread *t = live; t; t = t->next) {
        u->entries += shadow_stack_node_count(t->shadow);
        u->bytes += shadow_stack_thread_bytes(t->shadow);
    }
    pthread_mutex_unlock(&registry_lock);
}

int tracker_natives_init(bool method_totals, bool thread_traces, int depth)
{
    mem_account_register("call paths", tracker_natives_measure);
    per_method = method_totals;
    per_thread = thread_traces;
    tracker_natives_set_depth(depth);
    calibrate();
    retired = shadow_totals_new();
    return retired ? 0 : -1;
}

void tracker_natives_set_depth(int depth)
{
    atomic_store_explicit(&depth_now, depth > 0 ? (unsigned)depth : 1u, memory_order_relaxed);
}

struct hprof_error tracker_natives_register(JNIEnv *jni, jclass tracker, enum tracker_probe probe)
{
    JNINativeMethod natives[] = {
        {"methodEntry", "(II)V", (void *)native_entry},
        {"methodExit", "(II)V", (void *)native_exit},
    };
    if (probe == TRACKER_PROBE_NOOP || probe == TRACKER_PROBE_CLOCK)
        natives[0].fnPtr = natives[1].fnPtr =
            probe == TRACKER_PROBE_NOOP ? (void *)noop_probe : (void *)clock_probe;
    if (probe == TRACKER_PROBE_COUNT || probe == TRACKER_PROBE_NOOP ||
        probe == TRACKER_PROBE_CLOCK) {
        if ((*jni)->RegisterNatives(jni, tracker, natives, 2) != 0) {
            (*jni)->ExceptionClear(jni);
            return hprof_errorf("RegisterNatives on the tracker class failed");
        }
    }
    atomic_store(&engaged, true);
    return hprof_ok();
}

void tracker_natives_disengage(void)
{
    atomic_store(&engaged, false);
}

uint64_t tracker_natives_pause(void)
{
    return ticks();
}

void tracker_natives_resume(uint64_t paused)
{
    struct tracked_thread *t = tls_current;
    if (!t || t == &untracked)
        return;
    uint64_t now = ticks();
    t->offset += now - paused;
    t->last = now;
}

void tracker_natives_thread_end(void)
{
    struct tracked_thread *t = tls_own;
    tls_own = tls_current = NULL;
    if (t && t != &untracked)
        retire(t);
}

struct shadow_totals *tracker_natives_collect(unsigned depth)
{
    struct shadow_totals *s = shadow_totals_new();
    if (!s)
        return NULL;
    int rc = 0;
    pthread_mutex_lock(&registry_lock);
    if (retired)
        rc |= shadow_totals_add_totals(s, retired, depth);
    for (struct tracked_thread *t = live; t; t = t->next)
        rc |= shadow_totals_add_thread(s, t->shadow, t->thread_serial, depth);
    pthread_mutex_unlock(&registry_lock);
    if (rc)
        log_warning("out of memory: this CPU TIME report leaves part of the counts out");
    return s;
}

struct tracker_natives_stats tracker_natives_stats(void)
{
    struct tracker_natives_stats r = {.tsc = use_tsc, .per_call_lookup = per_call_lookup};
    pthread_mutex_lock(&registry_lock);
    struct shadow_stats s = retired_stats;
    for (struct tracked_thread *t = live; t; t = t->next)
        add_stats(&s, shadow_stack_thread_stats(t->shadow));
    r.threads = nthreads;
    pthread_mutex_unlock(&registry_lock);
    r.unmatched_exits = s.unmatched_exits;
    r.unwound = s.unwound;
    r.overflow = s.overflow;
    r.folded = atomic_load_explicit(&folded, memory_order_relaxed);
    return r;
}

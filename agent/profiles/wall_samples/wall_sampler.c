/* wall=y's sampler thread and counts (wall_sampler.h). */
#include "wall_sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "clock.h"
#include "frame_table.h"
#include "jvmti_util.h"
#include "log.h"
#include "sample_counts.h"
#include "trace_table.h"
#include "wall_signals.h"
#include "wall_threads.h"

#define STOP_WAIT_NS INT64_C(5000000000)

static uint64_t interval_ns, t0_ns;
static unsigned kept_states;
static bool per_thread;
static _Atomic(bool) sampling_on = true;

/* The pseudo-frames' method ids: addresses no real jmethodID can have. */
static char pseudo_ids[HPROF_WALL_NSTATES];
static bool pseudo_ready;

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sample_counts *counts;
static struct wall_sampler_stats stats; /* under count_lock */

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t life_cond;
static bool running, stopping;

/* The sampler thread's own: one tick's walk batch. */
static size_t cursor;
static int last_depth = -1;
static jthread batch_refs[WALL_SAMPLER_BATCH];
static struct wall_thread *batch_slots[WALL_SAMPLER_BATCH];
static struct wall_visit batch_visits[WALL_SAMPLER_BATCH];
static int32_t batch_signalled[WALL_SAMPLER_BATCH]; /* the signal slot asked, or -1 */
static jvmtiFrameInfo *frame_buf;                   /* 1 + HPROF_DEPTH_MAX */

bool wall_sampler_init(int interval_ms, unsigned states, bool thread)
{
    interval_ns = (uint64_t)(interval_ms > 0 ? interval_ms : 1) * 1000000u;
    kept_states = states;
    per_thread = thread;
    t0_ns = clock_monotonic_ns();
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&life_cond, &a);
    pthread_condattr_destroy(&a);
    counts = sample_counts_new();
    frame_buf = malloc((1 + HPROF_DEPTH_MAX) * sizeof *frame_buf);
    return counts && frame_buf;
}

void wall_sampler_prepare(void)
{
    uint32_t cls = class_table_register_synthetic("<wall>");
    bool ok = cls != 0;
    for (unsigned s = 0; ok && s < HPROF_WALL_NSTATES; s++)
        ok = frame_table_register_synthetic((jmethodID)(void *)&pseudo_ids[s], cls,
                                            options_wall_state_name(s));
    pseudo_ready = ok;
}

int64_t wall_sampler_tick_now(uint64_t *now_ns)
{
    uint64_t now = clock_monotonic_ns();
    if (now_ns)
        *now_ns = now;
    return wall_state_tick(t0_ns, now, interval_ns);
}

/* The trace of t's last frames under the pseudo-frame of state. */
static uint32_t trace_of(jvmtiEnv *jvmti, const struct wall_thread *t, enum hprof_wall_state state)
{
    if (!pseudo_ready)
        return HPROF_TRACE_SERIAL_NONE;
    frame_buf[0].method = (jmethodID)(void *)&pseudo_ids[state];
    frame_buf[0].location = 0;
    int n = t->seen.have_stack ? t->nframes : 0;
    if (n > 0)
        memcpy(frame_buf + 1, t->frames, (size_t)n * sizeof *frame_buf);
    return trace_table_intern(jvmti, frame_buf, 1 + n, per_thread ? t->info->serial : 0);
}

static void count(uint32_t trace, uint64_t weight)
{
    if (!weight || !trace)
        return;
    pthread_mutex_lock(&count_lock);
    if (sample_counts_add(counts, trace, weight) == 0)
        stats.samples += weight;
    pthread_mutex_unlock(&count_lock);
}

/* Counts weight samples of t in state, on its current frames. A visit that stands for several
 * ticks (a batch round, or ticks the sampler missed) and finds another trace than the last
 * one splits them at the midpoint (wall_state_split): the change happened somewhere in
 * between, and crediting the whole gap to the new trace would favour whatever the thread does
 * when the sampler gets the CPU back. */
static void credit(jvmtiEnv *jvmti, struct wall_thread *t, enum hprof_wall_state state,
                   uint64_t weight, bool fresh_stack)
{
    uint32_t before = t->trace;
    if (fresh_stack || !t->trace || t->state != state) {
        t->trace = trace_of(jvmti, t, state);
        t->state = state;
    }
    uint64_t old_share = wall_state_split(weight, before != 0 && before != t->trace);
    count(before, old_share);
    count(t->trace, weight - old_share);
}

/* Whether t's walked stack is that of an unmounted virtual thread: on top, the continuation's
 * yield0, where it left its carrier. Its id is learnt from the first stack that has it. */
static bool unmounted_top(jvmtiEnv *jvmti, const struct wall_thread *t)
{
    static jmethodID yield0;
    jmethodID top = t->frames[0].method;
    if (yield0)
        return top == yield0;
    char *name = NULL;
    if ((*jvmti)->GetMethodName(jvmti, top, &name, NULL, NULL) != JVMTI_ERROR_NONE || !name)
        return false;
    bool is = strcmp(name, "yield0") == 0;
    jvmti_util_free(jvmti, name);
    if (is)
        yield0 = top;
    return is;
}

/* Whether a thread in this JVMTI state is asked for its stack by signal (wall_signals.h): one
 * in Java code or the VM. GetStackTrace of such a thread is a handshake the sampler waits for
 * until the thread reaches a safepoint poll; a thread in native code or waiting is walked by
 * the sampler at once (it is at a safepoint), and a signal could cut short a system call that
 * does not restart. */
static bool signal_wanted(const struct wall_thread *t, int32_t jvmti_state)
{
    /* A thread with no Java frame (the VM's Notification Thread, or one not yet in run()) is
     * RUNNABLE in the VM, perhaps blocked there: AGCT cannot walk it, and the signal that
     * wakes it makes its CPU time move, so it would be signalled again at every tick.
     * GetStackTrace sees it as it is (at once when it is blocked), and once that finds Java
     * frames it is signalled again. */
    return t->sig_slot >= 0 && !t->frameless && (jvmti_state & JVMTI_THREAD_STATE_RUNNABLE) &&
           !(jvmti_state & JVMTI_THREAD_STATE_IN_NATIVE);
}

/* How long a tick waits for the threads it signalled. A thread waiting for a CPU answers when
 * it gets one, and sleeping meanwhile costs nothing, whereas GetStackTrace would spin as long
 * (a handshake waits for the thread to run too): only past this is it walked that way. */
static uint64_t signal_wait_ns(void)
{
    uint64_t floor = 1000000000u; /* 1 s */
    return interval_ns > floor ? interval_ns : floor;
}

/* The threads in Java code are signalled first, all together, and walk themselves
 * (wall_signals.h); the others get one GetStackTrace each, as does any thread whose signal
 * brought no stack. Not one GetThreadListStackTraces for all of them: that is a safepoint of
 * the whole VM (every thread stops until the last one, perhaps descheduled, reaches a poll),
 * a single GetStackTrace a handshake with that thread alone. */
static void walk_batch(jvmtiEnv *jvmti, size_t m, int depth)
{
    size_t asked = 0;
    wall_signals_begin();
    for (size_t i = 0; i < m; i++) {
        struct wall_thread *t = batch_slots[i];
        batch_signalled[i] = -1;
        if (!wall_threads_reserve(t, depth > 0 ? depth : 1)) {
            batch_slots[i] = NULL;
            continue;
        }
        if (signal_wanted(t, t->seen.jvmti_state) &&
            wall_signals_request(t->sig_slot, t->frames, depth)) {
            batch_signalled[i] = t->sig_slot;
            asked++;
        }
    }
    if (asked)
        wall_signals_wait(clock_monotonic_ns() + signal_wait_ns());
    for (size_t i = 0; i < m; i++) {
        struct wall_thread *t = batch_slots[i];
        if (!t)
            continue;
        uint64_t cpu_after = 0;
        jint n =
            batch_signalled[i] >= 0 ? wall_signals_collect(batch_signalled[i], &cpu_after) : -1;
        /* Its CPU time as it answered: the handler's own CPU must not make the next visit
         * believe it ran and signal it again (a thread blocked in the VM, which no JVMTI state
         * tells from one running there, would then be signalled at every tick). */
        if (cpu_after > t->seen.cpu_ns)
            t->seen.cpu_ns = cpu_after;
        if (n < 0 && (*jvmti)->GetStackTrace(jvmti, batch_refs[i], 0, depth, t->frames, &n) !=
                         JVMTI_ERROR_NONE)
            continue; /* ended meanwhile: its ThreadEnd credits it */
        t->nframes = n;
        t->frameless = n == 0;
        t->seen.have_stack = true;
        enum hprof_wall_state state = batch_visits[i].state;
        if (t->is_virtual && state == HPROF_WALL_RUNNING && n > 0 && unmounted_top(jvmti, t))
            state = HPROF_WALL_RUNNABLE; /* woken, queued for a carrier */
        credit(jvmti, t, state, batch_visits[i].weight, true);
    }
}

static void left_out(uint64_t weight)
{
    pthread_mutex_lock(&count_lock);
    stats.left_out += weight;
    pthread_mutex_unlock(&count_lock);
}

/* One tick, the thread list locked. Returns the visits made. */
static size_t tick(jvmtiEnv *jvmti, int64_t now_tick, uint64_t now)
{
    int depth = trace_table_depth();
    size_t n = wall_threads_count(), visits = 0, m = 0;
    bool on = atomic_load(&sampling_on);
    if (depth != last_depth) /* a CONTROL changed the depth: the kept frames no longer fit */
        for (size_t i = 0; i < n; i++)
            wall_threads_at(i)->seen.have_stack = false;
    last_depth = depth;
    size_t todo = n < WALL_SAMPLER_BATCH ? n : WALL_SAMPLER_BATCH;
    for (size_t k = 0; k < todo; k++) {
        if (cursor >= n)
            cursor = 0;
        struct wall_thread *t = wall_threads_at(cursor++);
        if (!on || !t->on) { /* the time switched off is no sample */
            t->seen.tick = now_tick;
            continue;
        }
        jint st = 0;
        jlong cpu = 0;
        if ((*jvmti)->GetThreadState(jvmti, t->ref, &st) != JVMTI_ERROR_NONE ||
            !(st & JVMTI_THREAD_STATE_ALIVE))
            continue; /* not started yet, or ending: its ThreadEnd credits it */
        struct wall_visit v;
        if (t->is_virtual) { /* no CPU clock: its state says whether it may have run */
            wall_state_visit_virtual(&t->seen, st, now, now_tick, &v);
        } else {
            if ((*jvmti)->GetThreadCpuTime(jvmti, t->ref, &cpu) != JVMTI_ERROR_NONE)
                cpu = (jlong)t->seen.cpu_ns + 1; /* unknown: take a new stack */
            wall_state_visit(&t->seen, st, (uint64_t)cpu, now, now_tick, &v);
        }
        visits++;
        if (!(kept_states & (1u << v.state))) {
            left_out(v.weight);
            continue;
        }
        if (v.walk) {
            t->seen.have_stack = false; /* until the walk brings frames */
            batch_refs[m] = t->ref;
            batch_slots[m] = t;
            batch_visits[m++] = v;
        } else {
            credit(jvmti, t, v.state, v.weight, false);
        }
    }
    walk_batch(jvmti, m, depth);
    pthread_mutex_lock(&count_lock);
    stats.visits += visits;
    stats.walks += m;
    pthread_mutex_unlock(&count_lock);
    return visits;
}

static bool wait_until(uint64_t deadline)
{
    struct timespec ts = clock_timespec_of((int64_t)deadline);
    pthread_mutex_lock(&life_lock);
    while (!stopping && pthread_cond_timedwait(&life_cond, &life_lock, &ts) == 0)
        ;
    bool stop = stopping;
    pthread_mutex_unlock(&life_lock);
    return !stop;
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jni, (void)arg;
    uint64_t first = 0;
    int64_t next_tick = wall_sampler_tick_now(NULL) + 1;
    while (wait_until(t0_ns + (uint64_t)next_tick * interval_ns)) {
        uint64_t now;
        int64_t now_tick = wall_sampler_tick_now(&now);
        uint64_t cpu0 = clock_thread_cpu_ns();
        wall_threads_lock();
        tick(jvmti, now_tick, now);
        wall_threads_unlock();
        uint64_t end = clock_monotonic_ns();
        pthread_mutex_lock(&count_lock);
        stats.ticks++;
        stats.cpu_ns += clock_thread_cpu_ns() - cpu0;
        stats.busy_ns += end - now;
        if (end - now > stats.max_tick_ns)
            stats.max_tick_ns = end - now;
        if (!first)
            first = now;
        stats.running_ns = end - first;
        /* Ticks the last one overran are skipped; the next visit's weight covers them. */
        int64_t after = wall_state_tick(t0_ns, end, interval_ns) + 1;
        if (after > now_tick + 1)
            stats.missed += (uint64_t)(after - now_tick - 1);
        pthread_mutex_unlock(&count_lock);
        next_tick = after;
    }
    pthread_mutex_lock(&life_lock);
    running = false;
    pthread_cond_broadcast(&life_cond);
    pthread_mutex_unlock(&life_lock);
}

bool wall_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
    pthread_mutex_lock(&life_lock);
    running = true;
    pthread_mutex_unlock(&life_lock);
    if (jvmti_util_start_agent_thread(jvmti, jni, "HPROF wall sampler", sampler_main, NULL,
                                      JVMTI_THREAD_MAX_PRIORITY))
        return true;
    pthread_mutex_lock(&life_lock);
    running = false;
    pthread_mutex_unlock(&life_lock);
    return false;
}

void wall_sampler_stop(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jni;
    pthread_mutex_lock(&life_lock);
    stopping = true;
    pthread_cond_broadcast(&life_cond);
    struct timespec until = clock_timespec_of((int64_t)(clock_monotonic_ns() + STOP_WAIT_NS));
    while (running)
        if (pthread_cond_timedwait(&life_cond, &life_lock, &until) != 0)
            break;
    bool stuck = running;
    pthread_mutex_unlock(&life_lock);
    if (stuck) {
        log_warning("wall=y: the sampler thread did not stop within 5 s");
        return;
    }
    /* The time since each thread's last visit, on its last stack: the exit dump is whole. */
    int64_t now_tick = wall_sampler_tick_now(NULL);
    bool on = atomic_load(&sampling_on);
    wall_threads_lock();
    for (size_t i = 0; i < wall_threads_count(); i++) {
        struct wall_thread *t = wall_threads_at(i);
        if (on && t->on && t->trace && now_tick > t->seen.tick)
            credit(jvmti, t, t->state, (uint64_t)(now_tick - t->seen.tick), false);
        t->seen.tick = now_tick;
    }
    wall_threads_unlock();
}

struct end_ctx {
    jvmtiEnv *jvmti;
    int64_t tick;
    uint64_t now;
};

static void credit_end(struct wall_thread *t, void *arg)
{
    struct end_ctx *c = arg;
    if (!atomic_load(&sampling_on) || !t->on || c->tick <= t->seen.tick)
        return;
    uint64_t weight = (uint64_t)(c->tick - t->seen.tick);
    if (!t->trace) { /* never visited (a short life): its stack now, on the CPU */
        jint n = 0;
        int depth = trace_table_depth();
        if (wall_threads_reserve(t, depth > 0 ? depth : 1) &&
            (*c->jvmti)->GetStackTrace(c->jvmti, NULL, 0, depth, t->frames, &n) ==
                JVMTI_ERROR_NONE) {
            t->nframes = n;
            t->seen.have_stack = true;
        }
        t->state = HPROF_WALL_RUNNING;
    }
    if (kept_states & (1u << t->state))
        credit(c->jvmti, t, t->state, weight, false);
    else
        left_out(weight);
}

void wall_sampler_thread_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct thread_info *info = thread_table_current(jvmti, jni, thread);
    if (!info)
        return;
    struct end_ctx c = {jvmti, 0, 0};
    c.tick = wall_sampler_tick_now(&c.now);
    wall_threads_end(jni, info, credit_end, &c);
}

void wall_sampler_set_on(bool on)
{
    atomic_store(&sampling_on, on);
}

bool wall_sampler_on(void)
{
    return atomic_load(&sampling_on);
}

void wall_sampler_clear(void)
{
    pthread_mutex_lock(&count_lock);
    sample_counts_clear(counts);
    stats.samples = stats.left_out = 0;
    pthread_mutex_unlock(&count_lock);
}

size_t wall_sampler_snapshot(struct hprof_cost_row **rows, uint64_t *total)
{
    pthread_mutex_lock(&count_lock);
    size_t n = sample_counts_traces(counts);
    *rows = n ? malloc(n * sizeof **rows) : NULL;
    n = *rows ? sample_counts_rows(counts, *rows, n) : 0;
    *total = sample_counts_total(counts);
    pthread_mutex_unlock(&count_lock);
    return n;
}

void wall_sampler_get_stats(struct wall_sampler_stats *out)
{
    pthread_mutex_lock(&count_lock);
    *out = stats;
    pthread_mutex_unlock(&count_lock);
}

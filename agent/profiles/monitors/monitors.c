/* monitor=y. Mechanism (doc/monitors.md):
 *  - MonitorContendedEnter: the thread found the monitor owned and is about to block. Note
 *    the time, the monitor's class and the thread's stack, in state kept per Java thread
 *    (keyed by the thread's serial, found through JVMTI thread-local storage, which a virtual
 *    thread keeps when it moves to another carrier).
 *  - MonitorContendedEntered: it owns the monitor now; add the blocked time to the row of
 *    (class, trace). The stack is taken at Enter, while the thread waits anyway, not here,
 *    where the cost would lengthen the time the monitor is held.
 *  - MonitorWait / MonitorWaited: WAIT and WAITED lines as they happen.
 *  - At a dump: MONITOR TIME from the rows, and MONITOR DUMP from GetAllThreads,
 *    GetThreadState, GetStackTrace, GetOwnedMonitorInfo, GetCurrentContendedMonitor and
 *    GetObjectMonitorUsage. */
#include "monitors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "class_table.h"
#include "clock.h"
#include "jvmti_util.h"
#include "log.h"
#include "mem_account.h"
#include "contention.h"
#include "emit.h"
#include "output.h"
#include "segarray.h"
#include "thread_table.h"
#include "trace_table.h"

/* What one Java thread is doing with monitors; touched only by that thread's own events
 * (and a virtual thread's events are ordered across carriers by its mount and unmount). */
struct monitor_thread {
    uint64_t enter_ns;    /* contended enter began; 0 = none pending */
    uint32_t enter_class; /* class serial of the contended monitor */
    uint32_t enter_trace; /* stack at the contended enter */
    uint64_t wait_ns;     /* Object.wait began; 0 = none pending */
};

static struct contention_table *contention;
static bool per_thread_traces; /* thread=y */
static bool find_monitors;     /* owned and contended monitor info are available */

static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;
static struct segarray states; /* struct monitor_thread, index = thread serial - 1 */

/* Most frames a trace in an event callback reads from its own stack buffer. */
#define STACK_FRAMES_ON_STACK 64
/* Most distinct monitors one MONITOR DUMP lists (they are compared pairwise). */
#define DUMP_MAX_MONITORS 4096

static struct monitor_thread *state_of(uint32_t serial)
{
    if (serial == 0)
        return NULL;
    if (serial <= segarray_count(&states))
        return segarray_at(&states, serial - 1);
    struct monitor_thread *s = NULL;
    pthread_mutex_lock(&states_lock);
    while (segarray_count(&states) < serial)
        if (segarray_append(&states) == UINT32_MAX)
            break;
    if (serial <= segarray_count(&states))
        s = segarray_at(&states, serial - 1);
    pthread_mutex_unlock(&states_lock);
    return s;
}

/* The trace serial of thread's stack now (thread NULL = the current thread). */
static uint32_t trace_of(jvmtiEnv *jvmti, jthread thread, uint32_t thread_serial)
{
    jvmtiFrameInfo small[STACK_FRAMES_ON_STACK];
    int depth = trace_table_depth();
    if (depth <= 0)
        return HPROF_TRACE_SERIAL_NONE;
    jvmtiFrameInfo *frames =
        depth <= STACK_FRAMES_ON_STACK ? small : malloc(sizeof *frames * (size_t)depth);
    if (!frames)
        return HPROF_TRACE_SERIAL_NONE;
    jint n = 0;
    uint32_t serial = HPROF_TRACE_SERIAL_NONE;
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, depth, frames, &n) == JVMTI_ERROR_NONE)
        serial = trace_table_intern(jvmti, frames, n, per_thread_traces ? thread_serial : 0);
    if (frames != small)
        free(frames);
    return serial;
}

/* The class serial of object's class (0 if it cannot be read). */
static uint32_t class_of(jvmtiEnv *jvmti, JNIEnv *jni, jobject object)
{
    if (!jni || !object)
        return 0;
    jclass klass = (*jni)->GetObjectClass(jni, object);
    uint32_t serial = class_table_serial_of(jvmti, klass);
    if (klass)
        (*jni)->DeleteLocalRef(jni, klass);
    return serial;
}

static const char *signature_of(uint32_t class_serial)
{
    const struct class_info *c = class_table_get(class_serial);
    return c ? c->signature : NULL;
}

/* ---- events ------------------------------------------------------------------------- */

static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    uint64_t start = clock_monotonic_ns();
    struct thread_info *t = thread_table_current(jvmti, jni, thread);
    struct monitor_thread *s = t ? state_of(t->serial) : NULL;
    if (!s)
        return;
    s->enter_class = class_of(jvmti, jni, object);
    s->enter_trace = trace_of(jvmti, NULL, t->serial);
    s->enter_ns = start;
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jobject object)
{
    (void)object;
    uint64_t end = clock_monotonic_ns();
    struct thread_info *t = thread_table_current(jvmti, jni, thread);
    struct monitor_thread *s = t ? state_of(t->serial) : NULL;
    if (!s || s->enter_ns == 0) /* e.g. attached while it was blocked */
        return;
    uint64_t blocked = end > s->enter_ns ? end - s->enter_ns : 0;
    s->enter_ns = 0;
    if (s->enter_class && contention_add(contention, s->enter_class, s->enter_trace, blocked))
        log_warning("out of memory: a contended monitor entry is not counted");
}

/* MONITOR WAIT and MONITOR WAITED lines, written as the events come. */
struct wait_line {
    const char *sig;
    int64_t ms; /* the timeout, or the time waited */
    uint32_t thread_serial;
};

static void write_wait(struct hprof_writer *w, void *ctx)
{
    const struct wait_line *l = ctx;
    w->ops->monitor_wait(w, l->sig, l->ms, l->thread_serial);
}

static void write_waited(struct hprof_writer *w, void *ctx)
{
    const struct wait_line *l = ctx;
    w->ops->monitor_waited(w, l->sig, l->ms, l->thread_serial);
}

static void JNICALL on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                            jlong timeout)
{
    struct thread_info *t = thread_table_current(jvmti, jni, thread);
    struct monitor_thread *s = t ? state_of(t->serial) : NULL;
    if (!s)
        return;
    struct wait_line line = {signature_of(class_of(jvmti, jni, object)), (int64_t)timeout,
                             t->serial};
    emit_section(&(struct emit_refs){1, 0, NULL, NULL, &line.thread_serial}, write_wait, &line);
    s->wait_ns = clock_monotonic_ns(); /* after writing: the line is not part of the wait */
}

static void JNICALL on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
                              jboolean timed_out)
{
    (void)timed_out;
    uint64_t end = clock_monotonic_ns();
    struct thread_info *t = thread_table_current(jvmti, jni, thread);
    struct monitor_thread *s = t ? state_of(t->serial) : NULL;
    if (!s || s->wait_ns == 0)
        return;
    uint64_t waited = end > s->wait_ns ? end - s->wait_ns : 0;
    s->wait_ns = 0;
    struct wait_line line = {signature_of(class_of(jvmti, jni, object)),
                             (int64_t)monitor_ns_to_ms(waited), t->serial};
    emit_section(&(struct emit_refs){1, 0, NULL, NULL, &line.thread_serial}, write_waited, &line);
}

/* ---- MONITOR TIME ------------------------------------------------------------------- */

static void write_monitor_time_rows(struct hprof_writer *w, void *report)
{
    w->ops->monitor_time(w, report);
}

static void write_monitor_time(const struct dump_request *req)
{
    struct contention_row *rows = NULL;
    uint64_t total_ns = 0;
    size_t n = contention_snapshot(contention, &rows, &total_ns);
    struct hprof_cost_row *cost = n ? calloc(n, sizeof *cost) : NULL;
    if (n && !cost) {
        log_warning("out of memory: MONITOR TIME is left out of this dump");
        free(rows);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct class_info *c = class_table_get(rows[i].class_serial);
        cost[i].trace_serial = rows[i].trace_serial;
        cost[i].count = rows[i].count;
        cost[i].cost = rows[i].ns;
        cost[i].method = c ? c->name : NULL;
    }
    uint64_t total_ms = 0;
    size_t keep = contention_time_rows(cost, n, total_ns, req->cutoff, &total_ms);
    struct emit_refs refs = {keep, sizeof *cost, keep ? &cost->trace_serial : NULL, NULL, NULL};
    struct hprof_cost_report report = {.total = total_ms, .nrows = keep, .rows = cost};
    emit_section(&refs, write_monitor_time_rows, &report);
    free(cost);
    free(rows);
}

/* ---- MONITOR DUMP ------------------------------------------------------------------- */

/* One dump's snapshot, gathered (JVMTI calls, thread lookups) before the output lock is taken
 * for the dump itself. */
struct dump_state {
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    struct hprof_monitor_thread *threads;
    size_t nthreads, cap_threads;
    jobject *objects; /* distinct monitors, local references */
    size_t nobjects, cap_objects;
    struct hprof_monitor_info *monitors; /* one per object */
    uint32_t *serials;                   /* waiter lists of every monitor */
    size_t nserials, cap_serials;
    bool oom;
};

static bool grow(void **p, size_t *cap, size_t need, size_t elem, bool *oom)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) {
        *oom = true;
        return false;
    }
    *p = q;
    *cap = n;
    return true;
}

static bool listed(const struct dump_state *d, uint32_t serial)
{
    for (size_t i = 0; i < d->nthreads; i++)
        if (d->threads[i].thread_serial == serial)
            return true;
    return false;
}

/* Adds thread (once) to the THREAD lines with its state and stack; returns its serial. */
static uint32_t add_thread(struct dump_state *d, jthread thread)
{
    struct thread_info *t = thread_table_of(d->jvmti, d->jni, thread);
    if (!t)
        return 0;
    if (listed(d, t->serial))
        return t->serial;
    if (!grow((void **)&d->threads, &d->cap_threads, d->nthreads + 1, sizeof *d->threads, &d->oom))
        return t->serial;
    jint state = 0;
    if ((*d->jvmti)->GetThreadState(d->jvmti, thread, &state) != JVMTI_ERROR_NONE)
        state = JVMTI_THREAD_STATE_TERMINATED;
    struct hprof_monitor_thread *row = &d->threads[d->nthreads++];
    row->thread_serial = t->serial;
    row->status = contention_thread_status(state);
    row->trace_serial = (state & JVMTI_THREAD_STATE_ALIVE) ? trace_of(d->jvmti, thread, t->serial)
                                                           : HPROF_TRACE_SERIAL_NONE;
    return t->serial;
}

static void add_monitor(struct dump_state *d, jobject object)
{
    if (!object)
        return;
    for (size_t i = 0; i < d->nobjects; i++)
        if ((*d->jni)->IsSameObject(d->jni, d->objects[i], object))
            return;
    if (d->nobjects >= DUMP_MAX_MONITORS)
        return;
    if (grow((void **)&d->objects, &d->cap_objects, d->nobjects + 1, sizeof *d->objects, &d->oom))
        d->objects[d->nobjects++] = object;
}

/* Appends the serials of list[0..n) to d->serials, leaving out threads also in except[]. */
static size_t add_serials(struct dump_state *d, const jthread *list, jint n, const jthread *except,
                          jint nexcept)
{
    size_t added = 0;
    for (jint i = 0; i < n; i++) {
        bool skip = false;
        for (jint k = 0; k < nexcept && !skip; k++)
            skip = (*d->jni)->IsSameObject(d->jni, list[i], except[k]);
        if (skip)
            continue;
        uint32_t serial = add_thread(d, list[i]);
        if (serial && grow((void **)&d->serials, &d->cap_serials, d->nserials + 1,
                           sizeof *d->serials, &d->oom)) {
            d->serials[d->nserials++] = serial;
            added++;
        }
    }
    return added;
}

/* Waiter lists are kept as offsets into d->serials until the array stops moving. */
struct waiter_span {
    size_t enter_at, nenter, notify_at, nnotify;
};

static void describe_monitor(struct dump_state *d, size_t i, struct waiter_span *span)
{
    struct hprof_monitor_info *m = &d->monitors[i];
    memset(m, 0, sizeof *m);
    memset(span, 0, sizeof *span);
    m->class_sig = signature_of(class_of(d->jvmti, d->jni, d->objects[i]));
    jvmtiMonitorUsage u;
    memset(&u, 0, sizeof u);
    if ((*d->jvmti)->GetObjectMonitorUsage(d->jvmti, d->objects[i], &u) != JVMTI_ERROR_NONE)
        return;
    if (u.owner) {
        m->owner_serial = add_thread(d, u.owner);
        m->entry_count = (uint32_t)u.entry_count;
    }
    /* Up to JDK 22, HotSpot counted the threads in Object.wait among the waiters to enter as
     * well (JDK-8247972); leaving the notify waiters out gives the same lists everywhere. */
    span->enter_at = d->nserials;
    span->nenter =
        add_serials(d, u.waiters, u.waiter_count, u.notify_waiters, u.notify_waiter_count);
    span->notify_at = d->nserials;
    span->nnotify = add_serials(d, u.notify_waiters, u.notify_waiter_count, NULL, 0);
    jvmti_util_free(d->jvmti, u.waiters);
    jvmti_util_free(d->jvmti, u.notify_waiters);
}

static void gather_monitor_dump(struct dump_state *d)
{
    jvmtiEnv *jvmti = d->jvmti;
    jint n = 0;
    jthread *all = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetAllThreads(jvmti, &n, &all), "GetAllThreads"))
        return;
    for (jint i = 0; i < n; i++)
        add_thread(d, all[i]);
    /* Monitors someone owns, and monitors someone waits for (which may have no owner). */
    for (jint i = 0; find_monitors && i < n; i++) {
        jint nowned = 0;
        jobject *owned = NULL;
        if ((*jvmti)->GetOwnedMonitorInfo(jvmti, all[i], &nowned, &owned) == JVMTI_ERROR_NONE) {
            for (jint k = 0; k < nowned; k++)
                add_monitor(d, owned[k]);
            jvmti_util_free(jvmti, owned);
        }
        jobject contended = NULL;
        if ((*jvmti)->GetCurrentContendedMonitor(jvmti, all[i], &contended) == JVMTI_ERROR_NONE)
            add_monitor(d, contended);
    }
    jvmti_util_free(jvmti, all);

    d->monitors = d->nobjects ? calloc(d->nobjects, sizeof *d->monitors) : NULL;
    struct waiter_span *spans = d->nobjects ? calloc(d->nobjects, sizeof *spans) : NULL;
    if (d->nobjects && (!d->monitors || !spans)) {
        d->oom = true;
        free(spans);
        return;
    }
    for (size_t i = 0; i < d->nobjects; i++)
        describe_monitor(d, i, &spans[i]);
    for (size_t i = 0; i < d->nobjects; i++) {
        d->monitors[i].waiters = d->serials ? d->serials + spans[i].enter_at : NULL;
        d->monitors[i].nwaiters = spans[i].nenter;
        d->monitors[i].notify = d->serials ? d->serials + spans[i].notify_at : NULL;
        d->monitors[i].nnotify = spans[i].nnotify;
    }
    free(spans);
}

static void write_monitor_dump_rows(struct hprof_writer *w, void *dump)
{
    w->ops->monitor_dump(w, dump);
}

static void write_monitor_dump(const struct dump_request *req)
{
    JNIEnv *jni = req->jni;
    if (!jni || !jvmti_util_live(req->jvmti)) {
        log_warning("MONITOR DUMP needs a Java thread and a live VM; left out of this dump");
        return;
    }
    /* Every local reference made while gathering is released at once by the pop. */
    if ((*jni)->PushLocalFrame(jni, 256) != JNI_OK) {
        (*jni)->ExceptionClear(jni);
        log_warning("out of memory: MONITOR DUMP is left out of this dump");
        return;
    }
    struct dump_state d;
    memset(&d, 0, sizeof d);
    d.jvmti = req->jvmti;
    d.jni = jni;
    gather_monitor_dump(&d);
    if (d.oom)
        log_warning("out of memory: MONITOR DUMP is incomplete");
    struct emit_refs refs = {d.nthreads, sizeof *d.threads,
                             d.nthreads ? &d.threads->trace_serial : NULL, NULL,
                             d.nthreads ? &d.threads->thread_serial : NULL};
    struct hprof_monitor_dump dump = {
        .nthreads = d.nthreads,
        .nmonitors = d.monitors ? d.nobjects : 0,
        .threads = d.threads,
        .monitors = d.monitors,
    };
    emit_section(&refs, write_monitor_dump_rows, &dump);
    (*jni)->PopLocalFrame(jni, NULL);
    free(d.threads);
    free(d.objects);
    free(d.monitors);
    free(d.serials);
}

/* ---- the profile -------------------------------------------------------------------- */

static bool monitors_enabled(const struct hprof_options *opts)
{
    return opts->monitor;
}

static void monitors_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    (void)opts;
    caps->can_generate_monitor_events = 1;
    caps->can_get_monitor_info = 1;
}

static void monitors_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->MonitorContendedEnter = on_contended_enter;
    cb->MonitorContendedEntered = on_contended_entered;
    cb->MonitorWait = on_wait;
    cb->MonitorWaited = on_waited;
}

/* Capabilities that help but are not always there: HotSpot offers owned and contended
 * monitor info only at start-up, not to an agent attached later (MONITOR DUMP then lists
 * threads but no monitors), and can_support_virtual_threads only from JDK 21 on (so events
 * name the virtual thread and its storage, stack and state can be read; JDK 17 has no
 * virtual threads to care about). */
static void add_optional_capabilities(jvmtiEnv *jvmti)
{
    jvmtiCapabilities potential, want;
    memset(&potential, 0, sizeof potential);
    memset(&want, 0, sizeof want);
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &potential) != JVMTI_ERROR_NONE)
        return;
    want.can_get_owned_monitor_info = potential.can_get_owned_monitor_info;
    want.can_get_current_contended_monitor = potential.can_get_current_contended_monitor;
    if (jvmti_util_caps_has_virtual_threads(&potential))
        jvmti_util_caps_set_virtual_threads(&want);
    if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
        memset(&want, 0, sizeof want);
    find_monitors = want.can_get_owned_monitor_info && want.can_get_current_contended_monitor;
    if (!find_monitors)
        log_warning("monitor=y: this VM lets a late-attached agent see no monitor owners; "
                    "MONITOR DUMP will list threads only");
}

static void monitors_measure(struct mem_use *u)
{
    u->entries = 0;
    u->bytes = segarray_bytes(&states);
    if (contention)
        contention_measure(contention, u);
}

static struct hprof_error monitors_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                         bool live)
{
    (void)live;
    per_thread_traces = opts->thread;
    segarray_init(&states, sizeof(struct monitor_thread));
    contention = contention_new();
    if (!contention)
        return hprof_errorf("out of memory at start-up");
    mem_account_register("monitors", monitors_measure);
    add_optional_capabilities(jvmti);
    static const jvmtiEvent events[] = {
        JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
        JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
        JVMTI_EVENT_MONITOR_WAIT,
        JVMTI_EVENT_MONITOR_WAITED,
    };
    struct hprof_error e = hprof_ok();
    for (size_t i = 0; i < sizeof events / sizeof *events && !hprof_failed(&e); i++)
        e = jvmti_util_error(
            jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL),
            "SetEventNotificationMode");
    return e;
}

static void monitors_dump(const struct dump_request *req)
{
    if (!(req->sections & DUMP_MONITORS))
        return;
    write_monitor_time(req);
    write_monitor_dump(req);
}

const struct hprof_profile monitors_profile = {
    .name = "monitor",
    .sections = DUMP_MONITORS,
    .option_text = "monitor=y",
    .enabled = monitors_enabled,
    .add_capabilities = monitors_add_capabilities,
    .set_callbacks = monitors_set_callbacks,
    .start = monitors_start,
    .dump = monitors_dump,
};

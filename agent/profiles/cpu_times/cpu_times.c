/* cpu=times / cpu=old. Mechanism (doc/cpu-times.md, doc/rewriter.md):
 *  - ClassFileLoadHook (every class loader, the boot loader too): rewrite each class so every
 *    method calls hprof/Tracker.methodEntry(cnum, mnum) first and methodExit(cnum, mnum) at each
 *    exit, exceptional ones included (rewriter/). The class number is ours
 *    (rewritten_classes.h), the method number its index in the class file.
 *  - VMInit: define the tracker in the boot loader, register its natives
 *    (agent/profiles/cpu_times/tracker_natives.h), let every module read it, engage it, start
 * rewriting, and retransform the classes loaded before (java.lang, the module system...).
 *  - ClassPrepare: match the class to its numbers, for the names of its methods.
 *  - A dump: every thread's counts by distinct top of stack, turned into traces. */
#include "cpu_times.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classfile_rewriter.h"
#include "clock.h"
#include "jvmti_util.h"
#include "log.h"
#include "mem_account.h"
#include "emit.h"
#include "output.h"
#include "ranking.h"
#include "shadow_stack.h"
#include "trace_table.h"
#include "rewritten_classes.h"
#include "tracker_class.h"
#include "tracker_floor_buffer.h"
#include "tracker_floor_clock.h"
#include "tracker_floor_empty.h"
#include "tracker_floor_store.h"
#include "tracker_natives.h"

#define RETRANSFORM_BATCH 256

#define MAX_REWRITE_WARNINGS 10

static bool per_method;          /* cpu=old */
static enum tracker_probe probe; /* a diagnostic stand-in, or (normally) counting */
static _Atomic(bool) rewriting;
static _Atomic(bool) deployed;
static _Atomic(uint64_t) rewritten_boot, rewritten_other, left_alone, failed;

static bool cpu_times_enabled(const struct hprof_options *opts)
{
    return opts->cpu == HPROF_CPU_TIMES || opts->cpu == HPROF_CPU_OLD;
}

static void cpu_times_add_capabilities(const struct hprof_options *opts, jvmtiCapabilities *caps)
{
    (void)opts;
    caps->can_generate_all_class_hook_events = 1;
    caps->can_retransform_classes = 1;
}

/* ---- rewriting ---------------------------------------------------------------------------- */

static void JNICALL on_class_file_load_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass redefined,
                                            jobject loader, const char *name, jobject domain,
                                            jint len, const unsigned char *data, jint *new_len,
                                            unsigned char **new_data)
{
    (void)domain;
    if (!atomic_load_explicit(&rewriting, memory_order_acquire) || !name ||
        rewriter_should_skip(name) || len <= 0)
        return;
    /* the time rewriting takes is the agent's, not the loading method's */
    uint64_t paused = tracker_natives_pause();
    uint32_t cnum = rewritten_classes_reserve();
    if (!cnum)
        return;
    struct rewrite_config cfg = {
        .tracker_class = HPROF_TRACKER_CLASS_NAME,
        .entry_name = "methodEntry",
        .entry_desc = "(II)V",
        .exit_name = "methodExit",
        .exit_desc = "(II)V",
        .class_number = cnum,
    };
    struct rewrite_result res;
    char err[256] = "";
    int rc = classfile_rewrite(data, (size_t)len, &cfg, &res, err, sizeof err);
    if (rc == 0) {
        unsigned char *out = NULL;
        if (res.len <= INT32_MAX &&
            (*jvmti)->Allocate(jvmti, (jlong)res.len, &out) == JVMTI_ERROR_NONE) {
            memcpy(out, res.bytes, res.len);
            rewritten_classes_fill(jni, cnum, name, loader, &res);
            if (redefined)
                rewritten_classes_bind(jvmti, cnum, redefined);
            *new_data = out;
            *new_len = (jint)res.len;
            atomic_fetch_add(loader ? &rewritten_other : &rewritten_boot, 1);
        } else {
            atomic_fetch_add(&failed, 1);
        }
    } else if (rc == 1) {
        atomic_fetch_add(&left_alone, 1);
    } else if (atomic_fetch_add(&failed, 1) < MAX_REWRITE_WARNINGS) {
        log_warning("cpu=times: class %s is not tracked: %s", name, err);
    }
    rewrite_result_free(&res);
    tracker_natives_resume(paused);
}

static void cpu_times_set_callbacks(jvmtiEventCallbacks *cb)
{
    cb->ClassFileLoadHook = on_class_file_load_hook;
}

/* Capabilities some VMs lack: retransforming any modifiable class, and following virtual
 * threads (JDK 21+). */
static bool add_optional_capabilities(jvmtiEnv *jvmti)
{
    jvmtiCapabilities potential, want;
    memset(&potential, 0, sizeof potential);
    memset(&want, 0, sizeof want);
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &potential) != JVMTI_ERROR_NONE)
        return false;
    want.can_retransform_any_class = potential.can_retransform_any_class;
    bool vthreads = jvmti_util_caps_has_virtual_threads(&potential);
    if (vthreads)
        jvmti_util_caps_set_virtual_threads(&want);
    if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE) {
        memset(&want, 0, sizeof want);
        want.can_retransform_any_class = potential.can_retransform_any_class;
        (*jvmti)->AddCapabilities(jvmti, &want);
    }
    return vthreads;
}

static struct hprof_error cpu_times_start(jvmtiEnv *jvmti, const struct hprof_options *opts,
                                          bool live)
{
    (void)live;
    per_method = opts->cpu == HPROF_CPU_OLD;
    int p = TRACKER_PROBE_COUNT;
    struct hprof_error e = tracker_natives_probe_from_env(&p);
    if (hprof_failed(&e))
        return e;
    probe = (enum tracker_probe)p;
    if (rewritten_classes_init() != 0 ||
        tracker_natives_init(per_method, opts->thread, opts->depth) != 0)
        return hprof_errorf("out of memory at start-up");
    bool vthreads = add_optional_capabilities(jvmti);
    tracker_natives_watch_virtual_threads(jvmti, vthreads);
    return jvmti_util_error(jvmti,
                            (*jvmti)->SetEventNotificationMode(
                                jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL),
                            "SetEventNotificationMode");
}

/* ---- deployment at VM init ---------------------------------------------------------------- */

/* Code in a named module may only call into modules it reads: make every module read the
 * tracker's (the boot loader's unnamed module). Modules defined later get the edge from
 * HotSpot when a class of theirs was changed by a ClassFileLoadHook. */
static void add_reads(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls)
{
    jobject module = (*jni)->GetModule(jni, cls);
    if (!module) {
        (*jni)->ExceptionClear(jni);
        log_warning("cpu=times: the tracker's module is unknown; classes of named modules rely on "
                    "HotSpot adding reads for transformed classes");
        return;
    }
    jint n = 0;
    jobject *modules = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetAllModules(jvmti, &n, &modules), "GetAllModules"))
        return;
    for (jint i = 0; i < n; i++) {
        (*jvmti)->AddModuleReads(jvmti, modules[i], module);
        (*jni)->DeleteLocalRef(jni, modules[i]);
    }
    jvmti_util_free(jvmti, modules);
    (*jni)->DeleteLocalRef(jni, module);
}

/* Whether a loaded class should be retransformed: not an array or primitive, modifiable, not
 * one the rewriter must leave alone. */
static bool wants_retransform(jvmtiEnv *jvmti, jclass klass)
{
    jboolean modifiable = JNI_FALSE;
    if ((*jvmti)->IsModifiableClass(jvmti, klass, &modifiable) != JVMTI_ERROR_NONE || !modifiable)
        return false;
    char *sig = NULL;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
        return false;
    size_t len = strlen(sig);
    bool want = false;
    if (len > 2 && sig[0] == 'L') {
        sig[len - 1] = '\0';
        want = !rewriter_should_skip(sig + 1);
    }
    jvmti_util_free(jvmti, sig);
    return want;
}

/* Classes loaded before the tracker existed run their original code: rewrite them now. A batch
 * the VM refuses is retried class by class, and a class it refuses alone is skipped. */
static void retransform_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    uint64_t t0 = (clock_monotonic_ns() / 1000000u);
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes),
                          "GetLoadedClasses"))
        return;
    jint kept = 0;
    for (jint i = 0; i < n; i++) {
        if (wants_retransform(jvmti, classes[i]))
            classes[kept++] = classes[i];
        else
            (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jint done = 0, refused = 0;
    jvmtiError first_error = JVMTI_ERROR_NONE;
    for (jint i = 0; i < kept; i += RETRANSFORM_BATCH) {
        jint m = kept - i < RETRANSFORM_BATCH ? kept - i : RETRANSFORM_BATCH;
        if ((*jvmti)->RetransformClasses(jvmti, m, classes + i) == JVMTI_ERROR_NONE) {
            done += m;
            continue;
        }
        for (jint k = i; k < i + m; k++) {
            jvmtiError e = (*jvmti)->RetransformClasses(jvmti, 1, classes + k);
            if (e == JVMTI_ERROR_NONE) {
                done++;
            } else {
                if (!refused++)
                    first_error = e;
                char *sig = NULL;
                if (log_verbose() &&
                    (*jvmti)->GetClassSignature(jvmti, classes[k], &sig, NULL) == JVMTI_ERROR_NONE)
                    log_info("cpu=times: %s cannot be retransformed (JVMTI error %d): not tracked",
                             sig, (int)e);
                jvmti_util_free(jvmti, sig);
            }
        }
    }
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    for (jint i = 0; i < kept; i++)
        (*jni)->DeleteLocalRef(jni, classes[i]);
    jvmti_util_free(jvmti, classes);
    if (refused)
        log_warning("cpu=times: %d of %d classes loaded before VM init could not be retransformed "
                    "(first JVMTI error %d): their methods are not tracked",
                    (int)refused, (int)kept, (int)first_error);
    log_info("cpu=times: retransformed %d classes loaded before VM init in %llu ms ", (int)done,
             (unsigned long long)((clock_monotonic_ns() / 1000000u) - t0));
}

static void cpu_times_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    const unsigned char *bytes = hprof_tracker_class;
    unsigned int len = hprof_tracker_class_len;
    if (probe == TRACKER_PROBE_JAVA_EMPTY)
        bytes = hprof_tracker_floor_empty, len = hprof_tracker_floor_empty_len;
    else if (probe == TRACKER_PROBE_JAVA_CLOCK)
        bytes = hprof_tracker_floor_clock, len = hprof_tracker_floor_clock_len;
    else if (probe == TRACKER_PROBE_JAVA_STORE)
        bytes = hprof_tracker_floor_store, len = hprof_tracker_floor_store_len;
    else if (probe == TRACKER_PROBE_JAVA_BUFFER)
        bytes = hprof_tracker_floor_buffer, len = hprof_tracker_floor_buffer_len;
    jclass cls =
        (*jni)->DefineClass(jni, HPROF_TRACKER_CLASS_NAME, NULL, (const jbyte *)bytes, (jsize)len);
    if (!cls) {
        (*jni)->ExceptionClear(jni);
        log_error("cpu=times: the tracker class %s could not be defined; nothing is tracked",
                  HPROF_TRACKER_CLASS_NAME);
        return;
    }
    struct hprof_error e = tracker_natives_register(jni, cls, probe);
    if (hprof_failed(&e)) {
        log_error("cpu=times: %s", e.text);
        return;
    }
    add_reads(jvmti, jni, cls);
    atomic_store(&deployed, true);
    atomic_store_explicit(&rewriting, true, memory_order_release);
    retransform_loaded(jvmti, jni);
    (*jni)->DeleteLocalRef(jni, cls);
}

static void cpu_times_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)thread;
    if (atomic_load_explicit(&rewriting, memory_order_relaxed)) {
        uint64_t paused = tracker_natives_pause();
        rewritten_classes_prepared(jvmti, jni, klass);
        tracker_natives_resume(paused);
    }
}

static void cpu_times_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti, (void)jni, (void)thread;
    tracker_natives_thread_end();
}

static void cpu_times_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti, (void)jni;
    atomic_store(&rewriting, false);
    tracker_natives_disengage();
    if (!atomic_load(&deployed))
        return;
    struct tracker_natives_stats s = tracker_natives_stats();
    struct rewritten_classes_stats c = rewritten_classes_stats();
    log_info("cpu=times: rewrote %llu boot and %llu other classes (%llu left alone, %llu failed), "
             "%u bound; %llu threads; %llu exits without entry, %llu frames left by exceptions, "
             "%llu calls too deep; %llu call paths of unloaded classes folded; clock %s%s",
             (unsigned long long)atomic_load(&rewritten_boot),
             (unsigned long long)atomic_load(&rewritten_other),
             (unsigned long long)atomic_load(&left_alone), (unsigned long long)atomic_load(&failed),
             c.bound, (unsigned long long)s.threads, (unsigned long long)s.unmatched_exits,
             (unsigned long long)s.unwound, (unsigned long long)s.overflow,
             (unsigned long long)s.folded, s.tsc ? "TSC" : "CLOCK_MONOTONIC",
             s.per_call_lookup ? ", per-call thread lookup" : "");
}

static void cpu_times_control(const struct control_request *req)
{
    if (req->kind == CONTROL_SET_DEPTH)
        tracker_natives_set_depth(req->depth);
}

/* ---- reports -------------------------------------------------------------------------------- */

static uint64_t ns_to_ms(uint64_t ns)
{
    return (ns + 500000u) / 1000000u;
}

/* "java.lang.String.hashCode" of a frame, malloc'ed; NULL when unknown. */
#define OVERFLOW_LABEL "<memory_budget_reached>.<new_stacks>"

static char *frame_label(shadow_frame f, const char **desc)
{
    if (f == SHADOW_FRAME_OVERFLOW) {
        *desc = "()V";
        return strdup(OVERFLOW_LABEL);
    }
    const char *cls, *method;
    if (!rewritten_classes_describe(SHADOW_CNUM(f), SHADOW_MNUM(f), &cls, &method, desc))
        return NULL;
    size_t len = strlen(cls) + strlen(method) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s.%s", cls, method);
    return s;
}

/* The row's trace; *overflow: it holds the overflow frame (past memory=), so it is counted
 * under the thread's overflow trace. */
static uint32_t trace_of(jvmtiEnv *jvmti, const struct shadow_total *r, bool *overflow)
{
    *overflow = false;
    if (r->n == 0)
        return HPROF_TRACE_SERIAL_NONE;
    jvmtiFrameInfo small[16];
    jvmtiFrameInfo *frames = r->n <= 16 ? small : malloc(sizeof *frames * r->n);
    if (!frames)
        return HPROF_TRACE_SERIAL_NONE;
    uint32_t serial = HPROF_TRACE_SERIAL_NONE;
    bool known = true;
    for (uint32_t k = 0; k < r->n; k++)
        if (r->frames[k] == SHADOW_FRAME_OVERFLOW) /* past the budget: one trace for all */
            known = false;
    if (!known) {
        serial = trace_table_overflow(jvmti, r->thread);
        *overflow = true;
    }
    for (uint32_t k = 0; k < r->n && known; k++) {
        frames[k].method =
            rewritten_classes_method(SHADOW_CNUM(r->frames[k]), SHADOW_MNUM(r->frames[k]));
        frames[k].location = -1; /* where in the caller is not tracked */
        known = frames[k].method != NULL;
    }
    if (known) {
        serial = trace_table_intern(jvmti, frames, (jint)r->n, r->thread);
        /* A stack first seen at this dump, past the budget, is counted as overflow too. */
        *overflow = mem_account_budget_passed() && serial != HPROF_TRACE_SERIAL_NONE &&
                    serial == trace_table_overflow(jvmti, r->thread);
    }
    if (frames != small)
        free(frames);
    return serial;
}

static int label_cmp(const char *x, const char *y)
{
    return x && y ? strcmp(x, y) : (x != NULL) - (y != NULL);
}

/* By trace, then (for the empty trace) by label. */
static int by_serial(const void *a, const void *b)
{
    const struct hprof_cost_row *x = a, *y = b;
    int c = (x->trace_serial > y->trace_serial) - (x->trace_serial < y->trace_serial);
    return c ? c : label_cmp(x->method, y->method);
}

/* Rows that print the same: one trace, or the empty trace and one label (paths through unloaded
 * classes: what is below their top frame cannot be printed). */
static bool same_printed_row(const struct hprof_cost_row *x, const struct hprof_cost_row *y)
{
    return x->trace_serial == y->trace_serial &&
           (x->trace_serial != HPROF_TRACE_SERIAL_NONE || label_cmp(x->method, y->method) == 0);
}

static void write_cpu_times_rows(struct hprof_writer *w, void *report)
{
    w->ops->cpu_times(w, report);
}

static void write_cpu_times(const struct dump_request *req, struct shadow_totals *s)
{
    size_t n = shadow_totals_count(s);
    struct hprof_cost_row *rows = calloc(n ? n : 1, sizeof *rows);
    char **labels = calloc(n ? n : 1, sizeof *labels);
    if (!rows || !labels) {
        log_warning("out of memory: CPU TIME is left out of this dump");
        free(rows);
        free(labels);
        return;
    }
    uint64_t total_ns = 0;
    for (size_t i = 0; i < n; i++) {
        const struct shadow_total *r = shadow_totals_at(s, i);
        const char *desc;
        bool overflow;
        rows[i].trace_serial = trace_of(req->jvmti, r, &overflow);
        labels[i] =
            r->n ? frame_label(overflow ? SHADOW_FRAME_OVERFLOW : r->frames[0], &desc) : NULL;
        rows[i].count = r->calls;
        rows[i].cost = tracker_natives_ticks_to_ns(r->self);
        rows[i].method = labels[i];
        total_ns += rows[i].cost;
    }
    /* Frames cut to depth can make one trace of several rows, and unknown methods one empty
     * trace of rows whose top frames differ (kept apart by their labels). */
    qsort(rows, n, sizeof *rows, by_serial);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && same_printed_row(&rows[i], &rows[m - 1])) {
            rows[m - 1].count += rows[i].count;
            rows[m - 1].cost += rows[i].cost;
        } else {
            rows[m++] = rows[i];
        }
    }
    size_t keep = ranking_sort_and_cut(rows, m, total_ns, req->cutoff);
    struct emit_refs refs = {keep, sizeof *rows, keep ? &rows->trace_serial : NULL, NULL, NULL};
    struct hprof_cost_report report = {
        .total = ns_to_ms(total_ns), .nrows = keep, .rows = rows, .cost_total = total_ns};
    emit_section(&refs, write_cpu_times_rows, &report);
    for (size_t i = 0; i < n; i++)
        free(labels[i]);
    free(labels);
    free(rows);
}

static void write_cpu_old_rows(struct hprof_writer *w, void *report)
{
    w->ops->cpu_old(w, report);
}

struct method_row {
    struct hprof_method_time_row row;
    uint64_t self_ns;
};

static int by_self_desc(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const struct method_row *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    if (x->row.count != y->row.count)
        return x->row.count > y->row.count ? -1 : 1;
    return strcmp(x->row.method ? x->row.method : "", y->row.method ? y->row.method : "");
}

static uint64_t self_ns_of(const void *row, void *ctx)
{
    (void)ctx;
    return ((const struct method_row *)row)->self_ns;
}

static void write_cpu_old(const struct dump_request *req, struct shadow_totals *s)
{
    size_t n = shadow_totals_method_count(s);
    struct method_row *rows = calloc(n ? n : 1, sizeof *rows);
    struct hprof_method_time_row *out = calloc(n ? n : 1, sizeof *out);
    if (!rows || !out) {
        log_warning("out of memory: CPU TIME BY METHOD is left out of this dump");
        free(rows);
        free(out);
        return;
    }
    uint64_t total_ns = 0;
    for (size_t i = 0; i < n; i++) {
        const struct shadow_method_total *m = shadow_totals_method_at(s, i);
        const char *desc = NULL;
        rows[i].row.method = frame_label(m->frame, &desc);
        rows[i].row.sig = desc;
        rows[i].row.count = m->calls;
        rows[i].self_ns = tracker_natives_ticks_to_ns(m->self);
        rows[i].row.self_ms = ns_to_ms(rows[i].self_ns);
        rows[i].row.total_ms = ns_to_ms(tracker_natives_ticks_to_ns(m->total));
        total_ns += rows[i].self_ns;
    }
    size_t keep =
        ranking_rank(rows, n, sizeof *rows, by_self_desc, self_ns_of, NULL, total_ns, req->cutoff);
    for (size_t i = 0; i < keep; i++)
        out[i] = rows[i].row;
    struct hprof_method_time_report report = {
        .total_ms = ns_to_ms(total_ns), .nrows = keep, .rows = out};
    emit_section(NULL, write_cpu_old_rows, &report);
    for (size_t i = 0; i < n; i++)
        free((char *)rows[i].row.method);
    free(rows);
    free(out);
}

static void cpu_times_dump(const struct dump_request *req)
{
    if (!(req->sections & DUMP_CPU) || !atomic_load(&deployed))
        return;
    int depth = trace_table_depth();
    struct shadow_totals *s = tracker_natives_collect(depth > 0 ? (unsigned)depth : 0u);
    if (!s) {
        log_warning("out of memory: CPU TIME is left out of this dump");
        return;
    }
    if (per_method)
        write_cpu_old(req, s);
    else
        write_cpu_times(req, s);
    shadow_totals_free(s);
}

const struct hprof_profile cpu_times_profile = {
    .name = "cpu=times",
    .sections = DUMP_CPU,
    .option_text = "cpu=times or cpu=old",
    .enabled = cpu_times_enabled,
    .add_capabilities = cpu_times_add_capabilities,
    .set_callbacks = cpu_times_set_callbacks,
    .start = cpu_times_start,
    .vm_init = cpu_times_vm_init,
    .thread_end = cpu_times_thread_end,
    .class_prepare = cpu_times_class_prepare,
    .dump = cpu_times_dump,
    .control = cpu_times_control,
    .vm_death = cpu_times_vm_death,
};

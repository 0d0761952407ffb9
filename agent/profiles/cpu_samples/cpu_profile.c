/* cpu=samples' recording (cpu_profile.h): the counts and their lock, the drain of the records
 * the engines produce, and how a record becomes a trace (unwalkable samples under pseudo-frames,
 * a virtual thread's frames cut at its boundary on the carrier). */
#include "cpu_profile.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "class_table.h"
#include "clock.h"
#include "frame_table.h"
#include "jvmti_util.h"
#include "native_frames.h"
#include "sample_counts.h"
#include "thread_table.h"
#include "trace_table.h"

/* Most virtual-thread boundary methods looked for (Continuation.enter and enterSpecial). */
#define MAX_BOUNDARY 8

/* Why a sample has no Java stack: AGCT's reasons (index = -count), and ours. Each has a
 * pseudo-frame "<unwalkable>.<name>" its samples are counted under. */
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

_Static_assert(R_COUNT == CPU_PROFILE_REASONS, "cpu_profile.h counts the reasons");

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

static bool per_thread;
static const struct sample_source *source; /* the engine whose records are drained, or NULL */

static jmethodID boundary_enter[MAX_BOUNDARY], boundary_special[MAX_BOUNDARY];
static jmethodID yield_methods[MAX_BOUNDARY]; /* Continuation.yield, yield0, doYield */
static int nenter, nspecial, nyield;

/* counts_lock guards the samples per trace. */
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sample_counts *counts;

/* drain_lock serialises drains (the agent thread, dumps, CONTROL commands). */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static jvmtiFrameInfo *frame_buf;
/* Guarded by drain_lock. */
static struct cpu_profile_drain_stats st;

bool cpu_profile_init(bool thread_traces)
{
    per_thread = thread_traces;
    counts = sample_counts_new();
    return counts != NULL;
}

bool cpu_profile_take_records(const struct sample_source *src)
{
    frame_buf =
        malloc(sizeof *frame_buf * ((size_t)sample_records_max_frames() + 1)); /* + native */
    if (!frame_buf)
        return false;
    source = src;
    return true;
}

const char *cpu_profile_reason_name(int reason)
{
    return reason >= 0 && reason < R_COUNT ? reason_names[reason] : "?";
}

/* ---- counts ------------------------------------------------------------------------------ */

void cpu_profile_add(uint32_t trace, uint64_t n)
{
    pthread_mutex_lock(&counts_lock);
    sample_counts_add(counts, trace, n);
    pthread_mutex_unlock(&counts_lock);
}

void cpu_profile_clear(void)
{
    if (source && source->active())
        source->discard_pending(); /* records still in the ring were taken before the clear */
    pthread_mutex_lock(&counts_lock);
    sample_counts_clear(counts);
    pthread_mutex_unlock(&counts_lock);
}

size_t cpu_profile_snapshot(struct hprof_cost_row **rows, uint64_t *total)
{
    *rows = NULL;
    *total = 0;
    pthread_mutex_lock(&counts_lock);
    size_t n = sample_counts_traces(counts);
    struct hprof_cost_row *r = n ? malloc(n * sizeof *r) : NULL;
    if (r) {
        n = sample_counts_rows(counts, r, n);
        *total = sample_counts_total(counts);
    } else {
        n = 0;
    }
    pthread_mutex_unlock(&counts_lock);
    *rows = r;
    return n;
}

/* ---- what a record's frames mean --------------------------------------------------------- */

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
            jvmti_util_free(jvmti, name);
        }
        jvmti_util_free(jvmti, methods);
    }
    (*jni)->DeleteLocalRef(jni, cls);
}

static void make_pseudo_frames(void)
{
    uint32_t cls = class_table_register_synthetic("<unwalkable>");
    bool ok = cls != 0;
    for (int r = 0; ok && r < R_COUNT; r++)
        ok =
            frame_table_register_synthetic((jmethodID)(void *)&pseudo_ids[r], cls, reason_names[r]);
    if (ok)
        ok = frame_table_register_synthetic((jmethodID)(void *)&pseudo_ids[NO_METHOD_ID_PSEUDO],
                                            cls, "no_method_id");
    pseudo_ready = ok;
}

void cpu_profile_prepare(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (!source)
        return;
    make_pseudo_frames();
    find_boundary(jvmti, jni);
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
    if (pseudo_ready && trace_table_depth() > 0) {
        jvmtiFrameInfo f = {(jmethodID)(void *)&pseudo_ids[r], 0};
        serial = trace_table_intern(jvmti, &f, 1, thread_serial);
    }
    cpu_profile_add(serial, w);
    st.samples += w;
}

static enum reason reason_of(int nframes)
{
    int r = -nframes;
    return r >= R_NO_CLASS_LOAD && r <= R_SKIPPED ? (enum reason)r : R_OTHER;
}

static void count_record(jvmtiEnv *jvmti, JNIEnv *jni, const struct sample_record *rec)
{
    uint64_t w = rec->weight;
    st.records++;
    if (!source->record_current(rec)) {
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
    if (n > sample_records_max_frames())
        n = sample_records_max_frames();
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
    int depth = trace_table_depth();
    /* Native code under a JNI method: the library's function on top of the Java frames. */
    jmethodID native_top = NULL;
    if (keep > 0 && depth > 1 && rec->frames[0].method_id) {
        const struct method_info *m = frame_table_method(jvmti, rec->frames[0].method_id);
        if (m && m->native) /* in a JNI method: a VM runtime call keeps its Java top frame */
            native_top = native_frames_method(rec->pc);
    }
    int top = native_top ? 1 : 0;
    if (keep > depth - top)
        keep = depth - top;
    bool no_method = false;
    for (int i = 0; i < keep; i++) {
        const struct async_frame *a = &rec->frames[i];
        jvmtiFrameInfo *f = &frame_buf[i + top];
        if (a->method_id) {
            f->method = a->method_id;
            f->location = a->lineno >= 0 ? a->lineno : -1;
        } else {
            f->method = (jmethodID)(void *)&pseudo_ids[NO_METHOD_ID_PSEUDO];
            f->location = 0;
            no_method = true;
        }
    }
    if (native_top) {
        frame_buf[0] = (jvmtiFrameInfo){native_top, 0};
        st.native_top += w;
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
            struct thread_info *vinfo = local ? thread_table_of(jvmti, jni, local) : NULL;
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
    uint32_t serial = trace_table_intern(jvmti, frame_buf, keep + top, thread_serial);
    if (serial == HPROF_TRACE_SERIAL_NONE && keep > 0) {
        count_reason(jvmti, R_FRAME_UNREADABLE, thread_serial, w);
        return;
    }
    cpu_profile_add(serial, w);
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

void cpu_profile_drain(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (!source || !source->active() || !jni)
        return;
    pthread_mutex_lock(&drain_lock);
    int64_t t0 = (int64_t)clock_thread_cpu_ns();
    sample_records_set_depth(trace_table_depth() > 0 ? trace_table_depth() : 1);
    /* Method details and virtual threads make local references; this thread may never
     * return to Java to free them. */
    if ((*jni)->PushLocalFrame(jni, 64) == 0) {
        /* At most one lap: producers keep adding while this runs. */
        for (size_t i = 0, cap = sample_records_capacity(); i < cap; i++) {
            const struct sample_record *rec = sample_records_peek();
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
            sample_records_release();
        }
        struct lost_ctx ctx = {jvmti};
        source->take_lost(count_lost, &ctx);
        (*jni)->PopLocalFrame(jni, NULL);
    } else {
        (*jni)->ExceptionClear(jni);
    }
    source->after_drain(jni);
    st.drains++;
    st.drain_ns += (uint64_t)((int64_t)clock_thread_cpu_ns() - t0);
    pthread_mutex_unlock(&drain_lock);
}

void cpu_profile_get_drain_stats(struct cpu_profile_drain_stats *out)
{
    pthread_mutex_lock(&drain_lock);
    *out = st;
    pthread_mutex_unlock(&drain_lock);
}

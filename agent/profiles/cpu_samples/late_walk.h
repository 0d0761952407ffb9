/* cpu=samples' asynchronous sampler: samples AGCT cannot walk because the thread was out of Java
 * code when the signal came (in the VM or in native code, or deoptimizing, or during a
 * collection). Such a thread's Java frames cannot change until it returns to Java, so they are
 * walked a moment later by a helper thread with GetStackTrace: for a thread in native code or
 * blocked, at once (the VM lets the caller walk a thread that is safe); for a thread in the VM,
 * when it next leaves the VM (a handshake). Samples taken in Java code are never walked late:
 * that would credit the next safepoint poll, the bias the async sampler exists to avoid.
 *
 * The signal handler offers the record it claimed instead of publishing it; the walker fills in
 * the frames (or leaves AGCT's reason when the walk fails) and publishes it. Until then the
 * drain stops at that record, so record order is kept (doc/cpu-samples.md). */
#ifndef HPROF_LATE_WALK_H
#define HPROF_LATE_WALK_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "hprof_error.h"
#include "sample_records.h"

/* Whether a sample with AGCT's count nframes is one to walk late. */
bool late_walk_wanted(int nframes);

/* Starts the walker thread (VM init, after the records' ring exists: cpu_timers_setup).
 * Returns hprof_ok() or why there is none (the caller says so: samples out of Java code stay
 * unwalkable). */
struct hprof_error late_walk_start(jvmtiEnv *jvmti, JNIEnv *jni);

/* From the signal handler (async-signal-safe: no lock, no malloc): hands over rec, claimed at
 * ring position pos by a thread whose global reference is thread_ref. True: the walker will
 * publish it; false: the caller publishes it as it is. */
bool late_walk_offer(struct sample_record *rec, uint64_t pos, uintptr_t thread_ref);

/* VM death, after cpu_timers_stop: no more offers; the walker publishes everything it holds
 * (walked if it still can) and ends. Waits a bounded time. */
void late_walk_stop(void);

struct late_walk_stats {
    uint64_t offered;     /* records handed over */
    uint64_t walked;      /* of those, walked by GetStackTrace */
    uint64_t failed;      /* walk failed (thread gone, VM dying): AGCT's reason kept */
    uint64_t refused;     /* queue full or walker stopped: published unwalked */
    uint64_t latency_ns;  /* sum over walked records, signal to walk */
    uint64_t under_100us; /* walked within 100 us of the signal */
    uint64_t max_ns;
};
void late_walk_get_stats(struct late_walk_stats *out);

#endif

/* cpu=samples' recording, one owner: the samples per trace (the aggregate behind CPU SAMPLES)
 * and their lock, and the drain that turns the records every sampling engine produces
 * (sample_records.h) into traces and counts. Producers never count: the signal handler and the
 * late walker fill records; the safepoint rounds, which take stacks themselves, hand their
 * traces to cpu_profile_add. Thread-safe. doc/architecture.md walks one sample to its count. */
#ifndef HPROF_CPU_PROFILE_H
#define HPROF_CPU_PROFILE_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample_records.h"
#include "writer.h"

/* What an engine that produces records tells the drain. Every function is called by the drain
 * only (one thread at a time), never from a producer. */
struct sample_source {
    /* Whether the engine still produces (false once it stopped for good: no more drains). */
    bool (*active)(void);
    /* Whether a record still counts (its thread was not switched off or cleared since). */
    bool (*record_current)(const struct sample_record *rec);
    /* Samples the engine could not record (a full ring), by owner, taken once. */
    void (*take_lost)(void (*fn)(uintptr_t owner, uint64_t weight, void *arg), void *arg);
    /* After a drain: frees what only records not consumed yet could name. */
    void (*after_drain)(JNIEnv *jni);
    /* CONTROL_CLEAR_CPU_SAMPLES: records produced before now must not count. */
    void (*discard_pending)(void);
};

/* At start: per_thread: traces keyed by thread (thread=y). False: out of memory. */
bool cpu_profile_init(bool per_thread);
/* The engine whose records the drain reads (one today). False: out of memory (the frame buffer
 * for the deepest record); the engine then must not run. */
bool cpu_profile_take_records(const struct sample_source *source);
/* VM init, when records are taken: the pseudo-frames of unwalkable samples and the
 * virtual-thread boundary methods (JDK 21+). */
void cpu_profile_prepare(jvmtiEnv *jvmti, JNIEnv *jni);

/* Adds n samples to a trace (producers that take stacks themselves: the safepoint rounds). */
void cpu_profile_add(uint32_t trace, uint64_t n);
/* Turns the published records into counts. Any thread with a JNIEnv; serialised inside. */
void cpu_profile_drain(jvmtiEnv *jvmti, JNIEnv *jni);
/* How often the agent thread drains when it has no rounds to run. */
#define CPU_PROFILE_DRAIN_NS INT64_C(20000000)
/* CONTROL_CLEAR_CPU_SAMPLES: forgets every count, and the records not drained yet. */
void cpu_profile_clear(void);

/* A copy of the counts: rows (trace, count, cost = count) in no order, malloc'ed (free it;
 * NULL when empty), and the total. Returns the number of rows. */
size_t cpu_profile_snapshot(struct hprof_cost_row **rows, uint64_t *total);

/* Why a drained sample has no Java stack: AGCT's reasons and the drain's (index). */
#define CPU_PROFILE_REASONS 14
const char *cpu_profile_reason_name(int reason);

/* What the drain did, for the verbose message at exit. */
struct cpu_profile_drain_stats {
    uint64_t samples, records, weight_counted;
    uint64_t reasons[CPU_PROFILE_REASONS];
    uint64_t no_java, no_method_frames, discarded, vthread_samples, vthread_dropped;
    uint64_t walked_late;
    uint64_t native_top; /* samples with a native function on top (native_frames.h) */
    uint64_t drains, drain_ns;
};
void cpu_profile_get_drain_stats(struct cpu_profile_drain_stats *out);

#endif

/* cpu=samples' whole-process engine: the CPU time of the threads the VM does not report to
 * JVMTI (GC workers, JIT compiler threads, the VM Thread and its siblings, native threads that
 * never attached), found in /proc/self/task and named by their kernel names (thread_kinds.h).
 * No signal reaches them: the agent thread reads each one's CPU clock (clock_gettime on the
 * thread's CPU clock id) every PROCESS_THREADS_PERIOD_NS and credits one sample per interval
 * of CPU time used since, under a one-frame pseudo-stack "[GC].G1 Conc#0" (kind, name). The
 * remainder below an interval is carried to the next read, so the samples track the CPU time.
 * Java threads (ThreadStart, VM init) are the other engines' and are left out, and so are the
 * agent's own threads unless verbose=y. Thread-safe. doc/cpu-samples.md, "Threads the VM does
 * not report". */
#ifndef HPROF_PROCESS_THREADS_H
#define HPROF_PROCESS_THREADS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "thread_kinds.h"

#define PROCESS_THREADS_PERIOD_NS INT64_C(100000000)

/* At start (before VM init): interval_ns of CPU time per sample; with_agent: count the agent's
 * own threads too (verbose=y). */
void process_threads_init(int64_t interval_ns, bool with_agent);
/* On a Java thread itself (ThreadStart, VM init): its CPU time is sampled as a Java thread. */
void process_threads_java_current(void);
/* VM init: the pseudo-classes, and the first scan (CPU time before it is not counted; threads
 * with an unknown name alive now are taken for Java threads started before the agent). */
void process_threads_start(jvmtiEnv *jvmti);
bool process_threads_active(void);
/* The agent thread, as often as it likes: scans when a period has passed since the last
 * scan. counting: sampling is on (a CONTROL command may have switched it off for all). */
void process_threads_tick(jvmtiEnv *jvmti, bool counting);
/* CONTROL_CPU_SAMPLING_ON/OFF for all threads: these threads are counted only while the
 * last switch for all was on (switching one Java thread on does not count them). After the
 * call no scan credits any more (off). */
void process_threads_switch_all(bool on);
/* The last scan (VM death, before the exit dump), whatever the time. */
void process_threads_scan(jvmtiEnv *jvmti, bool counting);

struct process_threads_stats {
    uint64_t samples[THREAD_KIND_COUNT]; /* samples credited, by kind */
    uint64_t threads[THREAD_KIND_COUNT]; /* threads seen, by kind (Java threads not counted) */
    uint64_t scans, scan_ns;             /* scans and the agent thread's CPU time in them */
};
void process_threads_get_stats(struct process_threads_stats *out);
/* The verbose message at exit: the samples of the profile by kind, the scans' cost. */
void process_threads_log_stats(void);

#endif

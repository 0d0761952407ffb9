/* cpu=samples' asynchronous sampler, JVMTI side: decides at start whether it can run
 * (AsyncGetCallTrace exported, SIGPROF free, thread CPU-time timers available), keeps the
 * JVM ready for AsyncGetCallTrace (jmethodIDs for every class, ClassLoad and
 * CompiledMethodLoad events on), gives each thread its timer (cpu_timers.h) and drains the
 * ring into traces and counts. doc/cpu-samples.md explains the mechanism and its limits.
 *
 * cpu_sampler.c keeps the thread list, the switches and the counts; a listed thread with a
 * timer is sampled here, one without (started before an attach, or its timer failed) by the
 * sampler's rounds as before. */
#ifndef HPROF_ASYNC_SAMPLER_H
#define HPROF_ASYNC_SAMPLER_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "options.h"

struct thread_info;

/* Capabilities, callbacks and events for the async sampler (called whether or not it will
 * run: they are cheap). */
void cpu_async_add_capabilities(jvmtiCapabilities *caps);
void cpu_async_set_callbacks(jvmtiEventCallbacks *cb);

/* At start (OnLoad or attach): sets the sampler up unless sampler=safepoint, or says once on
 * stderr why it falls back to the safepoint sampler. Returns whether it runs. */
bool cpu_async_start(jvmtiEnv *jvmti, const struct hprof_options *opts);
bool cpu_async_active(void);

/* VM init / attach: jmethodIDs for the classes loaded so far, the virtual-thread boundary. */
void cpu_async_vm_init(jvmtiEnv *jvmti, JNIEnv *jni);
/* ClassPrepare: jmethodIDs for the class's methods. */
void cpu_async_class_prepare(jvmtiEnv *jvmti, jclass klass);

/* On the thread itself: a timer for it (returns its slot, or -1), and its end. */
int32_t cpu_async_cover_current(JNIEnv *jni, struct thread_info *info, jthread thread,
                                bool enabled);
void cpu_async_uncover_current(JNIEnv *jni);

/* Turns the ring's records into counts (cpu_sampler_add_samples). Any thread with a JNIEnv;
 * serialised inside. */
void cpu_async_drain(jvmtiEnv *jvmti, JNIEnv *jni);
/* How often the agent thread drains when it has no rounds to run. */
#define CPU_ASYNC_DRAIN_NS INT64_C(20000000)

/* VM death: stops every timer (before the last drain and the exit dump). */
void cpu_async_stop(void);

/* Checks (from the agent thread, now and then) that nobody took the signal over; logs once
 * and returns false if someone did (the caller then samples every thread by rounds). */
bool cpu_async_check_signal(void);

/* The verbose message at exit. */
void cpu_async_log_stats(void);

#endif

/* cpu=samples' asynchronous sampler, JVMTI side: decides at start whether it can run
 * (AsyncGetCallTrace exported, SIGPROF free, thread CPU-time timers available), keeps the
 * JVM ready for AsyncGetCallTrace (jmethodIDs for every class, ClassLoad and
 * CompiledMethodLoad events on), gives each thread its timer (cpu_timers.h), starts the late
 * walker (late_walk.h), and tells the drain about its records (async_sampler_source). It never
 * counts: cpu_profile.c drains the records its handler produces. doc/cpu-samples.md explains
 * the mechanism and its limits.
 *
 * sampled_threads.c keeps the thread list and the switches; a listed thread with a timer is
 * sampled here, one without (started before an attach, or its timer failed) by the safepoint
 * rounds (safepoint_round.c). */
#ifndef HPROF_ASYNC_SAMPLER_H
#define HPROF_ASYNC_SAMPLER_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu_profile.h"
#include "options.h"

struct thread_info;

/* Capabilities, callbacks and events for the async sampler (called whether or not it will
 * run: they are cheap). */
void async_sampler_add_capabilities(jvmtiCapabilities *caps);
void async_sampler_set_callbacks(jvmtiEventCallbacks *cb);

/* At start (OnLoad or attach), after cpu_profile_init: sets the sampler up unless
 * sampler=safepoint and gives the profile its records (cpu_profile_take_records). Returns
 * hprof_ok() (running, or not asked for: async_sampler_active says which) or why it cannot
 * run; the caller says so once and falls back to the safepoint sampler. */
struct hprof_error async_sampler_start(jvmtiEnv *jvmti, const struct hprof_options *opts);
bool async_sampler_active(void);

/* VM init / attach: jmethodIDs for the classes loaded so far, the late walker. */
void async_sampler_vm_init(jvmtiEnv *jvmti, JNIEnv *jni);
/* ClassPrepare: jmethodIDs for the class's methods. */
void async_sampler_class_prepare(jvmtiEnv *jvmti, jclass klass);

/* On the thread itself: a timer for it (returns its slot, or -1), and its end. */
int32_t async_sampler_cover_current(JNIEnv *jni, struct thread_info *info, jthread thread,
                                    bool enabled);
void async_sampler_uncover_current(JNIEnv *jni);

/* What the drain (cpu_profile.h) asks of this engine: slot epochs, lost samples, references
 * to free once the records that name them are consumed. */
extern const struct sample_source async_sampler_source;

/* VM death: stops every timer (before the last drain and the exit dump). */
void async_sampler_stop(void);

/* Checks (from the agent thread, now and then) that nobody took the signal over; logs once
 * and returns false if someone did (the caller then samples every thread by rounds). */
bool async_sampler_check_signal(void);

/* The verbose message at exit. */
void async_sampler_log_stats(void);

#endif

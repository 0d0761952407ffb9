/* cpu=samples' asynchronous sampler, signal side: a CPU-time timer per Java thread
 * (timer_create on the thread's own CPU clock, delivering SIGPROF to that thread alone), the
 * SIGPROF handler, and the thread slots it reads. The handler interrupts the thread where it
 * runs, walks its Java stack with AsyncGetCallTrace (agct_stack_walk) and writes one record
 * into the preallocated lock-free ring of sample_records.h, which the profile drains
 * (cpu_profile.c). It only produces: the handler calls no malloc, takes no lock and makes no
 * JVMTI or JNI call: it reads the slot named by the timer's value (index and generation),
 * claims a record, walks, publishes (or hands a record out of Java code to late_walk.h).
 *
 * A timer fires once per interval of the thread's CPU time, so a thread that sleeps, parks or
 * blocks gets no signal. The kernel checks CPU timers at its tick (CONFIG_HZ): an interval
 * shorter than the tick fires once per tick with the missed expiries in si_overrun, which
 * the record carries as its weight (1 + overruns), so counts stay CPU time / interval.
 *
 * Slots are never freed: a thread that ends leaves its slot "ended" until the drain has
 * consumed every record claimed before the end, then it is reused with a new generation, so
 * a late signal or a record in the ring never meets another thread's slot. */
#ifndef HPROF_CPU_TIMERS_H
#define HPROF_CPU_TIMERS_H

#include <jni.h>
#include <stdbool.h>
#include <stdint.h>

#include "sample_records.h"

/* The signal used. HotSpot leaves it to tools (it uses SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGUSR2, SIGQUIT, SIGPIPE, SIGXFSZ and the shutdown signals). */
#define CPU_TIMERS_SIGNAL SIGPROF

enum cpu_timers_setup {
    CPU_TIMERS_OK = 0,
    CPU_TIMERS_SIGNAL_TAKEN, /* the application or another agent handles the signal */
    CPU_TIMERS_NO_TIMER,     /* the kernel refused a thread CPU-time timer */
    CPU_TIMERS_NO_MEMORY,
};

/* Checks that the signal is free and that a thread CPU-time timer can be made, allocates the
 * records' ring (sample_records_init) for records of up to max_frames frames, installs the
 * handler. interval_ns: the CPU time between two signals of one thread. The handler walks
 * sample_records_depth() frames. */
enum cpu_timers_setup cpu_timers_setup(int64_t interval_ns, int max_frames);
bool cpu_timers_active(void);

/* Whether our handler is still the signal's handler (another agent may have replaced it). */
bool cpu_timers_handler_intact(void);

/* On the thread itself (ThreadStart, VM init): gives the current thread a slot and a timer,
 * armed when enabled. env: its JNIEnv; owner: a word the records carry; thread_ref: a global
 * reference to the thread for samples walked late (late_walk.h; 0: none), the slot's from
 * now on (handed back by cpu_timers_recycle). Returns the slot index, or -1 (no timer: the
 * thread is left to the safepoint sampler; thread_ref stays the caller's). */
int32_t cpu_timers_add_current(JNIEnv *env, uintptr_t owner, uintptr_t thread_ref, bool enabled);
/* On the thread itself (ThreadEnd): deletes its timer and ends its slot. */
void cpu_timers_remove_current(void);
/* The current thread's slot (-1: none). */
int32_t cpu_timers_current(void);

/* Switches a thread's sampling (any thread, not from the handler): arms or disarms its timer
 * and bumps its epoch, so records taken before the switch are discarded by the drain. */
void cpu_timers_set_enabled(int32_t slot, bool on);
/* Bumps every slot's epoch (CONTROL_CLEAR_CPU_SAMPLES): records in the ring are discarded. */
void cpu_timers_bump_epochs(void);

/* The virtual thread mounted on the current thread (on the carrier, from the mount and
 * unmount events): vthread is a weak reference owned by the caller, kept until the drain says
 * it may be freed (cpu_timers_retired_vthread); NULL at unmount keeps the last one. */
void cpu_timers_mount_current(uintptr_t vthread, bool mounted);
uintptr_t cpu_timers_mounted_vthread(void);

/* Drain side (one thread at a time). */
/* Whether a record is still current (the slot's epoch has not moved on). */
bool cpu_timers_record_current(const struct sample_record *rec);
/* Samples lost because the ring was full, per slot, taken (reset to 0) with their owner.
 * Calls fn for each slot with a loss. */
void cpu_timers_take_lost(void (*fn)(uintptr_t owner, uint64_t weight, void *arg), void *arg);
/* After a drain: ended slots whose records were all consumed become reusable; the thread
 * reference each had is passed to release. */
void cpu_timers_recycle(void (*release)(uintptr_t thread_ref, void *arg), void *arg);

/* Stops sampling for good (VM death): every timer deleted, the handler returns at once.
 * The handler stays installed (a signal still pending must not kill the process). */
void cpu_timers_stop(void);

struct cpu_timers_stats {
    uint64_t signals;    /* handler entries with a current slot */
    uint64_t foreign;    /* signals not from our timers (kill -PROF), ignored */
    uint64_t stale;      /* signals for an ended slot or after stop */
    uint64_t lost;       /* weight lost because the ring was full */
    uint64_t threads;    /* timers created */
    uint64_t failures;   /* timers that could not be created */
    uint64_t handler_ns; /* CPU time spent in the handler (claim, walk, publish) */
    uint64_t retried;    /* walks retried from the return address (unknown/not walkable Java) */
    uint64_t recovered;  /* of those, walked from the caller */
};
void cpu_timers_get_stats(struct cpu_timers_stats *out);

#endif

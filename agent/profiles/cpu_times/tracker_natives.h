/* The native side of hprof/Tracker for cpu=times and cpu=old: nativeEntry and nativeExit, called
 * by every rewritten method at entry and at each exit, and the per-thread state they feed (a
 * shadow stack with its counters, agent/profiles/cpu_times/shadow_stack.h). See doc/cpu-times.md.
 *
 * The hot path takes no lock and allocates nothing (except when a thread meets a new trace or
 * a deeper stack): the thread's state is found through a C thread-local pointer, and time is
 * read from the CPU's time-stamp counter. A virtual thread moves between carrier threads, so the
 * pointer is switched at every mount and unmount (HotSpot's VirtualThreadMount/Unmount extension
 * events); where those events are missing the state is looked up through JVMTI thread-local
 * storage on every call instead (slower, still right). */
#ifndef HPROF_TRACKER_NATIVES_H
#define HPROF_TRACKER_NATIVES_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "hprof_error.h"

#include "shadow_stack.h"

/* per_method: cpu=old (per-method inclusive time); per_thread: thread=y; depth: depth=. */
int tracker_natives_init(bool per_method, bool per_thread, int depth);

/* What the probes do. Everything but TRACKER_PROBE_COUNT is a diagnostic that counts nothing:
 * bench/cpu-times-floor.sh measures with them what the mechanism costs before any counting
 * (doc/cpu-times.md, "The floor"). Chosen with the environment variable HPROF_CPU_TIMES_PROBE. */
enum tracker_probe {
    TRACKER_PROBE_COUNT,       /* (unset) the natives count and time every call */
    TRACKER_PROBE_NOOP,        /* noop: natives that return at once */
    TRACKER_PROBE_CLOCK,       /* clock: natives that read the clock and log it, thread-locally */
    TRACKER_PROBE_JAVA_EMPTY,  /* java-empty: a tracker of empty Java methods, no natives */
    TRACKER_PROBE_JAVA_CLOCK,  /* java-clock: Java methods that read System.nanoTime() */
    TRACKER_PROBE_JAVA_STORE,  /* java-store: Java methods that store the event in a ring */
    TRACKER_PROBE_JAVA_BUFFER, /* java-buffer: ... in the current thread's own buffer */
};

/* The probe HPROF_CPU_TIMES_PROBE asks for in *probe (TRACKER_PROBE_COUNT: none, count), or
 * an error naming the values when it is unknown (the caller logs it). */
struct hprof_error tracker_natives_probe_from_env(int *probe);

/* Registers methodEntry/methodExit on the tracker class (the natives of the probe: for the
 * java-* probes the class has no natives and nothing is registered), and starts counting.
 * Returns hprof_ok() or why not (the caller logs it: nothing is tracked). */
struct hprof_error tracker_natives_register(JNIEnv *jni, jclass tracker, enum tracker_probe probe);

/* VM death: the natives count nothing from now on. */
void tracker_natives_disengage(void);

/* Asks for HotSpot's virtual-thread mount/unmount extension events (JDK 21+), when the VM may
 * run virtual threads. Without them every call looks its state up through JVMTI. */
void tracker_natives_watch_virtual_threads(jvmtiEnv *jvmti, bool vm_has_virtual_threads);

/* The depth= of new traces (a CONTROL command may change it). */
void tracker_natives_set_depth(int depth);

/* Agent work on an application thread (rewriting a class it loads): the time from pause to
 * resume is taken out of that thread's tracked time. */
uint64_t tracker_natives_pause(void);
void tracker_natives_resume(uint64_t paused);

/* ThreadEnd, on the ending platform thread: its counts go to the totals, its state is freed. */
void tracker_natives_thread_end(void);

/* Every thread's counts so far (ended threads included), traces cut to depth frames. The
 * caller frees the result; NULL when out of memory. */
struct shadow_totals *tracker_natives_collect(unsigned depth);

/* Ticks of tracker time -> nanoseconds. */
uint64_t tracker_natives_ticks_to_ns(uint64_t ticks);

struct tracker_natives_stats {
    uint64_t threads, unmatched_exits, unwound, overflow;
    uint64_t folded;      /* call-path counters of unloaded classes moved to the totals */
    bool tsc;             /* time from the time-stamp counter (else CLOCK_MONOTONIC) */
    bool per_call_lookup; /* no mount/unmount events: JVMTI storage lookup on each call */
};
struct tracker_natives_stats tracker_natives_stats(void);

#endif

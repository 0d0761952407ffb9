/* wall=y's stacks of threads running Java code, taken by the threads themselves: the sampler
 * sends the thread a signal (SIGVTALRM, with rt_tgsigqueueinfo: that thread alone), whose
 * handler walks the interrupted stack with AsyncGetCallTrace (agct_stack_walk) into a buffer
 * the sampler gave, then wakes the sampler. A GetStackTrace of a thread in Java is a handshake
 * that the sampler waits for by spinning until the thread reaches a safepoint poll (about 115
 * us of sampler CPU per walk, measured); a signal costs the sampler one system call and a
 * sleep, the thread a few microseconds, and the stack is where the thread was, not at its
 * next poll. doc/wall-samples.md, "How threads are chosen per tick".
 *
 * A thread gets a slot when it starts (on itself: its JNIEnv and its kernel id). The handler
 * calls no malloc, takes no lock, makes no JVMTI or JNI call: it finds the slot by the index
 * and generation the signal carries, takes the request by a compare-and-swap (so a request
 * the sampler gave up on is never written to afterwards) and walks. Whatever it cannot walk
 * (VM or native code, a method without a jmethodID yet, a GC) the sampler walks with
 * GetStackTrace, as it does for threads without a slot. */
#ifndef HPROF_WALL_SIGNALS_H
#define HPROF_WALL_SIGNALS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The signal: the one async-profiler's wall mode uses; HotSpot leaves it alone. */
#define WALL_SIGNALS_SIGNAL SIGVTALRM

/* At start: installs the handler if AsyncGetCallTrace is there and the signal is free.
 * Returns NULL (on) or why not (then every stack is taken by GetStackTrace). */
const char *wall_signals_start(void);
bool wall_signals_active(void);

/* On the thread itself (ThreadStart, VM init): its slot, or -1 (none: GetStackTrace). */
int32_t wall_signals_add_current(JNIEnv *env);
/* The slot's thread ends (the caller makes sure no request of it is pending). */
void wall_signals_remove(int32_t slot);

/* Sampler: a new tick's requests follow (the last tick's are all collected). */
void wall_signals_begin(void);
/* Sampler: asks slot's thread for up to depth frames into frames (the caller's, untouched by
 * the caller until wall_signals_collect). False: not sent (walk it another way). */
bool wall_signals_request(int32_t slot, jvmtiFrameInfo *frames, int depth);
/* Sampler: sleeps until every request since wall_signals_begin has been answered, or until
 * deadline_ns (monotonic). */
void wall_signals_wait(uint64_t deadline_ns);
/* Sampler, after the wait: the frames' count (frames as GetStackTrace gives them), or -1 (no
 * answer by the deadline, or AGCT could not walk it: walk it another way). Either way the
 * handler no longer touches the frames after this returns. *cpu_ns: the thread's CPU time
 * when its handler ended, walkable or not (0: no answer): the stack is that of this CPU time,
 * and the handler's own CPU is no sign that the thread ran. */
int wall_signals_collect(int32_t slot, uint64_t *cpu_ns);

struct wall_signals_stats {
    uint64_t sent, walked, failed, timeouts; /* requests; walked by the handler; not; unanswered */
    uint64_t handler_ns;                     /* CPU in the handler */
};
void wall_signals_get_stats(struct wall_signals_stats *out);

#endif

/* The current thread's stack through HotSpot's exported AsyncGetCallTrace (AGCT), for two
 * users. cpu=samples' async sampler calls agct_stack_walk from its SIGPROF handler with the
 * interrupted context (doc/cpu-samples.md). heap=sites' HPROF_SITES_AGCT_CHECK diagnostic
 * calls agct_stack_get, which compares it with GetStackTrace on
 * every allocation event (doc/heap-sites.md, "Mechanism": from an allocation event AGCT
 * cannot walk most compiled frames, and it returns a truncated or wrong stack in a few cases,
 * so heap=sites never records its answer). AGCT is an unsupported export of libjvm (no
 * header, no specification; the structures in agct_stack.c follow its long-standing public
 * description). Called from a JVMTI event callback, the thread is in native state with its
 * last Java frame recorded as the walk's anchor, and AGCT walks from there when that anchor is
 * walkable, with no handshake, no safepoint and no allocation.
 *
 * Every failure (no AGCT in this VM, an error code, a frame whose method has no jmethodID
 * yet, an unexpected location) makes agct_stack_get return -1, and the caller uses
 * GetStackTrace instead. */
#ifndef HPROF_AGCT_STACK_H
#define HPROF_AGCT_STACK_H

#include <jvmti.h>
#include <stdbool.h>

/* Looks AGCT up. Returns whether it is there (then the caller must also call
 * agct_stack_enable_events and keep jmethodIDs for loaded classes). Safe to call twice. */
bool agct_stack_init(void);
bool agct_stack_available(void);

/* AGCT answers only while some environment has ClassLoad events enabled (its way of knowing
 * that jmethodIDs are being kept): enables them, with a callback that does nothing unless
 * cb->ClassLoad was already set. Call from set_callbacks / start. */
void agct_stack_set_callbacks(jvmtiEventCallbacks *cb);
int agct_stack_enable_events(jvmtiEnv *jvmti);

/* Makes sure every method of klass has a jmethodID (AGCT reports NULL for one that has not). */
void agct_stack_prepare_class(jvmtiEnv *jvmti, jclass klass);

/* Up to depth frames of the current thread, top first, into frames (jmethodID and location
 * as GetStackTrace gives them: the bytecode index, -1 for a native method). Only from a JVMTI
 * event callback posted on the current thread while it is in native state with Java frames
 * (SampledObjectAlloc). Returns the number of frames, or -1: use GetStackTrace. */
int agct_stack_get(JNIEnv *jni, jvmtiFrameInfo *frames, int depth);

/* Converts in place n frames that AGCT wrote into frames (as struct async_frame, the same
 * size) into jvmtiFrameInfo. Returns n, or -1 when a frame has no jmethodID yet or an
 * unexpected location (use GetStackTrace). */
int agct_stack_to_frame_info(jvmtiFrameInfo *frames, int n);

/* AGCT's frame, from its public description: the bytecode index of a Java frame
 * (ASYNC_FRAME_NATIVE for a native method) and the jmethodID (NULL when the method has none). */
struct async_frame {
    jint lineno;
    jmethodID method_id;
};
#define ASYNC_FRAME_NATIVE (-3)

/* AGCT's negative frame counts: why a stack could not be walked. */
enum async_ticks {
    ASYNC_TICKS_NO_CLASS_LOAD = -1,         /* no environment has ClassLoad events on */
    ASYNC_TICKS_GC_ACTIVE = -2,             /* a GC runs, or a method was not valid */
    ASYNC_TICKS_UNKNOWN_NOT_JAVA = -3,      /* in VM or native code, no usable last Java frame */
    ASYNC_TICKS_NOT_WALKABLE_NOT_JAVA = -4, /* same, and the last Java frame is not walkable */
    ASYNC_TICKS_UNKNOWN_JAVA = -5,          /* in Java code at a pc with no frame information */
    ASYNC_TICKS_NOT_WALKABLE_JAVA = -6,     /* in Java code, the frame is not walkable */
    ASYNC_TICKS_UNKNOWN_STATE = -7,         /* the thread is in a state AGCT does not handle */
    ASYNC_TICKS_THREAD_EXIT = -8,           /* the thread is exiting (or env_id is not its own) */
    ASYNC_TICKS_DEOPT = -9,                 /* deoptimizing */
    ASYNC_TICKS_SAFEPOINT = -10,            /* at a safepoint */
    ASYNC_TICKS_SKIPPED = -11,              /* newer JDKs: walk skipped */
};

/* One AGCT call from a signal handler (async-signal-safe as far as AGCT is): up to depth
 * frames of the current thread, walked from the interrupted context ucontext, into frames.
 * env: the current thread's JNIEnv. Returns the frame count, or a negative async_ticks
 * (ASYNC_TICKS_UNKNOWN_STATE when AGCT is not there). */
int agct_stack_walk(JNIEnv *env, struct async_frame *frames, int depth, void *ucontext);

#endif

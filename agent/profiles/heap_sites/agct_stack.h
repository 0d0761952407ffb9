/* The current thread's stack through HotSpot's exported AsyncGetCallTrace (AGCT), for the
 * HPROF_SITES_AGCT_CHECK diagnostic of heap=sites, which compares it with GetStackTrace on
 * every allocation event (doc/heap-sites.md, "Mechanism": from an allocation event AGCT
 * cannot walk most compiled frames, and it returns a truncated or wrong stack in a few cases,
 * so heap=sites never records its answer). AGCT is an unsupported export of libjvm (no
 * header, no specification; the structures in agct_stack.c follow its long-standing public
 * description). Called from a JVMTI event callback, the thread is in native state with its
 * last Java frame recorded as the walk's anchor, and AGCT walks from there when that anchor is
 * walkable, with no handshake, no safepoint and no allocation.
 *
 * Every failure (no AGCT in this VM, an error code, a frame whose method has no jmethodID
 * yet, an unexpected location) makes async_stack_get return -1, and the caller uses
 * GetStackTrace instead. */
#ifndef HPROF_AGCT_STACK_H
#define HPROF_AGCT_STACK_H

#include <jvmti.h>
#include <stdbool.h>

/* Looks AGCT up. Returns whether it is there (then the caller must also call
 * async_stack_enable_events and keep jmethodIDs for loaded classes). Safe to call twice. */
bool async_stack_init(void);
bool async_stack_available(void);

/* AGCT answers only while some environment has ClassLoad events enabled (its way of knowing
 * that jmethodIDs are being kept): enables them, with a callback that does nothing unless
 * cb->ClassLoad was already set. Call from set_callbacks / start. */
void async_stack_set_callbacks(jvmtiEventCallbacks *cb);
int async_stack_enable_events(jvmtiEnv *jvmti);

/* Makes sure every method of klass has a jmethodID (AGCT reports NULL for one that has not). */
void async_stack_prepare_class(jvmtiEnv *jvmti, jclass klass);

/* Up to depth frames of the current thread, top first, into frames (jmethodID and location
 * as GetStackTrace gives them: the bytecode index, -1 for a native method). Only from a JVMTI
 * event callback posted on the current thread while it is in native state with Java frames
 * (SampledObjectAlloc). Returns the number of frames, or -1: use GetStackTrace. */
int async_stack_get(JNIEnv *jni, jvmtiFrameInfo *frames, int depth);

#endif

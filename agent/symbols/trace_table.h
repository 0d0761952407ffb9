/* Stack traces: (thread serial when thread=y, frame serials) -> trace serial, so stacks that
 * differ only in locations of one line are one trace. Serial 1 is the empty
 * trace ("no trace"). Thread-safe; a known trace costs one hash lookup under a short lock. */
#ifndef HPROF_TRACE_TABLE_H
#define HPROF_TRACE_TABLE_H

#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

/* 16 bytes a trace (kept for the life of the process: outputs name it); its serial is its index
 * + 1. */
struct trace_info {
    uint32_t thread_serial; /* 0 unless thread=y */
    uint16_t nframes;       /* depth= is at most 1024 */
    /* Set when its lookups are forgotten (trace_table_forget): a frame names a forgotten method,
     * so no stack resolves to this trace again and nothing new is counted under it. */
    atomic_bool forgotten;
    uint32_t *frames; /* frame serials, top first (never moves nor goes while the agent runs) */
};

int trace_table_init(int depth);

/* The stack depth to record (depth=, changed at run time by the CONTROL command). */
int trace_table_depth(void);
void trace_table_set_depth(int depth);

/* The serial of the trace made of frames[0..n) (top first) seen on thread_serial (pass 0
 * when traces are not per thread). Returns HPROF_TRACE_SERIAL_NONE for n == 0, and also
 * when a frame cannot be read. */
uint32_t trace_table_intern(jvmtiEnv *jvmti, const jvmtiFrameInfo *frames, jint n,
                            uint32_t thread_serial);

/* The trace new stacks of thread_serial (0 unless thread=y) are counted under past the memory
 * budget (memory=): one frame, <memory_budget_reached>.<new_stacks>, made on first call.
 * HPROF_TRACE_SERIAL_NONE when even that cannot be made. */
uint32_t trace_table_overflow(jvmtiEnv *jvmti, uint32_t thread_serial);

/* Forgets the raw-stack lookups that hold a method of a class with classes[serial] != 0
 * (serial < n), classes unloaded some time ago, whose stacks no walk gives any more, and the
 * lookups by frame serials of traces with a frame of such a class (its method is forgotten next,
 * so no stack resolves to that frame again). Their traces stay with their frame lists (outputs
 * name them; serials are never reused). Call before frame_table_forget (the methods' classes are
 * looked up there). Returns the lookups dropped. */
size_t trace_table_forget(const uint8_t *classes, uint32_t n);

/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void trace_table_teardown(void);

const struct trace_info *trace_table_get(uint32_t serial);
uint32_t trace_table_count(void);

/* The top frame's "class.method" label, "<empty>" for the empty trace. */
void trace_table_top_label(uint32_t serial, char *buf, size_t len);

#endif

/* Forgets, in batches, the lookups of unloaded classes' methods, frames and raw stacks
 * (frame_table_forget, trace_table_forget): the indexes that turn what a stack walk gives
 * (jmethodIDs and locations) into serials. An unloaded class's methods are never on a stack
 * again, so those lookups only cost memory (and HotSpot may hand a freed jmethodID to a new
 * method, which a stale lookup would misname). The entries stay: outputs name their serials,
 * which are never reused.
 *
 * An unload seen at one pass is forgotten at the next one, at least FORGET_BATCH unloads later,
 * so that a stack walked just before the unload and resolved a little later (cpu=samples'
 * drain) still finds its frames. Thread-safe; a pass runs on the thread that polls, one at a
 * time. doc/memory.md. */
#ifndef HPROF_UNLOAD_FORGET_H
#define HPROF_UNLOAD_FORGET_H

#include <stdint.h>

#define FORGET_BATCH 256u

/* Runs a pass when FORGET_BATCH classes (and a sixteenth of the classes still loaded) were
 * unloaded since the last one; cheap otherwise (one atomic load). Call where new stacks are
 * resolved. */
void unload_forget_poll(void);

/* Runs a pass now (tests, dumps). Returns the classes whose lookups this pass forgot. */
uint32_t unload_forget_pass(void);

/* Frees the per-class state (teardown). */
void unload_forget_teardown(void);

#endif

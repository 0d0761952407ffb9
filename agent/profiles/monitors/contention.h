/* The parts of monitor=y that need no running JVM, so they are unit tested on their own:
 * contention totals per (monitor class, trace), the MONITOR TIME rows made from them
 * (nanoseconds in, whole milliseconds out: the JDK 8 agent got this unit wrong), and the
 * JVMTI thread state -> MONITOR DUMP status bits. Only jvmti.h constants are used. */
#ifndef HPROF_CONTENTION_H
#define HPROF_CONTENTION_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* Contended monitor entries: (class serial, trace serial) -> how many, how long. */
struct contention_table;

struct contention_row {
    uint32_t class_serial, trace_serial;
    uint64_t count; /* contended entries */
    uint64_t ns;    /* time blocked in them, nanoseconds */
};

struct contention_table *contention_new(void);
void contention_free(struct contention_table *t);
struct mem_use;
/* Adds the table's rows and bytes to *u (verbose=y's memory report). */
void contention_measure(struct contention_table *t, struct mem_use *u);

/* Adds one contended entry that blocked for ns nanoseconds. Thread-safe (one short lock).
 * Returns 0, or -1 when memory ran out (the entry is then lost). */
int contention_add(struct contention_table *t, uint32_t class_serial, uint32_t trace_serial,
                   uint64_t ns);

/* A consistent copy of every row (malloc'ed, caller frees; NULL when there are none or memory
 * ran out) and the total time in *total_ns. Thread-safe. */
size_t contention_snapshot(struct contention_table *t, struct contention_row **rows,
                           uint64_t *total_ns);

/* Nanoseconds -> whole milliseconds, rounded half up. */
static inline uint64_t monitor_ns_to_ms(uint64_t ns)
{
    return (ns + 500000u) / 1000000u;
}

/* Turns ranked rows whose cost is in nanoseconds into MONITOR TIME rows: sorts them (largest
 * first), cuts rows below cutoff (a ratio of the exact nanosecond total), then converts each
 * kept row's cost to whole milliseconds. Returns how many rows are kept; *total_ms is the
 * report's total: the rounded nanosecond total, raised if need be to the sum of the rounded
 * rows, so the accumulated percentage never passes 100%. */
size_t contention_time_rows(struct hprof_cost_row *rows, size_t n, uint64_t total_ns, double cutoff,
                            uint64_t *total_ms);

/* JVMTI thread state (GetThreadState) -> enum hprof_thread_status_bits:
 * not alive -> ZO; blocked entering a monitor -> MW; Object.wait and parking (LockSupport,
 * java.util.concurrent conditions) -> CW; Thread.sleep -> SL; anything else alive -> R;
 * plus the S (suspended) and I (interrupted) modifiers. */
unsigned contention_thread_status(jint jvmti_state);

#endif

/* CPU sample counts: trace serial -> number of samples, the aggregate behind CPU SAMPLES.
 * Pure C and not thread-safe: cpu_profile.c, its one user, guards it with its own lock
 * (writers: the drain and the safepoint rounds; readers at dumps). */
#ifndef HPROF_SAMPLE_COUNTS_H
#define HPROF_SAMPLE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "writer.h"

struct sample_counts;

struct sample_counts *sample_counts_new(void);
void sample_counts_free(struct sample_counts *c);

/* Adds n samples to trace serial (>= 1). Returns 0, or -1 when memory ran out (the samples
 * are then dropped, and counted in sample_counts_dropped). */
int sample_counts_add(struct sample_counts *c, uint32_t serial, uint64_t n);

/* Forgets every count (CONTROL_CLEAR_CPU_SAMPLES). */
void sample_counts_clear(struct sample_counts *c);

/* Sum of all counts, the "(total = N)" of CPU SAMPLES. */
uint64_t sample_counts_total(const struct sample_counts *c);
/* How many traces have a count. */
size_t sample_counts_traces(const struct sample_counts *c);
uint64_t sample_counts_dropped(const struct sample_counts *c);
/* The count of one trace (0 if none). */
uint64_t sample_counts_get(const struct sample_counts *c, uint32_t serial);

/* Fills rows[0..sample_counts_traces()) with (trace, count, cost = count), in no particular
 * order, method NULL. Returns the number of rows written (at most max). */
size_t sample_counts_rows(const struct sample_counts *c, struct hprof_cost_row *rows, size_t max);

#endif

/* Ranking of report rows, shared by every ranked section (CPU SAMPLES, CPU TIME, MONITOR
 * TIME): sort by cost, largest first, and leave out rows below the cutoff ratio. Pure C. */
#ifndef HPROF_RANKING_H
#define HPROF_RANKING_H

#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* Sorts rows[0..n) by cost descending (ties: smaller trace serial first, so output is
 * stable), then returns how many leading rows have cost/total >= cutoff. total 0 -> 0. */
size_t ranking_sort_and_cut(struct hprof_cost_row *rows, size_t n, uint64_t total, double cutoff);

#endif

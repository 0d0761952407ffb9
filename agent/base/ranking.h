/* Ranking of report rows, shared by every ranked section (SITES, CPU SAMPLES, CPU TIME, CPU TIME
 * BY METHOD, MONITOR TIME): sort, largest first, and leave out rows below the cutoff. Pure C. */
#ifndef HPROF_RANKING_H
#define HPROF_RANKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* The one cutoff rule: a row stays when cost / total >= cutoff. A total of 0 (nothing live, no
 * time, no samples) leaves no share to rank: no row stays, whatever the cutoff. */
bool ranking_keeps(uint64_t cost, uint64_t total, double cutoff);

/* Sorts rows[0..n) (each size bytes) with order (best first; ctx is passed to order and cost),
 * then returns how many leading rows ranking_keeps by their cost. */
size_t ranking_rank(void *rows, size_t n, size_t size,
                    int (*order)(const void *, const void *, void *),
                    uint64_t (*cost)(const void *, void *), void *ctx, uint64_t total,
                    double cutoff);

/* ranking_rank of cost rows by cost descending (ties: smaller trace serial first, so output is
 * stable). */
size_t ranking_sort_and_cut(struct hprof_cost_row *rows, size_t n, uint64_t total, double cutoff);

#endif

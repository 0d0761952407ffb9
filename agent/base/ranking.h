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

/* Names each of rows[0..n) (its method) with label(trace serial, buffer, 512), all in one buffer
 * the caller frees once the rows are written; NULL when n is 0 or memory ran out (the rows keep
 * their method). CPU SAMPLES and WALL SAMPLES name a row by its trace's top frame. */
char *ranking_label_rows(struct hprof_cost_row *rows, size_t n,
                         void (*label)(uint32_t trace_serial, char *buf, size_t len));

#endif

#include "ranking.h"

#include <stdlib.h>

bool ranking_keeps(uint64_t cost, uint64_t total, double cutoff)
{
    return total != 0 && (double)cost / (double)total >= cutoff;
}

size_t ranking_rank(void *rows, size_t n, size_t size,
                    int (*order)(const void *, const void *, void *),
                    uint64_t (*cost)(const void *, void *), void *ctx, uint64_t total,
                    double cutoff)
{
    if (n == 0)
        return 0;
    qsort_r(rows, n, size, order, ctx);
    size_t keep = 0;
    while (keep < n && ranking_keeps(cost((const char *)rows + keep * size, ctx), total, cutoff))
        keep++;
    return keep;
}

static int by_cost_desc(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const struct hprof_cost_row *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->trace_serial > y->trace_serial) - (x->trace_serial < y->trace_serial);
}

static uint64_t cost_row_cost(const void *row, void *ctx)
{
    (void)ctx;
    return ((const struct hprof_cost_row *)row)->cost;
}

size_t ranking_sort_and_cut(struct hprof_cost_row *rows, size_t n, uint64_t total, double cutoff)
{
    return ranking_rank(rows, n, sizeof *rows, by_cost_desc, cost_row_cost, NULL, total, cutoff);
}

#define RANKING_LABEL_LEN 512

char *ranking_label_rows(struct hprof_cost_row *rows, size_t n,
                         void (*label)(uint32_t trace_serial, char *buf, size_t len))
{
    char *labels = n ? malloc(n * RANKING_LABEL_LEN) : NULL;
    for (size_t i = 0; i < n && labels; i++) {
        label(rows[i].trace_serial, labels + i * RANKING_LABEL_LEN, RANKING_LABEL_LEN);
        rows[i].method = labels + i * RANKING_LABEL_LEN;
    }
    return labels;
}

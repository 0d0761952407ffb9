#include "ranking.h"

#include <stdlib.h>

static int by_cost_desc(const void *a, const void *b)
{
    const struct hprof_cost_row *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return (x->trace_serial > y->trace_serial) - (x->trace_serial < y->trace_serial);
}

size_t ranking_sort_and_cut(struct hprof_cost_row *rows, size_t n, uint64_t total, double cutoff)
{
    if (n == 0 || total == 0)
        return 0;
    qsort(rows, n, sizeof *rows, by_cost_desc);
    size_t keep = 0;
    while (keep < n && (double)rows[keep].cost / (double)total >= cutoff)
        keep++;
    return keep;
}

/*
 * report_sites.c: live and retained bytes by allocation site. See report_sites.h.
 */
#include "report_sites.h"

#include <inttypes.h>
#include <stdlib.h>

#define NUM(buf, v) (snprintf((buf), sizeof(buf), "%" PRIu64, (uint64_t)(v)), (buf))

void report_sites_summary(const struct heap_sites *s, struct rout *out)
{
    rout_kv_num(out, "objects_with_site", s->with);
    rout_kv_num(out, "objects_without_site", s->without);
    if (!s->site)
        rout_kv_str(out, "allocation_sites",
                    "none: every object names the empty trace (HotSpot's dumps, or this "
                    "agent's without heap=sites), no per-site view");
    else {
        char b[64];
        snprintf(b, sizeof b, "%" PRIu32 " (section \"sites\")", s->ns - 1);
        rout_kv_str(out, "allocation_sites", b);
    }
}

int report_sites(const struct heap_analysis *a, const struct heap_sites *s,
                 const struct report_opts *o, struct rout *out)
{
    if (!s->site)
        return 0;
    uint32_t *k = malloc(((size_t)s->ns + 1) * sizeof *k);
    if (!k)
        return -1;
    uint32_t n = heap_sites_sorted(s, k);
    static const struct rout_col cols[] = {
        {"objects", 'n', 10},      {"live_bytes", 'n', 12}, {"retained_bytes", 'n', 14},
        {"retained_pct", 'n', 12}, {"trace", 'n', 7},       {"class", 's', 28},
        {"stack", 's', 0}};
    rout_table_begin(out, "sites", "Allocation sites by retained size", cols, 7);
    for (uint32_t i = 0; i < n && i < o->top; i++) {
        const struct hs_site *t = &s->s[k[i]];
        char n1[24], n2[24], n3[24], n4[24], pct[16], stack[4096];
        double share =
            a->reachable_bytes ? 100.0 * (double)t->retained / (double)a->reachable_bytes : 0;
        snprintf(pct, sizeof pct, "%.2f", share);
        const char *cells[] = {
            NUM(n1, t->count),
            NUM(n2, t->shallow),
            NUM(n3, t->retained),
            pct,
            NUM(n4, s->traces[t->trace].serial),
            a->g->classes[t->cls].name,
            heap_sites_stack(s, a->g, t->trace, REPORT_SITES_FRAMES, stack, sizeof stack)};
        rout_row(out, cells);
    }
    rout_section_end(out);
    free(k);
    return 0;
}

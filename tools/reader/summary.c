/*
 * summary.c: the summary hprof-read prints: top sites, top samples, frames as text.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Summary                                                                                    */

static char *frame_string(struct parser *P, uint64_t fid)
{
    uint32_t fi;
    if (!fid || !map_get(&P->frames, fid, &fi))
        return hp_xstrndup(P, "", 0);
    const struct frame *f = &P->fr.v[fi];
    const char *cls = "?", *m = "?", *src = "Unknown Source";
    size_t cl = 1, ml = 1, sl = strlen(src);
    uint32_t ci;
    if (map_get(&P->class_by_serial, f->class_serial, &ci))
        hp_str_get(P, P->cls.v[ci].name, &cls, &cl);
    hp_str_get(P, f->method, &m, &ml);
    hp_str_get(P, f->source, &src, &sl);
    char where[64];
    if (f->line > 0)
        snprintf(where, sizeof where, ":%" PRId32 ")", f->line);
    else
        snprintf(where, sizeof where, ")");
    if (f->line == -3) {
        src = "Native Method";
        sl = strlen(src);
    }
    size_t n = cl + 1 + ml + 1 + sl + strlen(where) + 1;
    char *r = malloc(n);
    if (!r)
        hp_die(P, "out of memory");
    snprintf(r, n, "%.*s.%.*s(%.*s%s", (int)cl, cls, (int)ml, m, (int)sl, src, where);
    for (size_t i = 0; i < cl; i++)
        if (r[i] == '/')
            r[i] = '.';
    return r;
}

static char *trace_top_frame(struct parser *P, uint32_t serial)
{
    uint32_t ti;
    if (!map_get(&P->traces, serial, &ti))
        return hp_xstrndup(P, "", 0);
    return frame_string(P, P->tr.v[ti].top);
}

/* Zeroed room for the first *n = min(count, top) rows of size bytes; NULL when there are none. */
static void *top_rows(struct parser *P, size_t count, size_t top, size_t size, size_t *n)
{
    *n = count < top ? count : top;
    if (!*n)
        return NULL;
    void *rows = calloc(*n, size);
    if (!rows)
        hp_die(P, "out of memory");
    return rows;
}

static int cmp_site(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct hprof_sample_rec *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->trace < y->trace ? -1 : x->trace > y->trace;
}

void hp_build_summary(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    size_t top = P->o->top_n;

    if (P->sites.n) {
        qsort(P->sites.v, P->sites.n, sizeof *P->sites.v, cmp_site);
        size_t n;
        S->site_rows = top_rows(P, P->sites.n, top, sizeof *S->site_rows, &n);
        for (size_t i = 0; i < n; i++) {
            const struct site *s = &P->sites.v[i];
            struct hprof_site_row *r = &S->site_rows[i];
            S->nsite_rows = i + 1;
            r->array_type = s->array;
            r->class_serial = s->class_serial;
            r->trace = s->trace;
            r->live_bytes = s->live_bytes;
            r->live_instances = s->live_inst;
            r->alloc_bytes = s->alloc_bytes;
            r->alloc_instances = s->alloc_inst;
            uint32_t ci;
            const char *nm;
            size_t nl;
            if (map_get(&P->class_by_serial, s->class_serial, &ci) &&
                hp_str_get(P, P->cls.v[ci].name, &nm, &nl))
                r->class_name = hp_xstrndup(P, nm, nl);
            else
                r->class_name = hp_xstrndup(P, "?", 1);
            r->frame = trace_top_frame(P, s->trace);
        }
    }
    if (P->samples.n) {
        if (P->samples.n > 1)
            qsort(P->samples.v, P->samples.n, sizeof *P->samples.v, cmp_sample);
        size_t n;
        S->cpu_rows = top_rows(P, P->samples.n, top, sizeof *S->cpu_rows, &n);
        for (size_t i = 0; i < n; i++) {
            S->ncpu_rows = i + 1;
            S->cpu_rows[i].trace = P->samples.v[i].trace;
            S->cpu_rows[i].count = P->samples.v[i].count;
            S->cpu_rows[i].frame = trace_top_frame(P, P->samples.v[i].trace);
        }
    }
}

void hprof_summary_free(struct hprof_summary *S)
{
    for (size_t i = 0; i < S->nsite_rows; i++) {
        free(S->site_rows[i].class_name);
        free(S->site_rows[i].frame);
    }
    free(S->site_rows);
    for (size_t i = 0; i < S->ncpu_rows; i++)
        free(S->cpu_rows[i].frame);
    free(S->cpu_rows);
    for (size_t i = 0; i < S->ndumps; i++) {
        for (size_t j = 0; j < S->dumps[i].ntop; j++)
            free(S->dumps[i].top[j].name);
        free(S->dumps[i].top);
        for (size_t j = 0; j < S->dumps[i].ntrace_rows; j++)
            free(S->dumps[i].trace_rows[j].name);
        free(S->dumps[i].trace_rows);
    }
    free(S->dumps);
    memset(S, 0, sizeof *S);
}

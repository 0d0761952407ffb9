/*
 * diff_sites.c: live objects per allocation site in two heap dumps. See diff_sites.h.
 */
#include "diff_sites.h"

#include "report_sites.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

/* The slot of name in the index (its entry, or the empty slot where it goes) */
static uint32_t *slot(const struct diff_sites *d, const char *name, uint64_t h)
{
    size_t j = h & (d->icap - 1);
    while (d->index[j] &&
           (d->s[d->index[j] - 1].hash != h || strcmp(d->s[d->index[j] - 1].name, name)))
        j = (j + 1) & (d->icap - 1);
    return &d->index[j];
}

static struct diff_site *lookup(struct diff_sites *d, const char *name)
{
    uint64_t h = hash(name);
    if (2 * (d->n + 1) > d->icap) {
        size_t nc = d->icap ? 2 * d->icap : 256;
        uint32_t *t = calloc(nc, sizeof *t);
        if (!t)
            return NULL;
        free(d->index);
        d->index = t;
        d->icap = nc;
        for (size_t i = 0; i < d->n; i++)
            *slot(d, d->s[i].name, d->s[i].hash) = (uint32_t)i + 1;
    }
    uint32_t *at = slot(d, name, h);
    if (*at)
        return &d->s[*at - 1];
    if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 64;
        void *p = realloc(d->s, nc * sizeof *d->s);
        if (!p)
            return NULL;
        d->s = p;
        d->cap = nc;
    }
    struct diff_site *e = &d->s[d->n];
    memset(e, 0, sizeof *e);
    e->hash = h;
    if (!(e->name = strdup(name)))
        return NULL;
    *at = (uint32_t)++d->n;
    return e;
}

/* Hidden classes (lambdas, method handles) are named with an address that changes from run to
 * run ("LambdaForm$MH.0x00007efd6c002000"): "0x" and 8 or more hex digits after '.', '/' or
 * '+' become "0x..", so their sites match between two runs. */
static void normalize(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        size_t h = 0;
        if (r > s && (r[-1] == '.' || r[-1] == '/' || r[-1] == '+') && r[0] == '0' && r[1] == 'x')
            while (isxdigit((unsigned char)r[2 + h]))
                h++;
        if (h >= 8) {
            memcpy(w, "0x..", 4);
            w += 4;
            r += 2 + h;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
}

int diff_sites_add(struct diff_sites *d, const struct heap_sites *s, const struct heap_graph *g,
                   bool now)
{
    if (!s->site)
        return 0;
    *(now ? &d->now_has : &d->base_has) = true;
    char name[4096];
    for (uint32_t k = 1; k < s->ns; k++) {
        const struct hs_site *t = &s->s[k];
        if (!t->count)
            continue;
        heap_sites_name(s, g, k, REPORT_SITES_FRAMES, name, sizeof name);
        normalize(name);
        struct diff_site *e = lookup(d, name);
        if (!e)
            return -1;
        *(now ? &e->nnow : &e->nbase) += t->count;
        *(now ? &e->bnow : &e->bbase) += t->shallow;
        *(now ? &e->rnow : &e->rbase) += t->retained;
    }
    return 0;
}

const struct diff_site *diff_sites_find(const struct diff_sites *d, char *name)
{
    if (!d->icap)
        return NULL;
    normalize(name);
    uint32_t *at = slot(d, name, hash(name));
    return *at ? &d->s[*at - 1] : NULL;
}

static int64_t growth(const struct diff_site *e)
{
    return (int64_t)e->bnow - (int64_t)e->bbase;
}

static int cmp_growth(const void *x, const void *y)
{
    int64_t a = growth(x), b = growth(y);
    if (a != b)
        return a < b ? 1 : -1;
    return strcmp(((const struct diff_site *)x)->name, ((const struct diff_site *)y)->name);
}

void diff_sites_sort(struct diff_sites *d)
{
    if (d->n)
        qsort(d->s, d->n, sizeof *d->s, cmp_growth);
    for (size_t i = 0; i < d->icap; i++) /* the order changed: index again */
        d->index[i] = 0;
    for (size_t i = 0; i < d->n; i++)
        *slot(d, d->s[i].name, d->s[i].hash) = (uint32_t)i + 1;
}

/* Rows shown: sites whose live objects grew, at most top */
static size_t shown(const struct diff_sites *d, size_t top)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n && n < top; i++)
        n += d->s[i].nnow > d->s[i].nbase;
    return n;
}

static const char *none_line(const struct diff_sites *d)
{
    if (!d->base_has && !d->now_has)
        return "none: every object of both dumps names the empty trace";
    if (!d->base_has || !d->now_has)
        return "only one dump has per-object traces: nothing to compare";
    return NULL;
}

void diff_sites_write_text(FILE *o, const struct diff_sites *d, size_t top)
{
    const char *none = none_line(d);
    fprintf(o, "\nAllocation sites (heap dumps): %s\n",
            none ? none : "growth of live objects, by live bytes");
    if (none)
        return;
    size_t n = shown(d, top), k = 0;
    for (size_t i = 0; k < n; i++) {
        const struct diff_site *e = &d->s[i];
        if (e->nnow <= e->nbase)
            continue;
        k++;
        fprintf(o,
                "  +%" PRIu64 " objects (%" PRIu64 " -> %" PRIu64 "), %+" PRId64
                " live bytes, retained %" PRIu64 " -> %" PRIu64 ": %s\n",
                e->nnow - e->nbase, e->nbase, e->nnow, growth(e), e->rbase, e->rnow, e->name);
    }
    if (!n)
        fprintf(o, "  (none grew)\n");
}

void diff_sites_write_markdown(FILE *o, const struct diff_sites *d, size_t top)
{
    const char *none = none_line(d);
    fprintf(o, "\n## Allocation sites (heap dumps)\n\n");
    if (none) {
        fprintf(o, "%s\n", none);
        return;
    }
    fprintf(o, "| objects | base_objects | new_objects | live_bytes | retained_base | "
               "retained_new | site |\n| ---: | ---: | ---: | ---: | ---: | ---: | :--- |\n");
    size_t n = shown(d, top), k = 0;
    for (size_t i = 0; k < n; i++) {
        const struct diff_site *e = &d->s[i];
        if (e->nnow <= e->nbase)
            continue;
        k++;
        fprintf(o,
                "| +%" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %+" PRId64 " | %" PRIu64 " | %" PRIu64
                " | ",
                e->nnow - e->nbase, e->nbase, e->nnow, growth(e), e->rbase, e->rnow);
        for (const char *c = e->name; *c; c++)
            fputs(*c == '|' ? "\\|" : (char[]){*c, 0}, o);
        fputs(" |\n", o);
    }
}

void diff_sites_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(o, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(o, "\\u%04x", *p);
        else
            fputc(*p, o);
    }
    fputc('"', o);
}

void diff_sites_write_json(FILE *o, const struct diff_sites *d, size_t top)
{
    fprintf(o, "{\"base_has_sites\":%s,\"new_has_sites\":%s,\"grown\":[",
            d->base_has ? "true" : "false", d->now_has ? "true" : "false");
    size_t n = none_line(d) ? 0 : shown(d, top), k = 0;
    for (size_t i = 0; k < n; i++) {
        const struct diff_site *e = &d->s[i];
        if (e->nnow <= e->nbase)
            continue;
        fprintf(o,
                "%s{\"base_objects\":%" PRIu64 ",\"new_objects\":%" PRIu64
                ",\"base_live_bytes\":%" PRIu64 ",\"new_live_bytes\":%" PRIu64
                ",\"base_retained_bytes\":%" PRIu64 ",\"new_retained_bytes\":%" PRIu64 ",\"site\":",
                k ? "," : "", e->nbase, e->nnow, e->bbase, e->bnow, e->rbase, e->rnow);
        diff_sites_json_str(o, e->name);
        fputc('}', o);
        k++;
    }
    fputs("]}", o);
}

void diff_sites_free(struct diff_sites *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->s[i].name);
    free(d->s);
    free(d->index);
    memset(d, 0, sizeof *d);
}

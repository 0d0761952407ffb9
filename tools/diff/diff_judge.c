/*
 * diff_judge.c: the thresholds of hprof-diff (defaults per kind, the rules file, the command
 * line) and the judgement of every entry. Shares are judged where runs differ in length
 * (samples, measured times), raw counts where the profile is exact for the same workload
 * (allocation sites, heap dumps); a sampled share must also pass a two-proportion z test so
 * that sampling noise alone does not fail a build.
 */
#include "diff.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void diff_thresholds_default(enum diff_kind k, struct diff_thresholds *th)
{
    th->growth = 0.10;
    th->delta_share = 0.01;
    th->delta_count = 0;
    th->min_share = 0.01;
    th->z = 3.0;
    th->mode = DM_DEFAULT;
    th->judge = 0;
    (void)k;
}

/* The measures judged when nothing says otherwise. */
static unsigned default_judge(enum diff_kind k)
{
    switch (k) {
    case DK_METHODS: /* self_ms, total_ms */
    case DK_SITES:   /* alloc_bytes, alloc_objects */
    case DK_HEAP:    /* instances, bytes */
        return 3;
    default: /* samples; time_ms */
        return 1;
    }
}

void diff_patterns_add(char ***v, size_t *n, const char *pat)
{
    *v = diff_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = diff_xstrdup(pat);
}

void diff_patterns_free(struct diff_patterns *p)
{
    for (size_t i = 0; i < p->ninclude; i++)
        free(p->include[i]);
    for (size_t i = 0; i < p->nexclude; i++)
        free(p->exclude[i]);
    free(p->include);
    free(p->exclude);
    memset(p, 0, sizeof *p);
}

/* "10%", "10", "2.5" -> 10, 10, 2.5 (the caller scales); false if not a number >= 0 */
static bool number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0 || !isfinite(v))
        return false;
    if (*end == '%')
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

int diff_setting(const char *name, const char *value, enum diff_kind k, struct diff_thresholds *th,
                 struct diff_patterns *pat, char *err, size_t errlen)
{
    double v;
    if (strcmp(name, "include") == 0 || strcmp(name, "exclude") == 0) {
        if (!*value)
            goto bad;
        if (name[0] == 'i')
            diff_patterns_add(&pat->include, &pat->ninclude, value);
        else
            diff_patterns_add(&pat->exclude, &pat->nexclude, value);
        return 0;
    }
    if (strcmp(name, "mode") == 0) {
        if (strcmp(value, "share") == 0)
            th->mode = DM_SHARE;
        else if (strcmp(value, "count") == 0)
            th->mode = DM_COUNT;
        else if (strcmp(value, "default") == 0)
            th->mode = DM_DEFAULT;
        else
            goto bad;
        return 0;
    }
    if (strcmp(name, "judge") == 0) {
        /* a comma-separated list of measure names of kind k; names of other kinds are
         * ignored so that one global "judge" line can name measures of several kinds */
        enum hprof_section_kind s = diff_kind_section(k);
        unsigned mask = 0;
        char *copy = diff_xstrdup(value), *save = NULL;
        bool any = false;
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            any = true;
            for (unsigned i = 0; i < hprof_section_nmeasures(s); i++)
                if (strcmp(w, hprof_section_measure(s, i)) == 0)
                    mask |= 1u << i;
        }
        free(copy);
        if (!any)
            goto bad;
        if (mask)
            th->judge = mask;
        return 0;
    }
    if (!number(value, &v))
        goto bad;
    if (strcmp(name, "growth") == 0)
        th->growth = v / 100;
    else if (strcmp(name, "delta-share") == 0)
        th->delta_share = v / 100;
    else if (strcmp(name, "delta-count") == 0)
        th->delta_count = v;
    else if (strcmp(name, "min-share") == 0)
        th->min_share = v / 100;
    else if (strcmp(name, "z") == 0)
        th->z = v;
    else {
        snprintf(err, errlen, "unknown setting \"%s\"", name);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "bad value \"%s\" for %s", value, name);
    return -1;
}

int diff_rules_load(const char *path, enum diff_kind k, struct diff_thresholds *th,
                    struct diff_patterns *pat, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    unsigned no = 0;
    bool applies = true; /* before any [kind] line: every kind */
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        no++;
        char *s = line, *e;
        for (char *h = strchr(line, '#'); h; h = strchr(h + 1, '#'))
            if (h == line || isspace((unsigned char)h[-1])) {
                *h = 0; /* a comment: '#' at the start or after a blank */
                break;
            }
        e = line + strlen(line);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = 0;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            enum diff_kind sk;
            if (!close || close[1]) {
                snprintf(err, errlen, "%s:%u: bad section line", path, no);
                rc = -1;
                break;
            }
            *close = 0;
            if (!diff_kind_parse(s + 1, &sk)) {
                snprintf(err, errlen, "%s:%u: unknown kind [%s]", path, no, s + 1);
                rc = -1;
                break;
            }
            applies = sk == k;
            continue;
        }
        /* "name value" or "name = value" */
        char *name = s;
        while (*s && !isspace((unsigned char)*s) && *s != '=')
            s++;
        char *name_end = s;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '=')
            s++;
        while (isspace((unsigned char)*s))
            s++;
        *name_end = 0;
        char msg[256];
        struct diff_thresholds scratch = *th;
        struct diff_patterns none = {0};
        /* lines of other kinds' sections are still checked */
        if (diff_setting(name, s, k, applies ? th : &scratch, applies ? pat : &none, msg,
                         sizeof msg) != 0) {
            snprintf(err, errlen, "%s:%u: %s", path, no, msg);
            rc = -1;
        }
        diff_patterns_free(&none);
    }
    fclose(f);
    return rc;
}

static bool selected(const struct diff_patterns *pat, const char *key)
{
    bool in = pat->ninclude == 0;
    for (size_t i = 0; i < pat->ninclude && !in; i++)
        in = fnmatch(pat->include[i], key, 0) == 0;
    for (size_t i = 0; i < pat->nexclude && in; i++)
        in = fnmatch(pat->exclude[i], key, 0) != 0;
    return in;
}

/* Two-proportion z of x1/n1 -> x2/n2 (pooled); +-HUGE_VAL when both are exact. */
static double z_of(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2)
{
    if (!n1 || !n2)
        return 0;
    double p1 = (double)x1 / n1, p2 = (double)x2 / n2, p = (double)(x1 + x2) / (n1 + n2);
    double se = sqrt(p * (1 - p) * (1.0 / n1 + 1.0 / n2));
    if (se == 0)
        return p2 > p1 ? HUGE_VAL : p2 < p1 ? -HUGE_VAL : 0;
    return (p2 - p1) / se;
}

size_t diff_judge(struct diff_table *t, const struct diff_thresholds *th,
                  const struct diff_patterns *pat)
{
    t->th = *th;
    t->judge = th->judge ? th->judge : default_judge(t->kind);
    t->mode = th->mode != DM_DEFAULT                        ? th->mode
              : (t->kind == DK_SITES || t->kind == DK_HEAP) ? DM_COUNT
                                                            : DM_SHARE;
    t->sampled = t->kind == DK_CPU && t->mode == DM_SHARE && th->z > 0;
    t->regressions = t->improvements = 0;
    unsigned nm = hprof_section_nmeasures(t->section);
    for (size_t i = 0; i < t->n; i++) {
        struct diff_entry *e = &t->e[i];
        bool judged = false, shrank = false;
        e->flagged = 0;
        bool chosen = selected(pat, e->key);
        for (unsigned m = 0; m < nm; m++) {
            e->base_share[m] = t->base_total[m] ? (double)e->base[m] / t->base_total[m] : 0;
            e->new_share[m] = t->new_total[m] ? (double)e->new_[m] / t->new_total[m] : 0;
            e->z[m] = z_of(e->base[m], t->base_total[m], e->new_[m], t->new_total[m]);
            if (!chosen || !(t->judge & (1u << m)))
                continue;
            double bs = e->base_share[m], ns = e->new_share[m];
            if (bs < th->min_share && ns < th->min_share)
                continue;
            judged = true;
            double d, b;
            if (t->mode == DM_SHARE) {
                d = ns - bs;
                b = bs;
            } else {
                d = (double)e->new_[m] - (double)e->base[m];
                b = (double)e->base[m];
            }
            double rel = b > 0 ? d / b : d > 0 ? HUGE_VAL : d < 0 ? -HUGE_VAL : 0;
            double delta_min = t->mode == DM_SHARE ? th->delta_share : th->delta_count;
            bool z_up = !t->sampled || e->z[m] >= th->z, z_down = !t->sampled || e->z[m] <= -th->z;
            if (d > 0 && rel >= th->growth - 1e-9 && d >= delta_min && z_up)
                e->flagged |= 1u << m;
            else if (d < 0 && -rel >= th->growth - 1e-9 && -d >= delta_min && z_down)
                shrank = true;
        }
        e->verdict = e->flagged ? DV_REGRESSION
                     : !judged  ? DV_NOT_JUDGED
                     : shrank   ? DV_SHRANK
                                : DV_SAME;
        if (e->flagged)
            t->regressions++;
        else if (shrank)
            t->improvements++;
    }
    return t->regressions;
}

unsigned diff_first_judged(const struct diff_table *t)
{
    for (unsigned m = 0; m < HPROF_MAX_MEASURES; m++)
        if (t->judge & (1u << m))
            return m;
    return 0;
}

static unsigned sort_measure;

static int rank(const struct diff_entry *e)
{
    return e->verdict == DV_REGRESSION ? 0 : e->verdict == DV_SHRANK ? 1 : 2;
}

static int cmp_report(const void *a, const void *b)
{
    const struct diff_entry *x = a, *y = b;
    if (rank(x) != rank(y))
        return rank(x) - rank(y);
    double dx = fabs(x->new_share[sort_measure] - x->base_share[sort_measure]),
           dy = fabs(y->new_share[sort_measure] - y->base_share[sort_measure]);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    if (x->group != y->group)
        return (int)x->group - (int)y->group;
    return strcmp(x->key, y->key);
}

void diff_sort_for_report(struct diff_table *t)
{
    sort_measure = diff_first_judged(t);
    qsort(t->e, t->n, sizeof *t->e, cmp_report);
}

/*
 * diff_judge.c: the thresholds of hprof-diff (defaults per kind, the rules file, the command
 * line) and the judgement of every entry. By default counts are judged (CPU time as samples
 * times the interval, measured milliseconds, calls, objects): a method whose CPU time grew is
 * a regression whatever its share, once the change passes a test fit for the count
 * (diff_stats.c) and is more than the whole run's uniform factor (diff_uniform.c). Shares
 * (--mode share) are still computed for every entry, so that the outputs can say where the
 * two judgements differ.
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
    th->uniform_growth = 0.25;
    th->mode = DM_DEFAULT;
    th->judge = 0;
    (void)k;
}

/* The measures judged when nothing says otherwise. */
static unsigned default_judge(enum diff_kind k)
{
    switch (k) {
    case DK_TIMES:   /* time_ms, calls */
    case DK_METHODS: /* self_ms, total_ms */
    case DK_SITES:   /* alloc_bytes, alloc_objects */
    case DK_HEAP:    /* instances, bytes */
        return 3;
    default: /* samples; monitor time_ms */
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
    if (strcmp(name, "uniform-growth") == 0 && strcmp(value, "none") == 0) {
        th->uniform_growth = -1;
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
    else if (strcmp(name, "uniform-growth") == 0)
        th->uniform_growth = v / 100;
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

/* The judgement on shares: +1 crossed upwards, -1 downwards, 0 neither. */
static int share_change(const struct diff_table *t, const struct diff_entry *e, unsigned m)
{
    const struct diff_thresholds *th = &t->th;
    double bs = e->base_share[m], ns = e->new_share[m], d = ns - bs;
    double rel = bs > 0 ? d / bs : d > 0 ? HUGE_VAL : d < 0 ? -HUGE_VAL : 0;
    bool test = t->kind == DK_CPU && th->z > 0;
    if (d > 0 && rel >= th->growth - 1e-9 && d >= th->delta_share && (!test || e->z[m] >= th->z))
        return 1;
    if (d < 0 && -rel >= th->growth - 1e-9 && -d >= th->delta_share && (!test || e->z[m] <= -th->z))
        return -1;
    return 0;
}

/* The judgement on counts against no change (f = 1) or the run's factor f: +1 grew past
 * --growth, --delta-count and --z, -1 shrank past them, 0 neither. */
static int count_change(const struct diff_table *t, const struct diff_entry *e, unsigned m,
                        double f, double z)
{
    const struct diff_thresholds *th = &t->th;
    double rel = e->ratio[m] / f - 1;
    /* the change in base units (samples of the base's interval) */
    double d = e->base[m]        ? (double)e->base[m] * (e->ratio[m] - f)
               : e->ratio[m] > 1 ? (double)e->new_[m]
                                 : 0;
    bool sig_up = th->z <= 0 || z >= th->z, sig_down = th->z <= 0 || z <= -th->z;
    if (rel >= th->growth - 1e-9 && d > 0 && d >= th->delta_count && sig_up)
        return 1;
    if (-rel >= th->growth - 1e-9 && d < 0 && -d >= th->delta_count && sig_down)
        return -1;
    return 0;
}

/* Frame f names method (a total's or self's key): equal, or equal up to a ":line" suffix. */
static bool frame_is(const char *f, const char *method)
{
    size_t n = strlen(method);
    return strncmp(f, method, n) == 0 && (f[n] == 0 || f[n] == ':');
}

static bool stack_holds(const struct diff_entry *s, const struct diff_entry *e)
{
    if (!s->frames || !s->nframes)
        return false;
    if (e->group == DG_SELF)
        return frame_is(s->frames[s->nframes - 1], e->key);
    for (unsigned f = 0; f < s->nframes; f++)
        if (frame_is(s->frames[f], e->key))
            return true;
    return false;
}

/* Whether stack s would cross on a judged measure (it is not chosen, so not judged). */
static bool crossed(const struct diff_table *t, const struct diff_entry *s)
{
    for (unsigned m = 0; m < hprof_section_nmeasures(t->section); m++) {
        const struct diff_uniform *u = &t->uniform[m];
        if (!(t->judge & (1u << m)) ||
            (s->base_share[m] < t->th.min_share && s->new_share[m] < t->th.min_share))
            continue;
        int alone = count_change(t, s, m, 1, s->z_count[m]);
        int beyond = u->finding ? count_change(t, s, m, u->factor, s->z_uniform[m]) : alone;
        if (alone > 0 && beyond > 0)
            return true;
    }
    return false;
}

/* Count mode: a method's total (or self) that grew only through stacks flagged on their own
 * (main, whose child alpha got slower; spin, the leaf that alpha and beta share) or left out
 * by --exclude is the same
 * regression seen from above or below: once those stacks are taken out, if what is left
 * holds at least min-share and no longer crosses, the entry is marked DV_GREW, not counted. */
static void explain_by_stacks(struct diff_table *t, const bool *chosen)
{
    unsigned nm = hprof_section_nmeasures(t->section);
    for (size_t i = 0; i < t->n; i++) {
        struct diff_entry *e = &t->e[i];
        if (!e->flagged || (e->group != DG_TOTAL && e->group != DG_SELF))
            continue;
        struct diff_entry rest = *e;
        bool any = false;
        for (size_t j = 0; j < t->n; j++) {
            const struct diff_entry *s = &t->e[j];
            /* a stack left out by --exclude still explains its callers' growth */
            if (s->group != DG_STACK || !(s->flagged || (!chosen[j] && crossed(t, s))) ||
                !stack_holds(s, e))
                continue;
            any = true;
            for (unsigned m = 0; m < nm; m++) {
                rest.base[m] -= s->base[m] <= rest.base[m] ? s->base[m] : rest.base[m];
                rest.new_[m] -= s->new_[m] <= rest.new_[m] ? s->new_[m] : rest.new_[m];
            }
        }
        if (!any)
            continue;
        unsigned still = 0;
        bool big = false;
        double c =
            t->kind == DK_CPU && t->base_interval > 0 ? t->new_interval / t->base_interval : 1;
        for (unsigned m = 0; m < nm; m++) {
            if (!(e->flagged & (1u << m)))
                continue;
            const struct diff_uniform *u = &t->uniform[m];
            big |=
                (t->base_total[m] && (double)rest.base[m] / t->base_total[m] >= t->th.min_share) ||
                (t->new_total[m] && (double)rest.new_[m] / t->new_total[m] >= t->th.min_share);
            rest.ratio[m] = rest.base[m]   ? (double)rest.new_[m] * c / (double)rest.base[m]
                            : rest.new_[m] ? HUGE_VAL
                                           : 1;
            int alone = count_change(t, &rest, m, 1, diff_factor_z(t, &rest, m, 1));
            int beyond = u->finding ? count_change(t, &rest, m, u->factor,
                                                   diff_factor_z(t, &rest, m, u->factor))
                                    : alone;
            if (alone > 0 && beyond > 0)
                still |= 1u << m;
        }
        if (big && !still) {
            e->flagged = 0;
            e->verdict = DV_GREW;
            t->regressions--;
        }
    }
}

size_t diff_judge(struct diff_table *t, const struct diff_thresholds *th,
                  const struct diff_patterns *pat)
{
    t->th = *th;
    t->judge = th->judge ? th->judge : default_judge(t->kind);
    t->mode = th->mode != DM_DEFAULT ? th->mode : DM_COUNT;
    t->sampled = t->kind == DK_CPU && t->mode == DM_SHARE && th->z > 0;
    t->regressions = t->improvements = t->uniform_fails = 0;
    unsigned nm = hprof_section_nmeasures(t->section);
    double c = t->kind == DK_CPU && t->base_interval > 0 ? t->new_interval / t->base_interval : 1;
    bool *chosen = diff_xmalloc((t->n ? t->n : 1) * sizeof *chosen);
    for (size_t i = 0; i < t->n; i++) {
        struct diff_entry *e = &t->e[i];
        chosen[i] = selected(pat, e->key);
        for (unsigned m = 0; m < nm; m++) {
            e->base_share[m] = t->base_total[m] ? (double)e->base[m] / t->base_total[m] : 0;
            e->new_share[m] = t->new_total[m] ? (double)e->new_[m] / t->new_total[m] : 0;
            e->z[m] = z_of(e->base[m], t->base_total[m], e->new_[m], t->new_total[m]);
            e->ratio[m] = e->base[m]   ? (double)e->new_[m] * c / (double)e->base[m]
                          : e->new_[m] ? HUGE_VAL
                                       : 1;
        }
    }
    /* heap dumps keep their plain count judgement: no uniform factor */
    bool uniform = t->mode == DM_COUNT && t->kind != DK_HEAP;
    for (unsigned m = 0; m < nm; m++) {
        memset(&t->uniform[m], 0, sizeof t->uniform[m]);
        t->uniform[m].factor = t->uniform[m].median = 1;
        if (uniform && (t->judge & (1u << m)))
            diff_uniform_estimate(t, m, chosen);
        if (t->uniform[m].fails)
            t->uniform_fails++;
    }
    for (size_t i = 0; i < t->n; i++) {
        struct diff_entry *e = &t->e[i];
        bool judged = false, shrank = false, with_run = false;
        e->flagged = e->share_flagged = 0;
        e->share_shrank = false;
        for (unsigned m = 0; m < nm; m++) {
            const struct diff_uniform *u = &t->uniform[m];
            e->z_count[m] = diff_factor_z(t, e, m, 1);
            e->z_uniform[m] = u->finding ? diff_factor_z(t, e, m, u->factor) : e->z_count[m];
            if (!chosen[i] || !(t->judge & (1u << m)))
                continue;
            if (e->base_share[m] < th->min_share && e->new_share[m] < th->min_share)
                continue;
            judged = true;
            int sc = share_change(t, e, m);
            if (sc > 0)
                e->share_flagged |= 1u << m;
            e->share_shrank |= sc < 0;
            if (t->mode == DM_SHARE) {
                if (sc > 0)
                    e->flagged |= 1u << m;
                shrank |= sc < 0;
                continue;
            }
            /* a change of its own: past the thresholds against no change and against the
             * factor of the whole run */
            int alone = count_change(t, e, m, 1, e->z_count[m]);
            /* the run's factor is the baseline only when it is a finding: a factor within the
             * thresholds is noise, and judging against it would hide a real change */
            int beyond = u->finding ? count_change(t, e, m, u->factor, e->z_uniform[m]) : alone;
            if (alone > 0 && beyond > 0)
                e->flagged |= 1u << m;
            else if (alone < 0 && beyond < 0)
                shrank = true;
            else if (alone != 0)
                with_run = true;
        }
        e->verdict = e->flagged ? DV_REGRESSION
                     : !judged  ? DV_NOT_JUDGED
                     : shrank   ? DV_SHRANK
                     : with_run ? DV_UNIFORM
                                : DV_SAME;
        if (e->flagged)
            t->regressions++;
        else if (shrank)
            t->improvements++;
    }
    if (t->mode == DM_COUNT)
        explain_by_stacks(t, chosen);
    free(chosen);
    return t->regressions + t->uniform_fails;
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
    return e->verdict == DV_REGRESSION ? 0 : e->verdict == DV_SHRANK ? 1 : 2; /* uniform: 2 */
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

/*
 * diff_uniform.c: the factor by which a whole run changed, so that a uniformly slower run (a
 * slower machine, a noisy neighbour) is one finding and not a regression of every entry, and
 * so that an entry that grew beyond the run is still found in a slower run.
 *
 * The estimate must not absorb a real regression of the dominant entry, which raises the total
 * as much as it grows: so each entry of the kind's partition (the stacks of a CPU profile, the
 * sites, the monitors: groups whose counts add up to the total) is one vote whatever its count,
 * and the factor is accepted only when a strict majority of the voters share it:
 *
 * Tested counts are judged against Poisson's spread plus the entries' own scatter, estimated
 * from at least five voters: a sampling profiler moves samples between neighbouring stacks,
 * by a number that depends little on the entries' sizes (a few percent of a big entry, tens
 * of percent of a small one), so the scatter is an added variance, the same for every entry:
 * the upper quartile over the voters of d^2 / 1.3233 minus Poisson's variance, d an entry's
 * change around the median ratio (1.3233 is the upper quartile of chi-square with one degree
 * of freedom). Not the median: the scatter has heavy tails (a few entries of a run move far,
 * most little), and the median of ten such values is the calm ones' alone.
 * Measured milliseconds are tested as counts of ms too: Poisson's spread is no model of a
 * clock, but it is a floor that keeps a few ms of a small entry from failing a build.
 *
 *  1. voters: entries holding at least min-share of the total in either run (and, for tested
 *     counts, at least 10 counts in both runs together); fewer than two: no factor;
 *  2. the median of their ratios (new over base; the geometric mean of the middle two);
 *  3. an entry shares it when it does not differ from it past the thresholds (--growth and
 *     --z) and, with fewer than five voters (a median of so few is no better than its
 *     entries), when its ratio is also nearer (in log) to the median than to 1 (no change);
 *  4. those that share it must agree with each other too: one that differs from the pooled
 *     rest of them past the thresholds is dropped (with two voters, a change of one of them
 *     drops both, and nothing changed is what is left to believe);
 *  5. accepted if at least two entries, more than half of the voters, are left; the factor is
 *     the median of their ratios (not their pooled ratio, which the dominant entry would
 *     steer);
 *  6. it is a finding when it is past --growth and the run's total changed the same way past
 *     --growth and --z (Poisson's spread alone: what the scatter moves between entries stays
 *     in the total).
 */
#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum diff_model diff_measure_model(enum diff_kind k, unsigned m)
{
    switch (k) {
    case DK_CPU:
    case DK_WALL:
        return DMM_SAMPLED;
    case DK_TIMES:   /* time_ms, calls */
    case DK_MONITOR: /* time_ms, entries */
        return m == 0 ? DMM_MEASURED : DMM_EXACT;
    case DK_METHODS: /* self_ms, total_ms, calls */
        return m < 2 ? DMM_MEASURED : DMM_EXACT;
    default:
        return DMM_EXACT;
    }
}

/* The group whose entries partition the total, the voters of the estimate. */
static enum diff_group partition_group(enum diff_kind k)
{
    switch (k) {
    case DK_CPU:
    case DK_WALL:
    case DK_TIMES:
        return DG_STACK;
    case DK_METHODS:
        return DG_METHOD;
    case DK_SITES:
        return DG_SITE;
    case DK_MONITOR:
        return DG_MONITOR;
    default:
        return DG_CLASS;
    }
}

/* How many base units one new unit is worth: the new interval over the base's for samples. */
static double scale(const struct diff_table *t)
{
    return t->kind == DK_CPU && t->base_interval > 0 ? t->new_interval / t->base_interval : 1;
}

static double ratio_of(double a, double b, double c)
{
    return a > 0 ? b * c / a : b > 0 ? HUGE_VAL : 1;
}

/* The z of b given a + b against the ratio f (new over base), k entries' scatter added: the
 * exact binomial z, shrunk by the share of the variance Poisson's is when there is scatter. */
static double pooled_z(const struct diff_table *t, unsigned m, double a, double b, double f,
                       double k)
{
    double c = scale(t);
    enum diff_model model = diff_measure_model(t->kind, m);
    if (model == DMM_EXACT)
        return b * c > a * f ? DIFF_Z_MAX : b * c < a * f ? -DIFF_Z_MAX : 0;
    double p = f / (f + c), z = diff_count_z((uint64_t)a, (uint64_t)b, p);
    double s = t->uniform[m].scatter, v = (a + b) * p * (1 - p);
    /* d = b - p(a + b) is (1 - p) times the change b - (f / c) a */
    double extra = k * s * s * (1 - p) * (1 - p);
    if (extra > 0 && v > 0)
        z *= sqrt(v / (v + extra));
    return z;
}

double diff_factor_z(const struct diff_table *t, const struct diff_entry *e, unsigned m, double f)
{
    return pooled_z(t, m, (double)e->base[m], (double)e->new_[m], f, 1);
}

/* past the thresholds: a relative change of at least --growth, and the z of --z */
static bool differs(const struct diff_table *t, unsigned m, double a, double b, double f)
{
    double r = ratio_of(a, b, scale(t)) / f;
    if (fabs(r - 1) < t->th.growth - 1e-9 && !(r > 1e300))
        return false;
    return t->th.z <= 0 || fabs(pooled_z(t, m, a, b, f, 1)) >= t->th.z;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void diff_uniform_estimate(struct diff_table *t, unsigned m, const bool *chosen)
{
    struct diff_uniform *u = &t->uniform[m];
    memset(u, 0, sizeof *u);
    u->factor = u->median = 1;
    enum diff_group g = partition_group(t->kind);
    bool tested = diff_measure_model(t->kind, m) != DMM_EXACT;
    double c = scale(t);
    size_t *vote = diff_xmalloc((t->n ? t->n : 1) * sizeof *vote), nv = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct diff_entry *e = &t->e[i];
        if (e->group != g || (chosen && !chosen[i]))
            continue;
        if (e->base_share[m] < t->th.min_share && e->new_share[m] < t->th.min_share)
            continue;
        if (tested && e->base[m] + e->new_[m] < 10)
            continue;
        vote[nv++] = i;
    }
    u->informative = (unsigned)nv;
    double *r = diff_xmalloc((nv ? nv : 1) * sizeof *r);
    for (size_t j = 0; j < nv; j++)
        r[j] = ratio_of((double)t->e[vote[j]].base[m], (double)t->e[vote[j]].new_[m], c);
    qsort(r, nv, sizeof *r, cmp_double);
    if (nv)
        u->median = nv % 2 ? r[nv / 2] : sqrt(r[nv / 2 - 1] * r[nv / 2]);
    free(r);
    if (nv < 2 || !(u->median > 0) || !isfinite(u->median))
        goto out;
    /* the voters' scatter beyond Poisson's around the median ratio (five voters at least) */
    if (tested && nv >= 5) {
        double p = u->median / (u->median + c), *x = diff_xmalloc(nv * sizeof *x);
        for (size_t j = 0; j < nv; j++) {
            double a = (double)t->e[vote[j]].base[m], b = (double)t->e[vote[j]].new_[m];
            double d = b - p * (a + b);
            x[j] = d * d / 1.3233 - (a + b) * p * (1 - p);
        }
        qsort(x, nv, sizeof *x, cmp_double);
        double pos = 0.75 * (double)(nv - 1), lo = floor(pos);
        size_t i0 = (size_t)lo, i1 = i0 + 1 < nv ? i0 + 1 : i0;
        double med = x[i0] + (pos - lo) * (x[i1] - x[i0]);
        u->scatter = med > 0 ? sqrt(med) / (1 - p) : 0;
        u->spread_known = true;
        free(x);
    }
    /* 3. the entries that share the median's factor */
    bool *share = diff_xmalloc(nv * sizeof *share);
    double lm = log(u->median), sa = 0, sb = 0;
    for (size_t j = 0; j < nv; j++) {
        const struct diff_entry *e = &t->e[vote[j]];
        double l = log(ratio_of((double)e->base[m], (double)e->new_[m], c));
        share[j] = (nv >= 5 || fabs(l - lm) < fabs(l)) &&
                   !differs(t, m, (double)e->base[m], (double)e->new_[m], u->median);
        if (share[j]) {
            sa += (double)e->base[m];
            sb += (double)e->new_[m];
        }
    }
    /* 4. each against the pooled rest of them */
    bool *drop = diff_xmalloc(nv * sizeof *drop);
    for (size_t j = 0; j < nv; j++) {
        const struct diff_entry *e = &t->e[vote[j]];
        double ra = sa - (double)e->base[m], rb = sb - (double)e->new_[m];
        drop[j] = share[j] && ra > 0 && rb > 0 &&
                  differs(t, m, (double)e->base[m], (double)e->new_[m], ratio_of(ra, rb, c));
    }
    unsigned n = 0;
    sa = sb = 0;
    double *kept = diff_xmalloc(nv * sizeof *kept);
    for (size_t j = 0; j < nv; j++)
        if (share[j] && !drop[j]) {
            const struct diff_entry *e = &t->e[vote[j]];
            kept[n++] = ratio_of((double)e->base[m], (double)e->new_[m], c);
            sa += (double)e->base[m];
            sb += (double)e->new_[m];
        }
    qsort(kept, n, sizeof *kept, cmp_double);
    double factor = n == 0 ? 1 : n % 2 ? kept[n / 2] : sqrt(kept[n / 2 - 1] * kept[n / 2]);
    free(kept);
    free(share);
    free(drop);
    u->agreeing = n;
    /* 5. a strict majority of at least two */
    if (n < 2 || 2 * n <= nv || !(sa > 0))
        goto out;
    u->accepted = true;
    u->factor = factor;
    /* a uniform change moves the total by the same factor: the total must have changed past
     * the thresholds too, the same way (with Poisson's spread alone: samples a profiler moves
     * between stacks stay in the total, which follows the CPU time the timers measured) */
    double ta = (double)t->base_total[m], tb = (double)t->new_total[m];
    double total = ratio_of(ta, tb, c);
    u->z = pooled_z(t, m, ta, tb, 1, 0);
    u->finding = fabs(u->factor - 1) >= t->th.growth - 1e-9 &&
                 fabs(total - 1) >= t->th.growth - 1e-9 && (total > 1) == (u->factor > 1) &&
                 (t->th.z <= 0 || fabs(u->z) >= t->th.z);
    u->fails =
        u->finding && t->th.uniform_growth >= 0 && u->factor - 1 >= t->th.uniform_growth - 1e-9;
out:
    free(vote);
}

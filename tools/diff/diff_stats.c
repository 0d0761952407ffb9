/*
 * diff_stats.c: the statistics of hprof-diff's count judgement. Two counts of one entry, a in
 * the base and b in the new run, are each Poisson when they are samples; given their sum
 * n = a + b, b is Binomial(n, p) with p fixed by the ratio the null hypothesis expects, so the
 * test is exact whatever n (the conditional binomial test). Tails come from the regularized
 * incomplete beta function, computed here by its continued fraction (Lentz's method), so that
 * counts of millions cost a few hundred iterations rather than a sum over n terms.
 */
#include "diff.h"

#include <math.h>

/* The continued fraction of I_x(a, b), good for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 100000; m++) {
        double m2 = 2.0 * m;
        /* the even step, then the odd step of the fraction */
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-15)
            break;
    }
    return h;
}

/* The regularized incomplete beta function I_x(a, b), a, b > 0. */
static double ibeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double diff_binom_upper(uint64_t k, uint64_t n, double p)
{
    if (k == 0)
        return 1;
    if (k > n)
        return 0;
    return ibeta((double)k, (double)(n - k) + 1, p);
}

double diff_binom_lower(uint64_t k, uint64_t n, double p)
{
    if (k >= n)
        return 1;
    return ibeta((double)(n - k), (double)k + 1, 1 - p);
}

/* The upper tail of the standard normal. */
static double normal_upper(double z)
{
    return 0.5 * erfc(z / sqrt(2));
}

double diff_z_of_p(double p)
{
    if (p >= 0.5)
        return 0;
    if (p <= 0)
        return DIFF_Z_MAX;
    double lo = 0, hi = DIFF_Z_MAX;
    for (int i = 0; i < 80; i++) {
        double mid = (lo + hi) / 2;
        if (normal_upper(mid) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

double diff_count_z(uint64_t a, uint64_t b, double p)
{
    uint64_t n = a + b;
    if (n == 0)
        return 0;
    double mean = p * (double)n;
    if ((double)b > mean)
        return diff_z_of_p(diff_binom_upper(b, n, p));
    if ((double)b < mean)
        return -diff_z_of_p(diff_binom_lower(b, n, p));
    return 0;
}

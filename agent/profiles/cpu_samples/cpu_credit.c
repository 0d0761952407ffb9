/* The CPU credit of the safepoint rounds (cpu_credit.h). */
#include "cpu_credit.h"

void cpu_credit_from_start(struct cpu_credit *c, int64_t cpu_ns)
{
    c->last_cpu_ns = cpu_ns;
    c->credit_ns = 0;
    c->has_baseline = true;
}

uint32_t cpu_credit_update(struct cpu_credit *c, int64_t cpu_ns, int64_t interval_ns, double u)
{
    if (interval_ns <= 0)
        return 0;
    if (!c->has_baseline || cpu_ns < c->last_cpu_ns) {
        c->last_cpu_ns = cpu_ns;
        c->credit_ns = 0;
        c->has_baseline = true;
        return 0;
    }
    c->credit_ns += cpu_ns - c->last_cpu_ns;
    c->last_cpu_ns = cpu_ns;
    if (c->credit_ns <= 0)
        return 0;
    int64_t due = c->credit_ns / interval_ns;
    if (due >= (int64_t)CPU_CREDIT_MAX_SAMPLES) {
        c->credit_ns = 0;
        return CPU_CREDIT_MAX_SAMPLES;
    }
    int64_t rest = c->credit_ns - due * interval_ns;
    if (u * (double)interval_ns < (double)rest)
        due++;
    c->credit_ns -= due * interval_ns;
    return (uint32_t)due;
}

void cpu_credit_refund(struct cpu_credit *c, uint32_t n, int64_t interval_ns)
{
    if (c->has_baseline)
        c->credit_ns += (int64_t)n * interval_ns;
}

void cpu_credit_reset(struct cpu_credit *c)
{
    c->last_cpu_ns = 0;
    c->credit_ns = 0;
    c->has_baseline = false;
}

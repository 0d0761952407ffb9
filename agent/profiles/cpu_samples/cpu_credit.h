/* The per-thread CPU credit of the safepoint rounds: turns readings of a thread's CPU time into
 * whole samples of one interval each (cpu_activity.h says which threads are worth reading).
 * Pure C, unit-tested. doc/cpu-samples.md explains the rule and its biases. */
#ifndef HPROF_CPU_CREDIT_H
#define HPROF_CPU_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

/* A thread's CPU time as the sampler last saw it, and the CPU time not yet turned into
 * samples (negative after a fraction was rounded up). Zero-initialised = no reading yet;
 * a thread seen from its start has as baseline its CPU time then (cpu_credit_from_start). */
struct cpu_credit {
    int64_t last_cpu_ns;
    int64_t credit_ns;
    bool has_baseline;
};

/* At most this many samples are due from one reading (a guard against a bogus clock). */
#define CPU_CREDIT_MAX_SAMPLES 1000u

/* A credit for a thread seen at its ThreadStart, whose CPU time was then cpu_ns: everything
 * after counts. Not 0: a thread attached through JNI (DestroyJavaVM at exit, a native thread
 * calling into Java) runs on an OS thread that may have used seconds of CPU time before it
 * became a Java thread, none of it in Java code. */
void cpu_credit_from_start(struct cpu_credit *c, int64_t cpu_ns);

/* Takes a new reading of the thread's CPU time and returns how many samples are now due:
 * the whole intervals of CPU time accumulated since the baseline, plus one more with the
 * probability of the remaining fraction (u: uniform in [0, 1)); what is due is taken out of
 * the credit. Rounding at random keeps the expected count exact, also for threads that live
 * less than one interval of CPU time. Without a baseline the reading only sets it (0 due);
 * a clock going backwards resets it. */
uint32_t cpu_credit_update(struct cpu_credit *c, int64_t cpu_ns, int64_t interval_ns, double u);

/* Puts back n samples that were due but could not be taken (the thread went idle before its
 * stack was taken), so its CPU time is counted at a later round. */
void cpu_credit_refund(struct cpu_credit *c, uint32_t n, int64_t interval_ns);

/* Forgets the baseline and the credit (sampling switched on again: CPU time used while it
 * was off must not come back as a burst of samples). */
void cpu_credit_reset(struct cpu_credit *c);

#endif

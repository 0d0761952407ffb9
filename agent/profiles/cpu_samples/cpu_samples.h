/* cpu=samples: the profile (options, events, dump, control), which wires the engines (the
 * async sampler, the safepoint rounds of the sampler thread) to the recording (cpu_profile.h).
 * Writes CPU SAMPLES (after the traces it names), with core's CONTROL SETTINGS before it.
 * doc/cpu-samples.md describes the output and what a sample means. */
#ifndef HPROF_CPU_SAMPLES_H
#define HPROF_CPU_SAMPLES_H

#include "profile.h"

extern const struct hprof_profile cpu_samples_profile;

#endif

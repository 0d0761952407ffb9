/* cpu=samples: the profile (options, events, dump, control) around the sampler thread of
 * sampler_thread.h. Writes CONTROL SETTINGS and CPU SAMPLES (after the traces they name).
 * doc/cpu-samples.md describes the output and what a sample means. */
#ifndef HPROF_CPU_SAMPLES_H
#define HPROF_CPU_SAMPLES_H

#include "profile.h"

extern const struct hprof_profile cpu_samples_profile;

#endif

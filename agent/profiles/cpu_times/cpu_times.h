/* cpu=times and cpu=old: every method of every class (system classes too) rewritten to call
 * hprof/Tracker at entry and exit; exact call counts and time per trace (CPU TIME) or per method
 * (CPU TIME BY METHOD). See doc/cpu-times.md. */
#ifndef HPROF_CPU_TIMES_H
#define HPROF_CPU_TIMES_H

#include "profile.h"

extern const struct hprof_profile cpu_times_profile;

#endif

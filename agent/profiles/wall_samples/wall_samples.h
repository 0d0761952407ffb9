/* wall=y: wall-clock samples of every Java thread whatever its state (doc/wall-samples.md). */
#ifndef HPROF_WALL_SAMPLES_H
#define HPROF_WALL_SAMPLES_H

#include "profile.h"

extern const struct hprof_profile wall_samples_profile;

#endif

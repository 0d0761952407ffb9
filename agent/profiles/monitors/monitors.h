/* monitor=y: contended monitor entries (MONITOR TIME), Object.wait calls as they happen
 * (WAIT / WAITED) and, at each dump, every thread's state and every busy monitor (MONITOR
 * DUMP). See doc/monitors.md. */
#ifndef HPROF_MONITORS_H
#define HPROF_MONITORS_H

#include "profile.h"

extern const struct hprof_profile monitors_profile;

#endif

/* One dump: every enabled profile writes its sections, in a fixed order, one dump at a
 * time. Triggered at VM death (doe=y), by DataDumpRequest (SIGQUIT) and by socket commands. */
#ifndef HPROF_DUMP_REQUEST_H
#define HPROF_DUMP_REQUEST_H

#include "profile.h"

void dump_set_profiles(const struct hprof_profile *const *profiles, size_t n);
/* Writes the sections req asks for, one dump at a time. */
void dump_all(const struct dump_request *req);

/* Passes a control command to every enabled profile. */
void dump_control(const struct control_request *req);

#endif

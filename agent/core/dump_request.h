/* One dump: every enabled profile writes its sections, in a fixed order, one dump at a
 * time. Triggered at VM death (doe=y), by DataDumpRequest (SIGQUIT) and by socket commands. */
#ifndef HPROF_DUMP_REQUEST_H
#define HPROF_DUMP_REQUEST_H

#include "profile.h"

void dump_request_set_profiles(const struct hprof_profile *const *profiles, size_t n);
/* What a dump passes as dump_request.write_settings (core's CONTROL SETTINGS). */
void dump_request_set_settings_writer(void (*write_settings)(struct hprof_writer *w));
/* Writes the sections req asks for, one dump at a time. */
void dump_request_all(const struct dump_request *req);

/* Passes a control command to every enabled profile. */
void dump_request_control(const struct control_request *req);

/* UNLOAD CLASS records (emit.h). A dump that writes every trace ends with an UNLOAD
 * CLASS for each class that unloaded before it, unless at_end (heap=sites: its ALLOC SITES
 * name the classes of old sites in every later dump); dump_request_write_unloads writes the rest
 * when the output ends. */
void dump_request_set_unloads_at_end(bool at_end);
void dump_request_write_unloads(void);

#endif

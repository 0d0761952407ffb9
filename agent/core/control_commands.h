/* The control channel's commands (doc/socket.md), core's and no profile's: runs each command
 * the socket listener (control_listener.h) parsed, and owns CONTROL SETTINGS: the settings
 * (alloc traces, cpu sampling, depth) and the record that states them, written after each
 * CONTROL command and, through dump_request.write_settings, inside a CPU SAMPLES dump. A
 * command that asks for a section asks the profiles (hprof_profile.sections) which of them
 * write it; when none that runs does, the one that would is asked for its empty answer. */
#ifndef HPROF_CONTROL_COMMANDS_H
#define HPROF_CONTROL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "command_parser.h"
#include "profile.h"

/* At start: the options and every profile the agent knows (running or not). */
void control_commands_init(const struct hprof_options *opts,
                           const struct hprof_profile *const *profiles, size_t n);

/* Messages about one connection, each said once. */
struct control_commands_report {
    unsigned warned_sections; /* enum dump_section bits already warned about */
};

/* Runs one command, on the listener's thread (jni: its environment). */
void control_commands_run(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c,
                          struct control_commands_report *rep);

/* Writes CONTROL SETTINGS with the current settings (output lock held: w from emit). */
void control_commands_write_settings(struct hprof_writer *w);

#endif

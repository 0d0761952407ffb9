/* net=host:port: the agent thread that reads commands from the socket the profile is written
 * to, and runs them (doc/socket.md). Plugs into the core as a profile: enabled by net=, it
 * starts its thread at VM init and stops it first thing at VM death. */
#ifndef HPROF_CONTROL_LISTENER_H
#define HPROF_CONTROL_LISTENER_H

#include "profile.h"

extern const struct hprof_profile listener_profile;

#endif

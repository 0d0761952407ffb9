/* net=host:port: the agent thread that reads commands from the socket the profile is written
 * to, and hands each to control_commands.h (doc/socket.md). Core's, not a profile: the core
 * starts it when net= is given, starts its thread at VM init before any profile's, and stops it
 * first thing at VM death. */
#ifndef HPROF_CONTROL_LISTENER_H
#define HPROF_CONTROL_LISTENER_H

#include <jvmti.h>

/* After the output is open: a descriptor of its own to read the socket (a warning if none). */
void control_listener_start(void);
/* The VM is live: starts the listener thread. */
void control_listener_vm_init(jvmtiEnv *jvmti, JNIEnv *jni);
/* VM death: stops taking commands and waits (bounded) for the one in progress. */
void control_listener_stop(void);

#endif

/* What a profile (heap=sites, heap=dump, cpu=samples, cpu=times, monitor=y) plugs into the
 * agent core. The core owns the JVMTI callback table: events only one profile uses are set by
 * that profile in set_callbacks; events several need (VM init and death, thread start and
 * end, class prepare, data dump request) are fanned out by the core through the hooks below.
 * Every hook may be NULL. */
#ifndef HPROF_PROFILE_H
#define HPROF_PROFILE_H

#include <jvmti.h>
#include <stdbool.h>

#include "options.h"
#include "writer.h"

enum dump_reason {
    DUMP_AT_EXIT,     /* VM death with doe=y */
    DUMP_ON_SIGNAL,   /* DataDumpRequest: SIGQUIT, jcmd */
    DUMP_ON_COMMAND,  /* a socket command */
};

struct dump_request {
    jvmtiEnv *jvmti;
    JNIEnv *jni; /* of the dumping thread; NULL when the thread has none */
    enum dump_reason reason;
};

struct hprof_profile {
    const char *name;
    /* Whether the options ask for this profile. */
    bool (*enabled)(const struct hprof_options *opts);
    /* Capabilities it needs (potential ones are checked by the core). */
    void (*add_capabilities)(const struct hprof_options *opts, jvmtiCapabilities *caps);
    /* Its own event callbacks. */
    void (*set_callbacks)(jvmtiEventCallbacks *cb);
    /* After capabilities and callbacks are set: enable its events, set up state. Called in
     * Agent_OnLoad (live == false) or Agent_OnAttach (live == true). Returns 0, or -1 after
     * logging why (the VM is then stopped at start-up). */
    int (*start)(jvmtiEnv *jvmti, const struct hprof_options *opts, bool live);
    /* The VM is live (VMInit, or at once after attach). */
    void (*vm_init)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    void (*thread_start)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    void (*thread_end)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    /* Writes its sections for one dump; takes output_lock() itself for the writing. */
    void (*dump)(const struct dump_request *req);
    /* VM death, before the final dump: stop agent threads, settle pending events. */
    void (*vm_death)(jvmtiEnv *jvmti, JNIEnv *jni);
};

#endif

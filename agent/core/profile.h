/* What a profile (heap=sites, heap=dump, cpu=samples, cpu=times, monitor=y) plugs into the
 * agent core. The core owns the JVMTI callback table: events only one profile uses are set by
 * that profile in set_callbacks; events several need (VM init and death, thread start and
 * end, class prepare, data dump request) are fanned out by the core through the hooks below.
 * Every hook may be NULL. */
#ifndef HPROF_PROFILE_H
#define HPROF_PROFILE_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "hprof_error.h"
#include "options.h"
#include "writer.h"

enum dump_reason {
    DUMP_AT_EXIT,    /* VM death with doe=y */
    DUMP_ON_SIGNAL,  /* DataDumpRequest: SIGQUIT, jcmd */
    DUMP_ON_COMMAND, /* a socket command */
};

/* What a dump writes. Exit and signal dumps ask for DUMP_ALL; socket commands ask for one
 * section each (ALLOC SITES -> DUMP_SITES, HEAP SUMMARY -> DUMP_HEAP_SUMMARY, ...). A profile
 * writes only the sections it owns that are asked for. */
enum dump_section {
    DUMP_HEAP = 0x01,         /* heap=dump: HEAP DUMP */
    DUMP_SITES = 0x02,        /* heap=sites: SITES / ALLOC SITES */
    DUMP_HEAP_SUMMARY = 0x04, /* heap=sites: HEAP SUMMARY (binary) */
    DUMP_CPU = 0x08,          /* cpu=samples|times|old: CPU SAMPLES / CPU TIME */
    DUMP_MONITORS = 0x10,     /* monitor=y: MONITOR TIME and MONITOR DUMP */
    DUMP_TRACES = 0x20,       /* every trace not written yet */
    DUMP_ALL = 0xFF,
};

struct dump_request {
    jvmtiEnv *jvmti;
    JNIEnv *jni; /* of the dumping thread; NULL when the thread has none */
    enum dump_reason reason;
    unsigned sections; /* enum dump_section bits */
    float cutoff;      /* ratio below which rows are left out (the cutoff= option by default) */
    uint16_t flags;    /* ALLOC SITES flags from a socket command (HPROF_SITES_*), else 0;
                        * HPROF_SITES_FORCE_GC: the sites profile forces a GC before counting */
    /* Writes CONTROL SETTINGS, core's record (control_commands.h), where a section wants it
     * (cpu=samples: before CPU SAMPLES); NULL: none. Output lock held. */
    void (*write_settings)(struct hprof_writer *w);
};

/* Socket CONTROL commands (and anything else that changes a running profile). */
enum control_kind {
    CONTROL_ALLOC_TRACES_ON = 1,
    CONTROL_ALLOC_TRACES_OFF = 2,
    CONTROL_CPU_SAMPLING_ON = 3,  /* thread: one thread, or NULL for all */
    CONTROL_CPU_SAMPLING_OFF = 4, /* thread: one thread, or NULL for all */
    CONTROL_CLEAR_CPU_SAMPLES = 5,
    CONTROL_SET_DEPTH = 6, /* depth */
};

struct control_request {
    jvmtiEnv *jvmti;
    JNIEnv *jni;
    enum control_kind kind;
    jthread thread;
    int depth;
};

struct hprof_profile {
    const char *name;
    /* The sections its dump writes (enum dump_section bits; 0: it says nothing), and the
     * options that turn it on, for the one warning when a socket command asks for a section
     * no running profile writes ("heap=sites or heap=all"). */
    unsigned sections;
    const char *option_text;
    /* Whether the options ask for this profile. */
    bool (*enabled)(const struct hprof_options *opts);
    /* Capabilities it needs (potential ones are checked by the core). */
    void (*add_capabilities)(const struct hprof_options *opts, jvmtiCapabilities *caps);
    /* Its own event callbacks. */
    void (*set_callbacks)(jvmtiEventCallbacks *cb);
    /* After capabilities and callbacks are set: enable its events, set up state. Called in
     * Agent_OnLoad (live == false) or Agent_OnAttach (live == true). Returns hprof_ok() or
     * why not, unlogged: the core logs it once (the VM is then stopped at start-up). */
    struct hprof_error (*start)(jvmtiEnv *jvmti, const struct hprof_options *opts, bool live);
    /* The VM is live (VMInit, or at once after attach). */
    void (*vm_init)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    void (*thread_start)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    void (*thread_end)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
    /* ClassPrepare (after the core registered the class). */
    void (*class_prepare)(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
    /* Writes its sections for one dump through the emitter (emit.h): emit_begin(), the traces
     * its rows name (emit_trace), the rows, emit_end(). */
    void (*dump)(const struct dump_request *req);
    /* A control command; profiles ignore kinds that are not theirs. */
    void (*control)(const struct control_request *req);
    /* Whether it samples now, for CONTROL SETTINGS (a profile that samples the CPU). */
    bool (*sampling_on)(void);
    /* Called while it is off (enabled() false): a socket command asked for one of its
     * sections (req->sections); writes that section empty if a front end waits for it. */
    void (*answer_off)(const struct dump_request *req);
    /* VM death, before the final dump: stop agent threads, settle pending events. */
    void (*vm_death)(jvmtiEnv *jvmti, JNIEnv *jni);
};

#endif

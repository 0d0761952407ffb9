/* The agent's entry points and life cycle: Agent_OnLoad (-agentlib, -agentpath, -Xrunhprof),
 * Agent_OnAttach (jcmd JVMTI.agent_load), and the events every profile shares. */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_sites.h"
#include "class_table.h"
#include "cpu_samples.h"
#include "cpu_times.h"
#include "dump_request.h"
#include "emit.h"
#include "frame_table.h"
#include "heap_dump.h"
#include "control_commands.h"
#include "control_listener.h"
#include "jvmti_util.h"
#include "log.h"
#include "mem_account.h"
#include "monitors.h"
#include "options.h"
#include "output.h"
#include "profile.h"
#include "string_table.h"
#include "thread_table.h"
#include "trace_table.h"
#include "wall_samples.h"

/* Every profile the agent knows, in the order their sections appear in a dump. The socket
 * listener is core's (control_listener.h): it starts before the profiles and, at VM death,
 * stops taking commands before they stop. */
static const struct hprof_profile *const all_profiles[] = {
    &heap_dump_profile,   &heap_sites_profile, &wall_samples_profile,
    &cpu_samples_profile, &cpu_times_profile,  &monitors_profile,
};

static const struct hprof_profile *enabled_profiles[sizeof all_profiles / sizeof *all_profiles];
static size_t nenabled;
static struct hprof_options options;
static bool started_live; /* attached: VM init already happened */

#define FOR_EACH_PROFILE(p)                                                                        \
    for (size_t i_ = 0; i_ < nenabled; i_++)                                                       \
        for (const struct hprof_profile *p = enabled_profiles[i_]; p; p = NULL)

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    class_table_register_loaded(jvmti, jni);
    thread_table_register_live(jvmti, jni);
    emit_threads_known();
    if (options.net_host)
        control_listener_vm_init(jvmti, jni);
    FOR_EACH_PROFILE(p)
    if (p->vm_init)
        p->vm_init(jvmti, jni, thread);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct thread_info *t = thread_table_of(jvmti, jni, thread);
    if (t)
        emit_thread_start(t->serial);
    FOR_EACH_PROFILE(p)
    if (p->thread_start)
        p->thread_start(jvmti, jni, thread);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    FOR_EACH_PROFILE(p)
    if (p->thread_end)
        p->thread_end(jvmti, jni, thread);
    struct thread_info *t = thread_table_ended(jvmti, jni, thread);
    if (t)
        emit_thread_end(t->serial);
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    class_table_serial_of(jvmti, klass);
    FOR_EACH_PROFILE(p)
    if (p->class_prepare)
        p->class_prepare(jvmti, jni, thread, klass);
}

static void JNICALL on_data_dump_request(jvmtiEnv *jvmti)
{
    JNIEnv *jni = NULL;
    JavaVM *vm = jvmti_util_vm();
    if (vm && (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK)
        jni = NULL;
    struct dump_request req = {jvmti, jni, DUMP_ON_SIGNAL, DUMP_ALL, (float)options.cutoff,
                               0,     NULL};
    dump_request_all(&req);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (options.net_host)
        control_listener_stop();
    FOR_EACH_PROFILE(p)
    if (p->vm_death)
        p->vm_death(jvmti, jni);
    if (options.doe) {
        struct dump_request req = {jvmti, jni, DUMP_AT_EXIT, DUMP_ALL, (float)options.cutoff,
                                   0,     NULL};
        dump_request_all(&req);
    }
    class_table_flush_unloads();
    dump_request_write_unloads(); /* the rest: nothing follows them */
    output_close();
}

/* Frees the tables: after a failed start no event can reach them any more. */
static void teardown_tables(void)
{
    emit_reset();
    thread_table_teardown();
    trace_table_teardown();
    frame_table_teardown();
    class_table_teardown();
    string_table_teardown();
}

static struct hprof_error init_tables(void)
{
    if (string_table_init() || class_table_init() || frame_table_init(options.lineno) ||
        trace_table_init(options.depth) || thread_table_init())
        return hprof_errorf("out of memory at start-up");
    return hprof_ok();
}

/* Capabilities, callbacks and events of the core and every enabled profile. */
static struct hprof_error setup_jvmti(jvmtiEnv *jvmti, bool live)
{
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_tag_objects = 1;
    caps.can_get_source_file_name = 1;
    caps.can_get_line_numbers = 1;
    FOR_EACH_PROFILE(p)
    if (p->add_capabilities)
        p->add_capabilities(&options, &caps);
    struct hprof_error e =
        jvmti_util_error(jvmti, (*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities");
    if (hprof_failed(&e))
        return e;

    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassPrepare = on_class_prepare;
    cb.DataDumpRequest = on_data_dump_request;
    FOR_EACH_PROFILE(p)
    if (p->set_callbacks)
        p->set_callbacks(&cb);
    e = jvmti_util_error(jvmti, (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb),
                         "SetEventCallbacks");
    if (hprof_failed(&e))
        return e;

    static const jvmtiEvent core_events[] = {
        JVMTI_EVENT_VM_INIT,    JVMTI_EVENT_VM_DEATH,      JVMTI_EVENT_THREAD_START,
        JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_DATA_DUMP_REQUEST,
    };
    for (size_t i = 0; i < sizeof core_events / sizeof *core_events; i++) {
        if (live && core_events[i] == JVMTI_EVENT_VM_INIT)
            continue;
        e = jvmti_util_error(
            jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, core_events[i], NULL),
            "SetEventNotificationMode");
        if (hprof_failed(&e))
            return e;
    }
    if (options.net_host)
        control_listener_start();
    FOR_EACH_PROFILE(p)
    if (p->start) {
        e = p->start(jvmti, &options, live);
        if (hprof_failed(&e))
            return e;
    }
    return hprof_ok();
}

/* What start_agent did: the profile runs, or only the help text was printed (attach), or an
 * error (at start-up the VM then stops; attached, the JVM unloads the library again). */
enum start_result { STARTED, HELP_ONLY, START_FAILED };

/* Shared by OnLoad and OnAttach. */
static enum start_result start_agent(JavaVM *vm, const char *option_string, bool live)
{
    nenabled = 0; /* a failed attach may leave the library loaded: start from nothing again */
    struct hprof_error e = options_parse(option_string, &options);
    if (hprof_failed(&e)) {
        log_error("%s", e.text); /* the VM does not start (attached: the library unloads) */
        if (live && option_string && !strchr(option_string, '='))
            log_error("jcmd splits an unquoted option string at '=': pass it in inner quotes, "
                      "e.g. jcmd <pid> JVMTI.agent_load <lib> '\"heap=dump,format=b\"'");
        return START_FAILED;
    }
    if (options.help) {
        fputs(options_help_text(), stdout);
        fflush(stdout);
        if (live)
            return HELP_ONLY; /* never kill a running VM for help */
        exit(0);
    }
    if (options.warnings[0])
        fputs(options.warnings, stderr);
    log_set_verbose(options.verbose);
    mem_account_start((size_t)options.memory_mb << 20);

    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK || !jvmti) {
        log_error("this VM offers no JVMTI 11 environment (JDK 11 or newer is needed)");
        return START_FAILED;
    }
    jvmti_util_set_vm(vm);
    jvmti_util_set_env(jvmti);

    for (size_t i = 0; i < sizeof all_profiles / sizeof *all_profiles; i++)
        if (all_profiles[i] && all_profiles[i]->enabled(&options))
            enabled_profiles[nenabled++] = all_profiles[i];
    dump_request_set_profiles(enabled_profiles, nenabled);
    dump_request_set_settings_writer(control_commands_write_settings);
    control_commands_init(&options, all_profiles, sizeof all_profiles / sizeof *all_profiles);
    dump_request_set_unloads_at_end(options.heap_sites);

    e = init_tables();
    if (!hprof_failed(&e))
        e = output_open(&options);
    if (hprof_failed(&e)) {
        log_error("%s", e.text);
        teardown_tables();
        return START_FAILED;
    }
    emit_first_records();
    e = setup_jvmti(jvmti, live);
    if (hprof_failed(&e)) {
        log_error("%s", e.text);
        /* Attached, the JVM unloads the library after a failure: no event may reach it. */
        if (live) {
            (*jvmti)->DisposeEnvironment(jvmti);
            output_close();
            teardown_tables(); /* no event can come any more */
        }
        return START_FAILED;
    }
    started_live = live;
    return STARTED;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *opts, void *reserved)
{
    (void)reserved;
    return start_agent(vm, opts, false) == START_FAILED ? JNI_ERR : JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *opts, void *reserved)
{
    (void)reserved;
    /* Set only once a profile runs: after a failed load or a help request the JVM may keep the
     * library mapped (a help load returns JNI_OK), and the next load must still work. */
    static bool attached;
    if (attached) {
        log_error("hprof is already loaded in this VM; a second load is ignored");
        return JNI_ERR;
    }
    switch (start_agent(vm, opts, true)) {
    case START_FAILED:
        return JNI_ERR;
    case HELP_ONLY:
        return JNI_OK; /* nothing started: no VM init to replay */
    case STARTED:
        break;
    }
    attached = true;
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK)
        return JNI_ERR;
    on_vm_init(jvmti_util_env(), jni, NULL);
    return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    output_close();
}

/* The control channel's commands and CONTROL SETTINGS (control_commands.h). */
#include "control_commands.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "dump_request.h"
#include "emit.h"
#include "jvmti_util.h"
#include "log.h"
#include "thread_table.h"
#include "trace_table.h"

_Static_assert(HPROF_CMD_DEPTH_MAX == HPROF_DEPTH_MAX, "CONTROL depth bound = depth= bound");
_Static_assert((int)HPROF_CTL_ALLOC_TRACES_ON == (int)CONTROL_ALLOC_TRACES_ON &&
                   (int)HPROF_CTL_ALLOC_TRACES_OFF == (int)CONTROL_ALLOC_TRACES_OFF &&
                   (int)HPROF_CTL_CPU_SAMPLING_ON == (int)CONTROL_CPU_SAMPLING_ON &&
                   (int)HPROF_CTL_CPU_SAMPLING_OFF == (int)CONTROL_CPU_SAMPLING_OFF &&
                   (int)HPROF_CTL_CLEAR_CPU_SAMPLES == (int)CONTROL_CLEAR_CPU_SAMPLES &&
                   (int)HPROF_CTL_SET_DEPTH == (int)CONTROL_SET_DEPTH,
               "CONTROL sub options = enum control_kind");
_Static_assert(HPROF_CMD_SITES_FLAGS_KNOWN ==
                   (HPROF_SITES_INCREMENTAL | HPROF_SITES_BY_ALLOC | HPROF_SITES_FORCE_GC),
               "ALLOC SITES flags = HPROF_SITES_*");

/* The longest "nothing to write without ..." list of options. */
#define OPTIONS_TEXT_LEN 256

static const struct hprof_options *options;
static const struct hprof_profile *const *known;
static size_t nknown;

/* The settings CONTROL SETTINGS states: alloc traces (heap=sites or heap=dump at start) and cpu
 * sampling (cpu=samples at start), as the CONTROL commands switched them. A profile that
 * samples says itself whether it does (hprof_profile.sampling_on). */
static _Atomic(bool) alloc_traces_on, cpu_sampling_on;

void control_commands_init(const struct hprof_options *opts,
                           const struct hprof_profile *const *profiles, size_t n)
{
    options = opts;
    known = profiles;
    nknown = n;
    atomic_store(&alloc_traces_on, opts->heap_sites || opts->heap_dump);
    atomic_store(&cpu_sampling_on, opts->cpu == HPROF_CPU_SAMPLES);
}

static bool cpu_sampling(void)
{
    for (size_t i = 0; i < nknown; i++)
        if (known[i]->sampling_on && known[i]->enabled(options))
            return known[i]->sampling_on();
    return atomic_load(&cpu_sampling_on);
}

void control_commands_write_settings(struct hprof_writer *w)
{
    w->ops->control_settings(w, atomic_load(&alloc_traces_on), cpu_sampling(),
                             (uint16_t)trace_table_depth());
}

static void write_settings_record(struct hprof_writer *w, void *ctx)
{
    (void)ctx;
    control_commands_write_settings(w);
    w->ops->flush(w);
}

/* ---- dumps ------------------------------------------------------------------------------ */

/* Whether a running profile writes section; else the options of the profiles that would, in
 * text (empty when no profile claims the section: it is written anyway, as DUMP HEAP is). */
static bool section_written(unsigned section, char *would, size_t len)
{
    would[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < nknown; i++) {
        if (!(known[i]->sections & section))
            continue;
        if (known[i]->enabled(options))
            return true;
        int k = snprintf(would + used, len - used, "%s%s", used ? ", " : "",
                         known[i]->option_text ? known[i]->option_text : known[i]->name);
        if (k > 0)
            used = used + (size_t)k < len ? used + (size_t)k : len - 1;
    }
    return would[0] == '\0';
}

static void run_dump(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c, unsigned section,
                     struct control_commands_report *rep)
{
    struct dump_request req = {
        .jvmti = jvmti,
        .jni = jni,
        .reason = DUMP_ON_COMMAND,
        .sections = section,
        .cutoff = (float)options->cutoff,
        .flags = 0,
    };
    if (c->tag == HPROF_CMD_ALLOC_SITES || c->tag == HPROF_CMD_CPU_SAMPLES)
        req.cutoff = c->cutoff;
    if (c->tag == HPROF_CMD_ALLOC_SITES)
        req.flags = c->flags;
    char would[OPTIONS_TEXT_LEN];
    if (section_written(section, would, sizeof would)) {
        dump_request_all(&req);
        return;
    }
    if (!(rep->warned_sections & section))
        log_warning("socket command %s: nothing to write without %s", command_parser_name(c->tag),
                    would);
    rep->warned_sections |= section;
    /* The answer a front end waiting for the section gets: the first profile that would write
     * it, asked for its empty form. */
    for (size_t i = 0; i < nknown; i++) {
        if ((known[i]->sections & section) && known[i]->answer_off) {
            known[i]->answer_off(&req);
            break;
        }
    }
}

/* ---- the other commands ------------------------------------------------------------------ */

static void force_gc(jvmtiEnv *jvmti)
{
    jvmti_util_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti), "ForceGarbageCollection");
}

/* Ends the VM the way the application would: System.exit(0) runs the shutdown hooks, then
 * VM death (and the exit dump with doe=y) on this thread. It returns only if exit threw
 * (a security manager); then Runtime.halt(0), which skips the hooks but still posts VM
 * death. */
static void exit_vm(JNIEnv *jni)
{
    log_info("socket command EXIT THE VM: calling System.exit(0)");
    jclass system = (*jni)->FindClass(jni, "java/lang/System");
    jmethodID exit_id = system ? (*jni)->GetStaticMethodID(jni, system, "exit", "(I)V") : NULL;
    if (exit_id)
        (*jni)->CallStaticVoidMethod(jni, system, exit_id, (jint)0);
    (*jni)->ExceptionClear(jni);
    log_error("socket command EXIT THE VM: System.exit(0) failed; halting the VM");
    jclass runtime = (*jni)->FindClass(jni, "java/lang/Runtime");
    jmethodID get =
        runtime ? (*jni)->GetStaticMethodID(jni, runtime, "getRuntime", "()Ljava/lang/Runtime;")
                : NULL;
    jobject rt = get ? (*jni)->CallStaticObjectMethod(jni, runtime, get) : NULL;
    jmethodID halt = rt ? (*jni)->GetMethodID(jni, runtime, "halt", "(I)V") : NULL;
    if (halt)
        (*jni)->CallVoidMethod(jni, rt, halt, (jint)0);
    (*jni)->ExceptionClear(jni);
    log_error("socket command EXIT THE VM: Runtime.halt(0) failed too; the VM keeps running");
}

static void run_control(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c)
{
    struct control_request req = {
        .jvmti = jvmti,
        .jni = jni,
        .kind = (enum control_kind)c->control,
        .thread = NULL,
        .depth = (int)c->depth,
    };
    bool for_thread =
        (c->control == HPROF_CTL_CPU_SAMPLING_ON || c->control == HPROF_CTL_CPU_SAMPLING_OFF) &&
        c->thread_id != 0;
    if (for_thread) {
        req.thread = thread_table_find_live(jvmti, jni, c->thread_id);
        if (!req.thread) {
            log_warning("socket command CONTROL %u (serial %" PRIu32
                        "): no live thread has object id 0x%" PRIx64 "; ignored",
                        c->control, c->serial, c->thread_id);
            return;
        }
    }
    switch (c->control) {
    case HPROF_CTL_ALLOC_TRACES_ON:
        atomic_store(&alloc_traces_on, true);
        break;
    case HPROF_CTL_ALLOC_TRACES_OFF:
        atomic_store(&alloc_traces_on, false);
        break;
    case HPROF_CTL_CPU_SAMPLING_ON:
        atomic_store(&cpu_sampling_on, true);
        break;
    case HPROF_CTL_CPU_SAMPLING_OFF:
        if (!for_thread)
            atomic_store(&cpu_sampling_on, false);
        break;
    case HPROF_CTL_SET_DEPTH:
        trace_table_set_depth((int)c->depth);
        break;
    default:
        break;
    }
    dump_request_control(&req);
    if (req.thread)
        (*jni)->DeleteLocalRef(jni, req.thread);
    emit_section(NULL, write_settings_record, NULL);
}

/* The commands that ask for one section of a dump. HPROF_SITES_FORCE_GC travels in the ALLOC
 * SITES request's flags: heap=sites forces the GC itself, under its own lock, right before it
 * counts. */
static const struct {
    uint8_t tag;
    unsigned section;
} dump_commands[] = {
    {HPROF_CMD_DUMP_HEAP, DUMP_HEAP},
    {HPROF_CMD_ALLOC_SITES, DUMP_SITES},
    {HPROF_CMD_HEAP_SUMMARY, DUMP_HEAP_SUMMARY},
    {HPROF_CMD_DUMP_TRACES, DUMP_TRACES},
    {HPROF_CMD_CPU_SAMPLES, DUMP_CPU},
};

void control_commands_run(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c,
                          struct control_commands_report *rep)
{
    log_info("socket command %s (serial %" PRIu32 ")", command_parser_name(c->tag), c->serial);
    for (size_t i = 0; i < sizeof dump_commands / sizeof *dump_commands; i++)
        if (c->tag == dump_commands[i].tag) {
            run_dump(jvmti, jni, c, dump_commands[i].section, rep);
            return;
        }
    if (c->tag == HPROF_CMD_FORCE_GC)
        force_gc(jvmti);
    else if (c->tag == HPROF_CMD_EXIT_VM)
        exit_vm(jni);
    else if (c->tag == HPROF_CMD_CONTROL)
        run_control(jvmti, jni, c);
}

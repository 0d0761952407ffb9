/* The command listener of net=host:port (doc/socket.md).
 *
 * One agent thread ("HPROF listener") reads the socket through its own dup of the
 * descriptor, so closing the output never pulls a descriptor from under a blocked read. It
 * polls with a timeout and reads what is there (MSG_DONTWAIT), feeds the bytes to the pure
 * parser (protocol/command_parser.h) and runs each command in turn on this thread: dumps go
 * through dump_all() with DUMP_ON_COMMAND, so they are written like any other dump, one at a
 * time. Nothing here runs on an application thread; a peer that sends garbage, trickles bytes
 * or vanishes costs the VM at most this thread's time (valid commands cost what they ask for:
 * a heap dump is a heap dump).
 *
 * Stopping: at VM death the core calls this profile's vm_death first. It marks the listener
 * stopping, wakes a blocked poll through a pipe and waits, bounded, for the thread to finish
 * the command it is running, so no command dump runs into the final one. Commands parsed
 * after that are counted, not run; so are those still unread when the output closes (the
 * sink hands them over, sink_on_input), and one line says how many were not run. The socket's
 * read side is left open: input left unread at close would make the close reset the
 * connection. */
#include "control_listener.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "command_parser.h"
#include "dump_request.h"
#include "jvmti_util.h"
#include "log.h"
#include "emit.h"
#include "output.h"
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

/* How often a waiting listener looks at the stop flag (the wake pipe wakes it sooner). */
#define LISTENER_POLL_MS 500
/* How long VM death waits for a command in progress (a heap dump) before going on. */
#define LISTENER_STOP_WAIT_MS 30000
/* Bad commands reported one by one; after that only counted. */
#define LISTENER_MAX_REPORTS 8

static const struct hprof_options *options;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int read_fd = -1;            /* the listener's dup of the socket */
static int wake_pipe[2] = {-1, -1}; /* written at VM death to wake the listener's poll */
/* The command stream's state, kept past the thread's end to count unrun commands. */
static struct hprof_cmd_parser parser;
static bool reading_commands = true;
static uint64_t not_run;
/* The bytes of the read buffer not parsed yet while a command runs (EXIT THE VM ends the VM
 * inside handle_bytes: the count goes on from here). */
static const uint8_t *unparsed;
static size_t unparsed_len;
static bool running;      /* the thread was started and has not finished */
static uint8_t busy_with; /* tag of the command being run, 0 when none (lock) */
static atomic_bool stopping;
static _Thread_local bool on_listener_thread;

/* What the CONTROL SETTINGS record written after a CONTROL command says. */
static bool alloc_traces_on, cpu_sampling_on;

/* Messages about one connection, each said once. */
struct listener_report {
    unsigned bad_reported;
    uint64_t bad_unreported;
    unsigned warned_sections; /* enum dump_section bits already warned about */
};

/* Counts the commands in b[0..n) into not_run (the stream's state goes on in parser). */
static void count_commands(const uint8_t *b, size_t n)
{
    size_t used = 0;
    while (reading_commands && used < n) {
        struct hprof_cmd_result r;
        used += hprof_cmd_parse(&parser, b + used, n - used, &r);
        if (r.kind == HPROF_CMD_COMMAND)
            not_run++;
        else if (r.kind == HPROF_CMD_END)
            reading_commands = false;
    }
}

/* At the output's close: what the peer sent that the listener never read (sink_on_input),
 * then (NULL, 0). Counted only when no listener can be parsing: it has finished, or this is
 * its own thread (EXIT THE VM ends the VM from inside a command). */
static void count_unread(void *ctx, const uint8_t *buf, size_t n)
{
    (void)ctx;
    pthread_mutex_lock(&lock);
    bool counting = !running || on_listener_thread;
    pthread_mutex_unlock(&lock);
    if (!counting) {
        if (!buf)
            log_warning("socket commands that came while the listener was still busy at exit "
                        "were not run");
        return;
    }
    if (unparsed_len > 0) {
        const uint8_t *u = unparsed;
        size_t un = unparsed_len;
        unparsed_len = 0;
        count_commands(u, un);
    }
    if (buf) {
        count_commands(buf, n);
        return;
    }
    struct hprof_cmd_result r;
    if (reading_commands && hprof_cmd_parser_finish(&parser, &r))
        not_run++; /* cut short by the end of the connection */
    if (not_run > 0)
        log_warning("%" PRIu64 " socket command%s not run: the VM was exiting", not_run,
                    not_run == 1 ? " was" : "s were");
}

static bool listener_enabled(const struct hprof_options *opts)
{
    return opts->net_host != NULL;
}

static int listener_start(jvmtiEnv *jvmti, const struct hprof_options *opts, bool live)
{
    (void)jvmti;
    (void)live;
    options = opts;
    alloc_traces_on = opts->heap_sites || opts->heap_dump;
    cpu_sampling_on = opts->cpu == HPROF_CPU_SAMPLES;
    int fd = output_socket_fd();
    if (fd >= 0)
        read_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (read_fd >= 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(read_fd);
        read_fd = -1;
    }
    hprof_cmd_parser_init(&parser);
    if (read_fd >= 0)
        output_on_unread_input(count_unread, NULL);
    if (read_fd < 0)
        log_warning("cannot read commands from %s: %s; the profile is still written", output_name(),
                    strerror(errno));
    return 0;
}

/* ---- commands ------------------------------------------------------------------------ */

/* Which option writes a section, for the one warning when a command asks for a section no
 * enabled profile writes. NULL when the section is always written: DUMP HEAP dumps the heap
 * whatever heap= says, as the JDK 8 agent did (heap_dump.c). */
static const char *missing_option(unsigned section)
{
    switch (section) {
    case DUMP_SITES:
    case DUMP_HEAP_SUMMARY:
        return options->heap_sites ? NULL : "heap=sites or heap=all";
    case DUMP_CPU:
        return options->cpu != HPROF_CPU_OFF ? NULL : "cpu=samples, cpu=times or cpu=old";
    default:
        return NULL;
    }
}

/* The answer to ALLOC SITES or CPU SAMPLES when their profile is off: the section, empty
 * (no rows, totals 0), so that a front end waiting for it gets one. HEAP SUMMARY gets none
 * (its zeros would read as an empty heap): only the warning. */
static void answer_empty(const struct hprof_command *c, unsigned section)
{
    struct hprof_writer *w = emit_begin();
    if (w && section == DUMP_SITES) {
        struct hprof_sites_report r;
        memset(&r, 0, sizeof r);
        r.flags = c->flags;
        r.cutoff = c->cutoff;
        w->ops->sites(w, &r);
        w->ops->flush(w);
    } else if (w && section == DUMP_CPU) {
        struct hprof_cost_report r;
        memset(&r, 0, sizeof r);
        w->ops->cpu_samples(w, &r);
        w->ops->flush(w);
    }
    emit_end();
}

static void run_dump(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c, unsigned section,
                     struct listener_report *rep)
{
    const char *need = missing_option(section);
    if (need) {
        if (!(rep->warned_sections & section))
            log_warning("socket command %s: nothing to write without %s", hprof_cmd_name(c->tag),
                        need);
        rep->warned_sections |= section;
        answer_empty(c, section);
        return;
    }
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
    dump_all(&req);
}

static void force_gc(jvmtiEnv *jvmti)
{
    jvmti_failed(jvmti, (*jvmti)->ForceGarbageCollection(jvmti), "ForceGarbageCollection");
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

static void write_control_settings(void)
{
    struct hprof_writer *w = emit_begin();
    if (w) {
        int depth = traces_depth();
        w->ops->control_settings(w, alloc_traces_on, cpu_sampling_on, (uint16_t)depth);
        w->ops->flush(w);
    }
    emit_end();
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
        req.thread = threads_find_live(jvmti, jni, c->thread_id);
        if (!req.thread) {
            log_warning("socket command CONTROL %u (serial %" PRIu32
                        "): no live thread has object id 0x%" PRIx64 "; ignored",
                        c->control, c->serial, c->thread_id);
            return;
        }
    }
    switch (c->control) {
    case HPROF_CTL_ALLOC_TRACES_ON:
        alloc_traces_on = true;
        break;
    case HPROF_CTL_ALLOC_TRACES_OFF:
        alloc_traces_on = false;
        break;
    case HPROF_CTL_CPU_SAMPLING_ON:
        cpu_sampling_on = true;
        break;
    case HPROF_CTL_CPU_SAMPLING_OFF:
        if (!for_thread)
            cpu_sampling_on = false;
        break;
    case HPROF_CTL_SET_DEPTH:
        traces_set_depth((int)c->depth);
        break;
    default:
        break;
    }
    dump_control(&req);
    if (req.thread)
        (*jni)->DeleteLocalRef(jni, req.thread);
    write_control_settings();
}

static void run_command(jvmtiEnv *jvmti, JNIEnv *jni, const struct hprof_command *c,
                        struct listener_report *rep)
{
    log_info("socket command %s (serial %" PRIu32 ")", hprof_cmd_name(c->tag), c->serial);
    switch (c->tag) {
    case HPROF_CMD_FORCE_GC:
        force_gc(jvmti);
        break;
    case HPROF_CMD_DUMP_HEAP:
        run_dump(jvmti, jni, c, DUMP_HEAP, rep);
        break;
    case HPROF_CMD_ALLOC_SITES:
        /* HPROF_SITES_FORCE_GC travels in req.flags: heap=sites forces the GC itself, under
         * its own lock, right before it counts. */
        run_dump(jvmti, jni, c, DUMP_SITES, rep);
        break;
    case HPROF_CMD_HEAP_SUMMARY:
        run_dump(jvmti, jni, c, DUMP_HEAP_SUMMARY, rep);
        break;
    case HPROF_CMD_EXIT_VM:
        exit_vm(jni);
        break;
    case HPROF_CMD_DUMP_TRACES:
        run_dump(jvmti, jni, c, DUMP_TRACES, rep);
        break;
    case HPROF_CMD_CPU_SAMPLES:
        run_dump(jvmti, jni, c, DUMP_CPU, rep);
        break;
    case HPROF_CMD_CONTROL:
        run_control(jvmti, jni, c);
        break;
    default:
        break;
    }
}

static void report_bad(const struct hprof_cmd_result *r, struct listener_report *rep)
{
    if (r->error == HPROF_CMD_ERR_TOO_LONG) {
        log_error("socket command with tag 0x%02x, serial %" PRIu32 " and length %" PRIu32
                  " (more than %u): not a command stream; no more commands are read",
                  r->command.tag, r->command.serial, r->length, HPROF_CMD_LENGTH_MAX);
        return;
    }
    if (rep->bad_reported == LISTENER_MAX_REPORTS) {
        rep->bad_unreported++;
        return;
    }
    log_warning("socket command %s (tag 0x%02x, serial %" PRIu32 ", length %" PRIu32
                ") ignored: %s",
                hprof_cmd_name(r->command.tag), r->command.tag, r->command.serial, r->length,
                hprof_cmd_error_text(r->error));
    if (++rep->bad_reported == LISTENER_MAX_REPORTS)
        log_warning("further bad socket commands are counted, not reported one by one");
}

static void set_busy(uint8_t tag)
{
    pthread_mutex_lock(&lock);
    busy_with = tag;
    pthread_mutex_unlock(&lock);
}

/* Parses and runs everything in buf; once the listener is stopping, counts the commands
 * instead. Returns false once the stream has ended (EOF or a fatal error): later bytes are
 * read and dropped. */
static bool handle_bytes(jvmtiEnv *jvmti, JNIEnv *jni, const uint8_t *buf, size_t n,
                         struct listener_report *rep)
{
    size_t used = 0;
    while (used < n) {
        struct hprof_cmd_result r;
        used += hprof_cmd_parse(&parser, buf + used, n - used, &r);
        switch (r.kind) {
        case HPROF_CMD_COMMAND:
            if (atomic_load(&stopping)) {
                not_run++;
                break;
            }
            set_busy(r.command.tag);
            unparsed = buf + used;
            unparsed_len = n - used;
            run_command(jvmti, jni, &r.command, rep);
            unparsed = NULL;
            unparsed_len = 0;
            set_busy(0);
            break;
        case HPROF_CMD_ERROR:
            report_bad(&r, rep);
            break;
        case HPROF_CMD_END:
            if (r.command.tag == HPROF_CMD_EOF)
                log_info("socket command EOF: no more commands are read");
            return false;
        case HPROF_CMD_NEED_MORE:
            break;
        }
    }
    return true;
}

static void JNICALL listener_run(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)arg;
    on_listener_thread = true;
    struct listener_report rep;
    memset(&rep, 0, sizeof rep);
    uint8_t buf[4096];
    while (!atomic_load(&stopping)) {
        struct pollfd pfd[2] = {{.fd = read_fd, .events = POLLIN},
                                {.fd = wake_pipe[0], .events = POLLIN}};
        int pr = poll(pfd, 2, LISTENER_POLL_MS);
        if (pr == 0 || (pr < 0 && errno == EINTR) || (pr > 0 && !pfd[0].revents))
            continue;
        if (pr < 0) {
            log_error("cannot wait for socket commands: %s", strerror(errno));
            break;
        }
        ssize_t got = recv(read_fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (got < 0) {
            /* The sink reports the same broken connection when it next writes. */
            if (!atomic_load(&stopping))
                log_warning("socket commands: %s; no more commands are read", strerror(errno));
            reading_commands = false; /* the stream is over: nothing is left to count */
            break;
        }
        if (got == 0) {
            struct hprof_cmd_result r;
            if (reading_commands && hprof_cmd_parser_finish(&parser, &r))
                log_warning("socket command %s (tag 0x%02x) cut short: the peer closed the "
                            "connection inside it",
                            hprof_cmd_name(r.command.tag), r.command.tag);
            else if (reading_commands && !atomic_load(&stopping))
                log_warning("the peer closed the connection (no EOF command); no more "
                            "commands are read");
            reading_commands = false;
            break;
        }
        /* After EOF or a fatal error, keep reading and dropping what arrives: unread bytes
         * would make the final close reset the connection. */
        if (reading_commands)
            reading_commands = handle_bytes(jvmti, jni, buf, (size_t)got, &rep);
    }
    if (rep.bad_unreported)
        log_warning("%" PRIu64 " more bad socket commands were ignored", rep.bad_unreported);
    pthread_mutex_lock(&lock);
    close(read_fd);
    read_fd = -1;
    running = false;
    pthread_cond_broadcast(&finished);
    pthread_mutex_unlock(&lock);
}

/* ---- life cycle ---------------------------------------------------------------------- */

static void listener_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    if (read_fd < 0)
        return;
    pthread_mutex_lock(&lock);
    running = true;
    pthread_mutex_unlock(&lock);
    if (!jvmti_start_agent_thread(jvmti, jni, "HPROF listener", listener_run, NULL,
                                  JVMTI_THREAD_NORM_PRIORITY)) {
        log_error("cannot start the socket listener thread; commands are not read");
        pthread_mutex_lock(&lock);
        running = false;
        pthread_mutex_unlock(&lock);
    }
}

static void listener_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    atomic_store(&stopping, true);
    pthread_mutex_lock(&lock);
    if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0) {
        /* the pipe is full: the listener is awake already */
    }
    /* On the listener's own thread (EXIT THE VM) there is nothing to wait for. A listener
     * inside EXIT THE VM on another path is never waited for either: it is ending the VM. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LISTENER_STOP_WAIT_MS / 1000;
    while (running && !on_listener_thread && busy_with != HPROF_CMD_EXIT_VM) {
        if (pthread_cond_timedwait(&finished, &lock, &until) == ETIMEDOUT) {
            log_warning("the socket listener is still running %s after %d s; going on",
                        hprof_cmd_name(busy_with), LISTENER_STOP_WAIT_MS / 1000);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

const struct hprof_profile listener_profile = {
    .name = "listener",
    .enabled = listener_enabled,
    .start = listener_start,
    .vm_init = listener_vm_init,
    .vm_death = listener_vm_death,
};

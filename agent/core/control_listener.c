/* The command listener of net=host:port (doc/socket.md).
 *
 * One agent thread ("HPROF listener") reads the socket through its own dup of the
 * descriptor, so closing the output never pulls a descriptor from under a blocked read. It
 * polls with a timeout and reads what is there (MSG_DONTWAIT), feeds the bytes to the pure
 * parser (protocol/command_parser.h) and runs each command in turn on this thread
 * (control_commands.h): dumps go through dump_request_all() with DUMP_ON_COMMAND, so they are
 * written like any other dump, one at a time. Nothing here runs on an application thread; a peer
 * that sends garbage, trickles bytes or vanishes costs the VM at most this thread's time (valid
 * commands cost what they ask for: a heap dump is a heap dump).
 *
 * Stopping: at VM death the core calls control_listener_stop before any profile stops. It marks the
 * listener stopping, wakes a blocked poll through a pipe and waits, bounded, for the thread to
 * finish the command it is running, so no command dump runs into the final one. Commands parsed
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
#include "control_commands.h"
#include "jvmti_util.h"
#include "log.h"
#include "output.h"

/* How often a waiting listener looks at the stop flag (the wake pipe wakes it sooner). */
#define LISTENER_POLL_MS 500
/* How long VM death waits for a command in progress (a heap dump) before going on. */
#define LISTENER_STOP_WAIT_MS 30000
/* Bad commands reported one by one; after that only counted. */
#define LISTENER_MAX_REPORTS 8

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

/* Messages about one connection, each said once. */
struct listener_report {
    unsigned bad_reported;
    uint64_t bad_unreported;
    struct control_commands_report commands;
};

/* Counts the commands in b[0..n) into not_run (the stream's state goes on in parser). */
static void count_commands(const uint8_t *b, size_t n)
{
    size_t used = 0;
    while (reading_commands && used < n) {
        struct hprof_cmd_result r;
        used += command_parser_parse(&parser, b + used, n - used, &r);
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
    if (reading_commands && command_parser_parser_finish(&parser, &r))
        not_run++; /* cut short by the end of the connection */
    if (not_run > 0)
        log_warning("%" PRIu64 " socket command%s not run: the VM was exiting", not_run,
                    not_run == 1 ? " was" : "s were");
}

void control_listener_start(void)
{
    int fd = output_socket_fd();
    if (fd >= 0)
        read_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (read_fd >= 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(read_fd);
        read_fd = -1;
    }
    command_parser_parser_init(&parser);
    if (read_fd >= 0)
        output_on_unread_input(count_unread, NULL);
    if (read_fd < 0)
        log_warning("cannot read commands from %s: %s; the profile is still written", output_name(),
                    strerror(errno));
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
                command_parser_name(r->command.tag), r->command.tag, r->command.serial, r->length,
                command_parser_error_text(r->error));
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
        used += command_parser_parse(&parser, buf + used, n - used, &r);
        switch (r.kind) {
        case HPROF_CMD_COMMAND:
            if (atomic_load(&stopping)) {
                not_run++;
                break;
            }
            set_busy(r.command.tag);
            unparsed = buf + used;
            unparsed_len = n - used;
            control_commands_run(jvmti, jni, &r.command, &rep->commands);
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
            if (reading_commands && command_parser_parser_finish(&parser, &r))
                log_warning("socket command %s (tag 0x%02x) cut short: the peer closed the "
                            "connection inside it",
                            command_parser_name(r.command.tag), r.command.tag);
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

void control_listener_vm_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
    if (read_fd < 0)
        return;
    pthread_mutex_lock(&lock);
    running = true;
    pthread_mutex_unlock(&lock);
    if (!jvmti_util_start_agent_thread(jvmti, jni, "HPROF listener", listener_run, NULL,
                                       JVMTI_THREAD_NORM_PRIORITY)) {
        log_error("cannot start the socket listener thread; commands are not read");
        pthread_mutex_lock(&lock);
        running = false;
        pthread_mutex_unlock(&lock);
    }
}

void control_listener_stop(void)
{
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
                        command_parser_name(busy_with), LISTENER_STOP_WAIT_MS / 1000);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* hprof-listen: the front end for net=host:port (doc/socket.md).
 *
 *   hprof-listen --port 9000 --out run.hprof [-c 'sites 0.01' -c dump ...]
 *   java -agentlib:hprof=heap=sites,format=b,net=myhost:9000 MyApp
 *
 * Listens for one agent, saves everything it writes to a file, and sends it commands given
 * with -c (in order) and, when no -c is given or with --stdin, typed on stdin one per line.
 * Ends when the agent closes the connection (its VM has exited). The socket is non-blocking
 * both ways, so a command never waits for an agent busy writing, and the stream is saved
 * while commands are pending. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "command_parser.h"
#include "command_text.h"

#define PROGRAM "hprof-listen"
#define OUT_BUFFER_MAX (1024 * 1024) /* commands waiting to be sent */
#define LINE_MAX_LEN 4096

static const char usage_text[] =
    "usage: " PROGRAM " --port PORT --out FILE [options]\n"
    "Waits for one hprof agent started with net=<this host>:PORT, saves the profile it\n"
    "sends to FILE, and sends it commands. Ends when the agent closes the connection.\n"
    "  -p, --port PORT          port to listen on; 0 picks a free one (printed)\n"
    "  -o, --out FILE           file the stream is saved to ('-' = stdout)\n"
    "  -H, --host ADDR          address to listen on (default: all IPv6 and IPv4 addresses;\n"
    "                           127.0.0.1 or ::1 for this machine only)\n"
    "  -c, --command CMD        send CMD once connected; repeatable, sent in order\n"
    "      --stdin              also read commands from stdin after the -c ones (the\n"
    "                           default when no -c is given)\n"
    "      --no-stdin           never read stdin\n"
    "      --port-file FILE     write the port number to FILE once listening\n"
    "      --accept-timeout S   give up when no agent connects within S seconds\n"
    "  -q, --quiet              no progress messages on stderr\n"
    "  -h, --help               this text and the list of commands\n";

static bool quiet;
static volatile sig_atomic_t interrupted;

static void vcomplain(const char *fmt, va_list ap)
{
    fprintf(stderr, PROGRAM ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* progress, silenced by --quiet */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vcomplain(fmt, ap);
    va_end(ap);
}

/* errors, always shown */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vcomplain(fmt, ap);
    va_end(ap);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* ---- the queue of things to send ----------------------------------------------------- */

struct queue {
    struct hprof_text_command *items;
    size_t n, cap, next;
};

static int queue_push(struct queue *q, const struct hprof_text_command *t)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        struct hprof_text_command *items = realloc(q->items, cap * sizeof *items);
        if (!items)
            return -1;
        q->items = items;
        q->cap = cap;
    }
    q->items[q->n++] = *t;
    return 0;
}

/* Drops what was sent so the queue does not grow without end on a long stdin session. */
static void queue_compact(struct queue *q)
{
    if (q->next == q->n) {
        q->next = q->n = 0;
    }
}

/* ---- listening ----------------------------------------------------------------------- */

static int listen_on(const char *host, const char *port, char *desc, size_t desclen)
{
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    hints.ai_family = host ? AF_UNSPEC : AF_INET6;
    int rc = getaddrinfo(host, port, &hints, &list);
    if (rc != 0 && !host) {
        hints.ai_family = AF_INET; /* no IPv6 on this machine */
        rc = getaddrinfo(NULL, port, &hints, &list);
    }
    if (rc != 0) {
        complain("cannot listen on %s port %s: %s", host ? host : "any address", port,
                 gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (a->ai_family == AF_INET6 && !host) /* IPv4 too, as ::ffff:a.b.c.d */
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0 && !host && err == EAFNOSUPPORT)
        return listen_on("0.0.0.0", port, desc, desclen);
    if (fd < 0) {
        complain("cannot listen on %s port %s: %s", host ? host : "any address", port,
                 strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char h[NI_MAXHOST] = "?", p[NI_MAXSERV] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        getnameinfo((struct sockaddr *)&ss, len, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(desc, desclen, "%s%s%s:%s", strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "",
             p);
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        complain("cannot write the port to %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Waits for the agent; -1 on timeout, error or interruption. */
static int accept_agent(int lfd, double timeout_s)
{
    int64_t deadline = timeout_s > 0 ? now_ms() + (int64_t)(timeout_s * 1000) : -1;
    for (;;) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) {
                complain("no agent connected within %g s", timeout_s);
                return -1;
            }
            wait = (int)left;
        }
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        int r = poll(&pfd, 1, wait);
        if (interrupted)
            return -1;
        if (r < 0 && errno != EINTR) {
            complain("poll: %s", strerror(errno));
            return -1;
        }
        if (r <= 0)
            continue;
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            complain("accept: %s", strerror(errno));
            return -1;
        }
        char h[NI_MAXHOST] = "?", p[NI_MAXSERV] = "?";
        getnameinfo((struct sockaddr *)&ss, len, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        say("agent connected from %s port %s", h, p);
        return fd;
    }
}

/* ---- the session --------------------------------------------------------------------- */

struct session {
    int fd;
    FILE *out;
    const char *out_name;
    uint64_t saved;
    uint8_t *pending; /* bytes of commands not yet sent */
    size_t npending;
    uint32_t serial;
    bool eof_sent;
    int64_t due; /* when the next queued item may go (after a sleep) */
    /* stdin */
    bool read_stdin;
    char line[LINE_MAX_LEN];
    size_t nline;
    bool line_too_long;
};

static int add_pending(struct session *s, const uint8_t *b, size_t n)
{
    if (s->npending + n > OUT_BUFFER_MAX) {
        complain("the agent is not reading commands; command dropped");
        return -1;
    }
    uint8_t *p = realloc(s->pending, s->npending + n);
    if (!p)
        return -1;
    memcpy(p + s->npending, b, n);
    s->pending = p;
    s->npending += n;
    return 0;
}

/* Takes the next queued item that is due. */
static void run_queue(struct session *s, struct queue *q)
{
    while (q->next < q->n && now_ms() >= s->due) {
        struct hprof_text_command *t = &q->items[q->next++];
        if (t->kind == HPROF_TEXT_SLEEP) {
            s->due = now_ms() + t->sleep_ms;
            continue;
        }
        if (t->kind == HPROF_TEXT_HELP) {
            fputs(command_text_help(), stderr);
            continue;
        }
        if (s->eof_sent) {
            complain("EOF was sent: the agent reads no more commands; not sent");
            continue;
        }
        if (t->kind == HPROF_TEXT_RAW) {
            if (add_pending(s, t->raw, t->nraw) == 0)
                say("sent %zu raw bytes", t->nraw);
            continue;
        }
        if (t->kind != HPROF_TEXT_SEND)
            continue;
        uint8_t buf[HPROF_CMD_ENCODED_MAX];
        if (t->command.tag == HPROF_CMD_EOF) { /* one byte, no serial */
            size_t n = command_parser_encode(&t->command, buf, sizeof buf);
            if (n && add_pending(s, buf, n) == 0)
                say("sent EOF");
            s->eof_sent = true;
            continue;
        }
        t->command.serial = ++s->serial;
        size_t n = command_parser_encode(&t->command, buf, sizeof buf);
        if (n && add_pending(s, buf, n) == 0)
            say("sent %s (serial %u)", command_parser_name(t->command.tag), (unsigned)s->serial);
    }
    queue_compact(q);
}

static void queue_line(struct queue *q, const char *line)
{
    struct hprof_text_command t;
    struct hprof_error e = command_text_parse(line, &t);
    if (hprof_failed(&e)) {
        complain("%s", e.text);
        return;
    }
    if (t.kind != HPROF_TEXT_NOTHING && queue_push(q, &t) != 0)
        complain("out of memory; command dropped");
}

/* Reads what stdin has; false at its end. */
static bool read_stdin(struct session *s, struct queue *q)
{
    char buf[4096];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0) {
        if (s->nline > 0 && !s->line_too_long) {
            s->line[s->nline] = '\0';
            queue_line(q, s->line);
        }
        s->nline = 0;
        return false;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            s->line[s->nline] = '\0';
            if (s->line_too_long)
                complain("command line too long; ignored");
            else
                queue_line(q, s->line);
            s->nline = 0;
            s->line_too_long = false;
        } else if (s->nline + 1 < sizeof s->line) {
            s->line[s->nline++] = buf[i];
        } else {
            s->line_too_long = true;
        }
    }
    return true;
}

static bool flush_pending(struct session *s)
{
    while (s->npending > 0) {
        ssize_t n = send(s->fd, s->pending, s->npending, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            complain("cannot send commands: %s", strerror(errno));
            s->npending = 0;
            return false;
        }
        memmove(s->pending, s->pending + n, s->npending - (size_t)n);
        s->npending -= (size_t)n;
    }
    return true;
}

/* Returns the exit status. */
static int run_session(struct session *s, struct queue *q)
{
    uint8_t buf[65536];
    bool stdin_open = s->read_stdin;
    bool can_send = true;
    for (;;) {
        if (can_send)
            run_queue(s, q);
        if (can_send && !flush_pending(s))
            can_send = false;
        struct pollfd pfd[2] = {
            {.fd = s->fd, .events = POLLIN | (s->npending && can_send ? POLLOUT : 0)},
            {.fd = STDIN_FILENO, .events = POLLIN},
        };
        /* stdin is read only once the queued commands before it have gone. */
        bool want_stdin = stdin_open && q->next == q->n;
        int timeout = -1;
        if (q->next < q->n) {
            int64_t left = s->due - now_ms();
            timeout = left > 0 ? (int)left : 0;
        }
        int r = poll(pfd, want_stdin ? 2 : 1, timeout);
        if (interrupted) {
            complain("interrupted; %llu bytes saved to %s", (unsigned long long)s->saved,
                     s->out_name);
            return 1;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            complain("poll: %s", strerror(errno));
            return 1;
        }
        if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(s->fd, buf, sizeof buf, 0);
            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
                continue;
            if (n <= 0) {
                if (n < 0)
                    complain("connection lost: %s", strerror(errno));
                say("the agent closed the connection; %llu bytes saved to %s",
                    (unsigned long long)s->saved, s->out_name);
                return n < 0 ? 1 : 0;
            }
            if (fwrite(buf, 1, (size_t)n, s->out) != (size_t)n) {
                complain("cannot write %s: %s", s->out_name, strerror(errno));
                return 1;
            }
            s->saved += (uint64_t)n;
        }
        if (want_stdin && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
            stdin_open = read_stdin(s, q);
    }
}

int main(int argc, char **argv)
{
    const char *port = NULL, *out_name = NULL, *host = NULL, *port_file = NULL;
    double accept_timeout = 0;
    int stdin_mode = -1; /* -1: default, 0: no, 1: yes */
    struct queue q = {0};
    enum { OPT_STDIN = 1000, OPT_NO_STDIN, OPT_PORT_FILE, OPT_ACCEPT_TIMEOUT };
    static const struct option longopts[] = {
        {"port", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"host", required_argument, NULL, 'H'},
        {"command", required_argument, NULL, 'c'},
        {"stdin", no_argument, NULL, OPT_STDIN},
        {"no-stdin", no_argument, NULL, OPT_NO_STDIN},
        {"port-file", required_argument, NULL, OPT_PORT_FILE},
        {"accept-timeout", required_argument, NULL, OPT_ACCEPT_TIMEOUT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool any_command = false;
    int c;
    while ((c = getopt_long(argc, argv, "p:o:H:c:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            port = optarg;
            break;
        case 'o':
            out_name = optarg;
            break;
        case 'H':
            host = optarg;
            break;
        case 'c': {
            struct hprof_text_command t;
            struct hprof_error e = command_text_parse(optarg, &t);
            if (hprof_failed(&e)) {
                complain("-c '%s': %s", optarg, e.text);
                return 2;
            }
            if (t.kind != HPROF_TEXT_NOTHING && queue_push(&q, &t) != 0)
                return 2;
            any_command = true;
            break;
        }
        case OPT_STDIN:
            stdin_mode = 1;
            break;
        case OPT_NO_STDIN:
            stdin_mode = 0;
            break;
        case OPT_PORT_FILE:
            port_file = optarg;
            break;
        case OPT_ACCEPT_TIMEOUT: {
            char *end;
            accept_timeout = strtod(optarg, &end);
            if (*end || !(accept_timeout > 0)) {
                complain("--accept-timeout needs a positive number of seconds");
                return 2;
            }
            break;
        }
        case 'q':
            quiet = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            fputs(command_text_help(), stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        complain("unexpected argument '%s' (commands go with -c)", argv[optind]);
        return 2;
    }
    char *end = NULL;
    long port_num = port ? strtol(port, &end, 10) : -1;
    if (!port || *end || port_num < 0 || port_num > 65535 || !out_name) {
        fputs(usage_text, stderr);
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    char desc[NI_MAXHOST + NI_MAXSERV + 8];
    int lfd = listen_on(host, port, desc, sizeof desc);
    if (lfd < 0)
        return 1;
    say("listening on %s", desc);
    if (port_file && write_port_file(port_file, bound_port(lfd)) != 0)
        return 1;
    if (port_num == 0 && quiet)
        fprintf(stderr, PROGRAM ": port %d\n", bound_port(lfd));

    int fd = accept_agent(lfd, accept_timeout);
    close(lfd);
    if (fd < 0)
        return 1;

    struct session s;
    memset(&s, 0, sizeof s);
    s.fd = fd;
    s.out_name = out_name;
    s.read_stdin = stdin_mode == 1 || (stdin_mode == -1 && !any_command);
    s.out = strcmp(out_name, "-") == 0 ? stdout : fopen(out_name, "wb");
    if (!s.out) {
        complain("cannot open %s: %s", out_name, strerror(errno));
        close(fd);
        return 1;
    }
    int status = run_session(&s, &q);
    if (s.out != stdout ? fclose(s.out) != 0 : fflush(stdout) != 0) {
        complain("cannot write %s: %s", out_name, strerror(errno));
        status = 1;
    }
    close(fd);
    free(s.pending);
    free(q.items);
    return status;
}

#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "env_knobs.h"
#include "log.h"

/* A peer that accepts no bytes for this long, while bytes wait for it, is given up on.
 * Writers never wait for it meanwhile: the sink spools (writer/sock_sender.h). */
#define SOCKET_WRITE_TIMEOUT_MS 10000
/* How long one address may take to accept the connection at start-up: an address that
 * drops packets would otherwise hold the VM's start for the kernel's SYN retries (~2 min). */
#define SOCKET_CONNECT_TIMEOUT_MS 10000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hprof_writer *writer;
static int socket_fd = -1;
static unsigned send_waiters; /* threads in output_wait_sent (lock) */
static pthread_cond_t waiters_gone = PTHREAD_COND_INITIALIZER;
static char name[1024];

static bool path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* connect(2) bounded by SOCKET_CONNECT_TIMEOUT_MS: non-blocking connect, poll, SO_ERROR.
 * Returns 0, or an errno value (ETIMEDOUT when the time ran out). fd is left blocking. */
static int connect_bounded(int fd, const struct sockaddr *addr, socklen_t len)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return connect(fd, addr, len) == 0 ? 0 : errno;
    int rc = connect(fd, addr, len) == 0 ? 0 : errno;
    if (rc == EINPROGRESS) {
        uint64_t start = clock_monotonic_ns();
        for (;;) {
            long spent = (long)((clock_monotonic_ns() - start) / 1000000u);
            if (spent >= SOCKET_CONNECT_TIMEOUT_MS) {
                rc = ETIMEDOUT;
                break;
            }
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int r = poll(&pfd, 1, (int)(SOCKET_CONNECT_TIMEOUT_MS - spent));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                rc = r == 0 ? ETIMEDOUT : errno;
                break;
            }
            socklen_t elen = sizeof rc;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &elen) != 0)
                rc = errno;
            break;
        }
    }
    fcntl(fd, F_SETFL, flags);
    return rc;
}

/* A connected socket in *out_fd, or the error. */
static struct hprof_error connect_to(const char *host, unsigned port, int *out_fd)
{
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc != 0)
        return hprof_errorf("cannot resolve net=%s:%u: %s", host, port, gai_strerror(rc));
    int fd = -1, last_errno = 0;
    for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int rc = connect_bounded(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0) {
            last_errno = rc;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0 && last_errno == ETIMEDOUT)
        return hprof_errorf("cannot connect to net=%s:%u: no answer within %d s", host, port,
                            SOCKET_CONNECT_TIMEOUT_MS / 1000);
    if (fd < 0)
        return hprof_errorf("cannot connect to net=%s:%u: %s", host, port, strerror(last_errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *out_fd = fd;
    return hprof_ok();
}

struct hprof_error output_open(const struct hprof_options *opts)
{
    struct hprof_sink *sink = NULL;
    if (opts->net_host) {
        int fd = -1;
        struct hprof_error e = connect_to(opts->net_host, opts->net_port, &fd);
        if (hprof_failed(&e))
            return e;
        snprintf(name, sizeof name, "%s:%u", opts->net_host, (unsigned)opts->net_port);
        sink = sink_open_fd(fd, opts->gzip, SOCKET_WRITE_TIMEOUT_MS, name);
        /* output waiting for a slow peer goes to $TMPDIR past the spool's memory */
        sink_set_spool(sink, SINK_SPOOL_MEMORY, env_knobs()->tmpdir);
        socket_fd = fd;
    } else {
        if (options_output_path(opts, (long)getpid(), path_exists, name, sizeof name) != 0)
            return hprof_errorf("file option value is too long (file=%s)",
                                opts->file ? opts->file : "");
        struct hprof_error why = sink_open_file(name, opts->gzip, &sink);
        if (hprof_failed(&why))
            return why; /* the sink's message has no prefix */
    }
    if (!sink)
        return hprof_errorf("out of memory opening %s", name);
    struct hprof_writer *w;
    switch (opts->format) {
    case HPROF_FORMAT_BINARY:
        w = binary_writer_new(sink);
        break;
    case HPROF_FORMAT_PHD:
        w = phd_writer_new(sink);
        break;
    case HPROF_FORMAT_CLASSIC:
        w = classic_writer_new(sink);
        break;
    default:
        w = ascii_writer_new(sink);
        break;
    }
    if (!w) /* the writer has closed the sink (writers own it) */
        return hprof_errorf("out of memory opening %s", name);
    w->ops->begin(w);
    pthread_mutex_lock(&lock);
    writer = w;
    pthread_mutex_unlock(&lock);
    return hprof_ok();
}

struct hprof_writer *output_lock(void)
{
    pthread_mutex_lock(&lock);
    if (writer && writer_common_failed(writer))
        return NULL;
    return writer;
}

void output_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

bool output_wait_sent(int timeout_ms, uint64_t *left)
{
    /* The sink's spool has its own lock: waiting for it holds no writer back. output_close
     * waits for waiters to leave before it frees the sink. */
    *left = 0;
    pthread_mutex_lock(&lock);
    struct hprof_sink *sink = writer && socket_fd >= 0 ? writer->sink : NULL;
    if (!sink) {
        pthread_mutex_unlock(&lock);
        return true;
    }
    send_waiters++;
    pthread_mutex_unlock(&lock);
    bool sent = sink_wait_sent(sink, timeout_ms);
    if (!sent)
        *left = sink_unsent_bytes(sink);
    pthread_mutex_lock(&lock);
    if (--send_waiters == 0)
        pthread_cond_broadcast(&waiters_gone);
    pthread_mutex_unlock(&lock);
    return sent;
}

void output_on_unread_input(sink_input_fn fn, void *ctx)
{
    pthread_mutex_lock(&lock);
    if (writer && socket_fd >= 0)
        sink_on_input(writer->sink, fn, ctx);
    pthread_mutex_unlock(&lock);
}

int output_socket_fd(void)
{
    return socket_fd;
}

const char *output_name(void)
{
    return name;
}

void output_close(void)
{
    pthread_mutex_lock(&lock);
    struct hprof_writer *w = writer;
    writer = NULL;
    while (send_waiters > 0)
        pthread_cond_wait(&waiters_gone, &lock);
    if (w)
        w->ops->close(w);
    pthread_mutex_unlock(&lock);
}

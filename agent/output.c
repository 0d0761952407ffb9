#include "output.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "trace_table.h"

/* A peer that accepts no bytes for this long is given up on, so the VM never blocks. */
#define SOCKET_WRITE_TIMEOUT_MS 10000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hprof_writer *writer;
static int socket_fd = -1;
static char name[1024];

static bool path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int connect_to(const char *host, unsigned port, char *err, size_t errlen)
{
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc != 0) {
        snprintf(err, errlen, "HPROF ERROR: cannot resolve net=%s:%u: %s", host, port,
                 gai_strerror(rc));
        return -1;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *a = list; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0) {
        snprintf(err, errlen, "HPROF ERROR: cannot connect to net=%s:%u: %s", host, port,
                 strerror(last_errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int output_open(const struct hprof_options *opts, char *err, size_t errlen)
{
    struct hprof_sink *sink = NULL;
    if (opts->net_host) {
        int fd = connect_to(opts->net_host, opts->net_port, err, errlen);
        if (fd < 0)
            return -1;
        snprintf(name, sizeof name, "%s:%u", opts->net_host, (unsigned)opts->net_port);
        sink = sink_open_fd(fd, opts->gzip, SOCKET_WRITE_TIMEOUT_MS, name);
        socket_fd = fd;
    } else {
        if (options_output_path(opts, (long)getpid(), path_exists, name, sizeof name) != 0) {
            snprintf(err, errlen, "HPROF ERROR: file option value is too long (file=%s)",
                     opts->file ? opts->file : "");
            return -1;
        }
        sink = sink_open_file(name, opts->gzip, err, errlen);
    }
    if (!sink)
        return -1;
    struct hprof_writer *w = opts->format == HPROF_FORMAT_BINARY ? writer_binary_new(sink)
                                                                 : writer_ascii_new(sink);
    if (!w) {
        sink_close(sink);
        snprintf(err, errlen, "HPROF ERROR: out of memory opening %s", name);
        return -1;
    }
    w->ops->begin(w);
    /* The empty trace first: THREAD START and other records name it before any dump. */
    traces_write_once(w, HPROF_TRACE_SERIAL_NONE);
    pthread_mutex_lock(&lock);
    writer = w;
    pthread_mutex_unlock(&lock);
    return 0;
}

struct hprof_writer *output_lock(void)
{
    pthread_mutex_lock(&lock);
    if (writer && sink_failed(writer->sink))
        return NULL;
    return writer;
}

void output_unlock(void) { pthread_mutex_unlock(&lock); }

int output_socket_fd(void) { return socket_fd; }

const char *output_name(void) { return name; }

void output_close(void)
{
    pthread_mutex_lock(&lock);
    struct hprof_writer *w = writer;
    writer = NULL;
    if (w)
        w->ops->close(w);
    pthread_mutex_unlock(&lock);
}

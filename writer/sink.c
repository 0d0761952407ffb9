/* The byte sink: a buffer in front of a file descriptor or a growing memory area, with
 * optional gzip compression as a series of independent members (see sink.h).
 *
 * Descriptor kinds, decided once with fstat:
 *   regular file     plain write(2)
 *   socket           send(2) with MSG_NOSIGNAL; with a write timeout, poll(2) for POLLOUT
 *                    first and send with MSG_DONTWAIT so no call can block past the timeout
 *   anything else    (pipe, FIFO, terminal, device) write(2) with SIGPIPE blocked in this
 *                    thread, a pending SIGPIPE raised by our own write consumed; with a
 *                    write timeout, poll(2) first and write at most PIPE_BUF bytes at a time
 *
 * The first failure prints one line on stderr and marks the sink failed; everything after
 * that is dropped. Nothing here ever aborts the process. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define SINK_BUFFER_SIZE (64 * 1024)
#define SINK_MEMORY_INITIAL (64 * 1024)
/* HotSpot's jcmd GC.heap_dump -gz=1 compresses at level 1: fast, and a heap dump is large. */
#define SINK_GZIP_LEVEL 1
/* The OS byte of the gzip header: 3 = Unix, what gzip(1) and zlib write by default. */
#define SINK_GZIP_OS_UNIX 3

enum sink_kind { SINK_REGULAR, SINK_SOCKET, SINK_OTHER, SINK_MEMORY };

struct hprof_sink {
    enum sink_kind kind;
    int fd;
    int timeout_ms;
    bool gzip;
    bool failed;
    bool member_written; /* gzip: at least one member went out */
    char *what;          /* names the output in the error message */
    uint8_t *buf;        /* pending input (for gzip: the current member's input) */
    size_t len, cap;
    uint64_t accepted;
    /* gzip */
    z_stream z;
    gz_header first_header;
    char comment[sizeof HPROF_GZIP_COMMENT];
    uint8_t *zout;
    size_t zout_cap;
};

/* ---- failure ------------------------------------------------------------------------- */

static void sink_fail(struct hprof_sink *s, const char *reason)
{
    if (s->failed)
        return;
    s->failed = true;
    if (s->kind != SINK_MEMORY)
        s->len = 0; /* what was pending is dropped */
    fprintf(stderr, "HPROF ERROR: cannot write %s: %s; profiling output stopped\n",
            s->what ? s->what : "output", reason);
}

static void sink_fail_errno(struct hprof_sink *s, int err)
{
    char msg[128];
    /* The GNU strerror_r returns the message (maybe not in msg). */
    const char *text = strerror_r(err, msg, sizeof msg);
    sink_fail(s, text);
}

/* ---- raw output to the descriptor ---------------------------------------------------- */

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd accepts bytes. 0 when it does, ETIMEDOUT when the timeout passed, else an
 * errno value. POLLERR/POLLHUP count as ready: the write that follows reports the error. */
static int wait_writable(int fd, int timeout_ms)
{
    int64_t deadline = monotonic_ms() + timeout_ms;
    for (;;) {
        int64_t left = deadline - monotonic_ms();
        if (left <= 0)
            return ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int r = poll(&pfd, 1, (int)left);
        if (r > 0)
            return 0;
        if (r == 0)
            return ETIMEDOUT;
        if (errno != EINTR)
            return errno;
    }
}

/* write(2) that cannot raise SIGPIPE: SIGPIPE is blocked in this thread for the call and a
 * SIGPIPE our write left pending is taken back (one already pending before is kept). */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
    sigset_t pipe_set, old_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set) != 0)
        return write(fd, p, n);
    bool was_pending = false;
    if (sigpending(&pending) == 0)
        was_pending = sigismember(&pending, SIGPIPE) == 1;
    ssize_t r = write(fd, p, n);
    int saved = errno;
    if (r < 0 && saved == EPIPE && !was_pending) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    errno = saved;
    return r;
}

/* Writes n bytes to the descriptor, all of them or fails the sink. */
static void raw_write(struct hprof_sink *s, const uint8_t *p, size_t n)
{
    while (n > 0 && !s->failed) {
        size_t chunk = n;
        ssize_t r;
        if (s->kind != SINK_REGULAR && s->timeout_ms > 0) {
            int err = wait_writable(s->fd, s->timeout_ms);
            if (err == ETIMEDOUT) {
                char reason[96];
                snprintf(reason, sizeof reason, "the receiver accepted no data for %d ms",
                         s->timeout_ms);
                sink_fail(s, reason);
                return;
            }
            if (err != 0) {
                sink_fail_errno(s, err);
                return;
            }
        }
        switch (s->kind) {
        case SINK_SOCKET:
            r = send(s->fd, p, chunk, MSG_NOSIGNAL | (s->timeout_ms > 0 ? MSG_DONTWAIT : 0));
            break;
        case SINK_OTHER:
            /* After POLLOUT a pipe takes PIPE_BUF bytes without blocking. */
            if (s->timeout_ms > 0 && chunk > PIPE_BUF)
                chunk = PIPE_BUF;
            r = write_nosigpipe(s->fd, p, chunk);
            break;
        default:
            r = write(s->fd, p, chunk);
            break;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* With a timeout: poll again above. Without one the descriptor itself is
                 * non-blocking: wait for it rather than spin. */
                if (s->timeout_ms == 0) {
                    struct pollfd pfd = {.fd = s->fd, .events = POLLOUT};
                    poll(&pfd, 1, -1);
                }
                continue;
            }
            sink_fail_errno(s, errno);
            return;
        }
        if (r == 0) {
            sink_fail_errno(s, ENOSPC); /* a write of n > 0 bytes that wrote nothing */
            return;
        }
        p += r;
        n -= (size_t)r;
    }
}

/* ---- gzip members -------------------------------------------------------------------- */

static bool gzip_init(struct hprof_sink *s)
{
    memset(&s->z, 0, sizeof s->z);
    if (deflateInit2(&s->z, SINK_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    memcpy(s->comment, HPROF_GZIP_COMMENT, sizeof HPROF_GZIP_COMMENT);
    memset(&s->first_header, 0, sizeof s->first_header);
    s->first_header.os = SINK_GZIP_OS_UNIX;
    s->first_header.comment = (Bytef *)s->comment;
    deflateSetHeader(&s->z, &s->first_header);
    s->zout_cap = deflateBound(&s->z, HPROF_GZIP_BLOCK_SIZE) + 64;
    s->zout = malloc(s->zout_cap);
    if (!s->zout) {
        deflateEnd(&s->z);
        return false;
    }
    return true;
}

/* Compresses n bytes of input as one complete gzip member and writes it. */
static void gzip_member(struct hprof_sink *s, const uint8_t *in, size_t n)
{
    if (s->member_written) {
        /* A new member: fresh state, default header (no comment) from here on. */
        deflateReset(&s->z);
        deflateSetHeader(&s->z, Z_NULL);
    }
    s->member_written = true;
    s->z.next_in = (Bytef *)in;
    s->z.avail_in = (uInt)n;
    for (;;) {
        s->z.next_out = s->zout;
        s->z.avail_out = (uInt)s->zout_cap;
        int rc = deflate(&s->z, Z_FINISH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            sink_fail(s, "gzip compression failed");
            return;
        }
        raw_write(s, s->zout, s->zout_cap - s->z.avail_out);
        if (rc == Z_STREAM_END || s->failed)
            return;
    }
}

/* ---- buffer -------------------------------------------------------------------------- */

/* Sends the buffered bytes on: one gzip member, or raw bytes. */
static void drain(struct hprof_sink *s)
{
    if (s->len == 0 || s->kind == SINK_MEMORY)
        return;
    if (s->gzip)
        gzip_member(s, s->buf, s->len);
    else
        raw_write(s, s->buf, s->len);
    s->len = 0;
}

/* Memory sink: room for n more bytes. */
static bool memory_reserve(struct hprof_sink *s, size_t n)
{
    if (s->cap - s->len >= n)
        return true;
    size_t cap = s->cap ? s->cap : SINK_MEMORY_INITIAL;
    while (cap - s->len < n) {
        if (cap > SIZE_MAX / 2) {
            sink_fail(s, "out of memory");
            return false;
        }
        cap *= 2;
    }
    uint8_t *nb = realloc(s->buf, cap);
    if (!nb) {
        sink_fail(s, "out of memory");
        return false;
    }
    s->buf = nb;
    s->cap = cap;
    return true;
}

void sink_write(struct hprof_sink *s, const void *buf, size_t len)
{
    if (!s || s->failed || len == 0)
        return;
    s->accepted += len;
    if (len <= s->cap - s->len) {
        memcpy(s->buf + s->len, buf, len);
        s->len += len;
        return;
    }
    const uint8_t *p = buf;
    if (s->kind == SINK_MEMORY) {
        if (memory_reserve(s, len)) {
            memcpy(s->buf + s->len, p, len);
            s->len += len;
        }
        return;
    }
    while (len > 0 && !s->failed) {
        if (s->len == s->cap)
            drain(s);
        if (!s->gzip && s->len == 0 && len >= s->cap) {
            raw_write(s, p, len); /* large write: no copy */
            return;
        }
        size_t k = s->cap - s->len;
        if (k > len)
            k = len;
        memcpy(s->buf + s->len, p, k);
        s->len += k;
        p += k;
        len -= k;
    }
}

void sink_u1(struct hprof_sink *s, uint8_t v)
{
    sink_write(s, &v, 1);
}

void sink_u2(struct hprof_sink *s, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    sink_write(s, b, sizeof b);
}

void sink_u4(struct hprof_sink *s, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    sink_write(s, b, sizeof b);
}

void sink_u8(struct hprof_sink *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (56 - 8 * i));
    sink_write(s, b, sizeof b);
}

void sink_printf(struct hprof_sink *s, const char *fmt, ...)
{
    if (!s || s->failed)
        return;
    va_list ap;
    /* Straight into the buffer when the text fits in the room left. */
    size_t room = s->cap - s->len;
    va_start(ap, fmt);
    int n = vsnprintf((char *)s->buf + s->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < room) {
        s->len += (size_t)n;
        s->accepted += (size_t)n;
        return;
    }
    /* Does not fit: format into a bounce buffer. */
    char small[512];
    char *text = (size_t)n < sizeof small ? small : malloc((size_t)n + 1);
    if (!text) {
        sink_fail(s, "out of memory");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sink_write(s, text, (size_t)n);
    if (text != small)
        free(text);
}

void sink_flush(struct hprof_sink *s)
{
    if (!s || s->failed)
        return;
    drain(s);
}

bool sink_failed(const struct hprof_sink *s)
{
    return s && s->failed;
}

uint64_t sink_bytes_written(const struct hprof_sink *s)
{
    return s ? s->accepted : 0;
}

/* ---- open / close -------------------------------------------------------------------- */

static struct hprof_sink *sink_new(int fd, bool gzip, int timeout_ms, const char *what)
{
    struct hprof_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fd = fd;
    s->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
    s->gzip = gzip;
    s->what = strdup(what ? what : "output");
    s->cap = gzip ? HPROF_GZIP_BLOCK_SIZE : SINK_BUFFER_SIZE;
    s->buf = malloc(s->cap);
    if (!s->what || !s->buf || (gzip && !gzip_init(s))) {
        free(s->what);
        free(s->buf);
        free(s);
        return NULL;
    }
    struct stat st;
    s->kind = SINK_OTHER;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        s->kind = SINK_REGULAR;
    else if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
        s->kind = SINK_SOCKET;
    return s;
}

struct hprof_sink *sink_open_file(const char *path, bool gzip, char *err, size_t errlen)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (err && errlen)
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct hprof_sink *s = sink_new(fd, gzip, 0, path);
    if (!s) {
        close(fd);
        if (err && errlen)
            snprintf(err, errlen, "cannot open %s: out of memory", path);
    }
    return s;
}

struct hprof_sink *sink_open_fd(int fd, bool gzip, int write_timeout_ms, const char *what)
{
    return sink_new(fd, gzip, write_timeout_ms, what);
}

struct hprof_sink *sink_open_memory(void)
{
    struct hprof_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->kind = SINK_MEMORY;
    s->fd = -1;
    s->what = strdup("memory");
    if (!s->what || !memory_reserve(s, SINK_MEMORY_INITIAL)) {
        free(s->what);
        free(s->buf);
        free(s);
        return NULL;
    }
    return s;
}

const uint8_t *sink_memory_data(const struct hprof_sink *s, size_t *len)
{
    if (!s || s->kind != SINK_MEMORY) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = s->len;
    return s->buf;
}

void sink_close(struct hprof_sink *s)
{
    if (!s)
        return;
    if (!s->failed) {
        drain(s);
        /* A gzip output with nothing in it is still one (empty) member: a valid file. */
        if (s->gzip && !s->member_written)
            gzip_member(s, s->buf, 0);
    }
    if (s->gzip) {
        deflateEnd(&s->z);
        free(s->zout);
    }
    if (s->fd >= 0 && close(s->fd) != 0 && errno != EINTR && !s->failed)
        sink_fail_errno(s, errno); /* e.g. a delayed write error reported at close */
    free(s->buf);
    free(s->what);
    free(s);
}

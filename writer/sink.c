/* The byte sink: a buffer in front of a file descriptor or a growing memory area, with
 * optional gzip compression as a series of independent members (see sink.h). sink_fd.c
 * writes to the descriptor, sink_gzip.c makes the members, sink_pool.c runs the background
 * threads.
 *
 * The first failure prints one line on stderr and marks the sink failed; everything after
 * that is dropped. Nothing here ever aborts the process. */
#include "sink_internal.h"
#include "sock_sender.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SINK_BUFFER_SIZE (64 * 1024)
#define SINK_MEMORY_INITIAL (64 * 1024)

/* ---- failure ------------------------------------------------------------------------- */

void sink_fail(struct hprof_sink *s, const char *reason)
{
    if (atomic_exchange(&s->failed, true))
        return;
    if (s->kind != SINK_MEMORY && !s->pool)
        s->len = 0; /* what was pending is dropped (with a pool, by the next write) */
    fprintf(stderr, "HPROF ERROR: cannot write %s: %s; profiling output stopped\n",
            s->what ? s->what : "output", reason);
}

/* The sender thread's report: only the flag and the line (the buffer is the writer's). */
static void sink_fail_from_sender(void *ctx, const char *reason)
{
    struct hprof_sink *s = ctx;
    if (atomic_exchange(&s->failed, true))
        return;
    fprintf(stderr, "HPROF ERROR: cannot write %s: %s; profiling output stopped\n",
            s->what ? s->what : "output", reason);
}

void sink_fail_errno(struct hprof_sink *s, int err)
{
    char msg[128];
    /* The GNU strerror_r returns the message (maybe not in msg). */
    const char *text = strerror_r(err, msg, sizeof msg);
    sink_fail(s, text);
}

void sink_set_threads(struct hprof_sink *s, unsigned nthreads)
{
    if (!s || s->kind == SINK_MEMORY)
        return;
    if (nthreads > SINK_MAX_THREADS)
        nthreads = SINK_MAX_THREADS;
    if (s->pool && sink_pool_threads(s->pool) == nthreads)
        return;
    sink_pool_stop(s);
    if (nthreads == 0 || s->failed)
        return;
    if (!s->gzip && s->cap < HPROF_GZIP_BLOCK_SIZE) {
        /* Write in large blocks: fewer hand-overs. */
        uint8_t *b = realloc(s->buf, HPROF_GZIP_BLOCK_SIZE);
        if (!b)
            return;
        s->buf = b;
        s->cap = HPROF_GZIP_BLOCK_SIZE;
    }
    s->pool = sink_pool_start(s, nthreads); /* NULL: stay synchronous */
}

void sink_set_bulk(struct hprof_sink *s, bool on)
{
    if (!s)
        return;
    unsigned n = 0;
    if (on && !s->gzip) {
        n = 1;
    } else if (on) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > SINK_MAX_THREADS ? SINK_MAX_THREADS : (unsigned)cpus;
    }
    sink_set_threads(s, n);
}

/* ---- buffer -------------------------------------------------------------------------- */

void sink_drain(struct hprof_sink *s)
{
    if (s->len == 0 || s->kind == SINK_MEMORY)
        return;
    if (s->pool) {
        sink_pool_submit(s);
        return;
    }
    if (s->gzip)
        sink_gzip_write_member(s, s->buf, s->len);
    else
        sink_fd_write(s, s->buf, s->len);
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
            sink_drain(s);
        if (!s->gzip && !s->pool && s->len == 0 && len >= s->cap) {
            sink_fd_write(s, p, len); /* large write: no copy */
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
    sink_drain(s);
    if (s->pool)
        sink_pool_wait(s->pool);
}

bool sink_wait_sent(struct hprof_sink *s, int timeout_ms)
{
    if (!s || !s->sender)
        return true;
    return sock_sender_wait(s->sender, false, timeout_ms);
}

uint64_t sink_unsent_bytes(struct hprof_sink *s)
{
    return s && s->sender ? sock_sender_backlog(s->sender) : 0;
}

void sink_spool_peaks(struct hprof_sink *s, uint64_t *spool_peak, uint64_t *file_peak)
{
    *spool_peak = *file_peak = 0;
    if (s && s->sender)
        sock_sender_peaks(s->sender, spool_peak, file_peak);
}

void sink_set_spool(struct hprof_sink *s, size_t memory_bytes, const char *tmpdir)
{
    if (s && s->sender)
        sock_sender_configure(s->sender, memory_bytes, tmpdir);
}

void sink_set_close_wait(struct hprof_sink *s, int ms)
{
    if (s)
        s->close_wait_ms = ms;
}

void sink_on_input(struct hprof_sink *s, sink_input_fn fn, void *ctx)
{
    if (s) {
        s->input_fn = fn;
        s->input_ctx = ctx;
    }
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
    if (!s->what || !s->buf || (gzip && !sink_gzip_init(s))) {
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
    s->close_wait_ms = SINK_CLOSE_WAIT_MS;
    if (s->kind == SINK_SOCKET && s->timeout_ms > 0)
        /* NULL (no thread): the sink writes the socket itself, as for a pipe */
        s->sender =
            sock_sender_start(fd, s->timeout_ms, SINK_SPOOL_MEMORY, sink_fail_from_sender, s);
    return s;
}

struct hprof_error sink_open_file(const char *path, bool gzip, struct hprof_sink **out)
{
    *out = NULL;
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return hprof_errorf("cannot open %s: %s", path, strerror(errno));
    *out = sink_new(fd, gzip, 0, path);
    if (!*out) {
        close(fd);
        return hprof_errorf("cannot open %s: out of memory", path);
    }
    return hprof_ok();
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
    sink_pool_stop(s);
    if (!s->failed) {
        sink_drain(s);
        /* A gzip output with nothing in it is still one (empty) member: a valid file. */
        if (s->gzip && !s->member_written)
            sink_gzip_write_member(s, s->buf, 0);
    }
    if (s->gzip)
        sink_gzip_release(s);
    if (s->kind == SINK_SOCKET)
        sink_fd_finish_socket(s);
    else
        sock_sender_stop(s->sender);
    if (s->fd >= 0 && close(s->fd) != 0 && errno != EINTR && !s->failed)
        sink_fail_errno(s, errno); /* e.g. a delayed write error reported at close */
    free(s->buf);
    free(s->what);
    free(s);
}

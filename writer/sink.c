/* The byte sink: a buffer in front of a file descriptor or a growing memory area, with
 * optional gzip compression as a series of independent members (see sink.h).
 *
 * Descriptor kinds, decided once with fstat:
 *   regular file     plain write(2)
 *   socket           with a write timeout: handed to a sender thread through a spool
 *                    (writer/sock_sender.c), so writing never waits for the peer; without
 *                    one, send(2) with MSG_NOSIGNAL
 *   anything else    (pipe, FIFO, terminal, device) write(2) with SIGPIPE blocked in this
 *                    thread, a pending SIGPIPE raised by our own write consumed; with a
 *                    write timeout, poll(2) first and write at most PIPE_BUF bytes at a time
 *
 * The first failure prints one line on stderr and marks the sink failed; everything after
 * that is dropped. Nothing here ever aborts the process. */
#include "sink.h"
#include "sock_sender.h"
#include "writer_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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
/* With a write timeout: bytes a peer must accept per timeout window (see raw_write). */
#define SINK_MIN_PROGRESS (64 * 1024)
/* At close of a socket, how long to wait for the peer to end its side after ours is shut
 * (input until then is read and dropped, so the close never resets the connection). */
#define SINK_CLOSE_LINGER_MS 2000
/* HotSpot's jcmd GC.heap_dump -gz=1 compresses at level 1: fast, and a heap dump is large. */
#define SINK_GZIP_LEVEL 1
/* The OS byte of the gzip header: 3 = Unix, what gzip(1) and zlib write by default. */
#define SINK_GZIP_OS_UNIX 3

enum sink_kind { SINK_REGULAR, SINK_SOCKET, SINK_OTHER, SINK_MEMORY };

struct sink_pool;

struct hprof_sink {
    enum sink_kind kind;
    int fd;
    int timeout_ms;
    bool gzip;
    _Atomic(bool) failed;   /* also set by the pool's threads */
    struct sink_pool *pool; /* background compression and writing, or NULL */
    bool member_written;    /* gzip: at least one member went out */
    char *what;             /* names the output in the error message */
    uint8_t *buf;           /* pending input (for gzip: the current member's input) */
    size_t len, cap;
    uint64_t accepted;
    /* socket with a write timeout */
    struct sock_sender *sender;
    int close_wait_ms;
    sink_input_fn input_fn;
    void *input_ctx;
    /* gzip */
    struct gz_engine *eng; /* the caller's thread's compressor */
    uint8_t *zout;
    size_t zout_cap;
};

/* ---- failure ------------------------------------------------------------------------- */

static void sink_fail(struct hprof_sink *s, const char *reason)
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

/* Waits until fd accepts bytes or the deadline passes. 0 when it does, ETIMEDOUT when the
 * deadline passed, else an errno value. POLLERR/POLLHUP count as ready: the write that
 * follows reports the error. */
static int wait_writable(int fd, int64_t deadline)
{
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

/* Writes n bytes to the descriptor, all of them or fails the sink.
 *
 * With a write timeout the peer must keep up a minimum pace, not merely accept a byte now
 * and then: in every window of timeout_ms it must take SINK_MIN_PROGRESS bytes (or the rest
 * of this write, if less). A peer that stops reading, or trickles a few bytes per window,
 * fails the sink within one window, so the writing thread (which holds the output lock that
 * application threads may wait for) is never held longer than that per window. */
static void raw_write(struct hprof_sink *s, const uint8_t *p, size_t n)
{
    if (s->sender) {
        sock_sender_put(s->sender, p, n);
        return;
    }
    bool timed = s->kind != SINK_REGULAR && s->timeout_ms > 0;
    int64_t window_end = timed ? monotonic_ms() + s->timeout_ms : 0;
    size_t window_bytes = 0;
    while (n > 0 && !s->failed) {
        size_t chunk = n;
        ssize_t r;
        if (timed) {
            int err = wait_writable(s->fd, window_end);
            if (err == ETIMEDOUT) {
                char reason[128];
                if (window_bytes == 0)
                    snprintf(reason, sizeof reason, "the receiver accepted no data for %d ms",
                             s->timeout_ms);
                else
                    snprintf(reason, sizeof reason,
                             "the receiver accepted only %zu bytes in %d ms (too slow)",
                             window_bytes, s->timeout_ms);
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
        window_bytes += (size_t)r;
        if (timed && window_bytes >= SINK_MIN_PROGRESS) {
            window_bytes = 0;
            window_end = monotonic_ms() + s->timeout_ms;
        }
    }
}

/* ---- gzip members -------------------------------------------------------------------- */

/* A gzip member is written as: the 10-byte header (the first member also carries the
 * comment HPROF_GZIP_COMMENT, FLG.FCOMMENT), the raw DEFLATE data, CRC-32 and ISIZE. The same
 * bytes zlib's gzip wrapper writes at level 1 (XFL 4 = fastest, OS 3 = Unix, MTIME 0).
 *
 * DEFLATE comes from libdeflate when the system has it (libdeflate.so.0, loaded at the first
 * gzip member): at level 1 it compresses a heap dump about 2.5 times faster than zlib, and
 * 20% smaller. Otherwise, or with sink_use_libdeflate(false), from zlib. */

struct libdeflate_api {
    void *(*alloc)(int level);
    size_t (*compress)(void *c, const void *in, size_t n, void *out, size_t avail);
    void (*free)(void *c);
    uint32_t (*crc32)(uint32_t crc, const void *buf, size_t len);
};

static pthread_once_t libdeflate_once = PTHREAD_ONCE_INIT;
static struct libdeflate_api libdeflate_fns;
static bool libdeflate_found;
static _Atomic(bool) libdeflate_wanted = true;

static void libdeflate_load(void)
{
    void *h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    struct libdeflate_api a;
    *(void **)&a.alloc = dlsym(h, "libdeflate_alloc_compressor");
    *(void **)&a.compress = dlsym(h, "libdeflate_deflate_compress");
    *(void **)&a.free = dlsym(h, "libdeflate_free_compressor");
    *(void **)&a.crc32 = dlsym(h, "libdeflate_crc32");
    if (a.alloc && a.compress && a.free && a.crc32) {
        libdeflate_fns = a;
        libdeflate_found = true;
    }
}

void sink_use_libdeflate(bool use)
{
    libdeflate_wanted = use;
}

struct gz_engine {
    void *ld; /* libdeflate compressor, or NULL: zlib */
    z_stream z;
};

static struct gz_engine *engine_new(void)
{
    struct gz_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    pthread_once(&libdeflate_once, libdeflate_load);
    if (libdeflate_found && libdeflate_wanted)
        e->ld = libdeflate_fns.alloc(SINK_GZIP_LEVEL);
    if (!e->ld &&
        deflateInit2(&e->z, SINK_GZIP_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(e);
        return NULL;
    }
    return e;
}

static void engine_free(struct gz_engine *e)
{
    if (!e)
        return;
    if (e->ld)
        libdeflate_fns.free(e->ld);
    else
        deflateEnd(&e->z);
    free(e);
}

#define GZIP_HEADER_MAX (10 + sizeof HPROF_GZIP_COMMENT)

/* Room for one member of n input bytes: header, DEFLATE's worst case, trailer. */
static size_t member_bound(size_t n)
{
    return GZIP_HEADER_MAX + n + n / 8 + n / 64 + 256 + 8;
}

static inline uint8_t *put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

/* Compresses in[0..n) as one complete gzip member into out (member_bound(n) bytes). Returns
 * its length, or 0 if compression failed. */
static size_t engine_member(struct gz_engine *e, bool first, const uint8_t *in, size_t n,
                            uint8_t *out, size_t cap)
{
    uint8_t *p = out;
    const uint8_t head[10] = {0x1f, 0x8b, 8, first ? 0x10 : 0, 0, 0, 0, 0, 4, SINK_GZIP_OS_UNIX};
    memcpy(p, head, sizeof head);
    p += sizeof head;
    if (first) {
        memcpy(p, HPROF_GZIP_COMMENT, sizeof HPROF_GZIP_COMMENT); /* with its NUL */
        p += sizeof HPROF_GZIP_COMMENT;
    }
    size_t room = cap - (size_t)(p - out) - 8, body;
    uint32_t crc;
    if (e->ld) {
        body = libdeflate_fns.compress(e->ld, in, n, p, room);
        if (body == 0)
            return 0;
        crc = libdeflate_fns.crc32(0, in, n);
    } else {
        deflateReset(&e->z);
        e->z.next_in = (Bytef *)in;
        e->z.avail_in = (uInt)n;
        e->z.next_out = p;
        e->z.avail_out = (uInt)room;
        if (deflate(&e->z, Z_FINISH) != Z_STREAM_END)
            return 0;
        body = room - e->z.avail_out;
        crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), in, (uInt)n);
    }
    p += body;
    p = put_le32(p, crc);
    p = put_le32(p, (uint32_t)n);
    return (size_t)(p - out);
}

static bool gzip_init(struct hprof_sink *s)
{
    s->eng = engine_new();
    s->zout_cap = member_bound(HPROF_GZIP_BLOCK_SIZE);
    s->zout = malloc(s->zout_cap);
    if (!s->eng || !s->zout) {
        engine_free(s->eng);
        free(s->zout);
        s->eng = NULL;
        s->zout = NULL;
        return false;
    }
    return true;
}

/* Compresses n bytes of input as one complete gzip member and writes it. */
static void gzip_member(struct hprof_sink *s, const uint8_t *in, size_t n)
{
    size_t len = engine_member(s->eng, !s->member_written, in, n, s->zout, s->zout_cap);
    s->member_written = true;
    if (len == 0) {
        sink_fail(s, "gzip compression failed");
        return;
    }
    raw_write(s, s->zout, len);
}

/* ---- background threads ------------------------------------------------------------- */

static void drain(struct hprof_sink *s);

/* With sink_set_threads(s, n > 0), a drained buffer is handed to n threads instead of being
 * compressed and written by the caller: each compresses a whole buffer (one gzip member) with
 * its own deflate state, and whichever thread finishes the next buffer in order writes it, so
 * the output is the same bytes as without threads. The caller goes on filling a fresh buffer
 * (buffers are swapped, not copied) and waits only when every slot is in flight. */

enum job_state { JOB_FREE, JOB_QUEUED, JOB_BUSY, JOB_DONE };

struct sink_job {
    enum job_state state;
    uint64_t seq;
    bool first_member; /* gzip: the member that carries the comment header */
    uint8_t *in;       /* capacity s->cap */
    size_t in_len;
    uint8_t *out; /* gzip output (capacity out_cap), else NULL: in is written */
    size_t out_len;
    bool bad; /* compression failed */
};

struct sink_pool {
    struct hprof_sink *s;
    pthread_t *threads;
    unsigned nthreads;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was queued, or stopping */
    pthread_cond_t done; /* a job slot was freed */
    struct sink_job *jobs;
    unsigned njobs;
    size_t out_cap;
    uint64_t next_seq, next_write;
    bool writing; /* a thread is writing jobs out, in order */
    bool stopping;
};

static void job_compress(struct sink_pool *p, struct sink_job *j, struct gz_engine *e)
{
    j->out_len = engine_member(e, j->first_member, j->in, j->in_len, j->out, p->out_cap);
    j->bad = j->out_len == 0;
}

/* Writes out, in order, every finished job that is next (lock held on entry and exit). */
static void pool_write_ready(struct sink_pool *p)
{
    if (p->writing)
        return;
    p->writing = true;
    for (;;) {
        struct sink_job *j = &p->jobs[p->next_write % p->njobs];
        if (j->state != JOB_DONE || j->seq != p->next_write)
            break;
        pthread_mutex_unlock(&p->lock);
        struct hprof_sink *s = p->s;
        if (j->bad)
            sink_fail(s, "gzip compression failed");
        else if (!s->failed)
            raw_write(s, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len);
        pthread_mutex_lock(&p->lock);
        j->state = JOB_FREE;
        p->next_write++;
        pthread_cond_broadcast(&p->done);
    }
    p->writing = false;
}

static void *pool_thread(void *arg)
{
    struct sink_pool *p = arg;
    struct gz_engine *e = p->s->gzip ? engine_new() : NULL;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* The oldest queued job: slots are used in sequence order. */
        struct sink_job *j = NULL;
        for (uint64_t q = p->next_write; q < p->next_seq && !j; q++) {
            struct sink_job *c = &p->jobs[q % p->njobs];
            if (c->state == JOB_QUEUED)
                j = c;
        }
        if (!j) {
            if (p->stopping)
                break;
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        j->state = JOB_BUSY;
        pthread_mutex_unlock(&p->lock);
        if (j->out && !p->s->failed) {
            if (e)
                job_compress(p, j, e);
            else
                j->bad = true;
        }
        pthread_mutex_lock(&p->lock);
        j->state = JOB_DONE;
        pool_write_ready(p);
    }
    pthread_mutex_unlock(&p->lock);
    engine_free(e);
    return NULL;
}

/* Hands the buffer to the threads and takes a free one in exchange. */
static void pool_submit(struct hprof_sink *s)
{
    struct sink_pool *p = s->pool;
    pthread_mutex_lock(&p->lock);
    struct sink_job *j = &p->jobs[p->next_seq % p->njobs];
    while (j->state != JOB_FREE)
        pthread_cond_wait(&p->done, &p->lock);
    uint8_t *in = j->in;
    j->in = s->buf;
    j->in_len = s->len;
    j->first_member = s->gzip && !s->member_written;
    j->bad = false;
    j->seq = p->next_seq++;
    j->state = JOB_QUEUED;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    if (s->gzip)
        s->member_written = true;
    s->buf = in;
    s->len = 0;
}

/* Waits until every submitted buffer is written. */
static void pool_wait(struct sink_pool *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->next_write < p->next_seq)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

static void pool_free(struct sink_pool *p)
{
    for (unsigned i = 0; i < p->njobs; i++) {
        free(p->jobs[i].in);
        free(p->jobs[i].out);
    }
    free(p->jobs);
    free(p->threads);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}

static void pool_stop(struct hprof_sink *s)
{
    struct sink_pool *p = s->pool;
    if (!p)
        return;
    drain(s);
    pool_wait(p);
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    s->pool = NULL;
    pool_free(p);
}

static struct sink_pool *pool_new(struct hprof_sink *s, unsigned nthreads)
{
    struct sink_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->s = s;
    p->njobs = 2 * nthreads + 2;
    p->jobs = calloc(p->njobs, sizeof *p->jobs);
    p->threads = calloc(nthreads, sizeof *p->threads);
    p->out_cap = s->gzip ? member_bound(s->cap) : 0;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    bool ok = p->jobs && p->threads;
    for (unsigned i = 0; ok && i < p->njobs; i++) {
        p->jobs[i].in = malloc(s->cap);
        p->jobs[i].out = s->gzip ? malloc(p->out_cap) : NULL;
        ok = p->jobs[i].in && (!s->gzip || p->jobs[i].out);
    }
    if (!ok) {
        pool_free(p);
        return NULL;
    }
    for (unsigned i = 0; i < nthreads; i++) {
        if (writer_thread_create(&p->threads[i], pool_thread, p) != 0)
            break;
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        pool_free(p);
        return NULL;
    }
    return p;
}

void sink_set_threads(struct hprof_sink *s, unsigned nthreads)
{
    if (!s || s->kind == SINK_MEMORY)
        return;
    if (nthreads > SINK_MAX_THREADS)
        nthreads = SINK_MAX_THREADS;
    if (s->pool && s->pool->nthreads == nthreads)
        return;
    pool_stop(s);
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
    s->pool = pool_new(s, nthreads); /* NULL: stay synchronous */
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

static void pool_submit(struct hprof_sink *s);

/* Sends the buffered bytes on: one gzip member, or raw bytes. */
static void drain(struct hprof_sink *s)
{
    if (s->len == 0 || s->kind == SINK_MEMORY)
        return;
    if (s->pool) {
        pool_submit(s);
        return;
    }
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
        if (!s->gzip && !s->pool && s->len == 0 && len >= s->cap) {
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
    if (s->pool)
        pool_wait(s->pool);
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
    s->close_wait_ms = SINK_CLOSE_WAIT_MS;
    if (s->kind == SINK_SOCKET && s->timeout_ms > 0)
        /* NULL (no thread): the sink writes the socket itself, as for a pipe */
        s->sender =
            sock_sender_start(fd, s->timeout_ms, SINK_SPOOL_MEMORY, sink_fail_from_sender, s);
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

/* Ends a socket output cleanly: waits (bounded) until the peer has accepted everything, shuts
 * our sending side (the peer sees the end of the stream), then reads and drops whatever the
 * peer sends until it ends its side, passing those bytes to the input handler: closing a socket
 * with unread input would make the kernel reset the connection, and the peer could lose the
 * tail. A reset seen here means the peer lost the tail: reported like any failed write. */
static void socket_finish(struct hprof_sink *s)
{
    if (s->sender) {
        if (!s->failed && !sock_sender_wait(s->sender, true, s->close_wait_ms)) {
            char reason[160];
            snprintf(reason, sizeof reason,
                     "%llu bytes were not yet accepted by the receiver after waiting %d ms at "
                     "close (it reads too slowly); the stream is cut short",
                     (unsigned long long)sock_sender_unaccepted(s->sender), s->close_wait_ms);
            sink_fail(s, reason);
        }
        sock_sender_stop(s->sender);
        s->sender = NULL;
    }
    shutdown(s->fd, SHUT_WR);
    int64_t deadline = monotonic_ms() + SINK_CLOSE_LINGER_MS;
    uint8_t buf[4096];
    for (int64_t left; (left = deadline - monotonic_ms()) > 0;) {
        ssize_t r = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r > 0) {
            if (s->input_fn)
                s->input_fn(s->input_ctx, buf, (size_t)r);
            continue;
        }
        if (r == 0)
            break; /* the peer ended its side */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            if (!s->failed)
                sink_fail_errno(s, errno);
            break;
        }
        struct pollfd pfd = {.fd = s->fd, .events = POLLIN | POLLRDHUP};
        poll(&pfd, 1, (int)left);
    }
    if (s->input_fn)
        s->input_fn(s->input_ctx, NULL, 0);
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0 && !s->failed)
        sink_fail_errno(s, err);
}

void sink_close(struct hprof_sink *s)
{
    if (!s)
        return;
    pool_stop(s);
    if (!s->failed) {
        drain(s);
        /* A gzip output with nothing in it is still one (empty) member: a valid file. */
        if (s->gzip && !s->member_written)
            gzip_member(s, s->buf, 0);
    }
    if (s->gzip) {
        engine_free(s->eng);
        free(s->zout);
    }
    if (s->kind == SINK_SOCKET)
        socket_finish(s);
    else
        sock_sender_stop(s->sender);
    if (s->fd >= 0 && close(s->fd) != 0 && errno != EINTR && !s->failed)
        sink_fail_errno(s, errno); /* e.g. a delayed write error reported at close */
    free(s->buf);
    free(s->what);
    free(s);
}

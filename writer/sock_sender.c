/* The socket sender (sock_sender.h).
 *
 * One thread takes the oldest spooled bytes and sends them with MSG_DONTWAIT after poll(2)
 * for POLLOUT in short slices, so it can keep looking at the peer's progress while the socket
 * is full. The peer's progress is "sent - SIOCOUTQ": it grows when the peer acknowledges
 * (TCP) or reads (AF_UNIX). The no-progress clock runs only while bytes wait for the peer (in
 * the spool, or in the socket while someone waits for delivery); an idle connection is never
 * timed. */
#include "sock_sender.h"

#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "send_spool.h"
#include "writer_internal.h"

/* Most bytes one send(2) is given. */
#define SEND_MAX (256u * 1024u)
/* How often a blocked or draining sender looks at the peer's progress. */
#define PROGRESS_SLICE_MS 20

struct sock_sender {
    int fd;
    int timeout_ms;
    sock_sender_fail_fn fail;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more; /* bytes put, a waiter arrived, or stopping */
    pthread_cond_t idle; /* the spool emptied, bytes were delivered, or failure */
    struct send_spool *q;
    bool stopping, failed;
    unsigned delivery_waiters;
    uint64_t sent;          /* bytes handed to the socket */
    uint64_t peer_progress; /* sent - SIOCOUTQ when last looked at */
    int64_t last_progress_ms;
    uint64_t spool_peak, file_peak;
};

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Bytes in the socket not yet accepted by the peer; 0 when the kernel cannot say. */
static uint64_t socket_unaccepted(int fd)
{
    int v = 0;
    if (ioctl(fd, SIOCOUTQ, &v) != 0 || v < 0)
        return 0;
    return (uint64_t)v;
}

/* Lock held. Marks the sender failed and tells the owner once. */
static void fail_locked(struct sock_sender *s, const char *reason)
{
    if (s->failed)
        return;
    s->failed = true; /* the thread empties the spool: it may be sending from it now */
    pthread_cond_broadcast(&s->idle);
    s->fail(s->ctx, reason);
}

static void fail_errno_locked(struct sock_sender *s, const char *what, int err)
{
    char buf[128], reason[256];
    const char *text = strerror_r(err, buf, sizeof buf);
    if (what)
        snprintf(reason, sizeof reason, "%s: %s", what, text);
    else
        snprintf(reason, sizeof reason, "%s", text);
    fail_locked(s, reason);
}

/* Lock held. Whether the peer has all that was sent (its queue in our socket is empty). */
static bool all_accepted(struct sock_sender *s)
{
    return socket_unaccepted(s->fd) == 0;
}

/* Lock held. Updates the progress clock; fails the sender when bytes have waited for the
 * peer for timeout_ms without it accepting any. */
static void check_progress(struct sock_sender *s)
{
    int64_t now = monotonic_ms();
    uint64_t unaccepted = socket_unaccepted(s->fd);
    if (unaccepted > 0) {
        /* A reset leaves the queue figure as it was: look for the error itself. */
        struct pollfd pfd = {.fd = s->fd, .events = 0};
        if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP))) {
            int err = 0;
            socklen_t len = sizeof err;
            if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err == 0)
                err = EPIPE;
            fail_errno_locked(s, NULL, err);
            return;
        }
    }
    uint64_t progress = s->sent >= unaccepted ? s->sent - unaccepted : 0;
    bool waiting_peer = send_spool_size(s->q) > 0 || (s->delivery_waiters > 0 && unaccepted > 0);
    if (progress != s->peer_progress || !waiting_peer) {
        s->peer_progress = progress;
        s->last_progress_ms = now;
        return;
    }
    if (s->timeout_ms > 0 && now - s->last_progress_ms >= s->timeout_ms) {
        char reason[128];
        snprintf(reason, sizeof reason, "the receiver accepted no data for %d ms", s->timeout_ms);
        fail_locked(s, reason);
    }
}

static void *sender_run(void *arg)
{
    struct sock_sender *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (s->failed) {
            send_spool_clear(s->q);
            pthread_cond_wait(&s->more, &s->lock);
            continue;
        }
        size_t n;
        int err;
        const uint8_t *p = send_spool_head(s->q, SEND_MAX, &n, &err);
        if (err) {
            fail_errno_locked(s, "the spool file cannot be read back", err);
            continue;
        }
        if (n == 0) {
            check_progress(s);
            if (s->delivery_waiters > 0 && !all_accepted(s)) {
                pthread_cond_broadcast(&s->idle); /* the spool is empty */
                pthread_mutex_unlock(&s->lock);
                struct timespec ts = {0, PROGRESS_SLICE_MS * 1000000L};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&s->lock);
                continue;
            }
            pthread_cond_broadcast(&s->idle);
            pthread_cond_wait(&s->more, &s->lock);
            continue;
        }
        pthread_mutex_unlock(&s->lock);
        /* The bytes at p stay valid until consumed, which only this thread does. */
        struct pollfd pfd = {.fd = s->fd, .events = POLLOUT};
        ssize_t r = -1;
        int send_err = EAGAIN;
        int pr = poll(&pfd, 1, PROGRESS_SLICE_MS);
        if (pr > 0) {
            r = send(s->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
            send_err = r < 0 ? errno : 0;
        } else if (pr < 0 && errno != EINTR) {
            send_err = errno;
        }
        pthread_mutex_lock(&s->lock);
        if (r > 0) {
            send_spool_consume(s->q, (size_t)r);
            s->sent += (uint64_t)r;
        } else if (r == 0 || (send_err != EAGAIN && send_err != EWOULDBLOCK && send_err != EINTR)) {
            fail_errno_locked(s, NULL, r == 0 ? EPIPE : send_err);
            continue;
        }
        check_progress(s);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

struct sock_sender *sock_sender_start(int fd, int timeout_ms, size_t memory_limit,
                                      sock_sender_fail_fn fail, void *ctx)
{
    struct sock_sender *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->q = send_spool_new(memory_limit, NULL);
    if (!s->q) {
        free(s);
        return NULL;
    }
    s->fd = fd;
    s->timeout_ms = timeout_ms;
    s->fail = fail;
    s->ctx = ctx;
    s->last_progress_ms = monotonic_ms();
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->more, NULL);
    pthread_cond_init(&s->idle, NULL);
    if (writer_common_thread_create(&s->thread, sender_run, s) != 0) {
        send_spool_free(s->q);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->more);
        pthread_cond_destroy(&s->idle);
        free(s);
        return NULL;
    }
    return s;
}

void sock_sender_configure(struct sock_sender *s, size_t memory_limit, const char *tmpdir)
{
    pthread_mutex_lock(&s->lock);
    send_spool_configure(s->q, memory_limit, tmpdir);
    pthread_mutex_unlock(&s->lock);
}

void sock_sender_put(struct sock_sender *s, const void *buf, size_t n)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&s->lock);
    if (!s->failed) {
        bool was_empty = send_spool_size(s->q) == 0;
        int err = send_spool_put(s->q, buf, n);
        if (err) {
            fail_errno_locked(s, "the temporary file that holds output for the receiver", err);
        } else {
            uint64_t size = send_spool_size(s->q), in_file = send_spool_file_bytes(s->q);
            if (size > s->spool_peak)
                s->spool_peak = size;
            if (in_file > s->file_peak)
                s->file_peak = in_file;
            if (was_empty) {
                /* The clock starts now, not at the last progress before an idle spell. */
                s->last_progress_ms = monotonic_ms();
                pthread_cond_signal(&s->more);
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
}

bool sock_sender_wait(struct sock_sender *s, bool delivered, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    bool done = true;
    pthread_mutex_lock(&s->lock);
    if (delivered) {
        s->delivery_waiters++;
        pthread_cond_signal(&s->more);
    }
    while (!s->failed && (send_spool_size(s->q) > 0 || (delivered && !all_accepted(s)))) {
        if (pthread_cond_timedwait(&s->idle, &s->lock, &until) == ETIMEDOUT) {
            done = s->failed || (send_spool_size(s->q) == 0 && (!delivered || all_accepted(s)));
            break;
        }
    }
    if (delivered)
        s->delivery_waiters--;
    pthread_mutex_unlock(&s->lock);
    return done;
}

uint64_t sock_sender_backlog(struct sock_sender *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t n = send_spool_size(s->q);
    pthread_mutex_unlock(&s->lock);
    return n;
}

uint64_t sock_sender_unaccepted(struct sock_sender *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t n = send_spool_size(s->q) + socket_unaccepted(s->fd);
    pthread_mutex_unlock(&s->lock);
    return n;
}

void sock_sender_peaks(struct sock_sender *s, uint64_t *spool_peak, uint64_t *file_peak)
{
    pthread_mutex_lock(&s->lock);
    *spool_peak = s->spool_peak;
    *file_peak = s->file_peak;
    pthread_mutex_unlock(&s->lock);
}

void sock_sender_stop(struct sock_sender *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->more);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    send_spool_free(s->q);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->more);
    pthread_cond_destroy(&s->idle);
    free(s);
}

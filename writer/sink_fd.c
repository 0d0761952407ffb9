/* The sink's bytes to its descriptor (sink_internal.h). Descriptor kinds, decided once with
 * fstat when the sink opens:
 *   regular file     plain write(2)
 *   socket           with a write timeout: handed to a sender thread through a spool
 *                    (writer/sock_sender.c), so writing never waits for the peer; without
 *                    one, send(2) with MSG_NOSIGNAL
 *   anything else    (pipe, FIFO, terminal, device) write(2) with SIGPIPE blocked in this
 *                    thread, a pending SIGPIPE raised by our own write consumed; with a
 *                    write timeout, poll(2) first and write at most PIPE_BUF bytes at a time */
#include "sink_internal.h"
#include "sock_sender.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* With a write timeout: bytes a peer must accept per timeout window (see raw_write). */
#define SINK_MIN_PROGRESS (64 * 1024)
/* At close of a socket, how long to wait for the peer to end its side after ours is shut
 * (input until then is read and dropped, so the close never resets the connection). */
#define SINK_CLOSE_LINGER_MS 2000

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
void sink_fd_write(struct hprof_sink *s, const uint8_t *p, size_t n)
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

/* Ends a socket output cleanly: waits (bounded) until the peer has accepted everything, shuts
 * our sending side (the peer sees the end of the stream), then reads and drops whatever the
 * peer sends until it ends its side, passing those bytes to the input handler: closing a socket
 * with unread input would make the kernel reset the connection, and the peer could lose the
 * tail. A reset seen here means the peer lost the tail: reported like any failed write. */
void sink_fd_finish_socket(struct hprof_sink *s)
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

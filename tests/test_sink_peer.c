/* Check tests of the sink against socket peers that misbehave the ways net= peers do: one
 * that never reads, one that reads slowly through a tiny receive buffer, one that reads
 * steadily, one that reads a while and disconnects, over AF_UNIX and TCP loopback sockets;
 * and of the send spool under it. Writing never waits for the peer; each failure is one line
 * on stderr and comes within a bounded time; a peer that reads is never cut off. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_helpers.h"
#include "send_spool.h"
#include "sink.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A peer on its own thread. */
struct peer {
    int fd;
    int byte_every_ms; /* > 0: read `slice` bytes (default 1), then sleep this long */
    size_t slice;
    size_t close_after; /* > 0: close after reading this many bytes */
    atomic_bool stop;
    atomic_bool hold; /* true: read nothing for now */
    bool check_seq;   /* the stream must be seq_byte(0), seq_byte(1), ... */
    size_t bad;       /* bytes that were not */
    int end_errno;    /* 0: the stream ended with EOF, else the read error */
    bool ended;
    size_t got;
    uint64_t sum; /* of the bytes read, to check content */
    pthread_t thread;
};

/* Byte i of the big-endian u32 sequence 0, 1, 2, ...: content whose order can be checked. */
static uint8_t seq_byte(uint64_t i)
{
    return (uint8_t)((uint32_t)(i / 4) >> (8 * (3 - i % 4)));
}

static void *peer_run(void *arg)
{
    struct peer *p = arg;
    uint8_t buf[65536];
    while (!atomic_load(&p->stop)) {
        if (atomic_load(&p->hold)) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
            continue;
        }
        size_t want = p->byte_every_ms > 0 ? (p->slice ? p->slice : 1) : sizeof buf;
        ssize_t r = read(p->fd, buf, want);
        if (r == 0) {
            p->ended = true;
            shutdown(p->fd, SHUT_WR); /* ends our side too, as a front end does */
            break;
        }
        if (r < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                p->end_errno = errno;
                p->ended = true;
                break;
            }
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (ssize_t i = 0; i < r; i++) {
            p->sum += buf[i];
            if (p->check_seq && buf[i] != seq_byte(p->got + (size_t)i))
                p->bad++;
        }
        p->got += (size_t)r;
        if (p->close_after && p->got >= p->close_after) {
            close(p->fd);
            p->fd = -1;
            break;
        }
        if (p->byte_every_ms > 0) {
            struct timespec ts = {0, (long)p->byte_every_ms * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void peer_start(struct peer *p, int fd)
{
    p->fd = fd;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    atomic_store(&p->stop, false);
    ck_assert_int_eq(pthread_create(&p->thread, NULL, peer_run, p), 0);
}

static void peer_stop(struct peer *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    if (p->fd >= 0)
        close(p->fd);
}

/* A connected TCP pair on 127.0.0.1; rcvbuf > 0: sv[1]'s receive buffer (set before listen,
 * so the window scale is chosen from it). */
static void tcp_pair_rcvbuf(int sv[2], int rcvbuf)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(l, 0);
    if (rcvbuf > 0)
        ck_assert_int_eq(setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(l, 1), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
    sv[0] = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(sv[0], (struct sockaddr *)&a, sizeof a), 0);
    sv[1] = accept(l, NULL, NULL);
    ck_assert_int_ge(sv[1], 0);
    close(l);
}

static void tcp_pair(int sv[2])
{
    tcp_pair_rcvbuf(sv, 0);
}

static void make_pair(int kind, int sv[2])
{
    if (kind == 0)
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    else
        tcp_pair(sv);
}

/* Writes up to limit bytes in 256 KiB blocks with a flush after each, until the sink fails. */
static size_t write_blocks(struct hprof_sink *s, size_t limit)
{
    static uint8_t block[256 * 1024];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (uint8_t)i;
    size_t written = 0;
    double t0 = now_s();
    /* The time limit turns a sink that would block for minutes into a failed test. */
    while (written < limit && !sink_failed(s) && now_s() - t0 < 5.0) {
        sink_write(s, block, sizeof block);
        sink_flush(s);
        written += sizeof block;
    }
    return written;
}

/* A peer that reads nothing: every write returns at local speed (the spool takes it, memory
 * then file), and the sink fails with the one true line about the timeout after the socket
 * buffers filled, not before. */
START_TEST(silent_peer_is_cut_off_and_writers_never_wait)
{
    int sv[2];
    make_pair(_i, sv);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 300, "socket silent:1");
    sink_set_spool(s, 1u << 20, NULL);
    capture_begin();
    static uint8_t block[256 * 1024];
    double worst = 0, t0 = now_s();
    for (int i = 0; i < 16; i++) {
        double t = now_s();
        sink_write(s, block, sizeof block);
        sink_flush(s);
        if (now_s() - t > worst)
            worst = now_s() - t;
    }
    while (!sink_failed(s) && now_s() - t0 < 5.0) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    double elapsed = now_s() - t0;
    ck_assert(sink_failed(s));
    uint64_t peak, file_peak;
    sink_spool_peaks(s, &peak, &file_peak);
    sink_close(s);
    char *err = capture_end();
    close(sv[1]);
    ck_assert_msg(worst < 0.25, "a write waited %.3f s", worst);
    ck_assert_msg(elapsed >= 0.3 && elapsed < 2.0, "failed after %.3f s", elapsed);
    ck_assert_msg(file_peak > 0, "the spool never used its file (peak %llu)",
                  (unsigned long long)peak);
    ck_assert_str_eq(err, "HPROF ERROR: cannot write socket silent:1: the receiver accepted no "
                          "data for 300 ms; profiling output stopped\n");
    free(err);
}
END_TEST

/* The case: a TCP peer with a 4 KiB receive buffer reading about 60 KB/s. send(2) can
 * go without room (no POLLOUT) for far longer than the timeout while the peer reads steadily;
 * measured at the peer it keeps accepting, so it is never cut off and gets every byte, in
 * order. */
START_TEST(slow_reader_with_tiny_buffer_is_never_cut_off)
{
    int sv[2];
    tcp_pair_rcvbuf(sv, 4096);
    struct peer p = {.byte_every_ms = 10, .slice = 600, .check_seq = true};
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 1000, "socket slow:1");
    capture_begin();
    enum { TOTAL = 360 * 1024 };
    static uint8_t data[TOTAL];
    for (size_t i = 0; i < TOTAL; i++)
        data[i] = seq_byte(i);
    double t0 = now_s();
    for (size_t off = 0; off < TOTAL; off += 4096) {
        sink_write(s, data + off, 4096);
        sink_flush(s);
    }
    double write_s = now_s() - t0;
    ck_assert(sink_wait_sent(s, 30000));
    sink_close(s);
    double total_s = now_s() - t0;
    char *err = capture_end();
    pthread_join(p.thread, NULL);
    close(p.fd);
    ck_assert_str_eq(err, "");
    ck_assert_msg(write_s < 0.2, "writing took %.3f s", write_s);
    ck_assert_msg(total_s > 2.0, "the reader was not slow: %.3f s", total_s);
    ck_assert_uint_eq(p.got, TOTAL);
    ck_assert_uint_eq(p.bad, 0);
    ck_assert(p.ended && p.end_errno == 0);
    free(err);
}
END_TEST

/* More than the spool's memory limit, while the peer holds off: the rest goes to the
 * temporary file, and the peer then gets every byte in order (memory first, then the file,
 * then memory again once the file has drained). */
START_TEST(spool_spills_to_a_file_and_keeps_order)
{
    int sv[2];
    make_pair(_i, sv);
    struct peer p = {.check_seq = true};
    atomic_store(&p.hold, true);
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 5000, "socket spill:1");
    sink_set_spool(s, 256 * 1024, NULL);
    enum { TOTAL = 6 << 20 };
    uint8_t *data = malloc(TOTAL);
    for (size_t i = 0; i < TOTAL; i++)
        data[i] = seq_byte(i);
    /* Pieces of varying sizes, flushed now and then, as a writer produces them. */
    size_t off = 0, k = 1;
    double t0 = now_s();
    while (off < TOTAL / 2) {
        size_t n = (k * 7919) % 200000 + 1;
        if (n > TOTAL / 2 - off)
            n = TOTAL / 2 - off;
        sink_write(s, data + off, n);
        if (k++ % 3 == 0)
            sink_flush(s);
        off += n;
    }
    sink_flush(s);
    double write_s = now_s() - t0;
    uint64_t peak, file_peak;
    sink_spool_peaks(s, &peak, &file_peak);
    atomic_store(&p.hold, false);
    ck_assert(sink_wait_sent(s, 20000));
    sink_write(s, data + off, TOTAL - off); /* after the file drained: memory again */
    sink_close(s);
    pthread_join(p.thread, NULL);
    close(p.fd);
    free(data);
    ck_assert_msg(write_s < 1.0, "writing took %.3f s", write_s);
    ck_assert_msg(file_peak > 0 && peak > 256 * 1024, "peak %llu, in the file %llu",
                  (unsigned long long)peak, (unsigned long long)file_peak);
    ck_assert_uint_eq(p.got, TOTAL);
    ck_assert_uint_eq(p.bad, 0);
}
END_TEST

/* What the peer sent and nobody read is read and dropped at close (handed to the input
 * handler), so the peer sees a clean end of the stream, never a reset. */
static size_t input_bytes;
static int input_ends;
static void count_input(void *ctx, const uint8_t *buf, size_t n)
{
    (void)ctx;
    if (buf)
        input_bytes += n;
    else
        input_ends++;
}

START_TEST(close_reads_unread_input_and_ends_cleanly)
{
    int sv[2];
    make_pair(_i, sv);
    uint8_t junk[3000];
    memset(junk, 0x42, sizeof junk);
    ck_assert_int_eq(write(sv[1], junk, sizeof junk), (ssize_t)sizeof junk);
    struct peer p = {.check_seq = true};
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 1000, "socket input:1");
    input_bytes = 0;
    input_ends = 0;
    sink_on_input(s, count_input, NULL);
    uint8_t data[100000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = seq_byte(i);
    sink_write(s, data, sizeof data);
    capture_begin();
    double t0 = now_s();
    sink_close(s);
    double close_s = now_s() - t0;
    char *err = capture_end();
    pthread_join(p.thread, NULL);
    close(p.fd);
    ck_assert_str_eq(err, "");
    ck_assert_uint_eq(input_bytes, sizeof junk);
    ck_assert_int_eq(input_ends, 1);
    ck_assert_uint_eq(p.got, sizeof data);
    ck_assert_uint_eq(p.bad, 0);
    ck_assert_msg(p.ended && p.end_errno == 0, "the peer's read ended with %s",
                  strerror(p.end_errno));
    ck_assert_msg(close_s < 1.0, "close took %.3f s", close_s);
    free(err);
}
END_TEST

/* The close wait is a bound: a peer that accepts too little gets a line that says how much
 * was not sent. */
START_TEST(close_wait_is_bounded)
{
    int sv[2];
    make_pair(_i, sv);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 5000, "socket late:1");
    sink_set_close_wait(s, 300);
    static uint8_t block[4 << 20];
    sink_write(s, block, sizeof block);
    capture_begin();
    double t0 = now_s();
    sink_close(s);
    double close_s = now_s() - t0;
    char *err = capture_end();
    close(sv[1]);
    ck_assert_msg(close_s >= 0.3 && close_s < 3.0, "close took %.3f s", close_s);
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_msg(strstr(err, "HPROF ERROR: cannot write socket late:1: ") == err &&
                      strstr(err, " bytes were not yet accepted by the receiver after waiting "
                                  "300 ms at close (it reads too slowly); the stream is cut "
                                  "short; profiling output stopped\n"),
                  "%s", err);
    free(err);
}
END_TEST

/* The spool alone against a reference: random puts and consumes across the memory limit
 * give back exactly the bytes put, in order. */
START_TEST(send_spool_matches_a_plain_queue)
{
    struct send_spool *q = send_spool_new(300000, NULL);
    ck_assert_ptr_nonnull(q);
    uint64_t put = 0, got = 0;
    unsigned seed = 12345;
    static uint8_t buf[150000];
    for (int round = 0; round < 2000; round++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = (seed >> 8) % sizeof buf;
        if ((seed >> 4) % 3 != 0) {
            for (size_t i = 0; i < n; i++)
                buf[i] = seq_byte(put + i);
            ck_assert_int_eq(send_spool_put(q, buf, n), 0);
            put += n;
        } else {
            size_t avail, err_n = 0;
            int err;
            const uint8_t *h = send_spool_head(q, n, &avail, &err);
            ck_assert_int_eq(err, 0);
            ck_assert_uint_le(avail, n);
            for (size_t i = 0; i < avail; i++)
                err_n += h[i] != seq_byte(got + i);
            ck_assert_uint_eq(err_n, 0);
            send_spool_consume(q, avail);
            got += avail;
        }
        ck_assert_uint_eq(send_spool_size(q), put - got);
    }
    ck_assert_uint_gt(put, 1000000);
    send_spool_free(q);
}
END_TEST

/* A pipe reader taking 4 KiB every 100 ms wakes every poll in time (a pipe is writable as
 * soon as PIPE_BUF bytes are free), so only the pace rule catches it: 40 KB/s is less than
 * 64 KiB per 300 ms window. */
START_TEST(slow_but_never_silent_reader_fails_on_pace)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    struct peer p = {.byte_every_ms = 100, .slice = 4096};
    peer_start(&p, fds[0]);
    struct hprof_sink *s = sink_open_fd(fds[1], false, 300, "pipe slow");
    capture_begin();
    double t0 = now_s();
    write_blocks(s, 64u << 20);
    double elapsed = now_s() - t0;
    ck_assert(sink_failed(s));
    sink_close(s);
    char *err = capture_end();
    peer_stop(&p);
    ck_assert_msg(elapsed < 3.0, "took %.3f s", elapsed);
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_msg(strstr(err, "HPROF ERROR: cannot write pipe slow: the receiver accepted only ") ==
                      err,
                  "%s", err);
    ck_assert_msg(strstr(err, " bytes in 300 ms (too slow); profiling output stopped\n"), "%s",
                  err);
    free(err);
}
END_TEST

/* A peer that reads steadily gets everything, in order, whatever the timeout. */
START_TEST(steady_peer_gets_everything)
{
    int sv[2];
    make_pair(_i, sv);
    struct peer p = {0};
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 200, "socket steady:1");
    size_t written = write_blocks(s, 16u << 20);
    ck_assert(!sink_failed(s));
    sink_close(s); /* closes sv[0]: the peer sees the end */
    pthread_join(p.thread, NULL);
    close(p.fd);
    ck_assert_uint_eq(p.got, written);
    uint64_t want = 0;
    for (size_t i = 0; i < 256 * 1024; i++)
        want += (uint8_t)i;
    ck_assert_uint_eq(p.sum, want * (written / (256 * 1024)));
}
END_TEST

/* A peer that reads 100 KB and disconnects: one line, no SIGPIPE, the rest dropped. */
START_TEST(peer_disconnecting_mid_stream)
{
    int sv[2];
    make_pair(_i, sv);
    struct peer p = {.close_after = 100000};
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 2000, "socket gone:1");
    capture_begin();
    double t0 = now_s();
    write_blocks(s, 256u << 20);
    /* The spool takes blocks at local speed, so the writer may finish before the sender
     * thread meets the closed socket: the failure is the sender's to find, promptly. */
    while (!sink_failed(s) && now_s() - t0 < 5.0) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    double elapsed = now_s() - t0;
    ck_assert(sink_failed(s));
    sink_write(s, "more", 4); /* dropped quietly */
    sink_flush(s);
    sink_close(s);
    char *err = capture_end();
    pthread_join(p.thread, NULL);
    ck_assert_msg(elapsed < 1.5, "took %.3f s", elapsed);
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_msg(strstr(err, "HPROF ERROR: cannot write socket gone:1: ") == err, "%s", err);
    ck_assert_msg(strstr(err, "Broken pipe") || strstr(err, "Connection reset by peer"), "%s", err);
    free(err);
}
END_TEST

/* A TCP peer that has closed before the last bytes go out: the send "succeeds", the peer
 * resets, and sink_close reports the lost tail once. */
START_TEST(peer_closed_before_the_tail_is_reported_at_close)
{
    int sv[2];
    tcp_pair(sv);
    close(sv[1]);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL); /* its FIN arrives */
    struct hprof_sink *s = sink_open_fd(sv[0], false, 1000, "socket closed:1");
    capture_begin();
    sink_write(s, "the tail", 8);
    sink_close(s);
    char *err = capture_end();
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_msg(strcmp(err, "HPROF ERROR: cannot write socket closed:1: Broken pipe; profiling "
                              "output stopped\n") == 0 ||
                      strcmp(err, "HPROF ERROR: cannot write socket closed:1: Connection reset by "
                                  "peer; profiling output stopped\n") == 0,
                  "%s", err);
    free(err);
}
END_TEST

/* A peer that only shut its sending side and reads on gets everything, with no message. */
START_TEST(half_closed_peer_gets_the_tail_quietly)
{
    int sv[2];
    tcp_pair(sv);
    shutdown(sv[1], SHUT_WR);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 1000, "socket half:1");
    capture_begin();
    double t0 = now_s();
    sink_write(s, "the tail", 8);
    sink_close(s);
    double elapsed = now_s() - t0;
    char *err = capture_end();
    ck_assert_str_eq(err, "");
    ck_assert_msg(elapsed < 1.0, "close took %.3f s", elapsed);
    char got[16];
    ck_assert_int_eq(read(sv[1], got, sizeof got), 8);
    ck_assert_int_eq(memcmp(got, "the tail", 8), 0);
    ck_assert_int_eq(read(sv[1], got, sizeof got), 0);
    close(sv[1]);
    free(err);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sink-peer");
    TCase *tc = tcase_create("peers");
    /* _i: 0 = AF_UNIX socketpair, 1 = TCP on 127.0.0.1 */
    tcase_add_loop_test(tc, silent_peer_is_cut_off_and_writers_never_wait, 0, 2);
    tcase_add_test(tc, slow_reader_with_tiny_buffer_is_never_cut_off);
    tcase_add_loop_test(tc, spool_spills_to_a_file_and_keeps_order, 0, 2);
    tcase_add_loop_test(tc, close_reads_unread_input_and_ends_cleanly, 0, 2);
    tcase_add_loop_test(tc, close_wait_is_bounded, 0, 2);
    tcase_add_test(tc, send_spool_matches_a_plain_queue);
    tcase_add_loop_test(tc, steady_peer_gets_everything, 0, 2);
    tcase_add_test(tc, slow_but_never_silent_reader_fails_on_pace);
    tcase_add_test(tc, peer_closed_before_the_tail_is_reported_at_close);
    tcase_add_test(tc, half_closed_peer_gets_the_tail_quietly);
    tcase_add_loop_test(tc, peer_disconnecting_mid_stream, 0, 2);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}

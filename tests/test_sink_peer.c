/* Check tests of the sink against socket peers that misbehave the ways net= peers do: one
 * that trickles a byte now and then, one that reads steadily, one that reads a while and
 * disconnects, over AF_UNIX and TCP loopback sockets. Each failure is one line on stderr
 * and comes within a bounded time. */
#include <check.h>
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
    size_t got;
    uint64_t sum; /* of the bytes read, to check content */
    pthread_t thread;
};

static void *peer_run(void *arg)
{
    struct peer *p = arg;
    uint8_t buf[65536];
    while (!atomic_load(&p->stop)) {
        size_t want = p->byte_every_ms > 0 ? (p->slice ? p->slice : 1) : sizeof buf;
        ssize_t r = read(p->fd, buf, want);
        if (r == 0)
            break;
        if (r < 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (ssize_t i = 0; i < r; i++)
            p->sum += buf[i];
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

/* A connected TCP pair on 127.0.0.1. */
static void tcp_pair(int sv[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(l, 0);
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

/* A peer that takes one byte every 20 ms is as good as gone: the sink gives up within about
 * one 200 ms window after the socket buffers are full, not after megabytes at 50 B/s. */
START_TEST(trickling_peer_fails_the_sink_in_bounded_time)
{
    int sv[2];
    make_pair(_i, sv);
    struct peer p = {.byte_every_ms = 20};
    peer_start(&p, sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 200, "socket trickle:1");
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
    /* Which of the two lines depends on whether the kernel's poll ever found room for the
     * trickle (it wakes writers only once a good part of the buffer is free). */
    bool no_data = strcmp(err, "HPROF ERROR: cannot write socket trickle:1: the receiver "
                               "accepted no data for 200 ms; profiling output stopped\n") == 0;
    bool too_slow = strstr(err, "HPROF ERROR: cannot write socket trickle:1: the receiver "
                                "accepted only ") == err &&
                    strstr(err, " bytes in 200 ms (too slow); profiling output stopped\n");
    ck_assert_msg(no_data || too_slow, "%s", err);
    free(err);
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
    tcase_add_loop_test(tc, trickling_peer_fails_the_sink_in_bounded_time, 0, 2);
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
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* slow-peer: a net= peer that reads slowly, for measuring what a slow front end costs the
 * profiled program (bench/net-dump-pause.py, doc/socket.md). Loopback only.
 *
 *     slow-peer --rate BYTES_PER_S [--rcvbuf BYTES] [--port-file FILE] [--out FILE]
 *               [--dump-at SECONDS] [--exit-at SECONDS]
 *
 * Listens on 127.0.0.1 (a free port, written to --port-file), accepts one agent, and reads
 * what it sends at about --rate bytes per second (a slice every 10 ms), saving it to --out.
 * --dump-at sends a DUMP HEAP command that many seconds after the connection, --exit-at an
 * EXIT THE VM. Ends when the agent closes the connection, then prints on stdout one line:
 * "bytes B seconds T end eof|reset" (T from the connection to the end). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A command of the protocol (doc/socket.md): u1 tag, u4 serial, u4 length 0. */
static void send_command(int fd, uint8_t tag, uint32_t serial)
{
    uint8_t b[9] = {tag,
                    (uint8_t)(serial >> 24),
                    (uint8_t)(serial >> 16),
                    (uint8_t)(serial >> 8),
                    (uint8_t)serial,
                    0,
                    0,
                    0,
                    0};
    if (send(fd, b, sizeof b, MSG_NOSIGNAL) != (ssize_t)sizeof b)
        perror("slow-peer: send");
}

int main(int argc, char **argv)
{
    double rate = 0, dump_at = -1, exit_at = -1;
    int rcvbuf = 0;
    const char *port_file = NULL, *out = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rate") == 0)
            rate = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--rcvbuf") == 0)
            rcvbuf = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--port-file") == 0)
            port_file = argv[i + 1];
        else if (strcmp(argv[i], "--out") == 0)
            out = argv[i + 1];
        else if (strcmp(argv[i], "--dump-at") == 0)
            dump_at = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--exit-at") == 0)
            exit_at = atof(argv[i + 1]);
        else {
            fprintf(stderr, "slow-peer: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (rate <= 0) {
        fprintf(stderr, "usage: slow-peer --rate BYTES_PER_S [--rcvbuf BYTES] [--port-file FILE] "
                        "[--out FILE] [--dump-at S] [--exit-at S]\n");
        return 2;
    }
    int l = socket(AF_INET, SOCK_STREAM, 0);
    /* Before listen: the accepted socket inherits it, and the window scale is chosen from it. */
    if (rcvbuf > 0)
        setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) != 0) {
        perror("slow-peer: listen");
        return 1;
    }
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *pf = fopen(tmp, "w");
        if (!pf || fprintf(pf, "%u\n", ntohs(a.sin_port)) < 0 || fclose(pf) != 0 ||
            rename(tmp, port_file) != 0) {
            perror("slow-peer: port file");
            return 1;
        }
    } else {
        printf("port %u\n", ntohs(a.sin_port));
        fflush(stdout);
    }
    int fd = accept(l, NULL, NULL);
    close(l);
    if (fd < 0) {
        perror("slow-peer: accept");
        return 1;
    }
    FILE *save = out ? fopen(out, "wb") : NULL;
    double t0 = now_s(), budget = 0, last = t0;
    uint64_t total = 0;
    const char *end = "eof";
    static uint8_t buf[1 << 20];
    for (;;) {
        double t = now_s();
        if (dump_at >= 0 && t - t0 >= dump_at) {
            send_command(fd, 0x02, 1);
            dump_at = -1;
        }
        if (exit_at >= 0 && t - t0 >= exit_at) {
            send_command(fd, 0x05, 2);
            exit_at = -1;
        }
        /* Token bucket: at most one second's worth saved up. */
        budget += (t - last) * rate;
        last = t;
        if (budget > rate)
            budget = rate;
        size_t want = budget >= 1 ? (size_t)budget : 0;
        if (want > sizeof buf)
            want = sizeof buf;
        if (want > 0) {
            ssize_t r = recv(fd, buf, want, MSG_DONTWAIT);
            if (r == 0)
                break;
            if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                end = errno == ECONNRESET ? "reset" : strerror(errno);
                break;
            }
            if (r > 0) {
                budget -= (double)r;
                total += (uint64_t)r;
                if (save)
                    fwrite(buf, 1, (size_t)r, save);
            }
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    double secs = now_s() - t0;
    if (save)
        fclose(save);
    close(fd);
    printf("bytes %llu seconds %.3f end %s\n", (unsigned long long)total, secs, end);
    return 0;
}

/* The sender of a socket output (net=): producers hand bytes to a send spool
 * (writer/send_spool.h) at local speed, and one background thread streams them to the peer in
 * order. So a heap dump written at a safepoint, or a THREAD START written by an application
 * thread, never waits for the peer.
 *
 * The slow-peer rule: the peer is given up on only when it has accepted nothing for timeout_ms
 * while bytes wait for it. "Accepted" is measured at the peer, not at our send(2): the bytes
 * the peer's side has acknowledged (TCP) or read (AF_UNIX) are the bytes sent minus the
 * socket's unsent and unacknowledged queue (SIOCOUTQ). A peer that reads, however slowly,
 * moves that figure and is never cut off; a TCP peer with a tiny receive buffer can leave
 * send(2) blocked (no POLLOUT) for many seconds while it reads steadily, which is why
 * send(2)'s progress alone is not the measure. Pure C, no JVMTI. */
#ifndef HPROF_SOCK_SENDER_H
#define HPROF_SOCK_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sock_sender;

/* Called once, from whichever thread finds it, when sending fails for good (the reason is a
 * phrase: "the receiver accepted no data for 10000 ms", "Broken pipe"). From then on what is
 * put is dropped. */
typedef void (*sock_sender_fail_fn)(void *ctx, const char *reason);

/* Starts the thread for the connected socket fd (not closed here). memory_limit: bytes spooled
 * in memory before a temporary file is used. Returns NULL when out of memory or the thread
 * cannot start. */
struct sock_sender *sock_sender_start(int fd, int timeout_ms, size_t memory_limit,
                                      sock_sender_fail_fn fail, void *ctx);

/* Changes the spool's memory limit and temporary directory (for tests: before any put). */
void sock_sender_configure(struct sock_sender *s, size_t memory_limit, const char *tmpdir);

/* Queues n bytes; never waits for the peer. */
void sock_sender_put(struct sock_sender *s, const void *buf, size_t n);

/* Waits until everything put has left the spool (delivered = false) or has also been
 * accepted by the peer (delivered = true), the sender has failed, or timeout_ms passed.
 * Returns true unless the time ran out. */
bool sock_sender_wait(struct sock_sender *s, bool delivered, int timeout_ms);

/* Bytes put and not yet handed to the socket. */
uint64_t sock_sender_backlog(struct sock_sender *s);
/* Bytes put and not yet accepted by the peer: the backlog and what waits in the socket. */
uint64_t sock_sender_unaccepted(struct sock_sender *s);

/* Most bytes the spool has held at once, and most of them in the temporary file. */
void sock_sender_peaks(struct sock_sender *s, uint64_t *spool_peak, uint64_t *file_peak);

/* Stops the thread (dropping whatever it has not sent) and frees. NULL is allowed. */
void sock_sender_stop(struct sock_sender *s);

#endif

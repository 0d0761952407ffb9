/* The byte sink under every writer: a buffer in front of a file descriptor (a file or a
 * connected socket), optionally gzip-compressed as independent members. Pure C, no JVMTI.
 *
 * A sink that fails (disk full, peer gone, peer not accepting data within the timeout)
 * reports the failure once on stderr, marks itself failed and from then on drops what it is
 * given: the application keeps running. Not thread-safe: the agent serialises output with its
 * own lock.
 *
 * A socket opened with a write timeout is written through a spool and a sender thread
 * (writer/sock_sender.h): sink_write and sink_flush copy at local speed and never wait for the
 * peer; the peer is given up on when it accepts nothing for the timeout while bytes wait for
 * it, and the failure shows in sink_failed from then on. */
#ifndef HPROF_SINK_H
#define HPROF_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hprof_error.h"

struct hprof_sink;

/* Bytes of input per gzip member, and the comment on the first member, as HotSpot writes
 * them so readers can seek. */
#define HPROF_GZIP_BLOCK_SIZE (1024 * 1024)
#define HPROF_GZIP_COMMENT "HPROF BLOCKSIZE=1048576"

/* Opens (creates or truncates) path for writing. gzip: compress as independent members.
 * *out: the sink, or NULL when the returned error says why ("cannot open PATH: REASON"). */
struct hprof_error sink_open_file(const char *path, bool gzip, struct hprof_sink **out);

/* Wraps an already open descriptor (a connected socket). The sink closes it on close.
 * write_timeout_ms (0 = wait forever): for a socket, how long bytes may wait for a peer that
 * accepts none of them before the sink fails (the spool and sender above); for pipes and
 * devices, how long one write may wait, with a pace rule (doc/socket.md). Not used for regular
 * files. what names the output in the error message ("socket host:port").
 * Returns NULL only when out of memory; fd is then left open. */
struct hprof_sink *sink_open_fd(int fd, bool gzip, int write_timeout_ms, const char *what);

void sink_write(struct hprof_sink *s, const void *buf, size_t len);
void sink_u1(struct hprof_sink *s, uint8_t v);
void sink_u2(struct hprof_sink *s, uint16_t v); /* big-endian */
void sink_u4(struct hprof_sink *s, uint32_t v); /* big-endian */
void sink_u8(struct hprof_sink *s, uint64_t v); /* big-endian */
void sink_printf(struct hprof_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Compresses (gzip) and writes in nthreads background threads from now on, so the caller
 * only fills buffers; 0 waits until everything handed over is written and stops them (the
 * default: the caller's thread does it all). The bytes written are the same either way.
 * Ignored for memory sinks; if threads cannot be started the sink stays as it is. */
#define SINK_MAX_THREADS 16
void sink_set_threads(struct hprof_sink *s, unsigned nthreads);

/* A large output follows (a heap dump): on hands compression and writing to as many
 * background threads as the sink sees fit (as HotSpot's dumper uses its workers: one per
 * online CPU, at most SINK_MAX_THREADS, to compress gzip members; one to write plain output);
 * off waits until everything is written and stops them. */
void sink_set_bulk(struct hprof_sink *s, bool on);

/* gzip members are compressed with libdeflate when the system has libdeflate.so.0 (faster
 * and smaller than zlib at the same level), else with zlib. For tests: false forces zlib. */
void sink_gzip_use_libdeflate(bool use);

/* Pushes buffered bytes to the descriptor (for gzip: ends the current member first, so a
 * reader sees everything written so far). */
void sink_flush(struct hprof_sink *s);

/* True once a write has failed; later writes are dropped. */
bool sink_failed(const struct hprof_sink *s);

/* Bytes accepted so far (before compression). */
uint64_t sink_bytes_written(const struct hprof_sink *s);

/* Flushes, closes the descriptor and frees the sink. NULL is allowed. A socket is closed
 * cleanly: sink_close waits until the peer has accepted everything (at most the close wait;
 * past it the sink fails with a line saying how much was not sent), shuts the sending side,
 * then reads and drops the peer's input until the peer ends its side (at most 2 s). */
void sink_close(struct hprof_sink *s);

/* ---- sockets with a write timeout (spooled); no effect on other sinks ---------------- */

/* Bytes held in memory by the spool before a temporary file takes the rest, and the close
 * wait's default. */
#define SINK_SPOOL_MEMORY (64u * 1024u * 1024u)
#define SINK_CLOSE_WAIT_MS 60000

/* Waits until every byte handed over (flushed) has been passed to the socket, the sink
 * failed, or timeout_ms passed; true unless the time ran out. */
bool sink_wait_sent(struct hprof_sink *s, int timeout_ms);
/* Bytes handed over and not yet passed to the socket. */
uint64_t sink_unsent_bytes(struct hprof_sink *s);
/* The most bytes the spool has held at once, and the most of them in its temporary file. */
void sink_spool_peaks(struct hprof_sink *s, uint64_t *spool_peak, uint64_t *file_peak);
/* For tests: the spool's memory limit and temporary directory (NULL: $TMPDIR, else /tmp). */
void sink_set_spool(struct hprof_sink *s, size_t memory_bytes, const char *tmpdir);
/* How long sink_close waits for the peer to accept what is left (SINK_CLOSE_WAIT_MS). */
void sink_set_close_wait(struct hprof_sink *s, int ms);
/* Called at close with what the peer sent that nobody read (in pieces), then once with
 * (NULL, 0) when the peer's input has ended or the close stopped waiting for it. */
typedef void (*sink_input_fn)(void *ctx, const uint8_t *buf, size_t n);
void sink_on_input(struct hprof_sink *s, sink_input_fn fn, void *ctx);

/* For tests: a sink that collects everything in memory (no descriptor). */
struct hprof_sink *sink_open_memory(void);
const uint8_t *sink_memory_data(const struct hprof_sink *s, size_t *len);

#endif

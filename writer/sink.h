/* The byte sink under every writer: a buffer in front of a file descriptor (a file or a
 * connected socket), optionally gzip-compressed as independent members. Pure C, no JVMTI.
 *
 * A sink that fails (disk full, peer gone, peer not reading within the timeout) reports the
 * failure once on stderr, marks itself failed and from then on drops what it is given: the
 * application keeps running. Not thread-safe: the agent serialises output with its own lock. */
#ifndef HPROF_SINK_H
#define HPROF_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hprof_sink;

/* Bytes of input per gzip member, and the comment on the first member, as HotSpot writes
 * them so readers can seek. */
#define HPROF_GZIP_BLOCK_SIZE (1024 * 1024)
#define HPROF_GZIP_COMMENT "HPROF BLOCKSIZE=1048576"

/* Opens (creates or truncates) path for writing. gzip: compress as independent members.
 * Returns NULL with a message in err on failure. */
struct hprof_sink *sink_open_file(const char *path, bool gzip, char *err, size_t errlen);

/* Wraps an already open descriptor (a connected socket). The sink closes it on close.
 * write_timeout_ms bounds how long one write may wait for a peer that does not read
 * (0 = wait forever); past it the sink fails. It applies to sockets, pipes and devices, not
 * to regular files. what names the output in the error message ("socket host:port").
 * Returns NULL only when out of memory; fd is then left open. */
struct hprof_sink *sink_open_fd(int fd, bool gzip, int write_timeout_ms, const char *what);

void sink_write(struct hprof_sink *s, const void *buf, size_t len);
void sink_u1(struct hprof_sink *s, uint8_t v);
void sink_u2(struct hprof_sink *s, uint16_t v); /* big-endian */
void sink_u4(struct hprof_sink *s, uint32_t v); /* big-endian */
void sink_u8(struct hprof_sink *s, uint64_t v); /* big-endian */
void sink_printf(struct hprof_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Pushes buffered bytes to the descriptor (for gzip: ends the current member first, so a
 * reader sees everything written so far). */
void sink_flush(struct hprof_sink *s);

/* True once a write has failed; later writes are dropped. */
bool sink_failed(const struct hprof_sink *s);

/* Bytes accepted so far (before compression). */
uint64_t sink_bytes_written(const struct hprof_sink *s);

/* Flushes, closes the descriptor and frees the sink. NULL is allowed. */
void sink_close(struct hprof_sink *s);

/* For tests: a sink that collects everything in memory (no descriptor). */
struct hprof_sink *sink_open_memory(void);
const uint8_t *sink_memory_data(const struct hprof_sink *s, size_t *len);

#endif

/* The parts of the byte sink (sink.h) and what they share. sink.c: the buffer, the memory
 * sink, open and close; sink_fd.c: bytes to the descriptor (file, socket, pipe) and a socket's
 * clean close; sink_gzip.c: gzip members; sink_pool.c: background compression and writing.
 * Internal to writer/. */
#ifndef HPROF_SINK_INTERNAL_H
#define HPROF_SINK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

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

/* ---- sink.c --------------------------------------------------------------------------- */

/* Marks the sink failed and says why on stderr, once. */
void sink_fail(struct hprof_sink *s, const char *reason);
void sink_fail_errno(struct hprof_sink *s, int err);
/* Sends the buffered bytes on: one gzip member, or raw bytes. */
void sink_drain(struct hprof_sink *s);

/* ---- sink_fd.c ------------------------------------------------------------------------ */

/* Writes n bytes to the descriptor (or the socket's sender), all of them or fails the sink. */
void sink_fd_write(struct hprof_sink *s, const uint8_t *p, size_t n);
/* Ends a socket output cleanly (see sink_close). */
void sink_fd_finish_socket(struct hprof_sink *s);

/* ---- sink_gzip.c ---------------------------------------------------------------------- */

struct gz_engine *sink_gzip_engine_new(void);
void sink_gzip_engine_free(struct gz_engine *e);
/* Room for one member of n input bytes: header, DEFLATE's worst case, trailer. */
size_t sink_gzip_member_bound(size_t n);
/* Compresses in[0..n) as one complete gzip member into out (sink_gzip_member_bound(n) bytes).
 * Returns its length, or 0 if compression failed. */
size_t sink_gzip_compress(struct gz_engine *e, bool first, const uint8_t *in, size_t n,
                          uint8_t *out, size_t cap);
/* The caller's thread's compressor and output buffer; false when out of memory. */
bool sink_gzip_init(struct hprof_sink *s);
void sink_gzip_release(struct hprof_sink *s);
/* Compresses n bytes of input as one complete gzip member and writes it. */
void sink_gzip_write_member(struct hprof_sink *s, const uint8_t *in, size_t n);

/* ---- sink_pool.c ---------------------------------------------------------------------- */

/* nthreads background threads for s; NULL when none could start (the sink stays
 * synchronous). */
struct sink_pool *sink_pool_start(struct hprof_sink *s, unsigned nthreads);
unsigned sink_pool_threads(const struct sink_pool *p);
/* Hands the buffer to the threads and takes a free one in exchange. */
void sink_pool_submit(struct hprof_sink *s);
/* Waits until every submitted buffer is written. */
void sink_pool_wait(struct sink_pool *p);
/* Drains, waits, stops the threads; s->pool is NULL after. */
void sink_pool_stop(struct hprof_sink *s);

#endif

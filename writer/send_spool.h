/* A first-in first-out byte queue for output that waits for a slow peer: in memory up to a
 * limit, then in a temporary file, so whoever produces the bytes goes at local speed whatever
 * the peer does. Order is kept: while anything is in the file, new bytes go to the file too.
 * Not thread-safe (the sender, writer/sock_sender.c, holds its lock around every call, except
 * that the bytes returned by send_spool_head stay valid until the next consume). Pure C. */
#ifndef HPROF_SEND_SPOOL_H
#define HPROF_SEND_SPOOL_H

#include <stddef.h>
#include <stdint.h>

struct send_spool;

/* memory_limit: bytes held in memory before the temporary file is used. tmpdir: where the
 * file goes (NULL: $TMPDIR, else /tmp); it is created only when needed, and unlinked at once. */
struct send_spool *send_spool_new(size_t memory_limit, const char *tmpdir);
void send_spool_free(struct send_spool *q);
/* Changes the memory limit and the directory of the file (before the file exists). */
int send_spool_configure(struct send_spool *q, size_t memory_limit, const char *tmpdir);

/* Appends n bytes. Returns 0, or an errno value when the temporary file cannot be created or
 * written (then nothing of these bytes was queued). */
int send_spool_put(struct send_spool *q, const void *buf, size_t n);

/* The oldest bytes: a pointer to up to max of them and their number in *n (0: empty). The
 * pointer stays valid until send_spool_consume or send_spool_free, even across puts. Returns
 * NULL with *n = 0 and an errno value in *err when the file cannot be read back. */
const uint8_t *send_spool_head(struct send_spool *q, size_t max, size_t *n, int *err);

/* Drops the n oldest bytes (n at most what send_spool_head returned). */
void send_spool_consume(struct send_spool *q, size_t n);

/* Bytes queued, and of them in the temporary file. */
uint64_t send_spool_size(const struct send_spool *q);
uint64_t send_spool_file_bytes(const struct send_spool *q);

/* Drops everything queued. */
void send_spool_clear(struct send_spool *q);

#endif

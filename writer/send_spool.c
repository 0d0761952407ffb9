/* The send spool (send_spool.h): a list of memory chunks, then a temporary file.
 *
 * Invariant: every byte in memory is older than every byte in the file. New bytes go to memory
 * only while the file is empty and they fit under the memory limit; otherwise they go to the
 * end of the file. The file is read back from its start, and emptied (truncated) once it has
 * all been consumed, after which memory is used again. */
#include "send_spool.h"
#include "writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK_SIZE (1024u * 1024u)
/* Bytes read back from the file at a time. */
#define FILE_READ_SIZE (256u * 1024u)

struct chunk {
    struct chunk *next;
    size_t off, len; /* unread bytes are data[off..len) */
    uint8_t data[];
};

struct send_spool {
    size_t memory_limit;
    char *tmpdir;
    struct chunk *head, *tail, *spare;
    uint64_t mem_bytes;
    int fd; /* the temporary file, -1 until needed */
    uint64_t file_r, file_w;
    uint8_t *rbuf; /* bytes of the file from rbuf_pos, rbuf_len of them */
    uint64_t rbuf_pos;
    size_t rbuf_len;
};

struct send_spool *send_spool_new(size_t memory_limit, const char *tmpdir)
{
    struct send_spool *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->memory_limit = memory_limit;
    q->fd = -1;
    if (tmpdir && !(q->tmpdir = strdup(tmpdir))) {
        free(q);
        return NULL;
    }
    return q;
}

int send_spool_configure(struct send_spool *q, size_t memory_limit, const char *tmpdir)
{
    q->memory_limit = memory_limit;
    if (q->fd >= 0)
        return 0;
    char *d = tmpdir ? strdup(tmpdir) : NULL;
    if (tmpdir && !d)
        return ENOMEM;
    free(q->tmpdir);
    q->tmpdir = d;
    return 0;
}

static void free_chunks(struct chunk *c)
{
    while (c) {
        struct chunk *n = c->next;
        free(c);
        c = n;
    }
}

void send_spool_free(struct send_spool *q)
{
    if (!q)
        return;
    free_chunks(q->head);
    free(q->spare);
    if (q->fd >= 0)
        close(q->fd);
    free(q->rbuf);
    free(q->tmpdir);
    free(q);
}

/* The temporary file, unlinked as soon as it exists. */
static int open_file(struct send_spool *q)
{
    int fd = writer_common_temp_file(q->tmpdir, "hprof-send");
    if (fd < 0)
        return -fd;
    q->fd = fd;
    q->rbuf = malloc(FILE_READ_SIZE);
    if (!q->rbuf) {
        close(fd);
        q->fd = -1;
        return ENOMEM;
    }
    return 0;
}

static int put_file(struct send_spool *q, const uint8_t *p, size_t n)
{
    if (q->fd < 0) {
        int err = open_file(q);
        if (err)
            return err;
    }
    uint64_t pos = q->file_w;
    size_t left = n;
    while (left > 0) {
        ssize_t w = pwrite(q->fd, p, left, (off_t)pos);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : ENOSPC;
            /* Give back what did fit; bytes past file_w are never read either way. */
            (void)!ftruncate(q->fd, (off_t)q->file_w);
            return err;
        }
        p += w;
        left -= (size_t)w;
        pos += (uint64_t)w;
    }
    q->file_w = pos;
    return 0;
}

static int put_memory(struct send_spool *q, const uint8_t *p, size_t n)
{
    while (n > 0) {
        struct chunk *t = q->tail;
        if (!t || t->len == CHUNK_SIZE) {
            struct chunk *c = q->spare;
            q->spare = NULL;
            if (!c && !(c = malloc(sizeof *c + CHUNK_SIZE)))
                return ENOMEM;
            c->next = NULL;
            c->off = c->len = 0;
            if (t)
                t->next = c;
            else
                q->head = c;
            q->tail = t = c;
        }
        size_t k = CHUNK_SIZE - t->len;
        if (k > n)
            k = n;
        memcpy(t->data + t->len, p, k);
        t->len += k;
        q->mem_bytes += k;
        p += k;
        n -= k;
    }
    return 0;
}

int send_spool_put(struct send_spool *q, const void *buf, size_t n)
{
    if (n == 0)
        return 0;
    if (q->file_w == q->file_r && q->mem_bytes + n <= q->memory_limit) {
        int err = put_memory(q, buf, n);
        if (err != ENOMEM)
            return err;
        /* out of memory: the file takes it, order is kept as the file is empty */
    }
    return put_file(q, buf, n);
}

const uint8_t *send_spool_head(struct send_spool *q, size_t max, size_t *n, int *err)
{
    *n = 0;
    *err = 0;
    if (max == 0)
        return NULL;
    if (q->head && q->head->off < q->head->len) {
        struct chunk *h = q->head;
        size_t k = h->len - h->off;
        *n = k < max ? k : max;
        return h->data + h->off;
    }
    if (q->file_r == q->file_w)
        return NULL;
    if (q->file_r < q->rbuf_pos || q->file_r >= q->rbuf_pos + q->rbuf_len) {
        uint64_t left = q->file_w - q->file_r;
        size_t want = left < FILE_READ_SIZE ? (size_t)left : FILE_READ_SIZE;
        ssize_t r;
        do
            r = pread(q->fd, q->rbuf, want, (off_t)q->file_r);
        while (r < 0 && errno == EINTR);
        if (r <= 0) {
            *err = r < 0 ? errno : EIO;
            q->rbuf_len = 0;
            return NULL;
        }
        q->rbuf_pos = q->file_r;
        q->rbuf_len = (size_t)r;
    }
    size_t at = (size_t)(q->file_r - q->rbuf_pos);
    size_t k = q->rbuf_len - at;
    *n = k < max ? k : max;
    return q->rbuf + at;
}

void send_spool_consume(struct send_spool *q, size_t n)
{
    while (n > 0 && q->head && q->head->off < q->head->len) {
        struct chunk *h = q->head;
        size_t k = h->len - h->off;
        if (k > n)
            k = n;
        h->off += k;
        q->mem_bytes -= k;
        n -= k;
        if (h->off == h->len) {
            if (h == q->tail) {
                h->off = h->len = 0; /* the only chunk: reuse it */
            } else {
                q->head = h->next;
                if (!q->spare)
                    q->spare = h;
                else
                    free(h);
            }
        }
    }
    if (n > 0) {
        q->file_r += n;
        if (q->file_r > q->file_w)
            q->file_r = q->file_w;
    }
    if (q->fd >= 0 && q->file_r == q->file_w && q->file_w > 0) {
        /* All read back: empty the file, so memory is used again and the disk is freed. */
        (void)!ftruncate(q->fd, 0);
        q->file_r = q->file_w = 0;
        q->rbuf_pos = q->rbuf_len = 0;
    }
}

uint64_t send_spool_size(const struct send_spool *q)
{
    return q->mem_bytes + (q->file_w - q->file_r);
}

uint64_t send_spool_file_bytes(const struct send_spool *q)
{
    return q->file_w - q->file_r;
}

void send_spool_clear(struct send_spool *q)
{
    free_chunks(q->head);
    q->head = q->tail = NULL;
    q->mem_bytes = 0;
    q->file_r = q->file_w;
    send_spool_consume(q, 0);
}

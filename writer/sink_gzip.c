/* gzip members of the sink (sink_internal.h). */
#include "sink_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* HotSpot's jcmd GC.heap_dump -gz=1 compresses at level 1: fast, and a heap dump is large. */
#define SINK_GZIP_LEVEL 1
/* The OS byte of the gzip header: 3 = Unix, what gzip(1) and zlib write by default. */
#define SINK_GZIP_OS_UNIX 3

/* A gzip member is written as: the 10-byte header (the first member also carries the
 * comment HPROF_GZIP_COMMENT, FLG.FCOMMENT), the raw DEFLATE data, CRC-32 and ISIZE. The same
 * bytes zlib's gzip wrapper writes at level 1 (XFL 4 = fastest, OS 3 = Unix, MTIME 0).
 *
 * DEFLATE comes from libdeflate when the system has it (libdeflate.so.0, loaded at the first
 * gzip member): at level 1 it compresses a heap dump about 2.5 times faster than zlib, and
 * 20% smaller. Otherwise, or with sink_gzip_use_libdeflate(false), from zlib. */

struct libdeflate_api {
    void *(*alloc)(int level);
    size_t (*compress)(void *c, const void *in, size_t n, void *out, size_t avail);
    void (*free)(void *c);
    uint32_t (*crc32)(uint32_t crc, const void *buf, size_t len);
};

static pthread_once_t libdeflate_once = PTHREAD_ONCE_INIT;
static struct libdeflate_api libdeflate_fns;
static bool libdeflate_found;
static _Atomic(bool) libdeflate_wanted = true;

static void libdeflate_load(void)
{
    void *h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    struct libdeflate_api a;
    *(void **)&a.alloc = dlsym(h, "libdeflate_alloc_compressor");
    *(void **)&a.compress = dlsym(h, "libdeflate_deflate_compress");
    *(void **)&a.free = dlsym(h, "libdeflate_free_compressor");
    *(void **)&a.crc32 = dlsym(h, "libdeflate_crc32");
    if (a.alloc && a.compress && a.free && a.crc32) {
        libdeflate_fns = a;
        libdeflate_found = true;
    }
}

void sink_gzip_use_libdeflate(bool use)
{
    libdeflate_wanted = use;
}

struct gz_engine {
    void *ld; /* libdeflate compressor, or NULL: zlib */
    z_stream z;
};

struct gz_engine *sink_gzip_engine_new(void)
{
    struct gz_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    pthread_once(&libdeflate_once, libdeflate_load);
    if (libdeflate_found && libdeflate_wanted)
        e->ld = libdeflate_fns.alloc(SINK_GZIP_LEVEL);
    if (!e->ld &&
        deflateInit2(&e->z, SINK_GZIP_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(e);
        return NULL;
    }
    return e;
}

void sink_gzip_engine_free(struct gz_engine *e)
{
    if (!e)
        return;
    if (e->ld)
        libdeflate_fns.free(e->ld);
    else
        deflateEnd(&e->z);
    free(e);
}

#define GZIP_HEADER_MAX (10 + sizeof HPROF_GZIP_COMMENT)

size_t sink_gzip_member_bound(size_t n)
{
    return GZIP_HEADER_MAX + n + n / 8 + n / 64 + 256 + 8;
}

static inline uint8_t *put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

/* Compresses in[0..n) as one complete gzip member into out (sink_gzip_member_bound(n) bytes).
 * Returns its length, or 0 if compression failed. */
size_t sink_gzip_compress(struct gz_engine *e, bool first, const uint8_t *in, size_t n,
                          uint8_t *out, size_t cap)
{
    uint8_t *p = out;
    const uint8_t head[10] = {0x1f, 0x8b, 8, first ? 0x10 : 0, 0, 0, 0, 0, 4, SINK_GZIP_OS_UNIX};
    memcpy(p, head, sizeof head);
    p += sizeof head;
    if (first) {
        memcpy(p, HPROF_GZIP_COMMENT, sizeof HPROF_GZIP_COMMENT); /* with its NUL */
        p += sizeof HPROF_GZIP_COMMENT;
    }
    size_t room = cap - (size_t)(p - out) - 8, body;
    uint32_t crc;
    if (e->ld) {
        body = libdeflate_fns.compress(e->ld, in, n, p, room);
        if (body == 0)
            return 0;
        crc = libdeflate_fns.crc32(0, in, n);
    } else {
        deflateReset(&e->z);
        e->z.next_in = (Bytef *)in;
        e->z.avail_in = (uInt)n;
        e->z.next_out = p;
        e->z.avail_out = (uInt)room;
        if (deflate(&e->z, Z_FINISH) != Z_STREAM_END)
            return 0;
        body = room - e->z.avail_out;
        crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), in, (uInt)n);
    }
    p += body;
    p = put_le32(p, crc);
    p = put_le32(p, (uint32_t)n);
    return (size_t)(p - out);
}

bool sink_gzip_init(struct hprof_sink *s)
{
    s->eng = sink_gzip_engine_new();
    s->zout_cap = sink_gzip_member_bound(HPROF_GZIP_BLOCK_SIZE);
    s->zout = malloc(s->zout_cap);
    if (!s->eng || !s->zout) {
        sink_gzip_engine_free(s->eng);
        free(s->zout);
        s->eng = NULL;
        s->zout = NULL;
        return false;
    }
    return true;
}

/* Compresses n bytes of input as one complete gzip member and writes it. */
void sink_gzip_write_member(struct hprof_sink *s, const uint8_t *in, size_t n)
{
    size_t len = sink_gzip_compress(s->eng, !s->member_written, in, n, s->zout, s->zout_cap);
    s->member_written = true;
    if (len == 0) {
        sink_fail(s, "gzip compression failed");
        return;
    }
    sink_fd_write(s, s->zout, len);
}

void sink_gzip_release(struct hprof_sink *s)
{
    sink_gzip_engine_free(s->eng);
    free(s->zout);
    s->eng = NULL;
    s->zout = NULL;
}

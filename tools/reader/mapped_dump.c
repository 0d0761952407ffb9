/*
 * mapped_dump.c: map an HPROF file (inflating gzip into an unlinked temporary file first) and
 * index the top-level records of one heap dump. See mapped_dump.h.
 */
#include "mapped_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct ctx {
    char *err;
    size_t errlen;
    bool *bad;
};

static int fail(struct ctx *c, bool bad, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    *c->bad = bad;
    return -1;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Inflate every gzip member of in_fd into an unlinked file in $TMPDIR; returns its fd or -1. */
static int inflate_to_temp(struct ctx *c, int in_fd)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/hprof-analyze.XXXXXX", dir && *dir ? dir : "/tmp");
    int out = mkstemp(path);
    if (out < 0)
        return fail(c, false, "cannot create a temporary file in %s: %s", path, strerror(errno));
    unlink(path);
    enum { IN = 1 << 20, OUT = 4 << 20 };
    uint8_t *ib = malloc(IN), *ob = malloc(OUT);
    z_stream z;
    memset(&z, 0, sizeof z);
    int rc = -1;
    if (!ib || !ob || inflateInit2(&z, 15 + 16) != Z_OK) {
        fail(c, false, "out of memory (zlib)");
        goto out;
    }
    uint64_t zin = 0, zout = 0;
    bool live = true, eof = false;
    for (;;) {
        if (z.avail_in == 0 && !eof) {
            ssize_t r = read(in_fd, ib, IN);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                fail(c, false, "read error: %s", strerror(errno));
                goto out;
            }
            eof = r == 0;
            zin += (uint64_t)r;
            z.next_in = ib;
            z.avail_in = (uInt)r;
        }
        if (!live) {
            if (z.avail_in == 0 && eof)
                break;
            if (z.avail_in == 0)
                continue;
            inflateReset(&z);
            live = true;
        }
        z.next_out = ob;
        z.avail_out = OUT;
        int ret = inflate(&z, Z_NO_FLUSH);
        size_t got = OUT - z.avail_out;
        if (got && write_all(out, ob, got) < 0) {
            fail(c, false, "cannot write the inflated dump to %s: %s", dir ? dir : "/tmp",
                 strerror(errno));
            goto out;
        }
        zout += got;
        if (ret == Z_STREAM_END) {
            live = false;
            continue;
        }
        if (ret == Z_OK || (ret == Z_BUF_ERROR && z.avail_in == 0 && !eof))
            continue;
        fail(c, true,
             "corrupt or truncated gzip data at compressed offset %" PRIu64
             " (uncompressed offset %" PRIu64 ")",
             zin - z.avail_in, zout);
        goto out;
    }
    rc = out;
out:
    inflateEnd(&z);
    free(ib);
    free(ob);
    if (rc < 0)
        close(out);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    const struct mdump_str *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}
static int cmp_cls(const void *a, const void *b)
{
    const struct mdump_class *x = a, *y = b;
    return x->class_id < y->class_id ? -1 : x->class_id > y->class_id;
}

static bool push(void **v, size_t *n, size_t *cap, size_t elsz)
{
    if (*n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 1024;
    void *p = realloc(*v, nc * elsz);
    if (!p)
        return false;
    *v = p;
    *cap = nc;
    return true;
}

/* Walk the top-level records: strings, classes, and the ranges of dump number m->which. */
static int index_records(struct mapped_dump *m, struct ctx *c)
{
    const uint8_t *b = m->base;
    uint64_t size = m->size, pos = 0;
    while (pos < size && b[pos])
        pos++;
    if (pos >= size || pos > 64 || strncmp((const char *)b, "JAVA PROFILE 1.0.", 17) != 0)
        return fail(c, true, "offset 0: not an HPROF file (no \"JAVA PROFILE 1.0.x\" header)");
    if (size - pos < 13)
        return fail(c, true, "offset %" PRIu64 ": file ends inside the header", size);
    m->idsize = mdump_u4(b + pos + 1);
    if (m->idsize != 4 && m->idsize != 8)
        return fail(c, true, "offset %" PRIu64 ": identifier size %u (4 or 8 expected)", pos + 1,
                    m->idsize);
    pos += 13;
    size_t scap = 0, ccap = 0, rcap = 0;
    bool in_seg = false;
    unsigned ids = m->idsize;
    while (pos < size) {
        if (size - pos < 9)
            return fail(c, true, "offset %" PRIu64 ": file ends inside a record header", pos);
        unsigned tag = b[pos];
        uint64_t len = mdump_u4(b + pos + 5), body = pos + 9;
        if (len > size - body)
            return fail(c, true,
                        "offset %" PRIu64 ": record (tag 0x%02x) of %" PRIu64
                        " bytes runs past the end of the file (%" PRIu64 " bytes): truncated",
                        pos, tag, len, size);
        if (tag == 0x01 && len >= ids) {
            if (!push((void **)&m->strs, &m->nstrs, &scap, sizeof *m->strs))
                return fail(c, false, "out of memory");
            uint64_t sl = len - ids;
            m->strs[m->nstrs++] = (struct mdump_str){mdump_id(m, b + body), body + ids,
                                                     sl > UINT32_MAX ? UINT32_MAX : (uint32_t)sl};
        } else if (tag == 0x02 && len >= 8 + 2 * (uint64_t)ids) {
            if (!push((void **)&m->classes, &m->nclasses, &ccap, sizeof *m->classes))
                return fail(c, false, "out of memory");
            m->classes[m->nclasses++] =
                (struct mdump_class){mdump_id(m, b + body + 4), mdump_id(m, b + body + 8 + ids)};
        } else if (tag == 0x0C || tag == 0x1C) {
            bool start = tag == 0x0C || !in_seg;
            if (start)
                m->ndumps++;
            if (start && m->which == SIZE_MAX) /* the last dump: keep only the newest ranges */
                m->nranges = m->dump_bytes = 0;
            in_seg = tag == 0x1C;
            if (m->ndumps - 1 == m->which || m->which == SIZE_MAX) {
                if (!push((void **)&m->ranges, &m->nranges, &rcap, sizeof *m->ranges))
                    return fail(c, false, "out of memory");
                m->ranges[m->nranges++] = (struct mdump_range){body, len};
                m->dump_bytes += len;
            }
        } else if (tag == 0x2C) {
            in_seg = false;
        }
        pos = body + len;
    }
    if (m->which == SIZE_MAX && m->ndumps)
        m->which = m->ndumps - 1;
    if (m->ndumps <= m->which)
        return fail(c, true, "offset %" PRIu64 ": the file holds %zu heap dump(s), no dump #%zu",
                    size, m->ndumps, m->which + 1);
    if (m->nstrs) /* qsort's array may not be NULL, even empty */
        qsort(m->strs, m->nstrs, sizeof *m->strs, cmp_str);
    if (m->nclasses) /* qsort's array may not be NULL, even empty */
        qsort(m->classes, m->nclasses, sizeof *m->classes, cmp_cls);
    return 0;
}

int mdump_open(struct mapped_dump *m, const char *path, size_t which, char *err, size_t errlen,
               bool *bad_input)
{
    memset(m, 0, sizeof *m);
    m->which = which;
    struct ctx c = {err, errlen, bad_input};
    *bad_input = false;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return fail(&c, false, "%s: %s", path, strerror(errno));
    uint8_t magic[2] = {0, 0};
    if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        int t = inflate_to_temp(&c, fd);
        close(fd);
        if (t < 0)
            return -1;
        fd = t;
        m->gzip = true;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return fail(&c, false, "%s: %s", path, strerror(errno));
    }
    m->size = (uint64_t)st.st_size;
    if (m->size == 0) {
        close(fd);
        return fail(&c, true, "offset 0: empty file");
    }
    void *p = mmap(NULL, (size_t)m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(&c, false, "%s: cannot map: %s", path, strerror(errno));
    m->base = p;
    madvise(p, (size_t)m->size, MADV_SEQUENTIAL);
    if (index_records(m, &c) < 0) {
        mdump_close(m);
        return -1;
    }
    return 0;
}

void mdump_close(struct mapped_dump *m)
{
    if (m->base)
        munmap((void *)m->base, (size_t)m->size);
    free(m->ranges);
    free(m->strs);
    free(m->classes);
    memset(m, 0, sizeof *m);
}

void mdump_release(const struct mapped_dump *m, uint64_t off, uint64_t len)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(m->base + off), e = a + len;
    a = (a + pg - 1) & ~(pg - 1);
    e &= ~(pg - 1);
    if (e > a) /* a file mapping: dropped pages are read back from the page cache */
        madvise((void *)a, e - a, MADV_DONTNEED);
}

const char *mdump_string(const struct mapped_dump *m, uint64_t id, uint32_t *len)
{
    size_t lo = 0, hi = m->nstrs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->strs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == m->nstrs || m->strs[lo].id != id)
        return NULL;
    *len = m->strs[lo].len;
    return (const char *)m->base + m->strs[lo].off;
}

uint64_t mdump_class_name_id(const struct mapped_dump *m, uint64_t class_id)
{
    size_t lo = 0, hi = m->nclasses;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->classes[mid].class_id < class_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nclasses && m->classes[lo].class_id == class_id ? m->classes[lo].name_id : 0;
}

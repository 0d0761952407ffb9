/*
 * input.c: the byte input (a file, a pipe or stdin; plain or gzip) and the violation reports.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

_Noreturn void hp_die(struct parser *P, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P->errbuf, P->errlen, fmt, ap);
    va_end(ap);
    longjmp(P->jb, 1);
}

/* ------------------------------------------------------------------------------------------ */
/* Violations                                                                                 */

void hp_viol(struct parser *P, enum hprof_severity sev, enum hprof_kind k, uint64_t off,
             const char *fmt, ...)
{
    struct hprof_summary *S = P->sum;
    if (sev == HPROF_ERROR)
        S->errors++;
    else
        S->warnings++;
    S->kind_counts[k]++;
    if (P->o->max_reports && S->kind_shown[k] >= P->o->max_reports)
        return;
    S->kind_shown[k]++;
    if (!P->report)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    P->report(P->ctx, sev, k, off, msg);
}

/* ------------------------------------------------------------------------------------------ */
/* Input                                                                                      */

size_t hp_read_some(struct parser *P, uint8_t *dst, size_t n)
{
    for (;;) {
        ssize_t r = read(P->s.fd, dst, n);
        if (r >= 0)
            return (size_t)r;
        if (errno != EINTR)
            hp_die(P, "read error: %s", strerror(errno));
    }
}

/* Append decompressed or raw bytes to buf[len..]. Sets eof when no more will come. */
static void fill(struct parser *P)
{
    struct src *s = &P->s;
    if (s->eof)
        return;
    if (!s->gz) {
        size_t r = hp_read_some(P, s->buf + s->len, BUF_CAP - s->len);
        if (r == 0)
            s->eof = true;
        s->len += r;
        return;
    }
    z_stream *z = &s->z;
    size_t before = s->len;
    while (s->len == before) {
        if (z->avail_in == 0 && !s->zin_eof) {
            size_t r = hp_read_some(P, s->zin, ZIN_CAP);
            if (r == 0)
                s->zin_eof = true;
            s->zin_total += r;
            z->next_in = s->zin;
            z->avail_in = (uInt)r;
        }
        if (!s->z_live) {
            /* between members: the input is finished, or another member starts */
            if (z->avail_in == 0) {
                if (s->zin_eof) {
                    s->eof = true;
                    return;
                }
                continue;
            }
            if (inflateReset(z) != Z_OK)
                hp_die(P, "zlib: inflateReset failed");
            s->z_live = true;
        }
        z->next_out = s->buf + s->len;
        z->avail_out = (uInt)(BUF_CAP - s->len);
        int ret = inflate(z, Z_NO_FLUSH);
        s->len = BUF_CAP - z->avail_out;
        if (ret == Z_STREAM_END) {
            s->z_live = false;
            continue;
        }
        if (ret == Z_OK)
            continue;
        if (ret == Z_BUF_ERROR && z->avail_in == 0 && !s->zin_eof)
            continue;
        if (ret == Z_MEM_ERROR)
            hp_die(P, "out of memory (zlib)");
        uint64_t zoff = s->zin_total - z->avail_in;
        if (ret == Z_BUF_ERROR)
            ERR(P, HK_GZIP, s->base + s->len,
                "gzip data ends in the middle of a member (compressed file offset %" PRIu64 ")",
                zoff);
        else
            ERR(P, HK_GZIP, s->base + s->len,
                "corrupt gzip data (%s) at or before compressed file offset %" PRIu64,
                z->msg ? z->msg : "inflate failed", zoff);
        s->eof = true;
        P->fatal = true;
        return;
    }
}

void hp_truncated(struct parser *P)
{
    if (P->fatal)
        return;
    P->fatal = true;
    const char *name = hprof_tag_name(P->rec_tag);
    ERR(P, HK_TRUNCATED, P->rec_off,
        "input ends inside the %s record (tag 0x%02x, length %" PRIu64 ") at offset %" PRIu64,
        name ? name : "unknown", P->rec_tag, P->rec_len, cur(P));
}

/* Make sure n bytes (n <= MAX_NEED) are buffered; returns how many are (less only at EOF) */
size_t hp_ensure(struct parser *P, size_t n)
{
    struct src *s = &P->s;
    if (s->len - s->pos >= n)
        return n;
    size_t keep = s->len - s->pos;
    if (s->pos) {
        memmove(s->buf, s->buf + s->pos, keep);
        s->base += s->pos;
        s->pos = 0;
        s->len = keep;
    }
    while (s->len < n && !s->eof)
        fill(P);
    return s->len < n ? s->len : n;
}

const uint8_t *hp_rd_slow(struct parser *P, size_t n)
{
    if (hp_ensure(P, n) < n) {
        P->s.pos = P->s.len;
        hp_truncated(P);
        return NULL;
    }
    const uint8_t *p = P->s.buf + P->s.pos;
    P->s.pos += n;
    return p;
}

bool hp_skip(struct parser *P, uint64_t n)
{
    struct src *s = &P->s;
    for (;;) {
        size_t avail = s->len - s->pos;
        if (avail >= n) {
            s->pos += (size_t)n;
            return true;
        }
        n -= avail;
        s->base += s->len;
        s->pos = s->len = 0;
        if (s->eof) {
            hp_truncated(P);
            return false;
        }
        fill(P);
    }
}

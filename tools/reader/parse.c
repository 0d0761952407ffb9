/*
 * parse.c: hprof_parse_fd(), the driver: opens the input, runs the records, frees the state.
 * See hprof_parse.h and doc/tools.md.
 */
#include "reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void parser_free(struct parser *P)
{
    hp_map_free(&P->strings);
    hp_map_free(&P->class_by_serial);
    hp_map_free(&P->class_by_id);
    hp_map_free(&P->frames);
    hp_map_free(&P->traces);
    hp_map_free(&P->threads);
    hp_map_free(&P->thread_refs);
    VFREE(P->tref);
    VFREE(P->str);
    VFREE(P->sarena);
    VFREE(P->cls);
    VFREE(P->fr);
    VFREE(P->tr);
    VFREE(P->fwd);
    VFREE(P->sites);
    VFREE(P->samples);
    VFREE(P->tframes);
    VFREE(P->vsites);
    if (P->d)
        hp_dump_free(P->d);
    if (P->s.gz)
        inflateEnd(&P->s.z);
    free(P->s.buf);
    free(P->s.zin);
}

int hprof_parse_fd(int fd, const struct hprof_opts *opts, hprof_report_fn report, void *ctx,
                   struct hprof_summary *sum, char *errbuf, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    if (errlen)
        errbuf[0] = 0;
    struct parser *P = calloc(1, sizeof *P);
    if (!P) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    P->o = opts;
    P->report = report;
    P->ctx = ctx;
    P->sum = sum;
    P->errbuf = errbuf;
    P->errlen = errlen;
    P->s.fd = fd;
    P->strings.is_set = false;
    P->threads.is_set = true;
    int rc = 0;
    if (setjmp(P->jb)) {
        rc = -1;
        goto out;
    }
    P->s.buf = malloc(BUF_CAP);
    P->s.zin = malloc(ZIN_CAP);
    if (!P->s.buf || !P->s.zin)
        hp_die(P, "out of memory");
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    /* sniff the gzip magic in the first block, read into the compressed-input buffer */
    size_t got = 0;
    while (got < 2) {
        size_t r = hp_read_some(P, P->s.zin + got, ZIN_CAP - got);
        if (r == 0)
            break;
        got += r;
    }
    if (got >= 2 && P->s.zin[0] == 0x1f && P->s.zin[1] == 0x8b) {
        P->s.gz = true;
        sum->gzip = true;
        if (inflateInit2(&P->s.z, 15 + 32) != Z_OK)
            hp_die(P, "zlib: inflateInit2 failed");
        P->s.z_live = true;
        P->s.z.next_in = P->s.zin;
        P->s.z.avail_in = (uInt)got;
        P->s.zin_total = got;
    } else {
        memcpy(P->s.buf, P->s.zin, got);
        P->s.len = got;
        if (got == 0)
            P->s.eof = true;
        if (regular) {
            P->size_known = true;
            P->file_size = (uint64_t)st.st_size;
        }
    }
    if (hp_parse_header(P) && !P->fatal)
        hp_parse_records(P);
    sum->bytes = cur(P);
    hp_build_summary(P);
out:
    parser_free(P);
    free(P);
    return rc;
}

/* The sink's background threads (sink_set_threads): the same bytes as without them, gzip
 * members compressed in parallel written in order, flushes and switching threads on and off
 * in the middle of the output. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check_helpers.h"
#include "sink.h"

/* Compressible but not trivial: words from a small vocabulary with counters. */
static uint8_t *make_input(size_t n)
{
    uint8_t *b = malloc(n);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = x % 7 == 0 ? (uint8_t)(x >> 8) : (uint8_t) "heap dump records "[i % 18];
    }
    return b;
}

/* Writes input in pieces of varying size; threads on for [on_from, on_to) of the pieces. */
static void write_output(const char *path, bool gzip, const uint8_t *in, size_t n, unsigned threads,
                         size_t on_from, size_t on_to)
{
    struct hprof_sink *s = NULL;
    sink_open_file(path, gzip, &s);
    ck_assert_ptr_nonnull(s);
    size_t off = 0, piece = 0;
    while (off < n) {
        if (piece == on_from)
            sink_set_threads(s, threads);
        if (piece == on_to)
            sink_set_threads(s, 0);
        size_t k = (piece * 7919) % 300000 + 1;
        if (k > n - off)
            k = n - off;
        sink_write(s, in + off, k);
        if (piece % 17 == 5)
            sink_flush(s);
        off += k;
        piece++;
    }
    ck_assert(!sink_failed(s));
    sink_close(s);
}

static uint8_t *gunzip_all(const uint8_t *z, size_t zlen, size_t *outlen, unsigned *members)
{
    size_t cap = zlen * 8 + 1024, len = 0;
    uint8_t *out = malloc(cap);
    *members = 0;
    size_t pos = 0;
    while (pos < zlen) {
        z_stream st;
        memset(&st, 0, sizeof st);
        ck_assert_int_eq(inflateInit2(&st, 15 + 16), Z_OK);
        st.next_in = (Bytef *)z + pos;
        st.avail_in = (uInt)(zlen - pos);
        int rc;
        do {
            if (cap - len < 65536) {
                cap *= 2;
                out = realloc(out, cap);
            }
            st.next_out = out + len;
            st.avail_out = (uInt)(cap - len);
            rc = inflate(&st, Z_NO_FLUSH);
            len = cap - st.avail_out;
            ck_assert(rc == Z_OK || rc == Z_STREAM_END);
        } while (rc != Z_STREAM_END);
        pos = zlen - st.avail_in;
        inflateEnd(&st);
        (*members)++;
    }
    *outlen = len;
    return out;
}

START_TEST(threads_write_the_same_bytes)
{
    /* Both DEFLATE engines: libdeflate (when present) and zlib. */
    sink_gzip_use_libdeflate(_i == 0);
    const size_t n = 9 * 1024 * 1024 + 12345;
    uint8_t *in = make_input(n);
    char a[] = "/tmp/hprof-sink-a-XXXXXX", b[] = "/tmp/hprof-sink-b-XXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    for (int gz = 0; gz <= 1; gz++) {
        write_output(a, gz, in, n, 0, SIZE_MAX, SIZE_MAX);
        /* Threads from the start, off in the middle and on again is covered by two runs. */
        for (unsigned threads = 1; threads <= 4; threads += 3) {
            for (int variant = 0; variant < 2; variant++) {
                size_t from = variant ? 10 : 0, to = variant ? 40 : SIZE_MAX;
                write_output(b, gz, in, n, threads, from, to);
                size_t la, lb;
                uint8_t *da = read_file(a, &la), *db = read_file(b, &lb);
                ck_assert_uint_eq(la, lb);
                ck_assert(memcmp(da, db, la) == 0);
                if (gz) {
                    size_t ol;
                    unsigned members;
                    uint8_t *plain = gunzip_all(db, lb, &ol, &members);
                    ck_assert_uint_eq(ol, n);
                    ck_assert(memcmp(plain, in, n) == 0);
                    ck_assert_uint_gt(members, 9);
                    /* Only the first member has the comment (FLG.FCOMMENT). */
                    ck_assert_uint_eq(db[3] & 0x10, 0x10);
                    free(plain);
                } else {
                    ck_assert(memcmp(db, in, n) == 0);
                }
                free(da);
                free(db);
            }
        }
    }
    unlink(a);
    unlink(b);
    free(in);
}
END_TEST

/* With zlib, a member is byte for byte what zlib's own gzip wrapper writes (header with the
 * comment on the first member, XFL 4, OS 3, trailer). */
START_TEST(zlib_members_are_what_zlibs_gzip_wrapper_writes)
{
    sink_gzip_use_libdeflate(false);
    const size_t n = HPROF_GZIP_BLOCK_SIZE + 777;
    uint8_t *in = make_input(n);
    char a[] = "/tmp/hprof-sink-z-XXXXXX";
    close(mkstemp(a));
    struct hprof_sink *s = NULL;
    sink_open_file(a, true, &s);
    sink_write(s, in, n);
    sink_close(s);
    size_t len;
    uint8_t *got = read_file(a, &len);

    uint8_t *want = malloc(2 * n + 1024);
    size_t wlen = 0;
    for (int m = 0; m < 2; m++) {
        const uint8_t *p = in + (m ? HPROF_GZIP_BLOCK_SIZE : 0);
        size_t k = m ? 777 : HPROF_GZIP_BLOCK_SIZE;
        z_stream z;
        memset(&z, 0, sizeof z);
        ck_assert_int_eq(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        char comment[] = HPROF_GZIP_COMMENT;
        gz_header h;
        memset(&h, 0, sizeof h);
        h.os = 3;
        h.comment = (Bytef *)comment;
        if (m == 0)
            deflateSetHeader(&z, &h);
        z.next_in = (Bytef *)p;
        z.avail_in = (uInt)k;
        z.next_out = want + wlen;
        z.avail_out = (uInt)(2 * n + 1024 - wlen);
        ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
        wlen = 2 * n + 1024 - z.avail_out;
        deflateEnd(&z);
    }
    ck_assert_uint_eq(len, wlen);
    ck_assert(memcmp(got, want, len) == 0);
    free(got);
    free(want);
    free(in);
    unlink(a);
    sink_gzip_use_libdeflate(true);
}
END_TEST

START_TEST(threads_on_an_empty_output)
{
    char a[] = "/tmp/hprof-sink-c-XXXXXX";
    close(mkstemp(a));
    struct hprof_sink *s = NULL;
    sink_open_file(a, true, &s);
    ck_assert_ptr_nonnull(s);
    sink_set_threads(s, 2);
    sink_flush(s);
    sink_set_threads(s, 0);
    sink_close(s);
    size_t len;
    uint8_t *d = read_file(a, &len);
    size_t ol;
    unsigned members;
    uint8_t *plain = gunzip_all(d, len, &ol, &members);
    ck_assert_uint_eq(ol, 0);
    ck_assert_uint_eq(members, 1);
    free(plain);
    free(d);
    unlink(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sink-threads");
    TCase *t = tcase_create("threads");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, threads_write_the_same_bytes, 0, 2);
    tcase_add_test(t, zlib_members_are_what_zlibs_gzip_wrapper_writes);
    tcase_add_test(t, threads_on_an_empty_output);
    suite_add_tcase(s, t);
    return run_suite(s);
}

/* Check tests of writer/: the byte sink (buffering, gzip members, failures, timeouts), the
 * HPROF binary writer (every record against hand-assembled bytes, segment splitting, array
 * capping) and the ascii writer (every section against exact text). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "bytes.h"
#include "check_helpers.h"
#include "sink.h"
#include "writer.h"
#include "writer_internal.h"

/* ---- helpers ------------------------------------------------------------------------- */

/* Sat Nov 21 04:53:34 2026 UTC, plus 123456 us. */
#define T0_SEC 1795236814ull
#define T0_US (T0_SEC * 1000000ull + 123456ull)

static uint64_t fake_us;
static uint64_t fake_clock(void)
{
    return fake_us;
}

static void b_hdr(struct bytes *b, uint8_t tag, uint32_t time, uint32_t len)
{
    bytes_u1(b, tag);
    bytes_u4(b, time);
    bytes_u4(b, len);
}

static void assert_bytes(const uint8_t *got, size_t got_len, const uint8_t *exp, size_t exp_len)
{
    size_t n = got_len < exp_len ? got_len : exp_len;
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i])
            ck_abort_msg("byte %zu differs: got 0x%02x, expected 0x%02x", i, got[i], exp[i]);
    ck_assert_msg(got_len == exp_len, "length %zu, expected %zu", got_len, exp_len);
}

/* Bytes written since a mark. */
static const uint8_t *since(struct hprof_writer *w, size_t mark, size_t *len)
{
    size_t total;
    const uint8_t *d = sink_memory_data(w->sink, &total);
    ck_assert_uint_ge(total, mark);
    *len = total - mark;
    return d + mark;
}

static size_t mark_of(struct hprof_writer *w)
{
    size_t total;
    sink_memory_data(w->sink, &total);
    return total;
}

static void assert_since(struct hprof_writer *w, size_t mark, const struct bytes *exp)
{
    size_t len;
    const uint8_t *got = since(w, mark, &len);
    assert_bytes(got, len, exp->p, exp->n);
}

/* A binary writer on a memory sink, header written at T0, the clock then at T0 + 5000 us. */
static struct hprof_writer *bin_writer(void)
{
    struct hprof_sink *s = sink_open_memory();
    ck_assert_ptr_nonnull(s);
    struct hprof_writer *w = binary_writer_new(s);
    ck_assert_ptr_nonnull(w);
    w->clock_us = fake_clock;
    fake_us = T0_US;
    w->ops->begin(w);
    fake_us = T0_US + 5000;
    return w;
}

#define HDR_LEN 31u /* "JAVA PROFILE 1.0.2\0" + u4 + u4 + u4 */

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/hprof-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* ---- sink ---------------------------------------------------------------------------- */

START_TEST(test_sink_memory_big_endian)
{
    struct hprof_sink *s = sink_open_memory();
    sink_u1(s, 0xAB);
    sink_u2(s, 0x0102);
    sink_u4(s, 0x03040506);
    sink_u8(s, 0x0708090A0B0C0D0Eull);
    sink_printf(s, "x%dy", 42);
    static const uint8_t exp[] = {0xAB, 1,  2,  3,  4,  5,   6,   7,   8,  9,
                                  10,   11, 12, 13, 14, 'x', '4', '2', 'y'};
    size_t len;
    const uint8_t *d = sink_memory_data(s, &len);
    assert_bytes(d, len, exp, sizeof exp);
    ck_assert_uint_eq(sink_bytes_written(s), sizeof exp);

    /* A printf longer than the room left and than the bounce buffer. */
    char *big = malloc(200001);
    memset(big, 'q', 200000);
    big[200000] = 0;
    sink_printf(s, "<%s>", big);
    d = sink_memory_data(s, &len);
    ck_assert_uint_eq(len, sizeof exp + 200002);
    ck_assert_int_eq(d[sizeof exp], '<');
    ck_assert_int_eq(d[sizeof exp + 1 + 199999], 'q');
    ck_assert_int_eq(d[len - 1], '>');
    ck_assert(!sink_failed(s));
    free(big);
    sink_close(s);
    sink_close(NULL);
}
END_TEST

START_TEST(test_sink_file_roundtrip)
{
    make_tmpdir();
    char path[128];
    tmp_path(path, sizeof path, "plain.bin");
    struct hprof_sink *s = NULL;
    sink_open_file(path, false, &s);
    ck_assert_ptr_nonnull(s);
    size_t total = 0, sizes[] = {1, 7, 65535, 1, 200000, 3, 65536, 70000, 12};
    uint8_t *exp = malloc(600000);
    uint8_t *chunk = malloc(200000);
    unsigned seed = 1;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (size_t i = 0; i < sizes[k]; i++) {
            seed = seed * 1103515245u + 12345u;
            chunk[i] = (uint8_t)(seed >> 16);
        }
        sink_write(s, chunk, sizes[k]);
        memcpy(exp + total, chunk, sizes[k]);
        total += sizes[k];
    }
    ck_assert_uint_eq(sink_bytes_written(s), total);
    sink_close(s);
    size_t len;
    uint8_t *got = read_file(path, &len);
    assert_bytes(got, len, exp, total);
    free(got);
    free(exp);
    free(chunk);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(test_sink_open_file_error)
{
    struct hprof_sink *s = NULL;
    struct hprof_error err = sink_open_file("/nonexistent-dir-hprof/x.hprof", false, &s);
    ck_assert_ptr_null(s);
    ck_assert(hprof_failed(&err));
    ck_assert_str_eq(err.text,
                     "cannot open /nonexistent-dir-hprof/x.hprof: No such file or directory");
}
END_TEST

/* Decompresses a series of gzip members; returns the data and the members' offsets. */
static uint8_t *gunzip_members(const uint8_t *in, size_t in_len, size_t *out_len,
                               size_t *member_off, size_t *member_out, int max_members,
                               int *nmembers)
{
    size_t cap = 8u << 20, out = 0;
    uint8_t *dst = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(inflateInit2(&z, 15 + 32), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)in_len;
    int n = 0;
    while (z.avail_in > 0) {
        ck_assert_int_lt(n, max_members);
        member_off[n] = in_len - z.avail_in;
        size_t start = out;
        int rc;
        do {
            z.next_out = dst + out;
            z.avail_out = (uInt)(cap - out);
            rc = inflate(&z, Z_NO_FLUSH);
            ck_assert_msg(rc == Z_OK || rc == Z_STREAM_END, "inflate: %d", rc);
            out = cap - z.avail_out;
            ck_assert_uint_lt(out, cap);
        } while (rc != Z_STREAM_END);
        member_out[n] = out - start;
        n++;
        inflateReset(&z);
    }
    inflateEnd(&z);
    *out_len = out;
    *nmembers = n;
    return dst;
}

START_TEST(test_sink_gzip_members)
{
    make_tmpdir();
    char path[128];
    tmp_path(path, sizeof path, "out.hprof.gz");
    struct hprof_sink *s = NULL;
    sink_open_file(path, true, &s);
    ck_assert_ptr_nonnull(s);
    const size_t total = 2 * HPROF_GZIP_BLOCK_SIZE + 500000;
    uint8_t *data = malloc(total);
    unsigned seed = 7;
    for (size_t i = 0; i < total; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = (uint8_t)('a' + ((seed >> 16) % 16)); /* half compressible */
    }
    /* Pieces of several sizes: small ones through the buffer, large ones across blocks. */
    size_t off = 0, piece[] = {1000, 300000, 17, 1500000};
    for (int k = 0; off < total; k = (k + 1) % 4) {
        size_t n = piece[k] < total - off ? piece[k] : total - off;
        sink_write(s, data + off, n);
        off += n;
    }
    ck_assert_uint_eq(sink_bytes_written(s), total);
    sink_close(s);

    size_t flen;
    uint8_t *file = read_file(path, &flen);
    ck_assert_uint_lt(flen, total);
    /* First member: gzip magic, deflate, FCOMMENT only, comment right after the 10 bytes. */
    ck_assert_int_eq(file[0], 0x1f);
    ck_assert_int_eq(file[1], 0x8b);
    ck_assert_int_eq(file[2], 8);
    ck_assert_int_eq(file[3], 0x10);
    ck_assert_str_eq((const char *)file + 10, "HPROF BLOCKSIZE=1048576");

    size_t out_len, moff[8], mout[8];
    int nm;
    uint8_t *out = gunzip_members(file, flen, &out_len, moff, mout, 8, &nm);
    ck_assert_int_eq(nm, 3);
    ck_assert_uint_eq(mout[0], HPROF_GZIP_BLOCK_SIZE);
    ck_assert_uint_eq(mout[1], HPROF_GZIP_BLOCK_SIZE);
    ck_assert_uint_eq(mout[2], 500000);
    /* Later members: a plain header, no comment. */
    for (int i = 1; i < nm; i++) {
        ck_assert_int_eq(file[moff[i]], 0x1f);
        ck_assert_int_eq(file[moff[i] + 1], 0x8b);
        ck_assert_int_eq(file[moff[i] + 3] & 0x10, 0);
    }
    assert_bytes(out, out_len, data, total);
    free(out);
    free(file);
    free(data);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(test_sink_gzip_flush_and_empty)
{
    make_tmpdir();
    char path[128];
    tmp_path(path, sizeof path, "flush.gz");
    struct hprof_sink *s = NULL;
    sink_open_file(path, true, &s);
    sink_write(s, "hello ", 6);
    sink_flush(s); /* ends a member */
    sink_flush(s); /* nothing pending: no empty member */
    sink_write(s, "world", 5);
    sink_close(s);
    size_t flen, out_len, moff[4], mout[4];
    int nm;
    uint8_t *file = read_file(path, &flen);
    uint8_t *out = gunzip_members(file, flen, &out_len, moff, mout, 4, &nm);
    ck_assert_int_eq(nm, 2);
    assert_bytes(out, out_len, (const uint8_t *)"hello world", 11);
    ck_assert_str_eq((const char *)file + 10, HPROF_GZIP_COMMENT);
    free(out);
    free(file);

    /* Nothing written at all: still one valid (empty) member with the comment. */
    sink_open_file(path, true, &s);
    sink_close(s);
    file = read_file(path, &flen);
    ck_assert_uint_gt(flen, 10);
    ck_assert_str_eq((const char *)file + 10, HPROF_GZIP_COMMENT);
    out = gunzip_members(file, flen, &out_len, moff, mout, 4, &nm);
    ck_assert_int_eq(nm, 1);
    ck_assert_uint_eq(out_len, 0);
    free(out);
    free(file);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* Writes well past any buffer; the sink must fail with exactly one message. A socket with a
 * timeout fails from its sender thread, after the writes returned: wait up to 5 s for it. */
static void write_until_failed(struct hprof_sink *s)
{
    static uint8_t block[256 * 1024];
    for (int i = 0; i < 64 && !sink_failed(s); i++) {
        sink_write(s, block, sizeof block);
        sink_flush(s);
    }
    for (int i = 0; i < 500 && !sink_failed(s); i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    ck_assert(sink_failed(s));
    /* Later writes are dropped quietly. */
    sink_write(s, block, sizeof block);
    sink_u4(s, 1);
    sink_printf(s, "%s", "more");
    sink_flush(s);
}

START_TEST(test_sink_closed_pipe)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    close(p[0]);
    struct hprof_sink *s = sink_open_fd(p[1], false, 0, "pipe test");
    capture_begin();
    write_until_failed(s);
    sink_close(s);
    char *err = capture_end();
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_str_eq(err, "HPROF ERROR: cannot write pipe test: Broken pipe; profiling output "
                          "stopped\n");
    free(err);
}
END_TEST

START_TEST(test_sink_socket_peer_closed)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    struct hprof_sink *s = sink_open_fd(sv[0], true, 500, "socket localhost:1234");
    capture_begin();
    write_until_failed(s);
    sink_close(s);
    char *err = capture_end();
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_str_eq(err, "HPROF ERROR: cannot write socket localhost:1234: Broken pipe; "
                          "profiling output stopped\n");
    free(err);
}
END_TEST

START_TEST(test_sink_dev_full)
{
    struct hprof_sink *s = NULL;
    sink_open_file("/dev/full", false, &s);
    ck_assert_ptr_nonnull(s);
    capture_begin();
    write_until_failed(s);
    sink_close(s);
    char *text = capture_end();
    ck_assert_int_eq(count_of(text, "HPROF ERROR"), 1);
    ck_assert_str_eq(text, "HPROF ERROR: cannot write /dev/full: No space left on device; "
                           "profiling output stopped\n");
    free(text);
}
END_TEST

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(test_sink_write_timeout)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    /* sv[1] never reads: the sink fails 200 ms after the socket buffers filled. */
    struct hprof_sink *s = sink_open_fd(sv[0], false, 200, "socket slowpeer:9");
    capture_begin();
    double t0 = now_s();
    write_until_failed(s);
    double elapsed = now_s() - t0;
    sink_close(s);
    char *err = capture_end();
    ck_assert_msg(elapsed >= 0.19 && elapsed < 3.0, "took %.3f s", elapsed);
    ck_assert_int_eq(count_of(err, "HPROF ERROR"), 1);
    ck_assert_str_eq(err, "HPROF ERROR: cannot write socket slowpeer:9: the receiver accepted no "
                          "data for 200 ms; profiling output stopped\n");
    free(err);
    close(sv[1]);
}
END_TEST

START_TEST(test_sink_socket_with_timeout_delivers)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct hprof_sink *s = sink_open_fd(sv[0], false, 200, "socket ok");
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('A' + i % 26);
    sink_write(s, text, sizeof text);
    sink_flush(s);
    ck_assert(!sink_failed(s));
    sink_close(s);
    char got[sizeof text];
    size_t n = 0;
    while (n < sizeof got) {
        ssize_t r = read(sv[1], got + n, sizeof got - n);
        ck_assert_int_gt(r, 0);
        n += (size_t)r;
    }
    ck_assert_int_eq(memcmp(got, text, sizeof text), 0);
    ck_assert_int_eq(read(sv[1], got, 1), 0); /* closed by sink_close */
    close(sv[1]);
}
END_TEST

/* ---- common -------------------------------------------------------------------------- */

START_TEST(test_types_and_dates)
{
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_OBJECT), 8);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_BOOLEAN), 1);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_CHAR), 2);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_FLOAT), 4);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_DOUBLE), 8);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_BYTE), 1);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_SHORT), 2);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_INT), 4);
    ck_assert_uint_eq(writer_common_type_size(HPROF_TYPE_LONG), 8);
    ck_assert_uint_eq(writer_common_type_size((enum hprof_basic_type)3), 0);
    ck_assert_ptr_null(writer_common_type_name(HPROF_TYPE_OBJECT));
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_BOOLEAN), "boolean");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_CHAR), "char");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_FLOAT), "float");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_DOUBLE), "double");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_BYTE), "byte");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_SHORT), "short");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_INT), "int");
    ck_assert_str_eq(writer_common_type_name(HPROF_TYPE_LONG), "long");

    char buf[WRITER_DATE_LEN];
    ck_assert_str_eq(writer_common_format_date(T0_US, buf), "Sat Nov 21 04:53:34 2026");
    /* Fri Feb  6 13:13:42 2004: ctime's space-padded day. */
    ck_assert_str_eq(writer_common_format_date(1076073222ull * 1000000u, buf),
                     "Fri Feb  6 13:13:42 2004");
    uint64_t now = writer_common_wall_clock_us();
    ck_assert_uint_gt(now, 1700000000ull * 1000000u);
}
END_TEST

/* ---- binary: top-level records ------------------------------------------------------- */

START_TEST(test_bin_header)
{
    struct hprof_writer *w = bin_writer();
    static const uint8_t exp[HDR_LEN] = {'J', 'A', 'V', 'A',  ' ',  'P',  'R',  'O',  'F', 'I', 'L',
                                         'E', ' ', '1', '.',  '0',  '.',  '2',  0,    0,   0,   0,
                                         8,   0,   0,   0x01, 0xa1, 0xfc, 0x73, 0xdd, 0x2b};
    size_t len;
    const uint8_t *d = since(w, 0, &len);
    assert_bytes(d, len, exp, sizeof exp);
    ck_assert_str_eq(w->ops->name, "binary");
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_string)
{
    struct hprof_writer *w = bin_writer();
    size_t m = mark_of(w);
    w->ops->string(w, 0x1122334455667788ull, "hello", 5);
    static const uint8_t exp[] = {0x01, 0,    0,    0x13, 0x88, 0,    0,   0,   13,  0x11, 0x22,
                                  0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 'h', 'e', 'l', 'l',  'o'};
    size_t len;
    const uint8_t *d = since(w, m, &len);
    assert_bytes(d, len, exp, sizeof exp);

    /* Empty text: still a record of 8 bytes (the id). Time wraps at 2^32 us. */
    fake_us = T0_US + (1ull << 32) + 7;
    m = mark_of(w);
    w->ops->string(w, 5, "", 0);
    static const uint8_t exp2[] = {0x01, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5};
    d = since(w, m, &len);
    assert_bytes(d, len, exp2, sizeof exp2);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_classes)
{
    struct hprof_writer *w = bin_writer();
    size_t m = mark_of(w);
    w->ops->load_class(w, 7, 0xA0000001ull, 1, 0xB0000002ull, "java.lang.String");
    w->ops->unload_class(w, 7);
    static const uint8_t exp[] = {0x02, 0, 0, 0x13, 0x88, 0, 0, 0, 24, /* LOAD CLASS header */
                                  0,    0, 0, 7,                       /* class serial */
                                  0,    0, 0, 0,    0xA0, 0, 0, 1,     /* class id */
                                  0,    0, 0, 1,                       /* trace serial */
                                  0,    0, 0, 0,    0xB0, 0, 0, 2,     /* name id */
                                  0x03, 0, 0, 0x13, 0x88, 0, 0, 0, 4,  0, 0, 0, 7};
    size_t len;
    const uint8_t *d = since(w, m, &len);
    assert_bytes(d, len, exp, sizeof exp);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_frames_traces)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_frame f[2] = {
        {.frame_id = 0x10,
         .method_name_id = 0x11,
         .method_sig_id = 0x12,
         .source_name_id = 0x13,
         .class_serial = 3,
         .line = 24},
        {.frame_id = 0x20,
         .method_name_id = 0x21,
         .method_sig_id = 0x22,
         .source_name_id = 0,
         .class_serial = 4,
         .line = HPROF_LINE_NATIVE},
    };
    size_t m = mark_of(w);
    w->ops->frame(w, &f[0]);
    w->ops->frame(w, &f[1]);
    w->ops->trace(w, 2, 5, 2, f);
    w->ops->trace(w, 1, 0, 0, NULL);
    struct bytes e = {0};
    b_hdr(&e, 0x04, 5000, 40);
    bytes_u8(&e, 0x10), bytes_u8(&e, 0x11), bytes_u8(&e, 0x12), bytes_u8(&e, 0x13), bytes_u4(&e, 3),
        bytes_u4(&e, 24);
    b_hdr(&e, 0x04, 5000, 40);
    bytes_u8(&e, 0x20), bytes_u8(&e, 0x21), bytes_u8(&e, 0x22), bytes_u8(&e, 0), bytes_u4(&e, 4);
    bytes_u4(&e, 0xFFFFFFFDu);
    b_hdr(&e, 0x05, 5000, 12 + 16);
    bytes_u4(&e, 2), bytes_u4(&e, 5), bytes_u4(&e, 2), bytes_u8(&e, 0x10), bytes_u8(&e, 0x20);
    b_hdr(&e, 0x05, 5000, 12);
    bytes_u4(&e, 1), bytes_u4(&e, 0), bytes_u4(&e, 0);
    assert_since(w, m, &e);
    bytes_free(&e);

    /* A deep trace goes out in pieces but as one record. */
    struct hprof_frame deep[100];
    memset(deep, 0, sizeof deep);
    for (int i = 0; i < 100; i++)
        deep[i].frame_id = 1000 + (hprof_id)i;
    m = mark_of(w);
    w->ops->trace(w, 9, 1, 100, deep);
    b_hdr(&e, 0x05, 5000, 12 + 800);
    bytes_u4(&e, 9), bytes_u4(&e, 1), bytes_u4(&e, 100);
    for (int i = 0; i < 100; i++)
        bytes_u8(&e, 1000 + (uint64_t)i);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_threads)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_thread_info t = {.thread_serial = 1,
                                  .thread_obj = 0x500001c4,
                                  .trace_serial = 1,
                                  .name_id = 0x61,
                                  .group_id = 0x62,
                                  .parent_group_id = 0x63,
                                  .name = "main",
                                  .group = "main",
                                  .parent_group = "system"};
    size_t m = mark_of(w);
    w->ops->thread_start(w, &t);
    w->ops->thread_end(w, 1);
    struct bytes e = {0};
    b_hdr(&e, 0x0A, 5000, 40);
    bytes_u4(&e, 1), bytes_u8(&e, 0x500001c4), bytes_u4(&e, 1), bytes_u8(&e, 0x61),
        bytes_u8(&e, 0x62);
    bytes_u8(&e, 0x63);
    b_hdr(&e, 0x0B, 5000, 4);
    bytes_u4(&e, 1);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_sites)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_site_row rows[50];
    memset(rows, 0, sizeof rows);
    rows[0] = (struct hprof_site_row){.class_serial = 12,
                                      .class_name = "int[]",
                                      .array_type = HPROF_TYPE_INT,
                                      .trace_serial = 48,
                                      .live_bytes = 5000000000ull, /* clamped */
                                      .live_objs = 5000,
                                      .alloc_bytes = 280000,
                                      .alloc_objs = 1ull << 33}; /* clamped */
    for (int i = 1; i < 50; i++)
        rows[i] = (struct hprof_site_row){.class_serial = (uint32_t)i,
                                          .trace_serial = 2,
                                          .live_bytes = 16,
                                          .live_objs = 1,
                                          .alloc_bytes = 32,
                                          .alloc_objs = 2};
    struct hprof_sites_report r = {.flags = HPROF_SITES_INCREMENTAL,
                                   .cutoff = 0.0001f,
                                   .total_live_bytes = 6000000000ull,
                                   .total_live_objs = 5049,
                                   .total_alloc_bytes = 1ull << 40,
                                   .total_alloc_objs = 77,
                                   .nrows = 50,
                                   .rows = rows};
    size_t m = mark_of(w);
    w->ops->sites(w, &r);
    struct bytes e = {0};
    b_hdr(&e, 0x06, 5000, 34 + 25 * 50);
    bytes_u2(&e, 1);
    bytes_u4(&e, 0x38d1b717); /* 0.0001f */
    bytes_u4(&e, 0xFFFFFFFFu), bytes_u4(&e, 5049), bytes_u8(&e, 1ull << 40), bytes_u8(&e, 77),
        bytes_u4(&e, 50);
    bytes_u1(&e, 10), bytes_u4(&e, 12), bytes_u4(&e, 48), bytes_u4(&e, 0xFFFFFFFFu),
        bytes_u4(&e, 5000);
    bytes_u4(&e, 280000), bytes_u4(&e, 0xFFFFFFFFu);
    for (int i = 1; i < 50; i++) {
        bytes_u1(&e, 0), bytes_u4(&e, (uint32_t)i), bytes_u4(&e, 2), bytes_u4(&e, 16),
            bytes_u4(&e, 1);
        bytes_u4(&e, 32), bytes_u4(&e, 2);
    }
    assert_since(w, m, &e);
    bytes_free(&e);

    /* No rows: still a record (34 bytes). */
    r.nrows = 0;
    m = mark_of(w);
    w->ops->sites(w, &r);
    size_t len;
    const uint8_t *d = since(w, m, &len);
    ck_assert_uint_eq(len, 9 + 34);
    ck_assert_int_eq(d[8], 34);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_summary_samples_control)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_heap_summary hs = {.total_live_bytes = 1000,
                                    .total_live_objs = 10,
                                    .total_alloc_bytes = 1ull << 35,
                                    .total_alloc_objs = 99};
    struct hprof_cost_row rows[100];
    for (int i = 0; i < 100; i++)
        rows[i] = (struct hprof_cost_row){.trace_serial = 100u + (uint32_t)i,
                                          .count = 1000u - (uint64_t)i,
                                          .cost = 1,
                                          .method = "X.y"};
    struct hprof_cost_report cr = {.total = 296, .nrows = 100, .rows = rows};
    size_t m = mark_of(w);
    w->ops->heap_summary(w, &hs);
    w->ops->cpu_samples(w, &cr);
    w->ops->control_settings(w, true, true, 4);
    w->ops->control_settings(w, false, true, 8);
    w->ops->control_settings(w, true, false, 65535);
    struct bytes e = {0};
    b_hdr(&e, 0x07, 5000, 24);
    bytes_u4(&e, 1000), bytes_u4(&e, 10), bytes_u8(&e, 1ull << 35), bytes_u8(&e, 99);
    b_hdr(&e, 0x0D, 5000, 8 + 8 * 100);
    bytes_u4(&e, 296), bytes_u4(&e, 100);
    for (int i = 0; i < 100; i++)
        bytes_u4(&e, 1000u - (uint32_t)i), bytes_u4(&e, 100u + (uint32_t)i);
    b_hdr(&e, 0x0E, 5000, 6);
    bytes_u4(&e, 3), bytes_u2(&e, 4);
    b_hdr(&e, 0x0E, 5000, 6);
    bytes_u4(&e, 2), bytes_u2(&e, 8);
    b_hdr(&e, 0x0E, 5000, 6);
    bytes_u4(&e, 1), bytes_u2(&e, 65535);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_text_only_are_noops)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_cost_row row = {.trace_serial = 2, .count = 1, .cost = 1, .method = "A.b"};
    struct hprof_cost_report cr = {.total = 1, .nrows = 1, .rows = &row};
    struct hprof_method_time_row mt = {.method = "A.b", .sig = "()V", .count = 1};
    struct hprof_method_time_report mr = {.total_ms = 1, .nrows = 1, .rows = &mt};
    uint32_t waiter = 2;
    struct hprof_monitor_thread th = {.thread_serial = 1, .trace_serial = 1, .status = 1};
    struct hprof_monitor_info mi = {.class_sig = "Ljava/lang/Object;",
                                    .owner_serial = 1,
                                    .entry_count = 1,
                                    .nwaiters = 1,
                                    .waiters = &waiter};
    struct hprof_monitor_dump md = {.nthreads = 1, .nmonitors = 1, .threads = &th, .monitors = &mi};
    size_t m = mark_of(w);
    w->ops->cpu_times(w, &cr);
    w->ops->cpu_old(w, &mr);
    w->ops->monitor_time(w, &cr);
    w->ops->monitor_wait(w, "Ljava/lang/Object;", 0, 1);
    w->ops->monitor_waited(w, "Ljava/lang/Object;", 10, 1);
    w->ops->monitor_dump(w, &md);
    ck_assert_uint_eq(mark_of(w), m);
    w->ops->close(w);
}
END_TEST

/* ---- binary: heap dump --------------------------------------------------------------- */

START_TEST(test_bin_roots)
{
    struct hprof_writer *w = bin_writer();
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 10, .bytes = 1000});
    struct hprof_root roots[] = {
        {.kind = HPROF_ROOT_UNKNOWN, .object = 0x101},
        {.kind = HPROF_ROOT_JNI_GLOBAL, .object = 0x102, .jni_ref = 0x9001, .trace_serial = 1},
        {.kind = HPROF_ROOT_JNI_LOCAL, .object = 0x103, .thread_serial = 2, .frame_depth = 0},
        {.kind = HPROF_ROOT_JAVA_FRAME, .object = 0x104, .thread_serial = 2, .frame_depth = -1},
        {.kind = HPROF_ROOT_NATIVE_STACK, .object = 0x105, .thread_serial = 3},
        {.kind = HPROF_ROOT_STICKY_CLASS, .object = 0x106, .class_name = "java.lang.Object"},
        {.kind = HPROF_ROOT_THREAD_BLOCK, .object = 0x107, .thread_serial = 4},
        {.kind = HPROF_ROOT_MONITOR_USED, .object = 0x108},
        {.kind = HPROF_ROOT_THREAD_OBJECT, .object = 0x109, .thread_serial = 5, .trace_serial = 6},
        {.kind = (enum hprof_root_kind)0x42, .object = 0x10a}, /* not a kind: dropped */
    };
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        w->ops->root(w, &roots[i]);
    fake_us = T0_US + 6000;
    w->ops->heap_dump_end(w, NULL);
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 6000, 9 + 17 + 17 + 17 + 13 + 9 + 13 + 9 + 17);
    bytes_u1(&e, 0xFF), bytes_u8(&e, 0x101);
    bytes_u1(&e, 0x01), bytes_u8(&e, 0x102), bytes_u8(&e, 0x9001);
    bytes_u1(&e, 0x02), bytes_u8(&e, 0x103), bytes_u4(&e, 2), bytes_u4(&e, 0);
    bytes_u1(&e, 0x03), bytes_u8(&e, 0x104), bytes_u4(&e, 2), bytes_u4(&e, 0xFFFFFFFFu);
    bytes_u1(&e, 0x04), bytes_u8(&e, 0x105), bytes_u4(&e, 3);
    bytes_u1(&e, 0x05), bytes_u8(&e, 0x106);
    bytes_u1(&e, 0x06), bytes_u8(&e, 0x107), bytes_u4(&e, 4);
    bytes_u1(&e, 0x07), bytes_u8(&e, 0x108);
    bytes_u1(&e, 0x08), bytes_u8(&e, 0x109), bytes_u4(&e, 5), bytes_u4(&e, 6);
    b_hdr(&e, 0x2C, 6000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_class_dump)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_cp_entry cp[] = {
        {.index = 28, .type = HPROF_TYPE_OBJECT, .value.obj = 0x500001f7},
        {.index = 3, .type = HPROF_TYPE_INT, .value.i = -2},
    };
    struct hprof_static_field st[] = {
        {.field = {.name_id = 0x71, .name = "a", .type = HPROF_TYPE_OBJECT}, .value.obj = 0xAB},
        {.field = {.name_id = 0x72, .name = "b", .type = HPROF_TYPE_BOOLEAN}, .value.z = 1},
        {.field = {.name_id = 0x73, .name = "c", .type = HPROF_TYPE_CHAR}, .value.c = 0x263A},
        {.field = {.name_id = 0x74, .name = "d", .type = HPROF_TYPE_FLOAT}, .value.f = 1.5f},
        {.field = {.name_id = 0x75, .name = "e", .type = HPROF_TYPE_DOUBLE}, .value.d = -2.5},
        {.field = {.name_id = 0x76, .name = "f", .type = HPROF_TYPE_BYTE}, .value.b = -1},
        {.field = {.name_id = 0x77, .name = "g", .type = HPROF_TYPE_SHORT}, .value.s = -2},
        {.field = {.name_id = 0x78, .name = "h", .type = HPROF_TYPE_INT}, .value.i = 0x01020304},
        {.field = {.name_id = 0x79, .name = "i", .type = HPROF_TYPE_LONG},
         .value.j = -0x0102030405060708ll},
    };
    struct hprof_field fields[] = {
        {.name_id = 0x81, .name = "value", .type = HPROF_TYPE_OBJECT},
        {.name_id = 0x82, .name = "hash", .type = HPROF_TYPE_INT},
    };
    struct hprof_class_dump c = {.class_id = 0x50000200,
                                 .trace_serial = 37,
                                 .super_id = 0x500001c6,
                                 .loader_id = 0x50001a7c,
                                 .signers_id = 0x5,
                                 .domain_id = 0x50004f99,
                                 .instance_size = 24,
                                 .name = "Alloc$Foo",
                                 .ncp = 2,
                                 .nstatics = 9,
                                 .nfields = 2,
                                 .cp = cp,
                                 .statics = st,
                                 .fields = fields};
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 1});
    w->ops->class_dump(w, &c);
    w->ops->heap_dump_end(w, NULL);
    struct bytes body = {0};
    bytes_u1(&body, 0x20), bytes_u8(&body, 0x50000200), bytes_u4(&body, 37),
        bytes_u8(&body, 0x500001c6);
    bytes_u8(&body, 0x50001a7c), bytes_u8(&body, 5), bytes_u8(&body, 0x50004f99),
        bytes_u8(&body, 0);
    bytes_u8(&body, 0), bytes_u4(&body, 24);
    bytes_u2(&body, 2);
    bytes_u2(&body, 28), bytes_u1(&body, 2), bytes_u8(&body, 0x500001f7);
    bytes_u2(&body, 3), bytes_u1(&body, 10), bytes_u4(&body, 0xFFFFFFFEu);
    bytes_u2(&body, 9);
    bytes_u8(&body, 0x71), bytes_u1(&body, 2), bytes_u8(&body, 0xAB);
    bytes_u8(&body, 0x72), bytes_u1(&body, 4), bytes_u1(&body, 1);
    bytes_u8(&body, 0x73), bytes_u1(&body, 5), bytes_u2(&body, 0x263A);
    bytes_u8(&body, 0x74), bytes_u1(&body, 6), bytes_u4(&body, 0x3fc00000);
    bytes_u8(&body, 0x75), bytes_u1(&body, 7), bytes_u8(&body, 0xc004000000000000ull);
    bytes_u8(&body, 0x76), bytes_u1(&body, 8), bytes_u1(&body, 0xFF);
    bytes_u8(&body, 0x77), bytes_u1(&body, 9), bytes_u2(&body, 0xFFFE);
    bytes_u8(&body, 0x78), bytes_u1(&body, 10), bytes_u4(&body, 0x01020304);
    bytes_u8(&body, 0x79), bytes_u1(&body, 11), bytes_u8(&body, (uint64_t)-0x0102030405060708ll);
    bytes_u2(&body, 2);
    bytes_u8(&body, 0x81), bytes_u1(&body, 2);
    bytes_u8(&body, 0x82), bytes_u1(&body, 10);
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 5000, (uint32_t)body.n);
    bytes_put(&e, body.p, body.n);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    bytes_free(&body);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_instance_dump)
{
    struct hprof_writer *w = bin_writer();
    struct hprof_field f[] = {
        {.name_id = 1, .name = "o", .type = HPROF_TYPE_OBJECT},
        {.name_id = 2, .name = "z", .type = HPROF_TYPE_BOOLEAN},
        {.name_id = 3, .name = "c", .type = HPROF_TYPE_CHAR},
        {.name_id = 4, .name = "f", .type = HPROF_TYPE_FLOAT},
        {.name_id = 5, .name = "d", .type = HPROF_TYPE_DOUBLE},
        {.name_id = 6, .name = "b", .type = HPROF_TYPE_BYTE},
        {.name_id = 7, .name = "s", .type = HPROF_TYPE_SHORT},
        {.name_id = 8, .name = "i", .type = HPROF_TYPE_INT},
        {.name_id = 9, .name = "j", .type = HPROF_TYPE_LONG},
        {.name_id = 10, .name = "super", .type = HPROF_TYPE_OBJECT},
    };
    union hprof_value v[10];
    memset(v, 0, sizeof v);
    v[0].obj = 0x5000a7af;
    v[1].z = 1;
    v[2].c = 0x41;
    v[3].f = 1.5f;
    v[4].d = -2.5;
    v[5].b = -128;
    v[6].s = 300;
    v[7].i = -1;
    v[8].j = 0x1122334455667788ll;
    v[9].obj = 0;
    struct hprof_instance_dump o = {.object_id = 0x5000192d,
                                    .trace_serial = 300077, /* an allocation site's */
                                    .class_id = 0x500001b9,
                                    .class_name = "X",
                                    .size = 48,
                                    .nvalues = 10,
                                    .fields = f,
                                    .values = v};
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 48});
    w->ops->instance_dump(w, &o);
    o.nvalues = 0; /* an object without fields */
    o.object_id = 0x77;
    w->ops->instance_dump(w, &o);
    w->ops->heap_dump_end(w, NULL);
    const uint32_t nbytes = 8 + 1 + 2 + 4 + 8 + 1 + 2 + 4 + 8 + 8;
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 5000, 25 + nbytes + 25);
    bytes_u1(&e, 0x21), bytes_u8(&e, 0x5000192d), bytes_u4(&e, 300077), bytes_u8(&e, 0x500001b9),
        bytes_u4(&e, nbytes);
    bytes_u8(&e, 0x5000a7af), bytes_u1(&e, 1), bytes_u2(&e, 0x41), bytes_u4(&e, 0x3fc00000);
    bytes_u8(&e, 0xc004000000000000ull), bytes_u1(&e, 0x80), bytes_u2(&e, 300),
        bytes_u4(&e, 0xFFFFFFFFu);
    bytes_u8(&e, 0x1122334455667788ull), bytes_u8(&e, 0);
    bytes_u1(&e, 0x21), bytes_u8(&e, 0x77), bytes_u4(&e, 300077), bytes_u8(&e, 0x500001b9),
        bytes_u4(&e, 0);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_arrays)
{
    struct hprof_writer *w = bin_writer();
    hprof_id elems[3] = {0x50004f9b, 0, 0x50004f9c};
    struct hprof_obj_array_dump oa = {.array_id = 0x50000202,
                                      .trace_serial = 45,
                                      .class_id = 0x50000201,
                                      .class_name = "Alloc$Foo[]",
                                      .size = 40,
                                      .nelems = 3,
                                      .elems = elems};
    uint8_t zs[3] = {1, 0, 1};
    uint16_t cs[2] = {0x0041, 0x263A};
    float fs[2] = {1.5f, -2.0f};
    double ds[1] = {-2.5};
    int8_t bs[2] = {-1, 2};
    int16_t ss[2] = {-2, 0x1234};
    int32_t is[3] = {1, -1, 0x01020304};
    int64_t js[2] = {0x1122334455667788ll, -1};
    struct {
        enum hprof_basic_type t;
        uint32_t n;
        const void *p;
    } prims[] = {
        {HPROF_TYPE_BOOLEAN, 3, zs}, {HPROF_TYPE_CHAR, 2, cs}, {HPROF_TYPE_FLOAT, 2, fs},
        {HPROF_TYPE_DOUBLE, 1, ds},  {HPROF_TYPE_BYTE, 2, bs}, {HPROF_TYPE_SHORT, 2, ss},
        {HPROF_TYPE_INT, 3, is},     {HPROF_TYPE_LONG, 2, js}, {HPROF_TYPE_INT, 0, NULL},
    };
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 1});
    w->ops->obj_array_dump(w, &oa);
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) {
        struct hprof_prim_array_dump pa = {.array_id = 0x900 + i,
                                           .trace_serial = 2,
                                           .elem_type = prims[i].t,
                                           .size = 16,
                                           .nelems = prims[i].n,
                                           .elems = prims[i].p};
        w->ops->prim_array_dump(w, &pa);
    }
    w->ops->heap_dump_end(w, NULL);

    struct bytes body = {0};
    bytes_u1(&body, 0x22), bytes_u8(&body, 0x50000202), bytes_u4(&body, 45), bytes_u4(&body, 3);
    bytes_u8(&body, 0x50000201), bytes_u8(&body, 0x50004f9b), bytes_u8(&body, 0),
        bytes_u8(&body, 0x50004f9c);
    static const uint8_t prim_data[][24] = {
        {1, 0, 1},
        {0x00, 0x41, 0x26, 0x3A},
        {0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0},
        {0xc0, 0x04, 0, 0, 0, 0, 0, 0},
        {0xFF, 0x02},
        {0xFF, 0xFE, 0x12, 0x34},
        {0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4},
        {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
         0xFF},
        {0},
    };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) {
        bytes_u1(&body, 0x23), bytes_u8(&body, 0x900 + i), bytes_u4(&body, 2),
            bytes_u4(&body, prims[i].n);
        bytes_u1(&body, (uint8_t)prims[i].t);
        bytes_put(&body, prim_data[i], prims[i].n * writer_common_type_size(prims[i].t));
    }
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 5000, (uint32_t)body.n);
    bytes_put(&e, body.p, body.n);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    bytes_free(&body);
    w->ops->close(w);
}
END_TEST

/* Walks the records after the header; checks every HEAP DUMP SEGMENT holds whole
 * sub-records (byte arrays and roots here), none of them above the limit unless alone. */
struct seg_walk {
    int segments, arrays, roots, ends;
    uint64_t next_id;
    size_t max_len;
};

static void walk_dump(const uint8_t *d, size_t len, struct seg_walk *sw)
{
    size_t off = 0;
    size_t prev_seg_len = 0;
    while (off < len) {
        ck_assert_uint_ge(len - off, 9);
        uint8_t tag = d[off];
        uint32_t rlen = (uint32_t)d[off + 5] << 24 | (uint32_t)d[off + 6] << 16 |
                        (uint32_t)d[off + 7] << 8 | d[off + 8];
        off += 9;
        ck_assert_uint_le(rlen, len - off);
        if (tag == 0x2C) {
            ck_assert_uint_eq(rlen, 0);
            ck_assert_uint_eq(off, len); /* last record */
            sw->ends++;
            continue;
        }
        ck_assert_int_eq(tag, 0x1C);
        ck_assert_uint_gt(rlen, 0);
        sw->segments++;
        if (rlen > sw->max_len)
            sw->max_len = rlen;
        size_t end = off + rlen, first_size = 0;
        int nsub = 0;
        while (off < end) {
            size_t size;
            if (d[off] == 0x23) {
                uint32_t n = (uint32_t)d[off + 13] << 24 | (uint32_t)d[off + 14] << 16 |
                             (uint32_t)d[off + 15] << 8 | d[off + 16];
                ck_assert_int_eq(d[off + 17], HPROF_TYPE_BYTE);
                uint64_t id = 0;
                for (int i = 1; i <= 8; i++)
                    id = id << 8 | d[off + i];
                ck_assert_uint_eq(id, sw->next_id);
                sw->next_id++;
                size = 18 + (size_t)n;
                for (uint32_t i = 0; i < n; i++) /* no ck_assert per byte: it is slow */
                    if (d[off + 18 + i] != (uint8_t)(id + i))
                        ck_abort_msg("array %llu: element %u differs", (unsigned long long)id, i);
                sw->arrays++;
            } else {
                ck_assert_int_eq(d[off], 0xFF);
                size = 9;
                sw->roots++;
            }
            if (nsub == 0)
                first_size = size;
            nsub++;
            off += size;
            ck_assert_uint_le(off, end);
        }
        if (rlen > HPROF_SEGMENT_LIMIT)
            ck_assert_int_eq(nsub, 1); /* an oversized sub-record stands alone */
        /* A segment was closed only because the next sub-record did not fit. */
        if (prev_seg_len && prev_seg_len <= HPROF_SEGMENT_LIMIT)
            ck_assert_uint_gt(prev_seg_len + first_size, HPROF_SEGMENT_LIMIT);
        prev_seg_len = rlen;
    }
}

START_TEST(test_bin_segment_split)
{
    struct hprof_writer *w = bin_writer();
    uint8_t data[2000];
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 4000, .bytes = 1});
    uint64_t id = 1;
    for (int i = 0; i < 3000; i++, id++) {
        uint32_t n = 500 + (uint32_t)(i * 7) % 1400;
        for (uint32_t k = 0; k < n; k++)
            data[k] = (uint8_t)(id + k);
        struct hprof_prim_array_dump pa = {.array_id = id,
                                           .trace_serial = 1,
                                           .elem_type = HPROF_TYPE_BYTE,
                                           .nelems = n,
                                           .elems = data};
        w->ops->prim_array_dump(w, &pa);
        if (i % 100 == 0) {
            struct hprof_root r = {.kind = HPROF_ROOT_UNKNOWN, .object = 1};
            w->ops->root(w, &r);
        }
    }
    w->ops->heap_dump_end(w, NULL);
    size_t len;
    const uint8_t *d = since(w, m, &len);
    struct seg_walk sw = {.next_id = 1};
    walk_dump(d, len, &sw);
    ck_assert_int_eq(sw.arrays, 3000);
    ck_assert_int_eq(sw.roots, 30);
    ck_assert_int_eq(sw.ends, 1);
    ck_assert_int_ge(sw.segments, 3);
    ck_assert_uint_le(sw.max_len, HPROF_SEGMENT_LIMIT);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_oversized_subrecord)
{
    struct hprof_writer *w = bin_writer();
    const uint32_t n = 300000; /* 1.2 MB of ints: more than a segment */
    int32_t *ints = malloc(n * sizeof *ints);
    for (uint32_t i = 0; i < n; i++)
        ints[i] = (int32_t)(i * 2654435761u);
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 3, .bytes = 1});
    struct hprof_root r = {.kind = HPROF_ROOT_UNKNOWN, .object = 0x42};
    w->ops->root(w, &r);
    struct hprof_prim_array_dump pa = {.array_id = 0x77,
                                       .trace_serial = 3,
                                       .elem_type = HPROF_TYPE_INT,
                                       .nelems = n,
                                       .elems = ints};
    w->ops->prim_array_dump(w, &pa);
    w->ops->root(w, &r);
    w->ops->heap_dump_end(w, NULL);
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 5000, 9);
    bytes_u1(&e, 0xFF), bytes_u8(&e, 0x42);
    b_hdr(&e, 0x1C, 5000, 18 + 4 * n);
    bytes_u1(&e, 0x23), bytes_u8(&e, 0x77), bytes_u4(&e, 3), bytes_u4(&e, n), bytes_u1(&e, 10);
    for (uint32_t i = 0; i < n; i++)
        bytes_u4(&e, (uint32_t)ints[i]);
    b_hdr(&e, 0x1C, 5000, 9);
    bytes_u1(&e, 0xFF), bytes_u8(&e, 0x42);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);

    /* An oversized object array and class dump stream the same way. */
    const uint32_t no = 200000;
    hprof_id *ids = malloc(no * sizeof *ids);
    for (uint32_t i = 0; i < no; i++)
        ids[i] = 0x1000000000ull + i;
    struct hprof_obj_array_dump oa = {
        .array_id = 5, .trace_serial = 1, .class_id = 6, .nelems = no, .elems = ids};
    struct hprof_static_field *st = calloc(70000, sizeof *st);
    for (int i = 0; i < 70000; i++)
        st[i] = (struct hprof_static_field){
            .field = {.name_id = (hprof_id)i + 1, .type = HPROF_TYPE_LONG}, .value.j = i};
    struct hprof_class_dump c = {.class_id = 9, .nstatics = 70000, .statics = st};
    m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 2, .bytes = 1});
    w->ops->obj_array_dump(w, &oa);
    w->ops->class_dump(w, &c);
    w->ops->heap_dump_end(w, NULL);
    b_hdr(&e, 0x1C, 5000, 25 + 8 * no);
    bytes_u1(&e, 0x22), bytes_u8(&e, 5), bytes_u4(&e, 1), bytes_u4(&e, no), bytes_u8(&e, 6);
    for (uint32_t i = 0; i < no; i++)
        bytes_u8(&e, ids[i]);
    /* statics capped at 65535 (u2 count) */
    b_hdr(&e, 0x1C, 5000, 1 + 8 + 4 + 48 + 4 + 2 + 2 + 2 + 65535u * 17);
    bytes_u1(&e, 0x20), bytes_u8(&e, 9), bytes_u4(&e, 0);
    for (int i = 0; i < 6; i++)
        bytes_u8(&e, 0);
    bytes_u4(&e, 0), bytes_u2(&e, 0), bytes_u2(&e, 65535);
    for (int i = 0; i < 65535; i++)
        bytes_u8(&e, (uint64_t)i + 1), bytes_u1(&e, 11), bytes_u8(&e, (uint64_t)i);
    bytes_u2(&e, 0);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    free(st);
    free(ids);
    free(ints);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_array_cap)
{
    const uint64_t max_rec = 0xFFFFFFFFull; /* HotSpot: max_juint - header size */
    /* Fits: unchanged. */
    ck_assert_uint_eq(binary_heap_dump_array_max_elems(1000, 8, HPROF_OBJ_ARRAY_HEADER_SIZE), 1000);
    ck_assert_uint_eq(
        binary_heap_dump_array_max_elems(0x7fffffffu, 1, HPROF_PRIM_ARRAY_HEADER_SIZE),
        0x7fffffffu);
    /* Too big: the largest count whose record still fits. */
    struct {
        unsigned esz, hdr;
        uint32_t expect;
    } cases[] = {
        {8, HPROF_OBJ_ARRAY_HEADER_SIZE, 536870908u},
        {4, HPROF_PRIM_ARRAY_HEADER_SIZE, 1073741819u},
        {8, HPROF_PRIM_ARRAY_HEADER_SIZE, 536870909u},
        {2, HPROF_PRIM_ARRAY_HEADER_SIZE, 2147483638u}, /* even char[] at the Java maximum */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t n = binary_heap_dump_array_max_elems(0x7fffffffu, cases[i].esz, cases[i].hdr);
        ck_assert_uint_eq(n, cases[i].expect);
        ck_assert_uint_le(cases[i].hdr + (uint64_t)n * cases[i].esz, max_rec);
        ck_assert_uint_gt(cases[i].hdr + (uint64_t)(n + 1) * cases[i].esz, max_rec);
    }
    ck_assert_uint_eq(binary_heap_dump_array_max_elems(UINT32_MAX, 2, HPROF_PRIM_ARRAY_HEADER_SIZE),
                      2147483638u);
    ck_assert_uint_eq(HPROF_OBJ_ARRAY_HEADER_SIZE, 1 + 8 + 4 + 4 + 8);
    ck_assert_uint_eq(HPROF_PRIM_ARRAY_HEADER_SIZE, 1 + 8 + 4 + 4 + 1);
}
END_TEST

START_TEST(test_bin_dump_misuse)
{
    struct hprof_writer *w = bin_writer();
    size_t m = mark_of(w);
    struct hprof_root r = {.kind = HPROF_ROOT_STICKY_CLASS, .object = 0x33};
    capture_begin();
    w->ops->root(w, &r); /* outside a dump: dropped */
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 1});
    w->ops->root(w, &r);
    w->ops->string(w, 1, "x", 1); /* inside a dump: dropped */
    w->ops->thread_end(w, 3);
    w->ops->heap_dump_begin(
        w, &(struct hprof_heap_totals){.objects = 1, .bytes = 1}); /* nested: ignored */
    w->ops->heap_dump_end(w, NULL);
    w->ops->heap_dump_end(w, NULL); /* a second end: ignored */
    char *err = capture_end();
    ck_assert_int_eq(count_of(err, "HPROF ERROR: internal"), 1);
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 5000, 9);
    bytes_u1(&e, 0x05), bytes_u8(&e, 0x33);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    free(err);

    /* An empty dump is only HEAP DUMP END. */
    m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    w->ops->heap_dump_end(w, NULL);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);

    /* flush inside a dump: the pending part goes out as a (short) segment. */
    m = mark_of(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    w->ops->root(w, &r);
    w->ops->flush(w);
    w->ops->root(w, &r);
    w->ops->heap_dump_end(w, NULL);
    for (int i = 0; i < 2; i++)
        b_hdr(&e, 0x1C, 5000, 9), bytes_u1(&e, 0x05), bytes_u8(&e, 0x33);
    b_hdr(&e, 0x2C, 5000, 0);
    assert_since(w, m, &e);
    bytes_free(&e);
    w->ops->close(w);
}
END_TEST

START_TEST(test_bin_close_in_dump)
{
    make_tmpdir();
    char path[128];
    tmp_path(path, sizeof path, "closed.hprof");
    struct hprof_sink *s = NULL;
    sink_open_file(path, false, &s);
    struct hprof_writer *w = binary_writer_new(s);
    w->clock_us = fake_clock;
    fake_us = T0_US;
    w->ops->begin(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 1});
    struct hprof_root r = {.kind = HPROF_ROOT_MONITOR_USED, .object = 0x44};
    w->ops->root(w, &r);
    w->ops->close(w); /* ends the dump */
    size_t len;
    uint8_t *d = read_file(path, &len);
    struct bytes e = {0};
    b_hdr(&e, 0x1C, 0, 9);
    bytes_u1(&e, 0x07), bytes_u8(&e, 0x44);
    b_hdr(&e, 0x2C, 0, 0);
    ck_assert_uint_eq(len, HDR_LEN + e.n);
    assert_bytes(d + HDR_LEN, len - HDR_LEN, e.p, e.n);
    bytes_free(&e);
    free(d);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* ---- ascii --------------------------------------------------------------------------- */

static struct hprof_writer *ascii_writer(void)
{
    struct hprof_writer *w = ascii_writer_new(sink_open_memory());
    ck_assert_ptr_nonnull(w);
    w->clock_us = fake_clock;
    fake_us = T0_US;
    w->ops->begin(w);
    return w;
}

static char *text_since(struct hprof_writer *w, size_t mark)
{
    size_t len;
    const uint8_t *d = since(w, mark, &len);
    char *t = malloc(len + 1);
    memcpy(t, d, len);
    t[len] = 0;
    return t;
}

#define ASSERT_TEXT(w, mark, expected)                                                             \
    do {                                                                                           \
        char *got_ = text_since((w), (mark));                                                      \
        ck_assert_str_eq(got_, (expected));                                                        \
        free(got_);                                                                                \
    } while (0)

START_TEST(test_ascii_header)
{
    struct hprof_writer *w = ascii_writer();
    char *t = text_since(w, 0);
    const char *first = "JAVA PROFILE 1.0.1, created Sat Nov 21 04:53:34 2026\n\n";
    ck_assert_int_eq(strncmp(t, first, strlen(first)), 0);
    size_t n = strlen(t);
    ck_assert_uint_gt(n, 200);
    ck_assert_str_eq(t + n - 10, "--------\n\n");
    ck_assert_ptr_nonnull(strstr(t, "TRACE"));
    ck_assert_ptr_nonnull(strstr(t, "HEAP DUMP"));
    ck_assert_str_eq(w->ops->name, "ascii");
    free(t);
    w->ops->close(w);
}
END_TEST

/* ---- ascii sections: one table of (what is written, at what time, the text expected) ---- */

/* Records ascii has no place for, and a flush: nothing is written. */
static void write_noops(struct hprof_writer *w)
{
    struct hprof_frame f = {.frame_id = 1, .class_name = "A", .method_name = "b", .line = 3};
    struct hprof_heap_summary hs = {1, 2, 3, 4};
    w->ops->string(w, 1, "abc", 3);
    w->ops->load_class(w, 1, 0x10, 1, 1, "A");
    w->ops->unload_class(w, 1);
    w->ops->frame(w, &f);
    w->ops->control_settings(w, true, true, 4);
    w->ops->heap_summary(w, &hs);
    w->ops->flush(w);
}

static void write_threads_traces(struct hprof_writer *w)
{
    struct hprof_thread_info t = {.thread_serial = 1,
                                  .thread_obj = 0x500001c4,
                                  .trace_serial = 1,
                                  .name = "main",
                                  .group = "main"};
    w->ops->thread_start(w, &t);
    struct hprof_thread_info t2 = {.thread_serial = 6, .thread_obj = 0xABCDEF0123ull};
    w->ops->thread_start(w, &t2);
    w->ops->thread_end(w, 1);
    struct hprof_frame fr[] = {
        {.class_name = "Alloc",
         .method_name = "makeArrays",
         .source_name = "Alloc.java",
         .line = 24},
        {.class_name = "Alloc", .method_name = "main", .source_name = "Alloc.java", .line = 46},
        {.class_name = "Threads",
         .method_name = "work",
         .source_name = "Threads.java",
         .line = HPROF_LINE_NONE},
        {.class_name = "Foo$$Lambda$1.0x00007f4168000a08",
         .method_name = "run",
         .source_name = NULL,
         .line = HPROF_LINE_UNKNOWN},
        {.class_name = "java.lang.Thread",
         .method_name = "sleep0",
         .source_name = "Thread.java",
         .line = HPROF_LINE_NATIVE},
        {.class_name = "X",
         .method_name = "y",
         .source_name = "X.java",
         .line = HPROF_LINE_COMPILED},
    };
    w->ops->trace(w, 48, 0, 2, fr);
    w->ops->trace(w, 1, 0, 0, NULL);
    w->ops->trace(w, 392, 6, 4, fr + 2);
}

static void write_sites_by_live(struct hprof_writer *w)
{
    struct hprof_site_row rows[] = {
        {.class_name = "int[]",
         .trace_serial = 48,
         .live_bytes = 280000,
         .live_objs = 5000,
         .alloc_bytes = 280000,
         .alloc_objs = 5000},
        {.class_name = "Alloc$Foo[]",
         .trace_serial = 45,
         .live_bytes = 40128,
         .live_objs = 2,
         .alloc_bytes = 40128,
         .alloc_objs = 2},
        {.class_name = "java.lang.String",
         .trace_serial = 1000000,
         .live_bytes = 0,
         .live_objs = 0,
         .alloc_bytes = 12345678901ull,
         .alloc_objs = 123456},
    };
    struct hprof_sites_report r = {.total_live_bytes = 517116, .nrows = 3, .rows = rows};
    w->ops->sites(w, &r);
}

static void write_sites_by_alloc_empty(struct hprof_writer *w)
{
    struct hprof_sites_report r = {
        .flags = HPROF_SITES_BY_ALLOC, .nrows = 0, .total_live_bytes = 0};
    w->ops->sites(w, &r);
}

static void write_cpu_samples(struct hprof_writer *w)
{
    struct hprof_cost_row rows[] = {
        {.trace_serial = 37, .count = 178, .cost = 178, .method = "CpuBusy.hotA"},
        {.trace_serial = 38, .count = 116, .cost = 116, .method = "CpuBusy.hotB"},
    };
    struct hprof_cost_report r = {.total = 296, .nrows = 2, .rows = rows};
    w->ops->cpu_samples(w, &r);
}

/* cpu=times: count = calls, percentages from the cost in ms. */
static void write_cpu_times(struct hprof_writer *w)
{
    struct hprof_cost_row trows[] = {
        {.trace_serial = 176, .count = 200, .cost = 1885, .method = "CpuBusy.hotA"},
        {.trace_serial = 177, .count = 1000000, .cost = 1447, .method = "CpuBusy.hotB"},
    };
    struct hprof_cost_report tr = {.total = 3332, .nrows = 2, .rows = trows};
    w->ops->cpu_times(w, &tr);
}

/* Rows finer than the total: percentages from cost_total, the total still in ms. */
static void write_cpu_times_ns_rows(struct hprof_writer *w)
{
    struct hprof_cost_row nsrows[] = {
        {.trace_serial = 176, .count = 3, .cost = 2500000, .method = "CpuBusy.hotA"},
        {.trace_serial = 177, .count = 12345, .cost = 400000, .method = "CpuBusy.leaf"},
    };
    struct hprof_cost_report nr = {.total = 3, .nrows = 2, .rows = nsrows, .cost_total = 3000000};
    w->ops->cpu_times(w, &nr);
}

static void write_cpu_old(struct hprof_writer *w)
{
    struct hprof_method_time_row mrows[] = {
        {.method = "CpuBusy.hotA", .sig = "()V", .count = 200, .self_ms = 1885, .total_ms = 2990},
        {.method = "java.lang.String.hashCode",
         .sig = "()I",
         .count = 7,
         .self_ms = 0,
         .total_ms = 0},
    };
    struct hprof_method_time_report mr = {.total_ms = 3332, .nrows = 2, .rows = mrows};
    w->ops->cpu_old(w, &mr);
}

static void write_monitor_time_and_waits(struct hprof_writer *w)
{
    struct hprof_cost_row rows[] = {
        {.trace_serial = 119, .count = 60, .cost = 1, .method = "java.lang.Object"},
    };
    struct hprof_cost_report r = {.total = 1, .nrows = 1, .rows = rows};
    w->ops->monitor_time(w, &r);
    w->ops->monitor_wait(w, "Ljava/lang/Object;", 0, 9);
    w->ops->monitor_waited(w, "Ljava/lang/Thread;", 498, 1);
}

static void write_monitor_dump(struct hprof_writer *w)
{
    struct hprof_monitor_thread th[] = {
        {.thread_serial = 1, .trace_serial = 121, .status = HPROF_TS_COND_WAIT},
        {.thread_serial = 5, .trace_serial = 122, .status = HPROF_TS_SLEEPING},
        {.thread_serial = 6, .trace_serial = 1, .status = HPROF_TS_MONITOR_WAIT},
        {.thread_serial = 7,
         .trace_serial = 1,
         .status = HPROF_TS_COND_WAIT | HPROF_TS_SUSPENDED | HPROF_TS_INTERRUPTED},
        {.thread_serial = 8, .trace_serial = 1, .status = HPROF_TS_RUNNABLE},
        {.thread_serial = 9, .trace_serial = 1, .status = HPROF_TS_ZOMBIE},
        {.thread_serial = 10, .trace_serial = 1, .status = HPROF_TS_RUNNABLE | HPROF_TS_SUSPENDED},
        {.thread_serial = 11, .trace_serial = 1, .status = 0},
    };
    uint32_t waiters[] = {6, 7};
    uint32_t notify[] = {1};
    struct hprof_monitor_info mon[] = {
        {.class_sig = "Ljava/lang/Object;",
         .owner_serial = 5,
         .entry_count = 1,
         .nwaiters = 2,
         .waiters = waiters},
        {.class_sig = "LLock;", .owner_serial = 0, .nnotify = 1, .notify = notify},
    };
    struct hprof_monitor_dump d = {.nthreads = 8, .nmonitors = 2, .threads = th, .monitors = mon};
    w->ops->monitor_dump(w, &d);
}

/* Totals known at begin: every record in the order given. */
static void write_heap_dump(struct hprof_writer *w)
{
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 6431, .bytes = 517616});
    struct hprof_root roots[] = {
        {.kind = HPROF_ROOT_THREAD_OBJECT,
         .object = 0x50001920,
         .thread_serial = 6,
         .trace_serial = 1},
        {.kind = HPROF_ROOT_THREAD_BLOCK, .object = 0x50001920, .thread_serial = 6},
        {.kind = HPROF_ROOT_JAVA_FRAME, .object = 0x50001920, .thread_serial = 1, .frame_depth = 2},
        {.kind = HPROF_ROOT_JNI_LOCAL, .object = 0x50001926, .thread_serial = 1, .frame_depth = -1},
        {.kind = HPROF_ROOT_JNI_GLOBAL, .object = 0x500001b9, .jni_ref = 0x1, .trace_serial = 0},
        {.kind = HPROF_ROOT_STICKY_CLASS, .object = 0x50001930, .class_name = "java.lang.Object[]"},
        {.kind = HPROF_ROOT_MONITOR_USED, .object = 0x50001931},
        {.kind = HPROF_ROOT_NATIVE_STACK, .object = 0x50001932, .thread_serial = 2},
        {.kind = HPROF_ROOT_UNKNOWN, .object = 0x50001a63},
    };
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        w->ops->root(w, &roots[i]);

    struct hprof_static_field st[] = {
        {.field = {.name = "EMPTY_STACK_TRACE", .type = HPROF_TYPE_OBJECT},
         .value.obj = 0x50001c08},
        {.field = {.name = "nullStatic", .type = HPROF_TYPE_OBJECT}, .value.obj = 0},
        {.field = {.name = "count", .type = HPROF_TYPE_INT}, .value.i = 5},
    };
    struct hprof_cp_entry cp[] = {
        {.index = 28, .type = HPROF_TYPE_OBJECT, .value.obj = 0x500001f7},
        {.index = 29, .type = HPROF_TYPE_INT, .value.i = 7},
    };
    struct hprof_class_dump c = {.class_id = 0x50000200,
                                 .trace_serial = 37,
                                 .super_id = 0x500001c6,
                                 .loader_id = 0x50001a7c,
                                 .signers_id = 0,
                                 .domain_id = 0x50004f99,
                                 .name = "Alloc$Foo",
                                 .ncp = 2,
                                 .nstatics = 3,
                                 .cp = cp,
                                 .statics = st};
    w->ops->class_dump(w, &c);
    struct hprof_class_dump c2 = {
        .class_id = 0x50000100, .trace_serial = 1, .name = "java.lang.Object"};
    w->ops->class_dump(w, &c2);

    struct hprof_field f[] = {
        {.name = "value", .type = HPROF_TYPE_OBJECT},
        {.name = "hash", .type = HPROF_TYPE_INT},
        {.name = "next", .type = HPROF_TYPE_OBJECT},
        {.name = "longFieldName", .type = HPROF_TYPE_OBJECT},
    };
    union hprof_value v[4] = {{.obj = 0x5000a7af}, {.i = 99}, {.obj = 0}, {.obj = 0x5000a7b0}};
    struct hprof_instance_dump o = {.object_id = 0x5000192d,
                                    .trace_serial = 1,
                                    .class_id = 0x500001b9,
                                    .class_name = "java.lang.String",
                                    .size = 24,
                                    .nvalues = 4,
                                    .fields = f,
                                    .values = v};
    w->ops->instance_dump(w, &o);
    hprof_id elems[] = {0x50004f9b, 0, 0x50004f9d};
    struct hprof_obj_array_dump oa = {.array_id = 0x50000202,
                                      .trace_serial = 45,
                                      .class_id = 0x50000201,
                                      .class_name = "Alloc$Foo[]",
                                      .size = 40016,
                                      .nelems = 3,
                                      .elems = elems};
    w->ops->obj_array_dump(w, &oa);
    int32_t ints[10] = {0};
    struct hprof_prim_array_dump pa = {.array_id = 0x50000208,
                                       .trace_serial = 48,
                                       .elem_type = HPROF_TYPE_INT,
                                       .size = 40,
                                       .nelems = 10,
                                       .elems = ints};
    w->ops->prim_array_dump(w, &pa);
    pa.elem_type = HPROF_TYPE_CHAR;
    pa.nelems = 0;
    w->ops->prim_array_dump(w, &pa);
    w->ops->heap_dump_end(w, NULL);
}

struct ascii_case {
    const char *name;
    uint64_t after_us; /* the clock: T0_US + after_us */
    void (*write)(struct hprof_writer *w);
    const char *expected;
};

static const struct ascii_case ascii_cases[] = {
    {"no-ops", 0, write_noops, ""},
    {"threads and traces", 0, write_threads_traces,
     "THREAD START (obj=500001c4, id = 200001, name=\"main\", group=\"main\")\n"
     "THREAD START (obj=abcdef0123, id = 200006, name=\"\", group=\"\")\n"
     "THREAD END (id = 200001)\n"
     "TRACE 300047:\n"
     "\tAlloc.makeArrays(Alloc.java:24)\n"
     "\tAlloc.main(Alloc.java:46)\n"
     "TRACE 300000:\n"
     "\t<empty>\n"
     "TRACE 300391: (thread=200006)\n"
     "\tThreads.work(Threads.java:Unknown line)\n"
     "\tFoo$$Lambda$1.0x00007f4168000a08.run(<Unknown Source>:Unknown line)\n"
     "\tjava.lang.Thread.sleep0(Native Method)\n"
     "\tX.y(X.java:Unknown line)\n"},
    {"sites by live bytes", 4000000, write_sites_by_live,
     "SITES BEGIN (ordered by live bytes) Sat Nov 21 04:53:38 2026\n"
     "          percent          live          alloc'ed  stack class\n"
     " rank   self  accum     bytes objs     bytes  objs trace name\n"
     "    1 54.15% 54.15%    280000 5000    280000  5000 300047 int[]\n"
     "    2  7.76% 61.91%     40128    2     40128     2 300044 Alloc$Foo[]\n"
     "    3  0.00% 61.91%         0    0 12345678901 123456 1299999 "
     "java.lang.String\n"
     "SITES END\n"},
    {"sites by allocated bytes, no rows", 4000000, write_sites_by_alloc_empty,
     "SITES BEGIN (ordered by allocated bytes) Sat Nov 21 04:53:38 2026\n"
     "          percent          live          alloc'ed  stack class\n"
     " rank   self  accum     bytes objs     bytes  objs trace name\n"
     "SITES END\n"},
    {"cpu samples", 4000000, write_cpu_samples,
     "CPU SAMPLES BEGIN (total = 296) Sat Nov 21 04:53:38 2026\n"
     "rank   self  accum   count trace method\n"
     "   1 60.14% 60.14%     178 300036 CpuBusy.hotA\n"
     "   2 39.19% 99.32%     116 300037 CpuBusy.hotB\n"
     "CPU SAMPLES END\n"},
    {"cpu times", 55000000, write_cpu_times,
     "CPU TIME (ms) BEGIN (total = 3332) Sat Nov 21 04:54:29 2026\n"
     "rank   self  accum   count trace method\n"
     "   1 56.57% 56.57%     200 300175 CpuBusy.hotA\n"
     "   2 43.43% 100.00% 1000000 300176 CpuBusy.hotB\n"
     "CPU TIME (ms) END\n"},
    {"cpu times, rows in ns", 55000000, write_cpu_times_ns_rows,
     "CPU TIME (ms) BEGIN (total = 3) Sat Nov 21 04:54:29 2026\n"
     "rank   self  accum   count trace method\n"
     "   1 83.33% 83.33%       3 300175 CpuBusy.hotA\n"
     "   2 13.33% 96.67%   12345 300176 CpuBusy.leaf\n"
     "CPU TIME (ms) END\n"},
    {"cpu old", 55000000, write_cpu_old,
     "CPU TIME BY METHOD (ms) BEGIN (total = 3332) Sat Nov 21 04:54:29 2026\n"
     "rank   self  accum   count  self_ms total_ms method signature\n"
     "   1 56.57% 56.57%     200     1885     2990 CpuBusy.hotA ()V\n"
     "   2  0.00% 56.57%       7        0        0 java.lang.String.hashCode ()I\n"
     "CPU TIME BY METHOD (ms) END\n"},
    {"monitor time, wait, waited", 45000000, write_monitor_time_and_waits,
     "MONITOR TIME BEGIN (total = 1 ms) Sat Nov 21 04:54:19 2026\n"
     "rank   self  accum   count trace monitor\n"
     "   1 100.00% 100.00%      60 300118 java.lang.Object (Java)\n"
     "MONITOR TIME END\n"
     "WAIT: MONITOR Ljava/lang/Object;, timeout=0, thread 200009\n"
     "WAITED: MONITOR Ljava/lang/Thread;, time_waited=498, thread 200001\n"},
    {"monitor dump", 45000000, write_monitor_dump,
     "MONITOR DUMP BEGIN\n"
     "    THREAD 200001, trace 300120, status: CW\n"
     "    THREAD 200005, trace 300121, status: SL\n"
     "    THREAD 200006, trace 300000, status: MW\n"
     "    THREAD 200007, trace 300000, status: CW,S,I\n"
     "    THREAD 200008, trace 300000, status: R\n"
     "    THREAD 200009, trace 300000, status: ZO\n"
     "    THREAD 200010, trace 300000, status: R,S\n"
     "    THREAD 200011, trace 300000, status: UN\n"
     "    MONITOR Ljava/lang/Object;\n"
     "\towner: thread 200005, entry count: 1\n"
     "\twaiting to enter: thread 200006, thread 200007\n"
     "\twaiting to be notified:\n"
     "    MONITOR LLock; unowned\n"
     "\twaiting to enter:\n"
     "\twaiting to be notified: thread 200001\n"
     "MONITOR DUMP END\n"},
    {"heap dump", 0, write_heap_dump,
     "HEAP DUMP BEGIN (6431 objects, 517616 bytes) Sat Nov 21 04:53:34 2026\n"
     "ROOT 50001920 (kind=<thread>, id=200006, trace=300000)\n"
     "ROOT 50001920 (kind=<thread block>, thread=200006)\n"
     "ROOT 50001920 (kind=<Java stack>, thread=200001, frame=2)\n"
     "ROOT 50001926 (kind=<JNI local ref>, thread=200001, frame=-1)\n"
     "ROOT 500001b9 (kind=<JNI global ref>, id=1, trace=300000)\n"
     "ROOT 50001930 (kind=<system class>, name=java.lang.Object[])\n"
     "ROOT 50001931 (kind=<busy monitor>)\n"
     "ROOT 50001932 (kind=<native stack>, thread=200002)\n"
     "ROOT 50001a63 (kind=<unknown>)\n"
     "CLS 50000200 (name=Alloc$Foo, trace=300036)\n"
     "\tsuper\t\t500001c6\n"
     "\tloader\t\t50001a7c\n"
     "\tdomain\t\t50004f99\n"
     "\tstatic EMPTY_STACK_TRACE\t50001c08\n"
     "\tconstant pool entry 28\t500001f7\n"
     "CLS 50000100 (name=java.lang.Object, trace=300000)\n"
     "OBJ 5000192d (sz=24, trace=300000, class=java.lang.String@500001b9)\n"
     "\tvalue\t\t5000a7af\n"
     "\tlongFieldName\t5000a7b0\n"
     "ARR 50000202 (sz=40016, trace=300044, nelems=3, elem type=Alloc$Foo[]@50000201)\n"
     "\t[0]\t\t50004f9b\n"
     "\t[2]\t\t50004f9d\n"
     "ARR 50000208 (sz=40, trace=300047, nelems=10, elem type=int[])\n"
     "ARR 50000208 (sz=40, trace=300047, nelems=0, elem type=char[])\n"
     "HEAP DUMP END\n"},
};

#define N_ASCII_CASES (sizeof ascii_cases / sizeof ascii_cases[0])

START_TEST(test_ascii_section)
{
    const struct ascii_case *c = &ascii_cases[_i];
    struct hprof_writer *w = ascii_writer();
    fake_us = T0_US + c->after_us;
    size_t m = mark_of(w);
    c->write(w);
    char *got = text_since(w, m);
    ck_assert_msg(strcmp(got, c->expected) == 0, "%s: got\n%s\nexpected\n%s", c->name, got,
                  c->expected);
    free(got);
    w->ops->close(w);
}
END_TEST

/* A dump begun without totals (the agent's heap walk) is held back until heap_dump_end brings
 * them: nothing is written before, then the header with those totals, the CLASS DUMPs (given
 * last) first, then roots and objects in the order given; more text than the spool's buffers
 * hold comes back whole. */
START_TEST(test_ascii_held_dump)
{
    struct hprof_writer *w = ascii_writer();
    size_t m = mark_of(w);
    struct hprof_sink *out = w->sink; /* w->sink is the spool while the dump is held back */
    w->ops->heap_dump_begin(w, NULL);
    w->ops->root(w, &(struct hprof_root){.kind = HPROF_ROOT_STICKY_CLASS,
                                         .object = 0x50001930,
                                         .class_name = "java.lang.Object[]"});
    struct hprof_field f[] = {{.name = "next", .type = HPROF_TYPE_OBJECT}};
    union hprof_value v[] = {{.obj = 0x5000a7af}};
    w->ops->instance_dump(w, &(struct hprof_instance_dump){.object_id = 0x5000192d,
                                                           .trace_serial = 1,
                                                           .class_id = 0x50000200,
                                                           .class_name = "Alloc$Foo",
                                                           .size = 16,
                                                           .nvalues = 1,
                                                           .fields = f,
                                                           .values = v});
    enum { NARRAYS = 5000 };
    for (uint32_t i = 0; i < NARRAYS; i++)
        w->ops->prim_array_dump(w, &(struct hprof_prim_array_dump){.array_id = 0x60000000 + i,
                                                                   .trace_serial = 1,
                                                                   .elem_type = HPROF_TYPE_BYTE,
                                                                   .size = 16 + i});
    w->ops->class_dump(w, &(struct hprof_class_dump){.class_id = 0x50000200,
                                                     .trace_serial = 1,
                                                     .super_id = 0x50000100,
                                                     .name = "Alloc$Foo"});
    size_t held_len;
    sink_memory_data(out, &held_len);
    ck_assert_uint_eq(held_len, m);
    w->ops->heap_dump_end(w, &(struct hprof_heap_totals){.objects = NARRAYS + 2, .bytes = 4242});
    ck_assert_ptr_eq(w->sink, out);
    size_t cap = 128 + 80 * (size_t)NARRAYS + 512, len = 0;
    char *want = malloc(cap);
    len += (size_t)snprintf(want + len, cap - len,
                            "HEAP DUMP BEGIN (%u objects, 4242 bytes) Sat Nov 21 04:53:34 2026\n"
                            "CLS 50000200 (name=Alloc$Foo, trace=300000)\n"
                            "\tsuper\t\t50000100\n"
                            "ROOT 50001930 (kind=<system class>, name=java.lang.Object[])\n"
                            "OBJ 5000192d (sz=16, trace=300000, class=Alloc$Foo@50000200)\n"
                            "\tnext\t\t5000a7af\n",
                            NARRAYS + 2);
    for (uint32_t i = 0; i < NARRAYS; i++)
        len += (size_t)snprintf(want + len, cap - len,
                                "ARR %x (sz=%u, trace=300000, nelems=0, elem type=byte[])\n",
                                0x60000000 + i, 16 + i);
    snprintf(want + len, cap - len, "HEAP DUMP END\n");
    ASSERT_TEXT(w, m, want);
    free(want);
    w->ops->close(w);
}
END_TEST

/* Allocation sites linked: OBJ and ARR lines name their TRACE, the header counts the objects with
 * a site and without (issue 30). */
START_TEST(test_ascii_held_dump_sites)
{
    struct hprof_writer *w = ascii_writer();
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, NULL);
    w->ops->instance_dump(w, &(struct hprof_instance_dump){.object_id = 0x5000192d,
                                                           .trace_serial = 45,
                                                           .class_id = 0x50000200,
                                                           .class_name = "Alloc$Foo",
                                                           .size = 16});
    w->ops->obj_array_dump(w, &(struct hprof_obj_array_dump){.array_id = 0x5000192e,
                                                             .trace_serial = 1,
                                                             .class_id = 0x50000201,
                                                             .class_name = "Alloc$Foo[]",
                                                             .size = 16});
    w->ops->prim_array_dump(w, &(struct hprof_prim_array_dump){.array_id = 0x5000192f,
                                                               .trace_serial = 46,
                                                               .elem_type = HPROF_TYPE_INT,
                                                               .size = 16});
    w->ops->heap_dump_end(
        w, &(struct hprof_heap_totals){
               .objects = 3, .bytes = 48, .sites = true, .with_site = 2, .without_site = 1});
    ASSERT_TEXT(w, m,
                "HEAP DUMP BEGIN (3 objects, 48 bytes) (2 with an allocation site, 1 without) "
                "Sat Nov 21 04:53:34 2026\n"
                "OBJ 5000192d (sz=16, trace=300044, class=Alloc$Foo@50000200)\n"
                "ARR 5000192e (sz=16, trace=300000, nelems=0, elem type=Alloc$Foo[]@50000201)\n"
                "ARR 5000192f (sz=16, trace=300045, nelems=0, elem type=int[])\n"
                "HEAP DUMP END\n");
    w->ops->close(w);
}
END_TEST

/* A held-back dump ended without totals (the walk was abandoned), or still open at close, is
 * not written at all; the output goes on. An empty one is the header and the end. */
START_TEST(test_ascii_held_dump_dropped)
{
    struct hprof_writer *w = ascii_writer();
    size_t m = mark_of(w);
    w->ops->heap_dump_begin(w, NULL);
    w->ops->root(w, &(struct hprof_root){.kind = HPROF_ROOT_MONITOR_USED, .object = 0x10});
    w->ops->class_dump(w, &(struct hprof_class_dump){.class_id = 0x20, .name = "A"});
    w->ops->heap_dump_end(w, NULL);
    ASSERT_TEXT(w, m, "");
    struct hprof_sink *out = w->sink;
    w->ops->heap_dump_begin(w, NULL);
    w->ops->heap_dump_end(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    w->ops->thread_end(w, 3);
    ASSERT_TEXT(w, m,
                "HEAP DUMP BEGIN (0 objects, 0 bytes) Sat Nov 21 04:53:34 2026\n"
                "HEAP DUMP END\n"
                "THREAD END (id = 200003)\n");
    m = mark_of(w);
    w->ops->heap_dump_begin(w, NULL);
    w->ops->root(w, &(struct hprof_root){.kind = HPROF_ROOT_MONITOR_USED, .object = 0x10});
    size_t held_len;
    sink_memory_data(out, &held_len);
    ck_assert_uint_eq(held_len, m);
    w->ops->close(w);
}
END_TEST

START_TEST(test_ascii_to_failed_sink)
{
    /* Writing to a sink that failed must be harmless. */
    struct hprof_sink *s = NULL;
    sink_open_file("/dev/full", false, &s);
    struct hprof_writer *w = ascii_writer_new(s);
    w->clock_us = fake_clock;
    capture_begin();
    w->ops->begin(w);
    for (int i = 0; i < 2000; i++)
        w->ops->thread_end(w, (uint32_t)i);
    w->ops->flush(w);
    w->ops->thread_end(w, 1);
    w->ops->close(w);
    char *text = capture_end();
    ck_assert_int_eq(count_of(text, "HPROF ERROR"), 1);
    free(text);
}
END_TEST

/* ---- suite --------------------------------------------------------------------------- */

static Suite *writer_suite(void)
{
    Suite *s = suite_create("writer");
    suite_add_tests(s, "sink", 60,
                    TESTS(test_sink_memory_big_endian, test_sink_file_roundtrip,
                          test_sink_open_file_error, test_sink_gzip_members,
                          test_sink_gzip_flush_and_empty, test_sink_closed_pipe,
                          test_sink_socket_peer_closed, test_sink_dev_full, test_sink_write_timeout,
                          test_sink_socket_with_timeout_delivers, test_types_and_dates));

    suite_add_tests(s, "binary", 60,
                    TESTS(test_bin_header, test_bin_string, test_bin_classes,
                          test_bin_frames_traces, test_bin_threads, test_bin_sites,
                          test_bin_summary_samples_control, test_bin_text_only_are_noops,
                          test_bin_roots, test_bin_class_dump, test_bin_instance_dump,
                          test_bin_arrays, test_bin_segment_split, test_bin_oversized_subrecord,
                          test_bin_array_cap, test_bin_dump_misuse, test_bin_close_in_dump));

    TCase *tc = tcase_create("ascii");
    tcase_add_test(tc, test_ascii_header);
    tcase_add_loop_test(tc, test_ascii_section, 0, (int)N_ASCII_CASES);
    tcase_add_test(tc, test_ascii_held_dump);
    tcase_add_test(tc, test_ascii_held_dump_sites);
    tcase_add_test(tc, test_ascii_held_dump_dropped);
    tcase_add_test(tc, test_ascii_to_failed_sink);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* Dates in the expected text are UTC. */
    setenv("TZ", "UTC", 1);
    tzset();
    return run_suite(writer_suite());
}

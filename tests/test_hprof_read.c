/*
 * Unit tests of tools/hprof-read: HPROF files crafted byte by byte, one per violation class,
 * parsed in-process (plain file, pipe, gzip members) and through the command-line entry point.
 */
#include "bytes.h"
#include "check_helpers.h"
#include "hprof_parse.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int hprof_read_main(int argc, char **argv, FILE *out, FILE *err);

/* ------------------------------------------------------------------------------------------ */
/* HPROF records, on the tests' byte builder (bytes.h)                                         */

static void header(struct bytes *b, const char *version, uint32_t idsize)
{
    bytes_put(b, version, strlen(version) + 1);
    bytes_u4(b, idsize);
    bytes_u8(b, 1700000000123ull);
}
/* Start a record; returns where its length goes (patched by end()) */
static size_t rec(struct bytes *b, unsigned tag)
{
    bytes_u1(b, tag);
    bytes_u4(b, 0);
    size_t at = b->n;
    bytes_u4(b, 0);
    return at;
}
static void end(struct bytes *b, size_t at)
{
    uint32_t len = (uint32_t)(b->n - at - 4);
    uint8_t *q = b->p + at;
    q[0] = (uint8_t)(len >> 24);
    q[1] = (uint8_t)(len >> 16);
    q[2] = (uint8_t)(len >> 8);
    q[3] = (uint8_t)len;
}
static void string(struct bytes *b, uint64_t sid, const char *s)
{
    size_t r = rec(b, 0x01);
    bytes_id(b, sid);
    bytes_put(b, s, strlen(s));
    end(b, r);
}
static void load_class(struct bytes *b, uint32_t serial, uint64_t cid, uint32_t trace,
                       uint64_t name)
{
    size_t r = rec(b, 0x02);
    bytes_u4(b, serial);
    bytes_id(b, cid);
    bytes_u4(b, trace);
    bytes_id(b, name);
    end(b, r);
}
static void frame(struct bytes *b, uint64_t fid, uint64_t m, uint64_t sig, uint64_t src,
                  uint32_t cls, int32_t line)
{
    size_t r = rec(b, 0x04);
    bytes_id(b, fid);
    bytes_id(b, m);
    bytes_id(b, sig);
    bytes_id(b, src);
    bytes_u4(b, cls);
    bytes_u4(b, (uint32_t)line);
    end(b, r);
}
static void trace(struct bytes *b, uint32_t serial, uint32_t thread, int n, const uint64_t *frames)
{
    size_t r = rec(b, 0x05);
    bytes_u4(b, serial);
    bytes_u4(b, thread);
    bytes_u4(b, (uint32_t)n);
    for (int i = 0; i < n; i++)
        bytes_id(b, frames[i]);
    end(b, r);
}
static void start_thread(struct bytes *b)
{
    size_t r = rec(b, 0x0A);
    bytes_u4(b, 1);
    bytes_id(b, 0x9000);
    bytes_u4(b, 1);
    bytes_id(b, 9);
    bytes_id(b, 10);
    bytes_id(b, 0);
    end(b, r);
}
static void class_dump_head(struct bytes *b, uint64_t cid, uint64_t super)
{
    bytes_u1(b, 0x20);
    bytes_id(b, cid);
    bytes_u4(b, 1);
    bytes_id(b, super);
    bytes_id(b, 0); /* loader */
    bytes_id(b, 0); /* signers */
    bytes_id(b, 0); /* domain */
    bytes_id(b, 0);
    bytes_id(b, 0);
    bytes_u4(b, 0);
    bytes_u2(b, 0); /* constant pool */
}
static void instance(struct bytes *b, uint64_t oid, uint32_t tr, uint64_t cid, uint32_t value,
                     uint64_t next, unsigned extra)
{
    bytes_u1(b, 0x21);
    bytes_id(b, oid);
    bytes_u4(b, tr);
    bytes_id(b, cid);
    bytes_u4(b, 4 + b->id_size + extra);
    bytes_u4(b, value);
    bytes_id(b, next);
    for (unsigned i = 0; i < extra; i++)
        bytes_u1(b, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* The reference file and its variants                                                       */

enum variant {
    V_OK,
    V_OLD_HEAP_DUMP, /* one HEAP DUMP record, 1.0.1 */
    V_OUT_OF_ORDER,  /* instances before classes, subclass before superclass */
    V_UNKNOWN_TAG,
    V_BAD_LENGTH,
    V_ALLOC_LENGTH,
    V_UNDEF_STRING,
    V_UNDEF_FIELD_NAME,
    V_UNDEF_FRAME,
    V_UNDEF_TRACE,
    V_TRACE_ZERO,
    V_HEAP_TRACE,
    V_LOAD_CLASS_FWD_TRACE, /* like HotSpot: LOAD CLASS before the trace it names */
    V_LOAD_CLASS_NO_TRACE,
    V_CLASS_SERIAL,
    V_DUP_CLASS_SERIAL,
    V_ZERO_SERIAL,
    V_BETWEEN_SEGMENTS,
    V_MISSING_END,
    V_END_WITHOUT_SEGMENT,
    V_DANGLING,
    V_FIELD_SIZE,
    V_ZERO_LENGTH,
    V_TRUNCATED,
    V_TRUNCATED_HEADER,
    V_DUP_OBJECT,
    V_STRADDLE,
    V_NO_LOAD_CLASS,
    V_INSTANCE_NO_CLASS,
    V_ARRAY_NO_CLASS,
    V_BAD_SUBTAG,
    V_BAD_HEADER,
    V_BAD_IDSIZE,
    V_UNDEF_THREAD,
    V_THREAD_LATE,  /* like the JDK 5-8 agent: STACK TRACE before its thread's START THREAD */
    V_UNLOAD_EARLY, /* UNLOAD CLASS of Foo before its frames, its CLASS DUMP and sites */
    V_UNLOAD_LATE,  /* UNLOAD CLASS of Foo at the end: valid */
    V_UNLOAD_TWICE, /* the same serial unloaded twice */
    V_BAD_PRIM_TYPE,
};

enum {
    OBJ_CLS = 0x1000,
    FOO_CLS = 0x2000,
    ARR_CLS = 0x3000,
    I1 = 0x4000,
    I2 = 0x4100,
    THR = 0x9000,
    OARR = 0x5000,
    PINT = 0x6000,
    PCHAR = 0x6100,
};

static void unload_class(struct bytes *b, uint32_t serial)
{
    size_t r = rec(b, 0x03);
    bytes_u4(b, serial);
    end(b, r);
}

static void build(struct bytes *b, enum variant v, unsigned idsize)
{
    memset(b, 0, sizeof *b);
    b->id_size = idsize;
    if (v == V_BAD_HEADER)
        header(b, "JAVA PROFILE 9.9", idsize);
    else if (v == V_BAD_IDSIZE)
        header(b, "JAVA PROFILE 1.0.2", 6);
    else
        header(b, v == V_OLD_HEAP_DUMP ? "JAVA PROFILE 1.0.1" : "JAVA PROFILE 1.0.2", idsize);
    if (v == V_TRUNCATED_HEADER) {
        b->n -= 5;
        return;
    }
    static const char *const names[] = {
        NULL,         "java/lang/Object",
        "Foo",        "[Ljava/lang/Object;",
        "main",       "([Ljava/lang/String;)V",
        "Foo.java",   "value",
        "next",       "main-thread",
        "main-group", "count",
        "<init>",     "()V",
    };
    for (unsigned i = 1; i < sizeof names / sizeof *names; i++)
        string(b, i, names[i]);
    if (v == V_UNKNOWN_TAG) {
        size_t r = rec(b, 0x42);
        bytes_u4(b, 7);
        end(b, r);
    }
    if (v != V_LOAD_CLASS_FWD_TRACE && v != V_LOAD_CLASS_NO_TRACE)
        trace(b, 1, 0, 0, NULL);
    if (v == V_BAD_LENGTH) {
        size_t r = rec(b, 0x02);
        bytes_u4(b, 1);
        bytes_id(b, OBJ_CLS);
        bytes_u4(b, 1);
        bytes_id(b, 1);
        bytes_u1(b, 0); /* one byte too many */
        end(b, r);
    } else {
        load_class(b, v == V_ZERO_SERIAL ? 0 : 1, OBJ_CLS, v == V_LOAD_CLASS_NO_TRACE ? 77 : 1, 1);
    }
    load_class(b, 2, FOO_CLS, 1, v == V_UNDEF_STRING ? 99 : 2);
    load_class(b, v == V_DUP_CLASS_SERIAL ? 2 : 3, ARR_CLS, 1, 3);
    if (v == V_LOAD_CLASS_FWD_TRACE || v == V_LOAD_CLASS_NO_TRACE)
        trace(b, 1, 0, 0, NULL);
    if (v == V_UNLOAD_EARLY)
        unload_class(b, 2);
    if (v != V_THREAD_LATE)
        start_thread(b);
    frame(b, 0x51, 4, 5, 6, v == V_CLASS_SERIAL ? 9 : 2, 42);
    frame(b, 0x52, 12, 13, 6, 2, 7);
    frame(b, 0x53, 12, 13, 0, 1, -3);
    uint64_t f2[] = {0x52, v == V_UNDEF_FRAME ? 0x77 : 0x51};
    trace(b, 2, 1, 2, f2);
    uint64_t f3[] = {0x51};
    trace(b, 3, 1, 1, f3);
    uint64_t f4[] = {0x53};
    trace(b, 4, 1, 1, f4);
    {
        size_t r = rec(b, 0x0E); /* CONTROL SETTINGS */
        bytes_u4(b, 3);
        bytes_u2(b, 4);
        end(b, r);
    }
    {
        size_t r = rec(b, 0x06); /* ALLOC SITES */
        bytes_u2(b, 0);
        bytes_u4(b, 0);
        bytes_u4(b, 100);
        bytes_u4(b, 3);
        bytes_u8(b, 200);
        bytes_u8(b, 6);
        bytes_u4(b, v == V_ALLOC_LENGTH ? 3 : 2);
        bytes_u1(b, 2);
        bytes_u4(b, 3);
        bytes_u4(b, 3);
        bytes_u4(b, 36);
        bytes_u4(b, 1);
        bytes_u4(b, 72);
        bytes_u4(b, 2);
        bytes_u1(b, 0);
        bytes_u4(b, 2);
        bytes_u4(b, v == V_TRACE_ZERO ? 0 : 2);
        bytes_u4(b, 64);
        bytes_u4(b, 2);
        bytes_u4(b, 128);
        bytes_u4(b, 4);
        end(b, r);
    }
    if (v == V_ZERO_LENGTH) {
        size_t r = rec(b, 0x07);
        end(b, r);
    }
    {
        size_t r = rec(b, 0x07); /* HEAP SUMMARY */
        bytes_u4(b, 100);
        bytes_u4(b, 3);
        bytes_u8(b, 200);
        bytes_u8(b, 6);
        end(b, r);
    }
    {
        size_t r = rec(b, 0x0D); /* CPU SAMPLES */
        bytes_u4(b, 12);
        bytes_u4(b, 3);
        bytes_u4(b, 3);
        bytes_u4(b, 2);
        bytes_u4(b, 7);
        bytes_u4(b, v == V_UNDEF_TRACE ? 9 : 3);
        bytes_u4(b, 2);
        bytes_u4(b, 4);
        end(b, r);
    }

    if (v == V_THREAD_LATE)
        start_thread(b);

    /* heap dump: segment 1 = classes and roots (block c), segment 2 = objects (block o) */
    struct bytes c = {.id_size = idsize}, o = {.id_size = idsize}, foo = {.id_size = idsize};
    class_dump_head(&c, OBJ_CLS, 0);
    bytes_u2(&c, 0);
    bytes_u2(&c, 0);
    class_dump_head(&foo, FOO_CLS, OBJ_CLS);
    bytes_u2(&foo, 2); /* statics */
    bytes_id(&foo, 11);
    bytes_u1(&foo, 10);
    bytes_u4(&foo, 5);
    bytes_id(&foo, 8);
    bytes_u1(&foo, 2);
    bytes_id(&foo, I1);
    bytes_u2(&foo, 2); /* instance fields */
    bytes_id(&foo, 7);
    bytes_u1(&foo, 10);
    bytes_id(&foo, v == V_UNDEF_FIELD_NAME ? 98 : 8);
    bytes_u1(&foo, 2);
    if (v == V_OUT_OF_ORDER) { /* subclass before its superclass */
        struct bytes t = {.id_size = idsize};
        bytes_put(&t, foo.p, foo.n);
        bytes_put(&t, c.p, c.n);
        free(c.p);
        c = t;
    } else {
        bytes_put(&c, foo.p, foo.n);
    }
    free(foo.p);
    class_dump_head(&c, ARR_CLS, OBJ_CLS);
    bytes_u2(&c, 0);
    bytes_u2(&c, 0);
    if (v == V_NO_LOAD_CLASS) {
        class_dump_head(&c, 0x7000, OBJ_CLS);
        bytes_u2(&c, 0);
        bytes_u2(&c, 0);
    }
    bytes_u1(&c, 0x08); /* THREAD OBJECT */
    bytes_id(&c, THR);
    bytes_u4(&c, 1);
    bytes_u4(&c, 2);
    bytes_u1(&c, 0x03); /* JAVA FRAME */
    bytes_id(&c, I1);
    bytes_u4(&c, 1);
    bytes_u4(&c, 0);
    bytes_u1(&c, 0x01); /* JNI GLOBAL */
    bytes_id(&c, I1);
    bytes_id(&c, 0xdead);
    bytes_u1(&c, 0x05); /* STICKY CLASS */
    bytes_id(&c, OBJ_CLS);
    bytes_u1(&c, 0xFF); /* UNKNOWN */
    bytes_id(&c, OARR);
    bytes_u1(&c, 0x02); /* JNI LOCAL */
    bytes_id(&c, OARR);
    bytes_u4(&c, 1);
    bytes_u4(&c, 0);
    bytes_u1(&c, 0x04); /* NATIVE STACK */
    bytes_id(&c, OARR);
    bytes_u4(&c, v == V_UNDEF_THREAD ? 5 : 1);
    bytes_u1(&c, 0x06); /* THREAD BLOCK */
    bytes_id(&c, OARR);
    bytes_u4(&c, 1);
    bytes_u1(&c, 0x07); /* MONITOR USED */
    bytes_id(&c, I1);
    if (v == V_BAD_SUBTAG)
        bytes_u1(&c, 0x99);

    instance(&o, I1, v == V_HEAP_TRACE ? 9 : 2, FOO_CLS, 1, I2, 0);
    instance(&o, I2, 2, FOO_CLS, 2, 0, v == V_FIELD_SIZE ? 1 : 0);
    instance(&o, THR, 2, FOO_CLS, 3, I1, 0);
    if (v == V_DUP_OBJECT)
        instance(&o, I2, 2, FOO_CLS, 4, 0, 0);
    if (v == V_INSTANCE_NO_CLASS)
        instance(&o, 0x4300, 2, 0x8000, 3, 0, 0);
    bytes_u1(&o, 0x22); /* OBJECT ARRAY */
    bytes_id(&o, OARR);
    bytes_u4(&o, 2);
    bytes_u4(&o, 3);
    bytes_id(&o, v == V_ARRAY_NO_CLASS ? 0x8100 : ARR_CLS);
    bytes_id(&o, I1);
    bytes_id(&o, 0);
    bytes_id(&o, v == V_DANGLING ? 0x7777 : PINT);
    bytes_u1(&o, 0x23); /* PRIMITIVE ARRAY int[4] */
    bytes_id(&o, PINT);
    bytes_u4(&o, 2);
    bytes_u4(&o, 4);
    bytes_u1(&o, v == V_BAD_PRIM_TYPE ? 2 : 10);
    for (int i = 0; i < 4; i++)
        bytes_u4(&o, (uint32_t)i);
    bytes_u1(&o, 0x23); /* char[3] */
    bytes_id(&o, PCHAR);
    bytes_u4(&o, 2);
    bytes_u4(&o, 3);
    bytes_u1(&o, 5);
    bytes_u2(&o, 'a');
    bytes_u2(&o, 'b');
    bytes_u2(&o, 'c');

    size_t s1;
    if (v == V_OLD_HEAP_DUMP) {
        s1 = rec(b, 0x0C);
        bytes_put(b, c.p, c.n);
        bytes_put(b, o.p, o.n);
    } else if (v == V_OUT_OF_ORDER) { /* objects before classes */
        s1 = rec(b, 0x1C);
        bytes_put(b, o.p, o.n);
        end(b, s1);
        s1 = rec(b, 0x1C);
        bytes_put(b, c.p, c.n);
    } else {
        s1 = rec(b, 0x1C);
        bytes_put(b, c.p, c.n);
        if (v == V_STRADDLE) {
            /* the first part of an INSTANCE DUMP closes segment 1, the rest opens segment 2 */
            bytes_u1(b, 0x21);
            bytes_id(b, 0x4200);
            end(b, s1);
            s1 = rec(b, 0x1C);
            bytes_u4(b, 1);
            bytes_id(b, FOO_CLS);
            bytes_u4(b, 4 + b->id_size);
            bytes_u4(b, 0);
            bytes_id(b, 0);
        }
        end(b, s1);
        if (v == V_BETWEEN_SEGMENTS)
            string(b, 50, "between");
        s1 = rec(b, 0x1C);
        bytes_put(b, o.p, o.n);
    }
    free(c.p);
    free(o.p);
    end(b, s1);
    if (v == V_TRUNCATED) {
        b->n -= 7;
        return;
    }
    if (v == V_MISSING_END)
        return;
    if (v != V_OLD_HEAP_DUMP)
        end(b, rec(b, 0x2C));
    if (v == V_END_WITHOUT_SEGMENT)
        end(b, rec(b, 0x2C));
    {
        size_t r = rec(b, 0x0B); /* END THREAD */
        bytes_u4(b, 1);
        end(b, r);
    }
    if (v == V_UNLOAD_LATE || v == V_UNLOAD_TWICE)
        unload_class(b, 2);
    if (v == V_UNLOAD_TWICE)
        unload_class(b, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* Running the parser                                                                         */

struct seen {
    uint64_t first_off[HK_NKINDS];
    int n;
    bool verbose;
};

static void on_report(void *ctx, enum hprof_severity sev, enum hprof_kind kind, uint64_t off,
                      const char *msg)
{
    struct seen *s = ctx;
    if (s->first_off[kind] == 0)
        s->first_off[kind] = off + 1;
    s->n++;
    if (s->verbose)
        fprintf(stderr, "  %s %s @%llu: %s\n", sev == HPROF_ERROR ? "error" : "warning",
                hprof_kind_name(kind), (unsigned long long)off, msg);
}

static char *tmp_file(const void *data, size_t n)
{
    char *path = strdup("/tmp/test_hprof_read_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
    close(fd);
    return path;
}

static struct hprof_opts default_opts(void)
{
    return (struct hprof_opts){.top_n = 10, .max_reports = 0};
}

static void parse_buf(const struct bytes *b, const struct hprof_opts *o, struct hprof_summary *sum,
                      struct seen *seen)
{
    char *path = tmp_file(b->p, b->n);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    char err[256];
    memset(seen, 0, sizeof *seen);
    seen->verbose = getenv("VERBOSE") != NULL;
    int rc = hprof_parse_fd(fd, o, on_report, seen, sum, err, sizeof err);
    ck_assert_msg(rc == 0, "parse failed: %s", err);
    close(fd);
    unlink(path);
    free(path);
}

struct pipe_arg {
    int fd;
    const uint8_t *p;
    size_t n;
};

static void *pipe_writer(void *arg)
{
    struct pipe_arg *a = arg;
    size_t done = 0;
    while (done < a->n) {
        ssize_t w = write(a->fd, a->p + done, a->n - done > 65536 ? 65536 : a->n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    close(a->fd);
    return NULL;
}

/* Through a pipe: no file size, many short reads */
static void parse_pipe(const void *data, size_t n, const struct hprof_opts *o,
                       struct hprof_summary *sum, struct seen *seen)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    struct pipe_arg a = {.fd = fds[1], .p = data, .n = n};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, pipe_writer, &a), 0);
    char err[256];
    memset(seen, 0, sizeof *seen);
    seen->verbose = getenv("VERBOSE") != NULL;
    int rc = hprof_parse_fd(fds[0], o, on_report, seen, sum, err, sizeof err);
    ck_assert_msg(rc == 0, "parse failed: %s", err);
    pthread_join(t, NULL);
    close(fds[0]);
}

/* gzip the data as `members` independent members, like HotSpot and our writer */
static void gzip_members(const struct bytes *in, int members, struct bytes *out)
{
    memset(out, 0, sizeof *out);
    size_t chunk = in->n / (size_t)members + 1;
    for (size_t at = 0; at < in->n; at += chunk) {
        size_t len = in->n - at < chunk ? in->n - at : chunk;
        z_stream z;
        memset(&z, 0, sizeof z);
        ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        size_t bound = deflateBound(&z, len) + 64;
        uint8_t *buf = malloc(bound);
        z.next_in = in->p + at;
        z.avail_in = (uInt)len;
        z.next_out = buf;
        z.avail_out = (uInt)bound;
        ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
        bytes_put(out, buf, bound - z.avail_out);
        deflateEnd(&z);
        free(buf);
    }
}

static void check_valid_summary(const struct hprof_summary *S, unsigned idsize, bool old)
{
    ck_assert_uint_eq(S->errors, 0);
    ck_assert_uint_eq(S->warnings, 0);
    ck_assert_str_eq(S->version, old ? "JAVA PROFILE 1.0.1" : "JAVA PROFILE 1.0.2");
    ck_assert_uint_eq(S->id_size, idsize);
    ck_assert_uint_eq(S->timestamp_ms, 1700000000123ull);
    ck_assert_uint_eq(S->strings, 13);
    ck_assert_uint_eq(S->classes, 3);
    ck_assert_uint_eq(S->frames, 3);
    ck_assert_uint_eq(S->traces, 4);
    ck_assert_uint_eq(S->threads_started, 1);
    ck_assert_uint_eq(S->threads_ended, 1);
    ck_assert_uint_eq(S->tag_counts[0x01], 13);
    ck_assert_uint_eq(S->alloc_sites_records, 1);
    ck_assert_uint_eq(S->sites_live_bytes, 100);
    ck_assert_uint_eq(S->sites_alloc_instances, 6);
    ck_assert_uint_eq(S->nsites, 2);
    ck_assert_uint_eq(S->nsite_rows, 2);
    ck_assert_str_eq(S->site_rows[0].class_name, "Foo");
    ck_assert_uint_eq(S->site_rows[0].live_bytes, 64);
    ck_assert_uint_eq(S->site_rows[0].trace, 2);
    ck_assert_str_eq(S->site_rows[0].frame, "Foo.<init>(Foo.java:7)");
    ck_assert_str_eq(S->site_rows[1].class_name, "[Ljava/lang/Object;");
    ck_assert_uint_eq(S->site_rows[1].array_type, 2);
    ck_assert_str_eq(S->site_rows[1].frame, "Foo.main(Foo.java:42)");
    ck_assert_uint_eq(S->heap_summary_records, 1);
    ck_assert_uint_eq(S->hs_alloc_bytes, 200);
    ck_assert_uint_eq(S->cpu_samples_records, 1);
    ck_assert_uint_eq(S->cpu_total, 12);
    ck_assert_uint_eq(S->ncpu_rows, 3);
    ck_assert_uint_eq(S->cpu_rows[0].count, 7);
    ck_assert_uint_eq(S->cpu_rows[0].trace, 3);
    ck_assert_str_eq(S->cpu_rows[0].frame, "Foo.main(Foo.java:42)");
    ck_assert_str_eq(S->cpu_rows[2].frame, "java.lang.Object.<init>(Native Method)");
    ck_assert_uint_eq(S->control_depth, 4);
    ck_assert_uint_eq(S->ndumps, 1);
    const struct hprof_dump_summary *d = &S->dumps[0];
    ck_assert(d->complete);
    ck_assert_uint_eq(d->segmented, !old);
    ck_assert_uint_eq(d->segments, old ? 1 : 2);
    ck_assert_uint_eq(d->classes, 3);
    ck_assert_uint_eq(d->instances, 3);
    ck_assert_uint_eq(d->instance_bytes, 3 * (4 + idsize));
    ck_assert_uint_eq(d->object_arrays, 1);
    ck_assert_uint_eq(d->object_array_elements, 3);
    ck_assert_uint_eq(d->primitive_arrays, 2);
    ck_assert_uint_eq(d->primitive_array_bytes, 22);
    ck_assert_uint_eq(d->roots_total, 9);
    for (int r = 0; r < HR_NKINDS; r++)
        ck_assert_uint_eq(d->roots[r], 1);
    /* refs: Foo super, static next, Object[] super, 8 roots, 3 instances x1 (I2 has 0), 2 array */
    ck_assert_uint_eq(d->references, 3 + 9 + 2 + 2);
    ck_assert_uint_eq(d->dangling, 0);
    ck_assert_uint_ge(d->ntop, 4);
    ck_assert_str_eq(d->top[0].name, "Foo");
    ck_assert_uint_eq(d->top[0].count, 3);
    ck_assert_uint_eq(d->top[0].class_id, FOO_CLS);
}

START_TEST(valid_file)
{
    unsigned idsize = _i ? 8 : 4;
    struct bytes b;
    build(&b, V_OK, idsize);
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_buf(&b, &o, &S, &seen);
    check_valid_summary(&S, idsize, false);
    ck_assert_uint_eq(S.bytes, b.n);
    ck_assert(!S.gzip);
    hprof_summary_free(&S);

    /* the same through a pipe */
    parse_pipe(b.p, b.n, &o, &S, &seen);
    check_valid_summary(&S, idsize, false);
    hprof_summary_free(&S);

    /* and gzip, as 1 and as 3 independent members, from a file and from a pipe */
    for (int members = 1; members <= 3; members += 2) {
        struct bytes z;
        gzip_members(&b, members, &z);
        parse_buf(&z, &o, &S, &seen);
        check_valid_summary(&S, idsize, false);
        ck_assert(S.gzip);
        ck_assert_uint_eq(S.bytes, b.n);
        hprof_summary_free(&S);
        parse_pipe(z.p, z.n, &o, &S, &seen);
        check_valid_summary(&S, idsize, false);
        hprof_summary_free(&S);
        free(z.p);
    }
    free(b.p);
}
END_TEST

START_TEST(old_heap_dump_record)
{
    struct bytes b;
    build(&b, V_OLD_HEAP_DUMP, 8);
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_buf(&b, &o, &S, &seen);
    check_valid_summary(&S, 8, true);
    hprof_summary_free(&S);
    free(b.p);
}
END_TEST

START_TEST(out_of_order_classes)
{
    struct bytes b;
    build(&b, V_OUT_OF_ORDER, 8);
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_buf(&b, &o, &S, &seen);
    check_valid_summary(&S, 8, false);
    hprof_summary_free(&S);
    free(b.p);
}
END_TEST

/* One variant per violation: the kinds it must produce, and no other */
struct vcase {
    enum variant v;
    uint32_t kinds; /* bit per enum hprof_kind */
    bool warning;   /* the expected kinds are warnings, not errors */
    bool lenient, strict_threads;
    uint64_t allow_dangling;
};

#define K(k) (1u << (k))
static const struct vcase vcases[] = {
    {V_UNKNOWN_TAG, K(HK_UNKNOWN_TAG), false, false, false, 0},
    {V_BAD_LENGTH, K(HK_LENGTH) | K(HK_CLASS_SERIAL) | K(HK_CLASS_DUMP), false, false, false, 0},
    {V_ALLOC_LENGTH, K(HK_LENGTH), false, false, false, 0},
    {V_UNDEF_STRING, K(HK_STRING), false, false, false, 0},
    {V_UNDEF_FIELD_NAME, K(HK_STRING), false, false, false, 0},
    {V_UNDEF_FRAME, K(HK_FRAME), false, false, false, 0},
    {V_UNDEF_TRACE, K(HK_TRACE), false, false, false, 0},
    {V_TRACE_ZERO, K(HK_TRACE), false, false, false, 0},
    {V_HEAP_TRACE, K(HK_TRACE), false, false, false, 0},
    {V_HEAP_TRACE, 0, false, true, false, 0},
    {V_LOAD_CLASS_FWD_TRACE, K(HK_TRACE), false, false, false, 0},
    {V_LOAD_CLASS_FWD_TRACE, 0, false, true, false, 0},
    {V_LOAD_CLASS_NO_TRACE, K(HK_TRACE), false, true, false, 0},
    {V_CLASS_SERIAL, K(HK_CLASS_SERIAL), false, false, false, 0},
    {V_DUP_CLASS_SERIAL, K(HK_DUPLICATE) | K(HK_CLASS_DUMP) | K(HK_CLASS_SERIAL), false, false,
     false, 0},
    {V_ZERO_SERIAL, K(HK_ZERO_ID) | K(HK_CLASS_SERIAL) | K(HK_CLASS_DUMP), false, false, false, 0},
    {V_BETWEEN_SEGMENTS, K(HK_SEGMENT), false, false, false, 0},
    {V_MISSING_END, K(HK_SEGMENT), false, false, false, 0},
    {V_END_WITHOUT_SEGMENT, K(HK_SEGMENT), false, false, false, 0},
    {V_DANGLING, K(HK_DANGLING), false, false, false, 0},
    {V_DANGLING, K(HK_DANGLING), true, false, false, 1},
    {V_FIELD_SIZE, K(HK_FIELD_SIZE), false, false, false, 0},
    {V_ZERO_LENGTH, K(HK_ZERO_LENGTH), false, false, false, 0},
    {V_TRUNCATED, K(HK_TRUNCATED) | K(HK_SEGMENT), false, false, false, 0},
    {V_TRUNCATED_HEADER, K(HK_TRUNCATED), false, false, false, 0},
    {V_DUP_OBJECT, K(HK_DUP_OBJECT), false, false, false, 0},
    {V_STRADDLE, K(HK_STRADDLE), false, false, false, 0},
    {V_NO_LOAD_CLASS, K(HK_CLASS_DUMP), false, false, false, 0},
    {V_INSTANCE_NO_CLASS, K(HK_INSTANCE), false, false, false, 0},
    {V_ARRAY_NO_CLASS, K(HK_INSTANCE), false, false, false, 0},
    {V_BAD_SUBTAG, K(HK_SUBRECORD), false, false, false, 0},
    {V_BAD_PRIM_TYPE, K(HK_SUBRECORD), false, false, false, 0},
    {V_BAD_HEADER, K(HK_HEADER), false, false, false, 0},
    {V_BAD_IDSIZE, K(HK_HEADER), false, false, false, 0},
    {V_UNDEF_THREAD, K(HK_THREAD), true, false, false, 0},
    {V_UNDEF_THREAD, K(HK_THREAD), false, false, true, 0},
    {V_THREAD_LATE, 0, false, false, true, 0},
    {V_UNLOAD_EARLY, K(HK_CLASS_SERIAL) | K(HK_CLASS_DUMP), false, false, false, 0},
    {V_UNLOAD_LATE, 0, false, false, false, 0},
    {V_UNLOAD_TWICE, K(HK_CLASS_SERIAL), false, false, false, 0},
};

static void check_case(const struct vcase *c, const struct hprof_summary *S, const char *how)
{
    for (int k = 0; k < HK_NKINDS; k++) {
        bool want = (c->kinds >> k) & 1;
        ck_assert_msg(want == (S->kind_counts[k] > 0),
                      "variant %d (%s): kind %s count %llu, expected %s", (int)c->v, how,
                      hprof_kind_name((enum hprof_kind)k), (unsigned long long)S->kind_counts[k],
                      want ? "some" : "none");
    }
    if (c->kinds && !c->warning) {
        ck_assert_uint_gt(S->errors, 0);
    } else {
        ck_assert_msg(S->errors == 0, "variant %d (%s): %llu errors", (int)c->v, how,
                      (unsigned long long)S->errors);
        ck_assert_uint_eq(S->warnings > 0, c->kinds != 0);
    }
}

START_TEST(violations)
{
    const struct vcase *c = &vcases[_i];
    struct hprof_opts o = default_opts();
    o.lenient_traces = c->lenient;
    o.strict_threads = c->strict_threads;
    o.allow_dangling = c->allow_dangling;
    for (unsigned idsize = 4; idsize <= 8; idsize += 4) {
        struct bytes b;
        build(&b, c->v, idsize);
        struct hprof_summary S;
        struct seen seen;
        parse_buf(&b, &o, &S, &seen);
        check_case(c, &S, "file");
        hprof_summary_free(&S);
        parse_pipe(b.p, b.n, &o, &S, &seen);
        check_case(c, &S, "pipe");
        hprof_summary_free(&S);
        free(b.p);
    }
}
END_TEST

/* Offsets in the messages point at the offending record */
START_TEST(violation_offsets)
{
    struct bytes b;
    build(&b, V_UNKNOWN_TAG, 8);
    /* the unknown record follows the header (31 bytes) and 13 STRING records */
    size_t at = 0, off = 31;
    for (int i = 0; i < 13; i++) {
        uint32_t len = (uint32_t)b.p[off + 5] << 24 | (uint32_t)b.p[off + 6] << 16 |
                       (uint32_t)b.p[off + 7] << 8 | b.p[off + 8];
        off += 9 + len;
    }
    at = off;
    ck_assert_uint_eq(b.p[at], 0x42);
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_buf(&b, &o, &S, &seen);
    ck_assert_uint_eq(seen.first_off[HK_UNKNOWN_TAG], at + 1);
    hprof_summary_free(&S);
    free(b.p);
}
END_TEST

START_TEST(truncated_record_length)
{
    /* a record whose length runs past the end of a regular file is caught before reading */
    struct bytes b;
    build(&b, V_OK, 8);
    size_t r = rec(&b, 0x01);
    bytes_id(&b, 77);
    bytes_put(&b, "abc", 3);
    end(&b, r);
    b.p[r + 3] = 0xff; /* length 255 + ... */
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_buf(&b, &o, &S, &seen);
    ck_assert_uint_eq(S.kind_counts[HK_TRUNCATED], 1);
    ck_assert_uint_eq(seen.first_off[HK_TRUNCATED], r - 5 + 1);
    ck_assert_uint_eq(S.errors, 1);
    hprof_summary_free(&S);
    parse_pipe(b.p, b.n, &o, &S, &seen);
    ck_assert_uint_eq(S.kind_counts[HK_TRUNCATED], 1);
    ck_assert_uint_eq(S.errors, 1);
    hprof_summary_free(&S);
    free(b.p);
}
END_TEST

START_TEST(gzip_errors)
{
    struct bytes b, z;
    build(&b, V_OK, 8);
    gzip_members(&b, 2, &z);
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    /* truncated compressed data */
    struct bytes t = z;
    t.n = z.n - 20;
    parse_buf(&t, &o, &S, &seen);
    ck_assert_uint_gt(S.kind_counts[HK_GZIP], 0);
    ck_assert_uint_gt(S.errors, 0);
    hprof_summary_free(&S);
    /* corrupt compressed data */
    z.p[z.n / 2] ^= 0x55;
    z.p[z.n / 2 + 1] ^= 0xaa;
    parse_buf(&z, &o, &S, &seen);
    ck_assert_uint_gt(S.errors, 0);
    hprof_summary_free(&S);
    /* garbage after the last member */
    z.p[z.n / 2] ^= 0x55;
    z.p[z.n / 2 + 1] ^= 0xaa;
    bytes_put(&z, "garbage!", 8);
    parse_buf(&z, &o, &S, &seen);
    ck_assert_uint_eq(S.kind_counts[HK_GZIP], 1);
    hprof_summary_free(&S);
    free(z.p);
    free(b.p);
}
END_TEST

/* A big object array (more than one read chunk) of forward references, read through a pipe:
   exercises buffer refills, the pending-reference compaction and the dangling counts. */
START_TEST(big_forward_references)
{
    const uint32_t n = 1100000;
    struct bytes b;
    memset(&b, 0, sizeof b);
    b.id_size = 8;
    header(&b, "JAVA PROFILE 1.0.2", 8);
    string(&b, 1, "java/lang/Object");
    string(&b, 2, "[Ljava/lang/Object;");
    trace(&b, 1, 0, 0, NULL);
    load_class(&b, 1, OBJ_CLS, 1, 1);
    load_class(&b, 2, ARR_CLS, 1, 2);
    size_t s = rec(&b, 0x1C);
    class_dump_head(&b, OBJ_CLS, 0);
    bytes_u2(&b, 0);
    bytes_u2(&b, 0);
    class_dump_head(&b, ARR_CLS, OBJ_CLS);
    bytes_u2(&b, 0);
    bytes_u2(&b, 0);
    bytes_u1(&b, 0x22);
    bytes_id(&b, 0x10);
    bytes_u4(&b, 1);
    bytes_u4(&b, n);
    bytes_id(&b, ARR_CLS);
    for (uint32_t i = 0; i < n; i++) /* every 100000th target is never dumped; two refs each */
        bytes_id(&b, 0x100000 + (uint64_t)(i % 1000000) * 8 + (i % 100000 == 7 ? 4 : 0));
    end(&b, s);
    s = rec(&b, 0x1C);
    for (uint32_t i = 0; i < 1000000; i++) {
        bytes_u1(&b, 0x23);
        bytes_id(&b, 0x100000 + (uint64_t)i * 8);
        bytes_u4(&b, 1);
        bytes_u4(&b, 0);
        bytes_u1(&b, 8);
    }
    end(&b, s);
    end(&b, rec(&b, 0x2C));
    struct hprof_opts o = default_opts();
    struct hprof_summary S;
    struct seen seen;
    parse_pipe(b.p, b.n, &o, &S, &seen);
    ck_assert_uint_eq(S.ndumps, 1);
    ck_assert_uint_eq(S.dumps[0].object_array_elements, n);
    ck_assert_uint_eq(S.dumps[0].primitive_arrays, 1000000);
    ck_assert_uint_eq(S.dumps[0].references, n + 1);
    /* i % 100000 == 7 for i < 1100000: 11 references to 10 distinct ids... i=1000007 maps to
       the same target as i=7 */
    ck_assert_uint_eq(S.dumps[0].dangling, 11);
    ck_assert_uint_eq(S.kind_counts[HK_DANGLING], 1);
    ck_assert_uint_eq(S.errors, 1);
    hprof_summary_free(&S);
    o.allow_dangling = 11;
    parse_buf(&b, &o, &S, &seen);
    ck_assert_uint_eq(S.errors, 0);
    ck_assert_uint_eq(S.warnings, 1);
    hprof_summary_free(&S);
    free(b.p);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Command line                                                                               */

static int run_cli(char **out_text, int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "hprof-read";
    for (int i = 1; i <= argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    argv[argc + 1] = NULL;
    FILE *out = tmpfile(), *err = tmpfile();
    ck_assert_ptr_nonnull(out);
    int rc = hprof_read_main(argc + 1, argv, out, err);
    long n = ftell(out);
    rewind(out);
    char *text = calloc(1, (size_t)n + 1);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, out), (size_t)n);
    fclose(out);
    fclose(err);
    if (out_text)
        *out_text = text;
    else
        free(text);
    return rc;
}

START_TEST(cli)
{
    struct bytes b;
    build(&b, V_OK, 8);
    char *ok = tmp_file(b.p, b.n);
    free(b.p);
    build(&b, V_DANGLING, 8);
    char *bad = tmp_file(b.p, b.n);
    free(b.p);
    char *text;

    ck_assert_int_eq(run_cli(&text, 1, ok), 0);
    ck_assert_ptr_nonnull(strstr(text, "JAVA PROFILE 1.0.2"));
    ck_assert_ptr_nonnull(strstr(text, "Foo.<init>(Foo.java:7)"));
    ck_assert_ptr_nonnull(strstr(text, "0 errors, 0 warnings"));
    free(text);

    ck_assert_int_eq(run_cli(&text, 4, "--json", "--top", "1", ok), 0);
    ck_assert_ptr_nonnull(strstr(text, "\"format\":\"JAVA PROFILE 1.0.2\""));
    ck_assert_ptr_nonnull(strstr(text, "\"id_size\":8"));
    ck_assert_ptr_nonnull(strstr(text, "\"errors\":0,\"warnings\":0"));
    ck_assert_ptr_nonnull(strstr(text,
                                 "\"top_classes\":[{\"class\":\"Foo\",\"class_id\":\"0x2000\","
                                 "\"count\":3,"));
    ck_assert_ptr_nonnull(strstr(text, "\"frame\":\"Foo.main(Foo.java:42)\"}]"));
    ck_assert_ptr_nonnull(strstr(text, "\"roots\":{\"unknown\":1,\"jni_global\":1,"));
    ck_assert_ptr_nonnull(strstr(text, "\"violations\":[]"));
    ck_assert_ptr_nonnull(strstr(text, "\"allocation_traces\":[]")); /* only with --traces */
    free(text);

    /* --traces: every instance and array of the dump names trace 2 */
    ck_assert_int_eq(run_cli(&text, 3, "--json", "--traces", ok), 0);
    ck_assert_ptr_nonnull(strstr(text, "\"allocation_traces\":[{\"trace\":2,\"class\":\"Foo\","
                                       "\"count\":3,"));
    ck_assert_ptr_nonnull(strstr(text,
                                 "{\"trace\":2,\"class\":\"char[]\",\"count\":1,\"bytes\":6},"
                                 "{\"trace\":2,\"class\":\"int[]\",\"count\":1,\"bytes\":16}]"));
    free(text);
    ck_assert_int_eq(run_cli(&text, 2, "--traces", ok), 0);
    ck_assert_ptr_nonnull(strstr(text, "allocation traces:"));
    ck_assert_ptr_nonnull(strstr(text, "  int[]\n"));
    free(text);

    ck_assert_int_eq(run_cli(&text, 2, "--quiet", bad), 1);
    ck_assert_str_eq(text, "");
    free(text);
    ck_assert_int_eq(run_cli(&text, 2, "--json", bad), 1);
    ck_assert_ptr_nonnull(strstr(text, "\"kind\":\"dangling\""));
    ck_assert_ptr_nonnull(strstr(text, "\"dangling\":1"));
    free(text);
    ck_assert_int_eq(run_cli(NULL, 4, "-q", "--allow-dangling", "1", bad), 0);

    ck_assert_int_eq(run_cli(NULL, 0), 2);
    ck_assert_int_eq(run_cli(NULL, 1, "/nonexistent/file.hprof"), 2);
    ck_assert_int_eq(run_cli(NULL, 2, "--bogus", ok), 2);
    ck_assert_int_eq(run_cli(NULL, 3, "--top", "x", ok), 2);
    ck_assert_int_eq(run_cli(NULL, 2, ok, bad), 2);
    ck_assert_int_eq(run_cli(&text, 1, "--help"), 0);
    ck_assert_ptr_nonnull(strstr(text, "usage: hprof-read"));
    free(text);

    unlink(ok);
    unlink(bad);
    free(ok);
    free(bad);
}
END_TEST

START_TEST(json_strings)
{
    /* class names with modified UTF-8 (C0 80 for NUL, a surrogate pair), quotes, controls, and
       bytes that are not UTF-8 (FF, an overlong C1 81) */
    struct bytes b;
    memset(&b, 0, sizeof b);
    b.id_size = 8;
    header(&b, "JAVA PROFILE 1.0.2", 8);
    string(&b, 1, "A\"\\\t\xC0\x80\xED\xA0\xBD\xED\xB8\x80\xC3\xA9\xFF\xC1\x81");
    trace(&b, 1, 0, 0, NULL);
    load_class(&b, 1, OBJ_CLS, 1, 1);
    size_t s = rec(&b, 0x1C);
    class_dump_head(&b, OBJ_CLS, 0);
    bytes_u2(&b, 0);
    bytes_u2(&b, 0);
    bytes_u1(&b, 0x21);
    bytes_id(&b, 0x10);
    bytes_u4(&b, 1);
    bytes_id(&b, OBJ_CLS);
    bytes_u4(&b, 0);
    end(&b, s);
    end(&b, rec(&b, 0x2C));
    char *path = tmp_file(b.p, b.n);
    char *text;
    ck_assert_int_eq(run_cli(&text, 2, "--json", path), 0);
    ck_assert_ptr_nonnull(strstr(
        text, "\"class\":\"A\\\"\\\\\\u0009\\u0000\\ud83d\\ude00\xC3\xA9\\ufffd\\ufffd\\ufffd\""));
    free(text);
    unlink(path);
    free(path);
    free(b.p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hprof_read");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, valid_file, 0, 2);
    tcase_add_test(tc, old_heap_dump_record);
    tcase_add_test(tc, out_of_order_classes);
    tcase_add_loop_test(tc, violations, 0, (int)(sizeof vcases / sizeof *vcases));
    tcase_add_test(tc, violation_offsets);
    tcase_add_test(tc, truncated_record_length);
    tcase_add_test(tc, gzip_errors);
    tcase_add_test(tc, big_forward_references);
    tcase_add_test(tc, cli);
    tcase_add_test(tc, json_strings);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

/* Check tests of the OpenJ9 writers (writer/phd_writer.c, writer/classic_writer.c) judged by
 * tools/phd-read (compiled in, as phd_read_main), and of phd-read itself on hand-made files:
 * every record kind, class cache, size codes, gaps both ways, many references, array lengths
 * at the size-code edges, hashes, and the rules a file can break. */
#include "check_helpers.h"
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink.h"
#include "writer.h"

int phd_read_main(int argc, char **argv);

#define CLASS_ID(serial) ((UINT64_C(0xFFFFFF) << 40) | (serial))
#define ADDR_ID(a) ((UINT64_C(1) << 63) | (a))

/* ---- running the reader -------------------------------------------------------------- */

static char out[1 << 20];

/* Writes data to a file, runs phd-read --json [extra] on it; stdout lands in out. */
static int read_phd(const uint8_t *data, size_t len, const char *extra1, const char *extra2)
{
    char path[] = "/tmp/test_phd.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
    char outpath[] = "/tmp/test_phd_out.XXXXXX";
    int ofd = mkstemp(outpath);
    ck_assert_int_ge(ofd, 0);
    fflush(stdout);
    int saved = dup(1);
    dup2(ofd, 1);
    char *argv[6];
    int argc = 0;
    argv[argc++] = "phd-read";
    argv[argc++] = "--json";
    if (extra1)
        argv[argc++] = (char *)extra1;
    if (extra2)
        argv[argc++] = (char *)extra2;
    argv[argc++] = path;
    argv[argc] = NULL;
    optind = 0; /* getopt starts over */
    int rc = phd_read_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(ofd, 0, SEEK_SET);
    ssize_t n = read(ofd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(ofd);
    unlink(outpath);
    unlink(path);
    return rc;
}

static uint64_t json_u64(const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(out, k);
    ck_assert_msg(p != NULL, "no %s in %s", key, out);
    return strtoull(p + strlen(k), NULL, 10);
}

static uint64_t class_count(const char *name)
{
    char k[256];
    snprintf(k, sizeof k, "\"%s\":{\"count\":", name);
    const char *p = strstr(out, k);
    return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* ---- writing ------------------------------------------------------------------------- */

struct dump {
    struct hprof_writer *w;
    uint8_t *data;
    size_t len;
};

static struct hprof_writer *open_writer(bool classic)
{
    struct hprof_sink *s = sink_open_memory();
    ck_assert_ptr_nonnull(s);
    struct hprof_writer *w = classic ? classic_writer_new(s) : phd_writer_new(s);
    ck_assert_ptr_nonnull(w);
    w->ops->begin(w);
    return w;
}

/* Copies what the writer wrote, then closes it. */
static size_t finish(struct hprof_writer *w, uint8_t **data)
{
    w->ops->flush(w);
    size_t len;
    const uint8_t *d = sink_memory_data(w->sink, &len);
    *data = malloc(len ? len : 1);
    memcpy(*data, d, len);
    w->ops->close(w);
    return len;
}

/* A writer with its heap dump begun, and its end: the dump ended, the bytes copied, closed. */
static struct hprof_writer *begin_dump(bool classic)
{
    struct hprof_writer *w = open_writer(classic);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    return w;
}

static size_t end_dump(struct hprof_writer *w, uint8_t **data)
{
    w->ops->heap_dump_end(w, NULL);
    return finish(w, data);
}

static void class_rec(struct hprof_writer *w, uint32_t serial, uint32_t super, const char *name,
                      uint64_t size)
{
    struct hprof_static_field st = {{0, "s", HPROF_TYPE_OBJECT}, {.obj = 0}};
    if (serial == 2)
        st.value.obj = ADDR_ID(0x1000); /* a static reference */
    struct hprof_class_dump c = {
        .class_id = CLASS_ID(serial),
        .super_id = super ? CLASS_ID(super) : 0,
        .heap_instance_size = size,
        .class_object_size = 96,
        .name = name,
        .nstatics = 1,
        .statics = &st,
    };
    w->ops->class_dump(w, &c);
}

/* An instance of class serial with nrefs object fields pointing at refs[] (0 = null). */
static void instance(struct hprof_writer *w, hprof_id id, uint32_t serial, const char *cname,
                     size_t nrefs, const hprof_id *refs)
{
    struct hprof_field fields[40];
    union hprof_value values[40];
    size_t n = 0;
    fields[n] = (struct hprof_field){0, "i", HPROF_TYPE_INT};
    values[n++].i = 7;
    for (size_t k = 0; k < nrefs; k++) {
        fields[n] = (struct hprof_field){0, "r", HPROF_TYPE_OBJECT};
        values[n++].obj = refs[k];
    }
    struct hprof_instance_dump o = {.object_id = id,
                                    .class_id = CLASS_ID(serial),
                                    .class_name = cname,
                                    .size = 24,
                                    .nvalues = n,
                                    .fields = fields,
                                    .values = values};
    w->ops->instance_dump(w, &o);
}

static void prim_array(struct hprof_writer *w, hprof_id id, enum hprof_basic_type t, uint32_t n)
{
    static uint8_t zeros[8 * 70000];
    struct hprof_prim_array_dump a = {
        .array_id = id, .elem_type = t, .size = 16 + n * 8, .nelems = n, .elems = zeros};
    w->ops->prim_array_dump(w, &a);
}

static void obj_array(struct hprof_writer *w, hprof_id id, uint32_t n, hprof_id every)
{
    hprof_id *e = calloc(n ? n : 1, sizeof *e);
    for (uint32_t i = 0; i < n; i += 3)
        e[i] = every; /* two of three null */
    struct hprof_obj_array_dump a = {.array_id = id,
                                     .class_id = CLASS_ID(4),
                                     .class_name = "A[]",
                                     .elem_class_id = CLASS_ID(2),
                                     .size = 16 + 4 * n,
                                     .nelems = n,
                                     .elems = e};
    w->ops->obj_array_dump(w, &a);
    free(e);
}

/* The classes of every dump below: Object (1), A (2, extends Object), B (3), A[] (4). */
static void classes(struct hprof_writer *w)
{
    class_rec(w, 1, 0, "java.lang.Object", 16);
    class_rec(w, 2, 1, "A", 24);
    class_rec(w, 3, 1, "p.q.B", 32);
    class_rec(w, 4, 1, "A[]", 0);
}

/* ---- PHD writer against the reader ---------------------------------------------------- */

START_TEST(header_bytes_exact)
{
    struct hprof_writer *w = begin_dump(false);
    uint8_t *d;
    size_t len = end_dump(w, &d);
    static const char ver[] = "hprof agent (JVMTI), PHD writer 1";
    uint8_t want[128];
    size_t k = 0;
    want[k++] = 0;
    want[k++] = 18;
    memcpy(want + k, "portable heap dump", 18);
    k += 18;
    const uint8_t v6f5[] = {0, 0, 0, 6, 0, 0, 0, 5, 1, 4, 0, sizeof ver - 1};
    memcpy(want + k, v6f5, sizeof v6f5);
    k += sizeof v6f5;
    memcpy(want + k, ver, sizeof ver - 1);
    k += sizeof ver - 1;
    want[k++] = 2; /* end of header */
    want[k++] = 2; /* start of dump */
    want[k++] = 3; /* end of dump */
    ck_assert_uint_eq(len, k);
    ck_assert_mem_eq(d, want, k);
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("records"), 0);
    free(d);
}
END_TEST

START_TEST(records_and_cache_bytes)
{
    /* class 5 at 2^61 + 40, then two objects of it: the first far away (long record, fills
     * class-cache slot 0), the next 2 units on (short record from slot 0) */
    struct hprof_writer *w = begin_dump(false);
    class_rec(w, 5, 0, "A", 24);
    hprof_id none[1] = {0};
    instance(w, ADDR_ID(0x100), 5, "A", 0, none);
    hprof_id r1[1] = {ADDR_ID(0x108)};
    instance(w, ADDR_ID(0x108), 5, "A", 1, r1); /* refers to itself: delta 0 */
    uint8_t *d;
    size_t len = end_dump(w, &d);
    size_t off = 67; /* the header */
    ck_assert_uint_eq(d[off], 6);
    ck_assert_uint_eq(d[off + 1], 0xC0); /* gap needs 8 bytes, no refs */
    off += 1 + 1 + 8 + 4 + 8 + 3 + 4;
    ck_assert_uint_eq(d[off], 4);
    ck_assert_uint_eq(d[off + 1], 0xC1); /* GG = 3, RR = 0, informational bit */
    size_t s = off + 2 + 8 + 8 + 4;
    ck_assert_uint_eq(d[s], 0x80 | 1 << 3); /* slot 0, 1 ref, s1 gap, s1 refs */
    ck_assert_uint_eq(d[s + 1], 2);
    ck_assert_uint_eq(d[s + 2], 0);
    ck_assert_uint_eq(d[s + 3], 3);
    ck_assert_uint_eq(len, s + 4);
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("objects"), 2);
    ck_assert_uint_eq(json_u64("heap_bytes"), 48);
    free(d);
}
END_TEST

START_TEST(every_shape)
{
    struct hprof_writer *w = begin_dump(false);
    hprof_id refs[20];
    uint64_t a = 0x10000;
    size_t nobj = 0;
    /* 0..12 references, near and far targets, nulls in between */
    for (size_t n = 0; n <= 12; n++) {
        for (size_t k = 0; k < n; k++)
            refs[k] = k % 4 == 3 ? 0 : k % 2 ? ADDR_ID(0x7f0000000000 + 8 * k) : ADDR_ID(0x1000);
        instance(w, ADDR_ID(a), n % 2 ? 2 : 3, n % 2 ? "A" : "p.q.B", n, refs);
        a += 8;
        nobj++;
    }
    /* big gaps forward and back, tags and addresses mixed */
    const hprof_id far[] = {ADDR_ID(0x7f0000000000),
                            ADDR_ID(0x1000),
                            5,
                            ADDR_ID(0x7f0000000008),
                            ADDR_ID(0x1000 + 8 * 40000),
                            6,
                            ADDR_ID(0x1008)};
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        hprof_id r[3] = {far[(i + 1) % 7], CLASS_ID(3), 0};
        instance(w, far[i], 2, "A", 3, r);
        nobj++;
    }
    /* gaps and references of exactly +-128 and +-32768 units (the size-code edges) */
    hprof_id e2[4] = {ADDR_ID(0x300000 + 512), ADDR_ID(0x300000 - 512), ADDR_ID(0x300000 + 131072),
                      ADDR_ID(0x300000 - 131072)};
    instance(w, ADDR_ID(0x300000), 2, "A", 4, e2);
    instance(w, ADDR_ID(0x300000 + 512), 2, "A", 0, e2);          /* gap +128 */
    instance(w, ADDR_ID(0x300000 + 512 - 1024), 2, "A", 0, e2);   /* gap -256 */
    instance(w, ADDR_ID(0x300000 - 512 + 131072), 2, "A", 0, e2); /* gap +32768 */
    instance(w, ADDR_ID(0x300000 + 131072), 2, "A", 0, e2);
    instance(w, ADDR_ID(0x300000 - 131072), 2, "A", 0, e2);
    nobj += 6;
    /* primitive arrays at the length-code edges */
    static const uint32_t lens[] = {0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 70000};
    static const enum hprof_basic_type types[] = {
        HPROF_TYPE_BOOLEAN, HPROF_TYPE_CHAR,  HPROF_TYPE_FLOAT, HPROF_TYPE_DOUBLE,
        HPROF_TYPE_BYTE,    HPROF_TYPE_SHORT, HPROF_TYPE_INT,   HPROF_TYPE_LONG};
    hprof_id id = 100;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        prim_array(w, id++, types[i % 8], lens[i]);
    /* object arrays */
    static const uint32_t olens[] = {0, 1, 128, 255, 32768, 65535};
    for (size_t i = 0; i < sizeof olens / sizeof olens[0]; i++)
        obj_array(w, id++, olens[i], ADDR_ID(0x1000));
    /* the targets */
    hprof_id none[1] = {0};
    instance(w, ADDR_ID(0x7f0000000000 + 8 * 5), 3, "p.q.B", 0, none);
    instance(w, ADDR_ID(0x7f0000000000 + 8 * 9), 3, "p.q.B", 0, none);
    instance(w, ADDR_ID(0x7f0000000000 + 8 * 11), 3, "p.q.B", 0, none);
    nobj += 3;
    classes(w);
    w->ops->heap_dump_end(w, NULL);
    /* a second dump is not written: one dump per file */
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    instance(w, ADDR_ID(0x9990), 2, "A", 0, none);
    uint8_t *d;
    size_t len = end_dump(w, &d);
    ck_assert_int_eq(read_phd(d, len, "--refs", "A"), 0);
    ck_assert_uint_eq(json_u64("errors"), 0);
    ck_assert_uint_eq(json_u64("warnings"), 0);
    ck_assert_uint_eq(json_u64("dangling"), 0);
    ck_assert_uint_eq(json_u64("ibm_hidden_references"), 0);
    ck_assert_uint_eq(json_u64("objects"), nobj);
    ck_assert_uint_eq(json_u64("classes"), 4);
    ck_assert_uint_eq(json_u64("primitive_arrays"), 11);
    ck_assert_uint_eq(json_u64("object_arrays"), 6);
    ck_assert_uint_eq(class_count("A"), 6 + 7 + 6);
    ck_assert_uint_eq(class_count("p/q/B"), 7 + 3);
    ck_assert_uint_eq(class_count("[LA;"), 6);
    ck_assert_uint_eq(class_count("[Z"), 2);
    ck_assert_uint_eq(class_count("[J"), 1);
    /* references: objects (non-null ones), arrays (every third element), class statics */
    uint64_t refs_total = 0;
    for (size_t n = 0; n <= 12; n++)
        for (size_t k = 0; k < n; k++)
            refs_total += k % 4 != 3;
    refs_total += 7 * 2 + 4;
    for (size_t i = 0; i < sizeof olens / sizeof olens[0]; i++)
        refs_total += (olens[i] + 2) / 3;
    refs_total += 1; /* A's static */
    ck_assert_uint_eq(json_u64("references"), refs_total);
    /* the object with 7 refs: 0x1000, far+8, 0x1000, null, 0x1000, far+40 (a B), 0x1000 */
    ck_assert_ptr_nonnull(strstr(out, "\"A A A A A p/q/B\""));
    /* class references appear as "class <name>" */
    ck_assert_ptr_nonnull(strstr(out, "\"A class p/q/B\""));
    free(d);
}
END_TEST

START_TEST(obj_array_full_of_far_references)
{
    /* every element set and 8-byte deltas: the largest record per element there is */
    struct hprof_writer *w = begin_dump(false);
    classes(w);
    hprof_id none[1] = {0};
    instance(w, ADDR_ID(0x1000), 2, "A", 0, none);
    for (uint32_t n = 509; n < 520; n++) {
        hprof_id *e = malloc(n * sizeof *e);
        for (uint32_t i = 0; i < n; i++)
            e[i] = ADDR_ID(0x1000); /* the array lives among the tags: 2^60 away */
        struct hprof_obj_array_dump a = {.array_id = 1000 + n,
                                         .class_id = CLASS_ID(4),
                                         .class_name = "A[]",
                                         .elem_class_id = CLASS_ID(2),
                                         .size = 16 + 4 * n,
                                         .nelems = n,
                                         .elems = e};
        w->ops->obj_array_dump(w, &a);
        free(e);
    }
    uint8_t *d;
    size_t len = end_dump(w, &d);
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("object_arrays"), 11);
    ck_assert_uint_eq(json_u64("references"), 1 + (509 + 519) * 11 / 2);
    free(d);
}
END_TEST

START_TEST(class_first_reference_moved)
{
    /* IBM's reader drops a first reference equal to the class: the writer puts another first */
    struct hprof_writer *w = begin_dump(false);
    classes(w);
    hprof_id r[2] = {CLASS_ID(2), ADDR_ID(0x1000)};
    instance(w, ADDR_ID(0x1000), 2, "A", 2, r);
    uint8_t *d;
    size_t len = end_dump(w, &d);
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("ibm_hidden_references"), 0);
    ck_assert_uint_eq(json_u64("references"), 3);
    free(d);
}
END_TEST

/* No reference IBM's reader would drop: when every reference of a record is to its class,
 * one more copy goes first for the reader to drop, so it still lists them all; a record with
 * other references never starts with the class. Checked on every record kind that has
 * references: short (cached class), medium, long instances, and an object array. */
START_TEST(no_reference_is_hidden_from_ibm_reader)
{
    struct hprof_writer *w = begin_dump(false);
    classes(w);
    hprof_id one[1] = {CLASS_ID(2)};
    instance(w, ADDR_ID(0x1000), 2, "A", 1, one); /* medium (fills the cache) */
    instance(w, ADDR_ID(0x1100), 2, "A", 1, one); /* short: class from the cache */
    hprof_id three[3] = {CLASS_ID(2), CLASS_ID(2), CLASS_ID(2)};
    instance(w, ADDR_ID(0x1200), 2, "A", 3, three); /* 4 stored: medium */
    hprof_id nine[9];
    for (int i = 0; i < 9; i++)
        nine[i] = CLASS_ID(2);
    instance(w, ADDR_ID(0x1300), 2, "A", 9, nine); /* long */
    hprof_id mixed[4] = {CLASS_ID(2), CLASS_ID(2), ADDR_ID(0x1000), CLASS_ID(2)};
    instance(w, ADDR_ID(0x1400), 2, "A", 4, mixed); /* reordered, no copy */
    obj_array(w, ADDR_ID(0x1500), 1, CLASS_ID(2));  /* A[1] holding A.class */
    uint8_t *d;
    size_t len = end_dump(w, &d);
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("ibm_hidden_references"), 0);
    ck_assert_uint_eq(json_u64("errors"), 0);
    /* the classes' 1, then (1+1) + (1+1) + (3+1) + (9+1) + 4 + (1+1) */
    ck_assert_uint_eq(json_u64("references"), 1 + 2 + 2 + 4 + 10 + 4 + 2);
    free(d);
}
END_TEST

START_TEST(close_inside_dump_ends_it)
{
    char path[] = "/tmp/test_phd_close.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    struct hprof_sink *s = NULL;
    sink_open_file(path, false, &s);
    ck_assert_ptr_nonnull(s);
    struct hprof_writer *w = phd_writer_new(s);
    w->ops->begin(w);
    w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 0, .bytes = 0});
    classes(w);
    hprof_id none[1] = {0};
    instance(w, ADDR_ID(0x1000), 2, "A", 0, none);
    /* records of other kinds are ignored, also inside a dump */
    struct hprof_root root = {.kind = HPROF_ROOT_JNI_GLOBAL, .object = ADDR_ID(0x1000)};
    w->ops->root(w, &root);
    w->ops->string(w, 1, "x", 1);
    struct hprof_cost_report cr = {0};
    w->ops->cpu_samples(w, &cr);
    struct hprof_sites_report sr = {0};
    w->ops->sites(w, &sr);
    w->ops->close(w); /* ends the dump */
    static uint8_t d[4096];
    fd = open(path, O_RDONLY);
    ssize_t len = read(fd, d, sizeof d);
    close(fd);
    unlink(path);
    ck_assert_int_gt(len, 0);
    ck_assert_uint_eq(d[len - 1], 3);
    ck_assert_int_eq(read_phd(d, (size_t)len, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("objects"), 1);
}
END_TEST

/* ---- the reader on hand-made files ----------------------------------------------------- */

static size_t hdr(uint8_t *b, int32_t flags)
{
    size_t k = 0;
    b[k++] = 0;
    b[k++] = 18;
    memcpy(b + k, "portable heap dump", 18);
    k += 18;
    const uint8_t v[] = {0, 0, 0, 6, 0, 0, 0, (uint8_t)flags, 1, 2, 2};
    memcpy(b + k, v, sizeof v);
    return k + sizeof v;
}

/* class "C" at address 4 * gap units, instance size 16, no super, no refs */
static size_t cls(uint8_t *b, int8_t gap)
{
    const uint8_t c[] = {6, 0x00, (uint8_t)gap, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0,
                         0, 1,    'C',          0, 0, 0, 0};
    memcpy(b, c, sizeof c);
    return sizeof c;
}

START_TEST(reader_rejects)
{
    uint8_t b[256];
    size_t k;
    /* a valid minimal file: class at 4, medium object at 8 of class 4, short at 12, end */
    k = hdr(b, 5);
    k += cls(b + k, 1);
    const uint8_t objs[] = {0x40, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0x80, 1, 3};
    memcpy(b + k, objs, sizeof objs);
    k += sizeof objs;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("objects"), 2);
    ck_assert_uint_eq(class_count("C"), 2);
    /* trailing byte after the end of dump */
    b[k] = 0;
    ck_assert_int_eq(read_phd(b, k + 1, NULL, NULL), 1);
    /* no end-of-dump tag */
    ck_assert_int_eq(read_phd(b, k - 1, NULL, NULL), 1);
    /* short record before anything filled the cache */
    k = hdr(b, 5);
    k += cls(b + k, 1);
    b[k++] = 0x80;
    b[k++] = 1;
    b[k++] = 3;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    /* two records at one address (gap 0) */
    k = hdr(b, 5);
    k += cls(b + k, 1);
    const uint8_t dup[] = {0x40, 0, 0, 0, 0, 0, 0, 0, 0, 4, 3};
    memcpy(b + k, dup, sizeof dup);
    k += sizeof dup;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    /* object whose class is no class record */
    k = hdr(b, 5);
    const uint8_t nocls[] = {0x40, 2, 0, 0, 0, 0, 0, 0, 0, 4, 3};
    memcpy(b + k, nocls, sizeof nocls);
    k += sizeof nocls;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    /* unknown record tag */
    k = hdr(b, 5);
    b[k++] = 9;
    b[k++] = 3;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    /* dangling reference: an error unless allowed */
    k = hdr(b, 5);
    k += cls(b + k, 1);
    const uint8_t dang[] = {0x48, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0x10, 3};
    memcpy(b + k, dang, sizeof dang);
    k += sizeof dang;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    ck_assert_int_eq(read_phd(b, k, "--allow-dangling", "1"), 0);
    /* object array whose true length is below its reference count */
    k = hdr(b, 5);
    k += cls(b + k, 1);
    const uint8_t oa[] = {8, 0x01, 1,    0, 0, 0, 0, 0, 0, 0, 4, 0, 0,
                          0, 1,    0xFF, 0, 0, 0, 0, 0, 0, 0, 4, 3};
    memcpy(b + k, oa, sizeof oa);
    k += sizeof oa;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
    b[k - 6] = 1; /* true length 1: fine (the ref is to the class itself) */
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("ibm_hidden_references"), 1);
    /* not a PHD file */
    ck_assert_int_eq(read_phd((const uint8_t *)"hello", 5, NULL, NULL), 1);
}
END_TEST

START_TEST(reader_lengths_and_hashes)
{
    uint8_t b[256];
    size_t k = hdr(b, 5);
    /* 0x20 primitive arrays: length 200 with code 0 (u1), 40000 with code 1 (u2) */
    const uint8_t pa[] = {0x20 | 6 << 2 | 0, 1, 200, 0, 0, 0, 52, /* int[200] */
                          0x20 | 4 << 2 | 1, 0, 1, 0x9C, 0x40, 0, 0, 0x27, 0x14,
                          /* tag 7, wide, hashed: long[3] with an s4 hash */
                          7, 7 << 5 | 0x10 | 0x02, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3,
                          0x12, 0x34, 0x56, 0x78, 0, 0, 0, 10, 3};
    memcpy(b + k, pa, sizeof pa);
    k += sizeof pa;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("primitive_arrays"), 3);
    ck_assert_uint_eq(json_u64("hashes"), 1);
    ck_assert_uint_eq(class_count("[I"), 1);
    ck_assert_uint_eq(class_count("[B"), 1);
    ck_assert_uint_eq(class_count("[J"), 1);
    ck_assert_uint_eq(json_u64("heap_bytes"), 208 + 40016 + 40);

    /* flags 7: every record carries an s2 hash, the class too */
    k = hdr(b, 7);
    const uint8_t c[] = {6, 0x00, 1, 0, 0, 0, 16, 0xAA, 0xBB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'C', 0,
                         0, 0, 0,
                         /* medium object, gap 1, class 4, hash */
                         0x40, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0x11, 0x22,
                         /* short object, gap 1, hash */
                         0x80, 1, 0x33, 0x44, 3};
    memcpy(b + k, c, sizeof c);
    k += sizeof c;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 0);
    ck_assert_uint_eq(json_u64("hashes"), 3);
    ck_assert_uint_eq(json_u64("objects"), 2);
    /* the same bytes read as flags 5 (no hashes) are garbage: an error */
    b[27] = 5;
    ck_assert_int_eq(read_phd(b, k, NULL, NULL), 1);
}
END_TEST

/* ---- classic ------------------------------------------------------------------------- */

START_TEST(classic_text_exact)
{
    struct hprof_writer *w = begin_dump(true);
    hprof_id r[3] = {ADDR_ID(0x1010), 0, 7};
    instance(w, ADDR_ID(0x1000), 2, "A", 3, r);
    prim_array(w, ADDR_ID(0x1010), HPROF_TYPE_CHAR, 2);
    hprof_id e[2] = {0, ADDR_ID(0x1000)};
    struct hprof_obj_array_dump a = {.array_id = 7,
                                     .class_id = CLASS_ID(4),
                                     .class_name = "java.lang.String[][]",
                                     .size = 24,
                                     .nelems = 2,
                                     .elems = e};
    w->ops->obj_array_dump(w, &a);
    class_rec(w, 2, 1, "A", 24);
    uint8_t *d;
    size_t len = end_dump(w, &d);
    /* As the OpenJ9 VM renders it: a TAB-led reference line after every record, each
     * reference followed by a space, a lone TAB when there are none. */
    const char *want = "// Version: hprof agent (JVMTI), classic heap dump writer 1\n"
                       "0x0000000000001000 [24] OBJ A\n"
                       "\t0x0000000000001010 0x1000000000000038 \n"
                       "0x0000000000001010 [32] OBJ [C\n"
                       "\t\n"
                       "0x1000000000000038 [24] OBJ [[Ljava/lang/String;\n"
                       "\t0x0000000000001000 \n"
                       "0x2000000000000010 [96] CLS A\n"
                       "\t0x0000000000001000 \n"
                       "// Breakdown - Classes: 1, Objects: 1, ObjectArrays: 1, "
                       "PrimitiveArrays: 1\n"
                       "// EOF:  Total 'Objects',Refs(null) : 4,9(5)\n";
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_mem_eq(d, want, len);
    /* and the oracle agrees */
    ck_assert_int_eq(read_phd(d, len, NULL, NULL), 0);
    ck_assert_str_eq(strstr(out, "\"format\":\"classic\"") ? "classic" : out, "classic");
    ck_assert_uint_eq(json_u64("records"), 4);
    ck_assert_uint_eq(json_u64("references"), 4);
    ck_assert_uint_eq(json_u64("reference_slots"), 9);
    ck_assert_uint_eq(json_u64("dangling"), 0);
    free(d);
}
END_TEST

/* The classic checker holds files to the VM's rendering: each way of getting it wrong is an
 * error (the documentation's own rendering among them). */
START_TEST(classic_checker_is_strict)
{
    static const char *const ok = "// Version: x\n"
                                  "0x0000000000001000 [24] OBJ A\n"
                                  "\t0x0000000000001010 \n"
                                  "0x0000000000001010 [16] OBJ [I\n"
                                  "\t\n"
                                  "0x0000000000002000 [8] CLS A\n"
                                  "\t\n"
                                  "// Breakdown - Classes: 1, Objects: 1, ObjectArrays: 0, "
                                  "PrimitiveArrays: 1\n"
                                  "// EOF:  Total 'Objects',Refs(null) : 3,2(1)\n";
    ck_assert_int_eq(read_phd((const uint8_t *)ok, strlen(ok), NULL, NULL), 0);
    struct {
        const char *from, *to;
    } bad[] = {
        {"\t0x0000000000001010 \n", "    0x0000000000001010\n"},       /* the documentation's */
        {"\t0x0000000000001010 \n", "\t0x0000000000001010\n"},         /* no trailing space */
        {"[16] OBJ [I\n\t\n", "[16] OBJ [I\n"},                        /* no empty line */
        {"\t\n0x0000000000002000", "\t\n\t\n0x0000000000002000"},      /* two reference lines */
        {"[16] OBJ [I\n\t\n", "[16] OBJ [I\n\t0x0000000000001000 \n"}, /* refs of an int[] */
        {"0x0000000000001010 [16]", "0x0000000000001000 [16]"},        /* address used twice */
        {"0x0000000000001010 [16]", "0x0000000000001010 [016]"},       /* leading zero */
        {"0x0000000000001000 [24]", "0x0000000000001abc [24]"},        /* lower-case hex */
        {"Classes: 1, Objects: 1", "Classes: 1, Objects: 2"},          /* wrong count */
        {": 3,2(1)", ": 4,2(1)"},                                      /* wrong total */
        {": 3,2(1)", ": 3,2(0)"},                                      /* refs - nulls != written */
        {"// EOF:  Total", "// EOF: Total"},                           /* spacing */
        {"(1)\n", "(1)"},                                              /* no final newline */
        {"(1)\n", "(1)\nmore\n"},                                      /* text after the end */
        {"\t0x0000000000001010 \n", "\t0x0000000000009990 \n"},        /* dangling */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *at = strstr(ok, bad[i].from);
        ck_assert_ptr_nonnull(at);
        char text[1024];
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - ok), ok, bad[i].to,
                 at + strlen(bad[i].from));
        ck_assert_msg(read_phd((const uint8_t *)text, strlen(text), NULL, NULL) == 1,
                      "accepted case %zu:\n%s", i, text);
    }
}
END_TEST

static Suite *phd_suite(void)
{
    Suite *s = suite_create("phd");
    suite_add_tests(s, "phd", 120,
                    TESTS(header_bytes_exact, records_and_cache_bytes, every_shape,
                          obj_array_full_of_far_references, class_first_reference_moved,
                          no_reference_is_hidden_from_ibm_reader, close_inside_dump_ends_it,
                          reader_rejects, reader_lengths_and_hashes, classic_text_exact,
                          classic_checker_is_strict));
    return s;
}

int main(void)
{
    return run_suite(phd_suite());
}

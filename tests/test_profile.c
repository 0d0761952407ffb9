/*
 * test_profile.c: the profile model of tools/reader (profile.h) on files written by the
 * agent's own writers (writer/), ascii and binary, plain and gzip, with known numbers; on
 * ascii files of real runs (tests/data/profile/); and on broken input.
 */
#include "check_helpers.h"
#include "profile.h"
#include "sink.h"
#include "writer.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROFILE_DATA
#define PROFILE_DATA "tests/data/profile"
#endif

static void setup(void)
{
    scratch_dir_make("test_profile");
}

static void teardown(void)
{
    scratch_dir_remove();
}

/* ---- the profile the writers write ----------------------------------------------------- */

enum { S_ALLOC = 1, S_INTARR, S_MAKE, S_MAIN, S_SPIN, S_SIG_V, S_SIG_MAIN, S_SIG_SPIN, S_SRC };
static const char *const strs[] = {
    [S_ALLOC] = "Alloc",
    [S_INTARR] = "int[]",
    [S_MAKE] = "make",
    [S_MAIN] = "main",
    [S_SPIN] = "spin",
    [S_SIG_V] = "()V",
    [S_SIG_MAIN] = "([Ljava/lang/String;)V",
    [S_SIG_SPIN] = "(I)J",
    [S_SRC] = "Alloc.java",
};

static const struct hprof_frame f_make = {0x1001, S_MAKE,  S_SIG_V, S_SRC, 1,
                                          24,     "Alloc", "make",  "()V", "Alloc.java"};
static const struct hprof_frame f_main = {
    0x1002,      S_MAIN, S_SIG_MAIN, S_SRC, 1, 46, "Alloc", "main", "([Ljava/lang/String;)V",
    "Alloc.java"};
static const struct hprof_frame f_spin = {0x1003,  S_SPIN, S_SIG_SPIN, 0,   1, HPROF_LINE_NATIVE,
                                          "Alloc", "spin", "(I)J",     NULL};

/* what: bit 1 CPU SAMPLES (twice), 2 SITES, 4 cpu=times, 8 cpu=old, 16 monitors, 32 a heap
 * dump (3 Alloc, 2 int[]), 64 a second heap dump (1 Alloc) */
static void write_profile(const char *path, bool binary, bool gzip, unsigned what)
{
    struct hprof_sink *s = NULL;
    struct hprof_error err = sink_open_file(path, gzip, &s);
    ck_assert_msg(s != NULL, "%s", err.text);
    struct hprof_writer *w = binary ? binary_writer_new(s) : ascii_writer_new(s);
    w->ops->begin(w);
    for (unsigned i = 1; i < sizeof strs / sizeof *strs; i++)
        w->ops->string(w, i, strs[i], strlen(strs[i]));
    w->ops->load_class(w, 1, 0x100, HPROF_TRACE_SERIAL_NONE, S_ALLOC, "Alloc");
    w->ops->load_class(w, 2, 0x200, HPROF_TRACE_SERIAL_NONE, S_INTARR, "int[]");
    const struct hprof_frame t2[] = {f_make, f_main}, t3[] = {f_spin, f_main};
    w->ops->frame(w, &f_make);
    w->ops->frame(w, &f_main);
    w->ops->frame(w, &f_spin);
    w->ops->trace(w, 1, 0, 0, NULL);
    w->ops->trace(w, 2, 0, 2, t2);
    w->ops->thread_start(
        w, &(struct hprof_thread_info){
               .thread_serial = 2, .thread_obj = 0x700, .trace_serial = 1, .name = "worker"});
    w->ops->trace(w, 3, 2, 2, t3); /* recorded on thread 2 */
    if (what & 1) {
        const struct hprof_cost_row r1[] = {{2, 200, 200, "Alloc.make"},
                                            {3, 100, 100, "Alloc.spin"}};
        const struct hprof_cost_row r2[] = {{3, 10, 10, "Alloc.spin"}};
        w->ops->cpu_samples(w, &(struct hprof_cost_report){300, 2, r1, 0});
        w->ops->cpu_samples(w, &(struct hprof_cost_report){10, 1, r2, 0});
    }
    if (what & 2) {
        const struct hprof_site_row rows[] = {
            {2, "int[]", HPROF_TYPE_INT, 2, 4000, 100, 8000, 200},
            {1, "Alloc", 0, 3, 16, 1, 32, 2},
        };
        w->ops->sites(w, &(struct hprof_sites_report){0, 0.0001f, 4016, 101, 8032, 202, 2, rows});
    }
    if (what & 4) { /* rows in ns, total in ms: 75% and 25% of 1000 ms */
        const struct hprof_cost_row rows[] = {{2, 5, 750000000, "Alloc.make"},
                                              {3, 7, 250000000, "Alloc.spin"}};
        w->ops->cpu_times(w, &(struct hprof_cost_report){1000, 2, rows, 1000000000});
    }
    if (what & 8) {
        const struct hprof_method_time_row rows[] = {{"Alloc.make", "()V", 3, 60, 80},
                                                     {"Alloc.spin", "(I)J", 9, 40, 40}};
        w->ops->cpu_old(w, &(struct hprof_method_time_report){100, 2, rows});
    }
    if (what & 16) {
        const struct hprof_cost_row rows[] = {{3, 6, 40, "java.lang.Object"}};
        w->ops->monitor_time(w, &(struct hprof_cost_report){40, 1, rows, 0});
    }
    if (what & 32) {
        w->ops->heap_dump_begin(
            w, &(struct hprof_heap_totals){.objects = 5, .bytes = 3 * 16 + 2 * 56});
        w->ops->class_dump(
            w, &(struct hprof_class_dump){.class_id = 0x100, .trace_serial = 1, .name = "Alloc"});
        for (int i = 0; i < 3; i++)
            w->ops->instance_dump(w, &(struct hprof_instance_dump){.object_id = 0x500 + i,
                                                                   .trace_serial = 2,
                                                                   .class_id = 0x100,
                                                                   .class_name = "Alloc",
                                                                   .size = 16});
        int32_t vals[10] = {0};
        for (int i = 0; i < 2; i++)
            w->ops->prim_array_dump(w, &(struct hprof_prim_array_dump){.array_id = 0x600 + i,
                                                                       .trace_serial = 2,
                                                                       .elem_type = HPROF_TYPE_INT,
                                                                       .size = 56,
                                                                       .nelems = 10,
                                                                       .elems = vals});
        w->ops->heap_dump_end(w, NULL);
    }
    if (what & 64) {
        w->ops->heap_dump_begin(w, &(struct hprof_heap_totals){.objects = 1, .bytes = 16});
        w->ops->class_dump(
            w, &(struct hprof_class_dump){.class_id = 0x100, .trace_serial = 1, .name = "Alloc"});
        w->ops->instance_dump(w, &(struct hprof_instance_dump){.object_id = 0x510,
                                                               .trace_serial = 2,
                                                               .class_id = 0x100,
                                                               .class_name = "Alloc",
                                                               .size = 16});
        w->ops->heap_dump_end(w, NULL);
    }
    w->ops->close(w);
}

/* nth: 0 the last section of each kind, n the n-th */
static struct hprof_profile *load(const char *path, unsigned nth)
{
    char err[512];
    struct hprof_load_opts o = {.nth = nth};
    struct hprof_profile *p = hprof_profile_load(path, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    return p;
}

/* "Alloc.make(Alloc.java:24)" */
static void frame_text(const struct hprof_profile *p, uint32_t fi, char *buf, size_t n)
{
    const struct hprof_pframe *f = &p->frames[fi];
    snprintf(buf, n, "%s.%s%s(%s:%d)", f->class_name, f->method, f->signature,
             f->source ? f->source : "-", f->line);
}

static void check_trace(const struct hprof_profile *p, uint32_t ti, const char *top,
                        const char *bottom)
{
    ck_assert_uint_ne(ti, HPROF_NO_TRACE);
    const struct hprof_ptrace *t = &p->traces[ti];
    ck_assert_uint_eq(t->nframes, 2);
    char buf[200];
    frame_text(p, t->frames[0], buf, sizeof buf);
    ck_assert_str_eq(buf, top);
    frame_text(p, t->frames[1], buf, sizeof buf);
    ck_assert_str_eq(buf, bottom);
}

/* The binary format keeps signatures, ascii does not */
#define MAKE(b) ((b) ? "Alloc.make()V(Alloc.java:24)" : "Alloc.make(Alloc.java:24)")
#define MAIN(b)                                                                                    \
    ((b) ? "Alloc.main([Ljava/lang/String;)V(Alloc.java:46)" : "Alloc.main(Alloc.java:46)")
#define SPIN(b) ((b) ? "Alloc.spin(I)J(-:-3)" : "Alloc.spin(-:-3)")

static void check_samples(bool binary, bool gzip)
{
    const char *path = scratch_path(gzip ? "s.gz" : "s");
    write_profile(path, binary, gzip, 1 | 2 | 32);
    struct hprof_profile *p = load(path, 0);
    ck_assert(p->binary == binary);
    ck_assert(p->gzip == gzip);
    ck_assert_uint_eq(p->ntraces, 3);
    ck_assert_uint_eq(p->nframes, 3); /* each frame once */
    const struct hprof_section *s = &p->sections[HPROF_CPU_SAMPLES];
    /* the last of the two */
    ck_assert(s->present);
    ck_assert_uint_eq(s->count, 2);
    ck_assert_uint_eq(s->index, 1);
    ck_assert_uint_eq(s->total, 10);
    ck_assert_uint_eq(s->nrows, 1);
    ck_assert_uint_eq(s->rows[0].v[0], 10);
    check_trace(p, s->rows[0].trace, SPIN(binary), MAIN(binary));
    ck_assert_uint_eq(p->traces[s->rows[0].trace].serial, binary ? 3 : 300002);
    ck_assert_uint_eq(p->traces[s->rows[0].trace].thread, binary ? 2 : 200002);

    s = &p->sections[HPROF_SITES];
    ck_assert(s->present);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_str_eq(s->rows[0].name, "int[]");
    ck_assert_uint_eq(s->rows[0].v[0], 8000);
    ck_assert_uint_eq(s->rows[0].v[1], 200);
    ck_assert_uint_eq(s->rows[0].v[2], 4000);
    ck_assert_uint_eq(s->rows[0].v[3], 100);
    check_trace(p, s->rows[0].trace, MAKE(binary), MAIN(binary));
    ck_assert_str_eq(s->rows[1].name, "Alloc");
    ck_assert_uint_eq(s->rows[1].v[0], 32);
    ck_assert_uint_eq(s->rows[1].v[3], 1);
    ck_assert_uint_eq(s->total, 8032); /* binary: the header's; ascii: the sum of the rows */

    s = &p->sections[HPROF_HEAP_CLASSES];
    ck_assert(s->present);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_str_eq(s->rows[0].name, "Alloc");
    ck_assert_uint_eq(s->rows[0].v[0], 3);
    ck_assert_str_eq(s->rows[1].name, "int[]");
    ck_assert_uint_eq(s->rows[1].v[0], 2);
    /* binary counts the bytes of field values and array elements, ascii the shallow sizes */
    ck_assert_uint_eq(s->rows[0].v[1], binary ? 0 : 48);
    ck_assert_uint_eq(s->rows[1].v[1], binary ? 80 : 112);

    ck_assert(!p->sections[HPROF_CPU_TIME].present);
    char err[200];
    ck_assert_ptr_null(hprof_profile_section(p, HPROF_CPU_TIME, "x", err, sizeof err));
    ck_assert_str_eq(err, "x: no CPU TIME section in this profile");
    hprof_profile_free(p);

    /* the first of the two, asked for; one past the end */
    p = load(path, 1);
    s = &p->sections[HPROF_CPU_SAMPLES];
    ck_assert_uint_eq(s->total, 300);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_uint_eq(s->rows[0].v[0], 200);
    check_trace(p, s->rows[0].trace, MAKE(binary), MAIN(binary));
    ck_assert_uint_eq(s->rows[1].v[0], 100);
    ck_assert(p->sections[HPROF_SITES].present); /* the first of every kind */
    hprof_profile_free(p);
    p = load(path, 2);
    ck_assert_uint_eq(p->sections[HPROF_CPU_SAMPLES].index, 1);
    ck_assert_uint_eq(p->sections[HPROF_CPU_SAMPLES].total, 10);
    ck_assert(!p->sections[HPROF_SITES].present); /* the file has one */
    hprof_profile_free(p);
    p = load(path, 3);
    ck_assert(!p->sections[HPROF_CPU_SAMPLES].present);
    ck_assert_ptr_null(hprof_profile_section(p, HPROF_CPU_SAMPLES, "x", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "holds 2 CPU SAMPLES sections"));
    hprof_profile_free(p);
}

START_TEST(test_binary_plain)
{
    check_samples(true, false);
}
END_TEST
START_TEST(test_binary_gzip)
{
    check_samples(true, true);
}
END_TEST

/* "-": stdin, here a gzip binary file and a plain ascii one */
START_TEST(test_stdin)
{
    const char *b = scratch_path("in.hprof.gz"), *a = scratch_path("in.txt");
    write_profile(b, true, true, 1);
    write_profile(a, false, false, 16);
    ck_assert_ptr_nonnull(freopen(b, "rb", stdin));
    struct hprof_profile *p = load("-", 0);
    ck_assert(p->binary && p->gzip);
    ck_assert_uint_eq(p->sections[HPROF_CPU_SAMPLES].total, 10);
    hprof_profile_free(p);
    ck_assert_ptr_nonnull(freopen(a, "rb", stdin));
    p = load("-", 0);
    ck_assert(!p->binary);
    ck_assert_uint_eq(p->sections[HPROF_MONITOR_TIME].rows[0].v[1], 6);
    hprof_profile_free(p);
}
END_TEST
START_TEST(test_ascii_plain)
{
    check_samples(false, false);
}
END_TEST

/* two heap dumps: the last, or the first asked for */
static void check_two_dumps(bool binary)
{
    const char *path = scratch_path("dumps");
    write_profile(path, binary, false, 32 | 64);
    struct hprof_profile *p = load(path, 0);
    const struct hprof_section *s = &p->sections[HPROF_HEAP_CLASSES];
    ck_assert_uint_eq(s->count, 2);
    ck_assert_uint_eq(s->index, 1);
    ck_assert_uint_eq(s->nrows, 1);
    ck_assert_str_eq(s->rows[0].name, "Alloc");
    ck_assert_uint_eq(s->rows[0].v[0], 1);
    hprof_profile_free(p);
    p = load(path, 1);
    s = &p->sections[HPROF_HEAP_CLASSES];
    ck_assert_uint_eq(s->index, 0);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_uint_eq(s->rows[0].v[0], 3);
    ck_assert_uint_eq(s->rows[1].v[0], 2);
    hprof_profile_free(p);
}

START_TEST(test_two_dumps)
{
    check_two_dumps(true);
    check_two_dumps(false);
}
END_TEST

START_TEST(test_ascii_times_old_monitors)
{
    const char *path = scratch_path("t.txt");
    write_profile(path, false, false, 4 | 8 | 16);
    struct hprof_profile *p = load(path, 0);
    const struct hprof_section *s = &p->sections[HPROF_CPU_TIME];
    ck_assert(s->present);
    ck_assert_uint_eq(s->total, 1000);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_uint_eq(s->rows[0].v[0], 750); /* time_ms from 75.00% of 1000 */
    ck_assert_uint_eq(s->rows[0].v[1], 5);
    check_trace(p, s->rows[0].trace, MAKE(false), MAIN(false));
    ck_assert_uint_eq(s->rows[1].v[0], 250);
    ck_assert_uint_eq(s->rows[1].v[1], 7);

    s = &p->sections[HPROF_CPU_METHODS];
    ck_assert_uint_eq(s->total, 100);
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_str_eq(s->rows[0].name, "Alloc.make");
    ck_assert_str_eq(s->rows[0].signature, "()V");
    ck_assert_uint_eq(s->rows[0].trace, HPROF_NO_TRACE);
    ck_assert_uint_eq(s->rows[0].v[0], 60);
    ck_assert_uint_eq(s->rows[0].v[1], 80);
    ck_assert_uint_eq(s->rows[0].v[2], 3);
    ck_assert_uint_eq(s->rows[1].v[2], 9);

    s = &p->sections[HPROF_MONITOR_TIME];
    ck_assert_uint_eq(s->total, 40);
    ck_assert_uint_eq(s->nrows, 1);
    ck_assert_str_eq(s->rows[0].name, "java.lang.Object");
    ck_assert_uint_eq(s->rows[0].v[0], 40);
    ck_assert_uint_eq(s->rows[0].v[1], 6);
    check_trace(p, s->rows[0].trace, SPIN(false), MAIN(false));
    hprof_profile_free(p);

    ck_assert_uint_eq(hprof_section_nmeasures(HPROF_SITES), 4);
    ck_assert_str_eq(hprof_section_measure(HPROF_SITES, 2), "live_bytes");
    ck_assert_ptr_null(hprof_section_measure(HPROF_CPU_SAMPLES, 1));
}
END_TEST

/* ascii ms rows: the total shared by largest remainder, not each row rounded on its own */
START_TEST(test_ascii_ms_shared)
{
    FILE *f = fopen(scratch_path("ms.txt"), "w");
    /* 7 ms over rows of 33.33% 33.33% 33.34% (all rows): 2.33 + 2.33 + 2.33 rounded alone
     * give 6; shared, the largest remainder (the third row) gets the 7th ms */
    fputs("JAVA PROFILE 1.0.1, created Sat Nov 21 04:53:34 2026\n\n--------\n\n"
          "TRACE 300001: (thread=200001)\n\tA.a(A.java:1)\n"
          "TRACE 300002: (thread=200001)\n\tA.b(A.java:2)\n"
          "TRACE 300003: (thread=200001)\n\tA.c(A.java:3)\n"
          "CPU TIME (ms) BEGIN (total = 7) Sat Nov 21 04:53:38 2026\n"
          "rank   self  accum   count trace method\n"
          "   1 33.33% 33.33%       1 300001 A.a\n"
          "   2 33.33% 66.66%       1 300002 A.b\n"
          "   3 33.34% 100.00%       1 300003 A.c\n"
          "CPU TIME (ms) END\n"
          /* rows cut off: they hold 50% of 9 ms -> 5 (4.5 rounded) shared, not all 9 */
          "MONITOR TIME BEGIN (total = 9 ms) Sat Nov 21 04:53:38 2026\n"
          "rank   self  accum   count trace monitor\n"
          "   1 30.00% 30.00%       1 300001 java.lang.Object (Java)\n"
          "   2 20.00% 50.00%       1 300002 java.lang.Object (Java)\n"
          "MONITOR TIME END\n",
          f);
    fclose(f);
    struct hprof_profile *p = load(scratch_path("ms.txt"), 0);
    const struct hprof_section *s = &p->sections[HPROF_CPU_TIME];
    ck_assert_uint_eq(s->nrows, 3);
    ck_assert_uint_eq(s->rows[0].v[0], 2);
    ck_assert_uint_eq(s->rows[1].v[0], 2);
    ck_assert_uint_eq(s->rows[2].v[0], 3);
    s = &p->sections[HPROF_MONITOR_TIME];
    ck_assert_uint_eq(s->nrows, 2);
    ck_assert_uint_eq(s->rows[0].v[0] + s->rows[1].v[0], 5);
    ck_assert_uint_eq(s->rows[0].v[0], 3); /* 3.0 of 5 */
    ck_assert_uint_eq(s->rows[1].v[0], 2);
    hprof_profile_free(p);
}
END_TEST

/* Files of real runs (java -agentpath:libhprof.so=..., tests/data/profile/README) */
START_TEST(test_real_runs)
{
    struct hprof_profile *p = load(PROFILE_DATA "/cpu-samples.txt", 0);
    const struct hprof_section *s = &p->sections[HPROF_CPU_SAMPLES];
    ck_assert_uint_eq(s->total, 4);
    ck_assert_uint_eq(s->nrows, 2);
    uint64_t sum = 0;
    for (size_t i = 0; i < s->nrows; i++)
        sum += s->rows[i].v[0];
    ck_assert_uint_eq(sum, 4);
    const struct hprof_ptrace *t = &p->traces[s->rows[1].trace];
    ck_assert_uint_eq(t->serial, 300002);
    ck_assert_uint_eq(t->nframes, 2);
    ck_assert_str_eq(p->frames[t->frames[0]].method, "work");
    ck_assert_str_eq(p->frames[t->frames[1]].class_name, "Prof");
    ck_assert_int_eq(p->frames[t->frames[1]].line, 12);
    hprof_profile_free(p);

    p = load(PROFILE_DATA "/monitor.txt", 0);
    s = &p->sections[HPROF_MONITOR_TIME];
    ck_assert_uint_eq(s->total, 6);
    ck_assert_uint_eq(s->nrows, 1);
    ck_assert_str_eq(s->rows[0].name, "java.lang.Object");
    ck_assert_uint_eq(s->rows[0].v[0], 6); /* 100.00% of 6 ms */
    ck_assert_uint_eq(s->rows[0].v[1], 3);
    t = &p->traces[s->rows[0].trace];
    ck_assert_uint_eq(t->nframes, 3);
    const struct hprof_pframe *f = &p->frames[t->frames[1]];
    ck_assert_ptr_null(f->source); /* <Unknown Source> */
    ck_assert_int_eq(f->line, HPROF_LINE_UNKNOWN);
    hprof_profile_free(p);
}
END_TEST

static void cut(const char *from, const char *to, long keep_less)
{
    FILE *in = fopen(from, "rb");
    ck_assert_ptr_nonnull(in);
    fseek(in, 0, SEEK_END);
    long n = ftell(in) - keep_less;
    rewind(in);
    char *buf = malloc((size_t)n);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, in), n);
    fclose(in);
    FILE *out = fopen(to, "wb");
    ck_assert_int_eq(fwrite(buf, 1, (size_t)n, out), n);
    fclose(out);
    free(buf);
}

static void expect_error(const char *path, const char *what)
{
    char err[512];
    struct hprof_profile *p = hprof_profile_load(path, NULL, err, sizeof err);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err, what) != NULL, "error \"%s\" does not say \"%s\"", err, what);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "error \"%s\" does not name the file",
                  err);
}

START_TEST(test_truncated)
{
    const char *b = scratch_path("full.hprof"), *a = scratch_path("full.txt");
    write_profile(b, true, false, 1 | 2 | 32);
    write_profile(a, false, false, 1 | 2);
    cut(b, scratch_path("cut.hprof"), 7);
    expect_error(scratch_path("cut.hprof"), "truncated");
    cut(a, scratch_path("cut.txt"), 30); /* inside SITES */
    expect_error(scratch_path("cut.txt"), "truncated: the file ends inside the SITES section");
    write_profile(scratch_path("full.hprof.gz"), true, true, 1 | 2 | 32);
    cut(scratch_path("full.hprof.gz"), scratch_path("cut.hprof.gz"), 20);
    expect_error(scratch_path("cut.hprof.gz"), "gzip");
}
END_TEST

START_TEST(test_bad_input)
{
    FILE *f = fopen(scratch_path("x.txt"), "w");
    fputs("hello\n", f);
    fclose(f);
    expect_error(scratch_path("x.txt"), "not an hprof profile");
    f = fopen(scratch_path("e"), "w");
    fclose(f);
    expect_error(scratch_path("e"), "empty file");
    expect_error(scratch_path("missing"), "No such file");
    /* a row naming a trace the file does not define */
    f = fopen(scratch_path("bad.txt"), "w");
    fputs("JAVA PROFILE 1.0.1, created Sat Nov 21 04:53:34 2026\n\n--------\n\n"
          "CPU SAMPLES BEGIN (total = 3) Sat Nov 21 04:53:38 2026\n"
          "rank   self  accum   count trace method\n"
          "   1 100.00% 100.00%       3 300005 A.b\n"
          "CPU SAMPLES END\n",
          f);
    fclose(f);
    expect_error(scratch_path("bad.txt"), "names trace 300005, which the file does not define");
    f = fopen(scratch_path("bad2.txt"), "w");
    fputs("JAVA PROFILE 1.0.1, created Sat Nov 21 04:53:34 2026\n\n--------\n\n"
          "CPU SAMPLES BEGIN (total = 3) Sat Nov 21 04:53:38 2026\n"
          "   1 100.00% x\n"
          "CPU SAMPLES END\n",
          f);
    fclose(f);
    expect_error(scratch_path("bad2.txt"), "line 6: bad CPU SAMPLES row");
    /* binary: a violation of the strict reader is refused with its message */
    write_profile(scratch_path("ok.hprof"), true, false, 1);
    FILE *in = fopen(scratch_path("ok.hprof"), "r+b");
    fseek(in, 19, SEEK_SET);
    fputc(0, in), fputc(0, in), fputc(0, in), fputc(5, in); /* id size 5 */
    fclose(in);
    expect_error(scratch_path("ok.hprof"), "header: identifier size 5");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc =
        suite_add_tests(s, "profile", 60,
                        TESTS(test_binary_plain, test_binary_gzip, test_ascii_plain, test_stdin,
                              test_two_dumps, test_ascii_times_old_monitors, test_ascii_ms_shared,
                              test_real_runs, test_truncated, test_bad_input));
    tcase_add_checked_fixture(tc, setup, teardown);
    return run_suite(s);
}

/*
 * profile_binary.c: HPROF binary (format=b) into the profile model. The strict reader
 * (hprof_parse.h) reads and checks the file; its visitor hands over the records, kept raw
 * and resolved once the file is read (ids to strings, serials to classes and traces).
 */
#include "hprof_parse.h"
#include "profile_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct bstr {
    uint64_t id;
    const char *s;
};
struct bclass {
    uint32_t serial;
    uint64_t name;
};
struct bframe {
    uint64_t id, method, sig, source;
    uint32_t class_serial;
    int32_t line;
    uint32_t index; /* into the model's frames, HPROF_NO_TRACE until first used */
};
struct btrace {
    uint32_t serial, thread, nframes;
    size_t first; /* into fids */
};

struct pbinary {
    struct pmodel *M;
    PVEC(struct bstr) strs;
    PVEC(struct bclass) cls;
    PVEC(struct bframe) fr;
    PVEC(struct btrace) tr;
    PVEC(uint64_t) fids;
    PVEC(uint32_t) site_cls; /* class serial of each row of the kept SITES section */
    PVEC(uint32_t) scratch;
    size_t heap_interned; /* rows of HEAP_CLASSES whose name is interned (or NULL) */
    char first_error[512];
    bool failed; /* a hook ran out of memory (pm_fail cannot jump over the reader) */
};

/* The hooks run inside hprof_parse_fd, which has its own longjmp target: they must not
 * longjmp out of it. Memory errors are noted and reported after it returns. */
#define TRY_PUSH(B, vec)                                                                           \
    ((vec).n < (vec).cap || grow_soft((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof *(vec).v) \
         ? &(vec).v[(vec).n++]                                                                     \
         : ((B)->failed = true, (void *)0))

static bool grow_soft(void **v, size_t *cap, size_t need, size_t elsz)
{
    void *q = reader_grow(*v, cap, need, elsz);
    if (q)
        *v = q;
    return q != NULL || need == 0;
}

static void on_string(void *ctx, uint64_t id, const char *utf8, size_t len)
{
    struct pbinary *B = ctx;
    struct bstr *s = TRY_PUSH(B, B->strs);
    if (!s)
        return;
    /* pm_str may fail on memory: done later, keep a copy now */
    char *c = malloc(len + 1);
    if (!c) {
        B->strs.n--;
        B->failed = true;
        return;
    }
    memcpy(c, utf8, len);
    c[len] = 0;
    *s = (struct bstr){.id = id, .s = c};
}

static void on_load_class(void *ctx, uint32_t serial, uint64_t class_id, uint64_t name_id)
{
    (void)class_id;
    struct pbinary *B = ctx;
    struct bclass *c = TRY_PUSH(B, B->cls);
    if (c)
        *c = (struct bclass){.serial = serial, .name = name_id};
}

static void on_frame(void *ctx, uint64_t id, uint64_t method, uint64_t sig, uint64_t source,
                     uint32_t class_serial, int32_t line)
{
    struct pbinary *B = ctx;
    struct bframe *f = TRY_PUSH(B, B->fr);
    if (f)
        *f = (struct bframe){id, method, sig, source, class_serial, line, HPROF_NO_TRACE};
}

static void on_trace(void *ctx, uint32_t serial, uint32_t thread, uint32_t n,
                     const uint64_t *frame_ids)
{
    struct pbinary *B = ctx;
    size_t first = B->fids.n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t *f = TRY_PUSH(B, B->fids);
        if (!f)
            return;
        *f = frame_ids[i];
    }
    struct btrace *t = TRY_PUSH(B, B->tr);
    if (t)
        *t = (struct btrace){serial, thread, n, first};
}

/* Sections are filled through pm_row, which may pm_fail: row arrays are reserved with
 * grow_soft first so that pm_row never needs to grow inside the reader. */
static struct hprof_row *reserve_rows(struct pbinary *B, struct hprof_section *s, size_t n)
{
    size_t *cap = &B->M->rows_cap[s->kind];
    if (n > *cap) {
        void *q = realloc(s->rows, n * sizeof *s->rows);
        if (!q) {
            B->failed = true;
            return NULL;
        }
        s->rows = q;
        *cap = n;
    }
    return s->rows;
}

static void on_sites(void *ctx, uint16_t flags, uint64_t alloc_bytes, uint64_t alloc_instances,
                     uint32_t live_bytes, uint32_t live_instances, size_t n,
                     const struct hprof_site_rec *rows)
{
    (void)flags, (void)alloc_instances, (void)live_bytes, (void)live_instances;
    struct pbinary *B = ctx;
    struct hprof_section *s = pm_section_begin(B->M, HPROF_SITES, alloc_bytes);
    if (!s || !reserve_rows(B, s, n ? n : 1))
        return;
    B->site_cls.n = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t *c = TRY_PUSH(B, B->site_cls);
        if (!c)
            return;
        *c = rows[i].class_serial;
        s->rows[i] = (struct hprof_row){
            .trace = rows[i].trace,
            .v = {rows[i].alloc_bytes, rows[i].alloc_instances, rows[i].live_bytes,
                  rows[i].live_instances},
        };
        s->nrows = i + 1;
    }
}

/* wall=y writes its samples as a CPU SAMPLES record whose traces have a pseudo-frame of class
 * "<wall>" on top (doc/wall-samples.md): such a record is a WALL SAMPLES section. The first
 * row's trace tells (the agent writes no empty wall record in binary). */
static bool wall_record(const struct pbinary *B, size_t n, const struct hprof_sample_rec *rows)
{
    const struct btrace *t = NULL;
    for (size_t i = B->tr.n; n > 0 && !t && i-- > 0;)
        if (B->tr.v[i].serial == rows[0].trace)
            t = &B->tr.v[i];
    if (!t || t->nframes == 0)
        return false;
    uint64_t fid = B->fids.v[t->first], name = 0;
    uint32_t cls = 0;
    for (size_t i = 0; i < B->fr.n && !cls; i++)
        if (B->fr.v[i].id == fid)
            cls = B->fr.v[i].class_serial;
    for (size_t i = 0; i < B->cls.n && !name; i++)
        if (B->cls.v[i].serial == cls)
            name = B->cls.v[i].name;
    for (size_t i = 0; i < B->strs.n && name; i++)
        if (B->strs.v[i].id == name)
            return strcmp(B->strs.v[i].s, "<wall>") == 0;
    return false;
}

static void on_cpu_samples(void *ctx, uint32_t total, size_t n, const struct hprof_sample_rec *rows)
{
    struct pbinary *B = ctx;
    enum hprof_section_kind k = wall_record(B, n, rows) ? HPROF_WALL_SAMPLES : HPROF_CPU_SAMPLES;
    struct hprof_section *s = pm_section_begin(B->M, k, total);
    if (!s || !reserve_rows(B, s, n ? n : 1))
        return;
    for (size_t i = 0; i < n; i++)
        s->rows[i] = (struct hprof_row){.trace = rows[i].trace, .v = {rows[i].count}};
    s->nrows = n;
}

static void on_heap_dump(void *ctx, const struct hprof_dump_summary *d,
                         const struct hprof_class_row *rows, size_t n)
{
    (void)d;
    struct pbinary *B = ctx;
    size_t old = B->M->p->sections[HPROF_HEAP_CLASSES].nrows;
    struct hprof_section *s = pm_section_begin(B->M, HPROF_HEAP_CLASSES, 0);
    if (!s)
        return;
    for (size_t i = 0; i < old; i++) /* an earlier dump's names, copies until resolve() */
        free((char *)s->rows[i].name);
    if (!reserve_rows(B, s, n ? n : 1))
        return;
    for (size_t i = 0; i < n; i++) {
        /* names are interned after the reader returns: keep a copy in the name field */
        char *nm = strdup(rows[i].name ? rows[i].name : "?");
        if (!nm) {
            B->failed = true;
            return;
        }
        s->rows[i] = (struct hprof_row){
            .trace = HPROF_NO_TRACE, .name = nm, .v = {rows[i].count, rows[i].bytes}};
        s->total += rows[i].bytes;
        s->nrows = i + 1;
    }
}

static void on_report(void *ctx, enum hprof_severity sev, enum hprof_kind kind, uint64_t off,
                      const char *msg)
{
    struct pbinary *B = ctx;
    if (sev == HPROF_ERROR && !B->first_error[0])
        snprintf(B->first_error, sizeof B->first_error, "%s: %s (offset %" PRIu64 ")",
                 hprof_kind_name(kind), msg, off);
}

static int cmp_str(const void *a, const void *b)
{
    const struct bstr *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}
static int cmp_class(const void *a, const void *b)
{
    const struct bclass *x = a, *y = b;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}
static int cmp_frame(const void *a, const void *b)
{
    const struct bframe *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static const char *string_of(struct pbinary *B, uint64_t id)
{
    struct bstr key = {.id = id};
    const struct bstr *s =
        id && B->strs.n ? bsearch(&key, B->strs.v, B->strs.n, sizeof key, cmp_str) : NULL;
    return s ? s->s : NULL;
}

/* A class name as Java writes it: "java.lang.String", "int[]" */
static const char *class_name(struct pbinary *B, uint32_t serial)
{
    struct bclass key = {.serial = serial};
    const struct bclass *c =
        B->cls.n ? bsearch(&key, B->cls.v, B->cls.n, sizeof key, cmp_class) : NULL;
    const char *s = c ? string_of(B, c->name) : NULL;
    if (!s)
        return pm_str(B->M, "?", 1);
    size_t n = strlen(s);
    char *d = strchr(s, '/') ? strdup(s) : NULL;
    if (!d)
        return pm_str(B->M, s, n);
    for (char *q = d; *q; q++)
        if (*q == '/')
            *q = '.';
    const char *r = pm_str(B->M, d, n);
    free(d);
    return r;
}

static uint32_t frame_index(struct pbinary *B, uint64_t fid)
{
    struct bframe key = {.id = fid};
    struct bframe *f = B->fr.n ? bsearch(&key, B->fr.v, B->fr.n, sizeof key, cmp_frame) : NULL;
    if (!f)
        pm_fail(B->M, "frame id 0x%" PRIx64 " is not defined", fid);
    if (f->index != HPROF_NO_TRACE) /* resolved once, shared by every trace naming it */
        return f->index;
    const char *cls = class_name(B, f->class_serial);
    const char *m = string_of(B, f->method), *sig = string_of(B, f->sig);
    const char *src = string_of(B, f->source);
    if (!m)
        m = "?";
    if (!sig)
        sig = "";
    f->index = pm_frame(B->M, cls, strlen(cls), m, strlen(m), sig, strlen(sig), src,
                        src ? strlen(src) : 0, f->line);
    return f->index;
}

static void resolve(struct pbinary *B)
{
    struct pmodel *M = B->M;
    if (B->strs.n > 1)
        qsort(B->strs.v, B->strs.n, sizeof *B->strs.v, cmp_str);
    if (B->cls.n > 1)
        qsort(B->cls.v, B->cls.n, sizeof *B->cls.v, cmp_class);
    if (B->fr.n > 1)
        qsort(B->fr.v, B->fr.n, sizeof *B->fr.v, cmp_frame);
    for (size_t i = 0; i < B->tr.n; i++) {
        const struct btrace *t = &B->tr.v[i];
        VRESERVE(M, B->scratch, t->nframes);
        for (uint32_t j = 0; j < t->nframes; j++)
            B->scratch.v[j] = frame_index(B, B->fids.v[t->first + j]);
        pm_trace(M, t->serial, t->thread, B->scratch.v, t->nframes);
    }
    struct hprof_section *s = &M->p->sections[HPROF_SITES];
    for (size_t i = 0; i < s->nrows && i < B->site_cls.n; i++)
        s->rows[i].name = class_name(B, B->site_cls.v[i]);
    s = &M->p->sections[HPROF_HEAP_CLASSES];
    for (size_t i = 0; i < s->nrows; i++) {
        char *nm = (char *)s->rows[i].name;
        s->rows[i].name = NULL;
        B->heap_interned = i + 1;
        const char *in = pm_str(M, nm, strlen(nm));
        free(nm);
        s->rows[i].name = in;
    }
}

void pm_load_binary(struct pmodel *M)
{
    struct pbinary *B = calloc(1, sizeof *B);
    if (!B)
        pm_fail(M, "out of memory");
    M->bin = B;
    B->M = M;
    const struct hprof_visitor v = {
        .ctx = B,
        .string = on_string,
        .load_class = on_load_class,
        .frame = on_frame,
        .trace = on_trace,
        .sites = on_sites,
        .cpu_samples = on_cpu_samples,
        .heap_dump = on_heap_dump,
    };
    const struct hprof_opts o = {.lenient_traces = true, .visit = &v, .max_reports = 1};
    struct hprof_summary sum;
    char ebuf[256];
    int rc = hprof_parse_fd(M->fd, &o, on_report, B, &sum, ebuf, sizeof ebuf);
    uint64_t errors = sum.errors;
    hprof_summary_free(&sum);
    if (rc != 0)
        pm_fail(M, "%s", ebuf);
    if (B->failed)
        pm_fail(M, "out of memory");
    if (errors)
        pm_fail(M, "%s", B->first_error);
    resolve(B);
}

void pm_binary_free(struct pmodel *M)
{
    struct pbinary *B = M->bin;
    if (!B)
        return;
    for (size_t i = 0; i < B->strs.n; i++)
        free((char *)B->strs.v[i].s);
    /* heap-dump names not interned yet (a failure before resolve() ended) */
    struct hprof_section *s = &M->p->sections[HPROF_HEAP_CLASSES];
    for (size_t i = B->heap_interned; i < s->nrows; i++) {
        free((char *)s->rows[i].name);
        s->rows[i].name = NULL;
    }
    VFREE(B->strs);
    VFREE(B->cls);
    VFREE(B->fr);
    VFREE(B->tr);
    VFREE(B->fids);
    VFREE(B->site_cls);
    VFREE(B->scratch);
    free(B);
    M->bin = NULL;
}

/*
 * profile.c: the profile model (profile.h) and what both formats share: interned strings and
 * frames, the traces, the sections and their rows, the choice of one section per kind.
 * profile_binary.c and profile_ascii.c fill it.
 */
#include "profile_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const char *const section_names[HPROF_NSECTIONS] = {
    "CPU SAMPLES",  "CPU TIME",  "CPU TIME BY METHOD", "SITES",
    "MONITOR TIME", "HEAP DUMP", "WALL SAMPLES",
};
static const unsigned nmeasures[HPROF_NSECTIONS] = {1, 2, 3, 4, 2, 2, 1};
static const char *const measures[HPROF_NSECTIONS][HPROF_MAX_MEASURES] = {
    {"samples"},
    {"time_ms", "calls"},
    {"self_ms", "total_ms", "calls"},
    {"alloc_bytes", "alloc_objects", "live_bytes", "live_objects"},
    {"time_ms", "entries"},
    {"instances", "bytes"},
    {"samples"},
};

const char *hprof_section_name(enum hprof_section_kind k)
{
    return (unsigned)k < HPROF_NSECTIONS ? section_names[k] : "?";
}

unsigned hprof_section_nmeasures(enum hprof_section_kind k)
{
    return (unsigned)k < HPROF_NSECTIONS ? nmeasures[k] : 0;
}

const char *hprof_section_measure(enum hprof_section_kind k, unsigned i)
{
    return (unsigned)k < HPROF_NSECTIONS && i < nmeasures[k] ? measures[k][i] : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Errors and memory                                                                          */

_Noreturn void pm_fail(struct pmodel *M, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(M->err, M->errlen, "%s: ", M->path);
    if (n >= 0 && (size_t)n < M->errlen)
        vsnprintf(M->err + n, M->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    longjmp(M->jb, 1);
}

void *pm_grow(struct pmodel *M, void *p, size_t *cap, size_t need, size_t elsz)
{
    void *q = reader_grow(p, cap, need, elsz);
    if (!q && need)
        pm_fail(M, "out of memory (%zu elements of %zu bytes)", need, elsz);
    return q;
}

/* ------------------------------------------------------------------------------------------ */
/* Interned strings: each distinct string stored once (string -> u32 value)                   */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ? h : 1;
}

static void strtab_rehash(struct pmodel *M, struct strtab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 1024;
    struct strent *ne = calloc(ncap, sizeof *ne);
    if (!ne)
        pm_fail(M, "out of memory");
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].s)
            continue;
        size_t j = t->e[i].hash & (ncap - 1);
        while (ne[j].s)
            j = (j + 1) & (ncap - 1);
        ne[j] = t->e[i];
    }
    free(t->e);
    t->e = ne;
    t->cap = ncap;
}

struct strent *pm_intern(struct pmodel *M, struct strtab *t, const char *s, size_t n, bool *fresh)
{
    if ((t->n + 1) * 2 > t->cap)
        strtab_rehash(M, t);
    uint64_t h = hash_bytes(s, n);
    size_t i = h & (t->cap - 1);
    for (; t->e[i].s; i = (i + 1) & (t->cap - 1))
        if (t->e[i].hash == h && t->e[i].len == n && memcmp(t->e[i].s, s, n) == 0) {
            if (fresh)
                *fresh = false;
            return &t->e[i];
        }
    char *c = malloc(n + 1);
    if (!c)
        pm_fail(M, "out of memory");
    memcpy(c, s, n);
    c[n] = 0;
    t->e[i] = (struct strent){.s = c, .len = n, .hash = h, .val = 0};
    t->n++;
    if (fresh)
        *fresh = true;
    return &t->e[i];
}

const char *pm_str(struct pmodel *M, const char *s, size_t n)
{
    return pm_intern(M, &M->strs, s, n, NULL)->s;
}

static void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->e[i].s);
    free(t->e);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------------------------ */
/* Frames, traces, sections                                                                   */

uint32_t pm_frame(struct pmodel *M, const char *cls, size_t cl, const char *method, size_t ml,
                  const char *sig, size_t sl, const char *src, size_t srcl, int32_t line)
{
    char key[64];
    int kl = snprintf(key, sizeof key, "%d", (int)line);
    size_t n = cl + ml + sl + srcl + (size_t)kl + 5;
    char stackbuf[1024];
    char *k = n <= sizeof stackbuf ? stackbuf : malloc(n);
    if (!k)
        pm_fail(M, "out of memory");
    /* the key: every part, separated by a byte no part holds */
    size_t o = 0;
    memcpy(k + o, cls, cl), o += cl, k[o++] = '\x01';
    memcpy(k + o, method, ml), o += ml, k[o++] = '\x01';
    memcpy(k + o, sig, sl), o += sl, k[o++] = '\x01';
    if (src)
        memcpy(k + o, src, srcl), o += srcl;
    k[o++] = src ? '\x01' : '\x02';
    memcpy(k + o, key, (size_t)kl), o += (size_t)kl;
    bool fresh;
    struct strent *e = pm_intern(M, &M->frame_keys, k, o, &fresh);
    if (k != stackbuf)
        free(k);
    if (!fresh)
        return e->val;
    e->val = (uint32_t)M->frames.n;
    struct hprof_pframe *f = VPUSH(M, M->frames);
    f->class_name = pm_str(M, cls, cl);
    f->method = pm_str(M, method, ml);
    f->signature = pm_str(M, sig, sl);
    f->source = src ? pm_str(M, src, srcl) : NULL;
    f->line = line;
    return e->val;
}

void pm_trace(struct pmodel *M, uint32_t serial, uint32_t thread, const uint32_t *frames,
              uint32_t n)
{
    struct ptrace_b *t = VPUSH(M, M->traces);
    t->serial = serial;
    t->thread = thread;
    t->nframes = n;
    t->first = M->tframes.n;
    if (n == 0)
        return;
    VRESERVE(M, M->tframes, M->tframes.n + n);
    memcpy(M->tframes.v + M->tframes.n, frames, n * sizeof *frames);
    M->tframes.n += n;
}

static int cmp_serial(const void *a, const void *b)
{
    const struct serial_ix *x = a, *y = b;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

uint32_t pm_trace_index(const struct pmodel *M, uint32_t serial)
{
    struct serial_ix key = {.serial = serial};
    const struct serial_ix *r =
        M->trace_ix.n ? bsearch(&key, M->trace_ix.v, M->trace_ix.n, sizeof key, cmp_serial) : NULL;
    return r ? r->index : HPROF_NO_TRACE;
}

struct hprof_section *pm_section_begin(struct pmodel *M, enum hprof_section_kind k, uint64_t total)
{
    struct hprof_section *s = &M->p->sections[k];
    unsigned idx = s->count++;
    if (M->want >= 0 && idx != (unsigned long)M->want)
        return NULL; /* not the one asked for: its rows are read and dropped */
    s->present = true;
    s->index = idx;
    s->total = total;
    s->nrows = 0;
    return s;
}

struct hprof_row *pm_row(struct pmodel *M, struct hprof_section *s)
{
    s->rows = pm_grow(M, s->rows, &M->rows_cap[s->kind], s->nrows + 1, sizeof *s->rows);
    struct hprof_row *r = &s->rows[s->nrows++];
    memset(r, 0, sizeof *r);
    r->trace = HPROF_NO_TRACE;
    return r;
}

/* Map row trace serials (kept in row->trace while reading) to trace indexes. */
static void resolve_rows(struct pmodel *M)
{
    VRESERVE(M, M->trace_ix, M->traces.n);
    M->trace_ix.n = 0;
    for (size_t i = 0; i < M->traces.n; i++)
        M->trace_ix.v[M->trace_ix.n++] =
            (struct serial_ix){.serial = M->traces.v[i].serial, .index = (uint32_t)i};
    if (M->trace_ix.n > 1)
        qsort(M->trace_ix.v, M->trace_ix.n, sizeof *M->trace_ix.v, cmp_serial);
    for (size_t i = 1; i < M->trace_ix.n; i++)
        if (M->trace_ix.v[i].serial == M->trace_ix.v[i - 1].serial)
            pm_fail(M, "trace %u defined twice", M->trace_ix.v[i].serial);
    for (int k = 0; k < HPROF_NSECTIONS; k++) {
        struct hprof_section *s = &M->p->sections[k];
        if (k == HPROF_CPU_METHODS || k == HPROF_HEAP_CLASSES)
            continue;
        for (size_t i = 0; i < s->nrows; i++) {
            uint32_t serial = s->rows[i].trace;
            uint32_t ti = pm_trace_index(M, serial);
            if (ti == HPROF_NO_TRACE)
                pm_fail(M, "a %s row names trace %u, which the file does not define",
                        section_names[k], serial);
            s->rows[i].trace = ti;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Input                                                                                      */

/* stdin is copied to a temporary file so that it can be read twice (sniff, then parse) */
static int spool_stdin(struct pmodel *M)
{
    FILE *f = tmpfile();
    if (!f)
        pm_fail(M, "cannot create a temporary file: %s", strerror(errno));
    int fd = dup(fileno(f));
    fclose(f);
    if (fd < 0)
        pm_fail(M, "dup: %s", strerror(errno));
    M->fd = fd;
    char buf[65536];
    for (;;) {
        ssize_t r = read(0, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            pm_fail(M, "read error: %s", strerror(errno));
        if (r == 0)
            break;
        for (ssize_t o = 0; o < r;) {
            ssize_t w = write(fd, buf + o, (size_t)(r - o));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                pm_fail(M, "cannot spool stdin: %s", strerror(errno));
            o += w;
        }
    }
    if (lseek(fd, 0, SEEK_SET) != 0)
        pm_fail(M, "lseek: %s", strerror(errno));
    return fd;
}

static void load(struct pmodel *M)
{
    int fd = strcmp(M->path, "-") == 0 ? spool_stdin(M) : open(M->path, O_RDONLY);
    if (fd < 0)
        pm_fail(M, "%s", strerror(errno));
    M->fd = fd;
    unsigned char magic[2] = {0, 0};
    M->p->gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    int zfd = dup(fd);
    if (zfd < 0)
        pm_fail(M, "dup: %s", strerror(errno));
    M->gz = gzdopen(zfd, "rb");
    if (!M->gz) {
        close(zfd);
        pm_fail(M, "cannot read: %s", strerror(errno));
    }
    char head[32] = {0};
    int got = gzread(M->gz, head, 19);
    if (got < 0)
        pm_fail(M, "corrupt gzip data");
    if (got >= 19 && (memcmp(head, "JAVA PROFILE 1.0.2", 19) == 0 ||
                      memcmp(head, "JAVA PROFILE 1.0.1", 19) == 0)) {
        M->p->binary = true;
        gzclose(M->gz);
        M->gz = NULL;
        if (lseek(fd, 0, SEEK_SET) != 0)
            pm_fail(M, "lseek: %s", strerror(errno));
        pm_load_binary(M);
    } else if (got >= 19 && memcmp(head, "JAVA PROFILE 1.0.1,", 19) == 0) {
        gzrewind(M->gz);
        pm_load_ascii(M);
    } else if (got == 0) {
        pm_fail(M, "empty file: not an hprof profile");
    } else {
        pm_fail(M, "not an hprof profile (no \"JAVA PROFILE 1.0.x\" header)");
    }
    resolve_rows(M);
}

static void model_free(struct pmodel *M)
{
    strtab_free(&M->strs);
    strtab_free(&M->frame_keys);
    VFREE(M->traces);
    VFREE(M->tframes);
    VFREE(M->trace_ix);
    if (M->gz)
        gzclose(M->gz);
    if (M->fd >= 0)
        close(M->fd);
    pm_binary_free(M);
    pm_ascii_free(M);
}

void hprof_profile_free(struct hprof_profile *p)
{
    if (!p)
        return;
    struct pstore *st = p->priv;
    if (st) {
        for (size_t i = 0; i < st->nstrs; i++)
            free(st->strs[i]);
        free(st->strs);
        free(st->tframes);
        free(st);
    }
    free(p->frames);
    free(p->traces);
    for (int k = 0; k < HPROF_NSECTIONS; k++)
        free(p->sections[k].rows);
    free(p);
}

/* The model's strings and arrays move into the profile; the tables are dropped. */
static void hand_over(struct pmodel *M)
{
    struct hprof_profile *p = M->p;
    struct pstore *st = calloc(1, sizeof *st);
    if (!st)
        pm_fail(M, "out of memory");
    p->priv = st;
    st->strs = malloc((M->strs.n + 1) * sizeof *st->strs);
    if (!st->strs)
        pm_fail(M, "out of memory");
    for (size_t i = 0; i < M->strs.cap; i++)
        if (M->strs.e[i].s) {
            st->strs[st->nstrs++] = M->strs.e[i].s;
            M->strs.e[i].s = NULL;
        }
    st->tframes = M->tframes.v;
    M->tframes.v = NULL;
    p->frames = M->frames.v;
    p->nframes = M->frames.n;
    M->frames.v = NULL;
    p->traces = calloc(M->traces.n ? M->traces.n : 1, sizeof *p->traces);
    if (!p->traces)
        pm_fail(M, "out of memory");
    p->ntraces = M->traces.n;
    for (size_t i = 0; i < M->traces.n; i++) {
        const struct ptrace_b *t = &M->traces.v[i];
        p->traces[i] = (struct hprof_ptrace){.serial = t->serial,
                                             .thread = t->thread,
                                             .nframes = t->nframes,
                                             .frames = st->tframes + t->first};
    }
}

/* The one landing place of pm_fail: false with the message in M->err. */
static bool run(struct pmodel *M)
{
    if (setjmp(M->jb))
        return false;
    load(M);
    hand_over(M);
    return true;
}

struct hprof_profile *hprof_profile_load(const char *path, const struct hprof_load_opts *opts,
                                         char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0;
    struct pmodel *M = calloc(1, sizeof *M);
    struct hprof_profile *p = calloc(1, sizeof *p);
    if (!M || !p) {
        snprintf(err, errlen, "%s: out of memory", path);
        free(M);
        free(p);
        return NULL;
    }
    M->p = p;
    M->path = path;
    M->err = err;
    M->errlen = errlen;
    M->fd = -1;
    M->want = opts && opts->nth ? (long)opts->nth - 1 : -1;
    for (int k = 0; k < HPROF_NSECTIONS; k++)
        p->sections[k].kind = (enum hprof_section_kind)k;
    bool ok = run(M);
    free(M->frames.v);
    model_free(M);
    free(M);
    if (!ok) {
        hprof_profile_free(p);
        return NULL;
    }
    return p;
}

const struct hprof_section *hprof_profile_section(const struct hprof_profile *p,
                                                  enum hprof_section_kind k, const char *path,
                                                  char *err, size_t errlen)
{
    if ((unsigned)k >= HPROF_NSECTIONS) {
        snprintf(err, errlen, "%s: unknown section kind %d", path, (int)k);
        return NULL;
    }
    const struct hprof_section *s = &p->sections[k];
    if (s->present)
        return s;
    if (s->count == 0)
        snprintf(err, errlen, "%s: no %s section in this profile", path, section_names[k]);
    else
        snprintf(err, errlen, "%s: holds %u %s section%s, the one asked for is not among them",
                 path, s->count, section_names[k], s->count > 1 ? "s" : "");
    return NULL;
}

/*
 * profile_ascii.c: hprof ascii (format=a, doc/formats.md) into the profile model.
 *
 * Read line by line (zlib's gz reader: plain or gzip). The records start after the
 * "--------" line that ends the file header. TRACE blocks give traces and frames; each
 * "X BEGIN" ... "X END" section gives rows; HEAP DUMP's OBJ and ARR lines give the class
 * histogram. Everything else (THREAD START, WAIT, MONITOR DUMP, ...) is skipped.
 */
#include "profile_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct aline {
    char *s;
    size_t len, cap;
    uint64_t no;  /* line number, from 1 */
    bool newline; /* the line ended with '\n' */
};

/* The next line without its '\n'; false at the end of the input. */
static bool next_line(struct pmodel *M, struct aline *l)
{
    l->len = 0;
    l->newline = false;
    for (;;) {
        if (l->cap - l->len < 4096)
            l->s = pm_grow(M, l->s, &l->cap, l->len + 8192, 1);
        if (!gzgets(M->gz, l->s + l->len, (int)(l->cap - l->len))) {
            int errnum;
            const char *msg = gzerror(M->gz, &errnum);
            if (errnum != Z_OK && errnum != Z_STREAM_END)
                pm_fail(M, "%s gzip data at line %" PRIu64 ": %s",
                        errnum == Z_BUF_ERROR ? "truncated" : "corrupt", l->no + 1, msg);
            if (l->len == 0)
                return false;
            break;
        }
        l->len += strlen(l->s + l->len);
        if (l->len && l->s[l->len - 1] == '\n') {
            l->s[--l->len] = 0;
            l->newline = true;
            break;
        }
        if (gzeof(M->gz))
            break;
    }
    l->no++;
    return true;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "\tpkg.Class.method(Source.java:12)" -> a frame index */
static uint32_t parse_frame(struct pmodel *M, const char *s, uint64_t no)
{
    const char *open = strchr(s, '(');
    const char *close = open ? strrchr(open, ')') : NULL;
    if (!open || !close)
        pm_fail(M, "line %" PRIu64 ": bad frame \"%s\"", no, s);
    const char *dot = NULL;
    for (const char *p = s; p < open; p++)
        if (*p == '.')
            dot = p;
    const char *cls = s, *m = dot ? dot + 1 : s;
    size_t cl = dot ? (size_t)(dot - s) : 0, ml = (size_t)(open - m);
    const char *in = open + 1;
    size_t inl = (size_t)(close - in);
    const char *src = NULL;
    size_t srcl = 0;
    int32_t line = HPROF_LINE_UNKNOWN;
    if (inl == 13 && memcmp(in, "Native Method", 13) == 0) {
        line = HPROF_LINE_NATIVE;
    } else {
        const char *colon = memchr(in, ':', inl);
        size_t sl = colon ? (size_t)(colon - in) : inl;
        if (!(sl == 16 && memcmp(in, "<Unknown Source>", 16) == 0)) {
            src = in;
            srcl = sl;
        }
        if (!colon) {
            line = HPROF_LINE_NONE;
        } else if (colon[1] >= '0' && colon[1] <= '9') {
            line = (int32_t)strtol(colon + 1, NULL, 10);
        }
    }
    return pm_frame(M, cls, cl, m, ml, "", 0, src, srcl, line);
}

enum asect { A_NONE, A_SAMPLES, A_TIMES, A_METHODS, A_SITES, A_MONITOR, A_HEAP };

struct aparse {
    struct pmodel *M;
    enum asect in;   /* the section being read */
    const char *end; /* its END line */
    enum hprof_section_kind kind;
    struct hprof_section *s; /* where its rows go; NULL = not the one kept */
    uint64_t begin_line;
    double total; /* the BEGIN line's total */
    /* CPU TIME, CPU TIME BY METHOD, MONITOR TIME: each row's self percentage and the last
     * row's accumulated one, to share the total among the rows at the END line */
    PVEC(double) shares;
    double accum;
    /* the trace being read */
    bool in_trace;
    uint32_t serial, thread;
    PVEC(uint32_t) frames;
    /* the heap dump being read: class name -> row */
    struct strtab classes;
    struct strtab frame_lines; /* frame text -> frame index: each text parsed once */
    struct aline line;
};

static void classes_free(struct strtab *t);

static void end_trace(struct aparse *A)
{
    if (A->in_trace)
        pm_trace(A->M, A->serial, A->thread, A->frames.v, (uint32_t)A->frames.n);
    A->in_trace = false;
    A->frames.n = 0;
}

static uint64_t total_of(const char *line)
{
    const char *t = strstr(line, "(total = ");
    return t ? strtoull(t + 9, NULL, 10) : 0;
}

static void begin(struct aparse *A, const struct aline *l, enum asect in, enum hprof_section_kind k,
                  const char *end, uint64_t total)
{
    A->in = in;
    A->kind = k;
    A->end = end;
    A->begin_line = l->no;
    A->total = (double)total;
    A->s = pm_section_begin(A->M, k, total);
}

static uint64_t share_of(double pct, double total)
{
    double v = pct * total / 100.0;
    return v > 0 ? (uint64_t)llround(v) : 0;
}

/*
 * The ms of a CPU TIME, CPU TIME BY METHOD or MONITOR TIME row: its percentage of the header's
 * total (the file keeps no finer figure). Rounding each row on its own loses up to half a ms
 * per row (a third of the total in a run of many short methods), so the rows' part of the
 * total (total x the last row's accumulated percentage, all of it when no row was cut off) is
 * shared by largest remainder: the rows add up to it exactly and each is within 1 ms of its
 * percentage.
 */
struct remainder {
    double frac;
    size_t row;
};

static int cmp_remainder(const void *a, const void *b)
{
    const struct remainder *x = a, *y = b;
    if (x->frac != y->frac)
        return x->frac > y->frac ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void share_total(struct aparse *A)
{
    struct hprof_section *s = A->s;
    double sum = 0;
    for (size_t i = 0; i < A->shares.n; i++)
        sum += A->shares.v[i];
    if (!s || A->shares.n != s->nrows || sum <= 0 || A->total <= 0)
        return;
    double part = A->accum >= 100.0 ? A->total : llround(A->total * A->accum / 100.0);
    struct remainder *rem = malloc(s->nrows * sizeof *rem);
    if (!rem)
        pm_fail(A->M, "out of memory");
    uint64_t given = 0;
    for (size_t i = 0; i < s->nrows; i++) {
        double q = part * A->shares.v[i] / sum, f = floor(q);
        s->rows[i].v[0] = (uint64_t)f;
        given += (uint64_t)f;
        rem[i] = (struct remainder){q - f, i};
    }
    qsort(rem, s->nrows, sizeof *rem, cmp_remainder);
    for (size_t i = 0; given < (uint64_t)part && i < s->nrows; i++, given++)
        s->rows[rem[i].row].v[0]++;
    free(rem);
}

static void bad_row(struct aparse *A, const struct aline *l)
{
    pm_fail(A->M, "line %" PRIu64 ": bad %s row \"%.80s\"", l->no, hprof_section_name(A->kind),
            l->s);
}

static void heap_line(struct aparse *A, const struct aline *l)
{
    const char *name, *stop;
    const char *sz = strstr(l->s, "(sz=");
    if (starts(l->s, "OBJ ")) {
        name = strstr(l->s, ", class=");
        name = name ? name + 8 : NULL;
    } else if (starts(l->s, "ARR ")) {
        name = strstr(l->s, ", elem type=");
        name = name ? name + 12 : NULL;
    } else {
        return;
    }
    if (!sz || !name || !(stop = strpbrk(name, "@)")))
        pm_fail(A->M, "line %" PRIu64 ": bad HEAP DUMP line \"%.80s\"", l->no, l->s);
    uint64_t bytes = strtoull(sz + 4, NULL, 10);
    if (!A->s)
        return;
    bool fresh;
    struct strent *e = pm_intern(A->M, &A->classes, name, (size_t)(stop - name), &fresh);
    if (fresh) {
        struct hprof_row *r = pm_row(A->M, A->s);
        r->name = pm_str(A->M, name, (size_t)(stop - name));
        e->val = (uint32_t)(A->s->nrows - 1);
    }
    struct hprof_row *r = &A->s->rows[e->val];
    r->v[0]++;
    r->v[1] += bytes;
    A->s->total += bytes;
}

static int cmp_class_rows(const void *a, const void *b)
{
    const struct hprof_row *x = a, *y = b;
    if (x->v[0] != y->v[0])
        return x->v[0] > y->v[0] ? -1 : 1;
    if (x->v[1] != y->v[1])
        return x->v[1] > y->v[1] ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void section_line(struct aparse *A, const struct aline *l)
{
    const char *s = l->s;
    if (strcmp(s, A->end) == 0) {
        if (A->in == A_TIMES || A->in == A_METHODS || A->in == A_MONITOR)
            share_total(A);
        A->shares.n = 0;
        if (A->in == A_HEAP && A->s) {
            if (A->s->nrows > 1)
                if (A->s->nrows > 1)
                    qsort(A->s->rows, A->s->nrows, sizeof *A->s->rows, cmp_class_rows);
            classes_free(&A->classes);
        }
        A->in = A_NONE;
        return;
    }
    if (A->in == A_HEAP) {
        heap_line(A, l);
        return;
    }
    if (starts(s, "rank") || starts(s, " rank") || starts(s, "          percent") || !A->s)
        return;
    unsigned rank, trace;
    double self, accum;
    unsigned long long a, b, c, d;
    int used = 0;
    struct hprof_row r = {.trace = HPROF_NO_TRACE};
    switch (A->in) {
    case A_SAMPLES:
    case A_TIMES:
    case A_MONITOR:
        if (sscanf(s, "%u %lf%% %lf%% %llu %u %n", &rank, &self, &accum, &a, &trace, &used) < 5 ||
            !used)
            bad_row(A, l);
        r.trace = trace;
        if (A->in == A_SAMPLES) {
            r.v[0] = a;
        } else {
            r.v[0] = share_of(self, A->total); /* until share_total() */
            r.v[1] = a;
            *VPUSH(A->M, A->shares) = self;
            A->accum = accum;
        }
        if (A->in == A_MONITOR) {
            const char *nm = s + used;
            size_t n = strlen(nm);
            if (n > 7 && strcmp(nm + n - 7, " (Java)") == 0)
                n -= 7;
            r.name = pm_str(A->M, nm, n);
        }
        break;
    case A_METHODS: {
        if (sscanf(s, "%u %lf%% %lf%% %llu %llu %llu %n", &rank, &self, &accum, &a, &b, &c, &used) <
                6 ||
            !used)
            bad_row(A, l);
        const char *nm = s + used, *sp = strchr(nm, ' ');
        r.name = pm_str(A->M, nm, sp ? (size_t)(sp - nm) : strlen(nm));
        r.signature = pm_str(A->M, sp ? sp + 1 : "", sp ? strlen(sp + 1) : 0);
        r.v[0] = b, r.v[1] = c, r.v[2] = a; /* self_ms until share_total() */
        *VPUSH(A->M, A->shares) = self;
        A->accum = accum;
        break;
    }
    case A_SITES:
        if (sscanf(s, "%u %lf%% %lf%% %llu %llu %llu %llu %u %n", &rank, &self, &accum, &a, &b, &c,
                   &d, &trace, &used) < 8 ||
            !used)
            bad_row(A, l);
        r.trace = trace;
        r.name = pm_str(A->M, s + used, strlen(s + used));
        r.v[0] = c, r.v[1] = d, r.v[2] = a, r.v[3] = b;
        A->s->total += c;
        break;
    default:
        return;
    }
    *pm_row(A->M, A->s) = r;
}

static void record_line(struct aparse *A, const struct aline *l)
{
    const char *s = l->s;
    if (s[0] == '\t') {
        if (!A->in_trace)
            return; /* a field of MONITOR DUMP, ... */
        if (strcmp(s + 1, "<empty>") != 0) {
            bool fresh;
            struct strent *e = pm_intern(A->M, &A->frame_lines, s + 1, l->len - 1, &fresh);
            if (fresh)
                e->val = parse_frame(A->M, s + 1, l->no);
            *VPUSH(A->M, A->frames) = e->val;
        }
        return;
    }
    end_trace(A);
    if (starts(s, "TRACE ")) {
        char *e;
        A->serial = (uint32_t)strtoul(s + 6, &e, 10);
        if (e == s + 6 || *e != ':')
            pm_fail(A->M, "line %" PRIu64 ": bad TRACE line \"%.80s\"", l->no, s);
        const char *th = strstr(e, "(thread=");
        A->thread = th ? (uint32_t)strtoul(th + 8, NULL, 10) : 0;
        A->in_trace = true;
    } else if (starts(s, "CPU SAMPLES BEGIN")) {
        begin(A, l, A_SAMPLES, HPROF_CPU_SAMPLES, "CPU SAMPLES END", total_of(s));
    } else if (starts(s, "WALL SAMPLES BEGIN")) {
        begin(A, l, A_SAMPLES, HPROF_WALL_SAMPLES, "WALL SAMPLES END", total_of(s));
    } else if (starts(s, "CPU TIME (ms) BEGIN")) {
        begin(A, l, A_TIMES, HPROF_CPU_TIME, "CPU TIME (ms) END", total_of(s));
    } else if (starts(s, "CPU TIME BY METHOD (ms) BEGIN")) {
        begin(A, l, A_METHODS, HPROF_CPU_METHODS, "CPU TIME BY METHOD (ms) END", total_of(s));
    } else if (starts(s, "SITES BEGIN")) {
        begin(A, l, A_SITES, HPROF_SITES, "SITES END", 0);
    } else if (starts(s, "MONITOR TIME BEGIN")) {
        begin(A, l, A_MONITOR, HPROF_MONITOR_TIME, "MONITOR TIME END", total_of(s));
    } else if (starts(s, "HEAP DUMP BEGIN")) {
        begin(A, l, A_HEAP, HPROF_HEAP_CLASSES, "HEAP DUMP END", 0);
    }
}

static void classes_free(struct strtab *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->e[i].s);
    free(t->e);
    memset(t, 0, sizeof *t);
}

void pm_ascii_free(struct pmodel *M)
{
    struct aparse *A = M->ascii;
    if (!A)
        return;
    free(A->line.s);
    free(A->frames.v);
    free(A->shares.v);
    classes_free(&A->classes);
    classes_free(&A->frame_lines);
    free(A);
    M->ascii = NULL;
}

void pm_load_ascii(struct pmodel *M)
{
    struct aparse *A = calloc(1, sizeof *A);
    if (!A)
        pm_fail(M, "out of memory");
    M->ascii = A; /* freed by pm_ascii_free, also after a pm_fail */
    A->M = M;
    struct aline *l = &A->line;
    bool records = false, unterminated = false;
    while (next_line(M, l)) {
        unterminated = !l->newline;
        if (unterminated && A->in != A_NONE)
            break; /* reported below as truncated */
        if (!records) {
            records = strcmp(l->s, "--------") == 0;
            continue;
        }
        if (A->in != A_NONE)
            section_line(A, l);
        else
            record_line(A, l);
    }
    end_trace(A);
    if (!records)
        pm_fail(M, "no \"--------\" line ends the ascii header: not a complete hprof profile");
    if (A->in != A_NONE)
        pm_fail(M,
                "truncated: the file ends inside the %s section begun at line %" PRIu64
                " (no \"%s\")",
                hprof_section_name(A->kind), A->begin_line, A->end);
    if (unterminated)
        pm_fail(M, "truncated: the last line (%" PRIu64 ") has no end", l->no);
}

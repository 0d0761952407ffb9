/*
 * phd-read's classic checker: an OpenJ9 classic heap dump, checked against the rendering the
 * OpenJ9 VM writes (written from that behaviour and the format notes of doc/phd.md, not from
 * our writer):
 *
 *     // Version: TEXT
 *     0xADDRESS [SIZE] OBJ|CLS TYPE         ADDRESS: 16 upper-case hex digits; SIZE decimal
 *     \tREF REF ... \n                     after every record: a TAB, then each non-null
 *                                           reference as 0x + 16 hex digits + one space
 *     // Breakdown - Classes: C, Objects: O, ObjectArrays: A, PrimitiveArrays: P
 *     // EOF:  Total 'Objects',Refs(null) : T,R(N)
 *
 * and nothing after. Checked: every line's exact shape (a reference line with spaces instead
 * of the TAB, a missing or doubled reference line, a missing trailing space are errors), types
 * (instances, object arrays "[L...;" or "[[...", primitive arrays "[I" with an empty reference
 * line), unique addresses, references that name a record (dangling ones allowed up to
 * --allow-dangling), and the trailers against the records: the four counts, T = all records,
 * N <= R and R - N = the references written.
 */
#include "classic_read.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct crec {
    uint64_t addr;
    size_t line;
};

struct cfile {
    const char *path;
    uint64_t errors, reported, max_reports;
};

static void cviolation(struct cfile *f, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cviolation(struct cfile *f, size_t line, const char *fmt, ...)
{
    f->errors++;
    if (f->reported++ >= f->max_reports)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: line %zu: error: ", f->path, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A cursor over one line (without its newline). */
struct cur {
    const char *p, *end;
};

static bool lit(struct cur *c, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* A decimal without leading zeros (except "0") that fits 64 bits. */
static bool dec(struct cur *c, uint64_t *v)
{
    const char *s = c->p;
    uint64_t x = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        c->p++;
    }
    if (c->p == s || (c->p - s > 1 && *s == '0'))
        return false;
    *v = x;
    return true;
}

/* 0x and exactly 16 upper-case hex digits. */
static bool hex16(struct cur *c, uint64_t *v)
{
    if (!lit(c, "0x") || c->end - c->p < 16)
        return false;
    uint64_t x = 0;
    for (int i = 0; i < 16; i++) {
        char h = c->p[i];
        unsigned d;
        if (h >= '0' && h <= '9')
            d = (unsigned)(h - '0');
        else if (h >= 'A' && h <= 'F')
            d = (unsigned)(h - 'A' + 10);
        else
            return false;
        x = x << 4 | d;
    }
    c->p += 16;
    *v = x;
    return true;
}

enum ckind { C_CLASS, C_OBJECT, C_OBJ_ARRAY, C_PRIM_ARRAY, C_BAD };

/* What an OBJ type names: an instance, an object array or a primitive array. */
static enum ckind obj_kind(const char *t, size_t n)
{
    if (n == 0)
        return C_BAD;
    if (t[0] != '[')
        return C_OBJECT;
    size_t dims = 0;
    while (dims < n && t[dims] == '[')
        dims++;
    size_t rest = n - dims;
    if (rest == 1 && strchr("ZCFDBSIJ", t[dims]))
        return dims == 1 ? C_PRIM_ARRAY : C_OBJ_ARRAY;
    if (rest >= 3 && t[dims] == 'L' && t[n - 1] == ';')
        return C_OBJ_ARRAY;
    return C_BAD;
}

static int cmp_crec(const void *a, const void *b)
{
    uint64_t x = ((const struct crec *)a)->addr, y = ((const struct crec *)b)->addr;
    return x < y ? -1 : x > y;
}

static bool known(const struct crec *recs, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (recs[mid].addr < addr)
            lo = mid + 1;
        else if (recs[mid].addr > addr)
            hi = mid;
        else
            return true;
    }
    return false;
}

static void json_string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

int classic_read(const char *path, const uint8_t *data, size_t len, bool json, bool quiet,
                 uint64_t allow_dangling, uint64_t max_reports)
{
    struct cfile f = {path, 0, 0, max_reports};
    const char *text = (const char *)data, *end = text + len;
    struct crec *recs = NULL;
    uint64_t *refs = NULL;
    size_t nrecs = 0, recs_cap = 0, nrefs = 0, refs_cap = 0;
    uint64_t count[4] = {0, 0, 0, 0}, heap_bytes = 0;
    uint64_t t_count[4] = {0, 0, 0, 0}, t_total = 0, t_refs = 0, t_nulls = 0;
    const char *version = "";
    size_t version_len = 0;
    enum { S_VERSION, S_RECORD, S_REFS, S_EOF_TRAILER, S_END } state = S_VERSION;
    enum ckind last_kind = C_BAD;
    size_t line = 0;
    if (len == 0 || text[len - 1] != '\n')
        cviolation(&f, 0, "the file does not end with a newline");
    for (const char *p = text; p < end;) {
        const char *ls = p;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        struct cur c = {p, le};
        line++;
        p = nl ? nl + 1 : end;
        switch (state) {
        case S_VERSION:
            if (!lit(&c, "// Version: ") || c.p == c.end) {
                cviolation(&f, line, "not a classic heap dump: no \"// Version: \" line");
                p = end;
                break;
            }
            version = c.p;
            version_len = (size_t)(c.end - c.p);
            state = S_RECORD;
            break;
        case S_RECORD: {
            if (c.p < c.end && *c.p == '/') {
                uint64_t v[4];
                if (!lit(&c, "// Breakdown - Classes: ") || !dec(&c, &v[0]) ||
                    !lit(&c, ", Objects: ") || !dec(&c, &v[1]) || !lit(&c, ", ObjectArrays: ") ||
                    !dec(&c, &v[2]) || !lit(&c, ", PrimitiveArrays: ") || !dec(&c, &v[3]) ||
                    c.p != c.end) {
                    cviolation(&f, line, "bad \"// Breakdown\" trailer: %.*s", (int)(le - c.p),
                               c.p);
                    p = end;
                    break;
                }
                memcpy(t_count, v, sizeof v);
                state = S_EOF_TRAILER;
                break;
            }
            uint64_t a, size;
            bool cls = false;
            if (!hex16(&c, &a) || !lit(&c, " [") || !dec(&c, &size) || !lit(&c, "] ") ||
                !((cls = lit(&c, "CLS ")) || lit(&c, "OBJ ")) || c.p == c.end ||
                memchr(c.p, ' ', (size_t)(c.end - c.p)) ||
                memchr(c.p, '\t', (size_t)(c.end - c.p))) {
                cviolation(&f, line,
                           "not a record line (0x<16 hex digits> [<size>] OBJ|CLS <type>): %.*s",
                           (int)(le - ls), ls);
                state = S_REFS; /* resynchronise on the next line */
                last_kind = C_BAD;
                break;
            }
            enum ckind k = cls ? C_CLASS : obj_kind(c.p, (size_t)(c.end - c.p));
            if (k == C_BAD)
                cviolation(&f, line, "bad type %.*s", (int)(c.end - c.p), c.p);
            else
                count[k]++;
            if (!cls)
                heap_bytes += size;
            if (nrecs == recs_cap) {
                recs_cap = recs_cap ? 2 * recs_cap : 4096;
                struct crec *r = realloc(recs, recs_cap * sizeof *r);
                if (!r)
                    goto oom;
                recs = r;
            }
            recs[nrecs++] = (struct crec){a, line};
            last_kind = k;
            state = S_REFS;
            break;
        }
        case S_REFS: {
            if (!lit(&c, "\t")) {
                cviolation(&f, line, "a record must be followed by its TAB-led reference line");
                state = S_RECORD; /* read this line again, as a record */
                p = ls;
                line--;
                break;
            }
            uint64_t written = 0;
            while (c.p < c.end) {
                uint64_t r;
                if (!hex16(&c, &r) || !lit(&c, " ")) {
                    cviolation(&f, line,
                               "bad reference line: each reference is 0x, 16 hex "
                               "digits and one space");
                    break;
                }
                if (nrefs == refs_cap) {
                    refs_cap = refs_cap ? 2 * refs_cap : 16384;
                    uint64_t *n = realloc(refs, refs_cap * sizeof *n);
                    if (!n)
                        goto oom;
                    refs = n;
                }
                refs[nrefs++] = r;
                written++;
            }
            if (last_kind == C_PRIM_ARRAY && written)
                cviolation(&f, line, "a primitive array has references");
            state = S_RECORD;
            break;
        }
        case S_EOF_TRAILER:
            if (!lit(&c, "// EOF:  Total 'Objects',Refs(null) : ") || !dec(&c, &t_total) ||
                !lit(&c, ",") || !dec(&c, &t_refs) || !lit(&c, "(") || !dec(&c, &t_nulls) ||
                !lit(&c, ")") || c.p != c.end) {
                cviolation(&f, line, "bad \"// EOF:\" trailer");
                p = end;
                break;
            }
            state = S_END;
            break;
        case S_END:
            cviolation(&f, line, "text after the \"// EOF:\" trailer");
            p = end;
            break;
        }
    }
    if (state == S_REFS)
        cviolation(&f, line, "the last record has no reference line");
    if (state != S_END && state != S_VERSION)
        cviolation(&f, line, "no \"// Breakdown\" and \"// EOF:\" trailers: the file is cut short");
    if (state == S_END) {
        static const char *const names[4] = {"Classes", "Objects", "ObjectArrays",
                                             "PrimitiveArrays"};
        for (int i = 0; i < 4; i++)
            if (t_count[i] != count[i])
                cviolation(&f, line, "trailer says %s: %" PRIu64 ", the file has %" PRIu64,
                           names[i], t_count[i], count[i]);
        if (t_total != nrecs)
            cviolation(&f, line, "trailer says %" PRIu64 " 'Objects', the file has %zu records",
                       t_total, nrecs);
        if (t_nulls > t_refs || t_refs - t_nulls != nrefs)
            cviolation(&f, line,
                       "trailer says %" PRIu64 " references of which %" PRIu64
                       " null, but %zu non-null references are written",
                       t_refs, t_nulls, nrefs);
    }
    if (nrecs > 1)
        qsort(recs, nrecs, sizeof *recs, cmp_crec);
    for (size_t i = 1; i < nrecs; i++)
        if (recs[i].addr == recs[i - 1].addr)
            cviolation(&f, recs[i].line, "address 0x%016" PRIX64 " used by two records (line %zu)",
                       recs[i].addr, recs[i - 1].line);
    uint64_t dangling = 0;
    for (size_t i = 0; i < nrefs; i++)
        dangling += !known(recs, nrecs, refs[i]);
    if (dangling > allow_dangling)
        cviolation(&f, 0, "%" PRIu64 " references point to no record (allowed: %" PRIu64 ")",
                   dangling, allow_dangling);
    if (json) {
        printf("{\"file\":");
        json_string(path, strlen(path));
        printf(",\"format\":\"classic\",\"version\":");
        json_string(version, version_len);
        printf(",\"bytes\":%zu,\"records\":%zu,\"classes\":%" PRIu64 ",\"objects\":%" PRIu64
               ",\"object_arrays\":%" PRIu64 ",\"primitive_arrays\":%" PRIu64
               ",\"references\":%zu,\"reference_slots\":%" PRIu64 ",\"null_references\":%" PRIu64
               ",\"dangling\":%" PRIu64 ",\"heap_bytes\":%" PRIu64 ",\"errors\":%" PRIu64 "}\n",
               len, nrecs, count[C_CLASS], count[C_OBJECT], count[C_OBJ_ARRAY], count[C_PRIM_ARRAY],
               nrefs, t_refs, t_nulls, dangling, heap_bytes, f.errors);
    } else if (!quiet) {
        printf("%s: OpenJ9 classic heap dump, version: %.*s\n", path, (int)version_len, version);
        printf("records %zu: %" PRIu64 " classes, %" PRIu64 " objects, %" PRIu64
               " object arrays, %" PRIu64 " primitive arrays\n",
               nrecs, count[C_CLASS], count[C_OBJECT], count[C_OBJ_ARRAY], count[C_PRIM_ARRAY]);
        printf("references %zu written (%" PRIu64 " dangling), %" PRIu64 " slots, %" PRIu64
               " null; heap bytes %" PRIu64 "\n",
               nrefs, dangling, t_refs, t_nulls, heap_bytes);
        printf("errors %" PRIu64 "\n", f.errors);
    }
    free(recs);
    free(refs);
    return f.errors ? 1 : 0;
oom:
    free(recs);
    free(refs);
    fprintf(stderr, "phd-read: out of memory\n");
    return 2;
}

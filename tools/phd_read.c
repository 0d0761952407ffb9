/*
 * phd-read: check an OpenJ9 portable heap dump (PHD, versions 4-6) strictly and summarise it.
 * Written from the format notes (doc/phd.md, doc/tools.md), independently of the writer.
 *
 *     phd-read [--json] [--quiet] [--allow-dangling N] [--refs CLASS] [--max-reports N] FILE
 *
 * Every record kind is parsed; class addresses and references are resolved after the whole
 * file (writers put class records anywhere, the VM after the last object). Exit status:
 * 0 no errors (warnings allowed), 1 violations, 2 usage or I/O error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phd_histogram.h"

enum kind { K_OBJECT, K_OBJ_ARRAY, K_PRIM_ARRAY, K_CLASS };

struct rec {
    uint64_t addr;
    uint64_t cls;     /* objects: class; object arrays: element class; classes: super */
    uint64_t refs_at; /* index of the first reference in refs[] */
    uint32_t nrefs;
    uint8_t kind;
    uint8_t ptype;    /* primitive arrays: type code 0-7 */
    int64_t length;   /* arrays: true length (-1 unknown: tag 5) */
    uint64_t size;    /* arrays (v6): instance size in bytes; classes: instance size */
    uint64_t off;     /* file offset of the tag */
    uint32_t name_at; /* classes: offset into names */
};

struct file {
    const char *path;
    const uint8_t *p;
    size_t len, pos;
    bool truncated;
    /* header */
    int32_t version, flags;
    bool wide, all_hashed;
    unsigned unit;
    char full_version[256];
    /* records */
    struct rec *recs;
    size_t nrecs, cap;
    uint64_t *refs;
    size_t nrefs_all, refs_cap;
    char *names;
    size_t names_len, names_cap;
    /* checks */
    uint64_t errors, warnings, reported, max_reports;
    uint64_t dangling, allow_dangling, ibm_hidden_refs, hashes;
    bool oom;
};

static const char *const prim_names[8] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};

static void violation(struct file *f, bool error, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void violation(struct file *f, bool error, uint64_t off, const char *fmt, ...)
{
    if (error)
        f->errors++;
    else
        f->warnings++;
    if (f->reported++ >= f->max_reports)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%" PRIu64 ": %s: ", f->path, off, error ? "error" : "warning");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- reading ---------------------------------------------------------------------------- */

static bool need(struct file *f, size_t n)
{
    if (f->truncated || f->len - f->pos < n) {
        if (!f->truncated)
            violation(f, true, f->pos, "file ends inside a record (%zu more bytes needed)", n);
        f->truncated = true;
        return false;
    }
    return true;
}

static uint64_t rd(struct file *f, unsigned bytes)
{
    if (!need(f, bytes))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | f->p[f->pos + i];
    f->pos += bytes;
    return v;
}

static int64_t rd_signed(struct file *f, unsigned bytes)
{
    uint64_t v = rd(f, bytes);
    if (bytes < 8 && (v >> (8 * bytes - 1)) & 1)
        v |= ~UINT64_C(0) << (8 * bytes);
    return (int64_t)v;
}

static unsigned code_bytes(unsigned code)
{
    return 1u << code;
}

static unsigned word(const struct file *f)
{
    return f->wide ? 8 : 4;
}

static uint64_t wrap(const struct file *f, uint64_t a)
{
    return f->wide ? a : (a & 0xFFFFFFFFu);
}

/* UTF: u2 length, bytes. Copies at most cap - 1 bytes into out (if out). */
static size_t rd_utf(struct file *f, char *out, size_t cap, uint64_t off, const char *what)
{
    size_t n = (size_t)rd(f, 2);
    if (!need(f, n))
        return 0;
    const uint8_t *s = f->p + f->pos;
    if (memchr(s, 0, n))
        violation(f, true, off, "%s holds a NUL byte", what);
    for (size_t i = 0; i < n; i++)
        if ((s[i] & 0xF8) == 0xF0)
            violation(f, true, off, "%s holds a 4-byte UTF-8 sequence", what);
    if (out) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(out, s, k);
        out[k] = '\0';
    }
    f->pos += n;
    return n;
}

static struct rec *new_rec(struct file *f, uint8_t kind, uint64_t off)
{
    if (f->nrecs == f->cap) {
        size_t c = f->cap ? 2 * f->cap : 1024;
        struct rec *r = realloc(f->recs, c * sizeof *r);
        if (!r) {
            f->oom = true;
            return NULL;
        }
        f->recs = r;
        f->cap = c;
    }
    struct rec *r = &f->recs[f->nrecs++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->off = off;
    r->length = -1;
    r->refs_at = f->nrefs_all;
    return r;
}

static void add_ref(struct file *f, uint64_t target)
{
    if (f->nrefs_all == f->refs_cap) {
        size_t c = f->refs_cap ? 2 * f->refs_cap : 4096;
        uint64_t *r = realloc(f->refs, c * sizeof *r);
        if (!r) {
            f->oom = true;
            return;
        }
        f->refs = r;
        f->refs_cap = c;
    }
    f->refs[f->nrefs_all++] = target;
}

/* n references of code bytes each, relative to r->addr in units. */
static void rd_refs(struct file *f, struct rec *r, int64_t n, unsigned bytes)
{
    if (n < 0) {
        violation(f, true, r->off, "negative reference count %" PRId64, n);
        return;
    }
    if ((uint64_t)n > (f->len - f->pos) / bytes) {
        need(f, (size_t)n * bytes);
        return;
    }
    for (int64_t i = 0; i < n && !f->oom; i++) {
        int64_t d = rd_signed(f, bytes);
        add_ref(f, wrap(f, r->addr + (uint64_t)d * f->unit));
    }
    r->nrefs = (uint32_t)n;
}

static void rd_hash(struct file *f, bool own_bit)
{
    if (f->all_hashed) {
        rd(f, 2);
        f->hashes++;
    } else if (own_bit) {
        rd(f, 4);
        f->hashes++;
    }
}

static void rd_size(struct file *f, struct rec *r)
{
    if (f->version == 6)
        r->size = rd(f, 4) * 4;
}

/* ---- header ---------------------------------------------------------------------------- */

static bool read_header(struct file *f)
{
    char magic[32];
    size_t n = rd_utf(f, magic, sizeof magic, 0, "magic");
    if (f->truncated || n != 18 || strcmp(magic, "portable heap dump") != 0) {
        violation(f, true, 0, "not a PHD file (no \"portable heap dump\" at the start)");
        return false;
    }
    f->version = (int32_t)rd(f, 4);
    f->flags = (int32_t)rd(f, 4);
    if (f->version < 4 || f->version > 6) {
        violation(f, true, 20, "version %d (readers accept 4, 5 and 6)", f->version);
        return false;
    }
    if (f->flags & ~7)
        violation(f, true, 24, "unknown header flags %#x", (unsigned)f->flags);
    f->wide = f->flags & 1;
    f->all_hashed = (f->flags & 2) && (f->flags & 4);
    f->unit = (f->flags & 4) || f->version == 5 ? 4 : 8;
    if (rd(f, 1) != 1) {
        violation(f, true, f->pos - 1, "no start-of-header tag 1");
        return false;
    }
    for (;;) {
        uint64_t off = f->pos;
        unsigned tag = (unsigned)rd(f, 1);
        if (f->truncated)
            return false;
        if (tag == 2)
            break;
        if (tag == 4) {
            rd_utf(f, f->full_version, sizeof f->full_version, off, "full version");
            size_t l = strlen(f->full_version);
            if (l >= 4 && strcmp(f->full_version + l - 4, "0917") == 0)
                violation(f, true, off,
                          "full version ends in \"0917\": IBM's reader switches to a legacy "
                          "layout for 8-byte primitive arrays");
        } else if (tag == 1 || tag == 3) {
            rd(f, 4);
            rd(f, 4);
        } else {
            violation(f, true, off, "unknown header record tag %u", tag);
            return false;
        }
    }
    if (rd(f, 1) != 2) {
        violation(f, true, f->pos - 1, "no start-of-dump tag 2 after the header");
        return false;
    }
    return !f->truncated;
}

/* ---- records ----------------------------------------------------------------------------- */

struct state {
    uint64_t prev;
    uint64_t cache[4];
    bool cached[4];
    unsigned next;
};

static uint64_t advance(struct file *f, struct state *s, int64_t gap)
{
    s->prev = wrap(f, s->prev + (uint64_t)gap * f->unit);
    return s->prev;
}

static void cache_put(struct state *s, uint64_t cls)
{
    s->cache[s->next] = cls;
    s->cached[s->next] = true;
    s->next = (s->next + 1) % 4;
}

static int64_t check_length(struct file *f, uint64_t off, uint64_t raw, bool is_signed,
                            unsigned bytes)
{
    int64_t v = is_signed && bytes < 8 && (raw >> (8 * bytes - 1)) & 1
                    ? (int64_t)(raw | ~UINT64_C(0) << (8 * bytes))
                    : (int64_t)raw;
    if (v < 0 || v > INT32_MAX) {
        violation(f, true, off, "array length %" PRId64 " does not fit a Java int", v);
        return 0;
    }
    return v;
}

static void short_object(struct file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned slot = (tag >> 5) & 3, n = (tag >> 3) & 3, g = (tag >> 2) & 1, rr = tag & 3;
    int64_t gap = rd_signed(f, g ? 2 : 1);
    struct rec *r = new_rec(f, K_OBJECT, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    if (!s->cached[slot])
        violation(f, true, off, "short object record names class-cache slot %u, still empty", slot);
    r->cls = s->cache[slot];
    if (f->all_hashed)
        rd_hash(f, false);
    rd_refs(f, r, n, code_bytes(rr));
}

static void medium_object(struct file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned n = (tag >> 3) & 7, g = (tag >> 2) & 1, rr = tag & 3;
    int64_t gap = rd_signed(f, g ? 2 : 1);
    struct rec *r = new_rec(f, K_OBJECT, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    r->cls = rd(f, word(f));
    cache_put(s, r->cls);
    if (f->all_hashed)
        rd_hash(f, false);
    rd_refs(f, r, n, code_bytes(rr));
}

static void prim_array(struct file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned t = (tag >> 2) & 7, ss = tag & 3, b = code_bytes(ss);
    int64_t gap = rd_signed(f, b);
    uint64_t raw = rd(f, b);
    struct rec *r = new_rec(f, K_PRIM_ARRAY, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    r->ptype = (uint8_t)t;
    /* u1 and u2 lengths are unsigned (128-255, 32768-65535), s4 and s8 signed */
    r->length = check_length(f, off, raw, ss >= 2, b);
    if (f->all_hashed)
        rd_hash(f, false);
    rd_size(f, r);
}

/* The part long object and object array records share: flags, address gap, class, hash and
 * the references. NULL when the record could not be stored (the rest is then not read). */
static struct rec *long_record_head(struct file *f, struct state *s, uint64_t off, uint8_t kind,
                                    const char *what)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x0C)
        violation(f, true, off, "%s record flags %#x: bits 0x0C must be 0", what, fl);
    int64_t gap = rd_signed(f, code_bytes(fl >> 6));
    struct rec *r = new_rec(f, kind, off);
    if (!r)
        return NULL;
    r->addr = advance(f, s, gap);
    r->cls = rd(f, word(f));
    rd_hash(f, fl & 0x02);
    int64_t n = (int32_t)rd(f, 4);
    rd_refs(f, r, n, code_bytes((fl >> 4) & 3));
    return r;
}

static void long_object(struct file *f, struct state *s, uint64_t off)
{
    struct rec *r = long_record_head(f, s, off, K_OBJECT, "long object");
    if (r)
        cache_put(s, r->cls);
}

static void obj_array(struct file *f, struct state *s, unsigned tag, uint64_t off)
{
    struct rec *r = long_record_head(f, s, off, K_OBJ_ARRAY, "object array");
    if (!r)
        return;
    if (tag == 8) {
        r->length = (int32_t)rd(f, 4);
        if (r->length < 0 || r->length < (int64_t)r->nrefs)
            violation(f, true, off,
                      "object array true length %" PRId64 " below its %u stored references",
                      r->length, r->nrefs);
    } else if (f->version == 6) {
        violation(f, false, off, "old object array record (tag 5) in a version 6 dump");
    }
    rd_size(f, r);
}

static void class_record(struct file *f, struct state *s, uint64_t off)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x07)
        violation(f, true, off, "class record flags %#x: bits 0x07 must be 0", fl);
    int64_t gap = rd_signed(f, code_bytes(fl >> 6));
    struct rec *r = new_rec(f, K_CLASS, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    int32_t isize = (int32_t)rd(f, 4);
    if (isize < 0)
        violation(f, true, off, "class instance size %d is negative", isize);
    r->size = isize < 0 ? 0 : (uint64_t)isize;
    rd_hash(f, fl & 0x08);
    r->cls = rd(f, word(f));
    char name[65536];
    size_t n = rd_utf(f, name, sizeof name, off, "class name");
    if (n == 0 && !f->truncated)
        violation(f, true, off, "class record with an empty name");
    if (f->names_len + n + 1 > f->names_cap) {
        size_t c = f->names_cap ? 2 * f->names_cap : 65536;
        while (c < f->names_len + n + 1)
            c *= 2;
        char *p = realloc(f->names, c);
        if (!p) {
            f->oom = true;
            return;
        }
        f->names = p;
        f->names_cap = c;
    }
    r->name_at = (uint32_t)f->names_len;
    memcpy(f->names + f->names_len, name, n < sizeof name ? n : sizeof name - 1);
    f->names_len += (n < sizeof name ? n : sizeof name - 1);
    f->names[f->names_len++] = '\0';
    int64_t nr = (int32_t)rd(f, 4);
    rd_refs(f, r, nr, code_bytes((fl >> 4) & 3));
}

static void long_prim_array(struct file *f, struct state *s, uint64_t off)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x0D)
        violation(f, true, off, "long primitive array flags %#x: bits 0x0D must be 0", fl);
    bool w = fl & 0x10;
    int64_t gap = rd_signed(f, w ? word(f) : 1);
    uint64_t raw = rd(f, w ? word(f) : 1);
    struct rec *r = new_rec(f, K_PRIM_ARRAY, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    r->ptype = (uint8_t)(fl >> 5);
    r->length = check_length(f, off, raw, false, w ? word(f) : 1);
    rd_hash(f, fl & 0x02);
    rd_size(f, r);
}

static void read_records(struct file *f)
{
    struct state s;
    memset(&s, 0, sizeof s);
    for (;;) {
        if (f->oom || f->truncated)
            return;
        uint64_t off = f->pos;
        if (f->pos == f->len) {
            violation(f, true, off, "file ends without the end-of-dump tag 3");
            return;
        }
        unsigned tag = (unsigned)rd(f, 1);
        if (tag & 0x80)
            short_object(f, &s, tag, off);
        else if (tag & 0x40)
            medium_object(f, &s, tag, off);
        else if (tag & 0x20)
            prim_array(f, &s, tag, off);
        else if (tag == 3)
            break;
        else if (tag == 4)
            long_object(f, &s, off);
        else if (tag == 5 || tag == 8)
            obj_array(f, &s, tag, off);
        else if (tag == 6)
            class_record(f, &s, off);
        else if (tag == 7)
            long_prim_array(f, &s, off);
        else {
            violation(f, true, off, "unknown record tag %#x", tag);
            return;
        }
    }
    if (f->pos != f->len)
        violation(f, true, f->pos, "%zu bytes after the end-of-dump tag", f->len - f->pos);
}

/* ---- resolving ----------------------------------------------------------------------------- */

static const struct file *sort_file;

static int cmp_addr(const void *a, const void *b)
{
    uint64_t x = sort_file->recs[*(const size_t *)a].addr,
             y = sort_file->recs[*(const size_t *)b].addr;
    return x < y ? -1 : x > y;
}

struct index {
    size_t *by_addr;
    size_t n;
};

static const struct rec *find(const struct file *f, const struct index *ix, uint64_t addr)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->recs[ix->by_addr[mid]].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->n && f->recs[ix->by_addr[lo]].addr == addr ? &f->recs[ix->by_addr[lo]] : NULL;
}

static const char *class_name(const struct file *f, const struct rec *c)
{
    return f->names + c->name_at;
}

/* The name an object is counted under: its class, its array class ("[Ljava/lang/String;",
 * "[[I"), or a primitive array's descriptor. buf needs 65540 bytes. */
static const char *type_name(const struct file *f, const struct index *ix, const struct rec *r,
                             char *buf, size_t cap)
{
    if (r->kind == K_PRIM_ARRAY)
        return prim_names[r->ptype & 7];
    if (r->kind == K_CLASS)
        return "java/lang/Class";
    const struct rec *c = find(f, ix, r->cls);
    const char *n = c && c->kind == K_CLASS ? class_name(f, c) : "?";
    if (r->kind == K_OBJECT)
        return n;
    snprintf(buf, cap, n[0] == '[' ? "[%s" : "[L%s;", n);
    return buf;
}

/* The bytes a record is counted with: instances at their class's instance size, arrays at
 * their own (0 where the class is missing: a violation reported elsewhere). */
static uint64_t rec_bytes(const struct file *f, const struct index *ix, const struct rec *r)
{
    if (r->kind == K_OBJECT) {
        const struct rec *c = find(f, ix, r->cls);
        return c && c->kind == K_CLASS ? c->size : 0;
    }
    return r->kind == K_CLASS ? 0 : r->size;
}

static int cmp_row_name(const void *a, const void *b)
{
    return strcmp(((const struct phd_class_count *)a)->name,
                  ((const struct phd_class_count *)b)->name);
}

static int cmp_row_bytes(const void *a, const void *b)
{
    const struct phd_class_count *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(o, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(o, "\\u%04x", ch);
        else
            fputc(ch, o);
    }
    fputc('"', o);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One row per name (counts and bytes summed), largest bytes first; returns the new count. */
static size_t merge_rows(struct phd_class_count *rows, size_t nrows)
{
    qsort(rows, nrows, sizeof *rows, cmp_row_name);
    size_t m = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (m && strcmp(rows[m - 1].name, rows[i].name) == 0) {
            rows[m - 1].count += rows[i].count;
            rows[m - 1].bytes += rows[i].bytes;
            free(rows[i].name);
        } else {
            rows[m++] = rows[i];
        }
    }
    qsort(rows, m, sizeof *rows, cmp_row_bytes);
    return m;
}

/* The whole file in memory; NULL with a message in err. */
static uint8_t *slurp(const char *path, size_t *lenp, char *err, size_t errlen)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            uint8_t *d = realloc(data, cap);
            if (!d) {
                snprintf(err, errlen, "out of memory");
                free(data);
                fclose(in);
                return NULL;
            }
            data = d;
        }
        size_t got = fread(data + len, 1, cap - len, in);
        len += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(in);
    fclose(in);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        free(data);
        return NULL;
    }
    *lenp = len;
    return data;
}

/* Records by address (f->nrecs entries); false when out of memory. */
static bool build_index(struct file *f, struct index *ix)
{
    ix->by_addr = malloc((f->nrecs ? f->nrecs : 1) * sizeof(size_t));
    ix->n = f->nrecs;
    if (!ix->by_addr)
        return false;
    for (size_t i = 0; i < f->nrecs; i++)
        ix->by_addr[i] = i;
    sort_file = f;
    qsort(ix->by_addr, ix->n, sizeof *ix->by_addr, cmp_addr);
    return true;
}

/* What reading a file allocated: its records, references, names, index and bytes. */
static void free_file(struct file *f, struct index *ix)
{
    free(ix->by_addr);
    free(f->recs);
    free(f->refs);
    free(f->names);
    free((void *)f->p);
}

bool phd_looks_like(const unsigned char *p, size_t n)
{
    return n >= 20 && p[0] == 0 && p[1] == 18 && memcmp(p + 2, "portable heap dump", 18) == 0;
}

void phd_histogram_free(struct phd_class_count *rows, size_t nrows)
{
    for (size_t i = 0; rows && i < nrows; i++)
        free(rows[i].name);
    free(rows);
}

int phd_histogram(const char *path, struct phd_class_count **rowsp, size_t *nrowsp, char *err,
                  size_t errlen)
{
    struct file f;
    memset(&f, 0, sizeof f);
    f.path = path;
    f.max_reports = 0; /* count, print nothing */
    uint8_t *data = slurp(path, &f.len, err, errlen);
    if (!data)
        return -1;
    f.p = data;
    bool is_phd = phd_looks_like(data, f.len);
    if (is_phd && read_header(&f))
        read_records(&f);
    struct index ix = {NULL, 0};
    struct phd_class_count *rows = NULL;
    size_t nrows = 0;
    char *buf = malloc(65540);
    int rc = -1;
    if (!is_phd) {
        snprintf(err, errlen, "%s: not a PHD file (no \"portable heap dump\" at the start)", path);
        goto out;
    }
    if (f.oom || !buf || !build_index(&f, &ix) ||
        !(rows = calloc(f.nrecs ? f.nrecs : 1, sizeof *rows))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (f.errors) {
        snprintf(err, errlen,
                 "%s: %" PRIu64 " violation%s of the PHD format (phd-read %s lists them)", path,
                 f.errors, f.errors == 1 ? "" : "s", path);
        goto out;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct rec *r = &f.recs[i];
        if (r->kind == K_CLASS)
            continue;
        rows[nrows].name = strdup(type_name(&f, &ix, r, buf, 65540));
        rows[nrows].count = 1;
        rows[nrows].bytes = rec_bytes(&f, &ix, r);
        if (!rows[nrows++].name) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    *rowsp = rows;
    *nrowsp = merge_rows(rows, nrows);
    rows = NULL;
    rc = 0;
out:
    phd_histogram_free(rows, nrows);
    free(buf);
    free_file(&f, &ix);
    return rc;
}

/* The unit tests link this file and call it under another name. */
#ifndef PHD_READ_MAIN
#define PHD_READ_MAIN main
#endif
int PHD_READ_MAIN(int argc, char **argv);

int PHD_READ_MAIN(int argc, char **argv)
{
    bool json = false, quiet = false;
    const char *refs_of = NULL;
    struct file f;
    memset(&f, 0, sizeof f);
    f.max_reports = 20;
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"allow-dangling", required_argument, NULL, 'd'},
                                          {"refs", required_argument, NULL, 'r'},
                                          {"max-reports", required_argument, NULL, 'm'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 'j':
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'd':
            f.allow_dangling = strtoull(optarg, NULL, 10);
            break;
        case 'r':
            refs_of = optarg;
            break;
        case 'm':
            f.max_reports = strtoull(optarg, NULL, 10);
            break;
        default:
            fprintf(ch == 'h' ? stdout : stderr,
                    "usage: phd-read [--json] [--quiet] [--allow-dangling N] [--refs CLASS] "
                    "[--max-reports N] FILE\n"
                    "  --json              print the summary as one JSON object\n"
                    "  --quiet             print no summary, only violations\n"
                    "  --allow-dangling N  up to N references to no record are not errors\n"
                    "  --refs CLASS        list the references of every object of CLASS\n"
                    "                      (slash form, e.g. pkg/Node or [Ljava/lang/Object;)\n"
                    "exit: 0 valid, 1 violations, 2 usage or I/O error\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "phd-read: one FILE expected (--help)\n");
        return 2;
    }
    f.path = argv[optind];
    char msg[300];
    uint8_t *data = slurp(f.path, &f.len, msg, sizeof msg);
    if (!data) {
        fprintf(stderr, "phd-read: %s\n", msg);
        return 2;
    }
    f.p = data;

    if (read_header(&f))
        read_records(&f);
    if (f.oom) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }

    /* addresses: unique, multiples of the unit */
    struct index ix;
    if (!build_index(&f, &ix)) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct rec *r = &f.recs[ix.by_addr[i]];
        if (r->addr % f.unit)
            violation(&f, true, r->off, "address %#" PRIx64 " is no multiple of %u", r->addr,
                      f.unit);
        if (i && f.recs[ix.by_addr[i - 1]].addr == r->addr)
            violation(&f, true, r->off,
                      "address %#" PRIx64 " used by two records (the other at "
                      "offset %" PRIu64 ")",
                      r->addr, f.recs[ix.by_addr[i - 1]].off);
    }

    /* classes, references, counts */
    uint64_t n_obj = 0, n_oarr = 0, n_parr = 0, n_cls = 0, bytes = 0;
    struct phd_class_count *rows = calloc(f.nrecs ? f.nrecs : 1, sizeof *rows);
    size_t nrows = 0;
    char *buf = malloc(65540);
    char **refs_lines = NULL;
    size_t nlines = 0;
    if (!rows || !buf) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct rec *r = &f.recs[i];
        uint64_t b = rec_bytes(&f, &ix, r);
        switch (r->kind) {
        case K_CLASS:
            n_cls++;
            if (r->cls) {
                const struct rec *sup = find(&f, &ix, r->cls);
                if (!sup || sup->kind != K_CLASS)
                    violation(&f, true, r->off,
                              "class %s: superclass %#" PRIx64 " is no class record",
                              class_name(&f, r), r->cls);
            }
            break;
        case K_OBJECT:
        case K_OBJ_ARRAY: {
            const struct rec *c = find(&f, &ix, r->cls);
            if (!c || c->kind != K_CLASS)
                violation(&f, true, r->off,
                          "%s at %#" PRIx64 ": class %#" PRIx64 " is no class record",
                          r->kind == K_OBJECT ? "object" : "object array", r->addr, r->cls);
            if (r->kind == K_OBJECT)
                n_obj++;
            else
                n_oarr++;
            if (r->nrefs && f.refs[r->refs_at] == r->cls) {
                f.ibm_hidden_refs++;
                violation(&f, false, r->off,
                          "first reference equals the record's class address: IBM's reader "
                          "drops it");
            }
            break;
        }
        case K_PRIM_ARRAY:
            n_parr++;
            break;
        }
        for (uint32_t k = 0; k < r->nrefs; k++) {
            if (!find(&f, &ix, f.refs[r->refs_at + k]))
                f.dangling++;
        }
        bytes += b;
        if (r->kind != K_CLASS) {
            const char *tn = type_name(&f, &ix, r, buf, 65540);
            rows[nrows].name = strdup(tn);
            rows[nrows].count = 1;
            rows[nrows].bytes = b;
            if (!rows[nrows++].name) {
                fprintf(stderr, "phd-read: out of memory\n");
                return 2;
            }
            if (refs_of && strcmp(tn, refs_of) == 0) {
                /* "target target ..." sorted, one line per object */
                char **t = malloc((r->nrefs ? r->nrefs : 1) * sizeof *t);
                size_t tl = 1;
                for (uint32_t k = 0; t && k < r->nrefs; k++) {
                    const struct rec *x = find(&f, &ix, f.refs[r->refs_at + k]);
                    char b2[65540];
                    const char *nm = !x                   ? "?"
                                     : x->kind == K_CLASS ? class_name(&f, x)
                                                          : type_name(&f, &ix, x, b2, sizeof b2);
                    if (x && x->kind == K_CLASS) {
                        snprintf(b2, sizeof b2, "class %s", class_name(&f, x));
                        nm = b2;
                    }
                    t[k] = strdup(nm);
                    tl += strlen(nm) + 1;
                }
                if (t) {
                    qsort(t, r->nrefs, sizeof *t, cmp_str);
                    char *line = calloc(1, tl);
                    for (uint32_t k = 0; line && k < r->nrefs; k++) {
                        if (k)
                            strcat(line, " ");
                        strcat(line, t[k]);
                    }
                    for (uint32_t k = 0; k < r->nrefs; k++)
                        free(t[k]);
                    free(t);
                    char **nl = realloc(refs_lines, (nlines + 1) * sizeof *nl);
                    if (nl && line) {
                        refs_lines = nl;
                        refs_lines[nlines++] = line;
                    }
                }
            }
        }
    }
    if (f.dangling > f.allow_dangling)
        violation(&f, true, 0, "%" PRIu64 " references point to no record (allowed: %" PRIu64 ")",
                  f.dangling, f.allow_dangling);

    nrows = merge_rows(rows, nrows);
    if (refs_lines)
        qsort(refs_lines, nlines, sizeof *refs_lines, cmp_str);

    if (json) {
        printf("{\"file\":");
        json_str(stdout, f.path);
        printf(",\"version\":%d,\"flags\":%d,\"unit\":%u,\"full_version\":", f.version, f.flags,
               f.unit);
        json_str(stdout, f.full_version);
        printf(",\"bytes\":%zu,\"records\":%zu,\"classes\":%" PRIu64 ",\"objects\":%" PRIu64
               ",\"object_arrays\":%" PRIu64 ",\"primitive_arrays\":%" PRIu64
               ",\"references\":%zu,\"dangling\":%" PRIu64 ",\"hashes\":%" PRIu64
               ",\"ibm_hidden_references\":%" PRIu64 ",\"heap_bytes\":%" PRIu64
               ",\"errors\":%" PRIu64 ",\"warnings\":%" PRIu64 ",\"class_counts\":{",
               f.len, f.nrecs, n_cls, n_obj, n_oarr, n_parr, f.nrefs_all, f.dangling, f.hashes,
               f.ibm_hidden_refs, bytes, f.errors, f.warnings);
        for (size_t i = 0; i < nrows; i++) {
            if (i)
                putchar(',');
            json_str(stdout, rows[i].name);
            printf(":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", rows[i].count, rows[i].bytes);
        }
        printf("},\"refs\":[");
        for (size_t i = 0; i < nlines; i++) {
            if (i)
                putchar(',');
            json_str(stdout, refs_lines[i]);
        }
        printf("]}\n");
    } else if (!quiet) {
        printf("%s: PHD version %d, flags %d (%s-bit%s%s), unit %u bytes\n", f.path, f.version,
               f.flags, f.wide ? "64" : "32", f.flags & 4 ? ", J9" : "",
               f.flags & 2 ? ", all hashed" : "", f.unit);
        printf("full version: %s\n", f.full_version[0] ? f.full_version : "(none)");
        printf("records %zu: %" PRIu64 " classes, %" PRIu64 " objects, %" PRIu64
               " object arrays, %" PRIu64 " primitive arrays\n",
               f.nrecs, n_cls, n_obj, n_oarr, n_parr);
        printf("references %zu (%" PRIu64 " dangling), hashes %" PRIu64 ", heap bytes %" PRIu64
               "\n",
               f.nrefs_all, f.dangling, f.hashes, bytes);
        printf("%12s %14s  %s\n", "count", "bytes", "class");
        for (size_t i = 0; i < nrows; i++)
            printf("%12" PRIu64 " %14" PRIu64 "  %s\n", rows[i].count, rows[i].bytes, rows[i].name);
        for (size_t i = 0; i < nlines; i++)
            printf("refs of %s: %s\n", refs_of, refs_lines[i]);
        printf("errors %" PRIu64 ", warnings %" PRIu64 "\n", f.errors, f.warnings);
    }
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].name);
    for (size_t i = 0; i < nlines; i++)
        free(refs_lines[i]);
    free(refs_lines);
    free(rows);
    free(buf);
    free_file(&f, &ix);
    return f.errors ? 1 : 0;
}

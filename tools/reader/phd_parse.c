/*
 * phd_parse.c: the PHD reader of phd_parse.h: bytes, header, records, checks, the index.
 */
#include "phd_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const prim_names[8] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};

void phd_violation(struct phd_file *f, bool error, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    if (error && !f->errors++) {
        int k = snprintf(f->first_error, sizeof f->first_error, "offset %" PRIu64 ": ", off);
        va_start(ap, fmt);
        if (k > 0 && (size_t)k < sizeof f->first_error)
            vsnprintf(f->first_error + k, sizeof f->first_error - (size_t)k, fmt, ap);
        va_end(ap);
    } else if (!error) {
        f->warnings++;
    }
    if (f->reported++ >= f->max_reports)
        return;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%" PRIu64 ": %s: ", f->path, off, error ? "error" : "warning");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- reading ---------------------------------------------------------------------------- */

static bool need(struct phd_file *f, size_t n)
{
    if (f->truncated || f->len - f->pos < n) {
        if (!f->truncated)
            phd_violation(f, true, f->pos, "file ends inside a record (%zu more bytes needed)", n);
        f->truncated = true;
        return false;
    }
    return true;
}

static uint64_t rd(struct phd_file *f, unsigned bytes)
{
    if (!need(f, bytes))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | f->p[f->pos + i];
    f->pos += bytes;
    return v;
}

static int64_t rd_signed(struct phd_file *f, unsigned bytes)
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

static unsigned word(const struct phd_file *f)
{
    return f->wide ? 8 : 4;
}

static uint64_t wrap(const struct phd_file *f, uint64_t a)
{
    return f->wide ? a : (a & 0xFFFFFFFFu);
}

/* UTF: u2 length, bytes. Copies at most cap - 1 bytes into out (if out). */
static size_t rd_utf(struct phd_file *f, char *out, size_t cap, uint64_t off, const char *what)
{
    size_t n = (size_t)rd(f, 2);
    if (!need(f, n))
        return 0;
    const uint8_t *s = f->p + f->pos;
    if (memchr(s, 0, n))
        phd_violation(f, true, off, "%s holds a NUL byte", what);
    for (size_t i = 0; i < n; i++)
        if ((s[i] & 0xF8) == 0xF0)
            phd_violation(f, true, off, "%s holds a 4-byte UTF-8 sequence", what);
    if (out) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(out, s, k);
        out[k] = '\0';
    }
    f->pos += n;
    return n;
}

static struct phd_rec *new_rec(struct phd_file *f, uint8_t kind, uint64_t off)
{
    if (f->nrecs == f->cap) {
        size_t c = f->cap ? 2 * f->cap : 1024;
        struct phd_rec *r = realloc(f->recs, c * sizeof *r);
        if (!r) {
            f->oom = true;
            return NULL;
        }
        f->recs = r;
        f->cap = c;
    }
    struct phd_rec *r = &f->recs[f->nrecs++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->off = off;
    r->length = -1;
    r->refs_at = f->nrefs_all;
    return r;
}

static void add_ref(struct phd_file *f, uint64_t target)
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
static void rd_refs(struct phd_file *f, struct phd_rec *r, int64_t n, unsigned bytes)
{
    if (n < 0) {
        phd_violation(f, true, r->off, "negative reference count %" PRId64, n);
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

static void rd_hash(struct phd_file *f, bool own_bit)
{
    if (f->all_hashed) {
        rd(f, 2);
        f->hashes++;
    } else if (own_bit) {
        rd(f, 4);
        f->hashes++;
    }
}

static void rd_size(struct phd_file *f, struct phd_rec *r)
{
    if (f->version == 6)
        r->size = rd(f, 4) * 4;
}

/* ---- header ---------------------------------------------------------------------------- */

bool phd_read_header(struct phd_file *f)
{
    char magic[32];
    size_t n = rd_utf(f, magic, sizeof magic, 0, "magic");
    if (f->truncated || n != 18 || strcmp(magic, "portable heap dump") != 0) {
        phd_violation(f, true, 0, "not a PHD file (no \"portable heap dump\" at the start)");
        return false;
    }
    f->version = (int32_t)rd(f, 4);
    f->flags = (int32_t)rd(f, 4);
    if (f->version < 4 || f->version > 6) {
        phd_violation(f, true, 20, "version %d (readers accept 4, 5 and 6)", f->version);
        return false;
    }
    if (f->flags & ~7)
        phd_violation(f, true, 24, "unknown header flags %#x", (unsigned)f->flags);
    f->wide = f->flags & 1;
    f->all_hashed = (f->flags & 2) && (f->flags & 4);
    f->unit = (f->flags & 4) || f->version == 5 ? 4 : 8;
    if (rd(f, 1) != 1) {
        phd_violation(f, true, f->pos - 1, "no start-of-header tag 1");
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
                phd_violation(f, true, off,
                              "full version ends in \"0917\": IBM's reader switches to a legacy "
                              "layout for 8-byte primitive arrays");
        } else if (tag == 1 || tag == 3) {
            rd(f, 4);
            rd(f, 4);
        } else {
            phd_violation(f, true, off, "unknown header record tag %u", tag);
            return false;
        }
    }
    if (rd(f, 1) != 2) {
        phd_violation(f, true, f->pos - 1, "no start-of-dump tag 2 after the header");
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

static uint64_t advance(struct phd_file *f, struct state *s, int64_t gap)
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

static int64_t check_length(struct phd_file *f, uint64_t off, uint64_t raw, bool is_signed,
                            unsigned bytes)
{
    int64_t v = is_signed && bytes < 8 && (raw >> (8 * bytes - 1)) & 1
                    ? (int64_t)(raw | ~UINT64_C(0) << (8 * bytes))
                    : (int64_t)raw;
    if (v < 0 || v > INT32_MAX) {
        phd_violation(f, true, off, "array length %" PRId64 " does not fit a Java int", v);
        return 0;
    }
    return v;
}

static void short_object(struct phd_file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned slot = (tag >> 5) & 3, n = (tag >> 3) & 3, g = (tag >> 2) & 1, rr = tag & 3;
    int64_t gap = rd_signed(f, g ? 2 : 1);
    struct phd_rec *r = new_rec(f, PHD_K_OBJECT, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    if (!s->cached[slot])
        phd_violation(f, true, off, "short object record names class-cache slot %u, still empty",
                      slot);
    r->cls = s->cache[slot];
    if (f->all_hashed)
        rd_hash(f, false);
    rd_refs(f, r, n, code_bytes(rr));
}

static void medium_object(struct phd_file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned n = (tag >> 3) & 7, g = (tag >> 2) & 1, rr = tag & 3;
    int64_t gap = rd_signed(f, g ? 2 : 1);
    struct phd_rec *r = new_rec(f, PHD_K_OBJECT, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    r->cls = rd(f, word(f));
    cache_put(s, r->cls);
    if (f->all_hashed)
        rd_hash(f, false);
    rd_refs(f, r, n, code_bytes(rr));
}

static void prim_array(struct phd_file *f, struct state *s, unsigned tag, uint64_t off)
{
    unsigned t = (tag >> 2) & 7, ss = tag & 3, b = code_bytes(ss);
    int64_t gap = rd_signed(f, b);
    uint64_t raw = rd(f, b);
    struct phd_rec *r = new_rec(f, PHD_K_PRIM_ARRAY, off);
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
static struct phd_rec *long_record_head(struct phd_file *f, struct state *s, uint64_t off,
                                        uint8_t kind, const char *what)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x0C)
        phd_violation(f, true, off, "%s record flags %#x: bits 0x0C must be 0", what, fl);
    int64_t gap = rd_signed(f, code_bytes(fl >> 6));
    struct phd_rec *r = new_rec(f, kind, off);
    if (!r)
        return NULL;
    r->addr = advance(f, s, gap);
    r->cls = rd(f, word(f));
    rd_hash(f, fl & 0x02);
    int64_t n = (int32_t)rd(f, 4);
    rd_refs(f, r, n, code_bytes((fl >> 4) & 3));
    return r;
}

static void long_object(struct phd_file *f, struct state *s, uint64_t off)
{
    struct phd_rec *r = long_record_head(f, s, off, PHD_K_OBJECT, "long object");
    if (r)
        cache_put(s, r->cls);
}

static void obj_array(struct phd_file *f, struct state *s, unsigned tag, uint64_t off)
{
    struct phd_rec *r = long_record_head(f, s, off, PHD_K_OBJ_ARRAY, "object array");
    if (!r)
        return;
    if (tag == 8) {
        r->length = (int32_t)rd(f, 4);
        /* One reference more than elements: the copy of the class written for IBM's reader
         * to drop (checked below). */
        int64_t stored = r->nrefs;
        if (r->nrefs >= 2 && f->refs[r->refs_at] == r->cls && f->refs[r->refs_at + 1] == r->cls)
            stored--;
        if (r->length < 0 || r->length < stored)
            phd_violation(f, true, off,
                          "object array true length %" PRId64 " below its %u stored references",
                          r->length, r->nrefs);
    } else if (f->version == 6) {
        phd_violation(f, false, off, "old object array record (tag 5) in a version 6 dump");
    }
    rd_size(f, r);
}

static void class_record(struct phd_file *f, struct state *s, uint64_t off)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x07)
        phd_violation(f, true, off, "class record flags %#x: bits 0x07 must be 0", fl);
    int64_t gap = rd_signed(f, code_bytes(fl >> 6));
    struct phd_rec *r = new_rec(f, PHD_K_CLASS, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    int32_t isize = (int32_t)rd(f, 4);
    if (isize < 0)
        phd_violation(f, true, off, "class instance size %d is negative", isize);
    r->size = isize < 0 ? 0 : (uint64_t)isize;
    rd_hash(f, fl & 0x08);
    r->cls = rd(f, word(f));
    char name[65536];
    size_t n = rd_utf(f, name, sizeof name, off, "class name");
    if (n == 0 && !f->truncated)
        phd_violation(f, true, off, "class record with an empty name");
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

static void long_prim_array(struct phd_file *f, struct state *s, uint64_t off)
{
    unsigned fl = (unsigned)rd(f, 1);
    if (fl & 0x0D)
        phd_violation(f, true, off, "long primitive array flags %#x: bits 0x0D must be 0", fl);
    bool w = fl & 0x10;
    int64_t gap = rd_signed(f, w ? word(f) : 1);
    uint64_t raw = rd(f, w ? word(f) : 1);
    struct phd_rec *r = new_rec(f, PHD_K_PRIM_ARRAY, off);
    if (!r)
        return;
    r->addr = advance(f, s, gap);
    r->ptype = (uint8_t)(fl >> 5);
    r->length = check_length(f, off, raw, false, w ? word(f) : 1);
    rd_hash(f, fl & 0x02);
    rd_size(f, r);
}

void phd_read_records(struct phd_file *f)
{
    struct state s;
    memset(&s, 0, sizeof s);
    for (;;) {
        if (f->oom || f->truncated)
            return;
        uint64_t off = f->pos;
        if (f->pos == f->len) {
            phd_violation(f, true, off, "file ends without the end-of-dump tag 3");
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
            phd_violation(f, true, off, "unknown record tag %#x", tag);
            return;
        }
    }
    if (f->pos != f->len)
        phd_violation(f, true, f->pos, "%zu bytes after the end-of-dump tag", f->len - f->pos);
}

/* ---- resolving ----------------------------------------------------------------------------- */

static const struct phd_file *sort_file;

static int cmp_addr(const void *a, const void *b)
{
    uint64_t x = sort_file->recs[*(const size_t *)a].addr,
             y = sort_file->recs[*(const size_t *)b].addr;
    return x < y ? -1 : x > y;
}

const struct phd_rec *phd_find(const struct phd_file *f, const struct phd_index *ix, uint64_t addr)
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

const char *phd_class_name(const struct phd_file *f, const struct phd_rec *c)
{
    return f->names + c->name_at;
}

/* The name an object is counted under: its class, its array class ("[Ljava/lang/String;",
 * "[[I"), or a primitive array's descriptor. buf needs 65540 bytes. */
const char *phd_type_name(const struct phd_file *f, const struct phd_index *ix,
                          const struct phd_rec *r, char *buf, size_t cap)
{
    if (r->kind == PHD_K_PRIM_ARRAY)
        return prim_names[r->ptype & 7];
    if (r->kind == PHD_K_CLASS)
        return "java/lang/Class";
    const struct phd_rec *c = phd_find(f, ix, r->cls);
    const char *n = c && c->kind == PHD_K_CLASS ? phd_class_name(f, c) : "?";
    if (r->kind == PHD_K_OBJECT)
        return n;
    snprintf(buf, cap, n[0] == '[' ? "[%s" : "[L%s;", n);
    return buf;
}

/* The bytes a record is counted with: instances at their class's instance size, arrays at
 * their own (0 where the class is missing: a violation reported elsewhere). */
uint64_t phd_rec_bytes(const struct phd_file *f, const struct phd_index *ix,
                       const struct phd_rec *r)
{
    if (r->kind == PHD_K_OBJECT) {
        const struct phd_rec *c = phd_find(f, ix, r->cls);
        return c && c->kind == PHD_K_CLASS ? c->size : 0;
    }
    return r->kind == PHD_K_CLASS ? 0 : r->size;
}

/* The whole file in memory; NULL with a message in err. */
uint8_t *phd_slurp(const char *path, size_t *lenp, char *err, size_t errlen)
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
bool phd_build_index(struct phd_file *f, struct phd_index *ix)
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
void phd_free_file(struct phd_file *f, struct phd_index *ix)
{
    free(ix->by_addr);
    free(f->recs);
    free(f->refs);
    free(f->names);
    free((void *)f->p);
}

/*
 * hprof_parse.c: strict streaming HPROF reader. See hprof_parse.h and doc/tools.md.
 *
 * Input is read through one large buffer (plain read(2) or zlib inflate over concatenated
 * gzip members); every parser step asks for the few bytes it needs with rd(), whose fast
 * path is an inline bounds check. Ids, strings, frames and traces go into open-addressing
 * hash maps of u64 keys; the objects of a heap dump into a hash set of u64 ids. References
 * to objects not yet seen are kept in a "pending" array that is periodically filtered
 * against the set, sorted and de-duplicated, so that memory stays bounded by the number of
 * distinct forward targets.
 */
#include "hprof_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define BUF_CAP ((size_t)8 << 20)  /* the uncompressed read buffer */
#define MAX_NEED ((size_t)4 << 20) /* the largest block rd() hands out contiguously */
#define ZIN_CAP ((size_t)1 << 20)  /* compressed input buffer */
#define STR_KEEP 4096              /* bytes of each string kept for name resolution */
#define DANGLING_EXAMPLES 5

/* Top-level tags */
enum {
    T_STRING = 0x01,
    T_LOAD_CLASS = 0x02,
    T_UNLOAD_CLASS = 0x03,
    T_STACK_FRAME = 0x04,
    T_STACK_TRACE = 0x05,
    T_ALLOC_SITES = 0x06,
    T_HEAP_SUMMARY = 0x07,
    T_START_THREAD = 0x0A,
    T_END_THREAD = 0x0B,
    T_HEAP_DUMP = 0x0C,
    T_CPU_SAMPLES = 0x0D,
    T_CONTROL_SETTINGS = 0x0E,
    T_HEAP_DUMP_SEGMENT = 0x1C,
    T_HEAP_DUMP_END = 0x2C,
};

/* Heap dump sub-record tags */
enum {
    S_ROOT_UNKNOWN = 0xFF,
    S_ROOT_JNI_GLOBAL = 0x01,
    S_ROOT_JNI_LOCAL = 0x02,
    S_ROOT_JAVA_FRAME = 0x03,
    S_ROOT_NATIVE_STACK = 0x04,
    S_ROOT_STICKY_CLASS = 0x05,
    S_ROOT_THREAD_BLOCK = 0x06,
    S_ROOT_MONITOR_USED = 0x07,
    S_ROOT_THREAD_OBJECT = 0x08,
    S_CLASS_DUMP = 0x20,
    S_INSTANCE_DUMP = 0x21,
    S_OBJ_ARRAY_DUMP = 0x22,
    S_PRIM_ARRAY_DUMP = 0x23,
};

enum { BT_OBJECT = 2 };

static const char *const kind_names[HK_NKINDS] = {
    "gzip",
    "header",
    "truncated",
    "unknown-tag",
    "length",
    "zero-length",
    "duplicate",
    "zero-id",
    "undefined-string",
    "undefined-class",
    "undefined-frame",
    "undefined-trace",
    "undefined-thread",
    "segment",
    "subrecord",
    "straddle",
    "class-dump",
    "instance-class",
    "field-size",
    "dangling",
    "duplicate-object",
};

const char *hprof_kind_name(enum hprof_kind k)
{
    return (unsigned)k < HK_NKINDS ? kind_names[k] : "?";
}

static const char *const root_names[HR_NKINDS] = {
    "unknown",      "jni_global",   "jni_local",    "java_frame",    "native_stack",
    "sticky_class", "thread_block", "monitor_used", "thread_object",
};

const char *hprof_root_name(enum hprof_root r)
{
    return (unsigned)r < HR_NKINDS ? root_names[r] : "?";
}

const char *hprof_tag_name(unsigned tag)
{
    switch (tag) {
    case T_STRING:
        return "STRING";
    case T_LOAD_CLASS:
        return "LOAD CLASS";
    case T_UNLOAD_CLASS:
        return "UNLOAD CLASS";
    case T_STACK_FRAME:
        return "STACK FRAME";
    case T_STACK_TRACE:
        return "STACK TRACE";
    case T_ALLOC_SITES:
        return "ALLOC SITES";
    case T_HEAP_SUMMARY:
        return "HEAP SUMMARY";
    case T_START_THREAD:
        return "START THREAD";
    case T_END_THREAD:
        return "END THREAD";
    case T_HEAP_DUMP:
        return "HEAP DUMP";
    case T_CPU_SAMPLES:
        return "CPU SAMPLES";
    case T_CONTROL_SETTINGS:
        return "CONTROL SETTINGS";
    case T_HEAP_DUMP_SEGMENT:
        return "HEAP DUMP SEGMENT";
    case T_HEAP_DUMP_END:
        return "HEAP DUMP END";
    default:
        return NULL;
    }
}

const char *hprof_type_name(unsigned t)
{
    static const char *const names[12] = {NULL,    NULL,     "object", NULL,    "boolean", "char",
                                          "float", "double", "byte",   "short", "int",     "long"};
    return t < 12 ? names[t] : NULL;
}

static const char *sub_name(unsigned tag)
{
    switch (tag) {
    case S_ROOT_UNKNOWN:
        return "ROOT UNKNOWN";
    case S_ROOT_JNI_GLOBAL:
        return "ROOT JNI GLOBAL";
    case S_ROOT_JNI_LOCAL:
        return "ROOT JNI LOCAL";
    case S_ROOT_JAVA_FRAME:
        return "ROOT JAVA FRAME";
    case S_ROOT_NATIVE_STACK:
        return "ROOT NATIVE STACK";
    case S_ROOT_STICKY_CLASS:
        return "ROOT STICKY CLASS";
    case S_ROOT_THREAD_BLOCK:
        return "ROOT THREAD BLOCK";
    case S_ROOT_MONITOR_USED:
        return "ROOT MONITOR USED";
    case S_ROOT_THREAD_OBJECT:
        return "ROOT THREAD OBJECT";
    case S_CLASS_DUMP:
        return "CLASS DUMP";
    case S_INSTANCE_DUMP:
        return "INSTANCE DUMP";
    case S_OBJ_ARRAY_DUMP:
        return "OBJECT ARRAY DUMP";
    case S_PRIM_ARRAY_DUMP:
        return "PRIMITIVE ARRAY DUMP";
    default:
        return "?";
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Hash map / set of u64 keys (0 = empty slot; callers never insert 0)                        */

struct map {
    uint64_t *keys;
    uint32_t *vals; /* NULL for a set */
    size_t cap, n;
    unsigned shift;
    bool is_set;
};

static inline size_t slot_of(uint64_t k, unsigned shift)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> shift);
}

static inline bool map_get(const struct map *m, uint64_t k, uint32_t *v)
{
    if (m->cap == 0 || k == 0)
        return false;
    size_t mask = m->cap - 1, i = slot_of(k, m->shift);
    for (;;) {
        uint64_t x = m->keys[i];
        if (x == k) {
            if (v)
                *v = m->vals[i];
            return true;
        }
        if (x == 0)
            return false;
        i = (i + 1) & mask;
    }
}

static void map_free(struct map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------------------------ */
/* Growable arrays                                                                            */

#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

struct parser;
static void *grow(struct parser *P, void *p, size_t *cap, size_t need, size_t elsz);
#define VRESERVE(P, vec, need) ((vec).v = grow((P), (vec).v, &(vec).cap, (need), sizeof *(vec).v))
#define VPUSH(P, vec) (VRESERVE(P, vec, (vec).n + 1), &(vec).v[(vec).n++])
#define VFREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

/* ------------------------------------------------------------------------------------------ */
/* Parser state                                                                               */

struct strent {
    uint64_t off;
    uint32_t len;
};
struct lclass {
    uint64_t id, name;
    uint32_t serial, trace;
    bool unloaded; /* by an UNLOAD CLASS: nothing after it may name the serial or the id */
};
struct frame {
    uint64_t method, sig, source;
    uint32_t class_serial;
    int32_t line;
};
struct trace {
    uint64_t top; /* first (top) frame id, 0 if the trace is empty */
    uint32_t serial, thread, nframes;
};
struct thread_ref {
    uint64_t off;     /* first reference */
    const char *what; /* a string literal */
    uint32_t serial;
};
struct fwdref {
    uint64_t off;
    uint32_t serial;
};
struct site {
    uint8_t array;
    uint32_t class_serial, trace, live_bytes, live_inst, alloc_bytes, alloc_inst;
    uint32_t row; /* position in the record: the last sort key */
};
struct sample {
    uint32_t count, trace;
};

struct dclass {
    uint64_t id, super, off;
    uint64_t count, bytes;
    size_t own_off;    /* into dump.types */
    uint32_t own_n;    /* instance fields declared by this class */
    int32_t layout;    /* index into dump.lay; -1 not computed yet; -2 broken chain reported */
    bool is_array_cls; /* seen as the class of an OBJECT ARRAY DUMP */
};
struct layout {
    uint32_t size, nrefs;
    size_t refs_off; /* into dump.refoffs */
};
struct pend {
    uint64_t target, off, count;
};
struct dinst {
    uint64_t class_id, off;
    size_t data_off;
    uint32_t nbytes;
};
struct darr {
    uint64_t class_id, off, elems;
};

struct dump {
    size_t idx; /* into sum->dumps */
    struct map objs;
    struct map dcls;
    VEC(struct dclass) dc;
    VEC(uint8_t) types;
    VEC(struct layout) lay;
    VEC(uint32_t) refoffs;
    VEC(struct pend) pend;
    size_t pend_limit;
    VEC(struct dinst) di;
    VEC(uint8_t) dbytes;
    VEC(struct darr) da;
    VEC(size_t) chain; /* scratch */
    uint64_t prim_count[12], prim_bytes[12];
    bool desync;    /* a structural error: integrity checks skipped */
    bool skip_rest; /* a straddle: the rest of the dump's records is not parsed */
    uint32_t trace_ok, thread_ok;
};

struct src {
    int fd;
    uint8_t *buf;
    size_t pos, len;
    uint64_t base; /* stream offset of buf[0] */
    bool eof;
    bool gz, z_live, zin_eof;
    z_stream z;
    uint8_t *zin;
    uint64_t zin_total; /* compressed bytes read from fd */
};

struct parser {
    struct src s;
    const struct hprof_opts *o;
    hprof_report_fn report;
    void *ctx;
    struct hprof_summary *sum;
    jmp_buf jb;
    char *errbuf;
    size_t errlen;

    unsigned idsize;
    uint8_t tsize[256]; /* value size of each basic type; 0 = invalid */
    uint64_t file_size;
    bool size_known;
    bool fatal; /* stop reading: truncated input or corrupt gzip */

    /* the record being parsed (for truncation messages) */
    uint64_t rec_off, rec_len;
    unsigned rec_tag;

    struct map strings; /* id -> index into str */
    VEC(struct strent) str;
    VEC(char) sarena;
    struct map class_by_serial, class_by_id; /* -> index into cls */
    VEC(struct lclass) cls;
    struct map frames; /* id -> index into fr */
    VEC(struct frame) fr;
    struct map traces; /* serial -> index into tr */
    VEC(struct trace) tr;
    struct map threads;     /* set of START THREAD serials */
    struct map thread_refs; /* referenced thread serial -> index into tref */
    VEC(struct thread_ref) tref;
    VEC(struct fwdref) fwd;
    VEC(struct site) sites;
    VEC(struct sample) samples;

    bool in_segments;
    uint64_t seg_open_off;
    struct dump *d;
    size_t dumps_cap;
    bool straddle; /* set by sub_rd when a sub-record would cross its record's end */
};

static inline uint64_t cur(const struct parser *P)
{
    return P->s.base + P->s.pos;
}

static _Noreturn void die(struct parser *P, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P->errbuf, P->errlen, fmt, ap);
    va_end(ap);
    longjmp(P->jb, 1);
}

static void *grow(struct parser *P, void *p, size_t *cap, size_t need, size_t elsz)
{
    if (need <= *cap)
        return p;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / elsz)
            die(P, "out of memory");
        nc += nc / 2 + 16;
    }
    void *q = realloc(p, nc * elsz);
    if (!q)
        die(P, "out of memory (%zu bytes)", nc * elsz);
    *cap = nc;
    return q;
}

static void map_init(struct parser *P, struct map *m, size_t cap, bool is_set)
{
    m->cap = cap;
    m->n = 0;
    m->shift = 64;
    for (size_t c = cap; c > 1; c >>= 1)
        m->shift--;
    m->is_set = is_set;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = is_set ? NULL : malloc(cap * sizeof *m->vals);
    if (!m->keys || (!is_set && !m->vals))
        die(P, "out of memory (hash table of %zu entries)", cap);
}

static void map_rehash(struct parser *P, struct map *m)
{
    struct map old = *m;
    map_init(P, m, old.cap * 2, old.is_set);
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < old.cap; i++) {
        uint64_t k = old.keys[i];
        if (!k)
            continue;
        size_t j = slot_of(k, m->shift);
        while (m->keys[j])
            j = (j + 1) & mask;
        m->keys[j] = k;
        if (m->vals)
            m->vals[j] = old.vals[i];
    }
    m->n = old.n;
    map_free(&old);
}

/* Insert k -> v unless present. Returns false (and *old) if k was already there. */
static bool map_put(struct parser *P, struct map *m, uint64_t k, uint32_t v, uint32_t *old)
{
    if (k == 0)
        return false; /* callers reject id 0 before */
    if (m->cap == 0)
        map_init(P, m, 1024, m->is_set);
    else if ((m->n + 1) * 4 > m->cap * 3)
        map_rehash(P, m);
    size_t mask = m->cap - 1, i = slot_of(k, m->shift);
    for (;;) {
        uint64_t x = m->keys[i];
        if (x == k) {
            if (old && m->vals)
                *old = m->vals[i];
            return false;
        }
        if (x == 0)
            break;
        i = (i + 1) & mask;
    }
    m->keys[i] = k;
    if (m->vals)
        m->vals[i] = v;
    m->n++;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Violations                                                                                 */

static void viol(struct parser *P, enum hprof_severity sev, enum hprof_kind k, uint64_t off,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void viol(struct parser *P, enum hprof_severity sev, enum hprof_kind k, uint64_t off,
                 const char *fmt, ...)
{
    struct hprof_summary *S = P->sum;
    if (sev == HPROF_ERROR)
        S->errors++;
    else
        S->warnings++;
    S->kind_counts[k]++;
    if (P->o->max_reports && S->kind_shown[k] >= P->o->max_reports)
        return;
    S->kind_shown[k]++;
    if (!P->report)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    P->report(P->ctx, sev, k, off, msg);
}

#define ERR(P, k, off, ...) viol((P), HPROF_ERROR, (k), (off), __VA_ARGS__)

/* ------------------------------------------------------------------------------------------ */
/* Input                                                                                      */

static size_t read_some(struct parser *P, uint8_t *dst, size_t n)
{
    for (;;) {
        ssize_t r = read(P->s.fd, dst, n);
        if (r >= 0)
            return (size_t)r;
        if (errno != EINTR)
            die(P, "read error: %s", strerror(errno));
    }
}

/* Append decompressed or raw bytes to buf[len..]. Sets eof when no more will come. */
static void fill(struct parser *P)
{
    struct src *s = &P->s;
    if (s->eof)
        return;
    if (!s->gz) {
        size_t r = read_some(P, s->buf + s->len, BUF_CAP - s->len);
        if (r == 0)
            s->eof = true;
        s->len += r;
        return;
    }
    z_stream *z = &s->z;
    size_t before = s->len;
    while (s->len == before) {
        if (z->avail_in == 0 && !s->zin_eof) {
            size_t r = read_some(P, s->zin, ZIN_CAP);
            if (r == 0)
                s->zin_eof = true;
            s->zin_total += r;
            z->next_in = s->zin;
            z->avail_in = (uInt)r;
        }
        if (!s->z_live) {
            /* between members: the input is finished, or another member starts */
            if (z->avail_in == 0) {
                if (s->zin_eof) {
                    s->eof = true;
                    return;
                }
                continue;
            }
            if (inflateReset(z) != Z_OK)
                die(P, "zlib: inflateReset failed");
            s->z_live = true;
        }
        z->next_out = s->buf + s->len;
        z->avail_out = (uInt)(BUF_CAP - s->len);
        int ret = inflate(z, Z_NO_FLUSH);
        s->len = BUF_CAP - z->avail_out;
        if (ret == Z_STREAM_END) {
            s->z_live = false;
            continue;
        }
        if (ret == Z_OK)
            continue;
        if (ret == Z_BUF_ERROR && z->avail_in == 0 && !s->zin_eof)
            continue;
        if (ret == Z_MEM_ERROR)
            die(P, "out of memory (zlib)");
        uint64_t zoff = s->zin_total - z->avail_in;
        if (ret == Z_BUF_ERROR)
            ERR(P, HK_GZIP, s->base + s->len,
                "gzip data ends in the middle of a member (compressed file offset %" PRIu64 ")",
                zoff);
        else
            ERR(P, HK_GZIP, s->base + s->len,
                "corrupt gzip data (%s) at or before compressed file offset %" PRIu64,
                z->msg ? z->msg : "inflate failed", zoff);
        s->eof = true;
        P->fatal = true;
        return;
    }
}

static void truncated(struct parser *P)
{
    if (P->fatal)
        return;
    P->fatal = true;
    const char *name = hprof_tag_name(P->rec_tag);
    ERR(P, HK_TRUNCATED, P->rec_off,
        "input ends inside the %s record (tag 0x%02x, length %" PRIu64 ") at offset %" PRIu64,
        name ? name : "unknown", P->rec_tag, P->rec_len, cur(P));
}

/* Make sure n bytes (n <= MAX_NEED) are buffered; returns how many are (less only at EOF) */
static size_t ensure(struct parser *P, size_t n)
{
    struct src *s = &P->s;
    if (s->len - s->pos >= n)
        return n;
    size_t keep = s->len - s->pos;
    if (s->pos) {
        memmove(s->buf, s->buf + s->pos, keep);
        s->base += s->pos;
        s->pos = 0;
        s->len = keep;
    }
    while (s->len < n && !s->eof)
        fill(P);
    return s->len < n ? s->len : n;
}

static const uint8_t *rd_slow(struct parser *P, size_t n)
{
    if (ensure(P, n) < n) {
        P->s.pos = P->s.len;
        truncated(P);
        return NULL;
    }
    const uint8_t *p = P->s.buf + P->s.pos;
    P->s.pos += n;
    return p;
}

/* The next n bytes (valid until the next rd/skip), or NULL at end of input */
static inline const uint8_t *rd(struct parser *P, size_t n)
{
    struct src *s = &P->s;
    if (s->len - s->pos >= n) {
        const uint8_t *p = s->buf + s->pos;
        s->pos += n;
        return p;
    }
    return rd_slow(P, n);
}

static bool skip(struct parser *P, uint64_t n)
{
    struct src *s = &P->s;
    for (;;) {
        size_t avail = s->len - s->pos;
        if (avail >= n) {
            s->pos += (size_t)n;
            return true;
        }
        n -= avail;
        s->base += s->len;
        s->pos = s->len = 0;
        if (s->eof) {
            truncated(P);
            return false;
        }
        fill(P);
    }
}

static inline uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}
static inline uint64_t getid(const struct parser *P, const uint8_t *p)
{
    return P->idsize == 8 ? be64(p) : be32(p);
}

/* ------------------------------------------------------------------------------------------ */
/* Tables                                                                                     */

static bool str_get(const struct parser *P, uint64_t id, const char **p, size_t *len)
{
    uint32_t i;
    if (!id || !map_get(&P->strings, id, &i))
        return false;
    *p = P->sarena.v + P->str.v[i].off;
    *len = P->str.v[i].len;
    return true;
}

/* An id that must name an earlier STRING record (0 allowed when allow0) */
static void check_str(struct parser *P, uint64_t id, bool allow0, uint64_t off, const char *what)
{
    if (id == 0) {
        if (!allow0)
            ERR(P, HK_STRING, off, "%s: string id 0", what);
        return;
    }
    if (!map_get(&P->strings, id, NULL))
        ERR(P, HK_STRING, off, "%s: string id 0x%" PRIx64 " not defined by an earlier STRING", what,
            id);
}

/* A trace serial in a non-heap-dump record: must be > 0 and defined by an earlier trace */
static void check_trace(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    if (serial == 0)
        ERR(P, HK_TRACE, off, "%s: stack trace serial 0", what);
    else if (!map_get(&P->traces, serial, NULL))
        ERR(P, HK_TRACE, off,
            "%s: stack trace serial %" PRIu32 " not defined by an earlier STACK TRACE", what,
            serial);
}

static void check_class_serial(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    uint32_t ci;
    if (!map_get(&P->class_by_serial, serial, &ci))
        ERR(P, HK_CLASS_SERIAL, off,
            "%s: class serial %" PRIu32 " not defined by an earlier LOAD CLASS", what, serial);
    else if (P->cls.v[ci].unloaded)
        ERR(P, HK_CLASS_SERIAL, off,
            "%s: class serial %" PRIu32 " was unloaded by an earlier UNLOAD CLASS", what, serial);
}

/* Thread serials must be defined by a START THREAD anywhere in the input (the JDK 5-8 agent
   wrote a thread's first STACK TRACE before its START THREAD): remember the first reference
   to each serial, check at the end. A warning unless --strict-threads. */
static void check_thread(struct parser *P, uint32_t serial, uint64_t off, const char *what)
{
    if (serial == 0) {
        viol(P, P->o->strict_threads ? HPROF_ERROR : HPROF_WARNING, HK_THREAD, off,
             "%s: thread serial 0", what);
        return;
    }
    if (!map_put(P, &P->thread_refs, serial, (uint32_t)P->tref.n, NULL))
        return;
    struct thread_ref *t = VPUSH(P, P->tref);
    t->off = off;
    t->what = what;
    t->serial = serial;
}

static void check_thread_refs(struct parser *P)
{
    for (size_t i = 0; i < P->tref.n; i++) {
        const struct thread_ref *t = &P->tref.v[i];
        if (!map_get(&P->threads, t->serial, NULL))
            viol(P, P->o->strict_threads ? HPROF_ERROR : HPROF_WARNING, HK_THREAD, t->off,
                 "%s: thread serial %" PRIu32 " not defined by any START THREAD"
                 " (reported once per serial, at its first use)",
                 t->what, t->serial);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Top-level records                                                                          */

static bool expect_len(struct parser *P, const char *name, uint64_t len, uint64_t want)
{
    if (len == want)
        return true;
    ERR(P, HK_LENGTH, P->rec_off, "%s record body is %" PRIu64 " bytes, expected %" PRIu64, name,
        len, want);
    return false;
}

static void rec_string(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (len < P->idsize) {
        ERR(P, HK_LENGTH, off, "STRING record body is %" PRIu64 " bytes, shorter than an id", len);
        return;
    }
    const uint8_t *p = rd(P, P->idsize);
    if (!p)
        return;
    uint64_t id = getid(P, p);
    uint64_t n = len - P->idsize;
    size_t keep = n > STR_KEEP ? STR_KEEP : (size_t)n;
    p = rd(P, keep);
    if (!p)
        return;
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "STRING with id 0");
    } else if (map_put(P, &P->strings, id, (uint32_t)P->str.n, NULL)) {
        struct strent *e = VPUSH(P, P->str);
        e->off = P->sarena.n;
        e->len = (uint32_t)keep;
        VRESERVE(P, P->sarena, P->sarena.n + keep + 1);
        memcpy(P->sarena.v + P->sarena.n, p, keep);
        P->sarena.n += keep;
        P->sarena.v[P->sarena.n++] = 0;
    } else {
        ERR(P, HK_DUPLICATE, off, "STRING id 0x%" PRIx64 " defined twice", id);
    }
    if (n > keep)
        skip(P, n - keep);
}

static void rec_load_class(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (!expect_len(P, "LOAD CLASS", len, 8 + 2 * P->idsize))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint32_t serial = be32(p);
    uint64_t id = getid(P, p + 4);
    uint32_t trace = be32(p + 4 + P->idsize);
    uint64_t name = getid(P, p + 8 + P->idsize);
    if (serial == 0)
        ERR(P, HK_ZERO_ID, off, "LOAD CLASS with class serial 0");
    if (id == 0)
        ERR(P, HK_ZERO_ID, off, "LOAD CLASS serial %" PRIu32 " with class object id 0", serial);
    if (trace != 0 && P->o->lenient_traces && !map_get(&P->traces, trace, NULL)) {
        struct fwdref *f = VPUSH(P, P->fwd); /* checked at the end of the input */
        f->off = off;
        f->serial = trace;
    } else {
        check_trace(P, trace, off, "LOAD CLASS");
    }
    check_str(P, name, false, off, "LOAD CLASS name");
    if (serial == 0)
        return;
    uint32_t idx = (uint32_t)P->cls.n;
    if (!map_put(P, &P->class_by_serial, serial, idx, NULL)) {
        ERR(P, HK_DUPLICATE, off, "LOAD CLASS serial %" PRIu32 " defined twice", serial);
        return;
    }
    struct lclass *c = VPUSH(P, P->cls);
    c->id = id;
    c->name = name;
    c->serial = serial;
    c->trace = trace;
    c->unloaded = false;
    if (id) {
        /* a class id can be loaded again after an UNLOAD CLASS: keep the newest */
        uint32_t old;
        if (!map_put(P, &P->class_by_id, id, idx, &old)) {
            size_t mask = P->class_by_id.cap - 1, i = slot_of(id, P->class_by_id.shift);
            while (P->class_by_id.keys[i] != id)
                i = (i + 1) & mask;
            P->class_by_id.vals[i] = idx;
        }
    }
}

static void rec_unload_class(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "UNLOAD CLASS", len, 4))
        return;
    const uint8_t *p = rd(P, 4);
    if (!p)
        return;
    P->sum->classes_unloaded++;
    uint32_t serial = be32(p), ci;
    check_class_serial(P, serial, P->rec_off, "UNLOAD CLASS");
    if (map_get(&P->class_by_serial, serial, &ci))
        P->cls.v[ci].unloaded = true;
}

static void rec_stack_frame(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    unsigned I = P->idsize;
    if (!expect_len(P, "STACK FRAME", len, 4 * I + 8))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint64_t id = getid(P, p);
    struct frame f = {
        .method = getid(P, p + I),
        .sig = getid(P, p + 2 * I),
        .source = getid(P, p + 3 * I),
        .class_serial = be32(p + 4 * I),
        .line = (int32_t)be32(p + 4 * I + 4),
    };
    check_str(P, f.method, false, off, "STACK FRAME method name");
    check_str(P, f.sig, false, off, "STACK FRAME method signature");
    check_str(P, f.source, true, off, "STACK FRAME source file");
    check_class_serial(P, f.class_serial, off, "STACK FRAME");
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "STACK FRAME with frame id 0");
        return;
    }
    if (!map_put(P, &P->frames, id, (uint32_t)P->fr.n, NULL)) {
        ERR(P, HK_DUPLICATE, off, "STACK FRAME id 0x%" PRIx64 " defined twice", id);
        return;
    }
    *VPUSH(P, P->fr) = f;
}

static void rec_stack_trace(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    if (len < 12) {
        ERR(P, HK_LENGTH, off, "STACK TRACE record body is %" PRIu64 " bytes, less than 12", len);
        return;
    }
    const uint8_t *p = rd(P, 12);
    if (!p)
        return;
    struct trace t = {.serial = be32(p), .thread = be32(p + 4), .nframes = be32(p + 8)};
    if (!expect_len(P, "STACK TRACE", len, 12 + (uint64_t)t.nframes * P->idsize))
        return;
    for (uint32_t i = 0; i < t.nframes; i++) {
        if (!(p = rd(P, P->idsize)))
            return;
        uint64_t fid = getid(P, p);
        if (i == 0)
            t.top = fid;
        if (!fid || !map_get(&P->frames, fid, NULL))
            ERR(P, HK_FRAME, off,
                "STACK TRACE serial %" PRIu32 " frame %" PRIu32 ": frame id 0x%" PRIx64
                " not defined by an earlier STACK FRAME",
                t.serial, i, fid);
    }
    if (t.thread != 0)
        check_thread(P, t.thread, off, "STACK TRACE");
    if (t.serial == 0) {
        ERR(P, HK_ZERO_ID, off, "STACK TRACE with serial 0");
        return;
    }
    if (!map_put(P, &P->traces, t.serial, (uint32_t)P->tr.n, NULL)) {
        ERR(P, HK_DUPLICATE, off, "STACK TRACE serial %" PRIu32 " defined twice", t.serial);
        return;
    }
    *VPUSH(P, P->tr) = t;
}

static bool valid_array_type(unsigned t)
{
    return t == 0 || t == BT_OBJECT || (t >= 4 && t <= 11);
}

static void rec_alloc_sites(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    struct hprof_summary *S = P->sum;
    if (len < 34) {
        ERR(P, HK_LENGTH, off, "ALLOC SITES record body is %" PRIu64 " bytes, less than 34", len);
        return;
    }
    const uint8_t *p = rd(P, 34);
    if (!p)
        return;
    uint32_t n = be32(p + 30);
    if (!expect_len(P, "ALLOC SITES", len, 34 + (uint64_t)n * 25))
        return;
    S->alloc_sites_records++;
    S->sites_flags = be16(p);
    uint32_t cut = be32(p + 2);
    memcpy(&S->sites_cutoff, &cut, sizeof cut);
    S->sites_live_bytes = be32(p + 6);
    S->sites_live_instances = be32(p + 10);
    S->sites_alloc_bytes = be64(p + 14);
    S->sites_alloc_instances = be64(p + 22);
    S->nsites = n;
    P->sites.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(p = rd(P, 25)))
            return;
        struct site *s = VPUSH(P, P->sites);
        s->array = p[0];
        s->class_serial = be32(p + 1);
        s->trace = be32(p + 5);
        s->live_bytes = be32(p + 9);
        s->live_inst = be32(p + 13);
        s->alloc_bytes = be32(p + 17);
        s->alloc_inst = be32(p + 21);
        s->row = i;
        if (!valid_array_type(s->array))
            ERR(P, HK_SUBRECORD, off, "ALLOC SITES row %" PRIu32 ": bad array type %u", i,
                s->array);
        check_class_serial(P, s->class_serial, off, "ALLOC SITES row");
        check_trace(P, s->trace, off, "ALLOC SITES row");
    }
}

static void rec_heap_summary(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "HEAP SUMMARY", len, 24))
        return;
    const uint8_t *p = rd(P, 24);
    if (!p)
        return;
    struct hprof_summary *S = P->sum;
    S->heap_summary_records++;
    S->hs_live_bytes = be32(p);
    S->hs_live_instances = be32(p + 4);
    S->hs_alloc_bytes = be64(p + 8);
    S->hs_alloc_instances = be64(p + 16);
}

static void rec_start_thread(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    unsigned I = P->idsize;
    if (!expect_len(P, "START THREAD", len, 8 + 4 * I))
        return;
    const uint8_t *p = rd(P, (size_t)len);
    if (!p)
        return;
    uint32_t serial = be32(p);
    uint32_t trace = be32(p + 4 + I);
    check_trace(P, trace, off, "START THREAD");
    check_str(P, getid(P, p + 8 + I), true, off, "START THREAD name");
    check_str(P, getid(P, p + 8 + 2 * I), true, off, "START THREAD group name");
    check_str(P, getid(P, p + 8 + 3 * I), true, off, "START THREAD parent group name");
    P->sum->threads_started++;
    if (serial == 0)
        ERR(P, HK_ZERO_ID, off, "START THREAD with thread serial 0");
    else if (!map_put(P, &P->threads, serial, 0, NULL))
        ERR(P, HK_DUPLICATE, off, "START THREAD serial %" PRIu32 " started twice", serial);
}

static void rec_end_thread(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "END THREAD", len, 4))
        return;
    const uint8_t *p = rd(P, 4);
    if (!p)
        return;
    P->sum->threads_ended++;
    check_thread(P, be32(p), P->rec_off, "END THREAD");
}

static void rec_cpu_samples(struct parser *P, uint64_t len)
{
    uint64_t off = P->rec_off;
    struct hprof_summary *S = P->sum;
    if (len < 8) {
        ERR(P, HK_LENGTH, off, "CPU SAMPLES record body is %" PRIu64 " bytes, less than 8", len);
        return;
    }
    const uint8_t *p = rd(P, 8);
    if (!p)
        return;
    uint32_t total = be32(p), n = be32(p + 4);
    if (!expect_len(P, "CPU SAMPLES", len, 8 + (uint64_t)n * 8))
        return;
    S->cpu_samples_records++;
    S->cpu_total = total;
    S->cpu_ntraces = n;
    P->samples.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(p = rd(P, 8)))
            return;
        struct sample *s = VPUSH(P, P->samples);
        s->count = be32(p);
        s->trace = be32(p + 4);
        check_trace(P, s->trace, off, "CPU SAMPLES row");
    }
}

static void rec_control_settings(struct parser *P, uint64_t len)
{
    if (!expect_len(P, "CONTROL SETTINGS", len, 6))
        return;
    const uint8_t *p = rd(P, 6);
    if (!p)
        return;
    P->sum->control_settings_records++;
    P->sum->control_flags = be32(p);
    P->sum->control_depth = be16(p + 4);
}

/* ------------------------------------------------------------------------------------------ */
/* Heap dumps                                                                                 */

#define DS(P) (&(P)->sum->dumps[(P)->d->idx])

static void dump_begin(struct parser *P, bool segmented)
{
    struct hprof_summary *S = P->sum;
    S->dumps = grow(P, S->dumps, &P->dumps_cap, S->ndumps + 1, sizeof *S->dumps);
    struct hprof_dump_summary *ds = &S->dumps[S->ndumps];
    memset(ds, 0, sizeof *ds);
    ds->offset = P->rec_off;
    ds->segmented = segmented;
    struct dump *d = calloc(1, sizeof *d);
    if (!d)
        die(P, "out of memory");
    d->idx = S->ndumps++;
    d->pend_limit = (size_t)1 << 20;
    P->d = d;
    map_init(P, &d->objs, (size_t)1 << 16, true);
    map_init(P, &d->dcls, 1024, false);
}

static void dump_free(struct dump *d)
{
    map_free(&d->objs);
    map_free(&d->dcls);
    VFREE(d->dc);
    VFREE(d->types);
    VFREE(d->lay);
    VFREE(d->refoffs);
    VFREE(d->pend);
    VFREE(d->di);
    VFREE(d->dbytes);
    VFREE(d->da);
    VFREE(d->chain);
    free(d);
}

static int cmp_pend(const void *a, const void *b)
{
    const struct pend *x = a, *y = b;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* Drop pending references whose target is now known; sort and merge the rest */
static void pend_compact(struct dump *d)
{
    size_t j = 0;
    for (size_t i = 0; i < d->pend.n; i++)
        if (!map_get(&d->objs, d->pend.v[i].target, NULL))
            d->pend.v[j++] = d->pend.v[i];
    d->pend.n = j;
    if (d->pend.n > 1)
        qsort(d->pend.v, d->pend.n, sizeof *d->pend.v, cmp_pend);
    j = 0;
    for (size_t i = 0; i < d->pend.n; i++) {
        if (j && d->pend.v[j - 1].target == d->pend.v[i].target) {
            struct pend *q = &d->pend.v[j - 1];
            q->count += d->pend.v[i].count;
            if (d->pend.v[i].off < q->off)
                q->off = d->pend.v[i].off;
        } else {
            d->pend.v[j++] = d->pend.v[i];
        }
    }
    d->pend.n = j;
    d->pend_limit = 2 * j > ((size_t)1 << 20) ? 2 * j : ((size_t)1 << 20);
}

static inline void ref(struct parser *P, struct dump *d, uint64_t target, uint64_t off)
{
    if (target == 0)
        return;
    P->sum->dumps[d->idx].references++;
    if (map_get(&d->objs, target, NULL))
        return;
    if (d->pend.n >= d->pend_limit)
        pend_compact(d);
    struct pend *p = VPUSH(P, d->pend);
    p->target = target;
    p->off = off;
    p->count = 1;
}

static void add_object(struct parser *P, struct dump *d, uint64_t id, uint64_t off,
                       const char *what)
{
    if (id == 0) {
        ERR(P, HK_ZERO_ID, off, "%s with object id 0", what);
        return;
    }
    if (!map_put(P, &d->objs, id, 0, NULL))
        ERR(P, HK_DUP_OBJECT, off, "%s: object id 0x%" PRIx64 " dumped twice", what, id);
}

static inline void heap_trace(struct parser *P, struct dump *d, uint32_t serial, uint64_t off,
                              const char *what)
{
    if (P->o->lenient_traces || (serial == d->trace_ok && serial != 0))
        return;
    if (serial == 0)
        ERR(P, HK_TRACE, off, "%s: stack trace serial 0", what);
    else if (!map_get(&P->traces, serial, NULL))
        ERR(P, HK_TRACE, off, "%s: stack trace serial %" PRIu32 " not defined by a STACK TRACE",
            what, serial);
    else
        d->trace_ok = serial;
}

static inline void heap_thread(struct parser *P, struct dump *d, uint32_t serial, uint64_t off,
                               const char *what)
{
    if (serial != 0 && serial == d->thread_ok)
        return;
    check_thread(P, serial, off, what);
    d->thread_ok = serial;
}

/* Flattened instance layout of class index ci (this class, then its superclasses).
   Returns the layout index, -1 if a superclass is not dumped (yet), -2 on a cycle. */
static int32_t layout_of(struct parser *P, struct dump *d, size_t ci)
{
    if (d->dc.v[ci].layout >= 0)
        return d->dc.v[ci].layout;
    d->chain.n = 0;
    size_t c = ci;
    for (;;) {
        *VPUSH(P, d->chain) = c;
        uint64_t sup = d->dc.v[c].super;
        if (sup == 0)
            break;
        uint32_t si;
        if (!map_get(&d->dcls, sup, &si))
            return -1;
        if (d->chain.n > d->dc.n)
            return -2;
        c = si;
    }
    struct layout L = {.size = 0, .nrefs = 0, .refs_off = d->refoffs.n};
    uint64_t size = 0;
    for (size_t k = 0; k < d->chain.n; k++) {
        const struct dclass *k_c = &d->dc.v[d->chain.v[k]];
        for (uint32_t f = 0; f < k_c->own_n; f++) {
            uint8_t t = d->types.v[k_c->own_off + f];
            if (t == BT_OBJECT) {
                *VPUSH(P, d->refoffs) = (uint32_t)size;
                L.nrefs++;
            }
            size += P->tsize[t];
        }
    }
    if (size > UINT32_MAX)
        return -2;
    L.size = (uint32_t)size;
    *VPUSH(P, d->lay) = L;
    d->dc.v[ci].layout = (int32_t)(d->lay.n - 1);
    return d->dc.v[ci].layout;
}

/* Field values of one instance of a class with a known layout */
static void instance_fields(struct parser *P, struct dump *d, size_t ci, int32_t li,
                            const uint8_t *data, uint32_t n, uint64_t off)
{
    const struct layout *L = &d->lay.v[li];
    struct dclass *c = &d->dc.v[ci];
    c->count++;
    c->bytes += n;
    if (L->size != n) {
        ERR(P, HK_FIELD_SIZE, off,
            "INSTANCE DUMP of class 0x%" PRIx64 ": %" PRIu32
            " bytes of field values, the class and its superclasses declare %" PRIu32,
            c->id, n, L->size);
        return;
    }
    if (!data)
        return;
    const uint32_t *ro = d->refoffs.v + L->refs_off;
    for (uint32_t i = 0; i < L->nrefs; i++)
        ref(P, d, getid(P, data + ro[i]), off);
}

/* Sub-record reader: n bytes that must lie before end (the end of the enclosing record) */
static inline const uint8_t *sub_rd(struct parser *P, size_t n, uint64_t end)
{
    if (cur(P) + n > end) {
        P->straddle = true;
        return NULL;
    }
    return rd(P, n);
}

static bool sub_class_dump(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 7 * I + 10, end);
    if (!p)
        return false;
    uint64_t cid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint64_t super = getid(P, p + I + 4);
    uint64_t loader = getid(P, p + 2 * I + 4);
    uint64_t signers = getid(P, p + 3 * I + 4);
    uint64_t domain = getid(P, p + 4 * I + 4);
    uint16_t ncp = be16(p + 7 * I + 8);
    DS(P)->classes++;
    add_object(P, d, cid, off, "CLASS DUMP");
    heap_trace(P, d, trace, off, "CLASS DUMP");
    uint32_t ci;
    if (cid && !map_get(&P->class_by_id, cid, &ci))
        ERR(P, HK_CLASS_DUMP, off, "CLASS DUMP 0x%" PRIx64 " has no LOAD CLASS record", cid);
    else if (cid && P->cls.v[ci].unloaded)
        ERR(P, HK_CLASS_DUMP, off,
            "CLASS DUMP 0x%" PRIx64 ": its class (serial %" PRIu32
            ") was unloaded by an earlier UNLOAD CLASS",
            cid, P->cls.v[ci].serial);
    ref(P, d, super, off);
    ref(P, d, loader, off);
    ref(P, d, signers, off);
    ref(P, d, domain, off);
    for (unsigned i = 0; i < ncp; i++) {
        if (!(p = sub_rd(P, 3, end)))
            return false;
        unsigned t = p[2];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off,
                "CLASS DUMP 0x%" PRIx64 ": constant pool entry %u has bad type %u", cid, i, t);
            return false;
        }
        if (!(p = sub_rd(P, P->tsize[t], end)))
            return false;
        if (t == BT_OBJECT)
            ref(P, d, getid(P, p), off);
    }
    if (!(p = sub_rd(P, 2, end)))
        return false;
    unsigned nst = be16(p);
    for (unsigned i = 0; i < nst; i++) {
        if (!(p = sub_rd(P, I + 1, end)))
            return false;
        check_str(P, getid(P, p), false, off, "CLASS DUMP static field name");
        unsigned t = p[I];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off, "CLASS DUMP 0x%" PRIx64 ": static field %u has bad type %u",
                cid, i, t);
            return false;
        }
        if (!(p = sub_rd(P, P->tsize[t], end)))
            return false;
        if (t == BT_OBJECT)
            ref(P, d, getid(P, p), off);
    }
    if (!(p = sub_rd(P, 2, end)))
        return false;
    unsigned nin = be16(p);
    size_t own_off = d->types.n;
    VRESERVE(P, d->types, d->types.n + nin);
    for (unsigned i = 0; i < nin; i++) {
        if (!(p = sub_rd(P, I + 1, end)))
            return false;
        check_str(P, getid(P, p), false, off, "CLASS DUMP instance field name");
        unsigned t = p[I];
        if (!P->tsize[t]) {
            ERR(P, HK_SUBRECORD, off, "CLASS DUMP 0x%" PRIx64 ": instance field %u has bad type %u",
                cid, i, t);
            return false;
        }
        d->types.v[d->types.n++] = (uint8_t)t;
    }
    if (cid && map_put(P, &d->dcls, cid, (uint32_t)d->dc.n, NULL)) {
        struct dclass *c = VPUSH(P, d->dc);
        memset(c, 0, sizeof *c);
        c->id = cid;
        c->super = super;
        c->off = off;
        c->own_off = own_off;
        c->own_n = nin;
        c->layout = -1;
    } else {
        d->types.n = own_off;
    }
    return true;
}

static bool sub_instance(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 2 * I + 8, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint64_t cid = getid(P, p + I + 4);
    uint32_t n = be32(p + 2 * I + 4);
    struct hprof_dump_summary *ds = DS(P);
    ds->instances++;
    ds->instance_bytes += n;
    add_object(P, d, oid, off, "INSTANCE DUMP");
    heap_trace(P, d, trace, off, "INSTANCE DUMP");
    if (cur(P) + n > end) {
        P->straddle = true;
        return false;
    }
    const uint8_t *data = NULL;
    if (n <= MAX_NEED) {
        if (!(data = rd(P, n)))
            return false;
    } else if (!skip(P, n)) {
        return false;
    }
    uint32_t ci;
    if (map_get(&d->dcls, cid, &ci)) {
        int32_t li = layout_of(P, d, ci);
        if (li >= 0) {
            instance_fields(P, d, ci, li, data, n, off);
            return true;
        }
    }
    /* class (or a superclass) not dumped yet: check at the end of the dump */
    struct dinst *x = VPUSH(P, d->di);
    x->class_id = cid;
    x->off = off;
    x->nbytes = n;
    x->data_off = d->dbytes.n;
    if (data && n) {
        VRESERVE(P, d->dbytes, d->dbytes.n + n);
        memcpy(d->dbytes.v + d->dbytes.n, data, n);
        d->dbytes.n += n;
    } else {
        x->data_off = SIZE_MAX;
    }
    return true;
}

static bool sub_obj_array(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, 2 * I + 8, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint32_t n = be32(p + I + 4);
    uint64_t cid = getid(P, p + I + 8);
    struct hprof_dump_summary *ds = DS(P);
    ds->object_arrays++;
    ds->object_array_elements += n;
    add_object(P, d, oid, off, "OBJECT ARRAY DUMP");
    heap_trace(P, d, trace, off, "OBJECT ARRAY DUMP");
    uint64_t bytes = (uint64_t)n * I;
    if (cur(P) + bytes > end) {
        P->straddle = true;
        return false;
    }
    uint32_t ci;
    if (map_get(&d->dcls, cid, &ci)) {
        d->dc.v[ci].count++;
        d->dc.v[ci].bytes += bytes;
        d->dc.v[ci].is_array_cls = true;
    } else {
        struct darr *a = VPUSH(P, d->da);
        a->class_id = cid;
        a->off = off;
        a->elems = n;
    }
    uint32_t left = n;
    const uint32_t chunk = (uint32_t)(MAX_NEED / I);
    while (left) {
        uint32_t k = left < chunk ? left : chunk;
        if (!(p = rd(P, (size_t)k * I)))
            return false;
        if (I == 8) {
            for (uint32_t i = 0; i < k; i++)
                ref(P, d, be64(p + 8 * (size_t)i), off);
        } else {
            for (uint32_t i = 0; i < k; i++)
                ref(P, d, be32(p + 4 * (size_t)i), off);
        }
        left -= k;
    }
    return true;
}

static bool sub_prim_array(struct parser *P, struct dump *d, uint64_t off, uint64_t end)
{
    unsigned I = P->idsize;
    const uint8_t *p = sub_rd(P, I + 9, end);
    if (!p)
        return false;
    uint64_t oid = getid(P, p);
    uint32_t trace = be32(p + I);
    uint32_t n = be32(p + I + 4);
    unsigned t = p[I + 8];
    add_object(P, d, oid, off, "PRIMITIVE ARRAY DUMP");
    heap_trace(P, d, trace, off, "PRIMITIVE ARRAY DUMP");
    if (t < 4 || t > 11) {
        ERR(P, HK_SUBRECORD, off, "PRIMITIVE ARRAY DUMP 0x%" PRIx64 ": bad element type %u", oid,
            t);
        return false;
    }
    uint64_t bytes = (uint64_t)n * P->tsize[t];
    struct hprof_dump_summary *ds = DS(P);
    ds->primitive_arrays++;
    ds->primitive_array_bytes += bytes;
    d->prim_count[t]++;
    d->prim_bytes[t] += bytes;
    if (cur(P) + bytes > end) {
        P->straddle = true;
        return false;
    }
    return skip(P, bytes);
}

/* Parse the sub-records of one HEAP DUMP or HEAP DUMP SEGMENT record body */
static void dump_body(struct parser *P, uint64_t len)
{
    struct dump *d = P->d;
    unsigned I = P->idsize;
    uint64_t end = cur(P) + len;
    DS(P)->bytes += len;
    if (d->skip_rest) {
        skip(P, len);
        return;
    }
    while (!P->fatal && cur(P) < end) {
        uint64_t off = cur(P);
        const uint8_t *p = rd(P, 1);
        if (!p)
            return;
        unsigned tag = *p;
        bool ok = true;
        int root = -1;
        uint32_t thread = 0;
        P->straddle = false;
        switch (tag) {
        case S_ROOT_UNKNOWN:
        case S_ROOT_STICKY_CLASS:
        case S_ROOT_MONITOR_USED:
            if ((p = sub_rd(P, I, end))) {
                root = tag == S_ROOT_UNKNOWN        ? HR_UNKNOWN
                       : tag == S_ROOT_STICKY_CLASS ? HR_STICKY_CLASS
                                                    : HR_MONITOR_USED;
                ref(P, d, getid(P, p), off);
            }
            break;
        case S_ROOT_JNI_GLOBAL:
            if ((p = sub_rd(P, 2 * I, end))) {
                root = HR_JNI_GLOBAL;
                ref(P, d, getid(P, p), off);
            }
            break;
        case S_ROOT_JNI_LOCAL:
        case S_ROOT_JAVA_FRAME:
            if ((p = sub_rd(P, I + 8, end))) {
                root = tag == S_ROOT_JNI_LOCAL ? HR_JNI_LOCAL : HR_JAVA_FRAME;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                heap_thread(P, d, thread, off, sub_name(tag));
            }
            break;
        case S_ROOT_NATIVE_STACK:
        case S_ROOT_THREAD_BLOCK:
            if ((p = sub_rd(P, I + 4, end))) {
                root = tag == S_ROOT_NATIVE_STACK ? HR_NATIVE_STACK : HR_THREAD_BLOCK;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                heap_thread(P, d, thread, off, sub_name(tag));
            }
            break;
        case S_ROOT_THREAD_OBJECT:
            if ((p = sub_rd(P, I + 8, end))) {
                root = HR_THREAD_OBJECT;
                ref(P, d, getid(P, p), off);
                thread = be32(p + I);
                uint32_t trace = be32(p + I + 4);
                heap_thread(P, d, thread, off, sub_name(tag));
                heap_trace(P, d, trace, off, sub_name(tag));
            }
            break;
        case S_CLASS_DUMP:
            ok = sub_class_dump(P, d, off, end);
            break;
        case S_INSTANCE_DUMP:
            ok = sub_instance(P, d, off, end);
            break;
        case S_OBJ_ARRAY_DUMP:
            ok = sub_obj_array(P, d, off, end);
            break;
        case S_PRIM_ARRAY_DUMP:
            ok = sub_prim_array(P, d, off, end);
            break;
        default:
            ERR(P, HK_SUBRECORD, off,
                "unknown heap dump sub-record tag 0x%02x (rest of the record skipped)", tag);
            ok = false;
        }
        if (root >= 0) {
            DS(P)->roots[root]++;
            DS(P)->roots_total++;
        }
        if (P->fatal)
            return;
        if (P->straddle) {
            ERR(P, HK_STRADDLE, off,
                "%s sub-record crosses the end of its %s record at offset %" PRIu64 " (%" PRIu64
                " bytes left in the record); rest of this dump not parsed",
                sub_name(tag), hprof_tag_name(P->rec_tag), P->rec_off, end - off);
            d->skip_rest = true;
            ok = false;
        } else if (!p && ok) {
            ok = false;
        }
        if (!ok) {
            d->desync = true;
            if (cur(P) < end)
                skip(P, end - cur(P));
            return;
        }
    }
}

static int cmp_class_row(const void *a, const void *b)
{
    const struct hprof_class_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static char *xstrndup(struct parser *P, const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (!r)
        die(P, "out of memory");
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

static char *class_name_by_id(struct parser *P, uint64_t cid)
{
    uint32_t ci;
    const char *s;
    size_t n;
    if (map_get(&P->class_by_id, cid, &ci) && str_get(P, P->cls.v[ci].name, &s, &n))
        return xstrndup(P, s, n);
    char buf[40];
    snprintf(buf, sizeof buf, "0x%" PRIx64, cid);
    return xstrndup(P, buf, strlen(buf));
}

static void dump_top_classes(struct parser *P, struct dump *d)
{
    struct hprof_dump_summary *ds = DS(P);
    size_t cand = 0;
    for (size_t i = 0; i < d->dc.n; i++)
        cand += d->dc.v[i].count > 0;
    for (int t = 4; t < 12; t++)
        cand += d->prim_count[t] > 0;
    if (!cand || !P->o->top_n)
        return;
    struct hprof_class_row *rows = calloc(cand, sizeof *rows);
    if (!rows)
        die(P, "out of memory");
    ds->top = rows; /* freed with the summary even if die() strikes below */
    size_t n = 0;
    for (size_t i = 0; i < d->dc.n; i++) {
        const struct dclass *c = &d->dc.v[i];
        if (c->count == 0)
            continue;
        rows[n] = (struct hprof_class_row){.class_id = c->id, .count = c->count, .bytes = c->bytes};
        rows[n].name = class_name_by_id(P, c->id);
        ds->ntop = ++n;
    }
    for (unsigned t = 4; t < 12; t++) {
        if (d->prim_count[t] == 0)
            continue;
        char buf[16];
        snprintf(buf, sizeof buf, "%s[]", hprof_type_name(t));
        rows[n] = (struct hprof_class_row){.count = d->prim_count[t], .bytes = d->prim_bytes[t]};
        rows[n].name = xstrndup(P, buf, strlen(buf));
        ds->ntop = ++n;
    }
    qsort(rows, n, sizeof *rows, cmp_class_row);
    size_t keep = n < P->o->top_n ? n : P->o->top_n;
    for (size_t i = keep; i < n; i++)
        free(rows[i].name);
    ds->ntop = keep;
}

static void dump_finish(struct parser *P)
{
    struct dump *d = P->d;
    struct hprof_dump_summary *ds = DS(P);
    if (!d->desync && !P->fatal) {
        ds->complete = true;
        /* instances whose class layout was not known when they were read */
        for (size_t i = 0; i < d->di.n; i++) {
            struct dinst *x = &d->di.v[i];
            uint32_t ci;
            if (!map_get(&d->dcls, x->class_id, &ci)) {
                ERR(P, HK_INSTANCE, x->off,
                    "INSTANCE DUMP of class 0x%" PRIx64 ", which has no CLASS DUMP", x->class_id);
                continue;
            }
            int32_t li = layout_of(P, d, ci);
            if (li < 0) {
                if (d->dc.v[ci].layout != -2) {
                    ERR(P, HK_CLASS_DUMP, d->dc.v[ci].off,
                        "CLASS DUMP 0x%" PRIx64 ": superclass chain %s; instances not checked",
                        d->dc.v[ci].id,
                        li == -1 ? "reaches a class with no CLASS DUMP"
                                 : "has a cycle or is too large");
                    d->dc.v[ci].layout = -2;
                }
                continue;
            }
            instance_fields(P, d, ci, li,
                            x->data_off == SIZE_MAX ? NULL : d->dbytes.v + x->data_off, x->nbytes,
                            x->off);
        }
        for (size_t i = 0; i < d->da.n; i++) {
            struct darr *a = &d->da.v[i];
            uint32_t ci;
            if (!map_get(&d->dcls, a->class_id, &ci)) {
                ERR(P, HK_INSTANCE, a->off,
                    "OBJECT ARRAY DUMP of array class 0x%" PRIx64 ", which has no CLASS DUMP",
                    a->class_id);
                continue;
            }
            d->dc.v[ci].count++;
            d->dc.v[ci].bytes += a->elems * P->idsize;
        }
        pend_compact(d);
        uint64_t dangling = 0;
        struct pend ex[DANGLING_EXAMPLES];
        size_t nex = 0;
        for (size_t i = 0; i < d->pend.n; i++) {
            struct pend *q = &d->pend.v[i];
            dangling += q->count;
            /* keep the examples with the smallest offsets */
            size_t at = nex;
            while (at > 0 && ex[at - 1].off > q->off)
                at--;
            if (at < DANGLING_EXAMPLES) {
                size_t last = nex < DANGLING_EXAMPLES ? nex : DANGLING_EXAMPLES - 1;
                memmove(&ex[at + 1], &ex[at], (last - at) * sizeof *ex);
                ex[at] = *q;
                if (nex < DANGLING_EXAMPLES)
                    nex++;
            }
        }
        ds->dangling = dangling;
        if (dangling) {
            char buf[600];
            size_t bl = 0;
            for (size_t i = 0; i < nex && bl < sizeof buf; i++)
                bl += (size_t)snprintf(buf + bl, sizeof buf - bl,
                                       "%s0x%" PRIx64 " from the sub-record at offset %" PRIu64,
                                       i ? ", " : "", ex[i].target, ex[i].off);
            viol(P, dangling <= P->o->allow_dangling ? HPROF_WARNING : HPROF_ERROR, HK_DANGLING,
                 ex[0].off,
                 "heap dump at offset %" PRIu64 ": %" PRIu64
                 " dangling references to %zu distinct ids not in the dump (allowed: %" PRIu64
                 "), e.g. %s",
                 ds->offset, dangling, d->pend.n, P->o->allow_dangling, buf);
        }
    }
    dump_top_classes(P, d);
    dump_free(d);
    P->d = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Summary                                                                                    */

static char *frame_string(struct parser *P, uint64_t fid)
{
    uint32_t fi;
    if (!fid || !map_get(&P->frames, fid, &fi))
        return xstrndup(P, "", 0);
    const struct frame *f = &P->fr.v[fi];
    const char *cls = "?", *m = "?", *src = "Unknown Source";
    size_t cl = 1, ml = 1, sl = strlen(src);
    uint32_t ci;
    if (map_get(&P->class_by_serial, f->class_serial, &ci))
        str_get(P, P->cls.v[ci].name, &cls, &cl);
    str_get(P, f->method, &m, &ml);
    str_get(P, f->source, &src, &sl);
    char where[64];
    if (f->line > 0)
        snprintf(where, sizeof where, ":%" PRId32 ")", f->line);
    else
        snprintf(where, sizeof where, ")");
    if (f->line == -3) {
        src = "Native Method";
        sl = strlen(src);
    }
    size_t n = cl + 1 + ml + 1 + sl + strlen(where) + 1;
    char *r = malloc(n);
    if (!r)
        die(P, "out of memory");
    snprintf(r, n, "%.*s.%.*s(%.*s%s", (int)cl, cls, (int)ml, m, (int)sl, src, where);
    for (size_t i = 0; i < cl; i++)
        if (r[i] == '/')
            r[i] = '.';
    return r;
}

static char *trace_top_frame(struct parser *P, uint32_t serial)
{
    uint32_t ti;
    if (!map_get(&P->traces, serial, &ti))
        return xstrndup(P, "", 0);
    return frame_string(P, P->tr.v[ti].top);
}

static int cmp_site(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes > y->live_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes)
        return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->trace < y->trace ? -1 : x->trace > y->trace;
}

static void build_summary(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    size_t top = P->o->top_n;

    if (P->sites.n) {
        qsort(P->sites.v, P->sites.n, sizeof *P->sites.v, cmp_site);
        size_t n = P->sites.n < top ? P->sites.n : top;
        if (n) {
            S->site_rows = calloc(n, sizeof *S->site_rows);
            if (!S->site_rows)
                die(P, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            const struct site *s = &P->sites.v[i];
            struct hprof_site_row *r = &S->site_rows[i];
            S->nsite_rows = i + 1;
            r->array_type = s->array;
            r->class_serial = s->class_serial;
            r->trace = s->trace;
            r->live_bytes = s->live_bytes;
            r->live_instances = s->live_inst;
            r->alloc_bytes = s->alloc_bytes;
            r->alloc_instances = s->alloc_inst;
            uint32_t ci;
            const char *nm;
            size_t nl;
            if (map_get(&P->class_by_serial, s->class_serial, &ci) &&
                str_get(P, P->cls.v[ci].name, &nm, &nl))
                r->class_name = xstrndup(P, nm, nl);
            else
                r->class_name = xstrndup(P, "?", 1);
            r->frame = trace_top_frame(P, s->trace);
        }
    }
    if (P->samples.n) {
        if (P->samples.n > 1)
            qsort(P->samples.v, P->samples.n, sizeof *P->samples.v, cmp_sample);
        size_t n = P->samples.n < top ? P->samples.n : top;
        if (n) {
            S->cpu_rows = calloc(n, sizeof *S->cpu_rows);
            if (!S->cpu_rows)
                die(P, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            S->ncpu_rows = i + 1;
            S->cpu_rows[i].trace = P->samples.v[i].trace;
            S->cpu_rows[i].count = P->samples.v[i].count;
            S->cpu_rows[i].frame = trace_top_frame(P, P->samples.v[i].trace);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Driver                                                                                     */

static bool parse_header(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    P->rec_off = 0;
    P->rec_tag = 0;
    size_t have = ensure(P, 64);
    const uint8_t *b = P->s.buf + P->s.pos;
    size_t nul = 0;
    while (nul < have && b[nul])
        nul++;
    if (nul == have) {
        ERR(P, have < 64 ? HK_TRUNCATED : HK_HEADER, 0,
            "no NUL-terminated format name at the start of the input (%zu bytes read)", have);
        return false;
    }
    snprintf(S->version, sizeof S->version, "%.*s", (int)(nul < 31 ? nul : 31), (const char *)b);
    bool known = strcmp((const char *)b, "JAVA PROFILE 1.0.2") == 0 ||
                 strcmp((const char *)b, "JAVA PROFILE 1.0.1") == 0;
    if (!known)
        ERR(P, HK_HEADER, 0, "format name \"%s\" is not \"JAVA PROFILE 1.0.2\" or \"1.0.1\"",
            S->version);
    P->s.pos += nul + 1;
    have = ensure(P, 12);
    if (have < 12) {
        P->fatal = true;
        ERR(P, HK_TRUNCATED, nul + 1,
            "input ends inside the file header (%zu of the 12 bytes after the format name)", have);
        return false;
    }
    const uint8_t *p = rd(P, 12);
    uint32_t ids = be32(p);
    S->timestamp_ms = be64(p + 4);
    S->id_size = ids;
    if (ids != 4 && ids != 8) {
        ERR(P, HK_HEADER, nul + 1, "identifier size %" PRIu32 " (must be 4 or 8)", ids);
        return false;
    }
    P->idsize = ids;
    memset(P->tsize, 0, sizeof P->tsize);
    P->tsize[BT_OBJECT] = (uint8_t)ids;
    P->tsize[4] = P->tsize[8] = 1;
    P->tsize[5] = P->tsize[9] = 2;
    P->tsize[6] = P->tsize[10] = 4;
    P->tsize[7] = P->tsize[11] = 8;
    return true;
}

static void parse_records(struct parser *P)
{
    struct hprof_summary *S = P->sum;
    while (!P->fatal) {
        uint64_t off = cur(P);
        size_t have = ensure(P, 9);
        if (have == 0)
            break;
        P->rec_off = off;
        P->rec_tag = P->s.buf[P->s.pos];
        P->rec_len = 0;
        if (have < 9) {
            P->fatal = true;
            ERR(P, HK_TRUNCATED, off, "input ends inside a record header (%zu of 9 bytes)", have);
            break;
        }
        const uint8_t *h = rd(P, 9);
        unsigned tag = h[0];
        uint64_t len = be32(h + 5);
        P->rec_len = len;
        S->records++;
        S->tag_counts[tag]++;
        const char *name = hprof_tag_name(tag);
        uint64_t end = off + 9 + len;
        if (P->size_known && end > P->file_size) {
            P->fatal = true;
            ERR(P, HK_TRUNCATED, off,
                "%s record (tag 0x%02x) of length %" PRIu64 " extends %" PRIu64
                " bytes beyond the end of the file",
                name ? name : "unknown", tag, len, end - P->file_size);
            break;
        }
        /* heap dump segment sequencing */
        if (tag == T_HEAP_DUMP_SEGMENT) {
            if (!P->in_segments) {
                if (P->d) /* cannot happen: 0x0C dumps are finished at once */
                    dump_finish(P);
                dump_begin(P, true);
                P->in_segments = true;
                P->seg_open_off = off;
            }
            DS(P)->segments++;
        } else if (tag == T_HEAP_DUMP_END) {
            if (!P->in_segments) {
                ERR(P, HK_SEGMENT, off, "HEAP DUMP END without an open HEAP DUMP SEGMENT");
            } else {
                P->in_segments = false;
                dump_finish(P);
            }
            if (len)
                ERR(P, HK_LENGTH, off, "HEAP DUMP END record body is %" PRIu64 " bytes, expected 0",
                    len);
            skip(P, len);
            continue;
        } else if (P->in_segments) {
            ERR(P, HK_SEGMENT, off,
                "%s record (tag 0x%02x) between the HEAP DUMP SEGMENTs of the dump opened at "
                "offset %" PRIu64,
                name ? name : "unknown", tag, P->seg_open_off);
        }
        if (len == 0) {
            ERR(P, HK_ZERO_LENGTH, off, "%s record (tag 0x%02x) of length 0",
                name ? name : "unknown", tag);
            continue;
        }
        uint64_t body = cur(P);
        switch (tag) {
        case T_STRING:
            S->strings++;
            rec_string(P, len);
            break;
        case T_LOAD_CLASS:
            S->classes++;
            rec_load_class(P, len);
            break;
        case T_UNLOAD_CLASS:
            rec_unload_class(P, len);
            break;
        case T_STACK_FRAME:
            S->frames++;
            rec_stack_frame(P, len);
            break;
        case T_STACK_TRACE:
            S->traces++;
            rec_stack_trace(P, len);
            break;
        case T_ALLOC_SITES:
            rec_alloc_sites(P, len);
            break;
        case T_HEAP_SUMMARY:
            rec_heap_summary(P, len);
            break;
        case T_START_THREAD:
            rec_start_thread(P, len);
            break;
        case T_END_THREAD:
            rec_end_thread(P, len);
            break;
        case T_CPU_SAMPLES:
            rec_cpu_samples(P, len);
            break;
        case T_CONTROL_SETTINGS:
            rec_control_settings(P, len);
            break;
        case T_HEAP_DUMP:
            if (P->in_segments) {
                /* reported above; parse it as part of the open dump */
                DS(P)->segments++;
                dump_body(P, len);
            } else {
                dump_begin(P, false);
                DS(P)->segments = 1;
                dump_body(P, len);
                dump_finish(P);
            }
            break;
        case T_HEAP_DUMP_SEGMENT:
            dump_body(P, len);
            break;
        default:
            ERR(P, HK_UNKNOWN_TAG, off, "unknown record tag 0x%02x (length %" PRIu64 ")", tag, len);
            break;
        }
        if (P->fatal)
            break;
        uint64_t used = cur(P) - body;
        if (used < len)
            skip(P, len - used);
    }
    if (P->in_segments) {
        ERR(P, HK_SEGMENT, cur(P),
            "input ends inside the heap dump opened at offset %" PRIu64 " (no HEAP DUMP END)",
            P->seg_open_off);
        P->in_segments = false;
        P->fatal = true; /* the dump is incomplete: no integrity checks */
    }
    if (P->d)
        dump_finish(P);
    check_thread_refs(P);
    /* LOAD CLASS trace serials defined only later (accepted with --lenient-traces) */
    for (size_t i = 0; i < P->fwd.n; i++)
        if (!map_get(&P->traces, P->fwd.v[i].serial, NULL))
            ERR(P, HK_TRACE, P->fwd.v[i].off,
                "LOAD CLASS: stack trace serial %" PRIu32 " not defined by any STACK TRACE",
                P->fwd.v[i].serial);
}

static void parser_free(struct parser *P)
{
    map_free(&P->strings);
    map_free(&P->class_by_serial);
    map_free(&P->class_by_id);
    map_free(&P->frames);
    map_free(&P->traces);
    map_free(&P->threads);
    map_free(&P->thread_refs);
    VFREE(P->tref);
    VFREE(P->str);
    VFREE(P->sarena);
    VFREE(P->cls);
    VFREE(P->fr);
    VFREE(P->tr);
    VFREE(P->fwd);
    VFREE(P->sites);
    VFREE(P->samples);
    if (P->d)
        dump_free(P->d);
    if (P->s.gz)
        inflateEnd(&P->s.z);
    free(P->s.buf);
    free(P->s.zin);
}

int hprof_parse_fd(int fd, const struct hprof_opts *opts, hprof_report_fn report, void *ctx,
                   struct hprof_summary *sum, char *errbuf, size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    if (errlen)
        errbuf[0] = 0;
    struct parser *P = calloc(1, sizeof *P);
    if (!P) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    P->o = opts;
    P->report = report;
    P->ctx = ctx;
    P->sum = sum;
    P->errbuf = errbuf;
    P->errlen = errlen;
    P->s.fd = fd;
    P->strings.is_set = false;
    P->threads.is_set = true;
    int rc = 0;
    if (setjmp(P->jb)) {
        rc = -1;
        goto out;
    }
    P->s.buf = malloc(BUF_CAP);
    P->s.zin = malloc(ZIN_CAP);
    if (!P->s.buf || !P->s.zin)
        die(P, "out of memory");
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    /* sniff the gzip magic in the first block, read into the compressed-input buffer */
    size_t got = 0;
    while (got < 2) {
        size_t r = read_some(P, P->s.zin + got, ZIN_CAP - got);
        if (r == 0)
            break;
        got += r;
    }
    if (got >= 2 && P->s.zin[0] == 0x1f && P->s.zin[1] == 0x8b) {
        P->s.gz = true;
        sum->gzip = true;
        if (inflateInit2(&P->s.z, 15 + 32) != Z_OK)
            die(P, "zlib: inflateInit2 failed");
        P->s.z_live = true;
        P->s.z.next_in = P->s.zin;
        P->s.z.avail_in = (uInt)got;
        P->s.zin_total = got;
    } else {
        memcpy(P->s.buf, P->s.zin, got);
        P->s.len = got;
        if (got == 0)
            P->s.eof = true;
        if (regular) {
            P->size_known = true;
            P->file_size = (uint64_t)st.st_size;
        }
    }
    if (parse_header(P) && !P->fatal)
        parse_records(P);
    sum->bytes = cur(P);
    build_summary(P);
out:
    parser_free(P);
    free(P);
    return rc;
}

void hprof_summary_free(struct hprof_summary *S)
{
    for (size_t i = 0; i < S->nsite_rows; i++) {
        free(S->site_rows[i].class_name);
        free(S->site_rows[i].frame);
    }
    free(S->site_rows);
    for (size_t i = 0; i < S->ncpu_rows; i++)
        free(S->cpu_rows[i].frame);
    free(S->cpu_rows);
    for (size_t i = 0; i < S->ndumps; i++) {
        for (size_t j = 0; j < S->dumps[i].ntop; j++)
            free(S->dumps[i].top[j].name);
        free(S->dumps[i].top);
    }
    free(S->dumps);
    memset(S, 0, sizeof *S);
}

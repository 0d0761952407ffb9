/*
 * reader_internal.h: what the modules of the HPROF reader share (tools/reader/): the record and
 * sub-record tags, the id map, growable arrays, the parser state and the byte input. Not for
 * the tools: they use hprof_parse.h (and profile.h).
 *
 * Input is read through one large buffer (plain read(2) or zlib inflate over concatenated
 * gzip members); every parser step asks for the few bytes it needs with rd(), whose fast
 * path is an inline bounds check. Ids, strings, frames and traces go into open-addressing
 * hash maps of u64 keys; the objects of a heap dump into a hash set of u64 ids. References
 * to objects not yet seen are kept in a "pending" array that is periodically filtered
 * against the set, sorted and de-duplicated, so that memory stays bounded by the number of
 * distinct forward targets. A violation is reported and parsing goes on; only a truncated
 * input or corrupt gzip stops it (fatal), and only I/O or memory errors jump out (hp_die).
 */
#ifndef HPROF_READER_INTERNAL_H
#define HPROF_READER_INTERNAL_H

#include "grow.h"
#include "hprof_parse.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* ------------------------------------------------------------------------------------------ */
/* Growable arrays                                                                            */

#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

struct parser;
void *hp_grow(struct parser *P, void *p, size_t *cap, size_t need, size_t elsz);
#define VRESERVE(P, vec, need)                                                                     \
    ((vec).v = hp_grow((P), (vec).v, &(vec).cap, (need), sizeof *(vec).v))
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

/* Objects by (trace serial, class) for --traces (trace_counts.c). */
struct trace_count;
struct trace_counts {
    struct trace_count *slots;
    size_t mask, n;
};

struct dump {
    size_t idx; /* into sum->dumps */
    struct trace_counts traces;
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
    VEC(struct hprof_sample_rec) samples;
    VEC(uint64_t) tframes;             /* frame ids of the trace being read (visitor) */
    VEC(struct hprof_site_rec) vsites; /* rows of the ALLOC SITES being read (visitor) */

    bool in_segments;
    uint64_t seg_open_off;
    struct dump *d;
    size_t dumps_cap;
    bool straddle; /* set by sub_rd when a sub-record would cross its record's end */
};

/* Shared between the modules (each defined in the module its name points to). */
_Noreturn void hp_die(struct parser *P, const char *fmt, ...);

/* trace_counts.c; prim is the element type of a primitive array (class_id 0), else 0. */
void hp_trace_count(struct parser *P, struct trace_counts *T, uint32_t trace, uint64_t class_id,
                    unsigned prim, uint64_t bytes);
void hp_trace_rows(struct parser *P, struct trace_counts *T, struct hprof_dump_summary *ds);
/* heap_dump.c: a class's name by id (its id in hex if unknown), or with prim a primitive array
 * type's ("int[]"); malloc'ed. */
char *hp_class_name(struct parser *P, uint64_t class_id, unsigned prim);
void hp_trace_counts_free(struct trace_counts *T);
bool hp_map_put(struct parser *P, struct map *m, uint64_t k, uint32_t v, uint32_t *old);
bool hp_parse_header(struct parser *P);
bool hp_skip(struct parser *P, uint64_t n);
bool hp_str_get(const struct parser *P, uint64_t id, const char **p, size_t *len);
char *hp_xstrndup(struct parser *P, const char *s, size_t n);
const char *hp_sub_name(unsigned tag);
const uint8_t *hp_rd_slow(struct parser *P, size_t n);
size_t hp_ensure(struct parser *P, size_t n);
size_t hp_read_some(struct parser *P, uint8_t *dst, size_t n);
void hp_build_summary(struct parser *P);
void hp_check_str(struct parser *P, uint64_t id, bool allow0, uint64_t off, const char *what);
void hp_check_thread(struct parser *P, uint32_t serial, uint64_t off, const char *what);
void hp_dump_begin(struct parser *P, bool segmented);
void hp_dump_body(struct parser *P, uint64_t len);
void hp_dump_finish(struct parser *P);
void hp_dump_free(struct dump *d);
void hp_map_free(struct map *m);
void hp_map_init(struct parser *P, struct map *m, size_t cap, bool is_set);
void hp_parse_records(struct parser *P);
void hp_truncated(struct parser *P);
void hp_viol(struct parser *P, enum hprof_severity sev, enum hprof_kind k, uint64_t off,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static inline uint64_t cur(const struct parser *P)
{
    return P->s.base + P->s.pos;
}

/* The next n bytes (valid until the next rd/hp_skip call), or NULL at end of input */
static inline const uint8_t *rd(struct parser *P, size_t n)
{
    struct src *s = &P->s;
    if (s->len - s->pos >= n) {
        const uint8_t *p = s->buf + s->pos;
        s->pos += n;
        return p;
    }
    return hp_rd_slow(P, n);
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

#define ERR(P, k, off, ...) hp_viol((P), HPROF_ERROR, (k), (off), __VA_ARGS__)
#define DS(P) (&(P)->sum->dumps[(P)->d->idx])

#endif

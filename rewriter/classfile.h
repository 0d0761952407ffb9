/* Class-file primitives for the rewriter: a bounds-checked big-endian reader, a growable byte
 * buffer, the constant pool (every tag up to class-file version 69) with find-or-append of new
 * entries, and the outline of a class file (fields, methods, attributes as byte ranges).
 * Pure C11: no JVMTI, no JNI. Follows JVMS chapter 4.
 *
 * Nothing here trusts its input: every read is bounds-checked, every constant-pool index is
 * checked against the pool and its tag before use, and a malformed class file is reported as an
 * error, never a crash. */
#ifndef HPROF_CLASSFILE_H
#define HPROF_CLASSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- errors ---------------------------------------------------------------------------------- */

/* Writes a formatted message into err (if err and errlen are non-zero). Returns -1 so that callers
 * can write "return cf_error(err, errlen, ...)". */
int cf_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- reading --------------------------------------------------------------------------------- */

/* A cursor over a byte range. Reads past the end return 0 and set bad; callers check bad once
 * after a group of reads. */
struct cf_reader {
    const uint8_t *p;
    size_t len;
    size_t pos;
    bool bad;
};

static inline void cf_reader_init(struct cf_reader *r, const uint8_t *p, size_t len)
{
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->bad = false;
}

static inline bool cf_need(struct cf_reader *r, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = true;
        return false;
    }
    return true;
}

static inline uint8_t cf_u1(struct cf_reader *r)
{
    if (!cf_need(r, 1))
        return 0;
    return r->p[r->pos++];
}

static inline uint16_t cf_u2(struct cf_reader *r)
{
    if (!cf_need(r, 2))
        return 0;
    uint16_t v = (uint16_t)((r->p[r->pos] << 8) | r->p[r->pos + 1]);
    r->pos += 2;
    return v;
}

static inline uint32_t cf_u4(struct cf_reader *r)
{
    if (!cf_need(r, 4))
        return 0;
    const uint8_t *q = r->p + r->pos;
    r->pos += 4;
    return ((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) | q[3];
}

/* Skips n bytes; returns a pointer to them or NULL (and sets bad) if they are not all there. */
static inline const uint8_t *cf_skip(struct cf_reader *r, size_t n)
{
    if (!cf_need(r, n))
        return NULL;
    const uint8_t *q = r->p + r->pos;
    r->pos += n;
    return q;
}

static inline uint16_t cf_get_u2(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t cf_get_u4(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline void cf_put_u2(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void cf_put_u4(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ---- writing --------------------------------------------------------------------------------- */

/* A growable byte buffer. Allocation failure sets oom; later writes are dropped. */
struct cf_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    bool oom;
};

void cf_buf_init(struct cf_buf *b);
void cf_buf_free(struct cf_buf *b);
bool cf_buf_reserve(struct cf_buf *b, size_t extra);
void cf_buf_bytes(struct cf_buf *b, const void *p, size_t n);
void cf_buf_u1(struct cf_buf *b, uint8_t v);
void cf_buf_u2(struct cf_buf *b, uint16_t v);
void cf_buf_u4(struct cf_buf *b, uint32_t v);

/* ---- memory arena ---------------------------------------------------------------------------- */

/* Allocations that live as long as one rewrite (names built for synthesized frames, copies of new
 * constant-pool strings). Freed all at once. */
struct cf_arena {
    struct cf_arena_block *head;
};

void cf_arena_init(struct cf_arena *a);
void *cf_arena_alloc(struct cf_arena *a, size_t n); /* NULL on allocation failure */
void cf_arena_free(struct cf_arena *a);

/* ---- constant pool --------------------------------------------------------------------------- */

enum cf_tag {
    CF_UTF8 = 1,
    CF_INTEGER = 3,
    CF_FLOAT = 4,
    CF_LONG = 5,
    CF_DOUBLE = 6,
    CF_CLASS = 7,
    CF_STRING = 8,
    CF_FIELDREF = 9,
    CF_METHODREF = 10,
    CF_INTERFACE_METHODREF = 11,
    CF_NAME_AND_TYPE = 12,
    CF_METHOD_HANDLE = 15,
    CF_METHOD_TYPE = 16,
    CF_DYNAMIC = 17,
    CF_INVOKE_DYNAMIC = 18,
    CF_MODULE = 19,
    CF_PACKAGE = 20,
};

/* One constant-pool slot. The second slot of a Long or Double has tag 0 (unusable), as do slot 0
 * and anything out of range. */
struct cf_const {
    uint8_t tag;
    uint16_t a;      /* first index operand (Class name, ref class, NaT name, MethodHandle ref) */
    uint16_t b;      /* second index operand (ref NaT, NaT descriptor); MethodHandle kind */
    uint32_t value;  /* Integer/Float bits; high word of Long/Double */
    uint32_t value2; /* low word of Long/Double */
    const uint8_t *utf; /* Utf8 bytes (modified UTF-8, not NUL-terminated) */
    uint16_t utf_len;
};

struct cf_pool {
    struct cf_const *c; /* indexed 1..count-1 */
    uint32_t count;     /* constant_pool_count: the next free index */
    uint32_t cap;
    uint32_t orig_count; /* count in the input; entries at and above it are appended ones */
    struct cf_buf added; /* serialized appended entries */
    struct cf_arena *arena;
};

/* Parses the constant pool at r (positioned at constant_pool_count). Returns 0 or -1 with err. */
int cf_pool_parse(struct cf_pool *cp, struct cf_reader *r, struct cf_arena *arena, char *err,
                  size_t errlen);
void cf_pool_free(struct cf_pool *cp);

/* Entry at i if it exists and has tag, else NULL. */
const struct cf_const *cf_pool_get(const struct cf_pool *cp, uint32_t i, uint8_t tag);

/* The Utf8 string at i (NULL if i is not a Utf8). */
const uint8_t *cf_pool_utf8(const struct cf_pool *cp, uint32_t i, uint16_t *len);
/* The name of Class entry i (NULL if i is not a Class naming a Utf8). */
const uint8_t *cf_pool_class_name(const struct cf_pool *cp, uint32_t i, uint16_t *len);
/* True if Utf8 entry i equals the NUL-terminated string s. */
bool cf_pool_utf8_is(const struct cf_pool *cp, uint32_t i, const char *s);

/* Find-or-append. Return the index, or 0 if the pool is full (65535 entries) or memory ran out. */
uint16_t cf_pool_utf8_index(struct cf_pool *cp, const uint8_t *s, uint16_t len);
uint16_t cf_pool_class_index(struct cf_pool *cp, const uint8_t *name, uint16_t len);
uint16_t cf_pool_nat_index(struct cf_pool *cp, const char *name, const char *desc);
uint16_t cf_pool_methodref_index(struct cf_pool *cp, uint16_t class_index, const char *name,
                                 const char *desc);
uint16_t cf_pool_integer_index(struct cf_pool *cp, uint32_t value);

/* Byte equality of two modified-UTF-8 strings. */
static inline bool cf_name_eq(const uint8_t *a, uint16_t alen, const uint8_t *b, uint16_t blen)
{
    if (alen != blen)
        return false;
    for (uint16_t i = 0; i < alen; i++)
        if (a[i] != b[i])
            return false;
    return true;
}
bool cf_name_is(const uint8_t *a, uint16_t alen, const char *s);

/* ---- class outline --------------------------------------------------------------------------- */

#define CF_ACC_STATIC 0x0008
#define CF_ACC_NATIVE 0x0100
#define CF_ACC_INTERFACE 0x0200
#define CF_ACC_ABSTRACT 0x0400

struct cf_method {
    uint16_t access, name_index, desc_index;
    uint32_t start, end; /* byte range of the whole method_info in the class file */
    uint16_t attr_count;
    uint32_t attrs_start; /* offset of the first attribute_info */
    int32_t code_attr;    /* offset of the Code attribute_info (its name index), or -1 */
};

struct cf_class {
    const uint8_t *bytes;
    size_t len;
    uint16_t minor, major;
    struct cf_pool cp;
    uint32_t cp_end; /* offset of access_flags (the end of the constant pool) */
    uint16_t access, this_class, super_class;
    uint32_t methods_count_off; /* offset of methods_count */
    uint16_t method_count;
    struct cf_method *methods;
    uint32_t methods_end; /* offset of the class's attributes_count */
};

/* Parses the outline of a whole class file (every structure's length is checked; the file must
 * end exactly after the class attributes). */
int cf_class_parse(struct cf_class *cf, const uint8_t *bytes, size_t len, struct cf_arena *arena,
                   char *err, size_t errlen);
void cf_class_free(struct cf_class *cf);

/* The this_class name. */
const uint8_t *cf_class_name(const struct cf_class *cf, uint16_t *len);

/* A parsed Code attribute (pointers into the class bytes). */
struct cf_code {
    uint16_t max_stack, max_locals;
    uint32_t code_len;
    const uint8_t *code;
    uint16_t ex_count;
    const uint8_t *ex; /* ex_count entries of 8 bytes: start, end, handler, catch_type */
    uint16_t attr_count;
    const uint8_t *attrs; /* attr_count attribute_info structures */
    uint32_t attrs_len;
};

/* Parses the Code attribute whose attribute_info starts at offset off. */
int cf_code_parse(const struct cf_class *cf, uint32_t off, struct cf_code *code, char *err,
                  size_t errlen);

#endif

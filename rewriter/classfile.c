/* Class-file primitives: see classfile.h. */
#include "classfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cf_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- buffer ---------------------------------------------------------------------------------- */

void cf_buf_init(struct cf_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

void cf_buf_free(struct cf_buf *b)
{
    free(b->data);
    cf_buf_init(b);
}

bool cf_buf_reserve(struct cf_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (extra <= b->cap - b->len)
        return true;
    size_t need = b->len + extra;
    if (need < b->len) {
        b->oom = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->oom = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void cf_buf_bytes(struct cf_buf *b, const void *p, size_t n)
{
    if (n == 0 || !cf_buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void cf_buf_u1(struct cf_buf *b, uint8_t v)
{
    if (!cf_buf_reserve(b, 1))
        return;
    b->data[b->len++] = v;
}

void cf_buf_u2(struct cf_buf *b, uint16_t v)
{
    if (!cf_buf_reserve(b, 2))
        return;
    cf_put_u2(b->data + b->len, v);
    b->len += 2;
}

void cf_buf_u4(struct cf_buf *b, uint32_t v)
{
    if (!cf_buf_reserve(b, 4))
        return;
    cf_put_u4(b->data + b->len, v);
    b->len += 4;
}

/* ---- arena ----------------------------------------------------------------------------------- */

struct cf_arena_block {
    struct cf_arena_block *next;
    size_t used, size;
    max_align_t data[];
};

void cf_arena_init(struct cf_arena *a)
{
    a->head = NULL;
}

void *cf_arena_alloc(struct cf_arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (n == 0)
        n = sizeof(max_align_t);
    struct cf_arena_block *h = a->head;
    if (!h || h->size - h->used < n) {
        size_t size = n > 16384 ? n : 16384;
        h = malloc(sizeof(*h) + size);
        if (!h)
            return NULL;
        h->next = a->head;
        h->used = 0;
        h->size = size;
        a->head = h;
    }
    void *p = (char *)h->data + h->used;
    h->used += n;
    return p;
}

void cf_arena_free(struct cf_arena *a)
{
    struct cf_arena_block *h = a->head;
    while (h) {
        struct cf_arena_block *n = h->next;
        free(h);
        h = n;
    }
    a->head = NULL;
}

/* ---- constant pool --------------------------------------------------------------------------- */

bool cf_name_is(const uint8_t *a, uint16_t alen, const char *s)
{
    size_t n = strlen(s);
    return n == alen && memcmp(a, s, n) == 0;
}

int cf_pool_parse(struct cf_pool *cp, struct cf_reader *r, struct cf_arena *arena, char *err,
                  size_t errlen)
{
    memset(cp, 0, sizeof(*cp));
    cf_buf_init(&cp->added);
    cp->arena = arena;
    uint16_t count = cf_u2(r);
    if (r->bad)
        return cf_error(err, errlen, "truncated before constant_pool_count");
    if (count == 0)
        return cf_error(err, errlen, "constant_pool_count is 0");
    cp->cap = (uint32_t)count + 16;
    cp->c = calloc(cp->cap, sizeof(*cp->c));
    if (!cp->c)
        return cf_error(err, errlen, "out of memory");
    cp->count = count;
    cp->orig_count = count;
    for (uint32_t i = 1; i < count; i++) {
        struct cf_const *c = &cp->c[i];
        uint8_t tag = cf_u1(r);
        c->tag = tag;
        switch (tag) {
        case CF_UTF8: {
            uint16_t n = cf_u2(r);
            c->utf = cf_skip(r, n);
            c->utf_len = n;
            break;
        }
        case CF_INTEGER:
        case CF_FLOAT:
            c->value = cf_u4(r);
            break;
        case CF_LONG:
        case CF_DOUBLE:
            c->value = cf_u4(r);
            c->value2 = cf_u4(r);
            if (i + 1 >= count)
                return cf_error(err, errlen, "constant %u: 8-byte constant in the last slot", i);
            i++; /* the next slot is unusable */
            cp->c[i].tag = 0;
            break;
        case CF_CLASS:
        case CF_STRING:
        case CF_METHOD_TYPE:
        case CF_MODULE:
        case CF_PACKAGE:
            c->a = cf_u2(r);
            break;
        case CF_FIELDREF:
        case CF_METHODREF:
        case CF_INTERFACE_METHODREF:
        case CF_NAME_AND_TYPE:
        case CF_DYNAMIC:
        case CF_INVOKE_DYNAMIC:
            c->a = cf_u2(r);
            c->b = cf_u2(r);
            break;
        case CF_METHOD_HANDLE:
            c->b = cf_u1(r); /* reference_kind */
            c->a = cf_u2(r);
            break;
        default:
            if (r->bad)
                break;
            return cf_error(err, errlen, "constant %u: unknown tag %u", i, tag);
        }
        if (r->bad)
            return cf_error(err, errlen, "truncated in constant pool entry %u", i);
    }
    return 0;
}

void cf_pool_free(struct cf_pool *cp)
{
    free(cp->c);
    cp->c = NULL;
    cf_buf_free(&cp->added);
}

const struct cf_const *cf_pool_get(const struct cf_pool *cp, uint32_t i, uint8_t tag)
{
    if (i == 0 || i >= cp->count || cp->c[i].tag != tag)
        return NULL;
    return &cp->c[i];
}

const uint8_t *cf_pool_utf8(const struct cf_pool *cp, uint32_t i, uint16_t *len)
{
    const struct cf_const *c = cf_pool_get(cp, i, CF_UTF8);
    if (!c)
        return NULL;
    *len = c->utf_len;
    return c->utf;
}

const uint8_t *cf_pool_class_name(const struct cf_pool *cp, uint32_t i, uint16_t *len)
{
    const struct cf_const *c = cf_pool_get(cp, i, CF_CLASS);
    if (!c)
        return NULL;
    return cf_pool_utf8(cp, c->a, len);
}

bool cf_pool_utf8_is(const struct cf_pool *cp, uint32_t i, const char *s)
{
    uint16_t n;
    const uint8_t *u = cf_pool_utf8(cp, i, &n);
    return u && cf_name_is(u, n, s);
}

/* Appends a slot; returns its index or 0. */
static uint16_t pool_append(struct cf_pool *cp, const struct cf_const *c)
{
    if (cp->count >= 65535)
        return 0;
    if (cp->count >= cp->cap) {
        uint32_t cap = cp->cap * 2;
        struct cf_const *n = realloc(cp->c, cap * sizeof(*n));
        if (!n)
            return 0;
        cp->c = n;
        cp->cap = cap;
    }
    uint16_t idx = (uint16_t)cp->count++;
    cp->c[idx] = *c;
    struct cf_buf *b = &cp->added;
    cf_buf_u1(b, c->tag);
    switch (c->tag) {
    case CF_UTF8:
        cf_buf_u2(b, c->utf_len);
        cf_buf_bytes(b, c->utf, c->utf_len);
        break;
    case CF_INTEGER:
        cf_buf_u4(b, c->value);
        break;
    case CF_CLASS:
        cf_buf_u2(b, c->a);
        break;
    default: /* NameAndType, Methodref */
        cf_buf_u2(b, c->a);
        cf_buf_u2(b, c->b);
        break;
    }
    if (b->oom)
        return 0;
    return idx;
}

uint16_t cf_pool_utf8_index(struct cf_pool *cp, const uint8_t *s, uint16_t len)
{
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        if (c->tag == CF_UTF8 && c->utf && cf_name_eq(c->utf, c->utf_len, s, len))
            return (uint16_t)i;
    }
    uint8_t *copy = cf_arena_alloc(cp->arena, len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    struct cf_const c = {.tag = CF_UTF8, .utf = copy, .utf_len = len};
    return pool_append(cp, &c);
}

uint16_t cf_pool_class_index(struct cf_pool *cp, const uint8_t *name, uint16_t len)
{
    for (uint32_t i = 1; i < cp->count; i++) {
        if (cp->c[i].tag != CF_CLASS)
            continue;
        uint16_t n;
        const uint8_t *u = cf_pool_utf8(cp, cp->c[i].a, &n);
        if (u && cf_name_eq(u, n, name, len))
            return (uint16_t)i;
    }
    uint16_t u = cf_pool_utf8_index(cp, name, len);
    if (!u)
        return 0;
    struct cf_const c = {.tag = CF_CLASS, .a = u};
    return pool_append(cp, &c);
}

uint16_t cf_pool_nat_index(struct cf_pool *cp, const char *name, const char *desc)
{
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        if (c->tag == CF_NAME_AND_TYPE && cf_pool_utf8_is(cp, c->a, name) &&
            cf_pool_utf8_is(cp, c->b, desc))
            return (uint16_t)i;
    }
    uint16_t n = cf_pool_utf8_index(cp, (const uint8_t *)name, (uint16_t)strlen(name));
    uint16_t d = n ? cf_pool_utf8_index(cp, (const uint8_t *)desc, (uint16_t)strlen(desc)) : 0;
    if (!d)
        return 0;
    struct cf_const c = {.tag = CF_NAME_AND_TYPE, .a = n, .b = d};
    return pool_append(cp, &c);
}

uint16_t cf_pool_methodref_index(struct cf_pool *cp, uint16_t class_index, const char *name,
                                 const char *desc)
{
    uint16_t nat = cf_pool_nat_index(cp, name, desc);
    if (!nat)
        return 0;
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        if (c->tag == CF_METHODREF && c->a == class_index && c->b == nat)
            return (uint16_t)i;
    }
    struct cf_const c = {.tag = CF_METHODREF, .a = class_index, .b = nat};
    return pool_append(cp, &c);
}

uint16_t cf_pool_integer_index(struct cf_pool *cp, uint32_t value)
{
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        if (c->tag == CF_INTEGER && c->value == value)
            return (uint16_t)i;
    }
    struct cf_const c = {.tag = CF_INTEGER, .value = value};
    return pool_append(cp, &c);
}

/* ---- class outline --------------------------------------------------------------------------- */

/* Skips attributes_count and the attributes at r. */
static int skip_attributes(struct cf_reader *r, const char *what, char *err, size_t errlen)
{
    uint16_t n = cf_u2(r);
    for (uint16_t i = 0; i < n && !r->bad; i++) {
        cf_u2(r);
        uint32_t len = cf_u4(r);
        cf_skip(r, len);
    }
    if (r->bad)
        return cf_error(err, errlen, "truncated in the attributes of %s", what);
    return 0;
}

int cf_class_parse(struct cf_class *cf, const uint8_t *bytes, size_t len, struct cf_arena *arena,
                   char *err, size_t errlen)
{
    memset(cf, 0, sizeof(*cf));
    cf->bytes = bytes;
    cf->len = len;
    if (!bytes || len < 10)
        return cf_error(err, errlen, "class file too short (%zu bytes)", len);
    if (len > UINT32_MAX)
        return cf_error(err, errlen, "class file too large");
    struct cf_reader r;
    cf_reader_init(&r, bytes, len);
    if (cf_u4(&r) != 0xCAFEBABEu)
        return cf_error(err, errlen, "bad magic");
    cf->minor = cf_u2(&r);
    cf->major = cf_u2(&r);
    if (cf_pool_parse(&cf->cp, &r, arena, err, errlen) < 0)
        return -1;
    cf->cp_end = (uint32_t)r.pos;
    cf->access = cf_u2(&r);
    cf->this_class = cf_u2(&r);
    cf->super_class = cf_u2(&r);
    uint16_t ni = cf_u2(&r);
    cf_skip(&r, (size_t)ni * 2);
    if (r.bad)
        return cf_error(err, errlen, "truncated in the class header");
    uint16_t nlen;
    if (!cf_pool_class_name(&cf->cp, cf->this_class, &nlen))
        return cf_error(err, errlen, "this_class %u is not a Class constant", cf->this_class);
    uint16_t nf = cf_u2(&r);
    for (uint16_t i = 0; i < nf && !r.bad; i++) {
        cf_skip(&r, 6);
        if (skip_attributes(&r, "a field", err, errlen) < 0)
            return -1;
    }
    if (r.bad)
        return cf_error(err, errlen, "truncated in the fields");
    cf->methods_count_off = (uint32_t)r.pos;
    cf->method_count = cf_u2(&r);
    if (r.bad)
        return cf_error(err, errlen, "truncated before methods_count");
    if (cf->method_count) {
        cf->methods = calloc(cf->method_count, sizeof(*cf->methods));
        if (!cf->methods)
            return cf_error(err, errlen, "out of memory");
    }
    for (uint16_t i = 0; i < cf->method_count; i++) {
        struct cf_method *m = &cf->methods[i];
        m->start = (uint32_t)r.pos;
        m->access = cf_u2(&r);
        m->name_index = cf_u2(&r);
        m->desc_index = cf_u2(&r);
        m->attr_count = cf_u2(&r);
        m->attrs_start = (uint32_t)r.pos;
        m->code_attr = -1;
        if (r.bad)
            return cf_error(err, errlen, "truncated in method %u", i);
        uint16_t l1, l2;
        if (!cf_pool_utf8(&cf->cp, m->name_index, &l1) ||
            !cf_pool_utf8(&cf->cp, m->desc_index, &l2))
            return cf_error(err, errlen, "method %u: name or descriptor is not a Utf8", i);
        for (uint16_t k = 0; k < m->attr_count; k++) {
            uint32_t aoff = (uint32_t)r.pos;
            uint16_t an = cf_u2(&r);
            uint32_t alen = cf_u4(&r);
            cf_skip(&r, alen);
            if (r.bad)
                return cf_error(err, errlen, "method %u: truncated attribute", i);
            if (cf_pool_utf8_is(&cf->cp, an, "Code")) {
                if (m->code_attr >= 0)
                    return cf_error(err, errlen, "method %u: two Code attributes", i);
                m->code_attr = (int32_t)aoff;
            }
        }
        m->end = (uint32_t)r.pos;
    }
    cf->methods_end = (uint32_t)r.pos;
    if (skip_attributes(&r, "the class", err, errlen) < 0)
        return -1;
    if (r.pos != len)
        return cf_error(err, errlen, "%zu extra bytes after the class attributes", len - r.pos);
    return 0;
}

void cf_class_free(struct cf_class *cf)
{
    free(cf->methods);
    cf->methods = NULL;
    cf_pool_free(&cf->cp);
}

const uint8_t *cf_class_name(const struct cf_class *cf, uint16_t *len)
{
    return cf_pool_class_name(&cf->cp, cf->this_class, len);
}

int cf_code_parse(const struct cf_class *cf, uint32_t off, struct cf_code *code, char *err,
                  size_t errlen)
{
    struct cf_reader r;
    if (off > cf->len)
        return cf_error(err, errlen, "Code attribute offset out of range");
    cf_reader_init(&r, cf->bytes + off, cf->len - off);
    cf_u2(&r);
    uint32_t alen = cf_u4(&r);
    if (r.bad || alen > r.len - r.pos)
        return cf_error(err, errlen, "truncated Code attribute");
    cf_reader_init(&r, cf->bytes + off + 6, alen);
    code->max_stack = cf_u2(&r);
    code->max_locals = cf_u2(&r);
    code->code_len = cf_u4(&r);
    if (r.bad)
        return cf_error(err, errlen, "truncated Code attribute");
    if (code->code_len == 0 || code->code_len > 65535)
        return cf_error(err, errlen, "bad code_length %u", code->code_len);
    code->code = cf_skip(&r, code->code_len);
    code->ex_count = cf_u2(&r);
    code->ex = cf_skip(&r, (size_t)code->ex_count * 8);
    code->attr_count = cf_u2(&r);
    if (r.bad)
        return cf_error(err, errlen, "truncated Code attribute");
    size_t astart = r.pos;
    code->attrs = r.p + r.pos;
    for (uint16_t i = 0; i < code->attr_count && !r.bad; i++) {
        cf_u2(&r);
        uint32_t n = cf_u4(&r);
        cf_skip(&r, n);
    }
    if (r.bad)
        return cf_error(err, errlen, "truncated attribute inside Code");
    if (r.pos != alen)
        return cf_error(err, errlen, "Code attribute length mismatch");
    code->attrs_len = (uint32_t)(r.pos - astart);
    return 0;
}

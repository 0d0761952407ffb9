/* StackMapTable decoding/encoding and the type simulation: see stackmap.h. */
#include "stackmap.h"

#include <stdlib.h>
#include <string.h>

#define N(s) ((const uint8_t *)(s)), ((uint16_t)(sizeof(s) - 1))

bool vt_equal(const struct vtype *a, const struct vtype *b)
{
    if (a->tag != b->tag)
        return false;
    if (a->tag == VT_OBJECT)
        return cf_name_eq(a->name, a->nlen, b->name, b->nlen);
    if (a->tag == VT_UNINIT)
        return a->off == b->off;
    return true;
}

static bool is_cat2(uint8_t tag)
{
    return tag == VT_LONG || tag == VT_DOUBLE;
}

static struct vtype vt_simple(uint8_t tag)
{
    struct vtype v = {.tag = tag};
    return v;
}

static struct vtype vt_object(uint16_t cpidx, const uint8_t *name, uint16_t nlen)
{
    struct vtype v = {.tag = VT_OBJECT, .cpidx = cpidx, .name = name, .nlen = nlen};
    return v;
}

/* Parses one field type of a descriptor at d[*pos]; 'V' only when allow_void. */
static bool parse_type(const uint8_t *d, uint16_t n, uint16_t *pos, struct vtype *vt,
                       bool allow_void, bool *is_void)
{
    if (*pos >= n)
        return false;
    uint16_t start = *pos;
    uint8_t c = d[*pos];
    if (is_void)
        *is_void = false;
    switch (c) {
    case 'B':
    case 'C':
    case 'I':
    case 'S':
    case 'Z':
        *vt = vt_simple(VT_INTEGER);
        (*pos)++;
        return true;
    case 'F':
        *vt = vt_simple(VT_FLOAT);
        (*pos)++;
        return true;
    case 'J':
        *vt = vt_simple(VT_LONG);
        (*pos)++;
        return true;
    case 'D':
        *vt = vt_simple(VT_DOUBLE);
        (*pos)++;
        return true;
    case 'V':
        if (!allow_void)
            return false;
        *vt = vt_simple(VT_TOP);
        if (is_void)
            *is_void = true;
        (*pos)++;
        return true;
    case 'L': {
        uint16_t p = (uint16_t)(*pos + 1);
        while (p < n && d[p] != ';')
            p++;
        if (p >= n || p == *pos + 1)
            return false;
        *vt = vt_object(0, d + *pos + 1, (uint16_t)(p - *pos - 1));
        *pos = (uint16_t)(p + 1);
        return true;
    }
    case '[': {
        uint16_t p = *pos;
        while (p < n && d[p] == '[')
            p++;
        if (p - start > 255 || p >= n)
            return false;
        struct vtype elem;
        uint16_t q = p;
        if (!parse_type(d, n, &q, &elem, false, NULL))
            return false;
        *vt = vt_object(0, d + start, (uint16_t)(q - start));
        *pos = q;
        return true;
    }
    default:
        return false;
    }
}

int smt_initial_frame(const struct method_info *mi, struct frame *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    /* At most one entry per descriptor byte plus this. */
    f->locals = cf_arena_alloc(mi->arena, ((size_t)mi->desc_len + 1) * sizeof(struct vtype));
    if (!f->locals)
        return cf_error(err, errlen, "out of memory");
    uint32_t slots = 0;
    if (!mi->is_static) {
        if (mi->is_init && !mi->this_is_object)
            f->locals[f->nlocals++] = vt_simple(VT_UNINIT_THIS);
        else
            f->locals[f->nlocals++] = vt_object(0, mi->class_name, mi->class_name_len);
        slots = 1;
    }
    const uint8_t *d = mi->desc;
    uint16_t n = mi->desc_len, pos = 1;
    if (n < 3 || d[0] != '(')
        return cf_error(err, errlen, "bad method descriptor");
    while (pos < n && d[pos] != ')') {
        struct vtype vt;
        if (!parse_type(d, n, &pos, &vt, false, NULL))
            return cf_error(err, errlen, "bad method descriptor");
        f->locals[f->nlocals++] = vt;
        slots += is_cat2(vt.tag) ? 2 : 1;
    }
    if (pos >= n)
        return cf_error(err, errlen, "bad method descriptor");
    pos++;
    struct vtype rt;
    if (!parse_type(d, n, &pos, &rt, true, NULL) || pos != n)
        return cf_error(err, errlen, "bad method descriptor");
    if (slots > mi->max_locals)
        return cf_error(err, errlen, "arguments do not fit in max_locals");
    return 0;
}

/* ---- decoding -------------------------------------------------------------------------------- */

static int read_vtype(const struct method_info *mi, const struct bc_code *bc, struct cf_reader *r,
                      struct vtype *vt, char *err, size_t errlen)
{
    uint8_t tag = cf_u1(r);
    memset(vt, 0, sizeof(*vt));
    vt->tag = tag;
    if (tag <= VT_UNINIT_THIS)
        return r->bad ? cf_error(err, errlen, "truncated StackMapTable") : 0;
    if (tag == VT_OBJECT) {
        vt->cpidx = cf_u2(r);
        vt->name = cf_pool_class_name(mi->cp, vt->cpidx, &vt->nlen);
        if (r->bad)
            return cf_error(err, errlen, "truncated StackMapTable");
        if (!vt->name)
            return cf_error(err, errlen, "StackMapTable: Object type %u is not a Class", vt->cpidx);
        return 0;
    }
    if (tag == VT_UNINIT) {
        vt->off = cf_u2(r);
        if (r->bad)
            return cf_error(err, errlen, "truncated StackMapTable");
        if (!bc_is_start(bc, vt->off, false) || bc->code[vt->off] != OP_NEW)
            return cf_error(err, errlen, "StackMapTable: Uninitialized(%u) is not a new", vt->off);
        return 0;
    }
    return cf_error(err, errlen, "StackMapTable: bad verification type tag %u", tag);
}

static uint32_t slot_count(const struct vtype *v, uint32_t n)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += is_cat2(v[i].tag) ? 2 : 1;
    return s;
}

int smt_decode(const struct method_info *mi, const struct bc_code *bc, const struct frame *initial,
               const uint8_t *data, uint32_t len, struct frame **frames, uint32_t *count, char *err,
               size_t errlen)
{
    struct cf_reader r;
    cf_reader_init(&r, data, len);
    uint16_t n = cf_u2(&r);
    *frames = NULL;
    *count = 0;
    if (r.bad)
        return cf_error(err, errlen, "truncated StackMapTable");
    if (n == 0)
        return r.pos == len ? 0 : cf_error(err, errlen, "StackMapTable length mismatch");
    struct frame *fr = cf_arena_alloc(mi->arena, (size_t)n * sizeof(*fr));
    if (!fr)
        return cf_error(err, errlen, "out of memory");
    const struct frame *prev = initial;
    uint32_t max_entries = (uint32_t)mi->max_locals;
    for (uint32_t i = 0; i < n; i++) {
        struct frame *f = &fr[i];
        memset(f, 0, sizeof(*f));
        uint8_t type = cf_u1(&r);
        uint32_t delta;
        uint32_t nlocals = prev->nlocals, nstack = 0;
        const struct vtype *base_locals = prev->locals;
        struct vtype stack1;
        struct vtype *extra = NULL; /* appended locals or full-frame locals */
        uint32_t nextra = 0;
        struct vtype *fstack = NULL;
        bool full = false;
        if (type <= 63) {
            delta = type;
        } else if (type <= 127) {
            delta = type - 64u;
            if (read_vtype(mi, bc, &r, &stack1, err, errlen) < 0)
                return -1;
            nstack = 1;
        } else if (type < 247) {
            return cf_error(err, errlen, "StackMapTable: reserved frame type %u", type);
        } else if (type == 247) {
            delta = cf_u2(&r);
            if (read_vtype(mi, bc, &r, &stack1, err, errlen) < 0)
                return -1;
            nstack = 1;
        } else if (type <= 250) {
            delta = cf_u2(&r);
            uint32_t k = 251u - type;
            if (k > prev->nlocals)
                return cf_error(err, errlen, "StackMapTable: chop of %u locals from %u", k,
                                prev->nlocals);
            nlocals = prev->nlocals - k;
        } else if (type == 251) {
            delta = cf_u2(&r);
        } else if (type <= 254) {
            delta = cf_u2(&r);
            nextra = type - 251u;
            extra = cf_arena_alloc(mi->arena, nextra * sizeof(*extra));
            if (!extra)
                return cf_error(err, errlen, "out of memory");
            for (uint32_t k = 0; k < nextra; k++)
                if (read_vtype(mi, bc, &r, &extra[k], err, errlen) < 0)
                    return -1;
        } else {
            full = true;
            delta = cf_u2(&r);
            nextra = cf_u2(&r);
            if (r.bad)
                return cf_error(err, errlen, "truncated StackMapTable");
            if (nextra > max_entries)
                return cf_error(err, errlen, "StackMapTable: %u locals > max_locals", nextra);
            extra = cf_arena_alloc(mi->arena, (nextra ? nextra : 1) * sizeof(*extra));
            if (!extra)
                return cf_error(err, errlen, "out of memory");
            for (uint32_t k = 0; k < nextra; k++)
                if (read_vtype(mi, bc, &r, &extra[k], err, errlen) < 0)
                    return -1;
            nstack = cf_u2(&r);
            if (r.bad)
                return cf_error(err, errlen, "truncated StackMapTable");
            if (nstack > mi->max_stack)
                return cf_error(err, errlen, "StackMapTable: %u stack items > max_stack", nstack);
            fstack = cf_arena_alloc(mi->arena, (nstack ? nstack : 1) * sizeof(*fstack));
            if (!fstack)
                return cf_error(err, errlen, "out of memory");
            for (uint32_t k = 0; k < nstack; k++)
                if (read_vtype(mi, bc, &r, &fstack[k], err, errlen) < 0)
                    return -1;
        }
        if (r.bad)
            return cf_error(err, errlen, "truncated StackMapTable");
        uint64_t off = i == 0 ? delta : (uint64_t)prev->off + delta + 1;
        if (off >= bc->len || bc->at[off] < 0)
            return cf_error(err, errlen, "StackMapTable: frame %u at %llu is not an instruction", i,
                            (unsigned long long)off);
        f->off = (uint32_t)off;
        if (full) {
            f->nlocals = nextra;
            f->locals = extra;
        } else if (extra) {
            f->nlocals = nlocals + nextra;
            f->locals = cf_arena_alloc(mi->arena, f->nlocals * sizeof(struct vtype));
            if (!f->locals)
                return cf_error(err, errlen, "out of memory");
            if (nlocals)
                memcpy(f->locals, base_locals, nlocals * sizeof(struct vtype));
            memcpy(f->locals + nlocals, extra, nextra * sizeof(struct vtype));
        } else {
            f->nlocals = nlocals;
            f->locals = (struct vtype *)base_locals; /* shared, never modified */
        }
        if (slot_count(f->locals, f->nlocals) > mi->max_locals)
            return cf_error(err, errlen, "StackMapTable: frame at %u: locals exceed max_locals",
                            f->off);
        f->nstack = nstack;
        if (fstack) {
            f->stack = fstack;
        } else if (nstack == 1) {
            f->stack = cf_arena_alloc(mi->arena, sizeof(struct vtype));
            if (!f->stack)
                return cf_error(err, errlen, "out of memory");
            f->stack[0] = stack1;
        }
        if (slot_count(f->stack, f->nstack) > mi->max_stack)
            return cf_error(err, errlen, "StackMapTable: frame at %u: stack exceeds max_stack",
                            f->off);
        prev = f;
    }
    if (r.pos != len)
        return cf_error(err, errlen, "StackMapTable length mismatch");
    *frames = fr;
    *count = n;
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------------- */

static int write_vtype(const struct method_info *mi, const struct vtype *v, struct cf_buf *out,
                       char *err, size_t errlen)
{
    cf_buf_u1(out, v->tag);
    if (v->tag == VT_OBJECT) {
        uint16_t idx = v->cpidx;
        if (!idx)
            idx = cf_pool_class_index(mi->wcp, v->name, v->nlen);
        if (!idx)
            return cf_error(err, errlen, "constant pool full");
        cf_buf_u2(out, idx);
    } else if (v->tag == VT_UNINIT) {
        if (v->off > 65535)
            return cf_error(err, errlen, "Uninitialized offset out of range");
        cf_buf_u2(out, (uint16_t)v->off);
    }
    return 0;
}

static bool same_prefix(const struct vtype *a, const struct vtype *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!vt_equal(&a[i], &b[i]))
            return false;
    return true;
}

int smt_encode(const struct method_info *mi, const struct frame *initial,
               const struct frame *frames, uint32_t count, struct cf_buf *out, char *err,
               size_t errlen)
{
    if (count > 65535)
        return cf_error(err, errlen, "too many stack map frames");
    cf_buf_u2(out, (uint16_t)count);
    const struct frame *prev = initial;
    for (uint32_t i = 0; i < count; i++) {
        const struct frame *f = &frames[i];
        if (i > 0 && f->off <= prev->off)
            return cf_error(err, errlen, "stack map frames out of order");
        uint32_t delta = i == 0 ? f->off : f->off - prev->off - 1;
        if (delta > 65535)
            return cf_error(err, errlen, "stack map offset delta too large");
        bool same_locals =
            f->nlocals == prev->nlocals && same_prefix(f->locals, prev->locals, f->nlocals);
        if (same_locals && f->nstack == 0) {
            if (delta <= 63) {
                cf_buf_u1(out, (uint8_t)delta);
            } else {
                cf_buf_u1(out, 251);
                cf_buf_u2(out, (uint16_t)delta);
            }
        } else if (same_locals && f->nstack == 1) {
            /* (a long or double on the stack is still one entry) */
            if (delta <= 63) {
                cf_buf_u1(out, (uint8_t)(64 + delta));
            } else {
                cf_buf_u1(out, 247);
                cf_buf_u2(out, (uint16_t)delta);
            }
            if (write_vtype(mi, &f->stack[0], out, err, errlen) < 0)
                return -1;
        } else if (f->nstack == 0 && f->nlocals < prev->nlocals &&
                   prev->nlocals - f->nlocals <= 3 &&
                   same_prefix(f->locals, prev->locals, f->nlocals)) {
            cf_buf_u1(out, (uint8_t)(251 - (prev->nlocals - f->nlocals)));
            cf_buf_u2(out, (uint16_t)delta);
        } else if (f->nstack == 0 && f->nlocals > prev->nlocals &&
                   f->nlocals - prev->nlocals <= 3 &&
                   same_prefix(f->locals, prev->locals, prev->nlocals)) {
            cf_buf_u1(out, (uint8_t)(251 + (f->nlocals - prev->nlocals)));
            cf_buf_u2(out, (uint16_t)delta);
            for (uint32_t k = prev->nlocals; k < f->nlocals; k++)
                if (write_vtype(mi, &f->locals[k], out, err, errlen) < 0)
                    return -1;
        } else {
            if (f->nlocals > 65535 || f->nstack > 65535)
                return cf_error(err, errlen, "frame too large");
            cf_buf_u1(out, 255);
            cf_buf_u2(out, (uint16_t)delta);
            cf_buf_u2(out, (uint16_t)f->nlocals);
            for (uint32_t k = 0; k < f->nlocals; k++)
                if (write_vtype(mi, &f->locals[k], out, err, errlen) < 0)
                    return -1;
            cf_buf_u2(out, (uint16_t)f->nstack);
            for (uint32_t k = 0; k < f->nstack; k++)
                if (write_vtype(mi, &f->stack[k], out, err, errlen) < 0)
                    return -1;
        }
        prev = f;
    }
    if (out->oom)
        return cf_error(err, errlen, "out of memory");
    return 0;
}

/* ---- simulation ------------------------------------------------------------------------------ */

struct sim {
    const struct method_info *mi;
    const struct bc_code *bc;
    struct vtype *loc; /* max_locals slots */
    struct vtype *stk; /* max_stack slots */
    uint32_t sp;
    bool this_uninit;
    bool ok;
    bool inits_this;
};

static void push(struct sim *s, struct vtype v)
{
    if (s->sp >= s->mi->max_stack) {
        s->ok = false;
        return;
    }
    s->stk[s->sp++] = v;
}

/* Pushes a value of type v, two slots for long and double. */
static void push_value(struct sim *s, struct vtype v)
{
    push(s, v);
    if (is_cat2(v.tag))
        push(s, vt_simple(VT_TOP));
}

static void push_tag(struct sim *s, uint8_t tag)
{
    push_value(s, vt_simple(tag));
}

static struct vtype pop(struct sim *s)
{
    if (s->sp == 0) {
        s->ok = false;
        return vt_simple(VT_TOP);
    }
    return s->stk[--s->sp];
}

static void pop_n(struct sim *s, uint32_t n)
{
    if (n > s->sp) {
        s->ok = false;
        s->sp = 0;
        return;
    }
    s->sp -= n;
}

static void pop_tag(struct sim *s, uint8_t tag)
{
    pop_n(s, is_cat2(tag) ? 2 : 1);
}

static void set_local(struct sim *s, uint32_t i, struct vtype v)
{
    uint32_t need = is_cat2(v.tag) ? 2 : 1;
    if (i + need > s->mi->max_locals) {
        s->ok = false;
        return;
    }
    if (i > 0 && is_cat2(s->loc[i - 1].tag))
        s->loc[i - 1] = vt_simple(VT_TOP);
    s->loc[i] = v;
    if (need == 2)
        s->loc[i + 1] = vt_simple(VT_TOP);
}

static void load_local(struct sim *s, uint32_t i, uint8_t tag)
{
    if (i >= s->mi->max_locals) {
        s->ok = false;
        return;
    }
    if (tag == VT_OBJECT)
        push(s, s->loc[i]); /* aload: whatever reference type the local holds */
    else
        push_tag(s, tag);
}

static void store_local(struct sim *s, uint32_t i, uint8_t tag)
{
    struct vtype v;
    if (is_cat2(tag)) {
        pop_n(s, 2);
        v = vt_simple(tag);
    } else {
        v = pop(s);
        if (tag != VT_OBJECT)
            v = vt_simple(tag);
    }
    if (s->ok)
        set_local(s, i, v);
}

/* Descriptor of a Fieldref/Methodref/InterfaceMethodref/InvokeDynamic/Dynamic at idx, and the
 * member's name. */
static const uint8_t *member_desc(const struct cf_pool *cp, uint16_t idx, uint16_t *len,
                                  const uint8_t **name, uint16_t *nlen)
{
    if (idx == 0 || idx >= cp->count)
        return NULL;
    const struct cf_const *c = &cp->c[idx];
    uint16_t nat;
    switch (c->tag) {
    case CF_FIELDREF:
    case CF_METHODREF:
    case CF_INTERFACE_METHODREF:
    case CF_INVOKE_DYNAMIC:
    case CF_DYNAMIC:
        nat = c->b;
        break;
    default:
        return NULL;
    }
    const struct cf_const *n = cf_pool_get(cp, nat, CF_NAME_AND_TYPE);
    if (!n)
        return NULL;
    if (name && !(*name = cf_pool_utf8(cp, n->a, nlen)))
        return NULL;
    return cf_pool_utf8(cp, n->b, len);
}

/* Replaces every occurrence of the uninitialized type u by the initialized type t. */
static void init_object(struct sim *s, struct vtype u, struct vtype t)
{
    for (uint32_t i = 0; i < s->mi->max_locals; i++)
        if (vt_equal(&s->loc[i], &u))
            s->loc[i] = t;
    for (uint32_t i = 0; i < s->sp; i++)
        if (vt_equal(&s->stk[i], &u))
            s->stk[i] = t;
}

static void do_invoke(struct sim *s, const struct bc_insn *in)
{
    const uint8_t *code = s->bc->code;
    uint16_t idx = cf_get_u2(code + in->off + 1);
    uint16_t dlen, nlen = 0;
    const uint8_t *name = NULL;
    const uint8_t *d = member_desc(s->mi->cp, idx, &dlen, &name, &nlen);
    if (!d || dlen < 3 || d[0] != '(') {
        s->ok = false;
        return;
    }
    uint16_t pos = 1;
    uint32_t argslots = 0;
    while (pos < dlen && d[pos] != ')') {
        struct vtype vt;
        if (!parse_type(d, dlen, &pos, &vt, false, NULL)) {
            s->ok = false;
            return;
        }
        argslots += is_cat2(vt.tag) ? 2 : 1;
    }
    if (pos >= dlen) {
        s->ok = false;
        return;
    }
    pos++;
    struct vtype rt;
    bool is_void;
    if (!parse_type(d, dlen, &pos, &rt, true, &is_void)) {
        s->ok = false;
        return;
    }
    pop_n(s, argslots);
    if (in->op != OP_INVOKESTATIC && in->op != OP_INVOKEDYNAMIC) {
        struct vtype recv = pop(s);
        if (!s->ok)
            return;
        if (in->op == OP_INVOKESPECIAL && cf_name_is(name, nlen, "<init>")) {
            if (recv.tag == VT_UNINIT_THIS) {
                init_object(s, recv, vt_object(0, s->mi->class_name, s->mi->class_name_len));
                s->this_uninit = false;
                s->inits_this = true;
            } else if (recv.tag == VT_UNINIT) {
                /* recv.off is a `new` (checked when the type was made or decoded). */
                uint16_t ci = cf_get_u2(code + recv.off + 1);
                uint16_t cl;
                const uint8_t *cn = cf_pool_class_name(s->mi->cp, ci, &cl);
                if (!cn) {
                    s->ok = false;
                    return;
                }
                init_object(s, recv, vt_object(ci, cn, cl));
            } else {
                s->ok = false;
                return;
            }
        }
    }
    if (!is_void)
        push_value(s, rt);
}

static void do_field(struct sim *s, const struct bc_insn *in)
{
    uint16_t idx = cf_get_u2(s->bc->code + in->off + 1);
    uint16_t dlen;
    const uint8_t *d = member_desc(s->mi->cp, idx, &dlen, NULL, NULL);
    if (!d || s->mi->cp->c[idx].tag != CF_FIELDREF) {
        s->ok = false;
        return;
    }
    uint16_t pos = 0;
    struct vtype vt;
    if (!parse_type(d, dlen, &pos, &vt, false, NULL) || pos != dlen) {
        s->ok = false;
        return;
    }
    switch (in->op) {
    case 0xb2: /* getstatic */
        push_value(s, vt);
        break;
    case 0xb3: /* putstatic */
        pop_tag(s, vt.tag);
        break;
    case 0xb4: /* getfield */
        pop(s);
        push_value(s, vt);
        break;
    default: /* putfield */
        pop_tag(s, vt.tag);
        pop(s);
        break;
    }
}

static void do_ldc(struct sim *s, uint16_t idx)
{
    const struct cf_pool *cp = s->mi->cp;
    if (idx == 0 || idx >= cp->count) {
        s->ok = false;
        return;
    }
    switch (cp->c[idx].tag) {
    case CF_INTEGER:
        push_tag(s, VT_INTEGER);
        break;
    case CF_FLOAT:
        push_tag(s, VT_FLOAT);
        break;
    case CF_LONG:
        push_tag(s, VT_LONG);
        break;
    case CF_DOUBLE:
        push_tag(s, VT_DOUBLE);
        break;
    case CF_STRING:
        push(s, vt_object(0, N("java/lang/String")));
        break;
    case CF_CLASS:
        push(s, vt_object(0, N("java/lang/Class")));
        break;
    case CF_METHOD_TYPE:
        push(s, vt_object(0, N("java/lang/invoke/MethodType")));
        break;
    case CF_METHOD_HANDLE:
        push(s, vt_object(0, N("java/lang/invoke/MethodHandle")));
        break;
    case CF_DYNAMIC: {
        uint16_t dlen, pos = 0;
        const uint8_t *d = member_desc(cp, idx, &dlen, NULL, NULL);
        struct vtype vt;
        if (!d || !parse_type(d, dlen, &pos, &vt, false, NULL) || pos != dlen) {
            s->ok = false;
            return;
        }
        push_value(s, vt);
        break;
    }
    default:
        s->ok = false;
    }
}

static void do_aaload(struct sim *s)
{
    pop(s);
    struct vtype a = pop(s);
    if (!s->ok)
        return;
    if (a.tag == VT_NULL) {
        push(s, vt_simple(VT_NULL));
        return;
    }
    if (a.tag != VT_OBJECT || a.nlen < 2 || a.name[0] != '[') {
        s->ok = false;
        return;
    }
    if (a.name[1] == '[') {
        push(s, vt_object(0, a.name + 1, (uint16_t)(a.nlen - 1)));
    } else if (a.name[1] == 'L' && a.nlen >= 4 && a.name[a.nlen - 1] == ';') {
        push(s, vt_object(0, a.name + 2, (uint16_t)(a.nlen - 3)));
    } else {
        s->ok = false;
    }
}

static void do_anewarray(struct sim *s, uint16_t ci)
{
    uint16_t cl;
    const uint8_t *cn = cf_pool_class_name(s->mi->cp, ci, &cl);
    pop(s);
    if (!cn || cl == 0 || cl > 65531) {
        s->ok = false;
        return;
    }
    uint8_t *name = cf_arena_alloc(s->mi->arena, (size_t)cl + 3);
    if (!name) {
        s->ok = false;
        return;
    }
    uint16_t n;
    if (cn[0] == '[') {
        name[0] = '[';
        memcpy(name + 1, cn, cl);
        n = (uint16_t)(cl + 1);
    } else {
        name[0] = '[';
        name[1] = 'L';
        memcpy(name + 2, cn, cl);
        name[cl + 2] = ';';
        n = (uint16_t)(cl + 3);
    }
    push(s, vt_object(0, name, n));
}

static const char *const newarray_names[] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};

/* Local-variable index operand of a load/store/iinc/ret. */
static uint32_t local_index(const struct sim *s, const struct bc_insn *in)
{
    const uint8_t *c = s->bc->code + in->off;
    return in->wide ? cf_get_u2(c + 2) : c[1];
}

/* Applies instruction in to the state. Returns false when control cannot fall through. */
static bool step(struct sim *s, const struct bc_insn *in)
{
    const uint8_t *code = s->bc->code;
    uint8_t op = in->op;
    static const uint8_t arith_tag[4] = {VT_INTEGER, VT_LONG, VT_FLOAT, VT_DOUBLE};
    s->inits_this = false;
    if (op >= 0x02 && op <= 0x08) { /* iconst */
        push_tag(s, VT_INTEGER);
        return true;
    }
    if (op >= 0x1a && op <= 0x2d) { /* <t>load_<n> */
        static const uint8_t t[5] = {VT_INTEGER, VT_LONG, VT_FLOAT, VT_DOUBLE, VT_OBJECT};
        load_local(s, (uint32_t)(op - 0x1a) % 4, t[(op - 0x1a) / 4]);
        return true;
    }
    if (op >= 0x3b && op <= 0x4e) { /* <t>store_<n> */
        static const uint8_t t[5] = {VT_INTEGER, VT_LONG, VT_FLOAT, VT_DOUBLE, VT_OBJECT};
        store_local(s, (uint32_t)(op - 0x3b) % 4, t[(op - 0x3b) / 4]);
        return true;
    }
    if (op >= 0x60 && op <= 0x73) { /* add, sub, mul, div, rem */
        uint8_t t = arith_tag[(op - 0x60) % 4];
        pop_tag(s, t);
        pop_tag(s, t);
        push_tag(s, t);
        return true;
    }
    if (op >= 0x74 && op <= 0x77) { /* neg */
        uint8_t t = arith_tag[op - 0x74];
        pop_tag(s, t);
        push_tag(s, t);
        return true;
    }
    if (op >= 0x78 && op <= 0x7d) { /* shifts: value, int count */
        uint8_t t = (op - 0x78) % 2 ? VT_LONG : VT_INTEGER;
        pop_tag(s, VT_INTEGER);
        pop_tag(s, t);
        push_tag(s, t);
        return true;
    }
    if (op >= 0x7e && op <= 0x83) { /* and, or, xor */
        uint8_t t = (op - 0x7e) % 2 ? VT_LONG : VT_INTEGER;
        pop_tag(s, t);
        pop_tag(s, t);
        push_tag(s, t);
        return true;
    }
    if (op >= 0x85 && op <= 0x93) { /* conversions */
        static const uint8_t from[15] = {VT_INTEGER, VT_INTEGER, VT_INTEGER, VT_LONG,
                                         VT_LONG,    VT_LONG,    VT_FLOAT,   VT_FLOAT,
                                         VT_FLOAT,   VT_DOUBLE,  VT_DOUBLE,  VT_DOUBLE,
                                         VT_INTEGER, VT_INTEGER, VT_INTEGER};
        static const uint8_t to[15] = {VT_LONG,   VT_FLOAT,   VT_DOUBLE,  VT_INTEGER, VT_FLOAT,
                                       VT_DOUBLE, VT_INTEGER, VT_LONG,    VT_DOUBLE,  VT_INTEGER,
                                       VT_LONG,   VT_FLOAT,   VT_INTEGER, VT_INTEGER, VT_INTEGER};
        pop_tag(s, from[op - 0x85]);
        push_tag(s, to[op - 0x85]);
        return true;
    }
    if (op >= 0x99 && op <= 0x9e) { /* if<cond> */
        pop_n(s, 1);
        return true;
    }
    if (op >= 0x9f && op <= 0xa6) { /* if_icmp<cond>, if_acmp<cond> */
        pop_n(s, 2);
        return true;
    }
    if (op >= OP_IRETURN && op <= OP_RETURN)
        return false;
    switch (op) {
    case OP_NOP:
    case OP_IINC:
        return true;
    case OP_ACONST_NULL:
        push(s, vt_simple(VT_NULL));
        return true;
    case 0x09:
    case 0x0a: /* lconst */
        push_tag(s, VT_LONG);
        return true;
    case 0x0b:
    case 0x0c:
    case 0x0d: /* fconst */
        push_tag(s, VT_FLOAT);
        return true;
    case 0x0e:
    case 0x0f: /* dconst */
        push_tag(s, VT_DOUBLE);
        return true;
    case OP_BIPUSH:
    case OP_SIPUSH:
        push_tag(s, VT_INTEGER);
        return true;
    case OP_LDC:
        do_ldc(s, code[in->off + 1]);
        return true;
    case OP_LDC_W:
    case OP_LDC2_W:
        do_ldc(s, cf_get_u2(code + in->off + 1));
        return true;
    case 0x15:
        load_local(s, local_index(s, in), VT_INTEGER);
        return true;
    case 0x16:
        load_local(s, local_index(s, in), VT_LONG);
        return true;
    case 0x17:
        load_local(s, local_index(s, in), VT_FLOAT);
        return true;
    case 0x18:
        load_local(s, local_index(s, in), VT_DOUBLE);
        return true;
    case 0x19:
        load_local(s, local_index(s, in), VT_OBJECT);
        return true;
    case 0x2e:
    case 0x33:
    case 0x34:
    case 0x35: /* iaload, baload, caload, saload */
        pop_n(s, 2);
        push_tag(s, VT_INTEGER);
        return true;
    case 0x2f:
        pop_n(s, 2);
        push_tag(s, VT_LONG);
        return true; /* laload */
    case 0x30:
        pop_n(s, 2);
        push_tag(s, VT_FLOAT);
        return true; /* faload */
    case 0x31:
        pop_n(s, 2);
        push_tag(s, VT_DOUBLE);
        return true; /* daload */
    case 0x32:
        do_aaload(s);
        return true;
    case 0x36:
        store_local(s, local_index(s, in), VT_INTEGER);
        return true;
    case 0x37:
        store_local(s, local_index(s, in), VT_LONG);
        return true;
    case 0x38:
        store_local(s, local_index(s, in), VT_FLOAT);
        return true;
    case 0x39:
        store_local(s, local_index(s, in), VT_DOUBLE);
        return true;
    case 0x3a:
        store_local(s, local_index(s, in), VT_OBJECT);
        return true;
    case 0x4f:
    case 0x51:
    case 0x53:
    case 0x54:
    case 0x55:
    case 0x56: /* 1-slot array stores */
        pop_n(s, 3);
        return true;
    case 0x50:
    case 0x52: /* lastore, dastore */
        pop_n(s, 4);
        return true;
    case 0x57: /* pop */
        pop_n(s, 1);
        return true;
    case 0x58: /* pop2 */
        pop_n(s, 2);
        return true;
    case 0x59: { /* dup */
        struct vtype v1 = pop(s);
        push(s, v1);
        push(s, v1);
        return true;
    }
    case 0x5a: { /* dup_x1 */
        struct vtype v1 = pop(s), v2 = pop(s);
        push(s, v1);
        push(s, v2);
        push(s, v1);
        return true;
    }
    case 0x5b: { /* dup_x2 */
        struct vtype v1 = pop(s), v2 = pop(s), v3 = pop(s);
        push(s, v1);
        push(s, v3);
        push(s, v2);
        push(s, v1);
        return true;
    }
    case 0x5c: { /* dup2 */
        struct vtype v1 = pop(s), v2 = pop(s);
        push(s, v2);
        push(s, v1);
        push(s, v2);
        push(s, v1);
        return true;
    }
    case 0x5d: { /* dup2_x1 */
        struct vtype v1 = pop(s), v2 = pop(s), v3 = pop(s);
        push(s, v2);
        push(s, v1);
        push(s, v3);
        push(s, v2);
        push(s, v1);
        return true;
    }
    case 0x5e: { /* dup2_x2 */
        struct vtype v1 = pop(s), v2 = pop(s), v3 = pop(s), v4 = pop(s);
        push(s, v2);
        push(s, v1);
        push(s, v4);
        push(s, v3);
        push(s, v2);
        push(s, v1);
        return true;
    }
    case 0x5f: { /* swap */
        struct vtype v1 = pop(s), v2 = pop(s);
        push(s, v1);
        push(s, v2);
        return true;
    }
    case 0x94: /* lcmp */
        pop_n(s, 4);
        push_tag(s, VT_INTEGER);
        return true;
    case 0x95:
    case 0x96: /* fcmp */
        pop_n(s, 2);
        push_tag(s, VT_INTEGER);
        return true;
    case 0x97:
    case 0x98: /* dcmp */
        pop_n(s, 4);
        push_tag(s, VT_INTEGER);
        return true;
    case OP_GOTO:
    case OP_GOTO_W:
        return false;
    case OP_JSR:
    case OP_JSR_W:
    case OP_RET:
        s->ok = false; /* returnAddress has no stack map form */
        return op != OP_RET;
    case OP_TABLESWITCH:
    case OP_LOOKUPSWITCH:
        pop_n(s, 1);
        return false;
    case 0xb2:
    case 0xb3:
    case 0xb4:
    case 0xb5:
        do_field(s, in);
        return true;
    case 0xb6:
    case OP_INVOKESPECIAL:
    case OP_INVOKESTATIC:
    case OP_INVOKEINTERFACE:
    case OP_INVOKEDYNAMIC:
        do_invoke(s, in);
        return true;
    case OP_NEW: {
        struct vtype v = {.tag = VT_UNINIT, .off = in->off};
        push(s, v);
        return true;
    }
    case 0xbc: { /* newarray */
        uint8_t t = code[in->off + 1];
        pop_n(s, 1);
        if (t < 4 || t > 11) {
            s->ok = false;
            return true;
        }
        push(s, vt_object(0, (const uint8_t *)newarray_names[t - 4], 2));
        return true;
    }
    case 0xbd: /* anewarray */
        do_anewarray(s, cf_get_u2(code + in->off + 1));
        return true;
    case 0xbe: /* arraylength */
        pop_n(s, 1);
        push_tag(s, VT_INTEGER);
        return true;
    case OP_ATHROW:
        return false;
    case 0xc0: { /* checkcast */
        uint16_t ci = cf_get_u2(code + in->off + 1);
        uint16_t cl;
        const uint8_t *cn = cf_pool_class_name(s->mi->cp, ci, &cl);
        pop_n(s, 1);
        if (!cn) {
            s->ok = false;
            return true;
        }
        push(s, vt_object(ci, cn, cl));
        return true;
    }
    case 0xc1: /* instanceof */
        pop_n(s, 1);
        push_tag(s, VT_INTEGER);
        return true;
    case 0xc2:
    case 0xc3: /* monitorenter, monitorexit */
        pop_n(s, 1);
        return true;
    case OP_MULTIANEWARRAY: {
        uint16_t ci = cf_get_u2(code + in->off + 1);
        uint8_t dims = code[in->off + 3];
        uint16_t cl;
        const uint8_t *cn = cf_pool_class_name(s->mi->cp, ci, &cl);
        pop_n(s, dims);
        if (!cn || dims == 0) {
            s->ok = false;
            return true;
        }
        push(s, vt_object(ci, cn, cl));
        return true;
    }
    case OP_IFNULL:
    case OP_IFNONNULL:
        pop_n(s, 1);
        return true;
    default:
        s->ok = false;
        return true;
    }
}

static void load_frame(struct sim *s, const struct frame *f)
{
    uint32_t ml = s->mi->max_locals;
    for (uint32_t i = 0; i < ml; i++)
        s->loc[i] = vt_simple(VT_TOP);
    uint32_t slot = 0;
    s->this_uninit = false;
    s->ok = true;
    for (uint32_t i = 0; i < f->nlocals; i++) {
        if (slot >= ml) {
            s->ok = false;
            break;
        }
        s->loc[slot] = f->locals[i];
        if (f->locals[i].tag == VT_UNINIT_THIS)
            s->this_uninit = true;
        slot += is_cat2(f->locals[i].tag) ? 2 : 1;
    }
    s->sp = 0;
    for (uint32_t i = 0; i < f->nstack && s->ok; i++)
        push_value(s, f->stack[i]);
}

/* The current state as a frame (locals trimmed of trailing tops), in the arena. */
static int save_frame(struct sim *s, struct frame *f)
{
    uint32_t ml = s->mi->max_locals;
    uint32_t last = 0; /* slots up to the last non-top */
    for (uint32_t i = 0; i < ml; i++)
        if (s->loc[i].tag != VT_TOP)
            last = i + (is_cat2(s->loc[i].tag) ? 2 : 1);
    if (last > ml)
        last = ml;
    f->locals = cf_arena_alloc(s->mi->arena, (last ? last : 1) * sizeof(struct vtype));
    f->stack = cf_arena_alloc(s->mi->arena, (s->sp ? s->sp : 1) * sizeof(struct vtype));
    if (!f->locals || !f->stack)
        return -1;
    f->nlocals = 0;
    for (uint32_t i = 0; i < last;) {
        f->locals[f->nlocals++] = s->loc[i];
        i += is_cat2(s->loc[i].tag) ? 2 : 1;
    }
    f->nstack = 0;
    for (uint32_t i = 0; i < s->sp;) {
        f->stack[f->nstack++] = s->stk[i];
        i += is_cat2(s->stk[i].tag) ? 2 : 1;
    }
    return 0;
}

static bool stores_local0(const struct sim *s, const struct bc_insn *in)
{
    uint8_t op = in->op;
    if (op >= 0x3b && op <= 0x4e)
        return (op - 0x3b) % 4 == 0;
    if (op >= 0x36 && op <= 0x3a)
        return local_index(s, in) == 0;
    return false;
}

int smt_simulate(const struct method_info *mi, const struct bc_code *bc,
                 const struct frame *initial, const struct frame *frames, uint32_t nframes,
                 uint8_t *info, const bool *want_after, struct frame *after, char *err,
                 size_t errlen)
{
    struct sim s;
    memset(&s, 0, sizeof(s));
    s.mi = mi;
    s.bc = bc;
    s.loc = malloc(((size_t)mi->max_locals + 1) * sizeof(struct vtype));
    s.stk = malloc(((size_t)mi->max_stack + 1) * sizeof(struct vtype));
    if (!s.loc || !s.stk) {
        free(s.loc);
        free(s.stk);
        return cf_error(err, errlen, "out of memory");
    }
    load_frame(&s, initial);
    bool reachable = true; /* control can fall into the next instruction */
    uint32_t fi = 0;
    int rc = 0;
    for (uint32_t i = 0; i < bc->count; i++) {
        const struct bc_insn *in = &bc->insn[i];
        while (fi < nframes && frames[fi].off < in->off)
            fi++;
        if (fi < nframes && frames[fi].off == in->off) {
            load_frame(&s, &frames[fi]);
            fi++;
        } else if (!reachable) {
            s.ok = false;
        }
        if (info) {
            uint8_t b = 0;
            if (s.ok) {
                b |= SIM_KNOWN;
                if (s.this_uninit)
                    b |= SIM_THIS_UNINIT;
                if (mi->max_locals > 0 && s.loc[0].tag == VT_UNINIT_THIS)
                    b |= SIM_LOCAL0_THIS;
            }
            if (stores_local0(&s, in))
                b |= SIM_STORES_0;
            info[i] = b;
        }
        bool was_ok = s.ok;
        reachable = s.ok ? step(&s, in) : true;
        if (info && was_ok && s.ok && s.inits_this)
            info[i] |= SIM_INITS_THIS;
        if (want_after && want_after[i]) {
            memset(&after[i], 0, sizeof(after[i]));
            if (s.ok && reachable) {
                if (save_frame(&s, &after[i]) < 0) {
                    rc = cf_error(err, errlen, "out of memory");
                    break;
                }
            } else {
                after[i].nstack = UINT32_MAX;
            }
        }
        if (!reachable)
            s.ok = false;
    }
    free(s.loc);
    free(s.stk);
    return rc;
}

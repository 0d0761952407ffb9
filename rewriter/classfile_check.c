/* Structural class-file check: see classfile_check.h. */
#include "classfile_check.h"

#include "bytecode.h"
#include "classfile.h"
#include "stackmap.h"

#include <stdio.h>
#include <string.h>

static bool is_tag(const struct cf_pool *cp, uint32_t i, uint8_t tag)
{
    return cf_pool_get(cp, i, tag) != NULL;
}

static int check_pool(const struct cf_class *cf, char *err, size_t errlen)
{
    const struct cf_pool *cp = &cf->cp;
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        bool ok = true;
        switch (c->tag) {
        case 0: /* second slot of a long/double */
            ok = i > 1 && (cp->c[i - 1].tag == CF_LONG || cp->c[i - 1].tag == CF_DOUBLE);
            break;
        case CF_UTF8:
        case CF_INTEGER:
        case CF_FLOAT:
        case CF_LONG:
        case CF_DOUBLE:
            break;
        case CF_CLASS:
        case CF_STRING:
        case CF_METHOD_TYPE:
        case CF_MODULE:
        case CF_PACKAGE:
            ok = is_tag(cp, c->a, CF_UTF8);
            break;
        case CF_FIELDREF:
        case CF_METHODREF:
        case CF_INTERFACE_METHODREF:
            ok = is_tag(cp, c->a, CF_CLASS) && is_tag(cp, c->b, CF_NAME_AND_TYPE);
            break;
        case CF_NAME_AND_TYPE:
            ok = is_tag(cp, c->a, CF_UTF8) && is_tag(cp, c->b, CF_UTF8);
            break;
        case CF_DYNAMIC:
        case CF_INVOKE_DYNAMIC:
            ok = is_tag(cp, c->b, CF_NAME_AND_TYPE);
            break;
        case CF_METHOD_HANDLE:
            if (c->b >= 1 && c->b <= 4)
                ok = is_tag(cp, c->a, CF_FIELDREF);
            else if (c->b == 5 || c->b == 8)
                ok = is_tag(cp, c->a, CF_METHODREF);
            else if (c->b == 6 || c->b == 7)
                ok = is_tag(cp, c->a, CF_METHODREF) || is_tag(cp, c->a, CF_INTERFACE_METHODREF);
            else if (c->b == 9)
                ok = is_tag(cp, c->a, CF_INTERFACE_METHODREF);
            else
                ok = false;
            break;
        default:
            ok = false;
        }
        if (!ok)
            return cf_error(err, errlen, "constant %u (tag %u) has a bad reference", i, c->tag);
    }
    if (!is_tag(cp, cf->this_class, CF_CLASS))
        return cf_error(err, errlen, "bad this_class");
    if (cf->super_class && !is_tag(cp, cf->super_class, CF_CLASS))
        return cf_error(err, errlen, "bad super_class");
    return 0;
}

static bool loadable(const struct cf_pool *cp, uint16_t i, bool wide2)
{
    if (i == 0 || i >= cp->count)
        return false;
    uint8_t t = cp->c[i].tag;
    if (t == CF_DYNAMIC) {
        const struct cf_const *nat = cf_pool_get(cp, cp->c[i].b, CF_NAME_AND_TYPE);
        uint16_t n;
        const uint8_t *d = nat ? cf_pool_utf8(cp, nat->b, &n) : NULL;
        if (!d || n == 0)
            return false;
        return wide2 == (d[0] == 'J' || d[0] == 'D');
    }
    if (wide2)
        return t == CF_LONG || t == CF_DOUBLE;
    return t == CF_INTEGER || t == CF_FLOAT || t == CF_STRING || t == CF_CLASS ||
           t == CF_METHOD_TYPE || t == CF_METHOD_HANDLE;
}

static int check_insn(const struct cf_class *cf, const struct cf_code *code,
                      const struct bc_insn *in, char *err, size_t errlen)
{
    const struct cf_pool *cp = &cf->cp;
    const uint8_t *p = code->code + in->off;
    uint8_t op = in->op;
    uint32_t local = UINT32_MAX, width = 1;
    bool ok = true;
    if (in->wide) {
        local = cf_get_u2(p + 2);
        width = (op == 0x16 || op == 0x18 || op == 0x37 || op == 0x39) ? 2 : 1;
    } else if (op >= 0x15 && op <= 0x19) {
        local = p[1];
        width = (op == 0x16 || op == 0x18) ? 2 : 1;
    } else if (op >= 0x36 && op <= 0x3a) {
        local = p[1];
        width = (op == 0x37 || op == 0x39) ? 2 : 1;
    } else if (op == OP_IINC || op == OP_RET) {
        local = p[1];
    } else if (op >= 0x1a && op <= 0x2d) {
        local = (uint32_t)(op - 0x1a) % 4;
        width = ((op - 0x1a) / 4 == 1 || (op - 0x1a) / 4 == 3) ? 2 : 1;
    } else if (op >= 0x3b && op <= 0x4e) {
        local = (uint32_t)(op - 0x3b) % 4;
        width = ((op - 0x3b) / 4 == 1 || (op - 0x3b) / 4 == 3) ? 2 : 1;
    }
    if (local != UINT32_MAX && local + width > code->max_locals)
        return cf_error(err, errlen, "local %u out of range at %u", local, in->off);
    if (in->wide)
        return 0;
    uint16_t idx = in->len >= 3 ? cf_get_u2(p + 1) : 0;
    switch (op) {
    case OP_LDC:
        ok = loadable(cp, p[1], false);
        break;
    case OP_LDC_W:
        ok = loadable(cp, idx, false);
        break;
    case OP_LDC2_W:
        ok = loadable(cp, idx, true);
        break;
    case 0xb2:
    case 0xb3:
    case 0xb4:
    case 0xb5:
        ok = is_tag(cp, idx, CF_FIELDREF);
        break;
    case 0xb6:
        ok = is_tag(cp, idx, CF_METHODREF);
        break;
    case OP_INVOKESPECIAL:
    case OP_INVOKESTATIC:
        ok = is_tag(cp, idx, CF_METHODREF) || is_tag(cp, idx, CF_INTERFACE_METHODREF);
        break;
    case OP_INVOKEINTERFACE:
        ok = is_tag(cp, idx, CF_INTERFACE_METHODREF) && p[3] != 0 && p[4] == 0;
        break;
    case OP_INVOKEDYNAMIC:
        ok = is_tag(cp, idx, CF_INVOKE_DYNAMIC) && p[3] == 0 && p[4] == 0;
        break;
    case OP_NEW:
    case 0xbd:
    case 0xc0:
    case 0xc1:
        ok = is_tag(cp, idx, CF_CLASS);
        break;
    case OP_MULTIANEWARRAY:
        ok = is_tag(cp, idx, CF_CLASS) && p[3] >= 1;
        break;
    case 0xbc:
        ok = p[1] >= 4 && p[1] <= 11;
        break;
    default:
        break;
    }
    if (!ok)
        return cf_error(err, errlen, "bad operand of opcode 0x%02x at %u", op, in->off);
    return 0;
}

static bool ends_flow(const struct bc_insn *in)
{
    uint8_t op = in->op;
    if (in->wide)
        return op == OP_RET;
    return in->kind == BC_RETURN || op == OP_GOTO || op == OP_GOTO_W || op == OP_ATHROW ||
           op == OP_RET || in->kind == BC_TABLESWITCH || in->kind == BC_LOOKUPSWITCH;
}

static int check_code(const struct cf_class *cf, const struct cf_method *m, struct cf_arena *arena,
                      char *err, size_t errlen)
{
    const struct cf_pool *cp = &cf->cp;
    struct cf_code code;
    if (cf_code_parse(cf, (uint32_t)m->code_attr, &code, err, errlen) < 0)
        return -1;
    struct bc_code bc;
    if (bc_decode(&bc, code.code, code.code_len, err, errlen) < 0)
        return -1;
    int rc = -1;
    for (uint32_t i = 0; i < bc.count; i++)
        if (check_insn(cf, &code, &bc.insn[i], err, errlen) < 0)
            goto out;
    if (!ends_flow(&bc.insn[bc.count - 1])) {
        cf_error(err, errlen, "control falls off the end of the code");
        goto out;
    }
    for (uint16_t i = 0; i < code.ex_count; i++) {
        const uint8_t *e = code.ex + 8 * i;
        uint16_t s = cf_get_u2(e), en = cf_get_u2(e + 2), h = cf_get_u2(e + 4);
        uint16_t ct = cf_get_u2(e + 6);
        if (s >= en || !bc_is_start(&bc, s, false) || !bc_is_start(&bc, en, true) ||
            !bc_is_start(&bc, h, false) || (ct && !is_tag(cp, ct, CF_CLASS))) {
            cf_error(err, errlen, "bad exception table entry %u", i);
            goto out;
        }
    }
    uint16_t nlen, dlen;
    const uint8_t *name = cf_pool_utf8(cp, m->name_index, &nlen);
    struct method_info mi;
    memset(&mi, 0, sizeof(mi));
    mi.cp = cp;
    mi.arena = arena;
    mi.class_name = cf_class_name(cf, &mi.class_name_len);
    mi.desc = cf_pool_utf8(cp, m->desc_index, &dlen);
    mi.desc_len = dlen;
    mi.is_static = (m->access & CF_ACC_STATIC) != 0;
    mi.is_init = cf_name_is(name, nlen, "<init>");
    mi.this_is_object = cf_name_is(mi.class_name, mi.class_name_len, "java/lang/Object");
    mi.max_locals = code.max_locals;
    mi.max_stack = code.max_stack;
    struct frame initial;
    if (smt_initial_frame(&mi, &initial, err, errlen) < 0)
        goto out;
    struct cf_reader r;
    cf_reader_init(&r, code.attrs, code.attrs_len);
    int nsmt = 0;
    for (uint16_t i = 0; i < code.attr_count; i++) {
        uint16_t an = cf_u2(&r);
        uint32_t al = cf_u4(&r);
        const uint8_t *b = cf_skip(&r, al);
        if (!is_tag(cp, an, CF_UTF8)) {
            cf_error(err, errlen, "attribute name %u is not a Utf8", an);
            goto out;
        }
        if (cf_pool_utf8_is(cp, an, "LineNumberTable")) {
            uint16_t n = al >= 2 ? cf_get_u2(b) : 0;
            if (al < 2 || al != 2u + 4u * n) {
                cf_error(err, errlen, "bad LineNumberTable length");
                goto out;
            }
            for (uint16_t k = 0; k < n; k++)
                if (!bc_is_start(&bc, cf_get_u2(b + 2 + 4 * k), false)) {
                    cf_error(err, errlen, "LineNumberTable pc %u", cf_get_u2(b + 2 + 4 * k));
                    goto out;
                }
        } else if (cf_pool_utf8_is(cp, an, "LocalVariableTable") ||
                   cf_pool_utf8_is(cp, an, "LocalVariableTypeTable")) {
            uint16_t n = al >= 2 ? cf_get_u2(b) : 0;
            if (al < 2 || al != 2u + 10u * n) {
                cf_error(err, errlen, "bad LocalVariableTable length");
                goto out;
            }
            for (uint16_t k = 0; k < n; k++) {
                const uint8_t *e = b + 2 + 10 * k;
                uint32_t s = cf_get_u2(e), l = cf_get_u2(e + 2);
                if (!bc_is_start(&bc, s, false) || !bc_is_start(&bc, s + l, true) ||
                    cf_get_u2(e + 8) >= code.max_locals || !is_tag(cp, cf_get_u2(e + 4), CF_UTF8) ||
                    !is_tag(cp, cf_get_u2(e + 6), CF_UTF8)) {
                    cf_error(err, errlen, "LocalVariableTable entry %u [%u,+%u)", k, s, l);
                    goto out;
                }
            }
        } else if (cf->major >= 50 && cf_pool_utf8_is(cp, an, "StackMapTable")) {
            struct frame *frames;
            uint32_t nframes;
            if (++nsmt > 1) {
                cf_error(err, errlen, "two StackMapTable attributes");
                goto out;
            }
            if (smt_decode(&mi, &bc, &initial, b, al, &frames, &nframes, err, errlen) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    bc_free(&bc);
    return rc;
}

int classfile_check(const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
    struct cf_arena arena;
    cf_arena_init(&arena);
    struct cf_class cf;
    int rc = cf_class_parse(&cf, bytes, len, &arena, err, errlen);
    if (rc == 0)
        rc = check_pool(&cf, err, errlen);
    for (uint16_t i = 0; rc == 0 && i < cf.method_count; i++) {
        const struct cf_method *m = &cf.methods[i];
        bool needs_code = !(m->access & (CF_ACC_ABSTRACT | CF_ACC_NATIVE));
        if (needs_code != (m->code_attr >= 0)) {
            rc = cf_error(err, errlen, "method %u: Code attribute %s", i,
                          needs_code ? "missing" : "on an abstract or native method");
            break;
        }
        if (m->code_attr >= 0 && check_code(&cf, m, &arena, err, errlen) < 0) {
            uint16_t n;
            const uint8_t *nm = cf_pool_utf8(&cf.cp, m->name_index, &n);
            size_t l = err && errlen ? strlen(err) : 0;
            if (err && l + 1 < errlen)
                snprintf(err + l, errlen - l, " (method %.*s)", (int)n, (const char *)nm);
            rc = -1;
        }
    }
    cf_class_free(&cf);
    cf_arena_free(&arena);
    return rc;
}

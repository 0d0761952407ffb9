/* Bytecode decoding: see bytecode.h. */
#include "bytecode.h"

#include "classfile.h"

#include <stdlib.h>
#include <string.h>

/* Length of each opcode with fixed length; 0 = not a valid class-file opcode, 0xff = variable
 * (tableswitch, lookupswitch, wide). */
static uint8_t fixed_length(uint8_t op)
{
    if (op <= 0x0f)
        return 1; /* nop, aconst_null, iconst_*, lconst_*, fconst_*, dconst_* */
    switch (op) {
    case 0x10: /* bipush */
    case 0x12: /* ldc */
    case 0x15:
    case 0x16:
    case 0x17:
    case 0x18:
    case 0x19: /* iload..aload */
    case 0x36:
    case 0x37:
    case 0x38:
    case 0x39:
    case 0x3a: /* istore..astore */
    case 0xa9: /* ret */
    case 0xbc: /* newarray */
        return 2;
    case 0x11: /* sipush */
    case 0x13:
    case 0x14: /* ldc_w, ldc2_w */
    case 0x84: /* iinc */
    case 0xb2:
    case 0xb3:
    case 0xb4:
    case 0xb5: /* get/put field/static */
    case 0xb6:
    case 0xb7:
    case 0xb8: /* invokevirtual, invokespecial, invokestatic */
    case 0xbb: /* new */
    case 0xbd: /* anewarray */
    case 0xc0:
    case 0xc1: /* checkcast, instanceof */
    case 0xc6:
    case 0xc7: /* ifnull, ifnonnull */
        return 3;
    case 0xc5: /* multianewarray */
        return 4;
    case 0xb9:
    case 0xba: /* invokeinterface, invokedynamic */
    case 0xc8:
    case 0xc9: /* goto_w, jsr_w */
        return 5;
    case 0xaa:
    case 0xab:
    case 0xc4:
        return 0xff;
    default:
        break;
    }
    if (op >= 0x99 && op <= 0xa8)
        return 3; /* if<cond>, if_icmp<cond>, if_acmp<cond>, goto, jsr */
    if (op >= 0x1a && op <= 0x35)
        return 1; /* <t>load_<n>, <t>aload */
    if (op >= 0x3b && op <= 0x83)
        return 1; /* <t>store_<n>, <t>astore, stack ops, arithmetic */
    if (op >= 0x85 && op <= 0x98)
        return 1; /* conversions, comparisons */
    if (op >= 0xac && op <= 0xb1)
        return 1; /* returns */
    if (op == 0xbe || op == 0xbf || op == 0xc2 || op == 0xc3)
        return 1; /* arraylength, athrow, monitorenter, monitorexit */
    return 0;
}

uint32_t bc_switch_count(const uint8_t *code, const struct bc_insn *in)
{
    uint32_t p = bc_switch_operands(in->off);
    if (in->op == OP_TABLESWITCH) {
        int32_t lo = (int32_t)cf_get_u4(code + p + 4);
        int32_t hi = (int32_t)cf_get_u4(code + p + 8);
        return (uint32_t)((int64_t)hi - lo + 1);
    }
    return cf_get_u4(code + p + 4);
}

int32_t bc_switch_target(const uint8_t *code, const struct bc_insn *in, uint32_t i)
{
    uint32_t p = bc_switch_operands(in->off);
    uint32_t n = bc_switch_count(code, in);
    int32_t rel;
    if (i == n)
        rel = (int32_t)cf_get_u4(code + p);
    else if (in->op == OP_TABLESWITCH)
        rel = (int32_t)cf_get_u4(code + p + 12 + 4 * i);
    else
        rel = (int32_t)cf_get_u4(code + p + 8 + 8 * i + 4);
    return (int32_t)((int64_t)in->off + rel);
}

uint32_t bc_switch_len(uint8_t op, uint32_t n, uint32_t off)
{
    uint32_t head = bc_switch_operands(off) - off;
    if (op == OP_TABLESWITCH)
        return head + 12 + 4 * n;
    return head + 8 + 8 * n;
}

uint8_t bc_invert_branch(uint8_t op)
{
    if (op >= 0x99 && op <= 0xa6) /* ifeq..if_acmpne come in pairs: even/odd offsets */
        return (uint8_t)(((op - 0x99) ^ 1) + 0x99);
    if (op == OP_IFNULL)
        return OP_IFNONNULL;
    if (op == OP_IFNONNULL)
        return OP_IFNULL;
    return op;
}

void bc_free(struct bc_code *bc)
{
    free(bc->insn);
    free(bc->at);
    bc->insn = NULL;
    bc->at = NULL;
    bc->count = 0;
}

static bool target_ok(const struct bc_code *bc, int64_t t)
{
    return t >= 0 && t < (int64_t)bc->len && bc->at[t] >= 0;
}

int bc_decode(struct bc_code *bc, const uint8_t *code, uint32_t len, char *err, size_t errlen)
{
    memset(bc, 0, sizeof(*bc));
    bc->code = code;
    bc->len = len;
    bc->at = malloc(((size_t)len + 1) * sizeof(*bc->at));
    bc->insn = malloc((size_t)len * sizeof(*bc->insn)); /* at most one per byte */
    if (!bc->at || !bc->insn) {
        bc_free(bc);
        return cf_error(err, errlen, "out of memory");
    }
    for (uint32_t i = 0; i <= len; i++)
        bc->at[i] = -1;
    uint32_t off = 0;
    while (off < len) {
        struct bc_insn *in = &bc->insn[bc->count];
        memset(in, 0, sizeof(*in));
        in->off = off;
        uint8_t op = code[off];
        in->op = op;
        uint8_t fl = fixed_length(op);
        if (fl == 0) {
            bc_free(bc);
            return cf_error(err, errlen, "invalid opcode 0x%02x at %u", op, off);
        }
        uint32_t n;
        if (fl != 0xff) {
            n = fl;
        } else if (op == OP_WIDE) {
            if (off + 1 >= len) {
                bc_free(bc);
                return cf_error(err, errlen, "truncated wide at %u", off);
            }
            uint8_t w = code[off + 1];
            in->op = w;
            in->wide = true;
            if (w == OP_IINC)
                n = 6;
            else if ((w >= 0x15 && w <= 0x19) || (w >= 0x36 && w <= 0x3a) || w == OP_RET)
                n = 4;
            else {
                bc_free(bc);
                return cf_error(err, errlen, "wide applied to opcode 0x%02x at %u", w, off);
            }
        } else {
            uint32_t p = bc_switch_operands(off);
            uint64_t need = (uint64_t)p + (op == OP_TABLESWITCH ? 12 : 8);
            if (need > len) {
                bc_free(bc);
                return cf_error(err, errlen, "truncated switch at %u", off);
            }
            uint64_t count;
            if (op == OP_TABLESWITCH) {
                int32_t lo = (int32_t)cf_get_u4(code + p + 4);
                int32_t hi = (int32_t)cf_get_u4(code + p + 8);
                if (hi < lo) {
                    bc_free(bc);
                    return cf_error(err, errlen, "tableswitch high < low at %u", off);
                }
                count = (uint64_t)((int64_t)hi - lo + 1);
                need += count * 4;
            } else {
                int32_t np = (int32_t)cf_get_u4(code + p + 4);
                if (np < 0) {
                    bc_free(bc);
                    return cf_error(err, errlen, "lookupswitch npairs < 0 at %u", off);
                }
                count = (uint64_t)np;
                need += count * 8;
            }
            if (need > len) {
                bc_free(bc);
                return cf_error(err, errlen, "truncated switch at %u", off);
            }
            n = (uint32_t)(need - off);
            in->kind = op == OP_TABLESWITCH ? BC_TABLESWITCH : BC_LOOKUPSWITCH;
        }
        if (n > len - off) {
            bc_free(bc);
            return cf_error(err, errlen, "truncated instruction 0x%02x at %u", op, off);
        }
        in->len = n;
        if (!in->wide) {
            if ((op >= 0x99 && op <= 0xa8) || op == OP_IFNULL || op == OP_IFNONNULL) {
                in->kind = BC_BRANCH16;
                in->target = (int32_t)off + (int16_t)cf_get_u2(code + off + 1);
            } else if (op == OP_GOTO_W || op == OP_JSR_W) {
                in->kind = BC_BRANCH32;
                in->target = (int32_t)((int64_t)off + (int32_t)cf_get_u4(code + off + 1));
            } else if (op >= OP_IRETURN && op <= OP_RETURN) {
                in->kind = BC_RETURN;
            }
        }
        bc->at[off] = (int32_t)bc->count;
        bc->count++;
        off += n;
    }
    bc->at[len] = (int32_t)bc->count;
    /* Targets must be instruction starts. */
    for (uint32_t i = 0; i < bc->count; i++) {
        const struct bc_insn *in = &bc->insn[i];
        if (in->kind == BC_BRANCH16 || in->kind == BC_BRANCH32) {
            if (!target_ok(bc, in->target)) {
                int32_t t = in->target;
                uint32_t o = in->off;
                bc_free(bc);
                return cf_error(err, errlen, "branch at %u to %d: not an instruction", o, t);
            }
        } else if (in->kind == BC_TABLESWITCH || in->kind == BC_LOOKUPSWITCH) {
            uint32_t nt = bc_switch_count(code, in);
            for (uint32_t k = 0; k <= nt; k++) {
                int32_t t = bc_switch_target(code, in, k);
                if (!target_ok(bc, t)) {
                    uint32_t o = in->off;
                    bc_free(bc);
                    return cf_error(err, errlen, "switch at %u to %d: not an instruction", o, t);
                }
            }
        }
    }
    return 0;
}

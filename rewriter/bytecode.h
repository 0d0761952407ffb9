/* Bytecode decoding for the rewriter: instruction boundaries, lengths and branch targets of a
 * method's code array (JVMS 6.5). Pure C11. */
#ifndef HPROF_BYTECODE_H
#define HPROF_BYTECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The opcodes the rewriter looks at by name. */
enum {
    OP_NOP = 0x00,
    OP_ACONST_NULL = 0x01,
    OP_ICONST_M1 = 0x02,
    OP_ICONST_0 = 0x03,
    OP_BIPUSH = 0x10,
    OP_SIPUSH = 0x11,
    OP_LDC = 0x12,
    OP_LDC_W = 0x13,
    OP_LDC2_W = 0x14,
    OP_ILOAD = 0x15,
    OP_ALOAD = 0x19,
    OP_ALOAD_0 = 0x2a,
    OP_ISTORE = 0x36,
    OP_ASTORE = 0x3a,
    OP_ASTORE_0 = 0x4b,
    OP_IINC = 0x84,
    OP_IFEQ = 0x99,
    OP_IFNE = 0x9a,
    OP_IF_ACMPNE = 0xa6,
    OP_GOTO = 0xa7,
    OP_JSR = 0xa8,
    OP_RET = 0xa9,
    OP_TABLESWITCH = 0xaa,
    OP_LOOKUPSWITCH = 0xab,
    OP_IRETURN = 0xac,
    OP_RETURN = 0xb1,
    OP_GETSTATIC = 0xb2,
    OP_INVOKESPECIAL = 0xb7,
    OP_INVOKESTATIC = 0xb8,
    OP_INVOKEINTERFACE = 0xb9,
    OP_INVOKEDYNAMIC = 0xba,
    OP_NEW = 0xbb,
    OP_ATHROW = 0xbf,
    OP_WIDE = 0xc4,
    OP_MULTIANEWARRAY = 0xc5,
    OP_IFNULL = 0xc6,
    OP_IFNONNULL = 0xc7,
    OP_GOTO_W = 0xc8,
    OP_JSR_W = 0xc9,
};

enum bc_kind {
    BC_PLAIN = 0, /* no code offsets inside */
    BC_BRANCH16,  /* if<cond>, if_<cmp>, ifnull, ifnonnull, goto, jsr: 16-bit offset */
    BC_BRANCH32,  /* goto_w, jsr_w: 32-bit offset */
    BC_TABLESWITCH,
    BC_LOOKUPSWITCH,
    BC_RETURN, /* ireturn, lreturn, freturn, dreturn, areturn, return */
};

struct bc_insn {
    uint32_t off; /* offset in the code array */
    uint32_t len; /* length in bytes (switches: with their padding at this offset) */
    uint8_t op;   /* opcode; for a wide instruction, the widened opcode */
    uint8_t kind; /* enum bc_kind */
    bool wide;
    int32_t target; /* branches: absolute target offset */
};

/* A decoded code array. */
struct bc_code {
    const uint8_t *code;
    uint32_t len;
    struct bc_insn *insn;
    uint32_t count;
    int32_t *at; /* at[off] = index of the instruction starting at off, else -1 (len+1 slots;
                    at[len] = count, for "end of code") */
};

/* Decodes code[0..len) into instructions and checks that every branch and switch target is the
 * start of an instruction. Returns 0, or -1 with err. */
int bc_decode(struct bc_code *bc, const uint8_t *code, uint32_t len, char *err, size_t errlen);
void bc_free(struct bc_code *bc);

/* True if off is the start of an instruction (or off == len when allow_end). */
static inline bool bc_is_start(const struct bc_code *bc, uint32_t off, bool allow_end)
{
    if (off > bc->len)
        return false;
    if (off == bc->len)
        return allow_end;
    return bc->at[off] >= 0;
}

/* Switch layout at offset off of an instruction with opcode op in code (already decoded, so
 * in bounds): returns the offset of the first 4-byte operand (after the padding). */
static inline uint32_t bc_switch_operands(uint32_t off)
{
    return (off + 4) & ~3u;
}

/* Number of targets in a switch (not counting default). */
uint32_t bc_switch_count(const uint8_t *code, const struct bc_insn *in);

/* The i-th target (i == count means default) as an absolute offset. */
int32_t bc_switch_target(const uint8_t *code, const struct bc_insn *in, uint32_t i);

/* Length of a switch instruction with n targets if it started at offset off. */
uint32_t bc_switch_len(uint8_t op, uint32_t n, uint32_t off);

/* The opcode that branches on the opposite condition (ifeq <-> ifne, ...). Only for conditional
 * 16-bit branches. */
uint8_t bc_invert_branch(uint8_t op);

#endif

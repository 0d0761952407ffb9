/* StackMapTable frames for the rewriter (JVMS 4.7.4, 4.10.1): decoding every frame form into
 * absolute frames, re-encoding them in the shortest form, and a forward type simulation of
 * straight-line code from a frame (the verifier's own transfer functions, without merging), used
 * to synthesize a frame where the rewriter creates a new branch target and to find where a
 * constructor's `this` becomes initialized. Pure C11. */
#ifndef HPROF_STACKMAP_H
#define HPROF_STACKMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytecode.h"
#include "classfile.h"

enum vt_tag {
    VT_TOP = 0,
    VT_INTEGER = 1,
    VT_FLOAT = 2,
    VT_DOUBLE = 3,
    VT_LONG = 4,
    VT_NULL = 5,
    VT_UNINIT_THIS = 6,
    VT_OBJECT = 7,
    VT_UNINIT = 8,
};

/* A verification type. Objects are known by name (cpidx is their Class constant when they came
 * from the class file, 0 when only the name is known); Uninitialized(off) carries the offset of
 * its `new` instruction in the ORIGINAL code until the frame is encoded. */
struct vtype {
    uint8_t tag;
    uint16_t cpidx;
    uint16_t nlen;
    uint32_t off;
    const uint8_t *name;
};

/* A frame: locals as entries (a long or double is ONE entry, as in the class file), stack too. */
struct frame {
    uint32_t off; /* code offset this frame applies to */
    uint32_t nlocals, nstack;
    struct vtype *locals, *stack;
};

/* What the simulation and the decoder need to know about the method. */
struct method_info {
    const struct cf_pool *cp;
    struct cf_pool *wcp; /* the same pool, writable (for new Class entries when encoding) */
    struct cf_arena *arena;
    const uint8_t *class_name;
    uint16_t class_name_len;
    const uint8_t *desc;
    uint16_t desc_len;
    bool is_static;
    bool is_init;        /* <init> */
    bool this_is_object; /* java/lang/Object: its <init> starts with an initialized this */
    uint16_t max_locals, max_stack;
};

bool vt_equal(const struct vtype *a, const struct vtype *b);

/* The implicit frame at offset 0, from the method descriptor. */
int smt_initial_frame(const struct method_info *mi, struct frame *f, char *err, size_t errlen);

/* Decodes a StackMapTable attribute body (data, len) into absolute frames (offsets in the code
 * described by bc, checked to be instruction starts; Uninitialized offsets checked to be `new`
 * instructions). Frames are allocated in mi->arena. */
int smt_decode(const struct method_info *mi, const struct bc_code *bc, const struct frame *initial,
               const uint8_t *data, uint32_t len, struct frame **frames, uint32_t *count, char *err,
               size_t errlen);

/* Encodes frames (sorted by strictly increasing off; Uninitialized offsets already in the new
 * code) as a StackMapTable body (number_of_entries and the entries) into out. Objects known only
 * by name get Class constants in mi->wcp. Returns 0, or -1 if the pool is full. */
int smt_encode(const struct method_info *mi, const struct frame *initial,
               const struct frame *frames, uint32_t count, struct cf_buf *out, char *err,
               size_t errlen);

/* ---- simulation ------------------------------------------------------------------------------ */

/* Per-instruction facts the simulation reports (bit flags). */
enum {
    SIM_KNOWN = 1,       /* the state before the instruction is known */
    SIM_THIS_UNINIT = 2, /* flagThisUninit holds before the instruction */
    SIM_LOCAL0_THIS = 4, /* local 0 holds uninitializedThis before the instruction */
    SIM_INITS_THIS = 8,  /* the instruction is the invokespecial that initializes this */
    SIM_STORES_0 = 16,   /* the instruction stores into local 0 */
};

/* Runs the type simulation over the whole code in instruction order, taking the state from the
 * frames (sorted by original offset) wherever there is one. info (bc->count bytes, may be NULL)
 * receives the SIM_* facts per instruction. For each instruction i with want_after[i] set
 * (want_after may be NULL), after[i] receives the frame after the instruction has executed
 * (the fall-through state, with the branch's operands popped), or nstack = UINT32_MAX if unknown.
 * Returns 0 or -1 (out of memory). */
int smt_simulate(const struct method_info *mi, const struct bc_code *bc,
                 const struct frame *initial, const struct frame *frames, uint32_t nframes,
                 uint8_t *info, const bool *want_after, struct frame *after, char *err,
                 size_t errlen);

#endif

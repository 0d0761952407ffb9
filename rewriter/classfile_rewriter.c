/* The class-file rewriter: see classfile_rewriter.h. Works one method at a time:
 *
 *   1. decode the code array into instructions (bytecode.c) and the StackMapTable into absolute
 *      frames (stackmap.c); check the exception table;
 *   2. lay the new code out: the entry call at 0, an exit call in front of each return, every
 *      instruction at its new offset; widen 16-bit branches that no longer reach and repeat until
 *      nothing changes (switch padding follows the new offsets);
 *   3. choose what the appended catch-all handlers cover (for constructors, from a type
 *      simulation that finds where `this` is initialized);
 *   4. emit the code, the exception table, the frames (shifted, plus the handlers' frames and
 *      frames for the fall-through points of widened conditional branches), and the line,
 *      local-variable and type-annotation tables with their offsets mapped.
 *
 * Offsets are mapped with one rule: a reference to an original instruction (a branch target, a
 * handler, a frame, a table entry) goes to the start of the code inserted in front of it, so a
 * jump to a return runs the exit call first. Offset 0 is the exception: the entry call is not
 * part of instruction 0, so a loop back to 0 does not call methodEntry again (line and variable
 * tables keep 0, which gives the entry call the method's first line). */
#include "classfile_rewriter.h"

#include "bytecode.h"
#include "classfile.h"
#include "stackmap.h"

#include <stdlib.h>
#include <string.h>

/* Per-class state. */
struct rw {
    const struct rewrite_config *cfg;
    struct cf_class cf;
    struct cf_arena arena;
    uint16_t entry_ref, exit_ref;
    uint8_t cnum_code[3];
    uint8_t cnum_len;
    char *err;
    size_t errlen;
};

/* Per-method layout of the new code. */
struct layout {
    uint32_t *ins_start; /* where the code inserted in front of instruction i starts */
    uint32_t *new_off;   /* where instruction i starts */
    uint32_t *new_len;   /* its new length */
    uint8_t *widen;      /* 16-bit branch i had to be widened */
    uint32_t end;        /* end of the relocated original code (the handlers follow) */
};

enum { COVER_NONE = 0, COVER_NORMAL = 1, COVER_UNINIT_THIS = 2 };

struct range {
    uint32_t start, end;
    uint8_t kind;
};

/* ---- small helpers --------------------------------------------------------------------------- */

static char *dup_utf8(const uint8_t *s, uint16_t n)
{
    char *p = malloc((size_t)n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

/* Code that pushes the int v; writes up to 3 bytes into out, returns the length or 0 if the
 * constant pool is full. */
static uint8_t push_int_code(struct cf_pool *cp, uint32_t v, uint8_t *out)
{
    int32_t s = (int32_t)v;
    if (s >= -1 && s <= 5) {
        out[0] = (uint8_t)(OP_ICONST_0 + s);
        return 1;
    }
    if (s >= -128 && s <= 127) {
        out[0] = OP_BIPUSH;
        out[1] = (uint8_t)(int8_t)s;
        return 2;
    }
    if (s >= -32768 && s <= 32767) {
        out[0] = OP_SIPUSH;
        cf_put_u2(out + 1, (uint16_t)(int16_t)s);
        return 3;
    }
    uint16_t idx = cf_pool_integer_index(cp, v);
    if (!idx)
        return 0;
    if (idx <= 255) {
        out[0] = OP_LDC;
        out[1] = (uint8_t)idx;
        return 2;
    }
    out[0] = OP_LDC_W;
    cf_put_u2(out + 1, idx);
    return 3;
}

/* Builds "push cnum; push mnum; invokestatic ref" into out (at most 9 bytes). */
static uint8_t call_code(struct rw *w, uint8_t *mnum_code, uint8_t mnum_len, uint16_t ref,
                         uint8_t *out)
{
    uint8_t n = 0;
    memcpy(out, w->cnum_code, w->cnum_len);
    n += w->cnum_len;
    memcpy(out + n, mnum_code, mnum_len);
    n += mnum_len;
    out[n++] = OP_INVOKESTATIC;
    cf_put_u2(out + n, ref);
    return (uint8_t)(n + 2);
}

/* ---- layout ---------------------------------------------------------------------------------- */

static void layout_pass(const struct bc_code *bc, struct layout *lay, uint32_t entry_len,
                        uint32_t exit_len)
{
    uint32_t pos = entry_len;
    for (uint32_t i = 0; i < bc->count; i++) {
        const struct bc_insn *in = &bc->insn[i];
        lay->ins_start[i] = pos;
        if (in->kind == BC_RETURN)
            pos += exit_len;
        lay->new_off[i] = pos;
        uint32_t len = in->len;
        if (in->kind == BC_TABLESWITCH || in->kind == BC_LOOKUPSWITCH)
            len = bc_switch_len(in->op, bc_switch_count(bc->code, in), pos);
        else if (in->kind == BC_BRANCH16 && lay->widen[i])
            len = (in->op == OP_GOTO || in->op == OP_JSR) ? 5 : 8;
        lay->new_len[i] = len;
        pos += len;
    }
    lay->end = pos;
}

/* New offset of a reference to the original instruction starting at off (or to the end). */
static uint32_t map_ref(const struct bc_code *bc, const struct layout *lay, uint32_t off)
{
    if (off >= bc->len)
        return lay->end;
    return lay->ins_start[bc->at[off]];
}

/* Like map_ref, for offsets that may not be instruction starts (line and variable tables of
 * unusual compilers): a position inside an instruction maps to the same position inside its
 * relocated copy (clamped to it). keep_zero: offset 0 stays 0. */
static uint32_t map_loose(const struct bc_code *bc, const struct layout *lay, uint32_t off,
                          bool keep_zero)
{
    if (off == 0 && keep_zero)
        return 0;
    if (off >= bc->len)
        return lay->end;
    if (bc->at[off] >= 0)
        return lay->ins_start[bc->at[off]];
    uint32_t k = off;
    while (k > 0 && bc->at[k] < 0)
        k--;
    int32_t i = bc->at[k];
    uint32_t d = off - k;
    if (d >= lay->new_len[i])
        d = lay->new_len[i] - 1;
    return lay->new_off[i] + d;
}

/* ---- tables inside Code ---------------------------------------------------------------------- */

static int reloc_line_numbers(const struct bc_code *bc, const struct layout *lay, uint8_t *p,
                              uint32_t len)
{
    if (len < 2)
        return -1;
    uint16_t n = cf_get_u2(p);
    if ((uint32_t)n * 4 + 2 != len)
        return -1;
    for (uint16_t i = 0; i < n; i++) {
        uint8_t *e = p + 2 + 4 * i;
        cf_put_u2(e, (uint16_t)map_loose(bc, lay, cf_get_u2(e), true));
    }
    return 0;
}

/* A [start, start+length) range of a local variable (LocalVariableTable, LocalVariableTypeTable,
 * localvar_target). */
static void reloc_var_range(const struct bc_code *bc, const struct layout *lay, uint8_t *e)
{
    uint32_t start = cf_get_u2(e);
    uint32_t end = start + cf_get_u2(e + 2);
    uint32_t ns = map_loose(bc, lay, start, true);
    uint32_t ne = map_loose(bc, lay, end, false);
    if (ne < ns)
        ne = ns;
    cf_put_u2(e, (uint16_t)ns);
    cf_put_u2(e + 2, (uint16_t)(ne - ns));
}

static int reloc_local_vars(const struct bc_code *bc, const struct layout *lay, uint8_t *p,
                            uint32_t len)
{
    if (len < 2)
        return -1;
    uint16_t n = cf_get_u2(p);
    if ((uint32_t)n * 10 + 2 != len)
        return -1;
    for (uint16_t i = 0; i < n; i++)
        reloc_var_range(bc, lay, p + 2 + 10 * i);
    return 0;
}

/* Skips one element_value (JVMS 4.7.16.1); depth bounds the recursion. */
static bool skip_element_value(struct cf_reader *r, int depth);

static bool skip_annotation(struct cf_reader *r, int depth)
{
    if (depth > 64)
        return false;
    cf_u2(r);
    uint16_t pairs = cf_u2(r);
    for (uint16_t i = 0; i < pairs && !r->bad; i++) {
        cf_u2(r);
        if (!skip_element_value(r, depth + 1))
            return false;
    }
    return !r->bad;
}

static bool skip_element_value(struct cf_reader *r, int depth)
{
    if (depth > 64)
        return false;
    uint8_t tag = cf_u1(r);
    switch (tag) {
    case 'B':
    case 'C':
    case 'D':
    case 'F':
    case 'I':
    case 'J':
    case 'S':
    case 'Z':
    case 's':
    case 'c':
        cf_u2(r);
        break;
    case 'e':
        cf_u4(r);
        break;
    case '@':
        return skip_annotation(r, depth + 1);
    case '[': {
        uint16_t n = cf_u2(r);
        for (uint16_t i = 0; i < n && !r->bad; i++)
            if (!skip_element_value(r, depth + 1))
                return false;
        break;
    }
    default:
        return false;
    }
    return !r->bad;
}

/* Runtime(In)VisibleTypeAnnotations of a Code attribute: maps the offsets in their targets. */
static int reloc_type_annotations(const struct bc_code *bc, const struct layout *lay, uint8_t *p,
                                  uint32_t len)
{
    struct cf_reader r;
    cf_reader_init(&r, p, len);
    uint16_t n = cf_u2(&r);
    for (uint16_t i = 0; i < n && !r.bad; i++) {
        uint8_t target = cf_u1(&r);
        switch (target) {
        case 0x00:
        case 0x01:
        case 0x16:
            cf_u1(&r);
            break;
        case 0x10:
        case 0x17:
        case 0x42: /* supertype, throws, catch (exception index kept) */
            cf_u2(&r);
            break;
        case 0x11:
        case 0x12:
            cf_u2(&r);
            break;
        case 0x13:
        case 0x14:
        case 0x15:
            break;
        case 0x40:
        case 0x41: { /* localvar_target */
            uint16_t k = cf_u2(&r);
            for (uint16_t j = 0; j < k && !r.bad; j++) {
                size_t at = r.pos;
                if (cf_skip(&r, 6))
                    reloc_var_range(bc, lay, p + at);
            }
            break;
        }
        case 0x43:
        case 0x44:
        case 0x45:
        case 0x46: /* offset_target */
        case 0x47:
        case 0x48:
        case 0x49:
        case 0x4a:
        case 0x4b: { /* type_argument_target */
            size_t at = r.pos;
            uint16_t off = cf_u2(&r);
            if (target >= 0x47)
                cf_u1(&r);
            if (r.bad)
                return -1;
            if (off >= bc->len || bc->at[off] < 0)
                return -1;
            cf_put_u2(p + at, (uint16_t)lay->new_off[bc->at[off]]);
            break;
        }
        default:
            return -1;
        }
        uint8_t path = cf_u1(&r);
        cf_skip(&r, (size_t)path * 2);
        if (r.bad || !skip_annotation(&r, 0))
            return -1;
    }
    return (r.bad || r.pos != len) ? -1 : 0;
}

/* ---- one method ------------------------------------------------------------------------------ */

struct method_work {
    struct bc_code bc;
    struct layout lay;
    uint8_t *cover;
    uint8_t *info;
    bool *want_after;
    struct frame *after;
    struct range *ranges;
};

static void method_work_free(struct method_work *mw)
{
    bc_free(&mw->bc);
    free(mw->lay.ins_start);
    free(mw->lay.new_off);
    free(mw->lay.new_len);
    free(mw->lay.widen);
    free(mw->cover);
    free(mw->info);
    free(mw->want_after);
    free(mw->after);
    free(mw->ranges);
}

/* Copies frame f with offset new_off and Uninitialized(x) offsets mapped to the new code. */
static int translate_frame(struct rw *w, const struct bc_code *bc, const struct layout *lay,
                           const struct frame *f, uint32_t new_off, struct frame *out)
{
    out->off = new_off;
    out->nlocals = f->nlocals;
    out->nstack = f->nstack;
    out->locals = cf_arena_alloc(&w->arena, (f->nlocals + 1) * sizeof(struct vtype));
    out->stack = cf_arena_alloc(&w->arena, (f->nstack + 1) * sizeof(struct vtype));
    if (!out->locals || !out->stack)
        return cf_error(w->err, w->errlen, "out of memory");
    for (uint32_t k = 0; k < f->nlocals + f->nstack; k++) {
        const struct vtype *v = k < f->nlocals ? &f->locals[k] : &f->stack[k - f->nlocals];
        struct vtype *o = k < f->nlocals ? &out->locals[k] : &out->stack[k - f->nlocals];
        *o = *v;
        if (v->tag == VT_UNINIT)
            o->off = lay->new_off[bc->at[v->off]];
    }
    return 0;
}

static int frame_cmp(const void *a, const void *b)
{
    const struct frame *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Returns 0 (rewritten, appended to out), 1 (left unchanged: skipped) or -1 (malformed). */
static int rewrite_method(struct rw *w, const struct cf_method *m, uint16_t mnum,
                          struct cf_buf *out)
{
    struct cf_class *cf = &w->cf;
    struct cf_pool *cp = &cf->cp;
    struct cf_code code;
    if (cf_code_parse(cf, (uint32_t)m->code_attr, &code, w->err, w->errlen) < 0)
        return -1;
    struct method_work mw;
    memset(&mw, 0, sizeof(mw));
    int rc = -1;
    struct cf_buf cbuf; /* the new code array */
    struct cf_buf abuf; /* the new Code attribute body */
    struct cf_buf smt;  /* the new StackMapTable body */
    cf_buf_init(&cbuf);
    cf_buf_init(&abuf);
    cf_buf_init(&smt);
    char *err = w->err;
    size_t errlen = w->errlen;

    if (bc_decode(&mw.bc, code.code, code.code_len, err, errlen) < 0)
        goto done;
    const struct bc_code *bc = &mw.bc;

    /* Exception table. */
    for (uint16_t i = 0; i < code.ex_count; i++) {
        const uint8_t *e = code.ex + 8 * i;
        uint16_t s = cf_get_u2(e), en = cf_get_u2(e + 2), h = cf_get_u2(e + 4);
        uint16_t ct = cf_get_u2(e + 6);
        if (s >= en || !bc_is_start(bc, s, false) || !bc_is_start(bc, en, true) ||
            !bc_is_start(bc, h, false) || (ct && !cf_pool_get(cp, ct, CF_CLASS))) {
            cf_error(err, errlen, "bad exception table entry %u", i);
            goto done;
        }
    }

    /* The method as the frames see it. */
    uint16_t nlen, dlen;
    const uint8_t *name = cf_pool_utf8(cp, m->name_index, &nlen);
    const uint8_t *desc = cf_pool_utf8(cp, m->desc_index, &dlen);
    struct method_info mi;
    memset(&mi, 0, sizeof(mi));
    mi.cp = cp;
    mi.wcp = cp;
    mi.arena = &w->arena;
    mi.class_name = cf_class_name(cf, &mi.class_name_len);
    mi.desc = desc;
    mi.desc_len = dlen;
    mi.is_static = (m->access & CF_ACC_STATIC) != 0;
    mi.is_init = cf_name_is(name, nlen, "<init>");
    mi.this_is_object = cf_name_is(mi.class_name, mi.class_name_len, "java/lang/Object");
    mi.max_locals = code.max_locals;
    mi.max_stack = code.max_stack;
    bool use_frames = cf->major >= 50;
    struct frame initial;
    if (smt_initial_frame(&mi, &initial, err, errlen) < 0)
        goto done;
    struct frame *frames = NULL;
    uint32_t nframes = 0;
    int32_t smt_attr = -1; /* offset of the StackMapTable attribute_info in code.attrs */
    uint16_t smt_name = 0;
    {
        struct cf_reader r;
        cf_reader_init(&r, code.attrs, code.attrs_len);
        for (uint16_t i = 0; i < code.attr_count; i++) {
            size_t at = r.pos;
            uint16_t an = cf_u2(&r);
            uint32_t al = cf_u4(&r);
            const uint8_t *body = cf_skip(&r, al);
            if (use_frames && cf_pool_utf8_is(cp, an, "StackMapTable")) {
                if (smt_attr >= 0) {
                    cf_error(err, errlen, "two StackMapTable attributes");
                    goto done;
                }
                smt_attr = (int32_t)at;
                smt_name = an;
                if (smt_decode(&mi, bc, &initial, body, al, &frames, &nframes, err, errlen) < 0)
                    goto done;
            }
        }
    }

    /* The inserted code. */
    uint8_t mnum_code[3], entry_code[9], exit_code[9];
    uint8_t mnum_len = push_int_code(cp, mnum, mnum_code);
    if (!mnum_len) {
        rc = 1;
        goto done;
    }
    uint8_t entry_len = call_code(w, mnum_code, mnum_len, w->entry_ref, entry_code);
    uint8_t exit_len = call_code(w, mnum_code, mnum_len, w->exit_ref, exit_code);

    /* Layout, widening branches until everything reaches. */
    uint32_t count = bc->count;
    struct layout *lay = &mw.lay;
    lay->ins_start = malloc(count * sizeof(uint32_t));
    lay->new_off = malloc(count * sizeof(uint32_t));
    lay->new_len = malloc(count * sizeof(uint32_t));
    lay->widen = calloc(count, 1);
    mw.cover = calloc(count, 1);
    if (!lay->ins_start || !lay->new_off || !lay->new_len || !lay->widen || !mw.cover) {
        cf_error(err, errlen, "out of memory");
        goto done;
    }
    for (;;) {
        layout_pass(bc, lay, entry_len, exit_len);
        bool changed = false;
        for (uint32_t i = 0; i < count; i++) {
            const struct bc_insn *in = &bc->insn[i];
            if (in->kind != BC_BRANCH16 || lay->widen[i])
                continue;
            int64_t d = (int64_t)map_ref(bc, lay, (uint32_t)in->target) - lay->new_off[i];
            if (d < -32768 || d > 32767) {
                lay->widen[i] = 1;
                changed = true;
            }
        }
        if (!changed)
            break;
    }

    /* Frames needed at the fall-through of widened conditional branches. */
    bool need_sim = use_frames && mi.is_init && !mi.this_is_object;
    if (use_frames) {
        uint32_t fi = 0;
        for (uint32_t i = 0; i < count; i++) {
            const struct bc_insn *in = &bc->insn[i];
            if (in->kind != BC_BRANCH16 || !lay->widen[i] || in->op == OP_GOTO || in->op == OP_JSR)
                continue;
            if (i + 1 >= count) {
                cf_error(err, errlen, "conditional branch at the end of the code");
                goto done;
            }
            uint32_t next = bc->insn[i + 1].off;
            while (fi < nframes && frames[fi].off < next)
                fi++;
            if (fi < nframes && frames[fi].off == next)
                continue; /* the existing frame there serves */
            if (!mw.want_after) {
                mw.want_after = calloc(count, sizeof(bool));
                mw.after = calloc(count, sizeof(struct frame));
                if (!mw.want_after || !mw.after) {
                    cf_error(err, errlen, "out of memory");
                    goto done;
                }
            }
            mw.want_after[i] = true;
            need_sim = true;
        }
    }
    if (need_sim) {
        mw.info = calloc(count, 1);
        if (!mw.info) {
            cf_error(err, errlen, "out of memory");
            goto done;
        }
        if (smt_simulate(&mi, bc, &initial, frames, nframes, mw.info, mw.want_after, mw.after, err,
                         errlen) < 0)
            goto done;
        if (mw.want_after)
            for (uint32_t i = 0; i < count; i++)
                if (mw.want_after[i] && mw.after[i].nstack == UINT32_MAX) {
                    rc = 1; /* no frame can be built for the new branch target */
                    goto done;
                }
    }

    /* What the catch-all handlers cover. */
    for (uint32_t i = 0; i < count; i++) {
        const struct bc_insn *in = &bc->insn[i];
        uint8_t c = COVER_NORMAL;
        if (in->kind == BC_RETURN) {
            c = COVER_NONE;
        } else if (use_frames && mi.is_init && !mi.this_is_object) {
            uint8_t f = mw.info[i];
            if (!(f & SIM_KNOWN) || (f & SIM_INITS_THIS))
                c = COVER_NONE;
            else if (f & SIM_THIS_UNINIT)
                c = ((f & SIM_LOCAL0_THIS) && !(f & SIM_STORES_0)) ? COVER_UNINIT_THIS : COVER_NONE;
        }
        mw.cover[i] = c;
    }
    uint32_t nranges = 0;
    mw.ranges = malloc(count * sizeof(struct range));
    if (!mw.ranges) {
        cf_error(err, errlen, "out of memory");
        goto done;
    }
    bool have[3] = {false, false, false};
    for (uint32_t i = 0; i < count;) {
        if (mw.cover[i] == COVER_NONE) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j + 1 < count && mw.cover[j + 1] == mw.cover[i])
            j++;
        struct range *rg = &mw.ranges[nranges++];
        rg->start = lay->ins_start[i];
        rg->end = lay->new_off[j] + lay->new_len[j];
        rg->kind = mw.cover[i];
        have[rg->kind] = true;
        i = j + 1;
    }
    uint32_t handler_off[3] = {0, 0, 0};
    uint32_t total = lay->end;
    for (int k = 1; k <= 2; k++)
        if (have[k]) {
            handler_off[k] = total;
            total += exit_len + 1u;
        }
    if (total > 65535 || (uint32_t)code.ex_count + nranges > 65535 ||
        (uint32_t)code.max_stack + 2 > 65535) {
        rc = 1; /* would not fit in a method */
        goto done;
    }

    /* The code. */
    cf_buf_bytes(&cbuf, entry_code, entry_len);
    for (uint32_t i = 0; i < count; i++) {
        const struct bc_insn *in = &bc->insn[i];
        const uint8_t *src = code.code + in->off;
        if (in->kind == BC_RETURN)
            cf_buf_bytes(&cbuf, exit_code, exit_len);
        uint32_t at = lay->new_off[i];
        if (cbuf.len != at && !cbuf.oom) {
            cf_error(err, errlen, "internal error: layout mismatch at %u", in->off);
            goto done;
        }
        switch (in->kind) {
        case BC_BRANCH16: {
            uint32_t t = map_ref(bc, lay, (uint32_t)in->target);
            if (!lay->widen[i]) {
                cf_buf_u1(&cbuf, in->op);
                cf_buf_u2(&cbuf, (uint16_t)(int16_t)((int64_t)t - at));
            } else if (in->op == OP_GOTO || in->op == OP_JSR) {
                cf_buf_u1(&cbuf, in->op == OP_GOTO ? OP_GOTO_W : OP_JSR_W);
                cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)t - at));
            } else {
                cf_buf_u1(&cbuf, bc_invert_branch(in->op));
                cf_buf_u2(&cbuf, 8);
                cf_buf_u1(&cbuf, OP_GOTO_W);
                cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)t - (at + 3)));
            }
            break;
        }
        case BC_BRANCH32: {
            uint32_t t = map_ref(bc, lay, (uint32_t)in->target);
            cf_buf_u1(&cbuf, in->op);
            cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)t - at));
            break;
        }
        case BC_TABLESWITCH:
        case BC_LOOKUPSWITCH: {
            uint32_t n = bc_switch_count(code.code, in);
            uint32_t ops = bc_switch_operands(in->off);
            cf_buf_u1(&cbuf, in->op);
            for (uint32_t k = bc_switch_operands(at) - at - 1; k > 0; k--)
                cf_buf_u1(&cbuf, 0);
            uint32_t def = map_ref(bc, lay, (uint32_t)bc_switch_target(code.code, in, n));
            cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)def - at));
            if (in->op == OP_TABLESWITCH) {
                cf_buf_bytes(&cbuf, code.code + ops + 4, 8); /* low, high */
                for (uint32_t k = 0; k < n; k++) {
                    uint32_t t = map_ref(bc, lay, (uint32_t)bc_switch_target(code.code, in, k));
                    cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)t - at));
                }
            } else {
                cf_buf_u4(&cbuf, n);
                for (uint32_t k = 0; k < n; k++) {
                    cf_buf_bytes(&cbuf, code.code + ops + 8 + 8 * k, 4); /* match */
                    uint32_t t = map_ref(bc, lay, (uint32_t)bc_switch_target(code.code, in, k));
                    cf_buf_u4(&cbuf, (uint32_t)(int32_t)((int64_t)t - at));
                }
            }
            break;
        }
        default:
            cf_buf_bytes(&cbuf, src, in->len);
            break;
        }
    }
    for (int k = 1; k <= 2; k++)
        if (have[k]) {
            cf_buf_bytes(&cbuf, exit_code, exit_len);
            cf_buf_u1(&cbuf, OP_ATHROW);
        }
    if (cbuf.oom) {
        cf_error(err, errlen, "out of memory");
        goto done;
    }
    if (cbuf.len != total) {
        cf_error(err, errlen, "internal error: code length %zu, expected %u", cbuf.len, total);
        goto done;
    }

    /* The stack map. */
    bool write_smt = false;
    if (use_frames) {
        uint32_t nextra = have[1] + have[2];
        if (mw.want_after)
            for (uint32_t i = 0; i < count; i++)
                nextra += mw.want_after[i];
        uint32_t nout = nframes + nextra;
        if (nout > 0) {
            struct frame *of = cf_arena_alloc(&w->arena, nout * sizeof(struct frame));
            if (!of) {
                cf_error(err, errlen, "out of memory");
                goto done;
            }
            uint32_t k = 0;
            for (uint32_t i = 0; i < nframes; i++, k++)
                if (translate_frame(w, bc, lay, &frames[i], map_ref(bc, lay, frames[i].off),
                                    &of[k]) < 0)
                    goto done;
            if (mw.want_after)
                for (uint32_t i = 0; i < count; i++)
                    if (mw.want_after[i]) {
                        if (translate_frame(w, bc, lay, &mw.after[i], lay->ins_start[i + 1],
                                            &of[k++]) < 0)
                            goto done;
                    }
            static const struct vtype throwable = {
                .tag = VT_OBJECT, .name = (const uint8_t *)"java/lang/Throwable", .nlen = 19};
            static const struct vtype uninit_this = {.tag = VT_UNINIT_THIS};
            for (int h = 1; h <= 2; h++) {
                if (!have[h])
                    continue;
                struct frame *f = &of[k++];
                memset(f, 0, sizeof(*f));
                f->off = handler_off[h];
                f->nstack = 1;
                f->stack = (struct vtype *)&throwable;
                if (h == COVER_UNINIT_THIS) {
                    f->nlocals = 1;
                    f->locals = (struct vtype *)&uninit_this;
                }
            }
            qsort(of, nout, sizeof(*of), frame_cmp);
            if (smt_encode(&mi, &initial, of, nout, &smt, err, errlen) < 0) {
                rc = 1; /* constant pool full */
                goto done;
            }
            write_smt = true;
            if (!smt_name) {
                smt_name = cf_pool_utf8_index(cp, (const uint8_t *)"StackMapTable", 13);
                if (!smt_name) {
                    rc = 1;
                    goto done;
                }
            }
        }
    }

    /* The Code attribute body. */
    uint16_t max_stack = (uint16_t)(code.max_stack + 2 < 3 ? 3 : code.max_stack + 2);
    cf_buf_u2(&abuf, max_stack);
    cf_buf_u2(&abuf, code.max_locals);
    cf_buf_u4(&abuf, (uint32_t)cbuf.len);
    cf_buf_bytes(&abuf, cbuf.data, cbuf.len);
    cf_buf_u2(&abuf, (uint16_t)(code.ex_count + nranges));
    for (uint16_t i = 0; i < code.ex_count; i++) {
        const uint8_t *e = code.ex + 8 * i;
        cf_buf_u2(&abuf, (uint16_t)map_ref(bc, lay, cf_get_u2(e)));
        cf_buf_u2(&abuf, (uint16_t)map_ref(bc, lay, cf_get_u2(e + 2)));
        cf_buf_u2(&abuf, (uint16_t)map_ref(bc, lay, cf_get_u2(e + 4)));
        cf_buf_bytes(&abuf, e + 6, 2);
    }
    for (uint32_t i = 0; i < nranges; i++) {
        cf_buf_u2(&abuf, (uint16_t)mw.ranges[i].start);
        cf_buf_u2(&abuf, (uint16_t)mw.ranges[i].end);
        cf_buf_u2(&abuf, (uint16_t)handler_off[mw.ranges[i].kind]);
        cf_buf_u2(&abuf, 0);
    }
    size_t count_at = abuf.len;
    uint16_t nattrs = 0;
    cf_buf_u2(&abuf, 0);
    {
        struct cf_reader r;
        cf_reader_init(&r, code.attrs, code.attrs_len);
        for (uint16_t i = 0; i < code.attr_count; i++) {
            size_t at = r.pos;
            uint16_t an = cf_u2(&r);
            uint32_t al = cf_u4(&r);
            const uint8_t *body = cf_skip(&r, al);
            if ((int32_t)at == smt_attr ||
                (!use_frames && cf_pool_utf8_is(cp, an, "StackMapTable")))
                continue; /* rewritten below / meaningless before version 50 */
            size_t start = abuf.len;
            cf_buf_bytes(&abuf, code.attrs + at, 6 + (size_t)al);
            if (abuf.oom)
                break;
            uint8_t *copy = abuf.data + start + 6;
            int ok = 0;
            if (cf_pool_utf8_is(cp, an, "LineNumberTable"))
                ok = reloc_line_numbers(bc, lay, copy, al);
            else if (cf_pool_utf8_is(cp, an, "LocalVariableTable") ||
                     cf_pool_utf8_is(cp, an, "LocalVariableTypeTable"))
                ok = reloc_local_vars(bc, lay, copy, al);
            else if (cf_pool_utf8_is(cp, an, "RuntimeVisibleTypeAnnotations") ||
                     cf_pool_utf8_is(cp, an, "RuntimeInvisibleTypeAnnotations"))
                ok = reloc_type_annotations(bc, lay, copy, al);
            if (ok < 0) {
                abuf.len = start; /* cannot be mapped: dropped (the JVM does not need it) */
                continue;
            }
            (void)body;
            nattrs++;
        }
    }
    if (write_smt) {
        cf_buf_u2(&abuf, smt_name);
        cf_buf_u4(&abuf, (uint32_t)smt.len);
        cf_buf_bytes(&abuf, smt.data, smt.len);
        nattrs++;
    }
    if (abuf.oom) {
        cf_error(err, errlen, "out of memory");
        goto done;
    }
    cf_put_u2(abuf.data + count_at, nattrs);

    /* The method_info: everything but the Code attribute verbatim. */
    uint32_t code_at = (uint32_t)m->code_attr;
    uint32_t code_alen = cf_get_u4(cf->bytes + code_at + 2);
    cf_buf_bytes(out, cf->bytes + m->start, code_at - m->start);
    cf_buf_bytes(out, cf->bytes + code_at, 2); /* the "Code" name index */
    cf_buf_u4(out, (uint32_t)abuf.len);
    cf_buf_bytes(out, abuf.data, abuf.len);
    uint32_t after = code_at + 6 + code_alen;
    cf_buf_bytes(out, cf->bytes + after, m->end - after);
    rc = out->oom ? cf_error(err, errlen, "out of memory") : 0;

done:
    cf_buf_free(&cbuf);
    cf_buf_free(&abuf);
    cf_buf_free(&smt);
    method_work_free(&mw);
    return rc;
}

/* ---- the class ------------------------------------------------------------------------------- */

void rewrite_result_free(struct rewrite_result *r)
{
    if (!r)
        return;
    free(r->bytes);
    for (uint32_t i = 0; i < r->nmethods; i++) {
        if (r->method_names)
            free(r->method_names[i]);
        if (r->method_descs)
            free(r->method_descs[i]);
    }
    free(r->method_names);
    free(r->method_descs);
    free(r->instrumented);
    memset(r, 0, sizeof(*r));
}

static int fill_names(struct rw *w, struct rewrite_result *out)
{
    struct cf_class *cf = &w->cf;
    uint32_t n = cf->method_count;
    out->method_names = calloc(n ? n : 1, sizeof(char *));
    out->method_descs = calloc(n ? n : 1, sizeof(char *));
    out->instrumented = calloc(n ? n : 1, sizeof(bool));
    if (!out->method_names || !out->method_descs || !out->instrumented)
        return cf_error(w->err, w->errlen, "out of memory");
    out->nmethods = n;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t l1, l2;
        const uint8_t *nm = cf_pool_utf8(&cf->cp, cf->methods[i].name_index, &l1);
        const uint8_t *ds = cf_pool_utf8(&cf->cp, cf->methods[i].desc_index, &l2);
        out->method_names[i] = dup_utf8(nm, l1);
        out->method_descs[i] = dup_utf8(ds, l2);
        if (!out->method_names[i] || !out->method_descs[i])
            return cf_error(w->err, w->errlen, "out of memory");
    }
    return 0;
}

/* HotSpot registers an object for finalization when its class, or a superclass, has a
 * finalize()V whose code is anything but a lone `return` (ClassFileParser: has_finalizer vs
 * has_empty_finalizer). An instrumented empty finalize() would make every instance of the class
 * (for Object's: of every class) finalizable, so such a method is left exactly as it is. */
static bool is_empty_finalizer(struct rw *w, const struct cf_method *m)
{
    if ((m->access & CF_ACC_STATIC) || !cf_pool_utf8_is(&w->cf.cp, m->name_index, "finalize") ||
        !cf_pool_utf8_is(&w->cf.cp, m->desc_index, "()V"))
        return false;
    struct cf_code code;
    char e[8];
    if (cf_code_parse(&w->cf, (uint32_t)m->code_attr, &code, e, sizeof(e)) < 0)
        return false;
    return code.code_len == 1 && code.code[0] == OP_RETURN;
}

static bool config_ok(const struct rewrite_config *c)
{
    return c && c->tracker_class && c->entry_name && c->entry_desc && c->exit_name &&
           c->exit_desc && c->tracker_class[0] && strlen(c->tracker_class) < 65535;
}

int classfile_rewrite(const uint8_t *in, size_t len, const struct rewrite_config *cfg,
                      struct rewrite_result *out, char *err, size_t errlen)
{
    if (!out)
        return cf_error(err, errlen, "no result");
    memset(out, 0, sizeof(*out));
    if (err && errlen)
        err[0] = 0;
    if (!config_ok(cfg))
        return cf_error(err, errlen, "incomplete rewrite_config");
    struct rw w;
    memset(&w, 0, sizeof(w));
    w.cfg = cfg;
    w.err = err;
    w.errlen = errlen;
    cf_arena_init(&w.arena);
    struct cf_buf methods;
    cf_buf_init(&methods);
    int rc = -1;

    if (cf_class_parse(&w.cf, in, len, &w.arena, err, errlen) < 0)
        goto fail;
    struct cf_class *cf = &w.cf;
    struct cf_pool *cp = &cf->cp;
    uint16_t nlen;
    const uint8_t *cname = cf_class_name(cf, &nlen);
    if (cf_name_is(cname, nlen, cfg->tracker_class)) {
        cf_error(err, errlen, "the tracker class itself");
        rc = 1;
        goto fail;
    }
    if (fill_names(&w, out) < 0)
        goto fail;
    if (cf->major < 45 || cf->major > REWRITER_MAX_MAJOR) {
        cf_error(err, errlen, "class file version %u.%u not handled (45..%d)", cf->major, cf->minor,
                 REWRITER_MAX_MAJOR);
        rc = 1;
        goto keep;
    }
    uint32_t with_code = 0;
    for (uint16_t i = 0; i < cf->method_count; i++)
        if (cf->methods[i].code_attr >= 0)
            with_code++;
    if (with_code == 0) {
        cf_error(err, errlen, "no method has code");
        rc = 1;
        goto keep;
    }

    /* The tracker's constants. */
    uint16_t tc = cf_pool_class_index(cp, (const uint8_t *)cfg->tracker_class,
                                      (uint16_t)strlen(cfg->tracker_class));
    w.entry_ref = tc ? cf_pool_methodref_index(cp, tc, cfg->entry_name, cfg->entry_desc) : 0;
    w.exit_ref = tc ? cf_pool_methodref_index(cp, tc, cfg->exit_name, cfg->exit_desc) : 0;
    w.cnum_len = push_int_code(cp, cfg->class_number, w.cnum_code);
    if (!w.entry_ref || !w.exit_ref || !w.cnum_len) {
        cf_error(err, errlen, "constant pool full");
        rc = 1;
        goto keep;
    }

    uint32_t done = 0;
    for (uint16_t i = 0; i < cf->method_count; i++) {
        const struct cf_method *m = &cf->methods[i];
        int r = 1;
        if (m->code_attr >= 0 && is_empty_finalizer(&w, m)) {
            out->skipped++;
        } else if (m->code_attr >= 0) {
            size_t mark = methods.len;
            r = rewrite_method(&w, m, i, &methods);
            if (r < 0)
                goto fail;
            if (r == 1) {
                methods.len = mark;
                out->skipped++;
            }
        }
        if (r == 0) {
            out->instrumented[i] = true;
            done++;
        } else {
            cf_buf_bytes(&methods, in + m->start, m->end - m->start);
        }
    }
    if (methods.oom) {
        cf_error(err, errlen, "out of memory");
        goto fail;
    }
    if (done == 0) {
        cf_error(err, errlen, "no method could be instrumented");
        rc = 1;
        goto keep;
    }

    /* Assemble: header, pool + appended entries, the rest up to the methods verbatim, the new
     * methods, the class attributes verbatim. */
    struct cf_buf o;
    cf_buf_init(&o);
    cf_buf_bytes(&o, in, 8);
    cf_buf_u2(&o, (uint16_t)cp->count);
    cf_buf_bytes(&o, in + 10, cf->cp_end - 10);
    cf_buf_bytes(&o, cp->added.data, cp->added.len);
    cf_buf_bytes(&o, in + cf->cp_end, cf->methods_count_off + 2 - cf->cp_end);
    cf_buf_bytes(&o, methods.data, methods.len);
    cf_buf_bytes(&o, in + cf->methods_end, len - cf->methods_end);
    if (o.oom || cp->added.oom) {
        cf_buf_free(&o);
        cf_error(err, errlen, "out of memory");
        goto fail;
    }
    out->bytes = o.data;
    out->len = o.len;
    cf_buf_free(&methods);
    cf_class_free(&w.cf);
    cf_arena_free(&w.arena);
    return 0;

keep:
    cf_buf_free(&methods);
    cf_class_free(&w.cf);
    cf_arena_free(&w.arena);
    return rc;
fail:
    cf_buf_free(&methods);
    cf_class_free(&w.cf);
    cf_arena_free(&w.arena);
    if (rc < 0)
        rewrite_result_free(out);
    return rc;
}

bool rewriter_should_skip(const char *class_name)
{
    if (!class_name)
        return true;
    if (strncmp(class_name, "hprof/", 6) == 0)
        return true;
    if (strcmp(class_name, "java/lang/Object") == 0)
        return true;
    static const char *const nested[] = {"jdk/internal/vm/Continuation", "java/lang/VirtualThread"};
    for (size_t i = 0; i < sizeof(nested) / sizeof(nested[0]); i++) {
        size_t n = strlen(nested[i]);
        if (strncmp(class_name, nested[i], n) == 0 && (class_name[n] == 0 || class_name[n] == '$'))
            return true;
    }
    return false;
}

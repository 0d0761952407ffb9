/* Unit tests of the class-file rewriter (rewriter/).
 *
 * Hand-assembled class files pin down the exact edge cases: 16-bit branches that stop reaching by
 * one byte (and the ones that still just reach), backward gotos and jsr that must widen, switch
 * padding at every alignment, constructor handler ranges, methods near 64 KiB, 8-byte constants,
 * every constant-pool tag, class-file versions 45 to 69, empty finalizers, large class numbers,
 * and malformed input (every truncation, random corruption). Then real class files: every class
 * of each JDK runtime image extracted into the directories of HPROF_TEST_IMAGES (tests/meson.build
 * does it with jimage), and the Java fixtures compiled with and without -g (HPROF_TEST_FIXTURES):
 * each must rewrite
 * and pass the structural check, with its instrumentation where it should be.
 *
 * The JVM's verifier and real execution are the other half: java-tests/rewriter. */
#include "check_helpers.h"
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bytecode.h"
#include "classfile.h"
#include "classfile_check.h"
#include "classfile_rewriter.h"
#include "stackmap.h"

/* ---- a small class-file builder -------------------------------------------------------------- */

struct cb {
    uint16_t major;
    struct cf_buf cp;
    uint16_t count;
    struct cf_buf methods;
    uint16_t nmethods;
    struct cf_buf attrs; /* class attributes */
    uint16_t nattrs;
};

static void cb_init(struct cb *b, uint16_t major)
{
    memset(b, 0, sizeof(*b));
    b->major = major;
    b->count = 1;
    cf_buf_init(&b->cp);
    cf_buf_init(&b->methods);
    cf_buf_init(&b->attrs);
}

static void cb_free(struct cb *b)
{
    cf_buf_free(&b->cp);
    cf_buf_free(&b->methods);
    cf_buf_free(&b->attrs);
}

static uint16_t cb_utf8(struct cb *b, const char *s)
{
    cf_buf_u1(&b->cp, CF_UTF8);
    cf_buf_u2(&b->cp, (uint16_t)strlen(s));
    cf_buf_bytes(&b->cp, s, strlen(s));
    return b->count++;
}

static uint16_t cb_ref1(struct cb *b, uint8_t tag, uint16_t a)
{
    cf_buf_u1(&b->cp, tag);
    cf_buf_u2(&b->cp, a);
    return b->count++;
}

static uint16_t cb_ref2(struct cb *b, uint8_t tag, uint16_t a, uint16_t c)
{
    cf_buf_u1(&b->cp, tag);
    cf_buf_u2(&b->cp, a);
    cf_buf_u2(&b->cp, c);
    return b->count++;
}

static uint16_t cb_class(struct cb *b, const char *name)
{
    return cb_ref1(b, CF_CLASS, cb_utf8(b, name));
}

static uint16_t cb_nat(struct cb *b, const char *name, const char *desc)
{
    return cb_ref2(b, CF_NAME_AND_TYPE, cb_utf8(b, name), cb_utf8(b, desc));
}

static uint16_t cb_mref(struct cb *b, const char *cls, const char *name, const char *desc)
{
    return cb_ref2(b, CF_METHODREF, cb_class(b, cls), cb_nat(b, name, desc));
}

static uint16_t cb_int(struct cb *b, uint32_t v)
{
    cf_buf_u1(&b->cp, CF_INTEGER);
    cf_buf_u4(&b->cp, v);
    return b->count++;
}

static uint16_t cb_8byte(struct cb *b, uint8_t tag, uint64_t v)
{
    cf_buf_u1(&b->cp, tag);
    cf_buf_u4(&b->cp, (uint32_t)(v >> 32));
    cf_buf_u4(&b->cp, (uint32_t)v);
    uint16_t i = b->count;
    b->count += 2;
    return i;
}

struct ex {
    uint16_t start, end, handler, type;
};

/* Adds a method; code may be NULL for abstract/native. smt: StackMapTable body or NULL. */
static void cb_method(struct cb *b, uint16_t access, const char *name, const char *desc,
                      const uint8_t *code, uint32_t len, uint16_t max_stack, uint16_t max_locals,
                      const struct ex *ex, uint16_t nex, const struct cf_buf *smt)
{
    struct cf_buf *m = &b->methods;
    cf_buf_u2(m, access);
    cf_buf_u2(m, cb_utf8(b, name));
    cf_buf_u2(m, cb_utf8(b, desc));
    b->nmethods++;
    if (!code) {
        cf_buf_u2(m, 0);
        return;
    }
    cf_buf_u2(m, 1);
    uint16_t code_name = cb_utf8(b, "Code");
    uint16_t smt_name = smt ? cb_utf8(b, "StackMapTable") : 0;
    uint32_t alen = 2 + 2 + 4 + len + 2 + 8u * nex + 2 + (smt ? 6 + (uint32_t)smt->len : 0);
    cf_buf_u2(m, code_name);
    cf_buf_u4(m, alen);
    cf_buf_u2(m, max_stack);
    cf_buf_u2(m, max_locals);
    cf_buf_u4(m, len);
    cf_buf_bytes(m, code, len);
    cf_buf_u2(m, nex);
    for (uint16_t i = 0; i < nex; i++) {
        cf_buf_u2(m, ex[i].start);
        cf_buf_u2(m, ex[i].end);
        cf_buf_u2(m, ex[i].handler);
        cf_buf_u2(m, ex[i].type);
    }
    cf_buf_u2(m, smt ? 1 : 0);
    if (smt) {
        cf_buf_u2(m, smt_name);
        cf_buf_u4(m, (uint32_t)smt->len);
        cf_buf_bytes(m, smt->data, smt->len);
    }
}

/* Finishes the class; returns malloc'd bytes. */
static uint8_t *cb_finish(struct cb *b, const char *name, const char *super, size_t *len)
{
    uint16_t this_class = cb_class(b, name);
    uint16_t super_class = super ? cb_class(b, super) : 0;
    struct cf_buf o;
    cf_buf_init(&o);
    cf_buf_u4(&o, 0xCAFEBABE);
    cf_buf_u2(&o, 0);
    cf_buf_u2(&o, b->major);
    cf_buf_u2(&o, b->count);
    cf_buf_bytes(&o, b->cp.data, b->cp.len);
    cf_buf_u2(&o, 0x21);
    cf_buf_u2(&o, this_class);
    cf_buf_u2(&o, super_class);
    cf_buf_u2(&o, 0); /* interfaces */
    cf_buf_u2(&o, 0); /* fields */
    cf_buf_u2(&o, b->nmethods);
    cf_buf_bytes(&o, b->methods.data, b->methods.len);
    cf_buf_u2(&o, b->nattrs);
    cf_buf_bytes(&o, b->attrs.data, b->attrs.len);
    ck_assert(!o.oom);
    *len = o.len;
    return o.data;
}

/* A class cls (super java.lang.Object) of one static method, as most tests below want. */
static uint8_t *class_one_method(uint16_t major, const char *cls, const char *name,
                                 const char *desc, const uint8_t *code, uint32_t code_len,
                                 uint16_t max_stack, uint16_t max_locals, const struct cf_buf *smt,
                                 size_t *len)
{
    struct cb b;
    cb_init(&b, major);
    cb_method(&b, CF_ACC_STATIC, name, desc, code, code_len, max_stack, max_locals, NULL, 0, smt);
    uint8_t *r = cb_finish(&b, cls, "java/lang/Object", len);
    cb_free(&b);
    return r;
}

/* StackMapTable builder: frames in order; each call gives the absolute offset. */
struct smtb {
    struct cf_buf body; /* entries only */
    uint16_t n;
    int32_t last;
};

static void smtb_init(struct smtb *s)
{
    cf_buf_init(&s->body);
    s->n = 0;
    s->last = -1;
}

static uint16_t smtb_delta(struct smtb *s, uint32_t off)
{
    uint32_t d = s->last < 0 ? off : off - (uint32_t)s->last - 1;
    s->last = (int32_t)off;
    s->n++;
    return (uint16_t)d;
}

static void smtb_same(struct smtb *s, uint32_t off)
{
    uint16_t d = smtb_delta(s, off);
    if (d <= 63) {
        cf_buf_u1(&s->body, (uint8_t)d);
    } else {
        cf_buf_u1(&s->body, 251);
        cf_buf_u2(&s->body, d);
    }
}

/* full_frame with raw verification-type bytes. */
static void smtb_full(struct smtb *s, uint32_t off, uint16_t nl, const uint8_t *l, size_t llen,
                      uint16_t ns, const uint8_t *st, size_t slen)
{
    uint16_t d = smtb_delta(s, off);
    cf_buf_u1(&s->body, 255);
    cf_buf_u2(&s->body, d);
    cf_buf_u2(&s->body, nl);
    cf_buf_bytes(&s->body, l, llen);
    cf_buf_u2(&s->body, ns);
    cf_buf_bytes(&s->body, st, slen);
}

static void smtb_done(struct smtb *s, struct cf_buf *out)
{
    cf_buf_init(out);
    cf_buf_u2(out, s->n);
    cf_buf_bytes(out, s->body.data, s->body.len);
    cf_buf_free(&s->body);
}

/* ---- inspecting the output ------------------------------------------------------------------- */

static const struct rewrite_config CFG = {
    .tracker_class = "hprof/Tracker",
    .entry_name = "methodEntry",
    .entry_desc = "(II)V",
    .exit_name = "methodExit",
    .exit_desc = "(II)V",
    .class_number = 1,
};

struct parsed {
    struct cf_arena arena;
    struct cf_class cf;
};

static void parse_ok(struct parsed *p, const uint8_t *b, size_t len)
{
    char err[256];
    cf_arena_init(&p->arena);
    int rc = cf_class_parse(&p->cf, b, len, &p->arena, err, sizeof(err));
    ck_assert_msg(rc == 0, "parse: %s", err);
}

static void parsed_free(struct parsed *p)
{
    cf_class_free(&p->cf);
    cf_arena_free(&p->arena);
}

static const struct cf_method *find_method(struct parsed *p, const char *name)
{
    for (uint16_t i = 0; i < p->cf.method_count; i++)
        if (cf_pool_utf8_is(&p->cf.cp, p->cf.methods[i].name_index, name))
            return &p->cf.methods[i];
    ck_abort_msg("no method %s", name);
    return NULL;
}

static void method_code(struct parsed *p, const char *name, struct cf_code *code,
                        struct bc_code *bc)
{
    char err[256];
    const struct cf_method *m = find_method(p, name);
    ck_assert(m->code_attr >= 0);
    ck_assert_msg(cf_code_parse(&p->cf, (uint32_t)m->code_attr, code, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_msg(bc_decode(bc, code->code, code->code_len, err, sizeof(err)) == 0, "%s", err);
}

/* The frames of method name (none if it has no StackMapTable). */
static uint32_t method_frames(struct parsed *p, const char *name, struct frame **frames)
{
    char err[256];
    struct cf_code code;
    struct bc_code bc;
    method_code(p, name, &code, &bc);
    const struct cf_method *m = find_method(p, name);
    struct method_info mi;
    memset(&mi, 0, sizeof(mi));
    mi.cp = &p->cf.cp;
    mi.arena = &p->arena;
    mi.class_name = cf_class_name(&p->cf, &mi.class_name_len);
    mi.desc = cf_pool_utf8(&p->cf.cp, m->desc_index, &mi.desc_len);
    mi.is_static = (m->access & CF_ACC_STATIC) != 0;
    mi.is_init = strcmp(name, "<init>") == 0;
    mi.max_locals = code.max_locals;
    mi.max_stack = code.max_stack;
    struct frame initial;
    ck_assert(smt_initial_frame(&mi, &initial, err, sizeof(err)) == 0);
    struct cf_reader r;
    cf_reader_init(&r, code.attrs, code.attrs_len);
    uint32_t n = 0;
    *frames = NULL;
    for (uint16_t i = 0; i < code.attr_count; i++) {
        uint16_t an = cf_u2(&r);
        uint32_t al = cf_u4(&r);
        const uint8_t *body = cf_skip(&r, al);
        if (cf_pool_utf8_is(&p->cf.cp, an, "StackMapTable"))
            ck_assert_msg(smt_decode(&mi, &bc, &initial, body, al, frames, &n, err, sizeof(err)) ==
                              0,
                          "%s", err);
    }
    bc_free(&bc);
    return n;
}

static const struct frame *frame_at(struct frame *f, uint32_t n, uint32_t off)
{
    for (uint32_t i = 0; i < n; i++)
        if (f[i].off == off)
            return &f[i];
    return NULL;
}

/* Rewrites, asserts rc, checks the output structurally. */
static int rewrite(const uint8_t *in, size_t len, const struct rewrite_config *cfg,
                   struct rewrite_result *res)
{
    char err[256];
    int rc = classfile_rewrite(in, len, cfg, res, err, sizeof(err));
    if (rc == 0) {
        char e2[256];
        ck_assert_msg(classfile_check(res->bytes, res->len, e2, sizeof(e2)) == 0,
                      "output fails the check: %s", e2);
    }
    return rc;
}

/* Index of the Methodref for Tracker.<name> in the output pool. */
static uint16_t tracker_ref(struct parsed *p, const char *name)
{
    const struct cf_pool *cp = &p->cf.cp;
    for (uint32_t i = 1; i < cp->count; i++) {
        const struct cf_const *c = &cp->c[i];
        if (c->tag != CF_METHODREF)
            continue;
        uint16_t n;
        const uint8_t *cn = cf_pool_class_name(cp, c->a, &n);
        const struct cf_const *nat = cf_pool_get(cp, c->b, CF_NAME_AND_TYPE);
        if (cn && cf_name_is(cn, n, "hprof/Tracker") && nat && cf_pool_utf8_is(cp, nat->a, name))
            return (uint16_t)i;
    }
    return 0;
}

/* The value pushed by the instruction at code[off] (iconst/bipush/sipush/ldc Integer). */
static int64_t pushed(struct parsed *p, const uint8_t *code, uint32_t off, uint32_t *len)
{
    uint8_t op = code[off];
    if (op >= OP_ICONST_M1 && op <= OP_ICONST_0 + 5) {
        *len = 1;
        return (int64_t)op - OP_ICONST_0;
    }
    if (op == OP_BIPUSH) {
        *len = 2;
        return (int8_t)code[off + 1];
    }
    if (op == OP_SIPUSH) {
        *len = 3;
        return (int16_t)cf_get_u2(code + off + 1);
    }
    uint16_t idx = op == OP_LDC ? code[off + 1] : cf_get_u2(code + off + 1);
    *len = op == OP_LDC ? 2 : 3;
    ck_assert(op == OP_LDC || op == OP_LDC_W);
    const struct cf_const *c = cf_pool_get(&p->cf.cp, idx, CF_INTEGER);
    ck_assert(c);
    return (int32_t)c->value;
}

/* Checks "push cnum; push mnum; invokestatic ref" at off; returns its length. */
static uint32_t expect_call(struct parsed *p, const uint8_t *code, uint32_t off, int64_t cnum,
                            int64_t mnum, uint16_t ref)
{
    uint32_t l1, l2;
    ck_assert_int_eq(pushed(p, code, off, &l1), cnum);
    ck_assert_int_eq(pushed(p, code, off + l1, &l2), mnum);
    ck_assert_int_eq(code[off + l1 + l2], OP_INVOKESTATIC);
    ck_assert_int_eq(cf_get_u2(code + off + l1 + l2 + 1), ref);
    return l1 + l2 + 3;
}

/* ---- simple methods -------------------------------------------------------------------------- */

/* static int f(int x) { return x + 1; } */
static uint8_t *class_simple(uint16_t major, size_t *len)
{
    struct cb b;
    cb_init(&b, major);
    static const uint8_t f[] = {0x1a, 0x04, 0x60, 0xac};
    cb_method(&b, CF_ACC_STATIC, "f", "(I)I", f, sizeof(f), 2, 1, NULL, 0, NULL);
    static const uint8_t v[] = {0xb1};
    cb_method(&b, CF_ACC_STATIC, "v", "()V", v, sizeof(v), 0, 0, NULL, 0, NULL);
    cb_method(&b, CF_ACC_STATIC | CF_ACC_NATIVE, "n", "()V", NULL, 0, 0, 0, NULL, 0, NULL);
    uint8_t *r = cb_finish(&b, "t/Simple", "java/lang/Object", len);
    cb_free(&b);
    return r;
}

START_TEST(test_simple)
{
    size_t len;
    uint8_t *in = class_simple(52, &len);
    struct rewrite_result res;
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    ck_assert_uint_eq(res.nmethods, 3);
    ck_assert_str_eq(res.method_names[0], "f");
    ck_assert_str_eq(res.method_descs[0], "(I)I");
    ck_assert_str_eq(res.method_names[2], "n");
    ck_assert(res.instrumented[0] && res.instrumented[1] && !res.instrumented[2]);
    ck_assert_uint_eq(res.skipped, 0);

    struct parsed p;
    parse_ok(&p, res.bytes, res.len);
    uint16_t entry = tracker_ref(&p, "methodEntry"), exit = tracker_ref(&p, "methodExit");
    ck_assert(entry && exit);
    struct cf_code code;
    struct bc_code bc;
    method_code(&p, "f", &code, &bc);
    /* entry call (cnum 1, mnum 0), iload_0 iconst_1 iadd, exit call, ireturn, handler */
    uint32_t e = expect_call(&p, code.code, 0, 1, 0, entry);
    ck_assert_int_eq(code.code[e], 0x1a);
    uint32_t x = expect_call(&p, code.code, e + 3, 1, 0, exit);
    ck_assert_int_eq(code.code[e + 3 + x], 0xac);
    uint32_t h = e + 3 + x + 1;
    ck_assert_uint_eq(expect_call(&p, code.code, h, 1, 0, exit), x);
    ck_assert_int_eq(code.code[h + x], OP_ATHROW);
    ck_assert_uint_eq(code.code_len, h + x + 1);
    ck_assert_uint_eq(code.max_stack, 4);
    ck_assert_uint_eq(code.max_locals, 1);
    /* one catch-all over the body, not over the entry call, the exit call or the return */
    ck_assert_uint_eq(code.ex_count, 1);
    ck_assert_uint_eq(cf_get_u2(code.ex), e);
    ck_assert_uint_eq(cf_get_u2(code.ex + 2), e + 3);
    ck_assert_uint_eq(cf_get_u2(code.ex + 4), h);
    ck_assert_uint_eq(cf_get_u2(code.ex + 6), 0);
    bc_free(&bc);
    /* the handler's frame: no locals, [Throwable] */
    struct frame *fr;
    uint32_t n = method_frames(&p, "f", &fr);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(fr[0].off, h);
    ck_assert_uint_eq(fr[0].nlocals, 0);
    ck_assert_uint_eq(fr[0].nstack, 1);
    ck_assert(cf_name_is(fr[0].stack[0].name, fr[0].stack[0].nlen, "java/lang/Throwable"));
    /* v() is only "return": entry, exit, return; nothing to cover, so no handler, no frames */
    method_code(&p, "v", &code, &bc);
    ck_assert_uint_eq(code.ex_count, 0);
    ck_assert_uint_eq(method_frames(&p, "v", &fr), 0);
    ck_assert_int_eq(code.code[code.code_len - 1], OP_RETURN);
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

START_TEST(test_versions)
{
    /* Every version from 45 to 69; frames only from 50 on; newer versions left alone. */
    for (uint16_t major = 45; major <= 70; major++) {
        size_t len;
        uint8_t *in = class_simple(major, &len);
        struct rewrite_result res;
        char err[256];
        int rc = classfile_rewrite(in, len, &CFG, &res, err, sizeof(err));
        if (major > REWRITER_MAX_MAJOR) {
            ck_assert_int_eq(rc, 1);
            ck_assert(res.bytes == NULL);
            ck_assert_uint_eq(res.nmethods, 3);
        } else {
            ck_assert_msg(rc == 0, "version %u: %s", major, err);
            ck_assert_int_eq(classfile_check(res.bytes, res.len, err, sizeof(err)), 0);
            struct parsed p;
            parse_ok(&p, res.bytes, res.len);
            struct frame *fr;
            ck_assert_uint_eq(method_frames(&p, "f", &fr), major >= 50 ? 1 : 0);
            struct cf_code code;
            struct bc_code bc;
            method_code(&p, "f", &code, &bc);
            ck_assert_uint_eq(code.ex_count, 1);
            bc_free(&bc);
            parsed_free(&p);
        }
        rewrite_result_free(&res);
        free(in);
    }
}
END_TEST

START_TEST(test_class_numbers)
{
    static const uint32_t nums[] = {0,     5,     6,       127,        128,         32767,
                                    32768, 65535, 1000000, 0x7fffffff, 0xffffffffu, 0x80000000u};
    static const int64_t as_int[] = {0,     5,     6,       127,        128, 32767,
                                     32768, 65535, 1000000, 0x7fffffff, -1,  -2147483648LL};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        size_t len;
        uint8_t *in = class_simple(52, &len);
        struct rewrite_config cfg = CFG;
        cfg.class_number = nums[i];
        struct rewrite_result res;
        ck_assert_int_eq(rewrite(in, len, &cfg, &res), 0);
        struct parsed p;
        parse_ok(&p, res.bytes, res.len);
        struct cf_code code;
        struct bc_code bc;
        method_code(&p, "v", &code, &bc);
        uint32_t l = expect_call(&p, code.code, 0, as_int[i], 1, tracker_ref(&p, "methodEntry"));
        expect_call(&p, code.code, l, as_int[i], 1, tracker_ref(&p, "methodExit"));
        bc_free(&bc);
        parsed_free(&p);
        rewrite_result_free(&res);
        free(in);
    }
}
END_TEST

START_TEST(test_many_methods)
{
    /* 600 methods: method numbers need iconst, bipush and sipush. */
    struct cb b;
    cb_init(&b, 55);
    static const uint8_t v[] = {0xb1};
    char name[32];
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        cb_method(&b, CF_ACC_STATIC, name, "()V", v, 1, 0, 0, NULL, 0, NULL);
    }
    size_t len;
    uint8_t *in = cb_finish(&b, "t/Many", "java/lang/Object", &len);
    cb_free(&b);
    struct rewrite_result res;
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    ck_assert_uint_eq(res.nmethods, 600);
    struct parsed p;
    parse_ok(&p, res.bytes, res.len);
    static const int probe[] = {0, 5, 6, 127, 128, 599};
    for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
        snprintf(name, sizeof(name), "m%d", probe[i]);
        ck_assert_str_eq(res.method_names[probe[i]], name);
        struct cf_code code;
        struct bc_code bc;
        method_code(&p, name, &code, &bc);
        expect_call(&p, code.code, 0, 1, probe[i], tracker_ref(&p, "methodEntry"));
        bc_free(&bc);
    }
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

/* ---- branch widening ------------------------------------------------------------------------- */

/* static void w(int x) at version major:
 *     0: iload_0
 *     1: ifeq L            (or goto L when use_goto; then x is unused)
 *     4: k times { iload_0; ifne +4; return }     (5 bytes each; frame after each return)
 *        nop * fill
 *     L: return
 * The ifeq's offset grows by k * exit-call length (5 bytes here: iconst_1 iconst_0 invokestatic)
 * when rewritten. */
static uint8_t *class_widen(uint16_t major, uint32_t k, uint32_t fill, uint8_t branch, size_t *len,
                            uint32_t *orig_dist)
{
    struct cf_buf c;
    cf_buf_init(&c);
    struct smtb s;
    smtb_init(&s);
    cf_buf_u1(&c, 0x1a);
    uint32_t br = (uint32_t)c.len;
    cf_buf_u1(&c, branch);
    cf_buf_u2(&c, 0);
    for (uint32_t i = 0; i < k; i++) {
        cf_buf_u1(&c, 0x1a);
        cf_buf_u1(&c, OP_IFNE);
        cf_buf_u2(&c, 4);
        cf_buf_u1(&c, OP_RETURN);
        smtb_same(&s, (uint32_t)c.len);
    }
    for (uint32_t i = 0; i < fill; i++)
        cf_buf_u1(&c, OP_NOP);
    uint32_t target = (uint32_t)c.len;
    smtb_same(&s, target);
    cf_buf_u1(&c, OP_RETURN);
    cf_put_u2(c.data + br + 1, (uint16_t)(target - br));
    *orig_dist = target - br;
    struct cf_buf smt;
    smtb_done(&s, &smt);
    uint8_t *r = class_one_method(major, "t/Widen", "w", "(I)V", c.data, (uint32_t)c.len, 1, 1,
                                  major >= 50 ? &smt : NULL, len);
    cf_buf_free(&c);
    cf_buf_free(&smt);
    return r;
}

START_TEST(test_widen_conditional_boundary)
{
    /* entry call = 5 bytes; exit call = 5 bytes; 10 returns inside. New distance from the branch
     * (at 5 + 1) to L = old distance + 50. */
    for (int over = 0; over <= 1; over++) {
        uint32_t fill = 32767 - 3 - 50 - 50 + (uint32_t)over; /* new distance 32767 + over */
        size_t len;
        uint32_t dist;
        uint8_t *in = class_widen(52, 10, fill, OP_IFEQ, &len, &dist);
        ck_assert_uint_eq(dist + 50, 32767u + (uint32_t)over);
        struct rewrite_result res;
        ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
        struct parsed p;
        parse_ok(&p, res.bytes, res.len);
        struct cf_code code;
        struct bc_code bc;
        method_code(&p, "w", &code, &bc);
        const uint8_t *q = code.code + 6;
        struct frame *fr;
        uint32_t n = method_frames(&p, "w", &fr);
        if (!over) {
            ck_assert_int_eq(q[0], OP_IFEQ);
            ck_assert_int_eq((int16_t)cf_get_u2(q + 1), 32767);
            ck_assert_int_eq(code.code[6 + 32767 + 5], OP_RETURN); /* L: exit call, return */
            ck_assert(frame_at(fr, n, 9) == NULL);
        } else {
            /* ifne +8; goto_w L */
            ck_assert_int_eq(q[0], OP_IFNE);
            ck_assert_int_eq((int16_t)cf_get_u2(q + 1), 8);
            ck_assert_int_eq(q[3], OP_GOTO_W);
            int32_t d = (int32_t)cf_get_u4(q + 4);
            ck_assert_int_eq(code.code[9 + d + 5], OP_RETURN);
            ck_assert_int_eq(9 + d, 6 + 32768 + 5);
            /* the new branch target (after goto_w) has a frame: the locals of the entry */
            const struct frame *f = frame_at(fr, n, 14);
            ck_assert(f != NULL);
            ck_assert_uint_eq(f->nstack, 0);
            ck_assert_uint_eq(f->nlocals, 1);
            ck_assert_int_eq(f->locals[0].tag, VT_INTEGER);
        }
        /* every original frame moved: after each of the 10 returns, and at L */
        ck_assert_uint_eq(n, 10 + 1 + (uint32_t)over + 1);
        bc_free(&bc);
        parsed_free(&p);
        rewrite_result_free(&res);
        free(in);
    }
}
END_TEST

START_TEST(test_widen_goto_and_jsr)
{
    /* goto (version 52) -> goto_w; the fall-through after it needs no new frame. */
    size_t len;
    uint32_t dist;
    uint8_t *in = class_widen(52, 10, 32700, OP_GOTO, &len, &dist);
    struct rewrite_result res;
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    struct parsed p;
    parse_ok(&p, res.bytes, res.len);
    struct cf_code code;
    struct bc_code bc;
    method_code(&p, "w", &code, &bc);
    ck_assert_int_eq(code.code[6], OP_GOTO_W);
    /* the goto_w is 2 bytes longer than the goto, the 10 exit calls add 50 */
    ck_assert_int_eq((int32_t)cf_get_u4(code.code + 7), (int32_t)dist + 52);
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);

    /* A backward goto that stops reaching: at version 49, no frames at all. */
    struct cf_buf c;
    cf_buf_init(&c);
    for (int i = 0; i < 100; i++) { /* 100 x { iload_0; ifne +4; return } */
        cf_buf_u1(&c, 0x1a);
        cf_buf_u1(&c, OP_IFNE);
        cf_buf_u2(&c, 4);
        cf_buf_u1(&c, OP_RETURN);
    }
    for (int i = 0; i < 32000; i++)
        cf_buf_u1(&c, OP_NOP);
    uint32_t g = (uint32_t)c.len;
    cf_buf_u1(&c, OP_GOTO);
    cf_buf_u2(&c, (uint16_t)(int16_t) - (int32_t)g);
    in = class_one_method(49, "t/Back", "loop", "(I)V", c.data, (uint32_t)c.len, 1, 1, NULL, &len);
    cf_buf_free(&c);
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    parse_ok(&p, res.bytes, res.len);
    method_code(&p, "loop", &code, &bc);
    struct bc_insn *last = NULL;
    for (uint32_t i = 0; i < bc.count; i++)
        if (bc.insn[i].op == OP_GOTO_W)
            last = &bc.insn[i];
    ck_assert(last != NULL);
    ck_assert_int_eq(last->target, 5); /* back to the first original instruction, not the entry */
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);

    /* jsr -> jsr_w (version 49): jsr L over 32700 bytes with returns; L: astore_1; ret 1 */
    cf_buf_init(&c);
    cf_buf_u1(&c, OP_JSR);
    cf_buf_u2(&c, 0);
    cf_buf_u1(&c, OP_RETURN);
    for (int i = 0; i < 40; i++) {
        cf_buf_u1(&c, 0x1a);
        cf_buf_u1(&c, OP_IFNE);
        cf_buf_u2(&c, 4);
        cf_buf_u1(&c, OP_RETURN);
    }
    for (int i = 0; i < 32400; i++) /* jsr reaches (32605), not after 42 exit calls */
        cf_buf_u1(&c, OP_NOP);
    cf_buf_u1(&c, OP_RETURN);
    uint32_t sub = (uint32_t)c.len;
    cf_put_u2(c.data + 1, (uint16_t)sub);
    cf_buf_u1(&c, 0x4c); /* astore_1 */
    cf_buf_u1(&c, OP_RET);
    cf_buf_u1(&c, 1);
    in = class_one_method(49, "t/Jsr", "j", "(I)V", c.data, (uint32_t)c.len, 1, 2, NULL, &len);
    cf_buf_free(&c);
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    parse_ok(&p, res.bytes, res.len);
    method_code(&p, "j", &code, &bc);
    ck_assert_int_eq(bc.insn[3].op, OP_JSR_W); /* after the 3-instruction entry call */
    ck_assert_int_eq(code.code[bc.insn[3].target], 0x4c);
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

/* ---- switches -------------------------------------------------------------------------------- */

START_TEST(test_switch_padding)
{
    /* A tableswitch and a lookupswitch after 0..3 nops; each case pushes a distinct value. After
     * the 5-byte entry call every switch starts at a different alignment. */
    for (int pad = 0; pad < 4; pad++) {
        struct cf_buf c;
        cf_buf_init(&c);
        struct smtb s;
        smtb_init(&s);
        for (int i = 0; i < pad; i++)
            cf_buf_u1(&c, OP_NOP);
        uint32_t sw = (uint32_t)c.len;
        cf_buf_u1(&c, 0x1a);
        sw++;
        cf_buf_u1(&c, OP_TABLESWITCH);
        while (c.len % 4)
            cf_buf_u1(&c, 0);
        size_t ops = c.len;
        cf_buf_u4(&c, 0); /* default, patched */
        cf_buf_u4(&c, (uint32_t)-1);
        cf_buf_u4(&c, 2); /* -1..2: 4 cases */
        for (int i = 0; i < 4; i++)
            cf_buf_u4(&c, 0);
        uint32_t lk = (uint32_t)c.len; /* lookupswitch is the "default" of the tableswitch */
        cf_buf_u1(&c, 0x1a);
        lk++;
        cf_buf_u1(&c, OP_LOOKUPSWITCH);
        while (c.len % 4)
            cf_buf_u1(&c, 0);
        size_t lops = c.len;
        cf_buf_u4(&c, 0);
        cf_buf_u4(&c, 2);
        cf_buf_u4(&c, (uint32_t)-7);
        cf_buf_u4(&c, 0);
        cf_buf_u4(&c, 1000000);
        cf_buf_u4(&c, 0);
        /* targets: 7 cases (4 table + 2 lookup + lookup default), each "bipush v; ireturn" */
        uint32_t t[7];
        for (int i = 0; i < 7; i++) {
            t[i] = (uint32_t)c.len;
            smtb_same(&s, t[i]);
            cf_buf_u1(&c, OP_BIPUSH);
            cf_buf_u1(&c, (uint8_t)(10 + i));
            cf_buf_u1(&c, OP_IRETURN);
        }
        /* frame at the lookupswitch (the tableswitch default) must come before the others */
        cf_put_u4(c.data + ops, lk - 1 - sw);
        for (int i = 0; i < 4; i++)
            cf_put_u4(c.data + ops + 12 + 4 * i, t[i] - sw);
        cf_put_u4(c.data + lops, t[6] - lk);
        cf_put_u4(c.data + lops + 12, t[4] - lk);
        cf_put_u4(c.data + lops + 20, t[5] - lk);
        struct smtb s2;
        smtb_init(&s2);
        smtb_same(&s2, lk - 1);
        for (int i = 0; i < 7; i++)
            smtb_same(&s2, t[i]);
        cf_buf_free(&s.body);
        struct cf_buf smt;
        smtb_done(&s2, &smt);
        size_t len;
        uint8_t *in = class_one_method(52, "t/Switch", "s", "(I)I", c.data, (uint32_t)c.len, 1, 1,
                                       &smt, &len);
        cf_buf_free(&c);
        cf_buf_free(&smt);

        struct rewrite_result res;
        ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
        struct parsed p;
        parse_ok(&p, res.bytes, res.len);
        struct cf_code code;
        struct bc_code bc;
        method_code(&p, "s", &code, &bc);
        for (uint32_t i = 0; i < bc.count; i++) {
            const struct bc_insn *in2 = &bc.insn[i];
            if (in2->kind != BC_TABLESWITCH && in2->kind != BC_LOOKUPSWITCH)
                continue;
            ck_assert_uint_eq(bc_switch_operands(in2->off) % 4, 0);
            uint32_t nt = bc_switch_count(code.code, in2);
            for (uint32_t k = 0; k <= nt; k++) {
                int32_t tg = bc_switch_target(code.code, in2, k);
                if (in2->kind == BC_TABLESWITCH && k == nt) {
                    ck_assert_int_eq(code.code[tg], 0x1a); /* the lookupswitch's iload */
                    continue;
                }
                int expect = in2->kind == BC_TABLESWITCH ? 10 + (int)k : k == nt ? 16 : 14 + (int)k;
                /* target = exit-call-free bipush (the exit call is before the ireturn) */
                ck_assert_int_eq(code.code[tg], OP_BIPUSH);
                ck_assert_int_eq(code.code[tg + 1], expect);
            }
        }
        bc_free(&bc);
        parsed_free(&p);
        rewrite_result_free(&res);
        free(in);
    }
}
END_TEST

/* ---- constructors ---------------------------------------------------------------------------- */

/* <init>(Z)V of t/Ctor extends t/Base:
 *   0: aload_0  1: iload_1  2: ifeq 9  5: iconst_1  6: goto 10  9: iconst_2
 *  10: invokespecial t/Base.<init>(I)V  13: aload_0  14: invokevirtual t/Ctor.go()V  17: return
 * frames: 9 [uninitThis, int] / [uninitThis]; 10 [uninitThis, int] / [uninitThis, int] */
static uint8_t *class_ctor(uint16_t major, size_t *len)
{
    struct cb b;
    cb_init(&b, major);
    uint16_t sup = cb_mref(&b, "t/Base", "<init>", "(I)V");
    uint16_t go = cb_mref(&b, "t/Ctor", "go", "()V");
    uint8_t c[] = {0x2a,
                   0x1b,
                   OP_IFEQ,
                   0,
                   7,
                   0x04,
                   OP_GOTO,
                   0,
                   4,
                   0x05,
                   OP_INVOKESPECIAL,
                   (uint8_t)(sup >> 8),
                   (uint8_t)sup,
                   0x2a,
                   0xb6,
                   (uint8_t)(go >> 8),
                   (uint8_t)go,
                   OP_RETURN};
    struct smtb s;
    smtb_init(&s);
    static const uint8_t locals[] = {VT_UNINIT_THIS, VT_INTEGER};
    static const uint8_t st1[] = {VT_UNINIT_THIS};
    static const uint8_t st2[] = {VT_UNINIT_THIS, VT_INTEGER};
    smtb_full(&s, 9, 2, locals, 2, 1, st1, 1);
    smtb_full(&s, 10, 2, locals, 2, 2, st2, 2);
    struct cf_buf smt;
    smtb_done(&s, &smt);
    cb_method(&b, 0, "<init>", "(Z)V", c, sizeof(c), 3, 2, NULL, 0, major >= 50 ? &smt : NULL);
    static const uint8_t ret[] = {OP_RETURN};
    cb_method(&b, 0, "go", "()V", ret, 1, 0, 1, NULL, 0, NULL);
    uint8_t *r = cb_finish(&b, "t/Ctor", "t/Base", len);
    cb_free(&b);
    cf_buf_free(&smt);
    return r;
}

START_TEST(test_constructor)
{
    size_t len;
    uint8_t *in = class_ctor(52, &len);
    struct rewrite_result res;
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    struct parsed p;
    parse_ok(&p, res.bytes, res.len);
    struct cf_code code;
    struct bc_code bc;
    method_code(&p, "<init>", &code, &bc);
    /* the entry call is at 0, before the super call: a static call with int arguments is legal
     * while `this` is uninitialized */
    uint32_t e = expect_call(&p, code.code, 0, 1, 0, tracker_ref(&p, "methodEntry"));
    ck_assert_uint_eq(e, 5);
    uint32_t sup = e + 10; /* invokespecial, at 10 before */
    ck_assert_int_eq(code.code[sup], OP_INVOKESPECIAL);
    /* two catch-alls: [5, 15) before the super call with an uninitializedThis frame, and
     * [18, 21) after it (aload_0, invokevirtual), the super call itself in neither */
    ck_assert_uint_eq(code.ex_count, 2);
    uint16_t s0 = cf_get_u2(code.ex), e0 = cf_get_u2(code.ex + 2), h0 = cf_get_u2(code.ex + 4);
    uint16_t s1 = cf_get_u2(code.ex + 8), e1 = cf_get_u2(code.ex + 10);
    uint16_t h1 = cf_get_u2(code.ex + 12);
    ck_assert_uint_eq(s0, 5);
    ck_assert_uint_eq(e0, sup);
    ck_assert_uint_eq(s1, sup + 3);
    ck_assert_uint_eq(e1, sup + 3 + 4);
    struct frame *fr;
    uint32_t n = method_frames(&p, "<init>", &fr);
    const struct frame *f0 = frame_at(fr, n, h0), *f1 = frame_at(fr, n, h1);
    ck_assert(f0 && f1);
    ck_assert_uint_eq(f0->nlocals, 1);
    ck_assert_int_eq(f0->locals[0].tag, VT_UNINIT_THIS);
    ck_assert_uint_eq(f1->nlocals, 0);
    ck_assert_uint_eq(f0->nstack, 1);
    ck_assert_uint_eq(f1->nstack, 1);
    /* the original frames moved by 5 */
    ck_assert(frame_at(fr, n, 14) && frame_at(fr, n, 15));
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);

    /* Version 49: the old verifier accepts one handler over the whole constructor (it only
     * needs the handler never to return), so the super call is covered too. */
    in = class_ctor(49, &len);
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    parse_ok(&p, res.bytes, res.len);
    method_code(&p, "<init>", &code, &bc);
    ck_assert_uint_eq(code.ex_count, 1);
    ck_assert_uint_eq(cf_get_u2(code.ex), 5);
    ck_assert_uint_eq(cf_get_u2(code.ex + 2), 5 + 17);
    ck_assert_uint_eq(method_frames(&p, "<init>", &fr), 0);
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

/* ---- sizes ----------------------------------------------------------------------------------- */

static uint8_t *class_big(uint32_t nops, uint32_t nreturns, size_t *len)
{
    struct cf_buf c;
    cf_buf_init(&c);
    struct smtb s;
    smtb_init(&s);
    for (uint32_t i = 0; i < nreturns; i++) {
        cf_buf_u1(&c, 0x1a);
        cf_buf_u1(&c, OP_IFNE);
        cf_buf_u2(&c, 4);
        cf_buf_u1(&c, OP_RETURN);
        smtb_same(&s, (uint32_t)c.len);
    }
    for (uint32_t i = 0; i < nops; i++)
        cf_buf_u1(&c, OP_NOP);
    cf_buf_u1(&c, OP_RETURN);
    struct cf_buf smt;
    smtb_done(&s, &smt);
    struct cb b;
    cb_init(&b, 52);
    cb_method(&b, CF_ACC_STATIC, "big", "(I)V", c.data, (uint32_t)c.len, 1, 1, NULL, 0,
              nreturns ? &smt : NULL);
    static const uint8_t v[] = {0xb1};
    cb_method(&b, CF_ACC_STATIC, "small", "()V", v, 1, 0, 0, NULL, 0, NULL);
    uint8_t *r = cb_finish(&b, "t/Big", "java/lang/Object", len);
    cb_free(&b);
    cf_buf_free(&c);
    cf_buf_free(&smt);
    return r;
}

START_TEST(test_near_64k)
{
    /* 1 + 100 returns: entry 5 + 101 exits of 5 + one handler 6 = 516 more bytes. */
    for (int over = 0; over <= 1; over++) {
        uint32_t nops = 65535 - 516 - 500 - 1 + (uint32_t)over;
        size_t len;
        uint8_t *in = class_big(nops, 100, &len);
        struct rewrite_result res;
        ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
        ck_assert(res.instrumented[1]);
        if (!over) {
            ck_assert(res.instrumented[0]);
            ck_assert_uint_eq(res.skipped, 0);
            struct parsed p;
            parse_ok(&p, res.bytes, res.len);
            struct cf_code code;
            struct bc_code bc;
            method_code(&p, "big", &code, &bc);
            ck_assert_uint_eq(code.code_len, 65535);
            bc_free(&bc);
            parsed_free(&p);
        } else {
            ck_assert(!res.instrumented[0]); /* left unchanged, and said so */
            ck_assert_uint_eq(res.skipped, 1);
        }
        rewrite_result_free(&res);
        free(in);
    }
    /* A method of 65535 bytes that cannot grow at all, alone in its class: class unchanged. */
    struct cf_buf c;
    cf_buf_init(&c);
    for (int i = 0; i < 65534; i++)
        cf_buf_u1(&c, OP_NOP);
    cf_buf_u1(&c, OP_RETURN);
    size_t len;
    uint8_t *in =
        class_one_method(52, "t/Full", "full", "()V", c.data, (uint32_t)c.len, 0, 0, NULL, &len);
    cf_buf_free(&c);
    struct rewrite_result res;
    char err[128];
    ck_assert_int_eq(classfile_rewrite(in, len, &CFG, &res, err, sizeof(err)), 1);
    ck_assert_uint_eq(res.skipped, 1);
    ck_assert(res.bytes == NULL);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

/* ---- constants ------------------------------------------------------------------------------- */

START_TEST(test_constant_pool)
{
    /* Long and Double (two slots each), every tag a class can hold, in a version-55 class; a
     * method using ldc2_w, ldc of a Dynamic constant, invokedynamic, and a constructor that
     * loads a Dynamic before super() (the type simulation must know its type). */
    struct cb b;
    cb_init(&b, 55);
    uint16_t l = cb_8byte(&b, CF_LONG, 0x123456789abcdefULL);
    uint16_t d = cb_8byte(&b, CF_DOUBLE, 0x400921fb54442d18ULL);
    cb_int(&b, 7);
    cf_buf_u1(&b.cp, CF_FLOAT);
    cf_buf_u4(&b.cp, 0x3f800000);
    b.count++;
    uint16_t str = cb_ref1(&b, CF_STRING, cb_utf8(&b, "s"));
    uint16_t bsm = cb_mref(&b, "t/Cp", "bsm", "()V");
    uint16_t mh = b.count;
    cf_buf_u1(&b.cp, CF_METHOD_HANDLE);
    cf_buf_u1(&b.cp, 6);
    cf_buf_u2(&b.cp, bsm);
    b.count++;
    cb_ref1(&b, CF_METHOD_TYPE, cb_utf8(&b, "()V"));
    uint16_t condy = cb_ref2(&b, CF_DYNAMIC, 0, cb_nat(&b, "c", "I"));
    uint16_t condyj = cb_ref2(&b, CF_DYNAMIC, 0, cb_nat(&b, "cj", "J"));
    uint16_t indy = cb_ref2(&b, CF_INVOKE_DYNAMIC, 0, cb_nat(&b, "run", "(J)Ljava/lang/String;"));
    uint16_t sup = cb_mref(&b, "java/lang/Object", "<init>", "()V");
    (void)mh;
    (void)str;
    /* static String f(): ldc2_w l; ldc2_w d; pop2; pop2; ldc2_w condyj; invokedynamic; areturn */
    uint8_t f[] = {OP_LDC2_W,
                   (uint8_t)(l >> 8),
                   (uint8_t)l,
                   OP_LDC2_W,
                   (uint8_t)(d >> 8),
                   (uint8_t)d,
                   0x58,
                   0x58,
                   OP_LDC2_W,
                   (uint8_t)(condyj >> 8),
                   (uint8_t)condyj,
                   OP_INVOKEDYNAMIC,
                   (uint8_t)(indy >> 8),
                   (uint8_t)indy,
                   0,
                   0,
                   0xb0};
    cb_method(&b, CF_ACC_STATIC, "f", "()Ljava/lang/String;", f, sizeof(f), 4, 0, NULL, 0, NULL);
    /* <init>: ldc_w condy; pop; aload_0; invokespecial Object.<init>; return */
    uint8_t c[] = {OP_LDC_W,         (uint8_t)(condy >> 8), (uint8_t)condy, 0x57,     0x2a,
                   OP_INVOKESPECIAL, (uint8_t)(sup >> 8),   (uint8_t)sup,   OP_RETURN};
    cb_method(&b, 0, "<init>", "()V", c, sizeof(c), 1, 1, NULL, 0, NULL);
    size_t len;
    uint8_t *in = cb_finish(&b, "t/Cp", "java/lang/Object", &len);
    uint16_t old_count = b.count;
    cb_free(&b);
    char err[256];
    ck_assert_msg(classfile_check(in, len, err, sizeof(err)) == 0, "%s", err);
    struct rewrite_config cfg = CFG;
    cfg.class_number = 70000; /* needs an Integer constant */
    struct rewrite_result res;
    ck_assert_int_eq(rewrite(in, len, &cfg, &res), 0);
    struct parsed p;
    parse_ok(&p, res.bytes, res.len);
    ck_assert_uint_gt(p.cf.cp.count, old_count);
    ck_assert_int_eq(p.cf.cp.c[l].tag, CF_LONG);
    ck_assert_int_eq(p.cf.cp.c[l + 1].tag, 0);
    ck_assert_int_eq(p.cf.cp.c[d].tag, CF_DOUBLE);
    ck_assert(tracker_ref(&p, "methodEntry") >= old_count);
    struct cf_code code;
    struct bc_code bc;
    method_code(&p, "f", &code, &bc);
    uint32_t e = expect_call(&p, code.code, 0, 70000, 0, tracker_ref(&p, "methodEntry"));
    ck_assert(memcmp(code.code + e, f, 16) == 0); /* operands unchanged */
    bc_free(&bc);
    /* the constructor: [entry, ldc_w, pop, aload_0] covered with an uninitializedThis frame */
    method_code(&p, "<init>", &code, &bc);
    ck_assert_uint_eq(code.ex_count, 1);
    ck_assert_uint_eq(cf_get_u2(code.ex), e);
    ck_assert_uint_eq(cf_get_u2(code.ex + 2), e + 5);
    bc_free(&bc);
    parsed_free(&p);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

START_TEST(test_special_classes)
{
    char err[256];
    struct rewrite_result res;
    /* the tracker class itself */
    static const uint8_t v[] = {0xb1};
    size_t len;
    uint8_t *in =
        class_one_method(55, "hprof/Tracker", "methodEntry", "(II)V", v, 1, 0, 2, NULL, &len);
    struct cb b;
    ck_assert_int_eq(classfile_rewrite(in, len, &CFG, &res, err, sizeof(err)), 1);
    ck_assert(res.bytes == NULL && res.nmethods == 0);
    rewrite_result_free(&res);
    free(in);
    /* an interface with abstract methods only: nothing to do, but the names are given */
    cb_init(&b, 55);
    cb_method(&b, CF_ACC_ABSTRACT | 1, "a", "()V", NULL, 0, 0, 0, NULL, 0, NULL);
    in = cb_finish(&b, "t/I", "java/lang/Object", &len);
    cb_free(&b);
    ck_assert_int_eq(classfile_rewrite(in, len, &CFG, &res, err, sizeof(err)), 1);
    ck_assert_uint_eq(res.nmethods, 1);
    ck_assert_str_eq(res.method_names[0], "a");
    ck_assert(!res.instrumented[0]);
    rewrite_result_free(&res);
    free(in);
    /* empty finalize() is left alone (HotSpot would make every instance finalizable); a
     * non-empty one is instrumented */
    cb_init(&b, 52);
    cb_method(&b, 4, "finalize", "()V", v, 1, 0, 1, NULL, 0, NULL);
    static const uint8_t nonempty[] = {OP_NOP, OP_RETURN};
    cb_method(&b, 4 | CF_ACC_STATIC, "finalize", "()V", nonempty, 2, 0, 0, NULL, 0, NULL);
    in = cb_finish(&b, "t/F", "java/lang/Object", &len);
    cb_free(&b);
    ck_assert_int_eq(rewrite(in, len, &CFG, &res), 0);
    ck_assert(!res.instrumented[0]);
    ck_assert(res.instrumented[1]); /* static finalize()V is an ordinary method */
    ck_assert_uint_eq(res.skipped, 1);
    rewrite_result_free(&res);
    free(in);
    /* an incomplete configuration */
    in = class_simple(52, &len);
    struct rewrite_config bad = CFG;
    bad.exit_desc = NULL;
    ck_assert_int_lt(classfile_rewrite(in, len, &bad, &res, err, sizeof(err)), 0);
    rewrite_result_free(&res);
    ck_assert_int_lt(classfile_rewrite(in, len, NULL, &res, err, sizeof(err)), 0);
    rewrite_result_free(&res);
    free(in);
}
END_TEST

START_TEST(test_skip_list)
{
    ck_assert(rewriter_should_skip("hprof/Tracker"));
    ck_assert(rewriter_should_skip("hprof/Anything"));
    ck_assert(rewriter_should_skip("java/lang/Object"));
    ck_assert(rewriter_should_skip("jdk/internal/vm/Continuation"));
    ck_assert(rewriter_should_skip("jdk/internal/vm/Continuation$Pinned"));
    ck_assert(rewriter_should_skip("java/lang/VirtualThread"));
    ck_assert(rewriter_should_skip("java/lang/VirtualThread$VThreadContinuation"));
    ck_assert(rewriter_should_skip(NULL));
    ck_assert(!rewriter_should_skip("java/lang/Object2"));
    ck_assert(!rewriter_should_skip("java/lang/String"));
    ck_assert(!rewriter_should_skip("java/lang/Thread"));
    ck_assert(!rewriter_should_skip("jdk/internal/vm/ContinuationScope"));
    ck_assert(!rewriter_should_skip("hprofx/Y"));
    ck_assert(!rewriter_should_skip("com/example/Main"));
    ck_assert(rewriter_should_skip("java/lang/invoke/Invokers$Holder"));
    ck_assert(rewriter_should_skip("java/lang/invoke/DirectMethodHandle$Holder"));
    ck_assert(rewriter_should_skip("java/lang/invoke/DelegatingMethodHandle$Holder"));
    ck_assert(rewriter_should_skip("java/lang/invoke/LambdaForm$Holder"));
    ck_assert(!rewriter_should_skip("java/lang/invoke/Invokers"));
    ck_assert(!rewriter_should_skip("java/lang/invoke/DirectMethodHandle"));
}
END_TEST

/* ---- malformed input ------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

static void must_not_crash(const uint8_t *b, size_t len)
{
    struct rewrite_result res;
    char err[256];
    /* An exact-size copy, so that ASan sees any read past the end. */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, b, len);
    int rc = classfile_rewrite(copy, len, &CFG, &res, err, sizeof(err));
    /* The rewriter copies operands it does not need as they are: only an input that passes the
     * check must give an output that passes it. */
    if (rc == 0 && classfile_check(copy, len, err, sizeof(err)) == 0)
        ck_assert_msg(classfile_check(res.bytes, res.len, err, sizeof(err)) == 0,
                      "a well-formed input gave a bad output: %s", err);
    else if (rc < 0)
        ck_assert(res.bytes == NULL && res.nmethods == 0);
    rewrite_result_free(&res);
    classfile_check(copy, len, err, sizeof(err));
    free(copy);
}

START_TEST(test_truncated)
{
    size_t len;
    uint8_t *in = class_ctor(52, &len);
    for (size_t n = 0; n < len; n++) {
        struct rewrite_result res;
        char err[256];
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, in, n);
        ck_assert_int_lt(classfile_rewrite(copy, n, &CFG, &res, err, sizeof(err)), 0);
        ck_assert(err[0] != 0);
        rewrite_result_free(&res);
        free(copy);
    }
    free(in);
}
END_TEST

START_TEST(test_corrupted)
{
    /* Random byte changes in a few classes: whatever comes out, no crash, no read out of bounds,
     * and a rewritten class always passes the check. */
    size_t lens[4];
    uint8_t *ins[4];
    uint32_t dist;
    ins[0] = class_ctor(52, &lens[0]);
    ins[1] = class_simple(49, &lens[1]);
    ins[2] = class_widen(52, 3, 100, OP_IFEQ, &lens[2], &dist);
    ins[3] = class_big(200, 20, &lens[3]);
    for (int k = 0; k < 4; k++) {
        uint8_t *b = malloc(lens[k]);
        for (int round = 0; round < 4000; round++) {
            memcpy(b, ins[k], lens[k]);
            int flips = 1 + (int)(rng() % 4);
            for (int f = 0; f < flips; f++) {
                size_t at = rng() % lens[k];
                b[at] = (rng() % 3 == 0) ? (uint8_t)rng() : (uint8_t)(b[at] ^ (1u << (rng() % 8)));
            }
            must_not_crash(b, lens[k]);
        }
        free(b);
        free(ins[k]);
    }
    /* Specific damage. */
    static const uint8_t tiny[] = {0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52, 0, 0};
    must_not_crash(tiny, sizeof(tiny));
    must_not_crash(tiny, 4);
    size_t len;
    uint8_t *in = class_simple(52, &len);
    uint8_t *b = malloc(len);
    memcpy(b, in, len);
    b[0] = 0; /* magic */
    must_not_crash(b, len);
    memcpy(b, in, len);
    b[10] = 99; /* unknown constant tag */
    must_not_crash(b, len);
    memcpy(b, in, len);
    b[8] = 0xff; /* constant_pool_count far too large */
    must_not_crash(b, len);
    free(b);
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, in, len);
    longer[len] = 0; /* trailing garbage */
    struct rewrite_result res;
    char err[128];
    ck_assert_int_lt(classfile_rewrite(longer, len + 1, &CFG, &res, err, sizeof(err)), 0);
    rewrite_result_free(&res);
    free(longer);
    free(in);
    /* A branch into the middle of an instruction, a switch with high < low. */
    static const uint8_t mid[] = {0x1a, OP_IFEQ, 0, 2, OP_RETURN};
    static const uint8_t sw[] = {0x1a, OP_TABLESWITCH, 0, 0, 0, 0, 0, 12, 0, 0, 0, 5, 0, 0, 0,
                                 4,    OP_RETURN};
    const uint8_t *codes[] = {mid, sw};
    size_t clens[] = {sizeof(mid), sizeof(sw)};
    for (int k = 0; k < 2; k++) {
        uint8_t *c = class_one_method(49, "t/Bad", "m", "(I)V", codes[k], (uint32_t)clens[k], 1, 1,
                                      NULL, &len);
        ck_assert_int_lt(classfile_rewrite(c, len, &CFG, &res, err, sizeof(err)), 0);
        rewrite_result_free(&res);
        free(c);
    }
}
END_TEST

/* ---- real class files ------------------------------------------------------------------------ */

struct sweep {
    unsigned long classes, rewritten, unchanged, methods, instrumented, skipped;
    unsigned long failures;
    uint32_t cnum;
};

static struct sweep sw;

static int read_all(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(*data, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return *len ? 0 : -1;
}

/* Deeper than classfile_check: every instrumented method starts with its entry call, has an exit
 * call right before each return, as many returns as before, and its old exception handlers
 * first and unchanged in type. */
static bool instrumentation_ok(const uint8_t *in, size_t inlen, const struct rewrite_result *res,
                               uint32_t cnum, const char *path)
{
    struct parsed a, b;
    parse_ok(&a, in, inlen);
    parse_ok(&b, res->bytes, res->len);
    uint16_t entry = tracker_ref(&b, "methodEntry"), exit = tracker_ref(&b, "methodExit");
    bool ok = entry && exit && a.cf.method_count == b.cf.method_count;
    for (uint16_t i = 0; ok && i < b.cf.method_count; i++) {
        if (!res->instrumented[i])
            continue;
        char err[256];
        struct cf_code ca, cb2;
        struct bc_code ba, bb;
        ck_assert(cf_code_parse(&a.cf, (uint32_t)a.cf.methods[i].code_attr, &ca, err, 256) == 0);
        ck_assert(cf_code_parse(&b.cf, (uint32_t)b.cf.methods[i].code_attr, &cb2, err, 256) == 0);
        ck_assert(bc_decode(&ba, ca.code, ca.code_len, err, 256) == 0);
        ck_assert(bc_decode(&bb, cb2.code, cb2.code_len, err, 256) == 0);
        uint32_t l1, l2;
        ok = pushed(&b, cb2.code, 0, &l1) == (int32_t)cnum && pushed(&b, cb2.code, l1, &l2) == i &&
             cb2.code[l1 + l2] == OP_INVOKESTATIC && cf_get_u2(cb2.code + l1 + l2 + 1) == entry;
        uint32_t ra = 0, rb = 0;
        for (uint32_t k = 0; k < ba.count; k++)
            ra += ba.insn[k].kind == BC_RETURN;
        for (uint32_t k = 0; ok && k < bb.count; k++) {
            if (bb.insn[k].kind != BC_RETURN)
                continue;
            rb++;
            ok = k > 0 && bb.insn[k - 1].op == OP_INVOKESTATIC &&
                 cf_get_u2(cb2.code + bb.insn[k - 1].off + 1) == exit;
        }
        ok = ok && ra == rb && cb2.ex_count >= ca.ex_count;
        for (uint16_t k = 0; ok && k < ca.ex_count; k++)
            ok = cf_get_u2(ca.ex + 8 * k + 6) == cf_get_u2(cb2.ex + 8 * k + 6);
        for (uint16_t k = ca.ex_count; ok && k < cb2.ex_count; k++)
            ok = cf_get_u2(cb2.ex + 8 * k + 6) == 0;
        if (!ok)
            fprintf(stderr, "%s: method %u not instrumented as expected\n", path, i);
        bc_free(&ba);
        bc_free(&bb);
    }
    parsed_free(&a);
    parsed_free(&b);
    return ok;
}

static int sweep_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".class") != 0)
        return 0;
    uint8_t *data;
    size_t len;
    char err[256];
    sw.classes++;
    if (read_all(path, &data, &len) < 0) {
        fprintf(stderr, "%s: cannot read\n", path);
        sw.failures++;
        return 0;
    }
    if (classfile_check(data, len, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: input fails the check: %s\n", path, err);
        sw.failures++;
    }
    struct rewrite_config cfg = CFG;
    cfg.class_number = sw.cnum++;
    struct rewrite_result res;
    int rc = classfile_rewrite(data, len, &cfg, &res, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        sw.failures++;
    } else if (rc == 1) {
        sw.unchanged++;
    } else {
        sw.rewritten++;
        if (classfile_check(res.bytes, res.len, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s: OUTPUT fails the check: %s\n", path, err);
            sw.failures++;
        } else if (!instrumentation_ok(data, len, &res, cfg.class_number, path)) {
            sw.failures++;
        }
    }
    sw.methods += res.nmethods;
    for (uint32_t i = 0; i < res.nmethods; i++)
        sw.instrumented += res.instrumented[i];
    sw.skipped += res.skipped;
    rewrite_result_free(&res);
    free(data);
    return 0;
}

static void sweep_dir(const char *dir, const char *what)
{
    memset(&sw, 0, sizeof(sw));
    sw.cnum = 1;
    time_t t0 = time(NULL);
    ck_assert_int_eq(nftw(dir, sweep_one, 32, FTW_PHYS), 0);
    printf("%s: %lu classes (%lu rewritten, %lu unchanged), %lu methods (%lu instrumented, %lu "
           "left unchanged), %lu failures, %lds\n",
           what, sw.classes, sw.rewritten, sw.unchanged, sw.methods, sw.instrumented, sw.skipped,
           sw.failures, (long)(time(NULL) - t0));
    ck_assert_uint_gt(sw.classes, 0);
    ck_assert_uint_eq(sw.failures, 0);
}

/* Sweeps every directory of the colon-separated list in environment variable var (set by
 * tests/meson.build); without it there is nothing to sweep and the test passes, saying so. */
static void sweep_dirs_of(const char *var)
{
    const char *dirs = getenv(var);
    if (!dirs || !*dirs) {
        printf("%s not set: nothing to sweep\n", var);
        return;
    }
    char *list = strdup(dirs);
    for (char *save = NULL, *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
        sweep_dir(d, d);
    free(list);
}

START_TEST(test_jdk_images)
{
    sweep_dirs_of("HPROF_TEST_IMAGES");
}
END_TEST

START_TEST(test_fixtures)
{
    sweep_dirs_of("HPROF_TEST_FIXTURES");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rewriter");
    suite_add_tests(s, "hand-made", 120,
                    TESTS(test_simple, test_versions, test_class_numbers, test_many_methods,
                          test_widen_conditional_boundary, test_widen_goto_and_jsr,
                          test_switch_padding, test_constructor, test_near_64k, test_constant_pool,
                          test_special_classes, test_skip_list, test_truncated, test_corrupted));
    suite_add_tests(s, "real", 600, TESTS(test_fixtures, test_jdk_images));
    return run_suite(s);
}

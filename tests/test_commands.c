/* Unit tests of the socket command protocol: the streaming parser (every command, every
 * error, any chunking), the encoder, and the text commands of tools/hprof-listen. */
#include "bytes.h"
#include "check_helpers.h"
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_parser.h"
#include "command_text.h"

#define MAX_RESULTS 64

struct results {
    size_t n;
    struct hprof_cmd_result r[MAX_RESULTS];
    bool finished_inside; /* command_parser_parser_finish reported a truncated command */
};

/* Feeds buf to a fresh parser in pieces of chunk bytes (0 = all at once), collects every
 * result that is not NEED_MORE (END only once), then finishes the stream. */
static void parse_all(const uint8_t *buf, size_t len, size_t chunk, struct results *out)
{
    memset(out, 0, sizeof *out);
    struct hprof_cmd_parser p;
    command_parser_parser_init(&p);
    bool ended = false;
    size_t off = 0;
    while (off < len) {
        size_t piece = chunk == 0 || len - off < chunk ? len - off : chunk;
        size_t used = 0;
        while (used < piece) {
            struct hprof_cmd_result r;
            size_t k = command_parser_parse(&p, buf + off + used, piece - used, &r);
            ck_assert_uint_gt(k, 0);
            ck_assert_uint_le(k, piece - used);
            used += k;
            if (r.kind == HPROF_CMD_NEED_MORE)
                ck_assert_uint_eq(used, piece);
            else if (!(r.kind == HPROF_CMD_END && ended)) {
                ck_assert_uint_lt(out->n, MAX_RESULTS);
                out->r[out->n++] = r;
                ended = ended || r.kind == HPROF_CMD_END;
            }
        }
        off += piece;
    }
    struct hprof_cmd_result r;
    if (command_parser_parser_finish(&p, &r)) {
        out->finished_inside = true;
        ck_assert_uint_lt(out->n, MAX_RESULTS);
        out->r[out->n++] = r;
    }
}

/* Same results whatever the chunking. */
static void parse_every_way(const uint8_t *buf, size_t len, struct results *out)
{
    parse_all(buf, len, 0, out);
    static const size_t chunks[] = {1, 2, 3, 5, 7, 9, 10, 64};
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        struct results other;
        parse_all(buf, len, chunks[i], &other);
        ck_assert_uint_eq(other.n, out->n);
        for (size_t j = 0; j < out->n; j++) {
            ck_assert_int_eq(other.r[j].kind, out->r[j].kind);
            ck_assert_int_eq(other.r[j].error, out->r[j].error);
            ck_assert_uint_eq(other.r[j].command.tag, out->r[j].command.tag);
            ck_assert_uint_eq(other.r[j].command.serial, out->r[j].command.serial);
            ck_assert_uint_eq(other.r[j].length, out->r[j].length);
        }
    }
}

static void put_header(struct bytes *s, uint8_t tag, uint32_t serial, uint32_t length)
{
    bytes_u1(s, tag);
    bytes_u4(s, serial);
    bytes_u4(s, length);
}

static void put_command(struct bytes *s, const struct hprof_command *c)
{
    uint8_t buf[HPROF_CMD_ENCODED_MAX];
    size_t n = command_parser_encode(c, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    bytes_put(s, buf, n);
}

START_TEST(every_command_round_trips)
{
    struct hprof_command in[] = {
        {.tag = HPROF_CMD_FORCE_GC, .serial = 1},
        {.tag = HPROF_CMD_DUMP_HEAP, .serial = 2},
        {.tag = HPROF_CMD_ALLOC_SITES, .serial = 3, .flags = 0x3, .cutoff = 0.25f},
        {.tag = HPROF_CMD_HEAP_SUMMARY, .serial = 4},
        {.tag = HPROF_CMD_EXIT_VM, .serial = 5},
        {.tag = HPROF_CMD_DUMP_TRACES, .serial = 6},
        {.tag = HPROF_CMD_CPU_SAMPLES, .serial = 7, .cutoff = 1.0f},
        {.tag = HPROF_CMD_CONTROL, .serial = 8, .control = HPROF_CTL_ALLOC_TRACES_ON},
        {.tag = HPROF_CMD_CONTROL, .serial = 9, .control = HPROF_CTL_ALLOC_TRACES_OFF},
        {.tag = HPROF_CMD_CONTROL,
         .serial = 10,
         .control = HPROF_CTL_CPU_SAMPLING_ON,
         .thread_id = 0xFFFFFF0000001234ull},
        {.tag = HPROF_CMD_CONTROL, .serial = 11, .control = HPROF_CTL_CPU_SAMPLING_OFF},
        {.tag = HPROF_CMD_CONTROL, .serial = 12, .control = HPROF_CTL_CLEAR_CPU_SAMPLES},
        {.tag = HPROF_CMD_CONTROL,
         .serial = 0xFFFFFFFF,
         .control = HPROF_CTL_SET_DEPTH,
         .depth = 1024},
    };
    size_t n = sizeof in / sizeof *in;
    struct bytes s = {0};
    for (size_t i = 0; i < n; i++)
        put_command(&s, &in[i]);
    struct hprof_command eof = {.tag = HPROF_CMD_EOF};
    put_command(&s, &eof);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, n + 1);
    for (size_t i = 0; i < n; i++) {
        const struct hprof_command *c = &r.r[i].command;
        ck_assert_int_eq(r.r[i].kind, HPROF_CMD_COMMAND);
        ck_assert_uint_eq(c->tag, in[i].tag);
        ck_assert_uint_eq(c->serial, in[i].serial);
        ck_assert_uint_eq(c->flags, in[i].flags);
        ck_assert(c->cutoff == in[i].cutoff);
        ck_assert_uint_eq(c->control, in[i].control);
        ck_assert_uint_eq(c->thread_id, in[i].thread_id);
        ck_assert_uint_eq(c->depth, in[i].depth);
    }
    ck_assert_int_eq(r.r[n].kind, HPROF_CMD_END);
    ck_assert_uint_eq(r.r[n].command.tag, HPROF_CMD_EOF);
    ck_assert(!r.finished_inside);
    bytes_free(&s);
}
END_TEST

START_TEST(encoded_bytes_are_exact)
{
    struct hprof_command c = {
        .tag = HPROF_CMD_ALLOC_SITES, .serial = 0x01020304, .flags = 0x2, .cutoff = 0.5f};
    uint8_t buf[HPROF_CMD_ENCODED_MAX];
    ck_assert_uint_eq(command_parser_encode(&c, buf, sizeof buf), 15);
    static const uint8_t want[] = {0x03, 1, 2, 3, 4, 0, 0, 0, 6, 0, 2, 0x3F, 0, 0, 0};
    ck_assert_mem_eq(buf, want, sizeof want);

    struct hprof_command d = {
        .tag = HPROF_CMD_CONTROL, .serial = 7, .control = HPROF_CTL_SET_DEPTH, .depth = 12};
    ck_assert_uint_eq(command_parser_encode(&d, buf, sizeof buf), 13);
    static const uint8_t want_d[] = {0x08, 0, 0, 0, 7, 0, 0, 0, 4, 0, 6, 0, 12};
    ck_assert_mem_eq(buf, want_d, sizeof want_d);

    struct hprof_command t = {.tag = HPROF_CMD_CONTROL,
                              .serial = 1,
                              .control = HPROF_CTL_CPU_SAMPLING_ON,
                              .thread_id = 0x0102};
    ck_assert_uint_eq(command_parser_encode(&t, buf, sizeof buf), 19);
    static const uint8_t want_t[] = {0x08, 0, 0, 0, 1, 0, 0, 0, 10, 0, 3, 0, 0, 0, 0, 0, 0, 1, 2};
    ck_assert_mem_eq(buf, want_t, sizeof want_t);

    struct hprof_command g = {.tag = HPROF_CMD_FORCE_GC, .serial = 9};
    ck_assert_uint_eq(command_parser_encode(&g, buf, sizeof buf), 9);
    struct hprof_command e = {.tag = HPROF_CMD_EOF};
    ck_assert_uint_eq(command_parser_encode(&e, buf, sizeof buf), 1);
    ck_assert_uint_eq(buf[0], 0xFF);
    /* Too small a buffer, unknown tags. */
    ck_assert_uint_eq(command_parser_encode(&c, buf, 14), 0);
    struct hprof_command u = {.tag = 0x42};
    ck_assert_uint_eq(command_parser_encode(&u, buf, sizeof buf), 0);
}
END_TEST

START_TEST(unknown_tag_is_skipped_and_parsing_goes_on)
{
    struct bytes s = {0};
    put_header(&s, 0x42, 77, 5);
    bytes_put(&s, "\x01\x02\x03\x04\x05", 5);
    put_header(&s, 0x00, 78, 0); /* tag 0 is unknown too */
    put_header(&s, HPROF_CMD_DUMP_TRACES, 79, 0);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_int_eq(r.r[0].kind, HPROF_CMD_ERROR);
    ck_assert_int_eq(r.r[0].error, HPROF_CMD_ERR_UNKNOWN_TAG);
    ck_assert_uint_eq(r.r[0].command.tag, 0x42);
    ck_assert_uint_eq(r.r[0].command.serial, 77);
    ck_assert_uint_eq(r.r[0].length, 5);
    ck_assert_int_eq(r.r[1].error, HPROF_CMD_ERR_UNKNOWN_TAG);
    ck_assert_int_eq(r.r[2].kind, HPROF_CMD_COMMAND);
    ck_assert_uint_eq(r.r[2].command.tag, HPROF_CMD_DUMP_TRACES);
    ck_assert_uint_eq(r.r[2].command.serial, 79);
    bytes_free(&s);
}
END_TEST

START_TEST(short_bodies_are_errors)
{
    struct bytes s = {0};
    put_header(&s, HPROF_CMD_ALLOC_SITES, 1, 5); /* needs 6 */
    bytes_put(&s, "\0\0\0\0\0", 5);
    put_header(&s, HPROF_CMD_CPU_SAMPLES, 2, 0);
    put_header(&s, HPROF_CMD_CONTROL, 3, 1);
    bytes_u1(&s, 0);
    put_header(&s, HPROF_CMD_CONTROL, 4, 5); /* cpu on needs an id of 4 or 8 bytes */
    bytes_u2(&s, HPROF_CTL_CPU_SAMPLING_ON);
    bytes_put(&s, "\0\0\0", 3);
    put_header(&s, HPROF_CMD_CONTROL, 5, 3); /* depth needs 2 or 4 bytes */
    bytes_u2(&s, HPROF_CTL_SET_DEPTH);
    bytes_u1(&s, 9);
    put_header(&s, HPROF_CMD_HEAP_SUMMARY, 6, 0);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 6);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(r.r[i].kind, HPROF_CMD_ERROR);
        ck_assert_int_eq(r.r[i].error, HPROF_CMD_ERR_SHORT_BODY);
        ck_assert_uint_eq(r.r[i].command.serial, (uint32_t)i + 1);
    }
    ck_assert_int_eq(r.r[5].kind, HPROF_CMD_COMMAND);
    ck_assert_uint_eq(r.r[5].command.tag, HPROF_CMD_HEAP_SUMMARY);
    bytes_free(&s);
}
END_TEST

START_TEST(long_bodies_use_their_first_bytes)
{
    struct bytes s = {0};
    put_header(&s, HPROF_CMD_ALLOC_SITES, 1, 100);
    bytes_u2(&s, 0xFFFF); /* unknown flag bits are cleared */
    bytes_f4(&s, 0.125f);
    for (int i = 0; i < 94; i++)
        bytes_u1(&s, 0xAB);
    put_header(&s, HPROF_CMD_FORCE_GC, 2, 3); /* extra bytes on a command without a body */
    bytes_put(&s, "xyz", 3);
    put_header(&s, HPROF_CMD_CONTROL, 3, 6); /* u4 depth, u4 thread id */
    bytes_u2(&s, HPROF_CTL_SET_DEPTH);
    bytes_u4(&s, 1000);
    put_header(&s, HPROF_CMD_CONTROL, 4, 6);
    bytes_u2(&s, HPROF_CTL_CPU_SAMPLING_OFF);
    bytes_u4(&s, 0xDEADBEEF);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(r.r[i].kind, HPROF_CMD_COMMAND);
    ck_assert_uint_eq(r.r[0].command.flags, 0x7);
    ck_assert(r.r[0].command.cutoff == 0.125f);
    ck_assert_uint_eq(r.r[0].length, 100);
    ck_assert_uint_eq(r.r[1].command.tag, HPROF_CMD_FORCE_GC);
    ck_assert_uint_eq(r.r[2].command.depth, 1000);
    ck_assert_uint_eq(r.r[3].command.thread_id, 0xDEADBEEF);
    bytes_free(&s);
}
END_TEST

START_TEST(bad_values_are_errors)
{
    struct bytes s = {0};
    float bad[] = {NAN, INFINITY, -INFINITY, -0.5f, 1.0001f};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        put_header(&s, i % 2 ? HPROF_CMD_CPU_SAMPLES : HPROF_CMD_ALLOC_SITES, (uint32_t)i, 6);
        bytes_u2(&s, 0);
        bytes_f4(&s, bad[i]);
    }
    put_header(&s, HPROF_CMD_CONTROL, 10, 2);
    bytes_u2(&s, 7); /* no sub option 7 */
    put_header(&s, HPROF_CMD_CONTROL, 11, 2);
    bytes_u2(&s, 0);
    put_header(&s, HPROF_CMD_CONTROL, 12, 4);
    bytes_u2(&s, HPROF_CTL_SET_DEPTH);
    bytes_u2(&s, 1025);
    put_header(&s, HPROF_CMD_CONTROL, 13, 6);
    bytes_u2(&s, HPROF_CTL_SET_DEPTH);
    bytes_u4(&s, 0xFFFFFFFF);
    put_header(&s, HPROF_CMD_ALLOC_SITES, 14, 6); /* -0.0 and 0 are fine */
    bytes_u2(&s, 0);
    bytes_f4(&s, -0.0f);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 10);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(r.r[i].error, HPROF_CMD_ERR_BAD_CUTOFF);
    ck_assert_int_eq(r.r[5].error, HPROF_CMD_ERR_BAD_CONTROL);
    ck_assert_int_eq(r.r[6].error, HPROF_CMD_ERR_BAD_CONTROL);
    ck_assert_int_eq(r.r[7].error, HPROF_CMD_ERR_BAD_DEPTH);
    ck_assert_int_eq(r.r[8].error, HPROF_CMD_ERR_BAD_DEPTH);
    ck_assert_int_eq(r.r[9].kind, HPROF_CMD_COMMAND);
    ck_assert_uint_eq(r.r[9].command.serial, 14);
    bytes_free(&s);
}
END_TEST

START_TEST(huge_length_stops_parsing)
{
    struct bytes s = {0};
    put_header(&s, HPROF_CMD_DUMP_HEAP, 1, HPROF_CMD_LENGTH_MAX); /* the largest allowed */
    struct results r;
    /* A body of exactly the limit is skipped; the command after it counts. */
    uint8_t *big = calloc(1, HPROF_CMD_HEADER_SIZE * 3 + HPROF_CMD_LENGTH_MAX);
    memcpy(big, s.p, s.n);
    size_t n = s.n + HPROF_CMD_LENGTH_MAX;
    struct bytes t = {0};
    put_header(&t, HPROF_CMD_EXIT_VM, 2, 0);
    memcpy(big + n, t.p, t.n);
    n += t.n;
    parse_all(big, n, 0, &r);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_uint_eq(r.r[0].command.tag, HPROF_CMD_DUMP_HEAP);
    ck_assert_uint_eq(r.r[1].command.tag, HPROF_CMD_EXIT_VM);
    parse_all(big, n, 1000, &r);
    ck_assert_uint_eq(r.n, 2);
    free(big);

    struct bytes u = {0};
    put_header(&u, HPROF_CMD_DUMP_HEAP, 3, HPROF_CMD_LENGTH_MAX + 1);
    put_header(&u, HPROF_CMD_EXIT_VM, 4, 0); /* never seen */
    parse_every_way(u.p, u.n, &r);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.r[0].kind, HPROF_CMD_ERROR);
    ck_assert_int_eq(r.r[0].error, HPROF_CMD_ERR_TOO_LONG);
    ck_assert_uint_eq(r.r[0].length, HPROF_CMD_LENGTH_MAX + 1);
    ck_assert_int_eq(r.r[1].kind, HPROF_CMD_END);
    ck_assert(!r.finished_inside);

    struct bytes v = {0};
    put_header(&v, 0x99, 5, 0xFFFFFFFF);
    parse_every_way(v.p, v.n, &r);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_int_eq(r.r[0].error, HPROF_CMD_ERR_TOO_LONG);
    bytes_free(&s);
    bytes_free(&t);
    bytes_free(&u);
    bytes_free(&v);
}
END_TEST

START_TEST(eof_ends_at_its_tag)
{
    struct bytes s = {0};
    put_header(&s, HPROF_CMD_FORCE_GC, 1, 0);
    bytes_u1(&s, HPROF_CMD_EOF);
    put_header(&s, HPROF_CMD_EXIT_VM, 2, 0); /* after EOF: ignored */
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.r[0].kind, HPROF_CMD_COMMAND);
    ck_assert_int_eq(r.r[1].kind, HPROF_CMD_END);
    ck_assert(!r.finished_inside);

    /* 0xFF inside a header or body is data, not EOF. */
    struct bytes t = {0};
    put_header(&t, HPROF_CMD_ALLOC_SITES, 0xFFFFFFFF, 6);
    bytes_u2(&t, 0xFF);
    bytes_f4(&t, 0.0f);
    parse_every_way(t.p, t.n, &r);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_int_eq(r.r[0].kind, HPROF_CMD_COMMAND);
    ck_assert_uint_eq(r.r[0].command.serial, 0xFFFFFFFF);
    bytes_free(&s);
    bytes_free(&t);
}
END_TEST

START_TEST(stream_ending_inside_a_command)
{
    struct bytes s = {0};
    put_header(&s, HPROF_CMD_HEAP_SUMMARY, 1, 0);
    put_header(&s, HPROF_CMD_ALLOC_SITES, 2, 6);
    bytes_u2(&s, 0);
    struct results r;
    parse_every_way(s.p, s.n, &r);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.r[0].kind, HPROF_CMD_COMMAND);
    ck_assert(r.finished_inside);
    ck_assert_int_eq(r.r[1].error, HPROF_CMD_ERR_TRUNCATED);
    ck_assert_uint_eq(r.r[1].command.tag, HPROF_CMD_ALLOC_SITES);
    ck_assert_uint_eq(r.r[1].command.serial, 2);

    /* Inside a header. */
    parse_every_way(s.p, 13, &r);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.r[1].error, HPROF_CMD_ERR_TRUNCATED);
    /* At a command boundary: nothing to report. */
    parse_every_way(s.p, 9, &r);
    ck_assert_uint_eq(r.n, 1);
    ck_assert(!r.finished_inside);
    bytes_free(&s);
}
END_TEST

START_TEST(random_bytes_never_misbehave)
{
    /* A cheap, deterministic stand-in for the fuzzer: every result is consistent. */
    uint32_t x = 12345;
    uint8_t buf[2048];
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof buf; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (uint8_t)(x >> 16);
            if (round % 3 == 0 && i % 9 >= 5)
                buf[i] = 0; /* small lengths, so commands go through */
        }
        struct results r;
        parse_all(buf, (size_t)(x % sizeof buf), 1 + x % 13, &r);
        for (size_t i = 0; i < r.n; i++)
            if (r.r[i].kind == HPROF_CMD_COMMAND)
                ck_assert(r.r[i].command.cutoff >= 0.0f && r.r[i].command.cutoff <= 1.0f);
    }
}
END_TEST

START_TEST(names_and_error_texts)
{
    ck_assert_str_eq(command_parser_name(HPROF_CMD_ALLOC_SITES), "ALLOC SITES");
    ck_assert_str_eq(command_parser_name(HPROF_CMD_EXIT_VM), "EXIT THE VM");
    ck_assert_str_eq(command_parser_name(0x33), "unknown");
    for (int e = HPROF_CMD_ERR_NONE; e <= HPROF_CMD_ERR_TRUNCATED; e++)
        ck_assert_str_ne(command_parser_error_text((enum hprof_cmd_error)e), "unknown error");
}
END_TEST

/* ---- text commands ------------------------------------------------------------------- */

static struct hprof_text_command text_ok(const char *line)
{
    struct hprof_text_command t;
    struct hprof_error e = command_text_parse(line, &t);
    ck_assert_msg(!hprof_failed(&e), "'%s': %s", line, e.text);
    return t;
}

static void text_bad(const char *line, const char *want)
{
    struct hprof_text_command t;
    struct hprof_error e = command_text_parse(line, &t);
    ck_assert_msg(hprof_failed(&e), "'%s' parsed", line);
    ck_assert_msg(strstr(e.text, want) != NULL, "'%s': '%s' lacks '%s'", line, e.text, want);
}

START_TEST(text_commands)
{
    struct hprof_text_command t = text_ok("gc");
    ck_assert_int_eq(t.kind, HPROF_TEXT_SEND);
    ck_assert_uint_eq(t.command.tag, HPROF_CMD_FORCE_GC);
    ck_assert_uint_eq(text_ok("  dump ").command.tag, HPROF_CMD_DUMP_HEAP);
    ck_assert_uint_eq(text_ok("summary").command.tag, HPROF_CMD_HEAP_SUMMARY);
    ck_assert_uint_eq(text_ok("traces").command.tag, HPROF_CMD_DUMP_TRACES);
    ck_assert_uint_eq(text_ok("exit\n").command.tag, HPROF_CMD_EXIT_VM);
    ck_assert_uint_eq(text_ok("eof").command.tag, HPROF_CMD_EOF);

    t = text_ok("sites");
    ck_assert_uint_eq(t.command.tag, HPROF_CMD_ALLOC_SITES);
    ck_assert(t.command.cutoff == HPROF_TEXT_DEFAULT_CUTOFF);
    ck_assert_uint_eq(t.command.flags, 0);
    t = text_ok("sites 0.01 incremental alloc force-gc");
    ck_assert(t.command.cutoff == 0.01f);
    ck_assert_uint_eq(t.command.flags, 0x7);
    t = text_ok("sites alloc");
    ck_assert(t.command.cutoff == HPROF_TEXT_DEFAULT_CUTOFF);
    ck_assert_uint_eq(t.command.flags, 0x2);

    t = text_ok("samples 0.5");
    ck_assert_uint_eq(t.command.tag, HPROF_CMD_CPU_SAMPLES);
    ck_assert(t.command.cutoff == 0.5f);
    ck_assert(text_ok("samples").command.cutoff == HPROF_TEXT_DEFAULT_CUTOFF);

    ck_assert_uint_eq(text_ok("control alloc on").command.control, HPROF_CTL_ALLOC_TRACES_ON);
    ck_assert_uint_eq(text_ok("control alloc off").command.control, HPROF_CTL_ALLOC_TRACES_OFF);
    t = text_ok("control cpu on 0xFFFFFF0000000010");
    ck_assert_uint_eq(t.command.control, HPROF_CTL_CPU_SAMPLING_ON);
    ck_assert_uint_eq(t.command.thread_id, 0xFFFFFF0000000010ull);
    t = text_ok("control cpu off");
    ck_assert_uint_eq(t.command.control, HPROF_CTL_CPU_SAMPLING_OFF);
    ck_assert_uint_eq(t.command.thread_id, 0);
    ck_assert_uint_eq(text_ok("control cpu off 42").command.thread_id, 42);
    ck_assert_uint_eq(text_ok("control clear").command.control, HPROF_CTL_CLEAR_CPU_SAMPLES);
    t = text_ok("control depth 12");
    ck_assert_uint_eq(t.command.control, HPROF_CTL_SET_DEPTH);
    ck_assert_uint_eq(t.command.depth, 12);

    ck_assert_int_eq(text_ok("").kind, HPROF_TEXT_NOTHING);
    ck_assert_int_eq(text_ok("   # a comment").kind, HPROF_TEXT_NOTHING);
    ck_assert_uint_eq(text_ok("gc # collect").command.tag, HPROF_CMD_FORCE_GC);
    ck_assert_int_eq(text_ok("help").kind, HPROF_TEXT_HELP);
    t = text_ok("sleep 0.25");
    ck_assert_int_eq(t.kind, HPROF_TEXT_SLEEP);
    ck_assert_uint_eq(t.sleep_ms, 250);
    t = text_ok("raw 01 0000 00 07 0000000 0 ff");
    ck_assert_int_eq(t.kind, HPROF_TEXT_RAW);
    ck_assert_uint_eq(t.nraw, 10);
    static const uint8_t want[] = {1, 0, 0, 0, 7, 0, 0, 0, 0, 0xFF};
    ck_assert_mem_eq(t.raw, want, sizeof want);
}
END_TEST

START_TEST(text_errors)
{
    text_bad("bogus", "unknown command 'bogus'");
    text_bad("sites 2", "sites: '2'");
    text_bad("sites 0.1 0.2", "sites: '0.2'");
    text_bad("sites 0.5x", "sites: '0.5x'");
    text_bad("samples nan", "usage: samples");
    text_bad("samples -0.1", "usage: samples");
    text_bad("samples 0.1 0.2", "usage: samples");
    text_bad("gc now", "gc takes no arguments");
    text_bad("control", "usage: control");
    text_bad("control alloc", "usage: control alloc");
    text_bad("control cpu maybe", "usage: control cpu");
    text_bad("control cpu on -1", "usage: control cpu");
    text_bad("control cpu on 0x10000000000000000", "usage: control cpu");
    text_bad("control depth 1025", "usage: control depth");
    text_bad("control depth", "usage: control depth");
    text_bad("raw", "raw: no bytes");
    text_bad("raw 123", "odd number");
    text_bad("raw zz", "not a hex digit");
    text_bad("sleep", "usage: sleep");
    text_bad("sleep -1", "usage: sleep");
    text_bad("a b c d e f g h i", "too many words");
    char *longline = malloc(5000);
    memset(longline, 'a', 4999);
    longline[4999] = '\0';
    text_bad(longline, "longer than");
    free(longline);
}
END_TEST

START_TEST(text_help_lists_every_command)
{
    const char *h = command_text_help();
    const char *words[] = {"gc",      "dump", "sites", "summary", "traces", "samples",
                           "control", "exit", "eof",   "raw",     "sleep"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        ck_assert_msg(strstr(h, words[i]) != NULL, "help lacks %s", words[i]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("commands");
    suite_add_tests(s, "parser", 120,
                    TESTS(every_command_round_trips, encoded_bytes_are_exact,
                          unknown_tag_is_skipped_and_parsing_goes_on, short_bodies_are_errors,
                          long_bodies_use_their_first_bytes, bad_values_are_errors,
                          huge_length_stops_parsing, eof_ends_at_its_tag,
                          stream_ending_inside_a_command, random_bytes_never_misbehave,
                          names_and_error_texts));
    suite_add_tests(s, "text", 0, TESTS(text_commands, text_errors, text_help_lists_every_command));
    return s;
}

int main(void)
{
    return run_suite(suite());
}

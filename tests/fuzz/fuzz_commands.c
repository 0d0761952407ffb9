/* libFuzzer target for the socket command protocol (protocol/): the bytes a peer may send.
 * The first input byte picks the chunk size the stream is fed in (bytes arriving one by one
 * or in blocks must give the same results); every decoded command must re-encode and parse
 * back to itself. Odd first bytes also run the text-command parser on the input.
 *
 *   meson builds it as fuzz_commands when clang has libFuzzer (tests/fuzz/meson.build);
 *   by hand: build/tests/fuzz/fuzz_commands -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "command_parser.h"
#include "command_text.h"

#define MAX_RESULTS 4096

struct run {
    size_t n;
    struct hprof_cmd_result r[MAX_RESULTS];
};

static void check(int ok)
{
    if (!ok)
        abort();
}

static void run_stream(const uint8_t *data, size_t len, size_t chunk, struct run *out)
{
    struct hprof_cmd_parser p;
    command_parser_parser_init(&p);
    out->n = 0;
    int ended = 0;
    for (size_t off = 0; off < len;) {
        size_t piece = len - off < chunk ? len - off : chunk;
        for (size_t used = 0; used < piece;) {
            struct hprof_cmd_result r;
            size_t k = command_parser_parse(&p, data + off + used, piece - used, &r);
            check(k > 0 && k <= piece - used);
            used += k;
            if (r.kind == HPROF_CMD_NEED_MORE) {
                check(used == piece);
                continue;
            }
            if (r.kind == HPROF_CMD_END) {
                if (ended)
                    continue;
                ended = 1;
            }
            if (out->n < MAX_RESULTS)
                out->r[out->n++] = r;
        }
        off += piece;
    }
    struct hprof_cmd_result r;
    if (command_parser_parser_finish(&p, &r) && out->n < MAX_RESULTS) {
        check(r.kind == HPROF_CMD_ERROR && r.error == HPROF_CMD_ERR_TRUNCATED);
        out->r[out->n++] = r;
    }
}

static int same_command(const struct hprof_command *a, const struct hprof_command *b)
{
    return a->tag == b->tag && a->serial == b->serial && a->flags == b->flags &&
           memcmp(&a->cutoff, &b->cutoff, sizeof a->cutoff) == 0 && a->control == b->control &&
           a->thread_id == b->thread_id && a->depth == b->depth;
}

static void check_command(const struct hprof_command *c)
{
    check(c->tag >= HPROF_CMD_FORCE_GC && c->tag <= HPROF_CMD_CONTROL);
    check(c->cutoff >= 0.0f && c->cutoff <= 1.0f);
    check((c->flags & ~HPROF_CMD_SITES_FLAGS_KNOWN) == 0);
    check(c->depth <= HPROF_CMD_DEPTH_MAX);
    /* Re-encode and parse back. */
    uint8_t buf[HPROF_CMD_ENCODED_MAX];
    size_t n = command_parser_encode(c, buf, sizeof buf);
    check(n >= HPROF_CMD_HEADER_SIZE);
    struct hprof_cmd_parser p;
    command_parser_parser_init(&p);
    struct hprof_cmd_result r;
    check(command_parser_parse(&p, buf, n, &r) == n);
    check(r.kind == HPROF_CMD_COMMAND && same_command(&r.command, c));
}

static struct run whole, pieces;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = 1 + data[0] % 16;
    const uint8_t *stream = data + 1;
    size_t len = size - 1;

    run_stream(stream, len, len ? len : 1, &whole);
    run_stream(stream, len, chunk, &pieces);
    check(whole.n == pieces.n);
    for (size_t i = 0; i < whole.n; i++) {
        const struct hprof_cmd_result *a = &whole.r[i], *b = &pieces.r[i];
        check(a->kind == b->kind && a->error == b->error && a->length == b->length);
        check(a->command.tag == b->command.tag && a->command.serial == b->command.serial);
        if (a->kind == HPROF_CMD_COMMAND) {
            check(same_command(&a->command, &b->command));
            check_command(&a->command);
        }
        if (a->kind == HPROF_CMD_ERROR)
            check(a->error != HPROF_CMD_ERR_NONE);
    }

    if (data[0] & 1) {
        /* The same bytes as a line of text for hprof-listen. */
        char *line = malloc(len + 1);
        if (!line)
            return 0;
        memcpy(line, stream, len);
        line[len] = '\0';
        struct hprof_text_command t;
        struct hprof_error e = command_text_parse(line, &t);
        if (!hprof_failed(&e) && t.kind == HPROF_TEXT_SEND && t.command.tag != HPROF_CMD_EOF)
            check_command(&t.command);
        free(line);
    }
    return 0;
}

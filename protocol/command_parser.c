/* Command parser and encoder (see command_parser.h). The parser's only state is the fixed
 * struct: the header being collected, the first HPROF_CMD_BODY_KEEP body bytes, and counts.
 * A command is decoded when its whole body has arrived, so a short body is always known to
 * be short and bytes that trickle in one at a time give the same results as one block. */
#include "command_parser.h"

#include <string.h>

static uint16_t get_u2(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get_u4(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t get_u8(const uint8_t *p)
{
    return ((uint64_t)get_u4(p) << 32) | get_u4(p + 4);
}

static float get_float(const uint8_t *p)
{
    uint32_t bits = get_u4(p);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint8_t *put_u2(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

static uint8_t *put_u4(uint8_t *p, uint32_t v)
{
    p = put_u2(p, (uint16_t)(v >> 16));
    return put_u2(p, (uint16_t)v);
}

static uint8_t *put_u8(uint8_t *p, uint64_t v)
{
    p = put_u4(p, (uint32_t)(v >> 32));
    return put_u4(p, (uint32_t)v);
}

const char *command_parser_name(uint8_t tag)
{
    switch (tag) {
    case HPROF_CMD_FORCE_GC:
        return "FORCE GC";
    case HPROF_CMD_DUMP_HEAP:
        return "DUMP HEAP";
    case HPROF_CMD_ALLOC_SITES:
        return "ALLOC SITES";
    case HPROF_CMD_HEAP_SUMMARY:
        return "HEAP SUMMARY";
    case HPROF_CMD_EXIT_VM:
        return "EXIT THE VM";
    case HPROF_CMD_DUMP_TRACES:
        return "DUMP TRACES";
    case HPROF_CMD_CPU_SAMPLES:
        return "CPU SAMPLES";
    case HPROF_CMD_CONTROL:
        return "CONTROL";
    case HPROF_CMD_EOF:
        return "EOF";
    default:
        return "unknown";
    }
}

const char *command_parser_error_text(enum hprof_cmd_error e)
{
    switch (e) {
    case HPROF_CMD_ERR_NONE:
        return "no error";
    case HPROF_CMD_ERR_UNKNOWN_TAG:
        return "unknown command tag";
    case HPROF_CMD_ERR_TOO_LONG:
        return "command length too large";
    case HPROF_CMD_ERR_SHORT_BODY:
        return "command body too short";
    case HPROF_CMD_ERR_BAD_CUTOFF:
        return "cutoff is not a number between 0 and 1";
    case HPROF_CMD_ERR_BAD_CONTROL:
        return "unknown CONTROL sub option";
    case HPROF_CMD_ERR_BAD_DEPTH:
        return "stack depth out of range";
    case HPROF_CMD_ERR_TRUNCATED:
        return "connection ended inside a command";
    }
    return "unknown error";
}

void command_parser_parser_init(struct hprof_cmd_parser *p)
{
    memset(p, 0, sizeof *p);
    p->state = HPROF_CMD_IN_HEADER;
}

static bool known_tag(uint8_t tag)
{
    return tag >= HPROF_CMD_FORCE_GC && tag <= HPROF_CMD_CONTROL;
}

static enum hprof_cmd_error decode_cutoff(const uint8_t *p, float *out)
{
    float f = get_float(p);
    /* Written so that NaN fails too. */
    if (!(f >= 0.0f && f <= 1.0f))
        return HPROF_CMD_ERR_BAD_CUTOFF;
    *out = f;
    return HPROF_CMD_ERR_NONE;
}

static enum hprof_cmd_error decode_control(const uint8_t *b, uint32_t len, struct hprof_command *c)
{
    if (len < 2)
        return HPROF_CMD_ERR_SHORT_BODY;
    c->control = get_u2(b);
    switch (c->control) {
    case HPROF_CTL_ALLOC_TRACES_ON:
    case HPROF_CTL_ALLOC_TRACES_OFF:
    case HPROF_CTL_CLEAR_CPU_SAMPLES:
        return HPROF_CMD_ERR_NONE;
    case HPROF_CTL_CPU_SAMPLING_ON:
    case HPROF_CTL_CPU_SAMPLING_OFF:
        /* The id is 8 bytes; a body with room for only 4 carries a 4-byte id. */
        if (len >= 10)
            c->thread_id = get_u8(b + 2);
        else if (len >= 6)
            c->thread_id = get_u4(b + 2);
        else
            return HPROF_CMD_ERR_SHORT_BODY;
        return HPROF_CMD_ERR_NONE;
    case HPROF_CTL_SET_DEPTH:
        /* u2 depth; a body with room for 4 bytes carries a u4. */
        if (len >= 6)
            c->depth = get_u4(b + 2);
        else if (len >= 4)
            c->depth = get_u2(b + 2);
        else
            return HPROF_CMD_ERR_SHORT_BODY;
        return c->depth > HPROF_CMD_DEPTH_MAX ? HPROF_CMD_ERR_BAD_DEPTH : HPROF_CMD_ERR_NONE;
    default:
        return HPROF_CMD_ERR_BAD_CONTROL;
    }
}

/* The whole body of a known command has arrived: decode it. */
static enum hprof_cmd_error decode(const struct hprof_cmd_parser *p, struct hprof_command *c)
{
    const uint8_t *b = p->body;
    uint32_t len = p->length;
    switch (c->tag) {
    case HPROF_CMD_ALLOC_SITES:
        if (len < 6)
            return HPROF_CMD_ERR_SHORT_BODY;
        c->flags = get_u2(b) & HPROF_CMD_SITES_FLAGS_KNOWN;
        return decode_cutoff(b + 2, &c->cutoff);
    case HPROF_CMD_CPU_SAMPLES:
        if (len < 6)
            return HPROF_CMD_ERR_SHORT_BODY;
        return decode_cutoff(b + 2, &c->cutoff);
    case HPROF_CMD_CONTROL:
        return decode_control(b, len, c);
    default:
        return HPROF_CMD_ERR_NONE; /* no body; extra bytes are ignored */
    }
}

static void set_result(struct hprof_cmd_parser *p, struct hprof_cmd_result *out,
                       enum hprof_cmd_result_kind kind, enum hprof_cmd_error error)
{
    out->kind = kind;
    out->error = error;
    if (kind == HPROF_CMD_ERROR)
        p->errors++;
    else if (kind == HPROF_CMD_COMMAND)
        p->commands++;
}

/* The current command's body is complete (or empty): produce its result. */
static void finish_command(struct hprof_cmd_parser *p, struct hprof_cmd_result *out)
{
    enum hprof_cmd_error e = decode(p, &out->command);
    set_result(p, out, e == HPROF_CMD_ERR_NONE ? HPROF_CMD_COMMAND : HPROF_CMD_ERROR, e);
    p->state = HPROF_CMD_IN_HEADER;
    p->have = 0;
}

/* The header is complete: check it. Returns true when a result is ready. */
static bool header_done(struct hprof_cmd_parser *p, struct hprof_cmd_result *out)
{
    struct hprof_command *c = &out->command;
    c->tag = p->header[0];
    c->serial = get_u4(p->header + 1);
    p->length = out->length = get_u4(p->header + 5);
    p->have = 0;
    if (p->length > HPROF_CMD_LENGTH_MAX) {
        p->state = HPROF_CMD_STOPPED;
        set_result(p, out, HPROF_CMD_ERROR, HPROF_CMD_ERR_TOO_LONG);
        return true;
    }
    if (!known_tag(c->tag)) {
        p->state = p->length > 0 ? HPROF_CMD_SKIPPING : HPROF_CMD_IN_HEADER;
        set_result(p, out, HPROF_CMD_ERROR, HPROF_CMD_ERR_UNKNOWN_TAG);
        return true;
    }
    if (p->length == 0) {
        finish_command(p, out);
        return true;
    }
    p->state = HPROF_CMD_IN_BODY;
    return false;
}

size_t command_parser_parse(struct hprof_cmd_parser *p, const uint8_t *buf, size_t n,
                            struct hprof_cmd_result *out)
{
    memset(out, 0, sizeof *out);
    out->command.tag = p->header[0];
    out->command.serial = get_u4(p->header + 1);
    out->length = p->length;
    size_t used = 0;
    while (used < n) {
        switch (p->state) {
        case HPROF_CMD_STOPPED:
            set_result(p, out, HPROF_CMD_END, HPROF_CMD_ERR_NONE);
            return n;
        case HPROF_CMD_IN_HEADER:
            if (p->have == 0 && buf[used] == HPROF_CMD_EOF) {
                p->state = HPROF_CMD_STOPPED;
                memset(&out->command, 0, sizeof out->command);
                out->command.tag = HPROF_CMD_EOF;
                out->length = 0;
                set_result(p, out, HPROF_CMD_END, HPROF_CMD_ERR_NONE);
                return n; /* nothing after EOF is read */
            }
            p->header[p->have++] = buf[used++];
            if (p->have == HPROF_CMD_HEADER_SIZE && header_done(p, out))
                return used;
            break;
        case HPROF_CMD_IN_BODY:
        case HPROF_CMD_SKIPPING: {
            uint32_t want = p->length - p->have;
            size_t take = n - used < want ? n - used : want;
            if (p->state == HPROF_CMD_IN_BODY && p->have < HPROF_CMD_BODY_KEEP) {
                size_t keep = HPROF_CMD_BODY_KEEP - p->have;
                memcpy(p->body + p->have, buf + used, take < keep ? take : keep);
            }
            p->have += (uint32_t)take;
            used += take;
            if (p->have == p->length) {
                if (p->state == HPROF_CMD_SKIPPING) {
                    p->state = HPROF_CMD_IN_HEADER;
                    p->have = 0;
                } else {
                    finish_command(p, out);
                    return used;
                }
            }
            break;
        }
        }
    }
    if (p->state == HPROF_CMD_STOPPED)
        set_result(p, out, HPROF_CMD_END, HPROF_CMD_ERR_NONE);
    else
        set_result(p, out, HPROF_CMD_NEED_MORE, HPROF_CMD_ERR_NONE);
    return used;
}

bool command_parser_parser_finish(struct hprof_cmd_parser *p, struct hprof_cmd_result *out)
{
    memset(out, 0, sizeof *out);
    bool inside = (p->state == HPROF_CMD_IN_HEADER && p->have > 0) ||
                  p->state == HPROF_CMD_IN_BODY || p->state == HPROF_CMD_SKIPPING;
    if (inside) {
        out->command.tag = p->header[0];
        if (p->state != HPROF_CMD_IN_HEADER) {
            out->command.serial = get_u4(p->header + 1);
            out->length = p->length;
        }
        set_result(p, out, HPROF_CMD_ERROR, HPROF_CMD_ERR_TRUNCATED);
    }
    p->state = HPROF_CMD_STOPPED;
    return inside;
}

size_t command_parser_encode(const struct hprof_command *c, uint8_t *buf, size_t cap)
{
    uint8_t body[10];
    uint8_t *e = body;
    switch (c->tag) {
    case HPROF_CMD_EOF:
        if (cap < 1)
            return 0;
        buf[0] = HPROF_CMD_EOF;
        return 1;
    case HPROF_CMD_FORCE_GC:
    case HPROF_CMD_DUMP_HEAP:
    case HPROF_CMD_HEAP_SUMMARY:
    case HPROF_CMD_EXIT_VM:
    case HPROF_CMD_DUMP_TRACES:
        break;
    case HPROF_CMD_ALLOC_SITES:
    case HPROF_CMD_CPU_SAMPLES: {
        uint32_t bits;
        memcpy(&bits, &c->cutoff, sizeof bits);
        e = put_u2(e, c->tag == HPROF_CMD_ALLOC_SITES ? c->flags : 0);
        e = put_u4(e, bits);
        break;
    }
    case HPROF_CMD_CONTROL:
        e = put_u2(e, c->control);
        if (c->control == HPROF_CTL_CPU_SAMPLING_ON || c->control == HPROF_CTL_CPU_SAMPLING_OFF)
            e = put_u8(e, c->thread_id);
        else if (c->control == HPROF_CTL_SET_DEPTH)
            e = put_u2(e, (uint16_t)(c->depth > 0xFFFF ? 0xFFFF : c->depth));
        break;
    default:
        return 0;
    }
    size_t blen = (size_t)(e - body);
    if (cap < HPROF_CMD_HEADER_SIZE + blen)
        return 0;
    buf[0] = c->tag;
    put_u4(buf + 1, c->serial);
    put_u4(buf + 5, (uint32_t)blen);
    memcpy(buf + HPROF_CMD_HEADER_SIZE, body, blen);
    return HPROF_CMD_HEADER_SIZE + blen;
}

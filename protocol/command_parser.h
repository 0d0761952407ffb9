/* The command protocol of net=host:port: what a front end sends back on the socket the agent
 * writes its profile to (doc/socket.md). Pure C, no JVMTI: the agent's listener parses with
 * it, tools/hprof-listen encodes with it, and both are tested without a JVM.
 *
 * Wire form of one command, big-endian:
 *   u1 tag, u4 serial, u4 length, then length bytes of body
 * except EOF (0xFF), which ends the command stream at its tag byte.
 *
 * The bytes come from an untrusted peer. The parser is a state machine fed any number of
 * bytes at a time (one at a time works), keeps at most HPROF_CMD_BODY_KEEP body bytes, never
 * allocates, and turns every malformed command into one error result. */
#ifndef HPROF_COMMAND_PARSER_H
#define HPROF_COMMAND_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hprof_cmd_tag {
    HPROF_CMD_FORCE_GC = 0x01,
    HPROF_CMD_DUMP_HEAP = 0x02,
    HPROF_CMD_ALLOC_SITES = 0x03, /* u2 flags, u4 cutoff (IEEE 754 single) */
    HPROF_CMD_HEAP_SUMMARY = 0x04,
    HPROF_CMD_EXIT_VM = 0x05,
    HPROF_CMD_DUMP_TRACES = 0x06,
    HPROF_CMD_CPU_SAMPLES = 0x07, /* u2 ignored, u4 cutoff */
    HPROF_CMD_CONTROL = 0x08,     /* u2 sub option, then its argument */
    HPROF_CMD_EOF = 0xFF,
};

/* CONTROL sub options (the same numbers as enum control_kind in agent/profile.h). */
enum hprof_cmd_control {
    HPROF_CTL_ALLOC_TRACES_ON = 1,
    HPROF_CTL_ALLOC_TRACES_OFF = 2,
    HPROF_CTL_CPU_SAMPLING_ON = 3,  /* u8 thread object id, 0 = all threads (u4 accepted) */
    HPROF_CTL_CPU_SAMPLING_OFF = 4, /* same */
    HPROF_CTL_CLEAR_CPU_SAMPLES = 5,
    HPROF_CTL_SET_DEPTH = 6, /* u2 depth (u4 accepted) */
};

/* ALLOC SITES flag bits the agent knows (the same values as HPROF_SITES_* in writer.h);
 * other bits are cleared. */
#define HPROF_CMD_SITES_FLAGS_KNOWN 0x7u

/* A body longer than this is not a command of this protocol: the stream is taken to be
 * garbage and nothing after it is read as a command. */
#define HPROF_CMD_LENGTH_MAX 65536u
/* Body bytes kept for decoding (the longest body, CONTROL with a u8 id, is 10); the rest of
 * a longer body is skipped. */
#define HPROF_CMD_BODY_KEEP 16u
/* The deepest stack CONTROL may set (the depth= option's bound). */
#define HPROF_CMD_DEPTH_MAX 1024u
/* Header bytes: tag, serial, length. */
#define HPROF_CMD_HEADER_SIZE 9u
/* Longest encoding command_parser_encode writes. */
#define HPROF_CMD_ENCODED_MAX (HPROF_CMD_HEADER_SIZE + 10u)

struct hprof_command {
    uint8_t tag; /* enum hprof_cmd_tag */
    uint32_t serial;
    uint16_t flags;     /* ALLOC SITES, known bits only */
    float cutoff;       /* ALLOC SITES, CPU SAMPLES: 0.0 .. 1.0 */
    uint16_t control;   /* CONTROL: enum hprof_cmd_control */
    uint64_t thread_id; /* CONTROL 3/4: a thread object id (its object tag), 0 = all */
    uint32_t depth;     /* CONTROL 6: 0 .. HPROF_CMD_DEPTH_MAX */
};

enum hprof_cmd_error {
    HPROF_CMD_ERR_NONE = 0,
    HPROF_CMD_ERR_UNKNOWN_TAG, /* body skipped, parsing goes on */
    HPROF_CMD_ERR_TOO_LONG,    /* length > HPROF_CMD_LENGTH_MAX: no more commands */
    HPROF_CMD_ERR_SHORT_BODY,  /* a body too short for its command: skipped */
    HPROF_CMD_ERR_BAD_CUTOFF,  /* NaN, infinite, or outside 0..1 */
    HPROF_CMD_ERR_BAD_CONTROL, /* unknown CONTROL sub option */
    HPROF_CMD_ERR_BAD_DEPTH,   /* depth > HPROF_CMD_DEPTH_MAX */
    HPROF_CMD_ERR_TRUNCATED,   /* the stream ended inside a command */
};

enum hprof_cmd_result_kind {
    HPROF_CMD_NEED_MORE, /* all input consumed, nothing complete yet */
    HPROF_CMD_COMMAND,   /* result.command holds a valid command */
    HPROF_CMD_ERROR,     /* result.error; result.command.tag/serial say which command */
    HPROF_CMD_END,       /* EOF, or after TOO_LONG: nothing more will be parsed */
};

struct hprof_cmd_result {
    enum hprof_cmd_result_kind kind;
    enum hprof_cmd_error error;
    uint32_t length; /* the command's length field */
    struct hprof_command command;
};

enum hprof_cmd_state {
    HPROF_CMD_IN_HEADER,
    HPROF_CMD_IN_BODY,
    HPROF_CMD_SKIPPING, /* the rest of a body already reported on */
    HPROF_CMD_STOPPED,  /* after EOF or a fatal error: input is consumed and ignored */
};

struct hprof_cmd_parser {
    enum hprof_cmd_state state;
    uint8_t header[HPROF_CMD_HEADER_SIZE];
    uint8_t body[HPROF_CMD_BODY_KEEP];
    uint32_t have;             /* bytes of the current header or body seen so far */
    uint32_t length;           /* body length of the current command */
    uint64_t commands, errors; /* totals, for messages */
};

void command_parser_parser_init(struct hprof_cmd_parser *p);

/* Consumes input from buf[0..n) up to the end of the next complete command (or error) and
 * returns how many bytes it consumed; *out says what was found. Call again with the rest
 * until it has consumed everything. After HPROF_CMD_END every call consumes all its input
 * and returns END again. */
size_t command_parser_parse(struct hprof_cmd_parser *p, const uint8_t *buf, size_t n,
                            struct hprof_cmd_result *out);

/* The stream ended (peer closed). Returns true and fills *out with a TRUNCATED error when
 * it ended inside a command. */
bool command_parser_parser_finish(struct hprof_cmd_parser *p, struct hprof_cmd_result *out);

/* Writes the wire form of c into buf (cap bytes: HPROF_CMD_ENCODED_MAX is enough) and
 * returns its length, or 0 when it does not fit or c is not a known command. CONTROL
 * depth is written as u2, thread ids as u8. */
size_t command_parser_encode(const struct hprof_command *c, uint8_t *buf, size_t cap);

/* "ALLOC SITES", "CONTROL", ... or "unknown" for a tag. */
const char *command_parser_name(uint8_t tag);
/* A short description of an error ("unknown command tag"). */
const char *command_parser_error_text(enum hprof_cmd_error e);

#endif

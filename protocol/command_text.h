/* The text form of commands that tools/hprof-listen reads from its command line and stdin
 * ("sites 0.01", "control cpu on 0x1234", ...; doc/socket.md lists them). Pure C. */
#ifndef HPROF_COMMAND_TEXT_H
#define HPROF_COMMAND_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "command_parser.h"
#include "hprof_error.h"

/* The cutoff "sites" and "samples" send when none is given: the cutoff= option's default. */
#define HPROF_TEXT_DEFAULT_CUTOFF 0.0001f
#define HPROF_TEXT_RAW_MAX 1024

enum hprof_text_kind {
    HPROF_TEXT_NOTHING, /* blank line or # comment */
    HPROF_TEXT_SEND,    /* send command (the caller sets its serial) */
    HPROF_TEXT_RAW,     /* send raw[0..nraw) as they are (testing a peer's parser) */
    HPROF_TEXT_SLEEP,   /* wait sleep_ms before the next command; nothing is sent */
    HPROF_TEXT_HELP,    /* "help": show command_text_help() */
};

struct hprof_text_command {
    enum hprof_text_kind kind;
    struct hprof_command command;
    uint32_t sleep_ms;
    size_t nraw;
    uint8_t raw[HPROF_TEXT_RAW_MAX];
};

/* Parses one line. Returns hprof_ok(), or an error whose one line says what is wrong (the
 * caller reports it). */
struct hprof_error command_text_parse(const char *line, struct hprof_text_command *out);

/* The help text listing the commands (ends with a newline). */
const char *command_text_help(void);

#endif

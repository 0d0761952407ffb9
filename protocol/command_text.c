/* Text commands -> struct hprof_command (see command_text.h). Words are separated by blanks;
 * numbers are checked whole ("0.5x" is an error, not 0.5). */
#include "command_text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 8
#define MAX_LINE 4096

static const char help_text[] =
    "Commands (one per line or per -c argument):\n"
    "  gc                               FORCE GC\n"
    "  dump                             DUMP HEAP (heap=dump or heap=all)\n"
    "  sites [CUTOFF] [incremental] [alloc] [force-gc]\n"
    "                                   ALLOC SITES (heap=sites or heap=all); CUTOFF 0..1,\n"
    "                                   default 0.0001; alloc: order by allocated bytes\n"
    "  summary                          HEAP SUMMARY\n"
    "  traces                           DUMP TRACES\n"
    "  samples [CUTOFF]                 CPU SAMPLES (cpu=samples or cpu=times)\n"
    "  control alloc on|off             CONTROL 1/2: allocation traces on/off\n"
    "  control cpu on|off [THREAD_ID]   CONTROL 3/4: CPU sampling on/off for one thread\n"
    "                                   object id (decimal or 0x hex), default 0 = all\n"
    "  control clear                    CONTROL 5: clear the CPU samples\n"
    "  control depth N                  CONTROL 6: stack depth 0..1024 from now on\n"
    "  exit                             EXIT THE VM\n"
    "  eof                              EOF: the agent stops reading commands\n"
    "  raw HEX...                       send these bytes as they are (testing)\n"
    "  sleep SECONDS                    wait before the next command (nothing is sent)\n"
    "  help                             this list\n"
    "  # ...                            a comment\n";

const char *command_text_help(void)
{
    return help_text;
}

static bool parse_float01(const char *s, float *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end || errno || !(d >= 0.0 && d <= 1.0))
        return false;
    *out = (float)d;
    return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (*s == '-' || *s == '+' || isspace((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end || errno)
        return false;
    *out = v;
    return true;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* "raw" arguments: hex digits; blanks between them are ignored ("01 00000000 00000000"). */
static struct hprof_error parse_raw(const char *text, struct hprof_text_command *out)
{
    int half = -1;
    for (const char *p = text; *p; p++) {
        if (isspace((unsigned char)*p))
            continue;
        int v = hex_value((unsigned char)*p);
        if (v < 0)
            return hprof_errorf("raw: '%c' is not a hex digit", *p);
        if (half < 0) {
            half = v;
            continue;
        }
        if (out->nraw == HPROF_TEXT_RAW_MAX)
            return hprof_errorf("raw: more than %d bytes", HPROF_TEXT_RAW_MAX);
        out->raw[out->nraw++] = (uint8_t)(half << 4 | v);
        half = -1;
    }
    if (half >= 0)
        return hprof_errorf("raw: odd number of hex digits");
    if (out->nraw == 0)
        return hprof_errorf("raw: no bytes given");
    out->kind = HPROF_TEXT_RAW;
    return hprof_ok();
}

static struct hprof_error parse_sites(char **w, int n, struct hprof_command *c)
{
    c->tag = HPROF_CMD_ALLOC_SITES;
    c->cutoff = HPROF_TEXT_DEFAULT_CUTOFF;
    for (int i = 1; i < n; i++) {
        if (i == 1 && parse_float01(w[i], &c->cutoff))
            continue;
        if (strcmp(w[i], "incremental") == 0)
            c->flags |= 0x1;
        else if (strcmp(w[i], "alloc") == 0)
            c->flags |= 0x2;
        else if (strcmp(w[i], "force-gc") == 0)
            c->flags |= 0x4;
        else
            return hprof_errorf(
                "sites: '%s' is neither a cutoff (0..1) nor incremental|alloc|force-gc", w[i]);
    }
    return hprof_ok();
}

static bool parse_on_off(const char *w, bool *on)
{
    if (strcmp(w, "on") == 0)
        *on = true;
    else if (strcmp(w, "off") == 0)
        *on = false;
    else
        return false;
    return true;
}

static struct hprof_error parse_control(char **w, int n, struct hprof_command *c)
{
    c->tag = HPROF_CMD_CONTROL;
    bool on = false;
    if (n >= 2 && strcmp(w[1], "alloc") == 0) {
        if (n != 3 || !parse_on_off(w[2], &on))
            return hprof_errorf("usage: control alloc on|off");
        c->control = on ? HPROF_CTL_ALLOC_TRACES_ON : HPROF_CTL_ALLOC_TRACES_OFF;
        return hprof_ok();
    }
    if (n >= 2 && strcmp(w[1], "cpu") == 0) {
        if (n < 3 || n > 4 || !parse_on_off(w[2], &on) ||
            (n == 4 && !parse_u64(w[3], &c->thread_id)))
            return hprof_errorf("usage: control cpu on|off [THREAD_ID]");
        c->control = on ? HPROF_CTL_CPU_SAMPLING_ON : HPROF_CTL_CPU_SAMPLING_OFF;
        return hprof_ok();
    }
    if (n == 2 && strcmp(w[1], "clear") == 0) {
        c->control = HPROF_CTL_CLEAR_CPU_SAMPLES;
        return hprof_ok();
    }
    if (n >= 2 && strcmp(w[1], "depth") == 0) {
        uint64_t d = 0;
        if (n != 3 || !parse_u64(w[2], &d) || d > HPROF_CMD_DEPTH_MAX)
            return hprof_errorf("usage: control depth N (0..%u)", HPROF_CMD_DEPTH_MAX);
        c->control = HPROF_CTL_SET_DEPTH;
        c->depth = (uint32_t)d;
        return hprof_ok();
    }
    return hprof_errorf("usage: control alloc on|off | cpu on|off [ID] | clear | depth N");
}

struct hprof_error command_text_parse(const char *line, struct hprof_text_command *out)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(line);
    if (len >= MAX_LINE)
        return hprof_errorf("command line longer than %d characters", MAX_LINE - 1);
    char copy[MAX_LINE];
    memcpy(copy, line, len + 1);
    char *hash = strchr(copy, '#');
    if (hash)
        *hash = '\0';

    /* raw: every hex digit after the word, blanks anywhere (no word limit). */
    char *p = copy;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "raw", 3) == 0 && (p[3] == '\0' || isspace((unsigned char)p[3])))
        return parse_raw(p + 3, out);

    char *words[MAX_WORDS];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_WORDS)
            return hprof_errorf("too many words in '%s'", line);
        words[n++] = t;
    }
    if (n == 0) {
        out->kind = HPROF_TEXT_NOTHING;
        return hprof_ok();
    }
    struct hprof_command *c = &out->command;
    out->kind = HPROF_TEXT_SEND;
    const char *w0 = words[0];
    if (strcmp(w0, "help") == 0) {
        out->kind = HPROF_TEXT_HELP;
        return hprof_ok();
    }
    if (strcmp(w0, "sleep") == 0) {
        char *end;
        double s = n == 2 ? strtod(words[1], &end) : -1;
        if (n != 2 || *end || !(s >= 0 && s <= 3600))
            return hprof_errorf("usage: sleep SECONDS (0..3600)");
        out->kind = HPROF_TEXT_SLEEP;
        out->sleep_ms = (uint32_t)lround(s * 1000);
        return hprof_ok();
    }
    if (strcmp(w0, "sites") == 0)
        return parse_sites(words, n, c);
    if (strcmp(w0, "samples") == 0) {
        c->tag = HPROF_CMD_CPU_SAMPLES;
        c->cutoff = HPROF_TEXT_DEFAULT_CUTOFF;
        if (n > 2 || (n == 2 && !parse_float01(words[1], &c->cutoff)))
            return hprof_errorf("usage: samples [CUTOFF] (0..1)");
        return hprof_ok();
    }
    if (strcmp(w0, "control") == 0)
        return parse_control(words, n, c);

    static const struct {
        const char *word;
        uint8_t tag;
    } plain[] = {
        {"gc", HPROF_CMD_FORCE_GC},          {"dump", HPROF_CMD_DUMP_HEAP},
        {"summary", HPROF_CMD_HEAP_SUMMARY}, {"exit", HPROF_CMD_EXIT_VM},
        {"traces", HPROF_CMD_DUMP_TRACES},   {"eof", HPROF_CMD_EOF},
    };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        if (strcmp(w0, plain[i].word) == 0) {
            if (n != 1)
                return hprof_errorf("%s takes no arguments", w0);
            c->tag = plain[i].tag;
            return hprof_ok();
        }
    }
    return hprof_errorf("unknown command '%s' (try: help)", w0);
}

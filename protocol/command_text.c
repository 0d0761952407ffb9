/* Text commands -> struct hprof_command (see command_text.h). Words are separated by blanks;
 * numbers are checked whole ("0.5x" is an error, not 0.5). */
#include "command_text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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

const char *hprof_text_help(void)
{
    return help_text;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
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
static int parse_raw(const char *text, struct hprof_text_command *out, char *err, size_t errlen)
{
    int half = -1;
    for (const char *p = text; *p; p++) {
        if (isspace((unsigned char)*p))
            continue;
        int v = hex_value((unsigned char)*p);
        if (v < 0)
            return fail(err, errlen, "raw: '%c' is not a hex digit", *p);
        if (half < 0) {
            half = v;
            continue;
        }
        if (out->nraw == HPROF_TEXT_RAW_MAX)
            return fail(err, errlen, "raw: more than %d bytes", HPROF_TEXT_RAW_MAX);
        out->raw[out->nraw++] = (uint8_t)(half << 4 | v);
        half = -1;
    }
    if (half >= 0)
        return fail(err, errlen, "raw: odd number of hex digits");
    if (out->nraw == 0)
        return fail(err, errlen, "raw: no bytes given");
    out->kind = HPROF_TEXT_RAW;
    return 0;
}

static int parse_sites(char **w, int n, struct hprof_command *c, char *err, size_t errlen)
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
            return fail(err, errlen,
                        "sites: '%s' is neither a cutoff (0..1) nor incremental|alloc|force-gc",
                        w[i]);
    }
    return 0;
}

static int parse_on_off(const char *w, bool *on)
{
    if (strcmp(w, "on") == 0)
        *on = true;
    else if (strcmp(w, "off") == 0)
        *on = false;
    else
        return -1;
    return 0;
}

static int parse_control(char **w, int n, struct hprof_command *c, char *err, size_t errlen)
{
    c->tag = HPROF_CMD_CONTROL;
    bool on = false;
    if (n >= 2 && strcmp(w[1], "alloc") == 0) {
        if (n != 3 || parse_on_off(w[2], &on) != 0)
            return fail(err, errlen, "usage: control alloc on|off");
        c->control = on ? HPROF_CTL_ALLOC_TRACES_ON : HPROF_CTL_ALLOC_TRACES_OFF;
        return 0;
    }
    if (n >= 2 && strcmp(w[1], "cpu") == 0) {
        if (n < 3 || n > 4 || parse_on_off(w[2], &on) != 0 ||
            (n == 4 && !parse_u64(w[3], &c->thread_id)))
            return fail(err, errlen, "usage: control cpu on|off [THREAD_ID]");
        c->control = on ? HPROF_CTL_CPU_SAMPLING_ON : HPROF_CTL_CPU_SAMPLING_OFF;
        return 0;
    }
    if (n == 2 && strcmp(w[1], "clear") == 0) {
        c->control = HPROF_CTL_CLEAR_CPU_SAMPLES;
        return 0;
    }
    if (n >= 2 && strcmp(w[1], "depth") == 0) {
        uint64_t d = 0;
        if (n != 3 || !parse_u64(w[2], &d) || d > HPROF_CMD_DEPTH_MAX)
            return fail(err, errlen, "usage: control depth N (0..%u)", HPROF_CMD_DEPTH_MAX);
        c->control = HPROF_CTL_SET_DEPTH;
        c->depth = (uint32_t)d;
        return 0;
    }
    return fail(err, errlen, "usage: control alloc on|off | cpu on|off [ID] | clear | depth N");
}

int hprof_text_parse(const char *line, struct hprof_text_command *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(line);
    if (len >= MAX_LINE)
        return fail(err, errlen, "command line longer than %d characters", MAX_LINE - 1);
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
        return parse_raw(p + 3, out, err, errlen);

    char *words[MAX_WORDS];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_WORDS)
            return fail(err, errlen, "too many words in '%s'", line);
        words[n++] = t;
    }
    if (n == 0) {
        out->kind = HPROF_TEXT_NOTHING;
        return 0;
    }
    struct hprof_command *c = &out->command;
    out->kind = HPROF_TEXT_SEND;
    const char *w0 = words[0];
    if (strcmp(w0, "help") == 0) {
        out->kind = HPROF_TEXT_HELP;
        return 0;
    }
    if (strcmp(w0, "sleep") == 0) {
        char *end;
        double s = n == 2 ? strtod(words[1], &end) : -1;
        if (n != 2 || *end || !(s >= 0 && s <= 3600))
            return fail(err, errlen, "usage: sleep SECONDS (0..3600)");
        out->kind = HPROF_TEXT_SLEEP;
        out->sleep_ms = (uint32_t)lround(s * 1000);
        return 0;
    }
    if (strcmp(w0, "sites") == 0)
        return parse_sites(words, n, c, err, errlen);
    if (strcmp(w0, "samples") == 0) {
        c->tag = HPROF_CMD_CPU_SAMPLES;
        c->cutoff = HPROF_TEXT_DEFAULT_CUTOFF;
        if (n > 2 || (n == 2 && !parse_float01(words[1], &c->cutoff)))
            return fail(err, errlen, "usage: samples [CUTOFF] (0..1)");
        return 0;
    }
    if (strcmp(w0, "control") == 0)
        return parse_control(words, n, c, err, errlen);

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
                return fail(err, errlen, "%s takes no arguments", w0);
            c->tag = plain[i].tag;
            return 0;
        }
    }
    return fail(err, errlen, "unknown command '%s' (try: help)", w0);
}

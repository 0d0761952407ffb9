/* The output file's name: the default per format, and with force=n a name that does not
 * exist yet (doc/options.md, "file" and "force"). */
#include "options.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0; /* "n > k": ".txt" alone is a name */
}

static int put(char *buf, size_t buflen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int put(char *buf, size_t buflen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, buflen, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < buflen ? 0 : -1;
}

int options_output_path(const struct hprof_options *opts, long pid, bool (*exists)(const char *),
                        char *buf, size_t buflen)
{
    if (buf == NULL || buflen == 0)
        return -1;
    const char *name = opts->file;
    if (name == NULL) {
        if (opts->format == HPROF_FORMAT_BINARY)
            name = opts->gzip ? "java.hprof.gz" : "java.hprof";
        else if (opts->format == HPROF_FORMAT_PHD)
            name = "java.phd";
        else if (opts->format == HPROF_FORMAT_CLASSIC)
            name = "java.classic.txt";
        else
            name = "java.hprof.txt";
    }
    if (put(buf, buflen, "%s", name) != 0)
        return -1;
    if (opts->force || exists == NULL || !exists(buf))
        return 0;

    /* Keep the suffix that tells what the file is last, so it still opens with the right
     * tool: java.hprof.txt -> java.hprof.<pid>.txt. */
    const char *suffix = "";
    if ((opts->format == HPROF_FORMAT_ASCII || opts->format == HPROF_FORMAT_CLASSIC) &&
        ends_with(name, ".txt"))
        suffix = ".txt";
    else if (opts->format == HPROF_FORMAT_PHD && ends_with(name, ".phd"))
        suffix = ".phd";
    else if (opts->gzip && ends_with(name, ".gz"))
        suffix = ".gz";
    int stem = (int)(strlen(name) - strlen(suffix));

    if (put(buf, buflen, "%.*s.%ld%s", stem, name, pid, suffix) != 0)
        return -1;
    for (long k = 1; exists(buf); k++) {
        if (k > HPROF_OUTPUT_MAX_K ||
            put(buf, buflen, "%.*s.%ld.%ld%s", stem, name, pid, k, suffix) != 0)
            return -1;
    }
    return 0;
}

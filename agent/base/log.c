#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static bool verbose_messages = true;

void log_set_verbose(bool verbose)
{
    verbose_messages = verbose;
}
bool log_verbose(void)
{
    return verbose_messages;
}

/* One fprintf per line, so lines from several threads do not interleave. */
static void emit(const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "%s%s\n", prefix, line);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("HPROF ERROR: ", fmt, ap);
    va_end(ap);
}

void log_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("HPROF WARNING: ", fmt, ap);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    if (!verbose_messages)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("HPROF: ", fmt, ap);
    va_end(ap);
}

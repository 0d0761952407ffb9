/* hprof_error values: formatting only, no state. */
#include "hprof_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct hprof_error hprof_errorf(const char *fmt, ...)
{
    struct hprof_error e;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.text, sizeof e.text, fmt, ap);
    va_end(ap);
    if (e.text[0] == '\0')
        snprintf(e.text, sizeof e.text, "unknown failure");
    return e;
}

struct hprof_error hprof_error_wrap(const struct hprof_error *cause, const char *fmt, ...)
{
    struct hprof_error e;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e.text, sizeof e.text, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof e.text - 2)
        snprintf(e.text + n, sizeof e.text - (size_t)n, ": %s", cause->text);
    if (e.text[0] == '\0')
        snprintf(e.text, sizeof e.text, "unknown failure");
    return e;
}

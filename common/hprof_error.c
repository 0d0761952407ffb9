/* hprof_error values: formatting only, no state. */
#include "hprof_error.h"

#include <stdarg.h>
#include <stdio.h>

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
    /* Truncation is wanted here: the message is cut to fit, as hprof_errorf's is. */
    size_t used = (size_t)n < sizeof e.text ? (size_t)n : sizeof e.text - 1;
    const char *sep = ": ";
    for (size_t i = 0; sep[i] != '\0' && used < sizeof e.text - 1; i++)
        e.text[used++] = sep[i];
    for (size_t i = 0; cause->text[i] != '\0' && used < sizeof e.text - 1; i++)
        e.text[used++] = cause->text[i];
    e.text[used] = '\0';
    if (e.text[0] == '\0')
        snprintf(e.text, sizeof e.text, "unknown failure");
    return e;
}

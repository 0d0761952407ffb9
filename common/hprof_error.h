/* The one error convention of start-up and set-up paths (options, output, sink, profiles' start):
 * a function that can fail returns a struct hprof_error. Success is an empty text (hprof_ok());
 * a failure carries one line that says what failed and why, without the "HPROF ERROR:" prefix.
 * The callee never logs it: the caller that knows what is lost (the VM stops, a profile is off, a
 * dump is skipped) logs it once, with that consequence. Values, as async-profiler's Error: cheap to
 * return and to pass up, no allocation, no global errno-like state. */
#ifndef HPROF_ERROR_H
#define HPROF_ERROR_H

#include <stdbool.h>

/* 512: the longest start-up message (an unknown option, cut to 64 bytes, with every allowed
 * name) fits whole. */
struct hprof_error {
    char text[512];
};

static inline struct hprof_error hprof_ok(void)
{
    struct hprof_error e;
    e.text[0] = '\0';
    return e;
}

static inline bool hprof_failed(const struct hprof_error *e)
{
    return e->text[0] != '\0';
}

/* A failure whose text is the formatted message (cut to fit, never empty). */
struct hprof_error hprof_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A failure that says what the caller was doing before the callee's reason:
 * "opening java.hprof: Permission denied". */
struct hprof_error hprof_error_wrap(const struct hprof_error *cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

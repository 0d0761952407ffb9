/* Messages to stderr, each one line starting "HPROF ERROR:", "HPROF WARNING:" or "HPROF:". */
#ifndef HPROF_LOG_H
#define HPROF_LOG_H

#include <stdbool.h>

void log_set_verbose(bool verbose);
bool log_verbose(void);
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only with verbose=y. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

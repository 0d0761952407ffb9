/* Helpers several Check unit tests share: capturing what the code under test writes on stderr,
 * counting substrings, reading a whole file. They fail the running test on errors. */
#ifndef HPROF_CHECK_HELPERS_H
#define HPROF_CHECK_HELPERS_H

#include <stddef.h>
#include <stdint.h>

/* Redirects fd 2 into a temporary file until capture_end, which returns what was written
 * (up to 64 KiB, NUL-terminated; free it). Not nested. */
void capture_begin(void);
char *capture_end(void);

/* How many times needle occurs in hay (overlapping occurrences count). */
int count_of(const char *hay, const char *needle);

/* The whole file (malloc'ed, one spare byte at the end), its size in *len. */
uint8_t *read_file(const char *path, size_t *len);

#endif

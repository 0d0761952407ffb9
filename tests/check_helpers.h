/* Helpers several Check unit tests share: running a suite, a scratch directory per test,
 * capturing what the code under test writes on stderr, counting substrings, reading and writing
 * whole files. They fail the running test on errors. */
#ifndef HPROF_CHECK_HELPERS_H
#define HPROF_CHECK_HELPERS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

/* Runs every test of s and frees it: main()'s exit status, EXIT_SUCCESS when none failed. */
int run_suite(Suite *s);

/* Adds to s a test case called name holding tests[0..n) in that order, with a timeout of
 * timeout_s seconds (0 keeps Check's default); returned for fixtures and loop tests. */
TCase *suite_add_tests(Suite *s, const char *name, int timeout_s, const TTest *const *tests,
                       size_t n);

/* main() of a suite of one test case: suite_add_tests then run_suite. */
int run_tests(const char *suite, const char *name, int timeout_s, const TTest *const *tests,
              size_t n);

/* The tests and their count, for suite_add_tests and run_tests. */
#define TESTS(...)                                                                                 \
    (const TTest *const[]){__VA_ARGS__},                                                           \
        sizeof((const TTest *const[]){__VA_ARGS__}) / sizeof(const TTest *)

/* A fresh $TMPDIR/<prefix>.XXXXXX (call from a checked fixture's setup) and its removal with
 * all it holds (from the teardown). scratch_path() is name inside it; each result stays valid for
 * the next 7 calls. */
void scratch_dir_make(const char *prefix);
void scratch_dir_remove(void);
const char *scratch_path(const char *name);

/* Redirects fd 2 into a temporary file until capture_end, which returns what was written
 * (up to 64 KiB, NUL-terminated; free it). Not nested. */
void capture_begin(void);
char *capture_end(void);

/* How many times needle occurs in hay (overlapping occurrences count). */
int count_of(const char *hay, const char *needle);

/* The whole file (malloc'ed, one spare byte at the end), its size in *len. */
uint8_t *read_file(const char *path, size_t *len);

/* Writes text to path (created or truncated). */
void write_text_file(const char *path, const char *text);

#endif

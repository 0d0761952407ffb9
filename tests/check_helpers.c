#include "check_helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int run_suite(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

TCase *suite_add_tests(Suite *s, const char *name, int timeout_s, const TTest *const *tests,
                       size_t n)
{
    TCase *tc = tcase_create(name);
    if (timeout_s > 0)
        tcase_set_timeout(tc, timeout_s);
    for (size_t i = 0; i < n; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return tc;
}

int run_tests(const char *suite, const char *name, int timeout_s, const TTest *const *tests,
              size_t n)
{
    Suite *s = suite_create(suite);
    suite_add_tests(s, name, timeout_s, tests, n);
    return run_suite(s);
}

static char tmpdir[256];

void scratch_dir_make(const char *prefix)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             prefix);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

void scratch_dir_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

const char *scratch_path(const char *name)
{
    static char buf[8][400];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

static int saved_stderr = -1;
static char capture_path[64];

void capture_begin(void)
{
    fflush(stderr);
    strcpy(capture_path, "/tmp/hprof-test-stderr-XXXXXX");
    int fd = mkstemp(capture_path);
    ck_assert_int_ge(fd, 0);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(capture_path, "r");
    ck_assert_ptr_nonnull(f);
    char *text = calloc(1, 65536);
    size_t n = fread(text, 1, 65535, f);
    text[n] = 0;
    fclose(f);
    unlink(capture_path);
    return text;
}

int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return d;
}

void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

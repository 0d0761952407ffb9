/*
 * test_diff.c: hprof-diff's comparison (tools/diff/) and command line on small hand-written
 * profiles with known numbers: share and count judgement with each threshold, the z test,
 * include/exclude, the rules file, the outputs, exit statuses. Runs under ASan and UBSan.
 * The real-run tests are tests/test_diff_runs.sh.
 */
#include "check_helpers.h"
#include "diff.h"

#include <check.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hprof_diff_main(int argc, char **argv);

static void setup(void)
{
    scratch_dir_make("test_diff");
}

static void teardown(void)
{
    scratch_dir_remove();
}

/* An ascii cpu=samples profile: main -> a (na samples), main -> b (nb samples); the lambda's
 * class carries a per-run address. */
static const char *cpu_file(const char *name, unsigned na, unsigned nb, const char *addr)
{
    char text[2048];
    snprintf(text, sizeof text,
             "JAVA PROFILE 1.0.1, created Tue Nov 24 15:24:29 2026\n--------\n\n"
             "TRACE 300001:\n\tA.a(A.java:5)\n\tA$$Lambda$1.%s.run(<Unknown Source>)\n"
             "\tA.main(A.java:1)\n"
             "TRACE 300002:\n\tA.b(A.java:7)\n\tA.main(A.java:2)\n"
             "CPU SAMPLES BEGIN (total = %u) Tue Nov 24 15:24:29 2026\n"
             "rank   self  accum   count trace method\n"
             "   1 50.00%% 50.00%% %7u 300001 A.a\n"
             "   2 50.00%% 100.00%% %7u 300002 A.b\n"
             "CPU SAMPLES END\n",
             addr, na + nb, na, nb);
    const char *p = scratch_path(name);
    write_text_file(p, text);
    return p;
}

static int run(int argc, const char **argv)
{
    optind = 0; /* getopt_long starts over */
    fflush(stdout);
    return hprof_diff_main(argc, (char **)argv);
}

static struct diff_table *cpu_table(const char *b, const char *n, struct diff_thresholds *th,
                                    const struct diff_patterns *pat)
{
    char err[512];
    struct hprof_profile *bp = hprof_profile_load(b, NULL, err, sizeof err);
    struct hprof_profile *np = hprof_profile_load(n, NULL, err, sizeof err);
    ck_assert_msg(bp && np, "%s", err);
    struct diff_keys keys = {false, 0};
    struct diff_table *t = diff_table_build(DK_CPU, bp, np, &keys);
    struct diff_patterns none = {0};
    diff_judge(t, th, pat ? pat : &none);
    hprof_profile_free(bp);
    hprof_profile_free(np);
    return t;
}

static const struct diff_entry *find(const struct diff_table *t, enum diff_group g, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].group == g && strcmp(t->e[i].key, key) == 0)
            return &t->e[i];
    ck_abort_msg("no entry %s", key);
    return NULL;
}

START_TEST(shares_and_z)
{
    struct diff_thresholds th;
    diff_thresholds_default(DK_CPU, &th);
    /* 40% -> 46% of 1000 samples: +15%, +6 points, but z = 2.7 < 3 */
    struct diff_table *t = cpu_table(cpu_file("a", 400, 600, "0x0000000801001200"),
                                     cpu_file("b", 460, 540, "0x00007f0000001000"), &th, NULL);
    ck_assert_int_eq(t->mode, DM_SHARE);
    ck_assert(t->sampled);
    const struct diff_entry *e = find(t, DG_TOTAL, "A.a");
    ck_assert_double_eq_tol(e->base_share[0], 0.40, 1e-12);
    ck_assert_double_eq_tol(e->new_share[0], 0.46, 1e-12);
    double p = 0.43, z = 0.06 / sqrt(p * (1 - p) * (2.0 / 1000));
    ck_assert_double_eq_tol(e->z[0], z, 1e-9);
    ck_assert_int_eq(e->verdict, DV_SAME);
    ck_assert_int_eq(t->regressions, 0);
    /* the lambda's address is not part of the key: one stack in both runs */
    const struct diff_entry *s = find(t, DG_STACK, "A.main;A$$Lambda$1.run;A.a");
    ck_assert(s->in_base && s->in_new);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->base[0], 400);
    ck_assert_int_eq(find(t, DG_TOTAL, "A.main")->new_[0], 1000);
    diff_table_free(t);

    /* ten times the samples: z = 8.6, flagged: the stack, self and total of A.a, and the total
     * of the lambda that only A.a's stack holds */
    t = cpu_table(cpu_file("c", 4000, 6000, "0x1"), cpu_file("d", 4600, 5400, "0x2"), &th, NULL);
    ck_assert_int_eq(t->regressions, 4);
    ck_assert_int_eq(find(t, DG_TOTAL, "A$$Lambda$1.run")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_SELF, "A.b")->verdict, DV_SHRANK); /* -10% */
    ck_assert_int_eq(find(t, DG_TOTAL, "A.main")->verdict, DV_SAME);
    diff_table_free(t);

    /* the thresholds one at a time */
    th.growth = 0.16;
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.delta_share = 0.07;
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.min_share = 0.50; /* A.a is 40-46%: not judged */
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->verdict, DV_NOT_JUDGED);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.z = 0; /* the first pair, without the z test */
    t = cpu_table(scratch_path("a"), scratch_path("b"), &th, NULL);
    ck_assert_int_eq(t->regressions, 4);
    diff_table_free(t);
}
END_TEST

START_TEST(patterns)
{
    struct diff_thresholds th;
    diff_thresholds_default(DK_CPU, &th);
    struct diff_patterns pat = {0};
    diff_patterns_add(&pat.exclude, &pat.nexclude, "*A.a");
    struct diff_table *t =
        cpu_table(cpu_file("c", 4000, 6000, "0x1"), cpu_file("d", 4600, 5400, "0x2"), &th, &pat);
    ck_assert_int_eq(t->regressions, 1); /* what does not end in A.a: the lambda's total */
    ck_assert_int_eq(find(t, DG_TOTAL, "A$$Lambda$1.run")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->verdict, DV_NOT_JUDGED);
    diff_table_free(t);
    diff_patterns_free(&pat);
    diff_patterns_add(&pat.include, &pat.ninclude, "A.main;*");
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, &pat);
    ck_assert_int_eq(t->regressions, 1); /* the stack only */
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A$$Lambda$1.run;A.a")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->verdict, DV_NOT_JUDGED);
    diff_table_free(t);
    diff_patterns_free(&pat);
}
END_TEST

START_TEST(counts)
{
    struct diff_class_count b[] = {{"X", 100, 1600}, {"Y", 1000, 16000}, {"Gone", 50, 800}},
                            n[] = {{"X", 111, 1776}, {"Y", 1000, 16000}, {"New", 10000, 160000}};
    struct diff_thresholds th;
    struct diff_patterns none = {0};
    diff_thresholds_default(DK_HEAP, &th);
    struct diff_table *t = diff_table_classes(b, 3, n, 3);
    diff_judge(t, &th, &none);
    ck_assert_int_eq(t->mode, DM_COUNT);
    ck_assert(!t->sampled);
    ck_assert_int_eq(t->regressions, 2); /* X +11%, New */
    ck_assert_int_eq(find(t, DG_CLASS, "X")->flagged, 3);
    ck_assert_int_eq(find(t, DG_CLASS, "New")->new_[0], 10000);
    ck_assert_int_eq(find(t, DG_CLASS, "Gone")->verdict, DV_SHRANK);
    ck_assert_int_eq(find(t, DG_CLASS, "Y")->verdict, DV_SAME);
    th.delta_count = 12; /* X gains 11 instances (and 176 bytes) */
    th.judge = 1;        /* instances only */
    diff_judge(t, &th, &none);
    ck_assert_int_eq(t->regressions, 1);
    ck_assert_int_eq(find(t, DG_CLASS, "X")->verdict, DV_SAME);
    th.delta_count = 0;
    th.growth = 0.12;
    diff_judge(t, &th, &none);
    ck_assert_int_eq(t->regressions, 1);
    th.growth = 0.10;
    th.mode = DM_SHARE; /* shares: X 100/1150 -> 111/11111, it shrank */
    diff_judge(t, &th, &none);
    ck_assert_int_eq(find(t, DG_CLASS, "X")->verdict, DV_SHRANK);
    diff_table_free(t);
}
END_TEST

START_TEST(rules_file)
{
    struct diff_thresholds th;
    struct diff_patterns pat = {0};
    char err[512];
    write_text_file(scratch_path("rules"),
                    "# rules\ngrowth 20%   # relative\n"
                    "min-share = 2\nexclude java.*\n"
                    "[sites]\ngrowth 30\njudge alloc_objects\ninclude com.*\n"
                    "[cpu]\nz 4\n");
    diff_thresholds_default(DK_SITES, &th);
    ck_assert_int_eq(diff_rules_load(scratch_path("rules"), DK_SITES, &th, &pat, err, sizeof err),
                     0);
    ck_assert_double_eq_tol(th.growth, 0.30, 1e-12);
    ck_assert_double_eq_tol(th.min_share, 0.02, 1e-12);
    ck_assert_double_eq_tol(th.z, 3, 1e-12);
    ck_assert_uint_eq(th.judge, 2);
    ck_assert_uint_eq(pat.nexclude, 1);
    ck_assert_uint_eq(pat.ninclude, 1);
    diff_patterns_free(&pat);
    diff_thresholds_default(DK_CPU, &th);
    ck_assert_int_eq(diff_rules_load(scratch_path("rules"), DK_CPU, &th, &pat, err, sizeof err), 0);
    ck_assert_double_eq_tol(th.growth, 0.20, 1e-12);
    ck_assert_double_eq_tol(th.z, 4, 1e-12);
    ck_assert_uint_eq(th.judge, 0);
    ck_assert_uint_eq(pat.ninclude, 0);
    diff_patterns_free(&pat);

    static const char *const bad[] = {"growth ten\n", "speed 3\n", "[disk]\n",          "[cpu\n",
                                      "mode fast\n",  "exclude\n", "\n\n[heap]\nz -1\n"};
    static const char *const where[] = {"rules2:1: bad value",    "rules2:1: unknown setting",
                                        "rules2:1: unknown kind", "rules2:1: bad section",
                                        "rules2:1: bad value",    "rules2:1: bad value",
                                        "rules2:4: bad value"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text_file(scratch_path("rules2"), bad[i]);
        diff_thresholds_default(DK_CPU, &th);
        ck_assert_int_eq(
            diff_rules_load(scratch_path("rules2"), DK_CPU, &th, &pat, err, sizeof err), -1);
        ck_assert_msg(strstr(err, where[i]), "%s: %s", bad[i], err);
        diff_patterns_free(&pat);
    }
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

START_TEST(command_line)
{
    char a[400], b[400]; /* scratch_path()'s buffers are reused */
    snprintf(a, sizeof a, "%s", cpu_file("a", 4000, 6000, "0x1"));
    snprintf(b, sizeof b, "%s", cpu_file("b", 4600, 5400, "0x2"));
    const char *same[] = {"hprof-diff", "--text", scratch_path("out.txt"), a, a};
    ck_assert_int_eq(run(5, same), 0);
    const char *grew[] = {"hprof-diff",
                          "--json",
                          scratch_path("out.json"),
                          "--markdown",
                          scratch_path("out.md"),
                          "--html",
                          scratch_path("out.html"),
                          a,
                          b};
    ck_assert_int_eq(run(9, grew), 1);
    const char *j = slurp(scratch_path("out.json"));
    ck_assert_ptr_nonnull(strstr(j, "{\"regressions\":4,\"comparisons\":[{\"kind\":\"cpu\""));
    ck_assert_ptr_nonnull(strstr(j, "{\"group\":\"self\",\"key\":\"A.a\",\"verdict\":"
                                    "\"regression\",\"flagged\":[\"samples\"],\"base\":[4000],"
                                    "\"new\":[4600],\"base_share\":[0.4],\"new_share\":[0.46]"));
    const char *md = slurp(scratch_path("out.md"));
    ck_assert_ptr_nonnull(strstr(md, "## hprof-diff: regression\n"));
    ck_assert_ptr_nonnull(strstr(md, "| 🔴 | self | `A.a` | samples | 4000 (40.0%) | "
                                     "4600 (46.0%) | **+6.0 pts (+15%, z 8.6)** |"));
    const char *html = slurp(scratch_path("out.html"));
    /* one flame page (tools/flame) in an iframe's srcdoc, quotes escaped: the tree in preorder,
     * [name, kind, children, base, new] per node: all -> A.main -> (lambda -> A.a), A.b */
    ck_assert_ptr_nonnull(strstr(html, "<iframe class=\"flame\""));
    ck_assert_ptr_nonnull(strstr(html, "&quot;names&quot;:[&quot;all&quot;,&quot;A.main&quot;,"));
    ck_assert_ptr_nonnull(strstr(html, "&quot;nodes&quot;:[0,0,1,10000,10000,1,2,2,10000,10000,"));
    ck_assert_ptr_nonnull(strstr(html, ",2,0,4000,4600,"));
    ck_assert_ptr_nonnull(strstr(html, ",2,0,6000,5400]"));
    ck_assert_ptr_null(strstr(html, "http"));
    const char *loose[] = {"hprof-diff", "--growth", "20", "--text", scratch_path("o"), a, b};
    ck_assert_int_eq(run(7, loose), 0);
    write_text_file(scratch_path("r"), "[cpu]\ngrowth 20\n");
    const char *ruled[] = {
        "hprof-diff", "--rules", scratch_path("r"), "--text", scratch_path("o"), a, b};
    ck_assert_int_eq(run(7, ruled), 0);
    const char *wins[] = {"hprof-diff",      "--rules", scratch_path("r"),
                          "--growth",        "10",      "--text",
                          scratch_path("o"), a,         b};
    ck_assert_int_eq(run(9, wins), 1);

    /* exit 2 */
    const char *bad1[] = {"hprof-diff", a};
    ck_assert_int_eq(run(2, bad1), 2);
    const char *bad2[] = {"hprof-diff", "--growth", "x", a, b};
    ck_assert_int_eq(run(5, bad2), 2);
    const char *bad3[] = {"hprof-diff", "--kind", "disk", a, b};
    ck_assert_int_eq(run(5, bad3), 2);
    const char *bad4[] = {"hprof-diff", "--kind", "sites", a, b};
    ck_assert_int_eq(run(5, bad4), 2);
    const char *bad5[] = {"hprof-diff", a, scratch_path("missing")};
    ck_assert_int_eq(run(3, bad5), 2);
    write_text_file(scratch_path("cut"),
                    "JAVA PROFILE 1.0.1, created Tue Nov 24 15:24:29 2026\n--------\n"
                    "CPU SAMPLES BEGIN (total = 4) Tue Nov 24 15:24:29 2026\n");
    const char *bad6[] = {"hprof-diff", a, scratch_path("cut")};
    ck_assert_int_eq(run(3, bad6), 2);
    const char *bad7[] = {"hprof-diff", "--section", "3", a, b};
    ck_assert_int_eq(run(5, bad7), 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shares_and_z);
    tcase_add_test(tc, patterns);
    tcase_add_test(tc, counts);
    tcase_add_test(tc, rules_file);
    tcase_add_test(tc, command_line);
    suite_add_tcase(s, tc);
    return run_suite(s);
}

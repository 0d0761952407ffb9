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

/* An ascii cpu=samples profile of n stacks main -> mK with the given counts. */
static const char *cpu_file_n(const char *name, const unsigned *counts, unsigned n)
{
    char text[8192];
    size_t len = (size_t)snprintf(
        text, sizeof text, "JAVA PROFILE 1.0.1, created Tue Nov 24 15:24:29 2026\n--------\n\n");
    unsigned total = 0;
    for (unsigned i = 0; i < n; i++) {
        len +=
            (size_t)snprintf(text + len, sizeof text - len,
                             "TRACE %u:\n\tA.m%u(A.java:5)\n\tA.main(A.java:1)\n", 300001 + i, i);
        total += counts[i];
    }
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "CPU SAMPLES BEGIN (total = %u) Tue Nov 24 15:24:29 2026\n"
                            "rank   self  accum   count trace method\n",
                            total);
    for (unsigned i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%4u 10.00%% 10.00%% %7u %u A.m%u\n",
                                i + 1, counts[i], 300001 + i, i);
    snprintf(text + len, sizeof text - len, "CPU SAMPLES END\n");
    const char *p = scratch_path(name);
    write_text_file(p, text);
    return p;
}

START_TEST(shares_and_z)
{
    struct diff_thresholds th;
    diff_thresholds_default(DK_CPU, &th);
    th.mode = DM_SHARE; /* the judgement on shares (--mode share) */
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
    th.mode = DM_SHARE;
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.mode = DM_SHARE;
    th.delta_share = 0.07;
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.mode = DM_SHARE;
    th.min_share = 0.50; /* A.a is 40-46%: not judged */
    t = cpu_table(scratch_path("c"), scratch_path("d"), &th, NULL);
    ck_assert_int_eq(find(t, DG_SELF, "A.a")->verdict, DV_NOT_JUDGED);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);
    th.mode = DM_SHARE;
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
    th.mode = DM_SHARE;
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
    ck_assert_ptr_nonnull(strstr(j, "{\"failed\":true,\"regressions\":4,\"uniform_fails\":0,"
                                    "\"comparisons\":[{\"kind\":\"cpu\""));
    ck_assert_ptr_nonnull(strstr(j, "{\"group\":\"self\",\"key\":\"A.a\",\"verdict\":"
                                    "\"regression\",\"flagged\":[\"samples\"],\"base\":[4000],"
                                    "\"new\":[4600],\"base_share\":[0.4],\"new_share\":[0.46]"));
    const char *md = slurp(scratch_path("out.md"));
    ck_assert_ptr_nonnull(strstr(md, "## hprof-diff: regression\n"));
    ck_assert_ptr_nonnull(strstr(md, "| 🔴 | self | `A.a` | samples | 4000 (40.0%) | "
                                     "4600 (46.0%) | **+600 (+15%, z 6."));
    ck_assert_ptr_nonnull(strstr(md, "- interval: base 10 ms, new 10 ms (assumed"));
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

/* P(X >= k), X ~ Binomial(n, p), summed term by term: the reference for the continued fraction */
static double naive_upper(unsigned k, unsigned n, double p)
{
    double sum = 0;
    for (unsigned j = k; j <= n; j++)
        sum += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + j * log(p) +
                   (n - j) * log1p(-p));
    return sum;
}

START_TEST(binomial_tails)
{
    static const unsigned cases[][2] = {{0, 10},      {3, 10},      {10, 10},     {20, 30},
                                        {60, 100},    {1665, 3017}, {1352, 3017}, {520, 1000},
                                        {2300, 4270}, {5, 2000}};
    static const double ps[] = {0.5, 0.3, 0.9, 0.5138};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++) {
            unsigned k = cases[i][0], n = cases[i][1];
            double want = naive_upper(k, n, ps[j]), got = diff_binom_upper(k, n, ps[j]);
            ck_assert_msg(fabs(got - want) <= 1e-9 * want + 1e-300,
                          "P(X>=%u | %u, %g): %g, want %g", k, n, ps[j], got, want);
            double lower = diff_binom_lower(k, n, ps[j]), wl = 1 - naive_upper(k + 1, n, ps[j]);
            if (wl > 1e-6)
                ck_assert_msg(fabs(lower - wl) <= 1e-9, "P(X<=%u | %u, %g): %g, want %g", k, n,
                              ps[j], lower, wl);
        }
    /* z of a p-value: the normal quantiles */
    ck_assert_double_eq_tol(diff_z_of_p(0.5 * erfc(3 / sqrt(2))), 3, 1e-9);
    ck_assert_double_eq_tol(diff_z_of_p(0.025), 1.959964, 1e-5);
    ck_assert_double_eq_tol(diff_z_of_p(0), DIFF_Z_MAX, 1e-12);
    /* 1352 -> 1665 at p = 0.5: P(X >= 1665 | 3017) */
    double z = diff_count_z(1352, 1665, 0.5);
    ck_assert_double_eq_tol(z, diff_z_of_p(naive_upper(1665, 3017, 0.5)), 1e-6);
    ck_assert(z > 5.5 && z < 6);
    ck_assert(diff_count_z(1665, 1352, 0.5) < -5.5);
    ck_assert_double_eq(diff_count_z(100, 100, 0.5), 0);
}
END_TEST

/* The judgement of a cpu pair of n stacks at the defaults. */
static struct diff_table *cpu_pair(const unsigned *b, const unsigned *n, unsigned k,
                                   struct diff_thresholds *th)
{
    char bp[400];
    snprintf(bp, sizeof bp, "%s", cpu_file_n("pb", b, k));
    return cpu_table(bp, cpu_file_n("pn", n, k), th, NULL);
}

START_TEST(cpu_time_counts)
{
    struct diff_thresholds th;
    diff_thresholds_default(DK_CPU, &th);
    /* issue 26's numbers: the dominant method's CPU time +23%, its share only +9% */
    unsigned b1[] = {1352, 1307}, n1[] = {1665, 1345};
    struct diff_table *t = cpu_pair(b1, n1, 2, &th);
    ck_assert_int_eq(t->mode, DM_COUNT);
    const struct diff_entry *e = find(t, DG_STACK, "A.main;A.m0");
    ck_assert_int_eq(e->verdict, DV_REGRESSION);
    ck_assert_int_eq(e->share_flagged, 0); /* shares: 50.8% -> 55.3%, +9% < 10% */
    ck_assert_double_eq_tol(e->ratio[0], 1665.0 / 1352, 1e-12);
    ck_assert_double_eq_tol(e->z_count[0], diff_z_of_p(naive_upper(1665, 3017, 0.5)), 1e-6);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m1")->verdict, DV_SAME);
    ck_assert(!t->uniform[0].accepted);  /* two stacks that disagree: nothing changed is left */
    ck_assert_int_eq(t->regressions, 3); /* the stack, self and total of A.m0 */
    diff_table_free(t);

    /* the same growth at 20 s of interval=10: 60:40 split, 1200 -> 1500 against 800 -> 800 */
    unsigned b2[] = {1200, 800}, n2[] = {1500, 800};
    t = cpu_pair(b2, n2, 2, &th);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_REGRESSION);
    ck_assert(!t->uniform[0].accepted);
    diff_table_free(t);

    /* a method at 5% doing twice the work */
    unsigned b3[] = {1100, 400, 100, 200, 200}, n3[] = {1100, 400, 200, 200, 200};
    t = cpu_pair(b3, n3, 5, &th);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m2")->verdict, DV_REGRESSION);
    ck_assert_int_eq(t->regressions, 3);
    diff_table_free(t);

    /* noise: +6% on 1000 samples is under --growth, +12% on 100 samples is under --z */
    unsigned b4[] = {1000, 100, 500}, n4[] = {1060, 112, 480};
    t = cpu_pair(b4, n4, 3, &th);
    ck_assert_int_eq(t->regressions, 0);
    ck_assert(find(t, DG_STACK, "A.main;A.m1")->z_count[0] < 3);
    diff_table_free(t);
}
END_TEST

START_TEST(uniform_factor)
{
    struct diff_thresholds th;
    diff_thresholds_default(DK_CPU, &th);
    /* every stack 15% more: one finding, no regression, under uniform-growth 25% */
    unsigned b[] = {1100, 400, 100, 200, 200}, n[] = {1265, 460, 115, 230, 230};
    struct diff_table *t = cpu_pair(b, n, 5, &th);
    const struct diff_uniform *u = &t->uniform[0];
    ck_assert(u->accepted && u->finding && !u->fails);
    ck_assert_uint_eq(u->informative, 5);
    ck_assert_uint_eq(u->agreeing, 5);
    ck_assert_double_eq_tol(u->factor, 2300.0 / 2000, 1e-12);
    ck_assert_int_eq(t->regressions, 0);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_UNIFORM);
    diff_table_free(t);
    th.uniform_growth = 0.10; /* a threshold of its own */
    t = cpu_pair(b, n, 5, &th);
    ck_assert(t->uniform[0].fails);
    ck_assert_int_eq(t->uniform_fails, 1);
    diff_table_free(t);
    diff_thresholds_default(DK_CPU, &th);

    /* a slower run where the dominant method also did 25% more work: the factor is the
     * others', and the dominant method is still found */
    unsigned b10[] = {11000, 4000, 1000, 2000, 2000}, n2[] = {15812, 4600, 1150, 2300, 2300};
    t = cpu_pair(b10, n2, 5, &th);
    ck_assert(t->uniform[0].accepted);
    ck_assert_uint_eq(t->uniform[0].agreeing, 4);
    ck_assert_double_eq_tol(t->uniform[0].factor, 10350.0 / 9000, 1e-12);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m1")->verdict, DV_UNIFORM);
    ck_assert_int_eq(t->regressions, 3);
    diff_table_free(t);

    /* the dominant method alone grew 25%: the total grew 14%, the median must not follow */
    unsigned n3[] = {1375, 400, 100, 200, 200};
    t = cpu_pair(b, n3, 5, &th);
    ck_assert(!t->uniform[0].finding);
    ck_assert_double_eq_tol(t->uniform[0].factor, 1, 1e-12);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_REGRESSION);
    diff_table_free(t);

    /* six stacks that scatter far more than Poisson counts (a profiler moving samples between
     * stacks): by hand, around the median ratio 1.0368 (p = 0.50904) the six values of
     * d^2 / 1.3233 - n p (1 - p) are 1858, 12690, 25, 8149, -12 and 229796; their upper quartile
     * (3.75th of 0..5 sorted) 11555 is the scatter of d, 107.5, or 219.0 counts of change: m0's
     * +10% (z 3.1 alone) is then z 0.9, m5's +60% (z 16.6 alone) still z 5.3 */
    unsigned b6[] = {2000, 2000, 2000, 2000, 2000, 2000},
             n6[] = {2200, 1800, 2150, 1850, 2000, 3200};
    t = cpu_pair(b6, n6, 6, &th);
    ck_assert_msg(t->uniform[0].scatter > 217 && t->uniform[0].scatter < 221, "%g",
                  t->uniform[0].scatter);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_SAME);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m5")->verdict, DV_REGRESSION);
    ck_assert_msg(find(t, DG_STACK, "A.main;A.m5")->z_count[0] < 5.6 &&
                      find(t, DG_STACK, "A.main;A.m5")->z_count[0] > 5.0,
                  "%g", find(t, DG_STACK, "A.main;A.m5")->z_count[0]);
    diff_table_free(t);

    /* two stacks both 13% slower: uniform; one 13% and one 40%: both regressions */
    unsigned b4[] = {2000, 1500}, n4[] = {2260, 1695}, n5[] = {2260, 2100};
    t = cpu_pair(b4, n4, 2, &th);
    ck_assert(t->uniform[0].finding);
    ck_assert_int_eq(t->regressions, 0);
    diff_table_free(t);
    t = cpu_pair(b4, n5, 2, &th);
    ck_assert(!t->uniform[0].accepted);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m0")->verdict, DV_REGRESSION);
    ck_assert_int_eq(find(t, DG_STACK, "A.main;A.m1")->verdict, DV_REGRESSION);
    diff_table_free(t);
}
END_TEST

/* A table of exact counts built by hand: sites with their alloc_bytes and alloc_objects. */
static struct diff_table *sites_table(const unsigned *b, const unsigned *n, unsigned k)
{
    struct diff_table *t = calloc(1, sizeof *t);
    t->kind = DK_SITES;
    t->section = HPROF_SITES;
    t->n = k;
    t->e = calloc(k, sizeof *t->e);
    for (unsigned i = 0; i < k; i++) {
        char key[32];
        snprintf(key, sizeof key, "C%u @ A.main", i);
        t->e[i].group = DG_SITE;
        t->e[i].key = diff_xstrdup(key);
        t->e[i].in_base = t->e[i].in_new = true;
        t->e[i].base[0] = 16ull * b[i];
        t->e[i].base[1] = b[i];
        t->e[i].new_[0] = 16ull * n[i];
        t->e[i].new_[1] = n[i];
        for (int m = 0; m < 2; m++) {
            t->base_total[m] += t->e[i].base[m];
            t->new_total[m] += t->e[i].new_[m];
        }
    }
    return t;
}

START_TEST(exact_counts)
{
    struct diff_thresholds th;
    struct diff_patterns none = {0};
    diff_thresholds_default(DK_SITES, &th);
    /* exact: 11% more objects at one site is a regression, however few */
    unsigned b[] = {100, 200, 300, 400}, n[] = {111, 200, 300, 400};
    struct diff_table *t = sites_table(b, n, 4);
    diff_judge(t, &th, &none);
    ck_assert_int_eq(t->e[0].verdict, DV_REGRESSION);
    ck_assert_int_eq(t->e[0].flagged, 3);
    ck_assert_double_eq(t->e[0].z_count[1], DIFF_Z_MAX);
    ck_assert_int_eq(t->regressions, 1);
    diff_table_free(t);
    /* every site 20% more (a longer workload): uniform; one at 50% more beyond it */
    unsigned n2[] = {120, 240, 360, 480}, n3[] = {150, 240, 360, 480};
    t = sites_table(b, n2, 4);
    ck_assert_int_eq(diff_judge(t, &th, &none), 0);
    ck_assert(t->uniform[1].finding);
    ck_assert_double_eq_tol(t->uniform[1].factor, 1.2, 1e-12);
    diff_table_free(t);
    t = sites_table(b, n3, 4);
    ck_assert_int_eq(diff_judge(t, &th, &none), 1);
    ck_assert_int_eq(t->e[0].verdict, DV_REGRESSION); /* x1.5 against the others' x1.2 */
    ck_assert_double_eq_tol(t->uniform[1].factor, 1.2, 1e-12);
    diff_table_free(t);
}
END_TEST

START_TEST(intervals)
{
    char a[400], b[400];
    unsigned c1[] = {10000, 5000}, c2[] = {1000, 500}, c3[] = {1000, 650};
    snprintf(a, sizeof a, "%s", cpu_file_n("i1", c1, 2));
    snprintf(b, sizeof b, "%s", cpu_file_n("i10", c2, 2));
    const char *differ[] = {"hprof-diff", "--base-interval", "1", "--new-interval", "10", a, b};
    ck_assert_int_eq(run(7, differ), 2);
    /* normalised: 10000 samples of 1 ms and 1000 of 10 ms are the same CPU time */
    const char *norm[] = {"hprof-diff",
                          "--base-interval",
                          "1",
                          "--new-interval",
                          "10",
                          "--normalize",
                          "--json",
                          scratch_path("i.json"),
                          a,
                          b};
    ck_assert_int_eq(run(10, norm), 0);
    const char *j = slurp(scratch_path("i.json"));
    ck_assert_ptr_nonnull(
        strstr(j, "\"interval\":{\"base\":1,\"new\":10,\"given\":true,\"normalized\":true}"));
    /* and m1's 30% more CPU time is found */
    char c[400];
    snprintf(c, sizeof c, "%s", cpu_file_n("i10b", c3, 2));
    const char *grew[] = {"hprof-diff",
                          "--base-interval",
                          "1",
                          "--new-interval",
                          "10",
                          "--normalize",
                          "--text",
                          scratch_path("o"),
                          a,
                          c};
    ck_assert_int_eq(run(10, grew), 1);
    /* the same interval: nothing to normalise, and none assumed different */
    const char *same[] = {"hprof-diff", "--interval", "1", "--text", scratch_path("o"), b, b};
    ck_assert_int_eq(run(7, same), 0);
    const char *badi[] = {"hprof-diff", "--interval", "0", a, b};
    ck_assert_int_eq(run(5, badi), 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = suite_add_tests(s, "diff", 60,
                                TESTS(shares_and_z, patterns, counts, rules_file, command_line,
                                      binomial_tails, cpu_time_counts, uniform_factor, exact_counts,
                                      intervals));
    tcase_add_checked_fixture(tc, setup, teardown);
    return run_suite(s);
}

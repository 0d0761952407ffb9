/* Check unit tests of options/options.c: every option and value, the defaults, the default
 * profile, the restrictions, each class of error, the help text and the output file name.
 * Run under ASan with leak detection, so every parse is followed by options_free and the
 * error paths are checked for leaks too. */
#include "check_helpers.h"
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static struct hprof_options o;
static char err[512];

static void setup(void)
{
    memset(&o, 0, sizeof o);
    err[0] = '\0';
}

static void teardown(void)
{
    options_free(&o);
}

/* Parses s and expects success; the struct is freed by teardown (or by the next call). */
static void ok(const char *s)
{
    options_free(&o);
    struct hprof_error e = options_parse(s, &o);
    snprintf(err, sizeof err, "%s", e.text);
    ck_assert_msg(!hprof_failed(&e) && !o.help, "'%s' -> help %d: %s", s, o.help, err);
    ck_assert_str_eq(err, "");
}

/* Parses s, expects an error whose one line contains each of the needles (NULL-ended). */
static void bad(const char *s, ...)
{
    options_free(&o);
    struct hprof_error e = options_parse(s, &o);
    snprintf(err, sizeof err, "%s", e.text);
    ck_assert_msg(hprof_failed(&e), "'%s' should fail, got help %d", s, o.help);
    /* the message only: the caller that logs it adds "HPROF ERROR: " */
    ck_assert_msg(strncmp(err, "HPROF", 5) != 0 && err[0] != ' ', "'%s': %s", s, err);
    ck_assert_msg(strchr(err, '\n') == NULL, "'%s': not one line: %s", s, err);
    /* nothing is left allocated on error */
    ck_assert_ptr_null(o.file);
    ck_assert_ptr_null(o.net_host);
    va_list ap;
    va_start(ap, s);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        ck_assert_msg(strstr(err, needle) != NULL, "'%s': '%s' not in: %s", s, needle, err);
    va_end(ap);
}

static void assert_defaults_except_profile(const struct hprof_options *p)
{
    ck_assert(!p->help);
    ck_assert_int_eq(p->format, HPROF_FORMAT_ASCII);
    ck_assert_ptr_null(p->file);
    ck_assert_ptr_null(p->net_host);
    ck_assert_int_eq(p->depth, 4);
    ck_assert_int_eq(p->interval_ms, 10);
    ck_assert(p->cutoff == 0.0001);
    ck_assert(p->lineno);
    ck_assert(!p->thread);
    ck_assert(p->doe);
    ck_assert(!p->msa);
    ck_assert(p->force);
    ck_assert(p->verbose);
    ck_assert(!p->gzip);
    ck_assert_uint_eq(p->sites_interval, 0);
    ck_assert_str_eq(p->warnings, "");
}

/* ---- defaults and the default profile ------------------------------------------------ */

START_TEST(defaults_null_and_empty)
{
    const char *inputs[] = {NULL, ""};
    for (int i = 0; i < 2; i++) {
        ok(inputs[i]);
        assert_defaults_except_profile(&o);
        ck_assert(o.heap_sites && o.heap_dump);
        ck_assert(!o.heap_given);
        ck_assert_int_eq(o.cpu, HPROF_CPU_OFF);
        ck_assert(!o.monitor);
    }
}
END_TEST

START_TEST(defaults_function)
{
    struct hprof_options d;
    memset(&d, 0xff, sizeof d);
    options_defaults(&d);
    assert_defaults_except_profile(&d);
    ck_assert(!d.heap_sites && !d.heap_dump && !d.heap_given);
    ck_assert_int_eq(d.cpu, HPROF_CPU_OFF);
    ck_assert(!d.monitor);
}
END_TEST

START_TEST(default_profile_rule)
{
    /* nothing named: heap=all */
    ok("depth=8,thread=y");
    ck_assert(o.heap_sites && o.heap_dump && !o.heap_given);
    ok("monitor=n");
    ck_assert(o.heap_sites && o.heap_dump);
    /* cpu= or monitor=y without heap=: no heap profiling */
    ok("cpu=samples");
    ck_assert(!o.heap_sites && !o.heap_dump && !o.heap_given);
    ok("cpu=times");
    ck_assert(!o.heap_sites && !o.heap_dump);
    ok("monitor=y");
    ck_assert(!o.heap_sites && !o.heap_dump && o.monitor);
    /* with heap= given, exactly what was asked */
    ok("cpu=samples,heap=sites");
    ck_assert(o.heap_sites && !o.heap_dump && o.heap_given);
    ok("monitor=y,heap=dump");
    ck_assert(!o.heap_sites && o.heap_dump && o.heap_given);
    /* last value wins, and the rule looks at the final values */
    ok("monitor=y,monitor=n");
    ck_assert(!o.monitor && o.heap_sites && o.heap_dump);
}
END_TEST

/* ---- each option and value ----------------------------------------------------------- */

START_TEST(heap_values)
{
    ok("heap=dump");
    ck_assert(o.heap_dump && !o.heap_sites && o.heap_given);
    ok("heap=sites");
    ck_assert(!o.heap_dump && o.heap_sites && o.heap_given);
    ok("heap=all");
    ck_assert(o.heap_dump && o.heap_sites && o.heap_given);
    ok("heap=all,heap=sites");
    ck_assert(!o.heap_dump && o.heap_sites);
    ck_assert_int_eq(o.cpu, HPROF_CPU_OFF);
}
END_TEST

START_TEST(cpu_values)
{
    ok("cpu=samples");
    ck_assert_int_eq(o.cpu, HPROF_CPU_SAMPLES);
    ok("cpu=times");
    ck_assert_int_eq(o.cpu, HPROF_CPU_TIMES);
    ok("cpu=old");
    ck_assert_int_eq(o.cpu, HPROF_CPU_OLD);
    ok("cpu=old,cpu=samples");
    ck_assert_int_eq(o.cpu, HPROF_CPU_SAMPLES);
}
END_TEST

START_TEST(format_values)
{
    ok("format=a");
    ck_assert_int_eq(o.format, HPROF_FORMAT_ASCII);
    ok("format=b");
    ck_assert_int_eq(o.format, HPROF_FORMAT_BINARY);
    ok("format=b,format=a,monitor=y");
    ck_assert_int_eq(o.format, HPROF_FORMAT_ASCII);
}
END_TEST

/* PHD and classic hold one heap dump: heap=dump by default, every other profile refused. */
START_TEST(format_dump_only)
{
    static const struct {
        const char *s;
        enum hprof_format f;
    } good[] = {{"format=phd", HPROF_FORMAT_PHD},
                {"format=classic", HPROF_FORMAT_CLASSIC},
                {"heap=dump,format=phd", HPROF_FORMAT_PHD},
                {"format=classic,heap=dump,net=localhost:9", HPROF_FORMAT_CLASSIC},
                {"format=b,format=phd,doe=n,file=x.phd", HPROF_FORMAT_PHD}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ok(good[i].s);
        ck_assert_int_eq(o.format, good[i].f);
        ck_assert(o.heap_dump);
        ck_assert(!o.heap_sites);
        ck_assert_int_eq(o.cpu, HPROF_CPU_OFF);
        ck_assert(!o.monitor);
    }
    bad("format=phd,heap=all", "format=phd", "heap=all", "allowed: heap=dump", NULL);
    bad("heap=sites,format=classic", "format=classic", "heap=sites", "allowed: heap=dump", NULL);
    bad("format=phd,cpu=samples", "format=phd", "cpu=samples", "allowed: heap=dump", NULL);
    bad("cpu=times,format=classic", "format=classic", "cpu=times", NULL);
    bad("format=phd,cpu=old,heap=dump", "cpu=old", NULL);
    bad("format=phd,monitor=y", "format=phd", "monitor=y", "allowed: heap=dump", NULL);
    bad("format=phd,gz=y", "gz=y", "format=b", NULL);
    bad("format=c", "format", "a|b|phd|classic", NULL);
    /* the last format wins, then the checks run */
    ok("format=phd,cpu=samples,format=a");
    ck_assert_int_eq(o.format, HPROF_FORMAT_ASCII);
    ck_assert(!o.heap_dump);
}
END_TEST

/* Every y|n option, both values, through the bool it sets. */
START_TEST(yes_no_options)
{
    struct {
        const char *name;
        bool *field;
        bool dflt;
    } yn[] = {
        {"monitor", &o.monitor, false}, {"lineno", &o.lineno, true}, {"thread", &o.thread, false},
        {"doe", &o.doe, true},          {"msa", &o.msa, false},      {"force", &o.force, true},
        {"verbose", &o.verbose, true},  {"gz", &o.gzip, false},
    };
    char s[64];
    for (size_t i = 0; i < sizeof yn / sizeof yn[0]; i++) {
        /* gz=y needs format=b */
        bool gz = strcmp(yn[i].name, "gz") == 0;
        const char *extra = gz ? ",format=b" : "";
        ok(gz ? "format=b" : "");
        ck_assert_msg(*yn[i].field == yn[i].dflt, "default of %s", yn[i].name);
        snprintf(s, sizeof s, "%s=y%s", yn[i].name, extra);
        ok(s);
        ck_assert_msg(*yn[i].field, "%s", s);
        snprintf(s, sizeof s, "%s=n%s", yn[i].name, extra);
        ok(s);
        ck_assert_msg(!*yn[i].field, "%s", s);
        snprintf(s, sizeof s, "%s=y,%s=n", yn[i].name, yn[i].name);
        ok(s);
        ck_assert_msg(!*yn[i].field, "last wins: %s", s);
    }
}
END_TEST

START_TEST(file_values)
{
    ok("file=out.txt");
    ck_assert_str_eq(o.file, "out.txt");
    ok("file=/tmp/a=b c.hprof"); /* '=' and spaces after the first '=' are the value's */
    ck_assert_str_eq(o.file, "/tmp/a=b c.hprof");
    ok("file=first,file=second");
    ck_assert_str_eq(o.file, "second");
}
END_TEST

START_TEST(net_values)
{
    ok("net=localhost:8000");
    ck_assert_str_eq(o.net_host, "localhost");
    ck_assert_uint_eq(o.net_port, 8000);
    ok("net=10.0.0.1:1");
    ck_assert_str_eq(o.net_host, "10.0.0.1");
    ck_assert_uint_eq(o.net_port, 1);
    ok("net=h:65535");
    ck_assert_uint_eq(o.net_port, 65535);
    ok("net=[::1]:9000");
    ck_assert_str_eq(o.net_host, "::1");
    ck_assert_uint_eq(o.net_port, 9000);
    ok("net=a:1,net=b:2");
    ck_assert_str_eq(o.net_host, "b");
    ck_assert_uint_eq(o.net_port, 2);
    ck_assert_ptr_null(o.file);
}
END_TEST

START_TEST(depth_values)
{
    ok("depth=0");
    ck_assert_int_eq(o.depth, 0);
    ok("depth=1");
    ck_assert_int_eq(o.depth, 1);
    ok("depth=1000");
    ck_assert_int_eq(o.depth, 1000);
    ok("depth=1024");
    ck_assert_int_eq(o.depth, HPROF_DEPTH_MAX);
    ok("depth=007");
    ck_assert_int_eq(o.depth, 7);
}
END_TEST

START_TEST(interval_values)
{
    ok("interval=1");
    ck_assert_int_eq(o.interval_ms, 1);
    ok("interval=20");
    ck_assert_int_eq(o.interval_ms, 20);
    ok("interval=1000");
    ck_assert_int_eq(o.interval_ms, 1000);
    ok("interval=1000000");
    ck_assert_int_eq(o.interval_ms, HPROF_INTERVAL_MAX_MS);
}
END_TEST

START_TEST(cutoff_values)
{
    struct {
        const char *s;
        double v;
    } c[] = {
        {"0", 0.0},
        {"1", 1.0},
        {"0.0001", 0.0001},
        {"0.5", 0.5},
        {".25", 0.25},
        {"1.", 1.0},
        {"1e-3", 0.001},
        {"5E-2", 0.05},
        {"0.0", 0.0},
        {"1.000", 1.0},
        {"10e-1", 1.0},
        {"0.1e+0", 0.1},
        {"0.123456789", 0.123456789},
        {"0e99999999", 0.0},
    };
    char s[64];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(s, sizeof s, "cutoff=%s", c[i].s);
        ok(s);
        /* exact: one correctly rounded step gives what the compiler gives for the literal */
        ck_assert_msg(o.cutoff == c[i].v, "%s -> %.17g", s, o.cutoff);
    }
    /* very long digit strings do not overflow and round sensibly */
    ok("cutoff=0.000100000000000000000000000000000000000001");
    ck_assert(fabs(o.cutoff - 0.0001) < 1e-15);
    ok("cutoff=0.99999999999999999999999999");
    ck_assert(o.cutoff <= 1.0 && o.cutoff > 0.9999999);
}
END_TEST

/* The cutoff parser must not follow LC_NUMERIC (a VM attached to later may have set a locale
 * with a decimal comma). Checked where such a locale is installed. */
START_TEST(cutoff_ignores_locale)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (setlocale(LC_NUMERIC, names[i]) == NULL)
            continue;
        ok("cutoff=0.25");
        setlocale(LC_NUMERIC, "C");
        ck_assert(o.cutoff == 0.25);
        return;
    }
}
END_TEST

START_TEST(sites_interval_values)
{
    ok("sites_interval=0");
    ck_assert_uint_eq(o.sites_interval, 0);
    ok("sites_interval=524288");
    ck_assert_uint_eq(o.sites_interval, 524288);
    ok("sites_interval=1073741824");
    ck_assert_uint_eq(o.sites_interval, HPROF_SITES_INTERVAL_MAX);
}
END_TEST

START_TEST(gz_values)
{
    ok("format=b,gz=y");
    ck_assert(o.gzip);
    ok("gz=n");
    ck_assert(!o.gzip);
}
END_TEST

START_TEST(sampler_values)
{
    ok("cpu=samples");
    ck_assert_int_eq(o.sampler, HPROF_SAMPLER_ASYNC); /* the default */
    ok("cpu=samples,sampler=safepoint");
    ck_assert_int_eq(o.sampler, HPROF_SAMPLER_SAFEPOINT);
    ok("sampler=safepoint,sampler=async");
    ck_assert_int_eq(o.sampler, HPROF_SAMPLER_ASYNC);
    bad("sampler=jfr", "sampler option value must be async|safepoint (sampler=jfr)", NULL);
}
END_TEST

START_TEST(vmthreads_values)
{
    ok("cpu=samples");
    ck_assert(o.vm_threads); /* the default: the whole process */
    ok("cpu=samples,vmthreads=n");
    ck_assert(!o.vm_threads);
    ok("vmthreads=n,vmthreads=y");
    ck_assert(o.vm_threads);
    bad("vmthreads=all", "vmthreads option value must be y|n (vmthreads=all)", NULL);
}
END_TEST

START_TEST(warnings_msa_gc_okay)
{
    ok("msa=n");
    ck_assert_str_eq(o.warnings, "");
    ok("msa=y");
    ck_assert(o.msa);
    ck_assert_ptr_nonnull(strstr(o.warnings, "HPROF WARNING: msa"));
    ck_assert_ptr_nonnull(strstr(o.warnings, "no effect"));
    ok("gc_okay=y");
    ck_assert_str_eq(o.warnings, "HPROF WARNING: gc_okay is obsolete and ignored\n");
    ok("gc_okay=n,gc_okay=y"); /* one note however often it is given */
    ck_assert_str_eq(o.warnings, "HPROF WARNING: gc_okay is obsolete and ignored\n");
    ok("gc_okay=n,msa=y");
    /* two lines, each ending with a newline */
    char *nl = strchr(o.warnings, '\n');
    ck_assert_ptr_nonnull(nl);
    ck_assert_ptr_nonnull(strstr(nl + 1, "HPROF WARNING: msa"));
    ck_assert_int_eq(o.warnings[strlen(o.warnings) - 1], '\n');
    /* the obsolete option still checks its value */
    bad("gc_okay=maybe", "gc_okay", "y|n", "(gc_okay=maybe)", NULL);
}
END_TEST

START_TEST(all_options_at_once)
{
    ok("heap=sites,cpu=samples,monitor=n,format=b,file=x.bin,depth=12,interval=5,"
       "cutoff=0.01,lineno=n,thread=y,doe=n,msa=n,force=n,verbose=n,gz=y,"
       "sites_interval=4096,gc_okay=n,");
    ck_assert(o.heap_sites && !o.heap_dump && o.heap_given);
    ck_assert_int_eq(o.cpu, HPROF_CPU_SAMPLES);
    ck_assert(!o.monitor);
    ck_assert_int_eq(o.format, HPROF_FORMAT_BINARY);
    ck_assert_str_eq(o.file, "x.bin");
    ck_assert_int_eq(o.depth, 12);
    ck_assert_int_eq(o.interval_ms, 5);
    ck_assert(o.cutoff == 0.01);
    ck_assert(!o.lineno && o.thread && !o.doe && !o.msa && !o.force && !o.verbose);
    ck_assert(o.gzip);
    ck_assert_uint_eq(o.sites_interval, 4096);
}
END_TEST

START_TEST(hadoop_string)
{
    ok("cpu=samples,heap=sites,force=n,thread=y,verbose=n,file=/tmp/x.prof");
    ck_assert_int_eq(o.cpu, HPROF_CPU_SAMPLES);
    ck_assert(o.heap_sites && !o.heap_dump && o.heap_given);
    ck_assert(!o.force && o.thread && !o.verbose);
    ck_assert_str_eq(o.file, "/tmp/x.prof");
    ck_assert_int_eq(o.format, HPROF_FORMAT_ASCII);
    ck_assert_int_eq(o.depth, 4);
    ck_assert_str_eq(o.warnings, "");
}
END_TEST

START_TEST(manual_examples)
{
    ok("cpu=samples,interval=20,depth=3");
    ck_assert_int_eq(o.cpu, HPROF_CPU_SAMPLES);
    ck_assert_int_eq(o.interval_ms, 20);
    ck_assert_int_eq(o.depth, 3);
    ck_assert(!o.heap_sites && !o.heap_dump);
    ok("heap=sites");
    ck_assert(o.heap_sites && !o.heap_dump);
    ok("heap=dump,format=b");
    ok("cpu=samples,format=b");
}
END_TEST

START_TEST(trailing_comma)
{
    ok("heap=sites,");
    ck_assert(o.heap_sites && !o.heap_dump);
    bad("heap=sites,,", "empty option", "heap=sites,,", NULL);
}
END_TEST

/* ---- restrictions -------------------------------------------------------------------- */

START_TEST(restrictions)
{
    bad("format=b,monitor=y", "format=b", "monitor=y", NULL);
    bad("monitor=y,format=b", "format=b", "monitor=y", NULL); /* order does not matter */
    bad("format=b,cpu=times", "format=b", "cpu=times", NULL);
    bad("cpu=old,format=b", "format=b", "cpu=old", NULL);
    bad("gz=y", "gz=y", "format=b", NULL);
    bad("gz=y,format=a", "gz=y", "format=b", NULL);
    bad("file=a,net=h:1", "file", "net", NULL);
    /* the restrictions look at final values */
    ok("format=b,monitor=y,monitor=n");
    ok("format=b,cpu=times,cpu=samples");
}
END_TEST

/* ---- errors -------------------------------------------------------------------------- */

START_TEST(error_unknown_option)
{
    bad("foo=1", "unknown option 'foo'", "allowed: help, heap, cpu, monitor, format, file, net",
        "depth, interval, cutoff, lineno, thread, doe, msa, force, verbose, gc_okay, gz",
        "wall_names)", NULL);
    bad("heap=sites,Heap=dump", "unknown option 'Heap'", NULL); /* names are case-sensitive */
    bad(" heap=sites", "unknown option ' heap'", NULL);
    bad("=dump", "unknown option ''", NULL);
    bad("foo", "unknown option 'foo'", NULL);
    /* a long name is cut so the allowed list still fits */
    char s[400];
    memset(s, 'x', 300);
    strcpy(s + 300, "=1");
    bad(s, "unknown option 'xxxx", "wall_names)", NULL);
}
END_TEST

START_TEST(error_missing_value)
{
    bad("heap", "heap option needs a value", "dump|sites|all", NULL);
    bad("depth", "depth option needs a value", "0 to 1024", NULL);
    bad("cpu=samples,thread", "thread option needs a value", "y|n", NULL);
}
END_TEST

START_TEST(error_bad_enum_values)
{
    bad("heap=foo", "heap option value must be dump|sites|all (heap=foo)", NULL);
    bad("heap=", "heap option value must be dump|sites|all (heap=)", NULL);
    bad("heap=SITES", "(heap=SITES)", NULL);
    bad("cpu=yes", "cpu option value must be samples|times|old (cpu=yes)", NULL);
    bad("format=binary", "format option value must be a|b|phd|classic (format=binary)", NULL);
    const char *yn[] = {"monitor", "lineno",  "thread", "doe",    "msa",
                        "force",   "verbose", "gz",     "gc_okay"};
    const char *vals[] = {"yes", "Y", "1", "", "nn"};
    char s[64], want[96];
    for (size_t i = 0; i < sizeof yn / sizeof yn[0]; i++) {
        for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
            snprintf(s, sizeof s, "%s=%s", yn[i], vals[j]);
            snprintf(want, sizeof want, "%s option value must be y|n (%s)", yn[i], s);
            bad(s, want, NULL);
        }
    }
}
END_TEST

START_TEST(error_numbers)
{
    const char *d = "depth option value must be an integer from 0 to 1024";
    bad("depth=-1", d, "(depth=-1)", NULL);
    bad("depth=1025", d, NULL);
    bad("depth=abc", d, NULL);
    bad("depth=", d, NULL);
    bad("depth=4x", d, NULL);
    bad("depth= 4", d, NULL);
    bad("depth=+4", d, NULL);
    bad("depth=0x10", d, NULL);
    bad("depth=99999999999999999999999999", d, NULL);
    bad("depth=18446744073709551617", d, NULL); /* 2^64+1 must not wrap to 1 */
    const char *i = "interval option value must be an integer from 1 to 1000000";
    bad("interval=0", i, "(interval=0)", NULL);
    bad("interval=-10", i, NULL);
    bad("interval=1000001", i, NULL);
    bad("interval=2147483648", i, NULL);
    bad("interval=10ms", i, NULL);
    bad("interval=1.5", i, NULL);
    const char *si = "sites_interval option value must be an integer from 0 to 1073741824";
    bad("sites_interval=1073741825", si, NULL);
    bad("sites_interval=-1", si, NULL);
    bad("sites_interval=1k", si, NULL);
}
END_TEST

START_TEST(error_cutoff)
{
    const char *c = "cutoff option value must be a number from 0 to 1";
    const char *vals[] = {"abc",   "",      ".",  "-0.5", "1.5",  "2",    "1e1",  "nan",    "inf",
                          "0x0.1", "0.1.2", "1e", "1e+",  " 0.1", "0.1 ", "+0.1", "1e99999"};
    char s[64];
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        snprintf(s, sizeof s, "cutoff=%s", vals[k]);
        char echo[80];
        snprintf(echo, sizeof echo, "(%s)", s);
        bad(s, c, echo, NULL);
    }
    /* a decimal comma ends the item: what follows is taken as the next option */
    bad("cutoff=0,5", "unknown option '5'", NULL);
}
END_TEST

START_TEST(error_file)
{
    bad("file=", "file option value must be a non-empty file name (file=)", NULL);
    bad("file=x,file=", "file option", NULL); /* and x is freed */
}
END_TEST

START_TEST(error_net)
{
    const char *n = "net option value must be <host>:<port>";
    const char *vals[] = {"localhost",
                          ":8000",
                          "[]:8000",
                          "host:",
                          "host:0",
                          "host:65536",
                          "host:99999999999999999999",
                          "host:-1",
                          "host:80x",
                          "host: 80",
                          ""};
    char s[64];
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        snprintf(s, sizeof s, "net=%s", vals[k]);
        bad(s, n, "1 to 65535", s, NULL);
    }
    bad("net=a:1,net=b", n, NULL); /* the first host is freed */
}
END_TEST

START_TEST(error_empty_items)
{
    bad("heap=sites,,cpu=samples", "empty option", "(heap=sites,,cpu=samples)", "single commas",
        NULL);
    bad(",heap=sites", "empty option", NULL);
    bad(",", "empty option", NULL);
    bad(",,", "empty option", NULL);
}
END_TEST

START_TEST(error_first_one_reported)
{
    bad("file=a.txt,heap=foo,cpu=bar,net=x", "(heap=foo)", NULL);
    ck_assert_ptr_null(strstr(err, "cpu"));
    /* an error in an item stops the cross-option checks from adding a second message */
    bad("format=b,monitor=y,depth=-1", "depth", NULL);
    ck_assert_ptr_null(strstr(err, "monitor"));
}
END_TEST

START_TEST(error_long_value_cut_to_fit)
{
    /* A value longer than the error's text: the message is cut to fit, still one line. */
    char opt[2048] = "heap=";
    memset(opt + 5, 'x', sizeof opt - 6);
    opt[sizeof opt - 1] = '\0';
    struct hprof_error e = options_parse(opt, &o);
    ck_assert(hprof_failed(&e));
    ck_assert_uint_eq(strlen(e.text), sizeof e.text - 1);
    const char *start = "heap option value must be dump|sites|all (heap=xxx";
    ck_assert(strncmp(e.text, start, strlen(start)) == 0);
    ck_assert_ptr_null(strchr(e.text, '\n'));
    /* the longest message of a short typo, with every allowed name, fits whole */
    char typo[80] = "";
    memset(typo, 'y', 64);
    strcat(typo, "z=1");
    e = options_parse(typo, &o);
    ck_assert(hprof_failed(&e));
    ck_assert_ptr_nonnull(strstr(e.text, "wall_names)"));
}
END_TEST

START_TEST(error_leaves_defaults)
{
    bad("file=a,net=h:1,depth=9,heap=nope", "heap", NULL);
    assert_defaults_except_profile(&o);
    ck_assert(!o.heap_given);
}
END_TEST

/* ---- help ---------------------------------------------------------------------------- */

START_TEST(help_alone_and_anywhere)
{
    const char *with_help[] = {"help",           "heap=sites,help",     "help,heap=sites",
                               "help,",          "file=x,help,depth=3", "unknown=1,help",
                               "help,heap=foo,,"};
    for (size_t i = 0; i < sizeof with_help / sizeof with_help[0]; i++) {
        options_free(&o);
        err[0] = 'x';
        struct hprof_error e = options_parse(with_help[i], &o);
        snprintf(err, sizeof err, "%s", e.text);
        ck_assert_msg(!hprof_failed(&e) && o.help, "'%s' -> help %d (%s)", with_help[i], o.help,
                      err);
        ck_assert(o.help);
        ck_assert_ptr_null(o.file); /* freed */
        ck_assert_int_eq(o.depth, 4);
        ck_assert_str_eq(err, "");
    }
    bad("help=y", "help option takes no value (help=y)", NULL);
    bad("help=", "help option takes no value", NULL);
    bad("HELP", "unknown option 'HELP'", NULL);
}
END_TEST

START_TEST(help_text_content)
{
    const char *h = options_help_text();
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(h[strlen(h) - 1], '\n');
    const char *must[] = {
        "HPROF: Heap and CPU Profiling Agent",
        "hprof usage: java -agentlib:hprof=[help]|[<option>=<value>, ...]",
        "Option Name and Value  Description",
        "Default\n",
        "heap=dump|sites|all ",
        "cpu=samples|times|old ",
        "monitor=y|n ",
        "format=a|b ",
        "file=<file> ",
        "net=<host>:<port> ",
        "depth=<size> ",
        "interval=<ms> ",
        "cutoff=<value> ",
        "lineno=y|n ",
        "thread=y|n ",
        "doe=y|n ",
        "msa=y|n ",
        "force=y|n ",
        "verbose=y|n ",
        "gz=y|n ",
        "sites_interval=<bytes>",
        "Obsolete Options",
        "gc_okay=y|n",
        "Examples",
        "java -agentlib:hprof=cpu=samples,interval=20,depth=3",
        "Notes",
        "format=b cannot be used with monitor=y",
        "format=b cannot be used with cpu=old|times",
        "-agentpath:/path/libhprof.so=",
        "-Xrunhprof:",
        "JVMTI.agent_load",
        "java.hprof[{.txt}]",
        "phd|classic",
        "java.phd, java.classic.txt",
        "0.0001",
    };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        ck_assert_msg(strstr(h, must[i]) != NULL, "help lacks '%s'", must[i]);
    /* lines fit an 80-column terminal */
    for (const char *line = h; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        ck_assert_msg(end - line <= 80, "long help line: %.*s", (int)(end - line), line);
        line = end + 1;
    }
}
END_TEST

/* ---- output file name ---------------------------------------------------------------- */

/* A fake file system: the names listed here exist. */
static const char *existing[8];
static int exists_calls;

static bool fake_exists(const char *path)
{
    exists_calls++;
    for (size_t i = 0; i < sizeof existing / sizeof existing[0] && existing[i]; i++) {
        if (strcmp(existing[i], path) == 0)
            return true;
    }
    return false;
}

static bool always_exists(const char *path)
{
    (void)path;
    return true;
}

static void set_existing(const char *a, const char *b, const char *c)
{
    memset(existing, 0, sizeof existing);
    existing[0] = a;
    existing[1] = b;
    existing[2] = c;
    exists_calls = 0;
}

/* Output name for option string s, pid 4242, the fake file system. */
static const char *path_of(const char *s)
{
    static char buf[256];
    ok(s);
    ck_assert_int_eq(options_output_path(&o, 4242, fake_exists, buf, sizeof buf), 0);
    return buf;
}

START_TEST(path_defaults)
{
    set_existing(NULL, NULL, NULL);
    ck_assert_str_eq(path_of(""), "java.hprof.txt");
    ck_assert_str_eq(path_of("format=b"), "java.hprof");
    ck_assert_str_eq(path_of("format=b,gz=y"), "java.hprof.gz");
    ck_assert_str_eq(path_of("file=my.out"), "my.out");
    ck_assert_str_eq(path_of("file=/tmp/x.bin,format=b,gz=y"), "/tmp/x.bin");
    ck_assert_str_eq(path_of("force=n"), "java.hprof.txt");
    ck_assert_str_eq(path_of("format=phd"), "java.phd");
    ck_assert_str_eq(path_of("format=classic"), "java.classic.txt");
}
END_TEST

START_TEST(path_force_y_overwrites)
{
    set_existing("java.hprof.txt", "java.hprof", "my.out");
    ck_assert_str_eq(path_of(""), "java.hprof.txt");
    ck_assert_str_eq(path_of("format=b"), "java.hprof");
    ck_assert_str_eq(path_of("file=my.out,force=y"), "my.out");
    ck_assert_int_eq(exists_calls, 0); /* no need to look */
}
END_TEST

START_TEST(path_force_n_pid)
{
    set_existing("java.hprof.txt", "java.hprof", "java.hprof.gz");
    ck_assert_str_eq(path_of("force=n"), "java.hprof.4242.txt");
    ck_assert_str_eq(path_of("force=n,format=b"), "java.hprof.4242");
    ck_assert_str_eq(path_of("force=n,format=b,gz=y"), "java.hprof.4242.gz");

    set_existing("/tmp/x.prof", "out.txt", "bin.txt");
    ck_assert_str_eq(path_of("force=n,file=/tmp/x.prof"), "/tmp/x.prof.4242");
    ck_assert_str_eq(path_of("force=n,file=out.txt"), "out.4242.txt");
    /* .txt stays last only for ascii output */
    ck_assert_str_eq(path_of("force=n,file=bin.txt,format=b"), "bin.txt.4242");

    set_existing(".txt", NULL, NULL);
    ck_assert_str_eq(path_of("force=n,file=.txt"), ".txt.4242");

    /* the suffix that says what the file is stays last for PHD and classic too */
    set_existing("java.phd", "java.classic.txt", "d.phd");
    ck_assert_str_eq(path_of("force=n,format=phd"), "java.4242.phd");
    ck_assert_str_eq(path_of("force=n,format=classic"), "java.classic.4242.txt");
    ck_assert_str_eq(path_of("force=n,format=phd,file=d.phd"), "d.4242.phd");
}
END_TEST

START_TEST(path_force_n_counter)
{
    set_existing("java.hprof.txt", "java.hprof.4242.txt", NULL);
    ck_assert_str_eq(path_of("force=n"), "java.hprof.4242.1.txt");
    set_existing("java.hprof.txt", "java.hprof.4242.txt", "java.hprof.4242.1.txt");
    ck_assert_str_eq(path_of("force=n"), "java.hprof.4242.2.txt");
    set_existing("a", "a.4242", "a.4242.1");
    ck_assert_str_eq(path_of("force=n,file=a"), "a.4242.2");
}
END_TEST

START_TEST(path_errors)
{
    char buf[64];
    ok("");
    /* buffer too small */
    ck_assert_int_eq(options_output_path(&o, 1, fake_exists, buf, 14), -1);
    ck_assert_int_eq(options_output_path(&o, 1, fake_exists, buf, 15), 0);
    ck_assert_str_eq(buf, "java.hprof.txt");
    ck_assert_int_eq(options_output_path(&o, 1, fake_exists, NULL, 0), -1);
    /* too small once the pid is added */
    set_existing("java.hprof.txt", NULL, NULL);
    ok("force=n");
    ck_assert_int_eq(options_output_path(&o, 123456, fake_exists, buf, 16), -1);
    /* everything exists: gives up instead of looping for ever */
    ck_assert_int_eq(options_output_path(&o, 1, always_exists, buf, sizeof buf), -1);
    /* no exists function: nothing exists */
    ck_assert_int_eq(options_output_path(&o, 1, NULL, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "java.hprof.txt");
}
END_TEST

/* ---- misc ---------------------------------------------------------------------------- */

START_TEST(free_is_idempotent)
{
    ok("file=a");
    options_free(&o);
    ck_assert_ptr_null(o.file);
    ok("net=b:1");
    options_free(&o);
    ck_assert_ptr_null(o.file);
    ck_assert_ptr_null(o.net_host);
    options_free(&o);
    assert_defaults_except_profile(&o);
}
END_TEST

START_TEST(reparse_many_times)
{
    /* leak check on repeated use, success and failure alternating */
    for (int i = 0; i < 200; i++) {
        ok("file=/tmp/a,cpu=samples");
        bad("file=/tmp/a,net=h:1", "file", NULL);
        ok("net=h:7");
        bad("net=h:7,heap=x", "heap", NULL);
    }
}
END_TEST

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    struct {
        const char *name;
        const TTest *tests[20];
    } groups[] = {
        {"defaults", {defaults_null_and_empty, defaults_function, default_profile_rule}},
        {"values",
         {heap_values,
          cpu_values,
          format_values,
          format_dump_only,
          yes_no_options,
          file_values,
          net_values,
          depth_values,
          interval_values,
          cutoff_values,
          cutoff_ignores_locale,
          sites_interval_values,
          gz_values,
          sampler_values,
          vmthreads_values,
          warnings_msa_gc_okay,
          all_options_at_once,
          hadoop_string,
          manual_examples,
          trailing_comma}},
        {"restrictions", {restrictions}},
        {"errors",
         {error_unknown_option, error_missing_value, error_bad_enum_values, error_numbers,
          error_cutoff, error_file, error_net, error_empty_items, error_first_one_reported,
          error_long_value_cut_to_fit, error_leaves_defaults}},
        {"help", {help_alone_and_anywhere, help_text_content}},
        {"output_path",
         {path_defaults, path_force_y_overwrites, path_force_n_pid, path_force_n_counter,
          path_errors}},
        {"misc", {free_is_idempotent, reparse_many_times}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (size_t t = 0;
             t < sizeof groups[g].tests / sizeof groups[g].tests[0] && groups[g].tests[t]; t++)
            tcase_add_test(tc, groups[g].tests[t]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    return run_suite(options_suite());
}

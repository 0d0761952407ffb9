/*
 * hprof-analyze: one heap dump (HPROF from this agent or HotSpot, plain or gzip, or an OpenJ9
 * PHD dump, roots inferred) as an object
 * graph: retained sizes, classes and objects by retained size, the dominator tree, leak suspects
 * with their accumulation point and path, per-thread stack memory, a path from the GC roots.
 * See doc/heap-analysis.md. Exit: 0 done, 1 usage, I/O or memory error, 2 bad input.
 */
#include "heap_analysis.h"
#include "report_heap.h"
#include "report_html.h"
#include "report_waste.h"
#include "rss_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: hprof-analyze [options] FILE\n"
    "  FILE: an HPROF heap dump (plain or gzip) or an OpenJ9 PHD dump (roots inferred;\n"
    "        no duplicate arrays, collections or sites: PHD holds no values)\n"
    "  --format=text|markdown|json|html  output format (default text); html: one\n"
    "                                self-contained page, the dominator tree opening by level\n"
    "  --dump=N                      the N-th heap dump of the file (default 1)\n"
    "  --top=N                       rows of the top lists (default 20)\n"
    "  --depth=N                     dominator tree levels (default 4, 0: none)\n"
    "  --fanout=N                    children shown per tree node (default 5)\n"
    "  --suspect=PCT                 retained share that makes a leak suspect (default 10)\n"
    "  --accumulation=PCT            share a child must hold to be followed (default 80)\n"
    "  --path=0xID|CLASS             shortest path from the GC roots to an object, or to the\n"
    "                                class's biggest instance\n"
    "  --oop-size=4|8                reference size of the size model (default 4)\n"
    "  --no-waste                    leave out duplicate arrays and sparse collections\n"
    "  --no-sites                    leave out the allocation sites (one walk less)\n"
    "  -q, --quiet                   no progress on stderr\n";

static bool opt(const char *arg, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) || arg[n] != '=')
        return false;
    *val = arg + n + 1;
    return true;
}

static bool number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    struct report_opts ro = {.top = 20,
                             .depth = 4,
                             .fanout = 5,
                             .suspect = 0.10,
                             .accumulation = 0.80,
                             .waste = true,
                             .sites = true};
    enum rout_format fmt = ROUT_TEXT;
    double dump = 1, oop = 4, v;
    bool quiet = false, html = false;
    const char *file = NULL, *val;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool ok = true;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--no-waste")) {
            ro.waste = false;
        } else if (!strcmp(a, "--no-sites")) {
            ro.sites = false;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (opt(a, "--format", &val)) {
            ok = !strcmp(val, "text") || !strcmp(val, "markdown") || !strcmp(val, "json") ||
                 !strcmp(val, "html");
            fmt = val[0] == 'j' ? ROUT_JSON : val[0] == 'm' ? ROUT_MARKDOWN : ROUT_TEXT;
            html = val[0] == 'h';
        } else if (opt(a, "--dump", &val)) {
            ok = number(val, 1, 1e9, &dump);
        } else if (opt(a, "--top", &val)) {
            ok = number(val, 1, 1e6, &v);
            ro.top = (size_t)v;
        } else if (opt(a, "--depth", &val)) {
            ok = number(val, 0, 64, &v);
            ro.depth = (unsigned)v;
        } else if (opt(a, "--fanout", &val)) {
            ok = number(val, 1, 1e6, &v);
            ro.fanout = (unsigned)v;
        } else if (opt(a, "--suspect", &val)) {
            ok = number(val, 0.001, 100, &v);
            ro.suspect = v / 100;
        } else if (opt(a, "--accumulation", &val)) {
            ok = number(val, 1, 100, &v);
            ro.accumulation = v / 100;
        } else if (opt(a, "--path", &val)) {
            ro.path_to = val;
            ok = *val != 0;
        } else if (opt(a, "--oop-size", &val)) {
            ok = number(val, 4, 8, &oop) && (oop == 4 || oop == 8);
        } else if (a[0] == '-' && a[1]) {
            ok = false;
        } else if (!file) {
            file = a;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "hprof-analyze: bad argument '%s'\n%s", a, usage);
            return 1;
        }
    }
    if (!file) {
        fputs(usage, stderr);
        return 1;
    }
    ro.file = file;
    bool progress = !quiet && isatty(2);
    struct heap_graph g;
    char err[512];
    bool bad;
    if (heap_graph_load(&g, file, (size_t)dump - 1, (unsigned)oop, progress, err, sizeof err,
                        &bad) < 0) {
        if (progress)
            fputc('\n', stderr);
        fprintf(stderr, "hprof-analyze: %s: %s\n", file, err);
        heap_graph_free(&g);
        return bad ? 2 : 1;
    }
    if (g.phd) { /* no array contents, field values or allocation sites in a PHD file */
        ro.waste = false;
        ro.sites = false;
    }
    if (progress)
        fprintf(stderr, "dominators and retained sizes...\n");
    struct heap_analysis an;
    int rc = 0;
    /* the identical-array groups are found before the dominator-tree lists exist (lower peak) */
    bool dups = !html && ro.waste;
    if (heap_analysis_run_with(&an, &g, dups ? report_waste_prepare : NULL, &ro) < 0) {
        fprintf(stderr, "hprof-analyze: %s: out of memory computing dominators\n", file);
        rc = 1;
    } else if (html) {
        if (report_html(&an, &ro, stdout) < 0) {
            fprintf(stderr, "hprof-analyze: %s: out of memory writing the page\n", file);
            rc = 1;
        }
    } else {
        struct rout out;
        rout_begin(&out, stdout, fmt);
        int r = report_heap(&an, &ro, &out);
        rout_end(&out);
        if (r == -2) {
            fprintf(stderr, "hprof-analyze: %s: --path=%s: no such object or class\n", file,
                    ro.path_to);
            rc = 1;
        } else if (r < 0) {
            fprintf(stderr, "hprof-analyze: %s: out of memory writing the report\n", file);
            rc = 1;
        }
    }
    rss_trace("report");
    heap_analysis_free(&an);
    heap_graph_free(&g);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "hprof-analyze: cannot write the report\n");
        return 1;
    }
    return rc;
}

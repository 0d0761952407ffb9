/*
 * hprof-diff: compare a base profile with a new one of the same kind and fail on a regression
 * (doc/tools.md). Reads any profile through tools/reader/profile.h (ascii or binary, plain or
 * gzip) and PHD heap dumps through phd-read's parser; judges every stack, method, site,
 * monitor or class against thresholds from the command line and a rules file; writes a text
 * table, Markdown, JSON and a differential flame graph.
 *
 * Exit status: 0 nothing crossed a threshold, 1 regressions (each listed), 2 usage or
 * unreadable input.
 */
#include "diff.h"
#include "diff_retained.h"
#include "phd_histogram.h"
#include "profile.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *o)
{
    fprintf(o,
            "usage: hprof-diff [options] BASE NEW\n"
            "Compares two profiles of the agent (or two heap dumps: HPROF or PHD) and exits\n"
            "0 if nothing crossed a threshold, 1 on a regression, 2 on bad usage or input.\n"
            "  --kind K[,K]        kinds to compare: cpu, times, methods, sites, monitor, heap,\n"
            "                      wall (wall=y's WALL SAMPLES)\n"
            "                      (default: every kind both files hold)\n"
            "  --section N         which section of each kind (1 = first, 0 = last; default 0);\n"
            "  --base-section N    --new-section N: the same for one file (two dumps of one file)\n"
            "  --rules FILE        thresholds and patterns from FILE (command line wins)\n"
            "  --growth P          relative growth that fails, percent (default 10)\n"
            "  --delta-share PTS   and absolute growth of a share, points (default 1)\n"
            "  --delta-count N     and absolute growth of a count (default 0)\n"
            "  --min-share P       entries under P%% of the total in both runs not judged (1)\n"
            "  --z Z               minimum z of a tested change (default 3; 0 = no test)\n"
            "  --uniform-growth P  a uniform growth of the whole run fails from P%% (25; none)\n"
            "  --mode share|count  judge counts (default: CPU time, calls, objects) or shares\n"
            "  --interval MS       the sampling interval of both files (cpu; default: 10,\n"
            "                      assumed: no file records it)\n"
            "  --base-interval MS, --new-interval MS: the same for one file\n"
            "  --normalize         compare CPU time of files sampled at different intervals\n"
            "  --judge M[,M]       measures judged (samples, time_ms, alloc_objects, ...)\n"
            "  --include PAT       judge only entries whose key matches PAT (fnmatch; repeatable)\n"
            "  --exclude PAT       do not judge entries whose key matches PAT (repeatable)\n"
            "  --lines             keep line numbers in frames (default: Class.method only)\n"
            "  --frames N          keep the top N frames of each stack (default: all)\n"
            "  --top N             unflagged entries listed besides regressions (default 10)\n"
            "  --text FILE, --markdown FILE, --json FILE, --html FILE\n"
            "                      outputs (\"-\" = stdout); none given: the text on stdout\n"
            "  -h, --help\n");
}

/* The command line's threshold settings, applied after the rules file for every kind. */
struct cli_setting {
    const char *name, *value;
};

static bool parse_nth(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end || errno || v > 1000000 || s[0] == '-')
        return false;
    *out = (unsigned)v;
    return true;
}

/* "pkg/Node" -> "pkg.Node", "[I" -> "int[]", "[[Ljava/lang/String;" -> "java.lang.String[][]":
 * PHD names in the Java form the HPROF tools print. */
static char *java_name(const char *s)
{
    static const char codes[] = "ZCFDBSIJ";
    static const char *const prim[] = {"boolean", "char",  "float", "double",
                                       "byte",    "short", "int",   "long"};
    unsigned dims = 0;
    while (s[dims] == '[')
        dims++;
    const char *base = s + dims;
    size_t blen = strlen(base);
    char *tmp = NULL;
    if (dims && blen == 1 && strchr(codes, base[0])) {
        base = prim[strchr(codes, base[0]) - codes];
        blen = strlen(base);
    } else if (dims && base[0] == 'L' && blen >= 2 && base[blen - 1] == ';') {
        base++;
        blen -= 2;
    }
    tmp = diff_xmalloc(blen + 2 * dims + 1);
    for (size_t i = 0; i < blen; i++)
        tmp[i] = base[i] == '/' ? '.' : base[i];
    for (unsigned i = 0; i < dims; i++)
        memcpy(tmp + blen + 2 * i, "[]", 2);
    tmp[blen + 2 * dims] = 0;
    return tmp;
}

/* 1 PHD, 0 not, -1 unreadable (message in err). stdin is never PHD. */
static int is_phd(const char *path, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char head[20];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return phd_looks_like(head, n) ? 1 : 0;
}

static struct diff_class_count *phd_classes(const char *path, size_t *n, char *err, size_t errlen)
{
    struct phd_class_count *rows;
    if (phd_histogram(path, &rows, n, err, errlen) != 0)
        return NULL;
    struct diff_class_count *c = diff_xmalloc((*n ? *n : 1) * sizeof *c);
    for (size_t i = 0; i < *n; i++)
        c[i] = (struct diff_class_count){java_name(rows[i].name), rows[i].count, rows[i].bytes};
    phd_histogram_free(rows, *n);
    return c;
}

static void free_classes(struct diff_class_count *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free((char *)c[i].name);
    free(c);
}

static FILE *open_out(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "hprof-diff: %s: %s\n", path, strerror(errno));
    return f;
}

static bool close_out(FILE *f, const char *path)
{
    bool ok = !ferror(f);
    if (f != stdout)
        ok = fclose(f) == 0 && ok;
    else
        ok = fflush(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "hprof-diff: %s: write error\n", path);
    return ok;
}

enum {
    O_SECTION = 256,
    O_BASE_SECTION,
    O_NEW_SECTION,
    O_RULES,
    O_LINES,
    O_FRAMES,
    O_TOP,
    O_TEXT,
    O_MD,
    O_JSON,
    O_HTML,
    O_KIND,
    O_SETTING,
    O_INTERVAL,
    O_BASE_INTERVAL,
    O_NEW_INTERVAL,
    O_NORMALIZE
};

/* "10", "0.5": a sampling interval in ms, > 0 */
static bool parse_interval(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v > 0) || v > 1e6)
        return false;
    *out = v;
    return true;
}

/* The unit tests link this file and call it under another name. */
#ifndef HPROF_DIFF_MAIN
#define HPROF_DIFF_MAIN main
#endif
int HPROF_DIFF_MAIN(int argc, char **argv);

int HPROF_DIFF_MAIN(int argc, char **argv)
{
    static const struct option longs[] = {
        {"kind", required_argument, NULL, O_KIND},
        {"section", required_argument, NULL, O_SECTION},
        {"base-section", required_argument, NULL, O_BASE_SECTION},
        {"new-section", required_argument, NULL, O_NEW_SECTION},
        {"rules", required_argument, NULL, O_RULES},
        {"growth", required_argument, NULL, O_SETTING},
        {"delta-share", required_argument, NULL, O_SETTING},
        {"delta-count", required_argument, NULL, O_SETTING},
        {"min-share", required_argument, NULL, O_SETTING},
        {"z", required_argument, NULL, O_SETTING},
        {"uniform-growth", required_argument, NULL, O_SETTING},
        {"interval", required_argument, NULL, O_INTERVAL},
        {"base-interval", required_argument, NULL, O_BASE_INTERVAL},
        {"new-interval", required_argument, NULL, O_NEW_INTERVAL},
        {"normalize", no_argument, NULL, O_NORMALIZE},
        {"mode", required_argument, NULL, O_SETTING},
        {"judge", required_argument, NULL, O_SETTING},
        {"include", required_argument, NULL, O_SETTING},
        {"exclude", required_argument, NULL, O_SETTING},
        {"lines", no_argument, NULL, O_LINES},
        {"frames", required_argument, NULL, O_FRAMES},
        {"top", required_argument, NULL, O_TOP},
        {"text", required_argument, NULL, O_TEXT},
        {"markdown", required_argument, NULL, O_MD},
        {"json", required_argument, NULL, O_JSON},
        {"html", required_argument, NULL, O_HTML},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct cli_setting *settings = diff_xmalloc((size_t)argc * sizeof *settings);
    size_t nsettings = 0;
    unsigned base_nth = 0, new_nth = 0, top = 10, frames = 0;
    bool lines = false, kinds_given = false, want[DK_NKINDS] = {false};
    /* no format records the interval: the agent's default unless told (doc/tools.md) */
    double base_interval = 10, new_interval = 10;
    bool interval_given = false, normalize = false;
    const char *rules = NULL, *out_text = NULL, *out_md = NULL, *out_json = NULL, *out_html = NULL;
    char err[1024];
    int ch, idx;
    while ((ch = getopt_long(argc, argv, "h", longs, &idx)) != -1) {
        switch (ch) {
        case O_KIND: {
            char *copy = diff_xstrdup(optarg), *save = NULL;
            for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                enum diff_kind k;
                if (!diff_kind_parse(w, &k)) {
                    fprintf(stderr, "hprof-diff: unknown kind \"%s\" (--help)\n", w);
                    free(copy);
                    free(settings);
                    return 2;
                }
                want[k] = kinds_given = true;
            }
            free(copy);
            break;
        }
        case O_SECTION:
        case O_BASE_SECTION:
        case O_NEW_SECTION: {
            unsigned v;
            if (!parse_nth(optarg, &v)) {
                fprintf(stderr, "hprof-diff: bad section number \"%s\"\n", optarg);
                free(settings);
                return 2;
            }
            if (ch != O_NEW_SECTION)
                base_nth = v;
            if (ch != O_BASE_SECTION)
                new_nth = v;
            break;
        }
        case O_FRAMES:
        case O_TOP: {
            unsigned v;
            if (!parse_nth(optarg, &v)) {
                fprintf(stderr, "hprof-diff: bad number \"%s\"\n", optarg);
                free(settings);
                return 2;
            }
            *(ch == O_TOP ? &top : &frames) = v;
            break;
        }
        case O_INTERVAL:
        case O_BASE_INTERVAL:
        case O_NEW_INTERVAL: {
            double v;
            if (!parse_interval(optarg, &v)) {
                fprintf(stderr, "hprof-diff: bad interval \"%s\" (ms, > 0)\n", optarg);
                free(settings);
                return 2;
            }
            if (ch != O_NEW_INTERVAL)
                base_interval = v;
            if (ch != O_BASE_INTERVAL)
                new_interval = v;
            interval_given = true;
            break;
        }
        case O_NORMALIZE:
            normalize = true;
            break;
        case O_RULES:
            rules = optarg;
            break;
        case O_LINES:
            lines = true;
            break;
        case O_TEXT:
            out_text = optarg;
            break;
        case O_MD:
            out_md = optarg;
            break;
        case O_JSON:
            out_json = optarg;
            break;
        case O_HTML:
            out_html = optarg;
            break;
        case O_SETTING:
            settings[nsettings++] = (struct cli_setting){longs[idx].name, optarg};
            break;
        case 'h':
            usage(stdout);
            free(settings);
            return 0;
        default:
            usage(stderr);
            free(settings);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "hprof-diff: two files expected: BASE NEW (--help)\n");
        free(settings);
        return 2;
    }
    const char *base_path = argv[optind], *new_path = argv[optind + 1];
    if (strcmp(base_path, "-") == 0 && strcmp(new_path, "-") == 0) {
        fprintf(stderr, "hprof-diff: only one of BASE and NEW can be stdin\n");
        free(settings);
        return 2;
    }
    /* check every setting once before reading anything */
    {
        struct diff_thresholds th;
        struct diff_patterns pat = {0};
        diff_thresholds_default(DK_CPU, &th);
        for (size_t i = 0; i < nsettings; i++)
            if (diff_setting(settings[i].name, settings[i].value, DK_CPU, &th, &pat, err,
                             sizeof err) != 0) {
                fprintf(stderr, "hprof-diff: --%s: %s\n", settings[i].name, err);
                diff_patterns_free(&pat);
                free(settings);
                return 2;
            }
        if (rules && diff_rules_load(rules, DK_CPU, &th, &pat, err, sizeof err) != 0) {
            fprintf(stderr, "hprof-diff: %s\n", err);
            diff_patterns_free(&pat);
            free(settings);
            return 2;
        }
        diff_patterns_free(&pat);
    }

    int bphd = is_phd(base_path, err, sizeof err),
        nphd = bphd < 0 ? 0 : is_phd(new_path, err, sizeof err);
    if (bphd < 0 || nphd < 0) {
        fprintf(stderr, "hprof-diff: %s\n", err);
        free(settings);
        return 2;
    }
    if (bphd != nphd) {
        fprintf(stderr, "hprof-diff: %s is a PHD heap dump and %s is not: nothing to compare\n",
                bphd ? base_path : new_path, bphd ? new_path : base_path);
        free(settings);
        return 2;
    }

    struct diff_table *tabs[DK_NKINDS];
    size_t nt = 0;
    struct hprof_profile *bp = NULL, *np = NULL;
    struct diff_class_count *bc = NULL, *nc = NULL;
    struct diff_retained *held = NULL; /* HPROF heap dumps: retained sizes too */
    size_t nbc = 0, nnc = 0;
    int status = 2;
    if (bphd) {
        if (kinds_given && (!want[DK_HEAP] || want[DK_CPU] || want[DK_TIMES] || want[DK_METHODS] ||
                            want[DK_SITES] || want[DK_MONITOR] || want[DK_WALL])) {
            fprintf(stderr, "hprof-diff: PHD files hold heap dumps only (--kind heap)\n");
            goto out;
        }
        if (base_nth > 1 || new_nth > 1) {
            fprintf(stderr, "hprof-diff: a PHD file holds one heap dump\n");
            goto out;
        }
        if (!(bc = phd_classes(base_path, &nbc, err, sizeof err)) ||
            !(nc = phd_classes(new_path, &nnc, err, sizeof err))) {
            fprintf(stderr, "hprof-diff: %s\n", err);
            goto out;
        }
        tabs[nt] = diff_table_classes(bc, nbc, nc, nnc);
        tabs[nt]->base_path = base_path;
        tabs[nt++]->new_path = new_path;
    } else {
        struct hprof_load_opts bo = {base_nth}, no = {new_nth};
        if (!(bp = hprof_profile_load(base_path, &bo, err, sizeof err)) ||
            !(np = hprof_profile_load(new_path, &no, err, sizeof err))) {
            fprintf(stderr, "hprof-diff: %s\n", err);
            goto out;
        }
        struct diff_keys keys = {lines, frames};
        for (int k = 0; k < DK_NKINDS; k++) {
            enum hprof_section_kind s = diff_kind_section((enum diff_kind)k);
            if (kinds_given && !want[k])
                continue;
            if (!kinds_given && !(bp->sections[s].present && np->sections[s].present))
                continue;
            if (!hprof_profile_section(bp, s, base_path, err, sizeof err) ||
                !hprof_profile_section(np, s, new_path, err, sizeof err)) {
                fprintf(stderr, "hprof-diff: %s\n", err);
                goto out;
            }
            if (k == DK_CPU && base_interval != new_interval && !normalize) {
                fprintf(stderr,
                        "hprof-diff: %s was sampled every %g ms and %s every %g ms: their CPU "
                        "SAMPLES are not comparable (--normalize compares samples x interval)\n",
                        base_path, base_interval, new_path, new_interval);
                goto out;
            }
            tabs[nt] = diff_table_build((enum diff_kind)k, bp, np, &keys);
            tabs[nt]->base_interval = base_interval;
            tabs[nt]->new_interval = new_interval;
            tabs[nt]->interval_given = interval_given;
            tabs[nt]->normalized = normalize && base_interval != new_interval;
            tabs[nt]->base_path = base_path;
            tabs[nt++]->new_path = new_path;
        }
        if (!nt) {
            fprintf(stderr, "hprof-diff: %s and %s hold no kind of profile in common%s\n",
                    base_path, new_path,
                    base_nth || new_nth ? " (at the section number asked for)" : "");
            goto out;
        }
    }

    size_t regressions = 0;
    for (size_t i = 0; i < nt; i++) {
        struct diff_thresholds th;
        struct diff_patterns pat = {0};
        diff_thresholds_default(tabs[i]->kind, &th);
        if (rules && diff_rules_load(rules, tabs[i]->kind, &th, &pat, err, sizeof err) != 0) {
            fprintf(stderr, "hprof-diff: %s\n", err);
            goto out;
        }
        for (size_t j = 0; j < nsettings; j++)
            diff_setting(settings[j].name, settings[j].value, tabs[i]->kind, &th, &pat, err,
                         sizeof err);
        regressions += diff_judge(tabs[i], &th, &pat);
        diff_patterns_free(&pat);
        struct diff_retained_opts ro = {th.growth, th.delta_share};
        if (tabs[i]->kind == DK_HEAP && !bphd &&
            !(held = diff_retained_run(base_path, new_path, base_nth, new_nth, &ro, err,
                                       sizeof err))) {
            fprintf(stderr, "hprof-diff: %s\n", err);
            goto out;
        }
        regressions += tabs[i]->kind == DK_HEAP && held ? diff_retained_verdicts(held) : 0;
    }

    bool ok = true;
    if (!out_text && !out_md && !out_json && !out_html)
        out_text = "-";
    const char *paths[4] = {out_text, out_md, out_json, out_html};
    for (int w = 0; w < 4 && ok; w++) {
        if (!paths[w])
            continue;
        FILE *o = open_out(paths[w]);
        if (!o) {
            ok = false;
            break;
        }
        if (w == 0)
            diff_write_text(o, tabs, nt, top);
        else if (w == 1)
            diff_write_markdown(o, tabs, nt, top);
        if (held && w < 2)
            (w ? diff_retained_write_markdown : diff_retained_write_text)(o, held);
        else if (w == 2)
            diff_write_json(o, tabs, nt, held);
        else if (diff_write_flame(o, tabs, nt) != 0)
            fprintf(stderr,
                    "hprof-diff: warning: no stacks to draw (heap dumps, cpu=old): %s "
                    "holds an empty page\n",
                    paths[w]);
        ok = close_out(o, paths[w]);
    }
    status = !ok ? 2 : regressions ? 1 : 0;
out:
    for (size_t i = 0; i < nt; i++)
        diff_table_free(tabs[i]);
    hprof_profile_free(bp);
    hprof_profile_free(np);
    free_classes(bc, nbc);
    free_classes(nc, nnc);
    diff_retained_free(held);
    free(settings);
    return status;
}
